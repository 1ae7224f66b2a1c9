//! `redline demo`: a small workspace and batch built into the binary, to try the reviewer.
//!
//! The batch has something of every kind: exact matches, normalized ones (curly quotes, an em
//! dash, trailing whitespace), a CRLF file, tabs, a file without a final newline, a created file,
//! an edit that is not found (with a close candidate) and an ambiguous one.

use crate::request::{Request, RequestError};
use std::path::Path;

/// The demo files: (path, text). `settings.ini` is written with CRLF line endings.
pub(crate) const FILES: &[(&str, &str)] = &[
    ("src/greet.rs", include_str!("workspace/src/greet.rs")),
    ("src/math.rs", include_str!("workspace/src/math.rs")),
    ("README.md", include_str!("workspace/README.md")),
    ("settings.ini", include_str!("workspace/settings.ini")),
    ("Makefile", include_str!("workspace/Makefile")),
    ("VERSION", include_str!("workspace/VERSION")),
];

/// The demo batch, as an agent would send it.
pub(crate) const BATCH: &str = include_str!("batch.json");

/// The bytes a demo file is written with.
pub(crate) fn bytes(path: &str, text: &str) -> Vec<u8> {
    if path.ends_with(".ini") {
        text.replace('\n', "\r\n").into_bytes()
    } else {
        text.as_bytes().to_vec()
    }
}

/// Writes the demo files and `batch.json` into `dir` (which should be empty).
pub(crate) fn write(dir: &Path) -> std::io::Result<()> {
    for (path, text) in FILES {
        let full = dir.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(full, bytes(path, text))?;
    }
    std::fs::write(dir.join("batch.json"), BATCH)
}

/// The demo batch as a request.
pub(crate) fn request() -> Result<Request, RequestError> {
    crate::request::wire::parse_json(BATCH)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::matcher::MatchKind;
    use crate::engine::plan::{self, Outcome, ResolveOptions};
    use crate::write::{Limits, Root};

    #[test]
    fn demo_batch_has_every_kind_of_edit() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path()).unwrap();
        let root = Root::open(dir.path(), Limits::default()).unwrap();
        let plan = plan::resolve(&request().unwrap(), &root, ResolveOptions::default()).unwrap();
        let mut exact = 0;
        let mut normalized = Vec::new();
        let mut failed = Vec::new();
        for f in &plan.files {
            assert!(f.failure.is_none(), "{}: {:?}", f.path, f.failure);
            for e in &f.edits {
                match &e.outcome {
                    Outcome::Resolved(r) if r.kind == MatchKind::Exact => exact += 1,
                    Outcome::Resolved(r) => {
                        normalized.extend(r.normalizations.iter().map(|n| n.as_str()))
                    }
                    Outcome::Failed(fl) => failed.push(fl.code().as_str()),
                    Outcome::Skipped => panic!("skipped"),
                }
            }
        }
        assert!(exact >= 5, "{exact}");
        normalized.sort();
        assert_eq!(normalized, vec!["dashes", "quotes", "trailing_whitespace"]);
        failed.sort();
        assert_eq!(failed, vec!["ambiguous", "not_found"]);
        let ini = std::fs::read(dir.path().join("settings.ini")).unwrap();
        assert!(ini.windows(2).any(|w| w == b"\r\n"));
    }
}
