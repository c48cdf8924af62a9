//! The error a malformed `$filter` produces, and its conversion into the wire error
//! (400 `InvalidInput`).

use aztable_model::error::{ApiError, ErrorCode};

/// Why a `$filter` was refused, and where.
///
/// `position` is the 0-based index, counted in Unicode scalar values (characters, not
/// bytes), of the character where the problem was found in the (already URL-decoded)
/// filter text. For "unexpected end of input" it is the length of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    pub position: usize,
    pub message: String,
}

impl FilterError {
    /// Builds an error at a byte offset of `input`, converting the offset into a
    /// character index. Offsets past the end or inside a character are clamped.
    pub(crate) fn at_byte(input: &str, byte: usize, message: impl Into<String>) -> Self {
        let byte = byte.min(input.len());
        let position = input.char_indices().take_while(|(i, _)| *i < byte).count();
        FilterError { position, message: message.into() }
    }
}

impl std::fmt::Display for FilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (at position {}).", self.message, self.position)
    }
}

impl std::error::Error for FilterError {}

/// The service's message for an invalid query condition; the detail follows it.
pub const INVALID_QUERY_MESSAGE: &str = "The query condition specified in the request is invalid.";

impl From<FilterError> for ApiError {
    fn from(e: FilterError) -> Self {
        ApiError::with_message(ErrorCode::InvalidInput, format!("{INVALID_QUERY_MESSAGE} {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_counts_characters() {
        let e = FilterError::at_byte("é eq 1", 3, "x");
        assert_eq!(e.position, 2);
        let e = FilterError::at_byte("abc", 99, "x");
        assert_eq!(e.position, 3);
    }

    #[test]
    fn converts_to_invalid_input() {
        let api: ApiError = FilterError { position: 4, message: "Unexpected 'AND'".into() }.into();
        assert_eq!(api.code, ErrorCode::InvalidInput);
        assert_eq!(api.status(), 400);
        assert_eq!(
            api.message,
            "The query condition specified in the request is invalid. Unexpected 'AND' (at position 4)."
        );
    }
}
