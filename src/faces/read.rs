//! Reading a window of a file's lines with its version, for agents that later send
//! `expectHash` (`redline read`, the `read` method of `serve`, the MCP `read_file` tool).

use crate::engine::document::Document;
use crate::error::Code;
use crate::service::{self, Settings};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which lines of which file to read (`read_file` tool, `read` method of serve).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadParams {
    /// Path of the file, relative to the root (or absolute inside it).
    #[serde(alias = "file_path")]
    #[schemars(length(min = 1))]
    pub path: String,
    /// 1-based number of the first line to return (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32", range(min = 1))]
    pub offset: Option<u32>,
    /// How many lines to return (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32", range(min = 1))]
    pub limit: Option<u32>,
}
/// A window of a file's lines and the file's version, as `read` returns it (the shape of
/// `redline read --format json`, plus `ok`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileLines {
    pub ok: bool,
    pub path: String,
    /// `sha256:` of the whole file, for `expectHash`.
    pub version: String,
    pub total_lines: usize,
    /// 1-based number of the first line asked for.
    pub offset: usize,
    pub lines: Vec<Line>,
    pub eol: crate::engine::document::Eol,
    pub bom: bool,
}

/// One line, without its line ending.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Line {
    /// 1-based.
    pub line: usize,
    pub text: String,
}

impl FileLines {
    /// The lines numbered like `cat -n`, then a footer with the version (as `redline read`).
    pub(crate) fn numbered(&self) -> String {
        let mut out = String::new();
        for l in &self.lines {
            out.push_str(&format!("{:>6}\t{}\n", l.line, l.text));
        }
        let shown = match (self.lines.first(), self.lines.last()) {
            (Some(a), Some(b)) => format!("lines {}-{} of {}", a.line, b.line, self.total_lines),
            _ => format!("no lines shown of {}", self.total_lines),
        };
        out.push_str(&format!(
            "[{} · {shown} · version {}]\n",
            self.path, self.version
        ));
        out
    }
}

// Claude Code hands the model a result's `structuredContent` alone when there is one, other
// clients the text content: with the lines as one string in both, each reads them once, at
// little over the text's size (an object per line cost 1.46x).
/// What `read_file` returns as `structuredContent`: the file's metadata and the numbered lines
/// as one string (the same as the text content).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReadSummary {
    pub ok: bool,
    pub path: String,
    /// `sha256:` of the whole file, for `expectHash`.
    pub version: String,
    pub total_lines: usize,
    /// 1-based number of the first line shown.
    pub offset: usize,
    /// How many lines the text content shows.
    pub shown_lines: usize,
    pub eol: crate::engine::document::Eol,
    pub bom: bool,
    /// The lines numbered like `cat -n` (a tab after the number), then a footer with the
    /// version: the text content.
    pub text: String,
}

impl FileLines {
    pub(crate) fn summary(&self) -> ReadSummary {
        ReadSummary {
            ok: self.ok,
            path: self.path.clone(),
            version: self.version.clone(),
            total_lines: self.total_lines,
            offset: self.offset,
            shown_lines: self.lines.len(),
            eol: self.eol,
            bom: self.bom,
            text: self.numbered(),
        }
    }
}

/// A read that failed, as the tools return it: `{"version": 1, "ok": false, "error": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub(crate) struct ReadFailure {
    pub version: u32,
    pub ok: bool,
    pub error: ReadError,
}

impl ReadFailure {
    pub(crate) fn new(error: ReadError) -> ReadFailure {
        ReadFailure {
            version: crate::report::response::VERSION,
            ok: false,
            error,
        }
    }
}

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub(crate) struct ReadError {
    pub code: Code,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Reads lines `offset..offset+limit` (1-based) of a file beneath the root.
pub(crate) fn read(p: &ReadParams, settings: &Settings) -> Result<FileLines, ReadError> {
    let root = service::open_root(settings).map_err(|e| ReadError {
        code: Code::InvalidRequest,
        hint: e.hint_text(),
        message: e.message,
    })?;
    let snap = root.read(&p.path).map_err(|e| ReadError {
        code: e.code(),
        message: e.to_string(),
        hint: e.hint().map(str::to_string),
    })?;
    let version = snap.fingerprint.version.clone();
    let doc = Document::decode(snap.bytes).map_err(|e| ReadError {
        code: e.code(),
        message: format!("{}: {e}", p.path),
        hint: Some("redline reads and edits UTF-8 text files only".into()),
    })?;
    let total = if doc.text.is_empty() {
        0
    } else {
        doc.line_count() - usize::from(doc.final_newline())
    };
    let offset = p.offset.unwrap_or(1).max(1) as usize;
    let limit = p.limit.map_or(usize::MAX, |l| l as usize);
    let lines = (offset - 1..total)
        .take(limit)
        .map(|l| Line {
            line: l + 1,
            text: doc.text[doc.line_start(l)..doc.line_content_end(l)].to_string(),
        })
        .collect();
    Ok(FileLines {
        ok: true,
        path: p.path.clone(),
        version,
        total_lines: total,
        offset,
        lines,
        eol: doc.eol,
        bom: doc.bom,
    })
}

/// The `read` params of a text-editor `view` command, when `params` is one.
pub(crate) fn view_params(
    params: &serde_json::Value,
) -> Option<Result<ReadParams, crate::request::RequestError>> {
    let view = crate::request::wire::text_editor_view(params)?;
    let too_big = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Some(view.map(|v| ReadParams {
        path: v.path,
        offset: v.offset.map(too_big),
        limit: v.limit.map(too_big),
    }))
}
