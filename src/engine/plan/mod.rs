//! Resolving a batch into a plan: every file read once, every edit located, nothing written.
//!
//! A [`Plan`] holds, for each file, the original document, every edit's outcome and (when all of
//! them resolved) the new content. It is the single input of the response, the reviewer and the
//! writer; a plan with any error is never committed.

use crate::engine::document::Document;
pub(crate) use crate::engine::failure::{EditError, FileError};
use crate::error::{Code, WarningCode};

mod edits;
use crate::engine::matcher::MatchKind;
use crate::engine::normalize::Normalization;
use crate::request::{EditSpec, FileRequest, Hint, Request, RequestError};
use crate::write::{Fingerprint, Root};
use edits::locate_chunks;
#[cfg(test)]
pub(crate) use edits::match_edits;
pub(crate) use edits::{MatchOptions, match_edits_with};
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;

/// What a file operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
// The variants are the wire names (serde) that SPEC defines; a doc comment per variant would
// make schemars publish `oneOf` consts instead of the schema's plain `enum` list.
#[allow(missing_docs)]
pub enum Op {
    Edit,
    Create,
    Overwrite,
    Delete,
    Move,
}

impl Op {
    /// The wire name (`edit`, `create`, `overwrite`, `delete`, `move`).
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Edit => "edit",
            Op::Create => "create",
            Op::Overwrite => "overwrite",
            Op::Delete => "delete",
            Op::Move => "move",
        }
    }
}

/// Where a resolved edit lands.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resolution {
    /// Which tier matched (exact, normalized, relaxed ...).
    pub kind: MatchKind,
    /// The normalizations that tier applied to find the match.
    pub normalizations: Vec<Normalization>,
    /// Original byte spans in the document text (one unless replaceAll), sorted.
    pub spans: Spans,
    /// newText with line breaks in the file's dominant ending; `None` when that is newText as
    /// sent, as it mostly is (10,000 edits: 0.3 MB of copies; see [`Resolution::replacement`]).
    pub replaced_by: Option<Box<str>>,
}

impl Resolution {
    /// What replaces the spans of the edit `spec`, whose resolution this is.
    pub(crate) fn replacement<'a>(&'a self, spec: &'a EditSpec) -> &'a str {
        self.replaced_by.as_deref().unwrap_or(spec.new_text())
    }

    /// The [`Resolution::replaced_by`] of `text` replacing the spans of an edit whose newText
    /// was `sent`.
    pub(crate) fn replaced_by(text: std::borrow::Cow<'_, str>, sent: &str) -> Option<Box<str>> {
        (text != sent).then(|| text.into_owned().into_boxed_str())
    }
}

/// A resolution's spans: one held in place, as most are (a list of one was a 32-byte block of
/// heap per resolved edit: 0.3 MB at 10,000 edits), several in a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Spans {
    One(Range<usize>),
    Many(Vec<Range<usize>>),
}

impl std::ops::Deref for Spans {
    type Target = [Range<usize>];

    fn deref(&self) -> &[Range<usize>] {
        match self {
            Spans::One(s) => std::slice::from_ref(s),
            Spans::Many(v) => v,
        }
    }
}

impl From<Vec<Range<usize>>> for Spans {
    fn from(mut v: Vec<Range<usize>>) -> Spans {
        match v.pop() {
            Some(s) if v.is_empty() => Spans::One(s),
            Some(s) => {
                v.push(s);
                Spans::Many(v)
            }
            None => Spans::Many(v),
        }
    }
}

/// The outcome of one edit.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// The edit located its target (boxed: an outcome is held per edit, and a failed one is
    /// smaller).
    Resolved(Box<Resolution>),
    /// The edit failed and the batch cannot commit.
    Failed(EditError),
    /// Its file failed before matching.
    Skipped,
}

/// One edit of a file, as planned.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EditPlan {
    /// 0-based index of the edit in its file's `edits`.
    pub index: usize,
    /// The edit as requested.
    pub spec: EditSpec,
    /// Where it lands, or why not.
    pub outcome: Outcome,
}

impl EditPlan {
    /// The resolution, when the edit resolved.
    pub(crate) fn resolution(&self) -> Option<&Resolution> {
        match &self.outcome {
            Outcome::Resolved(r) => Some(r),
            _ => None,
        }
    }
}

/// The file as it was when the plan was made.
#[derive(Debug, Clone)]
pub struct Original {
    /// The decoded text (empty when `decoded` is false).
    pub doc: Document,
    /// Version of the bytes (`sha256:`) the plan was made against.
    pub version: String,
    /// Disk fingerprint, re-checked at commit; `None` when the text came from `documents[]`.
    pub fingerprint: Option<Fingerprint>,
    /// Hard-link count at read time (more than 1 draws a warning: the write breaks the link).
    pub nlink: u64,
    /// The path relative to the root where the content lives, when the request's path is a
    /// symlink to it (diffs name the target, which is what git sees as the text file).
    pub target_rel: Option<PathBuf>,
    /// The text was decoded (`doc` holds it); false for a file that is not text, whose `doc` is
    /// empty (§3a: decoding is only for edits; such a file can still be deleted, moved or
    /// overwritten).
    pub decoded: bool,
    /// The bytes of a file that was not decoded (a move carries them).
    pub raw: Option<Vec<u8>>,
    /// The hasher's states while `version` was computed, for the new content's version
    /// (`hashAfter`) to resume from (see [`crate::hash::Marks`]); empty when none were kept.
    pub(crate) marks: crate::hash::Marks,
    /// The hashing of the bytes as read, where [`ResolveOptions::defer_versions`] left it unfinished
    /// (`version` is empty until [`Original::settle`] or the writer's second thread finishes
    /// it).
    pub(crate) pending: Option<Box<crate::hash::Hashing>>,
}

impl Original {
    /// Finishes the version that [`ResolveOptions::defer_versions`] left unfinished, if it did.
    pub(crate) fn settle(&mut self) {
        if let Some(h) = self.pending.take() {
            let done = Self::finish_hashing(*h, self.parts());
            self.set_hashed(done);
        }
    }

    /// The version and marks of `parts` (the bytes as read), going on from `h`.
    pub(crate) fn finish_hashing(
        mut h: crate::hash::Hashing,
        parts: [&[u8]; 2],
    ) -> (String, crate::hash::Marks) {
        h.restart();
        for part in parts {
            h.feed(part, None);
        }
        h.finish()
    }

    /// Sets the version of the bytes as read (and of its fingerprint), with its marks.
    pub(crate) fn set_hashed(&mut self, (version, marks): (String, crate::hash::Marks)) {
        set_version(self, version);
        self.marks = marks;
        self.pending = None;
    }

    /// The file's bytes as read, in two parts: a document's BOM and its text, or the bytes of a
    /// file that was not decoded.
    pub(crate) fn parts(&self) -> [&[u8]; 2] {
        match &self.raw {
            Some(raw) => [raw, &[]],
            None if self.doc.bom => [b"\xEF\xBB\xBF", self.doc.text.as_bytes()],
            None => [&[], self.doc.text.as_bytes()],
        }
    }

    /// The file's bytes as read.
    pub fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        match &self.raw {
            Some(raw) => std::borrow::Cow::Borrowed(raw),
            None => std::borrow::Cow::Owned(self.doc.to_bytes()),
        }
    }
}

/// A warning about a file: what the change does beyond its text, as data (worded at the edge,
/// by `report::message::warning`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Warning {
    /// The move's destination exists; the move replaces it.
    MoveOverwrites {
        /// The destination as the request wrote it.
        to: String,
    },
    /// A create names an existing file; its content is replaced.
    ContentReplaces,
    /// The file has other hard links, which keep the old content.
    HardLinks {
        /// How many links the file has.
        count: u64,
    },
}

impl Warning {
    /// The stable wire code.
    #[must_use]
    pub(crate) fn code(&self) -> WarningCode {
        match self {
            Warning::MoveOverwrites { .. } | Warning::ContentReplaces => {
                WarningCode::OverwroteExisting
            }
            Warning::HardLinks { .. } => WarningCode::HardLinkBroken,
        }
    }
}

/// Everything the batch does to one path.
#[derive(Debug, Clone)]
pub(crate) struct FilePlan {
    /// The path as the request wrote it.
    pub path: String,
    /// The path relative to the root (for diffs and display), when it resolved.
    pub rel: Option<PathBuf>,
    /// What the request does to the path.
    pub op: Op,
    /// The destination of a move, as the request wrote it.
    pub move_to: Option<String>,
    /// The destination of a move relative to the root, when it resolved.
    pub move_rel: Option<PathBuf>,
    /// What the file was (absent for a create).
    pub original: Option<Original>,
    /// The existing file a move overwrites (its deletion is part of the diff; it is re-checked
    /// at commit like any file that was read).
    pub replaced: Option<Box<Original>>,
    /// Whole new content for create/overwrite.
    pub content: Option<String>,
    /// Every edit of an `edit` (or editing `move`), in request order.
    pub edits: Vec<EditPlan>,
    /// A file-level failure (path, read, decode, stale); its edits are skipped.
    pub failure: Option<FileError>,
    /// Non-fatal notes about the file.
    pub warnings: Vec<Warning>,
}

impl FilePlan {
    /// Whether this file is free of errors (file-level and edit-level).
    pub(crate) fn ok(&self) -> bool {
        self.failure.is_none()
            && self
                .edits
                .iter()
                .all(|e| matches!(e.outcome, Outcome::Resolved(_)))
    }

    /// The new file bytes with the edits `accept` selects applied (resolved edits only), or
    /// `None` when the file is deleted or failed at file level.
    pub(crate) fn render(&self, accept: impl Fn(usize) -> bool) -> Option<Vec<u8>> {
        let new = self.new_bytes(&accept)?;
        // Sized exactly up front (see [`FilePlan::new_text`]).
        let mut out = match &new {
            NewBytes::Whole(b) => return Some(b.to_vec()),
            NewBytes::Spliced { .. } => crate::pages::bytes(new.len()),
        };
        new.for_each(|part| out.extend_from_slice(part));
        Some(out)
    }

    /// The bytes [`FilePlan::render`] gives, as pieces of the plan: for writing and hashing them
    /// without rendering them (the writer writes them while another thread hashes them).
    pub(crate) fn new_bytes<'a, 'f>(
        &'a self,
        accept: &'f dyn Fn(usize) -> bool,
    ) -> Option<NewBytes<'a, 'f>> {
        if self.failure.is_some() || self.op == Op::Delete {
            return None;
        }
        if let Some(content) = &self.content {
            return Some(NewBytes::Whole(content.as_bytes()));
        }
        let orig = self.original.as_ref()?;
        if !orig.decoded {
            // Only a pure move gets here with a file that is not text: its bytes move as they are.
            return Some(NewBytes::Whole(orig.raw.as_deref().unwrap_or_default()));
        }
        Some(self.spliced(orig, accept))
    }

    /// The text of `orig` with the accepted resolved edits spliced in, as pieces.
    fn spliced<'a, 'f>(
        &'a self,
        orig: &'a Original,
        accept: &'f dyn Fn(usize) -> bool,
    ) -> NewBytes<'a, 'f> {
        // In the plan's order, as they mostly are, the pieces are read from the plan each time:
        // a list of them is 40 bytes an edit, and the writer and the hasher each held one.
        let in_order = self
            .unsorted_pieces(accept)
            .is_sorted_by_key(|(s, _, _)| (s.start, s.end));
        NewBytes::Spliced {
            bom: orig.doc.bom,
            text: &orig.doc.text,
            pieces: (!in_order).then(|| self.pieces(accept)),
            from: (self, accept),
        }
    }

    /// The new text of `orig` with the accepted resolved edits spliced in, a BOM kept as
    /// U+FEFF (so the text's bytes are the file's).
    pub(crate) fn new_text(&self, orig: &Original, accept: &dyn Fn(usize) -> bool) -> String {
        let new = self.spliced(orig, accept);
        // Sized exactly up front: a buffer grown by doubling would copy the text again and
        // hold up to twice its size. A big one is backed by huge pages (see `crate::pages`).
        let mut out = crate::pages::string(new.len());
        new.for_each_str(|part| out.push_str(part));
        out
    }

    /// Where each replaced span of the accepted resolved edits went in the
    /// [`FilePlan::new_text`], in full-text coordinates (a BOM counted), from the spans alone,
    /// in the order of [`FilePlan::pieces`]. Made from the plan as they are asked for when the
    /// spans are in order, as they mostly are (10,000 edits: 0.4 MB of changes held while the
    /// response's diff was written); otherwise made in a list and sorted in place (no list of
    /// pieces next to them).
    pub(crate) fn splices<'a>(
        &'a self,
        orig: &Original,
        accept: &'a dyn Fn(usize) -> bool,
    ) -> impl Iterator<Item = crate::engine::diff::Change> + 'a {
        self.splice_texts(orig, accept).map(|(c, _)| c)
    }

    /// [`FilePlan::splices`], each with the text that replaced its span (what the response's
    /// diff builds the new side of its hunks from, without the whole new text).
    pub(crate) fn splice_texts<'a>(
        &'a self,
        orig: &Original,
        accept: &'a dyn Fn(usize) -> bool,
    ) -> impl Iterator<Item = (crate::engine::diff::Change, &'a str)> + 'a {
        use crate::engine::diff::Change;
        let shift = if orig.doc.bom {
            '\u{FEFF}'.len_utf8()
        } else {
            0
        };
        // `new` holds the replacement's length until the changes are in order.
        let unplaced = move || {
            self.resolved(accept).flat_map(move |(edit, r, rep)| {
                r.spans.iter().map(move |s| {
                    let c = Change {
                        old: s.start + shift..s.end + shift,
                        new: 0..rep.len(),
                        edit,
                    };
                    (c, rep)
                })
            })
        };
        let in_order = unplaced().is_sorted_by_key(|(c, _)| (c.old.start, c.old.end));
        let sorted = (!in_order).then(|| {
            let mut changes = Vec::with_capacity(self.spans(accept));
            changes.extend(unplaced());
            changes.sort_unstable_by_key(|(c, _)| (c.old.start, c.old.end, c.edit));
            changes
        });
        let changes: Box<dyn Iterator<Item = (Change, &'a str)> + 'a> = match sorted {
            Some(changes) => Box::new(changes.into_iter()),
            None => Box::new(unplaced()),
        };
        // Where the next unchanged byte of the old text lands in the new one.
        let mut delta = 0isize;
        changes.map(move |(mut c, rep)| {
            let (len, ns) = (c.new.end, (c.old.start as isize + delta) as usize);
            c.new = ns..ns + len;
            delta += len as isize - c.old.len() as isize;
            (c, rep)
        })
    }

    /// (original span, replacement, edit index) of the accepted resolved edits, sorted by span
    /// (then by edit: the edits are in index order, so this is the order a stable sort by span
    /// gives, without its buffer); already sorted, as they mostly are, they are not sorted again.
    pub(crate) fn pieces(
        &self,
        accept: &dyn Fn(usize) -> bool,
    ) -> Vec<(Range<usize>, &str, usize)> {
        let mut out = Vec::with_capacity(self.spans(accept));
        out.extend(self.unsorted_pieces(accept));
        if !out.is_sorted_by_key(|(s, _, _)| (s.start, s.end)) {
            out.sort_unstable_by_key(|(s, _, i)| (s.start, s.end, *i));
        }
        out
    }

    /// The pieces of [`FilePlan::pieces`] in the edits' order.
    fn unsorted_pieces<'a, 'f>(
        &'a self,
        accept: &'f dyn Fn(usize) -> bool,
    ) -> impl Iterator<Item = (Range<usize>, &'a str, usize)> + use<'a, 'f> {
        self.resolved(accept)
            .flat_map(|(i, r, rep)| r.spans.iter().map(move |s| (s.clone(), rep, i)))
    }

    /// (edit index, resolution, replacement) of the accepted resolved edits, in the edits'
    /// order.
    fn resolved<'a, 'f>(
        &'a self,
        accept: &'f dyn Fn(usize) -> bool,
    ) -> impl Iterator<Item = (usize, &'a Resolution, &'a str)> + use<'a, 'f> {
        self.edits
            .iter()
            .filter(|e| accept(e.index))
            .filter_map(|e| e.resolution().map(|r| (e.index, r, r.replacement(&e.spec))))
    }

    /// How many spans the accepted resolved edits replace.
    fn spans(&self, accept: &dyn Fn(usize) -> bool) -> usize {
        self.resolved(accept).map(|(_, r, _)| r.spans.len()).sum()
    }
}

/// A file's new bytes as pieces of its plan (see [`FilePlan::new_bytes`]): borrowed from the
/// plan for `'a`, however briefly the choice of edits (`'f`) lives.
pub(crate) enum NewBytes<'a, 'f> {
    /// Bytes written as they are: a `content`, or a file that is not text moving.
    Whole(&'a [u8]),
    /// The text as read (after its BOM) with the accepted replacements spliced in.
    Spliced {
        bom: bool,
        text: &'a str,
        /// From [`FilePlan::pieces`]: sorted, not overlapping; `None` when the plan gives them
        /// in that order (read from `from` then).
        pieces: Option<Vec<(Range<usize>, &'a str, usize)>>,
        from: (&'a FilePlan, &'f dyn Fn(usize) -> bool),
    },
}

impl<'a> NewBytes<'a, '_> {
    /// The pieces of a spliced text, in order (none for whole bytes).
    fn pieces(&self) -> Box<dyn Iterator<Item = (Range<usize>, &'a str, usize)> + '_> {
        match self {
            NewBytes::Whole(_) => Box::new(std::iter::empty()),
            NewBytes::Spliced {
                pieces: Some(p), ..
            } => Box::new(p.iter().cloned()),
            NewBytes::Spliced {
                pieces: None,
                from: (file, accept),
                ..
            } => Box::new(file.unsorted_pieces(*accept)),
        }
    }

    /// Their length.
    pub(crate) fn len(&self) -> usize {
        match self {
            NewBytes::Whole(b) => b.len(),
            NewBytes::Spliced { bom, text, .. } => {
                let added: usize = self.pieces().map(|(_, rep, _)| rep.len()).sum();
                let removed: usize = self.pieces().map(|(span, _, _)| span.len()).sum();
                (text.len() + added).saturating_sub(removed) + if *bom { 3 } else { 0 }
            }
        }
    }

    /// How many of their first bytes are those of the file as read ([`Original::parts`]), as
    /// far as the splicing shows (for a hashing to resume from the original's marks).
    pub(crate) fn unchanged(&self) -> usize {
        match self {
            // A content is not the file as read; a file that is not text moves unchanged.
            NewBytes::Whole(_) => 0,
            NewBytes::Spliced { bom, text, .. } => {
                let head = if *bom { 3 } else { 0 };
                head + self
                    .pieces()
                    .next()
                    .map_or(text.len(), |(span, _, _)| span.start)
            }
        }
    }

    /// Gives them in order, in pieces (any may be empty), each borrowed from the plan.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&'a [u8])) {
        match self {
            NewBytes::Whole(b) => f(b),
            NewBytes::Spliced { .. } => self.for_each_str(|part| f(part.as_bytes())),
        }
    }

    /// [`NewBytes::for_each`] of a spliced text, whose pieces are text (whole bytes give
    /// nothing).
    fn for_each_str(&self, mut f: impl FnMut(&'a str)) {
        if let &NewBytes::Spliced { bom, text, .. } = self {
            if bom {
                f("\u{FEFF}");
            }
            let mut at = 0;
            for (span, rep, _) in self.pieces() {
                f(&text[at..span.start]);
                f(rep);
                at = span.end;
            }
            f(&text[at..]);
        }
    }
}

/// A resolved batch.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// One entry per file request, in request order.
    pub files: Vec<FilePlan>,
}

impl Plan {
    /// Finishes every version that resolving left unfinished ([`ResolveOptions::defer_versions`]).
    pub(crate) fn settle_versions(&mut self) {
        for f in &mut self.files {
            if let Some(o) = f.original.as_mut() {
                o.settle();
            }
        }
    }

    /// Whether no file and no edit failed (only then may the plan be committed).
    pub(crate) fn ok(&self) -> bool {
        self.files.iter().all(FilePlan::ok)
    }
}

/// Options for resolving.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ResolveOptions {
    /// `documents[]` may replace disk content (resolve and filter only).
    pub allow_documents: bool,
    /// How far matching goes (`--tolerance`).
    pub tolerance: crate::engine::relaxed::Tolerance,
    /// A big file's version may be left unfinished ([`Original::pending`]) for the caller to
    /// finish ([`Plan::settle_versions`]) while it writes.
    pub defer_versions: bool,
}

/// Request-level checks that need no file: documents allowed, every N(oldText) non-empty.
pub(crate) fn check_request(req: &Request, opts: ResolveOptions) -> Result<(), RequestError> {
    if !req.documents.is_empty() && !opts.allow_documents {
        return Err(
            RequestError::new("`documents` is only accepted by `resolve` and `filter`")
                .at("/documents")
                .hint_naming(Hint::DocumentsOnlyToPreview),
        );
    }
    for f in &req.files {
        for e in f.edits.iter().filter(|e| e.insert_after_line().is_none()) {
            if crate::engine::normalize::is_blank_under_n(e.old_text()) {
                let ptr = e.old_text_pointer().map(str::to_owned);
                let mut err = RequestError::new(format!(
                    "oldText of an edit for {} is only whitespace, which matches nothing after normalization",
                    f.path
                ))
                .hint("give oldText some non-whitespace text from the file");
                err.pointer = ptr;
                return Err(err);
            }
        }
    }
    Ok(())
}

/// Resolves `req` against the files beneath `root`. Only request-level problems are errors;
/// everything about a file or an edit is an outcome in the plan.
pub(crate) fn resolve(
    req: &Request,
    root: &Root,
    opts: ResolveOptions,
) -> Result<Plan, RequestError> {
    check_request(req, opts)?;
    let mut docs: HashMap<PathBuf, &str> = HashMap::new();
    for d in &req.documents {
        if let Ok(rel) = root.relative(&d.path) {
            docs.insert(rel, d.text.as_str());
        }
    }
    let merged = merge_same_file(&req.files, root)?;
    // Each directory's `.editorconfig` read once for the batch; its section checks bounded by
    // the request's paths (a few checks a byte, at least a million).
    let paths: usize = merged.iter().map(|f| f.path.len() + 1).sum();
    let configs = crate::engine::editorconfig::Configs::new(root, (64 * paths).max(1 << 20));
    let files: Vec<FilePlan> = merged
        .iter()
        .map(|f| resolve_file(f, root, &docs, &configs, opts))
        .collect();
    same_inode(&files)?;
    Ok(Plan { files })
}

/// Two paths of the batch that reach one file (a symlink to it, or a hard link) cannot both be
/// changed: the writes would race each other. Found from the files as read, so `--check` and
/// `resolve` say what `apply` would.
fn same_inode(files: &[FilePlan]) -> Result<(), RequestError> {
    let mut seen: HashMap<(u64, u64), &str> = HashMap::new();
    for f in files {
        let Some(fp) = f.original.as_ref().and_then(|o| o.fingerprint.as_ref()) else {
            continue;
        };
        if let Some(first) = seen.insert((fp.dev, fp.ino), &f.path) {
            return Err(RequestError::new(format!(
                "{first} and {} are the same file (a symlink or a hard link); the batch would change it twice",
                f.path
            ))
            .hint("put everything for that file under one of its paths"));
        }
    }
    Ok(())
}

/// Merges objects that name one file under different spellings (`a` and `/root/a`; the wire
/// layer already merged lexically equal paths), and refuses two operations that would write
/// one path (a move onto a path that is also edited, created or deleted).
///
/// An object that merges with no other is borrowed, not copied: a request's texts are not held
/// twice.
fn merge_same_file<'a>(
    files: &'a [FileRequest],
    root: &Root,
) -> Result<Vec<Cow<'a, FileRequest>>, RequestError> {
    let mut out: Vec<Cow<'a, FileRequest>> = Vec::with_capacity(files.len());
    let mut seen: HashMap<PathBuf, usize> = HashMap::new();
    for f in files {
        let Ok(rel) = root.relative(&f.path) else {
            out.push(Cow::Borrowed(f));
            continue;
        };
        match seen.get(&rel) {
            Some(&i) => {
                let first = &mut out[i];
                let plain = |x: &FileRequest| {
                    x.content.is_none()
                        && !x.delete
                        && x.move_to.is_none()
                        && x.expect_hash.is_none()
                };
                if !plain(f) || first.content.is_some() || first.delete {
                    return Err(RequestError::new(format!(
                        "{} and {} name the same file with conflicting operations",
                        first.path, f.path
                    ))
                    .hint("put everything for one file in one object"));
                }
                let first = first.to_mut();
                first.edits.extend(f.edits.iter().cloned());
                first.chunks.extend(f.chunks.iter().cloned());
            }
            None => {
                seen.insert(rel, out.len());
                out.push(Cow::Borrowed(f));
            }
        }
    }
    // Moves (§3a): onto their own path, onto a path another object changes, or two onto one
    // target are request-level errors, so that `--check` and `resolve` predict `apply`.
    let mut targets: HashMap<PathBuf, &FileRequest> = HashMap::new();
    for (k, f) in out.iter().enumerate() {
        let f: &FileRequest = f;
        let Some(to) = &f.move_to else { continue };
        let Ok(dest) = root.relative(to) else {
            continue;
        };
        let at = |e: RequestError| {
            let mut e = e.hint("move onto a path the batch does not otherwise touch");
            e.pointer = f.move_to_pointer.clone();
            e
        };
        if root.relative(&f.path).is_ok_and(|src| src == dest) {
            return Err(at(RequestError::new(format!(
                "{} is moved onto itself",
                f.path
            ))));
        }
        if let Some(first) = targets.insert(dest.clone(), f) {
            return Err(at(RequestError::new(format!(
                "{} and {} are both moved onto {to}",
                first.path, f.path
            ))));
        }
        if let Some(&i) = seen.get(&dest) {
            let mut e = at(RequestError::new(format!(
                "{} is moved onto {}, which the batch also changes",
                f.path, out[i].path
            )));
            // The later of the two objects is the one at fault.
            if i > k {
                e.pointer = out[i].pointer.clone();
            }
            return Err(e);
        }
    }
    Ok(out)
}

pub(crate) fn skipped(edits: &[EditSpec]) -> Vec<EditPlan> {
    edits
        .iter()
        .enumerate()
        .map(|(index, spec)| EditPlan {
            index,
            spec: spec.clone(),
            outcome: Outcome::Skipped,
        })
        .collect()
}

fn resolve_file(
    fr: &FileRequest,
    root: &Root,
    docs: &HashMap<PathBuf, &str>,
    configs: &crate::engine::editorconfig::Configs<'_>,
    opts: ResolveOptions,
) -> FilePlan {
    let op = if fr.delete {
        Op::Delete
    } else if fr.content.is_some() {
        Op::Create
    } else if fr.move_to.is_some() {
        Op::Move
    } else {
        Op::Edit
    };
    let mut plan = FilePlan {
        path: fr.path.clone(),
        rel: None,
        op,
        move_to: fr.move_to.clone(),
        move_rel: None,
        original: None,
        replaced: None,
        content: fr.content.clone(),
        edits: skipped(&fr.edits),
        failure: None,
        warnings: Vec::new(),
    };
    if let Err(f) = fill(&mut plan, fr, root, docs, configs, opts) {
        plan.failure = Some(f);
    }
    plan
}

fn fill(
    plan: &mut FilePlan,
    fr: &FileRequest,
    root: &Root,
    docs: &HashMap<PathBuf, &str>,
    configs: &crate::engine::editorconfig::Configs<'_>,
    opts: ResolveOptions,
) -> Result<(), FileError> {
    let rel = root.relative(&fr.path)?;
    plan.rel = Some(rel.clone());
    // Decoding is needed only to match edits (§3a): deletes, contents and pure moves take any
    // regular file.
    let decode = !fr.edits.is_empty() || !fr.chunks.is_empty();
    if let Some(to) = &fr.move_to {
        let dest = root.relative(to)?;
        if root.exists(to)? {
            // Undecodable content still counts as "there" (for the commit check), without a diff.
            plan.replaced = Some(Box::new(read_any(root, to, &dest, &HashMap::new())?));
            plan.warnings
                .push(Warning::MoveOverwrites { to: to.clone() });
        }
        plan.move_rel = Some(dest);
    }
    if let Some(content) = &fr.content {
        match read_any(root, &fr.path, &rel, docs) {
            Ok(orig) => {
                plan.op = Op::Overwrite;
                plan.original = Some(orig);
                check_hash(fr, plan.original.as_ref())?;
                plan.warnings.push(Warning::ContentReplaces);
            }
            Err(FileError::Fs(e)) if e.code() == Code::FileNotFound && fr.expect_hash.is_none() => {
                plan.op = Op::Create;
            }
            Err(f) => return Err(f),
        }
        plan.content = Some(content.clone());
        return Ok(());
    }
    // The file as read is kept even when a later check fails: a failed file still reports the
    // version it was read at (§3a "Failed files").
    let defer = decode && !fr.delete;
    let read = read::<(FileError, Option<Original>)>(root, &fr.path, &rel, docs, Some(fr), defer);
    let orig = match read {
        Ok(o) => o,
        Err((FileError::Decode(_), Some(o))) if !decode => o,
        Err((f, read)) => {
            plan.original = read;
            return Err(f);
        }
    };
    plan.original = Some(orig);
    let orig = plan.original.as_ref().expect("just set");
    if fr.delete {
        return Ok(());
    }
    if orig.nlink > 1 {
        plan.warnings.push(Warning::HardLinks { count: orig.nlink });
    }
    if decode {
        let mopts = MatchOptions {
            tolerance: opts.tolerance,
            tab_width: match opts.tolerance {
                crate::engine::relaxed::Tolerance::Relaxed if !fr.edits.is_empty() => {
                    configs.tab_width(&rel)
                }
                _ => None,
            },
        };
        // The skipped placeholders go first: a batch's edits are not held three times.
        plan.edits = Vec::new();
        // A big file's version is hashed on a second thread while its edits are matched: on a
        // big file, hashing costs as much as matching. With `defer`, the hashing stops at the
        // next mark once matching is done, and the writer's second thread finishes it while the
        // new text is written (see `service::commit_hashing`).
        let pending = orig.version.is_empty();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let hash = || {
            let mut h = crate::hash::Hashing::default();
            for part in orig.parts() {
                h.feed(part, opts.defer_versions.then_some(&stop));
            }
            h
        };
        let (edits, hashing) = std::thread::scope(|s| {
            let hashing = pending
                .then(|| std::thread::Builder::new().spawn_scoped(s, hash))
                .and_then(Result::ok);
            let mut edits = match_edits_with(&orig.doc, &fr.edits, mopts);
            if !fr.chunks.is_empty() {
                edits.extend(locate_chunks(&orig.doc, fr, edits.len()));
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            // A hasher that could not start or panicked leaves it to this thread.
            let hashing = pending.then(|| {
                hashing
                    .and_then(|h| h.join().ok())
                    .unwrap_or_else(crate::hash::Hashing::default)
            });
            (edits, hashing)
        });
        plan.edits = edits;
        if let (Some(h), Some(orig)) = (hashing, plan.original.as_mut()) {
            orig.pending = Some(Box::new(h));
            if !opts.defer_versions {
                orig.settle();
            }
        }
    }
    Ok(())
}

/// Files of this many bytes or more are hashed on a second thread (see [`read`]).
const DEFER_HASH: usize = 1 << 20;

/// Sets the version of a file read with its hashing deferred.
fn set_version(orig: &mut Original, version: String) {
    if let Some(fp) = orig.fingerprint.as_mut() {
        fp.version.clone_from(&version);
    }
    orig.version = version;
}

fn check_hash(fr: &FileRequest, orig: Option<&Original>) -> Result<(), FileError> {
    match (&fr.expect_hash, orig) {
        (Some(want), Some(orig)) if !want.eq_ignore_ascii_case(&orig.version) => {
            Err(FileError::Stale {
                expected: want.clone(),
                actual: orig.version.clone(),
            })
        }
        _ => Ok(()),
    }
}

/// Reads and decodes a file (or takes its `documents[]` text). With `check`, its expectHash is
/// checked against the bytes before anything is decoded (§3a). A failure after the bytes were
/// read comes with the file as read, undecoded (its `doc` empty, [`Original::decoded`] false).
///
/// With `defer`, a decoded file of [`DEFER_HASH`] bytes or more that has no expectHash to check
/// comes back with its version empty, for [`fill`] to hash it while it matches the edits.
fn read<E: From<FileError> + ReadError>(
    root: &Root,
    path: &str,
    rel: &PathBuf,
    docs: &HashMap<PathBuf, &str>,
    check: Option<&FileRequest>,
    defer: bool,
) -> Result<Original, E> {
    if let Some(text) = docs.get(rel) {
        let (bom, body) = match text.strip_prefix('\u{FEFF}') {
            Some(b) => (true, b),
            None => (false, *text),
        };
        let doc = Document::from_text(body.to_string(), bom);
        let version = crate::hash::version(&doc.to_bytes());
        let orig = Original {
            doc,
            version,
            fingerprint: None,
            nlink: 1,
            target_rel: None,
            decoded: true,
            raw: None,
            marks: Default::default(),
            pending: None,
        };
        if let Some(fr) = check
            && let Err(f) = check_hash(fr, Some(&orig))
        {
            return Err(E::with_read(f, orig));
        }
        return Ok(orig);
    }
    let mut snap = root
        .read_unversioned(path)
        .map_err(|e| E::from(FileError::Fs(e)))?;
    let expected = check.is_some_and(|fr| fr.expect_hash.is_some());
    let mut marks = crate::hash::Marks::default();
    if !defer || expected || snap.bytes.len() < DEFER_HASH {
        (snap.fingerprint.version, marks) = crate::hash::Marks::version(&[&snap.bytes]);
    }
    let target_rel = snap.via_symlink.then_some(snap.target_rel);
    let mut orig = Original {
        doc: Document::from_text(String::new(), false),
        version: snap.fingerprint.version.clone(),
        fingerprint: Some(snap.fingerprint),
        nlink: snap.nlink,
        target_rel,
        decoded: false,
        raw: None,
        marks,
        pending: None,
    };
    if let Some(fr) = check
        && let Err(f) = check_hash(fr, Some(&orig))
    {
        return Err(E::with_read(f, orig));
    }
    match Document::decode_or_keep(snap.bytes) {
        Ok(doc) => {
            orig.doc = doc;
            orig.decoded = true;
            Ok(orig)
        }
        Err((e, bytes)) => {
            if orig.version.is_empty() {
                set_version(&mut orig, crate::hash::version(&bytes));
            }
            orig.raw = Some(bytes);
            Err(E::with_read(FileError::Decode(e), orig))
        }
    }
}

/// Reads a file that is replaced or removed as a whole: decoded when it is text (for the diff),
/// kept undecoded when it is not.
fn read_any(
    root: &Root,
    path: &str,
    rel: &PathBuf,
    docs: &HashMap<PathBuf, &str>,
) -> Result<Original, FileError> {
    match read::<(FileError, Option<Original>)>(root, path, rel, docs, None, false) {
        Ok(o) | Err((FileError::Decode(_), Some(o))) => Ok(o),
        Err((f, _)) => Err(f),
    }
}

/// How [`read`] reports a failure that came after the bytes were read.
trait ReadError {
    fn with_read(f: FileError, read: Original) -> Self;
}

impl ReadError for FileError {
    fn with_read(f: FileError, _: Original) -> Self {
        f
    }
}

impl From<FileError> for (FileError, Option<Original>) {
    fn from(f: FileError) -> Self {
        (f, None)
    }
}

impl ReadError for (FileError, Option<Original>) {
    fn with_read(f: FileError, read: Original) -> Self {
        (f, Some(read))
    }
}
