//! clingo as this crate uses it: the process-wide lock every caller holds while
//! it calls clingo, clingo's errors as plain messages, and new controls. The
//! solver's workers ([`super::solve`]), the invariant search
//! ([`super::invariants`]) and [`super::Program`] all go through here, so none
//! of them depends on another for its access to clingo.

use std::sync::{Mutex, MutexGuard};

use clingo::Control;

/// A clingo error as a plain message.
pub(super) type Res<T> = Result<T, String>;

/// The clingo library of this crate (5.4) keeps one symbol table for the process
/// and does not guard it against two threads at once (grounding in one thread
/// while another reads a model crashes it). Whoever calls clingo holds this
/// lock; a solver worker lets it go only while waiting for a search to finish,
/// so the searches themselves run in parallel.
static CLINGO: Mutex<()> = Mutex::new(());

/// Holds clingo for the calling thread (see [`CLINGO`]).
pub(super) fn lock() -> MutexGuard<'static, ()> {
    CLINGO.lock().unwrap_or_else(|e| e.into_inner())
}

/// A clingo error as a plain message, with clingo's own last message when it
/// has one.
pub(super) fn err(e: clingo::ClingoError) -> String {
    match e {
        clingo::ClingoError::InternalError { msg, last, .. } => format!("clingo: {msg}: {last}"),
        other => format!("clingo: {other}"),
    }
}

/// A new control with clingo's warnings off and `args` after.
pub(super) fn new(args: &[String]) -> Res<Control> {
    let mut all = vec!["--warn=none".to_string()];
    all.extend(args.iter().cloned());
    clingo::control(all).map_err(err)
}
