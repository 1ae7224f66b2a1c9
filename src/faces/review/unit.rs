//! The units of decision, as plain data: one edit of a file, or the whole operation of a file
//! that has no edits (create, overwrite, delete), or the rename of a moved file. The model keeps
//! one decision per unit; the display rows ([`super::rows`]) are built from them.

use crate::engine::matcher::MatchKind;
use crate::engine::normalize::Normalization;

/// What a unit does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnitKind {
    /// Edit `index` of the file's plan.
    Edit(usize),
    /// The whole new content of a created or overwritten file.
    Content,
    /// The deletion of the file.
    Delete,
    /// The rename of a moved file (its edits are units of their own).
    Move,
}

/// One decidable thing.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Unit {
    pub kind: UnitKind,
    /// `Some` for a resolved edit.
    pub match_kind: Option<MatchKind>,
    pub normalizations: Vec<Normalization>,
    /// The engine's failure, for an edit that failed or was skipped with its file.
    pub failed: bool,
    /// 1-based first old line it touches, when known (for prose).
    pub line: Option<usize>,
}

impl Unit {
    /// Every match that is not exact (normalized today, and any looser kind the engine adds,
    /// such as SPEC §3b's relaxed tier): what `f`/`F` visit, `≈` marks, and what never starts
    /// accepted.
    pub(crate) fn normalized(&self) -> bool {
        matches!(self.match_kind, Some(k) if k != MatchKind::Exact)
    }

    /// How the gutter and prose name it: `#3` (the edit's 1-based position among its file's
    /// edits in the request: one numbering everywhere a human reads), `file`, `del`, `mv`.
    pub(crate) fn label(&self) -> String {
        match self.kind {
            UnitKind::Edit(i) => format!("#{}", i + 1),
            UnitKind::Content => "file".into(),
            UnitKind::Delete => "del".into(),
            UnitKind::Move => "mv".into(),
        }
    }

    /// The edit index in the file's plan, for edit units.
    pub(crate) fn edit(&self) -> Option<usize> {
        match self.kind {
            UnitKind::Edit(i) => Some(i),
            _ => None,
        }
    }
}

/// What the reviewer knows about one file of the batch.
#[derive(Debug, Clone)]
pub(crate) struct FileInfo {
    /// Path as shown (relative to the root; `a → b` for a move).
    pub display: String,
    /// Units in display order: failed ones and the rename first, then by position in the file.
    pub units: Vec<Unit>,
}
