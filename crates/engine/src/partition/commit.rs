//! Group commit of synced writes (`--fsync`): a transaction writes its batch without
//! the sync ([`Store::write_unsynced`]: it survives a killed process, not yet a power
//! loss), then registers with the store's [`LogSyncer`], a thread of its own, and is
//! acknowledged when the thread answers. The thread takes every writer registered so
//! far, syncs once (the sync starts after all their writes returned, so it covers
//! them) and answers them all; writers that register during a sync wait for the next
//! one. The worker threads never wait for the disk, and since the partition's turn is
//! released before the sync, one partition's writers share syncs too.

use aztable_store::Store;
use std::sync::{Arc, Condvar, Mutex, Weak};
use tokio::sync::oneshot;

/// What a registered writer is told: whether its write is synced (the error's text if
/// not).
pub(super) type Synced = Result<(), String>;

/// The log-sync thread of one store; it ends when this is dropped.
pub(super) struct LogSyncer {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<Waiting>,
    wake: Condvar,
}

#[derive(Default)]
struct Waiting {
    /// Writers registered since the thread last took them.
    writers: Vec<oneshot::Sender<Synced>>,
    /// The thread waits on [`Shared::wake`] for writers.
    idle: bool,
    /// The thread is to end.
    closed: bool,
}

impl LogSyncer {
    /// Starts the thread for `store`, which it holds only while it syncs (so the
    /// store closes when its last owner drops it).
    pub(super) fn start(store: Weak<dyn Store>) -> std::io::Result<LogSyncer> {
        let shared = Arc::new(Shared::default());
        let theirs = Arc::clone(&shared);
        std::thread::Builder::new().name("log-sync".into()).spawn(move || theirs.run(&store))?;
        Ok(LogSyncer { shared })
    }

    /// Registers a writer whose unsynced write has returned: the answer comes once a
    /// sync that started after this call has finished. The sync happens whether or
    /// not anyone still listens.
    pub(super) fn register(&self) -> oneshot::Receiver<Synced> {
        let (tx, rx) = oneshot::channel();
        let mut waiting = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
        waiting.writers.push(tx);
        if waiting.idle {
            waiting.idle = false;
            self.shared.wake.notify_one();
        }
        rx
    }
}

impl Drop for LogSyncer {
    fn drop(&mut self) {
        let mut waiting = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
        waiting.closed = true;
        self.shared.wake.notify_one();
    }
}

impl Shared {
    /// The thread: takes the writers registered so far, syncs once, answers them all;
    /// ends once closed with nobody waiting.
    fn run(&self, store: &Weak<dyn Store>) {
        loop {
            let writers = {
                let mut waiting = self.state.lock().unwrap_or_else(|p| p.into_inner());
                while waiting.writers.is_empty() && !waiting.closed {
                    waiting.idle = true;
                    waiting = self.wake.wait(waiting).unwrap_or_else(|p| p.into_inner());
                }
                waiting.idle = false;
                if waiting.writers.is_empty() {
                    return;
                }
                std::mem::take(&mut waiting.writers)
            };
            let synced = match store.upgrade() {
                Some(store) => store.sync_log().map_err(|e| e.to_string()),
                None => Err("the store is closed".to_owned()),
            };
            for writer in writers {
                // a writer whose request was dropped no longer listens
                let _ = writer.send(synced.clone());
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use aztable_store::mem::MemStore;
    use aztable_store::{StoreError, WriteBatch};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
    use std::sync::mpsc;

    /// A store that syncs its writes, holding unsynced ones until a sync, and counting
    /// syncs. Unlike a real store it reads only what was synced: what a power loss
    /// would keep. With a `gate`, each sync waits for a permit from it.
    #[derive(Default)]
    pub(in crate::partition) struct Unsynced {
        pub(in crate::partition) inner: MemStore,
        pub(in crate::partition) pending: Mutex<Vec<WriteBatch>>,
        pub(in crate::partition) syncs: AtomicUsize,
        pub(in crate::partition) fail_next: AtomicBool,
        gate: Mutex<Option<mpsc::Receiver<()>>>,
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
            // what the sync covers is fixed when it starts
            let covered: Vec<WriteBatch> = self.pending.lock().unwrap().drain(..).collect();
            if let Some(gate) = self.gate.lock().unwrap().as_ref() {
                gate.recv().unwrap();
            }
            if self.fail_next.swap(false, SeqCst) {
                self.pending.lock().unwrap().splice(0..0, covered);
                return Err(StoreError::Engine("disk full".into()));
            }
            self.syncs.fetch_add(1, SeqCst);
            covered.into_iter().try_for_each(|b| self.inner.write(b))
        }
        fn scan<'a>(
            &'a self,
            start: &[u8],
            end: &[u8],
        ) -> Box<dyn Iterator<Item = Result<aztable_store::KvPair, StoreError>> + 'a> {
            self.inner.scan(start, end)
        }
        fn flush(&self) -> Result<(), StoreError> {
            Ok(())
        }
    }

    /// Writes `key` unsynced and registers the writer.
    fn write(store: &Unsynced, syncer: &LogSyncer, key: &str) -> oneshot::Receiver<Synced> {
        let mut b = WriteBatch::new();
        b.put(key.as_bytes().to_vec(), b"v".to_vec());
        store.write_unsynced(b).unwrap();
        syncer.register()
    }

    fn synced(store: &Unsynced, key: &str) -> bool {
        store.inner.get(key.as_bytes()).unwrap().is_some()
    }

    /// The answer of `rx`, waiting up to 10 s.
    fn answer(rx: oneshot::Receiver<Synced>) -> Synced {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut rx = rx;
        loop {
            match rx.try_recv() {
                Ok(answer) => return answer,
                Err(oneshot::error::TryRecvError::Empty) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(1))
                }
                Err(e) => panic!("no answer: {e:?}"),
            }
        }
    }

    /// A store whose syncs each wait for a permit, with the sender of the permits.
    fn gated() -> (Arc<Unsynced>, mpsc::Sender<()>) {
        let (permits, gate) = mpsc::channel();
        let store = Arc::new(Unsynced { gate: Mutex::new(Some(gate)), ..Default::default() });
        (store, permits)
    }

    fn syncer(store: &Arc<Unsynced>) -> LogSyncer {
        let weak: Weak<dyn Store> = Arc::downgrade(store) as Weak<Unsynced>;
        LogSyncer::start(weak).unwrap()
    }

    #[test]
    fn writers_registered_during_a_sync_share_the_next_and_wait_for_it() {
        let (store, permits) = gated();
        let syncer = syncer(&store);
        let a = write(&store, &syncer, "a");
        // the thread takes `a` and starts a sync, which waits at the gate
        while store.pending.lock().unwrap().len() == 1 {
            std::thread::yield_now();
        }
        let (mut b, c) = (write(&store, &syncer, "b"), write(&store, &syncer, "c"));
        permits.send(()).unwrap();
        assert_eq!(answer(a), Ok(()));
        assert!(synced(&store, "a"));
        // the sync in progress started before `b` was written: `b` waits for the next
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(b.try_recv().is_err(), "answered before a sync that covers it");
        assert!(!synced(&store, "b"));
        permits.send(()).unwrap();
        assert_eq!((answer(b), answer(c)), (Ok(()), Ok(())));
        assert!(synced(&store, "b") && synced(&store, "c"));
        assert_eq!(store.syncs.load(SeqCst), 2, "b and c shared one sync");
    }

    #[test]
    fn a_failed_sync_fails_its_writers_and_the_next_sync_covers_them() {
        let store = Arc::new(Unsynced::default());
        let syncer = syncer(&store);
        store.fail_next.store(true, SeqCst);
        assert!(answer(write(&store, &syncer, "a")).is_err());
        assert!(!synced(&store, "a"));
        assert_eq!(answer(write(&store, &syncer, "b")), Ok(()));
        assert!(synced(&store, "a") && synced(&store, "b"));
    }

    #[test]
    fn concurrent_writers_are_all_synced_before_they_are_answered() {
        let store = Arc::new(Unsynced::default());
        let syncer = Arc::new(syncer(&store));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (store, syncer) = (store.clone(), syncer.clone());
                std::thread::spawn(move || {
                    for i in 0..300 {
                        let key = format!("{t}/{i}");
                        assert_eq!(answer(write(&store, &syncer, &key)), Ok(()));
                        assert!(synced(&store, &key), "{key} answered unsynced");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(store.syncs.load(SeqCst) <= 1200);
    }

    #[test]
    fn the_thread_ends_when_its_syncer_is_dropped_and_holds_the_store_only_while_syncing() {
        let store = Arc::new(Unsynced::default());
        let syncer = syncer(&store);
        assert_eq!(answer(write(&store, &syncer, "a")), Ok(()));
        let (weak_store, shared) = (Arc::downgrade(&store), Arc::downgrade(&syncer.shared));
        drop(store);
        assert!(weak_store.upgrade().is_none(), "the idle thread keeps the store open");
        drop(syncer);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while shared.upgrade().is_some() {
            assert!(std::time::Instant::now() < deadline, "the thread did not end");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}
