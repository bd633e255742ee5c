//! The subcommands of `ggp-asp`, one file each: its clap arguments (whose doc
//! comments are the `--help` text) and its `run`, which calls the library and
//! prints what it returns. Helpers that several commands share live here.
//!
//! Every `run` returns the process's exit code as a `u8`, not a
//! `std::process::ExitCode`: `main` ends the process with `libc::_exit`, which
//! needs the number, and an `ExitCode` cannot be read back.

pub mod bench;
pub mod check;
pub mod encode;
pub mod inspect;
pub mod learn;
pub mod referee;
pub mod serve;
pub mod simulate;
pub mod solve;
pub mod store;
pub mod worker;

use std::path::Path;

use anyhow::Result;

use ggp_asp::arena::ReplyError;

/// The model of a `--model` flag, loaded (refused when the file is not a
/// model of this build's format).
pub fn load_model(path: Option<&Path>) -> Result<Option<std::sync::Arc<ggp_asp::learn::Model>>> {
    path.map(|p| ggp_asp::learn::Model::load(p).map(std::sync::Arc::new))
        .transpose()
}

/// A game's name in tables: its file name without the extension.
pub fn game_name(path: &Path) -> String {
    path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// A referee's error as `match` and `bench arena` print it, the step counted
/// from 1.
pub fn match_error(e: &ReplyError) -> String {
    format!(
        "{} at step {}: {} ({})",
        e.role,
        e.step + 1,
        e.kind,
        e.detail
    )
}
