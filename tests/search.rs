//! UCT ([`ggp_asp::search::Mcts`]) on small positions whose values are known by
//! exhaustive minimax over the prover: it takes immediate wins, blocks, finds a
//! fork and nim's winning move; plays one-player puzzles to 100 by following its
//! best line; handles simultaneous moves and three roles; keeps its tree across
//! moves within the node budget. Iteration counts, not time, so every run is the
//! same.

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{joint, minimax, play, prover, Move, State};
use ggp_asp::gdl::print::term_to_string;
use ggp_asp::reasoner::{Prover, StateMachine};
use ggp_asp::search::{Mcts, Parallel, SearchConfig};

fn cfg(seed: u64) -> SearchConfig {
    SearchConfig {
        seed,
        threads: 1,
        ..SearchConfig::default()
    }
}

fn text(m: &Prover, mv: &Move) -> String {
    term_to_string(&m.move_term(mv), &m.game().symbols)
}

/// The moves of `role` that keep the game's value for `role` (role on the move).
fn optimal_moves(m: &Prover, s: &State, role: usize) -> Vec<String> {
    let mut memo = HashMap::new();
    let best = minimax(m, s, role, &mut memo);
    let legal: Vec<Vec<Move>> = (0..m.num_roles()).map(|r| m.legal(s, r)).collect();
    legal[role]
        .iter()
        .filter(|mv| {
            let j: Vec<Move> = (0..m.num_roles())
                .map(|r| if r == role { **mv } else { legal[r][0] })
                .collect();
            minimax(m, &m.next_state(s, &j), role, &mut memo) == best
        })
        .map(|mv| text(m, mv))
        .collect()
}

fn uct_choice(m: &Arc<Prover>, s: &State, role: usize, iterations: u64, seed: u64) -> String {
    let mut search = Mcts::new(Arc::clone(m), s.clone(), cfg(seed));
    search.search_iterations(iterations);
    text(m, &search.best_move(role))
}

#[test]
fn takes_an_immediate_win_rather_than_blocking() {
    let m = Arc::new(prover("tictactoe"));
    // x has 1 1 and 1 2; o has 2 1 and 2 2 and threatens 2 3; x to move.
    let s = play(
        &m,
        &[
            "((mark 1 1) noop)",
            "(noop (mark 2 1))",
            "((mark 1 2) noop)",
            "(noop (mark 2 2))",
        ],
    );
    // Even with almost no search the winning move is seen at the root.
    assert_eq!(uct_choice(&m, &s, 0, 1, 1), "(mark 1 3)");
    assert_eq!(uct_choice(&m, &s, 0, 500, 2), "(mark 1 3)");
}

#[test]
fn blocks_a_threat() {
    let m = Arc::new(prover("tictactoe"));
    let s = play(
        &m,
        &[
            "((mark 1 1) noop)",
            "(noop (mark 2 2))",
            "((mark 1 2) noop)",
        ],
    );
    let good = optimal_moves(&m, &s, 1);
    assert_eq!(good, vec!["(mark 1 3)"], "minimax: only the block holds");
    for seed in 1..=3 {
        assert_eq!(
            uct_choice(&m, &s, 1, 3000, seed),
            "(mark 1 3)",
            "seed {seed}"
        );
    }
}

#[test]
fn finds_a_fork() {
    let m = Arc::new(prover("tictactoe"));
    // x: 1 1, 2 2; o: 1 2, 3 3; x to move wins by a fork.
    let s = play(
        &m,
        &[
            "((mark 1 1) noop)",
            "(noop (mark 1 2))",
            "((mark 2 2) noop)",
            "(noop (mark 3 3))",
        ],
    );
    let mut memo = HashMap::new();
    assert_eq!(minimax(&m, &s, 0, &mut memo), 100, "a won position");
    let winning = optimal_moves(&m, &s, 0);
    assert!(!winning.is_empty() && winning.len() < 5, "{winning:?}");
    for seed in 1..=3 {
        let c = uct_choice(&m, &s, 0, 3000, seed);
        assert!(winning.contains(&c), "seed {seed}: {c} not in {winning:?}");
    }
}

#[test]
fn finds_the_winning_move_in_nim() {
    let m = Arc::new(prover("nim"));
    let s = m.initial_state();
    let winning = optimal_moves(&m, &s, 0);
    assert_eq!(
        winning,
        vec!["(take a 2)"],
        "minimax agrees with the puzzle's header"
    );
    // Plain UCT hesitates here for long; the solver proves the win (the whole
    // game tree) within about 60,000 iterations.
    for seed in 1..=2 {
        assert_eq!(
            uct_choice(&m, &s, 0, 80_000, seed),
            "(take a 2)",
            "seed {seed}"
        );
    }
}

/// Plays a one-player puzzle to the end with `iterations` per move.
fn solve_alone(name: &str, iterations: u64) -> (u8, usize) {
    let m = Arc::new(prover(name));
    let mut search = Mcts::new(Arc::clone(&m), m.initial_state(), cfg(7));
    let mut s = m.initial_state();
    let mut steps = 0;
    while !m.is_terminal(&s) && steps < 100 {
        search.search_iterations(iterations);
        let mv = search.best_move(0);
        assert!(m.legal(&s, 0).contains(&mv), "{name}: illegal move");
        s = m.next_state(&s, std::slice::from_ref(&mv));
        search.advance(&[mv]);
        assert_eq!(search.state(), &s, "{name}: the root follows the game");
        steps += 1;
    }
    (m.goal(&s, 0).unwrap_or(0), steps)
}

#[test]
fn one_player_puzzles_reach_100_by_the_best_line() {
    for name in ["blocks", "buttons", "queens"] {
        let (goal, steps) = solve_alone(name, 2000);
        assert_eq!(goal, 100, "{name}: ended with {goal} after {steps} steps");
    }
}

#[test]
fn best_line_replays_to_its_goal() {
    let m = Arc::new(prover("buttons"));
    let mut search = Mcts::new(Arc::clone(&m), m.initial_state(), cfg(3));
    search.search_iterations(3000);
    let (line, goal) = search.best_line().expect("a line after 3000 iterations");
    let mut s = m.initial_state();
    for j in &line {
        assert!(!m.is_terminal(&s));
        assert!(m.legal(&s, 0).contains(&j[0]));
        s = m.next_state(&s, j);
    }
    assert!(
        m.is_terminal(&s),
        "a complete line ends in a terminal state"
    );
    assert_eq!(m.goal(&s, 0), Some(goal));
}

#[test]
fn the_tree_is_kept_across_moves() {
    let m = Arc::new(prover("connect4"));
    let mut search = Mcts::new(Arc::clone(&m), m.initial_state(), cfg(5));
    search.search_iterations(2000);
    let mv = search.best_move(0);
    let j = vec![mv, m.legal(&m.initial_state(), 1)[0]];
    let before = search.stats();
    search.advance(&j);
    let after = search.stats();
    assert!(after.root_visits > 0, "the chosen child had been searched");
    assert!(after.nodes < before.nodes && after.nodes > 1);
    assert_eq!(after.iterations, before.iterations);
    // A reply never expanded in the tree still gives the right root.
    let s1 = m.next_state(&m.initial_state(), &j);
    let legal_j: Vec<Move> = (0..2)
        .map(|r| *m.legal(&s1, r).last().expect("a move"))
        .collect();
    search.advance(&legal_j);
    assert_eq!(search.state(), &m.next_state(&s1, &legal_j));
    search.search_iterations(50);
    assert!(m.legal(search.state(), 0).contains(&search.best_move(0)));
}

#[test]
fn the_node_limit_bounds_the_tree() {
    let m = Arc::new(prover("connect4"));
    let c = SearchConfig {
        node_limit: 100,
        ..cfg(9)
    };
    let mut search = Mcts::new(Arc::clone(&m), m.initial_state(), c);
    search.search_iterations(3000);
    let st = search.stats();
    assert!(st.nodes <= 100, "{} nodes", st.nodes);
    assert_eq!(st.iterations, 3000);
    let mut s = m.initial_state();
    for _ in 0..4 {
        let j: Vec<Move> = (0..2).map(|r| search.best_move(r)).collect();
        s = m.next_state(&s, &j);
        search.advance(&j);
        search.search_iterations(500);
        assert!(search.stats().nodes <= 100);
    }
    assert_eq!(search.state(), &s);
}

#[test]
fn same_seed_same_search() {
    let m = Arc::new(prover("connect4"));
    let run = |seed| {
        let mut s = Mcts::new(Arc::clone(&m), m.initial_state(), cfg(seed));
        s.search_iterations(500);
        s.root_stats(0)
            .iter()
            .map(|(_, st)| st.visits)
            .collect::<Vec<_>>()
    };
    assert_eq!(run(4), run(4));
}

/// Plays a whole game with UCT in every seat, checking every move is legal.
fn self_play(name: &str, iterations: u64) -> Vec<Option<u8>> {
    let m = Arc::new(prover(name));
    let mut search = Mcts::new(Arc::clone(&m), m.initial_state(), cfg(11));
    let mut s = m.initial_state();
    let mut steps = 0;
    while !m.is_terminal(&s) {
        search.search_iterations(iterations);
        let j: Vec<Move> = (0..m.num_roles()).map(|r| search.best_move(r)).collect();
        for (r, mv) in j.iter().enumerate() {
            assert!(m.legal(&s, r).contains(mv), "{name} step {steps}: illegal");
        }
        s = m.next_state(&s, &j);
        search.advance(&j);
        steps += 1;
        assert!(steps < 200, "{name}: too long");
    }
    assert!(
        search.try_best_move(0).is_none(),
        "nothing to play at the end"
    );
    (0..m.num_roles()).map(|r| m.goal(&s, r)).collect()
}

#[test]
fn simultaneous_moves() {
    let goals = self_play("rps3", 300);
    assert_eq!(goals.len(), 2);
    assert!(goals.iter().all(|g| g.is_some()));
    // Every hand of a node's roles is tried: decoupled statistics per role.
    let m = Arc::new(prover("rps3"));
    let mut search = Mcts::new(Arc::clone(&m), m.initial_state(), cfg(1));
    search.search_iterations(300);
    for r in 0..2 {
        let st = search.root_stats(r);
        assert_eq!(st.len(), 3);
        assert!(st.iter().all(|(_, s)| s.visits > 50), "{st:?}");
    }
}

#[test]
fn three_roles() {
    let goals = self_play("nim3", 300);
    assert_eq!(goals.len(), 3);
    assert_eq!(
        goals.iter().filter(|g| **g == Some(100)).count(),
        1,
        "one winner: {goals:?}"
    );
}

#[test]
fn two_players_self_play_tictactoe_is_a_draw() {
    // With a decent budget both sides play tic-tac-toe perfectly.
    assert_eq!(self_play("tictactoe", 5000), vec![Some(50), Some(50)]);
}

#[test]
fn search_until_uses_threads_and_returns_at_the_deadline() {
    let m = Arc::new(prover("connect4"));
    let c = SearchConfig {
        threads: 2,
        ..cfg(1)
    };
    let mut search = Mcts::new(Arc::clone(&m), m.initial_state(), c);
    let t0 = Instant::now();
    search.search_until(t0 + Duration::from_millis(200));
    let took = t0.elapsed();
    // Generous bound: one playout past the deadline is cut short.
    assert!(took < Duration::from_secs(5), "{took:?}");
    let st = search.stats();
    assert_eq!(st.trees, 2);
    assert!(st.iterations > 0);
    let total: u64 = search.root_stats(0).iter().map(|(_, s)| s.visits).sum();
    assert_eq!(total, st.root_visits);
    assert!(m
        .legal(&m.initial_state(), 0)
        .contains(&search.best_move(0)));
    // A joint move played keeps both trees in step.
    let j = joint(&m, "((drop 1) noop)");
    search.advance(&j);
    search.search_until(Instant::now() + Duration::from_millis(50));
    let s1 = m.next_state(&m.initial_state(), &j);
    assert!(m.legal(&s1, 1).contains(&search.best_move(1)));
}

#[test]
fn tree_parallel_shares_one_tree() {
    let m = Arc::new(prover("connect4"));
    let c = SearchConfig {
        threads: 2,
        parallel: Parallel::Tree,
        ..cfg(1)
    };
    let mut search = Mcts::new(Arc::clone(&m), m.initial_state(), c);
    search.search_until(Instant::now() + Duration::from_millis(300));
    let st = search.stats();
    assert_eq!(st.trees, 1);
    assert!(st.iterations > 0);
    // Every descent counted exactly once, abandoned ones taken back.
    for r in 0..2 {
        let total: u64 = search.root_stats(r).iter().map(|(_, s)| s.visits).sum();
        assert_eq!(total, st.root_visits, "role {r}");
    }
    assert!(m
        .legal(&m.initial_state(), 0)
        .contains(&search.best_move(0)));
    let j = joint(&m, "((drop 4) noop)");
    search.advance(&j);
    search.search_until(Instant::now() + Duration::from_millis(100));
    let s1 = m.next_state(&m.initial_state(), &j);
    assert!(m.legal(&s1, 1).contains(&search.best_move(1)));

    // The solver works the same on a shared tree.
    let m = Arc::new(prover("tictactoe"));
    let s = play(
        &m,
        &[
            "((mark 1 1) noop)",
            "(noop (mark 2 2))",
            "((mark 1 2) noop)",
        ],
    );
    let c = SearchConfig {
        threads: 2,
        parallel: Parallel::Tree,
        ..cfg(2)
    };
    let mut search = Mcts::new(Arc::clone(&m), s, c);
    // Searched to the clock in slices until it has done the work the answer
    // needs, so that a slow or busy machine gets there too, only later.
    let mut slices = 0;
    while search.stats().iterations < 20_000 && slices < 400 {
        search.search_until(Instant::now() + Duration::from_millis(50));
        slices += 1;
    }
    assert_eq!(text(&m, &search.best_move(1)), "(mark 1 3)");
}

/// With sure wins on (`wins`), a node whose mover has one legal is solved
/// when it is added: in this breakthrough position (black to move, white's
/// pawn on row 7 out of black's reach) each of black's three moves lets
/// white onto the far row, so three iterations, one a child, prove the root
/// lost for black. Without them three iterations prove nothing: each
/// child's win is a grandchild still unexpanded.
#[test]
fn sure_wins_solve_the_nodes_they_are_legal_in() {
    use ggp_asp::gdl::parser::parse_ground_terms;
    use ggp_asp::reasoner::Propnet;
    let path = std::path::Path::new(common::CORPUS).join("breakthrough.kif");
    let game = ggp_asp::gdl::load(&path).expect("loads");
    let net = Arc::new(Propnet::new(game.clone()).expect("compiles"));
    let fluents = parse_ground_terms(
        "((cellHolds 1 7 white) (cellHolds 5 1 white) (cellHolds 8 8 black) \
         (cellHolds 8 7 black) (control black))",
        &game.symbols,
    )
    .expect("KIF");
    let state = net
        .state_from_fluents(&fluents)
        .expect("a state of the game");
    let mut legal = Vec::new();
    net.legal_moves(&state, 1, &mut legal);
    assert_eq!(legal.len(), 3, "black's moves");
    for (enhancements, solved) in [("wins", true), ("", false)] {
        let cfg = SearchConfig {
            threads: 1,
            enhancements: enhancements.parse().expect("enhancements"),
            ..SearchConfig::default()
        };
        let mut s = Mcts::new(Arc::clone(&net), state.clone(), cfg);
        s.search_iterations(3);
        let proven = solved.then(|| vec![1.0, 0.0]);
        assert_eq!(
            s.proven_values(),
            proven,
            "{enhancements:?}: the root's values after three iterations"
        );
        // Every move loses: the proof tells them no apart, so it names none.
        assert_eq!(s.proven_move(1), None);
    }
}
