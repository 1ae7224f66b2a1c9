//! The engine: resolves a request against file contents into a plan, purely in memory.
//!
//! `document` decodes a file; `normalize` builds the normalized view N(·) with its map back;
//! `matcher` finds each edit's occurrences; `relaxed` is the §3b tier for what it does not find; `hint` finds candidates for the edits that fail;
//! `plan` puts it together per file; `diff` renders the plan's changes as unified diffs.
pub(crate) mod diff;
pub(crate) mod document;
pub(crate) mod editorconfig;
pub(crate) mod failure;
pub(crate) mod hint;
pub(crate) mod matcher;
pub(crate) mod normalize;
pub(crate) mod plan;
pub(crate) mod relaxed;
