//! JSON request bodies: entity bodies (Insert / Update / Merge) and the Create Table
//! body, parsed into typed values with the service's validation rules.
//!
//! Typing rules (what the real service documents, plus the choices noted here):
//!
//! - Without `X@odata.type`: JSON string → Edm.String, boolean → Edm.Boolean, integer
//!   that fits i32 → Edm.Int32, any other number → Edm.Double, null → property dropped,
//!   array / object → 400 `InvalidInput`. An integer *outside* i32 without annotation is
//!   stored as **Edm.Double**: the service's OData reader parses an untyped JSON number as
//!   Int32 when it fits and as Double otherwise, and the docs define Edm.Double simply as
//!   a JSON number (Azurite accepts such values too, unchecked). Integers beyond 2^53 lose
//!   precision, as they would on the service; send `Edm.Int64` for exact values.
//! - With an annotation (before or after the value; an annotation without a value is
//!   `InvalidInput`): Edm.String needs a string; Edm.Int32 a JSON integer in range (an
//!   integer string is also accepted); Edm.Int64 a string holding an i64 (a bare JSON
//!   number is refused, like OData's "values of type Edm.Int64 must be quoted"); Edm.Double
//!   a number, a numeric string, or `"NaN"`, `"Infinity"`, `"-Infinity"`; Edm.Boolean a
//!   boolean, or `"true"` / `"false"` in any case (the service stores the Python SDK's
//!   `"False"` as `false`); Edm.DateTime a string accepted by [`Ticks::parse`]
//!   (1601-01-01 … 9999-12-31, digits past the seventh rounded to the tick); Edm.Guid a
//!   hyphenated GUID; Edm.Binary standard base64 (padding optional). Anything else →
//!   400 `InvalidInput`.
//! - `odata.*` control information, `Timestamp` (and its annotation) are ignored.
//!   `PartitionKey` / `RowKey` must be strings; a null key counts as absent. A key's
//!   annotation must be `Edm.String` in an Insert body ([`KeyAnnotations::Refused`]);
//!   in an Update / Merge / upsert body, whose keys come from the URL, it is ignored
//!   ([`KeyAnnotations::Ignored`]), as the service answers 204 to `Edm.DateTime`,
//!   `Edm.Guid` and `Edm.Binary` there. Key characters and lengths are checked by the
//!   service layer.
//!
//! Validation codes: `DuplicatePropertiesSpecified` (same JSON member twice, detected
//! here because serde_json would silently keep the last), `PropertyNameInvalid`,
//! `PropertyNameTooLong`, `TooManyProperties` (> 252 custom), `PropertyValueTooLarge`
//! (string > 32K UTF-16 units, binary > 64 KiB), `EntityTooLarge` (see
//! [`aztable_model::entity::data_size`]), `InvalidInput` for everything malformed.
//!
//! The body is read in one pass into its members, in order (strings borrowed from the
//! body unless they have escapes; arrays and objects read in full, then dropped), not
//! through a `serde_json::Value` map, and then checked and typed member by member.

use foldhash::HashMap;
use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

use aztable_model::edm::parse_guid;
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::names::validate_property_name;
use aztable_model::{EdmType, EdmValue, Ticks};

mod flat;

pub use super::render::{
    entity_feed, entity_object, entity_path, entity_response, entity_url, error_body, table_feed,
    table_response, Urls,
};

/// The suffix of a property type annotation.
pub(crate) const ODATA_TYPE: &str = "@odata.type";

/// Standard-alphabet base64 that accepts input with or without padding.
pub(super) const BASE64_LENIENT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// An entity body as sent by a client: the keys (if present) and the custom properties
/// in the order sent, nulls already dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedEntity {
    pub partition_key: Option<String>,
    pub row_key: Option<String>,
    pub properties: Vec<(String, EdmValue)>,
}

/// What a `PartitionKey@odata.type` / `RowKey@odata.type` other than `Edm.String` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyAnnotations {
    /// 400 `InvalidInput` (Insert: the body's keys are the entity's keys).
    Refused,
    /// Ignored (Update, Merge, Insert-Or-Replace, Insert-Or-Merge: the URL's keys win).
    Ignored,
}

/// A member value as the parsers need it: the scalar itself (a string borrowed from the
/// body when it has no escapes), or only the fact that it was an array or an object.
#[derive(Debug)]
enum Json<'de> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'de, str>),
    /// An array or an object, read in full (as a [`Value`], so whatever is malformed
    /// inside fails exactly as it would anywhere else) and then dropped.
    Nested,
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct JsonVisitor;
        // The same mapping as serde_json's own `Value` visitor, scalars not copied.
        impl<'de> Visitor<'de> for JsonVisitor {
            type Value = Json<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Json<'de>, E> {
                Ok(Json::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Json<'de>, E> {
                Ok(Json::Number(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Json<'de>, E> {
                Ok(Json::Number(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Json<'de>, E> {
                Ok(Number::from_f64(v).map_or(Json::Null, Json::Number))
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Json<'de>, E> {
                Ok(Json::String(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Json<'de>, E> {
                Ok(Json::String(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Json<'de>, E> {
                Ok(Json::String(Cow::Owned(v)))
            }
            fn visit_none<E>(self) -> Result<Json<'de>, E> {
                Ok(Json::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json<'de>, D::Error> {
                Json::deserialize(d)
            }
            fn visit_unit<E>(self) -> Result<Json<'de>, E> {
                Ok(Json::Null)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Json<'de>, A::Error> {
                Value::deserialize(SeqAccessDeserializer::new(seq)).map(|_| Json::Nested)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Json<'de>, A::Error> {
                Value::deserialize(MapAccessDeserializer::new(map)).map(|_| Json::Nested)
            }
        }
        d.deserialize_any(JsonVisitor)
    }
}

/// A member name, borrowed from the body when it has no escapes.
struct Name<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl<'de> Visitor<'de> for NameVisitor {
            type Value = Name<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(v)))
            }
        }
        d.deserialize_str(NameVisitor)
    }
}

/// One member of a JSON object.
struct Member<'de> {
    name: Cow<'de, str>,
    value: Json<'de>,
    /// The index of this property's `name@odata.type` member, once linked.
    annotation: Cell<Option<usize>>,
}

/// The members of a JSON object in document order, duplicates kept.
struct Members<'de>(Vec<Member<'de>>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(16).min(512));
                while let Some(Name(name)) = map.next_key()? {
                    let value = map.next_value()?;
                    out.push(Member { name, value, annotation: Cell::new(None) });
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(MembersVisitor)
    }
}

fn invalid(message: impl Into<Cow<'static, str>>) -> ApiError {
    ApiError::with_message(ErrorCode::InvalidInput, message)
}

/// Parses a body that must be one JSON object (a leading UTF-8 BOM is tolerated): a
/// flat one without escapes in one pass ([`flat`]), any other by serde_json.
fn parse_object(body: &[u8]) -> Result<Vec<Member<'_>>, ApiError> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    if let Some(members) = flat::flat_members(body) {
        return Ok(members);
    }
    parse_object_by_serde(body)
}

/// [`parse_object`] by serde_json, for any body.
fn parse_object_by_serde(body: &[u8]) -> Result<Vec<Member<'_>>, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let members = Members::deserialize(&mut de)
        .and_then(|m| de.end().map(|()| m))
        .map_err(|e| invalid(format!("The request body is not a valid JSON object: {e}.")))?;
    Ok(members.0)
}

/// Parses `{"TableName":"x"}` for Create Table. Other members (`odata.*` and the like) are
/// ignored; the name itself is validated by the service layer.
pub fn parse_table_name(body: &[u8]) -> Result<String, ApiError> {
    let members = parse_object(body)?;
    let mut name = None;
    for m in members {
        if m.name == "TableName" {
            if name.is_some() {
                return Err(ApiError::new(ErrorCode::DuplicatePropertiesSpecified));
            }
            match m.value {
                Json::String(s) => name = Some(s.into_owned()),
                _ => return Err(invalid("The TableName property must be a string.")),
            }
        }
    }
    name.ok_or_else(|| {
        ApiError::with_message(ErrorCode::PropertiesNeedValue, "The TableName property is required.")
    })
}

/// Parses an Insert body (key annotations other than `Edm.String` refused). Drops
/// `odata.*` annotations, `Timestamp`, and null-valued properties; PartitionKey/RowKey
/// must be strings when present. See the module documentation for the typing and
/// validation rules.
pub fn parse_entity(body: &[u8]) -> Result<ParsedEntity, ApiError> {
    parse_entity_with(body, KeyAnnotations::Refused)
}

/// [`parse_entity`], with the keys' annotations treated as `keys` says.
pub fn parse_entity_with(body: &[u8], keys: KeyAnnotations) -> Result<ParsedEntity, ApiError> {
    let mut members = parse_object(body)?;
    link_annotations(&members)?;

    let mut out =
        ParsedEntity { partition_key: None, row_key: None, properties: Vec::with_capacity(members.len()) };
    for i in 0..members.len() {
        let name = &members[i].name;
        if name.ends_with(ODATA_TYPE) || name.starts_with("odata.") || name == "Timestamp" {
            continue;
        }
        // An annotation member is skipped above, so it is still in place here.
        let is_key = name == "PartitionKey" || name == "RowKey";
        let declared = match members[i].annotation.get() {
            Some(_) if is_key && keys == KeyAnnotations::Ignored => None,
            Some(a) => Some(annotation_type(name, &members[a].value)?),
            None => None,
        };
        let member = &mut members[i];
        let (name, value) =
            (std::mem::take(&mut member.name), std::mem::replace(&mut member.value, Json::Null));
        match &*name {
            "PartitionKey" => out.partition_key = key_value(&name, value, declared)?,
            "RowKey" => out.row_key = key_value(&name, value, declared)?,
            _ => {
                validate_property_name(&name)?;
                if matches!(value, Json::Null) {
                    continue;
                }
                let v = typed_value(&name, value, declared)?;
                super::rules::check_value_size(&v)?;
                out.properties.push((name.into_owned(), v));
            }
        }
    }

    super::rules::check_entity_limits(&out)?;
    Ok(out)
}

/// Refuses a member name given twice (`DuplicatePropertiesSpecified`, naming the first
/// repeat), then links each `X@odata.type` member to the member `X` (`InvalidInput` for
/// the first annotation without one).
fn link_annotations(members: &[Member<'_>]) -> Result<(), ApiError> {
    let names = NameIndex::new(members).map_err(|name| {
        ApiError::with_message(
            ErrorCode::DuplicatePropertiesSpecified,
            format!("A property is specified more than one time: '{name}'."),
        )
    })?;
    for (i, m) in members.iter().enumerate() {
        if let Some(target) = m.name.strip_suffix(ODATA_TYPE) {
            let Some(t) = names.find(members, target) else {
                let k = &m.name;
                return Err(invalid(format!("The type annotation '{k}' has no matching property value.")));
            };
            members[t].annotation.set(Some(i));
        }
    }
    Ok(())
}

/// Up to this many members, names are looked up by a linear scan; a larger object gets
/// a hash map, so that checking a huge body stays linear.
const FEW_MEMBERS: usize = 32;

/// Finds a member by name (names known to be distinct once built).
// Lives on the stack for one call: boxing the array would cost the allocation it avoids.
#[allow(clippy::large_enum_variant)]
enum NameIndex<'a> {
    /// A fingerprint per member ([`fingerprint`]), names compared only when they match.
    Few([u64; FEW_MEMBERS]),
    Many(HashMap<&'a str, usize>),
}

impl<'a> NameIndex<'a> {
    /// Indexes the names; `Err` with the first name (in document order) seen before.
    fn new(members: &'a [Member<'_>]) -> Result<Self, &'a str> {
        if members.len() <= FEW_MEMBERS {
            let mut prints = [0; FEW_MEMBERS];
            for (i, m) in members.iter().enumerate() {
                let print = fingerprint(&m.name);
                if prints[..i].iter().zip(members).any(|(&p, seen)| p == print && seen.name == m.name) {
                    return Err(&m.name);
                }
                prints[i] = print;
            }
            return Ok(NameIndex::Few(prints));
        }
        let mut map = HashMap::with_capacity_and_hasher(members.len(), Default::default());
        for (i, m) in members.iter().enumerate() {
            if map.insert(&*m.name, i).is_some() {
                return Err(&m.name);
            }
        }
        Ok(NameIndex::Many(map))
    }

    /// The index of the member called `name`.
    fn find(&self, members: &[Member<'_>], name: &str) -> Option<usize> {
        match self {
            NameIndex::Few(prints) => {
                let print = fingerprint(name);
                prints.iter().zip(members).position(|(&p, m)| p == print && m.name == name)
            }
            NameIndex::Many(map) => map.get(name).copied(),
        }
    }
}

/// A cheap summary of a name (its length and some bytes from each end): different
/// fingerprints mean different names.
fn fingerprint(name: &str) -> u64 {
    let b = name.as_bytes();
    let (head, tail) = match (b.first_chunk::<8>(), b.last_chunk::<8>()) {
        (Some(h), Some(t)) => (u64::from_le_bytes(*h), u64::from_le_bytes(*t)),
        _ => match (b.first_chunk::<4>(), b.last_chunk::<4>()) {
            (Some(h), Some(t)) => (u64::from(u32::from_le_bytes(*h)), u64::from(u32::from_le_bytes(*t))),
            // 0 to 3 bytes: all of them
            _ => (b.iter().fold(0, |acc, &x| acc << 8 | u64::from(x)), 0),
        },
    };
    head ^ tail.rotate_left(29) ^ (b.len() as u64).rotate_right(7)
}

/// Reads the value of an `X@odata.type` annotation.
fn annotation_type(name: &str, annotation: &Json<'_>) -> Result<EdmType, ApiError> {
    match annotation {
        Json::String(t) => EdmType::parse(t).ok_or_else(|| {
            invalid(format!("The type '{t}' of property '{name}' is not a supported Edm type."))
        }),
        _ => Err(invalid(format!("The type annotation of property '{name}' must be a string."))),
    }
}

/// Reads PartitionKey or RowKey: a string (null = absent). A key typed other than
/// Edm.String gets the service's recorded answer, the default `InvalidInput` message.
fn key_value(name: &str, value: Json<'_>, declared: Option<EdmType>) -> Result<Option<String>, ApiError> {
    if declared.is_some_and(|t| t != EdmType::String) {
        return Err(ApiError::new(ErrorCode::InvalidInput));
    }
    match value {
        Json::Null => Ok(None),
        Json::String(s) => Ok(Some(s.into_owned())),
        _ => Err(invalid(format!("The {name} property must be a string."))),
    }
}

fn wrong(name: &str, t: EdmType) -> ApiError {
    invalid(format!("The value of property '{name}' is not a valid {}.", t.as_str()))
}

/// Converts one non-null JSON value to its Edm value, by annotation or inference.
fn typed_value(name: &str, value: Json<'_>, declared: Option<EdmType>) -> Result<EdmValue, ApiError> {
    let Some(t) = declared else {
        return match value {
            Json::String(s) => Ok(EdmValue::String(s.into_owned())),
            Json::Bool(b) => Ok(EdmValue::Boolean(b)),
            Json::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
                Some(i) => Ok(EdmValue::Int32(i)),
                None => n.as_f64().map(EdmValue::Double).ok_or_else(|| wrong(name, EdmType::Double)),
            },
            _ => Err(invalid(format!(
                "The value of property '{name}' is not a supported type: arrays and objects are not allowed."
            ))),
        };
    };
    let bad = || wrong(name, t);
    let v = match (t, value) {
        (EdmType::String, Json::String(s)) => EdmValue::String(s.into_owned()),
        (EdmType::Boolean, Json::Bool(b)) => EdmValue::Boolean(b),
        (EdmType::Boolean, Json::String(s)) if s.eq_ignore_ascii_case("true") => EdmValue::Boolean(true),
        (EdmType::Boolean, Json::String(s)) if s.eq_ignore_ascii_case("false") => EdmValue::Boolean(false),
        (EdmType::Int32, Json::Number(n)) => {
            EdmValue::Int32(n.as_i64().and_then(|i| i32::try_from(i).ok()).ok_or_else(bad)?)
        }
        (EdmType::Int32, Json::String(s)) if is_integer(&s) => EdmValue::Int32(s.parse().map_err(|_| bad())?),
        (EdmType::Int64, Json::String(s)) if is_integer(&s) => EdmValue::Int64(s.parse().map_err(|_| bad())?),
        (EdmType::Double, Json::Number(n)) => EdmValue::Double(n.as_f64().ok_or_else(bad)?),
        (EdmType::Double, Json::String(s)) => EdmValue::Double(parse_double_string(&s).ok_or_else(bad)?),
        (EdmType::DateTime, Json::String(s)) => EdmValue::DateTime(Ticks::parse(&s).ok_or_else(bad)?),
        (EdmType::Guid, Json::String(s)) => EdmValue::Guid(parse_guid(&s).ok_or_else(bad)?),
        (EdmType::Binary, Json::String(s)) => {
            EdmValue::Binary(BASE64_LENIENT.decode(&*s).map_err(|_| bad())?)
        }
        _ => return Err(bad()),
    };
    Ok(v)
}

/// An optionally signed run of ASCII digits.
fn is_integer(s: &str) -> bool {
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Parses the string forms of an Edm.Double: `NaN`, `Infinity`, `-Infinity`, or a
/// decimal number (`1.5`, `-2`, `1e10`, `.5`). Overflow to infinity is refused.
pub(crate) fn parse_double_string(s: &str) -> Option<f64> {
    match s {
        "NaN" => return Some(f64::NAN),
        "Infinity" => return Some(f64::INFINITY),
        "-Infinity" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let int_start = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let mut mantissa_digits = i - int_start;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let frac_start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        mantissa_digits += i - frac_start;
    }
    if mantissa_digits == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        let exp_start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == exp_start {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    s.parse::<f64>().ok().filter(|d| d.is_finite())
}

#[cfg(test)]
mod tests {
    //! Cases the reader's shortcuts (borrowed strings, arrays and objects skipped after
    //! validation, the linear name index, the UTF-16 count) must not change.

    use super::*;
    use aztable_model::edm::utf16_len;

    fn err(body: &[u8]) -> ApiError {
        parse_entity(body).expect_err("expected an error")
    }

    #[test]
    fn utf16_len_and_value_size_match_the_model() {
        for s in ["", "abc", "é", "日本", "😀", "a😀é\u{10ffff}\u{ffff}x", "\u{7f}\u{80}\u{7ff}\u{800}"]
        {
            assert_eq!(utf16_len(s), s.encode_utf16().count(), "{s:?}");
            let v = EdmValue::String(s.repeat(3));
            assert_eq!(v.stored_size(), s.repeat(3).encode_utf16().count() * 2, "{s:?}");
        }
        let props = vec![("é😀".to_owned(), EdmValue::String("😀x".into()))];
        assert_eq!(aztable_model::entity::data_size("pé", "😀", &props), 4 + 4 + 8 + 6 + 6);
    }

    #[test]
    fn escaped_names_and_values() {
        let p =
            parse_entity(br#"{"a\u0062":"x\"y","c":"\u00e9\ud83d\ude00","PartitionKey":"p\/q"}"#).unwrap();
        assert_eq!(p.partition_key.as_deref(), Some("p/q"));
        assert_eq!(
            p.properties,
            vec![
                ("ab".to_owned(), EdmValue::String("x\"y".into())),
                ("c".into(), EdmValue::String("é😀".into()))
            ]
        );
        let e = err(br#"{"ab":1,"a\u0062":2}"#);
        assert_eq!(e.code, ErrorCode::DuplicatePropertiesSpecified);
        assert_eq!(e.message, "A property is specified more than one time: 'ab'.");
        let p = parse_entity(br#"{"a":"5","a\u0040odata.type":"Edm.Int64"}"#).unwrap();
        assert_eq!(p.properties, vec![("a".to_owned(), EdmValue::Int64(5))]);
        assert_eq!(parse_table_name(br#"{"TableName":"t\u0031"}"#).unwrap(), "t1");
    }

    #[test]
    fn arrays_and_objects_are_read_in_full() {
        // Ignored members still have to be valid JSON, down to their nested strings.
        assert!(parse_entity(br#"{"odata.x":[1,{"a":[null]}],"Timestamp":{"a":1,"a":2}}"#).is_ok());
        for body in
            [&br#"{"odata.x":["\xff"]}"#[..], br#"{"odata.x":{"a":"\ud800"}}"#, br#"{"odata.x":[1,]}"#]
        {
            let e = err(body);
            assert_eq!(e.code, ErrorCode::InvalidInput);
            assert!(e.message.starts_with("The request body is not a valid JSON object: "), "{}", e.message);
        }
        let e = err(br#"{"a":[1]}"#);
        assert_eq!(
            e.message,
            "The value of property 'a' is not a supported type: arrays and objects are not allowed."
        );
        assert_eq!(err(br#"{"PartitionKey":{}}"#).message, "The PartitionKey property must be a string.");
        assert_eq!(
            err(br#"{"a":"x","a@odata.type":["Edm.String"]}"#).message,
            "The type annotation of property 'a' must be a string."
        );
        // JSON errors come before duplicates, duplicates before annotations without a value.
        assert!(err(br#"{"a":1,"a":2,"b@odata.type":"Edm.Int32"} x"#).message.contains("not a valid JSON"));
        assert_eq!(err(br#"{"b@odata.type":"x","a":1,"a":2}"#).code, ErrorCode::DuplicatePropertiesSpecified);
    }

    #[test]
    fn errors_in_member_order() {
        // The first bad property decides, whatever is wrong with the later ones.
        assert_eq!(
            err(br#"{"a-b":1,"c":"x","c@odata.type":"Edm.Nope"}"#).code,
            ErrorCode::PropertyNameInvalid
        );
        let e = err(br#"{"c":"x","c@odata.type":"Edm.Nope","a-b":1}"#);
        assert_eq!(e.message, "The type 'Edm.Nope' of property 'c' is not a supported Edm type.");
        let e = err(br#"{"x@odata.type":"Edm.Int32","y@odata.type":"Edm.Int32","y":1}"#);
        assert_eq!(e.message, "The type annotation 'x@odata.type' has no matching property value.");
        // An annotation may name any member, even one that is skipped; the annotation is
        // read before the name is checked.
        let e = err(br#"{"Timestamp@odata.type":"x","Timestamp":1,"@odata.type":"y","":2}"#);
        assert_eq!(e.message, "The type 'y' of property '' is not a supported Edm type.");
        assert_eq!(err(br#"{"@odata.type":"Edm.Int32","":2}"#).code, ErrorCode::PropertyNameInvalid);
        assert!(parse_entity(br#"{"odata.a@odata.type":"x","odata.a":1}"#).is_ok());
    }

    #[test]
    fn numbers() {
        let one = |s: &str| parse_entity(s.as_bytes()).unwrap().properties.remove(0).1;
        assert!(matches!(one(r#"{"a":-0}"#), EdmValue::Double(d) if d == 0.0 && d.is_sign_negative()));
        assert_eq!(one(r#"{"a":0}"#), EdmValue::Int32(0));
        assert!(matches!(one(r#"{"a":-0.0}"#), EdmValue::Double(d) if d == 0.0 && d.is_sign_negative()));
        assert_eq!(one(r#"{"a":18446744073709551615}"#), EdmValue::Double(1.8446744073709552e19));
        assert_eq!(one(r#"{"a":18446744073709551616}"#), EdmValue::Double(1.8446744073709552e19));
        assert_eq!(one(r#"{"a":-9223372036854775809}"#), EdmValue::Double(-9.223372036854776e18));
        assert_eq!(one(r#"{"a":4,"a@odata.type":"Edm.Double"}"#), EdmValue::Double(4.0));
    }

    /// Edm.Boolean strings in any case (the service stored the Python SDK's `"False"`);
    /// nothing else.
    #[test]
    fn boolean_strings_in_any_case() {
        let one = |v: &str| {
            parse_entity(format!(r#"{{"a":"{v}","a@odata.type":"Edm.Boolean"}}"#).as_bytes())
                .map(|mut p| p.properties.remove(0).1)
        };
        for (v, want) in [("True", true), ("TRUE", true), ("true", true), ("False", false), ("fAlSe", false)]
        {
            assert_eq!(one(v).unwrap(), EdmValue::Boolean(want), "{v}");
        }
        for v in ["1", "0", "yes", " true", "true ", "", "truee"] {
            assert_eq!(one(v).unwrap_err().code, ErrorCode::InvalidInput, "{v}");
        }
    }

    /// Key annotations: refused on Insert, ignored where the URL names the keys.
    #[test]
    fn key_annotations_refused_or_ignored() {
        let body =
            br#"{"PartitionKey@odata.type":"Edm.DateTime","PartitionKey":"2022-04-01T09:30:45.000000Z",
            "RowKey@odata.type":"Edm.Guid","RowKey":"not-a-guid","x":1}"#;
        let e = parse_entity(body).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert_eq!(e.message, "One of the request inputs is not valid.");
        let p = parse_entity_with(body, KeyAnnotations::Ignored).unwrap();
        assert_eq!(p.partition_key.as_deref(), Some("2022-04-01T09:30:45.000000Z"));
        assert_eq!(p.row_key.as_deref(), Some("not-a-guid"));
        assert_eq!(p.properties, vec![("x".to_owned(), EdmValue::Int32(1))]);
        // Other properties' annotations still count.
        let e = parse_entity_with(
            br#"{"RowKey@odata.type":"Edm.Binary","RowKey":"x","y":"z","y@odata.type":"Edm.Int32"}"#,
            KeyAnnotations::Ignored,
        );
        assert_eq!(e.unwrap_err().code, ErrorCode::InvalidInput);
    }

    /// Names around the size where the index switches from a scan to a hash map, and
    /// names a fingerprint cannot tell apart.
    #[test]
    fn many_members_and_similar_names() {
        for n in [FEW_MEMBERS - 3, FEW_MEMBERS - 2, FEW_MEMBERS - 1, FEW_MEMBERS + 5] {
            let mut members: Vec<String> = (0..n).map(|i| format!(r#""p{i}":{i}"#)).collect();
            members.push(r#""p1@odata.type":"Edm.Double""#.to_owned());
            let body = format!("{{{}}}", members.join(","));
            let p = parse_entity(body.as_bytes()).unwrap();
            assert_eq!(p.properties.len(), n);
            assert_eq!(p.properties[1], ("p1".to_owned(), EdmValue::Double(1.0)));
            let with_dup = format!("{{{},\"p3\":0,\"p2\":0}}", members.join(","));
            let e = err(with_dup.as_bytes());
            assert_eq!(e.message, "A property is specified more than one time: 'p3'.", "{n}");
            let orphan = format!("{{{},\"q@odata.type\":\"Edm.Int32\"}}", members.join(","));
            assert_eq!(
                err(orphan.as_bytes()).message,
                "The type annotation 'q@odata.type' has no matching property value."
            );
        }
        let (a, b) = ("abcdefgh_X_ijklmnop", "abcdefgh_Y_ijklmnop");
        assert_eq!(fingerprint(a), fingerprint(b));
        let body = format!(r#"{{"{a}":"1","{b}":"2","{b}@odata.type":"Edm.Int64"}}"#);
        let p = parse_entity(body.as_bytes()).unwrap();
        assert_eq!(
            p.properties,
            vec![(a.to_owned(), EdmValue::String("1".into())), (b.to_owned(), EdmValue::Int64(2))]
        );
        let e = err(format!(r#"{{"{a}":1,"{b}":2,"{a}":3}}"#).as_bytes());
        assert_eq!(e.message, format!("A property is specified more than one time: '{a}'."));
        for short in ["", "a", "ab", "abc", "abcd", "abcdefg", "abcdefgh"] {
            let body = format!(r#"{{"{short}x":1,"{short}":2,"{short}y":3}}"#);
            let e = parse_entity(body.as_bytes());
            assert!(e.as_ref().is_ok_and(|p| p.properties.len() == 3) || short.is_empty(), "{short}: {e:?}");
        }
    }
}
