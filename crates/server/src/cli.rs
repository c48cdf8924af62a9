//! What the binary was asked to do, before the flags are parsed: serve (as `aztable`,
//! or under Azurite's command names `azurite` and `azurite-table`, so images and scripts
//! written for Azurite run it unchanged), probe a running server (`healthcheck`), or
//! refuse Azurite's single-service commands `azurite-blob` and `azurite-queue` with a
//! message that says how to ask for the Table service instead.
//!
//! The name comes from the program's file name (a link named `azurite` to the binary),
//! or from the first argument (`aztable azurite --blobHost 0.0.0.0 ...`: what a container
//! runs when its command is Azurite's and its entrypoint is `aztable`). Pure: the
//! environment is passed in.

use crate::config::{Args, Config, BLOB_PORT, QUEUE_PORT};
use std::ffi::OsStr;
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

impl Personality {
    /// The name the program was started under (a link named `azurite` or
    /// `azurite-table` to the binary), from the first element of its arguments.
    pub fn of_program(argv0: Option<&OsStr>) -> Personality {
        let name = argv0.map(|p| {
            let name = std::path::Path::new(p).file_name().unwrap_or(p);
            name.to_string_lossy().trim_end_matches(".exe").to_owned()
        });
        match name.as_deref() {
            Some("azurite") => Personality::Azurite,
            Some("azurite-table") => Personality::AzuriteTable,
            _ => Personality::Aztable,
        }
    }
}

/// Azurite's single-service commands for the services this server does not emulate:
/// testcontainers-go's Azurite module starts the entrypoint `azurite-blob` or
/// `azurite-queue` when only that service is enabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtherService {
    /// `azurite-blob`.
    Blob,
    /// `azurite-queue`.
    Queue,
}

impl OtherService {
    /// The service a program named `azurite-blob` or `azurite-queue` asks for.
    pub fn of_program(argv0: Option<&OsStr>) -> Option<OtherService> {
        let name = std::path::Path::new(argv0?).file_name()?.to_string_lossy().into_owned();
        match name.trim_end_matches(".exe") {
            "azurite-blob" => Some(OtherService::Blob),
            "azurite-queue" => Some(OtherService::Queue),
            _ => None,
        }
    }

    /// Azurite's command name for the service.
    pub fn command(self) -> &'static str {
        match self {
            OtherService::Blob => "azurite-blob",
            OtherService::Queue => "azurite-queue",
        }
    }

    /// Why the command does not start, and how to ask for the Table service.
    pub fn refusal(self) -> String {
        let service = match self {
            OtherService::Blob => "Blob",
            OtherService::Queue => "Queue",
        };
        format!(
            "aztable: `{command}` asks for Azurite's {service} service alone, and this image (aztable) \
             serves the Table service only. Ask for the Table service: with testcontainers-go, \
             azurite.Run(ctx, image, azurite.WithEnabledServices(azurite.TableService)); \
             otherwise run `azurite-table` (the Table port, 10002) or `azurite` (the Table port, \
             and Blob and Queue ports that answer 501 NotImplemented).",
            command = self.command()
        )
    }
}

/// The arguments given to a refused command: taken as they come, so that the refusal,
/// not a parse error, is what is printed.
#[derive(Debug, Clone, clap::Args)]
pub struct RefusedArgs {
    /// Anything.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<std::ffi::OsString>,
}

/// The server's subcommands: Azurite's command names (`aztable azurite ...`: what a
/// container runs when its command is Azurite's and its entrypoint is `aztable`), and
/// `healthcheck`. The binary adds `export` and `import` beside them.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ServeCommand {
    /// Serve as Azurite's `azurite`: the Table service, and the Blob and Queue ports,
    /// which answer that only the Table service is served. Every flag of Azurite's.
    #[command(display_name = "aztable", version, disable_version_flag = true)]
    Azurite(Args),
    /// Serve as Azurite's `azurite-table` (the same as `aztable` without a subcommand).
    #[command(name = "azurite-table", display_name = "aztable", version, disable_version_flag = true)]
    AzuriteTable(Args),
    /// Serve (the same as no subcommand).
    #[command(hide = true, display_name = "aztable", version, disable_version_flag = true)]
    Aztable(Args),
    /// Exit 0 if a server answers on the port, 1 if not (a container's HEALTHCHECK).
    Healthcheck(HealthcheckArgs),
    /// Azurite's Blob service alone: not served (exits 1 saying so).
    #[command(name = "azurite-blob", hide = true, disable_help_flag = true)]
    AzuriteBlob(RefusedArgs),
    /// Azurite's Queue service alone: not served (exits 1 saying so).
    #[command(name = "azurite-queue", hide = true, disable_help_flag = true)]
    AzuriteQueue(RefusedArgs),
}

/// What the command line asks for, once parsed.
#[derive(Debug, Clone)]
pub enum Invocation {
    /// Serve under this name with these flags.
    Serve(Personality, Box<Args>),
    /// `aztable healthcheck [--host IP] [--port N]`.
    Healthcheck(HealthcheckArgs),
    /// `azurite-blob` or `azurite-queue`: refused.
    Refuse(OtherService),
}

impl ServeCommand {
    /// What to do: `program` is the name the binary was started under, `flat` the flags
    /// given without a subcommand. A subcommand's name wins over the program's.
    pub fn invocation(command: Option<ServeCommand>, program: Personality, flat: Args) -> Invocation {
        match command {
            None => Invocation::Serve(program, Box::new(flat)),
            Some(ServeCommand::Azurite(args)) => Invocation::Serve(Personality::Azurite, Box::new(args)),
            Some(ServeCommand::AzuriteTable(args)) => {
                Invocation::Serve(Personality::AzuriteTable, Box::new(args))
            }
            Some(ServeCommand::Aztable(args)) => Invocation::Serve(Personality::Aztable, Box::new(args)),
            Some(ServeCommand::Healthcheck(args)) => Invocation::Healthcheck(args),
            Some(ServeCommand::AzuriteBlob(_)) => Invocation::Refuse(OtherService::Blob),
            Some(ServeCommand::AzuriteQueue(_)) => Invocation::Refuse(OtherService::Queue),
        }
    }
}

/// `aztable healthcheck`: whether a server answers HTTP on the port (exit 0) or not
/// (exit 1). For a container's HEALTHCHECK, without curl in the image.
#[derive(Debug, Clone, clap::Parser)]
#[command(about = "Exit 0 if a server answers on the port, 1 if not")]
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
    use clap::Parser;

    /// The binary's command line without its `export` and `import`.
    #[derive(Debug, Parser)]
    #[command(name = "aztable", args_conflicts_with_subcommands = true)]
    struct Cli {
        #[command(subcommand)]
        command: Option<ServeCommand>,
        #[command(flatten)]
        serve: Args,
    }

    fn invocation(argv: &[&str]) -> Result<Invocation, String> {
        let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
        let program = Personality::of_program(argv.first().map(OsStr::new));
        Ok(ServeCommand::invocation(cli.command, program, cli.serve))
    }

    /// Parses a command line the way `main` does, with no environment.
    fn config(argv: &[&str]) -> Result<Config, String> {
        let Invocation::Serve(personality, args) = invocation(argv)? else {
            return Err("not a serve command line".into());
        };
        let mut c = Config::from_args(*args, None)?;
        apply_azurite(&mut c, personality, |_| None);
        Ok(c)
    }

    fn personality(argv: &[&str]) -> Personality {
        match invocation(argv) {
            Ok(Invocation::Serve(p, _)) => p,
            other => panic!("{argv:?}: {other:?}"),
        }
    }

    #[test]
    fn the_name_comes_from_the_program_or_the_subcommand() {
        assert_eq!(personality(&["aztable", "-s"]), Personality::Aztable);
        assert_eq!(personality(&["/usr/local/bin/azurite"]), Personality::Azurite);
        assert_eq!(personality(&["azurite-table", "-s"]), Personality::AzuriteTable);
        assert_eq!(personality(&["aztable", "azurite", "--blobHost", "0.0.0.0"]), Personality::Azurite);
        assert_eq!(personality(&["aztable", "azurite-table"]), Personality::AzuriteTable);
        assert_eq!(personality(&["azurite", "aztable"]), Personality::Aztable);
        let Ok(Invocation::Healthcheck(h)) = invocation(&["aztable", "healthcheck", "--port", "1"]) else {
            panic!("healthcheck");
        };
        assert_eq!(h.port, 1);
        // a subcommand comes first: flags before it are refused, not mixed in
        assert!(invocation(&["aztable", "-s", "azurite"]).is_err());
        assert!(invocation(&["aztable", "-s", "healthcheck"]).is_err());
    }

    #[test]
    fn single_service_commands_for_blob_and_queue_are_refused() {
        for (argv, service) in [
            (
                &["aztable", "azurite-blob", "--blobHost", "0.0.0.0", "--blobPort", "10000"][..],
                OtherService::Blob,
            ),
            (&["aztable", "azurite-queue", "--queueHost", "0.0.0.0", "--help", "-x"], OtherService::Queue),
            (&["aztable", "azurite-blob"], OtherService::Blob),
        ] {
            match invocation(argv) {
                Ok(Invocation::Refuse(s)) => assert_eq!(s, service, "{argv:?}"),
                other => panic!("{argv:?}: {other:?}"),
            }
        }
        assert_eq!(
            OtherService::of_program(Some(OsStr::new("/usr/local/bin/azurite-blob"))),
            Some(OtherService::Blob)
        );
        assert_eq!(OtherService::of_program(Some(OsStr::new("azurite-queue"))), Some(OtherService::Queue));
        assert_eq!(OtherService::of_program(Some(OsStr::new("azurite"))), None);
        assert_eq!(OtherService::of_program(None), None);
        let message = OtherService::Queue.refusal();
        assert!(message.contains("`azurite-queue`") && message.contains("Queue service"), "{message}");
        assert!(message.contains("WithEnabledServices(azurite.TableService)"), "{message}");
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
            for argv in [&["aztable", flag][..], &["aztable", "azurite", flag], &["azurite", flag]] {
                let e = Cli::try_parse_from(argv).unwrap_err();
                assert_eq!(e.kind(), clap::error::ErrorKind::DisplayVersion, "{argv:?}");
                assert_eq!(e.to_string(), format!("aztable {}\n", env!("CARGO_PKG_VERSION")), "{argv:?}");
            }
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
