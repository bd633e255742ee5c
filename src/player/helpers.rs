//! Other processes searching a match beside the player (the ranks of an MPI
//! job, see `crate::cluster::player`, feature `mpi`): what a match tells them
//! and what it asks of them. A trait, so that the player builds without MPI.

use std::time::Instant;

use crate::search::Enhancements;

/// One helper's root statistics for our role: per move (as our engine
/// writes it), visits and summed value.
#[derive(Clone, Debug)]
pub struct RootReport {
    /// Which helper (its MPI rank).
    pub rank: usize,
    pub moves: Vec<(String, u64, f64)>,
}

/// The helpers of a player's matches. Every call returns at once: the
/// messages go out on the helpers' own thread.
pub trait Helpers: Send + Sync + std::fmt::Debug {
    /// A match begins with these rules, our role named `role`.
    fn start(&self, id: &str, rules: &str, role: &str);
    /// Search the match the way the player chose.
    fn search(&self, id: &str, enhancements: &Enhancements, threads: usize, seed: u64);
    /// The joint move of step `step` (none for the first), our move due at
    /// `deadline`: report before it.
    fn play(&self, id: &str, step: usize, joint: Vec<String>, deadline: Instant);
    fn stop(&self, id: &str);
    /// The reports for step `step` that have arrived, and how many helpers
    /// there are.
    fn reports(&self, id: &str, step: usize) -> (Vec<RootReport>, usize);
}
