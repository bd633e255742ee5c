//! Rule patterns: a rule's term with its variables numbered and its ground
//! parts interned, matched against hash-consed ground terms and built from
//! bindings. The grounder ([`super::ground`]) and the prover ([`super::prover`])
//! both join rule bodies with it.
//!
//! Bindings are a slice indexed by variable number, [`UNBOUND`] where a variable
//! has no value yet; unification records the variables it binds on a trail so
//! that a join can take them back ([`undo`]). Slots rather than a map: a join
//! binds and unbinds at every candidate row, and a slot costs one store.

use super::terms::{TermId, TermPool};
use crate::gdl::{Sym, Term};

/// The value of a variable not bound yet.
pub(super) const UNBOUND: TermId = TermId::MAX;

/// Arguments up to this many are gathered on the stack when a term is looked
/// up or built (more: on the heap).
const INLINE_ARGS: usize = 16;

/// A term of a rule: variables numbered, ground parts interned.
#[derive(Clone, Debug)]
pub(super) enum Pat {
    Var(u16),
    Ground(TermId),
    Func(Sym, Vec<Pat>),
}

/// What a pattern denotes under some bindings.
pub(super) enum Resolved {
    Known(TermId),
    /// Fully bound, but no such term exists: it matches nothing.
    Absent,
    /// Some variable is unbound.
    Unknown,
}

impl Pat {
    /// The pattern of `t`, interning its ground parts; `var` numbers each
    /// variable.
    pub(super) fn new(t: &Term, pool: &mut TermPool, var: &mut impl FnMut(Sym) -> u16) -> Pat {
        if t.is_ground() {
            return Pat::Ground(pool.from_term(t).expect("ground terms intern"));
        }
        match t {
            Term::Var(v) => Pat::Var(var(*v)),
            Term::Func(f, args) => {
                Pat::Func(*f, args.iter().map(|a| Pat::new(a, pool, var)).collect())
            }
            Term::Const(_) => unreachable!("constants are ground"),
        }
    }

    /// Appends the pattern's variables (with repetitions) to `out`.
    pub(super) fn vars(&self, out: &mut Vec<u16>) {
        match self {
            Pat::Var(v) => out.push(*v),
            Pat::Ground(_) => {}
            Pat::Func(_, args) => args.iter().for_each(|a| a.vars(out)),
        }
    }

    /// Whether every variable is among `bound`.
    pub(super) fn is_known(&self, bound: &[bool]) -> bool {
        match self {
            Pat::Ground(_) => true,
            Pat::Var(v) => bound[*v as usize],
            Pat::Func(_, args) => args.iter().all(|a| a.is_known(bound)),
        }
    }

    /// Whether every variable has a value in `b`.
    pub(super) fn is_bound(&self, b: &[TermId]) -> bool {
        match self {
            Pat::Ground(_) => true,
            Pat::Var(v) => b[*v as usize] != UNBOUND,
            Pat::Func(_, args) => args.iter().all(|a| a.is_bound(b)),
        }
    }

    /// The ground term under `b`, interned when new. Every variable must be
    /// bound.
    pub(super) fn build(&self, b: &[TermId], pool: &mut TermPool) -> TermId {
        match self {
            Pat::Var(v) => {
                debug_assert_ne!(b[*v as usize], UNBOUND, "safe rules bind head variables");
                b[*v as usize]
            }
            Pat::Ground(t) => *t,
            Pat::Func(f, args) => {
                if args.len() > INLINE_ARGS {
                    let ids: Vec<TermId> = args.iter().map(|a| a.build(b, pool)).collect();
                    return pool.intern(*f, &ids);
                }
                let mut ids = [0; INLINE_ARGS];
                for (i, a) in args.iter().enumerate() {
                    ids[i] = a.build(b, pool);
                }
                pool.intern(*f, &ids[..args.len()])
            }
        }
    }

    /// The ground term under `b` if it already exists; `None` if a variable is
    /// unbound or the term was never interned (then no stored term equals it).
    pub(super) fn find(&self, b: &[TermId], pool: &TermPool) -> Option<TermId> {
        match self {
            Pat::Var(v) => (b[*v as usize] != UNBOUND).then_some(b[*v as usize]),
            Pat::Ground(t) => Some(*t),
            Pat::Func(f, args) => {
                if args.len() > INLINE_ARGS {
                    let ids: Option<Vec<TermId>> = args.iter().map(|a| a.find(b, pool)).collect();
                    return pool.find(*f, &ids?);
                }
                let mut ids = [0; INLINE_ARGS];
                for (i, a) in args.iter().enumerate() {
                    ids[i] = a.find(b, pool)?;
                }
                pool.find(*f, &ids[..args.len()])
            }
        }
    }

    /// [`Pat::find`], telling an unbound variable from a term never interned.
    pub(super) fn resolve(&self, b: &[TermId], pool: &TermPool) -> Resolved {
        match self.find(b, pool) {
            Some(t) => Resolved::Known(t),
            None if self.is_bound(b) => Resolved::Absent,
            None => Resolved::Unknown,
        }
    }

    /// Whether the pattern could unify with ground `t`, its variables taken
    /// as free (a repeated variable is not checked): a cheap test before
    /// bindings are set up.
    pub(super) fn may_match(&self, t: TermId, pool: &TermPool) -> bool {
        match self {
            Pat::Var(_) => true,
            Pat::Ground(g) => *g == t,
            Pat::Func(f, args) => {
                !pool.is_const(t)
                    && pool.functor(t) == *f
                    && pool.args(t).len() == args.len()
                    && args
                        .iter()
                        .zip(pool.args(t))
                        .all(|(a, &c)| a.may_match(c, pool))
            }
        }
    }

    /// Unifies with ground `t`, binding variables (recorded on `trail`). On
    /// failure some variables may be bound already: the caller undoes the trail.
    pub(super) fn unify(
        &self,
        t: TermId,
        b: &mut [TermId],
        trail: &mut Vec<u16>,
        pool: &TermPool,
    ) -> bool {
        match self {
            Pat::Var(v) => {
                let cur = b[*v as usize];
                if cur == UNBOUND {
                    b[*v as usize] = t;
                    trail.push(*v);
                    true
                } else {
                    cur == t
                }
            }
            Pat::Ground(g) => *g == t,
            Pat::Func(f, args) => {
                if pool.functor(t) != *f || pool.is_const(t) {
                    return false;
                }
                let targs = pool.args(t);
                targs.len() == args.len()
                    && args
                        .iter()
                        .zip(targs)
                        .all(|(a, &c)| a.unify(c, b, trail, pool))
            }
        }
    }
}

/// Unbinds the variables bound since the trail was `mark` long.
pub(super) fn undo(b: &mut [TermId], trail: &mut Vec<u16>, mark: usize) {
    for v in trail.drain(mark..) {
        b[v as usize] = UNBOUND;
    }
}

#[cfg(test)]
mod tests {
    use super::{undo, Pat, Resolved, UNBOUND};
    use crate::gdl::{Sym, Term};
    use crate::reasoner::terms::TermPool;

    /// `(f ?x (g ?y) c)` against `(f a (g b) c)`: binds both, builds it back,
    /// and fails (leaving the trail to undo) against `(f a (h b) c)`.
    #[test]
    fn unify_build_and_find() {
        let [f, g, h, a, bb, c, x, y] = [100, 101, 102, 103, 104, 105, 106, 107].map(Sym);
        let mut pool = TermPool::new();
        let t = Term::Func(
            f,
            vec![
                Term::Var(x),
                Term::Func(g, vec![Term::Var(y)]),
                Term::Const(c),
            ],
        );
        let mut vars = Vec::new();
        let p = Pat::new(&t, &mut pool, &mut |v: Sym| {
            vars.iter().position(|&w| w == v).unwrap_or_else(|| {
                vars.push(v);
                vars.len() - 1
            }) as u16
        });
        let ground = |sub: Sym, pool: &mut TermPool| {
            pool.from_term(&Term::Func(
                f,
                vec![
                    Term::Const(a),
                    Term::Func(sub, vec![Term::Const(bb)]),
                    Term::Const(c),
                ],
            ))
            .unwrap()
        };
        let (good, bad) = (ground(g, &mut pool), ground(h, &mut pool));
        let mut b = vec![UNBOUND; 2];
        let mut trail = Vec::new();
        assert!(matches!(p.resolve(&b, &pool), Resolved::Unknown));
        assert!(!p.unify(bad, &mut b, &mut trail, &pool));
        undo(&mut b, &mut trail, 0);
        assert_eq!(b, [UNBOUND; 2]);
        assert!(p.unify(good, &mut b, &mut trail, &pool));
        assert_eq!(trail.len(), 2);
        assert_eq!(p.find(&b, &pool), Some(good));
        assert_eq!(p.build(&b, &mut pool), good);
        b[1] = pool.intern(c, &[]);
        assert!(matches!(p.resolve(&b, &pool), Resolved::Absent));
    }
}
