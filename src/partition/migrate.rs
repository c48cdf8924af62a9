//! Data migration of older data directories, run once before the server serves a
//! request: an earlier store layout kept entity heaps under a key kind of their own
//! (0x05, after every table's heads); they now live in their table's key range, after
//! its heads (`store::keys`), so a flushed file of one table's writes spans only that
//! table.

use crate::store::{keys, Store, StoreError, WriteBatch};

/// Heaps moved per write batch.
const MOVE_BATCH: usize = 1024;

/// Moves every legacy heap to its [`keys::heap_key`], then deletes the legacy range;
/// returns how many heaps moved. Safe to interrupt and to run again: a heap is copied
/// with its own bytes, and the legacy range is deleted only once all of it is copied.
/// Must finish before any request is served (a read would miss a heap not moved yet).
pub fn move_legacy_heaps(store: &dyn Store) -> Result<u64, StoreError> {
    let (mut from, end) = keys::legacy_heaps_range();
    let (start, mut moved) = (from.clone(), 0u64);
    loop {
        let mut batch = WriteBatch::new();
        let mut last = None;
        for pair in store.scan(&from, &end).take(MOVE_BATCH) {
            let (k, v) = pair?;
            let Some(heap) = keys::heap_key_of_legacy(&k) else {
                return Err(StoreError::Corrupt("malformed legacy heap key".into()));
            };
            batch.put(heap, v);
            last = Some(k);
        }
        let Some(mut last) = last else { break };
        moved += batch.ops.len() as u64;
        store.write(batch)?;
        // resume right after the last key moved
        last.push(0);
        from = last;
    }
    if moved > 0 {
        let mut batch = WriteBatch::new();
        batch.delete_range(start.clone(), end.clone());
        store.write(batch)?;
        store.reclaim_deleted_range(&start, &end)?;
    }
    Ok(moved)
}
