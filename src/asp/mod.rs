//! Single-player games solved exactly with answer set programming.
//!
//! - [`translate`]: GDL rules -> ASP rules with a time argument, and
//!   [`symbols`]: GDL symbols <-> clingo terms, exactly;
//! - [`program`]: the translated rules placed into `encodings/full.lp` or
//!   `encodings/incremental.lp` (what `ggp-asp encode` prints);
//! - [`solve()`](solve()): the coordinator: runs full grounding with a deepening
//!   horizon and/or incremental solving on their own threads (see
//!   [`mod@solve`] for the workers), and in auto the [`forward`] search beside
//!   them, enforces the timeout and the memory limit, and accepts a plan only
//!   once [`verify`] has replayed it on the reference prover.

mod control;
pub mod forward;
pub mod invariants;
pub mod program;
pub mod shorten;
pub mod solve;
pub mod symbols;
pub mod translate;
pub mod verify;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::gdl::kw;
use crate::gdl::print::term_to_string;
use crate::gdl::Game;
use crate::reasoner::{ground, rewrite, Engine, Prover, ProverError};

pub use program::Program;
use solve::{Event, Found, Outcome, Times, Worker};

/// How to solve.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Full and incremental at once, and the forward search after a few
    /// seconds; the first verified answer wins (a plan not yet proven shortest
    /// after a short grace for the proof).
    #[default]
    Auto,
    /// Full grounding to a horizon, deepened until a plan is found.
    Full,
    /// Multi-shot solving, one more step per round.
    Incremental,
    /// Depth-first search over the rule engine (no clingo): finds plans the
    /// encodings cannot, proves nothing (see [`forward`]).
    Search,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Full => "full",
            Mode::Incremental => "incremental",
            Mode::Search => "search",
        }
    }
}

/// What was proven about a plan.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Proven {
    /// No plan with fewer moves reaches goal 100.
    Shortest,
    /// No plan within the horizon reaches a better goal (and 100 is out of reach).
    BestGoal,
    #[default]
    None,
}

impl Proven {
    /// As in the JSON answer.
    pub fn name(self) -> &'static str {
        match self {
            Proven::Shortest => "shortest",
            Proven::BestGoal => "best-goal",
            Proven::None => "none",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Solved,
    NoPlan,
    Timeout,
    Error,
}

impl Status {
    /// As in the JSON answer.
    pub fn name(self) -> &'static str {
        match self {
            Status::Solved => "solved",
            Status::NoPlan => "no-plan",
            Status::Timeout => "timeout",
            Status::Error => "error",
        }
    }
}

/// Settings of one solve.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    pub mode: Mode,
    /// Wall-clock limit for the whole solve.
    pub timeout: Option<Duration>,
    /// The longest plan looked for.
    pub max_steps: usize,
    /// Solver threads (in auto: the full worker's; the incremental one has one).
    pub threads: usize,
    /// Resident memory limit of the process, in MiB.
    pub memory_mb: Option<u64>,
    /// Print progress (horizon, ground atoms and rules, seconds) on stderr.
    pub progress: bool,
    /// Prove state invariants and add them as constraints (see [`invariants`]).
    pub invariants: bool,
    /// Extra clingo options for every worker, after ours (so they win), e.g.
    /// `--configuration=trendy`.
    pub clingo_args: Vec<String>,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            mode: Mode::Auto,
            timeout: None,
            max_steps: 200,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_mb: None,
            progress: false,
            invariants: true,
            clingo_args: Vec::new(),
        }
    }
}

/// The answer: the JSON object `ggp-asp solve --json` prints, and the
/// player reads back from its solver child (only `status` is required there:
/// what is missing reads as nothing found, nothing proven).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SolveResult {
    pub status: Status,
    pub goal: Option<u8>,
    pub steps: Option<usize>,
    /// The verified plan, one move per step, as KIF.
    #[serde(default)]
    pub plan: Vec<String>,
    #[serde(default)]
    pub proven: Proven,
    /// The way of solving that gave the answer.
    #[serde(default)]
    pub mode: Option<Mode>,
    #[serde(default)]
    pub ground_s: f64,
    #[serde(default)]
    pub solve_s: f64,
    #[serde(default)]
    pub total_s: f64,
    /// The largest horizon fully searched without a winning plan.
    #[serde(default)]
    pub horizon: usize,
    /// Peak resident memory of the process, in MiB.
    #[serde(default)]
    pub peak_mb: f64,
    #[serde(default)]
    pub message: String,
}

impl SolveResult {
    /// The JSON answer for a game that could not be solved at all (bad file,
    /// multi-player game).
    pub fn error(message: String) -> SolveResult {
        SolveResult {
            status: Status::Error,
            goal: None,
            steps: None,
            plan: Vec::new(),
            proven: Proven::None,
            mode: None,
            ground_s: 0.0,
            solve_s: 0.0,
            total_s: 0.0,
            horizon: 0,
            peak_mb: peak_mb(),
            message,
        }
    }
}

/// Why a game cannot be solved at all.
#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    #[error("{0}")]
    NotSinglePlayer(String),
    #[error(transparent)]
    Prover(#[from] ProverError),
    #[error("cannot start a solver thread: {0}")]
    Thread(String),
}

/// The most CPU time spent proving invariants before solving (CPU time of the
/// search's thread, so that a busy machine proves what an idle one does). The useful ones come
/// fast (corpus hanoi 0.02 s, 8puzzle 0.13 s); a game whose one-step program is
/// hard (the corpus's pancake puzzles: 761 fluents) would spend the whole budget
/// for nothing, so it is short.
pub const INVARIANT_BUDGET: Duration = Duration::from_secs(1);

/// When auto starts the forward search beside the clingo workers: late enough
/// that the games clingo solves at once keep both cores (and get its proofs and
/// short plans), early enough to leave the search most of a minute.
pub const SEARCH_AFTER: Duration = Duration::from_secs(3);

/// How long auto waits, once it holds a plan not proven shortest, for a worker
/// to prove one: a quarter of the time so far, between half a second and
/// [`GRACE_MAX`]. A proof that has not come in the first minutes rarely comes in
/// the next few seconds, and the plan is what the user waits for (peg
/// solitaire's plans, found by the search after 45-55 s, were held until the
/// minute was up).
fn grace_after(elapsed: Duration) -> Duration {
    (elapsed / 4).clamp(Duration::from_millis(500), GRACE_MAX)
}

const GRACE_MAX: Duration = Duration::from_secs(2);

/// The game the solver works on, and whether it grounds.
pub struct Prepared {
    pub game: Game,
    /// Why our grounder could not ground it within
    /// [`rewrite::default_limits`].
    pub too_big: Option<String>,
    /// What was rewritten, for progress output.
    pub note: Option<String>,
    /// The prover that verifies plans, when preparing built it already: on
    /// `game`, except for a game split by invariants, whose plans are
    /// verified on the rules as written (or an exact rewrite of them).
    pub prover: Option<Prover>,
    /// Only the prover runs `game`: neither the game nor any rewrite grounds,
    /// and the prover runs a rewrite ([`rewrite::for_the_prover`]), so
    /// neither clingo nor a propnet is tried in `auto`.
    pub prover_only: bool,
    /// The unique-value invariants `game` was split by, if it was (see
    /// [`split_by_invariants`]).
    pub unique: Vec<crate::gdl::split::Unique>,
}

/// Prepares a game for solving. One that our grounder cannot ground within
/// [`rewrite::default_limits`] is rewritten by [`rewrite::until_it_grounds`]
/// when that makes it ground: [`crate::gdl::demand`] (ruleDepthQuadratic:
/// 2^44 tuples bottom-up, a few dozen asked for), after
/// [`crate::gdl::constant`] if need be (mummymaze1p, whose walls are
/// fluents); every engine then runs the rewritten rules, the prover that
/// verifies plans included, and the plans, made of the same moves, hold in
/// the game as written (the rewrites are exact; the tests compare the
/// provers). A game that needs more is also one whose one-step program
/// clingo would ground far past the invariant search's budget.
pub fn prepare(game: &Game) -> Prepared {
    // clingo's grounding cannot be interrupted: a game whose relaxed program
    // our own grounder (which can) cannot finish would leave clingo grounding
    // the invariant search's one-step program long past its budget, holding
    // the lock every worker needs (ruleDepthExponential: 2^20 tuples a step,
    // half a minute).
    let limits = rewrite::default_limits();
    match rewrite::until_it_grounds(game, &limits) {
        Ok(None) => Prepared {
            game: game.clone(),
            too_big: None,
            note: None,
            prover: None,
            prover_only: false,
            unique: Vec::new(),
        },
        Ok(Some(r)) => Prepared {
            game: r.game,
            too_big: None,
            note: Some(r.note),
            prover: None,
            prover_only: false,
            unique: Vec::new(),
        },
        Err(e) => {
            if let Some((split, unique)) = split_by_invariants(game, &limits) {
                // Plans are verified on the rules as written (or an exact
                // rewrite), not on the split whose exactness rests on the
                // invariants.
                let prover = Prover::try_new(game.clone())
                    .ok()
                    .or_else(|| rewrite::for_the_prover(game).map(|(p, _)| p));
                return Prepared {
                    game: split.game,
                    too_big: None,
                    note: Some(format!(
                        "the game does not ground ({e}); rewritten, {}",
                        split.note
                    )),
                    prover,
                    prover_only: false,
                    unique,
                };
            }
            let too_big = Some(format!("the game does not ground within limits ({e})"));
            // A prover is needed to verify plans and for the search: on
            // rewritten rules when it cannot run them as written.
            let (game, note, prover, prover_only) = match Prover::try_new(game.clone()) {
                Ok(p) => (game.clone(), None, Some(p), false),
                Err(_) => match rewrite::for_the_prover(game) {
                    Some((p, r)) => (r.game, Some(r.note), Some(p), true),
                    None => (game.clone(), None, None, false),
                },
            };
            Prepared {
                game,
                too_big,
                note,
                prover,
                prover_only,
                unique: Vec::new(),
            }
        }
    }
}

/// The CPU time the invariant search behind [`split_by_invariants`] may take
/// (sudoku: 2.2 s).
const SPLIT_BUDGET: Duration = Duration::from_secs(10);

/// For a game that does not ground: its rules split by proven unique-value
/// invariants (see [`crate::gdl::split`]) when the result grounds, possibly
/// after the usual rewrites. The invariants are proven on the rules of play
/// alone, and only when our grounder (which, unlike clingo's, can be
/// stopped) grounds those within `limits`.
fn split_by_invariants(
    game: &Game,
    limits: &ground::Limits,
) -> Option<(rewrite::Rewritten, Vec<crate::gdl::split::Unique>)> {
    let play = Game::new(crate::gdl::Description {
        symbols: game.symbols.clone(),
        rules: crate::gdl::graph::keep_reached(
            game.rules.clone(),
            &[kw::ROLE, kw::INIT, kw::LEGAL, kw::NEXT, kw::TERMINAL],
        ),
        source: game.source.clone(),
    })
    .ok()?;
    ground::ground(&play, limits).ok()?;
    let unique = invariants::unique_keys(&play, SPLIT_BUDGET).ok()?;
    let (split, rels) = crate::gdl::split::split(game, &unique)?;
    let names: Vec<String> = rels
        .iter()
        .map(|r| format!("{}/{}", game.symbols.name(r.name), r.arity))
        .collect();
    let uniques: Vec<String> = unique.iter().map(|u| u.describe(&game.symbols)).collect();
    let note = format!(
        "splitting the joins of {} over fluents proven to hold one value ({})",
        names.join(", "),
        uniques.join(", ")
    );
    let rewritten = match rewrite::until_it_grounds(&split, limits) {
        Ok(None) => rewrite::Rewritten { game: split, note },
        Ok(Some(r)) => rewrite::Rewritten {
            game: r.game,
            note: format!("{note}, then {}", r.note),
        },
        Err(_) => return None,
    };
    Some((rewritten, unique))
}

/// Solves a single-player game: the shortest plan to goal 100, else the best goal.
pub fn solve(game: &Game, opts: &SolveOptions) -> Result<SolveResult, SolveError> {
    solve::check_single_player(game).map_err(SolveError::NotSinglePlayer)?;
    let start = Instant::now();
    let mut prepared = prepare(game);
    if let (Some(note), true) = (&prepared.note, opts.progress) {
        eprintln!("[rewrite] {note}");
    }
    let prover = match prepared.prover.take() {
        Some(p) => p,
        None => Prover::try_new(prepared.game.clone())?,
    };
    let game = &prepared.game;
    let program = Arc::new(program_with_invariants(&prepared, opts));
    let stop = Arc::new(AtomicBool::new(false));
    let result = Workers::start(&prepared, program, opts, &stop).map(|workers| {
        Coordinator {
            start,
            prover: &prover,
            game,
            horizon: 0,
            times: Times::default(),
            candidate: None,
            fallback: None,
        }
        .run(workers, opts)
    });
    // Whatever the answer, no worker runs on.
    stop.store(true, Ordering::Relaxed);
    result
}

/// The program of a prepared game, with its state invariants when asked for
/// and the game grounds (see [`Program::find_invariants`]).
fn program_with_invariants(prepared: &Prepared, opts: &SolveOptions) -> Program {
    let mut program = Program::new(&prepared.game);
    if !opts.invariants || opts.mode == Mode::Search {
        return program;
    }
    let budget = opts
        .timeout
        .map_or(INVARIANT_BUDGET, |t| (t / 10).min(INVARIANT_BUDGET));
    let found = match &prepared.too_big {
        None => program.find_invariants(budget),
        Some(e) => Err(e.clone()),
    };
    match found {
        Ok(r) if opts.progress => eprintln!(
            "[invariants] {} proven of {} candidates in {} rounds, {:.2} s",
            r.invariants.len(),
            r.candidates,
            r.rounds,
            r.seconds
        ),
        Ok(_) => {}
        Err(e) if opts.progress => eprintln!("[invariants] none: {e}"),
        Err(_) => {}
    }
    program
}

/// The threads of one solve, as the coordinator sees them: their events, the
/// replay of plans below 100, and how many still run.
struct Workers {
    rx: mpsc::Receiver<Event>,
    fallback_tx: mpsc::Sender<(Mode, Found)>,
    verified_rx: mpsc::Receiver<Result<Verified, String>>,
    running: usize,
    /// Whether clingo workers run (for the timeout's message).
    clingo: bool,
    failures: Vec<String>,
}

impl Workers {
    /// Starts the clingo workers the mode asks for, the forward search (auto
    /// and search) and the thread replaying plans below 100. On an error the
    /// caller's `stop` ends the threads already started.
    fn start(
        prepared: &Prepared,
        program: Arc<Program>,
        opts: &SolveOptions,
        stop: &Arc<AtomicBool>,
    ) -> Result<Workers, SolveError> {
        let (tx, rx) = mpsc::channel();
        let modes = match opts.mode {
            // clingo would ground for as long as it is let (sudoku: 5 GB in a
            // minute, no horizon grounded).
            Mode::Auto if prepared.prover_only => vec![],
            Mode::Auto => vec![Mode::Full, Mode::Incremental],
            Mode::Search => vec![],
            m => vec![m],
        };
        let refuted = Arc::new(AtomicUsize::new(0));
        for &mode in &modes {
            spawn_clingo_worker(mode, &program, opts, stop, &refuted, &tx)?;
        }
        let search = matches!(opts.mode, Mode::Auto | Mode::Search);
        if search {
            spawn_search(prepared, modes.is_empty(), opts, stop, &tx)?;
        }
        // Plans below 100 are replayed on a prover of their own thread, so that
        // the coordinator never waits on a slow replay (seconds on
        // ruleDepthExponential) and a timeout answers with the best one
        // replayed by then.
        let (fallback_tx, fallback_rx) = mpsc::channel::<(Mode, Found)>();
        let (verified_tx, verified_rx) = mpsc::channel::<Result<Verified, String>>();
        if search {
            let game = prepared.game.clone();
            std::thread::Builder::new()
                .name("asp-verify".into())
                .stack_size(64 << 20)
                .spawn(move || verify_fallbacks(game, fallback_rx, verified_tx))
                .map_err(|e| SolveError::Thread(e.to_string()))?;
        }
        Ok(Workers {
            rx,
            fallback_tx,
            verified_rx,
            running: modes.len() + usize::from(search),
            clingo: !modes.is_empty(),
            failures: Vec::new(),
        })
    }
}

/// Starts one clingo worker of `mode` on its own thread.
fn spawn_clingo_worker(
    mode: Mode,
    program: &Arc<Program>,
    opts: &SolveOptions,
    stop: &Arc<AtomicBool>,
    refuted: &Arc<AtomicUsize>,
    tx: &mpsc::Sender<Event>,
) -> Result<(), SolveError> {
    // In auto, the full worker searches with all the threads (clingo's
    // portfolio of configurations, which pays off on the hard exact-horizon
    // games: corpus hanoi 5 s with two threads, over 25 s with one) and the
    // incremental worker with one beside it.
    let threads = if opts.mode == Mode::Auto && mode == Mode::Incremental {
        1
    } else {
        opts.threads.max(1)
    };
    let (program, opts, stop, refuted, tx) = (
        Arc::clone(program),
        opts.clone(),
        Arc::clone(stop),
        Arc::clone(refuted),
        tx.clone(),
    );
    // clingo's grounder recurses deeply on some programs: give it room. The
    // worker is made on its thread: it holds clingo's lock, which stays there.
    std::thread::Builder::new()
        .name(format!("asp-{}", mode.name()))
        .stack_size(64 << 20)
        .spawn(move || {
            Worker {
                mode,
                program,
                opts,
                threads,
                stop,
                refuted,
                tx,
                times: Times::default(),
                solving_since: None,
                guard: None,
            }
            .run()
        })
        .map(drop)
        .map_err(|e| SolveError::Thread(e.to_string()))
}

/// Starts the forward search on its own thread: at once when it runs `alone`,
/// else after [`SEARCH_AFTER`], beside the clingo workers.
fn spawn_search(
    prepared: &Prepared,
    alone: bool,
    opts: &SolveOptions,
    stop: &Arc<AtomicBool>,
    tx: &mpsc::Sender<Event>,
) -> Result<(), SolveError> {
    let delay = if alone { Duration::ZERO } else { SEARCH_AFTER };
    let engine = if prepared.prover_only {
        Engine::Prover
    } else {
        Engine::Auto
    };
    let unique = prepared.unique.clone();
    let (game, max_steps, stop, progress, tx) = (
        prepared.game.clone(),
        opts.max_steps,
        Arc::clone(stop),
        opts.progress,
        tx.clone(),
    );
    std::thread::Builder::new()
        .name("search".into())
        .stack_size(64 << 20)
        .spawn(move || {
            forward::run(
                game, engine, unique, max_steps, delay, alone, stop, progress, tx,
            )
        })
        .map(drop)
        .map_err(|e| SolveError::Thread(e.to_string()))
}

struct Coordinator<'a> {
    start: Instant,
    prover: &'a Prover,
    game: &'a Game,
    horizon: usize,
    times: Times,
    candidate: Option<Verified>,
    /// The best verified plan below goal 100 (see [`Event::Fallback`]).
    fallback: Option<Verified>,
}

/// Replays each plan below 100 that comes (the newest of those waiting) on a
/// prover of its own, until the coordinator hangs up.
fn verify_fallbacks(
    game: Game,
    plans: mpsc::Receiver<(Mode, Found)>,
    out: mpsc::Sender<Result<Verified, String>>,
) {
    let Ok(prover) = Prover::try_new(game) else {
        return;
    };
    while let Ok(mut next) = plans.recv() {
        // The search only ever betters its best: the newest plan is the one.
        while let Ok(newer) = plans.try_recv() {
            next = newer;
        }
        let (mode, found) = next;
        let found = without_detours(&prover, found);
        let verified = verify::verify(&prover, &found.plan, found.goal).map(|note| Verified {
            mode,
            found,
            times: Times::default(),
            note,
        });
        if out.send(verified).is_err() {
            return;
        }
    }
}

/// `found` with its plan shortened where it loops or takes a detour (see
/// [`shorten`]); the same when nothing can be cut. A plan proven shortest has
/// nothing to cut.
fn without_detours(prover: &Prover, found: Found) -> Found {
    let clock = forward::bounds::clock_fluent(crate::reasoner::StateMachine::game(prover));
    match shorten::shorten(prover, &found.plan, clock, shorten::SHORTCUT_BUDGET) {
        Some(plan) => Found { plan, ..found },
        None => found,
    }
}

/// A plan the prover has replayed, with what the replay noted.
struct Verified {
    mode: Mode,
    found: Found,
    times: Times,
    note: Option<String>,
}

impl Coordinator<'_> {
    /// Follows the workers until one of them, the clock, the memory limit or
    /// the grace after a first plan decides the answer.
    fn run(mut self, mut w: Workers, opts: &SolveOptions) -> SolveResult {
        let deadline = opts.timeout.map(|t| self.start + t);
        let mut grace: Option<Instant> = None;
        loop {
            if let Some(r) = self.next_event(&mut w, opts, &mut grace) {
                return r;
            }
            if let Some(r) = self.replayed(&w) {
                return r;
            }
            if let Some(r) = self.limits(&mut w, opts, grace, deadline) {
                return r;
            }
        }
    }

    /// Waits a little for the workers' next event and takes it in; `Some`
    /// when it decides the answer.
    fn next_event(
        &mut self,
        w: &mut Workers,
        opts: &SolveOptions,
        grace: &mut Option<Instant>,
    ) -> Option<SolveResult> {
        match w.rx.recv_timeout(Duration::from_millis(25)) {
            Ok(Event::Horizon(_, h, times)) => {
                self.horizon = self.horizon.max(h);
                self.times = times;
            }
            Ok(Event::Candidate(mode, found, times)) => {
                let found = without_detours(self.prover, found);
                let note = match verify::verify(self.prover, &found.plan, found.goal) {
                    Ok(note) => note,
                    Err(e) => return Some(self.error(mode, times, e)),
                };
                let better = self
                    .candidate
                    .as_ref()
                    .is_none_or(|v| v.found.plan.len() > found.plan.len());
                if better {
                    self.candidate = Some(Verified {
                        mode,
                        found,
                        times,
                        note,
                    });
                }
                // Auto wants a plan fast: once one is verified, the other worker
                // gets a short grace to prove a shortest one, then the best wins.
                if opts.mode == Mode::Auto && grace.is_none() {
                    *grace = Some(Instant::now() + grace_after(self.start.elapsed()));
                }
            }
            Ok(Event::Fallback(mode, found)) => {
                let _ = w.fallback_tx.send((mode, found));
            }
            Ok(Event::Done(mode, outcome, times)) => {
                w.running -= 1;
                match outcome {
                    Outcome::Plan(found) => return Some(self.finish(mode, found, times)),
                    Outcome::NoPlan { horizon, message } => {
                        self.horizon = self.horizon.max(horizon);
                        return Some(self.result(Status::NoPlan, Some(mode), times, message));
                    }
                    Outcome::Stopped => {}
                }
            }
            Ok(Event::Failed(mode, e, times)) => {
                w.running -= 1;
                self.times = times;
                w.failures.push(format!("{}: {e}", mode.name()));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => w.running = 0,
        }
        None
    }

    /// Takes in a plan below 100 replayed meanwhile: the best one is the
    /// answer of a timeout.
    fn replayed(&mut self, w: &Workers) -> Option<SolveResult> {
        match w.verified_rx.try_recv() {
            Ok(Ok(v)) => {
                let better = self.fallback.as_ref().is_none_or(|f| {
                    (v.found.goal, std::cmp::Reverse(v.found.plan.len()))
                        > (f.found.goal, std::cmp::Reverse(f.found.plan.len()))
                });
                if better {
                    self.fallback = Some(v);
                }
                None
            }
            Ok(Err(e)) => Some(self.error(Mode::Search, self.times, e)),
            Err(_) => None,
        }
    }

    /// The answer when no worker runs any more, the memory limit is passed,
    /// the grace after a first plan is over, or the deadline has come.
    fn limits(
        &mut self,
        w: &mut Workers,
        opts: &SolveOptions,
        grace: Option<Instant>,
        deadline: Option<Instant>,
    ) -> Option<SolveResult> {
        if w.running == 0 {
            if let Some(v) = self.candidate.take() {
                return Some(self.answer(v));
            }
            let msg = if w.failures.is_empty() {
                "the solver stopped without an answer".to_string()
            } else {
                w.failures.join("; ")
            };
            return Some(self.result(Status::Error, None, self.times, msg));
        }
        if let Some(limit) = opts.memory_mb {
            let rss = resident_mb();
            if rss > limit as f64 {
                let msg = format!(
                    "memory limit of {limit} MiB exceeded ({rss:.0} MiB resident) after horizon {}",
                    self.horizon
                );
                return Some(self.out_of_budget(Status::Error, msg));
            }
        }
        if grace.is_some_and(|g| Instant::now() >= g) {
            if let Some(v) = self.candidate.take() {
                return Some(self.answer(v));
            }
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            let secs = self.start.elapsed().as_secs_f64();
            let msg = if w.clingo {
                format!(
                    "timeout after {secs:.1} s; horizon {} searched without a winning plan",
                    self.horizon
                )
            } else {
                format!("timeout after {secs:.1} s; the search found no winning plan")
            };
            return Some(self.out_of_budget(Status::Timeout, msg));
        }
        None
    }

    fn result(
        &self,
        status: Status,
        mode: Option<Mode>,
        times: Times,
        message: String,
    ) -> SolveResult {
        SolveResult {
            status,
            goal: None,
            steps: None,
            plan: Vec::new(),
            proven: if status == Status::NoPlan {
                Proven::BestGoal
            } else {
                Proven::None
            },
            mode,
            ground_s: times.ground_s,
            solve_s: times.solve_s,
            total_s: self.start.elapsed().as_secs_f64(),
            horizon: self.horizon,
            peak_mb: peak_mb(),
            message,
        }
    }

    fn error(&self, mode: Mode, times: Times, e: String) -> SolveResult {
        self.result(
            Status::Error,
            Some(mode),
            times,
            format!("the plan does not replay on the prover: {e}"),
        )
    }

    /// A plan, once the prover has replayed it, becomes the answer.
    fn finish(&self, mode: Mode, found: Found, times: Times) -> SolveResult {
        let found = without_detours(self.prover, found);
        match verify::verify(self.prover, &found.plan, found.goal) {
            Ok(note) => self.answer(Verified {
                mode,
                found,
                times,
                note,
            }),
            Err(e) => self.error(mode, times, e),
        }
    }

    /// A verified plan as the answer.
    fn answer(&self, v: Verified) -> SolveResult {
        let Verified {
            mode,
            found,
            times,
            note,
        } = v;
        let mut message = match found.proven {
            Proven::Shortest => format!("shortest plan to goal 100: {} moves", found.plan.len()),
            Proven::BestGoal => format!(
                "goal 100 is out of reach; best goal {} in {} moves",
                found.goal,
                found.plan.len()
            ),
            Proven::None => format!("plan to goal {} (not proven optimal)", found.goal),
        };
        if let Some(note) = note {
            message = format!("{message}; {note}");
        }
        SolveResult {
            goal: Some(found.goal),
            steps: Some(found.plan.len()),
            plan: found
                .plan
                .iter()
                .map(|m| term_to_string(m, &self.game.symbols))
                .collect(),
            proven: found.proven,
            ..self.result(Status::Solved, Some(mode), times, message)
        }
    }

    /// Out of time or memory: the best verified plan to goal 100 so far, else
    /// `status` with the best verified plan below 100 attached (not a
    /// solution: only the best seen when the budget ran out), else `status`.
    fn out_of_budget(&mut self, status: Status, message: String) -> SolveResult {
        match (self.candidate.take(), self.fallback.take()) {
            (Some(v), _) => {
                let mut r = self.answer(v);
                r.message = format!("{}; {message}", r.message);
                r
            }
            (None, Some(v)) => {
                // The times of the whole run, as for a timeout without a plan.
                let mut r = self.answer(Verified {
                    times: self.times,
                    ..v
                });
                r.status = status;
                r.message = format!(
                    "{message}; the best verified plan so far reaches goal {} in {} moves",
                    r.goal.unwrap_or(0),
                    r.plan.len()
                );
                r
            }
            (None, None) => self.result(status, None, self.times, message),
        }
    }
}

/// Resident memory of this process in MiB (0 where /proc is missing).
pub fn resident_mb() -> f64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(0.0, |pages| pages * 4096.0 / (1024.0 * 1024.0))
}

/// Peak resident memory of this process in MiB (0 where /proc is missing).
pub fn peak_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))?
                .split_whitespace()
                .nth(1)?
                .parse::<f64>()
                .ok()
        })
        .map_or(0.0, |kb| kb / 1024.0)
}
