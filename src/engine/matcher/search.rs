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
        let q = *period.get_or_insert_with(|| smallest_period(pat));
        while q < m && r + m + q <= hay.len() && hay[r + m..r + m + q] == pat[m - q..] {
            r += q;
            each(r);
        }
        from = r + q.max(m - q + 1);
    }
}

/// The smallest `q > 0` with `pat[i] == pat[i + q]` for every valid `i` (the length when there
/// is none), from the prefix function: length minus the longest proper border.
pub(crate) fn smallest_period(pat: &[u8]) -> usize {
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
