//! The writer's errors, as data: which path, what failed (the system call's step and errno, or
//! which check refused it), and the stable code. The words are the report layer's
//! (`report::message`), which also implements `Display`, `message` and `hint` for them.

use crate::error::Code;
use rustix::io::Errno;
use std::path::PathBuf;

/// A failure to read or write one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsError {
    /// The path as the request wrote it (or the root, directory or journal the failure is
    /// about).
    pub path: String,
    /// What failed.
    pub kind: FsErrorKind,
}

impl std::error::Error for FsError {}

impl FsError {
    /// The failure `kind` on `path`.
    pub(crate) fn new(path: &str, kind: FsErrorKind) -> FsError {
        FsError {
            path: path.to_string(),
            kind,
        }
    }

    /// A failed system call on `path` while doing `step`.
    pub(crate) fn sys(path: &str, step: Step, errno: Errno) -> FsError {
        FsError::new(path, FsErrorKind::Sys { step, errno })
    }

    /// The stable error code.
    #[must_use]
    pub fn code(&self) -> Code {
        self.kind.code()
    }
}

/// What failed, with the data its words need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FsErrorKind {
    /// A system call failed.
    Sys {
        /// What the writer was doing.
        step: Step,
        /// What the system said.
        errno: Errno,
    },
    /// The path leads outside the root, or into the journal directory.
    Outside(Outside),
    /// A component of the path is longer than a file name may be.
    NameTooLong {
        /// Its length in bytes.
        len: usize,
        /// The longest a file name may be, in bytes.
        max: usize,
    },
    /// The path names the root directory itself.
    RootItself,
    /// A parent of the path is not a directory.
    ParentNotDirectory,
    /// Nothing is at the path.
    NoSuchFile,
    /// A delete names nothing.
    NothingToDelete,
    /// The parent directory does not exist.
    NoParentDirectory,
    /// The file was removed while it was read.
    RemovedWhileRead,
    /// The path is not a regular file.
    NotRegular(NotRegular),
    /// The file kept changing while it was read.
    KeptChanging,
    /// The file is over the size limit.
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// The file grew over the size limit since it was read.
    GrewTooLarge,
    /// The file is no longer as the batch found it.
    Stale(Stale),
    /// Two changes of the batch name the same file.
    SameFile,
    /// The file is on a read-only filesystem.
    ReadOnlyFilesystem,
    /// The file's permissions do not let it be written.
    NotWritable,
    /// A file redline did not write has the journal's name.
    ForeignJournal,
    /// The journal could not be parsed.
    JournalUnreadable {
        /// What the parser said.
        reason: String,
    },
    /// The journal could not be encoded.
    JournalUnencodable {
        /// What the encoder said.
        reason: String,
    },
    /// Recovery cannot reach a directory of an interrupted commit.
    RecoveryUnreachable {
        /// The directory, relative to the root.
        dir: PathBuf,
    },
    /// The directory of an interrupted commit was replaced.
    RecoveryDirReplaced,
    /// The old content of an interrupted commit is missing.
    RecoveryOldMissing,
    /// A file moved aside by an interrupted delete cannot go back: its name is taken.
    RecoveryNameTaken {
        /// Where the file is now.
        aside: String,
    },
    /// Recovery could not remove directories an interrupted commit created.
    RecoveryDirsKept {
        /// Each directory, and why.
        dirs: Vec<(PathBuf, Errno)>,
    },
    /// The writer lock held belongs to another root.
    ForeignLock,
    /// A multi-file commit without its journal directory (a bug).
    NoJournalDirectory,
    /// A change without its directory after prepare (a bug).
    NoDirectory,
}

/// Why a path is outside the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outside {
    /// The path is empty.
    Empty,
    /// The path contains a NUL byte.
    Nul,
    /// An absolute path not beneath the root.
    Absolute,
    /// A `..` leads above the root.
    DotDot,
    /// A root or prefix component.
    Leaves,
    /// The path names the journal directory.
    JournalName,
    /// The path leads into the journal directory (through a symlink or a swapped directory).
    IntoJournal,
    /// A symlink on the way points outside the root.
    Symlink {
        /// What the symlink points to.
        to: PathBuf,
    },
    /// The kernel refused to resolve the path beneath the root.
    Resolution,
}

/// What a path is instead of a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotRegular {
    /// A directory.
    Directory,
    /// A FIFO.
    Fifo,
    /// A character device.
    CharacterDevice,
    /// A block device.
    BlockDevice,
    /// A socket.
    Socket,
    /// A symlink.
    Symlink,
    /// Something else.
    Other,
}

/// How a file is no longer as the batch found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stale {
    /// It was replaced while the batch was being checked.
    Replaced,
    /// Another program is writing it.
    BeingWritten,
    /// Its content changed since it was read.
    Changed,
    /// It changed since the batch was resolved (seen before the commit started).
    ChangedSinceResolved,
    /// It exists now but did not when the edits were resolved.
    Appeared,
    /// It was deleted since it was read.
    Deleted,
    /// It appeared while the batch was being written.
    AppearedWhileWriting,
    /// It was replaced while the batch was being written.
    ReplacedWhileWriting,
    /// Another program wrote it while the batch was being written.
    WrittenWhileWriting,
}

/// The step of the writer whose system call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Open the root directory.
    OpenRootDir,
    /// Stat the root directory.
    StatRootDir,
    /// Open the root for locking.
    OpenRootForLock,
    /// Lock the root.
    LockRoot,
    /// Open the root.
    OpenRoot,
    /// Sync the root directory.
    SyncRootDir,
    /// Open the parent directory.
    OpenParentDir,
    /// Check the parent directory.
    CheckParentDir,
    /// Check the directory.
    CheckDir,
    /// Look up the file.
    LookUpFile,
    /// Read the symlink.
    ReadSymlink,
    /// Too many symlinks.
    FollowSymlinks,
    /// Open the file.
    OpenFile,
    /// Stat the file.
    StatFile,
    /// Read the file.
    ReadFile,
    /// The file was replaced while being opened.
    Reopened,
    /// Open the directory.
    OpenDir,
    /// Create the directory.
    CreateDir,
    /// Sync the directory.
    SyncDir,
    /// Open the new directory.
    OpenNewDir,
    /// Stat the directory.
    StatDir,
    /// Create a temp file in the directory.
    CreateTempInDir,
    /// Stat the temp file.
    StatTheTemp,
    /// Record the temp file in the journal.
    RecordTemp,
    /// Link the temp file into the directory.
    LinkTemp,
    /// Write the temp file.
    WriteTemp,
    /// Give the new file the mode of the old one.
    Chmod,
    /// Give the new file the owner of the old one.
    Chown,
    /// Sync the temp file to disk.
    SyncTemp,
    /// Create a temp file.
    CreateTemp,
    /// Stat a temp file.
    StatATemp,
    /// Keep a link to the old file.
    KeepOldLink,
    /// Replace the file.
    Replace,
    /// Remove a temp file.
    RemoveTemp,
    /// Create the file.
    CreateFile,
    /// Delete the file.
    DeleteFile,
    /// Look up the old file.
    LookUpOldFile,
    /// Stat the old file.
    StatOldFile,
    /// Sync a directory.
    SyncDirs,
    /// Sync a directory after recovery.
    SyncDirsAfterRecovery,
    /// Sync a directory after rollback.
    SyncDirsAfterRollback,
    /// Sync a directory after commit.
    SyncDirsAfterCommit,
    /// Create the journal directory.
    CreateJournalDir,
    /// Open the journal directory.
    OpenJournalDir,
    /// Sync the journal directory.
    SyncJournalDir,
    /// Remove the journal directory.
    RemoveJournalDir,
    /// Create the journal.
    CreateJournal,
    /// Write the journal.
    WriteJournal,
    /// Sync the journal.
    SyncJournal,
    /// Install the journal.
    InstallJournal,
    /// Mark the journal committed.
    MarkCommitted,
    /// Open the journal.
    OpenJournal,
    /// Read the journal.
    ReadJournal,
    /// Remove the journal.
    RemoveJournal,
    /// Recovery: open the directory.
    RecoveryOpenDir,
    /// Recovery: stat the directory.
    RecoveryStatDir,
    /// Recovery: look up a file.
    RecoveryLookUp,
    /// Put the old file back.
    PutOldBack,
    /// Restore the deleted file.
    RestoreDeleted,
}

impl FsErrorKind {
    /// This failure on `path`.
    pub(crate) fn at(self, path: &str) -> FsError {
        FsError::new(path, self)
    }

    /// The stable error code.
    #[must_use]
    pub fn code(&self) -> Code {
        match self {
            FsErrorKind::Sys { errno, .. } => errno_code(*errno),
            FsErrorKind::Outside(_) => Code::OutsideRoot,
            FsErrorKind::NameTooLong { .. } | FsErrorKind::SameFile => Code::InvalidRequest,
            FsErrorKind::RootItself
            | FsErrorKind::ParentNotDirectory
            | FsErrorKind::NotRegular(_) => Code::NotAFile,
            FsErrorKind::NoSuchFile
            | FsErrorKind::NothingToDelete
            | FsErrorKind::NoParentDirectory
            | FsErrorKind::RemovedWhileRead => Code::FileNotFound,
            FsErrorKind::TooLarge { .. } | FsErrorKind::GrewTooLarge => Code::TooLarge,
            FsErrorKind::Stale(_) => Code::Stale,
            FsErrorKind::ReadOnlyFilesystem | FsErrorKind::NotWritable => Code::PermissionDenied,
            FsErrorKind::KeptChanging
            | FsErrorKind::ForeignJournal
            | FsErrorKind::JournalUnreadable { .. }
            | FsErrorKind::RecoveryUnreachable { .. }
            | FsErrorKind::RecoveryDirReplaced
            | FsErrorKind::RecoveryOldMissing
            | FsErrorKind::RecoveryNameTaken { .. }
            | FsErrorKind::RecoveryDirsKept { .. } => Code::Io,
            FsErrorKind::JournalUnencodable { .. }
            | FsErrorKind::ForeignLock
            | FsErrorKind::NoJournalDirectory
            | FsErrorKind::NoDirectory => Code::Internal,
        }
    }
}

/// The code of a failed system call.
fn errno_code(e: Errno) -> Code {
    match e {
        Errno::NOENT => Code::FileNotFound,
        Errno::ACCESS | Errno::PERM | Errno::ROFS => Code::PermissionDenied,
        Errno::FBIG => Code::TooLarge,
        Errno::XDEV => Code::OutsideRoot,
        Errno::NOTDIR | Errno::LOOP | Errno::ISDIR => Code::NotAFile,
        Errno::NAMETOOLONG => Code::InvalidRequest,
        _ => Code::Io,
    }
}
