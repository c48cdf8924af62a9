//! Data migration of older data directories, run once before the server serves a
//! request: an earlier store layout kept entity heaps under a key kind of their own
//! (0x05, after every table's heads); they now live in their table's key range, after
//! its heads (`store::keys`), so a flushed file of one table's writes spans only that
//! table.
//!
//! The directory's storage format version lives under [`keys::FORMAT_VERSION_KEY`]
//! ([`upgrade`]): a directory of a newer format than [`FORMAT_VERSION`] is refused
//! before anything is read or written, so a build never misreads (or "upgrades") data
//! written by a newer one. Bump [`FORMAT_VERSION`] with any change to keys or values
//! that this build's readers would get wrong, and move older data here.

use aztable_store::{codec, keys, Store, StoreError, WriteBatch};

/// The storage format this build writes and reads. 1: entity heaps under their own key
/// kind (0x05); 2: heaps in their table's key range. Directories written before the
/// version was stored have no version key: they are format 1 or 2, and the move of
/// legacy heaps brings either to 2.
pub const FORMAT_VERSION: u64 = 2;

/// Brings the directory to [`FORMAT_VERSION`] and records it; returns how many legacy
/// heaps moved. [`StoreError::NewerFormat`] if the directory is newer, before any write.
pub fn upgrade(store: &dyn Store) -> Result<u64, StoreError> {
    let found = match store.get(keys::FORMAT_VERSION_KEY)? {
        Some(bytes) => Some(codec::decode_u64(&bytes)?),
        None => None,
    };
    match found {
        Some(v) if v > FORMAT_VERSION => Err(StoreError::NewerFormat { found: v, supported: FORMAT_VERSION }),
        Some(FORMAT_VERSION) => Ok(0),
        _ => {
            let moved = move_legacy_heaps(store)?;
            let mut batch = WriteBatch::new();
            batch.put(keys::FORMAT_VERSION_KEY.to_vec(), codec::encode_u64(FORMAT_VERSION));
            store.write(batch)?;
            Ok(moved)
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use aztable_store::mem::MemStore;

    fn version(store: &dyn Store) -> Option<u64> {
        store.get(keys::FORMAT_VERSION_KEY).unwrap().map(|b| codec::decode_u64(&b).unwrap())
    }

    #[test]
    fn a_new_or_unmarked_directory_is_marked_with_the_current_format() {
        let store = MemStore::new();
        assert_eq!(upgrade(&store).unwrap(), 0);
        assert_eq!(version(&store), Some(FORMAT_VERSION));
        // and opens again as is
        assert_eq!(upgrade(&store).unwrap(), 0);
    }

    #[test]
    fn a_newer_format_is_refused_untouched() {
        let store = MemStore::new();
        let mut b = WriteBatch::new();
        b.put(keys::FORMAT_VERSION_KEY.to_vec(), codec::encode_u64(FORMAT_VERSION + 1));
        store.write(b).unwrap();
        let e = upgrade(&store).unwrap_err();
        assert!(
            matches!(e, StoreError::NewerFormat { found, supported } if found == FORMAT_VERSION + 1 && supported == FORMAT_VERSION)
        );
        assert!(e.to_string().contains("newer aztable"), "{e}");
        assert_eq!(version(&store), Some(FORMAT_VERSION + 1));
    }
}
