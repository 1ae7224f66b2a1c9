//! The JSON request (SPEC §2): every accepted shape, converted into [`Request`].
//!
//! Accepted top-level shapes, each converted to the canonical form:
//!
//! - canonical `{"files": [...], "documents"?: [...], "dryRun"?: bool, "version"?: 1}`;
//! - one file object `{path, edits, dryRun?}` (Pi, MCP filesystem `edit_file`, Claude MultiEdit);
//! - a legacy single edit `{path, oldText, newText, replaceAll?, id?}` (also Claude's
//!   `{file_path, old_string, new_string, replace_all}`);
//! - a JSON array of such file objects;
//! - a flat `{"edits": [{path, oldText, newText, ...}, ...], "documents"?, "dryRun"?}`, grouped
//!   by path in order of first appearance.
//!
//! Rules that are not obvious from SPEC:
//!
//! - **Names.** Every camelCase field also accepts its snake_case spelling (`dry_run`, `move_to`,
//!   `expect_hash`, `replace_all`); `oldText`/`newText`/`path` also accept `old_string`,
//!   `old_str`, `old_text`, `oldString` (likewise for new) and `file_path`, `filePath` (Claude
//!   Code, Anthropic's text editor tool, OpenCode). Two names of one field in one object are an
//!   error, never a silent pick. Duplicate JSON keys are an error too.
//! - **null** means absent for optional fields (function-calling APIs with strict schemas send
//!   every field); for a required field it is a type error.
//! - **dryRun** is honoured wherever an object may carry it: the top level of the canonical and
//!   flat shapes, and every file object of the single-object and array shapes. Any `true` makes
//!   the whole request a dry run. Inside the canonical `files[]` it is an unknown field.
//! - **Legacy leniency from Pi**: a file object may carry `edits` *and* a top-level
//!   `oldText`/`newText` pair, which becomes the last edit; `edits` sent as a string holding a JSON
//!   array is decoded (pointers then index into the decoded array). Neither is allowed in the
//!   canonical `files[]`, which accepts exactly the fields of [`WireFile`].
//! - **delete** must be `true` when given; `false` is an error rather than a no-op, so a request
//!   never means less than it says.
//! - **Merging.** Objects whose paths are equal after [`merge_key`] merge into one
//!   [`FileRequest`] (path and pointer as first written). An operation joins a path only if it is
//!   compatible with what the path already has; identical repeats of `content`, `delete`,
//!   `moveTo` and `expectHash` are fine, different ones are an error at the later pointer.
//! - Not checked here: an `oldText` whose N(·) is empty (the engine does it), paths leaving the
//!   root (the writer does it), `documents` with `apply` (the command does it).

mod fields;
mod merge;
#[cfg(test)]
mod tests;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::request::{DocumentOverride, EditSpec, Request, RequestError};

use fields::{
    CONTENT, DELETE, DOCUMENTS, DRY_RUN, EDITS, EXPECT_HASH, FILES, Fields, ID, MOVE_TO, NEW_TEXT,
    Names, OLD_TEXT, PATH, REPLACE_ALL, TEXT, VERSION, child, item, kind, place,
};
use merge::Batch;

pub use merge::merge_key;

/// A batch of edits for redline to resolve and apply all or nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "redline request")]
pub struct WireRequest {
    /// Request format version; 1 is the only one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "version_schema")]
    pub version: Option<u32>,
    /// What to do to each file. Several objects for one path are merged: all their edits match
    /// against the same original content.
    #[schemars(length(min = 1))]
    pub files: Vec<WireFile>,
    /// Unsaved editor buffers that replace the disk content for matching (resolve and filter
    /// only; apply rejects them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub documents: Vec<WireDocument>,
    /// Resolve and report the result without writing anything.
    #[serde(default, alias = "dry_run", skip_serializing_if = "is_false")]
    pub dry_run: bool,
}

/// What to do to one file: `edits` (optionally with `moveTo`), `content`, `delete`, or `moveTo`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WireFile {
    /// Path of the file, relative to the root (or absolute inside it).
    #[serde(alias = "file_path", alias = "filePath")]
    #[schemars(length(min = 1))]
    pub path: String,
    /// Replacements, each matched against the original content (never against another edit's
    /// output); their matches must not overlap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<WireEdit>", length(min = 1))]
    pub edits: Option<Vec<WireEdit>>,
    /// The whole new content: creates the file, or overwrites it. Not combined with `edits`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub content: Option<String>,
    /// `true` deletes the file. Not combined with anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool", extend("const" = true))]
    pub delete: Option<bool>,
    /// Moves the file to this path (after applying `edits`, if any).
    #[serde(default, alias = "move_to", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 1))]
    pub move_to: Option<String>,
    /// The `sha256:<hex>` version the file must still have (as printed by `redline read`);
    /// otherwise the file fails with `stale`.
    #[serde(
        default,
        alias = "expect_hash",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "String", pattern(r"^sha256:[0-9a-fA-F]{64}$"))]
    pub expect_hash: Option<String>,
    /// Resolve and report without writing; `true` on any object makes the whole request a dry
    /// run (as the top-level `dryRun`).
    #[serde(default, alias = "dry_run", skip_serializing_if = "is_false")]
    pub dry_run: bool,
}

/// One replacement: the unique match of `oldText` becomes `newText`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WireEdit {
    /// Text to find, copied from the file. Matched exactly first, then with line endings,
    /// trailing whitespace, Unicode quotes, dashes and spaces normalized. Must occur exactly
    /// once unless `replaceAll`.
    #[serde(
        alias = "old_string",
        alias = "old_str",
        alias = "old_text",
        alias = "oldString"
    )]
    #[schemars(length(min = 1))]
    pub old_text: String,
    /// Replacement text, inserted as given (line endings adapted to the file). May be empty.
    #[serde(
        alias = "new_string",
        alias = "new_str",
        alias = "new_text",
        alias = "newString"
    )]
    pub new_text: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default, alias = "replace_all", skip_serializing_if = "is_false")]
    pub replace_all: bool,
    /// Caller's name for this edit, echoed in the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub id: Option<String>,
}

/// An unsaved editor buffer that stands in for the file on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WireDocument {
    /// Path of the file this buffer holds, as in `files[].path`.
    #[serde(alias = "file_path", alias = "filePath")]
    #[schemars(length(min = 1))]
    pub path: String,
    /// The buffer's full text.
    pub text: String,
}

fn version_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "const": 1})
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The JSON Schema (2020-12) of the canonical request, with every subschema inlined (no `$ref`:
/// several MCP clients cannot follow references). Aliases are accepted but not advertised.
pub fn request_schema() -> Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .with_transform(schemars::transform::RecursiveTransform(
            one_line_descriptions,
        ));
    settings
        .into_generator()
        .into_root_schema_for::<WireRequest>()
        .to_value()
}

/// Doc comments wrap at 100 columns; a schema description reads better unwrapped.
fn one_line_descriptions(schema: &mut schemars::Schema) {
    if let Some(Value::String(text)) = schema.get_mut("description") {
        *text = text.replace('\n', " ");
    }
}

/// Parses a JSON request in any accepted shape into the canonical [`Request`].
///
/// Malformed JSON fails with its line and column; every other error carries the JSON pointer
/// of the offending value (of the parent object for a missing field).
pub fn parse_json(text: &str) -> Result<Request, RequestError> {
    from_value(&fields::parse_value(text)?)
}

/// Like [`parse_json`] for a request that is already a JSON value (JSON-RPC `params`, MCP tool
/// arguments). Duplicate keys cannot be detected here: the value no longer has them.
pub fn from_value(value: &Value) -> Result<Request, RequestError> {
    let mut parser = Parser::default();
    match value {
        Value::Array(objects) => parser.array(objects)?,
        Value::Object(map) => {
            let has = |names: Names| names.iter().any(|name| map.contains_key(*name));
            if has(FILES) {
                parser.canonical(value)?;
            } else if has(PATH) || has(OLD_TEXT) || has(NEW_TEXT) || has(CONTENT) || has(DELETE) {
                parser.loose_file(value, "")?;
            } else if has(EDITS) {
                parser.flat(value)?;
            } else {
                return Err(RequestError::new(
                    "the request has none of `files`, `edits` or `path`",
                )
                .at("")
                .hint("send {\"files\": [{\"path\": ..., \"edits\": [{\"oldText\": ..., \"newText\": ...}]}]}"));
            }
        }
        other => {
            return Err(RequestError::new(format!(
                "the request must be a JSON object or array, found {}",
                kind(other)
            ))
            .at(""));
        }
    }
    Ok(parser.finish())
}

/// Fields of the canonical `files[]` objects (exactly [`WireFile`]'s).
const FILE_FIELDS: &[Names] = &[PATH, EDITS, CONTENT, DELETE, MOVE_TO, EXPECT_HASH, DRY_RUN];
/// Fields of a file object outside `files[]`: also an inline legacy edit and `dryRun`.
const LOOSE_FILE_FIELDS: &[Names] = &[
    PATH,
    EDITS,
    CONTENT,
    DELETE,
    MOVE_TO,
    EXPECT_HASH,
    OLD_TEXT,
    NEW_TEXT,
    REPLACE_ALL,
    ID,
    DRY_RUN,
];
const EDIT_FIELDS: &[Names] = &[OLD_TEXT, NEW_TEXT, REPLACE_ALL, ID];
const FLAT_EDIT_FIELDS: &[Names] = &[PATH, OLD_TEXT, NEW_TEXT, REPLACE_ALL, ID];
const DOCUMENT_FIELDS: &[Names] = &[PATH, TEXT];

#[derive(Default)]
struct Parser {
    batch: Batch,
    documents: Vec<DocumentOverride>,
    document_keys: Vec<(String, String)>,
    dry_run: bool,
}

impl Parser {
    fn finish(self) -> Request {
        Request {
            files: self.batch.into_files(),
            documents: self.documents,
            dry_run: self.dry_run,
        }
    }

    /// `{"files": [...], "documents"?, "dryRun"?, "version"?}`.
    fn canonical(&mut self, value: &Value) -> Result<(), RequestError> {
        let top = Fields::read(
            value,
            "",
            "an object",
            &[FILES, DOCUMENTS, DRY_RUN, VERSION],
        )?;
        self.top_level(&top)?;
        let files = non_empty(&top, FILES)?;
        for (i, file) in files.iter().enumerate() {
            let fields = Fields::read(file, &item("/files", i), "a file object", FILE_FIELDS)?;
            self.dry_run |= fields.opt_bool(DRY_RUN)?.unwrap_or(false);
            self.file(&fields, false)?;
        }
        Ok(())
    }

    /// `[{path, ...}, ...]`.
    fn array(&mut self, objects: &[Value]) -> Result<(), RequestError> {
        if objects.is_empty() {
            return Err(RequestError::new("the request is an empty array").at(""));
        }
        for (i, object) in objects.iter().enumerate() {
            self.loose_file(object, &item("", i))?;
        }
        Ok(())
    }

    /// `{"edits": [{path, oldText, newText, ...}, ...], "documents"?, "dryRun"?, "version"?}`.
    fn flat(&mut self, value: &Value) -> Result<(), RequestError> {
        let top = Fields::read(
            value,
            "",
            "an object",
            &[EDITS, DOCUMENTS, DRY_RUN, VERSION],
        )?;
        self.top_level(&top)?;
        let edits = non_empty(&top, EDITS)?;
        for (i, value) in edits.iter().enumerate() {
            let pointer = item("/edits", i);
            let fields = Fields::read(value, &pointer, "an edit object", FLAT_EDIT_FIELDS)?;
            let path = path(&fields)?;
            let edit = edit(&fields)?;
            self.batch.slot(path, &pointer).add_edit(edit, &pointer)?;
        }
        Ok(())
    }

    /// `documents`, `dryRun` and `version` of the canonical and flat shapes.
    fn top_level(&mut self, top: &Fields) -> Result<(), RequestError> {
        if let Some(version) = top.get(VERSION)
            && version.value.as_u64() != Some(1)
        {
            return Err(RequestError::new(format!(
                "unsupported request version {}",
                version.value
            ))
            .at(version.pointer.clone())
            .hint("1 is the only version; omit `version` or send 1"));
        }
        self.dry_run |= top.opt_bool(DRY_RUN)?.unwrap_or(false);
        let Some(documents) = top.get(DOCUMENTS) else {
            return Ok(());
        };
        for (i, value) in documents.array()?.unwrap_or_default().iter().enumerate() {
            let pointer = item(&documents.pointer, i);
            let fields = Fields::read(value, &pointer, "a document object", DOCUMENT_FIELDS)?;
            let path = path(&fields)?;
            let key = merge_key(path);
            if let Some((_, earlier)) = self.document_keys.iter().find(|(k, _)| *k == key) {
                return Err(RequestError::new(format!(
                    "document {pointer} repeats the path of document {earlier}"
                ))
                .at(child(&pointer, "path")));
            }
            self.document_keys.push((key, pointer.clone()));
            let text = fields.string(TEXT)?;
            self.documents.push(DocumentOverride {
                path: path.to_owned(),
                text: text.to_owned(),
            });
        }
        Ok(())
    }

    /// A file object outside `files[]` (single-object and array shapes).
    fn loose_file(&mut self, value: &Value, pointer: &str) -> Result<(), RequestError> {
        let fields = Fields::read(value, pointer, "a file object", LOOSE_FILE_FIELDS)?;
        self.dry_run |= fields.opt_bool(DRY_RUN)?.unwrap_or(false);
        self.file(&fields, true)
    }

    /// One file object: its operations join the slot of its path. `loose` objects (outside the
    /// canonical `files[]`) may send `edits` as a string holding a JSON array.
    fn file(&mut self, fields: &Fields, loose: bool) -> Result<(), RequestError> {
        let path = path(fields)?;
        let slot = self.batch.slot(path, &fields.pointer);
        let mut operations = 0;
        if let Some(found) = fields.get(EDITS) {
            let decoded;
            let items = match found.value {
                // Pi #3370: some models send the edits array as a JSON string.
                Value::String(text) if loose => match serde_json::from_str::<Value>(text) {
                    Ok(Value::Array(items)) => {
                        decoded = items;
                        &decoded[..]
                    }
                    _ => return Err(not_array(found)),
                },
                _ => found.array()?.unwrap_or_default(),
            };
            if items.is_empty() {
                return Err(empty(&found.pointer, &fields.pointer));
            }
            for (i, value) in items.iter().enumerate() {
                let pointer = item(&found.pointer, i);
                let edit_fields = Fields::read(value, &pointer, "an edit object", EDIT_FIELDS)?;
                slot.add_edit(edit(&edit_fields)?, &pointer)?;
            }
            operations += 1;
        }
        if fields.has(OLD_TEXT) || fields.has(NEW_TEXT) {
            // The edit is the object itself; conflicts name its `oldText` for clarity.
            let source = fields
                .get(OLD_TEXT)
                .map_or(fields.pointer.as_str(), |f| &f.pointer);
            slot.add_edit(edit(fields)?, source)?;
            operations += 1;
        }
        if let Some(content) = fields.get(CONTENT) {
            slot.set_content(content.string()?.unwrap_or_default(), &content.pointer)?;
            operations += 1;
        }
        if let Some(delete) = fields.get(DELETE) {
            if delete.boolean()? != Some(true) {
                return Err(RequestError::new(format!(
                    "`{}` must be true when present in {}",
                    delete.key,
                    place(&fields.pointer)
                ))
                .at(delete.pointer.clone())
                .hint("omit `delete` unless the file is to be deleted"));
            }
            slot.set_delete(&delete.pointer)?;
            operations += 1;
        }
        if let Some(target) = fields.get(MOVE_TO) {
            let target_text = target.string()?.unwrap_or_default();
            if target_text.is_empty() {
                return Err(RequestError::new(format!("`{}` is empty", target.key))
                    .at(target.pointer.clone()));
            }
            slot.set_move_to(target_text, &target.pointer)?;
            operations += 1;
        }
        if let Some(hash) = fields.get(EXPECT_HASH) {
            slot.set_expect_hash(expect_hash(hash)?, &hash.pointer)?;
        }
        if operations == 0 {
            let which = match fields.pointer.as_str() {
                "" => "the request".to_owned(),
                pointer => format!("file object {pointer}"),
            };
            return Err(
                RequestError::new(format!("{which} names a path but no operation"))
                    .at(fields.pointer.clone())
                    .hint("give `edits`, `content`, `delete: true` or `moveTo`"),
            );
        }
        Ok(())
    }
}

/// The required, non-empty array field `names` of `fields`.
fn non_empty<'a>(fields: &Fields<'a>, names: Names) -> Result<&'a [Value], RequestError> {
    let items = match fields.get(names) {
        Some(found) => found.array()?.unwrap_or_default(),
        None => {
            return Err(RequestError::new(format!(
                "missing field `{}` in {}",
                names[0],
                place(&fields.pointer)
            ))
            .at(fields.pointer.clone()));
        }
    };
    if items.is_empty() {
        return Err(empty(&child(&fields.pointer, names[0]), &fields.pointer));
    }
    Ok(items)
}

fn empty(pointer: &str, parent: &str) -> RequestError {
    let name = pointer.rsplit('/').next().unwrap_or_default();
    RequestError::new(format!("`{name}` is empty in {}", place(parent))).at(pointer)
}

fn not_array(found: &fields::Found) -> RequestError {
    RequestError::new(format!(
        "`{}` must be an array, found a string that is not a JSON array",
        found.key
    ))
    .at(found.pointer.clone())
}

/// The required `path` of an object: a non-empty string without NUL.
fn path<'a>(fields: &Fields<'a>) -> Result<&'a str, RequestError> {
    let path = fields.string(PATH)?;
    let at = || {
        fields
            .get(PATH)
            .map(|f| f.pointer.clone())
            .unwrap_or_default()
    };
    if path.is_empty() {
        return Err(
            RequestError::new(format!("`path` is empty in {}", place(&fields.pointer))).at(at()),
        );
    }
    if path.contains('\0') {
        return Err(RequestError::new(format!(
            "`path` contains a NUL character in {}",
            place(&fields.pointer)
        ))
        .at(at()));
    }
    Ok(path)
}

/// An edit from `oldText`, `newText`, `replaceAll` and `id` of `fields`.
fn edit(fields: &Fields) -> Result<EditSpec, RequestError> {
    let old_text = fields.string(OLD_TEXT)?;
    if old_text.is_empty() {
        let at = fields
            .get(OLD_TEXT)
            .map(|f| f.pointer.clone())
            .unwrap_or_default();
        return Err(RequestError::new(format!("`oldText` is empty in {}", place(&fields.pointer)))
            .at(at)
            .hint("quote the text to replace, copied from the file; to create a file use `content`"));
    }
    Ok(EditSpec {
        old_text: old_text.to_owned(),
        new_text: fields.string(NEW_TEXT)?.to_owned(),
        replace_all: fields.opt_bool(REPLACE_ALL)?.unwrap_or(false),
        id: fields.opt_string(ID)?.map(str::to_owned),
        pointer: Some(fields.pointer.clone()),
    })
}

/// `sha256:` and 64 hex digits, returned in the lowercase form `redline read` prints.
fn expect_hash(found: &fields::Found) -> Result<String, RequestError> {
    let text = found.string()?.unwrap_or_default();
    let valid = text
        .strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()));
    if !valid {
        return Err(
            RequestError::new(format!("`{}` is not a sha256 version", found.key))
                .at(found.pointer.clone())
                .hint("use the `sha256:<64 hex digits>` string printed by `redline read`"),
        );
    }
    Ok(text.to_ascii_lowercase())
}
