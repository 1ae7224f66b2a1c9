//! Content versions: `sha256:<hex>` strings as agents see them.

use sha2::{Digest, Sha256};

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
        let mut hasher = Sha256::new();
        let mut marks = Vec::new();
        let mut fed = 0usize;
        for part in parts {
            let mut rest = *part;
            while !rest.is_empty() {
                let (now, later) = rest.split_at(rest.len().min(MARK - fed % MARK));
                hasher.update(now);
                fed += now.len();
                if fed.is_multiple_of(MARK) {
                    marks.push(hasher.clone());
                }
                rest = later;
            }
        }
        (hex(hasher.finalize()), Marks(marks))
    }

    /// The version of `new`, where `old` (its parts one after another) is the content these
    /// marks were taken of: hashing resumes at the last mark up to which `new` and `old` are
    /// equal, which is checked here by comparing them (so the result is [`version`] of `new`
    /// whatever `old` is).
    pub(crate) fn version_of_edited(&self, old: &[&[u8]], new: &[u8]) -> String {
        let mut same = 0;
        while same < self.0.len()
            && (same + 1) * MARK <= new.len()
            && equal_at(old, same * MARK, &new[same * MARK..(same + 1) * MARK])
        {
            same += 1;
        }
        let mut hasher = match same {
            0 => Sha256::new(),
            k => self.0[k - 1].clone(),
        };
        hasher.update(&new[same * MARK..]);
        hex(hasher.finalize())
    }
}

/// Whether the bytes of `parts` (one after another) from offset `at` on start with `want`.
fn equal_at(parts: &[&[u8]], mut at: usize, mut want: &[u8]) -> bool {
    for part in parts {
        if want.is_empty() {
            break;
        }
        if at >= part.len() {
            at -= part.len();
            continue;
        }
        let n = (part.len() - at).min(want.len());
        if part[at..at + n] != want[..n] {
            return false;
        }
        want = &want[n..];
        at = 0;
    }
    want.is_empty()
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
    /// from the old ones (or do not at all), however the old bytes are split, with old and new
    /// of different lengths.
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
                for split in [0, 3, MARK + 5] {
                    let parts = [&old[..split], &old[split..]];
                    assert_eq!(
                        marks.version_of_edited(&parts, n),
                        super::version(n),
                        "{at}"
                    );
                }
            }
        }
        assert_eq!(marks.version_of_edited(&[&old], &old), v);
        // No marks at all: the whole content is hashed.
        assert_eq!(
            Marks::default().version_of_edited(&[], b"abc"),
            super::version(b"abc")
        );
    }
}
