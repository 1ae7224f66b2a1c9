//! The JSON request (SPEC §2): every accepted shape, converted into [`Request`].
//!
//! Each shape is a typed struct below; the same structs generate the published schema
//! ([`request_schema`], and the MCP tools' input schema [`tool_input_schema`]) and parse requests
//! ([`de`] walks the schema alongside the JSON, so the schema is what the parser obeys). JSON text
//! is read straight into them, never into a tree of JSON values (which costs about 14× the text
//! for many small edits), and the items of the top-level list are checked one by one as they are
//! read. The shapes, told apart by their keys:
//!
//! - `files` → canonical [`WireRequest`] `{files, documents?, dryRun?, version?}`;
//! - `command` → Anthropic's text-editor tool, [`TextEditorCommand`];
//! - any field that only a file object has (`path`, `oldText`, `content`, …) → one
//!   [`FileObject`] (Pi, MCP filesystem `edit_file`, Claude Code Edit/MultiEdit, the legacy
//!   single edit `{path, oldText, newText}`);
//! - `edits` → the flat [`FlatRequest`] `{edits: [{path, oldText, newText}, …]}`, grouped by path
//!   in order of first appearance;
//! - a JSON array → [`FileObject`]s.
//!
//! Rules that are not obvious from SPEC:
//!
//! - **Names.** A field's other accepted names are listed on it (`x-aliases` in its schema):
//!   every camelCase field also takes its snake_case spelling, and `oldText`/`newText`/`path`
//!   also take `old_string`, `old_str`, `old_text`, `oldString` (likewise for new) and
//!   `file_path`, `filePath` (Claude Code, Anthropic's text editor tool, OpenCode). The published
//!   schema lists every alias as a property. Two names of one field in one object are an error,
//!   never a silent pick; so are duplicate JSON keys. Errors name a field as it was sent.
//! - **null** means absent for optional fields (function-calling APIs with strict schemas send
//!   every field); for a required field it is a type error.
//! - **dryRun** is honoured on every object that may carry it: the top level of the canonical and
//!   flat shapes, every `files[]` entry and every file object. Any `true` makes the whole
//!   request a dry run.
//! - **Legacy leniency from Pi**: a file object may carry `edits` *and* a top-level
//!   `oldText`/`newText` pair, which becomes the last edit; `edits` sent as a string holding a JSON
//!   array is decoded (pointers then index into the decoded array; a key repeated in an object
//!   of it is two names of one field, as anywhere else). Neither is allowed in the
//!   canonical `files[]`, which accepts exactly the fields of [`WireFile`].
//! - **delete** must be `true` when given; `false` is an error rather than a no-op, so a request
//!   never means less than it says.
//! - **Merging.** Objects whose paths are equal after [`merge_key`] merge into one
//!   [`crate::request::FileRequest`] (path and pointer as first written). An operation joins a
//!   path only if it is compatible with what the path already has; identical repeats of
//!   `content`, `delete`, `moveTo` and `expectHash` are fine, different ones are an error at the
//!   later pointer.
//! - **Order.** Of several errors, the first in request order is reported: objects are read in
//!   order, and the checks made after reading an object (empty values, conflicts) run before the
//!   next object of a top-level list is read. Within one object, a value of the wrong type is
//!   found before such a check.
//! - Not checked here: an `oldText` whose N(·) is empty (the engine does it), paths leaving the
//!   root (the writer does it), `documents` with `apply` (the command does it).

mod de;
mod fast;
mod merge;
mod schema;
#[cfg(test)]
mod tests;

use schemars::JsonSchema;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::request::{DocumentOverride, EditSpec, Hint, Request, RequestError};

use de::{Ctx, Outline, Sent, Top, item};
use merge::Batch;

pub(crate) use merge::merge_key;
pub(crate) use schema::{request_schema, tool_input_schema};

/// The other names of `path` (Claude Code, Anthropic's text-editor tool, OpenCode).
const PATH_ALIASES: [&str; 2] = ["file_path", "filePath"];
/// The other names of `oldText`, on an edit object and inline on a file object.
const OLD_TEXT_ALIASES: [&str; 4] = ["old_string", "old_str", "old_text", "oldString"];
/// The other names of `newText`, likewise.
const NEW_TEXT_ALIASES: [&str; 4] = ["new_string", "new_str", "new_text", "newString"];

/// Declares a top-level request object: its own fields, then `documents`, `dryRun` and
/// `version` with the same names, aliases and constraints (for the same reason as
/// [`file_object`]).
macro_rules! request_object {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($own:tt)*
        }
    ) => {
        $(#[$meta])*
        pub(crate) struct $name {
            $($own)*
            /// Unsaved editor buffers that replace the disk content for matching (resolve and
            /// filter only; apply rejects them).
            #[serde(default)]
            #[schemars(with = "Vec<WireDocument>")]
            pub documents: Option<Vec<WireDocument>>,
            /// Resolve and report the result without writing anything.
            #[serde(default)]
            #[schemars(with = "bool", extend("x-aliases" = ["dry_run"]))]
            pub dry_run: Option<bool>,
            /// Request format version; 1 is the only one.
            #[serde(default)]
            #[schemars(schema_with = "version_schema")]
            pub version: Option<Value>,
        }
    };
}

/// Declares a file object: the fields every file object has, with the same names, aliases and
/// constraints, in the schema's order (`path`, `edits`, then the object's own fields, then
/// `content`, `delete`, `moveTo`, `expectHash`, `dryRun`). Each object words the docs of the
/// fields that read differently in its context (they are the schema's descriptions). serde's
/// `flatten` would share the fields without a macro, but it does not combine with
/// `deny_unknown_fields`, nor with the path-tracking deserializer ([`de`]).
macro_rules! file_object {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($own:tt)*
        }
        docs {
            $(#[$content:meta])* content,
            $(#[$move_to:meta])* move_to,
            $(#[$expect_hash:meta])* expect_hash,
            $(#[$dry_run:meta])* dry_run $(,)?
        }
    ) => {
        $(#[$meta])*
        pub(crate) struct $name {
            /// Path of the file, relative to the root (or absolute inside it).
            #[schemars(length(min = 1), extend("x-aliases" = PATH_ALIASES))]
            pub path: String,
            /// Replacements, each matched against the original content (never against another
            /// edit's output); their matches must not overlap.
            #[serde(default)]
            #[schemars(with = "Vec<WireEdit>", length(min = 1))]
            pub edits: Option<Vec<WireEdit>>,
            $($own)*
            $(#[$content])*
            #[serde(default)]
            #[schemars(with = "String")]
            pub content: Option<String>,
            /// `true` deletes the file. Not combined with anything else.
            #[serde(default)]
            #[schemars(with = "bool", extend("const" = true))]
            pub delete: Option<bool>,
            $(#[$move_to])*
            #[serde(default)]
            #[schemars(with = "String", length(min = 1), extend("x-aliases" = ["move_to"]))]
            pub move_to: Option<String>,
            $(#[$expect_hash])*
            #[serde(default)]
            #[schemars(
                with = "String",
                regex(pattern = r"^[sS][hH][aA]256:[0-9a-fA-F]{64}$"),
                extend("x-aliases" = ["expect_hash"])
            )]
            pub expect_hash: Option<String>,
            $(#[$dry_run])*
            #[serde(default)]
            #[schemars(with = "bool", extend("x-aliases" = ["dry_run"]))]
            pub dry_run: Option<bool>,
        }
    };
}

/// Declares an edit object: `oldText`, `newText`, `replaceAll` and `id` with the same names,
/// aliases and constraints, after the object's own fields (for the same reason as
/// [`file_object`]). Each object words the doc of `oldText`.
macro_rules! edit_object {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($own:tt)*
        }
        docs {
            $(#[$old_text:meta])* old_text $(,)?
        }
    ) => {
        $(#[$meta])*
        pub(crate) struct $name {
            $($own)*
            $(#[$old_text])*
            #[schemars(
                length(min = 1),
                extend("x-aliases" = OLD_TEXT_ALIASES)
            )]
            pub old_text: String,
            /// Replacement text, inserted as given (line endings adapted to the file). May be
            /// empty.
            #[schemars(extend("x-aliases" = NEW_TEXT_ALIASES))]
            pub new_text: String,
            /// Replace every occurrence instead of requiring exactly one.
            #[serde(default)]
            #[schemars(with = "bool", extend("x-aliases" = ["replace_all"]))]
            pub replace_all: Option<bool>,
            /// Caller's name for this edit, echoed in the response.
            #[serde(default)]
            #[schemars(with = "String")]
            pub id: Option<String>,
        }
    };
}

request_object! {
    /// A batch of edits for redline to resolve and apply all or nothing.
    #[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
    #[serde(rename = "object", rename_all = "camelCase", deny_unknown_fields)]
    pub struct WireRequest {
        /// What to do to each file. Several objects for one path are merged: all their edits
        /// match against the same original content.
        #[schemars(length(min = 1))]
        pub files: Vec<WireFile>,
    }
}

file_object! {
    /// What to do to one file: `edits` (optionally with `moveTo`), `content`, `delete`, or
    /// `moveTo`.
    #[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
    #[serde(rename = "file object", rename_all = "camelCase", deny_unknown_fields)]
    pub struct WireFile {}
    docs {
        /// The whole new content: creates the file, or overwrites it. Not combined with `edits`.
        content,
        /// Moves the file to this path (after applying `edits`, if any).
        move_to,
        /// The `sha256:<hex>` version the file must still have (as printed by `redline read`);
        /// otherwise the file fails with `stale`.
        expect_hash,
        /// Resolve and report without writing; `true` on any object makes the whole request a dry
        /// run (as the top-level `dryRun`).
        dry_run,
    }
}

edit_object! {
    /// One replacement: the unique match of `oldText` becomes `newText`.
    #[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
    #[serde(rename = "edit object", rename_all = "camelCase", deny_unknown_fields)]
    pub struct WireEdit {}
    docs {
        /// Text to find, copied from the file. Matched exactly first, then with line endings,
        /// trailing whitespace, Unicode quotes, dashes and spaces normalized. Must occur exactly
        /// once unless `replaceAll`.
        old_text,
    }
}

/// An unsaved editor buffer that stands in for the file on disk.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(
    rename = "document object",
    rename_all = "camelCase",
    deny_unknown_fields
)]
pub(crate) struct WireDocument {
    /// Path of the file this buffer holds, as in `files[].path`.
    #[schemars(length(min = 1), extend("x-aliases" = PATH_ALIASES))]
    pub path: String,
    /// The buffer's full text.
    pub text: String,
}

file_object! {
    /// One file object on its own (or as an item of a top-level array): the fields of a `files[]`
    /// entry, plus one edit given inline (`{path, oldText, newText}`, Claude Code's
    /// `{file_path, old_string, new_string, replace_all}`).
    #[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
    #[serde(rename = "file object", rename_all = "camelCase", deny_unknown_fields)]
    pub struct FileObject {
        /// One edit given inline: the text to find (as `oldText` in `edits`).
        #[serde(default)]
        #[schemars(
            with = "String",
            length(min = 1),
            extend("x-aliases" = OLD_TEXT_ALIASES)
        )]
        pub old_text: Option<String>,
        /// One edit given inline: its replacement text (as `newText` in `edits`).
        #[serde(default)]
        #[schemars(
            with = "String",
            extend("x-aliases" = NEW_TEXT_ALIASES)
        )]
        pub new_text: Option<String>,
        /// For the inline edit: replace every occurrence instead of requiring exactly one.
        #[serde(default)]
        #[schemars(with = "bool", extend("x-aliases" = ["replace_all"]))]
        pub replace_all: Option<bool>,
        /// For the inline edit: the caller's name for it, echoed in the response.
        #[serde(default)]
        #[schemars(with = "String")]
        pub id: Option<String>,
    }
    docs {
        /// The whole new content: creates the file, or overwrites it. Not combined with edits.
        content,
        /// Moves the file to this path (after applying the edits, if any).
        move_to,
        /// The `sha256:<hex>` version the file must still have (as printed by `redline read`).
        expect_hash,
        /// Resolve and report without writing anything.
        dry_run,
    }
}

request_object! {
    /// Edits that each name their file: `{"edits": [{path, oldText, newText}, …]}`.
    #[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
    #[serde(rename = "object", rename_all = "camelCase", deny_unknown_fields)]
    pub struct FlatRequest {
        /// Replacements, grouped by path in order of first appearance; all edits of one path
        /// match against its original content.
        #[schemars(length(min = 1))]
        pub edits: Vec<FlatEdit>,
    }
}

edit_object! {
    /// One replacement in the file named by `path`.
    #[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
    #[serde(rename = "edit object", rename_all = "camelCase", deny_unknown_fields)]
    pub struct FlatEdit {
        /// Path of the file, relative to the root (or absolute inside it).
        #[schemars(length(min = 1), extend("x-aliases" = PATH_ALIASES))]
        pub path: String,
    }
    docs {
        /// Text to find, copied from the file (as `oldText` in `files[].edits`).
        old_text,
    }
}

/// Anthropic's text-editor tool (`str_replace_based_edit_tool`), as custom agent loops send it.
/// `str_replace` is an edit, `create` is `content`, `insert` puts `new_str` as whole lines after
/// line `insert_line` (0 = the start of the file); `view` reads, so only a face that reads
/// answers it (MCP `read_file`, `serve`'s `read`), and the edit commands refuse it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename = "object", deny_unknown_fields)]
pub(crate) struct TextEditorCommand {
    /// `str_replace` (old_str → new_str), `create` (file_text), `insert` (new_str after line
    /// insert_line) or `view`.
    pub command: TextEditorVerb,
    /// Path of the file, relative to the root (or absolute inside it).
    #[schemars(length(min = 1))]
    pub path: String,
    /// `str_replace`: the text to find, as `oldText`.
    #[serde(default)]
    #[schemars(with = "String")]
    pub old_str: Option<String>,
    /// `str_replace`: its replacement; `insert`: the lines to insert.
    #[serde(default)]
    #[schemars(with = "String")]
    pub new_str: Option<String>,
    /// `insert`: the number of the line after which `new_str` goes (0 = the start of the file).
    #[serde(default)]
    #[schemars(with = "u32")]
    pub insert_line: Option<u64>,
    /// `create`: the content of the file.
    #[serde(default)]
    #[schemars(with = "String")]
    pub file_text: Option<String>,
    /// `view`: `[first, last]` 1-based lines to read; `last` -1 reads to the end.
    #[serde(default)]
    #[schemars(with = "[i64; 2]")]
    pub view_range: Option<Vec<i64>>,
}

/// The commands of Anthropic's text-editor tool that redline takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
// The variants are the wire names (serde) that SPEC defines; a doc comment per variant would
// make schemars publish `oneOf` consts instead of the schema's plain `enum` list.
#[allow(missing_docs)]
pub(crate) enum TextEditorVerb {
    StrReplace,
    Insert,
    Create,
    View,
}

/// A text-editor `view`: the lines of a file to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct View {
    /// The path as the caller wrote it.
    pub path: String,
    /// 1-based first line.
    pub offset: Option<usize>,
    /// How many lines (all when `None`).
    pub limit: Option<usize>,
}

/// The read a text-editor `view` command asks for, when `value` is one (`None` for any other
/// request). Faces that can read answer it; the others get the error [`parse_json`] gives.
pub(crate) fn text_editor_view(value: &Value) -> Option<Result<View, RequestError>> {
    let map = value.as_object()?;
    if map.get("command").and_then(Value::as_str) != Some("view") {
        return None;
    }
    let ctx = Ctx::default();
    let shapes = schema::shapes();
    let command: TextEditorCommand = match de::typed(&ctx, value, "", &shapes.text_editor) {
        Ok(command) => command,
        Err(e) => return Some(Err(e)),
    };
    Some(view(command, &ctx.last()))
}

fn view(c: TextEditorCommand, at: &Sent) -> Result<View, RequestError> {
    let path = checked_path(&c.path, at)?.to_owned();
    for (field, given) in [
        ("old_str", c.old_str.is_some()),
        ("new_str", c.new_str.is_some()),
        ("insert_line", c.insert_line.is_some()),
        ("file_text", c.file_text.is_some()),
    ] {
        if given {
            return Err(not_for(at, field, "view"));
        }
    }
    let Some(range) = c.view_range else {
        return Ok(View {
            path,
            offset: None,
            limit: None,
        });
    };
    let bad = || {
        RequestError::new(format!(
            "`view_range` must be [first, last] with 1 <= first <= last, or last = -1, in {}",
            at.place()
        ))
        .at(at.at("view_range"))
    };
    let [first, last] = range[..] else {
        return Err(bad());
    };
    let first = usize::try_from(first)
        .ok()
        .filter(|&f| f >= 1)
        .ok_or_else(bad)?;
    let limit = match last {
        -1 => None,
        last => Some(
            usize::try_from(last)
                .ok()
                .filter(|&l| l >= first)
                .ok_or_else(bad)?
                - first
                + 1,
        ),
    };
    Ok(View {
        path,
        offset: Some(first),
        limit,
    })
}

/// Parses a JSON request in any accepted shape into the canonical [`Request`].
///
/// Malformed JSON fails with its line and column; every other error carries the JSON pointer
/// of the offending value (of the parent object for a missing field). The text is read straight
/// into the typed structs (the `de` module), never into a tree of JSON values; the shape most
/// agents send in one pass (module `fast`).
pub fn parse_json(text: &str) -> Result<Request, RequestError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Some(req) = parse_fast(text) {
        return Ok(req);
    }
    parse_passes(text)
}

/// [`parse_json`] by the two passes of module `de`, whatever the request's shape.
fn parse_passes(text: &str) -> Result<Request, RequestError> {
    let outline = de::outline(text)?;
    parse(&outline, &mut serde_json::Deserializer::from_str(text))
}

/// The request `text` is when it has the shape module `fast` reads and every check of its files
/// passes (as [`Parser::request`] makes them, in the same order); `None` otherwise, for the two
/// passes to read it again and say what is wrong where.
fn parse_fast(text: &str) -> Option<Request> {
    let req: fast::Request = serde_json::from_str(text).ok()?;
    if req.files.is_empty() {
        return None;
    }
    let ctx = Ctx::default();
    let mut parser = Parser::default();
    // The objects as the typed pass notes them (no key sent under another name), without their
    // schemas: those only place the errors that send a request back to the passes, and a
    // schema is built on first use (a third of a one-line apply's parsing).
    static NO_SCHEMA: Value = Value::Null;
    let top = ctx.sent(String::new(), &NO_SCHEMA);
    let items = top.items(List::Files.field());
    for (i, f) in req.files.into_iter().enumerate() {
        let edits = f.edits.into_iter().map(|e| WireEdit {
            old_text: e.old_text,
            new_text: e.new_text,
            replace_all: e.replace_all,
            id: e.id,
        });
        let fields = FileFields {
            path: f.path,
            edits: Some(edits.collect()),
            inline: None,
            content: None,
            delete: None,
            move_to: None,
            expect_hash: None,
            dry_run: None,
        };
        parser.file(&ctx, fields, &items.item(&ctx, i)).ok()?;
    }
    parser.top_level(&ctx, None, None, req.dry_run, &top).ok()?;
    Some(parser.finish())
}

/// Like [`parse_json`] for a request that is already a JSON value (JSON-RPC `params`, MCP tool
/// arguments). Duplicate keys cannot be detected here: the value no longer has them.
pub(crate) fn from_value(value: &Value) -> Result<Request, RequestError> {
    parse(&Outline::of(value), value)
}

/// Reads the request whose first pass gave `outline` from `de`, in the shape its keys say.
fn parse<'de, D: Deserializer<'de>>(outline: &Outline, de: D) -> Result<Request, RequestError> {
    let ctx = Ctx::default();
    let mut parser = Parser::default();
    match outline {
        Outline::Array(items) => parser.array(&ctx, de, items)?,
        Outline::Object(top) => match Shape::of(&top.keys) {
            Some(Shape::Canonical) => parser.request(&ctx, de, List::Files)?,
            Some(Shape::File) => {
                stringified_edits(top, "")?;
                parser.file_object(&ctx, de, "")?;
            }
            Some(Shape::Flat) => parser.request(&ctx, de, List::Edits)?,
            Some(Shape::TextEditor) => parser.text_editor(&ctx, de, "")?,
            None => {
                return Err(RequestError::new(
                    "the request has none of `files`, `edits` or `path`",
                )
                .at("")
                .hint("send {\"files\": [{\"path\": ..., \"edits\": [{\"oldText\": ..., \"newText\": ...}]}]}"));
            }
        },
        Outline::Other(kind) => {
            return Err(RequestError::new(format!(
                "the request must be a JSON object or array, found {kind}"
            ))
            .at(""));
        }
    }
    Ok(parser.finish())
}

/// Which shape a top-level object is, by its keys.
enum Shape {
    Canonical,
    File,
    Flat,
    TextEditor,
}

impl Shape {
    fn of(keys: &[String]) -> Option<Shape> {
        let shapes = schema::shapes();
        let has = |key: &str| keys.iter().any(|k| k == key);
        if has("files") {
            return Some(Shape::Canonical);
        }
        if has("command") {
            return Some(Shape::TextEditor);
        }
        // A field that a file object has and the flat shape lacks (`path`, `oldText`, …).
        let file_only = keys.iter().any(|key| {
            schema::field_of(&shapes.file, key).is_some()
                && schema::field_of(&shapes.flat, key).is_none()
        });
        if file_only {
            Some(Shape::File)
        } else if has("edits") {
            Some(Shape::Flat)
        } else {
            None
        }
    }
}

/// The top-level list of a request object: `files` (canonical) or `edits` (flat).
#[derive(Clone, Copy)]
enum List {
    Files,
    Edits,
}

impl List {
    fn field(self) -> &'static str {
        match self {
            List::Files => "files",
            List::Edits => "edits",
        }
    }

    fn schema(self) -> &'static Value {
        let shapes = schema::shapes();
        match self {
            List::Files => &shapes.canonical,
            List::Edits => &shapes.flat,
        }
    }
}

/// One file object's fields, from whichever shape it came.
struct FileFields {
    path: String,
    edits: Option<Vec<WireEdit>>,
    /// An edit given inline (`oldText`/`newText` on the file object itself).
    inline: Option<InlineEdit>,
    content: Option<String>,
    delete: Option<bool>,
    move_to: Option<String>,
    expect_hash: Option<String>,
    dry_run: Option<bool>,
}

struct InlineEdit {
    old_text: Option<String>,
    new_text: Option<String>,
    replace_all: Option<bool>,
    id: Option<String>,
}

impl From<WireFile> for FileFields {
    fn from(f: WireFile) -> FileFields {
        FileFields {
            path: f.path,
            edits: f.edits,
            inline: None,
            content: f.content,
            delete: f.delete,
            move_to: f.move_to,
            expect_hash: f.expect_hash,
            dry_run: f.dry_run,
        }
    }
}

impl From<FileObject> for FileFields {
    fn from(f: FileObject) -> FileFields {
        let inline = (f.old_text.is_some() || f.new_text.is_some()).then_some(InlineEdit {
            old_text: f.old_text,
            new_text: f.new_text,
            replace_all: f.replace_all,
            id: f.id,
        });
        FileFields {
            path: f.path,
            edits: f.edits,
            inline,
            content: f.content,
            delete: f.delete,
            move_to: f.move_to,
            expect_hash: f.expect_hash,
            dry_run: f.dry_run,
        }
    }
}

/// `documents`, `dryRun` and `version` of the canonical and flat shapes, as read.
#[derive(Default)]
struct TopLevel {
    documents: Option<Vec<WireDocument>>,
    dry_run: Option<bool>,
    version: Option<Value>,
    /// Items in the top-level list.
    items: usize,
}

#[derive(Default)]
struct Parser {
    batch: Batch,
    documents: Vec<DocumentOverride>,
    document_keys: Vec<(String, String)>,
    dry_run: bool,
    /// The first error of a check made after reading an item of the top-level list (an empty
    /// value, a conflict between merged objects): it is reported unless an error in the
    /// request's structure outside the list comes first (module docs, "Order").
    deferred: Option<RequestError>,
}

impl Parser {
    fn finish(self) -> Request {
        Request {
            files: self.batch.into_files(),
            documents: self.documents,
            dry_run: self.dry_run,
        }
    }

    /// `{"files": [...], ...}` or `{"edits": [...], ...}`, with `documents`, `dryRun` and
    /// `version`. Each item of the list is checked as soon as it is read; its errors wait until
    /// the whole request has been read (a type error anywhere but in a later item comes first).
    fn request<'de, D: Deserializer<'de>>(
        &mut self,
        ctx: &Ctx,
        de: D,
        list: List,
    ) -> Result<(), RequestError> {
        let visitor = RequestVisitor {
            parser: self,
            ctx,
            list,
        };
        let read = de::typed_with(ctx, de, "", list.schema(), visitor);
        let top = ctx.last();
        let deferred = self.deferred.take();
        let top_level = match read {
            Ok(top_level) => top_level,
            Err(structural) => {
                let in_list = structural
                    .pointer
                    .as_deref()
                    .and_then(|p| p.strip_prefix(top.at(list.field()).as_str()))
                    .is_some_and(|rest| rest.starts_with('/'));
                return Err(match deferred {
                    Some(first) if in_list => first,
                    _ => structural,
                });
            }
        };
        self.top_level(
            ctx,
            top_level.version,
            top_level.documents,
            top_level.dry_run,
            &top,
        )?;
        if top_level.items == 0 {
            return Err(empty(&top, list.field()));
        }
        deferred.map_or(Ok(()), Err)
    }

    /// One item of the top-level list, just read; `at` is where.
    fn list_item(&mut self, ctx: &Ctx, item: ListItem, at: &Sent) {
        if self.deferred.is_some() {
            return;
        }
        let checked = match item {
            ListItem::File(file) => self.file(ctx, file.into(), at),
            ListItem::Edit(edit) => self.flat_edit(edit, at),
        };
        self.deferred = checked.err();
    }

    /// `[{path, ...}, ...]`: file objects and text-editor commands, each checked as soon as it is
    /// read.
    fn array<'de, D: Deserializer<'de>>(
        &mut self,
        ctx: &Ctx,
        de: D,
        items: &[Top],
    ) -> Result<(), RequestError> {
        if items.is_empty() {
            return Err(RequestError::new("the request is an empty array").at(""));
        }
        let visitor = ArrayVisitor {
            parser: self,
            ctx,
            items,
        };
        de.deserialize_seq(visitor)
            .map_err(|e| de::placed(ctx, e, ""))
    }

    /// One file object outside `files[]` (single-object and array shapes).
    fn file_object<'de, D: Deserializer<'de>>(
        &mut self,
        ctx: &Ctx,
        de: D,
        pointer: &str,
    ) -> Result<(), RequestError> {
        let file: FileObject = de::typed(ctx, de, pointer, &schema::shapes().file)?;
        self.file(ctx, file.into(), &ctx.last())
    }

    /// Anthropic's text-editor tool: `{command, path, old_str, new_str, insert_line, file_text}`.
    fn text_editor<'de, D: Deserializer<'de>>(
        &mut self,
        ctx: &Ctx,
        de: D,
        pointer: &str,
    ) -> Result<(), RequestError> {
        let c: TextEditorCommand = de::typed(ctx, de, pointer, &schema::shapes().text_editor)?;
        self.text_editor_command(c, &ctx.last())
    }

    fn text_editor_command(&mut self, c: TextEditorCommand, at: &Sent) -> Result<(), RequestError> {
        let path = checked_path(&c.path, at)?;
        // The command as sent (a JSON string), as serde names the verb.
        let sent = serde_json::to_string(&c.command).unwrap_or_default();
        let verb = sent.trim_matches('"');
        let required = |field: &str| {
            RequestError::new(format!(
                "missing field `{field}` in {} (command {sent})",
                at.place(),
            ))
            .at(at.pointer.clone())
        };
        let refuse = |fields: &[(&'static str, bool)], command: &str| match fields
            .iter()
            .find(|(_, given)| *given)
        {
            Some((field, _)) => Err(not_for(at, field, command)),
            None => Ok(()),
        };
        if c.command != TextEditorVerb::View && c.view_range.is_some() {
            return Err(not_for(at, "view_range", verb));
        }
        let slot = self.batch.slot(path, &at.pointer);
        match c.command {
            TextEditorVerb::StrReplace => {
                refuse(
                    &[
                        ("insert_line", c.insert_line.is_some()),
                        ("file_text", c.file_text.is_some()),
                    ],
                    "str_replace",
                )?;
                let old_text = c.old_str.ok_or_else(|| required("old_str"))?;
                let new_text = c.new_str.ok_or_else(|| required("new_str"))?;
                if old_text.is_empty() {
                    return Err(empty(at, "old_str").hint(
                        "quote the text to replace, copied from the file; to create a file use `create`",
                    ));
                }
                let pointer = blank_pointer(&old_text, at, "old_str");
                let edit = EditSpec::new(old_text, new_text).with_old_text_pointer(pointer);
                slot.add_edit(edit, &at.at("old_str"))
            }
            TextEditorVerb::Insert => {
                refuse(
                    &[
                        ("old_str", c.old_str.is_some()),
                        ("file_text", c.file_text.is_some()),
                    ],
                    "insert",
                )?;
                let line = c.insert_line.ok_or_else(|| required("insert_line"))?;
                let new_text = c.new_str.ok_or_else(|| required("new_str"))?;
                let edit =
                    EditSpec::insertion(usize::try_from(line).unwrap_or(usize::MAX), new_text);
                slot.add_edit(edit, &at.at("insert_line"))
            }
            TextEditorVerb::Create => {
                refuse(
                    &[
                        ("old_str", c.old_str.is_some()),
                        ("new_str", c.new_str.is_some()),
                        ("insert_line", c.insert_line.is_some()),
                    ],
                    "create",
                )?;
                let content = c.file_text.ok_or_else(|| required("file_text"))?;
                slot.set_content(&content, &at.at("file_text"))
            }
            TextEditorVerb::View => {
                let view = view(c, at)?;
                let range = match (view.offset, view.limit) {
                    (Some(offset), Some(limit)) => format!(" --offset {offset} --limit {limit}"),
                    (Some(offset), None) => format!(" --offset {offset}"),
                    _ => String::new(),
                };
                Err(
                    RequestError::new("`command: view` reads a file; this command only edits")
                        .at(at.at("command"))
                        .hint_naming(Hint::ReadInstead {
                            args: format!("{}{range}", view.path),
                        }),
                )
            }
        }
    }

    fn flat_edit(&mut self, e: FlatEdit, at: &Sent) -> Result<(), RequestError> {
        let path = checked_path(&e.path, at)?;
        let edit = edit(e.old_text, e.new_text, e.replace_all, e.id, at)?;
        self.batch
            .slot(path, &at.pointer)
            .add_edit(edit, &at.pointer)
    }

    /// `documents`, `dryRun` and `version` of the canonical and flat shapes.
    fn top_level(
        &mut self,
        ctx: &Ctx,
        version: Option<Value>,
        documents: Option<Vec<WireDocument>>,
        dry_run: Option<bool>,
        top: &Sent,
    ) -> Result<(), RequestError> {
        if let Some(version) = version
            && version.as_u64() != Some(1)
        {
            return Err(
                RequestError::new(format!("unsupported request version {version}"))
                    .at(top.at("version"))
                    .hint("1 is the only version; omit `version` or send 1"),
            );
        }
        self.dry_run |= dry_run.unwrap_or(false);
        let items = top.items("documents");
        for (i, document) in documents.unwrap_or_default().into_iter().enumerate() {
            let at = items.item(ctx, i);
            let path = checked_path(&document.path, &at)?;
            let key = merge_key(path);
            if let Some((_, earlier)) = self.document_keys.iter().find(|(k, _)| *k == key) {
                return Err(RequestError::new(format!(
                    "document {} repeats the path of document {earlier}",
                    at.pointer
                ))
                .at(at.at("path")));
            }
            self.document_keys.push((key, at.pointer.clone()));
            self.documents.push(DocumentOverride {
                path: path.to_owned(),
                text: document.text,
            });
        }
        Ok(())
    }

    /// One file object: its operations join the slot of its path.
    fn file(&mut self, ctx: &Ctx, f: FileFields, at: &Sent) -> Result<(), RequestError> {
        self.dry_run |= f.dry_run.unwrap_or(false);
        let path = checked_path(&f.path, at)?;
        let slot = self.batch.slot(path, &at.pointer);
        let mut operations = 0;
        if let Some(edits) = f.edits {
            if edits.is_empty() {
                return Err(empty(at, "edits"));
            }
            slot.reserve_edits(edits.len());
            let items = at.items("edits");
            for (i, e) in edits.into_iter().enumerate() {
                let edit_at = items.item(ctx, i);
                let edit = edit(e.old_text, e.new_text, e.replace_all, e.id, &edit_at)?;
                slot.add_edit(edit, &edit_at.pointer)?;
            }
            operations += 1;
        }
        if let Some(inline) = f.inline {
            // The edit is the object itself; conflicts name its `oldText` for clarity.
            let (Some(old_text), Some(new_text)) = (inline.old_text, inline.new_text) else {
                let missing = if at.has("oldText") {
                    "newText"
                } else {
                    "oldText"
                };
                return Err(RequestError::new(format!(
                    "missing field `{missing}` in {}",
                    at.place()
                ))
                .at(at.pointer.clone()));
            };
            let source = at.at("oldText");
            let edit = edit(old_text, new_text, inline.replace_all, inline.id, at)?;
            slot.add_edit(edit, &source)?;
            operations += 1;
        }
        if let Some(content) = &f.content {
            slot.set_content(content, &at.at("content"))?;
            operations += 1;
        }
        if let Some(delete) = f.delete {
            if !delete {
                return Err(RequestError::new(format!(
                    "`{}` must be true when present in {}",
                    at.key("delete"),
                    at.place()
                ))
                .at(at.at("delete"))
                .hint("omit `delete` unless the file is to be deleted"));
            }
            slot.set_delete(&at.at("delete"))?;
            operations += 1;
        }
        if let Some(target) = &f.move_to {
            if target.is_empty() {
                return Err(empty(at, "moveTo"));
            }
            slot.set_move_to(target, &at.at("moveTo"))?;
            operations += 1;
        }
        if let Some(hash) = &f.expect_hash {
            let hash = expect_hash(hash).ok_or_else(|| {
                RequestError::new(format!(
                    "`{}` is not a sha256 version",
                    at.key("expectHash")
                ))
                .at(at.at("expectHash"))
                .hint_naming(Hint::VersionFromRead)
            })?;
            slot.set_expect_hash(hash, &at.at("expectHash"))?;
        }
        if operations == 0 {
            let which = match at.pointer.as_str() {
                "" => "the request".to_owned(),
                pointer => format!("file object {pointer}"),
            };
            return Err(
                RequestError::new(format!("{which} names a path but no operation"))
                    .at(at.pointer.clone())
                    .hint("give `edits`, `content`, `delete: true` or `moveTo`"),
            );
        }
        Ok(())
    }
}

/// An item of the top-level list of a request object.
enum ListItem {
    File(WireFile),
    Edit(FlatEdit),
}

/// Reads a request object (`files` or `edits` with `documents`, `dryRun`, `version`): the
/// fields of [`WireRequest`] and [`FlatRequest`], whose schemas check the keys; the items of the
/// list are handed to the parser one by one, so that a batch is never held twice.
struct RequestVisitor<'p> {
    parser: &'p mut Parser,
    ctx: &'p Ctx,
    list: List,
}

impl<'de> Visitor<'de> for RequestVisitor<'_> {
    type Value = TopLevel;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a request object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopLevel, A::Error> {
        let mut top = TopLevel::default();
        let mut listed = false;
        while let Some(field) = map.next_key::<String>()? {
            match field.as_str() {
                "documents" => top.documents = map.next_value()?,
                "dryRun" => top.dry_run = map.next_value()?,
                "version" => top.version = map.next_value()?,
                list if list == self.list.field() => {
                    listed = true;
                    top.items = map.next_value_seed(ListSeed {
                        parser: &mut *self.parser,
                        ctx: self.ctx,
                        list: self.list,
                    })?;
                }
                other => {
                    return Err(serde::de::Error::custom(format_args!(
                        "`{other}` is in the schema of a request object but not read"
                    )));
                }
            }
        }
        if !listed {
            return Err(serde::de::Error::missing_field(self.list.field()));
        }
        Ok(top)
    }
}

/// The top-level list of a request object; its value is the number of items.
struct ListSeed<'p> {
    parser: &'p mut Parser,
    ctx: &'p Ctx,
    list: List,
}

impl<'de> DeserializeSeed<'de> for ListSeed<'_> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<usize, D::Error> {
        de.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_> {
    type Value = usize;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut n = 0;
        loop {
            let item = match self.list {
                List::Files => seq.next_element::<WireFile>()?.map(ListItem::File),
                List::Edits => seq.next_element::<FlatEdit>()?.map(ListItem::Edit),
            };
            let Some(item) = item else {
                return Ok(n);
            };
            self.parser.list_item(self.ctx, item, &self.ctx.last());
            n += 1;
        }
    }
}

/// A top-level array: each item a file object or a text-editor command (as the first pass
/// found), read with its schema and checked before the next is read.
struct ArrayVisitor<'p> {
    parser: &'p mut Parser,
    ctx: &'p Ctx,
    items: &'p [Top],
}

impl<'de> Visitor<'de> for ArrayVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let shapes = schema::shapes();
        for (i, top) in self.items.iter().enumerate() {
            let pointer = item("", i);
            let checked = if top.command {
                let Some(c) =
                    seq.next_element_seed(de::seed(self.ctx, &pointer, &shapes.text_editor))?
                else {
                    break;
                };
                self.parser.text_editor_command(c, &self.ctx.last())
            } else {
                stringified_edits(top, &pointer).map_err(|e| de::carry(self.ctx, e))?;
                let Some(file) = seq.next_element_seed(de::seed::<FileObject>(
                    self.ctx,
                    &pointer,
                    &shapes.file,
                ))?
                else {
                    break;
                };
                self.parser
                    .file(self.ctx, FileFields::from(file), &self.ctx.last())
            };
            checked.map_err(|e| de::carry(self.ctx, e))?;
        }
        Ok(())
    }
}

/// Pi #3370: some models send a file object's `edits` array as a JSON string; it is decoded as
/// the object is read (pointers then index into the decoded array). A string that holds no JSON
/// array is refused before anything else in the object at `pointer`.
fn stringified_edits(top: &Top, pointer: &str) -> Result<(), RequestError> {
    match top.stringified_edits {
        Some(false) => Err(RequestError::new(
            "`edits` must be an array, found a string that is not a JSON array",
        )
        .at(de::child(pointer, "edits"))),
        _ => Ok(()),
    }
}

/// The error for `field`, which `command` does not take.
fn not_for(at: &Sent, field: &'static str, command: &str) -> RequestError {
    RequestError::new(format!(
        "`{field}` does not go with `command: {command}` in {}",
        at.place()
    ))
    .at(at.at(field))
    .hint("str_replace takes old_str and new_str, insert takes insert_line and new_str, create takes file_text, view takes view_range")
}

fn version_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "const": 1})
}

/// The error for an empty `field` (a list or a string) of `at`.
fn empty(at: &Sent, field: &'static str) -> RequestError {
    RequestError::new(format!("`{}` is empty in {}", at.key(field), at.place())).at(at.at(field))
}

/// The `path` of an object: a non-empty string without NUL.
fn checked_path<'p>(path: &'p str, at: &Sent) -> Result<&'p str, RequestError> {
    if path.is_empty() {
        return Err(empty(at, "path"));
    }
    if path.contains('\0') {
        return Err(RequestError::new(format!(
            "`{}` contains a NUL character in {}",
            at.key("path"),
            at.place()
        ))
        .at(at.at("path")));
    }
    Ok(path)
}

/// An edit from its fields; `at` is the object that holds them.
fn edit(
    old_text: String,
    new_text: String,
    replace_all: Option<bool>,
    id: Option<String>,
    at: &Sent,
) -> Result<EditSpec, RequestError> {
    if old_text.is_empty() {
        return Err(empty(at, "oldText").hint(
            "quote the text to replace, copied from the file; to create a file use `content`",
        ));
    }
    let pointer = blank_pointer(&old_text, at, "oldText");
    Ok(EditSpec {
        replace_all: replace_all.unwrap_or(false),
        ..EditSpec::new(old_text, new_text)
    }
    .with_id(id)
    .with_old_text_pointer(pointer))
}

/// The pointer of `field` (an `oldText`) of `at`, kept only when `old_text` is blank under N(·)
/// ([`EditSpec::old_text_pointer`]).
fn blank_pointer(old_text: &str, at: &Sent, field: &'static str) -> Option<String> {
    crate::engine::normalize::is_blank_under_n(old_text).then(|| at.at(field))
}

/// `sha256:` and 64 hex digits (any case), in the lowercase form `redline read` prints.
fn expect_hash(text: &str) -> Option<String> {
    let (prefix, hex) = text.split_at_checked(7)?;
    let valid = prefix.eq_ignore_ascii_case("sha256:")
        && hex.len() == 64
        && hex.bytes().all(|b| b.is_ascii_hexdigit());
    valid.then(|| text.to_ascii_lowercase())
}
