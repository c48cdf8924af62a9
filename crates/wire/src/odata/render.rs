//! JSON response bodies: entities, entity feeds, tables, table feeds and errors, at
//! each OData metadata level.
//!
//! Per entity, in this order (as recorded from the real service):
//!
//! - fullmetadata: `odata.type` (`{account}.{table}`), `odata.id`, `odata.etag`,
//!   `odata.editLink`; minimalmetadata: `odata.etag` only (the service sends it although
//!   the docs list it as full-only); nometadata: nothing.
//! - `PartitionKey`, `RowKey`, `Timestamp` (7 fractional digits; preceded by
//!   `Timestamp@odata.type: Edm.DateTime` in fullmetadata only).
//! - Custom properties in stored order. `X@odata.type` is written (minimal and full) only
//!   where JSON cannot carry the type: Edm.Int64 (value as a string), Edm.DateTime,
//!   Edm.Guid, Edm.Binary, and Edm.Double when NaN / ±Infinity (value as a string).
//!   Int32, Double, Boolean and String are never annotated, not even in fullmetadata: the
//!   service's docs mark them "annotation not required", and the Azure SDK maintainers
//!   note the service omits them "regardless of the accept header"
//!   (azure-sdk-for-js#15950). Doubles always carry a decimal point or an exponent
//!   (`5.0`, `1e+300`), as in the service's recorded responses, so clients infer Double.
//!   nometadata writes no annotations at all (Int64 is still a string).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::{Map, Value};

use super::json::ODATA_TYPE;
use super::Metadata;
use aztable_model::edm::write_guid;
use aztable_model::names::validate_property_name;
use aztable_model::{EdmRef, Entity, EntityFields};

use crate::swar;

/// The addresses used to build `odata.metadata`, `odata.id` and `odata.type`.
#[derive(Debug, Clone, Copy)]
pub struct Urls<'a> {
    /// The account's base URL, e.g. `http://127.0.0.1:10002/devstoreaccount1` (a trailing
    /// `/` is ignored).
    pub base: &'a str,
    /// The account name (the namespace of `odata.type`).
    pub account: &'a str,
}

impl Urls<'_> {
    fn base(&self) -> &str {
        self.base.trim_end_matches('/')
    }
}

/// Characters left as they are in key literals: RFC 3986 unreserved.
const KEY_ENCODE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// `table(PartitionKey='pk',RowKey='rk')` with `'` doubled and then every character
/// except RFC 3986 unreserved ones percent-encoded: the `odata.editLink` form, and (after
/// `{base}/`) `odata.id` and the `Location` header.
pub fn entity_path(table: &str, partition_key: &str, row_key: &str) -> String {
    let mut out = String::with_capacity(table.len() + partition_key.len() + row_key.len() + 28);
    push_entity_path(&mut out, table, partition_key, row_key);
    out
}

/// `{base}/{entity_path}`: an entity's URL (`Location`, `odata.id`), built in one
/// allocation.
pub fn entity_url(base: &str, table: &str, partition_key: &str, row_key: &str) -> String {
    let mut out = String::with_capacity(base.len() + table.len() + partition_key.len() + row_key.len() + 29);
    out.push_str(base);
    out.push('/');
    push_entity_path(&mut out, table, partition_key, row_key);
    out
}

fn push_entity_path(out: &mut String, table: &str, partition_key: &str, row_key: &str) {
    let push_key = |out: &mut String, s: &str| match s.contains('\'') {
        true => out.extend(utf8_percent_encode(&s.replace('\'', "''"), KEY_ENCODE)),
        false => out.extend(utf8_percent_encode(s, KEY_ENCODE)),
    };
    out.push_str(table);
    out.push_str("(PartitionKey='");
    push_key(out, partition_key);
    out.push_str("',RowKey='");
    push_key(out, row_key);
    out.push_str("')");
}

/// Cleans a `$select` list: names trimmed, empties and repeats dropped. `None` (no
/// projection) when absent, empty, or containing `*`.
pub(super) fn projection(select: Option<&[String]>) -> Option<Vec<&str>> {
    let mut out: Vec<&str> = Vec::new();
    for name in select?.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        if name == "*" {
            return None;
        }
        if !out.contains(&name) {
            out.push(name);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// `{base}/$metadata#{fragment}`, with `&$select=a,b` appended under a projection (the
/// form the service answers a `$select` query with).
fn metadata_url(urls: &Urls<'_>, fragment: &str, projection: Option<&[&str]>) -> String {
    let mut url = format!("{}/$metadata#{fragment}", urls.base());
    if let Some(p) = projection {
        url.push_str("&$select=");
        url.push_str(&p.join(","));
    }
    url
}

fn to_bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default() // ok: a Value with string keys always serializes
}

/// Streams one JSON object into a buffer: entities are written field by field, with
/// no intermediate map (the point-read and query paths are hot).
struct ObjWriter<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> ObjWriter<'a> {
    fn open(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        ObjWriter { out, first: true }
    }

    /// The comma before every member but the first.
    fn separate(&mut self) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
    }

    fn key(&mut self, k: &str) {
        self.separate();
        write_json_str(self.out, k);
        self.out.push(b':');
    }

    fn str(&mut self, k: &str, v: &str) {
        self.key(k);
        write_json_str(self.out, v);
    }

    /// Writes `"{k}@odata.type":"{edm_type}"` (no `format!` for the annotated name).
    fn annotation(&mut self, k: &str, edm_type: &str) {
        self.separate();
        self.out.push(b'"');
        push_escaped(self.out, k);
        self.out.extend_from_slice(ODATA_TYPE.as_bytes());
        self.out.extend_from_slice(b"\":");
        write_json_str(self.out, edm_type);
    }

    /// Writes a string member whose value `text` writes as plain ASCII that needs no
    /// escaping (numbers, dates, GUIDs, base64), straight into the buffer.
    fn str_with(&mut self, k: &str, text: impl FnOnce(&mut Vec<u8>)) {
        self.key(k);
        self.out.push(b'"');
        text(self.out);
        self.out.push(b'"');
    }

    fn raw(&mut self, k: &str, v: &str) {
        self.key(k);
        self.out.extend_from_slice(v.as_bytes());
    }

    fn close(self) {
        self.out.push(b'}');
    }
}

/// Writes `s` as a JSON string literal, quoted and escaped byte for byte as serde_json
/// does (`\"`, `\\`, `\b \f \n \r \t`, other control characters as `\u00xx`).
/// Runs of plain bytes are found eight at a time and copied whole: entities carry long
/// strings, and a byte-at-a-time table lookup was 3 % of a point read's server CPU.
pub(super) fn write_json_str(out: &mut Vec<u8>, s: &str) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    push_escaped(out, s);
    out.push(b'"');
}

/// The inside of [`write_json_str`]: `s` escaped, without the quotes.
fn push_escaped(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    // nearly every name and value needs no escape: found in one pass without early exit
    // (which the compiler vectorizes), then copied whole
    if !any_needs_escape(bytes) {
        out.extend_from_slice(bytes);
        return;
    }
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        while let Some(word) = bytes.get(i..i + 8) {
            if needs_escape(swar::word(word)) {
                break;
            }
            i += 8;
        }
        let Some(&b) = bytes.get(i) else { break };
        i += 1;
        let unicode;
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0C => b"\\f",
            0..=0x1F => {
                unicode = [b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]];
                &unicode
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i - 1]);
        out.extend_from_slice(escape);
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The bytes of `x` that need an escape: `"`, `\\` or below 0x20 ([`swar`]).
fn escape_bits(x: u64) -> u64 {
    swar::below_bits(x, 0x20) | swar::eq_bits(x, b'"') | swar::eq_bits(x, b'\\')
}

/// Whether any of the eight bytes of `x` needs an escape.
fn needs_escape(x: u64) -> bool {
    escape_bits(x) != 0
}

/// Whether any byte of `bytes` needs an escape.
fn any_needs_escape(bytes: &[u8]) -> bool {
    swar::any(bytes, escape_bits, |b| b < 0x20 || b == b'"' || b == b'\\')
}

/// Writes one custom property (and its type annotation where one is needed).
fn write_property(w: &mut ObjWriter<'_>, name: &str, v: EdmRef<'_>, md: Metadata) {
    let annotate = |w: &mut ObjWriter<'_>| {
        if md != Metadata::None {
            w.annotation(name, v.edm_type().as_str());
        }
    };
    match v {
        EdmRef::String(s) => w.str(name, s),
        // (itoa: `write!` cost some 250 instructions an integer, a twentieth of a row)
        EdmRef::Int32(i) => {
            w.key(name);
            w.out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
        }
        EdmRef::Int64(i) => {
            annotate(w);
            w.str_with(name, |out| out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes()));
        }
        EdmRef::Double(d) if d.is_finite() => {
            w.key(name);
            // ok to ignore: serializing an f64 into a Vec cannot fail; finite doubles
            // print with a decimal point or an exponent (`5.0`, `1e300`)
            let _ = serde_json::to_writer(&mut *w.out, &d);
        }
        EdmRef::Double(d) => {
            annotate(w);
            let text = if d.is_nan() {
                "NaN"
            } else if d > 0.0 {
                "Infinity"
            } else {
                "-Infinity"
            };
            w.str(name, text);
        }
        EdmRef::Boolean(b) => w.raw(name, if b { "true" } else { "false" }),
        EdmRef::DateTime(t) => {
            annotate(w);
            w.str_with(name, |out| t.write_rfc3339_trimmed(out));
        }
        EdmRef::Guid(g) => {
            annotate(w);
            w.str_with(name, |out| write_guid(out, g));
        }
        EdmRef::Binary(b) => {
            annotate(w);
            w.str(name, &STANDARD.encode(b));
        }
    }
}

/// Writes one entity's fields into an open object (after any `odata.metadata`).
fn write_entity_fields(
    w: &mut ObjWriter<'_>,
    e: &(impl EntityFields + ?Sized),
    table: &str,
    md: Metadata,
    projection: Option<&[&str]>,
    urls: &Urls<'_>,
) {
    match md {
        Metadata::Full => {
            let path = entity_path(table, e.partition_key(), e.row_key());
            w.str("odata.type", &format!("{}.{table}", urls.account));
            w.str("odata.id", &format!("{}/{path}", urls.base()));
            w.str("odata.etag", &e.timestamp().etag());
            w.str("odata.editLink", &path);
        }
        Metadata::Minimal => w.str("odata.etag", &e.timestamp().etag()),
        Metadata::None => {}
    }
    let wanted = |n: &str| projection.is_none_or(|p| p.contains(&n));
    if wanted("PartitionKey") {
        w.str("PartitionKey", e.partition_key());
    }
    if wanted("RowKey") {
        w.str("RowKey", e.row_key());
    }
    if wanted("Timestamp") {
        if md == Metadata::Full {
            w.str(&format!("Timestamp{ODATA_TYPE}"), "Edm.DateTime");
        }
        w.str_with("Timestamp", |out| e.timestamp().write_rfc3339_7(out));
    }
    match projection {
        None => e.for_each_property(&mut |name, v| write_property(w, name, v, md)),
        Some(p) => {
            for name in p.iter().filter(|n| !matches!(**n, "PartitionKey" | "RowKey" | "Timestamp")) {
                match e.property(name) {
                    Some(v) => write_property(w, name, v, md),
                    None if validate_property_name(name).is_ok() => w.raw(name, "null"),
                    None => {}
                }
            }
        }
    }
}

/// A single entity response (insert echo, point query):
/// `{"odata.metadata":"{base}/$metadata#{table}/@Element", ...}`.
///
/// `select` is the `$select` list. Under a projection only the selected properties are
/// written, system properties included (PartitionKey, RowKey and Timestamp appear only
/// when selected, as in the service's recorded `$select` responses); a selected property
/// the entity lacks is written as `null` (the documented Atom behaviour, `m:null="true"`;
/// names that cannot be property names are skipped).
/// The `odata.*` control information stays, and `odata.metadata` gains `&$select=…`.
/// System properties come first, then the custom ones in `$select` order. An empty list
/// or one containing `*` means no projection.
pub fn entity_response(
    e: &(impl EntityFields + ?Sized),
    table: &str,
    md: Metadata,
    select: Option<&[String]>,
    urls: &Urls<'_>,
) -> Vec<u8> {
    let p = projection(select);
    let mut out = Vec::with_capacity(512);
    let mut w = ObjWriter::open(&mut out);
    if md != Metadata::None {
        let fragment = format!("{table}/@Element");
        w.str("odata.metadata", &metadata_url(urls, &fragment, p.as_deref()));
    }
    write_entity_fields(&mut w, e, table, md, p.as_deref(), urls);
    w.close();
    out
}

impl super::Format {
    /// What [`entity_response`] without `$select` depends on besides the entity, as
    /// bytes to compare: the metadata level and, where the body carries them, the
    /// account's URL, the account and the table's name as the request spelled it.
    /// `None` for Atom, whose `updated` is the time of the answer.
    pub fn entity_tag(self, table: &str, urls: &Urls<'_>) -> Option<Vec<u8>> {
        let super::Format::Json(md) = self else { return None };
        let level = match md {
            Metadata::None => return Some(vec![b'n']),
            Metadata::Minimal => b'm',
            Metadata::Full => b'f',
        };
        let parts = [urls.base(), urls.account, table];
        let mut tag = Vec::with_capacity(1 + parts.iter().map(|p| p.len() + 4).sum::<usize>());
        tag.push(level);
        for part in parts {
            // length-prefixed, so no two different triples give the same bytes
            tag.extend_from_slice(&u32::try_from(part.len()).unwrap_or(u32::MAX).to_le_bytes());
            tag.extend_from_slice(part.as_bytes());
        }
        Some(tag)
    }
}

/// About the bytes [`write_entity_fields`] writes for `e` (escapes aside): names,
/// values, quotes, annotations, and the control information of `md`.
fn rendered_size(e: &Entity, md: Metadata) -> usize {
    let control = match md {
        Metadata::None => 64,
        Metadata::Minimal => 128,
        Metadata::Full => 512,
    };
    let values: usize = (e.properties.iter())
        .map(|(name, v)| {
            let value = match v {
                aztable_model::EdmValue::String(s) => s.len(),
                aztable_model::EdmValue::Binary(b) => b.len().div_ceil(3) * 4,
                _ => 40,
            };
            2 * name.len() + value + 32
        })
        .sum();
    control + 2 * (e.partition_key.len() + e.row_key.len()) + values
}

/// A query feed: `{"odata.metadata":"{base}/$metadata#{table}","value":[...]}`
/// (`odata.metadata` is left out under nometadata). `select` as for [`entity_response`].
pub fn entity_feed(
    entities: &[Entity],
    table: &str,
    md: Metadata,
    select: Option<&[String]>,
    urls: &Urls<'_>,
) -> Vec<u8> {
    let p = projection(select);
    // sized for the whole feed up front: growing it by doubling copied it again and again
    // (a tenth of a 10-row range query's instructions)
    let size: usize = entities.iter().map(|e| rendered_size(e, md)).sum();
    let mut out = Vec::with_capacity(256 + size);
    let mut w = ObjWriter::open(&mut out);
    if md != Metadata::None {
        w.str("odata.metadata", &metadata_url(urls, table, p.as_deref()));
    }
    w.key("value");
    w.out.push(b'[');
    for (i, e) in entities.iter().enumerate() {
        if i > 0 {
            w.out.push(b',');
        }
        let mut inner = ObjWriter::open(w.out);
        write_entity_fields(&mut inner, e, table, md, p.as_deref(), urls);
        inner.close();
    }
    w.out.push(b']');
    w.close();
    out
}

/// One entity as a self-describing JSON object, the line format of `aztable export`:
/// `PartitionKey`, `RowKey`, `Timestamp` (annotated `Edm.DateTime`, 7 fractional
/// digits) and the custom properties in stored order, annotated as in fullmetadata
/// (Int64, DateTime, Guid, Binary and non-finite Doubles), without the control
/// information that names a server (`odata.id`, `odata.editLink`, `odata.etag`).
/// [`super::parse_entity`] reads it back to the same typed values.
pub fn entity_object(e: &Entity) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    let mut w = ObjWriter::open(&mut out);
    w.str("PartitionKey", &e.partition_key);
    w.str("RowKey", &e.row_key);
    w.str(&format!("Timestamp{ODATA_TYPE}"), "Edm.DateTime");
    w.str("Timestamp", &e.timestamp.to_rfc3339_7());
    for (name, v) in &e.properties {
        write_property(&mut w, name, v.borrowed(), Metadata::Full);
    }
    w.close();
    out
}

/// One table as a JSON object (without `odata.metadata`).
fn table_object(name: &str, md: Metadata, urls: &Urls<'_>) -> Map<String, Value> {
    let mut m = Map::new();
    if md == Metadata::Full {
        let path = format!("Tables('{}')", name.replace('\'', "''"));
        m.insert("odata.type".into(), format!("{}.Tables", urls.account).into());
        m.insert("odata.id".into(), format!("{}/{path}", urls.base()).into());
        m.insert("odata.editLink".into(), path.into());
    }
    m.insert("TableName".into(), name.into());
    m
}

/// A table response (Create Table echo):
/// `{"odata.metadata":"{base}/$metadata#Tables/@Element","TableName":"t"}`; fullmetadata
/// adds `odata.type` (`{account}.Tables`), `odata.id` (`{base}/Tables('t')`) and
/// `odata.editLink` (`Tables('t')`).
pub fn table_response(name: &str, md: Metadata, urls: &Urls<'_>) -> Vec<u8> {
    let mut m = Map::new();
    if md != Metadata::None {
        m.insert("odata.metadata".into(), metadata_url(urls, "Tables/@Element", None).into());
    }
    m.extend(table_object(name, md, urls));
    to_bytes(&Value::Object(m))
}

/// The Query Tables feed: `{"odata.metadata":"{base}/$metadata#Tables","value":[{"TableName":"t"}]}`
/// with the per-table control information of [`table_response`] in fullmetadata.
pub fn table_feed(names: &[String], md: Metadata, urls: &Urls<'_>) -> Vec<u8> {
    let mut m = Map::new();
    if md != Metadata::None {
        m.insert("odata.metadata".into(), metadata_url(urls, "Tables", None).into());
    }
    let value = names.iter().map(|n| Value::Object(table_object(n, md, urls)));
    m.insert("value".into(), Value::Array(value.collect()));
    to_bytes(&Value::Object(m))
}

/// The OData JSON error body:
/// `{"odata.error":{"code":"X","message":{"lang":"en-US","value":"msg\nRequestId:<id>\nTime:<time>"}}}`.
/// `time` is passed through (the service uses 7 fractional digits).
pub fn error_body(code: &str, message: &str, request_id: &str, time: &str) -> Vec<u8> {
    let value = format!("{message}\nRequestId:{request_id}\nTime:{time}");
    let body = serde_json::json!({
        "odata.error": { "code": code, "message": { "lang": "en-US", "value": value } }
    });
    to_bytes(&body)
}
