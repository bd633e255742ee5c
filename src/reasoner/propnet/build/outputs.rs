//! The second step: the outputs read off the ground atoms (`legal`, `next`,
//! `terminal`, `goal`, `init`) and the `does` input of each role and move,
//! with the checks that the per-state outputs do not read `does` and that
//! `init` is constant.

use super::Builder;
use crate::gdl::kw;
use crate::reasoner::ground::AtomId;
use crate::reasoner::propnet::lit::Node;
use crate::reasoner::propnet::PropnetError;
use crate::reasoner::terms::TermId;

/// The outputs as found on the atoms, before the legal gates are split.
pub(super) struct FoundOutputs {
    /// Per role: (node, move), in atom order.
    pub(super) legal: Vec<Vec<(Node, u32)>>,
    /// Per role: (node, value), ascending by value.
    pub(super) goals: Vec<Vec<(Node, u8)>>,
    /// Per fluent: its `next` node.
    pub(super) next: Vec<Node>,
    pub(super) terminal: Node,
    /// Per fluent: whether it holds initially.
    pub(super) init: Vec<u8>,
}

impl Builder {
    /// The outputs of every atom.
    pub(super) fn find_outputs(&mut self) -> Result<FoundOutputs, PropnetError> {
        let nroles = self.roles.len();
        let nf = self.terms.fluents.len();
        let mut found = FoundOutputs {
            legal: vec![Vec::new(); nroles],
            goals: vec![Vec::new(); nroles],
            next: vec![Node::FALSE; nf],
            terminal: Node::FALSE,
            init: vec![0u8; nf],
        };
        for a in 0..self.gp.atoms.len() {
            let t = self.gp.atoms[a];
            let f = self.gp.pool.functor(t);
            let args = if self.gp.pool.is_const(t) {
                Vec::new()
            } else {
                self.gp.pool.args(t).to_vec()
            };
            let a = a as AtomId;
            let node = self.out_node(a);
            match (f, args.len()) {
                (kw::LEGAL, 2) => {
                    if let Some(r) = self.role_of(args[0]) {
                        self.state_only(a, node, "legal")?;
                        let m = self.move_id(args[1]);
                        found.legal[r].push((node, m));
                    }
                }
                (kw::NEXT, 1) => {
                    let i = self.terms.fluent_of[&args[0]];
                    found.next[i as usize] = node;
                }
                (kw::TERMINAL, 0) => {
                    self.state_only(a, node, "terminal")?;
                    found.terminal = node;
                }
                (kw::GOAL, 2) => {
                    if let (Some(r), Some(v)) = (self.role_of(args[0]), self.goal_value(args[1])) {
                        self.state_only(a, node, "goal")?;
                        found.goals[r].push((node, v));
                    }
                }
                (kw::INIT, 1) => {
                    if node != Node::TRUE && node != Node::FALSE {
                        return Err(PropnetError::Rules(format!(
                            "{} depends on the state",
                            self.atom_text(a)
                        )));
                    }
                    found.init[self.terms.fluent_of[&args[0]] as usize] =
                        (node == Node::TRUE) as u8;
                }
                _ => {}
            }
        }
        for g in found.goals.iter_mut() {
            g.sort_by_key(|&(_, v)| v);
        }
        Ok(found)
    }

    /// A goal value term's number, when it is one from 0 to 100.
    fn goal_value(&self, t: TermId) -> Option<u8> {
        self.gp
            .pool
            .is_const(t)
            .then(|| {
                self.game
                    .symbols
                    .name(self.gp.pool.functor(t))
                    .parse::<u8>()
                    .ok()
            })
            .flatten()
            .filter(|&v| v <= 100)
    }

    /// Refuses a `what` output (atom `a`, node `node`) that depends on `does`.
    fn state_only(&self, a: AtomId, node: Node, what: &str) -> Result<(), PropnetError> {
        if self.gates.is_move(node) {
            Err(PropnetError::Rules(format!(
                "{} depends on 'does' ({what})",
                self.atom_text(a)
            )))
        } else {
            Ok(())
        }
    }

    /// The `does` input node of each role and move, `[r * moves + m]`
    /// ([`Node::FALSE`] when there is none).
    pub(super) fn does_table(&self) -> Vec<Node> {
        let nm = self.terms.moves.len();
        let mut does = vec![Node::FALSE; self.roles.len() * nm];
        for a in 0..self.gp.atoms.len() {
            let t = self.gp.atoms[a];
            if self.gp.pool.is_const(t)
                || self.gp.pool.functor(t) != kw::DOES
                || self.gp.pool.args(t).len() != 2
            {
                continue;
            }
            let Some(node) = self.node_of[a] else {
                continue;
            };
            let args = self.gp.pool.args(t);
            if let Some(r) = self.role_of(args[0]) {
                does[r * nm + self.terms.move_of[&args[1]] as usize] = node;
            }
        }
        does
    }
}
