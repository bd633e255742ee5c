//! Parallel steps (src/asp/parallel.rs): what the analysis of the ground
//! rules finds on the corpus's fill-in puzzles, the plans of the parallel
//! worker replayed on the prover, pure fill-in puzzles solved in one step by
//! the stock `clingo` on the printed program, and the free-state check that
//! proves a contradictory nonogram has no plan.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use ggp_asp::asp::encode::{encode, Form};
use ggp_asp::asp::{self, Mode, Proven, SolveOptions, SolveResult, Status, WorkerKind};
use ggp_asp::gdl::{self, parser::parse_ground_terms, Game, Term};
use ggp_asp::reasoner::Prover;

fn load(path: &std::path::Path) -> Game {
    gdl::load(path).unwrap_or_else(|e| panic!("{} does not load:\n{e}", path.display()))
}

/// Solves in `mode` with the clingo workers in processes of their own, as the
/// command line does, and replays a plan on a prover of its own.
fn solve(game: &Game, mode: Mode) -> SolveResult {
    let options = SolveOptions {
        mode,
        timeout: Some(Duration::from_secs(300)),
        threads: 2,
        worker_exe: Some(PathBuf::from(env!("CARGO_BIN_EXE_ggp-asp"))),
        ..SolveOptions::default()
    };
    let r = asp::solve(game, &options).expect("a single-player game");
    if r.status == Status::Solved {
        let prover = Prover::new(game.clone());
        let plan: Vec<Term> = r
            .plan
            .iter()
            .map(|m| {
                parse_ground_terms(&format!("({m})"), &game.symbols)
                    .unwrap()
                    .remove(0)
            })
            .collect();
        let goal = asp::verify::replay(&prover, &plan).expect("the plan replays");
        assert_eq!(Some(goal), r.goal, "{}", game.source);
    }
    r
}

/// The `writes(M,F)` facts of a printed parallel program, as text pairs.
fn writes(program: &str) -> Vec<(String, String)> {
    program
        .lines()
        .filter_map(|l| l.strip_prefix("writes(")?.strip_suffix(")."))
        .map(|inner| {
            // The move is the first argument: up to its closing parenthesis.
            let close = inner.find(')').expect("a compound move") + 1;
            (inner[..close].to_string(), inner[close + 1..].to_string())
        })
        .collect()
}

/// The arguments of a ground compound term's text, `f(a,b)` -> `[a, b]`.
fn args(t: &str) -> Vec<&str> {
    let open = t.find('(').unwrap();
    t[open + 1..t.len() - 1].split(',').collect()
}

#[test]
fn a_sudoku_mark_writes_its_own_cell_only() {
    // sudokuGrade2 keeps a cell by frame rules that name every other move
    // ("when some move marks another cell"): under one move alone they read
    // as plain inertia, except for the marked cell, whose every value the
    // mark sets (its own) or clears (the blank and the others).
    let game = load(&common::corpus_game("sudokuGrade2"));
    let program = encode(&game, Form::Parallel(1), false).expect("a parallel program");
    let w = writes(&program.text);
    assert!(!w.is_empty());
    let mut per_move: std::collections::HashMap<&str, usize> = Default::default();
    for (m, f) in &w {
        assert!(
            m.starts_with("mark(") && f.starts_with("cell("),
            "{m} writes {f}"
        );
        assert_eq!(args(m)[..4], args(f)[..4], "{m} writes {f}, another cell");
        *per_move.entry(m).or_default() += 1;
    }
    // Each mark writes the blank and the ten values a cell may hold
    // (`b` and 1-9) that the rules let it hold: never fewer than the blank
    // and its own value.
    assert!(per_move.values().all(|&n| n >= 2), "{per_move:?}");
    let note = program.notes.join("\n");
    assert!(note.contains("never interfere"), "{note}");
}

#[test]
fn fill_in_puzzles_are_solved_in_one_parallel_step() {
    if !common::clingo_available() {
        println!("note: no `clingo` executable on PATH (Debian package gringo); test skipped");
        return;
    }
    // Every blank filled at once: the plan is one step of as many moves as
    // there are blanks (futoshiki4: 15, sudokuGrade2: 53, the lengths the
    // forward search proves shortest).
    for (name, blanks) in [("futoshiki4", 15), ("sudokuGrade2", 53)] {
        let game = load(&common::corpus_game(name));
        let program = encode(&game, Form::Parallel(1), false).expect("a parallel program");
        let moves = common::stock_clingo_plan(&program.text);
        assert_eq!(moves.len(), blanks, "{name}: {moves:?}");
        assert!(
            moves.iter().all(|m| m.ends_with(",0)")),
            "{name}: {moves:?}"
        );
    }
}

#[test]
fn parallel_plans_replay_on_the_prover() {
    // The parallel worker alone, on fill-in puzzles of the corpus and of
    // ours: every plan serialised and replayed (by the solve, and again
    // here), as long as the shortest. A plan found in one step proves no
    // length; queens, whose clock keeps its moves apart, is refuted at 1-5
    // steps, so its plan of 6 is proven shortest.
    for (path, length, proven) in [
        (common::corpus_game("futoshiki5"), 23, Proven::None),
        (common::corpus_game("sudokuGrade3"), 54, Proven::None),
        (
            common::puzzle_path("sudoku4"),
            common::optimum("sudoku4"),
            Proven::None,
        ),
        (
            common::puzzle_path("queens"),
            common::optimum("queens"),
            Proven::Shortest,
        ),
    ] {
        let game = load(&path);
        let r = solve(&game, Mode::Parallel);
        let name = path.display();
        assert_eq!(r.status, Status::Solved, "{name}: {}", r.message);
        assert_eq!(r.goal, Some(100), "{name}");
        assert_eq!(r.steps, Some(length), "{name}");
        assert_eq!(r.mode, Some(WorkerKind::Parallel), "{name}");
        assert_eq!(r.proven, proven, "{name}: {}", r.message);
    }
}

#[test]
fn a_nonogram_whose_clues_contradict_has_no_plan() {
    // nonogram_10x10_1 gives column 8 two first groups (`(col 8 1 1)` and
    // `(col 8 1 4)`) and so no second: no board satisfies every clue. The
    // free-state check finds that no set of fluents is a terminal state
    // scoring above 0; before it, every solver timed out.
    let game = load(&common::corpus_game("nonogram_10x10_1"));
    for mode in [Mode::Parallel, Mode::Auto] {
        let r = solve(&game, mode);
        assert_eq!(r.status, Status::NoPlan, "{mode:?}: {}", r.message);
        assert_eq!(r.mode, Some(WorkerKind::Parallel), "{mode:?}");
        assert!(
            r.message.contains("no state that ends the game"),
            "{mode:?}: {}",
            r.message
        );
    }
}

#[test]
fn a_clock_is_written_by_every_move() {
    // puzzles/queens.kif counts its moves in `(step ?n)`: every move writes
    // every value of it, the initial `(step 0)` too, which no `next` rule
    // derives (a move clears it); so no two moves share a step, and the
    // parallel plan is the serial one (parallel_plans_replay_on_the_prover).
    let game = load(&common::puzzle_path("queens"));
    let program = encode(&game, Form::Parallel(6), false).expect("a parallel program");
    let w = writes(&program.text);
    for c in 1..=6 {
        for n in 0..=6 {
            let pair = (format!("place({c})"), format!("step({n})"));
            assert!(w.contains(&pair), "place({c}) does not write step({n})");
        }
    }
    let note = program.notes.join("\n");
    assert!(
        note.contains("0.0% of their pairs never interfere"),
        "{note}"
    );
}
