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
    Change, Content, Expect, FsError, FsErrorKind, Held, Limits, RecoveryAction, RecoveryReport,
    RolledBack, Root, Stale, WriterLock,
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
pub(crate) fn changes<'p>(
    plan: &'p Plan,
    accept: &dyn Fn(usize, usize) -> bool,
) -> Vec<Change<'p>> {
    changes_held(plan, accept).0
}

/// [`changes`], and for each the bytes the plan read of its path when its expectation is
/// [`Expect::Unchanged`] (for the commit's content check: see [`Root::commit_held`]), and the
/// index of the plan's file it comes from. A file's new content is the plan's pieces
/// ([`plan::FilePlan::new_bytes`]), written one after the other: it is never rendered whole.
pub(crate) fn changes_held<'p>(
    plan: &'p Plan,
    accept: &dyn Fn(usize, usize) -> bool,
) -> (Vec<Change<'p>>, Vec<Option<Held<'p>>>, Vec<usize>) {
    let mut out = Vec::new();
    let mut held = Vec::new();
    let mut file = Vec::new();
    for (fi, f) in plan.files.iter().enumerate() {
        let expect_orig = || expect_of(f.original.as_ref(), Expect::Any);
        let new_content = |accept: &dyn Fn(usize) -> bool| f.new_bytes(accept).map(|n| content(&n));
        match f.op {
            Op::Delete => {
                out.push(Change::Delete {
                    path: f.path.clone(),
                    expect: expect_orig(),
                });
                held.push(held_of(f.original.as_ref()));
                file.push(fi);
            }
            Op::Create => {
                if let Some(content) = new_content(&|_| true) {
                    out.push(Change::Write {
                        path: f.path.clone(),
                        content,
                        expect: Expect::Absent,
                    });
                    held.push(None);
                    file.push(fi);
                }
            }
            Op::Overwrite | Op::Edit => {
                if let Some(content) = new_content(&|e| accept(fi, e)) {
                    let same = f.original.as_ref().is_some_and(|o| {
                        let [head, tail] = o.parts();
                        content.same_as(Held { head, tail })
                    });
                    if !same {
                        out.push(Change::Write {
                            path: f.path.clone(),
                            content,
                            expect: expect_orig(),
                        });
                        held.push(held_of(f.original.as_ref()));
                        file.push(fi);
                    }
                }
            }
            Op::Move => {
                if let (Some(content), Some(to)) = (new_content(&|e| accept(fi, e)), &f.move_to) {
                    out.push(Change::Write {
                        path: to.clone(),
                        content,
                        expect: expect_of(f.replaced.as_deref(), Expect::Absent),
                    });
                    held.push(held_of(f.replaced.as_deref()));
                    file.push(fi);
                    out.push(Change::Delete {
                        path: f.path.clone(),
                        expect: expect_orig(),
                    });
                    held.push(held_of(f.original.as_ref()));
                    file.push(fi);
                }
            }
        }
    }
    (out, held, file)
}

/// The writer's content for `new`: its pieces, borrowed from the plan (empty ones left out).
fn content<'p>(new: &plan::NewBytes<'p, '_>) -> Content<'p> {
    let mut parts = Vec::new();
    new.for_each(|part| {
        if !part.is_empty() {
            parts.push(part);
        }
    });
    Content::pieces(parts)
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
        defer_versions: false,
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
    changes: &[Change<'_>],
    resolved_under_lock: bool,
) -> Committed {
    commit_held(root, locked, changes, &[], resolved_under_lock)
}

/// [`commit`], with the bytes the plan read for each change where it holds them (see
/// [`changes_held`]).
fn commit_held(
    root: &Root,
    locked: &Locked,
    changes: &[Change<'_>],
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
fn stale_paths(root: &Root, changes: &[Change<'_>]) -> Vec<String> {
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
    let opts = ResolveOptions {
        defer_versions: mode.writes(),
        ..options(mode, settings)
    };
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
    let (mut wrote, exit, written, ahead) = loop {
        if !plan.ok() {
            plan.settle_versions();
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
                report::Ahead::default(),
            );
        };
        let (written, done, mut hashed, ahead) =
            commit_hashing(&root, locked, &plan, settings.encoding);
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
        for (f, read) in plan.files.iter_mut().zip(hashed.read) {
            if let (Some(o), Some(read)) = (f.original.as_mut(), read) {
                o.set_hashed(read);
            }
        }
        // The response takes the new bytes' versions from the commit's second thread: each
        // file is hashed once.
        let versions: Vec<report::Written> = written
            .into_iter()
            .filter_map(|(path, fi)| {
                let version = hashed.after.get_mut(fi).and_then(Option::take)?;
                Some(report::Written { path, version })
            })
            .collect();
        break (done.outcome, done.exit, versions, ahead);
    };
    if let Some(locked) = locked {
        wrote.recovered = wrote.recovered.take().or(locked.recovered);
    }
    // Every path above finished the versions (the commit's second thread, or resolving
    // without deferring); this keeps a response from ever lacking one.
    plan.settle_versions();
    let plan = Arc::new(plan);
    let resp = report::response_written(
        Arc::clone(&plan),
        mode,
        settings.encoding,
        &wrote,
        written,
        ahead,
        vocabulary,
    );
    Run {
        response: Ok(resp),
        exit,
        plan: Some(plan),
        commit_failure: wrote.failure,
    }
}

/// [`commit`] of every change of a plan resolved under the lock (with the path of each file
/// written, and the plan's file it comes from), and the versions its response needs
/// ([`Hashed`]). Past a megabyte those are hashed on a second thread from the plan itself while
/// this one writes the new contents from the same pieces and waits for the disk: on a big file
/// hashing costs as much as writing, and the file's version as read is finished there too when
/// resolving left it unfinished ([`ResolveOptions::defer_versions`]); and on a third the diffs
/// of its response and the ranges of its edits in the encoding `enc`, by file of the plan
/// ([`report::Ahead`]; none below a megabyte).
fn commit_hashing(
    root: &Root,
    locked: &Locked,
    plan: &Plan,
    enc: PositionEncoding,
) -> (Vec<(String, usize)>, Committed, Hashed, report::Ahead) {
    let write = || {
        let (changes, held, file_of) = changes_held(plan, &|_, _| true);
        let done = commit_held(root, locked, &changes, &held, true);
        let written = changes
            .into_iter()
            .zip(file_of)
            .filter_map(|(c, fi)| match c {
                Change::Write { path, .. } => Some((path, fi)),
                Change::Delete { .. } => None,
            })
            .collect();
        (written, done)
    };
    let size: usize = plan
        .files
        .iter()
        .map(|f| {
            let read = f
                .original
                .as_ref()
                .map_or(0, |o| o.doc.text.len() + o.raw.as_ref().map_or(0, Vec::len));
            read + f.content.as_ref().map_or(0, String::len)
        })
        .sum();
    if size < 1 << 20 {
        let (written, done) = write();
        return (written, done, hash_plan(plan), report::Ahead::default());
    }
    std::thread::scope(|s| {
        let hashing = std::thread::Builder::new()
            .spawn_scoped(s, || hash_plan(plan))
            .ok();
        // And on a third the diffs the response will write and its edits' ranges, which cost
        // about as much as the hashing: this thread mostly waits for the disk meanwhile. They
        // may take a quarter of the bytes read or written more memory (past it, the response
        // makes them as before).
        let rendering = std::thread::Builder::new()
            .spawn_scoped(s, || report::Ahead::make(plan, enc, size / 4))
            .ok();
        let (written, done) = write();
        // A hasher that could not start or panicked leaves the hashing to this thread, a
        // renderer the diffs and ranges to the response.
        let hashed = hashing
            .and_then(|h| h.join().ok())
            .unwrap_or_else(|| hash_plan(plan));
        let ahead = rendering.and_then(|h| h.join().ok()).unwrap_or_default();
        (written, done, hashed, ahead)
    })
}

/// The versions a commit's response needs, by file of the plan (see [`hash_plan`]).
struct Hashed {
    /// Of the bytes as read, where resolving left it unfinished, with its marks.
    read: Vec<Option<(String, Marks)>>,
    /// Of the new bytes with every edit accepted (the response's `hashAfter`).
    after: Vec<Option<String>>,
}

/// The versions of each file of `plan`: of its bytes as read where they are unfinished, and of
/// its new bytes, hashed from the plan's pieces without rendering them. A new text resumes from
/// the marks of the bytes as read up to its first change (an edit late in a big file rehashes
/// only what follows it: see [`Marks`]).
fn hash_plan(plan: &Plan) -> Hashed {
    let mut read = Vec::with_capacity(plan.files.len());
    let mut after = Vec::with_capacity(plan.files.len());
    for f in &plan.files {
        let orig = f.original.as_ref();
        let finished = orig.and_then(|o| {
            let h = o.pending.as_deref()?;
            Some(plan::Original::finish_hashing(h.clone(), o.parts()))
        });
        let marks = match &finished {
            Some((_, marks)) => Some(marks),
            None => orig.map(|o| &o.marks),
        };
        after.push(f.new_bytes(&|_| true).map(|new| {
            let mut h = marks.map_or_else(Default::default, |m| m.resume(new.unchanged()));
            new.for_each(|part| {
                h.feed(part, None);
            });
            h.finish().0
        }));
        read.push(finished);
    }
    Hashed { read, after }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An apply of many edits writes, from the plan's pieces, exactly the bytes
    /// [`plan::FilePlan::render`] gives, and reports their version as `hashAfter` (edits in the
    /// file's order and in reverse, a BOM, a move, a content); a file whose bytes would not
    /// change is not written.
    #[test]
    fn an_apply_writes_the_rendered_bytes_from_pieces() {
        use serde_json::json;
        let t = tempfile::tempdir().unwrap();
        let lines = 120_000;
        let text: String = (0..lines).map(|i| format!("line {i}\n")).collect();
        std::fs::write(t.path().join("a.txt"), &text).unwrap();
        std::fs::write(t.path().join("bom.txt"), format!("\u{FEFF}{text}")).unwrap();
        std::fs::write(t.path().join("same.txt"), "same\n").unwrap();
        std::fs::write(t.path().join("over.txt"), "old\n").unwrap();
        let a: Vec<_> = (0..lines)
            .step_by(24)
            .map(|i| {
                let new = if i % 48 == 0 {
                    String::new()
                } else {
                    format!("L{i}\nx\n")
                };
                json!({"oldText": format!("line {i}\n"), "newText": new})
            })
            .collect();
        let bom: Vec<_> = (0..lines)
            .step_by(40)
            .rev()
            .map(|i| json!({"oldText": format!("line {i}\n"), "newText": format!("{i}\n")}))
            .collect();
        let req = crate::parse_json(
            &json!({"files": [
                {"path": "a.txt", "edits": a},
                {"path": "bom.txt", "moveTo": "moved.txt", "edits": bom},
                {"path": "same.txt", "content": "same\n"},
                {"path": "over.txt", "content": "new\n"},
                {"path": "new.txt", "content": "created\n"},
            ]})
            .to_string(),
        )
        .unwrap();
        let settings = Settings {
            root: t.path().to_path_buf(),
            ..Default::default()
        };
        let root = Root::open(t.path(), Default::default()).unwrap();
        let plan = resolve(&req, &root, &settings, Mode::Apply).unwrap();
        assert!(plan.ok());
        let expected: Vec<(String, Vec<u8>)> = plan
            .files
            .iter()
            .map(|f| {
                let to = f.move_to.clone().unwrap_or_else(|| f.path.clone());
                (to, f.render(|_| true).unwrap())
            })
            .collect();
        // Every edit took: 2,500 lines removed, 2,500 two bytes shorter.
        let removed: usize = (0..lines)
            .step_by(48)
            .map(|i| format!("line {i}\n").len())
            .sum();
        assert_eq!(expected[0].1.len(), text.len() - removed - 2 * (lines / 48));
        let ino =
            |p: &str| std::os::unix::fs::MetadataExt::ino(&t.path().join(p).metadata().unwrap());
        let same_ino = ino("same.txt");
        let run = run(&req, Mode::Apply, &settings);
        assert_eq!(run.exit, ExitStatus::Success);
        let resp = run.to_json();
        assert_eq!(resp["written"], true);
        for (i, (to, bytes)) in expected.iter().enumerate() {
            assert!(std::fs::read(t.path().join(to)).unwrap() == *bytes, "{to}");
            let version = crate::hash::version(bytes);
            assert_eq!(resp["files"][i]["hashAfter"], version.as_str(), "{to}");
        }
        assert!(!t.path().join("bom.txt").exists());
        assert_eq!(resp["files"][2]["status"], "unchanged");
        assert_eq!(ino("same.txt"), same_ino);
    }

    /// The diffs rendered while the writer waits for the disk ([`report::render_diffs`]) are
    /// those a response writes as it goes: a few edits of a big file (rendered ahead), and a
    /// change of every line (a diff past its room, left to the response), as a dry run of the
    /// same request shows them.
    #[test]
    fn diffs_rendered_ahead_are_the_responses() {
        use serde_json::json;
        let t = tempfile::tempdir().unwrap();
        let lines = 150_000;
        let text: String = (0..lines).map(|i| format!("line {i}\n")).collect();
        assert!(text.len() >= 1 << 20);
        let few: Vec<_> = (0..lines)
            .step_by(997)
            .map(|i| json!({"oldText": format!("line {i}\n"), "newText": format!("L{i}\n")}))
            .collect();
        let every = json!([{"oldText": "line ", "newText": "LINE ", "replaceAll": true}]);
        let settings = Settings {
            root: t.path().to_path_buf(),
            ..Default::default()
        };
        for (edits, ahead) in [(json!(few), true), (every, false)] {
            std::fs::write(t.path().join("a.txt"), &text).unwrap();
            let req = crate::parse_json(
                &json!({"files": [{"path": "a.txt", "edits": edits}]}).to_string(),
            )
            .unwrap();
            let root = Root::open(t.path(), Default::default()).unwrap();
            let plan = resolve(&req, &root, &settings, Mode::Apply).unwrap();
            let rendered = report::render_diffs(&plan, text.len() / 4);
            assert_eq!(rendered[0].is_some(), ahead);
            let dry = run(&req, Mode::DryRun, &settings).to_json();
            let diff = dry["files"][0]["diff"].as_str().unwrap().to_owned();
            assert!(diff.starts_with("--- a/a.txt\n+++ b/a.txt\n@@ "));
            if let Some(r) = &rendered[0] {
                assert_eq!(*r, diff);
            }
            let applied = run(&req, Mode::Apply, &settings);
            assert_eq!(applied.exit, ExitStatus::Success);
            let resp = applied.to_json();
            assert_eq!(resp["files"][0]["status"], "applied");
            assert_eq!(resp["files"][0]["diff"].as_str().unwrap(), diff);
        }
    }

    /// The ranges of the edits made while the writer waits for the disk
    /// ([`report::edit_ranges`]) are those a response counts as it goes, in each encoding
    /// (lines with characters of two UTF-16 units and of two UTF-8 bytes before the edits), and
    /// none are made past their room.
    #[test]
    fn edit_ranges_made_ahead_are_the_responses() {
        use serde_json::json;
        let t = tempfile::tempdir().unwrap();
        let lines = 100_000;
        let text: String = (0..lines).map(|i| format!("é😀 line {i}\n")).collect();
        assert!(text.len() >= 1 << 20);
        let mut edits: Vec<_> = (0..lines)
            .step_by(997)
            .map(|i| json!({"oldText": format!(" line {i}\n"), "newText": format!(" L{i}\n")}))
            .collect();
        edits.reverse();
        edits.push(json!({"oldText": "😀 line 5\n", "newText": "x\n", "replaceAll": true}));
        for enc in [
            PositionEncoding::Utf8,
            PositionEncoding::Utf16,
            PositionEncoding::Utf32,
        ] {
            std::fs::write(t.path().join("a.txt"), &text).unwrap();
            let req = crate::parse_json(
                &json!({"files": [{"path": "a.txt", "edits": edits}]}).to_string(),
            )
            .unwrap();
            let settings = Settings {
                root: t.path().to_path_buf(),
                encoding: enc,
                ..Default::default()
            };
            let root = Root::open(t.path(), Default::default()).unwrap();
            let plan = resolve(&req, &root, &settings, Mode::Apply).unwrap();
            let ahead = report::Ahead::make(&plan, enc, text.len() / 4);
            let ranges = ahead.ranges[0].as_ref().unwrap();
            assert_eq!(ranges.len(), edits.len());
            assert!(
                report::edit_ranges(&plan, enc, 100)
                    .iter()
                    .all(Option::is_none)
            );
            let dry = run(&req, Mode::DryRun, &settings).to_json();
            for (k, r) in ranges.iter().enumerate() {
                assert_eq!(json!(r), dry["files"][0]["edits"][k]["range"], "edit {k}");
            }
            let applied = run(&req, Mode::Apply, &settings);
            assert_eq!(applied.exit, ExitStatus::Success);
            let resp = applied.to_json();
            assert_eq!(resp["files"][0]["edits"], dry["files"][0]["edits"]);
            let last = &resp["files"][0]["edits"][edits.len() - 1];
            assert_eq!(last["range"]["start"]["line"], 5);
            let character = if enc == PositionEncoding::Utf8 { 2 } else { 1 };
            assert_eq!(last["range"]["start"]["character"], character);
        }
    }

    /// Diffs rendered ahead hold no more than their text: the room they share is not reserved
    /// for each of many small files (1,000 of them would each have held a quarter of the batch,
    /// and an apply under `ulimit -v` aborted).
    #[test]
    fn diffs_rendered_ahead_hold_only_their_text() {
        use serde_json::json;
        let t = tempfile::tempdir().unwrap();
        let files: Vec<_> = (0..50)
            .map(|i| {
                let name = format!("f{i}.txt");
                let text: String = (0..100).map(|j| format!("line {j} of {i}\n")).collect();
                std::fs::write(t.path().join(&name), text).unwrap();
                json!({"path": name, "edits": [{"oldText": format!("line 5 of {i}\n"), "newText": "x\n"}]})
            })
            .collect();
        let req = crate::parse_json(&json!({ "files": files }).to_string()).unwrap();
        let settings = Settings {
            root: t.path().to_path_buf(),
            ..Default::default()
        };
        let root = Root::open(t.path(), Default::default()).unwrap();
        let plan = resolve(&req, &root, &settings, Mode::Apply).unwrap();
        let rendered = report::render_diffs(&plan, 1 << 20);
        assert_eq!(rendered.len(), 50);
        for d in &rendered {
            let d = d.as_ref().unwrap();
            assert!(d.starts_with("--- a/f"), "{d}");
            assert!(
                d.capacity() < 2 * d.len() + 64,
                "{} of {}",
                d.capacity(),
                d.len()
            );
        }
    }

    /// The versions the writer's second thread computes from the plan ([`hash_plan`]) are those
    /// of the bytes as read and of the bytes [`plan::FilePlan::render`] gives, whether resolving
    /// finished the first or left it anywhere (here: not started, and stopped after a mark).
    #[test]
    fn versions_hashed_from_the_plan_are_the_rendered_ones() {
        let t = tempfile::tempdir().unwrap();
        let big: String = (0..300_000).map(|i| format!("line {i}\n")).collect();
        let files = [
            ("a.txt", big.clone()),
            ("bom.txt", format!("\u{FEFF}{big}")),
            ("late.txt", big.clone()),
            ("small.txt", "one\ntwo\n".to_string()),
        ];
        for (name, text) in &files {
            std::fs::write(t.path().join(name), text).unwrap();
        }
        let req = crate::parse_json(
            &serde_json::json!({"files": [
                {"path": "a.txt", "edits": [
                    {"oldText": "line 3\n", "newText": "three\n"},
                    {"oldText": "line 200000\n", "newText": ""}]},
                {"path": "bom.txt", "moveTo": "moved.txt",
                 "edits": [{"oldText": "line 150000\n", "newText": "mid\n"}]},
                {"path": "late.txt", "edits": [{"oldText": "line 299999\n", "newText": "end\n"}]},
                {"path": "small.txt", "edits": [{"oldText": "two", "newText": "2"}]},
            ]})
            .to_string(),
        )
        .unwrap();
        let root = Root::open(t.path(), Default::default()).unwrap();
        let opts = ResolveOptions {
            defer_versions: true,
            ..Default::default()
        };
        for left in [None, Some(0), Some(1)] {
            let mut plan = plan::resolve(&req, &root, opts).unwrap();
            assert!(plan.ok());
            for f in &mut plan.files {
                let o = f.original.as_mut().unwrap();
                if let Some(marks) = left {
                    // Unfinished as resolving leaves it: after `marks` marks of its bytes.
                    let stop = std::sync::atomic::AtomicBool::new(false);
                    let mut h = crate::hash::Hashing::default();
                    let first = o.parts().concat();
                    h.feed(
                        &first[..(marks * (256 << 10)).min(first.len())],
                        Some(&stop),
                    );
                    o.version.clear();
                    o.pending = Some(Box::new(h));
                }
            }
            let hashed = hash_plan(&plan);
            for (i, f) in plan.files.iter().enumerate() {
                let o = f.original.as_ref().unwrap();
                let read = crate::hash::version(&o.parts().concat());
                match (&o.pending, &hashed.read[i]) {
                    (Some(_), Some((v, _))) => assert_eq!(*v, read, "{i}"),
                    (None, None) => assert_eq!(o.version, read, "{i}"),
                    other => panic!("{i}: {other:?}"),
                }
                let new = f.render(|_| true).unwrap();
                let mut pieces = Vec::new();
                f.new_bytes(&|_| true)
                    .unwrap()
                    .for_each(|p| pieces.extend_from_slice(p));
                assert_eq!(pieces, new, "{i}");
                assert_eq!(
                    hashed.after[i].as_deref(),
                    Some(crate::hash::version(&new).as_str()),
                    "{i}"
                );
            }
            plan.settle_versions();
            for (f, (_, text)) in plan.files.iter().zip(&files) {
                let o = f.original.as_ref().unwrap();
                assert!(o.pending.is_none());
                assert_eq!(o.version, crate::hash::version(text.as_bytes()));
                assert_eq!(o.fingerprint.as_ref().unwrap().version, o.version);
            }
        }
    }
}
