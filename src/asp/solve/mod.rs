//! Solving a [`Program`] with clingo: full grounding with a deepening horizon,
//! incremental multi-shot solving, and both at once (`auto`). The two workers
//! are in `full.rs` and `incremental.rs`; this file holds what they share.
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
use super::{Proven, SolveOptions, WorkerKind};
use serde::{Deserialize, Serialize};

mod full;
mod incremental;
mod parallel;

/// What a worker found. `plan` is in step order; `goal` is what the program claims.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FoundPlan {
    pub plan: Vec<Term>,
    pub goal: u8,
    pub proven: Proven,
}

/// A worker's final word.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Verdict {
    /// A plan (to goal 100, or the best goal).
    Plan(FoundPlan),
    /// No play reaches a terminal state with a goal above 0 within the horizon.
    NoPlan { horizon: usize, message: String },
    /// The worker stopped (stop flag) or ran out of horizons.
    Stopped,
}

/// Messages from a worker to the coordinator.
#[derive(Debug, Serialize, Deserialize)]
pub enum Event {
    Candidate(WorkerKind, FoundPlan, Times),
    /// A plan to a goal below 100 found on the way: the answer only when the
    /// budget runs out before anything better (reported as a timeout).
    Fallback(WorkerKind, FoundPlan),
    Done(WorkerKind, Verdict, Times),
    Failed(WorkerKind, String, Times),
    /// The largest horizon fully solved so far.
    Horizon(WorkerKind, usize, Times),
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
    /// Full or incremental.
    pub kind: WorkerKind,
    /// The program's full form ([`Program::full`]): the full worker's, and
    /// the incremental worker's for the best goal.
    pub full: String,
    /// The incremental form ([`Program::incremental`]), for that worker.
    pub incremental: Option<String>,
    /// The parallel worker's free-state program
    /// ([`super::parallel::ParallelSteps::free_state`]); its `full` is the
    /// parallel program.
    #[serde(default)]
    pub free_state: Option<String>,
    pub map: SymbolMap,
    pub factors: Vec<Factor>,
    /// See [`Program::ends_by`].
    pub ends_by: Option<usize>,
    pub threads: usize,
    pub opts: SolveOptions,
    /// Nice levels the worker steps back by before it starts (see
    /// [`crate::priority`]); its solver threads inherit them.
    pub step_back: i32,
}

impl Job {
    /// The job of a worker of `kind` (full or incremental) on `program`.
    pub fn new(kind: WorkerKind, program: &Program, threads: usize, opts: &SolveOptions) -> Job {
        Job {
            kind,
            full: program.full(),
            incremental: (kind == WorkerKind::Incremental).then(|| program.incremental()),
            free_state: None,
            map: program.translation.map.clone(),
            factors: program.translation.factors.clone(),
            ends_by: program.ends_by,
            threads,
            opts: opts.clone(),
            step_back: 0,
        }
    }

    /// The parallel worker's job on `steps`, the analysis of `program`'s game.
    pub fn parallel(
        steps: &super::parallel::ParallelSteps,
        program: &Program,
        threads: usize,
        opts: &SolveOptions,
    ) -> Job {
        Job {
            kind: WorkerKind::Parallel,
            full: steps.program(&program.name),
            incremental: None,
            free_state: Some(steps.free_state()),
            map: program.translation.map.clone(),
            factors: Vec::new(),
            ends_by: None,
            threads,
            opts: opts.clone(),
            step_back: 0,
        }
    }
}

/// What a worker needs: its job, the stop flag, the shared lower bound and
/// the channel to the coordinator.
pub struct ClingoWorker {
    pub kind: WorkerKind,
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

impl ClingoWorker {
    /// A worker of `job`, stopped by `stop`, sharing the lower bound
    /// `refuted`, reporting on `tx`.
    pub fn new(
        job: Arc<Job>,
        stop: Arc<AtomicBool>,
        refuted: Arc<AtomicUsize>,
        tx: mpsc::Sender<Event>,
    ) -> ClingoWorker {
        ClingoWorker {
            kind: job.kind,
            threads: job.threads,
            opts: job.opts.clone(),
            job,
            stop,
            refuted,
            tx,
            times: Times::default(),
            solving_since: None,
            guard: None,
        }
    }

    fn progress(&self, text: &str) {
        crate::progress!("[{}] {text}", self.kind.name());
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
        // The full worker finds first plans fastest with jumpy (measured on the
        // corpus's hanoi, 8puzzle and lightsOut). The incremental one keeps
        // clingo's default, a plain translation's: no configuration is best
        // on every game (trendy took twice the default's time on coins2 and
        // queens16ug), and two different ones make auto a small portfolio.
        let config = if self.kind == WorkerKind::Full {
            "jumpy"
        } else {
            "auto"
        };
        // The user's own `--configuration` (through `--clingo`) replaces ours:
        // clingo refuses an option given twice.
        if !self
            .opts
            .clingo_args
            .iter()
            .any(|a| a.starts_with("--configuration"))
        {
            args.push(format!("--configuration={config}"));
        }
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

    /// [`ClingoWorker::solve`] with a time `slice`: when it runs out before the first
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
        crate::priority::step_back(self.job.step_back);
        self.guard = Some(lock());
        let r = match self.kind {
            WorkerKind::Incremental => self.incremental(),
            WorkerKind::Parallel => self.parallel(),
            _ => self.full(),
        };
        let times = self.times;
        match r {
            Ok(outcome) => self.send(Event::Done(self.kind, outcome, times)),
            Err(e) => self.send(Event::Failed(self.kind, e, times)),
        }
    }

    /// The best goal at horizon `h` on a grounded full program.
    fn best_goal_with(&mut self, ctl: Control, h: usize, bounded: bool) -> Res<Verdict> {
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
                    return Ok(Verdict::NoPlan {
                        horizon: h,
                        message: format!("no plan reaches a goal above 0 ({limit})"),
                    });
                }
                Ok(Verdict::Plan(FoundPlan {
                    plan,
                    goal,
                    proven: if optimal {
                        Proven::BestGoal
                    } else {
                        Proven::None
                    },
                }))
            }
            Answer::Unsat => Ok(Verdict::NoPlan {
                horizon: h,
                message: format!("no play reaches a terminal state ({limit})"),
            }),
            Answer::Interrupted { .. } | Answer::Paused => Ok(Verdict::Stopped),
        }
    }
}

fn id(name: &str) -> Res<Symbol> {
    Symbol::create_id(name, true).map_err(err)
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
