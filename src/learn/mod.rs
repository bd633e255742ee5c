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

use crate::reasoner::StateMachine;
use crate::search::policy::{Evaluator, GoalEvaluator};
pub use model::{Model, Perspective, Reader};

/// The network's value at a non-terminal state, the game's goals at a
/// terminal one.
pub struct NetEvaluator {
    model: Arc<Model>,
    reader: Reader,
}

impl NetEvaluator {
    /// The model's values for the states of `machine` (on the rules it was
    /// trained on; evaluate with that machine).
    pub fn new<M: StateMachine>(model: Arc<Model>, machine: &M) -> NetEvaluator {
        let reader = model.reader(machine);
        NetEvaluator { model, reader }
    }

    /// The role whose value the network gives at `state`, and that value
    /// (0..1).
    pub fn own_value<M: StateMachine>(&self, machine: &M, state: &M::State) -> (usize, f64) {
        thread_local! {
            // The inputs that are 1, and the hidden units' activations.
            static BUFFERS: RefCell<(Vec<usize>, Vec<f64>)> =
                const { RefCell::new((Vec::new(), Vec::new())) };
        }
        let role = self.model.perspective.role(machine, state);
        let v = BUFFERS.with_borrow_mut(|(ones, hidden)| {
            self.reader.ones(machine, state, ones);
            self.model.network.value_of_ones(ones, hidden)
        });
        (role, v)
    }

    /// The value (0..1) of `state` for `role`: the network's for the role
    /// whose value it gives, its complement for the other (the games trained
    /// on are two-player and zero-sum), 0.5 for any third.
    pub fn value<M: StateMachine>(&self, machine: &M, state: &M::State, role: usize) -> f64 {
        let (own, v) = self.own_value(machine, state);
        of_role(own, v, role)
    }
}

/// `role`'s value when `own`'s is `v`.
fn of_role(own: usize, v: f64, role: usize) -> f64 {
    match role {
        r if r == own => v,
        0 | 1 => 1.0 - v,
        _ => 0.5,
    }
}

impl<M: StateMachine> Evaluator<M> for NetEvaluator {
    fn evaluate(&self, machine: &M, state: &M::State, terminal: bool, out: &mut Vec<f64>) {
        if terminal || machine.is_terminal(state) {
            GoalEvaluator.evaluate(machine, state, true, out);
            return;
        }
        let (own, v) = self.own_value(machine, state);
        out.clear();
        out.extend((0..machine.num_roles()).map(|r| of_role(own, v, r)));
    }
}
