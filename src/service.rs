//! The one sequence every face calls: lock → recover → resolve → commit → report.
//!
//! [`run`] does it headless (`apply`, `resolve`, serve, MCP, LSP) holding the root's writer lock
//! from reading to commit (SPEC §7). The reviewer resolves without the lock (a human cannot hold
//! it while deciding), then commits its accepted edits through the same [`lock`] and [`commit`],
//! which re-check every file under the lock.

use crate::engine::document::PositionEncoding;
use crate::engine::plan::{self, Op, Plan, ResolveOptions};
use crate::error::{Code, ExitStatus};
use crate::hash::Marks;
use crate::report::message::Vocabulary;
use crate::report::response::{RequestFailure, Response};
use crate::report::{self, Mode, WriteOutcome};
use crate::request::{Request, RequestError};
use crate::write::{
    Change, Expect, FsError, FsErrorKind, Held, Limits, RecoveryAction, RecoveryReport, RolledBack,
    Root, Stale, WriterLock,
};
use std::path::PathBuf;
use std::sync::Arc;

/// Settings shared by every command.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The root directory every request path resolves beneath (`--root`).
    pub root: PathBuf,
    /// How `character` in positions counts (`--position-encoding`, default UTF-16).
    pub encoding: PositionEncoding,
    /// Size limits on requests and files.
    pub limits: Limits,
    /// How far matching goes (`--tolerance`, SPEC §3b).
    pub tolerance: crate::engine::relaxed::Tolerance,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            root: PathBuf::from("."),
            encoding: PositionEncoding::Utf16,
            limits: Limits::default(),
            tolerance: Default::default(),
        }
    }
}

/// The result of a headless run.
#[derive(Debug)]
pub struct Run {
    /// The response, or the request-level failure (bad request, exit 2).
    pub response: Result<Response, RequestFailure>,
    /// The process exit status the run maps to.
    pub exit: ExitStatus,
    /// The resolved plan, when the request got that far (the response's edits are made from it).
    pub(crate) plan: Option<Arc<Plan>>,
    /// Why the commit failed, when it did (the writer's error, naming the path it was about).
    pub(crate) commit_failure: Option<FsError>,
}

impl Run {
    pub(crate) fn failed(e: &RequestError) -> Run {
        Run::failed_in(e, Vocabulary::Cli)
    }

    /// [`Run::failed`], the hint naming redline's commands as `vocabulary` does.
    pub(crate) fn failed_in(e: &RequestError, vocabulary: Vocabulary) -> Run {
        Run {
            response: Err(RequestFailure::worded(e, vocabulary)),
            exit: ExitStatus::Usage,
            plan: None,
            commit_failure: None,
        }
    }

    /// The response as pretty JSON text, fields in declaration order.
    pub fn to_pretty(&self) -> String {
        let s = match &self.response {
            Ok(r) => serde_json::to_string_pretty(r),
            Err(f) => serde_json::to_string_pretty(f),
        };
        // Invariant: as for `to_json`.
        s.unwrap_or_else(|_| "null".into())
    }

    /// The response as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let v = match &self.response {
            Ok(r) => serde_json::to_value(r),
            Err(f) => serde_json::to_value(f),
        };
        // Invariant: the wire types hold only strings, numbers, bools and containers of them.
        v.unwrap_or(serde_json::Value::Null)
    }
}

/// Opens the root directory, or a request error naming it.
pub(crate) fn open_root(settings: &Settings) -> Result<Root, RequestError> {
    Root::open(&settings.root, settings.limits).map_err(|e| {
        RequestError::new(format!(
            "cannot use {} as the root: {}",
            settings.root.display(),
            e.message()
        ))
        .hint("pass an existing directory with --root")
    })
}

/// The changes a successful plan commits.
pub(crate) fn changes(plan: &Plan, accept: &dyn Fn(usize, usize) -> bool) -> Vec<Change> {
    changes_held(plan, accept).0
}

/// [`changes`], and for each the bytes the plan read of its path when its expectation is
/// [`Expect::Unchanged`] (for the commit's content check: see [`Root::commit_held`]), with the
/// marks of their hashing (for the new bytes' version to resume from).
pub(crate) fn changes_held<'p>(
    plan: &'p Plan,
    accept: &dyn Fn(usize, usize) -> bool,
) -> (Vec<Change>, Vec<Option<Held<'p>>>, Vec<Option<&'p Marks>>) {
    let mut out = Vec::new();
    let mut held = Vec::new();
    let mut marks = Vec::new();
    for (fi, f) in plan.files.iter().enumerate() {
        let expect_orig = || expect_of(f.original.as_ref(), Expect::Any);
        match f.op {
            Op::Delete => {
                out.push(Change::Delete {
                    path: f.path.clone(),
                    expect: expect_orig(),
                });
                held.push(held_of(f.original.as_ref()));
                marks.push(marks_of(f.original.as_ref()));
            }
            Op::Create => {
                if let Some(bytes) = f.render(|_| true) {
                    out.push(Change::Write {
                        path: f.path.clone(),
                        bytes,
                        expect: Expect::Absent,
                    });
                    held.push(None);
                    marks.push(None);
                }
            }
            Op::Overwrite | Op::Edit => {
                if let Some(bytes) = f.render(|e| accept(fi, e)) {
                    let same = f.original.as_ref().is_some_and(|o| match &o.raw {
                        Some(raw) => *raw == bytes,
                        None => o.doc.is_bytes(&bytes),
                    });
                    if !same {
                        out.push(Change::Write {
                            path: f.path.clone(),
                            bytes,
                            expect: expect_orig(),
                        });
                        held.push(held_of(f.original.as_ref()));
                        marks.push(marks_of(f.original.as_ref()));
                    }
                }
            }
            Op::Move => {
                if let (Some(bytes), Some(to)) = (f.render(|e| accept(fi, e)), &f.move_to) {
                    out.push(Change::Write {
                        path: to.clone(),
                        bytes,
                        expect: expect_of(f.replaced.as_deref(), Expect::Absent),
                    });
                    held.push(held_of(f.replaced.as_deref()));
                    marks.push(marks_of(f.replaced.as_deref()));
                    out.push(Change::Delete {
                        path: f.path.clone(),
                        expect: expect_orig(),
                    });
                    held.push(held_of(f.original.as_ref()));
                    marks.push(marks_of(f.original.as_ref()));
                }
            }
        }
    }
    (out, held, marks)
}

/// What a change requires of a path the plan read as `read` (`otherwise` when it read nothing
/// there from disk).
fn expect_of(read: Option<&plan::Original>, otherwise: Expect) -> Expect {
    match read.and_then(|o| o.fingerprint.clone()) {
        Some(fp) => Expect::Unchanged(fp),
        None => otherwise,
    }
}

/// The bytes the plan read from disk as `read`, exactly those its fingerprint was taken of
/// (a document is its BOM and its text, as decoded without change; an undecoded file its raw
/// bytes); `None` when it holds neither.
fn held_of(read: Option<&plan::Original>) -> Option<Held<'_>> {
    let o = read.filter(|o| o.fingerprint.is_some())?;
    match &o.raw {
        Some(raw) => Some(Held {
            head: raw,
            tail: &[],
        }),
        None if o.decoded => Some(Held {
            head: if o.doc.bom { b"\xEF\xBB\xBF" } else { b"" },
            tail: o.doc.text.as_bytes(),
        }),
        None => None,
    }
}

/// The marks of the hashing of the bytes [`held_of`] gives of `read`.
fn marks_of(read: Option<&plan::Original>) -> Option<&crate::hash::Marks> {
    held_of(read).and(read.map(|o| &o.marks))
}

/// Resolves `req` without the writer lock, for the faces that do not write themselves or not
/// yet: hooks, `watch`, the reviewer before its human decides. The request is checked (its
/// documents allowed only for `resolve`) and bounded as [`run`] does, then resolved under the
/// settings' tolerance.
pub(crate) fn resolve(
    req: &Request,
    root: &Root,
    settings: &Settings,
    mode: Mode,
) -> Result<Plan, RequestError> {
    let opts = options(mode, settings);
    plan::check_request(req, opts)
        .and_then(|()| crate::request::limits::check_edits(req, settings.limits.max_edits))?;
    plan::resolve(req, root, opts)
}

/// How `mode` resolves under `settings`.
fn options(mode: Mode, settings: &Settings) -> ResolveOptions {
    ResolveOptions {
        allow_documents: mode == Mode::Resolve,
        tolerance: settings.tolerance,
    }
}

/// The root's writer lock, taken after finishing any interrupted commit (SPEC §7: every writing
/// command recovers first).
pub(crate) struct Locked {
    lock: WriterLock,
    /// What recovery did, when there was anything to do.
    pub recovered: Option<RecoveryReport>,
}

/// Takes the root's writer lock (waiting its turn) and recovers an interrupted commit.
pub(crate) fn lock(root: &Root) -> Result<Locked, FsError> {
    let lock = root.lock()?;
    let report = root.recover(&lock)?;
    Ok(Locked {
        lock,
        recovered: (report.action != RecoveryAction::Nothing).then_some(report),
    })
}

/// What [`commit`] did.
#[derive(Debug)]
pub(crate) struct Committed {
    /// What was written, or how the commit failed.
    pub outcome: WriteOutcome,
    /// The process exit status the commit maps to.
    pub exit: ExitStatus,
    /// Paths that were no longer as the plan found them (nothing was written then).
    pub stale: Vec<String>,
}

/// Commits `changes` (see [`changes`]) under `locked`. Changes of a plan resolved before the
/// lock was taken (the reviewer's) are all checked first, so that every stale file is named, not
/// only the first; then the writer commits all or nothing, checking each fingerprint again.
pub(crate) fn commit(
    root: &Root,
    locked: &Locked,
    changes: &[Change],
    resolved_under_lock: bool,
) -> Committed {
    commit_held(root, locked, changes, &[], resolved_under_lock)
}

/// [`commit`], with the bytes the plan read for each change where it holds them (see
/// [`changes_held`]).
fn commit_held(
    root: &Root,
    locked: &Locked,
    changes: &[Change],
    held: &[Option<Held<'_>>],
    resolved_under_lock: bool,
) -> Committed {
    if changes.is_empty() {
        // Every file came out unchanged: nothing to write, and `written` says so.
        return Committed {
            outcome: WriteOutcome::default(),
            exit: ExitStatus::Success,
            stale: Vec::new(),
        };
    }
    let stale = if resolved_under_lock {
        Vec::new()
    } else {
        stale_paths(root, changes)
    };
    if let Some(first) = stale.first() {
        let failed = failed(
            &FsErrorKind::Stale(Stale::ChangedSinceResolved).at(first),
            None,
        );
        return Committed {
            outcome: failed.0,
            exit: failed.1,
            stale,
        };
    }
    let (outcome, exit) = match root.commit_held(&locked.lock, changes, held) {
        Ok(rep) => {
            let warnings = rep.warnings;
            let outcome = WriteOutcome {
                written: true,
                warnings,
                durability_unknown: rep.durability_unknown,
                recovered: rep
                    .recovered
                    .filter(|r| r.action != RecoveryAction::Nothing),
                ..WriteOutcome::default()
            };
            (outcome, ExitStatus::Success)
        }
        Err(e) => failed(&e.error, Some(e.rolled_back)),
    };
    let mut stale = Vec::new();
    if let Some(e) = &outcome.failure
        && e.code() == Code::Stale
    {
        stale.push(e.path.clone());
    }
    Committed {
        outcome,
        exit,
        stale,
    }
}

/// A write that did not happen, in the report's terms.
pub(crate) fn failed(e: &FsError, rolled_back: Option<RolledBack>) -> (WriteOutcome, ExitStatus) {
    let outcome = WriteOutcome {
        failure: Some(e.clone()),
        rolled_back,
        ..WriteOutcome::default()
    };
    (outcome, e.code().exit_status())
}

/// Paths of `changes` that are no longer as the plan found them.
fn stale_paths(root: &Root, changes: &[Change]) -> Vec<String> {
    let mut out = Vec::new();
    for ch in changes {
        let (path, expect) = match ch {
            Change::Write { path, expect, .. } | Change::Delete { path, expect } => (path, expect),
        };
        let changed = match expect {
            Expect::Any => false,
            Expect::Absent => root.exists(path).unwrap_or(true),
            Expect::Unchanged(fp) => match root.read(path) {
                Ok(snap) => snap.fingerprint.version != fp.version,
                Err(_) => true,
            },
        };
        if changed && !out.contains(path) {
            out.push(path.clone());
        }
    }
    out
}

/// Resolves `req` and, in `Mode::Apply`, writes it, all under the root's writer lock.
pub fn run(req: &Request, mode: Mode, settings: &Settings) -> Run {
    run_in(req, mode, settings, Vocabulary::Cli)
}

/// [`run`], the response's hints naming redline's commands as `vocabulary` does (the face's).
pub(crate) fn run_in(
    req: &Request,
    mode: Mode,
    settings: &Settings,
    vocabulary: Vocabulary,
) -> Run {
    let mode = if req.dry_run && mode == Mode::Apply {
        Mode::DryRun
    } else {
        mode
    };
    let root = match open_root(settings) {
        Ok(r) => r,
        Err(e) => return Run::failed_in(&e, vocabulary),
    };
    let opts = options(mode, settings);
    if let Err(e) = plan::check_request(req, opts)
        .and_then(|()| crate::request::limits::check_edits(req, settings.limits.max_edits))
    {
        return Run::failed_in(&e, vocabulary);
    }
    // A writing run resolves before it takes the writer lock, so that the lock is held only for
    // the commit, never for another request's resolution. SPEC §7's promise is kept: under the
    // lock, a plan whose files changed meanwhile (or that recovery touched) is resolved again,
    // and a commit that finds a file stale that the probes missed resolves again once.
    let optimistic = mode
        .writes()
        .then(|| (probes(&root, req), plan::resolve(req, &root, opts)));
    let locked = if mode.writes() {
        match lock(&root) {
            Ok(l) => Some(l),
            Err(e) => {
                let plan = Arc::new(Plan { files: Vec::new() });
                let (wrote, _) = failed(&e, Some(RolledBack::NotLocked));
                // The response lists the failure (it names no file of the request).
                let resp = report::response(plan, mode, settings.encoding, &wrote, vocabulary);
                return Run {
                    response: Ok(resp),
                    exit: e.code().exit_status().worst(ExitStatus::WriteFailed),
                    plan: None,
                    commit_failure: wrote.failure,
                };
            }
        }
    } else {
        None
    };
    // Whether the plan resolved outside the lock still describes the tree under the lock.
    let mut current = false;
    let resolved = match (optimistic, &locked) {
        (Some((before, plan)), Some(l))
            if l.recovered.is_none() && probes(&root, req) == before =>
        {
            current = true;
            plan
        }
        _ => plan::resolve(req, &root, opts),
    };
    let mut plan = match resolved {
        Ok(p) => p,
        Err(e) => return Run::failed_in(&e, vocabulary),
    };
    let (mut wrote, exit, written, versions) = loop {
        if !plan.ok() {
            let plan = Arc::new(plan);
            let resp = report::response(
                Arc::clone(&plan),
                mode,
                settings.encoding,
                &WriteOutcome::default(),
                vocabulary,
            );
            return Run {
                response: Ok(resp),
                exit: worst_code(&plan),
                plan: Some(plan),
                commit_failure: None,
            };
        }
        let Some(locked) = &locked else {
            break (
                WriteOutcome::default(),
                ExitStatus::Success,
                Vec::new(),
                Vec::new(),
            );
        };
        let (written, held, marks) = changes_held(&plan, &|_, _| true);
        let (done, versions) = commit_hashing(&root, locked, &written, &held, &marks);
        // A file changed between the outside resolution and the lock in a way its metadata did
        // not show (an in-place write within one timestamp tick): resolve again, under the lock.
        if current && !done.stale.is_empty() {
            current = false;
            plan = match plan::resolve(req, &root, opts) {
                Ok(p) => p,
                Err(e) => return Run::failed_in(&e, vocabulary),
            };
            continue;
        }
        break (done.outcome, done.exit, written, versions);
    };
    if let Some(locked) = locked {
        wrote.recovered = wrote.recovered.take().or(locked.recovered);
    }
    // The response takes the new texts and their versions from what was written: each file is
    // rendered and hashed once.
    let rendered: Vec<report::Rendered<'_>> = written
        .iter()
        .zip(versions)
        .filter_map(|(c, v)| match (c, v) {
            (Change::Write { path, bytes, .. }, Some(version)) => Some(report::Rendered {
                path,
                bytes,
                version,
            }),
            _ => None,
        })
        .collect();
    let plan = Arc::new(plan);
    let resp = report::response_rendered(
        Arc::clone(&plan),
        mode,
        settings.encoding,
        &wrote,
        &rendered,
        vocabulary,
    );
    Run {
        response: Ok(resp),
        exit,
        plan: Some(plan),
        commit_failure: wrote.failure,
    }
}

/// [`commit`] of a plan resolved under the lock, and the versions of the new bytes of its
/// writes (the response's `hashAfter`). Each resumes from the marks of the bytes it replaces
/// where it has them (an edit late in a big file rehashes only what follows it: see
/// [`Marks`]). Past a megabyte they are hashed on a second thread while the commit writes and
/// waits for the disk: on a big file hashing costs as much as writing.
fn commit_hashing(
    root: &Root,
    locked: &Locked,
    changes: &[Change],
    held: &[Option<Held<'_>>],
    marks: &[Option<&Marks>],
) -> (Committed, Vec<Option<String>>) {
    let hash_all = || {
        changes
            .iter()
            .enumerate()
            .map(|(i, c)| match c {
                Change::Write { bytes, .. } => Some(
                    match (
                        held.get(i).copied().flatten(),
                        marks.get(i).copied().flatten(),
                    ) {
                        (Some(old), Some(marks)) => {
                            marks.version_of_edited(&[old.head, old.tail], bytes)
                        }
                        _ => crate::hash::version(bytes),
                    },
                ),
                Change::Delete { .. } => None,
            })
            .collect::<Vec<_>>()
    };
    let size: usize = changes
        .iter()
        .map(|c| match c {
            Change::Write { bytes, .. } => bytes.len(),
            Change::Delete { .. } => 0,
        })
        .sum();
    if size < 1 << 20 {
        return (commit_held(root, locked, changes, held, true), hash_all());
    }
    std::thread::scope(|s| {
        let hashing = std::thread::Builder::new().spawn_scoped(s, hash_all).ok();
        let done = commit_held(root, locked, changes, held, true);
        // A hasher that could not start or panicked leaves the response to hash the texts
        // itself.
        (
            done,
            hashing.and_then(|h| h.join().ok()).unwrap_or_default(),
        )
    })
}

/// What is at each path of the request now (metadata only, symlinks followed), to tell whether
/// anything changed between resolving outside the writer lock and holding it.
fn probes(root: &Root, req: &Request) -> Vec<crate::write::Probe> {
    req.files
        .iter()
        .flat_map(|f| std::iter::once(&f.path).chain(f.move_to.as_ref()))
        .map(|p| root.probe(p))
        .collect()
}

/// The exit status of a failed plan: 1 for rejected edits and files, 3 for I/O and permission.
fn worst_code(plan: &Plan) -> ExitStatus {
    let mut exit = ExitStatus::Rejected;
    for f in &plan.files {
        if let Some(fl) = &f.failure
            && matches!(
                fl.code(),
                Code::PermissionDenied | Code::Io | Code::Internal
            )
        {
            exit = exit.worst(fl.code().exit_status());
        }
    }
    exit
}
