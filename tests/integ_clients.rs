//! `redline serve`, `redline mcp` and the diffs, driven by the third-party programs their users
//! run: `vscode-jsonrpc` under node, the official MCP Python SDK, `git apply` and GNU `patch`.
//! (`harness = false`: a test whose program is missing is reported as ignored, and fails under
//! `CI=true`, where `.ci/run` installs them all.)

#[path = "support/clients.rs"]
mod clients;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_redline");

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

fn main() -> std::process::ExitCode {
    use clients::Case;
    clients::main(vec![Case {
        name: "vscode_jsonrpc_session",
        needs: &["node", "tests/node/node_modules/vscode-jsonrpc"],
        run: vscode_jsonrpc_session,
    }])
}
