//! The public game corpus (`../shared/games`, read-only test data, never copied into
//! the repository) through the whole front end and the reference prover:
//!
//! - every file parses, or is refused as GDL-II with that message;
//! - printing a description and parsing the text again gives the same rules;
//! - every file becomes a `Game` or fails with diagnostics that say file, line
//!   and message, never with a panic; files the manifest marks as unsafe are
//!   reported as unsafe;
//! - seeded random playouts on every valid game end at a terminal state with one
//!   goal value per role, or at a step cap, and every role has a legal move in
//!   every non-terminal state met on the way (unless the manifest lists the game as
//!   having such a problem).
//!
//! The prover is slow on the biggest games, so playouts run under a small time
//! budget per game: what was played is still checked. Failures are collected per
//! file and reported together, so one run shows every broken game.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use ggp_asp::gdl::{self, print::description_to_string, Rule};
use ggp_asp::reasoner::{Prover, StateMachine};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/games");

/// Playouts per game, joint moves per playout, and the wall-clock budget per game.
const PLAYOUTS: usize = 2;
const MAX_STEPS: usize = 200;
const BUDGET: Duration = Duration::from_millis(1000);

/// Every `.kif` file of the corpus, its own tests folder included, sorted.
fn corpus_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [PathBuf::from(CORPUS), Path::new(CORPUS).join("tests")] {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
        for e in entries {
            let p = e.expect("directory entry").path();
            if p.extension().is_some_and(|x| x == "kif") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() > 400, "the corpus should hold over 400 games, found {}", files.len());
    files
}

/// The manifest's `problems` column, by file path relative to the corpus folder.
fn manifest_problems() -> HashMap<String, String> {
    let text = std::fs::read_to_string(Path::new(CORPUS).join("manifest.tsv")).expect("manifest.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("manifest header").split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("manifest column {name}"));
    let (file, problems) = (col("file"), col("problems"));
    lines
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|f| f.len() > problems)
        .map(|f| (f[file].to_string(), f[problems].to_string()))
        .collect()
}

fn relative(p: &Path) -> String {
    p.strip_prefix(CORPUS).expect("inside the corpus").to_string_lossy().into_owned()
}

/// Rules without their positions: printing moves rules to other lines.
fn shape(rules: &[Rule]) -> Vec<(&gdl::Term, &[gdl::Literal])> {
    rules.iter().map(|r| (&r.head, r.body.as_slice())).collect()
}

/// Parsing and the print/parse round trip for one file; `Err` describes a failure.
fn check_parse(path: &Path) -> Result<(), String> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let desc = match gdl::parse_bytes(&bytes, &name) {
        Ok(d) => d,
        Err(e) if e.to_string().contains("GDL-II is not supported") => return Ok(()),
        Err(e) => return Err(format!("does not parse: {e}")),
    };
    let text = description_to_string(&desc);
    let again = gdl::parse(&text, "printed").map_err(|e| format!("printed text does not parse: {e}"))?;
    if shape(&again.rules) != shape(&desc.rules) {
        let first = desc
            .rules
            .iter()
            .zip(&again.rules)
            .position(|(a, b)| a.head != b.head || a.body != b.body)
            .unwrap_or(desc.rules.len().min(again.rules.len()));
        return Err(format!(
            "round trip changes the rules ({} vs {} rules; first difference at rule {first})",
            desc.rules.len(),
            again.rules.len()
        ));
    }
    Ok(())
}

#[test]
fn every_file_parses_and_prints_back() {
    let mut failures = Vec::new();
    for path in corpus_files() {
        match catch_unwind(AssertUnwindSafe(|| check_parse(&path))) {
            Ok(Ok(())) => {}
            Ok(Err(msg)) => failures.push(format!("{}: {msg}", relative(&path))),
            Err(_) => failures.push(format!("{}: the parser panicked", relative(&path))),
        }
    }
    assert!(failures.is_empty(), "{} file(s) failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_file_validates_or_says_where_it_fails() {
    let problems = manifest_problems();
    let mut failures = Vec::new();
    let mut valid = 0;
    for path in corpus_files() {
        let rel = relative(&path);
        let result = match catch_unwind(AssertUnwindSafe(|| gdl::load(&path))) {
            Ok(r) => r,
            Err(_) => {
                failures.push(format!("{rel}: loading panicked"));
                continue;
            }
        };
        let messages: Vec<String> = match &result {
            Ok(game) => {
                valid += 1;
                game.warnings.iter().map(|d| d.message.clone()).collect()
            }
            Err(e) => {
                if e.diagnostics.is_empty() {
                    failures.push(format!("{rel}: an error without diagnostics"));
                }
                for d in &e.diagnostics {
                    if d.file.is_empty() || d.pos.line == 0 || d.message.trim().is_empty() {
                        failures.push(format!("{rel}: a diagnostic without file, line or message: {d}"));
                    }
                }
                e.diagnostics.iter().map(|d| d.message.clone()).collect()
            }
        };
        let problem = problems.get(&rel).map(String::as_str).unwrap_or("");
        if problem.starts_with("eval_error:unsafe") && !messages.iter().any(|m| m.contains("unsafe")) {
            failures.push(format!("{rel}: the manifest marks it {problem:?}, but no diagnostic names 'unsafe'"));
        }
    }
    eprintln!("{valid} valid games");
    assert!(valid > 380, "only {valid} corpus games are valid");
    assert!(failures.is_empty(), "{} file(s) failed:\n{}", failures.len(), failures.join("\n"));
}

/// What random play on one game showed.
#[derive(Default)]
struct PlayReport {
    steps: usize,
    terminals: usize,
    out_of_time: bool,
}

/// Seeded random playouts on `prover`; `Err` names the playout, step and role at fault.
fn play(prover: &Prover, problem: &str, seed: u64, started: Instant) -> Result<PlayReport, String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let roles = prover.num_roles();
    let mut report = PlayReport::default();
    let mut moves = Vec::new();
    'playouts: for p in 0..PLAYOUTS {
        let mut state = prover.initial_state();
        for step in 0..=MAX_STEPS {
            if started.elapsed() > BUDGET {
                report.out_of_time = true;
                break 'playouts;
            }
            if prover.is_terminal(&state) {
                report.terminals += 1;
                for r in 0..roles {
                    let values = prover.goal_values(&state, r);
                    if values.len() != 1 && !problem.contains("goal_") {
                        return Err(format!(
                            "playout {p}, step {step}: terminal state where role {} has goal values {values:?}",
                            prover.game().role_names()[r]
                        ));
                    }
                }
                continue 'playouts;
            }
            if step == MAX_STEPS {
                break;
            }
            let mut joint = Vec::with_capacity(roles);
            for r in 0..roles {
                prover.legal_moves(&state, r, &mut moves);
                if moves.is_empty() {
                    if problem.contains("no_legal_move") {
                        continue 'playouts;
                    }
                    return Err(format!(
                        "playout {p}, step {step}: role {} has no legal move in a non-terminal state",
                        prover.game().role_names()[r]
                    ));
                }
                joint.push(moves[rng.gen_range(0..moves.len())]);
            }
            state = prover.next_state(&state, &joint);
            report.steps += 1;
        }
    }
    Ok(report)
}

#[test]
fn random_playouts_on_every_valid_game() {
    let problems = manifest_problems();
    let mut failures = Vec::new();
    let (mut games, mut terminals, mut out_of_time) = (0, 0, Vec::new());
    let all = Instant::now();
    for (i, path) in corpus_files().iter().enumerate() {
        let rel = relative(path);
        let Ok(game) = gdl::load(path) else { continue };
        let problem = problems.get(&rel).cloned().unwrap_or_default();
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let prover = Prover::new(game);
            play(&prover, &problem, i as u64, started)
        }));
        games += 1;
        match outcome {
            Ok(Ok(report)) => {
                terminals += report.terminals;
                if report.out_of_time {
                    out_of_time.push(format!("{rel} ({} steps)", report.steps));
                }
            }
            Ok(Err(msg)) => failures.push(format!("{rel}: {msg}")),
            Err(_) => failures.push(format!("{rel}: the prover panicked")),
        }
        let t = started.elapsed();
        if t > BUDGET * 2 {
            eprintln!("slow: {rel} took {:.1} s", t.as_secs_f64());
        }
    }
    eprintln!(
        "{games} games, {terminals} terminal playouts, {} stopped by the time budget, {:.1} s",
        out_of_time.len(),
        all.elapsed().as_secs_f64()
    );
    eprintln!("stopped by the time budget: {}", out_of_time.join(", "));
    assert!(games > 380 && terminals > 500, "{games} games, {terminals} terminal playouts");
    assert!(failures.is_empty(), "{} game(s) failed:\n{}", failures.len(), failures.join("\n"));
}
