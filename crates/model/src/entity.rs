//! The entity: keys, server timestamp and typed custom properties.

use super::edm::{EdmRef, EdmValue};
use super::row::Row;
use super::time::Ticks;
use std::borrow::Cow;

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

/// Whether [`data_size`] is over `limit`. The exact size (which reads every string to
/// count its UTF-16 units) is only counted when an upper bound, each string's UTF-8
/// length, is over the limit: nearly every entity is far under it.
pub fn data_size_over(
    partition_key: &str,
    row_key: &str,
    properties: &[(String, EdmValue)],
    limit: usize,
) -> bool {
    let bound = (partition_key.len() + row_key.len()) * 2
        + 8
        + properties.iter().map(|(n, v)| n.len() * 2 + v.stored_size_bound()).sum::<usize>();
    bound > limit && data_size(partition_key, row_key, properties) > limit
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

    /// The entity borrowed as an [`EntityView`].
    pub fn view(&self) -> EntityView<'_> {
        EntityView {
            partition_key: &self.partition_key,
            row_key: &self.row_key,
            timestamp: self.timestamp,
            properties: self.properties.iter().map(|(n, v)| (n.as_str(), v.borrowed())).collect(),
        }
    }

    /// Returns the weak ETag the service derives from the timestamp:
    /// `W/"datetime'2020-10-09T17%3A00%3A02.4923650Z'"`.
    pub fn etag(&self) -> String {
        self.timestamp.etag()
    }
}

/// An entity borrowed from the bytes it is stored in (a cached row): what a point read
/// renders without copying a key, name or value.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityView<'a> {
    pub partition_key: &'a str,
    pub row_key: &'a str,
    pub timestamp: Ticks,
    pub properties: Vec<(&'a str, EdmRef<'a>)>,
}

/// What a renderer reads of an entity, owned ([`Entity`]) or borrowed ([`EntityView`]):
/// what a filter reads ([`Row`]), and every custom property in order.
pub trait EntityFields: Row {
    /// Calls `f` with each custom property, in order.
    fn for_each_property(&self, f: &mut dyn FnMut(&str, EdmRef<'_>));
    /// The entity as an owned [`Entity`] (for the renderers that need one), copied only
    /// when it is borrowed from stored bytes.
    fn owned(&self) -> Cow<'_, Entity>;
}

impl EntityFields for Entity {
    fn for_each_property(&self, f: &mut dyn FnMut(&str, EdmRef<'_>)) {
        for (name, value) in &self.properties {
            f(name, value.borrowed());
        }
    }
    fn owned(&self) -> Cow<'_, Entity> {
        Cow::Borrowed(self)
    }
}

impl Row for EntityView<'_> {
    fn partition_key(&self) -> &str {
        self.partition_key
    }
    fn row_key(&self) -> &str {
        self.row_key
    }
    fn timestamp(&self) -> Ticks {
        self.timestamp
    }
    fn property(&self, name: &str) -> Option<EdmRef<'_>> {
        self.properties.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
}

impl EntityFields for EntityView<'_> {
    fn for_each_property(&self, f: &mut dyn FnMut(&str, EdmRef<'_>)) {
        for (name, value) in &self.properties {
            f(name, *value);
        }
    }
    fn owned(&self) -> Cow<'_, Entity> {
        Cow::Owned(self.to_entity())
    }
}

impl EntityView<'_> {
    /// The entity it shows, owned.
    pub fn to_entity(&self) -> Entity {
        Entity {
            partition_key: self.partition_key.to_owned(),
            row_key: self.row_key.to_owned(),
            timestamp: self.timestamp,
            properties: self.properties.iter().map(|(n, v)| ((*n).to_owned(), v.to_owned_value())).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value() -> impl proptest::strategy::Strategy<Value = EdmValue> {
        use proptest::prelude::*;
        prop_oneof![
            any::<String>().prop_map(EdmValue::String),
            "[a-z\u{e9}\u{1F600}]{0,40}".prop_map(EdmValue::String),
            any::<i32>().prop_map(EdmValue::Int32),
            any::<bool>().prop_map(EdmValue::Boolean),
            proptest::collection::vec(any::<u8>(), 0..40).prop_map(EdmValue::Binary),
        ]
    }

    proptest::proptest! {
        /// The bound is never under the size, and the limit check answers as the exact
        /// size does, for limits around it.
        #[test]
        fn the_size_check_agrees_with_the_exact_size(
            pk in "\\PC{0,12}",
            rk in "\\PC{0,12}",
            properties in proptest::collection::vec(("[A-Za-z_\u{e9}]{1,8}", value()), 0..6),
            slack in -40i64..40,
        ) {
            let exact = data_size(&pk, &rk, &properties);
            for (_, v) in &properties {
                proptest::prop_assert!(v.stored_size_bound() >= v.stored_size());
            }
            let limit = (exact as i64 + slack).max(0) as usize;
            proptest::prop_assert_eq!(data_size_over(&pk, &rk, &properties, limit), exact > limit);
        }
    }
}
