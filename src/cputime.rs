//! CPU-time clocks: how much work a thread, or another process, has done, read
//! from the kernel.
//!
//! Budgets that decide *which path* a computation takes (give up grounding,
//! race one engine against another, end a search phase) are measured here
//! rather than on the wall clock, so that a machine shared with a busy
//! process takes the same path as an idle one, only later. Real deadlines (a
//! player's clock, `--timeout`) stay on the wall clock: they are what the
//! user waits for.

use std::time::Duration;

fn clock(id: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both clock ids exist on
    // every Linux and BSD the crate builds on.
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// CPU time the calling thread has used.
pub fn thread() -> Duration {
    clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time this process has used, all its threads together.
pub fn process() -> Duration {
    clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU time another process of this machine has used (user and system, all
/// its threads), read from `/proc/PID/stat`; `None` when it cannot be read
/// (the process is gone, or the system has no `/proc`). Resolution: the
/// kernel's clock tick, usually 10 ms.
pub fn of_process(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces: fields count from
    // the last ')'. utime and stime are the 14th and 15th fields.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks <= 0 {
        return None;
    }
    Some(Duration::from_secs_f64(
        (utime + stime) as f64 / ticks as f64,
    ))
}

/// A stopwatch on the calling thread's CPU time: it runs only while the thread
/// runs. Read it from the thread that started it.
#[derive(Clone, Copy, Debug)]
pub struct ThreadWatch {
    start: Duration,
}

impl ThreadWatch {
    pub fn start() -> Self {
        ThreadWatch { start: thread() }
    }

    /// CPU time this thread has used since [`ThreadWatch::start`].
    pub fn elapsed(&self) -> Duration {
        thread().saturating_sub(self.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleeping_thread_uses_no_cpu_time_and_a_busy_one_does() {
        let w = ThreadWatch::start();
        std::thread::sleep(Duration::from_millis(30));
        assert!(w.elapsed() < Duration::from_millis(20), "{:?}", w.elapsed());
        let mut x = 0u64;
        while w.elapsed() < Duration::from_millis(5) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(x > 0);
        // This process, read as another would read it: at least this thread's
        // time, to the kernel's tick.
        let seen = of_process(std::process::id()).expect("/proc/self/stat");
        assert!(seen + Duration::from_millis(20) >= w.elapsed(), "{seen:?}");
    }
}
