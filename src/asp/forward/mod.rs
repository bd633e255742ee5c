//! Forward search: depth-first over the rule engine, the third worker of `auto`.
//!
//! Some puzzles defeat the time-indexed encodings however they are solved:
//! peg solitaire needs 31 jumps, each of which clasp must place at the right
//! step, and its nogoods, tied to steps, do not carry over to the same jumps one
//! step later. A forward search has no such trouble: it plays moves from the
//! initial state, and a table of the states it has seen fail (keyed by a 64-bit
//! hash, with the depth they were searched to) folds the many orders of the same
//! jumps into one. It runs on the propnet when the game compiles (the prover
//! otherwise), to the depth `--max-steps`, and tries the children of a state in
//! order of their goal value (most games score progress in every state: pegs
//! removed, squares visited), then fewest moves first (fail first: Warnsdorff's
//! rule, which finds a knight's tour at once). A run that spends its node
//! budget (Luby's sequence) starts again with ties broken at random, seeded, and
//! the table kept: that rescues the pegs whose first choices were bad. Its
//! winning plans are proven
//! nothing; when it runs out of lines it knows the best goal within reach, and
//! proves it when every line ended in the game (up to the odds of a 64-bit
//! hash collision hiding a line: about one in a million at ten million states).
//! The coordinator replays its plans on the prover like every other.
//!
//! Before the depth-first search, when the ground rules give goal distances
//! ([`distance`]), a beam phase makes one pass from the initial state
//! keeping the states that look nearest to goal 100 at every step: it brings
//! many pieces home at once where the depth-first search commits to its first
//! moves (solitaireChineseCheckers).
//!
//! This file runs the phases and answers; the depth-first search itself (its
//! table, restarts, look-ahead and focus) is in `dfs.rs`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::gdl::{Game, Term};
use crate::reasoner::ground::GroundProgram;
use crate::reasoner::{MachineVisitor, StateMachine};

use super::bounds::{self, Bound};
use super::solve::{Event, FoundPlan, Times, Verdict};
use super::{Proven, SolveContext, WorkerKind};
use beam::{beam, Beam};
use dfs::Dfs;
use distance::Distances;
use support::Support;

pub mod abstraction;
mod astar;
mod beam;
pub mod blockers;
pub mod breadth;
pub mod ceiling;
pub mod count;
mod dfs;
pub mod distance;
mod duals;
mod ida;
pub mod pattern;
pub mod relaxed;
pub mod space;
pub mod support;
use crate::gdl::split::Unique;

/// The first role's goal in `s` as the encodings and the verification read
/// it: its highest value when the rules give several (a defective game may:
/// peg_dresden2009 gives 99 and 100 at once; coins2 0 and 100).
fn best_goal<M: StateMachine>(m: &M, s: &M::State) -> u8 {
    m.goal_values(s, 0).last().copied().unwrap_or(0)
}

/// The proven lower bound (in moves, less one) from which the search starts
/// at once in auto: clingo's workers need seconds for the horizons up to
/// there, and a plan the search finds is proven as long (every plan of
/// SERGEI's ten queens has ten moves, which the clock says), while the
/// search, stepping back, costs the incremental worker little.
const LONG_PLAN: usize = 8;

/// How the search ended.
enum End {
    Won(Vec<Term>),
    /// No win within `--max-steps`. Every terminal state within reach was seen
    /// (the table only skips states already searched at least as deep), so `best`
    /// is the best goal reachable, with a plan to it; `complete` when every line
    /// ended in the game, not at the depth bound.
    Exhausted {
        best: Option<(u8, Vec<Term>)>,
        complete: bool,
    },
    Stopped,
}

/// When the search starts, and whether it is the solve's only worker.
#[derive(Clone, Copy, Debug)]
pub struct Start {
    /// How long the clingo workers have the machine to themselves first.
    pub delay: Duration,
    /// The search is the only worker (mode `search`): an exhausted search
    /// answers with what it saw; in auto it only answers with what it
    /// proved and otherwise leaves the answer to clingo.
    pub alone: bool,
}

/// Runs the search on the solve's engine and reports like a clingo worker: a
/// `Done`, or `Failed` when no engine can be built. `ground` is the game's
/// ground program (behind the goal distances and the goal support), dropped
/// once those are made.
pub fn run(
    context: &SolveContext,
    ground: Option<Arc<GroundProgram>>,
    when: Start,
    tx: mpsc::Sender<Event>,
) {
    let Start { delay, alone } = when;
    let (game, max_steps) = (&context.game, context.opts.max_steps);
    let start = Instant::now();
    let times = || Times {
        ground_s: 0.0,
        solve_s: start.elapsed().saturating_sub(delay).as_secs_f64(),
    };
    // Every state a line reaches holds only atoms of the grounder's relaxed
    // model (negation left out): without a goal above 0 there, no plan
    // scores above 0, whatever its length (slidingpieces' goal names cells
    // its board does not have).
    if let Some(g) = &ground {
        if best_goal_in_reach(game, g) == Some(0) {
            let outcome = Verdict::NoPlan {
                horizon: max_steps,
                message: "no plan reaches a goal above 0 (none is derivable in any \
                          state, even with negation left out)"
                    .to_string(),
            };
            let _ = tx.send(Event::Done(WorkerKind::Search, outcome, times()));
            return;
        }
    }
    // In auto the clingo workers have the machine to themselves first: most
    // games they solve soon, with proofs the search cannot give. Not when a
    // bound already proves every plan long: clingo would be long on the way.
    while start.elapsed() < delay && context.refuted.load(Ordering::Relaxed) < LONG_PLAN {
        if context.stopped() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Beside the clingo workers, behind the incremental one, and further
    // back when the breadth-first search leads.
    if !alone {
        crate::priority::step_back(crate::priority::BEHIND);
        context
            .followers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(crate::priority::thread_id());
    }
    let guides = Guides::new(game, ground.as_deref(), &context.unique);
    let machine = context.machine(ground.as_deref());
    drop(ground);
    let machine = match machine {
        Ok((m, why)) => {
            crate::progress!("[search] engine: {why}");
            m
        }
        Err(e) => {
            let _ = tx.send(Event::Failed(WorkerKind::Search, e, times()));
            return;
        }
    };
    let end = machine.visit(Visit {
        max_steps,
        guides,
        alone,
        stop: &context.stop,
        tx: &tx,
    });
    if let Some(outcome) = outcome(end, alone, max_steps, &tx, times) {
        let _ = tx.send(Event::Done(WorkerKind::Search, outcome, times()));
    }
}

/// The worker's final word on how the search ended; `None` when it has sent
/// `Failed` instead. In auto a win is only a candidate, sent here, and an
/// exhausted search that proved nothing fails.
fn outcome(
    end: End,
    alone: bool,
    max_steps: usize,
    tx: &mpsc::Sender<Event>,
    times: impl Fn() -> Times,
) -> Option<Verdict> {
    let plan = |plan, goal, proven| Verdict::Plan(FoundPlan { plan, goal, proven });
    Some(match end {
        // In auto a win is a candidate: the clingo workers get the coordinator's
        // grace to find a shorter plan or prove one shortest.
        End::Won(moves) if !alone => {
            let found = FoundPlan {
                plan: moves,
                goal: 100,
                proven: Proven::None,
            };
            let _ = tx.send(Event::Candidate(WorkerKind::Search, found, times()));
            Verdict::Stopped
        }
        End::Won(moves) => plan(moves, 100, Proven::None),
        End::Stopped => Verdict::Stopped,
        End::Exhausted {
            best: Some((goal, moves)),
            complete,
        } if complete || alone => {
            let proven = if complete {
                Proven::BestGoal
            } else {
                Proven::None
            };
            plan(moves, goal, proven)
        }
        End::Exhausted {
            best: None,
            complete,
        } if complete || alone => {
            let within = if complete {
                "every line of play searched".to_string()
            } else {
                format!("every line of play searched to --max-steps {max_steps}")
            };
            Verdict::NoPlan {
                horizon: max_steps,
                message: format!("no plan reaches a goal above 0 ({within})"),
            }
        }
        End::Exhausted { .. } => {
            let e = format!("no winning plan within {max_steps} moves");
            let _ = tx.send(Event::Failed(WorkerKind::Search, e, times()));
            return None;
        }
    })
}

/// The highest goal value of the first role among the atoms of the relaxed
/// model `g` (0 when it has none); `None` when a value is no number.
fn best_goal_in_reach(game: &Game, g: &GroundProgram) -> Option<u8> {
    g.first_role_goals(game)
        .into_iter()
        .try_fold(0u8, |best, (_, v)| Some(best.max(v.parse().ok()?)))
}

/// What the analyses of the rules give the search to steer and prune by.
struct Guides {
    /// Fluent patterns that rule goal 100 out (see [`blockers`]).
    blockers: Vec<Term>,
    /// A score that must catch up with a clock for goal 100 (see [`bounds`]).
    bound: Option<Bound>,
    /// Goal distances, for the beam phase (see [`distance`]).
    distances: Option<Distances>,
    /// What goal 100 still needs of the final state (see [`support`]).
    support: Option<Support>,
    /// The branch and bound for the best goal below 100 (see [`ceiling`]).
    ceiling: Option<ceiling::Prune>,
}

impl Guides {
    /// The analyses of `game`, those of the goal distances and the support on
    /// its ground rules `ground`.
    fn new(game: &Game, ground: Option<&GroundProgram>, unique: &[Unique]) -> Guides {
        let blockers = blockers::blockers(game);
        let bound = bounds::find(game);
        let distances = ground.and_then(|g| Distances::new(game, g));
        let support = ground
            .and_then(|g| Support::new(game, g, unique))
            .filter(Support::informative);
        if let Some(s) = &support {
            crate::progress!("[search] goal support: {}", s.describe());
        }
        if let Some(b) = &bound {
            crate::progress!("[search] {}", b.describe(game));
        }
        if crate::report::wanted() && !blockers.is_empty() {
            let shown: Vec<String> = blockers
                .iter()
                .map(|p| blockers::describe(p, &game.symbols))
                .collect();
            crate::progress!("[search] goal 100 needs none of: {}", shown.join(", "));
        }
        Guides {
            blockers,
            bound,
            distances,
            support,
            ceiling: ground.and_then(|g| ceiling::Prune::new(game, g)),
        }
    }
}

struct Visit<'a> {
    max_steps: usize,
    guides: Guides,
    /// The search is the only worker: its answer is the solver's.
    alone: bool,
    stop: &'a AtomicBool,
    tx: &'a mpsc::Sender<Event>,
}

impl MachineVisitor for Visit<'_> {
    type Output = End;

    fn visit<M: StateMachine + 'static>(self, machine: Arc<M>) -> End {
        let Guides {
            blockers,
            bound,
            distances,
            support,
            ceiling,
        } = self.guides;
        let mut dfs = Dfs::new(
            &*machine,
            blockers,
            support.as_ref(),
            bound,
            ceiling,
            self.stop,
            self.tx,
        );
        let root = machine.initial_state();
        if machine.is_terminal(&root) {
            // Nothing to search: the clingo workers answer for the empty plan.
            return End::Stopped;
        }
        dfs.find_duals(&root);
        let Some(d) = distances.filter(|d| d.estimate(&machine.fluents(&root)) > 0) else {
            return dfs
                .runs(&root, self.max_steps, self.alone, None)
                .expect("no pause");
        };
        // The beam's first pass, then the depth-first search until it has had
        // as much CPU time (at the end of a run), then the second pass (only
        // where the first ended in time), then the search to its end. Why
        // interleaved: the second pass wins where the search is slow (peg,
        // goal 100 at 5.5 s against 35 s), but it costs 3-4 s where the
        // search wins in its first run (hunterbig, in 48 states).
        let work = crate::cputime::ThreadWatch::start();
        let mut pause = None;
        for mobility in [false, true] {
            if let Some(p) = pause {
                if let Some(end) = dfs.runs(&root, self.max_steps, self.alone, Some(p)) {
                    return end;
                }
            }
            match beam(&*machine, &d, &root, self.max_steps, self.stop, mobility) {
                Beam::Won(moves) => return End::Won(dfs.terms(&moves)),
                Beam::Stopped => return End::Stopped,
                Beam::Failed(best) => {
                    if let Some((g, plan)) = best {
                        dfs.fallback(g, &plan);
                    }
                }
                Beam::OutOfTime(best) => {
                    if let Some((g, plan)) = best {
                        dfs.fallback(g, &plan);
                    }
                    break;
                }
            }
            pause = Some(work.elapsed().max(MIN_PAUSE));
        }
        dfs.runs(&root, self.max_steps, self.alone, None)
            .expect("no pause")
    }
}

/// The least CPU time the depth-first search gets before the beam's second
/// pass, where the first pass was quicker.
const MIN_PAUSE: Duration = Duration::from_millis(500);
