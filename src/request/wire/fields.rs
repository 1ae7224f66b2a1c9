//! Reading JSON objects field by field, with aliases and JSON pointers for every error.
//!
//! serde's derive reports "unknown field" without saying where, and silently keeps the last of
//! two duplicate keys; agents need the exact place to fix a request, so the parser walks a
//! [`Value`] instead and this module does the bookkeeping.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::request::RequestError;

/// Parses JSON text into a [`Value`], rejecting duplicate object keys.
///
/// A leading UTF-8 BOM is skipped (editors on Windows write one). Errors carry serde_json's
/// line and column in the message and in [`RequestError::line`]; they have no pointer.
pub(super) fn parse_value(text: &str) -> Result<Value, RequestError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(RequestError::new("the request is empty")
            .hint("send one JSON object, for example {\"files\": [...]}"));
    }
    match serde_json::from_str::<StrictValue>(text) {
        Ok(StrictValue(value)) => Ok(value),
        Err(err) => {
            let error = RequestError::new(format!("malformed JSON: {err}"));
            Err(if err.line() > 0 {
                error.at_line(err.line())
            } else {
                error
            })
        }
    }
}

/// A [`Value`] whose objects never had two equal keys.
struct StrictValue(Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate key `{key}`")));
            }
            let StrictValue(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// `parent` extended by one reference token, escaped per RFC 6901 (`~` → `~0`, `/` → `~1`).
pub(super) fn child(parent: &str, token: &str) -> String {
    let mut out = String::with_capacity(parent.len() + token.len() + 1);
    out.push_str(parent);
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// `parent` extended by an array index.
pub(super) fn item(parent: &str, index: usize) -> String {
    format!("{parent}/{index}")
}

/// How a pointer reads in a message: the root pointer `""` is "the request".
pub(super) fn place(pointer: &str) -> String {
    if pointer.is_empty() {
        "the request".to_owned()
    } else {
        pointer.to_owned()
    }
}

/// What kind of JSON value this is, for "found a …" messages.
pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One field: its canonical name first, then the aliases that mean the same.
pub(super) type Names = &'static [&'static str];

pub(super) const PATH: Names = &["path", "file_path", "filePath"];
pub(super) const OLD_TEXT: Names = &["oldText", "old_string", "old_str", "old_text", "oldString"];
pub(super) const NEW_TEXT: Names = &["newText", "new_string", "new_str", "new_text", "newString"];
pub(super) const REPLACE_ALL: Names = &["replaceAll", "replace_all"];
pub(super) const ID: Names = &["id"];
pub(super) const EDITS: Names = &["edits"];
pub(super) const CONTENT: Names = &["content"];
pub(super) const DELETE: Names = &["delete"];
pub(super) const MOVE_TO: Names = &["moveTo", "move_to"];
pub(super) const EXPECT_HASH: Names = &["expectHash", "expect_hash"];
pub(super) const DRY_RUN: Names = &["dryRun", "dry_run"];
pub(super) const FILES: Names = &["files"];
pub(super) const DOCUMENTS: Names = &["documents"];
pub(super) const VERSION: Names = &["version"];
pub(super) const TEXT: Names = &["text"];

/// One key found in an object, under whichever name the caller used.
pub(super) struct Found<'a> {
    /// The name as sent (canonical or alias).
    pub key: &'a str,
    pub value: &'a Value,
    pub pointer: String,
}

impl<'a> Found<'a> {
    fn wrong_type(&self, expected: &str) -> RequestError {
        RequestError::new(format!(
            "`{}` must be {expected}, found {} in {}",
            self.key,
            kind(self.value),
            place(parent_of(&self.pointer))
        ))
        .at(self.pointer.clone())
    }

    /// The value as a string; `null` is absent.
    pub fn string(&self) -> Result<Option<&'a str>, RequestError> {
        match self.value {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s)),
            _ => Err(self.wrong_type("a string")),
        }
    }

    /// The value as a boolean; `null` is absent.
    pub fn boolean(&self) -> Result<Option<bool>, RequestError> {
        match self.value {
            Value::Null => Ok(None),
            Value::Bool(b) => Ok(Some(*b)),
            _ => Err(self.wrong_type("a boolean")),
        }
    }

    /// The value as an array; `null` is absent.
    pub fn array(&self) -> Result<Option<&'a [Value]>, RequestError> {
        match self.value {
            Value::Null => Ok(None),
            Value::Array(items) => Ok(Some(items)),
            _ => Err(self.wrong_type("an array")),
        }
    }
}

fn parent_of(pointer: &str) -> &str {
    pointer.rfind('/').map_or("", |i| &pointer[..i])
}

/// The fields of one JSON object, checked against the names allowed there.
pub(super) struct Fields<'a> {
    /// Pointer of the object itself.
    pub pointer: String,
    found: Vec<(Names, Found<'a>)>,
}

impl<'a> Fields<'a> {
    /// Reads `value` as an object (`what` names it in errors) whose keys must all be among
    /// `allowed`, each field under at most one of its names.
    pub fn read(
        value: &'a Value,
        pointer: &str,
        what: &str,
        allowed: &[Names],
    ) -> Result<Fields<'a>, RequestError> {
        let Value::Object(map) = value else {
            return Err(RequestError::new(format!(
                "{} must be {what}, found {}",
                place(pointer),
                kind(value)
            ))
            .at(pointer));
        };
        let mut found: Vec<(Names, Found<'a>)> = Vec::with_capacity(map.len());
        // Sorted, so which of several bad keys is reported never depends on serde_json's map
        // order (insertion order under its `preserve_order` feature).
        let mut entries: Vec<(&'a String, &'a Value)> = map.iter().collect();
        entries.sort_by_key(|(key, _)| *key);
        for (key, value) in entries {
            let here = child(pointer, key);
            let Some(names) = allowed
                .iter()
                .copied()
                .find(|names| names.contains(&key.as_str()))
            else {
                let canonical: Vec<&str> = allowed.iter().map(|names| names[0]).collect();
                return Err(RequestError::new(format!(
                    "unknown field `{key}` in {}",
                    place(pointer)
                ))
                .at(here)
                .hint(format!("fields allowed here: {}", canonical.join(", "))));
            };
            if let Some((_, other)) = found.iter().find(|(n, _)| *n == names) {
                // Name them in table order (canonical first) and point at the later one.
                let rank = |k: &str| names.iter().position(|n| *n == k);
                let (first, second, at) = if rank(other.key) < rank(key) {
                    (other.key, key.as_str(), here)
                } else {
                    (key.as_str(), other.key, other.pointer.clone())
                };
                return Err(RequestError::new(format!(
                    "`{first}` and `{second}` are two names for one field in {}",
                    place(pointer)
                ))
                .at(at)
                .hint(format!("send only `{}`", names[0])));
            }
            found.push((
                names,
                Found {
                    key,
                    value,
                    pointer: here,
                },
            ));
        }
        Ok(Fields {
            pointer: pointer.to_owned(),
            found,
        })
    }

    /// The field named by `names`, if present and not `null`.
    pub fn get(&self, names: Names) -> Option<&Found<'a>> {
        self.found
            .iter()
            .find(|(n, f)| *n == names && !f.value.is_null())
            .map(|(_, f)| f)
    }

    /// Whether the field is present at all (even as `null`).
    pub fn has(&self, names: Names) -> bool {
        self.found.iter().any(|(n, _)| *n == names)
    }

    fn missing(&self, names: Names) -> RequestError {
        RequestError::new(format!(
            "missing field `{}` in {}",
            names[0],
            place(&self.pointer)
        ))
        .at(self.pointer.clone())
    }

    pub fn opt_string(&self, names: Names) -> Result<Option<&'a str>, RequestError> {
        match self.get(names) {
            Some(found) => found.string(),
            None => Ok(None),
        }
    }

    /// A string field that must be present (it may be empty).
    pub fn string(&self, names: Names) -> Result<&'a str, RequestError> {
        match self.get(names) {
            Some(found) => found.string().map(|s| s.unwrap_or_default()),
            None => match self.found.iter().find(|(n, _)| *n == names) {
                Some((_, null)) => Err(null.wrong_type("a string")),
                None => Err(self.missing(names)),
            },
        }
    }

    pub fn opt_bool(&self, names: Names) -> Result<Option<bool>, RequestError> {
        match self.get(names) {
            Some(found) => found.boolean(),
            None => Ok(None),
        }
    }
}
