//! Locating Codex patch chunks in a document (SPEC §6), redline's answer to Codex's
//! `seek_sequence`.
//!
//! The Codex dialect only parses; the engine locates its chunks here. Old lines are found by
//! the matcher ([`matcher::whole_lines`]: whole lines of N(file), through the search module's
//! key scan, one pass for every chunk of the file) and judged by its one verdict
//! ([`matcher::verdict`], which [`super::find_all`] uses too: unique, ambiguous with its cap);
//! a chunk not found gets the matcher's one "already applied" rule
//! ([`super::applied::already_applied`], its new lines as whole lines after where it was looked
//! for). What stays here is what only a patch has: the cursor, `@@` anchors, the retry without
//! trailing blank lines, and the splice that keeps context lines.
//!
//! Exactness and the normalizations reported come from the matcher's one classification over
//! the chunk's whole old lines ([`matcher::whole_line_normalizations`]). That is where a chunk
//! differs from an `oldText` by design: `find_all`'s span ends where N(oldText) ends, so
//! `oldText` `x` on the line `x  ` is `exact` and the two spaces stay outside the span; a chunk
//! replaces whole lines, so its span holds each line's trailing whitespace, and the old line `x`
//! on the file line `x  ` is `normalized` with `trailing_whitespace` (the spaces go with the
//! replaced line; a context line keeps them, rule 4, but was still matched only under N(·)).
//! Likewise a blank first old line that is `\t` in the file reports `trailing_whitespace`.

//! Rules, per chunk, with a cursor that starts at the first line and moves forward:
//!
//! 1. **Anchors.** Each `@@ anchor` is the first line at or after the cursor (then after the
//!    previous anchor) that equals it under N(·), leading whitespace ignored (models write
//!    `@@ def f` for an indented `def f`, which Codex accepts too).
//! 2. **Old lines** are compared line by line under N(·) (SPEC §3.3), from the cursor (after the
//!    innermost anchor, if any). Every window that matches is counted: one is the match, more than
//!    one is `ambiguous` (Codex takes the first, silently). With an anchor, the windows starting
//!    inside the anchor's block count first (the lines below it that are more indented than it,
//!    when there are any), so `@@ def f` picks `f`'s copy of a line that other functions below it
//!    also have; when none start there, the rest of the file counts. `*** End of File` chunks
//!    only try the window that ends at the last line. As in Codex, trailing empty context lines
//!    are dropped and the search retried when nothing matches.
//! 3. **Pure insertions** (no old lines) go right after the innermost anchor; without one, at the
//!    end of the file (before a final blank line, as in Codex).
//! 4. **Splice.** Only the lines the chunk changes are replaced: leading and trailing context lines
//!    stay outside the span, and context lines between changes are copied from the file, so
//!    context keeps the file's own bytes (trailing whitespace, smart quotes) even when the patch
//!    wrote them differently. `new_text` has LF line breaks (the engine adapts them to the file);
//!    a file without a final newline keeps that state.
//! 5. The cursor moves past the whole matched window, so chunks must come in file order.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;
use std::ops::Range;

use similar::{Algorithm, DiffTag, capture_diff};

use crate::engine::document::{Document, LineStarts};
use crate::engine::failure::{ChunkError, ChunkScope};
use crate::engine::hint;
use crate::engine::matcher::applied::{Wanted, Within, already_applied};
use crate::engine::matcher::{self, MAX_AMBIGUOUS, Stored, Verdict};
use crate::engine::normalize::{Normalization, Normalized};
use crate::request::{PatchChunk, PatchLines};

/// Where a chunk goes and what replaces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Located {
    /// Byte range in `Document::text` that is replaced (empty for a pure insertion).
    pub span: Range<usize>,
    /// The replacement, with `\n` line breaks; the engine adapts them to the file's ending.
    pub new_text: String,
    /// Every old line equals its file line as written (line endings aside).
    pub exact: bool,
    /// What N(·) had to fold for the old lines to match, in reporting order (SPEC §3a).
    pub normalizations: Vec<Normalization>,
}

/// Locates every chunk of one file, in order; one result per chunk. A failed chunk leaves the
/// cursor where it was, so later chunks are still tried and reported.
pub(crate) fn locate(doc: &Document, chunks: &[PatchChunk]) -> Vec<Result<Located, ChunkError>> {
    let normalized = Normalized::new(&doc.text);
    let lines = Lines::new(doc, &normalized, chunks);
    // Every chunk's old lines (without the trailing blank lines the retry may drop, see
    // [`base_len`]) are found by the engine's one search, in one scan for all chunks.
    // Borrowed where a line is its own N(·) (the usual case): no second copy of the patch.
    let olds: Vec<Cow<'_, PatchLines>> = chunks.iter().map(|c| n_lines(&c.old_lines)).collect();
    let bases: Vec<Option<&str>> = chunks
        .iter()
        .zip(&olds)
        .map(|(c, n)| joined(n, base_len(&c.old_lines)))
        .collect();
    let occ = lines.occurrences(&bases);
    let mut cursor = 0;
    let mut steps: Vec<Step> = Vec::with_capacity(chunks.len());
    for (k, chunk) in chunks.iter().enumerate() {
        let step = lines.chunk(chunk, &olds[k], occ.of(k), cursor);
        if let Step::Placed(_, next) = step {
            cursor = next;
        }
        steps.push(step);
    }
    // SPEC §3a "Already applied" for the chunks not found: the matcher's one rule, their new
    // lines as whole lines after where the chunk was looked for; one scan for all of them.
    // (chunk, where it was looked for from, old lines, new lines), joined only for these.
    let missing: Vec<(usize, usize, &str, &str)> = steps
        .iter()
        .enumerate()
        .filter_map(|(k, step)| match step {
            Step::Missing(from) => Some((
                k,
                *from,
                chunks[k].old_lines.text(),
                chunks[k].new_lines.text(),
            )),
            _ => None,
        })
        .collect();
    let wanted: Vec<Wanted<'_>> = missing
        .iter()
        .map(|(k, from, old, new)| Wanted {
            old,
            new,
            within: Within::Lines {
                from: *from,
                lines: chunks[*k].new_lines.len(),
                eof: chunks[*k].end_of_file,
            },
        })
        .collect();
    let mut applied = vec![None; chunks.len()];
    for ((k, ..), at) in missing
        .iter()
        .zip(already_applied(doc, &normalized, wanted.len(), |k| {
            wanted[k]
        }))
    {
        applied[*k] = at;
    }
    // The closest regions of every chunk not found, from one pass over the file for all of
    // them (as for JSON edits; one pass per chunk cost chunks × file).
    let olds: Vec<&str> = missing.iter().map(|m| m.2).collect();
    let mut closest = vec![Vec::new(); chunks.len()];
    let index = &lines.nstarts;
    for ((k, ..), c) in missing
        .iter()
        .zip(hint::candidates(&normalized, index, &olds))
    {
        closest[*k] = c;
    }
    steps
        .into_iter()
        .zip(chunks)
        .enumerate()
        .map(|(k, (step, chunk))| match step {
            Step::Placed(located, _) => Ok(located),
            Step::Failed(why) => Err(why),
            Step::Missing(from) => Err(ChunkError::NotFound {
                scope: if chunk.end_of_file {
                    ChunkScope::EndOfFile
                } else {
                    ChunkScope::After(from)
                },
                already_applied: applied[k],
                candidates: std::mem::take(&mut closest[k]),
            }),
        })
        .collect()
}

/// N(·) of one patch line.
fn n_line(line: &str) -> String {
    Normalized::new(line).text.into_owned()
}

/// N(·) of a chunk's lines: the chunk's own when each line is its own N(·) (the usual case),
/// else a copy.
fn n_lines(lines: &PatchLines) -> Cow<'_, PatchLines> {
    if lines
        .iter()
        .all(|l| matches!(Normalized::new(l).text, Cow::Borrowed(_)))
    {
        return Cow::Borrowed(lines);
    }
    let n: Vec<Cow<'_, str>> = lines.iter().map(|l| Normalized::new(l).text).collect();
    Cow::Owned(PatchLines::from(n.as_slice()))
}

/// The first `n` N(·) lines joined into one search pattern; `None` when one of them holds a
/// line break (a lone CR inside a patch line), which no single file line can equal.
fn joined(lines: &PatchLines, n: usize) -> Option<&str> {
    (0..n)
        .all(|i| !lines.get(i).contains('\n'))
        .then(|| lines.joined(n))
}

/// How many old lines are left once the trailing blank ones that Codex's retry may drop are
/// dropped (at least one is always kept).
fn base_len(old: &PatchLines) -> usize {
    let mut len = old.len();
    while len > 1 && old.get(len - 1).trim().is_empty() {
        len -= 1;
    }
    len
}

/// What became of one chunk.
enum Step {
    /// Placed, and the cursor for the next chunk.
    Placed(Located, usize),
    Failed(ChunkError),
    /// Its old lines are nowhere after line `from` (the error is made once every chunk is done).
    Missing(usize),
}

/// The lines of a document, with N(·) of each.
struct Lines<'a> {
    doc: &'a Document,
    normalized: &'a Normalized<'a>,
    /// Where each line of N(file) starts ([`matcher::line_index`]).
    nstarts: Cow<'a, LineStarts>,
    count: usize,
    /// Per anchor of the patch (N(·), leading whitespace trimmed): every line that equals it,
    /// ascending, with the end of the block under it ([`Lines::block_ends`]).
    anchors: HashMap<String, Vec<(u32, u32)>>,
    /// Line comparisons left for looking past the matcher's lists ([`Lines::starts_in`]):
    /// eight per line of the file and of the patch's old lines, plus 1 Mi. Within it every
    /// chunk is located exactly; a chunk that would need more fails as
    /// [`ChunkError::TooManyPlaces`], so a patch costs time linear in the file plus the patch
    /// whatever their shape.
    work: Cell<usize>,
}

/// Each chunk's occurrences of its old lines ([`Lines::occurrences`]).
struct Occurrences {
    found: matcher::WholeLines,
    /// Each chunk's pattern in `found`, if it has one.
    pattern: Vec<Option<usize>>,
}

impl Occurrences {
    fn of(&self, chunk: usize) -> Stored<'_> {
        self.pattern[chunk].map_or_else(Stored::default, |p| self.found.of(p))
    }
}

/// The locator's work limit was reached ([`Lines::work`]).
struct OverLimit;

impl<'a> Lines<'a> {
    fn new(doc: &'a Document, normalized: &'a Normalized<'a>, chunks: &[PatchChunk]) -> Lines<'a> {
        let nstarts = matcher::line_index(doc, normalized);
        let count = if normalized.text.is_empty() {
            0
        } else if doc.final_newline() {
            // The empty piece after the last line break is not a line.
            nstarts.len() - 1
        } else {
            nstarts.len()
        };
        let patch_lines: usize = chunks.iter().map(|c| c.old_lines.len()).sum();
        let mut lines = Lines {
            doc,
            normalized,
            nstarts,
            count,
            anchors: HashMap::new(),
            work: Cell::new(8 * (count + patch_lines) + (1 << 20)),
        };
        for c in chunks {
            for a in &c.anchors {
                let want = n_line(a);
                lines
                    .anchors
                    .entry(want.trim_start().to_string())
                    .or_default();
            }
        }
        if !lines.anchors.is_empty() {
            lines.block_ends();
        }
        lines
    }

    /// Fills [`Lines::anchors`] in one pass over the lines, last to first: the lines that
    /// equal an anchor, each with the end of its block ([`Lines::block_end`]'s rule). The
    /// block under line `a` ends at the first non-blank line after it that is not more indented
    /// (the rest of the file when the next non-blank line is not more indented than `a`). A
    /// stack holds the non-blank lines below that may still end a block above: the nearest
    /// first, each less indented than the one nearer than it (a nearer line at most as
    /// indented hides a farther one), so it is at most as deep as the longest indentation and
    /// the end of a block is a binary search. Linear in the file, whatever the patch: each
    /// anchor used to walk its own block.
    fn block_ends(&mut self) {
        let indent = |s: &str| s.len() - s.trim_start().len();
        // (indent, line), farthest (least indented) first.
        let mut stack: Vec<(usize, u32)> = Vec::new();
        // The indentation of the nearest non-blank line below, if any.
        let mut next_indent: Option<usize> = None;
        for a in (0..self.count).rev() {
            let line = self.nline(a);
            let base = indent(line);
            if let Some(at) = self.anchors.get_mut(line.trim_start()) {
                let end = match next_indent {
                    Some(i) if i > base => {
                        // The nearest line at most `base` indented: the last of the stack's
                        // prefix of such lines.
                        let k = stack.partition_point(|&(i, _)| i <= base);
                        k.checked_sub(1).map_or(self.count, |k| stack[k].1 as usize)
                    }
                    _ => self.count,
                };
                at.push((a as u32, end as u32));
            }
            if !line.is_empty() {
                while stack.last().is_some_and(|&(i, _)| i >= base) {
                    stack.pop();
                }
                stack.push((base, a as u32));
                next_indent = Some(base);
            }
        }
        for at in self.anchors.values_mut() {
            at.reverse();
        }
    }

    /// The first line at or after `from` that equals `anchor` (N(·), leading whitespace
    /// trimmed), with the end of its block.
    fn anchor(&self, anchor: &str, from: usize) -> Option<(usize, usize)> {
        let at = self.anchors.get(anchor)?;
        let (line, end) = *at.get(at.partition_point(|&(l, _)| (l as usize) < from))?;
        Some((line as usize, end as usize))
    }

    fn count(&self) -> usize {
        self.count
    }

    /// Where line `i` of N(file) starts; one past the end of the text for the line after the
    /// last (so that `nstart(i + 1) - 1` is where line `i` ends).
    fn nstart(&self, i: usize) -> usize {
        self.nstarts
            .get(i)
            .unwrap_or(self.normalized.text.len() + 1)
    }

    /// N(·) of line `i`.
    fn nline(&self, i: usize) -> &'a str {
        let t: &'a str = &self.normalized.text;
        &t[self.nstart(i)..self.nstart(i + 1) - 1]
    }

    /// The first line of every whole-line occurrence of each pattern, ascending
    /// ([`matcher::whole_lines`]); none for a `None` pattern.
    fn occurrences(&self, patterns: &[Option<&str>]) -> Occurrences {
        let wanted: Vec<&str> = patterns.iter().flatten().copied().collect();
        let open_end = self.count > 0 && !self.doc.final_newline();
        let found = matcher::whole_lines(self.normalized, open_end, &wanted);
        let mut next = 0;
        let pattern = patterns
            .iter()
            .map(|p| {
                p.as_ref().map(|_| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        Occurrences { found, pattern }
    }

    /// The file's own text of line `i`, without its line break.
    fn raw(&self, i: usize) -> &'a str {
        &self.doc.text[self.doc.line_start(i)..self.doc.line_content_end(i)]
    }

    /// Byte range of lines `first..first + len` (at least one line), without the last break.
    fn window(&self, first: usize, len: usize) -> Range<usize> {
        let last = (first + len.max(1)).min(self.count()).saturating_sub(1);
        self.doc.line_start(first)..self.doc.line_content_end(last)
    }

    /// The end of the block under the anchor at line `a`: the first non-blank line after it that
    /// is not more indented. The rest of the file when the next non-blank line is not indented
    /// more than the anchor (no block to speak of). The walk [`Lines::block_ends`] is tested
    /// against.
    #[cfg(test)]
    fn block_end(&self, a: usize) -> usize {
        let indent = |s: &str| s.len() - s.trim_start().len();
        let base = indent(self.nline(a));
        let mut j = a + 1;
        while j < self.count() && self.nline(j).is_empty() {
            j += 1;
        }
        if j == self.count() || indent(self.nline(j)) <= base {
            return self.count();
        }
        while j < self.count() && (self.nline(j).is_empty() || indent(self.nline(j)) > base) {
            j += 1;
        }
        j
    }

    /// Takes `n` from the work limit.
    fn charge(&self, n: usize) -> Result<(), OverLimit> {
        let left = self.work.get().checked_sub(n).ok_or(OverLimit)?;
        self.work.set(left);
        Ok(())
    }

    /// Up to `want` first lines of the windows in `lo..hi` where the N(·) lines `old[..len]`
    /// occur, ascending. `base` holds the occurrences of `old[..b]` (`b <= len`; the lines
    /// after it are the trailing blank ones the retry may drop) as the matcher kept them:
    /// before its cut they are complete and filtered here by the lines after the base; past
    /// the cut the file is searched for `old[..len]` itself ([`Lines::scan`]).
    #[allow(clippy::too_many_arguments)]
    fn starts_in(
        &self,
        base: Stored<'_>,
        old: &PatchLines,
        b: usize,
        len: usize,
        lo: usize,
        hi: usize,
        want: usize,
    ) -> Result<Vec<usize>, OverLimit> {
        let mut out = Vec::new();
        let first = base
            .lines
            .count_below(u32::try_from(lo).unwrap_or(u32::MAX));
        for s in base.lines.iter_from(first).map(|s| s as usize) {
            if s >= hi || out.len() == want {
                return Ok(out);
            }
            self.charge(1 + len - b)?;
            if s + len <= self.count() && (b..len).all(|i| old.get(i) == self.nline(s + i)) {
                out.push(s);
            }
        }
        match base.more_at {
            Some(more) if out.len() < want && lo.max(more) < hi => {
                let rest = self.scan(old, len, lo.max(more), hi, want - out.len())?;
                out.extend(rest);
                Ok(out)
            }
            _ => Ok(out),
        }
    }

    /// Up to `want` first lines of the windows starting in `lo..hi` whose N(·) lines are the first
    /// `m` of `pat`,
    /// ascending: Knuth-Morris-Pratt over whole lines (a line compared with a line), from `lo`
    /// on; each step is charged to the work limit.
    fn scan(
        &self,
        pat: &PatchLines,
        m: usize,
        lo: usize,
        hi: usize,
        want: usize,
    ) -> Result<Vec<usize>, OverLimit> {
        let pat = |i: usize| pat.get(i);
        let mut out = Vec::new();
        if m == 0 || want == 0 {
            return Ok(out);
        }
        self.charge(m)?;
        let mut fail = vec![0usize; m];
        let mut k = 0;
        for i in 1..m {
            while k > 0 && pat(i) != pat(k) {
                k = fail[k - 1];
            }
            if pat(i) == pat(k) {
                k += 1;
            }
            fail[i] = k;
        }
        // Windows start before `hi`, so they end before `hi + m - 1`.
        let end = self.count().min(hi.saturating_add(m - 1));
        let mut q = 0;
        for i in lo..end {
            self.charge(1)?;
            let line = self.nline(i);
            while q > 0 && line != pat(q) {
                self.charge(1)?;
                q = fail[q - 1];
            }
            if line == pat(q) {
                q += 1;
            }
            if q == m {
                out.push(i + 1 - m);
                if out.len() == want {
                    break;
                }
                q = fail[q - 1];
            }
        }
        Ok(out)
    }

    /// The verdict on the `len`-line windows of `old[..len]` that the chunk may take (`base`:
    /// [`Lines::starts_in`]): from line `from` on; with an anchor, those inside its block
    /// (lines before `block_end`) first; an end-of-file chunk only the window that ends at the
    /// last line. Beyond [`MAX_AMBIGUOUS`] places it stops counting.
    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        base: Stored<'_>,
        old: &PatchLines,
        b: usize,
        len: usize,
        from: usize,
        block_end: Option<usize>,
        eof: bool,
    ) -> Result<Verdict<usize>, OverLimit> {
        if eof {
            self.charge(len)?;
            return Ok(match self.count().checked_sub(len) {
                Some(at) if at >= from && (0..len).all(|i| old.get(i) == self.nline(at + i)) => {
                    Verdict::One(at)
                }
                _ => Verdict::NotFound,
            });
        }
        let want = MAX_AMBIGUOUS + 1;
        // Past MAX_AMBIGUOUS places, "more than" them: the rest are not counted.
        let count = |found: &[usize]| {
            if found.len() >= want {
                matcher::UNCOUNTED
            } else {
                found.len()
            }
        };
        if let Some(end) = block_end {
            let inside = self.starts_in(base, old, b, len, from, end, want)?;
            if !inside.is_empty() {
                return Ok(matcher::verdict(count(&inside), inside));
            }
        }
        let all = self.starts_in(base, old, b, len, from, usize::MAX, want)?;
        Ok(matcher::verdict(count(&all), all))
    }

    /// Places one chunk. `old` is N(·) of its old lines, `base` the occurrences of their first
    /// [`base_len`] lines.
    fn chunk(&self, chunk: &PatchChunk, old: &PatchLines, base: Stored<'_>, cursor: usize) -> Step {
        if chunk.old_lines == chunk.new_lines {
            return Step::Failed(ChunkError::NoOp);
        }
        let mut from = cursor;
        // The innermost anchor's line and the end of its block.
        let mut anchor = None;
        for text in &chunk.anchors {
            let want = n_line(text);
            let Some((i, end)) = self.anchor(want.trim_start(), from) else {
                return Step::Failed(ChunkError::AnchorNotFound {
                    anchor: text.clone(),
                    after: from,
                });
            };
            anchor = Some(end);
            from = i + 1;
        }

        if chunk.old_lines.is_empty() {
            let line = match anchor {
                Some(_) => from,
                None if self.count() > 0 && self.nline(self.count() - 1).is_empty() => {
                    self.count() - 1
                }
                None => self.count(),
            };
            let new = &chunk.new_lines;
            let located = self.splice(line, (&chunk.old_lines, 0), (new, new.len()));
            return Step::Placed(located, if anchor.is_some() { from } else { cursor });
        }

        let b = base_len(&chunk.old_lines);
        let mut len = chunk.old_lines.len();
        // The new lines kept: the retry drops trailing blank ones too.
        let mut new_len = chunk.new_lines.len();
        loop {
            let verdict = self.search(base, old, b, len, from, anchor, chunk.end_of_file);
            let Ok(verdict) = verdict else {
                return Step::Failed(ChunkError::TooManyPlaces);
            };
            match verdict {
                Verdict::One(start) => {
                    let old = (&chunk.old_lines, len);
                    let located = self.splice(start, old, (&chunk.new_lines, new_len));
                    return Step::Placed(located, start + len);
                }
                Verdict::Ambiguous { first, count } => {
                    return Step::Failed(ChunkError::Ambiguous {
                        matches: first.iter().map(|&s| self.window(s, len)).collect(),
                        occurrences: count,
                    });
                }
                Verdict::NotFound => {}
            }
            // Codex: a chunk ending in empty context lines may have meant the end of the file.
            if len > b {
                len -= 1;
                if new_len > 0 && chunk.new_lines.get(new_len - 1).trim().is_empty() {
                    new_len -= 1;
                }
            } else {
                return Step::Missing(from);
            }
        }
    }

    /// Replaces the first `old.1` lines of `old.0` (matched at line `start`) by the first `new.1`
    /// of `new.0`, keeping every context line as the file has it (module docs, rule 4). The lines
    /// are diffed where they are (no list of them: a chunk of many short lines would cost 16
    /// bytes a line twice).
    fn splice(
        &self,
        start: usize,
        (old, old_len): (&PatchLines, usize),
        (new, new_len): (&PatchLines, usize),
    ) -> Located {
        // Exactness and normalizations over the whole old lines, by the matcher's one
        // classification (module docs: why a line's trailing whitespace counts).
        let (exact, normalizations) = match old_len {
            0 => (true, Vec::new()),
            len => {
                let span = self.window(start, len);
                let n = self.nstart(start)..self.nstart(start + len) - 1;
                let old_text = old.joined(len);
                if matcher::same_lf(&self.doc.text[span.clone()], old_text) {
                    (true, Vec::new())
                } else {
                    let text = &self.doc.text;
                    let found = matcher::whole_line_normalizations(
                        text,
                        self.normalized,
                        n,
                        &span,
                        old_text,
                    );
                    (false, found)
                }
            }
        };

        let ops = capture_diff(Algorithm::Myers, old, 0..old_len, new, 0..new_len);
        let edge = |op: Option<&similar::DiffOp>| match op.map(|o| o.as_tag_tuple()) {
            Some((DiffTag::Equal, r, _)) => r.len(),
            _ => 0,
        };
        let lead = edge(ops.first());
        let trail = if ops.len() > 1 { edge(ops.last()) } else { 0 };
        let middle = lead..old_len - trail;
        let mut new_text = String::new();
        for op in &ops {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            if tag == DiffTag::Equal {
                for i in old_range.filter(|i| middle.contains(i)) {
                    new_text.push_str(self.raw(start + i));
                    new_text.push('\n');
                }
            } else {
                for line in new_range.map(|i| new.get(i)) {
                    new_text.push_str(line);
                    new_text.push('\n');
                }
            }
        }

        let first = start + middle.start;
        let text = &self.doc.text;
        let mut span = self.doc.line_start(first)..self.doc.line_start(start + middle.end);
        if span.end == text.len() && !text.is_empty() && !self.doc.final_newline() {
            // The last line has no line break, and keeps having none.
            if span.is_empty() {
                if !new_text.is_empty() {
                    new_text.pop();
                    new_text.insert(0, '\n');
                }
            } else if new_text.is_empty() {
                if first > 0 {
                    span.start = self.doc.line_content_end(first - 1);
                }
            } else {
                new_text.pop();
            }
        }
        Located {
            span,
            new_text,
            exact,
            normalizations,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::failure::EditError;
    use crate::engine::hint::Candidate;
    use crate::error::Code;

    fn chunk(anchors: &[&str], body: &str) -> PatchChunk {
        let mut c = PatchChunk {
            line: 3,
            ..PatchChunk::default()
        };
        c.anchors = anchors.iter().map(|s| s.to_string()).collect();
        for line in body.lines() {
            match line.split_at_checked(1) {
                Some((" ", rest)) => {
                    c.old_lines.push(rest);
                    c.new_lines.push(rest);
                }
                Some(("-", rest)) => c.old_lines.push(rest),
                Some(("+", rest)) => c.new_lines.push(rest),
                _ => {
                    c.old_lines.push("");
                    c.new_lines.push("");
                }
            }
        }
        c
    }

    /// A failed chunk as the response tells it: its code, its words and its places.
    #[derive(Debug)]
    struct Told {
        code: Code,
        message: String,
        hint: Option<String>,
        matches: Vec<Range<usize>>,
        occurrences: usize,
        already_applied: bool,
        candidates: Vec<Candidate>,
    }

    /// [`locate`], with each failure told as the response tells it.
    fn located(doc: &Document, chunks: &[PatchChunk]) -> Vec<Result<Located, Told>> {
        locate(doc, chunks)
            .into_iter()
            .zip(chunks)
            .map(|(r, c)| {
                r.map_err(|why| {
                    let e = EditError::Chunk {
                        line: c.line,
                        why: Box::new(why),
                    };
                    let said = crate::report::message::edit(&e, "f.txt", 0, Some(doc));
                    Told {
                        code: e.code(),
                        message: said.message,
                        hint: said.hint,
                        matches: e.matches().to_vec(),
                        occurrences: e.occurrences(),
                        already_applied: e.already_applied().is_some(),
                        candidates: e.candidates().to_vec(),
                    }
                })
            })
            .collect()
    }

    /// Applies located chunks the way the engine does (adapting line endings) and returns the
    /// file's bytes, BOM included.
    fn apply(doc: &Document, chunks: &[PatchChunk]) -> Result<String, Told> {
        let mut located: Vec<Located> =
            located(doc, chunks).into_iter().collect::<Result<_, _>>()?;
        located.sort_by_key(|l| l.span.start);
        let mut text = doc.text.clone();
        for l in located.iter().rev() {
            text.replace_range(l.span.clone(), &doc.adapt_eol(&l.new_text));
        }
        Ok(if doc.bom {
            format!("\u{FEFF}{text}")
        } else {
            text
        })
    }

    fn doc(text: &str) -> Document {
        Document::decode(text.as_bytes().to_vec()).unwrap()
    }

    fn one(text: &str, c: PatchChunk) -> Result<String, Told> {
        apply(&doc(text), &[c])
    }

    #[test]
    fn replaces_only_changed_lines() {
        let d = doc("line1\nline2\nline3\n");
        let r = locate(&d, &[chunk(&[], " line1\n-line2\n+changed\n line3")]);
        let l = r[0].as_ref().unwrap();
        assert_eq!(l.span, 6..12);
        assert_eq!(l.new_text, "changed\n");
        assert!(l.exact);
        assert!(l.normalizations.is_empty());
    }

    #[test]
    fn multiple_chunks_in_order() {
        let c = [
            chunk(&[], "-line2\n+changed2"),
            chunk(&[], "-line4\n+changed4"),
        ];
        assert_eq!(
            apply(&doc("line1\nline2\nline3\nline4\n"), &c).unwrap(),
            "line1\nchanged2\nline3\nchanged4\n"
        );
        let backwards = [
            chunk(&[], "-line4\n+changed4"),
            chunk(&[], "-line2\n+changed2"),
        ];
        let r = located(&doc("line1\nline2\nline3\nline4\n"), &backwards);
        assert!(r[0].is_ok());
        assert_eq!(r[1].as_ref().unwrap_err().code, Code::NotFound);
        assert!(
            r[1].as_ref().unwrap_err().message.contains("after line 4"),
            "{r:?}"
        );
    }

    #[test]
    fn crlf_file_keeps_crlf() {
        let out = one(
            "one\r\ntwo\r\nthree\r\nfour\r\n",
            chunk(&[], " one\n-two\n+TWO\n+2\n three"),
        )
        .unwrap();
        assert_eq!(out, "one\r\nTWO\r\n2\r\nthree\r\nfour\r\n");
    }

    #[test]
    fn bom_file_keeps_bom_and_first_line_matches() {
        let out = one("\u{FEFF}first\nsecond\n", chunk(&[], "-first\n+FIRST")).unwrap();
        assert_eq!(out, "\u{FEFF}FIRST\nsecond\n");
    }

    #[test]
    fn smart_quotes_in_file_match_ascii_patch_and_context_is_kept() {
        let file = "say(\u{201C}hi\u{201D})  \nx = 1\nsay(\u{2018}bye\u{2019})\n";
        let c = chunk(&[], " say(\"hi\")\n-x = 1\n+x = 2\n say('bye')");
        let d = doc(file);
        let l = locate(&d, std::slice::from_ref(&c)).remove(0).unwrap();
        assert!(!l.exact);
        assert_eq!(
            l.normalizations,
            vec![Normalization::TrailingWhitespace, Normalization::Quotes]
        );
        assert_eq!(
            apply(&d, &[c]).unwrap(),
            "say(\u{201C}hi\u{201D})  \nx = 2\nsay(\u{2018}bye\u{2019})\n"
        );
    }

    #[test]
    fn inner_context_lines_come_from_the_file() {
        let file = "a\n\u{201C}q\u{201D}  \nb\n";
        let out = one(file, chunk(&[], "-a\n+A\n \"q\"\n-b\n+B")).unwrap();
        assert_eq!(out, "A\n\u{201C}q\u{201D}  \nB\n");
    }

    #[test]
    fn smart_quotes_in_patch_match_ascii_file() {
        let out = one(
            "say('x')\n",
            chunk(&[], "-say(\u{2018}x\u{2019})\n+say('y')"),
        )
        .unwrap();
        assert_eq!(out, "say('y')\n");
    }

    #[test]
    fn leading_whitespace_is_significant() {
        let r = one("    x = 1\n", chunk(&[], "-x = 1\n+x = 2")).unwrap_err();
        assert_eq!(r.code, Code::NotFound);
    }

    #[test]
    fn ambiguous_hunk_fails_with_candidates() {
        let e = one("foo\nbar\nfoo\n", chunk(&[], "-foo\n+baz")).unwrap_err();
        assert_eq!(e.code, Code::Ambiguous);
        assert_eq!(e.matches, vec![0..3, 8..11]);
        assert_eq!(e.occurrences, 2);
        assert!(e.message.contains("lines 1, 3"), "{}", e.message);
        // More context disambiguates.
        assert_eq!(
            one("foo\nbar\nfoo\n", chunk(&[], " bar\n-foo\n+baz")).unwrap(),
            "foo\nbar\nbaz\n"
        );
    }

    #[test]
    fn anchors_narrow_the_search() {
        let file = "class A:\n    def f(self):\n        return 1\nclass B:\n    def f(self):\n        return 1\n";
        let out = one(
            file,
            chunk(&["class B:"], "-        return 1\n+        return 2"),
        )
        .unwrap();
        assert!(
            out.ends_with("class B:\n    def f(self):\n        return 2\n"),
            "{out}"
        );
        // Inside A's block, A's copy wins although B's is also after the anchor.
        let out = one(
            file,
            chunk(
                &["class A:", "def f(self):"],
                "-        return 1\n+        return 2",
            ),
        )
        .unwrap();
        assert!(
            out.starts_with("class A:\n    def f(self):\n        return 2\nclass B:"),
            "{out}"
        );
        let e = one(file, chunk(&["class C:"], "-x\n+y")).unwrap_err();
        assert_eq!(e.code, Code::NotFound);
        assert!(e.message.contains("`@@ class C:`"), "{}", e.message);
    }

    #[test]
    fn anchor_without_block_searches_the_rest() {
        let file = "## One\ntext\n## Two\ntext\n";
        let out = one(file, chunk(&["## Two"], "-text\n+new")).unwrap();
        assert_eq!(out, "## One\ntext\n## Two\nnew\n");
        let e = one(file, chunk(&["## One"], "-text\n+new")).unwrap_err();
        assert_eq!(
            e.code,
            Code::Ambiguous,
            "a flat anchor does not pick the first"
        );
    }

    #[test]
    fn end_of_file_chunk_matches_only_at_the_end() {
        let file = "x\nend\ny\nend\n";
        let mut c = chunk(&[], "-end\n+END");
        c.end_of_file = true;
        assert_eq!(one(file, c.clone()).unwrap(), "x\nend\ny\nEND\n");
        let e = one("end\ny\n", c).unwrap_err();
        assert_eq!(e.code, Code::NotFound);
        assert!(e.message.contains("end of the file"));
    }

    #[test]
    fn pure_insertion_after_anchor() {
        let file = "fn a() {\n}\nfn b() {\n}\n";
        let out = one(file, chunk(&["fn a() {"], "+    one();")).unwrap();
        assert_eq!(out, "fn a() {\n    one();\n}\nfn b() {\n}\n");
    }

    #[test]
    fn pure_insertion_without_anchor_appends() {
        assert_eq!(
            one("line1\nline2\n", chunk(&[], "+added")).unwrap(),
            "line1\nline2\nadded\n"
        );
        assert_eq!(
            one("a\n\n", chunk(&[], "+x")).unwrap(),
            "a\nx\n\n",
            "before a final blank line"
        );
        assert_eq!(
            one("a", chunk(&[], "+x")).unwrap(),
            "a\nx",
            "no final newline stays so"
        );
        assert_eq!(one("", chunk(&[], "+x")).unwrap(), "x\n");
    }

    #[test]
    fn no_final_newline_is_kept() {
        assert_eq!(one("a\nb", chunk(&[], " a\n-b\n+c")).unwrap(), "a\nc");
        assert_eq!(one("a\nb", chunk(&[], " a\n-b")).unwrap(), "a");
        assert_eq!(one("a\nb\n", chunk(&[], " a\n-b")).unwrap(), "a\n");
        assert_eq!(one("a", chunk(&[], "-a\n+x\n+y")).unwrap(), "x\ny");
        assert_eq!(one("a\nb", chunk(&[], "-a\n+x\n b")).unwrap(), "x\nb");
    }

    #[test]
    fn trailing_empty_context_is_retried_without() {
        assert_eq!(one("a\nb\n", chunk(&[], " a\n-b\n+c\n")).unwrap(), "a\nc\n");
    }

    #[test]
    fn not_found_has_closest_and_already_applied() {
        let file = "one\ntwo\nthree\nfour\n";
        let e = one(file, chunk(&[], " two\n-tree\n+3\n four")).unwrap_err();
        assert_eq!(e.code, Code::NotFound);
        assert!(!e.already_applied);
        let c = &e.candidates[0];
        assert_eq!(&file[c.span.clone()], "two\nthree\nfour");
        assert!(c.score > 0.5, "{c:?}");
        let e = one(file, chunk(&[], "-too\n+two")).unwrap_err();
        assert!(e.already_applied);
        assert!(e.message.contains("at line 2"), "{}", e.message);
        assert!(
            e.message.contains("may already be applied"),
            "{}",
            e.message
        );
        assert!(!e.hint.as_deref().unwrap_or("").contains("drop"), "{e:?}");
        // New lines inside the old ones say nothing.
        let e = one(
            file,
            chunk(
                &[],
                "-one two
+two",
            ),
        )
        .unwrap_err();
        assert!(!e.already_applied, "{e:?}");
    }

    /// In a repetitive file the matcher cuts each pattern's list at its share; the locator
    /// finds the rest by scanning from where it needs them, with the same result as a naive
    /// search, and a patch within its work limit never fails for it.
    #[test]
    fn cut_lists_are_completed_by_the_scan() {
        let text: String = (0..300)
            .map(|i| if i % 7 == 3 { "y\n" } else { "x\n" })
            .collect();
        let d = doc(&text);
        let normalized = Normalized::new(&d.text);
        // 1,500 distinct patterns of 1 to 11 lines of x and y: a share of 44 occurrences each.
        let pats: Vec<Vec<String>> = (2..1502u32)
            .map(|k| {
                let bits = 31 - k.leading_zeros();
                (0..bits)
                    .map(|i| if k >> i & 1 == 1 { "x" } else { "y" }.to_string())
                    .collect()
            })
            .collect();
        let chunks: Vec<PatchChunk> = pats
            .iter()
            .map(|p| PatchChunk {
                old_lines: PatchLines::from(p.as_slice()),
                ..PatchChunk::default()
            })
            .collect();
        let lines = Lines::new(&d, &normalized, &chunks);
        let pls: Vec<PatchLines> = pats
            .iter()
            .map(|p| PatchLines::from(p.as_slice()))
            .collect();
        let occ = lines.occurrences(&pls.iter().map(|p| joined(p, p.len())).collect::<Vec<_>>());
        let n: Vec<&str> = text.lines().collect();
        let mut cut = 0;
        for (k, p) in pats.iter().enumerate() {
            let stored = occ.of(k);
            cut += usize::from(stored.more_at.is_some());
            let naive: Vec<usize> = (0..=n.len() - p.len())
                .filter(|&s| (0..p.len()).all(|i| n[s + i] == p[i]))
                .collect();
            for lo in [0, 5, 100, 250, 299] {
                for hi in [lo + 3, 200, usize::MAX] {
                    let want: Vec<usize> = naive
                        .iter()
                        .copied()
                        .filter(|&s| s >= lo && s < hi)
                        .take(21)
                        .collect();
                    let got = lines
                        .starts_in(stored, &pls[k], p.len(), p.len(), lo, hi, 21)
                        .ok()
                        .unwrap();
                    assert_eq!(got, want, "{p:?} in {lo}..{hi}");
                }
            }
        }
        assert!(cut >= 5, "only {cut} lists were cut");
    }

    /// Past its work limit a chunk fails as `too_large` with its own words, and changes
    /// nothing.
    #[test]
    fn over_the_work_limit_is_too_large() {
        let d = doc("a\nb\na\n");
        let normalized = Normalized::new(&d.text);
        let c = chunk(&[], " a\n-b\n+c");
        let lines = Lines::new(&d, &normalized, std::slice::from_ref(&c));
        let old = &c.old_lines;
        let occ = lines.occurrences(&[joined(old, old.len())]);
        lines.work.set(0);
        match lines.chunk(&c, old, occ.of(0), 0) {
            Step::Failed(why) => {
                let e = EditError::Chunk {
                    line: 3,
                    why: Box::new(why),
                };
                assert_eq!(e.code(), Code::TooLarge);
            }
            _ => panic!("placed past the work limit"),
        }
    }

    #[test]
    fn no_op_chunk() {
        let e = one("a\n", chunk(&[], " a")).unwrap_err();
        assert_eq!(e.code, Code::NoOp);
    }

    #[test]
    fn failed_chunk_does_not_stop_the_others() {
        let d = doc("a\nb\nc\n");
        let r = locate(&d, &[chunk(&[], "-zz\n+y"), chunk(&[], "-c\n+C")]);
        assert!(r[0].is_err());
        assert_eq!(r[1].as_ref().unwrap().span, 4..6);
    }

    #[test]
    fn classifies_normalizations_over_whole_lines() {
        let norms = |file: &str, body: &str| {
            let d = doc(file);
            let l = locate(&d, &[chunk(&[], body)]).remove(0).unwrap();
            (l.exact, l.normalizations)
        };
        assert_eq!(
            norms("a\u{2014}b\u{00A0}c\n", "-a-b c\n+x"),
            (false, vec![Normalization::Dashes, Normalization::Spaces])
        );
        assert_eq!(
            norms("\u{FB01}x\n", "-fix\n+x"),
            (false, vec![Normalization::Nfkc])
        );
        // A line's trailing whitespace is inside a whole-line span, a blank first line's too.
        let tw = (false, vec![Normalization::TrailingWhitespace]);
        assert_eq!(norms("x  \n", "-x\n+y"), tw);
        assert_eq!(norms("x\n", "-x \n+y"), tw);
        assert_eq!(norms(" \nx\n", "-\n-x\n+y"), tw);
        assert_eq!(norms("\nx\n", "-\t\n-x\n+y"), tw);
        // Line endings aside, the same lines are exact.
        assert_eq!(norms("x \r\ny\r\n", "-x \n-y\n+z"), (true, vec![]));
    }

    mod property {
        use super::*;
        use proptest::prelude::*;

        fn case() -> impl Strategy<Value = (Vec<String>, usize, usize, bool, bool)> {
            let line = prop::sample::select(vec!["a", "b", "c", "", "  x", "d  "]);
            (
                prop::collection::vec(line.prop_map(str::to_string), 1..12),
                any::<bool>(),
                any::<bool>(),
            )
                .prop_flat_map(|(lines, crlf, final_nl)| {
                    let n = lines.len();
                    (Just(lines), 0..n, 1..=n, Just(crlf), Just(final_nl))
                })
                .prop_filter("window inside the file", |(l, s, k, _, _)| s + k <= l.len())
                // Without a final newline, an empty last line is no line at all.
                .prop_filter("a real last line", |(l, _, _, _, nl)| {
                    *nl || !l[l.len() - 1].is_empty()
                })
        }

        proptest! {
            /// A chunk taken from the file (first and last lines as context when it has three or
            /// more, the rest replaced) lands where it was taken when its lines occur once, is
            /// ambiguous otherwise, and everything else keeps its bytes, line endings included.
            #[test]
            fn chunk_from_the_file((lines, s, k, crlf, final_nl) in case()) {
                let eol = if crlf { "\r\n" } else { "\n" };
                let join = |ls: &[String]| {
                    let mut t = ls.join(eol);
                    if final_nl { t.push_str(eol); }
                    t
                };
                let d = doc(&join(&lines));
                let window = &lines[s..s + k];
                let ctx = k >= 3;
                let mut c = PatchChunk { line: 1, ..PatchChunk::default() };
                let mut want = lines[..s].to_vec();
                for (i, l) in window.iter().enumerate() {
                    let edge = ctx && (i == 0 || i == k - 1);
                    c.old_lines.push(l);
                    if edge {
                        c.new_lines.push(l);
                        want.push(l.clone());
                    } else {
                        c.new_lines.push(&format!("NEW{i}"));
                        want.push(format!("NEW{i}"));
                    }
                }
                want.extend_from_slice(&lines[s + k..]);
                let pattern: Vec<String> = window.iter().map(|l| n_line(l)).collect();
                let n: Vec<String> = lines.iter().map(|l| n_line(l)).collect();
                let occurrences = (0..=lines.len() - k).filter(|&p| n[p..p + k] == pattern[..]).count();
                match apply(&d, &[c]) {
                    Ok(out) => {
                        prop_assert_eq!(occurrences, 1);
                        prop_assert_eq!(out, join(&want));
                    }
                    Err(e) => {
                        prop_assert!(occurrences > 1, "{:?}", e);
                        prop_assert_eq!(e.code, Code::Ambiguous);
                        prop_assert_eq!(e.occurrences, occurrences);
                    }
                }
            }

            /// The one pass over the lines finds every anchor line and the same block end as
            /// walking the block from the anchor.
            #[test]
            fn block_ends_agree_with_the_walk(
                lines in prop::collection::vec(
                    prop::sample::select(vec!["f", "  f", "    f", "  g", "", "   ", "\tf", "g"]),
                    0..24,
                ),
                final_nl in any::<bool>(),
            ) {
                let mut text = lines.join("\n");
                if final_nl { text.push('\n'); }
                let d = doc(&text);
                let normalized = Normalized::new(&d.text);
                let anchors: Vec<String> = ["f", "g", ""].map(String::from).to_vec();
                let c = PatchChunk { anchors, ..PatchChunk::default() };
                let l = Lines::new(&d, &normalized, std::slice::from_ref(&c));
                for want in ["f", "g", ""] {
                    for from in 0..=l.count() {
                        let walk = (from..l.count())
                            .find(|&i| l.nline(i).trim_start() == want)
                            .map(|i| (i, l.block_end(i)));
                        prop_assert_eq!(l.anchor(want, from), walk, "{:?} from {}", want, from);
                    }
                }
            }
        }
    }
}
