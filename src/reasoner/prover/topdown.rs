//! Goal-directed evaluation: the prover answers a question by calling the
//! relations it needs with the arguments it knows, and nothing else.
//!
//! Bottom-up evaluation computes every tuple of every relation a question
//! depends on. Amazons asks `(legal white ?m)`, and bottom-up computes
//! `queenMoveIgnoring` for every cell pair and every ignored cell (300,000
//! tuples per state) where the legal moves only ever ask about the pairs a
//! queen can reach. Here a positive or negative literal over a derived
//! relation of the state becomes a *call*: the relation, the argument
//! positions bound at that point of the join, and their values. Each call is
//! tabled (its answers kept, per state for state relations, per joint move
//! for those that read `does`), so a call asked twice costs a lookup, and the
//! rules of a call run with its bound arguments already in their head, in a
//! join order compiled for that binding pattern. `true`, `does` and the
//! static relations (computed once, bottom-up) are read from their tables as
//! before.
//!
//! Recursion is evaluated to a fixpoint per strongly connected set of calls
//! (linear tabling): a call that consumes the answers of a call still being
//! evaluated (an ancestor on the stack) is incomplete; the lowest such
//! ancestor, the *leader*, runs its rules again, re-evaluating the incomplete
//! calls below it, until a round adds no answer, and then every call of the
//! set is complete. Negation only ever reads complete calls: a stratified
//! program never negates a relation that depends on the caller, so a negated
//! call is evaluated to completion before it is read.

use std::sync::Arc;

use std::hash::BuildHasher;

use hashbrown::HashMap;

use super::compile::{compile_called, register_slots, CRule, Relations};
use super::eval::{Db, CALL_WORK, TUPLE_WORK};
use super::table::Table;
use super::RelId;
use crate::gdl::{kw, Game, Phase, Relation, Rule};
use crate::reasoner::pattern::{Pat, Resolved, UNBOUND};
use crate::reasoner::terms::{TermId, TermPool};

/// Calls nested deeper than this stop the evaluation (see [`Db::call`]).
/// A call takes a few hundred bytes of the thread's stack; list programs
/// written for top-down provers nest as deep as their lists are long.
pub(super) const MAX_CALL_DEPTH: usize = 1_000;

/// Emptied answer tables a store keeps for reuse.
const MAX_SPARE_TABLES: usize = 100_000;

/// Static calls kept across states before they are dropped (they are only a
/// cache: each is computed again when asked).
const MAX_STATIC_CALLS: usize = 200_000;

/// Which argument positions of a call are bound (bit `i`: position `i`).
/// Positions from 64 on are treated as free (their literal filters answers).
pub(super) type Mask = u64;

/// Whether `mask` binds every one of `arity` positions: the call has one
/// possible answer, so its first is its last.
fn bound_all(mask: Mask, arity: usize) -> bool {
    match arity {
        0 => true,
        1..=64 => mask == u64::MAX >> (64 - arity),
        _ => false,
    }
}

/// Which store a call is kept in: how long its answers hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Life {
    /// For every state (a static relation the prover computes on demand).
    Game,
    State,
    Move,
}

/// A call's place: its store and its index there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct CallRef {
    life: Life,
    ix: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// On the evaluation stack at this depth.
    Active(u32),
    /// Evaluated in `round`, but it consumed the answers of a call that was
    /// still active (at stack depth `low`): not final until its leader is done.
    Incomplete {
        round: u64,
        low: u32,
    },
    Complete,
}

struct Call {
    rel: RelId,
    mask: Mask,
    /// Where the bound values are in [`Store::keys`].
    key: std::ops::Range<usize>,
    answers: Table,
    status: Status,
}

/// The calls of one phase, found by relation, mask and bound values (hashed
/// without building a key: a call is looked up far more often than made).
#[derive(Default)]
struct Store {
    index: hashbrown::HashTable<u32>,
    keys: Vec<TermId>,
    calls: Vec<Call>,
    /// Answer tables of calls forgotten, kept for reuse.
    spare: Vec<Table>,
}

impl Store {
    fn clear(&mut self) {
        self.index.clear();
        self.keys.clear();
        // The answer tables are kept, emptied, for the next state's calls:
        // a state makes thousands of calls, and allocating their tables
        // afresh cost a fifth of Corridor's time.
        for call in self.calls.drain(..) {
            if self.spare.len() < MAX_SPARE_TABLES {
                self.spare.push(call.answers);
            }
        }
    }

    /// An empty answer table of `arity`, reused when one is spare.
    fn table(&mut self, arity: usize) -> Table {
        match self.spare.pop() {
            Some(mut t) => {
                t.reset(arity);
                t
            }
            None => Table::new(arity),
        }
    }

    fn hash(h: &hashbrown::DefaultHashBuilder, rel: RelId, mask: Mask, key: &[TermId]) -> u64 {
        h.hash_one((rel, mask, key))
    }

    /// The call's index, made (with no answers) when new; true when new.
    fn find_or_add(
        &mut self,
        h: &hashbrown::DefaultHashBuilder,
        rel: RelId,
        mask: Mask,
        key: &[TermId],
        arity: usize,
    ) -> (u32, bool) {
        let hv = Store::hash(h, rel, mask, key);
        let (calls, keys) = (&self.calls, &self.keys);
        let same = |&ix: &u32| {
            let c = &calls[ix as usize];
            c.rel == rel && c.mask == mask && keys[c.key.clone()] == *key
        };
        if let Some(&ix) = self.index.find(hv, same) {
            return (ix, false);
        }
        let ix = self.calls.len() as u32;
        let answers = self.table(arity);
        let start = self.keys.len();
        self.keys.extend_from_slice(key);
        self.calls.push(Call {
            rel,
            mask,
            key: start..self.keys.len(),
            answers,
            // Round 0 is never current: a new call is evaluated at once.
            status: Status::Incomplete { round: 0, low: 0 },
        });
        let (calls, keys) = (&self.calls, &self.keys);
        self.index.insert_unique(hv, ix, |&i| {
            let c = &calls[i as usize];
            Store::hash(h, c.rel, c.mask, &keys[c.key.clone()])
        });
        (ix, true)
    }
}

/// A call under evaluation.
#[derive(Clone, Copy)]
struct Frame {
    /// The lowest stack depth of an unfinished call this one consumed.
    low: u32,
    /// Whether it consumed any call that was not complete.
    cyclic: bool,
}

/// The goal-directed evaluator's program and memo tables.
pub(super) struct TopDown {
    /// Relations answered by calls: derived, and changing with the state.
    pub(super) tabled: Vec<bool>,
    /// How long each tabled relation's calls hold.
    life: Vec<Life>,
    /// Rules (indices into the game's rules) per head relation.
    rules_of: Vec<Vec<usize>>,
    /// The game's rules, compiled per binding pattern when first called.
    rules: Vec<Rule>,
    /// Join every body in the order written (see [`TopDown::new`]).
    in_order: bool,
    plans: HashMap<(usize, Mask), Arc<CRule>>,
    /// Per relation and mask, the plans of all its rules.
    rel_plans: HashMap<(RelId, Mask), Arc<Vec<CRule>>>,
    rels: Relations,
    sizes: Vec<f64>,
    statics: Store,
    state: Store,
    moves: Store,
    stack: Vec<Frame>,
    /// Rounds of leaders' fixpoint iterations so far.
    round: u64,
    /// Answers added so far (a leader stops when a round adds none).
    added: u64,
    /// Incomplete calls waiting for their leader.
    members: Vec<CallRef>,
    /// Spare buffers for derived tuples, and for bindings (all unbound).
    buffers: Vec<Vec<TermId>>,
    bindings: Vec<Vec<TermId>>,
}

impl TopDown {
    /// The evaluator of `game`'s rules. With `lazy`, static relations with
    /// rules are tabled too, computed when called and kept for the game
    /// (the game has rules only a top-down evaluation reads, see
    /// [`Game::top_down`]), and every rule is joined in the order written,
    /// as the top-down prover the game was written for joins it.
    pub(super) fn new(game: &Game, rels: Relations, sizes: Vec<f64>, lazy: bool) -> TopDown {
        let n = rels.arities.len();
        let mut tabled = vec![false; n];
        let mut life = vec![Life::State; n];
        let mut rules_of = vec![Vec::new(); n];
        for (i, r) in game.rules.iter().enumerate() {
            let rel = r.head.relation().expect("heads are atoms");
            let id = rels.id(rel);
            rules_of[id].push(i);
            let fact = r.body.is_empty() && r.head.is_ground();
            if game.rule_phase[i] != Phase::Static || (lazy && !fact) {
                tabled[id] = true;
            }
        }
        for (rel, phase) in &game.relations {
            if let Some(id) = rels.get(rel) {
                life[id] = match phase {
                    Phase::Static => Life::Game,
                    Phase::State => Life::State,
                    Phase::Move => Life::Move,
                };
            }
        }
        for kw in [(kw::TRUE, 1), (kw::DOES, 2)] {
            let id = rels.id(Relation {
                name: kw.0,
                arity: kw.1,
            });
            tabled[id] = false;
        }
        TopDown {
            tabled,
            life,
            rules_of,
            rules: game.rules.clone(),
            in_order: lazy,
            plans: HashMap::new(),
            rel_plans: HashMap::new(),
            rels,
            sizes,
            state: Store::default(),
            moves: Store::default(),
            statics: Store::default(),
            stack: Vec::new(),
            round: 0,
            added: 0,
            members: Vec::new(),
            buffers: Vec::new(),
            bindings: Vec::new(),
        }
    }

    pub(super) fn is_static(&self, rel: RelId) -> bool {
        self.life[rel] == Life::Game
    }

    /// Forgets every call of the state (a new state is loaded), and the
    /// static calls too once they hold more than [`MAX_STATIC_CALLS`]: a
    /// list program makes new static calls over the lists of every state.
    pub(super) fn clear_state(&mut self) {
        if self.statics.calls.len() > MAX_STATIC_CALLS {
            self.statics.clear();
        }
        self.state.clear();
        self.moves.clear();
        self.stack.clear();
        self.members.clear();
    }

    /// Forgets the calls of the joint move (a new one is loaded).
    pub(super) fn clear_moves(&mut self) {
        self.moves.clear();
    }

    fn store(&mut self, life: Life) -> &mut Store {
        match life {
            Life::Game => &mut self.statics,
            Life::State => &mut self.state,
            Life::Move => &mut self.moves,
        }
    }

    fn store_of(&self, life: Life) -> &Store {
        match life {
            Life::Game => &self.statics,
            Life::State => &self.state,
            Life::Move => &self.moves,
        }
    }

    /// Forgets every call, the static ones too (evaluation was cut short,
    /// so some may be incomplete).
    pub(super) fn clear_all(&mut self) {
        self.clear_state();
        self.statics.clear();
    }

    fn call_mut(&mut self, c: CallRef) -> &mut Call {
        &mut self.store(c.life).calls[c.ix as usize]
    }

    /// The answers of a call.
    pub(super) fn answers(&self, c: CallRef) -> &Table {
        &self.store_of(c.life).calls[c.ix as usize].answers
    }

    pub(super) fn is_complete(&self, c: CallRef) -> bool {
        self.store_of(c.life).calls[c.ix as usize].status == Status::Complete
    }

    /// The plans of every rule of `rel` called with the positions in `mask`
    /// bound, in the order of the rules.
    fn plans_for(
        &mut self,
        rel: RelId,
        mask: Mask,
        pool: &mut TermPool,
        tables: &mut [Table],
    ) -> Arc<Vec<CRule>> {
        if let Some(p) = self.rel_plans.get(&(rel, mask)) {
            return Arc::clone(p);
        }
        let rules = self.rules_of[rel].clone();
        let plans: Vec<CRule> = rules
            .into_iter()
            .map(|ri| (*self.plan(ri, mask, pool, tables)).clone())
            .collect();
        let plans = Arc::new(plans);
        self.rel_plans.insert((rel, mask), Arc::clone(&plans));
        plans
    }

    /// The plan of rule `ri` called with the head positions in `mask` bound.
    fn plan(
        &mut self,
        ri: usize,
        mask: Mask,
        pool: &mut TermPool,
        tables: &mut [Table],
    ) -> Arc<CRule> {
        if let Some(p) = self.plans.get(&(ri, mask)) {
            return Arc::clone(p);
        }
        let rels = &self.rels;
        let rel_of = |r: Relation| rels.id(r);
        let mut plan = compile_called(
            &self.rules[ri],
            pool,
            &rel_of,
            &self.sizes,
            mask,
            self.in_order,
        );
        register_slots(std::slice::from_mut(&mut plan), tables);
        let plan = Arc::new(plan);
        self.plans.insert((ri, mask), Arc::clone(&plan));
        plan
    }

    /// Whether call `c` (made with `mask`) binds every argument and has its
    /// answer: then it is final, however far its recursion got.
    fn saturated(&self, c: CallRef, mask: Mask) -> bool {
        let call = &self.store_of(c.life).calls[c.ix as usize];
        call.answers.len() > 0 && bound_all(mask, self.rels.arities[call.rel])
    }

    /// Records that the call on top of the stack consumed an unfinished call
    /// whose evaluation reaches down to stack depth `low`.
    fn depends(&mut self, low: u32) {
        if let Some(f) = self.stack.last_mut() {
            f.low = f.low.min(low);
            f.cyclic = true;
        }
    }
}

impl Db {
    fn td(&mut self) -> &mut TopDown {
        self.td.as_mut().expect("the goal-directed strategy")
    }

    /// Calls `rel` with the positions in `mask` bound to `key` (in order),
    /// evaluating it unless it is complete or being evaluated.
    pub(super) fn call(&mut self, rel: RelId, mask: Mask, key: &[TermId]) -> CallRef {
        self.charge(CALL_WORK, rel);
        let h = self.hasher;
        let td = self.td();
        let life = td.life[rel];
        let arity = td.rels.arities[rel];
        let (ix, _) = td.store(life).find_or_add(&h, rel, mask, key, arity);
        let c = CallRef { life, ix };
        if td.saturated(c, mask) {
            // Its one answer is in, and no round can take it back.
            return c;
        }
        let current = td.round + 1;
        match td.call_mut(c).status {
            Status::Complete => return c,
            Status::Active(depth) => {
                td.depends(depth);
                return c;
            }
            Status::Incomplete { round, low } if round == current => {
                td.depends(low);
                return c;
            }
            Status::Incomplete { .. } => {}
        }
        if td.stack.len() >= MAX_CALL_DEPTH {
            // Recursion this deep is a program that does not end top-down
            // (a call that asks ever deeper terms): stop it as a spent work
            // bound stops it, rather than overflow the thread's stack.
            self.overflow = Some(rel);
            return c;
        }
        self.solve(rel, mask, key, c);
        c
    }

    /// Evaluates a call: a leader to its fixpoint, a call that depends on an
    /// active ancestor for one round.
    fn solve(&mut self, rel: RelId, mask: Mask, key: &[TermId], c: CallRef) {
        let td = self.td();
        let depth = td.stack.len() as u32;
        td.stack.push(Frame {
            low: depth,
            cyclic: false,
        });
        let mark = td.members.len();
        td.call_mut(c).status = Status::Active(depth);
        loop {
            let before = self.td().added;
            self.run_rules(rel, mask, key, c);
            let stopped = self.overflow.is_some();
            let td = self.td();
            let f = *td.stack.last().expect("the call's frame");
            if td.saturated(c, mask) {
                // Final, leader or not. The calls it left incomplete may
                // lack answers that rounds it no longer runs would add:
                // they are evaluated afresh when next called (round 0 is
                // never current).
                for i in mark..td.members.len() {
                    let m = td.members[i];
                    td.call_mut(m).status = Status::Incomplete { round: 0, low: 0 };
                }
                td.members.truncate(mark);
                td.call_mut(c).status = Status::Complete;
                td.stack.pop();
                return;
            }
            if f.low < depth {
                // The current round is numbered one above the rounds done.
                let round = td.round + 1;
                td.call_mut(c).status = Status::Incomplete { round, low: f.low };
                td.members.push(c);
                td.stack.pop();
                td.depends(f.low);
                return;
            }
            if !f.cyclic || td.added == before || stopped {
                break;
            }
            td.round += 1;
            td.stack.last_mut().expect("the call's frame").cyclic = false;
        }
        let td = self.td();
        for i in mark..td.members.len() {
            let m = td.members[i];
            td.call_mut(m).status = Status::Complete;
        }
        td.members.truncate(mark);
        td.call_mut(c).status = Status::Complete;
        td.stack.pop();
    }

    /// Runs every rule of `rel` with the call's bound arguments in its head.
    fn run_rules(&mut self, rel: RelId, mask: Mask, key: &[TermId], c: CallRef) {
        let td = self.td.as_mut().expect("the goal-directed strategy");
        let plans = td.plans_for(rel, mask, &mut self.pool, &mut self.tables);
        // Buffers are reused: a playout makes thousands of calls a state.
        let mut out = self.td().buffers.pop().unwrap_or_default();
        let mut b = self.td().bindings.pop().unwrap_or_default();
        let mut trail = Vec::new();
        let arity = self.td().rels.arities[rel];
        let saved = (self.once, self.found);
        self.once = bound_all(mask, arity);
        for plan in plans.iter() {
            self.found = false;
            // Rules whose head cannot take the call's values are passed over
            // before any binding (a relation of many rules, one per case).
            let mut bound = key.iter();
            let fits = plan.head_args.iter().enumerate().all(|(j, p)| {
                if j >= 64 || mask & (1 << j) == 0 {
                    return true;
                }
                let v = *bound.next().expect("a value per bound position");
                p.may_match(v, &self.pool)
            });
            if !fits {
                continue;
            }
            // Every slot is unbound between rules (the join unbinds what it
            // binds, the head's bindings are undone below): the buffer is
            // only ever grown.
            if b.len() < plan.nvars {
                b.resize(plan.nvars, UNBOUND);
            }
            let mut bound = key.iter();
            trail.clear();
            let ok = plan.head_args.iter().enumerate().all(|(j, p)| {
                if j >= 64 || mask & (1 << j) == 0 {
                    return true;
                }
                let v = *bound.next().expect("a value per bound position");
                p.unify(v, &mut b, &mut trail, &self.pool)
            });
            out.clear();
            if ok {
                self.join(plan, 0, &mut b, &mut out);
            }
            for &v in &trail {
                b[v as usize] = UNBOUND;
            }
            if !ok {
                continue;
            }
            let h = self.hasher;
            let arity = plan.head_args.len();
            self.charge((out.len() / arity.max(1)) as u64 * TUPLE_WORK, rel);
            let td = self.td();
            let answers = &mut td.call_mut(c).answers;
            let mut added = 0;
            if arity == 0 {
                if !out.is_empty() && answers.insert(&h, &[]) {
                    added += 1;
                }
            } else {
                for t in out.chunks(arity) {
                    if answers.insert(&h, t) {
                        added += 1;
                    }
                }
            }
            td.added += added;
            if self.overflow.is_some() || self.found {
                // A bound call's answer is in: its other rules can add nothing.
                break;
            }
        }
        (self.once, self.found) = saved;
        let td = self.td();
        td.buffers.push(out);
        td.bindings.push(b);
    }

    /// A question's call when the goal-directed strategy is in use (`None`:
    /// bottom-up, the answer is `rel`'s table).
    pub(super) fn ask(&mut self, rel: RelId, mask: Mask, key: &[TermId]) -> Option<CallRef> {
        self.topdown.then(|| self.call(rel, mask, key))
    }

    /// The rows answering a question: the call's, or `rel`'s table.
    pub(super) fn answers(&self, c: Option<CallRef>, rel: RelId) -> &Table {
        match (c, self.td.as_ref()) {
            (Some(c), Some(td)) => td.answers(c),
            _ => &self.tables[rel],
        }
    }

    /// The call a literal over a tabled relation makes under bindings `b`
    /// (always one: `Option` for the callers' sake).
    pub(super) fn literal_call(
        &mut self,
        rel: RelId,
        args: &[Pat],
        b: &[TermId],
    ) -> Option<CallRef> {
        // The key on the stack for the usual arities.
        const INLINE: usize = 16;
        let mut mask: Mask = 0;
        let mut inline = [0; INLINE];
        let mut heap = Vec::new();
        let mut n = 0;
        for (j, p) in args.iter().enumerate().take(64) {
            let v = match p.resolve(b, &self.pool) {
                Resolved::Known(v) => v,
                // A term no rule has built yet: the callee may still hold
                // it (a list program appends to it), so it is built.
                Resolved::Absent => p.build(b, &mut self.pool),
                Resolved::Unknown => continue,
            };
            mask |= 1 << j;
            if args.len() <= INLINE {
                inline[n] = v;
            } else {
                heap.push(v);
            }
            n += 1;
        }
        let key = if args.len() <= INLINE {
            &inline[..n]
        } else {
            &heap[..]
        };
        Some(self.call(rel, mask, key))
    }
}
