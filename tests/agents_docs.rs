//! Runs the examples of docs/agents.md: every block marked `<!-- test: NAME -->` is taken from the
//! document as written, so a change to `redline setup` or `redline hook` that breaks an example
//! fails here.

mod common;

use serde_json::Value;
use std::path::Path;

const DOC: &str = include_str!("../docs/agents.md");

/// The fenced block after `<!-- test: NAME -->`.
fn block(name: &str) -> String {
    common::doc_block(DOC, "docs/agents.md", name)
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.py"), block("app.py")).unwrap();
    dir
}

/// Runs `redline hook AGENT` on the documented envelope, its `cwd` pointed at `dir`.
fn hook(agent: &str, envelope: &str, dir: &Path) -> Value {
    let mut env: Value = serde_json::from_str(envelope).unwrap();
    env["cwd"] = Value::String(dir.to_string_lossy().into_owned());
    let out = common::output_with_stdin(
        common::redline().args(["hook", agent]),
        env.to_string().as_bytes(),
    );
    common::json_stdout(&out)
}

#[test]
fn the_example_file_keeps_its_trailing_spaces() {
    assert!(
        block("app.py").contains("    s = 0  \n"),
        "an editor stripped them"
    );
}

#[test]
fn claude_setup_writes_the_documented_settings() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".claude")).unwrap();
    let settings = dir.path().join(".claude/settings.json");
    std::fs::write(&settings, r#"{"model": "opus"}"#).unwrap();
    let out = common::redline()
        .args(["setup", "claude", "--root"])
        .arg(dir.path())
        .env("HOME", dir.path().join("home"))
        .output()
        .unwrap();
    common::assert_success(&out);
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        block("claude-settings")
    );
    // Idempotent, and --remove gives the user's file back (as JSON).
    let again = common::redline()
        .args(["setup", "claude", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&again.stdout).contains("already set up"));
    let rm = common::redline()
        .args(["setup", "claude", "--remove", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(rm.status.success());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(v, serde_json::json!({"model": "opus"}));
}

#[test]
fn gemini_example_answer() {
    let dir = project();
    let answer = hook("gemini", &block("gemini-envelope"), dir.path());
    let want: Value = serde_json::from_str(&block("gemini-answer")).unwrap();
    assert_eq!(answer, want);
}

#[test]
fn pi_example_answer() {
    let dir = project();
    let answer = hook("pi", &block("pi-envelope"), dir.path());
    let want: Value = serde_json::from_str(&block("pi-answer")).unwrap();
    assert_eq!(answer, want);
}
