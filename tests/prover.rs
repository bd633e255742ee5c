//! Facts about our own puzzles (`puzzles/`), checked with the reference prover:
//! legal moves, terminal states and goals after given move sequences, game values
//! by minimax, exhaustive checks that the small games are valid GDL, and replays
//! of the optimal solutions in `tests/data/` (computed independently by
//! `tools/optimum.py`).

mod common;

use std::collections::HashMap;

use common::{explore, joint, joint_moves, legal_text, minimax, play, prover, solution};
use ggp_asp::reasoner::StateMachine;

fn goals(m: &ggp_asp::reasoner::Prover, s: &common::State) -> Vec<Option<u8>> {
    (0..m.num_roles()).map(|r| m.goal(s, r)).collect()
}

#[test]
fn tictactoe_start() {
    let m = prover("tictactoe");
    let s = m.initial_state();
    assert!(!m.is_terminal(&s));
    assert_eq!(m.legal(&s, 0).len(), 9);
    assert_eq!(legal_text(&m, &s, 1), ["noop"]);
    assert_eq!(joint_moves(&m, &s).len(), 9);
}

#[test]
fn tictactoe_win_for_x() {
    let m = prover("tictactoe");
    let moves = [
        "((mark 1 1) noop)",
        "(noop (mark 2 1))",
        "((mark 1 2) noop)",
        "(noop (mark 2 2))",
        "((mark 1 3) noop)",
    ];
    let before = play(&m, &moves[..4]);
    assert!(!m.is_terminal(&before));
    assert_eq!(legal_text(&m, &before, 1), ["noop"]);
    assert_eq!(m.legal(&before, 0).len(), 5);
    let s = play(&m, &moves);
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&m, &s), [Some(100), Some(0)]);
}

#[test]
fn tictactoe_diagonal_win_for_o() {
    let m = prover("tictactoe");
    let s = play(
        &m,
        &[
            "((mark 1 2) noop)",
            "(noop (mark 1 3))",
            "((mark 2 1) noop)",
            "(noop (mark 2 2))",
            "((mark 3 3) noop)",
            "(noop (mark 3 1))",
        ],
    );
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&m, &s), [Some(0), Some(100)]);
}

#[test]
fn tictactoe_draw() {
    let m = prover("tictactoe");
    // x o x is avoided throughout: the board fills without a line.
    //   x x o
    //   o o x
    //   x o x
    let moves = [
        "((mark 1 1) noop)",
        "(noop (mark 2 2))",
        "((mark 3 3) noop)",
        "(noop (mark 1 3))",
        "((mark 3 1) noop)",
        "(noop (mark 2 1))",
        "((mark 2 3) noop)",
        "(noop (mark 3 2))",
        "((mark 1 2) noop)",
    ];
    let before = play(&m, &moves[..8]);
    assert!(!m.is_terminal(&before));
    assert_eq!(legal_text(&m, &before, 0), ["(mark 1 2)"]);
    let s = play(&m, &moves);
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&m, &s), [Some(50), Some(50)]);
}

#[test]
fn tictactoe_is_valid_and_a_draw() {
    let m = prover("tictactoe");
    let ex = explore(&m, 10_000);
    assert!(ex.problems.is_empty(), "{:?}", ex.problems);
    // 5478 legal positions, counted with whose turn it is implied by the marks.
    assert_eq!(ex.states, 5478);
    assert_eq!(ex.terminals, 958);
    assert_eq!(ex.depth, 9);
    let mut memo = HashMap::new();
    assert_eq!(minimax(&m, &m.initial_state(), 0, &mut memo), 50);
}

#[test]
fn connect4_start_and_full_column() {
    let m = prover("connect4");
    let s = m.initial_state();
    assert_eq!(
        legal_text(&m, &s, 0),
        ["(drop 1)", "(drop 2)", "(drop 3)", "(drop 4)", "(drop 5)", "(drop 6)", "(drop 7)"]
    );
    assert_eq!(legal_text(&m, &s, 1), ["noop"]);
    // Six discs fill column 1, alternating colours so that nobody wins.
    let s = play(
        &m,
        &[
            "((drop 1) noop)",
            "(noop (drop 1))",
            "((drop 1) noop)",
            "(noop (drop 1))",
            "((drop 1) noop)",
            "(noop (drop 1))",
        ],
    );
    assert!(!m.is_terminal(&s));
    assert_eq!(
        legal_text(&m, &s, 0),
        ["(drop 2)", "(drop 3)", "(drop 4)", "(drop 5)", "(drop 6)", "(drop 7)"]
    );
}

#[test]
fn connect4_vertical_and_diagonal_wins() {
    let m = prover("connect4");
    let vertical = [
        "((drop 1) noop)",
        "(noop (drop 2))",
        "((drop 1) noop)",
        "(noop (drop 2))",
        "((drop 1) noop)",
        "(noop (drop 2))",
        "((drop 1) noop)",
    ];
    let s = play(&m, &vertical[..6]);
    assert!(!m.is_terminal(&s));
    let s = play(&m, &vertical);
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&m, &s), [Some(100), Some(0)]);

    // Red builds (1,1) (2,2) (3,3) (4,4) (column, row); yellow's row 1 stays broken.
    let red = |c: u8| format!("((drop {c}) noop)");
    let yellow = |c: u8| format!("(noop (drop {c}))");
    let seq = [
        red(1),
        yellow(2),
        red(2),
        yellow(3),
        red(3),
        yellow(7),
        red(3),
        yellow(4),
        red(4),
        yellow(4),
        red(4),
    ];
    let seq: Vec<&str> = seq.iter().map(String::as_str).collect();
    let s = play(&m, &seq[..10]);
    assert!(!m.is_terminal(&s));
    let s = play(&m, &seq);
    assert!(m.is_terminal(&s));
    assert_eq!(goals(&m, &s), [Some(100), Some(0)]);
}

#[test]
fn nim_moves_and_value() {
    let m = prover("nim");
    let s = m.initial_state();
    // Heaps of 3, 4 and 5: 12 ways to take.
    assert_eq!(m.legal(&s, 0).len(), 12);
    assert_eq!(legal_text(&m, &s, 1), ["noop"]);
    let ex = explore(&m, 1000);
    assert!(ex.problems.is_empty(), "{:?}", ex.problems);
    // Heap sizes 4 x 5 x 6, times whose turn it is, minus the unreachable ones.
    assert!(
        ex.states <= 240 && ex.terminals == 2,
        "{} states, {} terminal",
        ex.states,
        ex.terminals
    );
    let mut memo = HashMap::new();
    assert_eq!(
        minimax(&m, &s, 0, &mut memo),
        100,
        "3 xor 4 xor 5 != 0: the first player wins"
    );
    // (take a 2) leaves 1 4 5, xor 0: every reply loses for the second player.
    let after = m.next_state(&s, &joint(&m, "((take a 2) noop)"));
    assert_eq!(minimax(&m, &after, 0, &mut memo), 100);
    let after = m.next_state(&s, &joint(&m, "((take a 1) noop)"));
    assert_eq!(minimax(&m, &after, 0, &mut memo), 0);
    // Taking everything in turn: first empties a, second b, first c; first took last.
    let end = play(
        &m,
        &[
            "((take a 3) noop)",
            "(noop (take b 4))",
            "((take c 5) noop)",
        ],
    );
    assert!(m.is_terminal(&end));
    assert_eq!(goals(&m, &end), [Some(100), Some(0)]);
}

#[test]
fn nim3_three_players() {
    let m = prover("nim3");
    let s = m.initial_state();
    assert_eq!(m.num_roles(), 3);
    assert_eq!(legal_text(&m, &s, 0), ["(take 1)", "(take 2)", "(take 3)"]);
    assert_eq!(legal_text(&m, &s, 1), ["noop"]);
    assert_eq!(legal_text(&m, &s, 2), ["noop"]);
    assert_eq!(joint_moves(&m, &s).len(), 3);
    let s2 = play(&m, &["((take 3) noop noop)"]);
    assert_eq!(legal_text(&m, &s2, 0), ["noop"]);
    assert_eq!(legal_text(&m, &s2, 1), ["(take 1)", "(take 2)", "(take 3)"]);
    // 10 - 3 - 3 - 3 = 1: red takes the last token.
    let end = play(
        &m,
        &[
            "((take 3) noop noop)",
            "(noop (take 3) noop)",
            "(noop noop (take 3))",
            "((take 1) noop noop)",
        ],
    );
    assert!(m.is_terminal(&end));
    assert_eq!(goals(&m, &end), [Some(100), Some(0), Some(0)]);
    // With one token left, only (take 1) is legal.
    let one = play(
        &m,
        &[
            "((take 3) noop noop)",
            "(noop (take 3) noop)",
            "(noop noop (take 3))",
        ],
    );
    assert_eq!(legal_text(&m, &one, 0), ["(take 1)"]);
    let ex = explore(&m, 1000);
    assert!(ex.problems.is_empty(), "{:?}", ex.problems);
}

#[test]
fn rps3_simultaneous_moves() {
    let m = prover("rps3");
    let s = m.initial_state();
    assert_eq!(legal_text(&m, &s, 0), ["paper", "rock", "scissors"]);
    assert_eq!(legal_text(&m, &s, 1), ["paper", "rock", "scissors"]);
    assert_eq!(joint_moves(&m, &s).len(), 9);
    // One round each and a tie: 50 each.
    let tie = play(&m, &["(rock scissors)", "(paper paper)", "(scissors rock)"]);
    assert!(m.is_terminal(&tie));
    assert_eq!(goals(&m, &tie), [Some(50), Some(50)]);
    // Bob wins two rounds.
    let bob = play(&m, &["(rock paper)", "(rock rock)", "(paper scissors)"]);
    assert!(m.is_terminal(&bob));
    assert_eq!(goals(&m, &bob), [Some(0), Some(100)]);
    let two = play(&m, &["(rock paper)", "(rock rock)"]);
    assert!(!m.is_terminal(&two));
    assert_eq!(joint_moves(&m, &two).len(), 9);
    let ex = explore(&m, 1000);
    assert!(ex.problems.is_empty(), "{:?}", ex.problems);
    assert_eq!(ex.depth, 3);
}

/// Replays `tests/data/NAME.solution` and checks that it ends, and only ends, at a
/// terminal state with goal `goal` after `len` moves.
fn replay(name: &str, len: usize, goal: u8) {
    let m = prover(name);
    let plan = solution(name);
    assert_eq!(plan.len(), len, "{name}: plan length");
    let moves: Vec<&str> = plan.iter().map(String::as_str).collect();
    let s = play(&m, &moves);
    assert!(
        m.is_terminal(&s),
        "{name}: the plan ends in a non-terminal state"
    );
    assert_eq!(
        m.goal(&s, 0),
        Some(goal),
        "{name}: goal at the end of the plan"
    );
}

#[test]
fn eight_puzzle_solution() {
    replay("8puzzle", 30, 100);
    let m = prover("8puzzle");
    let s = m.initial_state();
    // The blank starts in the bottom-left corner: it can go up or right.
    assert_eq!(legal_text(&m, &s, 0), ["(move right)", "(move up)"]);
    assert_eq!(m.goal(&s, 0), Some(0));
}

/// The fifteen-puzzles' optimal plans (IDA* in tools/fifteen.py; for Korf's
/// three instances, plans as long as the paper's optima) replay on the rules
/// to goal 100, and end the game there.
#[test]
fn fifteen_puzzle_solutions() {
    for (name, len) in [
        ("fifteen18", 18),
        ("fifteen28", 28),
        ("fifteen42", 42),
        ("fifteen48", 48),
        ("fifteen55", 55),
        ("fifteen57", 57),
        ("fifteen59", 59),
    ] {
        replay(name, len, 100);
    }
}

#[test]
fn lights_out_solution() {
    replay("lightsout", 6, 100);
    let m = prover("lightsout");
    assert_eq!(m.legal(&m.initial_state(), 0).len(), 25);
    // The presses commute: the reverse order solves the board too.
    let mut plan = solution("lightsout");
    plan.reverse();
    let moves: Vec<&str> = plan.iter().map(String::as_str).collect();
    let s = play(&m, &moves);
    assert!(m.is_terminal(&s) && m.goal(&s, 0) == Some(100));
}

#[test]
fn hanoi_solution_and_optimum() {
    replay("hanoi", 31, 100);
    let m = prover("hanoi");
    assert_eq!(
        legal_text(&m, &m.initial_state(), 0),
        ["(move a b)", "(move a c)"]
    );
    let ex = explore(&m, 20_000);
    assert!(ex.problems.is_empty(), "{:?}", ex.problems);
    assert_eq!(ex.shortest_win, Some(31));
    assert_eq!(ex.depth, 34, "the step limit ends every playout");
}

#[test]
fn buttons_solution_and_optimum() {
    replay("buttons", 10, 100);
    let m = prover("buttons");
    let ex = explore(&m, 1000);
    assert!(ex.problems.is_empty(), "{:?}", ex.problems);
    assert_eq!(ex.shortest_win, Some(10));
    // Partial credit when the step limit ends the game: one light on is worth 20.
    let s = play(&m, &["(a)"; 12]);
    assert!(m.is_terminal(&s));
    assert_eq!(m.goal(&s, 0), Some(0), "a pressed 12 times leaves p off");
    let s = play(&m, &[&["(a)"][..], &["(b)"; 11][..]].concat());
    assert_eq!(m.goal(&s, 0), Some(20));
}

#[test]
fn maze_solution_and_optimum() {
    replay("maze", 18, 100);
    let m = prover("maze");
    assert_eq!(legal_text(&m, &m.initial_state(), 0), ["(move east)"]);
    let ex = explore(&m, 1000);
    assert!(ex.problems.is_empty(), "{:?}", ex.problems);
    assert_eq!(ex.shortest_win, Some(18));
}

#[test]
fn sudoku4_solution_and_optimum() {
    replay("sudoku4", 10, 100);
    let m = prover("sudoku4");
    // Cell (1 2) can take 2 or 3 by its row and column, only 2 or 3 by its box.
    let legal = legal_text(&m, &m.initial_state(), 0);
    assert!(legal.contains(&"(fill 1 2 2)".to_string()), "{legal:?}");
    assert!(!legal.contains(&"(fill 1 2 1)".to_string()), "{legal:?}");
    let ex = explore(&m, 100_000);
    assert!(ex.problems.is_empty(), "{:?}", ex.problems);
    assert_eq!(ex.shortest_win, Some(10));
}

#[test]
fn blocks_solution_and_optimum() {
    replay("blocks", 4, 100);
    let m = prover("blocks");
    let s = m.initial_state();
    // c and d are clear: stack either on the other, or put either on the table.
    assert_eq!(
        legal_text(&m, &s, 0),
        ["(stack c d)", "(stack d c)", "(unstack c)", "(unstack d)"]
    );
    let ex = explore(&m, 10_000);
    assert!(ex.problems.is_empty(), "{:?}", ex.problems);
    assert_eq!(ex.shortest_win, Some(4));
    assert_eq!(ex.depth, 6);
}

#[test]
fn queens_solution_and_dead_ends() {
    replay("queens", 6, 100);
    let m = prover("queens");
    let ex = explore(&m, 10_000);
    assert!(ex.problems.is_empty(), "{:?}", ex.problems);
    assert_eq!(ex.shortest_win, Some(6));
    // Rows 1 to 3 at columns 1, 3, 6 leave row 4 one safe square, column 2;
    // after it every square of row 5 is attacked: stuck with four queens.
    let s = play(&m, &["((place 1))", "((place 3))"]);
    assert_eq!(legal_text(&m, &s, 0), ["(place 5)", "(place 6)"]);
    let s = play(&m, &["((place 1))", "((place 3))", "((place 6))"]);
    assert_eq!(legal_text(&m, &s, 0), ["(place 2)"]);
    let stuck = play(
        &m,
        &["((place 1))", "((place 3))", "((place 6))", "((place 2))"],
    );
    assert!(m.is_terminal(&stuck));
    assert_eq!(m.goal(&stuck, 0), Some(40));
}

#[test]
fn best_goal_is_80() {
    replay("best-goal", 3, 80);
    let m = prover("best-goal");
    let ex = explore(&m, 1000);
    assert!(ex.problems.is_empty(), "{:?}", ex.problems);
    assert_eq!(ex.shortest_win, None, "100 is unreachable");
    assert_eq!(ex.best_goal, Some(80));
}

#[test]
fn no_plan_reaches_100() {
    let m = prover("no-plan");
    let ex = explore(&m, 1000);
    assert!(ex.problems.is_empty(), "{:?}", ex.problems);
    assert_eq!(ex.shortest_win, None);
    assert_eq!(ex.best_goal, Some(0));
    assert_eq!(ex.depth, 5);
}

#[test]
fn every_puzzle_loads_cleanly_and_plays() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("puzzles");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("puzzles/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "kif"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 13, "{names:?}");
    for name in &names {
        let path = common::puzzle_path(name);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(&format!("; {name}.kif -- ")),
            "{name}: header comment"
        );
        let game = ggp_asp::gdl::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(game.warnings.is_empty(), "{name}: {:?}", game.warnings);
        let m = ggp_asp::reasoner::Prover::new(game);
        let stats = ggp_asp::simulate::random_playouts(&m, 50, 1, 100)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            stats.terminal, 50,
            "{name}: every playout ends within 100 steps"
        );
        for (r, dist) in stats.goals.iter().enumerate() {
            assert!(
                !dist.contains_key(&None),
                "{name}: role {r} without a single goal value at a terminal state"
            );
        }
    }
}

/// A game whose legal moves need a product of 40 x 40 fluents a state.
const PRODUCT: &str = "(role r)
    (<= (init (v ?x)) (num ?x))
    (<= (pair ?x ?y) (true (v ?x)) (true (v ?y)))
    (<= (legal r (pick ?x ?y)) (pair ?x ?y) (true (v ?x)))
    (<= (next (v ?x)) (true (v ?x)) (does r (pick ?y ?z)) (distinct ?x ?y))
    (<= terminal (not (true (v 0))))
    (goal r 100)";

/// [`Prover::bounded`] gives up when its join steps run out, and the prover
/// then answers as one that never ran out: the rows half computed are gone.
#[test]
fn bounded_evaluation_gives_up_and_leaves_the_prover_sound() {
    let nums: String = (0..40).map(|i| format!("(num {i}) ")).collect();
    let text = format!("{PRODUCT} {nums}");
    let game =
        || ggp_asp::gdl::Game::new(ggp_asp::gdl::parse(&text, "product.kif").unwrap()).unwrap();
    let m = ggp_asp::reasoner::Prover::new(game());
    let fresh = ggp_asp::reasoner::Prover::new(game());
    let s = m.initial_state();
    assert_eq!(m.bounded(100, |m| m.legal(&s, 0).len()), None);
    assert_eq!(m.legal(&s, 0).len(), 1600);
    let first = m.legal(&s, 0)[7];
    let next = m.next_state(&s, &[first]);
    let s_fresh = fresh.initial_state();
    let first_fresh = fresh.legal(&s_fresh, 0)[7];
    assert_eq!(m.move_term(&first), fresh.move_term(&first_fresh));
    let sorted = |mut v: Vec<ggp_asp::gdl::Term>| {
        v.sort();
        v
    };
    assert_eq!(
        sorted(m.fluents(&next)),
        sorted(fresh.fluents(&fresh.next_state(&s_fresh, &[first_fresh])))
    );
    assert_eq!(
        m.bounded(1_000_000, |m| m.legal(&next, 0).len()),
        Some(39 * 39)
    );
}

/// A list program written for a top-down prover (ggp-base's): `append` and
/// `member` have head variables that only their calls bind, over lists of
/// any length. The game loads with warnings, runs on the goal-directed
/// prover only (bottom-up, grounding and the propnet refuse it, saying
/// why), and plays as the lists say.
#[test]
fn list_program_runs_goal_directed() {
    use ggp_asp::reasoner::prover::Strategy;
    use ggp_asp::reasoner::{AnyMachine, Engine, Propnet, Prover};
    let rules = "
        (role p)
        (init (stack (cons a (cons b NIL))))
        (elem a) (elem b) (elem c) (elem d)
        (<= (member ?x (cons ?x ?rest)))
        (<= (member ?x (cons ?y ?rest)) (member ?x ?rest))
        (<= (append NIL ?l ?l))
        (<= (append (cons ?x ?r) ?l (cons ?x ?s)) (append ?r ?l ?s))
        (<= (legal p (push ?x)) (true (stack ?s)) (elem ?x) (not (member ?x ?s)))
        (<= (next (stack ?t)) (does p (push ?x)) (true (stack ?s)) (append ?s (cons ?x NIL) ?t))
        (<= terminal (true (stack ?s)) (member d ?s))
        (<= (goal p 100) (true (stack ?s)) (member c ?s))
        (<= (goal p 0) (true (stack ?s)) (not (member c ?s)))";
    let game = ggp_asp::gdl::load_bytes(rules.as_bytes(), "lists.kif").expect("loads");
    let said: Vec<&str> = game.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(
        said.iter()
            .any(|w| w.contains("top-down") && w.contains("append/3")),
        "{said:?}"
    );
    let bottom_up = Prover::try_with(game.clone(), Strategy::BottomUp)
        .err()
        .expect("refused");
    assert!(
        bottom_up.to_string().contains("top-down only"),
        "{bottom_up}"
    );
    let net = Propnet::new(game.clone()).err().expect("refused");
    assert!(format!("{net:?}").contains("TopDownOnly"), "{net:?}");
    let (machine, why) = AnyMachine::build(game.clone(), Engine::Auto).expect("an engine");
    assert!(why.contains("goal-directed"), "{why}");
    assert_eq!(machine.name(), "prover");

    let m = Prover::try_new(game).expect("runs top-down");
    assert_eq!(m.strategy(), Strategy::GoalDirected);
    let s = m.initial_state();
    assert!(!m.is_terminal(&s));
    assert_eq!(legal_text(&m, &s, 0), ["(push c)", "(push d)"]);
    let s = play(&m, &["((push c))"]);
    let fluents: Vec<String> = m
        .fluents(&s)
        .iter()
        .map(|f| ggp_asp::gdl::print::term_to_string(f, &m.game().symbols))
        .collect();
    assert_eq!(fluents, ["(stack (cons a (cons b (cons c NIL))))"]);
    assert_eq!(legal_text(&m, &s, 0), ["(push d)"]);
    assert!(!m.is_terminal(&s));
    let s = play(&m, &["((push c))", "((push d))"]);
    assert!(m.is_terminal(&s));
    assert_eq!(m.goal(&s, 0), Some(100));
    let s = play(&m, &["((push d))"]);
    assert!(m.is_terminal(&s));
    assert_eq!(m.goal(&s, 0), Some(0));
}

/// A list program whose calls ask ever deeper terms has no reading, top-down
/// or not: still an error at load (see `tests/errors.rs`), and a program
/// that recurses without end once loaded is refused when the engine is built,
/// never left to hang.
#[test]
fn top_down_recursion_without_end_is_refused() {
    use ggp_asp::reasoner::Prover;
    let rules = "
        (role p)
        (init (at z))
        (<= (legal p go) (true (at ?x)) (reach ?x done))
        (<= (reach ?x ?x))
        (<= (reach ?x ?y) (reach (s ?x) ?y))
        (<= (next (at ?x)) (true (at ?x)))
        (<= terminal (true (at done)))
        (<= (goal p 100) (true (at done)))";
    let game = ggp_asp::gdl::load_bytes(rules.as_bytes(), "loop.kif").expect("loads");
    assert!(!game.top_down.is_empty());
    let e = Prover::try_new(game).err().expect("refused");
    assert!(e.to_string().contains("no finite reading"), "{e}");
}

/// A call with every argument bound stops at its first answer, even where it
/// leads a recursive set of calls: `(r a)` is answered by `(s a b)` while
/// `(s a ?y)`, which reads `(r a)` back, has not found `(s a c)` yet. That
/// unfinished call must not be kept as if complete: asked afterwards, in the
/// same state, it still gives both answers, as bottom-up evaluation does.
#[test]
fn a_bound_call_answered_early_leaves_no_call_half_done() {
    use ggp_asp::reasoner::prover::Strategy;
    use ggp_asp::reasoner::Prover;
    let rules = "
        (role p)
        (init (edge a b))
        (init (later a c))
        (<= (r ?x) (s ?x ?y))
        (<= (s ?x ?y) (true (edge ?x ?y)))
        (<= (s ?x ?y) (r ?x) (true (later ?x ?y)))
        (<= terminal (r a))
        (<= (legal p (go ?y)) (s a ?y))
        (<= (next (edge ?x ?y)) (true (edge ?x ?y)))
        (<= (goal p 100) (r a))";
    let game = ggp_asp::gdl::load_bytes(rules.as_bytes(), "early.kif").expect("loads");
    for strategy in [Strategy::GoalDirected, Strategy::BottomUp] {
        let m = Prover::try_with(game.clone(), strategy).expect("builds");
        let s = m.initial_state();
        // `terminal` first: its call `(r a)` leads the set `(s a ?y)` is in.
        assert!(m.is_terminal(&s), "{strategy:?}");
        assert_eq!(legal_text(&m, &s, 0), ["(go b)", "(go c)"], "{strategy:?}");
        assert_eq!(m.goal(&s, 0), Some(100), "{strategy:?}");
    }
}
