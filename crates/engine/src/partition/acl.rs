//! Table ACLs in the catalog: each table's stored access policies, kept as the bytes of
//! its Get Table ACL body under [`keys::table_acl_key`]. Delete Table removes them in the
//! same write batch as the table record (see `tables.rs`), so a re-created table starts
//! with no policies.

use super::{PartitionError, Partitions};
use aztable_store::{keys, WriteBatch};

impl Partitions {
    /// The table's stored ACL bytes (`None`: never set, cleared, or no such table). Reads
    /// without a lock: callers that must tell a missing table apart check the catalog.
    pub fn table_acl(&self, account: &str, table: &str) -> Result<Option<Vec<u8>>, PartitionError> {
        Ok(self.store.get(&keys::table_acl_key(account, table))?)
    }

    /// Replaces the table's ACL (`None` clears it). `TableNotFound` when there is no such
    /// table; holds the catalog gate shared, so the write cannot land after (and outlive)
    /// a concurrent Delete Table.
    pub fn set_table_acl(
        &self,
        account: &str,
        table: &str,
        acl: Option<Vec<u8>>,
    ) -> Result<(), PartitionError> {
        let _gate = self.catalog_gate.read().unwrap_or_else(|p| p.into_inner());
        self.lookup_table(account, table)?.ok_or(PartitionError::TableNotFound)?;
        let key = keys::table_acl_key(account, table);
        let mut batch = WriteBatch::new();
        match acl {
            Some(bytes) => batch.put(key, bytes),
            None => batch.delete(key),
        }
        self.store.write(batch)?;
        Ok(())
    }
}
