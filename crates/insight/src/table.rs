//! What the advisor keeps about one table: counters (atomics), its busiest partitions
//! (sharded, each shard under its own mutex and bounded), its most frequent scans, and
//! the order of the PartitionKeys its inserts carried.
//!
//! Bounds: [`MAX_PARTITIONS`] partitions and [`MAX_FILTERS`] scan filters per table.
//! When full, the entry with the least traffic gives its place to the newcomer, which
//! starts from that entry's count (the "space-saving" heavy-hitters scheme: a
//! partition that is really busy climbs back and stays; what was forgotten is counted).

use super::classify::QueryKind;
use super::pattern::Trend;
use super::series::{AtomicRates, Rates};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Shards of a table's partitions (a partition's shard comes from its key's hash).
const PART_SHARDS: usize = 8;
/// Partitions one shard keeps.
const PARTS_PER_SHARD: usize = 16;
/// Partitions tracked per table.
pub const MAX_PARTITIONS: usize = PART_SHARDS * PARTS_PER_SHARD;
/// Scan filters tracked per table.
pub const MAX_FILTERS: usize = 16;

/// One tracked partition.
#[derive(Debug, Clone)]
pub struct PartStats {
    pub pk: String,
    pub reads: u64,
    pub writes: u64,
    /// Traffic of the partition whose place this one took (see the module header).
    pub inherited: u64,
    /// Second tracking began.
    pub since: u32,
    pub rates: Rates,
    /// The RowKey of the last insert (when `has_last_rk`), and the order of inserted
    /// RowKeys.
    last_rk: Option<String>,
    has_last_rk: bool,
    pub rk_trend: Trend,
}

impl PartStats {
    fn new(pk: &str, since: u32, inherited: u64) -> Self {
        PartStats {
            pk: pk.to_owned(),
            reads: 0,
            writes: 0,
            inherited,
            since,
            rates: Rates::default(),
            last_rk: None,
            has_last_rk: false,
            rk_trend: Trend::default(),
        }
    }

    /// Makes this entry partition `pk`'s, reusing its memory (an eviction happens on
    /// every request of a table with many partitions: no allocation there).
    fn reuse_for(&mut self, pk: &str, since: u32, inherited: u64) {
        self.pk.clear();
        self.pk.push_str(pk);
        self.reads = 0;
        self.writes = 0;
        self.inherited = inherited;
        self.since = since;
        self.rates.reset(since);
        if let Some(rk) = &mut self.last_rk {
            rk.clear();
        }
        self.has_last_rk = false;
        self.rk_trend = Trend::default();
    }

    fn score(&self) -> u64 {
        self.reads + self.writes + self.inherited
    }
}

#[derive(Debug, Default)]
struct PartShard {
    parts: Vec<PartStats>,
    evicted: u64,
}

/// One tracked scan filter.
#[derive(Debug, Clone)]
pub struct FilterStats {
    /// The `$filter` as the planner read it (empty: no filter).
    pub text: String,
    pub kind: QueryKind,
    pub count: u64,
    pub examined: u64,
    pub returned: u64,
    inherited: u64,
}

#[derive(Debug, Default)]
struct FilterShard {
    filters: Vec<FilterStats>,
    evicted: u64,
}

/// The PartitionKey of the last insert into the table, and the order of inserted
/// PartitionKeys.
#[derive(Debug, Default)]
struct PkOrder {
    last: Option<String>,
    trend: Trend,
}

/// Everything kept about one table.
#[derive(Debug)]
pub struct TableStats {
    pub account: String,
    /// As first seen (table names are case-insensitive).
    pub table: String,
    /// Requests by [`QueryKind`] (a point read counts as a point query).
    queries: [AtomicU64; 4],
    examined: [AtomicU64; 4],
    returned: [AtomicU64; 4],
    entities_written: AtomicU64,
    inserts: AtomicU64,
    /// Entities per second of the whole table, read and written.
    rates: AtomicRates,
    parts: Box<[Mutex<PartShard>]>,
    filters: Mutex<FilterShard>,
    pk_order: Mutex<PkOrder>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// FNV-1a: cheap, and good enough to spread keys over a few shards.
pub(super) fn fnv(bytes: impl IntoIterator<Item = u8>, mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

pub(super) const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// A snapshot of a table's numbers.
#[derive(Debug, Clone, Default)]
pub struct TableSnapshot {
    pub queries: [u64; 4],
    pub examined: [u64; 4],
    pub returned: [u64; 4],
    pub entities_written: u64,
    pub inserts: u64,
    pub partitions: Vec<PartStats>,
    pub partitions_evicted: u64,
    pub filters: Vec<FilterStats>,
    pub filters_evicted: u64,
    pub pk_trend: Trend,
    pub rk_trend: Trend,
    pub rates: Rates,
}

impl TableStats {
    pub fn new(account: &str, table: &str) -> Self {
        TableStats {
            account: account.to_owned(),
            table: table.to_owned(),
            queries: Default::default(),
            examined: Default::default(),
            returned: Default::default(),
            entities_written: AtomicU64::new(0),
            inserts: AtomicU64::new(0),
            rates: AtomicRates::default(),
            parts: (0..PART_SHARDS).map(|_| Mutex::default()).collect(),
            filters: Mutex::default(),
            pk_order: Mutex::default(),
        }
    }

    /// Whether this is the table `account`/`table` (names without letter case).
    pub fn is(&self, account: &str, table: &str) -> bool {
        // (the name as created first: a byte comparison, where the letter-case one goes
        // byte by byte)
        self.account == account && (self.table == table || self.table.eq_ignore_ascii_case(table))
    }

    /// Counts a query of `kind` (and, for scans, what it examined and returned).
    pub fn count_query(&self, kind: QueryKind, examined: u64, returned: u64) {
        let i = kind.index();
        self.queries[i].fetch_add(1, Relaxed);
        if kind != QueryKind::Point {
            self.examined[i].fetch_add(examined, Relaxed);
            self.returned[i].fetch_add(returned, Relaxed);
        }
    }

    /// Counts entities of partition `pk` read or written in second `sec`; `inserted`
    /// is the RowKey of an insert, whose order is followed.
    pub fn touch(&self, pk: &str, sec: u32, reads: u32, writes: u32, inserted: Option<&str>) {
        let shard = fnv(pk.bytes(), FNV_START) as usize % PART_SHARDS;
        let Some(shard) = self.parts.get(shard) else { return };
        self.rates.add(sec, reads + writes);
        let mut shard = lock(shard);
        let i = match shard.parts.iter().position(|p| p.pk == pk) {
            Some(i) => i,
            None if shard.parts.len() < PARTS_PER_SHARD => {
                shard.parts.push(PartStats::new(pk, sec, 0));
                shard.parts.len() - 1
            }
            None => {
                let Some((i, least)) = shard.parts.iter().enumerate().min_by_key(|(_, p)| p.score()) else {
                    return;
                };
                let inherited = least.score();
                if let Some(p) = shard.parts.get_mut(i) {
                    p.reuse_for(pk, sec, inherited);
                }
                shard.evicted += 1;
                i
            }
        };
        let Some(p) = shard.parts.get_mut(i) else { return };
        p.reads += u64::from(reads);
        p.writes += u64::from(writes);
        p.rates.add(sec, reads + writes);
        if let Some(rk) = inserted {
            match &mut p.last_rk {
                Some(last) => {
                    if p.has_last_rk {
                        p.rk_trend.step(last, rk);
                    }
                    last.clear();
                    last.push_str(rk);
                }
                None => p.last_rk = Some(rk.to_owned()),
            }
            p.has_last_rk = true;
        }
    }

    /// Counts `n` entities written; `inserted_pk` is the PartitionKey of inserts, whose
    /// order is followed (skipped rather than waited for when another thread is at it).
    pub fn count_writes(&self, n: u64, inserts: u64, inserted_pk: Option<&str>) {
        self.entities_written.fetch_add(n, Relaxed);
        if inserts > 0 {
            self.inserts.fetch_add(inserts, Relaxed);
        }
        let Some(pk) = inserted_pk else { return };
        let Ok(mut order) = self.pk_order.try_lock() else { return };
        let PkOrder { last, trend } = &mut *order;
        match last {
            Some(last) => {
                trend.step(last, pk);
                last.clear();
                last.push_str(pk);
            }
            None => *last = Some(pk.to_owned()),
        }
    }

    /// Counts one scan with this filter text.
    pub fn count_filter(&self, text: &str, kind: QueryKind, examined: u64, returned: u64) {
        let mut shard = lock(&self.filters);
        let i = match shard.filters.iter().position(|f| f.text == text) {
            Some(i) => i,
            None => {
                let fresh = |inherited| FilterStats {
                    text: text.to_owned(),
                    kind,
                    count: 0,
                    examined: 0,
                    returned: 0,
                    inherited,
                };
                if shard.filters.len() < MAX_FILTERS {
                    shard.filters.push(fresh(0));
                    shard.filters.len() - 1
                } else {
                    let least = shard.filters.iter().enumerate().min_by_key(|(_, f)| f.count + f.inherited);
                    let Some((i, least)) = least else { return };
                    let inherited = least.count + least.inherited;
                    shard.filters[i] = fresh(inherited);
                    shard.evicted += 1;
                    i
                }
            }
        };
        if let Some(f) = shard.filters.get_mut(i) {
            f.count += 1;
            f.examined += examined;
            f.returned += returned;
        }
    }

    /// The numbers as they are now.
    pub fn snapshot(&self) -> TableSnapshot {
        let load = |a: &[AtomicU64; 4]| std::array::from_fn(|i| a[i].load(Relaxed));
        let mut s = TableSnapshot {
            queries: load(&self.queries),
            examined: load(&self.examined),
            returned: load(&self.returned),
            entities_written: self.entities_written.load(Relaxed),
            inserts: self.inserts.load(Relaxed),
            rates: self.rates.snapshot(),
            ..TableSnapshot::default()
        };
        for shard in self.parts.iter() {
            let shard = lock(shard);
            s.partitions_evicted += shard.evicted;
            for p in &shard.parts {
                s.rk_trend.add(&p.rk_trend);
            }
            s.partitions.extend(shard.parts.iter().cloned());
        }
        {
            let f = lock(&self.filters);
            s.filters = f.filters.clone();
            s.filters_evicted = f.evicted;
        }
        s.pk_trend = lock(&self.pk_order).trend;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_and_filters_stay_bounded_and_busy_ones_stay() {
        let t = TableStats::new("acct", "t");
        // a busy partition, then a flood of partitions seen once each
        for _ in 0..1000 {
            t.touch("busy", 1, 1, 0, None);
        }
        for i in 0..10_000 {
            t.touch(&format!("p{i}"), 2, 0, 1, None);
            t.count_filter(&format!("Name eq '{i}'"), QueryKind::FullScan, 10, 1);
        }
        for _ in 0..50 {
            t.count_filter("Age gt 3", QueryKind::FullScan, 100, 0);
        }
        let s = t.snapshot();
        assert!(s.partitions.len() <= MAX_PARTITIONS);
        assert_eq!(s.partitions.len() as u64 + s.partitions_evicted, 10_001);
        let busy = s.partitions.iter().find(|p| p.pk == "busy").expect("the busy partition stays");
        assert_eq!((busy.reads, busy.rates.peak()), (1000, (1, 1000)));
        assert!(s.filters.len() <= MAX_FILTERS);
        assert_eq!(s.filters.len() as u64 + s.filters_evicted, 10_001);
        let age = s.filters.iter().find(|f| f.text == "Age gt 3").expect("the frequent filter stays");
        assert_eq!((age.count, age.examined, age.returned), (50, 5000, 0));
    }

    #[test]
    fn insert_order_is_followed_per_partition_and_across_partitions() {
        let t = TableStats::new("acct", "t");
        for i in 0..100 {
            // two partitions, each appending, interleaved
            let pk = if i % 2 == 0 { "a" } else { "b" };
            let rk = format!("{i:05}");
            t.touch(pk, 0, 0, 1, Some(&rk));
            t.count_writes(1, 1, Some(&format!("{i:05}")));
        }
        let s = t.snapshot();
        assert_eq!(s.rk_trend.up, 98);
        assert_eq!(s.pk_trend.up, 99);
        assert_eq!((s.entities_written, s.inserts), (100, 100));
    }
}
