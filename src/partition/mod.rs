//! PARTITION SERVER: the layer that owns consistency rules over the store.
//!
//! - Table catalog: create/delete/lookup of tables (per account, case-insensitive,
//!   case preserved). Each table gets a fresh numeric id, so deleting a table is one
//!   catalog delete plus one range tombstone over its entities: O(1) work, whatever the
//!   table holds, and a re-created table never sees old rows.
//! - Entity writes are serialized per (table, PartitionKey) by striped locks held
//!   around read-check-write ([`Partitions::transact`]), so ETag checks are atomic
//!   while different partitions proceed in parallel; every transaction commits as one
//!   atomic [`WriteBatch`]. Request handlers first wait for their partition's turn
//!   ([`Partitions::transact_in_turn`]) on an async queue, so writers of one busy
//!   partition wait as parked tasks instead of blocking the runtime's worker threads.
//!   Batches (entity group transactions), SAS key ranges and per-partition throttling
//!   hook in here.
//! - Scans stream from the store and stop at the page size: memory is bounded by the
//!   page, never by the table.
//! - Point reads go through an [`cache::EntityCache`] of recently read entities, which
//!   every entity write updates (or invalidates) before it is acknowledged.

mod acl;
mod cache;
mod layout;
mod props;
mod tables;
mod txn;

pub use layout::move_legacy_heaps;
pub use tables::TableInfo;
pub use txn::Txn;

use crate::filter::Row;
use crate::model::{EdmRef, Entity};
use crate::store::{codec, keys, Store, StoreError, WriteBatch, WriteOp};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

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
const STRIPE_HASH: foldhash::fast::FixedState = foldhash::fast::FixedState::with_seed(0x6a09_e667_f3bc_c908);

/// How long one page of a scan may run before it is cut with a continuation (the
/// service's 5 seconds of execution per page).
pub const SCAN_TIME_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);

/// The partition server over one store.
pub struct Partitions {
    store: Arc<dyn Store>,
    /// Striped locks over hash(table id, PartitionKey).
    stripes: Vec<Mutex<()>>,
    /// Writers' turns, striped over hash(account, table name, PartitionKey): an async
    /// queue in front of the stripes (which alone keep writes exclusive).
    turns: Vec<Turn>,
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
}

/// One partition stripe's writers' turn: an async mutex, and how many writers wait for it.
#[derive(Default)]
struct Turn {
    lock: tokio::sync::Mutex<()>,
    /// Writers waiting in [`Turn::lock`] (a count kept right even when a waiting request
    /// is dropped: see [`Queued`]).
    queued: AtomicUsize,
}

impl Turn {
    /// Whether a writer is waiting for this turn.
    fn contended(&self) -> bool {
        self.queued.load(Ordering::Relaxed) > 0
    }
}

/// One writer counted in [`Turn::queued`] for as long as it lives.
struct Queued<'a>(&'a AtomicUsize);

impl<'a> Queued<'a> {
    fn join(queued: &'a AtomicUsize) -> Self {
        queued.fetch_add(1, Ordering::Relaxed);
        Queued(queued)
    }
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What the entity cache may hold (RocksDB keeps a 40 MiB block cache beside it): a
/// hot set of about 12,000 entities of 1 KiB.
const ENTITY_CACHE_BYTES: usize = 16 << 20;

/// One page of a scan.
#[derive(Debug, Default)]
pub struct ScanPage {
    pub entities: Vec<Entity>,
    /// Where the next page starts (PartitionKey, RowKey), if there is more.
    pub next: Option<(String, String)>,
}

impl Partitions {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Partitions {
            store,
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            turns: (0..STRIPES).map(|_| Turn::default()).collect(),
            catalog_gate: RwLock::new(()),
            id_lock: Mutex::new(()),
            props_lock: Mutex::new(()),
            catalog_cache: tables::CatalogCache::default(),
            entity_cache: cache::EntityCache::new(ENTITY_CACHE_BYTES),
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

    /// The writers' turn of a partition, found from the names in the request (table
    /// names compare without letter case), so no table lookup comes first.
    fn turn(&self, account: &str, table: &str, pk: &str) -> &Turn {
        let mut h = STRIPE_HASH.build_hasher();
        account.hash(&mut h);
        table.bytes().for_each(|b| h.write_u8(b.to_ascii_lowercase()));
        pk.hash(&mut h);
        &self.turns[(h.finish() as usize) % STRIPES]
    }

    /// [`Partitions::transact`] once the partition's earlier writers are done. A writer
    /// that finds its partition busy waits here as a parked task; the worker thread
    /// goes on serving other requests instead of sleeping on the stripe's mutex (with
    /// two worker threads, one blocked writer halved the server). A writer that leaves
    /// others waiting lets the next one commit before it finishes its own request.
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
        let turn = self.turn(account, table, pk);
        let held = {
            let _queued = Queued::join(&turn.queued);
            turn.lock.lock().await
        };
        let out = self.transact(account, table, pk, f);
        let handoff = turn.contended();
        drop(held);
        if handoff {
            // Releasing the turn woke the next writer into this worker's LIFO slot,
            // where no other worker can steal it: it would wait for all of this
            // request's remaining work (rendering, sending the response). Yielding runs
            // it first and leaves this task in the stealable queue, so one partition's
            // commits follow each other while the other worker sends their responses
            // (inserts into one partition at 16 connections: +20 % requests/s).
            tokio::task::yield_now().await;
        }
        out
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
        let _gate = self.catalog_gate.read().unwrap_or_else(|p| p.into_inner());
        let info = self.lookup_table(account, table)?.ok_or(PartitionError::TableNotFound)?;
        let _guard = self.stripe(info.id, pk).lock().unwrap_or_else(|p| p.into_inner());
        let mut txn = Txn::new(self.store.as_ref(), info.id);
        let out = f(&mut txn)?;
        let batch = txn.into_batch();
        if !batch.is_empty() {
            let written = self.cache_updates(&batch);
            let result = self.store.write(batch);
            // before the write is acknowledged (and even if it failed: it may have landed)
            for (key, row) in written {
                self.entity_cache.written(&key, row.filter(|_| result.is_ok()));
            }
            result.map_err(PartitionError::from)?;
        }
        Ok(out)
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

    /// Reads one entity without taking any lock (but for the rare read that meets a
    /// concurrent write between the entity's head and its heap, which is repeated
    /// under the partition's lock).
    pub fn get_entity(
        &self,
        account: &str,
        table: &str,
        pk: &str,
        rk: &str,
    ) -> Result<Option<Entity>, PartitionError> {
        let info = self.lookup_table(account, table)?.ok_or(PartitionError::TableNotFound)?;
        let key = keys::entity_key(info.id, pk, rk);
        if let Some((head, heap)) = self.entity_cache.get(&key) {
            return Ok(Some(codec::decode_entity(pk.to_owned(), rk.to_owned(), &head, heap.as_deref())?));
        }
        // taken before reading, so a write landing meanwhile keeps the read out of the cache
        let generation = self.entity_cache.generation(&key);
        let Some(head) = self.store.get(&key)? else {
            return Ok(None);
        };
        let decoded = read_heap(self.store.as_ref(), &key, &head).and_then(|heap| {
            Ok((codec::decode_entity(pk.to_owned(), rk.to_owned(), &head, heap.as_deref())?, heap))
        });
        match decoded {
            Ok((e, heap)) => {
                self.entity_cache.insert(&key, (head.into(), heap.map(Into::into)), generation);
                Ok(Some(e))
            }
            // the heap is of another write, or gone: a write came between the two reads
            Err(StoreError::Torn) => Ok(self.read_entity_locked(info.id, &key, pk, rk)?),
            Err(e) => Err(e.into()),
        }
    }

    /// [`read_entity`] with the partition's write lock held, so no write can come
    /// between reading the head and the heap.
    fn read_entity_locked(
        &self,
        table_id: u64,
        key: &[u8],
        pk: &str,
        rk: &str,
    ) -> Result<Option<Entity>, StoreError> {
        let _guard = self.stripe(table_id, pk).lock().unwrap_or_else(|p| p.into_inner());
        Ok(read_entity(self.store.as_ref(), key, pk, rk).map_err(torn_is_corrupt)?.map(|(e, _)| e))
    }

    /// Decodes the entity of a scanned head, with `heap_in_hand` when the scan holds
    /// its heap already, else reading the heap if it has one. `None` when a concurrent
    /// write changed or deleted it after the scan read the head and it no longer
    /// exists; after such a write it is re-read under the partition lock (`true`: the
    /// head the scan saw is stale, so a filter must see the entity again).
    fn complete_row(
        &self,
        table_id: u64,
        key: &[u8],
        head: &[u8],
        heap_in_hand: Option<&[u8]>,
    ) -> Result<Option<(Entity, bool)>, StoreError> {
        let (_, pk, rk) = decode_key(key)?;
        let decoded = match heap_in_hand.map(|h| codec::decode_entity(pk.clone(), rk.clone(), head, Some(h)))
        {
            Some(Ok(e)) => Ok(e),
            // no heap in hand, or one of another write: read it now
            _ => decode_head(self.store.as_ref(), key, pk.clone(), rk.clone(), head).map(|(e, _)| e),
        };
        match decoded {
            Ok(e) => Ok(Some((e, false))),
            Err(StoreError::Torn) => Ok(self.read_entity_locked(table_id, key, &pk, &rk)?.map(|e| (e, true))),
            Err(e) => Err(e),
        }
    }

    /// Scans a table in (PartitionKey, RowKey) order over `range`, resuming at
    /// `resume` (inclusive) when given, keeping at most `limit` entities for which
    /// `keep` is true. Stops early once `max_examined` entities were read or
    /// [`SCAN_TIME_BUDGET`] has passed (possibly with no entity kept: an empty page with a
    /// continuation is legal), returning a continuation so the client can resume.
    ///
    /// With [`ScanRange::needs`] set, `keep` sees a projection that borrows just the
    /// properties it reads from the stored bytes; only kept rows are decoded in full.
    #[allow(clippy::too_many_arguments)]
    pub fn scan_entities(
        &self,
        account: &str,
        table: &str,
        range: &ScanRange,
        resume: Option<(&str, &str)>,
        limit: usize,
        max_examined: usize,
        mut keep: impl FnMut(&dyn Row) -> bool,
    ) -> Result<ScanPage, PartitionError> {
        let info = self.lookup_table(account, table)?.ok_or(PartitionError::TableNotFound)?;
        let (table_start, heads_end) = keys::table_heads_range(info.id);
        let mut from = range.from.as_ref().map_or(table_start, |p| p.encode(info.id));
        if let Some((pk, rk)) = resume {
            from = from.max(keys::entity_key(info.id, pk, rk));
        }
        // (the table's heaps follow its heads: no bound may reach into them)
        let to = range.to.as_ref().map_or(heads_end.clone(), |p| p.encode(info.id)).min(heads_end);
        let started = std::time::Instant::now();
        let mut page = ScanPage::default();
        let needs = range.needs.as_ref().filter(|n| n.properties.len() <= MAX_PROJECTED);
        let (mut pk_buf, mut rk_buf) = (String::new(), String::new());
        // Without a filter, or with one that reads only the keys (whose ranges the planner
        // already cut to, as in a range query), nearly every row is kept: its heap comes
        // from a second iterator in step with the heads rather than one point read each
        // (a range query of 10 rows spent 15 % of the server in those reads). With a
        // filter on properties, kept rows are usually sparse, and the cursor would read
        // every heap it steps over.
        let dense = needs.is_none_or(|n| n.properties.is_empty());
        let mut heaps = dense.then(|| HeapCursor::new(self.store.as_ref(), &to));
        let mut examined = 0usize;
        self.store.scan_with(&from, &to, &mut |k, v| {
            let over_budget =
                examined == max_examined || (examined % 256 == 255 && started.elapsed() >= SCAN_TIME_BUDGET);
            if page.entities.len() == limit || over_budget {
                let (_, pk, rk) = decode_key(k)?;
                page.next = Some((pk, rk));
                return Ok(false);
            }
            examined += 1;
            let kept = match needs {
                Some(needs) => {
                    if needs.keys && !keys::decode_entity_key_into(k, &mut pk_buf, &mut rk_buf) {
                        return Err(undecodable_key());
                    }
                    let mut heap = None;
                    let mut slots = [None; MAX_PROJECTED];
                    let mut projected = codec::decode_projection(v, None, &needs.properties, &mut slots);
                    if let Ok(None) = projected {
                        // the filter reads a long value, which lives in the heap
                        heap = self.store.get(&keys::heap_key(k))?;
                        projected = match &heap {
                            Some(h) => codec::decode_projection(v, Some(h), &needs.properties, &mut slots),
                            None => Err(StoreError::Torn),
                        };
                    }
                    // Some(verdict) of the filter on the head; None: it changed under the scan
                    let verdict = match projected {
                        Ok(Some(timestamp)) => {
                            let row = Projection {
                                partition_key: &pk_buf,
                                row_key: &rk_buf,
                                timestamp,
                                names: &needs.properties,
                                slots: &slots,
                            };
                            Some(keep(&row))
                        }
                        Err(StoreError::Torn) | Ok(None) => None,
                        Err(e) => return Err(e),
                    };
                    match verdict {
                        Some(false) => None,
                        _ => match self.complete_row(info.id, k, v, in_hand(&heap, &mut heaps, k)?)? {
                            // re-read: the filter must see what is returned
                            Some((e, stale)) if stale || verdict.is_none() => keep(&e).then_some(e),
                            Some((e, _)) => Some(e),
                            None => None,
                        },
                    }
                }
                None => {
                    let in_hand = match heaps.as_mut() {
                        Some(cursor) => cursor.find(&keys::heap_key(k))?,
                        None => None,
                    };
                    match self.complete_row(info.id, k, v, in_hand)? {
                        Some((e, _)) => keep(&e).then_some(e),
                        None => None,
                    }
                }
            };
            page.entities.extend(kept);
            Ok(true)
        })?;
        Ok(page)
    }
}

/// The heap a scan holds for the row under `key`: the one it read for the filter, else
/// what the heap cursor, if the scan keeps one, finds.
fn in_hand<'h>(
    read: &'h Option<Vec<u8>>,
    cursor: &'h mut Option<HeapCursor<'_>>,
    key: &[u8],
) -> Result<Option<&'h [u8]>, StoreError> {
    match (read, cursor) {
        (Some(heap), _) => Ok(Some(heap)),
        (None, Some(cursor)) => cursor.find(&keys::heap_key(key)),
        (None, None) => Ok(None),
    }
}

/// Reads the heaps of a scan's rows with a forward iterator over the heap range of the
/// scanned head range: in step with the heads where the scan keeps row after row, and
/// started again at the wanted key where it keeps a row far from the last one (a
/// key-only filter the planner could not narrow, such as `RowKey eq 'x'`), so it never
/// reads more than [`HEAP_CURSOR_STEPS`] heaps it does not need per row it keeps.
struct HeapCursor<'a> {
    store: &'a dyn Store,
    to: Vec<u8>,
    iter: Option<Box<dyn Iterator<Item = Result<crate::store::KvPair, StoreError>> + 'a>>,
    current: Option<crate::store::KvPair>,
}

/// Heaps a [`HeapCursor`] steps over before it seeks instead.
const HEAP_CURSOR_STEPS: usize = 8;

impl<'a> HeapCursor<'a> {
    /// For heads below `to`.
    fn new(store: &'a dyn Store, to: &[u8]) -> Self {
        HeapCursor { store, to: keys::heap_key(to), iter: None, current: None }
    }

    /// The heap stored under `heap_key`, if there is one; keys must be asked for in
    /// ascending order.
    fn find(&mut self, heap_key: &[u8]) -> Result<Option<&[u8]>, StoreError> {
        let mut steps = 0;
        while self.current.as_ref().is_none_or(|(k, _)| k.as_slice() < heap_key) {
            let iter = match &mut self.iter {
                Some(iter) if steps < HEAP_CURSOR_STEPS => iter,
                // first use, or still short of the key: start at it
                _ => {
                    steps = 0;
                    self.iter.insert(self.store.scan(heap_key, &self.to))
                }
            };
            steps += 1;
            match iter.next() {
                Some(pair) => self.current = Some(pair?),
                None => {
                    self.current = None;
                    return Ok(None);
                }
            }
        }
        Ok(self.current.as_ref().filter(|(k, _)| k.as_slice() == heap_key).map(|(_, v)| v.as_slice()))
    }
}

/// Properties a projection can hold; a filter names at most 15 (one per comparison).
const MAX_PROJECTED: usize = 16;

fn undecodable_key() -> StoreError {
    StoreError::Corrupt("undecodable entity key".into())
}

fn decode_key(k: &[u8]) -> Result<(u64, String, String), StoreError> {
    keys::decode_entity_key(k).ok_or_else(undecodable_key)
}

/// Reads an entity by its key: the head and, when it has one, the heap (the bool).
/// [`StoreError::Torn`] when a write came between the two reads.
fn read_entity(
    store: &dyn Store,
    key: &[u8],
    pk: &str,
    rk: &str,
) -> Result<Option<(Entity, bool)>, StoreError> {
    // (one MultiGet of both keys measured slower than two reads)
    match store.get(key)? {
        Some(head) => decode_head(store, key, pk.to_owned(), rk.to_owned(), &head).map(Some),
        None => Ok(None),
    }
}

/// Decodes a head read under `key`, reading its heap when it has one (the bool).
/// [`StoreError::Torn`] when the heap is of another write, or gone.
fn decode_head(
    store: &dyn Store,
    key: &[u8],
    pk: String,
    rk: String,
    head: &[u8],
) -> Result<(Entity, bool), StoreError> {
    let heap = read_heap(store, key, head)?;
    Ok((codec::decode_entity(pk, rk, head, heap.as_deref())?, heap.is_some()))
}

/// The heap of a head read under `key`, when the head has one; [`StoreError::Torn`] when
/// it should and is gone.
fn read_heap(store: &dyn Store, key: &[u8], head: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
    match codec::heap_needed(head)? {
        None => Ok(None),
        Some(_) => store.get(&keys::heap_key(key))?.ok_or(StoreError::Torn).map(Some),
    }
}

/// Under the partition lock a head and its heap cannot be torn: if they are, the
/// store is corrupt.
fn torn_is_corrupt(e: StoreError) -> StoreError {
    match e {
        StoreError::Torn => StoreError::Corrupt("entity heap does not belong to its head".into()),
        e => e,
    }
}

/// A scanned row as a filter sees it: the keys (when the filter reads them), the
/// Timestamp and the named properties, all borrowed.
struct Projection<'a> {
    partition_key: &'a str,
    row_key: &'a str,
    timestamp: crate::model::Ticks,
    names: &'a [String],
    slots: &'a [Option<EdmRef<'a>>],
}

impl Row for Projection<'_> {
    fn partition_key(&self) -> &str {
        self.partition_key
    }
    fn row_key(&self) -> &str {
        self.row_key
    }
    fn timestamp(&self) -> crate::model::Ticks {
        self.timestamp
    }
    fn property(&self, name: &str) -> Option<EdmRef<'_>> {
        let i = self.names.iter().position(|n| n == name)?;
        self.slots.get(i).copied().flatten()
    }
}

/// A position in a table's (PartitionKey, RowKey) order, between rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPos {
    /// Just before (`after: false`) or just after (`after: true`) the row (pk, rk).
    Row { pk: String, rk: String, after: bool },
    /// Before the first row of the partition.
    PartitionStart(String),
    /// After the last row of the partition.
    PartitionEnd(String),
}

impl KeyPos {
    /// The store key at this position (a scan bound).
    fn encode(&self, table_id: u64) -> Vec<u8> {
        match self {
            KeyPos::Row { pk, rk, after } => {
                let mut k = keys::entity_key(table_id, pk, rk);
                if *after {
                    // the smallest key greater than the row's own
                    k.push(0);
                }
                k
            }
            KeyPos::PartitionStart(pk) => keys::partition_range(table_id, pk).0,
            KeyPos::PartitionEnd(pk) => keys::partition_range(table_id, pk).1,
        }
    }
}

/// The part of a table a scan covers: rows between `from` and `to` (unbounded when
/// `None`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanRange {
    pub from: Option<KeyPos>,
    pub to: Option<KeyPos>,
    /// When set, the scan's `keep` predicate reads only what this names: rows are
    /// decoded in full only once kept.
    pub needs: Option<Needs>,
}

/// What a scan's `keep` predicate reads of a row, besides its Timestamp.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Needs {
    /// Custom properties by name.
    pub properties: Vec<String>,
    /// Whether it reads PartitionKey or RowKey.
    pub keys: bool,
}

#[cfg(test)]
mod tests;
