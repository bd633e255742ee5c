//! The solving service: a JSON API under `/api/` and a web page under `/ui/`,
//! served by `ggp-asp serve` beside the match protocol (game managers keep
//! POSTing to `/`) or alone (`serve --api-only`).
//!
//! - [`jobs`]: the queue of solve jobs, each a `solve --json` child with the
//!   player's solver limits, at a lower priority than the matches, kept in
//!   the plan store across restarts.
//! - [`api`]: the routes: solve jobs, the store's games, encodings and
//!   grounding reports of a game sent in the body, boards of a plan, the
//!   matches the player holds. Every error is a JSON object with the
//!   status that says what was wrong (400 for GDL with errors, with their
//!   lines and columns; 404, 405, 413, 415, 422, 429).
//! - [`page`]: the page itself: plain HTML, CSS and JavaScript compiled into
//!   the binary, no build step; everything it shows from a game goes in as
//!   text, never as markup.
//!
//! The service never runs a solve on the server's executor: jobs are child
//! processes, and the store's lookups, encodings and reports run on tokio's
//! blocking threads.

pub mod api;
pub mod jobs;
pub mod page;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;

use crate::player::{Server, ServerHandle};
use crate::store::Plans;

pub use jobs::{Job, JobRequest, JobStatus, Jobs, JobsConfig};

/// The service's settings.
#[derive(Clone, Debug)]
pub struct ServiceConfig {
    pub jobs: JobsConfig,
    /// The largest request body accepted (a game's rules, JSON-quoted).
    pub max_body: usize,
}

/// The service: its jobs and the plan store it answers from.
pub struct Service {
    pub cfg: ServiceConfig,
    pub jobs: Arc<Jobs>,
    pub store: Option<Arc<Plans>>,
}

impl Service {
    /// Starts the job slots. `store_path` is the store's file, given to each
    /// job's child so that what it solves is remembered.
    pub fn start(
        cfg: ServiceConfig,
        store: Option<Arc<Plans>>,
        store_path: Option<PathBuf>,
    ) -> Arc<Service> {
        let jobs = Jobs::start(cfg.jobs.clone(), store.clone(), store_path);
        Arc::new(Service { cfg, jobs, store })
    }

    /// Cancels the queued jobs, kills the running ones and waits for the
    /// slots to end.
    pub fn shutdown(&self) {
        self.jobs.shutdown();
    }
}

/// What the API's handlers share: the service, and the player whose
/// matches the match pages show.
pub struct Api {
    pub service: Arc<Service>,
    pub player: Arc<Server>,
}

/// The service's routes, `/api/...` and `/ui/...`, for
/// [`crate::player::server::serve`] to serve beside the match protocol.
pub fn router(service: Arc<Service>, player: Arc<Server>) -> Router {
    Router::new()
        .nest("/api", api::router())
        .merge(page::router())
        .with_state(Arc::new(Api { service, player }))
}

/// A server with the service on its own thread (tests, benchmarks).
/// Dropping it stops the server, then the jobs (their children killed).
pub struct ServiceHandle {
    pub server: ServerHandle,
    pub service: Arc<Service>,
}

impl ServiceHandle {
    /// Serves `player` with `service`'s routes on `addr` (port 0 for any
    /// free port).
    pub fn spawn(
        player: Server,
        service: Arc<Service>,
        addr: SocketAddr,
    ) -> std::io::Result<ServiceHandle> {
        let player = Arc::new(player);
        let routes = router(Arc::clone(&service), Arc::clone(&player));
        let server = ServerHandle::spawn_with(player, addr, routes)?;
        Ok(ServiceHandle { server, service })
    }

    pub fn addr(&self) -> SocketAddr {
        self.server.addr
    }
}

impl Drop for ServiceHandle {
    fn drop(&mut self) {
        self.service.shutdown();
    }
}
