//! redline: review and apply batches of text edits proposed by coding agents.
pub mod document;
pub mod error;
pub mod hash;
pub mod normalize;
pub mod request;
pub mod write;
