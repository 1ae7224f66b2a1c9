//! The writer's contract on ordinary and special targets (SPEC §7): confinement, symlinks,
//! special files, metadata, stale detection, all-or-nothing on failure.

use redline::write::{Change, Expect, Limits, Root};
use redline::{Code, WarningCode};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;

fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    fs::create_dir_all(root.join("sub")).unwrap();
    fs::create_dir_all(t.path().join("outside")).unwrap();
    fs::write(t.path().join("outside/secret"), "secret\n").unwrap();
    fs::write(root.join("a.txt"), "alpha\n").unwrap();
    fs::write(root.join("sub/b.txt"), "beta\n").unwrap();
    (t, root)
}

fn write(path: &str, bytes: &str, expect: Expect) -> Change<'static> {
    Change::Write {
        path: path.into(),
        content: bytes.as_bytes().to_vec().into(),
        expect,
    }
}

/// Entries of a directory tree (relative names), sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(base: &Path, d: &Path, out: &mut Vec<String>) {
        for e in fs::read_dir(d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            out.push(p.strip_prefix(base).unwrap().display().to_string());
            if e.file_type().unwrap().is_dir() {
                walk(base, &p, out);
            }
        }
    }
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn read_edit_create_delete_move() {
    let (_t, root) = setup();
    let r = Root::open(&root, Limits::default()).unwrap();
    let snap = r.read("a.txt").unwrap();
    assert_eq!(snap.bytes, b"alpha\n");
    assert_eq!(snap.nlink, 1);
    let lock = r.lock().unwrap();
    let rep = r
        .commit(
            &lock,
            &[
                write(
                    "a.txt",
                    "ALPHA\n",
                    Expect::Unchanged(snap.fingerprint.clone()),
                ),
                write("new/dir/c.txt", "gamma\n", Expect::Absent),
                write("moved.txt", "beta\n", Expect::Absent),
                Change::Delete {
                    path: "sub/b.txt".into(),
                    expect: Expect::Any,
                },
            ],
        )
        .unwrap();
    assert!(rep.warnings.is_empty());
    assert!(!rep.durability_unknown);
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"ALPHA\n");
    assert_eq!(fs::read(root.join("new/dir/c.txt")).unwrap(), b"gamma\n");
    assert_eq!(fs::read(root.join("moved.txt")).unwrap(), b"beta\n");
    assert!(!root.join("sub/b.txt").exists());
    assert_eq!(
        tree(&root),
        [
            "a.txt",
            "moved.txt",
            "new",
            "new/dir",
            "new/dir/c.txt",
            "sub"
        ]
    );
    // The old fingerprint is now stale.
    let err = r
        .commit(
            &lock,
            &[write("a.txt", "x", Expect::Unchanged(snap.fingerprint))],
        )
        .unwrap_err();
    assert_eq!(err.error.code(), Code::Stale);
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"ALPHA\n");
}

#[test]
fn stale_rolls_back_whole_batch_and_created_dirs() {
    let (_t, root) = setup();
    let r = Root::open(&root, Limits::default()).unwrap();
    let a = r.read("a.txt").unwrap();
    let b = r.read("sub/b.txt").unwrap();
    fs::write(root.join("sub/b.txt"), "beta changed\n").unwrap();
    let before = tree(&root);
    let lock = r.lock().unwrap();
    let err = r
        .commit(
            &lock,
            &[
                write("a.txt", "A\n", Expect::Unchanged(a.fingerprint)),
                write("x/y/z.txt", "new\n", Expect::Absent),
                write("sub/b.txt", "B\n", Expect::Unchanged(b.fingerprint)),
            ],
        )
        .unwrap_err();
    assert_eq!(err.error.code(), Code::Stale);
    assert_eq!(err.error.path, "sub/b.txt");
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"alpha\n");
    assert_eq!(fs::read(root.join("sub/b.txt")).unwrap(), b"beta changed\n");
    assert_eq!(tree(&root), before);
    // Absent that appeared.
    let err = r
        .commit(&lock, &[write("a.txt", "A\n", Expect::Absent)])
        .unwrap_err();
    assert_eq!(err.error.code(), Code::Stale);
}

#[test]
fn confinement_refusals() {
    let (t, root) = setup();
    symlink("../outside/secret", root.join("out_rel")).unwrap();
    symlink(t.path().join("outside/secret"), root.join("out_abs")).unwrap();
    symlink("../outside", root.join("outdir")).unwrap();
    let r = Root::open(&root, Limits::default()).unwrap();
    let lock = r.lock().unwrap();
    let outside = t.path().join("outside/secret").display().to_string();
    for p in [
        "../outside/secret",
        outside.as_str(),
        "out_rel",
        "out_abs",
        "outdir/secret",
        "outdir/new",
        "",
        "/proc/self/root/etc/passwd",
        "sub/../../outside/secret",
    ] {
        assert_eq!(r.read(p).unwrap_err().code(), Code::OutsideRoot, "read {p}");
        let e = r
            .commit(&lock, &[write(p, "pwned\n", Expect::Any)])
            .unwrap_err();
        assert_eq!(e.error.code(), Code::OutsideRoot, "write {p}");
    }
    assert_eq!(
        fs::read(t.path().join("outside/secret")).unwrap(),
        b"secret\n"
    );
    assert_eq!(tree(&t.path().join("outside")), ["secret"]);
    // Inside after `..` is fine, and absolute paths inside the root too.
    assert_eq!(r.read("sub/../a.txt").unwrap().bytes, b"alpha\n");
    let abs = r.dir().join("a.txt").display().to_string();
    assert_eq!(r.read(&abs).unwrap().bytes, b"alpha\n");
}

#[test]
fn symlink_inside_is_followed_and_kept() {
    let (_t, root) = setup();
    symlink("sub/b.txt", root.join("link")).unwrap();
    symlink("../a.txt", root.join("sub/up")).unwrap();
    let r = Root::open(&root, Limits::default()).unwrap();
    let s = r.read("link").unwrap();
    assert!(s.via_symlink);
    assert_eq!(s.bytes, b"beta\n");
    let lock = r.lock().unwrap();
    r.commit(
        &lock,
        &[write("link", "BETA\n", Expect::Unchanged(s.fingerprint))],
    )
    .unwrap();
    assert!(
        fs::symlink_metadata(root.join("link"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read(root.join("sub/b.txt")).unwrap(), b"BETA\n");
    r.commit(&lock, &[write("sub/up", "ALPHA\n", Expect::Any)])
        .unwrap();
    assert!(
        fs::symlink_metadata(root.join("sub/up"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"ALPHA\n");
    // Delete of a symlink removes the link, not its target.
    r.commit(
        &lock,
        &[Change::Delete {
            path: "link".into(),
            expect: Expect::Any,
        }],
    )
    .unwrap();
    assert!(fs::symlink_metadata(root.join("link")).is_err());
    assert_eq!(fs::read(root.join("sub/b.txt")).unwrap(), b"BETA\n");
    // A symlink and its target in one batch are one file.
    let e = r
        .commit(
            &lock,
            &[
                write("sub/up", "1", Expect::Any),
                write("a.txt", "2", Expect::Any),
            ],
        )
        .unwrap_err();
    assert_eq!(e.error.code(), Code::InvalidRequest);
}

/// `mknod(2)` through libc (rustix has no `mknodat` on macOS).
fn mknod(path: &Path, mode: libc::mode_t, dev: libc::dev_t) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    if unsafe { libc::mknod(c.as_ptr(), mode, dev) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[test]
fn special_files_are_not_a_file_without_blocking() {
    let (_t, root) = setup();
    mknod(&root.join("fifo"), libc::S_IFIFO | 0o644, 0).unwrap();
    // A character device like the real /dev/null (its numbers differ between OSes).
    let null = fs::metadata("/dev/null").unwrap().rdev();
    #[allow(clippy::unnecessary_cast)] // dev_t is u64 on Linux, i32 on macOS
    let dev = mknod(
        &root.join("null"),
        libc::S_IFCHR | 0o666,
        null as libc::dev_t,
    );
    let r = Root::open(&root, Limits::default()).unwrap();
    let lock = r.lock().unwrap();
    let mut targets = vec!["fifo", "sub"];
    match dev {
        Ok(()) => targets.push("null"),
        Err(e) => eprintln!("skipping the device target: mknod failed ({e}); needs CAP_MKNOD"),
    }
    for p in targets {
        assert_eq!(r.read(p).unwrap_err().code(), Code::NotAFile, "read {p}");
        assert_eq!(
            r.exists(p).unwrap_err().code(),
            Code::NotAFile,
            "exists {p}"
        );
        let e = r.commit(&lock, &[write(p, "x", Expect::Any)]).unwrap_err();
        assert_eq!(e.error.code(), Code::NotAFile, "write {p}");
        let e = r
            .commit(
                &lock,
                &[Change::Delete {
                    path: p.into(),
                    expect: Expect::Any,
                }],
            )
            .unwrap_err();
        assert_eq!(e.error.code(), Code::NotAFile, "delete {p}");
    }
    assert!(
        fs::symlink_metadata(root.join("fifo"))
            .unwrap()
            .file_type()
            .is_fifo_like()
    );
    assert!(r.exists("a.txt").unwrap());
    assert!(!r.exists("nope.txt").unwrap());
    assert!(!r.exists("nodir/nope.txt").unwrap());
    assert_eq!(r.read("nope.txt").unwrap_err().code(), Code::FileNotFound);
    assert_eq!(r.read("a.txt/x").unwrap_err().code(), Code::NotAFile);
}

trait FifoLike {
    fn is_fifo_like(&self) -> bool;
}
impl FifoLike for fs::FileType {
    fn is_fifo_like(&self) -> bool {
        use std::os::unix::fs::FileTypeExt;
        self.is_fifo()
    }
}

/// Sets `user.redline` on `p`; false when the filesystem (or the OS: the writer copies no
/// extended attributes on the BSDs) has none.
#[cfg(any(target_os = "linux", target_vendor = "apple"))]
fn set_xattr(p: &Path) -> bool {
    rustix::fs::setxattr(p, "user.redline", b"kept", rustix::fs::XattrFlags::empty()).is_ok()
}

#[cfg(not(any(target_os = "linux", target_vendor = "apple")))]
fn set_xattr(_p: &Path) -> bool {
    false
}

#[cfg(any(target_os = "linux", target_vendor = "apple"))]
fn get_xattr(p: &Path) -> Vec<u8> {
    let mut buf = [0u8; 16];
    let n = rustix::fs::getxattr(p, "user.redline", &mut buf[..]).unwrap();
    buf[..n].to_vec()
}

#[cfg(not(any(target_os = "linux", target_vendor = "apple")))]
fn get_xattr(_p: &Path) -> Vec<u8> {
    unreachable!("set_xattr is false here")
}

/// A list of extended attributes longer than the writer's first, small read of it (256 bytes)
/// is asked for its size and copied whole.
#[cfg(any(target_os = "linux", target_vendor = "apple"))]
#[test]
fn a_long_xattr_list_is_copied_whole() {
    let (_t, root) = setup();
    let a = root.join("a.txt");
    let names: Vec<String> = (0..12)
        .map(|i| format!("user.redline-a-long-attribute-name-number-{i:02}"))
        .collect();
    for (i, n) in names.iter().enumerate() {
        let v = format!("value {i}");
        if rustix::fs::setxattr(
            &a,
            n.as_str(),
            v.as_bytes(),
            rustix::fs::XattrFlags::empty(),
        )
        .is_err()
        {
            eprintln!("skipping: the filesystem has no room for user xattrs here");
            return;
        }
    }
    let r = Root::open(&root, Limits::default()).unwrap();
    let lock = r.lock().unwrap();
    r.commit(&lock, &[write("a.txt", "new\n", Expect::Any)])
        .unwrap();
    assert_eq!(fs::read(&a).unwrap(), b"new\n");
    for (i, n) in names.iter().enumerate() {
        let mut buf = [0u8; 32];
        let len = rustix::fs::getxattr(&a, n.as_str(), &mut buf[..]).unwrap();
        assert_eq!(&buf[..len], format!("value {i}").as_bytes(), "{n}");
    }
}

#[test]
fn mode_owner_xattrs_kept_and_hard_link_warned() {
    let (_t, root) = setup();
    let a = root.join("a.txt");
    fs::set_permissions(&a, fs::Permissions::from_mode(0o2751)).unwrap();
    let _ = std::os::unix::fs::chown(&a, Some(65534), Some(65534));
    let xattr = set_xattr(&a);
    let before = fs::metadata(&a).unwrap();
    let r = Root::open(&root, Limits::default()).unwrap();
    let lock = r.lock().unwrap();
    r.commit(&lock, &[write("a.txt", "new\n", Expect::Any)])
        .unwrap();
    let after = fs::metadata(&a).unwrap();
    assert_eq!(after.mode(), before.mode());
    assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    assert_ne!(after.ino(), before.ino());
    if xattr {
        assert_eq!(get_xattr(&a), b"kept");
    } else {
        eprintln!("skipping the xattr check: the filesystem has no user xattrs");
    }
    // New files get default permissions (0666 less the umask), never the 0600 of a temp.
    r.commit(&lock, &[write("fresh.txt", "f\n", Expect::Absent)])
        .unwrap();
    // In the platform's mode_t (u32 on Linux, u16 on macOS).
    let m = rustix::fs::stat(root.join("fresh.txt")).unwrap().st_mode & 0o777;
    let umask = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
    rustix::process::umask(umask);
    assert_eq!(m, 0o666 & !umask.bits());

    fs::hard_link(root.join("sub/b.txt"), root.join("hard")).unwrap();
    assert_eq!(r.read("hard").unwrap().nlink, 2);
    let rep = r
        .commit(&lock, &[write("hard", "H\n", Expect::Any)])
        .unwrap();
    assert_eq!(rep.warnings.len(), 1);
    assert_eq!(rep.warnings[0].code(), WarningCode::HardLinkBroken);
    assert_eq!(fs::read(root.join("hard")).unwrap(), b"H\n");
    assert_eq!(fs::read(root.join("sub/b.txt")).unwrap(), b"beta\n");
}

#[test]
fn too_large_and_missing() {
    let (_t, root) = setup();
    let r = Root::open(
        &root,
        Limits {
            max_file_size: 4,
            ..Limits::default()
        },
    )
    .unwrap();
    assert_eq!(r.read("a.txt").unwrap_err().code(), Code::TooLarge);
    let lock = r.lock().unwrap();
    let e = r
        .commit(&lock, &[write("n.txt", "12345", Expect::Absent)])
        .unwrap_err();
    assert_eq!(e.error.code(), Code::TooLarge);
    let e = r
        .commit(
            &lock,
            &[Change::Delete {
                path: "nope".into(),
                expect: Expect::Any,
            }],
        )
        .unwrap_err();
    assert_eq!(e.error.code(), Code::FileNotFound);
    assert!(e.error.hint().is_some());
    assert!(!root.join("n.txt").exists());
}

#[test]
fn recover_without_journal_is_a_no_op_and_twice_is_fine() {
    let (_t, root) = setup();
    let r = Root::open(&root, Limits::default()).unwrap();
    let lock = r.lock().unwrap();
    let rep = r.recover(&lock).unwrap();
    assert_eq!(rep.action, redline::write::RecoveryAction::Nothing);
    let rep = r.recover(&lock).unwrap();
    assert_eq!(rep.action, redline::write::RecoveryAction::Nothing);
}

/// The commit-time check trusts unchanged stamps only for a file that was settled when read;
/// a same-size rewrite with its mtime put back still changes ctime, and is stale.
#[test]
fn stale_when_rewritten_same_size_with_mtime_restored() {
    let (_d, root) = setup();
    fs::write(root.join("f"), "one\n").unwrap();
    // Older than any timestamp granule when read: the fingerprint is settled.
    std::thread::sleep(std::time::Duration::from_millis(250));
    let r = Root::open(&root, Limits::default()).unwrap();
    let snap = r.read("f").unwrap();
    assert!(snap.fingerprint.settled);
    let mtime = fs::metadata(root.join("f")).unwrap().modified().unwrap();
    fs::write(root.join("f"), "two\n").unwrap();
    fs::File::options()
        .write(true)
        .open(root.join("f"))
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let lock = r.lock().unwrap();
    let err = r
        .commit(
            &lock,
            &[write(
                "f",
                "three\n",
                Expect::Unchanged(snap.fingerprint.clone()),
            )],
        )
        .unwrap_err();
    assert_eq!(err.error.code(), Code::Stale);
    assert_eq!(fs::read_to_string(root.join("f")).unwrap(), "two\n");
    // Touched only (same content, new stamps): decided by the hash, not stale.
    let snap = r.read("f").unwrap();
    fs::File::options()
        .write(true)
        .open(root.join("f"))
        .unwrap()
        .set_modified(std::time::SystemTime::now())
        .unwrap();
    r.commit(
        &lock,
        &[write("f", "three\n", Expect::Unchanged(snap.fingerprint))],
    )
    .unwrap();
    assert_eq!(fs::read_to_string(root.join("f")).unwrap(), "three\n");
    assert_eq!(tree(&root), ["a.txt", "f", "sub", "sub/b.txt"]);
}

/// A file changed just before it was read is checked at commit by its content: compared with
/// the bytes the caller still holds ([`Root::commit_held`]) it gets the verdict the hash gives.
/// An in-place rewrite of the same size is stale, a touch alone is not, a deleted file is
/// stale, and held bytes of another length than the fingerprint's fall back to the hash.
#[test]
fn unsettled_file_is_checked_against_the_held_bytes() {
    use redline::write::Held;
    let (_d, root) = setup();
    let r = Root::open(&root, Limits::default()).unwrap();
    let lock = r.lock().unwrap();
    let body = "x".repeat(600_000) + "\n";
    fs::write(root.join("f"), &body).unwrap();
    let snap = r.read("f").unwrap();
    assert!(!snap.fingerprint.settled);
    let held = [Some(Held {
        head: &snap.bytes[..3],
        tail: &snap.bytes[3..],
    })];
    let change = |to: &str| [write("f", to, Expect::Unchanged(snap.fingerprint.clone()))];
    // Same size, one byte changed far in: stale, and the rewrite stays.
    let mut other = body.clone().into_bytes();
    other[500_000] = b'y';
    fs::write(root.join("f"), &other).unwrap();
    let err = r.commit_held(&lock, &change("new\n"), &held).unwrap_err();
    assert_eq!(err.error.code(), Code::Stale);
    assert_eq!(fs::read(root.join("f")).unwrap(), other);
    // The same bytes again (new stamps): not stale.
    fs::write(root.join("f"), &body).unwrap();
    r.commit_held(&lock, &change("new\n"), &held).unwrap();
    assert_eq!(fs::read_to_string(root.join("f")).unwrap(), "new\n");
    // Held bytes that are not the fingerprint's length are not trusted: the hash decides.
    fs::write(root.join("f"), &body).unwrap();
    let short = [Some(Held {
        head: b"",
        tail: b"short",
    })];
    r.commit_held(&lock, &change("newer\n"), &short).unwrap();
    assert_eq!(fs::read_to_string(root.join("f")).unwrap(), "newer\n");
    fs::remove_file(root.join("f")).unwrap();
    let err = r.commit_held(&lock, &change("new\n"), &held).unwrap_err();
    assert_eq!(err.error.code(), Code::Stale);
    assert!(!root.join("f").exists());
}

/// `apply` builds its response from the bytes it wrote (rendered and hashed once); it must say
/// exactly what `--dry-run` says of the same batch: diffs, `hashAfter`, ranges. A BOM, CRLF,
/// several edits, `replaceAll`, big files (hashed on a second thread, read and written, one
/// with a BOM; one edited only near its end, whose `hashAfter` resumes from the hashing of the
/// old bytes) and an editing move; `hashBefore` is the version of the file as it was.
#[test]
fn apply_response_is_the_dry_run_response() {
    let big: String = (0..120_000)
        .map(|i| format!("line {i}\r\n"))
        .collect::<String>();
    let big_bom = format!("\u{FEFF}{}", big.replace("\r\n", "\n"));
    let files = [
        ("bom.txt", "\u{FEFF}one\ntwo\nthree\ntwo\n".to_string()),
        ("crlf.txt", "a\r\nb\r\nc\r\n".to_string()),
        ("big.txt", big),
        ("bigbom.txt", big_bom.clone()),
        ("late.txt", big_bom),
        ("m.txt", "move me\nkeep\n".to_string()),
    ];
    let req = serde_json::json!({"files": [
        {"path": "bom.txt", "edits": [
            {"oldText": "two\n", "newText": "2\n2b\n", "replaceAll": true},
            {"oldText": "one", "newText": "1"}]},
        {"path": "crlf.txt", "edits": [{"oldText": "b\n", "newText": "B\nB2\n"}]},
        {"path": "big.txt", "edits": [
            {"oldText": "line 7\r\n", "newText": ""},
            {"oldText": "line 119999\r\n", "newText": "last\n"}]},
        {"path": "bigbom.txt", "edits": [{"oldText": "line 5\n", "newText": "five\n"}]},
        {"path": "late.txt", "edits": [{"oldText": "line 110000\n", "newText": "late\n"}]},
        {"path": "m.txt", "moveTo": "d/moved.txt", "edits": [{"oldText": "move me", "newText": "moved"}]},
    ]});
    let req = redline::parse_json(&req.to_string()).unwrap();
    let mut out = Vec::new();
    for mode in [redline::Mode::DryRun, redline::Mode::Apply] {
        let t = tempfile::tempdir().unwrap();
        for (name, text) in &files {
            fs::write(t.path().join(name), text).unwrap();
        }
        let settings = redline::Settings {
            root: t.path().to_path_buf(),
            ..Default::default()
        };
        let mut v = redline::run(&req, mode, &settings).to_json();
        assert_eq!(v["ok"], true, "{v}");
        for (f, (name, text)) in v["files"].as_array().unwrap().iter().zip(&files) {
            assert_eq!(f["path"], *name);
            let version = redline::hash::version(text.as_bytes());
            assert_eq!(f["hashBefore"], version, "{name}");
        }
        if mode == redline::Mode::Apply {
            assert_eq!(v["written"], true, "{v}");
            for f in v["files"].as_array().unwrap() {
                let path = f["moveTo"].as_str().or(f["path"].as_str()).unwrap();
                let bytes = fs::read(t.path().join(path)).unwrap();
                assert_eq!(f["hashAfter"], redline::hash::version(&bytes), "{path}");
            }
        }
        for k in ["dryRun", "written"] {
            v.as_object_mut().unwrap().remove(k);
        }
        for f in v["files"].as_array_mut().unwrap() {
            f.as_object_mut().unwrap().remove("status");
        }
        out.push(v);
    }
    assert_eq!(out[0], out[1]);
}
