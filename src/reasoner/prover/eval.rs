//! Evaluation: the mutable tables behind the prover's lock, loading a state
//! and a joint move into them, and running components and rules (the joins).
//! A literal over a relation the goal-directed strategy tables joins with the
//! answers of the call it makes (calls.rs).

use super::compile::{Access, CRule, Comp, Lit, Program};
use super::table::{Table, INDEX_MIN_ROWS};
use super::topdown::{CallRef, TopDown};
use super::{ProverState, RelId};
use crate::reasoner::pattern::{Pat, Resolved, UNBOUND};
use crate::reasoner::terms::{TermId, TermPool};

/// How many recently loaded states keep their rows, and how many term ids they
/// may hold together (256 MB).
pub(super) const RECENT_STATES: usize = 8;
pub(super) const RECENT_CELLS: usize = 64 << 20;

/// Mutable evaluation state, behind the prover's lock.
pub(super) struct Db {
    pub(super) pool: TermPool,
    pub(super) tables: Vec<Table>,
    pub(super) hasher: hashbrown::DefaultHashBuilder,
    /// The state whose rows are in the tables, and the rows of states
    /// loaded before.
    pub(super) loaded: Loaded,
    /// Scratch for bindings and derived tuples.
    pub(super) bindings: Vec<TermId>,
    pub(super) scratch: Vec<TermId>,
    /// During a semi-naive round: (body position, first row, end row) of the
    /// literal restricted to the previous round's new rows.
    pub(super) delta: Option<(usize, usize, usize)>,
    /// While computing static relations: stop when one grows past the guard.
    pub(super) guard: bool,
    pub(super) overflow: Option<RelId>,
    /// The join under way needs one output only (a call with every argument
    /// bound: its one possible answer), and `found` says it has it.
    pub(super) once: bool,
    pub(super) found: bool,
    pub(super) work: Work,
    /// The goal-directed strategy's calls and plans, when it is the one
    /// used ([`super::topdown`]); bottom-up otherwise.
    pub(super) td: Option<Box<TopDown>>,
    /// Whether the goal-directed strategy is the one in use.
    pub(super) topdown: bool,
}

/// The state whose state-phase relations are in the tables, and the rows of
/// the states loaded before it.
#[derive(Default)]
pub(super) struct Loaded {
    pub(super) state: Option<ProverState>,
    /// Which state components have run for it (they run when a question
    /// needs them, see [`Db::ensure`]).
    pub(super) done: Vec<bool>,
    /// The state-phase rows of states loaded before, newest first (see
    /// [`Db::load_state`]), and the term ids they hold together.
    pub(super) recent: std::collections::VecDeque<(ProverState, Vec<Vec<TermId>>)>,
    pub(super) recent_cells: usize,
}

impl Loaded {
    /// No state loaded, none remembered.
    pub(super) fn forget(&mut self) {
        self.state = None;
        self.recent.clear();
        self.recent_cells = 0;
    }
}

/// The evaluation's work: join steps, derived tuples and calls, each
/// weighted by what it costs.
#[derive(Default)]
pub(super) struct Work {
    /// Left before [`super::Prover::bounded`] gives up (none: no bound).
    pub(super) left: Option<u64>,
    /// Done so far (the strategies' trial compares it).
    pub(super) done: u64,
    /// Charges since the static computation last looked at its cancel
    /// flag ([`crate::cancel`]), and whether it was cancelled.
    pub(super) polls: u32,
    pub(super) cancelled: bool,
}

/// Charges between two looks at the cancel flag while static relations are
/// computed.
const CANCEL_POLL: u32 = 4096;

/// One rule's join under way: the rule, its variables' bindings (what the
/// join binds on the way down it unbinds on the way back) and the head
/// tuples derived so far.
pub(super) struct Join<'a> {
    pub(super) rule: &'a CRule,
    pub(super) b: &'a mut [TermId],
    pub(super) out: &'a mut Vec<TermId>,
}

/// What storing a derived tuple costs beside a join step (hashing it into
/// its table, and taking it out again with the state), for the work count
/// that compares the prover's strategies.
pub(super) const TUPLE_WORK: u64 = 4;

/// How many term ids one static relation (or one rule's output) may hold: about
/// 120 MB, far above real games' needs (checkers' largest static table holds a
/// few hundred thousand) and far below what exhausts memory.
pub(super) const MAX_STATIC_CELLS: usize = 30_000_000;

impl Db {
    /// Empty tables of the given arities.
    pub(super) fn new(pool: TermPool, arities: &[usize]) -> Db {
        Db {
            pool,
            tables: arities.iter().map(|&a| Table::new(a)).collect(),
            hasher: hashbrown::DefaultHashBuilder::default(),
            loaded: Loaded::default(),
            bindings: Vec::new(),
            scratch: Vec::new(),
            delta: None,
            guard: false,
            overflow: None,
            once: false,
            found: false,
            work: Work::default(),
            td: None,
            topdown: false,
        }
    }

    /// Computes the static relations (the rows every state keeps); `Err`
    /// with the relation that grew past [`MAX_STATIC_CELLS`].
    pub(super) fn run_static(&mut self, prog: &Program, comps: &[Comp]) -> Result<(), RelId> {
        self.guard = true;
        for comp in comps {
            self.run_component(prog, comp);
            if let Some(rel) = self.overflow {
                return Err(rel);
            }
        }
        self.guard = false;
        for t in self.tables.iter_mut() {
            t.static_len = t.len();
            t.state_len = t.len();
        }
        Ok(())
    }

    /// Makes `state` the loaded one. The rows of the state it replaces are
    /// kept (a few states, [`RECENT_CELLS`] term ids at most): a search that
    /// goes back and forth between a state and its children gets them back
    /// by re-inserting rows instead of running the rules again.
    pub(super) fn load_state(&mut self, prog: &Program, state: &ProverState) {
        if self.loaded.state.as_ref() == Some(state) {
            return;
        }
        let h = self.hasher;
        if let Some(old) = self.loaded.state.take() {
            self.remember(prog, old);
        }
        if let Some(td) = self.td.as_mut() {
            td.clear_state();
        }
        for &r in &prog.dynamic_rels {
            let t = &mut self.tables[r];
            let keep = t.static_len;
            t.truncate(&h, keep);
        }
        if let Some(i) = self.loaded.recent.iter().position(|(s, _)| s == state) {
            let (_, rows) = &self.loaded.recent[i];
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
            self.loaded.done.fill(true);
        } else {
            for &f in state {
                self.tables[prog.true_rel].insert(&h, &[f]);
            }
            self.loaded.done.fill(false);
        }
        for &r in &prog.dynamic_rels {
            let t = &mut self.tables[r];
            t.state_len = t.len();
        }
        self.loaded.state = Some(state.clone());
    }

    /// Runs the state components in `needs` (all when `None`) that have not
    /// run for the loaded state. Move-phase rows exist only once all have
    /// run ([`Db::load_move`] asks for all), so the new rows stay below them.
    pub(super) fn ensure(&mut self, prog: &Program, needs: Option<&[usize]>) {
        if self.topdown {
            return;
        }
        let count = needs.map_or(prog.state_comps.len(), <[usize]>::len);
        let mut ran = false;
        for k in 0..count {
            let i = needs.map_or(k, |n| n[k]);
            if !self.loaded.done[i] {
                self.run_component(prog, &prog.state_comps[i]);
                self.loaded.done[i] = true;
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
    pub(super) fn remember(&mut self, prog: &Program, state: ProverState) {
        let loaded = &self.loaded;
        if !loaded.done.iter().all(|&d| d) || loaded.recent.iter().any(|(s, _)| *s == state) {
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
        let loaded = &mut self.loaded;
        loaded.recent_cells += cells;
        loaded.recent.push_front((state, rows));
        while loaded.recent.len() > RECENT_STATES || loaded.recent_cells > RECENT_CELLS {
            if let Some((_, rows)) = loaded.recent.pop_back() {
                loaded.recent_cells -= rows.iter().map(Vec::len).sum::<usize>();
            }
        }
    }

    pub(super) fn load_move(&mut self, prog: &Program, roles: &[TermId], joint: &[TermId]) {
        let h = self.hasher;
        for &r in &prog.dynamic_rels {
            let t = &mut self.tables[r];
            let keep = t.state_len;
            t.truncate(&h, keep);
        }
        for (&r, &m) in roles.iter().zip(joint) {
            self.tables[prog.does_rel].insert(&h, &[r, m]);
        }
        if self.topdown {
            if let Some(td) = self.td.as_mut() {
                td.clear_moves();
            }
            return;
        }
        for comp in &prog.move_comps {
            self.run_component(prog, comp);
        }
    }

    pub(super) fn run_component(&mut self, prog: &Program, comp: &Comp) {
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
    pub(super) fn run_rule(&mut self, rule: &CRule) -> bool {
        let mut bindings = std::mem::take(&mut self.bindings);
        bindings.clear();
        bindings.resize(rule.nvars, UNBOUND);
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        // Every instance is wanted, whatever call this runs under.
        let saved = (self.once, self.found);
        (self.once, self.found) = (false, false);
        let mut join = Join {
            rule,
            b: &mut bindings,
            out: &mut out,
        };
        self.join(&mut join, 0);
        (self.once, self.found) = saved;
        let h = self.hasher;
        let arity = rule.head_args.len();
        self.charge((out.len() / arity.max(1)) as u64 * TUPLE_WORK, rule.head);
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

    /// Joins the body of `j.rule` from literal `i` on under `j.b`, each
    /// instance that gets to the end of the body adding its head's tuple to
    /// `j.out`.
    pub(super) fn join(&mut self, j: &mut Join, i: usize) {
        if self.overflow.is_some() || self.found {
            return;
        }
        if !self.charge(1, j.rule.head) {
            return;
        }
        let Some(lit) = j.rule.body.get(i) else {
            self.emit(j);
            return;
        };
        match lit {
            Lit::Distinct(a, c) => {
                let (x, y) = (a.find(j.b, &self.pool), c.find(j.b, &self.pool));
                // An instance that is not in the pool differs from every term in it.
                if x != y || x.is_none() {
                    self.join(j, i + 1);
                }
            }
            Lit::Not { rel, args } if self.is_tabled(*rel) => {
                if !self.call_matches(*rel, args, j.b) {
                    self.join(j, i + 1);
                }
            }
            Lit::Pos { rel, args, .. } if self.is_tabled(*rel) => {
                self.join_answers(j, i, *rel, args);
            }
            Lit::Not { rel, args } => {
                if !self.exists(*rel, args, j.b) {
                    self.join(j, i + 1);
                }
            }
            Lit::Pos { rel, args, access } => {
                self.join_rows(j, i, *rel, args, access.as_ref());
            }
        }
    }

    /// The end of the body: the head's tuple under the bindings goes to the
    /// output (and a join that wants one answer has it).
    #[inline]
    fn emit(&mut self, j: &mut Join) {
        self.found = self.once;
        let rule = j.rule;
        if rule.head_args.is_empty() {
            j.out.push(0);
        } else {
            for p in &rule.head_args {
                let id = p.build(j.b, &mut self.pool);
                j.out.push(id);
            }
            if self.guard && j.out.len() > MAX_STATIC_CELLS {
                self.overflow = Some(rule.head);
            }
        }
    }

    /// Whether the call a negated literal over tabled `rel` makes has an
    /// answer matching `args` under `b`.
    #[inline]
    fn call_matches(&mut self, rel: RelId, args: &[Pat], b: &mut [TermId]) -> bool {
        match self.literal_call(rel, args, b) {
            None => false,
            Some(c) => {
                // Stratified: what is negated never waits on the caller.
                debug_assert!(self.td.as_ref().is_some_and(|td| td.is_complete(c)));
                self.answered(c, args, b)
            }
        }
    }

    /// Joins literal `i`, `rel(args)` over tabled `rel`, on with each answer
    /// of the call it makes.
    fn join_answers(&mut self, j: &mut Join, i: usize, rel: RelId, args: &[Pat]) {
        let Some(c) = self.literal_call(rel, args, j.b) else {
            return;
        };
        let mut trail: Vec<u16> = Vec::new();
        let mut r = 0;
        // Answers added while we iterate (recursion) are seen in the
        // leader's next round.
        let n = self.td.as_ref().expect("tabled").answers(c).len();
        while r < n {
            trail.clear();
            let ok = {
                let t = self.td.as_ref().expect("tabled").answers(c);
                t.row(r)
                    .iter()
                    .zip(args)
                    .all(|(&v, p)| p.unify(v, j.b, &mut trail, &self.pool))
            };
            if ok {
                self.join(j, i + 1);
            }
            for &v in trail.iter() {
                j.b[v as usize] = UNBOUND;
            }
            if self.found {
                break;
            }
            r += 1;
        }
    }

    /// Joins literal `i`, `rel(args)` over `rel`'s table: a membership test
    /// when every argument is bound, else the rows an index on `access`
    /// gives, or every row.
    fn join_rows(
        &mut self,
        j: &mut Join,
        i: usize,
        rel: RelId,
        args: &[Pat],
        access: Option<&Access>,
    ) {
        if args.is_empty() {
            if self.tables[rel].len() > 0 {
                self.join(j, i + 1);
            }
            return;
        }
        let mut trail: Vec<u16> = Vec::new();
        // In a semi-naive round, one recursive literal sees only new rows.
        let (lo, hi) = match self.delta {
            Some((d, lo, hi)) if d == i => (lo, hi),
            _ => (0, usize::MAX),
        };
        // Every argument bound: a membership test on the table's set
        // (an index keyed on whole rows would hold a bucket per row).
        if access.is_some() {
            if let Some(tuple) = self.bound_tuple(args, j.b) {
                let t = &self.tables[rel];
                if let Some(r) = t.position(&self.hasher, &tuple) {
                    if (lo..hi).contains(&r) {
                        self.join(j, i + 1);
                    }
                }
                return;
            }
        }
        match access {
            Some(acc) if self.tables[rel].len() >= INDEX_MIN_ROWS => {
                let mut key = Vec::with_capacity(acc.parts.len());
                for p in &acc.parts {
                    match p.find(j.b, &self.pool) {
                        Some(v) => key.push(v),
                        None => return,
                    }
                }
                let all = self.tables[rel].lookup(&self.pool, acc.slot, &key);
                let from = all.partition_point(|&r| (r as usize) < lo);
                let to = all.partition_point(|&r| (r as usize) < hi);
                let rows: Vec<u32> = all[from..to].to_vec();
                for r in rows {
                    self.try_row(j, i, rel, r as usize, args, &mut trail);
                }
            }
            _ => {
                // Rows added while we iterate (recursion) are seen next round.
                let n = self.tables[rel].len().min(hi);
                for r in lo..n {
                    self.try_row(j, i, rel, r, args, &mut trail);
                }
            }
        }
    }

    /// Joins on past literal `i`, `rel(args)`, with row `r` of `rel`'s
    /// table when it matches.
    #[inline]
    fn try_row(
        &mut self,
        j: &mut Join,
        i: usize,
        rel: RelId,
        r: usize,
        args: &[Pat],
        trail: &mut Vec<u16>,
    ) {
        trail.clear();
        let t = &self.tables[rel];
        let row = &t.rows[r * t.arity..(r + 1) * t.arity];
        let ok = args
            .iter()
            .zip(row)
            .all(|(p, &v)| p.unify(v, j.b, trail, &self.pool));
        if ok {
            // The join below keeps trails of its own: this one still holds
            // what the row bound when it returns.
            self.join(j, i + 1);
        }
        for &v in trail.iter() {
            j.b[v as usize] = UNBOUND;
        }
    }

    /// Counts `units` of work (a join step is one) against the bound of
    /// [`super::Prover::bounded`]; false, with `overflow` set to `rel`, when
    /// the bound is spent, or when the static computation was cancelled
    /// ([`crate::cancel`]).
    #[inline]
    pub(super) fn charge(&mut self, units: u64, rel: RelId) -> bool {
        self.work.done += units;
        if self.guard {
            self.work.polls += 1;
            if self.work.polls >= CANCEL_POLL {
                self.work.polls = 0;
                if crate::cancel::requested() {
                    self.work.cancelled = true;
                    self.overflow = Some(rel);
                    return false;
                }
            }
        }
        if let Some(left) = self.work.left.as_mut() {
            if *left < units {
                *left = 0;
                self.overflow = Some(rel);
                return false;
            }
            *left -= units;
        }
        true
    }

    /// Whether `rel` is a static relation computed on demand (a game read
    /// top-down).
    pub(super) fn is_tabled_static(&self, rel: RelId) -> bool {
        self.td
            .as_ref()
            .is_some_and(|td| td.tabled[rel] && td.is_static(rel))
    }

    /// Whether `rel` is answered by calls (the goal-directed strategy).
    #[inline]
    pub(super) fn is_tabled(&self, rel: RelId) -> bool {
        self.topdown && self.td.as_ref().is_some_and(|td| td.tabled[rel])
    }

    /// Whether some answer of call `c` matches `args` under `b` (`b` is
    /// left as it was).
    pub(super) fn answered(&self, c: CallRef, args: &[Pat], b: &mut [TermId]) -> bool {
        let t = self.td.as_ref().expect("tabled").answers(c);
        let mut trail = Vec::new();
        (0..t.len()).any(|r| {
            trail.clear();
            let ok = t
                .row(r)
                .iter()
                .zip(args)
                .all(|(&v, p)| p.unify(v, b, &mut trail, &self.pool));
            for &v in &trail {
                b[v as usize] = UNBOUND;
            }
            ok
        })
    }

    /// The arguments as one ground tuple, when all are bound and exist.
    pub(super) fn bound_tuple(&self, args: &[Pat], b: &[TermId]) -> Option<Vec<TermId>> {
        args.iter().map(|p| p.find(b, &self.pool)).collect()
    }

    /// Whether some tuple of `rel` matches `args` (unbound variables are free).
    pub(super) fn exists(&mut self, rel: RelId, args: &[Pat], b: &mut [TermId]) -> bool {
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
