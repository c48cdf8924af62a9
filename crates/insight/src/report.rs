//! The advisor's report: what [`super::Advisor::report`] returns, served as JSON as is
//! and rendered by [`super::html`] and [`super::prom`]. The findings and the advice
//! they carry are worked out here.

use super::classify::QueryKind;
use super::html::num;
use super::pattern::{Pattern, Trend};
use super::series::WINDOW_SECS;
use super::table::{TableSnapshot, MAX_FILTERS, MAX_PARTITIONS};
use super::{MAX_TABLES, PARTITION_TARGET_PER_SEC};
use serde::Serialize;

/// A partition at or above this share of the target is "warm".
const WARM_PERCENT: u32 = 50;

/// A scan that examines at least this many entities per entity returned is wasteful.
const WASTEFUL_RATIO: f64 = 10.0;

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Entities per second one partition is expected to serve.
    pub target_entities_per_second: u32,
    pub uptime_seconds: u32,
    /// Seconds each partition's `per_second` series covers (the last of which is now).
    pub window_seconds: u32,
    pub limits: Limits,
    pub dropped: Dropped,
    /// Busiest first.
    pub tables: Vec<TableReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Limits {
    pub tables: usize,
    pub partitions_per_table: usize,
    pub filters_per_table: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Dropped {
    /// Requests to tables beyond the limit, not counted anywhere else.
    pub untracked_requests: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    pub point: u64,
    pub row_range: u64,
    pub partition_range: u64,
    pub full_scan: u64,
}

impl Counts {
    fn from(a: [u64; 4]) -> Counts {
        Counts { point: a[0], row_range: a[1], partition_range: a[2], full_scan: a[3] }
    }

    pub fn get(&self, kind: QueryKind) -> u64 {
        match kind {
            QueryKind::Point => self.point,
            QueryKind::RowRange => self.row_range,
            QueryKind::PartitionRange => self.partition_range,
            QueryKind::FullScan => self.full_scan,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct TableReport {
    pub account: String,
    pub table: String,
    /// Requests by kind (point reads included in `point`).
    pub queries: Counts,
    /// Entities scans examined, by kind.
    pub examined: Counts,
    /// Entities scans returned, by kind.
    pub returned: Counts,
    pub entities_written: u64,
    pub inserts: u64,
    /// Entities per second of the whole table (read and written), as for a partition.
    pub table_peak_per_second: u32,
    pub table_per_second: Vec<u32>,
    /// The tracked scan filters, worst first (most examined per returned).
    pub scans: Vec<ScanReport>,
    /// The tracked partitions, busiest first (by peak entities per second).
    pub partitions: Vec<PartitionReport>,
    pub key_patterns: Vec<KeyPattern>,
    pub findings: Vec<Finding>,
    /// Partitions no longer tracked (their place taken by busier ones).
    pub partitions_dropped: u64,
    pub filters_dropped: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ScanReport {
    /// The `$filter` (empty: none, the whole table).
    pub filter: String,
    pub kind: QueryKind,
    pub count: u64,
    pub examined: u64,
    pub returned: u64,
    /// Entities examined per entity returned (examined when nothing was returned).
    pub examined_per_returned: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PartitionReport {
    pub partition_key: String,
    pub entities_read: u64,
    pub entities_written: u64,
    /// The busiest second since tracking began.
    pub peak_per_second: u32,
    /// When that was, in seconds since the server started.
    pub peak_at_second: u32,
    /// Entities in the last complete second.
    pub last_second: u32,
    /// Seconds since the server started when tracking began.
    pub tracked_since_second: u32,
    /// Over the target at its peak.
    pub hot: bool,
    /// Entities per second over the last `window_seconds`, oldest first.
    pub per_second: Vec<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct KeyPattern {
    /// `PartitionKey` or `RowKey` (within each partition).
    pub key: &'static str,
    pub pattern: Pattern,
    /// Inserts whose key was greater / smaller than the previous insert's.
    pub increasing: u64,
    pub decreasing: u64,
    pub longest_run: u64,
    pub advice: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// `hot-partition`, `warm-partition`, `append-only`, `prepend-only`, `full-scan`,
    /// `wasteful-scan`.
    pub kind: &'static str,
    pub message: String,
    pub advice: String,
}

/// Builds the report from the tables' snapshots at second `now`.
pub fn build(now: u32, tables: Vec<(String, String, TableSnapshot)>, untracked_requests: u64) -> Report {
    let mut tables: Vec<TableReport> =
        tables.into_iter().map(|(a, t, s)| table_report(now, a, t, s)).collect();
    let busy = |t: &TableReport| {
        let q = &t.queries;
        q.point + q.row_range + q.partition_range + q.full_scan + t.entities_written
    };
    tables.sort_by(|a, b| {
        busy(b).cmp(&busy(a)).then_with(|| (&a.account, &a.table).cmp(&(&b.account, &b.table)))
    });
    Report {
        target_entities_per_second: PARTITION_TARGET_PER_SEC,
        uptime_seconds: now,
        window_seconds: WINDOW_SECS,
        limits: Limits {
            tables: MAX_TABLES,
            partitions_per_table: MAX_PARTITIONS,
            filters_per_table: MAX_FILTERS,
        },
        dropped: Dropped { untracked_requests },
        tables,
    }
}

fn table_report(now: u32, account: String, table: String, s: TableSnapshot) -> TableReport {
    let mut scans: Vec<ScanReport> = s
        .filters
        .iter()
        .map(|f| ScanReport {
            filter: f.text.clone(),
            kind: f.kind,
            count: f.count,
            examined: f.examined,
            returned: f.returned,
            examined_per_returned: ratio(f.examined, f.returned),
        })
        .collect();
    scans.sort_by(|a, b| {
        b.examined_per_returned
            .total_cmp(&a.examined_per_returned)
            .then(b.examined.cmp(&a.examined))
            .then(b.count.cmp(&a.count))
    });
    let last = now.saturating_sub(1);
    let mut partitions: Vec<PartitionReport> = s
        .partitions
        .iter()
        .map(|p| {
            let (peak_at, peak) = p.rates.peak();
            PartitionReport {
                partition_key: p.pk.clone(),
                entities_read: p.reads,
                entities_written: p.writes,
                peak_per_second: peak,
                peak_at_second: peak_at,
                last_second: p.rates.at(last),
                tracked_since_second: p.since,
                hot: peak > PARTITION_TARGET_PER_SEC,
                per_second: p.rates.window(now),
            }
        })
        .collect();
    partitions.sort_by(|a, b| {
        (b.peak_per_second, b.entities_read + b.entities_written)
            .cmp(&(a.peak_per_second, a.entities_read + a.entities_written))
            .then_with(|| a.partition_key.cmp(&b.partition_key))
    });
    let key_patterns: Vec<KeyPattern> = [("PartitionKey", &s.pk_trend), ("RowKey", &s.rk_trend)]
        .into_iter()
        .filter_map(|(key, trend)| key_pattern(key, trend))
        .collect();
    let mut t = TableReport {
        account,
        table,
        queries: Counts::from(s.queries),
        examined: Counts::from(s.examined),
        returned: Counts::from(s.returned),
        entities_written: s.entities_written,
        inserts: s.inserts,
        table_peak_per_second: s.rates.peak().1,
        table_per_second: s.rates.window(now),
        scans,
        partitions,
        key_patterns,
        findings: Vec::new(),
        partitions_dropped: s.partitions_evicted,
        filters_dropped: s.filters_evicted,
    };
    t.findings = findings(&t);
    t
}

fn ratio(examined: u64, returned: u64) -> f64 {
    let r = examined as f64 / returned.max(1) as f64;
    (r * 10.0).round() / 10.0
}

fn key_pattern(key: &'static str, trend: &Trend) -> Option<KeyPattern> {
    let pattern = trend.pattern()?;
    Some(KeyPattern {
        key,
        pattern,
        increasing: trend.up,
        decreasing: trend.down,
        longest_run: trend.longest_up.max(trend.longest_down),
        advice: pattern_advice(key, pattern).to_owned(),
    })
}

/// What to do about a key pattern (the service's partitioning guidance, in short).
pub fn pattern_advice(key: &str, pattern: Pattern) -> &'static str {
    match (key, pattern) {
        ("PartitionKey", Pattern::AppendOnly) => {
            "Every insert carries a PartitionKey greater than the last (a timestamp, a sequence \
             number). The service keeps neighbouring PartitionKeys together in range partitions, \
             so all new entities land in the last range, on one server: writes are capped at what \
             one partition serves, however many partitions the table has. Put a short bucket in \
             front of the key, e.g. hash(id) % 16 as \"07_\" + timestamp, so inserts spread over \
             16 ranges; read a time span by querying the 16 buckets in parallel."
        }
        ("PartitionKey", Pattern::PrependOnly) => {
            "Every insert carries a PartitionKey smaller than the last (reverse ticks, a countdown). \
             Range partitions keep neighbouring keys together, so all new entities land in the \
             first range, on one server: writes are capped at one partition's rate. Prefix the key \
             with a bucket (hash(id) % N) so inserts spread over N ranges."
        }
        (_, Pattern::AppendOnly) => {
            "Within each partition, every insert carries a RowKey greater than the last (a \
             timestamp): rows are appended at the end. That is fine while the partition stays \
             under 2,000 entities/s; if it gets hot, add a bucket to the PartitionKey. If readers \
             want the newest rows first, store the RowKey as reverse ticks (DateTime.MaxValue.Ticks \
             - ticks, zero-padded to 19 digits): a query with $top then returns the latest rows \
             without reading the older ones."
        }
        (_, Pattern::PrependOnly) => {
            "Within each partition, every insert carries a RowKey smaller than the last (reverse \
             ticks): newest rows come first, which suits newest-first reads with $top. All writes \
             of a partition still go to that one partition: keep it under 2,000 entities/s or add a \
             bucket to the PartitionKey."
        }
    }
}

fn findings(t: &TableReport) -> Vec<Finding> {
    let mut out = Vec::new();
    let target = PARTITION_TARGET_PER_SEC;
    let hot: Vec<&PartitionReport> = t.partitions.iter().filter(|p| p.hot).collect();
    if let Some(top) = hot.first() {
        out.push(Finding {
            kind: "hot-partition",
            message: format!(
                "{} partition(s) went over {} entities/s; '{}' peaked at {}/s.",
                hot.len(),
                num(u64::from(target)),
                top.partition_key,
                num(u64::from(top.peak_per_second))
            ),
            advice: "One partition is served by one server, which the service throttles (503 \
                     ServerBusy) above about 2,000 entities/s. Make the PartitionKey finer: append \
                     the next key property, or a bucket number chosen per write, so the load spreads \
                     over more partitions."
                .into(),
        });
    } else if let Some(top) =
        t.partitions.first().filter(|p| p.peak_per_second * 100 >= target * WARM_PERCENT)
    {
        out.push(Finding {
            kind: "warm-partition",
            message: format!(
                "Partition '{}' peaked at {}/s, {}% of the {}/s target.",
                top.partition_key,
                num(u64::from(top.peak_per_second)),
                top.peak_per_second * 100 / target,
                num(u64::from(target))
            ),
            advice: "Leave headroom for growth: run a stress test of this partition at peak load, \
                     and plan a finer PartitionKey before it reaches the target."
                .into(),
        });
    }
    for p in &t.key_patterns {
        let range = if p.key == "PartitionKey" {
            format!(
                " The table peaked at {}/s, all of it at one end of the key range.",
                num(u64::from(t.table_peak_per_second))
            )
        } else {
            String::new()
        };
        out.push(Finding {
            kind: p.pattern.as_str(),
            message: format!(
                "{} {}: {} of {} inserts had a {} key than the previous one.{range}",
                p.key,
                p.pattern.as_str(),
                p.increasing.max(p.decreasing),
                p.increasing + p.decreasing + 1,
                if p.pattern == Pattern::AppendOnly { "greater" } else { "smaller" },
            ),
            advice: p.advice.clone(),
        });
    }
    if t.queries.full_scan > 0 {
        out.push(Finding {
            kind: "full-scan",
            message: format!(
                "{} full table scan(s) examined {} entities and returned {}.",
                num(t.queries.full_scan),
                num(t.examined.full_scan),
                num(t.returned.full_scan)
            ),
            advice: "A filter without a PartitionKey condition reads the whole table, page by page. \
                     Add the PartitionKey (and a RowKey range) to the filter, or keep a second copy \
                     of the entities keyed by the property you search on (an index table) and read \
                     that by point query."
                .into(),
        });
    }
    if let Some(worst) =
        t.scans.iter().find(|s| s.kind != QueryKind::FullScan && s.examined_per_returned >= WASTEFUL_RATIO)
    {
        out.push(Finding {
            kind: "wasteful-scan",
            message: format!(
                "A {} examined {} entities per entity returned: {}",
                worst.kind.label(),
                worst.examined_per_returned,
                worst.filter
            ),
            advice: "The key range of this query holds far more rows than it returns: the other \
                     conditions are checked row by row. Narrow the RowKey range, or move the \
                     property that selects rows into the RowKey (e.g. <category>_<date>)."
                .into(),
        });
    }
    out
}

/// The report in a few log lines (printed at shutdown).
pub fn summary_lines(r: &Report) -> Vec<String> {
    let mut out = vec![format!(
        "insight: {} table(s) over {} s{}",
        r.tables.len(),
        r.uptime_seconds,
        if r.dropped.untracked_requests > 0 {
            format!(" ({} requests to untracked tables)", r.dropped.untracked_requests)
        } else {
            String::new()
        }
    )];
    for t in &r.tables {
        let q = &t.queries;
        let peak = t
            .partitions
            .first()
            .map(|p| format!("; busiest partition '{}' at {}/s", p.partition_key, p.peak_per_second))
            .unwrap_or_default();
        out.push(format!(
            "insight: {}/{}: {} point, {} row range, {} partition range, {} full scan; {} entities written{peak}",
            t.account, t.table, q.point, q.row_range, q.partition_range, q.full_scan, t.entities_written
        ));
        for f in &t.findings {
            out.push(format!("insight: {}/{}: {}: {}", t.account, t.table, f.kind, f.message));
        }
    }
    out
}
