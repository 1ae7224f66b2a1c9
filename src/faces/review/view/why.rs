//! The "why" drawer (`i`): how the edit under the cursor matched, or why it could not.
//!
//! For a resolved edit: the match kind, the normalizations it needed, expected (oldText) against
//! found (the file's text there) with whitespace visible and the differing characters marked,
//! where it is and how many candidates there were. For a failed edit: the engine's error, its
//! hint, and the closest candidates with scores or the ambiguous locations.

use super::text::{self, visible_whitespace};
use super::theme::Theme;
use crate::engine::document::{Document, Eol};
use crate::engine::failure::places;
use crate::engine::matcher::MatchKind;
use crate::engine::normalize::lf;
use crate::engine::plan::{EditPlan, FilePlan, Outcome};
use crate::faces::review::model::{Model, State};
use crate::faces::review::unit::UnitKind;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use similar::{Algorithm, DiffTag, capture_diff_slices};

/// Lines compared character by character at most this long.
const CHAR_DIFF_MAX: usize = 400;

pub(super) fn draw(m: &Model, f: &mut Frame, area: Rect, t: Theme) {
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
    let inner_h = area.height.saturating_sub(2) as usize;
    let total = content_height(m, area.width.saturating_sub(2) as usize);
    let scroll = m.drawer_scroll.min(total.saturating_sub(inner_h));
    let mut title_line = Line::from(title).style(t.bold());
    if total > inner_h {
        let last = (scroll + inner_h).min(total);
        title_line.push_span(Span::styled(
            format!(
                "rows {}–{last} of {total} · {} ",
                scroll + 1,
                match (scroll > 0, last < total) {
                    (true, true) => "Ctrl-e/Ctrl-y scroll",
                    (false, _) => "Ctrl-e scrolls down",
                    (true, false) => "Ctrl-y scrolls up",
                }
            ),
            t.warn(),
        ));
    }
    let block = Block::bordered()
        .title(title_line)
        .border_style(t.focus_border());
    let inner = block.inner(area);
    f.render_widget(block, area);
    f.render_widget(
        Paragraph::new(lines)
            .wrap(ratatui::widgets::Wrap { trim: false })
            .scroll((scroll as u16, 0)),
        inner,
    );
}

/// Rows the drawer's content takes at `width` columns (wrapped), for sizing the drawer.
pub(super) fn content_height(m: &Model, width: usize) -> usize {
    let Some(u) = m.current_unit() else { return 1 };
    let (_, lines) = explain(m, m.cursor.file, u, width, Theme::plain());
    let w = width.max(1);
    lines.iter().map(|l| l.width().div_ceil(w).max(1)).sum()
}

fn label(t: Theme, s: &str) -> Span<'static> {
    Span::styled(format!("{s:<9} "), t.dim())
}

/// (title, lines) for unit `u` of `file`.
pub(super) fn explain(
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
                .id()
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
                        // Normalized, and any looser kind the engine adds (the relaxed tier of
                        // SPEC §3b): its name, then what had to be normalized or relaxed.
                        kind => (
                            format!(
                                "{} — it matched only after: {}",
                                kind.as_str(),
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
                    // What goes in when the relaxed tier rewrote newText (re-indented, prefixes
                    // or mirrored blank lines dropped).
                    if r.kind == MatchKind::Relaxed
                        && lf(r.replacement(&e.spec)) != lf(e.spec.new_text())
                    {
                        block(&mut out, "written", &lf(r.replacement(&e.spec)), t);
                    }
                    if let Some(doc) = doc {
                        out.push(Line::from(vec![
                            label(t, "where"),
                            Span::raw(location(doc, &r.spans, e.spec.replace_all)),
                        ]));
                        if doc.eol != Eol::Lf && e.spec.new_text().contains('\n') {
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
                        let found = &doc.text[span.clone()];
                        // What the agent expected against what is there: only when they differ.
                        if r.kind != MatchKind::Exact {
                            compare(&mut out, e.spec.old_text(), found, width, t);
                        }
                        // What the edit does there: the file's text now → what will be written.
                        out.push(Line::from(vec![
                            label(t, "change"),
                            Span::styled("the file's text here → what accepting writes", t.dim()),
                        ]));
                        compare_as(
                            &mut out,
                            ("old", "new"),
                            found,
                            r.replacement(&e.spec),
                            width,
                            t,
                        );
                    }
                }
                Outcome::Failed(fl) => {
                    // Edits are 1-based on this screen (`#1`), so the message counts them so too.
                    let said = crate::report::message::edit_numbered(
                        fl,
                        &plan.path,
                        e.index,
                        doc,
                        crate::report::message::Numbering::Ordinal,
                    );
                    out.push(Line::from(vec![
                        label(t, "failed"),
                        Span::styled(fl.code().to_string(), t.error()),
                        Span::raw(format!(" — {}", said.message)),
                    ]));
                    if let Some(h) = said.hint {
                        out.push(Line::from(vec![label(t, "hint"), Span::raw(h)]));
                    }
                    if fl.already_applied().is_some() {
                        out.push(Line::from(vec![
                            label(t, "note"),
                            Span::styled(
                                "newText is already in the file: the edit looks applied",
                                t.warn(),
                            ),
                        ]));
                    }
                    if let Some(o) = fl.other_edit() {
                        out.push(Line::from(vec![
                            label(t, "overlap"),
                            Span::raw(format!("its text overlaps edit #{}", o + 1)),
                        ]));
                    }
                    if let Some(doc) = doc {
                        failure_places(&mut out, e.spec.old_text(), fl, doc, width, t);
                    }
                    out.extend(decision.iter().cloned());
                    block(&mut out, "expected", e.spec.old_text(), t);
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
                    Span::styled(crate::report::message::warning(w, &plan.path), t.warn()),
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
    let _ = width;
    block(out, "new", e.spec.new_text(), t);
    Some(())
}

fn skipped(out: &mut Vec<Line<'static>>, plan: &FilePlan, t: Theme) {
    if let Some(fl) = &plan.failure {
        let said = crate::report::message::file(fl, &plan.path);
        out.push(Line::from(vec![
            label(t, "file"),
            Span::styled(fl.code().to_string(), t.error()),
            Span::raw(format!(" — {}", said.message)),
        ]));
        if let Some(h) = said.hint {
            out.push(Line::from(vec![label(t, "hint"), Span::raw(h)]));
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
        "indentation" => "indentation shifted (newText re-indented)",
        "tabs" => "tabs vs spaces",
        "inner_whitespace" => "runs of spaces inside lines",
        "line_numbers" => "read-tool line numbers stripped",
        "blank_lines" => "blank lines at the ends ignored",
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

/// The nearest non-blank line above the line holding byte `at`.
fn line_before(text: &str, at: usize) -> Option<&str> {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[..start]
        .trim_end_matches(['\n', '\r'])
        .lines()
        .rev()
        .take(50)
        .find(|l| !l.trim().is_empty())
}

/// Every line of `s` (up to [`COMPARE_MAX_LINES`]) with whitespace visible, under `name`.
fn block(out: &mut Vec<Line<'static>>, name: &str, s: &str, t: Theme) {
    let lines: Vec<&str> = s.split('\n').collect();
    for (k, l) in lines.iter().take(COMPARE_MAX_LINES).enumerate() {
        let mut v = visible_whitespace(l);
        if k + 1 < lines.len() {
            v.push('⏎');
        }
        let mut spans = vec![label(t, if k == 0 { name } else { "" })];
        spans.extend(text::spans_of(&text::cells(
            &v,
            Style::new(),
            &[],
            &[],
            t.dim(),
        )));
        out.push(Line::from(spans));
    }
    if lines.len() > COMPARE_MAX_LINES {
        out.push(Line::from(vec![
            label(t, ""),
            Span::styled(
                format!("… {} more line(s)", lines.len() - COMPARE_MAX_LINES),
                t.dim(),
            ),
        ]));
    }
}

fn failure_places(
    out: &mut Vec<Line<'static>>,
    expected: &str,
    fl: &crate::engine::failure::EditError,
    doc: &Document,
    width: usize,
    t: Theme,
) {
    for c in fl.candidates() {
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
            Span::raw(format!("{at}, the lines that differ:")),
        ]));
        // Every differing line, never folded away behind a count.
        compare(out, expected, &doc.text[c.span.clone()], width, t);
    }
    let (matches, occurrences) = (fl.matches(), fl.occurrences());
    if !matches.is_empty() {
        let lines: Vec<String> = matches
            .iter()
            .map(|m| (doc.line_of(m.start) + 1).to_string())
            .collect();
        let more = if occurrences > matches.len() {
            format!(" (of {})", places(occurrences))
        } else {
            String::new()
        };
        out.push(Line::from(vec![
            label(t, "matches"),
            Span::raw(format!(
                "{} places{more}: lines {}",
                places(occurrences.max(matches.len())),
                lines.join(", ")
            )),
        ]));
        // Each place with the line above it, so they can be told apart.
        for (k, m) in matches.iter().enumerate() {
            let line = doc.line_of(m.start) + 1;
            let before = line_before(&doc.text, m.start);
            let mut spans = vec![
                label(t, ""),
                Span::styled(format!("{}. line {line}", k + 1), t.flag()),
            ];
            match before {
                Some(b) => {
                    spans.push(Span::styled("  after: ", t.dim()));
                    let cells = text::cells(b.trim(), Style::new(), &[], &[], t.dim());
                    spans.extend(text::spans_of(&cells));
                }
                None => spans.push(Span::styled("  at the start of the file", t.dim())),
            }
            out.push(Line::from(spans));
        }
    }
}

/// Most lines of one comparison shown; past this the drawer says how many more differ.
const COMPARE_MAX_LINES: usize = 24;

/// Expected (oldText) against found (the file's span), line by line, whitespace visible, the
/// characters that differ emphasized. Every line that differs is shown (up to
/// [`COMPARE_MAX_LINES`]); runs of equal lines fold into one `⋯ n equal lines` row, so a single
/// differing line is never hidden behind a count.
fn compare(out: &mut Vec<Line<'static>>, expected: &str, found: &str, width: usize, t: Theme) {
    compare_as(out, ("expected", "found"), expected, found, width, t)
}

/// [`compare`] with other labels (`old`/`new` for what the edit changes). Lines are matched by
/// a line diff, so an inserted line shows as one new line rather than shifting every pair.
fn compare_as(
    out: &mut Vec<Line<'static>>,
    names: (&str, &str),
    a: &str,
    b: &str,
    width: usize,
    t: Theme,
) {
    let _ = width;
    let a_lf = crate::engine::normalize::lf(a);
    let b_lf = crate::engine::normalize::lf(b);
    let al: Vec<&str> = a_lf.split('\n').collect();
    let bl: Vec<&str> = b_lf.split('\n').collect();
    let ops = capture_diff_slices(Algorithm::Myers, &al, &bl);
    if ops.iter().all(|op| op.as_tag_tuple().0 == DiffTag::Equal) {
        out.push(Line::from(vec![
            label(t, names.0),
            Span::styled(format!("identical to {}", names.1), t.dim()),
        ]));
        return;
    }
    let mut shown = 0usize;
    let mut more = 0usize;
    let mut named = (false, false);
    let mut line = |out: &mut Vec<Line<'static>>,
                    which: bool,
                    s: &str,
                    emph: &[std::ops::Range<usize>],
                    last: bool| {
        let name = if which { names.1 } else { names.0 };
        let seen = if which { &mut named.1 } else { &mut named.0 };
        let lbl = if *seen { "" } else { name };
        *seen = true;
        let mut text = String::new();
        let mut ov = Vec::new();
        let tag = if which {
            crate::engine::diff::Tag::Insert
        } else {
            crate::engine::diff::Tag::Delete
        };
        for (i, c) in s.char_indices() {
            let start = text.len();
            text.push_str(&visible_whitespace(&c.to_string()));
            if emph.iter().any(|r| r.contains(&i)) {
                ov.push((start..text.len(), t.emph(tag)));
            }
        }
        if !last {
            text.push('⏎');
        }
        let mut spans = vec![label(t, lbl)];
        // Never cut: the drawer wraps long lines, so a difference far right still shows.
        spans.extend(text::spans_of(&text::cells(
            &text,
            Style::new(),
            &ov,
            &[],
            t.dim(),
        )));
        out.push(Line::from(spans));
    };
    for op in ops {
        let (tag, ro, rn) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            let n = ro.len();
            out.push(Line::from(vec![
                label(t, ""),
                Span::styled(
                    format!("⋯ {n} equal line{}", if n == 1 { "" } else { "s" }),
                    t.dim(),
                ),
            ]));
            continue;
        }
        if shown >= COMPARE_MAX_LINES {
            more += ro.len().max(rn.len());
            continue;
        }
        // Pairs in order get character emphasis; the rest are whole lines.
        let pairs = ro.len().min(rn.len());
        let emph: Vec<_> = (0..pairs)
            .map(|k| char_diff(al[ro.start + k], bl[rn.start + k]))
            .collect();
        for (k, i) in ro.clone().enumerate() {
            let e = emph.get(k).map(|p| p.0.as_slice()).unwrap_or(&[]);
            line(out, false, al[i], e, i + 1 == al.len());
        }
        for (k, i) in rn.clone().enumerate() {
            let e = emph.get(k).map(|p| p.1.as_slice()).unwrap_or(&[]);
            line(out, true, bl[i], e, i + 1 == bl.len());
        }
        shown += ro.len().max(rn.len());
    }
    // Trailing equal lines say nothing.
    if out
        .last()
        .is_some_and(|l| l.spans.iter().any(|s| s.content.starts_with("⋯ ")))
    {
        out.pop();
    }
    if more > 0 {
        out.push(Line::from(vec![
            label(t, ""),
            Span::styled(format!("… {more} more differing line(s)"), t.dim()),
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
