//! The diff pane: unified or split, built row by row for the visible window only.

use super::text;
use super::theme::Theme;
use crate::engine::diff::Tag;
use crate::faces::review::model::{Model, Search, State};
use crate::faces::review::rows::{FileRows, Row, RowKind};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

pub(super) fn draw(m: &Model, f: &mut Frame, area: Rect, t: Theme) {
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
                        crate::faces::review::unit::UnitKind::Edit(_) => {
                            format!("edit {}", unit.label())
                        }
                        crate::faces::review::unit::UnitKind::Content => "new content".into(),
                        crate::faces::review::unit::UnitKind::Delete => "deletion".into(),
                        crate::faces::review::unit::UnitKind::Move => "rename".into(),
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
    let mut title_line = Line::from(title).style(t.bold());
    if !m.wrap && m.hscroll > 0 {
        title_line.push_span(Span::styled(format!("→{} cols ", m.hscroll), t.warn()));
    }
    let block = Block::bordered()
        .title(title_line)
        .border_style(t.focus_border());
    let inner = block.inner(area);
    f.render_widget(block, area);
    if m.is_collapsed(file) && inner.height > 0 {
        let n = m.files[file].units.len();
        let line = Line::from(vec![
            Span::styled(" ▸ collapsed", t.bold()),
            Span::styled(
                format!(
                    " · {n} change{} hidden · z expands",
                    if n == 1 { "" } else { "s" }
                ),
                t.dim(),
            ),
        ]);
        f.render_widget(
            Paragraph::new(line),
            Rect::new(inner.x, inner.y, inner.width, 1),
        );
        return;
    }
    let Some(fr) = m.file_rows(file) else { return };
    let h = inner.height as usize;
    let ctx = Ctx::new(m, fr, inner.width as usize, t);
    let cursor_display = ctx.cursor_display();
    let total = ctx.total();
    let mut y = 0usize;
    let mut d = m.scroll;
    while y < h && d < total {
        let lines = ctx.lines(d);
        for line in lines.into_iter().take(h - y) {
            let r = Rect::new(inner.x, inner.y + y as u16, inner.width, 1);
            // The cursor row's background goes under the text: word emphasis and search hits
            // keep their own backgrounds on top of it.
            if d == cursor_display {
                f.buffer_mut().set_style(r, t.cursor());
            }
            f.render_widget(Paragraph::new(line), r);
            y += 1;
        }
        d += 1;
    }
}

/// Screen lines row `d` of the current file's layout takes at the model's size.
pub(crate) fn row_height(m: &Model, d: usize) -> usize {
    let Some(fr) = m.file_rows(m.cursor.file) else {
        return 1;
    };
    if !m.wrap {
        return 1;
    }
    let width = super::diff_inner_width(m);
    Ctx::new(m, fr, width, Theme::plain()).lines(d).len().max(1)
}

/// What drawing one file's rows needs.
struct Ctx<'a> {
    m: &'a Model,
    fr: &'a FileRows,
    width: usize,
    g: Gutter,
    cur: Option<usize>,
    t: Theme,
}

impl<'a> Ctx<'a> {
    fn new(m: &'a Model, fr: &'a FileRows, width: usize, t: Theme) -> Ctx<'a> {
        let id_w = m.files[m.cursor.file]
            .units
            .iter()
            .map(|u| u.label().len())
            .max()
            .unwrap_or(2);
        Ctx {
            m,
            fr,
            width,
            g: Gutter {
                id_w,
                no_w: fr.number_width,
            },
            cur: m.current_unit(),
            t,
        }
    }

    fn cursor_display(&self) -> usize {
        if self.m.split {
            self.fr
                .split_of
                .get(self.m.cursor.row)
                .copied()
                .unwrap_or(0)
        } else {
            self.m.cursor.row
        }
    }

    fn total(&self) -> usize {
        if self.m.split {
            self.fr.split.len()
        } else {
            self.fr.rows.len()
        }
    }

    /// The screen lines of display row `d`: one, or (wrapping) as many as its text needs.
    fn lines(&self, d: usize) -> Vec<Line<'static>> {
        if self.m.split {
            split_row(self, d)
        } else {
            unified_row(self, d)
        }
    }
}

struct Gutter {
    /// Width of `#n`.
    id_w: usize,
    /// Width of a line number.
    no_w: usize,
}

/// Decision marker, edit id and flag for a row: `▌✓ #3≈ `.
fn edit_gutter(c: &Ctx, row: Option<usize>) -> Vec<Span<'static>> {
    let (m, fr, g, t) = (c.m, c.fr, &c.g, c.t);
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
    let marker = if c.cur == Some(u) {
        Span::styled("▌", t.current())
    } else {
        Span::raw(" ")
    };
    vec![
        marker,
        Span::styled(state.glyph().to_string(), t.state(state)),
        Span::raw(" "),
        Span::styled(
            id,
            if c.cur == Some(u) {
                t.current()
            } else {
                t.dim()
            },
        ),
        Span::styled(flag.to_string(), t.flag()),
        Span::raw(" "),
    ]
}

/// The gutter of a wrapped row's continuation lines: the decision marker carries on, the rest
/// is blank.
fn continuation_gutter(c: &Ctx, row: Option<usize>, width: usize) -> Vec<Span<'static>> {
    let unit = row.and_then(|r| c.fr.rows[r].unit);
    let marker = if unit.is_some() && c.cur == unit {
        Span::styled("▌", c.t.current())
    } else {
        Span::raw(" ")
    };
    vec![marker, Span::raw(" ".repeat(width.saturating_sub(1)))]
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

/// The body of one row (after the line numbers) in `width` columns: one line, or with wrapping
/// as many as it needs. Without wrapping, the text starts at the horizontal scroll and a change
/// cut off at either edge is marked (`«`/`»`).
fn body(c: &Ctx, row: &Row, width: usize) -> Vec<Vec<Span<'static>>> {
    let (m, t) = (c.m, c.t);
    let deco = decision_style(m, row.unit);
    let lay = |cells: Vec<text::Cell>, width: usize, change: Style| -> Vec<Vec<Span<'static>>> {
        if m.wrap {
            text::wrap(&cells, width)
                .into_iter()
                .map(|r| r.spans)
                .collect()
        } else {
            vec![text::window(&cells, m.hscroll, width, t.dim(), change).spans]
        }
    };
    match &row.kind {
        RowKind::Line {
            tag, text: s, emph, ..
        } => {
            let sign = match tag {
                Tag::Context => " ",
                Tag::Delete => "-",
                Tag::Insert => "+",
            };
            let on_cursor = is_cursor_row(m, row);
            let base = if on_cursor {
                t.line_cursor(*tag)
            } else {
                t.line(*tag)
            }
            .patch(deco);
            // Syntax colours first, word emphasis and search hits on top.
            let mut ov: Vec<(std::ops::Range<usize>, Style)> = match (t.syntax, row.kind_syntax()) {
                (Some(_), Some(colors)) => colors
                    .iter()
                    .map(|(r, (red, g, b))| (r.clone(), Style::new().fg(Color::Rgb(*red, *g, *b))))
                    .collect(),
                _ => Vec::new(),
            };
            ov.extend(overlays(m, *tag, s, emph, on_cursor, t));
            // What counts as changed for the edge marks: the emphasized words, or the whole
            // line when it has none (it was rewritten).
            let whole = 0..s.len();
            let changed: &[std::ops::Range<usize>] = match tag {
                Tag::Context => &[],
                _ if emph.is_empty() => std::slice::from_ref(&whole),
                _ => emph,
            };
            let cells = text::cells(s, base, &ov, changed, t.dim());
            let mut out = lay(cells, width.saturating_sub(2), t.emph(*tag).patch(t.bold()));
            for (k, l) in out.iter_mut().enumerate() {
                let lead = if k == 0 {
                    Span::styled(format!("{sign} "), base)
                } else {
                    Span::styled("↪ ", t.dim())
                };
                l.insert(0, lead);
            }
            out
        }
        RowKind::NoNewline { tag } => {
            vec![vec![Span::styled(
                text_cut("\\ No newline at end of file", width),
                t.line(*tag).patch(t.dim()),
            )]]
        }
        RowKind::Gap { lines } => {
            vec![vec![Span::styled(
                text_cut(
                    &format!(
                        "⋯ {lines} unchanged line{} ⋯",
                        if *lines == 1 { "" } else { "s" }
                    ),
                    width,
                ),
                t.dim(),
            )]]
        }
        RowKind::Note { text: s } => {
            let style = match row.unit.map(|u| m.state(m.cursor.file, u)) {
                Some(State::Failed) | None => t.warn(),
                _ => Style::new(),
            };
            let cells = text::cells(s, style.patch(deco), &[], &[], t.dim());
            if m.wrap {
                lay(cells, width, t.dim())
            } else {
                vec![text::window(&cells, 0, width, t.dim(), t.dim()).spans]
            }
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

fn spans_width(spans: &[Span]) -> usize {
    spans.iter().map(|s| s.width()).sum()
}

fn unified_row(c: &Ctx, d: usize) -> Vec<Line<'static>> {
    let row = &c.fr.rows[d];
    let mut gutter = edit_gutter(c, Some(d));
    let (old_no, new_no) = match row.kind {
        RowKind::Line { old_no, new_no, .. } => (old_no, new_no),
        _ => (None, None),
    };
    gutter.push(Span::styled(
        format!("{} {} ", number(old_no, c.g.no_w), number(new_no, c.g.no_w)),
        c.t.dim(),
    ));
    let used = spans_width(&gutter);
    let mut out = Vec::new();
    for (k, b) in body(c, row, c.width.saturating_sub(used))
        .into_iter()
        .enumerate()
    {
        let mut spans = if k == 0 {
            gutter.clone()
        } else {
            continuation_gutter(c, Some(d), used)
        };
        spans.extend(b);
        out.push(Line::from(spans));
    }
    out
}

/// One side of a split row: its line number and body lines, each padded to `w` columns.
fn side(c: &Ctx, i: usize, left: bool, w: usize) -> Vec<Vec<Span<'static>>> {
    let row = &c.fr.rows[i];
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
    let bw = w.saturating_sub(c.g.no_w + 1);
    body(c, row, bw)
        .into_iter()
        .enumerate()
        .map(|(k, b)| {
            let n = if k == 0 {
                format!("{} ", number(no, c.g.no_w))
            } else {
                " ".repeat(c.g.no_w + 1)
            };
            let used = spans_width(&b);
            let mut spans = vec![Span::styled(n, c.t.dim())];
            spans.extend(b);
            spans.push(Span::raw(" ".repeat(bw.saturating_sub(used))));
            spans
        })
        .collect()
}

fn split_row(c: &Ctx, d: usize) -> Vec<Line<'static>> {
    let (fr, t) = (c.fr, c.t);
    let s = fr.split[d];
    let full = s.left.is_some() && s.left == s.right;
    let lead = s.left.filter(|&l| fr.rows[l].unit.is_some()).or(s.right);
    let gutter = edit_gutter(c, lead);
    let used = spans_width(&gutter);
    let rest = c.width.saturating_sub(used);
    let half = rest.saturating_sub(1) / 2;
    let (lw, rw) = (half, rest.saturating_sub(half + 1));
    let i = s.left.or(s.right).unwrap_or(0);
    if full
        && !matches!(
            fr.rows[i].kind,
            RowKind::Line {
                tag: Tag::Context,
                ..
            }
        )
    {
        // Gaps, notes: across both columns.
        return body(c, &fr.rows[i], rest)
            .into_iter()
            .enumerate()
            .map(|(k, b)| {
                let mut spans = if k == 0 {
                    gutter.clone()
                } else {
                    continuation_gutter(c, lead, used)
                };
                spans.extend(b);
                Line::from(spans)
            })
            .collect();
    }
    // Context shows on both sides; a change block pairs old left and new right.
    let (l, r) = if full {
        (Some(i), Some(i))
    } else {
        (s.left, s.right)
    };
    let ls = l.map(|i| side(c, i, true, lw)).unwrap_or_default();
    let rs = r.map(|i| side(c, i, false, rw)).unwrap_or_default();
    let n = ls.len().max(rs.len()).max(1);
    (0..n)
        .map(|k| {
            let mut spans = if k == 0 {
                gutter.clone()
            } else {
                continuation_gutter(c, lead, used)
            };
            match ls.get(k) {
                Some(x) => spans.extend(x.iter().cloned()),
                None => spans.push(Span::raw(" ".repeat(lw))),
            }
            spans.push(Span::styled("│", t.border()));
            match rs.get(k) {
                Some(x) => spans.extend(x.iter().cloned()),
                None => spans.push(Span::raw(" ".repeat(rw))),
            }
            Line::from(spans)
        })
        .collect()
}
