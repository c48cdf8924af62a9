//! The partition advisor as a CI gate, black-box: `--insightFailOn` (exit status 3 at
//! SIGTERM with each finding named on stderr, 0 without), `GET`/`DELETE
//! /_aztable/insight/findings` (200 without gating findings, 409 with), the exemptions
//! (`--insightExemptTables`, `x-aztable-expect-scan: 1`), `--insightReport` (at shutdown,
//! on SIGUSR1, on `POST /_aztable/insight/report`); the clean slate between tests
//! (`DELETE /_aztable/data`, `aztable reset`) and `--seed`.

use crate::common::{spawn_piped, Client, TestServer, ACCOUNT, KEY};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// A server whose stderr and exit status the test reads.
struct Gated {
    child: Child,
    port: u16,
    stderr: std::thread::JoinHandle<String>,
}

impl Gated {
    fn start(args: &[&str]) -> Gated {
        let all: Vec<&str> = ["--inMemoryPersistence", "-s"].iter().chain(args).copied().collect();
        let mut child = spawn_piped(&all);
        let stdout = child.stdout.take().expect("stdout");
        let mut err = child.stderr.take().expect("stderr");
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            text
        });
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(i) = line.find("successfully listening at http://") {
                    if let Some(p) = line[i..].rsplit(':').next().and_then(|p| p.trim().parse::<u16>().ok()) {
                        let _ = tx.send(p);
                    }
                }
            }
        });
        let port = rx.recv_timeout(Duration::from_secs(60)).expect("server did not report its port");
        Gated { child, port, stderr }
    }

    fn client(&self) -> Client {
        Client {
            http: reqwest::Client::new(),
            endpoint: format!("http://127.0.0.1:{}/{ACCOUNT}", self.port),
            account: ACCOUNT.into(),
            key: KEY.into(),
        }
    }

    /// SIGTERM; the exit code and everything printed on stderr.
    fn stop(mut self) -> (Option<i32>, String) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let status = self.child.wait().expect("wait");
        (status.code(), self.stderr.join().expect("stderr reader"))
    }
}

/// An admin request without credentials: status and body.
async fn admin(port: u16, method: &str, path: &str) -> (u16, String) {
    let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let resp = reqwest::Client::new()
        .request(m, format!("http://127.0.0.1:{port}{path}"))
        .send()
        .await
        .expect("admin");
    (resp.status().as_u16(), resp.text().await.expect("body"))
}

async fn findings(port: u16, query: &str) -> (u16, Value) {
    let (status, body) = admin(port, "GET", &format!("/_aztable/insight/findings{query}")).await;
    (status, serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}")))
}

/// A table with a few entities in two partitions.
async fn people(c: &Client, table: &str) {
    assert_eq!(c.create_table(table).await.status, 201);
    for (pk, rk) in [("a", "1"), ("a", "2"), ("b", "1")] {
        let r = c.insert(table, json!({"PartitionKey": pk, "RowKey": rk, "Name": format!("{pk}{rk}")})).await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
}

async fn query(c: &Client, table: &str, filter: &str, headers: &[(&str, &str)]) -> Value {
    let r = c.send("GET", &format!("/{table}()?$filter={}", enc(filter)), headers, None).await;
    assert_eq!(r.status, 200, "{filter}: {}", r.body);
    r.json()
}

#[tokio::test]
async fn a_full_scan_fails_the_exit_status_and_is_named_with_its_filter() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("insight.json");
    let s = Gated::start(&["--insightFailOn", "fullScan", "--insightReport", report.to_str().unwrap()]);
    let c = s.client();
    people(&c, "orders").await;
    let (status, body) = findings(s.port, "").await;
    assert_eq!((status, &body["findings"]), (200, &json!([])), "no finding yet: {body}");
    let v = query(&c, "orders", "Name eq 'a2'", &[]).await;
    assert_eq!(v["value"].as_array().map(Vec::len), Some(1));
    let (status, body) = findings(s.port, "").await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["gating_kinds"], json!(["fullScan"]));
    let f = &body["findings"][0];
    assert_eq!(
        (f["kind"].as_str(), f["table"].as_str(), f["subject"].as_str()),
        (Some("fullScan"), Some("orders"), Some("Name eq 'a2'"))
    );
    assert_eq!((f["count"].as_u64(), f["pending"].as_u64()), (Some(1), Some(1)));
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(3), "stderr: {stderr}");
    assert!(stderr.contains("insight gate failed: 1 finding(s) of --insightFailOn fullScan"), "{stderr}");
    assert!(
        stderr.contains("fullScan: table devstoreaccount1/orders: $filter=\"Name eq 'a2'\", 1 page(s)"),
        "{stderr}"
    );
    // the report written at shutdown holds the finding too
    let file: Value = serde_json::from_slice(&std::fs::read(&report).expect("report at shutdown")).unwrap();
    assert_eq!(file["gate_findings"][0]["subject"], "Name eq 'a2'");
    assert_eq!(file["tables"][0]["table"], "orders");
}

#[tokio::test]
async fn partition_queries_exempt_tables_and_marked_scans_pass_the_gate() {
    let s = Gated::start(&["--insightFailOn", "fullScan", "--insightExemptTables", "AUDIT,other"]);
    let c = s.client();
    people(&c, "orders").await;
    people(&c, "audit").await;
    let v = query(&c, "orders", "PartitionKey eq 'a' and Name eq 'a2'", &[]).await;
    assert_eq!(v["value"].as_array().map(Vec::len), Some(1));
    assert_eq!(c.get("orders", "b", "1").await.status, 200);
    // a scan of an exempt table, and one the test marked as expected
    query(&c, "audit", "Name eq 'x'", &[]).await;
    let v = query(&c, "orders", "Name ne 'x'", &[("x-aztable-expect-scan", "1")]).await;
    assert_eq!(v["value"].as_array().map(Vec::len), Some(3));
    let (status, body) = findings(s.port, "?all=true").await;
    assert_eq!((status, &body["findings"]), (200, &json!([])), "{body}");
    // the marker must say 1
    query(&c, "orders", "Name ne 'y'", &[("x-aztable-expect-scan", "0")]).await;
    let (status, body) = findings(s.port, "").await;
    assert_eq!((status, body["findings"][0]["subject"].as_str()), (409, Some("Name ne 'y'")));
    // acknowledged: the endpoint is clear, the exit status still counts it
    assert_eq!(admin(s.port, "DELETE", "/_aztable/insight/findings").await.0, 204);
    assert_eq!(findings(s.port, "").await.0, 200);
    assert_eq!(findings(s.port, "?all=true").await.0, 409);
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(3), "{stderr}");
}

#[tokio::test]
async fn a_clean_run_exits_zero_and_says_nothing_on_stderr() {
    let s = Gated::start(&["--insightFailOn", "fullScan,hotPartition,appendOnly"]);
    let c = s.client();
    people(&c, "orders").await;
    query(&c, "orders", "PartitionKey eq 'b'", &[]).await;
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("insight gate"), "{stderr}");
}

#[tokio::test]
async fn hot_partitions_and_append_only_keys_gate_when_asked_for() {
    let s = Gated::start(&["--insightFailOn", "hotPartition,appendOnly"]);
    let c = s.client();
    assert_eq!(c.create_table("events").await.status, 201);
    // a PartitionKey that only ever increases (a timestamp)
    for i in 0..100u64 {
        let pk = format!("2024-05-01T12:{:02}:{:02}", i / 60, i % 60);
        assert_eq!(c.insert("events", json!({"PartitionKey": pk, "RowKey": "0"})).await.status, 201);
    }
    assert_eq!(c.create_table("hot").await.status, 201);
    for i in 0..100u64 {
        let rk = format!("{:08x}", (i * 2_654_435_761) % 4_294_967_291);
        assert_eq!(c.insert("hot", json!({"PartitionKey": "p", "RowKey": rk})).await.status, 201);
    }
    // 40 reads of the whole partition: 4,000 entities, far over 2,000 in some second
    for _ in 0..40 {
        let v = query(&c, "hot", "PartitionKey eq 'p'", &[]).await;
        assert_eq!(v["value"].as_array().map(Vec::len), Some(100));
    }
    let (status, body) = findings(s.port, "").await;
    assert_eq!(status, 409, "{body}");
    let named: Vec<(String, String, String)> = body["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].to_string(), f["table"].to_string(), f["subject"].to_string()))
        .collect();
    let expect = |k: &str, t: &str, s: &str| (format!("\"{k}\""), format!("\"{t}\""), format!("\"{s}\""));
    assert!(named.contains(&expect("hotPartition", "hot", "p")), "{body}");
    assert!(named.contains(&expect("appendOnly", "events", "PartitionKey")), "{body}");
    assert_eq!(named.len(), 2, "no other finding: {body}");
    // kinds chosen per request
    assert_eq!(findings(s.port, "?kinds=fullScan").await.0, 200);
    assert_eq!(admin(s.port, "GET", "/_aztable/insight/findings?kinds=slowness").await.0, 400);
    let (code, stderr) = s.stop();
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("hotPartition: table devstoreaccount1/hot: partition \"p\", peak "), "{stderr}");
    assert!(
        stderr.contains("appendOnly: table devstoreaccount1/events: PartitionKey append-only"),
        "{stderr}"
    );
}

#[tokio::test]
async fn findings_without_fail_on_cover_every_kind_and_methods_are_checked() {
    let mut s = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    let c = s.client();
    people(&c, "orders").await;
    query(&c, "orders", "Name eq 'a1'", &[]).await;
    let (status, body) = findings(s.port, "").await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["gating_kinds"], json!(["fullScan", "hotPartition", "appendOnly"]));
    assert_eq!(admin(s.port, "PUT", "/_aztable/insight/findings").await.0, 405);
    assert_eq!(admin(s.port, "GET", "/_aztable/insight/report").await.0, 405);
    let (status, body) = admin(s.port, "POST", "/_aztable/insight/report").await;
    assert_eq!(status, 404, "no --insightReport: {body}");
    assert!(s.terminate(), "no --insightFailOn: a finding does not fail the exit status");
}

#[tokio::test]
async fn the_report_is_written_on_sigusr1_and_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("out/report.json");
    let s =
        TestServer::start_with(&["--inMemoryPersistence", "--insightReport", report.to_str().unwrap()], &[]);
    let c = s.client();
    people(&c, "orders").await;
    query(&c, "orders", "Name eq 'b1'", &[]).await;
    assert!(!report.exists());
    let _ = Command::new("kill").args(["-USR1", &s.pid().to_string()]).status();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !report.exists() {
        assert!(Instant::now() < deadline, "no report after SIGUSR1");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let file: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(file["gate_findings"][0]["subject"], "Name eq 'b1'");
    query(&c, "orders", "Name eq 'b2'", &[]).await;
    let (status, body) = admin(s.port, "POST", "/_aztable/insight/report").await;
    assert_eq!(status, 200, "{body}");
    let file: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let subjects: Vec<&str> =
        file["gate_findings"].as_array().unwrap().iter().filter_map(|f| f["subject"].as_str()).collect();
    assert_eq!(subjects, ["Name eq 'b1'", "Name eq 'b2'"]);
}

#[tokio::test]
async fn reset_deletes_every_table_or_one_accounts_and_the_cli_does_too() {
    // AZURITE_ACCOUNTS replaces the development account unless it names it too
    let accounts = format!("{ACCOUNT}:{KEY};second:{KEY}");
    let s = TestServer::start_with(&["--inMemoryPersistence"], &[("AZURITE_ACCOUNTS", &accounts)]);
    let c = s.client();
    let second = Client {
        endpoint: format!("http://127.0.0.1:{}/second", s.port),
        account: "second".into(),
        ..s.client()
    };
    people(&c, "orders").await;
    people(&second, "kept").await;
    people(&second, "gone").await;
    let (status, body) = admin(s.port, "DELETE", "/_aztable/data?account=second").await;
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((v["accounts"].clone(), v["tables_deleted"].as_u64()), (json!(["second"]), Some(2)));
    assert_eq!(second.send("GET", "/kept()", &[], None).await.status, 404);
    assert_eq!(c.send("GET", "/orders()", &[], None).await.status, 200, "another account's tables stay");
    assert_eq!(admin(s.port, "DELETE", "/_aztable/data?account=nobody").await.0, 404);
    assert_eq!(admin(s.port, "GET", "/_aztable/data").await.0, 405);
    let (status, body) = admin(s.port, "DELETE", "/_aztable/data").await;
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["tables_deleted"].as_u64(), Some(1));
    let tables = c.send("GET", "/Tables", &[], None).await;
    assert_eq!(tables.json()["value"], json!([]));
    // the same name is free at once (no --tableDeleteDelay)
    people(&c, "orders").await;
    let out = Command::new(env!("CARGO_BIN_EXE_aztable"))
        .args(["reset", "--url", &format!("http://127.0.0.1:{}", s.port)])
        .output()
        .expect("aztable reset");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout} {}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("reset: 1 table(s) deleted"), "{stdout}");
    assert_eq!(c.send("GET", "/orders()", &[], None).await.status, 404);
    let out = Command::new(env!("CARGO_BIN_EXE_aztable"))
        .args(["reset", "--url", &format!("http://127.0.0.1:{}", s.port), "--account", "nobody"])
        .output()
        .expect("aztable reset");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("404"), "{out:?}");
}

#[tokio::test]
async fn beyond_loopback_the_reset_and_the_findings_need_an_account_key() {
    let s = TestServer::start_raw(&["--tableHost", "0.0.0.0", "--tablePort", "0", "--inMemoryPersistence"]);
    people(&s.client(), "orders").await;
    assert_eq!(admin(s.port, "DELETE", "/_aztable/data").await.0, 403);
    assert_eq!(admin(s.port, "GET", "/_aztable/insight/findings").await.0, 403);
    let keyed = |method: &str, path: &str| {
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        reqwest::Client::new()
            .request(m, format!("http://127.0.0.1:{}{path}", s.port))
            .header("x-aztable-key", KEY)
    };
    assert_eq!(keyed("GET", "/_aztable/insight/findings").send().await.unwrap().status(), 200);
    assert_eq!(keyed("DELETE", "/_aztable/data").send().await.unwrap().status(), 200);
    let wrong = reqwest::Client::new()
        .delete(format!("http://127.0.0.1:{}/_aztable/data", s.port))
        .header("x-aztable-key", "bm90IHRoZSBrZXk=")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 403);
}

/// An export file: one table, three entities (one with a Timestamp to keep).
fn export_file(dir: &std::path::Path, name: &str, table: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let lines = [
        json!({"TableName": table}),
        json!({"PartitionKey": "p", "RowKey": "1", "Timestamp": "2024-05-01T10:00:00Z", "N": 1}),
        json!({"PartitionKey": "p", "RowKey": "2", "N": 2}),
        json!({"PartitionKey": "q", "RowKey": "1", "N": 3}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn a_seed_file_or_directory_is_there_before_the_first_request() {
    let dir = tempfile::tempdir().unwrap();
    let file = export_file(dir.path(), "a.jsonl", "seeded");
    let s = TestServer::start_with(&["--inMemoryPersistence", "--seed", file.to_str().unwrap()], &[]);
    let c = s.client();
    let r = c.get("seeded", "p", "1").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["Timestamp"], "2024-05-01T10:00:00.0000000Z", "the exported Timestamp is kept");
    let all = c.send("GET", "/seeded()", &[], None).await.json();
    assert_eq!(all["value"].as_array().map(Vec::len), Some(3));
    drop(s);
    let seeds = dir.path().join("seeds");
    std::fs::create_dir(&seeds).unwrap();
    export_file(&seeds, "1.jsonl", "first");
    export_file(&seeds, "2.jsonl", "second");
    let s = TestServer::start_with(&["--inMemoryPersistence", "--seed", seeds.to_str().unwrap()], &[]);
    let tables = s.client().send("GET", "/Tables", &[], None).await.json();
    let names: Vec<&str> =
        tables["value"].as_array().unwrap().iter().filter_map(|t| t["TableName"].as_str()).collect();
    assert_eq!(names, ["first", "second"]);
    // the seed is no traffic of the tests: no append-only or other finding
    assert_eq!(findings(s.port, "?all=true").await.0, 200);
}

#[tokio::test]
async fn a_store_with_tables_is_seeded_only_with_seed_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = export_file(dir.path(), "a.jsonl", "seeded");
    let mut s = TestServer::start_on(&data, &[]);
    assert_eq!(s.client().create_table("existing").await.status, 201);
    assert!(s.terminate());
    let (ok, _, stderr) = crate::common::run_to_exit(&[
        "--location".as_ref(),
        data.as_os_str(),
        "--seed".as_ref(),
        file.as_os_str(),
    ]);
    assert!(!ok);
    assert!(
        stderr.contains("--seed: the store holds tables already") && stderr.contains("--seedOverwrite"),
        "{stderr}"
    );
    let s = TestServer::start_on(&data, &["--seed", file.to_str().unwrap(), "--seedOverwrite"]);
    let c = s.client();
    assert_eq!(c.get("seeded", "q", "1").await.status, 200);
    assert_eq!(c.send("GET", "/existing()", &[], None).await.status, 200);
    // a broken seed file stops the start with its line
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"TableName\":\"fine\"}\nnot json\n").unwrap();
    let (ok, _, stderr) =
        crate::common::run_to_exit(&["--inMemoryPersistence".as_ref(), "--seed".as_ref(), bad.as_os_str()]);
    assert!(!ok && stderr.contains("bad.jsonl line 2"), "{stderr}");
}

#[tokio::test]
async fn with_the_advisor_off_the_reset_serves_and_the_gate_flags_are_refused() {
    let s = TestServer::start_with(&["--inMemoryPersistence", "--insight", "off"], &[]);
    people(&s.client(), "orders").await;
    assert_eq!(admin(s.port, "GET", "/_aztable/insight/findings").await.0, 404);
    let (status, body) = admin(s.port, "DELETE", "/_aztable/data").await;
    assert_eq!(status, 200, "{body}");
    let (ok, _, stderr) = crate::common::run_to_exit(&[
        "--inMemoryPersistence".as_ref(),
        "--insight".as_ref(),
        "off".as_ref(),
        "--insightFailOn".as_ref(),
        "fullScan".as_ref(),
    ]);
    assert!(!ok && stderr.contains("need the partition advisor"), "{stderr}");
}
