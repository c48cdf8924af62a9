//! PARTITION SERVER: the layer that owns consistency rules over the store.
//!
//! - Table catalog: create/delete/lookup of tables (per account, case-insensitive,
//!   case preserved). Each table gets a fresh numeric id, so deleting a table is one
//!   catalog delete plus one range tombstone over its entities: O(1) work, whatever the
//!   table holds, and a re-created table never sees old rows.
//! - Entity writes are serialized per (table, PartitionKey) by striped locks held
//!   around read-check-write ([`Partitions::transact`]), so ETag checks are atomic
//!   while different partitions proceed in parallel; every transaction commits as one
//!   atomic [`WriteBatch`]. Batches (entity group transactions), SAS key ranges and
//!   per-partition throttling hook in here.
//! - Scans stream from the store and stop at the page size: memory is bounded by the
//!   page, never by the table.

mod tables;
mod txn;

pub use tables::TableInfo;
pub use txn::Txn;

use crate::model::Entity;
use crate::store::{codec, keys, Store, StoreError};
use std::hash::{Hash, Hasher};
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

/// The partition server over one store.
pub struct Partitions {
    store: Arc<dyn Store>,
    /// Striped locks over hash(table id, PartitionKey).
    stripes: Vec<Mutex<()>>,
    /// Entity writes hold it shared, table create/delete exclusively, so no write can
    /// land in a table while it is being deleted.
    catalog_gate: RwLock<()>,
    /// Serializes table id allocation.
    id_lock: Mutex<()>,
}

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
            catalog_gate: RwLock::new(()),
            id_lock: Mutex::new(()),
        }
    }

    /// Returns the underlying store (for shutdown flushes).
    pub fn store(&self) -> &dyn Store {
        self.store.as_ref()
    }

    fn stripe(&self, table_id: u64, pk: &str) -> &Mutex<()> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
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
        let _gate = self.catalog_gate.read().unwrap_or_else(|p| p.into_inner());
        let info = self
            .lookup_table(account, table)?
            .ok_or(PartitionError::TableNotFound)?;
        let _guard = self.stripe(info.id, pk).lock().unwrap_or_else(|p| p.into_inner());
        let mut txn = Txn::new(self.store.as_ref(), info.id);
        let out = f(&mut txn)?;
        let batch = txn.into_batch();
        if !batch.is_empty() {
            self.store.write(batch).map_err(PartitionError::from)?;
        }
        Ok(out)
    }

    /// Reads one entity without taking any lock.
    pub fn get_entity(
        &self,
        account: &str,
        table: &str,
        pk: &str,
        rk: &str,
    ) -> Result<Option<Entity>, PartitionError> {
        let info = self
            .lookup_table(account, table)?
            .ok_or(PartitionError::TableNotFound)?;
        let key = keys::entity_key(info.id, pk, rk);
        match self.store.get(&key)? {
            Some(v) => Ok(Some(codec::decode_entity_value(
                pk.to_owned(),
                rk.to_owned(),
                &v,
            )?)),
            None => Ok(None),
        }
    }

    /// Scans a table in (PartitionKey, RowKey) order from `start` (inclusive), keeping
    /// at most `limit` entities for which `keep` is true. Stops early once `max_examined`
    /// entities were read, returning a continuation so the client can resume.
    pub fn scan_entities(
        &self,
        account: &str,
        table: &str,
        start: Option<(&str, &str)>,
        limit: usize,
        max_examined: usize,
        mut keep: impl FnMut(&Entity) -> bool,
    ) -> Result<ScanPage, PartitionError> {
        let info = self
            .lookup_table(account, table)?
            .ok_or(PartitionError::TableNotFound)?;
        let (table_start, table_end) = keys::table_entities_range(info.id);
        let from = match start {
            Some((pk, rk)) => keys::entity_key(info.id, pk, rk),
            None => table_start,
        };
        let mut page = ScanPage::default();
        for (examined, item) in self.store.scan(&from, &table_end).enumerate() {
            let (k, v) = item?;
            let (_, pk, rk) = keys::decode_entity_key(&k)
                .ok_or_else(|| StoreError::Corrupt("undecodable entity key".into()))?;
            if page.entities.len() == limit || examined == max_examined {
                page.next = Some((pk, rk));
                break;
            }
            let e = codec::decode_entity_value(pk, rk, &v)?;
            if keep(&e) {
                page.entities.push(e);
            }
        }
        Ok(page)
    }
}

#[cfg(test)]
mod tests;
