//! `redline serve` through the real binary: several requests in both framings, errors,
//! notifications and shutdown.

mod common;

use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

/// Runs `redline serve` in `dir` on `input`; returns (framing, message) in order and the status.
fn serve(dir: &Path, input: &[u8]) -> (Vec<(&'static str, Value)>, Option<i32>, String) {
    let mut child = common::redline()
        .current_dir(dir)
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    let mut msgs = Vec::new();
    let mut rest: &[u8] = &out.stdout;
    while !rest.is_empty() {
        if let Some(h) = rest.strip_prefix(b"Content-Length: ") {
            let end = h.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
            let n: usize = std::str::from_utf8(&h[..end]).unwrap().parse().unwrap();
            let body = &h[end + 4..end + 4 + n];
            msgs.push(("header", serde_json::from_slice(body).unwrap()));
            rest = &h[end + 4 + n..];
        } else {
            let end = rest.iter().position(|&b| b == b'\n').unwrap();
            msgs.push(("line", serde_json::from_slice(&rest[..end]).unwrap()));
            rest = &rest[end + 1..];
        }
    }
    (
        msgs,
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn framed(v: &Value) -> Vec<u8> {
    let body = v.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

#[test]
fn a_session_of_requests() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\r\nbeta 日本\r\n").unwrap();
    let edit = json!({"files": [{"path": "a.txt", "edits": [{"oldText": "beta 日本", "newText": "gamma"}]}]});
    let mut input = Vec::new();
    let line = |input: &mut Vec<u8>, v: Value| {
        input.extend(v.to_string().into_bytes());
        input.push(b'\n');
    };
    line(
        &mut input,
        json!({"jsonrpc": "2.0", "id": 1, "method": "resolve", "params": edit}),
    );
    line(
        &mut input,
        json!({"jsonrpc": "2.0", "method": "resolve", "params": edit}),
    ); // notification: no reply
    line(
        &mut input,
        json!({"jsonrpc": "2.0", "id": "r", "method": "read", "params": {"path": "a.txt", "offset": 2}}),
    );
    input.extend(b"{not json\n");
    line(
        &mut input,
        json!({"jsonrpc": "2.0", "id": 3, "method": "frobnicate"}),
    );
    line(
        &mut input,
        json!({"jsonrpc": "2.0", "id": 4, "method": "read", "params": {"file": "a.txt"}}),
    );
    line(&mut input, json!({"id": 5, "method": "resolve"}));
    line(
        &mut input,
        json!({"jsonrpc": "2.0", "id": 6, "method": "apply", "params": {"files": [{"path": "a.txt", "edits": [{"oldText": "nope", "newText": "x"}]}]}}),
    );
    input.extend(framed(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "apply", "params": edit}),
    ));
    input.extend(framed(
        &json!({"jsonrpc": "2.0", "id": 8, "method": "schema", "params": {"which": "tools"}}),
    ));
    line(
        &mut input,
        json!({"jsonrpc": "2.0", "id": 9, "method": "apply", "params": "a.txt\n<<<<<<< SEARCH\nalpha\n=======\nALPHA\n>>>>>>> REPLACE\n"}),
    );
    line(
        &mut input,
        json!({"jsonrpc": "2.0", "id": 10, "method": "shutdown"}),
    );
    line(
        &mut input,
        json!({"jsonrpc": "2.0", "id": 11, "method": "resolve", "params": edit}),
    ); // after shutdown: an error (LSP), nothing resolved
    line(&mut input, json!({"jsonrpc": "2.0", "method": "exit"}));
    line(
        &mut input,
        json!({"jsonrpc": "2.0", "id": 12, "method": "resolve", "params": edit}),
    ); // after exit: unread

    let (msgs, status, stderr) = serve(dir.path(), &input);
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    let ids: Vec<Value> = msgs.iter().map(|(_, m)| m["id"].clone()).collect();
    assert_eq!(
        ids,
        [
            json!(1),
            json!("r"),
            Value::Null,
            json!(3),
            json!(4),
            json!(5),
            json!(6),
            json!(7),
            json!(8),
            json!(9),
            json!(10),
            json!(11)
        ]
    );
    let by_id = |i: usize| &msgs[i].1;

    // resolve: the §4 response, nothing written.
    assert_eq!(by_id(0)["result"]["ok"], true);
    assert_eq!(by_id(0)["result"]["dryRun"], true);
    assert_eq!(by_id(0)["result"]["files"][0]["status"], "planned");
    // read from line 2.
    assert_eq!(
        by_id(1)["result"]["lines"],
        json!([{"line": 2, "text": "beta 日本"}])
    );
    assert!(
        by_id(1)["result"]["version"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    // Protocol errors.
    assert_eq!(by_id(2)["error"]["code"], -32700);
    assert_eq!(by_id(3)["error"]["code"], -32601);
    assert_eq!(by_id(4)["error"]["code"], -32602);
    assert_eq!(by_id(5)["error"]["code"], -32600);
    // A domain failure is a result.
    assert_eq!(by_id(6)["result"]["ok"], false);
    assert_eq!(by_id(6)["result"]["errors"][0]["code"], "not_found");
    // Content-Length in, Content-Length out; the apply wrote.
    assert_eq!(msgs[7].0, "header");
    assert_eq!(by_id(7)["result"]["written"], true);
    assert_eq!(msgs[8].0, "header");
    assert_eq!(by_id(8)["result"][2]["name"], "apply_edits");
    assert_eq!(msgs[9].0, "line");
    // A dialect as a string.
    assert_eq!(by_id(9)["result"]["written"], true, "{}", by_id(9));
    assert_eq!(by_id(10)["result"], Value::Null);
    assert_eq!(by_id(11)["error"]["code"], -32600);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "ALPHA\r\ngamma\r\n"
    );
}

#[test]
fn end_of_input_ends_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let (msgs, status, _) = serve(dir.path(), b"");
    assert!(msgs.is_empty());
    assert_eq!(status, Some(0));
}
