//! The ASP solver as a child process: `ggp-asp solve FILE --json --timeout S
//! --memory-mb M --threads N`, isolated so that a grounding blow-up, a crash or an
//! endless solve inside clingo can never stall or kill the player. The child gets an
//! address-space limit, a watchdog kills it shortly after its own timeout, and it is
//! killed when its [`SolverRun`] is dropped (STOP, ABORT, a newer run, shutdown).

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tracing::{debug, warn};

use crate::asp::SolveResult;

/// How to run the solver.
#[derive(Clone, Debug)]
pub struct SolverConfig {
    /// The `ggp-asp` executable (the server's own, `std::env::current_exe()`).
    pub exe: PathBuf,
    /// The child's `--timeout`; the watchdog kills it [`WATCHDOG_GRACE`] later.
    pub timeout: Duration,
    /// The child's `--memory-mb`; its address space is limited to this plus
    /// [`ADDRESS_SPACE_HEADROOM_MB`].
    pub memory_mb: u64,
    pub threads: usize,
}

/// How long after its own timeout a silent child is killed.
pub const WATCHDOG_GRACE: Duration = Duration::from_secs(5);
/// Virtual memory beyond the solver's own limit (thread stacks and allocator
/// reservations count against an address-space limit without being used).
pub const ADDRESS_SPACE_HEADROOM_MB: u64 = 2048;

/// Reads a solver child's stdout: the last line that is a JSON object, the
/// answer `ggp-asp solve --json` prints (anything printed before it is
/// ignored).
pub fn read_result(stdout: &str) -> Result<SolveResult, String> {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| {
            format!(
                "the solver printed no JSON object (stdout: {:?})",
                truncate(stdout, 200)
            )
        })?;
    serde_json::from_str(line).map_err(|e| {
        format!(
            "the solver's JSON does not match the contract: {e} ({:?})",
            truncate(line, 200)
        )
    })
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// A running solver child. Dropping it kills the child.
pub struct SolverRun {
    child: Arc<Mutex<Child>>,
    cancelled: Arc<AtomicBool>,
    result: Receiver<Result<SolveResult, String>>,
    started: Instant,
    /// Holds the rules file until the run ends.
    _dir: tempfile::TempDir,
}

impl SolverRun {
    /// Writes `rules` (KIF) to a temporary file and starts the solver on it.
    pub fn start(rules: &str, cfg: &SolverConfig, label: &str) -> Result<SolverRun, String> {
        let dir = tempfile::Builder::new()
            .prefix("ggp-asp-solve-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
        let path = dir.path().join("game.kif");
        std::fs::write(&path, rules)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let mut cmd = Command::new(&cfg.exe);
        cmd.arg("solve")
            .arg(&path)
            .arg("--json")
            .arg("--timeout")
            .arg(format!("{}", cfg.timeout.as_secs_f64()))
            .arg("--memory-mb")
            .arg(cfg.memory_mb.to_string())
            .arg("--threads")
            .arg(cfg.threads.max(1).to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        limit_address_space(&mut cmd, cfg.memory_mb + ADDRESS_SPACE_HEADROOM_MB);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", cfg.exe.display()))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let child = Arc::new(Mutex::new(child));
        let cancelled = Arc::new(AtomicBool::new(false));

        // The solver's progress lines go to the log as they come.
        let tag = label.to_string();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                debug!(target: "ggp_asp::player::solver", "{tag}: solver: {line}");
            }
        });

        let (tx, rx) = mpsc::channel();
        let hard_deadline = Instant::now() + cfg.timeout + WATCHDOG_GRACE;
        let (child2, cancelled2, tag) = (
            Arc::clone(&child),
            Arc::clone(&cancelled),
            label.to_string(),
        );
        std::thread::spawn(move || {
            let (out_tx, out_rx) = mpsc::channel();
            std::thread::spawn(move || {
                let mut s = String::new();
                let r = BufReader::new(stdout).read_to_string(&mut s).map(|_| s);
                let _ = out_tx.send(r);
            });
            // Watchdog: wait for the child, kill it past its deadline or when cancelled.
            let status = loop {
                if cancelled2.load(Ordering::Relaxed) {
                    return;
                }
                let mut c = child2.lock().unwrap_or_else(|p| p.into_inner());
                match c.try_wait() {
                    Ok(Some(st)) => break Ok(st),
                    Ok(None) if Instant::now() >= hard_deadline => {
                        warn!("{tag}: the solver overran its timeout; killing it");
                        let _ = c.kill();
                        let _ = c.wait();
                        break Err("the solver overran its timeout and was killed".to_string());
                    }
                    Ok(None) => {}
                    Err(e) => break Err(format!("waiting for the solver: {e}")),
                }
                drop(c);
                std::thread::sleep(Duration::from_millis(50));
            };
            let stdout = out_rx
                .recv_timeout(Duration::from_secs(5))
                .map_err(|_| "the solver's output did not close".to_string())
                .and_then(|r| r.map_err(|e| format!("reading the solver's output: {e}")));
            let result = match (status, stdout) {
                (Err(e), _) | (_, Err(e)) => Err(e),
                (Ok(st), Ok(out)) => match read_result(&out) {
                    Ok(o) => Ok(o),
                    Err(e) => Err(format!("the solver exited with {st}: {e}")),
                },
            };
            let _ = tx.send(result);
        });
        Ok(SolverRun {
            child,
            cancelled,
            result: rx,
            started: Instant::now(),
            _dir: dir,
        })
    }

    /// The outcome once the child has ended; `None` while it runs.
    pub fn try_result(&self) -> Option<Result<SolveResult, String>> {
        match self.result.try_recv() {
            Ok(r) => Some(r),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                Some(Err("the solver's watchdog ended without a result".into()))
            }
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The child's process id (for tests that check it is gone).
    pub fn pid(&self) -> u32 {
        self.child.lock().unwrap_or_else(|p| p.into_inner()).id()
    }
}

impl Drop for SolverRun {
    fn drop(&mut self) {
        self.cancelled.store(true, Ordering::Relaxed);
        let mut c = self.child.lock().unwrap_or_else(|p| p.into_inner());
        if let Ok(None) = c.try_wait() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Limits the child's address space so a grounding blow-up fails inside the child
/// instead of swapping the machine.
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
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asp::Status;

    #[test]
    fn reads_the_contract_json() {
        let out = "progress\n{\"status\":\"solved\",\"goal\":100,\"steps\":2,\"plan\":[\"(move 2 3)\",\"noop\"],\"proven\":\"shortest\",\"mode\":\"full\",\"ground_s\":0.1,\"solve_s\":0.2,\"total_s\":0.3,\"message\":\"\"}\n";
        let o = read_result(out).unwrap();
        assert_eq!(o.status, Status::Solved);
        assert_eq!(o.goal, Some(100));
        assert_eq!(o.plan, vec!["(move 2 3)", "noop"]);
        let o = read_result("{\"status\":\"timeout\",\"goal\":null,\"steps\":null,\"plan\":[]}")
            .unwrap();
        assert_eq!(o.status, Status::Timeout);
        assert_eq!(o.goal, None);
        assert!(read_result("Segmentation fault").is_err());
        assert!(read_result("{\"goal\":1}").is_err());
    }
}
