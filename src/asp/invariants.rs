//! State invariants proven by induction, added to the encodings as redundant
//! constraints.
//!
//! Planning as satisfiability is much faster when the solver knows which fluents
//! exclude each other (Rintanen, "Planning as satisfiability: heuristics", 2012;
//! Fawcett's and Helmert's invariant synthesis). GDL states are plain sets of
//! fluents, so such knowledge has to be found: for every fluent function `f/n` and
//! every proper subset K of its argument positions, the candidate "at most one true
//! `f` fluent per value of the arguments in K" (`(cell ?x ?y ?z)`: one content per
//! square, K = {x, y}; `(step ?n)`: one step, K = {}).
//!
//! A candidate set is proven the usual way, as a greatest fixpoint: every candidate
//! must hold in the initial state, and from any state where all surviving
//! candidates hold, no legal joint move may lead to a state violating one. clingo
//! checks the second part on a one-step program whose state at step 0 is free (a
//! choice over every fluent of the relaxed game); each model it finds is a
//! transition that breaks some candidates, which are dropped, until no model is
//! left. The survivors hold in every reachable state, so adding them as constraints
//! removes no plan, and they prune much of clasp's search where fluents exclude
//! each other (Towers of Hanoi, corpus `hanoi`, 31 moves).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;
use std::time::{Duration, Instant};

use clingo::{
    Control, Part, ShowType, Signature, SolveMode, SolverLiteral, Symbol, SymbolType, TruthValue,
};

use super::control::err;
use super::translate::{RuleKind, Translation};
use crate::gdl::{kw, split, Game, Relation, Term};

/// The game-independent parts: `#program relaxed.` and `#program step.`.
pub const INVARIANTS_LP: &str = include_str!("../../encodings/invariants.lp");

/// A fluent schema: a function symbol and its number of arguments.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Schema {
    pub functor: String,
    pub arity: usize,
}

/// A state invariant over fluent schemas.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Invariant {
    /// At most one true fluent of the schema per value of the arguments at `key`
    /// (positions counted from 0): `(cell ?x ?y ?z)` with key {0, 1}.
    Unique { schema: Schema, key: Vec<usize> },
    /// No true fluent of `a` together with a true fluent of `b` that agrees with it
    /// on the paired positions: `(clear ?y)` and `(on ?x ?y)`, pairs [(0, 1)].
    Exclusive {
        a: Schema,
        b: Schema,
        pairs: Vec<(usize, usize)>,
    },
}

/// The most candidates tried (the cheapest); over this many before costing, the
/// pairwise ones go first.
const MAX_CANDIDATES: usize = 3000;
/// The most fluent pairs the candidates may compare, each and together.
const MAX_PAIRS: u64 = 100_000;
/// Schemas with more arguments than this are not looked at (2^n keys).
const MAX_ARITY: usize = 6;
/// Pairwise candidates only between schemas of at most this many arguments.
const MAX_PAIR_ARITY: usize = 3;

impl Invariant {
    /// The atoms of `pred` (`holds` or `next`) at `now` that break it, with the
    /// comparison they need: `holds(cell(A0,A1,A2),T), holds(cell(A0,A1,B2),T),
    /// A2 != B2`.
    fn body(&self, pred: &str, now: &str) -> String {
        let atom = |s: &Schema, vars: &[String]| {
            format!("{pred}({}({}),{now})", s.functor, vars.join(","))
        };
        match self {
            Invariant::Unique { schema, key } => {
                let a: Vec<String> = (0..schema.arity).map(|i| format!("A{i}")).collect();
                let b: Vec<String> = (0..schema.arity)
                    .map(|i| {
                        if key.contains(&i) {
                            format!("A{i}")
                        } else {
                            format!("B{i}")
                        }
                    })
                    .collect();
                let rest: Vec<usize> = (0..schema.arity).filter(|i| !key.contains(i)).collect();
                let tuple = |v: &[String]| {
                    let parts: Vec<&str> = rest.iter().map(|&i| v[i].as_str()).collect();
                    if parts.len() == 1 {
                        parts[0].to_string()
                    } else {
                        format!("({})", parts.join(","))
                    }
                };
                format!(
                    "{}, {}, {} != {}",
                    atom(schema, &a),
                    atom(schema, &b),
                    tuple(&a),
                    tuple(&b)
                )
            }
            Invariant::Exclusive { a, b, pairs } => {
                let av: Vec<String> = (0..a.arity).map(|i| format!("A{i}")).collect();
                let bv: Vec<String> = (0..b.arity)
                    .map(|j| match pairs.iter().find(|p| p.1 == j) {
                        Some(&(i, _)) => format!("A{i}"),
                        None => format!("B{j}"),
                    })
                    .collect();
                format!("{}, {}", atom(a, &av), atom(b, &bv))
            }
        }
    }

    /// The invariant as an integrity constraint on the state at time `now`.
    pub fn constraint(&self, now: &str) -> String {
        format!(":- {}.", self.body("holds", now))
    }

    /// A readable statement for the comment above the constraint.
    pub fn describe(&self) -> String {
        match self {
            Invariant::Unique { schema, key } => {
                let args: Vec<String> = (0..schema.arity)
                    .map(|i| {
                        if key.contains(&i) {
                            format!("K{i}")
                        } else {
                            "_".to_string()
                        }
                    })
                    .collect();
                format!(
                    "at most one {}({}){}",
                    schema.functor,
                    args.join(","),
                    if key.is_empty() { "" } else { " per K" }
                )
            }
            Invariant::Exclusive { a, b, pairs } => {
                let av: Vec<String> = (0..a.arity).map(|i| format!("X{i}")).collect();
                let bv: Vec<String> = (0..b.arity)
                    .map(|j| match pairs.iter().find(|p| p.1 == j) {
                        Some(&(i, _)) => format!("X{i}"),
                        None => "_".to_string(),
                    })
                    .collect();
                format!(
                    "never {}({}) and {}({}) together",
                    a.functor,
                    av.join(","),
                    b.functor,
                    bv.join(",")
                )
            }
        }
    }

    /// Whether it holds in a state (a set of fluents as clingo symbols).
    pub fn holds_in(&self, state: &[Symbol]) -> bool {
        !self.broken_by(state)
    }

    /// Whether a set of fluents (the initial state) breaks it.
    fn broken_by(&self, fluents: &[Symbol]) -> bool {
        match self {
            Invariant::Unique { schema, key } => {
                let mut seen: HashMap<Vec<Symbol>, Vec<Symbol>> = HashMap::new();
                for f in fluents {
                    let Some(args) = args_of(f, schema) else {
                        continue;
                    };
                    let k: Vec<Symbol> = key.iter().map(|&i| args[i]).collect();
                    let rest: Vec<Symbol> = (0..schema.arity)
                        .filter(|i| !key.contains(i))
                        .map(|i| args[i])
                        .collect();
                    match seen.get(&k) {
                        Some(r) if *r != rest => return true,
                        Some(_) => {}
                        None => {
                            seen.insert(k, rest);
                        }
                    }
                }
                false
            }
            Invariant::Exclusive { a, b, pairs } => {
                let left = projections(fluents, a, pairs.iter().map(|p| p.0));
                let right = projections(fluents, b, pairs.iter().map(|p| p.1));
                left.intersection(&right).next().is_some()
            }
        }
    }

    /// How many pairs of fluents of `fluents` the constraint compares.
    fn pairs(&self, fluents: &[Symbol]) -> u64 {
        let mut groups: HashMap<Vec<Symbol>, (u64, u64)> = HashMap::new();
        match self {
            Invariant::Unique { schema, key } => {
                for args in fluents.iter().filter_map(|f| args_of(f, schema)) {
                    groups
                        .entry(key.iter().map(|&i| args[i]).collect())
                        .or_default()
                        .0 += 1;
                }
                groups.values().map(|(n, _)| n * n).sum()
            }
            Invariant::Exclusive { a, b, pairs } => {
                for args in fluents.iter().filter_map(|f| args_of(f, a)) {
                    groups
                        .entry(pairs.iter().map(|p| args[p.0]).collect())
                        .or_default()
                        .0 += 1;
                }
                for args in fluents.iter().filter_map(|f| args_of(f, b)) {
                    groups
                        .entry(pairs.iter().map(|p| args[p.1]).collect())
                        .or_default()
                        .1 += 1;
                }
                groups.values().map(|(x, y)| x * y).sum()
            }
        }
    }

    /// Whether `self` follows from `other` (a smaller key of the same schema).
    fn implied_by(&self, other: &Invariant) -> bool {
        match (self, other) {
            (
                Invariant::Unique { schema, key },
                Invariant::Unique {
                    schema: s2,
                    key: k2,
                },
            ) => schema == s2 && k2.len() < key.len() && k2.iter().all(|k| key.contains(k)),
            _ => false,
        }
    }
}

/// The arguments at `positions` of every fluent of `schema`.
fn projections(
    fluents: &[Symbol],
    schema: &Schema,
    positions: impl Iterator<Item = usize> + Clone,
) -> HashSet<Vec<Symbol>> {
    fluents
        .iter()
        .filter_map(|f| args_of(f, schema))
        .map(|args| positions.clone().map(|i| args[i]).collect())
        .collect()
}

/// The pairings of `k` positions of an `n`-ary schema with `k` of an `m`-ary one.
fn pairings(n: usize, m: usize) -> Vec<Vec<(usize, usize)>> {
    fn go(
        i: usize,
        n: usize,
        m: usize,
        cur: &mut Vec<(usize, usize)>,
        out: &mut Vec<Vec<(usize, usize)>>,
    ) {
        if i == n {
            if !cur.is_empty() {
                out.push(cur.clone());
            }
            return;
        }
        go(i + 1, n, m, cur, out);
        for j in 0..m {
            if cur.iter().all(|p| p.1 != j) {
                cur.push((i, j));
                go(i + 1, n, m, cur, out);
                cur.pop();
            }
        }
    }
    let mut out = Vec::new();
    go(0, n, m, &mut Vec::new(), &mut out);
    out
}

/// The arguments of `f` when it is of `schema`.
fn args_of(f: &Symbol, schema: &Schema) -> Option<Vec<Symbol>> {
    if f.symbol_type().ok()? != SymbolType::Function || f.name().ok()? != schema.functor {
        return None;
    }
    let args = f.arguments().ok()?;
    (args.len() == schema.arity).then_some(args)
}

/// What the search found, for the progress line.
pub struct Report {
    pub invariants: Vec<Invariant>,
    pub candidates: usize,
    pub rounds: usize,
    pub seconds: f64,
}

/// The rules of the translation at time `now` (static ones time-free), with the
/// negative literals over timed atoms left out when `relaxed`. Those over
/// static relations stay: gringo decides them exactly, and without them a
/// maze's static walls would stop nothing.
pub(super) fn rules_text(tr: &Translation, now: &str, relaxed: bool) -> String {
    let mut out = String::new();
    for r in &tr.rules {
        let mut r = r.clone();
        if relaxed {
            r.body
                .retain(|l| !matches!(l, super::translate::Lit::Neg(a) if a.timed));
        }
        let t = if r.kind == RuleKind::Static { "" } else { now };
        let _ = writeln!(out, "{}", r.render(t, None));
    }
    out
}

/// A control holding `base` (the game's rules and what the caller adds) and the
/// `part` of `encodings/invariants.lp`, grounded.
pub(super) fn ground(base: &str, part: &str) -> Result<Control, String> {
    let mut ctl = super::control::new(&[])?;
    ctl.add("base", &[], &format!("{base}\n{INVARIANTS_LP}"))
        .map_err(err)?;
    ctl.ground(&[
        Part::new("base", vec![]).map_err(err)?,
        Part::new(part, vec![]).map_err(err)?,
    ])
    .map_err(err)?;
    Ok(ctl)
}

/// Conflicts per solve call of the invariant search: between calls it reads
/// its CPU time against the budget (clasp keeps what it learnt from one call
/// to the next, so the chunks add up to one search).
const CONFLICTS_PER_CALL: u32 = 500;

/// Finds the invariants of a translated game within `budget` of CPU time of
/// the calling thread, which grounds and solves (one solver thread, run
/// synchronously), so that a busy machine finds what an idle one does, only
/// later; none when the budget runs out (a half-refined candidate set proves
/// nothing). Waiting for another solver of the process to let go of clingo
/// (see [`super::control::lock`]) is not counted either.
pub fn find(tr: &Translation, budget: Duration) -> Result<Report, String> {
    let _guard = super::control::lock();
    find_locked(tr, budget)
}

/// [`find`], for a caller that holds clingo's lock already.
pub(super) fn find_locked(tr: &Translation, budget: Duration) -> Result<Report, String> {
    find_locked_within(tr, budget, u64::MAX)
}

/// [`find`], also giving up after `max_chunks` solve calls that ended
/// undecided ([`CONFLICTS_PER_CALL`] conflicts each): a count of clasp's
/// work, the same on a busy machine as on an idle one, where `budget` (CPU
/// time, which a loaded machine inflates) is then only a safety net.
pub fn find_within(tr: &Translation, budget: Duration, max_chunks: u64) -> Result<Report, String> {
    let _guard = super::control::lock();
    find_locked_within(tr, budget, max_chunks)
}

fn find_locked_within(
    tr: &Translation,
    budget: Duration,
    max_chunks: u64,
) -> Result<Report, String> {
    let start = Instant::now();
    let work = crate::cputime::ThreadWatch::start();
    let (fluents, init) = relaxed_fluents(tr)?;
    let candidates = candidates(&fluents, &init);
    let report = |invariants: Vec<Invariant>, rounds: usize| Report {
        invariants,
        candidates: candidates.len(),
        rounds,
        seconds: start.elapsed().as_secs_f64(),
    };
    if candidates.is_empty() {
        return Ok(report(Vec::new(), 0));
    }
    let mut step = Step::ground(tr, &fluents, &candidates)?;
    let grounded = work.elapsed();
    let mut rounds = 0;
    let mut chunks = 0u64;
    loop {
        rounds += 1;
        match step.round(&work, budget, max_chunks, &mut chunks)? {
            Round::Broken(broken) => step.drop_candidates(broken)?,
            Round::Proven => break,
            Round::OutOfTime => {
                tracing::debug!(
                    "invariants: out of time after {rounds} rounds, {chunks} unfinished chunks of {CONFLICTS_PER_CALL} conflicts, {:.2} s CPU ({:.2} s grounding)",
                    work.elapsed().as_secs_f64(),
                    grounded.as_secs_f64()
                );
                return Ok(report(Vec::new(), rounds));
            }
        }
    }
    tracing::debug!(
        "invariants: {rounds} rounds, {chunks} unfinished chunks of {CONFLICTS_PER_CALL} conflicts, {:.2} s CPU ({:.2} s grounding)",
        work.elapsed().as_secs_f64(),
        grounded.as_secs_f64()
    );
    Ok(report(strongest(&candidates, &step.alive), rounds))
}

/// Step 1: the fluents of the relaxed game (negation dropped, every legal move
/// taken, one time point), a superset of every reachable state, and those of
/// the initial state.
pub(super) fn relaxed_fluents(tr: &Translation) -> Result<(Vec<Symbol>, Vec<Symbol>), String> {
    let relaxed = rules_text(tr, "0", true);
    let ctl = ground(&relaxed, "relaxed")?;
    let mut fluents: Vec<Symbol> = Vec::new();
    let mut init: Vec<Symbol> = Vec::new();
    let atoms = ctl.symbolic_atoms().map_err(err)?;
    for a in atoms.iter().map_err(err)? {
        let s = a.symbol().map_err(err)?;
        let name = s.name().unwrap_or("");
        let args = s.arguments().unwrap_or_default();
        match (name, args.len()) {
            ("holds", 2) => fluents.push(args[0]),
            ("init", 1) => init.push(args[0]),
            _ => {}
        }
    }
    Ok((fluents, init))
}

/// Step 2: the candidates that hold in the initial state, the cheapest ones
/// that fit the limits.
fn candidates(fluents: &[Symbol], init: &[Symbol]) -> Vec<Invariant> {
    let by_schema = schemas(fluents);
    let mut candidates = unique_candidates(&by_schema);
    candidates.extend(exclusive_candidates(fluents, &by_schema));
    candidates.retain(|c| !c.broken_by(init));
    if candidates.len() > MAX_CANDIDATES {
        candidates.retain(|c| matches!(c, Invariant::Unique { .. }));
    }
    cheapest(candidates, fluents)
}

/// The fluent schemas of at most [`MAX_ARITY`] arguments, with how many
/// fluents each has.
fn schemas(fluents: &[Symbol]) -> BTreeMap<Schema, usize> {
    let mut by_schema: BTreeMap<Schema, usize> = BTreeMap::new();
    for f in fluents {
        if f.symbol_type().ok() == Some(SymbolType::Function) {
            let arity = f.arguments().map(|a| a.len()).unwrap_or(0);
            if (1..=MAX_ARITY).contains(&arity) {
                let functor = f.name().unwrap_or("").to_string();
                *by_schema.entry(Schema { functor, arity }).or_default() += 1;
            }
        }
    }
    by_schema
}

/// "At most one per key", for every proper subset of the arguments of every
/// schema with two fluents or more.
fn unique_candidates(by_schema: &BTreeMap<Schema, usize>) -> Vec<Invariant> {
    let mut candidates = Vec::new();
    for (schema, count) in by_schema {
        if *count < 2 {
            continue;
        }
        for mask in 0..(1u32 << schema.arity) - 1 {
            let key: Vec<usize> = (0..schema.arity).filter(|i| mask & (1 << i) != 0).collect();
            candidates.push(Invariant::Unique {
                schema: schema.clone(),
                key,
            });
        }
    }
    candidates
}

/// "Never both", for every pair of small schemas and every pairing of their
/// positions under which two of their fluents can agree at all.
fn exclusive_candidates(fluents: &[Symbol], by_schema: &BTreeMap<Schema, usize>) -> Vec<Invariant> {
    let mut candidates = Vec::new();
    let schemas: Vec<&Schema> = by_schema
        .keys()
        .filter(|s| s.arity <= MAX_PAIR_ARITY)
        .collect();
    for (x, a) in schemas.iter().enumerate() {
        for b in &schemas[x + 1..] {
            for pairs in pairings(a.arity, b.arity) {
                let left = projections(fluents, a, pairs.iter().map(|p| p.0));
                let right = projections(fluents, b, pairs.iter().map(|p| p.1));
                if left.intersection(&right).next().is_some() {
                    candidates.push(Invariant::Exclusive {
                        a: (*a).clone(),
                        b: (*b).clone(),
                        pairs,
                    });
                }
            }
        }
    }
    candidates
}

/// Each candidate grounds to one constraint per pair of fluents it compares
/// (twice: now and next); keep the step program small, cheapest first.
fn cheapest(candidates: Vec<Invariant>, fluents: &[Symbol]) -> Vec<Invariant> {
    let mut costed: Vec<(u64, Invariant)> = candidates
        .into_iter()
        .map(|c| (c.pairs(fluents), c))
        .filter(|(n, _)| *n <= MAX_PAIRS)
        .collect();
    costed.sort_by_key(|(n, _)| *n);
    let mut spent = 0;
    costed
        .into_iter()
        .take_while(|(n, _)| {
            spent += n;
            spent <= MAX_PAIRS
        })
        .take(MAX_CANDIDATES)
        .map(|(_, c)| c)
        .collect()
}

/// What one round of the step search found.
enum Round {
    /// A transition that breaks these candidates.
    Broken(Vec<usize>),
    /// No transition breaks a candidate still switched on: every survivor is
    /// proven.
    Proven,
    /// The budget ran out first.
    OutOfTime,
}

/// Step 3: one step from any state that satisfies the candidates switched on.
struct Step {
    /// Taken out only while it solves.
    ctl: Option<Control>,
    /// The literal of each candidate's switch `on(i)`.
    switch: Vec<Option<SolverLiteral>>,
    /// Whether each candidate is still switched on.
    alive: Vec<bool>,
}

impl Step {
    /// The step program, grounded, with every candidate switched on.
    fn ground(
        tr: &Translation,
        fluents: &[Symbol],
        candidates: &[Invariant],
    ) -> Result<Self, String> {
        let mut step = rules_text(tr, "0", false);
        for f in fluents {
            let _ = writeln!(step, "dom({f}).");
        }
        for (i, c) in candidates.iter().enumerate() {
            let _ = writeln!(step, "#external on({i}).");
            let _ = writeln!(step, ":- on({i}), {}.", c.body("holds", "0"));
            let _ = writeln!(step, "broken({i}) :- on({i}), {}.", c.body("next", "0"));
        }
        let mut ctl = ground(&step, "step")?;
        let mut switch = vec![None; candidates.len()];
        {
            let atoms = ctl.symbolic_atoms().map_err(err)?;
            let sig = Signature::new("on", 1, true).map_err(err)?;
            for a in atoms.iter_with_signature(sig).map_err(err)? {
                let s = a.symbol().map_err(err)?;
                let i = s.arguments().map_err(err)?[0].number().map_err(err)? as usize;
                switch[i] = Some(a.literal().map_err(err)?);
            }
        }
        for l in switch.iter().flatten() {
            ctl.assign_external(*l, TruthValue::True).map_err(err)?;
        }
        let conf = ctl.configuration_mut().map_err(err)?;
        let root = conf.root().map_err(err)?;
        let solve = conf.map_at(root, "solve").map_err(err)?;
        let limit = conf.map_at(solve, "solve_limit").map_err(err)?;
        conf.value_set(limit, &CONFLICTS_PER_CALL.to_string())
            .map_err(err)?;
        Ok(Step {
            ctl: Some(ctl),
            switch,
            alive: vec![true; candidates.len()],
        })
    }

    /// One round: a transition breaking some candidate, or none (every
    /// survivor proven), in chunks of conflicts between budget checks.
    fn round(
        &mut self,
        work: &crate::cputime::ThreadWatch,
        budget: Duration,
        max_chunks: u64,
        chunks: &mut u64,
    ) -> Result<Round, String> {
        loop {
            let (ctl, chunk) = solve_chunk(self.ctl.take().expect("a control"))?;
            self.ctl = Some(ctl);
            match chunk {
                Chunk::Model(broken) => return Ok(Round::Broken(broken)),
                Chunk::Unsatisfiable => return Ok(Round::Proven),
                // The chunk's conflicts ran out: go on while the budget lasts.
                Chunk::Unknown if work.elapsed() > budget || *chunks >= max_chunks => {
                    return Ok(Round::OutOfTime)
                }
                Chunk::Unknown => *chunks += 1,
            }
        }
    }

    /// Switches off the candidates a transition broke.
    fn drop_candidates(&mut self, broken: Vec<usize>) -> Result<(), String> {
        if broken.is_empty() {
            return Err("a step model without a broken candidate".into());
        }
        let ctl = self.ctl.as_mut().expect("a control");
        for i in broken {
            self.alive[i] = false;
            if let Some(l) = self.switch.get(i).copied().flatten() {
                ctl.assign_external(l, TruthValue::False).map_err(err)?;
            }
        }
        Ok(())
    }
}

/// What one solve call of [`CONFLICTS_PER_CALL`] conflicts found.
enum Chunk {
    /// A model: the candidates it breaks.
    Model(Vec<usize>),
    Unsatisfiable,
    /// The conflicts ran out first.
    Unknown,
}

/// One solve call on the step program, and the control back.
fn solve_chunk(ctl: Control) -> Result<(Control, Chunk), String> {
    let mut handle = ctl.solve(SolveMode::YIELD, &[]).map_err(err)?;
    if let Some(m) = handle.model().map_err(err)? {
        let broken = m
            .symbols(ShowType::SHOWN)
            .map_err(err)?
            .iter()
            .filter_map(|s| s.arguments().ok()?.first()?.number().ok())
            .map(|n| n as usize)
            .collect();
        handle.cancel().map_err(err)?;
        return Ok((handle.close().map_err(err)?, Chunk::Model(broken)));
    }
    let result = handle.get().map_err(err)?;
    let ctl = handle.close().map_err(err)?;
    if result.contains(clingo::SolveResult::UNSATISFIABLE) {
        Ok((ctl, Chunk::Unsatisfiable))
    } else {
        Ok((ctl, Chunk::Unknown))
    }
}

/// Step 4: the survivors, keeping the strongest: a key that holds makes every
/// larger key redundant.
fn strongest(candidates: &[Invariant], alive: &[bool]) -> Vec<Invariant> {
    let proven: Vec<&Invariant> = candidates
        .iter()
        .zip(alive)
        .filter_map(|(c, &a)| a.then_some(c))
        .collect();
    let mut invariants: Vec<Invariant> = proven
        .iter()
        .filter(|c| !proven.iter().any(|d| c.implied_by(d)))
        .map(|c| (*c).clone())
        .collect();
    invariants.sort();
    invariants
}

/// The unique-value invariants ("at most one `(mark ?i ?j _)` per cell") of
/// `play`, a game reduced to its rules for play (`legal`, `next`,
/// `terminal` and what they read): a game whose goal no grounder finishes
/// (sudoku's `exactlyOne`) still has a one-step program clingo grounds at
/// once, and what holds in every reachable state does not depend on the goal.
pub fn unique_keys(
    play: &Game,
    budget: Duration,
    max_chunks: u64,
) -> Result<Vec<split::Unique>, String> {
    let tr = super::translate::translate(play);
    let report = find_within(&tr, budget, max_chunks)?;
    // The fluents' function symbols, by their ASP spelling.
    let mut by_functor: HashMap<String, Relation> = HashMap::new();
    for rule in &play.rules {
        if matches!(rule.head.name(), Some(kw::INIT | kw::NEXT)) {
            if let Some(rel) = rule.head.args().first().and_then(Term::relation) {
                by_functor.insert(tr.map.functor(rel.name).to_string(), rel);
            }
        }
    }
    Ok(report
        .invariants
        .into_iter()
        .filter_map(|i| match i {
            Invariant::Unique { schema, key } => {
                let fluent = *by_functor.get(&schema.functor)?;
                (fluent.arity == schema.arity).then_some(split::Unique { fluent, key })
            }
            Invariant::Exclusive { .. } => None,
        })
        .collect())
}
