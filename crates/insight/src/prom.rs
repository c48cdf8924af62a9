//! The report as Prometheus text exposition (version 0.0.4): counters per table and
//! query kind, entities per partition, and the advisor's own bounds.

use super::classify::QueryKind;
use super::report::Report;
use std::fmt::Write;

/// Escapes a label value (backslash, double quote, newline).
fn esc(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Renders the metrics.
pub fn render(r: &Report) -> String {
    let mut out = String::new();
    let family = |out: &mut String, name: &str, kind: &str, help: &str| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    };
    family(&mut out, "aztable_insight_uptime_seconds", "gauge", "Seconds the advisor has been counting.");
    let _ = writeln!(out, "aztable_insight_uptime_seconds {}", r.uptime_seconds);
    family(
        &mut out,
        "aztable_partition_target_entities_per_second",
        "gauge",
        "Entities per second one partition is expected to serve.",
    );
    let _ = writeln!(out, "aztable_partition_target_entities_per_second {}", r.target_entities_per_second);
    family(
        &mut out,
        "aztable_insight_untracked_requests_total",
        "counter",
        "Requests to tables beyond the advisor's table limit.",
    );
    let _ = writeln!(out, "aztable_insight_untracked_requests_total {}", r.dropped.untracked_requests);

    let table_labels = |t: &super::report::TableReport| {
        format!("account=\"{}\",table=\"{}\"", esc(&t.account), esc(&t.table))
    };
    family(
        &mut out,
        "aztable_queries_total",
        "counter",
        "Queries by kind (point reads count as point queries).",
    );
    for t in &r.tables {
        for kind in QueryKind::ALL {
            let _ = writeln!(
                out,
                "aztable_queries_total{{{},kind=\"{}\"}} {}",
                table_labels(t),
                kind.as_str(),
                t.queries.get(kind)
            );
        }
    }
    for (name, help, pick) in [
        ("aztable_scan_examined_entities_total", "Entities scans examined, by kind.", 0),
        ("aztable_scan_returned_entities_total", "Entities scans returned, by kind.", 1),
    ] {
        family(&mut out, name, "counter", help);
        for t in &r.tables {
            let counts = if pick == 0 { &t.examined } else { &t.returned };
            for kind in &QueryKind::ALL[1..] {
                let _ = writeln!(
                    out,
                    "{name}{{{},kind=\"{}\"}} {}",
                    table_labels(t),
                    kind.as_str(),
                    counts.get(*kind)
                );
            }
        }
    }
    family(
        &mut out,
        "aztable_entities_written_total",
        "counter",
        "Entities written (inserted, updated, merged, deleted).",
    );
    for t in &r.tables {
        let _ = writeln!(out, "aztable_entities_written_total{{{}}} {}", table_labels(t), t.entities_written);
    }
    family(&mut out, "aztable_inserts_total", "counter", "Entities inserted (insert and upserts).");
    for t in &r.tables {
        let _ = writeln!(out, "aztable_inserts_total{{{}}} {}", table_labels(t), t.inserts);
    }
    family(&mut out, "aztable_insight_partitions_dropped_total", "counter", "Partitions no longer tracked.");
    for t in &r.tables {
        let _ = writeln!(
            out,
            "aztable_insight_partitions_dropped_total{{{}}} {}",
            table_labels(t),
            t.partitions_dropped
        );
    }
    family(
        &mut out,
        "aztable_key_pattern",
        "gauge",
        "1 when inserts follow an append-only or prepend-only key pattern.",
    );
    for t in &r.tables {
        for p in &t.key_patterns {
            let _ = writeln!(
                out,
                "aztable_key_pattern{{{},key=\"{}\",pattern=\"{}\"}} 1",
                table_labels(t),
                p.key,
                p.pattern.as_str()
            );
        }
    }
    let parts = [
        ("aztable_partition_entities_read_total", "counter", "Entities read from a tracked partition.", 0),
        (
            "aztable_partition_entities_written_total",
            "counter",
            "Entities written to a tracked partition.",
            1,
        ),
        (
            "aztable_partition_peak_entities_per_second",
            "gauge",
            "The busiest second of a tracked partition.",
            2,
        ),
        (
            "aztable_partition_entities_per_second",
            "gauge",
            "Entities of a tracked partition in the last complete second.",
            3,
        ),
    ];
    for (name, kind, help, pick) in parts {
        family(&mut out, name, kind, help);
        for t in &r.tables {
            for p in &t.partitions {
                let v = match pick {
                    0 => p.entities_read,
                    1 => p.entities_written,
                    2 => u64::from(p.peak_per_second),
                    _ => u64::from(p.last_second),
                };
                let _ = writeln!(
                    out,
                    "{name}{{{},partition=\"{}\"}} {v}",
                    table_labels(t),
                    esc(&p.partition_key)
                );
            }
        }
    }
    out
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
}
