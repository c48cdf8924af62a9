//! The entity: keys, server timestamp and typed custom properties.

use super::edm::EdmValue;
use super::time::Ticks;

/// A stored entity. `properties` holds custom properties only (never PartitionKey,
/// RowKey or Timestamp), in the order the client first sent them.
#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    pub partition_key: String,
    pub row_key: String,
    /// Server-maintained last-modified time; the ETag is derived from it.
    pub timestamp: Ticks,
    pub properties: Vec<(String, EdmValue)>,
}

/// The size charged against the 1 MiB entity limit: keys and property names as UTF-16
/// (2 bytes a unit), 8 bytes for Timestamp, plus [`EdmValue::stored_size`] of each value.
/// Request bodies are checked with it as sent, merged entities as they will be stored.
pub fn data_size(partition_key: &str, row_key: &str, properties: &[(String, EdmValue)]) -> usize {
    let utf16 = |s: &str| super::edm::utf16_len(s) * 2;
    utf16(partition_key)
        + utf16(row_key)
        + 8
        + properties.iter().map(|(n, v)| utf16(n) + v.stored_size()).sum::<usize>()
}

impl Entity {
    /// Returns a custom property by name.
    pub fn get(&self, name: &str) -> Option<&EdmValue> {
        self.properties.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Sets or adds a custom property, keeping the position of an existing one.
    pub fn set(&mut self, name: String, value: EdmValue) {
        match self.properties.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.properties.push((name, value)),
        }
    }

    /// Returns the weak ETag the service derives from the timestamp:
    /// `W/"datetime'2020-10-09T17%3A00%3A02.4923650Z'"`.
    pub fn etag(&self) -> String {
        self.timestamp.etag()
    }
}
