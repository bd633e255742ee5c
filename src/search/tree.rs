//! One search tree: a store of nodes, each a state with per-role, per-move
//! statistics (decoupled UCT), children keyed by the joint move. A tree is
//! searched by one thread (root parallel: [`super::Mcts`] runs one per thread)
//! or by several at once (tree parallel).
//!
//! The statistics are atomics and the store never moves a node, so threads
//! sharing a tree need no lock on it: visits are counted with one atomic add,
//! value sums with a compare-and-swap, a child is published with one
//! compare-and-swap on its parent's slot (or a lock on the parent's map when the
//! joint moves are too many for slots). A tree searched by one thread takes the
//! same paths with plain loads and stores (`SHARED = false`), which compile to
//! what non-atomic fields would: the single-threaded search pays nothing for
//! the sharing.
//!
//! With transpositions merged ([`Enhancements::transpositions`]) the store is
//! a graph: a table maps each state to its node, and an edge whose state is
//! already there is linked to that node, so lines that meet share their
//! statistics below the meeting point. The statistics a selection reads stay
//! on the edges (each parent's per-move counts; UCT1 in Childs, Brodeur and
//! Kocsis 2008). A GDL state is the whole game state (goal and terminal read
//! it alone), so merging never mixes positions of different values.
//!
//! Invariants: the root is node 0; a node's own invariants are in
//! [`super::node`]; with a table, every node's state maps to some node of
//! that state; a descent never passes a node twice (a cycle ends it there).

use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use hashbrown::{HashMap, HashSet};
use rand::rngs::SmallRng;

use super::append::AppendOnly;
use super::descent::Descent;
use super::drop_elsewhere;
use super::enhance::{self, Enhancements, MastTable};
use super::node::{add_u64, atomic_stats, AtomicStats, Node, NodeId};
use super::playouts::{PlayoutRun, Policies};
use super::policy::{Evaluator, MoveStats};
use crate::reasoner::StateMachine;

/// What one searching thread keeps to itself: its random numbers, its counts,
/// its scratch, and what it found (the best one-player line, MAST's table).
/// Threads sharing a tree each have one; the counts are added up when they join.
pub(crate) struct Local<M: StateMachine> {
    pub rng: SmallRng,
    /// One-player games: the best complete line from the root seen so far, and its goal.
    pub best_line: Option<(Vec<Vec<M::Move>>, u8)>,
    pub iterations: u64,
    pub playouts: u64,
    pub max_depth: usize,
    /// MAST's statistics, kept across moves (a tree searched by one thread).
    pub mast: MastTable<M>,
    // Scratch for playouts, kept to avoid allocating per iteration.
    buf: Vec<M::Move>,
    goals: Vec<Option<u8>>,
    /// RAVE's scratch: per role, the moves played at or below a node.
    seen: Vec<HashSet<M::Move>>,
    /// One role's statistics (and AMAF statistics) as read for the tree policy.
    snap: Vec<MoveStats>,
    snap_amaf: Vec<MoveStats>,
    widen: enhance::WidenScratch,
}

impl<M: StateMachine> Local<M> {
    pub fn new(rng: SmallRng) -> Self {
        Local {
            rng,
            best_line: None,
            iterations: 0,
            playouts: 0,
            max_depth: 0,
            mast: MastTable::default(),
            buf: Vec::new(),
            goals: Vec::new(),
            seen: Vec::new(),
            snap: Vec::new(),
            snap_amaf: Vec::new(),
            widen: enhance::WidenScratch::default(),
        }
    }

    /// Adds what another thread's search of the same tree counted and found.
    pub fn merge(&mut self, other: Local<M>) {
        self.iterations += other.iterations;
        self.playouts += other.playouts;
        self.max_depth = self.max_depth.max(other.max_depth);
        if let Some((line, goal)) = other.best_line {
            if self.best_line.as_ref().is_none_or(|(_, g)| goal > *g) {
                self.best_line = Some((line, goal));
            }
        }
    }
}

/// The nodes of a tree, searched through `&self` by one thread or several.
/// Every search method takes `SHARED`: true when other threads may be
/// searching the same store at the same time, false when the caller has it to
/// itself (it holds the [`Tree`] mutably), where updates need no atomic
/// read-modify-write.
pub(crate) struct Store<M: StateMachine> {
    nodes: AppendOnly<Node<M>>,
    /// Transpositions merged: each state's node (`None`: a tree).
    table: Option<Mutex<HashMap<M::State, NodeId>>>,
}

pub(crate) struct Tree<M: StateMachine> {
    pub store: Store<M>,
    pub local: Local<M>,
}

/// What selection found: a descent that needs no expansion (it ended in a
/// solved node), or an edge to expand.
pub(crate) enum Selected<M: StateMachine> {
    Done(Descent<M>),
    Expand(Expansion<M>),
}

/// An edge to expand: the parent's state and the joint move, and whether the
/// tree may grow (else the playout starts from the next state, no node kept).
pub(crate) struct Expansion<M: StateMachine> {
    d: Descent<M>,
    parent: NodeId,
    key: u64,
    state: M::State,
    joint: Vec<M::Move>,
    grow: bool,
}

impl<M: StateMachine> Expansion<M> {
    /// The expansion's step: the state the joint move leads to.
    pub fn step(&self, machine: &M) -> M::State {
        machine.next_state(&self.state, &self.joint)
    }

    /// The new node for state `next` when the tree may grow (its legal
    /// moves, terminal values), else the state the playout starts from: the
    /// work that needs no tree.
    pub fn expand(
        &self,
        machine: &M,
        pol: &Policies<M>,
        next: M::State,
    ) -> (Option<Node<M>>, Option<M::State>) {
        if self.grow {
            let mut node = Node::new(machine, next, pol.eval);
            if pol.enh.wins {
                node = node.solved_by_sure_win(machine, pol.eval);
            }
            let node = match pol.minimax {
                Some((h, _)) => node.with_minimax(machine, h),
                None => node,
            };
            (Some(node), None)
        } else {
            (None, Some(next))
        }
    }
}

impl<M: StateMachine> Store<M> {
    #[inline]
    pub fn node(&self, id: NodeId) -> &Node<M> {
        self.nodes.get(id)
    }

    pub fn root(&self) -> &Node<M> {
        self.node(0)
    }

    /// One iteration: select down the tree, expand one node, play out, back up.
    /// Returns false when the deadline cut the iteration short (nothing
    /// recorded): it is checked before the expansion's step and before every
    /// step of the playout, so an iteration ends at most one step late.
    /// MAST's playouts use `l`'s table, in a tree searched by one thread only.
    pub fn iterate<const SHARED: bool>(
        &self,
        machine: &M,
        pol: &Policies<M>,
        deadline: Option<Instant>,
        l: &mut Local<M>,
    ) -> bool {
        let mut d = match self.select::<SHARED>(machine, pol, deadline, l) {
            None => return false,
            Some(Selected::Done(d)) => d,
            Some(Selected::Expand(e)) => {
                let next = e.step(machine);
                match self.transposition(&e, &next) {
                    Some(id) => self.link(machine, e, id),
                    None => {
                        let (child, next) = e.expand(machine, pol, next);
                        self.attach(machine, e, child, next)
                    }
                }
            }
        };
        if let Some(from) = d.from.take() {
            let mut run = PlayoutRun {
                rng: &mut l.rng,
                deadline,
                buf: &mut l.buf,
                goals: &mut l.goals,
                mast: (!SHARED && pol.enh.mast.is_some()).then_some(&l.mast),
            };
            if !pol.play_out(machine, from, &mut d, &mut run) {
                self.undo::<SHARED>(&d);
                return false;
            }
        }
        self.backup::<SHARED>(d, &pol.enh, l);
        true
    }

    /// Selection: walks down by the tree policy to a solved node or to an edge
    /// with no child yet, counting the visit on every edge at once (with several
    /// threads on one tree this is the virtual loss: an edge being played out
    /// looks worse until its value comes back). The expansion's step
    /// ([`Expansion::expand`]) needs no tree and [`Store::attach`] adds its
    /// node. `None`, with the visits taken back, when `deadline` has passed
    /// before the expansion's step (one step of a slow engine may take
    /// milliseconds).
    pub fn select<const SHARED: bool>(
        &self,
        machine: &M,
        pol: &Policies<M>,
        deadline: Option<Instant>,
        l: &mut Local<M>,
    ) -> Option<Selected<M>> {
        let roles = machine.num_roles();
        let mut d = Descent::new(roles == 1);
        let mut node: NodeId = 0;
        loop {
            let n = self.node(node);
            let before = add_u64::<SHARED>(n.visits_counter(), 1);
            if let Some(v) = n.values.get() {
                d.values.clone_from(v);
                d.terminal = machine.is_terminal(&n.state);
                return Some(Selected::Done(d));
            }
            let start = d.moves.len();
            for r in 0..roles {
                let i = self.visit_move::<SHARED>(n, r, before, pol, l);
                d.moves.push(i);
            }
            d.path.push((node, start));
            let idx = &d.moves[start..];
            if roles == 1 {
                d.line.push(vec![n.moves[0][idx[0]].clone()]);
            }
            let key = if n.keyable { n.key(idx) } else { 0 };
            if let Some(c) = n.children.get(key) {
                if self.table.is_some() && d.path.iter().any(|&(id, _)| id == c) {
                    // A cycle through merged states: the descent ends here
                    // and plays out from the repeated state.
                    return Some(Selected::Done(self.enter(machine, d, c)));
                }
                node = c;
                continue;
            }
            if deadline.is_some_and(|t| Instant::now() >= t) {
                self.undo::<SHARED>(&d);
                return None;
            }
            return Some(Selected::Expand(self.expansion(d, node, key)));
        }
    }

    /// Role `r`'s move at node `n` (visited `before` times until now) by the
    /// tree policy, RAVE's or widening's when enabled, with the visit
    /// counted on its edge: an index into the role's moves.
    #[inline]
    fn visit_move<const SHARED: bool>(
        &self,
        n: &Node<M>,
        r: usize,
        before: u64,
        pol: &Policies<M>,
        l: &mut Local<M>,
    ) -> usize {
        l.snap.clear();
        let stats = n.role_stats(r);
        l.snap.extend(stats.iter().map(AtomicStats::get));
        if let Some((_, alpha)) = pol.minimax {
            // Every selection rule (UCB, RAVE's, widening's) reads the
            // blended means.
            self.blend_minimax(n, r, alpha, &mut l.snap);
        }
        let i = match pol.enh.rave {
            Some(k) if n.moves[r].len() > 1 => {
                l.snap_amaf.clear();
                if let Some(a) = n.amaf.get() {
                    l.snap_amaf.extend(a[r].iter().map(AtomicStats::get));
                }
                enhance::select_rave(
                    &l.snap,
                    &l.snap_amaf,
                    before,
                    k,
                    pol.exploration,
                    pol.enh.widening,
                    &mut l.rng,
                )
            }
            // Widening without RAVE ranks by MAST's history, which
            // only a tree searched by one thread keeps.
            _ if pol.enh.widening && pol.enh.mast.is_some() && !SHARED => {
                let (mast, moves) = (&l.mast, &n.moves[r]);
                enhance::select_widened(
                    &l.snap,
                    |i| {
                        let h = mast.get(r, &moves[i]);
                        if h.visits > 0 {
                            h.mean()
                        } else {
                            0.5
                        }
                    },
                    before,
                    pol.tree,
                    &mut l.rng,
                    &mut l.widen,
                )
            }
            _ => pol.tree.select(&l.snap, before, &mut l.rng),
        };
        stats[i].add_visit::<SHARED>();
        i
    }

    /// Implicit minimax backups (Lanctot, Winands, Pepels and Sturtevant
    /// 2014): at a turn of role `r`, each tried move's mean becomes
    /// `(1 - alpha) * mean + alpha * v`, `v` the minimax value for `r` of
    /// the heuristic below that move's child, so that a capture seen deep
    /// down weighs at once, while the playouts' mean corrects what the
    /// heuristic misses.
    fn blend_minimax(&self, n: &Node<M>, r: usize, alpha: f64, snap: &mut [MoveStats]) {
        if n.mover() != Some(r) || !n.keyable || snap.len() < 2 {
            return;
        }
        // At a turn every other role has one move: the key is the index.
        for (i, st) in snap.iter_mut().enumerate() {
            if st.visits == 0 {
                continue;
            }
            let child = n.child(i as u64).map(|c| self.node(c));
            if let Some(v) = child.and_then(|c| c.minimax_value(r)) {
                st.sum = st.visits as f64 * ((1.0 - alpha) * st.mean() + alpha * v);
            }
        }
    }

    /// Implicit minimax's backup at node `id`: the values of the mover's
    /// best expanded child (none expanded: the node's own heuristic value
    /// stays). Simultaneous-move nodes keep theirs.
    fn back_minimax(&self, id: NodeId) {
        let n = self.node(id);
        if n.minimax.is_empty() || n.solved() {
            return;
        }
        let Some(r) = n.mover() else {
            return;
        };
        let mut best: Option<(f64, NodeId)> = None;
        n.children.for_each(|_, c| {
            if let Some(v) = self.node(c).minimax_value(r) {
                if best.is_none_or(|(b, _)| v > b) {
                    best = Some((v, c));
                }
            }
        });
        if let Some((_, c)) = best {
            n.set_minimax(self.node(c));
        }
    }

    /// The expansion of the edge descent `d` ended on: from node `parent`
    /// (the last of its path) by the joint move of key `key`.
    fn expansion(&self, d: Descent<M>, parent: NodeId, key: u64) -> Expansion<M> {
        let n = self.node(parent);
        let &(_, start) = d.path.last().expect("a descent ends on an edge");
        let joint: Vec<M::Move> = n
            .moves
            .iter()
            .zip(&d.moves[start..])
            .map(|(l, &i)| l[i].clone())
            .collect();
        let grow = n.keyable && !self.nodes.is_full();
        Expansion {
            d,
            parent,
            key,
            state: n.state.clone(),
            joint,
            grow,
        }
    }

    /// Adds the child `child` (state `next`) an expansion computed, unless
    /// another thread added that child meanwhile (then its node is used), and
    /// says where the playout starts.
    pub fn attach(
        &self,
        machine: &M,
        e: Expansion<M>,
        child: Option<Node<M>>,
        next: Option<M::State>,
    ) -> Descent<M> {
        let mut d = e.d;
        let Some(child) = child else {
            d.from = next;
            return d;
        };
        let parent = self.node(e.parent);
        let id = match parent.children.get(e.key) {
            Some(id) => id,
            None => match self.nodes.push(child) {
                // A thread that lost the race leaves its copy unreachable; the
                // next re-rooting drops it.
                Ok(id) => match parent.children.insert(e.key, id) {
                    Ok(()) => {
                        d.grew = true;
                        if let Some(t) = &self.table {
                            let state = &self.node(id).state;
                            lock(t).entry(state.clone()).or_insert(id);
                        }
                        id
                    }
                    Err(won) => won,
                },
                Err(child) => {
                    d.from = Some(child.state);
                    return d;
                }
            },
        };
        self.enter(machine, d, id)
    }

    /// The node of `next` already in the store, when transpositions are
    /// merged and the expansion may link to it.
    fn transposition(&self, e: &Expansion<M>, next: &M::State) -> Option<NodeId> {
        let t = self.table.as_ref().filter(|_| e.grow)?;
        lock(t).get(next).copied()
    }

    /// Links the edge an expansion computed to node `id` of the same state
    /// (a transposition), unless another thread linked that edge meanwhile
    /// (then its child is used). The new edge gets a prior like a new node.
    fn link(&self, machine: &M, e: Expansion<M>, id: NodeId) -> Descent<M> {
        let mut d = e.d;
        let id = match self.node(e.parent).children.insert(e.key, id) {
            Ok(()) => {
                d.grew = true;
                id
            }
            Err(won) => won,
        };
        self.enter(machine, d, id)
    }

    /// Descent `d` ends on node `id`: its exact values when solved, else a
    /// playout from its state.
    fn enter(&self, machine: &M, mut d: Descent<M>, id: NodeId) -> Descent<M> {
        let c = self.node(id);
        if let Some(v) = c.values.get() {
            d.values.clone_from(v);
            d.terminal = machine.is_terminal(&c.state);
        } else {
            d.from = Some(c.state.clone());
        }
        d
    }

    /// Takes back the visits of a descent whose playout was abandoned.
    /// A node the descent expanded stays: its state is right either way.
    pub fn undo<const SHARED: bool>(&self, d: &Descent<M>) {
        for &(id, start) in &d.path {
            let n = self.node(id);
            add_u64::<SHARED>(n.visits_counter(), u64::MAX);
            for (r, &i) in d.moves[start..start + n.moves.len()].iter().enumerate() {
                n.role_stats(r)[i].remove_visit::<SHARED>();
            }
        }
    }

    /// Backs the values of a finished descent up its path (the visits were
    /// counted on the way down), then solves what can be solved and records a
    /// one-player line.
    pub fn backup<const SHARED: bool>(&self, d: Descent<M>, enh: &Enhancements, l: &mut Local<M>) {
        l.max_depth = l.max_depth.max(d.path.len());
        if d.played && enh.rave.is_some() {
            self.update_amaf::<SHARED>(&d, l);
        }
        if d.played && enh.mast.is_some() && !SHARED {
            self.update_mast(&d, l);
        }
        for &(id, start) in &d.path {
            let n = self.node(id);
            for (r, &i) in d.moves[start..start + n.moves.len()].iter().enumerate() {
                n.role_stats(r)[i].add_value::<SHARED>(d.values[r]);
            }
        }
        if let (Some(&(id, start)), false) = (d.path.last(), d.prior.is_empty()) {
            let n = self.node(id);
            let k = d.prior_visits;
            add_u64::<SHARED>(n.visits_counter(), k);
            for (r, &i) in d.moves[start..start + n.moves.len()].iter().enumerate() {
                n.role_stats(r)[i].add_visits::<SHARED>(k, k as f64 * d.prior[r]);
            }
        }
        let mut solving = true;
        for i in (0..d.path.len()).rev() {
            solving = solving && self.try_solve(d.path[i].0);
            if enh.minimax.is_some() {
                self.back_minimax(d.path[i].0);
            } else if !solving {
                break;
            }
        }
        if d.one_player && d.terminal {
            let goal = (d.values[0] * 100.0).round() as u8;
            if l.best_line.as_ref().is_none_or(|(_, g)| goal > *g) {
                l.best_line = Some((d.line, goal));
            }
        }
        if d.played {
            l.playouts += 1;
        }
        l.iterations += 1;
    }

    /// RAVE's backup: at each node of the path, every move a role played at
    /// or below it (in the tree or the playout) gets the iteration's value
    /// for that role in its AMAF statistics.
    fn update_amaf<const SHARED: bool>(&self, d: &Descent<M>, l: &mut Local<M>) {
        let roles = d.values.len();
        l.seen.resize_with(roles, HashSet::new);
        for s in &mut l.seen {
            s.clear();
        }
        for (k, m) in d.tail.iter().enumerate() {
            l.seen[k % roles].insert(m.clone());
        }
        for &(id, start) in d.path.iter().rev() {
            let n = self.node(id);
            for r in 0..roles {
                l.seen[r].insert(n.moves[r][d.moves[start + r]].clone());
            }
            let amaf = n.amaf.get_or_init(|| atomic_stats(&n.moves));
            for (r, (moves, amaf)) in n.moves.iter().zip(amaf).enumerate() {
                if moves.len() < 2 {
                    continue;
                }
                for (m, a) in moves.iter().zip(amaf.iter()) {
                    if l.seen[r].contains(m) {
                        a.add::<SHARED>(d.values[r]);
                    }
                }
            }
        }
    }

    /// MAST's backup: every move of the iteration, in the tree and the
    /// playout, counts the iteration's value for the role that played it,
    /// and the joint move that ended the game (when it ended) is marked.
    fn update_mast(&self, d: &Descent<M>, l: &mut Local<M>) {
        let roles = d.values.len();
        let joints = d.path.len() + d.tail.len() / roles;
        let last = if d.terminal {
            joints.checked_sub(1)
        } else {
            None
        };
        for (j, &(id, start)) in d.path.iter().enumerate() {
            let n = self.node(id);
            for r in 0..roles {
                let m = &n.moves[r][d.moves[start + r]];
                l.mast.add(r, m, d.values[r], last == Some(j));
            }
        }
        for (k, m) in d.tail.iter().enumerate() {
            let j = d.path.len() + k / roles;
            l.mast
                .add(k % roles, m, d.values[k % roles], last == Some(j));
        }
    }

    /// MCTS-Solver at turn nodes: a node where the mover has a child solved with
    /// the best value (1.0) for the mover, or whose children are all expanded and
    /// solved, is solved with the values of the mover's best child. The search
    /// then stops descending there and backs up exact values. Simultaneous-move
    /// nodes are never solved (their value is a matrix game's). Returns whether
    /// the node is solved.
    pub fn try_solve(&self, id: NodeId) -> bool {
        let n = self.node(id);
        if n.solved() {
            return true;
        }
        let Some(r) = n.mover().filter(|_| n.keyable) else {
            return false;
        };
        let mut expanded = 0;
        let mut all = true;
        let mut best: Option<&Vec<f64>> = None;
        n.children.for_each(|_, c| {
            expanded += 1;
            match self.node(c).values.get() {
                None => all = false,
                Some(v) => {
                    if best.is_none_or(|b| v[r] > b[r]) {
                        best = Some(v);
                    }
                }
            }
        });
        let all = all && expanded == n.moves[r].len();
        let values = match best {
            Some(b) if all || b[r] >= 1.0 => b.clone(),
            _ => return false,
        };
        // Another thread may have solved it meanwhile: its values stand (both
        // are exact).
        let _ = n.values.set(values);
        true
    }

    /// The move of `role` leading to the best solved child for `role`, when
    /// the root is `role`'s turn and solved (or has a child solved as a win).
    /// `None` where the proof tells the moves no apart (every move loses,
    /// or every move draws): any move keeps the proven value against a
    /// perfect opponent, and the move chosen by the search's statistics
    /// makes a fallible one work hardest for it (MCTS-Solver's rule,
    /// Winands, Björnsson and Saito 2008), where the first move listed
    /// would be a gift.
    pub fn solved_move(&self, role: usize) -> Option<usize> {
        let root = self.root();
        if root.mover() != Some(role) || root.terminal || !root.keyable {
            return None;
        }
        // At a turn node every other role has one move, so the key is the index.
        let mut best: Option<(usize, f64)> = None;
        let mut worst = f64::INFINITY;
        root.children.for_each(|k, c| {
            if let Some(v) = self.node(c).values.get() {
                worst = worst.min(v[role]);
                if best.is_none_or(|(_, b)| v[role] > b) {
                    best = Some((k as usize, v[role]));
                }
            }
        });
        best.filter(|&(_, v)| v >= 1.0 || (root.solved() && v > worst))
            .map(|(i, _)| i)
    }
}

/// The transposition table, even after a thread panicked holding it (the
/// map is valid between any two of its operations).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<M: StateMachine> Tree<M> {
    /// A tree of `root`, at most `node_limit` nodes; a graph merging
    /// transpositions where `transpositions` holds.
    pub fn new(root: Node<M>, rng: SmallRng, node_limit: usize, transpositions: bool) -> Self {
        let table = transpositions.then(|| Mutex::new(HashMap::new()));
        if let Some(t) = &table {
            lock(t).insert(root.state.clone(), 0);
        }
        let nodes = AppendOnly::new(node_limit.max(1));
        if nodes.push(root).is_err() {
            unreachable!("a new store has room for its root");
        }
        Tree {
            store: Store { nodes, table },
            local: Local::new(rng),
        }
    }

    pub fn root(&self) -> &Node<M> {
        self.store.root()
    }

    /// Nodes in the tree.
    pub fn node_count(&self) -> usize {
        self.store.nodes.len()
    }

    /// One iteration by this thread alone: [`Store::iterate`].
    pub fn iterate(&mut self, machine: &M, pol: &Policies<M>, deadline: Option<Instant>) -> bool {
        self.store
            .iterate::<false>(machine, pol, deadline, &mut self.local)
    }

    pub fn solved_move(&self, role: usize) -> Option<usize> {
        self.store.solved_move(role)
    }
}

impl<M: StateMachine + 'static> Tree<M> {
    /// Re-roots the tree at the state after `joint`, keeping the subtree below it
    /// when it was expanded, and compacting the store so freed nodes are reused.
    pub fn advance(&mut self, machine: &M, joint: &[M::Move], eval: &dyn Evaluator<M>) {
        let root = self.root();
        let child = root
            .indices(joint)
            .filter(|_| root.keyable)
            .and_then(|idx| root.child(root.key(&idx)));
        self.local.best_line = match self.local.best_line.take() {
            Some((mut line, g)) if line.first().is_some_and(|j| j.as_slice() == joint) => {
                line.remove(0);
                Some((line, g))
            }
            _ => None,
        };
        match child {
            Some(c) => self.compact(c),
            None => {
                let next = machine.next_state(&self.root().state, joint);
                let nodes = AppendOnly::new(self.store.nodes.capacity());
                if let Some(t) = &mut self.store.table {
                    let t = t.get_mut().unwrap_or_else(|e| e.into_inner());
                    drop_elsewhere(std::mem::take(t));
                    t.insert(next.clone(), 0);
                }
                if nodes.push(Node::new(machine, next, eval)).is_err() {
                    unreachable!("a new store has room for its root");
                }
                let old = std::mem::replace(&mut self.store.nodes, nodes);
                drop_elsewhere(old);
            }
        }
    }

    /// Keeps only the subtree under `new_root`, renumbered breadth first.
    fn compact(&mut self, new_root: NodeId) {
        let cap = self.store.nodes.capacity();
        let mut old = std::mem::replace(&mut self.store.nodes, AppendOnly::new(1)).into_values();
        let mut map: HashMap<NodeId, NodeId> = HashMap::new();
        let mut order = vec![new_root];
        map.insert(new_root, 0);
        let mut i = 0;
        while i < order.len() {
            if let Some(n) = &old[order[i] as usize] {
                n.children.for_each(|_, c| {
                    if let hashbrown::hash_map::Entry::Vacant(e) = map.entry(c) {
                        e.insert(order.len() as NodeId);
                        order.push(c);
                    }
                });
            }
            i += 1;
        }
        let nodes = AppendOnly::new(cap);
        let mut table = self.store.table.as_mut().map(|t| {
            let t = t.get_mut().unwrap_or_else(|e| e.into_inner());
            drop_elsewhere(std::mem::take(t));
            t
        });
        for id in order {
            if let Some(mut n) = old[id as usize].take() {
                n.children.renumber(&map);
                if let Some(t) = &mut table {
                    t.entry(n.state.clone()).or_insert(map[&id]);
                }
                if nodes.push(n).is_err() {
                    unreachable!("a subtree fits the store it came from");
                }
            }
        }
        self.store.nodes = nodes;
        drop_elsewhere(old);
    }
}
