//! The checks every entity body passes whatever its wire format (JSON or Atom): the
//! size of one value, the number of properties and the size of the whole entity. The
//! format parsers call them on the values they typed, so both formats refuse the same
//! entities with the same codes.

use super::ParsedEntity;
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::names::{MAX_CUSTOM_PROPERTIES, MAX_ENTITY_BYTES, MAX_VALUE_BYTES};
use aztable_model::EdmValue;

/// Refuses a string over 32K UTF-16 units or a binary over 64 KiB:
/// 400 `PropertyValueTooLarge`.
pub(super) fn check_value_size(v: &EdmValue) -> Result<(), ApiError> {
    // the bound first: counting a string's UTF-16 units reads all of it
    let over = |v: &EdmValue| v.stored_size_bound() > MAX_VALUE_BYTES && v.stored_size() > MAX_VALUE_BYTES;
    if matches!(v, EdmValue::String(_) | EdmValue::Binary(_)) && over(v) {
        return Err(ApiError::new(ErrorCode::PropertyValueTooLarge));
    }
    Ok(())
}

/// Refuses more than 252 custom properties (`TooManyProperties`) and an entity over
/// 1 MiB by the service's size formula (`EntityTooLarge`).
pub(super) fn check_entity_limits(e: &ParsedEntity) -> Result<(), ApiError> {
    if e.properties.len() > MAX_CUSTOM_PROPERTIES {
        return Err(ApiError::new(ErrorCode::TooManyProperties));
    }
    if aztable_model::entity::data_size_over(
        e.partition_key.as_deref().unwrap_or(""),
        e.row_key.as_deref().unwrap_or(""),
        &e.properties,
        MAX_ENTITY_BYTES,
    ) {
        return Err(ApiError::new(ErrorCode::EntityTooLarge));
    }
    Ok(())
}
