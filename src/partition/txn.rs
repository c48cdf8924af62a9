//! [`Txn`]: reads and staged writes inside one partition transaction. Reads see the
//! transaction's own staged writes, so a batch of operations on one partition behaves
//! as if applied in order.

use crate::model::Entity;
use crate::store::{codec, keys, Store, StoreError, WriteBatch};
use std::collections::HashMap;

/// A transaction over one table's partition; created by `Partitions::transact`.
pub struct Txn<'a> {
    store: &'a dyn Store,
    table_id: u64,
    /// Staged state by RowKey-qualified key: `Some` = put, `None` = delete.
    staged: HashMap<Vec<u8>, Option<Entity>>,
    order: Vec<Vec<u8>>,
}

impl<'a> Txn<'a> {
    pub(super) fn new(store: &'a dyn Store, table_id: u64) -> Self {
        Txn { store, table_id, staged: HashMap::new(), order: Vec::new() }
    }

    /// Reads an entity as the transaction sees it.
    pub fn get(&self, pk: &str, rk: &str) -> Result<Option<Entity>, StoreError> {
        let key = keys::entity_key(self.table_id, pk, rk);
        if let Some(staged) = self.staged.get(&key) {
            return Ok(staged.clone());
        }
        match self.store.get(&key)? {
            Some(v) => Ok(Some(codec::decode_entity_value(pk.to_owned(), rk.to_owned(), &v)?)),
            None => Ok(None),
        }
    }

    /// Stages a write of the whole entity.
    pub fn put(&mut self, entity: Entity) {
        let key = keys::entity_key(self.table_id, &entity.partition_key, &entity.row_key);
        self.stage(key, Some(entity));
    }

    /// Stages a delete.
    pub fn delete(&mut self, pk: &str, rk: &str) {
        let key = keys::entity_key(self.table_id, pk, rk);
        self.stage(key, None);
    }

    fn stage(&mut self, key: Vec<u8>, value: Option<Entity>) {
        if self.staged.insert(key.clone(), value).is_none() {
            self.order.push(key);
        }
    }

    pub(super) fn into_batch(mut self) -> WriteBatch {
        let mut batch = WriteBatch::new();
        for key in self.order {
            match self.staged.remove(&key) {
                Some(Some(e)) => batch.put(key, codec::encode_entity_value(&e)),
                Some(None) => batch.delete(key),
                None => {}
            }
        }
        batch
    }
}
