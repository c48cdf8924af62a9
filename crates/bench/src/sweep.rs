//! The summary of a `--connections` sweep: one endpoint's scenario at each connection
//! count, medians over the rounds, and each count's rate relative to the first count's.

use crate::summary::{div, median, CpuPer, Sample};
use crate::table::{cpu, rate, ratio, round, table};
use serde_json::json;

/// One endpoint's scenario at each connection count of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sweep {
    pub scenario: String,
    pub label: String,
    pub endpoint: String,
    pub cpu_per: CpuPer,
    pub points: Vec<Point>,
}

/// One connection count of a [`Sweep`]: medians over the rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Point {
    pub connections: usize,
    pub rounds: usize,
    pub requests_per_s: f64,
    pub entities_per_s: f64,
    pub p99_ms: f64,
    pub cpu_per_op: Option<f64>,
    pub errors: u64,
    /// Entities/s over the first count's.
    pub relative: f64,
}

impl Sweep {
    /// `runs`: each connection count with the endpoint's samples at it.
    pub(crate) fn of(
        scenario: &str,
        label: &str,
        endpoint: &str,
        cpu_per: CpuPer,
        runs: &[(usize, Vec<Sample>)],
    ) -> Sweep {
        let mut points: Vec<Point> = runs
            .iter()
            .map(|(connections, samples)| {
                let med = |f: fn(&Sample) -> f64| median(samples.iter().map(f).collect()).unwrap_or(0.0);
                Point {
                    connections: *connections,
                    rounds: samples.len(),
                    requests_per_s: med(|s| s.requests_per_s),
                    entities_per_s: med(|s| s.entities_per_s),
                    p99_ms: med(|s| s.p99_ms),
                    cpu_per_op: median(samples.iter().filter_map(|s| s.cpu_per_op).collect()),
                    errors: samples.iter().map(|s| s.errors).sum(),
                    relative: 1.0,
                }
            })
            .collect();
        let first = points.first().map_or(0.0, |p| p.entities_per_s);
        points.iter_mut().for_each(|p| p.relative = div(p.entities_per_s, first));
        Sweep { scenario: scenario.into(), label: label.into(), endpoint: endpoint.into(), cpu_per, points }
    }

    fn first(&self) -> usize {
        self.points.first().map_or(0, |p| p.connections)
    }

    fn cells(&self) -> Vec<Vec<String>> {
        let first = self.first();
        self.points
            .iter()
            .map(|p| {
                vec![
                    p.connections.to_string(),
                    rate(p.requests_per_s),
                    rate(p.entities_per_s),
                    format!("{:.2}", p.p99_ms),
                    p.cpu_per_op.map_or("-".into(), cpu),
                    format!("{} of {first}", ratio(p.relative)),
                    p.errors.to_string(),
                ]
            })
            .collect()
    }

    pub(crate) fn text(&self) -> String {
        let rounds = self.points.first().map_or(0, |p| p.rounds);
        let title = format!(
            "== {} sweep, {}: {}; CPU = server CPU us per {}; rate relative to {} connections",
            self.scenario,
            self.label,
            if rounds > 1 { format!("medians of {rounds} rounds") } else { "1 round".into() },
            self.cpu_per.name(),
            self.first()
        );
        let header = ["conns", "req/s", "entities/s", "p99 ms", "CPU/op", "rate", "errors"];
        format!("{title}\n{}", table(&header, &self.cells(), &[true, true, true, true, true, false, true]))
    }

    pub(crate) fn markdown_header() -> String {
        "| scenario | endpoint | conns | req/s | entities/s | p99 ms | CPU µs/op | rate |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
            .into()
    }

    pub(crate) fn markdown_rows(&self) -> Vec<String> {
        let unit = if self.cpu_per == CpuPer::Entity { " /entity" } else { "" };
        self.cells()
            .into_iter()
            .map(|c| {
                format!(
                    "| {} | {} | {} | {} | {} | {} | {}{} | {} |",
                    self.scenario, self.label, c[0], c[1], c[2], c[3], c[4], unit, c[5]
                )
            })
            .collect()
    }

    pub(crate) fn json(&self) -> Vec<serde_json::Value> {
        self.points
            .iter()
            .map(|p| {
                json!({
                    "kind": "sweep",
                    "scenario": self.scenario,
                    "label": self.label,
                    "endpoint": self.endpoint,
                    "connections": p.connections,
                    "rounds": p.rounds,
                    "requests_per_s": round(p.requests_per_s),
                    "entities_per_s": round(p.entities_per_s),
                    "p99_ms": round(p.p99_ms),
                    "server_cpu_us_per_op": p.cpu_per_op.map(round),
                    "cpu_per": self.cpu_per.name(),
                    "errors": p.errors,
                    "first_connections": self.first(),
                    "rate_vs_first": round(p.relative),
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
    fn sweeps_relative_to_the_first_count() {
        let runs = vec![
            (16, vec![sample(40_000.0, 25.0)]),
            (256, vec![sample(38_800.0, 26.0)]),
            (1000, vec![sample(30_000.0, 30.0), sample(32_000.0, 28.0)]),
        ];
        let s = Sweep::of("point-read", "aztable", "http://x", CpuPer::Request, &runs);
        let rel: Vec<f64> = s.points.iter().map(|p| p.relative).collect();
        assert_eq!(rel, [1.0, 0.97, 31_000.0 / 40_000.0]);
        assert_eq!(s.points[2].cpu_per_op, Some(29.0));
        let text = s.text();
        assert!(text.contains("0.97x of 16") && text.contains("0.78x of 16"), "{text}");
        assert_eq!(s.json()[1]["rate_vs_first"], 0.97);
        assert_eq!(s.json()[1]["kind"], "sweep");
        assert!(s.markdown_rows()[2].starts_with("| point-read | aztable | 1000 | 31,000 |"));
    }
}
