//! `redline hook AGENT` (SPEC §9): an agent harness's pre-tool hook.
//!
//! The hook reads the harness's envelope ([`envelope`]), decides ([`guard`], or [`review`]
//! with `--review`) and answers in the harness's own format ([`answer`]). It never writes a file: the
//! harness runs its own tool on the answer. An envelope redline cannot read, or an internal error,
//! never blocks the agent: it is said on stderr and the decision is left to the harness.

pub(crate) mod answer;
pub(crate) mod envelope;
pub(crate) mod guard;
pub(crate) mod patch;
pub(crate) mod reason;
pub(crate) mod review;
#[cfg(test)]
mod tests;

pub(crate) use envelope::Agent;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// What to do in `--review` when no `watch` is running on the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum NoWatch {
    /// The harness's own prompt decides.
    #[default]
    Ask,
    Deny,
    /// Guard mode decides.
    Allow,
}

impl NoWatch {
    pub(crate) fn parse(s: &str) -> Option<NoWatch> {
        match s {
            "ask" => Some(NoWatch::Ask),
            "deny" => Some(NoWatch::Deny),
            "allow" => Some(NoWatch::Allow),
            _ => None,
        }
    }
}

/// How the hook runs.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// `--root`; default: the harness's project directory (the envelope's `cwd`).
    pub root: Option<PathBuf>,
    /// `--review`: send the batch to `redline watch` and wait for the human.
    pub review: bool,
    pub no_watch: NoWatch,
    /// How long `--review` waits for the human.
    pub wait: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            root: None,
            review: false,
            no_watch: NoWatch::Ask,
            wait: Duration::from_secs(DEFAULT_WAIT_SECS),
        }
    }
}

/// The hook's verdict, before it is put in the harness's format.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Decision {
    /// No objection: the harness's own flow (and permission prompt) decides.
    Pass,
    /// Run the tool on this input instead; only given where the harness would let the edit
    /// through anyway (or a human accepted it).
    Rewrite { input: Value, reason: String },
    /// Refuse; `reason` is written for the model.
    Deny { reason: String },
    /// A human accepted it in `watch`: allow, with the input narrowed when some edits were
    /// rejected.
    Allow {
        input: Option<Value>,
        reason: String,
    },
    /// Leave it to the harness's prompt, with a reason the user sees.
    Ask { reason: String },
    /// Claude's `PostToolBatch`: context for the model's next request.
    Context { text: String },
}

/// What the hook prints and exits with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Output {
    pub stdout: String,
    pub stderr: String,
    pub exit: i32,
}

/// Runs the hook on the harness's stdin.
pub(crate) fn run(agent: Agent, stdin: &str, opts: &Options) -> Output {
    let env = match envelope::parse(agent, stdin) {
        Ok(e) => e,
        Err(e) => return not_judged(agent, &e),
    };
    let root = match &opts.root {
        Some(r) if r.is_absolute() => r.clone(),
        Some(r) => env.cwd.join(r),
        None => env.cwd.clone(),
    };
    let decision = if opts.review {
        review::decide(&env, &root, opts)
    } else {
        guard::decide(&env, &root)
    };
    match decision {
        Ok(d) => answer::render(agent, &d),
        Err(e) => not_judged(agent, &e),
    }
}

/// An error that leaves the decision to the harness: said on stderr, never a block.
fn not_judged(agent: Agent, message: &str) -> Output {
    let mut out = answer::render(agent, &Decision::Pass);
    out.stderr = format!(
        "redline hook {}: {message}; leaving the decision to the harness\n",
        agent.name()
    );
    // A non-zero exit that is not 2 is "non-blocking error" for Claude, Codex and Gemini: the
    // harness goes on and shows the message. The Pi extension treats it the same way.
    out.exit = 1;
    out
}

/// How long `--review` waits for the human by default; `setup --review` gives the harness a
/// longer hook timeout than this, so the hook can say it ran out before the harness kills it.
pub(crate) const DEFAULT_WAIT_SECS: u64 = 600;
