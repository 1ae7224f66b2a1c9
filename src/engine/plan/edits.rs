//! Matching the edits of one file (§3.4–§3.10) and placing Codex chunks (§6) into edit plans.

use super::{EditPlan, Outcome, Resolution, Spans, skipped};
use crate::engine::document::Document;
use crate::engine::failure::{Clue, EditError};
use crate::engine::hint;
use crate::engine::matcher::applied::{Wanted, Within, already_applied};
use crate::engine::matcher::{self, MatchKind, Miss, Needle};
use crate::engine::normalize::{Normalized, lf};
use crate::engine::relaxed::{self, Tolerance};
use crate::request::{EditSpec, FileRequest};
use std::ops::Range;

/// How far matching goes for one file.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MatchOptions {
    /// How far matching may go (`--tolerance`).
    pub tolerance: Tolerance,
    /// The tab width the project declares (`.editorconfig`), for the relaxed tier's `tabs`.
    pub tab_width: Option<usize>,
}

/// Matches the edits of one file (§3.4–§3.10) under the default tolerance (`relaxed`).
#[cfg(test)]
pub(crate) fn match_edits(doc: &Document, specs: &[EditSpec]) -> Vec<EditPlan> {
    match_edits_with(doc, specs, MatchOptions::default())
}

/// Matches the edits of one file (§3.4–§3.10, and §3b under `--tolerance relaxed`).
pub(crate) fn match_edits_with(
    doc: &Document,
    specs: &[EditSpec],
    opts: MatchOptions,
) -> Vec<EditPlan> {
    let file = Normalized::new(&doc.text);
    // Insertions and no-ops are decided here, every other edit by the search.
    let mut early: Vec<(usize, Outcome)> = Vec::new();
    let mut needles = Vec::with_capacity(specs.len());
    let mut needle_of = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        if let Some(after) = spec.insert_after_line() {
            early.push((i, insertion(doc, after, spec.new_text())));
            continue;
        }
        if lf(spec.old_text()) == lf(spec.new_text()) {
            early.push((i, Outcome::Failed(EditError::NoOp)));
            continue;
        }
        needles.push(Needle {
            old_text: spec.old_text(),
            replace_all: spec.replace_all,
            line_based: spec.line_based,
        });
        needle_of.push(i);
    }
    let found = matcher::find_all(&doc.text, &file, &needles);
    drop(needles);
    // The plan's records are made after the search, not next to its automaton (for 10,000
    // failing edits they are the biggest thing the plan holds).
    let mut out: Vec<EditPlan> = skipped(specs);
    for (i, outcome) in early {
        out[i].outcome = outcome;
    }
    let mut not_found = Vec::new();
    for (k, res) in found.into_iter().enumerate() {
        let i = needle_of[k];
        let res = match opts.tolerance {
            Tolerance::Exact => only_exact(&doc.text, specs[i].old_text(), res),
            _ => res,
        };
        out[i].outcome = match res {
            Ok(mut f) => {
                let sent = specs[i].new_text();
                let mut replacement = doc.eol_adapted(sent);
                if f.at_eof {
                    // §6: the file keeps having no final newline.
                    eof_keeps_state(&doc.text, &mut f.spans[0], replacement.to_mut());
                }
                Outcome::Resolved(Box::new(Resolution {
                    kind: f.kind,
                    normalizations: f.normalizations,
                    spans: f.spans.into(),
                    replaced_by: Resolution::replaced_by(replacement, sent),
                }))
            }
            Err(Miss::Ambiguous { spans, count }) => Outcome::Failed(EditError::Ambiguous {
                matches: spans,
                occurrences: count,
                relaxed: false,
            }),
            Err(Miss::TooLarge) => Outcome::Failed(EditError::TooManyPlaces {
                relaxed: false,
                replace_all: specs[i].replace_all,
            }),
            Err(Miss::NotFound) => {
                not_found.push(i);
                // The candidates and clues come below, for all of them at once.
                Outcome::Failed(EditError::NotFound {
                    candidates: Vec::new(),
                    clue: None,
                })
            }
        };
    }
    // The relaxed tier (§3b), only for what §3 did not find. The candidates it could not take,
    // by edit, ascending (few: not a slot per edit).
    let mut cannot_take: Vec<(usize, Clue)> = Vec::new();
    if opts.tolerance == Tolerance::Relaxed && !not_found.is_empty() {
        relax(
            doc,
            &file,
            specs,
            opts,
            &mut out,
            &mut not_found,
            &mut cannot_take,
        );
    }
    // Overlaps between resolved edits (touching is fine).
    let mut spans: Vec<(Range<usize>, usize)> = out
        .iter()
        .filter_map(|e| e.resolution().map(|r| (e.index, r)))
        .flat_map(|(i, r)| r.spans.iter().map(move |s| (s.clone(), i)))
        .collect();
    spans.sort_by_key(|(s, _)| (s.start, s.end));
    let mut overlaps: Vec<(usize, usize, usize)> = Vec::new();
    let mut reach: Option<(usize, usize)> = None; // (end, edit) of the furthest-reaching span
    for (s, i) in &spans {
        if let Some((end, j)) = reach
            && s.start < end
            && *i != j
        {
            overlaps.push((*i, j, s.start));
        }
        if reach.is_none_or(|(end, _)| s.end > end) {
            reach = Some((s.end, *i));
        }
    }
    for (i, j, at) in overlaps {
        for (a, b) in [(i, j), (j, i)] {
            if matches!(out[a].outcome, Outcome::Resolved(_)) {
                out[a].outcome = Outcome::Failed(EditError::Overlap { other_edit: b, at });
            }
        }
    }
    if !not_found.is_empty() {
        let olds: Vec<&str> = not_found.iter().map(|&i| specs[i].old_text()).collect();
        let index = crate::engine::matcher::line_index(doc, &file);
        let mut cands = hint::candidates(&file, &index, &olds);
        drop(index);
        drop(olds);
        let applied = already_applied(doc, &file, not_found.len(), |k| Wanted {
            old: specs[not_found[k]].old_text(),
            new: specs[not_found[k]].new_text(),
            within: Within::Text,
        });
        for (k, &i) in not_found.iter().enumerate() {
            // A candidate the relaxed tier could not take says more than newText being there.
            let clue = cannot_take
                .binary_search_by_key(&i, |(j, _)| *j)
                .ok()
                .map(|at| cannot_take[at].1.clone())
                .or(applied[k].map(|at| Clue::AlreadyApplied { at }));
            out[i].outcome = Outcome::Failed(EditError::NotFound {
                candidates: std::mem::take(&mut cands[k]),
                clue: clue.map(Box::new),
            });
        }
    }
    out
}

/// Under `--tolerance exact`: only the occurrences whose original text is `old` (line endings
/// aside) count. With more than [`matcher::MAX_AMBIGUOUS`] normalized occurrences only the listed
/// ones are looked at, and the edit stays ambiguous.
fn only_exact(
    text: &str,
    old: &str,
    res: Result<matcher::Found, Miss>,
) -> Result<matcher::Found, Miss> {
    let old = lf(old);
    let exact = |s: &Range<usize>| lf(&text[s.clone()]) == old;
    match res {
        Ok(f) if f.kind == MatchKind::Exact => Ok(f),
        Ok(f) => {
            let spans: Vec<Range<usize>> = f.spans.iter().filter(|s| exact(s)).cloned().collect();
            if spans.is_empty() {
                Err(Miss::NotFound)
            } else {
                Ok(matcher::Found {
                    spans,
                    kind: MatchKind::Exact,
                    normalizations: Vec::new(),
                    ..f
                })
            }
        }
        Err(Miss::Ambiguous { spans, count }) if count <= spans.len() => {
            let spans: Vec<Range<usize>> = spans.into_iter().filter(|s| exact(s)).collect();
            match spans.len() {
                0 => Err(Miss::NotFound),
                1 => Ok(matcher::Found {
                    spans,
                    kind: MatchKind::Exact,
                    normalizations: Vec::new(),
                    at_eof: false,
                }),
                n => Err(Miss::Ambiguous { spans, count: n }),
            }
        }
        other => other,
    }
}

/// What the relaxed tier's search holds per edit besides its texts, about (bytes).
const RELAXED_PER_EDIT: usize = 256;
/// The least weight of a group of edits through the relaxed tier's search (bytes).
const RELAXED_GROUP: usize = 64 * 1024;

/// Runs the relaxed tier for the edits in `not_found` (ascending), taking out the ones it
/// decides; a candidate it found but could not take goes to `cannot_take` (ascending).
#[allow(clippy::too_many_arguments)]
fn relax(
    doc: &Document,
    file: &Normalized,
    specs: &[EditSpec],
    opts: MatchOptions,
    out: &mut [EditPlan],
    not_found: &mut Vec<usize>,
    cannot_take: &mut Vec<(usize, Clue)>,
) {
    let view = relaxed::View::new(doc, file, opts.tab_width);
    let wanted = |i: usize| relaxed::Wanted {
        old_text: specs[i].old_text(),
        new_text: specs[i].new_text(),
        replace_all: specs[i].replace_all,
    };
    // The view's search builds a few hundred bytes per edit (its variants, their N(·) lines and
    // key sequences): many edits go through it in groups, each a sixteenth of file plus edits
    // at least, so that memory stays near the file plus the request while the file's line keys
    // are scanned at most 16 times beyond the first groups. Each edit's result depends on it
    // alone, so grouping changes nothing else; a group's edits and results are made and
    // consumed one group at a time.
    let weight =
        |i: usize| specs[i].old_text().len() + specs[i].new_text().len() + RELAXED_PER_EDIT;
    let total: usize = not_found.iter().map(|&i| weight(i)).sum();
    let group = RELAXED_GROUP.max((doc.text.len() + total) / 16);
    let mut still = Vec::new();
    let mut rest = &not_found[..];
    let mut groups = 0;
    while !rest.is_empty() {
        let mut bytes = 0;
        let n = rest
            .iter()
            .position(|&i| {
                bytes += weight(i);
                bytes > group
            })
            .unwrap_or(rest.len())
            .max(1);
        let (these, next) = rest.split_at(n);
        let group_wanted: Vec<relaxed::Wanted<'_>> = these.iter().map(|&i| wanted(i)).collect();
        let results = view.find_all(&group_wanted);
        drop(group_wanted);
        for (&i, r) in these.iter().zip(results) {
            match r {
                Ok(hit) => {
                    out[i].outcome = Outcome::Resolved(Box::new(Resolution {
                        kind: MatchKind::Relaxed,
                        normalizations: hit.normalizations,
                        spans: hit.spans.into(),
                        replaced_by: Resolution::replaced_by(
                            doc.eol_adapted(&hit.new_text),
                            specs[i].new_text(),
                        ),
                    }));
                }
                Err(relaxed::Fail::Ambiguous { spans, count }) => {
                    out[i].outcome = Outcome::Failed(EditError::Ambiguous {
                        matches: spans,
                        occurrences: count,
                        relaxed: true,
                    });
                }
                Err(relaxed::Fail::CannotTake { span, why }) => {
                    cannot_take.push((
                        i,
                        Clue::Reindent {
                            at: span.start,
                            why,
                        },
                    ));
                    still.push(i);
                }
                Err(relaxed::Fail::TooLarge) => {
                    out[i].outcome = Outcome::Failed(EditError::TooManyPlaces {
                        relaxed: true,
                        replace_all: false,
                    });
                }
                Err(relaxed::Fail::NotFound) => still.push(i),
            }
        }
        rest = next;
        groups += 1;
    }
    *not_found = still;
    if groups > 1 {
        // The groups' many small blocks (~900 bytes an edit) were freed, but the kept results
        // made between them pin the heap's top, so their pages stay resident under the hint
        // phase that follows (10,000 failing edits: ~0.7 MB of free heap, 0.2-0.3 MB of peak).
        give_back_free_pages();
    }
}

/// Returns the heap's free pages to the system (glibc: `malloc_trim`, which also releases whole
/// free pages below the top); elsewhere nothing.
fn give_back_free_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's free lists under the allocator's own locks.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A line-based match whose last line break stood for the end of a file without a final newline
/// (SPEC §6): a replacement ending in a line break loses it, and a deletion takes the line break
/// before the span with it, so that the file still ends without one.
fn eof_keeps_state(text: &str, span: &mut Range<usize>, replacement: &mut String) {
    if replacement.is_empty() {
        let before = &text.as_bytes()[..span.start];
        span.start -= match before {
            [.., b'\r', b'\n'] => 2,
            [.., b'\n' | b'\r'] => 1,
            _ => 0,
        };
    } else if let Some(stripped) = replacement
        .strip_suffix("\r\n")
        .or_else(|| replacement.strip_suffix('\n'))
        .or_else(|| replacement.strip_suffix('\r'))
    {
        replacement.truncate(stripped.len());
    }
}

/// An insertion of `text` as whole lines after the first `after` lines of the file (Anthropic's
/// text-editor `insert`): an empty span at the start of line `after + 1`, so the splice, the
/// overlap check and the report treat it like any edit. One final line break of `text` is
/// dropped (the inserted lines get the file's own ending); after the last line of a file with
/// no final newline the line break goes before the text, so that state is kept.
fn insertion(doc: &Document, after: usize, text: &str) -> Outcome {
    let eol = doc.eol.as_str();
    let lines = if doc.text.is_empty() || doc.final_newline() {
        doc.line_count() - 1
    } else {
        doc.line_count()
    };
    if after > lines {
        return Outcome::Failed(EditError::NoSuchLine { after, lines });
    }
    let text = text
        .strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .or_else(|| text.strip_suffix('\r'))
        .unwrap_or(text);
    let text = doc.adapt_eol(text);
    let (at, replacement) = if after < lines || doc.text.is_empty() || doc.final_newline() {
        (doc.line_start(after), format!("{text}{eol}"))
    } else {
        (doc.text.len(), format!("{eol}{text}"))
    };
    Outcome::Resolved(Box::new(Resolution {
        kind: MatchKind::Exact,
        normalizations: Vec::new(),
        spans: Spans::One(at..at),
        replaced_by: Some(replacement.into_boxed_str()),
    }))
}

/// Locates Codex patch chunks (SPEC §6); each chunk is reported as one edit.
pub(super) fn locate_chunks(doc: &Document, fr: &FileRequest, first_index: usize) -> Vec<EditPlan> {
    crate::engine::matcher::chunks::locate(doc, &fr.chunks)
        .into_iter()
        .zip(&fr.chunks)
        .enumerate()
        .map(|(k, (res, chunk))| {
            let spec = EditSpec::new(chunk.old_lines.text(), chunk.new_lines.text())
                .with_id(Some(format!("chunk@{}", chunk.line)));
            let outcome = match res {
                Ok(l) => Outcome::Resolved(Box::new(Resolution {
                    kind: if l.exact {
                        MatchKind::Exact
                    } else {
                        MatchKind::Normalized
                    },
                    normalizations: l.normalizations,
                    spans: Spans::One(l.span),
                    replaced_by: Resolution::replaced_by(
                        doc.eol_adapted(&l.new_text),
                        spec.new_text(),
                    ),
                })),
                Err(why) => Outcome::Failed(EditError::Chunk {
                    line: chunk.line,
                    why: Box::new(why),
                }),
            };
            EditPlan {
                index: first_index + k,
                spec,
                outcome,
            }
        })
        .collect()
}
