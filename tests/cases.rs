//! The engine fixture suite (SPEC §1–§5), run through the real binary.
//!
//! Each directory under `testdata/cases/` is one case (see `testdata/cases/README.md`):
//! `input/` is copied to a fresh root, the command of `case.json` runs with
//! `--root <root> --format json` and the request file, and then the exit status, the multiset of
//! error codes, the JSON-pointer checks and the whole tree (files and symlinks, byte for byte,
//! nothing extra) must equal what the case says. All cases run; the failures are listed together.
//!
//! `CASE=substring cargo test --test cases` runs only the matching cases.

mod common;

use common::{Entry, copy_tree, snapshot};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

const CASES: &str = "testdata/cases";
/// Request file names, in the order they are looked for.
const REQUESTS: &[&str] = &["request.json", "request.patch", "request.txt"];
/// Lives next to the root, so that `../outside.txt` names an existing file outside it.
const OUTSIDE: &[u8] = b"outside the root\n";

/// Bytes shown readably: valid UTF-8 as a Rust string literal, otherwise escaped bytes.
fn show(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => format!("{s:?}"),
        Err(_) => format!("b\"{}\"", bytes.escape_ascii()),
    }
}

fn show_entry(e: &Entry) -> String {
    match e {
        Entry::File(b) => show(b),
        Entry::Link(t) => format!("symlink -> {}", t.display()),
        Entry::Dir => "a directory".into(),
    }
}

/// A precise description of how two trees differ; empty when they are equal.
fn tree_diff(want: &BTreeMap<PathBuf, Entry>, got: &BTreeMap<PathBuf, Entry>) -> String {
    let mut out = String::new();
    for (p, w) in want {
        match got.get(p) {
            None => writeln!(out, "  missing {}: want {}", p.display(), show_entry(w)).unwrap(),
            Some(g) if g != w => {
                writeln!(out, "  {} differs", p.display()).unwrap();
                if let (Entry::File(w), Entry::File(g)) = (w, g) {
                    let at = w
                        .iter()
                        .zip(g.iter())
                        .position(|(a, b)| a != b)
                        .unwrap_or(w.len().min(g.len()));
                    writeln!(out, "    first difference at byte {at}").unwrap();
                }
                writeln!(out, "    want {}", show_entry(w)).unwrap();
                writeln!(out, "    got  {}", show_entry(g)).unwrap();
            }
            _ => {}
        }
    }
    for (p, g) in got {
        if !want.contains_key(p) {
            writeln!(out, "  unexpected {}: {}", p.display(), show_entry(g)).unwrap();
        }
    }
    out
}

/// The sorted error codes of a response: `error.code`, or every `errors[].code`.
fn codes(resp: &Value) -> Vec<String> {
    let mut out: Vec<String> = match resp.get("error") {
        Some(e) => vec![e["code"].as_str().unwrap_or("?").to_string()],
        None => resp["errors"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| e["code"].as_str().unwrap_or("?").to_string())
                    .collect()
            })
            .unwrap_or_default(),
    };
    out.sort();
    out
}

struct Case {
    /// A known deviation from SPEC: the case describes what SPEC wants and is expected to fail
    /// until it is fixed; its failure is printed, and passing makes the suite fail (so the mark
    /// is removed).
    pending: Option<String>,
    args: Vec<String>,
    exit: i32,
    codes: Vec<String>,
    checks: Vec<(String, Value)>,
}

fn load_case(dir: &Path) -> Case {
    let text = fs::read_to_string(dir.join("case.json"))
        .unwrap_or_else(|e| panic!("{}: case.json: {e}", dir.display()));
    let v: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: case.json: {e}", dir.display()));
    let strings = |k: &str| -> Vec<String> {
        v.get(k)
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let mut args = strings("args");
    if args.is_empty() {
        args.push("apply".into());
    }
    let mut codes = strings("codes");
    codes.sort();
    let checks = v
        .get("checks")
        .and_then(Value::as_object)
        .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let pending = v.get("pending").and_then(Value::as_str).map(String::from);
    Case {
        pending,
        args,
        exit: v.get("exit").and_then(Value::as_i64).unwrap_or(0) as i32,
        codes,
        checks,
    }
}

/// Runs one case; `Err` holds everything that did not match.
fn run_case(dir: &Path) -> Result<(), String> {
    let case = load_case(dir);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    fs::create_dir_all(&root).unwrap();
    fs::write(tmp.path().join("outside.txt"), OUTSIDE).unwrap();
    if dir.join("input").exists() {
        copy_tree(&dir.join("input"), &root);
    }
    let mut cmd = common::redline();
    cmd.args(&case.args)
        .arg("--root")
        .arg(&root)
        .env("NO_COLOR", "1");
    if !case.args.iter().any(|a| a == "--format") {
        cmd.args(["--format", "json"]);
    }
    if let Some(name) = REQUESTS.iter().find(|n| dir.join(n).exists()) {
        // `{ROOT}` in a request stands for the absolute path of the root.
        let bytes = fs::read(dir.join(name)).unwrap();
        let bytes = match std::str::from_utf8(&bytes) {
            Ok(s) if s.contains("{ROOT}") => {
                s.replace("{ROOT}", root.to_str().unwrap()).into_bytes()
            }
            _ => bytes,
        };
        let req = tmp.path().join(name);
        fs::write(&req, bytes).unwrap();
        cmd.arg(&req);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut problems = String::new();
    let code = out.status.code().unwrap_or(-1);
    if code != case.exit {
        writeln!(problems, "  exit {code}, want {}", case.exit).unwrap();
    }
    let check_mode = case.args.iter().any(|a| a == "--check");
    if check_mode {
        if !out.stdout.is_empty() {
            writeln!(problems, "  --check printed on stdout: {stdout}").unwrap();
        }
    } else {
        match serde_json::from_str::<Value>(&stdout) {
            Err(e) => writeln!(problems, "  stdout is not JSON ({e}): {stdout:?}").unwrap(),
            Ok(resp) => {
                let got = codes(&resp);
                if got != case.codes {
                    writeln!(problems, "  codes {got:?}, want {:?}", case.codes).unwrap();
                }
                for (ptr, want) in &case.checks {
                    match resp.pointer(ptr) {
                        // `null` in a check means "absent (or null)".
                        None if want.is_null() => {}
                        None => writeln!(problems, "  {ptr}: absent, want {want}").unwrap(),
                        Some(got) if got != want => {
                            writeln!(problems, "  {ptr}: {got}, want {want}").unwrap()
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    let want_dir = if dir.join("expected").exists() {
        dir.join("expected")
    } else {
        dir.join("input")
    };
    let d = tree_diff(&snapshot(&want_dir, false), &snapshot(&root, false));
    if !d.is_empty() {
        writeln!(problems, "  tree differs from {}:\n{d}", want_dir.display()).unwrap();
    }
    if fs::read(tmp.path().join("outside.txt")).ok().as_deref() != Some(OUTSIDE) {
        writeln!(problems, "  the file outside the root changed").unwrap();
    }
    if problems.is_empty() {
        Ok(())
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        // One line of compact JSON is easier to scan than the pretty output.
        let compact = serde_json::from_str::<Value>(&stdout)
            .map(|v| v.to_string())
            .unwrap_or_else(|_| stdout.to_string());
        Err(format!(
            "{problems}  stdout: {}\n  stderr: {}",
            compact.trim_end(),
            stderr.trim_end()
        ))
    }
}

#[test]
fn cases() {
    let filter = std::env::var("CASE").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = fs::read_dir(CASES)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .contains(filter.as_str())
        })
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no cases under {CASES} match {filter:?}");
    let mut failed = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy();
        let pending = load_case(dir).pending;
        match (run_case(dir), pending) {
            (Err(e), None) => failed.push(format!("{name}:\n{e}")),
            (Err(e), Some(why)) => eprintln!("pending {name} ({why}) fails as expected:\n{e}"),
            (Ok(()), Some(why)) => failed.push(format!(
                "{name}: passes but is marked pending ({why}); drop the mark"
            )),
            (Ok(()), None) => {}
        }
    }
    let names: Vec<&str> = failed
        .iter()
        .map(|f| f.split(':').next().unwrap_or(""))
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} cases failed: {}\n\n{}",
        failed.len(),
        dirs.len(),
        names.join(" "),
        failed.join("\n\n")
    );
}
