//! The reference engine: stratified bottom-up evaluation of the non-ground rules.
//!
//! Rules are compiled once into join plans (body literals ordered so that each
//! literal is as bound as possible, `not` and `distinct` as soon as their variables
//! are bound). Static relations are computed once when the prover is built. For a
//! state, the state-phase components run once and are cached; for a joint move,
//! only the move-phase components run on top. Components run in the order the
//! normal form gives (dependencies first), recursive ones to a fixpoint, so every
//! `not` sees a complete table.
//!
//! The prover is the oracle the faster engines are tested against: it favours
//! obvious correctness, and is fast enough to be used on games too large to ground.

use std::collections::HashMap;
use std::sync::Mutex;

use hashbrown::HashTable;
use std::hash::BuildHasher;

use super::pattern::{Pat, Resolved, UNBOUND};
use super::terms::{TermId, TermPool};
use super::{RoleIdx, StateMachine};
use crate::gdl::{kw, Game, Literal, Phase, Relation, Rule, Sym, Term};

type RelId = usize;

/// A state: the fluents that hold, as sorted term ids.
pub type ProverState = Vec<TermId>;

/// One part of an index key: the value found at `argpos` and then down `steps`
/// (functor, arity, child) in a row's terms, or only a check that the term there
/// has a given functor and arity.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct KeyLeaf {
    argpos: u16,
    steps: Vec<(Sym, u16, u16)>,
    /// `None`: the leaf's value is part of the key; `Some(f, n)`: only a filter.
    functor: Option<(Sym, u16)>,
}

type KeySpec = Vec<KeyLeaf>;

/// How a positive literal finds its candidate rows: an index over the parts of
/// its arguments that are known when the literal is reached in the join order.
#[derive(Clone, Debug)]
struct Access {
    spec: KeySpec,
    /// The patterns whose values make the key, one per value leaf of `spec`.
    parts: Vec<Pat>,
    /// The index slot in the table, assigned when the prover is built.
    slot: usize,
}

#[derive(Clone, Debug)]
enum Lit {
    Pos {
        rel: RelId,
        args: Vec<Pat>,
        access: Option<Access>,
    },
    Not {
        rel: RelId,
        args: Vec<Pat>,
    },
    Distinct(Pat, Pat),
}

#[derive(Clone, Debug)]
struct CRule {
    head: RelId,
    head_args: Vec<Pat>,
    body: Vec<Lit>,
    nvars: usize,
}

/// The facts of one relation: flattened tuples, a set for deduplication, and
/// per-argument indexes built on demand.
#[derive(Clone)]
struct Table {
    arity: usize,
    rows: Vec<TermId>,
    set: HashTable<u32>,
    /// Indexes by key spec: rows by key, covering the first `covered` rows.
    index: Vec<Index>,
    /// Rows that survive a new state (static) and a new move (static + state).
    static_len: usize,
    state_len: usize,
}

const INDEX_MIN_ROWS: usize = 12;

impl Table {
    fn new(arity: usize) -> Self {
        Table {
            arity,
            rows: Vec::new(),
            set: HashTable::new(),
            index: Vec::new(),
            static_len: 0,
            state_len: 0,
        }
    }

    fn len(&self) -> usize {
        // A proposition's rows are markers of no width.
        self.rows
            .len()
            .checked_div(self.arity)
            .unwrap_or(self.rows.len())
    }

    fn row(&self, i: usize) -> &[TermId] {
        &self.rows[i * self.arity..(i + 1) * self.arity]
    }

    fn hash(h: &hashbrown::DefaultHashBuilder, t: &[TermId]) -> u64 {
        h.hash_one(t)
    }

    fn contains(&self, h: &hashbrown::DefaultHashBuilder, t: &[TermId]) -> bool {
        if self.arity == 0 {
            return !self.rows.is_empty();
        }
        self.position(h, t).is_some()
    }

    /// The row number of a tuple (of a table of arity > 0).
    fn position(&self, h: &hashbrown::DefaultHashBuilder, t: &[TermId]) -> Option<usize> {
        let hv = Self::hash(h, t);
        self.set
            .find(hv, |&r| self.row(r as usize) == t)
            .map(|&r| r as usize)
    }

    /// Adds a tuple; false when it was there already.
    fn insert(&mut self, h: &hashbrown::DefaultHashBuilder, t: &[TermId]) -> bool {
        if self.arity == 0 {
            if self.rows.is_empty() {
                // A proposition is stored as one row of no width: use a marker.
                self.rows.push(0);
                return true;
            }
            return false;
        }
        let hv = Self::hash(h, t);
        let arity = self.arity;
        if self
            .set
            .find(hv, |&r| {
                &self.rows[r as usize * arity..(r as usize + 1) * arity] == t
            })
            .is_some()
        {
            return false;
        }
        let r = self.len() as u32;
        self.rows.extend_from_slice(t);
        let rows = &self.rows;
        self.set.insert_unique(hv, r, |&r| {
            Self::hash(h, &rows[r as usize * arity..(r as usize + 1) * arity])
        });
        true
    }

    fn truncate(&mut self, h: &hashbrown::DefaultHashBuilder, len: usize) {
        if self.arity == 0 {
            self.rows.truncate(len);
            return;
        }
        let n = self.len();
        if len >= n {
            return;
        }
        for r in len..n {
            let hv = Self::hash(h, self.row(r));
            if let Ok(e) = self.set.find_entry(hv, |&x| x as usize == r) {
                e.remove();
            }
        }
        self.rows.truncate(len * self.arity);
        for ix in self.index.iter_mut() {
            if ix.covered > len {
                // Buckets keep their allocation: the same keys come back with the next state.
                for rows in ix.map.values_mut() {
                    let keep = rows.partition_point(|&r| (r as usize) < len);
                    rows.truncate(keep);
                }
                ix.covered = len;
            }
        }
    }

    /// Rows whose key under index `slot` is `key` (the index is extended here).
    fn lookup(&mut self, pool: &TermPool, slot: usize, key: &[TermId]) -> &[u32] {
        let n = self.len();
        let arity = self.arity;
        let ix = &mut self.index[slot];
        let mut buf = Vec::with_capacity(key.len());
        while ix.covered < n {
            let r = ix.covered;
            buf.clear();
            if extract_key(
                pool,
                &ix.spec,
                &self.rows[r * arity..(r + 1) * arity],
                &mut buf,
            ) {
                match ix.map.get_mut(buf.as_slice()) {
                    Some(rows) => rows.push(r as u32),
                    None => {
                        ix.map
                            .insert(buf.clone().into_boxed_slice(), vec![r as u32]);
                    }
                }
            }
            ix.covered += 1;
        }
        ix.map.get(key).map(Vec::as_slice).unwrap_or(&[])
    }
}

#[derive(Clone)]
struct Index {
    spec: KeySpec,
    map: hashbrown::HashMap<Box<[TermId]>, Vec<u32>>,
    covered: usize,
}

/// The key of a row under `spec`; false when the row cannot match (wrong shape).
fn extract_key(pool: &TermPool, spec: &KeySpec, row: &[TermId], out: &mut Vec<TermId>) -> bool {
    for leaf in spec {
        let mut t = row[leaf.argpos as usize];
        for &(f, n, child) in &leaf.steps {
            if pool.is_const(t) || pool.functor(t) != f || pool.args(t).len() != n as usize {
                return false;
            }
            t = pool.args(t)[child as usize];
        }
        match leaf.functor {
            None => out.push(t),
            Some((f, n)) => {
                if pool.is_const(t) || pool.functor(t) != f || pool.args(t).len() != n as usize {
                    return false;
                }
            }
        }
    }
    true
}

/// The index key of a literal whose variables in `bound` are known: every fully
/// known subterm is a value leaf; a partly known function term is a functor check
/// plus the leaves of its arguments.
fn access_for(args: &[Pat], bound: &[bool]) -> Option<Access> {
    fn walk(
        p: &Pat,
        argpos: u16,
        steps: &mut Vec<(Sym, u16, u16)>,
        bound: &[bool],
        acc: &mut Access,
    ) {
        if p.is_known(bound) {
            acc.spec.push(KeyLeaf {
                argpos,
                steps: steps.clone(),
                functor: None,
            });
            acc.parts.push(p.clone());
            return;
        }
        if let Pat::Func(f, args) = p {
            acc.spec.push(KeyLeaf {
                argpos,
                steps: steps.clone(),
                functor: Some((*f, args.len() as u16)),
            });
            for (i, a) in args.iter().enumerate() {
                steps.push((*f, args.len() as u16, i as u16));
                walk(a, argpos, steps, bound, acc);
                steps.pop();
            }
        }
    }
    let mut acc = Access {
        spec: Vec::new(),
        parts: Vec::new(),
        slot: usize::MAX,
    };
    for (i, a) in args.iter().enumerate() {
        walk(a, i as u16, &mut Vec::new(), bound, &mut acc);
    }
    (!acc.spec.is_empty()).then_some(acc)
}

/// Rules evaluated together. A recursive component runs semi-naively: after a
/// first full round, each round joins at least one recursive literal against only
/// the rows the previous round added, so long chains (counters, paths) cost
/// linear rather than quadratic work.
struct Comp {
    rules: Vec<usize>,
    recursive: bool,
    /// The relations the component defines.
    heads: Vec<RelId>,
    /// Per rule: for each positive body literal over `heads`, its relation and
    /// the rule's plan with that literal joined first.
    delta_plans: Vec<Vec<(RelId, CRule)>>,
}

/// What the prover evaluates, built once from a game.
struct Program {
    rules: Vec<CRule>,
    /// Components run per state and per joint move, in order.
    state_comps: Vec<Comp>,
    move_comps: Vec<Comp>,
    true_rel: RelId,
    does_rel: RelId,
    legal_rel: RelId,
    next_rel: RelId,
    goal_rel: RelId,
    terminal_rel: RelId,
    /// Relations whose tables change with the state (phase >= State).
    dynamic_rels: Vec<RelId>,
    /// The state components each question needs, in order (the ones its
    /// relation depends on): a terminal state's `goal` rarely needs what
    /// `legal` does.
    needs_legal: Vec<usize>,
    needs_goal: Vec<usize>,
    needs_terminal: Vec<usize>,
}

impl Program {
    /// The state components `rel` depends on, `rel`'s own included, in
    /// evaluation order.
    fn state_needs(&self, rel: RelId) -> Vec<usize> {
        let mut need = vec![false; self.state_comps.len()];
        let mut todo = vec![rel];
        let mut seen = std::collections::HashSet::new();
        while let Some(r) = todo.pop() {
            if !seen.insert(r) {
                continue;
            }
            for (i, c) in self.state_comps.iter().enumerate() {
                if !c.heads.contains(&r) || need[i] {
                    continue;
                }
                need[i] = true;
                for &ri in &c.rules {
                    for lit in &self.rules[ri].body {
                        match lit {
                            Lit::Pos { rel, .. } | Lit::Not { rel, .. } => todo.push(*rel),
                            Lit::Distinct(..) => {}
                        }
                    }
                }
            }
        }
        (0..need.len()).filter(|&i| need[i]).collect()
    }
}

/// How many recently loaded states keep their rows, and how many term ids they
/// may hold together (256 MB).
const RECENT_STATES: usize = 8;
const RECENT_CELLS: usize = 64 << 20;

/// Mutable evaluation state, behind the prover's lock.
struct Db {
    pool: TermPool,
    tables: Vec<Table>,
    hasher: hashbrown::DefaultHashBuilder,
    /// The state whose state-phase relations are in the tables.
    loaded: Option<ProverState>,
    /// Which state components have run for it (they run when a question
    /// needs them, see [`Db::ensure`]).
    done: Vec<bool>,
    /// The state-phase rows of states loaded before, newest first (see
    /// [`Db::load_state`]), and the term ids they hold together.
    recent: std::collections::VecDeque<(ProverState, Vec<Vec<TermId>>)>,
    recent_cells: usize,
    /// Scratch for bindings and derived tuples.
    bindings: Vec<TermId>,
    scratch: Vec<TermId>,
    /// During a semi-naive round: (body position, first row, end row) of the
    /// literal restricted to the previous round's new rows.
    delta: Option<(usize, usize, usize)>,
    /// While computing static relations: stop when one grows past the guard.
    guard: bool,
    overflow: Option<RelId>,
    /// Join steps left before [`Prover::bounded`] gives up (none: no bound).
    work_left: Option<u64>,
}

/// How many term ids one static relation (or one rule's output) may hold: about
/// 120 MB, far above real games' needs (checkers' largest static table holds a
/// few hundred thousand) and far below what exhausts memory.
const MAX_STATIC_CELLS: usize = 30_000_000;

/// Why a prover could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ProverError {
    #[error(
        "static relation {relation} grows past {cells} terms: the game is too large for the prover"
    )]
    TooLarge { relation: String, cells: usize },
}

/// The reference engine. See the module documentation.
pub struct Prover {
    game: Game,
    program: Program,
    roles: Vec<TermId>,
    init: ProverState,
    db: Mutex<Db>,
}

impl Prover {
    /// Builds the prover, computing the static relations.
    ///
    /// # Panics
    /// When the static relations exceed the size guard; use [`Prover::try_new`]
    /// on games from untrusted sources.
    pub fn new(game: Game) -> Prover {
        match Prover::try_new(game) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        }
    }

    /// Builds the prover, or says which static relation grew past the size guard
    /// (some games define static relations with billions of facts).
    pub fn try_new(game: Game) -> Result<Prover, ProverError> {
        let mut pool = TermPool::new();
        // Relation ids: the keyword relations first, then every relation in the rules.
        let mut rels: HashMap<Relation, RelId> = HashMap::new();
        let mut arities: Vec<usize> = Vec::new();
        let mut add = |r: Relation| -> RelId {
            *rels.entry(r).or_insert_with(|| {
                arities.push(r.arity);
                arities.len() - 1
            })
        };
        let true_rel = add(Relation {
            name: kw::TRUE,
            arity: 1,
        });
        let does_rel = add(Relation {
            name: kw::DOES,
            arity: 2,
        });
        let legal_rel = add(Relation {
            name: kw::LEGAL,
            arity: 2,
        });
        let next_rel = add(Relation {
            name: kw::NEXT,
            arity: 1,
        });
        let goal_rel = add(Relation {
            name: kw::GOAL,
            arity: 2,
        });
        let terminal_rel = add(Relation {
            name: kw::TERMINAL,
            arity: 0,
        });
        let init_rel = add(Relation {
            name: kw::INIT,
            arity: 1,
        });
        for r in &game.rules {
            add(r.head.relation().expect("heads are atoms"));
            for l in &r.body {
                if let Literal::Pos(t) | Literal::Not(t) = l {
                    add(t.relation().expect("atoms have a relation"));
                }
            }
        }
        let rel_of = |r: Relation| rels[&r];

        let mut dynamic = vec![false; arities.len()];
        dynamic[true_rel] = true;
        dynamic[does_rel] = true;
        for (r, p) in game.rules.iter().zip(&game.rule_phase) {
            if *p != Phase::Static {
                dynamic[rel_of(r.head.relation().expect("heads are atoms"))] = true;
            }
        }
        // Before static tables exist, guess their sizes; the rules that run per
        // state are compiled again below with the real sizes.
        let mut sizes: Vec<f64> = (0..arities.len())
            .map(|r| if dynamic[r] { 30.0 } else { 100.0 })
            .collect();
        sizes[does_rel] = 1.0;
        for r in &game.small {
            if let Some(&id) = rels.get(r) {
                sizes[id] = 1.0;
            }
        }
        let mut rules: Vec<CRule> = game
            .rules
            .iter()
            .map(|r| compile_rule(r, &mut pool, &rel_of, &sizes, None))
            .collect();

        let mut db = Db {
            pool,
            tables: arities.iter().map(|&a| Table::new(a)).collect(),
            hasher: hashbrown::DefaultHashBuilder::default(),
            loaded: None,
            done: Vec::new(),
            recent: std::collections::VecDeque::new(),
            recent_cells: 0,
            bindings: Vec::new(),
            scratch: Vec::new(),
            delta: None,
            guard: false,
            overflow: None,
            work_left: None,
        };
        register_slots(&mut rules, &mut db.tables);
        let static_comps: Vec<Comp> = game
            .components
            .iter()
            .filter(|c| c.phase == Phase::Static)
            .map(|c| make_comp(c, &game, &mut db.pool, &rel_of, &sizes, &mut db.tables))
            .collect();
        let mut program = Program {
            rules,
            state_comps: Vec::new(),
            move_comps: Vec::new(),
            needs_legal: Vec::new(),
            needs_goal: Vec::new(),
            needs_terminal: Vec::new(),
            true_rel,
            does_rel,
            legal_rel,
            next_rel,
            goal_rel,
            terminal_rel,
            dynamic_rels: (0..arities.len()).filter(|&r| dynamic[r]).collect(),
        };
        db.guard = true;
        for comp in &static_comps {
            db.run_component(&program, comp);
            if let Some(rel) = db.overflow {
                let name = rels
                    .iter()
                    .find(|(_, &id)| id == rel)
                    .map(|(r, _)| r.display(&game.symbols))
                    .unwrap_or_default();
                return Err(ProverError::TooLarge {
                    relation: name,
                    cells: MAX_STATIC_CELLS,
                });
            }
        }
        db.guard = false;
        for t in db.tables.iter_mut() {
            t.static_len = t.len();
            t.state_len = t.len();
        }
        let mut init: ProverState = (0..db.tables[init_rel].len())
            .map(|i| db.tables[init_rel].row(i)[0])
            .collect();
        init.sort_unstable();
        init.dedup();

        // Recompile the per-state rules knowing the static tables' sizes; `true`
        // is estimated by the initial state.
        for (r, size) in sizes.iter_mut().enumerate() {
            if !dynamic[r] {
                *size = db.tables[r].len() as f64;
            }
        }
        sizes[true_rel] = init.len().max(1) as f64;
        for (i, r) in game.rules.iter().enumerate() {
            if game.rule_phase[i] != Phase::Static {
                program.rules[i] = compile_rule(r, &mut db.pool, &rel_of, &sizes, None);
            }
        }
        register_slots(&mut program.rules, &mut db.tables);
        // Body positions moved with the new join orders.
        for c in &game.components {
            let mut comp = || make_comp(c, &game, &mut db.pool, &rel_of, &sizes, &mut db.tables);
            match c.phase {
                Phase::Static => {}
                Phase::State => program.state_comps.push(comp()),
                Phase::Move => program.move_comps.push(comp()),
            }
        }

        program.needs_legal = program.state_needs(program.legal_rel);
        program.needs_goal = program.state_needs(program.goal_rel);
        program.needs_terminal = program.state_needs(program.terminal_rel);
        db.done = vec![false; program.state_comps.len()];

        let roles = game
            .roles
            .iter()
            .map(|r| db.pool.from_term(r).expect("roles are ground (validated)"))
            .collect();
        Ok(Prover {
            game,
            program,
            roles,
            init,
            db: Mutex::new(db),
        })
    }

    /// Runs `f` on `state` with the state components `needs` computed (all
    /// of them when `None`).
    fn with_state<R>(
        &self,
        state: &ProverState,
        needs: Option<&[usize]>,
        f: impl FnOnce(&mut Db, &Program) -> R,
    ) -> R {
        let mut db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        db.load_state(&self.program, state);
        db.ensure(&self.program, needs);
        f(&mut db, &self.program)
    }

    /// Runs `f` with at most `join_steps` steps of rule evaluation; `None`
    /// when they run out. Then what `f` saw is incomplete (the rules stopped
    /// half way) and the rows computed so far are dropped, so the prover
    /// answers correctly afterwards. Why: a game's rules may take a state
    /// far longer than any clock allows (ruleDepthQuadratic as written asks
    /// for 2^44 tuples), and a caller choosing an engine must find out
    /// without hanging. Meant for a prover no other thread uses yet: calls
    /// from other threads meanwhile would share the budget.
    pub fn bounded<R>(&self, join_steps: u64, f: impl FnOnce(&Self) -> R) -> Option<R> {
        self.db.lock().unwrap_or_else(|e| e.into_inner()).work_left = Some(join_steps);
        let r = f(self);
        let mut db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        db.work_left = None;
        if db.overflow.take().is_none() {
            return Some(r);
        }
        let h = db.hasher;
        for &rel in &self.program.dynamic_rels {
            let t = &mut db.tables[rel];
            let keep = t.static_len;
            t.truncate(&h, keep);
            t.state_len = keep;
        }
        db.loaded = None;
        db.recent.clear();
        db.recent_cells = 0;
        None
    }

    /// The number of distinct ground terms seen so far (for diagnostics).
    pub fn terms_seen(&self) -> usize {
        self.db.lock().unwrap_or_else(|e| e.into_inner()).pool.len()
    }
}

/// How much of an argument is known: 1 when all its variables are bound, 0 when
/// none, a half for a function term with some known parts.
fn boundness(t: &Term, bound: &[bool], var_ix: &dyn Fn(Sym) -> u16) -> f64 {
    let vs = t.vars();
    let nb = vs.iter().filter(|&&v| bound[var_ix(v) as usize]).count();
    if nb == vs.len() {
        1.0
    } else if matches!(t, Term::Func(..)) {
        0.5 * (1.0 + nb as f64) / (1.0 + vs.len() as f64)
    } else {
        0.0
    }
}

/// Builds a component, with the semi-naive plans of its recursive rules.
fn make_comp(
    c: &crate::gdl::normal::Component,
    game: &Game,
    pool: &mut TermPool,
    rel_of: &dyn Fn(Relation) -> RelId,
    sizes: &[f64],
    tables: &mut [Table],
) -> Comp {
    let mut heads: Vec<RelId> = c
        .rules
        .iter()
        .map(|&r| rel_of(game.rules[r].head.relation().expect("atom")))
        .collect();
    heads.sort_unstable();
    heads.dedup();
    let mut delta_plans = Vec::new();
    for &r in &c.rules {
        let rule = &game.rules[r];
        let mut plans = Vec::new();
        if c.recursive {
            for (j, l) in rule.body.iter().enumerate() {
                if let Literal::Pos(t) = l {
                    let rel = rel_of(t.relation().expect("atom"));
                    if heads.contains(&rel) {
                        let mut plan = compile_rule(rule, pool, rel_of, sizes, Some(j));
                        register_slots(std::slice::from_mut(&mut plan), tables);
                        plans.push((rel, plan));
                    }
                }
            }
        }
        delta_plans.push(plans);
    }
    Comp {
        rules: c.rules.clone(),
        recursive: c.recursive,
        heads,
        delta_plans,
    }
}

/// Gives every index key spec of `rules` a slot in its table.
fn register_slots(rules: &mut [CRule], tables: &mut [Table]) {
    for rule in rules.iter_mut() {
        for lit in rule.body.iter_mut() {
            if let Lit::Pos {
                rel,
                access: Some(acc),
                ..
            } = lit
            {
                let t = &mut tables[*rel];
                acc.slot = match t.index.iter().position(|ix| ix.spec == acc.spec) {
                    Some(i) => i,
                    None => {
                        t.index.push(Index {
                            spec: acc.spec.clone(),
                            map: hashbrown::HashMap::new(),
                            covered: 0,
                        });
                        t.index.len() - 1
                    }
                };
            }
        }
    }
}

/// Compiles a rule into a join plan. `sizes` estimates each relation's table size;
/// the plan takes next the positive literal expected to match the fewest rows.
///
/// With `first`, the body literal at that position is joined first: the plan for
/// a semi-naive round in which that literal sees only new rows.
fn compile_rule(
    r: &Rule,
    pool: &mut TermPool,
    rel_of: &dyn Fn(Relation) -> RelId,
    sizes: &[f64],
    first: Option<usize>,
) -> CRule {
    let vars = r.vars();
    let var_ix = |v: Sym| {
        vars.iter()
            .position(|&w| w == v)
            .expect("variable of the rule") as u16
    };
    let pat = |t: &Term, pool: &mut TermPool| Pat::new(t, pool, &mut |v| var_ix(v));
    let atom = |t: &Term, pool: &mut TermPool| {
        let rel = rel_of(t.relation().expect("atoms have a relation"));
        (
            rel,
            t.args().iter().map(|a| pat(a, pool)).collect::<Vec<_>>(),
        )
    };
    let (head, head_args) = atom(&r.head, pool);

    // Join order: greedily the positive literal with the most bound arguments;
    // `not` and `distinct` as soon as their variables are bound.
    let mut bound = vec![false; vars.len()];
    let mut pending: Vec<&Literal> = r.body.iter().collect();
    let mut body = Vec::new();
    let vars_of = |l: &Literal| {
        let mut vs = Vec::new();
        l.for_each_var(&mut |v| vs.push(var_ix(v) as usize));
        vs
    };
    let mut forced = first;
    while !pending.is_empty() {
        // Filters whose variables are all bound go first.
        if let Some(i) = pending.iter().position(|l| {
            forced.is_none()
                && matches!(l, Literal::Not(_) | Literal::Distinct(..))
                && vars_of(l).iter().all(|&v| bound[v])
        }) {
            let l = pending.remove(i);
            body.push(match l {
                Literal::Not(t) => {
                    let (rel, args) = atom(t, pool);
                    Lit::Not { rel, args }
                }
                Literal::Distinct(a, b) => Lit::Distinct(pat(a, pool), pat(b, pool)),
                _ => unreachable!(),
            });
            continue;
        }
        let best = if let Some(j) = forced.take() {
            Some(j)
        } else {
            pending
                .iter()
                .enumerate()
                .filter_map(|(i, l)| match l {
                    Literal::Pos(t) => Some((i, t)),
                    _ => None,
                })
                .map(|(i, t)| {
                    // Expected matches: the table's size to the power of the share of
                    // arguments still unknown (a known argument counts fully, a partly
                    // known function term half).
                    let args = t.args();
                    let known: f64 = args.iter().map(|a| boundness(a, &bound, &var_ix)).sum();
                    let rel = rel_of(t.relation().expect("atoms have a relation"));
                    let est = if args.is_empty() || known >= args.len() as f64 {
                        0.5
                    } else {
                        sizes[rel].max(1.0).powf(1.0 - known / args.len() as f64)
                    };
                    (i, est, t.vars().len())
                })
                .min_by(|a, b| a.1.total_cmp(&b.1).then(a.2.cmp(&b.2)).then(a.0.cmp(&b.0)))
                .map(|(i, _, _)| i)
        };
        // When only filters with unbound variables remain, take them in order: a
        // `not` with variables that occur nowhere else is read existentially;
        // unsafe `distinct` was rejected by validation.
        let i = best.unwrap_or_default();
        let l = pending.remove(i);
        let lit = match l {
            Literal::Pos(t) => {
                let (rel, args) = atom(t, pool);
                let access = access_for(&args, &bound);
                Lit::Pos { rel, args, access }
            }
            Literal::Not(t) => {
                let (rel, args) = atom(t, pool);
                Lit::Not { rel, args }
            }
            Literal::Distinct(a, b) => Lit::Distinct(pat(a, pool), pat(b, pool)),
            Literal::Or(_) | Literal::And(_) | Literal::Equal(..) => {
                unreachable!("the normal form has no 'or', 'and' or equality")
            }
        };
        if matches!(l, Literal::Pos(_)) {
            for v in vars_of(l) {
                bound[v] = true;
            }
        }
        body.push(lit);
    }
    CRule {
        head,
        head_args,
        body,
        nvars: vars.len(),
    }
}

impl Db {
    /// Makes `state` the loaded one. The rows of the state it replaces are
    /// kept (a few states, [`RECENT_CELLS`] term ids at most): a search that
    /// goes back and forth between a state and its children gets them back
    /// by re-inserting rows instead of running the rules again.
    fn load_state(&mut self, prog: &Program, state: &ProverState) {
        if self.loaded.as_ref() == Some(state) {
            return;
        }
        let h = self.hasher;
        if let Some(old) = self.loaded.take() {
            self.remember(prog, old);
        }
        for &r in &prog.dynamic_rels {
            let t = &mut self.tables[r];
            let keep = t.static_len;
            t.truncate(&h, keep);
        }
        if let Some(i) = self.recent.iter().position(|(s, _)| s == state) {
            let (_, rows) = &self.recent[i];
            for (&r, rows) in prog.dynamic_rels.iter().zip(rows) {
                let t = &mut self.tables[r];
                if t.arity == 0 {
                    if !rows.is_empty() {
                        t.insert(&h, &[]);
                    }
                } else {
                    for row in rows.chunks_exact(t.arity) {
                        t.insert(&h, row);
                    }
                }
            }
            self.done.fill(true);
        } else {
            for &f in state {
                self.tables[prog.true_rel].insert(&h, &[f]);
            }
            self.done.fill(false);
        }
        for &r in &prog.dynamic_rels {
            let t = &mut self.tables[r];
            t.state_len = t.len();
        }
        self.loaded = Some(state.clone());
    }

    /// Runs the state components in `needs` (all when `None`) that have not
    /// run for the loaded state. Move-phase rows exist only once all have
    /// run ([`Db::load_move`] asks for all), so the new rows stay below them.
    fn ensure(&mut self, prog: &Program, needs: Option<&[usize]>) {
        let count = needs.map_or(prog.state_comps.len(), <[usize]>::len);
        let mut ran = false;
        for k in 0..count {
            let i = needs.map_or(k, |n| n[k]);
            if !self.done[i] {
                self.run_component(prog, &prog.state_comps[i]);
                self.done[i] = true;
                ran = true;
            }
        }
        if ran {
            for &r in &prog.dynamic_rels {
                let t = &mut self.tables[r];
                t.state_len = t.len();
            }
        }
    }

    /// Keeps the state-phase rows of `state` (the loaded one) among the
    /// recent, unless they are there already or too many.
    fn remember(&mut self, prog: &Program, state: ProverState) {
        if !self.done.iter().all(|&d| d) || self.recent.iter().any(|(s, _)| *s == state) {
            return;
        }
        let rows: Vec<Vec<TermId>> = prog
            .dynamic_rels
            .iter()
            .map(|&r| {
                let t = &self.tables[r];
                let w = t.arity.max(1);
                t.rows[t.static_len * w..t.state_len * w].to_vec()
            })
            .collect();
        let cells: usize = rows.iter().map(Vec::len).sum();
        if cells > RECENT_CELLS {
            return;
        }
        self.recent_cells += cells;
        self.recent.push_front((state, rows));
        while self.recent.len() > RECENT_STATES || self.recent_cells > RECENT_CELLS {
            if let Some((_, rows)) = self.recent.pop_back() {
                self.recent_cells -= rows.iter().map(Vec::len).sum::<usize>();
            }
        }
    }

    fn load_move(&mut self, prog: &Program, roles: &[TermId], joint: &[TermId]) {
        let h = self.hasher;
        for &r in &prog.dynamic_rels {
            let t = &mut self.tables[r];
            let keep = t.state_len;
            t.truncate(&h, keep);
        }
        for (&r, &m) in roles.iter().zip(joint) {
            self.tables[prog.does_rel].insert(&h, &[r, m]);
        }
        for comp in &prog.move_comps {
            self.run_component(prog, comp);
        }
    }

    fn run_component(&mut self, prog: &Program, comp: &Comp) {
        if !comp.recursive {
            for &ri in &comp.rules {
                self.run_rule(&prog.rules[ri]);
            }
            return;
        }
        let mut lo: Vec<usize> = comp.heads.iter().map(|&h| self.tables[h].len()).collect();
        for &ri in &comp.rules {
            self.run_rule(&prog.rules[ri]);
        }
        loop {
            let hi: Vec<usize> = comp.heads.iter().map(|&h| self.tables[h].len()).collect();
            if hi == lo {
                break;
            }
            if self.overflow.is_some() {
                break;
            }
            for plans in &comp.delta_plans {
                for (rel, plan) in plans {
                    let h = comp
                        .heads
                        .iter()
                        .position(|x| x == rel)
                        .expect("a head of the component");
                    if lo[h] < hi[h] {
                        self.delta = Some((0, lo[h], hi[h]));
                        self.run_rule(plan);
                        self.delta = None;
                    }
                }
            }
            lo = hi;
        }
    }

    /// Derives every head instance of `rule`; true when a new tuple was added.
    fn run_rule(&mut self, rule: &CRule) -> bool {
        let mut bindings = std::mem::take(&mut self.bindings);
        bindings.clear();
        bindings.resize(rule.nvars, UNBOUND);
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        self.join(rule, 0, &mut bindings, &mut out);
        let h = self.hasher;
        let arity = rule.head_args.len();
        let mut changed = false;
        if arity == 0 {
            if !out.is_empty() {
                changed = self.tables[rule.head].insert(&h, &[]);
            }
        } else {
            for t in out.chunks(arity) {
                changed |= self.tables[rule.head].insert(&h, t);
            }
        }
        self.bindings = bindings;
        self.scratch = out;
        if self.guard && self.tables[rule.head].rows.len() > MAX_STATIC_CELLS {
            self.overflow = Some(rule.head);
        }
        changed
    }

    fn join(&mut self, rule: &CRule, i: usize, b: &mut Vec<TermId>, out: &mut Vec<TermId>) {
        if self.overflow.is_some() {
            return;
        }
        if let Some(left) = self.work_left.as_mut() {
            if *left == 0 {
                self.overflow = Some(rule.head);
                return;
            }
            *left -= 1;
        }
        let Some(lit) = rule.body.get(i) else {
            if rule.head_args.is_empty() {
                out.push(0);
            } else {
                for p in &rule.head_args {
                    let id = p.build(b, &mut self.pool);
                    out.push(id);
                }
                if self.guard && out.len() > MAX_STATIC_CELLS {
                    self.overflow = Some(rule.head);
                }
            }
            return;
        };
        match lit {
            Lit::Distinct(a, c) => {
                let (x, y) = (a.find(b, &self.pool), c.find(b, &self.pool));
                // An instance that is not in the pool differs from every term in it.
                if x != y || x.is_none() {
                    self.join(rule, i + 1, b, out);
                }
            }
            Lit::Not { rel, args } => {
                if !self.exists(*rel, args, b) {
                    self.join(rule, i + 1, b, out);
                }
            }
            Lit::Pos { rel, args, access } => {
                let rel = *rel;
                if args.is_empty() {
                    if self.tables[rel].len() > 0 {
                        self.join(rule, i + 1, b, out);
                    }
                    return;
                }
                let mut trail: Vec<u16> = Vec::new();
                // In a semi-naive round, one recursive literal sees only new rows.
                let (lo, hi) = match self.delta {
                    Some((j, lo, hi)) if j == i => (lo, hi),
                    _ => (0, usize::MAX),
                };
                // Every argument bound: a membership test on the table's set
                // (an index keyed on whole rows would hold a bucket per row).
                if access.is_some() {
                    if let Some(tuple) = self.bound_tuple(args, b) {
                        let t = &self.tables[rel];
                        if let Some(r) = t.position(&self.hasher, &tuple) {
                            if (lo..hi).contains(&r) {
                                self.join(rule, i + 1, b, out);
                            }
                        }
                        return;
                    }
                }
                match access {
                    Some(acc) if self.tables[rel].len() >= INDEX_MIN_ROWS => {
                        let mut key = Vec::with_capacity(acc.parts.len());
                        for p in &acc.parts {
                            match p.find(b, &self.pool) {
                                Some(v) => key.push(v),
                                None => return,
                            }
                        }
                        let all = self.tables[rel].lookup(&self.pool, acc.slot, &key);
                        let from = all.partition_point(|&r| (r as usize) < lo);
                        let to = all.partition_point(|&r| (r as usize) < hi);
                        let rows: Vec<u32> = all[from..to].to_vec();
                        for r in rows {
                            self.try_row(rule, i, rel, r as usize, args, b, out, &mut trail);
                        }
                    }
                    _ => {
                        // Rows added while we iterate (recursion) are seen next round.
                        let n = self.tables[rel].len().min(hi);
                        for r in lo..n {
                            self.try_row(rule, i, rel, r, args, b, out, &mut trail);
                        }
                    }
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn try_row(
        &mut self,
        rule: &CRule,
        i: usize,
        rel: RelId,
        r: usize,
        args: &[Pat],
        b: &mut Vec<TermId>,
        out: &mut Vec<TermId>,
        trail: &mut Vec<u16>,
    ) {
        trail.clear();
        let t = &self.tables[rel];
        let row = &t.rows[r * t.arity..(r + 1) * t.arity];
        let ok = args
            .iter()
            .zip(row)
            .all(|(p, &v)| p.unify(v, b, trail, &self.pool));
        if ok {
            let saved: Vec<u16> = std::mem::take(trail);
            self.join(rule, i + 1, b, out);
            for v in saved {
                b[v as usize] = UNBOUND;
            }
        } else {
            for &v in trail.iter() {
                b[v as usize] = UNBOUND;
            }
        }
    }

    /// The arguments as one ground tuple, when all are bound and exist.
    fn bound_tuple(&self, args: &[Pat], b: &[TermId]) -> Option<Vec<TermId>> {
        args.iter().map(|p| p.find(b, &self.pool)).collect()
    }

    /// Whether some tuple of `rel` matches `args` (unbound variables are free).
    fn exists(&mut self, rel: RelId, args: &[Pat], b: &mut [TermId]) -> bool {
        let t = &self.tables[rel];
        if args.is_empty() {
            return t.len() > 0;
        }
        let mut ground = Vec::with_capacity(args.len());
        for p in args {
            match p.resolve(b, &self.pool) {
                Resolved::Known(v) => ground.push(v),
                Resolved::Absent => return false,
                Resolved::Unknown => break,
            }
        }
        if ground.len() == args.len() {
            return t.contains(&self.hasher, &ground);
        }
        let mut trail = Vec::new();
        for r in 0..t.len() {
            trail.clear();
            let ok = args
                .iter()
                .zip(t.row(r))
                .all(|(p, &v)| p.unify(v, b, &mut trail, &self.pool));
            for &v in &trail {
                b[v as usize] = UNBOUND;
            }
            if ok {
                return true;
            }
        }
        false
    }
}

impl StateMachine for Prover {
    type State = ProverState;
    type Move = TermId;

    fn game(&self) -> &Game {
        &self.game
    }

    fn initial_state(&self) -> ProverState {
        self.init.clone()
    }

    fn legal_moves(&self, state: &ProverState, role: RoleIdx, out: &mut Vec<TermId>) {
        out.clear();
        let r = self.roles[role];
        self.with_state(state, Some(&self.program.needs_legal), |db, prog| {
            let t = &db.tables[prog.legal_rel];
            for i in 0..t.len() {
                let row = t.row(i);
                if row[0] == r {
                    out.push(row[1]);
                }
            }
        });
    }

    fn next_state(&self, state: &ProverState, joint: &[TermId]) -> ProverState {
        self.with_state(state, None, |db, prog| {
            db.load_move(prog, &self.roles, joint);
            let t = &db.tables[prog.next_rel];
            let mut next: ProverState = (0..t.len()).map(|i| t.row(i)[0]).collect();
            next.sort_unstable();
            next.dedup();
            next
        })
    }

    fn is_terminal(&self, state: &ProverState) -> bool {
        self.with_state(state, Some(&self.program.needs_terminal), |db, prog| {
            db.tables[prog.terminal_rel].len() > 0
        })
    }

    fn goal_values(&self, state: &ProverState, role: RoleIdx) -> Vec<u8> {
        let r = self.roles[role];
        self.with_state(state, Some(&self.program.needs_goal), |db, prog| {
            let t = &db.tables[prog.goal_rel];
            let mut vals: Vec<u8> = (0..t.len())
                .map(|i| t.row(i))
                .filter(|row| row[0] == r)
                .filter_map(|row| {
                    db.pool
                        .is_const(row[1])
                        .then(|| {
                            self.game
                                .symbols
                                .name(db.pool.functor(row[1]))
                                .parse::<u8>()
                                .ok()
                        })
                        .flatten()
                })
                .filter(|&v| v <= 100)
                .collect();
            vals.sort_unstable();
            vals.dedup();
            vals
        })
    }

    fn fluents(&self, state: &ProverState) -> Vec<Term> {
        let db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        state.iter().map(|&f| db.pool.to_term(f)).collect()
    }

    fn move_term(&self, m: &TermId) -> Term {
        self.db
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pool
            .to_term(*m)
    }

    fn parse_move(&self, term: &Term) -> Option<TermId> {
        // Interned, not only looked up: a move the rules derive only in states not
        // yet visited (a replay's later moves, an opponent's move) has no id yet.
        self.db
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pool
            .from_term(term)
    }
}
