//! Trial matches: the meta-choice's pick put to the test by short self-play
//! inside the start clock. Each candidate configuration plays the pick
//! ([`trials`]), seats alternated, every searcher given the same number of
//! iterations a move, so the result does not depend on how fast the engine
//! is, only on what each configuration does with its iterations; and
//! [`better`] says whether a candidate beat the pick by more than chance.
//!
//! Two-player games only: with more roles a pairing says little about the
//! field. Deterministic for given seeds and counts; the clock only decides
//! how many matches are played (a match it cuts short is not counted).

use std::sync::Arc;
use std::time::Instant;

use super::enhance::Enhancements;
use super::{Mcts, SearchConfig};
use crate::reasoner::StateMachine;

/// One candidate's trial matches against the pick.
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    pub candidate: Enhancements,
    /// The candidate's mean goal (0..100) over the matches played.
    pub mean: f64,
    pub matches: u32,
}

/// Joint moves after which a trial match is stopped and scored as a draw
/// (50 each): a trial is for telling configurations apart, not for
/// finishing very long games.
pub const TRIAL_STEPS: usize = 300;

/// Plays matches of each of `candidates` against `pick` from `state`,
/// `iterations` UCT iterations a move for each side, the candidates in
/// turn and the seats alternated, until `end` (no match starts after it,
/// one running past it is not counted) or `per_candidate` matches each.
/// Empty unless the game has two roles.
pub fn trials<M: StateMachine + 'static>(
    machine: &Arc<M>,
    state: &M::State,
    pick: Enhancements,
    candidates: &[Enhancements],
    iterations: u64,
    per_candidate: u32,
    end: Instant,
) -> Vec<Trial> {
    if machine.num_roles() != 2 {
        return Vec::new();
    }
    let mut out: Vec<Trial> = candidates
        .iter()
        .map(|&candidate| Trial {
            candidate,
            mean: 0.0,
            matches: 0,
        })
        .collect();
    let mut sums = vec![0.0; candidates.len()];
    'rounds: for round in 0..per_candidate {
        for (k, t) in out.iter_mut().enumerate() {
            if Instant::now() >= end {
                break 'rounds;
            }
            let seat = (round as usize + k) % 2;
            let seed = u64::from(round) * 7919 + k as u64 + 1;
            let Some(goal) = one_match(
                machine,
                state,
                [t.candidate, pick],
                seat,
                iterations,
                seed,
                end,
            ) else {
                break 'rounds;
            };
            sums[k] += goal;
            t.matches += 1;
            t.mean = sums[k] / f64::from(t.matches);
        }
    }
    out
}

/// One trial match: `configs[0]` in seat `seat`, `configs[1]` in the other;
/// the goal of `configs[0]`'s role, `None` when `end` passed first.
fn one_match<M: StateMachine + 'static>(
    machine: &Arc<M>,
    state: &M::State,
    configs: [Enhancements; 2],
    seat: usize,
    iterations: u64,
    seed: u64,
    end: Instant,
) -> Option<f64> {
    let cfg = |e: Enhancements, s: u64| SearchConfig {
        threads: 1,
        seed: s,
        enhancements: e,
        ..SearchConfig::default()
    };
    // searchers[r] plays role r.
    let mut searchers: Vec<Mcts<M>> = (0..2)
        .map(|r| {
            let e = if r == seat { configs[0] } else { configs[1] };
            Mcts::new(Arc::clone(machine), state.clone(), cfg(e, seed + r as u64))
        })
        .collect();
    let mut s = state.clone();
    for _ in 0..TRIAL_STEPS {
        if machine.is_terminal(&s) {
            return Some(f64::from(machine.goal(&s, seat).unwrap_or(0)));
        }
        if Instant::now() >= end {
            return None;
        }
        let mut joint = Vec::with_capacity(2);
        for (r, search) in searchers.iter_mut().enumerate() {
            let legal = machine.legal(&s, r);
            if legal.len() == 1 {
                joint.push(legal[0].clone());
                continue;
            }
            search.search_iterations(iterations);
            let mv = search.best_move(r);
            joint.push(if legal.contains(&mv) {
                mv
            } else {
                legal[0].clone()
            });
        }
        for search in &mut searchers {
            search.advance(&joint);
        }
        s = machine.next_state(&s, &joint);
    }
    Some(50.0)
}

/// The candidate that beat the pick by more than chance: the best mean,
/// when it is above 50 by at least twice its standard error (goals of 0
/// and 100: at most 50 / sqrt(matches)) and by at least `margin` points.
pub fn better(trials: &[Trial], margin: f64) -> Option<&Trial> {
    trials
        .iter()
        .filter(|t| t.matches > 0)
        .filter(|t| {
            let se = 50.0 / f64::from(t.matches).sqrt();
            t.mean - 50.0 >= margin.max(2.0 * se)
        })
        .max_by(|a, b| a.mean.total_cmp(&b.mean))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reasoner::Propnet;
    use std::time::Duration;

    fn game(file: &str) -> Arc<Propnet> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/games")
            .join(file);
        Arc::new(Propnet::new(crate::gdl::load(&path).expect("loads")).expect("compiles"))
    }

    /// On connect four, UCT with MAST playouts beats the same iterations of
    /// UCT whose playouts are cut off after one move and scored by a goal
    /// that says nothing before the end (a blind searcher): the trials find
    /// it, seats alternated, and `better` picks it; the blind one against
    /// the pick is never picked. Counted in iterations, so the same on any
    /// machine (the clock here is far beyond what the matches need).
    #[test]
    fn trial_matches_tell_a_strong_configuration_from_a_blind_one() {
        let m = game("connectFour.kif");
        let far = Instant::now() + Duration::from_secs(3600);
        let blind: Enhancements = "cutoff:1".parse().expect("parses");
        let mast: Enhancements = "mast".parse().expect("parses");
        let t = trials(&m, &m.initial_state(), blind, &[mast], 300, 6, far);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].matches, 6);
        assert!(t[0].mean >= 80.0, "{t:?}");
        assert_eq!(better(&t, 10.0).map(|x| x.candidate), Some(mast));
        let back = trials(&m, &m.initial_state(), mast, &[blind], 300, 6, far);
        assert!(back[0].mean <= 20.0, "{back:?}");
        assert!(better(&back, 10.0).is_none());
    }

    /// No trial in a game of three roles, and none after the clock.
    #[test]
    fn trials_need_two_roles_and_time() {
        let three = game("tictactoe_3player.kif");
        let e = Enhancements::default();
        let far = Instant::now() + Duration::from_secs(3600);
        assert!(trials(&three, &three.initial_state(), e, &[e], 10, 2, far).is_empty());
        let two = game("ticTacToe.kif");
        let t = trials(&two, &two.initial_state(), e, &[e], 10, 2, Instant::now());
        assert_eq!(t[0].matches, 0);
    }
}
