//! Resolving request paths beneath the root, with the kernel enforcing confinement.
//!
//! A request path is first normalized lexically (for good errors and for `a/../b`), then its
//! parent directory is opened beneath the root's directory fd. On Linux that is one
//! `openat2(RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS)`: the kernel refuses `..`, absolute symlinks
//! and magic links that would leave the root, atomically with the lookup, so a concurrent swap of
//! a directory for a symlink cannot lead the open outside. Elsewhere (and on Linux without
//! `openat2`, or with the portable path forced) the same rules are kept by a walk of one
//! `openat(O_NOFOLLOW)` per component, symlinks followed by hand hop by hop. The last component
//! is only ever used as one name with `*at` calls that do not follow it. A last component that is
//! a symlink is followed by hand (its target is normalized and resolved again beneath the root),
//! so every hop is confined.

use super::sys::dev_ino;
use super::{FsError, FsErrorKind, JOURNAL_DIR, Outside, Root, Step, lstat_at};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{FileType, Mode, OFlags, Stat};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Longest file name the kernel accepts (NAME_MAX).
const NAME_MAX: usize = 255;
/// Longest path the kernel looks up, in bytes with its NUL (PATH_MAX).
const PATH_MAX: usize = 4096;
/// Most symlinks followed at the last component before giving up (as the kernel's ELOOP).
const MAX_HOPS: usize = 40;

/// Why a path was refused, before it is attached to the path that the caller named.
type Refusal = FsErrorKind;

/// The path relative to the root that `path` names, lexically: no `.`, `..`, empty or absolute
/// components remain, and it names something other than the root itself.
pub(super) fn normalize(root_dir: &Path, path: &OsStr) -> Result<PathBuf, Refusal> {
    if path.is_empty() {
        return Err(FsErrorKind::Outside(Outside::Empty));
    }
    if path.as_bytes().contains(&0) {
        return Err(FsErrorKind::Outside(Outside::Nul));
    }
    let p = Path::new(path);
    let rel = if p.is_absolute() {
        p.strip_prefix(root_dir)
            .map_err(|_| FsErrorKind::Outside(Outside::Absolute))?
    } else {
        p
    };
    let mut out = PathBuf::new();
    for c in rel.components() {
        match c {
            Component::Normal(s) => {
                if s.len() > NAME_MAX {
                    return Err(FsErrorKind::NameTooLong {
                        len: s.len(),
                        max: NAME_MAX,
                    });
                }
                out.push(s)
            }
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return Err(FsErrorKind::Outside(Outside::DotDot));
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(FsErrorKind::Outside(Outside::Leaves));
            }
        }
    }
    if out.as_os_str().is_empty() {
        return Err(FsErrorKind::RootItself);
    }
    if out.components().next() == Some(Component::Normal(OsStr::new(JOURNAL_DIR))) {
        return Err(FsErrorKind::Outside(Outside::JournalName));
    }
    Ok(out)
}

/// An open directory beneath the root: the root's own descriptor (shared, not opened again:
/// most request paths are files in the root itself), one opened for it, or one a running commit
/// holds.
#[derive(Debug)]
pub(super) enum DirFd<'a> {
    Root(Arc<OwnedFd>),
    Open(OwnedFd),
    Held(BorrowedFd<'a>),
}

impl AsFd for DirFd<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            DirFd::Root(fd) => fd.as_fd(),
            DirFd::Open(fd) => fd.as_fd(),
            DirFd::Held(fd) => fd.as_fd(),
        }
    }
}

/// A file location beneath the root: an open parent directory and one name in it.
#[derive(Debug)]
pub(super) struct Target {
    /// The parent directory, opened beneath the root; `None` when it does not exist yet.
    pub dir: Option<DirFd<'static>>,
    /// The parent's path relative to the root, with symlinks resolved when the kernel could tell.
    pub dir_rel: PathBuf,
    /// The last component: one name, never containing `/`.
    pub name: OsString,
    /// What is at `name` now (not following a symlink there unless resolution followed it).
    pub stat: Option<Stat>,
    /// The request path was a symlink that this resolution followed.
    pub via_symlink: bool,
    /// Missing directories between the nearest existing ancestor and the parent, outermost
    /// first, relative to the root.
    pub missing: Vec<PathBuf>,
}

impl Target {
    /// The open parent directory, or `file_not_found` for `path` when it does not exist.
    pub(super) fn dir_fd(&self, path: &str) -> Result<BorrowedFd<'_>, FsError> {
        match &self.dir {
            Some(fd) => Ok(fd.as_fd()),
            None => Err(FsErrorKind::NoParentDirectory.at(path)),
        }
    }
}

/// Resolves the normalized `rel` beneath the root. With `follow`, a symlink at the last
/// component is followed (as long as every hop stays inside the root) and the target's location
/// is returned; without it, the last component is taken as it is (delete removes a link).
pub(super) fn resolve_target(root: &Root, rel: &Path, follow: bool) -> Result<Target, Refusal> {
    let mut rel = rel.to_path_buf();
    let mut via_symlink = false;
    for _ in 0..MAX_HOPS {
        let name = rel
            .file_name()
            .map(OsStr::to_os_string)
            .ok_or(FsErrorKind::RootItself)?;
        let parent = rel.parent().unwrap_or(Path::new("")).to_path_buf();
        let plain = open_dir_plain(root, &parent);
        let by_plain_path = plain.is_some();
        let dir = match plain.map_or_else(|| open_dir(root, &parent), Ok) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => {
                let (dir_rel, missing) = find_missing(root, &parent)?;
                return Ok(Target {
                    dir: None,
                    dir_rel,
                    name,
                    stat: None,
                    via_symlink,
                    missing,
                });
            }
            Err(errno) => return Err(dir_refusal(errno)),
        };
        // A file in the root itself (the common case) needs neither check: the root is not
        // inside its own journal directory, and its path relative to itself is empty. Nor does
        // one whose directory was reached by its plain path: that path is the real one, and
        // it is not the journal's (`normalize` refuses a first component of that name).
        let dir_rel = if parent.as_os_str().is_empty() || by_plain_path {
            parent
        } else {
            if in_journal_dir(root, dir.as_fd()).map_err(|errno| FsErrorKind::Sys {
                step: Step::CheckParentDir,
                errno,
            })? {
                return Err(journal_refusal());
            }
            real_rel(root, dir.as_fd()).unwrap_or(parent)
        };
        let stat = lstat_at(&dir, &name).map_err(|errno| FsErrorKind::Sys {
            step: Step::LookUpFile,
            errno,
        })?;
        match stat {
            Some(st) if follow && FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                let link = rustix::fs::readlinkat(&dir, name.as_os_str(), Vec::new()).map_err(
                    |errno| FsErrorKind::Sys {
                        step: Step::ReadSymlink,
                        errno,
                    },
                )?;
                let link = Path::new(OsStr::from_bytes(link.as_bytes()));
                // Absolute either way, so that `normalize` judges it against the root.
                let joined = root.dir().join(&dir_rel).join(link);
                rel = normalize(root.dir(), joined.as_os_str()).map_err(|_| {
                    FsErrorKind::Outside(Outside::Symlink {
                        to: link.to_path_buf(),
                    })
                })?;
                via_symlink = true;
            }
            stat => {
                return Ok(Target {
                    dir: Some(dir),
                    dir_rel,
                    name,
                    stat,
                    via_symlink,
                    missing: Vec::new(),
                });
            }
        }
    }
    Err(FsErrorKind::Sys {
        step: Step::FollowSymlinks,
        errno: Errno::LOOP,
    })
}

/// The refusal for a path that leads into the journal directory (by name or through a symlink).
pub(super) fn journal_refusal() -> Refusal {
    FsErrorKind::Outside(Outside::IntoJournal)
}

/// Deepest directory nesting [`in_journal_dir`] walks up through before giving up.
const MAX_DEPTH: usize = 4096;

/// Whether the open directory `dir` is the root's journal directory or beneath it, judged by
/// the opened directories themselves (device and inode, walking `..` up to the root), never by
/// a path string: a symlink inside the root that points into the journal directory is caught.
/// `false` when the journal directory does not exist.
pub(super) fn in_journal_dir(root: &Root, dir: BorrowedFd<'_>) -> Result<bool, Errno> {
    let Some(j) = lstat_at(&root.fd, OsStr::new(JOURNAL_DIR))? else {
        return Ok(false);
    };
    let journal = dev_ino(&j);
    walk_up(dir, |st| {
        if dev_ino(st) == journal {
            Some(true)
        } else if dev_ino(st) == (root.dev, root.ino) {
            Some(false)
        } else {
            None
        }
    })
}

/// Whether the open directory `dir` is the root or beneath it (walking `..` up to the root by
/// device and inode).
pub(super) fn beneath_root(root: &Root, dir: BorrowedFd<'_>) -> Result<bool, Errno> {
    walk_up(dir, |st| {
        (dev_ino(st) == (root.dev, root.ino)).then_some(true)
    })
}

/// Walks up from the open directory `dir` through `..`, handing each directory reached (`dir`
/// first) to `answer` until it answers. `false` when the walk reaches the filesystem's top (a
/// directory that is its own parent: no longer beneath the root at all) or [`MAX_DEPTH`].
fn walk_up(
    dir: BorrowedFd<'_>,
    mut answer: impl FnMut(&Stat) -> Option<bool>,
) -> Result<bool, Errno> {
    let mut st = rustix::fs::fstat(dir)?;
    let mut cur: Option<OwnedFd> = None;
    for _ in 0..MAX_DEPTH {
        if let Some(a) = answer(&st) {
            return Ok(a);
        }
        let from = cur.as_ref().map_or(dir, |f| f.as_fd());
        let up = rustix::fs::openat(
            from,
            "..",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let up_st = rustix::fs::fstat(&up)?;
        if dev_ino(&up_st) == dev_ino(&st) {
            return Ok(false);
        }
        st = up_st;
        cur = Some(up);
    }
    Ok(answer(&st).unwrap_or(false))
}

/// The refusal for a parent directory that could not be opened.
fn dir_refusal(errno: Errno) -> Refusal {
    match errno {
        Errno::XDEV => FsErrorKind::Outside(Outside::Resolution),
        Errno::NOTDIR => FsErrorKind::ParentNotDirectory,
        errno => FsErrorKind::Sys {
            step: Step::OpenParentDir,
            errno,
        },
    }
}

/// For a parent path that does not exist: the nearest existing ancestor's real path joined with
/// the missing components, and the missing directories outermost first.
fn find_missing(root: &Root, parent: &Path) -> Result<(PathBuf, Vec<PathBuf>), Refusal> {
    let mut names: Vec<OsString> = Vec::new();
    let mut p = parent.to_path_buf();
    let anchor = loop {
        match open_dir(root, &p) {
            Ok(fd) => {
                if in_journal_dir(root, fd.as_fd()).map_err(|errno| FsErrorKind::Sys {
                    step: Step::CheckParentDir,
                    errno,
                })? {
                    return Err(journal_refusal());
                }
                break real_rel(root, fd.as_fd()).unwrap_or(p);
            }
            Err(Errno::NOENT) => {
                let Some(name) = p.file_name() else {
                    // Only the root has no name, and the root always opens.
                    return Err(FsErrorKind::Sys {
                        step: Step::OpenRoot,
                        errno: Errno::NOENT,
                    });
                };
                names.push(name.to_os_string());
                p.pop();
            }
            Err(errno) => return Err(dir_refusal(errno)),
        }
    };
    let mut missing = Vec::new();
    let mut cur = anchor;
    for name in names.iter().rev() {
        cur.push(name);
        missing.push(cur.clone());
    }
    Ok((cur, missing))
}

/// Opens the directory `rel` (relative to the root, `""` = the root) beneath the root: with
/// `openat2(RESOLVE_BENEATH)` on Linux, else (other OSes, Linux without `openat2`, or the
/// portable path forced) by the per-component walk of [`open_dir_walk`].
pub(super) fn open_dir(root: &Root, rel: &Path) -> Result<DirFd<'static>, Errno> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOCTTY;
    if rel.as_os_str().is_empty() {
        return Ok(DirFd::Root(Arc::clone(&root.fd)));
    }
    #[cfg(target_os = "linux")]
    if !root.portable {
        // The kernel returns EAGAIN when a concurrent rename could have affected a `..` lookup.
        for _ in 0..32 {
            match rustix::fs::openat2(
                &root.fd,
                rel,
                flags,
                Mode::empty(),
                rustix::fs::ResolveFlags::BENEATH | rustix::fs::ResolveFlags::NO_MAGICLINKS,
            ) {
                Err(Errno::AGAIN) | Err(Errno::INTR) => continue,
                // No openat2 (Linux < 5.6, or a seccomp filter): walk.
                Err(Errno::NOSYS) | Err(Errno::PERM) => {
                    return open_dir_walk(root, rel, flags).map(DirFd::Open);
                }
                r => return r.map(DirFd::Open),
            }
        }
        return Err(Errno::AGAIN);
    }
    open_dir_walk(root, rel, flags).map(DirFd::Open)
}

/// The directory `rel` (not the root itself) opened by its plain path: every component a real
/// directory on the root's own mount, no symlink followed (`openat2` beneath the root with
/// `RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV`). Then `rel` is the directory's real path, and it
/// cannot be the journal directory or beneath it (`normalize` refuses a first component of that
/// name), so neither needs asking the kernel. `None` when that lookup fails for any reason (a
/// symlink or a mount on the way, a missing directory, no `openat2`, the portable path): the
/// caller opens the directory the general way.
fn open_dir_plain(root: &Root, rel: &Path) -> Option<DirFd<'static>> {
    #[cfg(target_os = "linux")]
    if !root.portable && !rel.as_os_str().is_empty() {
        use rustix::fs::ResolveFlags;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOCTTY;
        let how = ResolveFlags::BENEATH
            | ResolveFlags::NO_SYMLINKS
            | ResolveFlags::NO_MAGICLINKS
            | ResolveFlags::NO_XDEV;
        return rustix::fs::openat2(&root.fd, rel, flags, Mode::empty(), how)
            .ok()
            .map(DirFd::Open);
    }
    let _ = (root, rel);
    None
}

/// The portable confinement: one component at a time from the root's descriptor, each opened
/// with `O_NOFOLLOW`. A component that is a symlink is read and its target walked in its place,
/// hop by hop, with the rules of `RESOLVE_BENEATH`: an absolute target, or a `..` above the
/// root, is `EXDEV`; more than [`MAX_HOPS`] symlinks is `ELOOP`. `..` goes to the parent of the
/// directory actually reached (the walk tracks the real components, with no symlink among them,
/// and opens them again from the root), so no lookup ever starts outside the root.
fn open_dir_walk(root: &Root, rel: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
    use std::collections::VecDeque;
    // As the kernel's lookup: a path of PATH_MAX bytes or more is refused before any work.
    if rel.as_os_str().len() >= PATH_MAX {
        return Err(Errno::NAMETOOLONG);
    }
    let mut todo: VecDeque<OsString> = VecDeque::new();
    for c in rel.components() {
        match c {
            Component::Normal(name) => todo.push_back(name.to_os_string()),
            Component::CurDir => {}
            _ => return Err(Errno::XDEV),
        }
    }
    let mut real: Vec<OsString> = Vec::new();
    let mut fd = rustix::fs::openat(&root.fd, ".", flags, Mode::empty())?;
    let (mut hops, mut retries) = (0, 0);
    // Lookups lost to a concurrent swap before giving up (as `openat2`'s EAGAIN).
    const MAX_RETRIES: usize = 1000;
    while let Some(name) = todo.pop_front() {
        if name == ".." {
            if real.pop().is_none() {
                return Err(Errno::XDEV);
            }
            fd = rustix::fs::openat(&root.fd, ".", flags, Mode::empty())?;
            for c in &real {
                fd = match rustix::fs::openat(&fd, c, flags | OFlags::NOFOLLOW, Mode::empty()) {
                    // Swapped for a symlink since it was walked: refuse rather than follow.
                    Err(Errno::LOOP) | Err(Errno::MLINK) => return Err(Errno::XDEV),
                    r => r?,
                };
            }
            continue;
        }
        match rustix::fs::openat(&fd, &name, flags | OFlags::NOFOLLOW, Mode::empty()) {
            Ok(next) => {
                fd = next;
                real.push(name);
            }
            // A symlink under O_NOFOLLOW: ELOOP on Linux and macOS, EMLINK on FreeBSD, ENOTDIR
            // with O_DIRECTORY on some systems. Only a symlink is followed.
            Err(e @ (Errno::LOOP | Errno::MLINK | Errno::NOTDIR)) => {
                let kind = lstat_at(&fd, &name)?.map(|st| FileType::from_raw_mode(st.st_mode));
                let link = match kind {
                    Some(FileType::Symlink) => {
                        rustix::fs::readlinkat(&fd, name.as_os_str(), Vec::new())
                    }
                    // Swapped for a directory since the open: look it up again.
                    Some(FileType::Directory) => Err(Errno::INVAL),
                    _ => return Err(e),
                };
                let link = match link {
                    Ok(link) => link,
                    // No longer a symlink (a concurrent swap): look the name up again.
                    Err(Errno::INVAL) => {
                        retries += 1;
                        if retries > MAX_RETRIES {
                            return Err(Errno::AGAIN);
                        }
                        todo.push_front(name);
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                hops += 1;
                if hops > MAX_HOPS {
                    return Err(Errno::LOOP);
                }
                let link = Path::new(OsStr::from_bytes(link.as_bytes()));
                let mut front = Vec::new();
                for c in link.components() {
                    match c {
                        Component::Normal(n) => front.push(n.to_os_string()),
                        Component::ParentDir => front.push(OsString::from("..")),
                        Component::CurDir => {}
                        // Absolute symlinks are refused, as under RESOLVE_BENEATH.
                        Component::RootDir | Component::Prefix(_) => return Err(Errno::XDEV),
                    }
                }
                for n in front.into_iter().rev() {
                    todo.push_front(n);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(fd)
}

/// The absolute path the kernel has for an open directory, if it can tell.
pub(super) fn fd_path(fd: BorrowedFd<'_>) -> Option<PathBuf> {
    let p = kernel_path(fd)?;
    if !p.is_absolute() || p.as_os_str().as_bytes().ends_with(b" (deleted)") {
        return None;
    }
    Some(p)
}

/// Linux: the `/proc/self/fd` link.
#[cfg(target_os = "linux")]
fn kernel_path(fd: BorrowedFd<'_>) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()
}

/// macOS: `fcntl(F_GETPATH)`.
#[cfg(target_vendor = "apple")]
fn kernel_path(fd: BorrowedFd<'_>) -> Option<PathBuf> {
    let p = rustix::fs::getpath(fd).ok()?;
    Some(PathBuf::from(OsStr::from_bytes(p.as_bytes())))
}

/// Elsewhere the kernel does not say: relative symlinks are then interpreted from the lexical
/// path, and the journal names directories by the request's path (confinement never depends on
/// this).
#[cfg(not(any(target_os = "linux", target_vendor = "apple")))]
fn kernel_path(_fd: BorrowedFd<'_>) -> Option<PathBuf> {
    None
}

/// The path of an open directory relative to the root, when the kernel can tell and it is
/// beneath the root. Only used to interpret relative symlinks and to name directories in the
/// journal; confinement never depends on it (every open goes through `openat2` again).
pub(super) fn real_rel(root: &Root, fd: BorrowedFd<'_>) -> Option<PathBuf> {
    let p = fd_path(fd)?;
    p.strip_prefix(root.dir()).ok().map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;
    use std::os::unix::ffi::OsStrExt;

    fn norm(p: &[u8]) -> Result<PathBuf, Code> {
        normalize(Path::new("/r/root"), OsStr::from_bytes(p)).map_err(|r| r.code())
    }

    #[test]
    fn lexical_rules() {
        assert_eq!(norm(b"a/../b").unwrap(), PathBuf::from("b"));
        assert_eq!(norm(b"./a//b/").unwrap(), PathBuf::from("a/b"));
        assert_eq!(norm(b"/r/root/a").unwrap(), PathBuf::from("a"));
        assert_eq!(
            norm(b"caf\xe9/\xff").unwrap(),
            PathBuf::from(OsStr::from_bytes(b"caf\xe9/\xff"))
        );
        assert_eq!(norm(b"..").unwrap_err(), Code::OutsideRoot);
        assert_eq!(norm(b"a/../../root/x").unwrap_err(), Code::OutsideRoot);
        assert_eq!(norm(b"/r/root/../root2/x").unwrap_err(), Code::OutsideRoot);
        assert_eq!(norm(b"/etc/passwd").unwrap_err(), Code::OutsideRoot);
        assert_eq!(
            norm(b"/proc/self/root/r/root/a").unwrap_err(),
            Code::OutsideRoot
        );
        assert_eq!(norm(b"").unwrap_err(), Code::OutsideRoot);
        assert_eq!(norm(b"a\0b").unwrap_err(), Code::OutsideRoot);
        assert_eq!(norm(b".").unwrap_err(), Code::NotAFile);
        assert_eq!(
            norm(b".redline-journal/journal").unwrap_err(),
            Code::OutsideRoot
        );
        assert_eq!(norm(&[b'x'; 256]).unwrap_err(), Code::InvalidRequest);
        assert_eq!(
            norm(&[b'x'; 255]).unwrap(),
            PathBuf::from(OsStr::from_bytes(&[b'x'; 255]))
        );
    }
}
