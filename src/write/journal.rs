//! The journal of a commit, and the recovery that finishes or undoes an interrupted one.
//!
//! The journal lives in `<root>/.redline-journal/` only while a commit runs (the hidden
//! directory is removed afterwards). It holds up to three records of one [`Journal`]:
//!
//! - `prepare`: the intent, written *without* fsync before anything touches the tree. It names
//!   the temps the commit is about to create, so recovery after a `kill -9` (which keeps the page
//!   cache) finds them. Recovery decides every entry from inode numbers alone: a step that
//!   happened is finished, one that did not is undone ([`settle`]). This is the only record of a
//!   single-file commit, whose rename (or exchange) is its commit point; the record is removed
//!   (again without fsync) once the temp is gone, and a record that reappears after a power loss
//!   finds nothing left to do.
//! - `journal` (`Apply`): a multi-file commit's undo record, written once, atomically (temp,
//!   fsync, rename, fsync) after every temp is complete and synced, before the first rename.
//!   Targets may have changed; each old file is still reachable under its temp name. Recovery
//!   puts every old file back, deciding "did this step happen?" by inode numbers.
//! - `committed`: the same record renamed once every change is applied and its directory synced;
//!   the rename plus one fsync of the journal directory is the commit point. Recovery removes the
//!   old files.
//!
//! A single-file commit that creates no directory keeps its `prepare` record in a plain file at
//! `<root>/.redline-journal` instead ([`Records::Intent`]): no directory is created and removed,
//! which costs as much disk time on ext4 as the rest of a small commit. That record is written
//! once, directly, right before its temp gets a name (or, for a delete, before the rename), so a
//! kill while it is written tears it only while nothing it names exists yet.
//!
//! Every recovery step checks the state first and is a no-op when already done, so recovery can
//! be killed and run again any number of times.

use super::confine::{DirFd, open_dir};
use super::{FsError, FsErrorKind, JOURNAL_DIR, Root, Step, lstat_at};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

const JOURNAL: &str = "journal";
const JOURNAL_TMP: &str = "journal.tmp";
const PREPARE: &str = "prepare";
const PREPARE_TMP: &str = "prepare.tmp";
const COMMITTED: &str = "committed";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum State {
    Prepare,
    Apply,
    Committed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum Kind {
    /// Replace an existing file: `tmp` holds the new file, exchanged with the target.
    Modify,
    /// Create a file: `tmp` renamed onto the target without replacing anything.
    Create,
    /// Remove the target: it is renamed to `tmp`, over an empty placeholder created there first
    /// (so a directory swapped in for the file cannot be moved: that rename fails).
    Delete,
}

/// One step of the batch. Names are raw bytes (they need not be UTF-8).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Entry {
    pub kind: Kind,
    /// The path as the request named it, for messages.
    pub path: String,
    /// The target's directory relative to the root (`""` = the root).
    pub dir: Vec<u8>,
    /// The directory's inode once it exists (0 = not yet known); recovery refuses to act in a
    /// directory that is not this one.
    pub dir_ino: u64,
    pub name: Vec<u8>,
    /// Temp name in the same directory: the new file before applying, the old one after.
    pub tmp: Vec<u8>,
    /// Second name for the old file when the filesystem lacks `RENAME_EXCHANGE`.
    pub old_name: Vec<u8>,
    /// The old file's inode (modify, delete).
    pub old_ino: Option<u64>,
    /// The new file's inode (modify, create), known from the `Apply` record on; for a delete,
    /// the inode of the empty placeholder created at `tmp` before the rename.
    pub new_ino: Option<u64>,
}

impl Entry {
    pub(super) fn dir(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.dir))
    }
    pub(super) fn name(&self) -> &OsStr {
        OsStr::from_bytes(&self.name)
    }
    pub(super) fn tmp(&self) -> &OsStr {
        OsStr::from_bytes(&self.tmp)
    }
    pub(super) fn old_name(&self) -> &OsStr {
        OsStr::from_bytes(&self.old_name)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Journal {
    pub txid: String,
    pub state: State,
    /// Directories this commit creates, outermost first (removed again on rollback if empty).
    pub mkdirs: Vec<Vec<u8>>,
    pub ops: Vec<Entry>,
}

/// What a recovery found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// What was done to the interrupted batch.
    pub action: RecoveryAction,
    /// The paths of the interrupted batch.
    pub paths: Vec<String>,
}

/// What recovery did to an interrupted batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RecoveryAction {
    /// No interrupted commit.
    #[default]
    Nothing,
    /// A commit was interrupted before it changed anything; its leftovers were removed.
    Cleaned,
    /// The batch was undone: every file is as before it.
    RolledBack,
    /// The batch had committed; its cleanup was finished.
    RolledForward,
}

/// A failure inside the journal machinery, attached to the journal's path.
fn jerr(root: &Root, step: Step, e: Errno) -> FsError {
    let path = root.dir().join(JOURNAL_DIR).display().to_string();
    FsError::sys(&path, step, e)
}

/// Creates the journal directory (a crash leaves it for recovery) and opens it. `durable`: its
/// entry is synced (a multi-file journal must survive a power loss; a single-file intent need
/// not).
pub(super) fn create_dir(root: &Root, durable: bool) -> Result<OwnedFd, FsError> {
    match rustix::fs::mkdirat(&root.fd, JOURNAL_DIR, Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(jerr(root, Step::CreateJournalDir, e)),
    }
    if durable {
        rustix::fs::fsync(&root.fd).map_err(|e| jerr(root, Step::SyncRootDir, e))?;
    }
    open_journal_dir(root).map_err(|e| jerr(root, Step::OpenJournalDir, e))
}

fn open_journal_dir(root: &Root) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        &root.fd,
        JOURNAL_DIR,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Where a commit keeps its records.
pub(super) enum Records {
    /// The journal directory (a multi-file commit, or one that creates directories).
    Dir(OwnedFd),
    /// A single-file commit: only an intent record, the file `<root>/.redline-journal`.
    Intent,
}

impl Records {
    /// The journal directory, when the records live in one.
    pub(super) fn dir(&self) -> Option<&OwnedFd> {
        match self {
            Records::Dir(fd) => Some(fd),
            Records::Intent => None,
        }
    }
}

/// Where a failed [`store`] stopped.
pub(super) enum StoreError {
    /// The new record is not in place: the previous state stands.
    NotWritten(FsError),
    /// The new record replaced the old one but its directory could not be synced: it is
    /// visible, its durability unknown.
    NotSynced(FsError),
}

/// Atomically replaces the journal with `j`.
pub(super) fn store(root: &Root, jdir: &OwnedFd, j: &Journal) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec(j).map_err(|e| {
        StoreError::NotWritten(
            FsErrorKind::JournalUnencodable {
                reason: e.to_string(),
            }
            .at(JOURNAL_DIR),
        )
    })?;
    let nw = |action, e| StoreError::NotWritten(jerr(root, action, e));
    let fd = rustix::fs::openat(
        jdir,
        JOURNAL_TMP,
        OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|e| nw(Step::CreateJournal, e))?;
    super::atomic::write_all(&fd, &bytes).map_err(|e| nw(Step::WriteJournal, e))?;
    rustix::fs::fsync(&fd).map_err(|e| nw(Step::SyncJournal, e))?;
    drop(fd);
    rustix::fs::renameat(jdir, JOURNAL_TMP, jdir, JOURNAL)
        .map_err(|e| nw(Step::InstallJournal, e))?;
    rustix::fs::fsync(jdir).map_err(|e| StoreError::NotSynced(jerr(root, Step::SyncJournalDir, e)))
}

/// Writes the intent record `prepare`, without fsync (see the module docs).
pub(super) fn store_intent(root: &Root, records: &Records, j: &Journal) -> Result<(), FsError> {
    let bytes = serde_json::to_vec(j).map_err(|e| {
        FsErrorKind::JournalUnencodable {
            reason: e.to_string(),
        }
        .at(JOURNAL_DIR)
    })?;
    let jdir = match records {
        Records::Dir(fd) => fd,
        Records::Intent => {
            // Written in place: it is (re)written only while nothing it names exists, so a
            // torn record means there is nothing to recover.
            let fd = rustix::fs::openat(
                &root.fd,
                JOURNAL_DIR,
                OFlags::WRONLY
                    | OFlags::CREATE
                    | OFlags::TRUNC
                    | OFlags::NOFOLLOW
                    | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o600),
            )
            .map_err(|e| jerr(root, Step::CreateJournal, e))?;
            return super::atomic::write_all(&fd, &bytes)
                .map_err(|e| jerr(root, Step::WriteJournal, e));
        }
    };
    // Replaced by rename, so a kill while it is rewritten leaves the previous version whole.
    let fd = rustix::fs::openat(
        jdir,
        PREPARE_TMP,
        OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|e| jerr(root, Step::CreateJournal, e))?;
    super::atomic::write_all(&fd, &bytes).map_err(|e| jerr(root, Step::WriteJournal, e))?;
    drop(fd);
    rustix::fs::renameat(jdir, PREPARE_TMP, jdir, PREPARE)
        .map_err(|e| jerr(root, Step::InstallJournal, e))
}

/// The commit point of a multi-file commit: the `Apply` record becomes `committed`.
pub(super) fn commit_point(root: &Root, jdir: &OwnedFd) -> Result<(), StoreError> {
    rustix::fs::renameat(jdir, JOURNAL, jdir, COMMITTED)
        .map_err(|e| StoreError::NotWritten(jerr(root, Step::MarkCommitted, e)))?;
    rustix::fs::fsync(jdir).map_err(|e| StoreError::NotSynced(jerr(root, Step::SyncJournalDir, e)))
}

/// Reads record `name`; `None` when absent. `Err` when unreadable.
fn load_named(root: &Root, jdir: BorrowedFd<'_>, name: &str) -> Result<Option<Journal>, FsError> {
    let fd = match rustix::fs::openat(
        jdir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(jerr(root, Step::OpenJournal, e)),
    };
    let bytes = super::atomic::read_all(&fd, None, 64 * 1024 * 1024)
        .map_err(|e| jerr(root, Step::ReadJournal, e))?;
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        FsErrorKind::JournalUnreadable {
            reason: e.to_string(),
        }
        .at(&root.dir().join(JOURNAL_DIR).display().to_string())
    })
}

/// Forgets the journal: its directory is removed. Called only when the tree needs nothing more.
/// `durable`: the removal is synced too (after a recovery). A commit does not: a record that
/// reappears after a power loss finds its work done, and recovering it again changes nothing.
pub(super) fn remove(root: &Root, records: Records, durable: bool) -> Result<(), FsError> {
    let jdir = match records {
        Records::Dir(fd) => fd,
        Records::Intent => {
            match rustix::fs::unlinkat(&root.fd, JOURNAL_DIR, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(e) => return Err(jerr(root, Step::RemoveJournal, e)),
            }
            if durable {
                rustix::fs::fsync(&root.fd).map_err(|e| jerr(root, Step::SyncRootDir, e))?;
            }
            return Ok(());
        }
    };
    for name in [JOURNAL_TMP, JOURNAL, COMMITTED, PREPARE_TMP, PREPARE] {
        match rustix::fs::unlinkat(&jdir, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(e) => return Err(jerr(root, Step::RemoveJournal, e)),
        }
    }
    drop(jdir);
    match rustix::fs::unlinkat(&root.fd, JOURNAL_DIR, AtFlags::REMOVEDIR) {
        // Something else was put there: leave it to the user, the journal itself is gone.
        Ok(()) | Err(Errno::NOENT) | Err(Errno::NOTEMPTY) | Err(Errno::EXIST) => {}
        Err(e) => return Err(jerr(root, Step::RemoveJournalDir, e)),
    }
    if durable {
        rustix::fs::fsync(&root.fd).map_err(|e| jerr(root, Step::SyncRootDir, e))?;
    }
    Ok(())
}

/// Finishes or undoes an interrupted commit under the writer lock. Idempotent.
pub(super) fn recover(root: &Root) -> Result<RecoveryReport, FsError> {
    let records = match open_journal_dir(root) {
        Ok(fd) => Records::Dir(fd),
        Err(Errno::NOENT) => return Ok(RecoveryReport::default()),
        // A single-file commit's intent record (a regular file; anything else is not ours).
        Err(Errno::NOTDIR)
            if lstat_at(&root.fd, OsStr::new(JOURNAL_DIR)).is_ok_and(|st| {
                st.is_some_and(|st| {
                    rustix::fs::FileType::from_raw_mode(st.st_mode)
                        == rustix::fs::FileType::RegularFile
                })
            }) =>
        {
            Records::Intent
        }
        Err(e) => return Err(jerr(root, Step::OpenJournalDir, e)),
    };
    if let Records::Intent = records {
        not_foreign(root)?;
    }
    let journal = match &records {
        Records::Intent => None,
        Records::Dir(jdir) => match load_named(root, jdir.as_fd(), COMMITTED)? {
            Some(j) => Some((j, true)),
            None => load_named(root, jdir.as_fd(), JOURNAL)?.map(|j| (j, false)),
        },
    };
    let prepare = || match &records {
        Records::Dir(jdir) => load_named(root, jdir.as_fd(), PREPARE),
        Records::Intent => load_named(root, root.fd.as_fd(), JOURNAL_DIR),
    };
    let report = match journal {
        None => match prepare() {
            Ok(Some(j)) => {
                let paths = j.ops.iter().map(|e| e.path.clone()).collect();
                let action = settle(root, &j)?;
                RecoveryReport { action, paths }
            }
            // Nothing, or an intent that cannot be read. In the directory it is replaced whole
            // by rename, so a kill never tears it; the single-file record is written only
            // while nothing it names exists. Only a power loss can tear either (they are not
            // synced), and then no rename it covered can matter: the user's files are whole
            // either way, at worst a temp stays behind.
            Ok(None) | Err(_) => RecoveryReport {
                action: RecoveryAction::Cleaned,
                paths: Vec::new(),
            },
        },
        Some((j, committed)) => {
            let paths = j.ops.iter().map(|e| e.path.clone()).collect();
            let state = if committed { State::Committed } else { j.state };
            let action = match state {
                State::Committed => {
                    roll_forward(root, &j, &[], true)?;
                    RecoveryAction::RolledForward
                }
                State::Prepare => {
                    roll_back(root, &j, &[])?;
                    RecoveryAction::Cleaned
                }
                State::Apply => {
                    roll_back(root, &j, &[])?;
                    RecoveryAction::RolledBack
                }
            };
            RecoveryReport { action, paths }
        }
    };
    remove(root, records, true)?;
    Ok(report)
}

/// Refuses a file at the journal's name that redline did not write: its records start with
/// their `txid`; one torn by a kill or a power loss is empty or zeros. Anything else is left
/// alone (recovery would otherwise remove it).
fn not_foreign(root: &Root) -> Result<(), FsError> {
    let fd = rustix::fs::openat(
        &root.fd,
        JOURNAL_DIR,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| jerr(root, Step::OpenJournal, e))?;
    let mut head = [0u8; 8];
    let n = rustix::io::read(&fd, &mut head[..]).map_err(|e| jerr(root, Step::ReadJournal, e))?;
    let head = &head[..n];
    if head.iter().all(|&b| b == 0) || b"{\"txid\":".starts_with(head) {
        return Ok(());
    }
    Err(FsErrorKind::ForeignJournal.at(&root.dir().join(JOURNAL_DIR).display().to_string()))
}

/// Recovers from the intent record alone: every entry is finished if its rename happened and
/// undone if not, judged by inode numbers. Before a multi-file commit writes its `Apply`
/// record no rename has happened, so this undoes it all; a single-file commit's one rename is
/// its commit point.
fn settle(root: &Root, j: &Journal) -> Result<RecoveryAction, FsError> {
    let mut dirs: Vec<DirFd<'_>> = Vec::new();
    let mut applied = false;
    for e in j.ops.iter().rev() {
        let Some(dir) = entry_dir(root, e, None)? else {
            continue;
        };
        let p = e.path.as_str();
        let target = ino(&dir, e.name(), p)?;
        let tmp = ino(&dir, e.tmp(), p)?;
        match e.kind {
            Kind::Modify => {
                let kept = ino(&dir, e.old_name(), p)?;
                let old = e.old_ino;
                // Exchanged: the new file is in place (known by its inode when the intent
                // recorded it, even after the old file was already removed), or the old one
                // waits at the temp or second name.
                let new_in_place = e.new_ino.is_some() && target == e.new_ino;
                if target.is_some() && target != old && (new_in_place || tmp == old || kept == old)
                {
                    // Exchanged (or linked and renamed): the old file only waits for removal.
                    applied = true;
                    if tmp == old {
                        unlink_if(&dir, e.tmp(), p)?;
                    }
                    unlink_if(&dir, e.old_name(), p)?;
                } else {
                    if tmp.is_some() && tmp != old {
                        unlink_if(&dir, e.tmp(), p)?;
                    }
                    if kept.is_some() && target == old {
                        unlink_if(&dir, e.old_name(), p)?;
                    }
                }
            }
            Kind::Create => {
                // The temp is only ever the new file; once renamed it is gone.
                if tmp.is_some() {
                    unlink_if(&dir, e.tmp(), p)?;
                } else if target.is_some() && target == e.new_ino {
                    applied = true;
                }
            }
            Kind::Delete => {
                if target.is_none() && tmp.is_some() && tmp == e.old_ino {
                    applied = true;
                    unlink_if(&dir, e.tmp(), p)?;
                }
            }
        }
        dirs.push(dir);
    }
    sync_dirs(&dirs, Step::SyncDirsAfterRecovery)?;
    if applied {
        return Ok(RecoveryAction::RolledForward);
    }
    // Nothing was applied: what is left is the rollback's (the directories the commit created).
    roll_back(root, j, &[])?;
    Ok(RecoveryAction::Cleaned)
}

/// Opens an entry's directory, checking it is the one the journal means; `None` if it does
/// not exist (then nothing of this entry exists either). `held` is the directory fd of the
/// running commit: it stays right even when a directory was moved meanwhile; crash recovery
/// has only the journaled path.
fn entry_dir<'a>(
    root: &Root,
    e: &Entry,
    held: Option<BorrowedFd<'a>>,
) -> Result<Option<DirFd<'a>>, FsError> {
    let dir = match held {
        Some(fd) => DirFd::Held(fd),
        None => match open_dir(root, e.dir()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            // The journaled path no longer leads to a directory beneath the root: one on the way
            // was moved or swapped for a symlink (out) since. Not an escape: work recovery
            // cannot reach, so the journal stays (issue 14.4).
            Err(Errno::XDEV | Errno::LOOP | Errno::NOTDIR | Errno::MLINK) => {
                return Err(FsErrorKind::RecoveryUnreachable {
                    dir: e.dir().to_path_buf(),
                }
                .at(&e.path));
            }
            Err(err) => {
                return Err(FsError::sys(&e.path, Step::RecoveryOpenDir, err));
            }
        },
    };
    // A held fd is the directory the journal's inode was taken from.
    if e.dir_ino != 0 && held.is_none() {
        let st = rustix::fs::fstat(&dir)
            .map_err(|err| FsError::sys(&e.path, Step::RecoveryStatDir, err))?;
        if st.st_ino != e.dir_ino {
            return Err(FsErrorKind::RecoveryDirReplaced.at(&e.path));
        }
    }
    Ok(Some(dir))
}

fn ino(dir: &DirFd<'_>, name: &OsStr, path: &str) -> Result<Option<u64>, FsError> {
    lstat_at(dir, name)
        .map(|s| s.map(|s| s.st_ino))
        .map_err(|e| FsError::sys(path, Step::RecoveryLookUp, e))
}

/// Removes `name` if it exists; whether it did.
fn unlink_if(dir: &DirFd<'_>, name: &OsStr, path: &str) -> Result<bool, FsError> {
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) => Ok(true),
        Err(Errno::NOENT) => Ok(false),
        Err(e) => Err(FsError::sys(path, Step::RemoveTemp, e)),
    }
}

/// The directory fd the running commit holds for entry `i`, if any.
fn held<'a>(held: &[Option<BorrowedFd<'a>>], i: usize) -> Option<BorrowedFd<'a>> {
    held.get(i).copied().flatten()
}

/// Puts every old file back, in reverse order, and removes temps and created directories.
/// `dirs_held`: the running commit's directory fds by entry (empty for crash recovery).
pub(super) fn roll_back(
    root: &Root,
    j: &Journal,
    dirs_held: &[Option<BorrowedFd<'_>>],
) -> Result<(), FsError> {
    let mut dirs: Vec<DirFd<'_>> = Vec::new();
    for (i, e) in j.ops.iter().enumerate().rev() {
        let Some(dir) = entry_dir(root, e, held(dirs_held, i))? else {
            continue;
        };
        let p = e.path.as_str();
        let target = ino(&dir, e.name(), p)?;
        let tmp = ino(&dir, e.tmp(), p)?;
        let applied_new = e.new_ino.is_some() && target == e.new_ino;
        match e.kind {
            Kind::Modify => {
                if applied_new {
                    // The exchange put whatever was at the target (normally the old file) at
                    // the temp name; without exchange support, a second link kept it.
                    if tmp.is_some() {
                        // Without an exchange (a journal left by a run with one, recovered
                        // on the portable path) the old file replaces the new one outright.
                        match super::sys::exchange(root.portable, dir.as_fd(), e.tmp(), e.name()) {
                            Err(x) if super::sys::unsupported(x) => {
                                rustix::fs::renameat(&dir, e.tmp(), &dir, e.name())
                            }
                            r => r,
                        }
                        .map_err(|err| FsError::sys(p, Step::PutOldBack, err))?;
                    } else if ino(&dir, e.old_name(), p)?.is_some() {
                        rustix::fs::renameat(&dir, e.old_name(), &dir, e.name())
                            .map_err(|err| FsError::sys(p, Step::PutOldBack, err))?;
                    } else {
                        return Err(FsErrorKind::RecoveryOldMissing.at(p));
                    }
                }
                // The temp now holds the new content (never the only copy of the old file).
                if ino(&dir, e.tmp(), p)? != e.old_ino {
                    unlink_if(&dir, e.tmp(), p)?;
                }
                if ino(&dir, e.name(), p)? == e.old_ino {
                    unlink_if(&dir, e.old_name(), p)?;
                }
            }
            Kind::Create => {
                if applied_new {
                    unlink_if(&dir, e.name(), p)?;
                }
                unlink_if(&dir, e.tmp(), p)?;
            }
            Kind::Delete => {
                // At the temp name: the placeholder (`new_ino`; any file there before the
                // intent recorded it, since the rename comes after), the old file, or whatever
                // else the rename took from the name (a file swapped in since the check).
                let placeholder =
                    tmp.is_some() && tmp != e.old_ino && (e.new_ino.is_none() || tmp == e.new_ino);
                if placeholder {
                    unlink_if(&dir, e.tmp(), p)?;
                } else if tmp.is_some() && target.is_none() {
                    // The name was checked to be free just above; without a no-replace rename
                    // a plain one restores the file.
                    match super::sys::rename_noreplace(
                        root.portable,
                        dir.as_fd(),
                        e.tmp(),
                        e.name(),
                    ) {
                        Err(x) if super::sys::unsupported(x) => {
                            rustix::fs::renameat(&dir, e.tmp(), &dir, e.name())
                        }
                        r => r,
                    }
                    .map_err(|err| FsError::sys(p, Step::RestoreDeleted, err))?;
                } else if tmp.is_some() {
                    // Something new took the name: putting the file back would replace it.
                    return Err(FsErrorKind::RecoveryNameTaken {
                        aside: OsStr::from_bytes(&e.tmp).to_string_lossy().into_owned(),
                    }
                    .at(p));
                }
            }
        }
        dirs.push(dir);
    }
    sync_dirs(&dirs, Step::SyncDirsAfterRollback)?;
    // Created directories, innermost first. One that cannot be reached (its parent was swapped
    // for a symlink out, say) is work recovery could not finish: the error keeps the journal.
    let mut unreached: Vec<(std::path::PathBuf, Errno)> = Vec::new();
    for d in j.mkdirs.iter().rev() {
        let d = Path::new(OsStr::from_bytes(d));
        let (Some(parent), Some(name)) = (d.parent(), d.file_name()) else {
            continue;
        };
        let pfd = match open_dir(root, parent) {
            Ok(fd) => fd,
            // No parent, so no directory of ours below it either.
            Err(Errno::NOENT) => continue,
            Err(e) => match parent_by_held_dirs(root, j, dirs_held, d) {
                Some(fd) => DirFd::Open(fd),
                None => {
                    unreached.push((d.to_path_buf(), e));
                    continue;
                }
            },
        };
        match rustix::fs::unlinkat(&pfd, name, AtFlags::REMOVEDIR) {
            Ok(()) => {
                let _ = rustix::fs::fsync(&pfd);
            }
            // Not empty: someone else uses it now. Gone or not a directory: not ours.
            Err(Errno::NOTEMPTY | Errno::EXIST | Errno::NOENT | Errno::NOTDIR) => {}
            Err(e) => unreached.push((d.to_path_buf(), e)),
        }
    }
    if !unreached.is_empty() {
        let path = root.dir().join(JOURNAL_DIR).display().to_string();
        return Err(FsErrorKind::RecoveryDirsKept { dirs: unreached }.at(&path));
    }
    Ok(())
}

/// The parent of the created directory `d`, reached from a directory fd the running commit
/// holds for an entry beneath `d` (walking `..` up), when the path no longer leads there. The
/// parent must still be beneath the root, and its entry for `d` must be the directory reached.
fn parent_by_held_dirs(
    root: &Root,
    j: &Journal,
    dirs_held: &[Option<BorrowedFd<'_>>],
    d: &Path,
) -> Option<OwnedFd> {
    let name = d.file_name()?;
    for (i, e) in j.ops.iter().enumerate() {
        let Some(held_fd) = held(dirs_held, i) else {
            continue;
        };
        let Ok(below) = e.dir().strip_prefix(d) else {
            continue;
        };
        // From the entry's directory up to `d`, then once more to its parent.
        let up = |fd: BorrowedFd<'_>| {
            rustix::fs::openat(
                fd,
                "..",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok()
        };
        let mut cur = rustix::io::fcntl_dupfd_cloexec(held_fd, 0).ok()?;
        for _ in below.components() {
            cur = up(cur.as_fd())?;
        }
        let parent = up(cur.as_fd())?;
        let mine = rustix::fs::fstat(&cur).ok()?;
        let there = lstat_at(&parent, name).ok()??;
        let beneath = super::confine::beneath_root(root, parent.as_fd()).unwrap_or(false);
        if beneath && (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino) {
            return Some(parent);
        }
    }
    None
}

/// The batch committed: remove the old files kept under temp names (`sync`: and fsync their
/// directories).
pub(super) fn roll_forward(
    root: &Root,
    j: &Journal,
    dirs_held: &[Option<BorrowedFd<'_>>],
    sync: bool,
) -> Result<(), FsError> {
    let mut dirs: Vec<DirFd<'_>> = Vec::new();
    for (i, e) in j.ops.iter().enumerate() {
        let Some(dir) = entry_dir(root, e, held(dirs_held, i))? else {
            continue;
        };
        let live = held(dirs_held, i).is_some();
        // The running commit's old file is at one of the two names: the temp (exchanged,
        // deleted) or the second name (the portable form, where the temp was renamed away).
        if !unlink_if(&dir, e.tmp(), &e.path)? || !live {
            unlink_if(&dir, e.old_name(), &e.path)?;
        }
        dirs.push(dir);
    }
    if sync {
        sync_dirs(&dirs, Step::SyncDirsAfterCommit)?;
    }
    Ok(())
}

/// fsyncs each distinct directory once.
pub(super) fn sync_dirs(dirs: &[impl AsFd], step: Step) -> Result<(), FsError> {
    let mut seen = Vec::new();
    for d in dirs {
        // Only several directories can repeat one.
        if dirs.len() > 1 {
            let st = rustix::fs::fstat(d).map_err(|e| FsError::sys("(directory)", step, e))?;
            if seen.contains(&(st.st_dev, st.st_ino)) {
                continue;
            }
            seen.push((st.st_dev, st.st_ino));
        }
        rustix::fs::fsync(d).map_err(|e| {
            FsError::sys(
                &super::confine::fd_path(d.as_fd())
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                step,
                e,
            )
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;
    use crate::write::Limits;
    use std::fs;

    /// An interrupted commit that created `n/m`, left for recovery.
    fn interrupted(root: &Root) {
        let j = Journal {
            txid: "t".into(),
            state: State::Prepare,
            mkdirs: vec![b"n".to_vec(), b"n/m".to_vec()],
            ops: Vec::new(),
        };
        let jdir = create_dir(root, true).unwrap();
        assert!(store(root, &jdir, &j).is_ok());
    }

    /// Issue 14.4: recovery never deletes the journal while it records directories it could not
    /// remove (a directory on the way swapped for a symlink out); once the tree is put back, it
    /// finishes.
    /// A prepared journal of one entry at `.redline-t-0.tmp` in the root's directory `dir`
    /// (empty for the root itself) named `f`.
    fn one_entry(kind: Kind, dir: &[u8], old_ino: Option<u64>, new_ino: Option<u64>) -> Journal {
        let path = if dir.is_empty() {
            "f".to_string()
        } else {
            format!("{}/f", String::from_utf8_lossy(dir))
        };
        Journal {
            txid: "t".into(),
            state: State::Prepare,
            mkdirs: Vec::new(),
            ops: vec![Entry {
                kind,
                path,
                dir: dir.to_vec(),
                dir_ino: 0,
                name: b"f".to_vec(),
                tmp: b".redline-t-0.tmp".to_vec(),
                old_name: b".redline-t-0.old".to_vec(),
                old_ino,
                new_ino,
            }],
        }
    }

    #[test]
    fn recovery_keeps_the_journal_until_created_directories_are_removed() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("root");
        fs::create_dir_all(dir.join("n/m")).unwrap();
        fs::create_dir(t.path().join("outside")).unwrap();
        let root = Root::open(&dir, Limits::default()).unwrap();
        interrupted(&root);
        // The created `n` is moved out and replaced by a symlink to where it went.
        fs::rename(dir.join("n"), t.path().join("outside/n")).unwrap();
        std::os::unix::fs::symlink(t.path().join("outside/n"), dir.join("n")).unwrap();
        let e = recover(&root).unwrap_err();
        assert!(e.message().contains("journal is kept"), "{e:?}");
        assert!(e.message().contains("n/m"), "{e:?}");
        assert!(e.hint().is_some());
        assert!(
            dir.join(JOURNAL_DIR).join(JOURNAL).exists(),
            "journal deleted"
        );
        assert!(
            t.path().join("outside/n/m").is_dir(),
            "changed outside the root"
        );
        // Put back: the next recovery removes both directories and the journal.
        fs::remove_file(dir.join("n")).unwrap();
        fs::rename(t.path().join("outside/n"), dir.join("n")).unwrap();
        recover(&root).unwrap();
        let left: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    /// An entry whose directory was swapped for a symlink out since: recovery cannot reach it, so
    /// it fails with `io`, keeps the journal and asks for the directory back (not `outside_root`,
    /// which is about a request path); once it is back, recovery finishes.
    #[test]
    fn recovery_keeps_the_journal_when_an_entry_directory_is_swapped_out() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("root");
        fs::create_dir_all(dir.join("n")).unwrap();
        fs::create_dir(t.path().join("outside")).unwrap();
        fs::write(dir.join("n/.redline-t-0.tmp"), "new\n").unwrap();
        let root = Root::open(&dir, Limits::default()).unwrap();
        let j = one_entry(Kind::Create, b"n", None, None);
        let records = Records::Dir(create_dir(&root, false).unwrap());
        store_intent(&root, &records, &j).unwrap();
        fs::rename(dir.join("n"), dir.join("m")).unwrap();
        std::os::unix::fs::symlink("../outside", dir.join("n")).unwrap();
        let e = recover(&root).unwrap_err();
        assert_eq!(e.code(), Code::Io, "{e:?}");
        assert!(e.message().contains("the journal is kept"), "{e:?}");
        assert!(
            dir.join(JOURNAL_DIR).join(PREPARE).exists(),
            "journal deleted"
        );
        fs::remove_file(dir.join("n")).unwrap();
        fs::rename(dir.join("m"), dir.join("n")).unwrap();
        recover(&root).unwrap();
        assert!(!dir.join("n/.redline-t-0.tmp").exists());
        assert!(!dir.join(JOURNAL_DIR).exists());
    }

    /// A delete interrupted with its placeholder at the temp name, or with something else than
    /// the old file moved there (a directory swapped in before placeholders, a file): the
    /// placeholder is removed, anything else is put back when its name is free, and when the name
    /// is taken recovery fails and keeps the journal until the user moves one away.
    #[test]
    fn delete_recovery_removes_the_placeholder_and_puts_back_what_it_moved() {
        use std::os::unix::fs::MetadataExt;
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("root");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("f"), "old\n").unwrap();
        let old_ino = fs::symlink_metadata(dir.join("f")).unwrap().ino();
        let root = Root::open(&dir, Limits::default()).unwrap();
        let tmp = ".redline-t-0.tmp";
        let intent = |new_ino: Option<u64>| {
            let j = Journal {
                txid: "t".into(),
                state: State::Prepare,
                mkdirs: Vec::new(),
                ops: vec![Entry {
                    kind: Kind::Delete,
                    path: "f".into(),
                    dir: Vec::new(),
                    dir_ino: 0,
                    name: b"f".to_vec(),
                    tmp: tmp.as_bytes().to_vec(),
                    old_name: b".redline-t-0.old".to_vec(),
                    old_ino: Some(old_ino),
                    new_ino,
                }],
            };
            let records = Records::Dir(create_dir(&root, false).unwrap());
            store_intent(&root, &records, &j).unwrap();
        };
        let left = || {
            let mut v: Vec<_> = fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            v.sort();
            v
        };
        // The placeholder, recorded or not yet.
        for recorded in [true, false] {
            fs::write(dir.join(tmp), "").unwrap();
            let ino = fs::metadata(dir.join(tmp)).unwrap().ino();
            intent(recorded.then_some(ino));
            assert_eq!(recover(&root).unwrap().action, RecoveryAction::Cleaned);
            assert_eq!(left(), ["f"]);
        }
        // A directory the rename took instead of the file (the name free again): put back.
        // (The placeholder the rename replaced; kept alive so its inode number is not reused.)
        fs::write(t.path().join("p"), "").unwrap();
        let placeholder_ino = fs::metadata(t.path().join("p")).unwrap().ino();
        fs::rename(dir.join("f"), t.path().join("f")).unwrap();
        fs::create_dir(dir.join(tmp)).unwrap();
        fs::write(dir.join(tmp).join("a"), "theirs\n").unwrap();
        intent(Some(placeholder_ino));
        recover(&root).unwrap();
        assert_eq!(left(), ["f"]);
        assert_eq!(fs::read_to_string(dir.join("f/a")).unwrap(), "theirs\n");
        // The same with the name taken since: the journal stays until one is moved away.
        fs::rename(dir.join("f"), dir.join(tmp)).unwrap();
        fs::write(dir.join("f"), "new\n").unwrap();
        intent(Some(placeholder_ino));
        let e = recover(&root).unwrap_err();
        assert!(e.message().contains("journal is kept"), "{e:?}");
        assert!(
            dir.join(JOURNAL_DIR).join(PREPARE).exists(),
            "journal deleted"
        );
        assert_eq!(
            fs::read_to_string(dir.join(tmp).join("a")).unwrap(),
            "theirs\n"
        );
        fs::remove_file(dir.join("f")).unwrap();
        recover(&root).unwrap();
        assert_eq!(left(), ["f"]);
        assert_eq!(fs::read_to_string(dir.join("f/a")).unwrap(), "theirs\n");
    }

    /// A single-file commit killed after its exchange and after the old file was removed, but
    /// before its intent record was: recovery finds the new file in place and finishes (found
    /// by the long tier: 1 in ~1,000 kills ended in "the old content … is missing").
    #[test]
    fn intent_after_the_old_file_was_removed_rolls_forward() {
        use std::os::unix::fs::MetadataExt;
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("root");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("f"), "new\n").unwrap();
        let new_ino = fs::metadata(dir.join("f")).unwrap().ino();
        let root = Root::open(&dir, Limits::default()).unwrap();
        let j = one_entry(Kind::Modify, b"", Some(new_ino + 1), Some(new_ino));
        // Either form of the record: the journal directory, or the single-file intent file.
        for records in [
            Records::Dir(create_dir(&root, false).unwrap()),
            Records::Intent,
        ] {
            store_intent(&root, &records, &j).unwrap();
            let rep = recover(&root).unwrap();
            assert_eq!(rep.action, RecoveryAction::RolledForward);
            assert_eq!(fs::read_to_string(dir.join("f")).unwrap(), "new\n");
            let left: Vec<_> = fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(left, ["f"]);
        }
    }

    /// The single-file intent file: a commit killed after its temp got its name but before the
    /// exchange leaves the old file in place; recovery removes the temp and the record. A torn
    /// record (killed while writing it, before any temp had a name) is removed as leftovers.
    #[test]
    fn intent_file_before_the_exchange_cleans_up() {
        use std::os::unix::fs::MetadataExt;
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("root");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("f"), "old\n").unwrap();
        fs::write(dir.join(".redline-t-0.tmp"), "new\n").unwrap();
        let old_ino = fs::metadata(dir.join("f")).unwrap().ino();
        let new_ino = fs::metadata(dir.join(".redline-t-0.tmp")).unwrap().ino();
        let root = Root::open(&dir, Limits::default()).unwrap();
        let j = one_entry(Kind::Modify, b"", Some(old_ino), Some(new_ino));
        store_intent(&root, &Records::Intent, &j).unwrap();
        assert!(dir.join(JOURNAL_DIR).is_file());
        let rep = recover(&root).unwrap();
        assert_eq!(rep.action, RecoveryAction::Cleaned);
        assert_eq!(rep.paths, ["f"]);
        assert_eq!(fs::read_to_string(dir.join("f")).unwrap(), "old\n");
        let left = |d: &Path| -> Vec<_> {
            fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect()
        };
        assert_eq!(left(&dir), ["f"]);
        for torn in ["{\"txid\":", "", "\0\0\0\0\0\0\0\0\0\0"] {
            fs::write(dir.join(JOURNAL_DIR), torn).unwrap();
            assert_eq!(recover(&root).unwrap().action, RecoveryAction::Cleaned);
            assert_eq!(left(&dir), ["f"]);
        }
        // A file that is not a record of ours is left alone, and said so.
        fs::write(dir.join(JOURNAL_DIR), "notes\n").unwrap();
        let e = recover(&root).unwrap_err();
        assert!(e.message().contains("did not write"), "{e:?}");
        assert_eq!(fs::read(dir.join(JOURNAL_DIR)).unwrap(), b"notes\n");
        fs::remove_file(dir.join(JOURNAL_DIR)).unwrap();
        // Nothing to do: nothing reported.
        assert_eq!(recover(&root).unwrap().action, RecoveryAction::Nothing);
    }
}
