//! What chose each of our moves, and how the matches were set up, counted
//! over all matches of a server: what a test or a benchmark reads to know
//! that a plan, the search or alpha-beta played.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// What chose a move ([`Decision::Plan`] ... [`Decision::FirstLegalMove`]),
/// or how a match was set up (the rest), as [`Decisions`] counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Decision {
    /// A move of a verified solver plan.
    Plan,
    /// A move of the search's line committed to while the solver works.
    CommittedLine,
    /// The only legal move.
    OnlyLegalMove,
    /// Alpha-beta, which proved the game's value.
    AlphaBetaProven,
    /// The search with the helpers' root statistics added.
    SearchWithCluster,
    /// The search.
    Search,
    /// The first legal move: the search had none.
    FirstLegalMove,
    /// A match whose meta-choice profile moved to the first play clock (the
    /// start clock was too short).
    ProfiledAfterReady,
    /// A match that started on the first engine (the prover) while the
    /// engine chosen for its game was building.
    StartedOnFirstEngine,
    /// A match that moved to the engine chosen for its game once built.
    EngineReplaced,
    /// A match played with the learned model.
    PlayedWithModel,
    /// A match the learned model was ignored in (other rules).
    ModelIgnored,
    /// A match that followed a plan from the plan store.
    PlanFromStore,
}

impl Decision {
    /// How the log says it.
    pub fn name(self) -> &'static str {
        match self {
            Decision::Plan => "plan",
            Decision::CommittedLine => "committed line",
            Decision::OnlyLegalMove => "only legal move",
            Decision::AlphaBetaProven => "alpha-beta (proven)",
            Decision::SearchWithCluster => "search (cluster)",
            Decision::Search => "search",
            Decision::FirstLegalMove => "first legal move (search had none)",
            Decision::ProfiledAfterReady => "profiled after ready",
            Decision::StartedOnFirstEngine => {
                "matches started on the prover while their engine built"
            }
            Decision::EngineReplaced => "matches moved to their engine once built",
            Decision::PlayedWithModel => "matches played with the model",
            Decision::ModelIgnored => "matches the model was ignored in (other rules)",
            Decision::PlanFromStore => "matches that followed a plan from the plan store",
        }
    }
}

/// The counts of each [`Decision`] over a server's matches, shared by their
/// threads.
#[derive(Clone, Debug, Default)]
pub struct Decisions(Arc<Mutex<BTreeMap<Decision, u64>>>);

impl Decisions {
    /// Counts one more `d`.
    pub fn count(&self, d: Decision) {
        *self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(d)
            .or_default() += 1;
    }

    /// Every decision made so far, with its count, in [`Decision`]'s order.
    pub fn counts(&self) -> Vec<(Decision, u64)> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(d, n)| (*d, *n))
            .collect()
    }
}
