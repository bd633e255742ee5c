//! Scheduling priority of the solver's own threads: how a portfolio that
//! runs more workers than the machine has cores gives the cores to the one
//! that should have them.
//!
//! Only lowering is offered: an unprivileged process may raise its nice
//! value but never lower it again, so a thread that steps back stays back.
//! A worker that another overtakes is therefore sent further back
//! ([`FAR_BEHIND`], [`lower_thread_to`], [`lower_process_to`]), since the
//! one in front cannot be moved forward.

/// How far a worker steps back behind one that should keep its core: nice
/// 5 weighs a third of a normal thread, so the one in front keeps most of its
/// core and those behind share the rest (and every core it leaves idle). In
/// `solve`'s auto mode, every worker but the incremental one steps back so.
pub const BEHIND: i32 = 5;

/// The nice value of a worker another has overtaken: in `solve`'s auto
/// mode, every worker but the breadth-first search once its pattern
/// databases have carried its bound past the others' (see
/// [`crate::asp::SolveContext::lead`]). Nice 10 weighs a third of nice 5, so
/// the search in front (at [`BEHIND`]) keeps most of a core.
pub const FAR_BEHIND: i32 = 10;

/// Lowers the calling thread's scheduling priority by `steps` nice levels,
/// so that it runs on what the other threads leave. Best effort: where the
/// system refuses, nothing changes (the thread only competes as before).
pub fn step_back(steps: i32) {
    // On Linux the nice value belongs to the thread (NPTL), and `nice`
    // changes the calling thread's only; elsewhere it is the process's,
    // which would slow every worker alike: leave it.
    #[cfg(target_os = "linux")]
    // SAFETY: `nice` takes a plain integer and touches no memory of ours.
    unsafe {
        libc::nice(steps);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = steps;
}

/// The calling thread's id, as [`lower_thread_to`] takes it (0 where
/// threads cannot be named so).
pub fn thread_id() -> i32 {
    #[cfg(target_os = "linux")]
    // SAFETY: `gettid` takes nothing and cannot fail.
    unsafe {
        libc::gettid()
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// Lowers thread `tid` of this machine to nice `nice`, unless it is there
/// or further back already. Best effort, like [`step_back`]: a thread gone
/// or a refusal changes nothing. Whether it was lowered.
pub fn lower_thread_to(tid: i32, nice: i32) -> bool {
    #[cfg(target_os = "linux")]
    {
        if tid <= 0 {
            return false;
        }
        // SAFETY: plain integers in, no memory of ours touched. getpriority
        // returns the nice value itself, so -1 is told from an error by
        // errno, cleared first.
        unsafe {
            *libc::__errno_location() = 0;
            let now = libc::getpriority(libc::PRIO_PROCESS, tid as libc::id_t);
            if now == -1 && *libc::__errno_location() != 0 {
                return false;
            }
            if now >= nice {
                return false;
            }
            libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (tid, nice);
        false
    }
}

/// Lowers every thread of process `pid` to nice `nice` ([`lower_thread_to`]
/// for each of its threads: on Linux a nice value is a thread's, and
/// clingo's solver threads run beside the one that started them). The
/// number of threads lowered.
pub fn lower_process_to(pid: u32, nice: i32) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(|t| t.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&tid| lower_thread_to(tid, nice))
        .count()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_thread_is_lowered_once_and_never_raised() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            tx.send(thread_id()).unwrap();
            let _ = done_rx.recv();
            // SAFETY: as in lower_thread_to.
            unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
        });
        let tid = rx.recv().unwrap();
        assert!(tid > 0);
        // SAFETY: as in lower_thread_to.
        let before = unsafe { libc::getpriority(libc::PRIO_PROCESS, tid as libc::id_t) };
        if before >= 19 {
            done_tx.send(()).unwrap();
            return; // nowhere further back to go
        }
        let target = (before + 3).min(19);
        assert!(lower_thread_to(tid, target));
        // At its level already, and a higher priority is never asked for.
        assert!(!lower_thread_to(tid, target));
        assert!(!lower_thread_to(tid, before));
        done_tx.send(()).unwrap();
        assert_eq!(t.join().unwrap(), target);
    }

    #[test]
    fn a_process_gone_lowers_nothing() {
        assert_eq!(lower_process_to(u32::MAX, FAR_BEHIND), 0);
        assert!(!lower_thread_to(0, FAR_BEHIND));
    }
}
