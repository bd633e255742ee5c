//! The minimax family, for games whose tree it can take: depth-first search
//! with iterative deepening, a transposition table, and the previous
//! iteration's best move tried first.
//!
//! - **Paranoid alpha-beta** ([`Kind::Paranoid`]): one role (`me`) maximises
//!   its goal, every other role together minimises it. With two players of a
//!   zero-sum game this is alpha-beta; with more it is the paranoid
//!   assumption; at a simultaneous-move node we choose first and the others
//!   answer knowing our move (the safe reading).
//! - **max^n** ([`Kind::MaxN`]): every role maximises its own goal. At a
//!   simultaneous-move node the roles choose in role order, each knowing the
//!   earlier roles' choices. No pruning (max^n's shallow pruning needs a
//!   bound on the goals' sum that GDL does not give).
//!
//! Values are goals 0..100, and alpha-beta's window is (0, 100): a move
//! that reaches 100 for us (0 for a reply against us) ends the search of its
//! node, since no goal is higher (lower). A leaf at the depth limit is scored by the goal
//! the game gives there (many games define one in every state), 50 when it
//! gives none. A search whose every leaf was terminal is *complete*: its value
//! is the game's, proven.

use std::sync::Arc;
use std::time::Instant;

use hashbrown::HashMap;

use crate::reasoner::{RoleIdx, StateMachine};

/// Which member of the family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Paranoid,
    MaxN,
}

/// What an alpha-beta value says about the true one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    Exact,
    /// The value is at least this.
    Lower,
    /// The value is at most this.
    Upper,
}

#[derive(Clone, Debug)]
struct Entry {
    /// Depth searched below the state; `u32::MAX` when complete.
    depth: u32,
    /// Paranoid: `values[0]` is `me`'s; max^n: one value per role.
    values: Vec<f64>,
    bound: Bound,
    /// Index of the best move of the choosing role, for move ordering.
    best: u32,
}

/// The result of one iteration (or the last finished one).
#[derive(Clone, Debug)]
pub struct Answer<Mv> {
    /// The best move of `me` (`None` at a terminal root or without a choice).
    pub best: Option<Mv>,
    /// The value for `me`, 0..100.
    pub value: f64,
    /// The depth of the finished iteration.
    pub depth: u32,
    /// Every leaf was terminal: `value` is proven.
    pub complete: bool,
}

/// A minimax searcher for one role, its table kept across moves.
pub struct Minimax<M: StateMachine> {
    machine: Arc<M>,
    me: RoleIdx,
    kind: Kind,
    tt: HashMap<M::State, Entry>,
    /// Most table entries kept; the table is cleared when it is full.
    pub max_entries: usize,
    /// Nodes visited since the searcher was made.
    pub nodes: u64,
    deadline: Option<Instant>,
    node_limit: Option<u64>,
    out_of_time: bool,
    /// Nodes between two looks at the clock, and when it was last looked
    /// at ([`Minimax::tick`]).
    stride: u64,
    next_look: u64,
    looked: Option<Instant>,
    /// Scores a leaf at the depth limit for a role (0..100) in place of the
    /// goal there (a learned value).
    leaf: Option<Leaf<M>>,
}

/// A leaf evaluation: the state and the role, a value 0..100.
pub type Leaf<M> = Arc<dyn Fn(&M, &<M as StateMachine>::State, RoleIdx) -> f64 + Send + Sync>;

/// Max depth of iterative deepening (a game tree deeper than this is never
/// complete; the goals and clocks of real games end far sooner).
const MAX_DEPTH: u32 = 400;

impl<M: StateMachine> Minimax<M> {
    pub fn new(machine: Arc<M>, me: RoleIdx, kind: Kind) -> Self {
        Minimax {
            machine,
            me,
            kind,
            tt: HashMap::new(),
            max_entries: 2_000_000,
            nodes: 0,
            deadline: None,
            node_limit: None,
            out_of_time: false,
            stride: 1,
            next_look: 0,
            looked: None,
            leaf: None,
        }
    }

    /// Scores leaves at the depth limit with `leaf` instead of the goal.
    pub fn with_leaf(mut self, leaf: Leaf<M>) -> Self {
        self.leaf = Some(leaf);
        self
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Iterative deepening from `state` until the search is complete,
    /// `deadline`, or `node_limit` more nodes (whichever comes first): the
    /// last finished iteration's answer (`None` when not even depth 1
    /// finished).
    pub fn search(
        &mut self,
        state: &M::State,
        deadline: Option<Instant>,
        node_limit: Option<u64>,
    ) -> Option<Answer<M::Move>> {
        self.arm(deadline, node_limit);
        let mut last = None;
        for depth in 1..=MAX_DEPTH {
            let Some(a) = self.search_depth(state, depth) else {
                break;
            };
            let complete = a.complete;
            last = Some(a);
            if complete {
                break;
            }
        }
        last
    }

    /// One search to the end of the game, no depth limit: where the tree is
    /// small (tic-tac-toe, nim) the table makes it a solve, every entry
    /// complete, faster than deepening iteration by iteration. `None` when
    /// `deadline` or `node_limit` more nodes came first; the complete
    /// entries found stay in the table for later searches.
    pub fn solve(
        &mut self,
        state: &M::State,
        deadline: Option<Instant>,
        node_limit: Option<u64>,
    ) -> Option<Answer<M::Move>> {
        self.arm(deadline, node_limit);
        self.search_depth(state, MAX_DEPTH)
    }

    /// Sets the limits of the next search: `deadline`, and `node_limit`
    /// nodes from now.
    fn arm(&mut self, deadline: Option<Instant>, node_limit: Option<u64>) {
        self.deadline = deadline;
        self.node_limit = node_limit.map(|n| self.nodes.saturating_add(n));
        self.out_of_time = false;
        self.stride = 1;
        self.next_look = self.nodes;
        self.looked = None;
    }

    /// One iteration to `depth`; `None` when stopped by time or nodes.
    pub fn search_depth(&mut self, state: &M::State, depth: u32) -> Option<Answer<M::Move>> {
        if self.tt.len() > self.max_entries {
            self.tt.clear();
        }
        let (values, complete) = match self.kind {
            Kind::Paranoid => {
                let (v, c) = self.alphabeta(state, depth, 0.0, 100.0)?;
                (vec![v], c)
            }
            Kind::MaxN => self.maxn(state, depth)?,
        };
        let value = match self.kind {
            Kind::Paranoid => values[0],
            Kind::MaxN => values[self.me],
        };
        let best = self.best_move(state);
        Some(Answer {
            best,
            value,
            depth,
            complete,
        })
    }

    /// `me`'s best move at `state` as the table has it.
    fn best_move(&self, state: &M::State) -> Option<M::Move> {
        let m = &*self.machine;
        if m.is_terminal(state) {
            return None;
        }
        let legal = m.legal(state, self.me);
        let e = self.tt.get(state)?;
        let i = match self.kind {
            Kind::Paranoid => e.best as usize,
            // max^n stores the joint choice's index over the roles' lists.
            Kind::MaxN => self.joint_index(state, e.best as usize)[self.me],
        };
        legal.get(i).cloned()
    }

    /// The per-role move indices of joint index `k` (mixed radix over the
    /// roles' legal lists, role 0 most significant).
    fn joint_index(&self, state: &M::State, mut k: usize) -> Vec<usize> {
        let m = &*self.machine;
        let sizes: Vec<usize> = (0..m.num_roles())
            .map(|r| m.legal(state, r).len().max(1))
            .collect();
        let mut idx = vec![0; sizes.len()];
        for r in (0..sizes.len()).rev() {
            idx[r] = k % sizes[r];
            k /= sizes[r];
        }
        idx
    }

    /// Counts a node; false once the node limit or the deadline has passed.
    /// The clock is read every `stride` nodes, the stride adapting so that
    /// looks come about every millisecond: on a fast engine every 256
    /// nodes at most, on a slow one (a prover at tens of states a second)
    /// every node, so a deadline is never overrun by more than a node.
    fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.out_of_time {
            return false;
        }
        if self.node_limit.is_some_and(|n| self.nodes > n) {
            self.out_of_time = true;
            return false;
        }
        let Some(deadline) = self.deadline else {
            return true;
        };
        if self.nodes < self.next_look {
            return true;
        }
        let now = Instant::now();
        if let Some(before) = self.looked {
            let gap = now.duration_since(before);
            if gap > std::time::Duration::from_millis(2) {
                self.stride = (self.stride / 2).max(1);
            } else if gap < std::time::Duration::from_micros(500) {
                self.stride = (self.stride * 2).min(256);
            }
        }
        self.looked = Some(now);
        self.next_look = self.nodes + self.stride;
        if now >= deadline {
            self.out_of_time = true;
            return false;
        }
        true
    }

    /// The value of a leaf at the depth limit for role `r`.
    fn heuristic(&self, state: &M::State, r: RoleIdx) -> f64 {
        match &self.leaf {
            Some(f) => f(&self.machine, state, r),
            None => self.machine.goal(state, r).map_or(50.0, f64::from),
        }
    }

    fn goal(&self, state: &M::State, r: RoleIdx) -> f64 {
        self.machine.goal(state, r).map_or(0.0, f64::from)
    }

    /// Paranoid alpha-beta: `me`'s value within `(alpha, beta)` (a bound
    /// outside it) and whether it is complete.
    fn alphabeta(
        &mut self,
        state: &M::State,
        depth: u32,
        alpha: f64,
        beta: f64,
    ) -> Option<(f64, bool)> {
        if !self.tick() {
            return None;
        }
        let machine = Arc::clone(&self.machine);
        let m = &*machine;
        if m.is_terminal(state) {
            return Some((self.goal(state, self.me), true));
        }
        let (first, mut alpha, beta) = match self.probe(state, depth, alpha, beta) {
            Probe::Known(v, complete) => return Some((v, complete)),
            Probe::Search { first, alpha, beta } => (first, alpha, beta),
        };
        if depth == 0 {
            return Some((self.heuristic(state, self.me), false));
        }
        let Some(legal) = all_legal(m, state) else {
            // A role without a move: the game cannot go on; score it as it
            // stands.
            return Some((self.goal(state, self.me), true));
        };
        let ours = legal[self.me].len();
        let others: usize = (0..legal.len())
            .filter(|&r| r != self.me)
            .map(|r| legal[r].len())
            .product();
        let alpha0 = alpha;
        let mut best = f64::NEG_INFINITY;
        let mut best_i = 0;
        let mut complete = true;
        let mut joint: Vec<M::Move> = Vec::with_capacity(legal.len());
        for a in move_order(first, ours) {
            // The others' reply that is worst for us.
            let mut v = f64::INFINITY;
            for b in 0..others {
                self.reply_joint(&legal, a, b, &mut joint);
                let next = m.next_state(state, &joint);
                let (x, c) = self.alphabeta(&next, depth - 1, alpha, v.min(beta))?;
                complete &= c;
                v = v.min(x);
                if v <= alpha {
                    break;
                }
            }
            if v > best {
                best = v;
                best_i = a;
            }
            alpha = alpha.max(v);
            if alpha >= beta {
                break;
            }
        }
        self.tt.insert(
            state.clone(),
            Entry {
                depth: if complete { u32::MAX } else { depth },
                values: vec![best],
                bound: Bound::of(best, alpha0, beta),
                best: best_i as u32,
            },
        );
        Some((best, complete))
    }

    /// What the table knows of `state` for an alpha-beta search `depth`
    /// deep in `(alpha, beta)`: its value, or the window narrowed by its
    /// bound and the move to try first.
    #[inline]
    fn probe(&self, state: &M::State, depth: u32, mut alpha: f64, mut beta: f64) -> Probe {
        let mut first = 0usize;
        if let Some(e) = self.tt.get(state) {
            first = e.best as usize;
            if e.depth >= depth {
                let v = e.values[0];
                let complete = e.depth == u32::MAX;
                match e.bound {
                    Bound::Exact => return Probe::Known(v, complete),
                    Bound::Lower if v >= beta => return Probe::Known(v, complete),
                    Bound::Upper if v <= alpha => return Probe::Known(v, complete),
                    Bound::Lower => alpha = alpha.max(v),
                    Bound::Upper => beta = beta.min(v),
                }
            }
        }
        Probe::Search { first, alpha, beta }
    }

    /// Into `joint`: our move `a` and the others' reply `b` (mixed radix
    /// over their legal lists, the first other role least significant).
    #[inline]
    fn reply_joint(&self, legal: &[Vec<M::Move>], a: usize, b: usize, joint: &mut Vec<M::Move>) {
        joint.clear();
        let mut rest = b;
        for (r, l) in legal.iter().enumerate() {
            if r == self.me {
                joint.push(l[a].clone());
            } else {
                joint.push(l[rest % l.len()].clone());
                rest /= l.len();
            }
        }
    }

    /// max^n: every role's value, and whether it is complete.
    fn maxn(&mut self, state: &M::State, depth: u32) -> Option<(Vec<f64>, bool)> {
        if !self.tick() {
            return None;
        }
        let machine = Arc::clone(&self.machine);
        let m = &*machine;
        let roles = m.num_roles();
        if m.is_terminal(state) {
            return Some(((0..roles).map(|r| self.goal(state, r)).collect(), true));
        }
        if let Some(e) = self.tt.get(state) {
            if e.depth >= depth {
                return Some((e.values.clone(), e.depth == u32::MAX));
            }
        }
        if depth == 0 {
            return Some((
                (0..roles).map(|r| self.heuristic(state, r)).collect(),
                false,
            ));
        }
        let Some(legal) = all_legal(m, state) else {
            return Some(((0..roles).map(|r| self.goal(state, r)).collect(), true));
        };
        // Every joint move's values, then the roles choose in order.
        let total: usize = legal.iter().map(Vec::len).product();
        let mut values: Vec<Vec<f64>> = Vec::with_capacity(total);
        let mut complete = true;
        for k in 0..total {
            let mut rest = k;
            let mut joint = vec![legal[0][0].clone(); roles];
            for r in (0..roles).rev() {
                let n = legal[r].len();
                joint[r] = legal[r][rest % n].clone();
                rest /= n;
            }
            let next = m.next_state(state, &joint);
            let (v, c) = self.maxn(&next, depth - 1)?;
            complete &= c;
            values.push(v);
        }
        let sizes: Vec<usize> = legal.iter().map(Vec::len).collect();
        let k = choose_in_order(&values, &sizes, 0, 0);
        let v = values[k].clone();
        self.tt.insert(
            state.clone(),
            Entry {
                depth: if complete { u32::MAX } else { depth },
                values: v.clone(),
                bound: Bound::Exact,
                best: k as u32,
            },
        );
        Some((v, complete))
    }
}

/// What the table says of a state before alpha-beta searches it.
enum Probe {
    /// Its value (and whether it is complete): no search needed.
    Known(f64, bool),
    /// The window to search it in, and the move to try first.
    Search { first: usize, alpha: f64, beta: f64 },
}

impl Bound {
    /// What `best`, found searching in `(alpha, beta)`, says of the value.
    fn of(best: f64, alpha: f64, beta: f64) -> Bound {
        if best <= alpha {
            Bound::Upper
        } else if best >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        }
    }
}

/// Every role's legal moves in `state`; `None` when a role has none.
#[inline]
fn all_legal<M: StateMachine>(m: &M, state: &M::State) -> Option<Vec<Vec<M::Move>>> {
    let roles = m.num_roles();
    let mut legal: Vec<Vec<M::Move>> = Vec::with_capacity(roles);
    for r in 0..roles {
        let l = m.legal(state, r);
        if l.is_empty() {
            return None;
        }
        legal.push(l);
    }
    Some(legal)
}

/// The order `ours` moves are tried in: `first` (the previous iteration's
/// best) first, then the others in order.
fn move_order(first: usize, ours: usize) -> impl Iterator<Item = usize> {
    let first = first.min(ours - 1);
    (0..ours).map(move |k| {
        if k == 0 {
            first
        } else if k <= first {
            k - 1
        } else {
            k
        }
    })
}

/// max^n's choice at a node: role `r` picks, knowing the choices that fixed
/// the joint-index prefix `prefix`, the move whose outcome (the later roles
/// choosing the same way) is best for it. Returns the joint index.
fn choose_in_order(values: &[Vec<f64>], sizes: &[usize], r: usize, prefix: usize) -> usize {
    if r == sizes.len() {
        return prefix;
    }
    let mut best = None;
    for i in 0..sizes[r] {
        let k = choose_in_order(values, sizes, r + 1, prefix * sizes[r] + i);
        if best.is_none_or(|(_, b): (usize, f64)| values[k][r] > b) {
            best = Some((k, values[k][r]));
        }
    }
    best.map_or(prefix, |(k, _)| k)
}
