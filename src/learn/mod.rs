//! Learned value functions (the UCT-CCNN line of `docs/player.md`): a
//! cascade-correlation network that grows its hidden units ([`ccnn`]), the
//! cross-entropy method for UCT's exploration constant ([`cem`]), the model
//! file ([`model`]), `ggp-asp learn` ([`train`]), and the network as UCT's
//! leaf evaluation ([`NetEvaluator`]).

pub mod ccnn;
pub mod cem;
pub mod model;
pub mod train;

use std::cell::RefCell;
use std::sync::Arc;

use crate::gdl::Game;
use crate::reasoner::StateMachine;
use crate::search::policy::{Evaluator, GoalEvaluator};
pub use model::{Model, Reader};

/// The network's value at a non-terminal state, the game's goals at a
/// terminal one.
pub struct NetEvaluator {
    model: Arc<Model>,
    reader: Reader,
}

impl NetEvaluator {
    /// The model's values for the states of `game` (the rules it was
    /// trained on).
    pub fn new(model: Arc<Model>, game: &Game) -> NetEvaluator {
        let reader = model.reader(game);
        NetEvaluator { model, reader }
    }

    /// The network's value (0..1) of `state` for the first role; the second
    /// role's is its complement (the games trained on are two-player and
    /// zero-sum).
    pub fn first_role_value<M: StateMachine>(&self, machine: &M, state: &M::State) -> f64 {
        thread_local! {
            static INPUTS: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
        }
        INPUTS.with_borrow_mut(|x| {
            self.reader.inputs(machine, state, x);
            self.model.network.value(x)
        })
    }

    /// The value (0..1) of `state` for `role`: see
    /// [`NetEvaluator::first_role_value`]; 0.5 for a third role.
    pub fn value<M: StateMachine>(&self, machine: &M, state: &M::State, role: usize) -> f64 {
        of_role(self.first_role_value(machine, state), role)
    }
}

/// A role's value from the first role's `v`.
fn of_role(v: f64, role: usize) -> f64 {
    match role {
        0 => v,
        1 => 1.0 - v,
        _ => 0.5,
    }
}

impl<M: StateMachine> Evaluator<M> for NetEvaluator {
    fn evaluate(&self, machine: &M, state: &M::State, terminal: bool, out: &mut Vec<f64>) {
        if terminal || machine.is_terminal(state) {
            GoalEvaluator.evaluate(machine, state, true, out);
            return;
        }
        let v = self.first_role_value(machine, state);
        out.clear();
        out.extend((0..machine.num_roles()).map(|r| of_role(v, r)));
    }
}
