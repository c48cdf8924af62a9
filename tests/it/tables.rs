//! Black-box: table operations over raw HTTP against the real server.

use crate::common::*;

#[tokio::test]
async fn create_list_get_delete_tables() {
    let server = TestServer::start();
    let c = server.client();

    let r = c.create_table("MixedCase1").await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.json()["TableName"], "MixedCase1");
    assert!(r.json()["odata.metadata"].as_str().unwrap().ends_with("$metadata#Tables/@Element"));
    assert!(r.header("preference-applied").is_none(), "no Prefer sent, so no Preference-Applied");
    assert!(r.header("x-ms-request-id").is_some());
    assert_eq!(r.header("x-ms-version").as_deref(), Some("2019-02-02"));
    assert!(r.header("date").is_some());

    // case-insensitive uniqueness
    let r = c.create_table("mixedcase1").await;
    assert_eq!(r.status, 409);
    assert_eq!(r.error_code(), "TableAlreadyExists");

    // Prefer: return-no-content
    let r = c
        .send("POST", "/Tables", &[("Prefer", "return-no-content")], Some(r#"{"TableName":"second2"}"#))
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(r.header("preference-applied").as_deref(), Some("return-no-content"));

    let r = c.send("GET", "/Tables", &[], None).await;
    assert_eq!(r.status, 200);
    let names: Vec<String> = r.table_names();
    assert_eq!(names, ["MixedCase1", "second2"]);

    let r = c.send("GET", "/Tables('mixedcase1')", &[], None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["TableName"], "MixedCase1");

    let r = c.send("DELETE", "/Tables('MixedCase1')", &[], None).await;
    assert_eq!(r.status, 204);
    let r = c.send("DELETE", "/Tables('MixedCase1')", &[], None).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.error_code(), "ResourceNotFound");
}

#[tokio::test]
async fn query_tables_pages_with_next_table_name() {
    let server = TestServer::start();
    let c = server.client();
    let mut want = Vec::new();
    for i in 0..7 {
        let name = format!("tbl{i:02}");
        assert_eq!(c.create_table(&name).await.status, 201);
        want.push(name);
    }
    let mut got = Vec::new();
    let mut next: Option<String> = None;
    let mut pages = 0;
    loop {
        let q = match &next {
            Some(n) => format!("/Tables?$top=3&NextTableName={}", urlencode(n)),
            None => "/Tables?$top=3".to_owned(),
        };
        let r = c.send("GET", &q, &[], None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        pages += 1;
        for t in r.json()["value"].as_array().unwrap() {
            got.push(t["TableName"].as_str().unwrap().to_owned());
        }
        next = r.header("x-ms-continuation-nexttablename");
        if next.is_none() {
            break;
        }
    }
    assert_eq!(got, want);
    assert_eq!(pages, 3);
}

fn urlencode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

#[tokio::test]
async fn delete_table_removes_its_entities() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("gone").await.status, 201);
    for i in 0..50 {
        let r = c.insert("gone", serde_json::json!({"PartitionKey": "p", "RowKey": format!("{i}")})).await;
        assert_eq!(r.status, 201);
    }
    assert_eq!(c.send("DELETE", "/Tables('gone')", &[], None).await.status, 204);
    let r = c.send("GET", "/gone()", &[], None).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.error_code(), "TableNotFound");
    assert_eq!(c.create_table("Gone").await.status, 201);
    let r = c.send("GET", "/gone()", &[], None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["value"].as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn invalid_table_names_are_rejected() {
    let server = TestServer::start();
    let c = server.client();
    for bad in ["ab", "1abc", "has-dash", "tables", &"a".repeat(64)] {
        let r = c.create_table(bad).await;
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
        assert_eq!(r.error_code(), "InvalidResourceName", "{bad}");
    }
    let r = c.send("POST", "/Tables", &[], Some("{not json")).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), "InvalidInput");
}

/// One slash after the resource names it too: Create and Query Tables on `/Tables/`,
/// Insert and Query Entities on `/<table>/`, a batch on `/$batch/`, signed over the path
/// as sent.
#[tokio::test]
async fn a_trailing_slash_after_the_resource_is_tolerated() {
    let server = TestServer::start();
    let c = server.client();
    let r = c.send("POST", "/Tables/", &[], Some(r#"{"TableName":"slashed"}"#)).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let r = c.send("GET", "/Tables/?$filter=TableName%20eq%20'slashed'", &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["value"][0]["TableName"], "slashed");
    let r = c.send("POST", "/slashed/", &[], Some(r#"{"PartitionKey":"p","RowKey":"r"}"#)).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let r = c.send("GET", "/slashed/", &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["value"].as_array().map(Vec::len), Some(1));
    let r = c.send("GET", "/slashed(PartitionKey='p',RowKey='r')/", &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let entity = r#"{"PartitionKey":"p","RowKey":"b"}"#;
    let (ct, body) = one_insert_batch(&server.endpoint(), "slashed", "application/json", entity);
    let r = c.send("POST", "/$batch/", &[("Content-Type", &ct)], Some(&body)).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert!(r.body.contains("HTTP/1.1 201"), "{}", r.body);
    // two slashes are no resource
    let r = c.send("GET", "/slashed//", &[], None).await;
    assert_eq!((r.status, r.error_code().as_str()), (400, "InvalidUri"), "{}", r.body);
}

/// An empty `$filter` (and an empty `$select`) means no filter (all properties), for
/// Query Tables and Query Entities, as the SDKs send it for an empty filter string.
#[tokio::test]
async fn an_empty_filter_or_select_means_none() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("emptyFilter").await.status, 201);
    let e = r#"{"PartitionKey":"p","RowKey":"r","v":1}"#;
    assert_eq!(c.send("POST", "/emptyFilter", &[], Some(e)).await.status, 201);
    for q in ["$filter=", "$filter=&$select=", "$select=&$filter=%20"] {
        let r = c.send("GET", &format!("/emptyFilter()?{q}"), &[], None).await;
        assert_eq!(r.status, 200, "{q}: {}", r.body);
        assert_eq!(r.json()["value"][0]["v"], 1, "{q}: every property: {}", r.body);
        let r = c.send("GET", &format!("/Tables?{q}"), &[], None).await;
        assert_eq!(r.status, 200, "{q}: {}", r.body);
        assert_eq!(r.json()["value"][0]["TableName"], "emptyFilter", "{q}");
    }
}
