//! Tests of the split: the rewritten rules play as the game as written.

use super::{split, Unique};
use crate::gdl::{parse, Game, Relation, Term};
use crate::reasoner::{Prover, StateMachine};

/// A row of three cells to fill with the digits 1-3, judged at the end by
/// sudoku's `exactlyOne` in miniature.
pub(crate) const ROW: &str = "(role p)
    (index 1) (index 2) (index 3) (eq 1 1) (eq 2 2) (eq 3 3)
    (<= (legal p (play ?j ?m)) (index ?m) (empty ?j))
    (<= (empty ?j) (index ?j)
        (not (true (mark ?j 1))) (not (true (mark ?j 2))) (not (true (mark ?j 3))))
    (<= (next (mark ?j ?m)) (does p (play ?j ?m)))
    (<= (next (mark ?j ?m)) (true (mark ?j ?m)))
    (<= open (empty ?j))
    (<= terminal (not open))
    (<= (first ?z ?x1 ?x2 ?x3) (eq ?z ?x1) (index ?x2) (index ?x3)
        (not (eq ?z ?x2)) (not (eq ?z ?x3)))
    (<= (one ?z ?x1 ?x2 ?x3) (first ?z ?x1 ?x2 ?x3))
    (<= (one ?z ?x1 ?x2 ?x3) (first ?z ?x2 ?x1 ?x3))
    (<= (one ?z ?x1 ?x2 ?x3) (first ?z ?x3 ?x1 ?x2))
    (<= good (true (mark 1 ?a)) (true (mark 2 ?b)) (true (mark 3 ?c))
        (one 1 ?a ?b ?c) (one 2 ?a ?b ?c) (one 3 ?a ?b ?c))
    (<= (goal p 100) good)
    (<= (goal p 0) (not good))";

pub(crate) fn row() -> (Game, Vec<Unique>) {
    let game = Game::new(parse(ROW, "row.kif").unwrap()).unwrap();
    let mark = game.symbols.get("mark").unwrap();
    let unique = vec![Unique {
        fluent: Relation {
            name: mark,
            arity: 2,
        },
        key: vec![0],
    }];
    (game, unique)
}

/// The split game no longer reads `one` or `first`, and agrees with the
/// game as written on every state reachable (all 64 partial fills):
/// legal moves, terminal, goals.
#[test]
fn a_split_game_plays_as_written() {
    let (game, unique) = row();
    let (split_game, rels) = split(&game, &unique).expect("the goal splits");
    let names: Vec<&str> = rels.iter().map(|r| game.symbols.name(r.name)).collect();
    assert_eq!(names, ["good"]);
    for dropped in ["one", "first"] {
        let sym = game.symbols.get(dropped).unwrap();
        assert!(split_game.rules.iter().all(|r| r.head.name() != Some(sym)));
    }
    let (a, b) = (Prover::new(game), Prover::new(split_game));
    let mut todo: Vec<Vec<Term>> = vec![Vec::new()];
    let mut seen = 0;
    while let Some(path) = todo.pop() {
        let play = |m: &Prover| {
            let mut s = m.initial_state();
            for t in &path {
                let mut moves = Vec::new();
                m.legal_moves(&s, 0, &mut moves);
                let mv = moves.into_iter().find(|mv| m.move_term(mv) == *t).unwrap();
                s = m.next_state(&s, &[mv]);
            }
            s
        };
        let (sa, sb) = (play(&a), play(&b));
        seen += 1;
        assert_eq!(a.is_terminal(&sa), b.is_terminal(&sb));
        assert_eq!(a.goal_values(&sa, 0), b.goal_values(&sb, 0), "{path:?}");
        let terms = |m: &Prover, s| {
            let mut moves = Vec::new();
            m.legal_moves(s, 0, &mut moves);
            let mut t: Vec<Term> = moves.iter().map(|mv| m.move_term(mv)).collect();
            t.sort_by_key(|t| format!("{t:?}"));
            t
        };
        let moves = terms(&a, &sa);
        assert_eq!(moves, terms(&b, &sb));
        // Cells in order, so each partial fill is reached once.
        for t in moves {
            let cell = format!("{:?}", t.args()[0]);
            let filled = path.iter().filter(|p| format!("{:?}", p.args()[0]) >= cell);
            if filled.count() == 0 {
                let mut next = path.clone();
                next.push(t);
                todo.push(next);
            }
        }
    }
    assert_eq!(seen, 64);
}

/// Without the invariant nothing splits.
#[test]
fn nothing_splits_without_an_invariant() {
    let (game, _) = row();
    assert!(split(&game, &[]).is_none());
}
