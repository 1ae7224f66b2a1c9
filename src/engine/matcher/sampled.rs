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
//! offset)` registered under a word that is found is checked against the text: the pattern's
//! first and last words, kept beside the entry, then the whole pattern. Each occurrence is thus
//! found exactly once, at the one sampled position in its window, and a pattern's occurrences
//! come in ascending order of start (its entries under one word are kept by descending offset,
//! and the windows of later sampled positions start later).
//!
//! The entries are grouped by a hash of their word (a bucket index over their indices in bucket
//! order, not a probed table), and the text is read in blocks of sampled positions, in stages
//! (the bitmap, then the buckets' bounds, then their first entries, then the candidates), so
//! that the cache misses of one block's hits overlap instead of following each other: on 12 MB
//! with 10,000 one-line patterns, 1.7 M sampled positions of which 132,000 hit the bitmap,
//! the scan took 7.8 ms instead of 9.3 (median of 60 runs in one process, each alternating with
//! the former table).
//!
//! A text of a megabyte or more is read by two threads: the first reports as it goes, the
//! second, from the middle sampled position on, collects its finds, which are reported once the
//! first half is. Each occurrence is found at exactly one sampled position, so the halves find
//! disjoint sets, and reporting the second's finds after the first's, in their order, is the
//! order one thread reports them in.
//!
//! The window of each pattern is chosen where its words are rare: in a sample of the text
//! (16 stretches of 4 KiB), among the words of all the patterns, and among the words other
//! patterns registered before it; a shared indentation is thereby left out of the windows when
//! the patterns are long enough, and so are words the patterns share with many lines of the
//! text, such as the ends of `    x * 1025 + 1` where a thousand patterns end in `25 + 1`
//! (10,000 such lines on 12 MB: 0.33 M candidate checks instead of 1.1 M). That is a
//! heuristic: what the scan costs beyond one read per `k` bytes (bitmap hits, the entries of
//! their buckets, whole-pattern checks) is counted, and once it exceeds the budget (the text
//! plus the patterns, what an automaton's scan costs) the scan stops and says where; the
//! caller resumes with an automaton from there (module `search`). So a text or a set of
//! patterns that defeats the sampling costs at most one budget more than the automaton alone.

use std::ops::Range;

/// Sampled positions read at a time (module `scan`'s stages).
const BLOCK: usize = 256;
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

/// The word at `at`, which must be followed by `Q - 1` bytes of `b`.
fn word_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; Q];
    w.copy_from_slice(&b[at..at + Q]);
    u64::from_le_bytes(w)
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

/// One registered word: the word, the pattern registering it and its offset there, and the
/// pattern's first and last words, compared with the text before the pattern itself (a
/// candidate shares the registered word with the pattern; it most often differs at an end, and
/// comparing these here saves reading the pattern, elsewhere in memory, for each candidate).
#[derive(Clone, Copy)]
struct Entry {
    word: u64,
    first: u64,
    last: u64,
    pattern: u32,
    offset: u32,
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
    // A bitmap of about 24 bits per entry dismisses most words no pattern registered; the
    // others are looked up among the entries of their bucket (`index`).
    let map_bits = (24 * entries.len())
        .next_power_of_two()
        .trailing_zeros()
        .clamp(12, 22);
    let index_bits = entries.len().next_power_of_two().trailing_zeros().max(5) - 1;
    let mut bitmap = vec![0u64; 1 << (map_bits - 6)];
    for e in &entries {
        let b = (mix(e.word) >> (64 - map_bits)) as usize;
        bitmap[b >> 6] |= 1 << (b & 63);
    }
    let (index, order) = by_bucket(&entries, index_bits);
    let table = Table {
        hay,
        pats,
        entries: &entries,
        order: &order,
        index: &index,
        bitmap: &bitmap,
        map_bits,
        index_bits,
        k,
    };
    let mut to = Reporter {
        pats,
        each,
        done: vec![false; n],
        last: vec![None; n],
        live: n,
    };
    let mut work = 0usize;
    let ends = (hay.len() + 1).saturating_sub(Q);
    // A big text's second half is scanned on a second thread, which collects what it finds;
    // once the first half is reported, its finds are reported in their order, which is the
    // order one thread would have reported them in (module docs).
    let split = (ends / 2).div_ceil(k) * k;
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let (from, keep) = parallel();
    let keep = keep_for(hay.len(), keep);
    let flow = if hay.len() < from || split >= ends {
        table.blocks(0, ends, &mut work, budget, &mut to, None)
    } else {
        // Background work waits while both halves are scanned (see `busy`).
        let _busy = crate::busy::Busy::hold();
        std::thread::scope(|s| {
            let second = std::thread::Builder::new()
                .spawn_scoped(s, || {
                    let mut found = Collector {
                        finds: Vec::new(),
                        keep,
                    };
                    let mut work = 0;
                    let flow =
                        table.blocks(split, ends, &mut work, budget, &mut found, Some(&cancel));
                    (flow, found.finds)
                })
                .ok();
            let Some(second) = second else {
                return table.blocks(0, ends, &mut work, budget, &mut to, None);
            };
            let first = table.blocks(0, split, &mut work, budget, &mut to, None);
            if first != Flow::Finished {
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
                let _ = second.join();
                return first;
            }
            match second.join() {
                Ok((Flow::Finished, found)) => {
                    for (p, s) in found {
                        if !to.skip(p as usize) && !to.found(p as usize, s) {
                            return Flow::AllDone;
                        }
                    }
                    Flow::Finished
                }
                // Over its budget or its room (or it panicked): the second half is scanned
                // here after all, and stops where one thread would.
                _ => table.blocks(split, ends, &mut work, budget, &mut to, None),
            }
        })
    };
    match flow {
        Flow::Finished | Flow::AllDone | Flow::Cancelled => Ok(()),
        Flow::OverBudget { at } => {
            // Every occurrence found at a sampled position up to `at` was reported; one found
            // later starts after `at + k - (len - Q + 1)`, so after `at + k - longest`.
            let longest = pats.iter().map(|p| p.len()).max().unwrap_or(0);
            Err(Stopped {
                resume: (at + k).saturating_sub(longest),
                done: to.done,
                last: to.last,
            })
        }
    }
}

/// Texts from this many bytes are scanned by two threads (see [`scan`]).
const PARALLEL_FROM: usize = 1 << 20;

/// The second thread keeps at most one find per this many bytes of the text (16 bytes each, so
/// an eighth of the text), and at least [`KEEP_MIN`]: a pattern one thread gives up after a few
/// occurrences (one that is not unique) is still collected there, and a repetitive text can
/// hold millions. Past that, the second half is scanned again by the first thread.
const KEEP_PER: usize = 128;
const KEEP_MIN: usize = 4096;

#[cfg(test)]
thread_local! {
    /// Tests: the size from which texts are scanned by two threads, and the finds kept.
    static PARALLEL_TEST: std::cell::Cell<Option<(usize, usize)>> = const { std::cell::Cell::new(None) };
}

/// From what size a text is scanned by two threads, and how many finds the second keeps.
fn parallel() -> (usize, usize) {
    #[cfg(test)]
    if let Some(p) = PARALLEL_TEST.with(std::cell::Cell::get) {
        return p;
    }
    (PARALLEL_FROM, 0)
}

/// How many finds the second thread keeps for a text of `len` bytes (`keep` from [`parallel`],
/// when not 0, in tests).
fn keep_for(len: usize, keep: usize) -> usize {
    if keep > 0 {
        return keep;
    }
    (len / KEEP_PER).max(KEEP_MIN)
}

/// Tests: runs `f` with texts from `bytes` bytes up scanned by two threads, the second keeping
/// at most `keep` finds (0: as without the test).
#[cfg(test)]
pub(super) fn with_parallel<T>(bytes: usize, keep: usize, f: impl FnOnce() -> T) -> T {
    let before = PARALLEL_TEST.with(|c| c.replace(Some((bytes, keep))));
    let out = f();
    PARALLEL_TEST.with(|c| c.set(before));
    out
}

/// How a run of [`Table::blocks`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    /// Every sampled position of its range was read.
    Finished,
    /// The sink wants nothing more (every pattern given up, or the collector full).
    AllDone,
    /// The work went past the budget after the sampled position `at`.
    OverBudget { at: usize },
    /// Another thread said to stop.
    Cancelled,
}

/// Where the occurrences a scan finds go.
trait Sink {
    /// Whether pattern `p` was given up (its candidates are not checked).
    fn skip(&self, p: usize) -> bool;
    /// Pattern `p` occurs at `s`; `false` when every pattern is given up.
    fn found(&mut self, p: usize, s: usize) -> bool;
}

/// Reports each occurrence to the caller's callback as it is found.
struct Reporter<'a, F> {
    pats: &'a [&'a [u8]],
    each: &'a mut F,
    done: Vec<bool>,
    last: Vec<Option<usize>>,
    live: usize,
}

impl<F: FnMut(usize, Range<usize>) -> bool> Sink for Reporter<'_, F> {
    fn skip(&self, p: usize) -> bool {
        self.done[p]
    }

    fn found(&mut self, p: usize, s: usize) -> bool {
        self.last[p] = Some(s);
        if !(self.each)(p, s..s + self.pats[p].len()) {
            self.done[p] = true;
            self.live -= 1;
        }
        self.live > 0
    }
}

/// Keeps each occurrence (pattern, start), in the order found, up to `keep` of them (past it,
/// it gives up: see [`KEEP_PER`]).
struct Collector {
    finds: Vec<(u32, usize)>,
    keep: usize,
}

impl Sink for Collector {
    fn skip(&self, _: usize) -> bool {
        false
    }

    fn found(&mut self, p: usize, s: usize) -> bool {
        if self.finds.len() >= self.keep {
            return false;
        }
        // `p` fits: there are fewer than `u32::MAX` patterns (checked in `scan`).
        self.finds.push((p as u32, s));
        true
    }
}

/// What a scan looks words up in, made once for both halves.
struct Table<'a> {
    hay: &'a [u8],
    pats: &'a [&'a [u8]],
    entries: &'a [Entry],
    order: &'a [u32],
    index: &'a [u32],
    bitmap: &'a [u64],
    map_bits: u32,
    index_bits: u32,
    k: usize,
}

impl Table<'_> {
    /// Reads the sampled positions from `from` (a multiple of `k`) up to `ends`, giving what
    /// it finds to `to`, adding to `work` (module docs) and stopping once it exceeds `budget`.
    fn blocks(
        &self,
        from: usize,
        ends: usize,
        work: &mut usize,
        budget: usize,
        to: &mut impl Sink,
        cancel: Option<&std::sync::atomic::AtomicBool>,
    ) -> Flow {
        let Table {
            hay,
            pats,
            entries,
            order,
            index,
            bitmap,
            map_bits,
            index_bits,
            k,
        } = *self;
        // The text is read in blocks of `BLOCK` sampled positions, in stages: the positions
        // whose word is in the bitmap, then their buckets' bounds, then their buckets' first
        // entries (loads that do not depend on each other, so the processor overlaps their
        // cache misses), then the candidates, in order.
        let mut hits = [0usize; BLOCK];
        let mut spans = [(0u32, 0u32); BLOCK];
        let mut from = from;
        while from < ends {
            if cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
                return Flow::Cancelled;
            }
            let to_at = (from + BLOCK * k).min(ends);
            let mut found = 0;
            for at in (from..to_at).step_by(k) {
                let b = (mix(word_at(hay, at)) >> (64 - map_bits)) as usize;
                hits[found] = at;
                found += (bitmap[b >> 6] >> (b & 63) & 1) as usize;
            }
            from = to_at.div_ceil(k) * k;
            for (&at, span) in hits[..found].iter().zip(&mut spans) {
                let t = (mix(word_at(hay, at)) >> (64 - index_bits)) as usize;
                *span = (index[t], index[t + 1]);
            }
            let mut touched = 0u64;
            for &(start, end) in &spans[..found] {
                if start < end {
                    touched ^= entries[order[start as usize] as usize].word;
                }
            }
            std::hint::black_box(touched);
            for (&at, &(start, end)) in hits[..found].iter().zip(&spans) {
                let x = word_at(hay, at);
                let bucket = &order[start as usize..end as usize];
                *work += 1 + bucket.len();
                for e in bucket.iter().map(|&i| &entries[i as usize]) {
                    if e.word != x {
                        continue;
                    }
                    let (p, off) = (e.pattern as usize, e.offset as usize);
                    let Some(s) = at.checked_sub(off) else {
                        continue;
                    };
                    let pat = pats[p];
                    if word(hay, s) != Some(e.first)
                        || word(hay, s + pat.len() - Q) != Some(e.last)
                        || to.skip(p)
                    {
                        continue;
                    }
                    *work += pat.len() / 16;
                    if hay.get(s..s + pat.len()) != Some(pat) {
                        continue;
                    }
                    if !to.found(p, s) {
                        return Flow::AllDone;
                    }
                }
                if *work > budget {
                    return Flow::OverBudget { at };
                }
            }
        }
        Flow::Finished
    }
}

/// The entries' indices ordered by the bucket of their word (the high `bits` bits of its
/// hash), and where each bucket starts there (`1 << bits` starts and the end). Within a bucket
/// they keep the order [`windows`] made the entries in (pattern, then descending offset).
///
/// A counting sort of 4-byte indices, which stay in cache: moving the entries themselves (40
/// bytes each), in place by swaps, made each cache miss wait for the one before (3–13 ms in a
/// fresh process for 10,000 one-line patterns, ~55,000 entries), and into a copy faulted in
/// 2.2 MB more.
fn by_bucket(entries: &[Entry], bits: u32) -> (Vec<u32>, Vec<u32>) {
    let bucket = |e: &Entry| (mix(e.word) >> (64 - bits)) as usize;
    let mut index = vec![0u32; (1 << bits) + 1];
    for e in entries {
        index[bucket(e) + 1] += 1;
    }
    for t in 1..index.len() {
        index[t] += index[t - 1];
    }
    let mut next = index.clone();
    let mut order = vec![0u32; entries.len()];
    for (i, e) in (0u32..).zip(entries) {
        let t = &mut next[bucket(e)];
        order[*t as usize] = i;
        *t += 1;
    }
    (index, order)
}

/// Each pattern's window of `k` words where they are rarest (module docs), as entries in
/// order of pattern, then descending offset (so that, at one sampled position, a pattern's
/// candidates come by ascending start).
fn windows(hay: &[u8], pats: &[&[u8]], k: usize) -> Vec<Entry> {
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
    let mut entries: Vec<Entry> = Vec::with_capacity(pats.len() * k);
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
        let (first, last) = (word(pat, 0), word(pat, pat.len() - Q));
        for o in (best_at..best_at + k).rev() {
            if let (Some(x), Some(first), Some(last)) = (word(pat, o), first, last) {
                let b = bucket(x);
                shared[b] = shared[b].saturating_add(1);
                // Both fit: patterns here are at most `search::LONG` bytes, and fewer than
                // `u32::MAX` (the caller checks).
                entries.push(Entry {
                    word: x,
                    first,
                    last,
                    pattern: p as u32,
                    offset: o as u32,
                });
            }
        }
    }
    entries
}
