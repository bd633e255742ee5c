//! Substitutions over terms, as [`super::split`] unfolds static relations:
//! variables bound to terms, applied and extended by unification.

use std::collections::HashMap;

use super::ast::{Literal, Term};
use super::normal::map_literal;
use super::symbol::Sym;

/// `t` with the bindings of `s` applied, through chains of variables.
pub(super) fn resolve(t: &Term, s: &HashMap<Sym, Term>) -> Term {
    match t {
        Term::Var(v) => match s.get(v) {
            Some(b) => resolve(b, s),
            None => t.clone(),
        },
        Term::Const(_) => t.clone(),
        Term::Func(f, args) => Term::Func(*f, args.iter().map(|a| resolve(a, s)).collect()),
    }
}

/// [`resolve`] over every term of a literal.
pub(super) fn apply_lit(l: &Literal, s: &HashMap<Sym, Term>) -> Literal {
    map_literal(l, &|t| resolve(t, s))
}

/// Whether `v` occurs in `t` under `s` (the occurs check).
fn occurs(v: Sym, t: &Term, s: &HashMap<Sym, Term>) -> bool {
    match resolve(t, s) {
        Term::Var(w) => w == v,
        Term::Const(_) => false,
        Term::Func(_, args) => args.iter().any(|a| occurs(v, a, s)),
    }
}

/// Extends `s` to a most general unifier of `a` and `b`; false when there is
/// none (`s` may then hold some of the bindings tried).
pub(super) fn unify(a: &Term, b: &Term, s: &mut HashMap<Sym, Term>) -> bool {
    let (a, b) = (resolve(a, s), resolve(b, s));
    match (&a, &b) {
        (Term::Var(x), Term::Var(y)) if x == y => true,
        (Term::Var(v), t) | (t, Term::Var(v)) => {
            if occurs(*v, t, s) {
                return false;
            }
            s.insert(*v, t.clone());
            true
        }
        (Term::Const(x), Term::Const(y)) => x == y,
        (Term::Func(f, xs), Term::Func(g, ys)) => {
            f == g && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| unify(x, y, s))
        }
        _ => false,
    }
}
