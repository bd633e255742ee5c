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

pub mod bounds;
mod checked;
mod context;
mod control;
mod coordinator;
pub mod encode;
pub mod forward;
pub mod invariants;
pub mod linear;
pub mod parallel;
pub mod process;
pub mod program;
pub mod shorten;
pub mod solve;
pub mod symbols;
pub mod translate;
pub mod verify;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::gdl::Game;
use crate::reasoner::ProverError;

pub use crate::reasoner::prepare::Prepared;
pub use context::SolveContext;
use coordinator::{Coordinator, Workers};
pub use program::Program;

/// How to solve.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Full and incremental at once with the breadth-first search, and the
    /// depth-first search after a few seconds; a plan not yet proven shortest
    /// waits for a proof (see [`SolveOptions::first`]).
    #[default]
    Auto,
    /// Full grounding to a horizon, deepened until a plan is found.
    Full,
    /// Multi-shot solving, one more step per round.
    Incremental,
    /// Depth-first search over the rule engine (no clingo): finds plans the
    /// encodings cannot, proves nothing (see [`forward`]).
    Search,
    /// Breadth-first search over the rule engine with duplicate detection
    /// (no clingo): proves its plan shortest (see [`forward::breadth`]).
    Breadth,
    /// clingo on the parallel-step program: moves that commute share a step
    /// (see [`parallel`]); its plans are not proven shortest, its refuted
    /// horizons bound every plan's length.
    Parallel,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Full => "full",
            Mode::Incremental => "incremental",
            Mode::Search => "search",
            Mode::Breadth => "breadth",
            Mode::Parallel => "parallel",
        }
    }

    /// The one kind of worker this mode runs; `None` for auto, which runs
    /// several.
    pub fn worker(self) -> Option<WorkerKind> {
        match self {
            Mode::Auto => None,
            Mode::Full => Some(WorkerKind::Full),
            Mode::Incremental => Some(WorkerKind::Incremental),
            Mode::Search => Some(WorkerKind::Search),
            Mode::Breadth => Some(WorkerKind::Breadth),
            Mode::Parallel => Some(WorkerKind::Parallel),
        }
    }
}

/// A kind of worker of a solve: the one that sent an event, or found the
/// answer (`mode` in the JSON answer). [`Mode`] is what the user asked for;
/// auto runs several of these.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkerKind {
    /// clingo on the full program, deepening the horizon.
    Full,
    /// clingo, multi-shot, one step a round.
    Incremental,
    /// The depth-first search over the rule engine.
    Search,
    /// The breadth-first search over the rule engine.
    Breadth,
    /// clingo on the parallel-step program.
    Parallel,
}

impl WorkerKind {
    /// As in the JSON answer and in progress lines.
    pub fn name(self) -> &'static str {
        match self {
            WorkerKind::Full => "full",
            WorkerKind::Incremental => "incremental",
            WorkerKind::Search => "search",
            WorkerKind::Breadth => "breadth",
            WorkerKind::Parallel => "parallel",
        }
    }

    /// Whether this worker can prove a plan shortest.
    pub fn proves(self) -> bool {
        matches!(
            self,
            WorkerKind::Full | WorkerKind::Incremental | WorkerKind::Breadth
        )
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
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    /// Prove state invariants and add them as constraints (see [`invariants`]),
    /// and the linear invariants' goal ceiling (see [`linear`]).
    pub invariants: bool,
    /// Extra clingo options for every worker, after ours (so they win), e.g.
    /// `--configuration=trendy`.
    pub clingo_args: Vec<String>,
    /// Auto answers with the first verified plan after a short grace, not
    /// waiting until it is proven shortest (or the timeout comes).
    pub first: bool,
    /// The `ggp-asp` executable that runs clingo workers in processes of
    /// their own (`ggp-asp worker`, see [`process`]); without it they run on
    /// threads of this process, taking turns at clingo.
    #[serde(skip)]
    pub worker_exe: Option<std::path::PathBuf>,
    /// A horizon proven earlier (by a run the plan store remembers) to hold
    /// no plan to goal 100: the proof of the shortest plan starts above it.
    #[serde(default)]
    pub refuted: usize,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            mode: Mode::Auto,
            timeout: None,
            max_steps: 200,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_mb: None,
            invariants: true,
            clingo_args: Vec::new(),
            first: false,
            worker_exe: None,
            refuted: 0,
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
    /// The worker that gave the answer.
    #[serde(default)]
    pub mode: Option<WorkerKind>,
    #[serde(default)]
    pub ground_s: f64,
    #[serde(default)]
    pub solve_s: f64,
    #[serde(default)]
    pub total_s: f64,
    /// The largest horizon fully searched without a winning plan.
    #[serde(default)]
    pub horizon: usize,
    /// The fewest moves a plan to goal 100 can have, as proven (by clingo or
    /// the breadth-first search): the plan's own length when it is proven
    /// shortest; absent when nothing is proven.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower_bound: Option<usize>,
    /// Peak resident memory of the process, in MiB.
    #[serde(default)]
    pub peak_mb: f64,
    /// The clingo workers' processes started before the answer (none for
    /// a game the breadth-first search answers within its head start).
    #[serde(default)]
    pub processes: usize,
    #[serde(default)]
    pub message: String,
    /// Where the answer came from.
    #[serde(default)]
    pub source: Source,
}

/// Where an answer came from: this solve, or the plan store (the stored
/// plan replayed on the prover before it was shown).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    #[default]
    Solved,
    Store,
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
            lower_bound: None,
            peak_mb: peak_mb(),
            processes: 0,
            message,
            source: Source::Solved,
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
/// search's thread, so that a busy machine proves what an idle one does). The
/// useful ones come fast (hanoi's, the 8-puzzle's); a game whose one-step
/// program is hard (the corpus's pancake puzzles: 761 fluents) would spend the
/// whole budget for nothing, so it is short.
pub const INVARIANT_BUDGET: Duration = Duration::from_secs(1);

/// How long auto waits, without `--timeout`, for a proof that its first plan
/// is shortest (or for a shorter plan) before it answers with the best plan
/// found.
pub const PROOF_WAIT: Duration = Duration::from_secs(60);

/// When auto starts the forward search beside the clingo workers: late enough
/// that the games clingo solves at once keep both cores (and get its proofs and
/// short plans), early enough to leave the search most of a minute.
pub const SEARCH_AFTER: Duration = Duration::from_secs(3);

/// The work the invariant search behind a split (see [`prepare`]) may
/// do: solve calls that end undecided, of 500 conflicts each (the corpus's
/// sudoku needs 19). A count, not a clock: a CPU-time budget that an idle
/// machine met ran out beside a loaded core, and the game then had no engine
/// to play it with.
const SPLIT_CHUNKS: u64 = 100;
/// The CPU time the invariant search behind a split may take: a safety net
/// behind [`SPLIT_CHUNKS`] for calls that take long over few conflicts.
const SPLIT_BUDGET: Duration = Duration::from_secs(60);

/// The solver's preparation of a game ([`crate::reasoner::prepare`]), with
/// the clingo proof of unique-value invariants that may split the joins of a
/// game that does not ground otherwise.
pub fn prepare(game: &Game) -> Prepared {
    let proof = |play: &Game| invariants::unique_keys(play, SPLIT_BUDGET, SPLIT_CHUNKS).ok();
    crate::reasoner::prepare::prepare(game, Some(&proof))
}

/// Solves a single-player game: the shortest plan to goal 100, else the best
/// goal. The rules are prepared once, into the one [`SolveContext`] that the
/// coordinator and every worker share. Progress goes out as
/// [`progress!`](crate::progress) events.
pub fn solve(game: &Game, opts: &SolveOptions) -> Result<SolveResult, SolveError> {
    solve::check_single_player(game).map_err(SolveError::NotSinglePlayer)?;
    let start = std::time::Instant::now();
    let prepared = prepare(game);
    if let Some(note) = &prepared.note {
        crate::progress!("[rewrite] {note}");
    }
    let (context, ground) = SolveContext::new(prepared, opts, start)?;
    let context = Arc::new(context);
    let result = Workers::start(&context, ground)
        .map(|workers| Coordinator::new(Arc::clone(&context)).run(workers));
    // Whatever the answer, no worker runs on (nor starts: the launcher
    // waiting for the breadth-first search's head start sees the stop).
    context.stop.store(true, Ordering::Relaxed);
    context.head_start.open();
    result
}

/// Resident memory of this process in MiB (0 where /proc is missing).
pub fn resident_mb() -> f64 {
    resident_mb_at("/proc/self/statm")
}

/// Resident memory of process `pid` in MiB (0 once it is gone).
pub fn resident_mb_of(pid: u32) -> f64 {
    resident_mb_at(&format!("/proc/{pid}/statm"))
}

fn resident_mb_at(statm: &str) -> f64 {
    std::fs::read_to_string(statm)
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
