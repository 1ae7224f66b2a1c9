//! The real agent harnesses (pinned in tests/harness/package-lock.json, installed by `.ci/run`
//! with `npm ci`) with redline's hooks installed by `redline setup`, each run non-interactively
//! against a scripted stand-in of its model API (tests/harness/model.mjs). The harness and the
//! stand-in run together in a network namespace of their own with only loopback (`unshare -rn`),
//! so nothing leaves the machine. Per harness: a normalized edit repaired (only the span's bytes
//! change), a failing edit denied with the candidates reaching the model's next request, a write
//! outside the root denied, and `--review` through a `redline watch` in tmux accepting one edit
//! and rejecting another with a note that the model then sees.
//!
//! Under CI=true a missing harness install, Node or tmux is a failure; elsewhere these tests say
//! they skip.

mod common;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::BIN;
use common::tmux::{self, Tmux};

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn harness_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/harness")
}

/// The Node the harnesses run on (pinned in tests/harness), if installed.
fn node() -> Option<PathBuf> {
    let n = harness_dir().join("node_modules/.bin/node");
    n.exists().then_some(n)
}

/// Skips (or fails under CI) when the harnesses are not installed.
fn installed(what: &str) -> bool {
    let bin = harness_dir().join("node_modules/.bin").join(what);
    if bin.exists() && node().is_some() {
        return true;
    }
    let msg = format!(
        "{what} is not installed under tests/harness (run `npm ci --prefix tests/harness`, as .ci/run does)"
    );
    assert!(!ci(), "{msg}");
    eprintln!("skipping: {msg}");
    false
}

/// Whether `unshare -rn` gives us a private network namespace here.
fn netns() -> bool {
    Command::new("unshare")
        .args(["-rn", "sh", "-c", "ip link set lo up"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A project, a home and a log directory for one run.
struct Run {
    _tmp: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
    log: PathBuf,
}

impl Run {
    fn new(files: &[(&str, &[u8])]) -> Run {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("proj");
        let home = tmp.path().join("home");
        let log = tmp.path().join("log");
        for d in [&project, &home, &log] {
            std::fs::create_dir_all(d).unwrap();
        }
        for (p, bytes) in files {
            let path = tmp.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        Run {
            _tmp: tmp,
            project,
            home,
            log,
        }
    }

    fn read(&self, p: &str) -> Vec<u8> {
        std::fs::read(self.project.join(p)).unwrap()
    }

    /// `redline setup AGENT` for this project and home.
    fn setup(&self, agent: &str, extra: &[&str]) {
        let out = Command::new(BIN)
            .args(["setup", agent])
            .args(extra)
            .arg("--root")
            .arg(&self.project)
            .env("HOME", &self.home)
            .env("CODEX_HOME", self.home.join(".codex"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Runs the harness on `turns`; returns its exit status.
    fn harness(&self, harness: &str, turns: Value) -> i32 {
        self.harness_with(harness, turns, json!({}))
    }

    /// The same, with more settings for the driver (`permissionMode`).
    fn harness_with(&self, harness: &str, turns: Value, extra: Value) -> i32 {
        let mut case = json!({
            "harness": harness,
            "project": self.project,
            "home": self.home,
            "logDir": self.log,
            "prompt": "Make the change.",
            "redlineDir": Path::new(BIN).parent().unwrap(),
            "binDir": harness_dir().join("node_modules/.bin"),
            "turns": turns,
            "timeoutMs": 180000,
        });
        if let (Some(c), Some(e)) = (case.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                c.insert(k.clone(), v.clone());
            }
        }
        let case_path = self.log.join("case.json");
        std::fs::write(&case_path, case.to_string()).unwrap();
        let node = node().unwrap();
        let drive = harness_dir().join("drive.mjs");
        let mut cmd = if netns() {
            let mut c = Command::new("unshare");
            c.args(["-rn", "sh", "-c", "ip link set lo up && exec \"$0\" \"$@\""])
                .arg(&node)
                .arg(&drive)
                .arg(&case_path);
            c
        } else {
            assert!(
                !ci(),
                "unshare -rn (a private network namespace) is needed under CI"
            );
            eprintln!(
                "note: no network namespace here; the stand-in model runs on the host's loopback"
            );
            let mut c = Command::new(&node);
            c.arg(&drive).arg(&case_path);
            c
        };
        let out = cmd.output().unwrap();
        eprintln!(
            "drive: {}\nharness stdout:\n{}\nharness stderr:\n{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(self.log.join("harness.out")).unwrap_or_default(),
            std::fs::read_to_string(self.log.join("harness.err")).unwrap_or_default()
        );
        out.status.code().unwrap_or(-1)
    }

    /// The body of the model's `n`-th request, as text (what the model was sent).
    fn request(&self, n: usize) -> String {
        let p = self.log.join(format!("request-{n}.json"));
        std::fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("the harness made no request {n} ({}): {e}", p.display()))
    }
}

/// The tool result the model got back for its edit: the last tool message of request 1.
fn tool_result_text(req: &str) -> String {
    let v: Value = serde_json::from_str(req).unwrap();
    // Every protocol nests it differently; the test only needs the text the model reads.
    v["body"].to_string()
}

// ---------------------------------------------------------------------------------------------
// Pi

const PI_LINE: &[u8] = "say(“hi”)  # it’s  \nkeep\n".as_bytes();

#[test]
fn pi_normalized_edit_is_repaired_and_only_the_span_changes() {
    if !installed("pi") {
        return;
    }
    let r = Run::new(&[("proj/m.py", PI_LINE)]);
    r.setup("pi", &[]);
    let status = r.harness(
        "pi",
        json!([{"tool": {"name": "edit", "arguments": {"path": "m.py",
            "edits": [{"oldText": "say(\"hi\")", "newText": "say(\"bye\")"}]}}}]),
    );
    assert_eq!(status, 0);
    // Pi's own fuzzy match would rewrite the whole touched line (it’s → it's, trailing spaces
    // dropped); with redline's rewrite only the matched span changes.
    assert_eq!(r.read("m.py"), "say(\"bye\")  # it’s  \nkeep\n".as_bytes());
    assert!(tool_result_text(&r.request(1)).contains("Successfully replaced 1 block(s) in m.py."));
}

#[test]
fn pi_failing_edit_is_denied_with_candidates_in_the_next_request() {
    if !installed("pi") {
        return;
    }
    let r = Run::new(&[(
        "proj/app.py",
        b"def main():\n    total = compute(1, 2)\n    print(total)\n",
    )]);
    r.setup("pi", &[]);
    let status = r.harness(
        "pi",
        json!([{"tool": {"name": "edit", "arguments": {"path": "app.py",
            "edits": [{"oldText": "    total = compute(1, 3)\n    print(totl)\n", "newText": "    pass\n"}]}}}]),
    );
    assert_eq!(status, 0);
    assert_eq!(
        r.read("app.py"),
        b"def main():\n    total = compute(1, 2)\n    print(total)\n"
    );
    let next = tool_result_text(&r.request(1));
    assert!(
        next.contains("redline refused this edit of app.py"),
        "{next}"
    );
    assert!(next.contains("not_found"), "{next}");
    assert!(next.contains("closest: lines 2-3"), "{next}");
    assert!(next.contains("2 |     total = compute(1, 2)"), "{next}");
}

#[test]
fn pi_write_outside_the_root_is_denied() {
    if !installed("pi") {
        return;
    }
    let r = Run::new(&[("proj/a.txt", b"a\n"), ("outside.txt", b"keep me\n")]);
    r.setup("pi", &[]);
    let status = r.harness(
        "pi",
        json!([{"tool": {"name": "write", "arguments": {"path": "../outside.txt", "content": "overwritten\n"}}}]),
    );
    assert_eq!(status, 0);
    assert_eq!(
        std::fs::read(r.project.parent().unwrap().join("outside.txt")).unwrap(),
        b"keep me\n"
    );
    assert!(tool_result_text(&r.request(1)).contains("outside the project root"));
}

// ---------------------------------------------------------------------------------------------
// --review through a real `redline watch` in tmux

/// The human's part of a review: accept the first edit, reject the second with a note.
fn accept_first_reject_second(t: &Tmux, header: &str) {
    t.wait_for(header);
    t.keys(&["y"]);
    t.wait_for("✓1");
    t.keys(&["d"]);
    t.wait_for("✗1");
    t.keys(&["n"]);
    t.wait_for("note on edit");
    t.type_text("leave beta alone");
    t.wait_for("leave beta alone");
    t.keys(&["Enter"]);
    t.keys(&["A"]);
    t.wait_for("Apply summary");
    t.keys(&["Enter"]);
}

#[test]
fn pi_review_accepts_one_edit_and_rejects_one_with_a_note_the_model_sees() {
    if !installed("pi") {
        return;
    }
    let r = Run::new(&[("proj/g.txt", b"alpha\nbeta\n")]);
    r.setup("pi", &["--review"]);
    if !tmux::available() {
        eprintln!("skipping: tmux not found");
        return;
    }
    let t = Tmux::start("pi", &r.project, &format!("'{BIN}' watch"));
    t.wait_for("Waiting for agents");
    let human = std::thread::spawn(move || {
        accept_first_reject_second(&t, "watch · pi waits (edit)");
        t
    });
    let status = r.harness(
        "pi",
        json!([{"tool": {"name": "edit", "arguments": {"path": "g.txt", "edits": [
            {"oldText": "alpha", "newText": "ALPHA"}, {"oldText": "beta", "newText": "BETA"}]}}}]),
    );
    let _t = human.join().unwrap();
    assert_eq!(status, 0);
    assert_eq!(r.read("g.txt"), b"ALPHA\nbeta\n");
    let next = tool_result_text(&r.request(1));
    assert!(next.contains("leave beta alone"), "{next}");
}

// ---------------------------------------------------------------------------------------------
// Gemini CLI

#[test]
fn gemini_normalized_replace_is_repaired_and_only_the_span_changes() {
    if !installed("gemini") {
        return;
    }
    let r = Run::new(&[("proj/m.py", PI_LINE)]);
    r.setup("gemini", &[]);
    let status = r.harness(
        "gemini",
        json!([{"tool": {"name": "replace", "arguments": {"file_path": "m.py",
            "old_string": "say(\"hi\")", "new_string": "say(\"bye\")", "instruction": "say bye"}}}]),
    );
    assert_eq!(status, 0);
    assert_eq!(r.read("m.py"), "say(\"bye\")  # it’s  \nkeep\n".as_bytes());
    let next = tool_result_text(&r.request(1));
    assert!(
        next.contains("Tool input parameters were modified by a hook"),
        "{next}"
    );
}

#[test]
fn gemini_failing_replace_is_denied_with_candidates_in_the_next_request() {
    if !installed("gemini") {
        return;
    }
    let r = Run::new(&[(
        "proj/app.py",
        b"def main():\n    total = compute(1, 2)\n    print(total)\n",
    )]);
    r.setup("gemini", &[]);
    let status = r.harness(
        "gemini",
        json!([{"tool": {"name": "replace", "arguments": {"file_path": "app.py",
            "old_string": "    total = compute(1, 3)\n    print(totl)\n", "new_string": "    pass\n",
            "instruction": "simplify"}}}]),
    );
    assert_eq!(status, 0);
    assert_eq!(
        r.read("app.py"),
        b"def main():\n    total = compute(1, 2)\n    print(total)\n"
    );
    let next = tool_result_text(&r.request(1));
    assert!(
        next.contains("redline refused this edit of app.py"),
        "{next}"
    );
    assert!(next.contains("closest: lines 2-3"), "{next}");
    assert!(next.contains("2 |     total = compute(1, 2)"), "{next}");
}

#[test]
fn gemini_write_outside_the_root_is_denied() {
    if !installed("gemini") {
        return;
    }
    let r = Run::new(&[("proj/a.txt", b"a\n"), ("outside.txt", b"keep me\n")]);
    r.setup("gemini", &[]);
    let outside = r.project.parent().unwrap().join("outside.txt");
    let status = r.harness(
        "gemini",
        json!([{"tool": {"name": "write_file", "arguments": {"file_path": outside, "content": "overwritten\n"}}}]),
    );
    assert_eq!(status, 0);
    assert_eq!(std::fs::read(&outside).unwrap(), b"keep me\n");
    // Gemini refuses paths outside its workspace before any hook runs (docs/agents.md).
    let next = tool_result_text(&r.request(1));
    assert!(
        next.contains("outside the project root") || next.contains("workspace"),
        "{next}"
    );
}

#[test]
fn gemini_review_accepts_one_replace_and_rejects_one_with_a_note_the_model_sees() {
    if !installed("gemini") {
        return;
    }
    let r = Run::new(&[("proj/g.txt", b"alpha\nbeta\n")]);
    r.setup("gemini", &["--review"]);
    if !tmux::available() {
        eprintln!("skipping: tmux not found");
        return;
    }
    let t = Tmux::start("gemini", &r.project, &format!("'{BIN}' watch"));
    t.wait_for("Waiting for agents");
    let human = std::thread::spawn(move || {
        t.wait_for("waits (replace)");
        t.keys(&["y"]);
        t.keys(&["A"]);
        t.wait_for("Apply summary");
        t.keys(&["Enter"]);
        // The second call comes after the first one's result.
        t.wait_for("BETA");
        t.keys(&["d"]);
        t.keys(&["n"]);
        t.wait_for("note on edit");
        t.type_text("leave beta alone");
        t.wait_for("leave beta alone");
        t.keys(&["Enter"]);
        t.keys(&["A"]);
        t.wait_for("Apply summary");
        t.keys(&["Enter"]);
        t
    });
    let status = r.harness(
        "gemini",
        json!([
            {"tool": {"name": "replace", "arguments": {"file_path": "g.txt", "old_string": "alpha", "new_string": "ALPHA", "instruction": "a"}}},
            {"tool": {"name": "replace", "arguments": {"file_path": "g.txt", "old_string": "beta", "new_string": "BETA", "instruction": "b"}}}
        ]),
    );
    let _t = human.join().unwrap();
    assert_eq!(status, 0);
    assert_eq!(r.read("g.txt"), b"ALPHA\nbeta\n");
    let next = tool_result_text(&r.request(2));
    assert!(next.contains("leave beta alone"), "{next}");
}

// ---------------------------------------------------------------------------------------------
// Claude Code

fn claude_read(r: &Run, file: &str) -> Value {
    json!({"tool": {"name": "Read", "arguments": {"file_path": r.project.join(file)}}})
}

#[test]
fn claude_quote_drift_is_repaired_and_only_the_span_changes() {
    if !installed("claude") {
        return;
    }
    let r = Run::new(&[("proj/m.py", PI_LINE)]);
    r.setup("claude", &[]);
    let status = r.harness(
        "claude",
        json!([claude_read(&r, "m.py"),
            {"tool": {"name": "Edit", "arguments": {"file_path": r.project.join("m.py"),
                "old_string": "say(\"hi\")", "new_string": "say(\"bye\")"}}}]),
    );
    assert_eq!(status, 0);
    // Claude alone turns the new text's quotes curly too; with redline's rewrite the file gets
    // exactly the new text, and nothing outside the span changes.
    assert_eq!(r.read("m.py"), "say(\"bye\")  # it’s  \nkeep\n".as_bytes());
}

#[test]
fn claude_whitespace_drift_is_repaired_on_the_retry_redline_asks_for() {
    if !installed("claude") {
        return;
    }
    let src = b"fn main() {\n    let x = 1;   \n    println!(\"{x}\");\n}\n";
    let r = Run::new(&[("proj/main.rs", src)]);
    r.setup("claude", &[]);
    let path = r.project.join("main.rs");
    let status = r.harness(
        "claude",
        json!([claude_read(&r, "main.rs"),
            {"tool": {"name": "Edit", "arguments": {"file_path": path, "old_string": "    let x = 1;\n", "new_string": "    let x = 2;\n"}}},
            // The scripted model does what redline's context told it.
            {"tool": {"name": "Edit", "arguments": {"file_path": path, "old_string": "    let x = 1;   \n", "new_string": "    let x = 2;\n"}}}]),
    );
    assert_eq!(status, 0);
    let next = tool_result_text(&r.request(2));
    assert!(next.contains("String to replace not found"), "{next}");
    assert!(
        next.contains(r#"exact old_string (a JSON string): \"    let x = 1;   \\n\""#),
        "{next}"
    );
    assert_eq!(
        r.read("main.rs"),
        b"fn main() {\n    let x = 2;\n    println!(\"{x}\");\n}\n"
    );
}

#[test]
fn claude_failing_edit_gets_candidates_in_the_next_request() {
    if !installed("claude") {
        return;
    }
    let src = b"def main():\n    total = compute(1, 2)\n    print(total)\n";
    let r = Run::new(&[("proj/app.py", src)]);
    r.setup("claude", &[]);
    let status = r.harness(
        "claude",
        json!([claude_read(&r, "app.py"),
            {"tool": {"name": "Edit", "arguments": {"file_path": r.project.join("app.py"),
                "old_string": "    total = compute(1, 3)\n    print(totl)\n", "new_string": "    pass\n"}}}]),
    );
    assert_eq!(status, 0);
    assert_eq!(r.read("app.py"), src);
    let next = tool_result_text(&r.request(2));
    assert!(
        next.contains("redline refused this edit of app.py"),
        "{next}"
    );
    assert!(next.contains("closest: lines 2-3"), "{next}");
}

#[test]
fn claude_write_outside_the_root_is_denied() {
    if !installed("claude") {
        return;
    }
    let r = Run::new(&[("proj/a.txt", b"a\n")]);
    r.setup("claude", &[]);
    // A new file (Claude itself refuses to overwrite a file it has not read, before any hook).
    let outside = r.project.parent().unwrap().join("outside.txt");
    let status = r.harness_with(
        "claude",
        json!([{"tool": {"name": "Write", "arguments": {"file_path": outside, "content": "written\n"}}}]),
        // (bypassPermissions is refused when tests run as root.)
        json!({"permissionMode": "acceptEdits"}),
    );
    assert_eq!(status, 0);
    assert!(!outside.exists());
    assert!(tool_result_text(&r.request(1)).contains("outside the project root"));
}

#[test]
fn claude_review_accepts_one_edit_and_rejects_one_with_a_note_the_model_sees() {
    if !installed("claude") {
        return;
    }
    let r = Run::new(&[("proj/g.txt", b"alpha\nbeta\n")]);
    r.setup("claude", &["--review"]);
    if !tmux::available() {
        eprintln!("skipping: tmux not found");
        return;
    }
    let t = Tmux::start("claude", &r.project, &format!("'{BIN}' watch"));
    t.wait_for("Waiting for agents");
    let human = std::thread::spawn(move || {
        t.wait_for("waits (Edit)");
        t.keys(&["y"]);
        t.keys(&["A"]);
        t.wait_for("Apply summary");
        t.keys(&["Enter"]);
        t.wait_for("BETA");
        t.keys(&["d"]);
        t.keys(&["n"]);
        t.wait_for("note on edit");
        t.type_text("leave beta alone");
        t.wait_for("leave beta alone");
        t.keys(&["Enter"]);
        t.keys(&["A"]);
        t.wait_for("Apply summary");
        t.keys(&["Enter"]);
        t
    });
    let path = r.project.join("g.txt");
    // Default permission mode: only the human's acceptance lets the edit through.
    let status = r.harness_with(
        "claude",
        json!([claude_read(&r, "g.txt"),
            {"tool": {"name": "Edit", "arguments": {"file_path": path, "old_string": "alpha", "new_string": "ALPHA"}}},
            {"tool": {"name": "Edit", "arguments": {"file_path": path, "old_string": "beta", "new_string": "BETA"}}}]),
        json!({"permissionMode": "default"}),
    );
    let _t = human.join().unwrap();
    assert_eq!(status, 0);
    assert_eq!(r.read("g.txt"), b"ALPHA\nbeta\n");
    let next = tool_result_text(&r.request(3));
    assert!(next.contains("leave beta alone"), "{next}");
}

// ---------------------------------------------------------------------------------------------
// Codex (`codex exec` sends patches through its shell tool as `apply_patch <<'EOF' … EOF`; its
// hook sees them as `Bash`. The test passes --dangerously-bypass-hook-trust, standing in for the
// trust a user records once in Codex's config.toml.) In review, a patch partly accepted is
// narrowed to the accepted chunks and the notes reach the model as additionalContext.

fn codex_patch(patch: &str) -> Value {
    json!({"tool": {"name": "exec_command", "arguments": {"cmd": format!("apply_patch <<'EOF'\n{patch}\nEOF\n")}}})
}

#[test]
fn codex_normalized_patch_is_rebuilt_and_only_the_span_changes() {
    if !installed("codex") {
        return;
    }
    // Full-width letters: redline matches them under NFKC, Codex's own fallbacks do not.
    let r = Run::new(&[("proj/p.py", "x = 'ＡＢＣ'  \ny = 1\nz = 3\n".as_bytes())]);
    r.setup("codex", &[]);
    let status = r.harness(
        "codex",
        json!([codex_patch("*** Begin Patch\n*** Update File: p.py\n@@\n x = 'ABC'\n-y = 1\n+y = 2\n z = 3\n*** End Patch")]),
    );
    assert_eq!(status, 0);
    assert_eq!(r.read("p.py"), "x = 'ＡＢＣ'  \ny = 2\nz = 3\n".as_bytes());
}

#[test]
fn codex_failing_patch_is_denied_with_candidates_in_the_next_request() {
    if !installed("codex") {
        return;
    }
    let src = b"def main():\n    total = compute(1, 2)\n    print(total)\n";
    let r = Run::new(&[("proj/app.py", src)]);
    r.setup("codex", &[]);
    let status = r.harness(
        "codex",
        json!([codex_patch("*** Begin Patch\n*** Update File: app.py\n@@\n-    total = compute(1, 3)\n-    print(totl)\n+    pass\n*** End Patch")]),
    );
    assert_eq!(status, 0);
    assert_eq!(r.read("app.py"), src);
    let next = tool_result_text(&r.request(1));
    assert!(
        next.contains("redline refused this edit of app.py"),
        "{next}"
    );
    assert!(next.contains("closest: lines 2-3"), "{next}");
}

#[test]
fn codex_add_file_outside_the_root_is_denied() {
    if !installed("codex") {
        return;
    }
    let r = Run::new(&[("proj/a.txt", b"a\n")]);
    r.setup("codex", &[]);
    let status = r.harness(
        "codex",
        json!([codex_patch(
            "*** Begin Patch\n*** Add File: ../outside.txt\n+written\n*** End Patch"
        )]),
    );
    assert_eq!(status, 0);
    assert!(!r.project.parent().unwrap().join("outside.txt").exists());
    assert!(tool_result_text(&r.request(1)).contains("outside the project root"));
}

#[test]
fn codex_review_accepts_one_chunk_and_rejects_one_with_a_note_the_model_sees() {
    if !installed("codex") {
        return;
    }
    let r = Run::new(&[("proj/g.txt", b"alpha\none\ntwo\nthree\nfour\nfive\nbeta\n")]);
    r.setup("codex", &["--review"]);
    if !tmux::available() {
        eprintln!("skipping: tmux not found");
        return;
    }
    let t = Tmux::start("codex", &r.project, &format!("'{BIN}' watch"));
    t.wait_for("Waiting for agents");
    let human = std::thread::spawn(move || {
        accept_first_reject_second(&t, "waits (Bash)");
        t
    });
    let status = r.harness(
        "codex",
        json!([codex_patch("*** Begin Patch\n*** Update File: g.txt\n@@\n-alpha\n+ALPHA\n one\n@@\n five\n-beta\n+BETA\n*** End Patch")]),
    );
    let _t = human.join().unwrap();
    assert_eq!(status, 0);
    assert_eq!(
        r.read("g.txt"),
        b"ALPHA\none\ntwo\nthree\nfour\nfive\nbeta\n"
    );
    let next = tool_result_text(&r.request(1));
    assert!(next.contains("leave beta alone"), "{next}");
}
