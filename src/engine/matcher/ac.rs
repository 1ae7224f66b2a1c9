//! An Aho-Corasick automaton of our own, for the one thing the `aho-corasick` crate cannot do:
//! stop paying for a pattern once the caller has seen enough of its occurrences.
//!
//! [`super::search`] scans with the crate first (it is faster, with its prefilters); when too
//! many of its reports are for patterns the caller no longer wants (a short `oldText` in a highly
//! repetitive file reports at every period, and ten thousand of them would report ten thousand
//! times per period), the scan resumes here. Here a pattern the caller gives up on is taken out
//! of the automaton's output lists, and the dictionary-suffix links that led to it are
//! shortcut past it, so a saturated pattern costs nothing more.
//!
//! Layout (20 bytes per state, a state per distinct pattern prefix, so at most one per pattern
//! byte): states are numbered in breadth-first order with every state's children consecutive
//! and sorted by byte, so a state's children are the ids `first_child[s] .. first_child[s + 1]`
//! and only the byte into each state is stored; `fail` is the failure link, `dict` the
//! dictionary-suffix link (the nearest state on the failure chain that still ends a wanted
//! pattern), `head` the first pattern ending at the state (a list through `next`). The fields
//! of a state sit together: a step of the scan reads the state it leaves and the children it
//! looks among, which are the state it goes to.
//!
//! Cost of a scan of `n` bytes from an automaton of `m` states: the failure-link walk is the
//! classic amortized `O(n)` (the depth grows by one per byte and every failure link lowers it);
//! child lookups are at most a binary search over 256. At each position the output walk follows
//! `dict` links: every step either reports a wanted pattern (the caller bounds those) or skips a
//! state whose patterns were all given up, and skipping it redirects the link it came through
//! past it (path splitting). A state is given up once for good, so this is a union-find over the
//! failure tree with path compression: `O(n + m)` walk starts plus `O(n log_{2+n/m} m)` skips in
//! the worst case (Tarjan and van Leeuwen), at most a few per byte for the group sizes of
//! [`super::search`] (`m` is at most a sixteenth of text plus patterns beyond the first groups).

use std::ops::Range;

const NONE: u32 = u32::MAX;

#[cfg(test)]
thread_local! {
    /// How many raw reports and output-walk steps this thread's scans made (tests assert
    /// bounds on them).
    pub(crate) static STEPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts one report or walk step (tests).
#[inline]
pub(crate) fn step() {
    #[cfg(test)]
    STEPS.with(|c| c.set(c.get() + 1));
}

/// One state; together, so that a step of the scan touches one cache line or two.
#[derive(Clone, Copy)]
struct State {
    first_child: u32,
    fail: u32,
    dict: u32,
    head: u32,
    byte: u8,
}

/// The automaton over some patterns (numbered `0..n` here; callers map them).
pub(crate) struct Ac {
    /// By id, and one more whose `first_child` ends the last state's children.
    st: Vec<State>,
    next: Vec<u32>,
    /// Patterns not given up yet: none left ends the scan.
    live: usize,
    len: Vec<u32>,
    root: [u32; 256],
    max_len: usize,
}

impl Ac {
    /// Builds the automaton of `patterns` (each non-empty); `None` when it would not fit 32-bit
    /// state ids.
    pub(crate) fn new(patterns: &[&[u8]]) -> Option<Ac> {
        let n = patterns.len();
        let total: usize = patterns.iter().map(|p| p.len()).sum();
        if total >= NONE as usize - 1 || n >= NONE as usize {
            return None;
        }
        let blank = State {
            first_child: 0,
            fail: 0,
            dict: NONE,
            head: NONE,
            byte: 0,
        };
        let mut ac = Ac {
            st: vec![blank],
            next: vec![NONE; n],
            live: n,
            len: patterns.iter().map(|p| p.len() as u32).collect(),
            root: [0; 256],
            max_len: patterns.iter().map(|p| p.len()).max().unwrap_or(0),
        };
        // Breadth-first, one level (depth) at a time: each state of the level holds the range
        // of `perm` of the patterns through it; those ending there are listed at it, the others
        // are ordered by their next byte and each run of one byte makes a child.
        let mut perm: Vec<u32> = (0..n as u32).collect();
        let mut level: Vec<(u32, usize, usize)> = vec![(0, 0, n)];
        let mut next_level: Vec<(u32, usize, usize)> = Vec::new();
        let mut depth = 0usize;
        while !level.is_empty() {
            for &(s, a, b) in &level {
                ac.st[s as usize].first_child = ac.st.len() as u32;
                let range = &mut perm[a..b];
                let key = |k: &u32| {
                    let p = patterns[*k as usize];
                    p.get(depth).map_or(0u16, |&c| u16::from(c) + 1)
                };
                if range.windows(2).any(|w| key(&w[0]) != key(&w[1])) {
                    range.sort_unstable_by_key(key);
                }
                let mut i = a;
                while i < b && patterns[perm[i] as usize].len() == depth {
                    let k = perm[i] as usize;
                    ac.next[k] = ac.st[s as usize].head;
                    ac.st[s as usize].head = k as u32;
                    i += 1;
                }
                while i < b {
                    let c = patterns[perm[i] as usize][depth];
                    let mut j = i + 1;
                    while j < b && patterns[perm[j] as usize][depth] == c {
                        j += 1;
                    }
                    let child = ac.st.len() as u32;
                    ac.st.push(State { byte: c, ..blank });
                    next_level.push((child, i, j));
                    i = j;
                }
            }
            std::mem::swap(&mut level, &mut next_level);
            next_level.clear();
            depth += 1;
        }
        drop(perm);
        let states = ac.st.len();
        ac.st.push(State {
            first_child: states as u32,
            ..blank
        });
        ac.st.shrink_to_fit();
        for c in ac.st[0].first_child as usize..ac.st[1].first_child as usize {
            ac.root[ac.st[c].byte as usize] = c as u32;
        }
        // Failure and dictionary links in breadth-first order (a state's links point to
        // shallower states, already done).
        for s in 0..states {
            for c in ac.st[s].first_child as usize..ac.st[s + 1].first_child as usize {
                let f = if s == 0 {
                    0
                } else {
                    let b = ac.st[c].byte;
                    let mut f = ac.st[s].fail;
                    loop {
                        if let Some(x) = ac.child(f, b) {
                            break x;
                        }
                        if f == 0 {
                            break 0;
                        }
                        f = ac.st[f as usize].fail;
                    }
                };
                let fs = ac.st[f as usize];
                ac.st[c].fail = f;
                ac.st[c].dict = if fs.head != NONE { f } else { fs.dict };
            }
        }
        Some(ac)
    }

    /// The longest pattern's length.
    pub(crate) fn max_len(&self) -> usize {
        self.max_len
    }

    fn child(&self, s: u32, b: u8) -> Option<u32> {
        if s == 0 {
            let c = self.root[b as usize];
            return (c != 0).then_some(c);
        }
        let (lo, hi) = (
            self.st[s as usize].first_child as usize,
            self.st[s as usize + 1].first_child as usize,
        );
        let kids = &self.st[lo..hi];
        let at = if kids.len() <= 8 {
            kids.iter().position(|x| x.byte == b)?
        } else {
            kids.binary_search_by_key(&b, |x| x.byte).ok()?
        };
        Some((lo + at) as u32)
    }

    /// Scans `hay[from..]` (from the start state at `from`) and calls `each(pattern, range)`
    /// for every occurrence ending after `report_after`, in ascending order of end; `each`
    /// returns whether it still wants that pattern's occurrences (once it says no, it is never
    /// called for that pattern again).
    pub(crate) fn scan(
        &mut self,
        hay: &[u8],
        from: usize,
        report_after: usize,
        each: &mut impl FnMut(usize, Range<usize>) -> bool,
    ) {
        // At the start state, a byte that starts no pattern leaves it there and reports
        // nothing: when at most three bytes start patterns, `memchr` skips to the next one.
        let firsts: Vec<u8> = (self.st[0].first_child..self.st[1].first_child)
            .map(|c| self.st[c as usize].byte)
            .collect();
        let skip = |at: usize| -> Option<usize> {
            let rest = &hay[at..];
            let k = match *firsts.as_slice() {
                [a] => memchr::memchr(a, rest),
                [a, b] => memchr::memchr2(a, b, rest),
                [a, b, c] => memchr::memchr3(a, b, c, rest),
                _ => Some(0),
            };
            k.map(|k| at + k)
        };
        let mut s = 0u32;
        let mut i = from;
        while i < hay.len() {
            if self.live == 0 {
                return;
            }
            if s == 0 {
                match skip(i) {
                    Some(at) => i = at,
                    None => return,
                }
            }
            let b = hay[i];
            i += 1;
            s = loop {
                if let Some(x) = self.child(s, b) {
                    break x;
                }
                if s == 0 {
                    break 0;
                }
                s = self.st[s as usize].fail;
            };
            let end = i;
            if end <= report_after {
                continue;
            }
            if self.st[s as usize].head != NONE {
                self.report(s, end, each);
            }
            // The dictionary walk, splitting the path past states with nothing wanted left.
            let mut prev = s;
            let mut t = self.st[s as usize].dict;
            while t != NONE {
                step();
                if self.st[t as usize].head == NONE {
                    t = self.st[t as usize].dict;
                    self.st[prev as usize].dict = t;
                    continue;
                }
                self.report(t, end, each);
                prev = t;
                t = self.st[t as usize].dict;
            }
        }
    }

    /// Reports the patterns listed at `s`, unlisting those the caller gives up.
    fn report(&mut self, s: u32, end: usize, each: &mut impl FnMut(usize, Range<usize>) -> bool) {
        let mut prev = NONE;
        let mut k = self.st[s as usize].head;
        while k != NONE {
            step();
            let next = self.next[k as usize];
            let len = self.len[k as usize] as usize;
            if each(k as usize, end - len..end) {
                prev = k;
            } else {
                self.live -= 1;
                if prev == NONE {
                    self.st[s as usize].head = next;
                } else {
                    self.next[prev as usize] = next;
                }
            }
            k = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(hay: &[u8], pats: &[&[u8]]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for e in 1..=hay.len() {
            for (k, p) in pats.iter().enumerate() {
                if p.len() <= e && &hay[e - p.len()..e] == *p {
                    out.push((e, k));
                }
            }
        }
        out
    }

    proptest! {
        /// Every occurrence, each pattern until the caller gives it up after `cap` of them,
        /// from any resume point.
        #[test]
        fn same_as_naive_with_saturation(
            pats in prop::collection::vec(
                prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c']), 1..6), 1..8),
            hay in prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c']), 0..80),
            cap in 1usize..5,
            from in 0usize..10,
        ) {
            let refs: Vec<&[u8]> = pats.iter().map(Vec::as_slice).collect();
            let mut ac = Ac::new(&refs).unwrap();
            let from = from.min(hay.len());
            let report_after = (from + ac.max_len()).min(hay.len());
            let mut seen = vec![0usize; pats.len()];
            let mut got = Vec::new();
            ac.scan(&hay, from, report_after, &mut |k, r| {
                assert!(seen[k] < cap, "pattern {k} reported after it was given up");
                assert_eq!(&hay[r.clone()], refs[k]);
                got.push((r.end, k));
                seen[k] += 1;
                seen[k] < cap
            });
            let mut counts = vec![0usize; pats.len()];
            let want: Vec<(usize, usize)> = naive(&hay, &refs)
                .into_iter()
                .filter(|&(e, _)| e > report_after)
                .filter(|&(_, k)| { counts[k] += 1; counts[k] <= cap })
                .collect();
            got.sort();
            let mut want = want;
            want.sort();
            prop_assert_eq!(got, want);
        }
    }
}
