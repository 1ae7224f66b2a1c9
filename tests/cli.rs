//! The `redline` binary as scripts see it (SPEC §1, §4, §5; STYLE "Errors"): exit codes, stdout
//! carrying only data, `error:`/`hint:` diagnostics on stderr, `--format diff` that `git apply`
//! accepts, colour switches, `read`, bad requests and a closed stdout.

use serde_json::Value;
use std::fs;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;

/// A temporary root with some files, plus a place for request files next to it.
struct Root {
    tmp: tempfile::TempDir,
}

impl Root {
    fn new(files: &[(&str, &[u8])]) -> Root {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir(tmp.path().join("root")).unwrap();
        let r = Root { tmp };
        for (p, b) in files {
            r.write(p, b);
        }
        r
    }

    fn dir(&self) -> PathBuf {
        self.tmp.path().join("root")
    }

    fn write(&self, p: &str, b: &[u8]) {
        let full = self.dir().join(p);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, b).unwrap();
    }

    fn read(&self, p: &str) -> Vec<u8> {
        fs::read(self.dir().join(p)).unwrap()
    }

    /// Writes a request file outside the root and returns its path.
    fn request(&self, name: &str, body: &[u8]) -> PathBuf {
        let p = self.tmp.path().join(name);
        fs::write(&p, body).unwrap();
        p
    }

    fn cmd(&self) -> Command {
        let mut c = common::redline();
        c.arg("--root").arg(self.dir()).env_remove("NO_COLOR");
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    fn run_with(&self, args: &[&str], request: &Path) -> Output {
        self.cmd().args(args).arg(request).output().unwrap()
    }

    fn run_stdin(&self, args: &[&str], stdin: &[u8]) -> Output {
        common::output_with_stdin(self.cmd().args(args), stdin)
    }
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(o)))
}

/// Asserts the uv-style diagnostic shape: every line is `error: …` or `hint: …`, at least one
/// error, and every hint follows an error or another hint.
fn assert_diagnostics(err: &str) {
    assert!(
        err.starts_with("error: "),
        "stderr must start with `error: `: {err:?}"
    );
    for l in err.lines() {
        assert!(
            l.starts_with("error: ") || l.starts_with("hint: "),
            "stray stderr line {l:?} in {err:?}"
        );
    }
    assert!(!err.contains('\x1b'), "escape codes on stderr: {err:?}");
}

fn edit_request(path: &str, old: &str, new: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({"files": [{"path": path, "edits": [{"oldText": old, "newText": new}]}]})).unwrap()
}

#[test]
fn exit_codes() {
    let r = Root::new(&[("a.txt", b"alpha\n")]);
    let ok = r.request("ok.json", &edit_request("a.txt", "alpha", "beta"));
    let missing = r.request("nf.json", &edit_request("a.txt", "gamma", "x"));
    let invalid = r.request("inv.json", br#"{"files": []}"#);
    assert_eq!(code(&r.run_with(&["apply", "--check"], &ok)), 0);
    assert_eq!(code(&r.run_with(&["apply", "--check"], &missing)), 1);
    assert_eq!(code(&r.run_with(&["apply", "--check"], &invalid)), 2);
    assert_eq!(code(&r.run_with(&["resolve"], &missing)), 1);
    assert_eq!(code(&r.run_with(&["apply", "--dry-run"], &ok)), 0);
    assert_eq!(r.read("a.txt"), b"alpha\n", "dry run wrote");
    assert_eq!(code(&r.run_with(&["apply"], &missing)), 1);
    assert_eq!(code(&r.run_with(&["apply"], &ok)), 0);
    assert_eq!(r.read("a.txt"), b"beta\n");
    // Usage errors: an unknown flag, an unknown format, a bad position encoding.
    assert_eq!(code(&r.run_with(&["apply", "--no-such-flag"], &ok)), 2);
    assert_eq!(code(&r.run_with(&["apply", "--format", "yaml"], &ok)), 2);
    assert_eq!(
        code(&r.run_with(&["resolve", "--position-encoding", "utf-7"], &ok)),
        2
    );
    // A root that does not exist is a usage error too.
    let o = common::redline()
        .args(["apply", "--root", "/nonexistent/redline/root"])
        .arg(&ok)
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_diagnostics(&stderr(&o));
}

#[test]
fn check_prints_nothing() {
    let r = Root::new(&[("a.txt", b"alpha\n")]);
    let documents = br#"{"files": [{"path": "a.txt", "edits": [{"oldText": "alpha", "newText": "b"}]}], "documents": [{"path": "a.txt", "text": "alpha"}]}"#;
    for (req, want) in [
        (edit_request("a.txt", "alpha", "b"), 0),
        (edit_request("a.txt", "zzz", "b"), 1),
        (edit_request("../out.txt", "alpha", "b"), 1),
        (br#"{"files": []}"#.to_vec(), 2),
        (b"{".to_vec(), 2),
        (documents.to_vec(), 2),
    ] {
        let p = r.request("req.json", &req);
        for args in [
            &["apply", "--check", "--format", "json"][..],
            &["apply", "--check"],
            &["apply", "--check", "--dry-run"],
        ] {
            let o = r.run_with(args, &p);
            assert_eq!(code(&o), want, "{args:?} {}", String::from_utf8_lossy(&req));
            assert!(o.stdout.is_empty(), "--check printed {:?}", stdout(&o));
            assert!(
                o.stderr.is_empty(),
                "--check printed on stderr {:?}",
                stderr(&o)
            );
        }
    }
    assert_eq!(r.read("a.txt"), b"alpha\n");
}

#[test]
fn stdout_is_data_and_stderr_is_diagnostics() {
    let r = Root::new(&[("a.txt", b"alpha\n")]);
    // A rejected edit in JSON: the response on stdout, nothing but diagnostics on stderr.
    let p = r.request("nf.json", &edit_request("a.txt", "gamma", "x"));
    let o = r.run_with(&["apply", "--format", "json"], &p);
    assert_eq!(code(&o), 1);
    assert_eq!(json(&o)["errors"][0]["code"], "not_found");
    if !o.stderr.is_empty() {
        assert_diagnostics(&stderr(&o));
    }
    // In text and diff formats the failure is explained on stderr, with a hint.
    for format in ["text", "diff"] {
        let o = r.run_with(&["apply", "--format", format], &p);
        assert_eq!(code(&o), 1);
        let err = stderr(&o);
        assert_diagnostics(&err);
        assert!(err.contains("not found"), "{format}: {err:?}");
        assert!(err.contains("\nhint: "), "{format}: no hint in {err:?}");
        assert!(
            !stdout(&o).contains("error:"),
            "{format}: diagnostics on stdout: {}",
            stdout(&o)
        );
    }
    // Success: nothing on stderr.
    let p = r.request("ok.json", &edit_request("a.txt", "alpha", "beta"));
    for format in ["json", "text", "diff"] {
        let o = r.run_with(&["apply", "--dry-run", "--format", format], &p);
        assert_eq!(code(&o), 0);
        assert!(
            o.stderr.is_empty(),
            "{format}: stderr on success: {}",
            stderr(&o)
        );
    }
}

#[test]
fn malformed_requests() {
    let r = Root::new(&[("a.txt", b"alpha\n")]);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "malformed JSON",
            br#"{"files": [{"path": "a.txt", "edits": [}"#.to_vec(),
        ),
        (
            "not UTF-8",
            b"{\"path\": \"a.txt\", \"oldText\": \"\xff\", \"newText\": \"x\"}".to_vec(),
        ),
        ("empty", Vec::new()),
        (
            "wrong type",
            br#"{"files": [{"path": 3, "edits": []}]}"#.to_vec(),
        ),
    ];
    for (what, body) in cases {
        let p = r.request("bad.json", &body);
        let o = r.run_with(&["apply", "--format", "json"], &p);
        assert_eq!(code(&o), 2, "{what}: {}", stderr(&o));
        assert_diagnostics(&stderr(&o));
        let v = json(&o);
        assert_eq!(v["ok"], false, "{what}");
        assert_eq!(v["error"]["code"], "invalid_request", "{what}");
        // The same through stdin.
        let o = r.run_stdin(&["apply", "--format", "json", "-"], &body);
        assert_eq!(code(&o), 2, "{what} on stdin");
        assert_eq!(
            json(&o)["error"]["code"],
            "invalid_request",
            "{what} on stdin"
        );
    }
    assert_eq!(r.read("a.txt"), b"alpha\n");
    // A request file that does not exist.
    let o = r.run(&["apply", "--format", "json", "/nonexistent/request.json"]);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert_diagnostics(&err);
    assert!(err.contains("/nonexistent/request.json"), "{err:?}");
    // With the text format a request failure prints nothing on stdout.
    let p = r.request("bad.json", b"{");
    let o = r.run_with(&["apply", "--format", "text"], &p);
    assert_eq!(code(&o), 2);
    assert!(o.stdout.is_empty(), "{}", stdout(&o));
}

#[test]
fn request_on_stdin() {
    let r = Root::new(&[("a.txt", b"alpha\n")]);
    let o = r.run_stdin(
        &["apply", "--format", "json"],
        &edit_request("a.txt", "alpha", "beta"),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(r.read("a.txt"), b"beta\n");
}

#[test]
fn diff_format_is_accepted_by_git_apply() {
    let input: &[(&str, &[u8])] = &[
        ("crlf.txt", b"a\r\nb\r\nc\r\n"),
        ("nonl.txt", b"x\ny"),
        ("bom.txt", b"\xef\xbb\xbfbom\nline\n"),
        ("cr.txt", b"one\rtwo\rthree\r"),
        ("mixed.txt", b"m1\r\nm2\nm3\r\n"),
        (
            "smart.txt",
            "say \u{201C}hi\u{201D}   \nnext\u{00A0}line\n".as_bytes(),
        ),
        ("del.txt", b"delete me\n"),
        ("mv.txt", b"move me\n"),
        ("far.txt", &[]),
    ];
    let far: String = (1..=200).map(|i| format!("line {i:03}\n")).collect();
    let request = serde_json::json!({"files": [
        {"path": "crlf.txt", "edits": [{"oldText": "b", "newText": "B\nB2"}]},
        {"path": "nonl.txt", "edits": [{"oldText": "y", "newText": "Y"}]},
        {"path": "bom.txt", "edits": [{"oldText": "line", "newText": "LINE"}]},
        {"path": "cr.txt", "edits": [{"oldText": "two", "newText": "2\n2b"}]},
        {"path": "mixed.txt", "edits": [{"oldText": "m2\nm3", "newText": "M"}]},
        {"path": "smart.txt", "edits": [{"oldText": "say \"hi\"", "newText": "say 'bye'"}, {"oldText": "next line", "newText": "n"}]},
        {"path": "far.txt", "edits": [{"oldText": "line 010", "newText": "L10"}, {"oldText": "line 150\n", "newText": ""}, {"oldText": "line 200\n", "newText": "end"}]},
        {"path": "del.txt", "delete": true},
        {"path": "new/dir/n.txt", "content": "n1\nn2"},
        {"path": "mv.txt", "moveTo": "moved/mv.txt", "edits": [{"oldText": "move", "newText": "moved"}]},
    ]});
    let tmp = tempfile::tempdir().unwrap();
    let before = tmp.path().join("before");
    fs::create_dir(&before).unwrap();
    for (p, b) in input {
        let b: &[u8] = if *p == "far.txt" { far.as_bytes() } else { b };
        fs::write(before.join(p), b).unwrap();
    }
    let req = tmp.path().join("req.json");
    fs::write(&req, serde_json::to_vec(&request).unwrap()).unwrap();
    let o = common::redline()
        .args([
            "apply",
            "--dry-run",
            "--format",
            "diff",
            "--color",
            "always",
            "--root",
        ])
        .arg(&before)
        .arg(&req)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // The dry-run diff, applied by git to a pristine copy, equals what redline writes.
    let rt = common::round_trip("git apply", &before, &req);
    assert!(!rt.diff.contains(&0x1b), "escape codes in a piped diff");
    rt.agrees().unwrap_or_else(|e| panic!("git apply: {e}"));
    // And each file's `diff` in the JSON is the same text as the diff format's.
    let joined: String = rt.response["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["diff"].as_str().unwrap())
        .collect();
    assert_eq!(joined.as_bytes(), &rt.diff[..]);
}

#[test]
fn text_format_is_readable() {
    let r = Root::new(&[
        ("a.txt", "say \u{201C}hi\u{201D}\n".as_bytes()),
        ("b.txt", b"b\n"),
    ]);
    let p = r.request(
        "req.json",
        br#"{"files": [{"path": "a.txt", "edits": [{"oldText": "say \"hi\"", "newText": "say bye"}]}, {"path": "b.txt", "delete": true}]}"#,
    );
    let o = r.run_with(
        &["apply", "--dry-run", "--format", "text", "--color", "never"],
        &p,
    );
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    for want in [
        "a.txt",
        "b.txt",
        "quotes",
        "+say bye",
        "-say \u{201C}hi\u{201D}",
        "nothing written",
    ] {
        assert!(out.contains(want), "text output lacks {want:?}:\n{out}");
    }
    assert!(!out.contains('{'), "text output looks like JSON:\n{out}");
}

#[test]
fn colour_switches() {
    let r = Root::new(&[("a.txt", b"alpha\n")]);
    let p = r.request("req.json", &edit_request("a.txt", "alpha", "beta"));
    let nf = r.request("nf.json", &edit_request("a.txt", "gamma", "x"));
    for format in ["text", "diff"] {
        let o = r.run_with(
            &[
                "apply",
                "--dry-run",
                "--format",
                format,
                "--color",
                "always",
            ],
            &p,
        );
        assert!(
            o.stdout.contains(&0x1b),
            "{format}: --color always has no colour"
        );
        let o = r.run_with(
            &["apply", "--dry-run", "--format", format, "--color", "never"],
            &p,
        );
        assert!(
            !o.stdout.contains(&0x1b),
            "{format}: --color never coloured"
        );
        let o = r
            .cmd()
            .args(["apply", "--dry-run", "--format", format])
            .arg(&p)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(!o.stdout.contains(&0x1b), "{format}: NO_COLOR coloured");
        let o = r.run_with(&["apply", "--format", format, "--color", "always"], &nf);
        assert!(
            !o.stderr.contains(&0x1b),
            "{format}: escape codes on stderr"
        );
    }
    let o = r.run_with(
        &[
            "apply",
            "--dry-run",
            "--format",
            "json",
            "--color",
            "always",
        ],
        &p,
    );
    assert!(!o.stdout.contains(&0x1b), "JSON must never be coloured");
}

#[test]
fn read_command() {
    let r = Root::new(&[
        ("a.txt", b"one\ntwo\nthree\nfour\n"),
        ("crlf.txt", b"x\r\ny\r\n"),
        ("bin.dat", b"a\x00b"),
    ]);
    let o = r.run(&["read", "a.txt"]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    for (i, want) in ["one", "two", "three", "four"].iter().enumerate() {
        let (num, text) = lines[i].split_once('\t').unwrap();
        assert_eq!(num.trim(), (i + 1).to_string());
        assert_eq!(&text, want);
    }
    let version = out
        .split("version ")
        .nth(1)
        .unwrap()
        .trim_end_matches([']', '\n'])
        .to_string();
    assert!(
        version.starts_with("sha256:") && version.len() == 7 + 64,
        "{version:?}"
    );
    // --offset is the 1-based first line; --limit the count.
    let o = r.run(&["read", "a.txt", "--offset", "2", "--limit", "2"]);
    let out = stdout(&o);
    let nums: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(n, _)| n.trim())
        .collect();
    assert_eq!(nums, ["2", "3"], "{out}");
    assert!(
        out.contains("two")
            && out.contains("three")
            && !out.contains("one")
            && !out.contains("four")
    );
    // JSON: the same version.
    let o = r.run(&["read", "a.txt", "--format", "json"]);
    assert_eq!(json(&o)["version"], version.as_str());
    // The version is the hashBefore of a later apply, and expectHash accepts it.
    let req = serde_json::json!({"files": [{"path": "a.txt", "expectHash": version, "edits": [{"oldText": "two", "newText": "2"}]}]});
    let p = r.request("req.json", &serde_json::to_vec(&req).unwrap());
    let o = r.run_with(&["apply", "--format", "json"], &p);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert_eq!(json(&o)["files"][0]["hashBefore"], version.as_str());
    // Now the version is stale.
    let o = r.run_with(&["apply", "--format", "json"], &p);
    assert_eq!(code(&o), 1);
    assert_eq!(json(&o)["errors"][0]["code"], "stale");
    // CRLF lines are shown without their CR.
    let o = r.run(&["read", "crlf.txt"]);
    assert!(!stdout(&o).contains('\r'), "{:?}", stdout(&o));
    // Binary and missing files are refused with a diagnostic and nothing on stdout.
    for (p, want) in [("bin.dat", 1), ("missing.txt", 1), ("../escape.txt", 1)] {
        let o = r.run(&["read", p]);
        assert_eq!(code(&o), want, "read {p}");
        assert!(o.stdout.is_empty(), "read {p}: {}", stdout(&o));
        assert_diagnostics(&stderr(&o));
    }
    let o = r.run(&["read", "a.txt", "--offset", "0"]);
    assert_eq!(code(&o), 2);
}

/// A closed stdout (`redline … | head -c1`) ends the process quietly: no panic, no 101.
#[test]
fn closed_stdout_pipe() {
    let big: String = (0..20_000).map(|i| format!("row {i}\n")).collect();
    let r = Root::new(&[("big.txt", big.as_bytes())]);
    let p = r.request("req.json", br#"{"files": [{"path": "big.txt", "edits": [{"oldText": "row", "newText": "ROW", "replaceAll": true}]}]}"#);
    for args in [
        vec!["apply", "--dry-run", "--format", "json"],
        vec!["apply", "--dry-run", "--format", "diff"],
        vec!["apply", "--dry-run", "--format", "text"],
        vec!["resolve"],
        vec!["read", "big.txt"],
    ] {
        let mut cmd = r.cmd();
        cmd.args(&args);
        if args[0] != "read" {
            cmd.arg(&p);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 1];
        child
            .stdout
            .as_mut()
            .unwrap()
            .read_exact(&mut first)
            .unwrap();
        drop(child.stdout.take());
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_ne!(status.code(), Some(101), "{args:?}: {err}");
        assert!(
            status.code().is_some(),
            "{args:?} died of a signal: {status:?}"
        );
    }
    assert_eq!(r.read("big.txt"), big.as_bytes());
}

/// `filter` (SPEC §1): the edits for `--path` apply to stdin; on any failure exit 1, stdin echoed
/// byte for byte and nothing on stderr.
#[test]
fn filter_pipe() {
    let r = Root::new(&[]);
    let edits = r.request(
        "edits.json",
        br#"{"files": [{"path": "x.txt", "edits": [{"oldText": "b", "newText": "B\nC"}]}]}"#,
    );
    let bad = r.request("bad.json", b"{");
    let run = |path: &str, req: &Path, stdin: &[u8]| {
        r.run_stdin(
            &["filter", "--path", path, "--edits", req.to_str().unwrap()],
            stdin,
        )
    };
    // Success: the edited buffer, its CRLF and BOM kept.
    let o = run("x.txt", &edits, b"\xef\xbb\xbfa\r\nb\r\n");
    assert_eq!(
        (code(&o), o.stdout.as_slice(), o.stderr.as_slice()),
        (0, &b"\xef\xbb\xbfa\r\nB\r\nC\r\n"[..], &b""[..])
    );
    // Failures: not found, a request for another path, a bad request, a missing request file, a
    // buffer that is not UTF-8.
    let missing = r.tmp.path().join("missing.json");
    for (path, req, stdin) in [
        ("x.txt", &edits, &b"a\nc\n"[..]),
        ("y.txt", &edits, b"b\n"),
        ("x.txt", &bad, b"b\n"),
        ("x.txt", &missing, b"b\n"),
        ("x.txt", &edits, b"a\n\xff b\n"),
    ] {
        let o = run(path, req, stdin);
        assert_eq!(code(&o), 1, "{path} {} {stdin:?}", req.display());
        assert_eq!(
            o.stdout,
            stdin,
            "{path} {}: input not echoed",
            req.display()
        );
        assert!(
            o.stderr.is_empty(),
            "{path} {}: stderr {}",
            req.display(),
            stderr(&o)
        );
    }
}

/// `--format diff` of a batch with empty files created and deleted and a pure rename followed by
/// plain diffs: git applies it (an empty file needs git's extended header, and a rename header
/// without hunks must not swallow the next file's `---`/`+++` lines) and gets what redline writes.
#[test]
fn diff_format_with_empty_files_and_pure_renames_is_accepted_by_git_apply() {
    let input: &[(&str, &[u8])] = &[
        ("m.txt", b"m\n"),
        ("e.txt", b"e\n"),
        ("gone.txt", b""),
        ("q.txt", b"q\n"),
    ];
    let request = serde_json::json!({"files": [
        {"path": "m.txt", "moveTo": "moved.txt"},
        {"path": "e.txt", "edits": [{"oldText": "e", "newText": "E"}]},
        {"path": "q.txt", "moveTo": "sub/q.txt"},
        {"path": "new.txt", "content": "n\n"},
        {"path": "empty.txt", "content": ""},
        {"path": "gone.txt", "delete": true},
    ]});
    let tmp = tempfile::tempdir().unwrap();
    let before = tmp.path().join("before");
    fs::create_dir(&before).unwrap();
    for (p, b) in input {
        fs::write(before.join(p), b).unwrap();
    }
    let req = tmp.path().join("req.json");
    fs::write(&req, serde_json::to_vec(&request).unwrap()).unwrap();
    let rt = common::round_trip("git apply", &before, &req);
    rt.agrees().unwrap_or_else(|e| panic!("git apply: {e}"));
    // Each file's own diff is accepted too.
    for f in rt.response["files"].as_array().unwrap() {
        let one = f["diff"].as_str().unwrap().as_bytes();
        if let Err(e) = common::applied_by("git apply --check", &before, one) {
            panic!("git apply --check of {}: {e}", f["path"]);
        }
    }
}

/// Usage errors (an unknown flag, a missing argument, a bad value) exit 2 with the same
/// `error:`/`hint:` diagnostics as every other error, and nothing on stdout; help and version
/// still print normally.
#[test]
fn usage_errors_are_diagnostics() {
    let r = Root::new(&[("a.txt", b"alpha\n")]);
    for args in [
        &["apply", "--no-such-flag"][..],
        &["read"],
        &["apply", "--format"],
        &["--color", "sometimes", "apply"],
        &["schema", "bogus"],
        &["no-such-command"],
    ] {
        let o = r.run(args);
        assert_eq!(code(&o), 2, "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}: {}", stdout(&o));
        let err = stderr(&o);
        assert_diagnostics(&err);
        assert!(err.contains("\nhint: "), "{args:?}: no hint in {err:?}");
    }
    for args in [&["--help"][..], &["apply", "--help"], &["--version"]] {
        let o = r.run(args);
        assert_eq!(code(&o), 0, "{args:?}");
        assert!(!o.stdout.is_empty(), "{args:?}");
    }
}

/// A move onto an existing file and an edit through a symlink: the diff deletes the replaced
/// file before the rename and names the symlink's target, so git applies it and gets what
/// redline writes (the link itself stays a link).
#[test]
fn diff_of_move_onto_existing_and_edit_through_symlink_is_accepted_by_git_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let before = tmp.path().join("before");
    fs::create_dir(&before).unwrap();
    fs::write(before.join("s.txt"), b"src\nline2\n").unwrap();
    fs::write(before.join("t.txt"), b"old target\r\n").unwrap();
    fs::write(before.join("real.txt"), b"real\n").unwrap();
    std::os::unix::fs::symlink("real.txt", before.join("link.txt")).unwrap();
    let request = serde_json::json!({"files": [
        {"path": "s.txt", "moveTo": "t.txt", "edits": [{"oldText": "line2", "newText": "LINE2"}]},
        {"path": "link.txt", "edits": [{"oldText": "real", "newText": "REAL"}]},
    ]});
    let req = tmp.path().join("req.json");
    fs::write(&req, serde_json::to_vec(&request).unwrap()).unwrap();
    let rt = common::round_trip("git apply", &before, &req);
    rt.agrees().unwrap_or_else(|e| panic!("git apply: {e}"));
    let applied = rt.written.path();
    assert!(
        fs::symlink_metadata(applied.join("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read(applied.join("t.txt")).unwrap(), b"src\nLINE2\n");
}

/// Diagnostics say where: a file error names its file; a request error on the whole document
/// (an empty pointer) says no `(at )`.
#[test]
fn diagnostics_name_the_file_and_skip_an_empty_pointer() {
    let r = Root::new(&[]);
    let o = r.run_stdin(
        &["apply", "--format", "text"],
        br#"{"files": [{"path": "n o.txt", "delete": true}]}"#,
    );
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).starts_with("error: n o.txt: no such file\n"),
        "{}",
        stderr(&o)
    );
    let o = r.run_stdin(&["apply", "--format", "text"], b"[]");
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
    assert!(!stderr(&o).contains("(at )"), "{}", stderr(&o));
}

/// Whether a file error's diagnostic gets its path in front is decided by the error's kind, not by
/// its text: a one-letter path that occurs in the message ("no such file" has an `s`) is still
/// named, and a message that starts with its path (stale, binary) does not get it twice.
#[test]
fn diagnostics_name_the_file_once_whatever_the_message_says() {
    let r = Root::new(&[("t.txt", b"one\n"), ("b.bin", b"a\0b\n")]);
    let o = r.run_stdin(
        &["apply", "--format", "text"],
        br#"{"files": [{"path": "s", "delete": true}]}"#,
    );
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).starts_with("error: s: no such file\n"),
        "{}",
        stderr(&o)
    );
    let o = r.run_stdin(
        &["apply", "--format", "text"],
        format!(
            r#"{{"files": [{{"path": "t.txt", "expectHash": "sha256:{}", "edits": [{{"oldText": "one", "newText": "two"}}]}}]}}"#,
            "0".repeat(64)
        )
        .as_bytes(),
    );
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).starts_with("error: t.txt has version sha256:"),
        "{}",
        stderr(&o)
    );
    let o = r.run_stdin(
        &["apply", "--format", "text"],
        br#"{"files": [{"path": "b.bin", "edits": [{"oldText": "a", "newText": "c"}]}]}"#,
    );
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).starts_with("error: b.bin: the file looks binary"),
        "{}",
        stderr(&o)
    );
}

/// The README's canonical request is a valid request: it resolves against a tree that has its
/// files (its `sha256:…` stands for the version of the buffer it names).
#[test]
fn readme_canonical_request_is_valid() {
    let readme = include_str!("../README.md");
    let at = readme.find("The canonical request").unwrap();
    let block = readme[at..].split("```json\n").nth(1).unwrap();
    let block = block.split("```").next().unwrap();
    let shown: Value = serde_json::from_str(block).unwrap();
    let buffer = shown["documents"][0]["text"].as_str().unwrap();
    let r = Root::new(&[
        ("src/lib.rs", buffer.as_bytes()),
        ("old.txt", b"old\n"),
        ("a.rs", b"mod x;\n"),
    ]);
    let version = {
        let o = r.run(&["read", "src/lib.rs", "--format", "json"]);
        json(&o)["version"].as_str().unwrap().to_string()
    };
    let request = block.replace("sha256:…", &version);
    let o = r.run_stdin(&["resolve"], request.as_bytes());
    let v = json(&o);
    assert_eq!(v["ok"], true, "{v:#}");
    assert_eq!(code(&o), 0);
}

/// `redline completions SHELL` and `redline man` come from the clap definitions: bash loads the
/// script and completes `redline`; the page has every command.
#[test]
fn completions_and_man_page() {
    let r = Root::new(&[]);
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = r.run(&["completions", shell]);
        assert_eq!(code(&o), 0, "{shell}: {}", stderr(&o));
        assert!(stdout(&o).contains("redline"), "{shell}");
    }
    assert_eq!(code(&r.run(&["completions", "tcsh"])), 2);
    let script = stdout(&r.run(&["completions", "bash"]));
    let o = Command::new("bash")
        .arg("-c")
        .arg("source /dev/stdin; complete -p redline")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(script.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("redline"), "{}", stdout(&o));

    let man = stdout(&r.run(&["man"]));
    assert!(man.contains(".TH redline 1"), "{man}");
    for cmd in [
        "apply", "review", "resolve", "read", "filter", "serve", "mcp", "schema",
    ] {
        assert!(man.contains(&format!("redline\\-{cmd}(1)")), "{cmd}: {man}");
        let page = stdout(&r.run(&["man", cmd]));
        assert!(
            page.contains(&format!(".TH redline-{cmd} 1")),
            "{cmd}: {page}"
        );
        assert!(page.contains("Exit status:"), "{cmd}: {page}");
    }
    assert_eq!(code(&r.run(&["man", "nope"])), 2);
}

/// Every command says what it does, and the long help of each one that takes input has examples
/// and its exit statuses.
#[test]
fn every_command_has_a_description_examples_and_exit_statuses() {
    let r = Root::new(&[]);
    let top = stdout(&r.run(&["--help"]));
    let commands: Vec<&str> = top
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(commands.len() >= 12, "{top}");
    for line in &commands {
        let mut words = line.split_whitespace();
        let name = words.next().unwrap();
        assert!(words.next().is_some(), "`{name}` has no description");
    }
    for cmd in [
        "apply",
        "review",
        "resolve",
        "read",
        "filter",
        "serve",
        "mcp",
        "schema",
        "recover",
        "demo",
        "completions",
        "man",
    ] {
        let help = stdout(&r.run(&[cmd, "--help"]));
        assert!(help.contains("Exit status:"), "{cmd}: {help}");
        assert!(help.contains("Example"), "{cmd}: {help}");
    }
    assert!(top.contains("Exit status:"), "{top}");
}

/// Colour under --color auto follows NO_COLOR, CLICOLOR_FORCE, CLICOLOR and TERM=dumb.
#[test]
fn colour_follows_the_environment() {
    let r = Root::new(&[("a.txt", b"one\n")]);
    let req = r.request(
        "r.json",
        br#"{"path": "a.txt", "oldText": "one", "newText": "two"}"#,
    );
    let coloured = |env: &[(&str, &str)]| {
        let mut c = r.cmd();
        c.args(["apply", "--dry-run", "--format", "diff"]).arg(&req);
        for k in ["NO_COLOR", "CLICOLOR_FORCE", "CLICOLOR", "TERM"] {
            c.env_remove(k);
        }
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        stdout(&o).contains('\x1b')
    };
    assert!(!coloured(&[]), "not a terminal");
    assert!(coloured(&[("CLICOLOR_FORCE", "1")]));
    assert!(!coloured(&[("CLICOLOR_FORCE", "0")]));
    assert!(!coloured(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]));
    let mut c = r.cmd();
    let o = c
        .args([
            "--color",
            "always",
            "apply",
            "--dry-run",
            "--format",
            "diff",
        ])
        .arg(&req)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(stdout(&o).contains('\x1b'), "--color always wins");
}
