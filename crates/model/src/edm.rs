//! Edm property types and values (the Table service's type system).
//!
//! `EdmValue` is what is stored and compared; conversion to and from the wire lives in
//! `odata`, conversion to and from bytes in `store::codec`.

use super::time::Ticks;

/// One of the eight Edm types the Table service stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdmType {
    String,
    Int32,
    Int64,
    Double,
    Boolean,
    DateTime,
    Guid,
    Binary,
}

impl EdmType {
    /// Returns the OData type name, e.g. `Edm.Int64`.
    pub fn as_str(self) -> &'static str {
        match self {
            EdmType::String => "Edm.String",
            EdmType::Int32 => "Edm.Int32",
            EdmType::Int64 => "Edm.Int64",
            EdmType::Double => "Edm.Double",
            EdmType::Boolean => "Edm.Boolean",
            EdmType::DateTime => "Edm.DateTime",
            EdmType::Guid => "Edm.Guid",
            EdmType::Binary => "Edm.Binary",
        }
    }

    /// Parses an OData type name; `None` for anything the Table service does not store.
    pub fn parse(s: &str) -> Option<EdmType> {
        Some(match s {
            "Edm.String" => EdmType::String,
            "Edm.Int32" => EdmType::Int32,
            "Edm.Int64" => EdmType::Int64,
            "Edm.Double" => EdmType::Double,
            "Edm.Boolean" => EdmType::Boolean,
            "Edm.DateTime" => EdmType::DateTime,
            "Edm.Guid" => EdmType::Guid,
            "Edm.Binary" => EdmType::Binary,
            _ => return None,
        })
    }
}

/// A typed property value. Nulls are never stored (a null on write means "absent").
#[derive(Debug, Clone, PartialEq)]
pub enum EdmValue {
    String(String),
    Int32(i32),
    Int64(i64),
    Double(f64),
    Boolean(bool),
    DateTime(Ticks),
    Guid([u8; 16]),
    Binary(Vec<u8>),
}

/// Whether two property lists hold the same names and values in the same order,
/// Doubles compared bit for bit (so NaN equals NaN and -0.0 differs from 0.0): what a
/// round trip through a wire format must keep. Used by the round-trip tests and fuzz
/// targets.
pub fn identical(a: &[(String, EdmValue)], b: &[(String, EdmValue)]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|((na, va), (nb, vb))| {
            na == nb
                && match (va, vb) {
                    (EdmValue::Double(x), EdmValue::Double(y)) => x.to_bits() == y.to_bits(),
                    _ => va == vb,
                }
        })
}

/// A borrowed [`EdmValue`]: what a filter reads from a stored row without copying it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EdmRef<'a> {
    String(&'a str),
    Int32(i32),
    Int64(i64),
    Double(f64),
    Boolean(bool),
    DateTime(Ticks),
    Guid(&'a [u8; 16]),
    Binary(&'a [u8]),
}

impl EdmRef<'_> {
    /// The value, owned.
    pub fn to_owned_value(self) -> EdmValue {
        match self {
            EdmRef::String(s) => EdmValue::String(s.to_owned()),
            EdmRef::Int32(v) => EdmValue::Int32(v),
            EdmRef::Int64(v) => EdmValue::Int64(v),
            EdmRef::Double(v) => EdmValue::Double(v),
            EdmRef::Boolean(v) => EdmValue::Boolean(v),
            EdmRef::DateTime(v) => EdmValue::DateTime(v),
            EdmRef::Guid(g) => EdmValue::Guid(*g),
            EdmRef::Binary(b) => EdmValue::Binary(b.to_vec()),
        }
    }

    /// The value's Edm type.
    pub fn edm_type(self) -> EdmType {
        match self {
            EdmRef::String(_) => EdmType::String,
            EdmRef::Int32(_) => EdmType::Int32,
            EdmRef::Int64(_) => EdmType::Int64,
            EdmRef::Double(_) => EdmType::Double,
            EdmRef::Boolean(_) => EdmType::Boolean,
            EdmRef::DateTime(_) => EdmType::DateTime,
            EdmRef::Guid(_) => EdmType::Guid,
            EdmRef::Binary(_) => EdmType::Binary,
        }
    }
}

impl EdmValue {
    /// Borrows the value.
    pub fn borrowed(&self) -> EdmRef<'_> {
        match self {
            EdmValue::String(s) => EdmRef::String(s),
            EdmValue::Int32(v) => EdmRef::Int32(*v),
            EdmValue::Int64(v) => EdmRef::Int64(*v),
            EdmValue::Double(v) => EdmRef::Double(*v),
            EdmValue::Boolean(v) => EdmRef::Boolean(*v),
            EdmValue::DateTime(v) => EdmRef::DateTime(*v),
            EdmValue::Guid(g) => EdmRef::Guid(g),
            EdmValue::Binary(b) => EdmRef::Binary(b),
        }
    }

    /// Returns the value's Edm type.
    pub fn edm_type(&self) -> EdmType {
        match self {
            EdmValue::String(_) => EdmType::String,
            EdmValue::Int32(_) => EdmType::Int32,
            EdmValue::Int64(_) => EdmType::Int64,
            EdmValue::Double(_) => EdmType::Double,
            EdmValue::Boolean(_) => EdmType::Boolean,
            EdmValue::DateTime(_) => EdmType::DateTime,
            EdmValue::Guid(_) => EdmType::Guid,
            EdmValue::Binary(_) => EdmType::Binary,
        }
    }

    /// An upper bound of [`EdmValue::stored_size`] found without reading a string: a
    /// string has no more UTF-16 units than UTF-8 bytes.
    pub fn stored_size_bound(&self) -> usize {
        match self {
            EdmValue::String(s) => s.len() * 2,
            _ => self.stored_size(),
        }
    }

    /// Returns the size the service charges against the 1 MiB entity limit
    /// (strings count as UTF-16, two bytes a code unit).
    pub fn stored_size(&self) -> usize {
        match self {
            EdmValue::String(s) => utf16_len(s) * 2,
            EdmValue::Int32(_) => 4,
            EdmValue::Int64(_) | EdmValue::Double(_) | EdmValue::DateTime(_) => 8,
            EdmValue::Boolean(_) => 1,
            EdmValue::Guid(_) => 16,
            EdmValue::Binary(b) => b.len(),
        }
    }
}

/// The number of UTF-16 code units of `s` (`s.encode_utf16().count()`): one per
/// character, two for a character of four UTF-8 bytes. Sizes and key limits are
/// counted in UTF-16, as the service counts them.
pub fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    // Each byte that is not a continuation byte (0b10xx_xxxx) starts a character; a
    // leading byte of 0xF0 or more starts a 4-byte character.
    s.bytes().map(|b| usize::from((b as i8) >= -0x40) + usize::from(b >= 0xF0)).sum()
}

/// Formats a GUID as lowercase hyphenated hex.
pub fn format_guid(g: &[u8; 16]) -> String {
    uuid::Uuid::from_bytes(*g).hyphenated().to_string()
}

/// [`format_guid`], appended to a byte buffer without an intermediate `String`.
pub fn write_guid(out: &mut Vec<u8>, g: &[u8; 16]) {
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    out.extend_from_slice(uuid::Uuid::from_bytes(*g).hyphenated().encode_lower(&mut buf).as_bytes());
}

/// Parses a GUID in the hyphenated 8-4-4-4-12 form (case-insensitive).
pub fn parse_guid(s: &str) -> Option<[u8; 16]> {
    if s.len() != 36 {
        return None;
    }
    uuid::Uuid::try_parse(s).ok().map(|u| *u.as_bytes())
}
