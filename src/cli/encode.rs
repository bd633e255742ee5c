//! `ggp-asp encode`: prints a single-player game as the answer set program the
//! solver would ground ([`asp::Program`]), in the full or the incremental form,
//! for the clingo executable alone.

use std::path::PathBuf;

use anyhow::Result;

use ggp_asp::asp;
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
    /// Leave out the state invariants (proven with clingo, added as constraints).
    #[arg(long)]
    no_invariants: bool,
}

impl Args {
    pub fn run(self) -> Result<u8> {
        let g = gdl::load(&self.game)?;
        asp::solve::check_single_player(&g).map_err(anyhow::Error::msg)?;
        if !g.top_down.is_empty() {
            let names: Vec<String> = g.top_down.iter().map(|r| r.display(&g.symbols)).collect();
            anyhow::bail!(
                "the rules of {} are read top-down only (a head variable that only their calls bind, over no finite domain): an answer set program cannot hold them; `ggp-asp solve` plans such games with its forward search on the prover",
                names.join(", ")
            );
        }
        let prepared = asp::prepare(&g);
        // A rewrite only the prover runs would not ground either: the
        // rules as written are the ones worth reading.
        let encoded = if prepared.prover_only {
            eprintln!(
                "warning: neither the game nor any rewrite of it grounds within limits; \
                 this is the game as written, and clingo is not likely to ground it"
            );
            &g
        } else {
            if let Some(note) = &prepared.note {
                eprintln!("note: {note}");
            }
            &prepared.game
        };
        let mut program = asp::Program::new(encoded);
        if !self.no_invariants {
            let found = match &prepared.too_big {
                None => program.find_invariants(asp::INVARIANT_BUDGET * 10),
                Some(e) => Err(e.clone()),
            };
            if let Err(e) = found {
                eprintln!("warning: no state invariants: {e}");
            }
        }
        if self.incremental {
            print!("#include <incmode>.\n{}", program.incremental());
        } else if let Some(h) = self.horizon {
            print!(
                "{}\n% The horizon, and the query switched on for the clingo executable.\nhorizon({h}).\nquery.\n",
                program.full()
            );
        }
        Ok(0)
    }
}
