//! A fixed walk through a game's states: the same moves every time, for the
//! short trials that compare engines ([`super::engine`]) or check that an
//! engine runs a rewritten game ([`super::prepare`]).

use std::time::Duration;

use super::StateMachine;
use crate::cputime::ThreadWatch;

/// Walks up to `max_steps` steps from the initial state, within `budget` of
/// the thread's CPU time if one is given, and returns the steps taken. The
/// walk is the same every time: the `k`th step takes every role's `k`th legal
/// move, cyclically; a terminal state's goals are asked for and the walk
/// starts over.
pub(crate) fn walk<M: StateMachine>(m: &M, max_steps: usize, budget: Option<Duration>) -> usize {
    let watch = ThreadWatch::start();
    let init = m.initial_state();
    let mut state = init.clone();
    let (mut steps, mut buf, mut joint) = (0usize, Vec::new(), Vec::new());
    while steps < max_steps && budget.is_none_or(|b| watch.elapsed() < b) {
        joint.clear();
        for r in 0..m.num_roles() {
            m.legal_moves(&state, r, &mut buf);
            if buf.is_empty() {
                break;
            }
            joint.push(buf[steps % buf.len()].clone());
        }
        if joint.len() < m.num_roles() || m.is_terminal(&state) {
            for r in 0..m.num_roles() {
                m.goal_values(&state, r);
            }
            state = init.clone();
            if steps == 0 {
                break;
            }
        } else {
            state = m.next_state(&state, &joint);
        }
        steps += 1;
    }
    steps
}
