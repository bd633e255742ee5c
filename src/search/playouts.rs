//! The playout phase of an iteration: the policies a search runs with
//! ([`Policies`]), how a playout is played from the state a descent reached
//! (the engine's own loop where the policies allow, else the generic one,
//! recording moves for RAVE and MAST), and how a value of that state enters
//! the search ([`LeafUse`]).

use std::time::Instant;

use rand::rngs::SmallRng;

use super::descent::Descent;
use super::enhance::{DecisivePolicy, Enhancements, MastPolicy, MastTable};
use super::policy::{playout, Evaluator, PlayoutPolicy, TreePolicy};
use crate::reasoner::{PlayoutLimits, StateMachine};

/// The engine-independent parts a search needs.
pub(crate) struct Policies<'a, M: StateMachine> {
    pub tree: &'a dyn TreePolicy,
    pub playout: &'a dyn PlayoutPolicy<M>,
    pub eval: &'a dyn Evaluator<M>,
    /// A value of the playout's first state, and how it is used.
    pub leaf: Option<(&'a dyn Evaluator<M>, LeafUse)>,
    pub max_playout_steps: usize,
    /// The playout policy is uniform random and the evaluator the game's goals:
    /// an engine's own playout loop ([`StateMachine::FAST_PLAYOUT`]) may run them.
    pub plain: bool,
    pub enh: Enhancements,
    /// UCB's exploration constant, for RAVE's selection.
    pub exploration: f64,
    /// Implicit minimax backups: the heuristic that starts each new node's
    /// minimax values, and the weight `alpha` of those values against the
    /// playouts' mean in the mover's selection.
    pub minimax: Option<(&'a dyn Evaluator<M>, f64)>,
}

/// What one playout runs with beside the policies: the searching thread's
/// random numbers and scratch, the iteration's deadline, and MAST's table
/// (kept only by a tree searched by one thread).
pub(crate) struct PlayoutRun<'a, M: StateMachine> {
    pub rng: &'a mut SmallRng,
    pub deadline: Option<Instant>,
    pub buf: &'a mut Vec<M::Move>,
    pub goals: &'a mut Vec<Option<u8>>,
    pub mast: Option<&'a MastTable<M>>,
}

/// How a value of the state where a playout starts enters the search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LeafUse {
    /// Mixed into every playout's outcome at this weight: `w * leaf + (1 -
    /// w) * playout` is backed up (AlphaGo's mixing of a value network and
    /// rollouts). The value's bias stays however often the node is visited.
    Mix(f64),
    /// Counted as this many visits of that value on the edge into a node
    /// when the node is added (Gelly and Silver's prior knowledge, 2007):
    /// the playouts' outcomes are backed up unmixed, so the value guides
    /// the first visits of a node and fades as its own playouts come in.
    Prior(u32),
}

impl<M: StateMachine> Policies<'_, M> {
    /// The limits of a playout that must end by `deadline`.
    #[inline]
    fn limits(&self, deadline: Option<Instant>) -> PlayoutLimits {
        PlayoutLimits {
            max_steps: self.max_playout_steps,
            deadline,
            sure_wins: self.enh.rush,
        }
    }

    /// Plays out from `from` with the engine's own loop when it has one and the
    /// policies allow (multi-player games: one-player games record the line);
    /// `None` when the generic loop must run. Values as the goal evaluator gives
    /// them, a role with zero or several goal values scoring 0. `Some(None)`
    /// when the deadline cut the playout short (nothing to record), else
    /// `Some(Some(terminal))`.
    pub fn fast_playout(
        &self,
        machine: &M,
        from: &M::State,
        run: &mut PlayoutRun<M>,
        values: &mut Vec<f64>,
    ) -> Option<Option<bool>> {
        if !(M::FAST_PLAYOUT && self.plain) || machine.num_roles() == 1 {
            return None;
        }
        let limits = self.limits(run.deadline);
        let p = machine.playout(from, run.rng, limits, run.goals);
        if p.cut {
            return Some(None);
        }
        goal_values(run.goals, values);
        Some(Some(p.terminal))
    }

    /// The playout of descent `d` from `from`: values and `terminal` set, and
    /// for RAVE and MAST the joint moves played recorded in `d.tail`. MAST
    /// playouts (given `run.mast`) pick moves from the table; both run on the
    /// engine's own loop when it has one. False when the deadline cut it short.
    pub fn play_out(
        &self,
        machine: &M,
        from: M::State,
        d: &mut Descent<M>,
        run: &mut PlayoutRun<M>,
    ) -> bool {
        let w = match self.leaf {
            Some((leaf, LeafUse::Prior(visits))) => {
                // The prior is for the node this descent added, once.
                if d.grew && visits > 0 {
                    leaf.evaluate(machine, &from, false, &mut d.prior);
                    d.prior_visits = u64::from(visits);
                }
                None
            }
            Some((leaf, LeafUse::Mix(w))) => Some((leaf, w)),
            None => None,
        };
        let Some((leaf, w)) = w else {
            return self.play_out_only(machine, from, d, run);
        };
        let mut prior = Vec::new();
        leaf.evaluate(machine, &from, false, &mut prior);
        if !self.play_out_only(machine, from, d, run) {
            return false;
        }
        for (v, p) in d.values.iter_mut().zip(&prior) {
            *v = w * p + (1.0 - w) * *v;
        }
        true
    }

    /// [`Policies::play_out`] without the leaf value: on the engine's own
    /// loop when it has one and the policies allow, else on the generic one.
    fn play_out_only(
        &self,
        machine: &M,
        from: M::State,
        d: &mut Descent<M>,
        run: &mut PlayoutRun<M>,
    ) -> bool {
        let fast = M::FAST_PLAYOUT && self.plain && machine.num_roles() > 1 && !self.enh.decisive;
        if self.enh.records() && fast {
            return self.play_out_recorded(machine, &from, d, run);
        }
        if !self.enh.records() && !self.enh.decisive {
            match self.fast_playout(machine, &from, run, &mut d.values) {
                Some(Some(terminal)) => {
                    d.terminal = terminal;
                    d.played = true;
                    return true;
                }
                Some(None) => return false,
                None => {}
            }
        }
        self.play_out_generic(machine, from, d, run)
    }

    /// The playout of a search that records its moves (RAVE, MAST) on the
    /// engine's own loop: uniformly random, or steered by MAST's table.
    fn play_out_recorded(
        &self,
        machine: &M,
        from: &M::State,
        d: &mut Descent<M>,
        run: &mut PlayoutRun<M>,
    ) -> bool {
        let limits = self.limits(run.deadline);
        let p = match run.mast.zip(self.enh.mast) {
            None => machine.playout_recorded(from, run.rng, limits, run.goals, &mut d.tail),
            Some((table, tau)) => {
                let policy = MastPolicy {
                    table,
                    tau,
                    finish: self.enh.finish,
                };
                let mut q = Vec::new();
                machine.playout_steered(
                    from,
                    run.rng,
                    limits,
                    run.goals,
                    &mut d.tail,
                    &mut |role, legal, rng| policy.pick(role, legal, &mut q, rng),
                )
            }
        };
        if p.cut {
            return false;
        }
        goal_values(run.goals, &mut d.values);
        d.terminal = p.terminal;
        d.played = true;
        true
    }

    /// The generic loop, stepping through the state machine with the
    /// playout policy (MAST's when it has a table, made decisive when asked).
    /// One-player games record their line, learning searches every joint
    /// move.
    fn play_out_generic(
        &self,
        machine: &M,
        from: M::State,
        d: &mut Descent<M>,
        run: &mut PlayoutRun<M>,
    ) -> bool {
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
        match run.mast.zip(self.enh.mast) {
            Some((table, tau)) => {
                mast_policy = MastPolicy {
                    table,
                    tau,
                    finish: self.enh.finish,
                };
                policy = &mast_policy;
            }
            None => policy = self.playout,
        }
        let decisive;
        if self.enh.decisive {
            decisive = DecisivePolicy { inner: policy };
            policy = &decisive;
        }
        let limits = self.limits(run.deadline);
        let Some((end, terminal, _)) =
            playout(machine, from, policy, run.rng, limits, line, run.buf)
        else {
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

/// Each role's goal scaled to 0..1 into `values` (cleared first), a role
/// with zero or several goal values scoring 0.
#[inline]
fn goal_values(goals: &[Option<u8>], values: &mut Vec<f64>) {
    values.clear();
    values.extend(goals.iter().map(|g| g.map_or(0.0, |v| v as f64 / 100.0)));
}
