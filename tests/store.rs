//! The plan store end to end: `solve` writes what it finds and answers a
//! scrambled copy of the game from the store (the plan mapped into the new
//! names and replayed), `store` lists, exports and imports, two processes
//! write one store at once, a bad store file is met with a warning or a
//! clear error, and the player follows a stored plan over HTTP at a start
//! clock far too short to solve the game.

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use ggp_asp::arena::{self, MatchEnd, PlayerSpec};
use ggp_asp::asp::{self, SolveOptions, Source, Status};
use ggp_asp::gdl::{self, print};
use ggp_asp::player::{Decision, MatchConfig, ServerConfig, ServerHandle};
use ggp_asp::reasoner::Engine;
use ggp_asp::store::{fingerprint, Plans};

fn ggp(args: &[&str], store: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ggp-asp"))
        .args(args)
        .env("GGP_ASP_STORE", store)
        .env("NO_COLOR", "1")
        .output()
        .expect("ggp-asp runs")
}

fn solve_json(game: &Path, store: &Path, extra: &[&str]) -> (serde_json::Value, String) {
    let mut args = vec!["solve", game.to_str().unwrap(), "--json", "--threads", "1"];
    args.extend_from_slice(extra);
    let out = ggp(&args, store);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .last()
        .unwrap_or_else(|| panic!("no answer; stderr: {stderr}"));
    let v = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}; stderr: {stderr}"));
    (v, stderr)
}

/// A copy of `game` with every symbol renamed, its rules and bodies
/// shuffled, written into `dir`.
fn scrambled(game: &Path, dir: &Path, seed: u64) -> PathBuf {
    let text = std::fs::read_to_string(game).unwrap();
    let desc = gdl::parse(&text, "game").unwrap();
    let copy = fingerprint::scramble(&desc, seed);
    let path = dir.join(format!("scrambled-{seed}.kif"));
    std::fs::write(&path, print::description_to_string(&copy)).unwrap();
    path
}

/// `game`'s rules as read, and its answer from a solve in this process.
fn solve_in_process(game: &Path) -> (gdl::Description, asp::SolveResult) {
    let (desc, g) = gdl::load_described(game).unwrap();
    let opts = SolveOptions {
        threads: 1,
        ..SolveOptions::default()
    };
    (desc, asp::solve(&g, &opts).unwrap())
}

/// Replays `plan` (KIF moves) on the prover of `game`: the goal reached.
fn replay(game: &Path, plan: &[serde_json::Value]) -> u8 {
    let g = gdl::load(game).unwrap();
    let moves: Vec<String> = plan
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    let terms =
        gdl::parser::parse_ground_terms(&format!("({})", moves.join(" ")), &g.symbols).unwrap();
    let prover = ggp_asp::reasoner::Prover::new(g);
    asp::verify::replay(&prover, &terms).unwrap()
}

#[test]
fn a_plan_solved_once_answers_a_scrambled_copy_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("plans.sqlite");
    let game = common::puzzle_path("hanoi");
    let (first, _) = solve_json(&game, &store, &[]);
    assert_eq!(first["status"], "solved", "{first}");
    assert_eq!(first["source"], "solved", "{first}");

    let copy = scrambled(&game, dir.path(), 11);
    let (again, stderr) = solve_json(&copy, &store, &[]);
    assert_eq!(again["status"], "solved", "{again}");
    assert_eq!(again["source"], "store", "{again}");
    assert!(stderr.contains("plan store"), "{stderr}");
    assert_eq!(again["steps"], first["steps"]);
    assert_eq!(again["proven"], first["proven"]);
    // The plan is in the copy's names, and reaches 100 there.
    assert_ne!(again["plan"], first["plan"]);
    assert_eq!(replay(&copy, again["plan"].as_array().unwrap()), 100);

    // --fresh solves again; the store keeps one record of the game.
    let (fresh, _) = solve_json(&copy, &store, &["--fresh"]);
    assert_eq!(fresh["source"], "solved", "{fresh}");
    let list = ggp(&["store", "list", "--json"], &store);
    let records = String::from_utf8_lossy(&list.stdout);
    assert_eq!(records.lines().count(), 1, "{records}");
    // --no-store neither reads nor writes.
    let (off, _) = solve_json(&copy, &store, &["--no-store"]);
    assert_eq!(off["source"], "solved", "{off}");
}

#[test]
fn export_and_import_carry_every_record_and_forget_removes_one() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.sqlite"), dir.path().join("b.sqlite"));
    for name in ["hanoi", "no-plan"] {
        let (r, _) = solve_json(&common::puzzle_path(name), &a, &[]);
        assert_ne!(r["status"], "error", "{r}");
    }
    let file = dir.path().join("plans.jsonl");
    let out = ggp(&["store", "export", file.to_str().unwrap()], &a);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = ggp(&["store", "import", file.to_str().unwrap()], &b);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = |s: &Path| {
        let out = ggp(&["store", "list", "--json"], s);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut v: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for r in &mut v {
            r.as_object_mut().unwrap().remove("seconds");
        }
        v
    };
    assert_eq!(list(&a), list(&b));
    assert_eq!(list(&b).len(), 2);
    // Importing again adds nothing.
    let out = ggp(&["store", "import", file.to_str().unwrap()], &b);
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 new or better"));
    // A record found by its file, and forgotten.
    let hanoi = common::puzzle_path("hanoi");
    let out = ggp(&["store", "show", hanoi.to_str().unwrap()], &b);
    assert!(String::from_utf8_lossy(&out.stdout).contains("proven shortest"));
    let out = ggp(&["store", "forget", hanoi.to_str().unwrap()], &b);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(list(&b).len(), 1);
    // A line that is not a record: an error naming the file and line.
    std::fs::write(&file, "{\"fingerprint\": 3}\n").unwrap();
    let out = ggp(&["store", "import", file.to_str().unwrap()], &b);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("plans.jsonl:1"), "{err}");
}

#[test]
fn two_processes_writing_one_store_at_once_both_land() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("plans.sqlite");
    let games = ["hanoi", "buttons", "lightsout", "maze"];
    let spawned: Vec<_> = games
        .iter()
        .map(|g| {
            Command::new(env!("CARGO_BIN_EXE_ggp-asp"))
                .args([
                    "solve",
                    common::puzzle_path(g).to_str().unwrap(),
                    "--json",
                    "--threads",
                    "1",
                ])
                .env("GGP_ASP_STORE", &store)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("solve starts")
        })
        .collect();
    for c in spawned {
        let out = c.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(!err.contains("not stored"), "{err}");
    }
    let plans = Plans::open(&store).unwrap();
    let names: Vec<String> = plans
        .list()
        .unwrap()
        .into_iter()
        .map(|(_, e)| e.name)
        .collect();
    for g in games {
        assert!(names.iter().any(|n| n == g), "{g} missing: {names:?}");
    }
    assert_eq!(names.len(), games.len(), "{names:?}");
}

#[test]
fn a_bad_store_is_a_warning_by_default_and_an_error_when_named() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("corrupt.sqlite");
    std::fs::write(&bad, vec![0x5a; 8192]).unwrap();
    let game = common::puzzle_path("hanoi");
    // The default store (from the environment): a warning, and an answer.
    let (r, stderr) = solve_json(&game, &bad, &[]);
    assert_eq!(r["status"], "solved", "{r}");
    assert!(stderr.contains("corrupt.sqlite"), "{stderr}");
    assert!(stderr.contains("without the plan store"), "{stderr}");
    // Named with --store: an error that names the file.
    let out = ggp(
        &[
            "solve",
            game.to_str().unwrap(),
            "--store",
            bad.to_str().unwrap(),
        ],
        Path::new("off"),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("corrupt.sqlite"), "{err}");
    // A store of a newer schema is refused, never rewritten.
    let newer = dir.path().join("newer.sqlite");
    drop(Plans::open(&newer).unwrap());
    let conn = rusqlite::Connection::open(&newer).unwrap();
    conn.execute_batch("PRAGMA user_version = 99").unwrap();
    drop(conn);
    let (r, stderr) = solve_json(&game, &newer, &[]);
    assert_eq!(r["status"], "solved", "{r}");
    assert!(stderr.contains("newer than this ggp-asp"), "{stderr}");
    let conn = rusqlite::Connection::open(&newer).unwrap();
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 99);
}

#[test]
fn a_timeouts_bound_is_where_the_next_proof_starts() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("plans.sqlite");
    let game = common::puzzle_path("hanoi");
    let (desc, solved) = solve_in_process(&game);
    let shortest = solved.plan.len();
    // A run that proved only a bound, as a timeout would.
    let mut timeout = asp::SolveResult::error("timeout".into());
    timeout.status = Status::Timeout;
    timeout.lower_bound = Some(shortest);
    timeout.horizon = shortest - 1;
    let plans = Plans::open(&store).unwrap();
    assert!(plans.remember(&desc, "hanoi", &timeout).unwrap());
    let (r, stderr) = solve_json(&game, &store, &[]);
    assert_eq!(r["source"], "solved", "{r}");
    assert!(stderr.contains("the proof starts there"), "{stderr}");
    assert_eq!(r["proven"], "shortest", "{r}");
    assert_eq!(r["steps"], shortest, "{r}");
    // Now the answer is final: the next solve comes from the store.
    let (r, _) = solve_json(&game, &store, &[]);
    assert_eq!(r["source"], "store", "{r}");
}

#[test]
fn the_player_follows_a_stored_plan_on_a_scrambled_copy_at_a_short_start_clock() {
    let dir = tempfile::tempdir().unwrap();
    let store_path = dir.path().join("plans.sqlite");
    let game = common::puzzle_path("8puzzle");
    let (desc, solved) = solve_in_process(&game);
    assert_eq!(solved.status, Status::Solved);
    assert_eq!(solved.source, Source::Solved);
    let plans = Arc::new(Plans::open(&store_path).unwrap());
    assert!(plans.remember(&desc, "8puzzle", &solved).unwrap());

    let copy = scrambled(&game, dir.path(), 5);
    let cfg = ServerConfig {
        name: "store-player".into(),
        matches: MatchConfig {
            margin: Duration::from_millis(250),
            threads: 1,
            engine: Engine::Auto,
            // No solver: only the store can give the plan in time.
            solver: None,
            ponder: true,
            seed: 3,
            meta: true,
            model: None,
            helpers: None,
            store: Some(Arc::clone(&plans)),
        },
        read_timeout: Duration::from_secs(1),
        max_body: 4 << 20,
        one_match: false,
    };
    let h = ServerHandle::spawn(cfg, SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
    let url = format!("http://{}", h.addr);
    let g = gdl::load(&copy).unwrap();
    let rc = arena::RefereeConfig {
        start_clock: Duration::from_secs(1),
        play_clock: Duration::from_secs(1),
        seed: 1,
        kif: Some(std::fs::read_to_string(&copy).unwrap()),
        match_id: Some("store.1".into()),
        ..arena::RefereeConfig::default()
    };
    let spec: PlayerSpec = url.parse().unwrap();
    let rec = arena::run_match(&g, vec![spec], &rc).unwrap();
    assert!(rec.errors.is_empty(), "{:?}", rec.errors);
    assert_eq!(rec.end, MatchEnd::Terminal);
    assert_eq!(rec.goals[0].1, Some(100), "{:?}", rec.moves);
    assert_eq!(rec.moves.len(), solved.plan.len());
    let decisions = h.player.decisions();
    assert!(
        decisions.contains(&(Decision::PlanFromStore, 1)),
        "{decisions:?}"
    );
}
