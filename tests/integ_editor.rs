//! `redline filter` and `redline resolve --format lsp` through the real binary: positions with
//! CJK and emoji in every encoding, line endings and BOM kept, silent failures.

mod common;

use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;

fn redline(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    common::output_with_stdin(common::redline().current_dir(dir).args(args), stdin)
}

/// `redline filter --path PATH --edits EDITS` in `dir` on `buffer`, checked to exit 0 (its
/// stderr and stdout shown when not).
fn filter_ok(dir: &Path, path: &str, edits: &str, buffer: &[u8]) -> Output {
    let out = redline(dir, &["filter", "--path", path, "--edits", edits], buffer);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

/// `redline resolve --format lsp --position-encoding ENC SOURCE` in `dir`, `stdin` on its stdin.
fn lsp_resolve(dir: &Path, encoding: &str, source: &str, stdin: &[u8]) -> Output {
    let args = [
        "resolve",
        "--format",
        "lsp",
        "--position-encoding",
        encoding,
        source,
    ];
    redline(dir, &args, stdin)
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

const TEXT: &str = "\u{FEFF}// 注釈\r\nlet s = \"日本語😀\"; let x = 1;\r\nend";

fn edits_file(dir: &Path) {
    let req = json!({"files": [{"path": "src/a.rs", "edits": [
        {"oldText": "let x = 1;", "newText": "let x = \"🎉\";\nlet y = 2;"},
        {"oldText": "注釈", "newText": "コメント"}
    ]}]});
    std::fs::write(dir.join("edits.json"), req.to_string()).unwrap();
}

#[test]
fn filter_edits_the_buffer_and_keeps_crlf_and_bom() {
    let dir = tempfile::tempdir().unwrap();
    edits_file(dir.path());
    // The file is not on disk: filter works on the buffer alone.
    let out = filter_ok(dir.path(), "src/a.rs", "edits.json", TEXT.as_bytes());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "\u{FEFF}// コメント\r\nlet s = \"日本語😀\"; let x = \"🎉\";\r\nlet y = 2;\r\nend"
    );
    assert!(out.stderr.is_empty());
}

#[test]
fn filter_failure_echoes_the_input_silently() {
    let dir = tempfile::tempdir().unwrap();
    edits_file(dir.path());
    let input = "no match here\r\n";
    for args in [
        vec!["filter", "--path", "src/a.rs", "--edits", "edits.json"],
        vec!["filter", "--path", "src/other.rs", "--edits", "edits.json"],
        vec!["filter", "--path", "src/a.rs", "--edits", "missing.json"],
        // Command lines that do not parse (an editor pasted a name with a space unquoted).
        vec![
            "--root",
            ".",
            "filter",
            "--path",
            "src/my",
            "a.rs",
            "--edits",
            "edits.json",
        ],
        vec!["--color=never", "filter", "--bogus"],
        vec!["filter"],
    ] {
        let out = redline(dir.path(), &args, input.as_bytes());
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(out.stdout, input.as_bytes(), "{args:?}");
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = redline(
        dir.path(),
        &[
            "filter",
            "--path",
            "src/a.rs",
            "--edits",
            "edits.json",
            "--report",
            "report.json",
        ],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(report["ok"], false);
    assert_eq!(report["errors"][0]["code"], "not_found");
}

#[test]
fn lsp_ranges_in_every_encoding_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.rs"), TEXT).unwrap();
    edits_file(dir.path());
    let uri = format!(
        "file://{}/src/a.rs",
        std::fs::canonicalize(dir.path()).unwrap().display()
    );
    // Line 1 is `let s = "日本語😀"; let x = 1;`: before `let x` come 8 ASCII, `"`, 3 CJK
    // (3 bytes, 1 UTF-16 unit each), the emoji (4 bytes, 2 units), `"; ` (3).
    for (enc, x_start, x_end_extra) in [
        ("utf-8", 8 + 1 + 9 + 4 + 3, 10),
        ("utf-16", 8 + 1 + 3 + 2 + 3, 10),
        ("utf-32", 8 + 1 + 3 + 1 + 3, 10),
    ] {
        let out = lsp_resolve(dir.path(), enc, "edits.json", b"");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{enc}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json_of(&out);
        assert_eq!(v["errors"], json!([]));
        let changes = v["workspaceEdit"]["documentChanges"].as_array().unwrap();
        assert_eq!(changes.len(), 1);
        assert_eq!(
            changes[0]["textDocument"],
            json!({"uri": uri, "version": null})
        );
        let edits = changes[0]["edits"].as_array().unwrap();
        // Ascending: the comment (line 0) first. The BOM counts in no position.
        let comment_end = if enc == "utf-8" { 3 + 6 } else { 3 + 2 };
        assert_eq!(
            edits[0]["range"],
            json!({"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": comment_end}}),
            "{enc}"
        );
        assert_eq!(edits[0]["newText"], "コメント");
        assert_eq!(
            edits[1]["range"],
            json!({"start": {"line": 1, "character": x_start}, "end": {"line": 1, "character": x_start + x_end_extra}}),
            "{enc}"
        );
        // Inserted line breaks take the file's CRLF.
        assert_eq!(edits[1]["newText"], "let x = \"🎉\";\r\nlet y = 2;");
    }
}

#[test]
fn lsp_resolves_unsaved_buffers_and_reports_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "on disk\n").unwrap();
    let req = json!({
        "files": [{"path": "a.txt", "edits": [{"oldText": "😀 buffer", "newText": "saved"}]}],
        "documents": [{"path": "a.txt", "text": "ｘ\n😀 buffer\n"}]
    });
    let out = lsp_resolve(dir.path(), "utf-16", "-", req.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let v = json_of(&out);
    let e = &v["workspaceEdit"]["documentChanges"][0]["edits"][0];
    assert_eq!(
        e["range"],
        json!({"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 9}})
    );

    let req =
        json!({"files": [{"path": "a.txt", "edits": [{"oldText": "not there", "newText": "x"}]}]});
    let out = redline(
        dir.path(),
        &["resolve", "--format", "lsp"],
        req.to_string().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    let v = json_of(&out);
    assert_eq!(v["workspaceEdit"]["documentChanges"], json!([]));
    assert_eq!(v["errors"][0]["code"], "not_found");

    let out = redline(
        dir.path(),
        &["resolve", "--format", "lsp"],
        b"{\"files\": []}",
    );
    assert_eq!(out.status.code(), Some(2));
    let v = json_of(&out);
    assert_eq!(v["workspaceEdit"]["documentChanges"], json!([]));
    assert_eq!(v["errors"][0]["code"], "invalid_request");
}

#[test]
fn lsp_file_operations() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("old.txt"), "bye\n").unwrap();
    std::fs::write(dir.path().join("m.txt"), "keep me\n").unwrap();
    std::fs::write(dir.path().join("taken.txt"), "taken\n").unwrap();
    let req = json!({"files": [
        {"path": "n.txt", "content": "new\n"},
        {"path": "old.txt", "delete": true},
        {"path": "m.txt", "moveTo": "taken.txt", "edits": [{"oldText": "keep", "newText": "kept"}]}
    ]});
    let out = redline(
        dir.path(),
        &["resolve", "--format", "lsp"],
        req.to_string().as_bytes(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v = json_of(&out);
    let ch = v["workspaceEdit"]["documentChanges"].as_array().unwrap();
    let kinds: Vec<&str> = ch
        .iter()
        .map(|c| c["kind"].as_str().unwrap_or("edit"))
        .collect();
    assert_eq!(kinds, ["create", "edit", "delete", "edit", "rename"]);
    assert_eq!(ch[1]["edits"][0]["newText"], "new\n");
    assert_eq!(ch[3]["edits"][0]["newText"], "kept");
    assert_eq!(ch[4]["options"], json!({"overwrite": true}));
    // Nothing was written.
    assert!(!dir.path().join("n.txt").exists());
    assert!(dir.path().join("old.txt").exists());
}

#[test]
fn filter_takes_any_dialect() {
    let dir = tempfile::tempdir().unwrap();
    let patch =
        "*** Begin Patch\n*** Update File: notes.txt\n@@\n 一\n-二\n+二 😀\n*** End Patch\n";
    std::fs::write(dir.path().join("p.patch"), patch).unwrap();
    let out = filter_ok(
        dir.path(),
        "notes.txt",
        "p.patch",
        "一\r\n二\r\n三\r\n".as_bytes(),
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "一\r\n二 😀\r\n三\r\n"
    );
}

#[test]
fn schemas_have_no_refs() {
    let dir = tempfile::tempdir().unwrap();
    let out = redline(dir.path(), &["schema"], b"");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("$ref"));
    let v: Value = serde_json::from_str(&text).unwrap();
    // The request is one of the accepted shapes, each an object schema (or an array of them).
    let shapes = v["request"]["anyOf"].as_array().unwrap();
    assert!(shapes.iter().any(|s| s["type"] == "object"));
    assert!(v["response"]["anyOf"].is_array());
    assert_eq!(v["tools"].as_array().unwrap().len(), 3);
    for which in ["request", "response", "tools"] {
        let out = redline(dir.path(), &["schema", which], b"");
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            serde_json::from_slice::<Value>(&out.stdout).unwrap(),
            v[which]
        );
    }
    assert_eq!(
        redline(dir.path(), &["schema", "nope"], b"").status.code(),
        Some(2)
    );
}
