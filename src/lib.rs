//! ggp-asp: General Game Playing with answer set programming.
//!
//! - [`gdl`]: reading, validating and normalising game descriptions.
//! - [`asp`]: single-player games solved with clingo, plans verified.
//! - [`reasoner`]: the [`reasoner::StateMachine`] trait and its engines.

pub mod asp;
pub mod gdl;
pub mod reasoner;
pub mod simulate;

pub use gdl::Game;
