//! Handlers for service-level requests: CORS preflight.

use super::super::ctx::header;
use super::super::dispatch::Req;
use crate::error::{ApiError, ErrorCode};
use axum::response::Response;

/// Preflight Table Request (`OPTIONS`). No CORS rules can be configured yet, so every
/// well-formed preflight is refused the way the service refuses one with CORS off.
pub fn preflight(req: &Req) -> Result<Response, ApiError> {
    if header(&req.headers, "origin").is_none() {
        return Err(ApiError::with_message(
            ErrorCode::InvalidInput,
            "A CORS preflight request must carry an Origin header.",
        ));
    }
    if header(&req.headers, "access-control-request-method").is_none() {
        return Err(ApiError::with_message(
            ErrorCode::InvalidInput,
            "A CORS preflight request must carry an Access-Control-Request-Method header.",
        ));
    }
    Err(ApiError::new(ErrorCode::CorsPreflightFailure))
}
