//! Per-account Table service properties (logging, metrics, CORS rules), kept as the bytes
//! of the Get Table Service Properties body under [`keys::service_properties_key`].

use super::{PartitionError, Partitions};
use aztable_store::{keys, WriteBatch};

impl Partitions {
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
