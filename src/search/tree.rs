//! One search tree: an arena of nodes, each a state with per-role, per-move
//! statistics (decoupled UCT), children keyed by the joint move. One tree is
//! searched by one thread; [`super::Mcts`] runs several for root parallelism.
//!
//! Invariants: the root is node 0; a node's `moves[r]` are role r's legal moves in
//! the engine's order and `stats[r]` is parallel to it; a terminal node (or one
//! where some role has no legal move) has no moves and carries its exact values.

use std::time::Instant;

use hashbrown::{HashMap, HashSet};
use rand::rngs::SmallRng;

use super::enhance::{self, DecisivePolicy, Enhancements, MastPolicy, MastTable};
use super::policy::{playout, Evaluator, MoveStats, PlayoutPolicy, TreePolicy};
use crate::reasoner::StateMachine;

pub(crate) type NodeId = u32;

pub(crate) struct Node<M: StateMachine> {
    pub state: M::State,
    /// Terminal, or some role has no legal move: nothing to choose here.
    pub terminal: bool,
    /// The node's exact values are known: it is terminal, or solved from its
    /// children (see [`Tree::try_solve`]).
    pub solved: bool,
    /// Exact values per role (0..1) of a solved node; empty otherwise.
    pub values: Vec<f64>,
    pub moves: Vec<Vec<M::Move>>,
    pub stats: Vec<Vec<MoveStats>>,
    /// RAVE: per role and move, the iterations below this node in which the
    /// role played the move anywhere (empty until RAVE first backs up here).
    pub amaf: Vec<Vec<MoveStats>>,
    pub visits: u64,
    /// Joint move (mixed-radix index over the roles' move lists) -> child.
    pub children: HashMap<u64, NodeId>,
    /// False when the joint-move count overflows a u64 key: never expanded.
    pub keyable: bool,
}

impl<M: StateMachine> Node<M> {
    pub fn new(machine: &M, state: M::State, eval: &dyn Evaluator<M>) -> Self {
        let roles = machine.num_roles();
        let mut terminal = machine.is_terminal(&state);
        let mut moves = Vec::new();
        if !terminal {
            for r in 0..roles {
                let legal = machine.legal(&state, r);
                if legal.is_empty() {
                    terminal = true;
                    moves.clear();
                    break;
                }
                moves.push(legal);
            }
        }
        let mut values = Vec::new();
        if terminal {
            eval.evaluate(machine, &state, true, &mut values);
        }
        let stats = moves
            .iter()
            .map(|l| vec![MoveStats::default(); l.len()])
            .collect();
        let keyable = moves
            .iter()
            .try_fold(1u64, |acc, l| acc.checked_mul(l.len() as u64))
            .is_some();
        Node {
            state,
            terminal,
            solved: terminal,
            values,
            moves,
            stats,
            amaf: Vec::new(),
            visits: 0,
            children: HashMap::new(),
            keyable,
        }
    }

    /// The child key of a joint move given as move indices per role.
    pub fn key(&self, idx: &[usize]) -> u64 {
        self.moves
            .iter()
            .zip(idx)
            .fold(0u64, |k, (l, &i)| k * l.len() as u64 + i as u64)
    }

    /// The one role with a choice here (any role when none has): the node is a
    /// turn of that role. `None` at simultaneous-move nodes and terminal ones.
    pub fn mover(&self) -> Option<usize> {
        let mut choosers = self.moves.iter().enumerate().filter(|(_, l)| l.len() > 1);
        match (choosers.next(), choosers.next()) {
            (Some((r, _)), None) => Some(r),
            (None, _) if !self.moves.is_empty() => Some(0),
            _ => None,
        }
    }

    /// The move indices of a joint move, if every move is legal here.
    pub fn indices(&self, joint: &[M::Move]) -> Option<Vec<usize>> {
        if self.terminal || joint.len() != self.moves.len() {
            return None;
        }
        self.moves
            .iter()
            .zip(joint)
            .map(|(l, m)| l.iter().position(|x| x == m))
            .collect()
    }
}

/// The engine-independent parts a search needs.
pub(crate) struct Policies<'a, M: StateMachine> {
    pub tree: &'a dyn TreePolicy,
    pub playout: &'a dyn PlayoutPolicy<M>,
    pub eval: &'a dyn Evaluator<M>,
    /// A value of the playout's first state and its weight: the values
    /// backed up are `w * leaf + (1 - w) * playout`.
    pub leaf: Option<(&'a dyn Evaluator<M>, f64)>,
    pub max_playout_steps: usize,
    /// The playout policy is uniform random and the evaluator the game's goals:
    /// an engine's own playout loop ([`StateMachine::FAST_PLAYOUT`]) may run them.
    pub plain: bool,
    pub enh: Enhancements,
    /// UCB's exploration constant, for RAVE's selection.
    pub exploration: f64,
}

impl<M: StateMachine> Policies<'_, M> {
    /// Plays out from `from` with the engine's own loop when it has one and the
    /// policies allow (multi-player games: one-player games record the line);
    /// `None` when the generic loop must run. Values as the goal evaluator gives
    /// them, a role with zero or several goal values scoring 0. `Some(None)`
    /// when `deadline` cut the playout short (nothing to record), else
    /// `Some(Some(terminal))`.
    pub fn fast_playout(
        &self,
        machine: &M,
        from: &M::State,
        rng: &mut SmallRng,
        deadline: Option<Instant>,
        goals: &mut Vec<Option<u8>>,
        values: &mut Vec<f64>,
    ) -> Option<Option<bool>> {
        if !(M::FAST_PLAYOUT && self.plain) || machine.num_roles() == 1 {
            return None;
        }
        let p = machine.playout(from, rng, self.max_playout_steps, deadline, goals);
        if p.cut {
            return Some(None);
        }
        values.clear();
        values.extend(goals.iter().map(|g| g.map_or(0.0, |v| v as f64 / 100.0)));
        Some(Some(p.terminal))
    }

    /// The playout of descent `d` from `from`: values and `terminal` set, and
    /// for RAVE and MAST the joint moves played recorded in `d.tail`. MAST
    /// playouts (given `mast`) pick moves from the table; both run on the
    /// engine's own loop when it has one. False when `deadline` cut it short.
    #[allow(clippy::too_many_arguments)]
    pub fn play_out(
        &self,
        machine: &M,
        from: M::State,
        d: &mut Descent<M>,
        rng: &mut SmallRng,
        deadline: Option<Instant>,
        buf: &mut Vec<M::Move>,
        goals: &mut Vec<Option<u8>>,
        mast: Option<&MastTable<M>>,
    ) -> bool {
        let Some((leaf, w)) = self.leaf else {
            return self.play_out_only(machine, from, d, rng, deadline, buf, goals, mast);
        };
        let mut prior = Vec::new();
        leaf.evaluate(machine, &from, false, &mut prior);
        if !self.play_out_only(machine, from, d, rng, deadline, buf, goals, mast) {
            return false;
        }
        for (v, p) in d.values.iter_mut().zip(&prior) {
            *v = w * p + (1.0 - w) * *v;
        }
        true
    }

    /// [`Policies::play_out`] without the leaf value.
    #[allow(clippy::too_many_arguments)]
    fn play_out_only(
        &self,
        machine: &M,
        from: M::State,
        d: &mut Descent<M>,
        rng: &mut SmallRng,
        deadline: Option<Instant>,
        buf: &mut Vec<M::Move>,
        goals: &mut Vec<Option<u8>>,
        mast: Option<&MastTable<M>>,
    ) -> bool {
        let roles = machine.num_roles();
        let mast = mast.zip(self.enh.mast);
        let fast = M::FAST_PLAYOUT && self.plain && roles > 1 && !self.enh.decisive;
        if self.enh.records() && fast {
            let p = match mast {
                None => machine.playout_recorded(
                    &from,
                    rng,
                    self.max_playout_steps,
                    deadline,
                    goals,
                    &mut d.tail,
                ),
                Some((table, tau)) => {
                    let policy = MastPolicy { table, tau };
                    let mut q = Vec::new();
                    machine.playout_steered(
                        &from,
                        rng,
                        self.max_playout_steps,
                        deadline,
                        goals,
                        &mut d.tail,
                        &mut |role, legal, rng| policy.pick(role, legal, &mut q, rng),
                    )
                }
            };
            if p.cut {
                return false;
            }
            d.values.clear();
            d.values
                .extend(goals.iter().map(|g| g.map_or(0.0, |v| v as f64 / 100.0)));
            d.terminal = p.terminal;
            d.played = true;
            return true;
        }
        if !self.enh.records() && !self.enh.decisive {
            match self.fast_playout(machine, &from, rng, deadline, goals, &mut d.values) {
                Some(Some(terminal)) => {
                    d.terminal = terminal;
                    d.played = true;
                    return true;
                }
                Some(None) => return false,
                None => {}
            }
        }
        // The generic loop: one-player games record their line, learning
        // searches every joint move.
        let mut lines = Vec::new();
        let tree_part = d.line.len();
        let line = if d.one_player {
            Some(&mut d.line)
        } else if self.enh.records() {
            Some(&mut lines)
        } else {
            None
        };
        let mut policy: &dyn PlayoutPolicy<M>;
        let mast_policy;
        match mast {
            Some((table, tau)) => {
                mast_policy = MastPolicy { table, tau };
                policy = &mast_policy;
            }
            None => policy = self.playout,
        }
        let decisive;
        if self.enh.decisive {
            decisive = DecisivePolicy { inner: policy };
            policy = &decisive;
        }
        let Some((end, terminal, _)) = playout(
            machine,
            from,
            policy,
            rng,
            self.max_playout_steps,
            deadline,
            line,
            buf,
        ) else {
            return false;
        };
        if self.enh.records() {
            let played = if d.one_player {
                &d.line[tree_part..]
            } else {
                &lines[..]
            };
            for joint in played {
                d.tail.extend_from_slice(joint);
            }
        }
        self.eval.evaluate(machine, &end, terminal, &mut d.values);
        d.terminal = terminal;
        d.played = true;
        true
    }
}

pub(crate) struct Tree<M: StateMachine> {
    pub nodes: Vec<Node<M>>,
    pub rng: SmallRng,
    pub node_limit: usize,
    /// One-player games: the best complete line from the root seen so far, and its goal.
    pub best_line: Option<(Vec<Vec<M::Move>>, u8)>,
    pub iterations: u64,
    pub playouts: u64,
    pub max_depth: usize,
    /// MAST's statistics, kept across moves.
    pub mast: MastTable<M>,
    // Scratch for playouts, kept to avoid allocating per iteration.
    buf: Vec<M::Move>,
    goals: Vec<Option<u8>>,
    /// RAVE's scratch: per role, the moves played at or below a node.
    seen: Vec<HashSet<M::Move>>,
}

/// One iteration between selection and backup: the path taken (node and the
/// offset of its move indices in `moves`), the line of joint moves (one-player
/// games), where the playout starts (`None` when the descent ended in a solved
/// node) and, once known, the values.
pub(crate) struct Descent<M: StateMachine> {
    pub path: Vec<(NodeId, usize)>,
    pub moves: Vec<usize>,
    pub line: Vec<Vec<M::Move>>,
    /// RAVE and MAST: the playout's joint moves, role after role.
    pub tail: Vec<M::Move>,
    pub from: Option<M::State>,
    pub values: Vec<f64>,
    pub terminal: bool,
    pub played: bool,
    pub one_player: bool,
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
    /// The expansion's step and, when the tree may grow, the new node (its
    /// legal moves, terminal values): the work that needs no tree.
    pub fn expand(&self, machine: &M, pol: &Policies<M>) -> (Option<Node<M>>, Option<M::State>) {
        let next = machine.next_state(&self.state, &self.joint);
        if self.grow {
            (Some(Node::new(machine, next, pol.eval)), None)
        } else {
            (None, Some(next))
        }
    }
}

impl<M: StateMachine> Tree<M> {
    pub fn new(root: Node<M>, rng: SmallRng, node_limit: usize) -> Self {
        Tree {
            nodes: vec![root],
            rng,
            node_limit: node_limit.max(1),
            best_line: None,
            iterations: 0,
            playouts: 0,
            max_depth: 0,
            mast: MastTable::default(),
            buf: Vec::new(),
            goals: Vec::new(),
            seen: Vec::new(),
        }
    }

    pub fn root(&self) -> &Node<M> {
        &self.nodes[0]
    }

    /// One iteration: select down the tree, expand one node, play out, back up.
    /// Returns false when the deadline cut the iteration short (nothing
    /// recorded): it is checked before the expansion's step and before every
    /// step of the playout, so an iteration ends at most one step late.
    pub fn iterate(&mut self, machine: &M, pol: &Policies<M>, deadline: Option<Instant>) -> bool {
        let Some(mut d) = self.descend(machine, pol, deadline) else {
            return false;
        };
        if let Some(from) = d.from.take() {
            let mast = pol.enh.mast.is_some().then_some(&self.mast);
            if !pol.play_out(
                machine,
                from,
                &mut d,
                &mut self.rng,
                deadline,
                &mut self.buf,
                &mut self.goals,
                mast,
            ) {
                self.undo(&d);
                return false;
            }
        }
        self.backup(d, &pol.enh);
        true
    }

    /// Selection and expansion: walks down by the tree policy, counting the visit
    /// on every edge at once (with several threads on one tree this is the
    /// virtual loss: an edge being played out looks worse until its value comes
    /// back), expands one node, and says where the playout starts. `None`, with
    /// the visits taken back, when `deadline` has passed before the expansion's
    /// step (one step of a slow engine may take milliseconds).
    pub fn descend(
        &mut self,
        machine: &M,
        pol: &Policies<M>,
        deadline: Option<Instant>,
    ) -> Option<Descent<M>> {
        match self.select(machine, pol, deadline)? {
            Selected::Done(d) => Some(d),
            Selected::Expand(e) => {
                let (child, next) = e.expand(machine, pol);
                Some(self.attach(machine, e, child, next))
            }
        }
    }

    /// Selection: walks down by the tree policy (counting the visits, see
    /// [`Tree::descend`]) to a solved node or to an edge with no child yet,
    /// whose expansion [`Expansion::expand`] computes without the tree (a
    /// tree shared by threads is unlocked meanwhile) and [`Tree::attach`]
    /// adds.
    pub fn select(
        &mut self,
        machine: &M,
        pol: &Policies<M>,
        deadline: Option<Instant>,
    ) -> Option<Selected<M>> {
        let roles = machine.num_roles();
        let mut d = Descent {
            path: Vec::new(),
            moves: Vec::new(),
            line: Vec::new(),
            tail: Vec::new(),
            from: None,
            values: Vec::new(),
            terminal: false,
            played: false,
            one_player: roles == 1,
        };
        let mut node: NodeId = 0;
        loop {
            let n = &mut self.nodes[node as usize];
            n.visits += 1;
            if n.solved {
                d.values.clone_from(&n.values);
                d.terminal = machine.is_terminal(&n.state);
                return Some(Selected::Done(d));
            }
            let start = d.moves.len();
            for r in 0..roles {
                let i = match pol.enh.rave {
                    Some(k) if n.moves[r].len() > 1 => enhance::select_rave(
                        &n.stats[r],
                        n.amaf.get(r).map_or(&[][..], |a| &a[..]),
                        n.visits - 1,
                        k,
                        pol.exploration,
                        pol.enh.widening,
                        &mut self.rng,
                    ),
                    _ => pol.tree.select(&n.stats[r], n.visits - 1, &mut self.rng),
                };
                n.stats[r][i].visits += 1;
                d.moves.push(i);
            }
            d.path.push((node, start));
            let idx = &d.moves[start..];
            if roles == 1 {
                d.line.push(vec![n.moves[0][idx[0]].clone()]);
            }
            let key = if n.keyable { n.key(idx) } else { 0 };
            if let Some(&c) = n.children.get(&key) {
                node = c;
                continue;
            }
            if deadline.is_some_and(|t| Instant::now() >= t) {
                self.undo(&d);
                return None;
            }
            let n = &self.nodes[node as usize];
            let joint: Vec<M::Move> = n
                .moves
                .iter()
                .zip(idx)
                .map(|(l, &i)| l[i].clone())
                .collect();
            let grow = n.keyable && self.nodes.len() < self.node_limit;
            return Some(Selected::Expand(Expansion {
                d,
                parent: node,
                key,
                state: n.state.clone(),
                joint,
                grow,
            }));
        }
    }

    /// Adds the child `child` (state `next`) an expansion computed, unless
    /// another thread added that child meanwhile (then its node is used), and
    /// says where the playout starts.
    pub fn attach(
        &mut self,
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
        let existing = self.nodes[e.parent as usize].children.get(&e.key).copied();
        let id = match existing {
            Some(id) => id,
            None if self.nodes.len() < self.node_limit => {
                let id = self.nodes.len() as NodeId;
                self.nodes[e.parent as usize].children.insert(e.key, id);
                self.nodes.push(child);
                id
            }
            None => {
                d.from = Some(child.state);
                return d;
            }
        };
        let c = &self.nodes[id as usize];
        if c.solved {
            d.values.clone_from(&c.values);
            d.terminal = machine.is_terminal(&c.state);
        } else {
            d.from = Some(c.state.clone());
        }
        d
    }

    /// Takes back the visits of a descent whose playout was abandoned.
    /// A node the descent expanded stays: its state is right either way.
    pub fn undo(&mut self, d: &Descent<M>) {
        for &(id, start) in &d.path {
            let n = &mut self.nodes[id as usize];
            n.visits -= 1;
            for (r, &i) in d.moves[start..start + n.stats.len()].iter().enumerate() {
                n.stats[r][i].visits -= 1;
            }
        }
    }

    /// Backs the values of a finished descent up its path (the visits were
    /// counted on the way down), then solves what can be solved and records a
    /// one-player line.
    pub fn backup(&mut self, d: Descent<M>, enh: &Enhancements) {
        self.max_depth = self.max_depth.max(d.path.len());
        if d.played && enh.rave.is_some() {
            self.update_amaf(&d);
        }
        if d.played && enh.mast.is_some() {
            self.update_mast(&d);
        }
        for &(id, start) in &d.path {
            let n = &mut self.nodes[id as usize];
            for (r, &i) in d.moves[start..start + n.stats.len()].iter().enumerate() {
                n.stats[r][i].sum += d.values[r];
            }
        }
        for i in (0..d.path.len()).rev() {
            if !self.try_solve(d.path[i].0) {
                break;
            }
        }
        if d.one_player && d.terminal {
            let goal = (d.values[0] * 100.0).round() as u8;
            if self.best_line.as_ref().is_none_or(|(_, g)| goal > *g) {
                self.best_line = Some((d.line, goal));
            }
        }
        if d.played {
            self.playouts += 1;
        }
        self.iterations += 1;
    }

    /// RAVE's backup: at each node of the path, every move a role played at
    /// or below it (in the tree or the playout) gets the iteration's value
    /// for that role in its AMAF statistics.
    fn update_amaf(&mut self, d: &Descent<M>) {
        let roles = d.values.len();
        self.seen.resize_with(roles, HashSet::new);
        for s in &mut self.seen {
            s.clear();
        }
        for (k, m) in d.tail.iter().enumerate() {
            self.seen[k % roles].insert(m.clone());
        }
        for &(id, start) in d.path.iter().rev() {
            let n = &mut self.nodes[id as usize];
            for r in 0..roles {
                self.seen[r].insert(n.moves[r][d.moves[start + r]].clone());
            }
            if n.amaf.is_empty() {
                n.amaf = n
                    .moves
                    .iter()
                    .map(|l| vec![MoveStats::default(); l.len()])
                    .collect();
            }
            for r in 0..roles {
                if n.moves[r].len() < 2 {
                    continue;
                }
                for (i, m) in n.moves[r].iter().enumerate() {
                    if self.seen[r].contains(m) {
                        n.amaf[r][i].visits += 1;
                        n.amaf[r][i].sum += d.values[r];
                    }
                }
            }
        }
    }

    /// MAST's backup: every move of the iteration, in the tree and the
    /// playout, counts the iteration's value for the role that played it.
    fn update_mast(&mut self, d: &Descent<M>) {
        let roles = d.values.len();
        for &(id, start) in &d.path {
            let n = &self.nodes[id as usize];
            for r in 0..roles {
                let m = &n.moves[r][d.moves[start + r]];
                self.mast.add(r, m, d.values[r]);
            }
        }
        for (k, m) in d.tail.iter().enumerate() {
            self.mast.add(k % roles, m, d.values[k % roles]);
        }
    }

    /// MCTS-Solver at turn nodes: a node where the mover has a child solved with
    /// the best value (1.0) for the mover, or whose children are all expanded and
    /// solved, is solved with the values of the mover's best child. The search
    /// then stops descending there and backs up exact values. Simultaneous-move
    /// nodes are never solved (their value is a matrix game's). Returns whether
    /// the node is solved.
    pub fn try_solve(&mut self, id: NodeId) -> bool {
        let n = &self.nodes[id as usize];
        if n.solved {
            return true;
        }
        let Some(r) = n.mover().filter(|_| n.keyable) else {
            return false;
        };
        let mut all = n.children.len() == n.moves[r].len();
        let mut best: Option<&Vec<f64>> = None;
        for &c in n.children.values() {
            let cn = &self.nodes[c as usize];
            if !cn.solved {
                all = false;
                continue;
            }
            if best.is_none_or(|b| cn.values[r] > b[r]) {
                best = Some(&cn.values);
            }
        }
        let values = match best {
            Some(b) if all || b[r] >= 1.0 => b.clone(),
            _ => return false,
        };
        let n = &mut self.nodes[id as usize];
        n.values = values;
        n.solved = true;
        true
    }

    /// The move of `role` leading to the best solved child for `role`, when
    /// the root is `role`'s turn and solved (or has a child solved as a win).
    pub fn solved_move(&self, role: usize) -> Option<usize> {
        let root = self.root();
        if root.mover() != Some(role) || root.terminal || !root.keyable {
            return None;
        }
        // At a turn node every other role has one move, so the key is the index.
        let mut best: Option<(usize, f64)> = None;
        for (&k, &c) in &root.children {
            let cn = &self.nodes[c as usize];
            if cn.solved && best.is_none_or(|(_, v)| cn.values[role] > v) {
                best = Some((k as usize, cn.values[role]));
            }
        }
        best.filter(|&(_, v)| root.solved || v >= 1.0)
            .map(|(i, _)| i)
    }
}

impl<M: StateMachine + 'static> Tree<M> {
    /// Re-roots the tree at the state after `joint`, keeping the subtree below it
    /// when it was expanded, and compacting the arena so freed nodes are reused.
    pub fn advance(&mut self, machine: &M, joint: &[M::Move], eval: &dyn Evaluator<M>) {
        let root = &self.nodes[0];
        let child = root
            .indices(joint)
            .filter(|_| root.keyable)
            .and_then(|idx| root.children.get(&root.key(&idx)).copied());
        self.best_line = match self.best_line.take() {
            Some((mut line, g)) if line.first().is_some_and(|j| j.as_slice() == joint) => {
                line.remove(0);
                Some((line, g))
            }
            _ => None,
        };
        match child {
            Some(c) => self.compact(c),
            None => {
                let next = machine.next_state(&root.state, joint);
                let old = std::mem::replace(&mut self.nodes, vec![Node::new(machine, next, eval)]);
                drop_elsewhere(old);
            }
        }
    }

    /// Keeps only the subtree under `new_root`, renumbered breadth first.
    fn compact(&mut self, new_root: NodeId) {
        let mut old: Vec<Option<Node<M>>> = std::mem::take(&mut self.nodes)
            .into_iter()
            .map(Some)
            .collect();
        let mut map: HashMap<NodeId, NodeId> = HashMap::new();
        let mut order = vec![new_root];
        map.insert(new_root, 0);
        let mut i = 0;
        while i < order.len() {
            if let Some(n) = &old[order[i] as usize] {
                for &c in n.children.values() {
                    if let hashbrown::hash_map::Entry::Vacant(e) = map.entry(c) {
                        e.insert(order.len() as NodeId);
                        order.push(c);
                    }
                }
            }
            i += 1;
        }
        let mut nodes = Vec::with_capacity(order.len());
        for id in order {
            if let Some(mut n) = old[id as usize].take() {
                for c in n.children.values_mut() {
                    *c = map[c];
                }
                nodes.push(n);
            }
        }
        self.nodes = nodes;
        drop_elsewhere(old);
    }
}

/// Frees `garbage` on a thread of its own: the subtrees a move cuts off hold
/// hundreds of thousands of nodes, each with allocations of its own, and
/// freeing them on the searching thread would take a share of the next move's
/// clock.
fn drop_elsewhere<T: Send + 'static>(garbage: T) {
    if std::thread::Builder::new()
        .name("uct-free".into())
        .spawn(move || drop(garbage))
        .is_err()
    {
        // No thread to be had: the memory is freed here, as before.
    }
}
