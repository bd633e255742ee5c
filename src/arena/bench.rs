//! Measurements: UCT's strength against a baseline over a series of matches
//! (`ggp-asp bench arena`), and the search's throughput against the engine's raw
//! playout rate (`ggp-asp bench search`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde::Serialize;

use super::{run_match, MatchConfig, PlayerSpec};
use crate::gdl::Game;
use crate::reasoner::{AnyMachine, Engine, MachineVisitor, StateMachine};
use crate::search::policy::{playout, RandomPlayout};
use crate::search::{Mcts, Parallel, SearchConfig};

/// UCT against one opponent on one game.
#[derive(Clone, Debug, Serialize)]
pub struct ArenaResult {
    pub game: String,
    pub opponent: String,
    pub matches: usize,
    /// UCT's mean goal, 0..100.
    pub mean_score: f64,
    /// Half width of the 95% confidence interval of the mean (normal approximation).
    pub ci95: f64,
    /// UCT's goal in each match.
    pub scores: Vec<u8>,
    /// Errors (timeouts, illegal moves) recorded for UCT's seat.
    pub uct_errors: usize,
    /// Player -> its slowest answer over all matches, in seconds (the clock
    /// is the start and play clock).
    pub worst_reply_s: BTreeMap<String, f64>,
}

/// Mean and 95% half-interval of `xs`.
pub fn mean_ci95(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, 1.96 * (var / n).sqrt())
}

/// Plays `matches` matches of UCT against `opponent` (every other seat), UCT's
/// seat rotating through the roles. `on_match` sees each finished match.
pub fn uct_versus(
    name: &str,
    game: &Game,
    opponent: &PlayerSpec,
    matches: usize,
    cfg: &MatchConfig,
    mut on_match: impl FnMut(usize, usize, &super::MatchRecord),
) -> Result<ArenaResult> {
    let n = game.roles.len();
    let mut scores = Vec::with_capacity(matches);
    let mut uct_errors = 0;
    let mut worst_reply_s: BTreeMap<String, f64> = BTreeMap::new();
    for i in 0..matches {
        let seat = i % n;
        let players = (0..n)
            .map(|r| {
                if r == seat {
                    PlayerSpec::Uct
                } else {
                    opponent.clone()
                }
            })
            .collect();
        let mcfg = MatchConfig {
            seed: cfg.seed.wrapping_add(i as u64 * 7919),
            ..cfg.clone()
        };
        let rec = run_match(game, players, &mcfg)?;
        let role = &rec.roles[seat];
        uct_errors += rec.errors.iter().filter(|e| &e.role == role).count();
        for (r, (_, took)) in rec.worst_reply_s.iter().enumerate() {
            let w = worst_reply_s.entry(rec.players[r].clone()).or_default();
            *w = w.max(*took);
        }
        scores.push(rec.score(seat));
        on_match(i, seat, &rec);
    }
    let xs: Vec<f64> = scores.iter().map(|&s| s as f64).collect();
    let (mean_score, ci95) = mean_ci95(&xs);
    Ok(ArenaResult {
        game: name.to_string(),
        opponent: opponent.to_string(),
        matches,
        mean_score,
        ci95,
        scores,
        uct_errors,
        worst_reply_s,
    })
}

/// Tree search throughput against raw random playouts (one thread), the search
/// on `threads` threads shared as `parallel` says.
#[derive(Clone, Debug, Serialize)]
pub struct SearchBench {
    pub game: String,
    pub engine: String,
    pub threads: usize,
    pub parallel: Parallel,
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
) -> Result<SearchBench> {
    let (machine, _) = AnyMachine::build(game, engine)?;
    let engine = machine.name().to_string();
    let mut r = machine.visit(BenchVisitor {
        seconds,
        threads,
        parallel,
    });
    r.game = name.to_string();
    r.engine = engine;
    Ok(r)
}

struct BenchVisitor {
    seconds: f64,
    threads: usize,
    parallel: Parallel,
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
            ..cfg
        };
        let mut search = Mcts::new(Arc::clone(&m), m.initial_state(), cfg);
        search.search_until(Instant::now() + budget);
        let st = search.stats();
        let iterations_per_s = st.iterations_per_s();
        SearchBench {
            game: String::new(),
            engine: String::new(),
            threads: self.threads.max(1),
            parallel: self.parallel,
            playouts_per_s,
            iterations_per_s,
            ratio: iterations_per_s / playouts_per_s.max(1e-9),
            nodes: st.nodes,
            max_depth: st.max_depth,
        }
    }
}
