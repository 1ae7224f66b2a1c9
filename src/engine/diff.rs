//! Line diffs built from known changes, for the response and the reviewer.
//!
//! The engine knows exactly which byte ranges it replaced, so the diff is computed only around
//! them: each change is widened to whole lines, changes sharing a line are merged, and `similar`
//! diffs the lines of each small region. The cost is linear in the file plus the changed text,
//! never quadratic in the file. Lines are git's: text up to and including `\n` (a lone CR is not
//! a break), so that `git apply` accepts the output.

use similar::{Algorithm, DiffTag, capture_diff_slices_deadline};
use std::ops::Range;
use std::time::{Duration, Instant};

/// Lines of context around each change in a hunk.
pub(crate) const CONTEXT: usize = 3;

/// One replaced range: `old` in the old text became `new` in the new text, for edit `edit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub old: Range<usize>,
    pub new: Range<usize>,
    pub edit: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tag {
    Context,
    Delete,
    Insert,
}

/// One line of a hunk, as [`Hunk::lines`] yields it (borrowed from the texts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line<'a> {
    pub tag: Tag,
    /// 1-based line numbers on each side (absent on the side the line is not on).
    pub old_no: Option<usize>,
    pub new_no: Option<usize>,
    /// The line without its `\n` (a CR before it stays).
    pub text: &'a str,
    /// The line is the last of its side and has no `\n`.
    pub no_newline: bool,
    /// The edit this changed line comes from.
    pub edit: Option<usize>,
}

/// A run of consecutive lines of one hunk with the same tag and edit: a byte range of whole git
/// lines of one side (the old text for context and deleted lines, the new text for inserted
/// ones). A hunk keeps runs, not one record per line, so a huge replaced block costs a few
/// words, and its lines are read from the text when rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Run {
    tag: Tag,
    bytes: Range<usize>,
    /// Number of lines.
    len: usize,
    /// 0-based number of the first line on the old and new side (the side a line is not on is
    /// ignored).
    old: usize,
    new: usize,
    edit: Option<usize>,
}

/// A unified-diff hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk<'a> {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    runs: Vec<Run>,
    old_text: &'a str,
    new_text: &'a str,
}

impl<'a> Hunk<'a> {
    /// The hunk's lines, in order.
    pub(crate) fn lines(&self) -> impl Iterator<Item = Line<'a>> + '_ {
        self.runs.iter().flat_map(move |r| {
            let text = if r.tag == Tag::Insert {
                self.new_text
            } else {
                self.old_text
            };
            let body = &text[r.bytes.clone()];
            let mut at = 0;
            (0..r.len).map(move |k| {
                let rest = &body[at..];
                let (line, no_newline) = match memchr::memchr(b'\n', rest.as_bytes()) {
                    Some(i) => {
                        at += i + 1;
                        (&rest[..i], false)
                    }
                    None => {
                        at = body.len();
                        (rest, true)
                    }
                };
                Line {
                    tag: r.tag,
                    old_no: (r.tag != Tag::Insert).then_some(r.old + k + 1),
                    new_no: (r.tag != Tag::Delete).then_some(r.new + k + 1),
                    text: line,
                    no_newline,
                    edit: r.edit,
                }
            })
        })
    }

    /// Whether the hunk has no lines.
    pub(crate) fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Appends `len` lines of `side` (context and deleted lines: old, inserted lines: new)
    /// starting at line `first` of that side, merging them into the last run when they continue
    /// it. `other` is the new side's number of the first line of a context run.
    fn push(
        &mut self,
        side: &Lines<'_>,
        tag: Tag,
        first: usize,
        len: usize,
        other: usize,
        edit: Option<usize>,
    ) {
        if len == 0 {
            return;
        }
        let bytes = side.start(first)..side.start(first + len);
        let (old, new) = match tag {
            Tag::Context => (first, other),
            Tag::Delete => (first, 0),
            Tag::Insert => (0, first),
        };
        if let Some(r) = self.runs.last_mut()
            && r.tag == tag
            && r.edit == edit
            && r.bytes.end == bytes.start
            && match tag {
                Tag::Context => r.old + r.len == old && r.new + r.len == new,
                Tag::Delete => r.old + r.len == old,
                Tag::Insert => r.new + r.len == new,
            }
        {
            r.bytes.end = bytes.end;
            r.len += len;
            return;
        }
        self.runs.push(Run {
            tag,
            bytes,
            len,
            old,
            new,
            edit,
        });
    }

    /// Lines on the old side and on the new side.
    fn sides(&self) -> (usize, usize) {
        let count = |skip: Tag| {
            self.runs
                .iter()
                .filter(|r| r.tag != skip)
                .map(|r| r.len)
                .sum::<usize>()
        };
        (count(Tag::Insert), count(Tag::Delete))
    }
}

impl Hunk<'_> {
    /// Moves the hunk `old` lines down on the old side and `new` on the new side (a hunk of a
    /// window of the text to where the window is).
    fn shift(&mut self, old: usize, new: usize) {
        self.old_start += old;
        self.new_start += new;
        for r in &mut self.runs {
            r.old += old;
            r.new += new;
        }
    }

    /// The `@@ -a,b +c,d @@` header (git's convention for empty sides).
    fn write_header(&self, out: &mut (impl std::fmt::Write + ?Sized)) -> std::fmt::Result {
        fn side(
            out: &mut (impl std::fmt::Write + ?Sized),
            start: usize,
            len: usize,
        ) -> std::fmt::Result {
            let start = if len == 0 {
                start.saturating_sub(1)
            } else {
                start
            };
            if len == 1 {
                write!(out, "{start}")
            } else {
                write!(out, "{start},{len}")
            }
        }
        out.write_str("@@ -")?;
        side(out, self.old_start, self.old_len)?;
        out.write_str(" +")?;
        side(out, self.new_start, self.new_len)?;
        out.write_str(" @@")
    }
}

/// Bytes per block of [`Lines`]' sparse index (a document's count of line feeds per block,
/// [`crate::engine::document::Document::feeds`], has the same blocks and is used as it is).
pub(crate) const BLOCK: usize = 4096;

/// Git lines of a text (each up to and including its `\n`), located on demand: the text is
/// counted in blocks (one number per [`BLOCK`] bytes, not one per line, which on a big file
/// cost as much memory as the file) as far as lines are asked for, and a line is found from its
/// block. Hunks locate their changes' lines and then the lines a few before and after them: a
/// line start is found by walking a few lines from the last one found or from the last offset
/// located, within [`WALK`] bytes, and only otherwise by a search of its block. The number of
/// lines, which takes counting the whole text, is asked only for changes at the end.
struct Lines<'a> {
    text: &'a str,
    /// `\n`s before each block, counted as far as asked.
    feeds: std::borrow::Cow<'a, Feeds>,
    /// The last line start found and the start of the last offset's line located (line,
    /// offset), where nearby lines are walked to from.
    last: std::cell::Cell<(usize, usize)>,
    near: std::cell::Cell<(usize, usize)>,
}

use crate::engine::document::Feeds;

/// Bytes a walk from a known line start may scan, and lines it may step, before the block
/// search is used instead.
const WALK: usize = 2 * BLOCK;
const WALK_LINES: usize = 16;

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        Lines::counted(text, std::borrow::Cow::Owned(Feeds::default()))
    }

    /// `feeds` counts `text`'s line feeds (as far as it has).
    fn counted(text: &'a str, feeds: std::borrow::Cow<'a, Feeds>) -> Lines<'a> {
        Lines {
            text,
            feeds,
            last: std::cell::Cell::new((0, 0)),
            near: std::cell::Cell::new((0, 0)),
        }
    }

    /// The number of lines (a final `\n` ends the last line rather than starting an empty one):
    /// the whole text counted.
    fn count(&self) -> usize {
        let t = self.text;
        if t.is_empty() {
            return 0;
        }
        let n = self.feeds.before(t.as_bytes(), t.len().div_ceil(BLOCK));
        n + 1 - usize::from(t.ends_with('\n'))
    }

    /// Whether a line starts after the `n`-th `\n` when `n` is the count before `p`: `p` is
    /// not past the final `\n` of the text (nor in an empty text).
    fn is_line(&self, p: usize) -> bool {
        let t = self.text;
        !(t.is_empty() || p == t.len() && t.ends_with('\n'))
    }

    /// The smaller of `x` and the number of lines, counting the text only when it has fewer.
    fn lines_upto(&self, x: usize) -> usize {
        if x == 0 || self.start(x - 1) < self.text.len() {
            x
        } else {
            self.count().min(x)
        }
    }

    /// `\n`s in `text[..p]`; the start of the line holding `p` is remembered when it is in
    /// `p`'s block.
    fn newlines_before(&self, p: usize) -> usize {
        let k = p / BLOCK;
        let b = self.text.as_bytes();
        // A known line start between the block's start and `p`, where `p`'s line start is
        // searched back to (and counted from, unless the feeds counted further).
        let (mut line, mut from) = (usize::MAX, k * BLOCK);
        for (l, at) in [self.near.get(), self.last.get()] {
            if from < at && at <= p {
                (line, from) = (l, at);
            }
        }
        let known = (line != usize::MAX).then_some((from, line));
        let n = self.feeds.newlines_before(b, p, known);
        if self.is_line(p) {
            if let Some(i) = memchr::memrchr(b'\n', &b[from..p]) {
                self.near.set((n, from + i + 1));
            } else if from == k * BLOCK && n == 0 {
                self.near.set((0, 0));
            } else if from != k * BLOCK {
                // No line feed since the known line start: `p` is on that line.
                self.near.set((line, from));
            }
        }
        n
    }

    fn of(&self, offset: usize) -> usize {
        let p = offset.min(self.text.len());
        let n = self.newlines_before(p);
        // Past the final `\n` is no line: the last one.
        if self.is_line(p) {
            n
        } else {
            n.saturating_sub(1)
        }
    }

    /// The start of `line` walked to from line `from_line` starting at `from`, scanning at
    /// most [`WALK`] bytes and [`WALK_LINES`] lines.
    fn walk(&self, line: usize, (from_line, from): (usize, usize)) -> Option<usize> {
        if line.abs_diff(from_line) > WALK_LINES {
            return None;
        }
        let b = self.text.as_bytes();
        let mut at = from;
        if line >= from_line {
            for _ in from_line..line {
                let end = b.len().min(from + WALK);
                at += memchr::memchr(b'\n', b.get(at..end)?)? + 1;
            }
        } else {
            // Back: `at` follows a `\n` (or is 0, the first line, which is never above).
            for _ in line..from_line {
                let lo = from.saturating_sub(WALK);
                if at == 0 || at - 1 < lo {
                    return None;
                }
                at = memchr::memrchr(b'\n', &b[lo..at - 1]).map_or(0, |i| lo + i + 1);
                if at == 0 && lo > 0 {
                    return None;
                }
            }
        }
        Some(at)
    }

    /// Where `line` starts (the text's end for a line past the last).
    fn start(&self, line: usize) -> usize {
        let b = self.text.as_bytes();
        let (last, near) = (self.last.get(), self.near.get());
        let from = if last.0.abs_diff(line) <= near.0.abs_diff(line) {
            last
        } else {
            near
        };
        let found = if line == 0 {
            0
        } else if let Some(at) = self.walk(line, from) {
            at
        } else {
            // The block holding the `line`-th `\n` (1-based), then that `\n` within it.
            match self.feeds.block_of(b, line) {
                Some(k) => {
                    let skip = line - self.feeds.before(b, k) - 1;
                    memchr::memchr_iter(b'\n', &b[k * BLOCK..])
                        .nth(skip)
                        .map_or(b.len(), |i| k * BLOCK + i + 1)
                }
                None => b.len(),
            }
        };
        // Only a line's start (not the end of the text) is a place to walk or count from.
        if found < b.len() {
            self.last.set((line, found));
        }
        found
    }

    /// Whether `p` starts a line (or is the end of a text that ends with a line break).
    fn at_line_start(&self, p: usize) -> bool {
        p == 0 || self.text.as_bytes()[p - 1] == b'\n'
    }

    /// The line where a range starting at `p` begins.
    fn first(&self, p: usize) -> usize {
        if p == self.text.len() && self.at_line_start(p) {
            self.count()
        } else {
            self.of(p)
        }
    }

    /// The line after the range's end `p` (`whole`: the end is not aligned on the other side).
    fn end(&self, p: usize, aligned: bool) -> usize {
        if aligned {
            if p == self.text.len() {
                self.count()
            } else {
                self.of(p)
            }
        } else if self.text.is_empty() {
            0
        } else {
            // `of` is at most the last line, so this is at most the number of lines.
            self.of(p) + 1
        }
    }
    /// Line `i` with its `\n`, if it has one.
    fn raw(&self, i: usize) -> &'a str {
        &self.text[self.start(i)..self.start(i + 1)]
    }
}

/// A region of whole changed lines: old lines `old`, new lines `new`, with its changes.
struct Region {
    old: Range<usize>,
    new: Range<usize>,
    /// Its changes (mostly one).
    changes: Vec<Change>,
    /// A line start near its first change on each side (line, offset), where the hunk's
    /// lines are walked to from.
    near: ((usize, usize), (usize, usize)),
}

/// Old and new lines a change touches. Both sides start on the same line (the text before the
/// change is common); they end on a line start only if both ends are line starts, so that the
/// text after the region is common too.
fn touched(ol: &Lines<'_>, nl: &Lines<'_>, c: &Change) -> (Range<usize>, Range<usize>) {
    let aligned = ol.at_line_start(c.old.end) && nl.at_line_start(c.new.end);
    let (os, ns) = (ol.first(c.old.start), nl.first(c.new.start));
    (
        os..ol.end(c.old.end, aligned).max(os),
        ns..nl.end(c.new.end, aligned).max(ns),
    )
}

/// Computes the hunks for `changes` (sorted, non-overlapping) turning `old` into `new`.
pub(crate) fn hunks<'a>(old: &'a str, new: &'a str, changes: &[Change]) -> Vec<Hunk<'a>> {
    Hunks::new(Lines::new(old), new, changes.iter().cloned()).collect()
}

/// [`hunks`] one at a time, with the old text's line feeds per [`BLOCK`] counted in
/// `old_feeds` when it is given (a document's, [`crate::engine::document::Document::feeds`],
/// which its positions share).
pub(crate) fn hunks_counted<'a, I: Iterator<Item = Change>>(
    old: &'a str,
    old_feeds: Option<&'a Feeds>,
    new: &'a str,
    changes: I,
) -> Hunks<'a, I> {
    let ol = match old_feeds {
        Some(f) => Lines::counted(old, std::borrow::Cow::Borrowed(f)),
        None => Lines::new(old),
    };
    Hunks::new(ol, new, changes)
}

/// The hunks of some changes, each made when it is asked for: a diff written as it is made
/// holds one region and one hunk at a time (10,000 one-line changes were 0.8 MB of regions
/// and 4 MB of hunks, held whole next to both texts while the diff was rendered). A hunk is
/// done when the next region is too far to share its context, or when there is none.
pub(crate) struct Hunks<'a, I> {
    ol: Lines<'a>,
    nl: Lines<'a>,
    /// The changes not yet placed in a region (in order, not overlapping).
    changes: I,
    /// The region being gathered (the next change may still join it).
    gathering: Option<Region>,
    /// The hunk being made (the next region may still merge into it).
    open: Option<Hunk<'a>>,
    /// The old side's line after the last region.
    prev_old_end: usize,
}

impl<'a, I: Iterator<Item = Change>> Hunks<'a, I> {
    fn new(ol: Lines<'a>, new: &'a str, changes: I) -> Hunks<'a, I> {
        Hunks {
            ol,
            nl: Lines::new(new),
            changes,
            gathering: None,
            open: None,
            prev_old_end: 0,
        }
    }

    /// The next region of whole changed lines: changes that share a line are one region.
    fn region(&mut self) -> Option<Region> {
        let (ol, nl) = (&self.ol, &self.nl);
        for c in self.changes.by_ref() {
            let (o, n) = touched(ol, nl, &c);
            match &mut self.gathering {
                Some(r) if o.start < r.old.end || n.start < r.new.end => {
                    // The region ends where its last change ends: only there is the text after
                    // it common to both sides. An earlier change's unaligned end may reach one
                    // line further on one side only (its end is a line start there but not on
                    // the other side), which would count a common line twice.
                    r.old.end = o.end.max(r.old.start);
                    r.new.end = n.end.max(r.new.start);
                    r.changes.push(c);
                }
                _ => {
                    let next = Region {
                        old: o,
                        new: n,
                        changes: vec![c],
                        near: (ol.near.get(), nl.near.get()),
                    };
                    if let Some(done) = self.gathering.replace(next) {
                        return Some(done);
                    }
                }
            }
        }
        self.gathering.take()
    }

    /// Adds region `r` to the open hunk, or opens one for it; the hunk it closes, if any.
    fn add(&mut self, r: Region) -> Option<Hunk<'a>> {
        let (ol, nl, changes) = (&self.ol, &self.nl, &r.changes);
        ol.near.set(r.near.0);
        nl.near.set(r.near.1);
        let owner = |line_old: Option<usize>, line_new: Option<usize>| -> Option<usize> {
            if let [c] = &changes[..] {
                // One change owns every line of its region (the loop below would say so too).
                return Some(c.edit);
            }
            for c in changes {
                let (to, tn) = touched(ol, nl, c);
                if let Some(l) = line_old
                    && to.contains(&l)
                {
                    return Some(c.edit);
                }
                if let Some(l) = line_new
                    && tn.contains(&l)
                {
                    return Some(c.edit);
                }
            }
            changes.first().map(|c| c.edit)
        };
        // Context before, merging with the open hunk when the gap is small.
        let prev_old_end = self.prev_old_end;
        let delta = r.new.start as isize - r.old.start as isize;
        let shift = |l: usize| (l as isize + delta) as usize;
        let closed;
        let mut h = match self.open.take() {
            Some(mut h) if r.old.start <= prev_old_end + 2 * CONTEXT => {
                let len = r.old.start - prev_old_end;
                h.push(
                    ol,
                    Tag::Context,
                    prev_old_end,
                    len,
                    shift(prev_old_end),
                    None,
                );
                closed = None;
                h
            }
            open => {
                closed = open.map(|h| close(h, ol, prev_old_end));
                let from = r.old.start.saturating_sub(CONTEXT);
                let mut h = Hunk {
                    old_start: from + 1,
                    old_len: 0,
                    new_start: shift(from) + 1,
                    new_len: 0,
                    runs: Vec::new(),
                    old_text: ol.text,
                    new_text: nl.text,
                };
                h.push(
                    ol,
                    Tag::Context,
                    from,
                    r.old.start - from,
                    shift(from),
                    None,
                );
                h
            }
        };
        // Diff the region's git lines (with their `\n`, so a missing final newline differs);
        // the deadline bounds a huge replaced block to a plain delete-then-insert.
        let old_lines: Vec<&str> = (r.old.clone()).map(|i| ol.raw(i)).collect();
        let new_lines: Vec<&str> = (r.new.clone()).map(|i| nl.raw(i)).collect();
        let ops = line_ops(&old_lines, &new_lines);
        drop((old_lines, new_lines));
        for (tag, o, n) in ops {
            if tag == DiffTag::Equal {
                let (oi, ni) = (r.old.start + o.start, r.new.start + n.start);
                h.push(ol, Tag::Context, oi, o.len(), ni, None);
                continue;
            }
            for oi in o {
                let oi = r.old.start + oi;
                h.push(ol, Tag::Delete, oi, 1, 0, owner(Some(oi), None));
            }
            for ni in n {
                let ni = r.new.start + ni;
                h.push(nl, Tag::Insert, ni, 1, 0, owner(None, Some(ni)));
            }
        }
        self.open = Some(h);
        self.prev_old_end = r.old.end;
        closed
    }
}

impl<'a, I: Iterator<Item = Change>> Iterator for Hunks<'a, I> {
    type Item = Hunk<'a>;

    fn next(&mut self) -> Option<Hunk<'a>> {
        while let Some(r) = self.region() {
            if let Some(h) = self.add(r) {
                return Some(h);
            }
        }
        let h = self.open.take()?;
        Some(close(h, &self.ol, self.prev_old_end))
    }
}

/// The diff of a region's lines, as `similar`'s tagged ranges: a region of at most one line on
/// each side (the usual one-line edit) is told without it, as it would tell it (equal, or
/// deleted then inserted); others by Myers' algorithm, whose deadline bounds a huge replaced
/// block to a plain delete-then-insert.
fn line_ops(old: &[&str], new: &[&str]) -> Vec<(DiffTag, Range<usize>, Range<usize>)> {
    match (old, new) {
        ([], []) => Vec::new(),
        ([a], [b]) if a == b => vec![(DiffTag::Equal, 0..1, 0..1)],
        ([_], [_]) => vec![(DiffTag::Replace, 0..1, 0..1)],
        ([], _) => vec![(DiffTag::Insert, 0..0, 0..new.len())],
        (_, []) => vec![(DiffTag::Delete, 0..old.len(), 0..0)],
        _ => {
            let deadline = Instant::now() + Duration::from_millis(100);
            capture_diff_slices_deadline(Algorithm::Myers, old, new, Some(deadline))
                .iter()
                .map(similar::DiffOp::as_tag_tuple)
                .collect()
        }
    }
}

/// Hunk `h`, whose last region ended at old line `end`, with its trailing context and its
/// sides counted.
fn close<'a>(mut h: Hunk<'a>, ol: &Lines<'_>, end: usize) -> Hunk<'a> {
    let d = old_to_new(&h);
    trail(&mut h, ol, end, d);
    (h.old_len, h.new_len) = h.sides();
    h
}

/// Offset from old to new line numbers after the hunk's last line.
fn old_to_new(h: &Hunk<'_>) -> isize {
    let (old, new) = h.sides();
    (h.new_start as isize + new as isize) - (h.old_start as isize + old as isize)
}

/// Appends up to [`CONTEXT`] lines after `from` to `h`.
fn trail(h: &mut Hunk<'_>, ol: &Lines<'_>, from: usize, delta: isize) {
    let to = ol.lines_upto(from + CONTEXT);
    if from < to {
        h.push(
            ol,
            Tag::Context,
            from,
            to - from,
            (from as isize + delta) as usize,
            None,
        );
    }
}

const NO_NEWLINE: &str = "\\ No newline at end of file\n";

/// The bytes [`write_hunk`] writes of `hunks`, to reserve a string's buffer once (a huge hunk
/// would otherwise double it as it grows).
fn rendered_len(hunks: &[Hunk<'_>]) -> usize {
    hunks
        .iter()
        .map(|h| {
            40 + h
                .runs
                .iter()
                .map(|r| {
                    let text = if r.tag == Tag::Insert {
                        h.new_text
                    } else {
                        h.old_text
                    };
                    // The marker follows only a last line without its `\n`.
                    let marker = if text[r.bytes.clone()].ends_with('\n') {
                        0
                    } else {
                        NO_NEWLINE.len()
                    };
                    r.bytes.len() + r.len + 1 + marker
                })
                .sum::<usize>()
        })
        .sum()
}

/// One hunk of a unified diff's body: its header and its lines.
fn write_hunk(h: &Hunk<'_>, out: &mut (impl std::fmt::Write + ?Sized)) -> std::fmt::Result {
    h.write_header(out)?;
    out.write_char('\n')?;
    for l in h.lines() {
        out.write_char(match l.tag {
            Tag::Context => ' ',
            Tag::Delete => '-',
            Tag::Insert => '+',
        })?;
        out.write_str(l.text)?;
        out.write_char('\n')?;
        if l.no_newline {
            out.write_str(NO_NEWLINE)?;
        }
    }
    Ok(())
}

/// The abbreviated blob name of the empty file, for the `index` line of an empty file created or
/// deleted (GNU `patch` needs it to see a change without hunks).
const EMPTY_BLOB: &str = "e69de29";

/// Whether git C-quotes `path` in a patch: it has a `"`, a `\` or a control character.
fn needs_quotes(path: &str) -> bool {
    path.chars()
        .any(|c| c == '"' || c == '\\' || c.is_control())
}

/// `prefix` + `path` as git writes a name in a patch: in double quotes with C escapes when it
/// [`needs_quotes`], as it is otherwise (UTF-8 stays UTF-8, which `git apply` and GNU `patch`
/// both read).
fn quoted(prefix: &str, path: &str) -> String {
    let name = format!("{prefix}{path}");
    if !needs_quotes(path) {
        return name;
    }
    let mut out = String::with_capacity(name.len() + 2);
    out.push('"');
    for c in name.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let mut buf = [0; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\{b:03o}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The name of a `---`/`+++` line: quoted as git does, with git's trailing tab after an
/// unquoted name that has a space (GNU `patch` otherwise ends the name at the space).
fn side_name(prefix: &str, path: Option<&str>) -> String {
    match path {
        None => "/dev/null".to_string(),
        Some(p) if !needs_quotes(p) && p.contains(' ') => format!("{prefix}{p}\t"),
        Some(p) => quoted(prefix, p),
    }
}

/// The path of a `---`/`+++` line's name as [`side_name`] wrote it, without `prefix`; `None` for
/// `/dev/null` or a name that is not one of ours.
fn parse_side_name(name: &str, prefix: &str) -> Option<String> {
    let path = if let Some(inner) = name.strip_prefix('"') {
        let mut out = Vec::new();
        let mut chars = inner.chars();
        loop {
            match chars.next()? {
                '"' => break,
                '\\' => match chars.next()? {
                    'a' => out.push(0x07),
                    'b' => out.push(0x08),
                    't' => out.push(b'\t'),
                    'n' => out.push(b'\n'),
                    'v' => out.push(0x0b),
                    'f' => out.push(0x0c),
                    'r' => out.push(b'\r'),
                    d @ '0'..='7' => {
                        let rest: String = chars.by_ref().take(2).collect();
                        out.push(u8::from_str_radix(&format!("{d}{rest}"), 8).ok()?);
                    }
                    c => out.extend(c.to_string().bytes()),
                },
                c => out.extend(c.to_string().bytes()),
            }
        }
        String::from_utf8(out).ok()?
    } else {
        name.split('\t').next().unwrap_or(name).to_string()
    };
    path.strip_prefix(prefix).map(str::to_string)
}

/// The `diff --git` line of a change from `a` to `b`. A name with a space is quoted here too
/// (git accepts any quoted name): GNU `patch` cannot tell where an unquoted one ends.
fn git_line(a: &str, b: &str) -> String {
    let name = |prefix: &str, p: &str| {
        if p.contains(' ') && !needs_quotes(p) {
            format!("\"{prefix}{p}\"")
        } else {
            quoted(prefix, p)
        }
    };
    format!("diff --git {} {}\n", name("a/", a), name("b/", b))
}

/// A unified diff with `a/` `b/` headers; `None` names `/dev/null` (create or delete). Names are
/// written as git writes them, so that `git apply` and GNU `patch` read the same paths.
pub(crate) fn unified(
    old_path: Option<&str>,
    new_path: Option<&str>,
    hunks: &[Hunk<'_>],
) -> String {
    // Names are written up to six times, each at most four bytes a byte when quoted.
    let names = old_path.map_or(0, str::len) + new_path.map_or(0, str::len);
    let mut out = String::with_capacity(rendered_len(hunks) + 128 + 24 * names);
    // Invariant: writing to a `String` does not fail.
    let _ = write_unified(&mut out, old_path, new_path, hunks.iter());
    out
}

/// [`unified`], written to `out` as the hunks come (none of them held after it is written).
pub(crate) fn write_unified<'a, H: std::borrow::Borrow<Hunk<'a>>>(
    out: &mut impl std::fmt::Write,
    old_path: Option<&str>,
    new_path: Option<&str>,
    hunks: impl IntoIterator<Item = H>,
) -> std::fmt::Result {
    // A whole-file change of an empty file yields one hunk without lines (`@@ -0,0 +0,0 @@`),
    // which git rejects as a corrupt patch: such a file has no hunks at all. Hunks without
    // lines before the first with lines are held until it comes (they hold no runs).
    let mut hunks = hunks.into_iter();
    let mut empty = Vec::new();
    let first = loop {
        match hunks.next() {
            Some(h) if h.borrow().is_empty() => empty.push(h),
            other => break other,
        }
    };
    if let (Some(a), Some(b)) = (old_path, new_path)
        && a != b
    {
        out.write_str(&git_line(a, b))?;
        write!(
            out,
            "rename from {}\nrename to {}\n",
            quoted("", a),
            quoted("", b)
        )?;
    }
    let Some(first) = first else {
        if old_path != new_path && (old_path.is_none() || new_path.is_none()) {
            // An empty file created or deleted: git needs the extended header to see it, and
            // GNU patch the `index` line too.
            let p = old_path.or(new_path).unwrap_or_default();
            let (what, index) = if old_path.is_none() {
                ("new", format!("0000000..{EMPTY_BLOB}"))
            } else {
                ("deleted", format!("{EMPTY_BLOB}..0000000"))
            };
            write!(
                out,
                "{}{what} file mode 100644\nindex {index}\n",
                git_line(p, p)
            )?;
        }
        return Ok(());
    };
    write_names(out, old_path, new_path)?;
    for h in empty.into_iter().chain([first]).chain(hunks) {
        write_hunk(h.borrow(), out)?;
    }
    Ok(())
}

/// The `---`/`+++` lines of a diff with hunks (after a `diff --git` line when a name needs
/// quotes and the paths do not already make one).
fn write_names(
    out: &mut (impl std::fmt::Write + ?Sized),
    old_path: Option<&str>,
    new_path: Option<&str>,
) -> std::fmt::Result {
    // `git apply` reads a quoted name right only in a git diff (a plain one turns `\` into `/`).
    let renamed = matches!((old_path, new_path), (Some(a), Some(b)) if a != b);
    if !renamed && old_path.into_iter().chain(new_path).any(needs_quotes) {
        let p = old_path.or(new_path).unwrap_or_default();
        out.write_str(&git_line(p, p))?;
        match (old_path, new_path) {
            (None, _) => out.write_str("new file mode 100644\n")?,
            (_, None) => out.write_str("deleted file mode 100644\n")?,
            _ => {}
        }
    }
    writeln!(out, "--- {}", side_name("a/", old_path))?;
    writeln!(out, "+++ {}", side_name("b/", new_path))
}

/// Whether the text `changes` (sorted, not overlapping, each with the text that replaces its
/// span) make of `old` is `old` again, told without making it: the pieces are compared in
/// order with the old text where they land, up to the first that differs.
pub(crate) fn splices_keep<'t>(
    old: &str,
    changes: impl IntoIterator<Item = (Change, &'t str)>,
) -> bool {
    let old = old.as_bytes();
    // Where the old text after the last change lands in the new one, from where it was.
    let mut shift = 0isize;
    let mut from = 0usize;
    let lands = |bytes: &[u8], at: isize| {
        usize::try_from(at).is_ok_and(|at| old.get(at..at + bytes.len()) == Some(bytes))
    };
    for (c, rep) in changes {
        // Unchanged text that did not move is the old text there.
        if shift != 0 && !lands(&old[from..c.old.start], from as isize + shift) {
            return false;
        }
        if !lands(rep.as_bytes(), c.old.start as isize + shift) {
            return false;
        }
        shift += rep.len() as isize - c.old.len() as isize;
        from = c.old.end;
    }
    // The rest lands where it was exactly when the lengths agree.
    shift == 0
}

/// The unified diff of a file of the same name whose old text is `old` (its line feeds counted
/// in `old_feeds` when given) and whose new text is `old` with `changes` (sorted, not
/// overlapping, each with the text that replaces its span): what [`write_unified`] writes of
/// [`hunks_counted`] over both texts, without the new text. The changes are taken in windows
/// of the old text that hold them with a few lines around, so far from the next window's that
/// no hunk could join them; each window's new text is made and diffed on its own, and its
/// hunks' line numbers moved to the whole file's. So a response's diff holds one window's text
/// at a time, not a second copy of the file.
pub(crate) fn write_spliced<'t>(
    out: &mut impl std::fmt::Write,
    path: &str,
    old: &str,
    old_feeds: Option<&Feeds>,
    changes: impl IntoIterator<Item = (Change, &'t str)>,
) -> std::fmt::Result {
    let ol = match old_feeds {
        Some(f) => Lines::counted(old, std::borrow::Cow::Borrowed(f)),
        None => Lines::new(old),
    };
    // Lines between a window's last change and the next window's first: more than a hunk's
    // context on both sides and the line a change's end may reach.
    const GAP: usize = 2 * CONTEXT + 2;
    let mut window: Vec<(Change, &'t str)> = Vec::new();
    // The old line the window's last change ends on, and the lines the changes before the
    // window added (or removed, when negative).
    let mut last = 0usize;
    let mut added = 0isize;
    let mut named = false;
    // Hunks without lines before the first with lines (see `write_unified`).
    let mut empty = String::new();
    // The old line the window's first change starts on.
    let mut first = 0usize;
    // A window's new text and its changes, kept from window to window.
    let (mut new, mut local) = (String::new(), Vec::new());
    let mut flush = |window: &mut Vec<(Change, &'t str)>,
                     first: usize,
                     out: &mut dyn std::fmt::Write,
                     added: &mut isize|
     -> std::fmt::Result {
        let (Some((start, _)), Some((end, _))) = (window.first(), window.last()) else {
            return Ok(());
        };
        let (start, end) = (start.old.start, end.old.end);
        // From the line of the first change, CONTEXT + 1 lines up (or the first line), to the
        // start of the line CONTEXT + 2 below the last change's end (or the end of the text):
        // walked from the changes, a few lines each way.
        let b = old.as_bytes();
        let line_start = |p: usize| memchr::memrchr(b'\n', &b[..p]).map_or(0, |i| i + 1);
        let mut ws = line_start(start);
        let mut from_line = first;
        while from_line + CONTEXT + 1 > first && ws > 0 {
            ws = line_start(ws - 1);
            from_line -= 1;
        }
        let we = memchr::memchr_iter(b'\n', &b[end..])
            .nth(CONTEXT + 1)
            .map_or(b.len(), |i| end + i + 1);
        new.clear();
        local.clear();
        let mut at = ws;
        for (c, rep) in window.iter() {
            new.push_str(&old[at..c.old.start]);
            let ns = new.len();
            new.push_str(rep);
            local.push(Change {
                old: c.old.start - ws..c.old.end - ws,
                new: ns..new.len(),
                edit: c.edit,
            });
            at = c.old.end;
        }
        new.push_str(&old[at..we]);
        let new_line = (from_line as isize + *added) as usize;
        for (c, rep) in window.drain(..) {
            let feeds = |t: &str| memchr::memchr_iter(b'\n', t.as_bytes()).count() as isize;
            *added += feeds(rep) - feeds(&old[c.old]);
        }
        for mut h in Hunks::new(Lines::new(&old[ws..we]), &new, local.drain(..)) {
            h.shift(from_line, new_line);
            if !named && h.is_empty() {
                // As `write_unified`: hunks without lines come only after one with lines.
                write_hunk(&h, &mut empty)?;
                continue;
            }
            if !named {
                write_names(&mut *out, Some(path), Some(path))?;
                out.write_str(&empty)?;
                named = true;
            }
            write_hunk(&h, &mut *out)?;
        }
        Ok(())
    };
    for (c, rep) in changes {
        let line = ol.newlines_before(c.old.start);
        if !window.is_empty() && line > last + GAP {
            flush(&mut window, first, out, &mut added)?;
        }
        if window.is_empty() {
            first = line;
        }
        last = last.max(ol.newlines_before(c.old.end));
        window.push((c, rep));
    }
    flush(&mut window, first, out, &mut added)
}

/// Joins per-file diffs into one patch. git reads `---`/`+++` lines that follow a `diff --git`
/// extended header as part of that header, so a header without hunks (a pure rename, an empty
/// file created or deleted) would swallow the next plain diff; such a next diff gets its own
/// `diff --git` line (and the new/deleted file mode its `/dev/null` side implies).
pub(crate) fn join<'a>(diffs: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    let mut open_header = false;
    for d in diffs {
        if d.is_empty() {
            continue;
        }
        if open_header && d.starts_with("--- ") {
            let mut lines = d.split('\n');
            let old = lines
                .next()
                .and_then(|l| l.strip_prefix("--- "))
                .and_then(|n| parse_side_name(n, "a/"));
            let new = lines
                .next()
                .and_then(|l| l.strip_prefix("+++ "))
                .and_then(|n| parse_side_name(n, "b/"));
            if let Some(name) = old.as_ref().or(new.as_ref()) {
                let (a, b) = (old.as_ref().unwrap_or(name), new.as_ref().unwrap_or(name));
                out.push_str(&git_line(a, b));
                match (&old, &new) {
                    (None, _) => out.push_str("new file mode 100644\n"),
                    (_, None) => out.push_str("deleted file mode 100644\n"),
                    _ => {}
                }
            }
        }
        out.push_str(d);
        open_header = d.starts_with("diff --git ") && !d.contains("\n@@ ");
    }
    out
}

/// Hunks for a whole-file create (`old` empty) or delete (`new` empty).
pub(crate) fn whole<'a>(old: &'a str, new: &'a str) -> Vec<Hunk<'a>> {
    hunks(
        old,
        new,
        &[Change {
            old: 0..old.len(),
            new: 0..new.len(),
            edit: 0,
        }],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(old: &str, new: &str, changes: &[Change]) -> String {
        unified(Some("f"), Some("f"), &hunks(old, new, changes))
    }

    /// The sparse line index answers as a full list of git line starts would, across block
    /// boundaries, in order and out of order.
    /// Every line start of `t`, found the plain way (none past a final `\n`, none in an empty
    /// text): what the counted and lazy line lookups are checked against.
    fn reference_line_starts(t: &str) -> Vec<usize> {
        let mut full = vec![0];
        full.extend(memchr::memchr_iter(b'\n', t.as_bytes()).map(|i| i + 1));
        if *full.last().unwrap() == t.len() && !t.is_empty() {
            full.pop();
        }
        if t.is_empty() {
            full.clear();
        }
        full
    }

    #[test]
    fn lines_match_a_full_index() {
        let mut texts: Vec<String> = vec![
            String::new(),
            "\n".into(),
            "a".into(),
            "a\n".into(),
            "a\nb".into(),
            "\n\n\n".into(),
        ];
        for len in [BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK] {
            for step in [1usize, 7, 4095, 4096, 5000] {
                let t: String = (0..len)
                    .map(|i| if (i + 1) % step == 0 { '\n' } else { 'x' })
                    .collect();
                texts.push(t);
            }
        }
        for t in &texts {
            let full = reference_line_starts(t);
            let l = Lines::new(t);
            assert_eq!(l.count(), full.len(), "{t:?}");
            let of = |p: usize| full.partition_point(|&s| s <= p).saturating_sub(1);
            // Every 37th offset and those around block edges (debug builds scan slowly).
            let edges = (1..4).flat_map(|k| k * BLOCK - 1..k * BLOCK + 2);
            let ps: Vec<usize> = (0..=t.len())
                .step_by(37)
                .chain(edges)
                .chain([t.len()])
                .filter(|&p| p <= t.len())
                .collect();
            for &p in ps.iter().rev().chain(&ps) {
                assert_eq!(l.of(p), of(p), "of({p}) len {}", t.len());
            }
            let start = |i: usize| full.get(i).copied().unwrap_or(t.len());
            let n = full.len() + 2;
            let jumps = (0..n.min(300)).map(|i| (i * 7919) % n);
            let back = (0..n).rev();
            for i in (0..n)
                .chain((0..n).rev().step_by(97))
                .chain(jumps)
                .chain(back)
            {
                assert_eq!(l.start(i), start(i), "start({i}) len {}", t.len());
            }
            // Lines walked to from an offset just located, before and after it, and from a
            // line far away; the same from counts given.
            let feeds = Feeds::default();
            let counted = Lines::counted(t, std::borrow::Cow::Borrowed(&feeds));
            for l in [&l, &counted] {
                for (k, &p) in ps.iter().enumerate() {
                    let at = l.of(p);
                    for d in [0usize, 1, 3, 40, 5000] {
                        let i = if k % 2 == 0 {
                            at.saturating_sub(d)
                        } else {
                            at + d
                        };
                        assert_eq!(l.start(i), start(i), "start({i}) after of({p})");
                        assert_eq!(l.start(i + 1), start(i + 1), "start({}) next", i + 1);
                    }
                }
            }
        }
    }

    /// Random lines (some empty, some with trailing blanks, a last one maybe without `\n`)
    /// and changes over them, as (text, changes with their replacements).
    fn spliced_case(
        lines: &[(u8, bool)],
        edits: &[(usize, usize, u8, u8)],
    ) -> (String, Vec<(Change, String)>) {
        let mut old = String::new();
        for (i, &(len, feed)) in lines.iter().enumerate() {
            old.push_str(&"ab c".repeat(usize::from(len % 4)));
            old.push(char::from(b'a' + (len % 3)));
            if feed || i + 1 < lines.len() {
                old.push('\n');
            }
        }
        let mut at = 0;
        let mut changes = Vec::new();
        for &(gap, len, rep, nl) in edits {
            let start = at + gap % 160;
            if start > old.len() {
                break;
            }
            let end = (start + len % 12).min(old.len());
            let text = match rep % 4 {
                0 => String::new(),
                1 => old[start..end].to_owned(),
                2 => format!("x{}", "\n".repeat(usize::from(nl % 3))),
                _ => format!("{}y\nz", "\n".repeat(usize::from(nl % 2))),
            };
            changes.push((
                Change {
                    old: start..end,
                    new: 0..0,
                    edit: changes.len(),
                },
                text,
            ));
            at = end;
        }
        (old, changes)
    }

    proptest::proptest! {
        /// The diff written from the old text and the changes' replacements, window by window,
        /// is the one written from both whole texts; and whether the changes keep the text is
        /// told without it.
        #[test]
        fn spliced_diff_is_the_whole_texts_diff(
            lines in proptest::collection::vec((0u8..12, proptest::bool::ANY), 0..80),
            edits in proptest::collection::vec((0usize..1000, 0usize..30, 0u8..4, 0u8..3), 0..12),
        ) {
            let (old, spliced) = spliced_case(&lines, &edits);
            let mut new = String::new();
            let mut changes = Vec::new();
            let mut at = 0;
            for (c, rep) in &spliced {
                new.push_str(&old[at..c.old.start]);
                let ns = new.len();
                new.push_str(rep);
                changes.push(Change { old: c.old.clone(), new: ns..new.len(), edit: c.edit });
                at = c.old.end;
            }
            new.push_str(&old[at..]);
            let texts = || spliced.iter().map(|(c, r)| (c.clone(), r.as_str()));
            proptest::prop_assert_eq!(splices_keep(&old, texts()), old == new);
            let mut whole = String::new();
            write_unified(&mut whole, Some("f"), Some("f"), hunks(&old, &new, &changes)).unwrap();
            let mut windows = String::new();
            let feeds = Feeds::default();
            write_spliced(&mut windows, "f", &old, Some(&feeds), texts()).unwrap();
            proptest::prop_assert_eq!(windows, whole);
        }
    }

    proptest::proptest! {
        /// Any sequence of lookups, offsets and line starts mixed (each remembers where it
        /// found a line, which the next ones start from), answers as a full index does.
        #[test]
        fn lines_in_any_order_match_a_full_index(
            runs in proptest::collection::vec((0usize..300, proptest::bool::ANY), 0..60),
            ops in proptest::collection::vec((proptest::bool::ANY, 0usize..20_000), 1..80),
        ) {
            let mut t = String::new();
            for (len, feed) in runs {
                t.push_str(&"x".repeat(len));
                if feed {
                    t.push('\n');
                }
            }
            let full = reference_line_starts(&t);
            let feeds = Feeds::default();
            let l = Lines::counted(&t, std::borrow::Cow::Borrowed(&feeds));
            for (is_offset, x) in ops {
                if is_offset {
                    let p = x % (t.len() + 1);
                    let want = full.partition_point(|&s| s <= p).saturating_sub(1);
                    proptest::prop_assert_eq!(l.of(p), want, "of({})", p);
                } else {
                    let i = x % (full.len() + 2);
                    let want = full.get(i).copied().unwrap_or(t.len());
                    proptest::prop_assert_eq!(l.start(i), want, "start({})", i);
                }
            }
        }
    }

    #[test]
    fn merged_region_ends_with_its_last_change() {
        // The first change ends mid-line in old but at a line start in new (its "\n" follows a
        // kept lone CR); the second starts right there. The trailing "s" is common context.
        let (old, new) = ("p\n\rq\nr\ns", "p\n\r\ns");
        let d = diff(
            old,
            new,
            &[
                Change {
                    old: 3..4,
                    new: 3..4,
                    edit: 0,
                },
                Change {
                    old: 4..7,
                    new: 4..4,
                    edit: 1,
                },
            ],
        );
        assert_eq!(
            d,
            "--- a/f\n+++ b/f\n@@ -1,4 +1,3 @@\n p\n-\rq\n-r\n+\r\n s\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn empty_file_created_or_deleted_has_only_the_git_header() {
        assert_eq!(
            unified(None, Some("e"), &whole("", "")),
            "diff --git a/e b/e\nnew file mode 100644\nindex 0000000..e69de29\n"
        );
        assert_eq!(
            unified(Some("e"), None, &whole("", "")),
            "diff --git a/e b/e\ndeleted file mode 100644\nindex e69de29..0000000\n"
        );
    }

    #[test]
    fn names_are_written_as_git_writes_them() {
        let d = unified(Some("my file"), Some("my file"), &whole("x\n", "y\n"));
        assert!(d.starts_with("--- a/my file\t\n+++ b/my file\t\n@@"), "{d}");
        // A quoted name comes with git's own header (`git apply` unquotes only there).
        let d = unified(Some("t\tq\"b\\"), None, &whole("x\n", ""));
        assert!(
            d.starts_with(concat!(
                "diff --git \"a/t\\tq\\\"b\\\\\" \"b/t\\tq\\\"b\\\\\"\n",
                "deleted file mode 100644\n",
                "--- \"a/t\\tq\\\"b\\\\\"\n+++ /dev/null\n"
            )),
            "{d}"
        );
        // In `diff --git`, a name with a space is quoted too (GNU patch splits it otherwise).
        let d = unified(Some("a b"), Some("日本\u{1}"), &[]);
        assert_eq!(
            d,
            "diff --git \"a/a b\" \"b/日本\\001\"\nrename from a b\nrename to \"日本\\001\"\n"
        );
        for name in ["plain", "my file", "t\tq\"b\\", "日本\u{1}\n"] {
            for prefix in ["a/", "b/"] {
                let side = side_name(prefix, Some(name));
                assert_eq!(
                    parse_side_name(&side, prefix).as_deref(),
                    Some(name),
                    "{side}"
                );
            }
        }
        // A header without hunks, then a create whose name is quoted: the create gets its own
        // `diff --git` line with the name read back.
        let joined = join([
            unified(Some("m"), Some("t"), &[]).as_str(),
            unified(None, Some("q\"x"), &whole("", "n\n")).as_str(),
        ]);
        assert!(
            joined.contains(
                "diff --git \"a/q\\\"x\" \"b/q\\\"x\"\nnew file mode 100644\n--- /dev/null\n"
            ),
            "{joined}"
        );
    }

    #[test]
    fn join_gives_a_diff_after_a_bare_git_header_its_own() {
        let rename = unified(Some("m"), Some("t"), &[]);
        let edit = unified(Some("e"), Some("e"), &whole("x\n", "y\n"));
        let create = unified(None, Some("n"), &whole("", "n\n"));
        let joined = join([rename.as_str(), edit.as_str(), "", create.as_str()]);
        assert_eq!(
            joined,
            "diff --git a/m b/t\nrename from m\nrename to t\n\
             diff --git a/e b/e\n--- a/e\n+++ b/e\n@@ -1 +1 @@\n-x\n+y\n\
             --- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+n\n"
        );
        let joined = join([rename.as_str(), create.as_str()]);
        assert!(joined.ends_with("rename to t\ndiff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+n\n"), "{joined}");
    }

    #[test]
    fn regions_of_one_line_are_diffed_as_myers_diffs_them() {
        let lines = ["a\n", "b\n", "a", ""];
        let mut sides: Vec<Vec<&str>> = vec![vec![]];
        sides.extend(lines.iter().map(|l| vec![*l]));
        sides.extend([vec!["a\n", "b\n"], vec!["b\n", "a\n", "c"]]);
        // Each line's tag, in order: what the caller makes of the ops.
        let expand = |ops: Vec<(DiffTag, Range<usize>, Range<usize>)>| -> Vec<(char, usize)> {
            let mut out = Vec::new();
            for (tag, o, n) in ops {
                if tag == DiffTag::Equal {
                    out.extend(o.map(|i| ('=', i)));
                    continue;
                }
                out.extend(o.map(|i| ('-', i)));
                out.extend(n.map(|i| ('+', i)));
            }
            out
        };
        for old in &sides {
            for new in &sides {
                let myers: Vec<_> = capture_diff_slices_deadline(Algorithm::Myers, old, new, None)
                    .iter()
                    .map(similar::DiffOp::as_tag_tuple)
                    .collect();
                assert_eq!(
                    expand(line_ops(old, new)),
                    expand(myers),
                    "{old:?} -> {new:?}"
                );
            }
        }
    }

    #[test]
    fn single_line_change_with_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n";
        let new = "1\n2\n3\n4x\n5\n6\n7\n8\n";
        let d = diff(
            old,
            new,
            &[Change {
                old: 6..7,
                new: 6..8,
                edit: 0,
            }],
        );
        assert_eq!(
            d,
            "--- a/f\n+++ b/f\n@@ -1,7 +1,7 @@\n 1\n 2\n 3\n-4\n+4x\n 5\n 6\n 7\n"
        );
    }

    #[test]
    fn far_changes_make_two_hunks_near_ones_merge() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new = old.replace("2\n", "two\n").replace("19\n", "nineteen\n");
        let d = diff(
            &old,
            &new,
            &[
                Change {
                    old: 2..3,
                    new: 2..5,
                    edit: 0,
                },
                Change {
                    old: 45..47,
                    new: 47..55,
                    edit: 1,
                },
            ],
        );
        assert_eq!(d.matches("@@ -").count(), 2, "{d}");
        let new2 = old.replace("2\n", "two\n").replace("6\n", "six\n");
        let d = diff(
            &old,
            &new2,
            &[
                Change {
                    old: 2..3,
                    new: 2..5,
                    edit: 0,
                },
                Change {
                    old: 10..11,
                    new: 12..15,
                    edit: 1,
                },
            ],
        );
        assert_eq!(d.matches("@@ -").count(), 1, "{d}");
        assert!(d.starts_with("--- a/f\n+++ b/f\n@@ -1,9 +1,9 @@\n"), "{d}");
    }

    #[test]
    fn no_newline_at_end() {
        let d = diff(
            "a\nb",
            "a\nc",
            &[Change {
                old: 2..3,
                new: 2..3,
                edit: 0,
            }],
        );
        assert_eq!(
            d,
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn create_and_delete() {
        let d = unified(None, Some("n"), &whole("", "x\n"));
        assert_eq!(d, "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n");
        let d = unified(Some("n"), None, &whole("x\ny\n", ""));
        assert_eq!(d, "--- a/n\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n");
    }

    #[test]
    fn edit_attribution() {
        let h = hunks(
            "a\nb\nc\n",
            "A\nb\nC\n",
            &[
                Change {
                    old: 0..1,
                    new: 0..1,
                    edit: 4,
                },
                Change {
                    old: 4..5,
                    new: 4..5,
                    edit: 7,
                },
            ],
        );
        let owners: Vec<_> = h[0].lines().filter_map(|l| l.edit).collect();
        assert_eq!(owners, vec![4, 4, 7, 7]);
    }
}

#[cfg(test)]
mod edge_tests {
    use super::*;

    #[test]
    fn joining_lines_includes_the_next_line() {
        // "a\n" -> "a" joins a and b into one line.
        let d = unified(
            Some("f"),
            Some("f"),
            &hunks(
                "a\nb\n",
                "ab\n",
                &[Change {
                    old: 0..2,
                    new: 0..1,
                    edit: 0,
                }],
            ),
        );
        assert_eq!(d, "--- a/f\n+++ b/f\n@@ -1,2 +1 @@\n-a\n-b\n+ab\n");
    }

    #[test]
    fn appending_at_end() {
        let d = unified(
            Some("f"),
            Some("f"),
            &hunks(
                "a\n",
                "a\nb\n",
                &[Change {
                    old: 2..2,
                    new: 2..4,
                    edit: 0,
                }],
            ),
        );
        assert_eq!(d, "--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n a\n+b\n");
    }
}
