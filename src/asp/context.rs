//! One solve's shared context: the rules prepared once, the prover that
//! replays every plan built once, the engine the searches run decided and
//! built once, the options, the stop flag and the shared lower bound. The
//! coordinator, the fallback verifier and every worker hold the same
//! [`SolveContext`] (an `Arc`) instead of their own copies of these, so that
//! no part of a solve prepares, grounds or builds the same thing again.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{invariants, Mode, Prepared, Program, SolveError, SolveOptions, INVARIANT_BUDGET};
use crate::gdl::split::Unique;
use crate::gdl::{Game, Sym};
use crate::reasoner::ground::GroundProgram;
use crate::reasoner::{AnyMachine, Engine, Prover};

/// [`SolveContext::goal_ceiling`] before any bound is known.
pub const NO_CEILING: u8 = u8::MAX;

/// What every part of one solve shares.
pub struct SolveContext {
    /// When the solve started.
    pub start: Instant,
    /// The rules the workers run: the game as written or an exact rewrite
    /// ([`super::prepare`]).
    pub game: Game,
    /// The prover every plan is replayed on before it counts: on `game`, or
    /// on the rules as written for a game split by invariants (built
    /// beside the search, see [`SolveContext::prover`]).
    verifier: Verifier,
    /// The clock fluent of the prover's game, left out when plans are
    /// shortened.
    pub clock: Option<Sym>,
    /// The engine the rule-engine searches run, decided once for the solve:
    /// the prover when nothing else runs the rules, else `auto`'s choice.
    pub engine: Engine,
    /// Why `game` does not ground, when it does not (clingo would ground it
    /// for as long as it is let).
    pub too_big: Option<String>,
    /// The unique-value invariants `game` was split by, if it was.
    pub unique: Vec<Unique>,
    pub opts: SolveOptions,
    /// Set when the answer is decided: every worker stops.
    pub stop: Arc<AtomicBool>,
    /// The largest number of moves proven to hold no winning plan, by any
    /// worker (see [`super::solve::ClingoWorker::refuted`]).
    pub refuted: Arc<AtomicUsize>,
    /// The best goal any play can reach, when the bounds prove one below
    /// 100 ([`NO_CEILING`] until then): a plan that reaches it is the best.
    pub goal_ceiling: AtomicU8,
    /// The searches' engine on `game`, built by the first worker that asks.
    machine: OnceLock<Result<(AnyMachine, String), String>>,
    /// Opened by the breadth-first search after its first states: the
    /// clingo workers' processes start only then (see [`HeadStart`]).
    pub head_start: HeadStart,
    /// Set by the breadth-first search when its pattern databases carry the
    /// shared bound [`LEAD`] moves or more past where the others had it: in
    /// auto the coordinator then sends every other worker further back
    /// ([`crate::priority::FAR_BEHIND`]), so that the one search that proves
    /// deep sliding puzzles has a core (fifteen57: a timeout at 60 s with a
    /// quarter of one).
    pub lead: AtomicBool,
    /// The threads of this process, besides the worker processes, that step
    /// back when the breadth-first search leads (the depth-first search).
    pub followers: Mutex<Vec<i32>>,
}

/// How far past the shared bound the breadth-first search must carry it at
/// once to lead ([`SolveContext::lead`]): the others would need that many
/// more horizons to catch up.
pub const LEAD: usize = 4;

impl SolveContext {
    /// The context of a solve of `prepared` with `opts` that started at
    /// `start` (before the preparation), and `game`'s ground
    /// program when the preparation ground it (handed to the workers that
    /// read it, not kept here: it is dropped once they are done with it).
    pub fn new(
        mut prepared: Prepared,
        opts: &SolveOptions,
        start: Instant,
    ) -> Result<(SolveContext, Option<Arc<GroundProgram>>), SolveError> {
        let (verifier, clock) = match (prepared.prover.take(), prepared.verify_on.take()) {
            (Some(p), _) => {
                let clock = super::bounds::clock_fluent(crate::reasoner::StateMachine::game(&p));
                (Verifier::ready(p), clock)
            }
            (None, Some(written)) => {
                let clock = super::bounds::clock_fluent(&written);
                (Verifier::building(written, prepared.game.clone()), clock)
            }
            (None, None) => {
                let p = Prover::try_new(prepared.game.clone())?;
                let clock = super::bounds::clock_fluent(crate::reasoner::StateMachine::game(&p));
                (Verifier::ready(p), clock)
            }
        };
        let engine = Engine::for_prepared(&prepared);
        let ground = prepared.ground.take().map(Arc::new);
        let context = SolveContext {
            start,
            game: prepared.game,
            verifier,
            clock,
            engine,
            too_big: prepared.too_big,
            unique: prepared.unique,
            opts: opts.clone(),
            stop: Arc::new(AtomicBool::new(false)),
            refuted: Arc::new(AtomicUsize::new(opts.refuted)),
            goal_ceiling: AtomicU8::new(NO_CEILING),
            machine: OnceLock::new(),
            head_start: HeadStart::default(),
            lead: AtomicBool::new(false),
            followers: Mutex::new(Vec::new()),
        };
        Ok((context, ground))
    }

    /// The prover plans are replayed on; for a game split by invariants it
    /// is built on the rules as written beside the search, and the first
    /// caller waits for it. An error says why none could be built.
    pub fn prover(&self) -> Result<&Arc<Prover>, String> {
        self.verifier.get()
    }

    /// Whether the answer is decided.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The engine the searches run on `game`, built once, by the first
    /// caller (compiled from `ground`, `game`'s ground program, when the
    /// caller has it), and why it was chosen. When only the prover runs the
    /// rules it is the verifier's own prover (the preparation built it on
    /// `game`): the searches and the verifier then share its tables.
    pub fn machine(&self, ground: Option<&GroundProgram>) -> Result<(AnyMachine, String), String> {
        self.machine
            .get_or_init(|| {
                if self.engine == Engine::Prover {
                    let prover = self.prover()?;
                    let why = format!("prover ({})", prover.strategy().name());
                    return Ok((AnyMachine::Prover(Arc::clone(prover)), why));
                }
                AnyMachine::build_on_ground(self.game.clone(), self.engine, ground.cloned())
                    .map_err(|e| e.to_string())
            })
            .clone()
    }

    /// The program the clingo workers solve, with its state invariants when
    /// asked for and the game grounds (see [`Program::find_invariants`]).
    pub fn program(&self) -> Program {
        let mut program = Program::new(&self.game);
        let opts = &self.opts;
        if !opts.invariants || matches!(opts.mode, Mode::Search | Mode::Breadth | Mode::Parallel) {
            return program;
        }
        let budget = opts
            .timeout
            .map_or(INVARIANT_BUDGET, |t| (t / 10).min(INVARIANT_BUDGET));
        let found: Result<invariants::Report, String> = match &self.too_big {
            None => program.find_invariants(budget),
            Some(e) => Err(e.clone()),
        };
        match found {
            Ok(r) => crate::progress!(
                "[invariants] {} proven of {} candidates in {} rounds, {:.2} s",
                r.invariants.len(),
                r.candidates,
                r.rounds,
                r.seconds
            ),
            Err(e) => crate::progress!("[invariants] none: {e}"),
        }
        program
    }
}

/// The verifying prover, ready or being built on a thread of its own.
struct Verifier {
    built: OnceLock<Result<Arc<Prover>, String>>,
    building: Mutex<Option<JoinHandle<Result<Prover, String>>>>,
}

impl Verifier {
    fn ready(p: Prover) -> Verifier {
        Verifier {
            built: OnceLock::from(Ok(Arc::new(p))),
            building: Mutex::new(None),
        }
    }

    /// Builds the verifier of `written`, the rules as written, at once
    /// ([`crate::reasoner::prepare::replay_prover`]: a game split by
    /// invariants is one that does not ground, and the corpus sudoku's
    /// static relations are too large to compute whole; the prover's trials
    /// and the rewrites for it took seconds), else of `split`'s rules.
    fn building(written: Game, split: Game) -> Verifier {
        let build = move || {
            crate::reasoner::prepare::replay_prover(&written)
                .map(|(p, _)| p)
                .or_else(|_| Prover::try_new(split))
                .map_err(|e| format!("no prover to verify plans with: {e}"))
        };
        let handle = std::thread::Builder::new()
            .name("verifier".into())
            .spawn(build)
            .ok();
        Verifier {
            built: OnceLock::new(),
            building: Mutex::new(handle),
        }
    }

    fn get(&self) -> Result<&Arc<Prover>, String> {
        self.built
            .get_or_init(|| {
                let handle = self
                    .building
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take();
                match handle.map(JoinHandle::join) {
                    Some(Ok(built)) => built.map(Arc::new),
                    Some(Err(_)) => Err("the verifier's build panicked".into()),
                    None => Err("the verifier's thread did not start".into()),
                }
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// The breadth-first search's head start over the clingo workers' processes.
/// A small game is solved within its first few thousand states, in
/// milliseconds, and then needs no process started (nor their seconds of
/// grounding on a busy machine). The launcher makes the clingo program
/// meanwhile, so nothing sits idle: it only holds back the processes until
/// the search opens the gate, after [`HEAD_START_STATES`] states or when it
/// ends, whichever comes first.
#[derive(Default)]
pub struct HeadStart {
    open: Mutex<bool>,
    opened: Condvar,
}

/// The states the breadth-first search keeps before the clingo workers'
/// processes start: a count, so that what a small game starts is the same
/// on every machine (the 8-puzzle's propnet expands them in about 10 ms).
pub const HEAD_START_STATES: usize = 10_000;

/// The longest the launcher waits for the gate: a search on a slow engine
/// (the prover's largest games expand a few thousand states a second) does
/// not hold the clingo workers back for long.
pub const HEAD_START_MAX: Duration = Duration::from_millis(250);

impl HeadStart {
    /// Lets the clingo workers' processes start.
    pub fn open(&self) {
        *self
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = true;
        self.opened.notify_all();
    }

    /// Waits until the gate is open, at most `max`.
    pub fn wait(&self, max: Duration) {
        let open = self
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = self
            .opened
            .wait_timeout_while(open, max, |open| !*open)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
    }
}

/// Opens the gate when dropped, unless [`OpenOnDrop::answered`]: a search
/// that ends without the answer lets the workers start, one that answers
/// leaves them unstarted (the solve then stops them and opens the gate).
pub struct OpenOnDrop<'a> {
    gate: &'a HeadStart,
    answered: bool,
}

impl<'a> OpenOnDrop<'a> {
    pub fn new(gate: &'a HeadStart) -> Self {
        OpenOnDrop {
            gate,
            answered: false,
        }
    }

    /// The search has the answer: the gate stays shut.
    pub fn answered(&mut self) {
        self.answered = true;
    }
}

impl Drop for OpenOnDrop<'_> {
    fn drop(&mut self) {
        if !self.answered {
            self.gate.open();
        }
    }
}
