//! Clingo workers in processes of their own (`ggp-asp worker`), so that they
//! never wait on each other.
//!
//! The clingo library this crate links keeps one symbol table per process and
//! does not guard it, so the workers of one process take turns behind a lock
//! ([`super::control::lock`]): while the full worker grounds a large horizon
//! (seconds, and it cannot be interrupted), the incremental worker waits, even
//! where it alone would have answered long before. In a process of its own each
//! worker has its own clingo and runs whenever the machine has a core for it.
//!
//! The parent writes the [`Job`] as one JSON line on the child's stdin, then the
//! shared lower bound ([`ClingoWorker::refuted`]) whenever another worker raises it, one
//! number a line; the child writes [`Wire`] lines on its stdout: the worker's
//! events, and its own refutations. A child whose stdin closes (the solve is over,
//! or its parent died) ends at once; the parent kills it when the solve stops.
//! Its progress goes to the stderr it shares with the parent (relayed line by
//! line above the parent's spinner when one runs).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::solve::{ClingoWorker, Event, Job, Times};
use super::WorkerKind;

/// A line from a worker process.
#[derive(Serialize, Deserialize)]
pub enum Wire {
    Event(Event),
    /// The largest number of moves the worker has proven to hold no winning
    /// plan.
    Refuted(usize),
}

/// How often the relays look at the stop flag and the lower bound.
const POLL: Duration = Duration::from_millis(20);

/// Starts `job` in a child process of `exe` and the threads that relay its
/// events to `tx`, its refutations into `refuted`, and `refuted` to it; the
/// child is killed once `stop` is set. Returns the child's process id.
pub fn spawn(
    exe: &Path,
    job: &Job,
    stop: &Arc<AtomicBool>,
    refuted: &Arc<AtomicUsize>,
    tx: &mpsc::Sender<Event>,
) -> Result<u32, String> {
    let mode = job.kind;
    let line = serde_json::to_string(job).map_err(|e| format!("cannot encode the job: {e}"))?;
    // Under a spinner the child's lines are relayed above it; otherwise the
    // child writes to the stderr it shares with us.
    let relay_stderr = crate::show::progress::spinning();
    let mut child = Command::new(exe)
        .arg("worker")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(if relay_stderr {
            Stdio::piped()
        } else {
            Stdio::inherit()
        })
        .spawn()
        .map_err(|e| format!("cannot start {} worker: {e}", exe.display()))?;
    let pid = child.id();
    if let Some(stderr) = child.stderr.take() {
        std::thread::Builder::new()
            .name(format!("asp-{}-err", mode.name()))
            .spawn(move || {
                use std::io::BufRead;
                for line in std::io::BufReader::new(stderr)
                    .lines()
                    .map_while(Result::ok)
                {
                    crate::show::progress::say(&line);
                }
            })
            .map_err(|e| e.to_string())?;
    }
    let stdout = child.stdout.take().ok_or("no stdout of the worker")?;
    let stdin = child.stdin.take().ok_or("no stdin of the worker")?;
    let (stop, refuted_in, refuted_out, tx) = (
        Arc::clone(stop),
        Arc::clone(refuted),
        Arc::clone(refuted),
        tx.clone(),
    );
    std::thread::Builder::new()
        .name(format!("asp-{}-in", mode.name()))
        .spawn(move || feed(child, stdin, line, &stop, &refuted_in))
        .map_err(|e| e.to_string())?;
    std::thread::Builder::new()
        .name(format!("asp-{}-out", mode.name()))
        .spawn(move || relay(mode, stdout, &refuted_out, &tx))
        .map_err(|e| e.to_string())?;
    Ok(pid)
}

/// The parent's side of the child's stdin: the job, then the lower bound as
/// it rises; kills the child when the solve stops.
fn feed(
    mut child: Child,
    mut stdin: ChildStdin,
    job: String,
    stop: &AtomicBool,
    refuted: &AtomicUsize,
) {
    let mut sent = 0;
    let mut open = writeln!(stdin, "{job}")
        .and_then(|()| stdin.flush())
        .is_ok();
    loop {
        if stop.load(Ordering::Relaxed) {
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        let now = refuted.load(Ordering::Relaxed);
        if open && now > sent {
            sent = now;
            open = writeln!(stdin, "{now}")
                .and_then(|()| stdin.flush())
                .is_ok();
        }
        std::thread::sleep(POLL);
    }
}

/// The parent's side of the child's stdout: events to the coordinator,
/// refutations into the shared lower bound. A child that ends without its
/// final word (a crash, the memory limit's kill) is reported as failed.
fn relay(
    mode: WorkerKind,
    stdout: std::process::ChildStdout,
    refuted: &AtomicUsize,
    tx: &mpsc::Sender<Event>,
) {
    let mut last_times = Times::default();
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        match serde_json::from_str::<Wire>(&line) {
            Ok(Wire::Refuted(h)) => {
                refuted.fetch_max(h, Ordering::Relaxed);
            }
            Ok(Wire::Event(e)) => {
                let last = matches!(e, Event::Done(..) | Event::Failed(..));
                if let Event::Horizon(_, _, t) | Event::Candidate(_, _, t) = &e {
                    last_times = *t;
                }
                let _ = tx.send(e);
                if last {
                    return;
                }
            }
            Err(e) => {
                let msg = format!("unreadable line from the worker process: {e}");
                let _ = tx.send(Event::Failed(mode, msg, last_times));
                return;
            }
        }
    }
    let msg = "the worker process ended without an answer".to_string();
    let _ = tx.send(Event::Failed(mode, msg, last_times));
}

/// The child's side (`ggp-asp worker`): reads the job from stdin, runs the
/// worker, writes its events and refutations on stdout, and ends the process
/// after the worker's final word or when stdin closes.
pub fn serve() -> ! {
    let stdin = std::io::stdin();
    let mut first = String::new();
    // Nothing to read: the parent hung up before sending the job (the solve
    // ended first), which is no error.
    if stdin.lock().read_line(&mut first).is_err() || first.is_empty() {
        end(2);
    }
    let job: Job = match serde_json::from_str(&first) {
        Ok(j) => j,
        Err(e) => {
            crate::progress!("error: the worker's job does not read: {e}");
            end(2);
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    let refuted = Arc::new(AtomicUsize::new(0));
    let from_parent = Arc::clone(&refuted);
    // The lower bound from the other workers; the end of the solve when the
    // parent hangs up.
    let _ = std::thread::Builder::new()
        .name("parent".into())
        .spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if let Ok(h) = line.trim().parse::<usize>() {
                    from_parent.fetch_max(h, Ordering::Relaxed);
                }
            }
            end(0);
        });
    let (tx, rx) = mpsc::channel();
    let for_worker = Arc::clone(&refuted);
    // clingo's grounder recurses deeply on some programs: give it room. The
    // worker is made on its thread, where it holds clingo's lock.
    let spawned = std::thread::Builder::new()
        .name("worker".into())
        .stack_size(64 << 20)
        .spawn(move || ClingoWorker::new(Arc::new(job), stop, for_worker, tx).run());
    if spawned.is_err() {
        end(2);
    }
    let mut sent = 0;
    let out = std::io::stdout();
    loop {
        let event = rx.recv_timeout(POLL);
        let mut out = out.lock();
        let now = refuted.load(Ordering::Relaxed);
        if now > sent {
            sent = now;
            write_line(&mut out, &Wire::Refuted(now));
        }
        match event {
            Ok(e) => {
                let last = matches!(e, Event::Done(..) | Event::Failed(..));
                write_line(&mut out, &Wire::Event(e));
                if last {
                    end(0);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => end(0),
        }
    }
}

fn write_line(out: &mut impl Write, wire: &Wire) {
    let ok = serde_json::to_string(wire)
        .map_err(std::io::Error::other)
        .and_then(|l| writeln!(out, "{l}"))
        .and_then(|()| out.flush());
    if ok.is_err() {
        // Nobody reads any more: the solve is over.
        end(0);
    }
}

/// Ends the process at once: clingo may be grounding on another thread, and
/// its static destructors crash under its feet (see `main`'s `exit_now`).
fn end(code: i32) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: _exit ends the process; nothing runs after it.
    unsafe { libc::_exit(code) }
}
