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
use super::table::Table;
use super::RelId;
use crate::gdl::{kw, Game, Phase, Relation, Rule, Term};
use crate::reasoner::terms::{TermId, TermPool};

/// Calls nested deeper than this stop the evaluation (see [`Lookup::TooDeep`]).
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
pub(super) fn bound_all(mask: Mask, arity: usize) -> bool {
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
    /// Whether static relations are computed by calls, on demand (their
    /// tables stay empty: the bottom-up strategy cannot read them).
    pub(super) lazy: bool,
    /// How long each tabled relation's calls hold.
    life: Vec<Life>,
    planner: Planner,
    statics: Store,
    state: Store,
    moves: Store,
    fix: Fixpoint,
    /// Spare buffers for derived tuples, and for bindings (all unbound).
    buffers: Vec<Vec<TermId>>,
    bindings: Vec<Vec<TermId>>,
}

/// The game's rules, compiled per binding pattern of their head when first
/// called.
struct Planner {
    /// Rules (indices into the game's rules) per head relation.
    rules_of: Vec<Vec<usize>>,
    rules: Vec<Rule>,
    /// Join every body in the order written (see [`TopDown::new`]).
    in_order: bool,
    plans: HashMap<(usize, Mask), Arc<CRule>>,
    /// Per relation and mask, the plans of all its rules.
    rel_plans: HashMap<(RelId, Mask), Arc<Vec<CRule>>>,
    rels: Relations,
    sizes: Vec<f64>,
    /// The initial state's fluents, by which plans estimate `true` literals.
    init: Vec<Term>,
}

/// Linear tabling's bookkeeping: the calls under evaluation, the leaders'
/// rounds, and the incomplete calls waiting for their leader.
#[derive(Default)]
struct Fixpoint {
    stack: Vec<Frame>,
    /// Rounds of leaders' fixpoint iterations so far.
    round: u64,
    /// Answers added so far (a leader stops when a round adds none).
    added: u64,
    /// Incomplete calls waiting for their leader.
    members: Vec<CallRef>,
}

/// What a call made needs before its answers are read.
pub(super) enum Lookup {
    /// Nothing: it is complete, or its answers are final, or it is being
    /// evaluated (the caller now depends on it).
    Ready,
    /// Its rules must run now ([`TopDown::enter`]).
    Evaluate,
    /// It would nest deeper than [`MAX_CALL_DEPTH`].
    TooDeep,
}

/// Where a call's evaluation started: its stack depth, and the first of the
/// incomplete calls that wait for it.
#[derive(Clone, Copy)]
pub(super) struct Entered {
    depth: u32,
    mark: usize,
}

impl TopDown {
    /// The evaluator of `game`'s rules. With `lazy`, static relations with
    /// rules are tabled too, computed when called and kept for the game
    /// (the game has rules only a top-down evaluation reads, see
    /// [`Game::top_down`], or the prover was built lazily,
    /// [`super::Prover::try_lazy`]). With `in_order`, every rule is joined
    /// in the order written, as the top-down prover a game read top-down
    /// was written for joins it; without, the planner orders each rule's
    /// literals (rules written for bottom-up engines may put a negation
    /// before the literals that bind its variables).
    pub(super) fn new(
        game: &Game,
        rels: Relations,
        sizes: Vec<f64>,
        (lazy, in_order): (bool, bool),
    ) -> TopDown {
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
            lazy,
            life,
            planner: Planner {
                rules_of,
                rules: game.rules.clone(),
                in_order,
                plans: HashMap::new(),
                rel_plans: HashMap::new(),
                rels,
                sizes,
                init: game
                    .rules
                    .iter()
                    .filter(|r| r.is_fact() && r.head.name() == Some(kw::INIT))
                    .filter_map(|r| r.head.args().first().cloned())
                    .filter(Term::is_ground)
                    .collect(),
            },
            state: Store::default(),
            moves: Store::default(),
            statics: Store::default(),
            fix: Fixpoint::default(),
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
        self.fix.stack.clear();
        self.fix.members.clear();
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
    pub(super) fn plans_for(
        &mut self,
        rel: RelId,
        mask: Mask,
        pool: &mut TermPool,
        tables: &mut [Table],
    ) -> Arc<Vec<CRule>> {
        self.planner.plans_for(rel, mask, pool, tables)
    }

    /// The arity of `rel`.
    #[inline]
    pub(super) fn arity(&self, rel: RelId) -> usize {
        self.planner.rels.arities[rel]
    }

    /// Whether call `c` (made with `mask`) binds every argument and has its
    /// answer: then it is final, however far its recursion got.
    fn saturated(&self, c: CallRef, mask: Mask) -> bool {
        let call = &self.store_of(c.life).calls[c.ix as usize];
        call.answers.len() > 0 && bound_all(mask, self.arity(call.rel))
    }

    /// Records that the call on top of the stack consumed an unfinished call
    /// whose evaluation reaches down to stack depth `low`.
    fn depends(&mut self, low: u32) {
        if let Some(f) = self.fix.stack.last_mut() {
            f.low = f.low.min(low);
            f.cyclic = true;
        }
    }

    /// The call of `rel` with the positions in `mask` bound to `key` (in
    /// order), found or made, and what it needs.
    pub(super) fn lookup(
        &mut self,
        h: &hashbrown::DefaultHashBuilder,
        rel: RelId,
        mask: Mask,
        key: &[TermId],
    ) -> (CallRef, Lookup) {
        let life = self.life[rel];
        let arity = self.arity(rel);
        let (ix, _) = self.store(life).find_or_add(h, rel, mask, key, arity);
        let c = CallRef { life, ix };
        if self.saturated(c, mask) {
            // Its one answer is in, and no round can take it back.
            return (c, Lookup::Ready);
        }
        let current = self.fix.round + 1;
        match self.call_mut(c).status {
            Status::Complete => return (c, Lookup::Ready),
            Status::Active(depth) => {
                self.depends(depth);
                return (c, Lookup::Ready);
            }
            Status::Incomplete { round, low } if round == current => {
                self.depends(low);
                return (c, Lookup::Ready);
            }
            Status::Incomplete { .. } => {}
        }
        if self.fix.stack.len() >= MAX_CALL_DEPTH {
            return (c, Lookup::TooDeep);
        }
        (c, Lookup::Evaluate)
    }

    /// Puts call `c` on the evaluation stack, active.
    pub(super) fn enter(&mut self, c: CallRef) -> Entered {
        let depth = self.fix.stack.len() as u32;
        self.fix.stack.push(Frame {
            low: depth,
            cyclic: false,
        });
        self.call_mut(c).status = Status::Active(depth);
        Entered {
            depth,
            mark: self.fix.members.len(),
        }
    }

    /// Answers added so far, by every call.
    #[inline]
    pub(super) fn added(&self) -> u64 {
        self.fix.added
    }

    /// After a round of call `c`'s rules (made with `mask`, entered `at`;
    /// `before`: the answers added before the round; `stopped`: the
    /// evaluation was cut short): true when the call, a leader whose round
    /// added answers, must run another; else it is off the stack, final or
    /// waiting incomplete for its leader.
    pub(super) fn end_round(
        &mut self,
        c: CallRef,
        mask: Mask,
        at: Entered,
        before: u64,
        stopped: bool,
    ) -> bool {
        let f = *self.fix.stack.last().expect("the call's frame");
        if self.saturated(c, mask) {
            // Final, leader or not. The calls it left incomplete may
            // lack answers that rounds it no longer runs would add:
            // they are evaluated afresh when next called (round 0 is
            // never current).
            self.settle(c, at, Status::Incomplete { round: 0, low: 0 });
            return false;
        }
        if f.low < at.depth {
            // The current round is numbered one above the rounds done.
            let round = self.fix.round + 1;
            self.call_mut(c).status = Status::Incomplete { round, low: f.low };
            self.fix.members.push(c);
            self.fix.stack.pop();
            self.depends(f.low);
            return false;
        }
        if !f.cyclic || self.fix.added == before || stopped {
            // A leader at its fixpoint: the calls waiting for it are
            // complete with it.
            self.settle(c, at, Status::Complete);
            return false;
        }
        self.fix.round += 1;
        self.fix.stack.last_mut().expect("the call's frame").cyclic = false;
        true
    }

    /// Takes call `c` off the stack, complete, and gives the incomplete
    /// calls that waited for it `waiting`.
    fn settle(&mut self, c: CallRef, at: Entered, waiting: Status) {
        for i in at.mark..self.fix.members.len() {
            let m = self.fix.members[i];
            self.call_mut(m).status = waiting;
        }
        self.fix.members.truncate(at.mark);
        self.call_mut(c).status = Status::Complete;
        self.fix.stack.pop();
    }

    /// Adds the tuples of `out` (`arity` terms each; one empty tuple when
    /// `out` is not empty, for arity 0) to call `c`'s answers.
    pub(super) fn add_answers(
        &mut self,
        h: &hashbrown::DefaultHashBuilder,
        c: CallRef,
        out: &[TermId],
        arity: usize,
    ) {
        let answers = &mut self.call_mut(c).answers;
        let mut added = 0;
        if arity == 0 {
            if !out.is_empty() && answers.insert(h, &[]) {
                added += 1;
            }
        } else {
            for t in out.chunks(arity) {
                if answers.insert(h, t) {
                    added += 1;
                }
            }
        }
        self.fix.added += added;
    }

    /// Spare buffers for a call's derived tuples and bindings (all
    /// unbound): a playout makes thousands of calls a state.
    pub(super) fn take_buffers(&mut self) -> (Vec<TermId>, Vec<TermId>) {
        let out = self.buffers.pop().unwrap_or_default();
        let b = self.bindings.pop().unwrap_or_default();
        (out, b)
    }

    /// Gives back what [`TopDown::take_buffers`] took.
    pub(super) fn give_buffers(&mut self, out: Vec<TermId>, b: Vec<TermId>) {
        self.buffers.push(out);
        self.bindings.push(b);
    }
}

impl Planner {
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
            &self.init,
        );
        register_slots(std::slice::from_mut(&mut plan), tables);
        let plan = Arc::new(plan);
        self.plans.insert((ri, mask), Arc::clone(&plan));
        plan
    }
}
