//! The `ggp-asp` binary on bad input and the `simulate --trace` format: every bad
//! input gets a clear message on stderr and a non-zero exit, never a panic or a
//! hang; traces have the documented line shapes.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

struct Output {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the binary; a run longer than `limit` is killed and fails the test as a hang.
fn run_for(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ggp-asp"))
        .env("GGP_ASP_STORE", "off")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // Read both pipes on threads so that a large output cannot block the child.
    let mut out_pipe = child.stdout.take().expect("stdout");
    let mut err_pipe = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut s = Vec::new();
        out_pipe.read_to_end(&mut s).map(|_| s)
    });
    let err = std::thread::spawn(move || {
        let mut s = Vec::new();
        err_pipe.read_to_end(&mut s).map(|_| s)
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if start.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            panic!("ggp-asp {args:?} still ran after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = String::from_utf8_lossy(&out.join().unwrap().expect("read stdout")).into_owned();
    let stderr = String::from_utf8_lossy(&err.join().unwrap().expect("read stderr")).into_owned();
    Output {
        code: status.code(),
        stdout,
        stderr,
    }
}

fn run(args: &[&str]) -> Output {
    run_for(args, Duration::from_secs(60))
}

/// A bad input: non-zero exit, no panic, and stderr says each of `expect`.
fn assert_fails(o: &Output, expect: &[&str]) {
    assert!(!o.stderr.contains("panicked"), "panic:\n{}", o.stderr);
    assert!(
        o.code.is_some_and(|c| c != 0),
        "exit {:?}; stderr:\n{}",
        o.code,
        o.stderr
    );
    for e in expect {
        assert!(o.stderr.contains(e), "stderr lacks {e:?}:\n{}", o.stderr);
    }
}

/// A fresh directory for one test's files, removed when dropped (also when the
/// test fails, so a failed run leaves no 50 MB file behind).
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!("ggp-asp-cli-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&d).expect("temp dir");
        TempDir(d)
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write");
    p.to_string_lossy().into_owned()
}

const VALID: &str = "(role player)
(init (count 0))
(<= (legal player inc) (true (count ?n)))
(<= (next (count ?m)) (does player inc) (true (count ?n)) (succ ?n ?m))
(<= terminal (true (count 2)))
(<= (goal player 100) (true (count 2)))
(<= (goal player 0) (not (true (count 2))))
(succ 0 1) (succ 1 2)
";

#[test]
fn missing_file() {
    for cmd in ["check", "simulate"] {
        let o = run(&[cmd, "/nonexistent/no-such-game.kif"]);
        assert_fails(&o, &["/nonexistent/no-such-game.kif", "cannot read"]);
    }
}

#[test]
fn bad_files_get_a_message_with_position() {
    let dir = TempDir::new("bad");
    let cases: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
        ("empty.kif", Vec::new(), vec!["empty.kif:1:1", "empty"]),
        (
            "open.kif",
            VALID.replace("(succ 1 2)", "(succ 1 2").into_bytes(),
            vec!["open.kif:8:12", "unbalanced '('"],
        ),
        (
            "close.kif",
            VALID.replace("(succ 1 2)", "(succ 1 2))").into_bytes(),
            vec!["close.kif:8:22", "unbalanced ')'"],
        ),
        (
            "utf8.kif",
            [VALID.as_bytes(), b"(f \xc3\x28)\n"].concat(),
            vec!["utf8.kif:9:4", "invalid UTF-8"],
        ),
        (
            "unbound.kif",
            VALID
                .replace("(legal player inc)", "(legal player (jump ?far))")
                .into_bytes(),
            vec![
                "unbound.kif:3:1",
                "unsafe rule",
                "?far",
                "the rule has no reading",
                "in rule: (<= (legal player (jump ?far))",
            ],
        ),
        (
            "notrec.kif",
            format!("{VALID}(<= (odd ?m) (succ ?n ?m) (not (odd ?n)))\n").into_bytes(),
            vec!["notrec.kif:9:1", "recursion through 'not'"],
        ),
        (
            "noroles.kif",
            VALID.replace("(role player)", "").into_bytes(),
            vec!["noroles.kif:1:1", "no roles"],
        ),
        (
            "comment.kif",
            format!("{VALID}#| unterminated").into_bytes(),
            vec!["comment.kif:9:1", "unterminated block comment"],
        ),
    ];
    for (name, bytes, expect) in cases {
        let path = write(&dir, name, &bytes);
        for cmd in ["check", "simulate"] {
            let o = run(&[cmd, &path]);
            assert_fails(&o, &expect);
        }
    }
}

#[test]
fn check_reports_every_file_and_fails_if_one_fails() {
    let dir = TempDir::new("several");
    let good = write(&dir, "good.kif", VALID.as_bytes());
    let bad = write(&dir, "bad.kif", b"(role");
    let o = run(&["check", &good, &bad]);
    assert_fails(&o, &["bad.kif:1:1"]);
    assert!(o.stdout.contains("good.kif: ok"), "{}", o.stdout);
    let o = run(&["check", &good]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stdout.contains("roles: player"), "{}", o.stdout);
}

#[test]
fn fifty_megabytes_of_facts() {
    let dir = TempDir::new("big");
    let mut text = String::from(VALID);
    let mut n = 0u64;
    while text.len() < 50 << 20 {
        text.push_str(&format!("(fact {n} item{} (pair {} x))\n", n % 97, n % 13));
        n += 1;
    }
    let path = write(&dir, "big.kif", text.as_bytes());
    drop(text);
    // Either outcome is fine as long as it is clean and bounded in time.
    let o = run_for(&["check", &path], Duration::from_secs(300));
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
    match o.code {
        Some(0) => assert!(
            o.stdout.contains(&format!("({} facts)", n + 4)),
            "{}",
            o.stdout
        ),
        Some(_) => assert!(o.stderr.contains("big.kif"), "{}", o.stderr),
        None => panic!("killed by a signal: {}", o.stderr),
    }
}

#[test]
fn deep_nesting_is_refused_cleanly() {
    let dir = TempDir::new("deep");
    let text = format!(
        "(role p)\n(init {}x{})\n",
        "(f ".repeat(100_000),
        ")".repeat(100_000)
    );
    let path = write(&dir, "deep.kif", text.as_bytes());
    let o = run(&["check", &path]);
    assert_fails(&o, &["deep.kif:2:", "nested deeper"]);
}

#[test]
fn simulate_names_the_step_and_role_without_a_legal_move() {
    let dir = TempDir::new("nolegal");
    // After two moves the game is not over, but `legal` needs (count 0) or (count 1).
    let text = "(role player)
(init (count 0))
(<= (legal player inc) (true (count 0)))
(<= (legal player inc) (true (count 1)))
(<= (next (count ?m)) (does player inc) (true (count ?n)) (succ ?n ?m))
(<= terminal (true (count 3)))
(<= (goal player 100) (true (count 3)))
(<= (goal player 0) (not (true (count 3))))
(succ 0 1) (succ 1 2) (succ 2 3)
";
    let path = write(&dir, "stuck.kif", text.as_bytes());
    assert_eq!(
        run(&["check", &path]).code,
        Some(0),
        "the rules themselves are valid"
    );
    let o = run(&["simulate", &path, "--playouts", "5"]);
    assert_fails(&o, &["step 2", "role player has no legal move"]);
    let o = run(&["simulate", &path, "--trace"]);
    assert_fails(&o, &["step 2", "role player has no legal move"]);
}

fn trace_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

#[test]
fn trace_format() {
    let path = common::puzzle_path("tictactoe");
    let o = run(&[
        "simulate",
        path.to_str().unwrap(),
        "--trace",
        "--playouts",
        "3",
        "--seed",
        "7",
    ]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let lines = trace_lines(&o.stdout);
    assert_eq!(lines[0], serde_json::json!({"roles": ["x", "o"]}));
    let (mut ends, mut expected_step) = (0, 0);
    for l in &lines[1..] {
        let playout = l["playout"].as_u64().expect("playout number");
        assert_eq!(playout, ends, "playouts in order: {l}");
        if l.get("end").is_some() {
            assert_eq!(l["end"], "terminal");
            assert_eq!(l["steps"].as_u64(), Some(expected_step - 1), "{l}");
            ends += 1;
            expected_step = 0;
            continue;
        }
        assert_eq!(l["step"].as_u64(), Some(expected_step), "{l}");
        expected_step += 1;
        let state: Vec<&str> = l["state"]
            .as_array()
            .expect("state")
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        let mut sorted = state.clone();
        sorted.sort();
        assert_eq!(state, sorted, "fluents sorted");
        assert_eq!(state.iter().filter(|f| f.starts_with("(cell")).count(), 9);
        let terminal = l["terminal"].as_bool().expect("terminal flag");
        let legal = l["legal"].as_object().expect("legal per role");
        assert_eq!(legal.keys().collect::<Vec<_>>(), ["o", "x"]);
        let goals = l["goals"].as_object().expect("goals per role");
        assert!(goals
            .values()
            .all(|g| g.is_null() || g.as_u64().is_some_and(|v| v <= 100)));
        if terminal {
            assert!(l["joint"].is_null());
            assert!(
                goals.values().all(|g| g.is_u64()),
                "one goal each at the end: {l}"
            );
        } else {
            let joint = l["joint"].as_array().expect("joint move");
            assert_eq!(joint.len(), 2);
            for (role, mv) in ["x", "o"].iter().zip(joint) {
                assert!(
                    legal[*role].as_array().unwrap().contains(mv),
                    "{mv} legal for {role}"
                );
            }
        }
    }
    assert_eq!(ends, 3);
    // Same seed, same trace.
    let again = run(&[
        "simulate",
        path.to_str().unwrap(),
        "--trace",
        "--playouts",
        "3",
        "--seed",
        "7",
    ]);
    assert_eq!(again.stdout, o.stdout);
}

#[test]
fn trace_stops_at_max_steps() {
    let path = common::puzzle_path("8puzzle");
    let o = run(&[
        "simulate",
        path.to_str().unwrap(),
        "--trace",
        "--playouts",
        "1",
        "--max-steps",
        "3",
    ]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let lines = trace_lines(&o.stdout);
    assert_eq!(lines.len(), 1 + 4 + 1);
    assert_eq!(lines[4]["step"], 3);
    assert!(lines[4]["joint"].is_null());
    assert_eq!(
        lines[5],
        serde_json::json!({"playout": 0, "end": "max-steps", "steps": 3})
    );
}

#[test]
fn replay_of_a_solution() {
    let game = common::puzzle_path("hanoi");
    let plan = common::data_path("hanoi.solution");
    let o = run(&[
        "simulate",
        game.to_str().unwrap(),
        "--trace",
        "--replay",
        plan.to_str().unwrap(),
    ]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let lines = trace_lines(&o.stdout);
    let last = &lines[lines.len() - 2];
    assert_eq!(last["step"], 31);
    assert_eq!(last["terminal"], true);
    assert_eq!(last["goals"]["player"], 100);
    assert_eq!(
        lines[lines.len() - 1],
        serde_json::json!({"playout": 0, "end": "terminal", "steps": 31})
    );
}

#[test]
fn replay_errors_name_the_step_or_line() {
    let dir = TempDir::new("replay");
    let game = common::puzzle_path("tictactoe");
    let game = game.to_str().unwrap();
    // The third joint move marks a square that is already taken.
    let illegal = write(
        &dir,
        "illegal.txt",
        b"((mark 1 1) noop)\n(noop (mark 2 2))\n((mark 1 1) noop)\n",
    );
    let o = run(&["simulate", game, "--trace", "--replay", &illegal]);
    assert_fails(&o, &["step 2", "(mark 1 1)", "role x", "not legal"]);
    let wrong_count = write(&dir, "count.txt", b"; comment line\n((mark 1 1))\n");
    let o = run(&["simulate", game, "--trace", "--replay", &wrong_count]);
    assert_fails(&o, &["line 2", "1 move(s) for 2 role(s)"]);
    let unknown = write(
        &dir,
        "unknown.txt",
        b"((mark 1 1) noop)\n(noop (paint 2 2))\n",
    );
    let o = run(&["simulate", game, "--trace", "--replay", &unknown]);
    assert_fails(&o, &["line 2", "paint"]);
    let garbage = write(&dir, "garbage.txt", b"((mark 1 1) noop\n");
    let o = run(&["simulate", game, "--trace", "--replay", &garbage]);
    assert_fails(&o, &["line 1"]);
    let o = run(&[
        "simulate",
        game,
        "--trace",
        "--replay",
        "/nonexistent/plan.txt",
    ]);
    assert_fails(&o, &["/nonexistent/plan.txt"]);
}

/// One JSON object per line of stdout.
fn json_rows(o: &Output) -> Vec<Value> {
    o.stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON row"))
        .collect()
}

/// `bench playouts` and `bench search` take lists of thread counts: a row
/// each, with the speed-up over the first count.
#[test]
fn benches_take_lists_of_thread_counts() {
    let path = common::puzzle_path("tictactoe");
    let game = path.to_str().expect("a UTF-8 path");
    let o = run(&[
        "bench",
        "playouts",
        game,
        "--engine",
        "propnet",
        "--seconds",
        "0.1",
        "--threads",
        "1,2",
        "--json",
    ]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let rows = json_rows(&o);
    let threads: Vec<u64> = rows
        .iter()
        .map(|r| r["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, [1, 2]);
    assert_eq!(rows[0]["speedup"].as_f64(), Some(1.0));
    assert!(rows[1]["speedup"].as_f64().is_some_and(|s| s > 0.0));
    let o = run(&[
        "bench",
        "search",
        game,
        "--seconds",
        "0.1",
        "--threads",
        "1,2",
        "--enhance",
        "rave",
        "--json",
    ]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let rows = json_rows(&o);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["threads"].as_u64(), Some(2));
    assert_eq!(rows[0]["enhancements"].as_str(), Some("rave"));
    // The CPU time of the search per iteration, all threads together.
    for r in &rows {
        assert!(
            r["cpu_us_per_iteration"].as_f64().is_some_and(|c| c > 0.0),
            "{r}"
        );
    }
}

/// `bench search --model` scores the leaves by a learned model (or mixes it
/// with the playouts by `--mix`), and refuses a model of other rules and a
/// weight outside 0..1 with a message.
#[test]
fn bench_search_takes_a_learned_model() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let model = dir.path().join("ttt.json");
    let model = model.to_str().expect("a UTF-8 path");
    let path = common::puzzle_path("tictactoe");
    let game = path.to_str().expect("a UTF-8 path");
    let o = run(&[
        "learn",
        game,
        "--out",
        model,
        "--seconds",
        "3",
        "--examples",
        "300",
    ]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let search = |extra: &[&str]| {
        let mut args = vec!["bench", "search", game, "--seconds", "0.1", "--json"];
        args.extend_from_slice(extra);
        run(&args)
    };
    for (extra, how) in [
        (vec!["--model", model], "at the leaves"),
        (vec!["--model", model, "--mix", "0.5"], "mixed at 0.5"),
    ] {
        let o = search(&extra);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        let rows = json_rows(&o);
        assert_eq!(rows[0]["model"].as_str(), Some(how), "{extra:?}");
        assert!(rows[0]["iterations"].as_u64().is_some_and(|n| n > 0));
    }
    assert_fails(
        &search(&["--model", model, "--mix", "2"]),
        &["between 0 and 1"],
    );
    let other = common::puzzle_path("nim");
    let o = run(&[
        "bench",
        "search",
        other.to_str().expect("a UTF-8 path"),
        "--seconds",
        "0.1",
        "--model",
        model,
    ]);
    assert_fails(&o, &["other rules"]);
}

/// Without the `mpi` feature, `--cluster` says how to get it instead of
/// searching alone as if it were a cluster.
#[cfg(not(feature = "mpi"))]
#[test]
fn cluster_without_mpi_says_how_to_build_it() {
    let path = common::puzzle_path("tictactoe");
    let o = run(&[
        "bench",
        "search",
        path.to_str().expect("a UTF-8 path"),
        "--cluster",
    ]);
    assert_ne!(o.code, Some(0));
    assert!(o.stderr.contains("--features mpi"), "{}", o.stderr);
}

/// A reader that stops early (`| head`) ends the command without a panic
/// (`check` over the corpus prints lines for every game).
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::io::{BufRead, BufReader};
    let mut files: Vec<String> = std::fs::read_dir(common::CORPUS)
        .expect("the corpus")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "kif"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    files.sort();
    files.truncate(60);
    let mut child = Command::new(env!("CARGO_BIN_EXE_ggp-asp"))
        .env("GGP_ASP_STORE", "off")
        .arg("check")
        .args(&files)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("a first line");
    drop(out);
    let o = child.wait_with_output().expect("ends");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Log lines written to a pipe (a log file, `2>&1 | tee`) carry no colour
/// codes, whatever NO_COLOR says.
#[test]
fn logs_to_a_pipe_carry_no_colour_codes() {
    let game = common::puzzle_path("tictactoe");
    let o = Command::new(env!("CARGO_BIN_EXE_ggp-asp"))
        .env("GGP_ASP_STORE", "off")
        .args(["match", &game.to_string_lossy(), "--json"])
        .args(["--player", "random", "--player", "random"])
        .env("RUST_LOG", "info")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    assert_eq!(o.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("INFO") && stderr.contains("engine:"),
        "{stderr}"
    );
    assert!(!stderr.contains("\x1b["), "{stderr:?}");
}

/// The subcommands a `--help` text lists under "Commands:" (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The duration flags of a command's `--help` (`--NAME <SECONDS>` or
/// `--NAME <MS>`), each with its value name, and an argument for each
/// positional of its usage line.
fn duration_flags(help: &str, game: &str) -> (Vec<(String, String)>, Vec<String>) {
    let mut flags = Vec::new();
    for line in help.lines() {
        let mut words = line.split_whitespace();
        while let Some(w) = words.next() {
            if !w.starts_with("--") {
                continue;
            }
            if let Some(v @ ("<SECONDS>" | "<MS>")) = words.next() {
                flags.push((w.to_string(), v.to_string()));
            }
            break;
        }
    }
    let usage = help
        .lines()
        .find_map(|l| l.strip_prefix("Usage: "))
        .expect("a usage line");
    let mut positionals = Vec::new();
    let mut after_option = false;
    for w in usage.split_whitespace() {
        // `<GAME>` or `<GAMES>...`, not a group such as `<--a <A>|--b>`.
        let name = w.trim_end_matches("...");
        let plain = name.len() > 2
            && name.starts_with('<')
            && name.ends_with('>')
            && name[1..name.len() - 1]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        if plain && !after_option {
            positionals.push(game.to_string());
        }
        after_option = w.starts_with("--");
    }
    (flags, positionals)
}

/// Every duration flag of every command, found from the `--help` texts,
/// refuses a negative value, NaN, infinity, an absurdly large value and
/// (in seconds) zero with one line on stderr and exit code 2, before any
/// work starts.
#[test]
fn every_duration_flag_refuses_bad_values_in_one_line() {
    let game = common::puzzle_path("maze");
    let game = game.to_str().expect("a UTF-8 path");
    let mut commands: Vec<Vec<String>> = subcommands(&run(&["--help"]).stdout)
        .into_iter()
        .map(|c| vec![c])
        .collect();
    let mut walked = 0;
    let mut tried = Vec::new();
    while let Some(cmd) = commands.pop() {
        let mut args: Vec<&str> = cmd.iter().map(String::as_str).collect();
        args.push("--help");
        let help = run(&args).stdout;
        walked += 1;
        for sub in subcommands(&help) {
            commands.push(cmd.iter().cloned().chain([sub]).collect());
        }
        let (flags, positionals) = duration_flags(&help, game);
        for (flag, value_name) in flags {
            let mut values = vec!["-1", "nan", "inf", "1e300"];
            if value_name == "<SECONDS>" {
                values.push("0");
            }
            for value in values {
                let mut args: Vec<&str> = cmd.iter().map(String::as_str).collect();
                args.extend(positionals.iter().map(String::as_str));
                args.extend([flag.as_str(), value]);
                let o = run(&args);
                let lines: Vec<&str> = o.stderr.lines().collect();
                assert_eq!(o.code, Some(2), "{args:?}: stderr:\n{}", o.stderr);
                assert!(!o.stderr.contains("panicked"), "{args:?}:\n{}", o.stderr);
                assert_eq!(lines.len(), 1, "{args:?}: stderr:\n{}", o.stderr);
                assert!(
                    lines[0].starts_with(&format!("error: invalid value '{value}' for '{flag}")),
                    "{args:?}: {}",
                    lines[0]
                );
            }
            tried.push(format!("{} {flag}", cmd.join(" ")));
        }
    }
    assert!(walked >= 12, "only {walked} commands' help read");
    // 12 when this test was written: solve, serve (3), match (2), inspect,
    // learn and bench playouts, solve, arena and search.
    assert!(tried.len() >= 12, "only these duration flags: {tried:?}");
    assert!(tried.contains(&"solve --timeout".to_string()), "{tried:?}");
    assert!(
        tried.contains(&"serve --margin-ms".to_string()),
        "{tried:?}"
    );
}
