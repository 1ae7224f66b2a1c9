//! Envelopes and answers of every harness, guard decisions, and the bytes the harness would
//! write with the answer (through the same models of their tools the guard checks with, and
//! independently by plain string replacement).

use super::envelope::{Replace, Style};
use super::guard::simulate;
use super::*;
use serde_json::{Value, json};
use std::path::Path;

const SRC: &str = "fn main() {\n    let x = 1;   \n    println!(\"{x}\");\n}\n";

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (p, text) in files {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn claude_env(dir: &Path, tool: &str, input: Value, mode: &str) -> String {
    json!({
        "session_id": "s1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": dir,
        "permission_mode": mode,
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "toolu_1",
    })
    .to_string()
}

fn run_hook(agent: Agent, stdin: &str) -> Output {
    run(agent, stdin, &Options::default())
}

fn answer(out: &Output) -> Value {
    assert_eq!(out.exit, 0, "stderr: {}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {:?}", out.stdout))
}

/// Plain `str::replacen` of one occurrence: what any exact-replacement tool does.
fn replace_once(text: &str, old: &str, new: &str) -> String {
    assert_eq!(
        text.matches(old).count(),
        1,
        "old text must be unique: {old:?}"
    );
    text.replacen(old, new, 1)
}

#[test]
fn claude_exact_edit_is_no_objection() {
    let dir = project(&[("src/main.rs", SRC)]);
    let path = dir.path().join("src/main.rs");
    let input = json!({"file_path": path, "old_string": "println!(\"{x}\");", "new_string": "dbg!(x);", "replace_all": false});
    let out = run_hook(
        Agent::Claude,
        &claude_env(dir.path(), "Edit", input, "default"),
    );
    assert_eq!(out.exit, 0);
    assert_eq!(out.stdout, "");
}

#[test]
fn claude_normalized_edit_is_rewritten_to_the_files_bytes_when_edits_pass_anyway() {
    let dir = project(&[("src/main.rs", SRC)]);
    let path = dir.path().join("src/main.rs");
    let input = json!({"file_path": path, "old_string": "    let x = 1;\n", "new_string": "    let x = 2;\n", "replace_all": false});
    let out = run_hook(
        Agent::Claude,
        &claude_env(dir.path(), "Edit", input, "acceptEdits"),
    );
    let a = answer(&out);
    let h = &a["hookSpecificOutput"];
    assert_eq!(h["hookEventName"], "PreToolUse");
    assert_eq!(h["permissionDecision"], "allow");
    let upd = &h["updatedInput"];
    assert_eq!(upd["file_path"], json!(path));
    assert_eq!(upd["old_string"], "    let x = 1;   \n");
    assert_eq!(upd["new_string"], "    let x = 2;\n");
    assert_eq!(upd["replace_all"], false);
    // What Claude then writes: only the span's bytes change.
    let written = replace_once(
        SRC,
        upd["old_string"].as_str().unwrap(),
        upd["new_string"].as_str().unwrap(),
    );
    assert_eq!(
        written,
        "fn main() {\n    let x = 2;\n    println!(\"{x}\");\n}\n"
    );
}

#[test]
fn claude_normalized_edit_in_default_mode_is_denied_with_the_exact_text() {
    let dir = project(&[("src/main.rs", SRC)]);
    let path = dir.path().join("src/main.rs");
    let input = json!({"file_path": path, "old_string": "    let x = 1;\n", "new_string": "    let x = 2;\n"});
    for mode in ["default", "plan", "dontAsk"] {
        let out = run_hook(
            Agent::Claude,
            &claude_env(dir.path(), "Edit", input.clone(), mode),
        );
        let a = answer(&out);
        let h = &a["hookSpecificOutput"];
        assert_eq!(h["permissionDecision"], "deny", "{mode}");
        assert!(h.get("updatedInput").is_none());
        let reason = h["permissionDecisionReason"].as_str().unwrap();
        assert!(
            reason.contains(r#"line 2, exact old_string (a JSON string): "    let x = 1;   \n""#),
            "{reason}"
        );
        assert!(reason.contains("line 2"), "{reason}");
    }
}

#[test]
fn claude_failed_edit_is_denied_with_candidates_and_line_numbers() {
    let dir = project(&[("src/main.rs", SRC)]);
    let path = dir.path().join("src/main.rs");
    let input = json!({"file_path": path, "old_string": "    println!(\"{y}\");\n    return;\n", "new_string": "x"});
    let out = run_hook(
        Agent::Claude,
        &claude_env(dir.path(), "Edit", input, "bypassPermissions"),
    );
    let a = answer(&out);
    let h = &a["hookSpecificOutput"];
    assert_eq!(h["permissionDecision"], "deny");
    let reason = h["permissionDecisionReason"].as_str().unwrap();
    assert!(
        reason.starts_with("redline refused this edit of src/main.rs; nothing was written."),
        "{reason}"
    );
    assert!(reason.contains("not_found:"), "{reason}");
    assert!(reason.contains("closest: line"), "{reason}");
    assert!(reason.contains("3 |     println!(\"{x}\");"), "{reason}");
    assert!(reason.contains("old_string"), "{reason}");
}

#[test]
fn multiedit_names_every_failing_edit() {
    let dir = project(&[("a.txt", "alpha\nbeta\ngamma\nalpha\n")]);
    let path = dir.path().join("a.txt");
    let input = json!({"file_path": path, "edits": [
        {"old_string": "beta\n", "new_string": "BETA\n"},
        {"old_string": "alpha\n", "new_string": "ALPHA\n"},
        {"old_string": "delta-epsilon\n", "new_string": "x\n"},
    ]});
    let out = run_hook(
        Agent::Claude,
        &claude_env(dir.path(), "MultiEdit", input, "acceptEdits"),
    );
    let reason = answer(&out)["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.contains("edit 2 of 3: ambiguous:"), "{reason}");
    assert!(reason.contains("matches at lines 1, 4"), "{reason}");
    assert!(reason.contains("edit 3 of 3: not_found:"), "{reason}");
    assert!(!reason.contains("edit 1 of 3"), "{reason}");
}

#[test]
fn paths_outside_the_root_are_denied_for_every_harness() {
    let dir = project(&[("a.txt", "a\n")]);
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("x.txt");
    std::fs::write(&target, "a\n").unwrap();
    let claude = claude_env(
        dir.path(),
        "Write",
        json!({"file_path": target, "content": "b\n"}),
        "bypassPermissions",
    );
    let a = answer(&run_hook(Agent::Claude, &claude));
    assert_eq!(a["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        a["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("outside the project root")
    );
    let rel = claude_env(
        dir.path(),
        "Edit",
        json!({"file_path": "../x.txt", "old_string": "a", "new_string": "b"}),
        "default",
    );
    let a = answer(&run_hook(Agent::Claude, &rel));
    assert_eq!(a["hookSpecificOutput"]["permissionDecision"], "deny");
    let gemini =
        json!({"cwd": dir.path(), "hook_event_name": "BeforeTool", "tool_name": "write_file",
        "tool_input": {"file_path": target, "content": "b\n"}})
        .to_string();
    let a = answer(&run_hook(Agent::Gemini, &gemini));
    assert_eq!(a["decision"], "deny");
    let pi = json!({"cwd": dir.path(), "toolName": "edit",
        "input": {"path": target, "edits": [{"oldText": "a", "newText": "b"}]}})
    .to_string();
    let a = answer(&run_hook(Agent::Pi, &pi));
    assert_eq!(a["block"], true);
    let codex = json!({"cwd": dir.path(), "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
        "tool_name": "apply_patch",
        "tool_input": {"command": "*** Begin Patch\n*** Add File: ../y.txt\n+hi\n*** End Patch"}})
    .to_string();
    let a = answer(&run_hook(Agent::Codex, &codex));
    assert_eq!(a["hookSpecificOutput"]["permissionDecision"], "deny");
    // --root narrower than the project: a file beside it is outside.
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let out = run(
        Agent::Claude,
        &claude_env(
            dir.path(),
            "Write",
            json!({"file_path": "a.txt", "content": "b\n"}),
            "default",
        ),
        &Options {
            root: Some(sub.clone()),
            ..Options::default()
        },
    );
    assert_eq!(
        answer(&out)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    let out = run(
        Agent::Claude,
        &claude_env(
            dir.path(),
            "Write",
            json!({"file_path": "sub/new.txt", "content": "b\n"}),
            "default",
        ),
        &Options {
            root: Some(sub),
            ..Options::default()
        },
    );
    assert_eq!(out.stdout, "");
}

#[test]
fn gemini_normalized_replace_merges_the_files_text_without_granting() {
    let text = "const msg = “Hello”;\nconst n = 1;\n";
    let dir = project(&[("m.js", text)]);
    let env = json!({"session_id": "g", "cwd": dir.path(), "hook_event_name": "BeforeTool",
        "timestamp": "2026-12-01T00:00:00Z", "tool_name": "replace",
        "tool_input": {"file_path": dir.path().join("m.js"), "old_string": "const msg = \"Hello\";",
            "new_string": "const msg = \"Bye\";", "instruction": "say bye"}})
    .to_string();
    let a = answer(&run_hook(Agent::Gemini, &env));
    assert!(a.get("decision").is_none(), "{a}");
    let ti = &a["hookSpecificOutput"]["tool_input"];
    assert_eq!(a["hookSpecificOutput"]["hookEventName"], "BeforeTool");
    assert_eq!(ti["old_string"], "const msg = “Hello”;");
    assert_eq!(ti["instruction"], "say bye");
    let written = replace_once(
        text,
        ti["old_string"].as_str().unwrap(),
        ti["new_string"].as_str().unwrap(),
    );
    assert_eq!(written, "const msg = \"Bye\";\nconst n = 1;\n");
    // Exact: an empty object, no opinion.
    let env = json!({"cwd": dir.path(), "hook_event_name": "BeforeTool", "tool_name": "replace",
        "tool_input": {"file_path": "m.js", "old_string": "const n = 1;", "new_string": "const n = 2;"}})
    .to_string();
    assert_eq!(answer(&run_hook(Agent::Gemini, &env)), json!({}));
    // Failed: deny, reason for the model.
    let env = json!({"cwd": dir.path(), "hook_event_name": "BeforeTool", "tool_name": "replace",
        "tool_input": {"file_path": "m.js", "old_string": "let total = 0;", "new_string": "x"}})
    .to_string();
    let a = answer(&run_hook(Agent::Gemini, &env));
    assert_eq!(a["decision"], "deny");
    assert!(a["reason"].as_str().unwrap().contains("not_found"));
}

#[test]
fn pi_edits_are_rewritten_in_place_against_the_original() {
    let text = "keep\nfirst target  \nmiddle\nsecond target\t\nend\n";
    let dir = project(&[("t.txt", text)]);
    let env = json!({"cwd": dir.path(), "toolName": "edit", "input": {"path": "t.txt", "edits": [
        {"oldText": "first target\n", "newText": "FIRST\n"},
        {"oldText": "second target\n", "newText": "SECOND\n"},
    ]}})
    .to_string();
    let a = answer(&run_hook(Agent::Pi, &env));
    let edits = a["input"]["edits"].as_array().unwrap();
    assert_eq!(edits[0]["oldText"], "first target  \n");
    assert_eq!(edits[1]["oldText"], "second target\t\n");
    assert_eq!(a["input"]["path"], "t.txt");
    let mut written = text.to_string();
    for e in edits {
        written = replace_once(
            &written,
            e["oldText"].as_str().unwrap(),
            e["newText"].as_str().unwrap(),
        );
    }
    assert_eq!(written, "keep\nFIRST\nmiddle\nSECOND\nend\n");
    // The legacy top-level pair is folded in as Pi does, and dropped from the rewrite.
    let env = json!({"cwd": dir.path(), "toolName": "edit", "input": {"path": "@t.txt",
        "oldText": "middle\n", "newText": "MIDDLE\n"}})
    .to_string();
    let out = run_hook(Agent::Pi, &env);
    assert_eq!(answer(&out), json!({}), "exact after Pi's own `@` rule");
    let env = json!({"cwd": dir.path(), "toolName": "edit", "input": {"path": "t.txt",
        "oldText": "keep \n", "newText": "KEEP\n"}})
    .to_string();
    let a = answer(&run_hook(Agent::Pi, &env));
    assert!(a["input"].get("oldText").is_none());
    assert_eq!(a["input"]["edits"][0]["oldText"], "keep\n");
}

#[test]
fn a_span_whose_text_repeats_is_widened_until_unique() {
    // `x = 1` with a trailing space occurs once, but its exact text (without the space it
    // matched after trimming) would be ambiguous; the rewrite carries a neighbouring line.
    let text = "a\nx = 1 \nb\nx = 1 x\nc\n";
    let dir = project(&[("w.txt", text)]);
    let env = json!({"cwd": dir.path(), "toolName": "edit", "input": {"path": "w.txt",
        "edits": [{"oldText": "b\nx = 1 x \nc", "newText": "B\nC"}]}})
    .to_string();
    let a = answer(&run_hook(Agent::Pi, &env));
    let e = &a["input"]["edits"][0];
    let written = replace_once(
        text,
        e["oldText"].as_str().unwrap(),
        e["newText"].as_str().unwrap(),
    );
    assert_eq!(written, "a\nx = 1 \nB\nC\n");
}

#[test]
fn codex_patch_with_drifted_context_is_rebuilt_from_the_files_lines() {
    let text = "def f():\n    a = 1   \n    return a\n\ndef g():\n    a = 1\n    return a\n";
    let dir = project(&[("p.py", text)]);
    let patch = "*** Begin Patch\n*** Update File: p.py\n@@ def f():\n-    a = 1\n+    a = 2\n     return a\n*** End Patch";
    let env = json!({"session_id": "c", "cwd": dir.path(), "hook_event_name": "PreToolUse",
        "permission_mode": "bypassPermissions", "tool_name": "apply_patch",
        "tool_input": {"command": patch}, "tool_use_id": "call_1"})
    .to_string();
    let a = answer(&run_hook(Agent::Codex, &env));
    let h = &a["hookSpecificOutput"];
    assert_eq!(h["permissionDecision"], "allow");
    let rebuilt = h["updatedInput"]["command"].as_str().unwrap();
    assert!(rebuilt.contains("-    a = 1   \n"), "{rebuilt}");
    // The rebuilt patch resolves exactly (no normalization) to the same bytes.
    let req = crate::request::dialect::codex::parse(rebuilt).unwrap();
    let mut abs = req.clone();
    abs.files[0].path = dir.path().join("p.py").to_string_lossy().into_owned();
    let plan = super::guard::resolve(&abs, dir.path()).unwrap();
    let f = &plan.files[0];
    assert!(f.ok());
    for e in &f.edits {
        let r = e.resolution().unwrap();
        assert_eq!(r.kind, crate::engine::matcher::MatchKind::Exact);
        assert!(r.normalizations.is_empty());
    }
    let new = String::from_utf8(f.render(|_| true).unwrap()).unwrap();
    assert_eq!(
        new,
        "def f():\n    a = 2\n    return a\n\ndef g():\n    a = 1\n    return a\n"
    );
    // In default mode: denied, with the rebuilt patch to send.
    let env = env.replace("bypassPermissions", "default");
    let a = answer(&run_hook(Agent::Codex, &env));
    let reason = a["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert_eq!(a["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(reason.contains(rebuilt), "{reason}");
}

#[test]
fn codex_rebuilt_chunk_is_widened_past_an_earlier_identical_block() {
    // The changed line's context also appears earlier: the chunk must be placed at the second.
    let text = "x\ny\nz\nq\nx\ny \nz\n";
    let dir = project(&[("d.txt", text)]);
    let patch = "*** Begin Patch\n*** Update File: d.txt\n@@\n q\n x\n-y\n+Y\n z\n*** End Patch";
    let env = json!({"cwd": dir.path(), "permission_mode": "acceptEdits", "hook_event_name": "PreToolUse",
        "tool_name": "apply_patch", "tool_input": {"command": patch}})
    .to_string();
    let a = answer(&run_hook(Agent::Codex, &env));
    let rebuilt = a["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let req = crate::request::dialect::codex::parse(&rebuilt).unwrap();
    let mut abs = req.clone();
    abs.files[0].path = dir.path().join("d.txt").to_string_lossy().into_owned();
    let plan = super::guard::resolve(&abs, dir.path()).unwrap();
    let new = String::from_utf8(plan.files[0].render(|_| true).unwrap()).unwrap();
    assert_eq!(new, "x\ny\nz\nq\nx\nY\nz\n", "{rebuilt}");
}

#[test]
fn codex_failing_chunk_is_denied_and_exact_patch_passes() {
    let dir = project(&[("p.py", "a = 1\nb = 2\n")]);
    let bad = "*** Begin Patch\n*** Update File: p.py\n@@\n-c = 3\n+c = 4\n*** End Patch";
    let env = json!({"cwd": dir.path(), "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
        "tool_name": "apply_patch", "tool_input": {"command": bad}})
    .to_string();
    let a = answer(&run_hook(Agent::Codex, &env));
    assert_eq!(a["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        a["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("not_found")
    );
    let good = "*** Begin Patch\n*** Update File: p.py\n@@\n-b = 2\n+b = 3\n*** End Patch";
    let env =
        json!({"cwd": dir.path(), "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "apply_patch", "tool_input": {"command": good}})
        .to_string();
    assert_eq!(run_hook(Agent::Codex, &env).stdout, "");
}

#[test]
fn claude_post_tool_batch_tells_the_model_where_its_failed_edit_is() {
    let dir = project(&[("src/main.rs", SRC)]);
    let path = dir.path().join("src/main.rs");
    let env = json!({"session_id": "s", "cwd": dir.path(), "hook_event_name": "PostToolBatch",
        "tool_calls": [
            {"tool_name": "Edit", "tool_input": {"file_path": path, "old_string": "    let x = 1;\n", "new_string": "    let x = 2;\n"},
             "tool_response": "<tool_use_error>String to replace not found in file.\nString:     let x = 1;\n</tool_use_error>"},
            {"tool_name": "Read", "tool_input": {"file_path": path}, "tool_response": "ok"},
        ]})
    .to_string();
    let a = answer(&run_hook(Agent::Claude, &env));
    let h = &a["hookSpecificOutput"];
    assert_eq!(h["hookEventName"], "PostToolBatch");
    let ctx = h["additionalContext"].as_str().unwrap();
    assert!(
        ctx.contains(r#"exact old_string (a JSON string): "    let x = 1;   \n""#),
        "{ctx}"
    );
}

#[test]
fn unreadable_input_never_blocks() {
    for agent in [Agent::Claude, Agent::Codex, Agent::Gemini, Agent::Pi] {
        let out = run_hook(agent, "not json");
        assert_eq!(out.exit, 1);
        assert!(out.stderr.contains("leaving the decision to the harness"));
        assert_ne!(out.exit, 2, "2 is a block for Claude, Codex and Gemini");
    }
    // Tools that are not edits: no opinion.
    let env = claude_env(Path::new("/"), "Bash", json!({"command": "ls"}), "default");
    assert_eq!(run_hook(Agent::Claude, &env).stdout, "");
}

#[test]
fn simulate_models_each_harness() {
    let e = |o: &str, n: &str| Replace {
        old: o.into(),
        new: n.into(),
        all: false,
    };
    // Sequential: the second edit sees the first's output.
    assert_eq!(
        simulate("ab", &[e("a", "x"), e("xb", "y")], Style::Sequential).as_deref(),
        Some("y")
    );
    // Original: both against the original; overlap refused.
    assert_eq!(
        simulate("ab", &[e("a", "x"), e("b", "y")], Style::Original).as_deref(),
        Some("xy")
    );
    assert_eq!(
        simulate("ab", &[e("ab", "x"), e("b", "y")], Style::Original),
        None
    );
    assert_eq!(simulate("aa", &[e("a", "x")], Style::Sequential), None);
    assert_eq!(
        simulate("aa", &[e("a", "x")], Style::Counted(2)).as_deref(),
        Some("xx")
    );
}

/// A stand-in `watch` on `root` that answers one batch with `reply` and hands back what it got.
fn fake_watch(
    root: &Path,
    reply: crate::faces::watch::protocol::Reply,
) -> std::thread::JoinHandle<crate::faces::watch::protocol::Submission> {
    use std::io::Write as _;
    let listener = crate::faces::watch::bind(root).unwrap();
    std::thread::spawn(move || {
        let (stream, line) = crate::faces::watch::accept_one(&listener);
        let sub = serde_json::from_str(line.trim_end()).unwrap();
        let mut w = &stream;
        writeln!(w, "{}", json!({"status": "queued", "position": 1})).unwrap();
        writeln!(w, "{}", serde_json::to_string(&reply).unwrap()).unwrap();
        sub
    })
}

fn review_opts() -> Options {
    Options {
        review: true,
        ..Options::default()
    }
}

fn verdict(
    path: &Path,
    index: usize,
    decision: &str,
    note: Option<&str>,
) -> crate::faces::watch::protocol::Verdict {
    crate::faces::watch::protocol::Verdict {
        path: path.to_string_lossy().into_owned(),
        index: Some(index),
        decision: decision.into(),
        note: note.map(str::to_string),
    }
}

#[test]
fn review_accepted_is_allowed_with_the_exact_text_even_in_default_mode() {
    use crate::faces::watch::protocol::Reply;
    let dir = project(&[("src/main.rs", SRC)]);
    let path = dir.path().join("src/main.rs");
    let w = fake_watch(
        dir.path(),
        Reply::Decided {
            decisions: vec![verdict(&path, 0, "accepted", None)],
            note: None,
        },
    );
    let input = json!({"file_path": path, "old_string": "    let x = 1;\n", "new_string": "    let x = 2;\n"});
    let out = run(
        Agent::Claude,
        &claude_env(dir.path(), "Edit", input, "default"),
        &review_opts(),
    );
    let sub = w.join().unwrap();
    assert_eq!(sub.agent, "claude");
    assert_eq!(sub.tool, "Edit");
    assert_eq!(sub.session.as_deref(), Some("s1"));
    assert_eq!(sub.versions.len(), 1);
    let req: Value = serde_json::from_str(&sub.request).unwrap();
    assert_eq!(req["files"][0]["edits"][0]["oldText"], "    let x = 1;\n");
    let h = &answer(&out)["hookSpecificOutput"];
    assert_eq!(h["permissionDecision"], "allow");
    assert_eq!(h["updatedInput"]["old_string"], "    let x = 1;   \n");
}

#[test]
fn review_rejected_is_denied_with_the_note_and_partial_is_narrowed() {
    use crate::faces::watch::protocol::Reply;
    let text = "one\ntwo\nthree\n";
    let dir = project(&[("t.txt", text)]);
    let path = dir.path().join("t.txt");
    let w = fake_watch(
        dir.path(),
        Reply::Decided {
            decisions: vec![verdict(&path, 0, "rejected", Some("keep one as it is"))],
            note: None,
        },
    );
    let env = json!({"cwd": dir.path(), "hook_event_name": "BeforeTool", "tool_name": "replace",
        "tool_input": {"file_path": "t.txt", "old_string": "one", "new_string": "ONE"}})
    .to_string();
    let a = answer(&run(Agent::Gemini, &env, &review_opts()));
    w.join().unwrap();
    assert_eq!(a["decision"], "deny");
    assert!(
        a["reason"]
            .as_str()
            .unwrap()
            .contains("The user\'s note: keep one as it is"),
        "{a}"
    );
    // Pi, two edits, one accepted: the call is narrowed to it, the note rides along.
    let w = fake_watch(
        dir.path(),
        Reply::Decided {
            decisions: vec![
                verdict(&path, 0, "rejected", Some("not this one")),
                verdict(&path, 1, "accepted", None),
            ],
            note: Some("otherwise fine".into()),
        },
    );
    let env = json!({"cwd": dir.path(), "toolName": "edit", "input": {"path": "t.txt", "edits": [
        {"oldText": "one", "newText": "ONE"}, {"oldText": "three", "newText": "THREE"}]}})
    .to_string();
    let a = answer(&run(Agent::Pi, &env, &review_opts()));
    w.join().unwrap();
    assert_eq!(
        a["input"]["edits"],
        json!([{"oldText": "three", "newText": "THREE"}])
    );
    let note = a["note"].as_str().unwrap();
    assert!(
        note.contains("edit 1 of") && note.contains("not this one"),
        "{note}"
    );
    assert!(note.contains("otherwise fine"), "{note}");
}

#[test]
fn review_without_watch_follows_no_watch_and_stale_is_denied() {
    use crate::faces::watch::protocol::Reply;
    let dir = project(&[("t.txt", "one\n")]);
    let env = claude_env(
        dir.path(),
        "Edit",
        json!({"file_path": "t.txt", "old_string": "one", "new_string": "ONE"}),
        "default",
    );
    let h = answer(&run(Agent::Claude, &env, &review_opts()))["hookSpecificOutput"].clone();
    assert_eq!(h["permissionDecision"], "ask");
    assert!(
        h["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("no redline watch is running")
    );
    let deny = Options {
        no_watch: NoWatch::Deny,
        ..review_opts()
    };
    let h = answer(&run(Agent::Claude, &env, &deny))["hookSpecificOutput"].clone();
    assert_eq!(h["permissionDecision"], "deny");
    let allow = Options {
        no_watch: NoWatch::Allow,
        ..review_opts()
    };
    assert_eq!(
        run(Agent::Claude, &env, &allow).stdout,
        "",
        "guard: exact passes"
    );
    // A failing edit never reaches the human.
    let bad = claude_env(
        dir.path(),
        "Edit",
        json!({"file_path": "t.txt", "old_string": "zzz", "new_string": "ONE"}),
        "default",
    );
    let h = answer(&run(Agent::Claude, &bad, &review_opts()))["hookSpecificOutput"].clone();
    assert_eq!(h["permissionDecision"], "deny");
    // The file changes while the human looks: refused as stale.
    let path = dir.path().join("t.txt");
    let p2 = path.clone();
    let listener = crate::faces::watch::bind(dir.path()).unwrap();
    let w = std::thread::spawn(move || {
        use std::io::Write as _;
        let (stream, _) = crate::faces::watch::accept_one(&listener);
        std::fs::write(&p2, "one changed\n").unwrap();
        let reply = Reply::Decided {
            decisions: vec![verdict(&p2, 0, "accepted", None)],
            note: None,
        };
        writeln!(&stream, "{}", serde_json::to_string(&reply).unwrap()).unwrap();
    });
    let h = answer(&run(Agent::Claude, &env, &review_opts()))["hookSpecificOutput"].clone();
    w.join().unwrap();
    assert_eq!(h["permissionDecision"], "deny");
    assert!(
        h["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("changed while the edit waited")
    );
    // Nobody answers within the wait: denied, saying so.
    let _listener = crate::faces::watch::bind(dir.path()).unwrap();
    let short = Options {
        wait: std::time::Duration::from_millis(300),
        ..review_opts()
    };
    let env = claude_env(
        dir.path(),
        "Edit",
        json!({"file_path": "t.txt", "old_string": "one changed", "new_string": "ONE"}),
        "default",
    );
    let h = answer(&run(Agent::Claude, &env, &short))["hookSpecificOutput"].clone();
    assert_eq!(h["permissionDecision"], "deny");
    assert!(
        h["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("no decision from the reviewer")
    );
}

#[test]
fn codex_shell_apply_patch_is_guarded_and_stays_a_heredoc() {
    let text = "def f():\n    a = 1   \n    return a\n";
    let dir = project(&[("p.py", text)]);
    let cmd = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: p.py\n@@\n def f():\n-    a = 1\n+    a = 2\n     return a\n*** End Patch\nEOF\n";
    let env = json!({"cwd": dir.path(), "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": cmd}})
    .to_string();
    let a = answer(&run_hook(Agent::Codex, &env));
    let c = a["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap();
    assert!(
        c.starts_with("apply_patch <<'EOF'\n*** Begin Patch\n"),
        "{c}"
    );
    assert!(c.ends_with("*** End Patch\nEOF\n"), "{c}");
    assert!(c.contains("-    a = 1   \n"), "{c}");
    // Other shell commands are not redline's business.
    let env = json!({"cwd": dir.path(), "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "ls -la"}})
    .to_string();
    assert_eq!(run_hook(Agent::Codex, &env).stdout, "");
}
