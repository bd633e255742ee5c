//! Game engines behind one trait, [`StateMachine`]: initial state, legal moves,
//! next state, terminal test and goals. Search and the player only ever talk to a
//! `StateMachine`, so they never know which engine runs the rules.
//!
//! - [`Prover`]: the reference engine, evaluating the non-ground rules either
//!   bottom-up (stratified, every relation a question depends on) or
//!   goal-directed (only the calls a question makes, tabled per state),
//!   whichever does less work on the game. Simple enough to trust; the oracle
//!   in tests.
//! - [`Propnet`]: the compiled engine, a propositional network over the ground
//!   rules ([`ground`]); many times faster, checked against the prover in tests.

pub mod anytime;
pub mod engine;
pub mod ground;
pub mod hybrid;
mod pattern;
pub mod prepare;
pub mod propnet;
pub mod prover;
pub mod terms;
mod walk;

use std::fmt::Debug;
use std::hash::Hash;

use crate::gdl::{Game, Term};

pub use engine::{AnyMachine, Engine, EngineError, MachineVisitor};
pub use hybrid::Hybrid;
pub use propnet::{Propnet, PropnetError};
pub use prover::{Prover, ProverError};

/// How a random playout ([`StateMachine::playout`]) ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Playout {
    /// Joint moves played.
    pub steps: usize,
    /// Whether it ended in a terminal state (else: step cap, no legal move, or
    /// the deadline).
    pub terminal: bool,
    /// The deadline passed before it ended: a biased sample, to be dropped.
    pub cut: bool,
}

/// Where a playout stops short of a terminal state: after `max_steps` joint
/// moves, or at `deadline` (see [`StateMachine::playout`]).
#[derive(Clone, Copy, Debug)]
pub struct PlayoutLimits {
    pub max_steps: usize,
    pub deadline: Option<std::time::Instant>,
    /// Each role takes a sure win where it has one legal: a move the rules
    /// make a win wherever it is legal (the compiled network reads them off
    /// its gates; engines without that analysis play on at random).
    pub sure_wins: bool,
}

impl PlayoutLimits {
    /// At most `max_steps` joint moves, with no deadline.
    pub fn steps(max_steps: usize) -> PlayoutLimits {
        PlayoutLimits {
            max_steps,
            deadline: None,
            sure_wins: false,
        }
    }
}

/// Checks a deadline before each step of a loop without reading the clock at
/// every step: the steps between two reads double while reads come less than
/// 50 µs apart (a fast engine, for which reading the clock every step would
/// cost a noticeable share of its playouts) and halve when they come more than
/// 200 µs apart (a slow one is read before every step). A loop so paced ends at most one step and about
/// half a millisecond after the deadline.
#[derive(Clone, Copy, Debug)]
pub struct Pacer {
    deadline: Option<std::time::Instant>,
    every: u32,
    left: u32,
    last: Option<std::time::Instant>,
}

impl Pacer {
    const FAST: std::time::Duration = std::time::Duration::from_micros(50);
    const SLOW: std::time::Duration = std::time::Duration::from_micros(200);
    const MAX_EVERY: u32 = 64;

    pub fn new(deadline: Option<std::time::Instant>) -> Pacer {
        Pacer {
            deadline,
            every: 1,
            left: 0,
            last: None,
        }
    }

    /// Whether the deadline has passed (never, without one); called before
    /// each step.
    #[inline]
    pub fn passed(&mut self) -> bool {
        let Some(deadline) = self.deadline else {
            return false;
        };
        if self.left > 0 {
            self.left -= 1;
            return false;
        }
        let now = std::time::Instant::now();
        if let Some(last) = self.last {
            let dt = now - last;
            if dt < Self::FAST && self.every < Self::MAX_EVERY {
                self.every *= 2;
            } else if dt > Self::SLOW && self.every > 1 {
                self.every /= 2;
            }
        }
        self.last = Some(now);
        self.left = self.every - 1;
        now >= deadline
    }
}

/// A role, by its index in the game's `role` facts.
pub type RoleIdx = usize;

/// The rules of a game, run by some engine. States and moves are the engine's
/// own compact values; [`StateMachine::fluents`], [`StateMachine::move_term`] and
/// [`StateMachine::parse_move`] translate them to and from the game's terms.
pub trait StateMachine: Send + Sync {
    type State: Clone + Eq + Hash + Debug + Send + Sync;
    type Move: Clone + Eq + Hash + Debug + Send + Sync;

    /// Whether [`StateMachine::playout`] is a dedicated loop worth calling instead
    /// of stepping through the trait.
    const FAST_PLAYOUT: bool = false;

    /// The game these rules come from (roles, symbols).
    fn game(&self) -> &Game;
    fn num_roles(&self) -> usize {
        self.game().roles.len()
    }
    fn initial_state(&self) -> Self::State;
    /// Appends the legal moves of `role` in `state` to `out` (cleared first).
    fn legal_moves(&self, state: &Self::State, role: RoleIdx, out: &mut Vec<Self::Move>);
    /// Whether `m` is legal for `role` in `state`: what a replay asks of each
    /// move (an engine that can ask one move answers without listing all).
    fn is_legal(&self, state: &Self::State, role: RoleIdx, m: &Self::Move) -> bool {
        let mut legal = Vec::new();
        self.legal_moves(state, role, &mut legal);
        legal.contains(m)
    }
    /// The state after `joint` (one move per role, in role order).
    fn next_state(&self, state: &Self::State, joint: &[Self::Move]) -> Self::State;
    fn is_terminal(&self, state: &Self::State) -> bool;
    /// Every goal value `role` has in `state`, ascending.
    fn goal_values(&self, state: &Self::State, role: RoleIdx) -> Vec<u8>;
    /// The goal of `role`: `None` when the game gives it no value or several.
    fn goal(&self, state: &Self::State, role: RoleIdx) -> Option<u8> {
        match self.goal_values(state, role).as_slice() {
            [v] => Some(*v),
            _ => None,
        }
    }
    /// The fluents that hold in `state`, as ground terms (without `true`).
    fn fluents(&self, state: &Self::State) -> Vec<Term>;
    /// How many fluents the engine numbers (0 when it does not, its states
    /// being sets of terms): fluent `i`'s term is
    /// [`StateMachine::fluent_term`]`(i)`.
    fn numbered_fluents(&self) -> usize {
        0
    }
    /// The term of numbered fluent `i`.
    fn fluent_term(&self, _i: usize) -> Option<Term> {
        None
    }
    /// The numbers of the fluents that hold in `state`, into `out` (cleared
    /// first): [`StateMachine::fluents`] without building terms, for an
    /// engine that numbers its fluents; false (and `out` empty) for one that
    /// does not.
    fn fluent_numbers(&self, _state: &Self::State, out: &mut Vec<usize>) -> bool {
        out.clear();
        false
    }
    /// The state in which exactly `fluents` hold, reachable or not (feature
    /// learning asks what a move does in a state with a fluent taken out);
    /// `None` when a fluent is one the engine does not know.
    fn state_from_fluents(&self, fluents: &[Term]) -> Option<Self::State>;
    /// Whether every fluent of `part` holds in `state` (`part` made by
    /// [`StateMachine::state_from_fluents`]).
    fn includes(&self, state: &Self::State, part: &Self::State) -> bool;
    /// A move as the game's ground term.
    fn move_term(&self, m: &Self::Move) -> Term;
    /// The engine's move for a ground term, if the engine knows it (it need not be
    /// legal; check with [`StateMachine::legal_moves`]).
    fn parse_move(&self, term: &Term) -> Option<Self::Move>;

    /// Plays uniformly random joint moves from `state` until a terminal state, a
    /// role without a legal move, or one of `limits` (the deadline is checked
    /// before every step through a [`Pacer`]: one step late at most, and about
    /// half a millisecond; the playout is then `cut`);
    /// `goals` gets each role's goal in the last state. Engines override it with
    /// a faster loop.
    fn playout<R: rand::Rng>(
        &self,
        state: &Self::State,
        rng: &mut R,
        limits: PlayoutLimits,
        goals: &mut Vec<Option<u8>>,
    ) -> Playout {
        random_playout(self, state, rng, limits, goals, Steering::default())
    }

    /// [`StateMachine::playout`] that also appends every joint move played to
    /// `record`, role after role (a search learning from its playouts: RAVE,
    /// MAST). Engines with a faster loop override it too.
    fn playout_recorded<R: rand::Rng>(
        &self,
        state: &Self::State,
        rng: &mut R,
        limits: PlayoutLimits,
        goals: &mut Vec<Option<u8>>,
        record: &mut Vec<Self::Move>,
    ) -> Playout {
        let steer = Steering {
            record: Some(record),
            choose: None,
        };
        random_playout(self, state, rng, limits, goals, steer)
    }

    /// [`StateMachine::playout_recorded`] with each role's move chosen by
    /// `choose` (an index into the role's legal moves, which are never empty)
    /// instead of uniformly at random: a policy learned during the search
    /// (MAST) played on the engine's own loop, where stepping through the
    /// trait would reload the state at every call.
    fn playout_steered<R: rand::Rng>(
        &self,
        state: &Self::State,
        rng: &mut R,
        limits: PlayoutLimits,
        goals: &mut Vec<Option<u8>>,
        record: &mut Vec<Self::Move>,
        choose: &mut Chooser<'_, Self::Move, R>,
    ) -> Playout {
        let steer = Steering {
            record: Some(record),
            choose: Some(choose),
        };
        random_playout(self, state, rng, limits, goals, steer)
    }

    /// Role `role`'s sure wins: moves the rules make a win wherever they
    /// are legal, which playouts with [`PlayoutLimits::sure_wins`] take.
    /// Only the compiled network reads them off its rules; other engines
    /// name none.
    fn sure_wins(&self, _role: RoleIdx) -> Vec<Self::Move> {
        Vec::new()
    }

    /// Whether `m` is one of [`StateMachine::sure_wins`] of `role`.
    fn is_sure_win(&self, _role: RoleIdx, _m: &Self::Move) -> bool {
        false
    }

    /// Convenience: the legal moves as a new vector.
    fn legal(&self, state: &Self::State, role: RoleIdx) -> Vec<Self::Move> {
        let mut out = Vec::new();
        self.legal_moves(state, role, &mut out);
        out
    }
}

/// A playout's choice of one role's move: an index into its legal moves
/// (never empty). See [`StateMachine::playout_steered`].
pub type Chooser<'a, Mv, R> = dyn FnMut(RoleIdx, &[Mv], &mut R) -> usize + 'a;

/// What a playout does beside drawing uniformly random moves: append each
/// joint move played to `record`, and draw each role's move with `choose`.
pub(crate) struct Steering<'a, 'c, Mv, R> {
    pub record: Option<&'a mut Vec<Mv>>,
    pub choose: Option<&'a mut Chooser<'c, Mv, R>>,
}

impl<Mv, R> Default for Steering<'_, '_, Mv, R> {
    fn default() -> Self {
        Steering {
            record: None,
            choose: None,
        }
    }
}

/// The generic loop of [`StateMachine::playout`],
/// [`StateMachine::playout_recorded`] and [`StateMachine::playout_steered`].
fn random_playout<M: StateMachine + ?Sized, R: rand::Rng>(
    m: &M,
    state: &M::State,
    rng: &mut R,
    limits: PlayoutLimits,
    goals: &mut Vec<Option<u8>>,
    steer: Steering<'_, '_, M::Move, R>,
) -> Playout {
    let Steering {
        mut record,
        mut choose,
    } = steer;
    let mut state = state.clone();
    let mut steps = 0;
    let mut buf = Vec::new();
    let mut joint = Vec::new();
    let mut cut = false;
    let mut pacer = Pacer::new(limits.deadline);
    let terminal = loop {
        if m.is_terminal(&state) {
            break true;
        }
        if steps >= limits.max_steps {
            break false;
        }
        if pacer.passed() {
            cut = true;
            break false;
        }
        joint.clear();
        for r in 0..m.num_roles() {
            m.legal_moves(&state, r, &mut buf);
            if buf.is_empty() {
                break;
            }
            let i = match choose.as_deref_mut() {
                Some(choose) => choose(r, &buf, rng),
                None => rng.gen_range(0..buf.len()),
            };
            joint.push(buf[i].clone());
        }
        if joint.len() < m.num_roles() {
            break false;
        }
        if let Some(rec) = record.as_deref_mut() {
            rec.extend_from_slice(&joint);
        }
        state = m.next_state(&state, &joint);
        steps += 1;
    };
    goals.clear();
    goals.extend((0..m.num_roles()).map(|r| m.goal(&state, r)));
    Playout {
        steps,
        terminal,
        cut,
    }
}

#[cfg(test)]
mod tests {
    use super::Pacer;
    use std::time::{Duration, Instant};

    #[test]
    fn a_pacer_sees_a_passed_deadline_at_once_and_no_deadline_never() {
        let mut p = Pacer::new(Some(Instant::now()));
        assert!(p.passed());
        let mut p = Pacer::new(None);
        assert!((0..1000).all(|_| !p.passed()));
        // A deadline that passes while a loop runs is seen, and never before.
        let deadline = Instant::now() + Duration::from_millis(2);
        let mut p = Pacer::new(Some(deadline));
        while !p.passed() {}
        assert!(Instant::now() >= deadline);
    }
}
