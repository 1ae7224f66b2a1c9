//! Finding every edit of a file in one pass (SPEC §3.4–§3.6).
//!
//! All patterns N(oldText) of a file go into one Aho-Corasick automaton that scans N(file) once
//! with overlapping matches, so the cost is linear in the file plus the edits plus the matches.
//! A match counts only if both ends fall on cluster boundaries of the original and, under the
//! trimmed-last-line rule, it ends at a line end (or is an exact occurrence). What the search
//! reports and a rule rejects is paid for too, within a budget linear in the file plus the
//! request ([`find_all`]): past it an edit is ambiguous, searched again alone, or `too_large`,
//! never answered wrongly.

use crate::engine::document::{Document, LineStarts};
use crate::engine::normalize::{Normalization, Normalized, fold, lf, table_of};
use crate::offsets::{Ascending, EMPTY};
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use unicode_normalization::UnicodeNormalization;

pub(crate) mod ac;
pub(crate) mod applied;
pub(crate) mod chunks;
#[cfg(test)]
mod reference;
mod sampled;
pub(crate) mod search;

/// How many occurrences an ambiguous error lists (§3.9).
pub(crate) const MAX_AMBIGUOUS: usize = 20;

/// The count of an ambiguous edit whose occurrences were not all counted: more than
/// [`MAX_AMBIGUOUS`]. The search counts each `oldText`'s occurrences only up to its share of a
/// budget linear in the file plus the request ([`share`]), so that a thousand short `oldText`s
/// in a highly repetitive file do not cost a thousand times the file.
pub(crate) const UNCOUNTED: usize = usize::MAX;

/// How many occurrences one of `patterns` patterns may count when checking one costs `cost`
/// (its length: an occurrence's check may compare it whole) and all may cost `budget` (the
/// text plus the patterns): an equal share of the budget, and at least one more than an
/// ambiguous error lists. So counting costs at most `budget` plus `MAX_AMBIGUOUS + 1` checks of
/// each pattern, linear in the text plus the patterns, and a count under its share is exact.
pub(crate) fn share(budget: usize, patterns: usize, cost: usize) -> usize {
    (budget / patterns.max(1) / cost.max(1)).max(MAX_AMBIGUOUS + 1)
}

/// How an edit matched: `exact`, `normalized` (only under N(·)), or `relaxed` (§3b).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
// The variants are the wire names (serde) that SPEC defines; a doc comment per variant would
// make schemars publish `oneOf` consts instead of the schema's plain `enum` list.
#[allow(missing_docs)]
pub enum MatchKind {
    Exact,
    Normalized,
    Relaxed,
}

impl MatchKind {
    /// The wire name (`exact`, `normalized`, `relaxed`).
    pub fn as_str(self) -> &'static str {
        match self {
            MatchKind::Exact => "exact",
            MatchKind::Normalized => "normalized",
            MatchKind::Relaxed => "relaxed",
        }
    }
}

/// One edit to look for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Needle<'a> {
    /// The text to find (`oldText`), non-empty.
    pub old_text: &'a str,
    /// Every occurrence is wanted (`replaceAll`), not a unique one.
    pub replace_all: bool,
    /// SPEC §6: an `old_text` ending in a line break also matches, without that break, at the
    /// end of a file that has no final newline.
    pub line_based: bool,
}

/// Where an edit matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// Original byte spans, in order; one unless `replaceAll`.
    pub spans: Vec<Range<usize>>,
    /// Which tier found it.
    pub kind: MatchKind,
    /// What N(·) had to fold to find it, in report order (empty for exact).
    pub normalizations: Vec<Normalization>,
    /// The (single) span is a line-based match that ends at the end of a file without a final
    /// newline, `old_text`'s last line break standing for it (see [`Needle::line_based`]).
    pub at_eof: bool,
}

/// Why an edit did not match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Miss {
    /// No occurrence.
    NotFound,
    /// More than one occurrence; the first [`MAX_AMBIGUOUS`] original spans, and the total.
    Ambiguous {
        /// Original byte spans of the first occurrences, in order.
        spans: Vec<Range<usize>>,
        /// Number of occurrences, or [`UNCOUNTED`] past the pattern's [`share`].
        count: usize,
    },
    /// Occurrences of N(oldText) that the rules reject (inside ligatures or combined
    /// characters) at so many places that checking them all would exceed the work budget,
    /// linear in the file plus the request ([`find_all`]).
    TooLarge,
}

/// SPEC §3.9's verdict on the occurrences of one edit (a unique one is the match).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict<T> {
    /// No occurrence.
    NotFound,
    /// Exactly one.
    One(T),
    /// More than one: the first [`MAX_AMBIGUOUS`] and the total.
    Ambiguous {
        /// The first occurrences, in order.
        first: Vec<T>,
        /// Total number of occurrences.
        count: usize,
    },
}

/// The verdict on `count` occurrences, of which `occ` yields the first ones in order (all of
/// them, or at least [`MAX_AMBIGUOUS`]). Every dialect's edits are judged here.
pub(crate) fn verdict<T>(count: usize, occ: impl IntoIterator<Item = T>) -> Verdict<T> {
    let mut occ = occ.into_iter();
    match (count, occ.next()) {
        (0, _) | (_, None) => Verdict::NotFound,
        (1, Some(one)) => Verdict::One(one),
        (count, Some(first)) => Verdict::Ambiguous {
            first: std::iter::once(first)
                .chain(occ)
                .take(MAX_AMBIGUOUS)
                .collect(),
            count,
        },
    }
}

/// Where each line of `file` (N of `doc`'s text) starts: the document's own index when N(·)
/// changed nothing (most files), else one of N(file) (N maps every line break to one `\n` and
/// never joins lines, so N's lines are the document's). So the locator and the hints of a file
/// of many short lines do not each keep a copy of its line starts.
pub(crate) fn line_index<'d>(doc: &'d Document, file: &Normalized) -> Cow<'d, LineStarts> {
    match &file.text {
        Cow::Borrowed(_) => Cow::Borrowed(doc.line_index()),
        Cow::Owned(n) => Cow::Owned(LineStarts::of(n)),
    }
}

/// Where each pattern occurs as whole lines of N(file): the number of its first line (0-based,
/// N(file)'s lines being its `\n`-separated pieces), for every occurrence, ascending
/// (overlapping ones included). A pattern is the N(·) text of one or more whole lines joined by
/// `\n`, without a final one (SPEC §6: patch lines match whole lines); `open_end` says that
/// N(file)'s last piece is a line, with no line break after it (the original has no final
/// newline); otherwise a piece after a final `\n` is not a line. Every distinct line of the
/// patterns gets an id ([`LineIds`]: equal ids are equal lines, compared byte for byte), every
/// other line of the file id 0, and all patterns are searched in one scan of the file's ids
/// ([`search::key_occurrences`], as the relaxed tier searches its line keys: a byte automaton
/// over the text would cost a transition per byte). So a window found is an occurrence with
/// nothing left to compare, and the scan takes one byte a line while the patterns have fewer
/// than 256 distinct lines (two below 16 Ki): no copy of the file's line starts is made.
///
/// The lists together are bounded by one entry per line of the file plus 64 Ki (each
/// distinct pattern gets an equal share, at least `2 × (MAX_AMBIGUOUS + 1)`): in a highly
/// repetitive file every one of many distinct patterns may occur at nearly every line, and
/// keeping them all would cost patterns × lines. A pattern past its share keeps its first
/// occurrences and where the next one is ([`Stored::more_at`]); callers that need more look
/// further themselves, within their own work limit.
pub(crate) fn whole_lines(file: &Normalized, open_end: bool, patterns: &[&str]) -> WholeLines {
    let text = file.text.as_bytes();
    // Equal patterns (chunks often share their context lines) are searched, and their
    // occurrences kept, once.
    let mut ids: HashMap<&str, usize> = HashMap::with_capacity(patterns.len());
    let mut distinct: Vec<&str> = Vec::new();
    let of: Vec<usize> = patterns
        .iter()
        .map(|&p| {
            *ids.entry(p).or_insert_with(|| {
                distinct.push(p);
                distinct.len() - 1
            })
        })
        .collect();
    drop(ids);
    let mut out = WholeLines {
        of,
        occ: vec![Ascending::default(); distinct.len()],
        more_at: vec![None; distinct.len()],
    };
    if distinct.is_empty() {
        return out;
    }
    let mut ids = LineIds::default();
    for p in &distinct {
        for l in p.split('\n') {
            ids.insert(l.as_bytes());
        }
    }
    let width = ids.width();
    let encoded: Vec<Vec<u8>> = distinct
        .iter()
        .map(|p| {
            let mut b = Vec::with_capacity(p.split('\n').count() * width);
            for l in p.split('\n') {
                LineIds::push(ids.get(l.as_bytes()), width, &mut b);
            }
            b
        })
        .collect();
    // The file's lines: every piece before a `\n`, and the last piece when `open_end`.
    let breaks = memchr::memchr_iter(b'\n', text).count();
    let count = breaks + usize::from(open_end);
    let mut keys = Vec::with_capacity(count * width);
    let mut start = 0;
    for at in memchr::memchr_iter(b'\n', text) {
        LineIds::push(ids.get(&text[start..at]), width, &mut keys);
        start = at + 1;
    }
    if open_end {
        LineIds::push(ids.get(&text[start..]), width, &mut keys);
    }
    drop(ids);
    let refs: Vec<&[u8]> = encoded.iter().map(Vec::as_slice).collect();
    let share = ((count + (1 << 16)) / distinct.len()).max(2 * (MAX_AMBIGUOUS + 1));
    // Each pattern's occurrences come in ascending order, so a list cut at its share holds
    // every occurrence before the first one left out. A pattern's first byte only ever stands
    // at the start of a line's id (module docs of [`LineIds`]), so every match is aligned.
    search::key_occurrences(&keys, &refs, |p, m| {
        debug_assert_eq!(m.start % width, 0);
        if out.more_at[p].is_some() {
            return false;
        }
        let first = m.start / width;
        let list = &mut out.occ[p];
        if list.len() == share {
            // Its list is full: the search gives the pattern up (callers look further
            // themselves), so it costs nothing more.
            out.more_at[p] = Some(first);
            return false;
        }
        if list.len() == list.capacity() {
            // Doubling, but never past the share: the lists stay within their bound.
            list.reserve_exact(list.len().max(4).min(share - list.len()));
        }
        list.push(first as u32);
        true
    });
    out
}

/// The distinct lines of some patterns, numbered from 1 (0 stands for every other line), and
/// their ids written as bytes for [`search::key_occurrences`]. An open-addressing table over
/// [`search::line_key`], each hit compared byte for byte, so equal ids are equal lines. Ids
/// take one byte each while there are fewer than 256 lines; else `width` bytes of seven bits,
/// the first with its high bit set, so that an occurrence of a pattern (which starts with such
/// a byte) can only start where a line's id starts.
#[derive(Default)]
struct LineIds<'a> {
    /// Line `id - 1`, and its key.
    lines: Vec<(&'a [u8], u32)>,
    /// A power of two (or empty) of slots, each 0 or an id.
    slots: Vec<u32>,
}

impl<'a> LineIds<'a> {
    /// The id of `line`, 0 when it is none of the lines.
    fn get(&self, line: &[u8]) -> u32 {
        if self.slots.is_empty() {
            return 0;
        }
        self.find(line, search::line_key(line.iter().copied())).1
    }

    /// The slot where `line` (of key `key`) is or would go, and its id (0 if absent).
    fn find(&self, line: &[u8], key: u32) -> (usize, u32) {
        let mask = self.slots.len() - 1;
        let mut i = key as usize & mask;
        loop {
            let id = self.slots[i];
            if id == 0 {
                return (i, 0);
            }
            let (l, k) = self.lines[id as usize - 1];
            if k == key && l == line {
                return (i, id);
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds `line` if it is new.
    fn insert(&mut self, line: &'a [u8]) {
        if 2 * (self.lines.len() + 1) > self.slots.len() {
            // At most half full: short probes.
            let size = (2 * self.slots.len()).max(16);
            self.slots = vec![0; size];
            for id in 1..=self.lines.len() as u32 {
                let (l, k) = self.lines[id as usize - 1];
                let (i, _) = self.find(l, k);
                self.slots[i] = id;
            }
        }
        let key = search::line_key(line.iter().copied());
        let (i, id) = self.find(line, key);
        if id == 0 {
            self.lines.push((line, key));
            // Invariant: ids count patch lines, far fewer than 2^32.
            self.slots[i] = u32::try_from(self.lines.len()).expect("fewer than 2^32 lines");
        }
    }

    /// Bytes per id.
    fn width(&self) -> usize {
        let n = self.lines.len();
        if n < 256 {
            return 1;
        }
        let mut w = 2;
        while n >> (7 * w) != 0 {
            w += 1;
        }
        w
    }

    /// Appends the bytes of `id`, `w` of them ([`LineIds::width`]).
    fn push(id: u32, w: usize, out: &mut Vec<u8>) {
        if w == 1 {
            out.push(id as u8);
            return;
        }
        for k in (0..w).rev() {
            let b = ((u64::from(id) >> (7 * k)) & 0x7F) as u8;
            out.push(if k == w - 1 { 0x80 | b } else { b });
        }
    }
}

/// What [`whole_lines`] found: per pattern, the first line of each occurrence, ascending.
/// Equal patterns share one list, of about two bytes an entry where they are dense (in a
/// repetitive file, where they are long).
pub(crate) struct WholeLines {
    /// Each pattern's list in `occ`.
    of: Vec<usize>,
    occ: Vec<Ascending>,
    more_at: Vec<Option<usize>>,
}

/// The occurrences of one pattern that [`whole_lines`] kept.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stored<'a> {
    /// First lines, ascending: every occurrence that starts before `more_at`.
    pub lines: &'a Ascending,
    /// The first line of the first occurrence left out, when the list was cut at its share.
    pub more_at: Option<usize>,
}

impl Default for Stored<'_> {
    fn default() -> Self {
        Stored {
            lines: &EMPTY,
            more_at: None,
        }
    }
}

impl WholeLines {
    /// The occurrences of pattern `p` (its index in the patterns searched).
    pub(crate) fn of(&self, p: usize) -> Stored<'_> {
        let d = self.of[p];
        Stored {
            lines: &self.occ[d],
            more_at: self.more_at[d],
        }
    }
}

/// How many search patterns given up for their rejected reports may be searched again alone,
/// each a whole scan of the text (module docs of [`find_all`]); past that their edits are
/// `too_large`.
const RESCANS: usize = 16;

/// What one occurrence reported by the search is worth.
enum Seen {
    /// It counts: its N range and original span.
    Valid(Range<usize>, Range<usize>),
    /// An exact occurrence at a line end, which the trimmed pattern's own search counts: it
    /// counts toward the exact search's share, not as an occurrence of its own.
    Shadow,
    /// A rule rejects it (an end inside a cluster, an exact occurrence that N(·) does not
    /// start at).
    Rejected,
}

/// What the search found of one distinct pattern (48 bytes: most of many patterns have no
/// occurrence, so the occurrences kept are in one list for all, [`Kept`]).
#[derive(Default, Clone, Copy)]
struct Hits {
    /// Occurrences counted; a pattern that is not replaceAll stops at its [`share`].
    count: usize,
    /// Occurrences kept in the list (saturating; only read while at most `MAX_AMBIGUOUS + 1`).
    kept: u32,
    /// Reports rejected so far (saturating).
    rejected: u32,
    /// Exact occurrences at a line end ([`Seen::Shadow`]): counted by another pattern.
    shadows: u32,
    /// It stopped there: `count` is a lower bound (and more than [`MAX_AMBIGUOUS`]).
    uncounted: bool,
    /// A replaceAll pattern: its count is never cut at its share, and its occurrences are kept
    /// (every one that a replaceAll can take: see `greedy`).
    keep_all: bool,
    /// A replaceAll pattern that is the only source of its edits' occurrences (not under the
    /// trimmed-last-line rule, whose exact occurrences come from a second search): past its
    /// first `MAX_AMBIGUOUS + 1`, an occurrence overlapping the last one the leftmost
    /// non-overlapping choice took ([`decide`]) is not kept, since that choice never takes it.
    greedy: bool,
    /// Where the occurrence last taken by that choice ends, in N(·) and in the original.
    taken_end: (usize, usize),
    /// Given up for its rejected reports before its count was known: to be searched alone.
    rescan: bool,
    /// Given up so, and not searched again within [`RESCANS`]: its edits are `too_large`.
    refused: bool,
}

/// (pattern, N range, original span) of the occurrences kept, every one of a replaceAll
/// pattern and the first `MAX_AMBIGUOUS + 1` reported of any other; once the search is done,
/// sorted by pattern and start, each other pattern's list cut to its first `MAX_AMBIGUOUS + 1`.
struct Kept(Vec<(u32, Occurrence)>);

/// (N range, original span) of an occurrence.
type Occurrence = (Range<usize>, Range<usize>);

impl Kept {
    /// Pattern `pid`'s occurrences, in order of start.
    fn of(&self, pid: usize) -> impl Iterator<Item = &Occurrence> + Clone {
        let pid = pid as u32;
        let from = self.0.partition_point(|o| o.0 < pid);
        let to = from + self.0[from..].partition_point(|o| o.0 == pid);
        self.0[from..to].iter().map(|(_, o)| o)
    }
}

impl Hits {
    /// Takes what the search reported of pattern `pid` (its occurrences go to `kept`);
    /// whether the pattern is still wanted.
    fn take(
        &mut self,
        pid: usize,
        kept: &mut Kept,
        seen: Seen,
        share: usize,
        reject_limit: usize,
    ) -> bool {
        match seen {
            Seen::Valid(n, span) if self.keep_all => {
                self.count += 1;
                // replaceAll: as `decide` takes the leftmost non-overlapping occurrences (they
                // come in order of start). One that overlaps the last taken is kept only among
                // the first MAX_AMBIGUOUS + 1 (an edit that is not replaceAll may share the
                // pattern) or where another search adds occurrences; either way it is a wasted
                // report, which costs against the limit as a rejected one does: 100 replaceAll
                // edits `a`, `aa`, … on a file of `a` report every overlapping occurrence of each.
                let free = n.start >= self.taken_end.0 && span.start >= self.taken_end.1;
                if free {
                    self.taken_end = (n.end, span.end);
                }
                if free || !self.greedy || self.kept as usize <= MAX_AMBIGUOUS {
                    self.kept = self.kept.saturating_add(1);
                    kept.0.push((pid as u32, (n, span)));
                }
                if !free {
                    self.rejected = self.rejected.saturating_add(1);
                    if self.rejected as usize >= reject_limit {
                        // Its count is not known yet: searched again alone.
                        self.rescan = true;
                        return false;
                    }
                }
                return true;
            }
            Seen::Valid(n, span) => {
                self.count += 1;
                if self.kept as usize <= MAX_AMBIGUOUS {
                    self.kept = self.kept.saturating_add(1);
                    kept.0.push((pid as u32, (n, span)));
                }
            }
            Seen::Shadow => self.shadows = self.shadows.saturating_add(1),
            Seen::Rejected => {
                self.rejected = self.rejected.saturating_add(1);
                if self.rejected as usize >= reject_limit {
                    // More than MAX_AMBIGUOUS counted (they came in order of start): as past its
                    // share. Else its count is not known yet: searched again alone.
                    if !self.keep_all && self.count + self.shadows as usize > MAX_AMBIGUOUS {
                        self.uncounted = true;
                    } else {
                        self.rescan = true;
                    }
                    return false;
                }
                return true;
            }
        }
        // A pattern that is not replaceAll needs its first MAX_AMBIGUOUS + 1 occurrences and
        // a count: past its share of the budget it is given up (the search then stops paying
        // for it), so a short oldText in a highly repetitive file costs its share, not one
        // report per period.
        if !self.keep_all && self.count + self.shadows as usize >= share {
            self.uncounted = true;
            return false;
        }
        true
    }
}

#[cfg(test)]
thread_local! {
    /// Tests: (reject limit, rescans) instead of the budget's, to reach the rescans and
    /// `too_large` on small texts.
    static LIMITS: std::cell::Cell<Option<(usize, usize)>> = const { std::cell::Cell::new(None) };
    /// Tests: how many patterns were refused a rescan ([`Hits::refused`]) by this thread.
    static REFUSED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Runs `f` with every rejected report over `reject_limit` giving its pattern up and at most
/// `rescans` rescans (tests); also returns how many patterns were refused a rescan.
#[cfg(test)]
pub(crate) fn with_limits<T>(
    reject_limit: usize,
    rescans: usize,
    f: impl FnOnce() -> T,
) -> (T, usize) {
    LIMITS.with(|c| c.set(Some((reject_limit, rescans))));
    let before = REFUSED.with(std::cell::Cell::get);
    let out = f();
    LIMITS.with(|c| c.set(None));
    (out, REFUSED.with(std::cell::Cell::get) - before)
}

/// How many rejected reports (or, in the relaxed tier, lines of rejected windows) each of
/// `patterns` patterns may cost when all may cost `budget`: an equal share, at least
/// `MAX_AMBIGUOUS + 1` (tests may set it lower, [`with_limits`]).
pub(crate) fn reject_limit(budget: usize, patterns: usize) -> usize {
    #[cfg(test)]
    if let Some((limit, _)) = LIMITS.with(std::cell::Cell::get) {
        return limit;
    }
    share(budget, patterns, 1)
}

/// Notes a pattern given up for its rejected reports whose count is not known (tests count
/// them: `too_large` only past the budget).
pub(crate) fn note_refused() {
    #[cfg(test)]
    REFUSED.with(|c| c.set(c.get() + 1));
}

/// Counts the occurrences of `patterns` in `hay` into `hits` (one per pattern; pattern `p`'s
/// occurrences go to `kept` as pattern `first + p`), each judged by `seen`: one search for all
/// of them, then every pattern given up for its rejected reports before its count was known
/// searched again alone, with no limit on its rejected reports, while `rescans` lasts (one
/// whole scan each); the others are refused.
#[allow(clippy::too_many_arguments)]
fn count_into(
    hay: &[u8],
    patterns: &[&[u8]],
    hits: &mut [Hits],
    kept: &mut Kept,
    first: usize,
    budget: usize,
    rescans: &mut usize,
    seen: impl Fn(usize, Range<usize>) -> Seen,
) {
    // A rejected report costs a check of a few binary searches, not the pattern's length: each
    // pattern may reject twice its equal share of the budget (at least MAX_AMBIGUOUS + 1), so
    // rejected reports cost at most twice the text plus the patterns.
    let reject_limit = reject_limit(2 * budget, patterns.len());
    let share_of = |p: usize| share(budget, patterns.len(), patterns[p].len());
    search::occurrences(hay, patterns, |p, m| {
        hits[p].take(first + p, kept, seen(p, m), share_of(p), reject_limit)
    });
    for (p, h) in hits.iter_mut().enumerate() {
        if !h.rescan {
            continue;
        }
        if *rescans == 0 {
            h.refused = true;
            note_refused();
            continue;
        }
        *rescans -= 1;
        *h = Hits {
            keep_all: h.keep_all,
            greedy: h.greedy,
            ..Hits::default()
        };
        let pid = (first + p) as u32;
        kept.0.retain(|(q, _)| *q != pid);
        search::occurrences(hay, &[patterns[p]], |_, m| {
            h.take(first + p, kept, seen(p, m), share_of(p), usize::MAX)
        });
    }
}

/// A distinct search pattern: N(oldText), its trimmed-last-line flag, the oldText itself when
/// the flag is set (an exact occurrence always counts), and whether it only counts at the end of
/// the file (the line-based alternative of §6).
type Key<'a> = (&'a str, bool, &'a str, bool);

/// The original text with line endings as LF, for the search of exact occurrences (line endings
/// aside), and the map back: where each CRLF became one LF.
struct LfView<'a> {
    text: Cow<'a, [u8]>,
    /// Offsets in `text` of the LFs that stand for a CRLF, ascending.
    crlf: Vec<u32>,
}

impl<'a> LfView<'a> {
    fn new(text: &'a str) -> LfView<'a> {
        let b = text.as_bytes();
        if memchr::memchr(b'\r', b).is_none() {
            return LfView {
                text: Cow::Borrowed(b),
                crlf: Vec::new(),
            };
        }
        let mut out = Vec::with_capacity(b.len());
        let mut crlf = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\r' if b.get(i + 1) == Some(&b'\n') => {
                    crlf.push(out.len() as u32);
                    out.push(b'\n');
                    i += 2;
                }
                b'\r' => {
                    out.push(b'\n');
                    i += 1;
                }
                c => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        LfView {
            text: Cow::Owned(out),
            crlf,
        }
    }

    /// The original offset of offset `i` of the view.
    fn orig(&self, i: usize) -> usize {
        i + self.crlf.partition_point(|&p| (p as usize) < i)
    }
}

/// Finds every needle in `file` (N of `text`). Needles must have a non-empty N(oldText).
///
/// Each distinct N(oldText) is searched in N(file), all in one pass (`search::occurrences`);
/// under the trimmed-last-line rule it is searched followed by a line break (so only the
/// occurrences at a line end are reported) and checked at the end of the file directly, and the
/// exact occurrences of such `oldText`s (which count anywhere, §3.4) are searched in the
/// original text (line endings as LF), all in one more pass. The line-based alternative of §6
/// (at the end of a file without a final newline) is checked at the end directly.
///
/// An occurrence that a rule still rejects (it starts or ends inside a cluster, such as between
/// the `f` and `i` of `ﬁ`) is paid for too: a pattern may reject up to twice its share of the
/// budget. Past that, a pattern that has counted more than [`MAX_AMBIGUOUS`] occurrences is
/// ambiguous; any other is searched again alone, at most [`RESCANS`] of them (a whole scan
/// each), and past those its edits fail as [`Miss::TooLarge`]. So the cost stays linear in the
/// file plus the needles, and no answer is ever wrong.
pub(crate) fn find_all(
    text: &str,
    file: &Normalized,
    needles: &[Needle<'_>],
) -> Vec<Result<Found, Miss>> {
    // N(oldText) of each needle and its trimmed-last-line flag, without the map back to the
    // original (made again for a needle found only under N(·)): 5 bytes a needle, plus the
    // text of each N(oldText) that is not its oldText.
    let patterns = NormTexts::new(needles);
    // One search pattern per distinct N(oldText) and trimmed-last-line flag: two oldTexts with
    // the same N(·) count different occurrences when only one of them must end at a line end.
    // With the flag, the oldText itself is kept too: an exact occurrence always counts (§3.4).
    let file_open_end = !file.text.is_empty() && !file.text.ends_with('\n');
    let key = |i: usize| -> Key<'_> {
        let (text, trimmed) = (patterns.text(i), patterns.trimmed[i]);
        let exact_key = if trimmed { needles[i].old_text } else { "" };
        (text, trimmed, exact_key, false)
    };
    let (distinct, pattern_of) = intern(needles.len(), key, |_| None);
    // Of each distinct pattern, only the needle it was taken from (its text is that needle's
    // N(oldText)): 4 bytes beside the search, not 32.
    let distinct: Vec<u32> = distinct.into_iter().map(|(i, _, _)| i as u32).collect();
    let text_of = |d: usize| patterns.text(distinct[d] as usize);
    let trimmed = |d: usize| patterns.trimmed[distinct[d] as usize];
    let mut hits: Vec<Hits> = vec![Hits::default(); distinct.len()];
    let mut kept = Kept(Vec::new());
    for (i, n) in needles.iter().enumerate() {
        if n.replace_all {
            let d = pattern_of[i].0 as usize;
            hits[d].keep_all = true;
            hits[d].greedy = !trimmed(d);
        }
    }
    #[allow(unused_mut)]
    let mut rescans = RESCANS;
    #[cfg(test)]
    if let Some((_, r)) = LIMITS.with(std::cell::Cell::get) {
        rescans = r;
    }
    // N(oldText), followed by a line break under the trimmed-last-line rule: those are copied
    // into one buffer, the others searched as they are (no owned copy or `Cow` per pattern).
    let mut with_lf: Vec<u8> = Vec::new();
    for d in (0..distinct.len()).filter(|&d| trimmed(d)) {
        with_lf.extend_from_slice(text_of(d).as_bytes());
        with_lf.push(b'\n');
    }
    let mut at = 0;
    let refs: Vec<&[u8]> = (0..distinct.len())
        .map(|d| {
            let t = text_of(d).as_bytes();
            if trimmed(d) {
                at += t.len() + 1;
                &with_lf[at - t.len() - 1..at]
            } else {
                t
            }
        })
        .collect();
    let budget = file.text.len() + refs.iter().map(|b| b.len()).sum::<usize>();
    count_into(
        file.text.as_bytes(),
        &refs,
        &mut hits,
        &mut kept,
        0,
        budget,
        &mut rescans,
        |d, m| {
            let t = trimmed(d);
            let m = if t { m.start..m.end - 1 } else { m };
            match file.orig_span(m.clone(), t) {
                Some(span) => Seen::Valid(m, span),
                None => Seen::Rejected,
            }
        },
    );
    drop(refs);
    drop(with_lf);
    // A trimmed pattern at the very end of the file is at a line end too.
    for (d, h) in hits.iter_mut().enumerate() {
        let p = text_of(d);
        if trimmed(d) && !h.uncounted && !h.refused && file.text.ends_with(p) {
            let m = file.text.len() - p.len()..file.text.len();
            if let Some(span) = file.orig_span(m.clone(), true) {
                h.take(d, &mut kept, Seen::Valid(m, span), usize::MAX, usize::MAX);
            }
        }
    }
    // Exact occurrences of the trimmed patterns' oldTexts, mid-line (§3.4).
    let exact: Vec<usize> = (0..distinct.len()).filter(|&d| trimmed(d)).collect();
    // Their occurrences are kept as patterns `distinct.len() + k`.
    let mut exact_hits: Vec<Hits> = exact
        .iter()
        .map(|&d| Hits {
            keep_all: hits[d].keep_all,
            ..Hits::default()
        })
        .collect();
    if !exact.is_empty() {
        let olds: Vec<Cow<'_, str>> = exact
            .iter()
            .map(|&d| lf(needles[distinct[d] as usize].old_text))
            .collect();
        // The whitespace each oldText's last line ends with (it follows N(oldText)).
        let ws: Vec<usize> = olds
            .iter()
            .map(|o| {
                let last = o.rsplit('\n').next().unwrap_or(o);
                last.len() - last.trim_end().len()
            })
            .collect();
        let view = if olds.iter().any(|o| o.contains('\n')) {
            LfView::new(text)
        } else {
            // No line break in any of them: the original as it is (a match holds none).
            LfView {
                text: Cow::Borrowed(text.as_bytes()),
                crlf: Vec::new(),
            }
        };
        let refs: Vec<&[u8]> = olds.iter().map(|o| o.as_bytes()).collect();
        let budget = view.text.len() + refs.iter().map(|b| b.len()).sum::<usize>();
        count_into(
            &view.text,
            &refs,
            &mut exact_hits,
            &mut kept,
            distinct.len(),
            budget,
            &mut rescans,
            |k, r| {
                let (a, b) = (view.orig(r.start), view.orig(r.end));
                let body_end = b - ws[k];
                // Where N(oldText) would start and end in N(file): both cluster boundaries
                // that N(·) maps there, as the search of N(oldText) finds them.
                let n = file.n_of(a).zip(file.n_of(body_end));
                match n {
                    Some((s, e))
                        if file.is_orig_boundary(b)
                            && file.orig_start(s) == Some(a)
                            && file.orig_end(e) == Some(body_end) =>
                    {
                        if file.at_line_end(e) {
                            Seen::Shadow
                        } else {
                            Seen::Valid(s..e, a..b)
                        }
                    }
                    _ => Seen::Rejected,
                }
            },
        );
    }
    // Overlapping search reports by end; the rules are leftmost first.
    let keep_all = |pid: usize| match pid.checked_sub(distinct.len()) {
        Some(k) => exact_hits[k].keep_all,
        None => hits[pid].keep_all,
    };
    kept.0.sort_by_key(|(pid, (n, _))| (*pid, n.start, n.end));
    let mut run = (u32::MAX, 0);
    kept.0.retain(|(pid, _)| {
        if run.0 != *pid {
            run = (*pid, 0);
        }
        run.1 += 1;
        keep_all(*pid as usize) || run.1 <= MAX_AMBIGUOUS + 1
    });
    kept.0.shrink_to_fit();
    // A trimmed pattern's exact search: its index among them.
    let exact_of = |d: usize| exact.binary_search(&d).ok();
    needles
        .iter()
        .enumerate()
        .map(|(i, needle)| {
            let main = pattern_of[i].0 as usize;
            // The line-based alternative: the needle without its final line break at the end
            // of a file without a final newline (at most one occurrence).
            let eof = (needle.line_based && file_open_end)
                .then(|| patterns.text(i).strip_suffix('\n'))
                .flatten()
                .filter(|t| !t.is_empty() && file.text.ends_with(t))
                .and_then(|t| {
                    let m = file.text.len() - t.len()..file.text.len();
                    file.orig_span(m.clone(), true).map(|span| (m, span))
                });
            let exact = exact_of(main);
            let parts: Vec<&Hits> = std::iter::once(&hits[main])
                .chain(exact.map(|k| &exact_hits[k]))
                .collect();
            if parts.iter().any(|h| h.refused) {
                return Err(Miss::TooLarge);
            }
            let mut occ: Vec<&Occurrence> = kept.of(main).collect();
            if let Some(k) = exact {
                occ.extend(kept.of(distinct.len() + k));
            }
            occ.extend(eof.iter());
            occ.sort_by_key(|(n, _)| (n.start, n.end));
            let count = parts.iter().map(|h| h.count).sum::<usize>() + eof.is_some() as usize;
            let uncounted = parts.iter().any(|h| h.uncounted);
            let eof_end = eof.as_ref().map(|(_, span)| span.end);
            let count = if uncounted { UNCOUNTED } else { count };
            decide(text, file, needle, occ, count, eof_end)
        })
        .collect()
}

/// One needle's result from its occurrences (in order of start), their count ([`UNCOUNTED`]
/// past its share) and the end of its end-of-file occurrence: the leftmost non-overlapping ones
/// of a replaceAll edit or the verdict of another, then the kind and normalizations of the
/// spans chosen. Shared with the tests' reference matcher.
pub(super) fn decide(
    text: &str,
    file: &Normalized,
    needle: &Needle<'_>,
    occ: Vec<&Occurrence>,
    count: usize,
    eof_end: Option<usize>,
) -> Result<Found, Miss> {
    let chosen: Vec<&(Range<usize>, Range<usize>)> = if needle.replace_all {
        // Leftmost first, judged in N(·) — where an occurrence takes what its span
        // covers: an exact occurrence ending in whitespace that N(·) keeps (§3.4) covers
        // that whitespace too, so the next occurrence must start after it.
        let (mut last_end, mut last_span_end) = (0, 0);
        occ.iter()
            .copied()
            .filter(|(n, span)| {
                let take = n.start >= last_end && span.start >= last_span_end;
                if take {
                    last_end = n.end;
                    last_span_end = span.end;
                }
                take
            })
            .collect()
    } else {
        match verdict(count, occ) {
            Verdict::NotFound => return Err(Miss::NotFound),
            Verdict::One(one) => vec![one],
            Verdict::Ambiguous { first, count } => {
                return Err(Miss::Ambiguous {
                    spans: first.into_iter().map(|(_, s)| s.clone()).collect(),
                    count,
                });
            }
        }
    };
    if chosen.is_empty() {
        return Err(Miss::NotFound);
    }
    let at_eof = chosen.len() == 1 && eof_end == Some(chosen[0].1.end) && {
        let (n, _) = chosen[0];
        n.end == file.text.len()
    };
    let old_text = if at_eof {
        needle
            .old_text
            .strip_suffix('\n')
            .map_or(needle.old_text, |t| t.strip_suffix('\r').unwrap_or(t))
    } else {
        needle.old_text
    };
    let mut kind = MatchKind::Exact;
    let mut norms: Vec<Normalization> = Vec::new();
    let mut pat = None;
    for (n, span) in &chosen {
        if !same_lf(&text[span.clone()], old_text) {
            kind = MatchKind::Normalized;
            let pat = pat.get_or_insert_with(|| Normalized::new(old_text));
            for x in needed(text, file, n.clone(), span, old_text, pat) {
                if !norms.contains(&x) {
                    norms.push(x);
                }
            }
        }
    }
    norms.sort();
    Ok(Found {
        spans: chosen.iter().map(|(_, s)| s.clone()).collect(),
        kind,
        normalizations: norms,
        at_eof,
    })
}

/// N(oldText) of each needle and its trimmed-last-line flag: the text is the needle's `oldText`
/// itself unless N(·) changed it (as for most `oldText`s), so only changed ones are kept, in one
/// string (a flag and an index a needle, not a `Cow` and a flag: 5 bytes, not 32).
struct NormTexts<'a> {
    needles: &'a [Needle<'a>],
    /// Each needle's flag.
    trimmed: Vec<bool>,
    /// Each needle's entry in `ends` ([`NormTexts::BORROWED`] when N(oldText) is `oldText`).
    at: Vec<u32>,
    /// The changed texts, one after another, and where each ends.
    changed: String,
    ends: Vec<usize>,
}

impl<'a> NormTexts<'a> {
    const BORROWED: u32 = u32::MAX;

    fn new(needles: &'a [Needle<'a>]) -> NormTexts<'a> {
        let mut t = NormTexts {
            needles,
            trimmed: Vec::with_capacity(needles.len()),
            at: Vec::with_capacity(needles.len()),
            changed: String::new(),
            ends: Vec::new(),
        };
        for n in needles {
            let p = Normalized::new(n.old_text);
            t.trimmed.push(p.last_line_trimmed);
            match p.text {
                Cow::Borrowed(b) if std::ptr::eq(b, n.old_text) => t.at.push(Self::BORROWED),
                text => {
                    t.changed.push_str(&text);
                    t.at.push(t.ends.len() as u32);
                    t.ends.push(t.changed.len());
                }
            }
        }
        t.changed.shrink_to_fit();
        t
    }

    /// N(oldText) of needle `i`.
    fn text(&self, i: usize) -> &str {
        match self.at[i] {
            Self::BORROWED => self.needles[i].old_text,
            k => {
                let k = k as usize;
                let from = if k == 0 { 0 } else { self.ends[k - 1] };
                &self.changed[from..self.ends[k]]
            }
        }
    }
}

/// A distinct search pattern: the needle it was taken from, its text, and whether it only
/// counts at the end of the file.
type Distinct<'a> = (usize, &'a str, bool);

/// No line-based alternative (in [`intern`]'s second element).
const NO_ALT: u32 = u32::MAX;

/// The distinct search patterns of `n` needles, numbered in order of first appearance (needle
/// by needle, its main key before its alternative): for each, the needle it was taken from, its
/// text and whether it only counts at the end of the file; and for each needle the ids of its
/// main key and of its alternative ([`NO_ALT`] when it has none).
///
/// Equal keys are found by sorting the keys' indices (four bytes a key), not with a hash map
/// of the keys (48 bytes a bucket, doubling: 1.3 MB for 10,000 one-line edits, next to the
/// automaton at the matcher's peak).
fn intern<'a>(
    n: usize,
    key: impl Fn(usize) -> Key<'a>,
    alt_key: impl Fn(usize) -> Option<Key<'a>>,
) -> (Vec<Distinct<'a>>, Vec<(u32, u32)>) {
    // Key `2i` is needle i's main key, `2i + 1` its alternative.
    let key_of = |k: u32| -> Option<Key<'a>> {
        let i = k as usize / 2;
        if k.is_multiple_of(2) {
            Some(key(i))
        } else {
            alt_key(i)
        }
    };
    let mut order: Vec<u32> = (0..2 * n as u32).filter(|&k| key_of(k).is_some()).collect();
    // Stable: among equal keys the first in needle order comes first.
    order.sort_by(|&a, &b| key_of(a).cmp(&key_of(b)));
    // `id[k]`: first the first key equal to key k in needle order; then, in needle order, the
    // id of that key (each entry is rewritten once, after the earlier one it names).
    let mut id: Vec<u32> = vec![NO_ALT; 2 * n];
    let mut run = 0;
    for j in 0..order.len() {
        if j == 0 || key_of(order[j]) != key_of(order[j - 1]) {
            run = order[j];
        }
        id[order[j] as usize] = run;
    }
    drop(order);
    let count = (0..2 * n).filter(|&k| id[k] as usize == k).count();
    let mut distinct: Vec<Distinct<'a>> = Vec::with_capacity(count);
    for k in 0..2 * n {
        let first = id[k] as usize;
        if first == NO_ALT as usize {
            continue;
        }
        id[k] = if first == k {
            let (text, _, _, eof) = key_of(k as u32).expect("a key");
            distinct.push((k / 2, text, eof));
            (distinct.len() - 1) as u32
        } else {
            id[first]
        };
    }
    let pattern_of = (0..n).map(|i| (id[2 * i], id[2 * i + 1])).collect();
    (distinct, pattern_of)
}

/// Line-ending-insensitive view of a text, one byte at a time: CRLF and lone CR read as LF.
fn lf_bytes(s: &str) -> impl Iterator<Item = u8> + '_ {
    let b = s.as_bytes();
    b.iter().enumerate().filter_map(move |(i, &c)| match c {
        b'\r' if b.get(i + 1) == Some(&b'\n') => None,
        b'\r' => Some(b'\n'),
        c => Some(c),
    })
}

/// Whether two texts are equal with line endings aside, without allocating.
pub(crate) fn same_lf(a: &str, b: &str) -> bool {
    if !a.contains('\r') && !b.contains('\r') {
        return a == b;
    }
    lf_bytes(a).eq(lf_bytes(b))
}

/// One cluster (or identity character) on one side of a comparison.
struct Atom<'a> {
    n_end: usize,
    orig: &'a str,
}

/// The atoms of N range `n` in order, lazily (a long match must not cost a vector per character).
fn atoms<'a>(
    text: &'a str,
    m: &'a Normalized,
    n: Range<usize>,
) -> impl Iterator<Item = Atom<'a>> + 'a {
    let base = n.start;
    m.pieces(n)
        .into_iter()
        .filter(|(nr, _, _)| !nr.is_empty())
        .flat_map(move |(nr, or, ident)| {
            let s = &text[or];
            let (unit, start) = (!ident, nr.start - base);
            let end = nr.end - base;
            let mut chars = s.char_indices();
            let mut done = false;
            std::iter::from_fn(move || {
                if unit {
                    if done {
                        return None;
                    }
                    done = true;
                    return Some(Atom {
                        n_end: end,
                        orig: s,
                    });
                }
                let (i, c) = chars.next()?;
                Some(Atom {
                    n_end: start + i + c.len_utf8(),
                    orig: &s[i..i + c.len_utf8()],
                })
            })
        })
}

/// The categories that make the cluster run `file` equal to the cluster run `old` (§3a
/// "Normalizations reported"): the quote, dash and space tables when they alone explain the
/// difference; otherwise `nfkc`, plus any table still needed after NFKC.
pub(crate) fn classify(file: &str, old: &str, out: &mut Vec<Normalization>) {
    let file = lf(file);
    let old = lf(old);
    if file == old {
        return;
    }
    if !tables_explain(&file, &old, out) {
        out.push(Normalization::Nfkc);
        let (a, b): (String, String) = (file.nfkc().collect(), old.nfkc().collect());
        tables_explain(&a, &b, out);
    }
}

/// Whether `a` and `b` are equal character by character once folded by the tables; if so, the
/// tables that were needed are pushed to `out`.
fn tables_explain(a: &str, b: &str, out: &mut Vec<Normalization>) -> bool {
    if a.chars().count() != b.chars().count() {
        return false;
    }
    let mut used = Vec::new();
    for (x, y) in a.chars().zip(b.chars()) {
        if x == y {
            continue;
        }
        match (table_of(x), table_of(y)) {
            (tx, ty) if fold(x) == fold(y) => {
                if let Some(t) = tx.or(ty) {
                    used.push(t);
                }
            }
            _ => return false,
        }
    }
    out.extend(used);
    true
}

/// Which normalizations make the original span equal to `old_text` (called only when they differ).
fn needed(
    text: &str,
    file: &Normalized,
    n: Range<usize>,
    span: &Range<usize>,
    old_text: &str,
    pat: &Normalized,
) -> Vec<Normalization> {
    classify_span(text, file, n, span, old_text, pat, false)
}

/// What N(·) folded for whole lines of the file to equal `old_text` (whole lines joined by `\n`,
/// as many), in report order (SPEC §3a "Normalizations reported"); the classification
/// [`find_all`] makes of its spans, over whole lines. `first` is the first line, `n` the lines'
/// N range and `span` their original bytes, both without the last line's break. Unlike a
/// `find_all` span, which ends where oldText's N(·) ends and leaves the whitespace after it
/// outside, the span is the whole lines: each line's trailing whitespace is inside it, so
/// whitespace the file and `old_text` end a line with differently is `trailing_whitespace`
/// (a Codex chunk replaces whole lines, and the file's trailing whitespace goes with them).
pub(crate) fn whole_line_normalizations(
    text: &str,
    file: &Normalized,
    n: Range<usize>,
    span: &Range<usize>,
    old_text: &str,
) -> Vec<Normalization> {
    let pat = Normalized::new(old_text);
    classify_span(text, file, n, span, old_text, &pat, true)
}

/// [`needed`]; with `whole_lines`, the whitespace N(·) removed at the very start of `n` (the
/// first line's, when it is blank) counts as inside the span too.
fn classify_span(
    text: &str,
    file: &Normalized,
    n: Range<usize>,
    span: &Range<usize>,
    old_text: &str,
    pat: &Normalized,
    whole_lines: bool,
) -> Vec<Normalization> {
    let mut out = Vec::new();
    let mut a = atoms(text, file, n.clone()).peekable();
    let mut b = atoms(old_text, pat, 0..pat.text.len()).peekable();
    // Walk both sides in N order; a group ends where both sides reach the same N offset.
    let (mut ga, mut gb) = (String::new(), String::new());
    let (mut ea, mut eb) = (0usize, 0usize);
    loop {
        if ea == eb && (ea > 0 || eb > 0) {
            classify(&ga, &gb, &mut out);
            ga.clear();
            gb.clear();
        }
        let take_a = match (a.peek(), b.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(_), Some(_)) => ea <= eb,
        };
        if take_a {
            let x = a.next().expect("peeked");
            ea = x.n_end;
            ga.push_str(x.orig);
        } else {
            let y = b.next().expect("peeked");
            eb = y.n_end;
            gb.push_str(y.orig);
        }
    }
    if !ga.is_empty() || !gb.is_empty() {
        classify(&ga, &gb, &mut out);
    }
    // Trailing whitespace: what N removed inside the span versus inside oldText, line by line.
    let file_removed: Vec<(usize, &str)> = file
        .removed(n.clone())
        .filter(|(p, o)| {
            (whole_lines || *p > n.start) && o.start >= span.start && o.end <= span.end
        })
        .map(|(p, o)| (p - n.start, &text[o]))
        .collect();
    let pat_removed: Vec<(usize, &str)> = pat
        .removed(0..pat.text.len())
        .map(|(p, o)| (p, &old_text[o]))
        .collect();
    if !same_removed(&file_removed, &pat_removed) {
        out.push(Normalization::TrailingWhitespace);
    }
    out.sort();
    out.dedup();
    out
}

fn same_removed(a: &[(usize, &str)], b: &[(usize, &str)]) -> bool {
    fn joined(v: &[(usize, &str)]) -> Vec<(usize, String)> {
        let mut out: Vec<(usize, String)> = Vec::new();
        for (p, s) in v {
            match out.last_mut() {
                Some((q, acc)) if q == p => acc.push_str(s),
                _ => out.push((*p, s.to_string())),
            }
        }
        out
    }
    joined(a) == joined(b)
}

#[cfg(test)]
// A match's spans are a Vec of ranges; one span is the usual value, not a mistaken range.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;

    fn find(text: &str, old: &str, all: bool) -> Result<Found, Miss> {
        let file = Normalized::new(text);
        find_all(
            text,
            &file,
            &[Needle {
                old_text: old,
                replace_all: all,
                line_based: false,
            }],
        )
        .remove(0)
    }

    #[test]
    fn exact_unique_match() {
        let f = find("fn a() {}\nfn b() {}\n", "fn b() {}", false).unwrap();
        assert_eq!(f.spans, vec![10..19]);
        assert_eq!(f.kind, MatchKind::Exact);
    }

    #[test]
    fn overlapping_occurrences_are_ambiguous() {
        let e = find("aaa", "aa", false).unwrap_err();
        assert_eq!(
            e,
            Miss::Ambiguous {
                spans: vec![0..2, 1..3],
                count: 2
            }
        );
        let f = find("aaaa", "aa", true).unwrap();
        assert_eq!(f.spans, vec![0..2, 2..4]);
    }

    #[test]
    fn quotes_are_normalized_and_reported() {
        let f = find("say \u{201C}hi\u{201D} now", "say \"hi\"", false).unwrap();
        assert_eq!(f.kind, MatchKind::Normalized);
        assert_eq!(f.normalizations, vec![Normalization::Quotes]);
        assert_eq!(f.spans, vec![0..12]);
    }

    #[test]
    fn crlf_is_exact() {
        let f = find("a\r\nb\r\nc", "a\nb", false).unwrap();
        assert_eq!(f.kind, MatchKind::Exact);
        assert_eq!(f.spans, vec![0..4]);
    }

    #[test]
    fn trailing_whitespace_rules() {
        // "x  " on "x  " is exact and covers the spaces.
        let f = find("x  \ny", "x  ", false).unwrap();
        assert_eq!((f.spans.clone(), f.kind), (vec![0..3], MatchKind::Exact));
        // "x" on "x  " keeps the spaces outside.
        let f = find("x  \ny", "x", false).unwrap();
        assert_eq!(f.spans, vec![0..1]);
        // "x " must end at a line end: "xy" does not count.
        assert_eq!(find("xy\n", "x ", false), Err(Miss::NotFound));
        let f = find("a x\t\nb", "x \nb", false).unwrap();
        assert_eq!(f.kind, MatchKind::Normalized);
        assert_eq!(f.normalizations, vec![Normalization::TrailingWhitespace]);
        assert_eq!(f.spans, vec![2..6]);
    }

    #[test]
    fn match_inside_a_cluster_does_not_count() {
        assert_eq!(find("\u{FB01}x", "ix", false), Err(Miss::NotFound));
        let f = find("\u{FB01}x", "fix", false).unwrap();
        assert_eq!(f.normalizations, vec![Normalization::Nfkc]);
        assert_eq!(find("e\u{0301}", "e", false), Err(Miss::NotFound));
    }

    #[test]
    fn reported_normalizations() {
        let f = find("a\u{00A0}b", "a b", false).unwrap();
        assert_eq!(f.normalizations, vec![Normalization::Spaces]);
        let f = find("a\u{2014}b", "a-b", false).unwrap();
        assert_eq!(f.normalizations, vec![Normalization::Dashes]);
        let f = find("a\u{FE58}b", "a-b", false).unwrap();
        assert_eq!(
            f.normalizations,
            vec![Normalization::Nfkc, Normalization::Dashes]
        );
        let f = find("\u{FF21}\u{2019}  \nz", "A'\nz", false).unwrap();
        assert_eq!(
            f.normalizations,
            vec![
                Normalization::Nfkc,
                Normalization::TrailingWhitespace,
                Normalization::Quotes
            ]
        );
    }

    #[test]
    fn same_normal_form_with_and_without_trimmed_last_line() {
        let text = "abc\n";
        let file = Normalized::new(text);
        for (first, second) in [("ab ", "ab"), ("ab", "ab ")] {
            let r = find_all(
                text,
                &file,
                &[
                    Needle {
                        old_text: first,
                        replace_all: false,
                        line_based: false,
                    },
                    Needle {
                        old_text: second,
                        replace_all: false,
                        line_based: false,
                    },
                ],
            );
            let by_old = |old: &str| if old == first { &r[0] } else { &r[1] };
            assert_eq!(by_old("ab "), &Err(Miss::NotFound), "{first:?} first");
            assert_eq!(
                by_old("ab").as_ref().map(|f| f.spans.clone()),
                Ok(vec![0..2]),
                "{first:?} first"
            );
        }
    }

    #[test]
    fn replace_all_never_takes_overlapping_spans() {
        // The exact occurrence at 0 keeps its trailing space (§3.4); the trimmed one after it
        // starts on that space, so replaceAll takes only the first (found by proptest).
        let text = "\u{a0}fn fn\t\n(";
        let file = Normalized::new(text);
        let r = find_all(
            text,
            &file,
            &[Needle {
                old_text: "\u{a0}fn ",
                replace_all: true,
                line_based: false,
            }],
        );
        assert_eq!(r[0].as_ref().map(|f| f.spans.clone()), Ok(vec![0..5]));
    }

    #[test]
    fn multiple_needles_in_one_pass() {
        let text = "alpha beta gamma beta";
        let file = Normalized::new(text);
        let r = find_all(
            text,
            &file,
            &[
                Needle {
                    old_text: "alpha",
                    replace_all: false,
                    line_based: false,
                },
                Needle {
                    old_text: "beta",
                    replace_all: false,
                    line_based: false,
                },
                Needle {
                    old_text: "beta",
                    replace_all: true,
                    line_based: false,
                },
                Needle {
                    old_text: "delta",
                    replace_all: false,
                    line_based: false,
                },
            ],
        );
        assert_eq!(r[0].as_ref().unwrap().spans, vec![0..5]);
        assert!(matches!(r[1], Err(Miss::Ambiguous { count: 2, .. })));
        assert_eq!(r[2].as_ref().unwrap().spans, vec![6..10, 17..21]);
        assert_eq!(r[3], Err(Miss::NotFound));
    }
}

#[cfg(test)]
mod whole_line_tests {
    use super::*;

    fn lines(text: &str, open_end: bool, pats: &[&str]) -> Vec<Vec<usize>> {
        let found = whole_lines(&Normalized::new(text), open_end, pats);
        (0..pats.len())
            .map(|p| found.of(p).lines.iter_from(0).map(|l| l as usize).collect())
            .collect()
    }

    #[test]
    fn whole_lines_only_overlapping_included() {
        let t = "a\na\na\nab\n";
        assert_eq!(
            lines(t, false, &["a\na", "a", "b", "ab"]),
            vec![vec![0, 1], vec![0, 1, 2], vec![], vec![3]]
        );
    }

    #[test]
    fn empty_lines_and_the_open_end() {
        // "x\n\n": two lines, the second empty; the piece after the final break is none.
        assert_eq!(lines("x\n\n", false, &["", "x\n"]), vec![vec![1], vec![0]]);
        // Without a final newline the last piece is a line, empty or not.
        assert_eq!(lines("x\n", true, &["", "x\n"]), vec![vec![1], vec![0]]);
        assert_eq!(lines("x\ny", true, &["y", "x\ny"]), vec![vec![1], vec![0]]);
        // N(·) folds before lines are compared: trailing whitespace, smart quotes.
        assert_eq!(
            lines("say(\u{201C}x\u{201D})  \n", false, &["say(\"x\")"]),
            vec![vec![0]]
        );
    }

    /// Patterns of few and of many distinct lines (ids of one, two and three bytes) are found
    /// where a naive comparison of lines finds them, and nowhere else: two-byte ids whose
    /// second byte equals another's first never make a match start mid-id.
    #[test]
    fn line_ids_of_every_width_agree_with_naive_search() {
        for (distinct, width) in [(10, 1), (254, 1), (255, 2), (300, 2), (17_000, 3)] {
            let line = |i: usize| format!("l{}", (i * 7) % distinct);
            let file: Vec<String> = (0..2 * distinct + 50).map(line).collect();
            let text = file.join("\n") + "\n";
            // Windows of the file, a window that is nowhere, and every line of it once.
            let mut pats: Vec<String> = (0..40)
                .map(|k| {
                    (k * 13..k * 13 + 1 + k % 4)
                        .map(line)
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .collect();
            pats.push(format!("{}\nnowhere", line(3)));
            pats.push((0..distinct).map(line).collect::<Vec<_>>().join("\n"));
            let refs: Vec<&str> = pats.iter().map(String::as_str).collect();
            let mut ids = LineIds::default();
            for p in &refs {
                for l in p.split('\n') {
                    ids.insert(l.as_bytes());
                }
            }
            // The file's distinct lines and `nowhere`.
            assert_eq!(ids.width(), width, "{distinct} distinct lines");
            let got = lines(&text, false, &refs);
            for (p, pat) in refs.iter().enumerate() {
                let want: Vec<&str> = pat.split('\n').collect();
                let naive: Vec<usize> = (0..=file.len() - want.len())
                    .filter(|&s| (0..want.len()).all(|i| file[s + i] == want[i]))
                    .collect();
                assert_eq!(got[p], naive, "{distinct}: {pat:.40}");
            }
        }
    }

    #[test]
    fn verdict_caps_the_list() {
        assert_eq!(verdict(0, Vec::<usize>::new()), Verdict::NotFound);
        assert_eq!(verdict(1, [7]), Verdict::One(7));
        let v = verdict(30, 0..30);
        assert_eq!(
            v,
            Verdict::Ambiguous {
                first: (0..MAX_AMBIGUOUS).collect(),
                count: 30
            }
        );
    }
}

#[cfg(test)]
// A match's spans are a Vec of ranges; one span is the usual value, not a mistaken range.
#[allow(clippy::single_range_in_vec_init)]
mod exact_rule_tests {
    use super::*;

    fn find(text: &str, old: &str) -> Result<Found, Miss> {
        let file = Normalized::new(text);
        find_all(
            text,
            &file,
            &[Needle {
                old_text: old,
                replace_all: false,
                line_based: false,
            }],
        )
        .remove(0)
    }

    #[test]
    fn exact_occurrence_mid_line_counts_only_on_cluster_boundaries() {
        let f = find("let x = 1;\n", "let x = ").unwrap();
        assert_eq!((f.spans, f.kind), (vec![0..8], MatchKind::Exact));
        // The space before a combining mark is not a character of its own.
        assert_eq!(find("a  \u{301}b\n", "a  "), Err(Miss::NotFound));
        // CRLF inside the exact text.
        let f = find("a\r\nlet x = 1;\r\n", "a\nlet x = ").unwrap();
        assert_eq!(f.spans, vec![0..11]);
    }
}

#[cfg(test)]
mod saturation_tests {
    use super::*;
    use proptest::prelude::*;

    fn run(text: &str, needles: &[Needle<'_>]) -> Vec<Result<Found, Miss>> {
        find_all(text, &Normalized::new(text), needles)
    }

    /// A needle per `oldText`, none of them replaceAll or line-based.
    fn plain(olds: &[String]) -> Vec<Needle<'_>> {
        olds.iter()
            .map(|o| Needle {
                old_text: o,
                replace_all: false,
                line_based: false,
            })
            .collect()
    }

    #[test]
    fn short_and_long_edits_in_a_repetitive_file_stop_at_their_first_occurrences() {
        // SPEC §3.4 counts overlapping occurrences: every one of these is ambiguous, and the
        // search used to report each of them at every period of the file (K × n reports).
        let text = "ab".repeat(1_000_000);
        for base in [2usize, 1_100] {
            let olds: Vec<String> = (0..100).map(|i| "ab".repeat(base + i)).collect();
            let needles = plain(&olds);
            let before = search::steps();
            let got = run(&text, &needles);
            let steps = search::steps() - before;
            for (o, r) in olds.iter().zip(&got) {
                let spans: Vec<Range<usize>> =
                    (0..MAX_AMBIGUOUS).map(|k| 2 * k..2 * k + o.len()).collect();
                assert_eq!(
                    r,
                    &Err(Miss::Ambiguous {
                        spans,
                        count: UNCOUNTED
                    })
                );
            }
            // At most about one scan's worth of the crate's reports per group, then each
            // pattern's share of a budget of text plus patterns and our automaton's walk: where
            // reporting every occurrence made 100 × 1,000,000.
            let total: usize = olds.iter().map(String::len).sum();
            let pats: Vec<&[u8]> = olds.iter().map(|o| o.as_bytes()).collect();
            let scans = search::scans(text.len(), &pats);
            assert!(scans <= 4, "{scans} scans");
            assert!(
                steps <= 4 * scans * (text.len() + total) + 100 * (MAX_AMBIGUOUS + 1),
                "base {base}: {steps} reports and walk steps"
            );
        }
    }

    #[test]
    fn replace_all_still_gets_every_occurrence() {
        let text = "ab".repeat(10_000);
        let olds: Vec<String> = (0..50).map(|i| "ab".repeat(2 + i)).collect();
        let mut needles = plain(&olds);
        needles.push(Needle {
            old_text: "abab",
            replace_all: true,
            line_based: false,
        });
        let got = run(&text, &needles);
        let all = got.last().unwrap().as_ref().unwrap();
        assert_eq!(all.spans.len(), 5_000);
        // "abab" is the replaceAll edit's pattern too: it counts them all. The others stop at
        // their share of the budget ((20,000 + 2,650) / 50 / their length).
        assert!(matches!(got[0], Err(Miss::Ambiguous { count: 9_999, .. })));
        assert!(matches!(
            got[49],
            Err(Miss::Ambiguous {
                count: UNCOUNTED,
                ..
            })
        ));
    }

    fn piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "ab", "a", "b", " ", "\n", "\r\n", "\u{FB01}", "fi", "\u{A0}", "\u{2019}", "'",
            "e\u{301}", "  \n", "\r", "x\u{301}", "\t",
        ])
    }

    proptest! {
        /// Giving patterns up changes nothing in what is found: the same results as when every
        /// occurrence is reported and checked (the matcher as it was, [`reference`]), on
        /// repetitive texts where occurrences are rejected (inside a ligature or a cluster, not
        /// at a line end) as well as counted, through `memmem` (a few patterns on a small
        /// text), the crate and our own automaton, by sampling (run to its end or stopped and
        /// resumed by the automaton), and with rejected reports limited so that
        /// patterns are searched again or refused.
        #[test]
        fn same_results_as_reporting_everything(
            unit in prop::collection::vec(piece(), 1..4),
            reps in 1usize..40,
            tail in prop::collection::vec(piece(), 0..3),
            olds in prop::collection::vec(
                (prop::collection::vec(piece(), 1..5), any::<bool>(), any::<bool>()), 1..8),
            reject_limit in 1usize..4,
            rescans in 0usize..3,
        ) {
            let mut text = unit.concat().repeat(reps);
            text.push_str(&tail.concat());
            let olds: Vec<(String, bool, bool)> = olds
                .into_iter()
                .map(|(p, all, line)| (p.concat(), all, line))
                .filter(|(p, _, _)| !Normalized::new(p).text.is_empty())
                .collect();
            let needles: Vec<Needle<'_>> = olds
                .iter()
                .map(|(o, all, line)| Needle { old_text: o, replace_all: *all, line_based: *line })
                .collect();
            let want = reference::find_all_reference(&text, &Normalized::new(&text), &needles);
            agree(&run(&text, &needles), &want, 0)?;
            agree(&search::with_automata(|| run(&text, &needles)), &want, 0)?;
            agree(&search::with_sampling(None, || run(&text, &needles)), &want, 0)?;
            agree(&search::with_sampling(Some(reject_limit * 8), || run(&text, &needles)), &want, 0)?;
            agree(&search::with_own_automaton(|| run(&text, &needles)), &want, 0)?;
            // Patterns given up after a few rejected reports, searched again alone while the
            // rescans last, `too_large` past them (and only then).
            let (got, refused) = with_limits(reject_limit, rescans, || run(&text, &needles));
            agree(&got, &want, refused)?;
        }
    }

    /// `got` says what the reference `want` says, except that a count past [`MAX_AMBIGUOUS`]
    /// may be left uncounted, and that an edit may be `too_large` when `refused` patterns
    /// were refused a rescan (the work budget was exceeded), never otherwise.
    fn agree(
        got: &[Result<Found, Miss>],
        want: &[Result<Found, Miss>],
        refused: usize,
    ) -> Result<(), TestCaseError> {
        prop_assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            match (g, w) {
                (Err(Miss::TooLarge), _) => prop_assert!(refused > 0, "too_large within budget"),
                (
                    Err(Miss::Ambiguous {
                        spans,
                        count: UNCOUNTED,
                    }),
                    Err(Miss::Ambiguous { spans: s, count: c }),
                ) if *c > MAX_AMBIGUOUS => prop_assert_eq!(spans, s),
                _ => prop_assert_eq!(g, w),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod rejection_tests {
    use super::*;

    fn both(text: &str, old: &str) -> (Result<Found, Miss>, Result<Found, Miss>) {
        let file = Normalized::new(text);
        let needles = [Needle {
            old_text: old,
            replace_all: false,
            line_based: false,
        }];
        (
            find_all(text, &file, &needles).remove(0),
            reference::find_all_reference(text, &file, &needles).remove(0),
        )
    }

    #[test]
    fn exact_occurrences_where_n_does_not_start_them() {
        // The exact text starts with a line's trailing whitespace, which N(·) removed: the
        // search of N(oldText) never starts there, so neither does the search of the original.
        for (text, old) in [
            ("x  \ny z\n", "  \ny "),
            ("x  \r\ny z\r\n", "  \ny "),
            ("x \u{3000}\ny z", "\u{3000}\ny "),
            ("a \r\nb c\rd e", "\nb c\nd "),
        ] {
            let (got, want) = both(text, old);
            assert_eq!(got, want, "{text:?} {old:?}");
        }
    }

    /// `needles`' results and the search's reports and walk steps for them.
    fn costed(text: &str, needles: &[Needle<'_>]) -> (Vec<Result<Found, Miss>>, usize) {
        let file = Normalized::new(text);
        let before = search::steps();
        let got = find_all(text, &file, needles);
        (got, search::steps() - before)
    }

    fn needles(olds: &[String], line_based: bool) -> Vec<Needle<'_>> {
        olds.iter()
            .map(|o| Needle {
                old_text: o,
                replace_all: false,
                line_based,
            })
            .collect()
    }

    /// replaceAll needles of `olds`.
    fn replacing_all(olds: &[String]) -> Vec<Needle<'_>> {
        let all = needles(olds, false).into_iter();
        all.map(|n| Needle {
            replace_all: true,
            ..n
        })
        .collect()
    }

    /// Linear in the file plus the request: a few scans' worth, plus the rescans.
    fn within_bound(steps: usize, text: &str, olds: &[String]) {
        let total: usize = olds.iter().map(String::len).sum();
        let bound = 8 * (text.len() + total) + RESCANS * text.len();
        assert!(steps <= bound, "{steps} steps over {bound}");
    }

    #[test]
    fn occurrences_inside_ligatures_cost_a_budget() {
        // Every oldText starts with the `i` of a `ﬁ` (half of them end after an `f`, inside
        // the next one): each occurs at every ligature and none counts. Every one of the
        // 300 × 100,000 occurrences used to be reported and rejected.
        let text = "\u{FB01}".repeat(100_000);
        let olds: Vec<String> = (0..300)
            .map(|k| "i".to_string() + &"fi".repeat(k)[..k])
            .collect();
        let (got, steps) = costed(&text, &needles(&olds, false));
        let mut too_large = 0;
        for (o, r) in olds.iter().zip(&got) {
            match r {
                Err(Miss::NotFound) => {}
                Err(Miss::TooLarge) => too_large += 1,
                other => panic!("{o:?}: {other:?}"),
            }
        }
        // The rescans decide 16 of them; the rest are over the budget, and say so.
        assert_eq!(too_large, olds.len() - RESCANS);
        within_bound(steps, &text, &olds);
        // One oldText alone is searched to the end: never too_large.
        let one = [olds[5].clone()];
        assert_eq!(
            costed(&text, &needles(&one, false)).0,
            vec![Err(Miss::NotFound)]
        );
    }

    #[test]
    fn line_based_needles_at_the_end_are_checked_there() {
        // A file without a final newline: each line-based needle's alternative (without its
        // line break) occurs at every position of the one line, and counts only at its end.
        let text = "a".repeat(100_000);
        let olds: Vec<String> = (1..=300).map(|k| "a".repeat(k) + "\n").collect();
        let (got, steps) = costed(&text, &needles(&olds, true));
        for (k, r) in got.iter().enumerate() {
            let f = r.as_ref().unwrap_or_else(|e| panic!("{k}: {e:?}"));
            assert_eq!(f.spans, vec![text.len() - k - 1..text.len()]);
            assert!(f.at_eof);
        }
        within_bound(steps, &text, &olds);
    }

    #[test]
    fn trimmed_patterns_are_searched_at_line_ends() {
        // "a…a " must end at a line end unless exact: N(oldText) occurs at every position of
        // the line, and only its end counts.
        let text = "a".repeat(100_000);
        let olds: Vec<String> = (1..=300).map(|k| "a".repeat(k) + " ").collect();
        let (got, steps) = costed(&text, &needles(&olds, false));
        for (k, r) in got.iter().enumerate() {
            let f = r.as_ref().unwrap_or_else(|e| panic!("{k}: {e:?}"));
            assert_eq!(f.spans, vec![text.len() - k - 1..text.len()]);
        }
        within_bound(steps, &text, &olds);
    }

    #[test]
    fn replace_all_floods_cost_a_budget() {
        // replaceAll `a` × k on a file of `a`: each takes n / k occurrences and overlaps
        // them with k - 1 others at every position. Every one of the 300 × 100,000 reports
        // used to be kept; now the overlapping ones cost against the edit's share, 16 edits
        // are searched again alone, and the others are too_large. `a` has no overlap.
        let text = "a".repeat(100_000);
        let olds: Vec<String> = (1..=300).map(|k| "a".repeat(k)).collect();
        let all = replacing_all(&olds);
        let (got, steps) = costed(&text, &all);
        let mut too_large = 0;
        for (k, r) in (1..).zip(&got) {
            match r {
                Ok(f) => {
                    let n = text.len() / k;
                    assert_eq!(f.spans.len(), n, "{k}");
                    assert!(
                        f.spans
                            .iter()
                            .enumerate()
                            .all(|(j, s)| *s == (j * k..j * k + k))
                    );
                }
                Err(Miss::TooLarge) => too_large += 1,
                other => panic!("{k}: {other:?}"),
            }
        }
        assert_eq!(too_large, olds.len() - 1 - RESCANS);
        within_bound(steps, &text, &olds);
        // Under the trimmed-last-line rule (whose exact occurrences come from a second search,
        // so every occurrence is kept): lines of `a`, each oldText k of them and `a `.
        let text = "a\n".repeat(50_000);
        let olds: Vec<String> = (1..=300).map(|k| "a\n".repeat(k) + "a ").collect();
        let all = replacing_all(&olds);
        let (got, steps) = costed(&text, &all);
        for (k, r) in (1..).zip(&got) {
            match r {
                Ok(f) => assert_eq!(f.spans.len(), 50_000 / (k + 1), "{k}"),
                Err(Miss::TooLarge) => {}
                other => panic!("{k}: {other:?}"),
            }
        }
        assert!(
            got.iter().filter(|r| r.is_ok()).count() >= RESCANS,
            "the rescans decide"
        );
        within_bound(steps, &text, &olds);
    }

    #[test]
    fn exact_occurrences_ending_inside_a_cluster_cost_a_budget() {
        // Each oldText occurs exactly at every period, but its last space belongs to the
        // combining mark after it: no occurrence counts, exact or under N(·).
        let text = "a \u{301}".repeat(30_000);
        let olds: Vec<String> = (0..300).map(|k| "a \u{301}".repeat(k) + "a ").collect();
        let (got, steps) = costed(&text, &needles(&olds, false));
        for (o, r) in olds.iter().zip(&got) {
            assert!(
                matches!(r, Err(Miss::NotFound | Miss::TooLarge)),
                "{o:?}: {r:?}"
            );
        }
        within_bound(steps, &text, &olds);
    }
}
