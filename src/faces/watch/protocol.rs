//! The inbox protocol between a submitter (`redline hook --review`, `redline mcp --review`) and
//! `redline watch`: one JSON object per line over a Unix socket at
//! `ROOT/.redline/watch.sock` (never a network port).
//!
//! ```text
//! submitter → watch   {"agent", "session"?, "tool", "request", "versions"}
//! watch → submitter   {"status": "queued", "position": N}          at once (1 = shown next)
//! watch → submitter   {"status": "decided", "decisions": [...], "note"?}
//!                   | {"status": "stale", "message"}               a file changed while waiting
//!                   | {"status": "closed", "message"}              watch stopped, or refused it
//! ```
//!
//! `request` is a redline request in any of its dialects (JSON, Codex patch, SEARCH/REPLACE) with
//! absolute paths; `versions` maps each file the submitter read to its `sha256:` version. A
//! submitter that stops waiting just closes the connection; `watch` then drops the batch.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The socket of the inbox for `root`.
pub(crate) fn socket_path(root: &Path) -> PathBuf {
    root.join(".redline").join("watch.sock")
}

/// A batch sent for review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Submission {
    /// Who waits: `claude`, `codex`, `gemini`, `pi`, `mcp`.
    pub agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The harness's tool (`Edit`, `apply_patch`, `apply_edits`, …).
    pub tool: String,
    pub request: String,
    #[serde(default)]
    pub versions: BTreeMap<String, String>,
}

/// The human's decision on one unit (an edit, or a create/delete/move).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Verdict {
    pub path: String,
    /// The edit's index in its file (absent for a create, overwrite, delete or move).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// `accepted`, `rejected`, `undecided`, `failed` or `stale`.
    pub decision: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Verdict {
    pub(crate) fn accepted(&self) -> bool {
        self.decision == "accepted"
    }
}

/// What `watch` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub(crate) enum Reply {
    Queued {
        position: usize,
    },
    Decided {
        decisions: Vec<Verdict>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    Stale {
        message: String,
    },
    Closed {
        message: String,
    },
}

/// The files of `versions` whose bytes on disk are no longer that version (or are gone).
pub(crate) fn changed(versions: &BTreeMap<String, String>) -> Vec<String> {
    versions
        .iter()
        .filter(|(path, v)| {
            std::fs::read(path)
                .map(|b| crate::hash::version(&b) != **v)
                .unwrap_or(true)
        })
        .map(|(p, _)| p.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_round_trip_with_their_status_tag() {
        let r = Reply::Decided {
            decisions: vec![Verdict {
                path: "/r/a.txt".into(),
                index: Some(0),
                decision: "rejected".into(),
                note: Some("keep the old name".into()),
            }],
            note: None,
        };
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(
            text,
            r#"{"status":"decided","decisions":[{"path":"/r/a.txt","index":0,"decision":"rejected","note":"keep the old name"}]}"#
        );
        assert_eq!(serde_json::from_str::<Reply>(&text).unwrap(), r);
        let q: Reply = serde_json::from_str(r#"{"status":"queued","position":2}"#).unwrap();
        assert_eq!(q, Reply::Queued { position: 2 });
    }

    #[test]
    fn changed_sees_edits_and_deletions() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, "x").unwrap();
        let mut v = BTreeMap::new();
        v.insert(a.to_string_lossy().into_owned(), crate::hash::version(b"x"));
        assert!(changed(&v).is_empty());
        std::fs::write(&a, "y").unwrap();
        assert_eq!(changed(&v).len(), 1);
        std::fs::remove_file(&a).unwrap();
        assert_eq!(changed(&v).len(), 1);
    }
}
