//! The propositional network against the reference prover.
//!
//! On every puzzle of `puzzles/` and every valid game of the corpus
//! (`../shared/games`, read-only test data) that compiles within the test's
//! limits, seeded random playouts walk both engines in lockstep and compare, in
//! every state met: the fluents, the terminal flag, every role's goal values and
//! legal moves (as sorted KIF text); the joint move is drawn from the prover's
//! sorted legal moves, so the run is deterministic. Any difference fails the test;
//! a game is left out only when it does not compile within the limits (grounding
//! too big) or the manifest lists it as defective, and those are counted.
//!
//! The prover is slow on big games, so each game has a small wall-clock budget:
//! a game stops after the step that exceeds it (every state met is still
//! compared). Games run on two threads.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use ggp_asp::gdl::{self, print::term_to_string, Game};
use ggp_asp::reasoner::ground::Limits;
use ggp_asp::reasoner::propnet::{CompileLimits, PropnetError};
use ggp_asp::reasoner::prover::Strategy;
use ggp_asp::reasoner::{AnyMachine, Engine, PlayoutLimits, Propnet, Prover, StateMachine};

use common::lockstep::{compare, texts};
use common::{manifest_problems, CORPUS};

const PUZZLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/puzzles");

/// Compile limits for the tests: games beyond them are counted, not compared.
fn test_limits() -> CompileLimits {
    CompileLimits {
        ground: Limits {
            max_memory: 64 << 20,
            max_join_steps: 5_000_000,
            max_time: Duration::from_secs(60),
        },
        max_nodes: 1_000_000,
    }
}

enum Verdict {
    Compared(usize),
    TooBig(String),
    Defective(String),
    Failed(String),
}

/// Loads, compiles and compares one game file.
fn check_file(
    path: &Path,
    problems: &str,
    playouts: usize,
    max_steps: usize,
    budget: Duration,
) -> Verdict {
    let name = path.display().to_string();
    let game = match gdl::load(path) {
        Ok(g) => g,
        // Not a valid game: the front end's own tests check these diagnoses.
        Err(e) => return Verdict::Defective(format!("{name} does not load: {e}")),
    };
    let prover = match Prover::try_new(game.clone()) {
        Ok(p) => p,
        Err(e) => return Verdict::TooBig(format!("prover: {e}")),
    };
    let net = match Propnet::with_limits(game, &test_limits()) {
        Ok(n) => n,
        Err(e @ (PropnetError::Ground(_) | PropnetError::TooManyNodes { .. })) => {
            return Verdict::TooBig(e.to_string())
        }
        Err(e) if !problems.is_empty() => return Verdict::Defective(format!("{problems}: {e}")),
        Err(e) => return Verdict::Failed(format!("does not compile: {e}")),
    };
    match compare(&prover, &net, playouts, max_steps, 7, budget) {
        Ok(o) => Verdict::Compared(o.states),
        Err(e) if !problems.is_empty() => {
            // A defective game may still agree; report a difference but do not fail on
            // what the manifest says is broken.
            Verdict::Defective(format!("{problems}: {e}"))
        }
        Err(e) => Verdict::Failed(e),
    }
}

/// The verdicts of a run over many games, counted.
struct Tally {
    compared: usize,
    states: usize,
    too_big: Vec<String>,
    defective: usize,
    failures: Vec<String>,
}

impl Tally {
    fn of(verdicts: &[(PathBuf, Verdict)]) -> Tally {
        let mut t = Tally {
            compared: 0,
            states: 0,
            too_big: Vec::new(),
            defective: 0,
            failures: Vec::new(),
        };
        for (f, v) in verdicts {
            let name = f.file_name().unwrap().to_string_lossy();
            match v {
                Verdict::Compared(n) => {
                    t.compared += 1;
                    t.states += n;
                }
                Verdict::TooBig(e) => t.too_big.push(format!("{name} ({e})")),
                Verdict::Defective(_) => t.defective += 1,
                Verdict::Failed(e) => t.failures.push(format!("{name}: {e}")),
            }
        }
        t
    }
}

fn kif_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "kif"))
        .collect();
    v.sort();
    v
}

/// Runs `check` over `files` on two threads; returns the verdicts in file order.
fn run_all(files: &[PathBuf], check: impl Fn(&Path) -> Verdict + Sync) -> Vec<(PathBuf, Verdict)> {
    let next = AtomicUsize::new(0);
    let out = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(f) = files.get(i) else { break };
                let v = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(f))) {
                    Ok(v) => v,
                    Err(_) => Verdict::Failed("panicked".into()),
                };
                out.lock().unwrap().push((i, f.clone(), v));
            });
        }
    });
    let mut v = out.into_inner().unwrap();
    v.sort_by_key(|x| x.0);
    v.into_iter().map(|(_, f, v)| (f, v)).collect()
}

#[test]
fn propnet_agrees_with_the_prover_on_every_puzzle() {
    let files = kif_files(Path::new(PUZZLES));
    assert!(files.len() >= 10, "the puzzles folder holds our games");
    let verdicts = run_all(&files, |f| {
        check_file(f, "", 10, 120, Duration::from_secs(20))
    });
    let mut failures = Vec::new();
    for (f, v) in &verdicts {
        match v {
            Verdict::Compared(n) => assert!(*n > 0),
            Verdict::TooBig(e) | Verdict::Defective(e) | Verdict::Failed(e) => {
                failures.push(format!("{}: {e}", f.display()))
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn propnet_agrees_with_the_prover_on_the_corpus() {
    let problems = manifest_problems();
    let mut files = kif_files(Path::new(CORPUS));
    files.extend(kif_files(&Path::new(CORPUS).join("tests")));
    let verdicts = run_all(&files, |f| {
        let key = f
            .strip_prefix(CORPUS)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        // `sim_timeout` only says the manifest's own simulator was slow.
        let p = problems
            .get(&key)
            .map(String::as_str)
            .unwrap_or("")
            .split(',')
            .filter(|p| !p.starts_with("sim_timeout") && !p.starts_with("no_terminal"))
            .collect::<Vec<_>>()
            .join(",");
        check_file(f, &p, 3, 60, Duration::from_millis(400))
    });
    let Tally {
        compared,
        states,
        too_big,
        defective,
        failures,
    } = Tally::of(&verdicts);
    eprintln!(
        "compared {compared} games ({states} states); {} too big for the test limits; {defective} defective or GDL-II",
        too_big.len()
    );
    eprintln!("too big: {}", too_big.join(", "));
    assert!(
        failures.is_empty(),
        "{} game(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Nearly every valid game fits: a regression in the grounder shows here.
    assert!(
        compared >= 350,
        "only {compared} games compiled and were compared"
    );
}

/// Every corpus game with unsafe rules that loads (each unbound variable
/// given the terms that can stand in its place, [`gdl::domain`]) walks in
/// lockstep on the prover and the propnet: the generated domain relations
/// are ordinary static relations to both.
#[test]
fn games_with_unsafe_rules_agree_in_lockstep() {
    let mut files = kif_files(Path::new(CORPUS));
    files.extend(kif_files(&Path::new(CORPUS).join("tests")));
    let read_as_ggp_base = |w: &gdl::Diagnostic| {
        w.message.starts_with("unsafe rule") && !w.message.contains("only inside 'not'")
    };
    let unsafe_files: Vec<PathBuf> = files
        .into_iter()
        .filter(|f| gdl::load(f).is_ok_and(|g| g.warnings.iter().any(read_as_ggp_base)))
        .collect();
    let verdicts = run_all(&unsafe_files, |f| {
        check_file(f, "", 5, 100, Duration::from_secs(5))
    });
    let (mut compared, mut failures) = (0, Vec::new());
    for (f, v) in &verdicts {
        match v {
            Verdict::Compared(n) => {
                assert!(*n > 0);
                compared += 1;
            }
            // The chinese checkers of many players and endgame: past the
            // test's grounding limits, as such games were before.
            Verdict::TooBig(e) => eprintln!("{}: {e}", f.display()),
            Verdict::Defective(e) | Verdict::Failed(e) => {
                failures.push(format!("{}: {e}", f.display()))
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // 14 games of the corpus and 3 of its test cases load; most compile.
    assert!(verdicts.len() >= 17, "only {} games", verdicts.len());
    assert!(compared >= 12, "only {compared} games compared");
}

/// The demand rewrite ([`gdl::demand`]), the constant fluents
/// ([`gdl::constant`]) and argument factoring ([`gdl::factor`]) change which tuples the engines compute, never what
/// holds: on every valid corpus game they apply to, the prover on the
/// rewritten rules walks in lockstep with the prover on the rules as written
/// (states, terminal flags, goals, legal moves).
#[test]
fn rewrites_agree_with_the_prover_on_the_corpus() {
    let problems = manifest_problems();
    let files = kif_files(Path::new(CORPUS));
    let verdicts = run_all(&files, |f| {
        let key = f.file_name().unwrap().to_string_lossy().into_owned();
        let Ok(game) = gdl::load(f) else {
            return Verdict::Defective("does not load".into());
        };
        // A game beyond the grounding limits may be beyond the prover as
        // written too (ruleDepthQuadratic: 2^44 tuples a state, the game the
        // rewrite is for), and one prover call cannot be cut short.
        if ggp_asp::reasoner::ground::ground(&game, &test_limits().ground).is_err() {
            return Verdict::TooBig("does not ground".into());
        }
        // Both scopes (their adornments, and so their demand rules, differ),
        // and the constant fluents read as static relations, alone and
        // under the demand rewrite.
        use gdl::demand::{rewrite, Scope};
        let frozen = gdl::constant::freeze(&game).map(|(g, _)| g);
        let mut rewritten: Vec<Game> = [Scope::Dynamic, Scope::All]
            .into_iter()
            .filter_map(|scope| rewrite(&game, scope).map(|(g, _)| g))
            .collect();
        // And the inert arguments factored out ([`gdl::factor`]).
        rewritten.extend(gdl::factor::rewrite(&game).map(|(g, _)| g));
        if let Some(frozen) = frozen {
            rewritten.extend(rewrite(&frozen, Scope::All).map(|(g, _)| g));
            rewritten.push(frozen);
        }
        if rewritten.is_empty() {
            return Verdict::TooBig("no relation to rewrite".into());
        }
        let Ok(a) = Prover::try_new(game) else {
            return Verdict::TooBig("prover".into());
        };
        let mut states = 0;
        for magic in rewritten {
            let b = match Prover::try_new(magic) {
                Ok(b) => b,
                Err(e) => return Verdict::Failed(format!("the rewritten game: {e}")),
            };
            match compare(&a, &b, 3, 60, 11, Duration::from_millis(400)) {
                Ok(o) => states += o.states,
                Err(e) if !problems.get(&key).is_none_or(String::is_empty) => {
                    return Verdict::Defective(e)
                }
                Err(e) => return Verdict::Failed(e),
            }
        }
        Verdict::Compared(states)
    });
    let (mut compared, mut failures) = (0, Vec::new());
    for (f, v) in &verdicts {
        match v {
            Verdict::Compared(_) => compared += 1,
            Verdict::Failed(e) => failures.push(format!("{}: {e}", f.display())),
            Verdict::TooBig(_) | Verdict::Defective(_) => {}
        }
    }
    eprintln!("rewrites compared on {compared} games");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        compared >= 20,
        "the rewrite applied to only {compared} games"
    );
}

/// ruleDepthExponential, the game argument factoring is for, does not
/// ground (2^k rows of `prereq` at step k), so the corpus comparison above
/// skips it: here the prover on its factored rules walks in lockstep with
/// the prover on the rules as written for as far as the latter goes
/// quickly (14 steps: 2^14 rows), and replays the 19-move plan.
#[test]
fn factored_rule_depth_exponential_agrees_with_the_rules_as_written() {
    let game = gdl::load(&Path::new(CORPUS).join("ruleDepthExponential.kif")).unwrap();
    let (factored, rels) = gdl::factor::rewrite(&game).expect("prereq's bits are inert");
    assert_eq!(rels.len(), 20, "prereq1 .. prereq20");
    let a = Prover::try_with(game, Strategy::GoalDirected).unwrap();
    let b = Prover::try_new(factored).unwrap();
    let o = compare(&a, &b, 40, 14, 7, Duration::from_secs(60)).unwrap();
    assert!(o.states > 100, "{} states", o.states);
    let text = format!("({} giveUp)", ["continue"; 18].join(" "));
    let plan = gdl::parser::parse_ground_terms(&text, &b.game().symbols).unwrap();
    assert_eq!(ggp_asp::asp::verify::replay(&b, &plan), Ok(100));
}

/// A replay asks whether one move is legal ([`StateMachine::is_legal`]):
/// on the prover, goal-directed a bound call, bottom-up the table; on every
/// engine the same answer as the list of legal moves, for the moves listed
/// and for moves legal in other states.
#[test]
fn is_legal_agrees_with_the_legal_moves() {
    fn check<M: StateMachine>(m: &M, name: &str) {
        let mut rng = StdRng::seed_from_u64(5);
        let mut state = m.initial_state();
        let mut seen = Vec::new();
        for _ in 0..30 {
            if m.is_terminal(&state) {
                break;
            }
            let mut joint = Vec::new();
            for r in 0..m.num_roles() {
                let mut legal = Vec::new();
                m.legal_moves(&state, r, &mut legal);
                for mv in legal.iter().chain(&seen) {
                    assert_eq!(m.is_legal(&state, r, mv), legal.contains(mv), "{name}");
                }
                seen.extend(legal.iter().cloned());
                joint.push(legal[rng.gen_range(0..legal.len())].clone());
            }
            state = m.next_state(&state, &joint);
        }
        assert!(!seen.is_empty(), "{name}");
    }
    for name in ["8puzzle", "lightsout", "hanoi", "tictactoe", "rps3"] {
        let game = gdl::load(&Path::new(PUZZLES).join(format!("{name}.kif"))).unwrap();
        for strategy in [Strategy::GoalDirected, Strategy::BottomUp] {
            check(&Prover::try_with(game.clone(), strategy).unwrap(), name);
        }
        check(&Propnet::new(game).unwrap(), name);
    }
}

/// A prover built with its static relations on demand has empty static
/// tables, which bottom-up evaluation would read as false (mummymaze1p: no
/// legal move at the start): it stays goal-directed whatever it is asked.
#[test]
fn a_prover_with_static_relations_on_demand_stays_goal_directed() {
    let game = gdl::load(&Path::new(CORPUS).join("mummymaze1p.kif")).unwrap();
    let p = Prover::try_lazy(game).unwrap();
    p.set_strategy(Strategy::BottomUp);
    assert_eq!(p.strategy(), Strategy::GoalDirected);
    let mut legal = Vec::new();
    p.legal_moves(&p.initial_state(), 0, &mut legal);
    assert_eq!(legal.len(), 5, "four directions and nowhere");
}

/// The allocation-free playout loop (which keeps the legal moves as sets updated
/// by propagation) plays only legal moves and ends where the state machine's own
/// methods say: its recorded joint moves are replayed and checked step by step.
#[test]
fn fast_playout_agrees_with_the_state_machine_methods() {
    let puzzles = [
        "tictactoe",
        "connect4",
        "rps3",
        "nim3",
        "8puzzle",
        "maze",
        "blocks",
    ]
    .map(|n| Path::new(PUZZLES).join(format!("{n}.kif")));
    // Corpus games whose legal moves are split by a turn guard, one of them
    // (checkers) with legal atoms that terminal reads too.
    let corpus = ["breakthrough", "checkers", "reversi", "pentagoSuicide"]
        .map(|n| Path::new(CORPUS).join(format!("{n}.kif")));
    for path in puzzles.iter().chain(&corpus) {
        let name = path.file_stem().unwrap().to_string_lossy();
        let game = gdl::load(path).expect("game loads");
        let net = Propnet::new(game).expect("game compiles");
        let roles = net.num_roles();
        for seed in 0..30 {
            let mut rng = StdRng::seed_from_u64(seed);
            let mut goals = Vec::new();
            let mut record = Vec::new();
            let init = net.initial_state();
            let limits = PlayoutLimits::steps(200);
            let fast = net.playout_recorded(&init, &mut rng, limits, &mut goals, Some(&mut record));
            assert_eq!(record.len(), fast.steps * roles, "{name} seed {seed}");
            let mut s = init;
            for (step, joint) in record.chunks(roles).enumerate() {
                assert!(
                    !net.is_terminal(&s),
                    "{name} seed {seed}: moved on from a terminal state"
                );
                for (r, m) in joint.iter().enumerate() {
                    assert!(
                        net.legal(&s, r).contains(m),
                        "{name} seed {seed} step {step}: illegal move for role {r}"
                    );
                }
                s = net.next_state(&s, joint);
            }
            assert_eq!(fast.terminal, net.is_terminal(&s), "{name} seed {seed}");
            let slow: Vec<Option<u8>> = (0..roles).map(|r| net.goal(&s, r)).collect();
            assert_eq!(goals, slow, "{name} seed {seed}");
        }
    }
}

/// A playout steered by a policy (MAST's, on the network's own loop) plays
/// what the same policy plays on the reference prover's generic loop: the
/// policy here picks, among the legal moves, the one whose term hashes
/// lowest with the step, so that both engines must offer the same moves for
/// the lines to agree.
#[test]
fn steered_playouts_agree_with_the_prover() {
    use std::hash::{Hash, Hasher};
    fn run<M: StateMachine>(m: &M, seed: u64) -> (Vec<String>, Vec<Option<u8>>, bool) {
        let mut step = 0u64;
        let mut pick = |_role: usize, legal: &[M::Move], _rng: &mut StdRng| {
            step += 1;
            let key = |mv: &M::Move| {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                (
                    seed,
                    step,
                    term_to_string(&m.move_term(mv), &m.game().symbols),
                )
                    .hash(&mut h);
                h.finish()
            };
            (0..legal.len())
                .min_by_key(|&i| key(&legal[i]))
                .expect("moves")
        };
        let mut rng = StdRng::seed_from_u64(seed);
        let (mut goals, mut record) = (Vec::new(), Vec::new());
        let p = m.playout_steered(
            &m.initial_state(),
            &mut rng,
            PlayoutLimits::steps(200),
            &mut goals,
            &mut record,
            &mut pick,
        );
        let line = record
            .iter()
            .map(|mv| term_to_string(&m.move_term(mv), &m.game().symbols))
            .collect();
        (line, goals, p.terminal)
    }
    let games = ["connect4", "tictactoe"]
        .map(|n| Path::new(PUZZLES).join(format!("{n}.kif")))
        .into_iter()
        .chain(
            ["breakthrough", "checkers", "3pConnectFour"]
                .map(|n| Path::new(CORPUS).join(format!("{n}.kif"))),
        );
    for path in games {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let game = gdl::load(&path).expect("game loads");
        let net = Propnet::new(game.clone()).expect("game compiles");
        let prover = Prover::new(game);
        for seed in 0..5 {
            let fast = run(&net, seed);
            assert!(!fast.0.is_empty(), "{name} seed {seed}: no moves played");
            assert_eq!(fast, run(&prover, seed), "{name} seed {seed}");
        }
    }
}

/// Several threads share one network; each gets what it would get alone.
#[test]
fn threads_share_one_network() {
    let game = gdl::load(&Path::new(PUZZLES).join("connect4.kif")).expect("loads");
    let net = Arc::new(Propnet::new(game).expect("compiles"));
    let run = |net: &Propnet, seed: u64| {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut goals = Vec::new();
        (0..200)
            .map(|_| {
                let limits = PlayoutLimits::steps(100);
                let p = net.playout(&net.initial_state(), &mut rng, limits, &mut goals);
                (p.steps, goals.clone())
            })
            .collect::<Vec<_>>()
    };
    let alone: Vec<_> = (0..4).map(|t| run(&net, t)).collect();
    let together: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|t| {
                let net = Arc::clone(&net);
                s.spawn(move || run(&net, t))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(alone, together);
}

/// A game whose relaxed grounding explodes (three free choices out of 300
/// numbers) while each real state stays tiny: the guard trips with a message
/// that says which limit, and `auto` serves the game with the prover.
#[test]
fn grounding_guard_trips_and_auto_falls_back_to_the_prover() {
    let mut kif = String::from(
        "(role p) (init (num 0)) (init (step 0))
         (<= (legal p (go ?y)) (true (num ?x)) (succ ?x ?y))
         (<= (next (num ?y)) (does p (go ?y)))
         (<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
         (<= (triple ?a ?b ?c) (true (num ?a)) (true (num ?b)) (true (num ?c)))
         (<= (goal p 100) (triple ?a ?a ?a))
         (<= terminal (true (step 3)))\n",
    );
    for i in 0..300 {
        kif.push_str(&format!("(succ {i} {})\n", i + 1));
    }
    let game = gdl::load_bytes(kif.as_bytes(), "explode.kif").expect("valid game");
    let limits = CompileLimits {
        ground: Limits {
            max_memory: 16 << 20,
            max_join_steps: 100_000_000,
            max_time: Duration::from_secs(20),
        },
        max_nodes: 100_000,
    };
    let err = Propnet::with_limits(game.clone(), &limits)
        .err()
        .expect("the guard trips");
    assert!(err.to_string().contains("grounding exceeds"), "{err}");

    let (machine, why) = AnyMachine::build(game, Engine::Auto).expect("the prover serves");
    // `triple` blows up and only `goal` reads it: a hybrid (the prover for
    // `goal`) or the prover alone, whichever a timed race finds faster.
    assert!(matches!(machine.name(), "prover" | "hybrid"), "{why}");
    assert!(why.contains("the propnet does not compile"), "{why}");
    assert!(
        why.contains("the propnet does not compile: grounding"),
        "{why}"
    );
}

#[test]
fn engine_choice_builds_the_propnet_when_it_compiles() {
    let game = gdl::load(&Path::new(PUZZLES).join("tictactoe.kif")).expect("loads");
    let (m, why) = AnyMachine::build(game.clone(), Engine::Auto).expect("builds");
    assert_eq!(m.name(), "propnet", "{why}");
    let (m, _) = AnyMachine::build(game, Engine::Prover).expect("builds");
    assert_eq!(m.name(), "prover");
}

/// solitaireChineseCheckers has a plan to 100 (so the solving target counts
/// it): the 47 moves of `tests/data/solitaireChineseCheckers.solution`, found
/// by `tools/solitaire_beam.py` (a game-specific beam search outside
/// ggp-asp), lead the prover and the propnet, in lockstep, to the
/// same terminal state with goal 100; a long line of jump chains through a
/// crowded board, which random playouts do not reach.
#[test]
fn a_plan_found_elsewhere_reaches_100_on_both_engines() {
    let path = common::corpus_game("solitaireChineseCheckers");
    let game = gdl::load(&path).expect("the game loads");
    let plan: Vec<gdl::Term> = common::solution("solitaireChineseCheckers")
        .iter()
        .map(|l| {
            gdl::parser::parse_ground_terms(l, &game.symbols)
                .expect("a joint move")
                .remove(0)
        })
        .collect();
    assert_eq!(plan.len(), 47);
    let prover = Prover::new(game.clone());
    let net = Propnet::new(game).expect("the game compiles");
    let (mut s, mut t) = (prover.initial_state(), net.initial_state());
    for (step, mv) in plan.iter().enumerate() {
        assert!(!prover.is_terminal(&s), "step {step}: terminal too early");
        let a = prover.parse_move(mv).expect("a move of the game");
        let b = net.parse_move(mv).expect("a move of the game");
        assert!(prover.legal(&s, 0).contains(&a), "step {step}: illegal");
        assert!(
            net.legal(&t, 0).contains(&b),
            "step {step}: illegal (propnet)"
        );
        s = prover.next_state(&s, &[a]);
        t = net.next_state(&t, &[b]);
        assert_eq!(
            texts(prover.game(), prover.fluents(&s)),
            texts(net.game(), net.fluents(&t)),
            "step {step}"
        );
    }
    assert!(prover.is_terminal(&s) && net.is_terminal(&t));
    assert_eq!(prover.goal(&s, 0), Some(100));
    assert_eq!(net.goal(&t, 0), Some(100));
}

/// The goal-directed prover (calls with the arguments known, tabled per
/// state) walks in lockstep with the bottom-up prover on every corpus game
/// both build: same states, terminal flags, goals and legal moves.
#[test]
fn goal_directed_prover_agrees_with_bottom_up_on_the_corpus() {
    let mut files = kif_files(Path::new(CORPUS));
    files.extend(kif_files(&Path::new(CORPUS).join("tests")));
    files.extend(kif_files(Path::new(PUZZLES)));
    let verdicts = run_all(&files, |f| {
        let Ok(game) = gdl::load(f) else {
            return Verdict::Defective("does not load".into());
        };
        let (Ok(bottom_up), Ok(goal_directed)) = (
            Prover::try_with(game.clone(), Strategy::BottomUp),
            Prover::try_with(game, Strategy::GoalDirected),
        ) else {
            return Verdict::TooBig("static relations too large".into());
        };
        // Bounded like the engines' trials: some games' rules as written
        // take one strategy or the other a very long time per state.
        let work = 20_000_000;
        let walked = bottom_up.bounded(work, |b| {
            goal_directed.bounded(work, |g| {
                compare(b, g, 3, 60, 7, Duration::from_millis(400))
            })
        });
        match walked {
            Some(Some(Ok(o))) => Verdict::Compared(o.states),
            Some(Some(Err(e))) => Verdict::Failed(e),
            _ => Verdict::TooBig("a walk ran out of work".into()),
        }
    });
    let Tally {
        compared,
        states,
        too_big: skipped,
        failures,
        ..
    } = Tally::of(&verdicts);
    eprintln!(
        "compared {compared} games ({states} states); skipped: {}",
        skipped.join(", ")
    );
    assert!(
        failures.is_empty(),
        "{} game(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(compared >= 400, "only {compared} games were compared");
}

/// Sure wins (moves the rules make a win wherever they are legal) are read
/// off the network's gates: breakthrough's moves onto the far row, 22 a
/// side (8 columns, each entered from 3 columns but at the edges); none in
/// connect four or tic-tac-toe, which no single fluent ends. Each one named
/// is a win on the reference prover in every state of seeded random
/// playouts where it is legal, on every corpus game of the breakthrough and
/// checkers families that has any.
#[test]
fn sure_wins_are_found_and_are_wins_on_the_prover() {
    let load = |name: &str| {
        let path = Path::new(CORPUS).join(format!("{name}.kif"));
        let game = gdl::load(&path).expect("game loads");
        (Propnet::new(game.clone()).expect("compiles"), game)
    };
    let (net, _) = load("breakthrough");
    for (r, row) in [(0, "8"), (1, "1")] {
        let wins: Vec<String> = net
            .sure_wins(r)
            .iter()
            .map(|m| term_to_string(&net.move_term(m), &net.game().symbols))
            .collect();
        assert_eq!(wins.len(), 22, "role {r}: {wins:?}");
        for w in &wins {
            let parts: Vec<&str> = w.trim_matches(['(', ')']).split(' ').collect();
            assert_eq!(parts[4], row, "role {r}: {w} does not reach the far row");
        }
    }
    for name in ["connectFour", "ticTacToe"] {
        let (net, _) = load(name);
        for r in 0..net.num_roles() {
            assert!(net.sure_wins(r).is_empty(), "{name} role {r}");
        }
    }
    let mut checked = 0;
    for name in [
        "breakthrough",
        "breakthroughSmall",
        "breakthroughWalls",
        "breakthroughSuicideSmall",
        "checkers",
        "checkersSmall",
    ] {
        let (net, game) = load(name);
        let wins: Vec<Vec<String>> = (0..net.num_roles())
            .map(|r| {
                net.sure_wins(r)
                    .iter()
                    .map(|m| term_to_string(&net.move_term(m), &game.symbols))
                    .collect()
            })
            .collect();
        if wins.iter().all(Vec::is_empty) {
            continue;
        }
        let prover = Prover::new(game.clone());
        let mut rng = StdRng::seed_from_u64(7);
        for _ in 0..10 {
            let mut state = prover.initial_state();
            let mut steps = 0;
            while !prover.is_terminal(&state) && steps < 200 {
                let legal: Vec<Vec<_>> = (0..prover.num_roles())
                    .map(|r| {
                        let mut out = Vec::new();
                        prover.legal_moves(&state, r, &mut out);
                        out
                    })
                    .collect();
                for r in 0..prover.num_roles() {
                    for mv in &legal[r] {
                        let text = term_to_string(&prover.move_term(mv), &game.symbols);
                        if !wins[r].contains(&text) {
                            continue;
                        }
                        let mut joint: Vec<_> = legal.iter().map(|l| l[0]).collect();
                        joint[r] = *mv;
                        let next = prover.next_state(&state, &joint);
                        assert!(
                            prover.is_terminal(&next),
                            "{name}: {text} does not end the game"
                        );
                        assert_eq!(prover.goal(&next, r), Some(100), "{name}: {text} is no win");
                        checked += 1;
                    }
                }
                let joint: Vec<_> = legal.iter().map(|l| l[rng.gen_range(0..l.len())]).collect();
                state = prover.next_state(&state, &joint);
                steps += 1;
            }
        }
    }
    assert!(checked > 0, "no sure win was ever legal in a playout");
}

/// Playouts asked to take sure wins take one whenever one is legal, so a
/// breakthrough playout ends the move a pawn can reach the far row; the
/// moves replayed on the prover say so.
#[test]
fn playouts_take_sure_wins() {
    let path = Path::new(CORPUS).join("breakthrough.kif");
    let game = gdl::load(&path).expect("game loads");
    let net = Propnet::new(game.clone()).expect("compiles");
    let prover = Prover::new(game.clone());
    let limits = PlayoutLimits {
        sure_wins: true,
        ..PlayoutLimits::steps(500)
    };
    let mut rng = StdRng::seed_from_u64(3);
    let (mut goals, mut record) = (Vec::new(), Vec::new());
    let roles = net.num_roles();
    for _ in 0..20 {
        record.clear();
        let p = net.playout_recorded(
            &net.initial_state(),
            &mut rng,
            limits,
            &mut goals,
            Some(&mut record),
        );
        assert!(p.terminal);
        let mut state = prover.initial_state();
        for joint in record.chunks(roles) {
            let moves: Vec<_> = joint
                .iter()
                .map(|m| {
                    prover
                        .parse_move(&net.move_term(m))
                        .expect("a move of the game")
                })
                .collect();
            for (r, played) in joint.iter().enumerate() {
                let mut legal = Vec::new();
                prover.legal_moves(&state, r, &mut legal);
                let has_win = legal.iter().any(|m| {
                    net.sure_wins(r)
                        .contains(&net.parse_move(&prover.move_term(m)).unwrap())
                });
                if has_win {
                    assert!(
                        net.sure_wins(r).contains(played),
                        "role {r} had a sure win and played {}",
                        term_to_string(&net.move_term(played), &game.symbols)
                    );
                }
            }
            state = prover.next_state(&state, &moves);
        }
        assert!(prover.is_terminal(&state));
    }
}
