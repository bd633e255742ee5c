//! The network's outputs and inputs as the state machine reads them: the `does`
//! inputs, `terminal`, the goals, the legal moves grouped by guard, and the
//! `next` nodes of every copy of the move program.

use std::ops::Range;

use super::lit::{Lit, Node};
use super::rows::Rows;

/// A role's legal moves that share a guard literal form a group: a move of the
/// group is legal when the guard holds and the move's own node does. Pulling
/// the literal that most of a role's legal gates share (typically
/// `(true (control r))`) out of them means a turn change flips one guard
/// instead of every legal gate.
pub(super) struct LegalTable {
    /// Per group, its guard.
    pub(super) guards: Vec<Lit>,
    /// Per group, its entries (node, move), in list order.
    pub(super) entries: Rows<(Node, u32)>,
    /// Per role, its range of groups.
    pub(super) role_groups: Vec<(u32, u32)>,
}

impl LegalTable {
    /// The number of groups.
    pub(super) fn groups(&self) -> usize {
        self.guards.len()
    }

    /// The groups of `role` whose guard holds in `vals`.
    #[inline]
    pub(super) fn open_groups<'a>(
        &'a self,
        vals: &'a [u8],
        role: usize,
    ) -> impl Iterator<Item = usize> + 'a {
        let (a, b) = self.role_groups[role];
        (a as usize..b as usize).filter(move |&g| self.guards[g].value(vals))
    }

    /// The legal moves of `role` in `vals`, in list order.
    pub(super) fn legal_into(&self, vals: &[u8], role: usize, out: &mut Vec<u32>) {
        out.clear();
        for g in self.open_groups(vals, role) {
            for &(n, m) in self.entries.row(g) {
                if vals[n.idx()] == 1 {
                    out.push(m);
                }
            }
        }
    }

    /// Incremental mode: the `k`-th legal move of `role` in list order (the
    /// move [`LegalTable::legal_into`] lists at index `k`), found from the
    /// group counts without building the list; `None` when there are no more
    /// than `k`.
    #[inline]
    pub(super) fn kth_legal(
        &self,
        vals: &[u8],
        group_count: &[u32],
        role: usize,
        k: usize,
    ) -> Option<u32> {
        let mut k = k;
        for g in self.open_groups(vals, role) {
            let c = group_count[g] as usize;
            if k >= c {
                k -= c;
                continue;
            }
            for &(n, m) in self.entries.row(g) {
                if vals[n.idx()] == 1 {
                    if k == 0 {
                        return Some(m);
                    }
                    k -= 1;
                }
            }
        }
        None
    }

    /// Incremental mode: how many legal moves `role` has in `vals`.
    #[inline]
    pub(super) fn legal_count(&self, vals: &[u8], group_count: &[u32], role: usize) -> usize {
        self.open_groups(vals, role)
            .map(|g| group_count[g] as usize)
            .sum()
    }
}

/// Per role's pass move, a copy of the move program has it fixed (see the
/// builder's specialisation); the `next` node of every fluent in every copy.
pub(super) struct NextTable {
    /// `nodes[copy * fluents + i]`: copy 0 is the general program, the others
    /// are specialised to one role's pass move.
    pub(super) nodes: Vec<Node>,
    pub(super) fluents: usize,
    pub(super) copies: usize,
    /// The copies whose diff bitsets propagation keeps: the pass copies when
    /// there are any (a step of a turn-taking game always reads one), else the
    /// general one; a step that reads another copy compares its fluents.
    pub(super) tracked: Range<usize>,
    /// Per role: its pass move and the copy specialised to it, or
    /// [`NextTable::NO_MOVE`] (and copy 0).
    pub(super) pass: Vec<(u32, u32)>,
}

impl NextTable {
    pub(super) const NO_MOVE: u32 = u32::MAX;

    /// The `next` nodes of copy `c`.
    pub(super) fn copy(&self, c: usize) -> &[Node] {
        &self.nodes[c * self.fluents..(c + 1) * self.fluents]
    }

    /// The node of fluent `i`'s `next` atom in copy `c`.
    #[inline]
    pub(super) fn node(&self, c: usize, i: usize) -> Node {
        self.nodes[c * self.fluents + i]
    }
}

/// What the state machine reads.
pub(super) struct Outputs {
    /// `does` input node for role `r` and move `m`: `does[r * moves + m]`
    /// ([`Node::FALSE`] when there is none).
    pub(super) does: Vec<Node>,
    pub(super) terminal: Node,
    /// Per role: (node, value), ascending by value.
    pub(super) goals: Vec<Vec<(Node, u8)>>,
    pub(super) legal: LegalTable,
    pub(super) next: NextTable,
}

impl Outputs {
    /// `role`'s goal in `vals`: `None` when none or two values hold.
    pub(super) fn single_goal(&self, role: usize, vals: &[u8]) -> Option<u8> {
        let mut found = None;
        for &(n, v) in &self.goals[role] {
            if vals[n.idx()] == 1 {
                match found {
                    None => found = Some(v),
                    Some(w) if w == v => {}
                    Some(_) => return None,
                }
            }
        }
        found
    }
}
