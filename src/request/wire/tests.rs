use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{merge_key, parse_json, request_schema};
use crate::request::{EditSpec, FileRequest, Request, RequestError};

fn ok(text: &str) -> Request {
    parse_json(text).unwrap_or_else(|e| panic!("{text}\nfailed: {e:?}"))
}

fn ok_value(value: Value) -> Request {
    ok(&value.to_string())
}

fn err(value: Value) -> RequestError {
    let text = value.to_string();
    match parse_json(&text) {
        Ok(request) => panic!("{text}\nparsed: {request:?}"),
        Err(e) => e,
    }
}

/// Asserts the error's pointer and that its message contains `needle`.
fn err_at(value: Value, pointer: &str, needle: &str) -> RequestError {
    let e = err(value);
    assert_eq!(e.pointer.as_deref(), Some(pointer), "{e:?}");
    assert!(
        e.message.contains(needle),
        "{:?} lacks {needle:?}",
        e.message
    );
    e
}

/// An edit parsed from the object at `pointer`, whose `oldText` was sent as `oldText`.
fn spec(old: &str, new: &str, pointer: &str) -> EditSpec {
    spec_sent_as(old, new, pointer, "oldText")
}

/// An edit parsed from the object at `pointer`, whose `oldText` was sent under `key` (its
/// pointer is kept only for an `oldText` that is blank under N(·)).
fn spec_sent_as(old: &str, new: &str, pointer: &str, key: &str) -> EditSpec {
    EditSpec::new(old, new).with_old_text_pointer(
        crate::engine::normalize::is_blank_under_n(old).then(|| format!("{pointer}/{key}")),
    )
}

fn olds(file: &FileRequest) -> Vec<&str> {
    file.edits.iter().map(|e| e.old_text()).collect()
}

// ---- shapes ----

#[test]
fn canonical_full() {
    let r = ok(include_str!("../../../testdata/requests/ok-canonical.json"));
    assert!(r.dry_run);
    assert_eq!(r.files.len(), 4);
    let lib = &r.files[0];
    assert_eq!(lib.path, "src/lib.rs");
    assert_eq!(lib.pointer.as_deref(), Some("/files/0"));
    let e1 = spec("fn a() {}", "fn b() {}", "/files/0/edits/0").with_id(Some("e1".into()));
    assert_eq!(lib.edits, vec![e1]);
    assert!(
        lib.expect_hash
            .as_deref()
            .unwrap()
            .starts_with("sha256:e3b0")
    );
    assert_eq!(r.files[1].content.as_deref(), Some("# New\n"));
    assert!(r.files[1].edits.is_empty() && !r.files[1].delete);
    assert!(r.files[2].delete);
    assert_eq!(r.files[3].move_to.as_deref(), Some("b.rs"));
    assert!(r.documents.is_empty());
}

#[test]
fn canonical_dry_run_defaults_false() {
    assert!(
        !ok(include_str!(
            "../../../testdata/requests/ok-canonical-minimal.json"
        ))
        .dry_run
    );
}

#[test]
fn single_file_object() {
    let r = ok(include_str!(
        "../../../testdata/requests/ok-single-file.json"
    ));
    assert!(!r.dry_run);
    assert_eq!(r.files.len(), 1);
    assert_eq!(r.files[0].pointer.as_deref(), Some(""));
    assert_eq!(r.files[0].edits[1], spec("b()", "c()", "/edits/1"));
}

#[test]
fn mcp_edit_file_honours_dry_run() {
    let r = ok(include_str!(
        "../../../testdata/requests/ok-mcp-edit-file.json"
    ));
    assert!(r.dry_run);
    assert_eq!(r.files[0].path, "README.md");
}

#[test]
fn legacy_single_edit_points_at_the_object() {
    let r = ok(include_str!(
        "../../../testdata/requests/ok-legacy-single-edit.json"
    ));
    assert_eq!(r.files[0].edits, vec![spec("fn a() {}", "fn b() {}", "")]);
    let e = err_at(
        json!({"path": "a", "oldText": "", "newText": "b"}),
        "/oldText",
        "empty",
    );
    assert!(e.message.contains("the request"), "{}", e.message);
    err_at(
        json!({"path": "a", "oldText": "x"}),
        "",
        "missing field `newText` in the request",
    );
    let r =
        ok_value(json!({"path": "a", "oldText": "x", "newText": "", "dryRun": true, "id": "k"}));
    assert!(r.dry_run);
    assert_eq!(r.files[0].edits[0].id(), Some("k"));
    assert_eq!(r.files[0].edits[0].new_text(), "");
}

#[test]
fn claude_edit_and_multiedit() {
    let r = ok(include_str!(
        "../../../testdata/requests/ok-claude-edit.json"
    ));
    let e = &r.files[0].edits[0];
    assert_eq!(r.files[0].path, "/repo/src/lib.rs");
    assert_eq!(
        (e.old_text(), e.new_text(), e.replace_all),
        ("let x = 1;", "let x = 2;", true)
    );
    let r = ok(include_str!(
        "../../../testdata/requests/ok-claude-multiedit.json"
    ));
    assert_eq!(olds(&r.files[0]), ["alpha", "gamma"]);
}

#[test]
fn array_of_file_objects_merges_and_honours_dry_run() {
    let r = ok(include_str!("../../../testdata/requests/ok-array.json"));
    assert!(r.dry_run);
    assert_eq!(r.files.len(), 2);
    assert_eq!(r.files[0].path, "a.txt");
    assert_eq!(
        r.files[0].edits,
        vec![
            spec("x", "y", "/0/edits/0"),
            spec_sent_as("z", "w", "/2", "old_string")
        ]
    );
    assert_eq!(r.files[1].edits, vec![spec("p", "q", "/1")]);
    assert_eq!(r.files[1].pointer.as_deref(), Some("/1"));
    assert!(!ok_value(json!([{"path": "a", "delete": true, "dry_run": false}])).dry_run);
    err_at(json!([]), "", "empty array");
    err_at(
        json!([{"path": "a", "delete": true}, 7]),
        "/1",
        "must be a file object, found a number",
    );
    err_at(
        json!([{"path": "a", "delete": true, "documents": []}]),
        "/0/documents",
        "unknown field",
    );
}

#[test]
fn flat_edits_grouped_by_first_appearance() {
    let r = ok(include_str!(
        "../../../testdata/requests/ok-flat-edits.json"
    ));
    assert!(r.dry_run);
    let paths: Vec<&str> = r.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["b.rs", "a.rs"]);
    assert_eq!(r.files[0].pointer.as_deref(), Some("/edits/0"));
    assert_eq!(olds(&r.files[0]), ["1", "5"]);
    assert_eq!(r.files[0].edits[0].id(), Some("first"));
    assert!(r.files[0].edits[1].replace_all);
    let r = ok_value(
        json!({"edits": [{"file_path": "a", "old_string": "x", "new_string": "y"}],
                            "documents": [{"path": "a", "text": "x"}]}),
    );
    assert_eq!(r.documents.len(), 1);
    err_at(
        json!({"edits": [{"path": "a", "oldText": "x", "newText": "y", "content": "z"}]}),
        "/edits/0/content",
        "unknown field `content` in /edits/0",
    );
    err_at(
        json!({"edits": []}),
        "/edits",
        "`edits` is empty in the request",
    );
}

#[test]
fn pi_legacy_mixed_and_stringified_edits() {
    let r = ok(include_str!(
        "../../../testdata/requests/ok-pi-legacy-mixed.json"
    ));
    assert_eq!(
        r.files[0].edits,
        vec![spec("one", "two", "/edits/0"), spec("three", "four", "")]
    );
    err_at(
        json!({"path": "a", "edits": "not json"}),
        "/edits",
        "must be an array",
    );
    err_at(
        json!({"path": "a", "edits": "{\"oldText\": 1}"}),
        "/edits",
        "must be an array",
    );
    // A key repeated in the decoded array is two names of one field, as anywhere else.
    let e = parse_json(
        r#"{"path": "a", "edits": "[{\"oldText\": \"a\", \"oldText\": \"b\", \"newText\": \"c\"}]"}"#,
    )
    .unwrap_err();
    assert_eq!(e.pointer.as_deref(), Some("/edits/0/oldText"), "{e:?}");
    // The canonical shape takes exactly the typed fields.
    err_at(
        json!({"files": [{"path": "a", "edits": "[]"}]}),
        "/files/0/edits",
        "must be an array, found a string",
    );
    // The first error in request order (SPEC §3a): `oldText` comes before `newText`.
    err_at(
        json!({"files": [{"path": "a", "oldText": "x", "newText": "y"}]}),
        "/files/0/oldText",
        "unknown field `oldText` in /files/0",
    );
}

// ---- names ----

#[test]
fn every_alias_is_accepted() {
    for old in ["oldText", "old_string", "old_str", "old_text", "oldString"] {
        for new in ["newText", "new_string", "new_str", "new_text", "newString"] {
            for path in ["path", "file_path", "filePath"] {
                let mut edit = serde_json::Map::new();
                edit.insert(old.into(), json!("a"));
                edit.insert(new.into(), json!("b"));
                edit.insert("replace_all".into(), json!(true));
                let mut file = serde_json::Map::new();
                file.insert(path.into(), json!("f"));
                file.insert("edits".into(), json!([edit]));
                let r = ok_value(json!({"files": [file]}));
                assert_eq!(r.files[0].path, "f");
                let e = &r.files[0].edits[0];
                assert_eq!(
                    (e.old_text(), e.new_text(), e.replace_all),
                    ("a", "b", true)
                );
            }
        }
    }
    let r = ok(include_str!(
        "../../../testdata/requests/ok-canonical-aliases.json"
    ));
    assert!(!r.dry_run);
    assert!(r.files[0].expect_hash.is_some());
    assert_eq!(r.files[1].move_to.as_deref(), Some("src/new.rs"));
    assert!(ok_value(json!({"dry_run": true, "files": [{"path": "a", "delete": true}]})).dry_run);
}

#[test]
fn two_names_of_one_field_are_refused() {
    let e = err_at(
        json!({"files": [{"path": "a", "edits": [{"oldText": "x", "old_string": "x", "newText": "y"}]}]}),
        "/files/0/edits/0/old_string",
        "`oldText` and `old_string` are two names for one field in /files/0/edits/0",
    );
    assert!(e.hint_text().unwrap().contains("oldText"));
    err_at(
        json!({"path": "a", "file_path": "a", "delete": true}),
        "/file_path",
        "two names",
    );
    err_at(
        json!({"dryRun": true, "dry_run": true, "files": [{"path": "a", "delete": true}]}),
        "/dry_run",
        "two names",
    );
    err_at(
        json!({"path": "a", "delete": true, "moveTo": null, "move_to": "b"}),
        "/move_to",
        "two names",
    );
}

#[test]
fn unknown_fields_name_field_and_pointer() {
    let e = err(serde_json::from_str(include_str!(
        "../../../testdata/requests/err-unknown-field.json"
    ))
    .unwrap());
    assert_eq!(e.message, "unknown field `foo` in /files/0/edits/2");
    assert_eq!(e.pointer.as_deref(), Some("/files/0/edits/2/foo"));
    assert!(
        e.hint_text()
            .unwrap()
            .contains("oldText, newText, replaceAll, id")
    );
    err_at(
        json!({"files": [{"path": "a", "delete": true}], "x": 1}),
        "/x",
        "unknown field `x` in the request",
    );
    err_at(
        json!({"files": [{"path": "a", "delete": true, "mode": 1}]}),
        "/files/0/mode",
        "in /files/0",
    );
    err_at(
        json!({"files": [{"path": "a", "delete": true}], "documents": [{"path": "a", "text": "", "uri": "u"}]}),
        "/documents/0/uri",
        "in /documents/0",
    );
    // Keys with `/` and `~` are escaped in the pointer; unicode passes through.
    err_at(
        json!({"path": "a", "delete": true, "a/b~c": 1}),
        "/a~1b~0c",
        "`a/b~c`",
    );
    err_at(
        json!({"path": "a", "delete": true, "ünknöwn": 1}),
        "/ünknöwn",
        "`ünknöwn`",
    );
    // A file object's edits never carry a path (only the flat shape's do).
    err_at(
        json!({"path": "a", "edits": [{"path": "a", "oldText": "x", "newText": "y"}]}),
        "/edits/0/path",
        "unknown field `path`",
    );
}

// ---- required fields and types ----

#[test]
fn missing_fields_point_at_their_parent() {
    err_at(
        json!({"files": [{"edits": [{"oldText": "a", "newText": "b"}]}]}),
        "/files/0",
        "missing field `path` in /files/0",
    );
    err_at(
        json!({"files": [{"path": "a", "edits": [{"oldText": "a"}]}]}),
        "/files/0/edits/0",
        "missing field `newText`",
    );
    err_at(
        json!({"files": [{"path": "a", "edits": [{"newText": "a"}]}]}),
        "/files/0/edits/0",
        "missing field `oldText`",
    );
    err_at(
        json!({"edits": [{"path": "a", "oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d"}]}),
        "/edits/1",
        "missing field `path`",
    );
    err_at(
        json!({"oldText": "a", "newText": "b"}),
        "",
        "missing field `path` in the request",
    );
    err_at(
        json!({"files": [{"path": "a", "delete": true}], "documents": [{"path": "a"}]}),
        "/documents/0",
        "missing field `text`",
    );
    err_at(
        json!({"dryRun": true}),
        "",
        "none of `files`, `edits` or `path`",
    );
    err_at(json!({}), "", "none of");
}

#[test]
fn empty_old_text_is_refused_but_empty_new_text_is_fine() {
    err_at(
        json!({"files": [{"path": "a", "edits": [{"oldText": "", "newText": "b"}]}]}),
        "/files/0/edits/0/oldText",
        "`oldText` is empty in /files/0/edits/0",
    );
    // Whitespace-only oldText is the engine's call (N(·) empty), not the parser's.
    assert_eq!(
        ok_value(json!({"path": "a", "oldText": "  ", "newText": ""})).files[0].edits[0].old_text(),
        "  "
    );
}

#[test]
fn wrong_types_point_at_the_value() {
    let cases = [
        (
            json!({"files": [{"path": "a", "edits": [{"oldText": "a", "newText": "b", "replaceAll": "yes"}]}]}),
            "/files/0/edits/0/replaceAll",
            "`replaceAll` must be a boolean, found a string",
        ),
        (
            json!({"files": [{"path": 5, "delete": true}]}),
            "/files/0/path",
            "`path` must be a string, found a number",
        ),
        (
            json!({"files": [{"path": "a", "edits": {"oldText": "a"}}]}),
            "/files/0/edits",
            "must be an array, found an object",
        ),
        (
            json!({"files": {"path": "a"}}),
            "/files",
            "must be an array",
        ),
        (
            json!({"files": [{"path": "a", "edits": [{"oldText": "a", "newText": "b", "id": 3}]}]}),
            "/files/0/edits/0/id",
            "`id` must be a string",
        ),
        (
            json!({"files": [{"path": "a", "content": 1}]}),
            "/files/0/content",
            "must be a string",
        ),
        (
            json!({"files": [{"path": "a", "delete": "yes"}]}),
            "/files/0/delete",
            "must be a boolean",
        ),
        (
            json!({"files": [{"path": "a", "delete": true}], "dryRun": "true"}),
            "/dryRun",
            "must be a boolean",
        ),
        (
            json!({"files": [{"path": "a", "edits": ["x"]}]}),
            "/files/0/edits/0",
            "must be an edit object, found a string",
        ),
        (
            json!({"files": [{"path": "a", "edits": [{"oldText": null, "newText": "b"}]}]}),
            "/files/0/edits/0/oldText",
            "found null",
        ),
        (
            json!({"files": [{"path": "a", "delete": true}], "documents": {}}),
            "/documents",
            "must be an array",
        ),
        (
            json!({"path": "a", "delete": true, "dryRun": 1}),
            "/dryRun",
            "must be a boolean",
        ),
    ];
    for (value, pointer, needle) in cases {
        err_at(value, pointer, needle);
    }
}

#[test]
fn null_means_absent_for_optional_fields() {
    let r = ok_value(
        json!({"files": [{"path": "a", "edits": [{"oldText": "x", "newText": "y", "replaceAll": null, "id": null}],
                                       "content": null, "delete": null, "moveTo": null, "expectHash": null}],
                            "documents": null, "dryRun": null, "version": null}),
    );
    assert_eq!(r.files[0].edits, vec![spec("x", "y", "/files/0/edits/0")]);
    assert!(r.files[0].content.is_none() && !r.files[0].delete && r.files[0].move_to.is_none());
}

#[test]
fn version_must_be_one() {
    ok_value(json!({"version": 1, "files": [{"path": "a", "delete": true}]}));
    ok_value(json!({"version": 1, "edits": [{"path": "a", "oldText": "x", "newText": "y"}]}));
    err_at(
        json!({"version": 2, "files": [{"path": "a", "delete": true}]}),
        "/version",
        "unsupported request version 2",
    );
    err_at(
        json!({"version": "1", "files": [{"path": "a", "delete": true}]}),
        "/version",
        "version \"1\"",
    );
}

// ---- operations ----

#[test]
fn empty_lists_and_missing_operations() {
    err_at(
        json!({"files": []}),
        "/files",
        "`files` is empty in the request",
    );
    err_at(
        json!({"files": [{"path": "a", "edits": []}]}),
        "/files/0/edits",
        "`edits` is empty in /files/0",
    );
    err_at(
        json!({"path": "a", "edits": []}),
        "/edits",
        "`edits` is empty in the request",
    );
    let e = err_at(
        json!({"files": [{"path": "a"}]}),
        "/files/0",
        "file object /files/0 names a path but no operation",
    );
    assert!(e.hint_text().unwrap().contains("moveTo"));
    err_at(
        json!({"path": "a"}),
        "",
        "the request names a path but no operation",
    );
    err_at(json!({"path": "a", "dryRun": true}), "", "no operation");
    err_at(
        json!({"files": [{"path": "a", "expectHash": null, "edits": null}]}),
        "/files/0",
        "no operation",
    );
    err_at(
        json!({"files": [{"path": "", "delete": true}]}),
        "/files/0/path",
        "`path` is empty",
    );
    err_at(
        json!({"files": [{"path": "a\u{0}b", "delete": true}]}),
        "/files/0/path",
        "NUL",
    );
    err_at(
        json!({"files": [{"path": "a", "moveTo": ""}]}),
        "/files/0/moveTo",
        "`moveTo` is empty",
    );
}

#[test]
fn delete_must_be_true() {
    let e = err_at(
        json!({"files": [{"path": "a", "delete": false}]}),
        "/files/0/delete",
        "`delete` must be true",
    );
    assert!(e.hint.is_some());
    assert!(ok_value(json!({"files": [{"path": "a", "delete": true}]})).files[0].delete);
}

#[test]
fn operations_that_cannot_mix_in_one_object() {
    let cases = [
        (
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}], "content": "c"}),
            "/content",
            "`content` at /content conflicts with `edits` at /edits/0",
        ),
        (
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}], "delete": true}),
            "/delete",
            "`delete` at /delete conflicts with `edits`",
        ),
        (
            json!({"path": "a", "oldText": "x", "newText": "y", "content": "c"}),
            "/content",
            "conflicts with `edits` at /oldText",
        ),
        (
            json!({"path": "a", "content": "c", "delete": true}),
            "/delete",
            "conflicts with `content`",
        ),
        (
            json!({"path": "a", "content": "c", "moveTo": "b"}),
            "/moveTo",
            "conflicts with `content`",
        ),
        (
            json!({"path": "a", "delete": true, "moveTo": "b"}),
            "/moveTo",
            "conflicts with `delete`",
        ),
    ];
    for (value, pointer, needle) in cases {
        err_at(value, pointer, needle);
    }
    // moveTo with edits is a move-and-edit.
    let r =
        ok_value(json!({"path": "a", "moveTo": "b", "edits": [{"oldText": "x", "newText": "y"}]}));
    assert_eq!(r.files[0].move_to.as_deref(), Some("b"));
    assert_eq!(r.files[0].edits.len(), 1);
    // content may be empty (an empty file) and may carry expectHash (guarded overwrite).
    let h = format!("sha256:{}", "AB".repeat(32));
    let r = ok_value(json!({"files": [{"path": "a", "content": "", "expectHash": h}]}));
    assert_eq!(r.files[0].content.as_deref(), Some(""));
    assert_eq!(
        r.files[0].expect_hash,
        Some(format!("sha256:{}", "ab".repeat(32)))
    );
}

#[test]
fn expect_hash_must_be_a_sha256_version() {
    for bad in [
        "md5:abc",
        "sha256:",
        "sha256:xyz",
        &"a".repeat(64),
        &format!("sha256:{}", "a".repeat(63)),
    ] {
        err_at(
            json!({"files": [{"path": "a", "delete": true, "expectHash": bad}]}),
            "/files/0/expectHash",
            "not a sha256 version",
        );
    }
    err_at(
        json!({"files": [{"path": "a", "delete": true, "expectHash": 1}]}),
        "/files/0/expectHash",
        "must be a string",
    );
}

// ---- merging ----

#[test]
fn objects_for_one_path_merge_in_request_order() {
    let r = ok(include_str!(
        "../../../testdata/requests/ok-canonical-merge.json"
    ));
    assert_eq!(r.files.len(), 2);
    let a = &r.files[0];
    assert_eq!(a.path, "./src/a.rs");
    assert_eq!(a.pointer.as_deref(), Some("/files/0"));
    assert_eq!(olds(a), ["one", "two", "three"]);
    assert_eq!(a.move_to.as_deref(), Some("src/c.rs"));
    assert_eq!(r.files[1].path, "src/b.rs");
    // A merged edit keeps the pointer of where it was sent (kept for a blank oldText only).
    let r = ok_value(json!({"files": [
        {"path": "a", "edits": [{"oldText": "x", "newText": "y"}]},
        {"path": "b", "content": ""},
        {"path": "./a", "edits": [{"oldText": "z", "newText": "w"}, {"oldText": "\t", "newText": "v"}]},
    ]}));
    let ptrs: Vec<_> = r.files[0]
        .edits
        .iter()
        .map(|e| e.old_text_pointer())
        .collect();
    assert_eq!(ptrs, [None, None, Some("/files/2/edits/1/oldText")]);
}

#[test]
fn merged_objects_must_agree() {
    // SPEC §3a: a conflict between merged objects points at the later object; its message names
    // both fields' pointers. (Within one object it points at the later field.)
    let h1 = format!("sha256:{}", "1".repeat(64));
    let h2 = format!("sha256:{}", "2".repeat(64));
    let edit = json!([{"oldText": "x", "newText": "y"}]);
    let cases = [
        (
            json!({"files": [{"path": "a", "content": "1"}, {"path": "./a", "delete": true}]}),
            "/files/1",
            "`delete` at /files/1/delete conflicts with `content` at /files/0/content for `a`",
        ),
        (
            json!({"files": [{"path": "a", "content": "1"}, {"path": "a", "content": "2"}]}),
            "/files/1",
            "`content` at /files/1/content differs from `content` at /files/0/content",
        ),
        (
            json!({"files": [{"path": "a", "edits": edit}, {"path": "a", "content": "2"}]}),
            "/files/1",
            "`content` at /files/1/content conflicts with `edits` at /files/0/edits/0",
        ),
        (
            json!({"files": [{"path": "a", "delete": true}, {"path": "a", "edits": edit}]}),
            "/files/1",
            "`edits` at /files/1/edits/0 conflicts with `delete`",
        ),
        (
            json!({"files": [{"path": "a", "moveTo": "b"}, {"path": "a", "moveTo": "c"}]}),
            "/files/1",
            "`moveTo` at /files/1/moveTo differs",
        ),
        (
            json!({"files": [{"path": "a", "delete": true}, {"path": "a", "moveTo": "c"}]}),
            "/files/1",
            "`moveTo` at /files/1/moveTo conflicts with `delete`",
        ),
        (
            json!({"files": [{"path": "a", "edits": edit, "expectHash": h1}, {"path": "a", "edits": edit, "expectHash": h2}]}),
            "/files/1",
            "`expectHash` at /files/1/expectHash differs",
        ),
        (
            json!([{"path": "a", "content": "1"}, {"path": "a", "oldText": "x", "newText": "y"}]),
            "/1",
            "`edits` at /1/oldText conflicts with `content` at /0/content",
        ),
    ];
    for (value, pointer, needle) in cases {
        err_at(value, pointer, needle);
    }
    // Identical repeats are harmless.
    let r = ok_value(json!({"files": [
        {"path": "a", "content": "1", "expectHash": h1}, {"path": "./a", "content": "1", "expectHash": h1},
        {"path": "b", "delete": true}, {"path": "b", "delete": true},
        {"path": "c", "moveTo": "d"}, {"path": "c", "moveTo": "./d", "edits": edit}]}));
    assert_eq!(r.files.len(), 3);
    assert_eq!(r.files[2].move_to.as_deref(), Some("d"));
}

#[test]
fn merge_key_is_lexical() {
    for (path, key) in [
        ("a.txt", "a.txt"),
        ("./a.txt", "a.txt"),
        ("src//lib.rs", "src/lib.rs"),
        ("src/x/../lib.rs", "src/lib.rs"),
        ("src/./lib.rs/", "src/lib.rs"),
        ("../a", "../a"),
        ("a/../../b", "../b"),
        ("../../a", "../../a"),
        ("/abs/./x/../y", "/abs/y"),
        ("/../a", "/a"),
        (".", "."),
        ("a/..", "."),
        ("ü/ファイル", "ü/ファイル"),
    ] {
        assert_eq!(merge_key(path), key, "{path}");
    }
}

#[test]
fn documents() {
    let r = ok(include_str!(
        "../../../testdata/requests/ok-canonical-documents.json"
    ));
    assert_eq!(r.documents[0].path, "src/lib.rs");
    assert_eq!(r.documents[0].text, "unsaved old buffer\n");
    err_at(
        json!({"files": [{"path": "a", "delete": true}], "documents": [{"path": "a", "text": ""}, {"path": "./a", "text": ""}]}),
        "/documents/1/path",
        "repeats the path of document /documents/0",
    );
    assert!(
        ok_value(json!({"files": [{"path": "a", "delete": true}], "documents": []}))
            .documents
            .is_empty()
    );
}

#[test]
fn unicode_paths_and_text_survive() {
    let r = ok(include_str!(
        "../../../testdata/requests/ok-canonical-unicode.json"
    ));
    assert_eq!(r.files[0].path, "docs/ünïcödé/ファイル.md");
    assert_eq!(r.files[0].edits[0].old_text(), "“quoted” — text");
    assert_eq!(r.files[0].edits[0].id(), Some("ü~/1"));
    let r = ok_value(
        json!({"edits": [{"path": "é/a", "oldText": "x", "newText": "y"}, {"path": "é/b/../a", "oldText": "z", "newText": "w"}]}),
    );
    assert_eq!(r.files.len(), 1);
    assert_eq!(r.files[0].path, "é/a");
}

// ---- JSON text ----

#[test]
fn malformed_json_reports_line_and_column() {
    let e = parse_json(include_str!(
        "../../../testdata/requests/err-malformed-json.json"
    ))
    .unwrap_err();
    assert!(e.message.starts_with("malformed JSON: "), "{}", e.message);
    assert!(e.message.contains("line 2 column"), "{}", e.message);
    assert_eq!((e.pointer, e.line), (None, Some(2)));
    let e = parse_json("{\"path\": \"a\"} trailing").unwrap_err();
    assert!(
        e.message.contains("trailing characters at line 1"),
        "{}",
        e.message
    );
}

#[test]
fn duplicate_keys_are_refused() {
    let e = parse_json(include_str!(
        "../../../testdata/requests/err-duplicate-key.json"
    ))
    .unwrap_err();
    assert!(
        e.message.contains("duplicate key `newText` at line 2"),
        "{}",
        e.message
    );
    assert_eq!(e.line, Some(2));
    // Equal keys in different objects are fine.
    ok(r#"{"files": [{"path": "a", "delete": true}, {"path": "b", "delete": true}]}"#);
}

#[test]
fn empty_text_bom_and_non_containers() {
    assert!(parse_json("").unwrap_err().message.contains("empty"));
    assert!(parse_json(" \n\t").unwrap_err().message.contains("empty"));
    let r = ok("\u{feff}{\"path\": \"a\", \"delete\": true}");
    assert!(r.files[0].delete);
    for text in ["42", "\"edit a\"", "null", "true"] {
        let e = parse_json(text).unwrap_err();
        assert_eq!(e.pointer.as_deref(), Some(""), "{text}");
        assert!(
            e.message.contains("must be a JSON object or array"),
            "{}",
            e.message
        );
    }
}

// ---- schema and typed structs ----

/// The request objects are read field by field (`RequestVisitor`, so that each item of the list
/// is checked as it is read): it reads exactly the fields their schemas have.
#[test]
fn request_objects_are_read_field_by_field_as_their_schemas_say() {
    let shapes = super::schema::shapes();
    for (schema, list) in [(&shapes.canonical, "files"), (&shapes.flat, "edits")] {
        let mut fields: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        fields.sort_unstable();
        let mut read = vec![list, "documents", "dryRun", "version"];
        read.sort_unstable();
        assert_eq!(fields, read);
    }
    // And every one of them is read.
    let r = ok_value(
        json!({"version": 1, "dryRun": true, "documents": [{"path": "b", "text": "x"}],
                            "files": [{"path": "a", "delete": true}]}),
    );
    assert!(r.dry_run && r.documents.len() == 1 && r.files[0].delete);
    let r = ok_value(
        json!({"edits": [{"path": "a", "oldText": "x", "newText": "y"}],
                            "version": 1, "dryRun": true, "documents": [{"path": "b", "text": "x"}]}),
    );
    assert!(r.dry_run && r.documents.len() == 1 && r.files[0].edits.len() == 1);
}

#[test]
fn schema_snapshot() {
    let schema = serde_json::to_string_pretty(&request_schema()).unwrap();
    insta::assert_snapshot!("request_schema", schema);
}

#[test]
fn schema_has_no_refs() {
    fn walk(value: &Value) {
        match value {
            Value::Object(map) => {
                assert!(
                    !map.contains_key("$ref") && !map.contains_key("$defs"),
                    "{map:?}"
                );
                map.values().for_each(walk);
            }
            Value::Array(items) => items.iter().for_each(walk),
            _ => {}
        }
    }
    walk(&request_schema());
}

fn fixtures() -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/requests");
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .map(|path| {
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                path,
            )
        })
        .collect();
    out.sort();
    out
}

/// Every `ok-*` fixture parses; every `err-*` fixture fails as `expected-errors.json` says.
#[test]
fn fixtures_match_expectations() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/requests");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected-errors.json")).unwrap())
            .unwrap();
    let mut errors = 0;
    for (name, path) in fixtures() {
        let text = std::fs::read_to_string(&path).unwrap();
        if name.starts_with("ok-") {
            ok(&text);
        } else if name.starts_with("err-") {
            let e = parse_json(&text).expect_err(&name);
            let want = &expected[&name];
            assert!(
                want.is_object(),
                "{name} missing from expected-errors.json; got {e:?}"
            );
            assert_eq!(e.message, want["message"].as_str().unwrap(), "{name}");
            assert_eq!(e.pointer.as_deref(), want["pointer"].as_str(), "{name}");
            assert_eq!(e.hint_text().as_deref(), want["hint"].as_str(), "{name}");
            errors += 1;
        }
    }
    assert_eq!(
        errors,
        expected.as_object().unwrap().len(),
        "stale entries in expected-errors.json"
    );
}

// ---- properties ----

/// JSON built from the request vocabulary, so that random values reach deep into the parser.
fn request_like() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let keys = prop::sample::select(vec![
        "files",
        "edits",
        "documents",
        "path",
        "file_path",
        "oldText",
        "old_string",
        "newText",
        "new_str",
        "replaceAll",
        "id",
        "content",
        "delete",
        "moveTo",
        "expectHash",
        "dryRun",
        "dry_run",
        "text",
        "version",
        "a/b~",
        "ü",
        "command",
        "old_str",
        "insert_line",
        "file_text",
        "view_range",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (0u8..3).prop_map(|n| json!(n)),
        prop::sample::select(vec![
            "",
            "a",
            "./a",
            "b/../a",
            "x",
            "[]",
            "sha256:",
            "insert",
            "str_replace",
            "create",
            "view"
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(keys.clone(), inner, 0..6).prop_map(|m| Value::Object(
                m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    })
}

proptest::proptest! {
    /// Every pointer the parser reports exists in the request as sent (missing fields point at
    /// their parent, which exists); stringified `edits` are the documented exception.
    #[test]
    fn pointers_always_resolve(value in request_like()) {
        let stringified = value.to_string().contains("\"edits\":\"");
        match super::from_value(&value) {
            Ok(request) => {
                for file in &request.files {
                    let p = file.pointer.as_deref().unwrap();
                    proptest::prop_assert!(value.pointer(p).is_some(), "{p}");
                    for edit in &file.edits {
                        if let Some(p) = edit.old_text_pointer() {
                            proptest::prop_assert!(stringified || value.pointer(p).is_some(), "{p}");
                        }
                    }
                }
            }
            Err(e) => {
                let p = e.pointer.as_deref().unwrap();
                proptest::prop_assert!(stringified || value.pointer(p).is_some(), "{p}: {e:?}");
            }
        }
    }

    /// Arbitrary text never panics the parser.
    #[test]
    fn any_text_is_an_answer(text in ".{0,64}") {
        let _ = parse_json(&text);
    }
}

// ---- the schema accepts what the docs and the parser accept ----

/// The JSON examples of the README's "Requests" section: one request per block, or one per line.
fn documented_requests() -> Vec<Value> {
    let readme = include_str!("../../../README.md");
    let start = readme
        .find("\n## Requests")
        .expect("README has a Requests section");
    let section = &readme[start + 1..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let mut out = Vec::new();
    for block in section.split("```json\n").skip(1) {
        // `sha256:…` stands for a file's version.
        let block = block[..block.find("```").unwrap()]
            .replace("sha256:…", &format!("sha256:{}", "0".repeat(64)));
        let block = block.as_str();
        match serde_json::from_str::<Value>(block) {
            Ok(value) => out.push(value),
            Err(_) => out.extend(
                block
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"))),
            ),
        }
    }
    out
}

fn validates(schema: &Value, instance: &Value) -> Result<(), String> {
    let validator = jsonschema::validator_for(schema).map_err(|e| e.to_string())?;
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// Every shape the README shows parses, and is valid under `redline schema request` and (when
/// it is an object, as tool arguments are) under the MCP tools' input schema.
#[test]
fn documented_shapes_are_valid_under_the_schemas() {
    let requests = documented_requests();
    assert!(requests.len() >= 6, "only {} examples", requests.len());
    let tool = super::tool_input_schema();
    for request in &requests {
        ok_value(request.clone());
        validates(&request_schema(), request).unwrap_or_else(|e| panic!("{request}: {e}"));
        if request.is_object() {
            validates(&tool, request).unwrap_or_else(|e| panic!("tool schema, {request}: {e}"));
        }
    }
}

/// Every fixture the parser accepts is valid under the request schema, except the Pi leniency
/// that the schema does not advertise (`edits` sent as a JSON string).
#[test]
fn accepted_fixtures_are_valid_under_the_schema() {
    let schema = request_schema();
    let mut seen = 0;
    for (name, path) in fixtures() {
        if !name.starts_with("ok-") || name == "ok-pi-legacy-mixed.json" {
            continue;
        }
        let value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        validates(&schema, &value).unwrap_or_else(|e| panic!("{name}: {e}"));
        seen += 1;
    }
    assert!(seen >= 12, "only {seen} fixtures");
}

/// The schema is closed where the parser is: an unknown field fails both.
#[test]
fn unknown_fields_fail_the_schema_too() {
    let schema = request_schema();
    let tool = super::tool_input_schema();
    for request in [
        json!({"files": [{"path": "a", "delete": true}], "atomic": true}),
        json!({"files": [{"path": "a", "edits": [{"oldText": "x", "newText": "y", "foo": 1}]}]}),
        json!({"path": "a", "oldText": "x", "newText": "y", "mode": 1}),
        json!({"edits": [{"path": "a", "oldText": "x", "newText": "y", "mode": 1}]}),
    ] {
        assert!(validates(&schema, &request).is_err(), "{request}");
        assert!(validates(&tool, &request).is_err(), "{request}");
        assert!(parse_json(&request.to_string()).is_err(), "{request}");
    }
}

// ---- SPEC §3a "Request details" ----

/// Pointers and messages name a field as it was sent (issue 8: `/old_string`, not `/oldText`).
#[test]
fn pointers_name_aliases_as_sent() {
    let e = err_at(
        json!({"files": [{"path": "a", "edits": [{"old_string": "", "new_string": "x"}]}]}),
        "/files/0/edits/0/old_string",
        "`old_string` is empty in /files/0/edits/0",
    );
    assert!(e.hint.is_some());
    err_at(
        json!({"files": [{"path": "a", "edits": [{"old_str": 1, "new_str": "y"}]}]}),
        "/files/0/edits/0/old_str",
        "`old_str` must be a string, found a number in /files/0/edits/0",
    );
    err_at(
        json!({"file_path": "a", "old_string": "", "new_string": "y"}),
        "/old_string",
        "`old_string` is empty in the request",
    );
    err_at(
        json!({"file_path": "a", "old_string": "x", "new_string": "y", "content": "c"}),
        "/content",
        "conflicts with `edits` at /old_string",
    );
    err_at(
        json!({"files": [{"file_path": "", "delete": true}]}),
        "/files/0/file_path",
        "`file_path` is empty in /files/0",
    );
    err_at(
        json!({"files": [{"path": "a", "delete": true, "expect_hash": "md5:x"}]}),
        "/files/0/expect_hash",
        "`expect_hash` is not a sha256 version",
    );
    err_at(
        json!({"files": [{"path": "a", "move_to": ""}]}),
        "/files/0/move_to",
        "`move_to` is empty in /files/0",
    );
    err_at(
        json!({"files": [{"path": "a", "moveTo": "b"}, {"path": "a", "move_to": "c"}]}),
        "/files/1",
        "`moveTo` at /files/1/move_to differs from `moveTo` at /files/0/moveTo",
    );
    err_at(
        json!({"edits": [{"filePath": "a", "oldString": "x", "newString": "y", "replace_all": "no"}]}),
        "/edits/0/replace_all",
        "`replace_all` must be a boolean",
    );
    err_at(
        json!({"edits": [{"path": "a", "old_text": "x", "new_string": "y", "old_str": "z"}]}),
        "/edits/0/old_str",
        "`old_text` and `old_str` are two names for one field in /edits/0",
    );
    let r = ok_value(json!({"edits": [{"file_path": "a", "old_text": " ", "new_text": "y"}]}));
    assert_eq!(
        r.files[0].edits[0].old_text_pointer(),
        Some("/edits/0/old_text")
    );
}

/// `newText` is required (it may be empty), under any of its names.
#[test]
fn new_text_is_required_and_may_be_empty() {
    for request in [
        json!({"files": [{"path": "a", "edits": [{"oldText": "x"}]}]}),
        json!({"edits": [{"path": "a", "old_string": "x"}]}),
        json!({"file_path": "a", "old_string": "x"}),
        json!([{"path": "a", "oldText": "x"}]),
    ] {
        let e = err(request.clone());
        assert!(
            e.message.contains("missing field `newText`"),
            "{request}: {e:?}"
        );
    }
    for new in ["newText", "new_string", "new_str", "new_text", "newString"] {
        let mut edit = serde_json::Map::new();
        edit.insert("oldText".into(), json!("x"));
        edit.insert(new.into(), json!(""));
        let r = ok_value(json!({"files": [{"path": "a", "edits": [edit]}]}));
        assert_eq!(r.files[0].edits[0].new_text(), "", "{new}");
    }
}

/// Of several request-level errors, the first in request order is reported, whether the later
/// one is found while reading (a type, an unknown field) or after (an empty value, a conflict).
#[test]
fn first_error_in_request_order() {
    let cases = [
        // A check made after reading an object, before a type error in a later object.
        (
            json!({"files": [{"path": "a", "edits": [{"oldText": "", "newText": "x"}]},
                             {"path": "b", "delete": "yes"}]}),
            "/files/0/edits/0/oldText",
        ),
        (
            json!({"files": [{"path": "a", "content": "1"}, {"path": "a", "delete": true},
                             {"path": "b", "delete": true, "mode": 1}]}),
            "/files/1",
        ),
        (
            json!({"files": [{"path": "a"}, {"path": "b", "edits": [{"oldText": 1, "newText": "x"}]}]}),
            "/files/0",
        ),
        (
            json!({"edits": [{"path": "a", "oldText": "", "newText": "x"},
                             {"path": "b", "oldText": "x", "newText": "y", "bad": 1}]}),
            "/edits/0/oldText",
        ),
        (
            json!([{"path": "a", "delete": false}, {"path": "b", "delete": "x"}]),
            "/0/delete",
        ),
        // A type error before a later check.
        (
            json!({"files": [{"path": "a", "delete": "yes"}, {"path": "b", "content": "1"},
                             {"path": "b", "delete": true}]}),
            "/files/0/delete",
        ),
        // Two unknown fields: the first as sent.
        (
            json!({"files": [{"path": "a", "delete": true, "zeta": 1, "alpha": 2}]}),
            "/files/0/zeta",
        ),
    ];
    for (request, pointer) in cases {
        let e = err(request.clone());
        assert_eq!(e.pointer.as_deref(), Some(pointer), "{request}: {e:?}");
    }
}

/// `expectHash` is `sha256:` and 64 hex digits, prefix and digits in any case.
#[test]
fn expect_hash_is_case_insensitive() {
    let digits = "0123456789abcdef".repeat(4);
    for hash in [
        format!("sha256:{digits}"),
        format!("SHA256:{}", digits.to_uppercase()),
        format!("Sha256:{digits}"),
    ] {
        let r = ok_value(json!({"files": [{"path": "a", "delete": true, "expectHash": hash}]}));
        assert_eq!(
            r.files[0].expect_hash,
            Some(format!("sha256:{digits}")),
            "{hash}"
        );
    }
    for bad in [
        format!("sha256 :{digits}"),
        format!("sha256:{digits}0"),
        format!("sha256:{}g", &digits[1..]),
        format!("sha-256:{digits}"),
        format!(" sha256:{digits}"),
    ] {
        err_at(
            json!({"files": [{"path": "a", "delete": true, "expectHash": bad}]}),
            "/files/0/expectHash",
            "not a sha256 version",
        );
    }
}

// ---- Anthropic's text-editor tool ----

#[test]
fn text_editor_commands_become_edits_content_and_insertions() {
    let r =
        ok_value(json!({"command": "str_replace", "path": "a.rs", "old_str": "x", "new_str": ""}));
    let e = &r.files[0].edits[0];
    assert_eq!((e.old_text(), e.new_text()), ("x", ""));
    // The pointer is kept only for the error a blank old_str gets when it is resolved.
    assert_eq!(e.old_text_pointer(), None);
    assert_eq!(e.insert_after_line(), None);
    let r = ok_value(
        json!({"command": "str_replace", "path": "a.rs", "old_str": " \t", "new_str": ""}),
    );
    assert_eq!(r.files[0].edits[0].old_text_pointer(), Some("/old_str"));
    let r =
        ok_value(json!({"command": "create", "path": "n.md", "file_text": "", "old_str": null}));
    assert_eq!(r.files[0].content.as_deref(), Some(""));
    let r = ok_value(
        json!({"command": "insert", "path": "a.rs", "insert_line": 0, "new_str": "use x;"}),
    );
    let e = &r.files[0].edits[0];
    assert_eq!((e.old_text(), e.new_text()), ("", "use x;"));
    assert_eq!(e.insert_after_line(), Some(0));
    // An array batches commands (and file objects) all or nothing; one path merges.
    let r = ok_value(json!([
        {"command": "insert", "path": "a.rs", "insert_line": 3, "new_str": "x"},
        {"command": "str_replace", "path": "./a.rs", "old_str": " ", "new_str": "z"},
        {"path": "b.rs", "delete": true}
    ]));
    assert_eq!(r.files.len(), 2);
    assert_eq!(r.files[0].edits.len(), 2);
    assert_eq!(r.files[0].edits[1].old_text_pointer(), Some("/1/old_str"));
}

#[test]
fn text_editor_errors_name_its_fields() {
    let cases = [
        (
            json!({"command": "str_replace", "path": "a", "old_str": "", "new_str": "y"}),
            "/old_str",
            "`old_str` is empty in the request",
        ),
        (
            json!({"command": "str_replace", "path": "a", "old_str": "x"}),
            "",
            "missing field `new_str`",
        ),
        (
            json!({"command": "insert", "path": "a", "new_str": "x"}),
            "",
            "missing field `insert_line`",
        ),
        (
            json!({"command": "insert", "path": "a", "insert_line": -1, "new_str": "x"}),
            "/insert_line",
            "`insert_line` must be",
        ),
        (
            json!({"command": "create", "path": "a"}),
            "",
            "missing field `file_text`",
        ),
        (
            json!({"command": "create", "path": "a", "file_text": "x", "new_str": "y"}),
            "/new_str",
            "`new_str` does not go with `command: create`",
        ),
        (
            json!({"command": "insert", "path": "a", "insert_line": 1, "new_str": "x", "view_range": [1, 2]}),
            "/view_range",
            "does not go with `command: insert`",
        ),
        (
            json!({"command": "undo_edit", "path": "a"}),
            "/command",
            "undo_edit",
        ),
        (
            json!({"command": "view", "path": "a"}),
            "/command",
            "reads a file",
        ),
        (
            json!({"command": "str_replace", "path": "a", "old_str": "x", "new_str": "y", "dryRun": true}),
            "/dryRun",
            "unknown field `dryRun`",
        ),
        (
            json!([{"path": "a", "delete": true}, {"command": "create", "path": "", "file_text": ""}]),
            "/1/path",
            "`path` is empty in /1",
        ),
    ];
    for (request, pointer, needle) in cases {
        err_at(request, pointer, needle);
    }
    let e = err(json!({"command": "view", "path": "src/a.rs", "view_range": [3, 7]}));
    assert!(
        e.hint_text()
            .unwrap()
            .contains("redline read src/a.rs --offset 3 --limit 5")
    );
}

#[test]
fn text_editor_view_is_a_read() {
    use super::{View, text_editor_view};
    assert_eq!(
        text_editor_view(&json!({"path": "a", "oldText": "x", "newText": "y"})),
        None
    );
    assert_eq!(text_editor_view(&json!({"command": "insert"})), None);
    let view = |v: Value| text_editor_view(&v).unwrap();
    assert_eq!(
        view(json!({"command": "view", "path": "a.rs"})).unwrap(),
        View {
            path: "a.rs".into(),
            offset: None,
            limit: None
        }
    );
    assert_eq!(
        view(json!({"command": "view", "path": "a.rs", "view_range": [2, -1]})).unwrap(),
        View {
            path: "a.rs".into(),
            offset: Some(2),
            limit: None
        }
    );
    assert_eq!(
        view(json!({"command": "view", "path": "a.rs", "view_range": [2, 2]})).unwrap(),
        View {
            path: "a.rs".into(),
            offset: Some(2),
            limit: Some(1)
        }
    );
    for bad in [json!([0, 3]), json!([3, 2]), json!([1]), json!([1, -2])] {
        let e = view(json!({"command": "view", "path": "a.rs", "view_range": bad})).unwrap_err();
        assert_eq!(e.pointer.as_deref(), Some("/view_range"), "{bad}");
    }
    let e = view(json!({"command": "view", "path": "a.rs", "old_str": "x"})).unwrap_err();
    assert_eq!(e.pointer.as_deref(), Some("/old_str"));
}

/// Every text-editor command is valid under both schemas.
#[test]
fn text_editor_commands_are_valid_under_the_schemas() {
    let tool = super::tool_input_schema();
    for request in [
        json!({"command": "str_replace", "path": "a", "old_str": "x", "new_str": "y"}),
        json!({"command": "insert", "path": "a", "insert_line": 0, "new_str": "y"}),
        json!({"command": "create", "path": "a", "file_text": ""}),
        json!({"command": "view", "path": "a", "view_range": [1, -1]}),
    ] {
        validates(&request_schema(), &request).unwrap_or_else(|e| panic!("{request}: {e}"));
        validates(&tool, &request).unwrap_or_else(|e| panic!("{request}: {e}"));
    }
    let batch = json!([{"command": "insert", "path": "a", "insert_line": 0, "new_str": "y"}, {"path": "b", "delete": true}]);
    validates(&request_schema(), &batch).unwrap();
}

// ---- the shape read in one pass (module `fast`) ----

/// What [`parse_json`] gives for `text` is what the two passes give, and the one pass read it
/// when `fast` says so (both after a BOM, which [`parse_json`] drops first).
fn same_as_passes(text: &str, fast: bool) {
    let bare = text.strip_prefix('\u{feff}').unwrap_or(text);
    let passes = super::parse_passes(bare);
    assert_eq!(parse_json(text), passes, "{text}");
    match super::parse_fast(bare) {
        Some(r) => assert_eq!(Ok(r), passes, "{text}"),
        None => assert!(!fast, "not read in one pass: {text}"),
    }
}

#[test]
fn the_common_shape_reads_in_one_pass_as_the_passes_read_it() {
    for text in [
        r#"{"files":[{"path":"a.rs","edits":[{"oldText":"x","newText":"y"}]}]}"#,
        "\u{feff}{\"files\":[{\"path\":\"a.rs\",\"edits\":[{\"oldText\":\"x\",\"newText\":\"y\"}]}]}",
        r#" { "dryRun" : true , "files" : [ { "edits" : [ { "newText" : "" , "oldText" : "a\"b\\c\n\u00e9\ud83d\ude00" , "replaceAll" : false , "id" : "e1" } ] , "path" : "d/ü.rs" } ] } "#,
        // Two objects for one path merge; a blank oldText keeps its pointer.
        r#"{"files":[{"path":"a","edits":[{"oldText":"x","newText":"y"}]},{"path":"./a","edits":[{"oldText":"  ","newText":"z","replaceAll":true}]}]}"#,
    ] {
        same_as_passes(text, true);
    }
    // Outside the shape, or refused by a check: the passes read it, errors and all.
    for text in [
        r#"{"files":[]}"#,
        r#"{"files":[{"path":"a","edits":[]}]}"#,
        r#"{"files":[{"path":"a","edits":[{"oldText":"","newText":"y"}]}]}"#,
        r#"{"files":[{"path":"","edits":[{"oldText":"x","newText":"y"}]}]}"#,
        r#"{"files":[{"path":"a","edits":[{"oldText":"x","newText":"y","replaceAll":null}]}]}"#,
        r#"{"files":[{"path":"a","edits":[{"oldText":"x","newText":"y","id":null}]}]}"#,
        r#"{"files":[{"path":"a","edits":[{"oldText":"x","newText":"y"}]}],"dryRun":null}"#,
        r#"{"files":[{"path":"a","edits":[{"oldText":"x","newText":"y","oldText":"z"}]}]}"#,
        r#"{"files":[{"path":"a","edits":[{"oldText":"x","newText":"y"}]}],"files":[]}"#,
        r#"{"files":[{"path":"a","path":"b","edits":[{"oldText":"x","newText":"y"}]}]}"#,
        r#"{"files":[{"path":"a","edits":[{"old_string":"x","newText":"y"}]}]}"#,
        r#"{"files":[{"file_path":"a","edits":[{"oldText":"x","newText":"y"}]}]}"#,
        r#"{"files":[{"path":"a","edits":[{"oldText":"x","newText":"y"}],"content":"c"}]}"#,
        r#"{"files":[{"path":"a","edits":[{"oldText":"x","newText":"y"}]}],"version":1}"#,
        r#"{"files":[{"path":"a","edits":[{"oldText":"x","newText":"y"}]}],"version":2}"#,
        r#"{"files":[{"path":"a","edits":[{"oldText":"x","newText":"y"}]},]}"#,
        r#"{"files":[{"path":"a","edits":[{"oldText":"x","newText":"y"}]}]} x"#,
        r#"{"files":[{"path":"a","edits":[{"oldText":"\ud800","newText":"y"}]}]}"#,
        r#"{"files":[{"path":"a","edits":[{"oldText":"x","newText":1}]}]}"#,
        r#"{"files":[{"path":"a","edits":"[{\"oldText\":\"x\",\"newText\":\"y\"}]"}]}"#,
        r#"{"files":[{"path":"a","edits":[{"oldText":"x","newText":"y"}]},{"path":"a","content":"c"}]}"#,
        r#"{"path":"a","edits":[{"oldText":"x","newText":"y"}]}"#,
        r#"[{"path":"a","edits":[{"oldText":"x","newText":"y"}]}]"#,
    ] {
        same_as_passes(text, false);
    }
}

/// Requests of the common shape with random fields, key order and texts.
fn common_shape() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let text = prop::sample::select(vec![
        "",
        " ",
        "x",
        "\n",
        "a\"b\\c",
        "\u{201C}q\u{201D}\t",
        "\r\n",
        "é",
        "  \n  ",
        "y",
    ]);
    let path = prop::sample::select(vec!["a", "./a", "b/c.rs", "", "../x", "/abs", "ü", "a\\b"]);
    /// An object from its fields, in an order of the strategy's choosing.
    fn object(fields: Vec<(&'static str, Value)>) -> impl Strategy<Value = Value> {
        Just(fields)
            .prop_shuffle()
            .prop_map(|f| Value::Object(f.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
    }
    let edit = (
        text.clone(),
        text,
        prop::option::of(any::<bool>()),
        prop::option::of(prop::sample::select(vec!["e", ""])),
    )
        .prop_flat_map(|(old, new, all, id)| {
            let mut f = vec![("oldText", json!(old)), ("newText", json!(new))];
            f.extend(all.map(|a| ("replaceAll", json!(a))));
            f.extend(id.map(|i| ("id", json!(i))));
            object(f)
        });
    let file = (path, prop::collection::vec(edit, 0..4))
        .prop_flat_map(|(p, e)| object(vec![("path", json!(p)), ("edits", Value::Array(e))]));
    (
        prop::collection::vec(file, 0..4),
        prop::option::of(any::<bool>()),
    )
        .prop_flat_map(|(files, dry)| {
            let mut f = vec![("files", Value::Array(files))];
            f.extend(dry.map(|d| ("dryRun", json!(d))));
            object(f)
        })
        .prop_map(|v| v.to_string())
}

proptest::proptest! {
    /// The one pass reads what it reads exactly as the two passes do, and a request of its
    /// shape that the passes accept is read by it.
    #[test]
    fn one_pass_reads_as_the_passes_do(text in common_shape()) {
        let passes = super::parse_passes(&text);
        let fast = super::parse_fast(&text);
        proptest::prop_assert_eq!(parse_json(&text), passes.clone());
        match fast {
            Some(r) => proptest::prop_assert_eq!(Ok(r), passes),
            None => proptest::prop_assert!(passes.is_err(), "{}", text),
        }
    }

    /// Random requests of the request vocabulary: whatever the one pass reads, the passes read
    /// the same.
    #[test]
    fn one_pass_never_differs(value in request_like()) {
        let text = value.to_string();
        if let Some(r) = super::parse_fast(&text) {
            proptest::prop_assert_eq!(Ok(r), super::parse_passes(&text));
        }
    }
}
