//! Benchmarks: the measurements behind `ggp-asp bench`, each returning rows that
//! the command line prints.
//!
//! - [`solve`]: every single-player game of some directories solved in a child
//!   process (`bench solve`).
//!
//! Timing and counting live here, where tests can reach them; the command line
//! only formats the rows.

pub mod solve;
