//! Fault injection at the front end ([`crate::fault`]): asks the injector about each
//! routed, authenticated data request before its handler runs, answers 503
//! `ServerBusy` in place of the handler, or 500 `OperationTimedOut` in place of a
//! successful write's answer. Without fault flags this is one `Option` check.

use super::message::Response;
use super::request::{header, Req};
use crate::fault::{Fault, Faults};
use aztable_model::error::{ApiError, ErrorCode};
use aztable_wire::endpoint::Endpoint;

/// The table a request addresses, if its URL names one: the table operations'
/// `Tables('…')` as well as every operation inside a table.
fn url_table(endpoint: &Endpoint) -> Option<&str> {
    match endpoint {
        Endpoint::GetTable { table } | Endpoint::DeleteTable { table } => Some(table),
        other => other.url_table(),
    }
}

/// The table of a batch's first operation (parsed again only when `--faultTables`
/// needs it; an unparseable batch names none).
fn batch_table(req: &Req) -> Option<String> {
    let content_type = header(&req.headers, "content-type").unwrap_or("");
    let parsed =
        aztable_wire::batch::parse(content_type, &req.body, &aztable_wire::batch::Limits::default()).ok()?;
    parsed.ops.first().and_then(|op| url_table(&op.endpoint)).map(str::to_owned)
}

/// Before the handler: `Err` (503) when the request is to fail now, `Ok(true)` when its
/// answer is to be replaced by [`after`].
pub(super) fn before(faults: Option<&Faults>, endpoint: &Endpoint, req: &Req) -> Result<bool, ApiError> {
    let Some(faults) = faults else { return Ok(false) };
    // a table named in the body (a batch's first operation, Create Table's TableName)
    let batch;
    let table = match endpoint {
        Endpoint::Batch if faults.filters_tables() => {
            batch = batch_table(req);
            batch.as_deref()
        }
        Endpoint::CreateTable if faults.filters_tables() => {
            batch = aztable_wire::odata::parse_table_name(&req.body)
                .or_else(|_| aztable_wire::odata::atom::parse_table_name(&req.body))
                .ok();
            batch.as_deref()
        }
        other => url_table(other),
    };
    match faults.decide(endpoint.name(), table) {
        Fault::None => Ok(false),
        Fault::Busy => Err(ApiError::new(ErrorCode::ServerBusy)),
        Fault::AfterWrite => Ok(true),
    }
}

/// After the handler of a request [`before`] armed: a successful answer is to become
/// 500 `OperationTimedOut` (the write stays applied), the error returned; an error stays
/// as it was. (The answer is only looked at: it is not moved through here.)
pub(super) fn after(handled: Result<&Response, &ApiError>) -> Result<(), ApiError> {
    if handled.is_ok_and(|resp| resp.status().is_success()) {
        return Err(ApiError::with_message(
            ErrorCode::OperationTimedOut,
            "Operation could not be completed within the specified time.",
        ));
    }
    Ok(())
}
