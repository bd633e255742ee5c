//! Engine choice: which [`StateMachine`] runs a game's rules (`--engine
//! auto|prover|propnet`). [`StateMachine`] has associated state and move types, so
//! code that works on "whatever engine was chosen" is written once as a
//! [`MachineVisitor`] and [`AnyMachine::visit`] monomorphises it per engine.

use std::sync::Arc;

use crate::gdl::Game;

use super::{Prover, ProverError, StateMachine};

/// The engine asked for on the command line.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, clap::ValueEnum)]
pub enum Engine {
    /// The compiled engine when the game compiles within its limits, else the prover.
    #[default]
    Auto,
    /// The reference prover.
    Prover,
    /// The compiled propositional network (fails when the game does not compile).
    Propnet,
}

/// Generic code over the chosen engine.
pub trait MachineVisitor {
    type Output;
    fn visit<M: StateMachine + 'static>(self, machine: Arc<M>) -> Self::Output;
}

/// A built engine, shared between threads.
#[derive(Clone)]
pub enum AnyMachine {
    Prover(Arc<Prover>),
}

/// Why no engine could be built.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Prover(#[from] ProverError),
}

impl AnyMachine {
    /// Builds the engine `engine` asks for. The second value says what was chosen
    /// and why (e.g. why `auto` fell back to the prover), for logs.
    pub fn build(game: Game, engine: Engine) -> Result<(AnyMachine, String), EngineError> {
        match engine {
            Engine::Auto | Engine::Prover | Engine::Propnet => {
                let prover = Prover::try_new(game)?;
                Ok((AnyMachine::Prover(Arc::new(prover)), "prover".to_string()))
            }
        }
    }

    /// Runs `v` on the engine.
    pub fn visit<V: MachineVisitor>(&self, v: V) -> V::Output {
        match self {
            AnyMachine::Prover(m) => v.visit(Arc::clone(m)),
        }
    }

    /// The engine's name: `prover` or `propnet`.
    pub fn name(&self) -> &'static str {
        match self {
            AnyMachine::Prover(_) => "prover",
        }
    }

    pub fn game(&self) -> &Game {
        match self {
            AnyMachine::Prover(m) => m.game(),
        }
    }
}
