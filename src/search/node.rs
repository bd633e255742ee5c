//! One node of a search tree: a state, its roles' legal moves, and the
//! statistics every iteration through it updates, as atomics so that threads
//! sharing a tree (tree parallel) update them without a lock. With `SHARED`
//! false the caller has the tree to itself and an update is a plain load and
//! store, which compiles to what non-atomic fields would.
//!
//! Invariants: a node's `moves[r]` are role r's legal moves in the engine's
//! order and its role-r statistics are parallel to it; a terminal node (or one
//! where some role has no legal move) has no moves and carries its exact
//! values; a solved node's values never change.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};

use hashbrown::HashMap;

use super::policy::{Evaluator, MoveStats};
use crate::reasoner::StateMachine;

pub(crate) type NodeId = u32;

/// Joint-move counts up to this get a slot per joint move for their children
/// (published by compare-and-swap); above it, a map behind a lock.
const SLOTS_UP_TO: u64 = 256;
const NO_CHILD: NodeId = NodeId::MAX;

/// One move's [`MoveStats`] as atomics. With `SHARED` false the caller has
/// the tree to itself and updates are a plain load and store.
#[derive(Default)]
pub(crate) struct AtomicStats {
    visits: AtomicU64,
    /// The f64 sum's bits.
    sum: AtomicU64,
}

impl AtomicStats {
    #[inline]
    pub fn get(&self) -> MoveStats {
        MoveStats {
            visits: self.visits.load(Relaxed),
            sum: f64::from_bits(self.sum.load(Relaxed)),
        }
    }

    #[inline]
    pub(super) fn add_visit<const SHARED: bool>(&self) {
        add_u64::<SHARED>(&self.visits, 1);
    }

    #[inline]
    pub(super) fn remove_visit<const SHARED: bool>(&self) {
        add_u64::<SHARED>(&self.visits, u64::MAX);
    }

    #[inline]
    pub(super) fn add_value<const SHARED: bool>(&self, v: f64) {
        add_f64::<SHARED>(&self.sum, v);
    }

    /// `n` visits whose values sum to `sum` at once (a prior).
    pub(super) fn add_visits<const SHARED: bool>(&self, n: u64, sum: f64) {
        add_u64::<SHARED>(&self.visits, n);
        self.add_value::<SHARED>(sum);
    }

    #[inline]
    pub(super) fn add<const SHARED: bool>(&self, v: f64) {
        self.add_visit::<SHARED>();
        self.add_value::<SHARED>(v);
    }
}

/// Adds `by` (wrapping: `u64::MAX` takes one away); returns the value before.
#[inline]
pub(super) fn add_u64<const SHARED: bool>(a: &AtomicU64, by: u64) -> u64 {
    if SHARED {
        a.fetch_add(by, Relaxed)
    } else {
        let before = a.load(Relaxed);
        a.store(before.wrapping_add(by), Relaxed);
        before
    }
}

/// Adds `v` to the f64 whose bits `a` holds; the same arithmetic either way.
#[inline]
fn add_f64<const SHARED: bool>(a: &AtomicU64, v: f64) {
    let bits = |x: u64| (f64::from_bits(x) + v).to_bits();
    if SHARED {
        let mut cur = a.load(Relaxed);
        while let Err(seen) = a.compare_exchange_weak(cur, bits(cur), Relaxed, Relaxed) {
            cur = seen;
        }
    } else {
        a.store(bits(a.load(Relaxed)), Relaxed);
    }
}

pub(super) fn atomic_stats(moves: &[Vec<impl Sized>]) -> Vec<Box<[AtomicStats]>> {
    moves
        .iter()
        .map(|l| l.iter().map(|_| AtomicStats::default()).collect())
        .collect()
}

/// A node's children by joint-move key.
pub(super) enum Children {
    /// One slot per joint move (`NO_CHILD` when not expanded), allocated at
    /// the first child.
    Slots(OnceLock<Box<[AtomicU32]>>, usize),
    Map(Mutex<HashMap<u64, NodeId>>),
}

impl Children {
    fn new(joint_moves: Option<u64>) -> Self {
        match joint_moves {
            Some(n) if n <= SLOTS_UP_TO => Children::Slots(OnceLock::new(), n as usize),
            _ => Children::Map(Mutex::new(HashMap::new())),
        }
    }

    fn map(m: &Mutex<HashMap<u64, NodeId>>) -> std::sync::MutexGuard<'_, HashMap<u64, NodeId>> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[inline]
    pub(super) fn get(&self, key: u64) -> Option<NodeId> {
        match self {
            Children::Slots(s, _) => {
                let c = s
                    .get()?
                    .get(key as usize)?
                    .load(std::sync::atomic::Ordering::Acquire);
                (c != NO_CHILD).then_some(c)
            }
            Children::Map(m) => Self::map(m).get(&key).copied(),
        }
    }

    /// Adds child `id` under `key` unless one is there: then returns that one.
    pub(super) fn insert(&self, key: u64, id: NodeId) -> Result<(), NodeId> {
        use std::sync::atomic::Ordering::{AcqRel, Acquire};
        match self {
            Children::Slots(s, n) => {
                let slots = s.get_or_init(|| (0..*n).map(|_| AtomicU32::new(NO_CHILD)).collect());
                slots[key as usize]
                    .compare_exchange(NO_CHILD, id, AcqRel, Acquire)
                    .map(|_| ())
            }
            Children::Map(m) => match Self::map(m).entry(key) {
                hashbrown::hash_map::Entry::Occupied(e) => Err(*e.get()),
                hashbrown::hash_map::Entry::Vacant(e) => {
                    e.insert(id);
                    Ok(())
                }
            },
        }
    }

    /// Calls `f` with every (key, child), in key order for slots.
    pub(super) fn for_each(&self, mut f: impl FnMut(u64, NodeId)) {
        match self {
            Children::Slots(s, _) => {
                for (k, c) in s.get().into_iter().flat_map(|s| s.iter()).enumerate() {
                    let c = c.load(std::sync::atomic::Ordering::Acquire);
                    if c != NO_CHILD {
                        f(k as u64, c);
                    }
                }
            }
            Children::Map(m) => {
                for (&k, &c) in Self::map(m).iter() {
                    f(k, c);
                }
            }
        }
    }

    /// Renumbers the children by `map` (re-rooting).
    pub(super) fn renumber(&mut self, map: &HashMap<NodeId, NodeId>) {
        match self {
            Children::Slots(s, _) => {
                for c in s.get_mut().into_iter().flat_map(|s| s.iter_mut()) {
                    let c = c.get_mut();
                    if *c != NO_CHILD {
                        *c = map[c];
                    }
                }
            }
            Children::Map(m) => {
                let m = m.get_mut().unwrap_or_else(|e| e.into_inner());
                for c in m.values_mut() {
                    *c = map[c];
                }
            }
        }
    }
}

pub(crate) struct Node<M: StateMachine> {
    pub state: M::State,
    /// Terminal, or some role has no legal move: nothing to choose here.
    pub terminal: bool,
    /// Exact values per role (0..1), set once the node is solved: terminal, or
    /// solved from its children (see [`super::tree::Store::try_solve`]).
    pub(super) values: OnceLock<Vec<f64>>,
    pub moves: Vec<Vec<M::Move>>,
    /// The node's visits (`counts[0].visits`), then each role's statistics
    /// in role order, parallel to `moves`. One allocation: the counters every
    /// iteration through the node writes share their cache lines, and the
    /// node itself, read by every thread, is written only when solved.
    pub(super) counts: Box<[AtomicStats]>,
    /// RAVE: per role and move, the iterations below this node in which the
    /// role played the move anywhere (made when RAVE first backs up here).
    pub(super) amaf: OnceLock<Vec<Box<[AtomicStats]>>>,
    /// Joint move (mixed-radix index over the roles' move lists) -> child.
    pub(super) children: Children,
    /// False when the joint-move count overflows a u64 key: never expanded.
    pub keyable: bool,
    /// Implicit minimax ([`Node::with_minimax`]): each role's heuristic
    /// value of the state, backed up by minimax over the expanded children
    /// (f64 bits; empty where the search keeps none).
    pub(super) minimax: Box<[AtomicU64]>,
}

impl<M: StateMachine> Node<M> {
    pub fn new(machine: &M, state: M::State, eval: &dyn Evaluator<M>) -> Self {
        let roles = machine.num_roles();
        let mut terminal = machine.is_terminal(&state);
        let mut moves = Vec::new();
        if !terminal {
            for r in 0..roles {
                let legal = machine.legal(&state, r);
                if legal.is_empty() {
                    terminal = true;
                    moves.clear();
                    break;
                }
                moves.push(legal);
            }
        }
        let values = OnceLock::new();
        if terminal {
            let mut v = Vec::new();
            eval.evaluate(machine, &state, true, &mut v);
            let _ = values.set(v);
        }
        let joint_moves = moves
            .iter()
            .try_fold(1u64, |acc, l| acc.checked_mul(l.len() as u64));
        Node {
            state,
            terminal,
            values,
            counts: (0..1 + moves.iter().map(Vec::len).sum::<usize>())
                .map(|_| AtomicStats::default())
                .collect(),
            moves,
            amaf: OnceLock::new(),
            children: Children::new(joint_moves),
            keyable: joint_moves.is_some(),
            minimax: Box::new([]),
        }
    }

    /// This node solved where a role has a sure win legal
    /// ([`StateMachine::is_sure_win`]) and every other role one move: its
    /// exact values are those of the state that win leads to, the best the
    /// role can have, so no child needs to be searched. A tree whose nodes
    /// are so solved sees, one move before the search reaches it, that a
    /// move lets the opponent win at once.
    pub fn solved_by_sure_win(self, machine: &M, eval: &dyn Evaluator<M>) -> Self {
        if self.values.get().is_some() {
            return self;
        }
        let roles = self.moves.len();
        for r in 0..roles {
            if (0..roles).any(|o| o != r && self.moves[o].len() != 1) {
                continue;
            }
            let Some(w) = self.moves[r].iter().find(|m| machine.is_sure_win(r, m)) else {
                continue;
            };
            let joint: Vec<M::Move> = (0..roles)
                .map(|o| {
                    if o == r {
                        w.clone()
                    } else {
                        self.moves[o][0].clone()
                    }
                })
                .collect();
            let next = machine.next_state(&self.state, &joint);
            if machine.is_terminal(&next) {
                let mut v = Vec::new();
                eval.evaluate(machine, &next, true, &mut v);
                if v.get(r).is_some_and(|&x| x >= 1.0) {
                    let _ = self.values.set(v);
                }
            }
            break;
        }
        self
    }

    /// This node with its implicit-minimax values started at `heuristic`'s
    /// value of its state (its exact values when terminal).
    pub fn with_minimax(mut self, machine: &M, heuristic: &dyn Evaluator<M>) -> Self {
        let mut v = Vec::new();
        match self.values.get() {
            Some(exact) => v.clone_from(exact),
            None => heuristic.evaluate(machine, &self.state, false, &mut v),
        }
        self.minimax = v.iter().map(|x| AtomicU64::new(x.to_bits())).collect();
        self
    }

    /// Role `r`'s implicit-minimax value: exact once solved, else the
    /// heuristic's backed up; `None` where the node keeps none.
    #[inline]
    pub(super) fn minimax_value(&self, r: usize) -> Option<f64> {
        match self.values.get() {
            Some(v) => v.get(r).copied(),
            None => self.minimax.get(r).map(|a| f64::from_bits(a.load(Relaxed))),
        }
    }

    /// Sets the implicit-minimax values to `from`'s (the mover's best child).
    pub(super) fn set_minimax(&self, from: &Node<M>) {
        for (r, a) in self.minimax.iter().enumerate() {
            if let Some(v) = from.minimax_value(r) {
                a.store(v.to_bits(), Relaxed);
            }
        }
    }

    /// The node's exact values are known (terminal, or solved from its children).
    #[inline]
    pub fn solved(&self) -> bool {
        self.values.get().is_some()
    }

    pub fn visits(&self) -> u64 {
        self.counts[0].visits.load(Relaxed)
    }

    #[inline]
    pub(super) fn visits_counter(&self) -> &AtomicU64 {
        &self.counts[0].visits
    }

    /// Role `r`'s statistics as atomics, parallel to `moves[r]`.
    #[inline]
    pub(super) fn role_stats(&self, r: usize) -> &[AtomicStats] {
        let from = 1 + self.moves[..r].iter().map(Vec::len).sum::<usize>();
        &self.counts[from..from + self.moves[r].len()]
    }

    /// Role `r`'s statistics, parallel to `moves[r]`.
    pub fn stats(&self, r: usize) -> Vec<MoveStats> {
        self.role_stats(r).iter().map(AtomicStats::get).collect()
    }

    /// Role `r`'s AMAF statistics (empty before RAVE's first backup here).
    #[cfg(test)]
    pub fn amaf(&self, r: usize) -> Vec<MoveStats> {
        self.amaf
            .get()
            .map_or_else(Vec::new, |a| a[r].iter().map(AtomicStats::get).collect())
    }

    /// The child reached by the joint move of key `key`.
    pub fn child(&self, key: u64) -> Option<NodeId> {
        self.children.get(key)
    }

    /// Every expanded child with its key.
    #[cfg(test)]
    pub fn children(&self) -> Vec<(u64, NodeId)> {
        let mut out = Vec::new();
        self.children.for_each(|k, c| out.push((k, c)));
        out
    }

    /// The child key of a joint move given as move indices per role.
    pub fn key(&self, idx: &[usize]) -> u64 {
        self.moves
            .iter()
            .zip(idx)
            .fold(0u64, |k, (l, &i)| k * l.len() as u64 + i as u64)
    }

    /// The one role with a choice here (any role when none has): the node is a
    /// turn of that role. `None` at simultaneous-move nodes and terminal ones.
    pub fn mover(&self) -> Option<usize> {
        let mut choosers = self.moves.iter().enumerate().filter(|(_, l)| l.len() > 1);
        match (choosers.next(), choosers.next()) {
            (Some((r, _)), None) => Some(r),
            (None, _) if !self.moves.is_empty() => Some(0),
            _ => None,
        }
    }

    /// The move indices of a joint move, if every move is legal here.
    pub fn indices(&self, joint: &[M::Move]) -> Option<Vec<usize>> {
        if self.terminal || joint.len() != self.moves.len() {
            return None;
        }
        self.moves
            .iter()
            .zip(joint)
            .map(|(l, m)| l.iter().position(|x| x == m))
            .collect()
    }
}
