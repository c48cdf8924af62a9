//! PARTITION SERVER: the layer that owns consistency rules over the store.
//!
//! [`Partitions`] is a handful of parts, each a type holding only the state it uses and
//! sharing the rest by `Arc` (the store, and what the list below names):
//! - [`Catalog`] (`catalog.rs`): create/delete/lookup/list of tables (per account,
//!   case-insensitive, case preserved), each with a fresh numeric id; the catalog
//!   cache, id allocation and the catalog gate (writes into a table shared, table
//!   create/delete exclusive). Delete Table forgets the entity cache and the table's
//!   value summary.
//! - [`Settings`] (`settings.rs`): table ACLs and service properties.
//! - [`Writes`] (`write.rs`): transactions ([`Txn`], `txn.rs`) under the partition
//!   locks (`stripes.rs`), writers' turns (`turn.rs`), shared log syncs under `--fsync`
//!   (`commit.rs`); tells the value summaries of every write before it reaches the
//!   store, and the entity cache before it is acknowledged.
//! - [`Reads`] (`read.rs`): point reads through the entity cache (`cache.rs`), and the
//!   torn-row rule every read without a lock follows.
//! - [`Scans`] (`scan.rs`): paged scans, bounded by the page, never by the table; a
//!   filter requiring `P eq 'value'` seeks past runs of rows that a table's value
//!   summary (`skip.rs`) rules out.
//!
//! Shared between parts: the stripes (writes hold them; reads re-read a torn row under
//! one; a summary build takes them all), the entity cache (writes and table deletes
//! update it, point reads fill it) and the value summaries (writes record into them,
//! scans walk and build them, table deletes forget them). Point reads and scans are two
//! types rather than one: besides the store they share only the catalog and the stripes
//! (the entity cache is nothing to a scan, the summaries nothing to a point read). Also
//! here: the migration of older data directories (`migrate.rs`).

mod cache;
mod catalog;
mod columns;
mod commit;
mod migrate;
mod read;
mod rendition;
mod scan;
mod settings;
mod skip;
mod stripes;
mod turn;
mod txn;
mod write;

pub use catalog::{Catalog, TableInfo};
pub use migrate::{move_legacy_heaps, upgrade as upgrade_format, FORMAT_VERSION};
pub use read::Reads;
pub use rendition::Rendition;
#[cfg(test)]
pub(crate) use scan::STEPS_BEFORE_SEEK;
pub use scan::{Needs, Scan, ScanPage, Scans, SCAN_TIME_BUDGET};
pub use settings::Settings;
pub use txn::Txn;
pub use write::Writes;

use aztable_store::{Store, StoreError};
use std::sync::Arc;

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

/// The partition server over one store: see the module documentation.
pub struct Partitions {
    store: Arc<dyn Store>,
    catalog: Arc<Catalog>,
    settings: Settings,
    writes: Writes,
    reads: Reads,
    scans: Scans,
}

/// What the entity cache may hold (RocksDB keeps a 40 MiB block cache beside it): a
/// hot set of about 12,000 entities of 1 KiB.
const ENTITY_CACHE_BYTES: usize = 16 << 20;

impl std::fmt::Debug for Partitions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Partitions").field("stripes", &self.writes.stripes.len()).finish_non_exhaustive()
    }
}

impl Partitions {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Partitions::with_summary_budget(store, skip::SUMMARY_BUDGET)
    }

    /// [`Partitions::new`] with value summaries limited to `budget` bytes in all.
    fn with_summary_budget(store: Arc<dyn Store>, budget: usize) -> Self {
        let stripes = Arc::new(stripes::Stripes::default());
        let entity_cache = Arc::new(cache::EntityCache::new(ENTITY_CACHE_BYTES));
        let summaries = Arc::new(skip::Summaries::with_budget(budget));
        let catalog =
            Arc::new(Catalog::new(Arc::clone(&store), Arc::clone(&entity_cache), Arc::clone(&summaries)));
        Partitions {
            settings: Settings::new(Arc::clone(&store), Arc::clone(&catalog)),
            writes: Writes::new(
                Arc::clone(&store),
                Arc::clone(&catalog),
                Arc::clone(&stripes),
                Arc::clone(&entity_cache),
                Arc::clone(&summaries),
            ),
            reads: Reads::new(Arc::clone(&store), Arc::clone(&catalog), Arc::clone(&stripes), entity_cache),
            scans: Scans::new(Arc::clone(&store), Arc::clone(&catalog), stripes, summaries),
            catalog,
            store,
        }
    }

    /// Returns the underlying store (for shutdown flushes).
    pub fn store(&self) -> &dyn Store {
        self.store.as_ref()
    }

    /// The table catalog: Create, Delete, Query and look up tables.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Table ACLs and service properties.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Entity writes: partition transactions.
    pub fn writes(&self) -> &Writes {
        &self.writes
    }

    /// Point reads of entities.
    pub fn reads(&self) -> &Reads {
        &self.reads
    }

    /// Paged scans of a table's entities.
    pub fn scans(&self) -> &Scans {
        &self.scans
    }
}

#[cfg(test)]
mod columns_proptest;
#[cfg(test)]
mod skip_tests;
#[cfg(test)]
mod tests;
