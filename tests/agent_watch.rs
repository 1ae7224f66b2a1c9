//! `redline watch` in a real terminal (tmux) with real `redline hook … --review` processes
//! submitting to it: the human accepts one edit, rejects another with a note, and the hook's
//! answer carries exactly that; two agents queue up; a batch whose file changed is stale.
//! The tests wait on screen conditions and process ends, never on fixed sleeps.
//!
//! tmux is required under CI=true (`.ci/run` installs it); elsewhere these tests are reported
//! as ignored when it is missing (`harness = false`, tests/support/clients.rs).

#[path = "support/clients.rs"]
mod clients;
mod common;

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Stdio};

use common::BIN;
use common::tmux::{self, Tmux};

/// Starts `redline hook AGENT --review` with `envelope` on stdin.
fn hook(agent: &str, dir: &Path, envelope: &Value) -> Child {
    common::spawn_with_stdin(
        common::redline()
            .args(["hook", agent, "--review", "--wait", "120"])
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
        envelope.to_string().as_bytes(),
    )
}

fn answer(child: Child) -> Value {
    let out = child.wait_with_output().unwrap();
    common::json_stdout(&out)
}

fn watch(name: &str, dir: &Path) -> Tmux {
    let t = Tmux::start(name, dir, &format!("'{BIN}' watch"));
    t.wait_for("Waiting for agents");
    t
}

fn accept_one_edit_reject_another_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let t = watch("notes", dir.path());
    let env = json!({"cwd": dir.path(), "toolName": "edit", "toolCallId": "c1", "input": {"path": "a.txt",
        "edits": [{"oldText": "one", "newText": "ONE"}, {"oldText": "three", "newText": "THREE"}]}});
    let h = hook("pi", dir.path(), &env);
    // First edit: accept (and move on); second: reject, then a note on it.
    tmux::accept_first_reject_second(&t, "watch · pi waits (edit)", "keep three lowercase");
    let a = answer(h);
    assert_eq!(
        a["input"]["edits"],
        json!([{"oldText": "one", "newText": "ONE"}])
    );
    let note = a["note"].as_str().unwrap();
    assert!(note.contains("keep three lowercase"), "{note}");
    assert!(note.contains("edit 2 of"), "{note}");
    t.wait_for("sent pi the decisions (1 accepted)");
    // watch never writes.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
    t.keys(&["q"]);
    t.wait_for("EXIT=0");
    assert!(!dir.path().join(".redline/watch.sock").exists());
}

fn two_agents_queue_and_a_changed_file_is_stale() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "bee\n").unwrap();
    let t = watch("queue", dir.path());
    let claude = json!({"session_id": "sess-claude", "cwd": dir.path(), "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Edit",
        "tool_input": {"file_path": dir.path().join("a.txt"), "old_string": "one", "new_string": "ONE"}});
    let first = hook("claude", dir.path(), &claude);
    t.wait_for("watch · claude session sess-cla waits (Edit)");
    let gemini = json!({"cwd": dir.path(), "hook_event_name": "BeforeTool", "tool_name": "replace",
        "tool_input": {"file_path": "b.txt", "old_string": "bee", "new_string": "BEE"}});
    let second = hook("gemini", dir.path(), &gemini);
    t.wait_for("1 more queued");
    // The first batch's file changes while the human looks at it.
    std::fs::write(dir.path().join("a.txt"), "one!\n").unwrap();
    t.keys(&["y"]);
    t.keys(&["A"]);
    t.wait_for("Apply summary");
    t.keys(&["Enter"]);
    let a = answer(first);
    let h = &a["hookSpecificOutput"];
    assert_eq!(h["permissionDecision"], "deny");
    assert!(
        h["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("changed on disk while the edit waited"),
        "{a}"
    );
    // Then the second agent's batch: accepted.
    t.wait_for("watch · gemini waits (replace)");
    t.keys(&["y"]);
    t.keys(&["A"]);
    t.wait_for("Apply summary");
    t.keys(&["Enter"]);
    let a = answer(second);
    assert_eq!(a["decision"], "allow");
    assert_eq!(a["hookSpecificOutput"]["tool_input"]["old_string"], "bee");
    t.keys(&["q"]);
    t.wait_for("EXIT=0");
}

fn main() -> std::process::ExitCode {
    clients::main(vec![
        clients::Case {
            name: "accept_one_edit_reject_another_with_a_note",
            needs: &["tmux"],
            run: accept_one_edit_reject_another_with_a_note,
        },
        clients::Case {
            name: "two_agents_queue_and_a_changed_file_is_stale",
            needs: &["tmux"],
            run: two_agents_queue_and_a_changed_file_is_stale,
        },
    ])
}
