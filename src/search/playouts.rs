//! The playout phase of an iteration: the policies a search runs with
//! ([`Policies`]), how a playout is played from the state a descent reached
//! (the engine's own loop where the policies allow, else the generic one,
//! recording moves for RAVE and MAST), and how a value of that state enters
//! the search ([`LeafUse`]).

use std::time::Instant;

use rand::rngs::SmallRng;

use super::enhance::{DecisivePolicy, Enhancements, MastPolicy, MastTable};
use super::policy::{playout, Evaluator, PlayoutPolicy, TreePolicy};
use super::tree::Descent;
use crate::reasoner::StateMachine;

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
