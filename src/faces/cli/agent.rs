//! The agent-harness commands: `hook`, `watch`, `setup` (SPEC §1, §9).

use crate::error::ExitStatus;
use crate::faces::hook::{self, Agent};
use std::io::{Read as _, Write as _};
use std::path::PathBuf;

/// `redline hook AGENT`: never exit 2 (Claude Code, Codex and Gemini CLI read 2 as "block"), so
/// every problem of the hook itself is exit 1 with a message, and the harness decides.
pub(super) fn hook(
    agent: &str,
    root: Option<PathBuf>,
    review: bool,
    no_watch: &str,
    wait: Option<&str>,
) -> ExitStatus {
    let Some(agent) = Agent::parse(agent) else {
        eprintln!("redline hook: unknown agent `{agent}`; use claude, codex, gemini or pi");
        return ExitStatus::Rejected;
    };
    let Some(no_watch) = hook::NoWatch::parse(no_watch) else {
        eprintln!("redline hook: --no-watch takes ask, deny or allow, not `{no_watch}`");
        return ExitStatus::Rejected;
    };
    let wait = match wait.map(|w| w.trim().parse::<u64>()) {
        None => std::time::Duration::from_secs(hook::DEFAULT_WAIT_SECS),
        Some(Ok(secs)) => std::time::Duration::from_secs(secs),
        Some(Err(_)) => {
            eprintln!("redline hook: --wait takes a number of seconds");
            return ExitStatus::Rejected;
        }
    };
    let mut stdin = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut stdin) {
        eprintln!("redline hook: cannot read the hook input: {e}");
        return ExitStatus::Rejected;
    }
    let opts = hook::Options {
        root,
        review,
        no_watch,
        wait,
    };
    let out = hook::run(agent, &stdin, &opts);
    let _ = std::io::stdout().lock().write_all(out.stdout.as_bytes());
    let _ = std::io::stderr().lock().write_all(out.stderr.as_bytes());
    if out.exit == 0 {
        ExitStatus::Success
    } else {
        ExitStatus::Rejected
    }
}

/// `redline setup AGENT`: prints one line per file it looked at.
pub(super) fn setup(
    agent: &str,
    root: &std::path::Path,
    review: bool,
    user: bool,
    remove: bool,
) -> ExitStatus {
    let Some(agent) = Agent::parse(agent) else {
        super::output::diagnostic(
            &format!("unknown agent `{agent}`"),
            Some("use claude, codex, gemini or pi"),
        );
        return ExitStatus::Usage;
    };
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
        super::output::diagnostic("HOME is not set", Some("set HOME to your home directory"));
        return ExitStatus::Usage;
    };
    let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    let opts = crate::faces::setup::Options {
        agent,
        review,
        user,
        remove,
        root,
        home,
        codex_home: std::env::var_os("CODEX_HOME").map(PathBuf::from),
    };
    match crate::faces::setup::run(&opts) {
        Ok(r) => {
            println!("{}", r.summary);
            if agent == Agent::Codex && !remove && r.changed {
                println!(
                    "note: Codex runs hooks only from a trusted configuration; `codex exec` skips untrusted hooks silently"
                );
            }
            ExitStatus::Success
        }
        Err(e) => {
            super::output::diagnostic(&e, Some("nothing was changed"));
            ExitStatus::WriteFailed
        }
    }
}

/// `redline watch`: runs until the human quits it on the empty inbox.
pub(super) fn watch(
    settings: &crate::service::Settings,
    accept_exact: bool,
    monochrome: bool,
) -> ExitStatus {
    let opts = crate::faces::watch::WatchOptions {
        settings: settings.clone(),
        accept_exact,
        monochrome,
    };
    match crate::faces::watch::run(&opts) {
        Ok(s) => s,
        Err(e) => {
            super::output::diagnostic(&e, Some("run redline watch in a terminal, once per root"));
            ExitStatus::Usage
        }
    }
}
