//! Engine choice: which [`StateMachine`] runs a game's rules (`--engine
//! auto|prover|propnet`). [`StateMachine`] has associated state and move types, so
//! code that works on "whatever engine was chosen" is written once as a
//! [`MachineVisitor`] and [`AnyMachine::visit`] monomorphises it per engine.

use std::sync::Arc;

use crate::gdl::Game;

use super::{Propnet, PropnetError, Prover, ProverError, StateMachine};

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
    Propnet(Arc<Propnet>),
}

/// Why no engine could be built.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Prover(#[from] ProverError),
    #[error("the propnet does not compile")]
    Propnet(#[from] PropnetError),
}

impl AnyMachine {
    /// Builds the engine `engine` asks for. The second value says what was chosen
    /// and why (e.g. why `auto` fell back to the prover), for logs.
    pub fn build(game: Game, engine: Engine) -> Result<(AnyMachine, String), EngineError> {
        match engine {
            Engine::Prover => {
                let prover = Prover::try_new(game)?;
                Ok((AnyMachine::Prover(Arc::new(prover)), "prover".to_string()))
            }
            Engine::Propnet => {
                let net = Propnet::new(game)?;
                let why = propnet_note(&net);
                Ok((AnyMachine::Propnet(Arc::new(net)), why))
            }
            Engine::Auto => match Propnet::new(game.clone()) {
                Ok(net) => {
                    let why = propnet_note(&net);
                    Ok((AnyMachine::Propnet(Arc::new(net)), why))
                }
                Err(e) => {
                    let prover = Prover::try_new(game)?;
                    Ok((
                        AnyMachine::Prover(Arc::new(prover)),
                        format!("prover (the propnet does not compile: {e})"),
                    ))
                }
            },
        }
    }

    /// Runs `v` on the engine.
    pub fn visit<V: MachineVisitor>(&self, v: V) -> V::Output {
        match self {
            AnyMachine::Prover(m) => v.visit(Arc::clone(m)),
            AnyMachine::Propnet(m) => v.visit(Arc::clone(m)),
        }
    }

    /// The engine's name: `prover` or `propnet`.
    pub fn name(&self) -> &'static str {
        match self {
            AnyMachine::Prover(_) => "prover",
            AnyMachine::Propnet(_) => "propnet",
        }
    }

    pub fn game(&self) -> &Game {
        match self {
            AnyMachine::Prover(m) => m.game(),
            AnyMachine::Propnet(m) => m.game(),
        }
    }
}

/// What was built, for logs: the propnet's size and compile time.
fn propnet_note(net: &Propnet) -> String {
    let s = net.stats();
    format!(
        "propnet ({} nodes, {} fluents, {} moves, compiled in {:.3} s)",
        s.nodes, s.fluents, s.moves, s.compile_s
    )
}
