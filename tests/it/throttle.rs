//! Black-box: throttling (`--throttle`, `--partitionRate`, `--accountRate`) and fault
//! injection (`--faultRate`, `--faultSeed`, `--faultOps`, `--faultTables`,
//! `--faultAfterWriteRate`), through a raw signed client that never retries.

use crate::common::*;
use serde_json::json;
use std::time::Instant;

const BUSY_PARTITION: &str = "The server is currently unable to receive requests. Please retry your request.";
const BUSY_ACCOUNT: &str = "Operations per second is over the account limit.";

fn memory_server(args: &[&str]) -> TestServer {
    TestServer::start_with(&[&["--inMemoryPersistence"], args].concat(), &[])
}

/// The error message's first line (the request id and time follow).
fn message(r: &Resp) -> String {
    let full = r.json()["odata.error"]["message"]["value"].as_str().unwrap_or_default().to_owned();
    full.lines().next().unwrap_or_default().to_owned()
}

/// Asserts `r` is the throttling refusal with `msg`.
fn assert_busy(r: &Resp, msg: &str) {
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.error_code(), "ServerBusy");
    assert_eq!(r.header("x-ms-error-code").as_deref(), Some("ServerBusy"));
    assert_eq!(message(r), msg);
    assert_eq!(r.header("retry-after"), None, "the service sends no Retry-After");
}

/// A change set inserting rows `rks` of partition `pk` into `table`.
fn insert_batch(endpoint: &str, table: &str, pk: &str, rks: impl Iterator<Item = usize>) -> (String, String) {
    let (b, cs) = ("batch_t", "changeset_t");
    let mut body = format!("--{b}\r\nContent-Type: multipart/mixed; boundary={cs}\r\n\r\n");
    for rk in rks {
        let entity = json!({"PartitionKey": pk, "RowKey": format!("{rk:04}")});
        body.push_str(&format!(
            "--{cs}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
             POST {endpoint}/{table} HTTP/1.1\r\nContent-Type: application/json\r\n\
             Accept: application/json;odata=minimalmetadata\r\n\r\n{entity}\r\n"
        ));
    }
    body.push_str(&format!("--{cs}--\r\n--{b}--\r\n"));
    (format!("multipart/mixed; boundary={b}"), body)
}

async fn post_batch(c: &Client, (content_type, body): (String, String)) -> Resp {
    c.send("POST", "/$batch", &[("Content-Type", content_type.as_str())], Some(&body)).await
}

/// Every RowKey of `table` (unfiltered queries pay the account only up front).
async fn row_keys(c: &Client, table: &str) -> Vec<String> {
    let r = c.send("GET", &format!("/{table}()"), &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let rows = r.json()["value"].as_array().cloned().unwrap_or_default();
    rows.iter().map(|e| e["RowKey"].as_str().unwrap_or_default().to_owned()).collect()
}

#[tokio::test]
async fn a_burst_above_the_partition_rate_is_refused_and_writes_nothing() {
    let s = memory_server(&["--partitionRate", "50"]);
    let c = s.client();
    assert_eq!(c.create_table("burst").await.status, 201);
    // within one bucket (100 entities at 50/s) every write passes: none below the rate
    for i in 0..100 {
        let r = c.insert("burst", json!({"PartitionKey": "calm", "RowKey": format!("{i:04}")})).await;
        assert_eq!(r.status, 201, "write {i} of 100: {}", r.body);
    }
    // a burst of 300 into one partition, sent as fast as one client can
    let started = Instant::now();
    let mut written = Vec::new();
    let mut refused = 0;
    for i in 0..300 {
        let rk = format!("{i:04}");
        let r = c.insert("burst", json!({"PartitionKey": "hot", "RowKey": rk})).await;
        match r.status {
            201 => written.push(rk),
            _ => {
                assert_busy(&r, BUSY_PARTITION);
                refused += 1;
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    // every refusal was checked by `assert_busy`: 503, "ServerBusy" in body and header
    assert!(refused > 0, "300 writes in {elapsed:.2}s at 50/s: some must be refused");
    let allowed = 100.0 + 50.0 * elapsed + 1.0;
    assert!((written.len() as f64) <= allowed, "{} written in {elapsed:.2}s", written.len());
    assert!(written.len() >= 100, "the first 100 fit the bucket");
    // another partition is not affected
    let r = c.insert("burst", json!({"PartitionKey": "cold", "RowKey": "1"})).await;
    assert_eq!(r.status, 201);
    // the refused writes wrote nothing: exactly the acknowledged rows are there
    let mut stored = row_keys(&c, "burst").await;
    stored.sort();
    let mut expected: Vec<String> = (0..100).map(|i| format!("{i:04}")).collect();
    expected.extend(written.iter().cloned());
    expected.push("1".into());
    expected.sort();
    assert_eq!(stored, expected);
}

#[tokio::test]
async fn a_full_batch_passes_an_idle_partition_and_the_next_is_refused_whole() {
    let s = memory_server(&["--partitionRate", "50"]);
    let c = s.client();
    assert_eq!(c.create_table("batches").await.status, 201);
    let first = post_batch(&c, insert_batch(&s.endpoint(), "batches", "p", 0..100)).await;
    assert_eq!(first.status, 202, "{}", first.body);
    assert!(!first.body.contains("ServerBusy"));
    let second = post_batch(&c, insert_batch(&s.endpoint(), "batches", "p", 100..110)).await;
    assert_busy(&second, BUSY_PARTITION);
    let stored = row_keys(&c, "batches").await;
    assert_eq!(stored.len(), 100, "nothing of the refused batch");
    assert!(!stored.contains(&"0100".to_owned()));
}

#[tokio::test]
async fn the_account_limit_spans_partitions_with_its_own_message() {
    // set through the environment, as every flag can be
    let s = TestServer::start_with(&["--inMemoryPersistence"], &[("AZTABLE_ACCOUNT_RATE", "30")]);
    let c = s.client();
    assert_eq!(c.create_table("acct").await.status, 201);
    let mut statuses = Vec::new();
    for i in 0..160 {
        let r = c.insert("acct", json!({"PartitionKey": format!("p{i}"), "RowKey": "r"})).await;
        if r.status != 201 {
            assert_busy(&r, BUSY_ACCOUNT);
        }
        statuses.push(r.status);
    }
    // 100 tokens (the floor) minus the Create Table, then about 30 a second
    assert!(statuses[..99].iter().all(|s| *s == 201), "{statuses:?}");
    assert!(statuses.contains(&503), "{statuses:?}");
    // listing tables counts against the account too
    let r = c.send("GET", "/Tables", &[], None).await;
    assert_busy(&r, BUSY_ACCOUNT);
}

#[tokio::test]
async fn a_query_pays_for_what_it_returned_after_the_read() {
    let s = memory_server(&["--partitionRate", "100"]);
    let c = s.client();
    assert_eq!(c.create_table("reads").await.status, 201);
    // drains partition p's bucket (100 at 100/s)
    assert_eq!(post_batch(&c, insert_batch(&s.endpoint(), "reads", "p", 0..100)).await.status, 202);
    // a query that names no partition pays the account up front and is served whole ...
    assert_eq!(row_keys(&c, "reads").await.len(), 100);
    // ... then p is charged its 100 rows: in debt, so 300 ms later (30 tokens of refill,
    // enough without the debt) p's next request is still refused
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_busy(&c.get("reads", "p", "0000").await, BUSY_PARTITION);
    // a query that names p pays p up front, and is refused up front
    let r = c.send("GET", "/reads()?$filter=PartitionKey%20eq%20'p'", &[], None).await;
    assert_busy(&r, BUSY_PARTITION);
    // other partitions are free
    c.get("reads", "q", "0000").await.assert_refused(404, ErrorCode::ResourceNotFound);
}

#[tokio::test]
async fn without_throttle_flags_nothing_is_refused() {
    let s = memory_server(&[]);
    let c = s.client();
    assert_eq!(c.create_table("free").await.status, 201);
    for n in 0..3 {
        let r = post_batch(&c, insert_batch(&s.endpoint(), "free", "p", n * 100..(n + 1) * 100)).await;
        assert_eq!(r.status, 202);
        assert!(!r.body.contains("ServerBusy"));
    }
    for i in 0..250 {
        assert_eq!(c.get("free", "p", &format!("{i:04}")).await.status, 200);
    }
}

/// Sends the same fixed sequence of requests and returns their statuses.
async fn fault_sequence(args: &[&str]) -> Vec<u16> {
    let s = memory_server(args);
    let c = s.client();
    let mut statuses = Vec::new();
    loop {
        let r = c.create_table("faults").await;
        statuses.push(r.status);
        if r.status == 201 {
            break;
        }
        assert_busy(&r, BUSY_PARTITION);
        assert!(statuses.len() < 50);
    }
    for i in 0..60 {
        let r = c.insert("faults", json!({"PartitionKey": "p", "RowKey": format!("{i:04}")})).await;
        if r.status != 201 {
            assert_busy(&r, BUSY_PARTITION);
        }
        statuses.push(r.status);
    }
    // the refused inserts wrote nothing (the query is retried past its own faults)
    let inserted = statuses.iter().rev().take(60).filter(|s| **s == 201).count();
    let stored = loop {
        let r = c.send("GET", "/faults()", &[], None).await;
        if r.status == 200 {
            break r.json()["value"].as_array().map_or(0, Vec::len);
        }
        assert_busy(&r, BUSY_PARTITION);
    };
    assert_eq!(stored, inserted);
    statuses
}

#[tokio::test]
async fn faults_are_deterministic_per_seed() {
    let a = fault_sequence(&["--faultRate", "0.3", "--faultSeed", "7"]).await;
    let b = fault_sequence(&["--faultRate", "0.3", "--faultSeed", "7"]).await;
    let c = fault_sequence(&["--faultRate", "0.3", "--faultSeed", "8"]).await;
    assert_eq!(a, b, "same seed, same statuses");
    assert_ne!(a, c, "another seed, other statuses");
    let busy = a.iter().filter(|s| **s == 503).count();
    assert!((5..40).contains(&busy), "{busy} faults in {} requests at 0.3", a.len());
}

#[tokio::test]
async fn an_after_write_fault_leaves_the_write_applied() {
    let s = memory_server(&["--faultAfterWriteRate", "1", "--faultOps", "InsertEntity,DeleteEntity"]);
    let c = s.client();
    assert_eq!(c.create_table("late").await.status, 201, "Create Table is not among --faultOps");
    let r = c.insert("late", json!({"PartitionKey": "p", "RowKey": "r", "V": 1})).await;
    assert_eq!(r.status, 500, "{}", r.body);
    assert_eq!(r.error_code(), "OperationTimedOut");
    assert_eq!(r.header("x-ms-error-code").as_deref(), Some("OperationTimedOut"));
    assert_eq!(message(&r), "Operation could not be completed within the specified time.");
    let got = c.get("late", "p", "r").await;
    assert_eq!(got.status, 200, "the write was applied");
    assert_eq!(got.json()["V"], 1);
    // a naive retry of the insert now meets its own write; a failed write keeps its error
    assert_eq!(
        c.insert("late", json!({"PartitionKey": "p", "RowKey": "r"})).await.error_code(),
        "EntityAlreadyExists"
    );
    let del = c.send("DELETE", &entity_path("late", "p", "r"), &[("If-Match", "*")], None).await;
    del.assert_refused_with(
        500,
        ErrorCode::OperationTimedOut,
        "Operation could not be completed within the specified time.",
    );
    // the delete was applied
    c.get("late", "p", "r").await.assert_refused(404, ErrorCode::ResourceNotFound);
}

#[tokio::test]
async fn fault_ops_and_tables_narrow_where_faults_fire() {
    let s = memory_server(&[
        "--faultRate",
        "1",
        "--faultOps",
        "InsertEntity,Batch,CreateTable",
        "--faultTables",
        "orders",
    ]);
    let c = s.client();
    assert_eq!(c.create_table("people").await.status, 201);
    assert_busy(&c.create_table("orders").await, BUSY_PARTITION);
    assert_busy(&c.create_table("Orders").await, BUSY_PARTITION);
    assert_eq!(c.insert("people", json!({"PartitionKey": "p", "RowKey": "r"})).await.status, 201);
    assert_eq!(post_batch(&c, insert_batch(&s.endpoint(), "people", "p", 0..2)).await.status, 202);
    let r = post_batch(&c, insert_batch(&s.endpoint(), "orders", "p", 0..2)).await;
    assert_busy(&r, BUSY_PARTITION);
    // operations outside --faultOps are served (orders does not exist: 404, not 503)
    c.send("GET", "/orders()", &[], None).await.assert_refused(404, ErrorCode::TableNotFound);
    assert_eq!(c.send("GET", "/Tables", &[], None).await.status, 200);
}

#[tokio::test]
async fn faults_never_hit_the_service_level_and_preflight_requests() {
    let s = memory_server(&["--faultRate", "1"]);
    let c = s.client();
    assert_busy(&c.create_table("t").await, BUSY_PARTITION);
    assert_busy(&c.send("GET", "/Tables", &[], None).await, BUSY_PARTITION);
    assert_eq!(c.send("GET", "/?restype=service&comp=properties", &[], None).await.status, 200);
    assert_eq!(c.send("GET", "/?restype=service&comp=stats", &[], None).await.status, 200);
    let preflight = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, format!("{}/t", s.endpoint()))
        .header("Origin", "http://example.com")
        .header("Access-Control-Request-Method", "GET")
        .send()
        .await
        .expect("preflight");
    assert_ne!(preflight.status().as_u16(), 503);
}

#[test]
fn bad_fault_flags_stop_the_server_with_the_reason() {
    for (args, expected) in [
        (&["--faultRate", "1.5"][..], "--faultRate: 1.5 is not a fraction between 0 and 1"),
        (&["--faultAfterWriteRate=-1"][..], "--faultAfterWriteRate: -1 is not a fraction"),
        (&["--faultRate", "0.1", "--faultOps", "InsertEntity,Upsert"][..], "'Upsert' is not an operation"),
        (&["--faultOps", "InsertEntity"][..], "give one of them"),
        (&["--partitionRate", "0"][..], "--partitionRate"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_aztable"))
            .args(["--inMemoryPersistence", "--tablePort", "0"])
            .args(args)
            .output()
            .expect("run aztable");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}
