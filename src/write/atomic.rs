//! Reading a regular file without blocking, and preparing a complete, synced temp file next to
//! a target: the building blocks of the commit protocol.

use super::{Content, Fingerprint, FsError, FsErrorKind, Held, Limits, Step};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{FileType, Mode, OFlags, Stat};
use rustix::io::Errno;
use std::ffi::OsStr;

/// Flags for opening an existing file for reading: never follow a symlink that was swapped in,
/// never block on a FIFO, never become a controlling terminal.
const READ_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// A failed system call and what it was doing.
pub(super) type Failure = (Step, Errno);

/// Opens the regular file `name` in `dir` for reading; it must still be the inode `expected`.
pub(super) fn open_existing(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    expected: &Stat,
) -> Result<(OwnedFd, Stat), Failure> {
    let fd = rustix::fs::openat(dir, name, READ_FLAGS, Mode::empty())
        .map_err(|e| (Step::OpenFile, e))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| (Step::StatFile, e))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
        || st.st_ino != expected.st_ino
        || st.st_dev != expected.st_dev
    {
        // Replaced between the lookup and the open.
        return Err((Step::Reopened, Errno::AGAIN));
    }
    Ok((fd, st))
}

/// Reads a whole regular file, checking the size limit; retries while a writer changes it.
/// Without `hash`, the fingerprint's version is left empty for the caller to fill in.
pub(super) fn read_regular(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    st: &Stat,
    limits: &Limits,
    path: &str,
    hash: bool,
) -> Result<(Vec<u8>, Fingerprint, Stat), FsError> {
    let mut expected = *st;
    let started = now_ns();
    for _ in 0..5 {
        check_size(path, expected.st_size as u64, limits)?;
        let (fd, before) = match open_existing(dir, name, &expected) {
            Ok(x) => x,
            Err((_, Errno::AGAIN)) => {
                expected = match super::lstat_at(dir, name) {
                    Ok(Some(s)) if FileType::from_raw_mode(s.st_mode) == FileType::RegularFile => s,
                    Ok(Some(s)) => return Err(super::not_a_file(path, &s)),
                    Ok(None) => {
                        return Err(FsErrorKind::RemovedWhileRead.at(path));
                    }
                    Err(e) => return Err(FsError::sys(path, Step::LookUpFile, e)),
                };
                continue;
            }
            Err((action, e)) => return Err(FsError::sys(path, action, e)),
        };
        let size = Some(before.st_size.max(0) as u64);
        let bytes = read_all(&fd, size, limits.max_file_size).map_err(|e| match e {
            Errno::FBIG => too_large(path, limits),
            e => FsError::sys(path, Step::ReadFile, e),
        })?;
        let after = rustix::fs::fstat(&fd).map_err(|e| FsError::sys(path, Step::StatFile, e))?;
        if same_version(&before, &after) && after.st_size as u64 == bytes.len() as u64 {
            let mut fp = fingerprint(&after, started);
            fp.len = bytes.len() as u64;
            if hash {
                fp.version = crate::hash::version(&bytes);
            }
            return Ok((bytes, fp, after));
        }
        expected = after;
    }
    Err(FsErrorKind::KeptChanging.at(path))
}

fn too_large(path: &str, limits: &Limits) -> FsError {
    FsErrorKind::TooLarge {
        limit: limits.max_file_size,
    }
    .at(path)
}

/// `too_large` when `len` is over the limit.
pub(super) fn check_size(path: &str, len: u64, limits: &Limits) -> Result<(), FsError> {
    if len > limits.max_file_size {
        Err(too_large(path, limits))
    } else {
        Ok(())
    }
}

/// The fingerprint of content read from a file whose `fstat` after reading was `st`, the read
/// having started at `started` (ns since the epoch, wall clock), but for the content's version
/// (left empty).
fn fingerprint(st: &Stat, started: i64) -> Fingerprint {
    let (mtime_ns, ctime_ns) = super::sys::stamps_ns(st);
    Fingerprint {
        version: String::new(),
        len: st.st_size.max(0) as u64,
        dev: super::sys::dev_ino(st).0,
        ino: super::sys::dev_ino(st).1,
        mtime_ns,
        ctime_ns,
        settled: settled(mtime_ns, ctime_ns, started),
    }
}

/// Whether a file last changed at `mtime_ns`/`ctime_ns` was settled when a read began at
/// `started`: its stamps older than that by more than one timestamp granule plus the lag of the
/// kernel's coarse clock behind the wall clock. Then a write after the read cannot get the same
/// ctime, and ctime cannot be set from user space. Linux stamps files from a clock that ticks
/// at most every 10 ms (HZ=100); 100 ms covers that with room. Whole-second stamps (ext3, FAT,
/// some network filesystems) get 3 s. A file changed just before it was read is not settled: it
/// is hashed again at commit (the "racy clean" case git handles the same way). Stamps from a
/// server whose clock runs behind ours (NFS) can defeat this; we accept that, as git does.
fn settled(mtime_ns: i64, ctime_ns: i64, started: i64) -> bool {
    let whole_seconds = mtime_ns % 1_000_000_000 == 0 && ctime_ns % 1_000_000_000 == 0;
    let margin: i64 = if whole_seconds {
        3_000_000_000
    } else {
        100_000_000
    };
    mtime_ns.max(ctime_ns).saturating_add(margin) < started
}

/// The wall clock, ns since the epoch (0 if it is before 1970: then nothing is settled).
pub(super) fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// Same inode with the same size, mtime and ctime: nobody wrote to it in between. (ctime cannot
/// be set from user space, so restoring an mtime does not hide a change.)
pub(super) fn same_version(a: &Stat, b: &Stat) -> bool {
    a.st_dev == b.st_dev
        && a.st_ino == b.st_ino
        && a.st_size == b.st_size
        && (a.st_mtime, a.st_mtime_nsec) == (b.st_mtime, b.st_mtime_nsec)
        && (a.st_ctime, a.st_ctime_nsec) == (b.st_ctime, b.st_ctime_nsec)
}

/// Reads to the end; `FBIG` past `limit` bytes. `size`: the file's size from an `fstat` the
/// caller just made of `fd` (else one is made here).
pub(super) fn read_all(fd: &OwnedFd, size: Option<u64>, limit: u64) -> Result<Vec<u8>, Errno> {
    // Read straight into a buffer sized from the inode (one byte over, to see the end without
    // growing): no bounce buffer to copy from, and no doubling, which would hold up to 3x the
    // file at once. Only a file that grew since the `fstat` makes it grow. A big one is backed
    // by huge pages (see `crate::pages`).
    let size = size
        .unwrap_or_else(|| rustix::fs::fstat(fd).map_or(0, |st| st.st_size.max(0) as u64))
        .min(limit);
    let mut out = crate::pages::bytes(size as usize + 1);
    loop {
        if out.len() == out.capacity() {
            out.reserve(64 * 1024);
        }
        match rustix::io::read(fd, rustix::buffer::spare_capacity(&mut out)) {
            Ok(0) => return Ok(out),
            Ok(_) => {
                if out.len() as u64 > limit {
                    return Err(Errno::FBIG);
                }
            }
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// The version ([`crate::hash::version`]) of everything left to read, read in chunks through
/// one small buffer: checking a file costs no buffer of its size. `FBIG` past `limit` bytes.
/// `size` (the file's size at `fstat`) sizes the buffer, so a small file costs no 256 KiB one.
pub(super) fn version_of(fd: &OwnedFd, size: u64, limit: u64) -> Result<String, Errno> {
    let mut v = crate::hash::Versioner::default();
    let len = size.saturating_add(1).clamp(4096, 256 * 1024) as usize;
    let mut buf = vec![0u8; len];
    let mut total = 0u64;
    loop {
        match rustix::io::read(fd, &mut buf[..]) {
            Ok(0) => return Ok(v.finish()),
            Ok(n) => {
                total += n as u64;
                if total > limit {
                    return Err(Errno::FBIG);
                }
                v.update(&buf[..n]);
            }
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Whether everything left to read is exactly `held`, read in chunks through one small buffer
/// as [`version_of`] reads (and like it, to the end: `FBIG` past `limit` bytes). The verdict
/// [`version_of`] gives by comparing hashes, from comparing the bytes themselves.
pub(super) fn same_content(
    fd: &OwnedFd,
    size: u64,
    held: Held<'_>,
    limit: u64,
) -> Result<bool, Errno> {
    let len = size.saturating_add(1).clamp(4096, 256 * 1024) as usize;
    let mut buf = vec![0u8; len];
    let mut total = 0u64;
    let mut same = true;
    loop {
        match rustix::io::read(fd, &mut buf[..]) {
            Ok(0) => return Ok(same && total == held.len()),
            Ok(n) => {
                same = same && held_at(held, total, &buf[..n]);
                total += n as u64;
                if total > limit {
                    return Err(Errno::FBIG);
                }
            }
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Whether `held`'s bytes at `offset` are `chunk` (false when `held` ends before it does).
pub(super) fn held_at(held: Held<'_>, offset: u64, chunk: &[u8]) -> bool {
    let Ok(mut at) = usize::try_from(offset) else {
        return false;
    };
    let mut rest = chunk;
    for part in [held.head, held.tail] {
        if at >= part.len() {
            at -= part.len();
            continue;
        }
        let n = rest.len().min(part.len() - at);
        if part[at..at + n] != rest[..n] {
            return false;
        }
        rest = &rest[n..];
        at = 0;
        if rest.is_empty() {
            return true;
        }
    }
    rest.is_empty()
}

/// Writes everything, looping on short writes (one `write` stops at 2 GiB) and EINTR.
pub(super) fn write_all(fd: &OwnedFd, bytes: &[u8]) -> Result<(), Errno> {
    write_parts(fd, std::iter::once(bytes))
}

/// The most slices one `writev` takes on Linux, macOS and the BSDs (more is `EINVAL`; POSIX
/// only promises 16, but no system redline runs on has fewer than this).
const IOV_MAX: usize = 1024;

/// Writes the concatenation of `parts`, in order, with `writev` of up to [`IOV_MAX`] slices at
/// a time, looping on short writes (one call stops at 2 GiB) and EINTR as [`write_all`] does.
/// Empty parts are skipped, so a write of nothing is never asked for (0 written is then an
/// error, as for `write`).
pub(super) fn write_parts<'p>(
    fd: &OwnedFd,
    parts: impl IntoIterator<Item = &'p [u8]>,
) -> Result<(), Errno> {
    use std::io::IoSlice;
    let mut parts = parts.into_iter().filter(|p| !p.is_empty()).peekable();
    let mut batch: Vec<IoSlice<'p>> = Vec::new();
    while parts.peek().is_some() {
        batch.clear();
        batch.extend(parts.by_ref().take(IOV_MAX).map(IoSlice::new));
        let mut rest = &mut batch[..];
        while !rest.is_empty() {
            match rustix::io::writev(fd, rest) {
                Ok(0) => return Err(Errno::IO),
                // Drops the slices written whole and the written start of the next.
                Ok(n) => IoSlice::advance_slices(&mut rest, n),
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// The file a temp replaces, whose metadata the temp takes over.
pub(super) struct Original<'a> {
    pub fd: &'a OwnedFd,
    pub stat: &'a Stat,
}

/// Creates `tmp_name` in `dir` holding exactly `content`, with the original's owner, mode and
/// xattrs (or default permissions for a new file), synced to disk. Returns its `fstat`.
///
/// On Linux (unless `portable`) uses `O_TMPFILE` + `linkat` when the filesystem and `/proc`
/// allow, so a crash while writing leaves nothing behind; else, and on every other OS, an
/// `O_CREAT|O_EXCL|O_NOFOLLOW` name. Either way the name is the journal's, so recovery finds it.
/// `before_link` runs right before the name appears, with the temp's inode when already known
/// (`O_TMPFILE`); it returns false to stop (its own error is the caller's to report). On error
/// the caller removes `tmp_name` (it may exist).
pub(super) fn create_temp(
    portable: bool,
    dir: BorrowedFd<'_>,
    tmp_name: &OsStr,
    content: &Content<'_>,
    original: Option<Original<'_>>,
    mut before_link: impl FnMut(Option<u64>) -> bool,
) -> Result<Stat, Failure> {
    // 0600 until the original's mode is copied; a new file gets 0666 less the umask.
    let mode = Mode::from_raw_mode(if original.is_some() { 0o600 } else { 0o666 });
    #[cfg(target_os = "linux")]
    if !portable
        && let Some(done) =
            linked_tmpfile(dir, tmp_name, content, &original, mode, &mut before_link)
    {
        return done;
    }
    let _ = portable;
    if !before_link(None) {
        return Err(STOPPED);
    }
    let fd = rustix::fs::openat(
        dir,
        tmp_name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        mode,
    )
    .map_err(|e| (Step::CreateTempInDir, e))?;
    fill(&fd, content, &original)
}

/// The failure when `before_link` stopped the temp from getting its name.
const STOPPED: Failure = (Step::RecordTemp, Errno::IO);

/// Linux: an `O_TMPFILE` filled and synced, then linked at `tmp_name` through `/proc`. `None`
/// when the filesystem has no `O_TMPFILE` or there is no `/proc` (then the caller uses a name).
#[cfg(target_os = "linux")]
fn linked_tmpfile(
    dir: BorrowedFd<'_>,
    tmp_name: &OsStr,
    content: &Content<'_>,
    original: &Option<Original<'_>>,
    mode: Mode,
    before_link: &mut impl FnMut(Option<u64>) -> bool,
) -> Option<Result<Stat, Failure>> {
    let fd = match rustix::fs::openat(
        dir,
        ".",
        OFlags::WRONLY | OFlags::TMPFILE | OFlags::CLOEXEC,
        mode,
    ) {
        Ok(fd) => fd,
        // The filesystem has no O_TMPFILE.
        Err(Errno::OPNOTSUPP) | Err(Errno::ISDIR) | Err(Errno::INVAL) | Err(Errno::NOENT) => {
            return None;
        }
        Err(e) => return Some(Err((Step::CreateTempInDir, e))),
    };
    let st = match fill(&fd, content, original) {
        Ok(st) => st,
        Err(f) => return Some(Err(f)),
    };
    if !before_link(Some(st.st_ino)) {
        return Some(Err(STOPPED));
    }
    // The descriptor itself where the kernel lets its opener link it (Linux 6.10 and later,
    // or with CAP_DAC_READ_SEARCH): tens of µs less than the walk through `/proc` below
    // (`strace -T` medians of 30 one-line applies here: 36 and 67 µs against 89 and 81).
    // Anywhere it refuses, the `/proc` link gives the answer.
    let empty = rustix::fs::AtFlags::EMPTY_PATH;
    if rustix::fs::linkat(fd.as_fd(), "", dir, tmp_name, empty).is_ok() {
        return Some(Ok(st));
    }
    use std::os::fd::AsRawFd;
    let proc_path = format!("/proc/self/fd/{}", fd.as_raw_fd());
    match rustix::fs::linkat(
        rustix::fs::CWD,
        proc_path.as_str(),
        dir,
        tmp_name,
        rustix::fs::AtFlags::SYMLINK_FOLLOW,
    ) {
        Ok(()) => Some(Ok(st)),
        // No /proc: fall back to a named temp.
        Err(Errno::NOENT) | Err(Errno::ACCESS) | Err(Errno::PERM) => None,
        Err(e) => Some(Err((Step::LinkTemp, e))),
    }
}

/// Content, then owner (chown clears setuid/setgid), then mode, then xattrs, then fsync. An
/// fsync error is final: it is never retried (a second fsync can "succeed" after lost pages).
/// Returns the temp's `fstat` taken after the write (its inode is what the caller needs; its
/// owner and mode are the ones before they were copied).
fn fill(
    fd: &OwnedFd,
    content: &Content<'_>,
    original: &Option<Original<'_>>,
) -> Result<Stat, Failure> {
    {
        // Background work makes way while the bytes are written (see `busy`).
        let _busy = crate::busy::Busy::hold();
        write_parts(fd, content.parts()).map_err(|e| (Step::WriteTemp, e))?;
    }
    let st = rustix::fs::fstat(fd).map_err(|e| (Step::StatTheTemp, e))?;
    if let Some(orig) = original {
        if st.st_uid != orig.stat.st_uid || st.st_gid != orig.stat.st_gid {
            use rustix::fs::{Gid, Uid};
            rustix::fs::fchown(
                fd,
                Some(Uid::from_raw(orig.stat.st_uid)),
                Some(Gid::from_raw(orig.stat.st_gid)),
            )
            .map_err(|e| (Step::Chown, e))?;
        }
        rustix::fs::fchmod(fd, Mode::from_raw_mode(orig.stat.st_mode & 0o7777))
            .map_err(|e| (Step::Chmod, e))?;
        copy_xattrs(orig.fd.as_fd(), fd.as_fd());
    }
    rustix::fs::fsync(fd).map_err(|e| (Step::SyncTemp, e))?;
    Ok(st)
}

/// Copies extended attributes (user.*, POSIX ACLs, security labels) where the filesystem and
/// our privileges allow; ones that cannot be set are skipped. Linux and macOS only (the BSDs'
/// `extattr` interface is not used: their extended attributes are not copied).
#[cfg(any(target_os = "linux", target_vendor = "apple"))]
fn copy_xattrs(from: BorrowedFd<'_>, to: BorrowedFd<'_>) {
    use std::os::unix::ffi::OsStrExt;
    // Most files have none: the list is read into a small buffer first, and only a longer one
    // into one of the list's limit (64 KiB), so a file without any allocates nothing.
    let mut small = [0u8; 256];
    let mut big: Vec<u8> = Vec::new();
    let list = match rustix::fs::flistxattr(from, &mut small[..]) {
        Ok(0) => return,
        Ok(n) => &small[..n],
        Err(Errno::RANGE) => {
            big.resize(64 * 1024, 0);
            let Ok(n) = rustix::fs::flistxattr(from, &mut big[..]) else {
                return;
            };
            &big[..n]
        }
        Err(_) => return,
    };
    let mut value = vec![0u8; 64 * 1024];
    for name in list.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = OsStr::from_bytes(name);
        if let Ok(len) = rustix::fs::fgetxattr(from, name, &mut value[..]) {
            let _ = rustix::fs::fsetxattr(to, name, &value[..len], rustix::fs::XattrFlags::empty());
        }
    }
}

#[cfg(not(any(target_os = "linux", target_vendor = "apple")))]
fn copy_xattrs(_from: BorrowedFd<'_>, _to: BorrowedFd<'_>) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn held<'a>(head: &'a [u8], tail: &'a [u8]) -> Held<'a> {
        Held { head, tail }
    }

    #[test]
    fn held_bytes_at_any_offset_across_head_and_tail() {
        let h = held(b"\xEF\xBB\xBF", b"abc");
        let all = b"\xEF\xBB\xBFabc";
        for at in 0..=all.len() {
            for end in at..=all.len() {
                assert!(held_at(h, at as u64, &all[at..end]), "{at}..{end}");
            }
            if at < all.len() {
                let mut wrong = all[at..].to_vec();
                *wrong.last_mut().unwrap() ^= 1;
                assert!(!held_at(h, at as u64, &wrong), "{at}");
            }
            // Past the end of what is held.
            let mut longer = all[at..].to_vec();
            longer.push(b'x');
            assert!(!held_at(h, at as u64, &longer), "{at}");
        }
        assert!(held_at(held(b"", b"xy"), 1, b"y"));
        assert!(!held_at(held(b"", b""), 0, b"y"));
    }

    /// More slices than one `writev` takes, empty ones among them (a batch's worth of nothing
    /// but empty ones first), short ones and a 3 MB one: the file is exactly their
    /// concatenation.
    #[test]
    fn pieces_are_written_as_their_concatenation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 241) as u8).collect();
        let mut parts: Vec<&[u8]> = vec![b""; IOV_MAX + 7];
        for i in 0..5_000 {
            let n = i % 7;
            parts.push(&big[i * 11..i * 11 + n]);
            if i % 3 == 0 {
                parts.push(b"");
            }
        }
        parts.push(&big);
        parts.push(b"");
        parts.push(b"tail");
        assert!(parts.len() > 3 * IOV_MAX);
        let fd: OwnedFd = std::fs::File::create(&path).unwrap().into();
        write_parts(&fd, parts.iter().copied()).unwrap();
        drop(fd);
        assert_eq!(std::fs::read(&path).unwrap(), parts.concat());

        // Nothing at all (no call that asks to write nothing), and one slice, as `write_all`.
        let fd: OwnedFd = std::fs::File::create(&path).unwrap().into();
        write_parts(&fd, [&b""[..], b""]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"");
        write_all(&fd, &big[..100_000]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), &big[..100_000]);
    }

    #[test]
    fn same_content_reads_to_the_end() {
        let dir = std::env::temp_dir().join(format!("redline-same-content-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let body: Vec<u8> = (0..700_000u32).map(|i| (i % 251) as u8).collect();
        let check = |content: &[u8], limit: u64| {
            std::fs::write(&path, content).unwrap();
            let fd: OwnedFd = std::fs::File::open(&path).unwrap().into();
            same_content(
                &fd,
                content.len() as u64,
                held(&body[..5], &body[5..]),
                limit,
            )
        };
        assert_eq!(check(&body, u64::MAX), Ok(true));
        let mut changed = body.clone();
        changed[699_999] ^= 1;
        assert_eq!(check(&changed, u64::MAX), Ok(false));
        changed = body.clone();
        changed[300_000] ^= 1;
        assert_eq!(check(&changed, u64::MAX), Ok(false));
        assert_eq!(check(&body[..699_999], u64::MAX), Ok(false));
        let mut longer = body.clone();
        longer.push(0);
        assert_eq!(check(&longer, u64::MAX), Ok(false));
        // Past the limit, whatever the content: as `version_of`.
        assert_eq!(check(&body, 600_000), Err(Errno::FBIG));
        assert_eq!(check(&changed, 600_000), Err(Errno::FBIG));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
