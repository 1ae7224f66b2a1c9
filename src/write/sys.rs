//! The writer's system calls that differ between operating systems.
//!
//! Linux has `renameat2(RENAME_EXCHANGE|RENAME_NOREPLACE)`, `openat2(RESOLVE_BENEATH)` and
//! `O_TMPFILE`; macOS has `renameatx_np(RENAME_SWAP|RENAME_EXCL)`; the BSDs have none of them.
//! Every Linux-only call sits behind `#[cfg(target_os = "linux")]` and has a portable path that
//! is compiled everywhere (a per-component `O_NOFOLLOW` walk in `confine`, an `O_EXCL` temp name
//! in `atomic`, a hard link plus a rename under the journal in `commit`). Setting
//! [`PORTABLE_ENV`] to `1` forces the portable path on Linux too, so it is tested here.

use rustix::fd::BorrowedFd;
use rustix::io::Errno;
use std::ffi::OsStr;

/// The environment variable that forces the portable writer path (a testing and diagnostic
/// knob, read once when a root is opened).
pub const PORTABLE_ENV: &str = "REDLINE_PORTABLE_WRITER";

/// Whether [`PORTABLE_ENV`] asks for the portable path: set, non-empty and not `0`.
pub(super) fn portable_forced() -> bool {
    std::env::var_os(PORTABLE_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Whether an error from [`exchange`] or [`rename_noreplace`] means the OS or the filesystem
/// lacks the operation (then the caller's portable fallback runs).
pub(super) fn unsupported(e: Errno) -> bool {
    matches!(e, Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP)
}

/// Swaps the names `a` and `b` in `dir` atomically: `renameat2(RENAME_EXCHANGE)` on Linux,
/// `renameatx_np(RENAME_SWAP)` on macOS. `NOSYS` elsewhere or when the portable path is forced.
pub(super) fn exchange(
    portable: bool,
    dir: BorrowedFd<'_>,
    a: &OsStr,
    b: &OsStr,
) -> Result<(), Errno> {
    #[cfg(any(target_os = "linux", target_vendor = "apple"))]
    if !portable {
        return rustix::fs::renameat_with(dir, a, dir, b, rustix::fs::RenameFlags::EXCHANGE);
    }
    let _ = (portable, dir, a, b);
    Err(Errno::NOSYS)
}

/// Renames `from` to `to` in `dir`, failing with `EXIST` if `to` exists:
/// `renameat2(RENAME_NOREPLACE)` on Linux, `renameatx_np(RENAME_EXCL)` on macOS. `NOSYS`
/// elsewhere or when the portable path is forced.
pub(super) fn rename_noreplace(
    portable: bool,
    dir: BorrowedFd<'_>,
    from: &OsStr,
    to: &OsStr,
) -> Result<(), Errno> {
    #[cfg(any(target_os = "linux", target_vendor = "apple"))]
    if !portable {
        return rustix::fs::renameat_with(dir, from, dir, to, rustix::fs::RenameFlags::NOREPLACE);
    }
    let _ = (portable, dir, from, to);
    Err(Errno::NOSYS)
}

/// Device and inode of a `stat`, as `u64` whatever the platform's field types (`st_dev` is
/// `i32` on macOS).
#[allow(clippy::unnecessary_cast)]
pub(super) fn dev_ino(st: &rustix::fs::Stat) -> (u64, u64) {
    (st.st_dev as u64, st.st_ino as u64)
}

/// Modification and change times of a `stat` in nanoseconds since the epoch (the nanosecond
/// fields are `u64` in rustix's Linux `Stat` and `i64` in the libc `stat` elsewhere).
#[allow(clippy::unnecessary_cast)]
pub(super) fn stamps_ns(st: &rustix::fs::Stat) -> (i64, i64) {
    (
        ns(st.st_mtime as i64, st.st_mtime_nsec as i64),
        ns(st.st_ctime as i64, st.st_ctime_nsec as i64),
    )
}

/// Nanoseconds since the epoch from a seconds and nanoseconds pair.
fn ns(sec: i64, nsec: i64) -> i64 {
    sec.saturating_mul(1_000_000_000).saturating_add(nsec)
}

/// Link count and permission bits of a `stat` as `u64` and `u32` (`st_nlink` and `st_mode` are
/// `u16` on macOS).
#[allow(clippy::unnecessary_cast)]
pub(super) fn nlink_mode(st: &rustix::fs::Stat) -> (u64, u32) {
    (st.st_nlink as u64, st.st_mode as u32 & 0o7777)
}
