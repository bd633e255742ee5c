//! The compiled engine: a propositional network built from the ground rules
//! (see [`super::ground`]), implementing [`StateMachine`].
//!
//! Every ground atom becomes a node: `true` atoms are the fluent inputs, `does`
//! atoms the move inputs, every other atom an OR over its rules, each rule an AND
//! of (possibly negated) nodes. Atoms that do not depend on the inputs (static
//! relations, `init`) are evaluated once at compile time and folded away. Nodes are
//! numbered in topological order of the atoms' strongly connected components, so
//! one pass evaluates the network; a component with recursion between its atoms
//! (paths, connectivity) is a loop solved to its least fixpoint. Ground negation
//! inside such a component would make the rules unstratified and is refused.
//!
//! Evaluation is split in three programs, each only over the nodes an output
//! needs: per state, what `legal`, `terminal` and `next` need; on demand, what
//! `goal` needs; per joint move, the nodes that read `does`. A state is a bitset of
//! fluents and a move an index, so a playout ([`Propnet::playout_from`]) allocates
//! nothing: it runs in a per-thread scratch taken from a pool, and the network
//! itself is immutable, so any number of threads share it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use rand::Rng;

use super::ground::{ground, AtomId, GroundError, GroundProgram, Limits};
use super::terms::{TermId, TermPool};
use super::{Playout, RoleIdx, StateMachine};
use crate::gdl::{kw, Game, Term};

/// A state: one bit per fluent of the network.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct PropnetState(Box<[u64]>);

impl PropnetState {
    fn get(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }
}

/// A move: an index into the network's move terms (the same for every role).
pub type PropnetMove = u32;

/// Why a game did not compile.
#[derive(Debug, thiserror::Error)]
pub enum PropnetError {
    #[error("{0}")]
    Ground(#[from] GroundError),
    #[error("the network exceeds {limit} nodes")]
    TooManyNodes { limit: usize },
    #[error("{0}")]
    Rules(String),
}

/// Size and cost of a compiled network.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct NetStats {
    pub ground_atoms: usize,
    pub ground_rules: usize,
    pub fluents: usize,
    pub moves: usize,
    pub nodes: usize,
    pub edges: usize,
    /// Nodes run per state, per joint move, and for goals.
    pub state_nodes: usize,
    pub move_nodes: usize,
    pub goal_nodes: usize,
    pub ground_s: f64,
    pub compile_s: f64,
}

const FALSE: u32 = 0;
const TRUE: u32 = 1;
const FLUENT_BASE: usize = 2;

#[derive(Clone, Copy, Debug)]
struct Gate {
    and: bool,
    start: u32,
    end: u32,
}

/// One instruction of an evaluation program.
#[derive(Clone, Copy, Debug)]
enum Item {
    Node(u32),
    /// A recursive component: nodes `[start, end)` to their least fixpoint.
    Loop(u32, u32),
}

/// Per-thread working memory.
struct Scratch {
    vals: Vec<u8>,
    /// The state `vals` holds the state program's results for.
    key: Option<PropnetState>,
    goals_done: bool,
    next: Vec<u8>,
    legal: Vec<u32>,
    joint: Vec<u32>,
}

/// The compiled network.
pub struct Propnet {
    game: Game,
    pool: TermPool,
    /// Fluent `i` is node `FLUENT_BASE + i`; its term (without `true`).
    fluent_terms: Vec<TermId>,
    fluent_of: HashMap<TermId, u32>,
    move_terms: Vec<TermId>,
    move_of: HashMap<TermId, u32>,
    /// `does` input node for role `r` and move `m`: `does_node[r * moves + m]`.
    does_node: Vec<u32>,
    gates: Vec<Gate>,
    /// Gate inputs: `node << 1 | negated`.
    lits: Vec<u32>,
    state_prog: Vec<Item>,
    goal_prog: Vec<Item>,
    move_prog: Vec<Item>,
    legal: Vec<Vec<(u32, u32)>>,
    /// Per fluent: the node of its `next` atom.
    next: Vec<u32>,
    terminal: u32,
    /// Per role: (node, value), ascending by value.
    goals: Vec<Vec<(u32, u8)>>,
    init: PropnetState,
    scratch: Mutex<Vec<Scratch>>,
    stats: NetStats,
}

/// Compile limits: the grounding's, and the number of network nodes.
#[derive(Clone, Copy, Debug)]
pub struct CompileLimits {
    pub ground: Limits,
    pub max_nodes: usize,
}

impl Default for CompileLimits {
    fn default() -> Self {
        CompileLimits {
            ground: Limits::default(),
            max_nodes: 4_000_000,
        }
    }
}

impl Propnet {
    /// Grounds and compiles `game` with the default limits.
    pub fn new(game: Game) -> Result<Propnet, PropnetError> {
        Self::with_limits(game, &CompileLimits::default())
    }

    pub fn with_limits(game: Game, limits: &CompileLimits) -> Result<Propnet, PropnetError> {
        let t0 = Instant::now();
        let gp = ground(&game, &limits.ground)?;
        let ground_s = t0.elapsed().as_secs_f64();
        let mut net = Builder::new(game, gp, limits.max_nodes)?.finish()?;
        net.stats.ground_s = ground_s;
        net.stats.compile_s = t0.elapsed().as_secs_f64();
        Ok(net)
    }

    pub fn stats(&self) -> &NetStats {
        &self.stats
    }

    fn new_scratch(&self) -> Scratch {
        let mut vals = vec![0u8; self.gates.len()];
        vals[TRUE as usize] = 1;
        Scratch {
            vals,
            key: None,
            goals_done: false,
            next: vec![0; self.fluent_terms.len()],
            legal: Vec::new(),
            joint: Vec::new(),
        }
    }

    fn with_scratch<T>(&self, f: impl FnOnce(&mut Scratch) -> T) -> T {
        let taken = self.scratch.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut s = taken.unwrap_or_else(|| self.new_scratch());
        let out = f(&mut s);
        self.scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(s);
        out
    }

    #[inline]
    fn eval_gate(&self, n: u32, vals: &[u8]) -> u8 {
        let g = self.gates[n as usize];
        let lits = &self.lits[g.start as usize..g.end as usize];
        if g.and {
            for &l in lits {
                if vals[(l >> 1) as usize] ^ (l & 1) as u8 == 0 {
                    return 0;
                }
            }
            1
        } else {
            for &l in lits {
                if vals[(l >> 1) as usize] ^ (l & 1) as u8 != 0 {
                    return 1;
                }
            }
            0
        }
    }

    fn run(&self, prog: &[Item], vals: &mut [u8]) {
        for item in prog {
            match *item {
                Item::Node(n) => vals[n as usize] = self.eval_gate(n, vals),
                Item::Loop(s, e) => {
                    vals[s as usize..e as usize].fill(0);
                    loop {
                        let mut changed = false;
                        for n in s..e {
                            let v = self.eval_gate(n, vals);
                            if v != vals[n as usize] {
                                vals[n as usize] = v;
                                changed = true;
                            }
                        }
                        if !changed {
                            break;
                        }
                    }
                }
            }
        }
    }

    /// Loads `state` into the scratch and runs the state program (unless done).
    fn load(&self, s: &mut Scratch, state: &PropnetState) {
        if s.key.as_ref() == Some(state) {
            return;
        }
        for i in 0..self.fluent_terms.len() {
            s.vals[FLUENT_BASE + i] = state.get(i) as u8;
        }
        self.run(&self.state_prog, &mut s.vals);
        s.key = Some(state.clone());
        s.goals_done = false;
    }

    fn goals_into(&self, s: &mut Scratch) {
        if !s.goals_done {
            self.run(&self.goal_prog, &mut s.vals);
            s.goals_done = true;
        }
    }

    /// Sets the `does` inputs of `joint`, runs the move program, and writes the
    /// next fluents to `s.next`; clears the inputs again.
    fn advance(&self, s: &mut Scratch, joint: &[u32]) {
        let nm = self.move_terms.len();
        for (r, &m) in joint.iter().enumerate() {
            let n = self.does_node[r * nm + m as usize];
            if n != FALSE {
                s.vals[n as usize] = 1;
            }
        }
        self.run(&self.move_prog, &mut s.vals);
        for (i, &n) in self.next.iter().enumerate() {
            s.next[i] = s.vals[n as usize];
        }
        for (r, &m) in joint.iter().enumerate() {
            let n = self.does_node[r * nm + m as usize];
            if n != FALSE {
                s.vals[n as usize] = 0;
            }
        }
    }

    fn pack(&self, bits: &[u8]) -> PropnetState {
        let mut words = vec![0u64; bits.len().div_ceil(64)];
        for (i, &b) in bits.iter().enumerate() {
            words[i / 64] |= (b as u64) << (i % 64);
        }
        PropnetState(words.into_boxed_slice())
    }

    /// A random playout from `state` with everything in scratch memory: no
    /// allocation per step. `goals` gets each role's goal in the last state.
    pub fn playout_from<R: Rng>(
        &self,
        state: &PropnetState,
        rng: &mut R,
        max_steps: usize,
        goals: &mut Vec<Option<u8>>,
    ) -> Playout {
        self.with_scratch(|s| {
            self.load(s, state);
            let roles = self.goals.len();
            let mut steps = 0;
            let terminal = loop {
                if s.vals[self.terminal as usize] == 1 {
                    break true;
                }
                if steps >= max_steps {
                    break false;
                }
                s.joint.clear();
                for r in 0..roles {
                    s.legal.clear();
                    for &(n, m) in &self.legal[r] {
                        if s.vals[n as usize] == 1 {
                            s.legal.push(m);
                        }
                    }
                    if s.legal.is_empty() {
                        break;
                    }
                    s.joint.push(s.legal[rng.gen_range(0..s.legal.len())]);
                }
                if s.joint.len() < roles {
                    break false;
                }
                let joint = std::mem::take(&mut s.joint);
                self.advance(s, &joint);
                s.joint = joint;
                // The new state goes straight into the fluent inputs.
                let nf = self.fluent_terms.len();
                s.vals[FLUENT_BASE..FLUENT_BASE + nf].copy_from_slice(&s.next);
                self.run(&self.state_prog, &mut s.vals);
                steps += 1;
            };
            // The scratch no longer holds `state`'s evaluation.
            s.key = None;
            self.run(&self.goal_prog, &mut s.vals);
            goals.clear();
            for r in 0..roles {
                goals.push(self.single_goal(r, &s.vals));
            }
            Playout { steps, terminal }
        })
    }

    fn single_goal(&self, role: RoleIdx, vals: &[u8]) -> Option<u8> {
        let mut found = None;
        for &(n, v) in &self.goals[role] {
            if vals[n as usize] == 1 {
                match found {
                    None => found = Some(v),
                    Some(w) if w == v => {}
                    Some(_) => return None,
                }
            }
        }
        found
    }
}

impl StateMachine for Propnet {
    type State = PropnetState;
    type Move = PropnetMove;

    fn game(&self) -> &Game {
        &self.game
    }

    fn initial_state(&self) -> PropnetState {
        self.init.clone()
    }

    fn legal_moves(&self, state: &PropnetState, role: RoleIdx, out: &mut Vec<u32>) {
        out.clear();
        self.with_scratch(|s| {
            self.load(s, state);
            for &(n, m) in &self.legal[role] {
                if s.vals[n as usize] == 1 {
                    out.push(m);
                }
            }
        });
        out.sort_unstable();
        out.dedup();
    }

    fn next_state(&self, state: &PropnetState, joint: &[u32]) -> PropnetState {
        self.with_scratch(|s| {
            self.load(s, state);
            self.advance(s, joint);
            self.pack(&s.next)
        })
    }

    fn is_terminal(&self, state: &PropnetState) -> bool {
        self.with_scratch(|s| {
            self.load(s, state);
            s.vals[self.terminal as usize] == 1
        })
    }

    fn goal_values(&self, state: &PropnetState, role: RoleIdx) -> Vec<u8> {
        self.with_scratch(|s| {
            self.load(s, state);
            self.goals_into(s);
            let mut v: Vec<u8> = self.goals[role]
                .iter()
                .filter(|(n, _)| s.vals[*n as usize] == 1)
                .map(|&(_, v)| v)
                .collect();
            v.dedup();
            v
        })
    }

    fn fluents(&self, state: &PropnetState) -> Vec<Term> {
        (0..self.fluent_terms.len())
            .filter(|&i| state.get(i))
            .map(|i| self.pool.to_term(self.fluent_terms[i]))
            .collect()
    }

    fn move_term(&self, m: &u32) -> Term {
        self.pool.to_term(self.move_terms[*m as usize])
    }

    fn parse_move(&self, term: &Term) -> Option<u32> {
        let t = self.pool.find_term(term)?;
        self.move_of.get(&t).copied()
    }

    fn playout<R: Rng>(
        &self,
        state: &PropnetState,
        rng: &mut R,
        max_steps: usize,
        goals: &mut Vec<Option<u8>>,
    ) -> Playout {
        self.playout_from(state, rng, max_steps, goals)
    }
}

impl Propnet {
    /// Whether fluent term `t` (without `true`) is one of the network's fluents.
    pub fn has_fluent(&self, t: &Term) -> bool {
        self.pool
            .find_term(t)
            .is_some_and(|id| self.fluent_of.contains_key(&id))
    }
}

/// Builds the network from the ground program.
struct Builder {
    game: Game,
    gp: GroundProgram,
    max_nodes: usize,
    /// Per atom: its constant value, once known to be constant.
    konst: Vec<Option<bool>>,
    /// Per atom: its node, once it has one.
    node_of: Vec<u32>,
    gates: Vec<Gate>,
    lits: Vec<u32>,
    /// Per node: whether it depends on `does`.
    is_move: Vec<bool>,
    /// Node groups in topological order: (first node, end, recursive).
    groups: Vec<(u32, u32, bool)>,
    fluent_terms: Vec<TermId>,
    fluent_of: HashMap<TermId, u32>,
    move_terms: Vec<TermId>,
    move_of: HashMap<TermId, u32>,
}

const NO_NODE: u32 = u32::MAX;

impl Builder {
    fn new(game: Game, gp: GroundProgram, max_nodes: usize) -> Result<Self, PropnetError> {
        let n = gp.atoms.len();
        let roles: Vec<Option<TermId>> = game.roles.iter().map(|r| gp.pool.find_term(r)).collect();
        let mut b = Builder {
            game,
            gp,
            max_nodes,
            konst: vec![None; n],
            node_of: vec![NO_NODE; n],
            gates: Vec::new(),
            lits: Vec::new(),
            is_move: Vec::new(),
            groups: Vec::new(),
            fluent_terms: Vec::new(),
            fluent_of: HashMap::new(),
            move_terms: Vec::new(),
            move_of: HashMap::new(),
        };
        // Constant nodes, then fluent inputs, then move inputs.
        b.push_input(false);
        b.push_input(false);
        let mut does = Vec::new();
        for a in 0..n {
            let t = b.gp.atoms[a];
            let (f, args) = (b.gp.pool.functor(t), b.gp.pool.args(t).to_vec());
            if b.gp.pool.is_const(t) {
                continue;
            }
            if f == kw::TRUE && args.len() == 1 {
                let i = b.fluent_terms.len() as u32;
                b.fluent_terms.push(args[0]);
                b.fluent_of.insert(args[0], i);
                b.node_of[a] = b.push_input(false);
            } else if f == kw::DOES && args.len() == 2 {
                does.push(a);
            }
        }
        for a in does {
            let t = b.gp.atoms[a];
            let args = b.gp.pool.args(t).to_vec();
            let is_role = roles.contains(&Some(args[0]));
            if is_role {
                b.move_id(args[1]);
                b.node_of[a] = b.push_input(true);
            } else {
                b.konst[a] = Some(false);
            }
        }
        b.build_gates()?;
        Ok(b)
    }

    fn move_id(&mut self, t: TermId) -> u32 {
        let n = self.move_terms.len() as u32;
        *self.move_of.entry(t).or_insert_with(|| {
            self.move_terms.push(t);
            n
        })
    }

    fn push_input(&mut self, is_move: bool) -> u32 {
        self.gates.push(Gate {
            and: false,
            start: 0,
            end: 0,
        });
        self.is_move.push(is_move);
        (self.gates.len() - 1) as u32
    }

    fn push_gate(&mut self, and: bool, lits: &[u32]) -> Result<u32, PropnetError> {
        if self.gates.len() >= self.max_nodes {
            return Err(PropnetError::TooManyNodes {
                limit: self.max_nodes,
            });
        }
        let start = self.lits.len() as u32;
        self.lits.extend_from_slice(lits);
        let mv = lits.iter().any(|&l| self.is_move[(l >> 1) as usize]);
        self.gates.push(Gate {
            and,
            start,
            end: self.lits.len() as u32,
        });
        self.is_move.push(mv);
        Ok((self.gates.len() - 1) as u32)
    }

    /// Components of the atom graph (body atom -> head), dependencies first.
    fn components(&self) -> Vec<Vec<AtomId>> {
        let n = self.gp.atoms.len();
        let mut deps: Vec<Vec<AtomId>> = vec![Vec::new(); n];
        for r in &self.gp.rules {
            deps[r.head as usize].extend(r.pos.iter().chain(&r.neg));
        }
        tarjan(&deps)
    }

    fn build_gates(&mut self) -> Result<(), PropnetError> {
        let mut rules_of: Vec<Vec<usize>> = vec![Vec::new(); self.gp.atoms.len()];
        for (i, r) in self.gp.rules.iter().enumerate() {
            rules_of[r.head as usize].push(i);
        }
        // Per atom: its position in the component being built (u32::MAX: outside).
        let mut comp_pos = vec![u32::MAX; self.gp.atoms.len()];
        for comp in self.components() {
            if comp.len() == 1
                && (self.node_of[comp[0] as usize] != NO_NODE
                    || self.konst[comp[0] as usize].is_some())
            {
                continue; // an input, or a `does` of no role
            }
            for (i, &a) in comp.iter().enumerate() {
                comp_pos[a as usize] = i as u32;
            }
            let result = self.build_component(&comp, &comp_pos, &rules_of);
            for &a in &comp {
                comp_pos[a as usize] = u32::MAX;
            }
            result?;
        }
        Ok(())
    }

    /// Folds or compiles one component of atoms (`comp_pos` marks its members).
    fn build_component(
        &mut self,
        comp: &[AtomId],
        comp_pos: &[u32],
        rules_of: &[Vec<usize>],
    ) -> Result<(), PropnetError> {
        let in_comp = |a: AtomId| comp_pos[a as usize] != u32::MAX;
        let recursive = comp.len() > 1
            || rules_of[comp[0] as usize]
                .iter()
                .any(|&r| self.gp.rules[r].pos.contains(&comp[0]));
        // Simplified rules per atom: literals as (atom in comp | node, negated).
        let mut simplified: Vec<Vec<Vec<(bool, u32, bool)>>> = Vec::new();
        let mut outside_dynamic = false;
        for &a in comp {
            let mut rs = Vec::new();
            let mut always = false;
            for &ri in &rules_of[a as usize] {
                let r = &self.gp.rules[ri];
                let mut lits = Vec::new();
                let mut dead = false;
                for (&x, neg) in r
                    .pos
                    .iter()
                    .map(|x| (x, false))
                    .chain(r.neg.iter().map(|x| (x, true)))
                {
                    if recursive && in_comp(x) {
                        if neg {
                            return Err(PropnetError::Rules(format!(
                                "ground atom {} depends on itself through 'not'",
                                self.atom_text(a)
                            )));
                        }
                        lits.push((true, x, false));
                        continue;
                    }
                    match self.konst[x as usize] {
                        Some(v) => {
                            if v == neg {
                                dead = true;
                                break;
                            }
                        }
                        None => {
                            let node = self.node_of[x as usize];
                            if node == NO_NODE {
                                // Atoms without a rule are false (no node, no constant yet).
                                if !neg {
                                    dead = true;
                                    break;
                                }
                                continue;
                            }
                            outside_dynamic = true;
                            lits.push((false, node, neg));
                        }
                    }
                }
                if dead {
                    continue;
                }
                if lits.is_empty() {
                    always = true;
                }
                rs.push(lits);
            }
            if always {
                rs = vec![Vec::new()];
            }
            simplified.push(rs);
        }
        if !recursive {
            let a = comp[0];
            let rs = &simplified[0];
            if rs.is_empty() {
                self.konst[a as usize] = Some(false);
            } else if rs.len() == 1 && rs[0].is_empty() {
                self.konst[a as usize] = Some(true);
            } else {
                let first = self.gates.len() as u32;
                let node = self.atom_gate(rs)?;
                self.node_of[a as usize] = node;
                self.groups.push((first, self.gates.len() as u32, false));
            }
            return Ok(());
        }
        if !outside_dynamic {
            // A constant component: its least fixpoint, now.
            let mut val = vec![false; comp.len()];
            loop {
                let mut changed = false;
                for (i, rs) in simplified.iter().enumerate() {
                    if val[i] {
                        continue;
                    }
                    let v = rs.iter().any(|lits| {
                        lits.iter()
                            .all(|&(_, x, _)| val[comp_pos[x as usize] as usize])
                    });
                    if v {
                        val[i] = true;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
            for (i, &a) in comp.iter().enumerate() {
                self.konst[a as usize] = Some(val[i]);
            }
            return Ok(());
        }
        // A dynamic recursive component: every atom gets a node first, so the
        // gates can refer to each other; the loop runs over all of them.
        let first = self.gates.len() as u32;
        for &a in comp {
            // Placeholder, filled in below.
            self.node_of[a as usize] = self.push_gate(false, &[])?;
        }
        for (i, &a) in comp.iter().enumerate() {
            let node = self.node_of[a as usize];
            let lits = self.rule_lits(&simplified[i])?;
            let start = self.lits.len() as u32;
            self.lits.extend_from_slice(&lits);
            self.gates[node as usize] = Gate {
                and: false,
                start,
                end: self.lits.len() as u32,
            };
        }
        let end = self.gates.len() as u32;
        // Moves reach every node of the loop if they reach one.
        let mv = (first..end).any(|n| {
            let g = self.gates[n as usize];
            self.lits[g.start as usize..g.end as usize]
                .iter()
                .any(|&l| self.is_move[(l >> 1) as usize])
        });
        for n in first..end {
            self.is_move[n as usize] = mv;
        }
        self.groups.push((first, end, true));
        Ok(())
    }

    /// The OR inputs for an atom's rules: each rule's literal, or an AND node.
    fn rule_lits(&mut self, rs: &[Vec<(bool, u32, bool)>]) -> Result<Vec<u32>, PropnetError> {
        let mut out = Vec::new();
        for lits in rs {
            let enc: Vec<u32> = lits
                .iter()
                .map(|&(in_comp, x, neg)| {
                    let node = if in_comp { self.node_of[x as usize] } else { x };
                    node << 1 | neg as u32
                })
                .collect();
            if enc.len() == 1 {
                out.push(enc[0]);
            } else if enc.is_empty() {
                out.push(TRUE << 1);
            } else {
                out.push(self.push_gate(true, &enc)? << 1);
            }
        }
        Ok(out)
    }

    /// The node of a non-recursive atom with rules `rs`.
    fn atom_gate(&mut self, rs: &[Vec<(bool, u32, bool)>]) -> Result<u32, PropnetError> {
        if rs.len() == 1 {
            let enc: Vec<u32> = rs[0]
                .iter()
                .map(|&(_, x, neg)| x << 1 | neg as u32)
                .collect();
            return self.push_gate(true, &enc);
        }
        let lits = self.rule_lits(rs)?;
        self.push_gate(false, &lits)
    }

    fn atom_text(&self, a: AtomId) -> String {
        crate::gdl::print::term_to_string(
            &self.gp.pool.to_term(self.gp.atoms[a as usize]),
            &self.game.symbols,
        )
    }

    /// The node for atom `a`: its own, or a constant node.
    fn out_node(&self, a: AtomId) -> u32 {
        match self.konst[a as usize] {
            Some(true) => TRUE,
            Some(false) => FALSE,
            None if self.node_of[a as usize] == NO_NODE => FALSE,
            None => self.node_of[a as usize],
        }
    }

    fn finish(mut self) -> Result<Propnet, PropnetError> {
        let roles: Vec<Option<TermId>> = self
            .game
            .roles
            .iter()
            .map(|r| self.gp.pool.find_term(r))
            .collect();
        let role_of = |t: TermId| roles.iter().position(|&r| r == Some(t));
        let nroles = roles.len();
        let mut legal = vec![Vec::new(); nroles];
        let mut goals = vec![Vec::new(); nroles];
        let mut next = vec![FALSE; self.fluent_terms.len()];
        let mut terminal = FALSE;
        let mut init = vec![0u8; self.fluent_terms.len()];
        for a in 0..self.gp.atoms.len() {
            let t = self.gp.atoms[a];
            let f = self.gp.pool.functor(t);
            let args = if self.gp.pool.is_const(t) {
                Vec::new()
            } else {
                self.gp.pool.args(t).to_vec()
            };
            let node = self.out_node(a as AtomId);
            let state_only = |what: &str, s: &Self| {
                if s.is_move[node as usize] {
                    Err(PropnetError::Rules(format!(
                        "{} depends on 'does' ({what})",
                        s.atom_text(a as AtomId)
                    )))
                } else {
                    Ok(())
                }
            };
            match (f, args.len()) {
                (kw::LEGAL, 2) => {
                    if let Some(r) = role_of(args[0]) {
                        state_only("legal", &self)?;
                        let m = self.move_id(args[1]);
                        legal[r].push((node, m));
                    }
                }
                (kw::NEXT, 1) => {
                    let i = self.fluent_of[&args[0]];
                    next[i as usize] = node;
                }
                (kw::TERMINAL, 0) => {
                    state_only("terminal", &self)?;
                    terminal = node;
                }
                (kw::GOAL, 2) => {
                    let r = role_of(args[0]);
                    let v = self
                        .gp
                        .pool
                        .is_const(args[1])
                        .then(|| {
                            self.game
                                .symbols
                                .name(self.gp.pool.functor(args[1]))
                                .parse::<u8>()
                                .ok()
                        })
                        .flatten()
                        .filter(|&v| v <= 100);
                    if let (Some(r), Some(v)) = (r, v) {
                        state_only("goal", &self)?;
                        goals[r].push((node, v));
                    }
                }
                (kw::INIT, 1) => {
                    if node != TRUE && node != FALSE {
                        return Err(PropnetError::Rules(format!(
                            "{} depends on the state",
                            self.atom_text(a as AtomId)
                        )));
                    }
                    init[self.fluent_of[&args[0]] as usize] = (node == TRUE) as u8;
                }
                _ => {}
            }
        }
        for g in goals.iter_mut() {
            g.sort_by_key(|&(_, v)| v);
        }
        // What each output needs, backwards through the gates.
        let n = self.gates.len();
        let mut core = vec![false; n];
        let mut stack: Vec<u32> = legal
            .iter()
            .flatten()
            .map(|&(n, _)| n)
            .chain(next.iter().copied())
            .chain([terminal])
            .collect();
        self.mark(&mut core, &mut stack);
        let mut for_goals = vec![false; n];
        let mut stack: Vec<u32> = goals.iter().flatten().map(|&(n, _)| n).collect();
        self.mark(&mut for_goals, &mut stack);

        let (mut state_prog, mut goal_prog, mut move_prog) = (Vec::new(), Vec::new(), Vec::new());
        for &(s, e, rec) in &self.groups {
            let items: Vec<(u32, Item)> = if rec {
                vec![(s, Item::Loop(s, e))]
            } else {
                (s..e).map(|n| (n, Item::Node(n))).collect()
            };
            for (n, item) in items {
                let (c, g) = if rec {
                    (
                        (s..e).any(|x| core[x as usize]),
                        (s..e).any(|x| for_goals[x as usize]),
                    )
                } else {
                    (core[n as usize], for_goals[n as usize])
                };
                if self.is_move[n as usize] {
                    if c {
                        move_prog.push(item);
                    }
                } else if c {
                    state_prog.push(item);
                } else if g {
                    goal_prog.push(item);
                }
            }
        }
        let count = |p: &[Item]| {
            p.iter()
                .map(|i| match *i {
                    Item::Node(_) => 1,
                    Item::Loop(s, e) => (e - s) as usize,
                })
                .sum()
        };
        let nm = self.move_terms.len();
        let mut does_node = vec![FALSE; nroles * nm];
        for a in 0..self.gp.atoms.len() {
            let t = self.gp.atoms[a];
            if self.gp.pool.is_const(t)
                || self.gp.pool.functor(t) != kw::DOES
                || self.gp.pool.args(t).len() != 2
                || self.node_of[a] == NO_NODE
            {
                continue;
            }
            let args = self.gp.pool.args(t);
            if let Some(r) = role_of(args[0]) {
                does_node[r * nm + self.move_of[&args[1]] as usize] = self.node_of[a];
            }
        }
        let stats = NetStats {
            ground_atoms: self.gp.atoms.len(),
            ground_rules: self.gp.rules.len(),
            fluents: self.fluent_terms.len(),
            moves: nm,
            nodes: self.gates.len(),
            edges: self.lits.len(),
            state_nodes: count(&state_prog),
            move_nodes: count(&move_prog),
            goal_nodes: count(&goal_prog),
            ground_s: 0.0,
            compile_s: 0.0,
        };
        let mut net = Propnet {
            game: self.game,
            pool: self.gp.pool,
            fluent_terms: self.fluent_terms,
            fluent_of: self.fluent_of,
            move_terms: self.move_terms,
            move_of: self.move_of,
            does_node,
            gates: self.gates,
            lits: self.lits,
            state_prog,
            goal_prog,
            move_prog,
            legal,
            next,
            terminal,
            goals,
            init: PropnetState(Box::new([])),
            scratch: Mutex::new(Vec::new()),
            stats,
        };
        net.init = net.pack(&init);
        Ok(net)
    }

    fn mark(&self, seen: &mut [bool], stack: &mut Vec<u32>) {
        while let Some(n) = stack.pop() {
            if seen[n as usize] {
                continue;
            }
            seen[n as usize] = true;
            let g = self.gates[n as usize];
            for &l in &self.lits[g.start as usize..g.end as usize] {
                stack.push(l >> 1);
            }
        }
    }
}

/// Strongly connected components of a graph given as `deps[v]` (v depends on
/// each listed node), dependencies first. Iterative: ground graphs are deep.
fn tarjan(deps: &[Vec<AtomId>]) -> Vec<Vec<AtomId>> {
    let n = deps.len();
    let mut index = vec![u32::MAX; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut next_index = 0u32;
    let mut call: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if index[root] != u32::MAX {
            continue;
        }
        call.push((root, 0));
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut i)) = call.last_mut() {
            if *i < deps[v].len() {
                let w = deps[v][*i] as usize;
                *i += 1;
                if index[w] == u32::MAX {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    loop {
                        let w = stack.pop().expect("v is on the stack");
                        on_stack[w] = false;
                        comp.push(w as AtomId);
                        if w == v {
                            break;
                        }
                    }
                    out.push(comp);
                }
            }
        }
    }
    out
}
