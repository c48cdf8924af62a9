//! OPERATIONS: one function per Azure Table REST operation, with typed inputs and
//! outputs and no HTTP types. Validation of names, keys and limits, ETag conditions,
//! Timestamp assignment and merge/replace semantics live here; consistency (locks,
//! atomic commits) is the partition layer's.

mod access;
mod background;
mod batch;
mod caller;
mod entities;
mod error;
mod insight;
mod restore;
mod tables;
pub mod throttle;

pub use batch::{BatchFailure, BatchOutcome};
pub use caller::Caller;
pub use entities::{EntityPage, QueryEntities};
pub use error::ServiceError;

use crate::partition::Partitions;
use aztable_model::time::MonotonicClock;
use aztable_store::Store;
use std::sync::Arc;

/// The Table service over one store.
pub struct TableService {
    /// Shared with the scans that run on the blocking pool ([`off_the_workers`]).
    parts: Arc<Partitions>,
    clock: MonotonicClock,
    /// `--throttle`: the scalability targets; `None` (the default) costs one check.
    throttle: Option<throttle::Throttle>,
    /// The partition advisor, told about every entity operation (`None`: `--insight off`).
    insight: Option<Arc<aztable_insight::Advisor>>,
    /// `--tableDeleteDelay`: names deleted lately, refused by Create Table for a while
    /// (boxed: the service stays small where it is held by value).
    delete_delay: Option<Box<tables::DeleteDelay>>,
}

impl std::fmt::Debug for TableService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableService")
            .field("throttle", &self.throttle.is_some())
            .field("insight", &self.insight.is_some())
            .finish_non_exhaustive()
    }
}

impl TableService {
    pub fn new(store: Arc<dyn Store>) -> Self {
        TableService {
            parts: Arc::new(Partitions::new(store)),
            clock: MonotonicClock::new(),
            throttle: None,
            insight: None,
            delete_delay: None,
        }
    }

    /// The service with the scalability targets enforced (see [`throttle`]), or not.
    pub fn with_throttle(mut self, throttle: Option<throttle::Throttle>) -> Self {
        self.throttle = throttle;
        self
    }

    /// Takes `cost` entities from the account's bucket and, when `pk` names one, the
    /// partition's: 503 `ServerBusy` when either is short. Free without `--throttle`.
    fn admit(&self, account: &str, table: &str, pk: Option<&str>, cost: usize) -> Result<(), ServiceError> {
        match &self.throttle {
            None => Ok(()),
            Some(t) => Ok(t.admit(account, table, pk, u32::try_from(cost).unwrap_or(u32::MAX))?),
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
