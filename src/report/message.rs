//! The words for a failure: the message and the hint every face shows (the response's
//! `message`/`hint`, the hook's reason, the reviewer's drawer), written from the engine's typed
//! errors. Prose uses 1-based line numbers (SPEC §4). Edits are named by their 0-based index, as
//! the response's `edit` field counts them ([`Numbering::Index`], every wire output), or 1-based
//! where a person reads them beside the reviewer's `#1`, `#2` ([`Numbering::Ordinal`]).

use crate::engine::document::{DecodeError, Document};
use crate::engine::failure::{ChunkError, ChunkScope, Clue, EditError, FileError, places};
use crate::engine::hint::Candidate;
use crate::engine::plan::Warning;
use crate::request::{Hint, RequestError};
use crate::write::{
    CommitWarning, FsError, FsErrorKind, JOURNAL_DIR, NotRegular, Outside, RecoveryAction,
    RecoveryReport, RolledBack, Stale, Step,
};
use rustix::io::Errno;

/// What is said about a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Said {
    /// One sentence on what went wrong and where.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

/// How a face names redline's commands in its hints: the command line's `redline read PATH` and
/// `redline resolve`, or the MCP tools `read_file` (with its JSON arguments) and `preview_edits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Vocabulary {
    /// The command line's (and every face that shows commands to a person: serve, LSP, hooks).
    #[default]
    Cli,
    /// The MCP server's tools.
    Mcp,
}

impl Vocabulary {
    /// The command that reads `args` (a path, perhaps with range flags), as code; `None`: the
    /// command alone.
    fn read(self, args: Option<&str>) -> String {
        match (self, args) {
            (Vocabulary::Cli, None) => "`redline read`".to_string(),
            (Vocabulary::Cli, Some(args)) => format!("`redline read {args}`"),
            (Vocabulary::Mcp, args) => match args.unwrap_or_default().trim() {
                "" => "`read_file`".to_string(),
                path => format!(
                    "`read_file` with {{\"path\": {}}}",
                    serde_json::to_string(path).unwrap_or_default()
                ),
            },
        }
    }

    /// The command that previews a batch without writing, as code.
    fn preview(self) -> &'static str {
        match self {
            Vocabulary::Cli => "`redline resolve`",
            Vocabulary::Mcp => "`preview_edits`",
        }
    }
}

/// The hint of a request error, naming redline's commands as `vocabulary` does.
#[must_use]
pub(crate) fn request_hint(e: &RequestError, vocabulary: Vocabulary) -> Option<String> {
    Some(match e.hint.as_ref()? {
        Hint::Text(text) => text.clone(),
        Hint::ReadInstead { args } => format!(
            "read it with {} (MCP: read_file; serve: read)",
            vocabulary.read(Some(args))
        ),
        Hint::VersionFromRead => format!(
            "use the `sha256:<64 hex digits>` string printed by {}",
            vocabulary.read(None)
        ),
        Hint::DocumentsOnlyToPreview => format!(
            "drop `documents` and let redline read the files, or use {}",
            vocabulary.preview()
        ),
    })
}

impl RequestError {
    /// What to do about it, as the command line says it.
    #[must_use]
    pub fn hint_text(&self) -> Option<String> {
        request_hint(self, Vocabulary::Cli)
    }
}

/// How a message names an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Numbering {
    /// By its 0-based index, as the response's `edit` field (the wire's messages).
    Index,
    /// 1-based, as the reviewer's screen counts them.
    Ordinal,
}

/// The message and hint of edit `index` of `path`, whose offsets are into `doc` (the document
/// the edit was matched against; every failed edit has one, so its absence only shows as line 0),
/// as the wire says them (edits by their 0-based index).
#[must_use]
pub(crate) fn edit(e: &EditError, path: &str, index: usize, doc: Option<&Document>) -> Said {
    edit_in(e, path, index, doc, Vocabulary::Cli)
}

/// [`edit`], naming redline's commands as `vocabulary` does.
#[must_use]
pub(crate) fn edit_in(
    e: &EditError,
    path: &str,
    index: usize,
    doc: Option<&Document>,
    vocabulary: Vocabulary,
) -> Said {
    edit_said(e, path, index, doc, Numbering::Index, vocabulary)
}

/// [`edit`], naming edits as `numbering` says.
#[must_use]
pub(crate) fn edit_numbered(
    e: &EditError,
    path: &str,
    index: usize,
    doc: Option<&Document>,
    numbering: Numbering,
) -> Said {
    edit_said(e, path, index, doc, numbering, Vocabulary::Cli)
}

fn edit_said(
    e: &EditError,
    path: &str,
    index: usize,
    doc: Option<&Document>,
    numbering: Numbering,
    vocabulary: Vocabulary,
) -> Said {
    let shown = |i: usize| match numbering {
        Numbering::Index => i,
        Numbering::Ordinal => i + 1,
    };
    let line = |offset: usize| doc.map_or(0, |d| d.line_of(offset) + 1);
    let lines = |matches: &[std::ops::Range<usize>]| {
        matches
            .iter()
            .map(|m| line(m.start).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let more = |occurrences: usize, shown: usize| if occurrences > shown { ", …" } else { "" };
    let i = shown(index);
    let (message, hint) = match e {
        EditError::NoOp => (
            format!("edit {i} for {path}: oldText and newText are identical"),
            "drop this edit, or change newText".to_string(),
        ),
        EditError::NoSuchLine { after, lines } => (
            format!(
                "edit {i} for {path}: there is no line {after} to insert after (the file has {lines} lines)"
            ),
            format!("insert_line must be between 0 and {lines}"),
        ),
        EditError::Ambiguous {
            matches,
            occurrences,
            relaxed: false,
        } => (
            format!(
                "edit {i} for {path}: oldText matches {} places (lines {}{})",
                places(*occurrences),
                lines(matches),
                more(*occurrences, matches.len())
            ),
            "add surrounding lines to oldText so that it matches once, or set replaceAll"
                .to_string(),
        ),
        EditError::Ambiguous {
            matches,
            occurrences,
            relaxed: true,
        } => (
            format!(
                "edit {i} for {path}: oldText is not in the file as written, and with its formatting relaxed it matches {} places (lines {}{})",
                places(*occurrences),
                lines(matches),
                more(*occurrences, matches.len())
            ),
            "copy oldText from the file as it is, with enough lines to match once".to_string(),
        ),
        EditError::TooManyPlaces {
            relaxed: false,
            replace_all: true,
        } => (
            format!(
                "edit {i} for {path}: replaceAll's oldText occurs at too many places that overlap \
                 one another (or inside ligatures or combined characters) in this file to be \
                 checked within redline's work limit (linear in the file plus the request)"
            ),
            "send this replaceAll edit in a request of its own (the limit is shared by the \
             request's edits), or give oldText more context so that its occurrences do not \
             overlap"
                .to_string(),
        ),
        EditError::TooManyPlaces { relaxed: false, .. } => (
            format!(
                "edit {i} for {path}: oldText occurs inside ligatures or combined characters (such \
                 as `ﬁ` or a letter with a combining mark) at too many places in this file to be \
                 checked within redline's work limit (linear in the file plus the request)"
            ),
            "give oldText more context (whole lines around it) so that it occurs at fewer places"
                .to_string(),
        ),
        EditError::TooManyPlaces { relaxed: true, .. } => (
            format!(
                "edit {i} for {path}: oldText is not in the file as written, and with its \
                 formatting relaxed its lines occur (with other indentation) at too many places \
                 to be checked within redline's work limit (linear in the file plus the request)"
            ),
            "copy oldText from the file as it is, with enough lines to match once".to_string(),
        ),
        EditError::Overlap { other_edit, at } => (
            format!(
                "edit {i} for {path} overlaps edit {} (line {})",
                shown(*other_edit),
                line(*at)
            ),
            "merge the two edits into one, or make their oldText not share text".to_string(),
        ),
        EditError::NotFound { candidates, clue } => not_found(
            &format!("edit {i} for {path}"),
            path,
            candidates,
            clue.as_deref(),
            &line,
            vocabulary,
        ),
        EditError::Chunk { line: at, why } => {
            let (message, hint) = chunk(*at, why, &line, &lines, &more);
            (format!("{path}: {message}"), hint)
        }
    };
    Said {
        message,
        hint: Some(hint),
    }
}

/// The message and hint of a file of the request (`path` as the request wrote it) that could
/// not be planned.
#[must_use]
pub(crate) fn file(e: &FileError, path: &str) -> Said {
    file_in(e, path, Vocabulary::Cli)
}

/// [`file`], naming redline's commands as `vocabulary` does.
#[must_use]
pub(crate) fn file_in(e: &FileError, path: &str, vocabulary: Vocabulary) -> Said {
    match e {
        // The writer's words, without the path: the response names the file beside them.
        // A file that is not there gets the hint to create it when the writer had none.
        FileError::Fs(e) => Said {
            message: e.message(),
            hint: e.hint().map(str::to_string).or_else(|| {
                (e.code() == crate::error::Code::FileNotFound).then(|| {
                    format!(
                        "check the path, or create the file with {{\"path\": \"{path}\", \"content\": …}}"
                    )
                })
            }),
        },
        FileError::Decode(e) => Said {
            message: format!("{path}: {e}"),
            hint: Some(
                match e {
                    DecodeError::Binary { .. } => "redline edits text files only",
                    DecodeError::Encoding { .. } => {
                        "redline edits UTF-8 text only; convert the file to UTF-8 first"
                    }
                }
                .to_string(),
            ),
        },
        FileError::Stale { expected, actual } => Said {
            message: format!("{path} has version {actual}, not the expected {expected}"),
            hint: Some(format!(
                "re-read the file ({}) and redo the edits against it",
                vocabulary.read(Some(path))
            )),
        },
    }
}

/// The message of a warning about `path` (as the request wrote it).
#[must_use]
pub(crate) fn warning(w: &Warning, path: &str) -> String {
    match w {
        Warning::MoveOverwrites { to } => format!("{to} exists; the move overwrites it"),
        Warning::ContentReplaces => format!("{path} exists; its content is replaced"),
        Warning::HardLinks { count } => {
            format!("{path} has {count} hard links; the others keep the old content")
        }
    }
}

/// The message of a warning the writer raised while committing.
#[must_use]
pub(crate) fn commit_warning(w: &CommitWarning) -> String {
    match w {
        CommitWarning::HardLinksReplaced { count, .. } => format!(
            "the file had {count} hard links; it was replaced, and its other links keep the old content"
        ),
    }
}

/// The message and hint of a commit that failed.
#[must_use]
pub(crate) fn write(e: &FsError) -> Said {
    Said {
        message: e.to_string(),
        hint: e.hint().map(str::to_string),
    }
}

/// A `not_found` edit's message and hint; `head` names the edit ("edit 3 for src/a.rs").
fn not_found(
    head: &str,
    path: &str,
    candidates: &[Candidate],
    clue: Option<&Clue>,
    line: &dyn Fn(usize) -> usize,
    vocabulary: Vocabulary,
) -> (String, String) {
    match clue {
        Some(Clue::Reindent { at, why }) => (
            format!(
                "{head}: oldText matches line {} only with its indentation changed, and {why}",
                line(*at)
            ),
            "give newText the indentation of oldText (or send oldText as the file has it)"
                .to_string(),
        ),
        Some(Clue::AlreadyApplied { at }) => {
            let line = line(*at);
            (
                format!(
                    "{head}: oldText not found; newText occurs at line {line}, so the edit may already be applied"
                ),
                format!(
                    "check line {line} of {path}; if the change is not there yet, re-read the file ({}) and copy oldText exactly",
                    vocabulary.read(Some(path))
                ),
            )
        }
        None => {
            let near = candidates
                .first()
                .map(|c| {
                    format!(
                        "; closest match at line {} ({:.0}% similar)",
                        line(c.span.start),
                        c.score * 100.0
                    )
                })
                .unwrap_or_default();
            (
                format!("{head}: oldText not found{near}"),
                format!(
                    "re-read the file ({}) and copy oldText exactly",
                    vocabulary.read(Some(path))
                ),
            )
        }
    }
}

const REREAD: &str = "re-read the file and copy the chunk's context and `-` lines exactly";

/// A chunk's message (without its path) and hint; `at` is the chunk's line in the patch.
fn chunk(
    at: usize,
    why: &ChunkError,
    line: &dyn Fn(usize) -> usize,
    lines: &dyn Fn(&[std::ops::Range<usize>]) -> String,
    more: &dyn Fn(usize, usize) -> &'static str,
) -> (String, String) {
    // " after line N" (1-based) when the search started below the first line.
    let after = |n: usize| {
        if n == 0 {
            String::new()
        } else {
            format!(" after line {n}")
        }
    };
    match why {
        ChunkError::NoOp => (
            format!("the chunk at patch line {at} changes nothing"),
            "drop this chunk, or give it `-` and `+` lines".to_string(),
        ),
        ChunkError::AnchorNotFound { anchor, after: n } => (
            format!(
                "the anchor `@@ {anchor}` of the chunk at patch line {at} was not found{}",
                after(*n)
            ),
            "anchors must be lines of the file, in file order, after the previous chunk"
                .to_string(),
        ),
        ChunkError::Ambiguous {
            matches,
            occurrences,
        } => (
            format!(
                "the lines of the chunk at patch line {at} match {} places (starting at lines {}{})",
                places(*occurrences),
                lines(matches),
                more(*occurrences, matches.len())
            ),
            "add context lines or an `@@ anchor` line so that the chunk matches once".to_string(),
        ),
        ChunkError::TooManyPlaces => (
            format!(
                "the lines of the chunk at patch line {at} occur at too many places in this \
                 repetitive file to be located within redline's work limit (linear in the file \
                 plus the patch)"
            ),
            "give the chunk more distinctive context lines or an `@@ anchor` line".to_string(),
        ),
        ChunkError::NotFound {
            scope,
            already_applied,
            ..
        } => {
            let where_ = match scope {
                ChunkScope::EndOfFile => " at the end of the file".to_string(),
                ChunkScope::After(n) => after(*n),
            };
            match already_applied {
                Some(offset) => {
                    let l = line(*offset);
                    (
                        format!(
                            "the lines of the chunk at patch line {at} were not found{where_}, but its new \
                             lines are at line {l}: the chunk may already be applied"
                        ),
                        format!("check line {l}; if the change is not there yet, {REREAD}"),
                    )
                }
                None => (
                    format!("the lines of the chunk at patch line {at} were not found{where_}"),
                    REREAD.to_string(),
                ),
            }
        }
    }
}

// The writer's words (`write::FsError`): the message after the path, and the hint.

/// Prose for what recovery did, or `None` when there was nothing to recover.
pub(crate) fn recovery(r: &RecoveryReport) -> Option<String> {
    let paths = r.paths.join(", ");
    match r.action {
        RecoveryAction::Nothing => None,
        RecoveryAction::Cleaned => {
            Some("an interrupted commit had changed nothing; its leftovers were removed".into())
        }
        RecoveryAction::RolledBack => Some(format!(
            "an interrupted commit was rolled back: {paths} are as before it"
        )),
        RecoveryAction::RolledForward => Some(format!(
            "an interrupted commit had landed; its cleanup was finished for {paths}"
        )),
    }
}

impl std::fmt::Display for RolledBack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RolledBack::NothingWritten => f.write_str("nothing was written"),
            RolledBack::RecoveryFailed => f.write_str(
                "an earlier interrupted commit could not be recovered; nothing new was written \
                 (run `redline recover`)",
            ),
            RolledBack::NotLocked => f.write_str(
                "nothing was written: the root could not be locked, or an earlier interrupted \
                 commit could not be recovered",
            ),
            RolledBack::TempsRemoved => {
                f.write_str("nothing was changed; temporary files were removed")
            }
            RolledBack::Restored { changes } => {
                write!(f, "every file was restored ({changes} change(s) undone)")
            }
            RolledBack::Failed(e) => write!(
                f,
                "rolling back failed ({e}); the journal in {JOURNAL_DIR} is kept: run `redline \
                 recover`"
            ),
        }
    }
}

impl std::fmt::Display for FsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, fs_message(&self.kind))
    }
}

impl FsError {
    /// What went wrong, without the path (the `Display` form is `path: message`).
    #[must_use]
    pub fn message(&self) -> String {
        fs_message(&self.kind)
    }

    /// What the user can do about it.
    #[must_use]
    pub fn hint(&self) -> Option<&'static str> {
        fs_hint(&self.kind)
    }
}

/// The message of a writer failure.
fn fs_message(kind: &FsErrorKind) -> String {
    match kind {
        FsErrorKind::Sys { step: s, errno } => {
            format!("{}: {}", step(*s), std::io::Error::from(*errno))
        }
        FsErrorKind::Outside(why) => match why {
            Outside::Empty => "the path is empty".to_string(),
            Outside::Nul => "the path contains a NUL byte".to_string(),
            Outside::Absolute => "the absolute path is outside the root".to_string(),
            Outside::DotDot => "the path leaves the root through `..`".to_string(),
            Outside::Leaves => "the path leaves the root".to_string(),
            Outside::JournalName => format!("{JOURNAL_DIR} is reserved for redline's journal"),
            Outside::IntoJournal => {
                format!("{JOURNAL_DIR} is reserved for redline's journal (the path leads into it)")
            }
            Outside::Symlink { to } => {
                format!("the symlink points outside the root (to {})", to.display())
            }
            Outside::Resolution => "the path leads outside the root (through `..`, an absolute \
                                    symlink or a symlink out)"
                .to_string(),
        },
        FsErrorKind::NameTooLong { len, max } => format!(
            "a component of the path is {len} bytes long; file names are at most {max} bytes"
        ),
        FsErrorKind::RootItself => "the path names the root directory".to_string(),
        FsErrorKind::ParentNotDirectory => "a parent of the path is not a directory".to_string(),
        FsErrorKind::NoSuchFile => "no such file".to_string(),
        FsErrorKind::NothingToDelete => "cannot delete: no such file".to_string(),
        FsErrorKind::NoParentDirectory => "the parent directory does not exist".to_string(),
        FsErrorKind::RemovedWhileRead => "the file was removed while being read".to_string(),
        FsErrorKind::NotRegular(what) => {
            let what = match what {
                NotRegular::Directory => "a directory",
                NotRegular::Fifo => "a FIFO",
                NotRegular::CharacterDevice => "a character device",
                NotRegular::BlockDevice => "a block device",
                NotRegular::Socket => "a socket",
                NotRegular::Symlink => "a symlink",
                NotRegular::Other => "not a regular file",
            };
            format!("the path is {what}, not a regular file")
        }
        FsErrorKind::KeptChanging => "the file kept changing while it was read".to_string(),
        FsErrorKind::TooLarge { limit } => {
            format!("the file is over the size limit of {limit} bytes")
        }
        FsErrorKind::GrewTooLarge => "the file grew over the size limit".to_string(),
        FsErrorKind::Stale(how) => match how {
            Stale::Replaced => "the file was replaced while the batch was being checked",
            Stale::BeingWritten => "the file is being written by another program",
            Stale::Changed => "the file changed on disk since it was read",
            Stale::ChangedSinceResolved => "the file changed on disk since the batch was resolved",
            Stale::Appeared => "the file exists now but did not when the edits were resolved",
            Stale::Deleted => "the file was deleted since it was read",
            Stale::AppearedWhileWriting => "the file appeared while the batch was being written",
            Stale::ReplacedWhileWriting => {
                "the file was replaced while the batch was being written"
            }
            Stale::WrittenWhileWriting => {
                "the file was written by another program while the batch was being written"
            }
        }
        .to_string(),
        FsErrorKind::SameFile => "two changes of the batch name the same file".to_string(),
        FsErrorKind::ReadOnlyFilesystem => "the file is on a read-only filesystem".to_string(),
        FsErrorKind::NotWritable => "the file is not writable".to_string(),
        FsErrorKind::ForeignJournal => {
            "a file redline did not write has the journal's name".to_string()
        }
        FsErrorKind::JournalUnreadable { reason } => format!("the journal is unreadable: {reason}"),
        FsErrorKind::JournalUnencodable { reason } => {
            format!("cannot encode the journal: {reason}")
        }
        FsErrorKind::RecoveryUnreachable { dir } => format!(
            "recovery cannot reach the directory {} of an interrupted commit: a directory on the \
             way was moved or replaced; the journal is kept",
            dir.display()
        ),
        FsErrorKind::RecoveryDirReplaced => {
            "the directory of an interrupted commit was replaced".to_string()
        }
        FsErrorKind::RecoveryOldMissing => {
            "the old content of an interrupted commit is missing".to_string()
        }
        FsErrorKind::RecoveryNameTaken { aside } => format!(
            "the file moved aside by an interrupted delete is at {aside} and its name is taken \
             now; the journal is kept"
        ),
        FsErrorKind::RecoveryDirsKept { dirs } => format!(
            "recovery could not remove the directories an interrupted commit created: {}; the \
             journal is kept",
            dirs.iter()
                .map(|(d, e)| format!("{} ({})", d.display(), std::io::Error::from(*e)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        FsErrorKind::ForeignLock => "the writer lock held belongs to another root".to_string(),
        FsErrorKind::NoJournalDirectory => {
            "a multi-file commit without its journal directory".to_string()
        }
        FsErrorKind::NoDirectory => "no directory after prepare".to_string(),
    }
}

/// The hint of a writer failure.
fn fs_hint(kind: &FsErrorKind) -> Option<&'static str> {
    const CHECK_PATH: &str = "check the path; it is resolved beneath --root";
    Some(match kind {
        FsErrorKind::Sys {
            step: Step::OpenRootDir,
            ..
        } => "--root must name an existing directory",
        FsErrorKind::Sys {
            step: Step::Chown,
            errno: Errno::PERM,
        } => {
            "the file belongs to another user; a safe replace would change its owner, so edit it \
             as its owner (or as root)"
        }
        FsErrorKind::Sys { errno, .. } => match *errno {
            Errno::NOENT => CHECK_PATH,
            Errno::ACCESS | Errno::PERM => {
                "check the permissions of the file and of its directory (replacing a file needs \
                 write permission on the directory)"
            }
            Errno::ROFS => "the filesystem is mounted read-only",
            Errno::NOSPC | Errno::DQUOT => {
                "free disk space or quota: a safe replace needs room for a second copy"
            }
            Errno::FBIG => "the file exceeds a size limit of the filesystem or process",
            Errno::XDEV => {
                "the path leads outside --root (through `..`, an absolute path or a symlink)"
            }
            Errno::NOTDIR => "a component of the path is not a directory",
            Errno::LOOP => "the path goes through a symlink loop",
            Errno::ISDIR => "the path is a directory",
            Errno::NAMETOOLONG => "a file name is at most 255 bytes and a path at most 4095",
            _ => "check the disk and retry",
        },
        FsErrorKind::Outside(_) => "use a path inside --root; symlinks may only point inside it",
        FsErrorKind::NameTooLong { .. } => "use a shorter file name",
        FsErrorKind::RootItself => "name a file inside --root",
        FsErrorKind::ParentNotDirectory => "check the path",
        FsErrorKind::NoSuchFile | FsErrorKind::NothingToDelete | FsErrorKind::NoParentDirectory => {
            CHECK_PATH
        }
        FsErrorKind::NotRegular(_) => "only regular files can be read or edited",
        FsErrorKind::KeptChanging => "retry when the other writer is done",
        FsErrorKind::TooLarge { .. } => "raise the size limit or edit the file another way",
        FsErrorKind::Stale(Stale::ChangedSinceResolved) => return None,
        FsErrorKind::Stale(_) => "read the file again and redo the edits",
        FsErrorKind::SameFile => {
            "merge them into one change (a symlink and its target are the same file)"
        }
        FsErrorKind::ReadOnlyFilesystem => {
            "the filesystem is mounted read-only; remount it read-write to edit"
        }
        FsErrorKind::NotWritable => "change its permissions (chmod u+w) if it should be edited",
        FsErrorKind::ForeignJournal => {
            "the name is reserved for redline's journal: move the file elsewhere"
        }
        FsErrorKind::JournalUnreadable { .. } => {
            "it was not written by this version of redline; inspect it and remove the directory \
             by hand"
        }
        FsErrorKind::RecoveryUnreachable { .. } => {
            "put the directory back where it was (a symlink may stand in its place), then run \
             `redline recover`"
        }
        FsErrorKind::RecoveryDirReplaced => {
            "recovery left it alone; inspect .redline-journal/journal and fix by hand"
        }
        FsErrorKind::RecoveryOldMissing => {
            "inspect .redline-journal/journal and the directory by hand"
        }
        FsErrorKind::RecoveryNameTaken { .. } => {
            "move one of the two away by hand, then run `redline recover`"
        }
        FsErrorKind::RecoveryDirsKept { .. } => {
            "a directory on the way was moved or replaced (by a symlink?); put it back, then run \
             `redline recover`"
        }
        FsErrorKind::RemovedWhileRead
        | FsErrorKind::GrewTooLarge
        | FsErrorKind::JournalUnencodable { .. }
        | FsErrorKind::ForeignLock
        | FsErrorKind::NoJournalDirectory
        | FsErrorKind::NoDirectory => return None,
    })
}

/// What the writer was doing when a system call failed.
fn step(s: Step) -> &'static str {
    match s {
        Step::OpenRootDir => "cannot open the root directory",
        Step::StatRootDir => "cannot stat the root directory",
        Step::OpenRootForLock => "cannot open the root for locking",
        Step::LockRoot => "cannot lock the root",
        Step::OpenRoot => "cannot open the root",
        Step::SyncRootDir => "cannot sync the root directory",
        Step::OpenParentDir => "cannot open the parent directory",
        Step::CheckParentDir => "cannot check the parent directory",
        Step::CheckDir => "cannot check the directory",
        Step::LookUpFile => "cannot look up the file",
        Step::ReadSymlink => "cannot read the symlink",
        Step::FollowSymlinks => "too many symlinks",
        Step::OpenFile => "cannot open the file",
        Step::StatFile => "cannot stat the file",
        Step::ReadFile => "cannot read the file",
        Step::Reopened => "the file was replaced while being opened",
        Step::OpenDir => "cannot open the directory",
        Step::CreateDir => "cannot create the directory",
        Step::SyncDir => "cannot sync the directory",
        Step::OpenNewDir => "cannot open the new directory",
        Step::StatDir => "cannot stat the directory",
        Step::CreateTempInDir => "cannot create a temp file in the directory",
        Step::StatTheTemp => "cannot stat the temp file",
        Step::RecordTemp => "cannot record the temp file in the journal",
        Step::LinkTemp => "cannot link the temp file into the directory",
        Step::WriteTemp => "cannot write the temp file",
        Step::Chmod => "cannot give the new file the mode of the old one",
        Step::Chown => "cannot give the new file the owner of the old one",
        Step::SyncTemp => "cannot sync the temp file to disk",
        Step::CreateTemp => "cannot create a temp file",
        Step::StatATemp => "cannot stat a temp file",
        Step::KeepOldLink => "cannot keep a link to the old file",
        Step::Replace => "cannot replace the file",
        Step::RemoveTemp => "cannot remove a temp file",
        Step::CreateFile => "cannot create the file",
        Step::DeleteFile => "cannot delete the file",
        Step::LookUpOldFile => "cannot look up the old file",
        Step::StatOldFile => "cannot stat the old file",
        Step::SyncDirs => "cannot sync a directory",
        Step::SyncDirsAfterRecovery => "cannot sync a directory after recovery",
        Step::SyncDirsAfterRollback => "cannot sync a directory after rollback",
        Step::SyncDirsAfterCommit => "cannot sync a directory after commit",
        Step::CreateJournalDir => "cannot create the journal directory",
        Step::OpenJournalDir => "cannot open the journal directory",
        Step::SyncJournalDir => "cannot sync the journal directory",
        Step::RemoveJournalDir => "cannot remove the journal directory",
        Step::CreateJournal => "cannot create the journal",
        Step::WriteJournal => "cannot write the journal",
        Step::SyncJournal => "cannot sync the journal",
        Step::InstallJournal => "cannot install the journal",
        Step::MarkCommitted => "cannot mark the journal committed",
        Step::OpenJournal => "cannot open the journal",
        Step::ReadJournal => "cannot read the journal",
        Step::RemoveJournal => "cannot remove the journal",
        Step::RecoveryOpenDir => "recovery cannot open the directory",
        Step::RecoveryStatDir => "recovery cannot stat the directory",
        Step::RecoveryLookUp => "recovery cannot look up a file",
        Step::PutOldBack => "cannot put the old file back",
        Step::RestoreDeleted => "cannot restore the deleted file",
    }
}

/// The writer's words for its typed errors: the step's words before the system's, the hints that
/// depend on the step, and what a failed commit says of the tree.
#[cfg(test)]
mod fs_words {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_failed_system_call_says_its_step_and_the_system_error() {
        let e = FsError::sys("a.txt", Step::ReadFile, Errno::NOSPC);
        assert_eq!(e.code(), crate::error::Code::Io);
        assert_eq!(
            e.to_string(),
            format!(
                "a.txt: cannot read the file: {}",
                std::io::Error::from(Errno::NOSPC)
            )
        );
        assert_eq!(
            e.hint(),
            Some("free disk space or quota: a safe replace needs room for a second copy")
        );
    }

    #[test]
    fn the_step_can_override_the_errno_hint() {
        let root = FsError::sys("/r", Step::OpenRootDir, Errno::NOENT);
        assert_eq!(root.hint(), Some("--root must name an existing directory"));
        let other = FsError::sys("a", Step::OpenDir, Errno::NOENT);
        assert_eq!(
            other.hint(),
            Some("check the path; it is resolved beneath --root")
        );
        let chown = FsError::sys("a", Step::Chown, Errno::PERM);
        assert!(
            chown
                .hint()
                .unwrap()
                .starts_with("the file belongs to another user")
        );
        let chown_io = FsError::sys("a", Step::Chown, Errno::IO);
        assert_eq!(chown_io.hint(), Some("check the disk and retry"));
    }

    #[test]
    fn refusals_carry_their_data_into_the_words() {
        let long = FsErrorKind::NameTooLong { len: 300, max: 255 }.at("x");
        assert_eq!(
            long.message(),
            "a component of the path is 300 bytes long; file names are at most 255 bytes"
        );
        let out = FsErrorKind::Outside(Outside::Symlink {
            to: PathBuf::from("/etc/passwd"),
        })
        .at("l");
        assert_eq!(
            out.to_string(),
            "l: the symlink points outside the root (to /etc/passwd)"
        );
        assert_eq!(out.code(), crate::error::Code::OutsideRoot);
        let stale = FsErrorKind::Stale(Stale::ChangedSinceResolved).at("s");
        assert_eq!(stale.hint(), None);
        assert_eq!(
            FsErrorKind::Stale(Stale::Changed).at("s").hint(),
            Some("read the file again and redo the edits")
        );
    }

    #[test]
    fn a_failed_commit_says_what_became_of_the_tree() {
        assert_eq!(
            RolledBack::Restored { changes: 3 }.to_string(),
            "every file was restored (3 change(s) undone)"
        );
        let failed = RolledBack::Failed(Box::new(FsErrorKind::RecoveryOldMissing.at("f")));
        assert_eq!(
            failed.to_string(),
            "rolling back failed (f: the old content of an interrupted commit is missing); the \
             journal in .redline-journal is kept: run `redline recover`"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under MCP the hints name the tools (`read_file` with its arguments, `preview_edits`)
    /// where the command line names its commands.
    #[test]
    fn mcp_names_its_tools() {
        let missing = EditError::NotFound {
            candidates: Vec::new(),
            clue: None,
        };
        assert_eq!(
            edit_in(&missing, "src/a b.rs", 0, None, Vocabulary::Mcp)
                .hint
                .as_deref(),
            Some(
                "re-read the file (`read_file` with {\"path\": \"src/a b.rs\"}) and copy oldText exactly"
            )
        );
        assert_eq!(
            edit(&missing, "src/a b.rs", 0, None).hint.as_deref(),
            Some("re-read the file (`redline read src/a b.rs`) and copy oldText exactly")
        );
        let mcp = Vocabulary::Mcp;
        assert_eq!(
            format!(
                "use the string printed by {}, or {}",
                mcp.read(None),
                mcp.preview()
            ),
            "use the string printed by `read_file`, or `preview_edits`"
        );
    }

    #[test]
    fn wire_counts_edits_from_zero_and_the_reviewer_from_one() {
        let doc = Document::decode(b"a\nb\nc\n".to_vec()).unwrap();
        let e = EditError::Overlap {
            other_edit: 0,
            at: 2,
        };
        let wire = edit(&e, "f.txt", 1, Some(&doc));
        assert_eq!(wire.message, "edit 1 for f.txt overlaps edit 0 (line 2)");
        let shown = edit_numbered(&e, "f.txt", 1, Some(&doc), Numbering::Ordinal);
        assert_eq!(shown.message, "edit 2 for f.txt overlaps edit 1 (line 2)");
        assert_eq!(shown.hint, wire.hint);
    }

    #[test]
    fn warnings_name_their_file() {
        let w = Warning::HardLinks { count: 3 };
        assert_eq!(
            warning(&w, "a.txt"),
            "a.txt has 3 hard links; the others keep the old content"
        );
        let c = CommitWarning::HardLinksReplaced {
            path: "a.txt".into(),
            count: 2,
        };
        assert_eq!(c.code(), w.code());
        assert_eq!(
            commit_warning(&c),
            "the file had 2 hard links; it was replaced, and its other links keep the old content"
        );
    }

    #[test]
    fn chunk_messages_name_the_path_and_the_patch_line() {
        let doc = Document::decode(b"a\nb\na\nb\n".to_vec()).unwrap();
        let e = EditError::Chunk {
            line: 7,
            why: Box::new(ChunkError::Ambiguous {
                matches: vec![0..3, 4..7],
                occurrences: 3,
            }),
        };
        assert_eq!(e.code(), crate::error::Code::Ambiguous);
        let said = edit(&e, "f.txt", 0, Some(&doc));
        assert_eq!(
            said.message,
            "f.txt: the lines of the chunk at patch line 7 match 3 places (starting at lines 1, 3, …)"
        );
    }
}
