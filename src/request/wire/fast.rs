//! The request most agents send, read in one pass: `{"files": [{"path": ..., "edits":
//! [{"oldText": ..., "newText": ...}, ...]}, ...]}`, with only these keys under their canonical
//! names (an edit may add `replaceAll` and `id`, the request `dryRun`), each once, every value of
//! its own type (no `null`). A request in that shape needs neither pass of module `de`: it has no
//! alias to resolve, no shape to tell apart, and no structural error to place. serde_json reads
//! it straight into the structs below; [`super::parse_json`] then hands each file to the same
//! checks as the two passes do ([`super::Parser::file`]). Any other text, and any request one of
//! those checks refuses, is read again by the two passes, which give the error where it is: so
//! this shape is read as they read it, only faster (10,000 edits: about a quarter of the time),
//! and every other request exactly as before.

use serde::{Deserialize, Deserializer};

/// The request (module docs).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Request {
    pub files: Vec<File>,
    #[serde(rename = "dryRun", default, deserialize_with = "flag")]
    pub dry_run: Option<bool>,
}

/// An item of `files`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct File {
    pub path: String,
    pub edits: Vec<Edit>,
}

/// An item of `edits`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct Edit {
    pub old_text: String,
    pub new_text: String,
    #[serde(default, deserialize_with = "flag")]
    pub replace_all: Option<bool>,
    #[serde(default, deserialize_with = "name")]
    pub id: Option<String>,
}

/// A boolean, present (a `null` is not this shape).
fn flag<'de, D: Deserializer<'de>>(de: D) -> Result<Option<bool>, D::Error> {
    bool::deserialize(de).map(Some)
}

/// A string, present (a `null` is not this shape).
fn name<'de, D: Deserializer<'de>>(de: D) -> Result<Option<String>, D::Error> {
    String::deserialize(de).map(Some)
}
