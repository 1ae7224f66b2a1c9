//! Every occurrence of many patterns in one text, overlapping ones included, in time linear in
//! the text plus the patterns and in memory linear in the patterns, whatever their shape.
//!
//! Short patterns share an Aho-Corasick automaton (one scan of the text for all of them). A DFA
//! is used only while its table stays small; above that the contiguous NFA, whose size is a small
//! multiple of the patterns, though building it takes about 30 bytes per pattern byte. So many
//! short patterns (10,000 one-line edits) are split into groups of at most [`GROUP`] bytes, or a
//! sixteenth of text plus patterns when that is more, one automaton and one scan per group:
//! memory stays about twice text plus patterns, and the text is scanned at most 16 times beyond
//! the first groups of [`GROUP`] bytes, so the time stays linear. A long pattern (over [`LONG`] bytes) would make any automaton tens of
//! times its own size, so each is searched on its own with `memmem` (constant extra memory,
//! worst case linear) and its overlapping occurrences are followed with the pattern's smallest
//! period: after an occurrence at `r`, the next one is at `r + period` exactly when the `period`
//! bytes after the occurrence continue it, and otherwise no occurrence starts before
//! `r + max(period, len - period + 1)` (two overlapping occurrences closer than that would make
//! `r + period` one too). So a periodic pattern in a periodic text costs `period` per occurrence,
//! not its length.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use std::ops::Range;

/// Patterns longer than this are searched one by one.
pub(crate) const LONG: usize = 2048;
/// Total pattern bytes up to which the automaton may be a DFA (its table is about
/// states × byte classes × 4 bytes).
const DFA_BUDGET: usize = 16 * 1024;
/// Pattern bytes of one automaton, at least (module docs).
const GROUP: usize = 32 * 1024;

/// Calls `each(pattern, range)` for every occurrence of every pattern in `hay`, overlapping
/// occurrences included. Per pattern, occurrences come in ascending order of start only for long
/// patterns; callers that need an order sort. Empty patterns never match.
pub(crate) fn occurrences(hay: &[u8], patterns: &[&[u8]], each: impl FnMut(usize, Range<usize>)) {
    scan(hay, patterns, false, each)
}

/// [`occurrences`] for patterns over a large alphabet (the relaxed tier's key ids, whose bytes
/// take most of the 256 values): the automaton keeps every state sparse, since a dense state
/// costs a word per byte class, and a few thousand of them would take megabytes.
pub(crate) fn key_occurrences(
    hay: &[u8],
    patterns: &[&[u8]],
    each: impl FnMut(usize, Range<usize>),
) {
    scan(hay, patterns, true, each)
}

fn scan(hay: &[u8], patterns: &[&[u8]], sparse: bool, mut each: impl FnMut(usize, Range<usize>)) {
    let short: Vec<usize> = (0..patterns.len())
        .filter(|&i| !patterns[i].is_empty() && patterns[i].len() <= LONG)
        .collect();
    let total: usize = short.iter().map(|&i| patterns[i].len()).sum();
    let group = GROUP.max((hay.len() + total) / 16);
    let mut rest = &short[..];
    while !rest.is_empty() {
        // The longest run of patterns within the group's bytes (at least one).
        let mut bytes = 0;
        let n = rest
            .iter()
            .position(|&i| {
                bytes += patterns[i].len();
                bytes > group
            })
            .unwrap_or(rest.len())
            .max(1);
        let (these, next) = rest.split_at(n);
        automaton(hay, patterns, these, sparse, &mut each);
        rest = next;
    }
    for (i, p) in patterns.iter().enumerate() {
        if p.len() > LONG {
            long(hay, p, |at| each(i, at..at + p.len()));
        }
    }
}

/// One automaton for the patterns `short` (indices into `patterns`), and one scan of `hay`.
fn automaton(
    hay: &[u8],
    patterns: &[&[u8]],
    short: &[usize],
    sparse: bool,
    each: &mut impl FnMut(usize, Range<usize>),
) {
    let total: usize = short.iter().map(|&i| patterns[i].len()).sum();
    let kind = if total <= DFA_BUDGET && !sparse {
        AhoCorasickKind::DFA
    } else {
        AhoCorasickKind::ContiguousNFA
    };
    let dense_depth = if sparse { 0 } else { 3 };
    // Invariant: building only fails when the automaton would exceed its state id space,
    // which patterns of at most `LONG` bytes each within a request's size limit cannot
    // reach; fall back to the noncontiguous NFA, and to nothing found if even that fails.
    let ac = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .kind(Some(kind))
        .dense_depth(dense_depth)
        .build(short.iter().map(|&i| patterns[i]))
        .or_else(|_| {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .kind(Some(AhoCorasickKind::NoncontiguousNFA))
                .dense_depth(dense_depth)
                .build(short.iter().map(|&i| patterns[i]))
        });
    if let Ok(ac) = ac {
        for m in ac.find_overlapping_iter(hay) {
            each(short[m.pattern().as_usize()], m.start()..m.end());
        }
    }
}

/// A line's key id for [`key_occurrences`]: 28 bits of a hash (what [`encode_key`] carries).
/// Two different lines may share an id; callers verify the windows found.
pub(crate) fn line_key(bytes: impl IntoIterator<Item = u8>) -> u32 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = 0;
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

/// Every occurrence of one pattern, in ascending order (module docs).
fn long(hay: &[u8], pat: &[u8], mut each: impl FnMut(usize)) {
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
        each(r);
        from = match *period.get_or_insert_with(|| period_of(pat)) {
            Period::Exact(q) => {
                while q < m && r + m + q <= hay.len() && hay[r + m..r + m + q] == pat[m - q..] {
                    r += q;
                    each(r);
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
        let mut out = vec![Vec::new(); pats.len()];
        occurrences(hay, pats, |p, r| {
            assert_eq!(&hay[r.clone()], pats[p]);
            out[p].push(r.start)
        });
        for o in &mut out {
            o.sort_unstable();
        }
        out
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
        let pat = "ab".repeat(LONG);
        let hay = "ab".repeat(LONG * 3);
        let got = all(hay.as_bytes(), &[pat.as_bytes()]);
        assert_eq!(got[0], naive(hay.as_bytes(), pat.as_bytes()));
        assert_eq!(got[0].len(), LONG * 2 + 1);
        // A break in the period restarts the search correctly.
        let hay = format!("{}x{}", "ab".repeat(LONG + 3), "ab".repeat(LONG + 1));
        let got = all(hay.as_bytes(), &[pat.as_bytes()]);
        assert_eq!(got[0], naive(hay.as_bytes(), pat.as_bytes()));
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

    proptest! {
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

        /// Both paths find exactly the naive occurrences; long patterns are forced by repetition.
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
                // Blow both up past LONG while keeping their structure.
                let k = LONG / pat.len() + 1;
                let mut big_hay = Vec::new();
                for _ in 0..3 { big_hay.extend(pat.repeat(k)); big_hay.extend(&hay); }
                (pat.repeat(k), big_hay)
            } else {
                (pat, hay)
            };
            let got = all(&hay, &[&pat, b"ab"]);
            prop_assert_eq!(&got[0], &naive(&hay, &pat));
            prop_assert_eq!(&got[1], &naive(&hay, b"ab"));
        }
    }
}
