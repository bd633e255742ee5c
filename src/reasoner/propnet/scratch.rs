//! Per-thread working memory: the values of every node for one loaded state,
//! the propagation counters, and the snapshot of a playout's start (the
//! network itself stays immutable; the pool of scratches is the network's).

use super::lit::Node;

/// A copy of the parts of a [`Scratch`] that describe its loaded state.
#[derive(Default)]
pub(super) struct Snapshot {
    vals: Vec<u8>,
    counts: Vec<i32>,
    pub(super) cur: Vec<u64>,
    group_count: Vec<u32>,
    diff: Vec<u64>,
}

impl Snapshot {
    /// Copies `from` into `to`, reusing `to`'s memory.
    fn copy<T: Copy>(to: &mut Vec<T>, from: &[T]) {
        to.clear();
        to.extend_from_slice(from);
    }
}

/// The values of every node for one state.
pub(super) struct Scratch {
    pub(super) vals: Vec<u8>,
    /// Incremental mode: per gate, how many of its literals are true, minus its
    /// threshold (so the gate is true when the count is not negative).
    pub(super) counts: Vec<i32>,
    /// The state the fluent inputs hold (packed like a state).
    pub(super) cur: Vec<u64>,
    /// Full mode: whether the state program has run for `cur`.
    pub(super) loaded: bool,
    pub(super) goals_done: bool,
    /// Fluents whose value changes with the joint move being applied.
    pub(super) changed: Vec<u32>,
    /// Incremental mode: per copy of the `next` nodes (general, then one per
    /// role's pass move), a bitset of the fluents whose `next` node disagrees
    /// with the fluent: kept by propagation, so a step reads its changes off
    /// instead of comparing every fluent.
    pub(super) diff: Vec<u64>,
    pub(super) stack: Vec<(Node, u8)>,
    pub(super) legal: Vec<u32>,
    pub(super) joint: Vec<u32>,
    /// Incremental mode: per legal group, how many of its nodes hold.
    pub(super) group_count: Vec<u32>,
    /// Incremental mode: the state the last playout started from, restored
    /// when it ends, so the next playout from there (or from a state near it,
    /// as the leaves of a search tree are) loads by a copy or a few changes
    /// instead of undoing a whole playout.
    pub(super) start: Snapshot,
    pub(super) has_start: bool,
}

impl Scratch {
    /// A scratch for `nodes` nodes, states of `words` words and `groups` legal
    /// groups, its fluents false and only the constant true node set (in
    /// incremental mode the network primes it before use).
    pub(super) fn new(nodes: usize, words: usize, groups: usize) -> Scratch {
        let mut s = Scratch {
            vals: vec![0u8; nodes],
            counts: Vec::new(),
            cur: vec![0; words],
            loaded: false,
            goals_done: false,
            changed: Vec::new(),
            diff: Vec::new(),
            stack: Vec::new(),
            legal: Vec::new(),
            joint: Vec::new(),
            group_count: vec![0; groups],
            start: Snapshot::default(),
            has_start: false,
        };
        s.vals[Node::TRUE.idx()] = 1;
        s
    }

    pub(super) fn save_start(&mut self) {
        let t = &mut self.start;
        Snapshot::copy(&mut t.vals, &self.vals);
        Snapshot::copy(&mut t.counts, &self.counts);
        Snapshot::copy(&mut t.cur, &self.cur);
        Snapshot::copy(&mut t.group_count, &self.group_count);
        Snapshot::copy(&mut t.diff, &self.diff);
        self.has_start = true;
    }

    pub(super) fn restore_start(&mut self) {
        let t = &self.start;
        self.vals.copy_from_slice(&t.vals);
        self.counts.copy_from_slice(&t.counts);
        self.cur.copy_from_slice(&t.cur);
        self.group_count.copy_from_slice(&t.group_count);
        self.diff.copy_from_slice(&t.diff);
        self.goals_done = false;
    }
}
