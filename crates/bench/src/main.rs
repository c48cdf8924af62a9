//! `aztable-bench`: a bounded load tool for Table-service endpoints on loopback (aztable,
//! Azurite, or its own `--ceiling-server`). Every request is SharedKey-signed; N workers
//! each keep one HTTP/1.1 keep-alive connection; entities are ~1 KB. Prints one line per
//! run (or JSON lines with `--json`). `--compare` (repeatable) runs the same scenarios
//! against more endpoints, one after the other with fresh tables, and a summary table
//! per scenario sets each beside the first; `--connections 16,256,1000` sweeps
//! connection counts.
//!
//! ```text
//! aztable-bench --endpoint aztable=http://127.0.0.1:10002/devstoreaccount1 \
//!     --compare azurite=http://127.0.0.1:10102/devstoreaccount1 \
//!     --scenario point-read --connections 16 --duration 10s --pid 1234 --compare-pid 5678
//! ```
//!
//! See docs/performance.md for the scenarios and the measured figures.

mod ceiling;
mod cli;
mod client;
mod conns;
mod entity;
mod scenarios;
mod stats;
mod summary;
mod sweep;
mod table;

/// The same allocator as the server: the load tool allocates per request too, and its
/// CPU is taken from the server it measures.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use aztable_wire::auth::sign::decode_key;
use clap::Parser;
use cli::{Args, Plan};
use client::Target;
use scenarios::Params;
use stats::Report;
use std::sync::Arc;
use summary::{Comparison, Sample};
use sweep::Sweep;

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = args.threads {
        builder.worker_threads(n.max(1));
    }
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("aztable-bench: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::from(1),
        Err(e) => {
            eprintln!("aztable-bench: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

/// Runs everything; `Ok(false)` if some request failed.
///
/// For each scenario, for each connection count: `--repeat` rounds, each running every
/// endpoint once (in an order rotated per round), then the comparison summary; after
/// the last count of a sweep, the sweep summary per endpoint.
async fn run(args: Args) -> Result<bool, String> {
    if let Some(port) = args.ceiling_server {
        ceiling::serve(port, args.serve_for, args.ceiling_work.unwrap_or_default()).await?;
        return Ok(true);
    }
    let plan = Plan::of(&args)?;
    let key = decode_key(&args.key)?;
    let targets = plan
        .endpoints
        .iter()
        .map(|e| Target::parse(&e.url, &args.account, &key).map(Arc::new))
        .collect::<Result<Vec<_>, _>>()?;
    let most = plan.connections.iter().copied().max().unwrap_or(1);
    conns::check_open_files(most + args.scanners)?;
    let base = Params {
        connections: most,
        scanners: args.scanners,
        duration: args.duration,
        max_requests: args.requests,
        preload: args.preload,
        partition_size: args.partition_size,
        range_size: args.range_size,
        read_percent: args.read_percent,
        hot_keys: args.hot_keys,
        table: args.table.clone(),
        keep_tables: args.keep_tables,
        pid: None,
        settle: args.settle.map(|max| (max, plan.pids.clone())),
        seed: args.seed,
    };
    let labels: Vec<(String, String)> =
        plan.endpoints.iter().map(|e| (e.label.clone(), e.url.clone())).collect();
    let mut out = Output { json: args.json, markdown: args.markdown, ..Output::default() };
    for &scenario in &plan.scenarios {
        // per connection count: each endpoint's samples, round by round
        let mut sweep: Vec<(usize, Vec<Vec<Sample>>)> = Vec::new();
        for &connections in &plan.connections {
            let mut runs = vec![Vec::new(); plan.endpoints.len()];
            for round in 0..plan.rounds {
                for e in plan.order(round) {
                    let spec = &plan.endpoints[e];
                    let params = Params { connections, pid: spec.pid, preload: spec.preload, ..base.clone() };
                    let mut report = scenarios::run(targets[e].clone(), scenario, &params).await?;
                    report.label = spec.label.clone();
                    out.report(&report);
                    runs[e].push(Sample::of(&report, scenario.cpu_per()));
                }
            }
            if plan.compares() {
                out.comparison(&Comparison::of(
                    scenario.name(),
                    connections,
                    scenario.cpu_per(),
                    &labels,
                    &runs,
                ));
            }
            sweep.push((connections, runs));
        }
        if plan.connections.len() > 1 {
            for (e, (label, url)) in labels.iter().enumerate() {
                let runs: Vec<(usize, Vec<Sample>)> =
                    sweep.iter().map(|(c, runs)| (*c, runs[e].clone())).collect();
                out.sweep(&Sweep::of(scenario.name(), label, url, scenario.cpu_per(), &runs));
            }
        }
    }
    out.finish();
    Ok(out.errors == 0)
}

/// Where the lines go: text, JSON lines, or text runs with markdown summaries at the end.
#[derive(Default)]
struct Output {
    json: bool,
    markdown: bool,
    /// Markdown rows kept for the end.
    compare_rows: Vec<String>,
    sweep_rows: Vec<String>,
    /// Errors over all runs.
    errors: u64,
}

impl Output {
    /// Prints a run's line; its first error goes to stderr.
    fn report(&mut self, report: &Report) {
        if self.json {
            println!("{}", report.json());
        } else {
            println!("{}", report.text());
        }
        if let Some(e) = &report.first_error {
            eprintln!("{} against {}: {} error(s), first: {e}", report.scenario, report.label, report.errors);
        }
        self.errors += report.errors;
    }

    fn comparison(&mut self, c: &Comparison) {
        match (self.json, self.markdown) {
            (true, _) => c.json().iter().for_each(|line| println!("{line}")),
            (_, true) => self.compare_rows.extend(c.markdown_rows()),
            _ => println!("{}", c.text()),
        }
    }

    fn sweep(&mut self, s: &Sweep) {
        match (self.json, self.markdown) {
            (true, _) => s.json().iter().for_each(|line| println!("{line}")),
            (_, true) => self.sweep_rows.extend(s.markdown_rows()),
            _ => println!("{}", s.text()),
        }
    }

    /// The markdown tables, if any.
    fn finish(&self) {
        if !self.compare_rows.is_empty() {
            println!("\n{}\n{}", Comparison::markdown_header(), self.compare_rows.join("\n"));
        }
        if !self.sweep_rows.is_empty() {
            println!("\n{}\n{}", Sweep::markdown_header(), self.sweep_rows.join("\n"));
        }
    }
}
