//! The response JSON (SPEC §4): serde types only; built from a plan by `crate::report`.

pub use crate::engine::document::{Eol, Position};
/// The engine's leaf enums serialize as the wire names (one definition, no mapping to drift).
pub use crate::engine::matcher::MatchKind as Match;
pub use crate::engine::normalize::Normalization;
pub use crate::engine::plan::Op;
use crate::error::{Code, WarningCode};
use crate::report::Source;
use serde::Serialize;
use serde::ser::SerializeSeq as _;
use std::sync::Arc;

/// Wire format version.
pub const VERSION: u32 = 1;

/// An LSP range (0-based lines; characters in the chosen position encoding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Range {
    /// Inclusive start.
    pub start: Position,
    /// Exclusive end.
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
    /// Located; applied with the batch.
    Resolved,
    /// Its own error.
    Failed,
    /// Its file failed before matching.
    Skipped,
}

/// A region of the file near a failed edit (or one of an ambiguous edit's matches).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Candidate {
    /// The region, as an LSP range.
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
    /// Stable error code.
    pub code: Code,
    /// What went wrong.
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// not_found: up to 3 closest regions; ambiguous: every match (up to 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Candidate>,
    /// ambiguous: how many matches there are; absent when there are too many to count (more
    /// than the 20 listed, in a highly repetitive file).
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
    /// 0-based index in the file's `edits`.
    pub index: usize,
    /// The edit's `id` as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Whether the edit resolved.
    pub status: EditStatus,
    /// Which tier matched (resolved only).
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    pub match_kind: Option<Match>,
    /// What a non-exact match had to fold or relax.
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
    /// The edit's error (failed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
}

/// Every edit's outcome of one file, in request order, as a list of [`EditResult`]s that are
/// made from the plan one at a time, each time the list is read or serialized: a response holds
/// no words or positions per edit, so a batch of many failed edits is written without being
/// built whole first. Serializes as the JSON array of its results.
#[derive(Clone, Default)]
pub struct EditResults {
    from: Option<(Arc<Source>, usize)>,
}

impl EditResults {
    /// The results of file `file` of the plan `from` holds.
    pub(crate) fn new(from: Arc<Source>, file: usize) -> EditResults {
        EditResults {
            from: Some((from, file)),
        }
    }

    /// How many edits there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.from.as_ref().map_or(0, |(s, file)| s.edits_of(*file))
    }

    /// Whether there are no edits.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The outcome of the edit at position `i`.
    #[must_use]
    pub fn get(&self, i: usize) -> Option<EditResult> {
        let (s, file) = self.from.as_ref()?;
        (i < s.edits_of(*file)).then(|| s.edit_result(*file, i))
    }

    /// The outcomes in request order.
    pub fn iter(&self) -> EditResultsIter<'_> {
        EditResultsIter {
            results: self,
            next: 0,
            end: self.len(),
        }
    }
}

/// The outcomes of an [`EditResults`], made one at a time.
#[derive(Debug, Clone)]
pub struct EditResultsIter<'a> {
    results: &'a EditResults,
    next: usize,
    end: usize,
}

impl Iterator for EditResultsIter<'_> {
    type Item = EditResult;

    fn next(&mut self) -> Option<EditResult> {
        if self.next >= self.end {
            return None;
        }
        self.next += 1;
        self.results.get(self.next - 1)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for EditResultsIter<'_> {}

impl<'a> IntoIterator for &'a EditResults {
    type Item = EditResult;
    type IntoIter = EditResultsIter<'a>;

    fn into_iter(self) -> EditResultsIter<'a> {
        self.iter()
    }
}

impl Serialize for EditResults {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for r in self {
            seq.serialize_element(&r)?;
        }
        seq.end()
    }
}

impl std::fmt::Debug for EditResults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self).finish()
    }
}

impl PartialEq for EditResults {
    fn eq(&self, other: &EditResults) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// The flat error list of a response, in order: each file's edit errors then its own error,
/// then the errors that name no file of the request. The edits' entries are made from the plan
/// each time the list is read or serialized (see [`EditResults`]). Serializes as the JSON array
/// of its entries.
#[derive(Clone, Default)]
pub struct Errors {
    from: Option<Arc<Source>>,
    /// Per file of the plan, its own error.
    files: Vec<Option<ErrorEntry>>,
    /// After the files'.
    rest: Vec<ErrorEntry>,
}

impl Errors {
    /// The errors of the plan `from` holds, with `files[k]` the error of its file `k`.
    pub(crate) fn new(from: Arc<Source>, files: Vec<Option<ErrorEntry>>) -> Errors {
        Errors {
            from: Some(from),
            files,
            rest: Vec::new(),
        }
    }

    /// Adds an entry at the end.
    pub fn push(&mut self, e: ErrorEntry) {
        self.rest.push(e);
    }

    /// How many entries there are.
    #[must_use]
    pub fn len(&self) -> usize {
        let edits: usize = self.from.as_ref().map_or(0, |s| {
            (0..self.files.len())
                .map(|f| (0..s.edits_of(f)).filter(|&k| s.failed(f, k)).count())
                .sum()
        });
        edits + self.files.iter().flatten().count() + self.rest.len()
    }

    /// Whether there are no entries.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// The entries in order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = ErrorEntry> + '_> {
        let files = (0..self.files.len()).flat_map(move |f| {
            let edits = self
                .from
                .iter()
                .flat_map(move |s| (0..s.edits_of(f)).filter_map(move |k| s.edit_error(f, k)));
            edits.chain(self.files[f].iter().cloned())
        });
        Box::new(files.chain(self.rest.iter().cloned()))
    }
}

impl<'a> IntoIterator for &'a Errors {
    type Item = ErrorEntry;
    type IntoIter = Box<dyn Iterator<Item = ErrorEntry> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl From<Vec<ErrorEntry>> for Errors {
    fn from(rest: Vec<ErrorEntry>) -> Errors {
        Errors {
            from: None,
            files: Vec::new(),
            rest,
        }
    }
}

impl Serialize for Errors {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for e in self {
            seq.serialize_element(&e)?;
        }
        seq.end()
    }
}

impl std::fmt::Debug for Errors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self).finish()
    }
}

impl PartialEq for Errors {
    fn eq(&self, other: &Errors) -> bool {
        self.iter().eq(other.iter())
    }
}

/// A file's unified diff with `a/` `b/` headers (empty when nothing changes or the file failed),
/// made from the plan and the file's new text each time it is read or serialized, a hunk at a
/// time: a response holds no diff text, so a diff is written without being built whole first
/// (10,000 one-line edits of a 12 MB file were 6 MB of diff and hunks, built next to both
/// texts). A diff rendered ahead, while the writer waited for the disk, is held as text.
/// Serializes as a JSON string; [`Diff::to_string`] gives the text.
#[derive(Clone, Default)]
pub struct Diff {
    from: Option<(Arc<Source>, usize, Option<Arc<String>>)>,
    /// The whole diff, rendered ahead ([`crate::report::render_diffs`]).
    text: Option<Arc<String>>,
}

impl Diff {
    /// The diff of file `file` of the plan `from` holds, whose new text is `new` when the plan
    /// does not hold it.
    pub(crate) fn new(from: Arc<Source>, file: usize, new: Option<String>) -> Diff {
        Diff {
            from: Some((from, file, new.map(Arc::new))),
            text: None,
        }
    }

    /// A diff rendered ahead: `text` is what [`Diff::new`] would write.
    pub(crate) fn rendered(text: String) -> Diff {
        Diff {
            from: None,
            text: Some(Arc::new(text)),
        }
    }

    /// Writes the diff to `out` as it is made.
    pub fn write_to(&self, out: &mut impl std::fmt::Write) -> std::fmt::Result {
        if let Some(text) = &self.text {
            return out.write_str(text);
        }
        match &self.from {
            Some((source, file, new)) => {
                source.write_diff(*file, new.as_deref().map(String::as_str), out)
            }
            None => Ok(()),
        }
    }

    /// Whether the diff is empty (made only as far as its first byte).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        /// Fails at the first byte written to it.
        struct FirstByte;
        impl std::fmt::Write for FirstByte {
            fn write_str(&mut self, s: &str) -> std::fmt::Result {
                if s.is_empty() {
                    Ok(())
                } else {
                    Err(std::fmt::Error)
                }
            }
        }
        self.write_to(&mut FirstByte).is_ok()
    }
}

/// The diff's text.
impl std::fmt::Display for Diff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Passed on in pieces of up to 16 KiB rather than a line's few pieces at a time: a
        // serializer escapes each piece it is given in one call.
        let mut out = Pieces {
            to: f,
            buf: String::with_capacity(PIECE),
        };
        self.write_to(&mut out)?;
        out.flush()
    }
}

/// The most a [`Pieces`] holds before it passes its text on.
const PIECE: usize = 16 * 1024;

/// Text written to `to` in pieces of up to [`PIECE`] bytes (a larger string at once).
struct Pieces<'f, W: std::fmt::Write> {
    to: &'f mut W,
    buf: String,
}

impl<W: std::fmt::Write> Pieces<'_, W> {
    fn flush(&mut self) -> std::fmt::Result {
        if !self.buf.is_empty() {
            self.to.write_str(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}

impl<W: std::fmt::Write> std::fmt::Write for Pieces<'_, W> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.buf.len() + s.len() > PIECE {
            self.flush()?;
            if s.len() > PIECE {
                return self.to.write_str(s);
            }
        }
        self.buf.push_str(s);
        Ok(())
    }
}

impl Serialize for Diff {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // serde_json escapes each piece as it comes, never holding the whole string.
        s.collect_str(self)
    }
}

impl std::fmt::Debug for Diff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.to_string(), f)
    }
}

impl PartialEq for Diff {
    fn eq(&self, other: &Diff) -> bool {
        self.to_string() == other.to_string()
    }
}

/// A warning about a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Warning {
    /// Stable warning code.
    pub code: WarningCode,
    /// Human-readable explanation.
    pub message: String,
}

/// One file's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileResult {
    /// The path as sent.
    pub path: String,
    /// The move's destination as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub move_to: Option<String>,
    /// What the request does to the file.
    pub op: Op,
    /// What happened to the file.
    pub status: FileStatus,
    /// `sha256:<hex>` of the file as read (absent for a create or when unread).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_before: Option<String>,
    /// `sha256:<hex>` of the new content (absent for a delete or a failure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_after: Option<String>,
    /// The file's dominant line ending, kept by edits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eol: Option<Eol>,
    /// The file starts with a UTF-8 BOM (kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bom: Option<bool>,
    /// Unified diff with a/ b/ headers (empty when nothing changes or the file failed).
    #[schemars(with = "String")]
    pub diff: Diff,
    /// Every edit's outcome, in request order.
    #[schemars(with = "Vec<EditResult>")]
    pub edits: EditResults,
    /// Non-fatal notes about the file.
    pub warnings: Vec<Warning>,
    /// The file's own error (path, read, decode, stale, write).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
}

/// One entry of the flat error list.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ErrorEntry {
    /// Stable error code.
    pub code: Code,
    /// The path as sent.
    pub path: String,
    /// The edit index within the file, for edit errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edit: Option<usize>,
    /// What went wrong.
    pub message: String,
    /// What the user can do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// The response to a resolved batch.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    /// Wire format version (1).
    pub version: u32,
    /// No error anywhere in the batch.
    pub ok: bool,
    /// Nothing was meant to be written (dry run, check, resolve).
    pub dry_run: bool,
    /// The batch was committed to disk.
    pub written: bool,
    /// One result per file, in request order.
    pub files: Vec<FileResult>,
    /// Every error of the batch, in one flat list.
    #[schemars(with = "Vec<ErrorEntry>")]
    pub errors: Errors,
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
    /// Stable error code (`invalid_request` or `too_large`).
    pub code: Code,
    /// What is wrong with the request.
    pub message: String,
    /// JSON pointer into the request as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// 1-based line in a text dialect (patch, SEARCH/REPLACE).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// The response to a request that failed as a whole (`invalid_request`, exit 2).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RequestFailure {
    /// Wire format version (1).
    pub version: u32,
    /// Always false.
    pub ok: bool,
    /// Why the request was refused.
    pub error: RequestErrorDetail,
}

impl RequestFailure {
    /// The failure response for a request error.
    pub fn new(e: &crate::request::RequestError) -> RequestFailure {
        RequestFailure::worded(e, crate::report::message::Vocabulary::Cli)
    }

    /// [`RequestFailure::new`], its hint naming redline's commands as `vocabulary` does.
    pub(crate) fn worded(
        e: &crate::request::RequestError,
        vocabulary: crate::report::message::Vocabulary,
    ) -> RequestFailure {
        RequestFailure {
            version: VERSION,
            ok: false,
            error: RequestErrorDetail {
                code: e.code,
                message: e.message.clone(),
                pointer: e.pointer.clone(),
                line: e.line,
                hint: crate::report::message::request_hint(e, vocabulary),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::report::Mode;
    use crate::service::{self, Settings};

    /// A diff made a hunk at a time and escaped a piece at a time is the JSON string of the
    /// whole diff text, byte for byte (quotes, backslashes, tabs, control characters and
    /// non-ASCII text, over many 16 KiB pieces), in both of serde_json's layouts; and what it
    /// says about itself (`is_empty`, `to_string`) agrees.
    #[test]
    fn a_streamed_diff_is_the_json_string_of_its_text() {
        let dir = tempfile::tempdir().unwrap();
        let line = |i: usize| format!("let s{i} = \"q\\\\ \t\u{1}\u{7f} é 日本 {i}\";\n");
        let text: String = (0..3000).map(line).collect();
        std::fs::write(dir.path().join("f.rs"), &text).unwrap();
        let edits: Vec<serde_json::Value> = (0..3000)
            .step_by(7)
            .map(|i| serde_json::json!({"oldText": line(i), "newText": format!("// {i} \"x\"\n")}))
            .collect();
        let req = serde_json::json!({"files": [
            {"path": "f.rs", "edits": edits},
            {"path": "new.txt", "content": "a\tb\n"},
        ]});
        let req = crate::request::wire::parse_json(&req.to_string()).unwrap();
        let settings = Settings {
            root: dir.path().to_path_buf(),
            ..Settings::default()
        };
        let done = service::run(&req, Mode::DryRun, &settings);
        let resp = done.response.as_ref().unwrap();
        assert!(resp.ok);
        for f in &resp.files {
            let whole = f.diff.to_string();
            assert!(!whole.is_empty() && !f.diff.is_empty());
            assert_eq!(
                serde_json::to_string(&f.diff).unwrap(),
                serde_json::to_string(&whole).unwrap()
            );
            assert_eq!(
                serde_json::to_string_pretty(&f.diff).unwrap(),
                serde_json::to_string_pretty(&whole).unwrap()
            );
        }
        assert!(resp.files[0].diff.to_string().len() > 4 * super::PIECE);
        // The response as a whole: the diff's member is the string's.
        let value = serde_json::to_value(resp).unwrap();
        let streamed: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(resp).unwrap()).unwrap();
        assert_eq!(value, streamed);
        assert_eq!(value["files"][0]["diff"], resp.files[0].diff.to_string());
        // Nothing to change: an empty diff.
        std::fs::write(dir.path().join("f.rs"), "x\n").unwrap();
        let same = serde_json::json!({"files": [{"path": "f.rs", "content": "x\n"}]});
        let req = crate::request::wire::parse_json(&same.to_string()).unwrap();
        let done = service::run(&req, Mode::DryRun, &settings);
        let resp = done.response.as_ref().unwrap();
        assert!(resp.files[0].diff.is_empty());
        assert_eq!(resp.files[0].diff.to_string(), "");
        assert_eq!(serde_json::to_string(&resp.files[0].diff).unwrap(), "\"\"");
    }
}
