//! Demand-driven rewriting: "magic sets" for relations whose callers always
//! know some of their arguments.
//!
//! Bottom-up engines (the prover, our grounder, gringo) compute every tuple of
//! a relation, wanted or not. ruleDepthQuadratic asks `(prereq1 0)` to decide
//! one legal move, and `prereq1` is defined through `prereq2` ... `prereq44`,
//! each over all bit tuples of its arity: 2^44 tuples bottom-up, a few dozen
//! asked for top-down. mummymaze1p's static `direction-from` relates every
//! pair of points of a 51 x 51 grid (6.8 million tuples, slow to ground)
//! where play only ever asks about the two pieces on the board.
//!
//! The rewrite gives such a relation `p` an *adornment*, the argument
//! positions every call of it binds, and a demand relation `demand_p` over
//! those positions holding the tuples some rule asks about; `(demand_p args)`
//! goes to the front of every rule of `p`. The demand is derived from each
//! place `p` is called, along a sideways order of the caller's body (tests
//! first, then literals over relations computed in full, then rewritten
//! relations whose adorned positions are bound): the caller's own demand
//! (when it is rewritten too) and the positive literals placed before the
//! call, plus the `distinct`s and the negative literals over relations that
//! no rewritten relation feeds, once bound (`(not (distinct ?b0 0))` keeps
//! only `?b0 = 0`).
//!
//! Why it is exact: a rule's instance can fire only when every body literal
//! holds, so restricting a called relation to the tuples asked for by
//! instances whose earlier literals hold changes no head that can be derived.
//! Adornments only shrink, to the positions bound at every call, until they
//! are stable; a relation left with none is not rewritten. Negative literals
//! copied into demand rules never reach a rewritten relation, and the result
//! must pass [`Game::new`]'s stratification check, or there is no rewrite.
//! Relations given by facts alone are left alone (they cost nothing), and so
//! are static relations unless [`Scope::All`] asks for them: static relations
//! are computed once, and rewriting one makes it depend on the state.

use std::collections::{HashMap, HashSet};

use super::ast::{is_keyword_relation, Description, Literal, Relation, Rule, Term};
use super::graph::Phase;
use super::normal::Game;
use super::symbol::Sym;

/// Which relations the rewrite may give a demand relation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scope {
    /// Relations that depend on the state or the moves.
    Dynamic,
    /// Static relations too.
    All,
}

/// Per argument position of a rewritten relation: is it bound at every call?
type Adornments = HashMap<Relation, Vec<bool>>;

/// The game rewritten, and the relations that got a demand relation; `None`
/// when no relation qualifies or the result is not stratified.
pub fn rewrite(game: &Game, scope: Scope) -> Option<(Game, Vec<Relation>)> {
    // Every literal must be one the normal form leaves.
    if game.rules.iter().any(|r| {
        r.body
            .iter()
            .any(|l| !matches!(l, Literal::Pos(_) | Literal::Not(_) | Literal::Distinct(..)))
    }) {
        return None;
    }
    let derived: HashSet<Relation> = game
        .rules
        .iter()
        .filter(|r| !r.is_fact())
        .filter_map(|r| r.head.relation())
        .collect();
    let mut adorn: Adornments = game
        .relations
        .iter()
        .filter(|(rel, phase)| {
            rel.arity > 0
                && !is_keyword_relation(rel.name)
                && derived.contains(rel)
                && (scope == Scope::All || **phase != Phase::Static)
        })
        .map(|(rel, _)| (*rel, vec![true; rel.arity]))
        .collect();
    if let Some(done) = magic(game, adorn.clone()) {
        return Some(done);
    }
    // A demand can depend on the relation it restricts through a negative
    // call (mummymaze1p: `pick-one` asks `(not (some-horiz-component ?dir))`
    // with the answers of `movetoward`, which is defined through
    // `pick-one`): not stratified. Relations called negatively are then
    // computed in full, which breaks every such cycle.
    let negated: HashSet<Relation> = game
        .rules
        .iter()
        .flat_map(|r| &r.body)
        .filter_map(|l| match l {
            Literal::Not(t) => t.relation(),
            _ => None,
        })
        .collect();
    let before = adorn.len();
    adorn.retain(|rel, _| !negated.contains(rel));
    if adorn.len() == before {
        return None;
    }
    magic(game, adorn)
}

/// The rewrite of the relations in `adorn` (each adorned with every position
/// to start with); `None` when none is left or the result is not stratified.
fn magic(game: &Game, mut adorn: Adornments) -> Option<(Game, Vec<Relation>)> {
    shrink(game, &mut adorn);
    if adorn.is_empty() {
        return None;
    }
    let tainted = tainted(game, &adorn);
    let mut symbols = game.symbols.clone();
    let mut names: HashMap<Relation, Sym> = HashMap::new();
    let mut order: Vec<Relation> = adorn.keys().copied().collect();
    order.sort_by_key(|r| (game.symbols.name(r.name).to_string(), r.arity));
    for rel in &order {
        let name = symbols.fresh(&format!("demand_{}", game.symbols.name(rel.name)));
        names.insert(*rel, name);
    }
    let demands = Demands {
        adorn: &adorn,
        names: &names,
        tainted: &tainted,
    };
    let rules = demands.rules(game);
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
            arity: adorn[r].iter().filter(|b| **b).count(),
        })
        .collect();
    Some((rewritten, order))
}

/// Shrinks the adornments to the positions bound where each call is placed,
/// until they are stable (they only shrink, so this ends), and drops those
/// left with none.
fn shrink(game: &Game, adorn: &mut Adornments) {
    loop {
        let mut changed = false;
        for rule in &game.rules {
            let order = sideways(rule, adorn);
            let mut bound = head_bound(rule, adorn);
            for i in order {
                let (Literal::Pos(t) | Literal::Not(t)) = &rule.body[i] else {
                    continue;
                };
                if let Some(a) = t.relation().and_then(|r| adorn.get_mut(&r)) {
                    for (k, arg) in t.args().iter().enumerate() {
                        if a[k] && !covered(arg, &bound) {
                            a[k] = false;
                            changed = true;
                        }
                    }
                }
                if matches!(rule.body[i], Literal::Pos(_)) {
                    bound.extend(t.vars());
                }
            }
        }
        adorn.retain(|_, a| a.contains(&true));
        if !changed {
            break;
        }
    }
}

/// The relations a rewritten one feeds: negative literals over them stay out
/// of demand rules, which keeps the program stratified.
fn tainted(game: &Game, adorn: &Adornments) -> HashSet<Relation> {
    let mut tainted: HashSet<Relation> = adorn.keys().copied().collect();
    loop {
        let before = tainted.len();
        for rule in &game.rules {
            let Some(head) = rule.head.relation() else {
                continue;
            };
            let feeds = rule.body.iter().any(|l| match l {
                Literal::Pos(t) | Literal::Not(t) => {
                    t.relation().is_some_and(|r| tainted.contains(&r))
                }
                _ => false,
            });
            if feeds {
                tainted.insert(head);
            }
        }
        if tainted.len() == before {
            break;
        }
    }
    tainted
}

/// The demand relations of a rewrite, and what their rules may read.
struct Demands<'a> {
    adorn: &'a Adornments,
    names: &'a HashMap<Relation, Sym>,
    tainted: &'a HashSet<Relation>,
}

impl Demands<'_> {
    /// The demand atom of a call of a rewritten relation: its adorned
    /// arguments.
    fn demand(&self, t: &Term) -> Option<Term> {
        let rel = t.relation()?;
        let name = self.names.get(&rel)?;
        let args = t
            .args()
            .iter()
            .zip(&self.adorn[&rel])
            .filter(|(_, b)| **b)
            .map(|(a, _)| a.clone())
            .collect();
        Some(Term::Func(*name, args))
    }

    /// Every rule of `game` with its demand in front, after the demand rules
    /// of the calls in its body (each distinct one once).
    fn rules(&self, game: &Game) -> Vec<Rule> {
        let mut rules = Vec::with_capacity(game.rules.len() * 2);
        let mut seen_demands: HashSet<(Term, Vec<Literal>)> = HashSet::new();
        for rule in &game.rules {
            let own = self.demand(&rule.head);
            self.demand_rules(rule, &own, &mut seen_demands, &mut rules);
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
        rules
    }

    /// The demand rules of the calls in `rule`'s body, those not in `seen`
    /// yet, pushed to `out`.
    fn demand_rules(
        &self,
        rule: &Rule,
        own: &Option<Term>,
        seen: &mut HashSet<(Term, Vec<Literal>)>,
        out: &mut Vec<Rule>,
    ) {
        // What a call's demand rule keeps: the caller's demand, then the
        // literals placed before the call.
        let mut prefix: Vec<Literal> = own.iter().cloned().map(Literal::Pos).collect();
        for i in sideways(rule, self.adorn) {
            let l = &rule.body[i];
            let (Literal::Pos(t) | Literal::Not(t)) = l else {
                prefix.push(l.clone());
                continue;
            };
            if let Some(head) = self.demand(t) {
                let body = connected(&head, &prefix);
                if seen.insert((head.clone(), body.clone())) {
                    out.push(Rule {
                        head,
                        body,
                        pos: rule.pos,
                    });
                }
            }
            let keep = match l {
                Literal::Not(t) => t.relation().is_some_and(|r| !self.tainted.contains(&r)),
                _ => true,
            };
            if keep {
                prefix.push(l.clone());
            }
        }
    }
}

/// The literals of `body` linked to `head` through shared variables (and
/// those without variables). The others only say that some tuple exists
/// elsewhere; dropping them widens the demand, which stays exact, and spares
/// grounding their product with the rest (mummymaze1p: every pair of the
/// mummy's moves times every position of two pieces).
fn connected(head: &Term, body: &[Literal]) -> Vec<Literal> {
    let vars = |l: &Literal| -> Vec<Sym> {
        let mut out = Vec::new();
        l.for_each_var(&mut |v| out.push(v));
        out
    };
    let mut reach: HashSet<Sym> = head.vars().into_iter().collect();
    let mut keep: Vec<bool> = body.iter().map(|l| vars(l).is_empty()).collect();
    loop {
        let mut grew = false;
        for (k, l) in body.iter().enumerate() {
            let vs = vars(l);
            if !keep[k] && vs.iter().any(|v| reach.contains(v)) {
                keep[k] = true;
                reach.extend(vs);
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    body.iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(l, _)| l.clone())
        .collect()
}

/// Whether every variable of `t` is bound.
fn covered(t: &Term, bound: &HashSet<Sym>) -> bool {
    t.vars().iter().all(|v| bound.contains(v))
}

/// The variables a rewritten rule's demand binds: its head's adorned
/// arguments.
fn head_bound(rule: &Rule, adorn: &Adornments) -> HashSet<Sym> {
    let mut bound = HashSet::new();
    if let Some(a) = rule.head.relation().and_then(|r| adorn.get(&r)) {
        for (arg, b) in rule.head.args().iter().zip(a) {
            if *b {
                bound.extend(arg.vars());
            }
        }
    }
    bound
}

/// The order in which a rule's body passes bindings sideways: tests (every
/// variable bound) first, then literals over relations computed in full,
/// then rewritten relations whose adorned arguments are bound; when only
/// rewritten relations with unbound adorned arguments are left, the one with
/// the fewest unbound variables goes next (its adornment will shrink: to few
/// positions, rather than another's to its inputs alone, so that it is asked
/// about with what its caller knows, not with every answer of another
/// relation). Ties keep the body's order.
fn sideways(rule: &Rule, adorn: &Adornments) -> Vec<usize> {
    let mut bound = head_bound(rule, adorn);
    let mut left: Vec<usize> = (0..rule.body.len()).collect();
    let mut order = Vec::with_capacity(left.len());
    while !left.is_empty() {
        let rank = |i: usize| -> Option<u8> {
            match &rule.body[i] {
                Literal::Pos(t) if covered(t, &bound) => Some(0),
                Literal::Pos(t) => match t.relation().and_then(|r| adorn.get(&r)) {
                    None => Some(1),
                    Some(a) => t
                        .args()
                        .iter()
                        .zip(a)
                        .all(|(arg, b)| !b || covered(arg, &bound))
                        .then_some(2),
                },
                Literal::Not(t) => covered(t, &bound).then_some(0),
                Literal::Distinct(a, b) => (covered(a, &bound) && covered(b, &bound)).then_some(0),
                _ => None,
            }
        };
        // How many variables placing a stuck literal leaves unbound.
        let stuck = |i: &usize| -> Option<usize> {
            let Literal::Pos(t) = &rule.body[*i] else {
                return None;
            };
            adorn.get(&t.relation()?)?;
            Some(t.vars().iter().filter(|v| !bound.contains(v)).count())
        };
        let next = (0..left.len())
            .filter_map(|k| rank(left[k]).map(|r| (r, k)))
            .min()
            .map(|(_, k)| k)
            .or_else(|| {
                (0..left.len())
                    .filter_map(|k| stuck(&left[k]).map(|n| (n, k)))
                    .min()
                    .map(|(_, k)| k)
            });
        // Only unbound negations left: an unsafe rule, which the normal
        // form refuses; keep the body's order.
        let Some(k) = next else {
            order.append(&mut left);
            break;
        };
        let i = left.remove(k);
        if let Literal::Pos(t) = &rule.body[i] {
            bound.extend(t.vars());
        }
        order.push(i);
    }
    order
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{rewrite, Scope};
    use crate::gdl::{parse, Game};
    use crate::reasoner::{Prover, StateMachine};

    /// A chain that doubles at each level bottom-up and is asked about one
    /// tuple: `(p1 0)` needs `(p2 0 0)` only, as the `distinct` narrows it.
    pub(crate) const CHAIN: &str = "(role r) (init (step 1)) (bit 0) (bit 1)
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

    /// Walks every line of play of two games side by side, comparing states,
    /// terminal, goals and legal moves; returns how many states it saw.
    pub(crate) fn lockstep(game: Game, other: Game) -> usize {
        let a = Prover::try_new(game).unwrap();
        let b = Prover::try_new(other).unwrap();
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
        states
    }

    /// A static relation over a large grid, asked about only where a piece
    /// stands: `(toward ?x ?y ?d)` binds its first two arguments (the third
    /// is an answer), and its answer feeds the next call, so the demand of
    /// the second call comes from the first's answers.
    const GRID: &str = "(role r) (init (at 1 1)) (init (step 0))
        (n 0) (n 1) (n 2) (n 3) (n 4) (n 5) (n 6) (n 7)
        (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7)
        (<= (less ?a ?b) (succ ?a ?b))
        (<= (less ?a ?c) (succ ?a ?b) (less ?b ?c))
        (<= (toward ?x ?y up) (less ?x ?y))
        (<= (toward ?x ?y down) (less ?y ?x))
        (<= (toward ?x ?x stay) (n ?x))
        (<= (step2 ?x ?z) (true (at ?x ?y)) (toward ?x ?y ?d) (move ?x ?d ?z))
        (<= (move ?x up ?z) (succ ?x ?z))
        (<= (move ?x down ?z) (succ ?z ?x))
        (<= (move ?x stay ?x) (n ?x))
        (<= (legal r (go ?z)) (true (at ?x ?y)) (step2 ?x ?z))
        (<= (legal r (jump ?w)) (true (at ?x ?y)) (step2 ?x ?z) (toward ?z 4 ?d)
            (move ?z ?d ?w))
        (<= (next (at ?z ?z)) (does r (go ?z)))
        (<= (next (at ?w 3)) (does r (jump ?w)))
        (<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
        (<= terminal (true (step 3)))
        (<= (goal r 100) (true (at 3 3)))
        (<= (goal r 0) (not (true (at 3 3))))";

    #[test]
    fn static_relations_are_rewritten_only_when_asked() {
        let game = Game::new(parse(GRID, "grid.kif").unwrap()).unwrap();
        let names = |rels: Vec<crate::gdl::Relation>| -> Vec<String> {
            rels.iter()
                .map(|r| game.symbols.name(r.name).to_string())
                .collect()
        };
        let (_, dynamic) = rewrite(&game, Scope::Dynamic).expect("step2 qualifies");
        assert_eq!(names(dynamic), ["step2"]);
        let (magic, all) = rewrite(&game, Scope::All).expect("a rewrite");
        // `less` is called with both arguments bound, `toward` with two of
        // three, `move` with two; `n` and `succ` are facts.
        assert_eq!(names(all), ["less", "move", "step2", "toward"]);
        let toward = magic
            .small
            .iter()
            .find(|r| magic.symbols.name(r.name) == "demand_toward")
            .expect("toward's demand relation");
        assert_eq!(toward.arity, 2);
        assert!(lockstep(game, magic) > 4);
    }

    #[test]
    fn demanded_relations_give_the_same_game() {
        let game = Game::new(parse(CHAIN, "chain.kif").unwrap()).unwrap();
        let (magic, rels) = rewrite(&game, Scope::Dynamic).expect("a rewrite");
        let names: Vec<&str> = rels.iter().map(|r| game.symbols.name(r.name)).collect();
        assert_eq!(names, ["p1", "p2", "p3"]);
        assert!(lockstep(game, magic) > 4);
    }

    #[test]
    fn a_relation_called_with_a_free_argument_is_left_alone() {
        let text = CHAIN.replace("(<= (legal r go) (p1 0))", "(<= (legal r (go ?x)) (p1 ?x))");
        let game = Game::new(parse(&text, "chain.kif").unwrap()).unwrap();
        let (_, rels) = rewrite(&game, Scope::Dynamic).expect("p2 and p3 still qualify");
        let names: Vec<&str> = rels.iter().map(|r| game.symbols.name(r.name)).collect();
        // p1 is asked with ?x free, so p2's calls (?a from p1's head) are
        // bound only by (bit ?a): still bound.
        assert_eq!(names, ["p2", "p3"]);
    }
}
