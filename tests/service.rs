//! The solving service over real HTTP on loopback: jobs submitted, polled to
//! their end and cancelled, the store's instant answer, every kind of bad
//! input, a full queue, a restart that keeps finished jobs, the match pages,
//! and a load test bounded in count. Jobs are real `ggp-asp solve` children;
//! a job's game file carries a name unique to its test, so that a test can
//! look through `/proc` for a child left running.

mod common;

use common::service::{config, server_config, start};

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use ggp_asp::player::Server;
use ggp_asp::service::{Service, ServiceHandle};
use ggp_asp::store::{JobRecord, Plans};

/// A reply: status, headers (lower-case names), the body as JSON (or
/// `Value::Null` when it is not JSON), and the body's text.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    json: Value,
    text: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 exchange with `Connection: close`.
fn http(addr: SocketAddr, method: &str, path: &str, body: Option<(&str, &[u8])>) -> Reply {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some((ctype, b)) = body {
        req.push_str(&format!(
            "Content-Type: {ctype}\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    req.push_str("\r\n");
    let mut bytes = req.into_bytes();
    if let Some((_, b)) = body {
        bytes.extend_from_slice(b);
    }
    // A server may answer (413) before reading the whole body.
    let _ = s.write_all(&bytes);
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP reply");
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let body = body.to_string();
    Reply {
        status,
        headers,
        json: serde_json::from_str(&body).unwrap_or(Value::Null),
        text: body,
    }
}

fn get(addr: SocketAddr, path: &str) -> Reply {
    http(addr, "GET", path, None)
}

fn post(addr: SocketAddr, path: &str, v: &Value) -> Reply {
    let b = serde_json::to_vec(v).unwrap();
    http(addr, "POST", path, Some(("application/json", &b)))
}

fn puzzle(name: &str) -> String {
    std::fs::read_to_string(common::puzzle_path(name)).unwrap()
}

/// A game the solver does not finish in a test's time: a 10x10 nonogram
/// (clingo finds no plan in a minute; docs/limits.md).
fn slow_game() -> String {
    std::fs::read_to_string(common::corpus_file("nonogram_10x10_1.kif")).unwrap()
}

/// Polls job `id` until it has ended, for at most `limit`.
fn wait_for(addr: SocketAddr, id: &str, limit: Duration) -> Value {
    let t0 = Instant::now();
    loop {
        let r = get(addr, &format!("/api/solve/{id}"));
        assert_eq!(r.status, 200, "{}", r.text);
        let s = r.json["status"].as_str().unwrap().to_string();
        if s != "queued" && s != "running" {
            return r.json;
        }
        assert!(t0.elapsed() < limit, "job {id} still {s} after {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Processes whose command line holds `token` (a job's game file name).
fn processes_with(token: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmd).contains(token) {
                out.push(pid);
            }
        }
    }
    out
}

/// Waits (a while) for every process holding `token` to be gone.
fn assert_none_left(token: &str) {
    let t0 = Instant::now();
    while !processes_with(token).is_empty() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        processes_with(token),
        Vec::<u32>::new(),
        "children of {token} left running"
    );
}

#[test]
fn a_job_is_solved_to_the_end_its_plan_drawn_and_the_store_answers_the_same_game_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("plans.sqlite");
    let h = start(config(1, 4), Some(&store));
    let game = puzzle("8puzzle");
    let r = post(
        h.addr(),
        "/api/solve",
        &json!({ "game": game, "name": "eight", "timeout": 60 }),
    );
    assert_eq!(r.status, 202, "{}", r.text);
    let id = r.json["id"].as_str().unwrap().to_string();
    assert_eq!(r.json["url"], format!("/api/solve/{id}"));
    assert_eq!(
        r.header("location"),
        Some(format!("/api/solve/{id}").as_str())
    );
    let job = wait_for(h.addr(), &id, Duration::from_secs(120));
    assert_eq!(job["status"], "solved", "{job}");
    assert_eq!(job["answer"]["steps"], 30);
    assert_eq!(job["answer"]["proven"], "shortest");
    assert_eq!(job["answer"]["source"], "solved");
    assert!(!job["progress"].as_array().unwrap().is_empty());

    // The plan drawn: the 8-puzzle's board at step 0 and at the goal.
    let b = get(h.addr(), &format!("/api/solve/{id}/boards"));
    assert_eq!(b.status, 200, "{}", b.text);
    assert_eq!(b.json["board"], true);
    let steps = b.json["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 31);
    let rows = |s: &Value| -> Vec<Vec<String>> {
        s["grid"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r[1].as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_str().unwrap_or(".").to_string())
                    .collect()
            })
            .collect()
    };
    assert_eq!(
        rows(&steps[0]),
        [["3", "2", "1"], ["6", "7", "4"], ["b", "8", "5"]]
    );
    assert_eq!(
        rows(&steps[30]),
        [["1", "2", "3"], ["4", "5", "6"], ["7", "8", "b"]]
    );

    // The same game again: the store's answer at once, no job.
    let again = post(h.addr(), "/api/solve", &json!({ "game": game }));
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.json["source"], "store");
    assert_eq!(again.json["answer"]["steps"], 30);
    let fp = again.json["fingerprint"].as_str().unwrap();
    let games = get(h.addr(), "/api/games");
    assert!(games.json["games"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["fingerprint"] == fp && g["name"] == "eight"));
    let entry = get(h.addr(), &format!("/api/games/{fp}"));
    assert_eq!(entry.status, 200);
    assert_eq!(entry.json["plan"].as_array().unwrap().len(), 30);
    let stored_boards = get(h.addr(), &format!("/api/games/{fp}/boards"));
    assert_eq!(stored_boards.json["steps"].as_array().unwrap().len(), 31);
    assert_eq!(
        get(h.addr(), "/api/games/00000000000000000000000000000000").status,
        404
    );
}

#[test]
fn a_cancelled_job_ends_and_its_child_is_gone() {
    let h = start(config(1, 4), None);
    let token = "cancelme_7f3a";
    let r = post(
        h.addr(),
        "/api/solve",
        &json!({ "game": slow_game(), "name": token, "timeout": 100 }),
    );
    assert_eq!(r.status, 202, "{}", r.text);
    let id = r.json["id"].as_str().unwrap().to_string();
    let t0 = Instant::now();
    while processes_with(token).is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the job's child never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        get(h.addr(), &format!("/api/solve/{id}")).json["status"],
        "running"
    );
    let c = http(h.addr(), "DELETE", &format!("/api/solve/{id}"), None);
    assert_eq!(c.status, 200, "{}", c.text);
    assert_eq!(c.json["status"], "cancelled");
    assert_none_left(token);
    assert_eq!(
        get(h.addr(), &format!("/api/solve/{id}")).json["status"],
        "cancelled"
    );
    assert_eq!(
        http(h.addr(), "DELETE", "/api/solve/unknown", None).status,
        404
    );
}

#[test]
fn bad_input_gets_the_status_that_says_what_was_wrong_and_the_server_keeps_serving() {
    let h = start(config(1, 2), None);
    let a = h.addr();
    // GDL with an error: 400 with its line and column.
    let r = post(
        a,
        "/api/solve",
        &json!({ "game": "(role p)\n(init (a)\n(<= terminal" }),
    );
    assert_eq!(r.status, 400, "{}", r.text);
    let d = &r.json["diagnostics"][0];
    assert!(
        d["line"].as_u64().unwrap() >= 1 && d["column"].as_u64().unwrap() >= 1,
        "{}",
        r.text
    );
    // A body over the limit: 413.
    let big = json!({ "game": "x".repeat(300 << 10) });
    assert_eq!(post(a, "/api/solve", &big).status, 413);
    // Unknown ids and routes: 404.
    assert_eq!(get(a, "/api/solve/nope").status, 404);
    assert_eq!(get(a, "/api/nothing-here").status, 404);
    // A wrong method: 405; a body that is not JSON: 415.
    assert_eq!(http(a, "PUT", "/api/solve", None).status, 405);
    assert_eq!(http(a, "POST", "/api/games", None).status, 405);
    let game = puzzle("maze");
    let r = http(
        a,
        "POST",
        "/api/solve",
        Some(("text/plain", game.as_bytes())),
    );
    assert_eq!(r.status, 415, "{}", r.text);
    // JSON that is not a request: 400.
    let r = http(
        a,
        "POST",
        "/api/solve",
        Some(("application/json", b"{\"gam\": 1")),
    );
    assert_eq!(r.status, 400, "{}", r.text);
    let r = post(a, "/api/solve", &json!({ "game": game, "timeout": -3 }));
    assert_eq!(r.status, 400, "{}", r.text);
    // A game of two players: 422 with why, for a job and for an encoding.
    let ttt = puzzle("tictactoe");
    let r = post(a, "/api/solve", &json!({ "game": ttt }));
    assert_eq!(r.status, 422, "{}", r.text);
    assert!(
        r.json["error"].as_str().unwrap().contains("2 roles"),
        "{}",
        r.text
    );
    assert_eq!(post(a, "/api/encode", &json!({ "game": ttt })).status, 422);
    // Every error is JSON with a message.
    assert!(r.json["error"].is_string());
    // Still serving: the API and the match protocol.
    assert_eq!(get(a, "/api/status").status, 200);
    let info = http(a, "POST", "/", Some(("text/acl", b"(info)")));
    assert_eq!(info.status, 200);
}

#[test]
fn a_full_queue_refuses_with_429_and_retry_after_and_nothing_is_left_running() {
    let token = "queuefull_c41d";
    {
        let h = start(config(1, 2), None);
        let mut accepted = Vec::new();
        let mut refused = 0;
        for i in 0..5 {
            let r = post(
                h.addr(),
                "/api/solve",
                &json!({ "game": slow_game(), "name": format!("{token}_{i}"), "timeout": 100 }),
            );
            match r.status {
                202 => accepted.push(r.json["id"].as_str().unwrap().to_string()),
                429 => {
                    refused += 1;
                    let after: u64 = r.header("retry-after").unwrap().parse().unwrap();
                    assert!(after >= 1, "{}", r.text);
                }
                s => panic!("status {s}: {}", r.text),
            }
            // The first job leaves the queue for the slot before the next.
            if i == 0 {
                let t0 = Instant::now();
                while get(h.addr(), "/api/status").json["running"] != 1 {
                    assert!(t0.elapsed() < Duration::from_secs(30));
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
        // One running, two waiting; the other two refused.
        assert_eq!(accepted.len(), 3);
        assert_eq!(refused, 2);
        let list = get(h.addr(), "/api/solve").json;
        assert_eq!(list["jobs"].as_array().unwrap().len(), 3);
    }
    // The server is gone: its jobs were cancelled and their children killed.
    assert_none_left(token);
}

#[test]
fn a_restart_keeps_finished_jobs_and_marks_interrupted_ones() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("plans.sqlite");
    let id = {
        let h = start(config(1, 4), Some(&store));
        let r = post(
            h.addr(),
            "/api/solve",
            &json!({ "game": puzzle("maze"), "name": "maze" }),
        );
        assert_eq!(r.status, 202, "{}", r.text);
        let id = r.json["id"].as_str().unwrap().to_string();
        assert_eq!(
            wait_for(h.addr(), &id, Duration::from_secs(120))["status"],
            "solved"
        );
        id
    };
    // A job that was running when its service went down, as the store has it.
    Plans::open(&store)
        .unwrap()
        .save_job(&JobRecord {
            id: "feedfacefeedface".into(),
            status: "running".into(),
            request: json!({ "game": puzzle("blocks") }).to_string(),
            answer: None,
            error: None,
            progress: vec!["started".into()],
            created: "2026-11-29T00:00:00Z".into(),
            finished: None,
        })
        .unwrap();
    let h = start(config(1, 4), Some(&store));
    let job = get(h.addr(), &format!("/api/solve/{id}"));
    assert_eq!(job.status, 200);
    assert_eq!(job.json["status"], "solved");
    assert!(job.json["answer"]["steps"].as_u64().is_some());
    let lost = get(h.addr(), "/api/solve/feedfacefeedface").json;
    assert_eq!(lost["status"], "error");
    assert!(
        lost["error"].as_str().unwrap().starts_with("interrupted"),
        "{lost}"
    );
}

#[test]
fn the_encoding_pairs_rules_with_their_translation_and_the_report_counts_the_grounding() {
    let h = start(config(1, 2), None);
    let r = post(
        h.addr(),
        "/api/encode",
        &json!({ "game": puzzle("8puzzle") }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.json["program"]
        .as_str()
        .unwrap()
        .starts_with("#include <incmode>."));
    let pairs = r.json["pairs"].as_array().unwrap();
    assert!(pairs.iter().any(
        |p| p["gdl"].as_str().unwrap().starts_with("(<= (neighbour up")
            && p["asp"].as_str().unwrap().starts_with("neighbour(up,")
    ));
    let full = post(
        h.addr(),
        "/api/encode",
        &json!({ "game": puzzle("8puzzle"), "horizon": 5 }),
    );
    assert!(full.json["program"]
        .as_str()
        .unwrap()
        .contains("horizon(5)."));
    let r = post(
        h.addr(),
        "/api/inspect",
        &json!({ "game": puzzle("8puzzle") }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["grounding"]["complete"], true);
    assert!(r.json["grounding"]["atoms"].as_u64().unwrap() > 0);
    assert_eq!(r.json["roles"], json!(["player"]));
}

#[test]
fn a_match_is_watched_through_the_api_while_it_is_played() {
    let h = start(config(1, 2), None);
    let rules = puzzle("tictactoe");
    let start = format!("(START m1 x ({rules}) 10 2)");
    let r = http(h.addr(), "POST", "/", Some(("text/acl", start.as_bytes())));
    assert_eq!(r.text.trim().to_ascii_lowercase(), "ready");
    let r = http(h.addr(), "POST", "/", Some(("text/acl", b"(PLAY m1 NIL)")));
    assert_eq!(r.status, 200, "{}", r.text);
    let v = get(h.addr(), "/api/matches/m1");
    assert_eq!(v.status, 200, "{}", v.text);
    assert_eq!(v.json["role"], "x");
    assert_eq!(v.json["roles"], 2);
    assert_eq!(v.json["play_clock_s"], 2.0);
    let moves = v.json["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 1);
    assert_eq!(
        moves[0]["move"].as_str().unwrap().to_ascii_lowercase(),
        r.text.trim().to_ascii_lowercase()
    );
    assert!(moves[0]["by"].is_string());
    let r = http(h.addr(), "POST", "/", Some(("text/acl", b"(ABORT m1)")));
    assert_eq!(r.status, 200);
    let list = get(h.addr(), "/api/matches").json;
    assert_eq!(list["matches"][0]["id"], "m1");
    assert_eq!(list["matches"][0]["state"], "aborted");
    assert_eq!(get(h.addr(), "/api/matches/m2").status, 404);
}

#[test]
fn the_page_and_its_script_are_served_with_a_policy_that_allows_only_its_own_script() {
    let h = start(config(1, 2), None);
    let page = get(h.addr(), "/ui/");
    assert_eq!(page.status, 200);
    assert!(page.text.contains("<script src=\"/ui/app.js\""));
    let csp = page.header("content-security-policy").unwrap();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    let script = get(h.addr(), "/ui/app.js");
    assert_eq!(script.status, 200);
    // The script writes text, never markup, into the page.
    assert!(!script.text.contains("innerHTML") && !script.text.contains("outerHTML"));
    let puzzles = get(h.addr(), "/ui/puzzles").json;
    assert!(puzzles["puzzles"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "8puzzle"));
}

/// 200 requests for a stored game from 20 clients at once: all answered
/// from the store; then 20 jobs at once against a queue of 10: each
/// accepted or refused with 429, none lost, none left running.
#[test]
fn load_stored_answers_from_twenty_clients_and_twenty_jobs_against_a_queue_of_ten() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("plans.sqlite");
    let h = start(config(2, 10), Some(&store));
    let game = puzzle("blocks");
    let r = post(
        h.addr(),
        "/api/solve",
        &json!({ "game": game, "name": "blocks" }),
    );
    assert_eq!(r.status, 202, "{}", r.text);
    let id = r.json["id"].as_str().unwrap().to_string();
    assert_eq!(
        wait_for(h.addr(), &id, Duration::from_secs(120))["status"],
        "solved"
    );

    let addr = h.addr();
    let t0 = Instant::now();
    let clients: Vec<_> = (0..20)
        .map(|_| {
            let game = game.clone();
            std::thread::spawn(move || {
                let mut slowest = Duration::ZERO;
                for _ in 0..10 {
                    let t = Instant::now();
                    let r = post(addr, "/api/solve", &json!({ "game": game }));
                    slowest = slowest.max(t.elapsed());
                    assert_eq!(r.status, 200, "{}", r.text);
                    assert_eq!(r.json["source"], "store");
                }
                slowest
            })
        })
        .collect();
    let slowest = clients
        .into_iter()
        .map(|c| c.join().unwrap())
        .max()
        .unwrap();
    println!(
        "200 stored answers from 20 clients in {:.3} s; the slowest took {:.3} s",
        t0.elapsed().as_secs_f64(),
        slowest.as_secs_f64()
    );

    let token = "loadjob_91be";
    let submitters: Vec<_> = (0..20)
        .map(|i| {
            std::thread::spawn(move || {
                // Distinct games (a fact of its own each), so none is in the store.
                let game = format!("{}\n(extra{i})\n", slow_game());
                let r = post(
                    addr,
                    "/api/solve",
                    &json!({ "game": game, "name": format!("{token}_{i}"), "timeout": 60 }),
                );
                (r.status, r.json["id"].as_str().map(str::to_string))
            })
        })
        .collect();
    let answers: Vec<(u16, Option<String>)> =
        submitters.into_iter().map(|s| s.join().unwrap()).collect();
    let accepted: Vec<&String> = answers
        .iter()
        .filter(|(s, _)| *s == 202)
        .map(|(_, id)| id.as_ref().unwrap())
        .collect();
    let refused = answers.iter().filter(|(s, _)| *s == 429).count();
    assert_eq!(accepted.len() + refused, 20, "{answers:?}");
    // Two slots and ten places: at most twelve taken, at least ten.
    assert!((10..=12).contains(&accepted.len()), "{answers:?}");
    for id in &accepted {
        let j = get(addr, &format!("/api/solve/{id}"));
        assert_eq!(j.status, 200);
        assert!(["queued", "running"].contains(&j.json["status"].as_str().unwrap()));
    }
    drop(h);
    assert_none_left(token);
}

/// Benchmark (run by hand, recorded in docs/benchmarks.md): stored answers
/// over the API from 20 clients, 100 requests each, on loopback: requests
/// per second and the latency percentiles.
#[test]
#[ignore]
fn bench_stored_answers_per_second() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("plans.sqlite");
    let h = start(config(2, 10), Some(&store));
    let game = puzzle("8puzzle");
    let r = post(
        h.addr(),
        "/api/solve",
        &json!({ "game": game, "name": "8puzzle" }),
    );
    let id = r.json["id"].as_str().unwrap().to_string();
    assert_eq!(
        wait_for(h.addr(), &id, Duration::from_secs(120))["status"],
        "solved"
    );
    let addr = h.addr();
    let t0 = Instant::now();
    let clients: Vec<_> = (0..20)
        .map(|_| {
            let game = game.clone();
            std::thread::spawn(move || {
                (0..100)
                    .map(|_| {
                        let t = Instant::now();
                        let r = post(addr, "/api/solve", &json!({ "game": game }));
                        assert_eq!(r.status, 200, "{}", r.text);
                        t.elapsed()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut times: Vec<Duration> = clients
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    let wall = t0.elapsed().as_secs_f64();
    times.sort();
    let pct = |p: f64| {
        times[((times.len() as f64 * p) as usize).min(times.len() - 1)].as_secs_f64() * 1000.0
    };
    println!(
        "{} stored answers (8puzzle, 30 moves replayed each) from 20 clients in {wall:.2} s: {:.0} requests/s; latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        times.len(),
        times.len() as f64 / wall,
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
}

/// Benchmark (run by hand, recorded in docs/benchmarks.md): a match played
/// through the referee against the server's match protocol while the API
/// runs a queue of solve jobs (two slots busy, eight waiting): no late move.
#[test]
#[ignore]
fn bench_a_match_beside_a_queue_of_jobs() {
    let mut sc = server_config();
    sc.matches.engine = ggp_asp::reasoner::Engine::Auto;
    sc.matches.ponder = true;
    sc.matches.meta = true;
    let service = Service::start(config(2, 10), None, None);
    let h = ServiceHandle::spawn(Server::new(sc), service, "127.0.0.1:0".parse().unwrap()).unwrap();
    for i in 0..10 {
        let game = format!("{}\n(extra{i})\n", slow_game());
        let r = post(
            h.addr(),
            "/api/solve",
            &json!({ "game": game, "name": format!("benchjob_{i}"), "timeout": 600 }),
        );
        assert_eq!(r.status, 202, "{}", r.text);
    }
    let url = format!("http://{}", h.addr());
    let path = common::corpus_file("connectFour.kif");
    let g = ggp_asp::gdl::load(&path).unwrap();
    let cfg = ggp_asp::arena::RefereeConfig {
        start_clock: Duration::from_secs(10),
        play_clock: Duration::from_secs(2),
        seed: 7,
        kif: Some(std::fs::read_to_string(&path).unwrap()),
        match_id: Some("beside-jobs".into()),
        ..ggp_asp::arena::RefereeConfig::default()
    };
    let specs = [url.as_str(), "uct"]
        .iter()
        .map(|p| p.parse().unwrap())
        .collect();
    let rec = ggp_asp::arena::run_match(&g, specs, &cfg).unwrap();
    let status = get(h.addr(), "/api/status").json;
    let jobs = get(h.addr(), "/api/solve").json;
    let mut states: Vec<String> = jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["status"].as_str().unwrap().to_string())
        .collect();
    states.sort();
    println!("jobs at the end of the match: {states:?}");
    println!(
        "connectFour beside the jobs ({} running, {} queued): {} steps, goals {:?}, errors {:?}",
        status["running"],
        status["queued"],
        rec.moves.len(),
        rec.goals,
        rec.errors
    );
    for (kind, d) in h.server.player.worst_latencies() {
        println!("  worst {kind}: {:.3} s", d.as_secs_f64());
    }
    assert!(rec.errors.is_empty(), "{:?}", rec.errors);
    drop(h);
    assert_none_left("benchjob_");
}
