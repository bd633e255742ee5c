//! `ggp-asp learn`: a value network and a tuned exploration constant for a
//! two-player game, from UCT self-play ([`ggp_asp::learn::train`]).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};

use ggp_asp::clock;
use ggp_asp::gdl;
use ggp_asp::learn::train::{learn, Keep, LearnConfig, Target};
use ggp_asp::learn::Model;
use ggp_asp::reasoner::{AnyMachine, Engine, MachineVisitor, StateMachine};

/// Learn a value function for a two-player game: UCT self-play, a
/// cascade-correlation network, UCT's exploration constant tuned by the
/// cross-entropy method; progress on stderr.
#[derive(clap::Args)]
pub struct Args {
    game: PathBuf,
    /// Where the model is written (JSON).
    #[arg(long)]
    out: PathBuf,
    /// Examples (states) wanted from self-play.
    #[arg(long, default_value_t = 2000)]
    examples: usize,
    /// The whole budget in seconds: self-play, training and tuning.
    #[arg(long, value_name = "SECONDS", value_parser = clock::seconds, allow_negative_numbers = true, default_value = "60")]
    seconds: Duration,
    /// UCT iterations per move of self-play.
    #[arg(long, default_value_t = 400)]
    iterations: u64,
    /// Threads playing self-play matches at once.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Which states of a match become examples: the winner's (the method's
    /// choice) or all.
    #[arg(long, value_enum, default_value_t = Keep::Winner)]
    keep: Keep,
    /// What an example's value is: UCT's estimate at the state (the
    /// method's), the match's result for the role to move, or their mean.
    #[arg(long, value_enum, default_value_t = Target::Estimate)]
    target: Target,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, value_enum, default_value_t = Engine::Auto)]
    engine: Engine,
}

struct Learn(LearnConfig);

impl MachineVisitor for Learn {
    type Output = Result<Model>;
    fn visit<M: StateMachine + 'static>(self, m: std::sync::Arc<M>) -> Result<Model> {
        learn(m, &self.0, &mut |line| ggp_asp::show::progress::say(line))
    }
}

impl Args {
    pub fn run(self) -> Result<u8> {
        let g = gdl::load(&self.game)?;
        let (machine, why) = AnyMachine::build(g, self.engine)?;
        eprintln!("engine: {why}");
        // A run of --seconds: a bar filling over the budget, with the last
        // line (examples, units' errors, CEM generations) on a terminal,
        // the lines alone elsewhere.
        let spinner = ggp_asp::show::progress::Spinner::budget(
            &format!("learning {}", self.game.display()),
            self.seconds.as_secs_f64(),
        );
        let model = machine.visit(Learn(LearnConfig {
            examples: self.examples,
            seconds: self.seconds.as_secs_f64(),
            iterations: self.iterations,
            seed: self.seed,
            threads: self.threads,
            keep: self.keep,
            target: self.target,
        }));
        drop(spinner);
        let model = model?;
        model
            .save(&self.out)
            .with_context(|| format!("saving the model to {}", self.out.display()))?;
        let last = model
            .reports
            .iter()
            .min_by(|a, b| a.test_mse.total_cmp(&b.test_mse));
        println!(
            "model {}: {} examples, {} inputs, {} hidden units, test error {:.4}, exploration {:.3}",
            self.out.display(),
            model.examples,
            model.fluents.len(),
            model.network.hidden.len(),
            last.map_or(0.0, |r| r.test_mse),
            model.exploration
        );
        Ok(0)
    }
}
