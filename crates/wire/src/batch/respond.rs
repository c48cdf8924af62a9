//! The parts of a `$batch` answer, built from what each operation came to: a written or
//! deleted entity, a point query's entity, or an error (with the `"<index>:"` prefix of
//! the failing operation). [`super::write`] then lays the parts out as the 202 body.
//! Pure: the caller passes the request id and the time the error bodies carry.

use super::{prefixed_message, BatchError, OpReply, OpResult, PartHeader};
use crate::odata::{self, Format, Metadata, Prefer, Urls};
use aztable_model::error::ApiError;
use aztable_model::{Entity, Ticks};

/// What every error part's body names besides the error: the request id and the time.
#[derive(Debug, Clone, Copy)]
pub struct ErrorStamp<'a> {
    pub request_id: &'a str,
    /// RFC 3339 with seven fractional digits, as the service's error bodies carry it.
    pub time: &'a str,
    /// Write the service's XML error (the operation is answered in Atom) rather than
    /// the OData JSON one.
    pub xml: bool,
}

/// Headers every operation part carries (`DataServiceVersion` 1.0 in Atom, as the
/// service's Atom-era clients expect).
/// Room is made for the most a part adds (an insert's five).
fn part_headers(atom: bool) -> Vec<PartHeader> {
    let mut headers = Vec::with_capacity(8);
    headers.extend([
        ("X-Content-Type-Options", "nosniff".into()),
        ("Cache-Control", "no-cache".into()),
        ("DataServiceVersion", if atom { "1.0;" } else { "3.0;" }.into()),
    ]);
    headers
}

/// A part carrying the error body (OData JSON, or XML under Atom).
fn error_body_part(stamp: &ErrorStamp<'_>, status: u16, code: &str, message: &str) -> OpResult {
    let mut headers = part_headers(stamp.xml);
    let (content_type, body) = match stamp.xml {
        true => (
            odata::atom::ERROR_CONTENT_TYPE,
            odata::atom::error_body(code, message, stamp.request_id, stamp.time),
        ),
        false => {
            (Metadata::Minimal.content_type(), odata::error_body(code, message, stamp.request_id, stamp.time))
        }
    };
    headers.push(("Content-Type", content_type.into()));
    OpResult { status, headers, body }
}

/// The part for operation `index` that failed with `err`.
pub fn op_error_part(stamp: &ErrorStamp<'_>, index: usize, err: &ApiError) -> OpResult {
    error_body_part(stamp, err.status(), err.code.as_str(), &prefixed_message(index, &err.message))
}

/// The part for the change-set operation that failed with `err`. An insert sent with
/// `Prefer` still says `Preference-Applied` in its error part: the Go SDK's recordings
/// of the real service (`TestBatchError_storage`: 409 `EntityAlreadyExists`;
/// `TestBatchErrorHandleResponse_storage`: 400 `InvalidDuplicateRow`) carry
/// `Preference-Applied: return-no-content` on the failing insert's part.
pub fn changeset_error_part(stamp: &ErrorStamp<'_>, op: &OpReply, err: &ApiError) -> OpResult {
    let mut part = op_error_part(stamp, op.index, err);
    if let Some(p) = op.prefer.filter(|_| op.insert) {
        // the service's order: after Cache-Control, before DataServiceVersion
        let at =
            part.headers.iter().position(|&(n, _)| n == "DataServiceVersion").unwrap_or(part.headers.len());
        part.headers.insert(at, ("Preference-Applied", p.applied().into()));
    }
    part
}

/// The part for a batch the parser refused inside the 202 (its message is prefixed
/// already when the error belongs to one operation).
pub fn parse_error_part(stamp: &ErrorStamp<'_>, e: &BatchError) -> OpResult {
    error_body_part(stamp, e.status(), e.code().as_str(), &e.message())
}

/// The 200 part of a query batch's point query (`now` is Atom's `updated`).
pub fn entity_part(e: &Entity, table: &str, format: Format, urls: &Urls<'_>, now: Ticks) -> OpResult {
    let mut headers = part_headers(format == Format::Atom);
    headers.push(("Content-Type", format.entry_content_type().into()));
    headers.push(("ETag", e.etag().into()));
    OpResult { status: 200, headers, body: format.entity(e, table, None, urls, now) }
}

/// The part for a change-set operation that succeeded: 204 for a delete, 204 with the
/// ETag for an update or merge, and for an insert 201 with the entity (or 204 with
/// `Prefer: return-no-content`), with `Location` and `DataServiceId`; in the
/// operation's own format (its `Accept`), `now` Atom's `updated`.
pub fn written_part(
    op: &OpReply,
    table: &str,
    written: Option<&Entity>,
    urls: &Urls<'_>,
    now: Ticks,
) -> OpResult {
    let format = op.format;
    let mut headers = part_headers(format == Format::Atom);
    let Some(e) = written else {
        return OpResult { status: 204, headers, body: Vec::new() };
    };
    if !op.insert {
        headers.push(("ETag", e.etag().into()));
        return OpResult { status: 204, headers, body: Vec::new() };
    }
    let location = odata::entity_url(urls.base, table, &e.partition_key, &e.row_key);
    headers.push(("Location", location.clone().into()));
    headers.push(("DataServiceId", location.into()));
    headers.push(("ETag", e.etag().into()));
    if let Some(p) = op.prefer {
        headers.push(("Preference-Applied", p.applied().into()));
        if p == Prefer::ReturnNoContent {
            return OpResult { status: 204, headers, body: Vec::new() };
        }
    }
    headers.push(("Content-Type", format.entry_content_type().into()));
    OpResult { status: 201, headers, body: format.entity(e, table, None, urls, now) }
}
