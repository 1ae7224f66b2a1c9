//! The normalized view N(·) of SPEC §3.3, with a character-accurate map back to the original.
//!
//! N(·) turns every line break into `\n`, applies NFKC cluster by cluster, removes trailing
//! whitespace from every line and folds quotes, dashes and special spaces. The map is a sorted list
//! of segments: identity runs (N bytes equal the original bytes, every character its own cluster)
//! and single clusters whose N output differs (possibly empty, for removed whitespace). A position
//! in N that is not a cluster boundary maps to nothing, which is how matches that end inside a
//! cluster are refused (§3.6).

use crate::engine::document::LineFeeds;
use std::borrow::Cow;
use std::ops::Range;
use unicode_normalization::char::{canonical_combining_class, compose, decompose_compatible};
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

/// A normalization a match needed, or a relaxation of the relaxed tier (§3b); reported in this
/// order (§3a: nfkc, trailing_whitespace, quotes, dashes, spaces; then the relaxations).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
// The variants are the wire names (serde) that SPEC defines; a doc comment per variant would
// make schemars publish `oneOf` consts instead of the schema's plain `enum` list.
#[allow(missing_docs)]
pub enum Normalization {
    Nfkc,
    TrailingWhitespace,
    Quotes,
    Dashes,
    Spaces,
    Indentation,
    Tabs,
    InnerWhitespace,
    LineNumbers,
    BlankLines,
}

impl Normalization {
    /// The wire name (snake_case, e.g. `trailing_whitespace`).
    pub fn as_str(self) -> &'static str {
        match self {
            Normalization::Nfkc => "nfkc",
            Normalization::TrailingWhitespace => "trailing_whitespace",
            Normalization::Quotes => "quotes",
            Normalization::Dashes => "dashes",
            Normalization::Spaces => "spaces",
            Normalization::Indentation => "indentation",
            Normalization::Tabs => "tabs",
            Normalization::InnerWhitespace => "inner_whitespace",
            Normalization::LineNumbers => "line_numbers",
            Normalization::BlankLines => "blank_lines",
        }
    }
}

/// The table a single character belongs to, if any (§3.3).
pub(crate) fn table_of(c: char) -> Option<Normalization> {
    match c {
        '\u{2018}'..='\u{201B}' | '\u{201C}'..='\u{201F}' => Some(Normalization::Quotes),
        '\u{2010}'..='\u{2015}' | '\u{2212}' => Some(Normalization::Dashes),
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => {
            Some(Normalization::Spaces)
        }
        _ => None,
    }
}

/// The folded form of a character under the quote, dash and space tables.
pub(crate) fn fold(c: char) -> char {
    match c {
        '\u{2018}'..='\u{201B}' => '\'',
        '\u{201C}'..='\u{201F}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        c => c,
    }
}

/// A cluster whose N(·) differs from its original bytes (possibly empty, for removed trailing
/// whitespace): `o..o+o_len` in the original became `n..n+n_len` in N. Between two units (and
/// before the first, after the last) N equals the original byte for byte, every character its
/// own cluster, so only the units are stored: 32-bit offsets keep the map small (texts are far
/// below 4 GiB; the size limit of the writer bounds files), 16 bytes per changed cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Unit {
    n: u32,
    o: u32,
    n_len: u32,
    o_len: u32,
}

impl Unit {
    fn n(&self) -> usize {
        self.n as usize
    }
    fn o(&self) -> usize {
        self.o as usize
    }
    /// N end.
    fn n_end(&self) -> usize {
        (self.n + self.n_len) as usize
    }
    /// Original end.
    fn o_end(&self) -> usize {
        (self.o + self.o_len) as usize
    }
}

/// A text in normalized form together with the map back to the original text.
///
/// A text that is its own N(·) (LF line breaks, no trailing whitespace, every character NFKC and
/// in no table: most source files) is borrowed, not copied, and its map has no units.
#[derive(Debug, Clone)]
pub(crate) struct Normalized<'a> {
    /// N(original): the original itself when N(·) changes nothing.
    pub text: Cow<'a, str>,
    units: Vec<Unit>,
    /// The last line lost trailing whitespace (the trimmed-last-line rule of §3.4 applies).
    pub last_line_trimmed: bool,
    orig_len: usize,
}

/// What a cluster's starter composes as: the NFKC composition of its compatibility
/// decomposition (U+3131 HANGUL LETTER KIYEOK is U+1100, circled U+326E is U+AC00), so that a
/// composing jamo after it joins it as NFKC joins them.
fn composing_form(c: char) -> char {
    let mut acc: Option<char> = None;
    decompose_compatible(c, |x| {
        acc = Some(match acc {
            Some(a) => compose(a, x).unwrap_or(x),
            None => x,
        })
    });
    acc.unwrap_or(c)
}

/// Whether `d` continues the cluster whose composing form is `*starter`: combining marks
/// (U+FF9E and U+FF9F too, whose NFKC is one), composing jamo, compatibility jamo that NFKC turns
/// into composing ones.
fn joins(starter: &mut char, d: char) -> bool {
    if d.is_ascii() {
        return false;
    }
    // Compatibility decompositions are at most 18 characters long (U+FDFA).
    let mut parts = ['\0'; 18];
    let mut len = 0;
    decompose_compatible(d, |x| {
        if len < parts.len() {
            parts[len] = x;
            len += 1;
        }
    });
    let parts = &parts[..len];
    let Some(&first) = parts.first() else {
        return false;
    };
    if canonical_combining_class(first) != 0 {
        return true;
    }
    match compose(*starter, first) {
        Some(composed) => {
            let mut acc = composed;
            for &x in &parts[1..] {
                acc = compose(acc, x).unwrap_or(x);
            }
            *starter = acc;
            true
        }
        None => false,
    }
}

impl<'a> Normalized<'a> {
    /// Builds N(`text`) and its map in one linear pass; nothing is copied unless N(·) changes
    /// something.
    pub(crate) fn new(text: &'a str) -> Normalized<'a> {
        if is_plain(text) {
            return Normalized {
                text: Cow::Borrowed(text),
                units: Vec::new(),
                last_line_trimmed: false,
                orig_len: text.len(),
            };
        }
        Normalized::build(text)
    }

    /// [`Normalized::new`] by the walk line by line.
    fn build(text: &'a str) -> Normalized<'a> {
        let mut b = Builder {
            src: text,
            out: None,
            ident: 0,
            units: Vec::new(),
        };
        let bytes = text.as_bytes();
        let mut last_line_trimmed = false;
        let mut pos = 0;
        while pos <= text.len() {
            // One line: content up to the next line break (or the end).
            let brk = memchr::memchr2(b'\n', b'\r', &bytes[pos..]).map(|i| pos + i);
            let end = brk.unwrap_or(text.len());
            let line = &text[pos..end];
            let body_len = line.trim_end_matches(char::is_whitespace).len();
            last_line_trimmed = body_len < line.len();
            b.body(&text[pos..pos + body_len], pos);
            // Removed trailing whitespace: one empty segment per character.
            for (i, c) in line[body_len..].char_indices() {
                b.unit(pos + body_len + i, c.len_utf8(), "");
            }
            match brk {
                None => break,
                Some(i) => {
                    if bytes[i] == b'\n' {
                        b.push_ident("\n");
                        pos = i + 1;
                    } else if bytes.get(i + 1) == Some(&b'\n') {
                        b.unit(i, 2, "\n");
                        pos = i + 2;
                    } else {
                        b.unit(i, 1, "\n");
                        pos = i + 1;
                    }
                }
            }
            if pos == text.len() {
                // A text ending with a line break has an empty last line.
                last_line_trimmed = false;
                break;
            }
        }
        b.units.shrink_to_fit();
        let orig_len = text.len();
        let text = match b.out {
            Some(out) => Cow::Owned(out),
            None => {
                debug_assert_eq!(b.ident, text.len(), "an unchanged text is all identity");
                Cow::Borrowed(text)
            }
        };
        Normalized {
            text,
            units: b.units,
            last_line_trimmed,
            orig_len,
        }
    }

    /// The original offset where the cluster starting at N offset `n` starts, if `n` is a
    /// cluster start.
    pub(crate) fn orig_start(&self, n: usize) -> Option<usize> {
        if n == self.text.len() {
            return Some(self.orig_len);
        }
        // The last unit starting at or before `n` either holds `n` or ends before the identity
        // stretch that holds it.
        let idx = self.units.partition_point(|u| u.n() <= n);
        match idx.checked_sub(1).map(|k| self.units[k]) {
            Some(u) if n < u.n_end() => (n == u.n()).then_some(u.o()),
            Some(u) => Some(u.o_end() + (n - u.n_end())),
            None => Some(n),
        }
    }

    /// The original offset where the cluster ending at N offset `n` ends, if `n` is a cluster end.
    pub(crate) fn orig_end(&self, n: usize) -> Option<usize> {
        if n == 0 {
            return Some(0);
        }
        // The last unit starting before `n` either holds byte `n - 1` or ends before the
        // identity stretch that holds it (removed whitespace at `n` itself stays outside).
        let idx = self.units.partition_point(|u| u.n() < n);
        match idx.checked_sub(1).map(|k| self.units[k]) {
            Some(u) if n <= u.n_end() && u.n_len > 0 => (n == u.n_end()).then_some(u.o_end()),
            Some(u) => Some(u.o_end() + (n - u.n_end())),
            None => Some(n),
        }
    }

    /// Whether original offset `o` is a cluster boundary of the original (§3a "Characters").
    pub(crate) fn is_orig_boundary(&self, o: usize) -> bool {
        if o >= self.orig_len {
            return o == self.orig_len;
        }
        let idx = self.units.partition_point(|u| u.o() <= o);
        match idx.checked_sub(1).map(|k| self.units[k]) {
            Some(u) if o < u.o_end() => o == u.o(),
            _ => true,
        }
    }

    /// The N offset of original offset `o` when `o` is where a cluster of the original starts
    /// (or the end), `None` inside a cluster. Callers that need [`Normalized::orig_start`] or
    /// [`Normalized::orig_end`] of the result to be `o` check it: around whitespace N removed,
    /// one N offset stands for several original ones.
    pub(crate) fn n_of(&self, o: usize) -> Option<usize> {
        if o >= self.orig_len {
            return (o == self.orig_len).then_some(self.text.len());
        }
        let idx = self.units.partition_point(|u| u.o() <= o);
        match idx.checked_sub(1).map(|k| self.units[k]) {
            Some(u) if o < u.o_end() => (o == u.o()).then_some(u.n()),
            Some(u) => Some(u.n_end() + (o - u.o_end())),
            None => Some(o),
        }
    }

    /// Whether N offset `n` is at the end of a line of N (before `\n` or at the end).
    pub(crate) fn at_line_end(&self, n: usize) -> bool {
        n == self.text.len() || self.text.as_bytes()[n] == b'\n'
    }

    /// Maps an N range back to the original span (§3a "Span ends"). With `to_line_end`, the span
    /// extends over the whitespace N removed after it, up to (not including) the line break.
    /// `None` when either end is not a cluster boundary.
    pub(crate) fn orig_span(&self, n: Range<usize>, to_line_end: bool) -> Option<Range<usize>> {
        let start = self.orig_start(n.start)?;
        let mut end = self.orig_end(n.end)?;
        if to_line_end {
            // Only removed (empty) units that start exactly where the span ends follow.
            let from = self.units.partition_point(|u| u.o() < end);
            for u in &self.units[from..] {
                if u.n_len == 0 && u.o() == end {
                    end = u.o_end();
                } else {
                    break;
                }
            }
        }
        Some(start..end)
    }

    /// The pieces of the original inside N range `n`, as (N range, original range, identity)
    /// triples in order, including removed (empty) pieces strictly inside the range.
    pub(crate) fn pieces(&self, n: Range<usize>) -> Vec<(Range<usize>, Range<usize>, bool)> {
        let mut out = Vec::new();
        let first = self.units.partition_point(|u| u.n_end() <= n.start);
        // Where the identity stretch before the next unit starts, in N and in the original.
        let (mut bn, mut bo) = first
            .checked_sub(1)
            .map_or((0, 0), |k| (self.units[k].n_end(), self.units[k].o_end()));
        let gap = |out: &mut Vec<_>, bn: usize, bo: usize, to: usize| {
            let (a, e) = (bn.max(n.start), to.min(n.end));
            if a < e {
                out.push((a..e, bo + (a - bn)..bo + (e - bn), true));
            }
        };
        for u in &self.units[first..] {
            gap(&mut out, bn, bo, u.n());
            if u.n() > n.end || (u.n() == n.end && u.n_len > 0) {
                return out;
            }
            if u.n_len == 0 {
                if u.n() > n.start && u.n() < n.end {
                    out.push((u.n()..u.n(), u.o()..u.o_end(), false));
                }
            } else if u.n().max(n.start) < u.n_end().min(n.end) {
                out.push((u.n()..u.n_end(), u.o()..u.o_end(), false));
            }
            (bn, bo) = (u.n_end(), u.o_end());
        }
        gap(&mut out, bn, bo, self.text.len());
        out
    }

    /// Removed pieces (trailing whitespace) at N offsets within `n` (ends included), as
    /// (N offset, original range).
    pub(crate) fn removed(
        &self,
        n: Range<usize>,
    ) -> impl Iterator<Item = (usize, Range<usize>)> + '_ {
        let first = self.units.partition_point(|u| u.n() < n.start);
        self.units[first..]
            .iter()
            .take_while(move |u| u.n() <= n.end)
            .filter(|u| u.n_len == 0)
            .map(|u| (u.n(), u.o()..u.o_end()))
    }
}

/// Whether `text` is ASCII with LF line breaks only and no whitespace at the end of a line: then
/// N(`text`) is `text` (NFKC keeps every ASCII character, no ASCII character joins a cluster or
/// is in a table), found by a few vector scans of the whole text instead of a walk line by line:
/// without CR, VT or FF anywhere (the usual case), a line ends in whitespace exactly where
/// `" \n"` or `"\t\n"` occurs. 12 MB of source: ~0.8 ms, against ~4 ms stepping from line feed
/// to line feed.
fn is_plain(text: &str) -> bool {
    // The ASCII characters that `char::is_whitespace` calls whitespace, line breaks aside.
    let blank = |c: u8| matches!(c, b' ' | b'\t' | 0x0B | 0x0C);
    let b = text.as_bytes();
    text.is_ascii()
        && !b.last().is_some_and(|&c| blank(c))
        && match memchr::memchr3(b'\r', 0x0B, 0x0C, b) {
            None => {
                memchr::memmem::find(b, b" \n").is_none()
                    && memchr::memmem::find(b, b"\t\n").is_none()
            }
            Some(_) => {
                memchr::memchr(b'\r', b).is_none()
                    && LineFeeds::new(b).all(|i| i == 0 || !blank(b[i - 1]))
            }
        }
}

struct Builder<'a> {
    /// The original text.
    src: &'a str,
    /// N so far; `None` while N has equalled the original (no unit yet), whose first `ident`
    /// bytes it then is: the copy is made only when the first unit comes.
    out: Option<String>,
    ident: usize,
    units: Vec<Unit>,
}

impl Builder<'_> {
    /// Original bytes that N keeps as they are, every character its own cluster.
    fn push_ident(&mut self, s: &str) {
        match &mut self.out {
            Some(out) => out.push_str(s),
            None => self.ident += s.len(),
        }
    }

    fn unit(&mut self, o: usize, o_len: usize, n_text: &str) {
        let src = self.src;
        let ident = self.ident;
        let out = self.out.get_or_insert_with(|| {
            // Everything before the first unit is identity: N so far is the original so far.
            debug_assert_eq!(ident, o, "identity up to the first unit");
            let mut out = String::with_capacity(src.len());
            out.push_str(&src[..o]);
            out
        });
        self.units.push(Unit {
            n: out.len() as u32,
            o: o as u32,
            n_len: n_text.len() as u32,
            o_len: o_len as u32,
        });
        out.push_str(n_text);
    }

    /// Line content without its trailing whitespace, starting at original offset `base`.
    fn body(&mut self, body: &str, base: usize) {
        if body.is_ascii() {
            // ASCII never composes with ASCII and no table folds ASCII.
            self.push_ident(body);
            return;
        }
        let mut chars = body.char_indices().peekable();
        let mut scratch = String::new();
        while let Some((i, c)) = chars.next() {
            // Gather the cluster.
            let mut end = i + c.len_utf8();
            let mut starter = composing_form(c);
            while let Some(&(j, d)) = chars.peek() {
                if joins(&mut starter, d) {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            let cluster = &body[i..end];
            let single = end == i + c.len_utf8();
            if single
                && (c.is_ascii()
                    || (table_of(c).is_none()
                        && is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes))
            {
                self.push_ident(cluster);
                continue;
            }
            scratch.clear();
            scratch.extend(cluster.nfkc().map(fold));
            if single && scratch == cluster {
                self.push_ident(cluster);
            } else {
                let text = std::mem::take(&mut scratch);
                self.unit(base + i, cluster.len(), &text);
                scratch = text;
            }
        }
    }
}

/// Whether N(`text`) is empty, without building it: a line break always stays (as `\n`), and a
/// line's body without its trailing whitespace is empty exactly when the line is all
/// whitespace (NFKC never turns a non-empty text into an empty one).
pub(crate) fn is_blank_under_n(text: &str) -> bool {
    text.chars()
        .all(|c| c.is_whitespace() && c != '\n' && c != '\r')
}

/// Normalizes line breaks only: CRLF and lone CR become LF.
pub(crate) fn lf(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\r') {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> String {
        Normalized::new(s).text.into_owned()
    }

    #[test]
    fn folds_tables_and_line_breaks() {
        assert_eq!(n("a\r\nb\rc\n"), "a\nb\nc\n");
        assert_eq!(n("\u{201C}hi\u{201D} \u{2018}x\u{2019}"), "\"hi\" 'x'");
        assert_eq!(n("a\u{2014}b\u{2212}c\u{2011}d"), "a-b-c-d");
        assert_eq!(n("a\u{00A0}b\u{3000}c\u{202F}d"), "a b c d");
    }

    #[test]
    fn blank_under_n_agrees_with_n() {
        for t in [
            "",
            " ",
            "\t \u{3000}\u{00A0}",
            "\n",
            " \r",
            "x",
            " \u{00A8}",
            "\u{2028}",
        ] {
            assert_eq!(is_blank_under_n(t), n(t).is_empty(), "{t:?}");
        }
    }

    #[test]
    fn plain_is_exactly_the_ascii_texts_n_keeps() {
        // Every ASCII text of up to 4 characters over a few interesting ones (line breaks, the
        // whitespace N trims, and letters): the fast test agrees with building N.
        let alphabet = [b'a', b' ', b'\t', 0x0B, 0x0C, b'\n', b'\r', 0x00];
        let mut words = vec![Vec::new()];
        for _ in 0..4 {
            let longer: Vec<Vec<u8>> = words
                .iter()
                .filter(|w| w.len() == words.last().map_or(0, Vec::len))
                .flat_map(|w| alphabet.iter().map(move |&c| [w.clone(), vec![c]].concat()))
                .collect();
            words.extend(longer);
        }
        for w in words {
            let t = std::str::from_utf8(&w).unwrap();
            let built = Normalized::build(t);
            assert_eq!(is_plain(t), matches!(built.text, Cow::Borrowed(_)), "{t:?}");
            let fast = Normalized::new(t);
            assert_eq!(fast.text, built.text, "{t:?}");
            assert_eq!(fast.units, built.units, "{t:?}");
            assert_eq!(fast.last_line_trimmed, built.last_line_trimmed, "{t:?}");
        }
        assert!(!is_plain("caf\u{e9}"), "not ASCII: the builder decides");
    }

    #[test]
    fn unchanged_text_is_borrowed() {
        for t in ["", "fn a() {}\n", "caf\u{e9} \u{2603}\nx", "a\n\n"] {
            let m = Normalized::new(t);
            assert!(matches!(m.text, Cow::Borrowed(_)), "{t:?}");
            assert_eq!(m.text, t);
            assert_eq!(m.orig_span(0..t.len(), false), Some(0..t.len()));
        }
        // The first change comes late: the identity before it is copied once, then N goes on.
        let m = Normalized::new("abc\ndef  \nx\u{2019}\r\n");
        assert!(matches!(m.text, Cow::Owned(_)));
        assert_eq!(m.text, "abc\ndef\nx'\n");
        assert_eq!(m.orig_span(4..7, true), Some(4..9));
        assert_eq!(m.orig_span(8..11, false), Some(10..16));
    }

    #[test]
    fn trims_trailing_whitespace_per_line() {
        assert_eq!(n("a  \nb\t\r\nc \u{00A0}"), "a\nb\nc");
        assert!(Normalized::new("x  ").last_line_trimmed);
        assert!(!Normalized::new("x  \n").last_line_trimmed);
        assert!(!Normalized::new("x").last_line_trimmed);
        assert_eq!(n("   \n"), "\n");
    }

    #[test]
    fn nfkc_by_cluster() {
        assert_eq!(n("\u{FB01}x"), "fix");
        assert_eq!(n("e\u{0301}"), "\u{e9}");
        assert_eq!(n("\u{FF76}\u{FF9E}"), "\u{30AC}");
        assert_eq!(n("\u{1100}\u{1161}\u{11A8}"), "\u{AC01}");
    }

    #[test]
    fn maps_back_identity_and_units() {
        let text = "ab\u{FB01}c  \r\nd";
        let m = Normalized::new(text);
        assert_eq!(m.text, "abfic\nd");
        assert_eq!(m.orig_start(0), Some(0));
        assert_eq!(m.orig_start(2), Some(2));
        assert_eq!(m.orig_start(3), None, "inside the ligature");
        assert_eq!(m.orig_end(3), None);
        assert_eq!(m.orig_end(4), Some(5));
        assert_eq!(m.orig_start(4), Some(5));
        assert_eq!(m.orig_end(5), Some(6), "before the removed spaces");
        assert_eq!(
            m.orig_span(4..5, true),
            Some(5..8),
            "spaces, not the line break"
        );
        assert_eq!(m.orig_span(4..6, false), Some(5..10), "through CRLF");
        assert_eq!(m.orig_span(6..7, false), Some(10..11));
    }

    #[test]
    fn combining_mark_is_inside_cluster() {
        let m = Normalized::new("ae\u{0301}b");
        assert_eq!(m.text, "a\u{e9}b");
        assert_eq!(m.orig_span(1..3, false), Some(1..4));
        assert_eq!(m.orig_end(1), Some(1));
    }

    #[test]
    fn unmatched_combining_sequence_stays_one_cluster() {
        // x + acute has no precomposed form: N keeps both, but the boundary inside is not one.
        let m = Normalized::new("x\u{0301}y");
        assert_eq!(m.text, "x\u{0301}y");
        assert_eq!(m.orig_end(1), None);
        assert_eq!(m.orig_end(3), Some(3));
    }

    #[test]
    fn pieces_include_removed_whitespace_inside() {
        let m = Normalized::new("a \nb");
        let p = m.pieces(0..3);
        assert_eq!(p.len(), 3);
        assert_eq!(p[1], (1..1, 1..2, false));
    }
}
