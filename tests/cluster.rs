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

/// Kills the job (mpirun passes the signal to every rank) when dropped.
struct Job(std::process::Child);

impl Drop for Job {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The HTTP player on three ranks plays whole matches through the referee:
/// a turn-taking game, a simultaneous one and a one-player puzzle, every
/// reply legal and in time; on the two-player games the followers' root
/// statistics reach rank 0 and are added to its own before it answers.
#[test]
fn the_player_on_three_ranks_plays_every_kind_of_game() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let log = std::env::temp_dir().join(format!("ggp-asp-cluster-{port}.log"));
    let job = Command::new("mpirun")
        .args(["--oversubscribe", "-n", "3"])
        .arg(env!("CARGO_BIN_EXE_ggp-asp"))
        .args(["serve", "--cluster", "--port", &port.to_string()])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("RUST_LOG", "info")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).expect("a log file"))
        .spawn()
        .expect("mpirun starts");
    let _job = Job(job);
    let url = format!("http://127.0.0.1:{port}");
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the player did not listen within a minute"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    for (game, players) in [
        ("connect4", vec![url.as_str(), "random"]),
        ("rps3", vec!["random", url.as_str()]),
        ("buttons", vec![url.as_str()]),
    ] {
        let path = format!("{PUZZLES}/{game}.kif");
        let mut args = vec![
            "match",
            path.as_str(),
            "--start",
            "5",
            "--play",
            "2",
            "--json",
        ];
        for p in &players {
            args.extend(["--player", p]);
        }
        let out = Command::new(env!("CARGO_BIN_EXE_ggp-asp"))
            .args(&args)
            .output()
            .expect("the referee runs");
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
    let text = std::fs::read_to_string(&log).expect("the log");
    let _ = std::fs::remove_file(&log);
    let log = text;
    let merged = log
        .lines()
        .filter(|l| l.contains("helpers reported") && !l.contains(" 0 of 2 helpers"))
        .count();
    assert!(
        merged > 0,
        "no move was chosen with the followers' statistics:\n{log}"
    );
}
