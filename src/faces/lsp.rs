//! The LSP form of a resolved batch (SPEC §4, `resolve --format lsp`): a `WorkspaceEdit` an
//! editor applies to its buffers.
//!
//! Own types instead of an LSP crate (background/interfaces.md §1.3): the handful of shapes
//! redline emits, serialized exactly as LSP 3.17 spells them. Text edits use "simultaneous"
//! semantics: every range refers to the original document (buffer text from `documents[]` when
//! given), ranges never overlap (overlap is an error before this point) and come in ascending
//! order. Document versions are always `null`: redline does not know the editor's versions, and a
//! stale number would make Neovim skip the edit.

use crate::engine::document::{Document, PositionEncoding};
use crate::engine::plan::{FilePlan, Op, Plan};
use crate::error::Code;
use crate::report::response::Range;
use crate::service::Run;
use serde::Serialize;
use std::path::Path;

/// What `resolve --format lsp` prints.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LspOutput {
    pub workspace_edit: WorkspaceEdit,
    /// Every error of the batch; when there is one, `documentChanges` is empty.
    pub errors: Vec<LspError>,
}

/// An LSP `WorkspaceEdit` in its `documentChanges` form.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WorkspaceEdit {
    pub document_changes: Vec<DocumentChange>,
}

/// One entry of `documentChanges`, executed in order.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum DocumentChange {
    Edit(TextDocumentEdit),
    Resource(ResourceOperation),
}

/// LSP `TextDocumentEdit`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TextDocumentEdit {
    pub text_document: VersionedDocument,
    pub edits: Vec<TextEdit>,
}

/// LSP `OptionalVersionedTextDocumentIdentifier`; the version is always `null`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub(crate) struct VersionedDocument {
    pub uri: String,
    pub version: Option<i64>,
}

/// LSP `TextEdit`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TextEdit {
    pub range: Range,
    pub new_text: String,
}

/// LSP `CreateFile`, `RenameFile` and `DeleteFile`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(
    tag = "kind",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub(crate) enum ResourceOperation {
    Create {
        uri: String,
    },
    Rename {
        old_uri: String,
        new_uri: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        options: Option<RenameOptions>,
    },
    Delete {
        uri: String,
    },
}

/// LSP `RenameFileOptions` (only `overwrite` is used: a move onto an existing file).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub(crate) struct RenameOptions {
    pub overwrite: bool,
}

/// One error, flat: a file or edit error of the batch, or the request's own error.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub(crate) struct LspError {
    pub code: Code,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The edit index within the file, for edit errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edit: Option<usize>,
    /// JSON pointer into the request, for a request error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
}

/// The LSP output of a resolve run; file URIs are `root` (absolute) joined with each path.
pub(crate) fn output(run: &Run, root: &Path, enc: PositionEncoding) -> LspOutput {
    let mut errors = Vec::new();
    match &run.response {
        Err(failure) => errors.push(LspError {
            code: failure.error.code,
            message: failure.error.message.clone(),
            path: None,
            edit: None,
            pointer: failure.error.pointer.clone(),
        }),
        Ok(resp) => errors.extend(resp.errors.iter().map(|e| LspError {
            code: e.code,
            message: e.message.clone(),
            path: Some(e.path.clone()),
            edit: e.edit,
            pointer: None,
        })),
    }
    let document_changes = match &run.plan {
        Some(plan) if errors.is_empty() => document_changes(plan, root, enc),
        _ => Vec::new(),
    };
    LspOutput {
        workspace_edit: WorkspaceEdit { document_changes },
        errors,
    }
}

/// The `documentChanges` of an error-free plan, file by file in request order.
pub(crate) fn document_changes(
    plan: &Plan,
    root: &Path,
    enc: PositionEncoding,
) -> Vec<DocumentChange> {
    let mut out = Vec::new();
    for f in &plan.files {
        let uri = file_uri(&root.join(rel_or_path(f.rel.as_deref(), &f.path)));
        match f.op {
            Op::Edit => push_edits(&mut out, &uri, text_edits(f, enc)),
            Op::Create => {
                out.push(DocumentChange::Resource(ResourceOperation::Create {
                    uri: uri.clone(),
                }));
                let content = f.content.clone().unwrap_or_default();
                if !content.is_empty() {
                    let at = crate::engine::document::Position {
                        line: 0,
                        character: 0,
                    };
                    push_edits(
                        &mut out,
                        &uri,
                        vec![TextEdit {
                            range: Range { start: at, end: at },
                            new_text: content,
                        }],
                    );
                }
            }
            Op::Overwrite => {
                if let Some(orig) = &f.original {
                    let range = whole(&orig.doc, enc);
                    let new_text = f.content.clone().unwrap_or_default();
                    push_edits(&mut out, &uri, vec![TextEdit { range, new_text }]);
                }
            }
            Op::Delete => out.push(DocumentChange::Resource(ResourceOperation::Delete { uri })),
            Op::Move => {
                push_edits(&mut out, &uri, text_edits(f, enc));
                let to = f.move_to.as_deref().unwrap_or_default();
                let new_uri = file_uri(&root.join(rel_or_path(f.move_rel.as_deref(), to)));
                let overwrite = f
                    .warnings
                    .iter()
                    .any(|w| matches!(w, crate::engine::plan::Warning::MoveOverwrites { .. }));
                out.push(DocumentChange::Resource(ResourceOperation::Rename {
                    old_uri: uri,
                    new_uri,
                    options: overwrite.then_some(RenameOptions { overwrite: true }),
                }));
            }
        }
    }
    out
}

fn rel_or_path<'a>(rel: Option<&'a Path>, path: &'a str) -> &'a Path {
    rel.unwrap_or(Path::new(path))
}

fn push_edits(out: &mut Vec<DocumentChange>, uri: &str, edits: Vec<TextEdit>) {
    if !edits.is_empty() {
        out.push(DocumentChange::Edit(TextDocumentEdit {
            text_document: VersionedDocument {
                uri: uri.to_string(),
                version: None,
            },
            edits,
        }));
    }
}

/// The text edits of a file's resolved edits, ascending, against its original text.
pub(crate) fn text_edits(f: &FilePlan, enc: PositionEncoding) -> Vec<TextEdit> {
    let Some(orig) = &f.original else {
        return Vec::new();
    };
    let mut at = orig.doc.positions(enc);
    f.pieces(&|_| true)
        .into_iter()
        .map(|(span, rep, _)| TextEdit {
            range: Range {
                start: at.at(span.start),
                end: at.at(span.end),
            },
            new_text: rep.to_string(),
        })
        .collect()
}

fn whole(doc: &Document, enc: PositionEncoding) -> Range {
    Range {
        start: doc.position(0, enc),
        end: doc.position(doc.text.len(), enc),
    }
}

/// Bytes a `file://` path keeps as they are: unreserved characters and `/` (as
/// `vim.uri_from_fname` and VS Code's `Uri.file` do); everything else is percent-encoded.
const URI_PATH: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// A `file://` URI for an absolute path. On Unix the path's own bytes are encoded, so a name
/// that is not UTF-8 keeps its identity.
pub(crate) fn file_uri(path: &Path) -> String {
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
    // Windows separators become `/`.
    #[cfg(not(unix))]
    let bytes = path.to_string_lossy().replace('\\', "/").into_bytes();
    let mut out = String::from("file://");
    if !bytes.starts_with(b"/") {
        out.push('/'); // Windows: file:///C:/…
    }
    out.extend(percent_encoding::percent_encode(&bytes, URI_PATH));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn file_uris_keep_non_utf8_names() {
        use std::os::unix::ffi::OsStrExt;
        let p = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/a\xff.rs"));
        assert_eq!(file_uri(p), "file:///tmp/a%FF.rs");
    }

    /// Decoding a URI gives back the very bytes of the path, whatever they are: every byte
    /// from 1 to 255 (a name may hold any but NUL and `/`), lone invalid UTF-8, `%` itself.
    #[test]
    #[cfg(unix)]
    fn file_uris_round_trip_any_path_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let mut names: Vec<Vec<u8>> = vec![
            b"a\xff\xfe.rs".to_vec(),
            b"%41%25".to_vec(),
            b"\xc3(".to_vec(),
            "ü 日本 e\u{301}".as_bytes().to_vec(),
        ];
        names.push((1..=255u8).filter(|b| *b != b'/').collect());
        for name in names {
            let mut path = b"/tmp/dir/".to_vec();
            path.extend_from_slice(&name);
            let uri = file_uri(Path::new(std::ffi::OsStr::from_bytes(&path)));
            assert!(uri.is_ascii(), "{uri}");
            let back: Vec<u8> =
                percent_encoding::percent_decode_str(uri.strip_prefix("file://").unwrap())
                    .collect();
            assert_eq!(back, path, "{uri}");
        }
    }

    #[test]
    fn file_uris_are_percent_encoded() {
        assert_eq!(
            file_uri(Path::new("/tmp/a b/ü.rs")),
            "file:///tmp/a%20b/%C3%BC.rs"
        );
        assert_eq!(file_uri(Path::new("/x/y-z_1.~")), "file:///x/y-z_1.~");
        assert_eq!(file_uri(Path::new("/x/a:b#c")), "file:///x/a%3Ab%23c");
    }

    #[test]
    fn resource_operations_serialize_as_lsp() {
        let op = DocumentChange::Resource(ResourceOperation::Rename {
            old_uri: "file:///a".into(),
            new_uri: "file:///b".into(),
            options: Some(RenameOptions { overwrite: true }),
        });
        assert_eq!(
            serde_json::to_value(&op).unwrap(),
            serde_json::json!({"kind": "rename", "oldUri": "file:///a", "newUri": "file:///b", "options": {"overwrite": true}})
        );
        let op = DocumentChange::Resource(ResourceOperation::Delete {
            uri: "file:///a".into(),
        });
        assert_eq!(
            serde_json::to_value(&op).unwrap(),
            serde_json::json!({"kind": "delete", "uri": "file:///a"})
        );
    }

    use crate::report::Mode;
    use crate::request::{DocumentOverride, EditSpec, FileRequest, Request};
    use crate::service::{self, Settings};

    fn edit(old: &str, new: &str) -> EditSpec {
        EditSpec::new(old, new)
    }

    fn run_in(dir: &Path, req: &Request, enc: PositionEncoding) -> serde_json::Value {
        let settings = Settings {
            root: dir.to_path_buf(),
            encoding: enc,
            ..Settings::default()
        };
        let run = service::run(req, Mode::Resolve, &settings);
        let root = std::fs::canonicalize(dir).unwrap();
        serde_json::to_value(output(&run, &root, enc)).unwrap()
    }

    #[test]
    fn ranges_count_in_the_chosen_encoding() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "日本😀 x = 1;\r\n").unwrap();
        let mut f = FileRequest::new("a.txt");
        f.edits = vec![edit("x = 1", "x = 2")];
        let req = Request {
            files: vec![f],
            ..Request::default()
        };
        // 日本 = 2 chars (6 bytes, 2 UTF-16 units), 😀 = 1 char (4 bytes, 2 units), then a space.
        for (enc, start) in [
            (PositionEncoding::Utf8, 11),
            (PositionEncoding::Utf16, 5),
            (PositionEncoding::Utf32, 4),
        ] {
            let out = run_in(dir.path(), &req, enc);
            let change = &out["workspaceEdit"]["documentChanges"][0];
            assert_eq!(out["errors"], serde_json::json!([]));
            assert!(
                change["textDocument"]["uri"]
                    .as_str()
                    .unwrap()
                    .ends_with("/a.txt")
            );
            assert_eq!(change["textDocument"]["version"], serde_json::Value::Null);
            let e = &change["edits"][0];
            assert_eq!(
                e["range"]["start"],
                serde_json::json!({"line": 0, "character": start}),
                "{enc:?}"
            );
            assert_eq!(
                e["range"]["end"],
                serde_json::json!({"line": 0, "character": start + 5}),
                "{enc:?}"
            );
            assert_eq!(e["newText"], "x = 2");
            assert_eq!(out["errors"], serde_json::json!([]));
        }
    }

    #[test]
    fn unsaved_buffers_are_resolved_against_their_text() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "old disk text\n").unwrap();
        let mut f = FileRequest::new("a.txt");
        f.edits = vec![edit("🎉b", "c")];
        let docs = vec![DocumentOverride {
            path: "a.txt".into(),
            text: "ａ\n🎉b\n".into(),
        }];
        let req = Request {
            files: vec![f],
            documents: docs,
            ..Request::default()
        };
        let out = run_in(dir.path(), &req, PositionEncoding::Utf16);
        let e = &out["workspaceEdit"]["documentChanges"][0]["edits"][0];
        assert_eq!(
            e["range"],
            serde_json::json!({"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 3}})
        );
    }

    #[test]
    fn errors_empty_the_document_changes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        std::fs::write(dir.path().join("b.txt"), "two\n").unwrap();
        let mut a = FileRequest::new("a.txt");
        a.edits = vec![edit("one", "1")];
        let mut b = FileRequest::new("b.txt");
        b.edits = vec![edit("three", "3")];
        let req = Request {
            files: vec![a, b],
            ..Request::default()
        };
        let out = run_in(dir.path(), &req, PositionEncoding::Utf16);
        assert_eq!(
            out["workspaceEdit"]["documentChanges"],
            serde_json::json!([])
        );
        assert_eq!(out["errors"][0]["code"], "not_found");
        assert_eq!(out["errors"][0]["path"], "b.txt");
        assert_eq!(out["errors"][0]["edit"], 0);
    }

    #[test]
    fn creates_deletes_and_moves_are_resource_operations() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("old.txt"), "bye\n").unwrap();
        std::fs::write(dir.path().join("m.txt"), "keep me\n").unwrap();
        let mut c = FileRequest::new("new dir/n.txt");
        c.content = Some("hi\n".into());
        let mut d = FileRequest::new("old.txt");
        d.delete = true;
        let mut m = FileRequest::new("m.txt");
        m.move_to = Some("moved.txt".into());
        m.edits = vec![edit("keep", "kept")];
        let req = Request {
            files: vec![c, d, m],
            ..Request::default()
        };
        let out = run_in(dir.path(), &req, PositionEncoding::Utf16);
        let ch = out["workspaceEdit"]["documentChanges"]
            .as_array()
            .unwrap()
            .clone();
        let kinds: Vec<&str> = ch
            .iter()
            .map(|c| c["kind"].as_str().unwrap_or("edit"))
            .collect();
        assert_eq!(
            kinds,
            ["create", "edit", "delete", "edit", "rename"],
            "{ch:#?}"
        );
        assert!(ch[0]["uri"].as_str().unwrap().ends_with("/new%20dir/n.txt"));
        assert_eq!(ch[1]["edits"][0]["newText"], "hi\n");
        assert!(ch[4]["newUri"].as_str().unwrap().ends_with("/moved.txt"));
        assert!(ch[4].get("options").is_none());
    }
}
