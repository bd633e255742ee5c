//! Full evaluation: the network's gates and the programs that evaluate them in
//! order, used to load a state when the network does not propagate (a
//! recursive component feeds the per-state outputs), for goals, and once per
//! scratch to start propagation from consistent values.

use super::lit::{Lit, Node};
use super::rows::Rows;

/// The gates: per node, its kind and its input literals (an input node is an
/// OR over nothing, never evaluated).
pub(super) struct Gates {
    and: Vec<bool>,
    inputs: Rows<Lit>,
}

impl Gates {
    pub(super) fn new(and: Vec<bool>, inputs: Rows<Lit>) -> Gates {
        debug_assert_eq!(and.len(), inputs.len());
        Gates { and, inputs }
    }

    /// The number of nodes.
    pub(super) fn len(&self) -> usize {
        self.and.len()
    }

    pub(super) fn is_and(&self, n: Node) -> bool {
        self.and[n.idx()]
    }

    #[inline]
    pub(super) fn inputs(&self, n: Node) -> &[Lit] {
        self.inputs.row(n.idx())
    }

    /// The value of gate `n` from the values of its inputs.
    #[inline]
    fn eval(&self, n: Node, vals: &[u8]) -> u8 {
        let lits = self.inputs.row(n.idx());
        if self.and[n.idx()] {
            for &l in lits {
                if !l.value(vals) {
                    return 0;
                }
            }
            1
        } else {
            for &l in lits {
                if l.value(vals) {
                    return 1;
                }
            }
            0
        }
    }

    /// Runs `prog` over `vals`.
    pub(super) fn run(&self, prog: &[Item], vals: &mut [u8]) {
        for item in prog {
            match *item {
                Item::Node(n) => vals[n.idx()] = self.eval(n, vals),
                Item::Loop(s, e) => {
                    vals[s.idx()..e.idx()].fill(0);
                    loop {
                        let mut changed = false;
                        for n in s.0..e.0 {
                            let n = Node(n);
                            let v = self.eval(n, vals);
                            if v != vals[n.idx()] {
                                vals[n.idx()] = v;
                                changed = true;
                            }
                        }
                        if !changed {
                            break;
                        }
                    }
                }
            }
        }
    }
}

/// One instruction of an evaluation program.
#[derive(Clone, Copy, Debug)]
pub(super) enum Item {
    Node(Node),
    /// A recursive component: nodes `[start, end)` to their least fixpoint.
    Loop(Node, Node),
}

/// The three programs, each over the nodes its outputs need.
#[derive(Default)]
pub(super) struct Programs {
    /// Per state: what `legal`, `terminal` and `next` need, but the nodes
    /// that read `does`.
    pub(super) state: Vec<Item>,
    /// On demand: what `goal` needs beyond the state program.
    pub(super) goal: Vec<Item>,
    /// Per joint move: the nodes that read `does` (and, in incremental mode,
    /// the copies specialised to each role's pass move).
    pub(super) moves: Vec<Item>,
}

impl Programs {
    /// The number of nodes `prog` evaluates.
    pub(super) fn count(prog: &[Item]) -> usize {
        prog.iter()
            .map(|i| match *i {
                Item::Node(_) => 1,
                Item::Loop(s, e) => (e.0 - s.0) as usize,
            })
            .sum()
    }

    /// Whether no recursive component is in the state or move program, so
    /// propagation can keep their nodes up to date.
    pub(super) fn loop_free(&self) -> bool {
        !self
            .state
            .iter()
            .chain(&self.moves)
            .any(|i| matches!(i, Item::Loop(..)))
    }
}
