//! redline: review and apply batches of text edits proposed by coding agents.
//!
//! The flow shows in the modules, each depending only on those listed after it:
//! - [`faces`]: what people and programs talk to (CLI, reviewer, serve, MCP, LSP, filter);
//! - [`service`]: the one sequence every face calls: lock → recover → resolve → commit → report;
//! - [`report`]: a plan and what the writer did, turned into the response (§4 of the contract);
//! - [`engine`]: the pure, in-memory resolution of a request into a [`engine::plan::Plan`];
//! - [`request`]: the request ([`request::Request`]), its JSON wire shapes and its dialects;
//! - [`write`]: the only module that changes files (confined, atomic, all or nothing).
#![warn(unreachable_pub)]
pub mod engine;
pub mod error;
pub mod faces;
pub mod hash;
pub mod report;
pub mod request;
pub mod service;
pub mod write;
