//! OPERATIONS: one function per Azure Table REST operation, with typed inputs and
//! outputs and no HTTP types. Validation of names, keys and limits, ETag conditions,
//! Timestamp assignment and merge/replace semantics live here; consistency (locks,
//! atomic commits) is the partition layer's.
//!
//! [`TableService`] is three groups of operations over one [`Partitions`], each a type
//! holding only what its operations use: [`Tables`] (the catalog: Query, Create, Get and
//! Delete Table), [`Entities`] (the entity operations, change sets and the restore of
//! exported entities; the only ones the partition advisor hears of) and [`Access`]
//! (table ACLs, service properties and stats). Callers reach them through
//! [`TableService::tables`], [`TableService::entities`] and [`TableService::access`].

mod access;
mod background;
mod caller;
mod entities;
mod error;
mod insight;
mod tables;
pub mod throttle;

pub use access::Access;
pub use caller::Caller;
pub use entities::{BatchFailure, BatchOutcome, Entities, EntityPage, QueryEntities};
pub use error::ServiceError;
pub use tables::Tables;

use crate::partition::Partitions;
use aztable_store::Store;
use std::sync::Arc;

/// The Table service over one store.
pub struct TableService {
    tables: Tables,
    entities: Entities,
    access: Access,
    /// The partition server all three share: the store's health and flush.
    parts: Arc<Partitions>,
}

impl std::fmt::Debug for TableService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableService")
            .field("throttle", &self.entities.gate.is_on())
            .field("insight", &self.entities.notes.advisor().is_some())
            .finish_non_exhaustive()
    }
}

impl TableService {
    pub fn new(store: Arc<dyn Store>) -> Self {
        let parts = Arc::new(Partitions::new(store));
        TableService {
            tables: Tables::new(Arc::clone(&parts)),
            entities: Entities::new(Arc::clone(&parts)),
            access: Access::new(Arc::clone(&parts)),
            parts,
        }
    }

    /// The service over a store that may hold data of an earlier build: brings its
    /// layout up to date first (see [`crate::partition::upgrade_format`]); refuses a
    /// directory written by a newer build.
    pub fn open(store: Arc<dyn Store>) -> Result<Self, ServiceError> {
        let moved = crate::partition::upgrade_format(store.as_ref())?;
        if moved > 0 {
            tracing::info!(heaps = moved, "moved entity heaps to the current store layout");
        }
        Ok(TableService::new(store))
    }

    /// The service with the scalability targets enforced (see [`throttle`]), or not:
    /// table and entity operations draw on the same buckets.
    pub fn with_throttle(mut self, throttle: Option<throttle::Throttle>) -> Self {
        let gate = throttle::Gate::new(throttle);
        self.tables.gate = gate.clone();
        self.entities.gate = gate;
        self
    }

    /// The service with `--tableDeleteDelay`: Create Table of a name deleted less than
    /// `period` ago answers `TableBeingDeleted` (`None` or zero: never).
    pub fn with_table_delete_delay(mut self, period: Option<std::time::Duration>) -> Self {
        self.tables.set_delete_delay(period);
        self
    }

    /// The service, reporting its entity operations to `advisor`.
    pub fn with_insight(mut self, advisor: Arc<aztable_insight::Advisor>) -> Self {
        self.entities.notes = insight::Notes::to(advisor);
        self
    }

    /// Query, Create, Get and Delete Table; the reset of an account's tables.
    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    /// The entity operations, change sets and the restore of exported entities.
    pub fn entities(&self) -> &Entities {
        &self.entities
    }

    /// Table ACLs (and the stored policies a SAS names), service properties and stats.
    pub fn access(&self) -> &Access {
        &self.access
    }

    /// The partition advisor, unless it is off.
    pub fn insight(&self) -> Option<&aztable_insight::Advisor> {
        self.entities.notes.advisor()
    }

    /// What the store found damaged while serving: the health answer and the metrics
    /// report it, and the store refuses writes once it is damaged.
    pub fn damage(&self) -> aztable_store::damage::DamageReport {
        self.parts.store().damage()
    }

    /// Flushes the store (at shutdown).
    pub fn flush(&self) -> Result<(), ServiceError> {
        Ok(self.parts.store().flush()?)
    }
}

/// Runs store work that can take long (a scan may examine 10,000 rows or run for 5 s)
/// on the scan threads ([`background`], at a lower priority), so that the async worker threads (two on a two-core
/// machine) keep accepting and answering other requests meanwhile. Point reads and
/// writes stay on the workers: one or two lookups, or one log append, cost less than
/// the hand-off to another thread and back. Outside a runtime it runs `f` in place.
async fn off_the_workers<R: Send + 'static>(
    f: impl FnOnce() -> Result<R, ServiceError> + Send + 'static,
) -> Result<R, ServiceError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return f();
    }
    match background::run(f).await {
        Ok(out) => out,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        // the runtime is shutting down
        Err(_) => {
            Err(aztable_model::error::ApiError::new(aztable_model::error::ErrorCode::ServerBusy).into())
        }
    }
}

#[cfg(test)]
mod paging_proptest;
#[cfg(test)]
mod query_proptest;
#[cfg(test)]
mod tests;

/// Runs the service's async operations to completion in synchronous unit tests.
#[cfg(test)]
trait Wait: std::future::Future + Sized {
    fn wait(self) -> Self::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a current-thread runtime")
            .block_on(self)
    }
}

#[cfg(test)]
impl<F: std::future::Future> Wait for F {}
