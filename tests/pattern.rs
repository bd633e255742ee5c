//! Pattern databases (src/asp/forward/pattern.rs) and the A* search of the
//! breadth-first worker: every estimate checked against the true distance
//! to goal 100 over every reachable state of small games, ours and the
//! corpus's; the databases of sliding puzzles proven additive; and the
//! fifteen-puzzle of 28 moves proven shortest in a memory where breadth-first
//! search alone gives up, and Korf's instance of 55 moves proven shortest by
//! IDA* in a memory where A* gives up.

mod common;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use ggp_asp::asp::forward::{breadth, pattern};
use ggp_asp::asp::{self, Mode, Proven, SolveOptions, Status};
use ggp_asp::gdl::{self, Game};
use ggp_asp::reasoner::{ground, prepare, Propnet, StateMachine};

/// The game as the breadth-first worker searches it (without a clock that
/// nothing else reads), the moves after which that clock ends it, its
/// propnet and its pattern databases, every tier (see `pattern::TIERS`).
fn databases(
    path: &std::path::Path,
) -> (
    Propnet,
    Option<usize>,
    Result<Vec<pattern::Heuristic>, String>,
) {
    databases_within(path, usize::MAX)
}

/// [`databases`], each within `per_database` abstract states.
fn databases_within(
    path: &std::path::Path,
    per_database: usize,
) -> (
    Propnet,
    Option<usize>,
    Result<Vec<pattern::Heuristic>, String>,
) {
    let game: Game = gdl::load(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (game, clock) = match breadth::without_clock(&game) {
        Some((g, end)) => (g, Some(end)),
        None => (game, None),
    };
    let g = ground::ground(&game, &prepare::default_limits()).expect("grounds");
    let net = Propnet::new(game.clone()).expect("compiles");
    let stop = AtomicBool::new(false);
    let mut tiers = Vec::new();
    let built = pattern::build(&game, &g, &net, clock.is_some(), per_database, &stop, |h| {
        tiers.push(h)
    });
    (net, clock, built.map(|()| tiers))
}

/// Every state reachable in `net` (at most `limit`), with each one's fewest
/// moves to a state that ends a plan with goal 100: a terminal one, or any
/// state where the goal is 100 when a clock (left out) may end the game
/// there. `None` where no such state is reachable.
fn true_distances(
    net: &Propnet,
    clocked: bool,
    limit: usize,
) -> Vec<(<Propnet as StateMachine>::State, Option<u32>)> {
    let root = net.initial_state();
    let mut index = HashMap::from([(root.clone(), 0usize)]);
    let mut states = vec![root];
    let mut into: Vec<Vec<usize>> = vec![Vec::new()];
    let mut legal = Vec::new();
    let mut i = 0;
    while i < states.len() {
        let s = states[i].clone();
        if !net.is_terminal(&s) {
            net.legal_moves(&s, 0, &mut legal);
            for mv in legal.drain(..) {
                let c = net.next_state(&s, std::slice::from_ref(&mv));
                let j = *index.entry(c.clone()).or_insert_with(|| {
                    states.push(c);
                    into.push(Vec::new());
                    states.len() - 1
                });
                into[j].push(i);
            }
        }
        assert!(states.len() <= limit, "over {limit} states");
        i += 1;
    }
    let mut dist: Vec<Option<u32>> = vec![None; states.len()];
    let mut queue = VecDeque::new();
    for (k, s) in states.iter().enumerate() {
        let wins = net.goal_values(s, 0).contains(&100) && (clocked || net.is_terminal(s));
        if wins {
            dist[k] = Some(0);
            queue.push_back(k);
        }
    }
    while let Some(k) = queue.pop_front() {
        let d = dist[k].expect("queued with a distance");
        for &p in &into[k] {
            if dist[p].is_none() {
                dist[p] = Some(d + 1);
                queue.push_back(p);
            }
        }
    }
    states.into_iter().zip(dist).collect()
}

#[test]
fn databases_never_exceed_the_true_distance() {
    let games = [
        common::puzzle_path("8puzzle"),
        common::puzzle_path("hanoi"),
        common::puzzle_path("buttons"),
        common::puzzle_path("maze"),
        common::puzzle_path("blocks"),
        common::corpus_file("3puzzle.kif"),
        common::corpus_game("hanoi"),
        common::corpus_game("blocksWorldSerial"),
        common::corpus_game("coins"),
        common::corpus_game("circlesolitaire"),
        common::corpus_game("comp2006_MAZE_S.3357334406"),
        common::corpus_game("comp2006_PANCAKES_S.3357334777"),
    ];
    let mut built = 0;
    let mut tiered = 0;
    for path in &games {
        let (net, clock, tiers) = databases(path);
        let tiers = match tiers {
            Ok(tiers) => tiers,
            Err(e) => {
                eprintln!("{}: no databases: {e}", path.display());
                continue;
            }
        };
        assert!(!tiers.is_empty(), "{}: Ok without a tier", path.display());
        built += 1;
        tiered += usize::from(tiers.len() > 1);
        let all = true_distances(&net, clock.is_some(), 400_000);
        for h in &tiers {
            check_against(path, &net, &all, h);
        }
    }
    assert!(built >= 5, "databases built for {built} games only");
    // The 8-puzzle's tiles join into larger patterns in the second tier.
    assert!(tiered >= 1, "no game with a second tier");
}

/// Every estimate of `h` within the true distance of its state in `all`
/// (see [`true_distances`]), and goal 100 never ruled out where it is in
/// reach.
fn check_against(
    path: &std::path::Path,
    net: &Propnet,
    all: &[(<Propnet as StateMachine>::State, Option<u32>)],
    h: &pattern::Heuristic,
) {
    {
        let mut scratch = Vec::new();
        let mut exact = 0;
        for (s, d) in all {
            let e = h.estimate(net, s, &mut scratch);
            match (e, d) {
                (Some(e), Some(d)) => {
                    assert!(
                        e <= *d,
                        "{}: estimate {e} above the distance {d}",
                        path.display()
                    );
                    exact += usize::from(e == *d);
                }
                (Some(_), None) | (None, None) => {}
                (None, Some(d)) => panic!(
                    "{}: the databases rule goal 100 out {d} moves from it",
                    path.display()
                ),
            }
        }
        eprintln!(
            "{}: {} states, {exact} estimated exactly; {}",
            path.display(),
            all.len(),
            h.description
        );
        let (root, d) = &all[0];
        if d.is_some_and(|d| d > 0) && path.ends_with("8puzzle.kif") {
            assert!(h.estimate(net, root, &mut scratch).is_some_and(|e| e > 0));
        }
    }
}

#[test]
fn sliding_puzzle_databases_add_up() {
    for path in [
        common::puzzle_path("8puzzle"),
        common::corpus_file("8puzzle.kif"),
    ] {
        let (net, _, tiers) = databases(&path);
        let tiers = tiers.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // The second tier's larger patterns still add up.
        for h in &tiers {
            assert!(h.additive(), "{}: {}", path.display(), h.description);
        }
        let h = &tiers[0];
        assert!(h.additive(), "{}: {}", path.display(), h.description);
        assert!(h.databases() >= 2, "{}: {}", path.display(), h.description);
        // The tiles' databases add up to at least the Manhattan distance:
        // 22 for the corpus's start (8 7 6 / 5 4 3 / 2 1 b).
        let root = net.initial_state();
        let e = h
            .estimate(&net, &root, &mut Vec::new())
            .expect("the goal is in reach");
        assert!(e >= 16, "{}: estimate {e}", path.display());
        // A smaller memory share: smaller databases, more of them, still added.
        let (_, _, small) = databases_within(&path, 2_000);
        let small = small.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(small.len(), 1, "one tier within a small share");
        let small = &small[0];
        assert!(small.databases() > h.databases(), "{}", small.description);
        assert!(
            small.states() <= small.databases() * 8_000,
            "{}",
            small.description
        );
        assert!(small.additive(), "{}", small.description);
    }
}

/// `puzzle` solved by the breadth-first worker alone in `memory_mb` MiB: a
/// shortest plan, proven, of the puzzle's known optimum.
fn proven_in_breadth(puzzle: &str, memory_mb: u64) {
    proven_in_breadth_on(puzzle, memory_mb, SolveOptions::default().threads);
}

/// [`proven_in_breadth`] with `threads` threads for IDA*'s passes.
fn proven_in_breadth_on(puzzle: &str, memory_mb: u64, threads: usize) {
    let game = gdl::load(&common::puzzle_path(puzzle)).expect("loads");
    let options = SolveOptions {
        mode: Mode::Breadth,
        timeout: Some(Duration::from_secs(900)),
        memory_mb: Some(memory_mb),
        threads,
        ..SolveOptions::default()
    };
    let r = asp::solve(&game, &options).expect("a single-player game");
    assert_eq!(r.status, Status::Solved, "{puzzle}: {}", r.message);
    assert_eq!(r.plan.len(), common::optimum(puzzle), "{puzzle}");
    assert_eq!(r.proven, Proven::Shortest, "{puzzle}");
}

/// In 256 MiB (half a million states) breadth-first search alone proves no
/// plan of 18 moves of fifteen28, and gives up; A* proves its 28.
#[test]
fn a_star_proves_the_fifteen_puzzle_where_breadth_first_search_runs_out_of_memory() {
    proven_in_breadth("fifteen28", 256);
}

/// Korf's instance 2 (55 moves): in 256 MiB A*'s share holds 559,240
/// states, which it fills before its bucket of 55 moves; IDA* goes on from
/// where A* stopped, keeping its path and a table of its own, and proves
/// the plan it finds shortest.
#[test]
fn ida_star_proves_the_fifteen_puzzle_where_a_star_runs_out_of_memory() {
    proven_in_breadth_on("fifteen55", 256, 1);
}

/// The same with each pass shared by three threads (more than this
/// machine's cores, so that the sharing is tested wherever it runs): the
/// first layers breadth-first, their states taken by the threads one by one,
/// and the first plan found as short as the one thread's.
#[test]
fn ida_star_shared_by_threads_proves_the_same_optimum() {
    proven_in_breadth_on("fifteen55", 256, 3);
}
