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
