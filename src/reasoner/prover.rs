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
use std::hash::{BuildHasher, Hash, Hasher};

use super::terms::{TermId, TermPool};
use super::{RoleIdx, StateMachine};
use crate::gdl::{kw, Game, Literal, Phase, Relation, Rule, Sym, Term};

type RelId = usize;
const UNBOUND: TermId = TermId::MAX;

/// A state: the fluents that hold, as sorted term ids.
pub type ProverState = Vec<TermId>;

/// A pattern: a rule's term with variables numbered and ground parts interned.
#[derive(Clone, Debug)]
enum Pat {
    Var(u16),
    Ground(TermId),
    Func(Sym, Vec<Pat>),
}

#[derive(Clone, Debug)]
enum Lit {
    Pos { rel: RelId, args: Vec<Pat> },
    Not { rel: RelId, args: Vec<Pat> },
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
    /// `index[pos]`: rows by the value of argument `pos`, covering `indexed_len` rows.
    index: Vec<Option<(HashMap<TermId, Vec<u32>>, usize)>>,
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
            index: vec![None; arity],
            static_len: 0,
            state_len: 0,
        }
    }

    fn len(&self) -> usize {
        if self.arity == 0 {
            self.rows.len()
        } else {
            self.rows.len() / self.arity
        }
    }

    fn row(&self, i: usize) -> &[TermId] {
        &self.rows[i * self.arity..(i + 1) * self.arity]
    }

    fn hash(h: &std::hash::RandomState, t: &[TermId]) -> u64 {
        let mut s = h.build_hasher();
        t.hash(&mut s);
        s.finish()
    }

    fn contains(&self, h: &std::hash::RandomState, t: &[TermId]) -> bool {
        if self.arity == 0 {
            return !self.rows.is_empty();
        }
        let hv = Self::hash(h, t);
        self.set.find(hv, |&r| self.row(r as usize) == t).is_some()
    }

    /// Adds a tuple; false when it was there already.
    fn insert(&mut self, h: &std::hash::RandomState, t: &[TermId]) -> bool {
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
        if self.set.find(hv, |&r| &self.rows[r as usize * arity..(r as usize + 1) * arity] == t).is_some() {
            return false;
        }
        let r = self.len() as u32;
        self.rows.extend_from_slice(t);
        let rows = &self.rows;
        self.set.insert_unique(hv, r, |&r| Self::hash(h, &rows[r as usize * arity..(r as usize + 1) * arity]));
        true
    }

    fn truncate(&mut self, h: &std::hash::RandomState, len: usize) {
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
            if let Some((_, covered)) = ix {
                if *covered > len {
                    *ix = None;
                }
            }
        }
    }

    /// Rows whose argument `pos` is `value`, via the index (built or extended here).
    fn lookup(&mut self, pos: usize, value: TermId) -> &[u32] {
        let n = self.len();
        let arity = self.arity;
        let (map, covered) = self.index[pos].get_or_insert_with(|| (HashMap::new(), 0));
        while *covered < n {
            let v = self.rows[*covered * arity + pos];
            map.entry(v).or_default().push(*covered as u32);
            *covered += 1;
        }
        map.get(&value).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// What the prover evaluates, built once from a game.
struct Program {
    rules: Vec<CRule>,
    /// Components by phase: (rule indices, recursive).
    state_comps: Vec<(Vec<usize>, bool)>,
    move_comps: Vec<(Vec<usize>, bool)>,
    true_rel: RelId,
    does_rel: RelId,
    legal_rel: RelId,
    next_rel: RelId,
    goal_rel: RelId,
    terminal_rel: RelId,
    /// Relations whose tables change with the state (phase >= State).
    dynamic_rels: Vec<RelId>,
}

/// Mutable evaluation state, behind the prover's lock.
struct Db {
    pool: TermPool,
    tables: Vec<Table>,
    hasher: std::hash::RandomState,
    /// The state whose state-phase relations are in the tables.
    loaded: Option<ProverState>,
    /// Scratch for bindings and derived tuples.
    bindings: Vec<TermId>,
    scratch: Vec<TermId>,
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
    pub fn new(game: Game) -> Prover {
        let mut pool = TermPool::new();
        let mut rels: HashMap<Relation, RelId> = HashMap::new();
        let mut arities: Vec<usize> = Vec::new();
        let mut rel_id = |r: Relation, arities: &mut Vec<usize>| -> RelId {
            *rels.entry(r).or_insert_with(|| {
                arities.push(r.arity);
                arities.len() - 1
            })
        };
        let true_rel = rel_id(Relation { name: kw::TRUE, arity: 1 }, &mut arities);
        let does_rel = rel_id(Relation { name: kw::DOES, arity: 2 }, &mut arities);
        let legal_rel = rel_id(Relation { name: kw::LEGAL, arity: 2 }, &mut arities);
        let next_rel = rel_id(Relation { name: kw::NEXT, arity: 1 }, &mut arities);
        let goal_rel = rel_id(Relation { name: kw::GOAL, arity: 2 }, &mut arities);
        let terminal_rel = rel_id(Relation { name: kw::TERMINAL, arity: 0 }, &mut arities);
        let init_rel = rel_id(Relation { name: kw::INIT, arity: 1 }, &mut arities);
        let role_rel = rel_id(Relation { name: kw::ROLE, arity: 1 }, &mut arities);

        let mut rules = Vec::with_capacity(game.rules.len());
        for r in &game.rules {
            rules.push(compile_rule(r, &mut pool, &mut |rel| rel_id(rel, &mut arities)));
        }
        let mut static_comps = Vec::new();
        let mut state_comps = Vec::new();
        let mut move_comps = Vec::new();
        for c in &game.components {
            let entry = (c.rules.clone(), c.recursive);
            match c.phase {
                Phase::Static => static_comps.push(entry),
                Phase::State => state_comps.push(entry),
                Phase::Move => move_comps.push(entry),
            }
        }
        let mut dynamic = vec![false; arities.len()];
        dynamic[true_rel] = true;
        dynamic[does_rel] = true;
        for (r, c) in game.rules.iter().zip(&rules) {
            let _ = r;
            let _ = c;
        }
        for (i, p) in game.rule_phase.iter().enumerate() {
            if *p != Phase::Static {
                dynamic[rules[i].head] = true;
            }
        }
        let program = Program {
            rules,
            state_comps,
            move_comps,
            true_rel,
            does_rel,
            legal_rel,
            next_rel,
            goal_rel,
            terminal_rel,
            dynamic_rels: (0..arities.len()).filter(|&r| dynamic[r]).collect(),
        };
        let hasher = std::hash::RandomState::new();
        let mut db = Db {
            pool,
            tables: arities.iter().map(|&a| Table::new(a)).collect(),
            hasher,
            loaded: None,
            bindings: Vec::new(),
            scratch: Vec::new(),
        };
        for (comp, recursive) in &static_comps {
            db.run_component(&program, comp, *recursive);
        }
        for t in db.tables.iter_mut() {
            t.static_len = t.len();
            t.state_len = t.len();
        }
        let mut init: ProverState = (0..db.tables[init_rel].len()).map(|i| db.tables[init_rel].row(i)[0]).collect();
        init.sort_unstable();
        init.dedup();
        let roles = game
            .roles
            .iter()
            .map(|r| db.pool.from_term(r).expect("roles are ground (validated)"))
            .collect();
        let _ = role_rel;
        Prover {
            game,
            program,
            roles,
            init,
            db: Mutex::new(db),
        }
    }

    fn with_state<R>(&self, state: &ProverState, f: impl FnOnce(&mut Db, &Program) -> R) -> R {
        let mut db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        db.load_state(&self.program, state);
        f(&mut db, &self.program)
    }

    /// The number of distinct ground terms seen so far (for diagnostics).
    pub fn terms_seen(&self) -> usize {
        self.db.lock().unwrap_or_else(|e| e.into_inner()).pool.len()
    }
}

fn compile_rule(r: &Rule, pool: &mut TermPool, rel_id: &mut impl FnMut(Relation) -> RelId) -> CRule {
    let vars = r.vars();
    let var_ix = |v: Sym| vars.iter().position(|&w| w == v).expect("variable of the rule") as u16;
    fn pat(t: &Term, pool: &mut TermPool, var_ix: &dyn Fn(Sym) -> u16) -> Pat {
        if t.is_ground() {
            return Pat::Ground(pool.from_term(t).expect("ground"));
        }
        match t {
            Term::Var(v) => Pat::Var(var_ix(*v)),
            Term::Func(f, args) => Pat::Func(*f, args.iter().map(|a| pat(a, pool, var_ix)).collect()),
            Term::Const(_) => unreachable!("constants are ground"),
        }
    }
    let atom = |t: &Term, pool: &mut TermPool, rel_id: &mut dyn FnMut(Relation) -> RelId| {
        let rel = rel_id(t.relation().expect("atoms have a relation"));
        (rel, t.args().iter().map(|a| pat(a, pool, &var_ix)).collect::<Vec<_>>())
    };
    let (head, head_args) = atom(&r.head, pool, rel_id);

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
    while !pending.is_empty() {
        // Filters whose variables are all bound go first.
        if let Some(i) = pending.iter().position(|l| {
            matches!(l, Literal::Not(_) | Literal::Distinct(..)) && vars_of(l).iter().all(|&v| bound[v])
        }) {
            let l = pending.remove(i);
            body.push(match l {
                Literal::Not(t) => {
                    let (rel, args) = atom(t, pool, rel_id);
                    Lit::Not { rel, args }
                }
                Literal::Distinct(a, b) => Lit::Distinct(pat(a, pool, &var_ix), pat(b, pool, &var_ix)),
                _ => unreachable!(),
            });
            continue;
        }
        let best = pending
            .iter()
            .enumerate()
            .filter(|(_, l)| matches!(l, Literal::Pos(_)))
            .max_by_key(|(_, l)| {
                let vs = vars_of(l);
                let nb = vs.iter().filter(|&&v| bound[v]).count();
                let all = vs.iter().all(|&v| bound[v]);
                // Fully bound literals are checks: run them first; then the most
                // bound; then the fewest free variables.
                (all, nb, usize::MAX - vs.len())
            })
            .map(|(i, _)| i);
        let i = match best {
            Some(i) => i,
            // Only filters with unbound variables remain: `not` with variables
            // that occur nowhere else is read existentially; unsafe `distinct`
            // was rejected by validation.
            None => 0,
        };
        let l = pending.remove(i);
        for v in vars_of(l) {
            if matches!(l, Literal::Pos(_)) {
                bound[v] = true;
            }
        }
        body.push(match l {
            Literal::Pos(t) => {
                let (rel, args) = atom(t, pool, rel_id);
                Lit::Pos { rel, args }
            }
            Literal::Not(t) => {
                let (rel, args) = atom(t, pool, rel_id);
                Lit::Not { rel, args }
            }
            Literal::Distinct(a, b) => Lit::Distinct(pat(a, pool, &var_ix), pat(b, pool, &var_ix)),
            Literal::Or(_) => unreachable!("the normal form has no 'or'"),
        });
    }
    CRule {
        head,
        head_args,
        body,
        nvars: vars.len(),
    }
}

impl Db {
    fn load_state(&mut self, prog: &Program, state: &ProverState) {
        if self.loaded.as_ref() == Some(state) {
            return;
        }
        let h = self.hasher.clone();
        for &r in &prog.dynamic_rels {
            let t = &mut self.tables[r];
            let keep = t.static_len;
            t.truncate(&h, keep);
        }
        for &f in state {
            self.tables[prog.true_rel].insert(&h, &[f]);
        }
        for (comp, rec) in &prog.state_comps {
            self.run_component(prog, comp, *rec);
        }
        for &r in &prog.dynamic_rels {
            let t = &mut self.tables[r];
            t.state_len = t.len();
        }
        self.loaded = Some(state.clone());
    }

    fn load_move(&mut self, prog: &Program, roles: &[TermId], joint: &[TermId]) {
        let h = self.hasher.clone();
        for &r in &prog.dynamic_rels {
            let t = &mut self.tables[r];
            let keep = t.state_len;
            t.truncate(&h, keep);
        }
        for (&r, &m) in roles.iter().zip(joint) {
            self.tables[prog.does_rel].insert(&h, &[r, m]);
        }
        for (comp, rec) in &prog.move_comps {
            self.run_component(prog, comp, *rec);
        }
    }

    fn run_component(&mut self, prog: &Program, comp: &[usize], recursive: bool) {
        loop {
            let mut changed = false;
            for &ri in comp {
                changed |= self.run_rule(&prog.rules[ri]);
            }
            if !recursive || !changed {
                break;
            }
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
        let h = self.hasher.clone();
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
        changed
    }

    fn join(&mut self, rule: &CRule, i: usize, b: &mut Vec<TermId>, out: &mut Vec<TermId>) {
        let Some(lit) = rule.body.get(i) else {
            if rule.head_args.is_empty() {
                out.push(0);
            } else {
                for p in &rule.head_args {
                    let id = instantiate(&mut self.pool, p, b);
                    out.push(id);
                }
            }
            return;
        };
        match lit {
            Lit::Distinct(a, c) => {
                let (x, y) = (resolve(&self.pool, a, b), resolve(&self.pool, c, b));
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
            Lit::Pos { rel, args } => {
                let rel = *rel;
                let arity = args.len();
                if arity == 0 {
                    if self.tables[rel].len() > 0 {
                        self.join(rule, i + 1, b, out);
                    }
                    return;
                }
                // Use an index on the first argument whose value is known.
                let mut key = None;
                if self.tables[rel].len() >= INDEX_MIN_ROWS {
                    for (pos, p) in args.iter().enumerate() {
                        match resolve_opt(&self.pool, p, b) {
                            Resolved::Known(v) => {
                                key = Some((pos, v));
                                break;
                            }
                            Resolved::Absent => return,
                            Resolved::Unknown => {}
                        }
                    }
                }
                let mut trail: Vec<u16> = Vec::new();
                match key {
                    Some((pos, v)) => {
                        let rows: Vec<u32> = self.tables[rel].lookup(pos, v).to_vec();
                        for r in rows {
                            self.try_row(rule, i, rel, r as usize, args, b, out, &mut trail);
                        }
                    }
                    None => {
                        // Rows added while we iterate (recursion) are seen next round.
                        let n = self.tables[rel].len();
                        for r in 0..n {
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
        let ok = args.iter().zip(row).all(|(p, &v)| matches(&self.pool, p, v, b, trail));
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

    /// Whether some tuple of `rel` matches `args` (unbound variables are free).
    fn exists(&mut self, rel: RelId, args: &[Pat], b: &mut [TermId]) -> bool {
        let t = &self.tables[rel];
        if args.is_empty() {
            return t.len() > 0;
        }
        let mut ground = Vec::with_capacity(args.len());
        for p in args {
            match resolve_opt(&self.pool, p, b) {
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
            let ok = args.iter().zip(t.row(r)).all(|(p, &v)| matches(&self.pool, p, v, b, &mut trail));
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

enum Resolved {
    Known(TermId),
    /// Fully bound, but no such term exists: it matches nothing.
    Absent,
    Unknown,
}

fn resolve_opt(pool: &TermPool, p: &Pat, b: &[TermId]) -> Resolved {
    match p {
        Pat::Ground(id) => Resolved::Known(*id),
        Pat::Var(v) => match b[*v as usize] {
            UNBOUND => Resolved::Unknown,
            id => Resolved::Known(id),
        },
        Pat::Func(f, args) => {
            let mut ids = Vec::with_capacity(args.len());
            let mut absent = false;
            for a in args {
                match resolve_opt(pool, a, b) {
                    Resolved::Known(id) => ids.push(id),
                    Resolved::Absent => absent = true,
                    Resolved::Unknown => return Resolved::Unknown,
                }
            }
            if absent {
                return Resolved::Absent;
            }
            match pool.find(*f, &ids) {
                Some(id) => Resolved::Known(id),
                None => Resolved::Absent,
            }
        }
    }
}

/// The id of a fully bound pattern, `None` when that term does not exist.
fn resolve(pool: &TermPool, p: &Pat, b: &[TermId]) -> Option<TermId> {
    match resolve_opt(pool, p, b) {
        Resolved::Known(id) => Some(id),
        _ => None,
    }
}

fn instantiate(pool: &mut TermPool, p: &Pat, b: &[TermId]) -> TermId {
    match p {
        Pat::Ground(id) => *id,
        Pat::Var(v) => {
            debug_assert_ne!(b[*v as usize], UNBOUND, "safe rules bind head variables");
            b[*v as usize]
        }
        Pat::Func(f, args) => {
            let mut ids: smallvec_like::Args = Default::default();
            for a in args {
                ids.push(instantiate(pool, a, b));
            }
            pool.intern(*f, ids.as_slice())
        }
    }
}

/// A small stack buffer for term arguments, so building terms rarely allocates.
mod smallvec_like {
    use super::TermId;
    #[derive(Default)]
    pub struct Args {
        inline: [TermId; 8],
        len: usize,
        heap: Vec<TermId>,
    }
    impl Args {
        pub fn push(&mut self, v: TermId) {
            if self.len < 8 {
                self.inline[self.len] = v;
            } else {
                if self.heap.is_empty() {
                    self.heap.extend_from_slice(&self.inline);
                }
                self.heap.push(v);
            }
            self.len += 1;
        }
        pub fn as_slice(&self) -> &[TermId] {
            if self.len <= 8 {
                &self.inline[..self.len]
            } else {
                &self.heap
            }
        }
    }
}

/// Matches pattern `p` against ground term `v`, binding variables (recorded in `trail`).
fn matches(pool: &TermPool, p: &Pat, v: TermId, b: &mut [TermId], trail: &mut Vec<u16>) -> bool {
    match p {
        Pat::Ground(id) => *id == v,
        Pat::Var(x) => {
            let cur = b[*x as usize];
            if cur == UNBOUND {
                b[*x as usize] = v;
                trail.push(*x);
                true
            } else {
                cur == v
            }
        }
        Pat::Func(f, args) => {
            if pool.functor(v) != *f || pool.is_const(v) {
                return false;
            }
            let vargs = pool.args(v);
            vargs.len() == args.len() && args.iter().zip(vargs).all(|(a, &x)| matches(pool, a, x, b, trail))
        }
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
        self.with_state(state, |db, prog| {
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
        self.with_state(state, |db, prog| {
            db.load_move(prog, &self.roles, joint);
            let t = &db.tables[prog.next_rel];
            let mut next: ProverState = (0..t.len()).map(|i| t.row(i)[0]).collect();
            next.sort_unstable();
            next.dedup();
            next
        })
    }

    fn is_terminal(&self, state: &ProverState) -> bool {
        self.with_state(state, |db, prog| db.tables[prog.terminal_rel].len() > 0)
    }

    fn goal_values(&self, state: &ProverState, role: RoleIdx) -> Vec<u8> {
        let r = self.roles[role];
        self.with_state(state, |db, prog| {
            let t = &db.tables[prog.goal_rel];
            let mut vals: Vec<u8> = (0..t.len())
                .map(|i| t.row(i))
                .filter(|row| row[0] == r)
                .filter_map(|row| {
                    db.pool
                        .is_const(row[1])
                        .then(|| self.game.symbols.name(db.pool.functor(row[1])).parse::<u8>().ok())
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
        self.db.lock().unwrap_or_else(|e| e.into_inner()).pool.to_term(*m)
    }

    fn parse_move(&self, term: &Term) -> Option<TermId> {
        // Interned, not only looked up: a move the rules derive only in states not
        // yet visited (a replay's later moves, an opponent's move) has no id yet.
        self.db.lock().unwrap_or_else(|e| e.into_inner()).pool.from_term(term)
    }
}
