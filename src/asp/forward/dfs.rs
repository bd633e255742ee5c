//! The depth-first search of [`super::run`]: the table of failed states,
//! the restarts on the Luby sequence, the look-ahead and the focused phase.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use hashbrown::HashMap;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::gdl::Term;
use crate::reasoner::StateMachine;

use super::super::bounds::Bound;
use super::super::solve::{Event, FoundPlan};
use super::super::{Proven, WorkerKind};
use super::blockers;
use super::ceiling::Prune;
use super::duals::{duals, Dual};
use super::support::{Analysis, Support};
use super::End;

/// The most states the table of failed states holds (16 bytes each with the
/// map's overhead: about 1 GiB); beyond it failures are no longer recorded.
const MAX_TABLE: usize = 40_000_000;

/// The most moves of a state's children whose outcome the search looks at
/// to order the children (see [`Dfs::search`]).
const MAX_LOOKAHEAD: usize = 256;

/// The moves the look-ahead judges before it must have found at least one in
/// three losing at once to go on (see [`Dfs::lookahead_pays`]).
const LOOKAHEAD_TRIAL: u64 = 20_000;

/// States the support analysis looks at before it must have found one dead
/// end in twenty to go on (see [`Dfs::support_pays`]).
const SUPPORT_TRIAL: u64 = 500;

/// The seed of the tie-breaks after the first run: the search is deterministic.
const SEED: u64 = 0x5eed_f0e5_7a7e;

/// How a subtree ended.
enum Search {
    Won,
    /// No win below; `cut` when the depth bound (not the game) ended some line.
    Failed {
        cut: bool,
    },
    /// The run's node budget is spent (see [`luby`]).
    Abandoned,
    Stopped,
}

/// The nodes of a run's budget per unit of the Luby sequence (a short run of
/// the propnet on peg solitaire, so that a run whose first choices were bad
/// is soon given up).
const RUN_NODES: u64 = 100_000;

/// The Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, ... (Luby, Sinclair and
/// Zuckerman 1993), `i` from 1.
fn luby(i: u64) -> u64 {
    let mut k = 1;
    while (1 << k) - 1 < i {
        k += 1;
    }
    if (1 << k) - 1 == i {
        1 << (k - 1)
    } else {
        luby(i - (1 << (k - 1)) + 1)
    }
}

/// A child in the search order: its sort key (goal, descending; legal moves;
/// tie-break), the move and the state.
type Child<M> = (
    (std::cmp::Reverse<u8>, usize, u32),
    <M as StateMachine>::Move,
    <M as StateMachine>::State,
);

pub(super) struct Dfs<'a, M: StateMachine> {
    m: &'a M,
    /// State hash -> the depth it was searched to without a win (`u32::MAX`:
    /// every line below it ended in the game).
    failed: HashMap<u64, u32>,
    hasher: hashbrown::DefaultHashBuilder,
    stop: &'a AtomicBool,
    /// The moves from the initial state to the state being searched.
    path: Vec<M::Move>,
    scratch: Vec<M::Move>,
    /// The best goal below 100 of the terminal states seen, and a plan to it.
    best: Option<(u8, Vec<M::Move>)>,
    /// Break ties among children at random (else in the game's order).
    shuffle: bool,
    /// The value of `count.nodes` at which the run is abandoned.
    budget: u64,
    /// The next run's number (from 1), kept when [`Dfs::runs`] pauses.
    run: u64,
    /// The CPU time of the thread the runs have used, over every call.
    cpu: Duration,
    rng: SmallRng,
    /// What the rules' analyses steer and prune by.
    steer: Steer<'a>,
    /// Some line was given up because goal 100 is out of its reach (by the
    /// support or the bound): what it would score below 100 is not known.
    pruned: bool,
    /// Where each new best plan below 100 goes ([`Event::Fallback`]).
    tx: &'a mpsc::Sender<Event>,
    count: Counts,
}

/// What the analyses of the rules give the depth-first search.
struct Steer<'a> {
    /// Fluent patterns that rule goal 100 out (see [`blockers`]).
    blockers: Vec<Term>,
    /// What goal 100 still needs of the final state (see [`support`]).
    support: Option<&'a Support>,
    /// Search like a constraint solver on the blockers (see [`Dfs::focus`]).
    focus: bool,
    /// The move arguments whose values are each played once (see [`super::duals`]).
    duals: Vec<Dual>,
    /// A score that must catch up with a clock for goal 100 (see [`bounds`]).
    bound: Option<Bound>,
    /// The branch and bound for the best goal below 100 (see [`Prune`]).
    ceiling: Option<Prune>,
}

/// What the search has done, for its budget and its progress lines.
#[derive(Default)]
struct Counts {
    /// States searched.
    nodes: u64,
    /// States the support analysed, and those it found dead ends.
    analysed: u64,
    dead: u64,
    /// Grandchild moves the look-ahead has judged, and those that lose at once.
    looked: u64,
    lost: u64,
}

impl<'a, M: StateMachine> Dfs<'a, M> {
    /// A search on `m` steered by the guides (see [`super::Guides`]); focused
    /// when there are blockers or unique-value groups to focus on.
    pub(super) fn new(
        m: &'a M,
        blockers: Vec<Term>,
        support: Option<&'a Support>,
        bound: Option<Bound>,
        ceiling: Option<Prune>,
        stop: &'a AtomicBool,
        tx: &'a mpsc::Sender<Event>,
    ) -> Self {
        Dfs {
            m,
            failed: HashMap::new(),
            hasher: hashbrown::DefaultHashBuilder::default(),
            stop,
            path: Vec::new(),
            scratch: Vec::new(),
            best: None,
            shuffle: false,
            budget: 0,
            run: 1,
            cpu: Duration::ZERO,
            rng: SmallRng::seed_from_u64(SEED),
            steer: Steer {
                focus: !blockers.is_empty() || support.is_some_and(Support::has_groups),
                blockers,
                support,
                duals: Vec::new(),
                bound,
                ceiling,
            },
            pruned: false,
            tx,
            count: Counts::default(),
        }
    }
}

impl<M: StateMachine> Dfs<'_, M> {
    /// The moves as terms.
    pub(super) fn terms(&self, moves: &[M::Move]) -> Vec<Term> {
        moves.iter().map(|m| self.m.move_term(m)).collect()
    }

    /// For a focused search, the [`super::duals`] of the initial state `root`.
    pub(super) fn find_duals(&mut self, root: &M::State) {
        if !self.steer.focus {
            return;
        }
        self.steer.duals = duals(self.m, root);
        if !self.steer.duals.is_empty() && crate::report::wanted() {
            let shown: Vec<String> = self
                .steer
                .duals
                .iter()
                .map(|d| format!("argument {} ({} values)", d.pos + 1, d.values.len()))
                .collect();
            crate::progress!(
                "[search] each move uses up its value of: {}",
                shown.join(", ")
            );
        }
    }

    /// The runs of the search from `root` (not terminal) to `max_steps`, until
    /// one wins, is stopped or exhausts the game; or, with `pause`, until the
    /// runs (of every call) have used that much CPU time of the thread, at the
    /// end of a run: then `None`, and the next call goes on with the next run
    /// and the table. `alone`: see [`super::Visit::alone`].
    pub(super) fn runs(
        &mut self,
        root: &M::State,
        max_steps: usize,
        alone: bool,
        pause: Option<Duration>,
    ) -> Option<End> {
        let work = crate::cputime::ThreadWatch::start();
        let used = self.cpu;
        loop {
            let run = self.run;
            self.run += 1;
            // The first run takes the game's order for ties; the later ones
            // break ties at random (seeded), each with a node budget on the
            // Luby sequence: the usual cure for the heavy tails of a
            // depth-first search whose first choices were bad. The table of
            // failed states carries over: its entries are facts whatever the
            // order.
            self.shuffle = run > 1;
            self.budget = self.count.nodes + luby(run) * RUN_NODES;
            let r = self.search(root, max_steps);
            self.cpu = used + work.elapsed();
            crate::progress!(
                "[search] run {run}: {} states, {} failed states kept, {:.2} s of CPU; \
                 look-ahead {}: {} of {} moves judged lose at once",
                self.count.nodes,
                self.failed.len(),
                self.cpu.as_secs_f64(),
                if self.lookahead_pays() { "on" } else { "off" },
                self.count.lost,
                self.count.looked,
            );
            match r {
                Search::Won => return Some(End::Won(self.terms(&self.path))),
                Search::Stopped => return Some(End::Stopped),
                Search::Abandoned => {
                    self.path.clear();
                    if pause.is_some_and(|p| self.cpu >= p) {
                        return None;
                    }
                }
                // The focused runs prove nothing: search the game whole.
                Search::Failed { .. } if self.steer.focus => {
                    crate::progress!("[search] the focused search failed: every move from now on");
                    self.steer.focus = false;
                    self.failed.clear();
                    self.path.clear();
                }
                // Alone, the search must also answer for the goals below
                // 100: the lines given up for goal 100 are searched again,
                // every one of them.
                Search::Failed { .. } if self.pruned && alone => {
                    crate::progress!(
                        "[search] goal 100 is out of reach: every line again, for the best goal below it"
                    );
                    self.steer.support = None;
                    self.steer.bound = None;
                    self.pruned = false;
                    self.failed.clear();
                    self.path.clear();
                }
                Search::Failed { cut } => {
                    return Some(End::Exhausted {
                        best: self.best.as_ref().map(|(g, moves)| (*g, self.terms(moves))),
                        complete: !cut,
                    })
                }
            }
        }
    }

    /// The state's goal (see [`super::best_goal`]).
    fn goal(&self, s: &M::State) -> u8 {
        super::best_goal(self.m, s)
    }

    /// Searches `s` (not terminal) for a win within `depth` moves.
    fn search(&mut self, s: &M::State, depth: usize) -> Search {
        if depth == 0 {
            return Search::Failed { cut: true };
        }
        let key = std::hash::BuildHasher::hash_one(&self.hasher, s);
        if let Some(r) = self.enter(key, depth) {
            return r;
        }
        if self.bounded(s) {
            // Every line below scores no more than the best: as good as
            // searched to its end, for the best goal's proof.
            self.fail(key, depth, false);
            return Search::Failed { cut: false };
        }
        let analysis = match self.analyse(s, key, depth) {
            Ok(a) => a,
            Err(r) => return r,
        };
        let (mut children, mut cut) = match self.expand(s) {
            Ok(c) => c,
            Err(r) => return r,
        };
        if self.steer.focus && !self.focus(s, &mut children, analysis.as_ref()) {
            self.fail(key, depth, true);
            return Search::Failed { cut: true };
        }
        self.order(&mut children);
        for (_, mv, next) in children {
            self.path.push(mv);
            match self.search(&next, depth - 1) {
                r @ (Search::Won | Search::Stopped | Search::Abandoned) => return r,
                Search::Failed { cut: c } => cut |= c,
            }
            self.path.pop();
        }
        self.fail(key, depth, cut);
        Search::Failed { cut }
    }

    /// What ends the search of the state `key` before its moves are looked
    /// at: the table (searched deep enough already), the run's node budget,
    /// the stop flag. Counts the state and reports progress.
    fn enter(&mut self, key: u64, depth: usize) -> Option<Search> {
        if let Some(&d) = self.failed.get(&key) {
            if d as usize >= depth {
                return Some(Search::Failed { cut: d != u32::MAX });
            }
        }
        self.count.nodes += 1;
        if self.count.nodes >= self.budget {
            return Some(Search::Abandoned);
        }
        if self.count.nodes.is_multiple_of(1024) {
            if self.stop.load(Ordering::Relaxed) {
                return Some(Search::Stopped);
            }
            if self.count.nodes.is_multiple_of(1 << 20) {
                crate::progress!(
                    "[search] {} states, {} failed states kept, depth {}",
                    self.count.nodes,
                    self.failed.len(),
                    self.path.len()
                );
            }
        }
        None
    }

    /// The support's analysis of `s` where it pays (see
    /// [`Dfs::support_pays`]); the search's end when it finds goal 100 out of
    /// reach.
    fn analyse(
        &mut self,
        s: &M::State,
        key: u64,
        depth: usize,
    ) -> Result<Option<Analysis>, Search> {
        match self.steer.support {
            Some(support) if self.support_pays() => {
                self.count.analysed += 1;
                match support.analyse(&self.m.fluents(s)) {
                    Some(a) => Ok(Some(a)),
                    None => {
                        // Goal 100 is out of reach; what lines from here
                        // would score below it is not known.
                        self.count.dead += 1;
                        self.pruned = true;
                        self.fail(key, depth, true);
                        Err(Search::Failed { cut: true })
                    }
                }
            }
            _ => Ok(None),
        }
    }

    /// The children of `s` worth searching, and whether the bound gave up
    /// some; terminal children are judged here (a new best goal below 100
    /// is sent as a fallback). `Err(Search::Won)`, the move on the path,
    /// when a move wins at once.
    fn expand(&mut self, s: &M::State) -> Result<(Vec<Child<M>>, bool), Search> {
        let mut moves = Vec::new();
        self.m.legal_moves(s, 0, &mut moves);
        let mut children: Vec<Child<M>> = Vec::with_capacity(moves.len());
        // Lines given up by the bound, not played out: what they would have
        // scored below 100 is not known.
        let mut cut = false;
        // All next states first, then each child's questions together: the
        // prover keeps the tables of one state at a time, and alternating
        // between a state and its children recomputes them at every turn
        // (ruleDepthExponential: 2^k rows a state at step k).
        let nexts: Vec<(M::Move, M::State)> = moves
            .into_iter()
            .map(|mv| {
                let next = self.m.next_state(s, std::slice::from_ref(&mv));
                (mv, next)
            })
            .collect();
        for (mv, next) in nexts {
            if self.m.is_terminal(&next) {
                let g = self.goal(&next);
                if g == 100 {
                    self.path.push(mv);
                    return Err(Search::Won);
                }
                self.ended(mv, g);
                continue;
            }
            if self.out_of_reach(&next) {
                cut = true;
                self.pruned = true;
                continue;
            }
            let g = self.goal(&next);
            let tie = if self.shuffle {
                self.rng.gen()
            } else {
                children.len() as u32
            };
            // Unfocused, every child's moves are counted: now, while its
            // tables are at hand.
            let count = if self.steer.focus {
                usize::MAX
            } else {
                self.m.legal_moves(&next, 0, &mut self.scratch);
                self.scratch.len()
            };
            children.push(((std::cmp::Reverse(g), count, tie), mv, next));
        }
        Ok((children, cut))
    }

    /// A line that ends in the game with goal `g` below 100 by the move `mv`
    /// after the path: a new best is kept and sent as a fallback.
    fn ended(&mut self, mv: M::Move, g: u8) {
        if g > self.best.as_ref().map_or(0, |b| b.0) {
            let mut plan = self.path.clone();
            plan.push(mv);
            self.fallback(g, &plan);
            self.best = Some((g, plan));
        }
    }

    /// Sends a play from the initial state that ends with goal `g` below 100
    /// as a fallback: a line of the search, or the beam phase's. The beam's
    /// does not become the search's best: a best goal the search has not
    /// reached itself would switch its branch and bound on early, and where
    /// it prunes a few states in fifty at the cost of a derivation each, it
    /// slows the search tenfold (comp2006_PEG_S.2 with the beam's goal 99:
    /// 100,000 states in 20.7 s, not 2.2 s).
    pub(super) fn fallback(&self, g: u8, plan: &[M::Move]) {
        let found = FoundPlan {
            plan: plan.iter().map(|m| self.m.move_term(m)).collect(),
            goal: g,
            proven: Proven::None,
        };
        let _ = self.tx.send(Event::Fallback(WorkerKind::Search, found));
    }

    /// Sorts the children into the search order: best goal first, then the
    /// child with the fewest moves (fail first: Warnsdorff's rule on a
    /// knight's tour), then the tie-break.
    fn order(&mut self, children: &mut [Child<M>]) {
        // Counted only for the children the focus keeps: the dearest part.
        let mut grandchildren = 0;
        for child in children.iter_mut() {
            if child.0 .1 == usize::MAX {
                self.m.legal_moves(&child.2, 0, &mut self.scratch);
                child.0 .1 = self.scratch.len();
            }
            grandchildren += child.0 .1;
        }
        if grandchildren <= MAX_LOOKAHEAD && self.lookahead_pays() {
            self.look_ahead(children);
        }
        children.sort_by_key(|c| c.0);
    }

    /// Counts only the moves of each child that do not lose at once: a
    /// knight's tour whose moves onto its own trail end the game
    /// (knightsTourLarge_ggpbase2010), or leave the score too far behind the
    /// clock (hunterbig), needs Warnsdorff's rule on the squares still open.
    /// Where it is cheap (see [`Dfs::order`]).
    fn look_ahead(&mut self, children: &mut [Child<M>]) {
        for child in children.iter_mut() {
            self.m.legal_moves(&child.2, 0, &mut self.scratch);
            let afters: Vec<M::State> = self
                .scratch
                .iter()
                .map(|mv| self.m.next_state(&child.2, std::slice::from_ref(mv)))
                .collect();
            child.0 .1 = afters
                .iter()
                .filter(|after| {
                    if self.m.is_terminal(after) {
                        self.goal(after) == 100
                    } else {
                        !self.out_of_reach(after)
                    }
                })
                .count();
            self.count.looked += afters.len() as u64;
            self.count.lost += (afters.len() - child.0 .1) as u64;
        }
    }

    /// Whether the look-ahead of [`Dfs::search`] still earns its cost, a
    /// next state for every grandchild move: through its trial, and after it
    /// while at least one move in three it judges loses at once. On the
    /// knight's tours far more do, and the look-ahead is what finds them; on
    /// peg solitaire and vectorracer6 far fewer do, and it only made each
    /// state many times dearer: both lost their plans.
    fn lookahead_pays(&self) -> bool {
        self.count.looked < LOOKAHEAD_TRIAL || self.count.lost * 3 >= self.count.looked
    }

    /// Whether the support analysis earns its cost: always where it has
    /// unique-value groups to reason over (the focus needs it), else after
    /// its trial while one state in twenty it analyses is a dead end.
    fn support_pays(&self) -> bool {
        self.steer.support.is_some_and(Support::has_groups)
            || self.count.analysed < SUPPORT_TRIAL
            || self.count.dead * 20 >= self.count.analysed
    }

    /// The focused step on the support's unique-value groups (a constraint
    /// solver's most constrained variable): `children` keeps the moves that
    /// bring in a candidate of the open group with the fewest candidates;
    /// false when no move does (a dead end if every group must be filled
    /// from here, as in a fill-in puzzle; the plain search looks again).
    fn group_focus(&self, support: &Support, a: &Analysis, children: &mut Vec<Child<M>>) -> bool {
        let Some(group) = a
            .open
            .iter()
            .filter(|g| !g.is_empty())
            .min_by_key(|g| g.len())
        else {
            return true;
        };
        let wanted: Vec<&Term> = group.iter().map(|&f| support.fluent(f)).collect();
        children.retain(|(_, _, next)| self.m.fluents(next).iter().any(|f| wanted.contains(&f)));
        !children.is_empty()
    }

    /// Whether the [`bounds`] rule goal 100 out in `s` (not terminal).
    fn out_of_reach(&self, s: &M::State) -> bool {
        self.steer
            .bound
            .as_ref()
            .is_some_and(|b| b.rules_out(&self.m.fluents(s)))
    }

    /// Whether no line from `s` can score above the best goal below 100
    /// already reached (branch and bound): nor reach goal 100.
    fn bounded(&mut self, s: &M::State) -> bool {
        let Some(best) = self.best.as_ref().map(|b| b.0) else {
            return false;
        };
        self.steer
            .ceiling
            .as_mut()
            .is_some_and(|c| c.cuts(self.m, s, best))
    }

    /// Records a state searched to `depth` without a win.
    fn fail(&mut self, key: u64, depth: usize, cut: bool) {
        if self.failed.len() < MAX_TABLE || self.failed.contains_key(&key) {
            let d = if cut { depth as u32 } else { u32::MAX };
            self.failed.insert(key, d);
        }
    }

    /// The focused step, a constraint solver's forward checking and most
    /// constrained variable on the blockers of `s` (the fluents that must be
    /// gone for goal 100, blank cells) and the values of the [`super::duals`] not yet
    /// played (hidato's numbers): false when some blocker is removed by no
    /// move, or some such value is played by none (a dead end, if moves only
    /// ever get fewer, as in fill-in puzzles), else `children` keeps only the
    /// moves of the variable with the fewest (a blocker's on a tie). Both
    /// steps assume the game is such a puzzle, so what the focused runs fail
    /// to find, the plain search looks for again.
    fn focus(
        &self,
        s: &M::State,
        children: &mut Vec<Child<M>>,
        analysis: Option<&Analysis>,
    ) -> bool {
        if let (Some(support), Some(a)) = (self.steer.support, analysis) {
            if support.has_groups() {
                return self.group_focus(support, a, children);
            }
        }
        let here: Vec<Term> = self
            .m
            .fluents(s)
            .into_iter()
            .filter(|f| self.steer.blockers.iter().any(|p| blockers::matches(p, f)))
            .collect();
        if here.is_empty() {
            return true;
        }
        let mut removers = vec![0usize; here.len()];
        // Each blocker as a state of its own, asked of every child as a
        // subset (a few words of a bitset on the propnet) rather than by
        // building every child's fluents as terms: on sudokuGrade6E that
        // was most of the search's time.
        let parts: Option<Vec<M::State>> = here
            .iter()
            .map(|b| self.m.state_from_fluents(std::slice::from_ref(b)))
            .collect();
        let removed: Vec<Vec<bool>> = children
            .iter()
            .map(|(_, _, next)| {
                let gone: Vec<bool> = match &parts {
                    Some(parts) => parts.iter().map(|p| !self.m.includes(next, p)).collect(),
                    None => {
                        let after: hashbrown::HashSet<Term> =
                            self.m.fluents(next).into_iter().collect();
                        here.iter().map(|b| !after.contains(b)).collect()
                    }
                };
                for (n, g) in removers.iter_mut().zip(&gone) {
                    *n += usize::from(*g);
                }
                gone
            })
            .collect();
        let Some((target, &fewest)) = removers.iter().enumerate().min_by_key(|(_, n)| **n) else {
            return true;
        };
        if fewest == 0 {
            return false;
        }
        match self.dual_focus(children, fewest) {
            DualPick::Unplayable => return false,
            DualPick::Value(d, value) => {
                let Dual { relation, pos, .. } = self.steer.duals[d];
                children.retain(|(_, mv, _)| {
                    let t = self.m.move_term(mv);
                    t.relation() == Some(relation) && t.args()[pos] == value
                });
                return true;
            }
            DualPick::None => {}
        }
        let mut keep = removed.iter().map(|gone| gone[target]);
        children.retain(|_| keep.next().unwrap_or(false));
        true
    }

    /// The [`super::duals`]' part of [`Dfs::focus`]: the value not yet played with
    /// the fewest moves, if fewer than `fewest` (the blockers' best).
    fn dual_focus(&self, children: &[Child<M>], fewest: usize) -> DualPick {
        if self.steer.duals.is_empty() {
            return DualPick::None;
        }
        let played: Vec<Term> = self.path.iter().map(|mv| self.m.move_term(mv)).collect();
        let moves: Vec<Term> = children
            .iter()
            .map(|(_, mv, _)| self.m.move_term(mv))
            .collect();
        let mut best: Option<(usize, &Term, usize)> = None;
        for (d, dual) in self.steer.duals.iter().enumerate() {
            let plays = |t: &Term, value: &Term| {
                t.relation() == Some(dual.relation) && t.args()[dual.pos] == *value
            };
            for value in &dual.values {
                if played.iter().any(|t| plays(t, value)) {
                    continue;
                }
                let n = moves.iter().filter(|t| plays(t, value)).count();
                if n == 0 {
                    return DualPick::Unplayable;
                }
                if n < best.map_or(fewest, |b| b.2) {
                    best = Some((d, value, n));
                }
            }
        }
        match best {
            Some((d, value, _)) => DualPick::Value(d, value.clone()),
            None => DualPick::None,
        }
    }
}

/// What [`Dfs::dual_focus`] picks.
enum DualPick {
    /// No value has fewer moves than the best blocker.
    None,
    /// A value not yet played has no move: a dead end.
    Unplayable,
    /// The index of the dual and its value with the fewest moves.
    Value(usize, Term),
}

#[cfg(test)]
mod tests {
    use super::luby;

    #[test]
    fn luby_sequence() {
        let first: Vec<u64> = (1..=15).map(luby).collect();
        assert_eq!(first, [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]);
    }
}
