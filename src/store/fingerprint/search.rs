//! [`super::find_mapping`]'s search: where colour refinement leaves ties, one
//! symbol is individualised, paired in turn with each candidate, and
//! refinement runs again, backtracking on a mismatch, within a budget of
//! work; a candidate map is then checked rule by rule ([`Matcher`]), so that
//! a colour collision can never give a wrong map.

use std::collections::HashMap;

use super::{mix, Colours, Flat, Kind, Scratch, MATCH_BUDGET, NONE, T_INDIVIDUAL, WORK_BUDGET};

pub(super) struct Search<'f> {
    a: &'f Flat,
    b: &'f Flat,
    /// Local symbol of `a` -> local symbol of `b` for keywords and numbers.
    fixed: Vec<u32>,
    work: u64,
    matched: u64,
    exhausted: bool,
}

impl<'f> Search<'f> {
    /// The search for a map from `a`'s local symbols to `b`'s, its keywords
    /// and numbers already paired (`fixed`).
    pub(super) fn new(a: &'f Flat, b: &'f Flat, fixed: Vec<u32>) -> Self {
        Search {
            a,
            b,
            fixed,
            work: 0,
            matched: 0,
            exhausted: false,
        }
    }

    /// A map of local symbols `a` -> `b` that refines from these colours and
    /// passes the check, if one is found within the budget.
    pub(super) fn run(&mut self, mut ca: Colours, mut cb: Colours) -> Option<Vec<u32>> {
        let (mut na, mut nb) = (Vec::new(), Vec::new());
        let mut s = Scratch::default();
        let limit = WORK_BUDGET;
        if !self
            .a
            .refine(&mut ca, &mut na, &mut s, &mut self.work, limit)
            || !self
                .b
                .refine(&mut cb, &mut nb, &mut s, &mut self.work, limit)
        {
            self.exhausted = true;
            return None;
        }
        if self.a.invariants(&ca, &na) != self.b.invariants(&cb, &nb) {
            return None;
        }
        // The renamable symbols by colour, on both sides; the invariants are
        // equal, so every class has as many members on each.
        let mut classes: HashMap<u64, (Vec<u32>, Vec<u32>)> = HashMap::new();
        for i in self.a.renamable() {
            classes.entry(ca.sym[i]).or_default().0.push(i as u32);
        }
        for j in self.b.renamable() {
            classes.entry(cb.sym[j]).or_default().1.push(j as u32);
        }
        // The smallest class that is not a single symbol (ties by colour, the
        // same choice on both sides).
        let tie = classes
            .iter()
            .filter(|(_, (xs, _))| xs.len() > 1)
            .min_by_key(|(c, (xs, _))| (xs.len(), **c));
        let Some((&colour, (xs, ys))) = tie else {
            let mut map = self.fixed.clone();
            for (xs, ys) in classes.values() {
                map[xs[0] as usize] = ys[0];
            }
            return self.check(&map, &na, &nb).then_some(map);
        };
        let x = xs[0] as usize;
        let individual = mix(colour, T_INDIVIDUAL);
        for &y in ys {
            let (mut ca2, mut cb2) = (ca.clone(), cb.clone());
            ca2.sym[x] = individual;
            cb2.sym[y as usize] = individual;
            if let Some(map) = self.run(ca2, cb2) {
                return Some(map);
            }
            if self.exhausted {
                return None;
            }
        }
        None
    }

    /// True when `map` turns `a`'s rules into exactly `b`'s: each rule of `a`
    /// paired with a rule of `b` it equals under `map`, up to variable names
    /// and the order of bodies and alternatives. Colours only choose which
    /// pairs to try; the structure is compared in full, so a colour collision
    /// cannot pass a wrong map.
    fn check(&mut self, map: &[u32], na: &[u64], nb: &[u64]) -> bool {
        let mut by_colour: HashMap<u64, Vec<u32>> = HashMap::new();
        for &r in &self.b.roots {
            by_colour.entry(nb[r as usize]).or_default().push(r);
        }
        let mut m = Matcher {
            a: self.a,
            b: self.b,
            ca: na,
            cb: nb,
            map,
            fwd: vec![NONE; self.a.nvars],
            bwd: vec![NONE; self.b.nvars],
            trail: Vec::new(),
            steps: self.matched,
        };
        let mut ok = true;
        // Equality up to renaming is an equivalence, so pairing each rule of
        // `a` with the first free rule of `b` it equals never blocks a pairing
        // that a later rule needed.
        for &r in &self.a.roots {
            let Some(candidates) = by_colour.get_mut(&na[r as usize]) else {
                ok = false;
                break;
            };
            let found = candidates.iter().position(|&q| {
                let equal = m.solve(vec![Goal::Pair(r, q)]);
                m.undo(0);
                equal
            });
            match found {
                Some(k) => {
                    candidates.swap_remove(k);
                }
                None => {
                    ok = false;
                    break;
                }
            }
            if m.steps > MATCH_BUDGET {
                ok = false;
                break;
            }
        }
        self.matched = m.steps;
        if m.steps > MATCH_BUDGET {
            self.exhausted = true;
        }
        ok
    }
}

#[derive(Clone)]
enum Goal {
    /// Node of `a`, node of `b`: equal under the map.
    Pair(u32, u32),
    /// Nodes of `a`, nodes of `b`: equal as multisets.
    Bag(Vec<u32>, Vec<u32>),
}

/// Compares rules of two flat games under a symbol map, pairing variables
/// one to one and the members of unordered lists by backtracking.
struct Matcher<'m> {
    a: &'m Flat,
    b: &'m Flat,
    ca: &'m [u64],
    cb: &'m [u64],
    map: &'m [u32],
    /// Variable of `a` -> variable of `b`, and back.
    fwd: Vec<u32>,
    bwd: Vec<u32>,
    trail: Vec<(u32, u32)>,
    steps: u64,
}

impl Matcher<'_> {
    fn undo(&mut self, mark: usize) {
        for (x, y) in self.trail.drain(mark..) {
            self.fwd[x as usize] = NONE;
            self.bwd[y as usize] = NONE;
        }
    }

    /// True when every goal holds at once; bindings made on the way stay on
    /// the trail (the caller undoes them).
    fn solve(&mut self, mut agenda: Vec<Goal>) -> bool {
        while let Some(goal) = agenda.pop() {
            self.steps += 1;
            if self.steps > MATCH_BUDGET {
                return false;
            }
            match goal {
                Goal::Pair(i, j) => {
                    if !self.pair(i, j, &mut agenda) {
                        return false;
                    }
                }
                Goal::Bag(xs, ys) => {
                    let Some((&x, rest)) = xs.split_first() else {
                        continue;
                    };
                    for k in 0..ys.len() {
                        if self.ca[x as usize] != self.cb[ys[k] as usize] {
                            continue;
                        }
                        let mark = self.trail.len();
                        let mut next: Vec<Goal> = agenda.clone();
                        let mut others = ys.clone();
                        let y = others.swap_remove(k);
                        next.push(Goal::Bag(rest.to_vec(), others));
                        next.push(Goal::Pair(x, y));
                        if self.solve(next) {
                            return true;
                        }
                        self.undo(mark);
                        if self.steps > MATCH_BUDGET {
                            return false;
                        }
                    }
                    return false;
                }
            }
        }
        true
    }

    /// Compares two nodes' own content and puts their children on the agenda.
    fn pair(&mut self, i: u32, j: u32, agenda: &mut Vec<Goal>) -> bool {
        let (x, y) = (self.a.nodes[i as usize], self.b.nodes[j as usize]);
        if self.ca[i as usize] != self.cb[j as usize] || x.kind != y.kind || x.len != y.len {
            return false;
        }
        let (xs, ys) = (self.a.kids(&x), self.b.kids(&y));
        match x.kind {
            Kind::Var => {
                let (u, v) = (x.label, y.label);
                match (self.fwd[u as usize], self.bwd[v as usize]) {
                    (NONE, NONE) => {
                        self.fwd[u as usize] = v;
                        self.bwd[v as usize] = u;
                        self.trail.push((u, v));
                    }
                    (w, _) if w == v => {}
                    _ => return false,
                }
            }
            Kind::Const | Kind::Func => {
                if self.map[x.label as usize] != y.label {
                    return false;
                }
                agenda.extend(xs.iter().zip(ys).map(|(&p, &q)| Goal::Pair(p, q)));
            }
            Kind::Pos | Kind::Not | Kind::Distinct | Kind::Equal => {
                agenda.extend(xs.iter().zip(ys).map(|(&p, &q)| Goal::Pair(p, q)));
            }
            Kind::Or | Kind::And => agenda.push(Goal::Bag(xs.to_vec(), ys.to_vec())),
            Kind::Rule => {
                agenda.push(Goal::Bag(xs[1..].to_vec(), ys[1..].to_vec()));
                agenda.push(Goal::Pair(xs[0], ys[0]));
            }
        }
        true
    }
}
