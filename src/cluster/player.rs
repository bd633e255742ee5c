//! The HTTP player on a cluster (`mpirun -n N ggp-asp serve --cluster`).
//! Rank 0 serves HTTP as on one machine and tells the other ranks (the
//! followers) what happens in each match: the rules at START, the search
//! its meta-choice picked, every joint move, the end. Each follower keeps its
//! own search of the same state (root parallel across ranks, each rank's
//! threads as on one machine) and, shortly before rank 0 must answer a PLAY,
//! sends it the root statistics of our role's moves. Rank 0 adds the reports
//! that arrived to its own and plays the most visited move. A follower that
//! is late is left out of that decision and logged; rank 0 never waits for
//! one past its own deadline.
//!
//! On each rank one thread makes the MPI calls: on rank 0 the link's thread
//! (the match workers hand it messages through a channel), on a follower its
//! main loop, which searches between messages.

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};
use tracing::{debug, info, warn};

use super::{Cluster, ThreadedCluster};
use crate::gdl::print::term_to_string;
use crate::gdl::{self, Term};
use crate::player::{Helpers, RootReport};
use crate::protocol::SExpr;
use crate::reasoner::{AnyMachine, Engine, MachineVisitor, RoleIdx, StateMachine};
use crate::search::{Enhancements, Mcts, SearchConfig};

/// What rank 0 tells the followers.
#[derive(Debug, Serialize, Deserialize)]
enum Order {
    /// A match begins: its rules and our role.
    Start {
        id: String,
        rules: String,
        role: String,
    },
    /// Search the match this way (rank 0's meta-choice), from where it is.
    Search {
        id: String,
        enhancements: String,
        threads: usize,
        seed: u64,
    },
    /// The joint move played (in rank 0's engine's spelling; none for the
    /// first PLAY), and when to report: milliseconds from now.
    Play {
        id: String,
        step: usize,
        joint: Vec<String>,
        report_in_ms: u64,
    },
    Stop {
        id: String,
    },
    /// Answer at once: the round trip is measured at start.
    Ping,
    /// The player ends.
    Quit,
}

impl Order {
    fn name(&self) -> &'static str {
        match self {
            Order::Start { .. } => "start",
            Order::Search { .. } => "search",
            Order::Play { .. } => "play",
            Order::Stop { .. } => "stop",
            Order::Ping => "ping",
            Order::Quit => "quit",
        }
    }
}

/// What a follower tells rank 0.
#[derive(Debug, Serialize, Deserialize)]
enum Report {
    Root {
        id: String,
        step: usize,
        moves: Vec<(String, u64, f64)>,
    },
    Pong,
    /// The follower cannot follow the match (rules it cannot compile, a
    /// move it cannot parse): it is left out of it.
    Failed {
        id: String,
        why: String,
    },
}

/// Rank 0's side: the [`Helpers`] the player's matches call.
pub struct Link {
    outbox: Mutex<Sender<Vec<u8>>>,
    reports: Arc<Reports>,
    followers: usize,
    /// Time kept between a follower's report and rank 0's deadline: three
    /// times the slowest round trip measured at start, and at least
    /// [`MIN_EXCHANGE`].
    exchange: Duration,
}

/// The least time between a follower's report and rank 0's decision. A
/// round trip on a network is a fraction of a millisecond, but a follower
/// looks at its messages between slices of search and, on a loaded machine,
/// waits for a core: on the 2-core machine with three ranks, a report took
/// 5-20 ms to arrive.
const MIN_EXCHANGE: Duration = Duration::from_millis(50);

#[derive(Default)]
struct Reports {
    by_move: Mutex<HashMap<(String, usize), Vec<RootReport>>>,
    pongs: Mutex<usize>,
    arrived: Condvar,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cluster of {} followers", self.followers)
    }
}

impl Link {
    /// Starts rank 0's exchange thread (it owns `cluster` from now on) and
    /// measures the slowest round trip to the followers.
    pub fn start(cluster: ThreadedCluster) -> Result<Arc<Link>> {
        let followers = cluster.0.size() - 1;
        let (tx, rx) = mpsc::channel();
        let reports = Arc::new(Reports::default());
        let theirs = Arc::clone(&reports);
        std::thread::Builder::new()
            .name("cluster".into())
            .spawn(move || {
                // The whole value moves (a closure would capture the field).
                let cluster = cluster;
                exchange(cluster.0, rx, &theirs)
            })?;
        let t0 = Instant::now();
        tx.send(to_bytes(&Order::Ping))?;
        let pongs = reports.pongs.lock().unwrap_or_else(|p| p.into_inner());
        let (pongs, _) = reports
            .arrived
            .wait_timeout_while(pongs, Duration::from_secs(10), |n| *n < followers)
            .unwrap_or_else(|p| p.into_inner());
        if *pongs < followers {
            warn!(
                "cluster: {} of {followers} followers answered the first ping",
                *pongs
            );
        }
        let round_trip = t0.elapsed();
        drop(pongs);
        let exchange = (round_trip * 3).max(MIN_EXCHANGE);
        info!(
            "cluster: rank 0 of {} serves HTTP; round trip to the followers {:.1} ms, reports due {:.1} ms before each deadline",
            followers + 1,
            round_trip.as_secs_f64() * 1e3,
            exchange.as_secs_f64() * 1e3
        );
        Ok(Arc::new(Link {
            outbox: Mutex::new(tx),
            reports,
            followers,
            exchange,
        }))
    }

    fn tell(&self, order: &Order) {
        let tx = self.outbox.lock().unwrap_or_else(|p| p.into_inner());
        if tx.send(to_bytes(order)).is_err() {
            warn!("cluster: the exchange thread is gone; playing alone");
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.tell(&Order::Quit);
    }
}

impl Helpers for Link {
    fn start(&self, id: &str, rules: &str, role: &str) {
        self.tell(&Order::Start {
            id: id.into(),
            rules: rules.into(),
            role: role.into(),
        });
    }

    fn search(&self, id: &str, enhancements: &Enhancements, threads: usize, seed: u64) {
        self.tell(&Order::Search {
            id: id.into(),
            enhancements: enhancements.to_string(),
            threads,
            seed,
        });
    }

    fn play(&self, id: &str, step: usize, joint: Vec<String>, deadline: Instant) {
        let report_at = deadline.checked_sub(self.exchange).unwrap_or(deadline);
        let report_in_ms = report_at
            .saturating_duration_since(Instant::now())
            .as_millis() as u64;
        self.tell(&Order::Play {
            id: id.into(),
            step,
            joint,
            report_in_ms,
        });
    }

    fn stop(&self, id: &str) {
        self.tell(&Order::Stop { id: id.into() });
    }

    fn reports(&self, id: &str, step: usize) -> (Vec<RootReport>, usize) {
        debug!("cluster: reports for step {step} of {id} asked");
        let mut all = self
            .reports
            .by_move
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // Older steps' reports came too late to be used.
        all.retain(|(i, s), _| i != id || *s >= step);
        (
            all.remove(&(id.to_string(), step)).unwrap_or_default(),
            self.followers,
        )
    }
}

/// Rank 0's exchange thread: sends what the matches hand it to every
/// follower and files what the followers send, until the player ends.
fn exchange(cluster: Cluster, rx: Receiver<Vec<u8>>, reports: &Reports) {
    loop {
        let mut idle = true;
        loop {
            match rx.try_recv() {
                Ok(bytes) => {
                    idle = false;
                    for rank in 1..cluster.size() {
                        cluster.send(rank, &bytes);
                    }
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    let quit = to_bytes(&Order::Quit);
                    for rank in 1..cluster.size() {
                        cluster.send(rank, &quit);
                    }
                    return;
                }
            }
        }
        while let Some((from, bytes)) = cluster.try_receive() {
            idle = false;
            match serde_json::from_slice::<Report>(&bytes) {
                Ok(Report::Root { id, step, moves }) => {
                    debug!("cluster: rank {from} reported step {step} of {id}");
                    let mut all = reports.by_move.lock().unwrap_or_else(|p| p.into_inner());
                    all.entry((id, step))
                        .or_default()
                        .push(RootReport { rank: from, moves });
                }
                Ok(Report::Pong) => {
                    *reports.pongs.lock().unwrap_or_else(|p| p.into_inner()) += 1;
                    reports.arrived.notify_all();
                }
                Ok(Report::Failed { id, why }) => {
                    warn!("cluster: rank {from} left match {id}: {why}");
                }
                Err(e) => warn!("cluster: rank {from} sent something unreadable: {e}"),
            }
        }
        if idle {
            std::thread::sleep(Duration::from_micros(500));
        }
    }
}

fn to_bytes<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("orders and reports serialise")
}

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

/// A follower's life: follows rank 0's orders and searches its matches
/// between them, until rank 0 quits.
pub fn follow(cluster: Cluster, engine: Engine) -> Result<()> {
    let rank = cluster.rank();
    let mut matches: HashMap<String, Box<dyn Follower>> = HashMap::new();
    // Reports owed: when, for which match and step.
    let mut due: Vec<(Instant, String, usize)> = Vec::new();
    let tell = |report: &Report| cluster.send(0, &to_bytes(report));
    loop {
        while let Some((_, bytes)) = cluster.try_receive() {
            // Reports are timed from the order's arrival: following the move
            // (compacting a large tree) takes time of its own.
            let arrived = Instant::now();
            let order = match serde_json::from_slice::<Order>(&bytes) {
                Ok(o) => o,
                Err(e) => {
                    warn!("cluster rank {rank}: an order it cannot read: {e}");
                    continue;
                }
            };
            debug!("cluster rank {rank}: {}", order.name());
            match order {
                Order::Start { id, rules, role } => match build(&rules, &role, engine) {
                    Ok(m) => {
                        matches.insert(id, m);
                    }
                    Err(e) => tell(&Report::Failed {
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
                    if let Some(m) = matches.get_mut(&id) {
                        let e = enhancements.parse().unwrap_or_default();
                        m.configure(e, threads, seed + rank as u64);
                    }
                }
                Order::Play {
                    id,
                    step,
                    joint,
                    report_in_ms,
                } => {
                    let Some(m) = matches.get_mut(&id) else {
                        continue;
                    };
                    match m.play(&joint) {
                        Ok(()) => {
                            due.push((arrived + Duration::from_millis(report_in_ms), id, step))
                        }
                        Err(why) => {
                            matches.remove(&id);
                            tell(&Report::Failed { id, why });
                        }
                    }
                }
                Order::Stop { id } => {
                    matches.remove(&id);
                    due.retain(|(_, i, _)| *i != id);
                }
                Order::Ping => tell(&Report::Pong),
                Order::Quit => return Ok(()),
            }
        }
        let now = Instant::now();
        due.retain(|(at, id, step)| {
            if *at > now {
                return true;
            }
            if let Some(m) = matches.get(id) {
                debug!("cluster rank {rank}: reports step {step} of {id}");
                tell(&Report::Root {
                    id: id.clone(),
                    step: *step,
                    moves: m.root(),
                });
            }
            false
        });
        let next_due = due.iter().map(|(at, _, _)| *at).min();
        let until = |slice: Duration| {
            let end = Instant::now() + slice;
            next_due.map_or(end, |d| d.min(end))
        };
        let mut searched = false;
        for m in matches.values_mut().filter(|m| m.searching()) {
            m.search_until(until(FOLLOWER_SLICE));
            searched = true;
        }
        if !searched {
            std::thread::sleep(until(Duration::from_millis(1)).saturating_duration_since(now));
        }
    }
}
