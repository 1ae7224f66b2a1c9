//! The relaxed tier (SPEC §3b): formatting mistakes agents make, recovered at whole lines.
//!
//! Tried only for the edits that exact and normalized matching (§3) did not find. The file is
//! seen as a sequence of lines, each reduced to a *key*: its N(·) text without leading spaces and
//! tabs, inner runs of spaces and tabs as one space. An `oldText` becomes one or more *variants*
//! (as given; without read-tool line-number prefixes; without leading/trailing blank lines), each a
//! sequence of keys. All variants of all edits are searched for at once in the file's key sequence
//! (`matcher::search`: one automaton scan, a long sequence by `memmem`): linear in file plus edits
//! plus matches. Every window found is then verified line by line (key text, one uniform change
//! of indentation, line numbers), and `newText` is re-indented by the same change.
//!
//! A match covers whole lines (except a `blank_lines` remainder that §3 finds inside a line), must
//! be the only candidate, and replaces only its span.

use crate::engine::document::Document;
use crate::engine::matcher::{self, MAX_AMBIGUOUS, Miss, Needle, search};
use crate::engine::normalize::{Normalization, Normalized, lf};
use std::ops::Range;

/// How far matching may go (`--tolerance`, SPEC §1 and §3b).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Tolerance {
    /// Exact occurrences only (line endings aside).
    Exact,
    /// Exact and the normalized view N(·) of §3.
    Normalized,
    /// Also the relaxed tier of §3b (the default).
    #[default]
    Relaxed,
}

impl Tolerance {
    /// Parses a `--tolerance` value (`exact`, `normalized`, `relaxed`).
    pub fn parse(s: &str) -> Option<Tolerance> {
        match s {
            "exact" => Some(Tolerance::Exact),
            "normalized" => Some(Tolerance::Normalized),
            "relaxed" => Some(Tolerance::Relaxed),
            _ => None,
        }
    }

    /// The wire name, as `--tolerance` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Tolerance::Exact => "exact",
            Tolerance::Normalized => "normalized",
            Tolerance::Relaxed => "relaxed",
        }
    }
}

/// One edit the relaxed tier looks for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wanted<'a> {
    /// The text to find (`oldText`).
    pub old_text: &'a str,
    /// The replacement (`newText`), re-indented to match when needed.
    pub new_text: &'a str,
    /// Every occurrence is wanted (`replaceAll`), not a unique one.
    pub replace_all: bool,
}

/// A relaxed match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    /// Original byte spans, in order; one unless `replaceAll`.
    pub spans: Vec<Range<usize>>,
    /// `newText` as it goes in (re-indented, prefixes and mirrored blank lines dropped), LF breaks.
    pub new_text: String,
    /// What was relaxed (and what N(·) folded on the way), in report order.
    pub normalizations: Vec<Normalization>,
}

/// Why the relaxed tier did not produce a match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fail {
    /// No candidate.
    NotFound,
    /// More than one candidate: the first [`MAX_AMBIGUOUS`] spans and the total.
    Ambiguous {
        /// Original byte spans of the first candidates, in order.
        spans: Vec<Range<usize>>,
        /// Total number of candidates, or `matcher::UNCOUNTED` past a variant's share.
        count: usize,
    },
    /// Its windows (or the §3 occurrences of its `blank_lines` remainder) are rejected at so
    /// many places that checking them all would exceed the work budget, linear in the file plus
    /// the request: not decided (`too_large`), where `not_found` might be wrong.
    TooLarge,
    /// The only candidate needs a change of indentation that `newText` cannot take.
    CannotTake {
        /// Original byte span of the candidate.
        span: Range<usize>,
        /// Why `newText` cannot take the change, for the message.
        why: String,
    },
}

/// Tab widths tried when the project declares none.
const WIDTHS: [usize; 3] = [2, 4, 8];

/// Whether `c` is leading indentation.
fn is_indent(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// `s` without its leading spaces and tabs, inner runs of them as one space, trailing ones dropped.
fn collapsed(s: &str) -> impl Iterator<Item = char> + '_ {
    let body = s.trim_start_matches(is_indent).trim_end_matches(is_indent);
    let mut prev_ws = false;
    body.chars().filter_map(move |c| {
        if is_indent(c) {
            if prev_ws {
                return None;
            }
            prev_ws = true;
            Some(' ')
        } else {
            prev_ws = false;
            Some(c)
        }
    })
}

/// A line's key id: [`search::line_key`] of its collapsed form (indentation is ASCII, so
/// collapsing runs of spaces and tabs byte by byte gives the same text). Two different keys may
/// share an id; the windows that makes are dropped when each line is verified, so an id table
/// (a map entry per distinct line of the file) is not needed.
fn key_id(s: &str) -> u32 {
    let body = s.trim_start_matches(is_indent).trim_end_matches(is_indent);
    let mut prev_ws = false;
    search::line_key(body.bytes().filter_map(move |b| {
        if b == b' ' || b == b'\t' {
            if prev_ws {
                return None;
            }
            prev_ws = true;
            Some(b' ')
        } else {
            prev_ws = false;
            Some(b)
        }
    }))
}

fn key_is_blank(s: &str) -> bool {
    s.chars().all(char::is_whitespace)
}

fn leading(s: &str) -> &str {
    &s[..s.len() - s.trim_start_matches(is_indent).len()]
}

fn columns(indent: &str, width: usize) -> usize {
    indent.chars().fold(0, |col, c| {
        if c == '\t' {
            col + width - col % width
        } else {
            col + 1
        }
    })
}

/// A read tool's line-number prefix: `%6d<TAB>` (redline `read`, `cat -n`), `N→`, `N |`, `N:`.
/// Returns the number and the rest of the line.
fn number_prefix(line: &str) -> Option<(usize, &str)> {
    let t = line.trim_start_matches(' ');
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 9 {
        return None;
    }
    let n: usize = t[..digits].parse().ok()?;
    let rest = &t[digits..];
    if let Some(r) = rest.strip_prefix('\t') {
        return Some((n, r));
    }
    let r = rest.trim_start_matches(' ');
    // `N | text` (Roo) puts one space after the bar; `N→text` and `N:text` put none.
    if let Some(r) = r.strip_prefix('|') {
        return Some((n, r.strip_prefix(' ').unwrap_or(r)));
    }
    let r = r.strip_prefix('→').or_else(|| r.strip_prefix(':'))?;
    Some((n, r))
}

/// The lines of `text` without their prefixes when every line has one and the numbers are
/// consecutive; the first number.
fn strip_numbers<'s>(lines: &[&'s str]) -> Option<(usize, Vec<&'s str>)> {
    let mut first = None;
    let mut out = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        let (n, rest) = number_prefix(l)?;
        let f = *first.get_or_insert(n);
        if n != f + i {
            return None;
        }
        out.push(rest);
    }
    Some((first?, out))
}

/// One way of reading an `oldText`. Its lines borrow from the request (line endings made LF
/// once per edit), so a long `oldText` costs a slice per line, not a string per line.
struct Variant<'s> {
    edit: usize,
    /// 0: as given or without line numbers; 1: without leading/trailing blank lines.
    tier: u8,
    /// The original lines (prefixes stripped).
    lines: Vec<&'s str>,
    /// N(·) of the lines joined by `\n`, and where each line starts in it.
    ntext: String,
    nstarts: Vec<u32>,
    /// oldText ended with a line break: the span takes the last line's break too.
    eol_end: bool,
    /// Line number of the first line, when prefixes were stripped.
    first_number: Option<usize>,
    /// newText as it goes in before re-indentation (LF, without its final line break).
    new_text: String,
    new_eol_end: bool,
    blank_trimmed: bool,
}

impl<'s> Variant<'s> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        edit: usize,
        tier: u8,
        lines: Vec<&'s str>,
        eol_end: bool,
        first_number: Option<usize>,
        new_text: &str,
        blank_trimmed: bool,
        joined: Option<&str>,
    ) -> Variant<'s> {
        // `joined`: the lines as one text, when the caller has it (no copy of a long oldText).
        let ntext = match joined {
            Some(j) => Normalized::new(j).text.into_owned(),
            None => Normalized::new(&lines.join("\n")).text.into_owned(),
        };
        let mut nstarts = Vec::with_capacity(lines.len() + 1);
        nstarts.push(0);
        nstarts.extend(memchr::memchr_iter(b'\n', ntext.as_bytes()).map(|i| i as u32 + 1));
        nstarts.push(ntext.len() as u32 + 1);
        let t = lf(new_text);
        let (new_text, new_eol_end) = match t.strip_suffix('\n') {
            Some(b) => (b.to_string(), true),
            None => (t.into_owned(), false),
        };
        Variant {
            edit,
            tier,
            lines,
            ntext,
            nstarts,
            eol_end,
            first_number,
            new_text,
            new_eol_end,
            blank_trimmed,
        }
    }

    /// N(·) of line `i`.
    fn nline(&self, i: usize) -> &str {
        &self.ntext[self.nstarts[i] as usize..self.nstarts[i + 1] as usize - 1]
    }

    fn nline_count(&self) -> usize {
        self.nstarts.len() - 1
    }
}

/// The lines of `text` (LF) and whether it ended with a line break.
fn split_lines(text: &str) -> (Vec<&str>, bool) {
    let (body, eol_end) = match text.strip_suffix('\n') {
        Some(b) => (b, true),
        None => (text, false),
    };
    let mut lines = Vec::with_capacity(memchr::memchr_iter(b'\n', body.as_bytes()).count() + 1);
    lines.extend(body.split('\n'));
    (lines, eol_end)
}

/// How the window's indentation relates to oldText's.
enum Shift {
    /// Same indentation on every line.
    None,
    /// oldText's common prefix `q` is the file's `p`.
    Prefix { q: String, p: String, tabs: bool },
    /// By columns at one or more tab widths: (width, delta).
    Columns {
        widths: Vec<(usize, isize)>,
        tab_style: bool,
    },
}

/// One verified window.
struct Cand {
    span: Range<usize>,
    new_text: Result<String, String>,
    norms: Vec<Normalization>,
}

/// Bytes of N(file) per block of [`View`]'s sparse line index (4 bytes per KiB).
const BLOCK: usize = 1024;

/// The file as lines and keys, built once per file when some edit reaches the relaxed tier.
pub(crate) struct View<'a> {
    text: &'a str,
    file: &'a Normalized<'a>,
    /// Line breaks of N(file) before each block of [`BLOCK`] bytes: a line's start is found from
    /// its block (a table of every line start took 4 bytes per line), and its original span from
    /// that through N(·)'s map (a line break is never inside a cluster). With the key, the view
    /// keeps about 4 bytes per line.
    before: Vec<u32>,
    /// Number of lines (line breaks + 1).
    count: usize,
    /// The last line start found (line, offset): a window's lines are visited in order, each
    /// one line break after the last.
    last: std::cell::Cell<(usize, usize)>,
    /// Each line's key id, four bytes per line ([`search::encode_key`]).
    encoded: Vec<u8>,
    tab_width: Option<usize>,
}

impl<'a> View<'a> {
    /// The view of `doc`, whose N(·) is `file`.
    pub(crate) fn new(
        doc: &'a Document,
        file: &'a Normalized<'a>,
        tab_width: Option<usize>,
    ) -> View<'a> {
        let n = file.text.as_bytes();
        let mut before = Vec::with_capacity(n.len() / BLOCK + 1);
        let mut breaks = 0u32;
        for block in n.chunks(BLOCK) {
            before.push(breaks);
            breaks += memchr::memchr_iter(b'\n', block).count() as u32;
        }
        let mut encoded = Vec::with_capacity((breaks as usize + 1) * 4);
        for line in file.text.split('\n') {
            search::encode_key(key_id(line), &mut encoded);
        }
        View {
            text: doc.text.as_str(),
            file,
            before,
            count: breaks as usize + 1,
            last: std::cell::Cell::new((0, 0)),
            encoded,
            tab_width,
        }
    }

    /// Where N(·) line `i` starts; for `i == count`, one past the end of N(file) (where a line
    /// break after the last line would end).
    fn nstart(&self, i: usize) -> usize {
        let n = self.file.text.as_bytes();
        if i == 0 {
            return 0;
        }
        if i >= self.count {
            return n.len() + 1;
        }
        let (at_line, at) = self.last.get();
        let found = if i == at_line {
            at
        } else if i == at_line + 1 {
            memchr::memchr(b'\n', &n[at..]).map_or(n.len() + 1, |p| at + p + 1)
        } else {
            // The block holding the `i`-th line break (1-based), then that break within it.
            let k = self.before.partition_point(|&b| (b as usize) < i) - 1;
            let skip = i - self.before[k] as usize - 1;
            memchr::memchr_iter(b'\n', &n[k * BLOCK..])
                .nth(skip)
                .map_or(n.len() + 1, |p| k * BLOCK + p + 1)
        };
        self.last.set((i, found));
        found
    }

    /// N(·) of file line `i`.
    #[cfg(test)]
    fn nline(&self, i: usize) -> &'a str {
        let t: &'a str = &self.file.text;
        &t[self.nstart(i)..self.nstart(i + 1) - 1]
    }

    /// Number of file lines.
    fn count(&self) -> usize {
        self.count
    }

    /// Original (content start, content end) of file line `i`: where the line break before its
    /// N(·) line ends (`orig_end`: whitespace N removed at the start of a blank line is not
    /// before it) and where its own line break (or the end of the file) is (`orig_start`: after
    /// the trailing whitespace N removed). N(·) builds clusters line by line, so both are
    /// cluster boundaries; `None` would mean a broken map and drops the window.
    fn line(&self, i: usize) -> Option<(usize, usize)> {
        Some(self.line_and_n(i)?.0)
    }

    /// [`View::line`] and [`View::nline`] of line `i` at once (each line start found once).
    fn line_and_n(&self, i: usize) -> Option<((usize, usize), &'a str)> {
        let (a, b) = (self.nstart(i), self.nstart(i + 1));
        let start = self.file.orig_end(a)?;
        let end = self.file.orig_start(b - 1)?;
        let t: &'a str = &self.file.text;
        Some(((start, end), &t[a..b - 1]))
    }

    /// Finds every edit (each must have failed §3 with not found).
    pub(crate) fn find_all(&self, wanted: &[Wanted<'_>]) -> Vec<Result<Hit, Fail>> {
        let olds: Vec<std::borrow::Cow<'_, str>> = wanted.iter().map(|w| lf(w.old_text)).collect();
        let mut variants: Vec<Variant<'_>> = Vec::new();
        for (i, w) in wanted.iter().enumerate() {
            self.variants_of(i, &olds[i], w.new_text, &mut variants);
        }
        // Candidates per edit and tier.
        let mut cands: Vec<[Vec<Cand>; 2]> = (0..wanted.len())
            .map(|_| [Vec::new(), Vec::new()])
            .collect();
        // Key sequences; a variant with a key the file lacks cannot match. A variant read
        // without its line numbers can only be at the lines they name: it is only checked there.
        let mut patterns: Vec<Vec<u8>> = Vec::new();
        let mut pattern_variant: Vec<usize> = Vec::new();
        for (vi, v) in variants.iter().enumerate() {
            if let Some(first) = v.first_number {
                if let Some(c) = first.checked_sub(1).and_then(|at| self.verify(v, at)) {
                    cands[v.edit][v.tier as usize].push(c);
                }
                continue;
            }
            let mut bytes = Vec::with_capacity(v.nline_count() * 4);
            for l in (0..v.nline_count()).map(|i| v.nline(i)) {
                search::encode_key(key_id(l), &mut bytes);
            }
            if !bytes.is_empty() {
                patterns.push(bytes);
                pattern_variant.push(vi);
            }
        }
        // Every key-sequence occurrence (one scan for all variants: `search` keeps it linear
        // in the file plus the patterns), checked as it comes. A variant of an edit that is not
        // replaceAll is given up past its share of a budget of the file's lines plus the
        // variants' (`matcher::share`, a check costing the variant's lines): so a thousand
        // edits on a file of one repeated line cost their share, not every line each. Its
        // windows come in order, so the first candidates of a tier are among its variants'
        // first ones and `decide` lists the same places; an edit with a variant given up is
        // ambiguous with more places than counted (`UNCOUNTED`).
        let budget = self.count() + variants.iter().map(Variant::nline_count).sum::<usize>();
        // A window that a variant's check rejects (its lines' indentation changes unevenly, or
        // a key id is shared by different lines) costs up to the variant's lines too: each
        // variant may spend twice its equal share of the budget on them. Past that, a variant
        // with more than MAX_AMBIGUOUS candidates is ambiguous; any other is not decided
        // (`Fail::TooLarge`): checking a variant alone could cost its lines at every window.
        let reject_limit = matcher::reject_limit(2 * budget, variants.len());
        let mut rejected = vec![0usize; variants.len()];
        let mut too_large = vec![[false; 2]; wanted.len()];
        let mut uncounted = vec![[false; 2]; wanted.len()];
        let mut taken = vec![0u32; variants.len()];
        let refs: Vec<&[u8]> = patterns.iter().map(Vec::as_slice).collect();
        matcher::search::key_occurrences(&self.encoded, &refs, |p, m| {
            if m.start % 4 != 0 {
                return true;
            }
            let vi = pattern_variant[p];
            let v = &variants[vi];
            if let Some(c) = self.verify(v, m.start / 4) {
                cands[v.edit][v.tier as usize].push(c);
                taken[vi] += 1;
                if !wanted[v.edit].replace_all
                    && taken[vi] as usize >= matcher::share(budget, variants.len(), v.nline_count())
                {
                    uncounted[v.edit][v.tier as usize] = true;
                    return false;
                }
            } else {
                rejected[vi] += v.nline_count();
                if rejected[vi] >= reject_limit {
                    // Its windows come in order: more than MAX_AMBIGUOUS candidates are its
                    // first ones, as past its share.
                    if !wanted[v.edit].replace_all && taken[vi] as usize > MAX_AMBIGUOUS {
                        uncounted[v.edit][v.tier as usize] = true;
                    } else {
                        too_large[v.edit][v.tier as usize] = true;
                        matcher::note_refused();
                    }
                    return false;
                }
            }
            true
        });
        drop(refs);
        drop(patterns);
        // A blank_lines remainder may also match by §3 inside a line.
        let mut remainder: Vec<Option<Result<matcher::Found, Miss>>> = vec![None; wanted.len()];
        let trims: Vec<(usize, String, String)> = wanted
            .iter()
            .enumerate()
            .filter(|(i, _)| cands[*i][0].is_empty() && !too_large[*i][0])
            .filter_map(|(i, w)| trim_blank(w.old_text, w.new_text).map(|(o, n)| (i, o, n)))
            .collect();
        if !trims.is_empty() {
            let needles: Vec<Needle<'_>> = trims
                .iter()
                .map(|(i, o, _)| Needle {
                    old_text: o,
                    replace_all: wanted[*i].replace_all,
                    line_based: false,
                })
                .collect();
            for ((i, _, _), r) in trims
                .iter()
                .zip(matcher::find_all(self.text, self.file, &needles))
            {
                remainder[*i] = Some(r);
            }
        }
        wanted
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let [t0, t1] = std::mem::take(&mut cands[i]);
                // A tier not searched to the end may have had candidates.
                if too_large[i][0] {
                    return Err(Fail::TooLarge);
                }
                if !t0.is_empty() {
                    return decide(t0, w.replace_all, uncounted[i][0]);
                }
                if let Some(r) = remainder[i].take() {
                    // `trims` is in edit order: a search, not a scan per edit.
                    let new = trims
                        .binary_search_by_key(&i, |(k, _, _)| *k)
                        .map(|at| trims[at].2.clone())
                        .unwrap_or_default();
                    match r {
                        Ok(f) => {
                            let mut norms = f.normalizations;
                            norms.push(Normalization::BlankLines);
                            norms.sort();
                            return Ok(Hit {
                                spans: f.spans,
                                new_text: lf(&new).into_owned(),
                                normalizations: norms,
                            });
                        }
                        Err(Miss::Ambiguous { spans, count }) => {
                            return Err(Fail::Ambiguous { spans, count });
                        }
                        Err(Miss::TooLarge) => return Err(Fail::TooLarge),
                        Err(Miss::NotFound) => {}
                    }
                }
                if too_large[i][1] {
                    return Err(Fail::TooLarge);
                }
                decide(t1, w.replace_all, uncounted[i][1])
            })
            .collect()
    }

    fn variants_of<'s>(
        &self,
        edit: usize,
        old: &'s str,
        new_text: &str,
        out: &mut Vec<Variant<'s>>,
    ) {
        let (lines, eol_end) = split_lines(old);
        let numbered = strip_numbers(&lines);
        let new_numbered = {
            let nt = lf(new_text);
            let (nl, ne) = split_lines(&nt);
            strip_numbers(&nl).map(|(_, l)| {
                let mut s = l.join("\n");
                if ne {
                    s.push('\n');
                }
                s
            })
        };
        // Tier 1: without leading and trailing blank lines (and the newText lines mirroring them).
        let mut tier1 = Vec::new();
        for (ls, first, new) in [
            Some((&lines, None, new_text)),
            numbered
                .as_ref()
                .map(|(f, l)| (l, Some(*f), new_numbered.as_deref().unwrap_or(new_text))),
        ]
        .into_iter()
        .flatten()
        {
            let lead = ls.iter().take_while(|l| key_is_blank(l)).count();
            if lead == ls.len() {
                continue;
            }
            let trail = ls.iter().rev().take_while(|l| key_is_blank(l)).count();
            if lead == 0 && trail == 0 {
                continue;
            }
            let kept = ls[lead..ls.len() - trail].to_vec();
            let new = mirror(new, lead, trail);
            let first = first.map(|f| f + lead);
            // The old text's final line break went with the trailing blank lines.
            let eol = eol_end && trail == 0;
            tier1.push(Variant::new(edit, 1, kept, eol, first, &new, true, None));
        }
        let body = old.strip_suffix('\n').unwrap_or(old);
        out.push(Variant::new(
            edit,
            0,
            lines,
            eol_end,
            None,
            new_text,
            false,
            Some(body),
        ));
        if let Some((first, stripped)) = numbered {
            let new = new_numbered.as_deref().unwrap_or(new_text);
            out.push(Variant::new(
                edit,
                0,
                stripped,
                eol_end,
                Some(first),
                new,
                false,
                None,
            ));
        }
        out.extend(tier1);
    }

    /// Checks the window of `v` starting at file line `start`.
    fn verify(&self, v: &Variant, start: usize) -> Option<Cand> {
        let k = v.lines.len();
        if start + k > self.count() {
            return None;
        }
        if let Some(first) = v.first_number
            && first != start + 1
        {
            return None;
        }
        let last = start + k - 1;
        // The line break after the last line must exist.
        if v.eol_end && last + 1 >= self.count() {
            return None;
        }
        // The window's lines are visited in order, so that each line start is found one line
        // break after the last (the view's index is sparse).
        let mut span = 0..0;
        let mut norms: Vec<Normalization> = Vec::new();
        let mut pairs: Vec<(&str, &str)> = Vec::new(); // (file indent, old indent) of non-blank lines
        for i in 0..k {
            // A line checked is a step of the search's work (tests bound them).
            matcher::ac::step();
            let ((s, e), nf) = self.line_and_n(start + i)?;
            if i == 0 {
                span.start = s;
            }
            span.end = e;
            let fline = &self.text[s..e];
            let no = v.nline(i);
            if !collapsed(nf).eq(collapsed(no)) {
                return None;
            }
            let oline = v.lines[i];
            if key_is_blank(nf) {
                continue;
            }
            pairs.push((leading(fline), leading(oline)));
            compare_bodies(fline, oline, nf, no, &mut norms);
        }
        if v.eol_end {
            span.end = self.line(last + 1)?.0;
        }
        if v.first_number.is_some() {
            norms.push(Normalization::LineNumbers);
        }
        if v.blank_trimmed {
            norms.push(Normalization::BlankLines);
        }
        let shift = self.shift(&pairs)?;
        match &shift {
            Shift::None => {}
            Shift::Prefix { tabs: true, .. } => norms.push(Normalization::Tabs),
            Shift::Prefix { tabs: false, .. } => norms.push(Normalization::Indentation),
            Shift::Columns { widths, .. } => {
                norms.push(Normalization::Tabs);
                if widths.iter().any(|&(_, d)| d != 0) {
                    norms.push(Normalization::Indentation);
                }
            }
        }
        let new_text = reindent(&v.new_text, &shift).map(|mut s| {
            if v.new_eol_end {
                s.push('\n');
            }
            s
        });
        norms.sort();
        norms.dedup();
        Some(Cand {
            span,
            new_text,
            norms,
        })
    }

    /// The one uniform change of indentation from oldText's lines to the file's, if any.
    fn shift(&self, pairs: &[(&str, &str)]) -> Option<Shift> {
        if pairs.iter().all(|(f, o)| f == o) {
            return Some(Shift::None);
        }
        // As strings: oldText's common prefix q becomes the file's p on every line.
        let q_len = pairs
            .iter()
            .map(|(_, o)| *o)
            .reduce(|a, b| &a[..common_prefix(a, b)])
            .map_or(0, str::len);
        let mut p: Option<&str> = None;
        let mut ok = true;
        for (f, o) in pairs {
            let s = &o[q_len..];
            match f.strip_suffix(s) {
                Some(pre) if p.is_none_or(|x| x == pre) => p = Some(pre),
                _ => {
                    ok = false;
                    break;
                }
            }
        }
        if ok && let Some(p) = p {
            let mut q = pairs[0].1[..q_len].to_string();
            let mut p = p.to_string();
            while !q.is_empty() && q.as_bytes().last() == p.as_bytes().last() {
                q.pop();
                p.pop();
            }
            let widths = self.widths();
            let tabs = widths.iter().any(|&w| columns(&q, w) == columns(&p, w));
            return Some(Shift::Prefix { q, p, tabs });
        }
        // By columns at the declared width, or at 2, 4 and 8.
        let found: Vec<(usize, isize)> = self
            .widths()
            .into_iter()
            .filter_map(|w| {
                let mut d = None;
                for (f, o) in pairs {
                    let x = columns(f, w) as isize - columns(o, w) as isize;
                    if *d.get_or_insert(x) != x {
                        return None;
                    }
                }
                d.map(|d| (w, d))
            })
            .collect();
        if found.is_empty() {
            return None;
        }
        let tab_style = pairs.iter().any(|(f, _)| f.contains('\t'));
        Some(Shift::Columns {
            widths: found,
            tab_style,
        })
    }

    fn widths(&self) -> Vec<usize> {
        match self.tab_width {
            Some(w) if w > 0 => vec![w],
            _ => WIDTHS.to_vec(),
        }
    }
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

/// What a line pair needed besides indentation: trailing whitespace, inner whitespace, N(·) folds.
fn compare_bodies(fline: &str, oline: &str, nf: &str, no: &str, norms: &mut Vec<Normalization>) {
    let fb = fline.trim_start_matches(is_indent);
    let ob = oline.trim_start_matches(is_indent);
    if fb == ob {
        return;
    }
    let ft = fb.trim_end_matches(char::is_whitespace);
    let ot = ob.trim_end_matches(char::is_whitespace);
    if fb[ft.len()..] != ob[ot.len()..] {
        norms.push(Normalization::TrailingWhitespace);
    }
    if ft == ot {
        return;
    }
    if collapsed(ft).eq(collapsed(ot)) {
        norms.push(Normalization::InnerWhitespace);
        return;
    }
    // N(·) folded something: the bodies differ in characters that the tables or NFKC change.
    let nft = nf.trim_start_matches(is_indent);
    let not = no.trim_start_matches(is_indent);
    if nft != not {
        norms.push(Normalization::InnerWhitespace);
    }
    let mut fc: Vec<char> = ft.chars().filter(|c| !is_indent(*c)).collect();
    let mut oc: Vec<char> = ot.chars().filter(|c| !is_indent(*c)).collect();
    fc.sort_unstable();
    oc.sort_unstable();
    for c in symmetric_difference(&fc, &oc) {
        if let Some(t) = crate::engine::normalize::table_of(c) {
            norms.push(t);
        } else if !c.is_ascii() {
            norms.push(Normalization::Nfkc);
        }
    }
}

fn symmetric_difference(a: &[char], b: &[char]) -> Vec<char> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                out.push(*x);
                i += 1;
            }
            (Some(_), Some(y)) => {
                out.push(*y);
                j += 1;
            }
            (Some(x), None) => {
                out.push(*x);
                i += 1;
            }
            (None, Some(y)) => {
                out.push(*y);
                j += 1;
            }
            (None, None) => break,
        }
    }
    out
}

/// newText's non-blank lines with the window's change of indentation applied.
fn reindent(text: &str, shift: &Shift) -> Result<String, String> {
    let mut out = String::new();
    let lines = || text.split('\n');
    match shift {
        Shift::None => out = text.to_string(),
        Shift::Prefix { q, p, .. } => {
            for (i, l) in lines().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                if key_is_blank(l) {
                    out.push_str(l);
                    continue;
                }
                match l.strip_prefix(q.as_str()) {
                    Some(rest) => {
                        out.push_str(p);
                        out.push_str(rest);
                    }
                    None => {
                        return Err(format!(
                            "newText line {} ({:?}) does not start with the indentation {:?} that oldText's lines share, so it cannot be moved to the file's {:?}",
                            i + 1,
                            l,
                            q,
                            p
                        ));
                    }
                }
            }
        }
        Shift::Columns { widths, tab_style } => {
            let mut first: Option<String> = None;
            for &(w, d) in widths {
                let mut s = String::new();
                for (i, l) in lines().enumerate() {
                    if i > 0 {
                        s.push('\n');
                    }
                    if key_is_blank(l) {
                        s.push_str(l);
                        continue;
                    }
                    let lead = leading(l);
                    let col = columns(lead, w) as isize + d;
                    if col < 0 {
                        return Err(format!(
                            "newText line {} ({:?}) has less indentation than the change of {d} columns (tab width {w}) takes away",
                            i + 1,
                            l
                        ));
                    }
                    let col = col as usize;
                    if *tab_style {
                        s.push_str(&"\t".repeat(col / w));
                        s.push_str(&" ".repeat(col % w));
                    } else {
                        s.push_str(&" ".repeat(col));
                    }
                    s.push_str(&l[lead.len()..]);
                }
                match &first {
                    None => first = Some(s),
                    Some(f) if *f == s => {}
                    Some(_) => {
                        return Err(
                            "the tab widths 2, 4 and 8 that match oldText give newText different indentation; declare indent_size or tab_width in .editorconfig"
                                .into(),
                        );
                    }
                }
            }
            out = first.unwrap_or_default();
        }
    }
    Ok(out)
}

/// `body` (LF, without its final line break) as a list of lines, without up to `lead` leading
/// and then up to `trail` trailing blank lines: the byte range of the lines kept, how many are
/// kept, and how many were dropped at each end. Walks only the dropped lines.
fn drop_blank(body: &str, lead: usize, trail: usize) -> (Range<usize>, usize, usize, usize) {
    let total = memchr::memchr_iter(b'\n', body.as_bytes()).count() + 1;
    let (mut start, mut l) = (0, 0);
    while l < lead && l < total {
        let end = body[start..].find('\n').map_or(body.len(), |i| start + i);
        if !key_is_blank(&body[start..end]) {
            break;
        }
        l += 1;
        start = if end == body.len() { end } else { end + 1 };
    }
    let (mut end, mut t) = (body.len(), 0);
    while t < trail && t < total - l {
        let from = body[start..end]
            .rfind('\n')
            .map_or(start, |i| start + i + 1);
        if !key_is_blank(&body[from..end]) {
            break;
        }
        t += 1;
        end = if from == start { start } else { from - 1 };
    }
    (start..end, total - l - t, l, t)
}

/// oldText and newText without oldText's leading/trailing blank lines and the blank lines of
/// newText that mirror them; `None` when oldText has none (or nothing else).
fn trim_blank(old: &str, new: &str) -> Option<(String, String)> {
    let old = lf(old);
    let (body, eol_end) = match old.strip_suffix('\n') {
        Some(b) => (b, true),
        None => (&*old, false),
    };
    let (kept, count, lead, trail) = drop_blank(body, usize::MAX, usize::MAX);
    if count == 0 || (lead == 0 && trail == 0) {
        return None;
    }
    let mut kept = body[kept].to_string();
    if eol_end && trail == 0 {
        kept.push('\n');
    }
    Some((kept, mirror(new, lead, trail)))
}

/// `new` without up to `lead` leading and `trail` trailing blank lines.
fn mirror(new: &str, lead: usize, trail: usize) -> String {
    let new = lf(new);
    let (body, eol_end) = match new.strip_suffix('\n') {
        Some(b) => (b, true),
        None => (&*new, false),
    };
    let (kept, count, _, t) = drop_blank(body, lead, trail);
    if count == 0 {
        return String::new();
    }
    let mut s = body[kept].to_string();
    if eol_end && t == 0 {
        s.push('\n');
    }
    s
}

/// One edit's outcome from its verified candidates.
fn decide(mut cands: Vec<Cand>, replace_all: bool, uncounted: bool) -> Result<Hit, Fail> {
    cands.sort_by_key(|c| (c.span.start, c.span.end));
    cands.dedup_by(|a, b| a.span == b.span);
    match cands.len() {
        0 => Err(Fail::NotFound),
        1 if !replace_all => {
            let c = cands.pop().unwrap_or_else(|| unreachable!("one candidate"));
            match c.new_text {
                Ok(new_text) => Ok(Hit {
                    spans: vec![c.span],
                    new_text,
                    normalizations: c.norms,
                }),
                Err(why) => Err(Fail::CannotTake { span: c.span, why }),
            }
        }
        n if !replace_all => Err(Fail::Ambiguous {
            spans: cands
                .iter()
                .take(MAX_AMBIGUOUS)
                .map(|c| c.span.clone())
                .collect(),
            count: if uncounted { matcher::UNCOUNTED } else { n },
        }),
        _ => {
            let mut last_end = 0;
            let mut spans = Vec::new();
            let mut new_text: Option<String> = None;
            let mut norms = Vec::new();
            for c in cands {
                if c.span.start < last_end {
                    continue;
                }
                last_end = c.span.end;
                let t = c.new_text.map_err(|why| Fail::CannotTake {
                    span: c.span.clone(),
                    why,
                })?;
                match &new_text {
                    None => new_text = Some(t),
                    Some(x) if *x == t => {}
                    Some(_) => {
                        return Err(Fail::CannotTake {
                            span: c.span,
                            why: "replaceAll: the occurrences need different re-indentations of newText; send one edit per occurrence".into(),
                        });
                    }
                }
                norms.extend(c.norms);
                spans.push(c.span);
            }
            norms.sort();
            norms.dedup();
            Ok(Hit {
                spans,
                new_text: new_text.unwrap_or_default(),
                normalizations: norms,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(text: &str, old: &str, new: &str) -> Result<Hit, Fail> {
        find_w(text, old, new, false, None)
    }

    fn find_w(text: &str, old: &str, new: &str, all: bool, w: Option<usize>) -> Result<Hit, Fail> {
        let doc = Document::from_text(text.to_string(), false);
        let file = Normalized::new(&doc.text);
        let view = View::new(&doc, &file, w);
        view.find_all(&[Wanted {
            old_text: old,
            new_text: new,
            replace_all: all,
        }])
        .remove(0)
    }

    proptest::proptest! {
        /// Giving variants up after their first candidates changes nothing: the same results
        /// as checking every window (the search's brute-force reference), on files of a few
        /// repeated lines re-typed with other indentation, line numbers or blank lines.
        #[test]
        fn same_results_as_checking_every_window(
            unit in proptest::collection::vec(
                proptest::sample::select(vec!["a", "  a", "\tb", "b  c", "", "  "]), 1..4),
            reps in 1usize..30,
            olds in proptest::collection::vec(
                (proptest::collection::vec(
                    proptest::sample::select(vec!["a", "b c", "  a", "b\tc", "", "1\ta", "    b  c"]), 1..5),
                 proptest::bool::ANY, proptest::bool::ANY), 1..6),
            reject_limit in 1usize..6,
        ) {
            let text = unit.join("\n").repeat(reps) + "\n";
            let doc = Document::from_text(text.clone(), false);
            let file = Normalized::new(&doc.text);
            let view = View::new(&doc, &file, None);
            let olds: Vec<(String, bool)> = olds
                .into_iter()
                .map(|(l, eol, all)| (l.join("\n") + if eol { "\n" } else { "" }, all))
                .collect();
            let wanted: Vec<Wanted<'_>> = olds
                .iter()
                .map(|(o, all)| Wanted { old_text: o, new_text: "x", replace_all: *all })
                .collect();
            let want = search::with_reference(|| view.find_all(&wanted));
            let got = view.find_all(&wanted);
            proptest::prop_assert_eq!(&got, &want);
            // With rejected windows limited: the same, except an edit not decided past the
            // limit (and only then), or left uncounted past MAX_AMBIGUOUS.
            let (tight, refused) = matcher::with_limits(reject_limit, 0, || view.find_all(&wanted));
            for (t, w) in tight.iter().zip(&want) {
                match (t, w) {
                    (Err(Fail::TooLarge), _) => proptest::prop_assert!(refused > 0),
                    (
                        Err(Fail::Ambiguous { spans, count: matcher::UNCOUNTED }),
                        Err(Fail::Ambiguous { spans: s, count: c }),
                    ) if *c > MAX_AMBIGUOUS => proptest::prop_assert_eq!(spans, s),
                    _ => proptest::prop_assert_eq!(t, w),
                }
            }
        }
    }

    /// Edits of `olds` (not replaceAll), each to `x` and a line break.
    fn replacing_with_x(olds: &[String]) -> Vec<Wanted<'_>> {
        olds.iter()
            .map(|o| Wanted {
                old_text: o,
                new_text: "x\n",
                replace_all: false,
            })
            .collect()
    }

    /// `view`'s results for `wanted`, and the search steps they took.
    fn costed(view: &View<'_>, wanted: &[Wanted<'_>]) -> (Vec<Result<Hit, Fail>>, usize) {
        let before = search::steps();
        let got = view.find_all(wanted);
        (got, search::steps() - before)
    }

    /// A file of one repeated line and edits whose lines match every window but whose
    /// indentation changes unevenly (`a`, then ` a`): every window is rejected after its
    /// lines are checked. They used to cost edits × windows × lines; now each edit's share of
    /// the budget, and past it the edit is not decided (too_large) rather than not found.
    #[test]
    fn rejected_windows_cost_a_budget() {
        let lines = 20_000;
        let text = "a\n".repeat(lines);
        let doc = Document::from_text(text.clone(), false);
        let file = Normalized::new(&doc.text);
        let view = View::new(&doc, &file, None);
        let olds: Vec<String> = (0..50)
            .map(|i| "a\n a\n".to_string() + &"a\n".repeat(i))
            .collect();
        let wanted = replacing_with_x(&olds);
        let (got, steps) = costed(&view, &wanted);
        for (i, r) in got.iter().enumerate() {
            assert_eq!(r, &Err(Fail::TooLarge), "edit {i}");
        }
        // One scan's worth of the crate's reports (4 bytes a line), then twice each edit's
        // share of lines checked in rejected windows.
        let total: usize = olds.iter().map(|o| 4 * o.lines().count()).sum();
        let bound = 3 * (4 * lines + total) + 2 * (lines + total) + 50 * (MAX_AMBIGUOUS + 1);
        assert!(steps <= bound, "{steps} steps over {bound}");
        // One such edit alone is checked at every window: not found.
        assert_eq!(view.find_all(&wanted[..1]), vec![Err(Fail::NotFound)]);
    }

    /// A file of one repeated (indented) line and many unindented edits of its lines: each
    /// matches at every line under `indentation`, and is given up after its first 21 windows,
    /// where every window of every edit used to be reported and checked.
    #[test]
    fn repeated_lines_cost_their_first_windows() {
        let lines = 20_000;
        let text = "    same line\n".repeat(lines);
        let doc = Document::from_text(text.clone(), false);
        let file = Normalized::new(&doc.text);
        let view = View::new(&doc, &file, None);
        let olds: Vec<String> = (0..50).map(|i| "same line\n".repeat(i + 2)).collect();
        let wanted = replacing_with_x(&olds);
        let (got, steps) = costed(&view, &wanted);
        for (i, r) in got.iter().enumerate() {
            let Err(Fail::Ambiguous { spans, count }) = r else {
                panic!("edit {i}: {r:?}");
            };
            assert_eq!(*count, matcher::UNCOUNTED, "edit {i}");
            let want: Vec<Range<usize>> = (0..MAX_AMBIGUOUS)
                .map(|k| 14 * k..14 * (k + i + 2))
                .collect();
            assert_eq!(spans, &want, "edit {i}");
        }
        // One scan's worth of the crate's reports (4 bytes a line), then each edit's share of
        // the lines (at least 21 windows).
        let total: usize = olds.iter().map(|o| 4 * o.lines().count()).sum();
        let bound = 3 * (4 * lines + total) + lines + 50 * (MAX_AMBIGUOUS + 1);
        assert!(steps <= bound, "{steps} steps over {bound}");
    }

    /// A line's original span comes from N(·)'s map: a blank line whose whitespace N removed
    /// starts where its own bytes start, not after them (found by the property test).
    #[test]
    fn line_spans_through_the_map() {
        let text = "a  \r\n  \n\n\u{201C}x\u{201D}\t\rend";
        let doc = Document::from_text(text.to_string(), false);
        let file = Normalized::new(&doc.text);
        let view = View::new(&doc, &file, None);
        let got: Vec<(usize, usize)> = (0..view.count()).map(|i| view.line(i).unwrap()).collect();
        assert_eq!(got, vec![(0, 3), (5, 7), (8, 8), (9, 17), (18, 21)]);
    }

    /// The sparse line index answers as a table of every line would, across block edges.
    #[test]
    fn sparse_line_index_finds_every_line() {
        let mut texts: Vec<String> = vec![String::new(), "\n".into(), "a".into(), "a\n\nb".into()];
        for len in [BLOCK - 1, BLOCK + 1, 2 * BLOCK + 5] {
            for step in [5usize, 61, BLOCK - 1, BLOCK, BLOCK + 3] {
                texts.push(
                    (0..len)
                        .map(|i| if (i + 1) % step == 0 { '\n' } else { 'x' })
                        .collect(),
                );
            }
        }
        for t in &texts {
            let doc = Document::from_text(t.clone(), false);
            let file = Normalized::new(&doc.text);
            let view = View::new(&doc, &file, None);
            let want: Vec<&str> = file.text.split('\n').collect();
            assert_eq!(view.count(), want.len(), "{}", t.len());
            // Every line near a block edge and a sample of the others (debug builds are slow).
            let edge = |i: usize| {
                let s = file
                    .text
                    .split('\n')
                    .take(i)
                    .map(|l| l.len() + 1)
                    .sum::<usize>();
                (s % BLOCK) < 64 || (s % BLOCK) > BLOCK - 64
            };
            for (i, w) in want.iter().enumerate().rev() {
                if i % 13 == 0 || i + 1 == want.len() || (want.len() < 200 && edge(i)) {
                    assert_eq!(view.nline(i), *w, "line {i} of a {}-byte text", t.len());
                }
            }
        }
    }

    fn apply(text: &str, h: &Hit) -> String {
        let mut out = text.to_string();
        for s in h.spans.iter().rev() {
            out.replace_range(s.clone(), &h.new_text);
        }
        out
    }

    #[test]
    fn dedented_block_is_reindented() {
        let text = "x\n    if a {\n        b();\n    }\ny\n";
        let h = find(text, "if a {\n    b();\n}", "if a {\n    c();\n}").unwrap();
        assert_eq!(h.normalizations, vec![Normalization::Indentation]);
        assert_eq!(apply(text, &h), "x\n    if a {\n        c();\n    }\ny\n");
    }

    #[test]
    fn relative_indentation_must_be_uniform() {
        let text = "  hello\n    world\n";
        assert_eq!(find(text, "hello\nworld", "a\nb"), Err(Fail::NotFound));
    }

    #[test]
    fn newtext_that_cannot_take_the_change_fails() {
        let r = find("Line 1\nLine 2\n", " Line 2", "Row 2");
        assert!(matches!(r, Err(Fail::CannotTake { .. })), "{r:?}");
    }

    #[test]
    fn tabs_by_columns_are_written_in_the_file_style() {
        let text = "start\nif (true) {\n\treturn 1\n}\nend";
        let h = find(
            text,
            "start\nif (true) {\n    return 1\n}\nend",
            "start\nif (true) {\n    return 2\n}\nend",
        )
        .unwrap();
        assert_eq!(h.normalizations, vec![Normalization::Tabs]);
        assert_eq!(apply(text, &h), "start\nif (true) {\n\treturn 2\n}\nend");
        // A declared width that does not fit finds nothing.
        assert_eq!(
            find_w(
                text,
                "start\nif (true) {\n    return 1\n}\nend",
                "x",
                false,
                Some(8)
            ),
            Err(Fail::NotFound)
        );
    }

    #[test]
    fn inner_whitespace_collapses_but_never_appears() {
        let h = find("const   x    =     5;\n", "const x = 5;", "const x = 10;").unwrap();
        assert_eq!(h.normalizations, vec![Normalization::InnerWhitespace]);
        assert_eq!(h.spans, vec![0..21]);
        assert_eq!(find("f(a, b)\n", "f(a,b)", "g"), Err(Fail::NotFound));
    }

    #[test]
    fn line_numbers_must_equal_the_file_lines() {
        let text = "a\nb\nc\n";
        let h = find(text, "2 | b\n3 | c", "2 | B\n3 | C").unwrap();
        assert_eq!(h.normalizations, vec![Normalization::LineNumbers]);
        assert_eq!(apply(text, &h), "a\nB\nC\n");
        assert_eq!(find(text, "     5\tb\n     6\tc", "x"), Err(Fail::NotFound));
        let h = find(text, "     2\tb\n     3\tc", "x").unwrap();
        assert_eq!(apply(text, &h), "a\nx\n");
        assert_eq!(find(text, "2→b\n4→c", "x"), Err(Fail::NotFound));
    }

    #[test]
    fn blank_lines_the_file_lacks_are_ignored() {
        let h = find("function test() {}", "\t\nfunction test()\n\t", "EDITED").unwrap();
        assert_eq!(h.normalizations, vec![Normalization::BlankLines]);
        assert_eq!(apply("function test() {}", &h), "EDITED {}");
    }

    #[test]
    fn ambiguous_lists_every_candidate() {
        let text = "  a\n  b\n\n    a\n    b\n";
        match find(text, "a\nb", "c\nd") {
            Err(Fail::Ambiguous { spans, count }) => {
                assert_eq!(count, 2);
                assert_eq!(spans, vec![0..7, 9..20]);
            }
            other => panic!("{other:?}"),
        }
        let h = find_w(text, "a\nb", "c\nd", true, None);
        assert!(matches!(h, Err(Fail::CannotTake { .. })), "{h:?}");
    }

    #[test]
    fn crlf_file_keeps_bytes_outside() {
        let text = "x\r\n  a  b\r\ny\r\n";
        let h = find(text, "a b", "c").unwrap();
        assert_eq!(h.spans, vec![3..9]);
        assert_eq!(apply(text, &h), "x\r\n  c\r\ny\r\n");
    }

    #[test]
    fn number_prefixes() {
        assert_eq!(number_prefix("     1\tx"), Some((1, "x")));
        assert_eq!(number_prefix("12 | x"), Some((12, "x")));
        assert_eq!(number_prefix("12→  x"), Some((12, "  x")));
        assert_eq!(number_prefix("3:x"), Some((3, "x")));
        assert_eq!(number_prefix("x1: y"), None);
        assert_eq!(number_prefix("1 x"), None);
    }
}
