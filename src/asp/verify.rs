//! Plans are checked on the reference prover before anyone sees them: replayed
//! from the initial state, every move legal in its state, no move after the game
//! has ended, a terminal state at the end, and the goal there as the solver
//! claimed. A disagreement means the translation or the solver is wrong, and is
//! reported as an error, never as a result.

use crate::gdl::print::term_to_string;
use crate::gdl::Term;
use crate::reasoner::StateMachine;

/// Replays `plan` for the game's only role; returns the goal reached.
pub fn replay<M: StateMachine>(machine: &M, plan: &[Term]) -> Result<u8, String> {
    let symbols = &machine.game().symbols;
    let mut state = machine.initial_state();
    let mut legal = Vec::new();
    for (step, mv) in plan.iter().enumerate() {
        let text = term_to_string(mv, symbols);
        if machine.is_terminal(&state) {
            return Err(format!(
                "the game has already ended before step {step} (move {text})"
            ));
        }
        machine.legal_moves(&state, 0, &mut legal);
        let m = machine
            .parse_move(mv)
            .filter(|m| legal.contains(m))
            .ok_or_else(|| format!("move {text} at step {step} is not legal"))?;
        state = machine.next_state(&state, &[m]);
    }
    if !machine.is_terminal(&state) {
        return Err(format!(
            "the state after the {} moves of the plan is not terminal",
            plan.len()
        ));
    }
    machine.goal(&state, 0).ok_or_else(|| {
        format!(
            "the terminal state after the plan has goal values {:?}, not exactly one",
            machine.goal_values(&state, 0)
        )
    })
}

/// Replays `plan` and checks the goal the solver claimed.
pub fn verify<M: StateMachine>(machine: &M, plan: &[Term], claimed: u8) -> Result<(), String> {
    let goal = replay(machine, plan)?;
    if goal != claimed {
        return Err(format!(
            "the solver claims goal {claimed}, the prover finds {goal}"
        ));
    }
    Ok(())
}
