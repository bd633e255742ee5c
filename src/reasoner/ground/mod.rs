//! Grounding: the ground instances of every rule that can matter.
//!
//! The domain comes from the least model of the *relaxed* game: negation dropped,
//! `(true F)` taken from `init` and `next`, `(does R M)` from `legal`. Every atom that
//! can hold in some reachable state is in that model, so grounding each rule over it
//! (joining its positive literals, checking `distinct`) yields every rule instance
//! that can fire. Negative literals are kept in the ground rules; one over an atom
//! outside the model is always true and is dropped.
//!
//! Static rules are the exception: they are grounded first, a component at a
//! time in evaluation order, with their negative literals checked against the
//! complete relations they read, so static relations come out exact; negative
//! literals over static relations are then checked exactly in the other rules
//! too. Dropping negation there would lose what walls and boards say: a maze
//! whose walls are static facts would be grounded as if it had none.
//!
//! The model is computed semi-naively: each round joins every rule with one
//! positive literal restricted to the atoms the previous round added, so each rule
//! instance is found exactly once and recorded as it is found. A [`Limits`] guard
//! (the memory the grounding holds, join steps, time) stops games that would not
//! fit, with a message that says which limit tripped. Memory rather than atom or
//! rule counts: a game of many small rules and one of a few wide ones cost what
//! they hold, and a machine with more memory grounds more.

use hashbrown::{HashMap, HashSet};

use crate::cputime::ThreadWatch;

use super::pattern::{undo, Pat, UNBOUND};
use super::terms::{TermId, TermPool};
use crate::gdl::{kw, Game, Literal, Phase, Relation, Rule, Sym, Term};

mod compile;
mod latch;
mod limits;
mod program;
mod report;
use compile::{compile_rule, relaxation_rules};
pub use latch::{latches, play_bound, Latches, PlayBound};
pub use limits::{default_memory, GroundError, Heaviest, Limits};
use limits::{ATOM_BYTES, RULE_BYTES};
pub use program::{AtomId, GroundProgram, GroundRule};
pub use report::{report, Report};

/// Where a key value sits in an atom: argument `arg`, or (with `sub`) argument
/// `sub.2` of argument `arg` when that is a term with functor `sub.0` and arity
/// `sub.1`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Path {
    arg: u16,
    sub: Option<(Sym, u16, u16)>,
}

impl Path {
    /// The value at this path in atom `t`; `None` when the atom has another shape.
    fn get(&self, t: TermId, pool: &TermPool) -> Option<TermId> {
        let a = *pool.args(t).get(self.arg as usize)?;
        match self.sub {
            None => Some(a),
            Some((f, n, j)) => {
                (!pool.is_const(a) && pool.functor(a) == f && pool.args(a).len() == n as usize)
                    .then(|| pool.args(a)[j as usize])
            }
        }
    }
}

/// An index of one relation on the values at some paths, built lazily and
/// extended as the relation grows: key values -> positions in the relation.
struct Index {
    rel: u32,
    paths: Vec<Path>,
    covered: usize,
    map: HashMap<Vec<TermId>, Vec<u32>>,
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
    /// Per negative literal: is its relation complete and exact whenever this
    /// rule runs (then an instance whose atom is there is not emitted)?
    exact_neg: Vec<bool>,
    /// The variables of each `distinct`.
    distinct_vars: Vec<Vec<u16>>,
}

impl CRule {
    fn new(
        head: Pat,
        pos: Vec<(u32, Pat)>,
        neg: Vec<(u32, Pat)>,
        distinct: Vec<(Pat, Pat)>,
        nvars: usize,
        relaxation: bool,
        exact_neg: Vec<bool>,
    ) -> CRule {
        let vars = |p: &Pat| {
            let mut v = Vec::new();
            p.vars(&mut v);
            v
        };
        let distinct_vars = distinct
            .iter()
            .map(|(x, y)| {
                let mut v = vars(x);
                v.extend(vars(y));
                v
            })
            .collect();
        CRule {
            head,
            pos,
            neg,
            distinct,
            nvars,
            relaxation,
            exact_neg,
            distinct_vars,
        }
    }
}

/// Rules longer than this (positive literals, or `distinct`s) are not grounded.
const MAX_BODY: usize = 64;

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
    indexes: Vec<Index>,
    index_of: HashMap<(u32, Vec<Path>), usize>,
}

impl Model {
    fn new() -> Model {
        Model {
            pool: TermPool::new(),
            rel_of: HashMap::new(),
            rel_atoms: Vec::new(),
            atom_of: HashMap::new(),
            atoms: Vec::new(),
            pos_in_rel: Vec::new(),
            indexes: Vec::new(),
            index_of: HashMap::new(),
        }
    }

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
        true
    }
}

/// Grounds `game` within `limits`.
/// When it stops for its size, the error names the relations whose rule
/// instances it held most of ([`GroundError::heaviest`]).
pub fn ground(game: &Game, limits: &Limits) -> Result<GroundProgram, GroundError> {
    let (g, rules, result) = run_grounder(game, limits);
    if let Err(mut e) = result {
        e.set_heaviest(g.heaviest(game));
        return Err(e);
    }
    Ok(g.finish(&rules))
}

/// Runs the grounder as far as `limits` let it: the grounder (its model and
/// the rule instances found), the compiled rules, and why it stopped early.
fn run_grounder(game: &Game, limits: &Limits) -> (Grounder, Vec<CRule>, Result<(), GroundError>) {
    let start = ThreadWatch::start();
    let mut model = Model::new();
    let mut rules: Vec<CRule> = game
        .rules
        .iter()
        .zip(&game.rule_phase)
        .map(|(r, phase)| compile_rule(game, r, *phase, &mut model))
        .collect();
    rules.extend(relaxation_rules(&mut model));
    let long = rules.iter().zip(&game.rules).find_map(|(r, src)| {
        (r.pos.len() > MAX_BODY || r.distinct.len() > MAX_BODY).then_some(src.pos.line)
    });
    let mut g = Grounder {
        model,
        out: Vec::new(),
        limits: *limits,
        start,
        ticks: 0,
        rule_bytes: 0,
        ranges: Vec::new(),
        new_atoms: Vec::new(),
        pending: HashSet::new(),
    };
    if !game.top_down.is_empty() {
        let names: Vec<String> = game
            .top_down
            .iter()
            .map(|r| r.display(&game.symbols))
            .collect();
        return (g, rules, Err(GroundError::TopDownOnly(names.join(", "))));
    }
    if let Some(line) = long {
        let e = GroundError::LongRule {
            line,
            limit: MAX_BODY,
        };
        return (g, rules, Err(e));
    }
    let result = (|| {
        for c in game.components.iter().filter(|c| c.phase == Phase::Static) {
            g.fixpoint(&rules, &c.rules)?;
        }
        let dynamic: Vec<usize> = (0..rules.len())
            .filter(|&i| i >= game.rules.len() || game.rule_phase[i] != Phase::Static)
            .collect();
        g.fixpoint(&rules, &dynamic)
    })();
    (g, rules, result)
}

struct Grounder {
    model: Model,
    /// Found instances: head term, positive atoms, negative literals.
    out: Vec<(TermId, Vec<AtomId>, Vec<NegLit>)>,
    limits: Limits,
    start: ThreadWatch,
    ticks: u64,
    /// Bytes the rule instances in `out` hold.
    rule_bytes: usize,
    /// Per relation this round: atoms `[0, lo)` are old, `[lo, hi)` the delta.
    ranges: Vec<(usize, usize)>,
    /// Heads found this round, added to the model at the round's end.
    new_atoms: Vec<(u32, TermId)>,
    pending: HashSet<TermId>,
}

/// One rule's join under way: the rule (number `ri`), its literal restricted
/// to the delta (`usize::MAX`: none), and the bindings with the trail that
/// undoes them.
struct RuleJoin<'a> {
    rule: &'a CRule,
    ri: usize,
    delta: usize,
    b: Vec<TermId>,
    trail: Vec<u16>,
    /// The atom each positive literal is joined with so far (by position
    /// in the body): the instance's body, without finding its atoms again.
    matched: Vec<TermId>,
}

impl<'a> RuleJoin<'a> {
    /// Rule `ri` of `rules`, nothing bound yet.
    fn new(rules: &'a [CRule], ri: usize, delta: usize) -> Self {
        RuleJoin {
            rule: &rules[ri],
            ri,
            delta,
            b: vec![UNBOUND; rules[ri].nvars],
            trail: Vec::new(),
            matched: vec![UNBOUND; rules[ri].pos.len()],
        }
    }
}

/// A bit for each of `n` positive literals (at most [`MAX_BODY`]).
fn every(n: usize) -> u64 {
    if n == 0 {
        0
    } else {
        u64::MAX >> (64 - n)
    }
}

impl Grounder {
    /// Runs rules `which` to their fixpoint, semi-naively: the first round
    /// joins them over every atom known, each later one with one positive
    /// literal restricted to the atoms the round before added, so each
    /// instance is found once.
    fn fixpoint(&mut self, rules: &[CRule], which: &[usize]) -> Result<(), GroundError> {
        let nrel = self.model.rel_atoms.len();
        self.flush()?;
        self.ranges = self
            .model
            .rel_atoms
            .iter()
            .map(|a| (a.len(), a.len()))
            .collect();
        for &ri in which {
            let mut join = RuleJoin::new(rules, ri, usize::MAX);
            self.run(&mut join, every(rules[ri].pos.len()), 0)?;
        }
        loop {
            // Atoms found last round become this round's delta.
            let old: Vec<usize> = self.ranges.iter().map(|&(_, hi)| hi).collect();
            self.flush()?;
            self.ranges = (0..nrel)
                .map(|r| (old[r], self.model.rel_atoms[r].len()))
                .collect();
            if self.ranges.iter().all(|&(lo, hi)| lo == hi) {
                return Ok(());
            }
            for &ri in which {
                let r = &rules[ri];
                for d in 0..r.pos.len() {
                    let (lo, hi) = self.ranges[r.pos[d].0 as usize];
                    if lo == hi {
                        continue;
                    }
                    let mut join = RuleJoin::new(rules, ri, d);
                    self.run(&mut join, every(r.pos.len()), 0)?;
                }
            }
        }
    }

    /// The ground program: negative literals left open are resolved against
    /// the model, now complete.
    fn finish(self, rules: &[CRule]) -> GroundProgram {
        let Grounder {
            model, out, ticks, ..
        } = self;
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
            ground_rules.push(GroundRule {
                head: model.atom_of[&head],
                pos,
                neg: neg_atoms,
            });
        }
        GroundProgram {
            pool: model.pool,
            atoms: model.atoms,
            atom_of: model.atom_of,
            rules: ground_rules,
            join_steps: ticks,
        }
    }

    /// The three relations with the most rule instances found, most first.
    fn heaviest(&self, game: &Game) -> Vec<Relation> {
        let pool = &self.model.pool;
        let mut per: HashMap<(Sym, usize), usize> = HashMap::new();
        for (head, _, _) in &self.out {
            let arity = if pool.is_const(*head) {
                0
            } else {
                pool.args(*head).len()
            };
            *per.entry((pool.functor(*head), arity)).or_default() += 1;
        }
        let mut per: Vec<((Sym, usize), usize)> = per.into_iter().collect();
        per.sort_by(|a, b| {
            b.1.cmp(&a.1).then_with(|| {
                game.symbols
                    .name(a.0 .0)
                    .cmp(game.symbols.name(b.0 .0))
                    .then(a.0 .1.cmp(&b.0 .1))
            })
        });
        per.into_iter()
            .take(3)
            .map(|((name, arity), _)| Relation { name, arity })
            .collect()
    }

    fn flush(&mut self) -> Result<(), GroundError> {
        for (rel, t) in std::mem::take(&mut self.new_atoms) {
            self.model.insert(rel, t);
        }
        self.pending.clear();
        self.check_memory()
    }

    /// The bytes the grounding holds now (see [`Limits::max_memory`]).
    fn memory(&self) -> usize {
        let atoms = self.model.atoms.len() + self.new_atoms.len();
        self.model.pool.bytes() + atoms * ATOM_BYTES + self.rule_bytes
    }

    fn check_memory(&self) -> Result<(), GroundError> {
        if self.memory() > self.limits.max_memory {
            return Err(GroundError::TooMuchMemory {
                limit: self.limits.max_memory,
                atoms: self.model.atoms.len() + self.new_atoms.len(),
                rules: self.out.len(),
                join_steps: self.ticks,
                heaviest: Heaviest::default(),
            });
        }
        Ok(())
    }

    fn tick(&mut self) -> Result<(), GroundError> {
        self.ticks += 1;
        if self.ticks > self.limits.max_join_steps {
            return Err(GroundError::TooMuchWork {
                limit: self.limits.max_join_steps,
                heaviest: Heaviest::default(),
            });
        }
        if self.ticks.is_multiple_of(4096) {
            if self.start.elapsed() > self.limits.max_time {
                return Err(GroundError::TooSlow {
                    limit: self.limits.max_time,
                    join_steps: self.ticks,
                    heaviest: Heaviest::default(),
                });
            }
            if crate::cancel::requested() {
                return Err(GroundError::Cancelled);
            }
        }
        Ok(())
    }

    /// Joins the positive literals in `todo` (a bit per literal) under
    /// `join.b`, then emits the instance. The order is chosen as the join
    /// goes: literal `join.delta` first (restricted to the delta; literals
    /// before it in the body to old atoms), then always the literal with the
    /// fewest candidates under the bindings so far; each `distinct` is
    /// checked as soon as its variables are bound (`checked` has a bit per
    /// `distinct` done).
    fn run(&mut self, join: &mut RuleJoin, todo: u64, mut checked: u64) -> Result<(), GroundError> {
        let (r, delta) = (join.rule, join.delta);
        for (k, (x, y)) in r.distinct.iter().enumerate() {
            if checked >> k & 1 == 1 {
                continue;
            }
            let bound = r.distinct_vars[k]
                .iter()
                .all(|&v| join.b[v as usize] != UNBOUND);
            if bound || todo == 0 {
                let (tx, ty) = (
                    x.find(&join.b, &self.model.pool),
                    y.find(&join.b, &self.model.pool),
                );
                // A term never interned differs from every interned one.
                if tx.is_some() && tx == ty {
                    return Ok(());
                }
                checked |= 1 << k;
            }
        }
        if todo == 0 {
            return self.emit(join.ri, r, &join.b, &join.matched);
        }
        let i = if delta < 64 && todo >> delta & 1 == 1 {
            delta
        } else {
            let mut best = (usize::MAX, 0);
            let mut rest = todo;
            while rest != 0 {
                let j = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                let (rel, pat) = &r.pos[j];
                let bucket = self.bucket(*rel, pat, &join.b);
                let n = self.bucket_size(&bucket, *rel);
                if n < best.0 {
                    best = (n, j);
                }
            }
            best.1
        };
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
        let cands: Vec<u32> = match self.bucket(*rel, pat, &join.b) {
            Bucket::All => (lo as u32..hi as u32).collect(),
            Bucket::Empty => Vec::new(),
            Bucket::One(p) => vec![p],
            Bucket::Index(slot, key) => match self.model.indexes[slot].map.get(&key) {
                None => Vec::new(),
                Some(v) => {
                    let s = v.partition_point(|&p| (p as usize) < lo);
                    let e = v.partition_point(|&p| (p as usize) < hi);
                    v[s..e].to_vec()
                }
            },
        };
        let mark = join.trail.len();
        let todo = todo & !(1 << i);
        for p in cands {
            if !(lo..hi).contains(&(p as usize)) {
                continue;
            }
            self.tick()?;
            let t = self.model.rel_atoms[*rel as usize][p as usize];
            if pat.unify(t, &mut join.b, &mut join.trail, &self.model.pool) {
                join.matched[i] = t;
                self.run(join, todo, checked)?;
            }
            undo(&mut join.b, &mut join.trail, mark);
        }
        Ok(())
    }

    /// Where the atoms of `rel` that can match `pat` under `b` are: the atom
    /// itself when the pattern is ground, else the bucket of an index on every
    /// bound part of the pattern (arguments, and arguments of arguments), or all.
    fn bucket(&mut self, rel: u32, pat: &Pat, b: &[TermId]) -> Bucket {
        let pool = &self.model.pool;
        if let Some(t) = pat.find(b, pool) {
            return match self.model.atom_of.get(&t) {
                Some(&a) => Bucket::One(self.model.pos_in_rel[a as usize]),
                None => Bucket::Empty,
            };
        }
        let Pat::Func(_, args) = pat else {
            return Bucket::All;
        };
        let mut paths = Vec::new();
        let mut key = Vec::new();
        for (i, a) in args.iter().enumerate() {
            if let Some(t) = a.find(b, pool) {
                paths.push(Path {
                    arg: i as u16,
                    sub: None,
                });
                key.push(t);
            } else if let Pat::Func(f, sub) = a {
                for (j, s) in sub.iter().enumerate() {
                    if let Some(t) = s.find(b, pool) {
                        paths.push(Path {
                            arg: i as u16,
                            sub: Some((*f, sub.len() as u16, j as u16)),
                        });
                        key.push(t);
                    }
                }
            } else if !matches!(a, Pat::Var(_)) {
                // A bound ground part that was never interned matches nothing.
                return Bucket::Empty;
            }
        }
        if paths.is_empty() {
            return Bucket::All;
        }
        let slot = match self.model.index_of.get(&(rel, paths.clone())) {
            Some(&s) => s,
            None => {
                self.model.indexes.push(Index {
                    rel,
                    paths: paths.clone(),
                    covered: 0,
                    map: HashMap::new(),
                });
                let s = self.model.indexes.len() - 1;
                self.model.index_of.insert((rel, paths), s);
                s
            }
        };
        let m = &mut self.model;
        let ix = &mut m.indexes[slot];
        let atoms = &m.rel_atoms[ix.rel as usize];
        while ix.covered < atoms.len() {
            let t = atoms[ix.covered];
            let k: Option<Vec<TermId>> = ix.paths.iter().map(|p| p.get(t, &m.pool)).collect();
            if let Some(k) = k {
                ix.map.entry(k).or_default().push(ix.covered as u32);
            }
            ix.covered += 1;
        }
        Bucket::Index(slot, key)
    }

    fn bucket_size(&self, bucket: &Bucket, rel: u32) -> usize {
        match bucket {
            Bucket::All => self.model.rel_atoms[rel as usize].len(),
            Bucket::Empty => 0,
            Bucket::One(_) => 1,
            Bucket::Index(slot, key) => self.model.indexes[*slot].map.get(key).map_or(0, Vec::len),
        }
    }

    fn emit(
        &mut self,
        ri: usize,
        r: &CRule,
        b: &[TermId],
        matched: &[TermId],
    ) -> Result<(), GroundError> {
        for (k, (_, p)) in r.neg.iter().enumerate() {
            if !r.exact_neg[k] {
                continue;
            }
            if !p.is_bound(b) {
                continue;
            }
            if let Some(t) = p.find(b, &self.model.pool) {
                if self.model.atom_of.contains_key(&t) {
                    return Ok(());
                }
            }
        }
        let head = r.head.build(b, &mut self.model.pool);
        let rel = self.model.rel_of[&(
            self.model.pool.functor(head),
            self.model.pool.args(head).len(),
        )];
        if !self.model.atom_of.contains_key(&head) && self.pending.insert(head) {
            self.new_atoms.push((rel, head));
            if self.new_atoms.len().is_multiple_of(1024) {
                self.check_memory()?;
            }
        }
        if r.relaxation {
            return Ok(());
        }
        let pos: Vec<AtomId> = matched.iter().map(|t| self.model.atom_of[t]).collect();
        let mut neg = Vec::with_capacity(r.neg.len());
        for (k, (_, p)) in r.neg.iter().enumerate() {
            if p.is_bound(b) {
                neg.push(NegLit::Atom(p.build(b, &mut self.model.pool)));
            } else {
                neg.push(NegLit::Open {
                    rule: ri as u32,
                    lit: k as u16,
                    b: b.into(),
                });
            }
        }
        self.rule_bytes += RULE_BYTES
            + pos.len() * std::mem::size_of::<AtomId>()
            + neg
                .iter()
                .map(|n| match n {
                    NegLit::Atom(_) => std::mem::size_of::<NegLit>(),
                    NegLit::Open { b, .. } => {
                        std::mem::size_of::<NegLit>() + b.len() * std::mem::size_of::<TermId>()
                    }
                })
                .sum::<usize>();
        self.out.push((head, pos, neg));
        if self.out.len().is_multiple_of(1024) {
            self.check_memory()?;
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

/// Candidate positions in a relation's atom list.
enum Bucket {
    All,
    Empty,
    One(u32),
    /// The bucket of index `slot` for key values.
    Index(usize, Vec<TermId>),
}

#[cfg(test)]
mod tests;
