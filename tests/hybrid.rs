//! The hybrid engine (a propnet for the questions that ground, the prover
//! for the rest) against the reference prover, in lockstep: on corpus games
//! with every split of the four questions forced, and on amazons, whose
//! `next` does not ground, with the split the build chooses.

mod common;

use std::time::Duration;

use ggp_asp::gdl::{self, kw, Relation};
use ggp_asp::reasoner::ground::GroundError;
use ggp_asp::reasoner::hybrid::{self, Hybrid, Parts};
use ggp_asp::reasoner::propnet::CompileLimits;
use ggp_asp::reasoner::{Propnet, PropnetError, Prover, StateMachine};

use common::corpus_game;
use common::lockstep::compare;

/// Every split that leaves at least one question on each engine.
fn splits() -> Vec<Parts> {
    (1..15u8)
        .map(|bits| Parts {
            legal: bits & 1 != 0,
            next: bits & 2 != 0,
            terminal: bits & 4 != 0,
            goal: bits & 8 != 0,
        })
        .collect()
}

#[test]
fn every_split_agrees_with_the_prover_on_games_of_every_kind() {
    // Turns, simultaneous moves, three players, one player with a pass-free
    // move set.
    let games = [
        "ticTacToe",
        "connectFourSimultaneous",
        "3pConnectFour",
        "breakthrough",
        "8puzzle",
    ];
    for name in games {
        let game = gdl::load(&corpus_game(name)).unwrap();
        let reference = Prover::new(game.clone());
        for parts in splits() {
            let hybrid = Hybrid::new(
                &game,
                Prover::new(game.clone()),
                parts,
                &CompileLimits::default(),
            )
            .unwrap_or_else(|e| panic!("{name} {parts:?}: no hybrid: {e}"));
            let outcome = compare(&reference, &hybrid, 2, 40, 3, Duration::from_secs(60))
                .unwrap_or_else(|e| panic!("{name} {parts:?}: {e}"));
            assert!(outcome.states > 10, "{name}: {} states", outcome.states);
            // The network knows the states: its answers were compared, not
            // the prover's twice.
            let mut s = hybrid.initial_state();
            for _ in 0..5 {
                assert!(s.on_network(), "{name} {parts:?}");
                if hybrid.is_terminal(&s) {
                    break;
                }
                let joint: Vec<_> = (0..hybrid.num_roles())
                    .map(|r| hybrid.legal(&s, r)[0])
                    .collect();
                s = hybrid.next_state(&s, &joint);
            }
        }
    }
}

#[test]
fn a_question_left_out_is_replaced_by_its_domain() {
    let game = gdl::load(&corpus_game("ticTacToe")).unwrap();
    let only_next = Parts {
        legal: false,
        next: true,
        terminal: false,
        goal: false,
    };
    let small = hybrid::reduced(&game, only_next).unwrap();
    let heads = |name| {
        small
            .rules
            .iter()
            .filter(|r| r.head.name() == Some(name))
            .count()
    };
    // Two roles, each with every move any role has (9 marks and noop) as a
    // fact; no terminal or goal rule is left.
    assert_eq!(heads(kw::LEGAL), 2 * 10);
    assert!(small
        .rules
        .iter()
        .filter(|r| r.head.name() == Some(kw::LEGAL))
        .all(|r| r.body.is_empty()));
    assert_eq!(heads(kw::TERMINAL), 0);
    assert_eq!(heads(kw::GOAL), 0);
    // The relations only terminal and goal read (line, open) are gone too.
    assert!(small.rules.iter().all(|r| {
        let name = game.symbols.name(r.head.name().unwrap());
        name != "line" && name != "open"
    }));
}

#[test]
fn a_split_leaves_to_the_prover_what_reads_the_heaviest_relation() {
    let game = gdl::load(&corpus_game("ticTacToe")).unwrap();
    let rel = |name: &str, arity| Relation {
        name: game.symbols.get(name).unwrap(),
        arity,
    };
    // `line` is read by terminal and goal, not by legal or next.
    let parts = Parts::without(&game, rel("line", 1)).unwrap();
    assert_eq!(
        parts,
        Parts {
            legal: true,
            next: true,
            terminal: false,
            goal: false
        }
    );
    let parts = Parts::without(&game, rel("next", 1)).unwrap();
    assert!(parts.legal && !parts.next && parts.terminal && parts.goal);
}

/// amazons does not ground in 384 MiB (its `next` has a rule instance per
/// move and cell): the build leaves `next` to the prover and the network
/// answers the rest, and the two agree with the prover alone.
#[test]
fn amazons_runs_on_a_hybrid_that_agrees_with_the_prover() {
    let game = gdl::load(&corpus_game("amazons")).unwrap();
    let error: GroundError = match Propnet::new(game.clone()) {
        Err(PropnetError::Ground(e)) => e,
        Err(e) => panic!("amazons: expected a grounding error, got {e}"),
        Ok(_) => panic!("amazons compiled whole: the test needs a game that does not"),
    };
    assert_eq!(
        error.heaviest().first().map(|r| r.name),
        Some(kw::NEXT),
        "{error}"
    );
    let h = hybrid::build(
        &game,
        &error,
        Prover::new(game.clone()),
        &CompileLimits::default(),
    )
    .unwrap_or_else(|e| panic!("no hybrid: {e}"));
    assert!(!h.parts().next && h.parts().legal, "{}", h.describe());
    let reference = Prover::new(game.clone());
    let outcome = compare(&reference, &*h, 2, 30, 5, Duration::from_secs(120)).unwrap();
    assert!(outcome.states > 20, "{} states", outcome.states);
    // Every state of the walk is one the network knows.
    let mut s = h.initial_state();
    for _ in 0..10 {
        let moves: Vec<_> = (0..h.num_roles()).map(|r| h.legal(&s, r)[0]).collect();
        s = h.next_state(&s, &moves);
    }
    assert!(s.on_network());
}

/// The prover built lazily (goal-directed, static relations computed on
/// demand: the engine a match answers with while its chosen engine builds)
/// against the prover as `auto` builds it, in lockstep, on games of every
/// kind, with static relations large and small. (Joined in the order
/// written, as rules read top-down are, it lost legal moves on slaughter
/// and a comp2006 game after some steps: their rules put a negation before
/// the literals that bind it. Its joins are planned now, which is slow on
/// those games and on checkers, too slow for a lockstep walk here.)
#[test]
fn the_lazy_prover_agrees_with_the_prover() {
    let games = [
        "ticTacToe",
        "connectFourSimultaneous",
        "3pConnectFour",
        "breakthrough",
        "8puzzle",
        "chess_200",
        "amazons",
        "blocksWorld",
        "Othello",
        "hanoi",
        "knightThrough",
        "max_knights",
        "mummymaze2p",
    ];
    for name in games {
        let game = gdl::load(&corpus_game(name)).expect("loads");
        let eager = Prover::try_new(game.clone()).expect("builds");
        let lazy = Prover::try_lazy(game).expect("builds");
        let out = compare(&eager, &lazy, 3, 60, 7, Duration::from_secs(3))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            out.states > 10,
            "{name}: only {} states compared",
            out.states
        );
    }
}
