//! Black-box: a data directory damaged while the server was stopped. Every start ends:
//! it serves, or exits non-zero with one message naming the damaged file. A log on
//! which the storage engine's own reader spins (the wal-spin fixture) is refused by
//! name and opens with `--recoverTolerate`; a log cut or deleted after a checkpoint is
//! refused instead of rolling the data back; a directory with a database but no
//! CURRENT is refused and keeps its files; a CURRENT naming a missing MANIFEST is
//! refused naming CURRENT.

use crate::common::*;
use serde_json::json;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

fn names(dir: &Path, suffix: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(suffix))
        .collect();
    out.sort();
    out
}

fn refusal(dir: &Path, extra: &[&str]) -> String {
    let mut args = vec![OsStr::new("--location"), dir.as_os_str()];
    args.extend(extra.iter().map(OsStr::new));
    let (ok, stdout, stderr) = run_to_exit(&args);
    assert!(!ok, "the server must refuse to start: {stdout}");
    assert!(!stdout.contains("listening on"), "{stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one message: {stderr}");
    stderr
}

/// Writes `n` entities (one request each) into table `dmg`.
async fn write(c: &Client, n: usize) {
    assert_eq!(c.create_table("dmg").await.status, 201);
    let filler = "x".repeat(250);
    for i in 0..n {
        let r = c.insert("dmg", json!({"PartitionKey": "p", "RowKey": format!("{i:06}"), "F": filler})).await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
}

/// Waits until the server's recovery point covers its newest log as it is now: every
/// write so far is recorded as acknowledged and synced.
fn await_checkpoint(dir: &Path) -> (PathBuf, u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(dir.join("AZTABLE-RECOVERY-POINT")).unwrap_or_default();
        let recorded = text.lines().find_map(|l| {
            let mut w = l.split(' ');
            if w.next() != Some("log") {
                return None;
            }
            Some((w.next()?.to_owned(), w.next()?.parse::<u64>().ok()?))
        });
        if let Some((name, size)) = recorded {
            let path = dir.join(&name);
            if std::fs::metadata(&path).map(|m| m.len()).ok() == Some(size) && size > 100_000 {
                return (path, size);
            }
        }
        assert!(Instant::now() < deadline, "no recovery point covered the writes: {text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

async fn count(c: &Client) -> usize {
    let mut n = 0;
    let mut next = String::new();
    loop {
        let r = c.send("GET", &format!("/dmg()?$select=RowKey{next}"), &[], None).await;
        if r.status == 404 && r.error_code() == "TableNotFound" {
            return 0; // the table was created in the part of the log that is gone
        }
        assert_eq!(r.status, 200, "{}", r.body);
        n += r.json()["value"].as_array().unwrap().len();
        match (r.header("x-ms-continuation-NextPartitionKey"), r.header("x-ms-continuation-NextRowKey")) {
            (Some(pk), Some(rk)) => next = format!("&NextPartitionKey={pk}&NextRowKey={rk}"),
            _ => return n,
        }
    }
}

#[tokio::test]
async fn the_wal_spin_fixture_is_refused_by_name_and_opens_with_recover_tolerate() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wal-spin/store"), &dir);
    let stderr = refusal(&dir, &[]);
    assert!(
        stderr.contains("000008.log")
            && stderr.contains("damaged before its end, at byte")
            && stderr.contains("--recoverTolerate"),
        "{stderr}"
    );
    assert_eq!(std::fs::metadata(dir.join("000008.log")).unwrap().len(), 986_492, "nothing changed");

    let server = TestServer::start_on(&dir, &["--recoverTolerate"]);
    let r = server.client().send("GET", "/Tables", &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let dropped = server.log_lines_at_least("dropped_writes=", 1);
    assert_eq!(dropped.len(), 1, "says what it dropped");
    assert!(names(&dir, "").iter().any(|n| n.starts_with("damaged-log-")), "keeps a copy of the log");
}

/// Case: a log cut, or deleted, after the server recorded a checkpoint covering it.
async fn cut_or_delete(delete: bool, extra: &[&str]) {
    const N: usize = 1500;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let mut server = TestServer::start_on(&dir, extra);
    write(&server.client(), N).await;
    let (log, size) = await_checkpoint(&dir);
    server.kill();
    let name = log.file_name().unwrap().to_string_lossy().into_owned();
    let stderr = if delete {
        std::fs::remove_file(&log).unwrap();
        let stderr = refusal(&dir, extra);
        assert!(
            stderr.contains(&format!("{name}, the newest write-ahead log")) && stderr.contains("missing"),
            "{stderr}"
        );
        stderr
    } else {
        std::fs::OpenOptions::new().write(true).open(&log).unwrap().set_len(size / 16).unwrap();
        let stderr = refusal(&dir, extra);
        assert!(
            stderr.contains(&format!("{name} is {} bytes, shorter than the {size} bytes", size / 16)),
            "{stderr}"
        );
        stderr
    };
    assert!(stderr.contains("--recoverTolerate") && stderr.contains("last checkpoint"), "{stderr}");
    // refusing changed nothing: the same refusal again
    assert_eq!(refusal(&dir, extra), stderr);

    let mut tolerate = extra.to_vec();
    tolerate.push("--recoverTolerate");
    let server = TestServer::start_on(&dir, &tolerate);
    let said = server.log_lines_at_least("--recoverTolerate:", 1);
    assert!(said.iter().any(|l| l.contains(&name)), "says it starts behind, naming the log: {said:?}");
    let kept = count(&server.client()).await;
    assert!(kept < N, "kept {kept} of {N}");
}

#[tokio::test]
async fn a_log_cut_after_a_checkpoint_is_refused_by_name() {
    cut_or_delete(false, &[]).await;
}

#[tokio::test]
async fn a_log_deleted_after_a_checkpoint_is_refused_by_name() {
    cut_or_delete(true, &[]).await;
}

#[tokio::test]
async fn with_fsync_a_cut_synced_log_is_refused_by_name() {
    cut_or_delete(false, &["--fsync"]).await;
}

#[tokio::test]
async fn a_database_without_current_is_refused_and_keeps_its_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let mut server = TestServer::start_on(&dir, &[]);
    write(&server.client(), 50).await;
    assert!(server.terminate(), "a clean stop");
    let ssts = names(&dir, ".sst");
    assert!(!ssts.is_empty());
    std::fs::remove_file(dir.join("CURRENT")).unwrap();
    let stderr = refusal(&dir, &[]);
    assert!(stderr.contains("CURRENT is missing") && stderr.contains("MANIFEST-"), "{stderr}");
    // --recoverTolerate does not create a database over it either
    let again = refusal(&dir, &["--recoverTolerate"]);
    assert!(again.contains("CURRENT is missing"), "{again}");
    assert_eq!(names(&dir, ".sst"), ssts, "every SST is still there");
}

#[tokio::test]
async fn a_current_naming_a_missing_manifest_is_refused_naming_current() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let mut server = TestServer::start_on(&dir, &[]);
    write(&server.client(), 20).await;
    assert!(server.terminate(), "a clean stop");
    let current = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    // one flipped bit in the number: MANIFEST-0000NN -> MANIFEST-2000NN
    let flipped = current.replacen("MANIFEST-0", "MANIFEST-2", 1);
    assert_ne!(flipped, current);
    std::fs::write(dir.join("CURRENT"), &flipped).unwrap();
    let stderr = refusal(&dir, &[]);
    let named = flipped.trim_end();
    assert!(
        stderr.contains("CURRENT in") && stderr.contains(&format!("names {named}, which does not exist")),
        "{stderr}"
    );
}

#[tokio::test]
async fn every_start_says_what_recovery_found() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let mut server = TestServer::start_on(&dir, &[]);
    assert_eq!(server.log_lines_at_least("created a new database", 1).len(), 1);
    write(&server.client(), 20).await;
    server.kill();
    let server = TestServer::start_on(&dir, &[]);
    let lines = server.log_lines_at_least("recovered_to_seq=", 1);
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].contains("no incomplete write")
            && lines[0].contains("the last checkpoint recorded sequence"),
        "{lines:?}"
    );
    assert_eq!(count(&server.client()).await, 20);
}
