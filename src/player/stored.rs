//! A match's use of the plan store ([`crate::store`]) on a one-player game:
//! the stored plan, mapped into the match's names, is followed from the first
//! move, and the solver's answers from the initial state are written back.

use std::sync::Arc;

use tracing::{info, warn};

use crate::asp::{Proven, SolveResult};
use crate::gdl::Description;
use crate::reasoner::StateMachine;
use crate::store::Plans;

use super::decisions::{Decision, Decisions};
use super::worker::Worker;

/// On a one-player game (`desc`, its rules as read, for match `id`): the
/// store's plan for the game, if it has one, is followed from the first
/// move, and the solver's answers from the initial state are written back,
/// each on a thread of its own (a store another process holds must not hold
/// up the match). Whether the plan followed is proven, so that the solver
/// has nothing left to do.
pub(super) fn use_store<M: StateMachine + 'static>(
    store: &Arc<Plans>,
    desc: &Arc<Description>,
    id: &str,
    decisions: &Decisions,
    w: &mut Worker<M>,
) -> bool {
    if w.roles() != 1 {
        return false;
    }
    let (writer, rules, match_id) = (Arc::clone(store), Arc::clone(desc), id.to_string());
    w.remember_with(Arc::new(move |r: &SolveResult| {
        let (store, rules, id, r) = (
            Arc::clone(&writer),
            Arc::clone(&rules),
            match_id.clone(),
            r.clone(),
        );
        std::thread::spawn(move || match store.remember(&rules, &id, &r) {
            Ok(true) => info!("match {id}: the solver's answer is written to the plan store"),
            Ok(false) => {}
            Err(e) => warn!("match {id}: {e}; the solver's answer is not stored"),
        });
    }));
    let recalled = match store.recall(desc) {
        Ok(Some(r)) if r.entry.goal.is_some() && !r.entry.plan.is_empty() => r,
        Ok(_) => {
            info!(
                "match {id}: the game is not in the plan store {}",
                store.location()
            );
            return false;
        }
        Err(e) => {
            warn!("match {id}: {e}; playing without the plan store");
            return false;
        }
    };
    if !w.follow_stored(&recalled) {
        warn!(
            "match {id}: the stored plan (record {}) does not hold here; the solver runs",
            recalled.id
        );
        return false;
    }
    decisions.count(Decision::PlanFromStore);
    recalled.entry.proven != Proven::None
}
