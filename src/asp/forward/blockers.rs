//! Blockers: the fluents whose presence rules goal 100 out, read off the rules.
//!
//! In fill-in puzzles (sudoku, futoshiki, hidato) goal 100 is "no blank cell
//! left": `(<= (goal robot 100) (not open))` with `(<= open (true (cell ?i ?j
//! b)))`. Every blank cell is then a task the plan must finish, and a forward
//! search can reason like a constraint solver: a state with a blank cell that
//! no legal move fills is a dead end, and only the moves filling the blank with
//! the fewest fillers need to be tried (most constrained first). This module
//! finds such fluent patterns in any game by following the goal-100 rules
//! through `not` and positive derived literals to `true` literals; the
//! [`super`] search uses them.
//!
//! The analysis over-approximates on purpose (a static literal beside the `true`
//! is ignored, a repeated variable matches anything): the search that uses the
//! patterns is a heuristic phase whose failures prove nothing.

use std::cell::Cell;
use std::collections::HashMap;

use crate::gdl::{kw, Game, Literal, Phase, Sym, Term};

/// How deep the analysis follows derived relations.
const MAX_DEPTH: usize = 8;

/// How many rule bodies the analysis may read before it gives up (and finds
/// nothing). The goal's rules fan out into their callees': sudoku's goal
/// rewritten on demand reaches 27 units of 9 cells of 9 ways each.
const MAX_BODIES: usize = 100_000;

/// The variable every pattern uses for "anything".
const ANY: Sym = Sym(u32::MAX);

/// Fluent patterns (variables match anything) such that no state holding a
/// fluent matching one has goal 100 for the game's first role. Empty when the
/// rules say nothing of the kind (or the game has no role).
pub fn blockers(game: &Game) -> Vec<Term> {
    let (Some(role), Some(hundred)) = (game.roles.first(), game.symbols.get("100")) else {
        return Vec::new();
    };
    let goal = Term::Func(kw::GOAL, vec![role.clone(), Term::Const(hundred)]);
    let analysis = Analysis {
        game,
        bodies: Cell::new(0),
    };
    let mut out = analysis.refuted_by(&goal, 0);
    if analysis.bodies.get() > MAX_BODIES {
        return Vec::new();
    }
    out.sort();
    out.dedup();
    out
}

/// A pattern as KIF, `?_` for its variables.
pub fn describe(pattern: &Term, symbols: &crate::gdl::Symbols) -> String {
    match pattern {
        Term::Var(_) => "?_".to_string(),
        Term::Const(c) => symbols.name(*c).to_string(),
        Term::Func(f, args) => {
            let args: Vec<String> = args.iter().map(|a| describe(a, symbols)).collect();
            format!("({} {})", symbols.name(*f), args.join(" "))
        }
    }
}

/// Whether the ground fluent `f` matches `pattern` (its variables match anything).
pub fn matches(pattern: &Term, f: &Term) -> bool {
    match (pattern, f) {
        (Term::Var(_), _) => true,
        (Term::Const(a), Term::Const(b)) => a == b,
        (Term::Func(a, xs), Term::Func(b, ys)) => {
            a == b && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| matches(x, y))
        }
        _ => false,
    }
}

struct Analysis<'a> {
    game: &'a Game,
    /// Rule bodies read so far.
    bodies: Cell<usize>,
}

impl Analysis<'_> {
    /// The rules whose head matches `call`, with the head's variables bound to
    /// the parts of `call` they meet.
    fn rules_for(&self, call: &Term) -> Vec<(HashMap<Sym, Term>, &[Literal])> {
        let mut out = Vec::new();
        if self.bodies.get() > MAX_BODIES {
            return out;
        }
        for rule in &self.game.rules {
            let mut binding = HashMap::new();
            if bind(&rule.head, call, &mut binding) {
                self.bodies.set(self.bodies.get() + 1);
                out.push((binding, rule.body.as_slice()));
            }
        }
        out
    }

    fn derived(&self, atom: &Term) -> bool {
        match atom.relation() {
            Some(rel) if rel.name != kw::TRUE && rel.name != kw::DOES => {
                self.game.phase(rel) != Phase::Static
            }
            _ => false,
        }
    }

    /// Patterns whose presence makes the atom `call` false: those that refute
    /// a literal of every rule for it.
    fn refuted_by(&self, call: &Term, depth: usize) -> Vec<Term> {
        if depth > MAX_DEPTH {
            return Vec::new();
        }
        let mut common: Option<Vec<Term>> = None;
        for (binding, body) in self.rules_for(call) {
            let mut here = Vec::new();
            for lit in body {
                match lit {
                    Literal::Not(a) => here.extend(self.implying(&subst(a, &binding), depth + 1)),
                    Literal::Pos(a) if self.derived(a) => {
                        here.extend(self.refuted_by(&subst(a, &binding), depth + 1))
                    }
                    _ => {}
                }
            }
            here.sort();
            here.dedup();
            common = Some(match common {
                None => here,
                Some(c) => c.into_iter().filter(|p| here.contains(p)).collect(),
            });
        }
        common.unwrap_or_default()
    }

    /// Patterns whose presence makes the atom `call` true: a `true` literal
    /// itself, or a rule for it whose only non-static literal implies it.
    fn implying(&self, call: &Term, depth: usize) -> Vec<Term> {
        if depth > MAX_DEPTH {
            return Vec::new();
        }
        if call.name() == Some(kw::TRUE) {
            return call.args().first().map(wildcards).into_iter().collect();
        }
        if !self.derived(call) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (binding, body) in self.rules_for(call) {
            let mut dynamic = body.iter().filter(|l| match l {
                Literal::Pos(a) | Literal::Not(a) => {
                    a.name() == Some(kw::TRUE) || a.name() == Some(kw::DOES) || self.derived(a)
                }
                _ => false,
            });
            if let (Some(Literal::Pos(a)), None) = (dynamic.next(), dynamic.next()) {
                out.extend(self.implying(&subst(a, &binding), depth + 1));
            }
        }
        out
    }
}

/// Binds the variables of `head` so that it matches `call` (a variable of
/// `call` matches anything); false on a clash.
fn bind(head: &Term, call: &Term, binding: &mut HashMap<Sym, Term>) -> bool {
    match (head, call) {
        (Term::Var(v), _) => match binding.get(v) {
            Some(t) => t == call || matches!(call, Term::Var(_)) || matches!(t, Term::Var(_)),
            None => {
                binding.insert(*v, call.clone());
                true
            }
        },
        (_, Term::Var(_)) => true,
        (Term::Const(a), Term::Const(b)) => a == b,
        (Term::Func(a, xs), Term::Func(b, ys)) => {
            a == b && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| bind(x, y, binding))
        }
        _ => false,
    }
}

/// `t` with its bound variables replaced; the others become [`ANY`].
fn subst(t: &Term, binding: &HashMap<Sym, Term>) -> Term {
    match t {
        Term::Var(v) => binding.get(v).cloned().unwrap_or(Term::Var(ANY)),
        Term::Const(_) => t.clone(),
        Term::Func(f, args) => Term::Func(*f, args.iter().map(|a| subst(a, binding)).collect()),
    }
}

/// `t` with every variable made [`ANY`], so equal patterns compare equal.
fn wildcards(t: &Term) -> Term {
    match t {
        Term::Var(_) => Term::Var(ANY),
        Term::Const(_) => t.clone(),
        Term::Func(f, args) => Term::Func(*f, args.iter().map(wildcards).collect()),
    }
}
