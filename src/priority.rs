//! Scheduling priority of the solver's own threads: how a portfolio that
//! runs more workers than the machine has cores gives the cores to the one
//! that should have them.
//!
//! Only lowering is offered: an unprivileged process may raise its nice
//! value but never lower it again, so a thread that steps back stays back.

/// How far a worker steps back behind one that should keep its core: nice
/// 5 weighs a third of a normal thread, so the one in front keeps most of its
/// core and those behind share the rest (and every core it leaves idle). In
/// `solve`'s auto mode, every worker but the incremental one steps back so.
pub const BEHIND: i32 = 5;

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
