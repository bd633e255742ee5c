//! Abstract state spaces: a single-player game projected onto a set of its
//! fluents (the *kept* ones), its transitions computed from the ground rules
//! in three-valued logic.
//!
//! An abstract state says which kept fluents hold; every other fluent is
//! *unknown*. The rules are evaluated over both bounds at once: an atom is
//! certainly true when its rules derive it with the unknown fluents false
//! and the negated atoms certainly false, and possibly true when they derive
//! it with the unknown fluents true and the negated atoms not certainly true
//! (Kleene's strong logic, stratum by stratum, so negation only reads atoms
//! whose bounds are final). A move is possible where its `legal` atom is
//! possibly true; a kept fluent whose `next` is neither certainly true nor
//! certainly false is taken both ways; a state is a goal where `terminal` and
//! `(goal R 100)` are possibly true, and has no successor where `terminal` is
//! certainly true. Every concrete state's projection then evaluates each
//! atom within its bounds, so every concrete transition projects onto an
//! abstract one and every concrete goal onto an abstract goal: a distance in
//! the abstract space never exceeds the concrete one (see [`super::pattern`]).

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use hashbrown::{HashMap, HashSet};

use crate::gdl::{kw, Game};
use crate::reasoner::ground::{AtomId, GroundProgram};

pub use super::space::{Key, Space};

/// The most fluents an abstraction keeps (the bits of a [`Key`]).
pub const MAX_KEPT: usize = 256;

/// The error of an exploration the solve's stop flag ended (the others say
/// what outgrew its bound).
pub const STOPPED: &str = "stopped";

/// The most kept fluents whose next value an abstract move may leave
/// unknown (each doubles its successors).
const MAX_UNKNOWN: usize = 6;

pub fn set(key: &mut Key, bit: usize) {
    key[bit / 64] |= 1 << (bit % 64);
}

pub fn get(key: &Key, bit: usize) -> bool {
    key[bit / 64] >> (bit % 64) & 1 == 1
}

/// Whether `a` and `b` differ on a bit of `mask`.
pub fn differ(a: &Key, b: &Key, mask: &Key) -> bool {
    (0..4).any(|w| (a[w] ^ b[w]) & mask[w] != 0)
}

/// Rule evaluations spent, against a bound, and the solve's stop flag.
pub struct Work<'a> {
    pub spent: u64,
    pub limit: u64,
    pub stop: &'a AtomicBool,
}

impl Work<'_> {
    fn spend(&mut self, n: u64) -> Result<(), String> {
        self.spent += n;
        if self.spent > self.limit {
            return Err("the pattern databases outgrew their work bound".into());
        }
        Ok(())
    }
}

/// What an atom of the ground program is, for the abstraction.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    True,
    Does,
    Other,
}

/// The ground rules of a single-player game as the abstractions read them.
pub struct Rules<'a> {
    g: &'a GroundProgram,
    kind: Vec<Kind>,
    rules_of: Vec<Vec<usize>>,
    /// The `next` atom of each fluent's `true` atom, where the rules have one.
    next_of: HashMap<AtomId, AtomId>,
    /// The role's moves: each `does` atom with its `legal` atom.
    moves: Vec<(AtomId, AtomId)>,
    goal: AtomId,
    terminal: Option<AtomId>,
    /// A clock was taken out of the rules (see
    /// [`super::breadth::without_clock`]): it could end the game in any
    /// state, so a goal state need not be terminal by the rules left.
    clocked: bool,
}

impl<'a> Rules<'a> {
    /// The rules of `game` (one role) in its ground program `g`, `clocked`
    /// when a clock was taken out of them; `None` when goal 100 is not
    /// derivable at all or the game has several roles.
    pub fn new(game: &Game, g: &'a GroundProgram, clocked: bool) -> Option<Rules<'a>> {
        if game.roles.len() != 1 {
            return None;
        }
        let goal = g.first_role_goal100(game)?;
        let n = g.atoms.len();
        let kind: Vec<Kind> = g
            .atoms
            .iter()
            .map(|&t| match (g.pool.functor(t), g.pool.args(t).len()) {
                (kw::TRUE, 1) => Kind::True,
                (kw::DOES, 2) => Kind::Does,
                _ => Kind::Other,
            })
            .collect();
        let rules_of = g.rules_by_head();
        let mut next_of = HashMap::new();
        let mut terminal = None;
        for x in 0..n as AtomId {
            let t = g.atoms[x as usize];
            match (g.pool.functor(t), g.pool.args(t).len()) {
                (kw::NEXT, 1) => {
                    let f = g.pool.args(t)[0];
                    if let Some(tx) = g.pool.find(kw::TRUE, &[f]).and_then(|id| g.atom(id)) {
                        next_of.insert(tx, x);
                    }
                }
                (kw::TERMINAL, 0) => terminal = Some(x),
                _ => {}
            }
        }
        let legal_of = g.legal_of_does();
        let moves = (0..n as AtomId)
            .filter(|&x| kind[x as usize] == Kind::Does)
            .filter_map(|x| legal_of[x as usize].map(|l| (x, l)))
            .collect();
        Some(Rules {
            g,
            kind,
            rules_of,
            next_of,
            moves,
            goal,
            terminal,
            clocked,
        })
    }

    /// Every fluent (its `true` atom), in atom order.
    pub fn fluents(&self) -> Vec<AtomId> {
        (0..self.kind.len() as AtomId)
            .filter(|&x| self.kind[x as usize] == Kind::True)
            .collect()
    }

    /// The fluents the `legal` atoms depend on.
    pub fn read_by_legal(&self) -> HashSet<AtomId> {
        let roots: Vec<AtomId> = self.moves.iter().map(|&(_, l)| l).collect();
        self.fluents_under(&roots)
    }

    /// The fluents goal 100 depends on.
    pub fn read_by_goal(&self) -> HashSet<AtomId> {
        self.fluents_under(&[self.goal])
    }

    /// The fluents the atoms `roots` depend on through the rules.
    fn fluents_under(&self, roots: &[AtomId]) -> HashSet<AtomId> {
        let mut seen: HashSet<AtomId> = HashSet::new();
        let mut found = HashSet::new();
        let mut stack = roots.to_vec();
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            if self.kind[x as usize] == Kind::True {
                found.insert(x);
                continue;
            }
            for &i in &self.rules_of[x as usize] {
                let r = &self.g.rules[i];
                stack.extend(r.pos.iter().chain(&r.neg).copied());
            }
        }
        found
    }

    /// The ground program.
    pub fn program(&self) -> &GroundProgram {
        self.g
    }
}

/// A rule over the local numbering of an abstraction's atoms: its head and
/// the ranges of its positive and negative body in `lits`.
struct LocalRule {
    head: u32,
    pos: Range<u32>,
    neg: Range<u32>,
}

/// A strongly connected component of the rules' dependencies, evaluated
/// together; `layer` says when (see [`Layer`]).
struct Scc {
    atoms: Range<u32>,
    /// The rules evaluated every time; those with a trigger are evaluated
    /// only when it is possibly true (see [`Abstraction::triggered`]).
    rules: Vec<u32>,
    recursive: bool,
    layer: Layer,
}

/// Rules waiting for their component's evaluation, by component: those
/// whose trigger was found possibly true. Two levels: a state's (its kept
/// fluents and derived atoms) and a move's.
#[derive(Default)]
struct Pending {
    by_scc: Vec<Vec<u32>>,
    /// The components with a nonempty list.
    dirty: Vec<u32>,
}

impl Pending {
    fn clear(&mut self) {
        for &c in &self.dirty {
            self.by_scc[c as usize].clear();
        }
        self.dirty.clear();
    }

    fn push(&mut self, scc: u32, rule: u32) {
        let list = &mut self.by_scc[scc as usize];
        if list.is_empty() {
            self.dirty.push(scc);
        }
        list.push(rule);
    }
}

/// What an atom's value depends on: nothing (evaluated once), the state, or
/// the move too.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Layer {
    Static,
    State,
    Move,
}

/// A game projected onto its kept fluents.
pub struct Abstraction {
    /// Bit `i`: the `true` atom of the `i`-th kept fluent.
    pub kept: Vec<AtomId>,
    rules: Vec<LocalRule>,
    lits: Vec<u32>,
    /// The atoms of each component, in evaluation order.
    order: Vec<u32>,
    sccs: Vec<Scc>,
    /// The components of each layer, in evaluation order.
    by_layer: [Vec<u32>; 3],
    /// By local atom: the rules it triggers (see [`Abstraction::new`]).
    triggered: Vec<Vec<u32>>,
    /// Each rule's component.
    scc_of_rule: Vec<u32>,
    /// The rules triggered by the state, and by the move.
    pending: [Pending; 2],
    /// Certainly true, possibly true (by local atom).
    lo: Vec<bool>,
    hi: Vec<bool>,
    /// Each fluent input: its local atom and its bit when kept.
    fluents: Vec<(u32, Option<usize>)>,
    /// Each move: its local `does` atom (if any rule reads it) and `legal`.
    moves: Vec<(Option<u32>, u32)>,
    /// Each kept fluent's local `next` atom, where it has one.
    next: Vec<Option<u32>>,
    goal: u32,
    terminal: Option<u32>,
    clocked: bool,
}

/// An abstract state's successors were computed: whether it may be a goal.
pub struct Expanded {
    pub goal: bool,
}

impl Abstraction {
    /// The projection of `rules` onto the fluents `kept` (at most
    /// [`MAX_KEPT`]).
    pub fn new(rules: &Rules, kept: Vec<AtomId>) -> Result<Abstraction, String> {
        if kept.len() > MAX_KEPT {
            return Err(format!("over {MAX_KEPT} fluents kept"));
        }
        let g = rules.g;
        // The cone: the atoms the legal, goal, terminal and kept next atoms
        // depend on, each numbered locally.
        let mut roots: Vec<AtomId> = rules.moves.iter().map(|&(_, l)| l).collect();
        roots.push(rules.goal);
        roots.extend(rules.terminal);
        roots.extend(kept.iter().filter_map(|f| rules.next_of.get(f).copied()));
        let mut local: HashMap<AtomId, u32> = HashMap::new();
        let mut atoms: Vec<AtomId> = Vec::new();
        let mut stack = roots.clone();
        while let Some(x) = stack.pop() {
            if local.contains_key(&x) {
                continue;
            }
            local.insert(x, atoms.len() as u32);
            atoms.push(x);
            if rules.kind[x as usize] != Kind::Other {
                continue;
            }
            for &i in &rules.rules_of[x as usize] {
                let r = &g.rules[i];
                stack.extend(r.pos.iter().chain(&r.neg).copied());
            }
        }
        let n = atoms.len();
        let mut local_rules = Vec::new();
        let mut lits = Vec::new();
        let mut rules_of: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (l, &x) in atoms.iter().enumerate() {
            if rules.kind[x as usize] != Kind::Other {
                continue;
            }
            for &i in &rules.rules_of[x as usize] {
                let r = &g.rules[i];
                let p0 = lits.len() as u32;
                lits.extend(r.pos.iter().map(|b| local[b]));
                let n0 = lits.len() as u32;
                lits.extend(r.neg.iter().map(|b| local[b]));
                rules_of[l].push(local_rules.len() as u32);
                local_rules.push(LocalRule {
                    head: l as u32,
                    pos: p0..n0,
                    neg: n0..lits.len() as u32,
                });
            }
        }
        let (order, comps) = components(n, &rules_of, &local_rules, &lits);
        let mut layer_of = vec![Layer::Static; n];
        for (l, &x) in atoms.iter().enumerate() {
            layer_of[l] = match rules.kind[x as usize] {
                Kind::True => Layer::State,
                Kind::Does => Layer::Move,
                Kind::Other => Layer::Static,
            };
        }
        let mut comp_of = vec![0usize; n];
        for (c, r) in comps.iter().enumerate() {
            for &a in &order[r.start as usize..r.end as usize] {
                comp_of[a as usize] = c;
            }
        }
        let bit_of: HashMap<AtomId, usize> =
            kept.iter().enumerate().map(|(i, &f)| (f, i)).collect();
        let mut sccs = Vec::with_capacity(comps.len());
        for (c, atoms_range) in comps.into_iter().enumerate() {
            let members = &order[atoms_range.start as usize..atoms_range.end as usize];
            if members
                .iter()
                .any(|&a| rules.kind[atoms[a as usize] as usize] != Kind::Other)
            {
                continue; // an input: set per state and move, never derived
            }
            let rs: Vec<u32> = members
                .iter()
                .flat_map(|&a| rules_of[a as usize].iter().copied())
                .collect();
            let mut layer = members
                .iter()
                .map(|&a| layer_of[a as usize])
                .max()
                .unwrap_or(Layer::Static);
            let mut recursive = members.len() > 1;
            for &r in &rs {
                let rule = &local_rules[r as usize];
                for &b in &lits[rule.pos.start as usize..rule.neg.end as usize] {
                    layer = layer.max(layer_of[b as usize]);
                    recursive |= b == rule.head;
                }
                for &b in &lits[rule.neg.start as usize..rule.neg.end as usize] {
                    if comp_of[b as usize] == c {
                        return Err("the rules negate an atom within its own recursion".into());
                    }
                }
            }
            for &a in members {
                layer_of[a as usize] = layer;
            }
            sccs.push(Scc {
                atoms: atoms_range,
                rules: rs,
                recursive,
                layer,
            });
        }
        // Each rule's trigger: a positive body atom of another component
        // that is often false, so that the rule is evaluated only when it is
        // possibly true. Why: most ground rules cannot fire in a given state
        // and move (the fifteen-puzzle's `next` rules name every cell the
        // blank might move to, and one is the target), and visiting each
        // was the pattern databases' whole cost. Best a move's atom (one
        // move at a time), then a kept fluent, then an atom derived from the
        // state; never an unknown fluent (always possibly true) or a static
        // atom (final before any state).
        let rank = |b: u32| -> u8 {
            let x = atoms[b as usize];
            match rules.kind[x as usize] {
                Kind::Does => 3,
                Kind::True if bit_of.contains_key(&x) => 2,
                Kind::True => 0,
                Kind::Other => match layer_of[b as usize] {
                    Layer::Move => 3,
                    Layer::State => 1,
                    Layer::Static => 0,
                },
            }
        };
        let mut triggered: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut scc_of_rule = vec![u32::MAX; local_rules.len()];
        for (i, scc) in sccs.iter_mut().enumerate() {
            let c = comp_of[order[scc.atoms.start as usize] as usize];
            scc.rules.retain(|&r| {
                scc_of_rule[r as usize] = i as u32;
                let rule = &local_rules[r as usize];
                let trigger = lits[rule.pos.start as usize..rule.pos.end as usize]
                    .iter()
                    .copied()
                    .filter(|&b| comp_of[b as usize] != c && rank(b) > 0)
                    .max_by_key(|&b| rank(b));
                match trigger {
                    Some(b) => {
                        triggered[b as usize].push(r);
                        false
                    }
                    None => true,
                }
            });
        }
        let fluents = atoms
            .iter()
            .enumerate()
            .filter(|(_, &x)| rules.kind[x as usize] == Kind::True)
            .map(|(l, x)| (l as u32, bit_of.get(x).copied()))
            .collect();
        let moves = rules
            .moves
            .iter()
            .map(|&(d, l)| (local.get(&d).copied(), local[&l]))
            .collect();
        let next = kept
            .iter()
            .map(|f| rules.next_of.get(f).map(|x| local[x]))
            .collect();
        let mut by_layer: [Vec<u32>; 3] = Default::default();
        for (i, scc) in sccs.iter().enumerate() {
            by_layer[scc.layer as usize].push(i as u32);
        }
        let pending = || Pending {
            by_scc: vec![Vec::new(); sccs.len()],
            dirty: Vec::new(),
        };
        let mut a = Abstraction {
            by_layer,
            triggered,
            scc_of_rule,
            pending: [pending(), pending()],
            kept,
            rules: local_rules,
            lits,
            order,
            sccs,
            lo: vec![false; n],
            hi: vec![false; n],
            fluents,
            moves,
            next,
            goal: local[&rules.goal],
            terminal: rules.terminal.map(|t| local[&t]),
            clocked: rules.clocked,
        };
        a.evaluate(Layer::Static);
        Ok(a)
    }

    /// The abstract state of a concrete one, from the `true` atoms that
    /// hold in it.
    pub fn project(&self, holding: &HashSet<AtomId>) -> Key {
        let mut key = [0; 4];
        for (i, f) in self.kept.iter().enumerate() {
            if holding.contains(f) {
                set(&mut key, i);
            }
        }
        key
    }

    /// Evaluates the components of `layer`: each one's own rules and those
    /// its triggers brought (by the state, and by the move for the move's
    /// layer); what it finds possibly true triggers the rules of later
    /// components, at the layer's level. Returns the rules evaluated.
    fn evaluate(&mut self, layer: Layer) -> u64 {
        let level = usize::from(layer == Layer::Move);
        let mut work = 0;
        for i in 0..self.by_layer[layer as usize].len() {
            let s = self.by_layer[layer as usize][i] as usize;
            let scc = &self.sccs[s];
            for &a in &self.order[scc.atoms.start as usize..scc.atoms.end as usize] {
                self.lo[a as usize] = false;
                self.hi[a as usize] = false;
            }
            loop {
                let mut changed = false;
                let [by_state, by_move] = &self.pending;
                let rules = scc
                    .rules
                    .iter()
                    .chain(&by_state.by_scc[s])
                    .chain(&by_move.by_scc[s]);
                for &r in rules {
                    let rule = &self.rules[r as usize];
                    let h = rule.head as usize;
                    if self.lo[h] {
                        continue;
                    }
                    work += 1;
                    let pos = &self.lits[rule.pos.start as usize..rule.pos.end as usize];
                    let neg = &self.lits[rule.neg.start as usize..rule.neg.end as usize];
                    if !self.hi[h]
                        && pos.iter().all(|&b| self.hi[b as usize])
                        && neg.iter().all(|&b| !self.lo[b as usize])
                    {
                        self.hi[h] = true;
                        changed = true;
                    }
                    if pos.iter().all(|&b| self.lo[b as usize])
                        && neg.iter().all(|&b| !self.hi[b as usize])
                    {
                        self.lo[h] = true;
                        changed = true;
                    }
                }
                if !changed || !scc.recursive {
                    break;
                }
            }
            for k in scc.atoms.start..scc.atoms.end {
                let a = self.order[k as usize];
                if self.hi[a as usize] {
                    self.trigger(a, level);
                }
            }
        }
        work
    }

    /// Queues the rules atom `a` (possibly true) triggers, at `level` (0:
    /// the state's, 1: the move's).
    fn trigger(&mut self, a: u32, level: usize) {
        for &r in &self.triggered[a as usize] {
            self.pending[level].push(self.scc_of_rule[r as usize], r);
        }
    }

    /// The successors of abstract state `key` into `out`.
    pub fn expand(
        &mut self,
        key: &Key,
        out: &mut Vec<Key>,
        work: &mut Work,
    ) -> Result<Expanded, String> {
        self.pending[0].clear();
        self.pending[1].clear();
        for i in 0..self.fluents.len() {
            let (l, bit) = self.fluents[i];
            let v = bit.map(|b| get(key, b));
            self.lo[l as usize] = v == Some(true);
            self.hi[l as usize] = v != Some(false);
            if v == Some(true) {
                self.trigger(l, 0);
            }
        }
        let spent = self.evaluate(Layer::State);
        work.spend(spent + 1)?;
        let may_end = self.clocked || self.terminal.is_some_and(|t| self.hi[t as usize]);
        let expanded = Expanded {
            goal: may_end && self.hi[self.goal as usize],
        };
        if self.terminal.is_some_and(|t| self.lo[t as usize]) {
            return Ok(expanded);
        }
        for m in 0..self.moves.len() {
            let (does, legal) = self.moves[m];
            if !self.hi[legal as usize] {
                continue;
            }
            for &(d, _) in &self.moves {
                if let Some(d) = d {
                    self.lo[d as usize] = false;
                    self.hi[d as usize] = false;
                }
            }
            self.pending[1].clear();
            if let Some(d) = does {
                self.lo[d as usize] = true;
                self.hi[d as usize] = true;
                self.trigger(d, 1);
            }
            let spent = self.evaluate(Layer::Move);
            work.spend(spent)?;
            let mut base: Key = [0; 4];
            let mut unknown = Vec::new();
            for (bit, next) in self.next.iter().enumerate() {
                let Some(x) = next else { continue };
                if self.lo[*x as usize] {
                    set(&mut base, bit);
                } else if self.hi[*x as usize] {
                    unknown.push(bit);
                }
            }
            if unknown.len() > MAX_UNKNOWN {
                return Err(format!(
                    "a move leaves over {MAX_UNKNOWN} kept fluents unknown"
                ));
            }
            for choice in 0..1u32 << unknown.len() {
                let mut k = base;
                for (j, &bit) in unknown.iter().enumerate() {
                    if choice >> j & 1 == 1 {
                        set(&mut k, bit);
                    }
                }
                out.push(k);
            }
        }
        Ok(expanded)
    }

    /// The abstract states reachable from `init`, breadth-first, with their
    /// transitions; an error past `max_states` states or the work bound.
    pub fn explore(
        &mut self,
        init: Key,
        max_states: usize,
        work: &mut Work,
    ) -> Result<Space, String> {
        let mut space = Space {
            keys: vec![init],
            index: HashMap::from([(init, 0)]),
            edges: Vec::new(),
            goal: Vec::new(),
        };
        let mut out = Vec::new();
        let mut i = 0;
        while i < space.keys.len() {
            if i.is_multiple_of(256) && work.stop.load(Ordering::Relaxed) {
                return Err(STOPPED.into());
            }
            let key = space.keys[i];
            out.clear();
            let e = self.expand(&key, &mut out, work)?;
            space.goal.push(e.goal);
            for &k in &out {
                let j = match space.index.get(&k) {
                    Some(&j) => j,
                    None => {
                        if space.keys.len() >= max_states {
                            return Err(format!("an abstract space over {max_states} states"));
                        }
                        let j = space.keys.len() as u32;
                        space.keys.push(k);
                        space.index.insert(k, j);
                        j
                    }
                };
                space.edges.push((i as u32, j));
            }
            i += 1;
        }
        Ok(space)
    }
}

/// The strongly connected components of the local dependency graph (head
/// to body atoms), each after the components it depends on: the atoms in
/// that order, and each component's range of them.
fn components(
    n: usize,
    rules_of: &[Vec<u32>],
    rules: &[LocalRule],
    lits: &[u32],
) -> (Vec<u32>, Vec<Range<u32>>) {
    let succ: Vec<Vec<u32>> = (0..n)
        .map(|a| {
            rules_of[a]
                .iter()
                .flat_map(|&r| {
                    let rule = &rules[r as usize];
                    lits[rule.pos.start as usize..rule.neg.end as usize]
                        .iter()
                        .copied()
                })
                .collect()
        })
        .collect();
    let comps =
        crate::gdl::graph::strongly_connected(n, |v, i| succ[v].get(i).map(|&w| w as usize));
    let mut order = Vec::with_capacity(n);
    let mut ranges = Vec::with_capacity(comps.len());
    for c in comps {
        let start = order.len() as u32;
        order.extend(c.into_iter().map(|a| a as u32));
        ranges.push(start..order.len() as u32);
    }
    (order, ranges)
}

#[cfg(test)]
mod tests {
    use super::{Abstraction, Rules, Work};
    use crate::gdl::{parse, Game};
    use crate::reasoner::ground::{ground, AtomId, GroundProgram, Limits};
    use std::sync::atomic::AtomicBool;

    /// Copying lamp b onto lamp a wins; b goes out when a is cleared.
    const LAMPS: &str = "(role p) (init (lit b))
        (<= (legal p copy) (true (lit b)))
        (<= (legal p clear) (true (lit a)))
        (<= (next (lit a)) (does p copy) (true (lit b)))
        (<= (next (lit b)) (true (lit b)) (not (does p clear)))
        (<= terminal (true (lit a)))
        (<= (goal p 100) (true (lit a)))
        (<= (goal p 0) (not (true (lit a))))";

    fn lamps() -> (Game, GroundProgram) {
        let game = Game::new(parse(LAMPS, "t.kif").unwrap()).unwrap();
        let g = ground(&game, &Limits::default()).unwrap();
        (game, g)
    }

    /// The `true` atom of the fluent printed as `name`.
    fn fluent(game: &Game, g: &GroundProgram, rules: &Rules, name: &str) -> AtomId {
        rules
            .fluents()
            .into_iter()
            .find(|&x| {
                let t = g.pool.to_term(g.atoms[x as usize]);
                crate::gdl::print::term_to_string(&t, &game.symbols) == format!("(true {name})")
            })
            .unwrap_or_else(|| panic!("no fluent {name}"))
    }

    #[test]
    fn an_unknown_fluent_leaves_the_kept_one_both_ways_and_a_known_one_decides() {
        let (game, g) = lamps();
        let rules = Rules::new(&game, &g, false).expect("goal 100 is derivable");
        let (a, b) = (
            fluent(&game, &g, &rules, "(lit a)"),
            fluent(&game, &g, &rules, "(lit b)"),
        );
        let stop = AtomicBool::new(false);
        let mut work = Work {
            spent: 0,
            limit: u64::MAX,
            stop: &stop,
        };
        // Lamp a alone: whether `copy` lights it depends on lamp b, unknown.
        let mut only_a = Abstraction::new(&rules, vec![a]).unwrap();
        let mut out = Vec::new();
        let e = only_a.expand(&[0; 4], &mut out, &mut work).unwrap();
        assert!(!e.goal);
        out.sort_unstable();
        assert_eq!(out, vec![[0; 4], [1, 0, 0, 0]]);
        // Lit, lamp a ends the game with goal 100: no successor.
        out.clear();
        assert!(
            only_a
                .expand(&[1, 0, 0, 0], &mut out, &mut work)
                .unwrap()
                .goal
        );
        assert!(out.is_empty());
        let space = only_a.explore([0; 4], 10, &mut work).unwrap();
        assert_eq!(space.keys.len(), 2);
        assert_eq!(space.distances(|_, _| true), vec![1, 0]);
        // Both lamps kept: `copy` from lamp b alone lights a and keeps b.
        let mut both = Abstraction::new(&rules, vec![a, b]).unwrap();
        let holding = [b].into_iter().collect();
        let init = both.project(&holding);
        out.clear();
        both.expand(&init, &mut out, &mut work).unwrap();
        assert_eq!(out, vec![[0b11, 0, 0, 0]]);
    }
}
