//! `ggp-asp serve`: the GGP HTTP player ([`ggp_asp::player::server`]), with
//! the ASP solver run as a child process of this executable on one-player
//! games.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};

use ggp_asp::clock;
use ggp_asp::player::solver::SolverConfig;
use ggp_asp::player::{self, server, Server, ServerConfig};
use ggp_asp::reasoner::Engine;
use ggp_asp::service::{self, JobsConfig, Service, ServiceConfig};
use ggp_asp::store::{self, Plans};
use std::sync::Arc;

/// Nice levels the solving service's jobs run below the player, so that a
/// match played beside them keeps its cores.
const JOB_NICE: i32 = 10;

/// Play GGP matches: an HTTP player speaking the match protocol, with the
/// solving service's API under /api/ and its page under /ui/.
#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value_t = 9147)]
    port: u16,
    #[arg(long, default_value = "127.0.0.1")]
    bind: std::net::IpAddr,
    /// The name INFO reports.
    #[arg(long, default_value = "ggp-asp")]
    name: String,
    /// Search threads per match.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Milliseconds kept back from every clock for the reply to travel.
    #[arg(long, value_name = "MS", value_parser = clock::margin_ms, allow_negative_numbers = true, default_value = "500")]
    margin_ms: Duration,
    #[arg(long, value_enum, default_value_t = Engine::Auto)]
    engine: Engine,
    /// Do not run the ASP solver on one-player games.
    #[arg(long)]
    no_solver: bool,
    /// Play plain UCT: no meta-choice of the search at START.
    #[arg(long)]
    no_meta: bool,
    /// A learned model (`ggp-asp learn`): used on the rules it was trained
    /// on, ignored on any other.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Seconds the solver may take for one run.
    #[arg(long, value_name = "SECONDS", value_parser = clock::seconds, allow_negative_numbers = true, default_value = "300")]
    solver_timeout: Duration,
    /// The solver's memory limit in MB.
    #[arg(long, default_value_t = 4096)]
    solver_memory_mb: u64,
    /// The executable run as `EXE solve FILE --json ...` (default: this one).
    #[arg(long)]
    solver_exe: Option<PathBuf>,
    /// Threads of the solver (its auto mode runs two strategies at once).
    #[arg(long, default_value_t = 2)]
    solver_threads: usize,
    /// Seconds a client may take to send a request.
    #[arg(long, value_name = "SECONDS", value_parser = clock::seconds, allow_negative_numbers = true, default_value = "10")]
    read_timeout: Duration,
    /// Play on every rank of an MPI job (`mpirun -n N ggp-asp serve
    /// --cluster`): rank 0 serves HTTP, the other ranks search each match
    /// beside it and report before every move (a build with `--features
    /// mpi`).
    #[arg(long)]
    cluster: bool,
    /// Play one match at a time, as some game managers expect: INFO answers
    /// `busy` while a match runs (from its START to its STOP or ABORT), and
    /// a START for another match meanwhile is refused with an error reply.
    #[arg(long)]
    one_match: bool,
    /// The plan store one-player games are looked up in at START and their
    /// solver's answers written to (default: $GGP_ASP_STORE, else
    /// plans.sqlite in the user's data folder). One that cannot be used is
    /// a warning: the player plays without it.
    #[arg(long, value_name = "PATH", conflicts_with = "no_store")]
    store: Option<PathBuf>,
    /// Play without the plan store.
    #[arg(long)]
    no_store: bool,
    /// Serve no solving API and no page (only the match protocol).
    #[arg(long, conflicts_with = "api_only")]
    no_api: bool,
    /// Serve only the solving API and its page: `/` speaks no match
    /// protocol.
    #[arg(long)]
    api_only: bool,
    /// Solve jobs run at once (default: half the cores, at least one).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Solve jobs that may wait; past them a request is refused (429).
    #[arg(long, value_name = "N", default_value_t = 16)]
    queue: usize,
    /// Seconds a job may take, and a job's timeout when its request names
    /// none.
    #[arg(long, value_name = "SECONDS", value_parser = clock::seconds, allow_negative_numbers = true, default_value = "600")]
    job_timeout_max: Duration,
    #[arg(long, value_name = "SECONDS", value_parser = clock::seconds, allow_negative_numbers = true, default_value = "60")]
    job_timeout: Duration,
    /// The largest request body the API takes, in bytes.
    #[arg(long, default_value_t = 4 << 20)]
    max_body: usize,
}

impl Args {
    /// Serves until the process is stopped.
    pub fn run(self) -> Result<u8> {
        let helpers = if self.cluster {
            match self.join_cluster()? {
                Some(h) => Some(h),
                // A follower rank: its work is done when rank 0 quits.
                None => return Ok(0),
            }
        } else {
            None
        };
        let store = if self.no_store {
            None
        } else {
            Plans::open_or_warn(self.store.as_deref()).map(Arc::new)
        };
        // The jobs' children write what they solve to the same store (none
        // when it could not be opened here).
        let store_path = store
            .as_ref()
            .and_then(|_| self.store.clone().or_else(store::default_path));
        let exe = match &self.solver_exe {
            Some(p) => p.clone(),
            None => std::env::current_exe().context("cannot find our own executable")?,
        };
        let solver = if self.no_solver {
            None
        } else {
            Some(SolverConfig {
                exe: exe.clone(),
                timeout: self.solver_timeout,
                memory_mb: self.solver_memory_mb,
                threads: self.solver_threads,
            })
        };
        let cfg = ServerConfig {
            name: self.name,
            matches: player::MatchConfig {
                margin: self.margin_ms,
                threads: self.threads,
                engine: self.engine,
                solver,
                ponder: true,
                seed: 1,
                meta: !self.no_meta,
                // A bad model is refused and the player plays without it.
                model: super::load_model(self.model.as_deref()).unwrap_or_else(|e| {
                    tracing::warn!("{e:#}; playing without a model");
                    None
                }),
                helpers,
                store: store.clone(),
            },
            read_timeout: self.read_timeout,
            max_body: 4 << 20,
            one_match: self.one_match,
        };
        let player = Arc::new(if self.api_only {
            Server::without_protocol(cfg)
        } else {
            Server::new(cfg)
        });
        let addr = std::net::SocketAddr::new(self.bind, self.port);
        if self.no_api {
            server::run(player, addr, axum::Router::new())?;
            return Ok(0);
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let svc = Service::start(
            ServiceConfig {
                jobs: JobsConfig {
                    exe,
                    slots: self.jobs.unwrap_or((cores / 2).max(1)),
                    queue: self.queue,
                    default_timeout: self.job_timeout.min(self.job_timeout_max),
                    max_timeout: self.job_timeout_max,
                    memory_mb: self.solver_memory_mb,
                    threads: self.solver_threads,
                    nice: JOB_NICE,
                },
                max_body: self.max_body,
            },
            store,
            store_path,
        );
        tracing::info!(
            "the solving service's API is under http://{addr}/api/, its page at http://{addr}/ui/"
        );
        let routes = service::router(Arc::clone(&svc), Arc::clone(&player));
        let served = server::run(player, addr, routes);
        // No job outlives the server.
        svc.shutdown();
        served?;
        Ok(0)
    }

    #[cfg(not(feature = "mpi"))]
    fn join_cluster(&self) -> Result<Option<std::sync::Arc<dyn player::Helpers>>> {
        anyhow::bail!(
            "--cluster needs a build with MPI: cargo build --release --features mpi (README.md says what to install), then mpirun -n N ggp-asp serve --cluster"
        )
    }

    /// Rank 0 gets the link to the other ranks; every other rank follows
    /// rank 0's matches until it quits (`None`).
    #[cfg(feature = "mpi")]
    fn join_cluster(&self) -> Result<Option<std::sync::Arc<dyn player::Helpers>>> {
        use ggp_asp::cluster::{player as cluster_player, Cluster};
        let cluster = Cluster::start_threaded()?;
        if cluster.0.is_root() {
            let link: std::sync::Arc<dyn player::Helpers> = cluster_player::Link::start(cluster)?;
            Ok(Some(link))
        } else {
            ggp_asp::cluster::follower::follow(cluster.0, self.engine)?;
            Ok(None)
        }
    }
}
