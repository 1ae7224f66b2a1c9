//! Codex's `apply_patch` under guard mode: the patch is resolved by redline's patch rules
//! (SPEC §6); when a chunk matched only after normalization, the patch is rebuilt from redline's
//! plan so that Codex's own applier, which takes the first exact match from its cursor, writes
//! exactly the plan. Each rebuilt chunk carries the file's own lines as context, widened upwards
//! until its first exact match from the cursor is the intended place; the rebuilt patch is run
//! through a model of Codex's applier and compared with the plan before it is sent.

use super::envelope::Envelope;
use super::guard::{absolute, edits_pass_anyway, outside, resolve, shown};
use super::{Decision, reason};
use crate::engine::matcher::MatchKind;
use crate::engine::plan::{FilePlan, Op};
use crate::error::Code;
use crate::request::Request;
use similar::{Algorithm, capture_diff_slices, group_diff_ops};
use std::fmt::Write as _;
use std::path::Path;

/// Context lines around each rebuilt chunk.
const CONTEXT: usize = 3;

pub(crate) fn guard(env: &Envelope, root: &Path, patch: &str) -> Result<Decision, String> {
    let req = crate::request::dialect::codex::parse(patch)
        .map_err(|e| format!("unreadable patch: {e}"))?;
    let mut abs = req.clone();
    for f in &mut abs.files {
        f.path = absolute(&env.cwd, &f.path);
        if let Some(m) = &mut f.move_to {
            *m = absolute(&env.cwd, m);
        }
    }
    let plan = resolve(&abs, root)?;
    let mut refused = String::new();
    for f in &plan.files {
        if let Some(x) = &f.failure
            && x.code() == Code::OutsideRoot
        {
            return Ok(outside(root, &f.path));
        }
    }
    for f in &plan.files {
        if !f.ok() {
            refused.push_str(&reason::refused(
                f,
                &shown(root, &f.path),
                "the patch's lines",
            ));
        }
    }
    if !refused.is_empty() {
        return Ok(Decision::Deny { reason: refused });
    }
    let exact = plan.files.iter().all(|f| {
        f.edits.iter().all(|e| {
            e.resolution()
                .is_some_and(|r| r.kind == MatchKind::Exact && r.normalizations.is_empty())
        })
    });
    if exact {
        return Ok(Decision::Pass);
    }
    if plan.files.len() != req.files.len() {
        // Two spellings of one path were merged: no faithful rebuild; Codex decides.
        return Ok(Decision::Pass);
    }
    let Some(rebuilt) = rebuild(&req, &plan) else {
        return Ok(Decision::Deny {
            reason: "redline: the patch's context matches the file only after normalizing \
                     whitespace or punctuation, and no exact patch can be rebuilt for it (line \
                     endings Codex does not keep); nothing was written. Re-read the file and \
                     copy the context and `-` lines exactly."
                .into(),
        });
    };
    if !edits_pass_anyway(env) {
        return Ok(Decision::Deny {
            reason: format!(
                "redline: the patch's context matches the file only after normalizing whitespace \
                 or punctuation; nothing was written. Send this patch instead, whose lines are \
                 the file's own:\n{rebuilt}"
            ),
        });
    }
    let mut input = env.input.clone();
    input["command"] = serde_json::Value::String(as_sent(patch, rebuilt));
    Ok(Decision::Rewrite {
        input,
        reason:
            "redline rebuilt the patch with the file's exact lines (it matched after normalizing)"
                .into(),
    })
}

/// The rebuilt patch in the form the original came in: a shell `apply_patch` heredoc stays one.
pub(crate) fn as_sent(original: &str, rebuilt: String) -> String {
    if super::envelope::is_shell_patch(original) {
        format!("apply_patch <<'EOF'\n{rebuilt}\nEOF\n")
    } else {
        rebuilt
    }
}

/// Lines as Codex splits a file: on `\n`, a final empty piece dropped.
fn codex_lines(text: &str) -> Vec<&str> {
    let mut v: Vec<&str> = text.split('\n').collect();
    if v.last() == Some(&"") {
        v.pop();
    }
    v
}

/// One chunk: old-side range and new-side range, in lines.
struct Chunk {
    old: std::ops::Range<usize>,
    new: std::ops::Range<usize>,
}

/// The patch rebuilt from the plan, or `None` when Codex could not write the plan's bytes.
pub(crate) fn rebuild(req: &Request, plan: &crate::engine::plan::Plan) -> Option<String> {
    let mut out = String::from("*** Begin Patch\n");
    for (fr, fp) in req.files.iter().zip(&plan.files) {
        match fp.op {
            Op::Delete => {
                let _ = writeln!(out, "*** Delete File: {}", fr.path);
            }
            Op::Create | Op::Overwrite => {
                if fp.op == Op::Overwrite {
                    let _ = writeln!(out, "*** Delete File: {}", fr.path);
                }
                let _ = writeln!(out, "*** Add File: {}", fr.path);
                for l in codex_lines(fp.content.as_deref().unwrap_or("")) {
                    let _ = writeln!(out, "+{l}");
                }
            }
            Op::Edit | Op::Move => {
                let _ = writeln!(out, "*** Update File: {}", fr.path);
                if let Some(m) = &fr.move_to {
                    let _ = writeln!(out, "*** Move to: {m}");
                }
                out.push_str(&update_chunks(fp)?);
            }
        }
    }
    out.push_str("*** End Patch");
    Some(out)
}

/// The `@@` chunks that turn the file into the plan's text, checked against Codex's applier.
fn update_chunks(fp: &FilePlan) -> Option<String> {
    fp.original.as_ref()?;
    let (old_text, new_text, _) = crate::report::texts(fp, &|_| true);
    if old_text.contains('\r') || new_text.contains('\r') {
        return None;
    }
    let old = codex_lines(&old_text);
    let new = codex_lines(&new_text);
    let ops = capture_diff_slices(Algorithm::Myers, &old, &new);
    let mut chunks: Vec<Chunk> = Vec::new();
    for group in group_diff_ops(ops, CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        chunks.push(Chunk {
            old: first.old_range().start..last.old_range().end,
            new: first.new_range().start..last.new_range().end,
        });
    }
    // Widen each chunk upwards until Codex's first exact match from its cursor is the chunk.
    let mut cursor = 0;
    for c in &mut chunks {
        loop {
            let at = seek(&old, &old[c.old.clone()], cursor);
            if at == Some(c.old.start) || c.old.start <= cursor {
                break;
            }
            c.old.start -= 1;
            c.new.start -= 1;
        }
        if c.old.is_empty() {
            // A pure insertion goes where Codex puts it (end of file) only by luck: give it
            // the line before as context.
            if c.old.start == 0 {
                return None;
            }
            c.old.start -= 1;
            c.new.start -= 1;
        }
        cursor = c.old.end;
    }
    let mut out = String::new();
    for c in &chunks {
        out.push_str("@@\n");
        let (o, n) = (&old[c.old.clone()], &new[c.new.clone()]);
        for op in capture_diff_slices(Algorithm::Myers, o, n) {
            for ch in op.iter_changes(o, n) {
                let prefix = match ch.tag() {
                    similar::ChangeTag::Equal => ' ',
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                };
                let _ = writeln!(out, "{prefix}{}", ch.value());
            }
        }
    }
    // Check: Codex's applier on the rebuilt chunks gives the plan's text.
    let applied = apply(&old, &chunks, &new)?;
    (applied == new_text).then_some(out)
}

/// First index at or after `from` where `pat` occurs exactly.
fn seek(lines: &[&str], pat: &[&str], from: usize) -> Option<usize> {
    if pat.is_empty() {
        return Some(lines.len());
    }
    (from..=lines.len().checked_sub(pat.len())?).find(|&i| &lines[i..i + pat.len()] == pat)
}

/// A model of Codex's applier on exact chunks: each located from the cursor, replaced, lines
/// joined with `\n` and a final newline added.
fn apply(old: &[&str], chunks: &[Chunk], new: &[&str]) -> Option<String> {
    let mut cursor = 0;
    let mut reps = Vec::new();
    for c in chunks {
        let at = seek(old, &old[c.old.clone()], cursor)?;
        reps.push((at, c.old.len(), &new[c.new.clone()]));
        cursor = at + c.old.len();
    }
    let mut lines: Vec<&str> = old.to_vec();
    for (at, n, rep) in reps.into_iter().rev() {
        lines.splice(at..at + n, rep.iter().copied());
    }
    let mut s = lines.join("\n");
    s.push('\n');
    Some(s)
}
