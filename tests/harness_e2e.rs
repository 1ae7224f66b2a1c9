//! The real agent harnesses (pinned in tests/harness/package-lock.json, installed by `.ci/run`
//! with `npm ci`) with redline's hooks installed by `redline setup`, each run non-interactively
//! against a scripted stand-in of its model API (tests/harness/model.mjs). The harness and the
//! stand-in run together in a network namespace of their own with only loopback (`unshare -rn`),
//! so nothing leaves the machine. Per harness: a normalized edit repaired (only the span's bytes
//! change), a failing edit denied with the candidates reaching the model's next request, a write
//! outside the root denied, and `--review` through a `redline watch` in tmux accepting one edit
//! and rejecting another with a note that the model then sees.
//!
//! Under CI=true a missing harness install, Node or tmux is a failure; elsewhere such a test is
//! reported as ignored with what is missing (`harness = false`, tests/support/clients.rs).

#[path = "support/clients.rs"]
mod clients;
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

    /// `redline setup AGENT` for this project and home.
    fn setup(&self, agent: &str, extra: &[&str]) {
        let out = common::redline()
            .args(["setup", agent])
            .args(extra)
            .arg("--root")
            .arg(&self.project)
            .env("HOME", &self.home)
            .env("CODEX_HOME", self.home.join(".codex"))
            .output()
            .unwrap();
        common::assert_success(&out);
    }

    /// Runs the harness on `turns`, with `extra` settings for the driver (`permissionMode`);
    /// returns its exit status.
    fn harness(&self, harness: &str, turns: Value, extra: Value) -> i32 {
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
// The scenarios: one table row per harness, one column per scenario (a normalized edit repaired,
// a failing edit denied with candidates, a write outside the root denied, a review through
// `redline watch`), and one runner for every cell.

/// One cell of the table: a harness, the files of its run, what its model sends, and what must
/// hold afterwards.
struct Case {
    harness: &'static str,
    /// Files of the run, relative to its directory (the project is `proj/`).
    files: &'static [(&'static str, &'static [u8])],
    /// The model's turns.
    turns: fn(&Run) -> Value,
    /// More settings for the driver (`permissionMode`), merged into its case.
    settings: fn() -> Value,
    /// A file (relative to the run's directory) and what it holds afterwards; `None`: absent.
    after: (&'static str, Option<&'static [u8]>),
    /// The model request whose tool result the model reads next, and what it must say: each
    /// entry is a list of which one at least must appear. Not read when empty.
    request: usize,
    says: &'static [&'static [&'static str]],
    /// The human at `redline watch` (the run is set up with `--review`), or none.
    human: Option<fn(&Tmux)>,
}

fn no_settings() -> Value {
    json!({})
}

/// Runs one cell: setup, the harness (with a human at `redline watch` in tmux for a review),
/// then the file and the model's next request.
fn run(c: &Case) {
    let r = Run::new(c.files);
    r.setup(
        c.harness,
        if c.human.is_some() {
            &["--review"]
        } else {
            &[]
        },
    );
    let mut human = None;
    if let Some(act) = c.human {
        let t = Tmux::start(c.harness, &r.project, &format!("'{BIN}' watch"));
        t.wait_for("Waiting for agents");
        human = Some(std::thread::spawn(move || {
            act(&t);
            t
        }));
    }
    let status = r.harness(c.harness, (c.turns)(&r), (c.settings)());
    let _t = human.map(|h| h.join().unwrap());
    assert_eq!(status, 0);
    let (path, want) = c.after;
    let path = r.project.parent().unwrap().join(path);
    match want {
        Some(bytes) => assert_eq!(std::fs::read(&path).unwrap(), bytes, "{}", path.display()),
        None => assert!(!path.exists(), "{} was written", path.display()),
    }
    if !c.says.is_empty() {
        let next = tool_result_text(&r.request(c.request));
        for any in c.says {
            assert!(any.iter().any(|s| next.contains(s)), "{any:?} in\n{next}");
        }
    }
}

/// A line with typographic quotes and trailing spaces: the model sends it with ASCII quotes.
const QUOTES: &[u8] = "say(“hi”)  # it’s  \nkeep\n".as_bytes();
/// The same after the edit: only the matched span changed (a harness's own fuzzy match would
/// rewrite the whole touched line: it’s → it's, trailing spaces dropped; Claude alone turns the
/// new text's quotes curly too).
const QUOTES_EDITED: &[u8] = "say(\"bye\")  # it’s  \nkeep\n".as_bytes();
/// A file the failing edit misses (the model misremembers two lines).
const APP: &[u8] = b"def main():\n    total = compute(1, 2)\n    print(total)\n";
const REFUSED: &[&str] = &["redline refused this edit of app.py"];
const CLOSEST: &[&str] = &["closest: lines 2-3"];
const CLOSEST_LINE: &[&str] = &["2 |     total = compute(1, 2)"];
const OUTSIDE_ROOT: &[&str] = &["outside the project root"];
const NOTE: &[&str] = &["leave beta alone"];
const G: &[u8] = b"alpha\nbeta\n";
/// `G` after the review: the first edit accepted, the second rejected.
const G_REVIEWED: &[u8] = b"ALPHA\nbeta\n";

/// A harness's row of the table.
struct Row {
    normalized: Case,
    failing: Case,
    outside: Case,
    review: Case,
}

// Pi: `edit` takes several replacements in one call.
const PI: Row = Row {
    normalized: Case {
        harness: "pi",
        files: &[("proj/m.py", QUOTES)],
        turns: |_| {
            json!([{"tool": {"name": "edit", "arguments": {"path": "m.py",
                "edits": [{"oldText": "say(\"hi\")", "newText": "say(\"bye\")"}]}}}])
        },
        settings: no_settings,
        after: ("proj/m.py", Some(QUOTES_EDITED)),
        request: 1,
        says: &[&["Successfully replaced 1 block(s) in m.py."]],
        human: None,
    },
    failing: Case {
        harness: "pi",
        files: &[("proj/app.py", APP)],
        turns: |_| {
            json!([{"tool": {"name": "edit", "arguments": {"path": "app.py",
                "edits": [{"oldText": "    total = compute(1, 3)\n    print(totl)\n", "newText": "    pass\n"}]}}}])
        },
        settings: no_settings,
        after: ("proj/app.py", Some(APP)),
        request: 1,
        says: &[REFUSED, &["not_found"], CLOSEST, CLOSEST_LINE],
        human: None,
    },
    outside: Case {
        harness: "pi",
        files: &[("proj/a.txt", b"a\n"), ("outside.txt", b"keep me\n")],
        turns: |_| json!([{"tool": {"name": "write", "arguments": {"path": "../outside.txt", "content": "overwritten\n"}}}]),
        settings: no_settings,
        after: ("outside.txt", Some(b"keep me\n")),
        request: 1,
        says: &[OUTSIDE_ROOT],
        human: None,
    },
    review: Case {
        harness: "pi",
        files: &[("proj/g.txt", G)],
        turns: |_| {
            json!([{"tool": {"name": "edit", "arguments": {"path": "g.txt", "edits": [
                {"oldText": "alpha", "newText": "ALPHA"}, {"oldText": "beta", "newText": "BETA"}]}}}])
        },
        settings: no_settings,
        after: ("proj/g.txt", Some(G_REVIEWED)),
        request: 1,
        says: &[NOTE],
        human: Some(|t| tmux::accept_first_reject_second(t, "watch · pi waits (edit)", NOTE[0])),
    },
};

// Gemini CLI: `replace` replaces one string a call.
const GEMINI: Row = Row {
    normalized: Case {
        harness: "gemini",
        files: &[("proj/m.py", QUOTES)],
        turns: |_| {
            json!([{"tool": {"name": "replace", "arguments": {"file_path": "m.py",
                "old_string": "say(\"hi\")", "new_string": "say(\"bye\")", "instruction": "say bye"}}}])
        },
        settings: no_settings,
        after: ("proj/m.py", Some(QUOTES_EDITED)),
        request: 1,
        says: &[&["Tool input parameters were modified by a hook"]],
        human: None,
    },
    failing: Case {
        harness: "gemini",
        files: &[("proj/app.py", APP)],
        turns: |_| {
            json!([{"tool": {"name": "replace", "arguments": {"file_path": "app.py",
                "old_string": "    total = compute(1, 3)\n    print(totl)\n", "new_string": "    pass\n",
                "instruction": "simplify"}}}])
        },
        settings: no_settings,
        after: ("proj/app.py", Some(APP)),
        request: 1,
        says: &[REFUSED, CLOSEST, CLOSEST_LINE],
        human: None,
    },
    outside: Case {
        harness: "gemini",
        files: &[("proj/a.txt", b"a\n"), ("outside.txt", b"keep me\n")],
        turns: |r| {
            let outside = r.project.parent().unwrap().join("outside.txt");
            json!([{"tool": {"name": "write_file", "arguments": {"file_path": outside, "content": "overwritten\n"}}}])
        },
        settings: no_settings,
        after: ("outside.txt", Some(b"keep me\n")),
        request: 1,
        // Gemini refuses paths outside its workspace before any hook runs (docs/agents.md).
        says: &[&["outside the project root", "workspace"]],
        human: None,
    },
    review: Case {
        harness: "gemini",
        files: &[("proj/g.txt", G)],
        turns: |_| {
            json!([
                {"tool": {"name": "replace", "arguments": {"file_path": "g.txt", "old_string": "alpha", "new_string": "ALPHA", "instruction": "a"}}},
                {"tool": {"name": "replace", "arguments": {"file_path": "g.txt", "old_string": "beta", "new_string": "BETA", "instruction": "b"}}}
            ])
        },
        settings: no_settings,
        after: ("proj/g.txt", Some(G_REVIEWED)),
        request: 2,
        says: &[NOTE],
        human: Some(|t| {
            tmux::accept_first_batch_reject_second(t, "waits (replace)", "BETA", NOTE[0])
        }),
    },
};

// Claude Code: `Edit` replaces one string a call, with absolute paths, and only in a file it read
// first (so its answers come one request later).

fn claude_read(r: &Run, file: &str) -> Value {
    json!({"tool": {"name": "Read", "arguments": {"file_path": r.project.join(file)}}})
}

const CLAUDE: Row = Row {
    normalized: Case {
        harness: "claude",
        files: &[("proj/m.py", QUOTES)],
        turns: |r| {
            json!([claude_read(r, "m.py"),
                {"tool": {"name": "Edit", "arguments": {"file_path": r.project.join("m.py"),
                    "old_string": "say(\"hi\")", "new_string": "say(\"bye\")"}}}])
        },
        settings: no_settings,
        after: ("proj/m.py", Some(QUOTES_EDITED)),
        request: 2,
        says: &[],
        human: None,
    },
    failing: Case {
        harness: "claude",
        files: &[("proj/app.py", APP)],
        turns: |r| {
            json!([claude_read(r, "app.py"),
                {"tool": {"name": "Edit", "arguments": {"file_path": r.project.join("app.py"),
                    "old_string": "    total = compute(1, 3)\n    print(totl)\n", "new_string": "    pass\n"}}}])
        },
        settings: no_settings,
        after: ("proj/app.py", Some(APP)),
        request: 2,
        says: &[REFUSED, CLOSEST],
        human: None,
    },
    // A new file (Claude itself refuses to overwrite a file it has not read, before any hook).
    outside: Case {
        harness: "claude",
        files: &[("proj/a.txt", b"a\n")],
        turns: |r| {
            let outside = r.project.parent().unwrap().join("outside.txt");
            json!([{"tool": {"name": "Write", "arguments": {"file_path": outside, "content": "written\n"}}}])
        },
        // (bypassPermissions is refused when tests run as root.)
        settings: || json!({"permissionMode": "acceptEdits"}),
        after: ("outside.txt", None),
        request: 1,
        says: &[OUTSIDE_ROOT],
        human: None,
    },
    review: Case {
        harness: "claude",
        files: &[("proj/g.txt", G)],
        turns: |r| {
            let path = r.project.join("g.txt");
            json!([claude_read(r, "g.txt"),
                {"tool": {"name": "Edit", "arguments": {"file_path": path, "old_string": "alpha", "new_string": "ALPHA"}}},
                {"tool": {"name": "Edit", "arguments": {"file_path": path, "old_string": "beta", "new_string": "BETA"}}}])
        },
        // Default permission mode: only the human's acceptance lets the edit through.
        settings: || json!({"permissionMode": "default"}),
        after: ("proj/g.txt", Some(G_REVIEWED)),
        request: 3,
        says: &[NOTE],
        human: Some(|t| tmux::accept_first_batch_reject_second(t, "waits (Edit)", "BETA", NOTE[0])),
    },
};

/// Claude only: a whitespace drift is denied with the exact old text, and the retry the model
/// makes with it applies.
const CLAUDE_WHITESPACE: Case = Case {
    harness: "claude",
    files: &[(
        "proj/main.rs",
        b"fn main() {\n    let x = 1;   \n    println!(\"{x}\");\n}\n",
    )],
    turns: |r| {
        let path = r.project.join("main.rs");
        json!([claude_read(r, "main.rs"),
            {"tool": {"name": "Edit", "arguments": {"file_path": path, "old_string": "    let x = 1;\n", "new_string": "    let x = 2;\n"}}},
            // The scripted model does what redline's context told it.
            {"tool": {"name": "Edit", "arguments": {"file_path": path, "old_string": "    let x = 1;   \n", "new_string": "    let x = 2;\n"}}}])
    },
    settings: no_settings,
    after: (
        "proj/main.rs",
        Some(b"fn main() {\n    let x = 2;\n    println!(\"{x}\");\n}\n"),
    ),
    request: 2,
    says: &[
        &["String to replace not found"],
        &[r#"exact old_string (a JSON string): \"    let x = 1;   \\n\""#],
    ],
    human: None,
};

// Codex (`codex exec` sends patches through its shell tool as `apply_patch <<'EOF' … EOF`; its
// hook sees them as `Bash`. The test passes --dangerously-bypass-hook-trust, standing in for the
// trust a user records once in Codex's config.toml.) In review, a patch partly accepted is
// narrowed to the accepted chunks and the notes reach the model as additionalContext.

fn codex_patch(patch: &str) -> Value {
    json!({"tool": {"name": "exec_command", "arguments": {"cmd": format!("apply_patch <<'EOF'\n{patch}\nEOF\n")}}})
}

const CODEX: Row = Row {
    // Full-width letters: redline matches them under NFKC, Codex's own fallbacks do not.
    normalized: Case {
        harness: "codex",
        files: &[("proj/p.py", "x = 'ＡＢＣ'  \ny = 1\nz = 3\n".as_bytes())],
        turns: |_| {
            json!([codex_patch(
                "*** Begin Patch\n*** Update File: p.py\n@@\n x = 'ABC'\n-y = 1\n+y = 2\n z = 3\n*** End Patch"
            )])
        },
        settings: no_settings,
        after: (
            "proj/p.py",
            Some("x = 'ＡＢＣ'  \ny = 2\nz = 3\n".as_bytes()),
        ),
        request: 1,
        says: &[],
        human: None,
    },
    failing: Case {
        harness: "codex",
        files: &[("proj/app.py", APP)],
        turns: |_| {
            json!([codex_patch(
                "*** Begin Patch\n*** Update File: app.py\n@@\n-    total = compute(1, 3)\n-    print(totl)\n+    pass\n*** End Patch"
            )])
        },
        settings: no_settings,
        after: ("proj/app.py", Some(APP)),
        request: 1,
        says: &[REFUSED, CLOSEST],
        human: None,
    },
    outside: Case {
        harness: "codex",
        files: &[("proj/a.txt", b"a\n")],
        turns: |_| {
            json!([codex_patch(
                "*** Begin Patch\n*** Add File: ../outside.txt\n+written\n*** End Patch"
            )])
        },
        settings: no_settings,
        after: ("outside.txt", None),
        request: 1,
        says: &[OUTSIDE_ROOT],
        human: None,
    },
    review: Case {
        harness: "codex",
        files: &[("proj/g.txt", b"alpha\none\ntwo\nthree\nfour\nfive\nbeta\n")],
        turns: |_| {
            json!([codex_patch(
                "*** Begin Patch\n*** Update File: g.txt\n@@\n-alpha\n+ALPHA\n one\n@@\n five\n-beta\n+BETA\n*** End Patch"
            )])
        },
        settings: no_settings,
        after: (
            "proj/g.txt",
            Some(b"ALPHA\none\ntwo\nthree\nfour\nfive\nbeta\n"),
        ),
        request: 1,
        says: &[NOTE],
        human: Some(|t| tmux::accept_first_reject_second(t, "waits (Bash)", NOTE[0])),
    },
};

fn main() -> std::process::ExitCode {
    clients::main(vec![
        clients::Case {
            name: "pi_normalized_edit_is_repaired_and_only_the_span_changes",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/pi",
            ],
            run: || run(&PI.normalized),
        },
        clients::Case {
            name: "pi_failing_edit_is_denied_with_candidates_in_the_next_request",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/pi",
            ],
            run: || run(&PI.failing),
        },
        clients::Case {
            name: "pi_write_outside_the_root_is_denied",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/pi",
            ],
            run: || run(&PI.outside),
        },
        clients::Case {
            name: "pi_review_accepts_one_edit_and_rejects_one_with_a_note_the_model_sees",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/pi",
                "tmux",
            ],
            run: || run(&PI.review),
        },
        clients::Case {
            name: "gemini_normalized_replace_is_repaired_and_only_the_span_changes",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/gemini",
            ],
            run: || run(&GEMINI.normalized),
        },
        clients::Case {
            name: "gemini_failing_replace_is_denied_with_candidates_in_the_next_request",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/gemini",
            ],
            run: || run(&GEMINI.failing),
        },
        clients::Case {
            name: "gemini_write_outside_the_root_is_denied",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/gemini",
            ],
            run: || run(&GEMINI.outside),
        },
        clients::Case {
            name: "gemini_review_accepts_one_replace_and_rejects_one_with_a_note_the_model_sees",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/gemini",
                "tmux",
            ],
            run: || run(&GEMINI.review),
        },
        clients::Case {
            name: "claude_quote_drift_is_repaired_and_only_the_span_changes",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/claude",
            ],
            run: || run(&CLAUDE.normalized),
        },
        clients::Case {
            name: "claude_whitespace_drift_is_repaired_on_the_retry_redline_asks_for",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/claude",
            ],
            run: || run(&CLAUDE_WHITESPACE),
        },
        clients::Case {
            name: "claude_failing_edit_gets_candidates_in_the_next_request",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/claude",
            ],
            run: || run(&CLAUDE.failing),
        },
        clients::Case {
            name: "claude_write_outside_the_root_is_denied",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/claude",
            ],
            run: || run(&CLAUDE.outside),
        },
        clients::Case {
            name: "claude_review_accepts_one_edit_and_rejects_one_with_a_note_the_model_sees",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/claude",
                "tmux",
            ],
            run: || run(&CLAUDE.review),
        },
        clients::Case {
            name: "codex_normalized_patch_is_rebuilt_and_only_the_span_changes",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/codex",
            ],
            run: || run(&CODEX.normalized),
        },
        clients::Case {
            name: "codex_failing_patch_is_denied_with_candidates_in_the_next_request",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/codex",
            ],
            run: || run(&CODEX.failing),
        },
        clients::Case {
            name: "codex_add_file_outside_the_root_is_denied",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/codex",
            ],
            run: || run(&CODEX.outside),
        },
        clients::Case {
            name: "codex_review_accepts_one_chunk_and_rejects_one_with_a_note_the_model_sees",
            needs: &[
                "tests/harness/node_modules/.bin/node",
                "tests/harness/node_modules/.bin/codex",
                "tmux",
            ],
            run: || run(&CODEX.review),
        },
    ])
}
