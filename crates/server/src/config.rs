//! Command line and environment → [`Config`]. Flag names and meanings follow Azurite's
//! table service (`azurite-table`), so scripts and Testcontainers setups carry over.

use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;

/// aztable: an Azure Table Storage compatible server (an Azurite-compatible emulator
/// backed by RocksDB).
#[derive(Debug, Clone, Parser)]
#[command(
    name = "aztable",
    version,
    long_about = None,
    disable_version_flag = true,
    after_help = "Also answers to Azurite's command names as the program's name (a link named `azurite` or \
                  `azurite-table` to the binary), with every flag of theirs."
)]
pub struct Args {
    /// Address to listen on. Use 0.0.0.0 to accept connections from other hosts.
    /// Env: AZTABLE_HOST (the container image sets 0.0.0.0).
    #[arg(long = "tableHost", env = "AZTABLE_HOST", default_value = "127.0.0.1")]
    pub table_host: String,

    /// Port to listen on (0 picks a free port; the chosen port is logged). Env: AZTABLE_PORT.
    #[arg(long = "tablePort", env = "AZTABLE_PORT", default_value_t = 10002)]
    pub table_port: u16,

    /// Directory holding the RocksDB data. Env: AZTABLE_LOCATION (the container image
    /// sets /data).
    #[arg(short = 'l', long = "location", env = "AZTABLE_LOCATION", default_value = "./aztable-data")]
    pub location: PathBuf,

    /// Keep all data in memory only; nothing is written to disk and nothing survives a restart.
    #[arg(long = "inMemoryPersistence")]
    pub in_memory_persistence: bool,

    /// Silent mode: no access log (one line per request); startup lines, warnings and errors
    /// still print.
    #[arg(short = 's', long = "silent")]
    pub silent: bool,

    /// Write a debug log (every request in detail) to this file.
    #[arg(short = 'd', long = "debug", value_name = "FILE")]
    pub debug: Option<PathBuf>,

    /// Loose mode: accept SharedKey requests whatever their date (by default a request
    /// dated more than 15 minutes from the server clock is refused).
    #[arg(short = 'L', long = "loose")]
    pub loose: bool,

    /// Accept any x-ms-version header, malformed or older than the oldest service version
    /// too, and echo it as sent (wins over --strictApiVersion).
    #[arg(long = "skipApiVersionCheck")]
    pub skip_api_version_check: bool,

    /// Refuse an x-ms-version newer than this server knows (400 InvalidHeaderValue, as
    /// Azurite does) instead of serving it as the newest version it knows.
    /// Env: AZTABLE_STRICT_API_VERSION (`1`, `true`, `yes`, `on`; `0`, `false`, `no`,
    /// `off` or empty: off).
    #[arg(long = "strictApiVersion", env = "AZTABLE_STRICT_API_VERSION", action = clap::ArgAction::SetTrue,
          value_parser = clap::builder::FalseyValueParser::new())]
    pub strict_api_version: bool,

    /// Never read the account from the host name (`<account>.table.localhost`); always
    /// from the first path segment.
    #[arg(long = "disableProductStyleUrl")]
    pub disable_product_style_url: bool,

    /// Serve HTTPS with this certificate: a PEM certificate chain with --key, or a PFX
    /// (PKCS #12) file with --pwd (a `.pfx` or `.p12` file without --pwd: no password).
    #[arg(long = "cert", value_name = "FILE")]
    pub cert: Option<PathBuf>,

    /// The private key (PEM) of a PEM --cert.
    #[arg(long = "key", value_name = "PEM")]
    pub key: Option<PathBuf>,

    /// Seconds an idle keep-alive connection stays open (answered with `Keep-Alive:
    /// timeout=<s>`); also how long a client may take to send a request's head.
    #[arg(long = "tableKeepAliveTimeout", value_name = "SECONDS", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub table_keep_alive_timeout: u64,

    /// The password of a PFX --cert.
    #[arg(long = "pwd", value_name = "PASSWORD")]
    pub pwd: Option<String>,

    /// Accept OAuth bearer tokens (Microsoft Entra ID). Only `basic` exists, as in Azurite:
    /// the token's structure, issuer, audience and lifetime are checked, NOT its signature.
    /// Needs HTTPS (--cert, --key).
    #[arg(long = "oauth", value_name = "LEVEL", value_parser = ["basic"])]
    pub oauth: Option<String>,

    /// Enforce the service's scalability targets: 2,000 entities per second per
    /// partition, 20,000 per account; a request over them is answered 503 ServerBusy.
    /// Env: AZTABLE_THROTTLE (`1`, `true`, `yes`, `on`; `0`, `false`, `no`, `off` or
    /// empty: off).
    #[arg(long = "throttle", env = "AZTABLE_THROTTLE", action = clap::ArgAction::SetTrue,
          value_parser = clap::builder::FalseyValueParser::new())]
    pub throttle: bool,

    /// Entities per second per partition (implies --throttle). Env: AZTABLE_PARTITION_RATE.
    #[arg(long = "partitionRate", value_name = "N", env = "AZTABLE_PARTITION_RATE",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub partition_rate: Option<u32>,

    /// Entities per second per account (implies --throttle). Env: AZTABLE_ACCOUNT_RATE.
    #[arg(long = "accountRate", value_name = "N", env = "AZTABLE_ACCOUNT_RATE",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub account_rate: Option<u32>,

    /// Fault injection: this fraction (0 to 1) of table and entity requests is answered
    /// 503 ServerBusy before touching data, deterministically per --faultSeed. For
    /// testing retry logic. Env: AZTABLE_FAULT_RATE.
    #[arg(long = "faultRate", value_name = "FRACTION", env = "AZTABLE_FAULT_RATE")]
    pub fault_rate: Option<f64>,

    /// Seed of the fault sequence: the same seed and order of requests give the same
    /// faults. Env: AZTABLE_FAULT_SEED.
    #[arg(long = "faultSeed", value_name = "N", env = "AZTABLE_FAULT_SEED", default_value_t = 0)]
    pub fault_seed: u64,

    /// Faults only for these operations (comma list of REST names: InsertEntity,
    /// QueryEntities, Batch, ...). Env: AZTABLE_FAULT_OPS.
    #[arg(long = "faultOps", value_name = "OPS", env = "AZTABLE_FAULT_OPS", value_delimiter = ',')]
    pub fault_ops: Vec<String>,

    /// Faults only for these tables (comma list). Env: AZTABLE_FAULT_TABLES.
    #[arg(long = "faultTables", value_name = "TABLES", env = "AZTABLE_FAULT_TABLES", value_delimiter = ',')]
    pub fault_tables: Vec<String>,

    /// This fraction (0 to 1) of writes is applied and then answered 500
    /// OperationTimedOut, to test that client retries are idempotent.
    /// Env: AZTABLE_FAULT_AFTER_WRITE_RATE.
    #[arg(long = "faultAfterWriteRate", value_name = "FRACTION", env = "AZTABLE_FAULT_AFTER_WRITE_RATE")]
    pub fault_after_write_rate: Option<f64>,
    /// The partition advisor: counts what queries and writes do to each table's keys and
    /// serves it at /_aztable/insight (HTML, or JSON) and /_aztable/metrics (Prometheus).
    /// `off`: not counted, 404.
    #[arg(long = "insight", value_name = "on|off", default_value = "on", value_parser = ["on", "off"])]
    pub insight: String,

    /// Log a warning for each page of a full table scan that examines more than N
    /// entities (needs the advisor, --insight on).
    #[arg(long = "warnFullScan", value_name = "N")]
    pub warn_full_scan: Option<u64>,

    /// Connections served at once; one more is closed as soon as it is accepted. Lowered
    /// at startup to fit the open-file limit (`ulimit -n`) less 128.
    #[arg(long = "maxConnections", value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,

    /// Request body bytes buffered at once over all requests; a body that would pass it
    /// is answered 503 ServerBusy. At least one largest body (4 MiB) is sensible.
    #[arg(long = "maxInflightBodyBytes", value_name = "BYTES", default_value_t = 256 * 1024 * 1024,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_inflight_body_bytes: u64,

    /// Seconds a request body may take before --minBodyRate applies; a body that falls
    /// behind is cut off (408 RequestTimeout, connection closed).
    #[arg(long = "bodyReadTimeout", value_name = "SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub body_read_timeout: u64,

    /// Bytes per second a request body must average after --bodyReadTimeout.
    #[arg(long = "minBodyRate", value_name = "BYTES", default_value_t = 4096,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub min_body_rate: u64,

    /// Seconds from a request's head to its answer: a body still arriving is cut off
    /// (408), a request still running is answered 500 OperationTimedOut.
    #[arg(long = "requestTimeout", value_name = "SECONDS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub request_timeout: u64,

    /// Seconds in-flight requests have to finish after SIGTERM/SIGINT; then the
    /// connections left are cut, the store is flushed and closed, and the server exits.
    #[arg(long = "shutdownTimeout", value_name = "SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub shutdown_timeout: u64,

    /// Sync the write-ahead log to the disk before acknowledging each write, so
    /// acknowledged writes survive a power loss or an OS crash too (without it they
    /// survive a killed server). Costs throughput: see docs/performance.md.
    /// Env: AZTABLE_FSYNC.
    #[arg(long = "fsync", env = "AZTABLE_FSYNC", action = clap::ArgAction::SetTrue,
          value_parser = clap::builder::FalseyValueParser::new())]
    pub fsync: bool,

    /// Start even if the write-ahead log is damaged before its end (the server refuses
    /// to by default): recover up to the last write before the damage and drop the
    /// rest, keeping a copy of the damaged log in the data directory and logging how
    /// many acknowledged writes were dropped. An incomplete last write alone (a torn
    /// tail) never needs this.
    #[arg(long = "recoverTolerate")]
    pub recover_tolerate: bool,

    /// Before the port opens, read every stored block of the data directory with its
    /// checksum verified, and refuse to start if one is damaged, naming the file
    /// (without it, damage is found when a request reads it). Takes as long as reading
    /// the directory once; the time and bytes are logged. Env: AZTABLE_VERIFY_ON_START.
    #[arg(long = "verifyOnStart", env = "AZTABLE_VERIFY_ON_START", action = clap::ArgAction::SetTrue,
          value_parser = clap::builder::FalseyValueParser::new())]
    pub verify_on_start: bool,
    // The advisor as a test gate, a seeded start, and production's surprises on demand
    // (all off by default): see docs/ci-gate.md and docs/compatibility.md.
    /// Write the partition advisor's report as JSON (the report of /_aztable/insight
    /// and every gate finding since the start) to FILE: at shutdown, on SIGUSR1 and on
    /// `POST /_aztable/insight/report`. Env: AZTABLE_INSIGHT_REPORT.
    #[arg(long = "insightReport", value_name = "FILE", env = "AZTABLE_INSIGHT_REPORT")]
    pub insight_report: Option<PathBuf>,

    /// Exit with status 3 at shutdown when a finding of these kinds occurred (comma
    /// list of fullScan, hotPartition, appendOnly), naming each on stderr; also the
    /// kinds `GET /_aztable/insight/findings` answers 409 for. Env: AZTABLE_INSIGHT_FAIL_ON.
    #[arg(long = "insightFailOn", value_name = "KINDS", env = "AZTABLE_INSIGHT_FAIL_ON")]
    pub insight_fail_on: Option<String>,

    /// Tables whose findings never count for --insightFailOn (comma list, any case); a
    /// single query is exempted by the request header `x-aztable-expect-scan: 1`.
    /// Env: AZTABLE_INSIGHT_EXEMPT_TABLES.
    #[arg(
        long = "insightExemptTables",
        value_name = "TABLES",
        env = "AZTABLE_INSIGHT_EXEMPT_TABLES",
        value_delimiter = ','
    )]
    pub insight_exempt_tables: Vec<String>,

    /// At start, before the port is announced, import this `aztable export` file (or
    /// each file of this directory, in name order) into --seedAccount. Refuses a store
    /// that holds tables unless --seedOverwrite. Env: AZTABLE_SEED.
    #[arg(long = "seed", value_name = "FILE|DIR", env = "AZTABLE_SEED")]
    pub seed: Option<PathBuf>,

    /// The account --seed imports into.
    #[arg(long = "seedAccount", value_name = "NAME", default_value = aztable_wire::auth::DEV_ACCOUNT)]
    pub seed_account: String,

    /// Seed a store that holds tables too: entities of the same keys are replaced.
    #[arg(long = "seedOverwrite")]
    pub seed_overwrite: bool,

    /// For this many seconds after Delete Table, Create Table of the same name answers
    /// 409 TableBeingDeleted, as the service does while it removes a table (it documents
    /// "at least 40 seconds").
    #[arg(long = "tableDeleteDelay", value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub table_delete_delay: Option<u64>,

    /// This fraction (0 to 1) of Query Entities pages ends early, with a continuation:
    /// at the first partition boundary of the page, or after a random number of rows
    /// (per --shortPagesSeed). Every row still comes exactly once across the pages.
    #[arg(long = "shortPages", value_name = "FRACTION")]
    pub short_pages: Option<f64>,

    /// Seed of the --shortPages choices: the same seed and order of queries cut the
    /// same pages.
    #[arg(long = "shortPagesSeed", value_name = "N", default_value_t = 0)]
    pub short_pages_seed: u64,

    /// Run the server's clock this many seconds off the host's (signed): Timestamps,
    /// Date headers and the SharedKey date check (15 minutes) follow the moved clock.
    #[arg(long = "clockSkew", value_name = "SECONDS", allow_negative_numbers = true, default_value_t = 0,
          value_parser = clap::value_parser!(i64).range(-MAX_CLOCK_SKEW..=MAX_CLOCK_SKEW))]
    pub clock_skew: i64,

    #[command(flatten)]
    pub azurite: AzuriteArgs,
}

/// The flags of Azurite's `azurite` command that concern its Blob and Queue services,
/// accepted so its command lines (Testcontainers', scripts') work unchanged. The Blob and
/// Queue ports, when given, answer every request with an error saying that this
/// emulator serves the Table service only (`http::other_service`); the rest is ignored
/// with a notice at startup.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AzuriteArgs {
    /// Print the version and exit.
    #[arg(short = 'v', long = "version", action = clap::ArgAction::Version)]
    pub version: Option<bool>,

    /// Blob service address: its port only answers that this emulator serves tables
    /// (501 NotImplemented). Env: AZTABLE_BLOB_HOST (the container image sets 0.0.0.0).
    #[arg(long = "blobHost", value_name = "IP", env = "AZTABLE_BLOB_HOST")]
    pub blob_host: Option<String>,

    /// Blob service port (default 10000), answered as --blobHost says.
    #[arg(long = "blobPort", value_name = "PORT")]
    pub blob_port: Option<u16>,

    /// Queue service address: like --blobHost. Env: AZTABLE_QUEUE_HOST.
    #[arg(long = "queueHost", value_name = "IP", env = "AZTABLE_QUEUE_HOST")]
    pub queue_host: Option<String>,

    /// Queue service port (default 10001).
    #[arg(long = "queuePort", value_name = "PORT")]
    pub queue_port: Option<u16>,

    /// Ignored (Azurite's Blob keep-alive timeout).
    #[arg(long = "blobKeepAliveTimeout", value_name = "SECONDS")]
    pub blob_keep_alive_timeout: Option<String>,

    /// Ignored (Azurite's Queue keep-alive timeout).
    #[arg(long = "queueKeepAliveTimeout", value_name = "SECONDS")]
    pub queue_keep_alive_timeout: Option<String>,

    /// Ignored: aztable collects no telemetry.
    #[arg(long = "disableTelemetry")]
    pub disable_telemetry: bool,

    /// Ignored (Azurite's limit on in-memory blob and queue extents).
    #[arg(long = "extentMemoryLimit", value_name = "MB")]
    pub extent_memory_limit: Option<String>,
}

/// Server settings derived from [`Args`] and the environment.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    /// `None` with `--inMemoryPersistence`.
    pub data_dir: Option<PathBuf>,
    pub silent: bool,
    pub debug_log: Option<PathBuf>,
    pub loose: bool,
    pub skip_api_version_check: bool,
    /// `--strictApiVersion`.
    pub strict_api_version: bool,
    pub disable_product_style_url: bool,
    /// Value of `AZURITE_ACCOUNTS` (`name1:key1:key2;name2:key1`), if set.
    pub extra_accounts: Option<String>,
    /// HTTPS: where the certificate and its key come from.
    pub tls: Option<TlsSource>,
    /// `--tableKeepAliveTimeout`: how long an idle connection stays open.
    pub keep_alive: std::time::Duration,
    /// `--oauth basic`.
    pub oauth: bool,
    /// `--throttle`, `--partitionRate`, `--accountRate`: the targets enforced, if any.
    pub throttle: Option<aztable_engine::service::throttle::Rates>,
    /// `--faultRate` and friends, validated: faults injected, if any.
    pub faults: Option<crate::fault::FaultSpec>,
    /// `--insight on` (the default).
    pub insight: bool,
    /// `--warnFullScan N`.
    pub warn_full_scan: Option<u64>,
    /// `--maxConnections`.
    pub max_connections: usize,
    /// `--maxInflightBodyBytes`.
    pub max_inflight_body_bytes: usize,
    /// `--bodyReadTimeout`: the grace before `--minBodyRate` applies.
    pub body_read_timeout: std::time::Duration,
    /// `--minBodyRate`, bytes per second.
    pub min_body_rate: u64,
    /// `--requestTimeout`.
    pub request_timeout: std::time::Duration,
    /// `--shutdownTimeout`.
    pub shutdown_timeout: std::time::Duration,
    /// `--fsync`, `--recoverTolerate`: how the data directory is opened and written.
    pub store: aztable_store::recovery::OpenOptions,
    /// `--verifyOnStart`: read every block before serving.
    pub verify_on_start: bool,
    /// `--blobHost`/`--blobPort`: where the Blob port answers "Table service only".
    pub blob: Option<SocketAddr>,
    /// `--queueHost`/`--queuePort`: the same for the Queue port.
    pub queue: Option<SocketAddr>,
    /// One line each for what was given but does not apply to a table service; logged at
    /// startup.
    pub notices: Vec<String>,
    /// `--insightReport`, `--insightFailOn`, `--insightExemptTables`.
    pub gate: crate::harness::GateConfig,
    /// `--seed`, `--seedAccount`, `--seedOverwrite`.
    pub seed: Option<crate::harness::SeedSpec>,
    /// `--tableDeleteDelay`, `--shortPages`, `--clockSkew`.
    pub surprises: crate::surprise::Surprises,
}

/// The certificate and key of `--cert` (with `--key` or `--pwd`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsSource {
    /// A PEM certificate chain and a PEM private key.
    Pem { cert: PathBuf, key: PathBuf },
    /// A PFX (PKCS #12) file holding both, and its password (empty: none).
    Pfx { file: PathBuf, password: String },
}

impl Config {
    /// Builds the configuration; fails on an unparseable host, on `--cert` without `--key`
    /// (or the reverse) and on `--oauth` without HTTPS.
    pub fn from_args(args: Args, azurite_accounts: Option<String>) -> Result<Config, String> {
        let gate = crate::harness::GateConfig::from_args(&args)?;
        let seed = crate::harness::SeedSpec::from_args(&args);
        let surprises = crate::surprise::Surprises::from_args(&args)?;
        let is_pfx = |p: &PathBuf| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case("pfx") || e.eq_ignore_ascii_case("p12"))
        };
        let tls = match (args.cert, args.key, args.pwd) {
            (Some(cert), Some(key), None) => Some(TlsSource::Pem { cert, key }),
            (Some(file), None, Some(password)) => Some(TlsSource::Pfx { file, password }),
            (Some(file), None, None) if is_pfx(&file) => {
                Some(TlsSource::Pfx { file, password: String::new() })
            }
            (None, None, None) => None,
            (Some(_), Some(_), Some(_)) => {
                return Err("--pwd goes with a PFX --cert, --key with a PEM one: give one of them".into())
            }
            _ => {
                return Err("--cert needs --key (a PEM certificate chain and its private key) \
                            or --pwd (a PFX file and its password)"
                    .into())
            }
        };
        if args.oauth.is_some() && tls.is_none() {
            return Err("--oauth needs HTTPS: give --cert (with --key or --pwd)".into());
        }
        let faults = crate::fault::FaultSpec::from_flags(
            args.fault_rate,
            args.fault_after_write_rate,
            args.fault_seed,
            &args.fault_ops,
            &args.fault_tables,
        )?;
        let ip = parse_host("--tableHost", &args.table_host)?;
        let (blob, queue, notices) = other_services(&args.azurite)?;
        Ok(Config {
            listen: SocketAddr::new(ip, args.table_port),
            data_dir: (!args.in_memory_persistence).then_some(args.location),
            silent: args.silent,
            debug_log: args.debug,
            loose: args.loose,
            skip_api_version_check: args.skip_api_version_check,
            strict_api_version: args.strict_api_version,
            disable_product_style_url: args.disable_product_style_url,
            extra_accounts: azurite_accounts.filter(|s| !s.trim().is_empty()),
            tls,
            keep_alive: std::time::Duration::from_secs(args.table_keep_alive_timeout),
            oauth: args.oauth.is_some(),
            throttle: throttle_rates(args.throttle, args.partition_rate, args.account_rate),
            faults,
            insight: args.insight == "on",
            warn_full_scan: args.warn_full_scan,
            max_connections: usize::try_from(args.max_connections).unwrap_or(usize::MAX),
            max_inflight_body_bytes: usize::try_from(args.max_inflight_body_bytes).unwrap_or(usize::MAX),
            body_read_timeout: std::time::Duration::from_secs(args.body_read_timeout),
            min_body_rate: args.min_body_rate,
            request_timeout: std::time::Duration::from_secs(args.request_timeout),
            shutdown_timeout: std::time::Duration::from_secs(args.shutdown_timeout),
            store: aztable_store::recovery::OpenOptions {
                sync_writes: args.fsync,
                recover_tolerate: args.recover_tolerate,
            },
            verify_on_start: args.verify_on_start,
            blob,
            queue,
            notices,
            gate,
            seed,
            surprises,
        })
    }
}

/// An address flag's value: an IP address, or `localhost` (127.0.0.1).
fn parse_host(flag: &str, value: &str) -> Result<std::net::IpAddr, String> {
    let host = if value == "localhost" { "127.0.0.1" } else { value };
    host.parse().map_err(|_| format!("{flag}: '{value}' is not an IP address"))
}

/// Azurite's Blob and Queue flags: the addresses of the ports that answer "Table service
/// only" (a host or a port given; the port defaults to Azurite's), and a notice for each
/// flag that is ignored.
#[allow(clippy::type_complexity)]
fn other_services(a: &AzuriteArgs) -> Result<(Option<SocketAddr>, Option<SocketAddr>, Vec<String>), String> {
    let addr = |host_flag: &str, host: &Option<String>, port: Option<u16>, default_port: u16| {
        if host.is_none() && port.is_none() {
            return Ok(None);
        }
        let ip = parse_host(host_flag, host.as_deref().unwrap_or("127.0.0.1"))?;
        Ok::<_, String>(Some(SocketAddr::new(ip, port.unwrap_or(default_port))))
    };
    let blob = addr("--blobHost", &a.blob_host, a.blob_port, BLOB_PORT)?;
    let queue = addr("--queueHost", &a.queue_host, a.queue_port, QUEUE_PORT)?;
    let mut notices = Vec::new();
    if a.disable_telemetry {
        notices.push("--disableTelemetry ignored: aztable collects no telemetry".to_owned());
    }
    if a.extent_memory_limit.is_some() {
        notices.push(
            "--extentMemoryLimit ignored: it limits Azurite's blob and queue extents; tables have none"
                .to_owned(),
        );
    }
    for (flag, given) in [
        ("--blobKeepAliveTimeout", &a.blob_keep_alive_timeout),
        ("--queueKeepAliveTimeout", &a.queue_keep_alive_timeout),
    ] {
        if given.is_some() {
            notices.push(format!(
                "{flag} ignored: the Blob and Queue ports only answer that this emulator serves tables"
            ));
        }
    }
    Ok((blob, queue, notices))
}

/// The largest `--clockSkew`, either way: ten years.
pub const MAX_CLOCK_SKEW: i64 = 10 * 365 * 86_400;

/// Azurite's Blob service port, answered "Table service only" when asked for.
pub const BLOB_PORT: u16 = 10000;
/// Azurite's Queue service port.
pub const QUEUE_PORT: u16 = 10001;

/// The targets of `--throttle` with `--partitionRate`/`--accountRate` (either implies
/// `--throttle`; the other keeps its default), or `None`.
fn throttle_rates(
    on: bool,
    partition: Option<u32>,
    account: Option<u32>,
) -> Option<aztable_engine::service::throttle::Rates> {
    let default = aztable_engine::service::throttle::Rates::default();
    (on || partition.is_some() || account.is_some()).then(|| aztable_engine::service::throttle::Rates {
        partition: partition.unwrap_or(default.partition),
        account: account.unwrap_or(default.account),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_azurite() {
        let args = Args::parse_from(["aztable"]);
        let c = Config::from_args(args, None).unwrap();
        assert_eq!(c.listen.to_string(), "127.0.0.1:10002");
        assert_eq!(c.data_dir.as_deref(), Some(std::path::Path::new("./aztable-data")));
        assert!(!c.silent && !c.loose && !c.skip_api_version_check);
    }

    #[test]
    fn azurite_flag_names() {
        let args = Args::parse_from([
            "aztable",
            "--tableHost",
            "0.0.0.0",
            "--tablePort",
            "0",
            "-l",
            "/tmp/x",
            "--inMemoryPersistence",
            "-s",
            "-d",
            "/tmp/debug.log",
            "-L",
            "--skipApiVersionCheck",
            "--disableProductStyleUrl",
        ]);
        let c = Config::from_args(args, Some("acct:a2V5".into())).unwrap();
        assert_eq!(c.listen.to_string(), "0.0.0.0:0");
        assert_eq!(c.data_dir, None);
        assert!(c.silent && c.loose && c.skip_api_version_check && c.disable_product_style_url);
        assert!(!c.strict_api_version);
        assert_eq!(c.debug_log.as_deref(), Some(std::path::Path::new("/tmp/debug.log")));
        assert_eq!(c.extra_accounts.as_deref(), Some("acct:a2V5"));
        let c = Config::from_args(Args::parse_from(["aztable", "--strictApiVersion"]), None).unwrap();
        assert!(c.strict_api_version && !c.skip_api_version_check);
    }

    #[test]
    fn https_and_oauth_flags() {
        let parse = |extra: &[&str]| {
            let args = Args::try_parse_from([&["aztable"], extra].concat()).map_err(|e| e.to_string())?;
            Config::from_args(args, None)
        };
        let c = parse(&["--cert", "c.pem", "--key", "k.pem", "--oauth", "basic"]).unwrap();
        assert_eq!(c.tls, Some(TlsSource::Pem { cert: "c.pem".into(), key: "k.pem".into() }));
        assert!(c.oauth);
        let c = parse(&["--cert", "c.pem", "--key", "k.pem"]).unwrap();
        assert!(c.tls.is_some() && !c.oauth);
        assert!(parse(&["--cert", "c.pem"]).is_err());
        assert!(parse(&["--key", "k.pem"]).is_err());
        assert!(parse(&["--oauth", "basic"]).is_err());
        assert!(parse(&["--cert", "c.pem", "--key", "k.pem", "--oauth", "full"]).is_err());
        // PFX: with --pwd, or a .pfx/.p12 file without a password
        let pfx = |file: &str, password: &str| {
            Some(TlsSource::Pfx { file: file.into(), password: password.into() })
        };
        assert_eq!(parse(&["--cert", "c.pfx", "--pwd", "secret"]).unwrap().tls, pfx("c.pfx", "secret"));
        assert_eq!(parse(&["--cert", "c.P12"]).unwrap().tls, pfx("c.P12", ""));
        assert!(parse(&["--cert", "c.pfx", "--key", "k.pem", "--pwd", "x"]).is_err());
        assert!(parse(&["--pwd", "x"]).is_err());
    }

    #[test]
    fn throttle_and_fault_flags() {
        let parse = |extra: &[&str]| {
            let args = Args::try_parse_from([&["aztable"], extra].concat()).map_err(|e| e.to_string())?;
            Config::from_args(args, None)
        };
        let c = parse(&[]).unwrap();
        assert!(c.throttle.is_none() && c.faults.is_none(), "off unless asked for");
        let rates = |p, a| Some(aztable_engine::service::throttle::Rates { partition: p, account: a });
        assert_eq!(parse(&["--throttle"]).unwrap().throttle, rates(2_000, 20_000));
        assert_eq!(parse(&["--partitionRate", "50"]).unwrap().throttle, rates(50, 20_000));
        assert_eq!(parse(&["--accountRate", "70"]).unwrap().throttle, rates(2_000, 70));
        assert!(parse(&["--partitionRate", "0"]).is_err());
        assert!(parse(&["--accountRate", "x"]).is_err());
        let c =
            parse(&["--faultRate", "0.3", "--faultSeed", "7", "--faultOps", "InsertEntity,Batch"]).unwrap();
        let f = c.faults.unwrap();
        assert_eq!((f.rate, f.after_write_rate, f.seed), (0.3, 0.0, 7));
        assert_eq!(f.ops, ["InsertEntity", "Batch"]);
        let c = parse(&["--faultAfterWriteRate", "1", "--faultTables", "a,B"]).unwrap();
        assert_eq!(c.faults.unwrap().tables, ["a", "b"]);
        let e = parse(&["--faultRate", "1.5"]).unwrap_err();
        assert!(e.contains("--faultRate"), "{e}");
        let e = parse(&["--faultRate", "0.5", "--faultOps", "InsertEntity,Nope"]).unwrap_err();
        assert!(e.contains("'Nope'"), "{e}");
        assert!(parse(&["--faultOps", "InsertEntity"]).is_err(), "a filter without a rate");
    }

    #[test]
    fn insight_flags() {
        let c = Config::from_args(Args::parse_from(["aztable"]), None).unwrap();
        assert!(c.insight && c.warn_full_scan.is_none());
        let args = Args::parse_from(["aztable", "--insight", "off", "--warnFullScan", "500"]);
        let c = Config::from_args(args, None).unwrap();
        assert!(!c.insight);
        assert_eq!(c.warn_full_scan, Some(500));
        assert!(Args::try_parse_from(["aztable", "--insight", "maybe"]).is_err());
    }

    #[test]
    fn limit_flags_and_their_defaults() {
        let parse = |extra: &[&str]| {
            let args = Args::try_parse_from([&["aztable"], extra].concat()).map_err(|e| e.to_string())?;
            Config::from_args(args, None)
        };
        let c = parse(&[]).unwrap();
        assert_eq!((c.max_connections, c.max_inflight_body_bytes), (1000, 256 << 20));
        assert_eq!((c.body_read_timeout.as_secs(), c.min_body_rate), (10, 4096));
        assert_eq!((c.request_timeout.as_secs(), c.shutdown_timeout.as_secs()), (60, 10));
        let c = parse(&[
            "--maxConnections",
            "5",
            "--maxInflightBodyBytes",
            "1000",
            "--bodyReadTimeout",
            "2",
            "--minBodyRate",
            "10",
            "--requestTimeout",
            "3",
            "--shutdownTimeout",
            "0",
        ])
        .unwrap();
        assert_eq!((c.max_connections, c.max_inflight_body_bytes, c.min_body_rate), (5, 1000, 10));
        assert_eq!((c.body_read_timeout.as_secs(), c.request_timeout.as_secs()), (2, 3));
        assert_eq!(c.shutdown_timeout.as_secs(), 0);
        assert!(parse(&["--maxConnections", "0"]).is_err());
        assert!(parse(&["--minBodyRate", "0"]).is_err());
    }

    #[test]
    fn gate_seed_and_surprise_flags() {
        use aztable_insight::gate::GateKind;
        let parse = |extra: &[&str]| {
            let args = Args::try_parse_from([&["aztable"], extra].concat()).map_err(|e| e.to_string())?;
            Config::from_args(args, None)
        };
        let c = parse(&[]).unwrap();
        assert!(c.gate.fail_on.is_empty() && c.gate.report.is_none() && c.seed.is_none());
        assert_eq!(c.surprises, crate::surprise::Surprises::default(), "off unless asked for");
        let c = parse(&[
            "--insightFailOn",
            "fullScan,appendOnly",
            "--insightExemptTables",
            "Audit,logs",
            "--insightReport",
            "/tmp/r.json",
            "--seed",
            "/seed",
            "--seedOverwrite",
            "--tableDeleteDelay",
            "40",
            "--shortPages",
            "0.5",
            "--shortPagesSeed",
            "9",
            "--clockSkew",
            "-300",
        ])
        .unwrap();
        assert_eq!(c.gate.fail_on, [GateKind::FullScan, GateKind::AppendOnly]);
        assert_eq!(c.gate.exempt_tables, ["Audit", "logs"]);
        assert_eq!(c.gate.report.as_deref(), Some(std::path::Path::new("/tmp/r.json")));
        let seed = c.seed.unwrap();
        assert_eq!((seed.account.as_str(), seed.overwrite), ("devstoreaccount1", true));
        assert_eq!(c.surprises.table_delete_delay, Some(std::time::Duration::from_secs(40)));
        assert_eq!(c.surprises.short_pages, Some((0.5, 9)));
        assert_eq!(c.surprises.clock_skew, -300);
        assert!(parse(&["--insightFailOn", "slowness"]).unwrap_err().contains("'slowness'"));
        assert!(parse(&["--insight", "off", "--insightFailOn", "fullScan"])
            .unwrap_err()
            .contains("--insight"));
        assert!(parse(&["--shortPages", "2"]).unwrap_err().contains("--shortPages"));
        assert!(parse(&["--clockSkew", "999999999999"]).is_err());
        assert!(parse(&["--tableDeleteDelay", "-1"]).is_err());
    }

    #[test]
    fn store_flags() {
        let c = Config::from_args(Args::parse_from(["aztable"]), None).unwrap();
        assert_eq!(c.store, aztable_store::recovery::OpenOptions::default());
        let c =
            Config::from_args(Args::parse_from(["aztable", "--fsync", "--recoverTolerate"]), None).unwrap();
        assert!(c.store.sync_writes && c.store.recover_tolerate);
        assert!(!c.verify_on_start);
        let c = Config::from_args(Args::parse_from(["aztable", "--verifyOnStart"]), None).unwrap();
        assert!(c.verify_on_start);
    }

    #[test]
    fn bad_host_is_an_error() {
        let args = Args::parse_from(["aztable", "--tableHost", "not a host"]);
        assert!(Config::from_args(args, None).is_err());
    }
}
