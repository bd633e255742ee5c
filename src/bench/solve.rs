//! `ggp-asp bench solve`: every single-player game of some directories solved in
//! a child process (`ggp-asp solve --json`), so that a grounding blow-up or a
//! crash costs one row, not the run, and each row's peak memory is its own.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Settings of a benchmark run.
pub struct BenchConfig {
    pub timeout: f64,
    pub memory_mb: u64,
    pub threads: Option<usize>,
}

/// One game's row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BenchRow {
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

/// The columns of [`BenchRow::table_line`].
pub const TABLE_HEADER: &str = "| game | status | steps | goal | proven | mode | ground s | solve s | total s | peak MiB | verified |\n|---|---|---|---|---|---|---|---|---|---|---|";

impl BenchRow {
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
}

impl BenchRow {
    /// A row read back from [`BenchRow::table_line`]'s text (the table
    /// `bench solve` prints); `None` for the header, the separator, or a
    /// line that is not a row. The message is not in the table.
    pub fn from_table_line(line: &str) -> Option<BenchRow> {
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
        Some(BenchRow {
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
    let count = |s: &str| rows.iter().filter(|r| r.status == s).count();
    let proven = |p: &str| {
        rows.iter()
            .filter(|r| r.steps.is_some() && r.proven.as_deref() == Some(p))
            .count()
    };
    Summary {
        games: rows.len(),
        solved_100: rows
            .iter()
            .filter(|r| r.status == "solved" && r.goal == Some(100))
            .count(),
        solved_best_goal: rows
            .iter()
            .filter(|r| r.status == "solved" && r.goal != Some(100))
            .count(),
        no_plan: count("no-plan"),
        timeout: count("timeout"),
        error: count("error"),
        total_s: rows.iter().map(|r| r.total_s).sum(),
        proven_shortest: proven("shortest"),
        proven_best_goal: proven("best-goal"),
        proven_none: proven("none"),
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
/// is killed if it outlives its timeout by 15 s (a grounding that cannot be
/// interrupted).
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
        .arg(cfg.memory_mb.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(t) = cfg.threads {
        cmd.arg("--threads").arg(t.to_string());
    }
    let failed = |status: &str, message: String| BenchRow {
        game: name.clone(),
        status: status.to_string(),
        steps: None,
        goal: None,
        mode: None,
        proven: None,
        ground_s: 0.0,
        solve_s: 0.0,
        total_s: start.elapsed().as_secs_f64(),
        peak_mb: 0.0,
        verified: false,
        message,
    };
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return failed("error", format!("cannot start {}: {e}", exe.display())),
    };
    let limit = Duration::from_secs_f64(cfg.timeout + 15.0);
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return failed(
                    "timeout",
                    format!(
                        "killed after {:.0} s (grounding did not return)",
                        limit.as_secs_f64()
                    ),
                );
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return failed("error", format!("waiting for the solver: {e}")),
        }
    }
    let text = reader.join().unwrap_or_default();
    let Some(v) = text
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
    else {
        return failed("error", "the solver printed no result (crashed?)".into());
    };
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    let f = |k: &str| v.get(k).and_then(|x| x.as_f64()).unwrap_or(0.0);
    let status = s("status").unwrap_or_else(|| "error".into());
    BenchRow {
        game: name.clone(),
        // The solver shows a plan only once the prover has replayed it (a
        // timeout's best plan below 100 too).
        verified: v
            .get("plan")
            .and_then(|p| p.as_array())
            .is_some_and(|p| !p.is_empty())
            || status == "solved",
        status,
        steps: v.get("steps").and_then(|x| x.as_u64()).map(|x| x as usize),
        goal: v.get("goal").and_then(|x| x.as_u64()).map(|x| x as u8),
        mode: s("mode"),
        proven: s("proven"),
        ground_s: f("ground_s"),
        solve_s: f("solve_s"),
        total_s: f("total_s"),
        peak_mb: f("peak_mb"),
        message: s("message").unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_line_reads_back_as_its_row() {
        let row = BenchRow {
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
        let back = BenchRow::from_table_line(&row.table_line()).unwrap();
        assert_eq!(back.table_line(), row.table_line());
        let none = BenchRow {
            steps: None,
            goal: None,
            mode: None,
            proven: None,
            verified: false,
            status: "timeout".into(),
            ..row
        };
        let back = BenchRow::from_table_line(&none.table_line()).unwrap();
        assert_eq!(back.table_line(), none.table_line());
        for line in TABLE_HEADER.lines() {
            assert!(BenchRow::from_table_line(line).is_none(), "{line}");
        }
    }
}
