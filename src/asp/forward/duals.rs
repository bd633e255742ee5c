//! The move arguments a game uses up: values each played once and that
//! must be played (hidato's numbers), found by playing the initial state's
//! moves. The depth-first search's focused phase treats each as a variable
//! (see `dfs.rs`).

use crate::gdl::{Relation, Term};
use crate::reasoner::StateMachine;

/// A move argument whose every value is played at most once, and must be
/// played: hidato's numbers, each placed in exactly one cell. The focused
/// search treats each value as a constraint solver's variable whose domain is
/// the moves that play it, beside the blockers (whose domains are the moves
/// that remove them).
pub(super) struct Dual {
    pub(super) relation: Relation,
    /// The argument's index in the move term.
    pub(super) pos: usize,
    /// The values the initial state's legal moves give it.
    pub(super) values: Vec<Term>,
}

/// The initial state's root moves that [`duals`] plays to see which arguments
/// they use up: enough to tell, few enough to cost little on a big game.
const DUAL_PROBES: usize = 64;

/// The move arguments (of the initial state's legal moves) whose value no
/// legal move repeats once a move has played it, in each of up to
/// [`DUAL_PROBES`] moves played from the initial state. Arguments with a
/// single value tell the focus nothing and are left out.
pub(super) fn duals<M: StateMachine>(m: &M, root: &M::State) -> Vec<Dual> {
    let mut moves = Vec::new();
    m.legal_moves(root, 0, &mut moves);
    let terms: Vec<Term> = moves.iter().map(|mv| m.move_term(mv)).collect();
    // (relation, position) -> (still used up in every probe, its values)
    let mut found: Vec<(Relation, usize, bool, Vec<Term>)> = Vec::new();
    for t in &terms {
        let Some(rel) = t.relation() else { continue };
        for (pos, a) in t.args().iter().enumerate() {
            let i = match found.iter().position(|(r, p, ..)| *r == rel && *p == pos) {
                Some(i) => i,
                None => {
                    found.push((rel, pos, true, Vec::new()));
                    found.len() - 1
                }
            };
            if !found[i].3.contains(a) {
                found[i].3.push(a.clone());
            }
        }
    }
    let stride = moves.len().div_ceil(DUAL_PROBES).max(1);
    let mut after = Vec::new();
    for (mv, t) in moves.iter().zip(&terms).step_by(stride) {
        let next = m.next_state(root, std::slice::from_ref(mv));
        if m.is_terminal(&next) {
            continue;
        }
        m.legal_moves(&next, 0, &mut after);
        let next_terms: Vec<Term> = after.iter().map(|mv| m.move_term(mv)).collect();
        for (rel, pos, used_up, _) in &mut found {
            if t.relation() != Some(*rel) {
                continue;
            }
            let played = &t.args()[*pos];
            if next_terms
                .iter()
                .any(|u| u.relation() == Some(*rel) && u.args()[*pos] == *played)
            {
                *used_up = false;
            }
        }
    }
    found
        .into_iter()
        .filter(|(_, _, used_up, values)| *used_up && values.len() > 1)
        .map(|(relation, pos, _, values)| Dual {
            relation,
            pos,
            values,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::duals;
    use crate::gdl::{parse, Game};
    use crate::reasoner::{Prover, StateMachine};

    fn dual_positions(text: &str) -> Vec<(usize, usize)> {
        let game = Game::new(parse(text, "test.kif").unwrap()).unwrap();
        let m = Prover::new(game);
        duals(&m, &m.initial_state())
            .iter()
            .map(|d| (d.pos, d.values.len()))
            .collect()
    }

    /// A cell takes one number and a number goes in one cell: both arguments
    /// are used up; a sudoku's row, column and digit recur.
    #[test]
    fn duals_are_the_arguments_each_move_uses_up() {
        let numbers = "(role p) (init (blank a)) (init (blank b)) (init (blank c))
            (num 1) (num 2) (num 3)
            (<= (legal p (put ?c ?n)) (true (blank ?c)) (num ?n) (not (used ?n)))
            (<= (used ?n) (true (has ?c ?n)))
            (<= (next (has ?c ?n)) (does p (put ?c ?n)))
            (<= (next (has ?c ?n)) (true (has ?c ?n)))
            (<= (next (blank ?c)) (true (blank ?c)) (not (filled ?c)))
            (<= (filled ?c) (does p (put ?c ?n)))
            (<= open (true (blank ?c)))
            (<= terminal (not open))
            (<= (goal p 100) (not open))
            (<= (goal p 0) open)";
        assert_eq!(dual_positions(numbers), [(0, 3), (1, 3)]);
        // Numbers that may recur are no dual.
        let recurring = numbers.replace("(not (used ?n))", "");
        assert_eq!(dual_positions(&recurring), [(0, 3)]);
        let sudoku = include_str!("../../../puzzles/sudoku4.kif");
        assert_eq!(dual_positions(sudoku), []);
    }
}
