//! Other processes searching a match beside the player (the ranks of an MPI
//! job, see `crate::cluster::player`, feature `mpi`): what a match tells them
//! and what it asks of them. A trait, so that the player builds without MPI.

use std::time::Instant;

use super::solver::SolverConfig;
use crate::asp::SolveResult;
use crate::search::Enhancements;

/// One helper's root statistics for our role: per move (as our engine
/// writes it), visits and summed value.
#[derive(Clone, Debug)]
pub struct RootReport {
    /// Which helper (its MPI rank).
    pub rank: usize,
    pub moves: Vec<(String, u64, f64)>,
}

/// A plan a helper's solver found (checked there; the player checks it again
/// on its own engine before it plays it).
#[derive(Clone, Debug)]
pub struct HelperPlan {
    /// Which helper (its MPI rank).
    pub rank: usize,
    /// The step whose state the plan starts from.
    pub from: usize,
    /// How that helper solved (its mode and clingo options).
    pub variant: String,
    pub result: SolveResult,
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
    /// A one-player game from the state at step `from`, written as `rules`:
    /// each helper runs the solver on it its own way (a portfolio beside the
    /// player's own run, with `cfg`'s limits), replacing any run it had for
    /// the match.
    fn solve(&self, _id: &str, _from: usize, _rules: &str, _cfg: &SolverConfig) {}
    /// The player has a plan: the helpers stop solving the match.
    fn stop_solving(&self, _id: &str) {}
    /// The plans the helpers found for the match since the last call.
    fn plans(&self, _id: &str) -> Vec<HelperPlan> {
        Vec::new()
    }
}
