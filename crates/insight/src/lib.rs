//! INSIGHT: the partition advisor. Counts, per table, what the requests do to its key
//! space (point queries and row-range, partition-range and full-table scans, as the
//! planner classifies them; what scans examine for what they return; entities per
//! second in each partition; the order of inserted keys) and turns it into advice:
//! [`Advisor::report`], rendered as JSON, an HTML page ([`html`]) and Prometheus
//! metrics ([`prom`]).
//!
//! The hot path (a point read, an insert) costs a few relaxed atomic adds, a read lock
//! of one of `TABLE_SHARDS` table shards and the lock of one of a table's partition
//! shards: no lock shared by every request. Memory is bounded ([`MAX_TABLES`] tables,
//! [`table::MAX_PARTITIONS`] partitions and [`table::MAX_FILTERS`] filters each); what
//! is not tracked is counted. Pure: no I/O, no async.

pub mod browse;
pub mod classify;
pub mod gate;
pub mod html;
pub mod pattern;
pub mod prom;
pub mod report;
pub mod series;
pub mod table;

pub use classify::{classify, QueryKind};
pub use report::Report;

use aztable_model::Entity;
use aztable_wire::filter::Expr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Instant;
use table::TableStats;

/// Tables tracked; requests to others are counted in [`Report::dropped`].
pub const MAX_TABLES: usize = 64;
/// Shards of the table list.
const TABLE_SHARDS: usize = 16;

/// The scalability target of one partition, in entities per second.
pub const PARTITION_TARGET_PER_SEC: u32 = 2_000;

/// How the advisor is set up.
#[derive(Debug, Clone, Default)]
pub struct InsightOptions {
    /// Serve the admin pages without a key (the server listens on loopback only).
    pub open: bool,
    /// `--warnFullScan N`: log a full table scan that examines more than N entities.
    pub warn_full_scan: Option<u64>,
    /// `--insightExemptTables`: tables whose findings never enter the gate's ledger.
    pub exempt_tables: Vec<String>,
}

/// The partition advisor of one server.
#[derive(Debug)]
pub struct Advisor {
    started: Instant,
    options: InsightOptions,
    shards: Box<[RwLock<Vec<Arc<TableStats>>>]>,
    tables: AtomicUsize,
    /// Requests to tables beyond [`MAX_TABLES`].
    untracked_requests: AtomicU64,
    /// The findings a test suite can refuse ([`gate`]).
    gate: Mutex<gate::Gate>,
}

impl Advisor {
    pub fn new(options: InsightOptions) -> Self {
        Advisor {
            started: Instant::now(),
            gate: Mutex::new(gate::Gate::new(&options.exempt_tables)),
            options,
            shards: (0..TABLE_SHARDS).map(|_| RwLock::default()).collect(),
            tables: AtomicUsize::new(0),
            untracked_requests: AtomicU64::new(0),
        }
    }

    pub fn options(&self) -> &InsightOptions {
        &self.options
    }

    /// Seconds since the advisor started.
    fn now_sec(&self) -> u32 {
        u32::try_from(self.started.elapsed().as_secs()).unwrap_or(u32::MAX - 1)
    }

    /// Runs `f` on the stats of `account`/`table`, creating them while fewer than
    /// [`MAX_TABLES`] are tracked.
    fn with_table(&self, account: &str, table: &str, f: impl FnOnce(&TableStats)) {
        let Some(shard) = self.shards.get(table_shard(account, table)) else { return };
        {
            let tables = shard.read().unwrap_or_else(PoisonError::into_inner);
            if let Some(t) = tables.iter().find(|t| t.is(account, table)) {
                f(t);
                return;
            }
        }
        if self.tables.load(Relaxed) >= MAX_TABLES {
            // full: no write lock for the requests to untracked tables
            self.untracked_requests.fetch_add(1, Relaxed);
            return;
        }
        let mut tables = shard.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(t) = tables.iter().find(|t| t.is(account, table)) {
            f(t);
            return;
        }
        if self.tables.fetch_add(1, Relaxed) >= MAX_TABLES {
            self.tables.fetch_sub(1, Relaxed);
            self.untracked_requests.fetch_add(1, Relaxed);
            return;
        }
        let t = Arc::new(TableStats::new(account, table));
        f(&t);
        tables.push(t);
    }

    /// A point read (Get Entity, or a query by both keys that read at most one row).
    pub fn point_read(&self, account: &str, table: &str, pk: &str) {
        let sec = self.now_sec();
        self.with_table(account, table, |t| {
            t.count_query(QueryKind::Point, 0, 0);
            t.touch(pk, sec, 1, 0, None);
        });
    }

    /// Entities written to one partition: `rows` gives each RowKey and whether it was
    /// an insert (insert, insert-or-replace, insert-or-merge), whose key order is
    /// followed.
    pub fn wrote<'a>(
        &self,
        account: &str,
        table: &str,
        pk: &str,
        rows: impl IntoIterator<Item = (&'a str, bool)>,
    ) {
        let sec = self.now_sec();
        self.with_table(account, table, |t| {
            let (mut n, mut inserts) = (0u32, 0u32);
            for (rk, inserted) in rows {
                n += 1;
                if inserted {
                    inserts += 1;
                    t.touch(pk, sec, 0, 1, Some(rk));
                } else {
                    t.touch(pk, sec, 0, 1, None);
                }
            }
            t.count_writes(u64::from(n), u64::from(inserts), (inserts > 0).then_some(pk));
        });
    }

    /// One page of Query Entities: its kind, filter, the entities it examined and the
    /// ones it returned (counted to their partitions). Returns whether the page is a
    /// full table scan over the `--warnFullScan` threshold.
    pub fn queried(
        &self,
        account: &str,
        table: &str,
        kind: QueryKind,
        filter: Option<&Expr>,
        examined: u64,
        returned: &[Entity],
    ) -> bool {
        let sec = self.now_sec();
        self.with_table(account, table, |t| {
            t.count_query(kind, examined, returned.len() as u64);
            if kind != QueryKind::Point {
                let text = filter.map(ToString::to_string).unwrap_or_default();
                t.count_filter(&text, kind, examined, returned.len() as u64);
            }
            // pages are in key order: one touch per partition
            for run in returned.chunk_by(|a, b| a.partition_key == b.partition_key) {
                if let Some(first) = run.first() {
                    t.touch(&first.partition_key, sec, u32::try_from(run.len()).unwrap_or(u32::MAX), 0, None);
                }
            }
        });
        kind == QueryKind::FullScan && self.options.warn_full_scan.is_some_and(|n| examined > n)
    }

    /// A page of Query Entities that scanned the whole table, as a client asked for it
    /// without the `x-aztable-expect-scan` marker: counted in the gate's ledger.
    pub fn gate_scan(&self, account: &str, table: &str, filter: &str) {
        self.gate.lock().unwrap_or_else(PoisonError::into_inner).scan(account, table, filter);
    }

    /// The gate's findings of `kinds` (all when empty): the pending ones, or all since
    /// the start. Hot partitions and PartitionKeys only ever increasing are taken from
    /// the counts now. (A RowKey that only increases within its partition is common and
    /// harmless below a partition's target, so it is no finding of the gate.)
    pub fn gate_findings(&self, kinds: &[gate::GateKind], all: bool) -> Vec<gate::GateFinding> {
        self.gate_findings_of(&self.report(), kinds, all)
    }

    fn gate_findings_of(
        &self,
        report: &Report,
        kinds: &[gate::GateKind],
        all: bool,
    ) -> Vec<gate::GateFinding> {
        let mut g = self.gate.lock().unwrap_or_else(PoisonError::into_inner);
        for t in &report.tables {
            for p in t.partitions.iter().filter(|p| p.hot) {
                let peak = u64::from(p.peak_per_second);
                g.absorb(gate::GateKind::HotPartition, &t.account, &t.table, &p.partition_key, peak);
            }
            for k in &t.key_patterns {
                if k.key == "PartitionKey" && k.pattern == pattern::Pattern::AppendOnly {
                    g.absorb(gate::GateKind::AppendOnly, &t.account, &t.table, k.key, k.increasing);
                }
            }
        }
        g.findings(kinds, all)
    }

    /// The report with every finding of the gate since the start (`--insightReport`).
    pub fn report_file(&self) -> gate::ReportFile {
        let report = self.report();
        let gate_findings = self.gate_findings_of(&report, &[], true);
        gate::ReportFile { report, gate_findings }
    }

    /// Clears the gate's pending findings and starts the advisor's counts over (the
    /// totals of the findings stay, for the exit status at shutdown).
    pub fn acknowledge(&self) {
        let mut g = self.gate.lock().unwrap_or_else(PoisonError::into_inner);
        for shard in self.shards.iter() {
            shard.write().unwrap_or_else(PoisonError::into_inner).clear();
        }
        self.tables.store(0, Relaxed);
        self.untracked_requests.store(0, Relaxed);
        g.acknowledge();
    }

    /// The report in a few log lines (printed at shutdown).
    pub fn summary_lines(&self) -> Vec<String> {
        report::summary_lines(&self.report())
    }

    /// Everything tracked, with the findings and advice.
    pub fn report(&self) -> Report {
        let now = self.now_sec();
        let mut tables: Vec<(String, String, table::TableSnapshot)> = Vec::new();
        for shard in self.shards.iter() {
            let shard = shard.read().unwrap_or_else(PoisonError::into_inner);
            tables.extend(shard.iter().map(|t| (t.account.clone(), t.table.clone(), t.snapshot())));
        }
        report::build(now, tables, self.untracked_requests.load(Relaxed))
    }
}

/// The shard of a table's stats: a hash of the account and of the table name without
/// letter case, read eight bytes at a time (a table is looked up on every point read and
/// write; FNV's byte at a time cost a hundred instructions more). `| 0x20` lower-cases an
/// ASCII letter, so two names that differ only in letter case hash the same.
fn table_shard(account: &str, table: &str) -> usize {
    let h = words(table.as_bytes(), 0x2020_2020_2020_2020, words(account.as_bytes(), 0, 0));
    // a multiplication carries bits upwards only: the top bits, after one more round,
    // depend on every byte
    ((h ^ (h >> 31)).wrapping_mul(K) >> 48) as usize % TABLE_SHARDS
}

/// The multiplier of [`words`] (2^64 over the golden ratio, odd).
const K: u64 = 0x9e37_79b9_7f4a_7c15;

/// Mixes `bytes` into `h` eight bytes at a time, each word or'ed with `fold`.
fn words(bytes: &[u8], fold: u64, mut h: u64) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    let mut word = [0u8; 8];
    for chunk in &mut chunks {
        word.copy_from_slice(chunk);
        h = (h ^ (u64::from_le_bytes(word) | fold)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    word = [0; 8];
    word[..rest.len()].copy_from_slice(rest);
    (h ^ (u64::from_le_bytes(word) | fold) ^ bytes.len() as u64).wrapping_mul(K)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Table names equal without letter case land in one shard; the account's letter
        /// case counts.
        #[test]
        fn a_table_has_one_shard_whatever_its_letter_case(
            account in "[a-zA-Z0-9]{1,24}", table in "[A-Za-z][A-Za-z0-9]{2,62}", flips in proptest::collection::vec(proptest::prelude::any::<bool>(), 63)
        ) {
            let flipped: String = table
                .chars()
                .zip(&flips)
                .map(|(c, f)| if *f { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() })
                .collect();
            proptest::prop_assert_eq!(table_shard(&account, &table), table_shard(&account, &flipped));
            proptest::prop_assert!(table_shard(&account, &table) < TABLE_SHARDS);
        }
    }

    /// A few dozen tables spread over the shards (none takes them all).
    #[test]
    fn tables_spread_over_the_shards() {
        let mut used = [0usize; TABLE_SHARDS];
        for i in 0..64 {
            used[table_shard("devstoreaccount1", &format!("table{i}"))] += 1;
        }
        assert!(used.iter().filter(|n| **n > 0).count() >= TABLE_SHARDS / 2, "{used:?}");
        assert!(used.iter().all(|n| *n <= 16), "{used:?}");
    }

    #[test]
    fn tables_are_bounded_and_found_without_letter_case() {
        let a = Advisor::new(InsightOptions::default());
        a.point_read("acct", "People", "p");
        a.point_read("acct", "people", "p");
        a.point_read("other", "people", "p");
        for i in 0..MAX_TABLES + 10 {
            a.wrote("acct", &format!("t{i}"), "p", [("r", true)]);
        }
        let r = a.report();
        assert_eq!(r.tables.len(), MAX_TABLES);
        assert_eq!(r.dropped.untracked_requests, 12);
        let people = r.tables.iter().find(|t| t.account == "acct" && t.table == "People").expect("People");
        assert_eq!(people.queries.point, 2);
    }

    #[test]
    fn append_only_inserts_are_named_and_random_ones_are_not() {
        let a = Advisor::new(InsightOptions::default());
        for i in 0..200u64 {
            // one partition per entity, keys increasing: the append-only pattern
            a.wrote(
                "acct",
                "events",
                &format!("{:019}", 638_500_000_000_000_000 + i * 10_000_000),
                [("0", true)],
            );
            // one partition, RowKeys from a scrambled sequence
            let rk = format!("{:08x}", (i * 2_654_435_761) % 4_294_967_291);
            a.wrote("acct", "random", "p", [(rk.as_str(), true)]);
        }
        let r = a.report();
        let events = r.tables.iter().find(|t| t.table == "events").expect("events");
        let random = r.tables.iter().find(|t| t.table == "random").expect("random");
        assert_eq!(events.key_patterns.len(), 1, "{:?}", events.key_patterns);
        assert_eq!(events.key_patterns[0].key, "PartitionKey");
        assert_eq!(events.key_patterns[0].pattern, pattern::Pattern::AppendOnly);
        assert!(events.findings.iter().any(|f| f.kind == "append-only"));
        assert!(random.key_patterns.is_empty(), "{:?}", random.key_patterns);
    }

    #[test]
    fn the_gate_reads_hot_partitions_and_append_only_keys_and_skips_exempt_tables() {
        use gate::GateKind;
        let a =
            Advisor::new(InsightOptions { exempt_tables: vec!["Quiet".into()], ..InsightOptions::default() });
        let rks: Vec<String> =
            (0..2_500).map(|i| format!("{:08x}", (i * 2_654_435_761u64) % 4_294_967_291)).collect();
        for table in ["hot", "quiet"] {
            a.wrote("acct", table, "p", rks.iter().map(|r| (r.as_str(), false)));
        }
        for i in 0..200u64 {
            a.wrote("acct", "events", &format!("{:019}", 638_500_000_000_000_000 + i), [("0", true)]);
        }
        a.gate_scan("acct", "quiet", "");
        let f = a.gate_findings(&[], false);
        let kinds: Vec<(GateKind, &str, &str)> =
            f.iter().map(|f| (f.kind, f.table.as_str(), f.subject.as_str())).collect();
        assert_eq!(
            kinds,
            [(GateKind::HotPartition, "hot", "p"), (GateKind::AppendOnly, "events", "PartitionKey")],
            "{f:?}"
        );
        assert!(f[0].count > 2_000, "{f:?}");
        assert_eq!(a.gate_findings(&[GateKind::FullScan], false), []);
        a.acknowledge();
        assert_eq!(a.gate_findings(&[], false), [], "acknowledged, and the counts start over");
        assert_eq!(a.gate_findings(&[], true).len(), 2, "the totals stay");
        assert!(a.report().tables.is_empty());
        let file = serde_json::to_value(a.report_file()).unwrap();
        assert_eq!(file["gate_findings"][0]["kind"], "hotPartition");
        assert!(file["target_entities_per_second"].is_number());
    }
}
