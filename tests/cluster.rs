//! The MPI cluster (feature `mpi`): `bench search --cluster` under `mpirun`
//! with three ranks on one machine. Run with `cargo test --release --features
//! mpi --test cluster` where Open MPI is installed (README.md).
#![cfg(feature = "mpi")]

use std::process::Command;

const PUZZLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/puzzles");

/// `mpirun -n RANKS ggp-asp ARGS...`, oversubscribed (more ranks than cores
/// is fine for a test) and allowed to run as root (CI containers do).
fn mpirun(ranks: usize, args: &[&str]) -> std::process::Output {
    Command::new("mpirun")
        .env("GGP_ASP_STORE", "off")
        .args(["--oversubscribe", "-n", &ranks.to_string()])
        .arg(env!("CARGO_BIN_EXE_ggp-asp"))
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("mpirun runs (Open MPI installed?)")
}

/// Every rank searches, rank 0 alone reports: the job's iterations are the
/// sum of the ranks', the root's merged visits are what the ranks' trees
/// hold together, and the move chosen is a legal first move of the game.
#[test]
fn three_ranks_search_one_root_and_rank_zero_sums_them() {
    let game = format!("{PUZZLES}/tictactoe.kif");
    let out = mpirun(
        3,
        &[
            "bench",
            "search",
            &game,
            "--cluster",
            "--seconds",
            "0.5",
            "--json",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "mpirun failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("a JSON row"))
        .collect();
    assert_eq!(rows.len(), 1, "one report, from rank 0 only: {stdout}");
    let r = &rows[0];
    assert_eq!(r["ranks"], 3);
    let per_rank: Vec<u64> = r["rank_iterations"]
        .as_array()
        .expect("per rank")
        .iter()
        .map(|v| v.as_u64().expect("a count"))
        .collect();
    assert_eq!(per_rank.len(), 3);
    assert!(
        per_rank.iter().all(|&n| n > 0),
        "every rank searched: {per_rank:?}"
    );
    let root = r["root"].as_array().expect("root moves");
    assert_eq!(root.len(), 9, "tic-tac-toe's nine first moves");
    let visits: u64 = root.iter().map(|m| m["visits"].as_u64().unwrap()).sum();
    // Each iteration visits one root move; a few may end in solved nodes
    // without a visit counted at the root, none is counted twice.
    let total: u64 = per_rank.iter().sum();
    assert!(
        visits <= total && visits * 10 >= total * 9,
        "{visits} of {total}"
    );
    let best = r["best"].as_str().expect("a move");
    assert!(best.starts_with("(mark "), "{best}");
    assert!(root.iter().any(|m| m["text"] == best));
}

/// A rank alone (no `mpirun`) is a job of one: the same report.
#[test]
fn one_process_is_a_cluster_of_one() {
    let game = format!("{PUZZLES}/tictactoe.kif");
    let out = Command::new(env!("CARGO_BIN_EXE_ggp-asp"))
        .env("GGP_ASP_STORE", "off")
        .args([
            "bench",
            "search",
            &game,
            "--cluster",
            "--seconds",
            "0.2",
            "--json",
        ])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let r: serde_json::Value =
        serde_json::from_str(stdout.lines().find(|l| l.starts_with('{')).expect("a row"))
            .expect("JSON");
    assert_eq!(r["ranks"], 1);
}

/// What `mpirun` (Open MPI 4) needs to keep a job going when a rank dies.
const OUTLIVE_A_RANK: [&str; 4] = ["--mca", "orte_enable_recovery", "1", "--mca"];
const NO_ABORT: [&str; 2] = ["orte_abort_on_non_zero_status", "0"];

/// Kills the job (mpirun passes the signal to every rank) when dropped.
struct Job(std::process::Child);

impl Drop for Job {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `mpirun -n 3 ggp-asp serve --cluster` on a free port, its log (stderr at
/// level info) in a file: the job, the player's URL and the log's path,
/// once the player listens.
fn serve_on_three_ranks(outlive_a_rank: bool) -> (Job, String, std::path::PathBuf, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let log = std::env::temp_dir().join(format!("ggp-asp-cluster-{port}.log"));
    let mut cmd = Command::new("mpirun");
    cmd.env("GGP_ASP_STORE", "off").arg("--oversubscribe");
    if outlive_a_rank {
        cmd.args(OUTLIVE_A_RANK).args(NO_ABORT);
    }
    let job = cmd
        .args(["-n", "3"])
        .arg(env!("CARGO_BIN_EXE_ggp-asp"))
        .args(["serve", "--cluster", "--port", &port.to_string()])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("RUST_LOG", "info")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).expect("a log file"))
        .spawn()
        .expect("mpirun starts");
    let job = Job(job);
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the player did not listen within a minute"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    (job, format!("http://127.0.0.1:{port}"), log, port)
}

/// The referee's command for a match of `game` (a puzzle) among `players`.
fn referee(game: &str, players: &[&str]) -> Command {
    let path = format!("{PUZZLES}/{game}.kif");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ggp-asp"));
    cmd.env("GGP_ASP_STORE", "off");
    cmd.args(["match", &path, "--start", "5", "--play", "2", "--json"]);
    for p in players {
        cmd.args(["--player", p]);
    }
    cmd
}

/// The referee's verdict: the match ended in a terminal state and no
/// player made an error (a late, missing or illegal reply).
fn assert_clean_match(game: &str, out: &std::process::Output) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let m: serde_json::Value = serde_json::from_str(
        stdout
            .lines()
            .find(|l| l.starts_with('{'))
            .unwrap_or_else(|| panic!("{game}: no result: {stdout}")),
    )
    .expect("JSON");
    assert_eq!(m["end"], "terminal", "{game}: {m}");
    assert_eq!(m["errors"], serde_json::json!([]), "{game}: {m}");
}

/// Waits (at most `secs`) until the log has a line containing `text`.
fn await_log(log: &std::path::Path, text: &str, secs: u64) -> String {
    let started = std::time::Instant::now();
    loop {
        let now = std::fs::read_to_string(log).unwrap_or_default();
        if now.contains(text) {
            return now;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(secs),
            "no {text:?} in the log within {secs} s:\n{now}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The process id of rank `rank` of the job serving on `port`.
fn rank_pid(rank: usize, port: u16) -> u32 {
    let wanted = format!("OMPI_COMM_WORLD_RANK={rank}");
    let port = port.to_string();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        let ours = args.iter().any(|a| a.ends_with(b"ggp-asp"))
            && args.iter().any(|a| *a == b"serve")
            && args.contains(&port.as_bytes());
        if !ours || args.first().is_some_and(|a| a.ends_with(b"mpirun")) {
            continue;
        }
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if environ.split(|&b| b == 0).any(|v| v == wanted.as_bytes()) {
            return pid;
        }
    }
    panic!("no rank {rank} serving on port {port}");
}

/// A rank killed in the middle of a match costs no move: rank 0 goes on
/// with the rank that is left, through the rest of the match and the
/// matches after it (a turn-taking game, a one-player puzzle whose solver
/// portfolio is one rank short, a simultaneous game), says which rank went
/// silent, and still merges the other's statistics.
#[test]
fn a_rank_killed_in_a_match_costs_no_move() {
    let (_job, url, log, port) = serve_on_three_ranks(true);
    let first = referee("connect4", &[url.as_str(), "random"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the referee runs");
    await_log(&log, "step 5:", 120);
    let victim = rank_pid(2, port);
    // SAFETY: a plain system call on a process id we found.
    let killed = unsafe { libc::kill(victim as libc::pid_t, libc::SIGKILL) };
    assert_eq!(killed, 0, "rank 2 (pid {victim}) could not be killed");
    assert_clean_match(
        "connect4",
        &first.wait_with_output().expect("the referee ends"),
    );
    for (game, players) in [
        ("buttons", vec![url.as_str()]),
        ("rps3", vec!["random", url.as_str()]),
    ] {
        assert_clean_match(game, &referee(game, &players).output().expect("runs"));
    }
    let text = await_log(&log, "rank 2 silent", 60);
    let after = text.len();
    assert_clean_match(
        "connect4",
        &referee("connect4", &[url.as_str(), "random"])
            .output()
            .expect("runs"),
    );
    let text = std::fs::read_to_string(&log).expect("the log");
    let _ = std::fs::remove_file(&log);
    let merged = text[after..]
        .lines()
        .filter(|l| l.contains("1 of 2 helpers reported") && l.contains("ranks [2]"))
        .count();
    assert!(
        merged > 0,
        "rank 1's statistics were not merged after rank 2 died:\n{text}"
    );
}

/// The HTTP player on three ranks plays whole matches through the referee:
/// a turn-taking game, a simultaneous one and a one-player puzzle, every
/// reply legal and in time; on the two-player games the followers' root
/// statistics reach rank 0 and are added to its own before it answers, and
/// on the puzzle each follower runs the solver its own way beside rank 0's.
#[test]
fn the_player_on_three_ranks_plays_every_kind_of_game() {
    let (_job, url, log, _) = serve_on_three_ranks(false);
    for (game, players) in [
        ("connect4", vec![url.as_str(), "random"]),
        ("rps3", vec!["random", url.as_str()]),
        ("buttons", vec![url.as_str()]),
    ] {
        assert_clean_match(game, &referee(game, &players).output().expect("runs"));
    }
    let text = std::fs::read_to_string(&log).expect("the log");
    let _ = std::fs::remove_file(&log);
    let merged = text
        .lines()
        .filter(|l| l.contains("helpers reported") && !l.contains(" 0 of 2 helpers"))
        .count();
    assert!(
        merged > 0,
        "no move was chosen with the followers' statistics:\n{text}"
    );
    for rank in [1, 2] {
        assert!(
            text.lines()
                .any(|l| l.contains(&format!("cluster rank {rank}: match"))
                    && l.contains("solver (--mode")),
            "rank {rank} did not solve the puzzle:\n{text}"
        );
    }
}
