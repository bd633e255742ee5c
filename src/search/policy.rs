//! The seams of the search: how a node picks each role's move (tree policy), how a
//! playout picks moves (playout policy) and what a state is worth when a playout
//! stops (evaluation). The defaults are the classic ones — UCB1, uniform random
//! moves, the game's goals — and each is a trait so a better one slots in without
//! touching the tree.

use rand::rngs::SmallRng;
use rand::Rng;

use crate::reasoner::{PlayoutLimits, RoleIdx, StateMachine};

/// One role's statistics for one move of a node: how often it was chosen and the
/// sum of that role's values (0..1) it led to.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MoveStats {
    pub visits: u64,
    pub sum: f64,
}

impl MoveStats {
    pub fn mean(&self) -> f64 {
        if self.visits == 0 {
            0.0
        } else {
            self.sum / self.visits as f64
        }
    }
}

/// Picks one role's move in a tree node from that role's own statistics.
pub trait TreePolicy: Send + Sync {
    /// `stats` has one entry per legal move (never empty); `visits` is the node's
    /// visit count. Returns an index into `stats`.
    fn select(&self, stats: &[MoveStats], visits: u64, rng: &mut SmallRng) -> usize;
}

/// UCB1: mean + c * sqrt(ln N / n); an untried move first (a random one of them,
/// so that ties do not always favour the first legal move).
#[derive(Clone, Copy, Debug)]
pub struct Ucb1 {
    pub exploration: f64,
}

impl TreePolicy for Ucb1 {
    fn select(&self, stats: &[MoveStats], visits: u64, rng: &mut SmallRng) -> usize {
        let untried = stats.iter().filter(|s| s.visits == 0).count();
        if untried > 0 {
            let k = rng.gen_range(0..untried);
            return stats
                .iter()
                .enumerate()
                .filter(|(_, s)| s.visits == 0)
                .nth(k)
                .map(|(i, _)| i)
                .unwrap_or(0);
        }
        let ln_n = (visits.max(1) as f64).ln();
        let mut best = 0;
        let mut best_v = f64::NEG_INFINITY;
        for (i, s) in stats.iter().enumerate() {
            let n = s.visits as f64;
            // A tiny random term breaks exact ties without a bias towards low indices.
            let v = s.sum / n + self.exploration * (ln_n / n).sqrt() + rng.gen::<f64>() * 1e-9;
            if v > best_v {
                best_v = v;
                best = i;
            }
        }
        best
    }
}

/// Picks one role's move during a playout.
pub trait PlayoutPolicy<M: StateMachine>: Send + Sync {
    /// `legal` is never empty. Returns an index into `legal`.
    fn choose(
        &self,
        machine: &M,
        state: &M::State,
        role: RoleIdx,
        legal: &[M::Move],
        rng: &mut SmallRng,
    ) -> usize;
}

/// Uniformly random moves: the classic playout.
#[derive(Clone, Copy, Debug, Default)]
pub struct RandomPlayout;

impl<M: StateMachine> PlayoutPolicy<M> for RandomPlayout {
    fn choose(
        &self,
        _machine: &M,
        _state: &M::State,
        _role: RoleIdx,
        legal: &[M::Move],
        rng: &mut SmallRng,
    ) -> usize {
        rng.gen_range(0..legal.len())
    }
}

/// What a state is worth to each role, 0..1, where a playout ends.
pub trait Evaluator<M: StateMachine>: Send + Sync {
    /// Writes one value per role into `out` (cleared first). `terminal` says
    /// whether the state is terminal or the playout was cut off.
    fn evaluate(&self, machine: &M, state: &M::State, terminal: bool, out: &mut Vec<f64>);
    /// In words, for reports, when it is more than the game's goals.
    fn describe(&self, _game: &crate::gdl::Game) -> Option<String> {
        None
    }
    /// The search's root is now `root` (at its start and after each move):
    /// for evaluators whose values are relative to it.
    fn rebase(&self, _machine: &M, _root: &M::State) {}
}

/// The game's goals, scaled to 0..1: a role without a goal value scores 0, a role
/// with several (a defective game) scores their mean. A cut-off state is scored the
/// same way, since many games define goals in every state (e.g. piece counts).
#[derive(Clone, Copy, Debug, Default)]
pub struct GoalEvaluator;

impl<M: StateMachine> Evaluator<M> for GoalEvaluator {
    fn evaluate(&self, machine: &M, state: &M::State, _terminal: bool, out: &mut Vec<f64>) {
        out.clear();
        for r in 0..machine.num_roles() {
            let vals = machine.goal_values(state, r);
            let v = if vals.is_empty() {
                0.0
            } else {
                vals.iter().map(|&v| v as f64).sum::<f64>() / vals.len() as f64
            };
            out.push(v / 100.0);
        }
    }
}

/// Plays from `state` with `policy` until a terminal state, a role without legal
/// moves, or one of `limits`. Returns the final state, whether it is terminal,
/// and the number of joint moves; `None` when the deadline passed (the result
/// would be a biased sample). With `line`, the joint moves are appended to it.
pub fn playout<M: StateMachine>(
    machine: &M,
    mut state: M::State,
    policy: &dyn PlayoutPolicy<M>,
    rng: &mut SmallRng,
    limits: PlayoutLimits,
    mut line: Option<&mut Vec<Vec<M::Move>>>,
    buf: &mut Vec<M::Move>,
) -> Option<(M::State, bool, usize)> {
    let roles = machine.num_roles();
    let mut joint = Vec::with_capacity(roles);
    let mut steps = 0;
    let mut pacer = crate::reasoner::Pacer::new(limits.deadline);
    loop {
        if machine.is_terminal(&state) {
            return Some((state, true, steps));
        }
        if steps >= limits.max_steps {
            return Some((state, false, steps));
        }
        // Before every step: on a slow engine one step may take milliseconds,
        // and a player must not run past its clock by more than one.
        if pacer.passed() {
            return None;
        }
        joint.clear();
        for r in 0..roles {
            machine.legal_moves(&state, r, buf);
            if buf.is_empty() {
                return Some((state, false, steps));
            }
            let i = policy.choose(machine, &state, r, buf, rng);
            joint.push(buf[i].clone());
        }
        if let Some(l) = line.as_deref_mut() {
            l.push(joint.clone());
        }
        state = machine.next_state(&state, &joint);
        steps += 1;
    }
}
