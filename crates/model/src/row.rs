//! [`Row`]: what a `$filter` reads of a row. Implemented by [`Entity`] and by the
//! partition layer's projection of a stored row, which borrows the few properties a
//! filter names straight from the stored bytes.

use super::{EdmRef, EdmValue, Entity, Ticks};

/// What a filter reads from a row: its keys, its Timestamp and its custom properties.
pub trait Row {
    fn partition_key(&self) -> &str;
    fn row_key(&self) -> &str;
    /// The PartitionKey's UTF-8 bytes, for comparing. A scanned row's are its stored
    /// bytes, not checked: a row the filter keeps is decoded (and checked) whole.
    fn partition_key_bytes(&self) -> &[u8] {
        self.partition_key().as_bytes()
    }
    /// The RowKey's, as [`Row::partition_key_bytes`].
    fn row_key_bytes(&self) -> &[u8] {
        self.row_key().as_bytes()
    }
    fn timestamp(&self) -> Ticks;
    /// A custom property by name (never a system property).
    fn property(&self, name: &str) -> Option<EdmRef<'_>>;
    /// The custom property `name`, which is at `index` in the list of names the row was
    /// read for (a scan's projection holds them by position); by name unless overridden.
    fn property_at(&self, index: usize, name: &str) -> Option<EdmRef<'_>> {
        let _ = index;
        self.property(name)
    }
}

impl Row for Entity {
    fn partition_key(&self) -> &str {
        &self.partition_key
    }
    fn row_key(&self) -> &str {
        &self.row_key
    }
    fn timestamp(&self) -> Ticks {
        self.timestamp
    }
    fn property(&self, name: &str) -> Option<EdmRef<'_>> {
        self.get(name).map(EdmValue::borrowed)
    }
}
