//! Scans that use a table's value summary (a filter requiring `P eq 'value'`) answer
//! exactly what the table holds while rows are written between them: every needle
//! written before a query is found, whichever run of rows it lands in, and pages follow
//! continuations to the end.

use crate::common::{entity_path, TestServer};
use serde_json::json;
use std::collections::BTreeSet;

/// Every RowKey the filter `Tag eq '{tag}'` returns, following continuations.
async fn needles(c: &crate::common::Client, table: &str, tag: &str) -> BTreeSet<String> {
    let filter = format!("Tag%20eq%20'{tag}'");
    let mut query = format!("$filter={filter}");
    let mut found = BTreeSet::new();
    for _ in 0..1000 {
        let r = c.send("GET", &format!("/{table}()?{query}"), &[], None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        for e in r.json()["value"].as_array().expect("value") {
            assert_eq!(e["Tag"], tag);
            assert!(found.insert(e["RowKey"].as_str().expect("RowKey").to_owned()), "a row twice");
        }
        match (r.header("x-ms-continuation-nextpartitionkey"), r.header("x-ms-continuation-nextrowkey")) {
            (Some(pk), Some(rk)) => query = format!("$filter={filter}&NextPartitionKey={pk}&NextRowKey={rk}"),
            _ => return found,
        }
    }
    panic!("the query did not end");
}

#[tokio::test]
async fn needle_queries_see_every_write_between_them() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("summ").await.status, 201);
    let rows = 1200u32;
    for i in 0..rows {
        let e = json!({"PartitionKey": "p", "RowKey": format!("r{i:05}"), "Tag": "hay", "Other": "needle"});
        assert_eq!(c.insert("summ", e).await.status, 201);
    }
    let mut expected = BTreeSet::new();
    // the first query starts the summary's build; the later ones use it
    for round in 0..40u32 {
        assert_eq!(needles(&c, "summ", "needle").await, expected, "round {round}");
        // a needle in a run that held none, then one of them made hay again
        let rk = format!("r{:05}", (round * 389 + 17) % rows);
        let put = json!({"PartitionKey": "p", "RowKey": rk, "Tag": "needle", "Other": "x"});
        let path = entity_path("summ", "p", &rk);
        assert_eq!(c.send("PUT", &path, &[], Some(&put.to_string())).await.status, 204);
        expected.insert(rk);
        if round % 3 == 2 {
            let rk = expected.pop_first().expect("a needle");
            let hay = json!({"PartitionKey": "p", "RowKey": rk, "Tag": "hay"});
            let path = entity_path("summ", "p", &rk);
            assert_eq!(
                c.send("MERGE", &path, &[("If-Match", "*")], Some(&hay.to_string())).await.status,
                204
            );
        }
        // and a new row after every other key (the last run)
        let tail = json!({"PartitionKey": "q", "RowKey": format!("t{round:03}"), "Tag": "needle"});
        assert_eq!(c.insert("summ", tail).await.status, 201);
        expected.insert(format!("t{round:03}"));
    }
    assert_eq!(needles(&c, "summ", "needle").await, expected);
    assert!(needles(&c, "summ", "nowhere").await.is_empty());
}
