//! A real terminal for the end-to-end tests: one tmux server (its own `-L` socket) with one
//! session running a command, so tests run in parallel. Tests wait on screen conditions, never
//! on fixed sleeps.

use std::cell::Cell;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// How long a screen condition may take: generous, for a debug build on a loaded 2-core machine;
/// passing runs never wait this long.
const PATIENCE: Duration = Duration::from_secs(120);

/// Whether tmux can run here; under `CI=true` its absence is a failure, not a skip.
pub fn available() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok || !std::env::var("CI").is_ok_and(|v| v == "true"),
        "tmux is required under CI=true"
    );
    ok
}

/// One tmux server with one session (`t`, 120×32) running a command.
pub struct Tmux {
    socket: String,
    /// The last key sent was `Escape` and no screen condition was awaited since.
    after_escape: Cell<bool>,
}

impl Tmux {
    /// Runs `command` in `dir`; when it ends the pane shows `EXIT=<status>` and stays open.
    /// `name` tells this test's server apart from the others of the same test binary.
    pub fn start(name: &str, dir: &Path, command: &str) -> Tmux {
        let t = Tmux {
            socket: format!("redline-test-{}-{name}", std::process::id()),
            after_escape: Cell::new(false),
        };
        let script = format!(
            "cd '{}' && {command}; echo EXIT=$?; sleep 60",
            dir.display()
        );
        t.run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "120",
            "-y",
            "32",
            &script,
        ]);
        t.run(&["set", "-s", "escape-time", "0"]);
        t
    }

    /// One tmux command on this server; its stdout.
    pub fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Sends keys, each with its own `send-keys`. The reviewer reads `Esc` followed at once by a
    /// key (which a loaded machine delivers in one read, as a terminal sends Alt+key) as both
    /// keys, except where the pair is the start of a terminal sequence: `Esc [` and `Esc O`. Those
    /// would be read as one unknown key, so a test must wait for the screen between them.
    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            assert!(
                !(self.after_escape.get() && (k.starts_with('[') || k.starts_with('O'))),
                "{k:?} right after Escape is read as an escape sequence: wait for the screen first"
            );
            self.run(&["send-keys", "-t", "t", k]);
            self.after_escape.set(*k == "Escape");
        }
    }

    /// Sends `keys` in one `send-keys`, so they reach the terminal in one write.
    pub fn keys_at_once(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.run(&args);
        self.after_escape.set(keys.last() == Some(&"Escape"));
    }

    /// Types `text` literally (no key names).
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "t", "-l", text]);
        self.after_escape.set(false);
    }

    /// What the pane shows now.
    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "t"])
    }

    /// Waits until the screen contains `what`; returns the screen.
    pub fn wait_for(&self, what: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let s = self.screen();
            if s.contains(what) {
                self.after_escape.set(false);
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what:?}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The exit status the pane's shell printed after the command ended.
    pub fn exit_code(&self) -> i32 {
        let s = self.wait_for("EXIT=");
        let line = s
            .lines()
            .find(|l| l.starts_with("EXIT="))
            .expect("an EXIT line");
        line.trim_start_matches("EXIT=")
            .trim()
            .parse()
            .expect("a number")
    }
}

/// The reviewer's part in a batch of two edits: accept the first (and move on), reject the
/// second, write `note` on it (`d` on the last edit stays on it, so the note is on the rejected
/// edit), and apply. `header` is what the screen shows once the batch is there.
pub fn accept_first_reject_second(t: &Tmux, header: &str, note: &str) {
    t.wait_for(header);
    t.keys(&["y"]);
    t.wait_for("✓1");
    t.keys(&["d"]);
    t.wait_for("✗1");
    note_and_apply(t, note);
}

/// The same over two batches of one edit each (tools that replace one string a call): accept
/// and apply the first; the second, which comes after the first one's result and shows `second`,
/// rejected with `note`.
pub fn accept_first_batch_reject_second(t: &Tmux, header: &str, second: &str, note: &str) {
    t.wait_for(header);
    t.keys(&["y"]);
    t.keys(&["A"]);
    t.wait_for("Apply summary");
    t.keys(&["Enter"]);
    t.wait_for(second);
    t.keys(&["d"]);
    note_and_apply(t, note);
}

/// `n`, `note` typed and confirmed, then `A` and `Enter` on the apply summary.
fn note_and_apply(t: &Tmux, note: &str) {
    t.keys(&["n"]);
    t.wait_for("note on edit");
    t.type_text(note);
    t.wait_for(note);
    t.keys(&["Enter"]);
    t.keys(&["A"]);
    t.wait_for("Apply summary");
    t.keys(&["Enter"]);
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}
