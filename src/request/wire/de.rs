//! A serde deserializer over a parsed JSON [`Value`] that follows the request schema alongside
//! it, so that the typed wire structs parse requests and every error names the place as sent.
//!
//! Why not `serde_json::from_value`: its errors are prose without a place, and schemars cannot
//! see serde's `alias` attributes (that is how the published schema came to reject the shapes the
//! docs accept). So field names and their aliases are declared once, where the schema sees them
//! (`#[schemars(extend("x-aliases" = [...]))]` on the field), and this deserializer reads them
//! from the schema of the object it is in:
//!
//! - a key that is neither a property of the object's schema nor one of its aliases is an
//!   unknown field, reported at the key as sent, with the object's fields as the hint;
//! - two names of one field are refused, naming both as sent and pointing at the later one;
//! - the derived `Deserialize` only ever sees canonical names (`deny_unknown_fields` stays on as
//!   a backstop);
//! - a value of the wrong type, a missing field or an error raised by the derive is given the
//!   JSON pointer of the value (of the object, for a missing field) and the key as it was sent.
//!
//! Keys are visited in request order, so the first structural error in request order wins.

use std::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use serde_json::{Map, Value};

use crate::request::RequestError;

/// Deserializes `value` (found at `pointer` in the request) as `T`, whose schema is `schema`.
pub(super) fn from_value<'a, T: de::Deserialize<'a>>(
    value: &'a Value,
    pointer: &str,
    schema: &'a Value,
) -> Result<T, RequestError> {
    let de = De {
        value,
        pointer: pointer.to_owned(),
        key: None,
        schema: Some(schema),
    };
    T::deserialize(de).map_err(|e| match e {
        Error::Placed(e) => e,
        // Every method of `De` places what it returns; this is only reached if serde itself
        // fails outside of them.
        Error::Problem(p) => p.render(pointer, None),
    })
}

/// An error while deserializing: either already rendered with its place, or a problem that the
/// value's deserializer places (it knows the pointer and the key as sent).
#[derive(Debug)]
pub(super) enum Error {
    Placed(RequestError),
    Problem(Problem),
}

#[derive(Debug)]
pub(super) enum Problem {
    /// The value has the wrong JSON type.
    Type {
        expected: String,
        found: &'static str,
    },
    /// A required field is absent.
    Missing(&'static str),
    /// Any other message from serde or a `Deserialize` impl.
    Message(String),
}

impl Problem {
    /// The error for this problem at `pointer`, the value of the key `key` (as sent).
    fn render(self, pointer: &str, key: Option<&str>) -> RequestError {
        let message = match self {
            Problem::Type { expected, found } => match key {
                Some(key) => format!(
                    "`{key}` must be {expected}, found {found} in {}",
                    place(parent_of(pointer))
                ),
                None => format!("{} must be {expected}, found {found}", place(pointer)),
            },
            Problem::Missing(field) => format!("missing field `{field}` in {}", place(pointer)),
            Problem::Message(message) => message,
        };
        RequestError::new(message).at(pointer)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Placed(e) => f.write_str(&e.message),
            Error::Problem(p) => write!(f, "{p:?}"),
        }
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::Problem(Problem::Message(msg.to_string()))
    }

    fn invalid_type(unexp: de::Unexpected, exp: &dyn de::Expected) -> Self {
        Error::Problem(Problem::Type {
            expected: exp.to_string(),
            found: unexpected_kind(&unexp),
        })
    }

    fn missing_field(field: &'static str) -> Self {
        Error::Problem(Problem::Missing(field))
    }
}

fn unexpected_kind(unexp: &de::Unexpected) -> &'static str {
    use de::Unexpected as U;
    match unexp {
        U::Bool(_) => "a boolean",
        U::Unsigned(_) | U::Signed(_) | U::Float(_) => "a number",
        U::Char(_) | U::Str(_) => "a string",
        U::Unit | U::Option => "null",
        U::Seq => "an array",
        U::Map | U::StructVariant => "an object",
        _ => "a value of another kind",
    }
}

/// One JSON value of the request, where it is and what its schema says.
struct De<'a> {
    value: &'a Value,
    /// JSON pointer of the value in the request as sent.
    pointer: String,
    /// The key of the value as sent, when it is an object member.
    key: Option<&'a str>,
    /// The schema of the value, when known.
    schema: Option<&'a Value>,
}

impl<'a> De<'a> {
    /// Gives a problem its place: this value.
    fn place(&self, e: Error) -> Error {
        match e {
            Error::Problem(p) => Error::Placed(p.render(&self.pointer, self.key)),
            placed => placed,
        }
    }

    fn wrong_type(&self, expected: &str) -> Error {
        self.place(Error::Problem(Problem::Type {
            expected: expected.to_owned(),
            found: kind(self.value),
        }))
    }

    fn seq<V: Visitor<'a>>(&self, items: &'a [Value], visitor: V) -> Result<V::Value, Error> {
        let seq = Seq {
            items: items.iter().enumerate(),
            pointer: &self.pointer,
            schema: self.schema.and_then(|s| find(s, "items")),
        };
        visitor.visit_seq(seq).map_err(|e| self.place(e))
    }

    fn object<V: Visitor<'a>>(
        &self,
        map: &'a Map<String, Value>,
        visitor: V,
    ) -> Result<V::Value, Error> {
        let object = Object {
            entries: map.iter(),
            pointer: &self.pointer,
            schema: self.schema,
            seen: Vec::new(),
            pending: None,
        };
        visitor.visit_map(object).map_err(|e| self.place(e))
    }
}

impl<'de> Deserializer<'de> for De<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => visitor.visit_u64(u),
                (None, Some(i), _) => visitor.visit_i64(i),
                (None, None, f) => visitor.visit_f64(f.unwrap_or(f64::NAN)),
            },
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => return self.seq(items, visitor),
            Value::Object(map) => return self.object(map, visitor),
        };
        result.map_err(|e| self.place(e))
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Bool(b) => visitor.visit_bool(*b).map_err(|e| self.place(e)),
            _ => Err(self.wrong_type("a boolean")),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::String(s) => visitor.visit_borrowed_str(s).map_err(|e| self.place(e)),
            _ => Err(self.wrong_type("a string")),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value.as_u64() {
            Some(n) => visitor.visit_u64(n).map_err(|e| self.place(e)),
            None => Err(self.wrong_type("a whole number, 0 or more")),
        }
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_u64(visitor)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value.as_i64() {
            Some(n) => visitor.visit_i64(n).map_err(|e| self.place(e)),
            None => Err(self.wrong_type("a whole number")),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // `null` means absent for optional fields (strict function-calling schemas send every
        // field).
        match self.value {
            Value::Null => visitor.visit_none().map_err(|e| self.place(e)),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Value::Array(items) => self.seq(items, visitor),
            _ => Err(self.wrong_type("an array")),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.value {
            Value::Object(map) => self.object(map, visitor),
            // The wire structs are renamed for serde to what they are called in messages.
            _ => Err(self.wrong_type(&with_article(name))),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        // Only unit variants, sent as strings.
        match self.value {
            Value::String(s) => visitor
                .visit_enum(s.as_str().into_deserializer())
                .map_err(|e| self.place(e)),
            _ => Err(self.wrong_type("a string")),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i128 u8 u16 u128 f32 f64 char bytes byte_buf unit unit_struct
        newtype_struct tuple tuple_struct map identifier
    }
}

/// "edit object" → "an edit object".
fn with_article(noun: &str) -> String {
    let vowel = noun.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {noun}", if vowel { "an" } else { "a" })
}

struct Seq<'a, 'p> {
    items: std::iter::Enumerate<std::slice::Iter<'a, Value>>,
    pointer: &'p str,
    schema: Option<&'a Value>,
}

impl<'a> SeqAccess<'a> for Seq<'a, '_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        let Some((i, value)) = self.items.next() else {
            return Ok(None);
        };
        seed.deserialize(De {
            value,
            pointer: item(self.pointer, i),
            key: None,
            schema: self.schema,
        })
        .map(Some)
    }
}

struct Object<'a, 'p> {
    entries: serde_json::map::Iter<'a>,
    pointer: &'p str,
    schema: Option<&'a Value>,
    /// (canonical name, name as sent) of the fields read so far.
    seen: Vec<(&'a str, &'a str)>,
    /// The entry whose key was just handed out: (key as sent, value, its schema).
    pending: Option<(&'a str, &'a Value, Option<&'a Value>)>,
}

impl<'a> Object<'a, '_> {
    /// The canonical name of `key` in this object, and that field's schema.
    fn field(&self, key: &'a str) -> Result<(&'a str, Option<&'a Value>), Error> {
        let Some(properties) = self.schema.and_then(|s| find(s, "properties")) else {
            return Ok((key, None));
        };
        let Value::Object(properties) = properties else {
            return Ok((key, None));
        };
        if let Some((name, schema)) = properties.get_key_value(key) {
            return Ok((name.as_str(), Some(schema)));
        }
        for (name, schema) in properties {
            if aliases(schema).any(|alias| alias == key) {
                return Ok((name.as_str(), Some(schema)));
            }
        }
        let allowed: Vec<&str> = properties.keys().map(String::as_str).collect();
        Err(Error::Placed(
            RequestError::new(format!("unknown field `{key}` in {}", place(self.pointer)))
                .at(child(self.pointer, key))
                .hint(format!("fields allowed here: {}", allowed.join(", "))),
        ))
    }
}

impl<'a> MapAccess<'a> for Object<'a, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        let (name, schema) = self.field(key)?;
        if let Some((_, earlier)) = self.seen.iter().find(|(n, _)| *n == name) {
            return Err(Error::Placed(
                RequestError::new(format!(
                    "`{earlier}` and `{key}` are two names for one field in {}",
                    place(self.pointer)
                ))
                .at(child(self.pointer, key))
                .hint(format!("send only `{name}`")),
            ));
        }
        self.seen.push((name, key));
        self.pending = Some((key, value, schema));
        seed.deserialize(name.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let Some((key, value, schema)) = self.pending.take() else {
            return Err(de::Error::custom("a value was asked for before its key"));
        };
        seed.deserialize(De {
            value,
            pointer: child(self.pointer, key),
            key: Some(key),
            schema,
        })
    }
}

/// The aliases a property's schema declares (`x-aliases`).
pub(super) fn aliases(schema: &Value) -> impl Iterator<Item = &str> {
    schema
        .get(ALIASES)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// The schema keyword that lists a property's other accepted names.
pub(super) const ALIASES: &str = "x-aliases";

/// `schema[keyword]`, looking into the branches of an `anyOf` (schemars writes `Option<T>` that
/// way) when the schema itself lacks it.
fn find<'s>(schema: &'s Value, keyword: &str) -> Option<&'s Value> {
    if let Some(found) = schema.get(keyword) {
        return Some(found);
    }
    schema
        .get("anyOf")?
        .as_array()?
        .iter()
        .find_map(|branch| branch.get(keyword))
}

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

impl<'de> de::Deserialize<'de> for StrictValue {
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

fn parent_of(pointer: &str) -> &str {
    pointer.rfind('/').map_or("", |i| &pointer[..i])
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
