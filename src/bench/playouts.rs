//! Random playouts to terminal from the initial state, timed (`ggp-asp bench
//! playouts`): what an engine costs to build and how many playouts and states it
//! runs per second, on the wall clock and per CPU second.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use rand::SeedableRng;

use crate::gdl::Game;
use crate::reasoner::propnet::NetStats;
use crate::reasoner::{AnyMachine, Engine, MachineVisitor, StateMachine};

/// Settings of the timed playouts.
#[derive(Clone, Debug)]
pub struct PlayoutsConfig {
    /// Seconds of playouts per game and engine.
    pub seconds: f64,
    pub threads: usize,
    pub seed: u64,
    /// A playout stops after this many joint moves.
    pub max_steps: usize,
}

/// One game on one engine: building it, then its timed playouts.
#[derive(Clone, Debug)]
pub struct EngineRun {
    /// The engine built ([`AnyMachine::name`]).
    pub engine: &'static str,
    /// Why that engine ([`AnyMachine::build`]'s reason).
    pub why: String,
    /// Threads of the playouts.
    pub threads: usize,
    /// Wall-clock and CPU seconds of the build.
    pub compile_s: f64,
    pub compile_cpu_s: f64,
    pub throughput: Throughput,
    /// The propnet's size; `None` on the prover.
    pub network: Option<NetStats>,
}

impl EngineRun {
    /// Joint moves per playout.
    pub fn avg_length(&self) -> f64 {
        self.throughput.steps as f64 / self.throughput.playouts.max(1) as f64
    }
}

/// Builds `engine` for `game`, timing the build, then runs [`timed_playouts`] on it.
pub fn measure(game: &Game, engine: Engine, cfg: &PlayoutsConfig) -> Result<EngineRun> {
    let mut runs = measure_threads(game, engine, cfg, &[cfg.threads])?;
    Ok(runs.remove(0))
}

/// [`measure`] once per thread count of `threads`, on one build: how the
/// engine scales with threads.
pub fn measure_threads(
    game: &Game,
    engine: Engine,
    cfg: &PlayoutsConfig,
    threads: &[usize],
) -> Result<Vec<EngineRun>> {
    let t0 = Instant::now();
    let cpu0 = thread_cpu_seconds();
    let built = AnyMachine::build(game.clone(), engine);
    let compile_s = t0.elapsed().as_secs_f64();
    let compile_cpu_s = thread_cpu_seconds() - cpu0;
    let (machine, why) = built?;
    let network = match &machine {
        AnyMachine::Propnet(n) => Some(n.stats().clone()),
        AnyMachine::Prover(_) | AnyMachine::Hybrid(_) => None,
    };
    Ok(threads
        .iter()
        .map(|&t| {
            let throughput = machine.visit(TimedRun(PlayoutsConfig {
                threads: t,
                ..cfg.clone()
            }));
            EngineRun {
                engine: machine.name(),
                why: why.clone(),
                threads: t.max(1),
                compile_s,
                compile_cpu_s,
                throughput,
                network: network.clone(),
            }
        })
        .collect())
}

/// Timed playouts on whichever engine was built.
struct TimedRun(PlayoutsConfig);

impl MachineVisitor for TimedRun {
    type Output = Throughput;
    fn visit<M: StateMachine + 'static>(self, m: Arc<M>) -> Throughput {
        let c = self.0;
        timed_playouts(&*m, c.seconds, c.threads, c.seed, c.max_steps)
    }
}

/// Throughput of random playouts from the initial state.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Throughput {
    pub playouts: u64,
    /// Joint moves played over all playouts.
    pub steps: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// CPU seconds of the playout threads, summed: on a machine shared with other
    /// jobs this says what the engine does when it has a core.
    pub cpu_seconds: f64,
}

impl Throughput {
    pub fn playouts_per_s(&self) -> f64 {
        self.playouts as f64 / self.seconds.max(1e-9)
    }
    /// States visited per second, the initial state of each playout included.
    pub fn states_per_s(&self) -> f64 {
        (self.steps + self.playouts) as f64 / self.seconds.max(1e-9)
    }
    /// Playouts per CPU second of one thread.
    pub fn playouts_per_cpu_s(&self) -> f64 {
        self.playouts as f64 / self.cpu_seconds.max(1e-9)
    }
    pub fn states_per_cpu_s(&self) -> f64 {
        (self.steps + self.playouts) as f64 / self.cpu_seconds.max(1e-9)
    }
}

/// CPU time of the calling thread, in seconds.
fn thread_cpu_seconds() -> f64 {
    crate::cputime::thread().as_secs_f64()
}

/// Runs random playouts ([`StateMachine::playout`]) on `threads` threads for about
/// `seconds`, each thread seeded from `seed`; a playout stops at `max_steps`.
pub fn timed_playouts<M: StateMachine>(
    m: &M,
    seconds: f64,
    threads: usize,
    seed: u64,
    max_steps: usize,
) -> Throughput {
    let start = Instant::now();
    let budget = std::time::Duration::from_secs_f64(seconds.max(0.0));
    let per_thread: Vec<(u64, u64, f64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.max(1) as u64)
            .map(|t| {
                s.spawn(move || {
                    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed ^ (t << 32));
                    let cpu0 = thread_cpu_seconds();
                    let init = m.initial_state();
                    let mut goals = Vec::new();
                    let (mut n, mut steps) = (0u64, 0u64);
                    // At least one playout, so a slow engine still gives a figure.
                    loop {
                        let limits = crate::reasoner::PlayoutLimits::steps(max_steps);
                        let p = m.playout(&init, &mut rng, limits, &mut goals);
                        n += 1;
                        steps += p.steps as u64;
                        if start.elapsed() >= budget {
                            break;
                        }
                    }
                    (n, steps, thread_cpu_seconds() - cpu0)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("playout threads do not panic"))
            .collect()
    });
    Throughput {
        playouts: per_thread.iter().map(|x| x.0).sum(),
        steps: per_thread.iter().map(|x| x.1).sum(),
        seconds: start.elapsed().as_secs_f64(),
        cpu_seconds: per_thread.iter().map(|x| x.2).sum(),
    }
}
