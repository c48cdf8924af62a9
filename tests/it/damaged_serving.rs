//! Black-box: damage found while serving is named, never to be retried. A real store
//! is written and flushed, bytes inside a data block of its table file are flipped, and
//! the server started on it: the point read, the page of a query and Query Tables that
//! meet the damaged block answer 500 `DataCorrupted` naming the file (no "retry"),
//! writes are refused from then on, the health probe and the metrics say the store is
//! damaged; `--verifyOnStart` refuses to start on it, naming the file.

use crate::common::*;
use serde_json::json;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

const TABLE: &str = "damaged";
const ROWS: usize = 1200;
/// Tables of long names: their records fill the table file's first four blocks or so.
const TABLES: usize = 400;
/// An offset in the third block of the table file: among the table records, after the
/// metadata the server reads when it starts (the first block).
const IN_THE_TABLE_LIST: usize = 40_000;

/// A store of `TABLES` tables and `ROWS` entities of some 300 bytes each (about twenty
/// 16 KiB blocks of heads after the table records), written and flushed by a clean
/// shutdown into one table file.
async fn write_store(dir: &Path) {
    let mut server = TestServer::start_on(dir, &[]);
    let c = server.client();
    assert_eq!(c.create_table(TABLE).await.status, 201);
    assert_eq!(c.create_table("another").await.status, 201);
    for i in 0..TABLES {
        let name = format!("list{i:04}{}", "x".repeat(55));
        assert_eq!(c.create_table(&name).await.status, 201);
    }
    for i in 0..ROWS {
        let filler = format!("{i:06}-{}", "f".repeat(50));
        let e =
            json!({"PartitionKey": "p", "RowKey": row_key(i), "A": filler, "B": filler, "C": filler, "N": i});
        assert_eq!(c.insert(TABLE, e).await.status, 201);
    }
    assert!(server.terminate(), "a clean shutdown flushes the store");
}

fn row_key(i: usize) -> String {
    format!("r{i:06}")
}

/// The table files (`*.sst`) of the data directory, largest first.
fn table_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .map(|p| (std::fs::metadata(&p).unwrap().len(), p))
        .collect();
    files.sort();
    files.into_iter().rev().map(|(_, p)| p).collect()
}

/// Flips 16 bytes of `file` at `at`.
fn flip(file: &Path, at: usize) {
    let mut bytes = std::fs::read(file).unwrap();
    for b in &mut bytes[at..at + 16] {
        *b ^= 0x5a;
    }
    std::fs::write(file, bytes).unwrap();
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// Asserts `r` is the damage answer naming `file`, without the server's path and
/// without telling the client to retry.
fn assert_data_corrupted(r: &Resp, file: &str, dir: &Path, what: &str) {
    assert_eq!(r.status, 500, "{what}: {}", r.body);
    assert_eq!(r.error_code(), "DataCorrupted", "{what}: {}", r.body);
    assert_eq!(r.header("x-ms-error-code").as_deref(), Some("DataCorrupted"), "{what}");
    let message = r.json()["odata.error"]["message"]["value"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains(file), "{what}: the message names {file}: {message}");
    assert!(message.contains("restore the data directory from a backup"), "{what}: {message}");
    assert!(!message.to_lowercase().contains("retry the request"), "{what}: {message}");
    assert!(!message.contains(&dir.display().to_string()), "{what}: no server path: {message}");
}

/// `GET /` without an account, as `aztable healthcheck` sends it.
async fn probe(port: u16) -> Resp {
    Resp::read(reqwest::get(format!("http://127.0.0.1:{port}/")).await.unwrap()).await
}

async fn metrics(port: u16) -> String {
    let r = reqwest::get(format!("http://127.0.0.1:{port}/_aztable/metrics")).await.unwrap();
    assert_eq!(r.status(), 200);
    r.text().await.unwrap()
}

fn healthcheck(port: u16) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_aztable"))
        .args(["healthcheck", "--port", &port.to_string()])
        .output()
        .expect("run healthcheck");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Pages of `$top=100` over the table until one fails: (rows of the good pages, the
/// failed answer).
async fn query_until_failure(c: &Client) -> (usize, Option<Resp>) {
    let (mut rows, mut next) = (0, String::new());
    loop {
        let r = c.send("GET", &format!("/{TABLE}()?$top=100{next}"), &[], None).await;
        if r.status != 200 {
            return (rows, Some(r));
        }
        rows += r.json()["value"].as_array().unwrap().len();
        match (r.header("x-ms-continuation-NextPartitionKey"), r.header("x-ms-continuation-NextRowKey")) {
            (Some(pk), Some(rk)) => next = format!("&NextPartitionKey={pk}&NextRowKey={rk}"),
            _ => return (rows, None),
        }
    }
}

#[tokio::test]
async fn a_damaged_block_is_named_on_every_read_and_refuses_writes_and_verify_on_start() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    write_store(&dir).await;

    // an intact store: verified on start, healthy, no damage counted
    let server = TestServer::start_on(&dir, &["--verifyOnStart"]);
    let verified = server.log_lines_at_least("passed its checksum", 1);
    assert_eq!(verified.len(), 1, "--verifyOnStart logs what it read");
    assert_eq!(probe(server.port).await.status, 400, "an intact store's probe: InvalidUri as before");
    assert!(metrics(server.port).await.contains("\naztable_store_damaged 0\n"));
    assert_eq!(healthcheck(server.port).0, 0);
    drop(server);

    let files = table_files(&dir);
    assert_eq!(files.len(), 1, "one table file: {files:?}");
    let sst = files[0].clone();
    let name = file_name(&sst);
    let len = std::fs::metadata(&sst).unwrap().len() as usize;
    assert!(len > 200_000, "{name}: {len} bytes");
    // the middle of the file: a data block of entity heads (the index, filter and
    // footer are in the last few percent)
    flip(&sst, len / 2);

    let server = TestServer::start_on(&dir, &[]);
    let c = server.client();
    // a query's pages up to the damaged block are served; the page that meets it is named
    let (good_rows, failed) = query_until_failure(&c).await;
    let failed = failed.expect("a page meets the damaged block");
    assert!(good_rows > 0 && good_rows < ROWS, "pages before the damage are served: {good_rows}");
    assert_data_corrupted(&failed, &name, &dir, "the query page");
    // a point read of a row in the damaged block (just after the good pages)
    let mut point = None;
    for i in good_rows..(good_rows + 300).min(ROWS) {
        let r = c.get(TABLE, "p", &row_key(i)).await;
        if r.status != 200 {
            point = Some(r);
            break;
        }
    }
    let point = point.expect("a row of the damaged block");
    assert_data_corrupted(&point, &name, &dir, "the point read");
    // rows elsewhere are still read
    assert_eq!(c.get(TABLE, "p", &row_key(0)).await.status, 200);
    // writes are refused from now on, to any table
    let refused = c.insert("another", json!({"PartitionKey": "p", "RowKey": "new"})).await;
    assert_data_corrupted(&refused, &name, &dir, "an insert after the damage");
    assert!(refused.json()["odata.error"]["message"]["value"]
        .as_str()
        .unwrap()
        .contains("Writes are refused"));
    let refused = c.send("DELETE", &entity_path(TABLE, "p", &row_key(0)), &[("If-Match", "*")], None).await;
    assert_data_corrupted(&refused, &name, &dir, "a delete after the damage");
    // the health probe and the metrics say so
    let answer = probe(server.port).await;
    assert_data_corrupted(&answer, &name, &dir, "the health probe");
    let (code, out) = healthcheck(server.port);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("DataCorrupted") && out.contains(&name), "{out}");
    let text = metrics(server.port).await;
    assert!(text.contains("\naztable_store_damaged 1\n"), "{text}");
    let errors: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("aztable_store_corruption_errors_total "))
        .and_then(|v| v.parse().ok())
        .expect("the corruption counter");
    assert!(errors >= 4, "{text}");
    // the log has the file's full path
    assert!(!server.log_lines_at_least(&sst.display().to_string(), 1).is_empty());
    drop(server);

    // --verifyOnStart (or its variable) refuses to start, naming the file
    let location = [OsStr::new("--location"), dir.as_os_str(), OsStr::new("--verifyOnStart")];
    let (ok, stdout, stderr) = run_to_exit(&location);
    assert!(!ok, "--verifyOnStart must refuse a damaged store: {stdout}");
    assert!(stderr.contains(&name) && stderr.contains("restore the data directory"), "{stderr}");
    assert!(!stdout.contains("listening"), "{stdout}");
    let mut by_env = Command::new(env!("CARGO_BIN_EXE_aztable"))
        .args(["--tablePort", "0", "--location"])
        .arg(&dir)
        .env("AZTABLE_VERIFY_ON_START", "1")
        .env("AZTABLE_LOG", "info")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while by_env.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = by_env.kill();
            panic!("AZTABLE_VERIFY_ON_START=1: the server started on a damaged store");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = by_env.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains(&name), "AZTABLE_VERIFY_ON_START=1: {stderr}");

    // a block of the table list: Query Tables meets it
    flip(&sst, IN_THE_TABLE_LIST);
    let server = TestServer::start_on(&dir, &[]);
    let r = server.client().send("GET", "/Tables", &[], None).await;
    assert_data_corrupted(&r, &name, &dir, "Query Tables");
}
