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
//! - *groups*: sets of fluents of which one must hold when the game ends
//!   with goal 100, read off `terminal` as well as goal 100: a rule that
//!   fails only when one of the fluents it negates holds gives a group, and
//!   an atom that must be false needs a group from each of its rules. The
//!   empty sudoku has no blank fluent: a cell is empty while none of its nine
//!   marks holds, and `terminal` waits for no empty cell, so each cell is a
//!   group of nine and a move gives a fluent to one group.
//!
//! The bound is the largest of `ceil(blockers at the start / most removed by
//! a move)`, `ceil(needs missing at the start / most added by a move)` and
//! `ceil(groups unmet at the start / most groups a move may meet)`.
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
/// state), when it is above 1 move. `clock_end`: the moves after which a
/// clock left out of `game` ends it ([`super::breadth::without_clock`]);
/// what `terminal`'s other rules need then binds only plans shorter than
/// that.
pub fn bound(
    game: &Game,
    g: &GroundProgram,
    init: &[Term],
    clock_end: Option<usize>,
) -> Option<CountBound> {
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
    if let Some(b) = a.group_bound(&init, clock_end) {
        if best.as_ref().is_none_or(|best| b.moves > best.moves) {
            best = Some(b);
        }
    }
    best
}

/// A set of fluents at least one of which must hold (sorted, no repeats).
type Group = Vec<TermId>;

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
    /// The `terminal` atom.
    terminal: Option<AtomId>,
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
        let mut terminal = None;
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
                (f, 0) if f == kw::TERMINAL => terminal = Some(a),
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
            terminal,
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
    fn in_every_rule<T: Clone + Eq + std::hash::Hash>(
        &self,
        a: AtomId,
        of_rule: impl Fn(&GroundRule) -> HashSet<T>,
    ) -> HashSet<T> {
        let mut all: Option<HashSet<T>> = None;
        for r in self.rules(a) {
            let these = of_rule(r);
            let common = match all {
                None => these,
                Some(prev) => prev.intersection(&these).cloned().collect(),
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

    /// The bound from groups: sets of fluents at least one of which must
    /// hold when the game ends with goal 100 (a sudoku's cell, empty while
    /// none of its nine marks holds, and `terminal` waits for no empty
    /// cell), counted like the single fluents: groups none of whose fluents
    /// holds at the start, against the most groups one move may give a
    /// fluent to. `terminal`'s groups bind plans shorter than `clock_end`
    /// only; goal 100's bind every plan.
    fn group_bound(&self, init: &HashSet<TermId>, clock_end: Option<usize>) -> Option<CountBound> {
        let unmet = |groups: HashSet<Group>| -> Vec<Group> {
            let mut v: Vec<Group> = groups
                .into_iter()
                .filter(|g| g.len() > 1 && !g.iter().any(|f| init.contains(f)))
                .collect();
            v.sort();
            v
        };
        let goal = self
            .goal100
            .map(|a| unmet(self.groups_true(a, 0)))
            .unwrap_or_default();
        let terminal = self
            .terminal
            .map(|a| unmet(self.groups_true(a, 0)))
            .unwrap_or_default();
        let mut best: Option<CountBound> = None;
        for (groups, what, cap) in [(goal, "goal 100", None), (terminal, "the end", clock_end)] {
            if groups.is_empty()
                || groups
                    .iter()
                    .map(Vec::len)
                    .sum::<usize>()
                    .saturating_mul(self.moves.len())
                    > MAX_PAIRS
            {
                continue;
            }
            let per_move = self
                .moves
                .iter()
                .map(|&m| {
                    groups
                        .iter()
                        .filter(|g| g.iter().any(|&f| self.may_add(f, m)))
                        .count()
                })
                .max()
                .unwrap_or(0);
            if per_move == 0 {
                continue;
            }
            let mut moves = groups.len().div_ceil(per_move);
            if let Some(end) = cap {
                moves = moves.min(end);
            }
            if moves > 1 && best.as_ref().is_none_or(|b| moves > b.moves) {
                best = Some(CountBound {
                    moves,
                    why: format!(
                        "{} sets of fluents of which {what} needs one hold none at the start, at most {per_move} given one a move",
                        groups.len()
                    ),
                });
            }
        }
        best
    }

    /// The groups every rule of `a` needs: each of its fluents a group of
    /// one, and for each atom it needs false, that atom's groups
    /// ([`Analysis::groups_false`]).
    fn groups_true(&self, a: AtomId, depth: usize) -> HashSet<Group> {
        self.in_every_rule(a, |r| {
            let mut these: HashSet<Group> = HashSet::new();
            for &p in &r.pos {
                if let Some(&f) = self.fluent_of_true.get(&p) {
                    these.insert(vec![f]);
                } else if depth < MAX_DEPTH && !self.is_state_atom(p) && !self.certain.contains(&p)
                {
                    these.extend(self.groups_true(p, depth + 1));
                }
            }
            if depth < MAX_DEPTH {
                for &n in &r.neg {
                    if !self.fluent_of_true.contains_key(&n) && !self.is_state_atom(n) {
                        these.extend(self.groups_false(n, depth + 1));
                    }
                }
            }
            these
        })
    }

    /// The groups `a` needs to be false: every rule of `a` must fail. A
    /// rule whose only literals that may fail are `(not (true f))` fails
    /// only when one of those fluents holds: they make a group. A rule
    /// whose only such literal is a derived atom fails only when that atom
    /// is false: its groups. Other rules may fail in ways the analysis does
    /// not follow, and give none (a group left out only lowers the bound).
    fn groups_false(&self, a: AtomId, depth: usize) -> HashSet<Group> {
        let mut groups = HashSet::new();
        for r in self.rules(a) {
            let open: Vec<AtomId> = r
                .pos
                .iter()
                .copied()
                .filter(|p| !self.certain.contains(p))
                .collect();
            match (&open[..], r.neg.is_empty()) {
                ([], false) => {
                    let group: Option<Group> = r
                        .neg
                        .iter()
                        .map(|n| self.fluent_of_true.get(n).copied())
                        .collect();
                    if let Some(mut group) = group {
                        group.sort_unstable();
                        group.dedup();
                        groups.insert(group);
                    }
                }
                ([p], true) if depth < MAX_DEPTH && !self.is_state_atom(*p) => {
                    groups.extend(self.groups_false(*p, depth + 1));
                }
                _ => {}
            }
        }
        groups
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
