//! What can go wrong in a match, as the server replies it (`error: ...`) and logs it.

use crate::gdl::GdlError;
use crate::reasoner::EngineError;

/// Why a match cannot start, or cannot answer a PLAY or STOP. The text names the
/// match or the step and says what the manager (or the game) got wrong.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    /// The START's rules are not a game we can read.
    #[error("the rules do not load: {0}")]
    Rules(#[source] GdlError),
    /// The rules load but lack what play needs (see [`crate::gdl::Game::missing`]).
    #[error("the rules cannot be played: {0}")]
    Unplayable(String),
    /// The START names a role the game does not have.
    #[error("the role '{role}' is not in the game (roles: {roles})")]
    UnknownRole { role: String, roles: String },
    /// The rules load, but no engine compiles them.
    #[error("no engine for the rules: {0}")]
    Engine(#[source] EngineError),
    /// A joint move from the manager with one move per role too many or too few.
    #[error("the joint move at step {step} has {moves} move(s) but the game has {roles} role(s)")]
    JointMoveSize {
        step: usize,
        moves: usize,
        roles: usize,
    },
    /// A joint move from the manager after the game has ended.
    #[error("the game is already over after step {step}; no further moves")]
    MovesAfterEnd { step: usize },
    /// One move of the manager's joint move is not a legal move.
    #[error("illegal joint move at step {step}: {text} for role {role}: {why}")]
    IllegalMove {
        step: usize,
        text: String,
        role: String,
        why: Illegal,
    },
    /// A PLAY in a terminal state.
    #[error("the game is over after step {step}: no move to make")]
    GameOver { step: usize },
    /// A PLAY in a state where the rules give us no move.
    #[error("our role has no legal move at step {step} (the rules are broken here)")]
    NoLegalMove { step: usize },
    /// A message for a match whose worker has ended.
    #[error("match {id} has ended (its rules may have failed to compile)")]
    Ended { id: String },
    /// The worker ended while the server waited for its answer.
    #[error("match {id}: the worker ended without an answer")]
    NoAnswer { id: String },
    /// The deadline came before the worker had any move to offer.
    #[error("match {id}: no move ready by the deadline (the rules are still compiling)")]
    NoMoveYet { id: String },
}

/// Why a move of the manager's joint move is not legal.
#[derive(Debug, thiserror::Error)]
pub enum Illegal {
    /// Not a ground term of the game's symbols.
    #[error("{0}")]
    NotATerm(String),
    #[error("not a move of this game")]
    NotAMove,
    /// A move of the game, but not one the role may make now.
    #[error("not legal here (legal: {legal})")]
    NotLegalHere { legal: String },
}
