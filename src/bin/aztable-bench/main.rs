//! `aztable-bench`: a bounded load tool for Table-service endpoints on loopback (aztable,
//! Azurite, or its own `--ceiling-server`). Every request is SharedKey-signed; N workers
//! each keep one HTTP/1.1 keep-alive connection; entities are ~1 KB. Prints one line per
//! scenario (or JSON lines with `--json`); `--compare` runs the same scenarios against a
//! second endpoint, sequentially with fresh tables, and prints the ratio first/second.
//!
//! ```text
//! aztable-bench --endpoint http://127.0.0.1:10002/devstoreaccount1 \
//!     --scenario point-read --connections 16 --duration 10s
//! ```
//!
//! See docs/performance.md for the scenarios and the measured figures.

mod ceiling;
mod client;
mod conns;
mod entity;
mod scenarios;
mod stats;

/// The same allocator as the server: the load tool allocates per request too, and its
/// CPU is taken from the server it measures.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use aztable::auth::{sign::decode_key, DEV_ACCOUNT, DEV_KEY};
use clap::Parser;
use client::Target;
use scenarios::{Params, Scenario};
use stats::{Ratio, Report, Summary};
use std::sync::Arc;
use std::time::Duration;

/// Longest allowed `--duration` / `--serve-for` (the tool always stops by itself).
const MAX_DURATION: Duration = Duration::from_secs(3600);

/// Load generator for Azure Table Storage compatible servers on loopback.
#[derive(Debug, Parser)]
#[command(name = "aztable-bench", version, about)]
struct Args {
    /// Endpoint, path-style: http://127.0.0.1:10002/devstoreaccount1 (loopback only).
    #[arg(long, required_unless_present = "ceiling_server")]
    endpoint: Option<String>,

    /// A second endpoint: run the same scenarios against it afterwards and print the
    /// ratio first/second.
    #[arg(long)]
    compare: Option<String>,

    /// Comma-separated scenarios, or `all`: insert-many-partitions, insert-one-partition,
    /// point-read, batch-insert, range-query, filtered-scan, mixed, page-all. Named only
    /// (not in `all`): read-under-scans.
    #[arg(long, default_value = "point-read")]
    scenario: String,

    /// Concurrent keep-alive connections (one worker each). In read-under-scans: the
    /// point readers, beside the `--scanners`.
    #[arg(long, default_value_t = 16)]
    connections: usize,

    /// read-under-scans: clients (one connection each) paging through the whole table,
    /// over and over, with a filter that matches no entity. 0: point reads alone on the
    /// same table.
    #[arg(long, default_value_t = 4)]
    scanners: usize,

    /// How long each scenario runs (e.g. 10s, 500ms, 2m; at most 1h). Scans in progress
    /// finish after it.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    duration: Duration,

    /// Stop each scenario after this many operations (a scan counts as one; in
    /// read-under-scans, point reads, the scanners stopping with them) at the latest.
    #[arg(long)]
    requests: Option<u64>,

    /// Entities to preload (100-entity batches) into a newly created table. Default:
    /// 200,000 for read-under-scans, 10,000 for the other scenarios that read, none for
    /// the write scenarios.
    #[arg(long, alias = "entities")]
    preload: Option<u64>,

    /// `--preload` for the `--compare` endpoint (default: the same).
    #[arg(long)]
    compare_preload: Option<u64>,

    /// Preloaded entities per partition (a multiple of 100 keeps preload batches full).
    #[arg(long, default_value_t = 1000)]
    partition_size: u64,

    /// Entities per range-query.
    #[arg(long, default_value_t = 10)]
    range_size: u64,

    /// Percentage of reads in `mixed` (the rest are upserts of existing entities).
    #[arg(long, default_value_t = 50)]
    read_percent: u64,

    /// Account name, when the endpoint has no account path segment.
    #[arg(long, default_value = DEV_ACCOUNT)]
    account: String,

    /// Account key (base64); default: the well-known development key.
    #[arg(long, default_value = DEV_KEY, hide_default_value = true)]
    key: String,

    /// Use this table (created and preloaded if missing, kept afterwards) instead of a
    /// fresh one per scenario.
    #[arg(long)]
    table: Option<String>,

    /// Keep the fresh tables instead of deleting them after each scenario.
    #[arg(long)]
    keep_tables: bool,

    /// Server process id: report its RSS after each scenario.
    #[arg(long)]
    pid: Option<u32>,

    /// Server process id of the `--compare` endpoint.
    #[arg(long)]
    compare_pid: Option<u32>,

    /// Before each measured run (after the preload), wait up to this long for the
    /// servers (`--pid` and `--compare-pid`) to go idle, so a scenario is not charged
    /// for the flushes, compactions or garbage collection that the previous one, on
    /// either server, left behind. The wait is reported (`settled=`).
    #[arg(long, value_parser = parse_duration)]
    settle: Option<Duration>,

    /// With `--compare`: run each scenario this many times against each endpoint,
    /// alternating, and end with the median ratio and its range (a peer whose rate
    /// moves by tens of percent between runs then still gives a stable figure).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    repeat: u32,

    /// Print JSON lines instead of text.
    #[arg(long)]
    json: bool,

    /// Point reads and `mixed` pick among this many consecutive preloaded entities in
    /// the middle of the table instead of all of them (a hot set that fits the cache,
    /// in a large table).
    #[arg(long)]
    hot_keys: Option<u64>,

    /// Seed of the key choice and entity contents.
    #[arg(long, default_value_t = 1)]
    seed: u64,

    /// Client runtime worker threads (default: the number of CPUs).
    #[arg(long)]
    threads: Option<usize>,

    /// Instead of generating load, serve a fixed 1 KB entity on 127.0.0.1:PORT (the ceiling).
    #[arg(long, value_name = "PORT")]
    ceiling_server: Option<u16>,

    /// How long `--ceiling-server` serves.
    #[arg(long, default_value = "30m", value_parser = parse_duration)]
    serve_for: Duration,
}

/// `10s`, `250ms`, `2m`, or plain seconds; at most [`MAX_DURATION`].
fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: f64 = num.parse().map_err(|_| format!("bad duration '{s}'"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        _ => return Err(format!("bad duration unit in '{s}' (ms, s, m)")),
    };
    let d = Duration::try_from_secs_f64(secs).map_err(|e| format!("bad duration '{s}': {e}"))?;
    if d > MAX_DURATION || d.is_zero() {
        return Err(format!("duration '{s}' must be > 0 and at most 1h"));
    }
    Ok(d)
}

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
async fn run(args: Args) -> Result<bool, String> {
    if let Some(port) = args.ceiling_server {
        ceiling::serve(port, args.serve_for).await?;
        return Ok(true);
    }
    let key = decode_key(&args.key)?;
    let endpoint = args.endpoint.as_deref().ok_or("--endpoint is required")?;
    let first = Arc::new(Target::parse(endpoint, &args.account, &key)?);
    let second = match &args.compare {
        Some(e) => Some(Arc::new(Target::parse(e, &args.account, &key)?)),
        None => None,
    };
    let scenarios = Scenario::parse_list(&args.scenario)?;
    if args.connections == 0 || args.connections > 1024 {
        return Err("--connections must be 1..=1024".into());
    }
    if args.scanners > 1024 {
        return Err("--scanners must be 0..=1024".into());
    }
    conns::check_open_files(args.connections + args.scanners)?;
    if args.partition_size == 0 || args.range_size == 0 || args.read_percent > 100 {
        return Err("--partition-size and --range-size must be > 0, --read-percent <= 100".into());
    }
    let params = Params {
        connections: args.connections,
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
        pid: args.pid,
        settle: args.settle.map(|max| (max, args.pid.into_iter().chain(args.compare_pid).collect())),
        seed: args.seed,
    };
    let second_params =
        Params { preload: args.compare_preload.or(args.preload), pid: args.compare_pid, ..params.clone() };

    let mut clean = true;
    for scenario in scenarios {
        let mut ratios = Vec::new();
        let rounds = if second.is_some() { args.repeat } else { 1 };
        for _ in 0..rounds {
            let a = scenarios::run(first.clone(), scenario, &params).await?;
            clean &= emit(&a, args.json);
            if let Some(second) = &second {
                let b = scenarios::run(second.clone(), scenario, &second_params).await?;
                clean &= emit(&b, args.json);
                let ratio = Ratio::of(&a, &b);
                if args.json {
                    println!("{}", ratio.json(scenario.name()));
                } else {
                    println!("{}", ratio.text(scenario.name()));
                }
                ratios.push((a.entities_per_s(), b.entities_per_s(), ratio.entities_per_s));
            }
        }
        if let Some(summary) = (rounds > 1).then(|| Summary::of(&ratios)).flatten() {
            if args.json {
                println!("{}", summary.json(scenario.name()));
            } else {
                println!("{}", summary.text(scenario.name()));
            }
        }
    }
    Ok(clean)
}

/// Prints a report; false if it had errors (the first one goes to stderr).
fn emit(report: &Report, json: bool) -> bool {
    if json {
        println!("{}", report.json());
    } else {
        println!("{}", report.text());
    }
    if let Some(e) = &report.first_error {
        eprintln!("{} against {}: {} error(s), first: {e}", report.scenario, report.endpoint, report.errors);
    }
    report.errors == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert!(parse_duration("2h").is_err());
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("61m").is_err());
    }

    #[test]
    fn scenario_lists() {
        assert_eq!(Scenario::parse_list("all").map(|v| v.len()), Ok(8));
        assert_eq!(Scenario::parse_list("point-read,mixed"), Ok(vec![Scenario::PointRead, Scenario::Mixed]));
        assert!(Scenario::parse_list("nope").is_err());
        assert_eq!(
            Scenario::parse_list("all,read-under-scans").map(|v| v.last().copied()),
            Ok(Some(Scenario::ReadUnderScans))
        );
    }
}
