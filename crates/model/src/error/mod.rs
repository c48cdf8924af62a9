//! The wire error: an [`ErrorCode`] plus a message. Each layer converts its own error
//! into [`ApiError`] beside that error (the engine's in `aztable_engine::service::error`,
//! the parsers' in their modules), so this crate depends on no layer; the server's
//! `http::error_response` renders it, the one place errors become responses.

mod codes;

pub use codes::ErrorCode;
use std::borrow::Cow;

/// An error as the client will see it: code, status (from the code) and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: Cow<'static, str>,
    /// Extra detail sent as `AuthenticationErrorDetail` on 403s.
    pub auth_detail: Option<String>,
    /// Answer with `Connection: close` (the request body was not fully read).
    pub close_connection: bool,
}

impl ApiError {
    /// An error with the code's default message.
    pub fn new(code: ErrorCode) -> Self {
        ApiError {
            code,
            message: Cow::Borrowed(code.default_message()),
            auth_detail: None,
            close_connection: false,
        }
    }

    /// An error with a specific message.
    pub fn with_message(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        ApiError { code, message: message.into(), auth_detail: None, close_connection: false }
    }

    /// Returns the HTTP status for this error.
    pub fn status(&self) -> u16 {
        self.code.status()
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for ApiError {}

impl From<crate::names::NameError> for ApiError {
    fn from(e: crate::names::NameError) -> Self {
        use crate::names::NameError::*;
        match e {
            InvalidTableName => ApiError::with_message(
                ErrorCode::InvalidResourceName,
                "The specifed resource name contains invalid characters.",
            ),
            TableNameLength => ApiError::with_message(
                ErrorCode::OutOfRangeInput,
                "The specified resource name length is not within the permissible limits.",
            ),
            KeyTooLarge => ApiError::with_message(
                ErrorCode::OutOfRangeInput,
                "The 'PartitionKey' or 'RowKey' parameter exceeds the maximum allowed key size (1KiB).",
            ),
            KeyInvalidChar => ApiError::with_message(
                ErrorCode::InvalidInput,
                "The 'PartitionKey' or 'RowKey' contains an invalid character.",
            ),
            PropertyNameInvalid => ApiError::new(ErrorCode::PropertyNameInvalid),
            PropertyNameTooLong => ApiError::new(ErrorCode::PropertyNameTooLong),
        }
    }
}
