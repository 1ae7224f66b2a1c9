//! Content versions: `sha256:<hex>` strings as agents see them.

use sha2::{Digest, Sha256};
use std::sync::atomic::AtomicBool;

/// The `sha256:<lowercase hex>` version string of `bytes` (the whole file, BOM included).
pub fn version(bytes: &[u8]) -> String {
    hex(Sha256::digest(bytes))
}

/// A version computed piece by piece, for content read in chunks (no whole-file buffer).
#[derive(Default)]
pub(crate) struct Versioner(Sha256);

impl Versioner {
    /// Adds the next bytes.
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The version of everything added, as [`version`] gives it.
    pub(crate) fn finish(self) -> String {
        hex(self.0.finalize())
    }
}

/// Bytes between two [`Marks`]: a multiple of SHA-256's 64-byte block, so that the hasher holds
/// no partial block at a mark.
const MARK: usize = 256 * 1024;

/// The hasher's state after every [`MARK`] bytes of some content, kept while its version was
/// computed. The version of other content that starts with the same bytes (a file after an edit
/// late in it) then resumes from the last mark before the first byte that differs, instead of
/// hashing it all again: SHA-256 reads its input strictly in order, so its state after a prefix
/// depends on that prefix alone. ~110 bytes a mark (~45 KB for a 100 MB file).
#[derive(Debug, Clone, Default)]
pub(crate) struct Marks(Vec<Sha256>);

impl Marks {
    /// The version of `parts` one after another (as [`version`] of their concatenation gives
    /// it), and its marks.
    pub(crate) fn version(parts: &[&[u8]]) -> (String, Marks) {
        let mut h = Hashing::default();
        for part in parts {
            h.feed(part, None);
        }
        h.finish()
    }

    /// A hashing of other content whose first `unchanged` bytes are those of the content these
    /// marks were taken of: it resumes at the last mark within them, so that only what follows
    /// is hashed again. The caller feeds it the whole new content from its first byte (what
    /// the marks stand for is skipped).
    pub(crate) fn resume(&self, unchanged: usize) -> Hashing {
        let k = (unchanged / MARK).min(self.0.len());
        Hashing {
            hasher: match k {
                0 => Sha256::new(),
                k => self.0[k - 1].clone(),
            },
            marks: self.0[..k].to_vec(),
            fed: k * MARK,
            seen: 0,
        }
    }
}

/// A version being computed, which can stop at a mark and resume later (from another thread):
/// the content is offered from its first byte each time, and what was hashed before is skipped.
#[derive(Debug, Clone, Default)]
pub(crate) struct Hashing {
    hasher: Sha256,
    /// The hasher's state after every [`MARK`] bytes hashed (see [`Marks`]).
    marks: Vec<Sha256>,
    /// Bytes hashed.
    fed: usize,
    /// Bytes offered since [`Hashing::restart`] (or since it was made).
    seen: usize,
}

impl Hashing {
    /// Starts offering the content again from its first byte.
    pub(crate) fn restart(&mut self) {
        self.seen = 0;
    }

    /// Offers the next bytes of the content: those not hashed yet are, up to the end or until
    /// `stop` is set (looked at at each mark). Whether it took all of them. A hashing that can
    /// stop is background work: at each mark it also waits while [`crate::busy`] says so.
    pub(crate) fn feed(&mut self, part: &[u8], stop: Option<&AtomicBool>) -> bool {
        let start = self.seen;
        self.seen += part.len();
        // Offered in order from the first byte, so everything before `start` was hashed.
        let Some(mut rest) = part.get(self.fed.saturating_sub(start)..) else {
            return true;
        };
        while !rest.is_empty() {
            if self.fed.is_multiple_of(MARK)
                && let Some(stop) = stop
                && !crate::busy::wait_unless(stop)
            {
                return false;
            }
            let (now, later) = rest.split_at(rest.len().min(MARK - self.fed % MARK));
            self.hasher.update(now);
            self.fed += now.len();
            if self.fed.is_multiple_of(MARK) {
                self.marks.push(self.hasher.clone());
            }
            rest = later;
        }
        true
    }

    /// The version of all that was hashed, and its marks.
    pub(crate) fn finish(self) -> (String, Marks) {
        (hex(self.hasher.finalize()), Marks(self.marks))
    }
}

fn hex(digest: impl AsRef<[u8]>) -> String {
    let digest = digest.as_ref();
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for &b in digest {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_digest() {
        assert_eq!(
            super::version(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let mut v = super::Versioner::default();
        v.update(b"a");
        v.update(b"");
        v.update(b"bc");
        assert_eq!(v.finish(), super::version(b"abc"));
    }

    /// A version resumed from marks is the version of the new bytes, wherever they first differ
    /// from the old ones (or do not at all), however either is split, with old and new of
    /// different lengths.
    #[test]
    fn resumed_versions_are_versions() {
        use super::{MARK, Marks};
        let old: Vec<u8> = (0..3 * MARK + 1000).map(|i| (i % 251) as u8).collect();
        let (v, marks) = Marks::version(&[&old[..3], &old[3..]]);
        assert_eq!(v, super::version(&old));
        assert_eq!(marks.0.len(), 3);
        let cases = [
            0,
            1,
            MARK - 1,
            MARK,
            MARK + 64,
            2 * MARK,
            3 * MARK - 1,
            3 * MARK + 999,
        ];
        for at in cases {
            let mut new = old.clone();
            new[at] ^= 1;
            let mut longer = new.clone();
            longer.extend_from_slice(b"tail");
            let shorter = &old[..at];
            for n in [&new[..], &longer[..], shorter] {
                for split in [0, 3, MARK + 5, n.len()].map(|s| s.min(n.len())) {
                    let mut h = marks.resume(at);
                    h.feed(&n[..split], None);
                    h.feed(&n[split..], None);
                    assert_eq!(h.finish().0, super::version(n), "{at}");
                }
            }
        }
        let mut h = marks.resume(old.len());
        h.feed(&old, None);
        assert_eq!(h.finish().0, v);
        // No marks at all: the whole content is hashed.
        let mut h = Marks::default().resume(100);
        h.feed(b"abc", None);
        assert_eq!(h.finish().0, super::version(b"abc"));
    }

    /// A hashing stopped at a mark and offered the content again goes on where it stopped.
    #[test]
    fn stopped_hashing_resumes() {
        use std::sync::atomic::AtomicBool;
        let content: Vec<u8> = (0..3 * super::MARK + 77).map(|i| (i % 253) as u8).collect();
        let (v, marks) = super::Marks::version(&[&content]);
        let stop = AtomicBool::new(false);
        let mut h = super::Hashing::default();
        assert!(h.feed(&content[..super::MARK + 9], Some(&stop)));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(!h.feed(&content[super::MARK + 9..], Some(&stop)));
        assert_eq!(h.fed, 2 * super::MARK);
        h.restart();
        assert!(h.feed(&content[..5], None));
        assert!(h.feed(&content[5..], None));
        let (v2, marks2) = h.finish();
        assert_eq!(v2, v);
        assert_eq!(marks2.0.len(), marks.0.len());
        // Stopped before it began: nothing hashed.
        let mut h = super::Hashing::default();
        assert!(!h.feed(&content, Some(&stop)));
        assert_eq!(h.fed, 0);
    }
}
