//! `redline serve`, `redline mcp` and the diffs, driven by the third-party programs their users
//! run: `vscode-jsonrpc` under node, the official MCP Python SDK, `git apply` and GNU `patch`.
//! (`harness = false`: a test whose program is missing is reported as ignored, and fails under
//! `CI=true`, where `.ci/run` installs them all.)

#[path = "support/clients.rs"]
mod clients;
mod common;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

use common::BIN;

fn package_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `cmd`, failing the test unless it exits 0; its stdout as JSON.
fn json_of(cmd: &mut Command) -> Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// vscode-jsonrpc sends an array argument as `params: [[…]]` and a string as `["…"]`, then
/// `shutdown` and the `exit` notification: every form is answered and the server waits for
/// `exit`, so the client sees no closed connection or broken pipe.
fn vscode_jsonrpc_session() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "alpha\n").unwrap();
    let seen = json_of(
        Command::new("node")
            .arg(package_dir().join("tests/node/jsonrpc.mjs"))
            .arg(BIN)
            .arg(dir.path()),
    );
    for key in ["arrayOfFiles", "object"] {
        assert_eq!(seen[key]["ok"], true, "{key}: {seen}");
        assert_eq!(seen[key]["files"][0]["path"], "a.txt", "{key}: {seen}");
        assert_eq!(seen[key]["files"][0]["status"], "planned", "{key}: {seen}");
    }
    assert_eq!(seen["patchText"]["ok"], true, "{seen}");
    assert_eq!(seen["patchText"]["written"], true, "{seen}");
    assert_eq!(seen["read"]["lines"][0]["text"], "beta", "{seen}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "beta\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(seen["shutdown"], Value::Null, "{seen}");
    assert_eq!(seen["afterShutdown"]["code"], -32600, "{seen}");
    assert_eq!(seen["exitCode"], 0, "{seen}");
    assert_eq!(seen["problems"], serde_json::json!([]), "{seen}");
    assert_eq!(seen["stderr"], "", "{seen}");
}

/// The official MCP Python SDK (its `Client` over stdio) lists the tools, reads with Claude
/// Code's `file_path`, previews and applies; it validates every successful result's
/// `structuredContent` against the tool's `outputSchema`, so a result that does not fit fails
/// the call.
fn mcp_python_sdk_session() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let seen = json_of(
        Command::new(package_dir().join("tests/python/.venv/bin/python"))
            .arg(package_dir().join("tests/python/mcp_client.py"))
            .arg(BIN)
            .arg(dir.path()),
    );
    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read_file", "preview_edits", "apply_edits"]);
    assert!(
        seen["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["outputSchema"] == true)
    );
    // read_file: the numbered lines in the text, and as one string in the structured part
    // (which is all Claude Code shows the model), never as per-line objects.
    assert_eq!(seen["read"]["isError"], false, "{seen}");
    assert_eq!(
        seen["read"]["text"][0].as_str().unwrap().lines().next(),
        Some("     1\tone")
    );
    assert_eq!(seen["read"]["structured"]["shownLines"], 2, "{seen}");
    assert_eq!(seen["read"]["structured"]["text"], seen["read"]["text"][0]);
    assert!(seen["read"]["structured"].get("lines").is_none(), "{seen}");
    // preview/apply: the text is a summary of the structured response, not the JSON again.
    for key in ["preview", "failed", "apply"] {
        assert_eq!(
            seen[key]["text"].as_array().unwrap().len(),
            1,
            "{key}: {seen}"
        );
        let text = seen[key]["text"][0].as_str().unwrap();
        assert!(
            serde_json::from_str::<Value>(text).is_err(),
            "{key}: {text}"
        );
    }
    let failed = seen["failed"]["text"][0].as_str().unwrap();
    assert!(failed.contains("✗ edit 0: not_found"), "{failed}");
    assert!(failed.contains("hint: "), "{failed}");
    let preview = seen["preview"]["text"][0].as_str().unwrap();
    assert!(preview.contains("\n-two\n+2\n"), "{preview}");
    assert_eq!(seen["preview"]["isError"], false, "{seen}");
    assert_eq!(
        seen["preview"]["structured"]["files"][0]["status"],
        "planned"
    );
    assert_eq!(seen["failed"]["isError"], true, "{seen}");
    assert_eq!(
        seen["failed"]["structured"]["errors"][0]["code"],
        "not_found"
    );
    assert_eq!(seen["apply"]["isError"], false, "{seen}");
    assert_eq!(seen["apply"]["structured"]["written"], true);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n2\n"
    );
}

/// `redline apply` with no request on a terminal says it is reading stdin instead of waiting
/// silently (`script` gives it a pseudo-terminal; Ctrl-D then ends the empty request).
fn apply_on_a_terminal_says_it_reads_stdin() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new("script")
        .args(["-qec", &format!("'{BIN}' apply --format json"), "/dev/null"])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    // Wait for the notice before sending Ctrl-D, so the test does not depend on timing.
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("Ctrl-D") {
        let n = std::io::Read::read(&mut stdout, &mut buf).unwrap();
        assert!(
            n > 0,
            "ended without the notice: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    stdin.write_all(b"\x04").unwrap();
    stdin.flush().unwrap();
    std::io::Read::read_to_end(&mut stdout, &mut seen).unwrap();
    drop(stdin);
    child.wait().unwrap();
    let seen = String::from_utf8_lossy(&seen);
    assert!(
        seen.starts_with("redline: reading the request from stdin (end it with Ctrl-D"),
        "{seen}"
    );
    assert!(
        seen.contains("invalid_request"),
        "the empty request is then refused: {seen}"
    );
}

/// The newest wheel of this version in `target/wheels` (`.ci/run` builds it with maturin).
fn built_wheel() -> std::path::PathBuf {
    let prefix = format!("redline_edits-{}-", env!("CARGO_PKG_VERSION"));
    std::fs::read_dir(package_dir().join("target/wheels"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(&prefix) && name.ends_with(".whl")
        })
        .max_by_key(|p| p.metadata().unwrap().modified().unwrap())
        .unwrap_or_else(|| panic!("no {prefix}*.whl in target/wheels (maturin build --release)"))
}

/// `pip install` of the wheel into a fresh virtualenv puts a working `redline` on its PATH.
fn wheel_installs_redline() {
    let wheel = built_wheel();
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("venv");
    let ok = |cmd: &mut Command| {
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{cmd:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    ok(Command::new("python3").arg("-m").arg("venv").arg(&venv));
    ok(Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-index",
            "--no-deps",
        ])
        .arg(&wheel));
    let bin = venv.join("bin/redline");
    let version = ok(Command::new(&bin).arg("--version"));
    assert_eq!(version, format!("redline {}\n", env!("CARGO_PKG_VERSION")));
    // The venv's bin on PATH, as `source venv/bin/activate` does: `redline` is the wheel's.
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("a.txt"), "one\n").unwrap();
    let path = std::env::join_paths(std::iter::once(venv.join("bin")).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = ok(Command::new("sh")
        .arg("-c")
        .arg(r#"command -v redline && echo '{"path": "a.txt", "oldText": "one", "newText": "two"}' | redline apply --format json"#)
        .current_dir(&project)
        .env("PATH", path));
    assert!(out.starts_with(&format!("{}\n", bin.display())), "{out}");
    assert_eq!(
        std::fs::read_to_string(project.join("a.txt")).unwrap(),
        "two\n"
    );
}

/// File names a patch must carry: plain, a space (git's trailing tab), a tab, a quote and a
/// backslash (git's C quoting), and UTF-8 with a space.
const NAMES: [&str; 6] = [
    "plain.txt",
    "my file.txt",
    "tab\tname.txt",
    "quote\"d.txt",
    "back\\slash.txt",
    "日本 ü.txt",
];

/// What each case does to its file: (label, file before or none, request entry).
fn diff_ops(name: &str) -> Vec<(&'static str, Option<&'static str>, Value)> {
    use serde_json::json;
    vec![
        (
            "edit, no final newline",
            Some("one\ntwo\nlast"),
            json!({"path": name, "edits": [{"oldText": "two", "newText": "TWO"},
                                           {"oldText": "last", "newText": "LAST"}]}),
        ),
        ("create", None, json!({"path": name, "content": "new\n"})),
        ("create empty", None, json!({"path": name, "content": ""})),
        (
            "delete",
            Some("gone\n"),
            json!({"path": name, "delete": true}),
        ),
        (
            "delete empty",
            Some(""),
            json!({"path": name, "delete": true}),
        ),
        (
            "move and edit",
            Some("m1\nm2\n"),
            json!({"path": name, "moveTo": format!("sub/{name}"),
                   "edits": [{"oldText": "m2", "newText": "M2"}]}),
        ),
    ]
}

/// The 36 edge cases (6 names × 6 operations): the `--format diff` of a dry run, applied by
/// `git apply` and by GNU `patch -p1` to the tree before, gives the tree `redline apply` writes.
fn diffs_apply_with_git_and_patch() {
    let mut failures = Vec::new();
    let mut cases = 0;
    for name in NAMES {
        for (label, before, entry) in diff_ops(name) {
            cases += 1;
            let orig = tempfile::tempdir().unwrap();
            if let Some(text) = before {
                std::fs::write(orig.path().join(name), text).unwrap();
            }
            let req = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(
                req.path(),
                serde_json::json!({"files": [entry]}).to_string(),
            )
            .unwrap();
            for tool in ["git apply", "patch -p1 --no-backup-if-mismatch -s -f"] {
                if let Err(e) = common::round_trip(tool, orig.path(), req.path()).agrees() {
                    failures.push(format!("{tool}: {name:?} {label}: {e}"));
                }
            }
        }
    }
    assert_eq!(cases, 36);
    assert!(
        failures.is_empty(),
        "{} of {} applications failed:\n{}",
        failures.len(),
        cases * 2,
        failures.join("\n")
    );
}

fn main() -> std::process::ExitCode {
    use clients::Case;
    clients::main(vec![
        Case {
            name: "vscode_jsonrpc_session",
            needs: &["node", "tests/node/node_modules/vscode-jsonrpc"],
            run: vscode_jsonrpc_session,
        },
        Case {
            name: "mcp_python_sdk_session",
            needs: &["tests/python/.venv/bin/python"],
            run: mcp_python_sdk_session,
        },
        Case {
            name: "apply_on_a_terminal_says_it_reads_stdin",
            needs: &["script"],
            run: apply_on_a_terminal_says_it_reads_stdin,
        },
        Case {
            name: "wheel_installs_redline",
            needs: &["python3", "target/wheels"],
            run: wheel_installs_redline,
        },
        Case {
            name: "diffs_apply_with_git_and_patch",
            needs: &["git", "patch"],
            run: diffs_apply_with_git_and_patch,
        },
    ])
}
