//! [`Txn`]: reads and staged writes inside one partition transaction. Reads see the
//! transaction's own staged writes, so a batch of operations on one partition behaves
//! as if applied in order.

use crate::model::Entity;
use crate::store::{codec, keys, Store, StoreError, WriteBatch};
use std::cell::RefCell;
use std::collections::HashMap;

/// A transaction over one table's partition; created by `Partitions::transact`.
pub struct Txn<'a> {
    store: &'a dyn Store,
    table_id: u64,
    /// Staged state by RowKey-qualified key: `Some` = put, `None` = delete.
    staged: HashMap<Vec<u8>, Option<Entity>>,
    order: Vec<Vec<u8>>,
    /// For keys read from the store: whether the stored entity has a heap, which a
    /// write without one (or a delete) must then remove.
    stored_heap: RefCell<HashMap<Vec<u8>, bool>>,
}

impl<'a> Txn<'a> {
    pub(super) fn new(store: &'a dyn Store, table_id: u64) -> Self {
        Txn { store, table_id, staged: HashMap::new(), order: Vec::new(), stored_heap: RefCell::default() }
    }

    /// Reads an entity as the transaction sees it.
    pub fn get(&self, pk: &str, rk: &str) -> Result<Option<Entity>, StoreError> {
        let key = keys::entity_key(self.table_id, pk, rk);
        if let Some(staged) = self.staged.get(&key) {
            return Ok(staged.clone());
        }
        // The partition lock is held: head and heap cannot be torn.
        let read = super::read_entity(self.store, &key, pk, rk).map_err(super::torn_is_corrupt)?;
        self.stored_heap.borrow_mut().insert(key, read.as_ref().is_some_and(|(_, heap)| *heap));
        Ok(read.map(|(e, _)| e))
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
        let stored_heap = self.stored_heap.into_inner();
        let mut batch = WriteBatch::new();
        for key in self.order {
            // unless the store is known to hold no heap for the key, remove any
            let may_have_heap = stored_heap.get(&key) != Some(&false);
            match self.staged.remove(&key) {
                Some(Some(e)) => {
                    let enc = codec::encode_entity(&e);
                    match enc.heap {
                        Some(heap) => batch.put(keys::heap_key(&key), heap),
                        None if may_have_heap => batch.delete(keys::heap_key(&key)),
                        None => {}
                    }
                    batch.put(key, enc.head);
                }
                Some(None) => {
                    if may_have_heap {
                        batch.delete(keys::heap_key(&key));
                    }
                    batch.delete(key);
                }
                None => {}
            }
        }
        batch
    }
}
