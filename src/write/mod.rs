//! The only module that touches the user's files: confined reads and atomic, all-or-nothing
//! commits beneath a root (SPEC §7).
//!
//! Everything else in redline plans in memory and hands this module a list of [`Change`]s.
//!
//! - `confine`: every path is resolved beneath the root's directory fd with
//!   `openat2(RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS)` on Linux, else with one `openat(O_NOFOLLOW)`
//!   per component (symlinks followed hop by hop beneath the root); the last component is only
//!   ever touched by `*at` calls with one validated name, so a concurrent symlink swap cannot
//!   lead out.
//! - `atomic`: temp file next to the target (`O_TMPFILE` + `linkat` on Linux, else `O_EXCL`),
//!   owner, mode and xattrs copied, fsync before any rename.
//! - `journal`: the undo journal that makes a batch all-or-nothing across `kill -9`, and the
//!   recovery that rolls it back or forward.
//! - `commit`: the commit protocol itself (`RENAME_EXCHANGE`, or a hard link where there is no
//!   exchange, keeps every old file reachable until the commit record is durable).
//! - `sys`: the calls that differ between operating systems, and `REDLINE_PORTABLE_WRITER=1`,
//!   which forces the portable path on Linux for testing.
//!
//! Writers on one root serialize with `flock` on the root directory itself: it is never replaced,
//! lives outside every target, needs no lock file and is released by the kernel on `kill -9`.

mod atomic;
mod commit;
mod confine;
mod error;
mod journal;
mod sys;

use crate::error::{Code, WarningCode};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::path::{Path, PathBuf};

pub use error::{FsError, FsErrorKind, NotRegular, Outside, Stale, Step};
pub use journal::{RecoveryAction, RecoveryReport};
pub use sys::PORTABLE_ENV;

/// Name of the hidden directory that holds the journal while a commit runs. It exists only
/// between the start of a commit and its cleanup (or the next recovery); paths into it are
/// refused.
pub(crate) const JOURNAL_DIR: &str = ".redline-journal";

/// Limits that bound what one request can cost (time and memory linear in them).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Files larger than this are `too_large` (also the buffer `filter` reads on stdin).
    pub max_file_size: u64,
    /// Requests larger than this many bytes are `too_large` (request files, stdin, one `serve`
    /// or `mcp` message).
    pub max_request_size: u64,
    /// Requests with more edits than this (over all files; a Codex hunk counts as one) are
    /// `too_large`.
    pub max_edits: usize,
}

/// Default `--max-file-size`.
pub(crate) const DEFAULT_MAX_FILE_SIZE: u64 = 256 * 1024 * 1024;
/// Default `--max-edits`.
pub(crate) const DEFAULT_MAX_EDITS: usize = 10_000;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            max_request_size: DEFAULT_MAX_FILE_SIZE,
            max_edits: DEFAULT_MAX_EDITS,
        }
    }
}

/// What a file looked like when it was read; re-checked under the writer lock before commit.
///
/// The content hash is authoritative; the metadata identifies the inode (a rename-replace shows
/// up as a new `ino`) and lets a caller see a change without re-reading.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fingerprint {
    /// `sha256:<hex>` of the whole file.
    pub version: String,
    /// Size in bytes.
    pub len: u64,
    /// Device id of the filesystem holding the file.
    pub dev: u64,
    /// Inode number (a rename-replace shows up as a new one).
    pub ino: u64,
    /// Modification and status-change times, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Status-change time (ctime), nanoseconds since the epoch.
    pub ctime_ns: i64,
    /// The file's last change was older than the read by more than the filesystem's timestamp
    /// granularity: any later write gets a later ctime, so an unchanged `(dev, ino, size, mtime,
    /// ctime)` proves the content unchanged without hashing it again (see `commit::verify`).
    pub settled: bool,
}

/// A file's content and fingerprint, read beneath the root.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The file's whole content as read.
    pub bytes: Vec<u8>,
    /// What the file looked like when `bytes` were read.
    pub fingerprint: Fingerprint,
    /// Number of hard links to the file (> 1: a write breaks the link, with a warning).
    pub nlink: u64,
    /// The file's permission bits.
    pub mode: u32,
    /// True when the path was a symlink (inside the root) and this is its target's content.
    pub via_symlink: bool,
    /// Where the content lives, relative to the root (the symlink's target when `via_symlink`).
    pub target_rel: PathBuf,
}

/// What [`Root::probe`] saw at a path: device, inode, size, mtime, ctime and mode of what is
/// there (`None`: nothing), or the code of why it could not be looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Probe(Result<Option<[i64; 6]>, Code>);

/// The state a change requires of its path right before commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// The path must not exist.
    Absent,
    /// The path must still have this content.
    Unchanged(Fingerprint),
    /// Anything (an overwrite of whatever is there).
    Any,
}

/// The bytes a caller read of a file, still in its memory: the content its [`Fingerprint`] was
/// taken of, as a head and a tail (a document's BOM and text). A commit given them checks a file
/// that was not settled by comparing its content with them, instead of hashing it again.
#[derive(Debug, Clone, Copy)]
pub struct Held<'a> {
    /// The first bytes (a BOM, or empty).
    pub head: &'a [u8],
    /// The rest.
    pub tail: &'a [u8],
}

impl Held<'_> {
    /// Total length in bytes.
    pub fn len(&self) -> u64 {
        (self.head.len() + self.tail.len()) as u64
    }

    /// Whether there are no bytes at all.
    pub fn is_empty(&self) -> bool {
        self.head.is_empty() && self.tail.is_empty()
    }
}

/// A file's whole new content: bytes of its own, or pieces the caller holds, written one after
/// the other and never joined (a plan's text with its replacements spliced in costs no second
/// copy of the file). Converts from a `Vec<u8>`.
#[derive(Debug, Clone)]
pub struct Content<'a> {
    parts: Parts<'a>,
    /// The sum of the parts' lengths, counted once (size checks ask for it).
    len: u64,
}

#[derive(Debug, Clone)]
enum Parts<'a> {
    Owned(Vec<u8>),
    Pieces(Vec<&'a [u8]>),
}

impl<'a> Content<'a> {
    /// The concatenation of `pieces`, in order (any may be empty).
    pub fn pieces(pieces: Vec<&'a [u8]>) -> Content<'a> {
        let len = pieces.iter().map(|p| p.len() as u64).sum();
        Content {
            parts: Parts::Pieces(pieces),
            len,
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are no bytes at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes, in pieces, in order.
    pub fn parts(&self) -> impl Iterator<Item = &[u8]> {
        let (one, many): (Option<&[u8]>, &[&[u8]]) = match &self.parts {
            Parts::Owned(b) => (Some(b), &[]),
            Parts::Pieces(p) => (None, p),
        };
        one.into_iter().chain(many.iter().copied())
    }

    /// Whether these are exactly the bytes `held`, compared piece by piece (never joined).
    pub fn same_as(&self, held: Held<'_>) -> bool {
        let mut at = 0;
        self.len == held.len()
            && self.parts().all(|part| {
                let same = atomic::held_at(held, at, part);
                at += part.len() as u64;
                same
            })
    }

    /// The bytes, joined.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len as usize);
        self.parts().for_each(|p| out.extend_from_slice(p));
        out
    }
}

impl From<Vec<u8>> for Content<'_> {
    fn from(bytes: Vec<u8>) -> Self {
        Content {
            len: bytes.len() as u64,
            parts: Parts::Owned(bytes),
        }
    }
}

/// One change of a batch. A move is a `Write` of the destination plus a `Delete` of the source.
#[derive(Debug, Clone)]
pub enum Change<'a> {
    /// Write `content` to the path (creating or replacing the file).
    Write {
        /// The path as the request wrote it.
        path: String,
        /// The file's whole new content.
        content: Content<'a>,
        /// What the path must hold right before commit.
        expect: Expect,
    },
    /// Remove the file at the path.
    Delete {
        /// The path as the request wrote it.
        path: String,
        /// What the path must hold right before commit.
        expect: Expect,
    },
}

impl Change<'_> {
    /// The path the change is to, as the request wrote it.
    pub fn path(&self) -> &str {
        match self {
            Change::Write { path, .. } | Change::Delete { path, .. } => path,
        }
    }
}

/// A warning about one path produced while committing (worded at the edge, by
/// `report::message::commit_warning`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitWarning {
    /// The replaced file had other hard links, which keep the old content.
    HardLinksReplaced {
        /// The path as the request wrote it.
        path: String,
        /// How many links the file had.
        count: u64,
    },
}

impl CommitWarning {
    /// The path as the request wrote it.
    #[must_use]
    pub fn path(&self) -> &str {
        match self {
            CommitWarning::HardLinksReplaced { path, .. } => path,
        }
    }

    /// The stable wire code.
    #[must_use]
    pub fn code(&self) -> WarningCode {
        match self {
            CommitWarning::HardLinksReplaced { .. } => WarningCode::HardLinkBroken,
        }
    }
}

/// The outcome of a successful commit.
#[derive(Debug, Clone, Default)]
pub struct CommitReport {
    /// Warnings about committed paths.
    pub warnings: Vec<CommitWarning>,
    /// The batch is committed and visible, but an fsync after the commit point failed: it may
    /// not survive a power loss. Never reported as success silently, never retried.
    pub durability_unknown: bool,
    /// What the commit found to recover before starting, if anything.
    pub recovered: Option<RecoveryReport>,
}

/// A failed commit: what failed, and whether everything was rolled back.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{error}")]
pub struct CommitError {
    /// The first failure, on the path it happened to.
    pub error: FsError,
    /// What was rolled back (SPEC §5 exit 3; worded by `report::message`).
    pub rolled_back: RolledBack,
}

/// What a failed commit did to the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RolledBack {
    /// It failed before writing anything.
    NothingWritten,
    /// An earlier interrupted commit could not be recovered, so nothing new was written.
    RecoveryFailed,
    /// The root's writer lock could not be taken, or an earlier interrupted commit could not be
    /// recovered before this one: nothing was written.
    NotLocked,
    /// It failed before any file was replaced; its temporary files were removed.
    TempsRemoved,
    /// Every file was restored.
    Restored {
        /// How many changes were undone.
        changes: usize,
    },
    /// Rolling back failed; the journal is kept for `redline recover`.
    Failed(Box<FsError>),
}

/// Proof that the root's writer lock is held: an exclusive `flock` on the root directory.
///
/// Dropping it (or the process dying) releases the lock.
#[derive(Debug)]
pub struct WriterLock {
    fd: OwnedFd,
    dev: u64,
    ino: u64,
    /// [`Root::recover`] ran under this lock since its last commit began: nothing is left to
    /// recover (only a writer holding the lock leaves records), so that commit need not look.
    recovered: std::sync::atomic::AtomicBool,
}

/// The directory every path resolves beneath, held open for the lifetime of the value.
#[derive(Debug)]
pub struct Root {
    fd: std::sync::Arc<OwnedFd>,
    /// Canonical absolute path of the root, as the kernel names the open directory when first
    /// asked (for absolute request paths, symlinks and messages; never used to open anything).
    /// Looked up lazily: a request of relative paths to files in the root never needs it, and
    /// the lookup (`/proc/self/fd`) costs as much as the rest of opening the root.
    dir: std::sync::OnceLock<PathBuf>,
    /// The root as the user spelled it, made absolute lexically (`--root` through a symlink):
    /// absolute request paths under either spelling are inside.
    spelled: PathBuf,
    dev: u64,
    ino: u64,
    /// Size limits every read and write beneath this root enforces.
    pub limits: Limits,
    /// The portable writer path is forced ([`PORTABLE_ENV`], read when the root is opened):
    /// no `openat2`, exchange, no-replace rename or `O_TMPFILE` even where the OS has them.
    portable: bool,
}

impl Root {
    /// Opens `dir` as the root.
    pub fn open(dir: &Path, limits: Limits) -> Result<Root, FsError> {
        let shown = dir.display().to_string();
        let fd = rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| FsError::sys(&shown, Step::OpenRootDir, e))?;
        let st = rustix::fs::fstat(&fd).map_err(|e| FsError::sys(&shown, Step::StatRootDir, e))?;
        let spelled = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        Ok(Root {
            fd: fd.into(),
            dir: std::sync::OnceLock::new(),
            spelled,
            dev: sys::dev_ino(&st).0,
            ino: sys::dev_ino(&st).1,
            limits,
            portable: sys::portable_forced(),
        })
    }

    /// Whether this root uses the portable writer path because `REDLINE_PORTABLE_WRITER` forced
    /// it (other operating systems use it without being asked).
    pub fn portable_forced(&self) -> bool {
        self.portable
    }

    /// The root directory.
    pub fn dir(&self) -> &Path {
        // The name of the directory actually opened, as the kernel sees it.
        self.dir.get_or_init(|| {
            confine::fd_path(self.fd.as_fd())
                .or_else(|| std::fs::canonicalize(&self.spelled).ok())
                .unwrap_or_else(|| self.spelled.clone())
        })
    }

    /// The path relative to the root that `path` names, lexically; `outside_root` if it leaves.
    ///
    /// This is for display and bookkeeping; confinement is enforced again by the kernel when
    /// the file is opened.
    pub(crate) fn relative(&self, path: &str) -> Result<PathBuf, FsError> {
        // A relative path needs no root path (only an absolute one is judged against it).
        let absolute = Path::new(path).is_absolute();
        let dir = if absolute { self.dir() } else { Path::new("") };
        match confine::normalize(dir, path.as_ref()) {
            Err(_) if absolute && self.spelled != self.dir() => {
                confine::normalize(&self.spelled, path.as_ref()).map_err(|m| m.at(path))
            }
            r => r.map_err(|m| m.at(path)),
        }
    }

    /// Whether `path` exists beneath the root (a regular file), without reading it.
    pub fn exists(&self, path: &str) -> Result<bool, FsError> {
        let rel = self.relative(path)?;
        let target = confine::resolve_target(self, &rel, true).map_err(|m| m.at(path))?;
        match target.stat {
            None => Ok(false),
            Some(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => Ok(true),
            Some(st) => Err(not_a_file(path, &st)),
        }
    }

    /// What is at `path` now, from metadata alone (symlinks inside the root followed): two equal
    /// probes mean nothing replaced, wrote, created or removed the file in between (but for an
    /// in-place write of the same size within one timestamp tick, which the commit's content
    /// check still catches as `stale`).
    pub(crate) fn probe(&self, path: &str) -> Probe {
        let r = self
            .relative(path)
            .and_then(|rel| confine::resolve_target(self, &rel, true).map_err(|m| m.at(path)));
        Probe(
            r.map(|t| {
                t.stat.map(|st| {
                    [
                        st.st_dev as i64,
                        st.st_ino as i64,
                        st.st_size,
                        sys::stamps_ns(&st).0,
                        sys::stamps_ns(&st).1,
                        st.st_mode as i64,
                    ]
                })
            })
            .map_err(|e| e.code()),
        )
    }

    /// Reads a regular file beneath the root, following symlinks that stay inside it.
    pub fn read(&self, path: &str) -> Result<Snapshot, FsError> {
        self.read_hashing(path, true)
    }

    /// [`Root::read`] without hashing the content: the fingerprint's `version` is empty, and the
    /// caller sets it to [`crate::hash::version`] of the bytes (for hashing them while it does
    /// other work with them).
    pub(crate) fn read_unversioned(&self, path: &str) -> Result<Snapshot, FsError> {
        self.read_hashing(path, false)
    }

    fn read_hashing(&self, path: &str, hash: bool) -> Result<Snapshot, FsError> {
        let rel = self.relative(path)?;
        let target = confine::resolve_target(self, &rel, true).map_err(|m| m.at(path))?;
        let Some(st) = target.stat else {
            return Err(FsErrorKind::NoSuchFile.at(path));
        };
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(not_a_file(path, &st));
        }
        let dir = target.dir_fd(path)?;
        let (bytes, fingerprint, st) =
            atomic::read_regular(dir, &target.name, &st, &self.limits, path, hash)?;
        Ok(Snapshot {
            bytes,
            fingerprint,
            nlink: sys::nlink_mode(&st).0,
            mode: sys::nlink_mode(&st).1,
            via_symlink: target.via_symlink,
            target_rel: target.dir_rel.join(&target.name),
        })
    }

    /// Takes the root's writer lock, waiting for other writers.
    pub fn lock(&self) -> Result<WriterLock, FsError> {
        let shown = || self.dir().display().to_string();
        let fd = rustix::fs::openat(
            &self.fd,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| FsError::sys(&shown(), Step::OpenRootForLock, e))?;
        loop {
            match rustix::fs::flock(&fd, rustix::fs::FlockOperation::LockExclusive) {
                Ok(()) => break,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(FsError::sys(&shown(), Step::LockRoot, e)),
            }
        }
        Ok(WriterLock {
            fd,
            dev: self.dev,
            ino: self.ino,
            recovered: false.into(),
        })
    }

    /// Finishes or rolls back an interrupted commit. Safe to run twice, and safe to kill.
    pub fn recover(&self, lock: &WriterLock) -> Result<RecoveryReport, FsError> {
        self.check_lock(lock)?;
        let report = journal::recover(self)?;
        lock.recovered
            .store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(report)
    }

    /// Commits all changes or none. The caller holds the writer lock.
    pub fn commit(
        &self,
        lock: &WriterLock,
        changes: &[Change<'_>],
    ) -> Result<CommitReport, CommitError> {
        self.commit_held(lock, changes, &[])
    }

    /// [`Root::commit`], with `held[i]` the bytes the caller read for change `i` (those its
    /// `Expect::Unchanged` fingerprint was taken of), when it still holds them: a file that must
    /// be checked by content is then compared with them instead of hashed again (same verdict,
    /// a fraction of the time). Missing entries, or bytes whose length is not the fingerprint's,
    /// fall back to hashing.
    pub fn commit_held(
        &self,
        lock: &WriterLock,
        changes: &[Change<'_>],
        held: &[Option<Held<'_>>],
    ) -> Result<CommitReport, CommitError> {
        self.check_lock(lock).map_err(|error| CommitError {
            error,
            rolled_back: RolledBack::NothingWritten,
        })?;
        // A commit that fails may leave records for the next one: each commit uses the flag up.
        let recovered = lock
            .recovered
            .swap(false, std::sync::atomic::Ordering::Relaxed);
        commit::commit(self, changes, held, recovered)
    }

    fn check_lock(&self, lock: &WriterLock) -> Result<(), FsError> {
        let _ = lock.fd.as_fd();
        if lock.dev != self.dev || lock.ino != self.ino {
            return Err(FsErrorKind::ForeignLock.at(&self.dir().display().to_string()));
        }
        Ok(())
    }
}

/// `not_a_file` naming what the path is instead.
fn not_a_file(path: &str, st: &rustix::fs::Stat) -> FsError {
    let kind = match FileType::from_raw_mode(st.st_mode) {
        FileType::Directory => NotRegular::Directory,
        FileType::Fifo => NotRegular::Fifo,
        FileType::CharacterDevice => NotRegular::CharacterDevice,
        FileType::BlockDevice => NotRegular::BlockDevice,
        FileType::Socket => NotRegular::Socket,
        FileType::Symlink => NotRegular::Symlink,
        _ => NotRegular::Other,
    };
    FsErrorKind::NotRegular(kind).at(path)
}

/// `statat` without following a final symlink; `None` when nothing is there.
fn lstat_at(
    dir: impl AsFd,
    name: &std::ffi::OsStr,
) -> rustix::io::Result<Option<rustix::fs::Stat>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(st)),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::{Content, Held};

    /// A content's pieces, cut anywhere (empty ones among them), are the bytes held exactly
    /// when their concatenation is; an owned content likewise.
    #[test]
    fn content_is_compared_with_held_bytes_piece_by_piece() {
        let all: &[u8] = b"\xEF\xBB\xBFabc\ndef\n";
        let held = Held {
            head: &all[..3],
            tail: &all[3..],
        };
        for i in 0..=all.len() {
            for j in i..=all.len() {
                let c = Content::pieces(vec![&all[..i], b"", &all[i..j], &all[j..]]);
                assert_eq!(c.len(), all.len() as u64);
                assert_eq!(c.to_vec(), all);
                assert!(c.same_as(held), "{i} {j}");
                let mut other = all.to_vec();
                if j < all.len() {
                    other[j] ^= 1;
                    let c = Content::pieces(vec![&other[..i], &other[i..]]);
                    assert!(!c.same_as(held), "{i} {j}");
                }
                // Shorter and longer.
                let c = Content::pieces(vec![&all[..i], &all[j..]]);
                assert_eq!(c.same_as(held), i == j, "{i} {j}");
                let c = Content::pieces(vec![&all[..i], b"x", &all[i..]]);
                assert!(!c.same_as(held), "{i} {j}");
            }
        }
        assert!(Content::from(all.to_vec()).same_as(held));
        assert!(!Content::from(all[1..].to_vec()).same_as(held));
        assert!(Content::pieces(Vec::new()).same_as(Held {
            head: b"",
            tail: b""
        }));
        assert!(Content::pieces(Vec::new()).is_empty());
    }
}
