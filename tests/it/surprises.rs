//! Production's surprises on demand, black-box: `--tableDeleteDelay` (409
//! TableBeingDeleted after Delete Table), `--shortPages` (pages that end early, every row
//! still once) and `--clockSkew` (Timestamps, Date and the SharedKey date check follow
//! the moved clock); and that each is off by default.

use crate::common::{sign, Client, TestServer, ACCOUNT, KEY};
use serde_json::{json, Value};
use std::time::Duration;

fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

#[tokio::test]
async fn create_table_during_the_delete_delay_is_table_being_deleted() {
    let s = TestServer::start_with(&["--inMemoryPersistence", "--tableDeleteDelay", "2"], &[]);
    let c = s.client();
    assert_eq!(c.create_table("gone").await.status, 201);
    assert_eq!(c.send("DELETE", "/Tables('gone')", &[], None).await.status, 204);
    let r = c.create_table("GONE").await;
    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(r.header("x-ms-error-code").as_deref(), Some("TableBeingDeleted"));
    let err = &r.json()["odata.error"];
    assert_eq!(err["code"], "TableBeingDeleted");
    assert!(err["message"]["value"]
        .as_str()
        .unwrap_or("")
        .starts_with("The specified table is being deleted."));
    assert_eq!(c.create_table("other").await.status, 201, "other names are free");
    // after the delay the name is free again
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(c.create_table("gone").await.status, 201);
    // the admin reset leaves no delay behind
    assert_eq!(c.send("DELETE", "/Tables('gone')", &[], None).await.status, 204);
    let reset = reqwest::Client::new()
        .delete(format!("http://127.0.0.1:{}/_aztable/data", s.port))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), 200);
    assert_eq!(c.create_table("gone").await.status, 201);
}

#[tokio::test]
async fn without_the_flags_there_is_no_delay_no_short_page_and_no_skew() {
    let s = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    let c = s.client();
    assert_eq!(c.create_table("plain").await.status, 201);
    assert_eq!(c.send("DELETE", "/Tables('plain')", &[], None).await.status, 204);
    assert_eq!(c.create_table("plain").await.status, 201, "recreated at once");
    for i in 0..6 {
        let pk = if i < 3 { "a" } else { "b" };
        assert_eq!(c.insert("plain", json!({"PartitionKey": pk, "RowKey": i.to_string()})).await.status, 201);
    }
    let r = c.send("GET", "/plain()", &[], None).await;
    assert_eq!(r.json()["value"].as_array().map(Vec::len), Some(6));
    assert_eq!(r.header("x-ms-continuation-nextpartitionkey"), None);
    let date = chrono::DateTime::parse_from_rfc2822(&r.header("date").unwrap()).unwrap();
    let off = (date.timestamp() - chrono::Utc::now().timestamp()).abs();
    assert!(off < 120, "the Date is the host's, not {off} s off");
}

/// Every row of `table` through `query` (a query string without continuation), page by
/// page; returns the pages' rows as (PartitionKey, RowKey).
async fn pages(c: &Client, table: &str, query: &str) -> Vec<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut next: Option<(String, String)> = None;
    loop {
        let mut path = format!("/{table}()?{query}");
        if let Some((pk, rk)) = &next {
            path.push_str(&format!("&NextPartitionKey={}&NextRowKey={}", enc(pk), enc(rk)));
        }
        let r = c.send("GET", &path, &[], None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let rows: Vec<(String, String)> = r.json()["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (e["PartitionKey"].as_str().unwrap().to_owned(), e["RowKey"].as_str().unwrap().to_owned())
            })
            .collect();
        out.push(rows);
        match (r.header("x-ms-continuation-nextpartitionkey"), r.header("x-ms-continuation-nextrowkey")) {
            (Some(pk), Some(rk)) => next = Some((pk, rk)),
            _ => return out,
        }
        assert!(out.len() < 500, "the pages never end");
    }
}

#[tokio::test]
async fn short_pages_end_early_and_every_row_comes_exactly_once() {
    let s =
        TestServer::start_with(&["--inMemoryPersistence", "--shortPages", "1", "--shortPagesSeed", "5"], &[]);
    let c = s.client();
    assert_eq!(c.create_table("paged").await.status, 201);
    let mut all = Vec::new();
    for pk in ["a", "b", "c"] {
        for i in 0..12 {
            let rk = format!("{i:02}");
            assert_eq!(c.insert("paged", json!({"PartitionKey": pk, "RowKey": rk})).await.status, 201);
            all.push((pk.to_owned(), rk));
        }
    }
    // the whole table: each page ends at the first partition boundary
    let got = pages(&c, "paged", "").await;
    assert_eq!((got[0].len(), got[1].len()), (12, 12), "{got:?}");
    assert!(got.len() > 3, "the last partition's page is cut too: {got:?}");
    assert_eq!(got.concat(), all);
    // one partition, $top=5: pages shorter than 5 at random, the rows once each
    let got = pages(&c, "paged", &format!("$filter={}&$top=5", enc("PartitionKey eq 'b'"))).await;
    let rows = got.concat();
    assert_eq!(rows, all[12..24].to_vec(), "pages: {got:?}");
    assert!(got.iter().all(|p| p.len() < 5), "every page of 2 or more rows is cut: {got:?}");
    assert!(got.len() > 3, "{got:?}");
}

#[tokio::test]
async fn a_fraction_of_short_pages_still_returns_every_row_once() {
    let s = TestServer::start_with(
        &["--inMemoryPersistence", "--shortPages", "0.5", "--shortPagesSeed", "11"],
        &[],
    );
    let c = s.client();
    assert_eq!(c.create_table("half").await.status, 201);
    for i in 0..40 {
        let row = json!({"PartitionKey": format!("p{}", i % 4), "RowKey": format!("{i:03}")});
        assert_eq!(c.insert("half", row).await.status, 201);
    }
    let got = pages(&c, "half", "$top=7").await;
    let mut rows = got.concat();
    assert_eq!(rows.len(), 40, "{got:?}");
    rows.dedup();
    assert_eq!(rows.len(), 40, "no row twice: {got:?}");
    let (_, before_last) = got.split_last().unwrap();
    assert!(before_last.iter().any(|p| p.len() < 7), "some page before the last ended early: {got:?}");
    assert!(before_last.iter().any(|p| p.len() == 7), "and some did not: {got:?}");
}

/// A request signed with `date` as its x-ms-date.
async fn signed_at(port: u16, method: &str, path: &str, date: &str, body: Option<&str>) -> reqwest::Response {
    let content_type = if body.is_some() { "application/json" } else { "" };
    let sts = format!("{method}\n\n{content_type}\n{date}\n/{ACCOUNT}{path}");
    let mut req = reqwest::Client::new()
        .request(
            reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
            format!("http://127.0.0.1:{port}/{ACCOUNT}{path}"),
        )
        .header("x-ms-date", date)
        .header("x-ms-version", "2019-02-02")
        .header("Accept", "application/json;odata=nometadata")
        .header("Authorization", format!("SharedKey {ACCOUNT}:{}", sign(KEY, &sts)));
    if let Some(b) = body {
        req = req.header("Content-Type", content_type).body(b.to_owned());
    }
    req.send().await.unwrap()
}

#[tokio::test]
async fn a_skewed_clock_moves_timestamps_dates_and_the_date_check() {
    let s = TestServer::start_with(&["--inMemoryPersistence", "--clockSkew", "7200"], &[]);
    let host_now = chrono::Utc::now();
    let http_date = |t: chrono::DateTime<chrono::Utc>| t.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    // the client's own clock is two hours behind the server's: refused
    let table = Some(r#"{"TableName":"skewed"}"#);
    let r = signed_at(s.port, "POST", "/Tables", &http_date(host_now), table).await;
    assert_eq!(r.status(), 403);
    assert_eq!(r.headers()["x-ms-error-code"], "AuthenticationFailed");
    // dated by the server's clock: served, with the server's Date and Timestamp
    let date = http_date(host_now + chrono::TimeDelta::seconds(7_200));
    assert_eq!(signed_at(s.port, "POST", "/Tables", &date, table).await.status(), 201);
    let r = signed_at(s.port, "POST", "/skewed", &date, Some(r#"{"PartitionKey":"p","RowKey":"r"}"#)).await;
    assert_eq!(r.status(), 201);
    let sent = chrono::DateTime::parse_from_rfc2822(r.headers()["date"].to_str().unwrap()).unwrap();
    let body: Value = r.json().await.unwrap();
    let stamp = chrono::DateTime::parse_from_rfc3339(body["Timestamp"].as_str().unwrap()).unwrap();
    // the clock runs two hours ahead (give or take the test's own minutes)
    for (what, at) in [("Date", sent.timestamp()), ("Timestamp", stamp.timestamp())] {
        let ahead = at - host_now.timestamp();
        assert!((7_000..7_600).contains(&ahead), "{what} is {ahead} s ahead of the host");
    }
}
