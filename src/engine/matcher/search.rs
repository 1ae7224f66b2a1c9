//! Every occurrence of many patterns in one text, overlapping ones included, in time linear in
//! the text plus the patterns and in memory linear in the patterns, whatever their shape or
//! number, and whatever the text's repetitions.
//!
//! Short patterns (at most [`LONG`] bytes) share Aho-Corasick automata of the `aho-corasick`
//! crate (one scan of the text for all of them). A DFA is used only while its table stays
//! small and the text is hundreds of times the patterns (it builds slower than it scans
//! faster); otherwise the contiguous NFA, whose size is a small multiple of the patterns, though
//! building it takes about 30 bytes per pattern byte. So the patterns are split into groups of
//! at most [`GROUP`] bytes, or a sixteenth of the patterns, or a sixty-fourth of the text,
//! whichever is most, one automaton and one scan per group: the automaton's transient stays
//! under half the text or 30 × max(32 KiB, patterns / 16) (a sixteenth of text plus patterns
//! made it ~1.7 MB for a 10,000-edit request on a 0.8 MB file, and 32 KiB groups ~0.8 MB), a
//! big text is still scanned once for a few thousand edits, and the text is scanned at most 16
//! times beyond the first groups of [`GROUP`] bytes.
//!
//! A single pattern, and up to [`ALONE`] patterns on a small text ([`ALONE_SCANNED`]), are
//! searched one by one with `memmem` as below: an automaton costs ~20 µs to build whatever its
//! size, more than a request with one small edit on a small file spends on anything else.
//!
//! Up to [`ALONE`] long patterns are searched one by one with `memmem` (fast, constant extra
//! memory, worst case linear; that many scans cost about one automaton's), and the overlapping
//! occurrences of each are followed with the pattern's smallest period: after an occurrence at
//! `r`, the next one is at `r + period` exactly when the `period` bytes after the occurrence
//! continue it, and otherwise no occurrence starts before `r + max(period, len - period + 1)`
//! (two overlapping occurrences closer than that would make `r + period` one too). So a
//! periodic pattern in a periodic text costs `period` per occurrence, not its length. More long
//! patterns than that share our own automata ([`super::ac`], 20 bytes per pattern byte, built
//! without the crate's 30-byte transient) in groups of a thirty-second of text plus patterns:
//! at most 32 scans, and at most 32 patterns bigger than such a group, each searched alone as
//! above. A thousand distinct 4 KiB `oldText`s on 10 MB are nine scans, not a thousand.
//!
//! The callback says when it has seen enough of a pattern (an `oldText` that is not replaceAll
//! needs its first 21 occurrences and a count up to its share of a linear budget). A highly
//! repetitive text can hold `K × n` occurrences of `K` patterns (`"ab"` repeated, and `K` edits
//! of `"ab"` repeated `i` times); the crate reports them all, so once its reports for given-up
//! patterns exceed the text plus the group's pattern bytes, the group's scan resumes with our
//! own automaton, which drops given-up patterns from its output links. Reports are then bounded
//! by what the callback still wants, plus one scan's worth per group; a single pattern alone
//! stops its `memmem` loop, and a scan whose patterns are all given up ends.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use std::ops::Range;

/// Total pattern bytes up to which the automaton may be a DFA (its table is about
/// states × byte classes × 4 bytes).
const DFA_BUDGET: usize = 16 * 1024;
/// Texts from this size are searched by sampling ([`super::sampled`]) for groups of at least
/// [`SAMPLED_PATTERNS`] patterns of [`super::sampled::MIN_LEN`] bytes or more: one read per 4 to
/// 16 bytes of text, ~4 ms per 12 MB for a thousand one-line patterns where the crate's
/// automaton took ~15 ms (its prefilter cannot skip to patterns that all start with the same
/// indentation). Below, building the sampling's tables would cost more than it saves.
const SAMPLED_TEXT: usize = 256 * 1024;
const SAMPLED_PATTERNS: usize = 16;
/// Text bytes per pattern byte from which a DFA is worth building.
const DFA_TEXT: usize = 256;
/// Pattern bytes of one automaton, at least (module docs).
const GROUP: usize = 32 * 1024;
/// Patterns longer than this go in automata of their own (module docs).
const LONG: usize = 2048;
/// Up to this many long patterns are searched one by one.
const ALONE: usize = 16;
/// Patterns times text bytes up to which a few short patterns are searched one by one too:
/// building an automaton costs ~20 µs whatever its size (a DFA's or an NFA's), where `memmem`
/// builds in well under a microsecond and scans an 8 KB text about as fast, so one small edit
/// on a small file is one `memmem` scan. A single pattern is always searched alone.
const ALONE_SCANNED: usize = 128 * 1024;

/// Calls `each(pattern, range)` for every occurrence of every pattern in `hay`, overlapping
/// occurrences included, until `each` returns `false` for that pattern: from then on it is
/// not called for it again, and its further occurrences cost (nearly) nothing (module docs).
/// Per pattern, occurrences come in ascending order of start; across patterns in no set order.
/// Empty patterns never match.
pub(crate) fn occurrences(
    hay: &[u8],
    patterns: &[&[u8]],
    each: impl FnMut(usize, Range<usize>) -> bool,
) {
    scan(hay, patterns, false, each)
}

/// [`occurrences`] for patterns over a large alphabet (the relaxed tier's key ids, whose bytes
/// take most of the 256 values): the automaton keeps every state sparse, since a dense state
/// costs a word per byte class, and a few thousand of them would take megabytes.
pub(crate) fn key_occurrences(
    hay: &[u8],
    patterns: &[&[u8]],
    each: impl FnMut(usize, Range<usize>) -> bool,
) {
    scan(hay, patterns, true, each)
}

fn scan(
    hay: &[u8],
    patterns: &[&[u8]],
    sparse: bool,
    mut each: impl FnMut(usize, Range<usize>) -> bool,
) {
    #[cfg(test)]
    if REFERENCE.with(std::cell::Cell::get) {
        return reference(hay, patterns, each);
    }
    let plan = plan(hay.len(), patterns);
    for these in runs(patterns, &plan.short, plan.group) {
        let (sampled, rest): (Vec<usize>, Vec<usize>) = these
            .iter()
            .partition(|&&i| patterns[i].len() >= super::sampled::MIN_LEN);
        let force = FORCE_SAMPLED.with(std::cell::Cell::get);
        if !sparse
            && (force || (hay.len() >= SAMPLED_TEXT && sampled.len() >= SAMPLED_PATTERNS))
            && !sampled.is_empty()
        {
            sample(hay, patterns, &sampled, &mut each);
            if !rest.is_empty() {
                automaton(hay, patterns, &rest, sparse, &mut each);
            }
        } else {
            automaton(hay, patterns, these, sparse, &mut each);
        }
    }
    for these in runs(patterns, &plan.long, plan.long_group) {
        own(hay, patterns, these.to_vec(), 0, &mut each);
    }
    for i in plan.alone {
        let p = patterns[i];
        long(hay, p, |at| each(i, at..at + p.len()));
    }
}

/// How [`scan`] searches the patterns.
struct Plan {
    /// Patterns of at most [`LONG`] bytes, in crate automata of `group` bytes.
    short: Vec<usize>,
    group: usize,
    /// Longer ones in our own automata of `long_group` bytes.
    long: Vec<usize>,
    long_group: usize,
    /// Searched one by one.
    alone: Vec<usize>,
}

fn plan(hay: usize, patterns: &[&[u8]]) -> Plan {
    let live: Vec<usize> = (0..patterns.len())
        .filter(|&i| !patterns[i].is_empty() && patterns[i].len() <= hay)
        .collect();
    let total: usize = live.iter().map(|&i| patterns[i].len()).sum();
    let group = GROUP.max(total / 16).max(hay / 64);
    let long_group = GROUP.max((hay + total) / 32);
    let few = live.len() == 1 || (live.len() <= ALONE && live.len() * hay <= ALONE_SCANNED);
    if few && !NO_SHORTCUT.with(std::cell::Cell::get) {
        return Plan {
            short: Vec::new(),
            group,
            long: Vec::new(),
            long_group,
            alone: live,
        };
    }
    let (short, long_ones): (Vec<usize>, Vec<usize>) =
        live.into_iter().partition(|&i| patterns[i].len() <= LONG);
    // A few long patterns are searched one by one (`memmem` is fast, and that many scans cost
    // no more than one automaton's); beyond that, those that fit a long group share our own
    // automata, and the rest (at most 32, each over a thirty-second of text plus patterns)
    // are searched one by one.
    let (alone, long) = if long_ones.len() <= ALONE {
        (long_ones, Vec::new())
    } else {
        long_ones
            .into_iter()
            .partition(|&i| patterns[i].len() > long_group)
    };
    Plan {
        short,
        group,
        long,
        long_group,
        alone,
    }
}

/// `list` cut into runs of patterns of at most `limit` bytes in all (or a single pattern).
fn runs<'a>(
    patterns: &'a [&[u8]],
    list: &'a [usize],
    limit: usize,
) -> impl Iterator<Item = &'a [usize]> + 'a {
    let mut rest = list;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut bytes = 0;
        let n = rest
            .iter()
            .position(|&i| {
                bytes += patterns[i].len();
                bytes > limit
            })
            .unwrap_or(rest.len())
            .max(1);
        let (these, next) = rest.split_at(n);
        rest = next;
        Some(these)
    })
}

/// One automaton for the patterns `these` (indices into `patterns`), and one scan of `hay`.
///
/// The `aho-corasick` crate's scan reports every occurrence, wanted or not; once more than
/// `hay.len()` plus the patterns' bytes of its reports were for patterns `each` gave up, the
/// scan resumes with our own automaton ([`super::ac`]) of the patterns still wanted, which
/// skips the given-up ones. So the crate's wasted reports cost at most one more scan's worth.
fn automaton(
    hay: &[u8],
    patterns: &[&[u8]],
    these: &[usize],
    sparse: bool,
    each: &mut impl FnMut(usize, Range<usize>) -> bool,
) {
    let total: usize = these.iter().map(|&i| patterns[i].len()).sum();
    let budget = hay.len() + total;
    let mut done = vec![false; these.len()];
    // Where the crate's scan stopped: every occurrence ending at or before it was reported.
    let mut stopped = None;
    if !FORCE_OWN.with(std::cell::Cell::get) {
        // A DFA scans faster where the prefilter fails, but builds slower (~3 ms for 16 KiB of
        // patterns against 0.6 ms for the contiguous NFA; ~50 µs against ~25 µs for twenty
        // one-line patterns): only a text of hundreds of times the patterns pays it back.
        let kind = if total <= DFA_BUDGET && hay.len() >= DFA_TEXT * total && !sparse {
            AhoCorasickKind::DFA
        } else {
            AhoCorasickKind::ContiguousNFA
        };
        let dense_depth = if sparse { 0 } else { 3 };
        // Invariant: building only fails when the automaton would exceed its state id space;
        // fall back to the noncontiguous NFA, and to our own automaton if even that fails.
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .kind(Some(kind))
            .dense_depth(dense_depth)
            .build(these.iter().map(|&i| patterns[i]))
            .or_else(|_| {
                AhoCorasick::builder()
                    .match_kind(MatchKind::Standard)
                    .kind(Some(AhoCorasickKind::NoncontiguousNFA))
                    .dense_depth(dense_depth)
                    .build(these.iter().map(|&i| patterns[i]))
            });
        let Ok(ac) = ac else {
            return own(hay, patterns, these.to_vec(), 0, each);
        };
        let mut wasted = 0usize;
        let mut live = these.len();
        // Reports come by ascending end; stop only between two ends.
        let mut end = 0;
        for m in ac.find_overlapping_iter(hay) {
            super::ac::step();
            if m.end() != end {
                if wasted > budget {
                    stopped = Some(end);
                    break;
                }
                end = m.end();
            }
            let k = m.pattern().as_usize();
            if done[k] {
                wasted += 1;
            } else if !each(these[k], m.start()..m.end()) {
                done[k] = true;
                live -= 1;
                if live == 0 {
                    // Every pattern given up: nothing more to report.
                    return;
                }
            }
        }
    } else {
        stopped = Some(0);
    }
    if let Some(after) = stopped {
        let wanted = (0..these.len()).filter(|&k| !done[k]).map(|k| these[k]);
        own(hay, patterns, wanted.collect(), after, each);
    }
}

/// The patterns `these` (each at least [`super::sampled::MIN_LEN`] bytes, ascending indices
/// into `patterns`) found by sampling the text ([`super::sampled`]); when that stops for
/// costing more than the text plus the patterns, the crate's automaton of the patterns still
/// wanted resumes from where it says, skipping the occurrences already reported.
fn sample(
    hay: &[u8],
    patterns: &[&[u8]],
    these: &[usize],
    each: &mut impl FnMut(usize, Range<usize>) -> bool,
) {
    #[cfg(test)]
    SAMPLED_SCANS.with(|c| c.set(c.get() + 1));
    let pats: Vec<&[u8]> = these.iter().map(|&i| patterns[i]).collect();
    #[allow(unused_mut)]
    let mut budget = hay.len() + pats.iter().map(|p| p.len()).sum::<usize>();
    #[cfg(test)]
    if let Some(b) = SAMPLED_BUDGET.with(std::cell::Cell::get) {
        budget = b;
    }
    let stopped = super::sampled::scan(hay, &pats, budget, &mut |k, r| each(these[k], r));
    let Err(stop) = stopped else {
        return;
    };
    drop(pats);
    let live: Vec<usize> = (0..these.len())
        .filter(|&k| !stop.done[k])
        .map(|k| these[k])
        .collect();
    if live.is_empty() {
        return;
    }
    let from = stop.resume.min(hay.len());
    automaton(&hay[from..], patterns, &live, false, &mut |i, r| {
        let r = r.start + from..r.end + from;
        // Reported patterns are among `these`, which ascend.
        let reported = these
            .binary_search(&i)
            .ok()
            .and_then(|k| stop.last[k])
            .is_some_and(|l| r.start <= l);
        reported || each(i, r)
    });
}

/// Scans with our own automaton of the patterns `wanted`, reporting the occurrences that end
/// after `after` (a scan resumed where the crate's stopped, or a whole one from 0).
fn own(
    hay: &[u8],
    patterns: &[&[u8]],
    wanted: Vec<usize>,
    after: usize,
    each: &mut impl FnMut(usize, Range<usize>) -> bool,
) {
    if wanted.is_empty() {
        return;
    }
    let refs: Vec<&[u8]> = wanted.iter().map(|&i| patterns[i]).collect();
    let Some(mut ac) = super::ac::Ac::new(&refs) else {
        // Beyond 32-bit state ids (not reachable within the request limits): one by one.
        for &i in &wanted {
            let p = patterns[i];
            long(hay, p, |at| {
                at + p.len() <= after || each(i, at..at + p.len())
            });
        }
        return;
    };
    drop(refs);
    // An occurrence ending after `after` starts at or after `from`.
    let from = (after + 1).saturating_sub(ac.max_len());
    ac.scan(hay, from, after, &mut |k, r| each(wanted[k], r));
}

thread_local! {
    /// Tests: skip the crate and scan with our own automaton from the start.
    static FORCE_OWN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests: no pattern is searched alone for being one of few on a small text.
    static NO_SHORTCUT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests: every pattern long enough is found by sampling, whatever the text's size and
    /// the patterns' number.
    static FORCE_SAMPLED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
thread_local! {
    /// Tests: the sampled scan's budget (small ones make it stop and the automaton resume).
    static SAMPLED_BUDGET: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    /// Tests: how many groups this thread found by sampling.
    static SAMPLED_SCANS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
thread_local! {
    /// Tests: report by brute force, every occurrence, whatever the callback says.
    static REFERENCE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with every search done by brute force, every occurrence reported even after the
/// callback gave its pattern up: the reference callers' results are compared with.
#[cfg(test)]
pub(crate) fn with_reference<T>(f: impl FnOnce() -> T) -> T {
    REFERENCE.with(|c| c.set(true));
    let out = f();
    REFERENCE.with(|c| c.set(false));
    out
}

#[cfg(test)]
fn reference(hay: &[u8], patterns: &[&[u8]], mut each: impl FnMut(usize, Range<usize>) -> bool) {
    for (i, p) in patterns.iter().enumerate() {
        if p.is_empty() || p.len() > hay.len() {
            continue;
        }
        for at in 0..=hay.len() - p.len() {
            if &hay[at..at + p.len()] == *p {
                each(i, at..at + p.len());
            }
        }
    }
}

/// Reports and output-walk steps made so far by every search (tests assert bounds on them).
#[cfg(test)]
pub(crate) fn steps() -> usize {
    super::ac::STEPS.with(std::cell::Cell::get)
}

/// How many scans of the text [`occurrences`] makes for these patterns: automata, and
/// patterns searched alone (tests).
#[cfg(test)]
pub(crate) fn scans(hay: usize, pats: &[&[u8]]) -> usize {
    let plan = plan(hay, pats);
    runs(pats, &plan.short, plan.group).count()
        + runs(pats, &plan.long, plan.long_group).count()
        + plan.alone.len()
}

/// Runs `f` with every group scanned by our own automaton (tests of its equivalence).
#[cfg(test)]
pub(crate) fn with_own_automaton<T>(f: impl FnOnce() -> T) -> T {
    FORCE_OWN.with(|c| c.set(true));
    let out = with_automata(f);
    FORCE_OWN.with(|c| c.set(false));
    out
}

/// Runs `f` with every pattern of at least [`super::sampled::MIN_LEN`] bytes found by sampling
/// (and none searched alone for being one of few), the sampled scan's budget `budget` when
/// given (tests of the sampling and of its resumption by an automaton).
#[cfg(test)]
pub(crate) fn with_sampling<T>(budget: Option<usize>, f: impl FnOnce() -> T) -> T {
    FORCE_SAMPLED.with(|c| c.set(true));
    SAMPLED_BUDGET.with(|c| c.set(budget));
    let out = with_automata(f);
    FORCE_SAMPLED.with(|c| c.set(false));
    SAMPLED_BUDGET.with(|c| c.set(None));
    out
}

/// Runs `f` with a few patterns on a small text still put in automata, not searched one by
/// one (tests of the automata on small inputs).
#[cfg(test)]
pub(crate) fn with_automata<T>(f: impl FnOnce() -> T) -> T {
    let before = NO_SHORTCUT.with(|c| c.replace(true));
    let out = f();
    NO_SHORTCUT.with(|c| c.set(before));
    out
}

/// A line's key id for [`key_occurrences`]: 28 bits of a hash (what [`encode_key`] carries).
/// Two different lines may share an id; callers verify the windows found. The hash starts from
/// a seed drawn once per process (the standard library's random hasher keys), so that lines
/// crafted to share ids (which would make the relaxed tier check false windows and the Codex
/// locator's line table probe long chains) cannot be written in advance; no result depends on
/// the ids, only the work does.
pub(crate) fn line_key(bytes: impl IntoIterator<Item = u8>) -> u32 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let mut h: u64 = *SEED.get_or_init(|| {
        use std::hash::BuildHasher as _;
        std::collections::hash_map::RandomState::new().hash_one(0x5EED_u64)
    });
    for b in bytes {
        h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
    }
    // MurmurHash3's fmix64, so that the low bits kept depend on every byte.
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    ((h ^ (h >> 33)) & 0x0FFF_FFFF) as u32
}

/// Four bytes per key id; only the first has its high bit set, so matches start at key starts.
pub(crate) fn encode_key(id: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(&[
        0x80 | ((id >> 21) & 0x7F) as u8,
        ((id >> 14) & 0x7F) as u8,
        ((id >> 7) & 0x7F) as u8,
        (id & 0x7F) as u8,
    ]);
}

/// Every occurrence of one pattern, in ascending order, until `each` returns `false` (module
/// docs).
fn long(hay: &[u8], pat: &[u8], mut each: impl FnMut(usize) -> bool) {
    let m = pat.len();
    if m == 0 || m > hay.len() {
        return;
    }
    let finder = memchr::memmem::Finder::new(pat);
    let mut period = None;
    let mut from = 0;
    while from + m <= hay.len() {
        let Some(i) = finder.find(&hay[from..]) else {
            return;
        };
        let mut r = from + i;
        if !each(r) {
            return;
        }
        from = match *period.get_or_insert_with(|| period_of(pat)) {
            Period::Exact(q) => {
                while q < m && r + m + q <= hay.len() && hay[r + m..r + m + q] == pat[m - q..] {
                    r += q;
                    if !each(r) {
                        return;
                    }
                }
                r + q.max(m - q + 1)
            }
            // Two occurrences closer than the period would make their distance a period.
            Period::AtLeast(b) => r + b.min(m),
        };
    }
}

/// What is known of a pattern's smallest period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Period {
    /// It is this.
    Exact(usize),
    /// It is at least this, which is more than half the pattern.
    AtLeast(usize),
}

/// The smallest period of `pat` when it is at most half its length, else a lower bound over
/// half of it, in constant memory (Crochemore and Perrin's critical factorization, as in the
/// Two-Way search): `pat = u v` with `v` the greater of the maximal suffixes under the two
/// orders and `p` the period of `v`; when `u` is a suffix of `v[..p]`, `p` is the period of
/// `pat`, else the period exceeds `max(|u|, |v|)`. A prefix function would take four bytes per
/// pattern byte (32 MB for an 8 MB `oldText`).
fn period_of(pat: &[u8]) -> Period {
    let m = pat.len();
    let (l1, p1) = maximal_suffix(pat, false);
    let (l2, p2) = maximal_suffix(pat, true);
    let (l, p) = if l1 >= l2 { (l1, p1) } else { (l2, p2) };
    if l + p <= m && pat[..l] == pat[p..p + l] {
        Period::Exact(p)
    } else {
        Period::AtLeast(l.max(m - l) + 1)
    }
}

/// The start of the maximal suffix of `x` (under the byte order, or its reverse) and that
/// suffix's period.
fn maximal_suffix(x: &[u8], reversed: bool) -> (usize, usize) {
    // `ms + 1` is the suffix's start (`ms` starts at -1, hence the offset by one).
    let (mut ms, mut j, mut k, mut p) = (0usize, 1usize, 1usize, 1usize);
    let m = x.len();
    while j + k <= m {
        let (a, b) = (x[j + k - 1], x[ms + k - 1]);
        let less = if reversed { a > b } else { a < b };
        if less {
            j += k;
            k = 1;
            p = j - ms;
        } else if a == b {
            if k == p {
                j += p;
                k = 1;
            } else {
                k += 1;
            }
        } else {
            ms = j;
            j = ms + 1;
            k = 1;
            p = 1;
        }
    }
    (ms, p)
}

/// The smallest `q > 0` with `pat[i] == pat[i + q]` for every valid `i` (the length when there
/// is none), from the prefix function: length minus the longest proper border. The reference
/// [`period_of`] is tested against.
#[cfg(test)]
fn smallest_period(pat: &[u8]) -> usize {
    let m = pat.len();
    if m == 0 {
        return 0;
    }
    let mut border = vec![0u32; m];
    let mut k = 0usize;
    for i in 1..m {
        while k > 0 && pat[i] != pat[k] {
            k = border[k - 1] as usize;
        }
        if pat[i] == pat[k] {
            k += 1;
        }
        border[i] = k as u32;
    }
    m - border[m - 1] as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(hay: &[u8], pat: &[u8]) -> Vec<usize> {
        if pat.is_empty() || pat.len() > hay.len() {
            return Vec::new();
        }
        (0..=hay.len() - pat.len())
            .filter(|&i| &hay[i..i + pat.len()] == pat)
            .collect()
    }

    fn all(hay: &[u8], pats: &[&[u8]]) -> Vec<Vec<usize>> {
        capped(hay, pats, usize::MAX)
    }

    /// Each pattern's occurrences until `cap` of them were seen (the callback then gives it up).
    fn capped(hay: &[u8], pats: &[&[u8]], cap: usize) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new(); pats.len()];
        occurrences(hay, pats, |p, r| {
            assert_eq!(&hay[r.clone()], pats[p]);
            assert!(
                out[p].len() < cap,
                "pattern {p} reported after it was given up"
            );
            assert!(out[p].last().is_none_or(|&l| l < r.start), "out of order");
            out[p].push(r.start);
            out[p].len() < cap
        });
        out
    }

    /// [`long`]'s occurrences of one pattern.
    fn long_all(hay: &[u8], pat: &[u8]) -> Vec<usize> {
        let mut out = Vec::new();
        long(hay, pat, |at| {
            out.push(at);
            true
        });
        out
    }

    /// Reports and output-walk steps made by `f`.
    fn steps(f: impl FnOnce()) -> usize {
        let before = super::steps();
        f();
        super::steps() - before
    }

    #[test]
    fn periods() {
        assert_eq!(smallest_period(b"abab"), 2);
        assert_eq!(smallest_period(b"abaab"), 3);
        assert_eq!(smallest_period(b"abc"), 3);
        assert_eq!(smallest_period(b"aaaa"), 1);
    }

    #[test]
    fn long_periodic_pattern_in_periodic_text() {
        // Over a group: searched alone.
        let pat = "ab".repeat(GROUP);
        let hay = "ab".repeat(GROUP * 3);
        let got = all(hay.as_bytes(), &[pat.as_bytes()]);
        assert_eq!(got[0], long_all(hay.as_bytes(), pat.as_bytes()));
        assert_eq!(got[0], (0..=GROUP * 4).step_by(2).collect::<Vec<_>>());
        // A break in the period restarts the search correctly.
        let pat = "ab".repeat(LONG);
        let hay = format!("{}x{}", "ab".repeat(LONG + 3), "ab".repeat(LONG + 1));
        assert_eq!(
            long_all(hay.as_bytes(), pat.as_bytes()),
            naive(hay.as_bytes(), pat.as_bytes())
        );
        assert_eq!(
            all(hay.as_bytes(), &[pat.as_bytes()])[0],
            naive(hay.as_bytes(), pat.as_bytes())
        );
        // Given up after three.
        let hay = "ab".repeat(GROUP * 3);
        let pat = "ab".repeat(GROUP);
        assert_eq!(
            capped(hay.as_bytes(), &[pat.as_bytes()], 3)[0],
            vec![0, 2, 4]
        );
    }

    #[test]
    fn many_distinct_long_patterns_share_automata() {
        // A thousand distinct 4 KiB patterns on a 1 MB text: a few groups, so a few scans,
        // where the search one by one made a thousand.
        let owned: Vec<Vec<u8>> = (0..1_000u32)
            .map(|i| {
                let mut p = format!("{i:08}").into_bytes();
                p.resize(4096, b'x');
                p
            })
            .collect();
        let pats: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        let mut hay = Vec::new();
        for p in pats.iter().step_by(37) {
            hay.extend_from_slice(p);
            hay.push(b'\n');
        }
        hay.resize(1 << 20, b'y');
        let got = all(&hay, &pats);
        for (k, occ) in got.iter().enumerate() {
            let want: Vec<usize> = if k % 37 == 0 {
                vec![(k / 37) * 4097]
            } else {
                vec![]
            };
            assert_eq!(occ, &want, "pattern {k}");
        }
        // At most 32 automata of a thirty-second of text plus patterns (and one for the
        // remainder), none alone.
        let plan = plan(hay.len(), &pats);
        assert!(plan.alone.is_empty());
        assert!(
            scans(hay.len(), &pats) <= 33,
            "{} scans",
            scans(hay.len(), &pats)
        );
    }

    #[test]
    fn saturated_patterns_stop_costing() {
        // "ab" repeated, and 300 patterns "ab" repeated 2..302 times (short) or 1,100.. times
        // (long): 300 × n occurrences in all. Each is wanted 21 times.
        let hay = "ab".repeat(200_000);
        for base in [2usize, 1_100] {
            let owned: Vec<String> = (0..300).map(|i| "ab".repeat(base + i)).collect();
            let pats: Vec<&[u8]> = owned.iter().map(|p| p.as_bytes()).collect();
            let total: usize = pats.iter().map(|p| p.len()).sum();
            let mut got = Vec::new();
            let n = steps(|| got = capped(hay.as_bytes(), &pats, 21));
            for occ in &got {
                assert_eq!(occ, &(0..21).map(|k| 2 * k).collect::<Vec<_>>());
            }
            // One scan's worth of crate reports per group, then 21 per pattern and the walk:
            // far below the 300 × 200,000 the crate alone reports.
            let bound = 3 * scans(hay.len(), &pats) * (hay.len() + total) + 300 * 21;
            assert!(n <= bound, "base {base}: {n} steps over {bound}");
        }
    }

    #[test]
    fn own_automaton_resumes_where_the_crate_stopped() {
        // Short patterns that saturate at once, mixed with wanted ones whose every occurrence
        // must still be reported after the switch.
        let hay = "abc".repeat(100_000);
        let mut owned: Vec<String> = (1..200).map(|i| "abc".repeat(i)).collect();
        owned.push("cab".to_string());
        owned.push("bca".repeat(40));
        let pats: Vec<&[u8]> = owned.iter().map(|p| p.as_bytes()).collect();
        let mut out = vec![Vec::new(); pats.len()];
        let n = steps(|| {
            occurrences(hay.as_bytes(), &pats, |p, r| {
                out[p].push(r.start);
                p >= 199 || out[p].len() < 21
            })
        });
        for (p, o) in out.iter().enumerate().take(199) {
            assert_eq!(o.len(), 21, "pattern {p}");
        }
        assert_eq!(out[199], naive(hay.as_bytes(), pats[199]));
        assert_eq!(out[200], naive(hay.as_bytes(), pats[200]));
        assert!(n < 8 * hay.len(), "{n} steps");
    }

    #[test]
    fn many_patterns_in_groups_find_what_one_automaton_finds() {
        // Over three groups' worth of short patterns, overlapping each other and the text.
        let owned: Vec<String> = (0..12_000).map(|i| format!("k{}-", i % 9_000)).collect();
        let pats: Vec<&[u8]> = owned.iter().map(|p| p.as_bytes()).collect();
        assert!(pats.iter().map(|p| p.len()).sum::<usize>() > 2 * GROUP);
        let hay: String = (0..3_000).map(|i| format!("k{}-k1{i}-", i * 3)).collect();
        let got = all(hay.as_bytes(), &pats);
        // Every reported occurrence is one (`all` checks); none is missed, for a sample.
        for (p, occ) in pats.iter().zip(&got).step_by(97) {
            assert_eq!(occ, &naive(hay.as_bytes(), p));
        }
        assert!(got.iter().filter(|o| !o.is_empty()).count() > 1_000);
    }

    #[test]
    fn a_thousand_indented_lines_are_found_by_sampling() {
        // The write bench's case, on 1 MB: a thousand one-line patterns that all start with
        // the same indentation, each once in the text, and some that occur nowhere.
        let mut hay = String::new();
        let mut i = 0;
        while hay.len() < 1 << 20 {
            hay.push_str(&format!(
                "fn item_{i}(x: u64) -> u64 {{\n    let label = \"value {i}\"; // note {i}\n    x * {i} + 1\n}}\n\n"
            ));
            i += 1;
        }
        let owned: Vec<String> = (0..1_000)
            .map(|k| format!("    x * {} + {}\n", k * (i / 900), 1 + k % 2))
            .collect();
        let pats: Vec<&[u8]> = owned.iter().map(|p| p.as_bytes()).collect();
        let before = SAMPLED_SCANS.with(std::cell::Cell::get);
        let got = all(hay.as_bytes(), &pats);
        assert_eq!(SAMPLED_SCANS.with(std::cell::Cell::get), before + 1);
        for (p, occ) in pats.iter().zip(&got) {
            assert_eq!(occ, &naive(hay.as_bytes(), p));
        }
        assert!(got.iter().filter(|o| o.len() == 1).count() >= 450);
        assert_eq!(with_automata(|| all(hay.as_bytes(), &pats)), got);
        // Stopped early and resumed by the automaton, at several points; and with the text's
        // halves scanned by two threads, the second keeping all it finds or giving up after 100.
        for (two_threads, keep) in [(false, 0), (true, 0), (true, 100)] {
            let from = if two_threads { 0 } else { usize::MAX };
            crate::engine::matcher::sampled::with_parallel(from, keep, || {
                for budget in [None, Some(0), Some(1_000), Some(50_000)] {
                    assert_eq!(with_sampling(budget, || all(hay.as_bytes(), &pats)), got);
                }
            });
        }
    }

    proptest! {
        /// Sampling finds exactly the naive occurrences, each pattern's first `cap` of them in
        /// order, whether it runs to the end or stops after `budget` and the automaton resumes;
        /// periodic patterns in periodic texts put many entries under one word.
        #[test]
        fn sampling_same_as_naive(
            pats in prop::collection::vec(
                (prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'\n']), 1..5),
                 1usize..12,
                 prop::collection::vec(prop::sample::select(vec![b'a', b'b']), 0..4)),
                1..10),
            unit in prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'\n']), 1..5),
            reps in 1usize..120,
            noise in prop::collection::vec((0usize..500, prop::sample::select(vec![b'a', b'b', b'c'])), 0..6),
            cap in prop::sample::select(vec![1usize, 3, usize::MAX]),
            budget in prop::option::of(0usize..200),
            two_threads in any::<bool>(),
            keep in prop::sample::select(vec![0usize, 1, 3]),
        ) {
            let owned: Vec<Vec<u8>> = pats
                .into_iter()
                .map(|(u, r, t)| {
                    let mut p = u.repeat(r);
                    p.extend(t);
                    p
                })
                .collect();
            let mut hay = unit.repeat(reps);
            for (at, c) in noise {
                if !hay.is_empty() {
                    let at = at % hay.len();
                    hay[at] = c;
                }
            }
            // Some patterns taken from the text, so that they occur.
            let mut owned = owned;
            if hay.len() > 40 {
                owned.push(hay[7..7 + 11 + reps % 20].to_vec());
                owned.push(hay[hay.len() - 30..].to_vec());
            }
            let refs: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
            let want: Vec<Vec<usize>> = refs
                .iter()
                .map(|p| naive(&hay, p).into_iter().take(cap).collect())
                .collect();
            let from = if two_threads { 0 } else { usize::MAX };
            let got = crate::engine::matcher::sampled::with_parallel(from, keep, || {
                with_sampling(budget, || capped(&hay, &refs, cap))
            });
            prop_assert_eq!(&got, &want);
        }

        /// The constant-memory period is the smallest one when that is at most half the
        /// pattern, and a true lower bound of it otherwise.
        #[test]
        fn period_of_agrees_with_the_prefix_function(
            unit in prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c']), 1..7),
            reps in 1usize..5,
            tail in prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c']), 0..6),
        ) {
            let mut pat = unit.repeat(reps);
            pat.extend(&tail);
            let q = smallest_period(&pat);
            match period_of(&pat) {
                Period::Exact(p) => prop_assert_eq!(p, q, "{:?}", pat),
                Period::AtLeast(b) => {
                    prop_assert!(2 * q > pat.len(), "{:?}: period {} not found", pat, q);
                    prop_assert!(b.min(pat.len()) <= q, "{:?}: bound {} over {}", pat, b, q);
                }
            }
        }

        /// Every path finds exactly the naive occurrences: the crate's automaton, ours, and
        /// `memmem` with the period (what a pattern over a group takes); repetition blows
        /// periodic patterns up.
        #[test]
        fn same_as_naive(
            unit in prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'\n']), 1..6),
            reps in 1usize..4,
            tail in prop::collection::vec(prop::sample::select(vec![b'a', b'b']), 0..3),
            hay in prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'\n']), 0..60),
            scale in prop::bool::ANY,
        ) {
            let mut pat: Vec<u8> = unit.repeat(reps);
            pat.extend(&tail);
            let (pat, hay) = if scale {
                // Blow both up while keeping their structure.
                let k = LONG / 8 / pat.len() + 1;
                let mut big_hay = Vec::new();
                for _ in 0..3 { big_hay.extend(pat.repeat(k)); big_hay.extend(&hay); }
                (pat.repeat(k), big_hay)
            } else {
                (pat, hay)
            };
            let got = all(&hay, &[&pat, b"ab"]);
            prop_assert_eq!(&got[0], &naive(&hay, &pat));
            prop_assert_eq!(&got[1], &naive(&hay, b"ab"));
            prop_assert_eq!(&long_all(&hay, &pat), &naive(&hay, &pat));
            let own = with_own_automaton(|| all(&hay, &[&pat, b"ab"]));
            prop_assert_eq!(&own, &got);
            prop_assert_eq!(&with_automata(|| all(&hay, &[&pat, b"ab"])), &got);
        }

        /// Many patterns, each given up after `cap` occurrences, through the crate, our own
        /// automaton, or the crate then ours: the first `cap` occurrences of each, in order.
        #[test]
        fn saturation_same_as_naive(
            pats in prop::collection::vec(
                prop::collection::vec(prop::sample::select(vec![b'a', b'b']), 1..7), 1..12),
            unit in prop::collection::vec(prop::sample::select(vec![b'a', b'b']), 1..4),
            reps in 1usize..40,
            noise in prop::collection::vec((0usize..200, prop::sample::select(vec![b'a', b'b', b'c'])), 0..4),
            cap in 1usize..4,
        ) {
            let mut hay = unit.repeat(reps);
            for (at, c) in noise {
                if !hay.is_empty() {
                    let at = at % hay.len();
                    hay[at] = c;
                }
            }
            let refs: Vec<&[u8]> = pats.iter().map(Vec::as_slice).collect();
            let want: Vec<Vec<usize>> = refs
                .iter()
                .map(|p| naive(&hay, p).into_iter().take(cap).collect())
                .collect();
            prop_assert_eq!(&capped(&hay, &refs, cap), &want);
            prop_assert_eq!(&with_own_automaton(|| capped(&hay, &refs, cap)), &want);
            prop_assert_eq!(&with_automata(|| capped(&hay, &refs, cap)), &want);
        }
    }
}
