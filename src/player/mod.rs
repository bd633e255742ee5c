//! The GGP player: an HTTP server that plays real matches (`ggp-asp serve`).
//!
//! - [`server`]: axum/hyper on tokio; one request, one message, one reply.
//! - [`r#match`]: one match per id, with its worker thread (compiling, UCT search
//!   kept across moves, clocks) and, on one-player games, the ASP solver beside it.
//! - [`solver`]: the solver as a child process with time and memory limits.
//!
//! The protocol's messages are in [`crate::protocol`], shared with the referee.

pub mod r#match;
pub mod server;
pub mod solver;

pub use r#match::{Match, MatchConfig};
pub use server::{Player, ServerConfig, ServerHandle};
