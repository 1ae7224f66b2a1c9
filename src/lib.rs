//! redline: review and apply batches of text edits proposed by coding agents.
pub mod diff;
pub mod document;
pub mod error;
pub mod hash;
pub mod matcher;
pub mod normalize;
pub mod request;
pub mod write;
