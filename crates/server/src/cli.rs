//! What the binary was asked to do, before the flags are parsed: serve (as `aztable`,
//! or under Azurite's command names `azurite` and `azurite-table`, so images and scripts
//! written for Azurite run it unchanged), or probe a running server (`healthcheck`).
//!
//! The name comes from the program's file name (a link named `azurite` to the binary),
//! or from the first argument (`aztable azurite --blobHost 0.0.0.0 ...`: what a container
//! runs when its command is Azurite's and its entrypoint is `aztable`). Pure: the
//! environment is passed in.

use crate::config::{Config, BLOB_PORT, QUEUE_PORT};
use std::ffi::OsString;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Under which name the server was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Personality {
    /// `aztable`: the Table service; Blob and Queue ports only when asked for.
    Aztable,
    /// Azurite's `azurite` (all three services): the Blob and Queue ports answer at their
    /// defaults (127.0.0.1:10000 and 10001) unless given elsewhere.
    Azurite,
    /// Azurite's `azurite-table`: as `aztable`.
    AzuriteTable,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Serve; the arguments for [`crate::config::Args`] (program name first).
    Serve(Personality, Vec<OsString>),
    /// `aztable healthcheck [--host IP] [--port N]`; the arguments for [`HealthcheckArgs`].
    Healthcheck(Vec<OsString>),
}

/// Reads the program name and the first argument.
pub fn invocation(argv: Vec<OsString>) -> Invocation {
    let mut argv = argv;
    let program = argv.first().map(|p| {
        let name = std::path::Path::new(p).file_name().unwrap_or(p.as_os_str());
        name.to_string_lossy().trim_end_matches(".exe").to_owned()
    });
    let mut personality = match program.as_deref() {
        Some("azurite") => Personality::Azurite,
        Some("azurite-table") => Personality::AzuriteTable,
        _ => Personality::Aztable,
    };
    let first = argv.get(1).and_then(|a| a.to_str()).map(str::to_owned);
    let named = match first.as_deref() {
        Some("healthcheck") => {
            argv.remove(1);
            return Invocation::Healthcheck(argv);
        }
        Some("azurite") => Some(Personality::Azurite),
        Some("azurite-table") => Some(Personality::AzuriteTable),
        Some("aztable") => Some(Personality::Aztable),
        _ => None,
    };
    if let Some(p) = named {
        personality = p;
        argv.remove(1);
    }
    Invocation::Serve(personality, argv)
}

/// `aztable healthcheck`: whether a server answers HTTP on the port (exit 0) or not
/// (exit 1). For a container's HEALTHCHECK, without curl in the image.
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "aztable healthcheck", about = "Exit 0 if a server answers on the port, 1 if not")]
pub struct HealthcheckArgs {
    /// Address to connect to.
    #[arg(long = "host", default_value = "127.0.0.1")]
    pub host: IpAddr,
    /// Port to connect to. Env: AZTABLE_PORT (the server's --tablePort default).
    #[arg(long = "port", env = "AZTABLE_PORT", default_value_t = 10002)]
    pub port: u16,
    /// Seconds to wait for the answer.
    #[arg(long = "timeout", default_value_t = 3)]
    pub timeout: u64,
}

/// Applies the name the server was started under and the environment variables Azurite
/// reads (`get` reads one; `AZURITE_ACCOUNTS` is read with the other accounts' setup):
/// `AZURITE_SKIP_API_VERSION_CHECK=true` is `--skipApiVersionCheck`, `AZURITE_DB` (a SQL
/// database for blob metadata) is ignored with a notice.
pub fn apply_azurite(config: &mut Config, personality: Personality, get: impl Fn(&str) -> Option<String>) {
    if personality == Personality::Azurite {
        let local = IpAddr::V4(Ipv4Addr::LOCALHOST);
        config.blob.get_or_insert(SocketAddr::new(local, BLOB_PORT));
        config.queue.get_or_insert(SocketAddr::new(local, QUEUE_PORT));
    }
    // Azurite takes only the exact, case-sensitive value "true".
    if get("AZURITE_SKIP_API_VERSION_CHECK").as_deref() == Some("true") {
        config.skip_api_version_check = true;
    }
    if get("AZURITE_DB").is_some_and(|v| !v.is_empty()) {
        config.notices.push(
            "AZURITE_DB ignored: it holds Azurite's blob metadata; tables are kept in RocksDB".to_owned(),
        );
    }
}

/// The connection string of the development account for a server at `listen` (a
/// wildcard address is given as 127.0.0.1, where a client on this machine reaches it).
pub fn connection_string(listen: SocketAddr, https: bool) -> String {
    let ip = match listen.ip() {
        ip if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        ip => ip,
    };
    let host = SocketAddr::new(ip, listen.port());
    let scheme = if https { "https" } else { "http" };
    let account = aztable_wire::auth::DEV_ACCOUNT;
    format!(
        "DefaultEndpointsProtocol={scheme};AccountName={account};AccountKey={key};\
         TableEndpoint={scheme}://{host}/{account};",
        key = aztable_wire::auth::DEV_KEY
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Args;
    use clap::Parser;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    /// Parses a command line the way `main` does, with no environment.
    fn config(argv: &[&str]) -> Result<Config, String> {
        let Invocation::Serve(personality, args) = invocation(os(argv)) else {
            return Err("not a serve command line".into());
        };
        let args = Args::try_parse_from(args).map_err(|e| e.to_string())?;
        let mut c = Config::from_args(args, None)?;
        apply_azurite(&mut c, personality, |_| None);
        Ok(c)
    }

    #[test]
    fn the_name_comes_from_the_program_or_the_first_argument() {
        let serve = |p, args: &[&str]| Invocation::Serve(p, os(args));
        assert_eq!(invocation(os(&["aztable", "-s"])), serve(Personality::Aztable, &["aztable", "-s"]));
        assert_eq!(
            invocation(os(&["/usr/local/bin/azurite"])),
            serve(Personality::Azurite, &["/usr/local/bin/azurite"])
        );
        assert_eq!(
            invocation(os(&["azurite-table", "-s"])),
            serve(Personality::AzuriteTable, &["azurite-table", "-s"])
        );
        assert_eq!(
            invocation(os(&["aztable", "azurite", "--blobHost", "0.0.0.0"])),
            serve(Personality::Azurite, &["aztable", "--blobHost", "0.0.0.0"])
        );
        assert_eq!(
            invocation(os(&["aztable", "azurite-table"])),
            serve(Personality::AzuriteTable, &["aztable"])
        );
        assert_eq!(invocation(os(&["azurite", "aztable"])), serve(Personality::Aztable, &["azurite"]));
        assert_eq!(
            invocation(os(&["aztable", "healthcheck", "--port", "1"])),
            Invocation::Healthcheck(os(&["aztable", "--port", "1"]))
        );
        // only the first argument names a command
        assert_eq!(
            invocation(os(&["aztable", "-s", "azurite"])),
            serve(Personality::Aztable, &["aztable", "-s", "azurite"])
        );
    }

    #[test]
    fn testcontainers_command_lines_are_accepted() {
        // Java: the command replaces the image's
        let c = config(&[
            "aztable",
            "azurite",
            "--blobHost",
            "0.0.0.0",
            "--queueHost",
            "0.0.0.0",
            "--tableHost",
            "0.0.0.0",
        ])
        .unwrap();
        assert_eq!(c.listen.to_string(), "0.0.0.0:10002");
        assert_eq!(c.blob.map(|a| a.to_string()).as_deref(), Some("0.0.0.0:10000"));
        assert_eq!(c.queue.map(|a| a.to_string()).as_deref(), Some("0.0.0.0:10001"));
        assert!(c.notices.is_empty());
        // Node: the entrypoint `azurite`, every port given, and its options
        let c = config(&[
            "azurite",
            "--blobHost",
            "0.0.0.0",
            "--blobPort",
            "10000",
            "--queueHost",
            "0.0.0.0",
            "--queuePort",
            "10001",
            "--tableHost",
            "0.0.0.0",
            "--tablePort",
            "10002",
            "--inMemoryPersistence",
            "--extentMemoryLimit",
            "50",
            "--skipApiVersionCheck",
            "--loose",
        ])
        .unwrap();
        assert!(c.data_dir.is_none() && c.skip_api_version_check && c.loose);
        assert_eq!(c.notices.len(), 1, "{:?}", c.notices);
        assert!(c.notices[0].starts_with("--extentMemoryLimit ignored"));
        // .NET: the entrypoint `azurite`, in-memory with a limit given as a float
        let c = config(&[
            "azurite",
            "--blobHost",
            "0.0.0.0",
            "--inMemoryPersistence",
            "--extentMemoryLimit",
            "12.5",
        ])
        .unwrap();
        assert_eq!(c.notices.len(), 1);
    }

    #[test]
    fn every_azurite_flag_is_accepted() {
        let c = config(&[
            "azurite",
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            "0",
            "--blobKeepAliveTimeout",
            "5",
            "--queueHost",
            "localhost",
            "--queuePort",
            "0",
            "--queueKeepAliveTimeout",
            "5",
            "--tableHost",
            "127.0.0.1",
            "--tablePort",
            "0",
            "--tableKeepAliveTimeout",
            "5",
            "-l",
            "/tmp/x",
            "-s",
            "-L",
            "--skipApiVersionCheck",
            "--disableProductStyleUrl",
            "--cert",
            "c.pfx",
            "--pwd",
            "p",
            "--oauth",
            "basic",
            "-d",
            "/tmp/d.log",
            "--disableTelemetry",
        ])
        .unwrap();
        assert_eq!(c.queue.map(|a| a.to_string()).as_deref(), Some("127.0.0.1:0"));
        assert!(c.silent && c.loose && c.oauth && c.tls.is_some() && c.debug_log.is_some());
        // one notice per ignored flag
        assert_eq!(c.notices.len(), 3, "{:?}", c.notices);
        assert!(c.notices.iter().any(|n| n.starts_with("--disableTelemetry ignored")));
        assert!(c.notices.iter().any(|n| n.starts_with("--blobKeepAliveTimeout ignored")));
        assert!(c.notices.iter().any(|n| n.starts_with("--queueKeepAliveTimeout ignored")));
        // long forms of the short flags
        let c =
            config(&["azurite-table", "--location", "/tmp/y", "--silent", "--loose", "--debug", "/tmp/d"])
                .unwrap();
        assert!(c.silent && c.loose);
        assert!(config(&["azurite", "--blobHost", "not an ip"]).is_err());
        assert!(config(&["azurite", "--notAFlag"]).is_err());
    }

    #[test]
    fn other_service_ports_follow_the_name() {
        // `azurite` serves all three; `aztable` and `azurite-table` only the table port
        let c = config(&["azurite"]).unwrap();
        assert_eq!(c.blob.map(|a| a.to_string()).as_deref(), Some("127.0.0.1:10000"));
        assert_eq!(c.queue.map(|a| a.to_string()).as_deref(), Some("127.0.0.1:10001"));
        assert_eq!(c.listen.to_string(), "127.0.0.1:10002");
        let c = config(&["aztable"]).unwrap();
        assert!(c.blob.is_none() && c.queue.is_none());
        let c = config(&["azurite-table", "--blobPort", "11000"]).unwrap();
        assert_eq!(c.blob.map(|a| a.to_string()).as_deref(), Some("127.0.0.1:11000"));
        assert!(c.queue.is_none());
    }

    #[test]
    fn version_flags_exit_with_the_version() {
        for flag in ["-v", "--version"] {
            let e = Args::try_parse_from(["azurite", flag]).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::DisplayVersion, "{flag}");
        }
    }

    #[test]
    fn azurite_environment_variables() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
        };
        let mut c = Config::from_args(Args::parse_from(["aztable"]), None).unwrap();
        apply_azurite(&mut c, Personality::Aztable, env(&[("AZURITE_SKIP_API_VERSION_CHECK", "TRUE")]));
        assert!(!c.skip_api_version_check, "only the exact value true, as Azurite");
        apply_azurite(&mut c, Personality::Aztable, env(&[("AZURITE_SKIP_API_VERSION_CHECK", "true")]));
        assert!(c.skip_api_version_check);
        apply_azurite(&mut c, Personality::Aztable, env(&[("AZURITE_DB", "mysql://u:p@h/db")]));
        assert_eq!(c.notices.len(), 1);
        assert!(!c.notices[0].contains("u:p"), "the value is not repeated");
    }

    #[test]
    fn healthcheck_arguments() {
        let h = HealthcheckArgs::try_parse_from(["aztable", "--port", "12000"]).unwrap();
        assert_eq!((h.host.to_string(), h.port), ("127.0.0.1".to_owned(), 12000));
        assert!(HealthcheckArgs::try_parse_from(["aztable", "--port", "x"]).is_err());
    }

    #[test]
    fn connection_strings_name_a_reachable_address() {
        let s = connection_string("0.0.0.0:10002".parse().unwrap(), false);
        assert!(s.contains("TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;"), "{s}");
        assert!(s.starts_with("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8"));
        let s = connection_string("192.168.1.5:443".parse().unwrap(), true);
        assert!(s.contains("TableEndpoint=https://192.168.1.5:443/devstoreaccount1;"), "{s}");
    }
}
