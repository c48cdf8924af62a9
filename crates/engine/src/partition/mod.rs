//! PARTITION SERVER: the layer that owns consistency rules over the store.
//!
//! - Table catalog (`tables.rs`): create/delete/lookup of tables (per account,
//!   case-insensitive, case preserved). Each table gets a fresh numeric id, so deleting
//!   a table is one catalog delete plus one range tombstone over its entities: O(1)
//!   work, whatever the table holds, and a re-created table never sees old rows.
//! - Entity writes (here and `txn.rs`) are serialized per (table, PartitionKey) by
//!   striped locks held around read-check-write ([`Partitions::transact`]), so ETag
//!   checks are atomic while different partitions proceed in parallel; every
//!   transaction commits as one atomic [`WriteBatch`]. Request handlers first wait for
//!   their partition's turn (`turn.rs`, [`Partitions::transact_in_turn`]); with
//!   `--fsync` their writes share log syncs (`commit.rs`).
//! - Point reads (`read.rs`) go through an entity cache (`cache.rs`) of recently read
//!   entities, which every entity write updates (or invalidates) before it is
//!   acknowledged; reads without a lock follow the torn-row rule written there.
//! - Scans (`scan.rs`) stream from the store and stop at the page size: memory is
//!   bounded by the page, never by the table. A filter requiring `P eq 'value'` seeks
//!   past runs of rows that a table's value summary (`skip.rs`) rules out.
//! - Table ACLs (`acl.rs`), service properties (`props.rs`) and the migration of older
//!   data directories (`migrate.rs`).

mod acl;
mod cache;
mod commit;
mod migrate;
mod props;
mod read;
mod scan;
mod skip;
mod tables;
mod turn;
mod txn;

pub use migrate::{move_legacy_heaps, upgrade as upgrade_format, FORMAT_VERSION};
pub use scan::{Needs, Scan, ScanPage, SCAN_TIME_BUDGET};
pub use tables::TableInfo;
pub use txn::Txn;

use aztable_store::{keys, Store, StoreError, WriteBatch, WriteOp};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// What can go wrong below the service layer.
#[derive(Debug, thiserror::Error)]
pub enum PartitionError {
    /// The named table does not exist in the account.
    #[error("table not found")]
    TableNotFound,
    /// A table with that name (in any letter case) exists already.
    #[error("table already exists")]
    TableAlreadyExists,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

const STRIPES: usize = 256;
/// Picks a partition's stripe and turn: the same partition always hashes alike.
pub(super) const STRIPE_HASH: foldhash::fast::FixedState =
    foldhash::fast::FixedState::with_seed(0x6a09_e667_f3bc_c908);

/// The partition server over one store.
pub struct Partitions {
    store: Arc<dyn Store>,
    /// Striped locks over hash(table id, PartitionKey).
    stripes: Vec<Mutex<()>>,
    /// Writers' turns, striped over hash(account, table name, PartitionKey): an async
    /// queue in front of the stripes (which alone keep writes exclusive).
    turns: Vec<turn::Turn>,
    /// Entity writes hold it shared, table create/delete exclusively, so no write can
    /// land in a table while it is being deleted.
    catalog_gate: RwLock<()>,
    /// Serializes table id allocation.
    id_lock: Mutex<()>,
    /// Serializes read-modify-write updates of service properties.
    props_lock: Mutex<()>,
    /// Table records by name, so entity operations skip the catalog read.
    catalog_cache: tables::CatalogCache,
    /// Stored bytes of recently read entities, for point reads.
    entity_cache: cache::EntityCache,
    /// The log-sync thread of a store that syncs its writes (`--fsync`), started by
    /// the first write that needs it; `None` if it could not be started.
    log_syncer: OnceLock<Option<commit::LogSyncer>>,
    /// Tables' value summaries, for scans (`skip.rs`).
    summaries: Arc<skip::Summaries>,
}

/// What the entity cache may hold (RocksDB keeps a 40 MiB block cache beside it): a
/// hot set of about 12,000 entities of 1 KiB.
const ENTITY_CACHE_BYTES: usize = 16 << 20;

impl std::fmt::Debug for Partitions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Partitions").field("stripes", &self.stripes.len()).finish_non_exhaustive()
    }
}

impl Drop for Partitions {
    fn drop(&mut self) {
        // a summary being built lets go of the store
        self.summaries.close();
    }
}

impl Partitions {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Partitions {
            store,
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            turns: (0..STRIPES).map(|_| turn::Turn::default()).collect(),
            catalog_gate: RwLock::new(()),
            id_lock: Mutex::new(()),
            props_lock: Mutex::new(()),
            catalog_cache: tables::CatalogCache::default(),
            entity_cache: cache::EntityCache::new(ENTITY_CACHE_BYTES),
            log_syncer: OnceLock::new(),
            summaries: Arc::default(),
        }
    }

    /// Returns the underlying store (for shutdown flushes).
    pub fn store(&self) -> &dyn Store {
        self.store.as_ref()
    }

    fn stripe(&self, table_id: u64, pk: &str) -> &Mutex<()> {
        let mut h = STRIPE_HASH.build_hasher();
        table_id.hash(&mut h);
        pk.hash(&mut h);
        &self.stripes[(h.finish() as usize) % STRIPES]
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

    /// [`Partitions::transact`]; with `unsynced`, the write skips the store's sync
    /// (see [`Store::write_unsynced`]), and whether there was one is returned: it
    /// needs [`Partitions::sync_written`] before it is acknowledged.
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
        let _gate = self.catalog_gate.read().unwrap_or_else(|p| p.into_inner());
        let table_id = self.table_id(account, table)?.ok_or(PartitionError::TableNotFound)?;
        let _guard = self.stripe(table_id, pk).lock().unwrap_or_else(|p| p.into_inner());
        let mut txn = Txn::new(self.store.as_ref(), table_id);
        let out = f(&mut txn)?;
        let batch = txn.into_batch();
        if batch.is_empty() {
            return Ok((out, false));
        }
        let written = self.cache_updates(&batch);
        // before the rows can be seen: a scan must not skip a run that holds one
        self.summaries.written(table_id, &batch);
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

#[cfg(test)]
mod skip_tests;
#[cfg(test)]
mod tests;
