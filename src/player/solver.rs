//! The ASP solver as a child process: `ggp-asp solve FILE --json --timeout S
//! --memory-mb M --threads N`, isolated so that a grounding blow-up, a crash or an
//! endless solve inside clingo can never stall or kill the player. The child gets an
//! address-space limit, a watchdog kills it shortly after its own timeout, and it is
//! killed when its [`SolverRun`] is dropped (STOP, ABORT, a newer run, shutdown):
//! all of it [`crate::child`]'s, which also reads the answer.
//!
//! [`SolverState`] is a match's side of it: the run in progress, the state it
//! plans from, how long runs seem to take, and whether trying again is worth it.

use std::io;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use tracing::{debug, info, warn};

use crate::asp::{SolveResult, Status};
use crate::child::{self, Pending, Spec, Stderr};

/// How to run the solver.
#[derive(Clone, Debug)]
pub struct SolverConfig {
    /// The `ggp-asp` executable (the server's own, `std::env::current_exe()`).
    pub exe: PathBuf,
    /// The child's `--timeout`; the watchdog kills it [`WATCHDOG_GRACE`] later.
    pub timeout: Duration,
    /// The child's `--memory-mb`; its address space is limited to this plus
    /// [`ADDRESS_SPACE_HEADROOM_MB`].
    pub memory_mb: u64,
    pub threads: usize,
}

/// How long after its own timeout a silent child is killed.
pub const WATCHDOG_GRACE: Duration = Duration::from_secs(5);
/// Virtual memory beyond the solver's own limit (thread stacks and allocator
/// reservations count against an address-space limit without being used).
pub const ADDRESS_SPACE_HEADROOM_MB: u64 = 2048;

/// Why a solver run gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum SolverError {
    #[error("cannot create a temporary directory: {0}")]
    TempDir(#[source] io::Error),
    #[error("cannot write {}: {source}", path.display())]
    WriteRules { path: PathBuf, source: io::Error },
    /// The child could not start, overran, died or printed no answer.
    #[error(transparent)]
    Child(#[from] child::Error),
}

/// What a solver run ends with.
type SolverAnswer = Result<SolveResult, SolverError>;

/// A running solver child. Dropping it kills the child.
pub struct SolverRun {
    run: Pending<SolveResult>,
    /// Holds the rules file until the run ends.
    _dir: tempfile::TempDir,
}

impl SolverRun {
    /// Writes `rules` (KIF) to a temporary file and starts the solver on it.
    pub fn start(rules: &str, cfg: &SolverConfig, label: &str) -> Result<SolverRun, SolverError> {
        SolverRun::start_with(rules, cfg, label, &[])
    }

    /// [`SolverRun::start`] with more arguments for `solve` after ours (a
    /// mode, clingo options).
    pub fn start_with(
        rules: &str,
        cfg: &SolverConfig,
        label: &str,
        extra: &[String],
    ) -> Result<SolverRun, SolverError> {
        let dir = tempfile::Builder::new()
            .prefix("ggp-asp-solve-")
            .tempdir()
            .map_err(SolverError::TempDir)?;
        let path = dir.path().join("game.kif");
        std::fs::write(&path, rules).map_err(|source| SolverError::WriteRules {
            path: path.clone(),
            source,
        })?;
        let mut cmd = Command::new(&cfg.exe);
        // `--first`: the player needs a plan before its start clock ends, not
        // the proof that it is shortest; it says which it got.
        cmd.arg("solve")
            .arg(&path)
            .arg("--json")
            .arg("--first")
            .arg("--timeout")
            .arg(format!("{}", cfg.timeout.as_secs_f64()))
            .arg("--memory-mb")
            .arg(cfg.memory_mb.to_string())
            .arg("--threads")
            .arg(cfg.threads.max(1).to_string())
            // The match reads and writes the plan store itself, for the game
            // as sent (the child solves it from some state).
            .arg("--no-store")
            .args(extra);
        // The solver's progress lines go to the log as they come.
        let tag = label.to_string();
        let run = Spec::new(cmd, "the solver")
            .stderr(Stderr::Lines(Box::new(move |line| {
                debug!(target: "ggp_asp::player::solver", "{tag}: solver: {line}");
            })))
            .address_space_mb(cfg.memory_mb + ADDRESS_SPACE_HEADROOM_MB)
            .wall_limit(cfg.timeout + WATCHDOG_GRACE)
            .log_as(label)
            .thread_names("solver")
            .spawn()?
            .answer_later()?;
        Ok(SolverRun { run, _dir: dir })
    }

    /// The outcome once the child has ended; `None` while it runs.
    pub fn try_result(&self) -> Option<SolverAnswer> {
        self.run.try_answer().map(|r| r.map_err(SolverError::from))
    }

    pub fn elapsed(&self) -> Duration {
        self.run.elapsed()
    }

    /// The child's process id (for tests that check it is gone).
    pub fn pid(&self) -> u32 {
        self.run.pid()
    }
}

/// A solver run and the step and state it solves from.
struct RunFromState<S> {
    run: SolverRun,
    from: usize,
    state: S,
}

/// A plan the solver found (not yet checked on our engine).
pub struct UncheckedPlan<S> {
    /// The step and state it starts from.
    pub from: usize,
    pub state: S,
    pub took: Duration,
    pub result: SolveResult,
}

/// A match's use of the solver: at most one run at a time, from a state of the
/// match's choosing.
pub struct SolverState<S> {
    /// For log lines: `match ID`.
    id: String,
    /// `None` when the solver is off or the game has more than one role.
    cfg: Option<SolverConfig>,
    run: Option<RunFromState<S>>,
    /// How long a solver run seems to take (the last one's time, or how long an
    /// abandoned one had run): decides how far ahead the next one starts.
    estimate: Duration,
    /// The solver said there is no plan (or failed): do not start it again.
    gave_up: bool,
    /// Told every answer of a run from the initial state (the plan store's
    /// writer).
    remember: Option<Remember>,
}

/// What a match does with its solver's answers from the initial state.
pub type Remember = std::sync::Arc<dyn Fn(&SolveResult) + Send + Sync>;

impl<S> SolverState<S> {
    /// The solver state of match `id`; only a one-player game uses `cfg`.
    pub fn new(id: &str, cfg: Option<SolverConfig>, one_player: bool) -> Self {
        SolverState {
            id: id.to_string(),
            cfg: cfg.filter(|_| one_player),
            run: None,
            estimate: Duration::ZERO,
            gave_up: false,
            remember: None,
        }
    }

    /// Tells `f` every answer of a run from the initial state, whatever it
    /// is (a plan, no plan, a timeout's bound), before the match uses it.
    pub fn remember_with(&mut self, f: Remember) {
        self.remember = Some(f);
    }

    /// True when a run may start: a one-player game, the solver on, and no run
    /// has said there is nothing to find.
    pub fn wanted(&self) -> bool {
        self.cfg.is_some() && !self.gave_up
    }

    pub fn running(&self) -> bool {
        self.run.is_some()
    }

    /// Do not start the solver again (its plan was wrong).
    pub fn give_up(&mut self) {
        self.gave_up = true;
    }

    /// How long a run seems to take: at least as long as the current one has run.
    pub fn estimate(&self) -> Duration {
        let running = self
            .run
            .as_ref()
            .map_or(Duration::ZERO, |s| s.run.elapsed());
        self.estimate.max(running)
    }

    /// Ends the current run, if any (killing its child), and remembers how long it
    /// had run.
    pub fn end_run(&mut self) {
        if let Some(old) = self.run.take() {
            self.estimate = self.estimate.max(old.run.elapsed());
        }
    }

    /// Starts a run on `rules`, the game from `state` at step `from` (the match
    /// is at step `now`), replacing any run. A run that cannot start turns the
    /// solver off for the match.
    pub fn start(&mut self, rules: &str, from: usize, now: usize, state: S) {
        self.end_run();
        let Some(cfg) = &self.cfg else { return };
        let label = format!("match {} step {from}", self.id);
        match SolverRun::start(rules, cfg, &label) {
            Ok(run) => {
                info!(
                    "match {}: solver started from step {from} at step {now} (pid {}, timeout {:.0}s, {} MB)",
                    self.id,
                    run.pid(),
                    cfg.timeout.as_secs_f64(),
                    cfg.memory_mb
                );
                self.run = Some(RunFromState { run, from, state });
            }
            Err(e) => {
                warn!("match {}: {e}; playing by search alone", self.id);
                self.gave_up = true;
            }
        }
    }

    /// The same solver, its run (if any) going on from the state `f` gives
    /// for the run's step and state: what a match carries to another engine
    /// ([`super::handover`]). A run whose state `f` cannot give is ended.
    pub fn map<T>(self, f: impl FnOnce(usize, S) -> Option<T>) -> SolverState<T> {
        let mut estimate = self.estimate;
        let run = self.run.and_then(|RunFromState { run, from, state }| {
            match f(from, state) {
                Some(state) => Some(RunFromState { run, from, state }),
                None => {
                    warn!(
                        "match {}: the solver's run from step {from} has no state on the new engine; ended",
                        self.id
                    );
                    estimate = estimate.max(run.elapsed());
                    None
                }
            }
        });
        SolverState {
            id: self.id,
            cfg: self.cfg,
            run,
            estimate,
            gave_up: self.gave_up,
            remember: self.remember,
        }
    }

    /// The run's plan once it has ended with one. A run that ended without a
    /// plan (no plan exists, a timeout, a failure) is logged, and the solver is
    /// not started again.
    pub fn poll(&mut self) -> Option<UncheckedPlan<S>> {
        let outcome = self.run.as_ref()?.run.try_result()?;
        let RunFromState { run, from, state } = self.run.take()?;
        let took = run.elapsed();
        self.estimate = took;
        let secs = took.as_secs_f64();
        if let (Some(remember), Ok(r), 0) = (&self.remember, &outcome, from) {
            remember(r);
        }
        let result = match outcome {
            Ok(r) if r.status == Status::Solved && !r.plan.is_empty() => r,
            Ok(r) => {
                let why = if r.message.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", r.message)
                };
                info!(
                    "match {}: solver from step {from}: {} after {secs:.2}s{why}; search plays on",
                    self.id,
                    r.status.name(),
                );
                self.gave_up = true;
                return None;
            }
            Err(e) => {
                warn!("match {}: solver failed after {secs:.2}s: {e}", self.id);
                self.gave_up = true;
                return None;
            }
        };
        Some(UncheckedPlan {
            from,
            state,
            took,
            result,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asp::Status;

    #[test]
    fn reads_the_contract_json() {
        let read_result = crate::child::read_answer::<SolveResult>;
        let out = "progress\n{\"status\":\"solved\",\"goal\":100,\"steps\":2,\"plan\":[\"(move 2 3)\",\"noop\"],\"proven\":\"shortest\",\"mode\":\"full\",\"ground_s\":0.1,\"solve_s\":0.2,\"total_s\":0.3,\"message\":\"\"}\n";
        let o = read_result(out).unwrap();
        assert_eq!(o.status, Status::Solved);
        assert_eq!(o.goal, Some(100));
        assert_eq!(o.plan, vec!["(move 2 3)", "noop"]);
        let o = read_result("{\"status\":\"timeout\",\"goal\":null,\"steps\":null,\"plan\":[]}")
            .unwrap();
        assert_eq!(o.status, Status::Timeout);
        assert_eq!(o.goal, None);
        assert!(read_result("Segmentation fault").is_err());
        assert!(read_result("{\"goal\":1}").is_err());
    }
}
