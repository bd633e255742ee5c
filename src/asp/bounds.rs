//! Counter bounds: goal 100 out of reach because a score counter cannot climb
//! far enough before the game's clock ends it, read off the rules.
//!
//! hunterbig scores `(captures ?n)`: goal 100 needs `(captures 48)`, the
//! counter climbs by at most one `succ` a move (one rule keeps it, one adds
//! one), and the game ends when `(step ?n)`, which climbs by exactly one a
//! move, reaches 49. A knight that moves onto an empty square has then lost
//! goal 100 at once, though the game goes on for dozens of moves; the
//! forward search ([`super::forward`]) prunes such states and counts them as lost in its
//! fail-first order, which turns the game into the knight's tour it is.
//!
//! The analysis is exact for the shapes it accepts and gives up on anything
//! else: every `next` rule of the score must keep it or move it one step along
//! a static successor relation of facts, every `next` rule of the clock must
//! move it one step unconditionally, and a `terminal` rule must read the
//! clock's value alone. Under those conditions a state it rules out has no
//! line to goal 100, so the pruning is sound in every phase of the search.

use std::collections::HashMap;

use crate::gdl::{kw, Game, Literal, Relation, Rule, Sym, Term};

/// A fluent `(f ?v)` whose value moves along a chain of static facts `(s ?a ?b)`.
#[derive(Debug)]
struct Counter {
    fluent: Sym,
    /// Each value's successor (`s` is functional).
    next: HashMap<Term, Term>,
}

impl Counter {
    /// The number of steps from `a` to `b` along the chain, if `b` follows `a`.
    fn distance(&self, a: &Term, b: &Term) -> Option<usize> {
        let mut at = a;
        for d in 0..=self.next.len() {
            if at == b {
                return Some(d);
            }
            at = self.next.get(at)?;
        }
        None
    }

    /// The counter's values in a state's fluents.
    fn values<'a>(&self, fluents: &'a [Term]) -> impl Iterator<Item = &'a Term> + 'a {
        let f = self.fluent;
        fluents.iter().filter_map(move |t| match t {
            Term::Func(name, args) if *name == f && args.len() == 1 => Some(&args[0]),
            _ => None,
        })
    }
}

/// A score counter that must reach one of `targets` for goal 100, and a clock
/// that ends the game when it reaches `end`.
#[derive(Debug)]
pub struct Bound {
    score: Counter,
    targets: Vec<Term>,
    clock: Counter,
    end: Term,
}

impl Bound {
    /// Whether a state (its fluents) can no longer reach goal 100: its score
    /// is further from every target than its clock from the end.
    pub fn rules_out(&self, fluents: &[Term]) -> bool {
        let Some(left) = self
            .clock
            .values(fluents)
            .filter_map(|v| self.clock.distance(v, &self.end))
            .min()
        else {
            return false;
        };
        let needed = self
            .score
            .values(fluents)
            .flat_map(|v| {
                self.targets
                    .iter()
                    .filter_map(|t| self.score.distance(v, t))
            })
            .min();
        needed.is_none_or(|n| n > left)
    }

    /// The score and clock fluents' names, for progress output.
    pub fn describe(&self, game: &Game) -> String {
        let targets: Vec<&str> = self
            .targets
            .iter()
            .filter_map(|t| t.name().map(|n| game.symbols.name(n)))
            .collect();
        format!(
            "goal 100 needs ({} {}) before ({} {}) ends the game, one step a move at most",
            game.symbols.name(self.score.fluent),
            targets.join("|"),
            game.symbols.name(self.clock.fluent),
            self.end.name().map_or("?", |n| game.symbols.name(n)),
        )
    }
}

/// The game's counter bound, if its rules have the shapes described above.
pub fn find(game: &Game) -> Option<Bound> {
    let role = game.roles.first()?;
    let hundred = Term::Const(game.symbols.get("100")?);
    let facts = game.fact_tables();
    // The score: a fluent in a `true` literal of every goal-100 rule, its
    // value fixed by a constant or by a static fact.
    let mut per_rule: Vec<Vec<(Sym, Vec<Term>)>> = Vec::new();
    for rule in &game.rules {
        let Some((who, value)) = goal_head(rule) else {
            continue;
        };
        if !(who == role || matches!(who, Term::Var(_))) {
            continue;
        }
        let mut binding: HashMap<Sym, Term> = HashMap::new();
        match value {
            Term::Var(v) => {
                binding.insert(*v, hundred.clone());
            }
            c if *c == hundred => {}
            _ => continue,
        }
        per_rule.push(needed_values(rule, &binding, &facts));
    }
    let score = per_rule.first()?.iter().find_map(|(fluent, _)| {
        let mut targets = Vec::new();
        for rule in &per_rule {
            let (_, values) = rule.iter().find(|(f, _)| f == fluent)?;
            targets.extend(values.iter().cloned());
        }
        targets.sort();
        targets.dedup();
        Some((counter(game, *fluent, &facts, false)?, targets))
    });
    let (score, targets) = score?;
    let (clock, end) = clock(game, &facts, Some(score.fluent))?;
    Some(Bound {
        score,
        targets,
        clock,
        end,
    })
}

/// The clock: a `terminal` rule that reads one fluent's value and nothing
/// else (not `exclude`'s), the fluent climbing by one every move; the counter
/// and the value that ends the game.
fn clock(
    game: &Game,
    facts: &HashMap<Relation, Vec<Vec<Term>>>,
    exclude: Option<Sym>,
) -> Option<(Counter, Term)> {
    game.rules.iter().find_map(|r| {
        if r.head.name() != Some(kw::TERMINAL) {
            return None;
        }
        let [Literal::Pos(t)] = r.body.as_slice() else {
            return None;
        };
        let f = true_arg(t)?;
        let Term::Func(name, args) = f else {
            return None;
        };
        let [end] = args.as_slice() else { return None };
        if !end.is_ground() || Some(*name) == exclude {
            return None;
        }
        Some((counter(game, *name, facts, true)?, end.clone()))
    })
}

/// The clock's fluent, when the game has one: a fluent that moves exactly one
/// step along a static successor relation every move and that a `terminal`
/// rule reads alone (`(step ?n)`). Its value only counts the moves made.
pub fn clock_fluent(game: &Game) -> Option<Sym> {
    clock(game, &game.fact_tables(), None).map(|(c, _)| c.fluent)
}

/// The most moves any play can last, when a clock ends the game: its one
/// initial value is that many steps from the value a `terminal` rule waits
/// for (ruleDepthExponential: `(step 1)` to `(step 20)`, 19 moves). The full
/// worker grounds this horizon on its way up rather than jumping past it; it
/// is a schedule, not a proof (clingo proves "no play lasts beyond" itself).
pub fn game_length(game: &Game) -> Option<usize> {
    let facts = game.fact_tables();
    let (clock, end) = clock(game, &facts, None)?;
    let mut start = None;
    for r in &game.rules {
        let Term::Func(kwd, head) = &r.head else {
            continue;
        };
        let [Term::Func(f, args)] = head.as_slice() else {
            continue;
        };
        if *kwd != kw::INIT || *f != clock.fluent {
            continue;
        }
        let [value] = args.as_slice() else {
            return None;
        };
        if !r.body.is_empty() || !value.is_ground() || start.replace(value.clone()).is_some() {
            return None;
        }
    }
    clock.distance(&start?, &end)
}

/// `(goal R V)` heads: the role and the value.
fn goal_head(rule: &Rule) -> Option<(&Term, &Term)> {
    match &rule.head {
        Term::Func(name, args) if *name == kw::GOAL && args.len() == 2 => {
            Some((&args[0], &args[1]))
        }
        _ => None,
    }
}

/// The argument of `(true F)`.
fn true_arg(t: &Term) -> Option<&Term> {
    match t {
        Term::Func(name, args) if *name == kw::TRUE && args.len() == 1 => Some(&args[0]),
        _ => None,
    }
}

/// In a goal-100 rule (its value bound in `binding`): the `(true (f x))`
/// literals with `x` a constant, or a variable that a static fact literal
/// fixes given the binding; each fluent with the values of `x`.
fn needed_values(
    rule: &Rule,
    binding: &HashMap<Sym, Term>,
    facts: &HashMap<Relation, Vec<Vec<Term>>>,
) -> Vec<(Sym, Vec<Term>)> {
    let mut out = Vec::new();
    for l in &rule.body {
        let Literal::Pos(t) = l else { continue };
        let Some(Term::Func(f, args)) = true_arg(t) else {
            continue;
        };
        let [x] = args.as_slice() else { continue };
        if x.is_ground() {
            out.push((*f, vec![x.clone()]));
            continue;
        }
        if !matches!(x, Term::Var(_)) {
            continue;
        }
        // A fact literal holding `x` once, every other argument bound.
        let values = rule.body.iter().find_map(|l| {
            let Literal::Pos(s) = l else { return None };
            let rows = facts.get(&s.relation()?)?;
            let i = s.args().iter().position(|a| a == x)?;
            if s.args().iter().filter(|a| *a == x).count() != 1 {
                return None;
            }
            let fixed: Vec<(usize, Term)> = s
                .args()
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(j, a)| match a {
                    Term::Var(w) => binding.get(w).map(|b| (j, b.clone())),
                    c => c.is_ground().then(|| (j, c.clone())),
                })
                .collect::<Option<_>>()?;
            Some(
                rows.iter()
                    .filter(|row| fixed.iter().all(|(j, b)| row[*j] == *b))
                    .map(|row| row[i].clone())
                    .collect(),
            )
        });
        if let Some(values) = values {
            out.push((*f, values));
        }
    }
    out
}

/// `fluent` as a counter: an `init` value, and every `next` rule of it reads
/// `(true (fluent ?old))` and gives `?old` (unless `strict`) or `?new` with a
/// static fact literal `(s ?old ?new)`, the same functional `s` throughout.
/// A `strict` counter (the clock) has only rules of the second kind, with
/// nothing else in their bodies: it moves one step every move.
fn counter(
    game: &Game,
    fluent: Sym,
    facts: &HashMap<Relation, Vec<Vec<Term>>>,
    strict: bool,
) -> Option<Counter> {
    let of = |t: &Term| -> Option<Term> {
        match t {
            Term::Func(f, args) if *f == fluent && args.len() == 1 => Some(args[0].clone()),
            _ => None,
        }
    };
    let mut init = false;
    let mut succ: Option<Relation> = None;
    for r in &game.rules {
        let Term::Func(kwd, head) = &r.head else {
            continue;
        };
        let [f] = head.as_slice() else { continue };
        let Some(value) = of(f) else { continue };
        if *kwd == kw::INIT {
            init = true;
            continue;
        }
        if *kwd != kw::NEXT {
            continue;
        }
        let old = r.body.iter().find_map(|l| match l {
            Literal::Pos(t) => true_arg(t).and_then(of),
            _ => None,
        })?;
        if !matches!(old, Term::Var(_)) {
            return None;
        }
        if value == old && !strict {
            continue;
        }
        let step = r.body.iter().find_map(|l| match l {
            Literal::Pos(t) if t.args() == [old.clone(), value.clone()] => t.relation(),
            _ => None,
        })?;
        if !facts.contains_key(&step) || succ.is_some_and(|s| s != step) {
            return None;
        }
        if strict && r.body.len() != 2 {
            return None;
        }
        succ = Some(step);
    }
    if !init {
        return None;
    }
    let mut next = HashMap::new();
    for row in facts.get(&succ?)? {
        if next.insert(row[0].clone(), row[1].clone()).is_some() {
            return None;
        }
    }
    Some(Counter { fluent, next })
}

#[cfg(test)]
mod tests {
    use super::find;
    use crate::gdl::{parse, Game, Term};

    const HUNT: &str = "(role r) (init (score 0)) (init (step 1)) (init (at a))
        (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4)
        (points 2 100) (points 1 50) (points 0 0)
        (<= (legal r (go ?x)) (spot ?x))
        (spot a) (spot b)
        (<= (next (at ?x)) (does r (go ?x)))
        (<= (next (score ?n)) (true (score ?o)) (does r (go b)) (succ ?o ?n))
        (<= (next (score ?o)) (true (score ?o)) (does r (go a)))
        (<= (next (step ?n)) (true (step ?o)) (succ ?o ?n))
        (<= terminal (true (step 3)))
        (<= (goal r ?g) (true (score ?s)) (points ?s ?g))";

    fn fluents(game: &Game, text: &str) -> Vec<Term> {
        crate::gdl::parser::parse_ground_terms(&format!("({text})"), &game.symbols).unwrap()
    }

    #[test]
    fn a_clock_bounds_the_length_of_every_play() {
        let game = Game::new(parse(HUNT, "hunt.kif").unwrap()).unwrap();
        assert_eq!(super::game_length(&game), Some(2));
        // Two starting values: no single count.
        let two = HUNT.replace("(init (step 1))", "(init (step 1)) (init (step 0))");
        let game = Game::new(parse(&two, "hunt.kif").unwrap()).unwrap();
        assert_eq!(super::game_length(&game), None);
        // An end the clock never reaches.
        let never = HUNT.replace("(true (step 3))", "(true (step 9))");
        let game = Game::new(parse(&never, "hunt.kif").unwrap()).unwrap();
        assert_eq!(super::game_length(&game), None);
    }

    #[test]
    fn a_score_that_cannot_catch_up_with_the_clock_rules_100_out() {
        let game = Game::new(parse(HUNT, "hunt.kif").unwrap()).unwrap();
        let bound = find(&game).expect("a bound");
        // Two moves left, two points needed.
        assert!(!bound.rules_out(&fluents(&game, "(score 0) (step 1)")));
        // One move left, two points needed.
        assert!(bound.rules_out(&fluents(&game, "(score 0) (step 2)")));
        assert!(!bound.rules_out(&fluents(&game, "(score 1) (step 2)")));
        // A clock that may stand still is no clock.
        let lazy = HUNT.replace(
            "(<= terminal",
            "(<= (next (step ?o)) (true (step ?o)) (does r (go a))) (<= terminal",
        );
        let game = Game::new(parse(&lazy, "hunt.kif").unwrap()).unwrap();
        assert!(find(&game).is_none());
        // A score that may jump by two is no counter.
        let jumpy = HUNT.replace(
            "(<= terminal",
            "(<= (next (score 2)) (true (score ?o)) (does r (go a)) (succ ?o ?p)) (<= terminal",
        );
        let game = Game::new(parse(&jumpy, "hunt.kif").unwrap()).unwrap();
        assert!(find(&game).is_none());
    }
}
