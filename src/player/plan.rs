//! Moves a match follows ahead of its search: a solver plan checked on our engine,
//! or a line of the search it commits to while the solver plans from the line's end.

use std::fmt::Write as _;

use crate::gdl::kw;
use crate::gdl::print::{rule_to_string, term_to_string};
use crate::reasoner::{RoleIdx, StateMachine};
use crate::search::Mcts;

use crate::protocol::SExpr;

/// Moves we follow from some step on: `states[i]` is the state expected before
/// `moves[i]`, at match step `from + i`. Either a verified solver plan (`goal` is
/// its goal), or a committed line (`goal` is `None`): moves of the search we
/// promise to play while the solver plans from the state at the line's end.
pub struct Plan<M: StateMachine> {
    pub from: usize,
    pub states: Vec<M::State>,
    pub moves: Vec<M::Move>,
    pub goal: Option<u8>,
}

/// Why a solver plan does not hold on our engine.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("the game ends before move {0}")]
    EndsEarly(usize),
    /// Move `index` (from 1) is not a ground term of the game.
    #[error("move {index} '{text}': {why}")]
    NotATerm {
        index: usize,
        text: String,
        why: String,
    },
    #[error("move {index} '{text}' is not legal there")]
    Illegal { index: usize, text: String },
    #[error("the plan does not end in a terminal state")]
    NotTerminal,
    #[error("the plan's final state has no goal value")]
    NoGoal,
}

impl<M: StateMachine> Plan<M> {
    /// Replays the solver's `plan` from `state` (step `from`) on our engine: every
    /// move legal, the end terminal with a goal for `role`.
    pub fn verify(
        m: &M,
        role: RoleIdx,
        from: usize,
        mut state: M::State,
        plan: &[String],
    ) -> Result<Plan<M>, PlanError> {
        let symbols = &m.game().symbols;
        let mut states = Vec::with_capacity(plan.len());
        let mut moves = Vec::with_capacity(plan.len());
        for (i, text) in plan.iter().enumerate() {
            let index = i + 1;
            if m.is_terminal(&state) {
                return Err(PlanError::EndsEarly(index));
            }
            let term = SExpr::parse_one(text, "a plan move")
                .and_then(|s| s.to_ground(symbols))
                .map_err(|why| PlanError::NotATerm {
                    index,
                    text: text.clone(),
                    why,
                })?;
            let mv = m
                .parse_move(&term)
                .filter(|mv| m.legal(&state, role).contains(mv))
                .ok_or_else(|| PlanError::Illegal {
                    index,
                    text: text.clone(),
                })?;
            states.push(state.clone());
            state = m.next_state(&state, std::slice::from_ref(&mv));
            moves.push(mv);
        }
        if !m.is_terminal(&state) {
            return Err(PlanError::NotTerminal);
        }
        let goal = m.goal(&state, role).ok_or(PlanError::NoGoal)?;
        Ok(Plan {
            from,
            states,
            moves,
            goal: Some(goal),
        })
    }

    /// What to follow once the verified `plan` arrives at match step `step`, with
    /// `current` what was followed until then: the committed line that leads to the
    /// plan's first state, extended by the plan; the plan alone when it starts now;
    /// `None` when it connects to neither.
    pub fn connect(current: Option<Plan<M>>, plan: Plan<M>, step: usize) -> Option<Plan<M>> {
        match current {
            Some(mut line) if line.goal.is_none() && line.from + line.moves.len() == plan.from => {
                line.states.extend(plan.states);
                line.moves.extend(plan.moves);
                line.goal = plan.goal;
                Some(line)
            }
            _ if plan.from == step => Some(plan),
            _ => None,
        }
    }

    /// A committed line from `state` at step `step`: the first `len` moves of
    /// `line` (at least one), or fewer where the game ends. Returns the line
    /// (without its first move, which is played now) and the state at its end,
    /// or `None` when the line ends the game (nothing left to plan for).
    pub fn commit(
        m: &M,
        step: usize,
        state: &M::State,
        line: &[M::Move],
        len: usize,
    ) -> Option<(Plan<M>, M::State)> {
        let mut states = vec![state.clone()];
        for mv in line.iter().take(len.max(1)) {
            let s = states.last().expect("non-empty");
            if m.is_terminal(s) {
                break;
            }
            let next = m.next_state(s, std::slice::from_ref(mv));
            states.push(next);
        }
        let d = states.len() - 1;
        let end = states.pop().expect("the line's end");
        if m.is_terminal(&end) {
            return None;
        }
        let plan = Plan {
            from: step + 1,
            states: states[1..].to_vec(),
            moves: line[1..d].to_vec(),
            goal: None,
        };
        Some((plan, end))
    }
}

/// The best complete line the search has seen for `role` from `state`, checked
/// move by move (cut where a move is not legal).
pub fn search_line<M: StateMachine + 'static>(
    m: &M,
    search: &Mcts<M>,
    role: RoleIdx,
    state: &M::State,
) -> Vec<M::Move> {
    let mut line = Vec::new();
    let Some((joints, _)) = search.best_line() else {
        return line;
    };
    let mut state = state.clone();
    for joint in joints {
        let Some(mv) = joint.get(role) else {
            break;
        };
        if m.is_terminal(&state) || !m.legal(&state, role).contains(mv) {
            break;
        }
        state = m.next_state(&state, std::slice::from_ref(mv));
        line.push(mv.clone());
    }
    line
}

/// The rules with the `init` facts replaced by `state`, so the solver can plan
/// from there.
pub fn rules_from<M: StateMachine>(m: &M, state: &M::State) -> String {
    let g = m.game();
    let mut out = String::new();
    for rule in &g.rules {
        if rule.head.name() == Some(kw::INIT) {
            continue;
        }
        out.push_str(&rule_to_string(rule, &g.symbols));
        out.push('\n');
    }
    let init = g.symbols.name(kw::INIT);
    for f in m.fluents(state) {
        let _ = writeln!(out, "({init} {})", term_to_string(&f, &g.symbols));
    }
    out
}
