//! `ggp-asp encode`: prints a single-player game as the answer set program the
//! solver would ground ([`asp::Program`]), in the full or the incremental form,
//! for the clingo executable alone.

use std::path::PathBuf;

use anyhow::Result;

use ggp_asp::asp::encode;
use ggp_asp::gdl;

/// Print a single-player game as an answer set program that the clingo
/// executable alone can solve.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("form").required(true)))]
pub struct Args {
    game: PathBuf,
    /// Full grounding: plans of at most H moves.
    #[arg(long, group = "form")]
    horizon: Option<usize>,
    /// Multi-shot form for clingo's incremental mode (`#include <incmode>.`).
    #[arg(long, group = "form")]
    incremental: bool,
    /// Parallel steps: plans of at most H steps, moves that do not interfere
    /// sharing a step (from the game's ground rules).
    #[arg(long, group = "form", value_name = "H")]
    parallel: Option<usize>,
    /// Leave out the state invariants (proven with clingo, added as constraints).
    #[arg(long)]
    no_invariants: bool,
}

impl Args {
    pub fn run(self) -> Result<u8> {
        let g = gdl::load(&self.game)?;
        let form = match (self.horizon, self.parallel) {
            (Some(h), _) => encode::Form::Horizon(h),
            (None, Some(h)) => encode::Form::Parallel(h),
            (None, None) => encode::Form::Incremental,
        };
        let program = encode::encode(&g, form, !self.no_invariants).map_err(anyhow::Error::msg)?;
        for note in &program.notes {
            eprintln!("{note}");
        }
        print!("{}", program.text);
        Ok(0)
    }
}
