//! redline: review and apply batches of text edits proposed by coding agents.
//!
//! The library resolves a batch ([`request::Request`]) into a [`plan::Plan`] entirely in memory,
//! reports it ([`report`]) and hands it to the one module that writes ([`write`]).
pub mod batch;
pub mod demo;
pub mod dialect;
pub mod diff;
pub mod document;
pub mod error;
pub mod filter;
pub mod hash;
pub mod hint;
pub mod lsp;
pub mod matcher;
pub mod mcp;
pub mod normalize;
pub mod plan;
pub mod read;
pub mod report;
pub mod request;
pub mod review;
pub mod schema;
pub mod serve;
pub mod wire;
pub mod write;
