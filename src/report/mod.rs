//! Turning a plan (and what the writer did with it) into the response of SPEC §4.

pub(crate) mod message;
pub mod response;

use crate::engine::diff;
use crate::engine::document::{Document, PositionEncoding};
use crate::engine::matcher::UNCOUNTED;
use crate::engine::plan::{EditError, FilePlan, Op, Outcome, Plan, Resolution};
use crate::error::Code;
use crate::report::response as wire;
use crate::write::FsError;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

/// How the batch was run, for statuses and flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Resolve and write.
    Apply,
    /// Resolve and print, never write (`--dry-run`, request `dryRun`).
    DryRun,
    /// Only the exit code (`--check`).
    Check,
    /// Resolve for an editor (`resolve`).
    Resolve,
}

impl Mode {
    /// Whether this mode writes to disk (only `Apply`).
    pub fn writes(self) -> bool {
        self == Mode::Apply
    }
}

/// What the writer did.
#[derive(Debug, Clone, Default)]
pub(crate) struct WriteOutcome {
    /// The batch was committed to disk.
    pub written: bool,
    /// A commit failure (the writer's error names the path it was about).
    pub failure: Option<FsError>,
    /// What was rolled back after a commit failure.
    pub rolled_back: Option<crate::write::RolledBack>,
    /// Warnings the writer added, per request path.
    pub warnings: Vec<crate::write::CommitWarning>,
    /// Committed, but durability is unknown (an fsync after the commit point failed).
    pub durability_unknown: bool,
    /// What recovery found and did before this batch, when it did anything.
    pub recovered: Option<crate::write::RecoveryReport>,
}

/// A file path as diffs show it: relative to the root, `/`-separated (a `\\` is a separator only
/// where the OS says so; on Unix it is part of a name).
pub(crate) fn display_path(rel: Option<&std::path::PathBuf>, fallback: &str) -> String {
    match rel {
        Some(r) => r
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        None => fallback.to_string(),
    }
}

fn range(doc: &Document, span: &Range<usize>, enc: PositionEncoding) -> wire::Range {
    wire::Range {
        start: doc.position(span.start, enc),
        end: doc.position(span.end, enc),
    }
}

/// The range a resolved edit's result shows: that of its first span.
fn first_range(doc: &Document, res: &Resolution, enc: PositionEncoding) -> Option<wire::Range> {
    res.spans.first().map(|s| range(doc, s, enc))
}

/// The error detail of a file that failed as a whole (no places in it to show).
pub(crate) fn file_detail(code: Code, said: message::Said) -> wire::ErrorDetail {
    wire::ErrorDetail {
        code,
        message: said.message,
        hint: said.hint,
        candidates: Vec::new(),
        occurrences: None,
        other_edit: None,
        already_applied: false,
    }
}

/// The error detail of a failed edit, with what is said about it; positions need the document.
pub(crate) fn edit_detail(
    e: &EditError,
    said: message::Said,
    doc: Option<&Document>,
    enc: PositionEncoding,
) -> wire::ErrorDetail {
    wire::ErrorDetail {
        code: e.code(),
        message: said.message,
        hint: said.hint,
        candidates: candidates(e.candidates(), e.matches(), doc, enc),
        // Absent when the search stopped counting (more than the candidates listed).
        occurrences: Some(e.occurrences()).filter(|&n| n > 0 && n != UNCOUNTED),
        other_edit: e.other_edit(),
        already_applied: e.already_applied().is_some(),
    }
}

/// The closest regions (scored) then the places it matched (unscored), as the wire lists them.
fn candidates(
    closest: &[crate::engine::hint::Candidate],
    matches: &[Range<usize>],
    doc: Option<&Document>,
    enc: PositionEncoding,
) -> Vec<wire::Candidate> {
    let Some(doc) = doc else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(closest.len() + matches.len());
    for c in closest {
        out.push(wire::Candidate {
            range: range(doc, &c.span, enc),
            score: Some(c.score),
            text: doc.text[c.span.clone()].to_string(),
        });
    }
    for m in matches {
        out.push(wire::Candidate {
            range: range(doc, m, enc),
            score: None,
            text: place_text(&doc.text[m.clone()]).to_string(),
        });
    }
    out
}

/// The most of an ambiguous place's text a response carries: its first [`PLACE_TEXT`] bytes, cut
/// back to a character boundary (its `range` is always whole). Each of the up to 20 places would
/// otherwise copy the text of an `oldText` the caller already has: 20 copies of a 600 KB
/// `oldText` made the response 20 times the request.
const PLACE_TEXT: usize = 64 * 1024;

fn place_text(text: &str) -> &str {
    if text.len() <= PLACE_TEXT {
        return text;
    }
    let mut end = PLACE_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The old and new full texts (a BOM included as U+FEFF, so their bytes are the file bytes)
/// and the changes between them, with the edits `accept` selects.
pub(crate) fn texts<'a>(
    file: &'a FilePlan,
    accept: &dyn Fn(usize) -> bool,
) -> (Cow<'a, str>, String, Vec<diff::Change>) {
    let (old, new) = texts_with(file, accept, None);
    let changes = changes(file, accept, old.len(), new.len()).collect();
    (old, new.into_owned(), changes)
}

/// The old and new texts of [`texts`], taking the new text of an edited file from `rendered`
/// (what the writer got or the response keeps, all edits accepted) instead of rendering it
/// again.
fn texts_with<'a>(
    file: &'a FilePlan,
    accept: &dyn Fn(usize) -> bool,
    rendered: Option<&'a str>,
) -> (Cow<'a, str>, Cow<'a, str>) {
    let full = |d: &'a Document| -> Cow<'a, str> {
        if d.bom {
            Cow::Owned(format!("\u{FEFF}{}", d.text))
        } else {
            Cow::Borrowed(d.text.as_str())
        }
    };
    let old: Cow<'a, str> = match &file.original {
        Some(o) if file.op != Op::Create => full(&o.doc),
        _ => Cow::Borrowed(""),
    };
    if file.op == Op::Delete {
        return (old, Cow::Borrowed(""));
    }
    if let Some(content) = &file.content {
        return (old, Cow::Borrowed(content.as_str()));
    }
    let Some(orig) = &file.original else {
        return (old, Cow::Borrowed(""));
    };
    if let Some(new) = rendered.filter(|_| orig.decoded) {
        return (old, Cow::Borrowed(new));
    }
    let new = file.new_text(orig, accept);
    (old, Cow::Owned(new))
}

/// The changes of [`texts`] between an old text of `old` bytes and a new one of `new` bytes:
/// a whole-file change for a delete or new content, else where each accepted edit went (made
/// one at a time: see [`FilePlan::splices`]).
fn changes<'a>(
    file: &'a FilePlan,
    accept: &'a dyn Fn(usize) -> bool,
    old: usize,
    new: usize,
) -> Box<dyn Iterator<Item = diff::Change> + 'a> {
    let whole = |new: usize| {
        Box::new(std::iter::once(diff::Change {
            old: 0..old,
            new: 0..new,
            edit: 0,
        }))
    };
    if file.op == Op::Delete {
        return whole(0);
    }
    if file.content.is_some() {
        return whole(new);
    }
    match &file.original {
        Some(orig) => Box::new(file.splices(orig, accept)),
        None => Box::new(std::iter::empty()),
    }
}

/// A file the writer wrote (all edits accepted, from the plan's pieces: its new content was
/// never rendered whole) and the version of its new bytes, so that the response does not hash
/// them again.
pub(crate) struct Written {
    /// The path written (the destination of a move).
    pub path: String,
    /// `sha256:` of the bytes written ([`FilePlan::new_bytes`] with every edit accepted).
    pub version: String,
}

/// The unified diff of a file with the accepted edits.
#[cfg(test)]
pub(crate) fn file_diff(file: &FilePlan, accept: &dyn Fn(usize) -> bool) -> String {
    let (old, new, changes) = texts(file, accept);
    let mut out = String::new();
    // Invariant: writing to a `String` does not fail.
    let _ = write_diff(&mut out, file, &old, &new, changes.into_iter());
    out
}

/// The unified diff of `file` from `old` to `new` with `changes` (see [`texts`]), written to
/// `out` a hunk at a time as it is made.
fn write_diff(
    out: &mut impl std::fmt::Write,
    file: &FilePlan,
    old: &str,
    new: &str,
    changes: impl Iterator<Item = diff::Change>,
) -> std::fmt::Result {
    if let Some(d) = binary_diff(file) {
        return out.write_str(&d);
    }
    if old == new && !matches!(file.op, Op::Move | Op::Delete | Op::Create) {
        return Ok(());
    }
    // The old text is the document's (no BOM): its count of line feeds, which the edits'
    // positions use too, is counted once.
    let feeds = file
        .original
        .as_ref()
        .map(|o| &o.doc)
        .filter(|d| std::ptr::eq(d.text.as_str(), old))
        .map(Document::feeds);
    let hunks = diff::hunks_counted(old, feeds, new, changes);
    let (from, to) = names(file);
    match (file.op, &file.replaced) {
        (Op::Create, _) => diff::write_unified(out, None, Some(&to), hunks),
        (Op::Delete, _) => diff::write_unified(out, Some(&from), None, hunks),
        (Op::Move, Some(r)) => {
            // A move onto an existing file: git needs that file deleted first.
            let text = if r.doc.bom {
                format!("\u{FEFF}{}", r.doc.text)
            } else {
                r.doc.text.clone()
            };
            let gone = diff::unified(Some(&to), None, &diff::whole(&text, ""));
            let mut moved = String::new();
            diff::write_unified(&mut moved, Some(&from), Some(&to), hunks)?;
            out.write_str(&diff::join([gone.as_str(), moved.as_str()]))
        }
        _ => diff::write_unified(out, Some(&from), Some(&to), hunks),
    }
}

/// The text read of a file whose every edit is accepted and whose new text is that text with
/// the edits' replacements spliced in, nothing else (an edit of a decoded text without a BOM
/// that did not fail): its response needs no new text, only the plan's pieces (its diff, see
/// [`write_spliced_diff`]; whether it changes; its `hashAfter`).
fn spliced(file: &FilePlan) -> Option<&crate::engine::plan::Original> {
    let orig = file.original.as_ref()?;
    (file.op == Op::Edit
        && file.ok()
        && file.failure.is_none()
        && file.content.is_none()
        && orig.decoded
        && !orig.doc.bom)
        .then_some(orig)
}

/// The diff of a [`spliced`] file, written from its text as read and its edits' replacements,
/// window by window ([`diff::write_spliced`]): what [`write_diff`] writes of both whole texts.
fn write_spliced_diff(
    out: &mut impl std::fmt::Write,
    file: &FilePlan,
    orig: &crate::engine::plan::Original,
) -> std::fmt::Result {
    let old = orig.doc.text.as_str();
    if diff::splices_keep(old, file.splice_texts(orig, &|_| true)) {
        return Ok(());
    }
    let (from, _) = names(file);
    let splices = file.splice_texts(orig, &|_| true);
    diff::write_spliced(out, &from, old, Some(orig.doc.feeds()), splices)
}

/// The diffs of `plan`'s [`spliced`] files, rendered ahead (on a thread of their own while the
/// writer waits for the disk: see `service::commit_hashing`) as long as they fit in `budget`
/// bytes together; by file of the plan. A file that is not spliced, or whose diff would not fit,
/// is `None`: the response writes its diff as it is serialized, as it would have.
pub(crate) fn render_diffs(plan: &Plan, mut budget: usize) -> Vec<Option<String>> {
    /// Text up to `room` bytes; a write past it fails.
    struct Capped {
        text: String,
        room: usize,
    }
    impl std::fmt::Write for Capped {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            // Rendered ahead, beside the writer: it makes way for it (see `busy`).
            crate::busy::wait();
            if s.len() > self.room - self.text.len() {
                return Err(std::fmt::Error);
            }
            self.text.push_str(s);
            Ok(())
        }
    }
    plan.files
        .iter()
        .map(|f| {
            let orig = spliced(f)?;
            // All of the room at once: the pages a diff does not reach are never touched, and
            // a growing buffer would be copied (and its old blocks unmapped) as it doubles. Room
            // that cannot be had (a limit on address space) leaves the diff to the response: a
            // failed allocation would end the process in the middle of its commit.
            let mut text = String::new();
            text.try_reserve_exact(budget).ok()?;
            let mut out = Capped { text, room: budget };
            write_spliced_diff(&mut out, f, orig).ok()?;
            budget -= out.text.len();
            // The rest of the room goes back before the next file takes what is left of it:
            // a thousand small files must not each hold a reservation of the whole room.
            out.text.shrink_to_fit();
            Some(out.text)
        })
        .collect()
}

/// The range of each edit's first span of `plan`'s [`spliced`] files, made ahead as
/// [`render_diffs`] is (what the response's edit results would count as they are serialized: 2 ms
/// of a 10,000-edit response on 12 MB) as long as they fit in `budget` bytes together; by file
/// of the plan, `None` for a file not spliced or past the room (its results count them then).
pub(crate) fn edit_ranges(
    plan: &Plan,
    enc: PositionEncoding,
    mut budget: usize,
) -> Vec<Option<Vec<Option<wire::Range>>>> {
    plan.files
        .iter()
        .map(|f| {
            let orig = spliced(f)?;
            let room = f.edits.len() * std::mem::size_of::<Option<wire::Range>>();
            budget = budget.checked_sub(room)?;
            let mut ranges = Vec::new();
            ranges.try_reserve_exact(f.edits.len()).ok()?;
            ranges.extend(
                f.edits
                    .iter()
                    .map(|e| first_range(&orig.doc, e.resolution()?, enc)),
            );
            Some(ranges)
        })
        .collect()
}

/// The version of a [`spliced`] file's new bytes, hashed from the plan's pieces.
fn spliced_version(file: &FilePlan) -> Option<String> {
    let new = file.new_bytes(&|_| true)?;
    let mut v = crate::hash::Versioner::default();
    new.for_each(|part| v.update(part));
    Some(v.finish())
}

/// How a diff names the file before and after (a move's destination after).
fn names(file: &FilePlan) -> (String, String) {
    // Through a symlink, git sees the link as a link: the text file is its target.
    let through = file
        .original
        .as_ref()
        .and_then(|o| o.target_rel.as_ref())
        .filter(|_| file.op != Op::Delete);
    let from = display_path(through.or(file.rel.as_ref()), &file.path);
    let to = file
        .move_to
        .as_ref()
        .map(|m| display_path(file.move_rel.as_ref(), m))
        .unwrap_or_else(|| from.clone());
    (from, to)
}

/// The diff of a whole-file change to a file that is not text (deleted or overwritten without
/// being decoded), as git writes it: no hunks, a `Binary files … differ` line.
fn binary_diff(file: &FilePlan) -> Option<String> {
    let orig = file.original.as_ref().filter(|o| !o.decoded)?;
    let from = display_path(orig.target_rel.as_ref().or(file.rel.as_ref()), &file.path);
    match file.op {
        Op::Delete => Some(format!(
            "diff --git a/{from} b/{from}\ndeleted file mode 100644\nBinary files a/{from} and /dev/null differ\n"
        )),
        Op::Overwrite => Some(format!(
            "diff --git a/{from} b/{from}\nBinary files a/{from} and b/{from} differ\n"
        )),
        _ => None,
    }
}

/// Builds the response.
pub(crate) fn response(
    plan: Arc<Plan>,
    mode: Mode,
    enc: PositionEncoding,
    wrote: &WriteOutcome,
    vocabulary: message::Vocabulary,
) -> wire::Response {
    response_written(
        plan,
        mode,
        enc,
        wrote,
        Vec::new(),
        Ahead::default(),
        vocabulary,
    )
}

/// What a response's edit results and edit errors are rendered from, each time they are read or
/// serialized: the plan and how the face words and places them. The response holds no words
/// or positions per edit (10,000 failed edits were 6 MB of results, errors, messages and hints,
/// built whole before the first byte was written; one edit's at a time now).
#[derive(Debug)]
pub(crate) struct Source {
    plan: Arc<Plan>,
    enc: PositionEncoding,
    vocabulary: message::Vocabulary,
    /// The ranges of the edits made ahead, by file ([`edit_ranges`]).
    ranges: Vec<Option<Vec<Option<wire::Range>>>>,
}

impl Source {
    /// How many edits file `file` of the plan has.
    pub(crate) fn edits_of(&self, file: usize) -> usize {
        self.plan.files.get(file).map_or(0, |f| f.edits.len())
    }

    /// Whether edit `k` of file `file` failed.
    pub(crate) fn failed(&self, file: usize, k: usize) -> bool {
        matches!(self.plan.files[file].edits[k].outcome, Outcome::Failed(_))
    }

    /// The result of edit `k` of file `file`.
    pub(crate) fn edit_result(&self, file: usize, k: usize) -> wire::EditResult {
        let f = &self.plan.files[file];
        let e = &f.edits[k];
        let doc = f.original.as_ref().map(|o| &o.doc);
        let enc = self.enc;
        let mut r = wire::EditResult {
            index: e.index,
            id: e.spec.id().map(str::to_owned),
            status: wire::EditStatus::Skipped,
            match_kind: None,
            normalizations: None,
            occurrences: None,
            range: None,
            ranges: None,
            error: None,
        };
        match &e.outcome {
            Outcome::Resolved(res) => {
                r.status = wire::EditStatus::Resolved;
                r.match_kind = Some(res.kind);
                r.normalizations = Some(res.normalizations.clone());
                r.occurrences = Some(res.spans.len());
                if let Some(doc) = doc {
                    r.range = match self.ranges.get(file).and_then(Option::as_ref) {
                        Some(ranges) => ranges[k],
                        None => first_range(doc, res, enc),
                    };
                    if e.spec.replace_all {
                        let mut at = doc.positions(enc);
                        let ranges = res.spans.iter().map(|s| wire::Range {
                            start: at.at(s.start),
                            end: at.at(s.end),
                        });
                        r.ranges = Some(ranges.collect());
                    }
                }
            }
            Outcome::Failed(fail) => {
                r.status = wire::EditStatus::Failed;
                let said = message::edit_in(fail, &f.path, e.index, doc, self.vocabulary);
                r.error = Some(edit_detail(fail, said, doc, enc));
            }
            Outcome::Skipped => {}
        }
        r
    }

    /// The diff of file `file`, whose new text is `new` when the plan does not hold it.
    pub(crate) fn write_diff(
        &self,
        file: usize,
        new: Option<&str>,
        out: &mut impl std::fmt::Write,
    ) -> std::fmt::Result {
        let f = &self.plan.files[file];
        if let Some(orig) = spliced(f).filter(|_| new.is_none()) {
            return write_spliced_diff(out, f, orig);
        }
        let (old, new) = texts_with(f, &|_| true, new);
        let changes = changes(f, &|_| true, old.len(), new.len());
        write_diff(out, f, &old, &new, changes)
    }

    /// The entry of the error list for edit `k` of file `file`, if it failed.
    pub(crate) fn edit_error(&self, file: usize, k: usize) -> Option<wire::ErrorEntry> {
        let f = &self.plan.files[file];
        let e = &f.edits[k];
        let Outcome::Failed(fail) = &e.outcome else {
            return None;
        };
        let doc = f.original.as_ref().map(|o| &o.doc);
        let said = message::edit_in(fail, &f.path, e.index, doc, self.vocabulary);
        Some(wire::ErrorEntry {
            code: fail.code(),
            path: f.path.clone(),
            edit: Some(e.index),
            message: said.message,
            hint: None,
        })
    }
}

/// What of a response is made ahead, while the writer waits for the disk (on a thread of its
/// own: see `service::commit_hashing`), by file of the plan: the diffs ([`render_diffs`]) and
/// the ranges of the edits ([`edit_ranges`]), each empty or `None` where it was not made.
#[derive(Default)]
pub(crate) struct Ahead {
    pub(crate) diffs: Vec<Option<String>>,
    pub(crate) ranges: Vec<Option<Vec<Option<wire::Range>>>>,
}

impl Ahead {
    /// The diffs and then the ranges of `plan`'s spliced files, in `room` bytes together.
    pub(crate) fn make(plan: &Plan, enc: PositionEncoding, room: usize) -> Ahead {
        let diffs = render_diffs(plan, room);
        let used: usize = diffs.iter().flatten().map(String::len).sum();
        let ranges = edit_ranges(plan, enc, room.saturating_sub(used));
        Ahead { diffs, ranges }
    }
}

/// [`response`] for a plan whose every edit was accepted, with the versions of the files
/// written that `written` holds (of what [`crate::service::changes`] built for the writer) and
/// what `ahead` holds, made for this plan in the encoding `enc` ([`Ahead`]).
pub(crate) fn response_written(
    plan: Arc<Plan>,
    mode: Mode,
    enc: PositionEncoding,
    wrote: &WriteOutcome,
    mut written: Vec<Written>,
    ahead: Ahead,
    vocabulary: message::Vocabulary,
) -> wire::Response {
    let batch_ok = plan.ok() && wrote.failure.is_none();
    let Ahead { mut diffs, ranges } = ahead;
    let source = Arc::new(Source {
        plan: Arc::clone(&plan),
        enc,
        vocabulary,
        ranges,
    });
    // Each file's own error (after its edits' in the list), then the write's.
    let mut file_errors = Vec::with_capacity(plan.files.len());
    let mut files = Vec::with_capacity(plan.files.len());
    for (fi, f) in plan.files.iter().enumerate() {
        // eol and bom describe a decoded text only (§3a "Failed files").
        let decoded = f.original.as_ref().filter(|o| o.decoded).map(|o| &o.doc);
        let write_fail = wrote
            .failure
            .as_ref()
            .filter(|e| e.path == f.path || Some(&e.path) == f.move_to.as_ref());
        let failure = match (&f.failure, write_fail) {
            (Some(e), _) => Some((e.code(), message::file_in(e, &f.path, vocabulary))),
            (None, Some(e)) => Some((e.code(), message::write(e))),
            (None, None) => None,
        };
        file_errors.push(failure.as_ref().map(|(code, said)| wire::ErrorEntry {
            code: *code,
            path: f.path.clone(),
            edit: None,
            message: said.message.clone(),
            hint: said.hint.clone(),
        }));
        // Old and new texts once: the new hash (unless the writer's is known) and "unchanged"
        // come from them, and the diff, written when the response is, from the plan and the new
        // text kept for it.
        let to = f.move_to.as_ref().unwrap_or(&f.path);
        let decoded_text = f.original.as_ref().is_some_and(|o| o.decoded);
        // A spliced file's response is made from the plan alone: its new text is never held
        // next to the old one. The version of a file written is the writer's (a decoded file's
        // new text is the bytes written, a BOM kept as U+FEFF).
        let spliced = spliced(f);
        let known_version = match written.iter().position(|r| r.path == *to) {
            Some(i) if decoded_text => Some(written.swap_remove(i).version),
            _ => None,
        };
        let texts = (spliced.is_none() && f.ok() && f.failure.is_none())
            .then(|| texts_with(f, &|_| true, None));
        let changed = match (spliced, &texts) {
            (Some(orig), _) => !diff::splices_keep(&orig.doc.text, f.splice_texts(orig, &|_| true)),
            // An overwrite with the content the file already has writes nothing either.
            (None, Some((old, new))) => {
                matches!(f.op, Op::Create | Op::Delete | Op::Move)
                    || old != new
                    || f.original.as_ref().is_some_and(|o| !o.decoded)
            }
            (None, None) => true,
        };
        let status = if !f.ok() || failure.is_some() {
            wire::FileStatus::Failed
        } else if !batch_ok {
            wire::FileStatus::Skipped
        } else if !changed {
            wire::FileStatus::Unchanged
        } else if wrote.written {
            wire::FileStatus::Applied
        } else {
            wire::FileStatus::Planned
        };
        // Warnings are about changes that are planned or applied (§3a), not about a failed file.
        let mut warnings: Vec<wire::Warning> = f
            .warnings
            .iter()
            .filter(|_| status != wire::FileStatus::Failed)
            .map(|w| wire::Warning {
                code: w.code(),
                message: message::warning(w, &f.path),
            })
            .collect();
        for w in &wrote.warnings {
            if w.path() == f.path && !warnings.iter().any(|x| x.code == w.code()) {
                warnings.push(wire::Warning {
                    code: w.code(),
                    message: message::commit_warning(w),
                });
            }
        }
        files.push(wire::FileResult {
            path: f.path.clone(),
            move_to: f.move_to.clone(),
            op: f.op,
            status,
            hash_before: f
                .original
                .as_ref()
                .filter(|_| f.op != Op::Create)
                .map(|o| o.version.clone()),
            hash_after: match spliced {
                Some(_) => known_version.or_else(|| spliced_version(f)),
                None => texts
                    .as_ref()
                    .filter(|_| f.op != Op::Delete)
                    .map(|(_, new)| {
                        known_version.unwrap_or_else(|| crate::hash::version(new.as_bytes()))
                    }),
            },
            eol: decoded.map(|d| d.eol).or_else(|| {
                f.content
                    .as_ref()
                    .map(|c| Document::from_text(c.clone(), false).eol)
            }),
            bom: decoded
                .map(|d| d.bom)
                .or(f.content.as_ref().map(|c| c.starts_with('\u{FEFF}'))),
            diff: match texts.map(|(_, new)| new) {
                None if spliced.is_some() => match diffs.get_mut(fi).and_then(Option::take) {
                    Some(text) => wire::Diff::rendered(text),
                    None => wire::Diff::new(Arc::clone(&source), fi, None),
                },
                // The new text when the plan does not hold it, rendered here.
                Some(Cow::Owned(new)) => wire::Diff::new(Arc::clone(&source), fi, Some(new)),
                Some(Cow::Borrowed(_)) => wire::Diff::new(Arc::clone(&source), fi, None),
                None => wire::Diff::default(),
            },
            edits: wire::EditResults::new(Arc::clone(&source), fi),
            warnings,
            error: failure.map(|(code, said)| file_detail(code, said)),
        });
    }
    // A commit failure of something no file of the request names (the journal, a directory
    // being created or synced, the root): its own entry, so a failure always says why.
    let mut errors = wire::Errors::new(source, file_errors);
    if let Some(e) = &wrote.failure {
        let named = plan
            .files
            .iter()
            .any(|f| e.path == f.path || Some(&e.path) == f.move_to.as_ref());
        if !named {
            let said = message::write(e);
            errors.push(wire::ErrorEntry {
                code: e.code(),
                path: e.path.clone(),
                edit: None,
                message: said.message,
                hint: said.hint,
            });
        }
    }
    wire::Response {
        version: wire::VERSION,
        ok: batch_ok,
        dry_run: !mode.writes(),
        written: wrote.written,
        files,
        errors,
        rolled_back: wrote.rolled_back.as_ref().map(ToString::to_string),
        durability_unknown: wrote.durability_unknown,
        recovered: wrote.recovered.as_ref().and_then(message::recovery),
    }
}

#[cfg(test)]
mod place_text_tests {
    use super::{PLACE_TEXT, place_text};

    #[test]
    fn a_long_place_is_cut_on_a_character_boundary() {
        assert_eq!(place_text("short"), "short");
        let exact = "x".repeat(PLACE_TEXT);
        assert_eq!(place_text(&exact), exact);
        // A 3-byte character straddles the limit: the cut falls before it.
        let long = "x".repeat(PLACE_TEXT - 1) + "€" + "tail";
        assert_eq!(place_text(&long), "x".repeat(PLACE_TEXT - 1));
    }
}
