//! The search's throughput against the engine's raw playout rate (`ggp-asp
//! bench search`): what a UCT iteration costs beyond its playout.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde::Serialize;

use crate::gdl::Game;
use crate::reasoner::{AnyMachine, Engine, MachineVisitor, StateMachine};
use crate::search::policy::{playout, RandomPlayout};
use crate::search::{Enhancements, Mcts, Parallel, SearchConfig};

/// Tree search throughput against raw random playouts (one thread), the search
/// on `threads` threads shared as `parallel` says.
#[derive(Clone, Debug, Serialize)]
pub struct SearchBench {
    pub game: String,
    pub engine: String,
    pub threads: usize,
    pub parallel: Parallel,
    /// The search's enhancements (`""` for plain UCT).
    pub enhancements: String,
    /// Random playouts from the initial state per second.
    pub playouts_per_s: f64,
    /// UCT iterations (selection, expansion, playout, backup) per second.
    pub iterations_per_s: f64,
    /// iterations_per_s / playouts_per_s.
    pub ratio: f64,
    pub nodes: usize,
    pub max_depth: usize,
}

/// Measures `seconds` of raw playouts, then `seconds` of search from the initial state.
pub fn search_bench(
    name: &str,
    game: Game,
    engine: Engine,
    seconds: f64,
    threads: usize,
    parallel: Parallel,
    enhancements: Enhancements,
) -> Result<SearchBench> {
    let (machine, _) = AnyMachine::build(game, engine)?;
    let engine = machine.name().to_string();
    let mut r = machine.visit(BenchVisitor {
        seconds,
        threads,
        parallel,
        enhancements,
    });
    r.game = name.to_string();
    r.engine = engine;
    Ok(r)
}

struct BenchVisitor {
    seconds: f64,
    threads: usize,
    parallel: Parallel,
    enhancements: Enhancements,
}

impl MachineVisitor for BenchVisitor {
    type Output = SearchBench;
    fn visit<M: StateMachine + 'static>(self, m: Arc<M>) -> SearchBench {
        let budget = Duration::from_secs_f64(self.seconds);
        let cfg = SearchConfig {
            threads: 1,
            ..SearchConfig::default()
        };
        let mut rng = SmallRng::seed_from_u64(cfg.seed);
        let mut buf = Vec::new();
        let t0 = Instant::now();
        let mut n = 0u64;
        while t0.elapsed() < budget {
            let s = m.initial_state();
            let deadline = Some(t0 + budget);
            let max = cfg.max_playout_steps;
            if playout(
                &*m,
                s,
                &RandomPlayout,
                &mut rng,
                max,
                deadline,
                None,
                &mut buf,
            )
            .is_some()
            {
                n += 1;
            }
        }
        let playouts_per_s = n as f64 / t0.elapsed().as_secs_f64();
        let cfg = SearchConfig {
            threads: self.threads.max(1),
            parallel: self.parallel,
            enhancements: self.enhancements,
            ..cfg
        };
        let mut search = Mcts::new(Arc::clone(&m), m.initial_state(), cfg);
        if let Some(walks) = self.enhancements.gifl {
            // Learning is not part of the iterations measured.
            search.learn_features(walks, None);
        }
        search.search_until(Instant::now() + budget);
        let st = search.stats();
        let iterations_per_s = st.iterations_per_s();
        SearchBench {
            game: String::new(),
            engine: String::new(),
            threads: self.threads.max(1),
            parallel: self.parallel,
            enhancements: self.enhancements.to_string(),
            playouts_per_s,
            iterations_per_s,
            ratio: iterations_per_s / playouts_per_s.max(1e-9),
            nodes: st.nodes,
            max_depth: st.max_depth,
        }
    }
}
