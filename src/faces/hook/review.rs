//! Review mode (`redline hook AGENT --review`, SPEC §9): the batch goes to `redline watch` on the
//! same root and the hook waits for the human.
//!
//! - What guard mode would refuse anyway (a path outside the root, edits that do not resolve) is
//!   refused at once, without bothering the human.
//! - Accepted edits are allowed, with the input narrowed to them and their old text made the
//!   file's exact text; that `allow` is the one permission a hook grants on its own, after a human
//!   accepted the edit. Rejected edits are denied with the human's notes as the reason the model
//!   sees; when some edits of a call were accepted and others rejected, the call is allowed narrowed
//!   and the notes ride along (`additionalContext` for Claude and Codex, the reason otherwise).
//! - A file that changed while the batch waited: denied as stale.
//! - No `watch` running: `--no-watch=ask` (default) leaves it to the harness's prompt, `deny`
//!   refuses, `allow` falls back to guard mode.
//! - No decision within the wait: denied, saying so.

use super::envelope::{Action, Agent, Envelope, Replace};
use super::guard::{self, absolute, edit_request, resolve};
use super::{Decision, NoWatch, Options};
use crate::faces::watch::client::{self, WaitError};
use crate::faces::watch::protocol::{Reply, Submission, Verdict};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// What is sent to `watch`: the request text and the versions of the files it reads.
fn submission(env: &Envelope, root: &Path) -> Result<Option<Submission>, String> {
    let (request, req) = match &env.action {
        Action::Edit { path, edits, .. } => {
            let abs = absolute(&env.cwd, path);
            let json = json!({"files": [{"path": abs, "edits": edits.iter().map(|e| json!({
                "oldText": e.old, "newText": e.new, "replaceAll": e.all
            })).collect::<Vec<_>>()}]});
            (json.to_string(), edit_request(&abs, edits))
        }
        Action::Write { path, content } => {
            let abs = absolute(&env.cwd, path);
            let json = json!({"files": [{"path": abs, "content": content}]});
            let req = crate::request::wire::from_value(&json).map_err(|e| e.message)?;
            (json.to_string(), req)
        }
        Action::Patch { patch } => {
            let text = absolute_patch(&env.cwd, patch);
            let req = crate::request::dialect::codex::parse(&text).map_err(|e| e.message)?;
            (text, req)
        }
        Action::Batch { request } => {
            let req = crate::request::wire::from_value(request).map_err(|e| e.message)?;
            (request.to_string(), req)
        }
        Action::Other | Action::PostBatch { .. } => return Ok(None),
    };
    let plan = resolve(&req, root)?;
    let mut versions = BTreeMap::new();
    for f in &plan.files {
        if let Some(o) = &f.original
            && o.fingerprint.is_some()
        {
            versions.insert(absolute(&env.cwd, &f.path), o.version.clone());
        }
    }
    Ok(Some(Submission {
        agent: env.agent.name().to_string(),
        session: env.session.clone(),
        tool: env.tool.clone(),
        request,
        versions,
    }))
}

/// A Codex patch with its file headers made absolute (Codex paths are relative to its cwd).
fn absolute_patch(cwd: &Path, patch: &str) -> String {
    const HEADERS: [&str; 4] = [
        "*** Update File: ",
        "*** Add File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    let mut out = String::with_capacity(patch.len());
    for line in patch.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        match HEADERS.iter().find(|h| body.trim_start().starts_with(*h)) {
            Some(h) => {
                let p = body.trim_start()[h.len()..].trim();
                out.push_str(h);
                out.push_str(&absolute(cwd, p));
                out.push_str(end);
            }
            None => out.push_str(line),
        }
    }
    out
}

/// The envelope as guard mode sees it when edits would pass anyway (to get the exact rewrite a
/// human's acceptance then allows).
fn as_if_allowed(env: &Envelope) -> Envelope {
    let mut e = env.clone();
    e.permission_mode = Some("bypassPermissions".into());
    e
}

pub(crate) fn decide(env: &Envelope, root: &Path, opts: &Options) -> Result<Decision, String> {
    if matches!(env.action, Action::Other | Action::PostBatch { .. }) {
        return guard::decide(env, root);
    }
    // What guard refuses is refused now; otherwise the input the harness should run once accepted.
    let exact_input = match guard::decide(&as_if_allowed(env), root)? {
        d @ Decision::Deny { .. } => return Ok(d),
        Decision::Rewrite { input, .. } => input,
        _ => env.input.clone(),
    };
    let Some(sub) = submission(env, root)? else {
        return Ok(Decision::Pass);
    };
    let reply = client::submit(root, &sub, opts.wait, |_| {});
    let reply = match reply {
        Ok(r) => r,
        Err(WaitError::NoWatch) => {
            let why = format!("no redline watch is running on {}", root.display());
            return match opts.no_watch {
                NoWatch::Ask => Ok(Decision::Ask {
                    reason: format!("{why}; start `redline watch` there to review edits"),
                }),
                NoWatch::Deny => Ok(Decision::Deny {
                    reason: format!(
                        "redline: {why}, and edits wait for a human's review; nothing was written. \
                         Ask the user to start `redline watch`, then try again."
                    ),
                }),
                NoWatch::Allow => guard::decide(env, root),
            };
        }
        Err(WaitError::Timeout(d)) => {
            return Ok(Decision::Deny {
                reason: format!(
                    "redline: no decision from the reviewer (redline watch on {}) within {} s; \
                     nothing was written. Ask the user to look at redline watch, then send the \
                     edit again.",
                    root.display(),
                    d.as_secs()
                ),
            });
        }
        Err(WaitError::Broken(e)) => return Err(format!("redline watch: {e}")),
    };
    let (decisions, batch_note) = match reply {
        Reply::Decided { decisions, note } => (decisions, note),
        Reply::Stale { message } => {
            return Ok(Decision::Deny {
                reason: format!(
                    "redline: {message}. Nothing was written; read the file again and send the edit again."
                ),
            });
        }
        Reply::Closed { message } => return Err(format!("redline watch: {message}")),
        Reply::Queued { .. } => return Err("redline watch: no decision".into()),
    };
    // The harness writes after this answer: a file that changed while waiting is refused here too.
    let stale = crate::faces::watch::protocol::changed(&sub.versions);
    if !stale.is_empty() {
        return Ok(Decision::Deny {
            reason: format!(
                "redline: {} changed while the edit waited for review; nothing was written. \
                 Read it again and send the edit again.",
                stale.join(", ")
            ),
        });
    }
    Ok(verdict(env, root, exact_input, &decisions, batch_note))
}

/// The decisions and notes, for the model: every rejected unit, and every note.
fn notes(env: &Envelope, decisions: &[Verdict], batch_note: Option<&str>) -> String {
    let mut out = String::new();
    let many = decisions.len() > 1;
    for v in decisions
        .iter()
        .filter(|v| !v.accepted() || v.note.is_some())
    {
        let which = match (many, v.index) {
            (true, Some(i)) => format!("edit {} of {}", i + 1, Path::new(&v.path).display()),
            _ => format!("the edit of {}", Path::new(&v.path).display()),
        };
        let what = if v.accepted() { "accepted" } else { "rejected" };
        match &v.note {
            Some(n) => out.push_str(&format!("{which}: {what}. The user's note: {n}\n")),
            None => out.push_str(&format!("{which}: {what} (no note).\n")),
        }
    }
    if let Some(n) = batch_note {
        out.push_str(&format!("The user's note on the whole change: {n}\n"));
    }
    let _ = env;
    out
}

fn verdict(
    env: &Envelope,
    root: &Path,
    exact_input: Value,
    decisions: &[Verdict],
    batch_note: Option<String>,
) -> Decision {
    let accepted: Vec<&Verdict> = decisions.iter().filter(|v| v.accepted()).collect();
    let text = notes(env, decisions, batch_note.as_deref());
    if accepted.is_empty() {
        return Decision::Deny {
            reason: format!(
                "redline: the user rejected this change in review; nothing was written.\n{text}"
            ),
        };
    }
    if accepted.len() == decisions.len() {
        let mut reason = "accepted by the user in redline watch".to_string();
        if !text.is_empty() {
            reason = format!("{reason}\n{text}");
        }
        return Decision::Allow {
            input: Some(exact_input),
            reason,
        };
    }
    // Some accepted, some rejected: narrow the call to the accepted edits where the tool has
    // several; otherwise (one edit, a write, a patch) refuse with the notes and what was accepted.
    let keep: Vec<usize> = accepted.iter().filter_map(|v| v.index).collect();
    let narrowed = match (&env.action, env.agent) {
        (Action::Edit { edits, .. }, Agent::Pi) => {
            Some(narrow_list(&exact_input, "edits", &keep, edits))
        }
        (Action::Edit { edits, .. }, _) if env.tool == "MultiEdit" => {
            Some(narrow_list(&exact_input, "edits", &keep, edits))
        }
        (Action::Patch { .. }, _) => narrow_patch(env, root, &keep),
        _ => None,
    };
    match narrowed {
        Some(input) => Decision::Allow {
            input: Some(input),
            reason: format!(
                "redline: the user accepted {} of {} edits; only those are made.\n{text}",
                accepted.len(),
                decisions.len()
            ),
        },
        None => Decision::Deny {
            reason: format!(
                "redline: the user accepted only part of this change, which cannot be split; \
                 nothing was written. Send only the accepted part again.\n{text}"
            ),
        },
    }
}

fn narrow_list(input: &Value, key: &str, keep: &[usize], _edits: &[Replace]) -> Value {
    let mut out = input.clone();
    if let Some(list) = out.get_mut(key).and_then(Value::as_array_mut) {
        let kept: Vec<Value> = list
            .iter()
            .enumerate()
            .filter(|(i, _)| keep.contains(i))
            .map(|(_, v)| v.clone())
            .collect();
        *list = kept;
    }
    out
}

/// A Codex patch narrowed to the accepted chunks (rebuilt from the plan with only them).
fn narrow_patch(env: &Envelope, root: &Path, keep: &[usize]) -> Option<Value> {
    let Action::Patch { patch } = &env.action else {
        return None;
    };
    let req = crate::request::dialect::codex::parse(patch).ok()?;
    if req.files.len() != 1 {
        return None;
    }
    let mut abs = req.clone();
    abs.files[0].path = absolute(&env.cwd, &abs.files[0].path);
    let mut plan = resolve(&abs, root).ok()?;
    // Drop the rejected chunks from the plan, then rebuild.
    for e in &mut plan.files[0].edits {
        if !keep.contains(&e.index) {
            e.outcome = crate::engine::plan::Outcome::Skipped;
        }
    }
    plan.files[0].edits.retain(|e| keep.contains(&e.index));
    let rebuilt = super::patch::rebuild(&req, &plan)?;
    let mut input = env.input.clone();
    input["command"] = Value::String(super::patch::as_sent(patch, rebuilt));
    Some(input)
}
