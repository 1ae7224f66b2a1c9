//! Reasons written for the model: short, and actionable on the first retry. Each failing edit
//! is named (1-based, as the model counts its own list), with its code, what went wrong and the
//! closest places in the file with 1-based line numbers.

use crate::engine::document::Document;
use crate::engine::hint::Candidate;
use crate::engine::plan::{EditError, FileError, FilePlan, Outcome};
use crate::error::Code;
use crate::report::message::{self, Said};
use std::fmt::Write as _;

/// Lines shown of one candidate.
const CANDIDATE_LINES: usize = 8;

/// The 1-based line range `a-b` (or `a`) of a byte span.
pub(crate) fn lines(doc: &Document, span: &std::ops::Range<usize>) -> String {
    let first = doc.line_of(span.start) + 1;
    let end = if span.end > span.start {
        span.end - 1
    } else {
        span.end
    };
    let last = doc.line_of(end) + 1;
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    }
}

/// The lines of `span`, each prefixed with its 1-based number (at most [`CANDIDATE_LINES`]).
fn numbered(doc: &Document, span: &std::ops::Range<usize>) -> String {
    let first = doc.line_of(span.start);
    let last = doc.line_of(span.end.saturating_sub(1).max(span.start));
    let mut out = String::new();
    for l in first..=last.min(first + CANDIDATE_LINES - 1) {
        let text = &doc.text[doc.line_start(l)..doc.line_content_end(l)];
        let _ = writeln!(out, "    {:>5} | {}", l + 1, text);
    }
    if last >= first + CANDIDATE_LINES {
        let _ = writeln!(
            out,
            "          | … ({} more lines)",
            last + 1 - first - CANDIDATE_LINES
        );
    }
    out
}

/// What a failure is, for [`failure_text`]: the code, the words, and the places.
struct Told<'a> {
    code: Code,
    said: Said,
    candidates: &'a [Candidate],
    matches: &'a [std::ops::Range<usize>],
    already_applied: bool,
}

impl<'a> Told<'a> {
    fn file(f: &FileError, path: &str) -> Told<'a> {
        Told {
            code: f.code(),
            said: message::file(f, path),
            candidates: &[],
            matches: &[],
            already_applied: false,
        }
    }

    fn edit(e: &'a EditError, path: &str, index: usize, doc: Option<&Document>) -> Told<'a> {
        Told {
            code: e.code(),
            said: message::edit(e, path, index, doc),
            candidates: e.candidates(),
            matches: e.matches(),
            already_applied: e.already_applied().is_some(),
        }
    }
}

/// What one failure says, with its candidates.
fn failure_text(out: &mut String, f: &Told<'_>, doc: Option<&Document>, old_field: &str) {
    let _ = writeln!(out, "{}: {}", f.code.as_str(), f.said.message);
    if let Some(doc) = doc {
        match f.code {
            Code::Ambiguous if !f.matches.is_empty() => {
                let at: Vec<String> = f
                    .matches
                    .iter()
                    .map(|m| (doc.line_of(m.start) + 1).to_string())
                    .collect();
                let _ = writeln!(
                    out,
                    "  it matches at lines {}; add lines around it to {old_field} so that it is unique",
                    at.join(", ")
                );
            }
            _ => {
                for c in f.candidates {
                    let _ = writeln!(
                        out,
                        "  closest: {} (similarity {:.2}):",
                        lines(doc, &c.span),
                        c.score
                    );
                    out.push_str(&numbered(doc, &c.span));
                }
            }
        }
    }
    if f.already_applied {
        let _ = writeln!(
            out,
            "  its new text is already in the file: the edit may be done"
        );
    }
    if let Some(h) = &f.said.hint {
        let _ = writeln!(out, "  hint: {h}");
    }
}

/// The reason a batch of edits to one file was refused.
pub(crate) fn refused(file: &FilePlan, shown: &str, old_field: &str) -> String {
    let mut out = format!("redline refused this edit of {shown}; nothing was written.\n");
    let doc = file.original.as_ref().map(|o| &o.doc);
    if let Some(f) = &file.failure {
        failure_text(&mut out, &Told::file(f, &file.path), doc, old_field);
        return out;
    }
    let total = file.edits.len();
    for e in &file.edits {
        if let Outcome::Failed(f) = &e.outcome {
            if total > 1 {
                let _ = write!(out, "edit {} of {total}: ", e.index + 1);
            }
            failure_text(
                &mut out,
                &Told::edit(f, &file.path, e.index, doc),
                doc,
                old_field,
            );
        }
    }
    let _ = writeln!(
        out,
        "Copy {old_field} exactly from the file (without line-number prefixes) and send the edit again."
    );
    out
}

/// The reason an edit that matched only after normalization is sent back with the exact text
/// (the harness would not let a rewrite through without its own prompt).
pub(crate) fn exact_text_needed(
    shown: &str,
    old_field: &str,
    exact: &[(usize, String, String)],
) -> String {
    let mut out = format!(
        "redline: {old_field} does not match {shown} exactly (it matches only after normalizing \
         whitespace or punctuation); nothing was written. Send the edit again with {old_field} \
         copied exactly as below.\n"
    );
    let total = exact.len();
    for (i, where_, old) in exact.iter().map(|(i, w, o)| (i, w, o)) {
        if total > 1 {
            let _ = write!(out, "edit {}: ", i + 1);
        }
        // As a JSON string: unambiguous about trailing spaces and the final newline.
        let quoted = serde_json::to_string(old).unwrap_or_default();
        let _ = writeln!(out, "{where_}, exact {old_field} (a JSON string): {quoted}");
    }
    out
}
