//! Regressions for hostile input (issue 14) through the real binary: the journal directory
//! reached through a symlink, over-long names, bounded requests, and failures that say why.

use serde_json::Value;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_redline");

fn root() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("r");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("a.txt"), "alpha\n").unwrap();
    (t, root)
}

/// `redline --root ROOT ARGS…` with `stdin` as standard input.
fn run(root: &Path, args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(BIN)
        .arg("--root")
        .arg(root)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Every entry below `dir` (relative, sorted), symlinks not followed.
fn tree(dir: &Path) -> Vec<String> {
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
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Issue 14.1: a symlink inside the root that points at `.redline-journal` (or into it) is not a
/// way to write into the journal directory: such targets are refused and nothing is written,
/// instead of a write reported applied and then deleted with the journal.
#[test]
fn journal_directory_through_a_symlink_is_refused() {
    for (link, target) in [
        ("jl", ".redline-journal"),
        ("jl", "./.redline-journal/"),
        ("jl", "sub/../.redline-journal"),
    ] {
        for path in ["jl/journal.tmp", "jl/journal", "jl/x.txt", "jl/sub/x.txt"] {
            let (_t, root) = root();
            fs::create_dir(root.join("sub")).unwrap();
            symlink(target, root.join(link)).unwrap();
            let req = serde_json::json!({"files": [
                {"path": "a.txt", "edits": [{"oldText": "alpha", "newText": "beta"}]},
                {"path": path, "content": "x\n"},
            ]});
            let o = run(
                &root,
                &["apply", "--format", "json"],
                req.to_string().as_bytes(),
            );
            let v = json(&o);
            assert_eq!(o.status.code(), Some(1), "{target} {path}: {v}");
            assert_eq!(v["ok"], false, "{path}");
            assert_eq!(v["written"], false, "{path}");
            let e = v["errors"]
                .as_array()
                .unwrap()
                .iter()
                // The file, or the directory that would be created for it.
                .find(|e| path.starts_with(e["path"].as_str().unwrap()))
                .unwrap_or_else(|| panic!("no error for {path}: {v}"));
            assert_eq!(e["code"], "outside_root", "{path}");
            assert!(
                e["message"].as_str().unwrap().contains(".redline-journal"),
                "{e}"
            );
            assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"alpha\n");
            assert_eq!(tree(&root), ["a.txt", "jl", "sub"], "{target} {path}");
        }
    }
    // A symlink to a directory *inside* a leftover journal directory is refused too, judged
    // by the directory opened (walking up), not by the name.
    let (_t, root) = root();
    fs::create_dir_all(root.join(".redline-journal/deep")).unwrap();
    symlink(".redline-journal/deep", root.join("jd")).unwrap();
    let req = r#"{"files": [{"path": "jd/x.txt", "content": "x\n"}]}"#;
    let o = run(&root, &["apply", "--format", "json"], req.as_bytes());
    let v = json(&o);
    assert_eq!(v["errors"][0]["code"], "outside_root", "{v}");
    assert!(!root.join(".redline-journal/deep/x.txt").exists());
    // Reading through the link is refused the same way.
    fs::write(root.join(".redline-journal/deep/r.txt"), "j\n").unwrap();
    let o = run(&root, &["read", "jd/r.txt"], b"");
    assert_ne!(o.status.code(), Some(0));
}

/// Issue 14.6: a file name over 255 bytes is a bad path (exit 1, `invalid_request`), not an
/// I/O failure (exit 3, "check the disk").
#[test]
fn file_name_over_255_bytes_is_a_bad_path() {
    let (_t, root) = root();
    let long = "x".repeat(256);
    for req in [
        serde_json::json!({"files": [{"path": long.clone(), "content": "x\n"}]}),
        serde_json::json!({"files": [{"path": format!("{long}/a.txt"), "content": "x\n"}]}),
        serde_json::json!({"files": [{"path": "a.txt", "moveTo": long.clone()}]}),
        serde_json::json!({"files": [{"path": long.clone(), "edits": [{"oldText": "a", "newText": "b"}]}]}),
    ] {
        let o = run(
            &root,
            &["apply", "--format", "json"],
            req.to_string().as_bytes(),
        );
        let v = json(&o);
        assert_eq!(o.status.code(), Some(1), "{req}: {v}");
        let e = &v["errors"][0];
        assert_eq!(e["code"], "invalid_request", "{v}");
        assert!(e["message"].as_str().unwrap().contains("255"), "{e}");
    }
    // 255 bytes is fine.
    let ok = "y".repeat(255);
    let req = serde_json::json!({"files": [{"path": ok.clone(), "content": "x\n"}]});
    let o = run(
        &root,
        &["apply", "--format", "json"],
        req.to_string().as_bytes(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", json(&o));
    assert_eq!(fs::read(root.join(&ok)).unwrap(), b"x\n");
}
