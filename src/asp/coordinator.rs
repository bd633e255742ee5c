//! The solve's threads and the coordinator that follows them: it starts the
//! clingo workers, the forward search and the thread replaying plans below
//! 100, takes in their events, shortens and verifies every plan, and decides
//! the answer at a proof, the timeout, the memory limit or the grace after a
//! first plan.

use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use super::checked::{checked, verify_fallbacks, Verified};
use super::solve::{ClingoWorker, Event, FoundPlan, Job, Times, Verdict};
use super::{
    context::NO_CEILING, forward, peak_mb, process, resident_mb, Mode, Proven, SolveContext,
    SolveError, SolveResult, Source, Status, WorkerKind, PROOF_WAIT, SEARCH_AFTER,
};
use crate::gdl::print::term_to_string;
use crate::reasoner::ground::GroundProgram;

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
    fallback_tx: mpsc::Sender<(WorkerKind, FoundPlan)>,
    verified_rx: mpsc::Receiver<Result<Verified, String>>,
    running: usize,
    /// Workers still running that can prove a plan shortest (clingo's and
    /// the breadth-first search): while one runs, auto waits for a proof.
    proving: usize,
    /// The worker processes, whose memory counts with this process's.
    children: Arc<Mutex<Vec<u32>>>,
    /// Whether clingo workers run (for the timeout's message).
    clingo: bool,
    failures: Vec<String>,
}

/// Starts a thread of the solve with room on its stack: clingo's grounder,
/// and the engines' builders, recurse deeply on some programs.
fn spawn_thread(name: String, f: impl FnOnce() + Send + 'static) -> Result<(), SolveError> {
    std::thread::Builder::new()
        .name(name)
        .stack_size(64 << 20)
        .spawn(f)
        .map(drop)
        .map_err(|e| SolveError::Thread(e.to_string()))
}

impl Workers {
    /// Starts the breadth-first search (auto and breadth), the clingo workers
    /// the mode asks for once their program is made, the depth-first search
    /// (auto and search) and the thread replaying plans below 100, on the
    /// solve's `context`; `ground` is its game's ground program, read by the
    /// searches (and dropped once they are done with it). On an error the
    /// caller's stop flag ends the threads already started.
    pub(super) fn start(
        context: &Arc<SolveContext>,
        ground: Option<Arc<GroundProgram>>,
    ) -> Result<Workers, SolveError> {
        let opts = &context.opts;
        let (tx, rx) = mpsc::channel();
        let kinds = match opts.mode {
            // clingo would ground for as long as it is let (sudoku: gigabytes
            // within a minute, no horizon grounded).
            Mode::Auto if context.engine == crate::reasoner::Engine::Prover => vec![],
            // The parallel worker goes last: the launcher analyses the game
            // for it first, and in auto drops it where few moves commute.
            Mode::Auto => vec![
                WorkerKind::Full,
                WorkerKind::Incremental,
                WorkerKind::Parallel,
            ],
            Mode::Search | Mode::Breadth => vec![],
            Mode::Full => vec![WorkerKind::Full],
            Mode::Incremental => vec![WorkerKind::Incremental],
            Mode::Parallel => vec![WorkerKind::Parallel],
        };
        let breadth = matches!(opts.mode, Mode::Auto | Mode::Breadth);
        if breadth {
            spawn_breadth(context, ground.clone(), &tx)?;
        } else {
            context.head_start.open();
        }
        let children = Arc::new(Mutex::new(Vec::new()));
        if !kinds.is_empty() {
            let launcher = ClingoLauncher {
                kinds: kinds.clone(),
                ground: ground.clone(),
                context: Arc::clone(context),
                tx: tx.clone(),
                children: Arc::clone(&children),
            };
            spawn_thread("asp-launch".into(), move || launcher.run())?;
        }
        let search = matches!(opts.mode, Mode::Auto | Mode::Search);
        if search {
            spawn_search(context, ground, kinds.is_empty(), &tx)?;
        }
        // Plans below 100 are replayed on their own thread, so that the
        // coordinator never waits on a slow replay (the prover's slowest
        // games) and a timeout answers with the best one replayed by then.
        let (fallback_tx, fallback_rx) = mpsc::channel::<(WorkerKind, FoundPlan)>();
        let (verified_tx, verified_rx) = mpsc::channel::<Result<Verified, String>>();
        if search {
            let context = Arc::clone(context);
            spawn_thread("asp-verify".into(), move || {
                verify_fallbacks(&context, fallback_rx, verified_tx)
            })?;
        }
        Ok(Workers {
            rx,
            fallback_tx,
            verified_rx,
            running: kinds.len() + usize::from(search) + usize::from(breadth),
            proving: kinds.len() + usize::from(breadth),
            children,
            clingo: !kinds.is_empty(),
            failures: Vec::new(),
        })
    }
}

/// What starts the clingo workers: on a thread of its own, so that the
/// breadth-first search and the coordinator run while the program is made
/// and its invariants proven (a small game is solved by then).
struct ClingoLauncher {
    kinds: Vec<WorkerKind>,
    /// The game's ground program, which the parallel worker's analysis reads.
    ground: Option<Arc<GroundProgram>>,
    context: Arc<SolveContext>,
    tx: mpsc::Sender<Event>,
    children: Arc<Mutex<Vec<u32>>>,
}

impl ClingoLauncher {
    /// Makes the program and starts a worker of each kind on it; a worker
    /// that cannot start is reported as failed.
    fn run(mut self) {
        let program = self.context.program();
        self.context.head_start.wait(super::context::HEAD_START_MAX);
        for &kind in &self.kinds.clone() {
            if self.context.stopped() {
                return;
            }
            let job = if kind == WorkerKind::Parallel {
                match self.parallel_job(&program) {
                    Ok(job) => job,
                    Err(why) => {
                        let _ = self.tx.send(why);
                        continue;
                    }
                }
            } else {
                job_of(kind, &program, &self.context)
            };
            match spawn_clingo_worker(job, &self.context, &self.tx) {
                Ok(Some(pid)) => self
                    .children
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(pid),
                Ok(None) => {}
                Err(e) => {
                    let _ = self
                        .tx
                        .send(Event::Failed(kind, e.to_string(), Times::default()));
                }
            }
        }
    }
}

/// In auto the parallel worker runs only where at least this share of the
/// pairs of moves may share a step: elsewhere its horizons are nearly the
/// serial ones, and the full worker already searches those.
const PARALLEL_MIN_INDEPENDENT: f64 = 0.5;

impl ClingoLauncher {
    /// The parallel worker's job, after the analysis of the game's ground
    /// rules; else the event that ends it: in auto a quiet stop where it
    /// does not apply or would not help, with `--mode parallel` a failure
    /// that says why.
    fn parallel_job(&mut self, program: &super::Program) -> Result<Job, Event> {
        let kind = WorkerKind::Parallel;
        let auto = self.context.opts.mode == Mode::Auto;
        let ground = self.ground.take();
        let t0 = Instant::now();
        let steps = match ground.as_deref() {
            Some(g) => super::parallel::analyse(&self.context.game, g),
            None => Err(self
                .context
                .too_big
                .clone()
                .unwrap_or_else(|| "the game was not ground".into())),
        };
        drop(ground);
        let steps = match steps {
            Ok(s) if auto && s.independent() < PARALLEL_MIN_INDEPENDENT => {
                crate::progress!(
                    "[parallel] not started: {:.0}% of the pairs of moves conflict",
                    100.0 * (1.0 - s.independent())
                );
                return Err(Event::Done(kind, Verdict::Stopped, Times::default()));
            }
            Ok(s) => s,
            Err(e) if auto => {
                crate::progress!("[parallel] not started: {e}");
                return Err(Event::Done(kind, Verdict::Stopped, Times::default()));
            }
            Err(e) => {
                let msg = format!("parallel steps do not apply: {e}");
                return Err(Event::Failed(kind, msg, Times::default()));
            }
        };
        crate::progress!(
            "[parallel] {} moves, {:.1}% of their pairs never interfere; analysis {:.2} s",
            steps.moves,
            100.0 * steps.independent(),
            t0.elapsed().as_secs_f64()
        );
        let mut job = Job::parallel(&steps, program, 1, &self.context.opts);
        // Beside the others in auto it takes what they leave: where it does
        // not answer (the empty sudoku's parallel program takes clingo 9 s
        // at one step) it must not slow the worker that does. Measured:
        // sudoku 13.5 -> 11.7-12.0 s, nonogram_10x10_1 3.3 -> 7.3 s.
        if auto {
            job.step_back = crate::priority::BEHIND;
        }
        Ok(job)
    }
}

/// The job of a clingo worker of `kind` on `program`.
fn job_of(kind: WorkerKind, program: &super::Program, context: &SolveContext) -> Job {
    let opts = &context.opts;
    // In auto the incremental worker, the plain translation's way of solving,
    // searches with one thread and keeps its core; the full worker searches
    // with all the threads (clingo's portfolio of configurations, which pays
    // off on the hard exact-horizon games) on what the incremental one
    // leaves.
    let threads = if opts.mode == Mode::Auto && kind == WorkerKind::Incremental {
        1
    } else {
        opts.threads.max(1)
    };
    let mut job = Job::new(kind, program, threads, opts);
    if opts.mode == Mode::Auto && kind == WorkerKind::Full {
        job.step_back = crate::priority::BEHIND;
    }
    job
}

/// Starts one clingo worker on `job`: in a process of its own when the
/// options name the executable for it ([`super::SolveOptions::worker_exe`]),
/// else on a thread of this process. Returns the process id of a child.
fn spawn_clingo_worker(
    job: Job,
    context: &SolveContext,
    tx: &mpsc::Sender<Event>,
) -> Result<Option<u32>, SolveError> {
    if let Some(exe) = &context.opts.worker_exe {
        return process::spawn(exe, &job, &context.stop, &context.refuted, tx)
            .map(Some)
            .map_err(SolveError::Thread);
    }
    let kind = job.kind;
    let (stop, refuted, tx) = (
        Arc::clone(&context.stop),
        Arc::clone(&context.refuted),
        tx.clone(),
    );
    // The worker is made on its thread: it holds clingo's lock, which stays
    // there.
    spawn_thread(format!("asp-{}", kind.name()), move || {
        ClingoWorker::new(Arc::new(job), stop, refuted, tx).run()
    })
    .map(|()| None)
}

/// How long the breadth-first search of auto runs at full priority whatever
/// the other workers prove (the 8-puzzle's states fit in it). Past it, the
/// search steps back behind a clingo worker that is ahead of it, whose core
/// it would otherwise halve.
const BREADTH_CHEAP: Duration = Duration::from_secs(1);

/// Starts the breadth-first search on its own thread, at once: on a game
/// with few states it proves the optimum before clingo has grounded.
fn spawn_breadth(
    context: &Arc<SolveContext>,
    ground: Option<Arc<GroundProgram>>,
    tx: &mpsc::Sender<Event>,
) -> Result<(), SolveError> {
    let opts = &context.opts;
    let mut limits = forward::breadth::Limits::new(opts.max_steps, opts.memory_mb);
    limits.threads = opts.threads.max(1);
    if opts.mode == Mode::Auto {
        limits.step_back_after = Some(BREADTH_CHEAP);
        limits.may_lead = true;
    }
    let (context, tx) = (Arc::clone(context), tx.clone());
    spawn_thread("breadth".into(), move || {
        forward::breadth::run(&context, ground, limits, tx)
    })
}

/// Starts the forward search on its own thread: at once when it runs `alone`,
/// else after [`SEARCH_AFTER`] beside the clingo workers, or as soon as a
/// bound proves every plan long.
fn spawn_search(
    context: &Arc<SolveContext>,
    ground: Option<Arc<GroundProgram>>,
    alone: bool,
    tx: &mpsc::Sender<Event>,
) -> Result<(), SolveError> {
    let delay = if alone { Duration::ZERO } else { SEARCH_AFTER };
    let (context, tx) = (Arc::clone(context), tx.clone());
    spawn_thread("search".into(), move || {
        forward::run(&context, ground, forward::Start { delay, alone }, tx)
    })
}

pub(super) struct Coordinator {
    context: Arc<SolveContext>,
    horizon: usize,
    times: Times,
    candidate: Option<Verified>,
    /// The best verified plan below goal 100 (see [`Event::Fallback`]).
    fallback: Option<Verified>,
    /// The largest number of moves proven to hold no winning plan.
    refuted: usize,
    /// Once the breadth-first search leads: how many worker processes and
    /// follower threads have been sent back (see [`Coordinator::follow_lead`]).
    sent_back: Option<(usize, usize)>,
    /// Whether the linear invariants' goal ceiling is being proven (see
    /// [`super::linear::prove_ceiling`]).
    ceiling_started: bool,
}

impl Coordinator {
    /// A coordinator for the solve of `context`.
    pub(super) fn new(context: Arc<SolveContext>) -> Self {
        Coordinator {
            horizon: 0,
            times: Times::default(),
            candidate: None,
            fallback: None,
            refuted: context.opts.refuted,
            sent_back: None,
            ceiling_started: false,
            context,
        }
    }

    /// Follows the workers until one of them, the clock, the memory limit or
    /// the grace after a first plan decides the answer.
    pub(super) fn run(mut self, mut w: Workers) -> SolveResult {
        let mut r = self.decide(&mut w);
        r.processes = w.children.lock().unwrap_or_else(|e| e.into_inner()).len();
        r
    }

    fn decide(&mut self, w: &mut Workers) -> SolveResult {
        let deadline = self.context.opts.timeout.map(|t| self.context.start + t);
        let mut grace: Option<Instant> = None;
        loop {
            if let Some(r) = self.memory(w) {
                return r;
            }
            if let Some(r) = self.next_event(w, &mut grace) {
                return r;
            }
            if let Some(r) = self.replayed(w) {
                return r;
            }
            if let Some(r) = self.proven(w) {
                return r;
            }
            self.follow_lead(w);
            if let Some(r) = self.limits(w, grace, deadline) {
                return r;
            }
        }
    }

    /// Once the breadth-first search leads ([`SolveContext::lead`]), sends
    /// every worker process (each of its threads: clingo's solver threads
    /// too) and the depth-first search behind it, at
    /// [`crate::priority::FAR_BEHIND`]; a worker started later is sent back
    /// when it appears.
    fn follow_lead(&mut self, w: &Workers) {
        use crate::priority::{lower_process_to, lower_thread_to, FAR_BEHIND};
        if self.sent_back.is_none() && !self.context.lead.load(Ordering::Relaxed) {
            return;
        }
        let (processes, threads) = self.sent_back.unwrap_or((0, 0));
        let children = w.children.lock().unwrap_or_else(|e| e.into_inner());
        for &pid in children.iter().skip(processes) {
            let n = lower_process_to(pid, FAR_BEHIND);
            crate::progress!("[solve] worker process {pid} ({n} threads) steps back");
        }
        let followers = self.context.followers.lock();
        let followers = followers.unwrap_or_else(|e| e.into_inner());
        for &tid in followers.iter().skip(threads) {
            lower_thread_to(tid, FAR_BEHIND);
        }
        self.sent_back = Some((children.len(), followers.len()));
    }

    /// Waits a little for the workers' next event and takes it in; `Some`
    /// when it decides the answer.
    fn next_event(&mut self, w: &mut Workers, grace: &mut Option<Instant>) -> Option<SolveResult> {
        let opts = &self.context.opts;
        match w.rx.recv_timeout(Duration::from_millis(25)) {
            Ok(Event::Horizon(_, h, times)) => {
                self.horizon = self.horizon.max(h);
                self.times = times;
            }
            Ok(Event::Candidate(kind, found, times)) => {
                let (found, verified) = checked(&self.context, kind, found);
                let note = match verified {
                    Ok(note) => note,
                    // A parallel plan whose serialisation passes through a
                    // terminal state (which the analysis cannot rule out) is
                    // that worker's failure, not the solve's.
                    Err(e) if kind == WorkerKind::Parallel => {
                        crate::progress!("[parallel] a plan that does not replay: {e}");
                        w.failures
                            .push(format!("parallel: a plan that does not replay: {e}"));
                        return None;
                    }
                    Err(e) => return Some(self.error(kind, times, e)),
                };
                let better = self
                    .candidate
                    .as_ref()
                    .is_none_or(|v| v.found.plan.len() > found.plan.len());
                if better {
                    crate::progress!(
                        "[solve] plan of {} moves (not proven), from {}",
                        found.plan.len(),
                        kind.name()
                    );
                    self.candidate = Some(Verified {
                        kind,
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
                        *grace = Some(Instant::now() + grace_after(self.context.start.elapsed()));
                    } else if opts.timeout.is_none() {
                        *grace = Some(Instant::now() + PROOF_WAIT);
                    }
                }
            }
            Ok(Event::Fallback(kind, found)) => {
                let _ = w.fallback_tx.send((kind, found));
            }
            Ok(Event::Done(kind, outcome, times)) => {
                w.running -= 1;
                w.proving -= usize::from(kind.proves());
                match outcome {
                    Verdict::Plan(found) => return Some(self.finish(kind, found, times)),
                    Verdict::NoPlan { horizon, message } => {
                        self.horizon = self.horizon.max(horizon);
                        return Some(self.result(Status::NoPlan, Some(kind), times, message));
                    }
                    Verdict::Stopped => {}
                }
            }
            Ok(Event::Failed(kind, e, times)) => {
                w.running -= 1;
                w.proving -= usize::from(kind.proves());
                self.times = times;
                w.failures.push(format!("{}: {e}", kind.name()));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => w.running = 0,
        }
        None
    }

    /// The answer when this process and its worker processes together hold
    /// more than the memory limit: checked before each event is taken in, so
    /// that a solve past its limit stops whatever comes.
    fn memory(&mut self, w: &Workers) -> Option<SolveResult> {
        let limit = self.context.opts.memory_mb?;
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
    /// could prove one runs any more; a plan below 100 once it reaches the
    /// goal ceiling the bounds prove.
    fn proven(&mut self, w: &Workers) -> Option<SolveResult> {
        let refuted = self.context.refuted.load(Ordering::Relaxed);
        if refuted > self.refuted {
            self.refuted = refuted;
        }
        // A plan below 100 that reaches the goal ceiling: no play does better.
        let ceiling = self.context.goal_ceiling.load(Ordering::Relaxed);
        if ceiling != NO_CEILING
            && self.candidate.is_none()
            && self
                .fallback
                .as_ref()
                .is_some_and(|f| f.found.goal >= ceiling)
        {
            let mut v = self.fallback.take()?;
            crate::progress!(
                "[solve] no play reaches a goal above {ceiling}: goal {} is the best",
                v.found.goal
            );
            v.found.proven = Proven::BestGoal;
            v.note = Some(match v.note {
                Some(n) => format!("{n}; the bounds prove no play reaches a higher goal"),
                None => "the bounds prove no play reaches a higher goal".into(),
            });
            return Some(self.answer(v));
        }
        let len = self.candidate.as_ref()?.found.plan.len();
        if len <= self.refuted + 1 {
            let mut v = self.candidate.take()?;
            crate::progress!(
                "[solve] no plan of {} or fewer: {len} is shortest",
                len.saturating_sub(1)
            );
            v.found.proven = Proven::Shortest;
            return Some(self.answer(v));
        }
        let opts = &self.context.opts;
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
                    if !self.ceiling_started && self.context.opts.invariants {
                        self.ceiling_started = true;
                        let context = Arc::clone(&self.context);
                        let plan = v.found.plan.clone();
                        let _ = spawn_thread("asp-linear".into(), move || {
                            super::linear::prove_ceiling(&context, plan)
                        });
                    }
                    self.fallback = Some(v);
                }
                None
            }
            Ok(Err(e)) => Some(self.error(WorkerKind::Search, self.times, e)),
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
            let secs = self.context.start.elapsed().as_secs_f64();
            // The searches' bound may be past clingo's horizon (A* on a
            // sliding puzzle): say both.
            let refuted = self.context.refuted.load(Ordering::Relaxed);
            let msg = if w.clingo {
                format!(
                    "timeout after {secs:.1} s; horizon {} searched without a winning plan{}",
                    self.horizon,
                    if refuted > self.horizon {
                        format!("; no plan of {refuted} or fewer moves")
                    } else {
                        String::new()
                    }
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
        mode: Option<WorkerKind>,
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
            total_s: self.context.start.elapsed().as_secs_f64(),
            horizon: self.horizon,
            lower_bound: (self.refuted > 0 && status != Status::NoPlan).then_some(self.refuted + 1),
            peak_mb: peak_mb(),
            processes: 0,
            message,
            source: Source::Solved,
        }
    }

    fn error(&self, kind: WorkerKind, times: Times, e: String) -> SolveResult {
        self.result(
            Status::Error,
            Some(kind),
            times,
            format!("the plan does not replay on the prover: {e}"),
        )
    }

    /// A plan, once the prover has replayed it, becomes the answer.
    fn finish(&self, mode: WorkerKind, found: FoundPlan, times: Times) -> SolveResult {
        let (found, verified) = checked(&self.context, mode, found);
        match verified {
            Ok(note) => self.answer(Verified {
                kind: mode,
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
            kind: mode,
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
            // What the parallel horizons prove, and what they do not.
            Proven::None if mode == WorkerKind::Parallel => format!(
                "plan to goal {} (not proven optimal: its moves shared parallel steps, \
                 and a parallel plan's length bounds no serial plan's{})",
                found.goal,
                if self.refuted > 0 {
                    format!("; no plan of {} or fewer moves", self.refuted)
                } else {
                    String::new()
                }
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
                .map(|m| term_to_string(m, &self.context.game.symbols))
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
                let ceiling = self.context.goal_ceiling.load(Ordering::Relaxed);
                if ceiling != NO_CEILING {
                    r.message = format!("{}; no play reaches a goal above {ceiling}", r.message);
                }
                r
            }
            (None, None) => self.result(status, None, self.times, message),
        }
    }
}
