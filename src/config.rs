//! Command line and environment → [`Config`]. Flag names and meanings follow Azurite's
//! table service (`azurite-table`), so scripts and Testcontainers setups carry over.

use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;

/// aztable: an Azure Table Storage compatible server (an Azurite-compatible emulator
/// backed by RocksDB).
#[derive(Debug, Clone, Parser)]
#[command(name = "aztable", version, about, long_about = None)]
pub struct Args {
    /// Address to listen on. Use 0.0.0.0 to accept connections from other hosts.
    #[arg(long = "tableHost", default_value = "127.0.0.1")]
    pub table_host: String,

    /// Port to listen on (0 picks a free port; the chosen port is logged).
    #[arg(long = "tablePort", default_value_t = 10002)]
    pub table_port: u16,

    /// Directory holding the RocksDB data.
    #[arg(short = 'l', long = "location", default_value = "./aztable-data")]
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

    /// Accept any x-ms-version header instead of answering 400 InvalidHeaderValue to
    /// versions newer than this server knows.
    #[arg(long = "skipApiVersionCheck")]
    pub skip_api_version_check: bool,

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

    /// The partition advisor: counts what queries and writes do to each table's keys and
    /// serves it at /_aztable/insight (HTML, or JSON) and /_aztable/metrics (Prometheus).
    /// `off`: not counted, 404.
    #[arg(long = "insight", value_name = "on|off", default_value = "on", value_parser = ["on", "off"])]
    pub insight: String,

    /// Log a warning for each page of a full table scan that examines more than N
    /// entities (needs the advisor, --insight on).
    #[arg(long = "warnFullScan", value_name = "N")]
    pub warn_full_scan: Option<u64>,
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
    pub disable_product_style_url: bool,
    /// Value of `AZURITE_ACCOUNTS` (`name1:key1:key2;name2:key1`), if set.
    pub extra_accounts: Option<String>,
    /// HTTPS: where the certificate and its key come from.
    pub tls: Option<TlsSource>,
    /// `--tableKeepAliveTimeout`: how long an idle connection stays open.
    pub keep_alive: std::time::Duration,
    /// `--oauth basic`.
    pub oauth: bool,
    /// `--insight on` (the default).
    pub insight: bool,
    /// `--warnFullScan N`.
    pub warn_full_scan: Option<u64>,
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
        let host = if args.table_host == "localhost" { "127.0.0.1" } else { args.table_host.as_str() };
        let ip: std::net::IpAddr =
            host.parse().map_err(|_| format!("--tableHost: '{}' is not an IP address", args.table_host))?;
        Ok(Config {
            listen: SocketAddr::new(ip, args.table_port),
            data_dir: (!args.in_memory_persistence).then_some(args.location),
            silent: args.silent,
            debug_log: args.debug,
            loose: args.loose,
            skip_api_version_check: args.skip_api_version_check,
            disable_product_style_url: args.disable_product_style_url,
            extra_accounts: azurite_accounts.filter(|s| !s.trim().is_empty()),
            tls,
            keep_alive: std::time::Duration::from_secs(args.table_keep_alive_timeout),
            oauth: args.oauth.is_some(),
            insight: args.insight == "on",
            warn_full_scan: args.warn_full_scan,
        })
    }
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
        assert_eq!(c.debug_log.as_deref(), Some(std::path::Path::new("/tmp/debug.log")));
        assert_eq!(c.extra_accounts.as_deref(), Some("acct:a2V5"));
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
    fn bad_host_is_an_error() {
        let args = Args::parse_from(["aztable", "--tableHost", "not a host"]);
        assert!(Config::from_args(args, None).is_err());
    }
}
