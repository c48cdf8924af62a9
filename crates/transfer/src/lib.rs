//! `aztable export` and `aztable import`: a table or an account as JSON lines (one
//! entity a line, typed; see [`mod@format`]), read from or written to a running server
//! (over HTTP with the account key) or the data directory of a stopped one; and
//! Azurite's table database as an import source and an export destination, to migrate
//! either way ([`azurite`]).
//!
//! A top layer beside `http`: it uses the service (for a data directory), `odata` (the
//! line format is the service's entity JSON), `auth::sign` (SharedKey for HTTP) and
//! the store (to open a directory).

pub mod azurite;
pub mod format;
mod local;
mod progress;
mod remote;
pub mod reset;
pub mod seed;

use clap::{Args as ClapArgs, Parser};
use format::Line;
use local::Local;
use progress::Progress;
use remote::Remote;
use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;

/// Entities written per call while importing.
pub(crate) const IMPORT_CHUNK: usize = 1000;

/// Where the data is: a running server or a stopped server's data directory.
#[derive(Debug, Clone, ClapArgs)]
pub struct Target {
    /// A running server's table endpoint, e.g. http://127.0.0.1:10002/devstoreaccount1
    /// (requests are signed with the account key).
    #[arg(
        long = "url",
        value_name = "URL",
        conflicts_with = "location",
        required_unless_present = "location"
    )]
    pub url: Option<String>,

    /// The data directory of a stopped aztable server (read-only for export).
    #[arg(short = 'l', long = "location", value_name = "DIR")]
    pub location: Option<PathBuf>,

    /// The account (default: the first path segment of --url, else devstoreaccount1).
    #[arg(long = "account", value_name = "NAME")]
    pub account: Option<String>,

    /// The account key (base64) for --url. Default: the key AZURITE_ACCOUNTS gives the
    /// account, or the development account's well-known key. Env: AZTABLE_ACCOUNT_KEY.
    #[arg(long = "key", value_name = "BASE64", env = "AZTABLE_ACCOUNT_KEY", hide_env_values = true)]
    pub key: Option<String>,
}

/// Write a table, or every table of an account, as JSON lines (or as Azurite's database).
#[derive(Debug, Parser)]
#[command(long_about = None)]
pub struct ExportArgs {
    #[command(flatten)]
    pub target: Target,

    /// Only this table (default: every table of the account).
    #[arg(short = 't', long = "table", value_name = "NAME")]
    pub table: Option<String>,

    /// Write to this file (default: standard output).
    #[arg(short = 'o', long = "out", value_name = "FILE", conflicts_with = "azurite")]
    pub out: Option<PathBuf>,

    /// Write Azurite's table database instead: a new __azurite_db_table__.json in this
    /// directory (created if need be), or this file name. Azurite serves it from that
    /// --location, under the same account. An existing file is not overwritten.
    #[arg(long = "azurite", value_name = "PATH")]
    pub azurite: Option<PathBuf>,
}

/// Read JSON lines written by `aztable export` (or Azurite's table database) into a server or a data directory. Entities replace any of the same keys.
#[derive(Debug, Parser)]
#[command(long_about = None)]
pub struct ImportArgs {
    #[command(flatten)]
    pub target: Target,

    /// Import into this table: the input's one table, or entity lines without a
    /// {"TableName":...} line before them.
    #[arg(short = 't', long = "table", value_name = "NAME")]
    pub table: Option<String>,

    /// Read this file (default: standard input).
    #[arg(short = 'i', long = "in", value_name = "FILE", conflicts_with = "azurite")]
    pub input: Option<PathBuf>,

    /// Read Azurite's table data instead: its --location directory, or the
    /// __azurite_db_table__.json file in it. Imports the --account's tables (default
    /// devstoreaccount1).
    #[arg(long = "azurite", value_name = "PATH")]
    pub azurite: Option<PathBuf>,
}

/// Runs `aztable export ...`; the process's exit code.
pub fn run_export(args: ExportArgs) -> std::process::ExitCode {
    exit_code(runtime().and_then(|rt| rt.block_on(export(args))))
}

/// Runs `aztable import ...`; the process's exit code.
pub fn run_import(args: ImportArgs) -> std::process::ExitCode {
    exit_code(runtime().and_then(|rt| rt.block_on(import(args))))
}

fn exit_code(result: Result<(), String>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("aztable: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

/// A data source or destination.
enum Endpoint {
    Local(Local),
    Remote(Remote),
}

impl Target {
    fn account(&self) -> String {
        if let Some(a) = &self.account {
            return a.clone();
        }
        let from_url = self.url.as_deref().and_then(|u| reqwest::Url::parse(u).ok()).and_then(|u| {
            u.path_segments().and_then(|mut s| s.next().filter(|s| !s.is_empty()).map(str::to_owned))
        });
        from_url.unwrap_or_else(|| aztable_wire::auth::DEV_ACCOUNT.to_owned())
    }

    fn key(&self, account: &str) -> Result<Vec<u8>, String> {
        if let Some(k) = &self.key {
            return aztable_wire::auth::sign::decode_key(k);
        }
        let mut accounts = aztable_wire::auth::Accounts::with_dev_account();
        if let Ok(extra) = std::env::var("AZURITE_ACCOUNTS") {
            if !extra.trim().is_empty() {
                accounts.add_from_env(&extra).map_err(|e| format!("AZURITE_ACCOUNTS: {e}"))?;
            }
        }
        let found = accounts.get(account).and_then(|a| a.keys.first()).map(|k| k.bytes().to_vec());
        found.ok_or_else(|| format!("no key for account '{account}': give --key"))
    }

    fn open(&self, write: bool) -> Result<Endpoint, String> {
        let account = self.account();
        match (&self.url, &self.location) {
            (Some(url), _) => Ok(Endpoint::Remote(Remote::new(url, &account, self.key(&account)?)?)),
            (None, Some(dir)) if write => Ok(Endpoint::Local(Local::open_write(dir, &account)?)),
            (None, Some(dir)) => Ok(Endpoint::Local(Local::open_read(dir, &account)?)),
            (None, None) => Err("give --url or --location".into()),
        }
    }
}

impl Endpoint {
    async fn tables(&self) -> Result<Vec<String>, String> {
        match self {
            Endpoint::Local(l) => l.tables().await,
            Endpoint::Remote(r) => r.tables().await,
        }
    }

    async fn table(&self, name: &str) -> Result<String, String> {
        match self {
            Endpoint::Local(l) => l.table(name),
            Endpoint::Remote(r) => r.table(name).await,
        }
    }

    async fn page(
        &self,
        table: &str,
        next: Option<(String, String)>,
    ) -> Result<(Vec<aztable_model::Entity>, Option<(String, String)>), String> {
        match self {
            Endpoint::Local(l) => l.page(table, next).await,
            Endpoint::Remote(r) => r.page(table, next).await,
        }
    }

    async fn create_table(&self, name: &str) -> Result<(), String> {
        match self {
            Endpoint::Local(l) => l.create_table(name),
            Endpoint::Remote(r) => r.create_table(name).await,
        }
    }

    async fn write(&self, table: &str, entities: &[aztable_model::Entity]) -> Result<(), String> {
        match self {
            Endpoint::Local(l) => l.write(table, entities),
            Endpoint::Remote(r) => r.write(table, entities).await,
        }
    }

    fn flush(&self) -> Result<(), String> {
        match self {
            Endpoint::Local(l) => l.flush(),
            Endpoint::Remote(_) => Ok(()),
        }
    }
}

async fn export(args: ExportArgs) -> Result<(), String> {
    let source = args.target.open(false)?;
    let tables = match &args.table {
        Some(t) => vec![source.table(t).await?],
        None => source.tables().await?,
    };
    if let Some(path) = &args.azurite {
        return export_azurite(&args, &source, &tables, path).await;
    }
    let out: Box<dyn Write> = match &args.out {
        Some(path) => Box::new(
            std::fs::File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = BufWriter::with_capacity(1 << 16, out);
    let write_err = |e: std::io::Error| format!("cannot write the export: {e}");
    let mut progress = Progress::new("exported");
    for table in &tables {
        progress.table(table);
        out.write_all(&format::table_line(table)).map_err(write_err)?;
        out.write_all(b"\n").map_err(write_err)?;
        let mut next = None;
        loop {
            let (entities, more) = source.page(table, next).await?;
            for e in &entities {
                out.write_all(&format::entity_line(e)).map_err(write_err)?;
                out.write_all(b"\n").map_err(write_err)?;
            }
            progress.add(entities.len() as u64);
            match more {
                Some(m) => next = Some(m),
                None => break,
            }
        }
    }
    out.flush().map_err(write_err)?;
    progress.finish();
    Ok(())
}

/// Exports `tables` as Azurite's table database at `path` (a directory or the file).
async fn export_azurite(
    args: &ExportArgs,
    source: &Endpoint,
    tables: &[String],
    path: &std::path::Path,
) -> Result<(), String> {
    let is_file = path.extension().is_some_and(|e| e == "json");
    let file = if is_file { path.to_path_buf() } else { path.join(azurite::DB_FILE) };
    if file.exists() {
        return Err(format!("{} exists: Azurite's data there would be lost", file.display()));
    }
    let mut progress = Progress::new("exported");
    let mut all = Vec::with_capacity(tables.len());
    for table in tables {
        progress.table(table);
        let mut entities = Vec::new();
        let mut next = None;
        loop {
            let (page, more) = source.page(table, next).await?;
            progress.add(page.len() as u64);
            entities.extend(page);
            match more {
                Some(m) => next = Some(m),
                None => break,
            }
        }
        all.push(entities);
    }
    let out: Vec<_> =
        tables.iter().zip(&all).map(|(name, entities)| azurite::TableOut { name, entities }).collect();
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let absolute = std::path::absolute(&file).unwrap_or_else(|_| file.clone());
    let text = azurite::write_db(&args.target.account(), &out, &absolute.to_string_lossy(), created);
    std::fs::write(&file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    progress.finish();
    Ok(())
}

async fn import(args: ImportArgs) -> Result<(), String> {
    if let Some(path) = &args.azurite {
        return import_azurite(&args, path).await;
    }
    let input: Box<dyn BufRead> = match &args.input {
        Some(path) => Box::new(std::io::BufReader::with_capacity(
            1 << 16,
            std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?,
        )),
        None => Box::new(std::io::stdin().lock()),
    };
    let sink = args.target.open(true)?;
    let mut progress = Progress::new("imported");
    let mut current: Option<String> = None;
    let mut tables_seen = 0usize;
    let mut pending = Vec::with_capacity(IMPORT_CHUNK);
    let now = aztable_model::time::wall_now();
    for (n, line) in input.split(b'\n').enumerate() {
        let line = line.map_err(|e| format!("cannot read the input: {e}"))?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let at = |why: String| format!("line {}: {why}", n + 1);
        match format::parse_line(&line).map_err(at)? {
            Line::Table(name) => {
                tables_seen += 1;
                if args.table.is_some() && tables_seen > 1 {
                    return Err(at("the input holds more than one table: --table names only one".into()));
                }
                if let Some(t) = &current {
                    sink.write(t, &pending).await?;
                    progress.add(pending.len() as u64);
                    pending.clear();
                }
                let name = args.table.clone().unwrap_or(name);
                sink.create_table(&name).await?;
                progress.table(&name);
                current = Some(name);
            }
            Line::Entity(mut e, timestamp) => {
                if current.is_none() {
                    let Some(name) = &args.table else {
                        return Err(at("an entity before any {\"TableName\":...} line: give --table".into()));
                    };
                    sink.create_table(name).await?;
                    progress.table(name);
                    current = Some(name.clone());
                }
                e.timestamp = timestamp.unwrap_or(now);
                pending.push(e);
                if pending.len() >= IMPORT_CHUNK {
                    if let Some(t) = &current {
                        sink.write(t, &pending).await?;
                    }
                    progress.add(pending.len() as u64);
                    pending.clear();
                }
            }
        }
    }
    if let Some(t) = &current {
        sink.write(t, &pending).await?;
        progress.add(pending.len() as u64);
    }
    sink.flush()?;
    progress.finish();
    Ok(())
}

async fn import_azurite(args: &ImportArgs, path: &std::path::Path) -> Result<(), String> {
    let file = if path.is_dir() { path.join(azurite::DB_FILE) } else { path.to_path_buf() };
    let text = std::fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let account = args.target.account();
    let tables = azurite::read_db(&text, Some(&account)).map_err(|e| format!("{}: {e}", file.display()))?;
    if args.table.is_some() && tables.len() > 1 {
        return Err(format!("{} holds {} tables: --table names only one", file.display(), tables.len()));
    }
    let sink = args.target.open(true)?;
    let mut progress = Progress::new("imported");
    for t in &tables {
        let name = args.table.clone().unwrap_or_else(|| t.name.clone());
        sink.create_table(&name).await?;
        progress.table(&name);
        for chunk in t.entities.chunks(IMPORT_CHUNK) {
            sink.write(&name, chunk).await?;
            progress.add(chunk.len() as u64);
        }
    }
    sink.flush()?;
    progress.finish();
    Ok(())
}
