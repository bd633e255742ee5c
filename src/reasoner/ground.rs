//! Grounding: the ground instances of every rule that can matter.
//!
//! The domain comes from the least model of the *relaxed* game: negation dropped,
//! `(true F)` taken from `init` and `next`, `(does R M)` from `legal`. Every atom that
//! can hold in some reachable state is in that model, so grounding each rule over it
//! (joining its positive literals, checking `distinct`) yields every rule instance
//! that can fire. Negative literals are kept in the ground rules; one over an atom
//! outside the model is always true and is dropped.
//!
//! The model is computed semi-naively: each round joins every rule with one
//! positive literal restricted to the atoms the previous round added, so each rule
//! instance is found exactly once and recorded as it is found. A [`Limits`] guard
//! (atoms, rule instances, time) stops games that would not fit, with a message
//! that says which limit tripped.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::terms::{TermId, TermPool};
use crate::gdl::{kw, Game, Literal, Sym, Term};

/// Index of a ground atom in [`GroundProgram::atoms`].
pub type AtomId = u32;

/// How big grounding may get before it gives up.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_atoms: usize,
    pub max_rules: usize,
    pub max_time: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_atoms: 1_000_000,
            max_rules: 3_000_000,
            max_time: Duration::from_secs(10),
        }
    }
}

/// Why grounding stopped.
#[derive(Debug, thiserror::Error)]
pub enum GroundError {
    #[error("grounding exceeds {limit} ground atoms")]
    TooManyAtoms { limit: usize },
    #[error("grounding exceeds {limit} ground rules")]
    TooManyRules { limit: usize },
    #[error("grounding takes longer than {0:?}")]
    TooSlow(Duration),
}

/// A ground rule: `head :- pos..., not neg...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroundRule {
    pub head: AtomId,
    pub pos: Vec<AtomId>,
    pub neg: Vec<AtomId>,
}

/// The ground game: atoms (as interned terms, e.g. `true(cell(1,1,b))`) and rules.
/// The relaxation's own rules (`true` from `init`/`next`, `does` from `legal`)
/// are not among the rules.
pub struct GroundProgram {
    pub pool: TermPool,
    pub atoms: Vec<TermId>,
    pub atom_of: HashMap<TermId, AtomId>,
    pub rules: Vec<GroundRule>,
}

impl GroundProgram {
    /// The atom for a ground term, if it is in the relaxed model.
    pub fn atom(&self, t: TermId) -> Option<AtomId> {
        self.atom_of.get(&t).copied()
    }
}

/// A rule's term with variables numbered and ground parts interned.
#[derive(Clone, Debug)]
enum Pat {
    Var(u16),
    Ground(TermId),
    Func(Sym, Vec<Pat>),
}

impl Pat {
    fn new(t: &Term, pool: &mut TermPool, vars: &mut Vec<Sym>) -> Pat {
        if let Some(id) = t.is_ground().then(|| pool.from_term(t)).flatten() {
            return Pat::Ground(id);
        }
        match t {
            Term::Var(v) => {
                let i = vars.iter().position(|x| x == v).unwrap_or_else(|| {
                    vars.push(*v);
                    vars.len() - 1
                });
                Pat::Var(i as u16)
            }
            Term::Const(c) => Pat::Ground(pool.intern(*c, &[])),
            Term::Func(f, args) => {
                Pat::Func(*f, args.iter().map(|a| Pat::new(a, pool, vars)).collect())
            }
        }
    }

    fn vars(&self, out: &mut Vec<u16>) {
        match self {
            Pat::Var(v) => out.push(*v),
            Pat::Ground(_) => {}
            Pat::Func(_, args) => args.iter().for_each(|a| a.vars(out)),
        }
    }

    /// The ground term under `b`, if every variable is bound (interned on demand).
    fn build(&self, b: &[TermId], pool: &mut TermPool) -> TermId {
        match self {
            Pat::Var(v) => b[*v as usize],
            Pat::Ground(t) => *t,
            Pat::Func(f, args) => {
                let ids: Vec<TermId> = args.iter().map(|a| a.build(b, pool)).collect();
                pool.intern(*f, &ids)
            }
        }
    }

    /// The ground term under `b` if it already exists; `None` if a variable is
    /// unbound or the term was never interned (then no atom can match it).
    fn find(&self, b: &[TermId], pool: &TermPool) -> Option<TermId> {
        match self {
            Pat::Var(v) => (b[*v as usize] != UNBOUND).then_some(b[*v as usize]),
            Pat::Ground(t) => Some(*t),
            Pat::Func(f, args) => {
                let mut ids = [0; 16];
                if args.len() > 16 {
                    let v: Option<Vec<TermId>> = args.iter().map(|a| a.find(b, pool)).collect();
                    return pool.find(*f, &v?);
                }
                for (i, a) in args.iter().enumerate() {
                    ids[i] = a.find(b, pool)?;
                }
                pool.find(*f, &ids[..args.len()])
            }
        }
    }

    /// Unifies with ground `t`, binding variables (recorded on `trail`).
    fn unify(&self, t: TermId, b: &mut [TermId], trail: &mut Vec<u16>, pool: &TermPool) -> bool {
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
                if pool.is_const(t) || pool.functor(t) != *f || pool.args(t).len() != args.len() {
                    return false;
                }
                for (i, a) in args.iter().enumerate() {
                    let c = pool.args(t)[i];
                    if !a.unify(c, b, trail, pool) {
                        return false;
                    }
                }
                true
            }
        }
    }
}

const UNBOUND: TermId = TermId::MAX;

/// An index key: in relation `rel`, the subterm at argument `arg` (and, when `sub`
/// is set, its argument `sub.1` under functor `sub.0`) is `value`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Key {
    rel: u32,
    arg: u16,
    sub: Option<(Sym, u16, u16)>,
    value: TermId,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Step {
    /// Join positive literal `i` of the rule.
    Join(usize),
    /// Check distinct `i`.
    Distinct(usize),
}

struct CRule {
    /// Relation id of the head, and its pattern (an atom term pattern).
    head: Pat,
    pos: Vec<(u32, Pat)>,
    /// Negative literals; a variable no positive literal binds is read as "no
    /// atom matches" (the prover's reading of such rules).
    neg: Vec<(u32, Pat)>,
    distinct: Vec<(Pat, Pat)>,
    nvars: usize,
    /// Only feeds the relaxation (`true` from `init`/`next`, `does` from `legal`).
    relaxation: bool,
    /// Per positive literal `d`: the join order with `d` first.
    plans: Vec<Vec<Step>>,
}

/// The relaxed model under construction.
struct Model {
    pool: TermPool,
    rel_of: HashMap<(Sym, usize), u32>,
    /// Per relation: its atoms in insertion order.
    rel_atoms: Vec<Vec<TermId>>,
    atom_of: HashMap<TermId, AtomId>,
    atoms: Vec<TermId>,
    /// Per atom: its position in its relation's list.
    pos_in_rel: Vec<u32>,
    index: HashMap<Key, Vec<u32>>,
}

impl Model {
    fn rel(&mut self, name: Sym, arity: usize) -> u32 {
        let n = self.rel_atoms.len() as u32;
        *self.rel_of.entry((name, arity)).or_insert_with(|| {
            self.rel_atoms.push(Vec::new());
            n
        })
    }

    /// Adds an atom of relation `rel`; false when it was there already.
    fn insert(&mut self, rel: u32, atom: TermId) -> bool {
        if self.atom_of.contains_key(&atom) {
            return false;
        }
        self.atom_of.insert(atom, self.atoms.len() as AtomId);
        self.atoms.push(atom);
        let pos = self.rel_atoms[rel as usize].len() as u32;
        self.pos_in_rel.push(pos);
        self.rel_atoms[rel as usize].push(atom);
        if !self.pool.is_const(atom) {
            for (i, &a) in self.pool.args(atom).iter().enumerate() {
                let k = Key {
                    rel,
                    arg: i as u16,
                    sub: None,
                    value: a,
                };
                self.index.entry(k).or_default().push(pos);
                if !self.pool.is_const(a) {
                    let (f, n) = (self.pool.functor(a), self.pool.args(a).len() as u16);
                    for (j, &c) in self.pool.args(a).iter().enumerate() {
                        let k = Key {
                            rel,
                            arg: i as u16,
                            sub: Some((f, n, j as u16)),
                            value: c,
                        };
                        self.index.entry(k).or_default().push(pos);
                    }
                }
            }
        }
        true
    }
}

/// Grounds `game` within `limits`.
pub fn ground(game: &Game, limits: &Limits) -> Result<GroundProgram, GroundError> {
    let start = Instant::now();
    let mut model = Model {
        pool: TermPool::new(),
        rel_of: HashMap::new(),
        rel_atoms: Vec::new(),
        atom_of: HashMap::new(),
        atoms: Vec::new(),
        pos_in_rel: Vec::new(),
        index: HashMap::new(),
    };
    let mut rules = Vec::new();
    for r in &game.rules {
        let mut vars = Vec::new();
        let head = Pat::new(&r.head, &mut model.pool, &mut vars);
        let mut pos = Vec::new();
        let mut neg = Vec::new();
        let mut distinct = Vec::new();
        for l in &r.body {
            match l {
                Literal::Pos(t) => {
                    let rel = model.rel(t.name().expect("atoms have names"), t.args().len());
                    pos.push((rel, Pat::new(t, &mut model.pool, &mut vars)));
                }
                Literal::Not(t) => {
                    let rel = model.rel(t.name().expect("atoms have names"), t.args().len());
                    neg.push((rel, Pat::new(t, &mut model.pool, &mut vars)));
                }
                Literal::Distinct(a, b) => distinct.push((
                    Pat::new(a, &mut model.pool, &mut vars),
                    Pat::new(b, &mut model.pool, &mut vars),
                )),
                Literal::Or(_) | Literal::And(_) | Literal::Equal(..) => {
                    unreachable!("the normal form has no or/and/equal literals")
                }
            }
        }
        model.rel(
            r.head.name().expect("heads have names"),
            r.head.args().len(),
        );
        rules.push(CRule {
            head,
            pos,
            neg,
            distinct,
            nvars: vars.len(),
            relaxation: false,
            plans: Vec::new(),
        });
    }
    // The relaxation: true(X) :- init(X).  true(X) :- next(X).  does(R, M) :- legal(R, M).
    let x = Term::Var(kw::TRUE);
    let y = Term::Var(kw::DOES);
    for (head, body) in [
        (
            Term::Func(kw::TRUE, vec![x.clone()]),
            Term::Func(kw::INIT, vec![x.clone()]),
        ),
        (
            Term::Func(kw::TRUE, vec![x.clone()]),
            Term::Func(kw::NEXT, vec![x.clone()]),
        ),
        (
            Term::Func(kw::DOES, vec![x.clone(), y.clone()]),
            Term::Func(kw::LEGAL, vec![x.clone(), y.clone()]),
        ),
    ] {
        let mut vars = Vec::new();
        let rel = model.rel(body.name().expect("named"), body.args().len());
        model.rel(head.name().expect("named"), head.args().len());
        rules.push(CRule {
            head: Pat::new(&head, &mut model.pool, &mut vars),
            pos: vec![(rel, Pat::new(&body, &mut model.pool, &mut vars))],
            neg: Vec::new(),
            distinct: Vec::new(),
            nvars: vars.len(),
            relaxation: true,
            plans: Vec::new(),
        });
    }
    for r in rules.iter_mut() {
        r.plans = (0..r.pos.len()).map(|d| plan(r, d)).collect();
    }

    let mut g = Grounder {
        model,
        out: Vec::new(),
        limits: *limits,
        start,
        ticks: 0,
        ranges: Vec::new(),
        new_atoms: Vec::new(),
    };
    // Round 0: rules without positive literals.
    for (ri, r) in rules.iter().enumerate() {
        if r.pos.is_empty() {
            let mut b = vec![UNBOUND; r.nvars];
            let mut trail = Vec::new();
            g.run(&rules, ri, &[], 0, &mut b, &mut trail)?;
        }
    }
    loop {
        // Atoms found last round become this round's delta.
        let nrel = g.model.rel_atoms.len();
        let old: Vec<usize> = (0..nrel)
            .map(|r| g.ranges.get(r).map_or(0, |&(_, hi)| hi))
            .collect();
        g.flush()?;
        g.ranges = (0..nrel)
            .map(|r| (old[r], g.model.rel_atoms[r].len()))
            .collect();
        if g.ranges.iter().all(|&(lo, hi)| lo == hi) {
            break;
        }
        for (ri, r) in rules.iter().enumerate() {
            for d in 0..r.pos.len() {
                let (lo, hi) = g.ranges[r.pos[d].0 as usize];
                if lo == hi {
                    continue;
                }
                let mut b = vec![UNBOUND; r.nvars];
                let mut trail = Vec::new();
                let plan = &r.plans[d];
                g.run(&rules, ri, plan, d, &mut b, &mut trail)?;
            }
        }
    }
    let Grounder { model, out, .. } = g;
    // Resolve negative literals now that the model is complete.
    let mut ground_rules = Vec::with_capacity(out.len());
    for (head, pos, neg) in out {
        let mut neg_atoms = Vec::new();
        for n in neg {
            match n {
                NegLit::Atom(t) => neg_atoms.extend(model.atom_of.get(&t).copied()),
                NegLit::Open { rule, lit, mut b } => {
                    let (rel, pat) = &rules[rule as usize].neg[lit as usize];
                    let mut trail = Vec::new();
                    for &t in &model.rel_atoms[*rel as usize] {
                        if pat.unify(t, &mut b, &mut trail, &model.pool) {
                            neg_atoms.push(model.atom_of[&t]);
                        }
                        undo(&mut b, &mut trail, 0);
                    }
                }
            }
        }
        let neg = neg_atoms;
        ground_rules.push(GroundRule {
            head: model.atom_of[&head],
            pos,
            neg,
        });
    }
    Ok(GroundProgram {
        pool: model.pool,
        atoms: model.atoms,
        atom_of: model.atom_of,
        rules: ground_rules,
    })
}

/// The join order with positive literal `first` first: then, greedily, the literal
/// with the most bound variables (ties: fewer unbound); each `distinct` as soon as
/// its variables are bound.
fn plan(r: &CRule, first: usize) -> Vec<Step> {
    let mut bound = vec![false; r.nvars];
    let mut steps = Vec::new();
    let mut used = vec![false; r.pos.len()];
    let mut dused = vec![false; r.distinct.len()];
    let mut next = Some(first);
    while let Some(i) = next {
        used[i] = true;
        steps.push(Step::Join(i));
        let mut vs = Vec::new();
        r.pos[i].1.vars(&mut vs);
        vs.iter().for_each(|&v| bound[v as usize] = true);
        for (k, (a, b)) in r.distinct.iter().enumerate() {
            let mut vs = Vec::new();
            a.vars(&mut vs);
            b.vars(&mut vs);
            if !dused[k] && vs.iter().all(|&v| bound[v as usize]) {
                dused[k] = true;
                steps.push(Step::Distinct(k));
            }
        }
        next = (0..r.pos.len()).filter(|&j| !used[j]).max_by_key(|&j| {
            let mut vs = Vec::new();
            r.pos[j].1.vars(&mut vs);
            let nb = vs.iter().filter(|&&v| bound[v as usize]).count() as i64;
            let nu = vs.len() as i64 - nb;
            (nu == 0, nb, -nu, -(j as i64))
        });
    }
    // Distincts over variables no positive literal binds (unsafe rules are refused
    // by validation, but ground distincts can remain).
    for (k, d) in dused.iter().enumerate() {
        if !d {
            steps.push(Step::Distinct(k));
        }
    }
    steps
}

struct Grounder {
    model: Model,
    /// Found instances: head term, positive atoms, negative literals.
    out: Vec<(TermId, Vec<AtomId>, Vec<NegLit>)>,
    limits: Limits,
    start: Instant,
    ticks: u64,
    /// Per relation this round: atoms `[0, lo)` are old, `[lo, hi)` the delta.
    ranges: Vec<(usize, usize)>,
    /// Heads found this round, added to the model at the round's end.
    new_atoms: Vec<(u32, TermId)>,
}

impl Grounder {
    fn flush(&mut self) -> Result<(), GroundError> {
        for (rel, t) in std::mem::take(&mut self.new_atoms) {
            self.model.insert(rel, t);
        }
        if self.model.atoms.len() > self.limits.max_atoms {
            return Err(GroundError::TooManyAtoms {
                limit: self.limits.max_atoms,
            });
        }
        Ok(())
    }

    fn tick(&mut self) -> Result<(), GroundError> {
        self.ticks += 1;
        if self.ticks.is_multiple_of(4096) && self.start.elapsed() > self.limits.max_time {
            return Err(GroundError::TooSlow(self.limits.max_time));
        }
        Ok(())
    }

    /// Runs the steps of `plan` from its first, with literal `delta` restricted to
    /// the delta, literals before it (in body order) to old atoms.
    fn run(
        &mut self,
        rules: &[CRule],
        ri: usize,
        plan: &[Step],
        delta: usize,
        b: &mut Vec<TermId>,
        trail: &mut Vec<u16>,
    ) -> Result<(), GroundError> {
        let r = &rules[ri];
        let Some((&step, rest)) = plan.split_first() else {
            return self.emit(ri, r, b);
        };
        match step {
            Step::Distinct(k) => {
                let (x, y) = &r.distinct[k];
                let (tx, ty) = (x.find(b, &self.model.pool), y.find(b, &self.model.pool));
                // A term never interned differs from every interned one.
                if tx.is_none() || ty.is_none() || tx != ty {
                    self.run(rules, ri, rest, delta, b, trail)?;
                }
            }
            Step::Join(i) => {
                let (rel, pat) = &r.pos[i];
                let (old, cur) = self.ranges.get(*rel as usize).copied().unwrap_or((0, 0));
                let (lo, hi) = match i.cmp(&delta) {
                    std::cmp::Ordering::Equal => (old, cur),
                    std::cmp::Ordering::Less => (0, old),
                    std::cmp::Ordering::Greater => (0, cur),
                };
                if lo >= hi {
                    return Ok(());
                }
                let cands = self.candidates(*rel, pat, b, lo, hi);
                let mark = trail.len();
                match cands {
                    Cands::Range(lo, hi) => {
                        for p in lo..hi {
                            self.tick()?;
                            let t = self.model.rel_atoms[*rel as usize][p];
                            if pat.unify(t, b, trail, &self.model.pool) {
                                self.run(rules, ri, rest, delta, b, trail)?;
                            }
                            undo(b, trail, mark);
                        }
                    }
                    Cands::List(list) => {
                        for p in list {
                            self.tick()?;
                            let t = self.model.rel_atoms[*rel as usize][p as usize];
                            if pat.unify(t, b, trail, &self.model.pool) {
                                self.run(rules, ri, rest, delta, b, trail)?;
                            }
                            undo(b, trail, mark);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Candidate atoms of `rel` in positions `[lo, hi)` for `pat` under `b`: the
    /// smallest index bucket for a bound part of the pattern, else the range.
    fn candidates(&self, rel: u32, pat: &Pat, b: &[TermId], lo: usize, hi: usize) -> Cands {
        if let Some(t) = pat.find(b, &self.model.pool) {
            return match self.model.atom_of.get(&t) {
                Some(&a) => {
                    let p = self.model.pos_in_rel[a as usize];
                    if (lo..hi).contains(&(p as usize)) {
                        Cands::List(vec![p])
                    } else {
                        Cands::List(Vec::new())
                    }
                }
                None => Cands::List(Vec::new()),
            };
        }
        let Pat::Func(_, args) = pat else {
            return Cands::Range(lo, hi);
        };
        let mut best: Option<&Vec<u32>> = None;
        for (i, a) in args.iter().enumerate() {
            let mut keys: [Option<Key>; 16] = [None; 16];
            if let Some(t) = a.find(b, &self.model.pool) {
                keys[0] = Some(Key {
                    rel,
                    arg: i as u16,
                    sub: None,
                    value: t,
                });
            } else if let Pat::Func(f, sub) = a {
                for (j, s) in sub.iter().enumerate().take(16) {
                    if let Some(t) = s.find(b, &self.model.pool) {
                        keys[j] = Some(Key {
                            rel,
                            arg: i as u16,
                            sub: Some((*f, sub.len() as u16, j as u16)),
                            value: t,
                        });
                    }
                }
            }
            for k in keys.iter().flatten() {
                match self.model.index.get(k) {
                    None => return Cands::List(Vec::new()),
                    Some(v) => {
                        if best.is_none_or(|bv| v.len() < bv.len()) {
                            best = Some(v);
                        }
                    }
                }
            }
        }
        match best {
            None => Cands::Range(lo, hi),
            Some(v) => {
                let s = v.partition_point(|&p| (p as usize) < lo);
                let e = v.partition_point(|&p| (p as usize) < hi);
                Cands::List(v[s..e].to_vec())
            }
        }
    }

    fn emit(&mut self, ri: usize, r: &CRule, b: &[TermId]) -> Result<(), GroundError> {
        let head = r.head.build(b, &mut self.model.pool);
        let rel = self.model.rel_of[&(
            self.model.pool.functor(head),
            self.model.pool.args(head).len(),
        )];
        if !self.model.atom_of.contains_key(&head) {
            self.new_atoms.push((rel, head));
        }
        if r.relaxation {
            return Ok(());
        }
        let pos: Vec<AtomId> = r
            .pos
            .iter()
            .map(|(_, p)| {
                let t = p
                    .find(b, &self.model.pool)
                    .expect("joined literals are ground");
                self.model.atom_of[&t]
            })
            .collect();
        let mut neg = Vec::with_capacity(r.neg.len());
        for (k, (_, p)) in r.neg.iter().enumerate() {
            let mut vs = Vec::new();
            p.vars(&mut vs);
            if vs.iter().all(|&v| b[v as usize] != UNBOUND) {
                neg.push(NegLit::Atom(p.build(b, &mut self.model.pool)));
            } else {
                neg.push(NegLit::Open {
                    rule: ri as u32,
                    lit: k as u16,
                    b: b.into(),
                });
            }
        }
        self.out.push((head, pos, neg));
        if self.out.len() > self.limits.max_rules {
            return Err(GroundError::TooManyRules {
                limit: self.limits.max_rules,
            });
        }
        Ok(())
    }
}

/// A negative literal of a found instance: a ground atom, or a pattern with
/// variables left open (negative literal `lit` of rule `rule` under `b`), matched
/// against the complete model at the end.
enum NegLit {
    Atom(TermId),
    Open {
        rule: u32,
        lit: u16,
        b: Box<[TermId]>,
    },
}

enum Cands {
    Range(usize, usize),
    List(Vec<u32>),
}

fn undo(b: &mut [TermId], trail: &mut Vec<u16>, mark: usize) {
    for v in trail.drain(mark..) {
        b[v as usize] = UNBOUND;
    }
}
