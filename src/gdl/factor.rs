//! Argument reduction by factoring (Naughton, Ramakrishnan, Sagiv and Ullman,
//! 1989) for argument positions that carry only a type.
//!
//! ruleDepthExponential decides its one legal move through
//! `(prereq1 0)`, defined by `(prereq2 ?b0 0)` and `(prereq2 ?b0 1)`, each by
//! two calls of `prereq3`, and so on: at step k any evaluation of the rules
//! as written derives 2^k rows. Yet the bits decide nothing: each one is
//! tested by `(bit ?b)` and passed on, never compared, negated or put in the
//! state. Such a position is *inert*, and the relation factors into the
//! type of the position and a relation without it:
//! `(prereq2 ?b1 ?b0)` holds iff `(bit ?b1)`, `(bit ?b0)` and `prereq2'`.
//! With every position inert the chain is one nullary relation per level,
//! and a state costs k rows.
//!
//! A position `i` of a derived, non-keyword relation `p` is inert when in
//! every rule of `p` the head has a variable `X` there, once, and each
//! occurrence of `X` in the body is the argument of a positive unary atom of
//! a relation given by facts alone (a *type*) or, alone in its argument, at
//! an inert position of a positive atom (inert positions are found as the
//! greatest set closed under this). The position's type is the set of type
//! relations that the rules' bodies apply to `X`, directly or through the
//! positions it is passed to; every rule of `p` must give the same set.
//!
//! Why it is exact: by induction on derivations, `(p a.. b..)` holds iff
//! `(p' a..)` holds and each inert argument `b` is in every type of its
//! position. The rewrite drops the inert arguments from heads and calls,
//! drops the type atoms on a rule's inert head variables (the callers check
//! them), and gives a call's inert argument its position's type atoms: kept
//! in the body when the argument has variables, decided at once when it is
//! ground (a type that fails removes the rule, or makes a negated call
//! true). A negated call is factored only where its inert arguments are
//! ground. Keyword relations keep their arity, so states, moves, goals and
//! terminal are the same, and the result must pass [`Game::new`].

use std::collections::{BTreeSet, HashMap, HashSet};

use super::ast::{is_keyword_relation, Description, Literal, Relation, Rule, Term};
use super::normal::Game;
use super::symbol::Sym;

/// The game with its inert argument positions factored out, and the
/// relations that lost positions; `None` when no position is inert or the
/// result is not a valid game.
pub fn rewrite(game: &Game) -> Option<(Game, Vec<Relation>)> {
    if game.rules.iter().any(|r| {
        r.body
            .iter()
            .any(|l| !matches!(l, Literal::Pos(_) | Literal::Not(_) | Literal::Distinct(..)))
    }) {
        return None;
    }
    let types = type_tables(game);
    let mut inert = candidates(game, &types);
    let kinds = loop {
        shrink(game, &types, &mut inert);
        inert.retain(|_, v| v.iter().any(|b| *b));
        if inert.is_empty() {
            return None;
        }
        match position_types(game, &types, &inert) {
            Ok(kinds) => break kinds,
            Err((rel, i)) => inert.get_mut(&rel).expect("a candidate")[i] = false,
        }
    };
    let mut symbols = game.symbols.clone();
    let mut order: Vec<Relation> = inert.keys().copied().collect();
    order.sort_by_key(|r| (game.symbols.name(r.name).to_string(), r.arity));
    let names: HashMap<Relation, Sym> = order
        .iter()
        .map(|r| {
            let name = symbols.fresh(&format!("{}_factored", game.symbols.name(r.name)));
            (*r, name)
        })
        .collect();
    let f = Factoring {
        inert: &inert,
        kinds: &kinds,
        types: &types,
        names: &names,
    };
    let rules = game.rules.iter().filter_map(|r| f.rule(r)).collect();
    let factored = Game::new(Description {
        symbols,
        rules,
        source: game.source.clone(),
    })
    .ok()?;
    Some((factored, order))
}

/// The unary relations given by ground facts alone, each with its terms.
fn type_tables(game: &Game) -> HashMap<Sym, HashSet<Term>> {
    let mut derived = HashSet::new();
    let mut tables: HashMap<Sym, HashSet<Term>> = HashMap::new();
    for r in &game.rules {
        let Some(rel) = r.head.relation() else {
            continue;
        };
        if r.is_fact() && r.head.is_ground() {
            if rel.arity == 1 {
                tables
                    .entry(rel.name)
                    .or_default()
                    .insert(r.head.args()[0].clone());
            }
        } else {
            derived.insert(rel);
        }
    }
    tables.retain(|name, _| {
        !is_keyword_relation(*name)
            && !derived.contains(&Relation {
                name: *name,
                arity: 1,
            })
    });
    tables
}

/// Per relation that may factor, its positions still taken for inert.
type Inert = HashMap<Relation, Vec<bool>>;

/// Every position of every derived, non-keyword relation.
fn candidates(game: &Game, types: &HashMap<Sym, HashSet<Term>>) -> Inert {
    game.rules
        .iter()
        .filter(|r| !r.is_fact())
        .filter_map(|r| r.head.relation())
        .filter(|rel| rel.arity > 0 && !is_keyword_relation(rel.name))
        .filter(|rel| !(rel.arity == 1 && types.contains_key(&rel.name)))
        .map(|rel| (rel, vec![true; rel.arity]))
        .collect()
}

fn is_inert(inert: &Inert, rel: Relation, i: usize) -> bool {
    inert.get(&rel).is_some_and(|v| v[i])
}

/// Removes positions until every one left meets the definition: a head
/// variable used only in types and at inert positions; and wherever the
/// relation is called negatively, a ground argument there.
fn shrink(game: &Game, types: &HashMap<Sym, HashSet<Term>>, inert: &mut Inert) {
    loop {
        let mut out: Vec<(Relation, usize)> = Vec::new();
        for r in &game.rules {
            for l in &r.body {
                if let Literal::Not(t) = l {
                    if let Some(rel) = t.relation() {
                        for (j, a) in t.args().iter().enumerate() {
                            if is_inert(inert, rel, j) && !a.is_ground() {
                                out.push((rel, j));
                            }
                        }
                    }
                }
            }
        }
        for (r, head, i) in inert_heads(game, inert) {
            if !inert_in_rule(r, i, types, inert) {
                out.push((head, i));
            }
        }
        if out.is_empty() {
            return;
        }
        for (rel, i) in out {
            if let Some(v) = inert.get_mut(&rel) {
                v[i] = false;
            }
        }
    }
}

/// Whether head position `i` of `r` holds a variable used only in types and
/// at inert positions.
fn inert_in_rule(r: &Rule, i: usize, types: &HashMap<Sym, HashSet<Term>>, inert: &Inert) -> bool {
    let Term::Var(x) = r.head.args()[i] else {
        return false;
    };
    let in_head = r.head.args().iter().filter(|a| occurs(x, a)).count();
    if in_head != 1 {
        return false;
    }
    r.body.iter().all(|l| match l {
        Literal::Pos(t) => {
            let Some(rel) = t.relation() else {
                return false;
            };
            if !occurs(x, t) {
                return true;
            }
            if rel.arity == 1 && types.contains_key(&rel.name) {
                return t.args()[0] == Term::Var(x);
            }
            // Alone at one inert position, nowhere else in the atom.
            let places: Vec<usize> = (0..rel.arity).filter(|&j| occurs(x, &t.args()[j])).collect();
            matches!(places.as_slice(), [j] if t.args()[*j] == Term::Var(x) && is_inert(inert, rel, *j))
        }
        other => {
            let mut found = false;
            other.for_each_var(&mut |v| found |= v == x);
            !found
        }
    })
}

fn occurs(x: Sym, t: &Term) -> bool {
    let mut found = false;
    t.for_each_var(&mut |v| found |= v == x);
    found
}

/// The type of every inert position (the type relations its values must be
/// in), found to a fixpoint; or a position whose rules disagree on it.
fn position_types(
    game: &Game,
    types: &HashMap<Sym, HashSet<Term>>,
    inert: &Inert,
) -> Result<Kinds, (Relation, usize)> {
    let mut kinds: Kinds = HashMap::new();
    loop {
        let mut changed = false;
        for (r, head, i) in inert_heads(game, inert) {
            let kind = rule_kind(r, i, types, inert, &kinds);
            let known = kinds.entry((head, i)).or_default();
            let before = known.len();
            known.extend(kind);
            changed |= known.len() != before;
        }
        if !changed {
            break;
        }
    }
    for (r, head, i) in inert_heads(game, inert) {
        if rule_kind(r, i, types, inert, &kinds) != kinds[&(head, i)] {
            return Err((head, i));
        }
    }
    Ok(kinds)
}

/// Each rule with its head's relation and each of its positions still
/// taken for inert.
fn inert_heads<'a>(
    game: &'a Game,
    inert: &'a Inert,
) -> impl Iterator<Item = (&'a Rule, Relation, usize)> + 'a {
    game.rules.iter().flat_map(move |r| {
        let head = r.head.relation().filter(|h| inert.contains_key(h));
        head.into_iter().flat_map(move |h| {
            (0..h.arity)
                .filter(move |&i| inert[&h][i])
                .map(move |i| (r, h, i))
        })
    })
}

/// Per inert position, the type relations its values must be in.
type Kinds = HashMap<(Relation, usize), BTreeSet<Sym>>;

/// The types that rule `r`'s body gives its head variable at position `i`.
fn rule_kind(
    r: &Rule,
    i: usize,
    types: &HashMap<Sym, HashSet<Term>>,
    inert: &Inert,
    kinds: &Kinds,
) -> BTreeSet<Sym> {
    let x = r.head.args()[i].clone();
    let mut kind = BTreeSet::new();
    for l in &r.body {
        let Literal::Pos(t) = l else {
            continue;
        };
        let Some(rel) = t.relation() else {
            continue;
        };
        if rel.arity == 1 && types.contains_key(&rel.name) && t.args()[0] == x {
            kind.insert(rel.name);
            continue;
        }
        for (j, a) in t.args().iter().enumerate() {
            if *a == x && is_inert(inert, rel, j) {
                kind.extend(kinds.get(&(rel, j)).into_iter().flatten().copied());
            }
        }
    }
    kind
}

/// What the rewrite of one rule needs.
struct Factoring<'a> {
    inert: &'a Inert,
    kinds: &'a Kinds,
    types: &'a HashMap<Sym, HashSet<Term>>,
    names: &'a HashMap<Relation, Sym>,
}

impl Factoring<'_> {
    /// `r` rewritten; `None` when a ground argument fails its type (the
    /// rule never fires).
    fn rule(&self, r: &Rule) -> Option<Rule> {
        let (head, dropped) = match r.head.relation() {
            Some(rel) if self.inert.contains_key(&rel) => {
                let vars: Vec<Sym> = (0..rel.arity)
                    .filter(|&i| self.inert[&rel][i])
                    .filter_map(|i| match r.head.args()[i] {
                        Term::Var(x) => Some(x),
                        _ => None,
                    })
                    .collect();
                (self.call(rel, r.head.args()), vars)
            }
            _ => (r.head.clone(), Vec::new()),
        };
        let mut body: Vec<Literal> = Vec::new();
        for l in &r.body {
            match l {
                Literal::Pos(t) => {
                    let rel = t.relation().expect("atoms have a relation");
                    // The inert head variables' types are the callers' to check.
                    if rel.arity == 1
                        && self.types.contains_key(&rel.name)
                        && matches!(&t.args()[0], Term::Var(x) if dropped.contains(x))
                    {
                        continue;
                    }
                    if !self.inert.contains_key(&rel) {
                        body.push(l.clone());
                        continue;
                    }
                    for (j, a) in t.args().iter().enumerate() {
                        if !self.inert[&rel][j] || matches!(a, Term::Var(x) if dropped.contains(x))
                        {
                            continue;
                        }
                        for &ty in &self.kinds[&(rel, j)] {
                            if a.is_ground() {
                                if !self.types[&ty].contains(a) {
                                    return None;
                                }
                            } else {
                                body.push(Literal::Pos(Term::Func(ty, vec![a.clone()])));
                            }
                        }
                    }
                    body.push(Literal::Pos(self.call(rel, t.args())));
                }
                Literal::Not(t) => {
                    let rel = t.relation().expect("atoms have a relation");
                    if !self.inert.contains_key(&rel) {
                        body.push(l.clone());
                        continue;
                    }
                    // Inert arguments of negated calls are ground (see shrink).
                    let typed = t.args().iter().enumerate().all(|(j, a)| {
                        !self.inert[&rel][j]
                            || self.kinds[&(rel, j)]
                                .iter()
                                .all(|ty| self.types[ty].contains(a))
                    });
                    if typed {
                        body.push(Literal::Not(self.call(rel, t.args())));
                    }
                }
                other => body.push(other.clone()),
            }
        }
        let mut unique: Vec<Literal> = Vec::with_capacity(body.len());
        for l in body {
            if !unique.contains(&l) {
                unique.push(l);
            }
        }
        Some(Rule {
            head,
            body: unique,
            pos: r.pos,
        })
    }

    /// The atom of factored relation `rel` with these arguments, its inert
    /// ones dropped.
    fn call(&self, rel: Relation, args: &[Term]) -> Term {
        let kept: Vec<Term> = args
            .iter()
            .enumerate()
            .filter(|(j, _)| !self.inert[&rel][*j])
            .map(|(_, a)| a.clone())
            .collect();
        let name = self.names[&rel];
        if kept.is_empty() {
            Term::Const(name)
        } else {
            Term::Func(name, kept)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rewrite;
    use crate::gdl::demand::{self, tests::lockstep};
    use crate::gdl::{parse, print, Game};

    /// ruleDepthExponential in small: the demand rewrite's chain with both
    /// rows of the next level asked at each level, whose arguments are
    /// only tested by `bit`.
    fn chain() -> String {
        demand::tests::CHAIN
            .replace("(not (distinct ?a 0)) (p2 ?a 0)", "(p2 ?a 0) (p2 ?a 1)")
            .replace("(p3 ?a ?b 1))", "(p3 ?a ?b 0) (p3 ?a ?b 1))")
    }

    fn rules_of(game: &Game, name: &str) -> Vec<String> {
        game.rules
            .iter()
            .filter(|r| r.head.name().is_some_and(|n| game.symbols.name(n) == name))
            .map(|r| print::rule_to_string(r, &game.symbols))
            .collect()
    }

    /// The game of `text`, factored, and the names of the relations factored.
    fn factor(text: &str) -> (Game, Game, Vec<String>) {
        let game = Game::new(parse(text, "chain.kif").unwrap()).unwrap();
        let (factored, rels) = rewrite(&game).expect("a position is inert");
        let names = rels
            .iter()
            .map(|r| game.symbols.name(r.name).to_string())
            .collect();
        (game, factored, names)
    }

    #[test]
    fn arguments_that_carry_a_type_are_factored_out() {
        let (game, factored, names) = factor(&chain());
        assert_eq!(names, ["p1", "p2", "p3"]);
        // One nullary relation a level, the constants' types decided at once.
        assert_eq!(
            rules_of(&factored, "p2_factored"),
            [
                "(<= p2_factored (true (step 2)))",
                "(<= p2_factored (not (true (step 2))) p3_factored)"
            ]
        );
        assert_eq!(
            rules_of(&factored, "legal"),
            ["(<= (legal r go) p1_factored)", "(legal r stop)"]
        );
        assert!(lockstep(game, factored) > 4);
    }

    #[test]
    fn a_position_compared_or_read_by_the_state_is_kept() {
        // `distinct`, or the state, reads p1's argument: it is not inert,
        // p2's and p3's still are.
        for read in ["(distinct ?a 1)", "(true (mark ?a))"] {
            let text = chain().replace(
                "(<= (p1 ?a) (bit ?a) (true (step 1)))",
                &format!("(<= (p1 ?a) (bit ?a) (true (step 1)) {read})"),
            );
            let (game, factored, names) = factor(&text);
            assert_eq!(names, ["p2", "p3"], "{read}");
            assert!(lockstep(game, factored) >= 2);
        }
    }

    #[test]
    fn a_constant_outside_the_type_removes_its_rule_or_negated_literal() {
        // The call never holds, its rule goes; negated, the literal always
        // holds and goes.
        let (game, factored, _) = factor(
            &chain()
                .replace("(p3 ?a ?b 0) (p3 ?a ?b 1)", "(p3 ?a ?b 0) (p3 ?a ?b 7)")
                .replace(
                    "(<= (next done) (does r stop))",
                    "(<= (next done) (does r stop) (not (p2 0 7)))",
                ),
        );
        assert_eq!(
            rules_of(&factored, "p2_factored"),
            ["(<= p2_factored (true (step 2)))"]
        );
        assert_eq!(
            rules_of(&factored, "next")[1],
            "(<= (next done) (does r stop))"
        );
        assert!(lockstep(game, factored) > 4);
    }

    #[test]
    fn a_game_with_no_inert_position_is_left_alone() {
        let facts = "(role r) (init (s 1)) (<= (legal r (go ?x)) (true (s ?x)))
            (<= (next (s ?x)) (does r (go ?x))) (<= terminal (true (s 1))) (goal r 100)";
        let game = Game::new(parse(facts, "facts.kif").unwrap()).unwrap();
        assert!(rewrite(&game).is_none());
    }
}
