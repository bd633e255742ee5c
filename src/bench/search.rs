//! The search's throughput against the engine's raw playout rate (`ggp-asp
//! bench search`): what a UCT iteration costs beyond its playout.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde::Serialize;

use crate::gdl::Game;
use crate::learn::Model;
use crate::reasoner::{AnyMachine, Engine, MachineVisitor, StateMachine};
use crate::search::policy::{playout, RandomPlayout};
use crate::search::{Enhancements, Parallel, SearchConfig};
use crate::strategy::{ModelUse, UctSetup};

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
    /// The search's iterations and the seconds they took.
    pub iterations: u64,
    pub seconds: f64,
    /// The process's CPU time over the search, all threads, per iteration
    /// (microseconds): flat as threads are added while the search scales
    /// (even past the machine's cores, where threads take turns), growing
    /// where they contend for something.
    pub cpu_us_per_iteration: f64,
    /// The learned model whose value scores the leaves (`--model`), with the
    /// playout's share (`--mix`), if any.
    pub model: Option<String>,
    /// The first role's moves at the root with their visits and summed
    /// values (what root parallel search merges).
    #[serde(skip)]
    pub root: Vec<RootMove>,
}

/// A move at the root of a search, with its statistics.
#[derive(Clone, Debug, Serialize)]
pub struct RootMove {
    /// The move as the game writes it.
    pub text: String,
    pub visits: u64,
    pub sum: f64,
}

/// What [`search_bench`] runs: the search's shape and how long.
#[derive(Clone, Debug)]
pub struct SearchSetup {
    pub engine: Engine,
    pub seconds: f64,
    pub threads: usize,
    pub parallel: Parallel,
    pub enhancements: Enhancements,
    /// The search's seed (ranks of a cluster each take their own).
    pub seed: u64,
    /// A learned model scoring the leaves instead of the playouts (`nn-uct`),
    /// or mixed with them at this weight of the model's (`nn-mix`).
    pub model: Option<(Arc<Model>, Option<f64>)>,
}

/// Measures `seconds` of raw playouts, then `seconds` of search from the initial state.
pub fn search_bench(name: &str, game: Game, setup: SearchSetup) -> Result<SearchBench> {
    if let Some((m, _)) = &setup.model {
        m.check_game(&game)?;
    }
    let (machine, _) = AnyMachine::build(game, setup.engine)?;
    let engine = machine.name().to_string();
    let mut r = machine.visit(BenchVisitor {
        seconds: setup.seconds,
        threads: setup.threads,
        parallel: setup.parallel,
        enhancements: setup.enhancements,
        seed: setup.seed,
        model: setup.model,
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
    seed: u64,
    model: Option<(Arc<Model>, Option<f64>)>,
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
            let limits = crate::reasoner::PlayoutLimits {
                max_steps: cfg.max_playout_steps,
                deadline,
                sure_wins: false,
            };
            if playout(&*m, s, &RandomPlayout, &mut rng, limits, None, &mut buf).is_some() {
                n += 1;
            }
        }
        let playouts_per_s = n as f64 / t0.elapsed().as_secs_f64();
        let mut uct = UctSetup::from_config(SearchConfig {
            threads: self.threads.max(1),
            parallel: self.parallel,
            enhancements: self.enhancements,
            seed: self.seed,
            ..cfg
        });
        // As the players search: with the tuned constant, and (nn-uct) no
        // playouts, a new node scored by the network.
        let mut model = None;
        if let Some((net, mix)) = &self.model {
            let (used, said) = match mix {
                Some(w) => (ModelUse::Mix(*w), format!("mixed at {w}")),
                None => (ModelUse::Leaves, "at the leaves".to_string()),
            };
            uct = uct.with_model(Arc::clone(net), used);
            model = Some(said);
        }
        let mut search = uct.search(Arc::clone(&m), m.initial_state());
        if let Some(walks) = self.enhancements.gifl {
            // Learning is not part of the iterations measured.
            search.learn_features(walks, None);
        }
        let cpu0 = crate::cputime::process();
        search.search_until(Instant::now() + budget);
        let cpu = crate::cputime::process().saturating_sub(cpu0);
        let st = search.stats();
        let iterations_per_s = st.iterations_per_s();
        let symbols = &m.game().symbols;
        let root = search
            .root_stats(0)
            .into_iter()
            .map(|(mv, s)| RootMove {
                text: crate::gdl::print::term_to_string(&m.move_term(&mv), symbols),
                visits: s.visits,
                sum: s.sum,
            })
            .collect();
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
            iterations: st.last_iterations,
            seconds: st.last_seconds,
            cpu_us_per_iteration: cpu.as_secs_f64() * 1e6 / st.last_iterations.max(1) as f64,
            model,
            root,
        }
    }
}

/// `bench search --cluster`: the search of every rank of an MPI job from the
/// same initial state (each its own tree and seed), summed at rank 0.
#[cfg(feature = "mpi")]
#[derive(Clone, Debug, Serialize)]
pub struct ClusterBench {
    pub game: String,
    pub engine: String,
    pub ranks: usize,
    /// Search threads of each rank.
    pub threads: usize,
    pub enhancements: String,
    /// Iterations a second of each rank, in rank order.
    pub rank_iterations_per_s: Vec<f64>,
    /// Each rank's iterations.
    pub rank_iterations: Vec<u64>,
    /// The job's iterations over the longest rank's seconds.
    pub iterations_per_s: f64,
    /// Rank 0's, searching alone first while the others waited.
    pub one_rank_iterations_per_s: f64,
    pub speedup: f64,
    /// The first role's moves at the root, statistics summed over the ranks.
    pub root: Vec<RootMove>,
    /// The most visited of them (ties to the better mean): the move the
    /// job would play.
    pub best: String,
}

/// Runs [`search_bench`] on rank 0 alone, then on every rank of `cluster`
/// together (rank `r` with seed `setup.seed + r`), and sums the ranks'
/// iterations and root statistics at rank 0: `Some` there, `None` on the
/// other ranks. Every rank must call it.
#[cfg(feature = "mpi")]
pub fn cluster_search_bench(
    cluster: &crate::cluster::Cluster,
    name: &str,
    game: Game,
    setup: SearchSetup,
) -> Result<Option<ClusterBench>> {
    use std::hash::{Hash, Hasher};
    let alone = if cluster.is_root() {
        Some(search_bench(name, game.clone(), setup.clone())?.iterations_per_s)
    } else {
        None
    };
    cluster.barrier();
    let setup = SearchSetup {
        seed: setup.seed + cluster.rank() as u64,
        ..setup
    };
    let r = search_bench(name, game, setup)?;
    // The same rules and engine give every rank the same root moves in the
    // same order; a hash of their text checks it before they are summed.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for m in &r.root {
        m.text.hash(&mut h);
    }
    let digest = cluster.gather((h.finish() & 0xffff_ffff) as f64);
    if !cluster.same_length(r.root.len()) {
        anyhow::bail!("the ranks' searches have different moves at the root");
    }
    let iterations = cluster.gather(r.iterations as f64);
    let rates = cluster.gather(r.iterations_per_s);
    let seconds = cluster.max(&[r.seconds]);
    let visits: Vec<f64> = r.root.iter().map(|m| m.visits as f64).collect();
    let sums: Vec<f64> = r.root.iter().map(|m| m.sum).collect();
    let visits = cluster.sum(&visits);
    let sums = cluster.sum(&sums);
    let (
        Some(alone),
        Some(digest),
        Some(iterations),
        Some(rates),
        Some(seconds),
        Some(visits),
        Some(sums),
    ) = (alone, digest, iterations, rates, seconds, visits, sums)
    else {
        return Ok(None);
    };
    if digest.iter().any(|&d| d != digest[0]) {
        anyhow::bail!("the ranks' searches have different moves at the root");
    }
    let root: Vec<RootMove> = r
        .root
        .iter()
        .zip(visits.iter().zip(&sums))
        .map(|(m, (&v, &s))| RootMove {
            text: m.text.clone(),
            visits: v as u64,
            sum: s,
        })
        .collect();
    let mean = |m: &RootMove| m.sum / (m.visits.max(1) as f64);
    let best = root
        .iter()
        .max_by(|a, b| a.visits.cmp(&b.visits).then(mean(a).total_cmp(&mean(b))))
        .map(|m| m.text.clone())
        .unwrap_or_default();
    let rank_iterations: Vec<u64> = iterations.iter().map(|&n| n as u64).collect();
    let total: u64 = rank_iterations.iter().sum();
    let iterations_per_s = total as f64 / seconds[0].max(1e-9);
    Ok(Some(ClusterBench {
        game: r.game,
        engine: r.engine,
        ranks: cluster.size(),
        threads: r.threads,
        enhancements: r.enhancements,
        rank_iterations_per_s: rates,
        rank_iterations,
        iterations_per_s,
        one_rank_iterations_per_s: alone,
        speedup: iterations_per_s / alone.max(1e-9),
        root,
        best,
    }))
}
