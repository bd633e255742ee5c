//! Child processes run one way: a [`Spec`] names the command and how to run
//! it, [`Spec::spawn`] starts it as a [`Running`] child, and the child is
//! killed when the value that holds it is dropped, so that a caller that
//! gives up (a STOP, a newer run, the end of a solve) never leaves a process
//! behind.
//!
//! What the runner owns, for every caller (the player's solver child,
//! `bench solve`'s child per game, the solver's clingo workers):
//!
//! - the pipes: stdin null or piped; stderr discarded, relayed line by line
//!   as progress events ([`progress!`](crate::progress)), or handed line by
//!   line to a callback; stdout either streamed line by line to a callback
//!   ([`Running::stream`], a line protocol) or read whole, its last JSON line
//!   read into a typed answer ([`Running::answer`], [`Running::answer_later`]);
//! - a watchdog: past its wall-clock limit a child that has not ended is
//!   killed while its answer is awaited, and the answer is an error that says
//!   so;
//! - an optional address-space limit, set in the child before it runs, so a
//!   grounding blow-up fails inside the child instead of swapping the machine;
//! - errors that say which child failed and how: it could not start, it
//!   overran, it died or printed no answer, its answer does not read.
//!
//! A child is one process, not a group: the solver's own workers end when
//! their stdin closes, which the death of their parent does.

use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use tracing::warn;

/// How often a waiting watchdog looks at its child.
const POLL: Duration = Duration::from_millis(50);
/// How long the child's stdout may stay open after it has ended (a grandchild
/// holding the pipe) before the answer is given up.
const OUTPUT_GRACE: Duration = Duration::from_secs(5);
/// How long a streamed child's end waits for the rest of its stderr (it
/// closes as the child ends, which a child does right after its last word).
const STDERR_GRACE: Duration = Duration::from_millis(500);

/// What becomes of the child's stderr.
pub enum Stderr {
    /// Dropped.
    Discard,
    /// Each line as a progress event: the executable prints it as the child
    /// wrote it (above its spinner when one runs).
    Progress,
    /// Each line to the callback, on a thread of its own.
    Lines(Box<dyn FnMut(&str) + Send>),
}

/// A line of the child's stdout, as [`Running::stream`] hands it on.
pub enum Line<'a> {
    Text(&'a str),
    /// The last call: stdout closed (the child ended, or its output no
    /// longer reads) or the callback broke, and the child's stderr has been
    /// relayed to its end (or for [`STDERR_GRACE`]), so that what the child
    /// said before its last word is never said after it.
    End,
}

/// A command and how to run it.
pub struct Spec {
    cmd: Command,
    what: String,
    stdin: bool,
    stderr: Stderr,
    wall: Option<Duration>,
    address_space_mb: Option<u64>,
    nice: i32,
    log_as: Option<String>,
    threads: String,
}

impl Spec {
    /// `cmd` run as a child called `what` in errors ("the solver"): stdin
    /// null, stderr discarded, no limits.
    pub fn new(cmd: Command, what: &str) -> Spec {
        Spec {
            cmd,
            what: what.to_string(),
            stdin: false,
            stderr: Stderr::Discard,
            wall: None,
            address_space_mb: None,
            nice: 0,
            log_as: None,
            threads: "child".to_string(),
        }
    }

    /// Runs the child `steps` nice levels below this process (set in the
    /// child before it runs; its threads inherit it), so that it takes only
    /// what the machine's other work leaves. Best effort: a system that
    /// refuses leaves the child at our priority.
    pub fn nice(mut self, steps: i32) -> Spec {
        self.nice = steps;
        self
    }

    /// Gives the child a stdin pipe ([`Running::take_stdin`]).
    pub fn stdin_piped(mut self) -> Spec {
        self.stdin = true;
        self
    }

    pub fn stderr(mut self, stderr: Stderr) -> Spec {
        self.stderr = stderr;
        self
    }

    /// Kills the child when it runs `limit` past its start while its answer
    /// is awaited.
    pub fn wall_limit(mut self, limit: Duration) -> Spec {
        self.wall = Some(limit);
        self
    }

    /// Limits the child's address space to `mb` MiB.
    pub fn address_space_mb(mut self, mb: u64) -> Spec {
        self.address_space_mb = Some(mb);
        self
    }

    /// Logs the watchdog's kill as a warning that starts with `tag`; without
    /// it the kill is only the answer's error.
    pub fn log_as(mut self, tag: &str) -> Spec {
        self.log_as = Some(tag.to_string());
        self
    }

    /// Names the threads that read the child's output `PREFIX-err`,
    /// `PREFIX-out` and `PREFIX-wait`.
    pub fn thread_names(mut self, prefix: &str) -> Spec {
        self.threads = prefix.to_string();
        self
    }

    /// Starts the child, and the thread that reads its stderr when there is
    /// one to read.
    pub fn spawn(self) -> Result<Running, Error> {
        let Spec {
            mut cmd,
            what,
            stdin,
            stderr,
            wall,
            address_space_mb,
            nice,
            log_as,
            threads,
        } = self;
        let fail = |failure| Error {
            what: what.clone(),
            failure,
        };
        cmd.stdin(if stdin { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(match stderr {
                Stderr::Discard => Stdio::null(),
                Stderr::Progress | Stderr::Lines(_) => Stdio::piped(),
            });
        if let Some(mb) = address_space_mb {
            limit_address_space(&mut cmd, mb);
        }
        if nice > 0 {
            lower_priority(&mut cmd, nice);
        }
        let mut child = cmd.spawn().map_err(|source| {
            fail(Failure::Spawn {
                program: PathBuf::from(cmd.get_program()),
                source,
            })
        })?;
        let started = Instant::now();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let err = child.stderr.take();
        let mut run = Running {
            watch: Watch {
                child: Arc::new(Mutex::new(child)),
                cancelled: Arc::new(AtomicBool::new(false)),
                deadline: wall.map(|w| started + w),
                what,
                log_as,
            },
            stdin,
            stdout,
            stderr_done: None,
            threads,
            started,
        };
        if let Some(err) = err {
            let (done, stderr_done) = mpsc::channel::<()>();
            run.stderr_done = Some(stderr_done);
            let mut on_line: Box<dyn FnMut(&str) + Send> = match stderr {
                Stderr::Lines(f) => f,
                _ => Box::new(|line: &str| crate::progress!("{line}")),
            };
            run.thread("err", move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    on_line(&line);
                }
                drop(done);
            })?;
        }
        Ok(run)
    }
}

/// A started child. Dropping it kills the child if it still runs.
pub struct Running {
    watch: Watch,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    /// Disconnected once the thread relaying stderr has seen its end.
    stderr_done: Option<Receiver<()>>,
    threads: String,
    started: Instant,
}

impl Running {
    pub fn pid(&self) -> u32 {
        self.watch.child().id()
    }

    /// The time since the child started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The child's stdin, once (see [`Spec::stdin_piped`]).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// Whether the child has ended (without waiting for it).
    pub fn has_ended(&self) -> bool {
        matches!(self.watch.child().try_wait(), Ok(Some(_)))
    }

    /// Hands each line of the child's stdout to `on_line` on a thread of its
    /// own, until `on_line` breaks or stdout closes, then [`Line::End`].
    pub fn stream(
        &mut self,
        mut on_line: impl FnMut(Line<'_>) -> ControlFlow<()> + Send + 'static,
    ) -> Result<(), Error> {
        let stdout = self.take_stdout()?;
        let stderr_done = self.stderr_done.take();
        self.thread("out", move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if on_line(Line::Text(&line)).is_break() {
                    break;
                }
            }
            if let Some(done) = stderr_done {
                let _ = done.recv_timeout(STDERR_GRACE);
            }
            let _ = on_line(Line::End);
        })
    }

    /// Waits for the child (killing it past its wall-clock limit) and reads
    /// the last line of its stdout that is a JSON object as the answer
    /// (anything printed before it is ignored).
    pub fn answer<T: DeserializeOwned>(mut self) -> Result<T, Error> {
        let stdout = self.take_stdout()?;
        let output = self.read_all(stdout)?;
        // Only a dropped run is cancelled: this one is held until it ends.
        self.watch
            .answer(&output)
            .unwrap_or_else(|| Err(self.watch.error(Failure::Gone)))
    }

    /// [`Running::answer`] on a thread of its own: the answer comes through
    /// the [`Pending`] value, which kills the child when dropped.
    pub fn answer_later<T: DeserializeOwned + Send + 'static>(
        mut self,
    ) -> Result<Pending<T>, Error> {
        let stdout = self.take_stdout()?;
        let output = self.read_all(stdout)?;
        let (tx, rx) = mpsc::channel();
        let watch = self.watch.clone();
        self.thread("wait", move || {
            // `None`: the run was dropped, nobody waits for an answer.
            if let Some(answer) = watch.answer(&output) {
                let _ = tx.send(answer);
            }
        })?;
        Ok(Pending {
            run: self,
            answer: rx,
        })
    }

    fn take_stdout(&mut self) -> Result<ChildStdout, Error> {
        self.stdout
            .take()
            .ok_or_else(|| self.watch.error(Failure::OutputTaken))
    }

    /// Reads all of `stdout` on a thread of its own: a child blocked on a
    /// full pipe would never end.
    fn read_all(&self, stdout: ChildStdout) -> Result<Receiver<io::Result<String>>, Error> {
        let (tx, rx) = mpsc::channel();
        self.thread("out", move || {
            let mut s = String::new();
            let r = BufReader::new(stdout).read_to_string(&mut s).map(|_| s);
            let _ = tx.send(r);
        })?;
        Ok(rx)
    }

    fn thread(&self, role: &str, f: impl FnOnce() + Send + 'static) -> Result<(), Error> {
        std::thread::Builder::new()
            .name(format!("{}-{role}", self.threads))
            .spawn(f)
            .map(|_| ())
            .map_err(|e| self.watch.error(Failure::Thread(e)))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.watch.cancelled.store(true, Ordering::Relaxed);
        let mut c = self.watch.child();
        if let Ok(None) = c.try_wait() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A child whose answer is awaited on a thread ([`Running::answer_later`]).
/// Dropping it kills the child.
pub struct Pending<T> {
    run: Running,
    answer: Receiver<Result<T, Error>>,
}

impl<T> Pending<T> {
    /// The answer once the child has ended; `None` while it runs.
    pub fn try_answer(&self) -> Option<Result<T, Error>> {
        match self.answer.try_recv() {
            Ok(a) => Some(a),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(self.run.watch.error(Failure::Gone))),
        }
    }

    pub fn pid(&self) -> u32 {
        self.run.pid()
    }

    pub fn elapsed(&self) -> Duration {
        self.run.elapsed()
    }
}

/// The child as its watchdog sees it: shared between the [`Running`] value
/// that kills it when dropped and the thread that waits for its answer.
#[derive(Clone)]
struct Watch {
    child: Arc<Mutex<Child>>,
    /// Set when the run is dropped: the watchdog leaves without an answer.
    cancelled: Arc<AtomicBool>,
    deadline: Option<Instant>,
    what: String,
    log_as: Option<String>,
}

impl Watch {
    fn child(&self) -> MutexGuard<'_, Child> {
        self.child.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn error(&self, failure: Failure) -> Error {
        Error {
            what: self.what.clone(),
            failure,
        }
    }

    /// The child's answer once it has ended, from its stdout read by
    /// `output`; `None` when the run was dropped first.
    fn answer<T: DeserializeOwned>(
        &self,
        output: &Receiver<io::Result<String>>,
    ) -> Option<Result<T, Error>> {
        let status = match self.wait()? {
            Ok(status) => status,
            Err(failure) => return Some(Err(self.error(failure))),
        };
        let answer = output
            .recv_timeout(OUTPUT_GRACE)
            .map_err(|_| Failure::OutputOpen)
            .and_then(|r| r.map_err(Failure::ReadOutput))
            .and_then(|out| read_answer(&out).map_err(|why| Failure::NoAnswer { status, why }));
        Some(answer.map_err(|f| self.error(f)))
    }

    /// The child's exit status, or why there is none; `None` when the run
    /// was dropped.
    fn wait(&self) -> Option<Result<ExitStatus, Failure>> {
        loop {
            if self.cancelled.load(Ordering::Relaxed) {
                return None;
            }
            let mut c = self.child();
            match c.try_wait() {
                Ok(Some(st)) => return Some(Ok(st)),
                Ok(None) if self.deadline.is_some_and(|d| Instant::now() >= d) => {
                    if let Some(tag) = &self.log_as {
                        warn!("{tag}: {} overran its timeout; killing it", self.what);
                    }
                    let _ = c.kill();
                    let _ = c.wait();
                    return Some(Err(Failure::Overran));
                }
                Ok(None) => {}
                Err(e) => return Some(Err(Failure::Wait(e))),
            }
            drop(c);
            std::thread::sleep(POLL);
        }
    }
}

/// Reads a child's stdout: the last line that is a JSON object, as a `T`.
pub fn read_answer<T: DeserializeOwned>(stdout: &str) -> Result<T, AnswerError> {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| AnswerError::NoJson(truncate(stdout, 200).to_string()))?;
    serde_json::from_str(line).map_err(|source| AnswerError::BadJson {
        source,
        line: truncate(line, 200).to_string(),
    })
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Why a child gave no answer: `what` names the child ("the solver").
#[derive(Debug)]
pub struct Error {
    pub what: String,
    pub failure: Failure,
}

/// How a child failed (see [`Error`]).
#[derive(Debug)]
pub enum Failure {
    Spawn {
        program: PathBuf,
        source: io::Error,
    },
    /// A thread to read its output or wait for it did not start.
    Thread(io::Error),
    /// It outlived its wall-clock limit and was killed.
    Overran,
    Wait(io::Error),
    /// It ended, but its stdout did not close.
    OutputOpen,
    ReadOutput(io::Error),
    /// Its stdout was already taken (read twice).
    OutputTaken,
    /// It ended without an answer that reads.
    NoAnswer {
        status: ExitStatus,
        why: AnswerError,
    },
    /// The thread waiting for its answer ended without one.
    Gone,
}

/// Why a child's stdout holds no answer.
#[derive(Debug)]
pub enum AnswerError {
    /// No JSON line (the start of stdout).
    NoJson(String),
    /// The last JSON line is not the answer's type.
    BadJson {
        source: serde_json::Error,
        line: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = &self.what;
        match &self.failure {
            Failure::Spawn { program, source } => {
                write!(f, "cannot start {}: {source}", program.display())
            }
            Failure::Thread(e) => write!(f, "cannot start a thread for {what}: {e}"),
            Failure::Overran => write!(f, "{what} overran its timeout and was killed"),
            Failure::Wait(e) => write!(f, "waiting for {what}: {e}"),
            Failure::OutputOpen => write!(f, "{what}'s output did not close"),
            Failure::ReadOutput(e) => write!(f, "reading {what}'s output: {e}"),
            Failure::OutputTaken => write!(f, "{what}'s output was read twice"),
            Failure::NoAnswer { status, why } => {
                write!(f, "{what} exited with {status}: ")?;
                match why {
                    AnswerError::NoJson(out) => {
                        write!(f, "{what} printed no JSON object (stdout: {out:?})")
                    }
                    AnswerError::BadJson { source, line } => write!(
                        f,
                        "{what}'s JSON does not match the contract: {source} ({line:?})"
                    ),
                }
            }
            Failure::Gone => write!(f, "{what}'s watchdog ended without a result"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.failure {
            Failure::Spawn { source, .. } => Some(source),
            Failure::Thread(e) | Failure::Wait(e) | Failure::ReadOutput(e) => Some(e),
            Failure::NoAnswer {
                why: AnswerError::BadJson { source, .. },
                ..
            } => Some(source),
            _ => None,
        }
    }
}

/// Limits the child's address space to `mb` MiB.
fn limit_address_space(cmd: &mut Command, mb: u64) {
    use std::os::unix::process::CommandExt;
    let bytes = mb.saturating_mul(1024 * 1024) as libc::rlim_t;
    // SAFETY: the closure runs in the forked child before exec and only calls
    // setrlimit, which is async-signal-safe; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Sets the child's nice value `steps` above ours before it runs.
fn lower_priority(cmd: &mut Command, steps: i32) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and only calls
    // `nice`, a system call wrapper; it allocates nothing. Its failure is
    // ignored (the child then runs at our priority).
    unsafe {
        cmd.pre_exec(move || {
            libc::nice(steps);
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Answer {
        n: u32,
    }

    fn sh(script: &str) -> Spec {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c").arg(script);
        Spec::new(cmd, "the child")
    }

    #[test]
    fn the_last_json_line_is_the_answer() {
        assert_eq!(
            read_answer::<Answer>("x\n{\"n\":1}\n{\"n\":2}\n")
                .unwrap()
                .n,
            2
        );
        assert!(matches!(
            read_answer::<Answer>("garbage"),
            Err(AnswerError::NoJson(_))
        ));
        assert!(matches!(
            read_answer::<Answer>("{\"m\":1}"),
            Err(AnswerError::BadJson { .. })
        ));
        let a: Answer = sh("echo progress; echo '{\"n\":7}'")
            .spawn()
            .unwrap()
            .answer()
            .unwrap();
        assert_eq!(a, Answer { n: 7 });
    }

    #[test]
    fn a_child_without_an_answer_says_how_it_ended() {
        let e = sh("echo garbage; exit 3")
            .spawn()
            .unwrap()
            .answer::<Answer>()
            .unwrap_err();
        assert!(matches!(e.failure, Failure::NoAnswer { .. }), "{e}");
        assert!(e.to_string().starts_with("the child exited with"), "{e}");
        let e = Spec::new(Command::new("/nonexistent/program"), "the child")
            .spawn()
            .err()
            .unwrap();
        assert!(matches!(e.failure, Failure::Spawn { .. }), "{e}");
    }

    #[test]
    fn the_watchdog_kills_a_child_past_its_limit() {
        let started = Instant::now();
        let e = sh("exec sleep 30")
            .wall_limit(Duration::from_millis(200))
            .spawn()
            .unwrap()
            .answer::<Answer>()
            .unwrap_err();
        assert!(matches!(e.failure, Failure::Overran), "{e}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn dropping_a_pending_run_kills_its_child() {
        let pending = sh("exec sleep 30")
            .spawn()
            .unwrap()
            .answer_later::<Answer>()
            .unwrap();
        let pid = pending.pid();
        assert!(pending.try_answer().is_none());
        drop(pending);
        // Killed and reaped: the process is gone.
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    }

    #[test]
    fn stdout_streams_and_stderr_goes_to_its_callback() {
        let (tx, rx) = mpsc::channel();
        let (err_tx, err_rx) = mpsc::channel();
        let mut run = sh("echo one; echo oops >&2; echo two")
            .stderr(Stderr::Lines(Box::new(move |l| {
                let _ = err_tx.send(l.to_string());
            })))
            .spawn()
            .unwrap();
        run.stream(move |line| {
            let _ = tx.send(match line {
                Line::Text(t) => t.to_string(),
                Line::End => "(end)".to_string(),
            });
            ControlFlow::Continue(())
        })
        .unwrap();
        let lines: Vec<String> = rx.iter().collect();
        assert_eq!(lines, ["one", "two", "(end)"]);
        // Relayed before the end.
        assert_eq!(err_rx.try_recv().unwrap(), "oops");
    }

    #[test]
    fn the_address_space_limit_holds_in_the_child() {
        let out: Answer = sh("echo \"{\\\"n\\\":$(ulimit -v)}\"")
            .address_space_mb(512)
            .spawn()
            .unwrap()
            .answer()
            .unwrap();
        assert_eq!(out.n, 512 * 1024);
    }
}
