//! Goal-directed evaluation from the joins' side: a literal over a tabled
//! relation makes a call ([`Db::literal_call`]), found in its store or
//! evaluated (a leader to its fixpoint) by running the rules of its
//! relation with the call's bound values in their heads. The calls, their
//! answers and the fixpoint's bookkeeping are [`super::topdown`]'s.

use super::eval::{Db, Join, TUPLE_WORK};
use super::table::Table;
use super::topdown::{bound_all, CallRef, Lookup, Mask, TopDown};
use super::RelId;
use crate::reasoner::pattern::{Pat, Resolved, UNBOUND};
use crate::reasoner::terms::TermId;

/// What a goal-directed call costs beside a join step (finding it by its key,
/// a table when new).
pub(super) const CALL_WORK: u64 = 8;

impl Db {
    fn td(&mut self) -> &mut TopDown {
        self.td.as_mut().expect("the goal-directed strategy")
    }

    /// Calls `rel` with the positions in `mask` bound to `key` (in order),
    /// evaluating it unless it is complete or being evaluated.
    pub(super) fn call(&mut self, rel: RelId, mask: Mask, key: &[TermId]) -> CallRef {
        self.charge(CALL_WORK, rel);
        let h = self.hasher;
        let (c, needs) = self.td().lookup(&h, rel, mask, key);
        match needs {
            Lookup::Ready => {}
            Lookup::Evaluate => self.solve(rel, mask, key, c),
            Lookup::TooDeep => {
                // Recursion this deep is a program that does not end
                // top-down (a call that asks ever deeper terms): stop it as
                // a spent work bound stops it, rather than overflow the
                // thread's stack.
                self.overflow = Some(rel);
            }
        }
        c
    }

    /// Evaluates a call: a leader to its fixpoint, a call that depends on an
    /// active ancestor for one round.
    fn solve(&mut self, rel: RelId, mask: Mask, key: &[TermId], c: CallRef) {
        let at = self.td().enter(c);
        loop {
            let before = self.td().added();
            self.run_rules(rel, mask, key, c);
            let stopped = self.overflow.is_some();
            if !self.td().end_round(c, mask, at, before, stopped) {
                return;
            }
        }
    }

    /// Runs every rule of `rel` with the call's bound arguments in its head.
    fn run_rules(&mut self, rel: RelId, mask: Mask, key: &[TermId], c: CallRef) {
        let td = self.td.as_mut().expect("the goal-directed strategy");
        let plans = td.plans_for(rel, mask, &mut self.pool, &mut self.tables);
        let (mut out, mut b) = td.take_buffers();
        let mut trail = Vec::new();
        let saved = (self.once, self.found);
        self.once = bound_all(mask, td.arity(rel));
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
                let mut join = Join {
                    rule: plan,
                    b: &mut b,
                    out: &mut out,
                };
                self.join(&mut join, 0);
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
            self.td().add_answers(&h, c, &out, arity);
            if self.overflow.is_some() || self.found {
                // A bound call's answer is in: its other rules can add nothing.
                break;
            }
        }
        (self.once, self.found) = saved;
        self.td().give_buffers(out, b);
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
