//! [`BatchError`]: why a `$batch` body was refused, and where the HTTP layer should put
//! the answer ([`ErrorPlacement`]): as a plain error response, or inside a 202.
//!
//! Operation-level messages carry the 0-based index of the failing operation as a
//! prefix (`"3:The specified entity already exists."`), as the service writes them.

use aztable_model::error::{ApiError, ErrorCode};
use std::borrow::Cow;

/// Where the service reports an error of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorPlacement {
    /// A plain error response with the error's status (no 202, no multipart).
    Response,
    /// A 202 whose body is a single top-level `application/http` part carrying the
    /// error (no change set): render with [`super::write_query`].
    BatchPart,
    /// A 202 whose change set response has a single part carrying the error: render
    /// with [`super::write_failure`], passing [`BatchError::content_id`].
    ChangeSetPart,
}

/// A `$batch` request the parser refused. Nothing of the batch may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchError {
    /// The body exceeds [`super::Limits::max_body`]: 413 `RequestBodyTooLarge`.
    BodyTooLarge,
    /// The request's Content-Type is not `multipart/mixed` with a boundary.
    ContentType,
    /// The multipart framing of the batch or of its change set is broken.
    Malformed { detail: &'static str },
    /// The batch (or its change set) holds no operation. The service answers a 202
    /// whose single part is a 400 `InvalidInput` (recorded in azure-core's tests).
    Empty,
    /// More than one change set. The service runs the first and rejects the others;
    /// this emulator rejects the whole batch, so nothing runs.
    MultipleChangeSets,
    /// A query next to other operations, or a write outside a change set.
    QueryNotAlone,
    /// More operations than [`super::Limits::max_ops`] in the change set.
    TooManyOperations { max: usize },
    /// One operation is unusable (framing, request line, verb, URL, routing, or a
    /// rule that spans operations such as one table per batch).
    Operation {
        /// 0-based position of the operation (in the change set, or 0 for a query).
        index: usize,
        /// Its `Content-ID`, if it had one.
        content_id: Option<String>,
        /// Whether it sat inside the change set (placement of the answer).
        in_changeset: bool,
        code: ErrorCode,
        /// Message without the index prefix.
        message: Cow<'static, str>,
    },
}

/// Returns `message` prefixed with the operation index, the way the service reports
/// errors of operations inside a batch: `"<index>:<message>"`.
pub fn prefixed_message(index: usize, message: &str) -> String {
    format!("{index}:{message}")
}

impl BatchError {
    /// Builds an [`BatchError::Operation`] from an error of one operation.
    pub(crate) fn op(
        index: usize,
        content_id: Option<&str>,
        in_changeset: bool,
        code: ErrorCode,
        message: impl Into<Cow<'static, str>>,
    ) -> BatchError {
        BatchError::Operation {
            index,
            content_id: content_id.map(str::to_owned),
            in_changeset,
            code,
            message: message.into(),
        }
    }

    /// Builds an [`BatchError::Operation`] from an [`ApiError`] of one operation.
    pub(crate) fn from_api(index: usize, content_id: Option<&str>, in_changeset: bool, e: ApiError) -> Self {
        BatchError::op(index, content_id, in_changeset, e.code, e.message)
    }

    /// The 0-based index of the operation the error is reported against, if any.
    /// Too many operations is reported against operation 0, as the service does.
    pub fn failed_index(&self) -> Option<usize> {
        match self {
            BatchError::Operation { index, .. } => Some(*index),
            BatchError::TooManyOperations { .. } => Some(0),
            _ => None,
        }
    }

    /// The `Content-ID` of the failing operation, if it had one.
    pub fn content_id(&self) -> Option<&str> {
        match self {
            BatchError::Operation { content_id, .. } => content_id.as_deref(),
            _ => None,
        }
    }

    /// The wire error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            BatchError::BodyTooLarge => ErrorCode::RequestBodyTooLarge,
            BatchError::Operation { code, .. } => *code,
            _ => ErrorCode::InvalidInput,
        }
    }

    /// The HTTP status of the error (of the part, when it is reported inside a 202).
    pub fn status(&self) -> u16 {
        self.code().status()
    }

    /// Where the HTTP layer should report the error.
    pub fn placement(&self) -> ErrorPlacement {
        match self {
            BatchError::BodyTooLarge | BatchError::ContentType | BatchError::Malformed { .. } => {
                ErrorPlacement::Response
            }
            BatchError::Empty | BatchError::MultipleChangeSets | BatchError::QueryNotAlone => {
                ErrorPlacement::BatchPart
            }
            BatchError::TooManyOperations { .. } => ErrorPlacement::ChangeSetPart,
            BatchError::Operation { in_changeset, .. } => {
                if *in_changeset {
                    ErrorPlacement::ChangeSetPart
                } else {
                    ErrorPlacement::BatchPart
                }
            }
        }
    }

    /// The message as the client sees it, with the `"<index>:"` prefix when the
    /// error belongs to one operation.
    pub fn message(&self) -> String {
        let text: Cow<'_, str> = match self {
            BatchError::BodyTooLarge => Cow::Borrowed(ErrorCode::RequestBodyTooLarge.default_message()),
            BatchError::ContentType => Cow::Borrowed(
                "The batch request must have Content-Type multipart/mixed with a boundary parameter.",
            ),
            BatchError::Malformed { detail } => {
                Cow::Owned(format!("The batch request body is not a valid multipart/mixed document: {detail}."))
            }
            BatchError::Empty => Cow::Borrowed("An error occurred while processing this request."),
            BatchError::MultipleChangeSets => Cow::Borrowed(
                "The batch request contains more than one change set; only one change set per batch is supported.",
            ),
            BatchError::QueryNotAlone => Cow::Borrowed(
                "A query operation must be the only operation in its batch, and insert, update and delete \
                 operations must be inside a single change set.",
            ),
            BatchError::TooManyOperations { max } => Cow::Owned(format!(
                "The batch request operation exceeds the maximum {max} changes per change set."
            )),
            BatchError::Operation { message, .. } => Cow::Borrowed(message.as_ref()),
        };
        match self.failed_index() {
            Some(i) => prefixed_message(i, &text),
            None => text.into_owned(),
        }
    }
}

impl std::fmt::Display for BatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code().as_str(), self.message())
    }
}

impl std::error::Error for BatchError {}

impl From<BatchError> for ApiError {
    fn from(e: BatchError) -> Self {
        ApiError::with_message(e.code(), e.message())
    }
}
