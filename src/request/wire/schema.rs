//! The schemas of the request shapes: the ones the parser walks, and the ones redline publishes.
//!
//! Both come from the wire structs through schemars. The parser's schemas keep each field's
//! aliases in an `x-aliases` list on the field; the published ones list every alias as a property
//! of its own (so that validators such as Gemini CLI's accept what the parser accepts), inline
//! every subschema (several MCP clients and LLM providers cannot follow `$ref`), and put no
//! `anyOf` at the top of a tool's input schema (Anthropic's API rejects one there).

use std::ops::Deref;
use std::sync::OnceLock;

use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use super::de::{ALIASES, aliases};
use super::{FileObject, FlatRequest, TextEditorCommand, WireRequest};

/// The parser's schema of each top-level shape, each generated when first used: a process that
/// reads one canonical request builds only that shape's (schemars' generation is a fixed cost of
/// every `redline apply`; README, Performance, "Process start-up").
pub(super) struct Shapes {
    pub canonical: LazySchema,
    pub file: LazySchema,
    pub flat: LazySchema,
    pub text_editor: LazySchema,
}

/// One shape's schema, generated on first use (it derefs to the schema).
pub(super) struct LazySchema {
    schema: OnceLock<Value>,
    generate: fn() -> Value,
}

impl LazySchema {
    const fn new(generate: fn() -> Value) -> LazySchema {
        LazySchema {
            schema: OnceLock::new(),
            generate,
        }
    }

    /// The schema if it was generated already (`None` before its first use).
    pub(super) fn built(&self) -> Option<&Value> {
        self.schema.get()
    }
}

impl Deref for LazySchema {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.schema.get_or_init(self.generate)
    }
}

static SHAPES: Shapes = Shapes {
    canonical: LazySchema::new(generate::<WireRequest>),
    file: LazySchema::new(generate::<FileObject>),
    flat: LazySchema::new(generate::<FlatRequest>),
    text_editor: LazySchema::new(generate::<TextEditorCommand>),
};

pub(super) fn shapes() -> &'static Shapes {
    &SHAPES
}

/// The schema of `T`, every subschema inlined, descriptions on one line.
fn generate<T: JsonSchema>() -> Value {
    schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .with_transform(schemars::transform::RecursiveTransform(tidy))
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// Doc comments wrap at 100 columns: a schema description reads better unwrapped. An optional
/// field's `default: null` says nothing a caller needs (absent and null mean the same).
/// Integer formats are dropped.
fn tidy(schema: &mut schemars::Schema) {
    if let Some(Value::String(text)) = schema.get_mut("description") {
        *text = text.replace('\n', " ");
    }
    if schema.get("default") == Some(&Value::Null) {
        schema.remove("default");
    }
    // `uint32`-style formats are Rust's, not JSON Schema's; strict validators reject them.
    let rust_format = matches!(schema.get("format"), Some(Value::String(f)) if f.starts_with("int") || f.starts_with("uint"));
    if rust_format {
        schema.remove("format");
    }
}

fn properties(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties")?.as_object()
}

/// The field of the object schema `schema` that `key` names (itself or one of its aliases).
pub(super) fn field_of<'s>(schema: &'s Value, key: &str) -> Option<&'s str> {
    let properties = properties(schema)?;
    if let Some((name, _)) = properties.get_key_value(key) {
        return Some(name);
    }
    properties
        .iter()
        .find(|(_, property)| aliases(property).any(|alias| alias == key))
        .map(|(name, _)| name.as_str())
}

/// The schema of the items of the array `field` of the object schema `schema`.
pub(super) fn items<'s>(schema: &'s Value, field: &str) -> &'s Value {
    static NONE: Value = Value::Null;
    properties(schema)
        .and_then(|p| p.get(field))
        .and_then(|p| p.get("items"))
        .unwrap_or(&NONE)
}

/// A parser schema as published: each alias a property of its own, described as the field it
/// stands for; a required field that has aliases is required under any one of its names.
fn publish(schema: &Value) -> Value {
    match schema {
        Value::Array(items) => Value::Array(items.iter().map(publish).collect()),
        Value::Object(map) => {
            let mut out: Map<String, Value> = map
                .iter()
                .filter(|(k, _)| k.as_str() != ALIASES)
                .map(|(k, v)| (k.clone(), publish(v)))
                .collect();
            if let Some(props) = properties(schema) {
                let mut expanded = Map::new();
                let mut required: Vec<Value> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let mut alternatives = Vec::new();
                for (name, property) in props {
                    let published = publish(property);
                    expanded.insert(name.clone(), published.clone());
                    let names: Vec<&str> = aliases(property).collect();
                    for alias in &names {
                        // Short: tool schemas are sent to the model with every request.
                        let mut same = json!({"description": format!("Same as `{name}`.")});
                        if let Some(kind) = published.get("type") {
                            same["type"] = kind.clone();
                        }
                        expanded.insert((*alias).to_owned(), same);
                    }
                    if !names.is_empty() && required.iter().any(|r| r == name) {
                        required.retain(|r| r != name);
                        let any: Vec<Value> = std::iter::once(name.as_str())
                            .chain(names)
                            .map(|n| json!({"required": [n]}))
                            .collect();
                        alternatives.push(json!({"anyOf": any}));
                    }
                }
                out.insert("properties".into(), Value::Object(expanded));
                if required.is_empty() {
                    out.remove("required");
                } else {
                    out.insert("required".into(), Value::Array(required));
                }
                match alternatives.len() {
                    0 => {}
                    1 => {
                        if let Some(Value::Object(one)) = alternatives.pop() {
                            out.extend(one);
                        }
                    }
                    _ => {
                        out.insert("allOf".into(), Value::Array(alternatives));
                    }
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// A published shape without the keywords that only a root schema carries.
fn branch(schema: &Value) -> Value {
    let mut v = publish(schema);
    if let Value::Object(map) = &mut v {
        map.remove("$schema");
        map.remove("title");
    }
    v
}

/// The JSON Schema (2020-12) of a request: any of the accepted shapes, every subschema inlined
/// (no `$ref`), every alias a property (`redline schema request`).
pub(crate) fn request_schema() -> Value {
    let shapes = shapes();
    let file = branch(&shapes.file);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "redline request",
        "description": "A batch of edits for redline to resolve and apply all or nothing: the canonical {files: [...]}, one file object, an array of file objects, {edits: [{path, oldText, newText}, ...]}, or one command of Anthropic's text-editor tool.",
        "anyOf": [
            branch(&shapes.canonical),
            file,
            {"type": "array", "minItems": 1, "items": {"anyOf": [file, branch(&shapes.text_editor)]}, "description": "File objects and text-editor commands, each as above; objects for one path are merged."},
            branch(&shapes.flat),
            branch(&shapes.text_editor),
        ],
    })
}

/// The request as a tool's `inputSchema`: one object with the properties of every object shape
/// (tool arguments are an object, and a top-level `anyOf` is refused by Anthropic's API), none
/// of them required at the top; a property that differs between shapes is `anyOf` its forms.
pub(crate) fn tool_input_schema() -> Value {
    let shapes = shapes();
    let mut properties: Map<String, Value> = Map::new();
    for shape in [
        &shapes.canonical,
        &shapes.file,
        &shapes.flat,
        &shapes.text_editor,
    ] {
        let published = branch(shape);
        let Some(props) = properties_of(&published) else {
            continue;
        };
        for (name, property) in props {
            match properties.get_mut(name) {
                None => {
                    properties.insert(name.clone(), property.clone());
                }
                Some(existing) => merge_property(existing, property),
            }
        }
    }
    json!({
        "type": "object",
        "description": "The canonical {files: [...]}; or one file object {path, edits | oldText+newText | content | delete | moveTo}; or {edits: [{path, oldText, newText}, ...]}; or one command of Anthropic's text-editor tool {command: str_replace|insert|create, path, old_str, new_str, insert_line, file_text}.",
        "properties": properties,
        "additionalProperties": false,
    })
}

fn properties_of(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties")?.as_object()
}

/// Folds another shape's form of a property into `existing`: equal forms (descriptions aside)
/// are kept once, two object forms (or arrays of objects) become one object with the properties
/// of both, anything else becomes `anyOf` the forms.
fn merge_property(existing: &mut Value, other: &Value) {
    let bare = |v: &Value| {
        let mut v = v.clone();
        if let Value::Object(map) = &mut v {
            map.remove("description");
        }
        v
    };
    if bare(existing) == bare(other) {
        return;
    }
    let kind = |v: &Value| v.get("type").cloned();
    if kind(existing) == Some(json!("array"))
        && kind(other) == Some(json!("array"))
        && let (Some(mine), Some(theirs)) = (existing.get_mut("items"), other.get("items"))
    {
        merge_property(mine, theirs);
        return;
    }
    if kind(existing) == Some(json!("object")) && kind(other) == Some(json!("object")) {
        merge_objects(existing, other);
        return;
    }
    let mut forms: Vec<Value> = match existing.get("anyOf") {
        Some(Value::Array(forms)) if existing.get("type").is_none() => forms.clone(),
        _ => vec![existing.clone()],
    };
    if !forms.iter().any(|f| bare(f) == bare(other)) {
        forms.push(other.clone());
    }
    *existing = json!({"anyOf": forms});
}

/// `existing` accepts what either object schema accepts: the union of the properties, and only
/// the requirements both share.
fn merge_objects(existing: &mut Value, other: &Value) {
    let theirs = other
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(Value::Object(mine)) = existing.get_mut("properties") {
        for (name, property) in theirs {
            match mine.get_mut(&name) {
                Some(m) => merge_property(m, &property),
                None => {
                    mine.insert(name, property);
                }
            }
        }
    }
    for keyword in ["required", "anyOf", "allOf"] {
        if existing.get(keyword) != other.get(keyword)
            && let Value::Object(map) = existing
        {
            map.remove(keyword);
        }
    }
}
