//! Helpers shared by the integration tests: the one way to run the binary, tree snapshots and
//! copies, and the `git apply`/`patch` round trip.
#![allow(dead_code)]

pub mod tmux;

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};

/// The redline binary these tests drive.
pub const BIN: &str = env!("CARGO_BIN_EXE_redline");

/// A `redline` command.
pub fn redline() -> Command {
    Command::new(BIN)
}

/// Spawns `cmd` with `stdin` as its standard input, fed from a thread and then closed, so a
/// child that exits before reading all of it cannot block the test. stdout and stderr are as
/// `cmd` sets them.
pub fn spawn_with_stdin(cmd: &mut Command, stdin: &[u8]) -> Child {
    let mut child = cmd.stdin(Stdio::piped()).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    child
}

/// Starts `cmd` for a session of requests and answers (`serve`, `mcp`): stdin and stdout piped,
/// stderr discarded. The child, its stdin and its stdout.
pub fn spawn_session(cmd: &mut Command) -> (Child, ChildStdin, ChildStdout) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    (child, stdin, stdout)
}

/// Asserts that `out` is from a command that exited 0, showing its stderr when not.
pub fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The JSON that `out` printed, after [`assert_success`].
pub fn json_stdout(out: &Output) -> serde_json::Value {
    assert_success(out);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs `cmd` with `stdin` as its standard input ([`spawn_with_stdin`]) and captures its
/// output.
pub fn output_with_stdin(cmd: &mut Command, stdin: &[u8]) -> Output {
    let child = spawn_with_stdin(cmd.stdout(Stdio::piped()).stderr(Stdio::piped()), stdin);
    child.wait_with_output().unwrap()
}

/// Applies `patch` with `tool` (a shell command reading the patch on stdin: `git apply`,
/// `patch -p1 …`) to a copy of the tree `before`; the tree it gives, or the tool's output when it
/// refuses.
pub fn applied_by(
    tool: &str,
    before: &Path,
    patch: &[u8],
) -> Result<BTreeMap<PathBuf, Entry>, String> {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(before, dir.path());
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(tool)
        .current_dir(dir.path())
        .env("GIT_CEILING_DIRECTORIES", dir.path().parent().unwrap());
    let out = output_with_stdin(&mut cmd, patch);
    if !out.status.success() {
        return Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(snapshot(dir.path(), false))
}

/// One entry of a tree, compared byte for byte.
#[derive(Debug, PartialEq, Eq)]
pub enum Entry {
    Dir,
    File(Vec<u8>),
    Link(PathBuf),
}

/// Every file and symlink under `root` by relative path, and every directory too when `dirs`;
/// empty when `root` does not exist.
pub fn snapshot(root: &Path, dirs: bool) -> BTreeMap<PathBuf, Entry> {
    fn walk(root: &Path, dir: &Path, dirs: bool, out: &mut BTreeMap<PathBuf, Entry>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                out.insert(rel, Entry::Link(fs::read_link(&path).unwrap()));
            } else if meta.is_dir() {
                if dirs {
                    out.insert(rel, Entry::Dir);
                }
                walk(root, &path, dirs, out);
            } else {
                out.insert(rel, Entry::File(fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    if root.exists() {
        walk(root, root, dirs, &mut out);
    }
    out
}

/// Copies a tree, keeping symlinks as symlinks; copies are writable even when the source is
/// checked out read-only.
pub fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let dest = to.join(path.file_name().unwrap());
        let meta = fs::symlink_metadata(&path).unwrap();
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&path).unwrap(), &dest).unwrap();
        } else if meta.is_dir() {
            copy_tree(&path, &dest);
        } else {
            fs::write(&dest, fs::read(&path).unwrap()).unwrap();
        }
    }
}

/// What the `git apply` round trip found (see [`round_trip`]).
pub struct RoundTrip {
    /// The dry run's `--format diff`.
    pub diff: Vec<u8>,
    /// The JSON response of `redline apply`.
    pub response: serde_json::Value,
    /// The tree `redline apply` wrote, kept for the caller to look at.
    pub written: tempfile::TempDir,
    /// What the tool made of a copy of the tree from the diff, or what it said when it refused.
    pub patched: Result<BTreeMap<PathBuf, Entry>, String>,
}

impl RoundTrip {
    /// `Ok` when the tool applied the diff and got exactly the tree redline wrote; else why not,
    /// with the diff.
    pub fn agrees(&self) -> Result<(), String> {
        let written = snapshot(self.written.path(), false);
        match &self.patched {
            Ok(patched) if *patched == written => Ok(()),
            Ok(patched) => Err(format!(
                "the patched tree {patched:?}\nis not the written tree {written:?}\ndiff:\n{}",
                String::from_utf8_lossy(&self.diff)
            )),
            Err(e) => Err(format!(
                "refused: {e}\ndiff:\n{}",
                String::from_utf8_lossy(&self.diff)
            )),
        }
    }
}

/// The round trip every diff must survive: the `--format diff` of a dry run of `request` on
/// the tree `before`, applied by `tool` ([`applied_by`]) to a copy of it, gives the tree that
/// `redline apply` of the same request writes to another copy. Both redline runs must succeed;
/// `before` is left as it is.
pub fn round_trip(tool: &str, before: &Path, request: &Path) -> RoundTrip {
    let dry = redline()
        .args(["apply", "--dry-run", "--format", "diff", "--root"])
        .arg(before)
        .arg(request)
        .output()
        .unwrap();
    assert!(
        dry.status.success(),
        "the dry run failed: {}",
        String::from_utf8_lossy(&dry.stderr)
    );
    let written = tempfile::tempdir().unwrap();
    copy_tree(before, written.path());
    let applied = redline()
        .args(["apply", "--format", "json", "--root"])
        .arg(written.path())
        .arg(request)
        .output()
        .unwrap();
    assert!(
        applied.status.success(),
        "redline apply failed: {}",
        String::from_utf8_lossy(&applied.stderr)
    );
    RoundTrip {
        patched: applied_by(tool, before, &dry.stdout),
        diff: dry.stdout,
        response: serde_json::from_slice(&applied.stdout).unwrap(),
        written,
    }
}

/// The fenced block after `<!-- test: NAME -->` in the document `doc` (named `file` in
/// messages): what a test runs or compares, so the docs cannot drift from the tool.
pub fn doc_block(doc: &str, file: &str, name: &str) -> String {
    let marker = format!("<!-- test: {name} -->");
    let at = doc
        .find(&marker)
        .unwrap_or_else(|| panic!("no block {name} in {file}"));
    let mut lines = doc[at + marker.len()..]
        .lines()
        .skip_while(|l| !l.starts_with("```"));
    lines.next();
    let body: Vec<&str> = lines.take_while(|l| !l.starts_with("```")).collect();
    body.join("\n") + "\n"
}

/// Every entry below `dir` (relative, sorted), symlinks not followed.
pub fn tree(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, d: &Path, out: &mut Vec<String>) {
        for e in fs::read_dir(d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            out.push(p.strip_prefix(base).unwrap().to_string_lossy().into_owned());
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
