//! Guard mode (SPEC §9): resolve the harness's edit against the file on disk and answer.
//!
//! - Exact: no objection; the harness's own permission flow decides.
//! - Normalized or relaxed: the tool input is rewritten so that the harness writes exactly
//!   redline's plan (the file's own bytes as the old text; a Codex patch rebuilt). Before
//!   answering, the rewrite is run through a model of the harness's own tool and the result
//!   compared with redline's plan byte for byte; if they differ, the edit is denied with the exact
//!   text instead. Where the harness applies a rewrite only with an `allow` (Claude Code, Codex),
//!   that happens only when the permission mode already lets edits through (`acceptEdits`,
//!   `bypassPermissions`); otherwise the edit is denied with the exact old text to send.
//! - Failed: denied, with a reason for the model (every failing edit, code, closest candidates).
//! - A path outside the root: denied.
//!
//! Hooks never write: plans are made with [`crate::service::resolve`] and nothing else.

use super::envelope::{Action, Agent, Envelope, Replace, Style};
use super::{Decision, patch, reason};
use crate::engine::matcher::MatchKind;
use crate::engine::plan::{FilePlan, Outcome, Plan};
use crate::error::Code;
use crate::report::Mode;
use crate::request::{EditSpec, FileRequest, Request};
use crate::service::{self as batch, Settings};
use serde_json::Value;
use std::path::Path;

/// Resolves `req` beneath `root` without writing or locking.
pub(crate) fn resolve(req: &Request, root: &Path) -> Result<Plan, String> {
    let settings = Settings {
        root: root.to_path_buf(),
        ..Settings::default()
    };
    let root = batch::open_root(&settings).map_err(|e| e.message)?;
    batch::resolve(req, &root, &settings, Mode::DryRun).map_err(|e| e.message)
}

/// `path` as the harness means it: absolute, or relative to its working directory.
pub(crate) fn absolute(cwd: &Path, path: &str) -> String {
    let p = Path::new(path);
    if p.is_absolute() {
        path.to_string()
    } else {
        cwd.join(p).to_string_lossy().into_owned()
    }
}

/// A path for messages: relative to the root when it is beneath it.
pub(crate) fn shown(root: &Path, abs: &str) -> String {
    Path::new(abs)
        .strip_prefix(root)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| abs.to_string())
}

/// The denial of a path outside the root.
pub(crate) fn outside(root: &Path, path: &str) -> Decision {
    Decision::Deny {
        reason: format!(
            "redline: {path} is outside the project root {}; edits there are refused. \
             Edit files beneath the root only.",
            root.display()
        ),
    }
}

/// Whether the harness would let an edit through without asking, so that an `allow` carrying a
/// rewrite grants nothing new.
pub(crate) fn edits_pass_anyway(env: &Envelope) -> bool {
    match env.agent {
        // Gemini merges `tool_input` without a decision (its confirmation still runs); Pi has no
        // permission prompt at all.
        Agent::Gemini | Agent::Pi => true,
        Agent::Claude | Agent::Codex => matches!(
            env.permission_mode.as_deref(),
            Some("acceptEdits") | Some("bypassPermissions")
        ),
    }
}

pub(crate) fn decide(env: &Envelope, root: &Path) -> Result<Decision, String> {
    match &env.action {
        Action::Other => Ok(Decision::Pass),
        Action::Write { path, content } => write(env, root, path, content),
        Action::Edit { path, edits, style } => edit(env, root, path, edits, *style),
        Action::Patch { patch } => patch::guard(env, root, patch),
        Action::Batch { request } => batch_paths(env, root, request),
        Action::PostBatch { calls } => Ok(post_batch(env, root, calls)),
    }
}

/// `Write`: only confinement is redline's business.
fn write(env: &Envelope, root: &Path, path: &str, content: &str) -> Result<Decision, String> {
    let abs = absolute(&env.cwd, path);
    let mut fr = FileRequest::new(abs.clone());
    fr.content = Some(content.to_string());
    let plan = resolve(
        &Request {
            files: vec![fr],
            ..Request::default()
        },
        root,
    )?;
    if plan.files.iter().any(|f| {
        f.failure
            .as_ref()
            .is_some_and(|x| x.code() == Code::OutsideRoot)
    }) {
        return Ok(outside(root, path));
    }
    Ok(Decision::Pass)
}

/// redline's own batch tools: they match for themselves; the hook keeps them inside the root.
fn batch_paths(env: &Envelope, root: &Path, request: &Value) -> Result<Decision, String> {
    let req = crate::request::wire::from_value(request).map_err(|e| e.message)?;
    let plan = resolve(&req, root)?;
    for f in &plan.files {
        if f.failure
            .as_ref()
            .is_some_and(|x| x.code() == Code::OutsideRoot)
        {
            return Ok(outside(root, &f.path));
        }
    }
    let _ = env;
    Ok(Decision::Pass)
}

/// The request of a string-replacement call.
pub(crate) fn edit_request(abs: &str, edits: &[Replace]) -> Request {
    let mut fr = FileRequest::new(abs.to_string());
    for e in edits {
        let mut spec = EditSpec::new(e.old.clone(), e.new.clone());
        spec.replace_all = e.all;
        fr.edits.push(spec);
    }
    Request {
        files: vec![fr],
        ..Request::default()
    }
}

fn exact(file: &FilePlan) -> bool {
    file.edits.iter().all(|e| {
        e.resolution()
            .is_some_and(|r| r.kind == MatchKind::Exact && r.normalizations.is_empty())
    })
}

fn edit(
    env: &Envelope,
    root: &Path,
    path: &str,
    edits: &[Replace],
    style: Style,
) -> Result<Decision, String> {
    // An empty old text is the harness's "create" (Claude) or its own error: not redline's.
    if edits.iter().any(|e| e.old.is_empty()) {
        return Ok(Decision::Pass);
    }
    let abs = absolute(&env.cwd, path);
    let plan = resolve(&edit_request(&abs, edits), root)?;
    let Some(file) = plan.files.first() else {
        return Ok(Decision::Pass);
    };
    let shown = shown(root, &abs);
    if let Some(f) = &file.failure {
        return Ok(match f.code() {
            Code::OutsideRoot => outside(root, path),
            // The harness's own tool reports a missing file; the rest (binary, encoding, size)
            // redline cannot judge, so the harness decides.
            Code::FileNotFound | Code::NotAFile => Decision::Deny {
                reason: reason::refused(file, &shown, env.agent.old_field()),
            },
            _ => Decision::Pass,
        });
    }
    if !file.ok() {
        return Ok(Decision::Deny {
            reason: reason::refused(file, &shown, env.agent.old_field()),
        });
    }
    if exact(file) {
        return Ok(Decision::Pass);
    }
    let Some(orig) = &file.original else {
        return Ok(Decision::Pass);
    };
    let doc = &orig.doc;
    // The file's own text at each span: the old text the harness can find exactly.
    let mut rewritten = Vec::new();
    let mut exact_texts = Vec::new();
    for e in &file.edits {
        let Some(r) = e.resolution() else {
            return Ok(Decision::Pass);
        };
        let texts: Vec<&str> = r.spans.iter().map(|s| &doc.text[s.clone()]).collect();
        let Some(first) = texts.first() else {
            return Ok(Decision::Pass);
        };
        let where_ = reason::lines(doc, &r.spans[0]);
        if texts.iter().any(|t| t != first) {
            // replace_all over spans with different bytes cannot be one exact replacement.
            return Ok(Decision::Deny {
                reason: format!(
                    "redline: {} of {shown} matches {} places whose text differs; nothing was \
                     written. Send one edit per place, each with the file's exact text.",
                    env.agent.old_field(),
                    r.spans.len()
                ),
            });
        }
        let (old, new) = widen(
            &doc.text,
            &r.spans[0],
            r.replacement(&e.spec),
            e.spec.replace_all,
        );
        exact_texts.push((e.index, where_, old.clone()));
        rewritten.push(Replace {
            old,
            new,
            all: e.spec.replace_all,
        });
    }
    let want = file.new_text(orig, &|_| true);
    let mut text = String::new();
    if doc.bom {
        text.push('\u{FEFF}');
    }
    text.push_str(&doc.text);
    let got = simulate(&text, &rewritten, style);
    if got.as_deref() != Some(want.as_str()) || !edits_pass_anyway(env) {
        return Ok(Decision::Deny {
            reason: reason::exact_text_needed(&shown, env.agent.old_field(), &exact_texts),
        });
    }
    let input = rewrite_input(env, &rewritten);
    let kinds: Vec<&str> = file
        .edits
        .iter()
        .filter_map(|e| e.resolution())
        .flat_map(|r| r.normalizations.iter().map(|n| n.as_str()))
        .collect();
    Ok(Decision::Rewrite {
        input,
        reason: format!(
            "redline matched the edit of {shown} after normalizing ({}) and sent the file's exact text",
            if kinds.is_empty() {
                "whitespace".to_string()
            } else {
                kinds.join(", ")
            }
        ),
    })
}

/// The exact old text for a span and its replacement, widened line by line until it occurs
/// once in the file (a single replacement must be unique for the harness's exact matcher).
fn widen(
    text: &str,
    span: &std::ops::Range<usize>,
    replacement: &str,
    all: bool,
) -> (String, String) {
    let mut start = span.start;
    let mut end = span.end;
    loop {
        let old = &text[start..end];
        if all || count(text, old) <= 1 || (start == 0 && end == text.len()) {
            let new = format!(
                "{}{}{}",
                &text[start..span.start],
                replacement,
                &text[span.end..end]
            );
            return (old.to_string(), new);
        }
        // One more line before and after.
        if start > 0 {
            start = text[..start - 1].rfind('\n').map(|i| i + 1).unwrap_or(0);
        }
        if end < text.len() {
            end = text[end + 1..]
                .find('\n')
                .map(|i| end + 1 + i + 1)
                .unwrap_or(text.len());
        }
    }
}

/// Non-overlapping occurrences of `needle` in `hay`.
pub(crate) fn count(hay: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    hay.matches(needle).count()
}

/// What the harness's own tool makes of `text` with these replacements, or `None` where it
/// would refuse. Models of the tools as documented: exact, unique unless replacing all.
pub(crate) fn simulate(text: &str, edits: &[Replace], style: Style) -> Option<String> {
    match style {
        Style::Sequential | Style::Counted(_) => {
            let mut cur = text.to_string();
            for e in edits {
                let n = count(&cur, &e.old);
                let ok = match style {
                    Style::Counted(k) => n == k,
                    _ => n == 1 || (e.all && n > 0),
                };
                if !ok {
                    return None;
                }
                cur = cur.replace(&e.old, &e.new);
            }
            Some(cur)
        }
        Style::Original => {
            // Pi: each edit against the original, unique, non-overlapping.
            let mut spans = Vec::new();
            for e in edits {
                if count(text, &e.old) != 1 {
                    return None;
                }
                let at = text.find(&e.old)?;
                spans.push((at, at + e.old.len(), e.new.as_str()));
            }
            spans.sort();
            let mut out = String::new();
            let mut at = 0;
            for (s, end, new) in spans {
                if s < at {
                    return None;
                }
                out.push_str(&text[at..s]);
                out.push_str(new);
                at = end;
            }
            out.push_str(&text[at..]);
            Some(out)
        }
    }
}

/// The harness's tool input with the rewritten replacements.
pub(crate) fn rewrite_input(env: &Envelope, edits: &[Replace]) -> Value {
    let mut input = env.input.clone();
    match (env.agent, env.tool.as_str()) {
        (Agent::Pi, _) => {
            if let Some(obj) = input.as_object_mut() {
                obj.remove("oldText");
                obj.remove("newText");
                obj.insert(
                    "edits".into(),
                    Value::Array(
                        edits
                            .iter()
                            .map(|e| serde_json::json!({"oldText": e.old, "newText": e.new}))
                            .collect(),
                    ),
                );
            }
        }
        (_, "MultiEdit") => {
            if let Some(list) = input.get_mut("edits").and_then(Value::as_array_mut) {
                for (slot, e) in list.iter_mut().zip(edits) {
                    slot["old_string"] = Value::String(e.old.clone());
                    slot["new_string"] = Value::String(e.new.clone());
                }
            }
        }
        _ => {
            if let Some(e) = edits.first() {
                input["old_string"] = Value::String(e.old.clone());
                input["new_string"] = Value::String(e.new.clone());
            }
        }
    }
    input
}

/// Claude's `PostToolBatch`: for each edit the harness could not find, where redline finds it
/// (the exact text to send) or the closest candidates; this reaches the model's next request.
fn post_batch(env: &Envelope, root: &Path, calls: &[(String, Value, String)]) -> Decision {
    let mut text = String::new();
    for (tool, input, response) in calls {
        let failed = response.contains("not found")
            || response.contains("String to replace")
            || response.contains("Found") && response.contains("matches");
        if !failed {
            continue;
        }
        let Ok(Action::Edit { path, edits, .. }) =
            super::envelope::tool_action(env.agent, tool, input)
        else {
            continue;
        };
        if edits.iter().any(|e| e.old.is_empty()) {
            continue;
        }
        let abs = absolute(&env.cwd, &path);
        let Ok(plan) = resolve(&edit_request(&abs, &edits), root) else {
            continue;
        };
        let Some(file) = plan.files.first() else {
            continue;
        };
        let shown = shown(root, &abs);
        if !file.ok() {
            text.push_str(&reason::refused(file, &shown, env.agent.old_field()));
            continue;
        }
        let Some(orig) = &file.original else { continue };
        let mut exact_texts = Vec::new();
        for e in &file.edits {
            if let Outcome::Resolved(r) = &e.outcome
                && let Some(span) = r.spans.first()
            {
                let (old, _) = widen(
                    &orig.doc.text,
                    span,
                    r.replacement(&e.spec),
                    e.spec.replace_all,
                );
                exact_texts.push((e.index, reason::lines(&orig.doc, span), old));
            }
        }
        text.push_str(&reason::exact_text_needed(
            &shown,
            env.agent.old_field(),
            &exact_texts,
        ));
    }
    if text.is_empty() {
        Decision::Pass
    } else {
        Decision::Context { text }
    }
}
