//! A match moved from one engine to another mid-match: the worker on the
//! first engine (the prover that answers at once) hands over to a worker on
//! the engine chosen for the game once it is built ([`crate::reasoner::anytime`]).
//!
//! Engines have state and move types of their own, so what crosses is
//! written in terms: the joint moves played, our move sent for the current
//! step, the plan or committed line being followed, the solver's run and
//! the step it plans from (the run itself, a child process, is moved
//! over as it is). The new engine replays them from its initial
//! state: the same game and the same moves give the same states whatever
//! the engine (the engines are checked against the prover in lockstep),
//! even where the new engine runs exactly rewritten rules whose states hold
//! other fluents. The search's tree is not carried: it is rebuilt on the new
//! engine, which searches many times faster.

use crate::gdl::Term;
use crate::reasoner::StateMachine;

use super::plan::Plan;

/// A plan or committed line in terms: `moves[i]` is played at step `from + i`.
pub(super) struct CarriedPlan {
    pub from: usize,
    pub moves: Vec<Term>,
    pub goal: Option<u8>,
}

/// What a worker hands to the next one: everything of the match that is
/// not the engine's own.
pub(super) struct Carried {
    /// Joint moves played, in role order; `history.len()` is the step.
    pub history: Vec<Vec<Term>>,
    /// Our move sent for the current step (one-player games: the next joint
    /// move, which a committed line and the solver's run start after).
    pub sent: Option<Term>,
    pub plan: Option<CarriedPlan>,
    /// The step the helpers' solvers plan from.
    pub portfolio: Option<usize>,
    /// Search playouts so far, over every engine (for the log).
    pub playouts: u64,
}

impl CarriedPlan {
    pub fn of<M: StateMachine>(m: &M, plan: &Plan<M>) -> CarriedPlan {
        CarriedPlan {
            from: plan.from,
            moves: plan.moves.iter().map(|mv| m.move_term(mv)).collect(),
            goal: plan.goal,
        }
    }
}

/// The states of a match on engine `m`, from step 0: the history's, then
/// (one-player games) the state our sent move leads to and those along the
/// plan followed, so that a solver run from a step ahead finds its state.
pub(super) struct Trajectory<M: StateMachine> {
    pub states: Vec<M::State>,
}

/// Why a match could not be replayed on the new engine.
#[derive(Debug, thiserror::Error)]
pub(super) enum ReplayError {
    #[error("step {step}: the move {text} is not a move of the new engine")]
    NotAMove { step: usize, text: String },
    #[error("step {step}: the game is over on the new engine")]
    Over { step: usize },
}

impl<M: StateMachine> Trajectory<M> {
    /// Replays `carried`'s history on `m`; the states past the current step
    /// are added where the moves that lead there are known and legal.
    pub fn replay(m: &M, carried: &Carried) -> Result<Trajectory<M>, ReplayError> {
        let mut states = vec![m.initial_state()];
        for (i, joint) in carried.history.iter().enumerate() {
            let s = states.last().expect("non-empty");
            if m.is_terminal(s) {
                return Err(ReplayError::Over { step: i });
            }
            let moves = joint
                .iter()
                .map(|t| {
                    m.parse_move(t).ok_or_else(|| ReplayError::NotAMove {
                        step: i + 1,
                        text: crate::gdl::print::term_to_string(t, &m.game().symbols),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            states.push(m.next_state(s, &moves));
        }
        let mut t = Trajectory { states };
        if m.num_roles() == 1 {
            let step = carried.history.len();
            if let Some(sent) = &carried.sent {
                t.extend(m, step, std::slice::from_ref(sent));
            }
            if let Some(p) = &carried.plan {
                t.extend(m, p.from, &p.moves);
            }
        }
        Ok(t)
    }

    /// One-player moves `moves` from step `from` on: the states past the
    /// known ones are added while each move is legal where it is played.
    fn extend(&mut self, m: &M, from: usize, moves: &[Term]) {
        for (i, t) in moves.iter().enumerate() {
            let at = from + i;
            if at + 1 < self.states.len() {
                continue;
            }
            let Some(s) = self.states.get(at) else {
                return;
            };
            let mv = match m.parse_move(t) {
                Some(mv) if !m.is_terminal(s) && m.legal(s, 0).contains(&mv) => mv,
                _ => return,
            };
            let next = m.next_state(s, std::slice::from_ref(&mv));
            self.states.push(next);
        }
    }

    /// The state at step `step`, when known.
    pub fn at(&self, step: usize) -> Option<&M::State> {
        self.states.get(step)
    }

    /// `carried` as a plan on `m`: its moves from the state at its first
    /// step; `None` when that state is not known or a move is not legal
    /// (the plan was not being followed).
    pub fn plan(&self, m: &M, carried: &CarriedPlan) -> Option<Plan<M>> {
        let mut state = self.at(carried.from)?.clone();
        let mut states = Vec::with_capacity(carried.moves.len());
        let mut moves = Vec::with_capacity(carried.moves.len());
        for t in &carried.moves {
            let mv = m.parse_move(t)?;
            if m.is_terminal(&state) || !m.legal(&state, 0).contains(&mv) {
                return None;
            }
            let next = m.next_state(&state, std::slice::from_ref(&mv));
            states.push(std::mem::replace(&mut state, next));
            moves.push(mv);
        }
        Some(Plan {
            from: carried.from,
            states,
            moves,
            goal: carried.goal,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gdl::print::term_to_string;
    use crate::reasoner::{Propnet, Prover};

    fn texts<M: StateMachine>(m: &M, s: &M::State) -> Vec<String> {
        let mut v: Vec<String> = m
            .fluents(s)
            .iter()
            .map(|f| term_to_string(f, &m.game().symbols))
            .collect();
        v.sort();
        v
    }

    /// A one-player match carried from the prover to a propnet: the moves
    /// played, our move sent, and a plan ahead replay to the same states,
    /// and the plan is followed on from where the match stands.
    #[test]
    fn a_match_replays_on_another_engine_with_its_plan() {
        let path = std::path::Path::new("puzzles/8puzzle.kif");
        let game = crate::gdl::load(path).expect("loads");
        let prover = Prover::try_new(game.clone()).expect("builds");
        let net = Propnet::new(game).expect("compiles");
        // A walk of 6 moves on the prover, always the first legal move that
        // does not undo the one before.
        let mut states = vec![prover.initial_state()];
        let mut moves = Vec::new();
        for _ in 0..6 {
            let s = states.last().expect("non-empty");
            let legal = prover.legal(s, 0);
            let mv = *legal
                .iter()
                .find(|mv| {
                    let next = prover.next_state(s, std::slice::from_ref(mv));
                    states.len() < 2 || next != states[states.len() - 2]
                })
                .expect("a move");
            states.push(prover.next_state(s, std::slice::from_ref(&mv)));
            moves.push(prover.move_term(&mv));
        }
        // Three moves played, the fourth sent, a committed line of two more.
        let carried = Carried {
            history: moves[..3].iter().map(|t| vec![t.clone()]).collect(),
            sent: Some(moves[3].clone()),
            plan: Some(CarriedPlan {
                from: 4,
                moves: moves[4..].to_vec(),
                goal: None,
            }),
            portfolio: None,
            playouts: 0,
        };
        let t = Trajectory::replay(&net, &carried).expect("replays");
        assert_eq!(t.states.len(), 7);
        for (i, s) in states.iter().enumerate() {
            assert_eq!(
                texts(&prover, s),
                texts(&net, t.at(i).expect("known")),
                "step {i}"
            );
        }
        let plan = t
            .plan(&net, carried.plan.as_ref().expect("a plan"))
            .expect("follows");
        assert_eq!((plan.from, plan.moves.len(), plan.goal), (4, 2, None));
        assert_eq!(texts(&net, &plan.states[1]), texts(&prover, &states[5]));
        // A move the engine does not know stops the replay, and says where.
        let mut wrong = carried;
        wrong.history[1] = vec![crate::gdl::Term::Const(crate::gdl::kw::INIT)];
        assert!(matches!(
            Trajectory::replay(&net, &wrong),
            Err(ReplayError::NotAMove { step: 2, .. })
        ));
    }
}
