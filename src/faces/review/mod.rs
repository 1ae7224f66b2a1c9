//! The terminal reviewer (`redline review`, SPEC §8): the human's last word on a batch.
//!
//! The Elm Architecture: [`model`] is plain data, [`update`] the one pure transition, [`keys`] the
//! table that drives dispatch, footer and help, [`view`] reads the model and draws only what is
//! visible. Decisions are per edit ([`unit::Unit`]); only accepted edits are ever written, by
//! the one writing module, after the apply summary ([`apply`]). [`terminal`] restores the
//! terminal on every exit path; [`app`] is the event loop.
pub(crate) mod app;
pub(crate) mod apply;
pub(crate) mod highlight;
pub(crate) mod keys;
pub(crate) mod model;
pub(crate) mod result;
pub(crate) mod rows;
pub(crate) mod summary;
pub(crate) mod terminal;
pub(crate) mod unit;
pub mod update;
pub(crate) mod view;

pub use keys::Action;
pub use model::Model;
pub(crate) use model::Options;
pub use update::update;

use crate::error::ExitStatus;
use crate::request::{Request, RequestError};
use crate::service::{self, Settings};

/// How to run a review.
#[derive(Debug, Clone)]
pub(crate) struct ReviewOptions {
    pub settings: Settings,
    /// Exact matches start accepted.
    pub accept_exact: bool,
    /// Monochrome theme (NO_COLOR, `--color never`).
    pub monochrome: bool,
    /// Header title: `review`, or `demo`.
    pub title: String,
}

/// How a review ended.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// 0 after applying, 4 when quit without applying, 1 when the apply was refused (stale),
    /// 3 when writing failed.
    pub exit: ExitStatus,
    /// The JSON result: the SPEC §4 response of the accepted edits plus `applied` and
    /// `decisions` (for stdout when it is not a terminal).
    pub result: result::ReviewResult,
}

/// Why a review could not run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReviewError {
    /// The request (or the root) is unusable: exit 2.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// There is no terminal to draw on (no tty on stdout, no `/dev/tty`): a usage error, exit 2.
    #[error("no terminal to review on: {0}")]
    NoTerminal(std::io::Error),
    /// The terminal could not be set up or read.
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
}

impl ReviewError {
    pub(crate) fn exit(&self) -> ExitStatus {
        match self {
            ReviewError::Request(_) | ReviewError::NoTerminal(_) => ExitStatus::Usage,
            ReviewError::Terminal(_) => ExitStatus::WriteFailed,
        }
    }
}

/// Resolves `req`, opens the reviewer on the terminal (or `/dev/tty`), and writes what the
/// human accepts.
pub(crate) fn run(req: &Request, opts: &ReviewOptions) -> Result<Outcome, ReviewError> {
    let root = service::open_root(&opts.settings)?;
    // Like every writing command, finish an interrupted commit first (briefly locked).
    let _ = service::lock(&root);
    let plan = service::resolve(req, &root, &opts.settings, crate::report::Mode::Apply)?;
    let mut m = Model::new(
        plan,
        Options {
            accept_exact: opts.accept_exact,
            monochrome: opts.monochrome,
        },
    );
    m.title = opts.title.clone();
    // Syntax colours unless monochrome (NO_COLOR, --color never) or REDLINE_THEME=off.
    m.set_syntax(highlight::Palette::from_env());
    let enc = opts.settings.encoding;
    {
        let (mut term, _guard) = terminal::enter().map_err(|e| {
            if terminal::available() {
                ReviewError::Terminal(e)
            } else {
                ReviewError::NoTerminal(e)
            }
        })?;
        app::run(&mut term, &mut m, &root, enc)?;
    }
    // The results screen went with the alternate screen: say what happened where it was.
    terminal::print_after(&summary::lines(
        &m,
        &summary::json_destination(std::io::IsTerminal::is_terminal(&std::io::stdout())),
    ));
    let exit = m.exit.unwrap_or(ExitStatus::ReviewQuit);
    Ok(Outcome {
        exit,
        result: apply::quit_result(&m, enc),
    })
}

#[cfg(test)]
mod tests;
