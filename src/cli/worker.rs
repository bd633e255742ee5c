//! `ggp-asp worker` (hidden): one clingo worker of a solve in a process of its
//! own, speaking [`asp::process`]'s line protocol on stdin and stdout. Started
//! by `solve`, never by hand.

use ggp_asp::asp;

/// Run one clingo worker for a parent `solve` (internal).
#[derive(clap::Args)]
pub struct Args {}

impl Args {
    pub fn run(self) -> ! {
        asp::process::serve()
    }
}
