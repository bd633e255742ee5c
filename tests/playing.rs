//! The playing options beyond plain UCT ([`ggp_asp::search::enhance`],
//! [`ggp_asp::search::minimax`], [`ggp_asp::search::meta`]): each plays legal
//! moves to the end on every kind of game at tiny budgets; alpha-beta and max^n
//! give the values exhaustive minimax gives; alpha-beta proves tic-tac-toe a draw
//! and the first player's result in nim within node counts that fit a 10 s
//! start clock; the meta-choice picks alpha-beta where it proves the game and UCT
//! elsewhere. Counts, not time, wherever a result is asserted.

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use common::{corpus_game, minimax, prover, puzzle_path, Move, State};
use ggp_asp::arena::{run_match, MatchEnd, PlayerSpec, RefereeConfig};
use ggp_asp::gdl;
use ggp_asp::reasoner::{Engine, Prover, StateMachine};
use ggp_asp::search::gifl;
use ggp_asp::search::meta::{self, Choice};
use ggp_asp::search::minimax::{Kind, Minimax};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn quick(seed: u64) -> RefereeConfig {
    RefereeConfig {
        start_clock: Duration::from_secs(120),
        play_clock: Duration::from_secs(120),
        seed,
        engine: Engine::Auto,
        iterations: Some(60),
        ..RefereeConfig::default()
    }
}

/// One player, turns, simultaneous moves, three players: every option, in
/// every seat, plays legal moves to a terminal state (the referee records an
/// illegal, late or failed answer as an error).
#[test]
fn every_option_plays_legal_moves_to_the_end_on_every_kind_of_game() {
    let games = [
        ("buttons", gdl::load(&puzzle_path("buttons"))),
        ("tictactoe", gdl::load(&puzzle_path("tictactoe"))),
        ("rps3", gdl::load(&puzzle_path("rps3"))),
        ("nim3", gdl::load(&puzzle_path("nim3"))),
        (
            "ticTacToeParallel",
            gdl::load(&corpus_game("ticTacToeParallel")),
        ),
        (
            "tictactoe_3player",
            gdl::load(&corpus_game("tictactoe_3player")),
        ),
    ];
    let options = [
        "uct+rave",
        "uct+mast",
        "uct+rave+widen+mast",
        "uct+mast+widen",
        "uct+cutoff:3",
        "uct+gifl:30",
        "alphabeta",
        "maxn",
        "auto",
        "mcm",
    ];
    for (name, g) in games {
        let g = g.expect("the game loads");
        for option in options {
            let spec: PlayerSpec = option.parse().expect("a player");
            let players = vec![spec; g.roles.len()];
            let rec = run_match(&g, players, &quick(5)).expect("the match runs");
            assert_eq!(rec.end, MatchEnd::Terminal, "{name} {option}");
            assert!(rec.errors.is_empty(), "{name} {option}: {:?}", rec.errors);
        }
    }
}

/// GIFL's feature regression on tic-tac-toe: the offensive features of
/// level 1 are generalised to a line's two marks, the empty square that
/// completes it and whose turn it is (nothing else of the board), and each
/// wins at once wherever it holds in reachable positions; defensive
/// features (the opponent taking that square) and higher levels are learned
/// too.
#[test]
fn gifl_generalises_tictactoe_wins_to_lines() {
    let m = prover("tictactoe");
    let mut rng = SmallRng::seed_from_u64(7);
    let features = gifl::learn(&m, 300, None, &mut rng);
    assert_eq!(features.walks, 300);
    let list = features.list();
    let level1: Vec<&gifl::Feature<Prover>> = list
        .iter()
        .filter(|f| f.offensive && f.level == 1)
        .collect();
    assert!(level1.len() >= 8, "{} level-1 features", level1.len());
    assert!(list.iter().any(|f| !f.offensive), "no defensive feature");
    assert!(list.iter().any(|f| f.level == 2), "no level-2 feature");
    for f in &level1 {
        assert!(f.fluents.len() <= 4, "not generalised: {:?}", f.fluents);
        assert!((f.value() - 100.0).abs() < 1e-9);
    }
    let mut checked = 0;
    for n in 0..8 {
        for s in random_positions(&m, n, 0..40) {
            let held: std::collections::HashSet<_> = m.fluents(&s).into_iter().collect();
            for f in &level1 {
                if !f.fluents.iter().all(|x| held.contains(x))
                    || !m.legal(&s, f.role).contains(&f.mv)
                {
                    continue;
                }
                let joint: Vec<Move> = (0..m.num_roles())
                    .map(|r| if r == f.role { f.mv } else { m.legal(&s, r)[0] })
                    .collect();
                let next = m.next_state(&s, &joint);
                assert!(m.is_terminal(&next) && m.goal(&next, f.role) == Some(100));
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "only {checked} positions matched a feature");
}

/// Positions of `m` after `n` random joint moves (non-terminal), from `seeds`.
fn random_positions(m: &Prover, n: usize, seeds: std::ops::Range<u64>) -> Vec<State> {
    let mut out = Vec::new();
    for seed in seeds {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut s = m.initial_state();
        for _ in 0..n {
            if m.is_terminal(&s) {
                break;
            }
            let joint: Vec<Move> = (0..m.num_roles())
                .map(|r| {
                    let l = m.legal(&s, r);
                    l[rng.gen_range(0..l.len())]
                })
                .collect();
            s = m.next_state(&s, &joint);
        }
        if !m.is_terminal(&s) {
            out.push(s);
        }
    }
    out
}

/// Exhaustive max^n with the roles choosing in role order (the reading
/// [`Kind::MaxN`] documents), no table.
fn brute_maxn(m: &Prover, s: &State) -> Vec<f64> {
    let roles = m.num_roles();
    if m.is_terminal(s) {
        return (0..roles)
            .map(|r| m.goal(s, r).map_or(0.0, f64::from))
            .collect();
    }
    let legal: Vec<Vec<Move>> = (0..roles).map(|r| m.legal(s, r)).collect();
    fn pick(m: &Prover, s: &State, legal: &[Vec<Move>], fixed: &mut Vec<Move>) -> Vec<f64> {
        let r = fixed.len();
        if r == legal.len() {
            return brute_maxn(m, &m.next_state(s, fixed));
        }
        let mut best: Option<Vec<f64>> = None;
        for mv in &legal[r] {
            fixed.push(*mv);
            let v = pick(m, s, legal, fixed);
            fixed.pop();
            if best.as_ref().is_none_or(|b| v[r] > b[r]) {
                best = Some(v);
            }
        }
        best.expect("a legal move")
    }
    pick(m, s, &legal, &mut Vec::new())
}

/// Exhaustive paranoid value for `me`: we choose, the others answer together.
fn brute_paranoid(m: &Prover, s: &State, me: usize) -> f64 {
    if m.is_terminal(s) {
        return m.goal(s, me).map_or(0.0, f64::from);
    }
    let roles = m.num_roles();
    let legal: Vec<Vec<Move>> = (0..roles).map(|r| m.legal(s, r)).collect();
    let mut best = f64::NEG_INFINITY;
    for a in &legal[me] {
        let mut worst = f64::INFINITY;
        let others: usize = (0..roles)
            .filter(|&r| r != me)
            .map(|r| legal[r].len())
            .product();
        for k in 0..others {
            let mut rest = k;
            let joint: Vec<Move> = (0..roles)
                .map(|r| {
                    if r == me {
                        *a
                    } else {
                        let n = legal[r].len();
                        let mv = legal[r][rest % n];
                        rest /= n;
                        mv
                    }
                })
                .collect();
            worst = worst.min(brute_paranoid(m, &m.next_state(s, &joint), me));
        }
        best = best.max(worst);
    }
    best
}

#[test]
fn alpha_beta_and_maxn_agree_with_exhaustive_minimax() {
    // Two players, turns, zero-sum: paranoid alpha-beta and max^n are
    // minimax, for either role, and the move found keeps the value.
    let m = Arc::new(prover("tictactoe"));
    // minimax's memo holds one role's values.
    let mut memos = [HashMap::new(), HashMap::new()];
    let mut checked = 0;
    for s in random_positions(&m, 3, 0..12) {
        for (role, memo) in memos.iter_mut().enumerate() {
            let want = f64::from(minimax(&m, &s, role, memo));
            for kind in [Kind::Paranoid, Kind::MaxN] {
                let mut ab = Minimax::new(Arc::clone(&m), role, kind);
                let a = ab.solve(&s, None, None).expect("no limit");
                assert!(a.complete);
                assert_eq!(a.value, want, "{kind:?} role {role}");
                // The move found, where the role has a choice, keeps the value.
                if let Some(best) = a.best.filter(|_| m.legal(&s, role).len() > 1) {
                    let joint: Vec<Move> = (0..2)
                        .map(|r| if r == role { best } else { m.legal(&s, r)[0] })
                        .collect();
                    let after = m.next_state(&s, &joint);
                    assert_eq!(f64::from(minimax(&m, &after, role, memo)), want);
                }
                // Iterative deepening ends at the same proven value.
                let mut ab = Minimax::new(Arc::clone(&m), role, kind);
                let a = ab.search(&s, None, None).expect("no limit");
                assert!(a.complete);
                assert_eq!(a.value, want);
                checked += 1;
            }
        }
    }
    assert!(checked >= 40, "{checked}");
    // Three players (nim3's three roles) and simultaneous moves (rps3):
    // max^n and paranoid against their exhaustive definitions.
    for name in ["nim3", "rps3"] {
        let m = Arc::new(prover(name));
        let deep = if name == "nim3" { 2 } else { 1 };
        for s in random_positions(&m, deep, 0..6) {
            let want = brute_maxn(&m, &s);
            for (role, &value) in want.iter().enumerate() {
                let mut mx = Minimax::new(Arc::clone(&m), role, Kind::MaxN);
                let a = mx.solve(&s, None, None).expect("no limit");
                assert_eq!(a.value, value, "{name} max^n role {role}");
                let mut ab = Minimax::new(Arc::clone(&m), role, Kind::Paranoid);
                let a = ab.solve(&s, None, None).expect("no limit");
                assert_eq!(
                    a.value,
                    brute_paranoid(&m, &s, role),
                    "{name} paranoid role {role}"
                );
            }
        }
    }
}

/// Within node counts a 10 s start clock allows on any engine here: nim3
/// takes 2.0 million nodes, about 4 s on the prover, 2 s on the propnet
/// (tic-tac-toe 4,314, nim1 1,051, nim2 13,468).
#[test]
fn alpha_beta_proves_tictactoe_a_draw_and_the_first_players_result_in_nim() {
    for (path, want) in [
        (corpus_game("ticTacToe"), 50.0),
        (corpus_game("nim1"), 100.0),
        (corpus_game("nim2"), 0.0),
        (corpus_game("nim3"), 100.0),
    ] {
        let g = gdl::load(&path).expect("loads");
        let m = Arc::new(Prover::try_new(g).expect("builds"));
        let mut ab = Minimax::new(Arc::clone(&m), 0, Kind::Paranoid);
        let a = ab
            .solve(&m.initial_state(), None, Some(3_000_000))
            .unwrap_or_else(|| panic!("{}: not proven in 3,000,000 nodes", path.display()));
        assert!(a.complete);
        assert_eq!(a.value, want, "{}", path.display());
    }
}

#[test]
fn meta_choice_takes_alpha_beta_where_it_proves_the_game_and_uct_elsewhere() {
    let budget = Duration::from_secs(600);
    let m = Arc::new(prover("tictactoe"));
    let p = meta::profile(&m, &m.initial_state(), 0, budget);
    assert_eq!(p.proven, Some(50.0));
    assert_eq!(meta::choose(&p).0, Choice::AlphaBeta);
    assert!(p.branching > 1.0 && p.depth > 4.0, "{p:?}");
    // rps3: simultaneous moves, where paranoid alpha-beta's value is not the
    // game's (it is not tried); three rounds, too short to cut off.
    let m = Arc::new(prover("rps3"));
    let p = meta::profile(&m, &m.initial_state(), 0, budget);
    assert!(p.simultaneous && p.proven.is_none(), "{p:?}");
    assert_eq!(p.depth, 3.0);
    let (choice, why) = meta::choose(&p);
    assert!(
        matches!(choice, Choice::Uct(e) if e.cutoff.is_none()),
        "{why}"
    );
}

/// An engine that takes `delay` a step: the rules of tictactoe at the
/// speed of a slow prover.
struct Slow {
    inner: Prover,
    delay: Duration,
}

impl StateMachine for Slow {
    type State = State;
    type Move = Move;
    fn game(&self) -> &gdl::Game {
        self.inner.game()
    }
    fn initial_state(&self) -> State {
        self.inner.initial_state()
    }
    fn legal_moves(&self, s: &State, r: usize, out: &mut Vec<Move>) {
        self.inner.legal_moves(s, r, out)
    }
    fn next_state(&self, s: &State, joint: &[Move]) -> State {
        std::thread::sleep(self.delay);
        self.inner.next_state(s, joint)
    }
    fn is_terminal(&self, s: &State) -> bool {
        self.inner.is_terminal(s)
    }
    fn goal_values(&self, s: &State, r: usize) -> Vec<u8> {
        self.inner.goal_values(s, r)
    }
    fn fluents(&self, s: &State) -> Vec<gdl::Term> {
        self.inner.fluents(s)
    }
    fn state_from_fluents(&self, f: &[gdl::Term]) -> Option<State> {
        self.inner.state_from_fluents(f)
    }
    fn includes(&self, s: &State, part: &State) -> bool {
        self.inner.includes(s, part)
    }
    fn move_term(&self, m: &Move) -> gdl::Term {
        self.inner.move_term(m)
    }
    fn parse_move(&self, t: &gdl::Term) -> Option<Move> {
        self.inner.parse_move(t)
    }
}

/// Alpha-beta stops at its deadline on an engine at tens of states a
/// second: it looked at the clock every 256 nodes, so a profile of 0.5 s
/// took 6.6 s on a slow prover (comp2006_ARGENTINA) while a match sent
/// random moves. At 20 ms a step, a deadline 100 ms away is kept within a
/// few steps (256 steps would be 5 s; the bound is 50 steps' time).
#[test]
fn alpha_beta_keeps_its_deadline_on_a_slow_engine() {
    let m = Arc::new(Slow {
        inner: prover("tictactoe"),
        delay: Duration::from_millis(20),
    });
    let s = m.initial_state();
    let mut ab = Minimax::new(Arc::clone(&m), 0, Kind::Paranoid);
    let t0 = std::time::Instant::now();
    let a = ab.solve(&s, Some(t0 + Duration::from_millis(100)), None);
    assert!(a.is_none_or(|a| !a.complete));
    assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
}
