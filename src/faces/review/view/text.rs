//! Text made safe and visible for a terminal cell grid.
//!
//! ratatui drops tabs, CRs and other control characters and measures raw text wrongly, so every
//! line is converted here: tabs expand to tab stops, a CR shows as `␍`, trailing whitespace as
//! `·`/`→`, other controls as `^X`, a BOM as `‹BOM›`. A cell is one grapheme cluster
//! (`unicode-segmentation`, as ratatui draws them), so a combining accent stays on its letter
//! and an emoji sequence or a flag is one cell; its width comes from `unicode-width`. The line is
//! cut at the pane's width with `…`. Styles attach to source byte ranges, so word
//! emphasis and search hits stay on the right characters whatever the expansion.

use ratatui::style::Style;
use ratatui::text::Span;
use std::ops::Range;
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Tab stops every this many columns.
pub(crate) const TAB: usize = 4;

/// Styled display cells of one source line.
pub(crate) struct Rendered {
    pub spans: Vec<Span<'static>>,
}

/// One display cell group: what is drawn for one grapheme cluster of the source, its style, its
/// columns, and whether it belongs to a changed range (an overlay marked `changed`).
#[derive(Debug, Clone)]
pub(crate) struct Cell {
    pub shown: String,
    pub style: Style,
    pub width: usize,
    pub changed: bool,
}

/// The display cells of `text`. `overlays` patch `base` on their byte ranges (later ones win);
/// the ranges in `changed` are what the line changes (word emphasis), remembered per cell so a
/// window can say whether it hides any of them; `marker` styles whitespace and control markers.
pub(crate) fn cells(
    text: &str,
    base: Style,
    overlays: &[(Range<usize>, Style)],
    changed: &[Range<usize>],
    marker: Style,
) -> Vec<Cell> {
    let body = text.strip_suffix('\r').unwrap_or(text);
    let trailing_from = body.trim_end_matches(|c: char| c.is_whitespace()).len();
    let mut out: Vec<Cell> = Vec::with_capacity(text.len());
    let mut col = 0usize;
    for (i, g) in text.grapheme_indices(true) {
        let bytes = i..i + g.len();
        let touches = |r: &Range<usize>| r.start < bytes.end && bytes.start < r.end;
        let mut style = base;
        for (r, s) in overlays {
            if touches(r) {
                style = style.patch(*s);
            }
        }
        let trailing = i >= trailing_from;
        let mut chars = g.chars();
        // Markers are for single characters; a cluster of several (a letter and its accents, an
        // emoji sequence; CR LF never occurs, lines end before the LF) is drawn as it is.
        let single = match (chars.next(), chars.next()) {
            (Some(c), None) => Some(c),
            _ => None,
        };
        let (shown, w, st): (String, usize, Style) = match single {
            Some('\t') => {
                let w = TAB - col % TAB;
                if trailing {
                    (format!("→{}", " ".repeat(w - 1)), w, style.patch(marker))
                } else {
                    (" ".repeat(w), w, style)
                }
            }
            Some('\r') => ("␍".into(), 1, style.patch(marker)),
            Some('\u{FEFF}') => ("‹BOM›".into(), 5, style.patch(marker)),
            Some(c) if trailing && c.is_whitespace() => ("·".into(), 1, style.patch(marker)),
            Some(c) if c.is_control() => {
                let shown = if (c as u32) < 0x20 {
                    format!("^{}", char::from(c as u8 + 0x40))
                } else {
                    format!("<U+{:04X}>", c as u32)
                };
                let w = shown.chars().count();
                (shown, w, style.patch(marker))
            }
            _ => (g.to_string(), grapheme_width(g), style),
        };
        col += w;
        out.push(Cell {
            shown,
            style: st,
            width: w,
            changed: changed.iter().any(touches),
        });
    }
    out
}

/// Columns of one grapheme cluster: a lone character by its own width (0 for a control), a
/// cluster by `unicode-width`'s reading of the sequence (an emoji ZWJ sequence or a flag is 2,
/// not the sum of its parts).
fn grapheme_width(g: &str) -> usize {
    let mut chars = g.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => c.width().unwrap_or(0),
        _ => g.width(),
    }
}

/// Total columns of `cells`.
pub(crate) fn cells_width(cells: &[Cell]) -> usize {
    cells.iter().map(|c| c.width).sum()
}

/// Joins cells into spans, one per run of equal style.
pub(crate) fn spans_of<'a>(cells: impl IntoIterator<Item = &'a Cell>) -> Vec<Span<'static>> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut cur = String::new();
    let mut cur_style: Option<Style> = None;
    for c in cells {
        if cur_style != Some(c.style) {
            if let Some(cs) = cur_style {
                spans.push(Span::styled(std::mem::take(&mut cur), cs));
            }
            cur_style = Some(c.style);
        }
        cur.push_str(&c.shown);
    }
    if let Some(cs) = cur_style {
        spans.push(Span::styled(cur, cs));
    }
    spans
}

/// What a window hides on each side: nothing, text, or changed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Hidden {
    #[default]
    Nothing,
    Text,
    Change,
}

/// The columns `skip..skip + width` of `cells`, with a marker in the edge column on each side
/// that hides something: `…` for text, `hidden_change` (styled `change_style`) when what it
/// hides includes changed text, so no change is ever off-screen without a mark.
pub(crate) fn window(
    cells: &[Cell],
    skip: usize,
    width: usize,
    marker: Style,
    change_style: Style,
) -> Rendered {
    if width == 0 {
        return Rendered { spans: Vec::new() };
    }
    let total = cells_width(cells);
    // Cells fully inside the window, and what lies left and right of it.
    let mut col = 0usize;
    let (mut left, mut right) = (Hidden::Nothing, Hidden::Nothing);
    let mut inside: Vec<&Cell> = Vec::new();
    let mut used = 0usize;
    let need_right = total > skip + width;
    let room_right = if need_right { width - 1 } else { width };
    let room_left_start = if skip > 0 { 1 } else { 0 };
    for c in cells {
        let start = col;
        col += c.width;
        let hide = |h: &mut Hidden| {
            *h = if c.changed || *h == Hidden::Change {
                Hidden::Change
            } else {
                Hidden::Text
            }
        };
        if start < skip + room_left_start {
            hide(&mut left);
        } else if used + c.width <= room_right.saturating_sub(room_left_start) {
            inside.push(c);
            used += c.width;
        } else {
            hide(&mut right);
        }
    }
    let mark = |h: Hidden| -> Option<Span<'static>> {
        match h {
            Hidden::Nothing => None,
            Hidden::Text => Some(Span::styled("…", marker)),
            Hidden::Change => Some(Span::styled("»", change_style)),
        }
    };
    let mut spans = Vec::new();
    if let Some(s) = mark(left) {
        spans.push(if left == Hidden::Change {
            Span::styled("«", change_style)
        } else {
            s
        });
    }
    spans.extend(spans_of(inside));
    if let Some(s) = mark(right) {
        spans.push(s);
    }
    Rendered { spans }
}

/// `cells` in rows of at most `width` columns (a wide character never splits); at least one row.
pub(crate) fn wrap(cells: &[Cell], width: usize) -> Vec<Rendered> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut row: Vec<&Cell> = Vec::new();
    let mut used = 0usize;
    for c in cells {
        if used + c.width > width && !row.is_empty() {
            out.push(Rendered {
                spans: spans_of(std::mem::take(&mut row)),
            });
            used = 0;
        }
        row.push(c);
        used += c.width;
    }
    out.push(Rendered {
        spans: spans_of(row),
    });
    out
}

/// Renders `text` into at most `width` columns, cut with `…`. `overlays` patch `base` on their
/// byte ranges (later ones win); `marker` styles the whitespace and control markers.
pub(crate) fn render(
    text: &str,
    base: Style,
    overlays: &[(Range<usize>, Style)],
    marker: Style,
    width: usize,
) -> Rendered {
    let c = cells(text, base, overlays, &[], marker);
    window(&c, 0, width, marker, marker)
}

/// Text with every whitespace character visible (for the why drawer): `·` space, `→` tab,
/// `⍽` no-break and other spaces, `␍` CR, `⏎` LF.
pub(crate) fn visible_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            ' ' => out.push('·'),
            '\t' => out.push('→'),
            '\r' => out.push('␍'),
            '\n' => out.push('⏎'),
            c if c.is_whitespace() => out.push('⍽'),
            c => out.push(c),
        }
    }
    out
}

/// `s` cut to `width` columns from the middle (`src/…/file.rs`), for paths; never inside a
/// grapheme cluster.
pub(crate) fn middle_truncate(s: &str, width: usize) -> String {
    if self::width(s) <= width {
        return s.to_string();
    }
    if width <= 1 {
        return "…".chars().take(width).collect();
    }
    let keep = width - 1;
    let tail = keep * 2 / 3;
    let head = keep - tail;
    format!("{}…{}", head_of(s, head), tail_of(s, tail))
}

/// The longest start of `s` that fits in `width` columns, in whole grapheme clusters.
pub(crate) fn head_of(s: &str, width: usize) -> &str {
    let mut used = 0;
    for (i, g) in s.grapheme_indices(true) {
        used += grapheme_width(g);
        if used > width {
            return &s[..i];
        }
    }
    s
}

/// The longest end of `s` that fits in `width` columns, in whole grapheme clusters.
pub(crate) fn tail_of(s: &str, width: usize) -> &str {
    let mut used = 0;
    for (i, g) in s.grapheme_indices(true).rev() {
        used += grapheme_width(g);
        if used > width {
            return &s[i + g.len()..];
        }
    }
    s
}

/// Display width of plain text, grapheme cluster by cluster.
pub(crate) fn width(s: &str) -> usize {
    s.graphemes(true).map(grapheme_width).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str, width: usize) -> String {
        render(text, Style::default(), &[], Style::default(), width)
            .spans
            .iter()
            .map(|s| s.content.to_string())
            .collect()
    }

    #[test]
    fn tabs_cr_and_trailing_whitespace_are_visible() {
        assert_eq!(plain("a\tb", 20), "a   b");
        assert_eq!(plain("ab\tc", 20), "ab  c");
        assert_eq!(plain("x  \r", 20), "x··␍");
        assert_eq!(plain("x\t", 20), "x→  ");
        assert_eq!(plain("a\u{1b}b", 20), "a^[b");
    }

    #[test]
    fn cut_at_width_with_ellipsis_and_wide_chars() {
        assert_eq!(plain("abcdef", 4), "abc…");
        assert_eq!(plain("日本語", 5), "日本…");
        assert_eq!(plain("日本", 4), "日本");
    }

    #[test]
    fn a_window_marks_hidden_changes_on_either_side() {
        let m = Style::default();
        let ch = Style::default().add_modifier(ratatui::style::Modifier::REVERSED);
        let line = "let a = 1; // a long comment that goes on, and then: CHANGED";
        let at = line.find("CHANGED").unwrap();
        let c = cells(line, m, &[], std::slice::from_ref(&(at..line.len())), m);
        let show = |r: Rendered| {
            r.spans
                .iter()
                .map(|s| s.content.to_string())
                .collect::<String>()
        };
        // The change is past the right edge: `»` says so.
        let w = window(&c, 0, 20, m, ch);
        assert_eq!(show(w), "let a = 1; // a lon»");
        // Scrolled right to the change: it shows, and the left edge says text is hidden.
        let w = window(&c, at - 5, 20, m, ch);
        assert_eq!(show(w), "…en: CHANGED");
        // Unchanged text cut: the plain `…`.
        let c = cells(line, m, &[], &[], m);
        assert_eq!(show(window(&c, 0, 10, m, ch)), "let a = 1…");
    }

    #[test]
    fn wrapping_keeps_every_cell_and_wide_chars_whole() {
        let m = Style::default();
        let c = cells("abcdef日本", m, &[], &[], m);
        let rows: Vec<String> = wrap(&c, 3)
            .into_iter()
            .map(|r| r.spans.iter().map(|s| s.content.to_string()).collect())
            .collect();
        assert_eq!(rows, vec!["abc", "def", "日", "本"]);
    }

    #[test]
    fn a_cell_is_a_grapheme_cluster() {
        let m = Style::default();
        // `e` and a combining acute accent; a family emoji (ZWJ sequence); a flag.
        let text = "e\u{301}\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{1F1EB}\u{1F1F7}x";
        let c = cells(text, m, &[], &[], m);
        let shown: Vec<(&str, usize)> = c.iter().map(|c| (c.shown.as_str(), c.width)).collect();
        assert_eq!(
            shown,
            vec![
                ("e\u{301}", 1),
                ("\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}", 2),
                ("\u{1F1EB}\u{1F1F7}", 2),
                ("x", 1),
            ]
        );
        assert_eq!(width(text), 6);
        // A change on the accent alone marks the whole cluster.
        let c = cells("ae\u{301}", m, &[], std::slice::from_ref(&(2..4)), m);
        assert_eq!(
            c.iter().map(|c| c.changed).collect::<Vec<_>>(),
            vec![false, true]
        );
        // Cutting never splits a cluster.
        assert_eq!(plain("e\u{301}e\u{301}e\u{301}", 2), "e\u{301}…");
        assert_eq!(
            middle_truncate("ae\u{301}bcde\u{301}f", 5),
            "ae\u{301}…e\u{301}f"
        );
    }

    #[test]
    fn middle_truncation() {
        assert_eq!(middle_truncate("src/review/model.rs", 10), "src…del.rs");
        assert_eq!(middle_truncate("a.rs", 10), "a.rs");
    }
}
