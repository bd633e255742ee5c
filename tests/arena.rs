//! The referee ([`ggp_asp::arena`]): in-process matches run to the end with goals
//! recorded and every move legal; late, illegal and failing players are replaced
//! by random legal moves and recorded; the `match` command's text and JSON; and a
//! sweep of UCT over the whole corpus at tiny, deterministic budgets (no illegal
//! move, no failure).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use common::{prover, puzzle_path};
use ggp_asp::arena::{
    run_match, run_match_entrants, Entrant, MatchEnd, MatchInfo, MatchRecord, Player, PlayerSpec,
    RefereeConfig,
};
use ggp_asp::gdl::{self, parser::parse_ground_terms, Term};
use ggp_asp::reasoner::{Engine, StateMachine};

/// A reproducible match: the search players run a fixed number of iterations
/// (uct) or playouts (mc), so the clocks only need to fit that work on any
/// machine, however slow or busy; whether a player answers within its clock
/// is the subject of [`clock_driven_uct_answers_in_time_where_iterations_are_dear`].
fn quick(seed: u64) -> RefereeConfig {
    RefereeConfig {
        start_clock: Duration::from_secs(120),
        play_clock: Duration::from_secs(120),
        seed,
        engine: Engine::Prover,
        iterations: Some(200),
        ..RefereeConfig::default()
    }
}

/// Replays a record on the prover: every joint move legal, the end and goals as recorded.
fn check_record(name: &str, rec: &MatchRecord) {
    let m = prover(name);
    let syms = &m.game().symbols;
    let mut s = m.initial_state();
    for (step, texts) in rec.moves.iter().enumerate() {
        assert!(!m.is_terminal(&s), "step {step}: terminal already");
        let joint: Vec<_> = texts
            .iter()
            .enumerate()
            .map(|(r, t)| {
                let term = parse_ground_terms(&format!("({t})"), syms).expect("KIF")[0].clone();
                let mv = m.parse_move(&term).expect("a known move");
                assert!(m.legal(&s, r).contains(&mv), "step {step}: {t} illegal");
                mv
            })
            .collect();
        s = m.next_state(&s, &joint);
    }
    assert_eq!(rec.end == MatchEnd::Terminal, m.is_terminal(&s));
    for (r, (role, g)) in rec.goals.iter().enumerate() {
        assert_eq!(role, &rec.roles[r]);
        assert_eq!(*g, m.goal(&s, r));
    }
}

fn game(name: &str) -> gdl::Game {
    gdl::load(&puzzle_path(name)).expect("puzzle loads")
}

#[test]
fn in_process_matches_run_to_the_end() {
    let cases: &[(&str, &[PlayerSpec])] = &[
        ("tictactoe", &[PlayerSpec::Uct, PlayerSpec::Random]),
        ("tictactoe", &[PlayerSpec::Legal, PlayerSpec::Mc]),
        (
            "nim3",
            &[PlayerSpec::Uct, PlayerSpec::Mc, PlayerSpec::Random],
        ),
        ("rps3", &[PlayerSpec::Uct, PlayerSpec::Uct]),
        ("buttons", &[PlayerSpec::Uct]),
    ];
    for (name, players) in cases {
        let rec = run_match(&game(name), players.to_vec(), &quick(3)).expect("match runs");
        assert_eq!(rec.end, MatchEnd::Terminal, "{name}");
        assert!(
            rec.goals.iter().all(|(_, g)| g.is_some()),
            "{name}: {rec:?}"
        );
        assert!(rec.errors.is_empty(), "{name}: {:?}", rec.errors);
        assert_eq!(rec.players.len(), players.len());
        check_record(name, &rec);
    }
}

/// Games that do not ground as written are refereed and played on the rules
/// the rewrites make ground, by `auto` and by the prover asked for:
/// mummymaze1p (no engine can be built as written) and ruleDepthQuadratic (its
/// prover as written would ask for 2^44 tuples a state); and sudoku, which no
/// rewrite makes ground, on the prover's demand rewrite (81 moves a match, so
/// few iterations).
#[test]
fn games_that_do_not_ground_are_played_on_rewritten_rules() {
    for (name, iterations) in [
        ("mummymaze1p", 50),
        ("ruleDepthQuadratic", 50),
        ("sudoku", 4),
    ] {
        let g = gdl::load(&common::corpus_game(name)).expect("the game loads");
        for engine in [Engine::Auto, Engine::Prover] {
            let cfg = RefereeConfig {
                engine,
                iterations: Some(iterations),
                ..quick(1)
            };
            let rec = run_match(&g, vec![PlayerSpec::Uct], &cfg).expect("match runs");
            assert_eq!(rec.end, MatchEnd::Terminal, "{name} {engine:?}");
            assert!(rec.goals[0].1.is_some(), "{name} {engine:?}: {rec:?}");
            assert!(rec.errors.is_empty(), "{name} {engine:?}: {:?}", rec.errors);
        }
    }
}

/// Clock-driven UCT (no iteration count) answers every move within its
/// clock where one iteration is dear: the prover on mummymaze1p's rewritten
/// rules runs a few hundred states a second, and a playout may take longer
/// than the clock. The player checks its deadline before every step of a
/// playout and of an expansion, and drops the playout it cuts, so it is late
/// by one step at most; its margin (50 ms and a tenth of the clock) covers
/// that on a machine several times slower, or shared with busy processes.
#[test]
fn clock_driven_uct_answers_in_time_where_iterations_are_dear() {
    for (name, engine) in [
        ("mummymaze1p", Engine::Auto),
        ("mummymaze1p", Engine::Prover),
        ("sudoku", Engine::Auto),
        ("ruleDepthQuadratic", Engine::Auto),
    ] {
        let g = gdl::load(&common::corpus_game(name)).expect("the game loads");
        let cfg = RefereeConfig {
            start_clock: Duration::from_secs(1),
            play_clock: Duration::from_secs(1),
            seed: 2,
            engine,
            max_steps: 4,
            iterations: None,
            ..RefereeConfig::default()
        };
        let rec = run_match(&g, vec![PlayerSpec::Uct], &cfg).expect("match runs");
        assert_eq!(rec.moves.len(), 4, "{name} {engine:?}");
        assert!(rec.errors.is_empty(), "{name} {engine:?}: {:?}", rec.errors);
    }
}

#[test]
fn uct_beats_random_at_tictactoe_and_solves_buttons() {
    for seed in 1..=4 {
        let players = if seed % 2 == 0 {
            vec![PlayerSpec::Uct, PlayerSpec::Random]
        } else {
            vec![PlayerSpec::Random, PlayerSpec::Uct]
        };
        let seat = if seed % 2 == 0 { 0 } else { 1 };
        let cfg = RefereeConfig {
            iterations: Some(3000),
            ..quick(seed)
        };
        let rec = run_match(&game("tictactoe"), players, &cfg).expect("match runs");
        assert!(rec.score(seat) >= 50, "seed {seed}: uct lost: {rec:?}");
    }
    let cfg = RefereeConfig {
        iterations: Some(2000),
        ..quick(1)
    };
    let rec = run_match(&game("buttons"), vec![PlayerSpec::Uct], &cfg).expect("runs");
    assert_eq!(rec.score(0), 100);
}

/// A player that misbehaves in a chosen way at every move.
struct Faulty {
    how: &'static str,
    seen: Arc<Mutex<Vec<Option<Vec<Term>>>>>,
}

impl Player for Faulty {
    fn start(&mut self, _info: &MatchInfo) -> Result<()> {
        Ok(())
    }
    fn play(&mut self, previous: Option<&[Term]>, info: &MatchInfo) -> Result<Term> {
        self.seen
            .lock()
            .unwrap()
            .push(previous.map(<[Term]>::to_vec));
        let syms = &info.game.symbols;
        match self.how {
            "illegal" => Ok(parse_ground_terms("((mark 9 9))", syms)
                .map(|v| v[0].clone())
                .unwrap_or_else(|_| info.game.roles[0].clone())),
            "error" => anyhow::bail!("out of cheese"),
            _ => {
                std::thread::sleep(info.play_clock + Duration::from_millis(200));
                Ok(parse_ground_terms("(noop)", syms).expect("noop")[0].clone())
            }
        }
    }
    fn stop(&mut self, _previous: &[Term], _info: &MatchInfo) {}
    fn name(&self) -> String {
        format!("faulty-{}", self.how)
    }
}

#[test]
fn late_illegal_and_failing_players_get_random_moves() {
    for how in ["illegal", "error", "timeout"] {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let entrants = vec![
            Entrant::Custom(Box::new(Faulty {
                how,
                seen: Arc::clone(&seen),
            })),
            Entrant::Spec(PlayerSpec::Random),
        ];
        // Only the late player's clock is short; its sleep overruns it by
        // far more than any scheduling delay.
        let cfg = match how {
            "timeout" => RefereeConfig {
                play_clock: Duration::from_millis(300),
                ..quick(5)
            },
            _ => quick(5),
        };
        let rec = run_match_entrants(&game("tictactoe"), entrants, &cfg).expect("match runs");
        check_record("tictactoe", &rec);
        assert_eq!(rec.players[0], format!("faulty-{how}"));
        let ours: Vec<_> = rec.errors.iter().filter(|e| e.role == "x").collect();
        // Asked at every step, x's answer is wrong every time.
        assert_eq!(ours.len(), rec.moves.len(), "{how}: {:?}", rec.errors);
        assert!(ours.iter().all(|e| e.kind == how), "{how}: {ours:?}");
        assert!(rec.errors.iter().all(|e| e.role == "x"));
        // Every answer's time is recorded, the late ones past their clock.
        let times = &rec.reply_times;
        assert_eq!(times.play_clock_s, cfg.play_clock.as_secs_f64());
        assert_eq!(times.start_s.len(), 2);
        for (role, play) in &times.play_s {
            assert_eq!(play.len(), rec.moves.len(), "{how}: {role}");
        }
        if how == "timeout" {
            assert!(times.play_s[0].1.iter().all(|&s| s > times.play_clock_s));
        }
        // The player was told every joint move, the referee's substitutes included.
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0], None);
        assert_eq!(seen.len(), rec.moves.len());
        for (i, prev) in seen.iter().enumerate().skip(1) {
            let texts: Vec<String> = prev
                .as_ref()
                .expect("a previous move")
                .iter()
                .map(|t| gdl::print::term_to_string(t, &game("tictactoe").symbols))
                .collect();
            assert_eq!(texts, rec.moves[i - 1]);
        }
    }
}

#[test]
fn bad_player_lists_are_refused_clearly() {
    let g = game("tictactoe");
    let e = run_match(&g, vec![PlayerSpec::Uct], &quick(1)).unwrap_err();
    assert!(e.to_string().contains("2 roles"), "{e}");
    // An HTTP player that cannot be reached is a player that errs, as with a real
    // game manager: every one of its moves is replaced and recorded, and the match
    // still ends.
    let rec = run_match(
        &g,
        vec![
            PlayerSpec::Uct,
            PlayerSpec::Http("http://127.0.0.1:9".into()),
        ],
        &quick(1),
    )
    .unwrap();
    assert!(rec.goals.iter().all(|(_, v)| v.is_some()), "{rec:?}");
    let o_moves = rec.moves.iter().filter(|j| j[1] != "noop").count();
    let o_errors = rec
        .errors
        .iter()
        .filter(|e| e.role == "o" && e.detail.contains("127.0.0.1:9"))
        .count();
    assert!(o_errors > o_moves, "{rec:?}");
    assert!("alphazero".parse::<PlayerSpec>().is_err());
    assert_eq!("MC".parse::<PlayerSpec>().unwrap(), PlayerSpec::Mc);
    assert_eq!(
        "http://localhost:9147".parse::<PlayerSpec>().unwrap(),
        PlayerSpec::Http("http://localhost:9147".into())
    );
}

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ggp-asp"));
    cmd.env("GGP_ASP_STORE", "off");
    cmd
}

#[test]
fn match_command_prints_moves_and_goals_and_json() {
    let path = puzzle_path("nim");
    let out = bin()
        .args([
            "match",
            path.to_str().unwrap(),
            "--player",
            "uct",
            "--player",
            "random",
        ])
        .args(["--iterations", "500", "--engine", "prover", "--json"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["roles"], serde_json::json!(["first", "second"]));
    assert!(v["moves"].as_array().is_some_and(|m| !m.is_empty()));
    assert!(v["errors"].as_array().is_some_and(|e| e.is_empty()));
    let g = &v["goals"];
    assert!(g["first"].is_u64() && g["second"].is_u64(), "{g}");
    let w = &v["worst_reply_s"];
    assert!(w["first"].is_f64() && w["second"].is_f64(), "{w}");
    let t = &v["reply_times"];
    assert_eq!(
        (t["start_clock_s"].as_f64(), t["play_clock_s"].as_f64()),
        (Some(10.0), Some(10.0))
    );
    assert!(t["start_s"]["first"].is_f64(), "{t}");
    let steps = v["moves"].as_array().map(Vec::len);
    assert_eq!(t["play_s"]["second"].as_array().map(Vec::len), steps, "{t}");

    let out = bin()
        .args([
            "match",
            path.to_str().unwrap(),
            "--player",
            "legal",
            "--player",
            "legal",
        ])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("step 1: ((take a 1) noop)"), "{text}");
    assert!(text.contains("goals: first="), "{text}");

    let out = bin()
        .args(["match", path.to_str().unwrap(), "--player", "uct"])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 roles"));
    let out = bin()
        .args([
            "match",
            path.to_str().unwrap(),
            "--player",
            "uct",
            "--player",
            "bogus",
        ])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown player"));
    let out = bin()
        .args(["match", "/nonexistent.kif", "--player", "uct"])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent.kif"));
}

/// Joint moves per match and the budget of CPU time per game in the sweep
/// (CPU time: a busy machine plays as many games as an idle one), with a
/// wall-clock guard against a child that hangs.
const SWEEP_STEPS: &str = "3";
const SWEEP_BUDGET: Duration = Duration::from_millis(1500);
const SWEEP_WALL_GUARD: Duration = Duration::from_secs(60);

/// One match of UCT in every seat at 8 iterations a move (playouts cut off
/// after 10 joint moves), in a child process
/// stopped after the budget (one prover step cannot be interrupted).
fn sweep_one(path: &Path) -> Result<Option<serde_json::Value>, String> {
    let roles = gdl::load(path).map_err(|e| e.to_string())?.roles.len();
    let mut cmd = bin();
    cmd.arg("match").arg(path);
    for _ in 0..roles {
        cmd.args(["--player", "uct"]);
    }
    cmd.args(["--iterations", "8", "--playout-steps", "10"])
        .args(["--max-steps", SWEEP_STEPS, "--engine", "prover"])
        .args(["--json", "--play", "60", "--start", "60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    if common::wait_cpu(&mut child, SWEEP_BUDGET, SWEEP_WALL_GUARD).is_none() {
        return Ok(None);
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    if !out.status.success() {
        return Err(stderr);
    }
    serde_json::from_slice(&out.stdout)
        .map(Some)
        .map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn uct_plays_only_legal_moves_on_the_whole_corpus() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(common::CORPUS)
        .expect("the corpus")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "kif"))
        .collect();
    files.sort();
    assert!(files.len() > 400);
    let next = AtomicUsize::new(0);
    let played = AtomicUsize::new(0);
    let skipped = Mutex::new(Vec::new());
    let slow = Mutex::new(Vec::new());
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = files.get(i) else { break };
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                // Games that do not load (invalid, GDL-II) are covered by tests/corpus.rs.
                let Ok(g) = gdl::load(path) else {
                    skipped.lock().unwrap().push(name);
                    continue;
                };
                drop(g);
                match sweep_one(path) {
                    Ok(None) => slow.lock().unwrap().push(name),
                    Ok(Some(v)) => {
                        let errs = v["errors"].as_array().cloned().unwrap_or_default();
                        if !errs.is_empty() {
                            failures.lock().unwrap().push(format!("{name}: {errs:?}"));
                        } else {
                            played.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Err(e) => {
                        // A game whose prover cannot be built, or where a role has no
                        // legal move (the manifest flags those), fails cleanly.
                        let clean = e.contains("error:") && !e.contains("panicked");
                        if clean {
                            skipped
                                .lock()
                                .unwrap()
                                .push(format!("{name}: {}", e.trim()));
                        } else {
                            failures.lock().unwrap().push(format!("{name}: {e}"));
                        }
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let slow = slow.into_inner().unwrap();
    let skipped = skipped.into_inner().unwrap();
    let played = played.into_inner();
    eprintln!(
        "{played} games played, {} out of time, {} skipped",
        slow.len(),
        skipped.len()
    );
    eprintln!("out of time: {}", slow.join(", "));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(played > 300, "only {played} games played");
}

/// A lost match can be read move by move: every move of an in-process
/// search comes with its account (the move as played, its visits and value,
/// a principal line starting with it, the iterations, the heuristic named
/// where one scores the states), and a player that cannot say gives none.
#[test]
fn in_process_searches_report_every_move() {
    let g = gdl::load(&common::corpus_game("breakthrough")).expect("loads");
    let players = vec!["uct+heuristic".parse().unwrap(), PlayerSpec::Random];
    let cfg = RefereeConfig {
        max_steps: 12,
        engine: Engine::Auto,
        ..quick(5)
    };
    let rec = run_match(&g, players, &cfg).expect("the match runs");
    assert!(rec.errors.is_empty(), "{:?}", rec.errors);
    assert_eq!(rec.move_reports.len(), rec.moves.len());
    for (step, r) in rec.move_reports.iter().enumerate() {
        assert_eq!((r.step, r.role.as_str()), (step, rec.roles[0].as_str()));
        assert_eq!(r.mv, rec.moves[step][0], "step {step}");
        assert_eq!(r.player, "uct+heuristic");
        assert_eq!(r.iterations, 200, "step {step}");
        assert!(r.visits > 0 && (0.0..=100.0).contains(&r.value), "{r:?}");
        assert_eq!(r.line.first().map(|j| &j[0]), Some(&r.mv), "{r:?}");
        let h = r.heuristic.as_deref().unwrap_or("");
        assert!(h.contains("material"), "{h}");
    }
    let json = serde_json::to_value(&rec).expect("serialises");
    assert_eq!(json["move_reports"][0]["move"], rec.moves[0][0].as_str());
}
