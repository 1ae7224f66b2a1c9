//! redline: review and apply batches of text edits proposed by coding agents.
//!
//! A library user parses a batch into a [`Request`], then either runs the whole sequence with
//! [`run`] (lock → recover → resolve → commit → report, as `redline apply` does) or resolves it
//! into a [`Plan`] with [`resolve`] and reads the [`Response`] built from it.
//!
//! ```no_run
//! let req = redline::parse_json(r#"{"path": "a.rs", "oldText": "x", "newText": "y"}"#)?;
//! let settings = redline::Settings { root: "project".into(), ..Default::default() };
//! let run = redline::run(&req, redline::Mode::DryRun, &settings);
//! println!("{}", run.to_pretty());
//! # Ok::<(), redline::RequestError>(())
//! ```
//!
//! The flow shows in the modules, each depending only on those listed after it:
//! - `faces`: what people and programs talk to (CLI, reviewer, serve, MCP, LSP, filter, hooks,
//!   watch) — the binary's, public only so that `main.rs` and the benches reach it;
//! - [`service`]: the one sequence every face calls: lock → recover → resolve → commit → report;
//! - [`report`]: a plan and what the writer did, turned into the response (§4 of the contract);
//! - [`engine`]: the pure, in-memory resolution of a request into a [`engine::plan::Plan`];
//! - [`request`]: the request ([`request::Request`]), its JSON wire shapes and its dialects;
//! - [`write`]: the only module that changes files (confined, atomic, all or nothing).
#![warn(unreachable_pub, missing_docs)]
pub mod engine;
pub mod error;
#[doc(hidden)]
pub mod faces;
pub mod hash;
#[cfg(test)]
mod properties;
pub mod report;
pub mod request;
pub mod service;
pub mod write;

pub use engine::plan::{Plan, ResolveOptions, resolve};
pub use error::{Code, ExitStatus};
pub use report::Mode;
pub use report::response::Response;
pub use request::dialect::{InputKind, parse};
pub use request::wire::parse_json;
pub use request::{Request, RequestError};
pub use service::{Run, Settings, run};
pub use write::Root;
