//! Monte Carlo tree search for any game: decoupled UCT over n roles.
//!
//! In every node each role picks its own move by UCB1 over its own statistics
//! (visits and summed goal of that role per move), so simultaneous moves need no
//! special case and alternating games fall out naturally (the role not on the move
//! has one move, `noop`). Every role maximises its own goal, scaled to 0..1.
//!
//! - Terminal nodes carry their exact goals; a move that wins at once (terminal
//!   with goal 100 for us whatever the others do) is taken. At turn nodes (one
//!   role with a choice) exact values are backed up as in MCTS-Solver, so forced
//!   wins deeper down are proven and played.
//! - One-player games remember the best complete line seen (tree part and
//!   playout), and follow it once it reaches 100.
//! - The tree is kept across moves: [`Mcts::advance`] re-roots it at the child of
//!   the joint move played; `node_limit` bounds memory (expansion stops when full,
//!   playouts go on).
//! - Anytime: [`Mcts::best_move`] may be asked at any moment.
//! - Threads: root parallel by default. Each thread searches its own tree of the
//!   same root with its own random stream; the root statistics are summed when a
//!   move is chosen. Tree parallel as an option: the threads share one tree with
//!   atomic statistics and no lock on it (see [`tree`]). docs/player.md says why
//!   root parallel is the default.
//! - Seams: [`policy::TreePolicy`], [`policy::PlayoutPolicy`], [`policy::Evaluator`].
//! - Where whole playouts do not fit the clock, states are scored by what
//!   the rules say of them ([`heuristic`]): the goal where it is defined and
//!   each role's material.

mod append;
mod descent;
pub mod enhance;
pub mod gifl;
pub mod heuristic;
pub mod meta;
pub mod minimax;
mod node;
mod playouts;
pub mod policy;
mod tree;
pub mod trials;

use std::sync::Arc;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde::Serialize;

use crate::reasoner::{RoleIdx, StateMachine};
pub use enhance::Enhancements;
use node::Node;
pub use playouts::LeafUse;
use playouts::Policies;
use policy::{Evaluator, GoalEvaluator, MoveStats, PlayoutPolicy, RandomPlayout, TreePolicy, Ucb1};
use tree::{Local, Tree};

/// How several threads share the work of one search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Parallel {
    /// One tree per thread, root statistics summed when a move is chosen.
    #[default]
    Root,
    /// One tree behind a lock, virtual loss on the edges being played out;
    /// playouts run outside the lock.
    Tree,
}

/// Settings of a search.
#[derive(Clone, Debug)]
pub struct SearchConfig {
    /// UCB1's exploration constant, on values scaled to 0..1.
    pub exploration: f64,
    /// Threads used by [`Mcts::search_until`].
    pub threads: usize,
    /// How the threads share the search.
    pub parallel: Parallel,
    /// Most nodes kept, over all trees.
    pub node_limit: usize,
    pub seed: u64,
    /// A playout is cut off after this many joint moves and scored by the evaluator.
    pub max_playout_steps: usize,
    /// RAVE, widening, MAST, cut-off (see [`enhance`]).
    pub enhancements: Enhancements,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            exploration: 0.7,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            parallel: Parallel::Root,
            node_limit: 2_000_000,
            seed: 1,
            max_playout_steps: 500,
            enhancements: Enhancements::default(),
        }
    }
}

/// Counters of a search, summed over its trees.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SearchStats {
    /// Iterations since the search was created.
    pub iterations: u64,
    /// Playouts run (iterations that did not end in a terminal tree node).
    pub playouts: u64,
    /// Nodes in the trees now.
    pub nodes: usize,
    /// Deepest selection path seen.
    pub max_depth: usize,
    /// Visits of the current root (over all trees).
    pub root_visits: u64,
    pub trees: usize,
    /// Iterations and seconds of the last `search_*` call.
    pub last_iterations: u64,
    pub last_seconds: f64,
}

impl SearchStats {
    pub fn iterations_per_s(&self) -> f64 {
        self.last_iterations as f64 / self.last_seconds.max(1e-9)
    }
}

/// A UCT search from one root, kept across moves.
pub struct Mcts<M: StateMachine> {
    machine: Arc<M>,
    cfg: SearchConfig,
    trees: Vec<Tree<M>>,
    tree_policy: Arc<dyn TreePolicy>,
    playout_policy: Arc<dyn PlayoutPolicy<M>>,
    evaluator: Arc<dyn Evaluator<M>>,
    /// A value of the state where a playout starts, and how it is used.
    leaf: Option<(Arc<dyn Evaluator<M>>, LeafUse)>,
    /// Implicit minimax backups: the heuristic and its weight.
    minimax: Option<(Arc<dyn Evaluator<M>>, f64)>,
    /// Neither policy was replaced (see `Policies::plain`).
    plain: bool,
    last_iterations: u64,
    last_seconds: f64,
    /// Per role, a move that wins at once from the root (see `find_wins`).
    wins: Vec<Option<M::Move>>,
}

impl<M: StateMachine + 'static> Mcts<M> {
    /// A search of `machine` from `state`; with the heuristic enhancement,
    /// its evaluator read from `machine`'s rules ([`heuristic::Heuristic`]).
    pub fn new(machine: Arc<M>, state: M::State, cfg: SearchConfig) -> Self {
        let heuristic = cfg.enhancements.heuristic;
        let against = cfg.enhancements.against;
        let evaluator: Arc<dyn Evaluator<M>> = if heuristic {
            Arc::new(heuristic::Heuristic::new(&*machine).against(against))
        } else {
            Arc::new(GoalEvaluator)
        };
        let root = Node::new(&*machine, state, &*evaluator);
        let wins = Self::find_wins(&machine, &root);
        let per_tree = match cfg.parallel {
            Parallel::Root => cfg.node_limit / cfg.threads.max(1),
            Parallel::Tree => cfg.node_limit,
        };
        let tree = Tree::new(
            root,
            SmallRng::seed_from_u64(cfg.seed),
            per_tree,
            cfg.enhancements.transpositions,
        );
        let relative = cfg.enhancements.relative;
        let leaf = cfg.enhancements.prior.map(|visits| {
            let h = heuristic::Heuristic::new(&*machine).against(against);
            let h: Arc<dyn Evaluator<M>> = if relative {
                Arc::new(heuristic::Relative::new(h))
            } else {
                Arc::new(h)
            };
            h.rebase(&*machine, &tree.root().state);
            (h, LeafUse::Prior(visits))
        });
        let minimax = cfg.enhancements.minimax.map(|alpha| {
            let h: Arc<dyn Evaluator<M>> =
                Arc::new(heuristic::Heuristic::new(&*machine).against(against));
            (h, alpha)
        });
        Mcts {
            tree_policy: Arc::new(Ucb1 {
                exploration: cfg.exploration,
            }),
            minimax,
            playout_policy: Arc::new(RandomPlayout),
            evaluator,
            leaf,
            plain: !heuristic,
            machine,
            cfg,
            trees: vec![tree],
            last_iterations: 0,
            last_seconds: 0.0,
            wins,
        }
    }

    /// Replaces the tree policy (UCB1 by default).
    pub fn with_tree_policy(mut self, p: Arc<dyn TreePolicy>) -> Self {
        self.tree_policy = p;
        self
    }

    /// Replaces the playout policy (uniform random by default).
    pub fn with_playout_policy(mut self, p: Arc<dyn PlayoutPolicy<M>>) -> Self {
        self.playout_policy = p;
        self.plain = false;
        self
    }

    /// GIFL ([`gifl`]): learns features from `walks` random walks (fewer when
    /// `deadline` passes) and plays out by them from now on.
    /// Returns the features learned; with none (a game without turns, or no
    /// walk won) the playouts stay uniform random, on the engine's own loop.
    pub fn learn_features(&mut self, walks: usize, deadline: Option<Instant>) -> usize {
        let mut rng = SmallRng::seed_from_u64(self.cfg.seed ^ 0x6f1f_1eaf);
        let features = gifl::learn(&*self.machine, walks, deadline, &mut rng);
        let n = features.len();
        if n == 0 {
            return 0;
        }
        self.playout_policy = Arc::new(gifl::GiflPolicy {
            features: Arc::new(features),
            tau: gifl::TAU,
        });
        self.plain = false;
        n
    }

    /// Replaces the evaluation of playout ends (the game's goals by default).
    pub fn with_evaluator(mut self, e: Arc<dyn Evaluator<M>>) -> Self {
        self.evaluator = e;
        self.plain = false;
        self
    }

    /// Mixes `e`'s value of the state each playout starts from with the
    /// playout's outcome: `weight * e + (1 - weight) * playout` is backed up
    /// (AlphaGo's mixing of a value network and rollouts). The playouts
    /// themselves are unchanged.
    pub fn with_leaf_value(mut self, e: Arc<dyn Evaluator<M>>, weight: f64) -> Self {
        self.leaf = Some((e, LeafUse::Mix(weight.clamp(0.0, 1.0))));
        self
    }

    /// Counts `e`'s value of each node the search adds as `visits` visits
    /// on the edge into it ([`LeafUse::Prior`]); the playouts are unchanged
    /// and their outcomes backed up unmixed.
    pub fn with_leaf_prior(mut self, e: Arc<dyn Evaluator<M>>, visits: u32) -> Self {
        self.leaf = Some((e, LeafUse::Prior(visits)));
        self
    }

    pub fn machine(&self) -> &Arc<M> {
        &self.machine
    }

    pub fn config(&self) -> &SearchConfig {
        &self.cfg
    }

    /// Joint moves a playout runs at most: the cut-off when one is set;
    /// none, scored by the heuristic, the leaf itself being scored.
    fn playout_steps(&self) -> usize {
        match self.cfg.enhancements.cutoff {
            Some(c) => c.min(self.cfg.max_playout_steps),
            None if self.cfg.enhancements.heuristic => 0,
            None => self.cfg.max_playout_steps,
        }
    }

    /// The state at the root.
    pub fn state(&self) -> &M::State {
        &self.trees[0].root().state
    }

    /// Searches until `deadline` on `cfg.threads` threads (root parallel).
    pub fn search_until(&mut self, deadline: Instant) {
        let started = Instant::now();
        let before = self.total_iterations();
        let threads = self.cfg.threads.max(1);
        while self.cfg.parallel == Parallel::Root && self.trees.len() < threads {
            let root = Node::new(&*self.machine, self.state().clone(), &*self.evaluator);
            let seed = self
                .cfg
                .seed
                .wrapping_add(0x9E37_79B9_7F4A_7C15u64.wrapping_mul(self.trees.len() as u64));
            let mut t = Tree::new(
                root,
                SmallRng::seed_from_u64(seed),
                self.cfg.node_limit / threads,
                self.cfg.enhancements.transpositions,
            );
            t.local.best_line = self.trees[0].local.best_line.clone();
            self.trees.push(t);
        }
        let machine = &*self.machine;
        let pol = Policies {
            tree: &*self.tree_policy,
            playout: &*self.playout_policy,
            eval: &*self.evaluator,
            leaf: self.leaf.as_ref().map(|(e, u)| (&**e, *u)),
            max_playout_steps: self.playout_steps(),
            plain: self.plain,
            enh: self.cfg.enhancements,
            exploration: self.cfg.exploration,
            minimax: self.minimax.as_ref().map(|(h, a)| (&**h, *a)),
        };
        if threads == 1 {
            run_until(&mut self.trees[0], machine, &pol, deadline);
        } else if self.cfg.parallel == Parallel::Tree {
            shared_tree(
                &mut self.trees[0],
                machine,
                &pol,
                deadline,
                threads,
                self.cfg.seed,
            );
        } else {
            std::thread::scope(|s| {
                for t in &mut self.trees {
                    let pol = &pol;
                    s.spawn(move || run_until(t, machine, pol, deadline));
                }
            });
        }
        self.last_iterations = self.total_iterations() - before;
        self.last_seconds = started.elapsed().as_secs_f64();
    }

    /// Runs exactly `n` iterations on one tree, on this thread: deterministic for
    /// a given seed, for tests.
    pub fn search_iterations(&mut self, n: u64) {
        let started = Instant::now();
        let pol = Policies {
            tree: &*self.tree_policy,
            playout: &*self.playout_policy,
            eval: &*self.evaluator,
            leaf: self.leaf.as_ref().map(|(e, u)| (&**e, *u)),
            max_playout_steps: self.playout_steps(),
            plain: self.plain,
            enh: self.cfg.enhancements,
            exploration: self.cfg.exploration,
            minimax: self.minimax.as_ref().map(|(h, a)| (&**h, *a)),
        };
        for _ in 0..n {
            self.trees[0].iterate(&*self.machine, &pol, None);
        }
        self.last_iterations = n;
        self.last_seconds = started.elapsed().as_secs_f64();
    }

    fn total_iterations(&self) -> u64 {
        self.trees.iter().map(|t| t.local.iterations).sum()
    }

    /// Per move of `role` at the root: visits and summed value over all trees.
    pub fn root_stats(&self, role: RoleIdx) -> Vec<(M::Move, MoveStats)> {
        let root = self.trees[0].root();
        let Some(moves) = root.moves.get(role) else {
            return Vec::new();
        };
        let mut out: Vec<(M::Move, MoveStats)> =
            moves.iter().cloned().zip(root.stats(role)).collect();
        for t in &self.trees[1..] {
            let r = t.root();
            let Some(tm) = r.moves.get(role) else {
                continue;
            };
            let st = r.stats(role);
            for (i, m) in tm.iter().enumerate() {
                // The same state gives the same legal list; look up by value anyway.
                let j = if out.get(i).is_some_and(|(x, _)| x == m) {
                    Some(i)
                } else {
                    out.iter().position(|(x, _)| x == m)
                };
                if let Some(j) = j {
                    out[j].1.visits += st[i].visits;
                    out[j].1.sum += st[i].sum;
                }
            }
        }
        out
    }

    /// The move to play for `role` now: a move that wins at once; in a one-player
    /// game the first move of a line reaching 100; else the most visited move
    /// (ties broken by mean). `None` when the root is terminal or `role` has no
    /// legal move.
    pub fn try_best_move(&self, role: RoleIdx) -> Option<M::Move> {
        let root = self.trees[0].root();
        if root.terminal || role >= root.moves.len() {
            return None;
        }
        if let Some(m) = self.proven_move(role) {
            return Some(m);
        }
        let stats = self.root_stats(role);
        let mut best: Option<&(M::Move, MoveStats)> = None;
        for s in &stats {
            let better = match best {
                None => true,
                Some(b) => {
                    s.1.visits > b.1.visits || (s.1.visits == b.1.visits && s.1.mean() > b.1.mean())
                }
            };
            if better {
                best = Some(s);
            }
        }
        best.map(|(m, _)| m.clone())
    }

    /// The root's exact values (each role's goal scaled to 0..1) once the
    /// search has proven them: terminal, or solved in some tree.
    pub fn proven_values(&self) -> Option<Vec<f64>> {
        self.trees
            .iter()
            .find_map(|t| t.root().values.get().cloned())
    }

    /// A move for `role` the search has proven rather than estimated: one
    /// that wins at once, one of a solved node, or in a one-player game the
    /// first move of a line reaching 100.
    pub fn proven_move(&self, role: RoleIdx) -> Option<M::Move> {
        if let Some(Some(m)) = self.wins.get(role) {
            return Some(m.clone());
        }
        for t in &self.trees {
            if let Some(i) = t.solved_move(role) {
                return Some(t.root().moves[role][i].clone());
            }
        }
        if let Some((line, 100)) = self.best_line() {
            if let Some(first) = line.first() {
                return Some(first[role].clone());
            }
        }
        None
    }

    /// [`Mcts::try_best_move`] for a root where `role` has a move.
    ///
    /// # Panics
    /// When the root is terminal or `role` has no legal move there.
    pub fn best_move(&self, role: RoleIdx) -> M::Move {
        self.try_best_move(role)
            .expect("best_move asked in a terminal state or for a role without legal moves")
    }

    /// Per role, a move after which the game is over with goal 100 for that
    /// role whatever the other roles play. Checked once per root, when the roles
    /// have at most 256 joint moves there, so asking for the best move stays
    /// instant after a search.
    fn find_wins(machine: &M, root: &Node<M>) -> Vec<Option<M::Move>> {
        let roles = root.moves.len();
        let mut wins = vec![None; roles];
        let total = root
            .moves
            .iter()
            .try_fold(1usize, |a, l| a.checked_mul(l.len()));
        if root.terminal || total.is_none_or(|t| t > 256) {
            return wins;
        }
        let total = total.unwrap_or(0);
        // wins_for[r][i]: move i of role r has won against every reply so far.
        let mut wins_for: Vec<Vec<bool>> = root.moves.iter().map(|l| vec![true; l.len()]).collect();
        let mut idx = vec![0usize; roles];
        for k in 0..total {
            let mut rest = k;
            for r in (0..roles).rev() {
                let n = root.moves[r].len();
                idx[r] = rest % n;
                rest /= n;
            }
            if (0..roles).all(|r| !wins_for[r][idx[r]]) {
                continue;
            }
            let joint: Vec<M::Move> = (0..roles).map(|r| root.moves[r][idx[r]].clone()).collect();
            let next = machine.next_state(&root.state, &joint);
            let terminal = machine.is_terminal(&next);
            for r in 0..roles {
                if wins_for[r][idx[r]] && !(terminal && machine.goal(&next, r) == Some(100)) {
                    wins_for[r][idx[r]] = false;
                }
            }
        }
        for r in 0..roles {
            if let Some(i) = wins_for[r].iter().position(|&w| w) {
                wins[r] = Some(root.moves[r][i].clone());
            }
        }
        wins
    }

    /// Follows the joint move played: the root moves to its child, the subtree
    /// below it is kept.
    pub fn advance(&mut self, joint: &[M::Move]) {
        let machine = &*self.machine;
        for t in &mut self.trees {
            t.advance(machine, joint, &*self.evaluator);
        }
        if let Some((e, _)) = &self.leaf {
            e.rebase(machine, &self.trees[0].root().state);
        }
        self.wins = Self::find_wins(machine, self.trees[0].root());
    }

    pub fn stats(&self) -> SearchStats {
        SearchStats {
            iterations: self.total_iterations(),
            playouts: self.trees.iter().map(|t| t.local.playouts).sum(),
            nodes: self.trees.iter().map(|t| t.node_count()).sum(),
            max_depth: self
                .trees
                .iter()
                .map(|t| t.local.max_depth)
                .max()
                .unwrap_or(0),
            root_visits: self.trees.iter().map(|t| t.root().visits()).sum(),
            trees: self.trees.len(),
            last_iterations: self.last_iterations,
            last_seconds: self.last_seconds,
        }
    }

    /// The heuristic that scores the search's states, in words, when one
    /// does (not the game's goals alone).
    pub fn heuristic(&self) -> Option<String> {
        let game = self.machine.game();
        self.leaf
            .as_ref()
            .and_then(|(e, _)| e.describe(game))
            .or_else(|| self.evaluator.describe(game))
    }

    /// The principal line from the root, starting with `role` playing
    /// `first`: at each node every role's most visited move (ties broken
    /// by mean), down the first tree while the child is expanded, `max`
    /// joint moves at most (what the search expects to be played).
    pub fn principal_line(&self, role: RoleIdx, first: &M::Move, max: usize) -> Vec<Vec<M::Move>> {
        let store = &self.trees[0].store;
        let mut node = store.root();
        let mut line = Vec::new();
        while line.len() < max && !node.terminal && !node.moves.is_empty() {
            let idx: Vec<usize> = (0..node.moves.len())
                .map(|r| {
                    let forced = (line.is_empty() && r == role)
                        .then(|| node.moves[r].iter().position(|m| m == first))
                        .flatten();
                    let stats = node.stats(r);
                    forced.unwrap_or_else(|| {
                        (0..stats.len())
                            .max_by(|&a, &b| {
                                (stats[a].visits, stats[a].mean())
                                    .partial_cmp(&(stats[b].visits, stats[b].mean()))
                                    .unwrap_or(std::cmp::Ordering::Equal)
                            })
                            .unwrap_or(0)
                    })
                })
                .collect();
            line.push(
                idx.iter()
                    .enumerate()
                    .map(|(r, &i)| node.moves[r][i].clone())
                    .collect(),
            );
            match node.child(node.key(&idx)) {
                Some(c) => node = store.node(c),
                None => break,
            }
        }
        line
    }

    /// One-player games: the best complete line from the root seen so far (joint
    /// moves) and the goal it reaches.
    pub fn best_line(&self) -> Option<(Vec<Vec<M::Move>>, u8)> {
        self.trees
            .iter()
            .filter_map(|t| t.local.best_line.as_ref())
            .max_by_key(|(_, g)| *g)
            .cloned()
    }
}

/// Tree parallel: `threads` threads on one tree, without a lock on it: the
/// statistics are atomics and new nodes are published with a compare-and-swap
/// (see [`tree`]). The visits counted on the way down act as virtual loss,
/// steering the other threads elsewhere while a playout is out. Each thread
/// keeps its own counts, scratch and random numbers (nothing else is written
/// by all of them), added to the tree's when they join. MAST's table belongs
/// to a tree searched by one thread: tree-parallel playouts are random (or
/// RAVE's).
fn shared_tree<M: StateMachine>(
    tree: &mut Tree<M>,
    machine: &M,
    pol: &Policies<M>,
    deadline: Instant,
    threads: usize,
    seed: u64,
) {
    let store = &tree.store;
    let found: Vec<Local<M>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                s.spawn(move || {
                    let mut l = Local::new(SmallRng::seed_from_u64(
                        seed ^ (k as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    ));
                    while Instant::now() < deadline && !store.root().solved() {
                        if !store.iterate::<true>(machine, pol, Some(deadline), &mut l) {
                            break;
                        }
                    }
                    l
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    for l in found {
        tree.local.merge(l);
    }
}

fn run_until<M: StateMachine>(t: &mut Tree<M>, machine: &M, pol: &Policies<M>, deadline: Instant) {
    if t.root().solved() {
        return;
    }
    while Instant::now() < deadline {
        if !t.iterate(machine, pol, Some(deadline)) {
            break;
        }
    }
}

/// Frees `garbage` on a thread of its own: the subtrees a move cuts off (and
/// the tables a player forgets) hold hundreds of thousands of entries, each with
/// allocations of its own, and freeing them on the searching thread would take
/// a share of the clock.
pub(crate) fn drop_elsewhere<T: Send + 'static>(garbage: T) {
    if std::thread::Builder::new()
        .name("uct-free".into())
        .spawn(move || drop(garbage))
        .is_err()
    {
        // No thread to be had: the memory is freed here.
    }
}

#[cfg(test)]
mod tests;
