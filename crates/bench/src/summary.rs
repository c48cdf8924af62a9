//! The comparison summary after a scenario's runs at one connection count
//! ([`Comparison`]: each endpoint's medians over the rounds, and per-round ratios to the
//! first endpoint), as an aligned text table, markdown rows or JSON lines (one object
//! per row); and the per-run [`Sample`] it and the sweep summary (`sweep.rs`) are made of.
//!
//! Every ratio reads "more than 1x favours the first endpoint": the rate ratio is the
//! first endpoint's rate over the other's (`aztable/azurite 24x`), the CPU ratio the
//! other's server CPU per operation over the first's (`azurite/aztable 29x`;
//! `ceiling/aztable 0.45x`: the ceiling spends 0.45 of aztable's CPU per operation).

use crate::stats::Report;
use crate::table::{cpu, rate, ratio, round, table};
use serde_json::json;

/// What one run contributes to a summary.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Sample {
    pub requests_per_s: f64,
    pub entities_per_s: f64,
    pub p99_ms: f64,
    /// Server CPU µs per operation (per request, or per entity: see [`CpuPer`]).
    pub cpu_per_op: Option<f64>,
    pub errors: u64,
}

/// The operation CPU is counted per.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CpuPer {
    Request,
    /// Batches and scans: per entity written, returned or examined.
    Entity,
}

impl CpuPer {
    pub(crate) fn name(self) -> &'static str {
        match self {
            CpuPer::Request => "request",
            CpuPer::Entity => "entity",
        }
    }
}

impl Sample {
    pub(crate) fn of(report: &Report, per: CpuPer) -> Sample {
        let cpu_per_op = match per {
            CpuPer::Request => report.server_cpu_us,
            CpuPer::Entity => report
                .server_cpu_total_us
                .filter(|_| report.entities > 0)
                .map(|us| us as f64 / report.entities as f64),
        };
        Sample {
            requests_per_s: report.requests_per_s(),
            entities_per_s: report.entities_per_s(),
            p99_ms: report.p99_ms,
            cpu_per_op,
            errors: report.errors,
        }
    }
}

/// The median of `xs` (the mean of the middle two for an even count); `None` if empty.
pub(crate) fn median(mut xs: Vec<f64>) -> Option<f64> {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(xs[n / 2]),
        _ => Some((xs[n / 2 - 1] + xs[n / 2]) / 2.0),
    }
}

/// Median and range of per-round values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub rounds: usize,
}

impl Spread {
    /// Over the finite values of `xs`; `None` if there is none.
    pub(crate) fn of(xs: impl IntoIterator<Item = f64>) -> Option<Spread> {
        let xs: Vec<f64> = xs.into_iter().filter(|x| x.is_finite()).collect();
        Some(Spread {
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            rounds: xs.len(),
            median: median(xs)?,
        })
    }

    fn text(&self) -> String {
        if self.rounds > 1 {
            format!("{} ({}-{})", ratio(self.median), ratio(self.min), ratio(self.max))
        } else {
            ratio(self.median)
        }
    }

    fn json(&self) -> serde_json::Value {
        json!({ "median": round(self.median), "min": round(self.min), "max": round(self.max), "rounds": self.rounds })
    }
}

/// `x / y`, infinite when `y` is 0.
pub(crate) fn div(x: f64, y: f64) -> f64 {
    if y > 0.0 {
        x / y
    } else {
        f64::INFINITY
    }
}

/// One endpoint's row of a [`Comparison`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub label: String,
    pub endpoint: String,
    pub rounds: usize,
    /// Medians over the rounds.
    pub requests_per_s: f64,
    pub entities_per_s: f64,
    pub p99_ms: f64,
    pub cpu_per_op: Option<f64>,
    pub errors: u64,
    /// Per round: this endpoint's CPU per operation over the first's (none for the
    /// first endpoint itself).
    pub cpu_ratio: Option<Spread>,
    /// Per round: the first endpoint's entities/s over this one's.
    pub rate_ratio: Option<Spread>,
}

/// The endpoints of one scenario at one connection count, side by side.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Comparison {
    pub scenario: String,
    pub connections: usize,
    pub cpu_per: CpuPer,
    pub rows: Vec<Row>,
}

impl Comparison {
    /// `runs[e]`: endpoint `e`'s samples, round by round (the same rounds for every
    /// endpoint); `endpoints[e]`: its (label, URL). The first endpoint is the baseline.
    pub(crate) fn of(
        scenario: &str,
        connections: usize,
        cpu_per: CpuPer,
        endpoints: &[(String, String)],
        runs: &[Vec<Sample>],
    ) -> Comparison {
        let base = runs.first().map(Vec::as_slice).unwrap_or_default();
        let rows = endpoints
            .iter()
            .zip(runs)
            .enumerate()
            .map(|(e, ((label, endpoint), samples))| {
                let med = |f: fn(&Sample) -> f64| median(samples.iter().map(f).collect()).unwrap_or(0.0);
                let others = e > 0;
                Row {
                    label: label.clone(),
                    endpoint: endpoint.clone(),
                    rounds: samples.len(),
                    requests_per_s: med(|s| s.requests_per_s),
                    entities_per_s: med(|s| s.entities_per_s),
                    p99_ms: med(|s| s.p99_ms),
                    cpu_per_op: median(samples.iter().filter_map(|s| s.cpu_per_op).collect()),
                    errors: samples.iter().map(|s| s.errors).sum(),
                    cpu_ratio: others
                        .then(|| {
                            Spread::of(
                                base.iter()
                                    .zip(samples)
                                    .filter_map(|(b, s)| Some(div(s.cpu_per_op?, b.cpu_per_op?))),
                            )
                        })
                        .flatten(),
                    rate_ratio: others
                        .then(|| {
                            Spread::of(
                                base.iter()
                                    .zip(samples)
                                    .map(|(b, s)| div(b.entities_per_s, s.entities_per_s)),
                            )
                        })
                        .flatten(),
                }
            })
            .collect();
        Comparison { scenario: scenario.to_string(), connections, cpu_per, rows }
    }

    fn base(&self) -> &str {
        self.rows.first().map_or("", |r| r.label.as_str())
    }

    /// The rows' cells: endpoint, req/s, entities/s, p99, CPU, CPU ratio, rate ratio, errors.
    fn cells(&self) -> Vec<Vec<String>> {
        let base = self.base();
        self.rows
            .iter()
            .map(|r| {
                vec![
                    r.label.clone(),
                    rate(r.requests_per_s),
                    rate(r.entities_per_s),
                    format!("{:.2}", r.p99_ms),
                    r.cpu_per_op.map_or("-".into(), cpu),
                    r.cpu_ratio.map_or(String::new(), |s| format!("{}/{base} {}", r.label, s.text())),
                    r.rate_ratio.map_or(String::new(), |s| format!("{base}/{} {}", r.label, s.text())),
                    r.errors.to_string(),
                ]
            })
            .collect()
    }

    /// An aligned text table under a title line.
    pub(crate) fn text(&self) -> String {
        let rounds = self.rows.first().map_or(0, |r| r.rounds);
        let title = format!(
            "== {}, {} connections, {}; CPU = server CPU us per {}; ratios over 1x favour {}",
            self.scenario,
            self.connections,
            if rounds > 1 { format!("medians of {rounds} rounds (ratio ranges)") } else { "1 round".into() },
            self.cpu_per.name(),
            self.base()
        );
        let header =
            ["endpoint", "req/s", "entities/s", "p99 ms", "CPU/op", "CPU ratio", "rate ratio", "errors"];
        format!(
            "{title}\n{}",
            table(&header, &self.cells(), &[false, true, true, true, true, false, false, true])
        )
    }

    /// The markdown header of [`Comparison::markdown_rows`].
    pub(crate) fn markdown_header() -> String {
        "| scenario | conns | endpoint | req/s | entities/s | p99 ms | CPU µs/op | CPU ratio | rate ratio |\n\
         | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
            .into()
    }

    /// One markdown row per endpoint (CPU per entity marked `/entity`).
    pub(crate) fn markdown_rows(&self) -> Vec<String> {
        let unit = if self.cpu_per == CpuPer::Entity { " /entity" } else { "" };
        self.cells()
            .into_iter()
            .map(|c| {
                format!(
                    "| {} | {} | {} | {} | {} | {} | {}{} | {} | {} |",
                    self.scenario, self.connections, c[0], c[1], c[2], c[3], c[4], unit, c[5], c[6]
                )
            })
            .collect()
    }

    /// One JSON object per endpoint.
    pub(crate) fn json(&self) -> Vec<serde_json::Value> {
        let base = self.base();
        self.rows
            .iter()
            .map(|r| {
                json!({
                    "kind": "compare",
                    "scenario": self.scenario,
                    "connections": self.connections,
                    "label": r.label,
                    "endpoint": r.endpoint,
                    "baseline": base,
                    "rounds": r.rounds,
                    "requests_per_s": round(r.requests_per_s),
                    "entities_per_s": round(r.entities_per_s),
                    "p99_ms": round(r.p99_ms),
                    "server_cpu_us_per_op": r.cpu_per_op.map(round),
                    "cpu_per": self.cpu_per.name(),
                    "errors": r.errors,
                    "cpu_ratio": r.cpu_ratio.map(|s| {
                        let mut v = s.json();
                        v["of"] = json!(format!("{}/{base}", r.label));
                        v
                    }),
                    "rate_ratio": r.rate_ratio.map(|s| {
                        let mut v = s.json();
                        v["of"] = json!(format!("{base}/{}", r.label));
                        v
                    }),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(rate: f64, cpu: f64) -> Sample {
        Sample { requests_per_s: rate, entities_per_s: rate, p99_ms: 1.0, cpu_per_op: Some(cpu), errors: 0 }
    }

    #[test]
    fn medians_and_spreads() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), Some(2.5));
        let s = Spread::of([5.0, 30.0, 5.0, f64::INFINITY]).expect("finite values");
        assert_eq!((s.median, s.min, s.max, s.rounds), (5.0, 5.0, 30.0, 3));
        assert_eq!(s.text(), "5.00x (5.00x-30.0x)");
        assert_eq!(Spread::of([f64::INFINITY]), None);
        assert_eq!(Spread::of([0.0342]).map(|s| s.text()), Some("0.034x".into()));
    }

    #[test]
    fn comparison_medians_and_ratios_per_round() {
        let endpoints: Vec<(String, String)> = ["aztable", "ceiling", "azurite"]
            .iter()
            .map(|l| (l.to_string(), format!("http://{l}")))
            .collect();
        // three rounds; the ratios are taken round by round, then their median
        let runs = vec![
            vec![sample(40_000.0, 25.0), sample(50_000.0, 20.0), sample(45_000.0, 30.0)],
            vec![sample(80_000.0, 10.0), sample(90_000.0, 12.0), sample(85_000.0, 11.0)],
            vec![
                sample(2_000.0, 500.0),
                sample(2_500.0, 400.0),
                Sample { cpu_per_op: None, ..sample(1_000.0, 0.0) },
            ],
        ];
        let c = Comparison::of("point-read", 16, CpuPer::Request, &endpoints, &runs);
        let az = &c.rows[0];
        assert_eq!((az.requests_per_s, az.cpu_per_op, az.rounds), (45_000.0, Some(25.0), 3));
        assert_eq!((az.cpu_ratio, az.rate_ratio), (None, None), "no ratio to itself");
        let ceiling = &c.rows[1];
        assert_eq!((ceiling.entities_per_s, ceiling.cpu_per_op), (85_000.0, Some(11.0)));
        let cpu = ceiling.cpu_ratio.expect("cpu ratio");
        // 10/25, 12/20, 11/30
        assert_eq!((cpu.median, cpu.min, cpu.max), (0.4, 11.0 / 30.0, 0.6));
        let rate = ceiling.rate_ratio.expect("rate ratio");
        // 40/80, 50/90, 45/85
        assert_eq!((rate.median, rate.min, rate.max), (45.0 / 85.0, 0.5, 50.0 / 90.0));
        let azurite = &c.rows[2];
        let cpu = azurite.cpu_ratio.expect("two rounds with CPU");
        assert_eq!((cpu.median, cpu.rounds), ((20.0 + 20.0) / 2.0, 2));
        assert_eq!(azurite.rate_ratio.map(|s| s.median), Some(20.0));

        let text = c.text();
        assert!(text.starts_with("== point-read, 16 connections, medians of 3 rounds"), "{text}");
        assert!(text.contains("ceiling/aztable 0.40x (0.37x-0.60x)"), "{text}");
        assert!(text.contains("aztable/azurite 20.0x (20.0x-45.0x)"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5);
        // aligned: every row's req/s column ends where the header's does
        let end = lines[1].find("req/s").map(|i| i + "req/s".len());
        assert!(lines[2..].iter().all(|l| l.find(" 45,000").map(|i| i + 7) == end || !l.contains("45,000")));
        assert!(lines[2].contains("45,000") && lines[4].contains("2,000"));

        let json = c.json();
        assert_eq!(json.len(), 3);
        assert_eq!(json[1]["kind"], "compare");
        assert_eq!(json[1]["cpu_ratio"]["of"], "ceiling/aztable");
        assert_eq!(json[1]["cpu_ratio"]["median"], 0.4);
        assert_eq!(json[2]["rate_ratio"]["of"], "aztable/azurite");
        assert!(json[0]["cpu_ratio"].is_null());
        let rows = c.markdown_rows();
        assert_eq!(rows[1], "| point-read | 16 | ceiling | 85,000 | 85,000 | 1.00 | 11.0 | ceiling/aztable 0.40x (0.37x-0.60x) | aztable/ceiling 0.53x (0.50x-0.56x) |");
    }

    #[test]
    fn cpu_per_entity_for_batches() {
        let mut r = Report::new("batch-insert", "http://x", "t", 4);
        r.requests = 10;
        r.entities = 1000;
        r.server_cpu_total_us = Some(20_000);
        r.server_cpu_us = Some(2_000.0);
        assert_eq!(Sample::of(&r, CpuPer::Entity).cpu_per_op, Some(20.0));
        assert_eq!(Sample::of(&r, CpuPer::Request).cpu_per_op, Some(2_000.0));
    }
}
