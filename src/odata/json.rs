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
//!   boolean (or `"true"` / `"false"`); Edm.DateTime a string accepted by
//!   [`Ticks::parse`] (1601-01-01 … 9999-12-31); Edm.Guid a hyphenated GUID; Edm.Binary
//!   standard base64 (padding optional). Anything else → 400 `InvalidInput`.
//! - `odata.*` control information, `Timestamp` (and its annotation) are ignored.
//!   `PartitionKey` / `RowKey` must be strings (annotation, if any, `Edm.String`); a null
//!   key counts as absent. Key characters and lengths are checked by the service layer.
//!
//! Validation codes: `DuplicatePropertiesSpecified` (same JSON member twice, detected
//! here because serde_json would silently keep the last), `PropertyNameInvalid`,
//! `PropertyNameTooLong`, `TooManyProperties` (> 252 custom), `PropertyValueTooLarge`
//! (string > 32K UTF-16 units, binary > 64 KiB), `EntityTooLarge` (see
//! [`entity_data_size`]), `InvalidInput` for everything malformed.

use std::collections::{HashMap, HashSet};
use std::fmt;

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::error::{ApiError, ErrorCode};
use crate::model::edm::parse_guid;
use crate::model::names::{validate_property_name, MAX_CUSTOM_PROPERTIES, MAX_ENTITY_BYTES, MAX_VALUE_BYTES};
use crate::model::{EdmType, EdmValue, Ticks};

pub use super::render::{
    entity_feed, entity_path, entity_response, error_body, table_feed, table_response, Urls,
};

/// The suffix of a property type annotation.
pub(crate) const ODATA_TYPE: &str = "@odata.type";

/// Standard-alphabet base64 that accepts input with or without padding.
const BASE64_LENIENT: GeneralPurpose = GeneralPurpose::new(
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

/// The members of a JSON object in document order, duplicates kept.
struct Members(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0).min(512));
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    out.push(entry);
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(MembersVisitor)
    }
}

fn invalid(message: impl Into<std::borrow::Cow<'static, str>>) -> ApiError {
    ApiError::with_message(ErrorCode::InvalidInput, message)
}

/// Parses a body that must be one JSON object (a leading UTF-8 BOM is tolerated).
fn parse_object(body: &[u8]) -> Result<Vec<(String, Value)>, ApiError> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
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
    for (k, v) in members {
        if k == "TableName" {
            if name.is_some() {
                return Err(ApiError::new(ErrorCode::DuplicatePropertiesSpecified));
            }
            match v {
                Value::String(s) => name = Some(s),
                _ => return Err(invalid("The TableName property must be a string.")),
            }
        }
    }
    name.ok_or_else(|| {
        ApiError::with_message(ErrorCode::PropertiesNeedValue, "The TableName property is required.")
    })
}

/// Parses an entity body (Insert/Update/Merge). Drops `odata.*` annotations,
/// `Timestamp`, and null-valued properties; PartitionKey/RowKey must be strings when
/// present. See the module documentation for the typing and validation rules.
pub fn parse_entity(body: &[u8]) -> Result<ParsedEntity, ApiError> {
    let members = parse_object(body)?;

    let mut seen: HashSet<&str> = HashSet::with_capacity(members.len());
    for (k, _) in &members {
        if !seen.insert(k.as_str()) {
            return Err(ApiError::with_message(
                ErrorCode::DuplicatePropertiesSpecified,
                format!("A property is specified more than one time: '{k}'."),
            ));
        }
    }

    let mut annotations: HashMap<&str, &Value> = HashMap::new();
    for (k, v) in &members {
        if let Some(target) = k.strip_suffix(ODATA_TYPE) {
            if !seen.contains(target) {
                return Err(invalid(format!("The type annotation '{k}' has no matching property value.")));
            }
            annotations.insert(target, v);
        }
    }

    let mut out = ParsedEntity { partition_key: None, row_key: None, properties: Vec::new() };
    for (name, value) in &members {
        if name.ends_with(ODATA_TYPE) || name.starts_with("odata.") || name == "Timestamp" {
            continue;
        }
        let declared = match annotations.get(name.as_str()) {
            Some(t) => Some(annotation_type(name, t)?),
            None => None,
        };
        match name.as_str() {
            "PartitionKey" => out.partition_key = key_value(name, value, declared)?,
            "RowKey" => out.row_key = key_value(name, value, declared)?,
            _ => {
                validate_property_name(name)?;
                if value.is_null() {
                    continue;
                }
                let v = typed_value(name, value, declared)?;
                if matches!(v, EdmValue::String(_) | EdmValue::Binary(_)) && v.stored_size() > MAX_VALUE_BYTES
                {
                    return Err(ApiError::new(ErrorCode::PropertyValueTooLarge));
                }
                out.properties.push((name.clone(), v));
            }
        }
    }

    if out.properties.len() > MAX_CUSTOM_PROPERTIES {
        return Err(ApiError::new(ErrorCode::TooManyProperties));
    }
    let size = entity_data_size(
        out.partition_key.as_deref().unwrap_or(""),
        out.row_key.as_deref().unwrap_or(""),
        &out.properties,
    );
    if size > MAX_ENTITY_BYTES {
        return Err(ApiError::new(ErrorCode::EntityTooLarge));
    }
    Ok(out)
}

/// The size charged against the 1 MiB entity limit: keys and property names as UTF-16
/// (2 bytes a unit), 8 bytes for Timestamp, plus [`EdmValue::stored_size`] of each value.
/// The same formula as the service layer's check on merged entities.
pub fn entity_data_size(partition_key: &str, row_key: &str, properties: &[(String, EdmValue)]) -> usize {
    let utf16 = |s: &str| s.encode_utf16().count() * 2;
    utf16(partition_key)
        + utf16(row_key)
        + 8
        + properties.iter().map(|(n, v)| utf16(n) + v.stored_size()).sum::<usize>()
}

/// Reads the value of an `X@odata.type` annotation.
fn annotation_type(name: &str, annotation: &Value) -> Result<EdmType, ApiError> {
    match annotation {
        Value::String(t) => EdmType::parse(t).ok_or_else(|| {
            invalid(format!("The type '{t}' of property '{name}' is not a supported Edm type."))
        }),
        _ => Err(invalid(format!("The type annotation of property '{name}' must be a string."))),
    }
}

/// Reads PartitionKey or RowKey: a string (null = absent).
fn key_value(name: &str, value: &Value, declared: Option<EdmType>) -> Result<Option<String>, ApiError> {
    if declared.is_some_and(|t| t != EdmType::String) {
        return Err(invalid(format!("The {name} property must be of type Edm.String.")));
    }
    match value {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        _ => Err(invalid(format!("The {name} property must be a string."))),
    }
}

fn wrong(name: &str, t: EdmType) -> ApiError {
    invalid(format!("The value of property '{name}' is not a valid {}.", t.as_str()))
}

/// Converts one non-null JSON value to its Edm value, by annotation or inference.
fn typed_value(name: &str, value: &Value, declared: Option<EdmType>) -> Result<EdmValue, ApiError> {
    let Some(t) = declared else {
        return match value {
            Value::String(s) => Ok(EdmValue::String(s.clone())),
            Value::Bool(b) => Ok(EdmValue::Boolean(*b)),
            Value::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
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
        (EdmType::String, Value::String(s)) => EdmValue::String(s.clone()),
        (EdmType::Boolean, Value::Bool(b)) => EdmValue::Boolean(*b),
        (EdmType::Boolean, Value::String(s)) => match s.as_str() {
            "true" => EdmValue::Boolean(true),
            "false" => EdmValue::Boolean(false),
            _ => return Err(bad()),
        },
        (EdmType::Int32, Value::Number(n)) => {
            EdmValue::Int32(n.as_i64().and_then(|i| i32::try_from(i).ok()).ok_or_else(bad)?)
        }
        (EdmType::Int32, Value::String(s)) if is_integer(s) => EdmValue::Int32(s.parse().map_err(|_| bad())?),
        (EdmType::Int64, Value::String(s)) if is_integer(s) => EdmValue::Int64(s.parse().map_err(|_| bad())?),
        (EdmType::Double, Value::Number(n)) => EdmValue::Double(n.as_f64().ok_or_else(bad)?),
        (EdmType::Double, Value::String(s)) => EdmValue::Double(parse_double_string(s).ok_or_else(bad)?),
        (EdmType::DateTime, Value::String(s)) => EdmValue::DateTime(Ticks::parse(s).ok_or_else(bad)?),
        (EdmType::Guid, Value::String(s)) => EdmValue::Guid(parse_guid(s).ok_or_else(bad)?),
        (EdmType::Binary, Value::String(s)) => EdmValue::Binary(BASE64_LENIENT.decode(s).map_err(|_| bad())?),
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
