//! The compiled engine: a propositional network built from the ground rules
//! (see [`super::ground`]), implementing [`StateMachine`].
//!
//! Every ground atom becomes a node: `true` atoms are the fluent inputs, `does`
//! atoms the move inputs, every other atom an OR over its rules, each rule an AND
//! of (possibly negated) nodes. Atoms that do not depend on the inputs (static
//! relations, `init`) are evaluated once at compile time and folded away. Nodes are
//! numbered in topological order of the atoms' strongly connected components, so
//! one pass evaluates the network; a component with recursion between its atoms
//! (paths, connectivity) is a loop solved to its least fixpoint. Ground negation
//! inside such a component would make the rules unstratified and is refused.
//!
//! Evaluation is split in three programs, each only over the nodes an output
//! needs: per state, what `legal`, `terminal` and `next` need; on demand, what
//! `goal` needs; per joint move, the nodes that read `does`. A state is a bitset of
//! fluents and a move an index, so a playout ([`Propnet::playout_from`]) allocates
//! nothing: it runs in a per-thread scratch taken from a pool, and the network
//! itself is immutable, so any number of threads share it.
//!
//! When no recursive component feeds the per-state outputs (nearly every game),
//! the network propagates changes instead of evaluating programs: each gate
//! keeps a count of its true inputs, and a changed node visits only its readers.
//! The speed then is the number of visits per step, and four rewrites cut it
//! where turn-taking games spend it:
//! - legal gates give up their guard (the input most of a role's legal gates
//!   share, `(true (control r))`): a turn change flips one guard, not every
//!   legal gate; ORs over legal gates (`has_legal_move`) become
//!   `AND(guard, OR(rests))` so the legal gates lose their reader;
//! - the move program is copied once per role with its pass move (`noop`)
//!   fixed, so the passing role's `does` input, which every frame rule reads,
//!   is never set;
//! - the fluents whose `next` value differs are kept as bitsets by propagation,
//!   so a step reads its changes off;
//! - a playout's start state is a snapshot restored when it ends, so the next
//!   playout from there starts by a copy, not by undoing the last one.

use hashbrown::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use rand::Rng;

use super::ground::{ground, AtomId, GroundError, GroundProgram, Limits};
use super::terms::{TermId, TermPool};
use super::{Playout, RoleIdx, StateMachine};
use crate::gdl::{kw, Game, Term};

/// A state: one bit per fluent of the network.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct PropnetState(Box<[u64]>);

impl PropnetState {
    fn get(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }
}

/// A move: an index into the network's move terms (the same for every role).
pub type PropnetMove = u32;

/// Why a game did not compile.
#[derive(Debug, thiserror::Error)]
pub enum PropnetError {
    #[error(transparent)]
    Ground(#[from] GroundError),
    #[error("the network exceeds {limit} nodes")]
    TooManyNodes { limit: usize },
    #[error("{0}")]
    Rules(String),
}

/// Size and cost of a compiled network.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct NetStats {
    pub ground_atoms: usize,
    /// Candidate atoms the grounder's joins tried.
    pub join_steps: u64,
    pub ground_rules: usize,
    pub fluents: usize,
    pub moves: usize,
    pub nodes: usize,
    pub edges: usize,
    /// Nodes run per state, per joint move, and for goals.
    pub state_nodes: usize,
    pub move_nodes: usize,
    pub goal_nodes: usize,
    pub ground_s: f64,
    pub compile_s: f64,
}

/// Node flags: some gate reads the node; the node decides a legal move.
const HAS_READERS: u8 = 1;
const LEGAL_OUT: u8 = 2;
/// The node is the `next` node of some fluent (in some copy of the move program).
const NEXT_OUT: u8 = 4;

const FALSE: u32 = 0;
const TRUE: u32 = 1;
const FLUENT_BASE: usize = 2;

#[derive(Clone, Copy, Debug)]
struct Gate {
    and: bool,
    start: u32,
    end: u32,
}

/// A role's legal moves that share a guard literal: a move of the group is legal
/// when the guard holds and the move's own node does. Pulling the literal that
/// most of a role's legal gates share (typically `(true (control r))`) out of
/// them means a turn change flips one guard instead of every legal gate.
#[derive(Clone, Copy, Debug)]
struct LegalGroup {
    /// `node << 1 | negated`.
    guard: u32,
    /// The group's entries: `legal_list[start..end]`.
    start: u32,
    end: u32,
}

/// The legal outputs split by guards: the entries `(node, move)` by group, the
/// groups, each role's range of groups, and the rest node of each split gate.
struct LegalSplit {
    list: Vec<(u32, u32)>,
    groups: Vec<LegalGroup>,
    role_groups: Vec<(u32, u32)>,
    rest_of: HashMap<u32, u32>,
}

/// The value of literal `l` (`node << 1 | negated`).
#[inline]
fn lit_value(vals: &[u8], l: u32) -> bool {
    vals[(l >> 1) as usize] ^ (l & 1) as u8 == 1
}

/// One instruction of an evaluation program.
#[derive(Clone, Copy, Debug)]
enum Item {
    Node(u32),
    /// A recursive component: nodes `[start, end)` to their least fixpoint.
    Loop(u32, u32),
}

/// A copy of the parts of a [`Scratch`] that describe its loaded state.
#[derive(Default)]
struct Snapshot {
    vals: Vec<u8>,
    counts: Vec<i32>,
    cur: Vec<u64>,
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

/// Per-thread working memory: the values of every node for one state.
struct Scratch {
    vals: Vec<u8>,
    /// Incremental mode: per gate, how many of its literals are true, minus its
    /// threshold (so the gate is true when the count is not negative).
    counts: Vec<i32>,
    /// The state the fluent inputs hold (packed like [`PropnetState`]).
    cur: Vec<u64>,
    /// Full mode: whether the state program has run for `cur`.
    loaded: bool,
    goals_done: bool,
    /// Fluents whose value changes with the joint move being applied.
    changed: Vec<u32>,
    /// Incremental mode: per copy of the `next` nodes (general, then one per
    /// role's pass move), a bitset of the fluents whose `next` node disagrees
    /// with the fluent: kept by propagation, so a step reads its changes off
    /// instead of comparing every fluent.
    diff: Vec<u64>,
    stack: Vec<(u32, u8)>,
    legal: Vec<u32>,
    joint: Vec<u32>,
    /// Incremental mode: per legal group, how many of its nodes hold.
    group_count: Vec<u32>,
    /// Incremental mode: the state the last playout started from, restored
    /// when it ends, so the next playout from there (or from a state near it,
    /// as the leaves of a search tree are) loads by a copy or a few changes
    /// instead of undoing a whole playout.
    start: Snapshot,
    has_start: bool,
}

impl Scratch {
    fn save_start(&mut self) {
        let t = &mut self.start;
        Snapshot::copy(&mut t.vals, &self.vals);
        Snapshot::copy(&mut t.counts, &self.counts);
        Snapshot::copy(&mut t.cur, &self.cur);
        Snapshot::copy(&mut t.group_count, &self.group_count);
        Snapshot::copy(&mut t.diff, &self.diff);
        self.has_start = true;
    }

    fn restore_start(&mut self) {
        let t = &self.start;
        self.vals.copy_from_slice(&t.vals);
        self.counts.copy_from_slice(&t.counts);
        self.cur.copy_from_slice(&t.cur);
        self.group_count.copy_from_slice(&t.group_count);
        self.diff.copy_from_slice(&t.diff);
        self.goals_done = false;
    }
}

/// The compiled network.
pub struct Propnet {
    game: Game,
    pool: TermPool,
    /// Fluent `i` is node `FLUENT_BASE + i`; its term (without `true`).
    fluent_terms: Vec<TermId>,
    fluent_of: HashMap<TermId, u32>,
    move_terms: Vec<TermId>,
    move_of: HashMap<TermId, u32>,
    /// `does` input node for role `r` and move `m`: `does_node[r * moves + m]`.
    does_node: Vec<u32>,
    gates: Vec<Gate>,
    /// Gate inputs: `node << 1 | negated`.
    lits: Vec<u32>,
    state_prog: Vec<Item>,
    goal_prog: Vec<Item>,
    move_prog: Vec<Item>,
    /// Propagate changes instead of evaluating whole programs; possible when no
    /// recursive component feeds `legal`, `terminal` or `next`.
    incremental: bool,
    /// Incremental mode: per node, the gates that read it (`gate << 1 | negated`),
    /// as ranges of `fanout`.
    fanout_start: Vec<u32>,
    fanout: Vec<u32>,
    /// Incremental mode: a gate is true when its count of true literals reaches
    /// this (all of them for AND, one for OR).
    threshold: Vec<i32>,
    /// Incremental mode: per node, [`HAS_READERS`] and [`LEGAL_OUT`].
    flags: Vec<u8>,
    /// Every legal output as (node, move), by group; the groups, by role; per
    /// role, its range of `legal_groups`.
    legal_list: Vec<(u32, u32)>,
    legal_groups: Vec<LegalGroup>,
    role_groups: Vec<(u32, u32)>,
    /// Per node, the groups of the legal entries it decides (one per entry), as
    /// ranges of `legal_of`.
    legal_of_start: Vec<u32>,
    legal_of: Vec<u32>,
    /// The node of every fluent's `next` atom in every copy of the move
    /// program, `nexts[copy * fluents + i]`: copy 0 is the general program, the
    /// others are specialised to one role's pass move (see
    /// [`Builder::specialize`]).
    nexts: Vec<u32>,
    copies: usize,
    /// The copies whose diff bitsets propagation keeps: the pass copies when
    /// there are any (a step of a turn-taking game always reads one), else the
    /// general one; a step that reads another copy compares its fluents.
    tracked: std::ops::Range<usize>,
    /// Incremental mode, per role: its pass move and the copy specialised to
    /// it, or `NO_MOVE`.
    pass: Vec<(u32, u32)>,
    /// Incremental mode: per node, the (copy, fluent) pairs whose `next` node
    /// it is, as ranges of `next_of`.
    next_of_start: Vec<u32>,
    next_of: Vec<(u32, u32)>,
    terminal: u32,
    /// Per role: (node, value), ascending by value.
    goals: Vec<Vec<(u32, u8)>>,
    init: PropnetState,
    scratch: Mutex<Vec<Scratch>>,
    stats: NetStats,
}

/// Compile limits: the grounding's, and the number of network nodes.
#[derive(Clone, Copy, Debug)]
pub struct CompileLimits {
    pub ground: Limits,
    pub max_nodes: usize,
}

impl Default for CompileLimits {
    fn default() -> Self {
        CompileLimits {
            ground: Limits::default(),
            max_nodes: 4_000_000,
        }
    }
}

impl Propnet {
    /// Grounds and compiles `game` with the default limits.
    pub fn new(game: Game) -> Result<Propnet, PropnetError> {
        Self::with_limits(game, &CompileLimits::default())
    }

    pub fn with_limits(game: Game, limits: &CompileLimits) -> Result<Propnet, PropnetError> {
        let t0 = Instant::now();
        let gp = ground(&game, &limits.ground)?;
        let ground_s = t0.elapsed().as_secs_f64();
        let mut net = Builder::new(game, gp, limits.max_nodes)?.finish()?;
        net.stats.ground_s = ground_s;
        net.stats.compile_s = t0.elapsed().as_secs_f64();
        Ok(net)
    }

    pub fn stats(&self) -> &NetStats {
        &self.stats
    }

    /// Whether the network propagates changes (else it evaluates each state anew).
    pub fn is_incremental(&self) -> bool {
        self.incremental
    }

    /// Whether fluent term `t` (without `true`) is one of the network's fluents.
    pub fn has_fluent(&self, t: &Term) -> bool {
        self.pool
            .find_term(t)
            .is_some_and(|id| self.fluent_of.contains_key(&id))
    }

    /// A scratch holding the state with no fluent true.
    fn new_scratch(&self) -> Scratch {
        let n = self.gates.len();
        let mut s = Scratch {
            vals: vec![0u8; n],
            counts: Vec::new(),
            cur: vec![0; self.init.0.len()],
            loaded: false,
            goals_done: false,
            changed: Vec::new(),
            diff: Vec::new(),
            stack: Vec::new(),
            legal: Vec::new(),
            joint: Vec::new(),
            group_count: vec![0; self.legal_groups.len()],
            start: Snapshot::default(),
            has_start: false,
        };
        s.vals[TRUE as usize] = 1;
        if self.incremental {
            self.run(&self.state_prog, &mut s.vals);
            self.run(&self.move_prog, &mut s.vals);
            s.counts = vec![0; n];
            for g in 0..n {
                let gate = self.gates[g];
                s.counts[g] = self.lits[gate.start as usize..gate.end as usize]
                    .iter()
                    .filter(|&&l| s.vals[(l >> 1) as usize] ^ (l & 1) as u8 == 1)
                    .count() as i32
                    - self.threshold[g];
            }
            s.loaded = true;
            s.diff = vec![0; self.copies * self.words()];
            for c in self.tracked.clone() {
                for i in 0..self.fluent_terms.len() {
                    self.update_diff(&mut s, c, i);
                }
            }
            for (g, group) in self.legal_groups.iter().enumerate() {
                s.group_count[g] = self.legal_list[group.start as usize..group.end as usize]
                    .iter()
                    .map(|&(n, _)| s.vals[n as usize] as u32)
                    .sum();
            }
        }
        s
    }

    /// Words of a state's bitset.
    fn words(&self) -> usize {
        self.init.0.len()
    }

    /// The `next` nodes of copy `c`.
    fn next_nodes(&self, c: usize) -> &[u32] {
        let nf = self.fluent_terms.len();
        &self.nexts[c * nf..(c + 1) * nf]
    }

    /// Recomputes whether fluent `i`'s `next` node in copy `c` disagrees with it.
    #[inline]
    fn update_diff(&self, s: &mut Scratch, c: usize, i: usize) {
        let n = self.nexts[c * self.fluent_terms.len() + i] as usize;
        let w = c * self.words() + i / 64;
        let differs = (s.vals[n] != s.vals[FLUENT_BASE + i]) as u64;
        s.diff[w] = s.diff[w] & !(1 << (i % 64)) | differs << (i % 64);
    }

    /// Keeps the diff bits in step with a change of node `n`: as a `next`
    /// node, and as a fluent input.
    #[inline]
    fn track_next(&self, s: &mut Scratch, n: usize) {
        let (a, b) = (
            self.next_of_start[n] as usize,
            self.next_of_start[n + 1] as usize,
        );
        for &(c, i) in &self.next_of[a..b] {
            self.update_diff(s, c as usize, i as usize);
        }
    }

    /// The groups of `role` whose guard holds in the loaded state.
    #[inline]
    fn open_groups<'a>(
        &'a self,
        vals: &'a [u8],
        role: usize,
    ) -> impl Iterator<Item = (usize, &'a LegalGroup)> + 'a {
        let (a, b) = self.role_groups[role];
        (a as usize..b as usize)
            .map(move |g| (g, &self.legal_groups[g]))
            .filter(move |(_, group)| lit_value(vals, group.guard))
    }

    /// The legal moves of `role` in the loaded state, in list order.
    fn legal_into(&self, vals: &[u8], role: usize, out: &mut Vec<u32>) {
        out.clear();
        for (_, group) in self.open_groups(vals, role) {
            for &(n, m) in &self.legal_list[group.start as usize..group.end as usize] {
                if vals[n as usize] == 1 {
                    out.push(m);
                }
            }
        }
    }

    /// Incremental mode: the `k`-th legal move of `role` in list order (the move
    /// [`Propnet::legal_into`] lists at index `k`), found from the group counts
    /// without building the list; `None` when there are no more than `k`.
    #[inline]
    fn kth_legal(&self, s: &Scratch, role: usize, k: usize) -> Option<u32> {
        let mut k = k;
        for (g, group) in self.open_groups(&s.vals, role) {
            let c = s.group_count[g] as usize;
            if k >= c {
                k -= c;
                continue;
            }
            for &(n, m) in &self.legal_list[group.start as usize..group.end as usize] {
                if s.vals[n as usize] == 1 {
                    if k == 0 {
                        return Some(m);
                    }
                    k -= 1;
                }
            }
        }
        None
    }

    /// Incremental mode: how many legal moves `role` has in the loaded state.
    #[inline]
    fn legal_count(&self, s: &Scratch, role: usize) -> usize {
        self.open_groups(&s.vals, role)
            .map(|(g, _)| s.group_count[g] as usize)
            .sum()
    }

    /// Keeps the legal counts in step with a change of node `n` to `v`.
    #[inline]
    fn track_legal(&self, s: &mut Scratch, n: usize, v: u8) {
        let (a, b) = (
            self.legal_of_start[n] as usize,
            self.legal_of_start[n + 1] as usize,
        );
        for &g in &self.legal_of[a..b] {
            if v == 1 {
                s.group_count[g as usize] += 1;
            } else {
                s.group_count[g as usize] -= 1;
            }
        }
    }

    fn with_scratch<T>(&self, f: impl FnOnce(&mut Scratch) -> T) -> T {
        let taken = self.scratch.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut s = taken.unwrap_or_else(|| self.new_scratch());
        let out = f(&mut s);
        self.scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(s);
        out
    }

    #[inline]
    fn eval_gate(&self, n: u32, vals: &[u8]) -> u8 {
        let g = self.gates[n as usize];
        let lits = &self.lits[g.start as usize..g.end as usize];
        if g.and {
            for &l in lits {
                if vals[(l >> 1) as usize] ^ (l & 1) as u8 == 0 {
                    return 0;
                }
            }
            1
        } else {
            for &l in lits {
                if vals[(l >> 1) as usize] ^ (l & 1) as u8 != 0 {
                    return 1;
                }
            }
            0
        }
    }

    fn run(&self, prog: &[Item], vals: &mut [u8]) {
        for item in prog {
            match *item {
                Item::Node(n) => vals[n as usize] = self.eval_gate(n, vals),
                Item::Loop(s, e) => {
                    vals[s as usize..e as usize].fill(0);
                    loop {
                        let mut changed = false;
                        for n in s..e {
                            let v = self.eval_gate(n, vals);
                            if v != vals[n as usize] {
                                vals[n as usize] = v;
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

    /// Sets input `node` to `v`; in incremental mode, propagates the change.
    /// Each transition of a node is applied once to the counts of its readers, so
    /// the counts are exact once the stack is empty, whatever the order.
    #[inline]
    fn set_input(&self, s: &mut Scratch, node: u32, v: u8) {
        if s.vals[node as usize] == v {
            return;
        }
        s.vals[node as usize] = v;
        if !self.incremental {
            return;
        }
        let f = self.flags[node as usize];
        if f & LEGAL_OUT != 0 {
            self.track_legal(s, node as usize, v);
        }
        if f & NEXT_OUT != 0 {
            self.track_next(s, node as usize);
        }
        if let Some(i) = (node as usize)
            .checked_sub(FLUENT_BASE)
            .filter(|&i| i < self.fluent_terms.len())
        {
            for c in self.tracked.clone() {
                self.update_diff(s, c, i);
            }
        }
        s.stack.push((node, v));
        while let Some((n, v)) = s.stack.pop() {
            let (a, b) = (
                self.fanout_start[n as usize] as usize,
                self.fanout_start[n as usize + 1] as usize,
            );
            for &e in &self.fanout[a..b] {
                let g = (e >> 1) as usize;
                let c = &mut s.counts[g];
                *c += if v ^ (e & 1) as u8 == 1 { 1 } else { -1 };
                let nv = (*c >= 0) as u8;
                if nv != s.vals[g] {
                    s.vals[g] = nv;
                    let f = self.flags[g];
                    if f & LEGAL_OUT != 0 {
                        self.track_legal(s, g, nv);
                    }
                    if f & NEXT_OUT != 0 {
                        self.track_next(s, g);
                    }
                    // Outputs nobody reads need no visit.
                    if f & HAS_READERS != 0 {
                        s.stack.push((g as u32, nv));
                    }
                }
            }
        }
    }

    /// Makes the scratch hold `state`.
    fn load(&self, s: &mut Scratch, state: &PropnetState) {
        if s.loaded && s.cur[..] == state.0[..] {
            return;
        }
        s.goals_done = false;
        for w in 0..s.cur.len() {
            let mut diff = s.cur[w] ^ state.0[w];
            while diff != 0 {
                let bit = diff.trailing_zeros() as usize;
                diff &= diff - 1;
                let i = w * 64 + bit;
                self.set_input(s, (FLUENT_BASE + i) as u32, state.get(i) as u8);
            }
            s.cur[w] = state.0[w];
        }
        if !self.incremental {
            self.run(&self.state_prog, &mut s.vals);
            s.loaded = true;
        }
    }

    fn goals_into(&self, s: &mut Scratch) {
        if !s.goals_done {
            self.run(&self.goal_prog, &mut s.vals);
            s.goals_done = true;
        }
    }

    /// Sets the `does` inputs of `joint` to `v`, but those of role `skip`.
    fn set_joint(&self, s: &mut Scratch, joint: &[u32], skip: Option<usize>, v: u8) {
        let nm = self.move_terms.len();
        for (r, &m) in joint.iter().enumerate() {
            if Some(r) == skip {
                continue;
            }
            let n = self.does_node[r * nm + m as usize];
            if n != FALSE {
                self.set_input(s, n, v);
            }
        }
    }

    /// Applies `joint` to the loaded state: `s.changed` gets the fluents whose
    /// value changes. The scratch still holds the old state afterwards.
    ///
    /// When a role plays its pass move, the `next` nodes specialised to that
    /// are read and the role's `does` input is never set: its many readers in
    /// the general program are not visited.
    fn advance(&self, s: &mut Scratch, joint: &[u32]) {
        let pass = (0..joint.len()).find(|&r| self.pass[r].0 == joint[r]);
        self.set_joint(s, joint, pass, 1);
        if !self.incremental {
            self.run(&self.move_prog, &mut s.vals);
        }
        s.changed.clear();
        let copy = pass.map_or(0, |r| self.pass[r].1 as usize);
        if self.incremental && self.tracked.contains(&copy) {
            let words = self.words();
            for w in 0..words {
                let mut bits = s.diff[copy * words + w];
                while bits != 0 {
                    s.changed.push((w * 64) as u32 + bits.trailing_zeros());
                    bits &= bits - 1;
                }
            }
        } else {
            for (i, &n) in self.next_nodes(copy).iter().enumerate() {
                if s.vals[n as usize] != s.vals[FLUENT_BASE + i] {
                    s.changed.push(i as u32);
                }
            }
        }
        self.set_joint(s, joint, pass, 0);
    }

    /// Moves the scratch to the state `advance` computed.
    fn apply_changes(&self, s: &mut Scratch) {
        let changed = std::mem::take(&mut s.changed);
        for &i in &changed {
            let node = FLUENT_BASE as u32 + i;
            let v = 1 - s.vals[node as usize];
            self.set_input(s, node, v);
            s.cur[i as usize / 64] ^= 1 << (i % 64);
        }
        s.changed = changed;
        if !self.incremental {
            self.run(&self.state_prog, &mut s.vals);
        }
        s.goals_done = false;
    }

    /// A random playout from `state` with everything in scratch memory: no
    /// allocation per step. `goals` gets each role's goal in the last state.
    pub fn playout_from<R: Rng>(
        &self,
        state: &PropnetState,
        rng: &mut R,
        max_steps: usize,
        goals: &mut Vec<Option<u8>>,
    ) -> Playout {
        self.playout_recorded(state, rng, max_steps, None, goals, None)
    }

    /// [`Propnet::playout_from`], also appending each joint move played to
    /// `record` when given (for tests: the moves can be replayed and checked).
    pub fn playout_recorded<R: Rng>(
        &self,
        state: &PropnetState,
        rng: &mut R,
        max_steps: usize,
        deadline: Option<Instant>,
        goals: &mut Vec<Option<u8>>,
        mut record: Option<&mut Vec<u32>>,
    ) -> Playout {
        self.with_scratch(|s| {
            self.load(s, state);
            if self.incremental && !(s.has_start && s.start.cur == s.cur) {
                s.save_start();
            }
            let roles = self.goals.len();
            let mut steps = 0;
            let mut joint = std::mem::take(&mut s.joint);
            let mut cut = false;
            let mut pacer = super::Pacer::new(deadline);
            let terminal = loop {
                if s.vals[self.terminal as usize] == 1 {
                    break true;
                }
                if steps >= max_steps {
                    break false;
                }
                // A network whose recursive parts are solved every step may take
                // milliseconds a step: the deadline is checked before each one.
                if pacer.passed() {
                    cut = true;
                    break false;
                }
                joint.clear();
                for r in 0..roles {
                    if self.incremental {
                        // The same move the state machine's `legal_moves` lists
                        // at the drawn index.
                        let count = self.legal_count(s, r);
                        if count == 0 {
                            break;
                        }
                        let k = rng.gen_range(0..count);
                        joint.push(self.kth_legal(s, r, k).expect("k < count"));
                        continue;
                    }
                    let mut legal = std::mem::take(&mut s.legal);
                    self.legal_into(&s.vals, r, &mut legal);
                    s.legal = legal;
                    if s.legal.is_empty() {
                        break;
                    }
                    joint.push(s.legal[rng.gen_range(0..s.legal.len())]);
                }
                if joint.len() < roles {
                    break false;
                }
                if let Some(rec) = record.as_deref_mut() {
                    rec.extend_from_slice(&joint);
                }
                self.advance(s, &joint);
                self.apply_changes(s);
                steps += 1;
            };
            s.joint = joint;
            self.goals_into(s);
            goals.clear();
            for r in 0..roles {
                goals.push(self.single_goal(r, &s.vals));
            }
            if self.incremental {
                s.restore_start();
            }
            Playout {
                steps,
                terminal,
                cut,
            }
        })
    }

    fn single_goal(&self, role: RoleIdx, vals: &[u8]) -> Option<u8> {
        let mut found = None;
        for &(n, v) in &self.goals[role] {
            if vals[n as usize] == 1 {
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

impl StateMachine for Propnet {
    type State = PropnetState;
    type Move = PropnetMove;

    const FAST_PLAYOUT: bool = true;

    fn game(&self) -> &Game {
        &self.game
    }

    fn initial_state(&self) -> PropnetState {
        self.init.clone()
    }

    fn legal_moves(&self, state: &PropnetState, role: RoleIdx, out: &mut Vec<u32>) {
        self.with_scratch(|s| {
            self.load(s, state);
            self.legal_into(&s.vals, role, out);
        });
    }

    fn next_state(&self, state: &PropnetState, joint: &[u32]) -> PropnetState {
        self.with_scratch(|s| {
            self.load(s, state);
            self.advance(s, joint);
            let mut next = state.clone();
            for &i in &s.changed {
                next.0[i as usize / 64] ^= 1 << (i % 64);
            }
            next
        })
    }

    fn is_terminal(&self, state: &PropnetState) -> bool {
        self.with_scratch(|s| {
            self.load(s, state);
            s.vals[self.terminal as usize] == 1
        })
    }

    fn goal_values(&self, state: &PropnetState, role: RoleIdx) -> Vec<u8> {
        self.with_scratch(|s| {
            self.load(s, state);
            self.goals_into(s);
            let mut v: Vec<u8> = self.goals[role]
                .iter()
                .filter(|(n, _)| s.vals[*n as usize] == 1)
                .map(|&(_, v)| v)
                .collect();
            v.dedup();
            v
        })
    }

    fn fluents(&self, state: &PropnetState) -> Vec<Term> {
        (0..self.fluent_terms.len())
            .filter(|&i| state.get(i))
            .map(|i| self.pool.to_term(self.fluent_terms[i]))
            .collect()
    }

    fn move_term(&self, m: &u32) -> Term {
        self.pool.to_term(self.move_terms[*m as usize])
    }

    fn parse_move(&self, term: &Term) -> Option<u32> {
        let t = self.pool.find_term(term)?;
        self.move_of.get(&t).copied()
    }

    fn playout<R: Rng>(
        &self,
        state: &PropnetState,
        rng: &mut R,
        max_steps: usize,
        deadline: Option<Instant>,
        goals: &mut Vec<Option<u8>>,
    ) -> Playout {
        self.playout_recorded(state, rng, max_steps, deadline, goals, None)
    }
}

/// Builds the network from the ground program.
struct Builder {
    game: Game,
    gp: GroundProgram,
    max_nodes: usize,
    /// Per atom: its constant value, once known to be constant.
    konst: Vec<Option<bool>>,
    /// Per atom: its node, once it has one.
    node_of: Vec<u32>,
    gates: Vec<Gate>,
    lits: Vec<u32>,
    /// Per node: whether it depends on `does`.
    is_move: Vec<bool>,
    /// Node groups in topological order: (first node, end, recursive).
    groups: Vec<(u32, u32, bool)>,
    fluent_terms: Vec<TermId>,
    fluent_of: HashMap<TermId, u32>,
    move_terms: Vec<TermId>,
    move_of: HashMap<TermId, u32>,
    /// Gates by kind and sorted inputs, to share equal gates.
    dedup: HashMap<(bool, Vec<u32>), u32>,
    /// Per role: its `does` input nodes, sorted; and each such node's role.
    role_does: Vec<Vec<u32>>,
    does_role: HashMap<u32, usize>,
}

const NO_NODE: u32 = u32::MAX;
const NO_MOVE: u32 = u32::MAX;

impl Builder {
    fn new(game: Game, gp: GroundProgram, max_nodes: usize) -> Result<Self, PropnetError> {
        let n = gp.atoms.len();
        let roles: Vec<Option<TermId>> = game.roles.iter().map(|r| gp.pool.find_term(r)).collect();
        let mut b = Builder {
            game,
            gp,
            max_nodes,
            konst: vec![None; n],
            node_of: vec![NO_NODE; n],
            gates: Vec::new(),
            lits: Vec::new(),
            is_move: Vec::new(),
            groups: Vec::new(),
            fluent_terms: Vec::new(),
            fluent_of: HashMap::new(),
            move_terms: Vec::new(),
            move_of: HashMap::new(),
            dedup: HashMap::new(),
            role_does: vec![Vec::new(); roles.len()],
            does_role: HashMap::new(),
        };
        // Constant nodes, then fluent inputs, then move inputs.
        b.push_input(false);
        b.push_input(false);
        let mut does = Vec::new();
        for a in 0..n {
            let t = b.gp.atoms[a];
            let (f, args) = (b.gp.pool.functor(t), b.gp.pool.args(t).to_vec());
            if b.gp.pool.is_const(t) {
                continue;
            }
            if f == kw::TRUE && args.len() == 1 {
                let i = b.fluent_terms.len() as u32;
                b.fluent_terms.push(args[0]);
                b.fluent_of.insert(args[0], i);
                b.node_of[a] = b.push_input(false);
            } else if f == kw::DOES && args.len() == 2 {
                does.push(a);
            }
        }
        for a in does {
            let t = b.gp.atoms[a];
            let args = b.gp.pool.args(t).to_vec();
            if let Some(r) = roles.iter().position(|&x| x == Some(args[0])) {
                b.move_id(args[1]);
                let node = b.push_input(true);
                b.node_of[a] = node;
                b.role_does[r].push(node);
                b.does_role.insert(node, r);
            } else {
                b.konst[a] = Some(false);
            }
        }
        b.build_gates()?;
        Ok(b)
    }

    fn move_id(&mut self, t: TermId) -> u32 {
        let n = self.move_terms.len() as u32;
        *self.move_of.entry(t).or_insert_with(|| {
            self.move_terms.push(t);
            n
        })
    }

    fn push_input(&mut self, is_move: bool) -> u32 {
        self.gates.push(Gate {
            and: false,
            start: 0,
            end: 0,
        });
        self.is_move.push(is_move);
        (self.gates.len() - 1) as u32
    }

    /// A gate over `lits`, or the existing gate with the same kind and inputs.
    ///
    /// An OR over more than half of one role's `does` inputs is built as NOT of
    /// the OR over the others: a gate reading `does` is only read while a legal
    /// joint move is set, when exactly one `does` input of each role holds, and
    /// the complement is the smaller fan-in (a frame rule's "any move that does
    /// not touch this cell" becomes "not a move that touches it").
    fn gate(&mut self, and: bool, lits: &[u32]) -> Result<u32, PropnetError> {
        let mut key = lits.to_vec();
        key.sort_unstable();
        key.dedup();
        if let Some(&n) = self.dedup.get(&(and, key.clone())) {
            return Ok(n);
        }
        let mut body = key.clone();
        if !and {
            for r in 0..self.role_does.len() {
                let total = self.role_does[r].len();
                let mine: Vec<u32> = body
                    .iter()
                    .copied()
                    .filter(|&l| l & 1 == 0 && self.does_role.get(&(l >> 1)) == Some(&r))
                    .collect();
                if mine.len() * 2 <= total || mine.len() < 2 {
                    continue;
                }
                let rest: Vec<u32> = self.role_does[r]
                    .iter()
                    .filter(|&&n| mine.binary_search(&(n << 1)).is_err())
                    .map(|&n| n << 1)
                    .collect();
                body.retain(|l| mine.binary_search(l).is_err());
                let comp = self.junction(false, &rest)?;
                body.push(comp ^ 1);
                body.sort_unstable();
            }
            if body.contains(&(TRUE << 1)) || body.contains(&(FALSE << 1 | 1)) {
                self.dedup.insert((and, key), TRUE);
                return Ok(TRUE);
            }
            if let [l] = body[..] {
                if l & 1 == 0 {
                    self.dedup.insert((and, key), l >> 1);
                    return Ok(l >> 1);
                }
            }
        }
        let n = self.push_gate(and, &body)?;
        self.dedup.insert((and, key), n);
        Ok(n)
    }

    /// A literal for the AND (or OR) of `lits`: the literal itself when alone.
    fn junction(&mut self, and: bool, lits: &[u32]) -> Result<u32, PropnetError> {
        match lits {
            [] => Ok(if and { TRUE << 1 } else { FALSE << 1 }),
            [l] => Ok(*l),
            _ => Ok(self.gate(and, lits)? << 1),
        }
    }

    fn push_gate(&mut self, and: bool, lits: &[u32]) -> Result<u32, PropnetError> {
        if self.gates.len() >= self.max_nodes {
            return Err(PropnetError::TooManyNodes {
                limit: self.max_nodes,
            });
        }
        let start = self.lits.len() as u32;
        self.lits.extend_from_slice(lits);
        let mv = lits.iter().any(|&l| self.is_move[(l >> 1) as usize]);
        self.gates.push(Gate {
            and,
            start,
            end: self.lits.len() as u32,
        });
        self.is_move.push(mv);
        Ok((self.gates.len() - 1) as u32)
    }

    /// Components of the atom graph (body atom -> head), dependencies first.
    fn components(&self) -> Vec<Vec<AtomId>> {
        let n = self.gp.atoms.len();
        let mut deps: Vec<Vec<AtomId>> = vec![Vec::new(); n];
        for r in &self.gp.rules {
            deps[r.head as usize].extend(r.pos.iter().chain(&r.neg));
        }
        crate::gdl::graph::strongly_connected(deps.len(), |v, i| {
            deps[v].get(i).map(|&w| w as usize)
        })
        .into_iter()
        .map(|c| c.into_iter().map(|a| a as AtomId).collect())
        .collect()
    }

    fn build_gates(&mut self) -> Result<(), PropnetError> {
        let mut rules_of: Vec<Vec<usize>> = vec![Vec::new(); self.gp.atoms.len()];
        for (i, r) in self.gp.rules.iter().enumerate() {
            rules_of[r.head as usize].push(i);
        }
        // Per atom: its position in the component being built (u32::MAX: outside).
        let mut comp_pos = vec![u32::MAX; self.gp.atoms.len()];
        for comp in self.components() {
            if comp.len() == 1
                && (self.node_of[comp[0] as usize] != NO_NODE
                    || self.konst[comp[0] as usize].is_some())
            {
                continue; // an input, or a `does` of no role
            }
            for (i, &a) in comp.iter().enumerate() {
                comp_pos[a as usize] = i as u32;
            }
            let result = self.build_component(&comp, &comp_pos, &rules_of);
            for &a in &comp {
                comp_pos[a as usize] = u32::MAX;
            }
            result?;
        }
        Ok(())
    }

    /// Folds or compiles one component of atoms (`comp_pos` marks its members).
    fn build_component(
        &mut self,
        comp: &[AtomId],
        comp_pos: &[u32],
        rules_of: &[Vec<usize>],
    ) -> Result<(), PropnetError> {
        let in_comp = |a: AtomId| comp_pos[a as usize] != u32::MAX;
        let recursive = comp.len() > 1
            || rules_of[comp[0] as usize]
                .iter()
                .any(|&r| self.gp.rules[r].pos.contains(&comp[0]));
        // Simplified rules per atom: literals as (atom in comp | node, negated).
        let mut simplified: Vec<Vec<Vec<(bool, u32, bool)>>> = Vec::new();
        let mut outside_dynamic = false;
        for &a in comp {
            let mut rs = Vec::new();
            let mut always = false;
            for &ri in &rules_of[a as usize] {
                let r = &self.gp.rules[ri];
                let mut lits = Vec::new();
                let mut dead = false;
                for (&x, neg) in r
                    .pos
                    .iter()
                    .map(|x| (x, false))
                    .chain(r.neg.iter().map(|x| (x, true)))
                {
                    if recursive && in_comp(x) {
                        if neg {
                            return Err(PropnetError::Rules(format!(
                                "ground atom {} depends on itself through 'not'",
                                self.atom_text(a)
                            )));
                        }
                        lits.push((true, x, false));
                        continue;
                    }
                    match self.konst[x as usize] {
                        Some(v) => {
                            if v == neg {
                                dead = true;
                                break;
                            }
                        }
                        None => {
                            let node = self.node_of[x as usize];
                            if node == NO_NODE {
                                // Atoms without a rule are false (no node, no constant yet).
                                if !neg {
                                    dead = true;
                                    break;
                                }
                                continue;
                            }
                            outside_dynamic = true;
                            lits.push((false, node, neg));
                        }
                    }
                }
                if dead {
                    continue;
                }
                if lits.is_empty() {
                    always = true;
                }
                rs.push(lits);
            }
            if always {
                rs = vec![Vec::new()];
            }
            simplified.push(rs);
        }
        if !recursive {
            let a = comp[0];
            let rs = &simplified[0];
            if rs.is_empty() {
                self.konst[a as usize] = Some(false);
            } else if rs.len() == 1 && rs[0].is_empty() {
                self.konst[a as usize] = Some(true);
            } else {
                let first = self.gates.len() as u32;
                let node = self.atom_gate(rs)?;
                self.node_of[a as usize] = node;
                self.groups.push((first, self.gates.len() as u32, false));
            }
            return Ok(());
        }
        if !outside_dynamic {
            // A constant component: its least fixpoint, now.
            let mut val = vec![false; comp.len()];
            loop {
                let mut changed = false;
                for (i, rs) in simplified.iter().enumerate() {
                    if val[i] {
                        continue;
                    }
                    let v = rs.iter().any(|lits| {
                        lits.iter()
                            .all(|&(_, x, _)| val[comp_pos[x as usize] as usize])
                    });
                    if v {
                        val[i] = true;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
            for (i, &a) in comp.iter().enumerate() {
                self.konst[a as usize] = Some(val[i]);
            }
            return Ok(());
        }
        // A dynamic recursive component: every atom gets a node first, so the
        // gates can refer to each other; the loop runs over all of them.
        let first = self.gates.len() as u32;
        for &a in comp {
            // Placeholder, filled in below.
            self.node_of[a as usize] = self.push_gate(false, &[])?;
        }
        for (i, &a) in comp.iter().enumerate() {
            let node = self.node_of[a as usize];
            let lits = self.rule_lits(&simplified[i])?;
            let start = self.lits.len() as u32;
            self.lits.extend_from_slice(&lits);
            self.gates[node as usize] = Gate {
                and: false,
                start,
                end: self.lits.len() as u32,
            };
        }
        let end = self.gates.len() as u32;
        // Moves reach every node of the loop if they reach one.
        let mv = (first..end).any(|n| {
            let g = self.gates[n as usize];
            self.lits[g.start as usize..g.end as usize]
                .iter()
                .any(|&l| self.is_move[(l >> 1) as usize])
        });
        for n in first..end {
            self.is_move[n as usize] = mv;
        }
        self.groups.push((first, end, true));
        Ok(())
    }

    /// The OR inputs for an atom's rules: each rule's literal, or an AND node.
    fn rule_lits(&mut self, rs: &[Vec<(bool, u32, bool)>]) -> Result<Vec<u32>, PropnetError> {
        let mut out = Vec::new();
        for lits in rs {
            let enc: Vec<u32> = lits
                .iter()
                .map(|&(in_comp, x, neg)| {
                    let node = if in_comp { self.node_of[x as usize] } else { x };
                    node << 1 | neg as u32
                })
                .collect();
            if enc.len() == 1 {
                out.push(enc[0]);
            } else if enc.is_empty() {
                out.push(TRUE << 1);
            } else {
                out.push(self.gate(true, &enc)? << 1);
            }
        }
        Ok(out)
    }

    /// The node of a non-recursive atom with rules `rs` (their literals are all
    /// nodes outside the atom's component), built by [`Builder::or_of_ands`].
    fn atom_gate(&mut self, rs: &[Vec<(bool, u32, bool)>]) -> Result<u32, PropnetError> {
        let enc: Vec<Vec<u32>> = rs
            .iter()
            .map(|r| r.iter().map(|&(_, x, neg)| x << 1 | neg as u32).collect())
            .collect();
        let lit = self.or_of_ands(enc)?;
        if lit & 1 == 0 {
            Ok(lit >> 1)
        } else {
            self.gate(true, &[lit])
        }
    }

    /// A literal for the OR of the ANDs `rules`, factored greedily: the literal
    /// shared by the most rules is pulled out of them, `OR(AND(a, b1), AND(a, b2))`
    /// = `AND(a, OR(b1, b2))`, recursively, and equal gates are shared. Frame rules
    /// ("a cell keeps its piece unless a move touches it") then cost one OR over
    /// the moves per cell instead of one AND per cell and move.
    fn or_of_ands(&mut self, mut rules: Vec<Vec<u32>>) -> Result<u32, PropnetError> {
        for r in rules.iter_mut() {
            r.sort_unstable();
            r.dedup();
        }
        if rules.iter().any(|r| r.is_empty()) {
            return Ok(TRUE << 1);
        }
        let mut alts = Vec::new();
        while !rules.is_empty() {
            let mut freq: HashMap<u32, usize> = HashMap::new();
            for r in &rules {
                for &l in r {
                    *freq.entry(l).or_default() += 1;
                }
            }
            let best = freq
                .iter()
                .max_by_key(|&(&l, &n)| (n, std::cmp::Reverse(l)))
                .map(|(&l, &n)| (l, n));
            match best {
                Some((l, n)) if n >= 2 => {
                    let (with, without): (Vec<_>, Vec<_>) =
                        rules.into_iter().partition(|r| r.binary_search(&l).is_ok());
                    rules = without;
                    let rests: Vec<Vec<u32>> = with
                        .into_iter()
                        .map(|r| r.into_iter().filter(|&x| x != l).collect())
                        .collect();
                    let inner = self.or_of_ands(rests)?;
                    let alt = if inner == TRUE << 1 {
                        l
                    } else {
                        self.junction(true, &[l, inner])?
                    };
                    alts.push(alt);
                }
                _ => {
                    for r in std::mem::take(&mut rules) {
                        alts.push(self.junction(true, &r)?);
                    }
                }
            }
        }
        self.junction(false, &alts)
    }

    fn atom_text(&self, a: AtomId) -> String {
        crate::gdl::print::term_to_string(
            &self.gp.pool.to_term(self.gp.atoms[a as usize]),
            &self.game.symbols,
        )
    }

    /// The node for atom `a`: its own, or a constant node.
    fn out_node(&self, a: AtomId) -> u32 {
        match self.konst[a as usize] {
            Some(true) => TRUE,
            Some(false) => FALSE,
            None if self.node_of[a as usize] == NO_NODE => FALSE,
            None => self.node_of[a as usize],
        }
    }

    fn finish(mut self) -> Result<Propnet, PropnetError> {
        let roles: Vec<Option<TermId>> = self
            .game
            .roles
            .iter()
            .map(|r| self.gp.pool.find_term(r))
            .collect();
        let role_of = |t: TermId| roles.iter().position(|&r| r == Some(t));
        let nroles = roles.len();
        let mut legal = vec![Vec::new(); nroles];
        let mut goals = vec![Vec::new(); nroles];
        let mut next = vec![FALSE; self.fluent_terms.len()];
        let mut terminal = FALSE;
        let mut init = vec![0u8; self.fluent_terms.len()];
        for a in 0..self.gp.atoms.len() {
            let t = self.gp.atoms[a];
            let f = self.gp.pool.functor(t);
            let args = if self.gp.pool.is_const(t) {
                Vec::new()
            } else {
                self.gp.pool.args(t).to_vec()
            };
            let node = self.out_node(a as AtomId);
            let state_only = |what: &str, s: &Self| {
                if s.is_move[node as usize] {
                    Err(PropnetError::Rules(format!(
                        "{} depends on 'does' ({what})",
                        s.atom_text(a as AtomId)
                    )))
                } else {
                    Ok(())
                }
            };
            match (f, args.len()) {
                (kw::LEGAL, 2) => {
                    if let Some(r) = role_of(args[0]) {
                        state_only("legal", &self)?;
                        let m = self.move_id(args[1]);
                        legal[r].push((node, m));
                    }
                }
                (kw::NEXT, 1) => {
                    let i = self.fluent_of[&args[0]];
                    next[i as usize] = node;
                }
                (kw::TERMINAL, 0) => {
                    state_only("terminal", &self)?;
                    terminal = node;
                }
                (kw::GOAL, 2) => {
                    let r = role_of(args[0]);
                    let v = self
                        .gp
                        .pool
                        .is_const(args[1])
                        .then(|| {
                            self.game
                                .symbols
                                .name(self.gp.pool.functor(args[1]))
                                .parse::<u8>()
                                .ok()
                        })
                        .flatten()
                        .filter(|&v| v <= 100);
                    if let (Some(r), Some(v)) = (r, v) {
                        state_only("goal", &self)?;
                        goals[r].push((node, v));
                    }
                }
                (kw::INIT, 1) => {
                    if node != TRUE && node != FALSE {
                        return Err(PropnetError::Rules(format!(
                            "{} depends on the state",
                            self.atom_text(a as AtomId)
                        )));
                    }
                    init[self.fluent_of[&args[0]] as usize] = (node == TRUE) as u8;
                }
                _ => {}
            }
        }
        for g in goals.iter_mut() {
            g.sort_by_key(|&(_, v)| v);
        }
        let (guard_of, factor) = self.plan_guards(&legal, &next, terminal);
        let LegalSplit {
            list: legal_list,
            groups: legal_groups,
            role_groups,
            rest_of,
        } = self.guard_legal(&legal, &guard_of)?;
        self.factor_readers(&factor, &guard_of, &rest_of)?;
        // What each output needs, backwards through the gates.
        let n = self.gates.len();
        let mut core = vec![false; n];
        let roots: Vec<u32> = legal_list
            .iter()
            .map(|&(n, _)| n)
            .chain(legal_groups.iter().map(|g| g.guard >> 1))
            .chain(next.iter().copied())
            .chain([terminal])
            .collect();
        self.mark(&mut core, &mut roots.clone());
        let mut for_goals = vec![false; n];
        let mut stack: Vec<u32> = goals.iter().flatten().map(|&(n, _)| n).collect();
        self.mark(&mut for_goals, &mut stack);

        let (mut state_prog, mut goal_prog, mut move_prog) = (Vec::new(), Vec::new(), Vec::new());
        for &(s, e, rec) in &self.groups {
            let items: Vec<(u32, Item)> = if rec {
                vec![(s, Item::Loop(s, e))]
            } else {
                (s..e).map(|n| (n, Item::Node(n))).collect()
            };
            for (n, item) in items {
                let (c, g) = if rec {
                    (
                        (s..e).any(|x| core[x as usize]),
                        (s..e).any(|x| for_goals[x as usize]),
                    )
                } else {
                    (core[n as usize], for_goals[n as usize])
                };
                if c && !factor.is_empty() {
                    // Ordered below.
                } else if self.is_move[n as usize] {
                    if c {
                        move_prog.push(item);
                    }
                } else if c {
                    state_prog.push(item);
                } else if g {
                    goal_prog.push(item);
                }
            }
        }
        if !factor.is_empty() {
            for x in self.postorder(&roots) {
                let g = self.gates[x as usize];
                if g.start == g.end && !g.and {
                    continue; // an input
                }
                if self.is_move[x as usize] {
                    move_prog.push(Item::Node(x));
                } else {
                    state_prog.push(Item::Node(x));
                }
            }
        }
        let count = |p: &[Item]| {
            p.iter()
                .map(|i| match *i {
                    Item::Node(_) => 1,
                    Item::Loop(s, e) => (e - s) as usize,
                })
                .sum()
        };
        let nm = self.move_terms.len();
        let mut does_node = vec![FALSE; nroles * nm];
        for a in 0..self.gp.atoms.len() {
            let t = self.gp.atoms[a];
            if self.gp.pool.is_const(t)
                || self.gp.pool.functor(t) != kw::DOES
                || self.gp.pool.args(t).len() != 2
                || self.node_of[a] == NO_NODE
            {
                continue;
            }
            let args = self.gp.pool.args(t);
            if let Some(r) = role_of(args[0]) {
                does_node[r * nm + self.move_of[&args[1]] as usize] = self.node_of[a];
            }
        }
        let mut stats = NetStats {
            ground_atoms: self.gp.atoms.len(),
            join_steps: self.gp.join_steps,
            ground_rules: self.gp.rules.len(),
            fluents: self.fluent_terms.len(),
            moves: nm,
            nodes: self.gates.len(),
            edges: self.lits.len(),
            state_nodes: count(&state_prog),
            move_nodes: count(&move_prog),
            goal_nodes: count(&goal_prog),
            ground_s: 0.0,
            compile_s: 0.0,
        };
        // Incremental mode when no loop feeds the per-state outputs; then every
        // node of the state and move programs is kept up to date by propagation.
        let incremental = !state_prog
            .iter()
            .chain(&move_prog)
            .any(|i| matches!(i, Item::Loop(..)));
        let mut nexts = next.clone();
        let mut pass = vec![(NO_MOVE, 0); nroles];
        if incremental {
            for (r, m, copy) in self.specialize(&mut move_prog, &does_node, &next)? {
                pass[r] = (m, (nexts.len() / next.len().max(1)) as u32);
                nexts.extend(copy);
            }
        }
        let copies = nexts.len().checked_div(next.len()).unwrap_or(1);
        let tracked = if copies > 1 { 1..copies } else { 0..1 };
        let n = self.gates.len();
        stats.nodes = n;
        stats.edges = self.lits.len();
        stats.move_nodes = count(&move_prog);
        let mut next_at: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for (k, &x) in nexts.iter().enumerate() {
            let (c, i) = (k / next.len(), k % next.len());
            // A fluent whose next node is itself never differs.
            if tracked.contains(&c) && x as usize != FLUENT_BASE + i {
                next_at[x as usize].push((c as u32, i as u32));
            }
        }
        let mut next_of_start = vec![0u32; n + 1];
        let mut next_of = Vec::new();
        for (i, v) in next_at.iter().enumerate() {
            next_of.extend_from_slice(v);
            next_of_start[i + 1] = next_of.len() as u32;
        }
        let mut fanout_start = vec![0u32; n + 1];
        let mut fanout = Vec::new();
        if incremental {
            let mut outs: Vec<Vec<u32>> = vec![Vec::new(); n];
            for item in state_prog.iter().chain(&move_prog) {
                if let Item::Node(g) = *item {
                    let gate = self.gates[g as usize];
                    for &l in &self.lits[gate.start as usize..gate.end as usize] {
                        outs[(l >> 1) as usize].push(g << 1 | (l & 1));
                    }
                }
            }
            for (i, o) in outs.iter().enumerate() {
                fanout.extend_from_slice(o);
                fanout_start[i + 1] = fanout.len() as u32;
            }
        }
        let mut by_node: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (g, group) in legal_groups.iter().enumerate() {
            for &(node, _) in &legal_list[group.start as usize..group.end as usize] {
                by_node[node as usize].push(g as u32);
            }
        }
        let mut legal_of_start = vec![0u32; n + 1];
        let mut legal_of = Vec::new();
        let mut flags = vec![0u8; n];
        for (i, es) in by_node.iter().enumerate() {
            legal_of.extend_from_slice(es);
            legal_of_start[i + 1] = legal_of.len() as u32;
            if !es.is_empty() {
                flags[i] |= LEGAL_OUT;
            }
            if fanout_start[i] != fanout_start[i + 1] {
                flags[i] |= HAS_READERS;
            }
            if next_of_start[i] != next_of_start[i + 1] {
                flags[i] |= NEXT_OUT;
            }
        }
        let threshold: Vec<i32> = self
            .gates
            .iter()
            .map(|g| if g.and { (g.end - g.start) as i32 } else { 1 })
            .collect();
        let mut net = Propnet {
            game: self.game,
            pool: self.gp.pool,
            fluent_terms: self.fluent_terms,
            fluent_of: self.fluent_of,
            move_terms: self.move_terms,
            move_of: self.move_of,
            does_node,
            gates: self.gates,
            lits: self.lits,
            state_prog,
            goal_prog,
            move_prog,
            incremental,
            fanout_start,
            fanout,
            threshold,
            flags,
            legal_list,
            legal_groups,
            role_groups,
            legal_of_start,
            legal_of,
            nexts,
            copies,
            tracked,
            pass,
            next_of_start,
            next_of,
            terminal,
            goals,
            init: PropnetState(Box::new([])),
            scratch: Mutex::new(Vec::new()),
            stats,
        };
        net.init = pack(&init);
        Ok(net)
    }

    /// Splits each role's legal outputs by the guards [`Builder::plan_guards`]
    /// chose: the entry of a gate with a guard reads the AND of the gate's other
    /// inputs (its rest); groups keep first-seen order.
    fn guard_legal(
        &mut self,
        legal: &[Vec<(u32, u32)>],
        guard_of: &HashMap<u32, u32>,
    ) -> Result<LegalSplit, PropnetError> {
        let first = self.gates.len() as u32;
        let (mut list, mut groups, mut role_groups) = (Vec::new(), Vec::new(), Vec::new());
        let mut rest_of: HashMap<u32, u32> = HashMap::new();
        for entries in legal {
            let mut by_guard: Vec<(u32, Vec<(u32, u32)>)> = Vec::new();
            for &(n, m) in entries {
                let (guard, node) = match guard_of.get(&n) {
                    Some(&guard) => {
                        let node = match rest_of.get(&n) {
                            Some(&r) => r,
                            None => {
                                let g = self.gates[n as usize];
                                let rest: Vec<u32> = self.lits[g.start as usize..g.end as usize]
                                    .iter()
                                    .copied()
                                    .filter(|&l| l != guard)
                                    .collect();
                                let lit = self.junction(true, &rest)?;
                                let r = if lit & 1 == 0 {
                                    lit >> 1
                                } else {
                                    self.gate(true, &[lit])?
                                };
                                rest_of.insert(n, r);
                                r
                            }
                        };
                        (guard, node)
                    }
                    None => (TRUE << 1, n),
                };
                match by_guard.iter_mut().find(|(g, _)| *g == guard) {
                    Some((_, v)) => v.push((node, m)),
                    None => by_guard.push((guard, vec![(node, m)])),
                }
            }
            let g0 = groups.len() as u32;
            for (guard, v) in by_guard {
                let start = list.len() as u32;
                list.extend(v);
                groups.push(LegalGroup {
                    guard,
                    start,
                    end: list.len() as u32,
                });
            }
            role_groups.push((g0, groups.len() as u32));
        }
        let end = self.gates.len() as u32;
        if end > first {
            self.groups.push((first, end, false));
        }
        Ok(LegalSplit {
            list,
            groups,
            role_groups,
            rest_of,
        })
    }

    /// Specialises the move program to each role's pass move, the move whose
    /// `does` input the most move gates read (a turn-taking game's `noop`: each
    /// cell's frame rule reads "the role does some move other than those
    /// touching this cell", which the complement form in [`Builder::gate`]
    /// makes "not (a move touching it, or noop)"). A copy of the gates that read
    /// the role's `does` inputs, with the pass move true and the role's other
    /// moves false, folded, is appended to `move_prog`; unchanged gates are
    /// shared. A role gets one when its pass move has at least 8 readers and
    /// three times the mean of its other moves. Returns (role, pass move, the
    /// specialised `next` nodes) for each role that gets one.
    #[allow(clippy::type_complexity)]
    fn specialize(
        &mut self,
        move_prog: &mut Vec<Item>,
        does_node: &[u32],
        next: &[u32],
    ) -> Result<Vec<(usize, u32, Vec<u32>)>, PropnetError> {
        let nroles = self.role_does.len();
        let nm = self.move_terms.len();
        let general: Vec<u32> = move_prog
            .iter()
            .filter_map(|i| match *i {
                Item::Node(g) => Some(g),
                Item::Loop(..) => None,
            })
            .collect();
        let mut readers = vec![0usize; self.gates.len()];
        for &g in &general {
            let gate = self.gates[g as usize];
            for &l in &self.lits[gate.start as usize..gate.end as usize] {
                readers[(l >> 1) as usize] += 1;
            }
        }
        let mut specialised = Vec::new();
        for r in 0..nroles {
            let moves: Vec<(u32, u32)> = (0..nm as u32)
                .map(|m| (m, does_node[r * nm + m as usize]))
                .filter(|&(_, n)| n != FALSE)
                .collect();
            let Some(&(pm, pnode)) = moves
                .iter()
                .max_by_key(|&&(m, n)| (readers[n as usize], std::cmp::Reverse(m)))
            else {
                continue;
            };
            let others: usize = moves
                .iter()
                .filter(|&&(m, _)| m != pm)
                .map(|&(_, n)| readers[n as usize])
                .sum();
            let mean = others as f64 / (moves.len() - 1).max(1) as f64;
            if readers[pnode as usize] < 8 || (readers[pnode as usize] as f64) < 3.0 * mean {
                continue;
            }
            // Per node of the general program: its literal in the copy.
            let mut map: HashMap<u32, u32> = HashMap::new();
            for &(_, n) in &moves {
                map.insert(n, if n == pnode { TRUE << 1 } else { FALSE << 1 });
            }
            for &g in &general {
                let gate = self.gates[g as usize];
                let src = &self.lits[gate.start as usize..gate.end as usize];
                if !src.iter().any(|l| map.contains_key(&(l >> 1))) {
                    continue;
                }
                let (mut lits, mut decided) = (Vec::with_capacity(src.len()), None);
                for &l in src {
                    let lit = map.get(&(l >> 1)).map_or(l, |&m| m ^ (l & 1));
                    match constant(lit) {
                        // A false input decides an AND, a true one an OR.
                        Some(v) if v != gate.and => {
                            decided = Some(v);
                            break;
                        }
                        Some(_) => {}
                        None => lits.push(lit),
                    }
                }
                let lit = match (decided, &lits[..]) {
                    (Some(v), _) => {
                        if v {
                            TRUE << 1
                        } else {
                            FALSE << 1
                        }
                    }
                    (None, []) => {
                        if gate.and {
                            TRUE << 1
                        } else {
                            FALSE << 1
                        }
                    }
                    (None, [l]) => *l,
                    (None, _) => {
                        let n = self.push_gate(gate.and, &lits)?;
                        move_prog.push(Item::Node(n));
                        n << 1
                    }
                };
                map.insert(g, lit);
            }
            let mut out = Vec::with_capacity(next.len());
            for &x in next {
                let lit = map.get(&x).copied().unwrap_or(x << 1);
                let node = match (constant(lit), lit & 1) {
                    (Some(v), _) => {
                        if v {
                            TRUE
                        } else {
                            FALSE
                        }
                    }
                    (None, 0) => lit >> 1,
                    (None, _) => {
                        let n = self.push_gate(true, &[lit])?;
                        move_prog.push(Item::Node(n));
                        n
                    }
                };
                out.push(node);
            }
            specialised.push((r, pm, out));
        }
        Ok(specialised)
    }

    /// Chooses the legal gates to split by a guard (see [`LegalGroup`]) and
    /// the gates that read them to factor. Per role, a legal AND gate's guard is
    /// the input literal that the most of the role's legal AND gates share
    /// (when at least two do). A gate that reads legal gates (`has_legal_move`,
    /// read by `terminal`) keeps every one of them alive, so a split gate must
    /// have no reader but ORs over legal gates of one guard, which become
    /// `AND(guard, OR(rests))` ([`Builder::factor_readers`]); else it stays
    /// whole. Returns the guard of each gate to split and the readers to factor
    /// (none when a recursive component feeds the per-state outputs: the
    /// evaluation there follows the build order, which factoring breaks).
    fn plan_guards(
        &self,
        legal: &[Vec<(u32, u32)>],
        next: &[u32],
        terminal: u32,
    ) -> (HashMap<u32, u32>, Vec<u32>) {
        let n = self.gates.len();
        let mut needed = vec![false; n];
        let mut stack: Vec<u32> = legal
            .iter()
            .flatten()
            .map(|&(n, _)| n)
            .chain(next.iter().copied())
            .chain([terminal])
            .collect();
        self.mark(&mut needed, &mut stack);
        let loops = self
            .groups
            .iter()
            .any(|&(s, e, rec)| rec && (s..e).any(|x| needed[x as usize]));
        let lits = |g: u32| {
            let gate = self.gates[g as usize];
            &self.lits[gate.start as usize..gate.end as usize]
        };
        let and_inputs = |g: u32| {
            let gate = self.gates[g as usize];
            (gate.and && gate.end - gate.start >= 2).then(|| lits(g))
        };
        let mut guard_of: HashMap<u32, u32> = HashMap::new();
        for entries in legal {
            let mut freq: HashMap<u32, usize> = HashMap::new();
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
        let mut readers: HashMap<u32, Vec<u32>> = HashMap::new();
        for r in (0..n as u32).filter(|&r| needed[r as usize]) {
            for &l in lits(r) {
                if guard_of.contains_key(&(l >> 1)) {
                    readers.entry(l >> 1).or_default().push(r);
                }
            }
        }
        // Dropping a split can make other readers unfactorable: to a fixpoint.
        loop {
            let factorable = |r: u32| {
                let ins = lits(r);
                let guard = ins.first().and_then(|l| guard_of.get(&(l >> 1)));
                !self.gates[r as usize].and
                    && guard.is_some()
                    && ins
                        .iter()
                        .all(|&l| l & 1 == 0 && guard_of.get(&(l >> 1)) == guard)
            };
            let drop: Vec<u32> = guard_of
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
        let mut factor: Vec<u32> = guard_of
            .keys()
            .filter_map(|g| readers.get(g))
            .flatten()
            .copied()
            .collect();
        factor.sort_unstable();
        factor.dedup();
        (guard_of, factor)
    }

    /// Rewrites each gate of `factor`, an OR over split legal gates of one
    /// guard, as `AND(guard, OR(their rests))`, in place: its value and its
    /// readers stay, the legal gates lose their reader. The gate then reads a
    /// newer node, so the programs must be ordered anew ([`Builder::postorder`]).
    fn factor_readers(
        &mut self,
        factor: &[u32],
        guard_of: &HashMap<u32, u32>,
        rest_of: &HashMap<u32, u32>,
    ) -> Result<(), PropnetError> {
        let first = self.gates.len() as u32;
        for &r in factor {
            let g = self.gates[r as usize];
            let ins = self.lits[g.start as usize..g.end as usize].to_vec();
            let guard = guard_of[&(ins[0] >> 1)];
            let rests: Vec<u32> = ins.iter().map(|&l| rest_of[&(l >> 1)] << 1).collect();
            let inner = self.junction(false, &rests)?;
            let start = self.lits.len() as u32;
            self.lits.extend([guard, inner]);
            self.gates[r as usize] = Gate {
                and: true,
                start,
                end: self.lits.len() as u32,
            };
        }
        let end = self.gates.len() as u32;
        if end > first {
            self.groups.push((first, end, false));
        }
        Ok(())
    }

    /// The nodes `roots` need, each after its inputs (no recursive component
    /// may be among them).
    fn postorder(&self, roots: &[u32]) -> Vec<u32> {
        let mut state = vec![0u8; self.gates.len()];
        let mut order = Vec::new();
        let mut stack: Vec<(u32, bool)> = roots.iter().map(|&r| (r, false)).collect();
        while let Some((x, expanded)) = stack.pop() {
            if expanded {
                state[x as usize] = 2;
                order.push(x);
                continue;
            }
            if state[x as usize] != 0 {
                continue;
            }
            state[x as usize] = 1;
            stack.push((x, true));
            let g = self.gates[x as usize];
            for &l in &self.lits[g.start as usize..g.end as usize] {
                if state[(l >> 1) as usize] == 0 {
                    stack.push((l >> 1, false));
                }
            }
        }
        order
    }

    fn mark(&self, seen: &mut [bool], stack: &mut Vec<u32>) {
        while let Some(n) = stack.pop() {
            if seen[n as usize] {
                continue;
            }
            seen[n as usize] = true;
            let g = self.gates[n as usize];
            for &l in &self.lits[g.start as usize..g.end as usize] {
                stack.push(l >> 1);
            }
        }
    }
}

/// The value of a literal of a constant node, or `None`.
fn constant(lit: u32) -> Option<bool> {
    match lit >> 1 {
        FALSE | TRUE => Some((lit >> 1 == TRUE) != (lit & 1 == 1)),
        _ => None,
    }
}

/// Packs one byte per fluent into a state.
fn pack(bits: &[u8]) -> PropnetState {
    let mut words = vec![0u64; bits.len().div_ceil(64)];
    for (i, &b) in bits.iter().enumerate() {
        words[i / 64] |= (b as u64) << (i % 64);
    }
    PropnetState(words.into_boxed_slice())
}
