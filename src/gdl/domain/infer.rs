//! The inference of [`super`]: what can stand in every argument position of
//! every relation, to a fixpoint over the rules (see the parent module for
//! the reading).

use std::collections::{HashMap, HashSet};

use super::terms::Terms;
use super::unsafe_head_vars;
use crate::gdl::ast::{Literal, Relation, Rule, Term};
use crate::gdl::symbol::{kw, Sym};

/// An argument position: a relation and an argument index (0-based).
type Slot = (Relation, usize);

/// The position an argument of `rel` reads: `true` and `init` read `next`'s,
/// `does` reads `legal`'s.
fn slot(rel: Relation, i: usize) -> Slot {
    let rel = match (rel.name, rel.arity) {
        (kw::TRUE | kw::INIT, 1) => Relation {
            name: kw::NEXT,
            arity: 1,
        },
        (kw::DOES, 2) => Relation {
            name: kw::LEGAL,
            arity: 2,
        },
        _ => rel,
    };
    (rel, i)
}

/// Whether position `i` of `rel` holds a role.
fn is_role_slot(rel: Relation, i: usize) -> bool {
    i == 0 && rel.arity == 2 && matches!(rel.name, kw::LEGAL | kw::DOES | kw::GOAL)
}

/// Positions the game manager asks without a term: the moves of `legal`, the
/// fluents of `init` and `next`, the values of `goal`.
fn is_asked_open(rel: Relation, i: usize) -> bool {
    match (rel.name, rel.arity) {
        (kw::LEGAL | kw::GOAL, 2) => i == 1,
        (kw::NEXT | kw::INIT | kw::BASE | kw::ROLE, 1) => true,
        (kw::INPUT, 2) => true,
        _ => false,
    }
}

/// What every argument position can hold and is asked about, to a fixpoint.
pub(super) struct Domains {
    /// The terms rule heads put in each position.
    puts: HashMap<Slot, Terms>,
    /// The terms calls ask in each position (the roles in `legal`'s and
    /// `goal`'s, which the game manager asks).
    asks: HashMap<Slot, Terms>,
    /// Positions some call asks with a variable nothing binds before it.
    open: HashSet<Slot>,
    roles: Terms,
}

impl Domains {
    /// The terms rule heads can put in position `i` of `rel` (`init`'s
    /// count as `next`'s).
    pub(super) fn puts(&self, rel: Relation, i: usize) -> &Terms {
        get(&self.puts, &slot(rel, i))
    }
}

fn get<'a>(map: &'a HashMap<Slot, Terms>, s: &Slot) -> &'a Terms {
    static EMPTY: std::sync::OnceLock<Terms> = std::sync::OnceLock::new();
    map.get(s)
        .unwrap_or_else(|| EMPTY.get_or_init(Terms::default))
}

pub(super) fn infer(rules: &[Rule]) -> Domains {
    let roles = Terms::of(
        rules
            .iter()
            .filter(|r| r.head.name() == Some(kw::ROLE) && r.head.args().len() == 1)
            .map(|r| r.head.args()[0].clone()),
    );
    let mut d = Domains {
        puts: HashMap::new(),
        asks: HashMap::new(),
        open: HashSet::new(),
        roles: roles.clone(),
    };
    // The game manager asks `legal` and `goal` for every role.
    for name in [kw::LEGAL, kw::GOAL] {
        d.asks
            .insert((Relation { name, arity: 2 }, 0), roles.clone());
    }
    // Every round adds a term to some position; constants are finitely
    // many, and nesting past MAX_DEPTH makes a set unbounded: this ends.
    while rules
        .iter()
        .fold(false, |changed, r| round(r, &mut d) | changed)
    {}
    d
}

/// One pass over `rule`: what its head puts in each position and what its
/// calls ask; whether a position grew.
fn round(rule: &Rule, d: &mut Domains) -> bool {
    let occ = occurrences(rule, d);
    let unsafe_vars = unsafe_head_vars(rule);
    // What the queries that ask the head bind each head variable to.
    let asked_head: HashMap<Sym, Terms> = rule
        .head
        .vars()
        .into_iter()
        .filter_map(|v| {
            let dom = if unsafe_vars.contains(&v) {
                head_domain(v, rule, d)
            } else {
                asked_domain(v, rule, d)?
            };
            Some((v, dom))
        })
        .collect();
    // The terms a variable takes where body literal `j` (or the head, past
    // the body) reads it; `None` when nothing binds it there.
    let value = |v: Sym, j: usize| match (bound_before(v, &occ, j), asked_head.get(&v)) {
        (Some(dom), Some(asked)) => Some(dom.intersect(asked)),
        (Some(dom), None) => Some(dom),
        (None, asked) => asked.cloned(),
    };
    let instance = |t: &Term, j: usize| {
        let doms: Option<HashMap<Sym, Terms>> = t
            .vars()
            .into_iter()
            .map(|v| value(v, j).map(|dom| (v, dom)))
            .collect();
        doms.and_then(|doms| Terms::instantiate(t, &doms))
    };
    let (mut puts, mut asks, mut opens) = (Vec::new(), Vec::new(), Vec::new());
    if let Some(rel) = rule.head.relation() {
        for (i, a) in rule.head.args().iter().enumerate() {
            if let Some(dom) = instance(a, usize::MAX) {
                puts.push((slot(rel, i), dom));
            }
        }
    }
    for (j, l) in rule.body.iter().enumerate() {
        let (Literal::Pos(t) | Literal::Not(t)) = l else {
            continue;
        };
        let Some(rel) = t.relation() else { continue };
        if matches!(rel.name, kw::TRUE | kw::DOES) {
            continue; // the state and the moves are what init, next and legal say
        }
        for (i, a) in t.args().iter().enumerate() {
            match instance(a, j) {
                Some(dom) => asks.push((slot(rel, i), dom)),
                None => opens.push(slot(rel, i)),
            }
        }
    }
    let mut changed = false;
    for s in opens {
        changed |= d.open.insert(s);
    }
    for (s, dom) in puts {
        changed |= d.puts.entry(s).or_default().union(&dom);
    }
    for (s, dom) in asks {
        changed |= d.asks.entry(s).or_default().union(&dom);
    }
    changed
}

/// Where each variable occurs positively: (body literal index, the terms it
/// matched there).
type Occurrences = HashMap<Sym, Vec<(usize, Terms)>>;

fn occurrences(rule: &Rule, d: &Domains) -> Occurrences {
    let mut occ: Occurrences = HashMap::new();
    for (j, l) in rule.body.iter().enumerate() {
        let Literal::Pos(t) = l else { continue };
        let Some(rel) = t.relation() else { continue };
        let mut found = HashMap::new();
        for (i, a) in t.args().iter().enumerate() {
            get(&d.puts, &slot(rel, i)).project(a, &mut found);
        }
        for (v, dom) in found {
            occ.entry(v).or_default().push((j, dom));
        }
    }
    occ
}

/// The terms variable `v` may take where body literal `j` reads it: the
/// intersection of its positive occurrences before `j`, as a prover that
/// joins left to right (ggp-base's) has bound it; `None` when none binds it.
fn bound_before(v: Sym, occ: &Occurrences, j: usize) -> Option<Terms> {
    let mut doms = occ.get(&v)?.iter().filter(|(k, _)| *k < j).map(|(_, d)| d);
    let first = doms.next()?.clone();
    Some(doms.fold(first, |acc, d| acc.intersect(d)))
}

/// What can stand in the head positions of unsafe variable `v`: the terms
/// the calls ask in any of them (a call that binds one of them binds `v`),
/// the roles in a role position; where no call asks any (the game manager
/// asks `legal`'s move and `next`'s fluent open), the terms the rules put
/// there.
pub(super) fn head_domain(v: Sym, rule: &Rule, d: &Domains) -> Terms {
    let Some(rel) = rule.head.relation() else {
        return Terms::default();
    };
    let mut asked = Terms::default();
    let mut put = HashMap::new();
    for (i, a) in rule.head.args().iter().enumerate() {
        if !a.vars().contains(&v) {
            continue;
        }
        let s = slot(rel, i);
        let mut found = HashMap::new();
        if is_role_slot(rel, i) {
            d.roles.project(a, &mut found);
        } else if !is_asked_open(rel, i) {
            get(&d.asks, &s).project(a, &mut found);
        }
        if let Some(t) = found.remove(&v) {
            asked.union(&t);
        }
        get(&d.puts, &s).project(a, &mut put);
    }
    if asked.is_empty() {
        put.remove(&v).unwrap_or_default()
    } else {
        asked
    }
}

/// Whether every call binds `v` to one of finitely many terms: some head
/// position of `v` is never asked open (with a variable nothing binds before
/// the call) and only over finitely many terms.
pub(super) fn bound_by_finite_calls(v: Sym, rule: &Rule, d: &Domains) -> bool {
    let Some(rel) = rule.head.relation() else {
        return false;
    };
    rule.head.args().iter().enumerate().any(|(i, a)| {
        let s = slot(rel, i);
        a.vars().contains(&v) && !d.open.contains(&s) && get(&d.asks, &s).bounded()
    })
}

/// The terms queries of the head bind `v` to when every query binds it: in
/// each head position of `v`, none ever asked open, the terms asked there
/// (the roles in a role position), intersected; `None` when some position
/// of `v` is asked open.
fn asked_domain(v: Sym, rule: &Rule, d: &Domains) -> Option<Terms> {
    let rel = rule.head.relation()?;
    let mut found = HashMap::new();
    for (i, a) in rule.head.args().iter().enumerate() {
        if !a.vars().contains(&v) {
            continue;
        }
        let s = slot(rel, i);
        if is_role_slot(rel, i) {
            d.roles.project(a, &mut found);
        } else if d.open.contains(&s) || is_asked_open(rel, i) {
            return None;
        } else {
            get(&d.asks, &s).project(a, &mut found);
        }
    }
    found.remove(&v)
}
