//! Learned value functions (the UCT-CCNN line of `docs/player.md`): a
//! cascade-correlation network that grows its hidden units ([`ccnn`]), the
//! cross-entropy method for UCT's exploration constant ([`cem`]), the model
//! file ([`model`]), `ggp-asp learn` ([`train`]), and the network as UCT's
//! leaf evaluation ([`NetEvaluator`]).

pub mod ccnn;
pub mod cem;
pub mod model;
pub mod train;

use std::sync::Arc;

use crate::reasoner::StateMachine;
use crate::search::policy::{Evaluator, GoalEvaluator};
pub use model::Model;

/// The network's value at a non-terminal state, the game's goals at a
/// terminal one.
pub struct NetEvaluator {
    pub model: Arc<Model>,
}

impl<M: StateMachine> Evaluator<M> for NetEvaluator {
    fn evaluate(&self, machine: &M, state: &M::State, terminal: bool, out: &mut Vec<f64>) {
        if terminal || machine.is_terminal(state) {
            GoalEvaluator.evaluate(machine, state, true, out);
            return;
        }
        out.clear();
        out.extend((0..machine.num_roles()).map(|r| self.model.value(machine, state, r)));
    }
}
