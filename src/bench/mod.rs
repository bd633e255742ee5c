//! Benchmarks: the measurements behind `ggp-asp bench`, each returning rows that
//! the command line prints.
//!
//! - [`arena`]: UCT against a baseline over a series of matches, seats rotated
//!   (`bench arena`);
//! - [`playouts`]: random playouts per second of each engine, and what it
//!   costs to build (`bench playouts`);
//! - [`search`]: tree search iterations/s against the engine's raw playouts/s
//!   (`bench search`);
//! - [`solve`]: every single-player game of some directories solved in a child
//!   process (`bench solve`);
//! - [`read_saved`]: the rows a run wrote, read back (`bench plot`).
//!
//! Timing and counting live here, where tests can reach them; the command line
//! only formats the rows.

pub mod arena;
pub mod playouts;
pub mod search;
pub mod solve;

use std::path::Path;

use anyhow::{Context, Result};

/// The results a saved benchmark file holds.
#[derive(Default)]
pub struct Saved {
    /// `bench solve` rows: its table, or its `--json` lines.
    pub rows: Vec<solve::SavedRow>,
    /// `bench arena --json` lines.
    pub arena: Vec<arena::ArenaResult>,
}

/// Reads a file `bench solve` or `bench arena` wrote. A table's other lines
/// (the summary below it) and a JSON run's summary line are skipped; any
/// other line is an error naming the file and the line.
pub fn read_saved(path: &Path) -> Result<Saved> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut saved = Saved::default();
    let at = |i: usize| format!("{}:{}", path.display(), i + 1);
    if text.lines().any(|l| l.trim_start().starts_with('|')) {
        saved.rows = text
            .lines()
            .filter_map(solve::SavedRow::from_table_line)
            .collect();
        return Ok(saved);
    }
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            anyhow::bail!(
                "{}: neither a JSON line nor a row of bench solve's table",
                at(i)
            );
        };
        if v.get("mean_score").is_some() {
            let r = serde_json::from_value(v)
                .with_context(|| format!("{}: not an arena result", at(i)))?;
            saved.arena.push(r);
        } else if v.get("status").is_some() {
            let r = serde_json::from_value(v)
                .with_context(|| format!("{}: not a bench solve row", at(i)))?;
            saved.rows.push(r);
        }
    }
    Ok(saved)
}
