//! `redline mcp` through the real binary: the 2025-11-25 handshake, tools/list, tool calls that
//! apply and fail, and requests without any handshake (bare and stateless with `_meta`).

mod common;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout};

struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Mcp {
    /// `args` as in the documented client configs, e.g. `["mcp", "--root", DIR]`.
    fn start(dir: &Path, args: &[&str]) -> Mcp {
        let (child, stdin, stdout) =
            common::spawn_session(common::redline().current_dir(dir).args(args));
        Mcp {
            child,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
        }
    }

    fn send(&mut self, msg: Value) {
        let s = self.stdin.as_mut().unwrap();
        writeln!(s, "{msg}").unwrap();
        s.flush().unwrap();
    }

    /// Sends a request and reads lines until its response.
    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "server closed stdout"
            );
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"));
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    fn close(mut self) -> Option<i32> {
        drop(self.stdin.take());
        self.child.wait().unwrap().code()
    }
}

fn tool_names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn handshake_list_and_apply() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello wörld\r\n").unwrap();
    let root = dir.path().to_str().unwrap();
    let mut mcp = Mcp::start(Path::new("/"), &["mcp", "--root", root]);
    let init = mcp.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["result"]["serverInfo"]["name"], "redline");
    mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let list = mcp.request(2, "tools/list", json!({}));
    assert_eq!(
        tool_names(&list),
        ["read_file", "preview_edits", "apply_edits"]
    );
    let apply = &list["result"]["tools"][2];
    assert_eq!(apply["annotations"]["destructiveHint"], true);
    assert_eq!(
        list["result"]["tools"][1]["annotations"]["readOnlyHint"],
        true
    );
    assert!(!list.to_string().contains("$ref"));

    let read = mcp.request(
        3,
        "tools/call",
        json!({"name": "read_file", "arguments": {"path": "a.txt"}}),
    );
    assert!(
        read["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("     1\thello wörld\n")
    );
    let version = read["result"]["structuredContent"]["version"]
        .as_str()
        .unwrap()
        .to_string();

    let edit = json!({"files": [{"path": "a.txt", "expectHash": version, "edits": [{"oldText": "wörld", "newText": "world"}]}]});
    let preview = mcp.request(
        4,
        "tools/call",
        json!({"name": "preview_edits", "arguments": edit}),
    );
    assert_eq!(preview["result"]["isError"], false);
    assert_eq!(preview["result"]["structuredContent"]["dryRun"], true);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "hello wörld\r\n"
    );

    let applied = mcp.request(
        5,
        "tools/call",
        json!({"name": "apply_edits", "arguments": edit}),
    );
    assert_eq!(applied["result"]["isError"], false, "{applied}");
    assert_eq!(applied["result"]["structuredContent"]["written"], true);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "hello world\r\n"
    );

    // The same call again: the file changed, so expectHash makes it fail, as a tool error whose
    // structuredContent is the response JSON and whose text says why in a few lines.
    let stale = mcp.request(
        6,
        "tools/call",
        json!({"name": "apply_edits", "arguments": edit}),
    );
    assert_eq!(stale["result"]["isError"], true);
    let structured = &stale["result"]["structuredContent"];
    assert_eq!(structured["ok"], false);
    assert_eq!(structured["errors"][0]["code"], "stale");
    let text = stale["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("stale"), "{text}");
    assert!(text.contains("nothing was written"), "{text}");

    // Claude-style arguments go through the same parser.
    let claude = json!({"file_path": "a.txt", "old_string": "world", "new_string": "there"});
    let r = mcp.request(
        7,
        "tools/call",
        json!({"name": "apply_edits", "arguments": claude}),
    );
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "hello there\r\n"
    );

    let bad = mcp.request(
        8,
        "tools/call",
        json!({"name": "apply_edits", "arguments": {"files": []}}),
    );
    assert_eq!(bad["result"]["isError"], true);
    let unknown = mcp.request(9, "tools/call", json!({"name": "rm_rf", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602);
    // Arguments that are not an object: the method exists, its params are invalid.
    let text_args = mcp.request(
        10,
        "tools/call",
        json!({"name": "preview_edits", "arguments": "*** Begin Patch\n*** End Patch\n"}),
    );
    assert_eq!(text_args["error"]["code"], -32602, "{text_args}");
    let missing = mcp.request(11, "resources/list", json!({}));
    assert_eq!(missing["error"]["code"], -32601, "{missing}");
    assert_eq!(mcp.close(), Some(0));
}

#[test]
fn requests_without_a_handshake_are_answered() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "x\n").unwrap();
    // Bare: no initialize, no _meta.
    let mut mcp = Mcp::start(dir.path(), &["mcp"]);
    let list = mcp.request(1, "tools/list", json!({}));
    assert_eq!(
        tool_names(&list),
        ["read_file", "preview_edits", "apply_edits"]
    );
    let call = mcp.request(
        2,
        "tools/call",
        json!({"name": "apply_edits", "arguments": {"files": [{"path": "a.txt", "edits": [{"oldText": "x", "newText": "y"}]}]}}),
    );
    assert_eq!(call["result"]["isError"], false, "{call}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "y\n"
    );
    assert_eq!(mcp.close(), Some(0));

    // Stateless 2026-07-28: every request carries its _meta.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let mut mcp = Mcp::start(dir.path(), &["mcp"]);
    let list = mcp.request(1, "tools/list", json!({"_meta": meta}));
    assert_eq!(
        tool_names(&list),
        ["read_file", "preview_edits", "apply_edits"]
    );
    assert_eq!(list["result"]["resultType"], "complete");
    let call = mcp.request(
        2,
        "tools/call",
        json!({"_meta": meta, "name": "read_file", "arguments": {"path": "a.txt"}}),
    );
    assert_eq!(
        call["result"]["structuredContent"]["shownLines"], 1,
        "{call}"
    );
    assert!(
        call["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("     1\ty\n"),
        "{call}"
    );
    assert_eq!(mcp.close(), Some(0));
}

#[test]
fn requests_piped_then_closed_are_all_answered() {
    // `printf … | redline mcp`: stdin ends while the calls are still running; each is answered
    // before redline exits, and a notification is not waited for.
    let dir = tempfile::tempdir().unwrap();
    let body: String = (0..2000).map(|i| format!("line {i}\n")).collect();
    // The preview reads a file of its own: the two calls may run in either order (the server
    // answers each when it is done), and a preview of a.txt that ran after the apply would find
    // its edits already made.
    for name in ["a.txt", "b.txt"] {
        std::fs::write(dir.path().join(name), &body).unwrap();
    }
    let edits: Vec<Value> = (0..2000)
        .step_by(10)
        .map(|i| json!({"oldText": format!("line {i}\n"), "newText": format!("LINE {i}\n")}))
        .collect();
    let mut input = String::new();
    for (id, tool, path) in [(1, "preview_edits", "b.txt"), (2, "apply_edits", "a.txt")] {
        input.push_str(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": tool, "arguments": {"files": [{"path": path, "edits": edits}]}}})
            .to_string(),
        );
        input.push('\n');
    }
    input.push_str(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    input.push('\n');
    let out = common::output_with_stdin(
        common::redline()
            .args(["mcp"])
            .current_dir(dir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped()),
        input.as_bytes(),
    );
    assert!(out.status.success(), "{out:?}");
    let answers: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut ids: Vec<i64> = answers.iter().filter_map(|a| a["id"].as_i64()).collect();
    ids.sort();
    assert_eq!(ids, [1, 2], "{answers:?}");
    for a in &answers {
        assert_eq!(a["result"]["isError"], false, "{a}");
    }
    let after = std::fs::read_to_string(dir.path().join("a.txt")).unwrap();
    assert!(after.starts_with("LINE 0\nline 1\n"), "{}", &after[..40]);
}
