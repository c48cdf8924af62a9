//! The writers' turns: an async queue per partition in front of the striped locks, so
//! that writers of one busy partition wait as parked tasks instead of blocking the
//! runtime's worker threads ([`super::Writes::transact_in_turn`]).
//!
//! The turns only schedule: exclusion is the stripes' job, and
//! [`super::Writes::transact`] without a turn (tests, the locked re-read of a torn
//! entity) stays correct.

use super::stripes::{STRIPES, STRIPE_HASH};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Writers' turns, striped over hash(account, table name, PartitionKey).
pub(super) struct Turns(Box<[Turn]>);

impl Default for Turns {
    fn default() -> Self {
        Turns((0..STRIPES).map(|_| Turn::default()).collect())
    }
}

impl Turns {
    /// The writers' turn of a partition, found from the names in the request (table
    /// names compare without letter case), so no table lookup comes first.
    pub(super) fn of(&self, account: &str, table: &str, pk: &str) -> &Turn {
        let mut h = STRIPE_HASH.build_hasher();
        account.hash(&mut h);
        table.bytes().for_each(|b| h.write_u8(b.to_ascii_lowercase()));
        pk.hash(&mut h);
        &self.0[(h.finish() as usize) % self.0.len()]
    }
}

/// One partition stripe's writers' turn: an async mutex, and how many writers wait for it.
#[derive(Default)]
pub(super) struct Turn {
    pub(super) lock: tokio::sync::Mutex<()>,
    /// Writers waiting in [`Turn::lock`] (a count kept right even when a waiting request
    /// is dropped: see [`Queued`]).
    queued: AtomicUsize,
}

impl Turn {
    /// Whether a writer is waiting for this turn.
    pub(super) fn contended(&self) -> bool {
        self.queued.load(Ordering::Relaxed) > 0
    }

    /// Waits for the turn; the writer counts as waiting meanwhile (even if the wait is
    /// dropped unfinished).
    pub(super) async fn take(&self) -> tokio::sync::MutexGuard<'_, ()> {
        let _queued = Queued::join(&self.queued);
        self.lock.lock().await
    }
}

/// One writer counted in [`Turn::queued`] for as long as it lives.
struct Queued<'a>(&'a AtomicUsize);

impl<'a> Queued<'a> {
    fn join(queued: &'a AtomicUsize) -> Self {
        queued.fetch_add(1, Ordering::Relaxed);
        Queued(queued)
    }
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
