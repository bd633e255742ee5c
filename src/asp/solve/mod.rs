//! Solving a [`Program`] with clingo: full grounding with a deepening horizon,
//! incremental multi-shot solving, and both at once (`auto`).
//!
//! Each way of solving runs on its own thread with its own clingo `Control` (a
//! `Control` cannot cross threads) and reports to a coordinator over a channel:
//! plans found on the way ([`Event::Candidate`]) and its final word
//! ([`Event::Done`]). The coordinator replays every plan on the reference prover
//! before it counts (see [`super::verify`]), watches the clock and the memory
//! limit, and stops the workers through a shared flag: a solve call is cancelled
//! within a few milliseconds; a grounding call cannot be interrupted, so on a
//! timeout the coordinator answers at once and leaves the worker to notice the
//! flag when its grounding returns (the command line exits right away).
//!
//! What a worker proves:
//! - a winning plan found at the shortest horizon tried so far, or by optimising
//!   the number of moves, is *shortest*;
//! - when no play can last beyond a horizon (the `alive` query fails), or the
//!   horizon reaches `--max-steps` without a win, the best goal is found by
//!   optimisation at that horizon: *best-goal*.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

use clingo::{
    Control, Part, ShowType, SolveMode, SolveResult as ClingoResult, Symbol, SymbolType, TruthValue,
};

use crate::gdl::{Game, Term};

use super::control::{err, lock, Res};
use super::program::Program;
use super::symbols::SymbolMap;
use super::translate::Factor;
use super::{Mode, Proven, SolveOptions};
use serde::{Deserialize, Serialize};

/// What a worker found. `plan` is in step order; `goal` is what the program claims.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Found {
    pub plan: Vec<Term>,
    pub goal: u8,
    pub proven: Proven,
}

/// A worker's final word.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Outcome {
    /// A plan (to goal 100, or the best goal).
    Plan(Found),
    /// No play reaches a terminal state with a goal above 0 within the horizon.
    NoPlan { horizon: usize, message: String },
    /// The worker stopped (stop flag) or ran out of horizons.
    Stopped,
}

/// Messages from a worker to the coordinator.
#[derive(Debug, Serialize, Deserialize)]
pub enum Event {
    Candidate(Mode, Found, Times),
    /// A plan to a goal below 100 found on the way: the answer only when the
    /// budget runs out before anything better (reported as a timeout).
    Fallback(Mode, Found),
    Done(Mode, Outcome, Times),
    Failed(Mode, String, Times),
    /// The largest horizon fully solved so far.
    Horizon(Mode, usize, Times),
}

/// Grounding and solving seconds spent by one worker.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Times {
    pub ground_s: f64,
    pub solve_s: f64,
}

/// What a clingo worker solves: the program in the form its mode grounds,
/// what reads its models back, and its settings. A worker process
/// ([`super::process`]) gets it whole.
#[derive(Serialize, Deserialize)]
pub struct Job {
    pub mode: Mode,
    /// The program's full form ([`Program::full`]): the full worker's, and
    /// the incremental worker's for the best goal.
    pub full: String,
    /// The incremental form ([`Program::incremental`]), for that worker.
    pub incremental: Option<String>,
    pub map: SymbolMap,
    pub factors: Vec<Factor>,
    /// See [`Program::ends_by`].
    pub ends_by: Option<usize>,
    pub threads: usize,
    pub opts: SolveOptions,
}

impl Job {
    /// The job of a worker of `mode` (full or incremental) on `program`.
    pub fn new(mode: Mode, program: &Program, threads: usize, opts: &SolveOptions) -> Job {
        Job {
            mode,
            full: program.full(),
            incremental: (mode == Mode::Incremental).then(|| program.incremental()),
            map: program.translation.map.clone(),
            factors: program.translation.factors.clone(),
            ends_by: program.ends_by,
            threads,
            opts: opts.clone(),
        }
    }
}

/// What a worker needs: its job, the stop flag, the shared lower bound and
/// the channel to the coordinator.
pub struct Worker {
    pub mode: Mode,
    pub job: Arc<Job>,
    pub opts: SolveOptions,
    pub threads: usize,
    pub stop: Arc<AtomicBool>,
    /// The largest horizon proven to hold no winning plan, by any worker: in
    /// auto, the incremental worker's proofs close the full worker's smaller
    /// horizons.
    pub refuted: Arc<AtomicUsize>,
    pub tx: mpsc::Sender<Event>,
    pub times: Times,
    /// When the solve call under way started (its seconds are not yet in `times`).
    pub solving_since: Option<Instant>,
    /// This worker's hold on clingo (see [`super::control::lock`]).
    pub guard: Option<MutexGuard<'static, ()>>,
}

/// A grounded horizon of the full worker whose search is under way.
struct Open {
    h: usize,
    ctl: Control,
    /// Its ground atoms (a measure of the memory it holds).
    atoms: usize,
    /// Solving time spent on it so far.
    spent: Duration,
    /// Its grounding time.
    ground: Duration,
}

/// How long the newest open horizon searches (and at least twice its grounding
/// time, and half the time so far) before the next one is grounded. Long enough
/// that the games whose first satisfiable horizon is merely slow keep it nearly
/// to themselves (coins2 at 9 steps, 1.7 s alone: a timeout when four horizons
/// opened after 0.5 s each took equal turns), short enough that a horizon only
/// a counting argument away from unsatisfiable does not hold up the next
/// (futoshiki4 at 14 steps).
const OPEN_AFTER: Duration = Duration::from_secs(2);

/// The most horizons grounded at once, and the most ground atoms they hold
/// together (each keeps its ground program; 2 million atoms are about 1 GiB on
/// the corpus's largest programs).
const MAX_OPEN: usize = 4;
const MAX_OPEN_ATOMS: usize = 2_000_000;

/// One turn of an open horizon: an eighth of the time spent so far, between a
/// quarter of a second (a turn restarts the search threads and reassigns the
/// query) and 4 s.
fn slice(elapsed: Duration) -> Duration {
    (elapsed / 8).clamp(Duration::from_millis(250), Duration::from_secs(4))
}

/// The answer of one solve call.
enum Answer {
    /// Models were found; the last is the best; `optimal` when optimality (or, for
    /// plain satisfiability, the search) is complete.
    Sat {
        atoms: Vec<Symbol>,
        optimal: bool,
    },
    Unsat,
    Interrupted {
        atoms: Option<Vec<Symbol>>,
    },
    /// The time slice ran out before the first model (the search may resume on
    /// the same `Control`, with what it has learnt).
    Paused,
}

impl Worker {
    fn progress(&self, text: &str) {
        if self.opts.progress {
            eprintln!("[{}] {text}", self.mode.name());
        }
    }

    /// The seconds spent so far, the solve call under way included.
    fn times_now(&self) -> Times {
        let mut t = self.times;
        if let Some(since) = self.solving_since {
            t.solve_s += since.elapsed().as_secs_f64();
        }
        t
    }

    /// The time this worker has spent grounding and solving.
    fn busy(&self) -> Duration {
        Duration::from_secs_f64(self.times.ground_s + self.times.solve_s)
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn control(&self) -> Res<Control> {
        let mut args = vec!["--models=0".to_string()];
        // Measured on the corpus's hanoi, 8puzzle and lightsOut (with invariants):
        // the full worker finds first plans fastest with jumpy, the incremental
        // one with trendy (8puzzle 1.0 s against 1.9 s with the default); two
        // different configurations also make auto a small portfolio.
        let config = if self.mode == Mode::Full {
            "jumpy"
        } else {
            "trendy"
        };
        args.push(format!("--configuration={config}"));
        if self.threads > 1 {
            args.push(format!("--parallel-mode={}", self.threads));
        }
        args.extend(self.opts.clingo_args.iter().cloned());
        super::control::new(&args)
    }

    fn ground(&mut self, ctl: &mut Control, parts: &[Part]) -> Res<()> {
        let t0 = Instant::now();
        let r = ctl.ground(parts).map_err(err);
        self.times.ground_s += t0.elapsed().as_secs_f64();
        r
    }

    /// Solves under `assumptions` (external atoms set true), collecting models
    /// until the optimum is proven, or only the first model when `first_only`;
    /// `on_model` sees each model's atoms as it comes.
    fn solve(
        &mut self,
        ctl: Control,
        assumptions: &[Symbol],
        first_only: bool,
        on_model: impl FnMut(&mut Self, &[Symbol]),
    ) -> Res<(Control, Answer)> {
        self.solve_for(ctl, assumptions, first_only, None, on_model)
    }

    /// [`Worker::solve`] with a time `slice`: when it runs out before the first
    /// model, the search is cancelled and the answer is [`Answer::Paused`]. Once a
    /// model is found the slice no longer applies (optimisation runs to its end).
    fn solve_for(
        &mut self,
        ctl: Control,
        assumptions: &[Symbol],
        first_only: bool,
        slice: Option<Duration>,
        mut on_model: impl FnMut(&mut Self, &[Symbol]),
    ) -> Res<(Control, Answer)> {
        let t0 = Instant::now();
        self.solving_since = Some(t0);
        let mut lits = Vec::new();
        {
            let atoms = ctl.symbolic_atoms().map_err(err)?;
            for a in atoms.iter().map_err(err)? {
                let s = a.symbol().map_err(err)?;
                if assumptions.contains(&s) {
                    lits.push(a.literal().map_err(err)?);
                }
            }
        }
        if lits.len() != assumptions.len() {
            return Err("the query atoms are missing from the ground program".into());
        }
        // External atoms are false unless assigned: switch the query on for this
        // call only (an assumption could not override the default false).
        let mut ctl = ctl;
        for &l in &lits {
            ctl.assign_external(l, TruthValue::True).map_err(err)?;
        }
        let mut handle = ctl
            .solve(SolveMode::ASYNC | SolveMode::YIELD, &[])
            .map_err(err)?;
        let mut last: Option<Vec<Symbol>> = None;
        let mut interrupted = false;
        let mut paused = false;
        loop {
            self.guard = None;
            while !handle.wait(Duration::from_millis(20)) {
                if self.stopped() {
                    interrupted = true;
                    break;
                }
                if last.is_none() && slice.is_some_and(|s| t0.elapsed() >= s) {
                    paused = true;
                    break;
                }
            }
            self.guard = Some(lock());
            if interrupted || paused {
                handle.cancel().map_err(err)?;
                break;
            }
            match handle.model().map_err(err)? {
                Some(m) => {
                    let atoms = m.symbols(ShowType::ATOMS).map_err(err)?;
                    on_model(self, &atoms);
                    last = Some(atoms);
                    if first_only {
                        handle.cancel().map_err(err)?;
                        break;
                    }
                    handle.resume().map_err(err)?;
                }
                None => break,
            }
        }
        let result = handle.get().map_err(err)?;
        let mut ctl = handle.close().map_err(err)?;
        for &l in &lits {
            ctl.assign_external(l, TruthValue::False).map_err(err)?;
        }
        self.times.solve_s += t0.elapsed().as_secs_f64();
        self.solving_since = None;
        let answer = if first_only && last.is_some() {
            Answer::Sat {
                atoms: last.unwrap_or_default(),
                optimal: false,
            }
        } else if paused && !interrupted && last.is_none() {
            Answer::Paused
        } else if interrupted || result.contains(ClingoResult::INTERRUPTED) {
            Answer::Interrupted { atoms: last }
        } else if let Some(atoms) = last {
            Answer::Sat {
                atoms,
                optimal: result.contains(ClingoResult::EXHAUSTED),
            }
        } else {
            Answer::Unsat
        };
        Ok((ctl, answer))
    }

    fn send(&self, e: Event) {
        // The coordinator may have answered already; nobody listens then.
        let _ = self.tx.send(e);
    }

    /// Runs the worker to its final word, always sending one `Done` or `Failed`.
    pub fn run(mut self) {
        self.guard = Some(lock());
        let r = match self.mode {
            Mode::Incremental => self.incremental(),
            _ => self.full(),
        };
        let times = self.times;
        match r {
            Ok(outcome) => self.send(Event::Done(self.mode, outcome, times)),
            Err(e) => self.send(Event::Failed(self.mode, e, times)),
        }
    }

    /// The horizons full grounding tries: small first, growing by half, ending at
    /// `max_steps`, and never jumping past the length of the game when a clock
    /// bounds it (where clingo then proves that no play lasts longer: a horizon
    /// beyond it would ground more for nothing, twice as much on
    /// ruleDepthExponential, whose steps each ground twice the one before).
    fn horizons(&self) -> Vec<usize> {
        horizons(self.opts.max_steps, self.job.ends_by)
    }

    /// Grounds the full program at horizon `h`: the control, its ground atoms and
    /// the grounding seconds.
    fn ground_full(&mut self, text: &str, h: usize) -> Res<(Control, usize, f64)> {
        let mut ctl = self.control()?;
        ctl.add("base", &[], &format!("{text}\nhorizon({h}).\n"))
            .map_err(err)?;
        let g0 = self.times.ground_s;
        self.ground(&mut ctl, &[Part::new("base", vec![]).map_err(err)?])?;
        let atoms = ctl.symbolic_atoms().and_then(|a| a.size()).unwrap_or(0);
        Ok((ctl, atoms, self.times.ground_s - g0))
    }

    /// Full grounding with a deepening horizon, the searches of several horizons
    /// interleaved in time slices.
    ///
    /// Why not one horizon after the other: on fill-in puzzles (futoshiki, hidato,
    /// sudoku: one move per empty cell) every horizon below the plan's length is
    /// unsatisfiable for a counting reason that clasp can only prove by
    /// exhaustion (futoshiki4 at 14 steps: no answer in 20 s), while the next
    /// horizon has a plan found in a fraction of a second (15 steps: 0.3 s).
    /// So once the newest horizon has searched for [`OPEN_AFTER`] without an
    /// answer, the next one is grounded, and the open horizons take turns
    /// ([`slice`]), each newer one at a quarter of the rate of the one before
    /// (in the spirit of Rintanen's "algorithm B"; each `Control` keeps what it
    /// has learnt between its turns). At most [`MAX_OPEN`] are kept; the
    /// smallest is dropped, unproven. Horizons that the incremental worker has
    /// refuted meanwhile ([`Worker::refuted`]) are closed or skipped.
    ///
    /// What is proven does not change: an unsatisfiable horizon closes every
    /// smaller one, and a plan whose length clingo then minimises to the optimum
    /// at its horizon is shortest (a shorter plan would fit that horizon too).
    fn full(&mut self) -> Res<Outcome> {
        let job = Arc::clone(&self.job);
        let text = &job.full;
        let horizons = self.horizons();
        let map = self.job.map.clone();
        let factors = self.job.factors.clone();
        let query = id("query")?;
        let started = Instant::now();
        let mut next = 0;
        let mut open: Vec<Open> = Vec::new();
        loop {
            if self.stopped() {
                return Ok(Outcome::Stopped);
            }
            let refuted = self.refuted.load(Ordering::Relaxed);
            open.retain(|o| o.h > refuted);
            while next + 1 < horizons.len() && horizons[next] <= refuted {
                next += 1;
            }
            // Measured on this worker's own grounding and solving time, not
            // the wall clock: waiting for clingo's lock (held by the other
            // workers, or by other solvers of the process) is not work done,
            // and with it counted the newest horizon never caught up with
            // half the time so far on a busy machine.
            let newest_done = open
                .last()
                .is_none_or(|o| o.spent >= OPEN_AFTER.max(o.ground * 2).max(self.busy() / 2));
            if next < horizons.len() && newest_done {
                let h = horizons[next];
                next += 1;
                // Several grounded horizons at once must not take the memory
                // limit's room: past half of it, only the newest is kept.
                let crowded = self
                    .opts
                    .memory_mb
                    .is_some_and(|m| super::resident_mb() > m as f64 / 2.0);
                let atoms_open = |open: &[Open]| open.iter().map(|o| o.atoms).sum::<usize>();
                while open.len() >= MAX_OPEN
                    || (!open.is_empty() && (crowded || atoms_open(&open) > MAX_OPEN_ATOMS))
                {
                    let o = open.remove(0);
                    self.progress(&format!("horizon {}: left unproven", o.h));
                }
                let (ctl, atoms, ground_s) = self.ground_full(text, h)?;
                if self.stopped() {
                    return Ok(Outcome::Stopped);
                }
                self.progress(&format!(
                    "horizon {h}: {atoms} atoms, ground {ground_s:.2} s"
                ));
                open.push(Open {
                    h,
                    ctl,
                    atoms,
                    spent: Duration::ZERO,
                    ground: Duration::from_secs_f64(ground_s),
                });
                continue;
            }
            // Whose turn: the oldest (smallest) open horizon searches at rate 1,
            // the next at 1/4, then 1/16, ...; the turn goes to the least spent
            // time over rate. Equal turns slowed the games whose first
            // satisfiable horizon is merely slow (coins2, comp2006 queens);
            // favouring the newest opened horizons up to 200 within seconds.
            let Some(i) = (0..open.len()).min_by_key(|&i| open[i].spent * (1 << (2 * i))) else {
                return Ok(Outcome::Stopped);
            };
            let Open {
                h,
                ctl,
                atoms,
                spent,
                ground,
            } = open.remove(i);
            // The last horizon alone searches without a slice.
            let alone = open.is_empty() && next >= horizons.len();
            let turn = slice(self.busy());
            let s0 = self.times.solve_s;
            let mut first = true;
            let (ctl, answer) = self.solve_for(
                ctl,
                &[query],
                false,
                (!alone).then_some(turn),
                |w, atoms| {
                    if first {
                        first = false;
                        if let Some(plan) = plan_of(&map, &factors, atoms) {
                            w.progress(&format!(
                                "horizon {h}: a plan of {} moves after {:.2} s",
                                plan.len(),
                                started.elapsed().as_secs_f64()
                            ));
                            let found = Found {
                                plan,
                                goal: 100,
                                proven: Proven::None,
                            };
                            w.send(Event::Candidate(w.mode, found, w.times_now()));
                        }
                    }
                },
            )?;
            let solve_s = self.times.solve_s - s0;
            let head = format!("horizon {h}: solve {:.2} s", spent.as_secs_f64() + solve_s);
            match answer {
                Answer::Paused => {
                    open.insert(
                        i,
                        Open {
                            h,
                            ctl,
                            atoms,
                            spent: spent + Duration::from_secs_f64(solve_s),
                            ground,
                        },
                    );
                    continue;
                }
                Answer::Sat { atoms, optimal } => {
                    self.progress(&format!("{head}: plan found"));
                    let plan =
                        plan_of(&map, &factors, &atoms).ok_or("a model without a readable plan")?;
                    let proven = if optimal {
                        Proven::Shortest
                    } else {
                        Proven::None
                    };
                    return Ok(Outcome::Plan(Found {
                        plan,
                        goal: 100,
                        proven,
                    }));
                }
                Answer::Interrupted { atoms } => {
                    if let Some(plan) = atoms.and_then(|a| plan_of(&map, &factors, &a)) {
                        return Ok(Outcome::Plan(Found {
                            plan,
                            goal: 100,
                            proven: Proven::None,
                        }));
                    }
                    return Ok(Outcome::Stopped);
                }
                Answer::Unsat => {
                    self.progress(&format!("{head}: no winning plan"));
                    // No plan within h: none within a smaller horizon either.
                    self.refuted.fetch_max(h, Ordering::Relaxed);
                    open.retain(|o| o.h > h);
                }
            }
            let (ctl, answer) = self.solve(ctl, &[id("alive")?], true, |_, _| {})?;
            let bounded = matches!(answer, Answer::Unsat);
            if matches!(answer, Answer::Interrupted { .. } | Answer::Paused) {
                return Ok(Outcome::Stopped);
            }
            self.send(Event::Horizon(self.mode, h, self.times));
            if bounded || h >= self.opts.max_steps {
                if bounded {
                    self.progress(&format!("no play lasts beyond {h} steps"));
                }
                return self.best_goal_with(ctl, h, bounded);
            }
        }
    }

    /// The best goal at horizon `h` on a grounded full program.
    fn best_goal_with(&mut self, ctl: Control, h: usize, bounded: bool) -> Res<Outcome> {
        let map = self.job.map.clone();
        let factors = self.job.factors.clone();
        let (_, answer) = self.solve(ctl, &[id("best")?], false, |_, _| {})?;
        let limit = if bounded {
            format!("no play lasts beyond {h} steps")
        } else {
            format!("within --max-steps {h}")
        };
        match answer {
            Answer::Sat { atoms, optimal } => {
                let plan =
                    plan_of(&map, &factors, &atoms).ok_or("a model without a readable plan")?;
                let goal = goal_of(&map, &atoms).unwrap_or(0);
                if goal == 0 {
                    return Ok(Outcome::NoPlan {
                        horizon: h,
                        message: format!("no plan reaches a goal above 0 ({limit})"),
                    });
                }
                Ok(Outcome::Plan(Found {
                    plan,
                    goal,
                    proven: if optimal {
                        Proven::BestGoal
                    } else {
                        Proven::None
                    },
                }))
            }
            Answer::Unsat => Ok(Outcome::NoPlan {
                horizon: h,
                message: format!("no play reaches a terminal state ({limit})"),
            }),
            Answer::Interrupted { .. } | Answer::Paused => Ok(Outcome::Stopped),
        }
    }

    /// Best goal by full grounding at horizon `h` (used by the incremental worker).
    fn best_goal(&mut self, h: usize, bounded: bool) -> Res<Outcome> {
        let mut ctl = self.control()?;
        ctl.add("base", &[], &format!("{}\nhorizon({h}).\n", self.job.full))
            .map_err(err)?;
        self.ground(&mut ctl, &[Part::new("base", vec![]).map_err(err)?])?;
        self.best_goal_with(ctl, h, bounded)
    }

    /// Multi-shot solving, one step per round.
    fn incremental(&mut self) -> Res<Outcome> {
        let map = self.job.map.clone();
        let factors = self.job.factors.clone();
        let mut ctl = self.control()?;
        let job = Arc::clone(&self.job);
        let text = job.incremental.as_deref().ok_or("no incremental program")?;
        ctl.add("base", &[], text).map_err(err)?;
        let num = |t: usize| Symbol::create_number(t as i32);
        self.ground(
            &mut ctl,
            &[
                Part::new("base", vec![]).map_err(err)?,
                Part::new("check", vec![num(0)]).map_err(err)?,
            ],
        )?;
        let mut t = 0;
        loop {
            if self.stopped() {
                return Ok(Outcome::Stopped);
            }
            let query = func("query", t)?;
            let (c, answer) = self.solve(ctl, &[query], true, |_, _| {})?;
            ctl = c;
            let atoms = ctl.symbolic_atoms().and_then(|a| a.size()).unwrap_or(0);
            let head = format!(
                "step {t}: {atoms} atoms, {} rules, ground {:.2} s, solve {:.2} s (total)",
                stat(&ctl, &["problem", "lp", "rules"]),
                self.times.ground_s,
                self.times.solve_s
            );
            match answer {
                Answer::Sat { atoms, .. } => {
                    self.progress(&format!("{head}: plan found"));
                    let plan =
                        plan_of(&map, &factors, &atoms).ok_or("a model without a readable plan")?;
                    return Ok(Outcome::Plan(Found {
                        plan,
                        goal: 100,
                        proven: Proven::Shortest,
                    }));
                }
                Answer::Interrupted { .. } | Answer::Paused => return Ok(Outcome::Stopped),
                Answer::Unsat => {
                    self.progress(&format!("{head}: no winning plan"));
                    self.refuted.fetch_max(t, Ordering::Relaxed);
                }
            }
            let alive = func("alive", t)?;
            let (c, answer) = self.solve(ctl, &[alive], true, |_, _| {})?;
            ctl = c;
            match answer {
                Answer::Interrupted { .. } | Answer::Paused => return Ok(Outcome::Stopped),
                Answer::Unsat => {
                    self.progress(&format!("no play lasts beyond {t} steps"));
                    return self.best_goal(t, true);
                }
                Answer::Sat { .. } => {}
            }
            self.send(Event::Horizon(self.mode, t, self.times));
            if t >= self.opts.max_steps {
                return self.best_goal(t, false);
            }
            for sym in [query, alive] {
                if let Some(lit) = literal_of(&ctl, sym)? {
                    ctl.release_external(lit).map_err(err)?;
                }
            }
            t += 1;
            self.ground(
                &mut ctl,
                &[
                    Part::new("step", vec![num(t)]).map_err(err)?,
                    Part::new("check", vec![num(t)]).map_err(err)?,
                ],
            )?;
        }
    }
}

/// See [`Worker::horizons`].
fn horizons(max: usize, ends_by: Option<usize>) -> Vec<usize> {
    let mut out = Vec::new();
    let mut h = 4.min(max).max(1);
    loop {
        out.push(h);
        if h >= max {
            break;
        }
        let mut next = (h + h.div_ceil(2)).min(max);
        if let Some(end) = ends_by.filter(|&e| h < e && e < next) {
            next = end;
        }
        h = next;
    }
    out
}

fn id(name: &str) -> Res<Symbol> {
    Symbol::create_id(name, true).map_err(err)
}

fn func(name: &str, t: usize) -> Res<Symbol> {
    Symbol::create_function(name, &[Symbol::create_number(t as i32)], true).map_err(err)
}

fn literal_of(ctl: &Control, sym: Symbol) -> Res<Option<clingo::SolverLiteral>> {
    let atoms = ctl.symbolic_atoms().map_err(err)?;
    for a in atoms.iter().map_err(err)? {
        if a.symbol().map_err(err)? == sym {
            return Ok(Some(a.literal().map_err(err)?));
        }
    }
    Ok(None)
}

/// A statistic by its path (`problem.lp.rules`), 0 when absent.
fn stat(ctl: &Control, path: &[&str]) -> u64 {
    let Ok(stats) = ctl.statistics() else {
        return 0;
    };
    let mut key = match stats.root() {
        Ok(k) => k,
        Err(_) => return 0,
    };
    for p in path {
        match stats.map_at(key, p) {
            Ok(k) => key = k,
            Err(_) => return 0,
        }
    }
    stats.value_get(key).map(|v| v as u64).unwrap_or(0)
}

/// The plan in a model: the moves `does(R,M,T)` ordered by `T`, and those of a
/// factored role rebuilt from its `does_arg(R,I,V,T)` (see [`Factor`]).
fn plan_of(map: &SymbolMap, factors: &[Factor], atoms: &[Symbol]) -> Option<Vec<Term>> {
    let mut moves: Vec<(i32, Term)> = Vec::new();
    let mut parts: BTreeMap<(i32, usize), Vec<(i32, Term)>> = BTreeMap::new();
    for s in atoms {
        if s.symbol_type().ok()? != SymbolType::Function {
            continue;
        }
        let args = s.arguments().ok()?;
        match (s.name().ok()?, args.len()) {
            ("does", 3) => moves.push((args[2].number().ok()?, map.to_term(args[1])?)),
            ("does_arg", 4) => {
                let role = args[0].to_string();
                let f = factors.iter().position(|f| f.role == role)?;
                parts
                    .entry((args[3].number().ok()?, f))
                    .or_default()
                    .push((args[1].number().ok()?, map.to_term(args[2])?));
            }
            _ => {}
        }
    }
    for ((t, f), mut values) in parts {
        values.sort_by_key(|(i, _)| *i);
        if values.len() != factors[f].arity {
            return None;
        }
        let args = values.into_iter().map(|(_, v)| v).collect();
        moves.push((t, Term::Func(factors[f].functor, args)));
    }
    moves.sort_by_key(|(t, _)| *t);
    Some(moves.into_iter().map(|(_, m)| m).collect())
}

/// The goal at the first terminal step of a model (`first(T)`, `goal(R,G,T)`,
/// `role(R)`).
fn goal_of(map: &SymbolMap, atoms: &[Symbol]) -> Option<u8> {
    let fn_args = |s: &Symbol, name: &str, n: usize| -> Option<Vec<Symbol>> {
        (s.symbol_type().ok()? == SymbolType::Function && s.name().ok()? == name)
            .then(|| s.arguments().ok())
            .flatten()
            .filter(|a| a.len() == n)
    };
    let first = atoms
        .iter()
        .find_map(|s| fn_args(s, "first", 1))?
        .first()?
        .number()
        .ok()?;
    // Goals of the roles only: a game may define goals for other names
    // (mummymaze1p's `mummy`, which is no role).
    let roles: Vec<Symbol> = atoms
        .iter()
        .filter_map(|s| Some(fn_args(s, "role", 1)?[0]))
        .collect();
    // The best value, should a defective game give several at once.
    atoms
        .iter()
        .filter_map(|s| {
            let a = fn_args(s, "goal", 3)?;
            if a[2].number().ok()? != first || !roles.contains(&a[0]) {
                return None;
            }
            let term = map.to_term(a[1])?;
            match term {
                Term::Const(_) => a[1].number().ok().and_then(|n| u8::try_from(n).ok()),
                _ => None,
            }
        })
        .max()
}

/// Whether a game is one the solver accepts.
pub fn check_single_player(game: &Game) -> Result<(), String> {
    if game.roles.len() != 1 {
        return Err(format!(
            "{} has {} roles: the ASP solver plans for single-player games only",
            game.source,
            game.roles.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::horizons;

    #[test]
    fn horizons_grow_by_half_and_stop_at_the_game_length() {
        assert_eq!(horizons(30, None), vec![4, 6, 9, 14, 21, 30]);
        assert_eq!(horizons(30, Some(19)), vec![4, 6, 9, 14, 19, 29, 30]);
        // A length on the schedule, or beyond the limit, changes nothing.
        assert_eq!(horizons(30, Some(14)), vec![4, 6, 9, 14, 21, 30]);
        assert_eq!(horizons(30, Some(40)), vec![4, 6, 9, 14, 21, 30]);
        assert_eq!(horizons(2, Some(1)), vec![2]);
    }
}
