//! Fluents that never change: read them as static relations.
//!
//! Some games keep fixed facts in the state: mummymaze1p's walls are `init`
//! fluents whose only `next` rule copies them (`(<= (next (wall ?x ?y ?d))
//! (true (wall ?x ?y ?d)))`). Every engine then treats what depends on them
//! as state-dependent, and a grounder, which does not know which `true` atoms
//! hold, relaxes `(not (true (wall ...)))` away: the maze has no walls, its
//! pieces reach every point of a 51 x 51 grid, and the mummy's chase over all
//! their pairs grounds to a huge program. [`freeze`] finds such fluents (every
//! `next` rule for their name is that copy) and reads `(true (wall a b c))` as
//! `(constant_wall a b c)`, a static relation given by the `init` rules of
//! `wall`. It is exact: a fluent that only the copy can bring into the next
//! state holds in a state exactly when it held initially. The fluents stay in
//! the states (the copy rules are kept), so states, plans and `(true ?x)`
//! literals read as before.

use std::collections::{HashMap, HashSet};

use super::ast::{Description, Literal, Relation, Rule, Term};
use super::normal::Game;
use super::symbol::{kw, Sym};

/// The game with its constant fluents read as static relations, and those
/// fluents' names; `None` when there is none (or the rules name fluents
/// through variables, `(next ?f)`, so the analysis cannot say).
pub fn freeze(game: &Game) -> Option<(Game, Vec<Relation>)> {
    let frozen = constant_fluents(game)?;
    let frozen_game = read_as_static(game, &frozen)?;
    Some((frozen_game, frozen))
}

/// The fluent of a rule whose head is `(name f)` (`next` or `init`): `None`
/// for another head, `Some(None)` when `f` is a variable.
fn fluent(rule: &Rule, name: Sym) -> Option<Option<Term>> {
    (rule.head.name() == Some(name) && rule.head.args().len() == 1).then(|| {
        rule.head.args()[0]
            .name()
            .map(|_| rule.head.args()[0].clone())
    })
}

/// The fluents that only copy rules bring into the next state and some rule
/// reads, sorted by name; `None` when there is none or the rules name fluents
/// through variables.
fn constant_fluents(game: &Game) -> Option<Vec<Relation>> {
    let mut copies_only: HashMap<Relation, bool> = HashMap::new();
    for rule in &game.rules {
        let Some(f) = fluent(rule, kw::NEXT) else {
            continue;
        };
        let f = f?;
        let copy = matches!(rule.body.as_slice(),
            [Literal::Pos(t)] if t.name() == Some(kw::TRUE) && t.args() == [f.clone()]);
        *copies_only.entry(f.relation()?).or_insert(true) &= copy;
    }
    for rule in &game.rules {
        if fluent(rule, kw::INIT) == Some(None) {
            return None;
        }
    }
    let mut frozen: Vec<Relation> = copies_only
        .into_iter()
        .filter(|(_, only)| *only)
        .map(|(rel, _)| rel)
        .collect();
    // Only fluents some rule reads are worth a relation.
    let read: HashSet<Relation> = game
        .rules
        .iter()
        .flat_map(|r| &r.body)
        .filter_map(|l| match l {
            Literal::Pos(t) | Literal::Not(t) if t.name() == Some(kw::TRUE) => {
                t.args().first()?.relation()
            }
            _ => None,
        })
        .collect();
    frozen.retain(|rel| read.contains(rel));
    if frozen.is_empty() {
        return None;
    }
    frozen.sort_by_key(|r| (game.symbols.name(r.name).to_string(), r.arity));
    Some(frozen)
}

/// The game with `(true f)` of every `frozen` fluent read as its static
/// relation, given by the fluent's `init` rules; the copy rules keep reading
/// the state.
fn read_as_static(game: &Game, frozen: &[Relation]) -> Option<Game> {
    let mut symbols = game.symbols.clone();
    let mut names: HashMap<Relation, Sym> = HashMap::new();
    for rel in frozen {
        let name = symbols.fresh(&format!("constant_{}", game.symbols.name(rel.name)));
        names.insert(*rel, name);
    }
    // `(f a b)` as the atom `(constant_f a b)`, for a frozen fluent `f`.
    let static_atom = |f: &Term| -> Option<Term> {
        let name = *names.get(&f.relation()?)?;
        Some(if f.args().is_empty() {
            Term::Const(name)
        } else {
            Term::Func(name, f.args().to_vec())
        })
    };
    let read_static = |t: &Term| -> Option<Term> {
        if t.name() != Some(kw::TRUE) {
            return None;
        }
        static_atom(t.args().first()?)
    };
    let mut rules = Vec::with_capacity(game.rules.len() + 16);
    for rule in &game.rules {
        let body: Vec<Literal> = rule
            .body
            .iter()
            .map(|l| match l {
                Literal::Pos(t) => read_static(t).map_or_else(|| l.clone(), Literal::Pos),
                Literal::Not(t) => read_static(t).map_or_else(|| l.clone(), Literal::Not),
                _ => l.clone(),
            })
            .collect();
        if let Some(Some(f)) = fluent(rule, kw::INIT) {
            if let Some(head) = static_atom(&f) {
                rules.push(Rule {
                    head,
                    body: body.clone(),
                    pos: rule.pos,
                });
            }
        }
        // The copy rules keep reading the state: the fluents stay in it.
        let copy = fluent(rule, kw::NEXT)
            .flatten()
            .is_some_and(|f| f.relation().is_some_and(|r| names.contains_key(&r)));
        rules.push(Rule {
            head: rule.head.clone(),
            body: if copy { rule.body.clone() } else { body },
            pos: rule.pos,
        });
    }
    Game::new(Description {
        symbols,
        rules,
        source: game.source.clone(),
    })
    .ok()
}

#[cfg(test)]
mod tests {
    use super::freeze;
    use crate::gdl::{parse, Game, Phase, Relation};

    const WALLS: &str = "(role r) (init (at 1)) (init (wall 2)) (init (wall 4)) (init lit)
        (n 1) (n 2) (n 3) (n 4) (succ 1 2) (succ 2 3) (succ 3 4)
        (<= (next (wall ?x)) (true (wall ?x)))
        (<= (next lit) (true lit) (not (true (at 3))))
        (<= (open ?x) (n ?x) (not (true (wall ?x))))
        (<= (legal r (go ?y)) (true (at ?x)) (succ ?x ?y) (open ?y))
        (legal r wait)
        (<= (next (at ?y)) (does r (go ?y)))
        (<= (next (at ?x)) (does r wait) (true (at ?x)))
        (<= terminal (true (at 3)))
        (<= (goal r 100) (true (at 3)))
        (<= (goal r 0) (not (true (at 3))))";

    #[test]
    fn copied_fluents_become_static() {
        let game = Game::new(parse(WALLS, "walls.kif").unwrap()).unwrap();
        let (frozen, rels) = freeze(&game).expect("wall is constant");
        let names: Vec<&str> = rels.iter().map(|r| game.symbols.name(r.name)).collect();
        // `lit` is copied only while (at 3) does not hold: not constant.
        assert_eq!(names, ["wall"]);
        let open = Relation {
            name: game.symbols.get("open").unwrap(),
            arity: 1,
        };
        assert_eq!(game.phase(open), Phase::State);
        assert_eq!(frozen.phase(open), Phase::Static);
    }

    #[test]
    fn a_fluent_made_by_another_rule_is_not_constant() {
        let text = WALLS.replace(
            "(legal r wait)",
            "(legal r wait) (<= (next (wall 3)) (does r wait))",
        );
        let game = Game::new(parse(&text, "walls.kif").unwrap()).unwrap();
        assert!(freeze(&game).is_none());
    }
}
