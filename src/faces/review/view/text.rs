//! Text made safe and visible for a terminal cell grid.
//!
//! ratatui drops tabs, CRs and other control characters and measures raw text wrongly, so every
//! line is converted here: tabs expand to tab stops, a CR shows as `␍`, trailing whitespace as
//! `·`/`→`, other controls as `^X`, a BOM as `‹BOM›`; widths come from `unicode-width` per char;
//! the line is cut at the pane's width with `…`. Styles attach to source byte ranges, so word
//! emphasis and search hits stay on the right characters whatever the expansion.

use ratatui::style::Style;
use ratatui::text::Span;
use std::ops::Range;
use unicode_width::UnicodeWidthChar;

/// Tab stops every this many columns.
pub const TAB: usize = 4;

/// Styled display cells of one source line.
pub struct Rendered {
    pub spans: Vec<Span<'static>>,
    /// Columns used.
    pub width: usize,
}

/// Renders `text` into at most `width` columns. `overlays` patch `base` on their byte ranges
/// (later ones win); `marker` styles the whitespace and control markers.
pub fn render(
    text: &str,
    base: Style,
    overlays: &[(Range<usize>, Style)],
    marker: Style,
    width: usize,
) -> Rendered {
    let body = text.strip_suffix('\r').unwrap_or(text);
    let trailing_from = body.trim_end_matches(|c: char| c.is_whitespace()).len();
    let mut cells: Vec<(String, Style, usize)> = Vec::new();
    let mut col = 0usize;
    let mut cut = false;
    for (i, c) in text.char_indices() {
        let mut style = base;
        for (r, s) in overlays {
            if r.contains(&i) {
                style = style.patch(*s);
            }
        }
        let trailing = i >= trailing_from;
        let (shown, w, st): (String, usize, Style) = match c {
            '\t' => {
                let w = TAB - col % TAB;
                if trailing {
                    (format!("→{}", " ".repeat(w - 1)), w, style.patch(marker))
                } else {
                    (" ".repeat(w), w, style)
                }
            }
            '\r' => ("␍".into(), 1, style.patch(marker)),
            '\u{FEFF}' => ("‹BOM›".into(), 5, style.patch(marker)),
            c if trailing && c.is_whitespace() => ("·".into(), 1, style.patch(marker)),
            c if c.is_control() => {
                let shown = if (c as u32) < 0x20 {
                    format!("^{}", char::from(c as u8 + 0x40))
                } else {
                    format!("<U+{:04X}>", c as u32)
                };
                let w = shown.chars().count();
                (shown, w, style.patch(marker))
            }
            c => (c.to_string(), c.width().unwrap_or(0), style),
        };
        if col + w > width {
            cut = true;
            break;
        }
        col += w;
        cells.push((shown, st, w));
    }
    if cut && width > 0 {
        while col + 1 > width {
            match cells.pop() {
                Some((_, _, w)) => col -= w,
                None => break,
            }
        }
        cells.push(("…".into(), marker, 1));
        col += 1;
    }
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut cur = String::new();
    let mut cur_style: Option<Style> = None;
    for (s, st, _) in cells {
        if cur_style != Some(st) {
            if let Some(cs) = cur_style {
                spans.push(Span::styled(std::mem::take(&mut cur), cs));
            }
            cur_style = Some(st);
        }
        cur.push_str(&s);
    }
    if let Some(cs) = cur_style {
        spans.push(Span::styled(cur, cs));
    }
    Rendered { spans, width: col }
}

/// Text with every whitespace character visible (for the why drawer): `·` space, `→` tab,
/// `⍽` no-break and other spaces, `␍` CR, `⏎` LF.
pub fn visible_whitespace(text: &str) -> String {
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

/// `s` cut to `width` columns from the middle (`src/…/file.rs`), for paths.
pub fn middle_truncate(s: &str, width: usize) -> String {
    let w: usize = s.chars().map(|c| c.width().unwrap_or(0)).sum();
    if w <= width {
        return s.to_string();
    }
    if width <= 1 {
        return "…".chars().take(width).collect();
    }
    let keep = width - 1;
    let tail = keep * 2 / 3;
    let head = keep - tail;
    let mut a = String::new();
    let mut aw = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if aw + cw > head {
            break;
        }
        aw += cw;
        a.push(c);
    }
    let mut b: Vec<char> = Vec::new();
    let mut bw = 0;
    for c in s.chars().rev() {
        let cw = c.width().unwrap_or(0);
        if bw + cw > tail {
            break;
        }
        bw += cw;
        b.push(c);
    }
    b.reverse();
    format!("{a}…{}", b.into_iter().collect::<String>())
}

/// Display width of plain text.
pub fn width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
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
    fn middle_truncation() {
        assert_eq!(middle_truncate("src/review/model.rs", 10), "src…del.rs");
        assert_eq!(middle_truncate("a.rs", 10), "a.rs");
    }
}
