//! Demand-driven rewriting: "magic sets" for relations that are only ever
//! asked about with all their arguments known.
//!
//! Bottom-up engines (the prover, our grounder, gringo) compute every tuple of
//! a relation, wanted or not. ruleDepthQuadratic asks `(prereq1 0)` to decide
//! one legal move, and `prereq1` is defined through `prereq2` ... `prereq44`,
//! each over all bit tuples of its arity: 2^44 tuples bottom-up, a few dozen
//! asked for top-down. The rewrite gives such a relation `p` a demand relation
//! `demand_p` holding the tuples some rule asks about, adds `(demand_p args)`
//! to the front of every rule of `p`, and derives the demand from each place
//! `p` is called: the caller's own demand (when the caller is rewritten too)
//! and the caller's literals over static relations, `true` and `distinct`,
//! which narrow it (`(not (distinct ?b0 0))` keeps only `?b0 = 0`).
//!
//! Why it is exact: a rule's instance can fire only when every body literal
//! holds, so restricting a called relation to the tuples asked for by
//! instances whose other literals hold changes no head that can be derived;
//! and the literals copied into demand rules are over relations computed
//! before any rewritten one, so the program stays stratified. A relation is
//! rewritten only when every call of it has its arguments bound by the
//! caller's demand or by those literals (a fixpoint: dropping one relation
//! can unbind another's calls); static relations are left alone (they are
//! computed once anyway).

use std::collections::{HashMap, HashSet};

use super::ast::{Description, Literal, Relation, Rule, Term};
use super::normal::{Game, Phase};
use super::symbol::{kw, Sym};

/// The game rewritten, and the relations that got a demand relation; `None`
/// when no relation qualifies.
pub fn rewrite(game: &Game) -> Option<(Game, Vec<Relation>)> {
    let keyword = |s: Sym| {
        [
            kw::ROLE,
            kw::INIT,
            kw::TRUE,
            kw::NEXT,
            kw::LEGAL,
            kw::DOES,
            kw::GOAL,
            kw::TERMINAL,
            kw::DISTINCT,
            kw::BASE,
            kw::INPUT,
        ]
        .contains(&s)
    };
    // Every literal must be one the normal form leaves.
    if game.rules.iter().any(|r| {
        r.body
            .iter()
            .any(|l| !matches!(l, Literal::Pos(_) | Literal::Not(_) | Literal::Distinct(..)))
    }) {
        return None;
    }
    let narrowing = |t: &Term| {
        t.relation()
            .is_some_and(|rel| rel.name == kw::TRUE || game.phase(rel) == Phase::Static)
    };
    let mut chosen: HashSet<Relation> = game
        .relations
        .iter()
        .filter(|(rel, phase)| **phase != Phase::Static && rel.arity > 0 && !keyword(rel.name))
        .map(|(rel, _)| *rel)
        .collect();
    loop {
        let mut dropped = Vec::new();
        for rule in &game.rules {
            let head_rel = rule.head.relation();
            let mut bound: HashSet<Sym> = HashSet::new();
            if head_rel.is_some_and(|h| chosen.contains(&h)) {
                bound.extend(rule.head.vars());
            }
            for l in &rule.body {
                if let Literal::Pos(t) = l {
                    if narrowing(t) {
                        bound.extend(t.vars());
                    }
                }
            }
            for l in &rule.body {
                let (Literal::Pos(t) | Literal::Not(t)) = l else {
                    continue;
                };
                let Some(rel) = t.relation() else { continue };
                if chosen.contains(&rel) && !t.vars().iter().all(|v| bound.contains(v)) {
                    dropped.push(rel);
                }
            }
        }
        if dropped.is_empty() {
            break;
        }
        for rel in dropped {
            chosen.remove(&rel);
        }
    }
    if chosen.is_empty() {
        return None;
    }

    let mut symbols = game.symbols.clone();
    let mut names: HashMap<Relation, Sym> = HashMap::new();
    let mut order: Vec<Relation> = chosen.iter().copied().collect();
    order.sort_by_key(|r| (game.symbols.name(r.name).to_string(), r.arity));
    for rel in &order {
        let mut name = format!("demand_{}", game.symbols.name(rel.name));
        while symbols.get(&name).is_some() {
            name.push('_');
        }
        names.insert(*rel, symbols.intern(&name));
    }
    let demand = |t: &Term| -> Option<Term> {
        let rel = t.relation()?;
        let name = names.get(&rel)?;
        Some(Term::Func(*name, t.args().to_vec()))
    };

    let mut rules = Vec::with_capacity(game.rules.len() * 2);
    let mut seen_demands: HashSet<(Term, Vec<Literal>)> = HashSet::new();
    for rule in &game.rules {
        let own = demand(&rule.head);
        // The literals a demand rule keeps: the caller's demand, then what
        // narrows it. Negative ones only when the positive ones bind them.
        let mut keep: Vec<Literal> = own.iter().cloned().map(Literal::Pos).collect();
        keep.extend(
            rule.body
                .iter()
                .filter(|l| matches!(l, Literal::Pos(t) if narrowing(t)))
                .cloned(),
        );
        let bound: HashSet<Sym> = keep
            .iter()
            .flat_map(|l| match l {
                Literal::Pos(t) => t.vars(),
                _ => Vec::new(),
            })
            .collect();
        let covered = |vars: Vec<Sym>| vars.iter().all(|v| bound.contains(v));
        for l in &rule.body {
            match l {
                Literal::Not(t) if narrowing(t) && covered(t.vars()) => keep.push(l.clone()),
                Literal::Distinct(a, b) if covered(a.vars()) && covered(b.vars()) => {
                    keep.push(l.clone())
                }
                _ => {}
            }
        }
        for l in &rule.body {
            let (Literal::Pos(t) | Literal::Not(t)) = l else {
                continue;
            };
            let Some(head) = demand(t) else { continue };
            if seen_demands.insert((head.clone(), keep.clone())) {
                rules.push(Rule {
                    head,
                    body: keep.clone(),
                    pos: rule.pos,
                });
            }
        }
        let mut body = rule.body.clone();
        if let Some(d) = own {
            body.insert(0, Literal::Pos(d));
        }
        rules.push(Rule {
            head: rule.head.clone(),
            body,
            pos: rule.pos,
        });
    }
    let mut rewritten = Game::new(Description {
        symbols,
        rules,
        source: game.source.clone(),
    })
    .ok()?;
    rewritten.small = order
        .iter()
        .map(|r| Relation {
            name: names[r],
            arity: r.arity,
        })
        .collect();
    Some((rewritten, order))
}

#[cfg(test)]
mod tests {
    use super::rewrite;
    use crate::gdl::{parse, Game};
    use crate::reasoner::{Prover, StateMachine};

    /// A chain that doubles at each level bottom-up and is asked about one
    /// tuple: `(p1 0)` needs `(p2 0 0)` only, as the `distinct` narrows it.
    const CHAIN: &str = "(role r) (init (step 1)) (bit 0) (bit 1)
        (succ 1 2) (succ 2 3) (succ 3 4)
        (<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
        (<= (legal r go) (p1 0))
        (legal r stop)
        (<= (next done) (does r stop))
        (<= (p1 ?a) (bit ?a) (true (step 1)))
        (<= (p1 ?a) (bit ?a) (not (true (step 1))) (not (distinct ?a 0)) (p2 ?a 0))
        (<= (p2 ?a ?b) (bit ?a) (bit ?b) (true (step 2)))
        (<= (p2 ?a ?b) (bit ?a) (bit ?b) (not (true (step 2))) (p3 ?a ?b 1))
        (<= (p3 ?a ?b ?c) (bit ?a) (bit ?b) (bit ?c) (true (step 3)))
        (<= terminal (true done))
        (<= terminal (true (step 4)))
        (<= (goal r 100) (true (step 4)))
        (<= (goal r 0) (not (true (step 4))))";

    #[test]
    fn demanded_relations_give_the_same_game() {
        let game = Game::new(parse(CHAIN, "chain.kif").unwrap()).unwrap();
        let (magic, rels) = rewrite(&game).expect("a rewrite");
        let names: Vec<&str> = rels.iter().map(|r| game.symbols.name(r.name)).collect();
        assert_eq!(names, ["p1", "p2", "p3"]);
        let a = Prover::try_new(game).unwrap();
        let b = Prover::try_new(magic).unwrap();
        // Every line of play, compared step by step.
        let mut todo = vec![(a.initial_state(), b.initial_state())];
        let mut states = 0;
        while let Some((sa, sb)) = todo.pop() {
            states += 1;
            assert_eq!(a.fluents(&sa), b.fluents(&sb));
            assert_eq!(a.is_terminal(&sa), b.is_terminal(&sb));
            assert_eq!(a.goal_values(&sa, 0), b.goal_values(&sb, 0));
            if a.is_terminal(&sa) {
                continue;
            }
            let (mut ma, mut mb) = (Vec::new(), Vec::new());
            a.legal_moves(&sa, 0, &mut ma);
            b.legal_moves(&sb, 0, &mut mb);
            let ta: Vec<_> = ma.iter().map(|m| a.move_term(m)).collect();
            let tb: Vec<_> = mb.iter().map(|m| b.move_term(m)).collect();
            assert_eq!(ta, tb);
            for (x, y) in ma.iter().zip(&mb) {
                todo.push((a.next_state(&sa, &[*x]), b.next_state(&sb, &[*y])));
            }
        }
        assert!(states > 4);
    }

    #[test]
    fn a_relation_called_with_a_free_argument_is_left_alone() {
        let text = CHAIN.replace("(<= (legal r go) (p1 0))", "(<= (legal r (go ?x)) (p1 ?x))");
        let game = Game::new(parse(&text, "chain.kif").unwrap()).unwrap();
        let (_, rels) = rewrite(&game).expect("p2 and p3 still qualify");
        let names: Vec<&str> = rels.iter().map(|r| game.symbols.name(r.name)).collect();
        // p1 is asked with ?x free, so p2's calls (?a from p1's head) are
        // bound only by (bit ?a): still bound.
        assert_eq!(names, ["p2", "p3"]);
    }
}
