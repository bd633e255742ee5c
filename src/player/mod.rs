//! The GGP player: an HTTP server that plays real matches (`ggp-asp serve`).
//!
//! - [`server`]: axum/hyper on tokio; one request, one message, one reply.
//! - [`session`]: one match per id: the server's handle, and the thread that
//!   starts the match on the first engine ready (the engine chosen for the
//!   game, or the prover while that one builds) and runs its workers.
//! - `handover`: a match moved mid-match to the engine chosen for its game,
//!   once built: what the next worker takes over, replayed on its engine.
//! - `worker`: our copy of the state, UCT search kept across moves, the clocks
//!   and, on one-player games, the ASP solver's plans (`plan`) beside it; the
//!   commands it answers and the fallback move it publishes (`fallback`: the
//!   move the server sends when the worker has none ready). Its searchers
//!   come from the strategy builder ([`crate::strategy`]).
//! - `stored`: a one-player match's use of the plan store: the stored plan
//!   followed from the first move, the solver's answers written back.
//! - [`watch`]: what a person watching a match sees, written by its worker.
//! - [`decisions`]: what chose each move ([`Decision`]), counted over a
//!   server's matches.
//! - [`solver`]: the solver as a child process with time and memory limits, and a
//!   match's state of it.
//! - [`error`]: what goes wrong in a match ([`MatchError`]).
//! - [`helpers`]: other processes searching beside the player (a cluster).
//!
//! The protocol's messages are in [`crate::protocol`], shared with the referee.

pub mod decisions;
pub mod error;
mod fallback;
mod handover;
pub mod helpers;
mod plan;
pub mod server;
pub mod session;
pub mod solver;
mod stored;
pub mod watch;
mod worker;

pub use decisions::Decision;
pub use error::MatchError;
pub use helpers::{HelperPlan, Helpers, RootReport};
pub use server::{Server, ServerConfig, ServerHandle};
pub use session::{Match, MatchConfig};
