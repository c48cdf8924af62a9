//! Access-control handlers: Get/Set Table ACL, Get/Set Table Service Properties and Get
//! Table Service Stats. These are XML APIs (`application/xml` bodies, no OData).
//!
//! Errors keep the OData JSON body every other operation answers with (plus
//! `x-ms-error-code`), not the service's XML error: both SDKs read it for these operations
//! (Python `_decode_error` parses a JSON `odata.error` or any XML `code`/`message`; JS
//! core-client parses by the response `Content-Type` and its default error mapper is the
//! same `odata.error` shape), and one error renderer stays one.

use super::super::message::Response;
use super::super::request::Req;
use super::super::response::{build, no_content};
use super::super::{ctx::RequestCtx, AppState};
use aztable_model::error::ApiError;
use aztable_wire::settings::acl::{parse_acl, write_acl};
use aztable_wire::settings::service_properties::{self, write_stats};
use http::StatusCode;

fn xml(status: StatusCode, body: Vec<u8>) -> Response {
    build(status, &[("content-type", "application/xml".to_owned())], body)
}

/// Get Table ACL: 200 with `<SignedIdentifiers>`.
pub(super) fn get_table_acl(state: &AppState, ctx: &RequestCtx, table: &str) -> Result<Response, ApiError> {
    let acl = state.service.access().get_table_acl(&ctx.account, table)?;
    Ok(xml(StatusCode::OK, write_acl(&acl)))
}

/// Set Table ACL: replaces the table's stored access policies; 204.
pub(super) fn set_table_acl(
    state: &AppState,
    ctx: &RequestCtx,
    req: &Req,
    table: &str,
) -> Result<Response, ApiError> {
    let acl = parse_acl(&req.body)?;
    state.service.access().set_table_acl(&ctx.account, table, &acl)?;
    Ok(no_content(&[]))
}

/// Get Table Service Properties: 200 with `<StorageServiceProperties>`.
pub(super) fn get_service_properties(state: &AppState, ctx: &RequestCtx) -> Result<Response, ApiError> {
    let props = state.service.access().get_service_properties(&ctx.account)?;
    Ok(xml(StatusCode::OK, props.write()))
}

/// Set Table Service Properties: merges the roots sent; 202 with no body.
pub(super) fn set_service_properties(
    state: &AppState,
    ctx: &RequestCtx,
    req: &Req,
) -> Result<Response, ApiError> {
    let update = service_properties::parse(&req.body)?;
    state.service.access().set_service_properties(&ctx.account, update)?;
    Ok(build(StatusCode::ACCEPTED, &[], Vec::new()))
}

/// Get Table Service Stats: 200 with `<StorageServiceStats>`, on the primary and the
/// secondary endpoint.
pub(super) fn get_service_stats(state: &AppState) -> Result<Response, ApiError> {
    let (status, last_sync) = state.service.access().get_service_stats();
    Ok(xml(StatusCode::OK, write_stats(status, last_sync)))
}
