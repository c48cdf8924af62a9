//! [`Writes`]: the write path. Entity writes are serialized per (table, PartitionKey) by
//! the striped locks (`stripes.rs`), held around read-check-write
//! ([`Writes::transact`]), so ETag checks are atomic while different partitions proceed
//! in parallel; every transaction (`txn.rs`) commits as one atomic [`WriteBatch`].
//! Request handlers first wait for their partition's turn (`turn.rs`,
//! [`Writes::transact_in_turn`]); with `--fsync` their writes share log syncs
//! (`commit.rs`).
//!
//! Before a batch reaches the store, its rows are recorded in the table's value summary
//! (`skip.rs`: a scan must not skip a run that holds one), and before it is
//! acknowledged, the entity cache takes each written row or drops it (`cache.rs`: once
//! a write is acknowledged, no read sees the value it replaced).

use super::cache::{self, EntityCache};
use super::catalog::Catalog;
use super::commit;
use super::skip::Summaries;
use super::stripes::Stripes;
use super::turn::Turns;
use super::{PartitionError, Txn};
use aztable_store::{keys, Store, StoreError, WriteBatch, WriteOp};
use std::sync::{Arc, OnceLock};

/// See the module documentation.
pub struct Writes {
    store: Arc<dyn Store>,
    /// Every write holds its table open (the catalog gate shared).
    catalog: Arc<Catalog>,
    pub(super) stripes: Arc<Stripes>,
    /// Writers' turns: an async queue in front of the stripes (which alone keep writes
    /// exclusive).
    pub(super) turns: Turns,
    /// The log-sync thread of a store that syncs its writes (`--fsync`), started by
    /// the first write that needs it; `None` if it could not be started.
    log_syncer: OnceLock<Option<commit::LogSyncer>>,
    /// Updated (or invalidated) by every entity write before it is acknowledged.
    entity_cache: Arc<EntityCache>,
    /// Told of every write before it reaches the store.
    summaries: Arc<Summaries>,
}

impl std::fmt::Debug for Writes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writes").finish_non_exhaustive()
    }
}

impl Writes {
    pub(super) fn new(
        store: Arc<dyn Store>,
        catalog: Arc<Catalog>,
        stripes: Arc<Stripes>,
        entity_cache: Arc<EntityCache>,
        summaries: Arc<Summaries>,
    ) -> Self {
        Writes {
            store,
            catalog,
            stripes,
            turns: Turns::default(),
            log_syncer: OnceLock::new(),
            entity_cache,
            summaries,
        }
    }

    /// Runs `f` over one partition of a table with the partition's write lock held,
    /// then commits everything `f` staged as one atomic batch. Nothing is written when
    /// `f` fails.
    pub fn transact<R, E>(
        &self,
        account: &str,
        table: &str,
        pk: &str,
        f: impl FnOnce(&mut Txn<'_>) -> Result<R, E>,
    ) -> Result<R, E>
    where
        E: From<PartitionError>,
    {
        let (out, _) = self.transact_with(account, table, pk, f, false)?;
        Ok(out)
    }

    /// [`Writes::transact`] once the partition's earlier writers are done. A writer
    /// that finds its partition busy waits here as a parked task; the worker thread
    /// goes on serving other requests instead of sleeping on the stripe's mutex (with
    /// two worker threads, one blocked writer halved the server). A writer that leaves
    /// others waiting lets the next one commit before it finishes its own request.
    ///
    /// With a store that syncs its writes (`--fsync`) the write skips the sync, the
    /// turn is released, and the log-sync thread's next sync covers it, shared with
    /// the writers registered meanwhile (`commit.rs`): the worker threads never wait
    /// for the disk, and one partition's writers share syncs too. The write is
    /// acknowledged only after that sync.
    pub async fn transact_in_turn<R, E>(
        &self,
        account: &str,
        table: &str,
        pk: &str,
        f: impl FnOnce(&mut Txn<'_>) -> Result<R, E>,
    ) -> Result<R, E>
    where
        E: From<PartitionError>,
    {
        let turn = self.turns.of(account, table, pk);
        let held = turn.take().await;
        let out = self.transact_with(account, table, pk, f, self.store.syncs_writes());
        let handoff = turn.contended();
        drop(held);
        // Registered before anything else can cancel this request: once written, the
        // write is synced even if its client goes away.
        let synced = matches!(out, Ok((_, true))).then(|| self.sync_written());
        if handoff {
            // Releasing the turn woke the next writer into this worker's LIFO slot,
            // where no other worker can steal it: it would wait for all of this
            // request's remaining work (rendering, sending the response). Yielding runs
            // it first and leaves this task in the stealable queue, so one partition's
            // commits follow each other while the other worker sends their responses
            // (inserts into one partition at 16 connections: +20 % requests/s).
            tokio::task::yield_now().await;
        }
        let (out, _) = out?;
        if let Some(synced) = synced {
            let synced = synced.await.unwrap_or_else(|_| Err("the log-sync thread ended".to_owned()));
            synced.map_err(|e| PartitionError::Store(StoreError::Engine(e)))?;
        }
        Ok(out)
    }

    /// [`Writes::transact`]; with `unsynced`, the write skips the store's sync
    /// (see [`Store::write_unsynced`]), and whether there was one is returned: it
    /// needs [`Writes::sync_written`] before it is acknowledged.
    fn transact_with<R, E>(
        &self,
        account: &str,
        table: &str,
        pk: &str,
        f: impl FnOnce(&mut Txn<'_>) -> Result<R, E>,
        unsynced: bool,
    ) -> Result<(R, bool), E>
    where
        E: From<PartitionError>,
    {
        let open = self.catalog.open(account, table)?;
        let _guard = self.stripes.lock(open.id, pk);
        let mut txn = Txn::new(self.store.as_ref(), open.id);
        let out = f(&mut txn)?;
        let batch = txn.into_batch();
        if batch.is_empty() {
            return Ok((out, false));
        }
        let written = self.cache_updates(&batch);
        // before the rows can be seen: a scan must not skip a run that holds one
        self.summaries.written(open.id, &batch);
        let result = match unsynced {
            true => self.store.write_unsynced(batch),
            false => self.store.write(batch),
        };
        // before the write is acknowledged (and even if it failed: it may have landed)
        for (key, row) in written {
            self.entity_cache.written(&key, row.filter(|_| result.is_ok()));
        }
        result.map_err(PartitionError::from)?;
        Ok((out, unsynced))
    }

    /// Asks for a log sync covering the unsynced writes that have returned so far
    /// (`commit.rs`); the answer says whether it happened. Without the log-sync thread
    /// (it could not be started) the sync happens here, blocking.
    fn sync_written(&self) -> tokio::sync::oneshot::Receiver<commit::Synced> {
        let syncer = self.log_syncer.get_or_init(|| {
            let store: std::sync::Weak<dyn Store> = Arc::downgrade(&self.store);
            commit::LogSyncer::start(store)
                .inspect_err(|e| tracing::error!(error = %e, "could not start the log-sync thread"))
                .ok()
        });
        match syncer {
            Some(syncer) => syncer.register(),
            None => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                let _ = tx.send(self.store.sync_log().map_err(|e| e.to_string()));
                rx
            }
        }
    }

    /// The entity keys `batch` writes, each with the row it leaves stored when that row
    /// is worth handing to the entity cache (the key is cached now: a hot entity).
    fn cache_updates(&self, batch: &WriteBatch) -> Vec<(Vec<u8>, Option<cache::CachedRow>)> {
        let mut updates = Vec::new();
        // the heaps the batch writes, indexed once, and only when a cached key needs one
        let mut heaps: Option<foldhash::HashMap<&[u8], &[u8]>> = None;
        for op in &batch.ops {
            match op {
                WriteOp::Put(k, head) if keys::is_entity_key(k) => {
                    let row = self.entity_cache.contains(k).then(|| {
                        let heaps = heaps.get_or_insert_with(|| {
                            (batch.ops.iter())
                                .filter_map(|op| match op {
                                    WriteOp::Put(k, v) if !keys::is_entity_key(k) => Some((&k[..], &v[..])),
                                    _ => None,
                                })
                                .collect()
                        });
                        let heap = heaps.get(&keys::heap_key(k)[..]).map(|&h| h.into());
                        (head.as_slice().into(), heap)
                    });
                    updates.push((k.clone(), row));
                }
                WriteOp::Delete(k) if keys::is_entity_key(k) => updates.push((k.clone(), None)),
                _ => {}
            }
        }
        updates
    }
}
