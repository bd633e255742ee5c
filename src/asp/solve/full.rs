//! The full worker: full grounding with a deepening horizon, the searches of
//! several horizons interleaved in time slices (see [`ClingoWorker::full`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clingo::{Control, Part, Symbol};

use super::super::control::{err, Res};
use super::super::Proven;
use super::{id, plan_of, Answer, ClingoWorker, Event, FoundPlan, Verdict};

/// A grounded horizon of the full worker whose search is under way.
struct Open {
    h: usize,
    ctl: Control,
    /// Its ground atoms (a measure of the memory it holds).
    atoms: usize,
    /// Solving time spent on it so far.
    spent: Duration,
    /// Its grounding time.
    ground: Duration,
}

/// How long the newest open horizon searches (and at least twice its grounding
/// time, and half the time so far) before the next one is grounded. Long enough
/// that the games whose first satisfiable horizon is merely slow keep it nearly
/// to themselves (coins2 timed out when its horizons, opened one soon after
/// the other, took equal turns), short enough that a horizon only a counting
/// argument away from unsatisfiable does not hold up the next (futoshiki4).
const OPEN_AFTER: Duration = Duration::from_secs(2);

/// The most horizons grounded at once, and the most ground atoms they hold
/// together (each keeps its ground program; 2 million atoms are about 1 GiB on
/// the corpus's largest programs).
const MAX_OPEN: usize = 4;
const MAX_OPEN_ATOMS: usize = 2_000_000;

/// One turn of an open horizon: an eighth of the time spent so far, between a
/// quarter of a second (a turn restarts the search threads and reassigns the
/// query) and 4 s.
fn slice(elapsed: Duration) -> Duration {
    (elapsed / 8).clamp(Duration::from_millis(250), Duration::from_secs(4))
}

/// Where the deepening stands: the horizons to try, the next of them to
/// ground, and the grounded ones whose search is under way, smallest first.
struct Deepening {
    horizons: Vec<usize>,
    next: usize,
    open: Vec<Open>,
    /// The `query` atom, switched on for each turn.
    query: Symbol,
    started: Instant,
}

/// How an open horizon's turn ended.
enum Turn {
    /// Its slice ran out: it goes back to the open horizons.
    Paused(Open),
    /// The worker's final word (a plan, or stopped).
    Over(Verdict),
    /// No winning plan within the horizon; its control, for what follows.
    Refuted(Control),
}

impl ClingoWorker {
    /// The horizons full grounding tries: small first, growing by half, ending at
    /// `max_steps`, and never jumping past the length of the game when a clock
    /// bounds it (where clingo then proves that no play lasts longer: a horizon
    /// beyond it would ground more for nothing, twice as much on
    /// ruleDepthExponential, whose steps each ground twice the one before).
    fn horizons(&self) -> Vec<usize> {
        horizons(self.opts.max_steps, self.job.ends_by)
    }

    /// Grounds the full program at horizon `h`: the control, its ground atoms and
    /// the grounding seconds.
    fn ground_full(&mut self, text: &str, h: usize) -> Res<(Control, usize, f64)> {
        let mut ctl = self.control()?;
        ctl.add("base", &[], &format!("{text}\nhorizon({h}).\n"))
            .map_err(err)?;
        let g0 = self.times.ground_s;
        self.ground(&mut ctl, &[Part::new("base", vec![]).map_err(err)?])?;
        let atoms = ctl.symbolic_atoms().and_then(|a| a.size()).unwrap_or(0);
        Ok((ctl, atoms, self.times.ground_s - g0))
    }

    /// Full grounding with a deepening horizon, the searches of several horizons
    /// interleaved in time slices.
    ///
    /// Why not one horizon after the other: on fill-in puzzles (futoshiki, hidato,
    /// sudoku: one move per empty cell) every horizon below the plan's length is
    /// unsatisfiable for a counting reason that clasp can only prove by
    /// exhaustion, which may take longer than any budget, while the next
    /// horizon has a plan that clasp finds at once.
    /// So once the newest horizon has searched for [`OPEN_AFTER`] without an
    /// answer, the next one is grounded, and the open horizons take turns
    /// ([`slice`]), each newer one at a quarter of the rate of the one before
    /// (in the spirit of Rintanen's "algorithm B"; each `Control` keeps what it
    /// has learnt between its turns). At most [`MAX_OPEN`] are kept; the
    /// smallest is dropped, unproven. Horizons that the incremental worker has
    /// refuted meanwhile ([`ClingoWorker::refuted`]) are closed or skipped.
    ///
    /// What is proven does not change: an unsatisfiable horizon closes every
    /// smaller one, and a plan whose length clingo then minimises to the optimum
    /// at its horizon is shortest (a shorter plan would fit that horizon too).
    pub(super) fn full(&mut self) -> Res<Verdict> {
        let mut d = Deepening {
            horizons: self.horizons(),
            next: 0,
            open: Vec::new(),
            query: id("query")?,
            started: Instant::now(),
        };
        loop {
            if self.stopped() {
                return Ok(Verdict::Stopped);
            }
            self.skip_refuted(&mut d);
            if d.next < d.horizons.len() && self.newest_done(&d) {
                if !self.open_next(&mut d)? {
                    return Ok(Verdict::Stopped);
                }
                continue;
            }
            let Some(i) = whose_turn(&d.open) else {
                return Ok(Verdict::Stopped);
            };
            let open = d.open.remove(i);
            let h = open.h;
            // The last horizon alone searches without a slice.
            let alone = d.open.is_empty() && d.next >= d.horizons.len();
            match self.take_turn(&d, open, alone)? {
                Turn::Paused(open) => d.open.insert(i, open),
                Turn::Over(outcome) => return Ok(outcome),
                Turn::Refuted(ctl) => {
                    // No plan within h: none within a smaller horizon either.
                    d.open.retain(|o| o.h > h);
                    if let Some(outcome) = self.after_refuted(ctl, h)? {
                        return Ok(outcome);
                    }
                }
            }
        }
    }

    /// Closes the open horizons that some worker has refuted meanwhile, and
    /// skips those not yet grounded (all but the last).
    fn skip_refuted(&self, d: &mut Deepening) {
        let refuted = self.refuted.load(Ordering::Relaxed);
        d.open.retain(|o| o.h > refuted);
        while d.next + 1 < d.horizons.len() && d.horizons[d.next] <= refuted {
            d.next += 1;
        }
    }

    /// Whether the newest open horizon (if any) has searched long enough for
    /// the next to be grounded (see [`OPEN_AFTER`]).
    fn newest_done(&self, d: &Deepening) -> bool {
        // Measured on this worker's own grounding and solving time, not
        // the wall clock: waiting for clingo's lock (held by the other
        // workers, or by other solvers of the process) is not work done,
        // and with it counted the newest horizon never caught up with
        // half the time so far on a busy machine.
        d.open
            .last()
            .is_none_or(|o| o.spent >= OPEN_AFTER.max(o.ground * 2).max(self.busy() / 2))
    }

    /// Grounds the next horizon and opens it, first dropping the smallest open
    /// ones while too many are held; false when the worker was stopped
    /// meanwhile.
    fn open_next(&mut self, d: &mut Deepening) -> Res<bool> {
        let h = d.horizons[d.next];
        d.next += 1;
        // Several grounded horizons at once must not take the memory
        // limit's room: past half of it, only the newest is kept.
        let crowded = self
            .opts
            .memory_mb
            .is_some_and(|m| super::super::resident_mb() > m as f64 / 2.0);
        let atoms_open = |open: &[Open]| open.iter().map(|o| o.atoms).sum::<usize>();
        while d.open.len() >= MAX_OPEN
            || (!d.open.is_empty() && (crowded || atoms_open(&d.open) > MAX_OPEN_ATOMS))
        {
            let o = d.open.remove(0);
            self.progress(&format!("horizon {}: left unproven", o.h));
        }
        let job = Arc::clone(&self.job);
        let (ctl, atoms, ground_s) = self.ground_full(&job.full, h)?;
        if self.stopped() {
            return Ok(false);
        }
        self.progress(&format!(
            "horizon {h}: {atoms} atoms, ground {ground_s:.2} s"
        ));
        d.open.push(Open {
            h,
            ctl,
            atoms,
            spent: Duration::ZERO,
            ground: Duration::from_secs_f64(ground_s),
        });
        Ok(true)
    }

    /// One turn of the open horizon `open` (taken out of `d.open`): a search
    /// for a winning plan within its slice, or to the end when it is `alone`.
    /// The first plan found is sent as a candidate at once.
    fn take_turn(&mut self, d: &Deepening, open: Open, alone: bool) -> Res<Turn> {
        let Open {
            h,
            ctl,
            atoms,
            spent,
            ground,
        } = open;
        let job = Arc::clone(&self.job);
        let (map, factors) = (&job.map, &job.factors);
        let turn = slice(self.busy());
        let s0 = self.times.solve_s;
        let mut first = true;
        let (ctl, answer) = self.solve_for(
            ctl,
            &[d.query],
            false,
            (!alone).then_some(turn),
            |w, atoms| {
                if first {
                    first = false;
                    if let Some(plan) = plan_of(map, factors, atoms) {
                        w.progress(&format!(
                            "horizon {h}: a plan of {} moves after {:.2} s",
                            plan.len(),
                            d.started.elapsed().as_secs_f64()
                        ));
                        let found = FoundPlan {
                            plan,
                            goal: 100,
                            proven: Proven::None,
                        };
                        w.send(Event::Candidate(w.kind, found, w.times_now()));
                    }
                }
            },
        )?;
        let solve_s = self.times.solve_s - s0;
        let head = format!("horizon {h}: solve {:.2} s", spent.as_secs_f64() + solve_s);
        Ok(match answer {
            Answer::Paused => Turn::Paused(Open {
                h,
                ctl,
                atoms,
                spent: spent + Duration::from_secs_f64(solve_s),
                ground,
            }),
            Answer::Sat { atoms, optimal } => {
                self.progress(&format!("{head}: plan found"));
                let plan =
                    plan_of(map, factors, &atoms).ok_or("a model without a readable plan")?;
                let proven = if optimal {
                    Proven::Shortest
                } else {
                    Proven::None
                };
                Turn::Over(Verdict::Plan(FoundPlan {
                    plan,
                    goal: 100,
                    proven,
                }))
            }
            Answer::Interrupted { atoms } => {
                Turn::Over(match atoms.and_then(|a| plan_of(map, factors, &a)) {
                    Some(plan) => Verdict::Plan(FoundPlan {
                        plan,
                        goal: 100,
                        proven: Proven::None,
                    }),
                    None => Verdict::Stopped,
                })
            }
            Answer::Unsat => {
                self.progress(&format!("{head}: no winning plan"));
                self.refuted.fetch_max(h, Ordering::Relaxed);
                Turn::Refuted(ctl)
            }
        })
    }

    /// After horizon `h` is refuted: whether some play lasts beyond it; when
    /// none does, or `h` is `--max-steps`, the final word is the best goal
    /// at `h`. `None` while deepening goes on.
    fn after_refuted(&mut self, ctl: Control, h: usize) -> Res<Option<Verdict>> {
        let (ctl, answer) = self.solve(ctl, &[id("alive")?], true, |_, _| {})?;
        let bounded = matches!(answer, Answer::Unsat);
        if matches!(answer, Answer::Interrupted { .. } | Answer::Paused) {
            return Ok(Some(Verdict::Stopped));
        }
        self.send(Event::Horizon(self.kind, h, self.times));
        if bounded || h >= self.opts.max_steps {
            if bounded {
                self.progress(&format!("no play lasts beyond {h} steps"));
            }
            return self.best_goal_with(ctl, h, bounded).map(Some);
        }
        Ok(None)
    }
}

/// Whose turn: the oldest (smallest) open horizon searches at rate 1, the
/// next at 1/4, then 1/16, ...; the turn goes to the least spent time over
/// rate. Equal turns slowed the games whose first satisfiable horizon is
/// merely slow (coins2, comp2006 queens); favouring the newest opened ever
/// larger horizons before the satisfiable one could answer.
fn whose_turn(open: &[Open]) -> Option<usize> {
    (0..open.len()).min_by_key(|&i| open[i].spent * (1 << (2 * i)))
}

/// See [`ClingoWorker::horizons`].
fn horizons(max: usize, ends_by: Option<usize>) -> Vec<usize> {
    let mut out = Vec::new();
    let mut h = 4.min(max).max(1);
    loop {
        out.push(h);
        if h >= max {
            break;
        }
        let mut next = (h + h.div_ceil(2)).min(max);
        if let Some(end) = ends_by.filter(|&e| h < e && e < next) {
            next = end;
        }
        h = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::horizons;

    #[test]
    fn horizons_grow_by_half_and_stop_at_the_game_length() {
        assert_eq!(horizons(30, None), vec![4, 6, 9, 14, 21, 30]);
        assert_eq!(horizons(30, Some(19)), vec![4, 6, 9, 14, 19, 29, 30]);
        // A length on the schedule, or beyond the limit, changes nothing.
        assert_eq!(horizons(30, Some(14)), vec![4, 6, 9, 14, 21, 30]);
        assert_eq!(horizons(30, Some(40)), vec![4, 6, 9, 14, 21, 30]);
        assert_eq!(horizons(2, Some(1)), vec![2]);
    }
}
