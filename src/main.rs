//! The `aztable` binary: parse the configuration, read the TLS files, give up root when
//! `AZTABLE_RUN_AS` asks, set up logging, open the store and serve until SIGINT/SIGTERM;
//! then finish in-flight requests and close the store.

use aztable_engine::service::TableService;
use aztable_insight::{Advisor, InsightOptions};
use aztable_server::cli::{HealthcheckArgs, Invocation, OtherService, Personality, ServeCommand};
use aztable_server::config::{Args, Config};
use aztable_server::http::ctx::VersionCheck;
use aztable_server::http::{load_tls_config, serve, AppState, ConnLimits, HttpOptions, TlsConfig};
use aztable_server::run_as::{drop_root, Dropped, RunAs, RUN_AS_VAR};
use aztable_store::Store;
use aztable_wire::auth::Accounts;
use clap::Parser;
use std::sync::Arc;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Threads of the runtime's blocking pool (file and DNS work; scans have their own).
const MAX_BLOCKING_THREADS: usize = 32;
use tracing_subscriber::{EnvFilter, Layer};

/// mimalloc instead of glibc's malloc: every request allocates and frees dozens of
/// small buffers across tokio's worker threads, where glibc's arenas cost about a tenth
/// of the CPU of a point read (profiled) and fragment over time. The crate's `override`
/// feature makes it the process's `malloc` too, so RocksDB's memtables and cached
/// blocks, allocated and freed on every worker and background thread, leave glibc's
/// arenas as well; mimalloc 2 (`v2`), which hands freed pages back within 10 ms, where
/// mimalloc 3 kept growing while random reads churned the block cache.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

// The command line: the server's flags (Azurite's, flat) or one subcommand.
/// aztable: an Azure Table Storage compatible server (an Azurite-compatible emulator
/// backed by RocksDB).
#[derive(Debug, Parser)]
#[command(name = "aztable", long_about = None, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: Args,
}

// parsed once at start: the size of the serving variant does not matter
#[allow(clippy::large_enum_variant)]
#[derive(Debug, clap::Subcommand)]
enum Command {
    #[command(flatten)]
    Serve(ServeCommand),
    Export(aztable_transfer::ExportArgs),
    Import(aztable_transfer::ImportArgs),
    Reset(aztable_transfer::reset::ResetArgs),
}

fn main() -> std::process::ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `azurite-blob` and `azurite-queue` are refused before their flags are parsed
    if let Some(service) = OtherService::of_program(argv.first().map(|a| a.as_os_str())) {
        return refuse(service);
    }
    let cli = Cli::parse_from(&argv);
    let program = Personality::of_program(argv.first().map(|a| a.as_os_str()));
    let serve = match cli.command {
        Some(Command::Export(args)) => return aztable_transfer::run_export(args),
        Some(Command::Import(args)) => return aztable_transfer::run_import(args),
        Some(Command::Reset(args)) => return aztable_transfer::reset::run_reset(args),
        Some(Command::Serve(command)) => Some(command),
        None => None,
    };
    let (personality, args) = match ServeCommand::invocation(serve, program, cli.serve) {
        Invocation::Serve(personality, args) => (personality, *args),
        Invocation::Healthcheck(args) => return healthcheck(&args),
        Invocation::Refuse(service) => return refuse(service),
    };
    let mut config = match Config::from_args(args, std::env::var("AZURITE_ACCOUNTS").ok()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("aztable: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    aztable_server::cli::apply_azurite(&mut config, personality, |name| std::env::var(name).ok());
    let run_as = match RunAs::parse(std::env::var(RUN_AS_VAR).ok().as_deref()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("aztable: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    // The certificate and key are read first, while root may still read them (a key
    // handed over as a root-owned file of mode 0600); everything else after the drop.
    let tls = match config.tls.as_ref().map(load_tls_config).transpose() {
        Ok(tls) => tls,
        Err(e) => {
            eprintln!("aztable: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let dropped = match drop_root(run_as) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("aztable: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    if let Err(e) = init_tracing(&config) {
        eprintln!("aztable: {e}");
        return std::process::ExitCode::from(2);
    }
    match dropped {
        Dropped::To(r) => {
            tracing::info!("running as uid {} gid {} ({RUN_AS_VAR}; started as root)", r.uid, r.gid)
        }
        Dropped::NotRoot(uid) => {
            tracing::info!("running as uid {uid} (not started as root: {RUN_AS_VAR} unused)")
        }
        Dropped::NotAsked => {}
    }
    // Scans run on threads of their own (`service::background`, one a core); the
    // runtime's blocking pool serves what else blocks (file and DNS work), bounded.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("aztable: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(config, tls)) {
        Ok(Gate::Passed) => std::process::ExitCode::SUCCESS,
        Ok(Gate::Failed) => std::process::ExitCode::from(aztable_server::harness::GATE_EXIT_CODE),
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("aztable: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// `azurite-blob`, `azurite-queue`: exit 1 with a message saying this server serves
/// the Table service only and how to ask for it.
fn refuse(service: OtherService) -> std::process::ExitCode {
    eprintln!("{}", service.refusal());
    std::process::ExitCode::FAILURE
}

/// `aztable healthcheck [--host IP] [--port N]`: exit 0 when a server answers there, 1
/// when not (for a container's HEALTHCHECK).
fn healthcheck(args: &HealthcheckArgs) -> std::process::ExitCode {
    let addr = std::net::SocketAddr::new(args.host, args.port);
    match aztable_server::http::healthcheck::probe(addr, std::time::Duration::from_secs(args.timeout)) {
        Ok(answer) => {
            println!("healthy: {addr} answered ({answer})");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            println!("unhealthy: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn init_tracing(config: &Config) -> Result<(), String> {
    // --silent turns off the access log (one line per request), not the startup lines.
    let default = if config.silent { "info,aztable::access=off" } else { "info" };
    let filter = EnvFilter::try_from_env("AZTABLE_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    // colours only for a terminal: a container's or a CI job's log keeps plain text
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let stdout = tracing_subscriber::fmt::layer().with_target(false).with_ansi(ansi).with_filter(filter);
    let debug = match &config.debug_log {
        Some(path) => {
            // as Azurite: the file's directory is made if missing
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("cannot create the debug log's directory {}: {e}", dir.display()))?;
            }
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("cannot open debug log {}: {e}", path.display()))?;
            Some(
                tracing_subscriber::fmt::layer()
                    .with_ansi(false)
                    .with_writer(std::sync::Mutex::new(file))
                    // each request's headers (secrets hidden), the string to sign of a
                    // refused signature, timings; and everything the console shows
                    .with_filter(EnvFilter::new("info,aztable=debug")),
            )
        }
        None => None,
    };
    // only the layers there are: an absent (`None`) layer still left the access log's
    // callsite enabled under `--silent`, its fields built on every request for nothing
    match debug {
        Some(debug) => tracing_subscriber::registry().with(stdout).with(debug).init(),
        None => tracing_subscriber::registry().with(stdout).init(),
    }
    if let Some(path) = &config.debug_log {
        tracing::info!("debug log: {}", path.display());
    }
    Ok(())
}

fn open_store(config: &Config) -> Result<Arc<dyn Store>, String> {
    match &config.data_dir {
        None => Ok(Arc::new(aztable_store::mem::MemStore::new())),
        #[cfg(feature = "rocksdb")]
        Some(dir) => aztable_store::rocks::RocksStore::open_with(dir, config.store)
            .map(|s| Arc::new(s) as Arc<dyn Store>)
            .map_err(|e| format!("cannot open the data directory {}: {e}", dir.display())),
        #[cfg(not(feature = "rocksdb"))]
        Some(_) => Err("built without the rocksdb feature: use --inMemoryPersistence".into()),
    }
}

/// Prints one of Azurite's startup lines on stdout, where waiting tools read them. A
/// closed stdout (the reader went away) is not the server's failure: the line is dropped.
fn announce(line: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// `--verifyOnStart`: reads every stored block with its checksum verified before the
/// port opens; damage refuses the start, naming the file.
fn verify_store(store: &dyn Store, config: &Config) -> Result<(), String> {
    let Some(dir) = &config.data_dir else {
        tracing::info!("--verifyOnStart: nothing to verify (--inMemoryPersistence)");
        return Ok(());
    };
    tracing::info!("--verifyOnStart: reading every block of the data directory {}", dir.display());
    let started = std::time::Instant::now();
    let report = store.verify_checksums().map_err(|e| format!("--verifyOnStart: {e}"))?;
    tracing::info!(
        files = report.files,
        file_bytes = report.file_bytes,
        entries = report.entries,
        entry_bytes = report.entry_bytes,
        seconds = started.elapsed().as_secs_f64(),
        "--verifyOnStart: every block of {} table files ({} bytes on disk, {} entries of {} bytes) \
         passed its checksum in {:.3} s",
        report.files,
        report.file_bytes,
        report.entries,
        report.entry_bytes,
        started.elapsed().as_secs_f64(),
    );
    Ok(())
}

/// How a run ended, when it ended without an error: `--insightFailOn` findings or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gate {
    Passed,
    Failed,
}

/// `--seed`: imports the export file(s) into the store before the port is announced;
/// refuses a store that holds tables unless `--seedOverwrite`.
fn seed_store(
    service: &TableService,
    accounts: &Accounts,
    seed: &aztable_server::harness::SeedSpec,
) -> Result<(), String> {
    if accounts.get(&seed.account).is_none() {
        return Err(format!("--seedAccount: no account '{}' on this server", seed.account));
    }
    if !seed.overwrite {
        for account in accounts.names() {
            if !service.tables().has_no_tables(&account).map_err(|e| format!("--seed: {e}"))? {
                return Err(format!(
                    "--seed: the store holds tables already (account {account}); give --seedOverwrite to \
                     seed it anyway (entities of the same keys are replaced)"
                ));
            }
        }
    }
    let done = aztable_transfer::seed::seed(service, &seed.account, &seed.path)?;
    service.flush().map_err(|e| format!("--seed: {e}"))?;
    tracing::info!(
        files = done.files,
        tables = done.tables,
        entities = done.entities,
        "seeded {} from {}",
        seed.account,
        seed.path.display()
    );
    Ok(())
}

/// Writes the `--insightReport` file on each SIGUSR1, while the server runs.
fn report_on_sigusr1(advisor: Arc<Advisor>, path: std::path::PathBuf) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::user_defined1()) {
            Ok(mut usr1) => {
                tokio::spawn(async move {
                    while usr1.recv().await.is_some() {
                        match aztable_server::harness::write_report(&advisor, &path) {
                            Ok(()) => tracing::info!("SIGUSR1: insight report written to {}", path.display()),
                            Err(e) => tracing::warn!("SIGUSR1: {e}"),
                        }
                    }
                });
            }
            Err(e) => {
                tracing::warn!("cannot handle SIGUSR1 (the insight report is written at shutdown): {e}")
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (advisor, path);
}

async fn run(config: Config, tls: Option<TlsConfig>) -> Result<Gate, String> {
    let mut accounts = Accounts::with_dev_account();
    if let Some(extra) = &config.extra_accounts {
        accounts.add_from_env(extra).map_err(|e| format!("AZURITE_ACCOUNTS: {e}"))?;
    }
    tracing::info!("aztable {} (Azure Table Storage emulator)", env!("CARGO_PKG_VERSION"));
    config.notices.iter().for_each(|notice| tracing::info!("notice: {notice}"));
    aztable_model::time::set_clock_skew(config.surprises.clock_skew);
    let store = open_store(&config)?;
    if config.verify_on_start {
        verify_store(store.as_ref(), &config)?;
    }
    let service = TableService::open(store)
        .map_err(|e| format!("cannot open the data directory: {e}"))?
        .with_throttle(config.throttle.map(aztable_engine::service::throttle::Throttle::new))
        .with_table_delete_delay(config.surprises.table_delete_delay);
    // before the advisor is attached: the seed's writes are no traffic of the tests
    if let Some(seed) = &config.seed {
        seed_store(&service, &accounts, seed)?;
    }
    let advisor = config.insight.then(|| {
        Arc::new(Advisor::new(InsightOptions {
            open: config.listen.ip().is_loopback(),
            warn_full_scan: config.warn_full_scan,
            exempt_tables: config.gate.exempt_tables.clone(),
        }))
    });
    let service = match &advisor {
        Some(a) => service.with_insight(Arc::clone(a)),
        None => service,
    };
    let state = Arc::new(AppState {
        service,
        accounts,
        options: HttpOptions {
            version_check: if config.skip_api_version_check {
                VersionCheck::Skip
            } else if config.strict_api_version {
                VersionCheck::Strict
            } else {
                VersionCheck::Lenient
            },
            disable_product_style_url: config.disable_product_style_url,
            loose: config.loose,
            https: config.tls.is_some(),
            oauth: config.oauth,
            keep_alive: http::HeaderValue::from_str(&format!("timeout={}", config.keep_alive.as_secs())).ok(),
            faults: config.faults.clone().map(|f| Arc::new(aztable_server::fault::Faults::new(f))),
            limits: aztable_server::http::limits::RequestLimits {
                body_grace: config.body_read_timeout,
                min_body_rate: config.min_body_rate,
                request_timeout: config.request_timeout,
                body_budget: Arc::new(aztable_server::http::limits::BodyBudget::new(
                    config.max_inflight_body_bytes,
                )),
            },
            admin_open: config.listen.ip().is_loopback(),
            insight_report: config.gate.report.clone(),
            insight_fail_on: config.gate.fail_on.clone(),
            short_pages: config
                .surprises
                .short_pages
                .map(|(rate, seed)| Arc::new(aztable_server::surprise::ShortPages::new(rate, seed))),
        },
    });
    let listener = listen(config.listen).map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let blob = bind_other_service("Blob", "--blobHost/--blobPort", config.blob).await?;
    let queue = bind_other_service("Queue", "--queueHost/--queuePort", config.queue).await?;
    let data = match &config.data_dir {
        Some(d) => format!("RocksDB at {}", d.display()),
        None => "in memory (--inMemoryPersistence: nothing is kept)".to_owned(),
    };
    tracing::info!(accounts = ?state.accounts.names(), "data: {data}");
    let scheme = if tls.is_some() { "https" } else { "http" };
    if config.oauth {
        tracing::info!("OAuth bearer tokens accepted (--oauth basic: signatures are NOT verified)");
    }
    log_test_modes(&config);
    let shutdown = shutdown_signal();
    tracing::info!("connection string: {}", aztable_server::cli::connection_string(addr, tls.is_some()));
    // Azurite's lines, word for word: Testcontainers and scripts wait for them
    for (name, bound) in [("Blob", &blob), ("Queue", &queue)] {
        if let Some((_, at)) = bound {
            announce(&format!("Azurite {name} service is successfully listening at http://{at}"));
        }
    }
    announce(&format!("Azurite Table service is successfully listening at {scheme}://{addr}"));
    tracing::info!("aztable listening on {scheme}://{addr}");
    for (name, listener) in [("Blob", blob), ("Queue", queue)] {
        if let Some((listener, at)) = listener {
            tracing::info!(
                "{name} port {at}: answers 501 NotImplemented (this emulator serves the Table service only)"
            );
            tokio::spawn(aztable_server::http::serve_other_service(listener, name));
        }
    }
    if advisor.is_some() {
        tracing::info!("partition advisor at {scheme}://{addr}/_aztable/insight");
    }
    if let (Some(a), Some(path)) = (&advisor, &config.gate.report) {
        report_on_sigusr1(Arc::clone(a), path.clone());
    }
    let conn_limits = ConnLimits {
        keep_alive: config.keep_alive,
        max_connections: config.max_connections,
        shutdown_grace: config.shutdown_timeout,
    };
    serve(listener, Arc::clone(&state), tls, conn_limits, shutdown).await.map_err(|e| e.to_string())?;
    let mut gate = Gate::Passed;
    if let Some(a) = &advisor {
        a.summary_lines().iter().for_each(|line| tracing::info!("{line}"));
        if let Some(path) = &config.gate.report {
            match aztable_server::harness::write_report(a, path) {
                Ok(()) => tracing::info!("insight report written to {}", path.display()),
                Err(e) => tracing::error!("{e}"),
            }
        }
        let failing = aztable_server::harness::failing_findings(a, &config.gate.fail_on);
        if !failing.is_empty() {
            for line in aztable_server::harness::failure_lines(&failing, &config.gate.fail_on) {
                tracing::error!("{line}");
                eprintln!("{line}");
            }
            gate = Gate::Failed;
        }
    }
    tracing::info!("shutting down: flushing the store");
    state.service.flush().map_err(|e| e.to_string())?;
    drop(state);
    tracing::info!("stopped");
    Ok(gate)
}

/// Pending connections the kernel queues before the server accepts them (capped by
/// `net.core.somaxconn`): a burst of many clients connecting at once, as a test suite's
/// worker pool does, is queued rather than refused (tokio's default is 128).
const LISTEN_BACKLOG: u32 = 1024;

/// Binds the Table service's listening socket with [`LISTEN_BACKLOG`].
fn listen(at: std::net::SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket =
        if at.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    // as std and tokio do: a restarted server can bind while old connections linger
    socket.set_reuseaddr(true)?;
    socket.bind(at)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Binds the Blob or Queue port of Azurite's command line, if asked for.
async fn bind_other_service(
    name: &str,
    flags: &str,
    at: Option<std::net::SocketAddr>,
) -> Result<Option<(tokio::net::TcpListener, std::net::SocketAddr)>, String> {
    let Some(at) = at else { return Ok(None) };
    let listener = tokio::net::TcpListener::bind(at)
        .await
        .map_err(|e| format!("cannot listen on {at} for the {name} port ({flags}): {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    Ok(Some((listener, bound)))
}

/// Says at startup when throttling or fault injection is on: answers differ from a
/// plain run's.
fn log_test_modes(config: &Config) {
    let s = &config.surprises;
    if let Some(d) = s.table_delete_delay {
        tracing::info!(
            "--tableDeleteDelay: Create Table answers 409 TableBeingDeleted for {} s after Delete Table",
            d.as_secs()
        );
    }
    if let Some((rate, seed)) = s.short_pages {
        tracing::info!(rate, seed, "--shortPages: Query Entities pages end early with a continuation");
    }
    if s.clock_skew != 0 {
        tracing::info!("--clockSkew: the server's clock runs {} s off the host's", s.clock_skew);
    }
    if !config.gate.fail_on.is_empty() {
        let kinds: Vec<&str> = config.gate.fail_on.iter().map(|k| k.as_str()).collect();
        tracing::info!(
            "--insightFailOn {}: the exit status at shutdown is {} if one occurred",
            kinds.join(","),
            aztable_server::harness::GATE_EXIT_CODE
        );
    }
    if let Some(r) = &config.throttle {
        tracing::info!(partition = r.partition, account = r.account, "throttling: entities per second");
    }
    if config.store.sync_writes {
        tracing::info!("--fsync: every write is synced to the disk before it is acknowledged");
    }
    if let Some(f) = &config.faults {
        tracing::info!(
            rate = f.rate,
            after_write_rate = f.after_write_rate,
            seed = f.seed,
            ops = ?f.ops,
            tables = ?f.tables,
            "fault injection on"
        );
    }
}

/// Resolves on SIGTERM or SIGINT. The handlers are registered when this is called, not
/// when the future is first polled: a signal sent as soon as the "listening" line
/// appears must start a clean shutdown, not kill the process.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let handlers =
            signal(SignalKind::terminate()).and_then(|t| Ok((t, signal(SignalKind::interrupt())?)));
        async move {
            match handlers {
                Ok((mut term, mut int)) => {
                    tokio::select! {
                        _ = term.recv() => {},
                        _ = int.recv() => {},
                    }
                }
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
