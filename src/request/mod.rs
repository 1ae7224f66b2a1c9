//! The canonical batch request, after parsing and merging (SPEC §2).
//!
//! Every accepted input shape and dialect converts into [`Request`]; the engine sees nothing else.
//! Paths are kept as the caller wrote them; the writer resolves them beneath the root.
//! [`wire`] parses the JSON shapes; [`dialect`] parses Codex patches and SEARCH/REPLACE blocks.
use crate::offsets::Ascending;
use std::sync::Arc;

pub(crate) mod dialect;
pub(crate) mod limits;
pub(crate) mod wire;

/// One edit: replace the unique match of `old_text` with `new_text` — or, for an insertion,
/// put `new_text` after a given line.
///
/// The texts are shared, not copied, by every plan made from the request (a request may be
/// resolved twice, and a plan outlives it in `review`): a batch's texts are held once, both in
/// one allocation. What few edits have (an `id`, an insertion's line, the pointer of a blank
/// `oldText`) is boxed apart, so that an edit without them is 32 bytes besides its texts
/// (10,000 edits are held by the request and again by the plan).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditSpec {
    /// `oldText` then `newText`, as sent.
    texts: Arc<str>,
    /// Where `newText` starts in `texts`.
    split: usize,
    /// Replace every occurrence (`replaceAll`) instead of requiring a unique one.
    pub replace_all: bool,
    /// A block of a line-based dialect (SPEC §6): when `old_text` ends with a line break, that
    /// break also matches the end of a file without a final newline, whose state is kept.
    pub line_based: bool,
    /// The rarely set fields; never `Some` of all-`None` fields (equality compares them).
    rare: Option<Box<Rare>>,
}

/// The fields of an [`EditSpec`] that few edits have.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Rare {
    id: Option<String>,
    insert_after_line: Option<usize>,
    old_text_pointer: Option<String>,
}

impl EditSpec {
    /// A plain edit: replace the unique match of `old_text` with `new_text`.
    pub fn new(old_text: impl Into<String>, new_text: impl AsRef<str>) -> EditSpec {
        // oldText's own buffer takes newText (a request's texts are not held three times while
        // they are joined).
        let mut texts = old_text.into();
        let split = texts.len();
        texts.push_str(new_text.as_ref());
        EditSpec {
            texts: texts.into(),
            split,
            replace_all: false,
            line_based: false,
            rare: None,
        }
    }

    /// The text to find (`oldText`), as sent; empty only for an insertion.
    pub fn old_text(&self) -> &str {
        &self.texts[..self.split]
    }

    /// The replacement (`newText`), as sent.
    pub fn new_text(&self) -> &str {
        &self.texts[self.split..]
    }

    /// An insertion (Anthropic's text-editor `insert`): `new_text` goes in as whole lines after
    /// `after` lines of the file (0 = before the first), placed by line number, never matched.
    pub fn insertion(after: usize, new_text: impl AsRef<str>) -> EditSpec {
        let mut e = EditSpec::new("", new_text);
        e.rare().insert_after_line = Some(after);
        e
    }

    /// The caller's label for the edit (`id`), echoed in the response.
    pub fn id(&self) -> Option<&str> {
        self.rare.as_ref()?.id.as_deref()
    }

    /// Sets the caller's label (`None` leaves the edit without one).
    #[must_use]
    pub fn with_id(mut self, id: Option<String>) -> EditSpec {
        if id.is_some() {
            self.rare().id = id;
        }
        self
    }

    /// For an insertion, how many lines of the file `new_text` goes after (`old_text` is
    /// empty).
    pub fn insert_after_line(&self) -> Option<usize> {
        self.rare.as_ref()?.insert_after_line
    }

    /// JSON pointer of `oldText` as sent (under whichever alias), kept only when it came from
    /// JSON and `old_text` is blank under N(·): the one error found after parsing that points
    /// into the request (`plan::check_request`). Kept for every edit, it cost an allocation of
    /// ~60 bytes per edit (10,000 edits: 0.6 MB of the request).
    pub fn old_text_pointer(&self) -> Option<&str> {
        self.rare.as_ref()?.old_text_pointer.as_deref()
    }

    /// Sets the pointer of a blank `oldText` (`None` leaves the edit without one).
    #[must_use]
    pub(crate) fn with_old_text_pointer(mut self, pointer: Option<String>) -> EditSpec {
        if pointer.is_some() {
            self.rare().old_text_pointer = pointer;
        }
        self
    }

    fn rare(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Box::default)
    }
}

/// What the batch does to one path. Objects for the same path are merged into one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRequest {
    /// The path as the caller wrote it (first object that named it).
    pub path: String,
    /// Edits in request order; their index is their position here.
    pub edits: Vec<EditSpec>,
    /// Whole new content (create or overwrite).
    pub content: Option<String>,
    /// `delete: true`: the file is deleted (combined with nothing else).
    pub delete: bool,
    /// Where the file is renamed to (`moveTo`), as the caller wrote it.
    pub move_to: Option<String>,
    /// `sha256:<hex>` the file must still have.
    pub expect_hash: Option<String>,
    /// Codex patch chunks, located by the patch rules (SPEC §6) instead of as edits.
    pub chunks: Vec<PatchChunk>,
    /// JSON pointer of the (first) file object in the request as sent, if it came from JSON.
    pub pointer: Option<String>,
    /// JSON pointer of `moveTo` as sent (under whichever alias), if it came from JSON.
    pub move_to_pointer: Option<String>,
}

impl FileRequest {
    /// A request for `path` that does nothing yet.
    pub fn new(path: impl Into<String>) -> Self {
        FileRequest {
            path: path.into(),
            edits: Vec::new(),
            content: None,
            delete: false,
            move_to: None,
            expect_hash: None,
            chunks: Vec::new(),
            pointer: None,
            move_to_pointer: None,
        }
    }
}

/// One `@@` chunk of a Codex `*** Update File` hunk, lines without their `+`/`-`/` ` prefix.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PatchChunk {
    /// `@@ anchor` lines, outermost first; each is located forward before the chunk.
    pub anchors: Vec<String>,
    /// Context and removed lines, in order.
    pub old_lines: PatchLines,
    /// Context and added lines, in order.
    pub new_lines: PatchLines,
    /// `*** End of File`: the chunk must match at the end of the file.
    pub end_of_file: bool,
    /// 1-based line of the chunk in the patch text, for messages.
    pub line: usize,
}

/// The lines of one side of a chunk, kept as one text (the lines joined by `\n`) and where
/// each ends: about two bytes a line beyond its text ([`Ascending`]), where a `String` per line
/// cost about 56 (a patch of many short lines took 60 times its size).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PatchLines {
    /// The lines, each but the last followed by `\n`.
    text: String,
    /// Where each line ends in `text`.
    ends: Ascending,
}

impl PatchLines {
    /// Where line `i` ends in `text` (panics past the end, as indexing a slice does).
    fn end(&self, i: usize) -> usize {
        match self.ends.get(i) {
            Some(e) => e as usize,
            None => panic!("line {i} of {}", self.ends.len()),
        }
    }

    /// Appends a line (without its line break).
    pub fn push(&mut self, line: &str) {
        if !self.ends.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(line);
        self.ends.push(self.text.len() as u32);
    }

    /// How many lines.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// No lines at all.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Line `i` (panics past the end, as indexing a slice does).
    #[must_use]
    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.end(i - 1) + 1 };
        &self.text[start..self.end(i)]
    }

    /// The lines in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + DoubleEndedIterator + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The first `n` lines joined by `\n` (`n` at most [`PatchLines::len`]).
    #[must_use]
    pub fn joined(&self, n: usize) -> &str {
        match n {
            0 => "",
            n => &self.text[..self.end(n - 1)],
        }
    }

    /// Every line joined by `\n`.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Gives back what the lists grew beyond their lines.
    pub fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
    }
}

/// Line `i`, as [`PatchLines::get`] (so that lines can be diffed in place).
impl std::ops::Index<usize> for PatchLines {
    type Output = str;

    fn index(&self, i: usize) -> &str {
        self.get(i)
    }
}

impl<S: AsRef<str>> From<&[S]> for PatchLines {
    fn from(lines: &[S]) -> PatchLines {
        let mut out = PatchLines::default();
        for l in lines {
            out.push(l.as_ref());
        }
        out
    }
}

impl<S: AsRef<str>> PartialEq<Vec<S>> for PatchLines {
    fn eq(&self, other: &Vec<S>) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == b.as_ref())
    }
}

/// An unsaved editor buffer that replaces the disk content for matching (resolve/filter only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentOverride {
    /// The path as the caller wrote it.
    pub path: String,
    /// The buffer's whole text.
    pub text: String,
}

/// A whole batch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Request {
    /// One entry per path, merged, in order of first mention.
    pub files: Vec<FileRequest>,
    /// Unsaved buffers (`documents`) that replace disk content for matching.
    pub documents: Vec<DocumentOverride>,
    /// `dryRun: true` was set in the request itself.
    pub dry_run: bool,
}

/// A request that cannot be turned into a batch: always `invalid_request`, exit 2 (SPEC §5).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RequestError {
    /// `invalid_request`, or `too_large` for a request over a limit.
    pub code: crate::error::Code,
    /// Human-readable explanation.
    pub message: String,
    /// JSON pointer into the request as sent (a missing field points at its parent).
    pub pointer: Option<String>,
    /// 1-based line in a text dialect (Codex patch, SEARCH/REPLACE), when known.
    pub line: Option<usize>,
    /// What to do about it ([`RequestError::hint_text`] says it as the command line does; each
    /// face words it with its own names for redline's commands).
    pub(crate) hint: Option<Hint>,
}

/// What to do about a request error: plain text, or advice that names one of redline's commands,
/// which each face names its own way (the command line's `redline read`, MCP's `read_file`), so
/// it is worded where it is shown (`report::message::request_hint`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Hint {
    /// Said as it is.
    Text(String),
    /// A text-editor `view` command sent to a command that only edits: read the file with the
    /// face's read command; `args` are the path and the range flags.
    ReadInstead { args: String },
    /// An `expectHash` that is not a version: use the one the read command prints.
    VersionFromRead,
    /// `documents` sent to a command that does not take them: drop them, or preview instead.
    DocumentsOnlyToPreview,
}

impl RequestError {
    /// An `invalid_request` error with `message`.
    pub fn new(message: impl Into<String>) -> RequestError {
        RequestError {
            code: crate::error::Code::InvalidRequest,
            message: message.into(),
            pointer: None,
            line: None,
            hint: None,
        }
    }

    /// A request over one of the limits (`too_large`).
    pub fn too_large(message: impl Into<String>) -> RequestError {
        RequestError {
            code: crate::error::Code::TooLarge,
            ..RequestError::new(message)
        }
    }

    /// Sets the JSON pointer into the request as sent.
    pub fn at(mut self, pointer: impl Into<String>) -> RequestError {
        self.pointer = Some(pointer.into());
        self
    }

    /// Sets the 1-based line in a text dialect.
    pub fn at_line(mut self, line: usize) -> RequestError {
        self.line = Some(line);
        self
    }

    /// Sets what to do about it.
    pub fn hint(mut self, hint: impl Into<String>) -> RequestError {
        self.hint = Some(Hint::Text(hint.into()));
        self
    }

    /// Sets advice that names one of redline's commands (worded by the face that shows it).
    pub(crate) fn hint_naming(mut self, hint: Hint) -> RequestError {
        self.hint = Some(hint);
        self
    }
}

/// A request given as a JSON value, as `serve` and `mcp` receive it: an object or an array is a
/// JSON request in any accepted shape (§2), a string is request text in any dialect (JSON, Codex
/// patch, SEARCH/REPLACE). `None` for any other JSON type.
pub(crate) fn from_json(value: &serde_json::Value) -> Option<Result<Request, RequestError>> {
    use serde_json::Value;
    match value {
        Value::Object(_) | Value::Array(_) => Some(wire::from_value(value)),
        Value::String(text) => Some(dialect::parse(
            text,
            dialect::InputKind::Auto,
            wire::parse_json,
        )),
        _ => None,
    }
}
