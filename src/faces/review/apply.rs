//! Writing what the reviewer accepted, through the one writing module, and the JSON result.
//!
//! The reviewer cannot hold the root's writer lock while a human decides (SPEC §7), so apply
//! re-reads every file it would touch, refuses the batch if any changed since the plan was made
//! (naming every such file, not only the first), and then commits under the lock, where the
//! writer checks each fingerprint again. Nothing is written unless all of it can be.

use super::model::{Applied, FileResult, Model, State};
use super::result::{DecisionEntry, DecisionError, ReviewResult};
use super::unit::UnitKind;
use crate::engine::document::PositionEncoding;
use crate::engine::plan::{FilePlan, Op, Plan};
use crate::error::ExitStatus;
use crate::report::message::Vocabulary;
use crate::report::{self, Mode, WriteOutcome};
use crate::service;
use crate::write::{Change, Root};

/// The plan cut down to the accepted units: rejected, undecided, failed and stale ones are gone;
/// a move whose rename was not accepted becomes an in-place edit. Returns each kept file's index
/// in the model.
pub(crate) fn accepted_plan(m: &Model) -> (Plan, Vec<usize>) {
    let mut files = Vec::new();
    let mut index = Vec::new();
    for (fi, f) in m.plan.files.iter().enumerate() {
        if f.failure.is_some() || m.stale[fi] {
            continue;
        }
        let info = &m.files[fi];
        let accepted = |kind: UnitKind| {
            info.units
                .iter()
                .position(|u| u.kind == kind)
                .is_some_and(|u| m.state(fi, u) == State::Accepted)
        };
        let mut fp: FilePlan = f.clone();
        match f.op {
            Op::Create | Op::Overwrite if f.edits.is_empty() && !accepted(UnitKind::Content) => {
                continue;
            }
            Op::Delete if !accepted(UnitKind::Delete) => continue,
            Op::Move if !accepted(UnitKind::Move) => {
                fp.op = Op::Edit;
                fp.move_to = None;
                fp.move_rel = None;
                fp.warnings
                    .retain(|w| !matches!(w, crate::engine::plan::Warning::MoveOverwrites { .. }));
            }
            _ => {}
        }
        fp.edits.retain(|e| accepted(UnitKind::Edit(e.index)));
        files.push(fp);
        index.push(fi);
    }
    (Plan { files }, index)
}

/// Every unit's decision, for the JSON result: in request order (files as in the plan; in each,
/// the create, delete or rename first, then the edits by index), not the screen's order, which
/// puts failed edits first and the rest by position.
pub(crate) fn decisions(m: &Model) -> Vec<DecisionEntry> {
    let mut out = Vec::new();
    for (fi, info) in m.files.iter().enumerate() {
        let f = &m.plan.files[fi];
        let mut units: Vec<_> = info.units.iter().enumerate().collect();
        units.sort_by_key(|(_, unit)| unit.edit().map_or((0, 0), |i| (1, i)));
        for (u, unit) in units {
            let state = m.state(fi, u);
            let mut d = DecisionEntry {
                path: f.path.clone(),
                op: f.op.as_str(),
                index: None,
                id: None,
                decision: state.word(),
                match_kind: None,
                normalizations: None,
                error: None,
                note: m.note(fi, u).map(str::to_string),
            };
            let doc = f.original.as_ref().map(|o| &o.doc);
            let mut failure = f.failure.as_ref().map(|fl| DecisionError {
                code: fl.code(),
                message: report::message::file(fl, &f.path).message,
            });
            if let UnitKind::Edit(i) = unit.kind {
                let e = &f.edits[i];
                d.index = Some(i);
                d.id = e.spec.id().map(str::to_owned);
                if let Some(r) = e.resolution() {
                    d.match_kind = Some(r.kind.as_str());
                    d.normalizations = Some(r.normalizations.iter().map(|n| n.as_str()).collect());
                }
                if let crate::engine::plan::Outcome::Failed(fl) = &e.outcome {
                    failure = Some(DecisionError {
                        code: fl.code(),
                        message: report::message::edit(fl, &f.path, i, doc).message,
                    });
                }
            }
            if state == State::Failed {
                d.error = failure;
            }
            out.push(d);
        }
    }
    out
}

/// The result for the plan of accepted edits and what the writer did with it.
pub(crate) fn result(
    m: &Model,
    plan: Plan,
    wrote: &WriteOutcome,
    enc: PositionEncoding,
    applied: bool,
) -> ReviewResult {
    ReviewResult {
        response: report::response(plan.into(), Mode::Apply, enc, wrote, Vocabulary::Cli),
        applied,
        note: m.batch_note.clone(),
        decisions: decisions(m),
    }
}

/// The result when the reviewer ends: the apply's, or (quit without applying) nothing written.
pub(crate) fn quit_result(m: &Model, enc: PositionEncoding) -> ReviewResult {
    if let Some(ap) = &m.applied {
        return ap.json.clone();
    }
    let (plan, _) = accepted_plan(m);
    result(m, plan, &WriteOutcome::default(), enc, false)
}

/// Writes the accepted edits. Returns the outcome and the model indexes of stale files.
pub(crate) fn apply(m: &Model, root: &Root, enc: PositionEncoding) -> (Applied, Vec<usize>) {
    let (plan, index) = accepted_plan(m);
    let changes = service::changes(&plan, &|_, _| true);
    let accepted_in = |fi: usize| {
        (0..m.files[fi].units.len())
            .filter(|&u| m.state(fi, u) == State::Accepted)
            .count()
    };
    let touches =
        |f: &FilePlan, c: &Change| c.path() == f.path || f.move_to.as_deref() == Some(c.path());
    let model_index_of = |path: &str| -> Option<usize> {
        plan.files
            .iter()
            .position(|f| f.path == path || f.move_to.as_deref() == Some(path))
            .map(|k| index[k])
    };
    let mut results = vec![FileResult::Untouched; m.files.len()];
    if changes.is_empty() {
        let json = result(m, plan, &WriteOutcome::default(), enc, true);
        let applied = Applied {
            files: results,
            written: false,
            exit: ExitStatus::Success,
            summary: "Nothing to write: no edit was accepted.".into(),
            json,
        };
        return (applied, Vec::new());
    }
    let (wrote, exit, stale) = match service::lock(root) {
        Ok(locked) => {
            let done = service::commit(root, &locked, &changes, false);
            (done.outcome, done.exit, done.stale)
        }
        Err(e) => {
            let (wrote, exit) = service::failed(&e, None);
            (wrote, exit, Vec::new())
        }
    };
    let mut stale_files: Vec<usize> = stale.iter().filter_map(|p| model_index_of(p)).collect();
    stale_files.sort_unstable();
    stale_files.dedup();
    for (k, f) in plan.files.iter().enumerate() {
        let fi = index[k];
        let changed = changes.iter().any(|c| touches(f, c));
        results[fi] = if stale_files.contains(&fi) {
            FileResult::Stale
        } else if let Some(e) = wrote
            .failure
            .as_ref()
            .filter(|e| e.path == f.path || f.move_to.as_ref() == Some(&e.path))
        {
            FileResult::Error(format!("{}: {}", e.path, report::message::write(e).message))
        } else if !changed {
            FileResult::Untouched
        } else if wrote.written {
            FileResult::Written(accepted_in(fi))
        } else {
            FileResult::NotWritten
        };
    }
    let written_n = results
        .iter()
        .filter(|r| matches!(r, FileResult::Written(_)))
        .count();
    let summary = if wrote.written {
        let edits: usize = results
            .iter()
            .map(|r| {
                if let FileResult::Written(n) = r {
                    *n
                } else {
                    0
                }
            })
            .sum();
        format!(
            "Wrote {edits} accepted edit{} to {written_n} file{}.",
            plural(edits),
            plural(written_n)
        )
    } else if !stale_files.is_empty() {
        let names: Vec<String> = stale_files
            .iter()
            .map(|&f| m.files[f].display.clone())
            .collect();
        format!(
            "Nothing was written: {} changed on disk since the review began.",
            names.join(", ")
        )
    } else {
        let why = wrote
            .failure
            .as_ref()
            .map(|e| report::message::write(e).message)
            .unwrap_or_default();
        format!("Nothing was written: {why}")
    };
    let json = result(m, plan, &wrote, enc, wrote.written);
    (
        Applied {
            files: results,
            written: wrote.written,
            exit,
            summary,
            json,
        },
        stale_files,
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
