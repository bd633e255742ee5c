//! ggp-asp: General Game Playing with answer set programming.
//!
//! - [`gdl`]: reading, validating and normalising game descriptions.
//! - [`reasoner`]: the [`reasoner::StateMachine`] trait and its engines.

pub mod gdl;
pub mod player;
pub mod reasoner;
pub mod simulate;

pub use gdl::Game;
