//! The faces: everything a person or a program talks to. Each turns its input into a request,
//! calls [`crate::service`] and renders the result its own way.
pub(crate) mod cli;
pub(crate) mod demo;
pub(crate) mod filter;
pub(crate) mod hook;
pub(crate) mod lines;
pub(crate) mod lsp;
pub(crate) mod mcp;
pub(crate) mod read;
pub(crate) mod review;
pub(crate) mod schema;
pub(crate) mod serve;
pub(crate) mod setup;
pub(crate) mod watch;

use crate::report::Mode;
use crate::report::message::Vocabulary;
use crate::service::{Run, Settings};

/// What a face says when a JSON value holds no request.
pub(crate) const NOT_A_REQUEST: &str =
    "params must be a request object (SPEC §2), an array, or request text";

/// Runs a request given as a JSON value, as `serve` and `mcp` receive it (see
/// [`crate::request::from_json`]); a request that does not parse is a run with the request
/// failure (`ok: false`), as the CLI prints it. `None` when the value's JSON type holds no
/// request.
pub(crate) fn run_json(
    value: &serde_json::Value,
    mode: Mode,
    settings: &Settings,
    vocabulary: Vocabulary,
) -> Option<Run> {
    Some(match crate::request::from_json(value)? {
        Ok(req) => crate::service::run_in(&req, mode, settings, vocabulary),
        Err(e) => Run::failed_in(&e, vocabulary),
    })
}
