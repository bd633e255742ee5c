//! The move the server sends when the worker has none ready: the worker's
//! published fallback for its step ([`Fallback`]), and for a worker still on
//! an earlier step, a legal move worked out from the joint moves announced
//! since ([`steps_ahead`]), on the worker's engine or on a spare one of the
//! match's own. Also how a manager's move text becomes the machine's move
//! ([`parse_manager_move`]), which the worker uses too.

use std::sync::Arc;

use crate::gdl::print::term_to_string;
use crate::gdl::Term;
use crate::protocol::SExpr;
use crate::reasoner::{AnyMachine, MachineVisitor, RoleIdx, StateMachine};

use super::error::Illegal;

/// A legal move some joint moves on from the state the worker published:
/// given the manager's joint moves since, in order, ours in the state they
/// lead to (none when a move does not parse or the game is over on the way).
/// What the server sends for a worker that has not caught up yet.
pub(super) type CatchUpMove = Arc<dyn Fn(&[Vec<SExpr>]) -> Option<String> + Send + Sync>;

/// The move the worker would send now, with the number of joint moves it follows.
#[derive(Default)]
pub(super) struct Fallback {
    pub step: usize,
    pub text: Option<String>,
    /// For a worker still busy when a later PLAY comes (its search, or a
    /// slow engine, overran): a move for that PLAY's step, computed by the
    /// server from the joint moves announced since `step`.
    pub catch_up: Option<CatchUpMove>,
    /// Whether `catch_up` runs on the spare engine.
    pub on_spare: bool,
}

/// The machine's move for a manager's move text: the exact term, or the
/// game's own spelling where a manager wraps a constant move in parentheses,
/// `(noop)`, or drops them from `(pass)`. Legality is the caller's to check.
pub(super) fn parse_manager_move<M: StateMachine>(m: &M, s: &SExpr) -> Result<M::Move, Illegal> {
    let term = s.to_ground(&m.game().symbols).map_err(Illegal::NotATerm)?;
    let other = match &term {
        Term::Const(f) => Term::Func(*f, Vec::new()),
        Term::Func(f, args) if args.is_empty() => Term::Const(*f),
        t => t.clone(),
    };
    m.parse_move(&term)
        .or_else(|| m.parse_move(&other))
        .ok_or(Illegal::NotAMove)
}

/// Role `role`'s first legal move some joint moves on from `state`, given
/// the manager's joint moves since, in order (none when a move does not
/// parse or a state on the way is terminal): the move the server sends for a
/// worker still on an earlier step.
pub(super) fn steps_ahead<M: StateMachine + 'static>(
    machine: Arc<M>,
    state: M::State,
    role: RoleIdx,
) -> CatchUpMove {
    Arc::new(move |joints: &[Vec<SExpr>]| {
        let m = &*machine;
        let mut now = state.clone();
        for joint in joints {
            if joint.len() != m.num_roles() || m.is_terminal(&now) {
                return None;
            }
            let joint = joint
                .iter()
                .map(|s| parse_manager_move(m, s).ok())
                .collect::<Option<Vec<_>>>()?;
            now = m.next_state(&now, &joint);
        }
        if m.is_terminal(&now) {
            return None;
        }
        let first = m.legal(&now, role).into_iter().next()?;
        Some(term_to_string(&m.move_term(&first), &m.game().symbols))
    })
}

/// [`steps_ahead`] on `engine` (a spare, [`EngineInUse::spare`]) from the
/// state where `fluents` hold.
pub(super) fn steps_ahead_on(engine: AnyMachine, fluents: Vec<Term>, role: RoleIdx) -> CatchUpMove {
    struct From<'a> {
        fluents: &'a [Term],
        joints: &'a [Vec<SExpr>],
        role: RoleIdx,
    }
    impl MachineVisitor for From<'_> {
        type Output = Option<String>;
        fn visit<M: StateMachine + 'static>(self, m: Arc<M>) -> Option<String> {
            let state = m.state_from_fluents(self.fluents)?;
            steps_ahead(m, state, self.role)(self.joints)
        }
    }
    Arc::new(move |joints: &[Vec<SExpr>]| {
        engine.visit(From {
            fluents: &fluents,
            joints,
            role,
        })
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::reasoner::{anytime, Prover};

    /// The catch-up move worked out on a spare engine (a prover of its own,
    /// the state passed as fluents) is the one worked out on the worker's,
    /// some joint moves on: tic-tac-toe's first player after two marks.
    #[test]
    fn a_catch_up_on_the_spare_engine_agrees() {
        let game =
            crate::gdl::load(std::path::Path::new("../shared/games/ticTacToe.kif")).expect("loads");
        let m = Arc::new(Prover::try_new(game.clone()).expect("builds"));
        let slot = anytime::spare(&AnyMachine::Prover(Arc::clone(&m))).expect("a prover has one");
        let start = Instant::now();
        while slot.get().is_none() && start.elapsed() < Duration::from_secs(600) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let spare = slot.get().expect("the spare is built").clone();
        let joints: Vec<Vec<SExpr>> = ["((mark 1 1) noop)", "(noop (mark 2 2))"]
            .iter()
            .map(|t| match SExpr::parse_one(t, "test").expect("parses") {
                SExpr::List(l, _) => l,
                other => panic!("{other:?}"),
            })
            .collect();
        let init = m.initial_state();
        let here = steps_ahead(Arc::clone(&m), init.clone(), 0)(&joints);
        let there = steps_ahead_on(spare, m.fluents(&init), 0)(&joints);
        assert_eq!(here, there);
        assert!(here.is_some_and(|t| t.starts_with("(mark")));
    }
}
