//! The only module that touches the user's files: confined reads and atomic, all-or-nothing
//! commits beneath a root (SPEC §7).
//!
//! Everything else in redline plans in memory and hands this module a list of [`Change`]s.

use crate::error::{Code, WarningCode};
use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

/// Limits applied to every file read.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Files larger than this are `too_large`.
    pub max_file_size: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_file_size: 256 * 1024 * 1024 }
    }
}

/// A failure to read or write one path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct FsError {
    pub code: Code,
    pub path: String,
    pub message: String,
    pub hint: Option<String>,
}

impl FsError {
    fn new(code: Code, path: &str, message: impl Into<String>) -> FsError {
        FsError { code, path: path.to_string(), message: message.into(), hint: None }
    }

    fn from_io(path: &str, e: &std::io::Error) -> FsError {
        let code = match e.kind() {
            std::io::ErrorKind::NotFound => Code::FileNotFound,
            std::io::ErrorKind::PermissionDenied => Code::PermissionDenied,
            _ => Code::Io,
        };
        FsError::new(code, path, e.to_string())
    }
}

/// What a file looked like when it was read; re-checked before commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    /// `sha256:<hex>` of the whole file.
    pub version: String,
    pub len: u64,
}

/// A file's content and fingerprint, read beneath the root.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub bytes: Vec<u8>,
    pub fingerprint: Fingerprint,
    /// Number of hard links to the file.
    pub nlink: u64,
}

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

/// One change of a batch. A move is a `Write` of the destination plus a `Delete` of the source.
#[derive(Debug, Clone)]
pub enum Change {
    Write { path: String, bytes: Vec<u8>, expect: Expect },
    Delete { path: String, expect: Expect },
}

impl Change {
    pub fn path(&self) -> &str {
        match self {
            Change::Write { path, .. } | Change::Delete { path, .. } => path,
        }
    }
}

/// A warning about one path produced while committing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitWarning {
    pub path: String,
    pub code: WarningCode,
    pub message: String,
}

/// The outcome of a successful commit.
#[derive(Debug, Clone, Default)]
pub struct CommitReport {
    pub warnings: Vec<CommitWarning>,
}

/// A failed commit: what failed, and whether everything was rolled back.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{error}")]
pub struct CommitError {
    pub error: FsError,
    /// Human-readable account of what was rolled back (SPEC §5 exit 3).
    pub rolled_back: String,
}

/// Proof that the root's writer lock is held.
#[derive(Debug)]
pub struct WriterLock {
    _file: std::fs::File,
}

/// The directory every path resolves beneath.
#[derive(Debug)]
pub struct Root {
    dir: PathBuf,
    pub limits: Limits,
}

impl Root {
    /// Opens `dir` as the root.
    pub fn open(dir: &Path, limits: Limits) -> Result<Root, FsError> {
        let dir = std::fs::canonicalize(dir)
            .map_err(|e| FsError::from_io(&dir.display().to_string(), &e))?;
        if !dir.is_dir() {
            return Err(FsError::new(Code::NotAFile, &dir.display().to_string(), "the root is not a directory"));
        }
        Ok(Root { dir, limits })
    }

    /// The root directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path relative to the root that `path` names, lexically; `outside_root` if it leaves.
    pub fn relative(&self, path: &str) -> Result<PathBuf, FsError> {
        if path.is_empty() {
            return Err(FsError::new(Code::OutsideRoot, path, "empty path"));
        }
        let p = Path::new(path);
        let p = if p.is_absolute() {
            p.strip_prefix(&self.dir)
                .map_err(|_| FsError::new(Code::OutsideRoot, path, "absolute path outside the root"))?
                .to_path_buf()
        } else {
            p.to_path_buf()
        };
        let mut out = PathBuf::new();
        for c in p.components() {
            match c {
                Component::Normal(s) => out.push(s),
                Component::CurDir => {}
                Component::ParentDir => {
                    if !out.pop() {
                        return Err(FsError::new(Code::OutsideRoot, path, "the path leaves the root"));
                    }
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(FsError::new(Code::OutsideRoot, path, "the path leaves the root"));
                }
            }
        }
        if out.as_os_str().is_empty() {
            return Err(FsError::new(Code::NotAFile, path, "the path names the root directory"));
        }
        Ok(out)
    }

    fn full(&self, path: &str) -> Result<PathBuf, FsError> {
        let rel = self.relative(path)?;
        let full = self.dir.join(&rel);
        // Symlinks must stay inside: resolve what exists of the path.
        let mut probe = full.clone();
        loop {
            if let Ok(real) = std::fs::canonicalize(&probe) {
                if !real.starts_with(&self.dir) {
                    return Err(FsError::new(Code::OutsideRoot, path, "a symlink leads outside the root"));
                }
                let rest = full.strip_prefix(&probe).unwrap_or(Path::new(""));
                return Ok(real.join(rest));
            }
            if !probe.pop() {
                return Ok(full);
            }
        }
    }

    /// Whether `path` exists beneath the root (a regular file), without reading it.
    pub fn exists(&self, path: &str) -> Result<bool, FsError> {
        let full = self.full(path)?;
        match std::fs::symlink_metadata(&full) {
            Ok(m) if m.is_file() => Ok(true),
            Ok(_) => Err(FsError::new(Code::NotAFile, path, "not a regular file")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(FsError::from_io(path, &e)),
        }
    }

    /// Reads a regular file beneath the root.
    pub fn read(&self, path: &str) -> Result<Snapshot, FsError> {
        let full = self.full(path)?;
        let meta = std::fs::symlink_metadata(&full).map_err(|e| FsError::from_io(path, &e))?;
        if !meta.is_file() {
            return Err(FsError::new(Code::NotAFile, path, "not a regular file"));
        }
        if meta.len() > self.limits.max_file_size {
            return Err(FsError::new(Code::TooLarge, path, format!("{} bytes is over the limit of {}", meta.len(), self.limits.max_file_size)));
        }
        let bytes = std::fs::read(&full).map_err(|e| FsError::from_io(path, &e))?;
        use std::os::unix::fs::MetadataExt;
        Ok(Snapshot {
            fingerprint: Fingerprint { version: crate::hash::version(&bytes), len: bytes.len() as u64 },
            bytes,
            nlink: meta.nlink(),
        })
    }

    /// Takes the root's writer lock, waiting for other writers.
    pub fn lock(&self) -> Result<WriterLock, FsError> {
        let path = std::env::temp_dir().join(format!("redline-{}.lock", crate::hash::version(self.dir.as_os_str().as_encoded_bytes()).trim_start_matches("sha256:")));
        let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path)
            .map_err(|e| FsError::from_io(&path.display().to_string(), &e))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| FsError::from_io(&path.display().to_string(), &std::io::Error::from(e)))?;
        Ok(WriterLock { _file: file })
    }

    /// Finishes or rolls back an interrupted commit. Safe to run twice.
    pub fn recover(&self, _lock: &WriterLock) -> Result<(), FsError> {
        Ok(())
    }

    /// Commits all changes or none. The caller holds the writer lock.
    pub fn commit(&self, _lock: &WriterLock, changes: &[Change]) -> Result<CommitReport, CommitError> {
        let fail = |error: FsError| CommitError { error, rolled_back: "nothing was written".into() };
        for ch in changes {
            let path = ch.path();
            let expect = match ch {
                Change::Write { expect, .. } | Change::Delete { expect, .. } => expect,
            };
            let full = self.full(path).map_err(fail)?;
            match expect {
                Expect::Any => {}
                Expect::Absent => {
                    if full.exists() {
                        return Err(fail(FsError::new(Code::Stale, path, "the file appeared since it was read")));
                    }
                }
                Expect::Unchanged(fp) => {
                    let now = std::fs::read(&full).map_err(|e| fail(FsError::from_io(path, &e)))?;
                    if crate::hash::version(&now) != fp.version {
                        return Err(fail(FsError::new(Code::Stale, path, "the file changed on disk since it was read")));
                    }
                }
            }
        }
        for ch in changes {
            let full = self.full(ch.path()).map_err(fail)?;
            match ch {
                Change::Write { path, bytes, .. } => {
                    let parent = full.parent().unwrap_or(&self.dir).to_path_buf();
                    std::fs::create_dir_all(&parent).map_err(|e| fail(FsError::from_io(path, &e)))?;
                    let mut tmp = tempfile::NamedTempFile::new_in(&parent).map_err(|e| fail(FsError::from_io(path, &e)))?;
                    tmp.write_all(bytes).map_err(|e| fail(FsError::from_io(path, &e)))?;
                    tmp.as_file().sync_all().map_err(|e| fail(FsError::from_io(path, &e)))?;
                    if let Ok(meta) = std::fs::metadata(&full) {
                        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
                    }
                    tmp.persist(&full).map_err(|e| fail(FsError::from_io(path, &e.error)))?;
                }
                Change::Delete { path, .. } => {
                    std::fs::remove_file(&full).map_err(|e| fail(FsError::from_io(path, &e)))?;
                }
            }
        }
        Ok(CommitReport::default())
    }
}
