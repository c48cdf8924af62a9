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
