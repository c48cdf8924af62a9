//! STORAGE: an ordered key/value store and the byte layout of what lives in it.
//!
//! This crate never names a storage engine outside `rocks/` (behind the `rocksdb`
//! feature); the other crates see only the [`Store`] trait, [`WriteBatch`] and [`StoreError`].
//! `keys` defines the key layout (order-preserving), `codec` the value encoding.

pub mod checkpoint;
pub mod codec;
pub mod damage;
pub mod keys;
pub mod mem;
pub mod precheck;
pub mod recovery;
#[cfg(feature = "rocksdb")]
pub mod rocks;
pub mod wal;

#[cfg(test)]
mod conformance;
#[cfg(all(test, feature = "rocksdb"))]
mod damage_tests;
#[cfg(all(test, feature = "rocksdb"))]
mod wal_cut_proptest;

/// A storage failure. The engine's own error is kept only as text for the log.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The engine failed (I/O, corruption, ...).
    #[error("storage engine error: {0}")]
    Engine(String),
    /// Bytes read back could not be decoded.
    #[error("corrupt record: {0}")]
    Corrupt(String),
    /// An entity's head and heap were read at different moments and belong to
    /// different writes; the reader retries under the partition lock.
    #[error("entity changed while it was read")]
    Torn,
    /// The data directory is damaged; the text says what is wrong and what to do.
    #[error("{0}")]
    Damaged(String),
    /// Data read back failed the engine's checks on disk (a block's checksum): the
    /// text, for the client, names the file and says what to do (`damage.rs`).
    /// Retrying cannot help.
    #[error("{0}")]
    DataCorrupted(String),
    /// The data directory was written by a newer build, in a format this one cannot read.
    #[error(
        "the data directory is in storage format {found}, written by a newer aztable; this build reads \
         formats up to {supported}: run a build at least as new as the one that wrote it, or start with \
         another --location"
    )]
    NewerFormat { found: u64, supported: u64 },
}

/// One mutation inside an atomic [`WriteBatch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOp {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    /// Deletes every key in `[start, end)` in O(1) work (a range tombstone).
    DeleteRange(Vec<u8>, Vec<u8>),
}

/// Mutations applied atomically and durably (WAL) by [`Store::write`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    pub ops: Vec<WriteOp>,
}

impl WriteBatch {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.ops.push(WriteOp::Put(key, value));
    }
    pub fn delete(&mut self, key: Vec<u8>) {
        self.ops.push(WriteOp::Delete(key));
    }
    pub fn delete_range(&mut self, start: Vec<u8>, end: Vec<u8>) {
        self.ops.push(WriteOp::DeleteRange(start, end));
    }
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// A key/value pair yielded by a scan.
pub type KvPair = (Vec<u8>, Vec<u8>);

/// What [`Store::scan_with`] calls for each pair: `Ok(true)` to go on.
pub type Visit<'v> = dyn FnMut(&[u8], &[u8]) -> Result<bool, StoreError> + 'v;

/// An ordered, durable key/value store.
pub trait Store: Send + Sync + 'static {
    /// Reads one key.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    /// Applies every op of the batch atomically; once it returns `Ok` the batch
    /// survives a killed process.
    fn write(&self, batch: WriteBatch) -> Result<(), StoreError>;
    /// Whether [`Store::write`] also syncs each batch to the disk (`--fsync`), so that
    /// it survives a power loss: then writers may use [`Store::write_unsynced`] and
    /// share one [`Store::sync_log`] instead.
    fn syncs_writes(&self) -> bool {
        false
    }
    /// Like [`Store::write`] without its sync: once it returns `Ok` the batch survives
    /// a killed process, and a power loss only after a later [`Store::sync_log`]
    /// returns.
    fn write_unsynced(&self, batch: WriteBatch) -> Result<(), StoreError> {
        self.write(batch)
    }
    /// Syncs the log to the disk: every batch written before this call survives a
    /// power loss. Blocks for as long as the disk takes.
    fn sync_log(&self) -> Result<(), StoreError> {
        Ok(())
    }
    /// Streams the pairs with `start <= key < end` in ascending byte order, reading
    /// lazily (memory bounded by what the caller keeps, not by the range).
    fn scan<'a>(
        &'a self,
        start: &[u8],
        end: &[u8],
    ) -> Box<dyn Iterator<Item = Result<KvPair, StoreError>> + 'a>;
    /// Like [`Store::scan`], but hands each pair to `visit` as borrowed slices (no copy
    /// per pair) until `visit` returns `Ok(false)` or an error, which is returned.
    fn scan_with(&self, start: &[u8], end: &[u8], visit: &mut Visit<'_>) -> Result<(), StoreError> {
        for item in self.scan(start, end) {
            let (k, v) = item?;
            if !visit(&k, &v)? {
                break;
            }
        }
        Ok(())
    }
    /// What this store found damaged while serving (`damage.rs`): nothing, for a
    /// store that cannot find damage.
    fn damage(&self) -> damage::DamageReport {
        damage::DamageReport::default()
    }
    /// Reads every stored block of every column family with its checksum verified
    /// (`--verifyOnStart`); [`StoreError::DataCorrupted`] names the first damaged file.
    /// A store with nothing on disk has nothing to verify.
    fn verify_checksums(&self) -> Result<damage::VerifyReport, StoreError> {
        Ok(damage::VerifyReport::default())
    }
    /// Flushes in-memory state to disk (called at shutdown).
    fn flush(&self) -> Result<(), StoreError>;
    /// Frees at once the storage of `[start, end)`, which a committed `DeleteRange`
    /// emptied and which no write will use again (a deleted table's id is never
    /// reused): a store may drop whole files of the range instead of rewriting them
    /// in later compactions. Reads are unaffected: the range is empty either way.
    fn reclaim_deleted_range(&self, _start: &[u8], _end: &[u8]) -> Result<(), StoreError> {
        Ok(())
    }
}
