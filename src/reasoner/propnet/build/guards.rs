//! The third step: legal gates split by a guard (see
//! [`LegalTable`](crate::reasoner::propnet::outputs::LegalTable)) and the
//! gates that read them (`has_legal_move`) factored, so a turn change flips
//! one guard instead of every legal gate.

use hashbrown::HashMap;

use super::{Block, Builder};
use crate::reasoner::propnet::lit::{Lit, Node};
use crate::reasoner::propnet::outputs::LegalTable;
use crate::reasoner::propnet::rows::Rows;
use crate::reasoner::propnet::PropnetError;

impl Builder {
    /// Chooses the legal gates to split by a guard and the gates that read
    /// them to factor. Per role, a legal AND gate's guard is the input literal
    /// that the most of the role's legal AND gates share (when at least two
    /// do). A gate that reads legal gates (`has_legal_move`, read by
    /// `terminal`) keeps every one of them alive, so a split gate must have no
    /// reader but ORs over legal gates of one guard, which become
    /// `AND(guard, OR(rests))` ([`Builder::factor_readers`]); else it stays
    /// whole. Returns the guard of each gate to split and the readers to factor
    /// (none when a recursive component feeds the per-state outputs: the
    /// evaluation there follows the build order, which factoring breaks).
    pub(super) fn plan_guards(
        &self,
        legal: &[Vec<(Node, u32)>],
        next: &[Node],
        terminal: Node,
    ) -> (HashMap<Node, Lit>, Vec<Node>) {
        let n = self.gates.len();
        let mut needed = vec![false; n];
        let mut stack: Vec<Node> = legal
            .iter()
            .flatten()
            .map(|&(n, _)| n)
            .chain(next.iter().copied())
            .chain([terminal])
            .collect();
        self.mark(&mut needed, &mut stack);
        let loops = self
            .blocks
            .iter()
            .any(|b| b.recursive && b.nodes().any(|x| needed[x.idx()]));
        let mut guard_of = self.choose_guards(legal);
        let mut readers: HashMap<Node, Vec<Node>> = HashMap::new();
        for r in (0..n).map(Node::at).filter(|r| needed[r.idx()]) {
            for &l in self.gates.inputs(r) {
                if guard_of.contains_key(&l.node()) {
                    readers.entry(l.node()).or_default().push(r);
                }
            }
        }
        // Dropping a split can make other readers unfactorable: to a fixpoint.
        loop {
            let factorable = |r: Node| {
                let ins = self.gates.inputs(r);
                let guard = ins.first().and_then(|l| guard_of.get(&l.node()));
                !self.gates.is_and(r)
                    && guard.is_some()
                    && ins
                        .iter()
                        .all(|&l| !l.negated() && guard_of.get(&l.node()) == guard)
            };
            let drop: Vec<Node> = guard_of
                .keys()
                .copied()
                .filter(|g| {
                    readers
                        .get(g)
                        .is_some_and(|rs| loops || !rs.iter().all(|&r| factorable(r)))
                })
                .collect();
            if drop.is_empty() {
                break;
            }
            for g in drop {
                guard_of.remove(&g);
            }
        }
        let mut factor: Vec<Node> = guard_of
            .keys()
            .filter_map(|g| readers.get(g))
            .flatten()
            .copied()
            .collect();
        factor.sort_unstable();
        factor.dedup();
        (guard_of, factor)
    }

    /// Per role, the guard of each legal AND gate: the input literal the most
    /// of the role's legal AND gates share, when at least two share it.
    fn choose_guards(&self, legal: &[Vec<(Node, u32)>]) -> HashMap<Node, Lit> {
        let and_inputs = |g: Node| {
            (self.gates.is_and(g) && self.gates.inputs(g).len() >= 2).then(|| self.gates.inputs(g))
        };
        let mut guard_of: HashMap<Node, Lit> = HashMap::new();
        for entries in legal {
            let mut freq: HashMap<Lit, usize> = HashMap::new();
            for &(g, _) in entries {
                for &l in and_inputs(g).unwrap_or_default() {
                    *freq.entry(l).or_default() += 1;
                }
            }
            for &(g, _) in entries {
                let Some(inputs) = and_inputs(g) else {
                    continue;
                };
                let guard = *inputs
                    .iter()
                    .max_by_key(|&l| (freq[l], std::cmp::Reverse(*l)))
                    .expect("two inputs");
                if freq[&guard] >= 2 {
                    guard_of.entry(g).or_insert(guard);
                }
            }
        }
        guard_of
    }

    /// Splits each role's legal outputs by the guards [`Builder::plan_guards`]
    /// chose: the entry of a gate with a guard reads the AND of the gate's other
    /// inputs (its rest); groups keep first-seen order. Returns the table and
    /// the rest node of each split gate.
    pub(super) fn guard_legal(
        &mut self,
        legal: &[Vec<(Node, u32)>],
        guard_of: &HashMap<Node, Lit>,
    ) -> Result<(LegalTable, HashMap<Node, Node>), PropnetError> {
        let start = self.gates.next_node();
        let mut table = LegalTable {
            guards: Vec::new(),
            entries: Rows::default(),
            role_groups: Vec::new(),
        };
        let mut rest_of: HashMap<Node, Node> = HashMap::new();
        for entries in legal {
            let mut by_guard: Vec<(Lit, Vec<(Node, u32)>)> = Vec::new();
            for &(n, m) in entries {
                let (guard, node) = match guard_of.get(&n) {
                    Some(&guard) => (guard, self.rest_node(n, guard, &mut rest_of)?),
                    None => (Lit::TRUE, n),
                };
                match by_guard.iter_mut().find(|(g, _)| *g == guard) {
                    Some((_, v)) => v.push((node, m)),
                    None => by_guard.push((guard, vec![(node, m)])),
                }
            }
            let g0 = table.guards.len() as u32;
            for (guard, v) in by_guard {
                table.guards.push(guard);
                table.entries.push(&v);
            }
            table.role_groups.push((g0, table.guards.len() as u32));
        }
        self.close_block(start);
        Ok((table, rest_of))
    }

    /// The node for legal gate `n` without its `guard`, built once.
    fn rest_node(
        &mut self,
        n: Node,
        guard: Lit,
        rest_of: &mut HashMap<Node, Node>,
    ) -> Result<Node, PropnetError> {
        if let Some(&r) = rest_of.get(&n) {
            return Ok(r);
        }
        let rest: Vec<Lit> = self
            .gates
            .inputs(n)
            .iter()
            .copied()
            .filter(|&l| l != guard)
            .collect();
        let lit = self.junction(true, &rest)?;
        let r = if !lit.negated() {
            lit.node()
        } else {
            self.gate(true, &[lit])?
        };
        rest_of.insert(n, r);
        Ok(r)
    }

    /// Rewrites each gate of `factor`, an OR over split legal gates of one
    /// guard, as `AND(guard, OR(their rests))`, in place: its value and its
    /// readers stay, the legal gates lose their reader. The gate then reads a
    /// newer node, so the programs must be ordered anew ([`Builder::postorder`]).
    pub(super) fn factor_readers(
        &mut self,
        factor: &[Node],
        guard_of: &HashMap<Node, Lit>,
        rest_of: &HashMap<Node, Node>,
    ) -> Result<(), PropnetError> {
        let start = self.gates.next_node();
        for &r in factor {
            let ins = self.gates.inputs(r).to_vec();
            let guard = guard_of[&ins[0].node()];
            let rests: Vec<Lit> = ins.iter().map(|l| Lit::pos(rest_of[&l.node()])).collect();
            let inner = self.junction(false, &rests)?;
            self.gates.set(r, true, &[guard, inner]);
        }
        self.close_block(start);
        Ok(())
    }
}

impl Builder {
    /// Records the gates made since node `start` as one block evaluated in
    /// order (none when no gate was made).
    fn close_block(&mut self, start: Node) {
        let end = self.gates.next_node();
        if end > start {
            self.blocks.push(Block {
                start,
                end,
                recursive: false,
            });
        }
    }
}
