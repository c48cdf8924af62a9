//! Black-box: a damaged data directory is never served silently (more cases in
//! `damaged.rs`). Damage in the middle of the write-ahead log refuses to start with
//! what is wrong and what to do;
//! `--recoverTolerate` starts at the last write before the damage and logs what it
//! dropped; an incomplete last write (a torn tail) is dropped quietly; a directory of a
//! newer storage format refuses to start.

use crate::common::*;
use serde_json::json;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Writes `n` entities `p/000000..` one request each (one log record each), then kills
/// the server: everything is in the write-ahead log, nothing flushed.
async fn write_then_kill(dir: &Path, n: usize) {
    let mut server = TestServer::start_on(dir, &[]);
    let c = server.client();
    assert_eq!(c.create_table("wal").await.status, 201);
    let filler = "x".repeat(300);
    for i in 0..n {
        let r = c.insert("wal", json!({"PartitionKey": "p", "RowKey": format!("{i:06}"), "F": filler})).await;
        assert_eq!(r.status, 201);
    }
    server.kill();
}

/// The newest `*.log` file of the data directory.
fn newest_log(dir: &Path) -> PathBuf {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs.pop().expect("a write-ahead log")
}

/// The RowKeys of partition `p`, in order.
async fn row_keys(c: &Client) -> Vec<String> {
    let mut keys = Vec::new();
    let mut next = String::new();
    loop {
        let r = c.send("GET", &format!("/wal()?$select=RowKey{next}"), &[], None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        for e in r.json()["value"].as_array().unwrap() {
            keys.push(e["RowKey"].as_str().unwrap().to_owned());
        }
        match (r.header("x-ms-continuation-NextPartitionKey"), r.header("x-ms-continuation-NextRowKey")) {
            (Some(pk), Some(rk)) => next = format!("&NextPartitionKey={pk}&NextRowKey={rk}"),
            _ => return keys,
        }
    }
}

/// 4 KiB of pseudo-random bytes over the middle of `file`.
fn garble_middle(file: &Path) {
    let mut bytes = std::fs::read(file).unwrap();
    let mid = bytes.len() / 2;
    let mut x: u32 = 0x9e37_79b9;
    for b in &mut bytes[mid..mid + 4096] {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *b = x as u8;
    }
    std::fs::write(file, bytes).unwrap();
}

#[tokio::test]
async fn damage_in_the_middle_of_the_log_refuses_to_start_and_recover_tolerate_says_what_it_dropped() {
    const N: usize = 2000;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    write_then_kill(&dir, N).await;
    let log = newest_log(&dir);
    assert!(std::fs::metadata(&log).unwrap().len() > 500_000, "the writes are in the log");
    garble_middle(&log);

    let location = [OsStr::new("--location"), dir.as_os_str()];
    let (ok, _, stderr) = run_to_exit(&location);
    assert!(!ok, "a damaged log must stop the server: {stderr}");
    assert!(stderr.contains("write-ahead log") && stderr.contains("damaged before its end"), "{stderr}");
    assert!(stderr.contains("--recoverTolerate"), "the refusal says what to do: {stderr}");
    // refusing again changes nothing
    assert!(!run_to_exit(&location).0);

    let debug = tmp.path().join("debug.log");
    let debug_s = debug.to_str().unwrap();
    let server = TestServer::start_on(&dir, &["--recoverTolerate", "--debug", debug_s]);
    let keys = row_keys(&server.client()).await;
    let kept = keys.len();
    assert!(kept > 0 && kept < N, "kept {kept}");
    // point in time: exactly the writes before the damage, no holes
    let expected: Vec<String> = (0..kept).map(|i| format!("{i:06}")).collect();
    assert_eq!(keys, expected);

    let text = std::fs::read_to_string(&debug).unwrap();
    // the engine read only the intact records: it found nothing to drop itself
    assert!(text.contains("recovered_to_seq="), "{text}");
    let line = text.lines().find(|l| l.contains("dropped_writes=")).unwrap_or_else(|| panic!("{text}"));
    let field = |name: &str| -> usize {
        let at = line.find(&format!("{name}=")).unwrap() + name.len() + 1;
        line[at..].split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
    };
    let dropped = field("dropped_writes");
    // the writes after the damage that the log still holds; those the garbage and the
    // rest of its 32 KiB blocks destroyed (each about 400 bytes) are not counted
    assert!(
        dropped <= N - kept && dropped + 2 * 32 * 1024 / 400 >= N - kept,
        "dropped {dropped}, kept {kept}"
    );
    let copies: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("damaged-log-"))
        .collect();
    assert_eq!(copies.len(), 1, "a copy of the damaged log is kept");
    drop(server);

    // the recovered directory opens without the flag from now on
    let server = TestServer::start_on(&dir, &[]);
    assert_eq!(row_keys(&server.client()).await.len(), kept);
}

#[tokio::test]
async fn a_torn_last_write_is_dropped_and_everything_before_it_served() {
    const N: usize = 300;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    write_then_kill(&dir, N).await;
    let log = newest_log(&dir);
    let len = std::fs::metadata(&log).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&log).unwrap().set_len(len - 5).unwrap();
    // the server records a recovery point about once a second: if one landed between the
    // last write and the kill, that write was recorded as synced, and cutting it is damage
    let point = std::fs::read_to_string(dir.join("AZTABLE-RECOVERY-POINT")).unwrap();
    let log_name = log.file_name().unwrap().to_string_lossy().into_owned();
    if point.contains(&format!("log {log_name} {len}\n")) {
        let (ok, _, stderr) = run_to_exit(&[OsStr::new("--location"), dir.as_os_str()]);
        assert!(!ok && stderr.contains(&format!("{log_name} is {} bytes, shorter", len - 5)), "{stderr}");
        return;
    }

    let server = TestServer::start_on(&dir, &[]);
    let keys = row_keys(&server.client()).await;
    let expected: Vec<String> = (0..N - 1).map(|i| format!("{i:06}")).collect();
    assert_eq!(keys, expected, "every complete write, and not the torn one");
    let found = server.log_lines_at_least("recovered_to_seq=", 1);
    assert!(
        found.iter().any(|l| l.contains(&format!("bytes of an incomplete last write in {log_name}"))),
        "{found:?}"
    );
}

#[cfg(feature = "rocksdb")]
#[tokio::test]
async fn a_newer_storage_format_refuses_to_start() {
    use aztable_store::{codec, keys, rocks::RocksStore, Store, WriteBatch};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let mut server = TestServer::start_on(&dir, &[]);
    assert_eq!(server.client().create_table("future").await.status, 201);
    assert!(server.terminate());
    let newer = aztable_engine::partition::FORMAT_VERSION + 1;
    {
        let store = RocksStore::open(&dir).unwrap();
        assert_eq!(
            store.get(keys::FORMAT_VERSION_KEY).unwrap().map(|b| codec::decode_u64(&b).unwrap()),
            Some(aztable_engine::partition::FORMAT_VERSION),
            "the server records the format it wrote"
        );
        let mut batch = WriteBatch::new();
        batch.put(keys::FORMAT_VERSION_KEY.to_vec(), codec::encode_u64(newer));
        store.write(batch).unwrap();
    }
    let (ok, stdout, stderr) = run_to_exit(&[OsStr::new("--location"), dir.as_os_str()]);
    assert!(!ok, "{stdout}");
    assert!(
        stderr.contains(&format!("storage format {newer}")) && stderr.contains("newer aztable"),
        "{stderr}"
    );
    assert!(!stdout.contains("listening"), "{stdout}");
}
