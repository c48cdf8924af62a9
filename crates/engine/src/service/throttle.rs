//! [`Throttle`]: the service's scalability targets, opt-in (`--throttle`,
//! `--partitionRate`, `--accountRate`). Token buckets per partition (account, table,
//! PartitionKey) and per account, refilled continuously at the rate, holding one second
//! of it but never less than [`MIN_CAPACITY`] entities, so one full batch always passes
//! an idle partition. A request costs the entities it writes or returns (at least 1);
//! one that finds too few tokens is refused whole with 503 `ServerBusy` before anything
//! is written. A query's returned entities are charged after the read and may leave a
//! bucket in debt (down to minus its capacity), so the next request there is refused.
//!
//! Memory is bounded: at most [`MAX_PARTITIONS`] partition buckets are kept; when the
//! map is full, buckets that have refilled (idle partitions: forgetting them changes
//! nothing, a new bucket starts full) are dropped, then if need be the least recently
//! used ones (which forgives their debt). Time comes from a [`TimeSource`], so the
//! tests drive a virtual clock.

use aztable_model::error::{ApiError, ErrorCode};
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Mutex, PoisonError};

/// The service's targets: 2,000 entities per second per partition, 20,000 per account.
pub const DEFAULT_PARTITION_RATE: u32 = 2_000;
pub const DEFAULT_ACCOUNT_RATE: u32 = 20_000;
/// Smallest bucket: one full batch (100 operations).
pub const MIN_CAPACITY: f64 = 100.0;
/// Partition buckets kept at most.
pub const MAX_PARTITIONS: usize = 65_536;

/// Entities per second allowed per partition and per account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rates {
    pub partition: u32,
    pub account: u32,
}

impl Default for Rates {
    fn default() -> Self {
        Rates { partition: DEFAULT_PARTITION_RATE, account: DEFAULT_ACCOUNT_RATE }
    }
}

/// Which target a refused request is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Partition,
    Account,
}

impl From<Refusal> for ApiError {
    /// 503 `ServerBusy` with the service's message for each target.
    fn from(r: Refusal) -> Self {
        match r {
            Refusal::Partition => ApiError::new(ErrorCode::ServerBusy),
            Refusal::Account => ApiError::with_message(
                ErrorCode::ServerBusy,
                "Operations per second is over the account limit.",
            ),
        }
    }
}

/// Monotonic time in nanoseconds from an arbitrary origin.
pub trait TimeSource: Send + Sync {
    fn nanos(&self) -> u64;
}

/// The process's monotonic clock.
#[derive(Debug)]
pub struct SystemTime(std::time::Instant);

impl SystemTime {
    pub fn new() -> Self {
        SystemTime(std::time::Instant::now())
    }
}

impl Default for SystemTime {
    fn default() -> Self {
        SystemTime::new()
    }
}

impl TimeSource for SystemTime {
    fn nanos(&self) -> u64 {
        u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// One token bucket.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    /// When `tokens` was last brought up to date (nanoseconds of the time source).
    at: u64,
}

/// A bucket's rate and capacity.
#[derive(Debug, Clone, Copy)]
struct Shape {
    per_nano: f64,
    capacity: f64,
}

impl Shape {
    fn new(rate: u32) -> Self {
        Shape { per_nano: f64::from(rate) / 1e9, capacity: f64::from(rate).max(MIN_CAPACITY) }
    }

    fn full(&self, now: u64) -> Bucket {
        Bucket { tokens: self.capacity, at: now }
    }

    /// Refills `b` up to `now`.
    fn refill(&self, b: &mut Bucket, now: u64) {
        let elapsed = now.saturating_sub(b.at) as f64;
        b.tokens = (b.tokens + elapsed * self.per_nano).min(self.capacity);
        b.at = b.at.max(now);
    }

    /// Whether `b` holds enough for `cost` (a cost above the capacity needs a full bucket).
    fn affords(&self, b: &Bucket, cost: f64) -> bool {
        b.tokens >= cost.min(self.capacity)
    }

    /// Takes `cost`, leaving at most one capacity of debt.
    fn take(&self, b: &mut Bucket, cost: f64) {
        b.tokens = (b.tokens - cost).max(-self.capacity);
    }
}

struct Buckets {
    /// Keyed by a keyed 64-bit hash of (account, lowercase table, PartitionKey): two
    /// partitions share a bucket with odds of 2^-64 per pair, and no key is allocated.
    partitions: HashMap<u64, Bucket>,
    /// Keyed the same way by the account name (accounts are the configured ones, a
    /// handful: never swept).
    accounts: HashMap<u64, Bucket>,
}

/// The buckets of every partition and account, behind one lock (held for a few
/// arithmetic operations).
pub struct Throttle {
    partition: Shape,
    account: Shape,
    time: Box<dyn TimeSource>,
    hasher: std::collections::hash_map::RandomState,
    buckets: Mutex<Buckets>,
}

impl std::fmt::Debug for Throttle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Throttle")
            .field("partition", &self.partition)
            .field("account", &self.account)
            .finish()
    }
}

impl Throttle {
    /// Buckets at `rates`, on the process's clock.
    pub fn new(rates: Rates) -> Self {
        Throttle::with_time(rates, Box::new(SystemTime::new()))
    }

    /// Buckets at `rates`, on the given time source.
    pub fn with_time(rates: Rates, time: Box<dyn TimeSource>) -> Self {
        Throttle {
            partition: Shape::new(rates.partition),
            account: Shape::new(rates.account),
            time,
            hasher: std::collections::hash_map::RandomState::new(),
            buckets: Mutex::new(Buckets { partitions: HashMap::new(), accounts: HashMap::new() }),
        }
    }

    fn account_key(&self, account: &str) -> u64 {
        let mut h = self.hasher.build_hasher();
        h.write(account.as_bytes());
        h.finish()
    }

    fn partition_key(&self, account: &str, table: &str, pk: &str) -> u64 {
        let mut h = self.hasher.build_hasher();
        h.write(account.as_bytes());
        h.write_u8(0xFF);
        for b in table.bytes() {
            h.write_u8(b.to_ascii_lowercase());
        }
        h.write_u8(0xFF);
        h.write(pk.as_bytes());
        h.finish()
    }

    /// Admits a request costing `cost` entities (at least 1) on the account and, when it
    /// names one, the partition `pk` of `table`; takes the tokens from both, or from
    /// neither and says which target it is over.
    pub fn admit(&self, account: &str, table: &str, pk: Option<&str>, cost: u32) -> Result<(), Refusal> {
        let cost = f64::from(cost.max(1));
        let key = pk.map(|pk| self.partition_key(account, table, pk));
        let now = self.time.nanos();
        let mut guard = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let b = &mut *guard;
        if let Some(key) = key {
            if !b.partitions.contains_key(&key) && b.partitions.len() >= MAX_PARTITIONS {
                sweep(&mut b.partitions, &self.partition, now);
            }
            let part = b.partitions.entry(key).or_insert_with(|| self.partition.full(now));
            self.partition.refill(part, now);
            if !self.partition.affords(part, cost) {
                return Err(Refusal::Partition);
            }
        }
        let acct = b.accounts.entry(self.account_key(account)).or_insert_with(|| self.account.full(now));
        self.account.refill(acct, now);
        if !self.account.affords(acct, cost) {
            return Err(Refusal::Account);
        }
        self.account.take(acct, cost);
        if let Some(part) = key.and_then(|k| b.partitions.get_mut(&k)) {
            self.partition.take(part, cost);
        }
        Ok(())
    }

    /// Charges entities already served (a query's, after the read) without refusing:
    /// each `(pk, n)` of `per_partition` to that partition, `account_cost` to the
    /// account. Buckets may go into debt, down to minus their capacity.
    pub fn charge<'a>(
        &self,
        account: &str,
        table: &str,
        per_partition: impl IntoIterator<Item = (&'a str, u32)>,
        account_cost: u32,
    ) {
        let now = self.time.nanos();
        let keyed: Vec<(u64, u32)> = per_partition
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(pk, n)| (self.partition_key(account, table, pk), n))
            .collect();
        if keyed.is_empty() && account_cost == 0 {
            return;
        }
        let mut guard = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let b = &mut *guard;
        for (key, n) in keyed {
            if !b.partitions.contains_key(&key) && b.partitions.len() >= MAX_PARTITIONS {
                sweep(&mut b.partitions, &self.partition, now);
            }
            let part = b.partitions.entry(key).or_insert_with(|| self.partition.full(now));
            self.partition.refill(part, now);
            self.partition.take(part, f64::from(n));
        }
        if account_cost > 0 {
            let acct = b.accounts.entry(self.account_key(account)).or_insert_with(|| self.account.full(now));
            self.account.refill(acct, now);
            self.account.take(acct, f64::from(account_cost));
        }
    }

    /// Partition buckets currently kept.
    pub fn tracked_partitions(&self) -> usize {
        self.buckets.lock().unwrap_or_else(PoisonError::into_inner).partitions.len()
    }
}

/// Makes room in a full partition map: drops every bucket that has refilled (exactly
/// what a new bucket would be), then, if more than half the map is still busy, the least
/// recently used buckets down to half. Runs once per [`MAX_PARTITIONS`]/2 new
/// partitions at most, so its cost is spread over them.
fn sweep(partitions: &mut HashMap<u64, Bucket>, shape: &Shape, now: u64) {
    partitions.retain(|_, b| {
        let mut refilled = *b;
        shape.refill(&mut refilled, now);
        refilled.tokens < shape.capacity
    });
    let keep = MAX_PARTITIONS / 2;
    if partitions.len() > keep {
        let mut ages: Vec<(u64, u64)> = partitions.iter().map(|(k, b)| (b.at, *k)).collect();
        let cut = ages.len() - keep;
        ages.select_nth_unstable(cut);
        for (_, key) in &ages[..cut] {
            partitions.remove(key);
        }
    }
}

#[cfg(test)]
#[path = "throttle_tests.rs"]
mod tests;

/// The targets as the operations meet them: [`Gate::admit`] before the work, the
/// [`Throttle`] itself for what is charged after a read. Off (the default), each check
/// is one `None`. Cloned into every group of operations, which share the buckets.
#[derive(Debug, Clone, Default)]
pub(super) struct Gate(Option<std::sync::Arc<Throttle>>);

impl Gate {
    pub(super) fn new(throttle: Option<Throttle>) -> Self {
        Gate(throttle.map(std::sync::Arc::new))
    }

    pub(super) fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// The buckets, when the targets are enforced.
    pub(super) fn throttle(&self) -> Option<&Throttle> {
        self.0.as_deref()
    }

    /// Takes `cost` entities from the account's bucket and, when `pk` names one, the
    /// partition's: 503 `ServerBusy` when either is short. Free when off.
    pub(super) fn admit(
        &self,
        account: &str,
        table: &str,
        pk: Option<&str>,
        cost: usize,
    ) -> Result<(), super::ServiceError> {
        match &self.0 {
            None => Ok(()),
            Some(t) => Ok(t.admit(account, table, pk, u32::try_from(cost).unwrap_or(u32::MAX))?),
        }
    }
}
