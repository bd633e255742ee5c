//! Latches: fluents that, once true, stay true (positive latches: a mark on
//! a tic-tac-toe cell, a square a knight has visited) or, once false, stay
//! false (negative latches: a blank cell), read from the ground rules alone.
//!
//! A fluent `f` is a positive latch when some ground rule for `(next f)`
//! needs nothing but `(true f)` and atoms true in every state; a negative
//! latch when every ground rule for `(next f)` needs `(true f)` (no rule at
//! all: false after the first step, and for ever). Both are sufficient
//! conditions read off single rules, so a latch found is one; a latch kept
//! by a combination of rules (two rules whose conditions cover each other)
//! is missed. Atoms true in every state are the program's facts and what
//! negation-free rules derive from them alone: they read no state.
//!
//! What latches say: a goal or terminal condition that needs a negative
//! latch that is false, or the absence of a positive latch that is true,
//! can no longer be met (Sancho's latch analysis, 2014).

use crate::gdl::{kw, Term};

use super::program::{AtomId, GroundProgram};

/// The latches of a ground game, as fluent terms (`f` of `(true f)`), in
/// the order of the program's atoms.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Latches {
    /// Once true, true for ever.
    pub positive: Vec<Term>,
    /// Once false, false for ever.
    pub negative: Vec<Term>,
}

/// The latches of `p` (see the module comment for what is found).
pub fn latches(p: &GroundProgram) -> Latches {
    let always = always_true(p);
    let by_head = p.rules_by_head();
    let mut out = Latches::default();
    for (a, &t) in p.atoms.iter().enumerate() {
        if p.pool.functor(t) != kw::TRUE {
            continue;
        }
        let a = a as AtomId;
        let fluent = p.pool.to_term(p.pool.args(t)[0]);
        let next = Term::Func(kw::NEXT, vec![fluent.clone()]);
        let rules: &[usize] = match p.pool.find_term(&next).and_then(|n| p.atom(n)) {
            Some(n) => &by_head[n as usize],
            None => &[],
        };
        let keeps = |&i: &usize| {
            let r = &p.rules[i];
            r.neg.is_empty() && r.pos.iter().all(|&b| b == a || always[b as usize])
        };
        if rules.iter().any(keeps) {
            out.positive.push(fluent);
        } else if rules.iter().all(|&i| p.rules[i].pos.contains(&a)) {
            out.negative.push(fluent);
        }
    }
    out
}

/// Per atom, whether it holds in every state: a fact, or the head of a
/// rule without negation whose positive atoms all do (none reads `true` or
/// `does`, which no fact is).
fn always_true(p: &GroundProgram) -> Vec<bool> {
    let mut always = vec![false; p.atoms.len()];
    let state = |a: AtomId| {
        let f = p.pool.functor(p.atoms[a as usize]);
        f == kw::TRUE || f == kw::DOES
    };
    loop {
        let mut changed = false;
        for r in &p.rules {
            if always[r.head as usize] || !r.neg.is_empty() || state(r.head) {
                continue;
            }
            if r.pos.iter().all(|&b| always[b as usize]) {
                always[r.head as usize] = true;
                changed = true;
            }
        }
        if !changed {
            return always;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gdl::print::term_to_string;
    use crate::reasoner::ground::{ground, Limits};

    fn of(file: &str) -> (Vec<String>, Vec<String>) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/games")
            .join(file);
        let game = crate::gdl::load(&path).expect("loads");
        let p = ground(&game, &Limits::default()).expect("grounds");
        let l = latches(&p);
        let names = |ts: &[Term]| -> Vec<String> {
            ts.iter()
                .map(|t| term_to_string(t, &game.symbols))
                .collect()
        };
        (names(&l.positive), names(&l.negative))
    }

    /// Tic-tac-toe: a mark stays, a blank once filled never comes back;
    /// whose turn it is and nothing else flips.
    #[test]
    fn tic_tac_toe_marks_stay_and_blanks_do_not_return() {
        let (pos, neg) = of("ticTacToe.kif");
        assert_eq!(pos.len(), 18, "{pos:?}");
        assert!(
            pos.iter()
                .all(|f| f.starts_with("(cell ") && !f.ends_with(" b)")),
            "{pos:?}"
        );
        assert_eq!(neg.len(), 9, "{neg:?}");
        assert!(
            neg.iter()
                .all(|f| f.starts_with("(cell ") && f.ends_with(" b)")),
            "{neg:?}"
        );
    }

    /// Breakthrough: pieces move into and out of cells, so nothing stays;
    /// but pawns only go forward, so a piece never comes back to its own
    /// home row once it left it: those sixteen are negative latches, and
    /// no other cell is.
    #[test]
    fn breakthrough_pieces_never_return_to_their_home_row() {
        let (pos, neg) = of("breakthrough.kif");
        assert!(pos.iter().all(|f| !f.starts_with("(cellHolds ")), "{pos:?}");
        let board: Vec<&String> = neg
            .iter()
            .filter(|f| f.starts_with("(cellHolds "))
            .collect();
        assert_eq!(board.len(), 16, "{neg:?}");
        assert!(
            board
                .iter()
                .all(|f| f.ends_with(" 1 white)") || f.ends_with(" 8 black)")),
            "{board:?}"
        );
    }

    /// A knight's tour (a one-player corpus game on a 9 by 9 board): a
    /// square the knight has left is a hole for ever.
    #[test]
    fn a_knights_tour_leaves_holes_for_ever() {
        let (pos, neg) = of("knightsTourLarge.kif");
        let holes = pos.iter().filter(|f| f.ends_with(" hole)")).count();
        assert_eq!(holes, 81, "{pos:?}");
        assert!(pos.iter().all(|f| f.ends_with(" hole)")), "{pos:?}");
        assert!(
            neg.is_empty() || neg.iter().all(|f| !f.ends_with(" hole)")),
            "{neg:?}"
        );
    }
}
