//! Validation rules for table names, keys and property names.

/// Why a name or key was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameError {
    /// Table name breaks `^[A-Za-z][A-Za-z0-9]{2,62}$` or is reserved.
    InvalidTableName,
    /// A table name in a request URL of fewer than 3 or more than 63 characters.
    TableNameLength,
    /// Key longer than 1 KiB (UTF-16 code units, as the service counts).
    KeyTooLarge,
    /// Key holds `/ \ # ?` or a control character.
    KeyInvalidChar,
    /// Property name is not a valid identifier.
    PropertyNameInvalid,
    /// Property name longer than 255 characters.
    PropertyNameTooLong,
}

/// Largest key, in UTF-16 code units.
pub const MAX_KEY_UTF16: usize = 1024;
/// Most custom properties an entity may carry (255 minus PartitionKey, RowKey, Timestamp).
pub const MAX_CUSTOM_PROPERTIES: usize = 252;
/// Longest property name.
pub const MAX_PROPERTY_NAME: usize = 255;
/// Largest string (UTF-16 bytes) or binary value.
pub const MAX_VALUE_BYTES: usize = 64 * 1024;
/// Largest entity (sum of property data).
pub const MAX_ENTITY_BYTES: usize = 1024 * 1024;

/// Checks a table name: 3–63 ASCII alphanumerics starting with a letter, not `tables`.
pub fn validate_table_name(name: &str) -> Result<(), NameError> {
    let b = name.as_bytes();
    let shape_ok =
        (3..=63).contains(&b.len()) && b[0].is_ascii_alphabetic() && b.iter().all(u8::is_ascii_alphanumeric);
    if !shape_ok || name.eq_ignore_ascii_case("tables") {
        return Err(NameError::InvalidTableName);
    }
    Ok(())
}

/// Checks the table name a request URL names before the table is looked up: a
/// character other than an ASCII letter or digit, or a digit first, is
/// [`NameError::InvalidTableName`]; then a length outside 3–63 is
/// [`NameError::TableNameLength`].
pub fn validate_url_table_name(name: &str) -> Result<(), NameError> {
    let b = name.as_bytes();
    let chars_ok = b.first().is_some_and(u8::is_ascii_alphabetic) && b.iter().all(u8::is_ascii_alphanumeric);
    if !chars_ok {
        return Err(NameError::InvalidTableName);
    }
    if !(3..=63).contains(&b.len()) {
        return Err(NameError::TableNameLength);
    }
    Ok(())
}

/// Checks a PartitionKey or RowKey value. Empty keys are allowed.
pub fn validate_key(key: &str) -> Result<(), NameError> {
    if key.len() > MAX_KEY_UTF16 && super::edm::utf16_len(key) > MAX_KEY_UTF16 {
        return Err(NameError::KeyTooLarge);
    }
    let bad = |c: char| {
        matches!(c, '/' | '\\' | '#' | '?')
            || ('\u{0}'..='\u{1f}').contains(&c)
            || ('\u{7f}'..='\u{9f}').contains(&c)
    };
    // an ASCII key byte by byte (the characters from U+0080 are two bytes and more)
    let bad_byte = |b: u8| matches!(b, b'/' | b'\\' | b'#' | b'?') || b < 0x20 || b == 0x7f;
    let found = match key.is_ascii() {
        true => key.bytes().any(bad_byte),
        false => key.chars().any(bad),
    };
    if found {
        return Err(NameError::KeyInvalidChar);
    }
    Ok(())
}

/// Checks a custom property name: a C#-style identifier (letter or `_` first, then
/// letters, digits or `_`), at most 255 characters.
pub fn validate_property_name(name: &str) -> Result<(), NameError> {
    // ASCII names (nearly all) byte by byte; others by characters
    if let Some((&first, rest)) = name.as_bytes().split_first().filter(|_| name.is_ascii()) {
        if name.len() > MAX_PROPERTY_NAME {
            return Err(NameError::PropertyNameTooLong);
        }
        let ok = (first.is_ascii_alphabetic() || first == b'_')
            && rest.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_');
        return if ok { Ok(()) } else { Err(NameError::PropertyNameInvalid) };
    }
    if name.chars().count() > MAX_PROPERTY_NAME {
        return Err(NameError::PropertyNameTooLong);
    }
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_alphabetic() || c == '_');
    if !first_ok || !chars.all(|c| c.is_alphanumeric() || c == '_') {
        return Err(NameError::PropertyNameInvalid);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names() {
        assert!(validate_table_name("abc").is_ok());
        assert!(validate_table_name("A1b2C3").is_ok());
        assert!(validate_table_name(&"a".repeat(63)).is_ok());
        assert!(validate_table_name(&"a".repeat(64)).is_err());
        assert!(validate_table_name("ab").is_err());
        assert!(validate_table_name("1abc").is_err());
        assert!(validate_table_name("ab-c").is_err());
        assert!(validate_table_name("Tables").is_err());
        assert!(validate_table_name("tables").is_err());
    }

    #[test]
    fn url_table_names() {
        assert!(validate_url_table_name("abc").is_ok());
        assert!(validate_url_table_name(&"a".repeat(63)).is_ok());
        assert_eq!(validate_url_table_name("1table"), Err(NameError::InvalidTableName));
        assert_eq!(validate_url_table_name("my_table"), Err(NameError::InvalidTableName));
        assert_eq!(validate_url_table_name(""), Err(NameError::InvalidTableName));
        assert_eq!(validate_url_table_name("aa"), Err(NameError::TableNameLength));
        assert_eq!(validate_url_table_name(&"a".repeat(64)), Err(NameError::TableNameLength));
    }

    #[test]
    fn keys() {
        assert!(validate_key("").is_ok());
        assert!(validate_key("héllo wörld").is_ok());
        assert!(validate_key(&"x".repeat(1024)).is_ok());
        assert_eq!(validate_key(&"x".repeat(1025)), Err(NameError::KeyTooLarge));
        for bad in ["a/b", "a\\b", "a#b", "a?b", "a\tb", "a\u{7f}", "a\u{85}"] {
            assert_eq!(validate_key(bad), Err(NameError::KeyInvalidChar), "{bad:?}");
        }
    }

    #[test]
    fn property_names() {
        assert!(validate_property_name("Name").is_ok());
        assert!(validate_property_name("_x1").is_ok());
        assert!(validate_property_name("a-b").is_err());
        assert!(validate_property_name("1a").is_err());
        assert!(validate_property_name("").is_err());
        assert_eq!(validate_property_name(&"a".repeat(256)), Err(NameError::PropertyNameTooLong));
    }

    /// The checks by characters alone, as the service states them.
    fn property_name_model(name: &str) -> Result<(), NameError> {
        if name.chars().count() > MAX_PROPERTY_NAME {
            return Err(NameError::PropertyNameTooLong);
        }
        let mut chars = name.chars();
        let first_ok = chars.next().is_some_and(|c| c.is_alphabetic() || c == '_');
        match first_ok && chars.all(|c| c.is_alphanumeric() || c == '_') {
            true => Ok(()),
            false => Err(NameError::PropertyNameInvalid),
        }
    }

    fn key_char_model(key: &str) -> bool {
        key.chars().any(|c| matches!(c, '/' | '\\' | '#' | '?' | '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'))
    }

    proptest::proptest! {
        /// ASCII names and keys are checked byte by byte; the answers are those of the
        /// character checks, for ASCII and other text alike.
        #[test]
        fn byte_checks_answer_as_the_character_checks(
            text in proptest::prop_oneof![
                "[a-zA-Z0-9_/#?\\\\\t\u{7f} -]{0,12}",
                "[a-z_\u{e9}\u{85}\u{3000}\u{1F600}]{0,12}",
                "[a-z]{250,260}",
                "\\PC{0,8}",
            ],
        ) {
            proptest::prop_assert_eq!(validate_property_name(&text), property_name_model(&text));
            proptest::prop_assert_eq!(validate_key(&text) == Err(NameError::KeyInvalidChar), key_char_model(&text));
        }
    }
}
