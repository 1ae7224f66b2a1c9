//! Reading a request straight from its JSON text into the typed wire structs, with every error
//! placed where it is in the request as sent.
//!
//! Two passes over the text, neither of which builds a tree of the request:
//!
//! 1. [`outline`] checks the JSON (syntax, numbers in range, no duplicate key in an object) and
//!    notes the top level's keys, or which items of a top-level array are text-editor commands:
//!    the shapes are told apart by their keys, which the typed pass cannot look ahead to.
//! 2. [`Tracked`] wraps serde_json's deserializer (or a [`Value`], for requests that arrive as
//!    one) and walks the request schema alongside it, so that the derived `Deserialize` of the wire
//!    structs parses while every error names the place as sent. Why not `serde_json` alone: its
//!    errors are prose without a place, and schemars cannot see serde's `alias` attributes (that
//!    is how the published schema came to reject the shapes the docs accept). So field names and
//!    their aliases are declared once, where the schema sees them
//!    (`#[schemars(extend("x-aliases" = [...]))]` on the field), and the wrapper reads them from
//!    the schema of the object it is in:
//!    - a key that is neither a property of the object's schema nor one of its aliases is an
//!      unknown field, reported at the key as sent, with the object's fields as the hint;
//!    - two names of one field are refused, naming both as sent and pointing at the later one;
//!    - the derived `Deserialize` only ever sees canonical names (`deny_unknown_fields` stays on
//!      as a backstop);
//!    - a value of the wrong type, a missing field or an error raised by the derive is given the
//!      JSON pointer of the value (of the object, for a missing field) and the key as it was sent;
//!    - each object's keys as sent are kept for the checks made after it is read ([`Ctx::sent`]).
//!
//! Keys are visited in request order, so the first structural error in request order wins.
//! serde_json's error type cannot carry a placed error, so the wrapper's own errors travel
//! through [`Ctx`]: stashed where serde_json would see them, taken back where the wrapper resumes.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use serde_json::Value;

use crate::request::RequestError;

/// What the typed pass shares across its wrappers.
#[derive(Default)]
pub(super) struct Ctx {
    /// The wrapper's error, while it travels through serde_json's error type.
    error: RefCell<Option<Error>>,
    /// The object read last: its pointer and its keys as sent.
    last: RefCell<Option<Sent>>,
    /// The keys of objects some of whose fields were sent under another name, by pointer.
    aliased: RefCell<HashMap<String, Keys>>,
}

/// An object's keys: (canonical field, name as sent), in request order.
type Keys = Vec<(&'static str, String)>;

impl Ctx {
    /// Carries `e` through a foreign error type. An error already carried is the one: a
    /// visitor of ours that carried its error returns the carrier through our own error type,
    /// which is then carried again.
    fn stash<E: de::Error>(&self, e: Error) -> E {
        self.error.borrow_mut().get_or_insert(e);
        E::custom("(a request error, carried through serde_json)")
    }

    /// The error that `e` carries.
    fn take<E: fmt::Display>(&self, e: E) -> Error {
        self.error
            .borrow_mut()
            .take()
            .unwrap_or_else(|| Error::Problem(Problem::Message(e.to_string())))
    }

    /// The object read last (pointer and keys as sent), with its schema.
    pub(super) fn last(&self) -> Sent {
        self.last.borrow_mut().take().unwrap_or_default()
    }

    /// The object at `pointer` whose schema is `schema`: its keys as sent if any was sent under
    /// another name, else none (every field then reads under its canonical name).
    pub(super) fn sent(&self, pointer: String, schema: &'static Value) -> Sent {
        let mut aliased = self.aliased.borrow_mut();
        // Most requests use no alias: no pointer is hashed then.
        let keys = if aliased.is_empty() {
            Keys::default()
        } else {
            aliased.remove(&pointer).unwrap_or_default()
        };
        Sent {
            pointer,
            keys,
            schema: Some(schema),
        }
    }
}

/// An object of the request as sent: where it is, its keys as sent and its schema, so that
/// messages can name a field the way the caller spelled it.
#[derive(Default)]
pub(super) struct Sent {
    pub pointer: String,
    keys: Keys,
    schema: Option<&'static Value>,
}

impl Sent {
    /// The name under which the caller sent `field` (its canonical name when absent).
    pub(super) fn key<'a>(&'a self, field: &'a str) -> &'a str {
        self.keys
            .iter()
            .find(|(name, _)| *name == field)
            .map_or(field, |(_, sent)| sent.as_str())
    }

    /// Whether the caller sent `field` under any of its names (`null` included).
    pub(super) fn has(&self, field: &str) -> bool {
        self.keys.iter().any(|(name, _)| *name == field)
    }

    /// The pointer of `field` as sent.
    pub(super) fn at(&self, field: &str) -> String {
        child(&self.pointer, self.key(field))
    }

    /// The items of the array `field` of this object (objects nested in this one), whose pointer and schema are found once
    /// for all of them (10,000 edits: not 10,000 schema lookups and parent pointers).
    pub(super) fn items(&self, field: &str) -> ItemsAt {
        ItemsAt {
            pointer: self.at(field),
            schema: super::schema::items(self.schema.unwrap_or(&Value::Null), field),
        }
    }

    /// How this object reads in a message.
    pub(super) fn place(&self) -> String {
        place(&self.pointer)
    }
}

/// The items of an array of objects (see [`Sent::items`]).
pub(super) struct ItemsAt {
    pointer: String,
    schema: &'static Value,
}

impl ItemsAt {
    /// Item `i`.
    pub(super) fn item(&self, ctx: &Ctx, i: usize) -> Sent {
        ctx.sent(item(&self.pointer, i), self.schema)
    }
}

/// Deserializes `T` from `de` (found at `pointer` in the request), whose schema is `schema`.
pub(super) fn typed<'de, T: de::Deserialize<'de>, D: Deserializer<'de>>(
    ctx: &Ctx,
    de: D,
    pointer: &str,
    schema: &'static Value,
) -> Result<T, RequestError> {
    T::deserialize(Tracked::new(
        ctx,
        de,
        pointer.to_owned(),
        None,
        Some(schema),
    ))
    .map_err(|e| rendered(e, pointer))
}

/// Reads the object `de` (at `pointer`, whose schema is `schema`) with `visitor`, its keys
/// checked against the schema.
pub(super) fn typed_with<'de, V: Visitor<'de>, D: Deserializer<'de>>(
    ctx: &Ctx,
    de: D,
    pointer: &str,
    schema: &'static Value,
    visitor: V,
) -> Result<V::Value, RequestError> {
    Tracked::new(ctx, de, pointer.to_owned(), None, Some(schema))
        .deserialize_struct("object", &[], visitor)
        .map_err(|e| rendered(e, pointer))
}

/// A seed that reads a `T` (at `pointer`, whose schema is `schema`) as [`typed`] does, as an
/// item of an array read by other means.
pub(super) fn seed<'c, T>(
    ctx: &'c Ctx,
    pointer: &str,
    schema: &'static Value,
) -> impl for<'de> DeserializeSeed<'de, Value = T> + 'c
where
    T: de::DeserializeOwned + 'c,
{
    Seed {
        seed: std::marker::PhantomData::<T>,
        ctx,
        pointer: pointer.to_owned(),
        key: None,
        schema: Some(schema),
        stringified: false,
    }
}

/// Carries a request error out of a visitor through whatever error type it returns.
pub(super) fn carry<E: de::Error>(ctx: &Ctx, e: RequestError) -> E {
    ctx.stash(Error::Placed(e))
}

/// The request error that `e`, returned by a deserializer that read the value at `pointer`,
/// carries.
pub(super) fn placed<E: fmt::Display>(ctx: &Ctx, e: E, pointer: &str) -> RequestError {
    rendered(ctx.take(e), pointer)
}

fn rendered(e: Error, pointer: &str) -> RequestError {
    match e {
        Error::Placed(e) => e,
        // Every method of `Tracked` places what it returns; this is only reached if serde itself
        // fails outside of them.
        Error::Problem(p) => p.render(pointer, None),
    }
}

/// The error of the typed pass: either already rendered with its place, or a problem that the
/// value's wrapper places (it knows the pointer and the key as sent).
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

/// One JSON value of the request: the deserializer that reads it, where it is and what its
/// schema says.
pub(super) struct Tracked<'c, D> {
    de: D,
    ctx: &'c Ctx,
    /// JSON pointer of the value in the request as sent.
    pointer: String,
    /// The key of the value as sent, when it is an object member.
    key: Option<String>,
    /// The schema of the value, when known.
    schema: Option<&'static Value>,
    /// Pi #3370: a string holding a JSON array stands for that array (a file object's `edits`).
    stringified: bool,
}

/// What a wrapper asked for, and what it accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    Any,
    Bool,
    Str,
    U64,
    I64,
    Seq,
    /// An array, or a string holding one (Pi).
    SeqOrText,
    /// An object; the struct's name for messages.
    Map(&'static str),
    /// A unit variant, sent as a string.
    Enum,
}

impl Want {
    fn expected(self) -> String {
        match self {
            Want::Any => "a value".to_owned(),
            Want::Bool => "a boolean".to_owned(),
            Want::Str | Want::Enum => "a string".to_owned(),
            Want::U64 => "a whole number, 0 or more".to_owned(),
            Want::I64 => "a whole number".to_owned(),
            Want::Seq | Want::SeqOrText => "an array".to_owned(),
            // The wire structs are renamed for serde to what they are called in messages.
            Want::Map(name) => with_article(name),
        }
    }
}

impl<'c, 'de, D: Deserializer<'de>> Tracked<'c, D> {
    fn new(
        ctx: &'c Ctx,
        de: D,
        pointer: String,
        key: Option<String>,
        schema: Option<&'static Value>,
    ) -> Self {
        Tracked {
            de,
            ctx,
            pointer,
            key,
            schema,
            stringified: false,
        }
    }

    /// Asks the inner deserializer for any value, accepting only what `want` says.
    fn expect<V: Visitor<'de>>(self, want: Want, visitor: V) -> Result<V::Value, Error> {
        let Tracked {
            de,
            ctx,
            pointer,
            key,
            schema,
            stringified: _,
        } = self;
        let expect = Expect {
            visitor,
            want,
            ctx,
            pointer: &pointer,
            key: key.as_deref(),
            schema,
        };
        let result = de.deserialize_any(expect).map_err(|e| ctx.take(e));
        result.map_err(|e| match e {
            Error::Problem(p) => Error::Placed(p.render(&pointer, key.as_deref())),
            placed => placed,
        })
    }
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Tracked<'_, D> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.expect(Want::Any, visitor)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.expect(Want::Bool, visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.expect(Want::Str, visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.expect(Want::Str, visitor)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.expect(Want::U64, visitor)
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.expect(Want::U64, visitor)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.expect(Want::I64, visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // `null` means absent for optional fields (strict function-calling schemas send every
        // field).
        let Tracked {
            de,
            ctx,
            pointer,
            key,
            schema,
            stringified,
        } = self;
        let option = OptionOf {
            visitor,
            ctx,
            pointer: &pointer,
            key: key.as_deref(),
            schema,
            stringified,
        };
        let result = de.deserialize_option(option).map_err(|e| ctx.take(e));
        result.map_err(|e| match e {
            Error::Problem(p) => Error::Placed(p.render(&pointer, key.as_deref())),
            placed => placed,
        })
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let want = if self.stringified {
            Want::SeqOrText
        } else {
            Want::Seq
        };
        self.expect(want, visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.expect(Want::Map(name), visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.expect(Want::Enum, visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let ctx = self.ctx;
        self.de
            .deserialize_ignored_any(de::IgnoredAny)
            .map_err(|e| ctx.take(e))?;
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i128 u8 u16 u128 f32 f64 char bytes byte_buf unit unit_struct
        newtype_struct tuple tuple_struct map identifier
    }
}

/// The visitor a [`Tracked`] hands to the inner deserializer: it checks the kind of the value
/// against what was asked for, and wraps arrays and objects so that their contents are tracked.
struct Expect<'a, V> {
    visitor: V,
    want: Want,
    ctx: &'a Ctx,
    pointer: &'a str,
    key: Option<&'a str>,
    schema: Option<&'static Value>,
}

impl<'a, 'de, V: Visitor<'de>> Expect<'a, V> {
    /// Whether a value of kind `found` is what was asked for; a type problem (stashed) if not.
    fn accept<E: de::Error>(&self, found: &'static str, ok: &[Want]) -> Result<(), E> {
        if self.want == Want::Any || ok.contains(&self.want) {
            return Ok(());
        }
        Err(self.ctx.stash(Error::Problem(Problem::Type {
            expected: self.want.expected(),
            found,
        })))
    }

    fn text<E: de::Error>(self, text: &str) -> Result<V::Value, E> {
        self.accept("a string", &[Want::Str, Want::Enum, Want::SeqOrText])?;
        match self.want {
            Want::Enum => {
                let result = self.visitor.visit_enum(text.into_deserializer());
                result.map_err(|e| self.ctx.stash(e))
            }
            Want::SeqOrText => self.stringified(text),
            _ => {
                let result = self.visitor.visit_str(text);
                result.map_err(|e| self.ctx.stash(e))
            }
        }
    }

    /// Pi #3370: `edits` sent as a string holding a JSON array is read as that array (pointers
    /// then index into the decoded array).
    fn stringified<E: de::Error>(self, text: &str) -> Result<V::Value, E> {
        let ctx = self.ctx;
        if !holds_array(text) {
            return Err(ctx.stash(Error::Placed(
                RequestError::new(
                    "`edits` must be an array, found a string that is not a JSON array",
                )
                .at(self.pointer),
            )));
        }
        let mut json = serde_json::Deserializer::from_reader(text.as_bytes());
        let inner = Tracked::new(
            ctx,
            &mut json,
            self.pointer.to_owned(),
            self.key.map(str::to_owned),
            self.schema,
        );
        let result = inner.expect(Want::Seq, self.visitor);
        result.map_err(|e| ctx.stash(e))
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Expect<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<V::Value, E> {
        self.accept("a boolean", &[Want::Bool])?;
        pass(self.ctx, self.visitor.visit_bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<V::Value, E> {
        match u64::try_from(v) {
            Ok(u) => self.visit_u64(u),
            Err(_) => {
                self.accept("a number", &[Want::I64])?;
                pass(self.ctx, self.visitor.visit_i64(v))
            }
        }
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        match (self.want, i64::try_from(v)) {
            (Want::I64, Ok(i)) => pass(self.ctx, self.visitor.visit_i64(i)),
            _ => {
                self.accept("a number", &[Want::U64])?;
                pass(self.ctx, self.visitor.visit_u64(v))
            }
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
        self.accept("a number", &[])?;
        pass(self.ctx, self.visitor.visit_f64(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        self.text(v)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        if self.want == Want::Str || self.want == Want::Any {
            return pass(self.ctx, self.visitor.visit_borrowed_str(v));
        }
        self.text(v)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        if self.want == Want::Str || self.want == Want::Any {
            return pass(self.ctx, self.visitor.visit_string(v));
        }
        self.text(&v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.accept("null", &[])?;
        pass(self.ctx, self.visitor.visit_unit())
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.accept("an array", &[Want::Seq, Want::SeqOrText])?;
        let items = self.schema.and_then(|s| find(s, "items"));
        let tracked = Items {
            seq,
            ctx: self.ctx,
            pointer: self.pointer,
            index: 0,
            schema: items,
        };
        pass(self.ctx, self.visitor.visit_seq(tracked))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        let typed = matches!(self.want, Want::Map(_));
        if !typed {
            self.accept("an object", &[])?;
        }
        let mut object = Object {
            map,
            ctx: self.ctx,
            pointer: self.pointer,
            // Only an object whose schema lists its fields is checked against it.
            schema: self
                .schema
                .filter(|s| typed && matches!(find(s, "properties"), Some(Value::Object(_)))),
            seen: Vec::new(),
            pending: None,
        };
        let value = self.visitor.visit_map(&mut object);
        let value = value.map_err(|e| self.ctx.stash(e))?;
        object.done();
        Ok(value)
    }
}

/// Carries a visitor's error through the inner deserializer's error type.
fn pass<E: de::Error, T>(ctx: &Ctx, result: Result<T, Error>) -> Result<T, E> {
    result.map_err(|e| ctx.stash(e))
}

/// The visitor a [`Tracked`] option hands to the inner deserializer.
struct OptionOf<'a, V> {
    visitor: V,
    ctx: &'a Ctx,
    pointer: &'a str,
    key: Option<&'a str>,
    schema: Option<&'static Value>,
    stringified: bool,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for OptionOf<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_none().map_err(|e| self.ctx.stash(e))
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        let mut inner = Tracked::new(
            self.ctx,
            de,
            self.pointer.to_owned(),
            self.key.map(str::to_owned),
            self.schema,
        );
        inner.stringified = self.stringified;
        self.visitor
            .visit_some(inner)
            .map_err(|e| self.ctx.stash(e))
    }
}

/// The items of an array, each tracked.
struct Items<'a, A> {
    seq: A,
    ctx: &'a Ctx,
    pointer: &'a str,
    index: usize,
    schema: Option<&'static Value>,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Items<'_, A> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        let at = Seed {
            seed,
            ctx: self.ctx,
            pointer: item(self.pointer, self.index),
            key: None,
            schema: self.schema,
            stringified: false,
        };
        self.index += 1;
        let ctx = self.ctx;
        self.seq.next_element_seed(at).map_err(|e| ctx.take(e))
    }

    fn size_hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// A seed that reads its value through a [`Tracked`].
struct Seed<'a, T> {
    seed: T,
    ctx: &'a Ctx,
    pointer: String,
    key: Option<String>,
    schema: Option<&'static Value>,
    stringified: bool,
}

impl<'de, T: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<'_, T> {
    type Value = T::Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<T::Value, D::Error> {
        let ctx = self.ctx;
        let mut tracked = Tracked::new(ctx, de, self.pointer, self.key, self.schema);
        tracked.stringified = self.stringified;
        self.seed.deserialize(tracked).map_err(|e| ctx.stash(e))
    }
}

/// The members of an object, their keys checked against the object's schema.
struct Object<'a, A> {
    map: A,
    ctx: &'a Ctx,
    pointer: &'a str,
    /// The object's schema, when it is one of the wire structs.
    schema: Option<&'static Value>,
    /// (canonical name, name as sent) of the fields read so far.
    seen: Keys,
    /// The member whose key was just handed out: (key as sent, its field's schema, whether a
    /// string holding an array stands for the array).
    pending: Option<(String, Option<&'static Value>, bool)>,
}

impl<A> Object<'_, A> {
    /// The canonical name of `key` in this object, and that field's schema.
    fn field(&self, key: &str) -> Result<(&'static str, Option<&'static Value>), Error> {
        let Some(Value::Object(properties)) = self.schema.and_then(|s| find(s, "properties"))
        else {
            return Err(de::Error::custom(
                "an object without a schema has no fields to check",
            ));
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

    /// Keeps the keys as sent of the object just read ([`Ctx::last`], [`Ctx::sent`]).
    fn done(self) {
        if self.schema.is_none() {
            return;
        }
        if self.seen.iter().any(|(name, sent)| name != sent) {
            self.ctx
                .aliased
                .borrow_mut()
                .insert(self.pointer.to_owned(), self.seen.clone());
        }
        *self.ctx.last.borrow_mut() = Some(Sent {
            pointer: self.pointer.to_owned(),
            keys: self.seen,
            schema: self.schema,
        });
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for &mut Object<'_, A> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let ctx = self.ctx;
        let Some(key) = self.map.next_key::<String>().map_err(|e| ctx.take(e))? else {
            return Ok(None);
        };
        if self.schema.is_none() {
            // A free-form value (`version`): keys as they are.
            let name = seed.deserialize(key.as_str().into_deserializer())?;
            self.pending = Some((key, None, false));
            return Ok(Some(name));
        }
        let (name, schema) = self.field(&key)?;
        if let Some((_, earlier)) = self.seen.iter().find(|(n, _)| *n == name) {
            return Err(Error::Placed(
                RequestError::new(format!(
                    "`{earlier}` and `{key}` are two names for one field in {}",
                    place(self.pointer)
                ))
                .at(child(self.pointer, &key))
                .hint(format!("send only `{name}`")),
            ));
        }
        self.seen.push((name, key.clone()));
        // A file object outside `files[]` takes `edits` as a string holding the array (Pi).
        let stringified = name == "edits" && self.schema.is_some_and(is_file_schema);
        self.pending = Some((key, schema, stringified));
        seed.deserialize(name.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let Some((key, schema, stringified)) = self.pending.take() else {
            return Err(de::Error::custom("a value was asked for before its key"));
        };
        let at = Seed {
            seed,
            ctx: self.ctx,
            pointer: child(self.pointer, &key),
            key: Some(key),
            schema,
            stringified,
        };
        let ctx = self.ctx;
        self.map.next_value_seed(at).map_err(|e| ctx.take(e))
    }
}

/// Whether `schema` is the parser's schema of a file object on its own, the one object whose
/// `edits` may be sent as a string (before that schema is generated, nothing is it).
fn is_file_schema(schema: &Value) -> bool {
    super::schema::shapes()
        .file
        .built()
        .is_some_and(|file| std::ptr::eq(schema, file))
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

/// What the first pass found at the top of a request.
pub(super) enum Outline {
    /// An object.
    Object(Top),
    /// An array, and each of its items.
    Array(Vec<Top>),
    /// Any other JSON value, by kind ("a number").
    Other(&'static str),
}

/// What the first pass notes of the request object, or of an item of a top-level array.
#[derive(Default)]
pub(super) struct Top {
    /// Its keys in request order (the request object's only).
    pub keys: Vec<String>,
    /// It has a `command` key: a text-editor command rather than a file object.
    pub command: bool,
    /// Its `edits` is a string: whether that string holds a JSON array (Pi #3370, taken for the
    /// array in a file object outside `files[]`).
    pub stringified_edits: Option<bool>,
}

impl Top {
    fn of(map: &serde_json::Map<String, Value>, keys: bool) -> Top {
        Top {
            keys: if keys {
                map.keys().cloned().collect()
            } else {
                Vec::new()
            },
            command: map.contains_key("command"),
            stringified_edits: match map.get("edits") {
                Some(Value::String(text)) => Some(holds_array(text)),
                _ => None,
            },
        }
    }
}

impl Outline {
    /// The outline of a request that is already a JSON value.
    pub(super) fn of(value: &Value) -> Outline {
        match value {
            Value::Object(map) => Outline::Object(Top::of(map, true)),
            Value::Array(items) => Outline::Array(
                items
                    .iter()
                    .map(|item| {
                        item.as_object()
                            .map(|m| Top::of(m, false))
                            .unwrap_or_default()
                    })
                    .collect(),
            ),
            other => Outline::Other(kind(other)),
        }
    }
}

/// The first pass over a request's JSON text (module docs).
///
/// Errors carry serde_json's line and column in the message and in [`RequestError::line`]; they
/// have no pointer.
pub(super) fn outline(text: &str) -> Result<Outline, RequestError> {
    if text.trim().is_empty() {
        return Err(RequestError::new("the request is empty")
            .hint("send one JSON object, for example {\"files\": [...]}"));
    }
    let check = Check {
        depth: 0,
        strict: true,
        top: true,
    };
    outline_of(text, check).map_err(|err| {
        let error = RequestError::new(format!("malformed JSON: {err}"));
        if err.line() > 0 {
            error.at_line(err.line())
        } else {
            error
        }
    })
}

/// Whether `text` is JSON text of an array (duplicate keys allowed, as any JSON decoder takes
/// them).
fn holds_array(text: &str) -> bool {
    let check = Check {
        depth: 0,
        strict: false,
        top: false,
    };
    matches!(outline_of(text, check), Ok(Outline::Array(_)))
}

fn outline_of(text: &str, check: Check) -> Result<Outline, serde_json::Error> {
    let mut json = serde_json::Deserializer::from_str(text);
    let outline = de::Deserializer::deserialize_any(&mut json, check)?;
    json.end()?;
    Ok(match outline {
        Checked::Top(outline) => outline,
        Checked::Node { kind, .. } => Outline::Other(kind),
    })
}

/// The first pass's visitor: checks a value (and all it holds) without keeping it.
#[derive(Clone, Copy)]
struct Check {
    depth: usize,
    /// Duplicate keys are refused.
    strict: bool,
    /// The value is the request or an item of a top-level array: [`Top`] is noted.
    top: bool,
}

/// What [`Check`] found: the outline at the top, a kind (and, for the items of a top-level
/// array, their [`Top`]) below.
enum Checked {
    Top(Outline),
    Node { kind: &'static str, top: Top },
}

impl Checked {
    fn node(kind: &'static str) -> Checked {
        Checked::Node {
            kind,
            top: Top::default(),
        }
    }
}

impl Check {
    fn below(self, top: bool) -> Check {
        Check {
            depth: self.depth + 1,
            strict: self.strict,
            top,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Check {
    type Value = Checked;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Checked, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Check {
    type Value = Checked;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked::node("a boolean"))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked::node("a number"))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked::node("a number"))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked::node("a number"))
    }
    fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked::node("a string"))
    }
    fn visit_unit<E>(self) -> Result<Checked, E> {
        Ok(Checked::node("null"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        let top = self.depth == 0;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self.below(top && self.top))? {
            if top {
                items.push(match item {
                    Checked::Node { top, .. } => top,
                    Checked::Top(_) => Top::default(),
                });
            }
        }
        Ok(if top {
            Checked::Top(Outline::Array(items))
        } else {
            Checked::node("an array")
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        let mut top = Top::default();
        let mut seen: Vec<String> = Vec::new();
        // Past a few keys, a set finds a repeat in constant time.
        let mut set: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if self.strict {
                let repeated = if seen.len() < 16 {
                    let repeated = seen.contains(&key);
                    seen.push(key.clone());
                    repeated
                } else {
                    if set.is_empty() {
                        set.extend(seen.iter().cloned());
                    }
                    !set.insert(key.clone())
                };
                if repeated {
                    return Err(de::Error::custom(format_args!("duplicate key `{key}`")));
                }
            }
            if self.top && key == "edits" {
                top.stringified_edits = map.next_value_seed(Edits(self.below(false)))?;
            } else {
                map.next_value_seed(self.below(false))?;
            }
            if self.top {
                top.command |= key == "command";
                if self.depth == 0 {
                    top.keys.push(key);
                }
            }
        }
        Ok(if self.depth == 0 {
            Checked::Top(Outline::Object(top))
        } else {
            Checked::Node {
                kind: "an object",
                top,
            }
        })
    }
}

/// The `edits` of an object [`Check`] notes: checked like any value, and when it is a string,
/// whether that string holds a JSON array.
struct Edits(Check);

impl<'de> DeserializeSeed<'de> for Edits {
    type Value = Option<bool>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Option<bool>, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Edits {
    type Value = Option<bool>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Option<bool>, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Option<bool>, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Option<bool>, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Option<bool>, E> {
        Ok(None)
    }
    fn visit_str<E>(self, text: &str) -> Result<Option<bool>, E> {
        Ok(Some(holds_array(text)))
    }
    fn visit_unit<E>(self) -> Result<Option<bool>, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<bool>, A::Error> {
        self.0.visit_seq(seq).map(|_| None)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<bool>, A::Error> {
        self.0.visit_map(map).map(|_| None)
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

/// "edit object" → "an edit object".
fn with_article(noun: &str) -> String {
    let vowel = noun.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {noun}", if vowel { "an" } else { "a" })
}
