//! The CORS preflight handler (Preflight Table Request, `OPTIONS`).

use super::super::ctx::RequestCtx;
use super::super::message::Response;
use super::super::request::{header, Req};
use super::super::response::{append_headers, build};
use super::super::AppState;
use aztable_model::error::{ApiError, ErrorCode};
use aztable_wire::settings::cors::{match_preflight, preflight_headers};
use http::StatusCode;

/// Preflight Table Request (`OPTIONS`, anonymous): 200 with the `Access-Control-*`
/// headers when one of the account's CORS rules accepts the origin, method and request
/// headers; 403 `CorsPreflightFailure` otherwise (also when CORS is off); 400 when
/// `Origin` or `Access-Control-Request-Method` is missing. Nothing but the rules is looked
/// up, so the path need not name an existing table.
pub(super) fn preflight(state: &AppState, ctx: &RequestCtx, req: &Req) -> Result<Response, ApiError> {
    let Some(origin) = header(&req.headers, "origin") else {
        return Err(ApiError::with_message(
            ErrorCode::InvalidInput,
            "A CORS preflight request must carry an Origin header.",
        ));
    };
    let Some(method) = header(&req.headers, "access-control-request-method") else {
        return Err(ApiError::with_message(
            ErrorCode::InvalidInput,
            "A CORS preflight request must carry an Access-Control-Request-Method header.",
        ));
    };
    let request_headers = header(&req.headers, "access-control-request-headers");
    let props = state.service.access().get_service_properties(&ctx.account)?;
    let rule = match_preflight(&props.cors, origin, method, request_headers)
        .ok_or_else(|| ApiError::new(ErrorCode::CorsPreflightFailure))?;
    let mut resp = build(StatusCode::OK, &[], Vec::new());
    append_headers(&mut resp, &preflight_headers(rule, origin, method, request_headers));
    Ok(resp)
}
