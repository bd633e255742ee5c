//! Branch and bound for the best goal below 100: the highest goal relaxed
//! reachability derives from one state, so that a search holding a play to
//! goal `b` need not expand a state from which no play can score above `b`.
//!
//! The bound is [`super::relaxed::goal_ceiling`]'s relaxation taken from a
//! state instead of the initial one: leave out every negative literal and
//! let every legal move happen, and every fluent of every state a play from
//! `S` reaches is among the fluents the relaxation derives from `S`, so a
//! goal it does not derive is out of every such play's reach. Only the
//! rules the first role's goal atoms depend on positively matter (their
//! *cone*: through `true F` to F's `next` rules, through `does` to its
//! `legal`), and so only the state's fluents in that cone: the bound is
//! memoised on them. Where the goal is read off counters that only move one
//! way (mineClearingSmall's shots and moves, a score that only falls), the
//! cone's fluents are the counters and what moves them, and the memo holds
//! a few hundred projections (mineClearingSmall: 285, though its cone has
//! most of the ground rules, the ship's moves over every coordinate the
//! grounder's relaxation allows); where the goal is read off the whole
//! board, the memo misses and [`Prune`] gives up checking once it sees the
//! checks do not pay.

use hashbrown::HashMap;

use crate::gdl::{kw, Game, Term};
use crate::reasoner::ground::{AtomId, GroundProgram};
use crate::reasoner::terms::TermId;
use crate::reasoner::StateMachine;

/// The most projections the memo keeps before it starts again (a goal read
/// off the whole board makes every state its own projection).
const MAX_MEMO: usize = 1 << 20;

/// The relaxed goal bound over the goal atoms' cone of a ground program.
pub struct StateCeiling {
    /// The cone's rules, atoms renumbered densely: `(head, positive body)`.
    rules: Vec<(u32, Vec<u32>)>,
    /// Per cone atom, the cone rules it occurs in positively.
    uses: Vec<Vec<u32>>,
    /// Per cone atom, what deriving it also derives: a `legal` atom its
    /// `does`, a `next` atom its fluent's `true` (when in the cone).
    implies: Vec<Option<u32>>,
    /// The goal value of a cone atom that is one of the first role's goals.
    goal_of: Vec<Option<u8>>,
    /// The `true` atom of each cone fluent, by the fluent's term.
    true_of: HashMap<Term, u32>,
    /// Bounds computed, by the state's sorted cone fluents (their `true`
    /// atoms).
    memo: HashMap<Vec<u32>, u8>,
    /// Derivations made (the memo's misses).
    derived: u64,
    /// Scratch space of one evaluation.
    reached: Vec<bool>,
    missing: Vec<u32>,
}

impl StateCeiling {
    /// The bound for `game`'s first role over its ground program `g`;
    /// `None` when no goal atom of that role has a value above 0. Goal 0
    /// stays out of the cone: it bounds nothing (mineClearingSmall's goal 0
    /// reads every mine on the board).
    pub fn new(game: &Game, g: &GroundProgram) -> Option<StateCeiling> {
        let goals: HashMap<AtomId, u8> = g
            .first_role_goals(game)
            .into_iter()
            .filter_map(|(a, v)| Some((a, v.parse().ok()?)))
            .filter(|&(_, v)| v > 0)
            .collect();
        if goals.is_empty() {
            return None;
        }
        let by_head = g.rules_by_head();
        let legal_of_does = g.legal_of_does();
        let mut next_of: HashMap<TermId, AtomId> = HashMap::new();
        for (a, &t) in g.atoms.iter().enumerate() {
            if g.pool.functor(t) == kw::NEXT && g.pool.args(t).len() == 1 {
                next_of.insert(g.pool.args(t)[0], a as AtomId);
            }
        }
        // The cone, backwards from the goal atoms; `local` numbers its atoms.
        let mut local: HashMap<AtomId, u32> = HashMap::new();
        let mut order: Vec<AtomId> = Vec::new();
        let mut stack: Vec<AtomId> = goals.keys().copied().collect();
        while let Some(a) = stack.pop() {
            if local.contains_key(&a) {
                continue;
            }
            local.insert(a, order.len() as u32);
            order.push(a);
            for &r in &by_head[a as usize] {
                stack.extend_from_slice(&g.rules[r].pos);
            }
            let t = g.atoms[a as usize];
            let f = g.pool.functor(t);
            if f == kw::TRUE && g.pool.args(t).len() == 1 {
                stack.extend(next_of.get(&g.pool.args(t)[0]));
            } else if f == kw::DOES {
                stack.extend(legal_of_does[a as usize]);
            }
        }
        let n = order.len();
        let mut rules = Vec::new();
        let mut uses = vec![Vec::new(); n];
        for &a in &order {
            for &r in &by_head[a as usize] {
                let pos: Vec<u32> = g.rules[r].pos.iter().map(|p| local[p]).collect();
                for &p in &pos {
                    uses[p as usize].push(rules.len() as u32);
                }
                rules.push((local[&a], pos));
            }
        }
        let mut implies = vec![None; n];
        let mut true_of = HashMap::new();
        for (i, &a) in order.iter().enumerate() {
            let t = g.atoms[a as usize];
            let f = g.pool.functor(t);
            if f == kw::TRUE && g.pool.args(t).len() == 1 {
                let fluent = g.pool.args(t)[0];
                true_of.insert(g.pool.to_term(fluent), i as u32);
                if let Some(next) = next_of.get(&fluent).and_then(|x| local.get(x)) {
                    implies[*next as usize] = Some(i as u32);
                }
            }
        }
        for (d, l) in legal_of_does.iter().enumerate() {
            if let (Some(l), Some(&d)) = (l.and_then(|l| local.get(&l)), local.get(&(d as AtomId)))
            {
                implies[*l as usize] = Some(d);
            }
        }
        let goal_of = order.iter().map(|a| goals.get(a).copied()).collect();
        let missing = vec![0; rules.len()];
        Some(StateCeiling {
            rules,
            uses,
            implies,
            goal_of,
            true_of,
            memo: HashMap::new(),
            derived: 0,
            reached: vec![false; n],
            missing,
        })
    }

    /// The cone's number for `fluent`, when the bound reads it.
    pub fn reads(&self, fluent: &Term) -> Option<u32> {
        self.true_of.get(fluent).copied()
    }

    /// The cone's size: its rules.
    pub fn rules(&self) -> usize {
        self.rules.len()
    }

    /// The highest goal of the first role that any play from a state whose
    /// cone fluents are `fluents` (by [`StateCeiling::reads`]'s numbers)
    /// can end with (0 when none is derivable). `fluents` is sorted in
    /// place.
    pub fn of(&mut self, fluents: &mut Vec<u32>) -> u8 {
        fluents.sort_unstable();
        fluents.dedup();
        if let Some(&v) = self.memo.get(fluents.as_slice()) {
            return v;
        }
        let v = self.derive(fluents);
        if self.memo.len() >= MAX_MEMO {
            self.memo.clear();
        }
        self.memo.insert(fluents.clone(), v);
        v
    }

    /// Distinct projections evaluated so far.
    pub fn evaluated(&self) -> usize {
        self.memo.len()
    }

    fn derive(&mut self, fluents: &[u32]) -> u8 {
        self.derived += 1;
        self.reached.fill(false);
        let mut queue: Vec<u32> = Vec::new();
        for (i, (head, pos)) in self.rules.iter().enumerate() {
            self.missing[i] = pos.len() as u32;
            if pos.is_empty() {
                queue.push(*head);
            }
        }
        queue.extend_from_slice(fluents);
        let mut best = 0;
        while let Some(a) = queue.pop() {
            if std::mem::replace(&mut self.reached[a as usize], true) {
                continue;
            }
            if let Some(v) = self.goal_of[a as usize] {
                best = best.max(v);
            }
            queue.extend(self.implies[a as usize]);
            for &r in &self.uses[a as usize] {
                let m = &mut self.missing[r as usize];
                *m -= 1;
                if *m == 0 {
                    queue.push(self.rules[r as usize].0);
                }
            }
        }
        best
    }
}

/// The checks of one window, after which [`Prune`] judges whether they pay.
const TRIAL: u64 = 5_000;

/// The derivations (checks the memo missed) of one window at most: where
/// every state is its own projection, a window of [`TRIAL`] would cost as
/// many expansions.
const MISS_TRIAL: u64 = 500;

/// The checks of one window of [`Prune`]'s, the memo's misses among them,
/// and the states they pruned.
#[derive(Default)]
struct Window {
    checks: u64,
    misses: u64,
    pruned: u64,
}

/// The share of a window's checks that must prune for [`Prune`] to go on
/// checking: one in `PAYS`.
const PAYS: u64 = 50;

/// Windows that did not pay before [`Prune`] stops for good: a game whose
/// goal is read off the whole board (a cube's faces) raises its best goal
/// often, and each window costs up to [`MISS_TRIAL`] derivations.
const MAX_USELESS: u32 = 2;

/// Branch and bound in a search over one engine: states whose ceiling is
/// no better than the best goal already reached are not expanded. A check
/// costs about one expansion where the memo misses (the cone is at most the
/// ground program), so it stops checking when, over a window of [`TRIAL`]
/// checks (or [`MISS_TRIAL`] misses), fewer than one in [`PAYS`] pruned; a
/// higher best goal starts the checks again, until [`MAX_USELESS`] windows
/// did not pay.
pub struct Prune {
    ceiling: StateCeiling,
    /// Per engine fluent number, the cone's number for it when the bound
    /// reads it (`None` while the engine's fluents are not looked at yet).
    numbered: Option<Vec<Option<u32>>>,
    checks: u64,
    pruned: u64,
    /// The checks since the last judgement.
    window: Window,
    /// Totals over the whole search, for its log.
    pub total_pruned: u64,
    /// The best goal the current trial is for; checks are off while it is
    /// the one they were judged useless for.
    judged: Option<u8>,
    off: bool,
    /// Windows that did not pay: after [`MAX_USELESS`], a higher best goal
    /// no longer starts the checks again.
    useless: u32,
    scratch: Vec<usize>,
    fluents: Vec<u32>,
}

impl Prune {
    /// The branch and bound for `game`'s first role over its ground
    /// program `ground` (see [`StateCeiling::new`]); `None` where no goal
    /// between 0 and 100 is in the relaxed model, so that no play ends
    /// with a best to bound by (most puzzles: 0 or 100).
    pub fn new(game: &Game, ground: &GroundProgram) -> Option<Prune> {
        let between = |v: &str| v.parse::<u8>().is_ok_and(|v| v > 0 && v < 100);
        if !ground
            .first_role_goals(game)
            .iter()
            .any(|(_, v)| between(v))
        {
            return None;
        }
        Some(Prune::over(StateCeiling::new(game, ground)?))
    }

    /// The branch and bound by `ceiling`, whatever the game's goals.
    pub fn over(ceiling: StateCeiling) -> Prune {
        Prune {
            ceiling,
            numbered: None,
            checks: 0,
            pruned: 0,
            window: Window::default(),
            total_pruned: 0,
            judged: None,
            off: false,
            useless: 0,
            scratch: Vec::new(),
            fluents: Vec::new(),
        }
    }

    /// Whether `state` can be left unexpanded: no play from it scores above
    /// `best`, the best goal a play already reached.
    pub fn cuts<M: StateMachine>(&mut self, m: &M, state: &M::State, best: u8) -> bool {
        if self.judged != Some(best) {
            self.judged = Some(best);
            self.off = self.useless >= MAX_USELESS;
            self.checks = 0;
            self.pruned = 0;
            self.window = Window::default();
        }
        if self.off {
            return false;
        }
        let before = self.ceiling.derived;
        let cut = self.ceiling_of(m, state) <= best;
        self.checks += 1;
        self.window.checks += 1;
        self.window.misses += self.ceiling.derived - before;
        if cut {
            self.window.pruned += 1;
            self.pruned += 1;
            self.total_pruned += 1;
        }
        if self.window.checks == TRIAL || self.window.misses == MISS_TRIAL {
            let w = std::mem::take(&mut self.window);
            if w.pruned * PAYS < w.checks {
                self.off = true;
                self.useless += 1;
                crate::progress!(
                    "[bound] the goal ceiling stops being checked: {} of {} states pruned, \
                     {} projections of {} rules",
                    self.pruned,
                    self.checks,
                    self.ceiling.evaluated(),
                    self.ceiling.rules()
                );
            }
        }
        cut
    }

    /// The highest goal any play from `state` can end with, by relaxed
    /// reachability over the goal atoms' cone.
    pub fn ceiling_of<M: StateMachine>(&mut self, m: &M, state: &M::State) -> u8 {
        self.project(m, state);
        self.ceiling.of(&mut self.fluents)
    }

    /// The state's fluents that the ceiling reads, into `self.fluents`.
    fn project<M: StateMachine>(&mut self, m: &M, state: &M::State) {
        self.fluents.clear();
        if m.numbered_fluents() > 0 {
            let ceiling = &self.ceiling;
            let numbered = self.numbered.get_or_insert_with(|| {
                (0..m.numbered_fluents())
                    .map(|i| ceiling.reads(&m.fluent_term(i)?))
                    .collect()
            });
            if m.fluent_numbers(state, &mut self.scratch) {
                self.fluents.extend(
                    self.scratch
                        .iter()
                        .filter_map(|&i| numbered.get(i).copied().flatten()),
                );
                return;
            }
        }
        for f in m.fluents(state) {
            self.fluents.extend(self.ceiling.reads(&f));
        }
    }
}
