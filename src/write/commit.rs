//! The commit protocol: check, prepare, apply, commit point, clean up.
//!
//! Under the writer lock:
//! 1. **Check**: resolve every path beneath the root, verify every file whose fingerprint the
//!    caller expects (`stale` when it changed), refuse non-regular targets.
//! 2. **Prepare**: the intent record (no fsync, see [`journal`]) names the temps; missing parent
//!    directories are created and every new file is written to a temp next to its target,
//!    complete, with owner/mode/xattrs, fsynced. The user's files are untouched.
//! 3. A multi-file batch writes its **`Apply` journal** once (with the temps' inode numbers),
//!    durably, before the first rename. A single-file batch writes none: its one rename is its
//!    commit point.
//! 4. **Apply**, per change: modify = `renameat2(RENAME_EXCHANGE)` (the old file stays reachable
//!    at the temp name), create = `RENAME_NOREPLACE`, delete = rename to the temp name (over an
//!    empty placeholder made in step 2, so a directory swapped in cannot be taken). Right
//!    after each exchange the old inode is checked again: a writer that slipped in since the
//!    check makes the batch `stale` and it is undone. fsync the directories. Where there is no
//!    exchange (the BSDs, some filesystems, `REDLINE_PORTABLE_WRITER=1`) a modify first links
//!    the old file at the journal's `old` name, then renames the temp over the target; a create
//!    links the temp at the target (refused if it exists) and unlinks the temp. The journal
//!    names both, so recovery undoes either form.
//! 5. A multi-file batch renames its journal to `committed` and syncs the journal directory:
//!    the commit point. Then the old files are unlinked, their directories synced, and the
//!    journal removed. A failure before the commit point undoes everything; after it, the batch
//!    stands.
//!
//! fsyncs: one per new file, one per touched directory; a multi-file batch adds the root (the
//! journal directory's entry), the journal file and its directory twice, and its directories
//! once more after cleanup. A one-file edit costs two: the temp and its directory.

use super::atomic::{self, Original};
use super::confine::{self, DirFd, open_dir};
use super::journal::{self, Entry, Journal, Kind, Records, State, StoreError};
use super::sys::{self, unsupported};
use super::{
    Change, CommitError, CommitReport, CommitWarning, Content, Expect, FsError, FsErrorKind, Held,
    JOURNAL_DIR, RolledBack, Root, Stale, Step, lstat_at,
};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, OFlags, Stat};
use rustix::io::Errno;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// One checked change, ready to run.
struct Op<'a> {
    kind: Kind,
    path: &'a str,
    /// What a write writes (`None`: a delete).
    content: Option<&'a Content<'a>>,
    dir: Option<DirFd<'static>>,
    dir_rel: PathBuf,
    name: std::ffi::OsString,
    /// The target as checked (lstat for delete), and an open fd on it with its fstat then, to
    /// detect a write that lands between the check and the rename.
    old: Option<Stat>,
    old_fd: Option<(OwnedFd, Stat)>,
}

pub(super) fn commit(
    root: &Root,
    changes: &[Change<'_>],
    held: &[Option<Held<'_>>],
    recovered: bool,
) -> Result<CommitReport, CommitError> {
    let nothing = |error: FsError| CommitError {
        error,
        rolled_back: RolledBack::NothingWritten,
    };
    // Unless the caller just recovered under this lock.
    let recovered = if recovered {
        None
    } else {
        let r = journal::recover(root).map_err(|error| CommitError {
            error,
            rolled_back: RolledBack::RecoveryFailed,
        })?;
        (r.action != journal::RecoveryAction::Nothing).then_some(r)
    };
    if changes.is_empty() {
        return Ok(CommitReport {
            recovered,
            ..CommitReport::default()
        });
    }
    // The space of the files an earlier commit replaced is free before this one writes.
    released();
    let (mut ops, mkdirs, warnings) = check(root, changes, held).map_err(nothing)?;
    let single = ops.len() == 1;

    let txid = txid();
    let mut j = Journal {
        txid: txid.clone(),
        state: State::Prepare,
        mkdirs: mkdirs
            .iter()
            .map(|d| d.as_os_str().as_bytes().to_vec())
            .collect(),
        ops: ops
            .iter()
            .enumerate()
            .map(|(i, op)| Entry {
                kind: op.kind,
                path: op.path.to_string(),
                dir: op.dir_rel.as_os_str().as_bytes().to_vec(),
                // The root's own inode is known; any other directory is looked at.
                dir_ino: match &op.dir {
                    Some(_) if op.dir_rel.as_os_str().is_empty() => root.ino,
                    Some(d) => rustix::fs::fstat(d).map_or(0, |st| st.st_ino),
                    None => 0,
                },
                name: op.name.as_bytes().to_vec(),
                tmp: format!(".redline-{txid}-{i}.tmp").into_bytes(),
                old_name: format!(".redline-{txid}-{i}.old").into_bytes(),
                old_ino: op.old.map(|s| s.st_ino),
                new_ino: None,
            })
            .collect(),
    };
    // A single change that creates no directory keeps its intent in one file, written right
    // before its temp gets a name; anything else gets the journal directory. So does a delete:
    // its intent is rewritten once its placeholder exists, which the in-place file cannot do
    // without a window where a torn record loses track of it.
    let jdir = if single && mkdirs.is_empty() && ops[0].kind != Kind::Delete {
        Records::Intent
    } else {
        Records::Dir(journal::create_dir(root, !single).map_err(nothing)?)
    };
    let intent_now = matches!(jdir, Records::Dir(_)) || ops.iter().all(|o| o.content.is_none());
    if intent_now && let Err(e) = journal::store_intent(root, &jdir, &j) {
        return Err(undo(root, &ops, &j, jdir, e, RolledBack::NothingWritten));
    }

    // Prepare: directories and complete temps; the user's files are untouched.
    if let Err(e) = prepare(root, &mut ops, &mut j, &jdir, &mkdirs) {
        return Err(undo(root, &ops, &j, jdir, e, RolledBack::TempsRemoved));
    }
    if let Records::Dir(dir) = &jdir
        && !single
    {
        j.state = State::Apply;
        if let Err(StoreError::NotWritten(e) | StoreError::NotSynced(e)) =
            journal::store(root, dir, &j)
        {
            return Err(undo(root, &ops, &j, jdir, e, RolledBack::TempsRemoved));
        }
    }

    // Apply: each step reversible, the old files kept.
    let restored = RolledBack::Restored { changes: ops.len() };
    for (op, e) in ops.iter().zip(&j.ops) {
        if let Err(err) = apply(root.portable, op, e) {
            return Err(undo(root, &ops, &j, jdir, err, restored.clone()));
        }
    }
    let mut report = CommitReport {
        warnings,
        durability_unknown: false,
        recovered,
    };
    let held: Vec<_> = ops
        .iter()
        .map(|o| o.dir.as_ref().map(|d| d.as_fd()))
        .collect();
    let dirs: Vec<_> = ops.iter().filter_map(|o| o.dir.as_ref()).collect();
    if single {
        // The rename was the commit point: drop the old file, then one fsync of the directory
        // makes both the new name and the removal durable.
        if journal::roll_forward(root, &j, &held, false).is_err()
            || journal::sync_dirs(&dirs, Step::SyncDirs).is_err()
        {
            report.durability_unknown = true;
        }
        if journal::remove(root, jdir, false).is_err() {
            report.durability_unknown = true;
        }
        release(&mut ops);
        return Ok(report);
    }
    if let Err(err) = journal::sync_dirs(&dirs, Step::SyncDirs) {
        return Err(undo(root, &ops, &j, jdir, err, restored.clone()));
    }

    // The commit point.
    let Some(dir) = jdir.dir() else {
        // Unreachable: only a single-file commit keeps its records outside the directory.
        let err = FsErrorKind::NoJournalDirectory.at(JOURNAL_DIR);
        return Err(undo(root, &ops, &j, jdir, err, restored.clone()));
    };
    match journal::commit_point(root, dir) {
        Ok(()) => {}
        Err(StoreError::NotWritten(err)) => {
            return Err(undo(root, &ops, &j, jdir, err, restored.clone()));
        }
        Err(StoreError::NotSynced(_)) => report.durability_unknown = true,
    }
    // Cleanup. A failure leaves the journal, so the next recovery finishes it.
    if journal::roll_forward(root, &j, &held, true).is_err() {
        report.durability_unknown = true;
        return Ok(report);
    }
    if journal::remove(root, jdir, false).is_err() {
        report.durability_unknown = true;
    }
    release(&mut ops);
    Ok(report)
}

/// Replaced files of this many bytes or more are closed on a second thread (see [`release`]).
const RELEASE_APART: u64 = 1 << 20;

/// The thread closing the last replaced files, if any (see [`release`]).
static RELEASING: std::sync::Mutex<Option<std::thread::JoinHandle<()>>> =
    std::sync::Mutex::new(None);

/// Closes a committed batch's descriptors of the files it replaced or deleted, the big ones on
/// a second thread. Once their names are gone (and the directories synced), the last close of
/// such a file frees its blocks and its cached pages: ~3.8 ms for 12 MB here, ~30 ms for
/// 100 MB, which the response need not wait for. A file with other links is only closed.
/// The next commit in this process waits for that thread first ([`released`]), so the space
/// is free before it writes; a process that exits meanwhile frees the files in its exit.
fn release(ops: &mut [Op<'_>]) {
    let big: Vec<OwnedFd> = ops
        .iter_mut()
        .filter(|o| {
            o.old_fd.as_ref().is_some_and(|(_, st)| {
                st.st_size as u64 >= RELEASE_APART && super::sys::nlink_mode(st).0 <= 1
            })
        })
        .filter_map(|o| o.old_fd.take().map(|(fd, _)| fd))
        .collect();
    if big.is_empty() {
        return;
    }
    released();
    let mut slot = RELEASING.lock().unwrap_or_else(|p| p.into_inner());
    // A thread that cannot start leaves the closing to this one (the vector is dropped).
    *slot = std::thread::Builder::new()
        .name("release".into())
        .spawn(move || drop(big))
        .ok();
}

/// Waits for the files [`release`] is closing, if any.
fn released() {
    let pending = RELEASING.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(h) = pending {
        let _ = h.join();
    }
}

/// Undoes a failed commit from its journal; the error says what happened to the tree.
fn undo(
    root: &Root,
    ops: &[Op<'_>],
    j: &Journal,
    jdir: Records,
    error: FsError,
    done: RolledBack,
) -> CommitError {
    let held: Vec<_> = ops
        .iter()
        .map(|o| o.dir.as_ref().map(|d| d.as_fd()))
        .collect();
    let rolled_back = match journal::roll_back(root, j, &held)
        .and_then(|()| journal::remove(root, jdir, ops.len() > 1))
    {
        Ok(()) => done,
        Err(e) => RolledBack::Failed(Box::new(e)),
    };
    CommitError { error, rolled_back }
}

/// A transaction id unique among this machine's concurrent and past processes.
fn txid() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let pid = rustix::process::getpid().as_raw_nonzero().get() as u32;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let c = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{pid:x}-{:x}", nanos ^ ((c as u64) << 48))
}

type Checked<'a> = (Vec<Op<'a>>, Vec<PathBuf>, Vec<CommitWarning>);

/// Resolves every change and checks its expectation, touching nothing.
fn check<'a>(
    root: &Root,
    changes: &'a [Change<'_>],
    held: &[Option<Held<'_>>],
) -> Result<Checked<'a>, FsError> {
    let mut ops: Vec<Op<'a>> = Vec::new();
    let mut mkdirs: Vec<PathBuf> = Vec::new();
    let mut warnings = Vec::new();
    for (i, ch) in changes.iter().enumerate() {
        let path = ch.path();
        let held = held.get(i).copied().flatten();
        let rel = root.relative(path)?;
        let op = match ch {
            Change::Write {
                content, expect, ..
            } => {
                atomic::check_size(path, content.len(), &root.limits)?;
                let t = confine::resolve_target(root, &rel, true).map_err(|r| r.at(path))?;
                let old_fd = match (&t.stat, expect) {
                    (Some(st), _)
                        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile =>
                    {
                        return Err(super::not_a_file(path, st));
                    }
                    (Some(_), Expect::Absent) => {
                        return Err(stale(path, Stale::Appeared));
                    }
                    (None, Expect::Unchanged(_)) => {
                        return Err(stale(path, Stale::Deleted));
                    }
                    (None, _) => None,
                    (Some(st), expect) => {
                        let dir = t.dir_fd(path)?;
                        let (fd, fst) = verify(root, dir, &t.name, st, expect, held, path)?;
                        writable(dir, &t.name, path)?;
                        if fst.st_nlink > 1 {
                            warnings.push(CommitWarning::HardLinksReplaced {
                                path: path.to_string(),
                                count: super::sys::nlink_mode(&fst).0,
                            });
                        }
                        Some((fd, fst))
                    }
                };
                for d in &t.missing {
                    if !mkdirs.contains(d) {
                        mkdirs.push(d.clone());
                    }
                }
                Op {
                    kind: if t.stat.is_some() {
                        Kind::Modify
                    } else {
                        Kind::Create
                    },
                    path,
                    content: Some(content),
                    old: old_fd.as_ref().map(|(_, st)| *st),
                    old_fd,
                    dir: t.dir,
                    dir_rel: t.dir_rel,
                    name: t.name,
                }
            }
            Change::Delete { expect, .. } => {
                let t = confine::resolve_target(root, &rel, false).map_err(|r| r.at(path))?;
                let Some(st) = t.stat else {
                    return Err(FsErrorKind::NothingToDelete.at(path));
                };
                let dir = t.dir_fd(path)?;
                let old_fd = match FileType::from_raw_mode(st.st_mode) {
                    // A symlink is removed itself, whatever it points to.
                    FileType::Symlink => None,
                    FileType::RegularFile => {
                        Some(verify(root, dir, &t.name, &st, expect, held, path)?)
                    }
                    _ => return Err(super::not_a_file(path, &st)),
                };
                Op {
                    kind: Kind::Delete,
                    path,
                    content: None,
                    old: Some(st),
                    old_fd,
                    dir: t.dir,
                    dir_rel: t.dir_rel,
                    name: t.name,
                }
            }
        };
        let key = |o: &Op| (o.dir_rel.clone(), o.name.clone());
        if ops.iter().any(|o| key(o) == key(&op)) {
            return Err(FsErrorKind::SameFile.at(path));
        }
        ops.push(op);
    }
    Ok((ops, mkdirs, warnings))
}

fn stale(path: &str, how: Stale) -> FsError {
    FsErrorKind::Stale(how).at(path)
}

/// Opens the existing regular file and checks `expect` against its current content (compared
/// with `held`, the bytes the fingerprint was taken of, when the caller still has them; else
/// hashed).
fn verify(
    root: &Root,
    dir: rustix::fd::BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    st: &Stat,
    expect: &Expect,
    held: Option<Held<'_>>,
    path: &str,
) -> Result<(OwnedFd, Stat), FsError> {
    let (fd, fst) = atomic::open_existing(dir, name, st).map_err(|(action, e)| match e {
        Errno::AGAIN => stale(path, Stale::Replaced),
        e => FsError::sys(path, action, e),
    })?;
    if let Expect::Unchanged(fp) = expect {
        // The file's stamps and inode as read, and settled then: no write since (see
        // `atomic::settled`). Anything else is decided by the content.
        let same_stamps = sys::dev_ino(&fst) == (fp.dev, fp.ino)
            && fst.st_size as u64 == fp.len
            && sys::stamps_ns(&fst) == (fp.mtime_ns, fp.ctime_ns);
        if fp.settled && same_stamps {
            return Ok((fd, fst));
        }
        let read_err = |e| match e {
            Errno::FBIG => FsErrorKind::GrewTooLarge.at(path),
            e => FsError::sys(path, Step::ReadFile, e),
        };
        let size = fst.st_size.max(0) as u64;
        let limit = root.limits.max_file_size;
        // Compared with the bytes that were read, when the caller holds them (a byte-for-byte
        // equality is the hash's verdict without the hashing), else hashed as it is read. Either
        // way the check holds no second copy of the file.
        let same = match held.filter(|h| h.len() == fp.len) {
            Some(h) => atomic::same_content(&fd, size, h, limit).map_err(read_err)?,
            None => atomic::version_of(&fd, size, limit).map_err(read_err)? == fp.version,
        };
        let after = rustix::fs::fstat(&fd).map_err(|e| FsError::sys(path, Step::StatFile, e))?;
        if !atomic::same_version(&fst, &after) {
            return Err(stale(path, Stale::BeingWritten));
        }
        if !same {
            return Err(stale(path, Stale::Changed));
        }
    }
    Ok((fd, fst))
}

/// `permission_denied` for a file we may not write (root passes: it ignores mode bits).
fn writable(
    dir: rustix::fd::BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    path: &str,
) -> Result<(), FsError> {
    match rustix::fs::accessat(
        dir,
        name,
        rustix::fs::Access::WRITE_OK,
        AtFlags::EACCESS | AtFlags::SYMLINK_NOFOLLOW,
    ) {
        Ok(()) => Ok(()),
        Err(Errno::ROFS) => Err(FsErrorKind::ReadOnlyFilesystem.at(path)),
        Err(Errno::ACCESS) | Err(Errno::PERM) => Err(FsErrorKind::NotWritable.at(path)),
        // Some filesystems cannot answer; the rename will tell.
        Err(_) => Ok(()),
    }
}

/// Creates directories and complete temps, recording inodes in the journal.
fn prepare(
    root: &Root,
    ops: &mut [Op<'_>],
    j: &mut Journal,
    jdir: &Records,
    mkdirs: &[PathBuf],
) -> Result<(), FsError> {
    for d in mkdirs {
        let shown = d.display().to_string();
        let (Some(parent), Some(name)) = (d.parent(), d.file_name()) else {
            continue;
        };
        let pfd = open_dir(root, parent).map_err(|e| FsError::sys(&shown, Step::OpenDir, e))?;
        not_journal(root, pfd.as_fd(), &shown)?;
        match rustix::fs::mkdirat(&pfd, name, rustix::fs::Mode::from_raw_mode(0o777)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => {
                return Err(FsError::sys(&shown, Step::CreateDir, e));
            }
        }
        rustix::fs::fsync(&pfd).map_err(|e| FsError::sys(&shown, Step::SyncDir, e))?;
    }
    for (i, op) in ops.iter_mut().enumerate() {
        if op.dir.is_none() {
            let fd = open_dir(root, &op.dir_rel)
                .map_err(|err| FsError::sys(op.path, Step::OpenNewDir, err))?;
            not_journal(root, fd.as_fd(), op.path)?;
            op.dir = Some(fd);
        }
        let Some(dir) = op.dir.as_ref() else { continue };
        if j.ops[i].dir_ino == 0 {
            let dst =
                rustix::fs::fstat(dir).map_err(|err| FsError::sys(op.path, Step::StatDir, err))?;
            j.ops[i].dir_ino = dst.st_ino;
        }
        if let Some(content) = op.content {
            let original = op.old_fd.as_ref().map(|(fd, stat)| Original { fd, stat });
            let tmp = j.ops[i].tmp().to_os_string();
            let mut intent_err = None;
            // Before the temp gets its name, the intent names it (with its inode when known).
            let before_link = |ino: Option<u64>| {
                j.ops[i].new_ino = ino;
                match journal::store_intent(root, jdir, j) {
                    Ok(()) => true,
                    Err(e) => {
                        intent_err = Some(e);
                        false
                    }
                }
            };
            let st = atomic::create_temp(
                root.portable,
                dir.as_fd(),
                &tmp,
                content,
                original,
                before_link,
            )
            .map_err(|(step, err)| match (step, err) {
                (Step::Chown, Errno::PERM) => FsError::sys(op.path, step, err),
                _ => intent_err
                    .take()
                    .unwrap_or_else(|| FsError::sys(op.path, step, err)),
            })?;
            j.ops[i].new_ino = Some(st.st_ino);
        } else if op.kind == Kind::Delete {
            // A placeholder at the temp name, so that the delete's rename cannot take a
            // directory swapped in for the file since the check (renaming a directory over a
            // file fails). Its inode is `new_ino`: recovery removes it, and tells it from the
            // old file or anything else the rename could have moved.
            let fd = rustix::fs::openat(
                dir,
                j.ops[i].tmp(),
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                rustix::fs::Mode::from_raw_mode(0o600),
            )
            .map_err(|err| FsError::sys(op.path, Step::CreateTemp, err))?;
            let st = rustix::fs::fstat(&fd)
                .map_err(|err| FsError::sys(op.path, Step::StatATemp, err))?;
            j.ops[i].new_ino = Some(st.st_ino);
            journal::store_intent(root, jdir, j)?;
        }
    }
    // The temps' names need no fsync of their own: the `Apply` journal records their inodes,
    // and the directory fsync after the renames makes the renames durable with them.
    Ok(())
}

/// Refuses a directory that is the journal directory or lies beneath it (a directory of the
/// batch reached through a symlink to it, created or swapped in since the check).
fn not_journal(root: &Root, dir: rustix::fd::BorrowedFd<'_>, path: &str) -> Result<(), FsError> {
    match confine::in_journal_dir(root, dir) {
        Ok(false) => Ok(()),
        Ok(true) => Err(confine::journal_refusal().at(path)),
        Err(e) => Err(FsError::sys(path, Step::CheckDir, e)),
    }
}

/// Applies one prepared change; every outcome is undoable from the journal. With `portable`
/// (or where the OS has no exchange / no-replace rename) a modify keeps the old file by a hard
/// link at the journal's `old_name` before the new file is renamed in, and a create links the
/// temp to the name (which fails if the name exists) before removing the temp.
fn apply(portable: bool, op: &Op<'_>, e: &Entry) -> Result<(), FsError> {
    let p = op.path;
    let Some(dir) = op.dir.as_ref() else {
        return Err(FsErrorKind::NoDirectory.at(p));
    };
    let err = |step: Step| move |errno: Errno| FsError::sys(p, step, errno);
    match e.kind {
        Kind::Modify => match sys::exchange(portable, dir.as_fd(), e.tmp(), e.name()) {
            Ok(()) => check_kept(op, dir, e.tmp()),
            Err(x) if unsupported(x) => {
                rustix::fs::linkat(dir, e.name(), dir, e.old_name(), AtFlags::empty())
                    .map_err(err(Step::KeepOldLink))?;
                check_kept(op, dir, e.old_name())?;
                rustix::fs::renameat(dir, e.tmp(), dir, e.name()).map_err(err(Step::Replace))
            }
            Err(x) => Err(err(Step::Replace)(x)),
        },
        Kind::Create => match sys::rename_noreplace(portable, dir.as_fd(), e.tmp(), e.name()) {
            Ok(()) => Ok(()),
            Err(Errno::EXIST) => Err(stale(p, Stale::AppearedWhileWriting)),
            Err(x) if unsupported(x) => {
                match rustix::fs::linkat(dir, e.tmp(), dir, e.name(), AtFlags::empty()) {
                    Ok(()) => rustix::fs::unlinkat(dir, e.tmp(), AtFlags::empty())
                        .map_err(err(Step::RemoveTemp)),
                    Err(Errno::EXIST) => Err(stale(p, Stale::AppearedWhileWriting)),
                    Err(x) => Err(err(Step::CreateFile)(x)),
                }
            }
            Err(x) => Err(err(Step::CreateFile)(x)),
        },
        Kind::Delete => {
            // Over the placeholder: a directory swapped in at the name cannot be moved.
            match rustix::fs::renameat(dir, e.name(), dir, e.tmp()) {
                Ok(()) => {}
                Err(Errno::NOTDIR | Errno::ISDIR) => {
                    return Err(stale(p, Stale::ReplacedWhileWriting));
                }
                Err(x) => return Err(err(Step::DeleteFile)(x)),
            }
            check_kept(op, dir, e.tmp())
        }
    }
}

/// After the old file moved to `kept`: it must be the inode that was checked, unchanged since.
/// This closes the window between the check and the rename: a program that wrote the file in
/// place, or replaced it, in that window makes the batch `stale` instead of losing its write.
fn check_kept(op: &Op<'_>, dir: &DirFd<'_>, kept: &std::ffi::OsStr) -> Result<(), FsError> {
    let p = op.path;
    let now = lstat_at(dir, kept).map_err(|e| FsError::sys(p, Step::LookUpOldFile, e))?;
    let same_inode =
        matches!((now, op.old), (Some(a), Some(b)) if a.st_ino == b.st_ino && a.st_dev == b.st_dev);
    if !same_inode {
        return Err(stale(p, Stale::ReplacedWhileWriting));
    }
    if let Some((fd, checked)) = &op.old_fd {
        let after = rustix::fs::fstat(fd).map_err(|e| FsError::sys(p, Step::StatOldFile, e))?;
        // ctime also moves when the rename itself touches the inode; compare content stamps.
        if after.st_size != checked.st_size
            || (after.st_mtime, after.st_mtime_nsec) != (checked.st_mtime, checked.st_mtime_nsec)
        {
            return Err(stale(p, Stale::WrittenWhileWriting));
        }
    }
    Ok(())
}
