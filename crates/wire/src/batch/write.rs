//! Writing `$batch` response bodies (sent with status 202) in the service's layout:
//!
//! ```text
//! --batchresponse_B
//! Content-Type: multipart/mixed; boundary=changesetresponse_C
//!
//! --changesetresponse_C
//! Content-Type: application/http
//! Content-Transfer-Encoding: binary
//!
//! HTTP/1.1 204 No Content
//! Content-ID: 1
//! ...headers...
//!
//! <body>
//! --changesetresponse_C--
//! --batchresponse_B--
//! ```
//!
//! All line ends are CRLF. The JS SDK splits on `--changesetresponse_` and reads the
//! status with `HTTP/1.1 (\d+)`; Python parses each part with `http.client`. Each part
//! is written exactly as given: status line, `Content-ID` (when given), the result's
//! headers in order, a blank line, the body. No `Content-Length` is added (the service
//! sends none inside parts). CR and LF inside a `Content-ID` or a header value made
//! from the request become spaces (names and borrowed values are constants).

use std::borrow::Cow;

/// One header of a part: its name (one of the service's, so a constant) and its value,
/// borrowed when it is a constant too. A change set of 100 inserts writes some 800 of
/// them, and allocating each name and value was a tenth of its answer's cost.
pub type PartHeader = (&'static str, Cow<'static, str>);

/// The outcome of one operation, as it goes into its part.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpResult {
    pub status: u16,
    pub headers: Vec<PartHeader>,
    pub body: Vec<u8>,
}

const CRLF: &str = "\r\n";

/// Writes the 202 response body for a successful change set (one part per operation,
/// in order) and returns (content type, body).
pub fn write_success(results: &[(Option<String>, OpResult)]) -> (String, Vec<u8>) {
    let parts: Vec<(Option<&str>, &OpResult)> = results.iter().map(|(id, r)| (id.as_deref(), r)).collect();
    changeset_response(&new_boundary("batchresponse"), &new_boundary("changesetresponse"), &parts)
}

/// Writes the 202 response body for a failed change set: a single part with the
/// failing operation's status, `Content-ID` and body.
pub fn write_failure(failed_content_id: Option<&str>, result: &OpResult) -> (String, Vec<u8>) {
    changeset_response(
        &new_boundary("batchresponse"),
        &new_boundary("changesetresponse"),
        &[(failed_content_id, result)],
    )
}

/// Writes the response for a query batch: a single `application/http` part, no change
/// set. Put a `Content-ID` into `result.headers` to echo one (the service does).
pub fn write_query(result: &OpResult) -> (String, Vec<u8>) {
    query_response(&new_boundary("batchresponse"), result)
}

/// A fresh boundary `<prefix>_<uuid v4>`.
fn new_boundary(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4())
}

/// The content type announcing `boundary`.
fn mixed(boundary: &str) -> String {
    format!("multipart/mixed; boundary={boundary}")
}

/// A change set response with the given parts, under fixed boundaries.
pub(super) fn changeset_response(
    batch: &str,
    changeset: &str,
    parts: &[(Option<&str>, &OpResult)],
) -> (String, Vec<u8>) {
    let delimiter = changeset.len() + 6;
    let size: usize = parts.iter().map(|(id, r)| delimiter + part_size(*id, r)).sum();
    let mut out = Vec::with_capacity(size + 2 * batch.len() + changeset.len() + 64);
    push_delimiter(&mut out, batch, "");
    push_header(&mut out, "Content-Type", &mixed(changeset));
    out.extend_from_slice(CRLF.as_bytes());
    for (content_id, result) in parts {
        push_delimiter(&mut out, changeset, "");
        push_part(&mut out, *content_id, result);
    }
    push_delimiter(&mut out, changeset, "--");
    push_delimiter(&mut out, batch, "--");
    (mixed(batch), out)
}

/// A query response (one top-level part) under a fixed boundary.
pub(super) fn query_response(batch: &str, result: &OpResult) -> (String, Vec<u8>) {
    let mut out = Vec::with_capacity(result.body.len() + 512);
    push_delimiter(&mut out, batch, "");
    push_part(&mut out, None, result);
    push_delimiter(&mut out, batch, "--");
    (mixed(batch), out)
}

/// The bytes [`push_part`] writes for this part (headers' CR and LF become spaces one
/// for one, so cleaning keeps the size): a change set's answer is sized once. With a
/// guess per part, a change set of 100 inserts (some 500 bytes of headers each) grew
/// its answer six times, and copying it was 2 % of the change set's instructions.
pub(super) fn part_size(content_id: Option<&str>, result: &OpResult) -> usize {
    const FIXED: usize =
        "Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 ".len()
            + " \r\n\r\n\r\n".len();
    let digits = result.status.checked_ilog10().map_or(1, |d| d as usize + 1);
    let id = content_id.map_or(0, |id| "Content-ID: \r\n".len() + id.len());
    let headers: usize = result.headers.iter().map(|(n, v)| n.len() + v.len() + 4).sum();
    FIXED + digits + reason_phrase(result.status).len() + id + headers + result.body.len()
}

/// One `application/http` part, ending with the CRLF that precedes the next delimiter.
/// Written piece by piece, with no `format!`: a change set of 100 inserts writes 100
/// parts, and formatting them was a tenth of the batch's own work.
pub(super) fn push_part(out: &mut Vec<u8>, content_id: Option<&str>, result: &OpResult) {
    out.extend_from_slice(
        b"Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 ",
    );
    let status = result.status;
    match status {
        100..=999 => out.extend_from_slice(&[
            b'0' + (status / 100) as u8,
            b'0' + (status / 10 % 10) as u8,
            b'0' + (status % 10) as u8,
        ]),
        _ => out.extend_from_slice(status.to_string().as_bytes()),
    }
    out.push(b' ');
    push_line(out, reason_phrase(status));
    if let Some(id) = content_id {
        push_header(out, "Content-ID", id);
    }
    for (name, value) in &result.headers {
        // names and borrowed values are the service's constants; a value made from the
        // request (a URL with its keys, an ETag) is cleaned
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        match value {
            Cow::Borrowed(constant) => out.extend_from_slice(constant.as_bytes()),
            Cow::Owned(made) => push_clean(out, made),
        }
        out.extend_from_slice(CRLF.as_bytes());
    }
    out.extend_from_slice(CRLF.as_bytes());
    out.extend_from_slice(&result.body);
    out.extend_from_slice(CRLF.as_bytes());
}

fn push_line(out: &mut Vec<u8>, line: &str) {
    out.extend_from_slice(line.as_bytes());
    out.extend_from_slice(CRLF.as_bytes());
}

/// `--{boundary}{end}` and a line break.
fn push_delimiter(out: &mut Vec<u8>, boundary: &str, end: &str) {
    out.extend_from_slice(b"--");
    out.extend_from_slice(boundary.as_bytes());
    out.extend_from_slice(end.as_bytes());
    out.extend_from_slice(CRLF.as_bytes());
}

/// Writes `Name: value`, with CR and LF replaced so a value cannot end the header block.
fn push_header(out: &mut Vec<u8>, name: &str, value: &str) {
    push_clean(out, name);
    out.extend_from_slice(b": ");
    push_clean(out, value);
    out.extend_from_slice(CRLF.as_bytes());
}

/// `s`, CR and LF replaced by spaces.
fn push_clean(out: &mut Vec<u8>, s: &str) {
    match has_line_break(s.as_bytes()) {
        true => out.extend_from_slice(s.replace(['\r', '\n'], " ").as_bytes()),
        false => out.extend_from_slice(s.as_bytes()),
    }
}

/// The reason phrase the service writes after a status code: http's canonical
/// phrases, except the two where the service keeps the older RFC 2616 wording.
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        413 => "Request Entity Too Large",
        416 => "Requested Range Not Satisfiable",
        _ => http::StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or("Unknown"),
    }
}

/// Whether `bytes` holds a CR or an LF, eight bytes at a time (header values are URLs
/// of a hundred bytes and more: memchr's set-up, or a byte loop, cost more).
fn has_line_break(bytes: &[u8]) -> bool {
    use crate::swar::{any, eq_bits};
    any(bytes, |w| eq_bits(w, b'\r') | eq_bits(w, b'\n'), |b| b == b'\r' || b == b'\n')
}
