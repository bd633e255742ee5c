//! The last rewrite (incremental mode only): the move program copied once per
//! role with its pass move fixed, so the passing role's `does` input, which
//! every frame rule reads, is never set.

use hashbrown::HashMap;

use super::Builder;
use crate::reasoner::propnet::eval::Item;
use crate::reasoner::propnet::lit::{Lit, Node};
use crate::reasoner::propnet::PropnetError;

/// A role's specialised copy: the role, its pass move, and the copy's `next`
/// node of every fluent.
pub(super) type Specialised = (usize, u32, Vec<Node>);

impl Builder {
    /// Specialises the move program to each role's pass move, the move whose
    /// `does` input the most move gates read (a turn-taking game's `noop`: each
    /// cell's frame rule reads "the role does some move other than those
    /// touching this cell", which the complement form in [`Builder::gate`]
    /// makes "not (a move touching it, or noop)"). A copy of the gates that read
    /// the role's `does` inputs, with the pass move true and the role's other
    /// moves false, folded, is appended to `move_prog`; unchanged gates are
    /// shared. A role gets one when its pass move has at least 8 readers and
    /// three times the mean of its other moves. Returns the copy of each role
    /// that gets one.
    pub(super) fn specialize(
        &mut self,
        move_prog: &mut Vec<Item>,
        does: &[Node],
        next: &[Node],
    ) -> Result<Vec<Specialised>, PropnetError> {
        let nm = self.terms.moves.len();
        let general: Vec<Node> = move_prog
            .iter()
            .filter_map(|i| match *i {
                Item::Node(g) => Some(g),
                Item::Loop(..) => None,
            })
            .collect();
        let mut readers = vec![0usize; self.gates.len()];
        for &g in &general {
            for &l in self.gates.inputs(g) {
                readers[l.node().idx()] += 1;
            }
        }
        let mut specialised = Vec::new();
        for r in 0..self.roles.len() {
            let moves: Vec<(u32, Node)> = (0..nm as u32)
                .map(|m| (m, does[r * nm + m as usize]))
                .filter(|&(_, n)| n != Node::FALSE)
                .collect();
            let Some(pass) = pass_move(&moves, &readers) else {
                continue;
            };
            let copy = self.specialize_role(&moves, pass, &general, move_prog, next)?;
            specialised.push((r, moves[pass].0, copy));
        }
        Ok(specialised)
    }

    /// The copy of the `general` move gates with `moves[pass]`'s `does` input
    /// true and the role's other moves false (gates appended to `move_prog`);
    /// returns its `next` node of every fluent.
    fn specialize_role(
        &mut self,
        moves: &[(u32, Node)],
        pass: usize,
        general: &[Node],
        move_prog: &mut Vec<Item>,
        next: &[Node],
    ) -> Result<Vec<Node>, PropnetError> {
        // Per node of the general program: its literal in the copy.
        let mut map: HashMap<Node, Lit> = HashMap::new();
        let pass_node = moves[pass].1;
        for &(_, n) in moves {
            map.insert(n, Lit::constant(n == pass_node));
        }
        for &g in general {
            let and = self.gates.is_and(g);
            let src = self.gates.inputs(g);
            if !src.iter().any(|l| map.contains_key(&l.node())) {
                continue;
            }
            let (mut lits, mut decided) = (Vec::with_capacity(src.len()), None);
            for &l in src {
                let lit = map
                    .get(&l.node())
                    .map_or(l, |&m| if l.negated() { !m } else { m });
                match lit.const_value() {
                    // A false input decides an AND, a true one an OR.
                    Some(v) if v != and => {
                        decided = Some(v);
                        break;
                    }
                    Some(_) => {}
                    None => lits.push(lit),
                }
            }
            let lit = match (decided, &lits[..]) {
                (Some(v), _) => Lit::constant(v),
                (None, []) => Lit::constant(and),
                (None, [l]) => *l,
                (None, _) => {
                    let n = self.push_gate(and, &lits)?;
                    move_prog.push(Item::Node(n));
                    Lit::pos(n)
                }
            };
            map.insert(g, lit);
        }
        let mut out = Vec::with_capacity(next.len());
        for &x in next {
            let lit = map.get(&x).copied().unwrap_or(Lit::pos(x));
            let node = match lit.const_value() {
                Some(true) => Node::TRUE,
                Some(false) => Node::FALSE,
                None if !lit.negated() => lit.node(),
                None => {
                    let n = self.push_gate(true, &[lit])?;
                    move_prog.push(Item::Node(n));
                    n
                }
            };
            out.push(node);
        }
        Ok(out)
    }
}

/// The index in `moves` of the role's pass move: the move whose `does` input
/// has the most `readers` (the lowest move on a tie), when it has at least 8
/// and three times the mean of the others.
fn pass_move(moves: &[(u32, Node)], readers: &[usize]) -> Option<usize> {
    let (pass, &(pm, pnode)) = moves
        .iter()
        .enumerate()
        .max_by_key(|&(_, &(m, n))| (readers[n.idx()], std::cmp::Reverse(m)))?;
    let others: usize = moves
        .iter()
        .filter(|&&(m, _)| m != pm)
        .map(|&(_, n)| readers[n.idx()])
        .sum();
    let mean = others as f64 / (moves.len() - 1).max(1) as f64;
    if readers[pnode.idx()] < 8 || (readers[pnode.idx()] as f64) < 3.0 * mean {
        return None;
    }
    Some(pass)
}
