//! Work on a request's critical path that background work makes way for, on machines with few
//! cores.
//!
//! A big apply runs work beside its main thread that only its response needs: the version of
//! the file as read (hashed while the edits are matched), the diffs and edit ranges of its
//! response (rendered while the new content is written). On a machine with two cores that work
//! takes a core the critical path wanted: the second half of a big text's scan, started on a
//! thread of its own, waited for the hashing's time slice and the halves ran one after the
//! other; the new content took twice as long to write. While a [`Busy`] is held, the hashing
//! waits at its next mark (every 256 KiB) and the rendering at its next write, and both
//! resume once the last is dropped; they still finish before the response needs them (the
//! hashing while the rest of the matching runs, the rendering while the disk syncs).
//!
//! Holders: the sampled scan while its two halves run (`engine::matcher::sampled`), the writer
//! while it writes a new file's bytes (`write::atomic`). Neither waits for background work, so
//! a wait always ends.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// How many [`Busy`] are held, in every thread of the process.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// How long a waiter sleeps before looking again.
const NAP: Duration = Duration::from_micros(100);

/// Critical work in progress (module docs).
pub(crate) struct Busy(());

impl Busy {
    pub(crate) fn hold() -> Busy {
        HELD.fetch_add(1, Ordering::SeqCst);
        Busy(())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        HELD.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Waits while any [`Busy`] is held.
pub(crate) fn wait() {
    wait_unless(&AtomicBool::new(false));
}

/// [`wait`], unless `stop` is or gets set; whether `stop` is still unset.
pub(crate) fn wait_unless(stop: &AtomicBool) -> bool {
    while HELD.load(Ordering::Relaxed) > 0 && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(NAP);
    }
    !stop.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiter_resumes_when_the_last_holder_is_gone_or_when_stopped() {
        let stop = AtomicBool::new(false);
        // Nothing held: no wait.
        assert!(wait_unless(&stop));
        wait();
        // Other tests in this process may hold one too (a big scan): each wait here only
        // gets longer, and the checks below hold whatever they do.
        let (a, b) = (Busy::hold(), Busy::hold());
        std::thread::scope(|s| {
            let w = s.spawn(wait);
            std::thread::sleep(Duration::from_millis(5));
            drop(a);
            std::thread::sleep(Duration::from_millis(5));
            assert!(!w.is_finished(), "one holder is left");
            drop(b);
            w.join().unwrap();
        });
        let held = Busy::hold();
        std::thread::scope(|s| {
            let w = s.spawn(|| wait_unless(&stop));
            std::thread::sleep(Duration::from_millis(5));
            stop.store(true, Ordering::Relaxed);
            assert!(!w.join().unwrap(), "stopped while held");
        });
        drop(held);
    }
}
