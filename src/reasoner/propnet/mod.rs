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
//! nothing: it runs in a per-thread scratch (each thread keeps its own, taken
//! from a shared pool once), and the network
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
//!
//! The files: this one holds the public types and the [`StateMachine`]
//! implementation; `lit.rs` the node and literal newtypes, `rows.rs` the
//! compressed rows every per-node list is kept in; `build/` compiles the
//! ground program in steps (gates, outputs, guards, specialisation);
//! `eval.rs` holds the gates and evaluates programs over them, `propagate.rs`
//! keeps a scratch up to date by propagation, `outputs.rs` reads the legal,
//! next and goal outputs off a scratch, `scratch.rs` is the per-thread memory
//! and `playout.rs` the pool of scratches, the steps and the playouts.

mod build;
mod eval;
mod lit;
mod outputs;
mod playout;
mod propagate;
mod rows;
mod scratch;
mod wins;

use hashbrown::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rand::Rng;

use super::ground::{ground, GroundError, GroundProgram, Limits};
use super::terms::{TermId, TermPool};
use super::{Chooser, Playout, PlayoutLimits, RoleIdx, StateMachine, Steering};
use crate::gdl::{Game, Term};
use eval::{Gates, Programs};
use outputs::Outputs;
use propagate::Propagation;
use scratch::Scratch;

/// A state: one bit per fluent of the network.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct PropnetState(Box<[u64]>);

impl PropnetState {
    fn get(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }

    /// The indices of the fluents that hold, ascending.
    pub fn indices(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let i = bits.trailing_zeros();
                    bits &= bits - 1;
                    (w * 64) as u32 + i
                })
            })
        })
    }

    /// Packs one byte per fluent into a state.
    fn pack(bits: &[u8]) -> PropnetState {
        let mut words = vec![0u64; bits.len().div_ceil(64)];
        for (i, &b) in bits.iter().enumerate() {
            words[i / 64] |= (b as u64) << (i % 64);
        }
        PropnetState(words.into_boxed_slice())
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

/// The terms of the fluents and moves, by index, and back.
struct Terms {
    /// Fluent `i` is node [`lit::Node::fluent`]`(i)`; its term (without `true`).
    fluents: Vec<TermId>,
    fluent_of: HashMap<TermId, u32>,
    moves: Vec<TermId>,
    move_of: HashMap<TermId, u32>,
}

/// A network id not given before (see `Propnet::id`).
fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The compiled network.
pub struct Propnet {
    game: Game,
    pool: TermPool,
    terms: Terms,
    gates: Gates,
    progs: Programs,
    /// Propagate changes instead of evaluating whole programs; possible when no
    /// recursive component feeds `legal`, `terminal` or `next`.
    incremental: bool,
    /// Incremental mode: what a changed node updates.
    prop: Propagation,
    out: Outputs,
    /// Per role, the moves the rules make a win wherever they are legal
    /// (see `wins.rs`), as legal-table entries.
    sure_wins: wins::SureWins,
    init: PropnetState,
    /// Scratches not held by a thread (see `playout.rs`).
    /// Boxed: a scratch is a few hundred bytes of vector headers, and it
    /// moves in and out of the thread's cache at every call.
    #[allow(clippy::vec_box)]
    scratch: Arc<Mutex<Vec<Box<Scratch>>>>,
    /// Tells this network's scratches from other networks' in a thread's
    /// own cache; never reused.
    id: u64,
    stats: NetStats,
}

/// Compile limits: the grounding's, and the number of network nodes.
#[derive(Clone, Copy, Debug)]
pub struct CompileLimits {
    pub ground: Limits,
    pub max_nodes: usize,
}

/// The grounding a default compile may hold. Building the network takes
/// longer than grounding, and both grow with what grounding holds: this
/// bound lets the largest corpus games that fit (madness, 3.1 million rule
/// instances in 290 MiB) compile within an engine's build budget, and gives
/// up early on a game that will not fit (slaughter holds gigabytes and
/// counting); the figures are in docs/benchmarks.md, "Grounding bounded by
/// memory".
pub const COMPILE_MEMORY: usize = 384 << 20;

impl Default for CompileLimits {
    fn default() -> Self {
        let ground = Limits::default();
        CompileLimits {
            ground: Limits {
                max_memory: ground.max_memory.min(COMPILE_MEMORY),
                max_join_steps: 100_000_000,
                max_time: std::time::Duration::from_secs(8),
            },
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
        let mut net = build::compile(game, gp, limits.max_nodes)?;
        net.stats.ground_s = ground_s;
        net.stats.compile_s = t0.elapsed().as_secs_f64();
        Ok(net)
    }

    /// Compiles `game` from `gp`, its ground program (grounded already, with
    /// limits no larger than [`CompileLimits::default`]'s, so the same
    /// program): what the solver does with the grounding its preparation
    /// kept, instead of grounding the same rules again.
    pub fn from_ground(game: Game, gp: GroundProgram) -> Result<Propnet, PropnetError> {
        let limits = CompileLimits::default();
        if gp.bytes() > limits.ground.max_memory || gp.join_steps > limits.ground.max_join_steps {
            // Past what the compile grounds: it fails as a fresh one would.
            return Self::with_limits(game, &limits);
        }
        let t0 = Instant::now();
        let mut net = build::compile(game, gp, limits.max_nodes)?;
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
            .is_some_and(|id| self.terms.fluent_of.contains_key(&id))
    }

    /// The network's fluents as terms (without `true`), by index.
    pub fn fluent_terms(&self) -> Vec<Term> {
        self.terms
            .fluents
            .iter()
            .map(|&t| self.pool.to_term(t))
            .collect()
    }

    /// The network's moves as terms, by [`PropnetMove`].
    pub fn move_terms(&self) -> Vec<Term> {
        self.terms
            .moves
            .iter()
            .map(|&t| self.pool.to_term(t))
            .collect()
    }

    /// The state in which the fluents of these indices (into
    /// [`Propnet::fluent_terms`]) hold.
    pub fn state_of_indices(&self, fluents: impl IntoIterator<Item = u32>) -> PropnetState {
        let mut words = vec![0u64; self.words()];
        for i in fluents {
            words[i as usize / 64] |= 1 << (i % 64);
        }
        PropnetState(words.into_boxed_slice())
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
        self.playout_recorded(state, rng, PlayoutLimits::steps(max_steps), goals, None)
    }

    /// [`Propnet::playout_from`] within `limits`, also appending each joint
    /// move played to `record` when given (for tests: the moves can be
    /// replayed and checked).
    pub fn playout_recorded<R: Rng>(
        &self,
        state: &PropnetState,
        rng: &mut R,
        limits: PlayoutLimits,
        goals: &mut Vec<Option<u8>>,
        record: Option<&mut Vec<u32>>,
    ) -> Playout {
        let steer = Steering {
            record,
            choose: None,
        };
        self.with_scratch(|s| self.playout_in(s, state, rng, limits, goals, steer))
    }

    /// Words of a state's bitset.
    #[inline]
    fn words(&self) -> usize {
        self.init.0.len()
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
            self.out.legal.legal_into(&s.vals, role, out);
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
            s.vals[self.out.terminal.idx()] == 1
        })
    }

    fn goal_values(&self, state: &PropnetState, role: RoleIdx) -> Vec<u8> {
        self.with_scratch(|s| {
            self.load(s, state);
            self.goals_into(s);
            let mut v: Vec<u8> = self.out.goals[role]
                .iter()
                .filter(|(n, _)| s.vals[n.idx()] == 1)
                .map(|&(_, v)| v)
                .collect();
            v.dedup();
            v
        })
    }

    fn fluents(&self, state: &PropnetState) -> Vec<Term> {
        (0..self.terms.fluents.len())
            .filter(|&i| state.get(i))
            .map(|i| self.pool.to_term(self.terms.fluents[i]))
            .collect()
    }

    fn numbered_fluents(&self) -> usize {
        self.terms.fluents.len()
    }

    fn fluent_term(&self, i: usize) -> Option<Term> {
        self.terms.fluents.get(i).map(|&t| self.pool.to_term(t))
    }

    fn fluent_numbers(&self, state: &PropnetState, out: &mut Vec<usize>) -> bool {
        out.clear();
        out.extend(state.indices().map(|i| i as usize));
        true
    }

    fn state_from_fluents(&self, fluents: &[Term]) -> Option<PropnetState> {
        let mut bits = vec![0u8; self.terms.fluents.len()];
        for t in fluents {
            let id = self.pool.find_term(t)?;
            bits[*self.terms.fluent_of.get(&id)? as usize] = 1;
        }
        Some(PropnetState::pack(&bits))
    }

    fn includes(&self, state: &PropnetState, part: &PropnetState) -> bool {
        state.0.iter().zip(part.0.iter()).all(|(s, p)| p & !s == 0)
    }

    fn move_term(&self, m: &u32) -> Term {
        self.pool.to_term(self.terms.moves[*m as usize])
    }

    fn parse_move(&self, term: &Term) -> Option<u32> {
        let t = self.pool.find_term(term)?;
        self.terms.move_of.get(&t).copied()
    }

    /// The moves whose `does` alone makes a fluent true that alone ends
    /// the game with goal 100 for the role (see `wins.rs`), ascending.
    fn sure_wins(&self, role: RoleIdx) -> Vec<PropnetMove> {
        self.sure_wins.moves[role].clone()
    }

    fn is_sure_win(&self, role: RoleIdx, m: &PropnetMove) -> bool {
        self.sure_wins.moves[role].binary_search(m).is_ok()
    }

    fn playout<R: Rng>(
        &self,
        state: &PropnetState,
        rng: &mut R,
        limits: PlayoutLimits,
        goals: &mut Vec<Option<u8>>,
    ) -> Playout {
        self.playout_recorded(state, rng, limits, goals, None)
    }

    fn playout_recorded<R: Rng>(
        &self,
        state: &PropnetState,
        rng: &mut R,
        limits: PlayoutLimits,
        goals: &mut Vec<Option<u8>>,
        record: &mut Vec<PropnetMove>,
    ) -> Playout {
        Propnet::playout_recorded(self, state, rng, limits, goals, Some(record))
    }

    fn playout_steered<R: Rng>(
        &self,
        state: &PropnetState,
        rng: &mut R,
        limits: PlayoutLimits,
        goals: &mut Vec<Option<u8>>,
        record: &mut Vec<PropnetMove>,
        choose: &mut Chooser<'_, PropnetMove, R>,
    ) -> Playout {
        let steer = Steering {
            record: Some(record),
            choose: Some(choose),
        };
        self.with_scratch(|s| self.playout_in(s, state, rng, limits, goals, steer))
    }
}
