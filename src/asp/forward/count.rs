//! Counting bounds: the fewest moves a plan to goal 100 needs, read off the
//! ground rules by counting tasks.
//!
//! In a fill-in puzzle (sudoku, futoshiki, hidato) goal 100 holds in no state
//! with a blank cell, and a move fills one cell: a plan needs at least as many
//! moves as there are blanks at the start. In a tour, goal 100 needs every
//! square visited, and a move visits one. Every such plan has the same length,
//! which a search cannot prove by exhaustion and clasp proves only by the
//! pigeonhole principle, one horizon at a time. This module proves it by
//! counting, soundly, on the ground rules of any game:
//!
//! - *blockers*: fluents in whose presence no goal-100 rule can hold (a `not`
//!   of the fluent, or of an atom one of whose rules needs only it, or a
//!   positive atom all of whose rules are so blocked);
//! - *needs*: fluents every goal-100 rule needs true (directly, or through a
//!   positive atom all of whose rules need them);
//! - per move, the blockers it may remove (no `next` rule is certain to keep
//!   the fluent when the move is made) and the needs it may add (some `next`
//!   rule may derive the fluent while it is false).
//!
//! The bound is the larger of `ceil(blockers at the start / most removed by a
//! move)` and `ceil(needs missing at the start / most added by a move)`.
//! "Certain" and "may" lean the safe way: a literal the analysis cannot decide
//! counts against certainty, so a bound can only come out lower than the
//! truth, never higher.

use hashbrown::{HashMap, HashSet};

use crate::gdl::{kw, Game, Term};
use crate::reasoner::ground::{AtomId, GroundProgram, GroundRule};
use crate::reasoner::terms::TermId;

/// How deep the goal analysis follows derived atoms.
const MAX_DEPTH: usize = 6;

/// The most (fluent, move) pairs the per-move counts look at: beyond it no
/// bound is given.
const MAX_PAIRS: usize = 20_000_000;

/// What the rules prove about the length of any plan to goal 100.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountBound {
    /// No plan to goal 100 has fewer moves.
    pub moves: usize,
    /// How it was counted, for progress output.
    pub why: String,
}

/// The counting bound of `game` from `init` (the fluents of its initial
/// state), when it is above 1 move.
pub fn bound(game: &Game, g: &GroundProgram, init: &[Term]) -> Option<CountBound> {
    let a = Analysis::new(game, g)?;
    let init: HashSet<TermId> = init.iter().filter_map(|t| g.pool.find_term(t)).collect();
    let goal = a.goal100?;
    let blockers = a.blocked_by_all(goal);
    let needs = a.needed_by_all(goal);
    let present: Vec<TermId> = blockers.into_iter().filter(|f| init.contains(f)).collect();
    let missing: Vec<TermId> = needs.into_iter().filter(|f| !init.contains(f)).collect();
    if (present.len() + missing.len()).saturating_mul(a.moves.len()) > MAX_PAIRS {
        return None;
    }
    let mut best: Option<CountBound> = None;
    let mut consider = |count: usize, per_move: usize, what: &str| {
        if count == 0 || per_move == 0 {
            return;
        }
        let moves = count.div_ceil(per_move);
        if moves > 1 && best.as_ref().is_none_or(|b| moves > b.moves) {
            best = Some(CountBound {
                moves,
                why: format!("{count} {what}, at most {per_move} a move"),
            });
        }
    };
    let removed = a
        .moves
        .iter()
        .map(|&m| present.iter().filter(|&&f| a.may_remove(f, m)).count())
        .max();
    consider(
        present.len(),
        removed.unwrap_or(0),
        "fluents that rule goal 100 out hold at the start",
    );
    let added = a
        .moves
        .iter()
        .map(|&m| missing.iter().filter(|&&f| a.may_add(f, m)).count())
        .max();
    consider(
        missing.len(),
        added.unwrap_or(0),
        "fluents goal 100 needs are missing at the start",
    );
    best
}

/// The ground rules indexed for the analysis.
struct Analysis<'a> {
    g: &'a GroundProgram,
    /// The rules of each atom.
    rules_of: HashMap<AtomId, Vec<usize>>,
    /// Atoms true in every state: facts and what facts alone derive.
    certain: HashSet<AtomId>,
    /// The `(does r m)` atoms (one role).
    moves: Vec<AtomId>,
    /// `(true f)` and `(next f)` atoms by fluent, and back.
    true_of: HashMap<TermId, AtomId>,
    fluent_of_true: HashMap<AtomId, TermId>,
    next_of: HashMap<TermId, AtomId>,
    goal100: Option<AtomId>,
}

impl<'a> Analysis<'a> {
    fn new(game: &Game, g: &'a GroundProgram) -> Option<Analysis<'a>> {
        let mut rules_of: HashMap<AtomId, Vec<usize>> = HashMap::new();
        for (i, r) in g.rules.iter().enumerate() {
            rules_of.entry(r.head).or_default().push(i);
        }
        let (mut true_of, mut fluent_of_true, mut next_of) =
            (HashMap::new(), HashMap::new(), HashMap::new());
        let mut moves = Vec::new();
        for (a, &t) in g.atoms.iter().enumerate() {
            let a = a as AtomId;
            let args = g.pool.args(t);
            match (g.pool.functor(t), args.len()) {
                (f, 1) if f == kw::TRUE => {
                    true_of.insert(args[0], a);
                    fluent_of_true.insert(a, args[0]);
                }
                (f, 1) if f == kw::NEXT => {
                    next_of.insert(args[0], a);
                }
                (f, 2) if f == kw::DOES => moves.push(a),
                _ => {}
            }
        }
        let goal100 = g.first_role_goal100(game);
        let mut analysis = Analysis {
            g,
            rules_of,
            certain: HashSet::new(),
            moves,
            true_of,
            fluent_of_true,
            next_of,
            goal100,
        };
        analysis.certain = analysis.certain_atoms();
        Some(analysis)
    }

    fn is_state_atom(&self, a: AtomId) -> bool {
        let f = self.g.pool.functor(self.g.atoms[a as usize]);
        f == kw::TRUE || f == kw::DOES
    }

    /// Facts and what they derive by rules without `not` and without state
    /// atoms: true in every state.
    fn certain_atoms(&self) -> HashSet<AtomId> {
        let mut certain = HashSet::new();
        loop {
            let before = certain.len();
            for r in &self.g.rules {
                if r.neg.is_empty()
                    && !certain.contains(&r.head)
                    && r.pos.iter().all(|p| certain.contains(p))
                {
                    certain.insert(r.head);
                }
            }
            if certain.len() == before {
                return certain;
            }
        }
    }

    fn rules(&self, a: AtomId) -> impl Iterator<Item = &GroundRule> {
        self.rules_of
            .get(&a)
            .into_iter()
            .flatten()
            .map(|&i| &self.g.rules[i])
    }

    /// The fluents in whose presence no rule of `a` holds (see the module
    /// documentation).
    fn blocked_by_all(&self, a: AtomId) -> HashSet<TermId> {
        self.blocked(a, 0)
    }

    fn blocked(&self, a: AtomId, depth: usize) -> HashSet<TermId> {
        self.in_every_rule(a, |r| {
            let mut by = HashSet::new();
            for &n in &r.neg {
                match self.fluent_of_true.get(&n) {
                    Some(&f) => {
                        by.insert(f);
                    }
                    None => by.extend(self.alone_makes_true(n)),
                }
            }
            if depth < MAX_DEPTH {
                for &p in &r.pos {
                    if !self.is_state_atom(p) && !self.certain.contains(&p) {
                        by.extend(self.blocked(p, depth + 1));
                    }
                }
            }
            by
        })
    }

    /// The fluents that `of_rule` gives for every rule of `a` (none when `a`
    /// has no rule: the analysis then claims nothing).
    fn in_every_rule(
        &self,
        a: AtomId,
        of_rule: impl Fn(&GroundRule) -> HashSet<TermId>,
    ) -> HashSet<TermId> {
        let mut all: Option<HashSet<TermId>> = None;
        for r in self.rules(a) {
            let these = of_rule(r);
            let common = match all {
                None => these,
                Some(prev) => prev.intersection(&these).copied().collect(),
            };
            if common.is_empty() {
                return common;
            }
            all = Some(common);
        }
        all.unwrap_or_default()
    }

    /// The fluents `f` such that `(true f)` alone makes `a` true: a rule of
    /// `a` without `not` whose positive atoms are `(true f)` and certain ones.
    fn alone_makes_true(&self, a: AtomId) -> Vec<TermId> {
        self.rules(a)
            .filter(|r| r.neg.is_empty())
            .filter_map(|r| {
                let mut state = r.pos.iter().filter(|p| !self.certain.contains(*p));
                match (state.next(), state.next()) {
                    (Some(p), None) => self.fluent_of_true.get(p).copied(),
                    _ => None,
                }
            })
            .collect()
    }

    /// The fluents every rule of `a` needs true.
    fn needed_by_all(&self, a: AtomId) -> HashSet<TermId> {
        self.needed(a, 0)
    }

    fn needed(&self, a: AtomId, depth: usize) -> HashSet<TermId> {
        self.in_every_rule(a, |r| {
            let mut need = HashSet::new();
            for &p in &r.pos {
                if let Some(&f) = self.fluent_of_true.get(&p) {
                    need.insert(f);
                } else if depth < MAX_DEPTH && !self.is_state_atom(p) && !self.certain.contains(&p)
                {
                    need.extend(self.needed(p, depth + 1));
                }
            }
            need
        })
    }

    /// Whether making move `m` may leave fluent `f`, true now, false next: no
    /// `next` rule of `f` is certain to hold.
    fn may_remove(&self, f: TermId, m: AtomId) -> bool {
        let (Some(&next), Some(&t)) = (self.next_of.get(&f), self.true_of.get(&f)) else {
            return true;
        };
        !self.rules(next).any(|r| {
            r.pos
                .iter()
                .all(|&p| p == t || p == m || self.certain.contains(&p))
                && r.neg.iter().all(|&n| self.surely_false(n, m))
        })
    }

    /// Whether making move `m` may make fluent `f`, false now, true next: a
    /// `next` rule of `f` not ruled out by `f` being false or by the move.
    fn may_add(&self, f: TermId, m: AtomId) -> bool {
        let Some(&next) = self.next_of.get(&f) else {
            return false;
        };
        let t = self.true_of.get(&f).copied();
        self.rules(next).any(|r| {
            !r.pos
                .iter()
                .any(|&p| Some(p) == t || self.surely_false(p, m))
        })
    }

    /// Whether atom `a` is false in any state when move `m` is made: another
    /// move, an atom no rule derives, or one each of whose rules needs such.
    fn surely_false(&self, a: AtomId, m: AtomId) -> bool {
        self.surely_false_at(a, m, 0)
    }

    fn surely_false_at(&self, a: AtomId, m: AtomId, depth: usize) -> bool {
        let f = self.g.pool.functor(self.g.atoms[a as usize]);
        if f == kw::DOES {
            return a != m;
        }
        if f == kw::TRUE || self.certain.contains(&a) {
            return false;
        }
        depth < MAX_DEPTH
            && self
                .rules(a)
                .all(|r| r.pos.iter().any(|&p| self.surely_false_at(p, m, depth + 1)))
    }
}
