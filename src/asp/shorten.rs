//! Plans without detours. A plan found by a search that proves nothing (the
//! beam, the depth-first search, a full horizon before its minimisation
//! completes) may visit a state twice (`(move up)` then `(move down)`) or take
//! several moves where one legal move reaches the same later state. Before a
//! plan is shown or submitted it is replayed on the prover and
//!
//! - every stretch between two visits of the same state is cut;
//! - from each state kept, every legal move is tried, and one that reaches a
//!   later state of the plan replaces the moves in between (the latest such
//!   state wins), within a budget of next-state computations.
//!
//! States are compared without the game's clock, when it has one (a fluent
//! that counts the moves, `(step ?n)`): a loop of the 8-puzzle returns to the
//! same board at a later step. Without a clock the final state is the plan's
//! own and the goal the same; with one, the shortened plan ends earlier on the
//! clock, so it is replayed here and kept only when it still ends the game,
//! with the same goal values, and never before its last move. The coordinator
//! verifies it again like any other plan.

use hashbrown::HashMap;

use crate::gdl::{Sym, Term};
use crate::reasoner::StateMachine;

/// Next states computed looking for shortcuts, at most, per plan: the prover
/// computes a few thousand a second on the larger games (sudoku's demand
/// rewrite: 12,000), so a plan's shortening costs a fraction of a second.
pub const SHORTCUT_BUDGET: usize = 2_000;

/// What two states are compared by: the engine's state itself, or, when the
/// game has a clock, its fluents without the clock's.
#[derive(PartialEq, Eq, Hash)]
enum Key<S> {
    State(S),
    Fluents(Vec<Term>),
}

/// `plan` without its detours (see the module documentation), states compared
/// without the fluent `clock` when given; `None` when nothing can be cut, or
/// the plan does not replay (the verification that follows says why).
pub fn shorten<M: StateMachine>(
    machine: &M,
    plan: &[Term],
    clock: Option<Sym>,
    budget: usize,
) -> Option<Vec<Term>> {
    let key = |s: &M::State| -> Key<M::State> {
        match clock {
            None => Key::State(s.clone()),
            Some(c) => {
                let mut f = machine.fluents(s);
                f.retain(|t| t.name() != Some(c));
                f.sort();
                Key::Fluents(f)
            }
        }
    };
    let mut states = vec![machine.initial_state()];
    let mut moves = Vec::with_capacity(plan.len());
    let mut legal = Vec::new();
    for t in plan {
        let s = states.last().expect("the initial state");
        if machine.is_terminal(s) {
            return None;
        }
        machine.legal_moves(s, 0, &mut legal);
        let m = machine.parse_move(t).filter(|m| legal.contains(m))?;
        states.push(machine.next_state(s, std::slice::from_ref(&m)));
        moves.push(m);
    }
    // The last visit of each state: a later visit makes the moves between a loop.
    let keys: Vec<Key<M::State>> = states.iter().map(&key).collect();
    let last: HashMap<&Key<M::State>, usize> =
        keys.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let n = moves.len();
    let mut out = Vec::with_capacity(n);
    let mut left = budget;
    let mut i = last[&keys[0]];
    while i < n {
        let mut best = (i + 1, moves[i].clone());
        machine.legal_moves(&states[i], 0, &mut legal);
        if legal.len() <= left {
            left -= legal.len();
            for m in &legal {
                let t = machine.next_state(&states[i], std::slice::from_ref(m));
                if let Some(&k) = last.get(&key(&t)) {
                    if k > best.0 {
                        best = (k, m.clone());
                    }
                }
            }
        }
        out.push(machine.move_term(&best.1));
        i = last[&keys[best.0]];
    }
    if out.len() == plan.len() {
        return None;
    }
    // With a clock the states reached are not the plan's own: the shortened
    // plan must still end the game where it ends, with the same goals.
    let goals = machine.goal_values(states.last().expect("the final state"), 0);
    let same = crate::asp::verify::replay_values(machine, &out).is_ok_and(|g| g == goals);
    same.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gdl::parser::parse_ground_terms;
    use crate::gdl::{parse, Game};
    use crate::reasoner::Prover;

    /// A walk on 0..3 (the goal at 3), one step left or right, and a jump
    /// from 0 to 2.
    const LINE: &str = "(role p) (init (at 0))
        (succ 0 1) (succ 1 2) (succ 2 3)
        (<= (legal p right) (true (at ?x)) (succ ?x ?y))
        (<= (legal p left) (true (at ?x)) (succ ?y ?x))
        (<= (legal p jump) (true (at 0)))
        (<= (next (at ?y)) (does p right) (true (at ?x)) (succ ?x ?y))
        (<= (next (at ?y)) (does p left) (true (at ?x)) (succ ?y ?x))
        (<= (next (at 2)) (does p jump))
        (<= terminal (true (at 3)))
        (<= (goal p 100) (true (at 3)))
        (<= (goal p 0) (not (true (at 3))))";

    /// [`LINE`] with a clock: `(step ?n)` counts the moves, and the game also
    /// ends at step 5.
    fn clocked() -> String {
        LINE.replace(
            "(init (at 0))",
            "(init (at 0)) (init (step 0)) (succ 3 4) (succ 4 5)",
        )
        .replace(
            "(<= terminal (true (at 3)))",
            "(<= terminal (true (at 3))) (<= terminal (true (step 5)))
             (<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))",
        )
    }

    fn texts(prover: &Prover, plan: &[Term]) -> Vec<String> {
        plan.iter()
            .map(|t| crate::gdl::print::term_to_string(t, &prover.game().symbols))
            .collect()
    }

    fn shortened(moves: &str, budget: usize) -> Option<Vec<String>> {
        shortened_in(LINE, moves, budget)
    }

    fn shortened_in(rules: &str, moves: &str, budget: usize) -> Option<Vec<String>> {
        let game = Game::new(parse(rules, "line.kif").unwrap()).unwrap();
        let clock = crate::asp::bounds::clock_fluent(&game);
        let prover = Prover::new(game);
        let plan = parse_ground_terms(&format!("({moves})"), &prover.game().symbols).unwrap();
        let goal = crate::asp::verify::replay(&prover, &plan).ok();
        shorten(&prover, &plan, clock, budget).map(|p| {
            assert_eq!(
                crate::asp::verify::replay(&prover, &p).ok(),
                goal,
                "the shortened plan replays to the same goal"
            );
            texts(&prover, &p)
        })
    }

    #[test]
    fn a_loop_is_cut_and_a_shortcut_taken() {
        // right left right right right: the loop cut, then the jump.
        assert_eq!(
            shortened("right left right right right", SHORTCUT_BUDGET),
            Some(vec!["jump".into(), "right".into()])
        );
        // Without a budget for shortcuts, only the loop goes.
        assert_eq!(
            shortened("right left right right right", 0),
            Some(vec!["right".into(), "right".into(), "right".into()])
        );
        // Nothing to cut.
        assert_eq!(shortened("jump right", SHORTCUT_BUDGET), None);
        // A plan that does not replay is left to the verification.
        assert_eq!(shortened("left", SHORTCUT_BUDGET), None);
    }

    #[test]
    fn states_are_compared_without_the_clock() {
        let rules = clocked();
        let g = Game::new(parse(&rules, "line.kif").unwrap()).unwrap();
        assert!(crate::asp::bounds::clock_fluent(&g).is_some());
        // The loop returns to (at 0) one step later on the clock: cut all the
        // same, and the jump taken.
        assert_eq!(
            shortened_in(&rules, "right left right right right", SHORTCUT_BUDGET),
            Some(vec!["jump".into(), "right".into()])
        );
        // Ended by the clock at step 5 with goal 0: without the loops the
        // clock would not end it, so the plan stays as it is.
        assert_eq!(
            shortened_in(&rules, "right left right left right", SHORTCUT_BUDGET),
            None
        );
    }
}
