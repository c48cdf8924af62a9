//! Atom response bodies in the service's shapes: entity entries and query feeds, table
//! entries and the Query Tables feed, and the XML error.
//!
//! An entity entry (`xml:base` is the account's URL, so `link` hrefs are relative):
//!
//! ```text
//! <entry xml:base="{base}/" xmlns=Atom xmlns:d=… xmlns:m=… m:etag="W/&quot;datetime'…'&quot;">
//!   <id>{base}/{table}(PartitionKey='…',RowKey='…')</id> <title type="text" />
//!   <updated>{now}</updated> <author><name /></author>
//!   <link rel="edit" title="{table}" href="{table}(PartitionKey='…',RowKey='…')" />
//!   <category term="{account}.{table}" scheme="…/dataservices/scheme" />
//!   <content type="application/xml"><m:properties>
//!     <d:PartitionKey>…</d:PartitionKey> <d:RowKey>…</d:RowKey>
//!     <d:Timestamp m:type="Edm.DateTime">…</d:Timestamp> <d:Custom m:type="Edm.Int32">…</d:Custom>
//!   </m:properties></content>
//! </entry>
//! ```
//!
//! Written without indentation. Every non-string property carries `m:type`; Doubles
//! are written as in JSON (`5.0`, `1e300`) with XML Schema's `NaN`, `INF`, `-INF`;
//! DateTimes as in JSON (Timestamp with seven fractional digits). A string with
//! leading or trailing whitespace gets `xml:space="preserve"`, so XML readers that drop
//! insignificant whitespace keep it. Carriage returns are written as `&#xD;` (a literal
//! one would be read back as a line feed); other characters XML 1.0 cannot carry
//! literally (C0 controls but tab and line feed) are written as character references,
//! which lenient readers (ours included) read back. A `$select` projection writes the
//! selected properties only, a missing one as `<d:Name m:null="true" />`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use std::io::Write as _;

use super::{ATOM_NS, D_NS, M_NS, SCHEME};
use crate::odata::render::{entity_path, projection};
use crate::odata::Urls;
use aztable_model::edm::write_guid;
use aztable_model::names::validate_property_name;
use aztable_model::{EdmValue, Entity, Ticks};

const DECL: &str = r#"<?xml version="1.0" encoding="utf-8" standalone="yes"?>"#;

/// Appends `s` as XML text (`in_attribute`: also quotes and whitespace as references).
fn push_escaped(out: &mut Vec<u8>, s: &str, in_attribute: bool) {
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let reference: &[u8] = match b {
            b'&' => b"&amp;",
            b'<' => b"&lt;",
            b'>' => b"&gt;",
            b'"' if in_attribute => b"&quot;",
            b'\t' if in_attribute => b"&#x9;",
            b'\n' if in_attribute => b"&#xA;",
            b'\r' => b"&#xD;",
            b'\t' | b'\n' => continue,
            0..=0x1F => {
                out.extend_from_slice(&bytes[start..i]);
                // ok to ignore: writing into a Vec cannot fail
                let _ = write!(out, "&#x{b:X};");
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(reference);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

fn text(out: &mut Vec<u8>, s: &str) {
    push_escaped(out, s, false);
}

fn attr(out: &mut Vec<u8>, name: &str, value: &str) {
    out.push(b' ');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"=\"");
    push_escaped(out, value, true);
    out.push(b'"');
}

/// The namespace declarations and `xml:base` of a document's root element.
fn root_attrs(out: &mut Vec<u8>, urls: &Urls<'_>) {
    attr(out, "xml:base", &format!("{}/", urls.base.trim_end_matches('/')));
    attr(out, "xmlns", ATOM_NS);
    attr(out, "xmlns:d", D_NS);
    attr(out, "xmlns:m", M_NS);
}

/// `<id>…</id><title type="text" /><updated>…</updated><author><name /></author>`
fn head(out: &mut Vec<u8>, id: &str, now: Ticks) {
    out.extend_from_slice(b"<id>");
    text(out, id);
    out.extend_from_slice(b"</id><title type=\"text\" /><updated>");
    out.extend_from_slice(now.to_rfc3339_7().as_bytes());
    out.extend_from_slice(b"</updated><author><name /></author>");
}

fn link(out: &mut Vec<u8>, rel: &str, title: &str, href: &str) {
    out.extend_from_slice(b"<link");
    attr(out, "rel", rel);
    attr(out, "title", title);
    attr(out, "href", href);
    out.extend_from_slice(b" />");
}

fn category(out: &mut Vec<u8>, term: &str) {
    out.extend_from_slice(b"<category");
    attr(out, "term", term);
    attr(out, "scheme", SCHEME);
    out.extend_from_slice(b" />");
}

/// One property element; `edm_type` is written as `m:type` when given.
fn property(out: &mut Vec<u8>, name: &str, edm_type: Option<&str>, value: impl FnOnce(&mut Vec<u8>)) {
    out.extend_from_slice(b"<d:");
    out.extend_from_slice(name.as_bytes());
    if let Some(t) = edm_type {
        attr(out, "m:type", t);
    }
    out.push(b'>');
    value(out);
    out.extend_from_slice(b"</d:");
    out.extend_from_slice(name.as_bytes());
    out.push(b'>');
}

fn string_property(out: &mut Vec<u8>, name: &str, s: &str) {
    let padded =
        s.starts_with(|c: char| c.is_ascii_whitespace()) || s.ends_with(|c: char| c.is_ascii_whitespace());
    if !padded {
        return property(out, name, None, |out| text(out, s));
    }
    out.extend_from_slice(b"<d:");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b" xml:space=\"preserve\">");
    text(out, s);
    out.extend_from_slice(b"</d:");
    out.extend_from_slice(name.as_bytes());
    out.push(b'>');
}

/// Writes one custom property.
fn custom_property(out: &mut Vec<u8>, name: &str, v: &EdmValue) {
    let t = Some(v.edm_type().as_str());
    match v {
        EdmValue::String(s) => string_property(out, name, s),
        EdmValue::Int32(i) => property(out, name, t, |out| {
            let _ = write!(out, "{i}"); // ok to ignore: writing into a Vec cannot fail
        }),
        EdmValue::Int64(i) => property(out, name, t, |out| {
            let _ = write!(out, "{i}"); // ok to ignore: writing into a Vec cannot fail
        }),
        EdmValue::Double(d) => property(out, name, t, |out| write_double(out, *d)),
        EdmValue::Boolean(b) => {
            property(out, name, t, |out| out.extend_from_slice(if *b { b"true" } else { b"false" }))
        }
        EdmValue::DateTime(ticks) => property(out, name, t, |out| ticks.write_rfc3339_trimmed(out)),
        EdmValue::Guid(g) => property(out, name, t, |out| write_guid(out, g)),
        EdmValue::Binary(b) => {
            property(out, name, t, |out| out.extend_from_slice(STANDARD.encode(b).as_bytes()))
        }
    }
}

/// A Double in XML Schema's lexical space: `NaN`, `INF`, `-INF`, or the shortest
/// decimal that reads back exactly (`5.0`, `1e300`).
fn write_double(out: &mut Vec<u8>, d: f64) {
    if d.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if d.is_infinite() {
        out.extend_from_slice(if d > 0.0 { b"INF" } else { b"-INF" });
    } else {
        // ok to ignore: serializing a finite f64 into a Vec cannot fail
        let _ = serde_json::to_writer(&mut *out, &d);
    }
}

/// Writes `<entry m:etag=…>…</entry>` for one entity; `root` adds the namespace
/// declarations and `xml:base` (a single entry rather than one inside a feed).
fn entity_entry(
    out: &mut Vec<u8>,
    e: &Entity,
    table: &str,
    select: Option<&[&str]>,
    urls: &Urls<'_>,
    now: Ticks,
    root: bool,
) {
    let path = entity_path(table, &e.partition_key, &e.row_key);
    out.extend_from_slice(b"<entry");
    if root {
        root_attrs(out, urls);
    }
    attr(out, "m:etag", &e.etag());
    out.push(b'>');
    head(out, &format!("{}/{path}", urls.base.trim_end_matches('/')), now);
    link(out, "edit", table, &path);
    category(out, &format!("{}.{table}", urls.account));
    out.extend_from_slice(b"<content type=\"application/xml\"><m:properties>");
    let wanted = |n: &str| select.is_none_or(|p| p.contains(&n));
    if wanted("PartitionKey") {
        string_property(out, "PartitionKey", &e.partition_key);
    }
    if wanted("RowKey") {
        string_property(out, "RowKey", &e.row_key);
    }
    if wanted("Timestamp") {
        property(out, "Timestamp", Some("Edm.DateTime"), |out| {
            out.extend_from_slice(e.timestamp.to_rfc3339_7().as_bytes());
        });
    }
    match select {
        None => {
            for (name, v) in &e.properties {
                custom_property(out, name, v);
            }
        }
        Some(p) => {
            for name in p.iter().filter(|n| !matches!(**n, "PartitionKey" | "RowKey" | "Timestamp")) {
                match e.get(name) {
                    Some(v) => custom_property(out, name, v),
                    None if validate_property_name(name).is_ok() => {
                        out.extend_from_slice(b"<d:");
                        out.extend_from_slice(name.as_bytes());
                        out.extend_from_slice(b" m:null=\"true\" />");
                    }
                    None => {}
                }
            }
        }
    }
    out.extend_from_slice(b"</m:properties></content></entry>");
}

/// A single entity as an Atom entry document (insert echo, point query).
pub fn entity_response(
    e: &Entity,
    table: &str,
    select: Option<&[String]>,
    urls: &Urls<'_>,
    now: Ticks,
) -> Vec<u8> {
    let p = projection(select);
    let mut out = Vec::with_capacity(1024);
    out.extend_from_slice(DECL.as_bytes());
    entity_entry(&mut out, e, table, p.as_deref(), urls, now, true);
    out
}

/// Opens a feed document: `<feed …><id/><title/><updated/><link rel="self"/>`.
fn open_feed(out: &mut Vec<u8>, title: &str, urls: &Urls<'_>, now: Ticks) {
    out.extend_from_slice(DECL.as_bytes());
    out.extend_from_slice(b"<feed");
    root_attrs(out, urls);
    out.extend_from_slice(b"><id>");
    text(out, &format!("{}/{title}", urls.base.trim_end_matches('/')));
    out.extend_from_slice(b"</id><title type=\"text\">");
    text(out, title);
    out.extend_from_slice(b"</title><updated>");
    out.extend_from_slice(now.to_rfc3339_7().as_bytes());
    out.extend_from_slice(b"</updated>");
    link(out, "self", title, title);
}

/// A Query Entities feed: one entry per entity.
pub fn entity_feed(
    entities: &[Entity],
    table: &str,
    select: Option<&[String]>,
    urls: &Urls<'_>,
    now: Ticks,
) -> Vec<u8> {
    let p = projection(select);
    let mut out = Vec::with_capacity(512 + entities.len() * 1024);
    open_feed(&mut out, table, urls, now);
    for e in entities {
        entity_entry(&mut out, e, table, p.as_deref(), urls, now, false);
    }
    out.extend_from_slice(b"</feed>");
    out
}

fn table_entry(out: &mut Vec<u8>, name: &str, urls: &Urls<'_>, now: Ticks, root: bool) {
    let path = format!("Tables('{}')", name.replace('\'', "''"));
    out.extend_from_slice(b"<entry");
    if root {
        root_attrs(out, urls);
    }
    out.push(b'>');
    head(out, &format!("{}/{path}", urls.base.trim_end_matches('/')), now);
    link(out, "edit", "Tables", &path);
    category(out, &format!("{}.Tables", urls.account));
    out.extend_from_slice(b"<content type=\"application/xml\"><m:properties>");
    string_property(out, "TableName", name);
    out.extend_from_slice(b"</m:properties></content></entry>");
}

/// One table as an Atom entry document (Create Table echo, Get Table).
pub fn table_response(name: &str, urls: &Urls<'_>, now: Ticks) -> Vec<u8> {
    let mut out = Vec::with_capacity(1024);
    out.extend_from_slice(DECL.as_bytes());
    table_entry(&mut out, name, urls, now, true);
    out
}

/// The Query Tables feed.
pub fn table_feed(names: &[String], urls: &Urls<'_>, now: Ticks) -> Vec<u8> {
    let mut out = Vec::with_capacity(512 + names.len() * 640);
    open_feed(&mut out, "Tables", urls, now);
    for n in names {
        table_entry(&mut out, n, urls, now, false);
    }
    out.extend_from_slice(b"</feed>");
    out
}

/// The service's XML error:
/// `<error xmlns="…/metadata"><code>X</code><message xml:lang="en-US">msg\nRequestId:<id>\nTime:<time></message></error>`.
pub fn error_body(code: &str, message: &str, request_id: &str, time: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + message.len());
    out.extend_from_slice(DECL.as_bytes());
    out.extend_from_slice(b"<error");
    attr(&mut out, "xmlns", M_NS);
    out.extend_from_slice(b"><code>");
    text(&mut out, code);
    out.extend_from_slice(b"</code><message xml:lang=\"en-US\">");
    text(&mut out, &format!("{message}\nRequestId:{request_id}\nTime:{time}"));
    out.extend_from_slice(b"</message></error>");
    out
}
