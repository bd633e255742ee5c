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
//! - Threads: root parallel. Each thread searches its own tree of the same root
//!   with its own random stream; the root statistics are summed when a move is
//!   chosen. No locks in the hot loop; see README for why this over tree parallel.
//! - Seams: [`policy::TreePolicy`], [`policy::PlayoutPolicy`], [`policy::Evaluator`].

pub mod policy;
mod tree;

use std::sync::Arc;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde::Serialize;

use crate::reasoner::{RoleIdx, StateMachine};
use policy::{Evaluator, GoalEvaluator, MoveStats, PlayoutPolicy, RandomPlayout, TreePolicy, Ucb1};
use tree::{Node, Policies, Tree};

/// Settings of a search.
#[derive(Clone, Debug)]
pub struct SearchConfig {
    /// UCB1's exploration constant, on values scaled to 0..1.
    pub exploration: f64,
    /// Threads (root-parallel trees) used by [`Mcts::search_until`].
    pub threads: usize,
    /// Most nodes kept, over all trees.
    pub node_limit: usize,
    pub seed: u64,
    /// A playout is cut off after this many joint moves and scored by the evaluator.
    pub max_playout_steps: usize,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            exploration: 0.7,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            node_limit: 2_000_000,
            seed: 1,
            max_playout_steps: 500,
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
    last_iterations: u64,
    last_seconds: f64,
}

impl<M: StateMachine + 'static> Mcts<M> {
    pub fn new(machine: Arc<M>, state: M::State, cfg: SearchConfig) -> Self {
        let evaluator: Arc<dyn Evaluator<M>> = Arc::new(GoalEvaluator);
        let root = Node::new(&*machine, state, &*evaluator);
        let tree = Tree::new(
            root,
            SmallRng::seed_from_u64(cfg.seed),
            cfg.node_limit / cfg.threads.max(1),
        );
        Mcts {
            tree_policy: Arc::new(Ucb1 {
                exploration: cfg.exploration,
            }),
            playout_policy: Arc::new(RandomPlayout),
            evaluator,
            machine,
            cfg,
            trees: vec![tree],
            last_iterations: 0,
            last_seconds: 0.0,
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
        self
    }

    /// Replaces the evaluation of playout ends (the game's goals by default).
    pub fn with_evaluator(mut self, e: Arc<dyn Evaluator<M>>) -> Self {
        self.evaluator = e;
        self
    }

    pub fn machine(&self) -> &Arc<M> {
        &self.machine
    }

    pub fn config(&self) -> &SearchConfig {
        &self.cfg
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
        while self.trees.len() < threads {
            let root = Node::new(&*self.machine, self.state().clone(), &*self.evaluator);
            let seed = self
                .cfg
                .seed
                .wrapping_add(0x9E37_79B9_7F4A_7C15u64.wrapping_mul(self.trees.len() as u64));
            let mut t = Tree::new(
                root,
                SmallRng::seed_from_u64(seed),
                self.cfg.node_limit / threads,
            );
            t.best_line = self.trees[0].best_line.clone();
            self.trees.push(t);
        }
        let machine = &*self.machine;
        let pol = Policies {
            tree: &*self.tree_policy,
            playout: &*self.playout_policy,
            eval: &*self.evaluator,
            max_playout_steps: self.cfg.max_playout_steps,
        };
        if threads == 1 {
            run_until(&mut self.trees[0], machine, &pol, deadline);
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
            max_playout_steps: self.cfg.max_playout_steps,
        };
        for _ in 0..n {
            self.trees[0].iterate(&*self.machine, &pol, None);
        }
        self.last_iterations = n;
        self.last_seconds = started.elapsed().as_secs_f64();
    }

    fn total_iterations(&self) -> u64 {
        self.trees.iter().map(|t| t.iterations).sum()
    }

    /// Per move of `role` at the root: visits and summed value over all trees.
    pub fn root_stats(&self, role: RoleIdx) -> Vec<(M::Move, MoveStats)> {
        let root = self.trees[0].root();
        let Some(moves) = root.moves.get(role) else {
            return Vec::new();
        };
        let mut out: Vec<(M::Move, MoveStats)> = moves
            .iter()
            .cloned()
            .zip(root.stats[role].iter().copied())
            .collect();
        for t in &self.trees[1..] {
            let r = t.root();
            let Some(tm) = r.moves.get(role) else {
                continue;
            };
            for (i, m) in tm.iter().enumerate() {
                // The same state gives the same legal list; look up by value anyway.
                let j = if out.get(i).is_some_and(|(x, _)| x == m) {
                    Some(i)
                } else {
                    out.iter().position(|(x, _)| x == m)
                };
                if let Some(j) = j {
                    out[j].1.visits += r.stats[role][i].visits;
                    out[j].1.sum += r.stats[role][i].sum;
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
        if let Some(m) = self.winning_move(role) {
            return Some(m);
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

    /// [`Mcts::try_best_move`] for a root where `role` has a move.
    ///
    /// # Panics
    /// When the root is terminal or `role` has no legal move there.
    pub fn best_move(&self, role: RoleIdx) -> M::Move {
        self.try_best_move(role)
            .expect("best_move asked in a terminal state or for a role without legal moves")
    }

    /// A move of `role` after which the game is over with goal 100 for `role`,
    /// whatever the other roles play (checked when they have at most 256 joint
    /// replies together).
    fn winning_move(&self, role: RoleIdx) -> Option<M::Move> {
        let root = self.trees[0].root();
        let m = &*self.machine;
        let others: usize = root
            .moves
            .iter()
            .enumerate()
            .filter(|(r, _)| *r != role)
            .map(|(_, l)| l.len())
            .try_fold(1usize, |a, n| a.checked_mul(n))?;
        if others > 256 {
            return None;
        }
        let roles = root.moves.len();
        'moves: for mv in &root.moves[role] {
            for k in 0..others {
                let mut rest = k;
                let joint: Vec<M::Move> = (0..roles)
                    .map(|r| {
                        if r == role {
                            mv.clone()
                        } else {
                            let l = &root.moves[r];
                            let i = rest % l.len();
                            rest /= l.len();
                            l[i].clone()
                        }
                    })
                    .collect();
                let next = m.next_state(&root.state, &joint);
                if !(m.is_terminal(&next) && m.goal(&next, role) == Some(100)) {
                    continue 'moves;
                }
            }
            return Some(mv.clone());
        }
        None
    }

    /// Follows the joint move played: the root moves to its child, the subtree
    /// below it is kept.
    pub fn advance(&mut self, joint: &[M::Move]) {
        let machine = &*self.machine;
        for t in &mut self.trees {
            t.advance(machine, joint, &*self.evaluator);
        }
    }

    pub fn stats(&self) -> SearchStats {
        SearchStats {
            iterations: self.total_iterations(),
            playouts: self.trees.iter().map(|t| t.playouts).sum(),
            nodes: self.trees.iter().map(|t| t.nodes.len()).sum(),
            max_depth: self.trees.iter().map(|t| t.max_depth).max().unwrap_or(0),
            root_visits: self.trees.iter().map(|t| t.root().visits).sum(),
            trees: self.trees.len(),
            last_iterations: self.last_iterations,
            last_seconds: self.last_seconds,
        }
    }

    /// One-player games: the best complete line from the root seen so far (joint
    /// moves) and the goal it reaches.
    pub fn best_line(&self) -> Option<(Vec<Vec<M::Move>>, u8)> {
        self.trees
            .iter()
            .filter_map(|t| t.best_line.as_ref())
            .max_by_key(|(_, g)| *g)
            .cloned()
    }
}

fn run_until<M: StateMachine>(t: &mut Tree<M>, machine: &M, pol: &Policies<M>, deadline: Instant) {
    if t.root().solved {
        return;
    }
    while Instant::now() < deadline {
        if !t.iterate(machine, pol, Some(deadline)) {
            break;
        }
    }
}
