//! JSON Schemas of the wire format and the tool definitions built on them (`redline schema`).
//!
//! Everything is generated from the serde types (schemars), so the schema cannot drift from what
//! is parsed and printed, and every subschema is inlined: several MCP clients and LLM providers
//! cannot follow `$ref`. The MCP server lists exactly [`tools`], so `redline schema tools` is what
//! a harness without MCP (a custom loop, OpenAI-style function calling) registers.

use crate::report::response::{RequestFailure, Response};
use schemars::JsonSchema;
use serde_json::{Value, json};

/// Which schema `redline schema` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
    Request,
    Response,
    Tools,
}

impl Which {
    pub(crate) fn parse(s: &str) -> Option<Which> {
        match s {
            "request" => Some(Which::Request),
            "response" => Some(Which::Response),
            "tools" => Some(Which::Tools),
            _ => None,
        }
    }
}

/// The schema (or, for `tools`, the array of tool definitions) named by `which`.
pub(crate) fn schema(which: Which) -> Value {
    match which {
        Which::Request => crate::request::wire::request_schema(),
        Which::Response => response_schema(),
        Which::Tools => Value::Array(tools()),
    }
}

/// All three schemas in one object, `{request, response, tools}` (`redline schema` without a
/// name, `schema` in `serve` without `which`).
pub(crate) fn all() -> Value {
    json!({
        "request": schema(Which::Request),
        "response": schema(Which::Response),
        "tools": schema(Which::Tools),
    })
}

fn settings() -> schemars::generate::SchemaSettings {
    schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .with_transform(schemars::transform::RecursiveTransform(tidy))
}

/// One-line descriptions, and no `format: uint`-style keywords from Rust integer types (not
/// JSON Schema formats; strict validators and some LLM providers reject them).
fn tidy(schema: &mut schemars::Schema) {
    if let Some(Value::String(text)) = schema.get_mut("description") {
        *text = text.replace('\n', " ");
    }
    let numeric = matches!(schema.get("format"), Some(Value::String(f)) if f.starts_with("int") || f.starts_with("uint") || f == "double" || f == "float");
    if numeric {
        schema.remove("format");
    }
}

/// The schema of `T` with subschemas inlined and without `$schema`.
fn inline<T: JsonSchema>() -> Value {
    let mut v = settings()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Value::Object(map) = &mut v {
        map.remove("$schema");
    }
    v
}

/// The response of SPEC §4: a resolved batch, or a request that failed as a whole.
pub(crate) fn response_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "redline response",
        "description": "A resolved batch (per-file and per-edit outcomes), or a request that failed as a whole (`ok: false` with one `error`).",
        "anyOf": [inline::<Response>(), inline::<RequestFailure>()],
    })
}

/// Names of the tools, in the order they are listed.
pub(crate) const READ_FILE: &str = "read_file";
pub(crate) const PREVIEW_EDITS: &str = "preview_edits";
pub(crate) const APPLY_EDITS: &str = "apply_edits";

/// The MCP/LLM tool definitions (`tools/list` entries), in a fixed order.
pub(crate) fn tools() -> Vec<Value> {
    let mut read = inline::<crate::faces::read::ReadParams>();
    if let Value::Object(map) = &mut read {
        map.remove("title");
        map.remove("description");
    }
    let request = crate::request::wire::tool_input_schema();
    // `apply` rejects `documents` (SPEC §3a): do not offer it to a model calling apply_edits.
    let mut apply = request.clone();
    if let Some(Value::Object(props)) = apply.get_mut("properties") {
        props.remove("documents");
    }
    // `structuredContent` is either shape: MCP clients want an object schema at the top.
    let output = |ok: Value, failed: Value| json!({"type": "object", "anyOf": [ok, failed]});
    let read_output = output(
        inline::<crate::faces::read::ReadSummary>(),
        inline::<crate::faces::read::ReadFailure>(),
    );
    let edits_output = output(inline::<Response>(), inline::<RequestFailure>());
    vec![
        json!({
            "name": READ_FILE,
            "title": "Read file",
            "description": "Read a UTF-8 text file with 1-based line numbers, plus its version (sha256:…). Copy oldText from this output (without the line numbers); pass the version as expectHash to make an edit fail if the file changed since.",
            "inputSchema": read,
            "outputSchema": read_output,
            "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
        }),
        json!({
            "name": PREVIEW_EDITS,
            "title": "Preview edits",
            "description": "Resolve a batch of edits without writing anything: each oldText must match exactly one place (exactly, or with line endings, trailing whitespace and Unicode quotes/dashes/spaces normalized; replaceAll opts out of uniqueness). Returns per-edit outcomes, ranges and unified diffs; failed edits come with the closest candidates.",
            "inputSchema": request,
            "outputSchema": edits_output,
            "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
        }),
        json!({
            "name": APPLY_EDITS,
            "title": "Apply edits",
            "description": "Apply a batch of edits, creates, deletes and moves, all or nothing: any failed edit means nothing is written, and every edit's outcome is reported so all can be fixed in one retry. Matching as in preview_edits; paths are relative to the root. Returns unified diffs of what was written.",
            "inputSchema": apply,
            "outputSchema": edits_output,
            "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false},
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has_ref(v: &Value) -> bool {
        match v {
            Value::Object(m) => {
                m.contains_key("$ref") || m.contains_key("$defs") || m.values().any(has_ref)
            }
            Value::Array(a) => a.iter().any(has_ref),
            _ => false,
        }
    }

    #[test]
    fn no_schema_has_a_ref() {
        for which in [Which::Request, Which::Response, Which::Tools] {
            assert!(!has_ref(&schema(which)), "{which:?}");
        }
    }

    #[test]
    fn tool_input_schemas_are_closed_objects() {
        let tools = tools();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, [READ_FILE, PREVIEW_EDITS, APPLY_EDITS]);
        for t in &tools {
            assert_eq!(t["inputSchema"]["type"], "object", "{}", t["name"]);
            assert_eq!(
                t["inputSchema"]["additionalProperties"], false,
                "{}",
                t["name"]
            );
        }
        assert_eq!(tools[0]["inputSchema"]["required"], json!(["path"]));
        // Unsaved buffers are for previews only; apply rejects them.
        assert!(tools[1]["inputSchema"]["properties"]["documents"].is_object());
        assert!(
            tools[2]["inputSchema"]["properties"]
                .get("documents")
                .is_none()
        );
        assert!(tools[2]["inputSchema"]["properties"]["files"].is_object());
    }

    #[test]
    fn response_schema_snapshot() {
        insta::assert_snapshot!(
            "response_schema",
            serde_json::to_string_pretty(&schema(Which::Response)).unwrap()
        );
    }

    #[test]
    fn tools_snapshot() {
        insta::assert_snapshot!(
            "tools",
            serde_json::to_string_pretty(&schema(Which::Tools)).unwrap()
        );
    }
}
