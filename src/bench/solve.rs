//! `ggp-asp bench solve`: every single-player game of some directories solved in
//! a child process (`ggp-asp solve --json`), so that a grounding blow-up or a
//! crash costs one row, not the run, and each row's peak memory is its own.
//!
//! A [`BenchRow`] holds the child's typed answer (or why it gave none); it
//! prints as a [`SavedRow`], the text `bench plot` reads back, which also
//! reads the saved runs of other solvers.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::asp::{Proven, SolveResult, Source, Status};
use crate::child::{self, AnswerError, Failure, Spec};
use crate::show::plot::Solved;

/// Settings of a benchmark run.
pub struct BenchConfig {
    pub timeout: f64,
    pub memory_mb: u64,
    pub threads: Option<usize>,
    /// The plan store the children look games up in and write to; without
    /// one they run with `--no-store` (a benchmark measures solving).
    pub store: Option<std::path::PathBuf>,
}

/// One game's row: the solver child's answer, or why it gave none.
#[derive(Clone, Debug)]
pub struct BenchRow {
    pub game: String,
    pub answer: Result<SolveResult, Unanswered>,
}

/// A game whose child gave no answer: it could not start, was killed past
/// its timeout, or died without printing one.
#[derive(Clone, Debug)]
pub struct Unanswered {
    /// `Timeout` (killed) or `Error`.
    pub status: Status,
    /// The time from the child's start to its end.
    pub total_s: f64,
    pub message: String,
}

impl BenchRow {
    pub fn status(&self) -> Status {
        match &self.answer {
            Ok(a) => a.status,
            Err(u) => u.status,
        }
    }

    pub fn total_s(&self) -> f64 {
        match &self.answer {
            Ok(a) => a.total_s,
            Err(u) => u.total_s,
        }
    }

    /// The plan was replayed on the prover: the solver shows a plan only once
    /// the prover has replayed it (a timeout's best plan below 100 too).
    pub fn verified(&self) -> bool {
        self.answer
            .as_ref()
            .is_ok_and(|a| !a.plan.is_empty() || a.status == Status::Solved)
    }

    /// The row as `bench solve` prints it (a table line, a JSON line).
    pub fn saved(&self) -> SavedRow {
        let verified = self.verified();
        match &self.answer {
            Ok(a) => SavedRow {
                game: self.game.clone(),
                status: a.status.name().to_string(),
                steps: a.steps,
                goal: a.goal,
                mode: match a.source {
                    Source::Store => Some("store".to_string()),
                    Source::Solved => a.mode.map(|m| m.name().to_string()),
                },
                proven: Some(a.proven.name().to_string()),
                ground_s: a.ground_s,
                solve_s: a.solve_s,
                total_s: a.total_s,
                peak_mb: a.peak_mb,
                verified,
                message: a.message.clone(),
            },
            Err(u) => SavedRow {
                game: self.game.clone(),
                status: u.status.name().to_string(),
                steps: None,
                goal: None,
                mode: None,
                proven: None,
                ground_s: 0.0,
                solve_s: 0.0,
                total_s: u.total_s,
                peak_mb: 0.0,
                verified,
                message: u.message.clone(),
            },
        }
    }

    pub fn table_line(&self) -> String {
        self.saved().table_line()
    }
}

/// As a [`SavedRow`]: the JSON line `bench solve --json` prints.
impl Serialize for BenchRow {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.saved().serialize(s)
    }
}

/// A row as `bench solve` writes it, a table line or a JSON line, and as
/// `bench plot` reads it back: the answer's values as text, so that a saved
/// run of another solver (its own modes and statuses) reads too.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SavedRow {
    pub game: String,
    pub status: String,
    pub steps: Option<usize>,
    pub goal: Option<u8>,
    pub mode: Option<String>,
    pub proven: Option<String>,
    pub ground_s: f64,
    pub solve_s: f64,
    pub total_s: f64,
    pub peak_mb: f64,
    /// The plan was replayed on the prover (every `solved` row).
    pub verified: bool,
    pub message: String,
}

/// The columns of [`SavedRow::table_line`].
pub const TABLE_HEADER: &str = "| game | status | steps | goal | proven | mode | ground s | solve s | total s | peak MiB | verified |\n|---|---|---|---|---|---|---|---|---|---|---|";

impl SavedRow {
    pub fn table_line(&self) -> String {
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        format!(
            "| {} | {} | {} | {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.0} | {} |",
            self.game,
            self.status,
            opt(self.steps.map(|s| s.to_string())),
            opt(self.goal.map(|g| g.to_string())),
            opt(self.proven.clone()),
            opt(self.mode.clone()),
            self.ground_s,
            self.solve_s,
            self.total_s,
            self.peak_mb,
            if self.verified { "yes" } else { "-" }
        )
    }

    /// A row read back from [`SavedRow::table_line`]'s text (the table
    /// `bench solve` prints); `None` for the header, the separator, or a
    /// line that is not a row. The message is not in the table.
    pub fn from_table_line(line: &str) -> Option<SavedRow> {
        let cells: Vec<&str> = line
            .trim()
            .strip_prefix('|')?
            .strip_suffix('|')?
            .split('|')
            .map(str::trim)
            .collect();
        let [game, status, steps, goal, proven, mode, ground_s, solve_s, total_s, peak_mb, verified] =
            cells[..]
        else {
            return None;
        };
        let opt = |v: &str| (v != "-").then(|| v.to_string());
        Some(SavedRow {
            game: game.to_string(),
            status: status.to_string(),
            steps: opt(steps).map(|v| v.parse().ok()).unwrap_or(None),
            goal: opt(goal).map(|v| v.parse().ok()).unwrap_or(None),
            proven: opt(proven),
            mode: opt(mode),
            ground_s: ground_s.parse().ok()?,
            solve_s: solve_s.parse().ok()?,
            total_s: total_s.parse().ok()?,
            peak_mb: peak_mb.parse().ok()?,
            verified: verified == "yes",
            message: String::new(),
        })
    }

    /// Solved to 100: a best plan below 100 is not a solution to count.
    pub fn solved_to_100(&self) -> bool {
        self.status == Status::Solved.name() && self.goal == Some(100)
    }
}

/// The games `rows` solved to 100, as a cactus plot takes them (a row
/// without a mode under `-`).
pub fn solved(rows: &[SavedRow]) -> Vec<Solved> {
    rows.iter()
        .filter(|r| r.solved_to_100())
        .map(|r| Solved {
            mode: r.mode.clone().unwrap_or_else(|| "-".into()),
            seconds: r.total_s,
        })
        .collect()
}

/// Totals over a run.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub games: usize,
    pub solved_100: usize,
    pub solved_best_goal: usize,
    pub no_plan: usize,
    pub timeout: usize,
    pub error: usize,
    pub total_s: f64,
    /// Of the rows that answered a plan, how many say each `proven`.
    pub proven_shortest: usize,
    pub proven_best_goal: usize,
    pub proven_none: usize,
}

impl Summary {
    pub fn text(&self) -> String {
        format!(
            "{} games: {} solved to 100, {} best goal below 100, {} no plan, {} timeout, {} error; {:.1} s in total",
            self.games,
            self.solved_100,
            self.solved_best_goal,
            self.no_plan,
            self.timeout,
            self.error,
            self.total_s
        ) + &format!(
            "\nproven: {} shortest, {} best-goal, {} none",
            self.proven_shortest, self.proven_best_goal, self.proven_none
        )
    }
}

pub fn summary(rows: &[BenchRow]) -> Summary {
    let count = |s: Status| rows.iter().filter(|r| r.status() == s).count();
    let solved = |to_100: bool| {
        rows.iter()
            .filter(|r| r.status() == Status::Solved)
            .filter(|r| r.answer.as_ref().is_ok_and(|a| a.goal == Some(100)) == to_100)
            .count()
    };
    let proven = |p: Proven| {
        rows.iter()
            .filter(|r| {
                r.answer
                    .as_ref()
                    .is_ok_and(|a| a.steps.is_some() && a.proven == p)
            })
            .count()
    };
    Summary {
        games: rows.len(),
        solved_100: solved(true),
        solved_best_goal: solved(false),
        no_plan: count(Status::NoPlan),
        timeout: count(Status::Timeout),
        error: count(Status::Error),
        total_s: rows.iter().map(BenchRow::total_s).sum(),
        proven_shortest: proven(Proven::Shortest),
        proven_best_goal: proven(Proven::BestGoal),
        proven_none: proven(Proven::None),
    }
}

/// The `.kif` files of `dirs` that are single-player games, sorted by name. A
/// directory with a `manifest.tsv` (columns `file` and `players_kind`) is read
/// through it; otherwise every file is loaded and kept if it has one role.
pub fn single_player_games(dirs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for dir in dirs {
        let manifest = dir.join("manifest.tsv");
        let mut files: Vec<PathBuf> = if manifest.exists() {
            let text = std::fs::read_to_string(&manifest)?;
            let mut lines = text.lines();
            let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
            let col = |name: &str| header.iter().position(|h| *h == name);
            let (Some(file), Some(kind)) = (col("file"), col("players_kind")) else {
                anyhow::bail!("{}: no 'file' or 'players_kind' column", manifest.display());
            };
            lines
                .map(|l| l.split('\t').collect::<Vec<_>>())
                .filter(|f| f.get(kind) == Some(&"single"))
                .filter_map(|f| f.get(file).map(|name| dir.join(name)))
                .collect()
        } else {
            let mut v = Vec::new();
            for e in std::fs::read_dir(dir)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", dir.display()))?
            {
                let p = e?.path();
                if p.extension().is_some_and(|x| x == "kif")
                    && crate::gdl::load(&p).is_ok_and(|g| g.roles.len() == 1)
                {
                    v.push(p);
                }
            }
            v
        };
        files.sort();
        out.extend(files);
    }
    Ok(out)
}

/// Solves one game in a child process of `exe` (the `ggp-asp` binary). The child
/// is killed if it outlives its timeout by [`KILL_AFTER`] (a grounding that
/// cannot be interrupted).
pub fn run_one(exe: &Path, game: &Path, cfg: &BenchConfig) -> BenchRow {
    let name = game
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let start = Instant::now();
    let mut cmd = Command::new(exe);
    cmd.arg("solve")
        .arg(game)
        .arg("--json")
        .arg("--timeout")
        .arg(cfg.timeout.to_string())
        .arg("--memory-mb")
        .arg(cfg.memory_mb.to_string());
    if let Some(t) = cfg.threads {
        cmd.arg("--threads").arg(t.to_string());
    }
    match &cfg.store {
        Some(store) => cmd.arg("--store").arg(store),
        None => cmd.arg("--no-store"),
    };
    let limit = Duration::from_secs_f64(cfg.timeout) + KILL_AFTER;
    let answer = Spec::new(cmd, "the solver")
        .wall_limit(limit)
        .thread_names("bench-solve")
        .spawn()
        .and_then(|run| run.answer::<SolveResult>())
        .map_err(|e| unanswered(e, limit, start.elapsed()));
    BenchRow { game: name, answer }
}

/// How long past its own timeout a child may run before it is killed.
const KILL_AFTER: Duration = Duration::from_secs(15);

/// The row of a child that gave no answer.
fn unanswered(e: child::Error, limit: Duration, took: Duration) -> Unanswered {
    let (status, message) = match &e.failure {
        Failure::Overran => (
            Status::Timeout,
            format!(
                "killed after {:.0} s (grounding did not return)",
                limit.as_secs_f64()
            ),
        ),
        Failure::NoAnswer {
            why: AnswerError::NoJson(_),
            ..
        } => (
            Status::Error,
            "the solver printed no result (crashed?)".to_string(),
        ),
        _ => (Status::Error, e.to_string()),
    };
    Unanswered {
        status,
        total_s: took.as_secs_f64(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_line_reads_back_as_its_row() {
        let row = SavedRow {
            game: "8puzzle".into(),
            status: "solved".into(),
            steps: Some(30),
            goal: Some(100),
            mode: Some("breadth".into()),
            proven: Some("shortest".into()),
            ground_s: 0.0,
            solve_s: 0.65,
            total_s: 0.66,
            peak_mb: 27.0,
            verified: true,
            message: String::new(),
        };
        let back = SavedRow::from_table_line(&row.table_line()).unwrap();
        assert_eq!(back.table_line(), row.table_line());
        let none = SavedRow {
            steps: None,
            goal: None,
            mode: None,
            proven: None,
            verified: false,
            status: "timeout".into(),
            ..row
        };
        let back = SavedRow::from_table_line(&none.table_line()).unwrap();
        assert_eq!(back.table_line(), none.table_line());
        for line in TABLE_HEADER.lines() {
            assert!(SavedRow::from_table_line(line).is_none(), "{line}");
        }
    }

    #[test]
    fn a_row_prints_its_answer_as_before() {
        let answer: SolveResult = serde_json::from_str(
            r#"{"status":"solved","goal":100,"steps":2,"plan":["a","b"],"proven":"shortest","mode":"breadth","ground_s":0.0,"solve_s":0.5,"total_s":0.6,"horizon":1,"peak_mb":27.0,"message":""}"#,
        )
        .unwrap();
        let row = BenchRow {
            game: "g".into(),
            answer: Ok(answer),
        };
        assert_eq!(
            serde_json::to_string(&row).unwrap(),
            r#"{"game":"g","status":"solved","steps":2,"goal":100,"mode":"breadth","proven":"shortest","ground_s":0.0,"solve_s":0.5,"total_s":0.6,"peak_mb":27.0,"verified":true,"message":""}"#
        );
        assert_eq!(
            row.table_line(),
            "| g | solved | 2 | 100 | shortest | breadth | 0.00 | 0.50 | 0.60 | 27 | yes |"
        );
        let killed = BenchRow {
            game: "g".into(),
            answer: Err(Unanswered {
                status: Status::Timeout,
                total_s: 75.0,
                message: "killed".into(),
            }),
        };
        assert_eq!(
            serde_json::to_string(&killed).unwrap(),
            r#"{"game":"g","status":"timeout","steps":null,"goal":null,"mode":null,"proven":null,"ground_s":0.0,"solve_s":0.0,"total_s":75.0,"peak_mb":0.0,"verified":false,"message":"killed"}"#
        );
        assert_eq!(
            killed.table_line(),
            "| g | timeout | - | - | - | - | 0.00 | 0.00 | 75.00 | 0 | - |"
        );
    }

    #[test]
    fn a_child_that_dies_without_an_answer_is_an_error_row() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("fake-ggp-asp");
        std::fs::write(&exe, "#!/bin/sh\necho garbage\nexit 139\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cfg = BenchConfig {
            timeout: 10.0,
            memory_mb: 512,
            threads: None,
            store: None,
        };
        let row = run_one(&exe, Path::new("game.kif"), &cfg);
        assert_eq!(row.game, "game");
        assert_eq!(row.status(), Status::Error);
        let saved = row.saved();
        assert_eq!(saved.message, "the solver printed no result (crashed?)");
        assert!(!saved.verified);
        let row = run_one(&dir.path().join("missing"), Path::new("game.kif"), &cfg);
        assert_eq!(row.status(), Status::Error);
        assert!(row.saved().message.starts_with("cannot start"), "{row:?}");
    }
}
