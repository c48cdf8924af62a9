//! The table catalog: per-account table records keyed by lowercase name, each with a
//! numeric id that prefixes the table's entity keys.

use super::{PartitionError, Partitions};
use crate::store::codec::{self, TableRecord};
use crate::store::{keys, WriteBatch};

/// Tables read per Query Tables page before it is cut with a continuation.
pub const MAX_TABLES_EXAMINED: usize = 10_000;

/// A table as the catalog knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableInfo {
    pub id: u64,
    /// The name with the letter case it was created with.
    pub name: String,
}

impl Partitions {
    /// Looks a table up by name (case-insensitive).
    pub fn lookup_table(&self, account: &str, name: &str) -> Result<Option<TableInfo>, PartitionError> {
        match self.store.get(&keys::table_key(account, name))? {
            Some(v) => {
                let rec = codec::decode_table(&v)?;
                Ok(Some(TableInfo { id: rec.id, name: rec.name }))
            }
            None => Ok(None),
        }
    }

    /// Creates a table; `TableAlreadyExists` if one exists with the name in any case.
    pub fn create_table(&self, account: &str, name: &str) -> Result<TableInfo, PartitionError> {
        let _gate = self.catalog_gate.write().unwrap_or_else(|p| p.into_inner());
        if self.lookup_table(account, name)?.is_some() {
            return Err(PartitionError::TableAlreadyExists);
        }
        let _ids = self.id_lock.lock().unwrap_or_else(|p| p.into_inner());
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
    /// its entities, in one write batch.
    pub fn delete_table(&self, account: &str, name: &str) -> Result<(), PartitionError> {
        let _gate = self.catalog_gate.write().unwrap_or_else(|p| p.into_inner());
        let info = self.lookup_table(account, name)?.ok_or(PartitionError::TableNotFound)?;
        let (start, end) = keys::table_entities_range(info.id);
        let mut batch = WriteBatch::new();
        batch.delete(keys::table_key(account, name));
        batch.delete(keys::table_acl_key(account, name));
        batch.delete_range(start, end);
        self.store.write(batch)?;
        Ok(())
    }

    /// Lists tables of an account in (case-insensitive) name order, starting at
    /// `from` (a lowercase name, inclusive), at most `limit` of those `keep` accepts;
    /// also returns the lowercase name the next page starts at, if any. A page also
    /// ends after [`MAX_TABLES_EXAMINED`] tables were read.
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
        for (examined, item) in self.store.scan(&start, &end).enumerate() {
            let (k, v) = item?;
            if out.len() == limit || examined == MAX_TABLES_EXAMINED {
                let next = keys::decode_table_key(&k).map(|(_, lower)| lower);
                return Ok((out, next));
            }
            let rec = codec::decode_table(&v)?;
            if keep(&rec.name) {
                out.push(TableInfo { id: rec.id, name: rec.name });
            }
        }
        Ok((out, None))
    }
}
