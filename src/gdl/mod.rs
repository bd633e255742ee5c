//! The Game Description Language: reading KIF ([`parse`]), the AST over interned
//! symbols ([`ast`], [`symbol`]), printing back to KIF ([`print`]), validation
//! ([`validate`]) and the normal form every engine starts from ([`Game`]).

pub mod ast;
pub mod constant;
pub mod demand;
pub mod domain;
pub mod error;
pub mod factor;
pub mod graph;
pub mod normal;
pub mod parser;
pub mod print;
pub mod split;
mod subst;
pub mod symbol;
pub mod validate;

use std::path::Path;

pub use ast::{Description, Literal, Pos, Relation, Rule, Term};
pub use error::{Diagnostic, GdlError, Severity};
pub use graph::Phase;
pub use normal::Game;
pub use parser::{parse, parse_bytes};
pub use symbol::{kw, Sym, Symbols};

/// Reads, parses and validates a game file.
pub fn load(path: &Path) -> Result<Game, GdlError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        GdlError::single(&name, Pos::default(), format!("cannot read the file: {e}"))
    })?;
    load_bytes(&bytes, &name)
}

/// [`load`], with the description as written beside the game (the plan
/// store identifies a game by its rules as read).
pub fn load_described(path: &Path) -> Result<(Description, Game), GdlError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        GdlError::single(&name, Pos::default(), format!("cannot read the file: {e}"))
    })?;
    load_bytes_described(&bytes, &name)
}

/// Parses and validates a game from bytes.
pub fn load_bytes(bytes: &[u8], name: &str) -> Result<Game, GdlError> {
    Game::new(read_bytes(bytes, name)?)
}

/// [`load_bytes`], with the description as written beside the game.
pub fn load_bytes_described(bytes: &[u8], name: &str) -> Result<(Description, Game), GdlError> {
    let desc = read_bytes(bytes, name)?;
    let game = Game::new(desc.clone())?;
    Ok((desc, game))
}

/// Parses a game from bytes; an empty file is an error.
fn read_bytes(bytes: &[u8], name: &str) -> Result<Description, GdlError> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(GdlError::single(
            name,
            Pos { line: 1, col: 1 },
            "the file is empty: no rules",
        ));
    }
    parse_bytes(bytes, name)
}
