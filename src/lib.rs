//! ggp-asp: General Game Playing with answer set programming.
//!
//! - [`gdl`]: reading, validating and normalising game descriptions.
//! - [`asp`]: single-player games solved with clingo, plans verified.
//! - [`reasoner`]: the [`reasoner::StateMachine`] trait and its engines.
//! - [`search`]: Monte Carlo tree search (decoupled UCT) over any engine.
//! - [`strategy`]: the strategy builder: the meta-choice and a learned model's wiring, for the referee and the player.
//! - [`arena`]: a local game manager and in-process players.
//! - [`bench`](mod@bench): the measurements behind `ggp-asp bench`: engines, search, solver.
//! - [`player`]: the GGP player, an HTTP server for game managers.
//! - [`protocol`]: the match protocol's messages, shared by the player and the referee.
//! - [`service`]: the solving service: a JSON API with a job queue, and a web page.
//! - [`store`]: the plan store: solved games remembered, found again up to renaming.
//! - [`clock`]: seconds parsed into durations, and a clock with its margin into the time to answer.
//! - [`child`]: child processes run one way: killed when dropped, a watchdog, the answer read typed.
//! - [`cputime`]: CPU-time clocks for budgets that must not depend on the machine's load.
//! - `cluster` (feature `mpi`): the ranks of an MPI job searching one root together.

pub mod arena;
pub mod asp;
pub mod bench;
pub mod cancel;
pub mod child;
pub mod clock;
#[cfg(feature = "mpi")]
pub mod cluster;
pub mod cputime;
pub mod gdl;
pub mod learn;
pub mod player;
pub mod priority;
pub mod protocol;
pub mod reasoner;
pub mod report;
pub mod search;
pub mod service;
pub mod show;
pub mod simulate;
pub mod store;
pub mod strategy;

pub use gdl::Game;
