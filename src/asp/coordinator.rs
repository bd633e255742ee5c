//! The solve's threads and the coordinator that follows them: it starts the
//! clingo workers, the forward search and the thread replaying plans below
//! 100, takes in their events, shortens and verifies every plan, and decides
//! the answer at a proof, the timeout, the memory limit or the grace after a
//! first plan.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use super::solve::{Event, Found, Job, Outcome, Times, Worker};
use super::{
    forward, peak_mb, process, resident_mb, shorten, verify, Mode, Prepared, Program, Proven,
    SolveError, SolveOptions, SolveResult, Status, PROOF_WAIT, SEARCH_AFTER,
};
use crate::gdl::print::term_to_string;
use crate::gdl::Game;
use crate::reasoner::{Engine, Prover};

/// How long auto waits, once it holds a plan not proven shortest, for a worker
/// to prove one: a quarter of the time so far, between half a second and
/// [`GRACE_MAX`]. A proof that has not come in the first minutes rarely comes in
/// the next few seconds, and the plan is what the user waits for (a plan the
/// search finds late, as peg solitaire's, would otherwise be held until the
/// timeout).
fn grace_after(elapsed: Duration) -> Duration {
    (elapsed / 4).clamp(Duration::from_millis(500), GRACE_MAX)
}

const GRACE_MAX: Duration = Duration::from_secs(2);

/// The threads of one solve, as the coordinator sees them: their events, the
/// replay of plans below 100, and how many still run.
pub(super) struct Workers {
    rx: mpsc::Receiver<Event>,
    fallback_tx: mpsc::Sender<(Mode, Found)>,
    verified_rx: mpsc::Receiver<Result<Verified, String>>,
    running: usize,
    /// Workers still running that can prove a plan shortest (clingo's and
    /// the breadth-first search): while one runs, auto waits for a proof.
    proving: usize,
    /// The largest number of moves proven to hold no winning plan, by any
    /// worker (see [`Worker::refuted`]).
    refuted: Arc<AtomicUsize>,
    /// The worker processes, whose memory counts with this process's.
    children: Arc<Mutex<Vec<u32>>>,
    /// Whether clingo workers run (for the timeout's message).
    clingo: bool,
    failures: Vec<String>,
}

impl Workers {
    /// Starts the breadth-first search (auto and breadth), the clingo workers
    /// the mode asks for once their program is made, the depth-first search
    /// (auto and search) and the thread replaying plans below 100. On an error
    /// the caller's `stop` ends the threads already started.
    pub(super) fn start(
        prepared: &Prepared,
        opts: &SolveOptions,
        stop: &Arc<AtomicBool>,
    ) -> Result<Workers, SolveError> {
        let (tx, rx) = mpsc::channel();
        let modes = match opts.mode {
            // clingo would ground for as long as it is let (sudoku: 5 GB in a
            // minute, no horizon grounded).
            Mode::Auto if prepared.prover_only => vec![],
            Mode::Auto => vec![Mode::Full, Mode::Incremental],
            Mode::Search | Mode::Breadth => vec![],
            m => vec![m],
        };
        let refuted = Arc::new(AtomicUsize::new(0));
        let breadth = matches!(opts.mode, Mode::Auto | Mode::Breadth);
        if breadth {
            spawn_breadth(prepared, opts, stop, &refuted, &tx)?;
        }
        let children = Arc::new(Mutex::new(Vec::new()));
        if !modes.is_empty() {
            let launch = Launch {
                modes: modes.clone(),
                opts: opts.clone(),
                stop: Arc::clone(stop),
                refuted: Arc::clone(&refuted),
                tx: tx.clone(),
                children: Arc::clone(&children),
            };
            let (game, too_big) = (prepared.game.clone(), prepared.too_big.clone());
            std::thread::Builder::new()
                .name("asp-launch".into())
                .stack_size(64 << 20)
                .spawn(move || launch.run(&game, too_big.as_deref()))
                .map_err(|e| SolveError::Thread(e.to_string()))?;
        }
        let search = matches!(opts.mode, Mode::Auto | Mode::Search);
        if search {
            spawn_search(prepared, modes.is_empty(), opts, &refuted, stop, &tx)?;
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
            running: modes.len() + usize::from(search) + usize::from(breadth),
            proving: modes.len() + usize::from(breadth),
            refuted,
            children,
            clingo: !modes.is_empty(),
            failures: Vec::new(),
        })
    }
}

/// What starts the clingo workers: on a thread of its own, so that the
/// breadth-first search and the coordinator run while the program is made
/// and its invariants proven (up to a second: a small game is solved by
/// then).
struct Launch {
    modes: Vec<Mode>,
    opts: SolveOptions,
    stop: Arc<AtomicBool>,
    refuted: Arc<AtomicUsize>,
    tx: mpsc::Sender<Event>,
    children: Arc<Mutex<Vec<u32>>>,
}

impl Launch {
    /// Makes the program of `game` and starts a worker of each mode on it;
    /// a worker that cannot start is reported as failed.
    fn run(self, game: &Game, too_big: Option<&str>) {
        let program = super::program_with_invariants(game, too_big, &self.opts);
        for &mode in &self.modes {
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            match spawn_clingo_worker(
                mode,
                &program,
                &self.opts,
                &self.stop,
                &self.refuted,
                &self.tx,
            ) {
                Ok(Some(pid)) => self
                    .children
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(pid),
                Ok(None) => {}
                Err(e) => {
                    let _ = self
                        .tx
                        .send(Event::Failed(mode, e.to_string(), Times::default()));
                }
            }
        }
    }
}

/// Starts one clingo worker of `mode`: in a process of its own when the
/// options name the executable for it ([`SolveOptions::worker_exe`]), else
/// on a thread of this process. Returns the process id of a child.
fn spawn_clingo_worker(
    mode: Mode,
    program: &Program,
    opts: &SolveOptions,
    stop: &Arc<AtomicBool>,
    refuted: &Arc<AtomicUsize>,
    tx: &mpsc::Sender<Event>,
) -> Result<Option<u32>, SolveError> {
    // In auto the incremental worker, the plain translation's way of solving,
    // searches with one thread and keeps its core; the full worker searches
    // with all the threads (clingo's portfolio of configurations, which pays
    // off on the hard exact-horizon games) on what the incremental one
    // leaves.
    let threads = if opts.mode == Mode::Auto && mode == Mode::Incremental {
        1
    } else {
        opts.threads.max(1)
    };
    let mut job = Job::new(mode, program, threads, opts);
    if opts.mode == Mode::Auto && mode == Mode::Full {
        job.step_back = crate::priority::BEHIND;
    }
    if let Some(exe) = &opts.worker_exe {
        return process::spawn(exe, &job, stop, refuted, tx)
            .map(Some)
            .map_err(SolveError::Thread);
    }
    let (job, opts, stop, refuted, tx) = (
        Arc::new(job),
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
                job,
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
        .map(|_| None)
        .map_err(|e| SolveError::Thread(e.to_string()))
}

/// How long the breadth-first search of auto runs at full priority whatever
/// the other workers prove: the 8-puzzle's 181,440 states take under a
/// second. Past it, the search steps back behind a clingo worker that is
/// ahead of it, whose core it would otherwise halve.
const BREADTH_CHEAP: Duration = Duration::from_secs(1);

/// Starts the breadth-first search on its own thread, at once: on a game
/// with few states it proves the optimum before clingo has grounded.
fn spawn_breadth(
    prepared: &Prepared,
    opts: &SolveOptions,
    stop: &Arc<AtomicBool>,
    refuted: &Arc<AtomicUsize>,
    tx: &mpsc::Sender<Event>,
) -> Result<(), SolveError> {
    let engine = if prepared.prover_only {
        Engine::Prover
    } else {
        Engine::Auto
    };
    let mut limits = forward::breadth::Limits::new(opts.max_steps, opts.memory_mb);
    if opts.mode == Mode::Auto {
        limits.step_back_after = Some(BREADTH_CHEAP);
    }
    let (game, stop, refuted, progress, tx) = (
        prepared.game.clone(),
        Arc::clone(stop),
        Arc::clone(refuted),
        opts.progress,
        tx.clone(),
    );
    std::thread::Builder::new()
        .name("breadth".into())
        .stack_size(64 << 20)
        .spawn(move || forward::breadth::run(game, engine, limits, stop, refuted, progress, tx))
        .map(drop)
        .map_err(|e| SolveError::Thread(e.to_string()))
}

/// Starts the forward search on its own thread: at once when it runs `alone`,
/// else after [`SEARCH_AFTER`] beside the clingo workers, or as soon as a
/// bound in `refuted` proves every plan long.
fn spawn_search(
    prepared: &Prepared,
    alone: bool,
    opts: &SolveOptions,
    refuted: &Arc<AtomicUsize>,
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
    let (game, max_steps, refuted, stop, progress, tx) = (
        prepared.game.clone(),
        opts.max_steps,
        Arc::clone(refuted),
        Arc::clone(stop),
        opts.progress,
        tx.clone(),
    );
    std::thread::Builder::new()
        .name("search".into())
        .stack_size(64 << 20)
        .spawn(move || {
            forward::run(
                game, engine, unique, max_steps, delay, alone, refuted, stop, progress, tx,
            )
        })
        .map(drop)
        .map_err(|e| SolveError::Thread(e.to_string()))
}

pub(super) struct Coordinator<'a> {
    start: Instant,
    prover: &'a Prover,
    game: &'a Game,
    horizon: usize,
    times: Times,
    candidate: Option<Verified>,
    /// The best verified plan below goal 100 (see [`Event::Fallback`]).
    fallback: Option<Verified>,
    /// The clock of the prover's game, left out when plans are shortened.
    clock: Option<crate::gdl::Sym>,
    /// The largest number of moves proven to hold no winning plan.
    refuted: usize,
    progress: bool,
}

/// Replays each plan below 100 that comes (the newest of those waiting) on a
/// prover of its own, until the coordinator hangs up.
fn verify_fallbacks(
    game: Game,
    plans: mpsc::Receiver<(Mode, Found)>,
    out: mpsc::Sender<Result<Verified, String>>,
) {
    let clock = super::bounds::clock_fluent(&game);
    let Ok(prover) = Prover::try_new(game) else {
        return;
    };
    while let Ok(mut next) = plans.recv() {
        // The search only ever betters its best: the newest plan is the one.
        while let Ok(newer) = plans.try_recv() {
            next = newer;
        }
        let (mode, found) = next;
        let found = without_detours(&prover, clock, found);
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
fn without_detours(prover: &Prover, clock: Option<crate::gdl::Sym>, found: Found) -> Found {
    match shorten::shorten(prover, &found.plan, clock, shorten::SHORTCUT_BUDGET) {
        Some(plan) => Found { plan, ..found },
        None => found,
    }
}

/// Whether a worker of `mode` can prove a plan shortest.
fn proves(mode: Mode) -> bool {
    matches!(mode, Mode::Full | Mode::Incremental | Mode::Breadth)
}

/// A plan the prover has replayed, with what the replay noted.
struct Verified {
    mode: Mode,
    found: Found,
    times: Times,
    note: Option<String>,
}

impl<'a> Coordinator<'a> {
    /// A coordinator for a solve that started at `start`, verifying plans on
    /// `prover` (its game's clock is left out when plans are shortened).
    pub(super) fn new(start: Instant, prover: &'a Prover, game: &'a Game) -> Self {
        Coordinator {
            start,
            prover,
            game,
            horizon: 0,
            times: Times::default(),
            candidate: None,
            fallback: None,
            clock: super::bounds::clock_fluent(crate::reasoner::StateMachine::game(prover)),
            refuted: 0,
            progress: false,
        }
    }

    /// Follows the workers until one of them, the clock, the memory limit or
    /// the grace after a first plan decides the answer.
    pub(super) fn run(mut self, mut w: Workers, opts: &SolveOptions) -> SolveResult {
        let deadline = opts.timeout.map(|t| self.start + t);
        let mut grace: Option<Instant> = None;
        self.progress = opts.progress;
        loop {
            if let Some(r) = self.memory(&w, opts) {
                return r;
            }
            if let Some(r) = self.next_event(&mut w, opts, &mut grace) {
                return r;
            }
            if let Some(r) = self.replayed(&w) {
                return r;
            }
            if let Some(r) = self.proven(&w, opts) {
                return r;
            }
            if let Some(r) = self.limits(&mut w, grace, deadline) {
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
                let found = without_detours(self.prover, self.clock, found);
                let note = match verify::verify(self.prover, &found.plan, found.goal) {
                    Ok(note) => note,
                    Err(e) => return Some(self.error(mode, times, e)),
                };
                let better = self
                    .candidate
                    .as_ref()
                    .is_none_or(|v| v.found.plan.len() > found.plan.len());
                if better {
                    if self.progress {
                        crate::say!(
                            "[solve] plan of {} moves (not proven), from {}",
                            found.plan.len(),
                            mode.name()
                        );
                    }
                    self.candidate = Some(Verified {
                        mode,
                        found,
                        times,
                        note,
                    });
                }
                // With `--first`, auto wants a plan fast: once one is verified,
                // the other workers get a short grace to prove a shortest one,
                // then the best wins. Else it waits for the proof, until the
                // timeout or, without one, for `PROOF_WAIT`.
                if opts.mode == Mode::Auto && grace.is_none() {
                    if opts.first {
                        *grace = Some(Instant::now() + grace_after(self.start.elapsed()));
                    } else if opts.timeout.is_none() {
                        *grace = Some(Instant::now() + PROOF_WAIT);
                    }
                }
            }
            Ok(Event::Fallback(mode, found)) => {
                let _ = w.fallback_tx.send((mode, found));
            }
            Ok(Event::Done(mode, outcome, times)) => {
                w.running -= 1;
                w.proving -= usize::from(proves(mode));
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
                w.proving -= usize::from(proves(mode));
                self.times = times;
                w.failures.push(format!("{}: {e}", mode.name()));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => w.running = 0,
        }
        None
    }

    /// The answer when this process and its worker processes together hold
    /// more than the memory limit: checked before each event is taken in, so
    /// that a solve past its limit stops whatever comes.
    fn memory(&mut self, w: &Workers, opts: &SolveOptions) -> Option<SolveResult> {
        let limit = opts.memory_mb?;
        let children = w.children.lock().unwrap_or_else(|e| e.into_inner());
        let rss = resident_mb()
            + children
                .iter()
                .map(|&p| super::resident_mb_of(p))
                .sum::<f64>();
        drop(children);
        if rss <= limit as f64 {
            return None;
        }
        let msg = format!(
            "memory limit of {limit} MiB exceeded ({rss:.0} MiB resident) after horizon {}",
            self.horizon
        );
        Some(self.out_of_budget(Status::Error, msg))
    }

    /// The candidate plan as the answer once the workers' refutations prove
    /// it shortest, or, in auto waiting for a proof, once no worker that
    /// could prove one runs any more.
    fn proven(&mut self, w: &Workers, opts: &SolveOptions) -> Option<SolveResult> {
        let refuted = w.refuted.load(Ordering::Relaxed);
        if refuted > self.refuted {
            self.refuted = refuted;
        }
        let len = self.candidate.as_ref()?.found.plan.len();
        if len <= self.refuted + 1 {
            let mut v = self.candidate.take()?;
            if self.progress {
                crate::say!(
                    "[solve] no plan of {} or fewer: {len} is shortest",
                    len.saturating_sub(1)
                );
            }
            v.found.proven = Proven::Shortest;
            return Some(self.answer(v));
        }
        if opts.mode == Mode::Auto && !opts.first && w.proving == 0 {
            let v = self.candidate.take()?;
            return Some(self.answer(v));
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

    /// The answer when no worker runs any more, the grace after a first plan
    /// is over, or the deadline has come.
    fn limits(
        &mut self,
        w: &mut Workers,
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
            lower_bound: (self.refuted > 0 && status != Status::NoPlan).then_some(self.refuted + 1),
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
        let found = without_detours(self.prover, self.clock, found);
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
            lower_bound: match found.proven {
                Proven::Shortest => Some(found.plan.len()),
                Proven::BestGoal => None,
                Proven::None => (self.refuted > 0).then_some(self.refuted + 1),
            },
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
