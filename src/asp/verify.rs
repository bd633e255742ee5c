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
    match replay_values(machine, plan)?.as_slice() {
        [v] => Ok(*v),
        values => Err(format!(
            "the terminal state after the plan has goal values {values:?}, not exactly one"
        )),
    }
}

/// Replays `plan`; returns every goal value of the terminal state reached (some
/// defective games give several at once).
pub fn replay_values<M: StateMachine>(machine: &M, plan: &[Term]) -> Result<Vec<u8>, String> {
    let symbols = &machine.game().symbols;
    let mut state = machine.initial_state();
    for (step, mv) in plan.iter().enumerate() {
        let text = term_to_string(mv, symbols);
        if machine.is_terminal(&state) {
            return Err(format!(
                "the game has already ended before step {step} (move {text})"
            ));
        }
        let m = machine
            .parse_move(mv)
            .filter(|m| machine.is_legal(&state, 0, m))
            .ok_or_else(|| format!("move {text} at step {step} is not legal"))?;
        state = machine.next_state(&state, &[m]);
    }
    if !machine.is_terminal(&state) {
        return Err(format!(
            "the state after the {} moves of the plan is not terminal",
            plan.len()
        ));
    }
    let values = machine.goal_values(&state, 0);
    if values.is_empty() {
        return Err("the terminal state after the plan has no goal value".into());
    }
    Ok(values)
}

/// Plays `plan` from the initial state as long as each move is legal and
/// the game goes on; returns the moves played.
pub fn replay_prefix<M: StateMachine>(machine: &M, plan: &[Term]) -> usize {
    let mut state = machine.initial_state();
    for (step, mv) in plan.iter().enumerate() {
        if machine.is_terminal(&state) {
            return step;
        }
        match machine
            .parse_move(mv)
            .filter(|m| machine.is_legal(&state, 0, m))
        {
            Some(m) => state = machine.next_state(&state, &[m]),
            None => return step,
        }
    }
    plan.len()
}

/// Replays `plan` and checks the goal the solver claimed. A game that gives
/// several goal values in one terminal state (a defect some real files have)
/// passes when the claimed value is one of them; the answer is a note saying so.
pub fn verify<M: StateMachine>(
    machine: &M,
    plan: &[Term],
    claimed: u8,
) -> Result<Option<String>, String> {
    let values = replay_values(machine, plan)?;
    if !values.contains(&claimed) {
        return Err(format!(
            "the solver claims goal {claimed}, the prover finds {values:?}"
        ));
    }
    Ok((values.len() > 1)
        .then(|| format!("the game gives several goal values in the final state: {values:?}")))
}
