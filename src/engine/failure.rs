//! Why an edit or a file failed, as data: what happened and where, never how to say it.
//!
//! Each variant carries exactly what its failure needs (byte offsets into the document the edit
//! was matched against, counts, the other edit's index); [`EditError::code`] maps it to the
//! stable wire [`Code`]. The words (messages and hints) are written at the edge, in
//! `report::message`, and each face says them its own way. Nothing is decided by comparing text.

use crate::engine::document::DecodeError;
use crate::engine::hint::Candidate;
use crate::engine::matcher::{MAX_AMBIGUOUS, UNCOUNTED};
use crate::error::Code;
use crate::write::FsError;
use std::ops::Range;

/// How many places an `ambiguous` edit matched, in words: the number, or "more than 20" when
/// the search stopped counting ([`UNCOUNTED`]).
pub(crate) fn places(occurrences: usize) -> String {
    if occurrences == UNCOUNTED {
        format!("more than {MAX_AMBIGUOUS}")
    } else {
        occurrences.to_string()
    }
}

/// Why one edit (or one Codex chunk, reported as an edit) of a file failed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum EditError {
    /// `oldText` and `newText` are identical (line endings aside).
    NoOp,
    /// An insertion after a line the file does not have.
    NoSuchLine {
        /// The requested line to insert after.
        after: usize,
        /// How many lines the file has.
        lines: usize,
    },
    /// `oldText` matches more than one place.
    Ambiguous {
        /// Where it matched (up to `matcher::MAX_AMBIGUOUS`), sorted.
        matches: Vec<Range<usize>>,
        /// How many places it matched, or [`UNCOUNTED`] (more than `MAX_AMBIGUOUS`) when the
        /// search stopped counting.
        occurrences: usize,
        /// Found only by the relaxed tier (§3b), not as written.
        relaxed: bool,
    },
    /// The edit located its target, but the target overlaps another edit's.
    Overlap {
        /// 0-based index of the other edit.
        other_edit: usize,
        /// Byte offset where the two meet.
        at: usize,
    },
    /// `oldText` is not in the file.
    NotFound {
        /// The closest regions, best first.
        candidates: Vec<Candidate>,
        /// What else is known about the miss (boxed: few misses have one, and a plan holds an
        /// outcome per edit).
        clue: Option<Box<Clue>>,
    },
    /// `oldText` occurs in N(file) at so many places that a rule rejects (inside ligatures or
    /// combined characters, overlapping the occurrences a replaceAll takes, or, in the relaxed
    /// tier, with other indentation) that checking them
    /// all would exceed the work budget, linear in the file plus the request: whether it
    /// occurs once is not known (`too_large`).
    TooManyPlaces {
        /// In the relaxed tier (§3b): not found as written.
        relaxed: bool,
        /// A replaceAll edit, whose occurrences that overlap the ones it takes are paid for
        /// in the same way (`a` repeated, searched in a file of `a`).
        replace_all: bool,
    },
    /// A Codex patch chunk that could not be placed (SPEC §6).
    Chunk {
        /// 1-based line of the chunk in the patch.
        line: usize,
        /// Why (boxed, as the miss's clue: a plan holds an outcome per edit, 40 bytes so).
        why: Box<ChunkError>,
    },
}

/// What else is known about an `oldText` that was not found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Clue {
    /// `newText` occurs in the file (SPEC §3a "Already applied").
    AlreadyApplied {
        /// Byte offset of its first occurrence.
        at: usize,
    },
    /// The relaxed tier (§3b) found the only candidate, but only with its indentation changed,
    /// which `newText` cannot take.
    Reindent {
        /// Byte offset of the candidate.
        at: usize,
        /// Why `newText` cannot take the change (the relaxed tier's own words).
        why: String,
    },
}

/// Why a Codex patch chunk could not be placed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ChunkError {
    /// Its old and new lines are the same.
    NoOp,
    /// One of its `@@ anchor` lines is not in the file (after the previous chunk).
    AnchorNotFound {
        /// The anchor as the patch wrote it.
        anchor: String,
        /// How many lines of the file lay before the search (0: searched from the top).
        after: usize,
    },
    /// Its old lines match more than one place.
    Ambiguous {
        /// Where (whole lines, up to `matcher::MAX_AMBIGUOUS`), sorted.
        matches: Vec<Range<usize>>,
        /// How many places, or [`UNCOUNTED`], as [`EditError::Ambiguous`]'s.
        occurrences: usize,
    },
    /// Its old lines occur so often (in a highly repetitive file) that telling whether they
    /// occur once in its scope would exceed the locator's work limit, which keeps a patch's
    /// cost linear in the file plus the patch.
    TooManyPlaces,
    /// Its old lines are not in the file.
    NotFound {
        /// Where it was looked for.
        scope: ChunkScope,
        /// Byte offset of the line where its new lines are, when they are (the chunk may already
        /// be applied, SPEC §3a).
        already_applied: Option<usize>,
        /// The closest regions, best first.
        candidates: Vec<Candidate>,
    },
}

/// Where a chunk's old lines were looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChunkScope {
    /// After the first `n` lines (0: the whole file).
    After(usize),
    /// Only at the end of the file (`*** End of File`).
    EndOfFile,
}

impl EditError {
    /// The stable wire code.
    #[must_use]
    pub(crate) fn code(&self) -> Code {
        match self {
            EditError::NoOp => Code::NoOp,
            EditError::Ambiguous { .. } => Code::Ambiguous,
            EditError::TooManyPlaces { .. } => Code::TooLarge,
            EditError::Overlap { .. } => Code::Overlap,
            EditError::NoSuchLine { .. } | EditError::NotFound { .. } => Code::NotFound,
            EditError::Chunk { why, .. } => match **why {
                ChunkError::NoOp => Code::NoOp,
                ChunkError::Ambiguous { .. } => Code::Ambiguous,
                ChunkError::AnchorNotFound { .. } | ChunkError::NotFound { .. } => Code::NotFound,
                ChunkError::TooManyPlaces => Code::TooLarge,
            },
        }
    }

    /// The closest regions of a `not_found` (empty for the others).
    #[must_use]
    pub(crate) fn candidates(&self) -> &[Candidate] {
        match self {
            EditError::NotFound { candidates, .. } => candidates,
            EditError::Chunk { why, .. } => match &**why {
                ChunkError::NotFound { candidates, .. } => candidates,
                _ => &[],
            },
            _ => &[],
        }
    }

    /// Where an `ambiguous` matched (empty for the others).
    #[must_use]
    pub(crate) fn matches(&self) -> &[Range<usize>] {
        match self {
            EditError::Ambiguous { matches, .. } => matches,
            EditError::Chunk { why, .. } => match &**why {
                ChunkError::Ambiguous { matches, .. } => matches,
                _ => &[],
            },
            _ => &[],
        }
    }

    /// How many places an `ambiguous` matched (0 for the others), or [`UNCOUNTED`] when the
    /// search stopped counting ([`places`]).
    #[must_use]
    pub(crate) fn occurrences(&self) -> usize {
        match self {
            EditError::Ambiguous { occurrences, .. } => *occurrences,
            EditError::Chunk { why, .. } => match **why {
                ChunkError::Ambiguous { occurrences, .. } => occurrences,
                _ => 0,
            },
            _ => 0,
        }
    }

    /// The other edit of an `overlap`.
    #[must_use]
    pub(crate) fn other_edit(&self) -> Option<usize> {
        match self {
            EditError::Overlap { other_edit, .. } => Some(*other_edit),
            _ => None,
        }
    }

    /// Where the new text already is, for a `not_found` that may already be applied.
    #[must_use]
    pub(crate) fn already_applied(&self) -> Option<usize> {
        match self {
            EditError::NotFound { clue, .. } => match clue.as_deref() {
                Some(Clue::AlreadyApplied { at }) => Some(*at),
                _ => None,
            },
            EditError::Chunk { why, .. } => match **why {
                ChunkError::NotFound {
                    already_applied, ..
                } => already_applied,
                _ => None,
            },
            _ => None,
        }
    }
}

/// Why a file could not be planned at all (its edits are skipped).
#[derive(Debug, Clone, PartialEq)]
pub enum FileError {
    /// Its path could not be resolved, or the file read, beneath the root (the writer's error,
    /// which names the path it was about).
    Fs(FsError),
    /// Its bytes are not text redline can edit (binary, or not UTF-8).
    Decode(DecodeError),
    /// Its version is not the request's `expectHash` (§3a).
    Stale {
        /// The version the request expected.
        expected: String,
        /// The version of the bytes as read.
        actual: String,
    },
}

impl FileError {
    /// The stable wire code.
    #[must_use]
    pub fn code(&self) -> Code {
        match self {
            FileError::Fs(e) => e.code(),
            FileError::Decode(e) => e.code(),
            FileError::Stale { .. } => Code::Stale,
        }
    }
}

impl From<FsError> for FileError {
    fn from(e: FsError) -> FileError {
        FileError::Fs(e)
    }
}
