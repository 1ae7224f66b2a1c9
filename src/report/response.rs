//! The response JSON (SPEC §4): serde types only; built from a plan by `crate::report`.

use crate::engine::document::{Eol, Position};
/// The engine's leaf enums serialize as the wire names (one definition, no mapping to drift).
pub use crate::engine::matcher::MatchKind as Match;
pub use crate::engine::normalize::Normalization;
pub use crate::engine::plan::Op;
use crate::error::{Code, WarningCode};
use serde::Serialize;

/// Wire format version.
pub const VERSION: u32 = 1;

/// An LSP range (0-based lines; characters in the chosen position encoding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Range {
    pub start: Position,
    pub end: Position,
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    /// Written.
    Applied,
    /// Would be written (dry run, check, resolve).
    Planned,
    /// Nothing to write: the content would not change.
    Unchanged,
    /// Its own error.
    Failed,
    /// Fine, but the batch failed elsewhere, so nothing was written.
    Skipped,
}

/// What happened to an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EditStatus {
    Resolved,
    Failed,
    /// Its file failed before matching.
    Skipped,
}

/// A region of the file near a failed edit (or one of an ambiguous edit's matches).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Candidate {
    pub range: Range,
    /// Similarity with oldText in [0, 1] (not_found only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The file's text there.
    pub text: String,
}

/// An error of one file or edit.
#[derive(Debug, Clone, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorDetail {
    pub code: Code,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// not_found: up to 3 closest regions; ambiguous: every match (up to 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Candidate>,
    /// ambiguous: how many matches there are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occurrences: Option<usize>,
    /// overlap: the index of the other edit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_edit: Option<usize>,
    /// not_found: newText is already in the file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub already_applied: bool,
}

// Serialized by hand so that `candidates` is always present (possibly empty) on `not_found` and
// `ambiguous`, where callers look for it, and absent elsewhere; the serde attributes on the struct
// still name the fields for the schema.
impl Serialize for ErrorDetail {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("code", &self.code)?;
        m.serialize_entry("message", &self.message)?;
        if let Some(hint) = &self.hint {
            m.serialize_entry("hint", hint)?;
        }
        if !self.candidates.is_empty() || matches!(self.code, Code::NotFound | Code::Ambiguous) {
            m.serialize_entry("candidates", &self.candidates)?;
        }
        if let Some(n) = self.occurrences {
            m.serialize_entry("occurrences", &n)?;
        }
        if let Some(other) = self.other_edit {
            m.serialize_entry("otherEdit", &other)?;
        }
        if self.already_applied {
            m.serialize_entry("alreadyApplied", &true)?;
        }
        m.end()
    }
}

/// One edit's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditResult {
    pub index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub status: EditStatus,
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    pub match_kind: Option<Match>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub normalizations: Option<Vec<Normalization>>,
    /// How many places were replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occurrences: Option<usize>,
    /// The (first) replaced range in the original.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<Range>,
    /// Every replaced range (replaceAll).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranges: Option<Vec<Range>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
}

/// A warning about a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Warning {
    pub code: WarningCode,
    pub message: String,
}

/// One file's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileResult {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub move_to: Option<String>,
    pub op: Op,
    pub status: FileStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_after: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eol: Option<Eol>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bom: Option<bool>,
    /// Unified diff with a/ b/ headers (empty when nothing changes or the file failed).
    pub diff: String,
    pub edits: Vec<EditResult>,
    pub warnings: Vec<Warning>,
    /// The file's own error (path, read, decode, stale, write).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
}

/// One entry of the flat error list.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ErrorEntry {
    pub code: Code,
    pub path: String,
    /// The edit index within the file, for edit errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edit: Option<usize>,
    pub message: String,
    /// What the user can do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// The response to a resolved batch.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    pub version: u32,
    pub ok: bool,
    pub dry_run: bool,
    pub written: bool,
    pub files: Vec<FileResult>,
    pub errors: Vec<ErrorEntry>,
    /// After a failed write: what was rolled back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rolled_back: Option<String>,
    /// Written, but an fsync after the commit point failed: it may not survive a power loss.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub durability_unknown: bool,
    /// An earlier interrupted commit that was finished or rolled back before this batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovered: Option<String>,
}

/// The error of a request that could not be resolved at all.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RequestErrorDetail {
    pub code: Code,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// The response to a request that failed as a whole (`invalid_request`, exit 2).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RequestFailure {
    pub version: u32,
    pub ok: bool,
    pub error: RequestErrorDetail,
}

impl RequestFailure {
    pub fn new(e: &crate::request::RequestError) -> RequestFailure {
        RequestFailure {
            version: VERSION,
            ok: false,
            error: RequestErrorDetail {
                code: e.code,
                message: e.message.clone(),
                pointer: e.pointer.clone(),
                line: e.line,
                hint: e.hint.clone(),
            },
        }
    }
}
