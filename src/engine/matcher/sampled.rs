//! Many patterns found by looking at the text only every `k` bytes (a sampled q-gram filter),
//! for the case where an Aho-Corasick scan is at its slowest: a thousand one-line `oldText`s
//! that all start with the same indentation, which no prefilter can skip to, in a big file.
//!
//! Every pattern has at least `Q + k - 1` bytes. An occurrence starting at `s` covers the `k`
//! consecutive positions `s + a .. s + a + k` for any `a` up to `len - Q - k + 1`, and exactly
//! one of them is a multiple of `k`; there the text's `Q` bytes are the pattern's `Q` bytes at
//! offset `j - s`. So each pattern registers the `Q`-byte words ("grams") at the offsets of one
//! window `a .. a + k` of its choosing, and the scan reads one word every `k` bytes: a word no
//! pattern registered is dismissed by a bit test (a hash into a bitmap), and each `(pattern,
//! offset)` registered under a word that is found is checked against the text in full. Each
//! occurrence is thus found exactly once, at the one sampled position in its window, and a
//! pattern's occurrences come in ascending order of start (its entries under one word are kept
//! by descending offset, and the windows of later sampled positions start later).
//!
//! The window of each pattern is chosen where its words are rare: in a sample of the text
//! (16 stretches of 4 KiB), among the words of all the patterns, and among the words other
//! patterns registered before it; a shared indentation is thereby left out of the windows when
//! the patterns are long enough, and so are words the patterns share with many lines of the
//! text, such as the ends of `    x * 1025 + 1` where a thousand patterns end in `25 + 1`
//! (10,000 such lines on 12 MB: 0.33 M candidate checks instead of 1.1 M). That is a
//! heuristic: what the scan costs beyond one read per `k` bytes (bitmap hits, table probes,
//! candidate checks, checks for patterns the caller gave up) is counted, and once it exceeds
//! the budget (the text plus the patterns, what an automaton's scan costs) the scan stops and
//! says where; the caller resumes with an automaton from there (module `search`). So a text or
//! a set of patterns that defeats the sampling costs at most one budget more than the
//! automaton alone.

use std::ops::Range;

/// Bytes of the text read at each sampled position.
pub(super) const Q: usize = 8;
/// The narrowest stride used; patterns shorter than `Q + MIN_STRIDE - 1` are left to automata.
const MIN_STRIDE: usize = 4;
/// The widest stride.
const MAX_STRIDE: usize = 16;
/// The shortest pattern this searches.
pub(super) const MIN_LEN: usize = Q + MIN_STRIDE - 1;
/// Buckets of the popularity counts (the words of the text sample, of the patterns and of the
/// windows chosen): about two per word of the patterns, within these bounds (a few thousand
/// patterns share few words only when their counts are told apart word by word; a few
/// patterns on a small text would spend more on clearing the counts than on the scan).
const POP_BITS: std::ops::RangeInclusive<u32> = 12..=16;
/// Stretches of the text sampled for the popularity of its words, and their length.
const SAMPLES: usize = 16;
const SAMPLE_LEN: usize = 4096;

/// Multiplicative hash of a word (its high bits are used).
fn mix(x: u64) -> u64 {
    x.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The word at `at` (`at + Q` within `b`).
fn word(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..)
        .and_then(|r| r.first_chunk::<Q>())
        .map(|w| u64::from_le_bytes(*w))
}

/// How often each of the `1 << bits` buckets of words occurs in a sample of `hay`.
fn popularity(hay: &[u8], bits: u32) -> Vec<u16> {
    let mut pop = vec![0u16; 1 << bits];
    let mut count = |stretch: &[u8]| {
        for at in 0..(stretch.len() + 1).saturating_sub(Q) {
            if let Some(x) = word(stretch, at) {
                let b = (mix(x) >> (64 - bits)) as usize;
                pop[b] = pop[b].saturating_add(1);
            }
        }
    };
    if hay.len() <= SAMPLES * SAMPLE_LEN {
        count(hay);
    } else {
        let gap = (hay.len() - SAMPLE_LEN) / (SAMPLES - 1);
        for c in 0..SAMPLES {
            count(&hay[c * gap..c * gap + SAMPLE_LEN]);
        }
    }
    pop
}

/// One distinct registered word: its entries are `entries[start..end]` (`end == 0`: a free
/// slot).
#[derive(Clone, Copy)]
struct Slot {
    word: u64,
    start: u32,
    end: u32,
}

/// Where a stopped scan left off, for the automaton that resumes it.
pub(super) struct Stopped {
    /// Every occurrence not reported yet starts at or after `resume`.
    pub resume: usize,
    /// The patterns the caller gave up.
    pub done: Vec<bool>,
    /// The start of each pattern's last reported occurrence: every earlier one was reported.
    pub last: Vec<Option<usize>>,
}

/// Reports every occurrence of `pats` (each at least [`MIN_LEN`] bytes) in `hay` to `each`
/// until it returns `false` for that pattern (as `search::occurrences` does), or stops once
/// the work beyond the sampled reads exceeds `budget` and says where (module docs).
pub(super) fn scan(
    hay: &[u8],
    pats: &[&[u8]],
    budget: usize,
    each: &mut impl FnMut(usize, Range<usize>) -> bool,
) -> Result<(), Stopped> {
    let n = pats.len();
    let shortest = pats.iter().map(|p| p.len()).min().unwrap_or(0);
    if n == 0 || shortest < MIN_LEN || n >= u32::MAX as usize {
        // Not for this module (the caller checks); nothing reported yet.
        return Err(Stopped {
            resume: 0,
            done: vec![false; n],
            last: vec![None; n],
        });
    }
    let k = (shortest - Q + 1).min(MAX_STRIDE);
    let entries = windows(hay, pats, k);
    // The distinct words: a table at most half full, and a bitmap of 32 bits per word.
    let mut distinct = 0usize;
    for (i, &e) in entries.iter().enumerate() {
        if i == 0 || word_of(entries[i - 1]) != word_of(e) {
            distinct += 1;
        }
    }
    let table_bits = (2 * distinct).next_power_of_two().trailing_zeros().max(4);
    let map_bits = (32 * distinct)
        .next_power_of_two()
        .trailing_zeros()
        .clamp(12, 22);
    let mask = (1usize << table_bits) - 1;
    let mut table = vec![
        Slot {
            word: 0,
            start: 0,
            end: 0
        };
        1 << table_bits
    ];
    let mut bitmap = vec![0u64; 1 << (map_bits - 6)];
    let mut i = 0;
    while i < entries.len() {
        let x = word_of(entries[i]);
        let mut j = i + 1;
        while j < entries.len() && word_of(entries[j]) == x {
            j += 1;
        }
        let h = mix(x);
        let b = (h >> (64 - map_bits)) as usize;
        bitmap[b >> 6] |= 1 << (b & 63);
        let mut t = (h >> (64 - table_bits)) as usize;
        while table[t].end != 0 {
            t = (t + 1) & mask;
        }
        // Entry indices fit: there are at most 16 per pattern, and patterns fit a u32.
        table[t] = Slot {
            word: x,
            start: i as u32,
            end: j as u32,
        };
        i = j;
    }
    let mut done = vec![false; n];
    let mut last: Vec<Option<usize>> = vec![None; n];
    let mut live = n;
    let mut work = 0usize;
    let mut at = 0usize;
    while let Some(x) = word(hay, at) {
        let h = mix(x);
        let b = (h >> (64 - map_bits)) as usize;
        if bitmap[b >> 6] >> (b & 63) & 1 != 0 {
            let mut t = (h >> (64 - table_bits)) as usize;
            loop {
                work += 1;
                let slot = table[t];
                if slot.end == 0 {
                    break;
                }
                if slot.word == x {
                    for &e in &entries[slot.start as usize..slot.end as usize] {
                        let (p, off) = pattern_of(e);
                        work += 1;
                        if done[p] {
                            continue;
                        }
                        let pat = pats[p];
                        work += pat.len() / 16;
                        let Some(s) = at.checked_sub(off) else {
                            continue;
                        };
                        // The first word first (most candidates differ there), then the rest.
                        if word(hay, s) != word(pat, 0) || hay.get(s..s + pat.len()) != Some(pat) {
                            continue;
                        }
                        last[p] = Some(s);
                        if !each(p, s..s + pat.len()) {
                            done[p] = true;
                            live -= 1;
                            if live == 0 {
                                return Ok(());
                            }
                        }
                    }
                    break;
                }
                t = (t + 1) & mask;
            }
            if work > budget {
                // Every occurrence found at a sampled position up to `at` was reported; one
                // found later starts after `at + k - (len - Q + 1)`, so after
                // `at + k - longest`.
                let longest = pats.iter().map(|p| p.len()).max().unwrap_or(0);
                return Err(Stopped {
                    resume: (at + k).saturating_sub(longest),
                    done,
                    last,
                });
            }
        }
        at += k;
    }
    Ok(())
}

/// An entry of [`windows`]: a word, the pattern registering it and its offset there, as one
/// number (word, pattern, then the offset's complement), so that sorting the numbers sorts
/// them by word, then pattern, then descending offset.
fn entry(word: u64, pattern: u32, offset: u32) -> u128 {
    u128::from(word) << 64 | u128::from(pattern) << 32 | u128::from(!offset)
}

fn word_of(e: u128) -> u64 {
    (e >> 64) as u64
}

/// The pattern and offset of an entry.
fn pattern_of(e: u128) -> (usize, usize) {
    ((e >> 32) as u32 as usize, !(e as u32) as usize)
}

/// Each pattern's window of `k` words where they are rarest (module docs), as [`entry`]s
/// sorted (by word, then pattern, then descending offset).
fn windows(hay: &[u8], pats: &[&[u8]], k: usize) -> Vec<u128> {
    let words: usize = pats.iter().map(|p| p.len() + 1 - Q).sum();
    let bits = (2 * words)
        .next_power_of_two()
        .trailing_zeros()
        .clamp(*POP_BITS.start(), *POP_BITS.end());
    let pop = popularity(hay, bits);
    let bucket = |x: u64| (mix(x) >> (64 - bits)) as usize;
    // How many patterns hold each bucket's words (a word many patterns share is a word many
    // lines of the text hold, and one registered under it is checked at each of them), and
    // then how many windows chose them too (so later patterns avoid them where they can). A
    // word a pattern holds twice (a deep indentation) counts twice: a small bias that saves
    // sorting each pattern's words.
    let mut shared = vec![0u16; 1 << bits];
    for pat in pats {
        for x in (0..pat.len() + 1 - Q).filter_map(|o| word(pat, o)) {
            let b = bucket(x);
            shared[b] = shared[b].saturating_add(1);
        }
    }
    let mut entries: Vec<u128> = Vec::with_capacity(pats.len() * k);
    let mut cost: Vec<u64> = Vec::new();
    for (p, pat) in pats.iter().enumerate() {
        let words = pat.len() + 1 - Q;
        cost.clear();
        cost.extend((0..words).map(|o| {
            let b = word(pat, o).map_or(0, bucket);
            16 * u64::from(pop[b]) + u64::from(shared[b])
        }));
        // The window `a .. a + k` of least total cost (the first such).
        let mut sum: u64 = cost[..k].iter().sum();
        let (mut best, mut best_at) = (sum, 0);
        for a in 1..=words - k {
            sum = sum + cost[a + k - 1] - cost[a - 1];
            if sum < best {
                (best, best_at) = (sum, a);
            }
        }
        for o in best_at..best_at + k {
            if let Some(x) = word(pat, o) {
                let b = bucket(x);
                shared[b] = shared[b].saturating_add(1);
                // Offsets fit: patterns here are at most `search::LONG` bytes.
                entries.push(entry(x, p as u32, o as u32));
            }
        }
    }
    entries.sort_unstable();
    entries
}
