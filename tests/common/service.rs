//! The solving service as the service and browser tests start it: jobs as
//! children of the built binary, a player with the prover and no solver, on
//! a free port of loopback.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ggp_asp::player::{MatchConfig, Server, ServerConfig};
use ggp_asp::service::{JobsConfig, Service, ServiceConfig, ServiceHandle};
use ggp_asp::store::Plans;

/// `slots` jobs at once, `queue` waiting, a 30 s default timeout.
pub fn config(slots: usize, queue: usize) -> ServiceConfig {
    ServiceConfig {
        jobs: JobsConfig {
            exe: PathBuf::from(env!("CARGO_BIN_EXE_ggp-asp")),
            slots,
            queue,
            default_timeout: Duration::from_secs(30),
            max_timeout: Duration::from_secs(120),
            memory_mb: 2048,
            threads: 1,
            nice: 10,
        },
        max_body: 256 << 10,
    }
}

/// The player beside the service: the prover, one thread, no solver.
pub fn server_config() -> ServerConfig {
    ServerConfig {
        name: "service-test".into(),
        matches: MatchConfig {
            margin: Duration::from_millis(500),
            threads: 1,
            engine: ggp_asp::reasoner::Engine::Prover,
            solver: None,
            ponder: false,
            seed: 1,
            meta: false,
            model: None,
            helpers: None,
            store: None,
        },
        read_timeout: Duration::from_secs(10),
        max_body: 4 << 20,
        one_match: false,
    }
}

/// The service on `server` (its settings), on a free port; its store at
/// `store` when given.
pub fn start_with(cfg: ServiceConfig, server: Server, store: Option<&Path>) -> ServiceHandle {
    let plans = store.map(|p| Arc::new(Plans::open(p).unwrap()));
    let service = Service::start(cfg, plans, store.map(Path::to_path_buf));
    ServiceHandle::spawn(server, service, "127.0.0.1:0".parse().unwrap()).unwrap()
}

/// [`start_with`] beside the match protocol.
pub fn start(cfg: ServiceConfig, store: Option<&Path>) -> ServiceHandle {
    start_with(cfg, Server::new(server_config()), store)
}
