//! Learned value functions (the UCT-CCNN line of `docs/player.md`): a
//! cascade-correlation network that grows its hidden units ([`ccnn`]) and the
//! cross-entropy method for UCT's exploration constant ([`cem`]).

pub mod ccnn;
pub mod cem;
