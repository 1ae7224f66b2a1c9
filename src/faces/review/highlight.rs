//! Syntax highlighting of the diff by file type, as delta and bat do: syntect's bundled Sublime
//! syntaxes and themes (pure-Rust regexes). Colours are computed once per file, when its rows
//! are built, never while drawing; each side of a hunk is one stream (old: context and deleted
//! lines; new: context and inserted lines) so the parser's state runs across the hunk's lines.
//!
//! Bounds keep a huge file from costing more than plain colouring: files with more than
//! [`MAX_ROWS`] diff lines, and lines longer than [`MAX_LINE`] bytes, are not highlighted.

use std::ops::Range;
use std::sync::OnceLock;
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::{SyntaxReference, SyntaxSet};

/// Diff lines of one file past which it is not highlighted.
pub(crate) const MAX_ROWS: usize = 20_000;
/// Lines longer than this (bytes) are not highlighted.
pub(crate) const MAX_LINE: usize = 2_000;

/// Syntax colours for a dark or a light terminal background.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Palette {
    /// For a dark background (the default).
    #[default]
    Dark,
    /// For a light background.
    Light,
}

impl Palette {
    /// From the environment: `REDLINE_THEME` (`dark`, `light`, `off`), else the terminal's
    /// `COLORFGBG` (a light background is colour 7 or 15), else dark. `None` means off.
    pub(crate) fn from_env() -> Option<Palette> {
        Palette::from_vars(
            std::env::var("REDLINE_THEME").ok().as_deref(),
            std::env::var("COLORFGBG").ok().as_deref(),
        )
    }

    /// [`Palette::from_env`] over given values.
    pub(crate) fn from_vars(theme: Option<&str>, colorfgbg: Option<&str>) -> Option<Palette> {
        match theme.map(str::trim).map(str::to_ascii_lowercase).as_deref() {
            Some("off" | "none" | "no") => return None,
            Some("light") => return Some(Palette::Light),
            Some("dark") => return Some(Palette::Dark),
            _ => {}
        }
        let bg = colorfgbg.and_then(|v| v.rsplit(';').next().map(str::trim).map(String::from));
        match bg.as_deref() {
            Some("7" | "15") => Some(Palette::Light),
            _ => Some(Palette::Dark),
        }
    }
}

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn theme(p: Palette) -> &'static Theme {
    static SET: OnceLock<ThemeSet> = OnceLock::new();
    let set = SET.get_or_init(ThemeSet::load_defaults);
    let name = match p {
        Palette::Dark => "base16-ocean.dark",
        Palette::Light => "InspiredGitHub",
    };
    &set.themes[name]
}

/// The syntax for a path, by extension or whole file name (`Makefile`); `None` for plain text
/// and unknown types.
pub(crate) fn syntax_for(path: &str) -> Option<&'static SyntaxReference> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let set = syntaxes();
    let by_ext = name
        .rsplit_once('.')
        .and_then(|(_, ext)| set.find_syntax_by_extension(ext));
    by_ext
        .or_else(|| set.find_syntax_by_extension(name))
        .filter(|s| s.name != "Plain Text")
}

/// Foreground colour runs of one line: byte ranges of the line and an RGB colour.
pub(crate) type Colors = Vec<(Range<usize>, (u8, u8, u8))>;

/// Highlights `lines` (one stream, in order, without line breaks) as `syntax`.
pub(crate) fn stream(syntax: &SyntaxReference, p: Palette, lines: &[&str]) -> Vec<Colors> {
    let set = syntaxes();
    let mut h = HighlightLines::new(syntax, theme(p));
    let mut out = Vec::with_capacity(lines.len());
    let mut buf = String::new();
    for line in lines {
        let long = line.len() > MAX_LINE;
        buf.clear();
        if !long {
            buf.push_str(line);
        }
        buf.push('\n');
        let mut colors = Colors::new();
        if let Ok(regions) = h.highlight_line(&buf, set) {
            let mut at = 0usize;
            for (style, text) in regions {
                let end = (at + text.len()).min(line.len());
                if !long && at < end {
                    let c = style.foreground;
                    match colors.last_mut() {
                        Some((r, last)) if r.end == at && *last == (c.r, c.g, c.b) => r.end = end,
                        _ => colors.push((at..end, (c.r, c.g, c.b))),
                    }
                }
                at += text.len();
            }
        }
        out.push(if long { Colors::new() } else { colors });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_keywords_and_strings_get_colours() {
        let s = syntax_for("src/lib.rs").expect("Rust");
        let lines = ["fn main() {", "    let s = \"hi\";", "}"];
        let c = stream(s, Palette::Dark, &lines);
        assert_eq!(c.len(), 3);
        let colour_at = |line: usize, at: usize| {
            c[line]
                .iter()
                .find(|(r, _)| r.contains(&at))
                .map(|(_, c)| *c)
        };
        let keyword = colour_at(0, 0).unwrap();
        let string = colour_at(1, 13).unwrap();
        let name = colour_at(1, 8).unwrap();
        assert_ne!(keyword, name, "`fn` and `s` differ");
        assert_ne!(string, name, "the string and `s` differ");
        // Every run stays inside its line.
        for (k, l) in lines.iter().enumerate() {
            assert!(c[k].iter().all(|(r, _)| r.end <= l.len()));
        }
    }

    #[test]
    fn syntax_by_extension_or_name_and_none_for_plain_text() {
        assert!(syntax_for("a/b/Makefile").is_some());
        assert!(syntax_for("x.py").is_some());
        assert!(syntax_for("notes.txt").is_none());
        assert!(syntax_for("no_extension_at_all").is_none());
    }

    #[test]
    fn palette_from_the_environment() {
        assert_eq!(
            Palette::from_vars(Some("light"), None),
            Some(Palette::Light)
        );
        assert_eq!(Palette::from_vars(Some("off"), Some("0;15")), None);
        assert_eq!(Palette::from_vars(None, Some("0;15")), Some(Palette::Light));
        assert_eq!(Palette::from_vars(None, Some("15;0")), Some(Palette::Dark));
        assert_eq!(Palette::from_vars(None, None), Some(Palette::Dark));
    }
}
