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
//! number a line; the child writes [`WorkerLine`] lines on its stdout: the worker's
//! events, and its own refutations. A child whose stdin closes (the solve is over,
//! or its parent died) ends at once; the parent kills it when the solve stops.
//! Its progress lines go to its stderr, which the parent relays line by line
//! as progress events of its own (above the parent's spinner when one runs).
//! The child is run by [`crate::child`].

use std::io::{BufRead, Write};
use std::ops::ControlFlow;
use std::path::Path;
use std::process::{ChildStdin, Command};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::solve::{ClingoWorker, Event, Job, Times};
use super::WorkerKind;
use crate::child::{Failure, Line, Running, Spec, Stderr};

/// A line from a worker process.
#[derive(Serialize, Deserialize)]
pub enum WorkerLine {
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
    let kind = job.kind;
    let line = serde_json::to_string(job).map_err(|e| format!("cannot encode the job: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.arg("worker");
    // The child's progress lines are relayed as ours: above the spinner
    // when one runs.
    let mut run = Spec::new(cmd, "the worker process")
        .stdin_piped()
        .stderr(Stderr::Progress)
        .thread_names(&format!("asp-{}", kind.name()))
        .spawn()
        .map_err(|e| match e.failure {
            Failure::Spawn { source, .. } => {
                format!("cannot start {} worker: {source}", exe.display())
            }
            _ => e.to_string(),
        })?;
    let pid = run.pid();
    let mut relay = Relay {
        kind,
        refuted: Arc::clone(refuted),
        tx: tx.clone(),
        last_times: Times::default(),
        last: None,
    };
    run.stream(move |line| relay.line(line))
        .map_err(|e| e.to_string())?;
    let stdin = run.take_stdin().ok_or("no stdin of the worker")?;
    let (stop, refuted) = (Arc::clone(stop), Arc::clone(refuted));
    std::thread::Builder::new()
        .name(format!("asp-{}-in", kind.name()))
        .spawn(move || feed(run, stdin, line, &stop, &refuted))
        .map_err(|e| e.to_string())?;
    Ok(pid)
}

/// The parent's side of the child's stdin: the job, then the lower bound as
/// it rises; kills the child (drops `run`) when the solve stops.
fn feed(
    run: Running,
    mut stdin: ChildStdin,
    job: String,
    stop: &AtomicBool,
    refuted: &AtomicUsize,
) {
    let mut sent = 0;
    let mut open = writeln!(stdin, "{job}")
        .and_then(|()| stdin.flush())
        .is_ok();
    while !stop.load(Ordering::Relaxed) && !run.has_ended() {
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
/// refutations into the shared lower bound. The worker's last event is sent
/// at the stream's end, after the child's progress lines; a child that ends
/// without its final word (a crash, the memory limit's kill) is reported as
/// failed.
struct Relay {
    kind: WorkerKind,
    refuted: Arc<AtomicUsize>,
    tx: mpsc::Sender<Event>,
    /// The times of the worker's last horizon or candidate, for a failure's
    /// event.
    last_times: Times,
    /// The worker's final word (done, failed, or why its output does not
    /// read), held for the end.
    last: Option<Event>,
}

impl Relay {
    fn line(&mut self, line: Line<'_>) -> ControlFlow<()> {
        let text = match line {
            Line::Text(text) => text,
            Line::End => {
                let last = self.last.take().unwrap_or_else(|| {
                    self.failed("the worker process ended without an answer".to_string())
                });
                let _ = self.tx.send(last);
                return ControlFlow::Break(());
            }
        };
        match serde_json::from_str::<WorkerLine>(text) {
            Ok(WorkerLine::Refuted(h)) => {
                self.refuted.fetch_max(h, Ordering::Relaxed);
                ControlFlow::Continue(())
            }
            Ok(WorkerLine::Event(e @ (Event::Done(..) | Event::Failed(..)))) => {
                self.last = Some(e);
                ControlFlow::Break(())
            }
            Ok(WorkerLine::Event(e)) => {
                if let Event::Horizon(_, _, t) | Event::Candidate(_, _, t) = &e {
                    self.last_times = *t;
                }
                let _ = self.tx.send(e);
                ControlFlow::Continue(())
            }
            Err(e) => {
                self.last =
                    Some(self.failed(format!("unreadable line from the worker process: {e}")));
                ControlFlow::Break(())
            }
        }
    }

    fn failed(&self, msg: String) -> Event {
        Event::Failed(self.kind, msg, self.last_times)
    }
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
            write_line(&mut out, &WorkerLine::Refuted(now));
        }
        match event {
            Ok(e) => {
                let last = matches!(e, Event::Done(..) | Event::Failed(..));
                write_line(&mut out, &WorkerLine::Event(e));
                if last {
                    end(0);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => end(0),
        }
    }
}

fn write_line(out: &mut impl Write, wire: &WorkerLine) {
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
