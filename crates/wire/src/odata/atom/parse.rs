//! Atom request bodies: an `entry` whose `content` (`type="application/xml"`) holds
//! `m:properties`, one `d:<Name>` element per property. Read with quick-xml in one
//! pass, strictly and within the request body's bound:
//!
//! - The root must be `entry` in the Atom namespace; `content` and `m:properties` may
//!   appear once each, and `content` holds nothing else. Everything else under `entry`
//!   (`title`, `author`, `id`, `updated`, `link`, `category`, extensions) is skipped
//!   whatever it holds.
//! - Under `m:properties` only `d:` elements, each holding text only (no child
//!   elements). `m:type` names the Edm type (none = Edm.String); `m:null="true"` is a
//!   null, which stores nothing (as in JSON). Text is taken as written: line ends are
//!   normalized as XML requires, character and predefined entity references resolved,
//!   CDATA included; no DTD is allowed.
//! - Namespaces are matched by URI. The service's URIs start with `http://`; the same
//!   URIs with `https://` are accepted too, as written in some widely copied samples.
//!
//! Typing: Edm.Int32 / Edm.Int64 decimal integers; Edm.Double a decimal number, `NaN`,
//! `INF`, `-INF` (XML Schema's spellings) or `Infinity`, `-Infinity`; Edm.Boolean
//! `true`, `false`, `1`, `0`; Edm.DateTime as [`Ticks::parse`] reads it (no zone = UTC,
//! digits past the seventh rounded to the tick);
//! Edm.Guid hyphenated; Edm.Binary base64 (whitespace inside ignored, as XML writers
//! wrap it). Non-string values may be surrounded by whitespace. `Timestamp` is ignored
//! whatever it holds; PartitionKey and RowKey must be strings (a key's other `m:type` refused on Insert,
//! ignored on Update / Merge, as in JSON). Then the same limits and
//! codes as JSON bodies ([`super::super::rules`]).

use std::borrow::Cow;

use base64::Engine as _;
use foldhash::HashSet;
use quick_xml::events::{BytesStart, Event};
use quick_xml::name::{Namespace, ResolveResult};
use quick_xml::NsReader;

use super::{ATOM_NS, D_NS, M_NS};
use crate::odata::json::{parse_double_string, BASE64_LENIENT};
use crate::odata::rules::{check_entity_limits, check_value_size};
use crate::odata::{KeyAnnotations, ParsedEntity};
use aztable_model::edm::parse_guid;
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::names::validate_property_name;
use aztable_model::{EdmType, EdmValue, Ticks};

fn invalid(message: impl Into<Cow<'static, str>>) -> ApiError {
    ApiError::with_message(ErrorCode::InvalidInput, message)
}

fn malformed(detail: impl std::fmt::Display) -> ApiError {
    invalid(format!("The request body is not a valid Atom entry: {detail}."))
}

/// One `d:` element of `m:properties`, as written.
#[derive(Debug)]
struct RawProperty {
    name: String,
    edm_type: Option<String>,
    null: bool,
    text: String,
}

/// Whether a resolved namespace is `expected` (or its `https://` twin).
fn is_ns(ns: &ResolveResult<'_>, expected: &str) -> bool {
    let ResolveResult::Bound(Namespace(uri)) = ns else { return false };
    let Some(rest) = expected.strip_prefix("http://") else { return *uri == expected.as_bytes() };
    *uri == expected.as_bytes() || uri.strip_prefix(b"https://") == Some(rest.as_bytes())
}

/// The namespaces an element can be in, as far as the entry's structure goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ns {
    Atom,
    Data,
    Metadata,
    Other,
}

fn ns_of(ns: &ResolveResult<'_>) -> Ns {
    if is_ns(ns, ATOM_NS) {
        Ns::Atom
    } else if is_ns(ns, D_NS) {
        Ns::Data
    } else if is_ns(ns, M_NS) {
        Ns::Metadata
    } else {
        Ns::Other
    }
}

/// Where the reader is in the entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Before the root element.
    Start,
    Entry,
    Content,
    Properties,
    /// After the root element closed.
    Done,
}

/// Reads the properties of an Atom entry body, in document order.
fn read_properties(body: &[u8]) -> Result<Vec<RawProperty>, ApiError> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let text = std::str::from_utf8(body).map_err(|_| malformed("the body is not UTF-8"))?;
    let mut reader = NsReader::from_str(text);
    reader.config_mut().check_end_names = true;
    reader.config_mut().expand_empty_elements = false;
    let mut at = At::Start;
    let (mut seen_content, mut seen_properties) = (false, false);
    let mut props = Vec::new();
    loop {
        let (ns, event) = reader.read_resolved_event().map_err(malformed)?;
        let ns = ns_of(&ns);
        let (e, empty) = match event {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => {
                at = match at {
                    At::Entry => At::Done,
                    At::Content => At::Entry,
                    At::Properties => At::Content,
                    At::Start | At::Done => return Err(malformed("unexpected closing tag")),
                };
                continue;
            }
            Event::Text(t) => {
                let blank =
                    t.xml10_content().map_err(|e| malformed(quick_xml::Error::from(e)))?.trim().is_empty();
                if !blank && matches!(at, At::Start | At::Done | At::Properties) {
                    return Err(malformed("text outside an element that holds text"));
                }
                continue;
            }
            Event::CData(_) | Event::GeneralRef(_) => {
                if matches!(at, At::Start | At::Done | At::Properties) {
                    return Err(malformed("text outside an element that holds text"));
                }
                continue;
            }
            Event::DocType(_) => return Err(malformed("a DTD is not allowed")),
            Event::Decl(_) | Event::Comment(_) | Event::PI(_) => continue,
            Event::Eof if at == At::Done => return Ok(props),
            Event::Eof => return Err(malformed("the document ends inside the entry")),
        };
        let local = e.local_name();
        match at {
            At::Start => {
                if !(ns == Ns::Atom && local.as_ref() == b"entry") {
                    return Err(malformed("the root element must be an Atom 'entry'"));
                }
                at = if empty { At::Done } else { At::Entry };
            }
            At::Done => return Err(malformed("there is more than one root element")),
            At::Entry if ns == Ns::Atom && local.as_ref() == b"content" => {
                if std::mem::replace(&mut seen_content, true) {
                    return Err(malformed("the entry has more than one 'content'"));
                }
                if !empty {
                    at = At::Content;
                }
            }
            At::Content if ns == Ns::Metadata && local.as_ref() == b"properties" => {
                if std::mem::replace(&mut seen_properties, true) {
                    return Err(malformed("the content has more than one 'm:properties'"));
                }
                if !empty {
                    at = At::Properties;
                }
            }
            At::Content => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                return Err(malformed(format!("'{name}' in the content is not 'm:properties'")));
            }
            At::Entry => {
                if !empty {
                    reader.read_to_end(e.name()).map_err(malformed)?;
                }
            }
            At::Properties => {
                if ns != Ns::Data {
                    let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                    return Err(malformed(format!("'{name}' under 'm:properties' is not a property")));
                }
                let mut prop = start_property(&reader, &e)?;
                if !empty {
                    prop.text = read_text(&mut reader, &prop.name)?;
                }
                props.push(prop);
            }
        }
    }
}

/// A property element's name and its `m:type` and `m:null` attributes.
fn start_property(reader: &NsReader<&[u8]>, e: &BytesStart<'_>) -> Result<RawProperty, ApiError> {
    let name = std::str::from_utf8(e.local_name().into_inner())
        .map_err(|_| malformed("a property name is not UTF-8"))?
        .to_owned();
    let mut prop = RawProperty { name, edm_type: None, null: false, text: String::new() };
    for attr in e.attributes() {
        let attr = attr.map_err(|e| malformed(quick_xml::Error::from(e)))?;
        let (ns, local) = reader.resolve_attribute(attr.key);
        if ns_of(&ns) != Ns::Metadata {
            continue;
        }
        let value = attr.unescape_value().map_err(malformed)?;
        match local.as_ref() {
            b"type" => prop.edm_type = Some(value.into_owned()),
            b"null" => prop.null = matches!(value.trim(), "true" | "1"),
            _ => {}
        }
    }
    Ok(prop)
}

/// Literal text as XML 1.0 allows it: no control characters but tab, line feed and
/// carriage return (those others can only come as character references).
fn literal<'a>(
    decoded: &'a Result<Cow<'_, str>, quick_xml::encoding::EncodingError>,
) -> Result<&'a str, ApiError> {
    let s = decoded.as_ref().map_err(|e| malformed(quick_xml::Error::from(e.clone())))?;
    match s.bytes().any(|b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) {
        true => Err(malformed("a control character is written literally")),
        false => Ok(s),
    }
}

/// The text of a property element up to its end tag; a child element is refused.
fn read_text(reader: &mut NsReader<&[u8]>, name: &str) -> Result<String, ApiError> {
    let mut text = String::new();
    loop {
        match reader.read_event().map_err(malformed)? {
            Event::Text(t) => text.push_str(literal(&t.xml10_content())?),
            Event::CData(c) => text.push_str(literal(&c.xml10_content())?),
            Event::GeneralRef(r) => match r.resolve_char_ref().map_err(malformed)? {
                Some(ch) => text.push(ch),
                None => {
                    let entity = r.decode().map_err(|e| malformed(quick_xml::Error::from(e)))?;
                    let resolved = quick_xml::escape::resolve_predefined_entity(&entity)
                        .ok_or_else(|| malformed(format!("unknown entity reference '&{entity};'")))?;
                    text.push_str(resolved);
                }
            },
            Event::End(_) => return Ok(text),
            Event::Comment(_) | Event::PI(_) => {}
            Event::Eof => return Err(malformed("the document ends inside a property")),
            _ => {
                return Err(invalid(format!(
                    "The value of property '{name}' is not a supported type: only text is allowed."
                )))
            }
        }
    }
}

/// Reads an Atom entity body (Insert / Update / Merge) into the same typed entity a
/// JSON body gives (key types other than `Edm.String` refused, as on Insert).
pub fn parse_entity(body: &[u8]) -> Result<ParsedEntity, ApiError> {
    parse_entity_with(body, KeyAnnotations::Refused)
}

/// [`parse_entity`], with the keys' `m:type` treated as `keys` says.
pub fn parse_entity_with(body: &[u8], keys: KeyAnnotations) -> Result<ParsedEntity, ApiError> {
    let raw = read_properties(body)?;
    let mut out =
        ParsedEntity { partition_key: None, row_key: None, properties: Vec::with_capacity(raw.len()) };
    let mut seen: HashSet<&str> = HashSet::default();
    for p in &raw {
        if !seen.insert(&p.name) {
            return Err(ApiError::with_message(
                ErrorCode::DuplicatePropertiesSpecified,
                format!("A property is specified more than one time: '{}'.", p.name),
            ));
        }
    }
    for p in raw {
        let declared = match &p.edm_type {
            Some(t) => Some(EdmType::parse(t.trim()).ok_or_else(|| {
                invalid(format!("The type '{t}' of property '{}' is not a supported Edm type.", p.name))
            })?),
            None => None,
        };
        match p.name.as_str() {
            "Timestamp" => {}
            "PartitionKey" | "RowKey" => {
                if keys == KeyAnnotations::Refused && declared.is_some_and(|t| t != EdmType::String) {
                    return Err(ApiError::new(ErrorCode::InvalidInput));
                }
                let value = (!p.null).then_some(p.text);
                if p.name == "PartitionKey" {
                    out.partition_key = value;
                } else {
                    out.row_key = value;
                }
            }
            _ => {
                validate_property_name(&p.name)?;
                if p.null {
                    continue;
                }
                let v = typed_value(&p.name, p.text, declared.unwrap_or(EdmType::String))?;
                check_value_size(&v)?;
                out.properties.push((p.name, v));
            }
        }
    }
    check_entity_limits(&out)?;
    Ok(out)
}

/// Reads the Create Table body: an entry whose properties hold `d:TableName`. Other
/// properties are ignored; the name itself is validated by the service layer.
pub fn parse_table_name(body: &[u8]) -> Result<String, ApiError> {
    let mut name = None;
    for p in read_properties(body)? {
        if p.name == "TableName" {
            if name.is_some() {
                return Err(ApiError::new(ErrorCode::DuplicatePropertiesSpecified));
            }
            if p.edm_type.as_deref().is_some_and(|t| t.trim() != "Edm.String") {
                return Err(invalid("The TableName property must be a string."));
            }
            name = (!p.null).then_some(p.text);
        }
    }
    name.ok_or_else(|| {
        ApiError::with_message(ErrorCode::PropertiesNeedValue, "The TableName property is required.")
    })
}

/// Converts one property's text to its Edm value.
fn typed_value(name: &str, text: String, t: EdmType) -> Result<EdmValue, ApiError> {
    let bad = || invalid(format!("The value of property '{name}' is not a valid {}.", t.as_str()));
    let s = text.trim_matches(|c: char| c.is_ascii_whitespace());
    let integer = |s: &str| {
        let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    };
    Ok(match t {
        EdmType::String => EdmValue::String(text),
        EdmType::Int32 if integer(s) => EdmValue::Int32(s.parse().map_err(|_| bad())?),
        EdmType::Int64 if integer(s) => EdmValue::Int64(s.parse().map_err(|_| bad())?),
        EdmType::Double => EdmValue::Double(match s {
            "INF" => f64::INFINITY,
            "-INF" => f64::NEG_INFINITY,
            _ => parse_double_string(s).ok_or_else(bad)?,
        }),
        EdmType::Boolean => EdmValue::Boolean(match s {
            "true" | "1" => true,
            "false" | "0" => false,
            _ => return Err(bad()),
        }),
        EdmType::DateTime => EdmValue::DateTime(Ticks::parse(s).ok_or_else(bad)?),
        EdmType::Guid => EdmValue::Guid(parse_guid(s).ok_or_else(bad)?),
        EdmType::Binary => {
            let compact: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
            EdmValue::Binary(BASE64_LENIENT.decode(compact).map_err(|_| bad())?)
        }
        EdmType::Int32 | EdmType::Int64 => return Err(bad()),
    })
}
