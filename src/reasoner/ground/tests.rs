//! Tests of the grounder.

use super::{ground, Limits};
use crate::gdl::{parse, Game};

/// A corridor whose walls are static: the relaxed game must not walk
/// through them (negation over static relations is decided exactly),
/// while `(not (true (lit ?x)))`, over a fluent, is still dropped.
#[test]
fn negation_over_static_relations_is_exact() {
    let text = "(role r) (init (at 1))
        (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5)
        (wall 3)
        (<= (open ?x) (succ ?w ?x) (not (wall ?x)))
        (<= (legal r (go ?y)) (true (at ?x)) (succ ?x ?y) (open ?y)
            (not (true (lit ?y))))
        (<= (next (at ?y)) (does r (go ?y)))
        (<= (next (lit ?y)) (does r (go ?y)))
        (<= terminal (true (at 5)))
        (<= (goal r 100) (true (at 5)))
        (<= (goal r 0) (not (true (at 5))))";
    let game = Game::new(parse(text, "corridor.kif").unwrap()).unwrap();
    let g = ground(&game, &Limits::default()).unwrap();
    let atoms: Vec<String> = g
        .atoms
        .iter()
        .map(|&a| crate::gdl::print::term_to_string(&g.pool.to_term(a), &game.symbols))
        .collect();
    let has = |s: &str| atoms.iter().any(|a| a == s);
    assert!(has("(open 2)") && !has("(open 3)"), "{atoms:?}");
    assert!(has("(true (at 2))") && !has("(true (at 3))"), "{atoms:?}");
    assert!(!has("(true (at 4))"), "{atoms:?}");
    // The negative literal over a fluent stays in the ground rule.
    let legal = g
        .rules
        .iter()
        .find(|r| atoms[r.head as usize] == "(legal r (go 2))")
        .expect("the legal move to 2");
    assert_eq!(legal.neg.len(), 1);
}
