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
//! On one-player games the followers also solve: each runs the solver its
//! own way (a mode and clingo configuration per rank, see
//! [`super::follower::variant`]) on
//! the state rank 0's own solver starts from, a portfolio. The first plan
//! rank 0 verifies is followed, and every other run is stopped.
//!
//! A rank that dies, hangs or falls behind never costs a move: rank 0 sends
//! without blocking (a message to a rank that does not take it waits in
//! that rank's queue), hears from every follower once a second, and leaves
//! a silent one out of its decisions; a follower that no longer hears from
//! rank 0 ends. For the job to outlive a rank, `mpirun` must be told not to
//! end it (`--mca orte_enable_recovery 1 --mca
//! orte_abort_on_non_zero_status 0` with Open MPI 4; README.md).
//!
//! On each rank one thread makes the MPI calls: on rank 0 the link's thread
//! (the match workers hand it messages through a channel), on a follower its
//! main loop, which searches between messages.

use std::collections::{HashMap, VecDeque};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use serde::{Deserialize, Serialize};
use tracing::{debug, info, warn};

use super::{Cluster, Outgoing, ThreadedCluster};
use crate::asp::SolveResult;
use crate::player::solver::SolverConfig;
use crate::player::{HelperPlan, Helpers, RootReport};
use crate::search::Enhancements;

/// What rank 0 tells the followers.
#[derive(Debug, Serialize, Deserialize)]
pub(super) enum Order {
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
    /// Solve the one-player game `rules` (the match from the state at step
    /// `from`) the follower's own way, within these limits.
    Solve {
        id: String,
        from: usize,
        rules: String,
        timeout_ms: u64,
        memory_mb: u64,
        threads: usize,
    },
    /// Rank 0 has its plan: stop solving.
    StopSolving {
        id: String,
    },
    /// Answer at once: the round trip is measured at start.
    Ping,
    /// Rank 0 is alive (every [`BEAT`]); answered with [`Report::Alive`].
    Beat,
    /// The player ends.
    Quit,
}

impl Order {
    pub(super) fn name(&self) -> &'static str {
        match self {
            Order::Start { .. } => "start",
            Order::Search { .. } => "search",
            Order::Play { .. } => "play",
            Order::Stop { .. } => "stop",
            Order::Solve { .. } => "solve",
            Order::StopSolving { .. } => "stop solving",
            Order::Ping => "ping",
            Order::Beat => "beat",
            Order::Quit => "quit",
        }
    }
}

/// What a follower tells rank 0.
#[derive(Debug, Serialize, Deserialize)]
pub(super) enum Report {
    Root {
        id: String,
        step: usize,
        moves: Vec<(String, u64, f64)>,
    },
    Pong,
    Alive,
    /// A plan the follower's solver found and verified.
    Plan {
        id: String,
        from: usize,
        variant: String,
        result: SolveResult,
    },
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
/// looks at its messages between slices of search and, on a loaded machine
/// (more ranks than cores), waits for a core first, so a report can arrive
/// many milliseconds after it was sent.
const MIN_EXCHANGE: Duration = Duration::from_millis(50);

/// How often rank 0 tells the followers it is alive, and they answer.
const BEAT: Duration = Duration::from_secs(1);
/// A follower not heard from for this long is logged as silent (its
/// reports are missing from every decision anyway). Compiling large rules
/// keeps a follower from its messages for a few seconds.
const SILENT_AFTER: Duration = Duration::from_secs(10);
/// A follower silent this long is gone: nothing more is sent to it.
const GONE_AFTER: Duration = Duration::from_secs(60);

#[derive(Default)]
struct Reports {
    by_move: Mutex<HashMap<(String, usize), Vec<RootReport>>>,
    plans: Mutex<HashMap<String, Vec<HelperPlan>>>,
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

    fn solve(&self, id: &str, from: usize, rules: &str, cfg: &SolverConfig) {
        self.tell(&Order::Solve {
            id: id.into(),
            from,
            rules: rules.into(),
            timeout_ms: cfg.timeout.as_millis() as u64,
            memory_mb: cfg.memory_mb,
            threads: cfg.threads,
        });
    }

    fn stop_solving(&self, id: &str) {
        self.tell(&Order::StopSolving { id: id.into() });
    }

    fn plans(&self, id: &str) -> Vec<HelperPlan> {
        self.reports
            .plans
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id)
            .unwrap_or_default()
    }
}

/// Rank 0's view of one follower: what is still to be sent to it, the
/// message on its way, and when it was last heard from.
struct Peer {
    rank: usize,
    queue: VecDeque<Vec<u8>>,
    sending: Option<Outgoing>,
    heard: Instant,
    silent: bool,
    gone: bool,
}

impl Peer {
    /// Moves the queue along: the next message goes out once the last one
    /// has left, so a rank that takes nothing holds up only its own queue.
    fn pump(&mut self, cluster: &Cluster) {
        if self.gone {
            return;
        }
        if self.sending.as_mut().is_some_and(|o| !o.done()) {
            return;
        }
        self.sending = self.queue.pop_front().map(|b| cluster.post(self.rank, b));
    }

    /// Logs a silence that began or ended, and gives up on a rank silent
    /// for [`GONE_AFTER`].
    fn check(&mut self, now: Instant) {
        let quiet = now.saturating_duration_since(self.heard);
        if self.gone {
            return;
        }
        if quiet >= GONE_AFTER {
            warn!(
                "cluster: rank {} silent for {:.0} s: gone; nothing more is sent to it",
                self.rank,
                quiet.as_secs_f64()
            );
            self.gone = true;
            self.queue.clear();
            // Dropped in flight: its buffer is left to the process.
            self.sending = None;
        } else if quiet >= SILENT_AFTER && !self.silent {
            warn!(
                "cluster: rank {} silent for {:.0} s (dead, stuck or busy): its reports are left out until it answers",
                self.rank,
                quiet.as_secs_f64()
            );
            self.silent = true;
        }
    }

    fn heard(&mut self, now: Instant) {
        self.heard = now;
        if self.silent && !self.gone {
            info!("cluster: rank {} answers again", self.rank);
            self.silent = false;
        }
    }
}

/// Rank 0's exchange thread: sends what the matches hand it to every
/// follower, files what the followers send, and beats once a second, until
/// the player ends. It never blocks on a follower.
fn exchange(cluster: Cluster, rx: Receiver<Vec<u8>>, reports: &Reports) {
    let now = Instant::now();
    let mut peers: Vec<Peer> = (1..cluster.size())
        .map(|rank| Peer {
            rank,
            queue: VecDeque::new(),
            sending: None,
            heard: now,
            silent: false,
            gone: false,
        })
        .collect();
    let mut beat = now;
    loop {
        let mut idle = true;
        let mut quit = false;
        loop {
            match rx.try_recv() {
                Ok(bytes) => {
                    idle = false;
                    for p in peers.iter_mut().filter(|p| !p.gone) {
                        p.queue.push_back(bytes.clone());
                    }
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    quit = true;
                    break;
                }
            }
        }
        let now = Instant::now();
        if now >= beat {
            let bytes = to_bytes(&Order::Beat);
            for p in peers.iter_mut().filter(|p| !p.gone) {
                p.queue.push_back(bytes.clone());
            }
            beat = now + BEAT;
        }
        if quit {
            let bytes = to_bytes(&Order::Quit);
            for p in peers.iter_mut().filter(|p| !p.gone) {
                p.queue.push_back(bytes.clone());
            }
            // The quit goes out to whoever takes it within a second.
            let until = Instant::now() + Duration::from_secs(1);
            while Instant::now() < until
                && peers
                    .iter()
                    .any(|p| !p.gone && (p.sending.is_some() || !p.queue.is_empty()))
            {
                for p in &mut peers {
                    p.pump(&cluster);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            return;
        }
        for p in &mut peers {
            p.pump(&cluster);
        }
        while let Some((from, bytes)) = cluster.try_receive() {
            idle = false;
            if let Some(p) = peers.iter_mut().find(|p| p.rank == from) {
                p.heard(Instant::now());
            }
            file_report(from, &bytes, reports);
        }
        let now = Instant::now();
        for p in &mut peers {
            p.check(now);
        }
        if idle {
            std::thread::sleep(Duration::from_micros(500));
        }
    }
}

/// Files one follower's message where the matches look for it.
fn file_report(from: usize, bytes: &[u8], reports: &Reports) {
    match serde_json::from_slice::<Report>(bytes) {
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
        Ok(Report::Alive) => {}
        Ok(Report::Plan {
            id,
            from: step,
            variant,
            result,
        }) => {
            info!(
                "cluster: rank {from} ({variant}) found a plan of {} moves for {id} from step {step}",
                result.plan.len()
            );
            let mut all = reports.plans.lock().unwrap_or_else(|p| p.into_inner());
            all.entry(id).or_default().push(HelperPlan {
                rank: from,
                from: step,
                variant,
                result,
            });
        }
        Ok(Report::Failed { id, why }) => {
            warn!("cluster: rank {from} left match {id}: {why}");
        }
        Err(e) => warn!("cluster: rank {from} sent something unreadable: {e}"),
    }
}

pub(super) fn to_bytes<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("orders and reports serialise")
}
