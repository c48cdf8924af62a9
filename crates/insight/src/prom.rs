//! The report as Prometheus text exposition (version 0.0.4): counters per table and
//! query kind, entities per partition, and the advisor's own bounds.
//!
//! Table-driven: each metric family is a row (name, type, help, how to read its value
//! from the report), and one writer escapes every label value the same way. The
//! `prometheus-client` crate was measured against it and not adopted: it models live
//! metric objects registered once, while this output is a snapshot of a report built
//! per scrape, so it would rebuild a registry of families on every request (see
//! docs/performance.md, "Considered and not adopted").

use super::classify::QueryKind;
use super::report::{PartitionReport, Report, TableReport};
use std::fmt::{Display, Write};

/// A family's type line.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Counter,
    Gauge,
}

/// Writes families and samples, escaping label values (backslash, double quote,
/// newline) as the exposition format requires.
struct Writer {
    out: String,
}

impl Writer {
    fn family(&mut self, name: &str, kind: Kind, help: &str) {
        let kind = match kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        };
        let _ = writeln!(self.out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl Display) {
        self.out.push_str(name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (label, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                self.out.push_str(label);
                self.out.push_str("=\"");
                for c in v.chars() {
                    match c {
                        '\\' => self.out.push_str("\\\\"),
                        '"' => self.out.push_str("\\\""),
                        '\n' => self.out.push_str("\\n"),
                        c => self.out.push(c),
                    }
                }
                self.out.push('"');
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {value}");
    }
}

/// One family of the table: its name, type, help text and how to read a sample's
/// value from `T` (the report, a table, a partition).
type Family<T> = (&'static str, Kind, &'static str, Value<T>);
type Value<T> = fn(&T) -> u64;
/// Per table and query kind: the value, and whether point reads are left out (scans).
type KindFamily = (&'static str, &'static str, bool, fn(&TableReport, QueryKind) -> u64);

/// Families with one sample for the whole advisor.
const GLOBAL: &[Family<Report>] = &[
    ("aztable_insight_uptime_seconds", Kind::Gauge, "Seconds the advisor has been counting.", |r| {
        u64::from(r.uptime_seconds)
    }),
    (
        "aztable_partition_target_entities_per_second",
        Kind::Gauge,
        "Entities per second one partition is expected to serve.",
        |r| u64::from(r.target_entities_per_second),
    ),
    (
        "aztable_insight_untracked_requests_total",
        Kind::Counter,
        "Requests to tables beyond the advisor's table limit.",
        |r| r.dropped.untracked_requests,
    ),
];

/// Families with one sample per table and query kind.
const PER_KIND: &[KindFamily] = &[
    ("aztable_queries_total", "Queries by kind (point reads count as point queries).", false, |t, k| {
        t.queries.get(k)
    }),
    ("aztable_scan_examined_entities_total", "Entities scans examined, by kind.", true, |t, k| {
        t.examined.get(k)
    }),
    ("aztable_scan_returned_entities_total", "Entities scans returned, by kind.", true, |t, k| {
        t.returned.get(k)
    }),
];

/// Counter families with one sample per table.
const PER_TABLE: &[(&str, &str, Value<TableReport>)] = &[
    ("aztable_entities_written_total", "Entities written (inserted, updated, merged, deleted).", |t| {
        t.entities_written
    }),
    ("aztable_inserts_total", "Entities inserted (insert and upserts).", |t| t.inserts),
    ("aztable_insight_partitions_dropped_total", "Partitions no longer tracked.", |t| t.partitions_dropped),
];

/// Families with one sample per tracked partition.
const PER_PARTITION: &[Family<PartitionReport>] = &[
    (
        "aztable_partition_entities_read_total",
        Kind::Counter,
        "Entities read from a tracked partition.",
        |p| p.entities_read,
    ),
    (
        "aztable_partition_entities_written_total",
        Kind::Counter,
        "Entities written to a tracked partition.",
        |p| p.entities_written,
    ),
    (
        "aztable_partition_peak_entities_per_second",
        Kind::Gauge,
        "The busiest second of a tracked partition.",
        |p| u64::from(p.peak_per_second),
    ),
    (
        "aztable_partition_entities_per_second",
        Kind::Gauge,
        "Entities of a tracked partition in the last complete second.",
        |p| u64::from(p.last_second),
    ),
];

/// Renders the metrics.
pub fn render(r: &Report) -> String {
    let mut w = Writer { out: String::new() };
    for (name, kind, help, value) in GLOBAL {
        w.family(name, *kind, help);
        w.sample(name, &[], value(r));
    }
    for (name, help, skip_point, value) in PER_KIND {
        w.family(name, Kind::Counter, help);
        let kinds = if *skip_point { &QueryKind::ALL[1..] } else { &QueryKind::ALL[..] };
        for t in &r.tables {
            for kind in kinds {
                let labels = [("account", &*t.account), ("table", &*t.table), ("kind", kind.as_str())];
                w.sample(name, &labels, value(t, *kind));
            }
        }
    }
    for (name, help, value) in PER_TABLE {
        w.family(name, Kind::Counter, help);
        for t in &r.tables {
            w.sample(name, &[("account", &t.account), ("table", &t.table)], value(t));
        }
    }
    let name = "aztable_key_pattern";
    w.family(name, Kind::Gauge, "1 when inserts follow an append-only or prepend-only key pattern.");
    for t in &r.tables {
        for p in &t.key_patterns {
            let labels = [
                ("account", &*t.account),
                ("table", &*t.table),
                ("key", p.key),
                ("pattern", p.pattern.as_str()),
            ];
            w.sample(name, &labels, 1);
        }
    }
    for (name, kind, help, value) in PER_PARTITION {
        w.family(name, *kind, help);
        for t in &r.tables {
            for p in &t.partitions {
                let labels =
                    [("account", &*t.account), ("table", &*t.table), ("partition", &*p.partition_key)];
                w.sample(name, &labels, value(p));
            }
        }
    }
    w.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Advisor, InsightOptions};

    #[test]
    fn every_sample_line_is_name_labels_value() {
        let a = Advisor::new(InsightOptions::default());
        a.point_read("acct", "t", "we\"ird\\pk\nx");
        a.wrote("acct", "t", "p", [("r", true)]);
        let text = render(&a.report());
        assert!(
            text.contains("aztable_queries_total{account=\"acct\",table=\"t\",kind=\"point\"} 1"),
            "{text}"
        );
        assert!(text.contains("partition=\"we\\\"ird\\\\pk\\nx\""), "{text}");
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (_, value) = line.rsplit_once(' ').expect(line);
            value.parse::<f64>().expect(line);
        }
    }

    #[test]
    fn every_family_is_declared_once_before_its_samples() {
        let a = Advisor::new(InsightOptions::default());
        a.wrote("acct", "t", "p", [("r", true)]);
        let text = render(&a.report());
        let mut declared = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let name = rest.split(' ').next().unwrap_or_default();
                assert!(!declared.contains(&name), "{name} declared twice");
                declared.push(name);
            } else if !line.starts_with('#') {
                let name = line.split(['{', ' ']).next().unwrap_or_default();
                assert_eq!(declared.last(), Some(&name), "{line} outside its family");
            }
        }
        assert_eq!(declared.len(), GLOBAL.len() + PER_KIND.len() + PER_TABLE.len() + 1 + PER_PARTITION.len());
    }
}
