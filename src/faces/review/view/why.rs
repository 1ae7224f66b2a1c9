//! The "why" drawer (`i`): how the edit under the cursor matched, or why it could not.
//!
//! For a resolved edit: the match kind, the normalizations it needed, expected (oldText) against
//! found (the file's text there) with whitespace visible and the differing characters marked,
//! where it is and how many candidates there were. For a failed edit: the engine's error, its
//! hint, and the closest candidates with scores or the ambiguous locations.

use super::text::{self, visible_whitespace};
use super::theme::Theme;
use crate::engine::document::{Document, Eol};
use crate::engine::matcher::MatchKind;
use crate::engine::plan::{EditPlan, FilePlan, Outcome};
use crate::faces::review::model::{Model, State, UnitKind};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use similar::{Algorithm, DiffTag, capture_diff_slices};

/// Lines compared character by character at most this long.
const CHAR_DIFF_MAX: usize = 400;

pub fn draw(m: &Model, f: &mut Frame, area: Rect, t: Theme) {
    let file = m.cursor.file;
    let (title, lines) = match m.current_unit() {
        Some(u) => explain(m, file, u, area.width.saturating_sub(2) as usize, t),
        None => (
            " why ".to_string(),
            vec![Line::styled(
                "no edit on this line — ] goes to the next edit",
                t.dim(),
            )],
        ),
    };
    let block = Block::bordered()
        .title(Line::from(title).style(t.bold()))
        .border_style(t.focus_border());
    let inner = block.inner(area);
    f.render_widget(block, area);
    f.render_widget(
        Paragraph::new(lines).wrap(ratatui::widgets::Wrap { trim: false }),
        inner,
    );
}

fn label(t: Theme, s: &str) -> Span<'static> {
    Span::styled(format!("{s:<9} "), t.dim())
}

/// (title, lines) for unit `u` of `file`.
pub fn explain(
    m: &Model,
    file: usize,
    u: usize,
    width: usize,
    t: Theme,
) -> (String, Vec<Line<'static>>) {
    let info = &m.files[file];
    let unit = &info.units[u];
    let plan = &m.plan.files[file];
    let state = m.state(file, u);
    let doc = plan.original.as_ref().map(|o| &o.doc);
    let mut out: Vec<Line<'static>> = Vec::new();
    let decision = Line::from(vec![
        label(t, "decision"),
        Span::styled(
            format!("{} {}", state.glyph(), state.word()),
            t.state(state),
        ),
        Span::styled(
            match state {
                State::Undecided => "  — y accepts, d rejects",
                State::Accepted | State::Rejected => "  — Space toggles, x clears, u undoes",
                State::Failed => "  — cannot be accepted",
                State::Stale => "  — the file changed on disk; it was left as it is",
            },
            t.dim(),
        ),
    ]);
    let note = m.note(file, u).map(|n| {
        Line::from(vec![
            label(t, "note"),
            Span::styled(n.to_string(), t.key()),
            Span::styled("  — n edits", t.dim()),
        ])
    });
    let decision = std::iter::once(decision).chain(note).collect::<Vec<_>>();
    let title;
    match unit.kind {
        UnitKind::Edit(i) => {
            let e = &plan.edits[i];
            let id = e
                .spec
                .id
                .as_deref()
                .map(|id| format!(" (id {id})"))
                .unwrap_or_default();
            title = format!(" why · edit {}{id} ", unit.label());
            match &e.outcome {
                Outcome::Resolved(r) => {
                    let (kind, style) = match r.kind {
                        MatchKind::Exact => (
                            "exact — oldText is in the file as written".to_string(),
                            t.good(),
                        ),
                        MatchKind::Normalized => (
                            format!(
                                "normalized — it matched only after: {}",
                                r.normalizations
                                    .iter()
                                    .map(|n| describe(n.as_str()))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                            t.flag(),
                        ),
                    };
                    out.push(Line::from(vec![
                        label(t, "match"),
                        Span::styled(kind, style),
                    ]));
                    if let Some(doc) = doc {
                        out.push(Line::from(vec![
                            label(t, "where"),
                            Span::raw(location(doc, r.spans.as_slice(), e.spec.replace_all)),
                        ]));
                        if doc.eol != Eol::Lf && e.spec.new_text.contains('\n') {
                            out.push(Line::from(vec![
                                label(t, "endings"),
                                Span::raw(format!(
                                    "the file uses {}; newText's line breaks become {}",
                                    doc.eol.name().to_uppercase(),
                                    doc.eol.name().to_uppercase()
                                )),
                            ]));
                        }
                    }
                    out.extend(decision.iter().cloned());
                    if let (Some(doc), Some(span)) = (doc, r.spans.first()) {
                        compare(
                            &mut out,
                            &e.spec.old_text,
                            &doc.text[span.clone()],
                            width,
                            t,
                        );
                    }
                }
                Outcome::Failed(fl) => {
                    out.push(Line::from(vec![
                        label(t, "failed"),
                        Span::styled(fl.code.to_string(), t.error()),
                        Span::raw(format!(" — {}", fl.message)),
                    ]));
                    if let Some(h) = &fl.hint {
                        out.push(Line::from(vec![label(t, "hint"), Span::raw(h.clone())]));
                    }
                    if fl.already_applied {
                        out.push(Line::from(vec![
                            label(t, "note"),
                            Span::styled(
                                "newText is already in the file: the edit looks applied",
                                t.warn(),
                            ),
                        ]));
                    }
                    if let Some(o) = fl.other_edit {
                        out.push(Line::from(vec![
                            label(t, "overlap"),
                            Span::raw(format!("its text overlaps edit #{}", o + 1)),
                        ]));
                    }
                    if let Some(doc) = doc {
                        failure_places(&mut out, fl, doc, width, t);
                    }
                    out.extend(decision.iter().cloned());
                    out.push(Line::from(vec![
                        label(t, "expected"),
                        Span::raw(first_line_visible(
                            &e.spec.old_text,
                            width.saturating_sub(10),
                        )),
                    ]));
                }
                Outcome::Skipped => {
                    skipped(&mut out, plan, t);
                    out.extend(decision.iter().cloned());
                }
            }
            let _ = e_new_text(&mut out, e, width, t);
        }
        UnitKind::Content | UnitKind::Delete | UnitKind::Move => {
            title = " why ".into();
            let what = match unit.kind {
                UnitKind::Content => match plan.op {
                    crate::engine::plan::Op::Overwrite => {
                        format!("overwrites {} with new content", info.display)
                    }
                    _ => format!("creates {}", info.display),
                },
                UnitKind::Delete => format!("deletes {}", info.display),
                _ => format!("renames {}", info.display),
            };
            out.push(Line::from(vec![label(t, "file"), Span::raw(what)]));
            if plan.failure.is_some() {
                skipped(&mut out, plan, t);
            }
            for w in &plan.warnings {
                out.push(Line::from(vec![
                    label(t, "warning"),
                    Span::styled(w.message.clone(), t.warn()),
                ]));
            }
            out.extend(decision.iter().cloned());
        }
    }
    (title, out)
}

fn e_new_text(out: &mut Vec<Line<'static>>, e: &EditPlan, width: usize, t: Theme) -> Option<()> {
    if matches!(e.outcome, Outcome::Resolved(_)) {
        return None;
    }
    out.push(Line::from(vec![
        label(t, "new"),
        Span::raw(first_line_visible(
            &e.spec.new_text,
            width.saturating_sub(10),
        )),
    ]));
    Some(())
}

fn skipped(out: &mut Vec<Line<'static>>, plan: &FilePlan, t: Theme) {
    if let Some(fl) = &plan.failure {
        out.push(Line::from(vec![
            label(t, "file"),
            Span::styled(fl.code.to_string(), t.error()),
            Span::raw(format!(" — {}", fl.message)),
        ]));
        if let Some(h) = &fl.hint {
            out.push(Line::from(vec![label(t, "hint"), Span::raw(h.clone())]));
        }
    }
}

/// Words for a normalization's wire name.
fn describe(n: &str) -> &'static str {
    match n {
        "nfkc" => "Unicode compatibility forms (NFKC)",
        "trailing_whitespace" => "trailing whitespace",
        "quotes" => "curly quotes → straight",
        "dashes" => "dashes → hyphen",
        "spaces" => "special spaces → space",
        _ => "normalization",
    }
}

fn location(doc: &Document, spans: &[std::ops::Range<usize>], replace_all: bool) -> String {
    let lines = |s: &std::ops::Range<usize>| {
        let a = doc.line_of(s.start) + 1;
        let b = doc.line_of(s.end.saturating_sub(1).max(s.start)) + 1;
        if a == b {
            format!("{a}")
        } else {
            format!("{a}–{b}")
        }
    };
    match spans {
        [one] if !replace_all => {
            let l = lines(one);
            let word = if l.contains('–') { "lines" } else { "line" };
            format!("{word} {l} · unique: 1 candidate")
        }
        many => {
            let shown: Vec<String> = many.iter().take(8).map(lines).collect();
            format!(
                "replaceAll: {} occurrence{} at lines {}{}",
                many.len(),
                if many.len() == 1 { "" } else { "s" },
                shown.join(", "),
                if many.len() > 8 { ", …" } else { "" }
            )
        }
    }
}

fn failure_places(
    out: &mut Vec<Line<'static>>,
    fl: &crate::engine::plan::Failure,
    doc: &Document,
    width: usize,
    t: Theme,
) {
    for c in &fl.candidates {
        let a = doc.line_of(c.span.start) + 1;
        let b = doc.line_of(c.span.end.saturating_sub(1).max(c.span.start)) + 1;
        let at = if a == b {
            format!("line {a}")
        } else {
            format!("lines {a}–{b}")
        };
        out.push(Line::from(vec![
            label(t, "closest"),
            Span::styled(format!("{:>3.0}% ", c.score * 100.0), t.flag()),
            Span::raw(format!("{at}: ")),
            Span::styled(
                first_line_visible(&doc.text[c.span.clone()], width.saturating_sub(24)),
                t.dim(),
            ),
        ]));
    }
    if !fl.matches.is_empty() {
        let lines: Vec<String> = fl
            .matches
            .iter()
            .map(|m| (doc.line_of(m.start) + 1).to_string())
            .collect();
        let more = if fl.occurrences > fl.matches.len() {
            format!(" (of {})", fl.occurrences)
        } else {
            String::new()
        };
        out.push(Line::from(vec![
            label(t, "matches"),
            Span::raw(format!(
                "{} places{more}: lines {}",
                fl.occurrences.max(fl.matches.len()),
                lines.join(", ")
            )),
        ]));
    }
}

fn first_line_visible(s: &str, width: usize) -> String {
    let n = s.lines().count();
    let first = s.split('\n').next().unwrap_or("");
    let more = if n > 1 {
        format!("  (+{} lines)", n - 1)
    } else {
        String::new()
    };
    let v = visible_whitespace(first);
    let cut: String = text::render(
        &v,
        Style::new(),
        &[],
        Style::new(),
        width.saturating_sub(text::width(&more)),
    )
    .spans
    .iter()
    .map(|s| s.content.to_string())
    .collect();
    cut + &more
}

/// Expected (oldText) against found (the file's span), line by line, whitespace visible, the
/// characters that differ emphasized.
fn compare(out: &mut Vec<Line<'static>>, expected: &str, found: &str, width: usize, t: Theme) {
    let found_lf = crate::engine::normalize::lf(found);
    let expected_lf = crate::engine::normalize::lf(expected);
    let el: Vec<&str> = expected_lf.split('\n').collect();
    let fl: Vec<&str> = found_lf.split('\n').collect();
    let rows = el.len().max(fl.len()).min(6);
    let w = width.saturating_sub(10);
    for k in 0..rows {
        let (e, f) = (el.get(k).copied(), fl.get(k).copied());
        let (ee, fe) = match (e, f) {
            (Some(e), Some(f)) => char_diff(e, f),
            _ => (Vec::new(), Vec::new()),
        };
        for (name, s, emph) in [("expected", e, ee), ("found", f, fe)] {
            let Some(s) = s else { continue };
            let lbl = if k == 0 { name } else { "" };
            let last = k + 1 == el.len().max(fl.len());
            let mut shown = String::new();
            let mut ov = Vec::new();
            for (i, c) in s.char_indices() {
                let start = shown.len();
                shown.push_str(&visible_whitespace(&c.to_string()));
                if emph.iter().any(|r| r.contains(&i)) {
                    ov.push((start..shown.len(), t.emph(crate::engine::diff::Tag::Delete)));
                }
            }
            if !last {
                shown.push('⏎');
            }
            let mut spans = vec![label(t, lbl)];
            spans.extend(text::render(&shown, Style::new(), &ov, t.dim(), w).spans);
            out.push(Line::from(spans));
        }
    }
    let more = el.len().max(fl.len()).saturating_sub(rows);
    if more > 0 {
        out.push(Line::from(vec![
            label(t, ""),
            Span::styled(format!("… {more} more line(s)"), t.dim()),
        ]));
    }
}

/// Byte ranges of `a` and `b` whose characters differ.
fn char_diff(a: &str, b: &str) -> (Vec<std::ops::Range<usize>>, Vec<std::ops::Range<usize>>) {
    if a == b || a.len() > CHAR_DIFF_MAX || b.len() > CHAR_DIFF_MAX {
        return (Vec::new(), Vec::new());
    }
    let ca: Vec<(usize, char)> = a.char_indices().collect();
    let cb: Vec<(usize, char)> = b.char_indices().collect();
    let sa: Vec<char> = ca.iter().map(|c| c.1).collect();
    let sb: Vec<char> = cb.iter().map(|c| c.1).collect();
    let span =
        |v: &[(usize, char)], r: std::ops::Range<usize>, s: &str| -> std::ops::Range<usize> {
            let start = v[r.start].0;
            let end = v.get(r.end).map(|c| c.0).unwrap_or(s.len());
            start..end
        };
    let (mut ea, mut eb) = (Vec::new(), Vec::new());
    for op in capture_diff_slices(Algorithm::Myers, &sa, &sb) {
        let (tag, ro, rn) = op.as_tag_tuple();
        if tag != DiffTag::Equal {
            if !ro.is_empty() {
                ea.push(span(&ca, ro, a));
            }
            if !rn.is_empty() {
                eb.push(span(&cb, rn, b));
            }
        }
    }
    (ea, eb)
}
