//! redline: review and apply batches of text edits proposed by coding agents.
//!
//! A library user parses a batch into a [`Request`] (or builds one), then runs the whole sequence
//! with [`run`] (lock → recover → resolve → commit → report, as `redline apply` does; with
//! [`Mode::DryRun`] nothing is written) and reads the [`Response`].
//!
//! ```no_run
//! let req = redline::parse_json(r#"{"path": "a.rs", "oldText": "x", "newText": "y"}"#)?;
//! let settings = redline::Settings { root: "project".into(), ..Default::default() };
//! let run = redline::run(&req, redline::Mode::DryRun, &settings);
//! println!("{}", run.to_pretty());
//! # Ok::<(), redline::RequestError>(())
//! ```
//!
//! The public surface is the `pub use` block below, the [`response`] types, the writer
//! ([`write`](mod@write): confined, atomic, all-or-nothing commits beneath a [`Root`]), the
//! [`hash`] of a file's bytes that `expectHash` names, and [`cli::main`], the `redline` binary.
//! Everything else is crate-private; the flow shows in the modules, each depending only on those
//! after it:
//! - `faces`: what people and programs talk to (CLI, reviewer, serve, MCP, LSP, filter, hooks,
//!   watch);
//! - `service`: the one sequence every face calls: lock → recover → resolve → commit → report;
//! - `report`: a plan and what the writer did, turned into the [`Response`] (§4 of the contract);
//! - `engine`: the pure, in-memory resolution of a request into a plan;
//! - `request`: the [`Request`], its JSON wire shapes and its dialects;
//! - [`write`](mod@write): the only module that changes files (confined, atomic, all or nothing).
#![warn(unreachable_pub, missing_docs)]
mod busy;
mod engine;
mod error;
mod faces;
pub mod hash;
mod offsets;
mod pages;
#[cfg(test)]
mod properties;
mod report;
mod request;
mod service;
pub mod write;

pub use engine::document::PositionEncoding;
pub use engine::relaxed::Tolerance;
pub use error::{Code, ExitStatus, WarningCode};
pub use report::Mode;
pub use report::response::{self, Response};
pub use request::dialect::InputKind;
pub use request::wire::parse_json;
pub use request::{
    DocumentOverride, EditSpec, FileRequest, PatchChunk, PatchLines, Request, RequestError,
};
pub use service::{Run, Settings, run};
pub use write::Root;

/// Parses a request in any syntax redline accepts: JSON (SPEC §2, as [`parse_json`]), a Codex
/// `*** Begin Patch` patch or SEARCH/REPLACE blocks; [`InputKind::Auto`] detects which.
///
/// # Errors
/// The text is none of these, or not a valid request of its kind.
pub fn parse(text: &str, kind: InputKind) -> Result<Request, RequestError> {
    request::dialect::parse(text, kind, parse_json)
}

/// The `redline` command line.
pub mod cli {
    pub use crate::faces::cli::main;
}

/// Not API: what `benches/review.rs` drives (the reviewer's model, update and draw, timed frame by
/// frame below the terminal, which no public entry exposes). Hidden and unstable.
#[doc(hidden)]
pub mod bench {
    use crate::engine::plan::{ResolveOptions, resolve};
    use crate::faces::review::Options;
    use crate::faces::review::highlight::Palette;
    use crate::{Request, RequestError, Root};

    pub use crate::faces::review::terminal::frame_writer;
    pub use crate::faces::review::view::draw;
    pub use crate::faces::review::{Action, Model, update};

    /// The reviewer over `req` resolved beneath `root` (default options, the dark syntax
    /// palette), laid out for a terminal of `columns` × `rows`.
    ///
    /// # Errors
    /// The request does not resolve (as `redline review` would refuse it).
    pub fn model(
        root: &Root,
        req: &Request,
        columns: u16,
        rows: u16,
    ) -> Result<Model, RequestError> {
        let plan = resolve(req, root, ResolveOptions::default())?;
        let mut m = Model::new(plan, Options::default());
        m.set_syntax(Some(Palette::Dark));
        m.size = (columns, rows);
        Ok(m)
    }

    /// How many display rows `file`'s diff has (built when the file was first shown).
    pub fn rows(m: &Model, file: usize) -> usize {
        m.rows_of(file).len()
    }

    /// The cursor's row and the first visible row of the current file's diff.
    pub fn cursor_and_scroll(m: &Model) -> (usize, usize) {
        (m.cursor.row, m.scroll)
    }
}
