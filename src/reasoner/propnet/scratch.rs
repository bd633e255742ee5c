//! Per-thread working memory: the values of every node for one loaded state,
//! the propagation counters, the snapshot of a playout's start, and the pool
//! the scratches are taken from (the network itself stays immutable).

use super::lit::Node;
use super::Propnet;

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

impl Propnet {
    /// A scratch holding the state with no fluent true.
    fn new_scratch(&self) -> Scratch {
        let n = self.gates.len();
        let mut s = Scratch {
            vals: vec![0u8; n],
            counts: Vec::new(),
            cur: vec![0; self.words()],
            loaded: false,
            goals_done: false,
            changed: Vec::new(),
            diff: Vec::new(),
            stack: Vec::new(),
            legal: Vec::new(),
            joint: Vec::new(),
            group_count: vec![0; self.out.legal.groups()],
            start: Snapshot::default(),
            has_start: false,
        };
        s.vals[Node::TRUE.idx()] = 1;
        if self.incremental {
            self.prime(&mut s);
        }
        s
    }

    /// Runs `f` on a scratch from the pool (a new one when the pool is empty),
    /// returned to the pool afterwards.
    pub(super) fn with_scratch<T>(&self, f: impl FnOnce(&mut Scratch) -> T) -> T {
        let taken = self.scratch.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut s = taken.unwrap_or_else(|| self.new_scratch());
        let out = f(&mut s);
        self.scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(s);
        out
    }
}
