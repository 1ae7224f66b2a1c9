//! End-to-end runs of the real `redline review` binary inside tmux: keys in, screen and files
//! and exit code out. Each test has its own tmux server (`-L` socket) and workspace, so they run
//! in parallel; they wait on screen conditions, never on fixed sleeps.
//!
//! tmux is required in CI (`.ci/run` installs it): `harness = false`, so without it these tests
//! are reported as ignored, and fail under `CI=true`.

#[path = "support/clients.rs"]
mod clients;

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::BIN;
use common::tmux::Tmux;

/// A workspace with two files and a batch of three exact edits.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "alpha\nbeta\n").unwrap();
    let batch = r#"{"files": [
        {"path": "a.txt", "edits": [{"oldText": "one", "newText": "ONE"}, {"oldText": "three", "newText": "THREE"}]},
        {"path": "b.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]}
    ]}"#;
    let req = dir.path().join("batch.json");
    std::fs::write(&req, batch).unwrap();
    (dir, req)
}

fn read(dir: &Path, p: &str) -> String {
    std::fs::read_to_string(dir.join(p)).unwrap()
}

fn review_cmd(extra: &str) -> String {
    format!("'{BIN}' review batch.json {extra}")
}

fn accept_all_and_apply() {
    let (dir, _) = workspace();
    let t = Tmux::start("accept-all", dir.path(), &review_cmd(""));
    t.wait_for("0/3 decided");
    t.keys(&["Y"]);
    t.wait_for("2/3 decided");
    t.keys(&["Y"]);
    t.wait_for("3/3 decided");
    t.keys(&["A"]);
    t.wait_for("Apply summary");
    t.keys(&["Enter"]);
    let s = t.wait_for("Wrote 3 accepted edits to 2 files");
    assert!(
        s.contains("a.txt") && s.contains("written (2 edits)"),
        "{s}"
    );
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), 0);
    assert_eq!(read(dir.path(), "a.txt"), "ONE\ntwo\nTHREE\n");
    assert_eq!(read(dir.path(), "b.txt"), "alpha\nBETA\n");
    // The results screen left with the alternate screen; a summary stays on the terminal.
    let s = t.screen();
    assert!(
        s.contains("redline: wrote 3 accepted edits to 2 files: a.txt, b.txt"),
        "{s}"
    );
    assert!(
        s.contains("3 edits: 3 accepted · 0 rejected · 0 undecided"),
        "{s}"
    );
    assert!(
        s.contains("JSON result not printed: stdout is a terminal"),
        "{s}"
    );
}

fn reject_one_writes_the_others() {
    let (dir, _) = workspace();
    let t = Tmux::start("reject-one", dir.path(), &review_cmd(""));
    t.wait_for("0/3 decided");
    t.keys(&["d"]);
    t.wait_for("✗1");
    t.keys(&["y"]);
    t.wait_for("2/3 decided");
    t.keys(&["y"]);
    t.wait_for("3/3 decided");
    t.keys(&["A"]);
    t.wait_for("Apply summary");
    t.keys(&["Enter"]);
    t.wait_for("Wrote 2 accepted edits to 2 files");
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), 0);
    assert_eq!(
        read(dir.path(), "a.txt"),
        "one\ntwo\nTHREE\n",
        "the rejected edit is not written"
    );
    assert_eq!(read(dir.path(), "b.txt"), "alpha\nBETA\n");
}

fn quit_without_applying_exits_4_writes_nothing_and_prints_json_when_piped() {
    let (dir, _) = workspace();
    // stdout is a file: the reviewer draws on /dev/tty and the JSON result goes to the file.
    let t = Tmux::start("quit", dir.path(), &review_cmd("> result.json"));
    t.wait_for("0/3 decided");
    t.keys(&["y"]);
    t.wait_for("1/3 decided");
    t.keys(&["q"]);
    t.wait_for("Quit without writing?");
    t.keys(&["y"]);
    assert_eq!(t.exit_code(), 4);
    assert_eq!(read(dir.path(), "a.txt"), "one\ntwo\nthree\n");
    assert_eq!(read(dir.path(), "b.txt"), "alpha\nbeta\n");
    // The summary goes to the terminal (/dev/tty), never into the JSON on stdout.
    let s = t.screen();
    assert!(
        s.contains("redline: quit without writing; nothing was applied"),
        "{s}"
    );
    assert!(s.contains("the accepted edits were not written"), "{s}");
    assert!(
        s.contains("JSON result written to /") && s.contains("result.json"),
        "{s}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&read(dir.path(), "result.json")).expect("JSON on stdout");
    assert_eq!(v["applied"], false);
    assert_eq!(v["written"], false);
    let decisions: Vec<&str> = v["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decisions, vec!["accepted", "undecided", "undecided"]);
    // The terminal was restored: the shell's output is on the normal screen.
    let alt = t.run(&["display-message", "-p", "-t", "t", "#{alternate_on}"]);
    assert_eq!(alt.trim(), "0");
}

fn a_file_changed_during_the_review_is_not_overwritten() {
    let (dir, _) = workspace();
    let t = Tmux::start("stale", dir.path(), &review_cmd(""));
    t.wait_for("0/3 decided");
    t.keys(&["Y"]);
    t.wait_for("2/3 decided");
    t.keys(&["Y"]);
    t.wait_for("3/3 decided");
    std::fs::write(dir.path().join("a.txt"), "edited elsewhere\n").unwrap();
    t.keys(&["A"]);
    t.wait_for("Apply summary");
    t.keys(&["Enter"]);
    let s = t.wait_for("Nothing was written");
    assert!(s.contains("a.txt changed on disk"), "{s}");
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), 1);
    assert_eq!(read(dir.path(), "a.txt"), "edited elsewhere\n");
    assert_eq!(
        read(dir.path(), "b.txt"),
        "alpha\nbeta\n",
        "the batch is all or nothing"
    );
}

fn resize_to_too_small_and_back() {
    let (dir, _) = workspace();
    let t = Tmux::start("resize", dir.path(), &review_cmd(""));
    t.wait_for("0/3 decided");
    t.run(&["resize-window", "-t", "t", "-x", "50", "-y", "8"]);
    t.wait_for("terminal too small");
    t.run(&["resize-window", "-t", "t", "-x", "100", "-y", "24"]);
    t.wait_for("0/3 decided");
    t.keys(&["C-c"]);
    assert_eq!(t.exit_code(), 4);
}

fn demo_opens_and_quits() {
    let dir = tempfile::tempdir().unwrap();
    // The demo keeps its workspace for the user to look at: make it in this test's directory.
    let t = Tmux::start(
        "demo",
        dir.path(),
        &format!("TMPDIR='{}' '{BIN}' demo", dir.path().display()),
    );
    let s = t.wait_for("redline demo");
    assert!(
        s.contains("src/greet.rs") && s.contains("≈") && s.contains("13 edits (2 failed)"),
        "{s}"
    );
    t.keys(&["}", "i"]);
    t.wait_for("closest");
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), 4);
    // Its workspace is in this test's directory, which is removed with it.
    let kept = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("redline-demo-")
        })
        .count();
    assert_eq!(kept, 1);
}

fn the_terminal_is_restored_after_a_panic() {
    let (dir, _) = workspace();
    // Debug builds panic after the first frame when this is set.
    let t = Tmux::start(
        "panic",
        dir.path(),
        &format!(
            "REDLINE_REVIEW_TEST_PANIC=1 {}; stty -a | grep -o -- '-\\?icanon' ",
            review_cmd("")
        ),
    );
    let s = t.wait_for("EXIT=");
    assert!(
        s.contains("deliberate panic"),
        "the panic message prints after restoring: {s}"
    );
    let alt = t.run(&["display-message", "-p", "-t", "t", "#{alternate_on}"]);
    assert_eq!(alt.trim(), "0", "left the alternate screen");
    assert!(
        s.lines().any(|l| l.trim() == "icanon"),
        "cooked mode is back: {s}"
    );
    assert_eq!(read(dir.path(), "a.txt"), "one\ntwo\nthree\n");
}

fn without_a_terminal_review_is_a_usage_error() {
    // `setsid` detaches from the controlling terminal, so /dev/tty cannot be opened.
    let (dir, _) = workspace();
    let out = Command::new("setsid")
        .arg("-w")
        .arg(BIN)
        .args(["review", "batch.json"])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: no terminal"), "{err}");
    assert!(err.contains("hint: "), "{err}");
    assert_eq!(read(dir.path(), "a.txt"), "one\ntwo\nthree\n");
}

/// Waits until the pane's header shows `title` (the diff pane's `· path · edit i/n` part).
fn wait_title(t: &Tmux, title: &str) {
    t.wait_for(title);
}

fn every_spec_key_through_a_real_terminal() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(dir.path().join("c.txt"), "it’s\n").unwrap();
    let batch = r#"{"files": [
        {"path": "a.txt", "edits": [{"oldText": "one", "newText": "ONE"}, {"oldText": "three", "newText": "THREE"}]},
        {"path": "b.txt", "edits": [{"oldText": "beta", "newText": "BETA"}, {"oldText": "nope", "newText": "x"}]},
        {"path": "c.txt", "edits": [{"oldText": "it's", "newText": "it is"}]}
    ]}"#;
    std::fs::write(dir.path().join("batch.json"), batch).unwrap();
    let t = Tmux::start("keys", dir.path(), &review_cmd("> result.json"));
    t.wait_for("0/4 decided");
    wait_title(&t, "a.txt · edit #1 of 2");
    // ]/[ edit, }/{ file.
    t.keys(&["]"]);
    wait_title(&t, "a.txt · edit #2 of 2");
    t.keys(&["["]);
    wait_title(&t, "a.txt · edit #1 of 2");
    t.keys(&["}"]);
    wait_title(&t, "b.txt · edit #2 of 2");
    t.keys(&["}"]);
    wait_title(&t, "c.txt · edit #1 of 1");
    t.keys(&["{", "{"]);
    wait_title(&t, "a.txt · edit #1 of 2");
    // j/k move by line (- one, + ONE, two, - three); the edit under the cursor follows.
    t.keys(&["j", "j"]);
    t.wait_for("┌ · a.txt ──");
    t.keys(&["j"]);
    wait_title(&t, "a.txt · edit #2 of 2");
    t.keys(&["k", "k"]);
    wait_title(&t, "a.txt · edit #1 of 2");
    // f/F flagged (failed or normalized): b.txt's failed edit, then c.txt's normalized one.
    t.keys(&["f"]);
    wait_title(&t, "b.txt · edit #2 of 2 !");
    t.keys(&["f"]);
    wait_title(&t, "c.txt · edit #1 of 1 ≈");
    t.keys(&["F"]);
    wait_title(&t, "b.txt · edit #2 of 2 !");
    // y accepts and advances to the next undecided; d rejects and advances.
    t.keys(&["{", "y"]);
    t.wait_for("✓1 ✗0 ·3");
    wait_title(&t, "a.txt · edit #2 of 2");
    t.keys(&["d"]);
    t.wait_for("✓1 ✗1 ·2");
    // Space toggles, x clears (neither advances). `d` went on to b.txt's beta.
    wait_title(&t, "b.txt · edit #1 of 2 !");
    t.keys(&["{"]);
    wait_title(&t, "a.txt · edit #1 of 2");
    t.keys(&["Space"]);
    t.wait_for("✓0 ✗2 ·2");
    t.keys(&["x"]);
    t.wait_for("✓0 ✗1 ·3");
    // u undoes, Ctrl-r redoes.
    t.keys(&["u"]);
    t.wait_for("✓0 ✗2 ·2");
    t.keys(&["C-r"]);
    t.wait_for("✓0 ✗1 ·3");
    // J/K: next/previous undecided (wrapping).
    t.keys(&["J"]);
    wait_title(&t, "b.txt · edit #1 of 2");
    t.keys(&["J"]);
    wait_title(&t, "c.txt · edit #1 of 1");
    t.keys(&["K"]);
    wait_title(&t, "b.txt · edit #1 of 2");
    // Y/D: the whole file.
    t.keys(&["{", "D"]);
    t.wait_for("✓0 ✗2 ·2");
    t.keys(&["{", "Y"]);
    t.wait_for("✓2 ✗0 ·2");
    // i why, s split, / search, ? help; Esc closes each.
    t.keys(&["}", "}", "i"]);
    t.wait_for("curly quotes");
    t.keys(&["Escape", "s"]);
    t.wait_for("│ 1 + it is");
    t.keys(&["s", "/"]);
    t.wait_for("Enter search");
    t.type_text("BETA");
    t.keys(&["Enter"]);
    t.wait_for("match 1/1");
    wait_title(&t, "b.txt");
    t.keys(&["Escape", "?"]);
    t.wait_for("accept every edit of the file");
    t.keys(&["Escape"]);
    // q asks when decisions exist; n keeps reviewing.
    t.keys(&["q"]);
    t.wait_for("Quit without writing?");
    t.keys(&["n"]);
    t.wait_for("✓2 ✗0 ·2");
    // A then Enter writes only the accepted edits (a.txt's two).
    t.keys(&["A"]);
    t.wait_for("Apply summary");
    t.keys(&["Enter"]);
    t.wait_for("Wrote 2 accepted edits to 1 file");
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), 0);
    assert_eq!(read(dir.path(), "a.txt"), "ONE\ntwo\nTHREE\n");
    assert_eq!(read(dir.path(), "b.txt"), "alpha\nbeta\n");
    assert_eq!(read(dir.path(), "c.txt"), "it’s\n");
    let v: serde_json::Value = serde_json::from_str(&read(dir.path(), "result.json")).unwrap();
    assert_eq!(v["applied"], true);
    assert_eq!(v["written"], true);
}

fn accept_exact_starts_exact_matches_accepted() {
    let (dir, _) = workspace();
    std::fs::write(dir.path().join("b.txt"), "alpha\nbeta  \n").unwrap();
    let batch = r#"{"files": [
        {"path": "a.txt", "edits": [{"oldText": "one", "newText": "ONE"}]},
        {"path": "b.txt", "edits": [{"oldText": "beta\n", "newText": "BETA\n"}]}
    ]}"#;
    std::fs::write(dir.path().join("batch.json"), batch).unwrap();
    let t = Tmux::start("accept-exact", dir.path(), &review_cmd("--accept-exact"));
    // The exact one starts accepted, the normalized one (trailing spaces) undecided.
    t.wait_for("✓1 ✗0 ·1");
    t.keys(&["A"]);
    t.wait_for("Apply summary");
    t.keys(&["Enter"]);
    t.wait_for("Wrote 1 accepted edit to 1 file");
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), 0);
    assert_eq!(read(dir.path(), "a.txt"), "ONE\ntwo\nthree\n");
    assert_eq!(read(dir.path(), "b.txt"), "alpha\nbeta  \n");
}

fn esc_then_a_key_in_one_write_loses_neither() {
    let (dir, _) = workspace();
    let t = Tmux::start("esc-key", dir.path(), &review_cmd(""));
    t.wait_for("0/3 decided");
    t.keys(&["i"]);
    t.wait_for("why · edit");
    // Esc and `s` in one write, as a terminal sends Alt+s: the drawer closes and the view splits.
    t.keys_at_once(&["Escape", "s"]);
    t.wait_for("│ 1 + ONE");
    let s = t.screen();
    assert!(!s.contains("why · edit"), "the drawer closed: {s}");
    // Esc and `?` at once from a search: the search is cleared, help opens.
    t.keys(&["/"]);
    t.wait_for("Enter search");
    t.type_text("two");
    t.keys(&["Enter"]);
    t.wait_for("match 1/1");
    t.keys_at_once(&["Escape", "?"]);
    t.wait_for("accept every edit of the file");
    // Esc and `q` at once: help closes, then q quits (nothing decided).
    t.keys_at_once(&["Escape", "q"]);
    assert_eq!(t.exit_code(), 4);
}

fn main() -> std::process::ExitCode {
    use clients::Case;
    clients::main(vec![
        Case {
            name: "accept_all_and_apply",
            needs: &["tmux"],
            run: accept_all_and_apply,
        },
        Case {
            name: "reject_one_writes_the_others",
            needs: &["tmux"],
            run: reject_one_writes_the_others,
        },
        Case {
            name: "quit_without_applying_exits_4_writes_nothing_and_prints_json_when_piped",
            needs: &["tmux"],
            run: quit_without_applying_exits_4_writes_nothing_and_prints_json_when_piped,
        },
        Case {
            name: "a_file_changed_during_the_review_is_not_overwritten",
            needs: &["tmux"],
            run: a_file_changed_during_the_review_is_not_overwritten,
        },
        Case {
            name: "resize_to_too_small_and_back",
            needs: &["tmux"],
            run: resize_to_too_small_and_back,
        },
        Case {
            name: "demo_opens_and_quits",
            needs: &["tmux"],
            run: demo_opens_and_quits,
        },
        Case {
            name: "the_terminal_is_restored_after_a_panic",
            needs: &["tmux"],
            run: the_terminal_is_restored_after_a_panic,
        },
        Case {
            name: "without_a_terminal_review_is_a_usage_error",
            needs: &["setsid"],
            run: without_a_terminal_review_is_a_usage_error,
        },
        Case {
            name: "every_spec_key_through_a_real_terminal",
            needs: &["tmux"],
            run: every_spec_key_through_a_real_terminal,
        },
        Case {
            name: "accept_exact_starts_exact_matches_accepted",
            needs: &["tmux"],
            run: accept_exact_starts_exact_matches_accepted,
        },
        Case {
            name: "esc_then_a_key_in_one_write_loses_neither",
            needs: &["tmux"],
            run: esc_then_a_key_in_one_write_loses_neither,
        },
    ])
}
