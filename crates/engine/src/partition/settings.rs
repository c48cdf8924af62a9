//! [`Settings`]: what an account and its tables are configured with, kept as the bytes of
//! the bodies their Get operations answer with.
//!
//! - Table ACLs: each table's stored access policies, under [`keys::table_acl_key`].
//!   Delete Table removes them in the same write batch as the table record (see
//!   `catalog.rs`), so a re-created table starts with no policies.
//! - Service properties (logging, metrics, CORS rules) per account, under
//!   [`keys::service_properties_key`], updated read-modify-write under a lock of their own.

use super::catalog::Catalog;
use super::PartitionError;
use aztable_store::{keys, Store, WriteBatch};
use std::sync::{Arc, Mutex};

/// See the module documentation.
pub struct Settings {
    store: Arc<dyn Store>,
    /// An ACL is written only into a table held open in the catalog.
    catalog: Arc<Catalog>,
    /// Serializes read-modify-write updates of service properties.
    props_lock: Mutex<()>,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings").finish_non_exhaustive()
    }
}

impl Settings {
    pub(super) fn new(store: Arc<dyn Store>, catalog: Arc<Catalog>) -> Self {
        Settings { store, catalog, props_lock: Mutex::new(()) }
    }

    /// The table's stored ACL bytes (`None`: never set, cleared, or no such table). Reads
    /// without a lock: callers that must tell a missing table apart check the catalog.
    pub fn table_acl(&self, account: &str, table: &str) -> Result<Option<Vec<u8>>, PartitionError> {
        Ok(self.store.get(&keys::table_acl_key(account, table))?)
    }

    /// Replaces the table's ACL (`None` clears it). `TableNotFound` when there is no such
    /// table; holds the table open (the catalog gate shared), so the write cannot land
    /// after (and outlive) a concurrent Delete Table.
    pub fn set_table_acl(
        &self,
        account: &str,
        table: &str,
        acl: Option<Vec<u8>>,
    ) -> Result<(), PartitionError> {
        let _open = self.catalog.open(account, table)?;
        let key = keys::table_acl_key(account, table);
        let mut batch = WriteBatch::new();
        match acl {
            Some(bytes) => batch.put(key, bytes),
            None => batch.delete(key),
        }
        self.store.write(batch)?;
        Ok(())
    }

    /// The account's stored service properties (`None`: never set).
    pub fn service_properties(&self, account: &str) -> Result<Option<Vec<u8>>, PartitionError> {
        Ok(self.store.get(&keys::service_properties_key(account))?)
    }

    /// Read-modify-write of the account's service properties: `f` gets the stored bytes
    /// and returns the new ones. Updates are serialized, so two concurrent partial updates
    /// (say one setting CORS, one logging) both take effect.
    pub fn update_service_properties<E>(
        &self,
        account: &str,
        f: impl FnOnce(Option<Vec<u8>>) -> Result<Vec<u8>, E>,
    ) -> Result<(), E>
    where
        E: From<PartitionError>,
    {
        let _guard = self.props_lock.lock().unwrap_or_else(|p| p.into_inner());
        let key = keys::service_properties_key(account);
        let current = self.store.get(&key).map_err(PartitionError::from)?;
        let mut batch = WriteBatch::new();
        batch.put(key, f(current)?);
        self.store.write(batch).map_err(PartitionError::from)?;
        Ok(())
    }
}
