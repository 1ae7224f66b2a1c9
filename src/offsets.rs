//! Ascending `u32`s (where patch lines end, the lines where a pattern occurs) in one or two
//! bytes each where they are close: on a patch or a file of very short lines, four bytes a line
//! was twice the text.

/// Values per block of a narrow list.
const NARROW: usize = 32;
/// Values per block of a packed list.
const BLOCK: usize = 64;

/// A list of ascending `u32`s, in the smallest of three forms that holds them. Narrow while every
/// block of [`NARROW`] values lies within 256 of the block's first value (short lines, dense
/// occurrences): that value in full, then a byte per value (1.125 bytes a value). Else packed
/// while every block of [`BLOCK`] values lies within 64 Ki of its first: 2-byte deltas (about
/// 2.06 bytes a value). Else plain `u32`s. A value that does not fit moves the list to the next
/// form for good (each move copies it once, so pushing stays linear). Equal lists pushed in the
/// same order have the same form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ascending {
    /// `deltas[i]` is value `i` minus `bases[i / NARROW]`.
    Narrow {
        bases: Vec<u32>,
        deltas: Vec<u8>,
    },
    /// `deltas[i]` is value `i` minus `bases[i / BLOCK]`.
    Packed {
        bases: Vec<u32>,
        deltas: Vec<u16>,
    },
    Plain(Vec<u32>),
}

/// An empty list, to lend.
pub(crate) static EMPTY: Ascending = Ascending::Narrow {
    bases: Vec::new(),
    deltas: Vec::new(),
};

impl Default for Ascending {
    fn default() -> Ascending {
        Ascending::Narrow {
            bases: Vec::new(),
            deltas: Vec::new(),
        }
    }
}

impl Ascending {
    /// Appends `v`, at least the last value.
    pub(crate) fn push(&mut self, v: u32) {
        debug_assert!(self.last().is_none_or(|l| l <= v), "ascending");
        let fits = match self {
            Ascending::Narrow { bases, deltas } => {
                if deltas.len() % NARROW == 0 {
                    bases.push(v);
                }
                // Invariant: a block was started above.
                let base = *bases.last().expect("a block");
                u8::try_from(v.wrapping_sub(base))
                    .map(|d| deltas.push(d))
                    .is_ok()
            }
            Ascending::Packed { bases, deltas } => {
                if deltas.len() % BLOCK == 0 {
                    bases.push(v);
                }
                // Invariant: a block was started above.
                let base = *bases.last().expect("a block");
                u16::try_from(v.wrapping_sub(base))
                    .map(|d| deltas.push(d))
                    .is_ok()
            }
            Ascending::Plain(p) => {
                p.push(v);
                true
            }
        };
        if !fits {
            self.widen(v);
        }
    }

    /// Moves to the next form, with `v` appended.
    fn widen(&mut self, v: u32) {
        let values = self.iter_from(0).chain(std::iter::once(v));
        let next = if matches!(self, Ascending::Narrow { .. }) {
            let mut next = Ascending::Packed {
                bases: Vec::new(),
                deltas: Vec::with_capacity(self.len() + 1),
            };
            for x in values {
                next.push(x);
            }
            next
        } else {
            let mut plain = Vec::with_capacity(self.len() + 1);
            plain.extend(values);
            Ascending::Plain(plain)
        };
        *self = next;
    }

    /// How many values.
    pub(crate) fn len(&self) -> usize {
        match self {
            Ascending::Narrow { deltas, .. } => deltas.len(),
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
            Ascending::Narrow { bases, deltas } => {
                deltas.get(i).map(|&d| bases[i / NARROW] + u32::from(d))
            }
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

    /// Room for `n` more values without growing (in the list's form).
    pub(crate) fn reserve_exact(&mut self, n: usize) {
        match self {
            Ascending::Narrow { deltas, .. } => deltas.reserve_exact(n),
            Ascending::Packed { deltas, .. } => deltas.reserve_exact(n),
            Ascending::Plain(p) => p.reserve_exact(n),
        }
    }

    /// How many values fit without growing.
    pub(crate) fn capacity(&self) -> usize {
        match self {
            Ascending::Narrow { deltas, .. } => deltas.capacity(),
            Ascending::Packed { deltas, .. } => deltas.capacity(),
            Ascending::Plain(p) => p.capacity(),
        }
    }

    /// Gives back what the list grew beyond its values.
    pub(crate) fn shrink_to_fit(&mut self) {
        match self {
            Ascending::Narrow { bases, deltas } => {
                bases.shrink_to_fit();
                deltas.shrink_to_fit();
            }
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

    /// Every form answers as a plain vector does: close values stay narrow, a jump of 256 or
    /// more inside a block makes the list packed, one of 64 Ki or more plain, and the values
    /// before a move survive it.
    #[test]
    fn answers_as_a_vector() {
        let narrow: Vec<u32> = (0..1000u32).map(|i| i * 3 + i % 2).collect();
        let mut packed = narrow.clone();
        packed.extend([5_000, 5_001, 9_000]);
        let mut plain = packed.clone();
        plain.extend([200_000, 200_001, 300_000]);
        let form = |a: &Ascending| match a {
            Ascending::Narrow { .. } => 1,
            Ascending::Packed { .. } => 2,
            Ascending::Plain(_) => 4,
        };
        for (values, want) in [(narrow, 1), (packed, 2), (plain, 4), (Vec::new(), 1)] {
            let mut a = Ascending::default();
            for &v in &values {
                a.push(v);
            }
            assert_eq!(form(&a), want);
            assert_eq!(a.len(), values.len());
            assert_eq!(a.iter_from(0).collect::<Vec<_>>(), values);
            for v in 0..=values.last().map_or(3, |&l| l + 2) {
                assert_eq!(a.count_below(v), values.partition_point(|&x| x < v), "{v}");
                assert_eq!(a.contains(v), values.binary_search(&v).is_ok(), "{v}");
            }
        }
    }
}
