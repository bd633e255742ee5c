//! Factored moves: the roles whose moves are chosen argument by argument
//! (see [`Factor`]), found before [`super::translate`] writes their rules.

use std::collections::BTreeMap;

use crate::gdl::{kw, Game, Literal, Phase, Relation, Rule, Sym, Term};

/// A role whose moves are all `(f a1 .. an)` with each argument ranging over a
/// domain of its own (bandl10's `(set ?A1 .. ?A10)`, 3^10 = 59,049 moves a
/// step): the program chooses `does_arg(R,I,V,T)`, one value per argument, in
/// place of `does(R,M,T)` among the product, and reads `(does R (f t1 .. tn))`
/// as the conjunction of `does_arg(R,I,ti,T)` (leaving out the arguments that
/// are variables the rule uses nowhere else). The ground program then grows by
/// the sum of the domains a step, not by their product.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Factor {
    /// The role as ASP text.
    pub role: String,
    /// The moves' function symbol and arity, to rebuild a plan's moves.
    pub functor: Sym,
    pub arity: usize,
}

/// The fewest moves a step (the product of the argument domains) for which a
/// role's moves are factored: below it the plain choice is as fast and the
/// printed program reads more plainly.
pub const FACTOR_MIN_MOVES: usize = 1000;

/// The roles whose moves can be factored (see [`Factor`]), with the moves'
/// functor and arity: the role's one `legal` rule is `(legal R (f ?V1 ..
/// ?Vn))` with distinct variables and a body of static literals over one of
/// them each, its domains (relations of facts only) multiply to at least
/// [`FACTOR_MIN_MOVES`], and every `does` of the role in a rule the program
/// keeps is a positive `(does R (f t1 .. tn))`; `legal` is read by no rule.
pub(super) fn factorable(game: &Game, relevant: &[bool]) -> BTreeMap<Term, (Sym, usize)> {
    let mut out = BTreeMap::new();
    let kept = || {
        game.rules
            .iter()
            .zip(relevant)
            .filter(|(_, &keep)| keep)
            .map(|(r, _)| r)
    };
    let reads_legal = kept().any(|r| {
        r.body.iter().any(|l| {
            matches!(l, Literal::Pos(t) | Literal::Not(t) if t.relation() == Some(Relation { name: kw::LEGAL, arity: 2 }))
        })
    });
    if reads_legal {
        return out;
    }
    let facts = game.fact_tables();
    'roles: for role in &game.roles {
        let legal: Vec<&Rule> = kept()
            .filter(|r| {
                r.head.name() == Some(kw::LEGAL)
                    && r.head.args().len() == 2
                    && (r.head.args()[0] == *role || matches!(r.head.args()[0], Term::Var(_)))
            })
            .collect();
        let [rule] = legal.as_slice() else { continue };
        let Term::Func(functor, params) = &rule.head.args()[1] else {
            continue;
        };
        if params.len() < 2 || rule.head.args()[0] != *role {
            continue;
        }
        let mut vars: Vec<Sym> = Vec::new();
        for p in params {
            match p {
                Term::Var(v) if !vars.contains(v) => vars.push(*v),
                _ => continue 'roles,
            }
        }
        let mut domain = vec![0usize; vars.len()];
        for l in &rule.body {
            let Literal::Pos(t) = l else { continue 'roles };
            let Some(rel) = t.relation() else {
                continue 'roles;
            };
            let (lv, n) = match (t.vars().as_slice(), facts.get(&rel).map(Vec::len)) {
                (&[v], Some(n)) if game.phase(rel) == Phase::Static => (v, n),
                _ => continue 'roles,
            };
            let Some(i) = vars.iter().position(|&v| v == lv) else {
                continue 'roles;
            };
            domain[i] = if domain[i] == 0 { n } else { domain[i].min(n) };
        }
        let moves = domain
            .iter()
            .try_fold(1usize, |acc, &n| (n > 0).then(|| acc.saturating_mul(n)));
        if moves.is_none_or(|m| m < FACTOR_MIN_MOVES) {
            continue;
        }
        let does_ok = kept().all(|r| {
            r.body.iter().all(|l| match l {
                Literal::Pos(t) | Literal::Not(t) if t.name() == Some(kw::DOES) => {
                    let [who, mv] = t.args() else { return false };
                    if who != role && !matches!(who, Term::Var(_)) {
                        return true;
                    }
                    matches!(l, Literal::Pos(_))
                        && who == role
                        && mv.name() == Some(*functor)
                        && mv.args().len() == params.len()
                }
                _ => true,
            })
        });
        if does_ok {
            out.insert(role.clone(), (*functor, params.len()));
        }
    }
    out
}
