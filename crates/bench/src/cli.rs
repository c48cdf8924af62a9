//! The command line ([`Args`]) and what it resolves to ([`Plan`]): the endpoints with
//! their labels, server pids and preloads, the connection counts of a sweep, the rounds.

use crate::scenarios::Scenario;
use aztable_wire::auth::{DEV_ACCOUNT, DEV_KEY};
use clap::Parser;
use std::time::Duration;

/// Longest allowed `--duration` / `--serve-for` (the tool always stops by itself).
const MAX_DURATION: Duration = Duration::from_secs(3600);

/// Most connections (or scanners) one run may open.
pub(crate) const MAX_CONNECTIONS: usize = 1024;

/// Load generator for Azure Table Storage compatible servers on loopback.
#[derive(Debug, Parser)]
#[command(name = "aztable-bench", version, about)]
pub(crate) struct Args {
    /// Endpoint, path-style, optionally labelled: http://127.0.0.1:10002/devstoreaccount1
    /// or aztable=http://127.0.0.1:10002/devstoreaccount1 (loopback only). The label
    /// names the endpoint in the output (default: its host:port).
    #[arg(long, required_unless_present = "ceiling_server")]
    pub endpoint: Option<String>,

    /// Another endpoint (`URL` or `LABEL=URL`; repeatable): the same scenarios run
    /// against each in turn, and a summary compares them with the first.
    #[arg(long)]
    pub compare: Vec<String>,

    /// Comma-separated scenarios, or `all`: insert-many-partitions, insert-one-partition,
    /// point-read, batch-insert, range-query, filtered-scan, mixed, page-all. Named only
    /// (not in `all`): filtered-walk, filtered-walk-string, filtered-walk-rows,
    /// filtered-row-key, read-under-scans.
    #[arg(long, default_value = "point-read")]
    pub scenario: String,

    /// Concurrent keep-alive connections (one worker each), or a comma-separated sweep
    /// (16,256,1000): each scenario runs at each count on fresh connections, and a
    /// summary gives each count's rate and p99 against the first count's. In
    /// read-under-scans: the point readers, beside the `--scanners`.
    #[arg(long, value_delimiter = ',', default_value = "16")]
    pub connections: Vec<usize>,

    /// read-under-scans: clients (one connection each) paging through the whole table,
    /// over and over, with a filter that matches no entity. 0: point reads alone on the
    /// same table.
    #[arg(long, default_value_t = 4)]
    pub scanners: usize,

    /// How long each scenario runs (e.g. 10s, 500ms, 2m; at most 1h). Scans in progress
    /// finish after it.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub duration: Duration,

    /// Stop each scenario after this many operations (a scan counts as one; in
    /// read-under-scans, point reads, the scanners stopping with them) at the latest.
    #[arg(long)]
    pub requests: Option<u64>,

    /// Entities to preload (100-entity batches) into a newly created table. Default:
    /// 200,000 for read-under-scans, 10,000 for the other scenarios that read, none for
    /// the write scenarios.
    #[arg(long, alias = "entities")]
    pub preload: Option<u64>,

    /// `--preload` for every `--compare` endpoint (default: the same).
    #[arg(long)]
    pub compare_preload: Option<u64>,

    /// Preloaded entities per partition (a multiple of 100 keeps preload batches full).
    #[arg(long, default_value_t = 1000)]
    pub partition_size: u64,

    /// Entities per range-query.
    #[arg(long, default_value_t = 10)]
    pub range_size: u64,

    /// Percentage of reads in `mixed` (the rest are upserts of existing entities).
    #[arg(long, default_value_t = 50)]
    pub read_percent: u64,

    /// Account name, when the endpoint has no account path segment.
    #[arg(long, default_value = DEV_ACCOUNT)]
    pub account: String,

    /// Account key (base64); default: the well-known development key.
    #[arg(long, default_value = DEV_KEY, hide_default_value = true)]
    pub key: String,

    /// Use this table (created and preloaded if missing, kept afterwards) instead of a
    /// fresh one per scenario.
    #[arg(long)]
    pub table: Option<String>,

    /// Keep the fresh tables instead of deleting them after each scenario.
    #[arg(long)]
    pub keep_tables: bool,

    /// Server process id of the first endpoint: report its RSS and CPU per operation.
    #[arg(long)]
    pub pid: Option<u32>,

    /// Server process id of a `--compare` endpoint, repeatable in the same order as
    /// `--compare` (`-` for one without); none at all, or one per `--compare`.
    #[arg(long)]
    pub compare_pid: Vec<String>,

    /// Before each measured run (after the preload), wait up to this long for every
    /// server given by `--pid` and `--compare-pid` to go idle, so a scenario is not
    /// charged for the flushes, compactions or garbage collection that the previous one,
    /// on any server, left behind. The wait is reported (`settled=`).
    #[arg(long, value_parser = parse_duration)]
    pub settle: Option<Duration>,

    /// Run each scenario this many times against each endpoint; round k starts with the
    /// k-th endpoint (the order rotates, so none is always first). The summary gives
    /// medians per endpoint and the median and range of the per-round ratios.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub repeat: u32,

    /// Print JSON lines instead of text.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,

    /// Print the summaries as markdown tables (all scenarios in one table, at the end)
    /// instead of text tables after each scenario.
    #[arg(long)]
    pub markdown: bool,

    /// Point reads and `mixed` pick among this many consecutive preloaded entities in
    /// the middle of the table instead of all of them (a hot set that fits the cache,
    /// in a large table).
    #[arg(long)]
    pub hot_keys: Option<u64>,

    /// Seed of the key choice and entity contents.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Client runtime worker threads (default: the number of CPUs).
    #[arg(long)]
    pub threads: Option<usize>,

    /// Instead of generating load, serve on 127.0.0.1:PORT a server that does no work
    /// but answers each request kind in its shape (the ceiling).
    #[arg(long, value_name = "PORT")]
    pub ceiling_server: Option<u16>,

    /// How long `--ceiling-server` serves.
    #[arg(long, default_value = "30m", value_parser = parse_duration)]
    pub serve_for: Duration,

    /// `--ceiling-server` spends this long on the CPU before each answer (e.g. 2us): a
    /// stand-in for a server's own work per request, to see what the machine adds to
    /// that work beyond itself (wake-ups, scheduling) as it grows.
    #[arg(long, value_parser = parse_duration, requires = "ceiling_server")]
    pub ceiling_work: Option<Duration>,
}

/// `10s`, `250ms`, `5us`, `2m`, `1h`, or plain seconds; at most [`MAX_DURATION`].
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: f64 = num.parse().map_err(|_| format!("bad duration '{s}'"))?;
    let secs = match unit {
        "us" => n / 1_000_000.0,
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("bad duration unit in '{s}' (us, ms, s, m, h)")),
    };
    let d = Duration::try_from_secs_f64(secs).map_err(|e| format!("bad duration '{s}': {e}"))?;
    if d > MAX_DURATION || d.is_zero() {
        return Err(format!("duration '{s}' must be > 0 and at most 1h"));
    }
    Ok(d)
}

/// One endpoint of the invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EndpointSpec {
    pub label: String,
    pub url: String,
    pub pid: Option<u32>,
    /// `--preload` (first endpoint) or `--compare-preload` (the others).
    pub preload: Option<u64>,
}

/// What an invocation runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The first is the one the others are compared with.
    pub endpoints: Vec<EndpointSpec>,
    pub scenarios: Vec<Scenario>,
    /// One count, or a sweep.
    pub connections: Vec<usize>,
    pub rounds: u32,
    /// Every given pid, for `--settle`.
    pub pids: Vec<u32>,
}

impl Plan {
    pub(crate) fn of(args: &Args) -> Result<Plan, String> {
        let first = args.endpoint.as_deref().ok_or("--endpoint is required")?;
        if !args.compare_pid.is_empty() && args.compare_pid.len() != args.compare.len() {
            return Err(format!(
                "{} --compare-pid for {} --compare: give one per --compare, in the same order ('-' for none)",
                args.compare_pid.len(),
                args.compare.len()
            ));
        }
        let mut endpoints = vec![endpoint(first, args.pid, args.preload)?];
        for (i, url) in args.compare.iter().enumerate() {
            let pid = match args.compare_pid.get(i).map(String::as_str) {
                None | Some("-") => None,
                Some(p) => Some(p.parse().map_err(|_| format!("--compare-pid '{p}': a process id or '-'"))?),
            };
            endpoints.push(endpoint(url, pid, args.compare_preload.or(args.preload))?);
        }
        for (i, e) in endpoints.iter().enumerate() {
            if endpoints[..i].iter().any(|o| o.label == e.label) {
                return Err(format!("two endpoints are labelled '{}': give each its own LABEL=URL", e.label));
            }
        }
        if args.connections.is_empty() || args.connections.iter().any(|&c| c == 0 || c > MAX_CONNECTIONS) {
            return Err(format!(
                "--connections must be 1..={MAX_CONNECTIONS} (or a comma list of such counts)"
            ));
        }
        if args.scanners > MAX_CONNECTIONS {
            return Err(format!("--scanners must be 0..={MAX_CONNECTIONS}"));
        }
        if args.partition_size == 0 || args.range_size == 0 || args.read_percent > 100 {
            return Err("--partition-size and --range-size must be > 0, --read-percent <= 100".into());
        }
        let pids = endpoints.iter().filter_map(|e| e.pid).collect();
        Ok(Plan {
            endpoints,
            scenarios: Scenario::parse_list(&args.scenario)?,
            connections: args.connections.clone(),
            rounds: args.repeat,
            pids,
        })
    }

    /// The endpoints' indexes in the order round `round` runs them: rotated by one per
    /// round, so each endpoint leads in turn.
    pub(crate) fn order(&self, round: u32) -> impl Iterator<Item = usize> + '_ {
        let n = self.endpoints.len();
        (0..n).map(move |i| (i + round as usize) % n)
    }

    /// Whether a comparison summary follows each scenario (more than one endpoint or
    /// round to sum up).
    pub(crate) fn compares(&self) -> bool {
        self.endpoints.len() > 1 || self.rounds > 1
    }
}

/// `URL` or `LABEL=URL`.
fn endpoint(arg: &str, pid: Option<u32>, preload: Option<u64>) -> Result<EndpointSpec, String> {
    let (label, url) = match arg.split_once('=') {
        Some((label, url)) if !label.contains("://") => (Some(label.trim()), url.trim()),
        _ => (None, arg.trim()),
    };
    let label = match label {
        Some(l) if l.is_empty() || l.len() > 24 || !l.bytes().all(|b| b.is_ascii_graphic()) => {
            return Err(format!("endpoint label '{l}': 1 to 24 visible ASCII characters"));
        }
        Some(l) => l.to_string(),
        // host:port, the authority of `http://HOST:PORT/...`
        None => url.strip_prefix("http://").unwrap_or(url).split('/').next().unwrap_or(url).to_string(),
    };
    Ok(EndpointSpec { label, url: url.to_string(), pid, preload })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(args: &[&str]) -> Result<Plan, String> {
        let args = Args::try_parse_from([&["aztable-bench"], args].concat()).map_err(|e| e.to_string())?;
        Plan::of(&args)
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("2.5us"), Ok(Duration::from_nanos(2500)));
        assert!(parse_duration("2h").is_err(), "over the 1h bound");
        assert!(parse_duration("2d").is_err());
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("61m").is_err());
    }

    #[test]
    fn one_endpoint_and_the_single_compare_form() {
        let p = plan(&["--endpoint", "http://127.0.0.1:10002/devstoreaccount1"]).expect("one");
        assert_eq!(p.endpoints.len(), 1);
        assert_eq!(p.endpoints[0].label, "127.0.0.1:10002");
        assert_eq!((p.connections.as_slice(), p.rounds, p.compares()), (&[16][..], 1, false));
        let p = plan(&[
            "--endpoint=http://127.0.0.1:1/a",
            "--compare=http://127.0.0.1:2/a",
            "--pid=11",
            "--compare-pid=22",
            "--preload=500",
        ])
        .expect("a pair");
        let labels: Vec<&str> = p.endpoints.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(labels, ["127.0.0.1:1", "127.0.0.1:2"]);
        assert_eq!((p.endpoints[1].pid, p.endpoints[1].preload), (Some(22), Some(500)));
        assert_eq!((p.pids.as_slice(), p.compares()), (&[11, 22][..], true));
    }

    #[test]
    fn labelled_compares_with_pids_in_order() {
        let p = plan(&[
            "--endpoint",
            "aztable=http://127.0.0.1:10602/devstoreaccount1",
            "--compare",
            "ceiling=http://127.0.0.1:10603/devstoreaccount1",
            "--compare",
            "http://[::1]:10604/devstoreaccount1",
            "--pid",
            "100",
            "--compare-pid",
            "200",
            "--compare-pid",
            "-",
            "--compare-preload",
            "20000",
        ])
        .expect("three");
        let got: Vec<(&str, &str, Option<u32>, Option<u64>)> =
            p.endpoints.iter().map(|e| (e.label.as_str(), e.url.as_str(), e.pid, e.preload)).collect();
        assert_eq!(
            got,
            [
                ("aztable", "http://127.0.0.1:10602/devstoreaccount1", Some(100), None),
                ("ceiling", "http://127.0.0.1:10603/devstoreaccount1", Some(200), Some(20_000)),
                ("[::1]:10604", "http://[::1]:10604/devstoreaccount1", None, Some(20_000)),
            ]
        );
        assert_eq!(p.pids, [100, 200]);
        let e = plan(&[
            "--endpoint=http://127.0.0.1:1",
            "--compare=http://127.0.0.1:2",
            "--compare-pid=1",
            "--compare-pid=2",
        ]);
        assert!(e.is_err_and(|e| e.contains("2 --compare-pid for 1 --compare")));
        let e = plan(&["--endpoint=a=http://127.0.0.1:1", "--compare=a=http://127.0.0.1:2"]);
        assert!(e.is_err_and(|e| e.contains("two endpoints are labelled 'a'")));
        assert!(plan(&["--endpoint= =http://127.0.0.1:1"]).is_err());
        assert!(plan(&["--endpoint=http://127.0.0.1:1", "--compare-pid=x", "--compare=http://127.0.0.1:2"])
            .is_err());
    }

    #[test]
    fn rounds_rotate_the_order() {
        let p = plan(&[
            "--endpoint=http://127.0.0.1:1",
            "--compare=http://127.0.0.1:2",
            "--compare=http://127.0.0.1:3",
            "--repeat=4",
        ])
        .expect("plan");
        let orders: Vec<Vec<usize>> = (0..p.rounds).map(|r| p.order(r).collect()).collect();
        assert_eq!(orders, [vec![0, 1, 2], vec![1, 2, 0], vec![2, 0, 1], vec![0, 1, 2]]);
        let single = plan(&["--endpoint=http://127.0.0.1:1", "--repeat=3"]).expect("plan");
        assert!(single.compares(), "medians of one endpoint's rounds");
        assert_eq!(single.order(2).collect::<Vec<_>>(), [0]);
    }

    #[test]
    fn connection_sweeps() {
        let p = plan(&["--endpoint=http://127.0.0.1:1", "--connections", "16,256,1000"]).expect("sweep");
        assert_eq!(p.connections, [16, 256, 1000]);
        let p = plan(&["--endpoint=http://127.0.0.1:1", "--connections=8", "--connections=64"])
            .expect("repeated");
        assert_eq!(p.connections, [8, 64]);
        assert!(plan(&["--endpoint=http://127.0.0.1:1", "--connections", "16,0"]).is_err());
        assert!(plan(&["--endpoint=http://127.0.0.1:1", "--connections", "1025"]).is_err());
        assert!(plan(&["--endpoint=http://127.0.0.1:1", "--connections", "16,x"]).is_err());
        assert!(plan(&["--endpoint=http://127.0.0.1:1", "--json", "--markdown"]).is_err());
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
