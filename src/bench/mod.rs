//! Benchmarks: the measurements behind `ggp-asp bench`, each returning rows that
//! the command line prints.
//!
//! - [`arena`]: UCT against a baseline over a series of matches, seats rotated
//!   (`bench arena`);
//! - [`playouts`]: random playouts per second of each engine, and what it
//!   costs to build (`bench playouts`);
//! - [`search`]: tree search iterations/s against the engine's raw playouts/s
//!   (`bench search`);
//! - [`solve`]: every single-player game of some directories solved in a child
//!   process (`bench solve`).
//!
//! Timing and counting live here, where tests can reach them; the command line
//! only formats the rows.

pub mod arena;
pub mod playouts;
pub mod search;
pub mod solve;
