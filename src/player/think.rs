//! How a match chooses its moves: the [`Think`] trait (anytime search from the
//! current state, advanced by the joint moves played) and the search behind it.

use std::sync::Arc;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::reasoner::{RoleIdx, StateMachine};

/// An anytime move chooser for one role.
pub trait Think<M: StateMachine>: Send {
    /// Searches from the current state until `deadline` (it may return earlier,
    /// e.g. when nothing is left to search).
    fn think_until(&mut self, deadline: Instant);
    /// The best move found so far for our role, if the search has one.
    fn best_move(&self) -> Option<M::Move>;
    /// Follows the joint move played; `state` is the state it leads to.
    fn advance(&mut self, joint: &[M::Move], state: &M::State);
    /// Playouts run since the last [`Think::advance`], for the log.
    fn playouts(&self) -> u64;
}

/// Flat Monte Carlo: every legal move of our role gets random playouts (the other
/// roles move at random), the best average goal wins.
pub struct FlatMc<M: StateMachine> {
    machine: Arc<M>,
    role: RoleIdx,
    state: M::State,
    /// Our legal moves with the sum of goals and the number of playouts.
    stats: Vec<(M::Move, u64, u64)>,
    rng: SmallRng,
    max_steps: usize,
}

impl<M: StateMachine> FlatMc<M> {
    pub fn new(machine: Arc<M>, role: RoleIdx, state: M::State, seed: u64) -> Self {
        let mut s = FlatMc {
            machine,
            role,
            state,
            stats: Vec::new(),
            rng: SmallRng::seed_from_u64(seed),
            max_steps: 10_000,
        };
        s.reset();
        s
    }

    fn reset(&mut self) {
        self.stats = if self.machine.is_terminal(&self.state) {
            Vec::new()
        } else {
            self.machine
                .legal(&self.state, self.role)
                .into_iter()
                .map(|m| (m, 0, 0))
                .collect()
        };
    }

    /// One random playout after our move `first`: our goal at the end (0 when the
    /// game gives none or the playout hits the step cap).
    fn playout(&mut self, first: &M::Move) -> u64 {
        let m = &*self.machine;
        let roles = m.num_roles();
        let mut legal = Vec::new();
        let mut joint = Vec::with_capacity(roles);
        let mut state = self.state.clone();
        for step in 0..self.max_steps {
            if m.is_terminal(&state) {
                return m.goal(&state, self.role).unwrap_or(0) as u64;
            }
            joint.clear();
            for r in 0..roles {
                if step == 0 && r == self.role {
                    joint.push(first.clone());
                    continue;
                }
                m.legal_moves(&state, r, &mut legal);
                if legal.is_empty() {
                    return 0;
                }
                joint.push(legal[self.rng.gen_range(0..legal.len())].clone());
            }
            state = m.next_state(&state, &joint);
        }
        0
    }
}

impl<M: StateMachine> Think<M> for FlatMc<M> {
    fn think_until(&mut self, deadline: Instant) {
        if self.stats.len() < 2 {
            return;
        }
        while Instant::now() < deadline {
            // The least-tried move next: every move gets the same share.
            let i = (0..self.stats.len())
                .min_by_key(|&i| self.stats[i].2)
                .expect("at least two moves");
            let mv = self.stats[i].0.clone();
            let g = self.playout(&mv);
            self.stats[i].1 += g;
            self.stats[i].2 += 1;
        }
    }

    fn best_move(&self) -> Option<M::Move> {
        self.stats
            .iter()
            .max_by(|a, b| {
                let avg = |s: &(M::Move, u64, u64)| s.1 as f64 / s.2.max(1) as f64;
                avg(a).total_cmp(&avg(b))
            })
            .map(|s| s.0.clone())
    }

    fn advance(&mut self, _joint: &[M::Move], state: &M::State) {
        self.state = state.clone();
        self.reset();
    }

    fn playouts(&self) -> u64 {
        self.stats.iter().map(|s| s.2).sum()
    }
}
