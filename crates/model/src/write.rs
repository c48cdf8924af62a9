//! The write vocabulary every layer shares: [`EntityWrite`], one variant per entity
//! write REST operation, with the entity it writes ([`NewEntity`]) and its `If-Match`
//! [`Condition`]. The wire layer reads a request (or a change set's operation) into it;
//! the engine runs it. Pure data: no parsing, no rules.

use crate::EdmValue;

/// An entity as the client sent it: its keys and its properties.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEntity {
    pub partition_key: String,
    pub row_key: String,
    pub properties: Vec<(String, EdmValue)>,
}

/// The `If-Match` condition of a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// `If-Match: *`: the entity must exist.
    Exists,
    /// `If-Match: <etag>`: the entity must exist with this ETag.
    Etag(String),
    /// No `If-Match`: the operation is an upsert (Insert Or Replace / Insert Or Merge).
    Upsert,
}

/// One entity write, named after its REST operation: a request of its own or one
/// operation of a change set.
#[derive(Debug, Clone, PartialEq)]
pub enum EntityWrite {
    /// Insert Entity: the body's entity, keys included.
    InsertEntity(NewEntity),
    /// Update Entity (replace); Insert Or Replace Entity with [`Condition::Upsert`].
    UpdateEntity(NewEntity, Condition),
    /// Merge Entity; Insert Or Merge Entity with [`Condition::Upsert`].
    MergeEntity(NewEntity, Condition),
    /// Delete Entity (never an upsert: `If-Match` is required).
    DeleteEntity { partition_key: String, row_key: String, cond: Condition },
}

impl EntityWrite {
    /// The (PartitionKey, RowKey) the write addresses.
    pub fn keys(&self) -> (&str, &str) {
        match self {
            EntityWrite::InsertEntity(e)
            | EntityWrite::UpdateEntity(e, _)
            | EntityWrite::MergeEntity(e, _) => (&e.partition_key, &e.row_key),
            EntityWrite::DeleteEntity { partition_key, row_key, .. } => (partition_key, row_key),
        }
    }

    /// Whether the write may create the entity: an insert, or an upsert.
    pub fn may_insert(&self) -> bool {
        match self {
            EntityWrite::InsertEntity(_) => true,
            EntityWrite::UpdateEntity(_, c) | EntityWrite::MergeEntity(_, c) => *c == Condition::Upsert,
            EntityWrite::DeleteEntity { .. } => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(pk: &str, rk: &str) -> NewEntity {
        NewEntity { partition_key: pk.into(), row_key: rk.into(), properties: Vec::new() }
    }

    #[test]
    fn keys_and_whether_a_write_may_insert() {
        let delete =
            |cond| EntityWrite::DeleteEntity { partition_key: "p".into(), row_key: "d".into(), cond };
        let cases = [
            (EntityWrite::InsertEntity(new("p", "i")), ("p", "i"), true),
            (EntityWrite::UpdateEntity(new("p", "u"), Condition::Upsert), ("p", "u"), true),
            (EntityWrite::UpdateEntity(new("p", "u"), Condition::Exists), ("p", "u"), false),
            (EntityWrite::MergeEntity(new("q", "m"), Condition::Upsert), ("q", "m"), true),
            (EntityWrite::MergeEntity(new("q", "m"), Condition::Etag("W/\"x\"".into())), ("q", "m"), false),
            (delete(Condition::Exists), ("p", "d"), false),
        ];
        for (write, keys, inserts) in cases {
            assert_eq!(write.keys(), keys, "{write:?}");
            assert_eq!(write.may_insert(), inserts, "{write:?}");
        }
    }
}
