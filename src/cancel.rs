//! Cooperative cancellation of long work on a thread: a caller runs work
//! [`within`] a flag, and the loops that can run long (grounding's joins)
//! look at it now and then ([`requested`]) and stop with an error of their
//! own. Why: an engine built in the background for a match that ended, or
//! that a faster engine made pointless, would otherwise keep a core busy
//! until its limits stop it; threads cannot be killed, and passing a flag
//! through every layer of preparation would change every signature on the
//! way.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

thread_local! {
    static FLAG: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Runs `f` on this thread with `flag` as its cancel flag: once the flag is
/// set, [`requested`] answers true inside `f`. The flag that was in force
/// before is in force again after.
pub fn within<R>(flag: Arc<AtomicBool>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Arc<AtomicBool>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let old = self.0.take();
            FLAG.with(|f| *f.borrow_mut() = old);
        }
    }
    let _restore = Restore(FLAG.with(|f| f.borrow_mut().replace(flag)));
    f()
}

/// Whether the work this thread runs has been cancelled.
pub fn requested() -> bool {
    FLAG.with(|f| {
        f.borrow()
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_holds_inside_its_scope_only() {
        let flag = Arc::new(AtomicBool::new(false));
        assert!(!requested());
        within(Arc::clone(&flag), || {
            assert!(!requested());
            flag.store(true, Ordering::Relaxed);
            assert!(requested());
            let other = Arc::new(AtomicBool::new(false));
            within(other, || assert!(!requested()));
            assert!(requested());
        });
        assert!(!requested());
    }
}
