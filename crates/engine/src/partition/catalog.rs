//! [`Catalog`]: the table catalog. Per-account table records keyed by lowercase name,
//! each with a numeric id that prefixes the table's entity keys, so deleting a table is
//! one catalog delete plus one range tombstone over its entities: O(1) work, whatever
//! the table holds, and a re-created table never sees old rows.
//!
//! The catalog gate lives here: Create and Delete Table hold it exclusively, and every
//! write into a table holds it shared through [`Catalog::open`] for as long as it
//! writes, so no write can land in a table while it is being deleted.

use super::cache::EntityCache;
use super::skip::Summaries;
use super::PartitionError;
use aztable_store::codec::{self, TableRecord};
use aztable_store::{keys, Store, WriteBatch};
use foldhash::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard};

/// `[start, end)` of stored keys.
type KeyRange = (Vec<u8>, Vec<u8>);

/// Tables read per Query Tables page before it is cut with a continuation.
pub(super) const MAX_TABLES_EXAMINED: usize = 10_000;

/// A table as the catalog knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableInfo {
    pub id: u64,
    /// The name with the letter case it was created with.
    pub name: String,
}

/// Tables the cache remembers at most; when full it starts over.
const CATALOG_CACHE_ENTRIES: usize = 4096;

/// Found catalog records by store key, so an entity operation does not read the
/// catalog from the store. Only positive lookups are cached. A fill races with a
/// concurrent Delete Table safely: the delete first writes the store, then bumps the
/// generation and evicts; a lookup that read the store before that write fills only
/// if the generation it saw before reading is still current, and a fill that slips in
/// before the eviction is evicted by it.
#[derive(Debug, Default)]
pub(super) struct CatalogCache {
    map: RwLock<HashMap<Vec<u8>, TableInfo>>,
    generation: AtomicU64,
}

impl CatalogCache {
    fn get(&self, key: &[u8]) -> Option<TableInfo> {
        self.map.read().unwrap_or_else(|p| p.into_inner()).get(key).cloned()
    }

    fn id(&self, key: &[u8]) -> Option<u64> {
        self.map.read().unwrap_or_else(|p| p.into_inner()).get(key).map(|info| info.id)
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn fill(&self, key: Vec<u8>, info: &TableInfo, seen_generation: u64) {
        let mut map = self.map.write().unwrap_or_else(|p| p.into_inner());
        if self.generation.load(Ordering::Acquire) != seen_generation {
            return;
        }
        if map.len() >= CATALOG_CACHE_ENTRIES {
            map.clear();
        }
        map.insert(key, info.clone());
    }

    fn forget(&self, key: &[u8]) {
        let mut map = self.map.write().unwrap_or_else(|p| p.into_inner());
        self.generation.fetch_add(1, Ordering::AcqRel);
        map.remove(key);
    }
}

/// See the module documentation.
pub struct Catalog {
    store: Arc<dyn Store>,
    /// Held shared by writes into a table ([`Catalog::open`]), exclusively by table
    /// create and delete.
    gate: RwLock<()>,
    /// Serializes table id allocation.
    ids: Mutex<()>,
    /// Table records by name, so entity operations skip the catalog read.
    cache: CatalogCache,
    /// What Delete Table forgets besides the records: every cached entity (the cache
    /// is not indexed by table) and the table's value summary.
    entity_cache: Arc<EntityCache>,
    summaries: Arc<Summaries>,
}

/// A table held open for a write: its id, with the catalog gate held shared until this
/// drops, so the table cannot be deleted meanwhile.
pub(super) struct OpenTable<'a> {
    pub(super) id: u64,
    _gate: RwLockReadGuard<'a, ()>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog").finish_non_exhaustive()
    }
}

impl Catalog {
    pub(super) fn new(
        store: Arc<dyn Store>,
        entity_cache: Arc<EntityCache>,
        summaries: Arc<Summaries>,
    ) -> Self {
        Catalog {
            store,
            gate: RwLock::new(()),
            ids: Mutex::new(()),
            cache: CatalogCache::default(),
            entity_cache,
            summaries,
        }
    }

    /// Holds the table open for a write (the catalog gate shared); `TableNotFound` when
    /// there is no such table.
    pub(super) fn open(&self, account: &str, table: &str) -> Result<OpenTable<'_>, PartitionError> {
        let gate = self.gate.read().unwrap_or_else(|p| p.into_inner());
        let id = self.table_id(account, table)?.ok_or(PartitionError::TableNotFound)?;
        Ok(OpenTable { id, _gate: gate })
    }

    /// Looks a table up by name (case-insensitive). Every entity operation starts
    /// here, so found tables are remembered in `CatalogCache`.
    pub fn lookup_table(&self, account: &str, name: &str) -> Result<Option<TableInfo>, PartitionError> {
        let key = keys::table_key(account, name);
        if let Some(info) = self.cache.get(&key) {
            return Ok(Some(info));
        }
        let generation = self.cache.generation();
        match self.store.get(&key)? {
            Some(v) => {
                let rec = codec::decode_table(&v)?;
                let info = TableInfo { id: rec.id, name: rec.name };
                self.cache.fill(key, &info, generation);
                Ok(Some(info))
            }
            None => Ok(None),
        }
    }

    /// The id of a table found by name (as [`Catalog::lookup_table`]), without
    /// allocating when the table is cached: every entity operation starts here.
    pub fn table_id(&self, account: &str, name: &str) -> Result<Option<u64>, PartitionError> {
        thread_local! {
            static KEY: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let cached = KEY.with(|key| {
            let mut key = key.borrow_mut();
            key.clear();
            keys::push_table_key(&mut key, account, name);
            self.cache.id(&key)
        });
        match cached {
            Some(id) => Ok(Some(id)),
            None => Ok(self.lookup_table(account, name)?.map(|info| info.id)),
        }
    }

    /// Creates a table; `TableAlreadyExists` if one exists with the name in any case.
    pub fn create_table(&self, account: &str, name: &str) -> Result<TableInfo, PartitionError> {
        let _gate = self.gate.write().unwrap_or_else(|p| p.into_inner());
        if self.lookup_table(account, name)?.is_some() {
            return Err(PartitionError::TableAlreadyExists);
        }
        let _ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        let id = match self.store.get(keys::NEXT_TABLE_ID_KEY)? {
            Some(v) => codec::decode_u64(&v)?,
            None => 1,
        };
        let rec = TableRecord { id, name: name.to_owned() };
        let mut batch = WriteBatch::new();
        batch.put(keys::NEXT_TABLE_ID_KEY.to_vec(), codec::encode_u64(id + 1));
        batch.put(keys::table_key(account, name), codec::encode_table(&rec));
        self.store.write(batch)?;
        Ok(TableInfo { id, name: name.to_owned() })
    }

    /// Deletes a table, its stored access policies and, with one range tombstone, all of
    /// its entities, in one write batch; then lets the store free their space at once.
    pub fn delete_table(&self, account: &str, name: &str) -> Result<(), PartitionError> {
        let (start, end) = self.delete_table_record(account, name)?;
        // The delete is committed: failing to free space early is no error of it.
        if let Err(e) = self.store.reclaim_deleted_range(&start, &end) {
            tracing::warn!(error = %e, "could not drop the files of a deleted table");
        }
        Ok(())
    }

    /// [`Catalog::delete_table`]'s write; returns the key range it emptied (the
    /// table's entity heads and heaps).
    fn delete_table_record(&self, account: &str, name: &str) -> Result<KeyRange, PartitionError> {
        let _gate = self.gate.write().unwrap_or_else(|p| p.into_inner());
        let info = self.lookup_table(account, name)?.ok_or(PartitionError::TableNotFound)?;
        let (start, end) = keys::table_entities_range(info.id);
        let mut batch = WriteBatch::new();
        batch.delete(keys::table_key(account, name));
        batch.delete(keys::table_acl_key(account, name));
        batch.delete_range(start.clone(), end.clone());
        let result = self.store.write(batch);
        self.entity_cache.clear();
        result?;
        self.summaries.forget(info.id);
        self.cache.forget(&keys::table_key(account, name));
        Ok((start, end))
    }

    /// Lists tables of an account in (case-insensitive) name order, starting at
    /// `from` (a lowercase name, inclusive), at most `limit` of those `keep` accepts;
    /// also returns the lowercase name the next page starts at, if any.
    ///
    /// A full page looks further for one more table `keep` accepts: the continuation
    /// (the table right after the page) is returned only if there is one, so a filtered
    /// listing whose matches are used up ends without a continuation, as the service's
    /// does (`TableName ge 'a' and TableName lt 'b'` with `$top`: its last full page has
    /// none), instead of making a client ask for an empty page. A page also ends after
    /// `MAX_TABLES_EXAMINED` tables were read (looked-ahead ones included), with a
    /// continuation where it stopped.
    pub fn list_tables(
        &self,
        account: &str,
        from: Option<&str>,
        limit: usize,
        mut keep: impl FnMut(&str) -> bool,
    ) -> Result<(Vec<TableInfo>, Option<String>), PartitionError> {
        let (start, end) = keys::tables_range(account);
        let start = match from {
            Some(name) => keys::table_key(account, name),
            None => start,
        };
        let mut out = Vec::new();
        // the first table after a full page: the continuation, if another match follows
        let mut after_page: Option<Option<String>> = None;
        for (examined, item) in self.store.scan(&start, &end).enumerate() {
            let (k, v) = item?;
            let here = || keys::decode_table_key(&k).map(|(_, lower)| lower);
            if examined == MAX_TABLES_EXAMINED {
                return Ok((out, after_page.unwrap_or_else(here)));
            }
            if out.len() == limit && after_page.is_none() {
                after_page = Some(here());
            }
            let rec = codec::decode_table(&v)?;
            if keep(&rec.name) {
                if let Some(next) = after_page {
                    return Ok((out, next));
                }
                out.push(TableInfo { id: rec.id, name: rec.name });
            }
        }
        Ok((out, None))
    }
}
