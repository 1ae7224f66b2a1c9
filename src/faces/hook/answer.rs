//! A [`Decision`] in each harness's own answer format.
//!
//! - Claude Code and Codex: `{"hookSpecificOutput": {"hookEventName": "PreToolUse",
//!   "permissionDecision": "allow"|"deny"|"ask", "permissionDecisionReason", "updatedInput"}}`;
//!   `updatedInput` is honoured only with `allow`. No objection is an empty stdout.
//!   `PostToolBatch` context is `{"hookSpecificOutput": {"hookEventName": "PostToolBatch",
//!   "additionalContext"}}`.
//! - Gemini CLI: `{"decision": "allow"|"deny", "reason", "hookSpecificOutput": {"hookEventName":
//!   "BeforeTool", "tool_input"}}` (merged over the model's arguments); no objection is `{}`.
//! - Pi (the shipped extension): `{}` for no objection, `{"input": …}` to replace the tool input
//!   (with `"note"` after a review: appended to the tool's result for the model),
//!   `{"block": true, "reason"}` to deny, `{"ask": true, "reason"}` to leave it to a human.

use super::{Agent, Decision, Output};
use serde_json::{Value, json};

fn ok(stdout: String) -> Output {
    Output {
        stdout,
        stderr: String::new(),
        exit: 0,
    }
}

fn line(v: Value) -> String {
    format!("{v}\n")
}

/// Renders `d` for `agent`.
pub(crate) fn render(agent: Agent, d: &Decision) -> Output {
    match agent {
        Agent::Claude | Agent::Codex => claude(d),
        Agent::Gemini => gemini(d),
        Agent::Pi => pi(d),
    }
}

fn pre_tool_use(decision: &str, reason: &str, input: Option<&Value>) -> Output {
    let mut h = json!({
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    });
    if let Some(i) = input {
        h["updatedInput"] = i.clone();
    }
    ok(line(json!({ "hookSpecificOutput": h })))
}

fn claude(d: &Decision) -> Output {
    match d {
        Decision::Pass => ok(String::new()),
        Decision::Rewrite { input, reason } => pre_tool_use("allow", reason, Some(input)),
        Decision::Allow { input, reason } => {
            // The reason of an `allow` is shown to the user only; the notes reach the model as
            // context.
            let mut out = pre_tool_use("allow", reason, input.as_ref());
            if let Ok(mut v) = serde_json::from_str::<Value>(&out.stdout) {
                v["hookSpecificOutput"]["additionalContext"] = json!(reason);
                out.stdout = line(v);
            }
            out
        }
        Decision::Deny { reason } => pre_tool_use("deny", reason, None),
        Decision::Ask { reason } => pre_tool_use("ask", reason, None),
        Decision::Context { text } => ok(line(json!({
            "hookSpecificOutput": {"hookEventName": "PostToolBatch", "additionalContext": text}
        }))),
    }
}

fn gemini(d: &Decision) -> Output {
    // A rewrite merges `tool_input` and takes no decision (Gemini's own confirmation still
    // runs); only a human's acceptance in `watch` is an `allow`.
    let answer = |decision: Option<&str>, reason: &str, input: Option<&Value>| {
        let mut v = json!({});
        if let Some(d) = decision {
            v["decision"] = json!(d);
            v["reason"] = json!(reason);
        }
        if let Some(i) = input {
            v["hookSpecificOutput"] = json!({"hookEventName": "BeforeTool", "tool_input": i});
        }
        ok(line(v))
    };
    match d {
        Decision::Pass | Decision::Context { .. } => ok(line(json!({}))),
        Decision::Rewrite { input, reason } => answer(None, reason, Some(input)),
        Decision::Allow { input, reason } => answer(Some("allow"), reason, input.as_ref()),
        Decision::Deny { reason } => ok(line(json!({"decision": "deny", "reason": reason}))),
        // Gemini has no "ask" answer: saying nothing leaves it to its own confirmation.
        Decision::Ask { reason } => Output {
            stdout: line(json!({})),
            stderr: format!("{reason}\n"),
            exit: 0,
        },
    }
}

fn pi(d: &Decision) -> Output {
    match d {
        Decision::Pass | Decision::Context { .. } => ok(line(json!({}))),
        Decision::Rewrite { input, .. } => ok(line(json!({ "input": input }))),
        Decision::Allow { input, reason } => ok(line(match input {
            Some(i) => json!({ "input": i, "note": reason }),
            None => json!({ "note": reason }),
        })),
        Decision::Deny { reason } => ok(line(json!({"block": true, "reason": reason}))),
        // Pi has no permission prompt; the extension asks through its UI when it has one.
        Decision::Ask { reason } => ok(line(json!({"ask": true, "reason": reason}))),
    }
}
