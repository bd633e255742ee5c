//! The incremental worker: multi-shot solving, one step per round (see
//! [`ClingoWorker::incremental`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use clingo::{Control, Part, Symbol};

use super::super::control::{err, Res};
use super::super::Proven;
use super::{plan_of, Answer, ClingoWorker, Event, FoundPlan, Verdict};

impl ClingoWorker {
    /// Best goal by full grounding at horizon `h` (used by the incremental worker).
    fn best_goal(&mut self, h: usize, bounded: bool) -> Res<Verdict> {
        let mut ctl = self.control()?;
        ctl.add("base", &[], &format!("{}\nhorizon({h}).\n", self.job.full))
            .map_err(err)?;
        self.ground(&mut ctl, &[Part::new("base", vec![]).map_err(err)?])?;
        self.best_goal_with(ctl, h, bounded)
    }

    /// Multi-shot solving, one step per round.
    pub(super) fn incremental(&mut self) -> Res<Verdict> {
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
                return Ok(Verdict::Stopped);
            }
            let query = func("query", t)?;
            // Another worker (a bound, the breadth-first search) may have
            // proven already that no plan of t moves exists: no call then.
            let proven = self.refuted.load(Ordering::Relaxed);
            let skipped = proven > 0 && t <= proven;
            let answer = if skipped {
                Answer::Unsat
            } else {
                let (c, answer) = self.solve(ctl, &[query], true, |_, _| {})?;
                ctl = c;
                answer
            };
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
                    return Ok(Verdict::Plan(FoundPlan {
                        plan,
                        goal: 100,
                        proven: Proven::Shortest,
                    }));
                }
                Answer::Interrupted { .. } | Answer::Paused => return Ok(Verdict::Stopped),
                Answer::Unsat => {
                    self.progress(&format!("{head}: no winning plan"));
                    self.refuted.fetch_max(t, Ordering::Relaxed);
                }
            }
            let alive = func("alive", t)?;
            // Whether some play lasts beyond t moves: not asked at a horizon
            // skipped (a later one answers for it, and the extra call would
            // steer the search of the first horizon solved).
            if !skipped {
                let (c, answer) = self.solve(ctl, &[alive], true, |_, _| {})?;
                ctl = c;
                match answer {
                    Answer::Interrupted { .. } | Answer::Paused => return Ok(Verdict::Stopped),
                    Answer::Unsat => {
                        self.progress(&format!("no play lasts beyond {t} steps"));
                        return self.best_goal(t, true);
                    }
                    Answer::Sat { .. } => {}
                }
            }
            self.send(Event::Horizon(self.kind, t, self.times));
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
