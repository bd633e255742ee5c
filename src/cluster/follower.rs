//! A follower rank of the cluster player (every rank but 0): it follows
//! rank 0's matches from its orders ([`super::player`] has the messages),
//! searches each one between messages, reports its root statistics before
//! each move is due, and solves one-player games its own way, as one solver
//! of a portfolio. It ends when rank 0 quits or falls silent.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use tracing::{debug, info, warn};

use super::player::{to_bytes, Order, Report};
use super::Cluster;
use crate::asp::Status;
use crate::gdl::print::term_to_string;
use crate::gdl::{self, Term};
use crate::player::solver::{SolverConfig, SolverRun};
use crate::protocol::SExpr;
use crate::reasoner::{AnyMachine, Engine, MachineVisitor, RoleIdx, StateMachine};
use crate::search::{Enhancements, Mcts, SearchConfig};

/// A follower that has not heard from rank 0 this long ends.
const ORPHANED_AFTER: Duration = Duration::from_secs(30);

/// A follower's copy of one match.
trait Follower {
    fn configure(&mut self, enhancements: Enhancements, threads: usize, seed: u64);
    fn play(&mut self, joint: &[String]) -> Result<(), String>;
    /// Whether it has a search with something to search.
    fn searching(&self) -> bool;
    fn search_until(&mut self, until: Instant);
    fn root(&self) -> Vec<(String, u64, f64)>;
}

struct FollowerMatch<M: StateMachine> {
    machine: Arc<M>,
    role: RoleIdx,
    state: M::State,
    search: Option<Mcts<M>>,
}

impl<M: StateMachine + 'static> Follower for FollowerMatch<M> {
    fn configure(&mut self, enhancements: Enhancements, threads: usize, seed: u64) {
        let cfg = SearchConfig {
            threads: threads.max(1),
            seed,
            enhancements,
            ..SearchConfig::default()
        };
        self.search = Some(Mcts::new(
            Arc::clone(&self.machine),
            self.state.clone(),
            cfg,
        ));
    }

    fn play(&mut self, joint: &[String]) -> Result<(), String> {
        if joint.is_empty() {
            return Ok(());
        }
        let symbols = &self.machine.game().symbols;
        let moves = joint
            .iter()
            .map(|text| {
                let term = SExpr::parse_one(text, "a move")?.to_ground(symbols)?;
                self.machine
                    .parse_move(&term)
                    .ok_or_else(|| format!("{text} is not a move of the game"))
            })
            .collect::<Result<Vec<_>, String>>()?;
        self.state = self.machine.next_state(&self.state, &moves);
        if let Some(s) = &mut self.search {
            s.advance(&moves);
        }
        Ok(())
    }

    fn searching(&self) -> bool {
        self.search.is_some() && !self.machine.is_terminal(&self.state)
    }

    fn search_until(&mut self, until: Instant) {
        if let Some(s) = &mut self.search {
            s.search_until(until);
        }
    }

    fn root(&self) -> Vec<(String, u64, f64)> {
        let Some(s) = &self.search else {
            return Vec::new();
        };
        let symbols = &self.machine.game().symbols;
        s.root_stats(self.role)
            .into_iter()
            .map(|(m, st)| {
                (
                    term_to_string(&self.machine.move_term(&m), symbols),
                    st.visits,
                    st.sum,
                )
            })
            .collect()
    }
}

struct Build {
    role: RoleIdx,
}

impl MachineVisitor for Build {
    type Output = Box<dyn Follower>;
    fn visit<M: StateMachine + 'static>(self, machine: Arc<M>) -> Box<dyn Follower> {
        Box::new(FollowerMatch {
            state: machine.initial_state(),
            machine,
            role: self.role,
            search: None,
        })
    }
}

fn build(rules: &str, role: &str, engine: Engine) -> Result<Box<dyn Follower>> {
    let game = gdl::load_bytes(rules.as_bytes(), "START rules")?;
    let role = game
        .symbols
        .get(role)
        .and_then(|s| game.roles.iter().position(|r| *r == Term::Const(s)))
        .ok_or_else(|| anyhow!("no role {role} in the rules"))?;
    let (machine, _) = AnyMachine::build(game, engine)?;
    Ok(machine.visit(Build { role }))
}

/// How long a follower searches before it looks at its messages.
const FOLLOWER_SLICE: Duration = Duration::from_millis(10);

/// How follower `rank` runs the solver in a portfolio: `solve`'s mode and
/// clingo options, other than rank 0's own run (auto mode, clingo's
/// defaults) and, over the first six followers, than each other's. Further
/// ranks repeat them with their own seed for clingo's choices.
pub fn variant(rank: usize) -> Vec<String> {
    const VARIANTS: [&[&str]; 6] = [
        &["--mode", "full", "--clingo=--configuration=trendy"],
        &["--mode", "search"],
        &["--mode", "incremental", "--clingo=--configuration=crafty"],
        &["--mode", "breadth"],
        &["--mode", "auto", "--clingo=--configuration=jumpy"],
        &["--mode", "full", "--clingo=--configuration=handy"],
    ];
    let i = rank.saturating_sub(1);
    let mut args: Vec<String> = VARIANTS[i % VARIANTS.len()]
        .iter()
        .map(|a| a.to_string())
        .collect();
    if i >= VARIANTS.len() {
        args.push(format!("--clingo=--seed={rank}"));
    }
    args
}

/// A follower's solver run for one match, from the state at step `from`.
struct PortfolioRun {
    from: usize,
    run: SolverRun,
}

/// Whether a follower goes on after reading its orders.
#[derive(PartialEq)]
enum Next {
    GoOn,
    /// Rank 0 quit.
    End,
}

/// A follower rank at work: its matches, its solver runs, the reports it
/// owes rank 0.
struct FollowerRank {
    cluster: Cluster,
    rank: usize,
    engine: Engine,
    /// How this rank solves ([`variant`]), for the log and rank 0.
    solver_variant: String,
    matches: HashMap<String, Box<dyn Follower>>,
    solving: HashMap<String, PortfolioRun>,
    /// Reports owed: when, for which match and step.
    due: Vec<(Instant, String, usize)>,
    /// When rank 0 was last heard from.
    heard: Instant,
}

/// A follower's life: follows rank 0's orders and searches its matches
/// between them, until rank 0 quits or is silent for [`ORPHANED_AFTER`].
pub fn follow(cluster: Cluster, engine: Engine) -> Result<()> {
    let rank = cluster.rank();
    let mut f = FollowerRank {
        cluster,
        rank,
        engine,
        solver_variant: variant(rank).join(" "),
        matches: HashMap::new(),
        solving: HashMap::new(),
        due: Vec::new(),
        heard: Instant::now(),
    };
    loop {
        if f.read_orders() == Next::End {
            return Ok(());
        }
        let now = Instant::now();
        if now.saturating_duration_since(f.heard) >= ORPHANED_AFTER {
            warn!(
                "cluster rank {rank}: nothing from rank 0 for {:.0} s; this rank ends",
                now.saturating_duration_since(f.heard).as_secs_f64()
            );
            return Ok(());
        }
        f.report_plans();
        f.report_roots(now);
        f.search_a_slice(now);
    }
}

impl FollowerRank {
    fn tell(&self, report: &Report) {
        self.cluster.send(0, &to_bytes(report));
    }

    /// Carries out every order waiting, until rank 0 says to quit.
    fn read_orders(&mut self) -> Next {
        let rank = self.rank;
        while let Some((_, bytes)) = self.cluster.try_receive() {
            // Reports are timed from the order's arrival: following the move
            // (compacting a large tree) takes time of its own.
            let arrived = Instant::now();
            self.heard = arrived;
            let order = match serde_json::from_slice::<Order>(&bytes) {
                Ok(o) => o,
                Err(e) => {
                    warn!("cluster rank {rank}: an order it cannot read: {e}");
                    continue;
                }
            };
            debug!("cluster rank {rank}: {}", order.name());
            if self.obey(order, arrived) == Next::End {
                return Next::End;
            }
        }
        Next::GoOn
    }

    /// Carries out one order, which arrived at `arrived`.
    fn obey(&mut self, order: Order, arrived: Instant) -> Next {
        match order {
            Order::Start { id, rules, role } => match build(&rules, &role, self.engine) {
                Ok(m) => {
                    self.matches.insert(id, m);
                }
                Err(e) => self.tell(&Report::Failed {
                    id,
                    why: format!("{e:#}"),
                }),
            },
            Order::Search {
                id,
                enhancements,
                threads,
                seed,
            } => {
                if let Some(m) = self.matches.get_mut(&id) {
                    let e = enhancements.parse().unwrap_or_default();
                    m.configure(e, threads, seed + self.rank as u64);
                }
            }
            Order::Play {
                id,
                step,
                joint,
                report_in_ms,
            } => self.play(
                id,
                step,
                &joint,
                arrived + Duration::from_millis(report_in_ms),
            ),
            Order::Solve {
                id,
                from,
                rules,
                timeout_ms,
                memory_mb,
                threads,
            } => {
                let limits = (Duration::from_millis(timeout_ms), memory_mb, threads);
                self.solve(id, from, &rules, limits);
            }
            Order::StopSolving { id } => {
                if self.solving.remove(&id).is_some() {
                    info!(
                        "cluster rank {}: match {id}: solver stopped (rank 0 has a plan)",
                        self.rank
                    );
                }
            }
            Order::Stop { id } => {
                self.matches.remove(&id);
                self.solving.remove(&id);
                self.due.retain(|(_, i, _)| *i != id);
            }
            Order::Ping => self.tell(&Report::Pong),
            Order::Beat => self.tell(&Report::Alive),
            Order::Quit => return Next::End,
        }
        Next::GoOn
    }

    /// Follows the joint move of match `id`'s step `step`; the root report
    /// is due at `report_at`. A move the match cannot follow ends it here.
    fn play(&mut self, id: String, step: usize, joint: &[String], report_at: Instant) {
        let Some(m) = self.matches.get_mut(&id) else {
            return;
        };
        match m.play(joint) {
            Ok(()) => self.due.push((report_at, id, step)),
            Err(why) => {
                self.matches.remove(&id);
                self.solving.remove(&id);
                self.tell(&Report::Failed { id, why });
            }
        }
    }

    /// Starts this rank's solver on match `id`'s `rules` (from step
    /// `from`), within `(timeout, memory_mb, threads)`.
    fn solve(&mut self, id: String, from: usize, rules: &str, limits: (Duration, u64, usize)) {
        let rank = self.rank;
        // A newer run replaces the match's old one (dropping a run kills its
        // child).
        self.solving.remove(&id);
        let exe = match std::env::current_exe() {
            Ok(exe) => exe,
            Err(e) => {
                warn!(
                    "cluster rank {rank}: match {id}: cannot find our own executable to solve: {e}"
                );
                return;
            }
        };
        let (timeout, memory_mb, threads) = limits;
        let cfg = SolverConfig {
            exe,
            timeout,
            memory_mb,
            threads,
        };
        let label = format!("cluster rank {rank} match {id} step {from}");
        match SolverRun::start_with(rules, &cfg, &label, &variant(rank)) {
            Ok(run) => {
                info!(
                    "cluster rank {rank}: match {id}: solver ({}) started from step {from}",
                    self.solver_variant
                );
                self.solving.insert(id, PortfolioRun { from, run });
            }
            Err(e) => warn!("cluster rank {rank}: match {id}: solver: {e}"),
        }
    }

    /// Sends rank 0 the plans of the solver runs that found one, and forgets
    /// every run that has ended.
    fn report_plans(&mut self) {
        let (rank, solved_as) = (self.rank, &self.solver_variant);
        let cluster = &self.cluster;
        self.solving.retain(|id, s| {
            let Some(outcome) = s.run.try_result() else {
                return true;
            };
            match outcome {
                Ok(r) if r.status == Status::Solved && !r.plan.is_empty() => {
                    info!(
                        "cluster rank {rank}: match {id}: solver ({solved_as}) found a plan of {} moves from step {} in {:.2}s",
                        r.plan.len(),
                        s.from,
                        s.run.elapsed().as_secs_f64()
                    );
                    let plan = Report::Plan {
                        id: id.clone(),
                        from: s.from,
                        variant: solved_as.clone(),
                        result: r,
                    };
                    cluster.send(0, &to_bytes(&plan));
                }
                Ok(r) => info!(
                    "cluster rank {rank}: match {id}: solver ({solved_as}): {}",
                    r.status.name()
                ),
                Err(e) => warn!("cluster rank {rank}: match {id}: solver ({solved_as}): {e}"),
            }
            false
        });
    }

    /// Sends rank 0 the root statistics due by `now`.
    fn report_roots(&mut self, now: Instant) {
        let (rank, matches, cluster) = (self.rank, &self.matches, &self.cluster);
        self.due.retain(|(at, id, step)| {
            if *at > now {
                return true;
            }
            if let Some(m) = matches.get(id) {
                debug!("cluster rank {rank}: reports step {step} of {id}");
                let root = Report::Root {
                    id: id.clone(),
                    step: *step,
                    moves: m.root(),
                };
                cluster.send(0, &to_bytes(&root));
            }
            false
        });
    }

    /// Searches each match not being solved for a slice (to the next report
    /// due at the latest), or sleeps a moment when there is none.
    fn search_a_slice(&mut self, now: Instant) {
        let next_due = self.due.iter().map(|(at, _, _)| *at).min();
        let until = |slice: Duration| {
            let end = Instant::now() + slice;
            next_due.map_or(end, |d| d.min(end))
        };
        let mut searched = false;
        // A match being solved leaves the cores to its solver.
        let solving = &self.solving;
        for (_, m) in self
            .matches
            .iter_mut()
            .filter(|(id, m)| m.searching() && !solving.contains_key(*id))
        {
            m.search_until(until(FOLLOWER_SLICE));
            searched = true;
        }
        if !searched {
            std::thread::sleep(until(Duration::from_millis(1)).saturating_duration_since(now));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::variant;

    /// The first six followers solve six different ways (none rank 0's
    /// default); the seventh repeats the first with a seed of its own.
    #[test]
    fn each_follower_solves_its_own_way() {
        let first: Vec<Vec<String>> = (1..=6).map(variant).collect();
        for (i, a) in first.iter().enumerate() {
            assert!(a.iter().any(|x| x == "--mode"), "{a:?}");
            assert!(first[i + 1..].iter().all(|b| b != a), "{a:?} twice");
        }
        let seventh = variant(7);
        assert_eq!(seventh[..first[0].len()], first[0][..]);
        assert_eq!(
            seventh.last().map(String::as_str),
            Some("--clingo=--seed=7")
        );
    }
}
