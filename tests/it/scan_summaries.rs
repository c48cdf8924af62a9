//! Scans that use a table's value summary (a filter requiring `P eq 'value'`, or
//! comparisons joined by `and` and `or`) answer exactly what the table holds while rows
//! are written between them: every match written before a query is found, whichever
//! run of rows it lands in, and pages follow continuations to the end.

use crate::common::{entity_path, TestServer};
use serde_json::json;
use std::collections::BTreeSet;

/// Every RowKey the filter `Tag eq '{tag}'` returns, following continuations.
async fn needles(c: &crate::common::Client, table: &str, tag: &str) -> BTreeSet<String> {
    let found = matching(c, table, &format!("Tag%20eq%20'{tag}'")).await;
    assert!(found.iter().all(|e| e["Tag"] == tag), "{found:?}");
    found.iter().map(|e| e["RowKey"].as_str().expect("RowKey").to_owned()).collect()
}

/// Every entity `filter` (URL-encoded) returns, following continuations.
async fn matching(c: &crate::common::Client, table: &str, filter: &str) -> Vec<serde_json::Value> {
    let mut query = format!("$filter={filter}");
    let mut found: Vec<serde_json::Value> = Vec::new();
    let mut keys = BTreeSet::new();
    for _ in 0..1000 {
        let r = c.send("GET", &format!("/{table}()?{query}"), &[], None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        for e in r.json()["value"].as_array().expect("value") {
            let key = (e["PartitionKey"].to_string(), e["RowKey"].to_string());
            assert!(keys.insert(key), "a row twice");
            found.push(e.clone());
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

/// An `or` of comparisons and a pair: the runs where no side can hold are skipped once
/// the summary is built, and every write between queries is seen.
#[tokio::test]
async fn or_queries_see_every_write_between_them() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("sumor").await.status, 201);
    let rows = 1200i64;
    // RowKey -> (Count, Tag): the model
    let mut model = std::collections::BTreeMap::new();
    for i in 0..rows {
        let rk = format!("r{i:05}");
        let e = json!({"PartitionKey": "p", "RowKey": rk, "Count": i, "Tag": "hay"});
        assert_eq!(c.insert("sumor", e).await.status, 201);
        model.insert(rk, (i, "hay"));
    }
    let filter = "Count%20lt%203%20or%20Count%20gt%201195%20or%20Tag%20eq%20'needle'";
    let expected = |model: &std::collections::BTreeMap<String, (i64, &str)>| -> BTreeSet<String> {
        let hit = |&(n, tag): &(i64, &str)| !(3..=1195).contains(&n) || tag == "needle";
        model.iter().filter(|(_, v)| hit(v)).map(|(k, _)| k.clone()).collect()
    };
    for round in 0..30i64 {
        let found = matching(&c, "sumor", filter).await;
        let keys: BTreeSet<String> =
            found.iter().map(|e| e["RowKey"].as_str().expect("RowKey").to_owned()).collect();
        assert_eq!(keys, expected(&model), "round {round}");
        // a row in a middle run made to match by its Count, another by its Tag, and one
        // that matched made not to
        let rk = format!("r{:05}", (round * 389 + 17) % rows);
        let put = json!({"PartitionKey": "p", "RowKey": rk, "Count": 5000 + round, "Tag": "hay"});
        assert_eq!(
            c.send("PUT", &entity_path("sumor", "p", &rk), &[], Some(&put.to_string())).await.status,
            204
        );
        model.insert(rk, (5000 + round, "hay"));
        let rk = format!("r{:05}", (round * 211 + 400) % rows);
        let n = model[&rk].0;
        let put = json!({"PartitionKey": "p", "RowKey": rk, "Count": n, "Tag": "needle"});
        assert_eq!(
            c.send("PUT", &entity_path("sumor", "p", &rk), &[], Some(&put.to_string())).await.status,
            204
        );
        model.insert(rk, (n, "needle"));
        if let Some(rk) = expected(&model).into_iter().nth(round as usize % 3) {
            let put = json!({"PartitionKey": "p", "RowKey": rk, "Count": 600, "Tag": "hay"});
            assert_eq!(
                c.send("PUT", &entity_path("sumor", "p", &rk), &[], Some(&put.to_string())).await.status,
                204
            );
            model.insert(rk, (600, "hay"));
        }
    }
    let found = matching(&c, "sumor", filter).await;
    assert_eq!(found.len(), expected(&model).len());
    assert!(matching(&c, "sumor", "Count%20lt%20-1%20or%20Count%20gt%20100000").await.is_empty());
}

/// A RowKey (or a span of them) looked for in every partition, over HTTP: whatever the
/// page size and the writes between queries, it finds exactly the rows holding it, in
/// key order, though each partition's other rows are passed over.
#[tokio::test]
async fn row_keys_in_every_partition_see_every_write_between_them() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("rowkeys").await.status, 201);
    for pk in ["a", "b", "c"] {
        for i in 0..60u32 {
            let e = json!({"PartitionKey": pk, "RowKey": format!("r{i:03}"), "N": i});
            assert_eq!(c.insert("rowkeys", e).await.status, 201);
        }
    }
    let keys = |found: Vec<serde_json::Value>| -> Vec<String> {
        found
            .iter()
            .map(|e| format!("{}/{}", e["PartitionKey"].as_str().unwrap(), e["RowKey"].as_str().unwrap()))
            .collect()
    };
    let eq = "RowKey%20eq%20'r030'";
    assert_eq!(keys(matching(&c, "rowkeys", eq).await), ["a/r030", "b/r030", "c/r030"]);
    for top in ["1", "2"] {
        let paged = keys(matching(&c, "rowkeys", &format!("{eq}&$top={top}")).await);
        assert_eq!(paged, ["a/r030", "b/r030", "c/r030"], "$top={top}");
    }
    // a span, with a property condition, and rows written and deleted between queries
    let span = "RowKey%20gt%20'r010'%20and%20RowKey%20le%20'r012'%20and%20N%20ne%2011";
    assert_eq!(keys(matching(&c, "rowkeys", span).await), ["a/r012", "b/r012", "c/r012"]);
    let e = json!({"PartitionKey": "b", "RowKey": "r0115", "N": 0});
    assert_eq!(c.insert("rowkeys", e).await.status, 201);
    assert_eq!(
        c.insert("rowkeys", json!({"PartitionKey": "bb", "RowKey": "r011", "N": 5})).await.status,
        201
    );
    let path = entity_path("rowkeys", "c", "r012");
    assert_eq!(c.send("DELETE", &path, &[("If-Match", "*")], None).await.status, 204);
    assert_eq!(
        keys(matching(&c, "rowkeys", &format!("{span}&$top=1")).await),
        ["a/r012", "b/r0115", "b/r012", "bb/r011"]
    );
    // a union of intervals: each partition's rows between them passed over; RowKeys
    // the store keeps escaped (U+E000 is remapped) compared as the service orders them
    // (U+E000 above U+10000 in UTF-16), before and after a partition's rows
    for (pk, rk) in [("a", "\u{e000}"), ("a", "\u{10000}"), ("c", "q\u{e000}")] {
        assert_eq!(c.insert("rowkeys", json!({"PartitionKey": pk, "RowKey": rk, "N": 1})).await.status, 201);
    }
    let union = "RowKey%20eq%20'r001'%20or%20RowKey%20eq%20'r058'%20or%20RowKey%20gt%20'%F0%90%80%80'";
    for top in ["", "&$top=1"] {
        assert_eq!(
            keys(matching(&c, "rowkeys", &format!("{union}{top}")).await),
            ["a/r001", "a/r058", "a/\u{e000}", "b/r001", "b/r058", "c/r001", "c/r058"],
            "{top}"
        );
    }
    let below = "RowKey%20lt%20'r'%20and%20RowKey%20ge%20'q'";
    assert_eq!(keys(matching(&c, "rowkeys", below).await), ["c/q\u{e000}"]);
}

/// A Guid compared over a table large enough for summaries (kept in their columns):
/// `eq`, `ne` and ordering find exactly the rows a row-by-row reading finds.
#[tokio::test]
async fn guid_filters_over_summarised_runs_find_every_match() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("guids").await.status, 201);
    let guid = |i: u32| format!("{:08x}-0000-4000-8000-{:012x}", i % 7, i);
    for i in 0..700u32 {
        let e = json!({"PartitionKey": "p", "RowKey": format!("r{i:04}"), "Id@odata.type": "Edm.Guid", "Id": guid(i)});
        assert_eq!(c.insert("guids", e).await.status, 201);
    }
    let count = |found: Vec<serde_json::Value>| found.len();
    // twice: the first query starts the summary's build, the second uses it
    for _ in 0..2 {
        let eq = format!("Id%20eq%20guid'{}'", guid(500));
        assert_eq!(count(matching(&c, "guids", &eq).await), 1);
        let not_ne = format!("not%20(Id%20ne%20guid'{}')", guid(500));
        assert_eq!(count(matching(&c, "guids", &not_ne).await), 1);
        // the first 8 hex digits are i % 7: 100 rows each
        let lt = "Id%20lt%20guid'00000002-0000-0000-0000-000000000000'";
        assert_eq!(count(matching(&c, "guids", lt).await), 200);
        let none = "not%20(Id%20ne%20guid'00000000-0000-0000-0000-000000000000')";
        assert_eq!(count(matching(&c, "guids", none).await), 0);
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
}
