//! The check every plan passes before the coordinator counts it: its
//! detours cut ([`super::shorten`]), then its replay on the solve's prover
//! ([`super::verify`]); plans below 100 are replayed on a thread of their
//! own, the newest of those waiting.

use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Instant;

use super::solve::{FoundPlan, Times};
use super::{shorten, verify, SolveContext, WorkerKind};

/// Replays each plan below 100 that comes (the newest of those waiting) on
/// the solve's prover, until the coordinator hangs up.
pub(super) fn verify_fallbacks(
    context: &SolveContext,
    plans: mpsc::Receiver<(WorkerKind, FoundPlan)>,
    out: mpsc::Sender<Result<Verified, String>>,
) {
    while let Ok(mut next) = plans.recv() {
        // The search only ever betters its best: the newest plan is the one.
        while let Ok(newer) = plans.try_recv() {
            next = newer;
        }
        let (kind, found) = next;
        let found = without_detours(context, found);
        let verified = context
            .prover()
            .and_then(|p| verify::verify(&**p, &found.plan, found.goal))
            .map(|note| Verified {
                kind,
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
/// [`shorten`]); the same when nothing can be cut. A plan proven shortest, or
/// as long as the lower bound, has nothing to cut.
fn without_detours(context: &SolveContext, found: FoundPlan) -> FoundPlan {
    // A plan no longer than the proven lower bound has nothing to cut (and
    // the search for shortcuts costs seconds on the prover's slower games).
    if found.plan.len() <= context.refuted.load(Ordering::Relaxed) + 1 {
        return found;
    }
    let Ok(prover) = context.prover() else {
        return found;
    };
    match shorten::shorten(
        &**prover,
        &found.plan,
        context.clock,
        shorten::SHORTCUT_BUDGET,
    ) {
        Some(plan) => FoundPlan { plan, ..found },
        None => found,
    }
}

/// `found` without its detours, and its verification on the prover (the
/// replay's note, or why it failed); how long each took is logged, since on
/// a prover of large rules both can cost seconds.
pub(super) fn checked(
    context: &SolveContext,
    kind: WorkerKind,
    found: FoundPlan,
) -> (FoundPlan, Result<Option<String>, String>) {
    let started = Instant::now();
    // The first plan of a split game may wait for its verifier's build.
    let prover = context.prover();
    let waited = started.elapsed();
    let moves = found.plan.len();
    let found = without_detours(context, found);
    let shortened = started.elapsed();
    let verified = prover.and_then(|p| verify::verify(&**p, &found.plan, found.goal));
    tracing::debug!(
        "{}'s plan of {moves} moves: verifier waited {:.3} s, {} after shortening ({:.3} s), replayed in {:.3} s",
        kind.name(),
        waited.as_secs_f64(),
        found.plan.len(),
        (shortened - waited).as_secs_f64(),
        (started.elapsed() - shortened).as_secs_f64()
    );
    (found, verified)
}

/// A plan the prover has replayed, with what the replay noted.
pub(super) struct Verified {
    pub(super) kind: WorkerKind,
    pub(super) found: FoundPlan,
    pub(super) times: Times,
    pub(super) note: Option<String>,
}
