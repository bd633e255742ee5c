//! How far grounding may go ([`Limits`]: the memory it holds, join steps,
//! CPU time), what it counts a byte of memory as, and why it stopped
//! ([`GroundError`]).

use std::time::Duration;

use crate::gdl::Relation;

/// How big grounding may get before it gives up.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Bytes the grounding may hold: its terms, atoms, indexes and rule
    /// instances, counted from the sizes of what it stores (so the same on
    /// every run), not read from the allocator.
    pub max_memory: usize,
    /// Candidate atoms tried in joins: the work, counted the same on any machine.
    pub max_join_steps: u64,
    /// A safety net for work the join steps do not count, in CPU time of the
    /// grounding thread: a busy machine grounds as far as an idle one.
    pub max_time: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_memory: default_memory(),
            max_join_steps: 50_000_000,
            max_time: Duration::from_secs(20),
        }
    }
}

/// The grounding's default memory: a quarter of the memory available when
/// the process asks (Linux's `MemAvailable`), between 256 MiB and 4 GiB;
/// 1 GiB where the system does not say.
pub fn default_memory() -> usize {
    const MIB: usize = 1 << 20;
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        })
        .map(|kib| kib * 1024);
    match available {
        Some(bytes) => (bytes / 4).clamp(256 * MIB, 4096 * MIB),
        None => 1024 * MIB,
    }
}

/// Bytes an atom holds beyond its term: its entries in the atom table, the
/// atom list, its relation's list and (on average) the join indexes.
pub(super) const ATOM_BYTES: usize = 48;
/// Bytes a rule instance holds beyond its literals' ids: the record, its
/// two lists and the allocator's headers.
pub(super) const RULE_BYTES: usize = 80;

impl GroundError {
    /// Whether grounding with `limits` stopped for its size or its work:
    /// the same grounding under any budget of no more join steps than it
    /// took stops too (grounding is deterministic), so a caller can skip a
    /// smaller trial.
    pub fn join_steps_taken(&self) -> Option<u64> {
        match self {
            GroundError::TooMuchMemory { join_steps, .. }
            | GroundError::TooSlow { join_steps, .. } => Some(*join_steps),
            GroundError::TooMuchWork { limit, .. } => Some(*limit),
            GroundError::LongRule { .. } | GroundError::TopDownOnly(_) | GroundError::Cancelled => {
                None
            }
        }
    }
}

impl GroundError {
    /// The relations that held the most rule instances when grounding
    /// stopped for its size, most first (empty for other errors): what a
    /// build may leave to another engine.
    pub fn heaviest(&self) -> &[Relation] {
        match self {
            GroundError::TooMuchMemory { heaviest, .. }
            | GroundError::TooSlow { heaviest, .. }
            | GroundError::TooMuchWork { heaviest, .. } => &heaviest.0,
            GroundError::LongRule { .. } | GroundError::TopDownOnly(_) | GroundError::Cancelled => {
                &[]
            }
        }
    }

    pub(super) fn set_heaviest(&mut self, rels: Vec<Relation>) {
        if let GroundError::TooMuchMemory { heaviest, .. }
        | GroundError::TooSlow { heaviest, .. }
        | GroundError::TooMuchWork { heaviest, .. } = self
        {
            heaviest.0 = rels;
        }
    }
}

/// The relations with the most rule instances when grounding stopped (see
/// [`GroundError::heaviest`]).
#[derive(Clone, Debug, Default)]
pub struct Heaviest(pub Vec<Relation>);

/// Why grounding stopped.
#[derive(Clone, Debug, thiserror::Error)]
pub enum GroundError {
    #[error("grounding exceeds {} MiB of memory ({atoms} ground atoms, {rules} rule instances so far)", limit >> 20)]
    TooMuchMemory {
        limit: usize,
        atoms: usize,
        rules: usize,
        /// Join steps taken when it stopped.
        join_steps: u64,
        heaviest: Heaviest,
    },
    #[error("grounding takes more than {limit:?} of CPU time")]
    TooSlow {
        limit: Duration,
        join_steps: u64,
        heaviest: Heaviest,
    },
    #[error("grounding needs more than {limit} join steps")]
    TooMuchWork { limit: u64, heaviest: Heaviest },
    #[error("the rule at line {line} has more than {limit} positive literals or 'distinct's")]
    LongRule { line: u32, limit: usize },
    #[error("the rules of {0} are read top-down only (a head variable that only their calls bind, over no finite domain): they have no ground instances")]
    TopDownOnly(String),
    /// The thread's work was cancelled ([`crate::cancel`]): nobody waits for
    /// this grounding any more.
    #[error("grounding was cancelled")]
    Cancelled,
}
