//! Group commit of synced writes (`--fsync`): a transaction writes its batch without
//! the sync ([`Store::write_unsynced`]: it survives a killed process, not yet a power
//! loss) and takes a [`Mark`]; before the write is acknowledged,
//! [`GroupCommit::sync_covering`] makes sure that some log sync that started after it
//! has finished: its own, or one that a writer who came later already did for both.
//! Writers waiting for one sync share it, those of one partition included, since the
//! partition's turn is released before the sync.

use crate::store::{Store, StoreError};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Mutex;

/// Where an unsynced write stands among the log syncs: the number of syncs that had
/// started when it returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Mark(u64);

/// Counts the log syncs of one store.
#[derive(Default)]
pub(super) struct GroupCommit {
    /// Held for the whole of a sync: syncs finish in the order they start.
    syncing: Mutex<()>,
    /// Syncs started (incremented, under [`GroupCommit::syncing`], before each sync).
    started: AtomicU64,
    /// Syncs that finished without an error: the first `done` syncs all did.
    done: AtomicU64,
}

impl GroupCommit {
    /// The mark of an unsynced write that has just returned. Any sync counted after
    /// this load began after the write, so it covers the write.
    pub(super) fn mark(&self) -> Mark {
        Mark(self.started.load(SeqCst))
    }

    /// Returns once the write at `mark` is synced: at once if a sync that started
    /// after it has finished, else after syncing (which covers every write so far),
    /// waiting for a sync in progress first, which may make this one unnecessary.
    /// Blocks for as long as the disk takes. A failed sync is this writer's error; the
    /// next writer tries again.
    pub(super) fn sync_covering(&self, mark: Mark, store: &dyn Store) -> Result<(), StoreError> {
        if self.covered(mark) {
            return Ok(());
        }
        let _syncing = self.syncing.lock().unwrap_or_else(|p| p.into_inner());
        // a sync that started after the write may have finished while this one waited
        if self.covered(mark) {
            return Ok(());
        }
        let n = self.started.fetch_add(1, SeqCst) + 1;
        store.sync_log()?;
        self.done.store(n, SeqCst);
        Ok(())
    }

    /// Whether a sync that started after the write at `mark` has finished.
    fn covered(&self, mark: Mark) -> bool {
        self.done.load(SeqCst) > mark.0
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::store::mem::MemStore;
    use crate::store::WriteBatch;
    use std::sync::atomic::{AtomicBool, AtomicUsize};

    /// A store that syncs its writes, holding unsynced ones until a sync, and counting
    /// syncs. Unlike a real store it reads only what was synced: what a power loss
    /// would keep.
    #[derive(Default)]
    pub(in crate::partition) struct Unsynced {
        pub(in crate::partition) inner: MemStore,
        pub(in crate::partition) pending: Mutex<Vec<WriteBatch>>,
        pub(in crate::partition) syncs: AtomicUsize,
        pub(in crate::partition) fail_next: AtomicBool,
    }

    impl Store for Unsynced {
        fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
            self.inner.get(key)
        }
        fn write(&self, batch: WriteBatch) -> Result<(), StoreError> {
            self.write_unsynced(batch)?;
            self.sync_log()
        }
        fn syncs_writes(&self) -> bool {
            true
        }
        fn write_unsynced(&self, batch: WriteBatch) -> Result<(), StoreError> {
            self.pending.lock().unwrap().push(batch);
            Ok(())
        }
        fn sync_log(&self) -> Result<(), StoreError> {
            if self.fail_next.swap(false, SeqCst) {
                return Err(StoreError::Engine("disk full".into()));
            }
            self.syncs.fetch_add(1, SeqCst);
            for b in self.pending.lock().unwrap().drain(..) {
                self.inner.write(b)?;
            }
            Ok(())
        }
        fn scan<'a>(
            &'a self,
            start: &[u8],
            end: &[u8],
        ) -> Box<dyn Iterator<Item = Result<crate::store::KvPair, StoreError>> + 'a> {
            self.inner.scan(start, end)
        }
        fn flush(&self) -> Result<(), StoreError> {
            Ok(())
        }
    }

    /// Writes `key` unsynced and returns the write's mark.
    fn write(store: &Unsynced, gc: &GroupCommit, key: &str) -> Mark {
        let mut b = WriteBatch::new();
        b.put(key.as_bytes().to_vec(), b"v".to_vec());
        store.write_unsynced(b).unwrap();
        gc.mark()
    }

    #[test]
    fn writes_made_before_a_sync_share_it() {
        let store = Unsynced::default();
        let gc = GroupCommit::default();
        let marks: Vec<Mark> = ["a", "b", "c"].iter().map(|k| write(&store, &gc, k)).collect();
        for m in marks {
            gc.sync_covering(m, &store).unwrap();
        }
        assert_eq!(store.syncs.load(SeqCst), 1);
        for k in ["a", "b", "c"] {
            assert!(store.inner.get(k.as_bytes()).unwrap().is_some(), "{k} synced");
        }
    }

    #[test]
    fn a_write_after_a_sync_needs_a_sync_of_its_own() {
        let store = Unsynced::default();
        let gc = GroupCommit::default();
        let a = write(&store, &gc, "a");
        gc.sync_covering(a, &store).unwrap();
        let b = write(&store, &gc, "b");
        // the sync of `a` is done, but it started before `b` was written
        gc.sync_covering(b, &store).unwrap();
        assert_eq!(store.syncs.load(SeqCst), 2);
        assert!(store.inner.get(b"b").unwrap().is_some());
        // `a` again: covered, nothing more to do
        gc.sync_covering(a, &store).unwrap();
        assert_eq!(store.syncs.load(SeqCst), 2);
    }

    #[test]
    fn a_failed_sync_is_retried_by_the_next_writer() {
        let store = Unsynced::default();
        let gc = GroupCommit::default();
        let (a, b) = (write(&store, &gc, "a"), write(&store, &gc, "b"));
        store.fail_next.store(true, SeqCst);
        assert!(gc.sync_covering(a, &store).is_err());
        assert!(store.inner.get(b"a").unwrap().is_none());
        // the failed sync does not count for `b`
        gc.sync_covering(b, &store).unwrap();
        assert!(store.inner.get(b"a").unwrap().is_some() && store.inner.get(b"b").unwrap().is_some());
    }

    #[test]
    fn concurrent_writers_are_all_synced_before_they_return() {
        let store = std::sync::Arc::new(Unsynced::default());
        let gc = std::sync::Arc::new(GroupCommit::default());
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (store, gc) = (store.clone(), gc.clone());
                std::thread::spawn(move || {
                    for i in 0..500 {
                        let key = format!("{t}/{i}");
                        let m = write(&store, &gc, &key);
                        gc.sync_covering(m, store.as_ref()).unwrap();
                        assert!(
                            store.inner.get(key.as_bytes()).unwrap().is_some(),
                            "{key} acknowledged unsynced"
                        );
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(store.syncs.load(SeqCst) <= 2000);
    }
}
