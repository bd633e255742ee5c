//! IDA* (Korf 1985): A*'s sequel when its states fill the search's memory
//! share. A* keeps every state it generates; on a deep sliding puzzle the
//! last buckets before the optimum hold millions of them (Korf's first
//! fifteen-puzzle, 57 moves: over 8 million states by bucket 57). IDA*
//! keeps only its path: a depth-first search that cuts every line whose
//! `f = g + h` passes a threshold, run again with the threshold raised to
//! the smallest `f` it cut, from where A* stopped.
//!
//! A pass at threshold `t` that finds no winning state proves that no plan
//! has fewer moves than the next threshold: every line with `f` below it
//! was searched (a pass at any threshold in between would search the same
//! lines). So the first plan a pass finds is a shortest one, as A*'s is.
//! A table of the states reached in the pass, at their fewest moves (up to
//! half the search's share of states), cuts the transpositions that would
//! otherwise make each pass re-search whole subtrees: a state reached again
//! with no fewer moves has nothing new below it in this pass.
//!
//! With several threads ([`super::breadth::Limits::threads`]) a pass is
//! shared out: its first layers are expanded breadth-first (with the same
//! cuts) until they hold [`ITEMS_PER_THREAD`] states a thread, and the
//! threads take those states one by one, sharing one table. The
//! first plan any thread finds ends the pass; it is as short as any, since
//! every plan of fewer moves than the threshold was refuted before.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use hashbrown::HashMap;

use crate::reasoner::StateMachine;

use super::breadth::{Bfs, End};
use super::pattern::Heuristic;

/// The states of a pass's first layers for each thread to take: enough
/// that the threads end their share at about the same time, though the
/// subtrees below them differ in size by orders of magnitude.
pub(super) const ITEMS_PER_THREAD: usize = 256;

/// A state on the path of a pass, with its moves and the next to try.
struct Frame<S, M> {
    state: S,
    g: u32,
    moves: Vec<M>,
    next: usize,
}

/// How a pass ended.
enum Pass<M> {
    /// The moves from where the pass started to a winning state.
    Won(Vec<M>),
    /// No winning state within the threshold; the smallest `f` cut
    /// (`u32::MAX` when nothing was cut: every line searched).
    Exceeded(u32),
    Stopped,
}

/// What a pass searches with: the engine, the databases, its bounds.
struct On<'x, M> {
    m: &'x M,
    heuristic: &'x Heuristic,
    b: Bounds,
}

/// What bounds one pass.
#[derive(Clone, Copy)]
struct Bounds {
    threshold: u32,
    /// The move after which the clock ends the game (`u32::MAX`: none).
    clock_end: u32,
    /// The most states a table of the pass keeps.
    cap: usize,
}

/// What a child state is to a pass.
enum Child {
    /// A winning state within the threshold.
    Won,
    /// Cut, terminal or out of reach: not searched below; the `f` to
    /// remember for the next threshold, if any.
    Cut(Option<u32>),
    Open,
}

/// Judges `child`, reached in `g` moves, against the pass's bounds.
fn judge<M: StateMachine>(on: &On<M>, child: &M::State, g: u32, scratch: &mut Vec<usize>) -> Child {
    let (m, b) = (on.m, on.b);
    if m.is_terminal(child) || g >= b.clock_end {
        if super::best_goal(m, child) == 100 {
            return if g <= b.threshold {
                Child::Won
            } else {
                Child::Cut(Some(g))
            };
        }
        return Child::Cut(None);
    }
    match on.heuristic.estimate(m, child, scratch) {
        None => Child::Cut(None),
        Some(h) if g + h > b.threshold => Child::Cut(Some(g + h)),
        Some(_) => Child::Open,
    }
}

/// The states a pass has reached, at their fewest moves: a state reached
/// again in no fewer moves has nothing new below it in the pass.
trait Visits<S> {
    /// Whether `state`, reached in `g` moves, is new to the table (or
    /// reached in fewer moves than before), recording it while the table has
    /// room.
    fn first_visit(&mut self, state: &S, g: u32) -> bool;
}

/// A table of one thread's pass, of at most `cap` states.
struct Table<S> {
    seen: HashMap<S, u32>,
    cap: usize,
}

impl<S: Eq + std::hash::Hash + Clone> Visits<S> for Table<S> {
    fn first_visit(&mut self, state: &S, g: u32) -> bool {
        let room = self.seen.len() < self.cap;
        visit(&mut self.seen, state, g, room)
    }
}

/// [`Visits::first_visit`] on one map, which records a new state only
/// where it has `room`.
fn visit<S: Eq + std::hash::Hash + Clone>(
    seen: &mut HashMap<S, u32>,
    state: &S,
    g: u32,
    room: bool,
) -> bool {
    match seen.get_mut(state) {
        Some(at) if *at <= g => false,
        Some(at) => {
            *at = g;
            true
        }
        None => {
            if room {
                seen.insert(state.clone(), g);
            }
            true
        }
    }
}

/// The shards of a table shared by a pass's threads: one lock each, chosen
/// by the state's hash, so that threads seldom wait on each other. Shared
/// rather than one table a thread: on fifteen57 the threads' own tables
/// let each search again what another had, twice the states for the same
/// pass. Sound as the one thread's table is: the thread that recorded a
/// state searches all below it within the threshold, unless the pass ends.
const SHARDS: usize = 64;

struct Shared<S> {
    shards: Vec<Mutex<HashMap<S, u32>>>,
    hasher: hashbrown::DefaultHashBuilder,
    len: AtomicUsize,
    cap: usize,
}

impl<S: Eq + std::hash::Hash + Clone> Shared<S> {
    fn new(cap: usize) -> Self {
        Shared {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            hasher: hashbrown::DefaultHashBuilder::default(),
            len: AtomicUsize::new(0),
            cap,
        }
    }
}

impl<S: Eq + std::hash::Hash + Clone> Visits<S> for &Shared<S> {
    fn first_visit(&mut self, state: &S, g: u32) -> bool {
        use std::hash::BuildHasher;
        let h = self.hasher.hash_one(state) as usize;
        let mut shard = self.shards[h % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let before = shard.len();
        let first = visit(
            &mut shard,
            state,
            g,
            self.len.load(Ordering::Relaxed) < self.cap,
        );
        if shard.len() > before {
            self.len.fetch_add(1, Ordering::Relaxed);
        }
        first
    }
}

/// A depth-first pass below `root`, reached in `g0` moves, cutting lines
/// past the threshold; `tick` is asked every 4,096 states generated whether
/// to stop.
fn dfs<M: StateMachine>(
    on: &On<M>,
    root: &M::State,
    g0: u32,
    seen: &mut impl Visits<M::State>,
    generated: &mut u64,
    tick: &mut dyn FnMut() -> bool,
) -> Pass<M::Move> {
    let m = on.m;
    let mut scratch = Vec::new();
    let mut moves = Vec::new();
    m.legal_moves(root, 0, &mut moves);
    let mut stack = vec![Frame {
        state: root.clone(),
        g: g0,
        moves: std::mem::take(&mut moves),
        next: 0,
    }];
    // The moves from the root to the top of the stack.
    let mut path: Vec<M::Move> = Vec::new();
    let mut cut = u32::MAX;
    while let Some(top) = stack.last_mut() {
        if top.next == top.moves.len() {
            stack.pop();
            path.pop();
            continue;
        }
        let mv = top.moves[top.next].clone();
        top.next += 1;
        let g = top.g + 1;
        let child = m.next_state(&top.state, std::slice::from_ref(&mv));
        *generated += 1;
        if generated.is_multiple_of(4096) && tick() {
            return Pass::Stopped;
        }
        match judge(on, &child, g, &mut scratch) {
            Child::Won => {
                path.push(mv);
                return Pass::Won(path);
            }
            Child::Cut(f) => {
                cut = cut.min(f.unwrap_or(u32::MAX));
                continue;
            }
            Child::Open => {}
        }
        if !seen.first_visit(&child, g) {
            continue;
        }
        m.legal_moves(&child, 0, &mut moves);
        path.push(mv);
        stack.push(Frame {
            state: child,
            g,
            moves: std::mem::take(&mut moves),
            next: 0,
        });
    }
    Pass::Exceeded(cut)
}

impl<M: StateMachine + 'static> Bfs<'_, M> {
    /// IDA* from the initial state, every plan of fewer than `from` moves
    /// already refuted (by A*'s buckets).
    pub(super) fn ida(&mut self, mut heuristic: Heuristic, from: usize) -> End {
        let kept = self.nodes.len();
        // A*'s states go back: the passes keep their path and a table.
        self.nodes = Vec::new();
        self.table = hashbrown::HashTable::new();
        let last = self.last();
        let root = self.m.initial_state();
        let Some(h0) = heuristic.estimate(self.m, &root, &mut Vec::new()) else {
            return End::GaveUp("the pattern databases find goal 100 out of reach".into());
        };
        let threads = self.s.limits.threads.max(1);
        crate::progress!(
            "[breadth] A* holds {kept} states, its share: IDA* from {from} moves on, \
             {threads} thread(s), {:.2} s",
            self.s.start.elapsed().as_secs_f64()
        );
        let mut threshold = (from as u32).max(h0);
        let mut generated: u64 = 0;
        loop {
            if threshold as usize > last {
                self.claim(self.last_claimable());
                return End::GaveUp(format!(
                    "no plan reaches goal 100 within {last} moves (IDA* on the pattern databases)"
                ));
            }
            // A larger tier of databases, between passes: a pass from the
            // same threshold on them is the same proof, on fewer states.
            if let Some(better) = self.next_tier(false) {
                match self.root_estimate(&better) {
                    None => {
                        self.claim(self.last_claimable());
                        return End::GaveUp(
                            "the pattern databases find goal 100 out of reach".into(),
                        );
                    }
                    Some(d) => threshold = threshold.max(d),
                }
                heuristic = better;
                continue;
            }
            let pass = if threads > 1 {
                self.shared_pass(&heuristic, &root, threshold, threads, &mut generated)
            } else {
                self.pass(&heuristic, &root, threshold, &mut generated)
            };
            match pass {
                Pass::Won(plan) => {
                    return End::Won(plan.iter().map(|m| self.m.move_term(m)).collect())
                }
                Pass::Stopped => return End::Stopped,
                Pass::Exceeded(next) => {
                    self.claim((next as usize - 1).min(self.last_claimable()));
                    crate::progress!(
                        "[breadth] IDA*: no plan of {} moves: {generated} states generated, {:.2} s",
                        next.min(last as u32 + 1) - 1,
                        self.s.start.elapsed().as_secs_f64()
                    );
                    if next == u32::MAX {
                        return End::GaveUp(
                            "no plan reaches goal 100 (IDA*: every state the pattern \
                             databases leave searched)"
                                .into(),
                        );
                    }
                    threshold = next;
                }
            }
        }
    }

    fn bounds(&self, threshold: u32) -> Bounds {
        Bounds {
            threshold,
            clock_end: self.s.clock_end.map_or(u32::MAX, |e| e as u32),
            cap: (self.s.limits.max_states / 2).max(1_000),
        }
    }

    /// One depth-first pass from `root` on this thread, cutting lines past
    /// `threshold`.
    fn pass(
        &mut self,
        heuristic: &Heuristic,
        root: &M::State,
        threshold: u32,
        generated: &mut u64,
    ) -> Pass<M::Move> {
        let b = self.bounds(threshold);
        let m = self.m;
        let mut seen = Table {
            seen: HashMap::new(),
            cap: b.cap,
        };
        seen.first_visit(root, 0);
        let mut tick = || {
            if self.s.stop.load(Ordering::Relaxed) {
                return true;
            }
            self.step_back_when_behind(threshold as usize);
            false
        };
        let on = On { m, heuristic, b };
        dfs(&on, root, 0, &mut seen, generated, &mut tick)
    }

    /// One pass shared by `threads` threads (see the module's doc): the
    /// first layers breadth-first on this thread, the states they end in
    /// taken by the threads one by one.
    fn shared_pass(
        &mut self,
        heuristic: &Heuristic,
        root: &M::State,
        threshold: u32,
        threads: usize,
        generated: &mut u64,
    ) -> Pass<M::Move> {
        let b = self.bounds(threshold);
        let m = self.m;
        let on = On { m, heuristic, b };
        let mut scratch = Vec::new();
        let mut moves = Vec::new();
        let mut cut = u32::MAX;
        // Every state of a layer is reached in the same number of moves.
        let mut layer: Vec<(M::State, Vec<M::Move>)> = vec![(root.clone(), Vec::new())];
        let mut g = 0;
        let table = Shared::new(b.cap);
        let mut seen = &table;
        seen.first_visit(root, 0);
        while layer.len() < ITEMS_PER_THREAD * threads {
            if self.s.stop.load(Ordering::Relaxed) {
                return Pass::Stopped;
            }
            self.step_back_when_behind(threshold as usize);
            g += 1;
            let mut next = Vec::new();
            for (state, path) in &layer {
                m.legal_moves(state, 0, &mut moves);
                for mv in moves.drain(..) {
                    let child = m.next_state(state, std::slice::from_ref(&mv));
                    *generated += 1;
                    let mut to = path.clone();
                    to.push(mv);
                    match judge(&on, &child, g, &mut scratch) {
                        Child::Won => return Pass::Won(to),
                        Child::Cut(f) => cut = cut.min(f.unwrap_or(u32::MAX)),
                        Child::Open => {
                            if seen.first_visit(&child, g) {
                                next.push((child, to));
                            }
                        }
                    }
                }
            }
            if next.is_empty() {
                return Pass::Exceeded(cut);
            }
            layer = next;
        }
        let stop = self.s.stop;
        let (taken, done) = (AtomicUsize::new(0), AtomicBool::new(false));
        let (cut_all, generated_all) = (AtomicU32::new(cut), AtomicU64::new(0));
        let won: Mutex<Option<Vec<M::Move>>> = Mutex::new(None);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    let mut seen = &table;
                    let mut count = 0;
                    let mut tick = || stop.load(Ordering::Relaxed) || done.load(Ordering::Relaxed);
                    while let Some((state, path)) = layer.get(taken.fetch_add(1, Ordering::Relaxed))
                    {
                        if tick() {
                            continue;
                        }
                        match dfs(&on, state, g, &mut seen, &mut count, &mut tick) {
                            Pass::Won(rest) => {
                                let mut plan = path.clone();
                                plan.extend(rest);
                                let mut w = won.lock().unwrap_or_else(|e| e.into_inner());
                                w.get_or_insert(plan);
                                done.store(true, Ordering::Relaxed);
                            }
                            Pass::Exceeded(c) => {
                                cut_all.fetch_min(c, Ordering::Relaxed);
                            }
                            Pass::Stopped => {}
                        }
                    }
                    generated_all.fetch_add(count, Ordering::Relaxed);
                });
            }
        });
        *generated += generated_all.into_inner();
        if let Some(plan) = won.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Pass::Won(plan);
        }
        if stop.load(Ordering::Relaxed) {
            return Pass::Stopped;
        }
        Pass::Exceeded(cut_all.into_inner())
    }
}
