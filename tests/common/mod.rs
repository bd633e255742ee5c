//! Helpers shared by the integration tests: loading our puzzles, reading moves
//! and joint moves as KIF, replaying plans and exploring small games exhaustively.

#![allow(dead_code)]

pub mod lockstep;
pub mod service;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use ggp_asp::gdl::{self, parser::parse_ground_terms};
use ggp_asp::reasoner::{Prover, StateMachine};

pub type State = <Prover as StateMachine>::State;
pub type Move = <Prover as StateMachine>::Move;

pub fn puzzle_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("puzzles")
        .join(format!("{name}.kif"))
}

/// The corpus of public games the tests are run on, beside the checkout.
pub const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/games");

/// A file of the corpus (`name` with its extension, relative to [`CORPUS`]).
/// A missing corpus fails the test that needs it, saying where it was looked
/// for: a test that passed without its games would prove nothing.
pub fn corpus_file(name: &str) -> PathBuf {
    let p = PathBuf::from(CORPUS).join(name);
    assert!(
        p.exists(),
        "{} is missing: the tests need the GDL corpus at ../shared/games beside the \
         checkout (see README.md)",
        p.display()
    );
    p
}

/// A game of the corpus by its name (without `.kif`); see [`corpus_file`].
pub fn corpus_game(name: &str) -> PathBuf {
    corpus_file(&format!("{name}.kif"))
}

/// The corpus manifest's `problems` column by file (relative to [`CORPUS`],
/// e.g. `tests/x.kif`), for the files that have one.
pub fn manifest_problems() -> HashMap<String, String> {
    let text = std::fs::read_to_string(corpus_file("manifest.tsv")).expect("manifest.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("manifest header").split('\t').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("manifest column {name}"))
    };
    let (file, problems) = (col("file"), col("problems"));
    lines
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|f| f.len() > problems)
        .map(|f| (f[file].to_string(), f[problems].to_string()))
        .collect()
}

pub fn data_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("data")
        .join(name)
}

/// The reference prover for one of our puzzles.
pub fn prover(name: &str) -> Prover {
    let path = puzzle_path(name);
    let game =
        gdl::load(&path).unwrap_or_else(|e| panic!("{} does not load:\n{e}", path.display()));
    Prover::new(game)
}

/// A joint move from KIF text such as `((mark 1 1) noop)`.
pub fn joint(m: &Prover, text: &str) -> Vec<Move> {
    let terms =
        parse_ground_terms(text, &m.game().symbols).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(terms.len(), m.num_roles(), "{text}: one move per role");
    terms
        .iter()
        .map(|t| {
            m.parse_move(t)
                .unwrap_or_else(|| panic!("{text}: not a move"))
        })
        .collect()
}

/// The legal moves of `role` as sorted KIF text.
pub fn legal_text(m: &Prover, state: &State, role: usize) -> Vec<String> {
    let mut v: Vec<String> = m
        .legal(state, role)
        .iter()
        .map(|mv| gdl::print::term_to_string(&m.move_term(mv), &m.game().symbols))
        .collect();
    v.sort();
    v
}

/// Plays joint moves (KIF text) from the initial state, checking at each step that
/// the state is not terminal and every move is legal; returns the final state.
pub fn play(m: &Prover, moves: &[&str]) -> State {
    let mut state = m.initial_state();
    for (step, text) in moves.iter().enumerate() {
        assert!(
            !m.is_terminal(&state),
            "step {step}: terminal before {text}"
        );
        let j = joint(m, text);
        for (r, mv) in j.iter().enumerate() {
            assert!(
                m.legal(&state, r).contains(mv),
                "step {step}: {text} is not legal for role {r}"
            );
        }
        state = m.next_state(&state, &j);
    }
    state
}

/// The joint moves of a solution file: one per line, `;` comments and blank lines skipped.
pub fn solution(name: &str) -> Vec<String> {
    let path = data_path(&format!("{name}.solution"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| l.split(';').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// The optimum of one of our puzzles (moves to goal 100): the length of the
/// shortest solution that `tools/optimum.py` found on its own model of the
/// puzzle and wrote to `tests/data/NAME.solution`.
pub fn optimum(name: &str) -> usize {
    solution(name).len()
}

/// Every joint move of `state`: the product of the roles' legal moves.
pub fn joint_moves(m: &Prover, state: &State) -> Vec<Vec<Move>> {
    let mut out: Vec<Vec<Move>> = vec![Vec::new()];
    for r in 0..m.num_roles() {
        let legal = m.legal(state, r);
        out = out
            .iter()
            .flat_map(|prefix| {
                legal.iter().map(move |mv| {
                    let mut j = prefix.clone();
                    j.push(*mv);
                    j
                })
            })
            .collect();
    }
    out
}

/// What a breadth-first walk over every reachable state found.
pub struct Exploration {
    pub states: usize,
    pub terminals: usize,
    /// The greatest number of joint moves to any reachable state.
    pub depth: usize,
    /// Rule problems: a state and what is wrong with it.
    pub problems: Vec<String>,
    /// For one-player games: the fewest moves to a terminal state with goal 100.
    pub shortest_win: Option<usize>,
    /// For one-player games: the best goal at any reachable terminal state.
    pub best_goal: Option<u8>,
}

/// Visits every reachable state (at most `limit`), checking that each role has a
/// legal move in every non-terminal state and exactly one goal value in every
/// terminal state.
pub fn explore(m: &Prover, limit: usize) -> Exploration {
    let init = m.initial_state();
    let mut depth: HashMap<State, usize> = HashMap::from([(init.clone(), 0)]);
    let mut queue = VecDeque::from([init]);
    let mut ex = Exploration {
        states: 0,
        terminals: 0,
        depth: 0,
        problems: Vec::new(),
        shortest_win: None,
        best_goal: None,
    };
    while let Some(s) = queue.pop_front() {
        ex.states += 1;
        assert!(ex.states <= limit, "more than {limit} reachable states");
        let d = depth[&s];
        ex.depth = ex.depth.max(d);
        if m.is_terminal(&s) {
            ex.terminals += 1;
            for r in 0..m.num_roles() {
                let v = m.goal_values(&s, r);
                if v.len() != 1 {
                    ex.problems.push(format!(
                        "terminal state at depth {d}, role {r}: goal values {v:?}"
                    ));
                }
            }
            if m.num_roles() == 1 {
                let g = m.goal(&s, 0);
                ex.best_goal = ex.best_goal.max(g);
                if g == Some(100) && ex.shortest_win.is_none() {
                    ex.shortest_win = Some(d);
                }
            }
            continue;
        }
        for r in 0..m.num_roles() {
            if m.legal(&s, r).is_empty() {
                ex.problems.push(format!(
                    "non-terminal state at depth {d}: role {r} has no legal move"
                ));
            }
        }
        for j in joint_moves(m, &s) {
            let t = m.next_state(&s, &j);
            if !depth.contains_key(&t) {
                depth.insert(t.clone(), d + 1);
                queue.push_back(t);
            }
        }
    }
    ex
}

/// The value of `state` for `role` in a two-player turn-taking zero-sum game, by
/// minimax with memoisation. In such a game at most one role has a choice in a
/// state; `role` maximises when it has the choice, its opponent minimises.
pub fn minimax(m: &Prover, state: &State, role: usize, memo: &mut HashMap<State, u8>) -> u8 {
    if let Some(&v) = memo.get(state) {
        return v;
    }
    let v = if m.is_terminal(state) {
        m.goal(state, role)
            .expect("one goal value at a terminal state")
    } else {
        let choosers = (0..m.num_roles())
            .filter(|&r| m.legal(state, r).len() > 1)
            .count();
        assert!(choosers <= 1, "minimax needs a turn-taking game");
        let maximise = m.legal(state, role).len() > 1;
        let values = joint_moves(m, state)
            .into_iter()
            .map(|j| minimax(m, &m.next_state(state, &j), role, memo));
        if maximise {
            values.max().expect("a legal move")
        } else {
            values.min().expect("a legal move")
        }
    };
    memo.insert(state.clone(), v);
    v
}

/// Waits for `child` to end, or kills it once it has used `cpu` of CPU time
/// (then `None`). A budget of CPU time, not of the wall clock, so that a test
/// stops a child after the same work on a machine shared with busy
/// processes as on an idle one; `wall` only guards against a child that
/// hangs without working.
pub fn wait_cpu(child: &mut Child, cpu: Duration, wall: Duration) -> Option<ExitStatus> {
    let started = Instant::now();
    loop {
        if let Some(st) = child.try_wait().expect("wait for the child") {
            return Some(st);
        }
        let used = ggp_asp::cputime::of_process(child.id()).unwrap_or_default();
        if used > cpu || started.elapsed() > wall {
            child.kill().ok();
            child.wait().ok();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether the stock `clingo` executable is on PATH (Debian package gringo).
pub fn clingo_available() -> bool {
    Command::new("clingo").arg("--version").output().is_ok()
}

/// Runs the stock `clingo` on a program; the moves of its last (optimal) answer.
pub fn stock_clingo_plan(program: &str) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("ggp-asp-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("p{}.lp", program.len()));
    std::fs::write(&file, program).unwrap();
    let out = Command::new("clingo")
        .arg(&file)
        .arg("--outf=0")
        .arg("--quiet=1")
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("SATISFIABLE") || text.contains("OPTIMUM FOUND"),
        "{text}"
    );
    let answer = text
        .lines()
        .skip_while(|l| !l.starts_with("Answer"))
        .nth(1)
        .unwrap_or_else(|| panic!("no answer: {text}"));
    answer
        .split_whitespace()
        .filter(|a| a.starts_with("does("))
        .map(str::to_string)
        .collect()
}
