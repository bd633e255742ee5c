//! Parallel steps: which moves of a single-player game commute and never
//! disable each other, read off the ground rules, and the program in which
//! such moves share a step (∀-step semantics; Rintanen, Heljanko and Niemelä,
//! "Planning as satisfiability: parallel plans and algorithms for plan
//! search", 2006).
//!
//! The time-indexed encodings place one move per step, so a fill-in puzzle of
//! 50 blanks needs a horizon of 50, and clasp relearns at every step what it
//! learnt at the one before. Yet the order of two fills does not matter. Here
//! every ground move `m` gets, from the ground rules with `does(m)` the only
//! move made:
//! - *writes(m)*: the fluents whose `next` is not simply `true` of themselves
//!   (sudoku's frame rules keep a cell only "when some other cell is marked":
//!   under `m` alone that reads as plain inertia, except for `m`'s own cell);
//! - *its effect* on each fluent it writes: a disjunction of conjunctions over
//!   state and static atoms (the `next` rules with the `does` literals and
//!   the relations that read `does` evaluated for `m`);
//! - *reads(m)*: the fluents its `legal` atom and its effects depend on,
//!   through any chain of derived relations.
//!
//! Two moves *interfere* in a state when one of them changes a fluent that
//! the other reads or writes; the program checks this in the state at hand
//! (a sudoku mark "writes" every value of its cell, but changes only the
//! blank and its own value). A set of moves legal in a state, no two of which
//! interfere, can be made in any order with the same result: each move finds
//! what it reads as it was, so it stays legal and has the same effects, and
//! no fluent is changed by one move and set by another. The program
//! ([`ParallelSteps::program`]) lets any such non-empty set share a step; a
//! pure fill-in puzzle becomes a constraint problem at horizon one. Its plans
//! are serialised step by step and replayed on the prover like every plan:
//! what the analysis cannot promise is that no intermediate state of the
//! serialisation ends the game early (the replay checks that).
//!
//! What a parallel horizon proves: a serial plan of `k` moves is a parallel
//! plan of `k` steps, so no parallel plan within `h` steps means no plan of
//! `h` or fewer moves; the parallel plan's own length proves nothing (a
//! shorter serial plan may need more steps). The program is also the
//! *free-state* check ([`ParallelSteps::free_state`]): whether any set of
//! fluents at all is a terminal state with a goal above 0; when none is, no
//! play can score (nonogram_10x10_1's clues contradict each other).
//!
//! A fluent that changes whatever the move (a step counter) is written by
//! every move, so no two moves share a step there. The analysis declines
//! (with the reason) where a relation that reads `does` is negated under a
//! condition on the state, or where the work or the conflicts grow past
//! fixed bounds.

use std::collections::BTreeSet;
use std::fmt::Write;

use hashbrown::{HashMap, HashSet};

use crate::gdl::{kw, Game, Term};
use crate::reasoner::ground::{AtomId, GroundProgram};

use super::symbols::SymbolMap;

/// The game-independent part of the parallel program.
pub const PARALLEL_LP: &str = include_str!("../../encodings/parallel.lp");
/// The game-independent part of the free-state check.
pub const FREE_STATE_LP: &str = include_str!("../../encodings/free_state.lp");

/// The most conjunctions an effect or a relation reading `does` may expand to.
const MAX_CONJUNCTIONS: usize = 64;
/// The most pairs of moves that may interfere counted (for
/// [`ParallelSteps::independent`]).
const MAX_CONFLICTS: usize = 2_000_000;
/// The most (fluent, move) pairs and rule visits the analysis spends.
const MAX_WORK: u64 = 200_000_000;

/// A literal over an atom of the state or a static relation: the atom and
/// whether it is positive.
type Lit = (AtomId, bool);
/// A conjunction, its literals sorted.
type Conj = Vec<Lit>;
/// A disjunction of conjunctions: empty is false, `[[]]` is true.
type Dnf = Vec<Conj>;

/// What the analysis found, and the program it makes.
pub struct ParallelSteps {
    /// Ground moves of the (one) role.
    pub moves: usize,
    /// Pairs of moves that interfere in some state, as far as the rules
    /// tell: one writes what the other reads or writes.
    pub conflicts: usize,
    /// The ground rules about states and static relations, as ASP text.
    rules: String,
    /// `reads/2` and `writes/2` facts and `effect/3` rules.
    moves_text: String,
    /// `fluent/1` facts: every fluent of the ground program.
    fluents: String,
}

impl ParallelSteps {
    /// The share of pairs of moves that never interfere.
    pub fn independent(&self) -> f64 {
        let pairs = self.moves * self.moves.saturating_sub(1) / 2;
        if pairs == 0 {
            return 0.0;
        }
        1.0 - self.conflicts as f64 / pairs as f64
    }

    /// The parallel program, without the `horizon(H).` fact.
    pub fn program(&self, name: &str) -> String {
        format!(
            "% ggp-asp: {name} as answer set program (parallel steps)\n\
             % {} moves, {} pairs of them may interfere (see src/asp/parallel.rs)\n\
             \n% --- The game's ground rules about states (at step T) and static relations.\n{}\
             \n% --- What each move reads and writes, and its effects.\n{}\
             \n{PARALLEL_LP}",
            self.moves, self.conflicts, self.rules, self.moves_text
        )
    }

    /// The free-state program: satisfiable when some set of fluents is a
    /// terminal state in which the role's goal is above 0.
    pub fn free_state(&self) -> String {
        format!("{}{}\n{FREE_STATE_LP}", self.rules, self.fluents)
    }
}

/// What an atom of the ground program is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    True,
    /// A `does` atom: the index of its move.
    Does(usize),
    Next,
    Legal,
    Goal,
    Terminal,
    Init,
    Role,
    Derived,
}

struct Analysis<'a> {
    g: &'a GroundProgram,
    /// The game's symbols, to name atoms in messages.
    symbols: &'a crate::gdl::Symbols,
    kind: Vec<Kind>,
    rules_of: Vec<Vec<usize>>,
    /// Whether the atom depends on a `does` atom.
    reads_moves: Vec<bool>,
    /// Whether the atom depends on a `true` atom.
    reads_state: Vec<bool>,
    /// `true(f)` by `next(f)`.
    true_of_next: HashMap<AtomId, AtomId>,
    work: u64,
}

/// Analyses the ground program `g` of the single-player game `game`.
pub fn analyse(game: &Game, g: &GroundProgram) -> Result<ParallelSteps, String> {
    if game.roles.len() != 1 {
        return Err("parallel steps are for single-player games".into());
    }
    let mut a = Analysis::new(g, &game.symbols);
    let moves: Vec<AtomId> = {
        let mut m: Vec<(usize, AtomId)> = (0..g.atoms.len() as AtomId)
            .filter_map(|x| match a.kind[x as usize] {
                Kind::Does(i) => Some((i, x)),
                _ => None,
            })
            .collect();
        m.sort_unstable();
        m.into_iter().map(|(_, x)| x).collect()
    };
    if moves.len() < 2 {
        return Err("fewer than two moves".into());
    }
    let effects = a.effects(&moves)?;
    let reads = a.reads(&moves, &effects)?;
    let conflicts = conflicts(&moves, &effects, &reads)?;
    let map = SymbolMap::new(&game.symbols);
    let r = Render { g, map: &map };
    let mut needed: Vec<AtomId> = (0..g.atoms.len() as AtomId)
        .filter(|&x| {
            matches!(
                a.kind[x as usize],
                Kind::Legal | Kind::Goal | Kind::Terminal | Kind::Init
            )
        })
        .collect();
    needed.extend(
        effects
            .iter()
            .flatten()
            .flat_map(|(_, d)| d.iter().flatten().map(|&(x, _)| x)),
    );
    let mut rules = a.state_rules(&r, &needed)?;
    for role in &game.roles {
        let _ = writeln!(rules, "role({}).", r.term(role)?);
    }
    let mut moves_text = String::new();
    for (i, &m) in moves.iter().enumerate() {
        let mv = r.move_text(m)?;
        let role = r.arg_text(m, 0)?;
        for (f, dnf) in &effects[i] {
            let fl = r.fluent_text(*f)?;
            let _ = writeln!(moves_text, "writes({mv},{fl}).");
            for conj in dnf {
                let mut body = vec![format!("does({role},{mv},T)")];
                for &(x, pos) in conj {
                    let t = r.atom_text(a.kind[x as usize], x, a.timed(x))?;
                    body.push(if pos { t } else { format!("not {t}") });
                }
                let _ = writeln!(moves_text, "effect({fl},{mv},T) :- {}.", body.join(", "));
            }
        }
    }
    for (i, &m) in moves.iter().enumerate() {
        let mv = r.move_text(m)?;
        for &f in &reads[i] {
            let _ = writeln!(moves_text, "reads({mv},{}).", r.fluent_text(f)?);
        }
    }
    let mut fluents = String::new();
    for x in 0..g.atoms.len() as AtomId {
        if a.kind[x as usize] == Kind::True {
            let _ = writeln!(fluents, "fluent({}).", r.arg_text(x, 0)?);
        }
    }
    Ok(ParallelSteps {
        moves: moves.len(),
        conflicts: conflicts.len(),
        rules,
        moves_text,
        fluents,
    })
}

impl<'a> Analysis<'a> {
    fn new(g: &'a GroundProgram, symbols: &'a crate::gdl::Symbols) -> Analysis<'a> {
        let n = g.atoms.len();
        let mut does_index = 0;
        let kind: Vec<Kind> = g
            .atoms
            .iter()
            .map(|&t| match (g.pool.functor(t), g.pool.args(t).len()) {
                (kw::TRUE, 1) => Kind::True,
                (kw::DOES, 2) => {
                    does_index += 1;
                    Kind::Does(does_index - 1)
                }
                (kw::NEXT, 1) => Kind::Next,
                (kw::LEGAL, 2) => Kind::Legal,
                (kw::GOAL, 2) => Kind::Goal,
                (kw::TERMINAL, 0) => Kind::Terminal,
                (kw::INIT, 1) => Kind::Init,
                (kw::ROLE, 1) => Kind::Role,
                _ => Kind::Derived,
            })
            .collect();
        let rules_of = g.rules_by_head();
        let reads = |seed: &dyn Fn(Kind) -> bool| -> Vec<bool> {
            let mut on: Vec<bool> = kind.iter().map(|&k| seed(k)).collect();
            let mut changed = true;
            while changed {
                changed = false;
                for r in &g.rules {
                    if !on[r.head as usize] && r.pos.iter().chain(&r.neg).any(|&b| on[b as usize]) {
                        on[r.head as usize] = true;
                        changed = true;
                    }
                }
            }
            on
        };
        let reads_moves = reads(&|k| matches!(k, Kind::Does(_)));
        let reads_state = reads(&|k| k == Kind::True);
        let mut true_of_next = HashMap::new();
        for x in 0..n as AtomId {
            if kind[x as usize] == Kind::Next {
                let f = g.pool.args(g.atoms[x as usize])[0];
                if let Some(t) = g
                    .pool
                    .find(kw::TRUE, &[f])
                    .and_then(|t| g.atom_of.get(&t).copied())
                {
                    true_of_next.insert(x, t);
                }
            }
        }
        Analysis {
            g,
            symbols,
            kind,
            rules_of,
            reads_moves,
            reads_state,
            true_of_next,
            work: 0,
        }
    }

    /// Whether atom `x` has a time argument in the program.
    fn timed(&self, x: AtomId) -> bool {
        self.reads_state[x as usize]
            || matches!(
                self.kind[x as usize],
                Kind::True | Kind::Legal | Kind::Goal | Kind::Terminal
            )
    }

    fn spend(&mut self, n: u64) -> Result<(), String> {
        self.work += n;
        if self.work > MAX_WORK {
            return Err("the analysis outgrew its work bound".into());
        }
        Ok(())
    }

    /// Whether an atom that reads no move is always true or never: a static
    /// atom is true when it has a rule (the grounder computes static
    /// relations exactly: every static atom it keeps holds), an atom with no
    /// rule that is no fluent never holds, and a fact always does; `None`
    /// when it depends on the state.
    fn fixed(&self, x: AtomId) -> Option<bool> {
        if self.kind[x as usize] == Kind::True {
            return None;
        }
        let rules = &self.rules_of[x as usize];
        if rules.is_empty() {
            return Some(false);
        }
        if !self.reads_state[x as usize] && self.kind[x as usize] == Kind::Derived {
            return Some(true);
        }
        let fact = rules.iter().any(|&i| {
            let r = &self.g.rules[i];
            r.pos.is_empty() && r.neg.is_empty()
        });
        fact.then_some(true)
    }

    /// The rules of `x` as a disjunction over state and static atoms when
    /// `mv` (a move's index, `None` for no move) is the only move made.
    fn dnf(
        &mut self,
        x: AtomId,
        mv: Option<usize>,
        memo: &mut HashMap<AtomId, Dnf>,
        rules: &[usize],
    ) -> Result<Dnf, String> {
        if let Some(d) = memo.get(&x) {
            return Ok(d.clone());
        }
        self.spend(rules.len() as u64)?;
        let mut out: Dnf = Vec::new();
        'rules: for &i in rules {
            let r = &self.g.rules[i];
            let mut acc: Dnf = vec![Vec::new()];
            let lits: Vec<Lit> = r
                .pos
                .iter()
                .map(|&b| (b, true))
                .chain(r.neg.iter().map(|&b| (b, false)))
                .collect();
            for (b, pos) in lits {
                if let Kind::Does(j) = self.kind[b as usize] {
                    if (Some(j) == mv) != pos {
                        continue 'rules;
                    }
                    continue;
                }
                if self.reads_moves[b as usize] {
                    let rb = self.rules_of[b as usize].clone();
                    let d = self.dnf(b, mv, memo, &rb)?;
                    if pos {
                        acc = product(&acc, &d)?;
                        if acc.is_empty() {
                            continue 'rules;
                        }
                    } else if d.iter().any(Vec::is_empty) {
                        continue 'rules;
                    } else if !d.is_empty() {
                        return Err(format!(
                            "a relation that reads the move is negated under a condition on the state ({})",
                            self.name(b)
                        ));
                    }
                    continue;
                }
                match self.fixed(b) {
                    Some(v) if v == pos => {}
                    Some(_) => continue 'rules,
                    None => {
                        for c in &mut acc {
                            c.push((b, pos));
                        }
                    }
                }
            }
            for mut c in acc {
                c.sort_unstable();
                c.dedup();
                if c.windows(2).any(|w| w[0].0 == w[1].0) {
                    continue; // a and not a
                }
                out.push(c);
            }
        }
        if out.iter().any(Vec::is_empty) {
            out = vec![Vec::new()];
        }
        out.sort();
        out.dedup();
        if out.len() > MAX_CONJUNCTIONS {
            return Err(format!("{} expands to too many cases", self.name(x)));
        }
        memo.insert(x, out.clone());
        Ok(out)
    }

    /// Atom `x` as GDL text, for messages.
    fn name(&self, x: AtomId) -> String {
        let t = self.g.pool.to_term(self.g.atoms[x as usize]);
        crate::gdl::print::term_to_string(&t, self.symbols)
    }

    /// Per move, the fluents it writes (as `true` atoms) with its effect on
    /// each: the `next` rules evaluated with that move alone.
    fn effects(&mut self, moves: &[AtomId]) -> Result<Vec<Vec<(AtomId, Dnf)>>, String> {
        let mut effects = vec![Vec::new(); moves.len()];
        let nexts: Vec<AtomId> = (0..self.g.atoms.len() as AtomId)
            .filter(|&x| self.kind[x as usize] == Kind::Next)
            .collect();
        // A fluent that no `next` rule can derive (the initial value of a
        // clock) is cleared by every move.
        let derivable: HashSet<AtomId> = self.true_of_next.values().copied().collect();
        for t in 0..self.g.atoms.len() as AtomId {
            if self.kind[t as usize] == Kind::True && !derivable.contains(&t) {
                self.spend(moves.len() as u64)?;
                for e in effects.iter_mut() {
                    e.push((t, Vec::new()));
                }
            }
        }
        // The memo of the relations reading `does`, per move (and for none).
        let mut memos: HashMap<Option<usize>, HashMap<AtomId, Dnf>> = HashMap::new();
        for n in nexts {
            let Some(&t) = self.true_of_next.get(&n) else {
                continue; // the fluent never holds: nothing to keep
            };
            // The rules of n by the move their positive `does` names; the
            // others apply whatever the move, unless they name it.
            let mut by_move: HashMap<usize, Vec<usize>> = HashMap::new();
            let mut rest = Vec::new();
            let mut all_moves = false;
            let mut named: HashSet<usize> = HashSet::new();
            for &i in &self.rules_of[n as usize] {
                let r = &self.g.rules[i];
                let pos_move = r.pos.iter().find_map(|&b| match self.kind[b as usize] {
                    Kind::Does(j) => Some(j),
                    _ => None,
                });
                for &b in r.pos.iter().chain(&r.neg) {
                    match self.kind[b as usize] {
                        Kind::Does(j) => {
                            named.insert(j);
                        }
                        _ if self.reads_moves[b as usize] => all_moves = true,
                        _ => {}
                    }
                }
                match pos_move {
                    Some(j) => by_move.entry(j).or_default().push(i),
                    None => rest.push(i),
                }
            }
            let check: Vec<Option<usize>> = if all_moves {
                (0..moves.len()).map(Some).collect()
            } else {
                let mut v: Vec<Option<usize>> = named.iter().copied().map(Some).collect();
                v.sort_unstable();
                if named.len() < moves.len() {
                    v.push(None);
                }
                v
            };
            for mv in check {
                let mut rules = rest.clone();
                if let Some(j) = mv {
                    rules.extend(by_move.get(&j).into_iter().flatten());
                }
                let mut memo = memos.remove(&mv).unwrap_or_default();
                let d = self.dnf(n, mv, &mut memo, &rules);
                memo.remove(&n);
                memos.insert(mv, memo);
                let d = d?;
                let inert =
                    d.contains(&vec![(t, true)]) && d.iter().all(|c| c.contains(&(t, true)));
                if inert {
                    continue;
                }
                // Not inert under a move the rules do not name: each such
                // move writes the fluent (a clock: every move does).
                let movers: Vec<usize> = match mv {
                    Some(j) => vec![j],
                    None => (0..moves.len()).filter(|j| !named.contains(j)).collect(),
                };
                self.spend(movers.len() as u64)?;
                for j in movers {
                    effects[j].push((t, d.clone()));
                }
            }
        }
        Ok(effects)
    }

    /// Per move, the fluents (as `true` atoms) its `legal` atom and its
    /// effects depend on, sorted.
    fn reads(
        &mut self,
        moves: &[AtomId],
        effects: &[Vec<(AtomId, Dnf)>],
    ) -> Result<Vec<Vec<AtomId>>, String> {
        let legal_of = self.g.legal_of_does();
        let mut out = Vec::with_capacity(moves.len());
        let mut closure: HashMap<AtomId, std::rc::Rc<Vec<AtomId>>> = HashMap::new();
        for (i, &m) in moves.iter().enumerate() {
            let mut roots: Vec<AtomId> = legal_of[m as usize].into_iter().collect();
            roots.extend(
                effects[i]
                    .iter()
                    .flat_map(|(_, d)| d.iter().flatten().map(|&(x, _)| x)),
            );
            let mut set: BTreeSet<AtomId> = BTreeSet::new();
            for x in roots {
                let c = self.fluents_under(x, &mut closure)?;
                set.extend(c.iter().copied());
            }
            out.push(set.into_iter().collect());
        }
        Ok(out)
    }

    /// The fluents atom `x` depends on (through rules of atoms that read no
    /// move), memoised per atom; a cycle of derived atoms is walked whole.
    fn fluents_under(
        &mut self,
        x: AtomId,
        memo: &mut HashMap<AtomId, std::rc::Rc<Vec<AtomId>>>,
    ) -> Result<std::rc::Rc<Vec<AtomId>>, String> {
        if let Some(c) = memo.get(&x) {
            return Ok(c.clone());
        }
        let mut seen: HashSet<AtomId> = HashSet::new();
        let mut found: BTreeSet<AtomId> = BTreeSet::new();
        let mut stack = vec![x];
        while let Some(y) = stack.pop() {
            if !seen.insert(y) || !self.reads_state[y as usize] {
                continue;
            }
            if self.kind[y as usize] == Kind::True {
                found.insert(y);
                continue;
            }
            if let Some(c) = memo.get(&y) {
                found.extend(c.iter().copied());
                continue;
            }
            self.spend(self.rules_of[y as usize].len() as u64 + 1)?;
            for &i in &self.rules_of[y as usize] {
                let r = &self.g.rules[i];
                stack.extend(r.pos.iter().chain(&r.neg).copied());
            }
        }
        let c = std::rc::Rc::new(found.into_iter().collect::<Vec<_>>());
        memo.insert(x, c.clone());
        Ok(c)
    }

    /// The rules of the atoms `roots` depend on (none reads a move), as ASP
    /// text: state atoms at step `T`, static ones time-free.
    fn state_rules(&mut self, r: &Render, roots: &[AtomId]) -> Result<String, String> {
        let mut seen: HashSet<AtomId> = HashSet::new();
        let mut stack: Vec<AtomId> = roots.to_vec();
        let mut out = String::new();
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            let kind = self.kind[x as usize];
            if kind == Kind::True || self.reads_moves[x as usize] {
                continue;
            }
            let timed = self.reads_state[x as usize]
                || matches!(kind, Kind::Legal | Kind::Goal | Kind::Terminal);
            let head = r.atom_text(kind, x, timed)?;
            self.spend(self.rules_of[x as usize].len() as u64)?;
            for &i in &self.rules_of[x as usize] {
                let rule = &self.g.rules[i];
                let mut body: Vec<String> = Vec::new();
                if timed {
                    body.push("time(T)".into());
                }
                for (&b, pos) in rule
                    .pos
                    .iter()
                    .map(|b| (b, true))
                    .chain(rule.neg.iter().map(|b| (b, false)))
                {
                    stack.push(b);
                    let t = r.atom_text(self.kind[b as usize], b, self.timed(b))?;
                    body.push(if pos { t } else { format!("not {t}") });
                }
                if body.is_empty() {
                    let _ = writeln!(out, "{head}.");
                } else {
                    let _ = writeln!(out, "{head} :- {}.", body.join(", "));
                }
            }
        }
        Ok(out)
    }
}

/// The conjunctions of `a` each joined with each of `b`.
fn product(a: &Dnf, b: &Dnf) -> Result<Dnf, String> {
    let mut out = Vec::with_capacity(a.len() * b.len());
    for x in a {
        for y in b {
            let mut c = x.clone();
            c.extend(y.iter().copied());
            out.push(c);
        }
    }
    if out.len() > MAX_CONJUNCTIONS {
        return Err("a relation reading the move expands to too many cases".into());
    }
    Ok(out)
}

/// The pairs of moves (by index, smaller first) that may interfere: one
/// writes what the other reads, or both write a fluent and not both to the
/// same fixed value (two moves that each clear a flag do not interfere).
fn conflicts(
    moves: &[AtomId],
    effects: &[Vec<(AtomId, Dnf)>],
    reads: &[Vec<AtomId>],
) -> Result<Vec<(u32, u32)>, String> {
    // Per fluent its writers, with the value each sets when it is fixed.
    let mut writers: HashMap<AtomId, Vec<(u32, Option<bool>)>> = HashMap::new();
    for (i, e) in effects.iter().enumerate() {
        for (f, d) in e {
            writers
                .entry(*f)
                .or_default()
                .push((i as u32, fixed_value(d)));
        }
    }
    let mut pairs: HashSet<(u32, u32)> = HashSet::new();
    let add = |a: u32, b: u32, pairs: &mut HashSet<(u32, u32)>| {
        if a != b {
            pairs.insert((a.min(b), a.max(b)));
        }
    };
    for i in 0..moves.len() {
        for f in &reads[i] {
            for &(j, _) in writers.get(f).into_iter().flatten() {
                add(i as u32, j, &mut pairs);
            }
        }
        for (f, d) in &effects[i] {
            let mine = fixed_value(d);
            for &(j, theirs) in &writers[f] {
                if mine.is_none() || theirs != mine {
                    add(i as u32, j, &mut pairs);
                }
            }
        }
        if pairs.len() > MAX_CONFLICTS {
            return Err(format!("over {MAX_CONFLICTS} pairs of moves may interfere"));
        }
    }
    let mut v: Vec<(u32, u32)> = pairs.into_iter().collect();
    v.sort_unstable();
    Ok(v)
}

/// The value an effect sets whatever the state, if it does.
fn fixed_value(d: &Dnf) -> Option<bool> {
    match d.as_slice() {
        [] => Some(false),
        [c] if c.is_empty() => Some(true),
        _ => None,
    }
}

/// Ground atoms as ASP text.
struct Render<'a> {
    g: &'a GroundProgram,
    map: &'a SymbolMap,
}

impl Render<'_> {
    fn term(&self, t: &Term) -> Result<String, String> {
        self.map
            .ground_term(t)
            .ok_or_else(|| "a ground atom with a variable".to_string())
    }

    /// Argument `i` of atom `x` as ASP text.
    fn arg_text(&self, x: AtomId, i: usize) -> Result<String, String> {
        let t = self.g.pool.args(self.g.atoms[x as usize])[i];
        self.term(&self.g.pool.to_term(t))
    }

    /// The move of a `does` atom.
    fn move_text(&self, x: AtomId) -> Result<String, String> {
        self.arg_text(x, 1)
    }

    /// The fluent of a `true` atom.
    fn fluent_text(&self, x: AtomId) -> Result<String, String> {
        self.arg_text(x, 0)
    }

    /// An atom in the encoding's vocabulary: keywords as the encodings name
    /// them, other relations wrapped in `d(_,T)` (read the state) or `s(_)`.
    fn atom_text(&self, kind: Kind, x: AtomId, timed: bool) -> Result<String, String> {
        Ok(match kind {
            Kind::True => format!("holds({},T)", self.arg_text(x, 0)?),
            Kind::Legal => format!("legal({},{},T)", self.arg_text(x, 0)?, self.arg_text(x, 1)?),
            Kind::Goal => format!("goal({},{},T)", self.arg_text(x, 0)?, self.arg_text(x, 1)?),
            Kind::Terminal => "terminal(T)".into(),
            Kind::Init => format!("init({})", self.arg_text(x, 0)?),
            Kind::Role => format!("role({})", self.arg_text(x, 0)?),
            Kind::Does(_) | Kind::Next => {
                return Err("a move or next atom among the state rules".into())
            }
            Kind::Derived => {
                let t = self.term(&self.g.pool.to_term(self.g.atoms[x as usize]))?;
                if timed {
                    format!("d({t},T)")
                } else {
                    format!("s({t})")
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::analyse;
    use crate::gdl::{parse, Game};
    use crate::reasoner::ground::{ground, Limits};

    fn game(text: &str) -> Game {
        Game::new(parse(text, "t.kif").unwrap()).unwrap()
    }

    /// Two lamps, each switched on by a move of its own: the moves never
    /// interfere, and each writes its lamp only.
    const LAMPS: &str = "(role p) (lamp a) (lamp b)
        (<= (legal p (on ?l)) (lamp ?l) (not (true (lit ?l))))
        (<= (next (lit ?l)) (does p (on ?l)))
        (<= (next (lit ?l)) (true (lit ?l)))
        (<= terminal (true (lit a)) (true (lit b)))
        (<= (goal p 100) (true (lit a)) (true (lit b)))
        (<= (goal p 0) (not (true (lit a))))
        (<= (goal p 0) (not (true (lit b))))";

    #[test]
    fn moves_that_switch_different_lamps_never_interfere() {
        let g = game(LAMPS);
        let steps = analyse(&g, &ground(&g, &Limits::default()).unwrap()).unwrap();
        assert_eq!((steps.moves, steps.conflicts), (2, 0));
        let text = steps.program("lamps");
        assert!(text.contains("writes(on(a),lit(a))."), "{text}");
        assert!(!text.contains("writes(on(a),lit(b))."), "{text}");
        assert!(text.contains("reads(on(a),lit(a))."), "{text}");
    }

    #[test]
    fn a_move_relation_negated_under_a_state_condition_is_declined_by_name() {
        // `(moved ?l)` reads the move and the state; `next` negates it.
        let text = LAMPS.replace(
            "(<= (next (lit ?l)) (true (lit ?l)))",
            "(<= (moved ?l) (does p (on ?l)) (true (lit ?l)))
             (<= (next (lit ?l)) (true (lit ?l)) (not (moved ?l)))",
        );
        let g = game(&text);
        let e = analyse(&g, &ground(&g, &Limits::default()).unwrap())
            .err()
            .expect("declined");
        assert!(e.contains("negated") && e.contains("(moved "), "{e}");
    }
}
