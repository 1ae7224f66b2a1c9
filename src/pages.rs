//! Whole-file buffers the kernel backs with huge pages where it can.
//!
//! A buffer the size of a big file is fresh memory every time (the command line fixes glibc's
//! mmap threshold, so each one is mapped on its own: see `faces::return_big_blocks`), and
//! filling it takes one page fault per 4 KiB: on this project's test machine ~0.8 ms per MB, as
//! much as reading the file from the page cache, and again when the buffer is unmapped. Asking
//! for transparent huge pages (`MADV_HUGEPAGE`, which Linux honours when THP is `madvise` or
//! `always`) makes that one fault per 2 MiB: copying 12 MB into a fresh buffer took 9.8–12 ms
//! with 4 KiB pages and 2–4 ms with the advice. Only the 2 MiB-aligned part of the buffer inside
//! it is advised, so no page outside the buffer becomes resident; elsewhere, or when the kernel
//! refuses, the buffer is an ordinary one.
//!
//! Buffers over [`ADVISED_UP_TO`] get no huge pages: on the same machine (a VM whose free memory
//! goes back to its host) a 100 MB apply with huge pages spent 387 ms of system time against 169
//! without, zeroing fresh 2 MiB pages (`clear_page_erms`) costing more than the faults saved,
//! where a 12 MB one went from 24 to 16 ms. Their 4 KiB pages are faulted in by one system call
//! instead ([`populate`]).

/// Buffers under this many bytes are left alone (they hold at most one aligned huge page).
const ADVISED: usize = 4 << 20;
/// Buffers over this many bytes are left alone (module docs).
const ADVISED_UP_TO: usize = 32 << 20;

/// A byte vector with room for `capacity` bytes, huge-page backed when it is big.
pub(crate) fn bytes(capacity: usize) -> Vec<u8> {
    let v = Vec::with_capacity(capacity);
    advise(v.as_ptr(), v.capacity());
    v
}

/// A string with room for `capacity` bytes, huge-page backed when it is big.
pub(crate) fn string(capacity: usize) -> String {
    let s = String::with_capacity(capacity);
    advise(s.as_ptr(), s.capacity());
    s
}

/// Asks for huge pages over the aligned 2 MiB blocks of `len` bytes at `ptr`, before anything
/// is written there.
fn advise(ptr: *const u8, len: usize) {
    if len > ADVISED_UP_TO {
        populate(ptr, len);
        return;
    }
    if len < ADVISED {
        return;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const HUGE: usize = 2 << 20;
        let start = (ptr as usize).next_multiple_of(HUGE);
        let end = (ptr as usize + len) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside one live allocation of this process (aligned
            // inward), and MADV_HUGEPAGE only changes how the kernel backs those pages: it
            // neither moves nor changes their content. A refusal (no THP) changes nothing.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = ptr;
}

/// Faults in the pages of `len` bytes at `ptr` in one system call (`MADV_POPULATE_WRITE`, Linux
/// 5.14), before a copy fills them: one page fault per 4 KiB from user space costs more than the
/// kernel's walk. On this project's test machine, a 100 MB buffer populated and then filled by
/// `memcpy` took 37 ms against 47 ms faulted in by the copy (a `read` into it gained nothing:
/// the kernel's copy faults as cheaply). Elsewhere, or on an older kernel, nothing happens.
fn populate(ptr: *const u8, len: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const PAGE: usize = 4096;
        let start = (ptr as usize).next_multiple_of(PAGE);
        let end = (ptr as usize + len) / PAGE * PAGE;
        if end > start {
            // SAFETY: the range lies inside one live allocation of this process (aligned
            // inward), and MADV_POPULATE_WRITE only faults its pages in as a write would,
            // without changing any byte of them. A refusal (an older kernel) changes nothing.
            unsafe {
                libc::madvise(
                    start as *mut libc::c_void,
                    end - start,
                    libc::MADV_POPULATE_WRITE,
                );
            }
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = (ptr, len);
}

#[cfg(test)]
mod tests {
    #[test]
    fn buffers_hold_what_is_asked() {
        for cap in [0, 10, (4 << 20) - 1, 4 << 20, (9 << 20) + 17] {
            let mut v = super::bytes(cap);
            assert!(v.capacity() >= cap);
            v.resize(cap, 7);
            assert!(v.iter().all(|&b| b == 7));
            let mut s = super::string(cap);
            assert!(s.capacity() >= cap);
            s.extend(std::iter::repeat_n('a', cap));
            assert_eq!(s.len(), cap);
        }
    }
}
