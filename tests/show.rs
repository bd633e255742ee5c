//! Pictures: boards found from the rules and drawn (snapshots), a game with no
//! board drawn as its fluents, the cactus plot and arena chart as well-formed
//! SVG with one point per solved game, `solve --show` and `match --show`, and
//! progress on stderr that never reaches stdout's JSON.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use ggp_asp::bench::arena::ArenaResult;
use ggp_asp::bench::solve::{self, SavedRow};
use ggp_asp::gdl::{self, parser::parse_ground_terms, Game, Term};
use ggp_asp::show::plot::{self, Series, TimeAxis};
use ggp_asp::show::{Replay, Style, View};

const PLAIN: Style = Style { color: false };

/// Runs `ggp-asp` with `args`.
fn ggp<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ggp-asp"))
        .env("GGP_ASP_STORE", "off")
        .args(args)
        .output()
        .expect("ggp-asp runs")
}

/// The stdout of a run that must have succeeded (else its output and
/// stderr are the failure's message).
fn succeeded(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// The states after each joint move of `joints` (KIF, one list per step),
/// the initial state first.
fn states(game: &Game, joints: &[&str]) -> Vec<Vec<Term>> {
    let joints: Vec<Vec<Term>> = joints
        .iter()
        .map(|j| parse_ground_terms(j, &game.symbols).expect("a joint move"))
        .collect();
    Replay::states(game, &joints).expect("replays")
}

/// The last state of `joints` drawn with the view found over all of them.
fn drawn(game: &Game, joints: &[&str]) -> String {
    let states = states(game, joints);
    let view = View::of(game, &states);
    assert!(view.has_board(), "no board found");
    view.render(game, states.last().unwrap(), PLAIN)
}

#[test]
fn the_eight_puzzle_is_drawn_as_its_board() {
    let game = gdl::load(&common::puzzle_path("8puzzle")).unwrap();
    insta::assert_snapshot!("eight_puzzle_initial", drawn(&game, &[]));
}

#[test]
fn connect_four_is_drawn_as_its_board() {
    let game = gdl::load(&common::corpus_game("connectFour")).unwrap();
    let board = drawn(
        &game,
        &[
            "((drop 4) noop)",
            "(noop (drop 4))",
            "((drop 5) noop)",
            "(noop (drop 3))",
        ],
    );
    insta::assert_snapshot!("connect_four_after_four_moves", board);
}

#[test]
fn sudoku_is_drawn_as_a_board_of_boards() {
    let game = gdl::load(&common::corpus_game("sudokuGrade2")).unwrap();
    let board = drawn(&game, &[]);
    // Nine rows of nine squares in three blocks, two rules between blocks.
    let rows: Vec<&str> = board.lines().filter(|l| l.contains('|')).collect();
    assert_eq!(rows.len(), 9, "{board}");
    assert!(rows.iter().all(|r| r.matches('|').count() == 2), "{board}");
    assert_eq!(board.lines().filter(|l| l.contains("-+-")).count(), 2);
    insta::assert_snapshot!("sudoku_initial", board);
}

#[test]
fn checkers_is_drawn_with_files_across_and_the_highest_rank_on_top() {
    let game = gdl::load(&common::corpus_game("checkers")).unwrap();
    let board = drawn(&game, &[]);
    let header = board.lines().next().unwrap();
    let files: Vec<&str> = header.split_whitespace().take(8).collect();
    assert_eq!(files, ["a", "b", "c", "d", "e", "f", "g", "h"], "{board}");
    let second = board.lines().nth(1).unwrap().trim_start();
    assert!(second.starts_with('8'), "{board}");
}

/// Hex places stones on an empty board: the squares come from the rules'
/// reachable fluents, and of its two 9x9 relations the one of few contents
/// (`(cell c 1 red)`) is the board, not the group numbers of `(connected 1 c 1)`.
#[test]
fn hex_is_drawn_from_its_cells() {
    let game = gdl::load(&common::corpus_game("hex")).unwrap();
    let board = drawn(&game, &["((place c 1) noop)", "(noop (place h 5))"]);
    let lines: Vec<&str> = board.lines().collect();
    assert!(lines[0].trim_start().starts_with("a    b"), "{board}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("1 ") && l.contains("red")),
        "{board}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("5 ") && l.contains("blue")),
        "{board}"
    );
    assert_eq!(lines.len(), 10, "{board}");
}

#[test]
fn a_game_without_a_board_is_drawn_as_its_fluents() {
    let game = gdl::load(&common::puzzle_path("blocks")).unwrap();
    let states = states(&game, &[]);
    let view = View::of(&game, &states);
    assert!(!view.has_board());
    let text = view.render(&game, &states[0], PLAIN);
    let mut expected: Vec<String> = states[0]
        .iter()
        .map(|t| gdl::print::term_to_string(t, &game.symbols))
        .collect();
    expected.sort();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.sort();
    assert_eq!(lines, expected);
}

#[test]
fn colour_wraps_the_contents_in_ansi_codes() {
    let game = gdl::load(&common::puzzle_path("8puzzle")).unwrap();
    let states = states(&game, &[]);
    let view = View::of(&game, &states);
    let text = view.render(&game, &states[0], Style { color: true });
    assert!(text.contains("\x1b["));
    // The same text once the codes are taken out.
    let plain = view.render(&game, &states[0], PLAIN);
    let mut stripped = String::new();
    let mut in_code = false;
    for c in text.chars() {
        match (in_code, c) {
            (false, '\x1b') => in_code = true,
            (true, 'm') => in_code = false,
            (false, c) => stripped.push(c),
            _ => {}
        }
    }
    assert_eq!(stripped, plain);
}

fn row(game: &str, status: &str, mode: &str, total_s: f64) -> SavedRow {
    SavedRow {
        game: game.into(),
        status: status.into(),
        steps: Some(3),
        goal: Some(100),
        mode: Some(mode.into()),
        proven: Some("shortest".into()),
        ground_s: 0.0,
        solve_s: total_s,
        total_s,
        peak_mb: 10.0,
        verified: status == "solved",
        message: String::new(),
    }
}

/// The SVG parses as XML; its circles (one marker per point) are counted.
fn circles(svg: &str) -> usize {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.tag_name().name() == "circle")
        .count()
}

#[test]
fn the_cactus_plot_is_svg_with_one_point_per_solved_game() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cactus.svg");
    let run_a = vec![
        row("a", "solved", "full", 0.5),
        row("b", "solved", "incremental", 2.0),
        row("c", "timeout", "full", 60.0),
        row("d", "solved", "full", 0.1),
        // A best plan below 100 is not a game solved.
        SavedRow {
            goal: Some(80),
            ..row("e", "solved", "full", 0.2)
        },
    ];
    let run_b = vec![
        row("a", "solved", "full", 0.3),
        row("b", "error", "full", 0.0),
    ];
    let series = [
        Series::new("a", &solve::solved(&run_a)),
        Series::new("b", &solve::solved(&run_b)),
    ];
    for axis in [TimeAxis::Cumulative, TimeAxis::PerGame] {
        plot::cactus(&series, axis, "test", &out).unwrap();
        let svg = std::fs::read_to_string(&out).unwrap();
        assert_eq!(circles(&svg), 3 + 1, "{axis:?}");
    }
    let modes = Series::per_mode(&solve::solved(&run_a));
    let labels: Vec<&str> = modes.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["full", "incremental"]);
    assert_eq!(modes[0].times.len(), 2);
}

#[test]
fn bench_plot_draws_saved_runs_and_refuses_what_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let write_rows = |name: &str, rows: &[SavedRow]| {
        let path = dir.path().join(name);
        let mut text: String = rows
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        // The summary line `bench solve --json` ends with is skipped.
        text.push_str("{\"games\":2,\"solved_100\":1}\n");
        std::fs::write(&path, text).unwrap();
        path
    };
    let one = write_rows(
        "one.json",
        &[
            row("a", "solved", "full", 1.0),
            row("b", "solved", "full", 2.0),
        ],
    );
    let two = write_rows(
        "two.json",
        &[
            row("a", "solved", "full", 0.5),
            row("b", "no-plan", "full", 1.0),
        ],
    );
    let out = dir.path().join("runs.svg");
    succeeded(&bench_plot(&[&one, &two], &out));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert_eq!(circles(&svg), 3);
    assert!(svg.contains("one (2 solved)") && svg.contains("two (1 solved)"));

    let arena = dir.path().join("arena.json");
    let result = ArenaResult {
        game: "g".into(),
        player: "uct".into(),
        opponent: "random".into(),
        matches: 4,
        mean_score: 75.0,
        ci95: 20.0,
        scores: vec![100, 100, 50, 50],
        pairwise: None,
        pairwise_ci95: None,
        player_errors: 0,
        worst_reply_s: Default::default(),
    };
    std::fs::write(&arena, serde_json::to_string(&result).unwrap() + "\n").unwrap();
    let bars = dir.path().join("bars.svg");
    succeeded(&bench_plot(&[&arena], &bars));
    circles(&std::fs::read_to_string(&bars).unwrap());

    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "not json\n").unwrap();
    let o = bench_plot(&[&junk], &dir.path().join("x.svg"));
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("junk.json:1"), "{err}");
}

/// `bench plot INPUTS... --out OUT`.
fn bench_plot(inputs: &[&Path], out: &Path) -> Output {
    let mut args: Vec<&std::ffi::OsStr> = vec!["bench".as_ref(), "plot".as_ref()];
    args.extend(inputs.iter().map(|p| p.as_os_str()));
    args.extend(["--out".as_ref(), out.as_os_str()]);
    ggp(args)
}

#[test]
fn solve_show_draws_every_state_of_the_plan() {
    let o = Command::new(env!("CARGO_BIN_EXE_ggp-asp"))
        .env("GGP_ASP_STORE", "off")
        .arg("solve")
        .arg(common::puzzle_path("lightsout"))
        .arg("--show")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let out = succeeded(&o);
    let steps: usize = out
        .lines()
        .find_map(|l| l.strip_prefix("solved: goal 100 in "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("a solved line");
    assert!(out.contains("initial state"));
    assert_eq!(out.matches("after step ").count(), steps);
    // The last state: every light out, an empty board of marks.
    let last = out.rsplit("after step ").next().unwrap();
    assert!(!last.contains('#'), "{last}");
    assert!(!out.contains('\x1b'), "NO_COLOR is honoured");
}

#[test]
fn match_show_draws_the_states_as_the_match_goes() {
    let game = common::puzzle_path("tictactoe");
    let out = succeeded(&ggp([
        "match".as_ref(),
        game.as_os_str(),
        "--player".as_ref(),
        "legal".as_ref(),
        "--player".as_ref(),
        "legal".as_ref(),
        "--show".as_ref(),
        "--start".as_ref(),
        "5".as_ref(),
        "--play".as_ref(),
        "5".as_ref(),
    ]));
    let steps = out.matches("\nstep ").count();
    assert!(steps >= 5, "{out}");
    assert!(out.contains("initial state"));
    assert!(out.contains("end: terminal"), "{out}");
}

#[test]
fn progress_goes_to_stderr_and_json_stays_clean() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(common::puzzle_path("lightsout"), dir.path().join("a.kif")).unwrap();
    std::fs::copy(common::puzzle_path("hanoi"), dir.path().join("b.kif")).unwrap();
    let svg = dir.path().join("cactus.svg");
    let o = ggp([
        "bench".as_ref(),
        "solve".as_ref(),
        dir.path().as_os_str(),
        "--timeout".as_ref(),
        "60".as_ref(),
        "--json".as_ref(),
        "--plot".as_ref(),
        svg.as_os_str(),
    ]);
    let stdout = succeeded(&o);
    let mut modes = std::collections::BTreeSet::new();
    for line in stdout.lines() {
        let row = serde_json::from_str::<serde_json::Value>(line).expect("only JSON on stdout");
        if row["status"] == "solved" {
            modes.insert(row["mode"].to_string());
        }
    }
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("[1/2] a: solved"), "{stderr}");
    assert!(stderr.contains("[2/2] b: solved"), "{stderr}");
    // A point per solved game on the line of all games and, when the games
    // were solved by different modes (which worker wins depends on the
    // machine's load), once more on each mode's line.
    let expected = if modes.len() > 1 { 4 } else { 2 };
    assert_eq!(
        circles(&std::fs::read_to_string(&svg).unwrap()),
        expected,
        "solved by {modes:?}"
    );
}
