//! `ggp-asp simulate`: random playouts on the chosen engine, printed as
//! statistics or, with `--trace`, as the JSON-lines trace of
//! [`ggp_asp::simulate`].

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};

use ggp_asp::gdl::{self, print::term_to_string};
use ggp_asp::reasoner::{AnyMachine, Engine, MachineVisitor, StateMachine};
use ggp_asp::simulate;

/// Random playouts: average length, goals per role, playouts/s and states/s.
#[derive(clap::Args)]
pub struct Args {
    game: PathBuf,
    #[arg(long, default_value_t = 100)]
    playouts: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stop a playout after this many joint moves.
    #[arg(long, default_value_t = 1000)]
    max_steps: usize,
    /// Print one JSON line per state instead of statistics.
    #[arg(long)]
    trace: bool,
    /// With --trace: play the joint moves in this file (one per line, role order).
    #[arg(long, requires = "trace")]
    replay: Option<PathBuf>,
    /// The engine that runs the rules.
    #[arg(long, value_enum, default_value_t = Engine::Auto)]
    engine: Engine,
}

impl Args {
    pub fn run(self) -> Result<u8> {
        let g = gdl::load(&self.game)?;
        let (machine, why) = AnyMachine::build(g, self.engine)?;
        eprintln!("engine: {why}");
        let replay = match &self.replay {
            Some(p) => Some(
                std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read {}", p.display()))?,
            ),
            None => None,
        };
        machine.visit(SimulateRun {
            playouts: self.playouts,
            seed: self.seed,
            max_steps: self.max_steps,
            trace: self.trace,
            replay,
        })?;
        Ok(0)
    }
}

/// `simulate` on whichever engine was built.
struct SimulateRun {
    playouts: usize,
    seed: u64,
    max_steps: usize,
    trace: bool,
    replay: Option<String>,
}

impl MachineVisitor for SimulateRun {
    type Output = Result<()>;
    fn visit<M: StateMachine + 'static>(self, m: Arc<M>) -> Result<()> {
        if self.trace {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            simulate::trace(
                &*m,
                &mut out,
                self.playouts,
                self.seed,
                self.max_steps,
                self.replay.as_deref(),
            )?;
            return Ok(());
        }
        let stats = simulate::random_playouts(&*m, self.playouts, self.seed, self.max_steps)?;
        print_stats(&*m, &stats);
        Ok(())
    }
}

fn print_stats<M: StateMachine>(m: &M, s: &simulate::Stats) {
    let g = m.game();
    println!(
        "playouts: {} ({} terminal), average length {:.2}",
        s.playouts,
        s.terminal,
        s.steps as f64 / s.playouts.max(1) as f64
    );
    println!(
        "speed: {:.1} playouts/s, {:.1} states/s",
        s.playouts_per_s(),
        s.states_per_s()
    );
    for (r, dist) in g.roles.iter().zip(&s.goals) {
        let parts: Vec<String> = dist
            .iter()
            .map(|(v, n)| format!("{}: {}", v.map_or("none".to_string(), |v| v.to_string()), n))
            .collect();
        println!(
            "goals of {}: {}",
            term_to_string(r, &g.symbols),
            parts.join(", ")
        );
    }
}
