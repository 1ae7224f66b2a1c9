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

fn hex(digest: impl AsRef<[u8]>) -> String {
    let digest = digest.as_ref();
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest.iter() {
        out.push_str(&format!("{b:02x}"));
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
}
