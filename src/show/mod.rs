//! What people see besides tables: states drawn as boards ([`board`]),
//! progress of long runs ([`progress`]) and the benchmarks as plots
//! ([`plot`]).

pub mod board;
pub mod plot;
pub mod progress;

pub use board::{Style, View};
pub use progress::Progress;

use std::sync::Arc;

use crate::gdl::{Game, Term};
use crate::reasoner::{AnyMachine, Engine, MachineVisitor, StateMachine};

/// A game walked move by move from its initial state, on the reference
/// prover, so that each state can be drawn.
pub struct Replay {
    /// The fluents of the initial state.
    pub initial: Vec<Term>,
    step: Box<Step>,
}

/// Plays a joint move from the replay's current state: the next state's
/// fluents, or why a move is unknown.
type Step = dyn FnMut(&[Term]) -> Result<Vec<Term>, String> + Send;

impl Replay {
    /// Builds the prover (on rewritten rules where the rules as written do
    /// not run) and stands at the initial state.
    pub fn new(game: &Game) -> anyhow::Result<Replay> {
        let (machine, _) = AnyMachine::build(game.clone(), Engine::Prover)?;
        Ok(machine.visit(Start))
    }

    /// Plays `joint` (one move per role, in role order): the fluents of the
    /// state it leads to, or why a move is unknown.
    pub fn play(&mut self, joint: &[Term]) -> Result<Vec<Term>, String> {
        (self.step)(joint)
    }

    /// The fluents of every state of a match: the initial state, then one
    /// per joint move.
    pub fn states(game: &Game, joints: &[Vec<Term>]) -> anyhow::Result<Vec<Vec<Term>>> {
        let mut r = Replay::new(game)?;
        let mut out = vec![r.initial.clone()];
        for joint in joints {
            out.push(r.play(joint).map_err(anyhow::Error::msg)?);
        }
        Ok(out)
    }
}

struct Start;

impl MachineVisitor for Start {
    type Output = Replay;

    fn visit<M: StateMachine + 'static>(self, m: Arc<M>) -> Replay {
        let mut state = m.initial_state();
        let initial = m.fluents(&state);
        let step = Box::new(move |joint: &[Term]| {
            let moves = joint
                .iter()
                .map(|t| {
                    m.parse_move(t).ok_or_else(|| {
                        format!(
                            "the move {} is not one of the game's",
                            crate::gdl::print::term_to_string(t, &m.game().symbols)
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            state = m.next_state(&state, &moves);
            Ok(m.fluents(&state))
        });
        Replay { initial, step }
    }
}
