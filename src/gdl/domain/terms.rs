//! Sets of terms in factored form, as the domain inference of
//! [`super`] keeps them: constants listed, function terms by functor and
//! arity with one such set per argument. A set of moves
//! `(troops ?a ?b ?c)` over eleven numbers each is three small sets, not 1331
//! terms: no product is ever built until a domain is listed
//! ([`Terms::list`]). The price is that arguments lose their correlation
//! (`(cell 1 1 x)` and `(cell 2 2 o)` also stand for `(cell 1 2 o)`): the
//! sets over-approximate, which only makes a domain larger.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::gdl::ast::Term;
use crate::gdl::symbol::Sym;

/// Terms nested deeper than this make a set unbounded: a rule that builds
/// ever deeper terms (`(<= (num (s ?x)) (num ?x))`) never reaches a fixpoint.
pub const MAX_DEPTH: usize = 32;

/// A set of ground terms, or every term (`any`: unbounded).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Terms {
    pub any: bool,
    consts: BTreeSet<Sym>,
    funcs: BTreeMap<(Sym, usize), Vec<Terms>>,
}

impl Terms {
    pub fn any() -> Terms {
        Terms {
            any: true,
            ..Terms::default()
        }
    }

    pub fn of(ts: impl IntoIterator<Item = Term>) -> Terms {
        let mut out = Terms::default();
        for t in ts {
            out.insert(&t, 0);
        }
        out
    }

    fn insert(&mut self, t: &Term, depth: usize) -> bool {
        if self.any {
            return false;
        }
        if depth > MAX_DEPTH {
            *self = Terms::any();
            return true;
        }
        match t {
            Term::Var(_) => {
                *self = Terms::any();
                true
            }
            Term::Const(c) => self.consts.insert(*c),
            Term::Func(f, args) => {
                let mut changed = false;
                let comps = self.funcs.entry((*f, args.len())).or_insert_with(|| {
                    changed = true;
                    vec![Terms::default(); args.len()]
                });
                for (c, a) in comps.iter_mut().zip(args) {
                    changed |= c.insert(a, depth + 1);
                }
                changed
            }
        }
    }

    /// Adds every term of `other`; whether the set grew.
    pub fn union(&mut self, other: &Terms) -> bool {
        self.union_at(other, 0)
    }

    fn union_at(&mut self, other: &Terms, depth: usize) -> bool {
        if self.any {
            return false;
        }
        if other.any || depth > MAX_DEPTH {
            *self = Terms::any();
            return true;
        }
        let mut changed = false;
        for c in &other.consts {
            changed |= self.consts.insert(*c);
        }
        for (key, theirs) in &other.funcs {
            let mine = self.funcs.entry(*key).or_insert_with(|| {
                changed = true;
                vec![Terms::default(); theirs.len()]
            });
            for (m, t) in mine.iter_mut().zip(theirs) {
                changed |= m.union_at(t, depth + 1);
            }
        }
        changed
    }

    pub fn intersect(&self, other: &Terms) -> Terms {
        if self.any {
            return other.clone();
        }
        if other.any {
            return self.clone();
        }
        let funcs = self
            .funcs
            .iter()
            .filter_map(|(key, mine)| {
                let theirs = other.funcs.get(key)?;
                let comps: Vec<Terms> = mine
                    .iter()
                    .zip(theirs)
                    .map(|(m, t)| m.intersect(t))
                    .collect();
                // A function term needs a term in every argument.
                comps.iter().all(|c| !c.is_empty()).then_some((*key, comps))
            })
            .collect();
        Terms {
            any: false,
            consts: self.consts.intersection(&other.consts).copied().collect(),
            funcs,
        }
    }

    /// Whether no term of the set, at any depth, is unbounded: finitely many
    /// terms, however many.
    pub fn bounded(&self) -> bool {
        !self.any && self.funcs.values().all(|cs| cs.iter().all(Terms::bounded))
    }

    pub fn is_empty(&self) -> bool {
        !self.any && self.consts.is_empty() && self.funcs.is_empty()
    }

    /// The terms `p` stands for when its variables range over `vars`; `None`
    /// when a variable has no domain there.
    pub fn instantiate(p: &Term, vars: &HashMap<Sym, Terms>) -> Option<Terms> {
        Some(match p {
            Term::Var(v) => vars.get(v)?.clone(),
            Term::Const(c) => Terms {
                consts: BTreeSet::from([*c]),
                ..Terms::default()
            },
            Term::Func(f, args) => {
                let comps = args
                    .iter()
                    .map(|a| Terms::instantiate(a, vars))
                    .collect::<Option<Vec<_>>>()?;
                Terms {
                    funcs: BTreeMap::from([((*f, args.len()), comps)]),
                    ..Terms::default()
                }
            }
        })
    }

    /// What each variable of pattern `p` takes in the terms of `self` that
    /// `p` may match (intersected over its occurrences).
    pub fn project(&self, p: &Term, out: &mut HashMap<Sym, Terms>) {
        match p {
            Term::Var(v) => {
                let dom = match out.remove(v) {
                    Some(d) => d.intersect(self),
                    None => self.clone(),
                };
                out.insert(*v, dom);
            }
            Term::Const(_) => {}
            Term::Func(f, args) => {
                let empty = Terms::default();
                let any = Terms::any();
                for (i, a) in args.iter().enumerate() {
                    let comp = if self.any {
                        &any
                    } else {
                        self.funcs.get(&(*f, args.len())).map_or(&empty, |c| &c[i])
                    };
                    comp.project(a, out);
                }
            }
        }
    }

    /// The terms, listed (sorted); `None` when unbounded or more than `max`.
    pub fn list(&self, max: usize) -> Option<Vec<Term>> {
        if self.any {
            return None;
        }
        let mut out: Vec<Term> = self.consts.iter().map(|&c| Term::Const(c)).collect();
        for ((f, _), comps) in &self.funcs {
            let lists = comps
                .iter()
                .map(|c| c.list(max))
                .collect::<Option<Vec<_>>>()?;
            let size = lists
                .iter()
                .try_fold(1usize, |n, l| n.checked_mul(l.len()))?;
            if out.len() + size > max {
                return None;
            }
            let mut pick = vec![0; lists.len()];
            for _ in 0..size {
                let args = lists
                    .iter()
                    .zip(&pick)
                    .map(|(l, &k)| l[k].clone())
                    .collect();
                out.push(Term::Func(*f, args));
                // The next combination, like an odometer.
                for (k, l) in pick.iter_mut().zip(&lists).rev() {
                    *k += 1;
                    if *k < l.len() {
                        break;
                    }
                    *k = 0;
                }
            }
        }
        Some(out)
    }
}
