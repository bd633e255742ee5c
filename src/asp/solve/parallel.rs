//! The parallel worker: first the free-state check, then the parallel-step
//! program (see [`super::super::parallel`]) at horizons 1, 2, 3, ...
//!
//! Each model's plan, its steps serialised, is sent as a candidate (the
//! coordinator replays it; clingo minimises the number of moves within the
//! horizon, so later ones are shorter). A horizon without a plan proves that
//! no plan of that many moves or fewer exists (a serial plan is a parallel
//! one, one move a step) and raises the shared lower bound; a plan of the
//! parallel program proves nothing about shorter serial plans, so the worker
//! ends with [`Verdict::Stopped`] and leaves the proof to the bounds and to
//! the other workers.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use clingo::Part;

use super::super::control::{err, Res};
use super::super::Proven;
use super::{plan_of, Answer, ClingoWorker, Event, FoundPlan, Verdict};

/// How long the free-state check searches: where no state scores, clasp
/// says so at once (nonogram_10x10_1: 0.02 s); where one does, finding it
/// may take as long as solving the puzzle (the empty sudoku: seconds), and
/// the horizons find it as well.
const FREE_STATE_SLICE: std::time::Duration = std::time::Duration::from_secs(1);

impl ClingoWorker {
    pub(super) fn parallel(&mut self) -> Res<Verdict> {
        let job = Arc::clone(&self.job);
        if let Some(text) = &job.free_state {
            let mut ctl = self.control()?;
            ctl.add("base", &[], text).map_err(err)?;
            self.ground(&mut ctl, &[Part::new("base", vec![]).map_err(err)?])?;
            let (_, answer) = self.solve_for(ctl, &[], true, Some(FREE_STATE_SLICE), |_, _| {})?;
            match answer {
                Answer::Unsat => {
                    self.progress("no set of fluents is a terminal state with a goal above 0");
                    return Ok(Verdict::NoPlan {
                        horizon: 0,
                        message: "no state that ends the game gives a goal above 0 \
                                  (every set of fluents checked)"
                            .into(),
                    });
                }
                Answer::Interrupted { .. } => return Ok(Verdict::Stopped),
                // Undecided within its slice, or some state scores: the
                // check proves nothing, the horizons go on.
                Answer::Paused | Answer::Sat { .. } => {}
            }
        }
        let map = &job.map;
        let mut best = usize::MAX;
        for h in 1..=self.opts.max_steps {
            if self.stopped() {
                return Ok(Verdict::Stopped);
            }
            let mut ctl = self.control()?;
            ctl.add("base", &[], &format!("{}\nhorizon({h}).\n", job.full))
                .map_err(err)?;
            self.ground(&mut ctl, &[Part::new("base", vec![]).map_err(err)?])?;
            let (_, answer) = self.solve(ctl, &[], false, |w, atoms| {
                let Some(plan) = plan_of(map, &[], atoms) else {
                    return;
                };
                if plan.len() < best {
                    best = plan.len();
                    w.progress(&format!(
                        "{h} parallel steps: a plan of {} moves",
                        plan.len()
                    ));
                    let found = FoundPlan {
                        plan,
                        goal: 100,
                        proven: Proven::None,
                    };
                    w.send(Event::Candidate(w.kind, found, w.times_now()));
                }
            })?;
            match answer {
                Answer::Unsat => {
                    self.progress(&format!("{h} parallel steps: no winning plan"));
                    self.refuted.fetch_max(h, Ordering::Relaxed);
                    self.send(Event::Horizon(self.kind, h, self.times));
                }
                Answer::Sat { .. } | Answer::Interrupted { .. } | Answer::Paused => {
                    return Ok(Verdict::Stopped)
                }
            }
        }
        Ok(Verdict::Stopped)
    }
}
