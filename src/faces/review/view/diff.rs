//! The diff pane: unified or split, built row by row for the visible window only.

use super::text;
use super::theme::Theme;
use crate::engine::diff::Tag;
use crate::faces::review::model::{Model, Search, State};
use crate::faces::review::rows::{FileRows, Row, RowKind};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

pub fn draw(m: &Model, f: &mut Frame, area: Rect, t: Theme) {
    let file = m.cursor.file;
    let info = m.files.get(file);
    let title = match info {
        Some(info) => {
            let tally = m.file_tally(file);
            // The edit's own number (as in the gutter), then how many units the file has.
            let pos = m
                .current_unit()
                .map(|u| {
                    let unit = &info.units[u];
                    let what = match unit.kind {
                        crate::faces::review::model::UnitKind::Edit(_) => {
                            format!("edit {}", unit.label())
                        }
                        crate::faces::review::model::UnitKind::Content => "new content".into(),
                        crate::faces::review::model::UnitKind::Delete => "deletion".into(),
                        crate::faces::review::model::UnitKind::Move => "rename".into(),
                    };
                    format!(" · {what} of {}", info.units.len())
                })
                .unwrap_or_default();
            let flags = match (tally.normalized > 0, tally.failed > 0) {
                (true, true) => " ≈ !",
                (true, false) => " ≈",
                (false, true) => " !",
                _ => "",
            };
            let note = m
                .current_unit()
                .and_then(|u| m.note(file, u))
                .map_or("", |_| " ✎ note");
            format!(" {} {}{pos}{flags}{note} ", tally.glyph(), info.display)
        }
        None => " (empty batch) ".into(),
    };
    let block = Block::bordered()
        .title(Line::from(title).style(t.bold()))
        .border_style(t.focus_border());
    let inner = block.inner(area);
    f.render_widget(block, area);
    let Some(fr) = m.file_rows(file) else { return };
    let h = inner.height as usize;
    let cur_unit = m.current_unit();
    let id_w = m.files[file]
        .units
        .iter()
        .map(|u| u.label().len())
        .max()
        .unwrap_or(2);
    let gutter = Gutter {
        id_w,
        no_w: fr.number_width,
    };
    let cursor_display = if m.split {
        fr.split_of.get(m.cursor.row).copied().unwrap_or(0)
    } else {
        m.cursor.row
    };
    let total = if m.split {
        fr.split.len()
    } else {
        fr.rows.len()
    };
    for k in 0..h {
        let d = m.scroll + k;
        if d >= total {
            break;
        }
        let r = Rect::new(inner.x, inner.y + k as u16, inner.width, 1);
        let line = if m.split {
            split_row(m, fr, d, inner.width as usize, &gutter, cur_unit, t)
        } else {
            unified_row(m, fr, d, inner.width as usize, &gutter, cur_unit, t)
        };
        // The cursor row's background goes under the text: word emphasis and search hits keep
        // their own backgrounds on top of it.
        if d == cursor_display {
            f.buffer_mut().set_style(r, t.cursor());
        }
        f.render_widget(Paragraph::new(line), r);
    }
}

struct Gutter {
    /// Width of `#n`.
    id_w: usize,
    /// Width of a line number.
    no_w: usize,
}

/// Decision marker, edit id and flag for a row: `▌✓ #3≈ `.
fn edit_gutter(
    m: &Model,
    fr: &FileRows,
    row: Option<usize>,
    g: &Gutter,
    cur: Option<usize>,
    t: Theme,
) -> Vec<Span<'static>> {
    let unit = row.and_then(|r| fr.rows[r].unit);
    let Some(u) = unit else {
        return vec![Span::raw(" ".repeat(3 + g.id_w + 2))];
    };
    let file = m.cursor.file;
    let state = m.state(file, u);
    let first = row.is_some_and(|r| fr.first_row[u] == Some(r));
    let unit_info = &m.files[file].units[u];
    let flag = if state == State::Failed {
        "!"
    } else if unit_info.normalized() {
        "≈"
    } else {
        " "
    };
    let id = if first {
        format!("{:>w$}", unit_info.label(), w = g.id_w)
    } else {
        " ".repeat(g.id_w)
    };
    let marker = if cur == Some(u) {
        Span::styled("▌", t.current())
    } else {
        Span::raw(" ")
    };
    vec![
        marker,
        Span::styled(state.glyph().to_string(), t.state(state)),
        Span::raw(" "),
        Span::styled(id, if cur == Some(u) { t.current() } else { t.dim() }),
        Span::styled(flag.to_string(), t.flag()),
        Span::raw(" "),
    ]
}

fn number(n: Option<usize>, w: usize) -> String {
    match n {
        Some(n) => format!("{n:>w$}"),
        None => " ".repeat(w),
    }
}

/// Style overlays for a line: word emphasis, then search hits (`current`: the cursor's line,
/// whose hits are the current match).
fn overlays(
    m: &Model,
    tag: Tag,
    text: &str,
    emph: &[std::ops::Range<usize>],
    current: bool,
    t: Theme,
) -> Vec<(std::ops::Range<usize>, Style)> {
    let mut o: Vec<(std::ops::Range<usize>, Style)> =
        emph.iter().map(|r| (r.clone(), t.emph(tag))).collect();
    if !m.search.query.is_empty() {
        let hit = if current {
            t.search_current()
        } else {
            t.search_hit()
        };
        o.extend(
            Search::matches(&m.search.query, text)
                .into_iter()
                .map(|r| (r, hit)),
        );
    }
    o
}

/// Whether `row` is the row under the cursor.
fn is_cursor_row(m: &Model, row: &Row) -> bool {
    m.rows_of(m.cursor.file)
        .get(m.cursor.row)
        .is_some_and(|r| std::ptr::eq(r, row))
}

/// How a unit's decision tints its lines: rejected edits are dimmed.
fn decision_style(m: &Model, unit: Option<usize>) -> Style {
    match unit.map(|u| m.state(m.cursor.file, u)) {
        Some(State::Rejected) | Some(State::Stale) => {
            Style::new().add_modifier(Modifier::DIM | Modifier::CROSSED_OUT)
        }
        _ => Style::new(),
    }
}

/// The body of one row (after the line numbers) in `width` columns.
fn body(m: &Model, row: &Row, width: usize, t: Theme) -> Vec<Span<'static>> {
    let deco = decision_style(m, row.unit);
    match &row.kind {
        RowKind::Line {
            tag, text: s, emph, ..
        } => {
            let sign = match tag {
                Tag::Context => " ",
                Tag::Delete => "-",
                Tag::Insert => "+",
            };
            let base = t.line(*tag).patch(deco);
            let mut spans = vec![Span::styled(format!("{sign} "), base)];
            let ov = overlays(m, *tag, s, emph, is_cursor_row(m, row), t);
            spans.extend(text::render(s, base, &ov, t.dim(), width.saturating_sub(2)).spans);
            spans
        }
        RowKind::NoNewline { tag } => {
            vec![Span::styled(
                text_cut("\\ No newline at end of file", width),
                t.line(*tag).patch(t.dim()),
            )]
        }
        RowKind::Gap { lines } => {
            vec![Span::styled(
                text_cut(
                    &format!(
                        "⋯ {lines} unchanged line{} ⋯",
                        if *lines == 1 { "" } else { "s" }
                    ),
                    width,
                ),
                t.dim(),
            )]
        }
        RowKind::Note { text: s } => {
            let style = match row.unit.map(|u| m.state(m.cursor.file, u)) {
                Some(State::Failed) | None => t.warn(),
                _ => Style::new(),
            };
            text::render(s, style.patch(deco), &[], t.dim(), width).spans
        }
    }
}

fn text_cut(s: &str, width: usize) -> String {
    text::render(s, Style::new(), &[], Style::new(), width)
        .spans
        .iter()
        .map(|s| s.content.to_string())
        .collect()
}

fn unified_row(
    m: &Model,
    fr: &FileRows,
    d: usize,
    width: usize,
    g: &Gutter,
    cur: Option<usize>,
    t: Theme,
) -> Line<'static> {
    let row = &fr.rows[d];
    let mut spans = edit_gutter(m, fr, Some(d), g, cur, t);
    let (old_no, new_no) = match row.kind {
        RowKind::Line { old_no, new_no, .. } => (old_no, new_no),
        _ => (None, None),
    };
    spans.push(Span::styled(
        format!("{} {} ", number(old_no, g.no_w), number(new_no, g.no_w)),
        t.dim(),
    ));
    let used: usize = spans.iter().map(|s| s.width()).sum();
    spans.extend(body(m, row, width.saturating_sub(used), t));
    Line::from(spans)
}

fn split_row(
    m: &Model,
    fr: &FileRows,
    d: usize,
    width: usize,
    g: &Gutter,
    cur: Option<usize>,
    t: Theme,
) -> Line<'static> {
    let s = fr.split[d];
    let full = s.left.is_some() && s.left == s.right;
    let lead = s.left.filter(|&l| fr.rows[l].unit.is_some()).or(s.right);
    let mut spans = edit_gutter(m, fr, lead, g, cur, t);
    let used: usize = spans.iter().map(|s| s.width()).sum();
    let rest = width.saturating_sub(used);
    if full {
        let i = s.left.unwrap_or(0);
        let row = &fr.rows[i];
        if let RowKind::Line {
            tag: Tag::Context,
            old_no,
            new_no,
            text: s,
            ..
        } = &row.kind
        {
            // Context shows on both sides.
            let half = rest.saturating_sub(1) / 2;
            for (no, w) in [(old_no, half), (new_no, rest.saturating_sub(half + 1))] {
                spans.push(Span::styled(format!("{} ", number(*no, g.no_w)), t.dim()));
                let tw = w.saturating_sub(g.no_w + 1 + 2);
                let r = text::render(
                    s,
                    Style::new(),
                    &overlays(m, Tag::Context, s, &[], is_cursor_row(m, row), t),
                    t.dim(),
                    tw,
                );
                spans.push(Span::raw("  "));
                let pad = tw.saturating_sub(r.width);
                spans.extend(r.spans);
                spans.push(Span::raw(" ".repeat(pad)));
                if no == old_no {
                    spans.push(Span::styled("│", t.border()));
                }
            }
            return Line::from(spans);
        }
        spans.extend(body(m, row, rest, t));
        return Line::from(spans);
    }
    let half = rest.saturating_sub(1) / 2;
    for (side, w, left) in [
        (s.left, half, true),
        (s.right, rest.saturating_sub(half + 1), false),
    ] {
        match side {
            Some(i) => {
                let row = &fr.rows[i];
                let no = match row.kind {
                    RowKind::Line { old_no, new_no, .. } => {
                        if left {
                            old_no
                        } else {
                            new_no
                        }
                    }
                    _ => None,
                };
                spans.push(Span::styled(format!("{} ", number(no, g.no_w)), t.dim()));
                let b = body(m, row, w.saturating_sub(g.no_w + 1), t);
                let bw: usize = b.iter().map(|s| s.width()).sum();
                spans.extend(b);
                spans.push(Span::raw(" ".repeat(w.saturating_sub(g.no_w + 1 + bw))));
            }
            None => spans.push(Span::styled(" ".repeat(w), t.dim())),
        }
        if left {
            spans.push(Span::styled("│", t.border()));
        }
    }
    Line::from(spans)
}
