//! Ascending `u32`s (where patch lines end, the lines where a pattern occurs) in about two
//! bytes each: on a patch or a file of very short lines, four bytes a line was twice the text.

/// Values per block of a packed list.
const BLOCK: usize = 64;

/// A list of ascending `u32`s. Packed while every block of [`BLOCK`] values lies within 64 Ki
/// of the block's first value: that value in full, then a 2-byte delta per value (about 2.06
/// bytes a value). The first value too far from its block's first turns the list into plain
/// `u32`s for good. Equal lists pushed in the same order have the same form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ascending {
    /// `deltas[i]` is value `i` minus `bases[i / BLOCK]`.
    Packed {
        bases: Vec<u32>,
        deltas: Vec<u16>,
    },
    Plain(Vec<u32>),
}

/// An empty list, to lend.
pub(crate) static EMPTY: Ascending = Ascending::Packed {
    bases: Vec::new(),
    deltas: Vec::new(),
};

impl Default for Ascending {
    fn default() -> Ascending {
        Ascending::Packed {
            bases: Vec::new(),
            deltas: Vec::new(),
        }
    }
}

impl Ascending {
    /// Appends `v`, at least the last value.
    pub(crate) fn push(&mut self, v: u32) {
        debug_assert!(self.last().is_none_or(|l| l <= v), "ascending");
        match self {
            Ascending::Packed { bases, deltas } => {
                if deltas.len() % BLOCK == 0 {
                    bases.push(v);
                }
                // Invariant: a block was started above.
                let base = *bases.last().expect("a block");
                match u16::try_from(v - base) {
                    Ok(d) => deltas.push(d),
                    Err(_) => {
                        let mut plain: Vec<u32> = Vec::with_capacity(deltas.len() + 1);
                        let at = |i: usize| bases[i / BLOCK] + u32::from(deltas[i]);
                        plain.extend((0..deltas.len()).map(at));
                        plain.push(v);
                        *self = Ascending::Plain(plain);
                    }
                }
            }
            Ascending::Plain(p) => p.push(v),
        }
    }

    /// How many values.
    pub(crate) fn len(&self) -> usize {
        match self {
            Ascending::Packed { deltas, .. } => deltas.len(),
            Ascending::Plain(p) => p.len(),
        }
    }

    /// No values.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `i`.
    pub(crate) fn get(&self, i: usize) -> Option<u32> {
        match self {
            Ascending::Packed { bases, deltas } => {
                deltas.get(i).map(|&d| bases[i / BLOCK] + u32::from(d))
            }
            Ascending::Plain(p) => p.get(i).copied(),
        }
    }

    fn last(&self) -> Option<u32> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    /// The number of values below `v` (where `v` would go).
    pub(crate) fn count_below(&self, v: u32) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.get(mid).is_some_and(|m| m < v) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Whether `v` is in the list.
    pub(crate) fn contains(&self, v: u32) -> bool {
        self.get(self.count_below(v)) == Some(v)
    }

    /// The values from the `i`-th on.
    pub(crate) fn iter_from(&self, i: usize) -> impl Iterator<Item = u32> + '_ {
        (i..self.len()).filter_map(move |k| self.get(k))
    }

    /// Room for `n` more values without growing (packed: their deltas).
    pub(crate) fn reserve_exact(&mut self, n: usize) {
        match self {
            Ascending::Packed { deltas, .. } => deltas.reserve_exact(n),
            Ascending::Plain(p) => p.reserve_exact(n),
        }
    }

    /// How many values fit without growing.
    pub(crate) fn capacity(&self) -> usize {
        match self {
            Ascending::Packed { deltas, .. } => deltas.capacity(),
            Ascending::Plain(p) => p.capacity(),
        }
    }

    /// Gives back what the list grew beyond its values.
    pub(crate) fn shrink_to_fit(&mut self) {
        match self {
            Ascending::Packed { bases, deltas } => {
                bases.shrink_to_fit();
                deltas.shrink_to_fit();
            }
            Ascending::Plain(p) => p.shrink_to_fit(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both forms answer as a plain vector does: dense values stay packed, a jump of 64 Ki or
    /// more inside a block makes the list plain, and the values before it survive.
    #[test]
    fn answers_as_a_vector() {
        let dense: Vec<u32> = (0..1000u32).map(|i| i * 3 + i % 2).collect();
        let mut jump = dense.clone();
        jump.extend([200_000, 200_001, 300_000]);
        for (values, packed) in [(dense, true), (jump, false), (Vec::new(), true)] {
            let mut a = Ascending::default();
            for &v in &values {
                a.push(v);
            }
            assert_eq!(matches!(a, Ascending::Packed { .. }), packed);
            assert_eq!(a.len(), values.len());
            assert_eq!(a.iter_from(0).collect::<Vec<_>>(), values);
            for v in 0..=values.last().map_or(3, |&l| l + 2) {
                assert_eq!(a.count_below(v), values.partition_point(|&x| x < v), "{v}");
                assert_eq!(a.contains(v), values.binary_search(&v).is_ok(), "{v}");
            }
        }
    }
}
