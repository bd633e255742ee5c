//! The match's solver and the plans it follows: the solver started (again)
//! from a state, its answers polled and verified on the match's engine, a
//! plan's next move, and a committed line of the search's when the solver
//! needs a head start.

use std::time::Duration;

use tracing::{debug, info, warn};

use super::super::plan::{rules_from, search_line, Plan};
use super::super::solver::UncheckedPlan;
use super::Worker;
use crate::reasoner::StateMachine;

impl<M: StateMachine + 'static> Worker<M> {
    /// Starts the solver from the current state.
    pub(in crate::player) fn start_solver(&mut self) {
        self.start_solver_from(self.step, self.state.clone());
    }

    /// Starts the solver from `state`, the state at step `from` (one-player games
    /// only), replacing any run; the helpers, if any, solve it too.
    pub(super) fn start_solver_from(&mut self, from: usize, state: M::State) {
        self.solver.end_run();
        if self.solver.wanted() && !self.machine.is_terminal(&state) {
            let rules = rules_from(&*self.machine, &state);
            if let (Some(h), Some(cfg)) = (&self.cfg.helpers, &self.cfg.solver) {
                h.solve(&self.id, from, &rules, cfg);
                self.portfolio = Some((from, state.clone()));
            }
            self.solver.start(&rules, from, self.step, state);
        }
    }

    /// Takes a plan once our solver or a helper's has one: checked on our
    /// engine, it is followed from its first state on, and every other run
    /// for the match stops.
    pub(super) fn poll_solver(&mut self) {
        if let Some(found) = self.solver.poll() {
            if self.take_plan(found, "solver", true) {
                self.portfolio_done();
            }
        }
        let Some(h) = self.cfg.helpers.clone() else {
            return;
        };
        for hp in h.plans(&self.id) {
            let Some((from, state)) = self.portfolio.clone().filter(|(f, _)| *f == hp.from) else {
                debug!(
                    "match {}: rank {}'s plan from step {} is for an older run",
                    self.id, hp.rank, hp.from
                );
                continue;
            };
            let found = UncheckedPlan {
                from,
                state,
                took: Duration::from_secs_f64(hp.result.total_s.max(0.0)),
                result: hp.result,
            };
            let source = format!("rank {}'s solver ({})", hp.rank, hp.variant);
            if self.take_plan(found, &source, false) {
                self.solver.end_run();
                self.portfolio_done();
                return;
            }
        }
    }

    /// A plan is taken: the helpers stop solving the match.
    pub(super) fn portfolio_done(&mut self) {
        if self.portfolio.take().is_some() {
            if let Some(h) = &self.cfg.helpers {
                h.stop_solving(&self.id);
            }
        }
    }

    /// Checks `found` (from `source`, our own solver when `ours`) on our
    /// engine and follows it; whether it was taken. A wrong plan from our own
    /// solver turns it off for the match.
    pub(super) fn take_plan(
        &mut self,
        found: UncheckedPlan<M::State>,
        source: &str,
        ours: bool,
    ) -> bool {
        let (from, secs) = (found.from, found.took.as_secs_f64());
        if from < self.step {
            info!(
                "match {}: the {source}'s plan from step {from} came after {secs:.2}s, at step {}: too late",
                self.id, self.step
            );
            return false;
        }
        let plan = match Plan::verify(
            &*self.machine,
            self.role,
            from,
            found.state,
            &found.result.plan,
        ) {
            Ok(plan) => plan,
            Err(e) => {
                warn!(
                    "match {}: the {source}'s plan from step {from} is wrong: {e}",
                    self.id
                );
                if ours {
                    self.solver.give_up();
                }
                return false;
            }
        };
        info!(
            "match {}: {source} from step {from}: plan of {} moves to goal {} in {secs:.2}s, verified, submitted as the solver's first plan (proven: {})",
            self.id,
            plan.moves.len(),
            plan.goal.unwrap_or(0),
            found.result.proven.name()
        );
        self.plan = Plan::connect(self.plan.take(), plan, self.step);
        if self.plan.is_none() {
            warn!(
                "match {}: the plan from step {from} does not connect to our moves",
                self.id
            );
            return false;
        }
        true
    }

    /// The plan's move when the current state is the one the plan expects here,
    /// and whether it is a committed move (not yet backed by a solver plan).
    pub(super) fn plan_move(&mut self) -> Option<(M::Move, bool)> {
        let plan = self.plan.as_ref()?;
        let i = self.step.checked_sub(plan.from)?;
        if plan.states.get(i) == Some(&self.state) {
            return Some((plan.moves[i].clone(), plan.goal.is_none()));
        }
        if i < plan.moves.len() || plan.goal.is_some() {
            warn!(
                "match {}: step {}: the state is not the one the plan expects; search decides",
                self.id, self.step
            );
        }
        self.plan = None;
        None
    }

    /// On a one-player game without a plan: the search's move `chosen` leaves the
    /// state any solver run works from, so commit to the search's best line for as
    /// many moves as a solver run seems to take, and start the solver from the
    /// line's end. Returns the move to play now (the line's first).
    pub(super) fn commit_ahead(&mut self, chosen: M::Move) -> M::Move {
        if !self.solver.wanted() {
            return chosen;
        }
        let m = &*self.machine;
        let mut line = search_line(m, &self.search, self.role, &self.state);
        if line.is_empty() {
            line.push(chosen);
        }
        let estimate = self.solver.estimate().max(self.cfg.move_time);
        // Lead: half again the estimate, in moves; at least one.
        let wanted = (estimate.as_secs_f64() * 1.5 / self.cfg.move_time.as_secs_f64().max(0.001))
            .ceil() as usize;
        let Some((plan, end)) = Plan::commit(m, self.step, &self.state, &line, wanted) else {
            // The line ends the game: nothing left to plan for.
            return line[0].clone();
        };
        let d = plan.moves.len() + 1;
        info!(
            "match {}: step {}: committing to {d} move(s) of the search's line; solver restarts from step {} (estimate {:.1}s)",
            self.id,
            self.step + 1,
            self.step + d,
            estimate.as_secs_f64()
        );
        self.plan = Some(plan);
        self.start_solver_from(self.step + d, end);
        line.swap_remove(0)
    }
}
