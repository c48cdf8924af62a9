//! The partition advisor, black-box: a workload, then its report at /_aztable/insight
//! (JSON and HTML) and /_aztable/metrics; `--insight off`; the key asked for when the
//! server listens beyond loopback; `--warnFullScan` and the summary at shutdown.

use crate::common::{TestServer, KEY};
use serde_json::{json, Value};

fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// GET of an admin path, without credentials.
async fn admin(s: &TestServer, path: &str, accept: Option<&str>) -> (u16, String, String) {
    let mut req = reqwest::Client::new().get(format!("http://127.0.0.1:{}{path}", s.port));
    if let Some(a) = accept {
        req = req.header("Accept", a);
    }
    let resp = req.send().await.expect("admin request");
    let status = resp.status().as_u16();
    let ct = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    (status, ct, resp.text().await.expect("body"))
}

async fn query(c: &crate::common::Client, table: &str, filter: &str) -> Value {
    let r = c.send("GET", &format!("/{table}()?$filter={}", enc(filter)), &[], None).await;
    assert_eq!(r.status, 200, "{filter}: {}", r.body);
    r.json()
}

/// Inserts, point reads and one query of each kind into two tables.
async fn workload(s: &TestServer) {
    let c = s.client();
    assert_eq!(c.create_table("events").await.status, 201);
    assert_eq!(c.create_table("people").await.status, 201);
    // events: a new PartitionKey per entity, ever increasing (the append-only pattern)
    for i in 0..100u64 {
        let pk = format!("2024-05-01T12:{:02}:{:02}", i / 60, i % 60);
        assert_eq!(c.insert("events", json!({"PartitionKey": pk, "RowKey": "0", "N": i})).await.status, 201);
    }
    // people: three partitions, RowKeys in scrambled order
    for i in 0..60u64 {
        let rk = format!("{:08x}", (i * 2_654_435_761) % 4_294_967_291);
        let pk = format!("p{}", i % 3);
        assert_eq!(
            c.insert("people", json!({"PartitionKey": pk, "RowKey": rk, "Name": "x"})).await.status,
            201
        );
    }
    for _ in 0..5 {
        assert_eq!(c.get("people", "p0", "00000000").await.status, 200);
    }
    let v = query(&c, "people", "PartitionKey eq 'p0' and RowKey eq '00000000'").await;
    assert_eq!(v["value"].as_array().map(Vec::len), Some(1));
    let v = query(&c, "people", "PartitionKey eq 'p1' and RowKey ge '0'").await;
    assert_eq!(v["value"].as_array().map(Vec::len), Some(20));
    let v = query(&c, "people", "PartitionKey ge 'p0' and PartitionKey lt 'p2'").await;
    assert_eq!(v["value"].as_array().map(Vec::len), Some(40));
    for _ in 0..2 {
        let v = query(&c, "people", "Name eq 'nobody'").await;
        assert_eq!(v["value"].as_array().map(Vec::len), Some(0));
    }
}

fn table<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tables"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["table"] == name))
        .unwrap_or_else(|| panic!("no table {name} in {report}"))
}

#[tokio::test]
async fn the_json_report_counts_the_workload() {
    let s = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    workload(&s).await;
    let (status, ct, body) = admin(&s, "/_aztable/insight", Some("application/json")).await;
    assert_eq!((status, ct.as_str()), (200, "application/json"), "{body}");
    let report: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(report["target_entities_per_second"], 2000);

    let people = table(&report, "people");
    assert_eq!(people["account"], "devstoreaccount1");
    let q = &people["queries"];
    assert_eq!(
        (&q["point"], &q["row_range"], &q["partition_range"], &q["full_scan"]),
        (&json!(6), &json!(1), &json!(1), &json!(2)),
        "{q}"
    );
    assert_eq!(people["examined"]["full_scan"], 120, "two scans of 60 entities");
    assert_eq!(people["returned"]["full_scan"], 0);
    assert_eq!(people["examined"]["row_range"], 20);
    assert_eq!(people["entities_written"], 60);
    // scans worst first: the full scan that returned nothing, then the others
    let scans = people["scans"].as_array().expect("scans");
    assert_eq!(scans.len(), 3, "{scans:?}");
    assert_eq!(scans[0]["filter"], "Name eq 'nobody'");
    assert_eq!(
        (&scans[0]["kind"], &scans[0]["count"], &scans[0]["examined_per_returned"]),
        (&json!("full_scan"), &json!(2), &json!(120.0))
    );
    assert_eq!(scans[1]["examined_per_returned"], 1.0);
    // partitions: each of p0..p2 got its 20 inserts; p0 its reads too
    let parts = people["partitions"].as_array().expect("partitions");
    assert_eq!(parts.len(), 3);
    let p0 = parts.iter().find(|p| p["partition_key"] == "p0").expect("p0");
    assert_eq!(p0["entities_written"], 20);
    assert_eq!(p0["entities_read"], 5 + 1 + 20, "point reads, the point query, the partition range scan");
    assert_eq!(p0["per_second"].as_array().map(Vec::len), Some(300));
    assert!(p0["peak_per_second"].as_u64().is_some_and(|n| n >= 1));
    assert_eq!(people["key_patterns"], json!([]), "scrambled RowKeys are no pattern");
    assert!(people["findings"].as_array().expect("findings").iter().any(|f| f["kind"] == "full-scan"));

    let events = table(&report, "events");
    assert_eq!((&events["entities_written"], &events["inserts"]), (&json!(100), &json!(100)));
    let patterns = events["key_patterns"].as_array().expect("patterns");
    assert_eq!(patterns.len(), 1, "{patterns:?}");
    assert_eq!(
        (&patterns[0]["key"], &patterns[0]["pattern"]),
        (&json!("PartitionKey"), &json!("append-only"))
    );
    assert_eq!(patterns[0]["increasing"], 99);
    assert!(patterns[0]["advice"].as_str().is_some_and(|a| a.contains("bucket")));
    assert_eq!(events["partitions"].as_array().map(Vec::len), Some(100));
}

/// The admin pages and answers are never kept by a cache (`no-store`, not the service's
/// `no-cache`); the service's own answers keep `no-cache`.
#[tokio::test]
async fn admin_answers_are_not_stored() {
    let s = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    let cache_control = |path: &'static str| async move {
        let resp = reqwest::Client::new()
            .get(format!("http://127.0.0.1:{}{path}", s.port))
            .send()
            .await
            .expect("admin request");
        let v = resp.headers().get("cache-control").and_then(|v| v.to_str().ok()).map(str::to_owned);
        (resp.status().as_u16(), v)
    };
    for path in [
        "/_aztable/insight",
        "/_aztable/insight?format=json",
        "/_aztable/metrics",
        "/_aztable/insight/findings",
        "/_aztable/browse",
    ] {
        assert_eq!(cache_control(path).await, (200, Some("no-store".to_owned())), "{path}");
    }
    let c = s.client();
    let r = c.send("GET", "/Tables", &[], None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("cache-control").as_deref(), Some("no-cache"));
}

#[tokio::test]
async fn html_by_default_and_metrics_in_prometheus_text() {
    let s = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    workload(&s).await;
    let (status, ct, html) = admin(&s, "/_aztable/insight", None).await;
    assert_eq!((status, ct.as_str()), (200, "text/html; charset=utf-8"));
    assert!(html.starts_with("<!doctype html>"));
    for needle in ["events", "people", "class=\"heatstrip\"", "Name eq &#39;nobody&#39;", "append only"] {
        assert!(html.contains(needle), "{needle} missing from the page");
    }
    assert!(!html.contains("<script") && !html.contains("src=\"http"), "self-contained, no script");
    let (_, _, json_too) = admin(&s, "/_aztable/insight?format=json", None).await;
    assert!(serde_json::from_str::<Value>(&json_too).is_ok());

    let (status, ct, text) = admin(&s, "/_aztable/metrics", None).await;
    assert_eq!(status, 200);
    assert!(ct.starts_with("text/plain; version=0.0.4"), "{ct}");
    let mut samples = std::collections::HashMap::new();
    for line in text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("no value: {line}"));
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("bad value: {line}"));
        let name_end = series.find('{').unwrap_or(series.len());
        let name = &series[..name_end];
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "bad name: {line}"
        );
        if name_end < series.len() {
            assert!(series.ends_with('}'), "labels: {line}");
            let labels = &series[name_end + 1..series.len() - 1];
            for pair in labels.split("\",").filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once("=\"").unwrap_or_else(|| panic!("label {pair}: {line}"));
                assert!(k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{line}");
                assert!(!v.is_empty(), "{line}");
            }
        }
        samples.insert(series.to_owned(), value);
    }
    let get = |k: &str| samples.get(k).copied().unwrap_or_else(|| panic!("no sample {k}"));
    let people = "account=\"devstoreaccount1\",table=\"people\"";
    assert_eq!(get(&format!("aztable_queries_total{{{people},kind=\"full_scan\"}}")), 2.0);
    assert_eq!(get(&format!("aztable_queries_total{{{people},kind=\"point\"}}")), 6.0);
    assert_eq!(get(&format!("aztable_scan_examined_entities_total{{{people},kind=\"full_scan\"}}")), 120.0);
    assert_eq!(get("aztable_entities_written_total{account=\"devstoreaccount1\",table=\"events\"}"), 100.0);
    assert_eq!(
        get("aztable_key_pattern{account=\"devstoreaccount1\",table=\"events\",key=\"PartitionKey\",pattern=\"append-only\"}"),
        1.0
    );
    assert_eq!(get(&format!("aztable_partition_entities_written_total{{{people},partition=\"p1\"}}")), 20.0);

    let (status, _, _) = admin(&s, "/_aztable/nothing", None).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn insight_off_answers_404() {
    let s = TestServer::start_with(&["--inMemoryPersistence", "--insight", "off"], &[]);
    let c = s.client();
    assert_eq!(c.create_table("quiet").await.status, 201);
    for path in ["/_aztable/insight", "/_aztable/metrics"] {
        assert_eq!(admin(&s, path, None).await.0, 404, "{path}");
    }
    // the tables themselves are served as ever
    assert_eq!(c.insert("quiet", json!({"PartitionKey": "p", "RowKey": "r"})).await.status, 201);
}

#[tokio::test]
async fn beyond_loopback_the_pages_need_an_account_key() {
    let s = TestServer::start_raw(&["--tableHost", "0.0.0.0", "--tablePort", "0", "--inMemoryPersistence"]);
    assert_eq!(admin(&s, "/_aztable/insight", None).await.0, 403);
    assert_eq!(admin(&s, "/_aztable/metrics", None).await.0, 403);
    let wrong = "d3Jvbmc=";
    assert_eq!(admin(&s, &format!("/_aztable/insight?key={wrong}"), None).await.0, 403);
    let (status, ct, _) = admin(&s, &format!("/_aztable/insight?key={}", enc(KEY)), None).await;
    assert_eq!((status, ct.as_str()), (200, "text/html; charset=utf-8"));
    let resp = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{}/_aztable/metrics", s.port))
        .header("x-aztable-key", KEY)
        .send()
        .await
        .expect("metrics");
    assert_eq!(resp.status().as_u16(), 200);
}

#[tokio::test]
async fn full_scans_over_the_threshold_are_logged_and_a_summary_printed_at_shutdown() {
    let mut s = TestServer::start_with(&["--inMemoryPersistence", "--warnFullScan", "30"], &[]);
    workload(&s).await;
    // the two 60-entity scans of `people` are over 30; nothing else is a full scan
    let warned = s.log_lines_at_least("full table scan of people examined 60 entities", 2);
    assert_eq!(warned.len(), 2, "{:?}", s.log_lines("full table scan"));
    assert!(warned[0].contains("Name eq 'nobody'"), "{warned:?}");
    assert!(s.terminate(), "clean exit");
    // the summary's lines, once both awaited ones are read
    s.log_lines_at_least("events: append-only", 1);
    s.log_lines_at_least("devstoreaccount1/people: ", 1);
    let summary = s.log_lines("insight: ");
    assert!(
        summary
            .iter()
            .any(|l| l
                .contains("devstoreaccount1/people: 6 point, 1 row range, 1 partition range, 2 full scan")),
        "{summary:?}"
    );
    assert!(summary.iter().any(|l| l.contains("events: append-only")), "{summary:?}");
}
