//! The one place an [`ApiError`] becomes a wire response: the OData JSON error body
//! (`odata.error` with code and message), or the service's XML error where the request
//! is answered in Atom ([`RequestCtx::xml_errors`]), with the code's status, and the code repeated
//! in `x-ms-error-code` (the SDKs read the body; the header is harmless and helps
//! tools that read headers).

use super::ctx::RequestCtx;
use super::message::Response;
use super::response::build;
use aztable_model::error::ApiError;
use aztable_wire::odata::{self, Metadata};
use http::StatusCode;

/// Renders an error for the request described by `ctx`.
pub(super) fn render(err: &ApiError, ctx: &RequestCtx) -> Response {
    let time = aztable_model::time::wall_now().to_rfc3339_7();
    let mut message = err.message.to_string();
    if let Some(detail) = &err.auth_detail {
        message.push('\n');
        message.push_str("AuthenticationErrorDetail:");
        message.push_str(detail);
    }
    let (content_type, body) = match ctx.xml_errors {
        true => (
            odata::atom::ERROR_CONTENT_TYPE,
            odata::atom::error_body(err.code.as_str(), &message, &ctx.request_id, &time),
        ),
        false => (
            Metadata::Minimal.content_type(),
            odata::error_body(err.code.as_str(), &message, &ctx.request_id, &time),
        ),
    };
    let status = StatusCode::from_u16(err.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut headers =
        vec![("content-type", content_type.to_owned()), ("x-ms-error-code", err.code.as_str().to_owned())];
    if err.close_connection {
        headers.push(("connection", "close".to_owned()));
    }
    build(status, &headers, body)
}
