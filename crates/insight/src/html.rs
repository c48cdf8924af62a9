//! The report as one self-contained HTML page: no script, no external resource; the
//! heat strips are inline SVG. Numbers are as of the request: reload to refresh.

use super::report::{Report, TableReport};
use std::fmt::Write;

/// Partitions drawn per table (the JSON report has every tracked one).
const SHOWN_PARTITIONS: usize = 12;
/// Scans listed per table.
const SHOWN_SCANS: usize = 10;
/// Pixels per second in a heat strip.
const PX_PER_SEC: u32 = 2;

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `12345` as `12,345`.
pub fn num(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Examined per returned, as shown: whole above 100, "all" when nothing came back.
fn ratio(r: f64, returned: u64) -> String {
    match r {
        _ if returned == 0 => format!("{} <span class=\"empty\">(0 returned)</span>", num(r as u64)),
        r if r >= 100.0 => num(r as u64),
        r => format!("{r:.1}"),
    }
}

/// The heat levels: (entities per second below which the level applies, colour, legend).
const LEVELS: [(u32, &str, &str); 6] = [
    (10, "#fef3c7", "1–9"),
    (100, "#fde68a", "10–99"),
    (500, "#fbbf24", "100–499"),
    (1000, "#f97316", "500–999"),
    (2000, "#dc2626", "1,000–1,999"),
    (u32::MAX, "#7f1d1d", "≥ 2,000 (over target)"),
];

fn heat_colour(n: u32) -> &'static str {
    LEVELS.iter().find(|(below, _, _)| n < *below).map_or("#7f1d1d", |l| l.1)
}

const STYLE: &str = r#"
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #1f2937; background: #f8fafc; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 0 0 12px; }
h2 .acct { font-weight: 400; color: #64748b; font-size: 14px; margin-left: 8px; }
h3 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: #475569; margin: 20px 0 8px; }
.meta { color: #64748b; margin: 0 0 20px; }
a { color: #2563eb; }
section.table { background: #fff; border: 1px solid #e2e8f0; border-radius: 8px; padding: 20px 24px; margin: 0 0 24px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; }
.card { border: 1px solid #e2e8f0; border-radius: 6px; padding: 8px 12px; min-width: 128px; }
.card .v { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
.card .k { font-size: 12px; color: #64748b; }
.card.bad { border-color: #fca5a5; background: #fef2f2; }
.card.warn { border-color: #fcd34d; background: #fffbeb; }
ul.findings { list-style: none; margin: 0; padding: 0; }
ul.findings li { border-left: 4px solid #94a3b8; background: #f8fafc; padding: 8px 12px; margin: 0 0 8px; border-radius: 0 6px 6px 0; }
ul.findings li.hot-partition, ul.findings li.full-scan { border-color: #dc2626; background: #fef2f2; }
ul.findings li.append-only, ul.findings li.prepend-only, ul.findings li.warm-partition, ul.findings li.wasteful-scan { border-color: #f59e0b; background: #fffbeb; }
ul.findings .tag { display: inline-block; font-size: 11px; font-weight: 600; text-transform: uppercase; letter-spacing: .04em; margin-right: 6px; color: #475569; }
ul.findings p { margin: 4px 0 0; color: #374151; }
table.grid { border-collapse: collapse; width: 100%; }
table.grid th { text-align: left; font-weight: 600; font-size: 12px; color: #475569; border-bottom: 1px solid #e2e8f0; padding: 6px 8px; }
table.grid td { border-bottom: 1px solid #f1f5f9; padding: 4px 8px; vertical-align: middle; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.pk, td.filter { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; word-break: break-all; }
td.pk { max-width: 260px; }
td.strip svg { display: block; }
tr.whole td { background: #f8fafc; font-weight: 600; }
.hotmark { color: #b91c1c; font-weight: 600; }
.kind { font-size: 12px; white-space: nowrap; }
.kind.full_scan { color: #b91c1c; font-weight: 600; }
.legend { font-size: 12px; color: #64748b; margin: 8px 0 0; }
.legend span.sw { display: inline-block; width: 12px; height: 12px; vertical-align: -2px; margin: 0 4px 0 10px; border-radius: 2px; }
.axis { display: flex; justify-content: space-between; font-size: 11px; color: #94a3b8; font-weight: 400; }
.note { color: #64748b; font-size: 12px; margin: 6px 0 0; }
.empty { color: #64748b; }
nav ul { margin: 0 0 20px; padding-left: 18px; }
"#;

/// Renders the page.
pub fn render(r: &Report) -> String {
    let mut out = String::with_capacity(16 * 1024);
    out.push_str(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>aztable · partition advisor</title><style>",
    );
    out.push_str(STYLE);
    out.push_str("</style></head><body>\n<header><h1>Partition advisor</h1>");
    let _ = writeln!(
        out,
        "<p class=\"meta\">aztable · counting for {} · target {} entities/s per partition · heat strips show the last {} minutes · reload for fresh numbers · also as <a href=\"insight?format=json\">JSON</a> and <a href=\"metrics\">Prometheus metrics</a> · <a href=\"browse\">browse the data</a></p></header>",
        duration(r.uptime_seconds),
        num(u64::from(r.target_entities_per_second)),
        r.window_seconds / 60
    );
    if r.tables.is_empty() {
        out.push_str("<p class=\"empty\">No table has been used since the server started.</p>");
    } else if r.tables.len() > 1 {
        out.push_str("<nav><ul>");
        for t in &r.tables {
            let _ = write!(
                out,
                "<li><a href=\"#{}\">{}</a> <span class=\"empty\">({}, {} finding(s))</span></li>",
                anchor(t),
                esc(&t.table),
                esc(&t.account),
                t.findings.len()
            );
        }
        out.push_str("</ul></nav>\n");
    }
    for t in &r.tables {
        table_section(&mut out, r, t);
    }
    if r.dropped.untracked_requests > 0 {
        let _ = write!(
            out,
            "<p class=\"note\">{} request(s) went to tables beyond the {} tracked.</p>",
            num(r.dropped.untracked_requests),
            r.limits.tables
        );
    }
    out.push_str("</body></html>\n");
    out
}

fn anchor(t: &TableReport) -> String {
    let clean = |s: &str| s.chars().filter(char::is_ascii_alphanumeric).collect::<String>();
    format!("t-{}-{}", clean(&t.account), clean(&t.table))
}

fn duration(secs: u32) -> String {
    match secs {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min {} s", s / 60, s % 60),
        s => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

fn table_section(out: &mut String, r: &Report, t: &TableReport) {
    let _ = write!(
        out,
        "<section class=\"table\" id=\"{}\"><h2>{}<span class=\"acct\">account {}</span></h2>\n<div class=\"cards\">",
        anchor(t),
        esc(&t.table),
        esc(&t.account)
    );
    let card = |out: &mut String, class: &str, v: String, k: &str| {
        let _ = write!(
            out,
            "<div class=\"card {class}\"><div class=\"v\">{v}</div><div class=\"k\">{k}</div></div>"
        );
    };
    card(out, "", num(t.queries.point), "point queries");
    card(out, "", num(t.queries.row_range), "row range scans");
    card(
        out,
        if t.queries.partition_range > 0 { "warn" } else { "" },
        num(t.queries.partition_range),
        "partition range scans",
    );
    card(out, if t.queries.full_scan > 0 { "bad" } else { "" }, num(t.queries.full_scan), "full table scans");
    card(out, "", num(t.entities_written), "entities written");
    card(out, "", format!("{}/s", num(u64::from(t.table_peak_per_second))), "whole table, peak");
    if let Some(p) = t.partitions.first() {
        let class = if p.hot {
            "bad"
        } else if p.peak_per_second * 2 >= r.target_entities_per_second {
            "warn"
        } else {
            ""
        };
        card(out, class, format!("{}/s", num(u64::from(p.peak_per_second))), "busiest partition, peak");
    }
    out.push_str("</div>\n");

    out.push_str("<h3>Findings</h3>");
    if t.findings.is_empty() {
        out.push_str("<p class=\"empty\">Nothing to report: point queries and narrow scans, partitions under the target, no append-only inserts.</p>");
    } else {
        out.push_str("<ul class=\"findings\">");
        for f in &t.findings {
            let _ = write!(
                out,
                "<li class=\"{}\"><span class=\"tag\">{}</span>{}<p>{}</p></li>",
                f.kind,
                f.kind.replace('-', " "),
                esc(&f.message),
                esc(&f.advice)
            );
        }
        out.push_str("</ul>");
    }

    out.push_str("\n<h3>Partitions, busiest first</h3>");
    partitions(out, r, t);

    out.push_str("\n<h3>Scans, worst first</h3>");
    scans(out, t);
    out.push_str("</section>\n");
}

fn partitions(out: &mut String, r: &Report, t: &TableReport) {
    if t.partitions.is_empty() {
        out.push_str("<p class=\"empty\">No entity read or written.</p>");
        return;
    }
    let width = r.window_seconds * PX_PER_SEC;
    let _ = write!(
        out,
        "<table class=\"grid heat\"><tr><th>PartitionKey</th><th class=\"n\">peak/s</th><th class=\"n\">last s</th>\
         <th style=\"width:{width}px\"><div class=\"axis\"><span>−{} min</span><span>entities per second</span><span>now</span></div></th>\
         <th class=\"n\">read</th><th class=\"n\">written</th></tr>",
        r.window_seconds / 60
    );
    let _ = write!(
        out,
        "<tr class=\"whole\"><td><i>whole table</i></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"strip\">",
        num(u64::from(t.table_peak_per_second)),
        num(u64::from(t.table_per_second.iter().rev().nth(1).copied().unwrap_or(0)))
    );
    strip(out, &t.table_per_second, "the whole table", width);
    let read: u64 = t.partitions.iter().map(|p| p.entities_read).sum();
    let _ = write!(
        out,
        "</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
        num(read),
        num(t.entities_written)
    );
    for p in t.partitions.iter().take(SHOWN_PARTITIONS) {
        let hot = if p.hot { " <span class=\"hotmark\" title=\"over the target\">▲</span>" } else { "" };
        let _ = write!(
            out,
            "<tr><td class=\"pk\">{}</td><td class=\"n\">{}{hot}</td><td class=\"n\">{}</td><td class=\"strip\">",
            if p.partition_key.is_empty() { "<i>(empty)</i>".to_owned() } else { esc(&p.partition_key) },
            num(u64::from(p.peak_per_second)),
            num(u64::from(p.last_second)),
        );
        strip(out, &p.per_second, &p.partition_key, width);
        let _ = write!(
            out,
            "</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            num(p.entities_read),
            num(p.entities_written)
        );
    }
    out.push_str("</table><p class=\"legend\">entities per second:");
    for (_, colour, label) in LEVELS {
        let _ = write!(out, "<span class=\"sw\" style=\"background:{colour}\"></span>{label}");
    }
    out.push_str("</p>");
    let more = t.partitions.len().saturating_sub(SHOWN_PARTITIONS);
    if more > 0 || t.partitions_dropped > 0 {
        let _ = write!(
            out,
            "<p class=\"note\">{more} more partition(s) tracked (all in the JSON report); {} partition(s) with less traffic no longer tracked (at most {} per table).</p>",
            num(t.partitions_dropped),
            r.limits.partitions_per_table
        );
    }
}

/// Last seconds as a row of coloured cells.
fn strip(out: &mut String, per_second: &[u32], what: &str, width: u32) {
    let _ = write!(
        out,
        "<svg class=\"heatstrip\" width=\"{width}\" height=\"16\" viewBox=\"0 0 {width} 16\" role=\"img\" aria-label=\"entities per second of {}\"><rect width=\"{width}\" height=\"16\" fill=\"#f1f5f9\"/>",
        esc(what)
    );
    for (i, &n) in per_second.iter().enumerate() {
        if n > 0 {
            let x = i as u32 * PX_PER_SEC;
            let _ = write!(
                out,
                "<rect x=\"{x}\" width=\"{PX_PER_SEC}\" height=\"16\" fill=\"{}\"><title>{n}/s</title></rect>",
                heat_colour(n)
            );
        }
    }
    out.push_str("</svg>");
}

fn scans(out: &mut String, t: &TableReport) {
    if t.scans.is_empty() {
        out.push_str("<p class=\"empty\">No scans: every query named both keys.</p>");
        return;
    }
    out.push_str(
        "<table class=\"grid scans\"><tr><th class=\"n\">examined per returned</th><th>kind</th><th class=\"n\">queries</th>\
         <th class=\"n\">examined</th><th class=\"n\">returned</th><th>$filter</th></tr>",
    );
    for s in t.scans.iter().take(SHOWN_SCANS) {
        let filter =
            if s.filter.is_empty() { "<i>(none: every entity)</i>".to_owned() } else { esc(&s.filter) };
        let _ = write!(
            out,
            "<tr><td class=\"n\">{}</td><td class=\"kind {}\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"filter\">{filter}</td></tr>",
            ratio(s.examined_per_returned, s.returned),
            s.kind.as_str(),
            s.kind.label(),
            num(s.count),
            num(s.examined),
            num(s.returned),
        );
    }
    out.push_str("</table>");
    if t.filters_dropped > 0 || t.scans.len() > SHOWN_SCANS {
        let _ = write!(
            out,
            "<p class=\"note\">{} less frequent filter(s) no longer tracked (at most {} per table).</p>",
            num(t.filters_dropped),
            super::table::MAX_FILTERS
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Advisor, InsightOptions, QueryKind};

    #[test]
    fn the_page_names_tables_escapes_keys_and_draws_strips() {
        let a = Advisor::new(InsightOptions::default());
        a.point_read("acct", "people", "<script>alert(1)</script>");
        a.queried("acct", "orders", QueryKind::FullScan, None, 100, &[]);
        let html = render(&a.report());
        assert!(html.contains("people") && html.contains("orders"));
        assert!(!html.contains("<script>alert"), "keys are escaped");
        assert!(html.contains("&lt;script&gt;"));
        assert!(html.contains("class=\"heatstrip\""));
        assert!(!html.contains("http://") && !html.contains("https://"), "self-contained");
        assert_eq!(
            (num(0), num(999), num(1000), num(1234567)),
            ("0".into(), "999".into(), "1,000".into(), "1,234,567".into())
        );
    }
}
