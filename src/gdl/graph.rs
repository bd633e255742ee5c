//! Dependency analysis shared by the normal form ([`super::normal`]),
//! validation ([`super::validate`]) and the propnet's compiler: when a rule's
//! truth can change ([`Phase`]), which rules depend on which
//! ([`DependencyGraph`], through unification of body literals with heads),
//! one strongly-connected-components function for rule graphs and ground
//! graphs alike, and which rules a set of relations reaches.

use std::collections::{HashMap, HashSet};

use super::ast::{Literal, Relation, Rule, Term};
use super::symbol::Sym;

/// When a rule's truth can change: never, with the state, or with the moves.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Phase {
    Static,
    State,
    Move,
}

/// Rule-level dependencies: `edges[a]` lists `(b, negative)` when a body literal of
/// rule `a` unifies with the head of rule `b`.
pub struct DependencyGraph {
    pub edges: Vec<Vec<(usize, bool)>>,
}

impl DependencyGraph {
    pub fn build(rules: &[Rule]) -> Self {
        let mut by_rel: HashMap<Relation, Vec<usize>> = HashMap::new();
        for (i, r) in rules.iter().enumerate() {
            // Facts have no body and so no outgoing edges; as targets they are
            // always evaluated first, so they need no edges either.
            if !r.is_fact() {
                if let Some(rel) = r.head.relation() {
                    by_rel.entry(rel).or_default().push(i);
                }
            }
        }
        let edges = rules
            .iter()
            .map(|r| {
                let mut out: Vec<(usize, bool)> = Vec::new();
                for l in &r.body {
                    let (atom, neg) = match l {
                        Literal::Pos(t) => (t, false),
                        Literal::Not(t) => (t, true),
                        _ => continue,
                    };
                    let Some(rel) = atom.relation() else { continue };
                    for &j in by_rel.get(&rel).map(Vec::as_slice).unwrap_or(&[]) {
                        if unifiable(atom, &rules[j].head) {
                            match out.iter_mut().find(|(k, _)| *k == j) {
                                Some(e) => e.1 |= neg,
                                None => out.push((j, neg)),
                            }
                        }
                    }
                }
                out
            })
            .collect();
        DependencyGraph { edges }
    }

    /// Strongly connected components, dependencies before dependents, each
    /// sorted.
    pub fn components(&self) -> Vec<Vec<usize>> {
        let mut comps =
            strongly_connected(self.edges.len(), |v, i| self.edges[v].get(i).map(|e| e.0));
        comps.iter_mut().for_each(|c| c.sort_unstable());
        comps
    }
}

/// Strongly connected components of a graph of `n` nodes whose `i`th edge out
/// of `v` is `edge(v, i)` (`None` past the last), dependencies first: an edge
/// `v -> w` puts `w`'s component no later than `v`'s. Tarjan's algorithm,
/// iterative, so that long rule chains and deep ground graphs cannot
/// overflow the stack.
pub fn strongly_connected(
    n: usize,
    edge: impl Fn(usize, usize) -> Option<usize>,
) -> Vec<Vec<usize>> {
    const NONE: u32 = u32::MAX;
    let mut index = vec![NONE; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut next = 0u32;
    let mut call: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if index[root] != NONE {
            continue;
        }
        call.push((root, 0));
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut i)) = call.last_mut() {
            if let Some(w) = edge(v, *i) {
                *i += 1;
                if index[w] == NONE {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    loop {
                        let w = stack.pop().expect("v is on the stack");
                        on_stack[w] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    out.push(comp);
                }
            }
        }
    }
    out
}

/// Which of `rules` define a relation that the relations `roots` reach through
/// rule bodies (positive and negative literals).
pub fn reached(rules: &[Rule], roots: &[Sym]) -> Vec<bool> {
    let mut by_head: HashMap<Sym, Vec<usize>> = HashMap::new();
    for (i, r) in rules.iter().enumerate() {
        if let Some(n) = r.head.name() {
            by_head.entry(n).or_default().push(i);
        }
    }
    fn names(l: &Literal, out: &mut Vec<Sym>) {
        match l {
            Literal::Pos(t) | Literal::Not(t) => out.extend(t.name()),
            Literal::Or(ls) | Literal::And(ls) => ls.iter().for_each(|l| names(l, out)),
            Literal::Distinct(..) | Literal::Equal(..) => {}
        }
    }
    let mut keep = vec![false; rules.len()];
    let mut seen: HashSet<Sym> = roots.iter().copied().collect();
    let mut todo: Vec<Sym> = roots.to_vec();
    while let Some(n) = todo.pop() {
        for &i in by_head.get(&n).map(Vec::as_slice).unwrap_or(&[]) {
            keep[i] = true;
            let mut read = Vec::new();
            rules[i].body.iter().for_each(|l| names(l, &mut read));
            todo.extend(read.into_iter().filter(|m| seen.insert(*m)));
        }
    }
    keep
}

/// `rules` without those of relations that `roots` do not reach ([`reached`]).
pub fn keep_reached(rules: Vec<Rule>, roots: &[Sym]) -> Vec<Rule> {
    let keep = reached(&rules, roots);
    rules
        .into_iter()
        .zip(keep)
        .filter_map(|(r, k)| k.then_some(r))
        .collect()
}

/// Whether two atoms unify once their variables are renamed apart.
pub fn unifiable(a: &Term, b: &Term) -> bool {
    let mut subst: HashMap<(bool, Sym), Term2> = HashMap::new();
    unify(&Term2::new(a, false), &Term2::new(b, true), &mut subst)
}

/// A term tagged with the side it came from, so variables of the two sides differ.
#[derive(Clone, Debug)]
pub(crate) enum Term2 {
    Var(bool, Sym),
    Const(Sym),
    Func(Sym, Vec<Term2>),
}

impl Term2 {
    pub(crate) fn new(t: &Term, side: bool) -> Term2 {
        match t {
            Term::Var(v) => Term2::Var(side, *v),
            Term::Const(c) => Term2::Const(*c),
            Term::Func(f, args) => {
                Term2::Func(*f, args.iter().map(|a| Term2::new(a, side)).collect())
            }
        }
    }
}

fn walk(t: &Term2, s: &HashMap<(bool, Sym), Term2>) -> Term2 {
    let mut t = t.clone();
    while let Term2::Var(side, v) = t {
        match s.get(&(side, v)) {
            Some(b) => t = b.clone(),
            None => break,
        }
    }
    t
}

fn occurs(side: bool, v: Sym, t: &Term2, s: &HashMap<(bool, Sym), Term2>) -> bool {
    match walk(t, s) {
        Term2::Var(s2, v2) => s2 == side && v2 == v,
        Term2::Const(_) => false,
        Term2::Func(_, args) => args.iter().any(|a| occurs(side, v, a, s)),
    }
}

pub(crate) fn unify(a: &Term2, b: &Term2, s: &mut HashMap<(bool, Sym), Term2>) -> bool {
    let (a, b) = (walk(a, s), walk(b, s));
    match (&a, &b) {
        (Term2::Var(s1, v1), Term2::Var(s2, v2)) if s1 == s2 && v1 == v2 => true,
        (Term2::Var(side, v), t) | (t, Term2::Var(side, v)) => {
            if occurs(*side, *v, t, s) {
                return false;
            }
            s.insert((*side, *v), t.clone());
            true
        }
        (Term2::Const(x), Term2::Const(y)) => x == y,
        (Term2::Func(f, xs), Term2::Func(g, ys)) => {
            f == g && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| unify(x, y, s))
        }
        _ => false,
    }
}

/// `t` with the substitution `s` applied (the sides forgotten).
pub(crate) fn resolve_term(t: &Term2, s: &HashMap<(bool, Sym), Term2>) -> Term {
    match walk(t, s) {
        Term2::Var(_, v) => Term::Var(v),
        Term2::Const(c) => Term::Const(c),
        Term2::Func(f, args) => Term::Func(f, args.iter().map(|a| resolve_term(a, s)).collect()),
    }
}
