//! `MemStore`: an in-memory [`Store`] (a `BTreeMap` behind a `RwLock`), used by unit
//! tests and `--inMemoryPersistence`. Nothing survives the process.

use super::{KvPair, Store, StoreError, WriteBatch, WriteOp};
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Pairs copied out per lock acquisition while scanning.
const SCAN_CHUNK: usize = 128;

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// An ordered in-memory key/value store.
#[derive(Debug, Default)]
pub struct MemStore {
    map: RwLock<Map>,
}

impl MemStore {
    /// Creates an empty store.
    pub fn new() -> MemStore {
        MemStore::default()
    }

    // A panic while holding the lock cannot leave the map half-updated in a way that
    // matters more than losing the process would, so poisoning is ignored.
    fn read(&self) -> RwLockReadGuard<'_, Map> {
        self.map.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_lock(&self) -> RwLockWriteGuard<'_, Map> {
        self.map.write().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Store for MemStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.read().get(key).cloned())
    }

    fn write(&self, batch: WriteBatch) -> Result<(), StoreError> {
        let mut map = self.write_lock();
        for op in batch.ops {
            match op {
                WriteOp::Put(k, v) => {
                    map.insert(k, v);
                }
                WriteOp::Delete(k) => {
                    map.remove(&k);
                }
                WriteOp::DeleteRange(start, end) => {
                    if start < end {
                        let doomed: Vec<Vec<u8>> = map
                            .range::<[u8], _>((Bound::Included(&start[..]), Bound::Excluded(&end[..])))
                            .map(|(k, _)| k.clone())
                            .collect();
                        for k in doomed {
                            map.remove(&k);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn scan<'a>(
        &'a self,
        start: &[u8],
        end: &[u8],
    ) -> Box<dyn Iterator<Item = Result<KvPair, StoreError>> + 'a> {
        Box::new(MemScan {
            store: self,
            next_from: Bound::Included(start.to_vec()),
            end: end.to_vec(),
            buf: VecDeque::new(),
            done: start >= end,
        })
    }

    fn flush(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// A scan that copies [`SCAN_CHUNK`] pairs per read-lock acquisition and resumes
/// after the last key it returned, so no lock is held while the caller iterates.
struct MemScan<'a> {
    store: &'a MemStore,
    next_from: Bound<Vec<u8>>,
    end: Vec<u8>,
    buf: VecDeque<KvPair>,
    done: bool,
}

impl MemScan<'_> {
    fn refill(&mut self) {
        let lower = match &self.next_from {
            Bound::Included(k) => Bound::Included(&k[..]),
            Bound::Excluded(k) => Bound::Excluded(&k[..]),
            Bound::Unbounded => Bound::Unbounded,
        };
        let map = self.store.read();
        self.buf.extend(
            map.range::<[u8], _>((lower, Bound::Excluded(&self.end[..])))
                .take(SCAN_CHUNK)
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        drop(map);
        match self.buf.back() {
            Some((k, _)) if self.buf.len() == SCAN_CHUNK => {
                self.next_from = Bound::Excluded(k.clone());
                // `range` panics on an empty (excluded, excluded) range; stop first.
                if *k >= self.end {
                    self.done = true;
                }
            }
            _ => self.done = true,
        }
    }
}

impl Iterator for MemScan<'_> {
    type Item = Result<KvPair, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.buf.is_empty() && !self.done {
            self.refill();
        }
        self.buf.pop_front().map(Ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_crosses_chunks_and_sees_later_writes() {
        let s = MemStore::new();
        let mut b = WriteBatch::new();
        for i in 0..1000u32 {
            b.put(i.to_be_bytes().to_vec(), vec![1]);
        }
        s.write(b).unwrap();
        let mut it = s.scan(&0u32.to_be_bytes(), &2000u32.to_be_bytes());
        assert_eq!(it.next().unwrap().unwrap().0, 0u32.to_be_bytes().to_vec());
        // The scan holds no lock: writing in the middle of it must not deadlock.
        let mut b = WriteBatch::new();
        b.put(1500u32.to_be_bytes().to_vec(), vec![2]);
        s.write(b).unwrap();
        let rest: Vec<_> = it.map(|r| r.unwrap().0).collect();
        assert_eq!(rest.len(), 1000);
        assert_eq!(rest.last().unwrap(), &1500u32.to_be_bytes().to_vec());
    }

    #[test]
    fn empty_and_inverted_ranges() {
        let s = MemStore::new();
        let mut b = WriteBatch::new();
        b.put(vec![5], vec![]);
        b.delete_range(vec![9], vec![1]);
        b.delete_range(vec![5], vec![5]);
        s.write(b).unwrap();
        assert_eq!(s.scan(&[9], &[1]).count(), 0);
        assert_eq!(s.scan(&[5], &[5]).count(), 0);
        assert_eq!(s.scan(&[5], &[6]).count(), 1);
    }
}
