//! [`Stripes`]: the partition locks. A fixed set of mutexes striped over hash(table id,
//! PartitionKey): a transaction holds its partition's stripe around read-check-write
//! (`write.rs`), a read that met a torn row re-reads under it (`read.rs`), and a value
//! summary's build takes and releases every stripe before it reads (`skip.rs`).

use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::{Mutex, MutexGuard};

/// How many stripes (and writers' turns) there are.
pub(super) const STRIPES: usize = 256;

/// Picks a partition's stripe and turn: the same partition always hashes alike.
pub(super) const STRIPE_HASH: foldhash::fast::FixedState =
    foldhash::fast::FixedState::with_seed(0x6a09_e667_f3bc_c908);

/// See the module documentation.
pub(super) struct Stripes(Box<[Mutex<()>]>);

impl Default for Stripes {
    fn default() -> Self {
        Stripes((0..STRIPES).map(|_| Mutex::new(())).collect())
    }
}

impl Stripes {
    /// Locks the stripe of one partition of a table.
    pub(super) fn lock(&self, table_id: u64, pk: &str) -> MutexGuard<'_, ()> {
        let mut h = STRIPE_HASH.build_hasher();
        table_id.hash(&mut h);
        pk.hash(&mut h);
        self.0[(h.finish() as usize) % self.0.len()].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every stripe (for the write barrier of a value summary's build).
    pub(super) fn all(&self) -> &[Mutex<()>] {
        &self.0
    }

    /// How many there are.
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}
