//! Black-box: how the server reads a request's URL before it serves it, as the real
//! service does (the recorded answers are in docs/compatibility.md): a table's URL used
//! as the account URL (`/mytable/Tables`, `/mytable/$batch`, …) is read with the table's
//! name first; a table name is checked before the table is looked up; the `-secondary`
//! endpoint refuses every write with `InsufficientAccountPermissions`; a point read
//! outside a table SAS's key range is answered as if the entity did not exist.

use crate::common::*;
use serde_json::json;

/// Asserts an OData JSON error: status, `x-ms-error-code`, the body's code and, when
/// given, the message's first line (the rest is the request id and time).
#[track_caller]
fn assert_error(r: &Resp, status: u16, code: &str, message: Option<&str>) {
    assert_eq!(r.status, status, "{code}: {}", r.body);
    assert_eq!(r.header("x-ms-error-code").as_deref(), Some(code), "{}", r.body);
    assert_eq!(r.error_code(), code, "{}", r.body);
    if let Some(message) = message {
        let value = r.json()["odata.error"]["message"]["value"].as_str().unwrap_or_default().to_owned();
        assert_eq!(value.split('\n').next(), Some(message), "{}", r.body);
    }
}

const TABLE_NOT_FOUND: &str = "The table specified does not exist.";

#[tokio::test]
async fn a_table_url_used_as_the_account_url_is_read_with_the_table_first() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("urltable").await.status, 201);
    let create = Some(r#"{"TableName":"urltable"}"#);

    // Create Table: the path's first segment is a table; the body is no entity of it
    let r = c.send("POST", "/nosuchurltable/Tables", &[], create).await;
    assert_error(&r, 404, "TableNotFound", Some(TABLE_NOT_FOUND));
    let r = c.send("POST", "/urltable/Tables", &[], create).await;
    let needs = "The values are not specified for all properties in the entity.";
    assert_error(&r, 400, "PropertiesNeedValue", Some(needs));

    // Delete Table: `Tables('…')` read as keys of the table's entities
    let r = c.send("DELETE", "/nosuchurltable/Tables('nosuchurltable')", &[], None).await;
    assert_error(&r, 404, "TableNotFound", Some(TABLE_NOT_FOUND));
    let r = c.send("DELETE", "/urltable/Tables('urltable')", &[], None).await;
    let keys = "The number of keys specified in the URI does not match number of key properties for the resource 'devstoreaccount1.urltable'.";
    assert_error(&r, 400, "InvalidInput", Some(keys));

    // Query Tables
    let r = c.send("GET", "/urltable/Tables", &[], None).await;
    let not_implemented = "The requested operation is not implemented on the specified resource.";
    assert_error(&r, 501, "NotImplemented", Some(not_implemented));

    // a batch: refused before its body is read
    let entity = r#"{"PartitionKey":"p","RowKey":"r"}"#;
    let (ct, body) =
        one_insert_batch(&format!("{}/urltable", c.endpoint), "urltable", "application/json", entity);
    let r = c.send("POST", "/urltable/$batch", &[("Content-Type", &ct)], Some(&body)).await;
    assert_error(&r, 415, "MediaTypeNotSupported", Some("None of the provided media types are supported"));

    // the service properties: an XML error whatever the request accepts
    let props =
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties></StorageServiceProperties>";
    for (method, body) in [("GET", None), ("PUT", Some(props))] {
        let headers = [("Content-Type", "application/xml")];
        let r = c.send(method, "/urltable/?restype=service&comp=properties", &headers, body).await;
        assert_eq!(r.status, 400, "{method}: {}", r.body);
        assert_eq!(r.header("x-ms-error-code").as_deref(), Some("InvalidQueryParameterValue"));
        assert_eq!(r.header("content-type").as_deref(), Some("application/xml"));
        assert!(r.body.contains("<code>InvalidQueryParameterValue</code>"), "{}", r.body);
        let value = "Value for one of the query parameters specified in the request URI is invalid.";
        assert!(r.body.contains(value), "{}", r.body);
    }

    // nothing was written or deleted, and the account's own routes are as before
    let r = c.send("GET", "/Tables", &[], None).await;
    let names: Vec<String> = r.table_names();
    assert_eq!(names, ["urltable"]);
    let r = c.send("GET", "/urltable()", &[], None).await;
    assert_eq!(r.json()["value"].as_array().map(Vec::len), Some(0), "{}", r.body);
    let r = c.send("GET", "/?restype=service&comp=properties", &[("Accept", "application/xml")], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    for path in ["/urltable/other", "/a/b/c", "/urltable/Tables/x"] {
        let r = c.send("GET", path, &[], None).await;
        assert_error(&r, 400, "InvalidUri", None);
    }
}

const INVALID_NAME: &str = "The specifed resource name contains invalid characters.";
const NAME_LENGTH: &str = "The specified resource name length is not within the permissible limits.";

/// Every entity and ACL operation on `table`, as (method, path, body).
fn operations_on(table: &str) -> Vec<(&'static str, String, Option<String>)> {
    let entity = json!({"PartitionKey": "p", "RowKey": "r", "v": 1}).to_string();
    let row = entity_path(table, "p", "r");
    let acl = "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers></SignedIdentifiers>";
    vec![
        ("POST", format!("/{table}"), Some(entity.clone())),
        ("GET", format!("/{table}()"), None),
        ("GET", row.clone(), None),
        ("PUT", row.clone(), Some(entity.clone())),
        ("MERGE", row.clone(), Some(entity.clone())),
        ("PATCH", row.clone(), Some(entity)),
        ("DELETE", row, None),
        ("GET", format!("/{table}?comp=acl"), None),
        ("PUT", format!("/{table}?comp=acl"), Some(acl.to_owned())),
    ]
}

#[tokio::test]
async fn a_table_name_is_checked_before_the_table_is_looked_up() {
    let server = TestServer::start();
    let c = server.client();
    let long = "a".repeat(64);
    let cases = [
        ("1table", "InvalidResourceName", INVALID_NAME),
        ("my_table", "InvalidResourceName", INVALID_NAME),
        ("aa", "OutOfRangeInput", NAME_LENGTH),
        (long.as_str(), "OutOfRangeInput", NAME_LENGTH),
    ];
    for (table, code, message) in cases {
        for (method, path, body) in operations_on(table) {
            let content_type = if path.contains("comp=acl") { "application/xml" } else { "application/json" };
            let headers = [("Content-Type", content_type), ("If-Match", "*")];
            let headers = if method == "DELETE" { &headers[1..] } else { &headers[..1] };
            let r = c.send(method, &path, headers, body.as_deref()).await;
            assert_error(&r, 400, code, Some(message));
        }
        // inside a batch, the operation answers so with its index
        let entity = r#"{"PartitionKey":"p","RowKey":"r"}"#;
        let (ct, body) = one_insert_batch(&c.endpoint, table, "application/json", entity);
        let r = c.send("POST", "/$batch", &[("Content-Type", &ct)], Some(&body)).await;
        assert_eq!(r.status, 202, "{}", r.body);
        assert!(r.body.contains("HTTP/1.1 400"), "{}", r.body);
        assert!(r.body.contains(&format!("\"code\":\"{code}\"")), "{}", r.body);
        assert!(r.body.contains(&format!("0:{message}")), "{}", r.body);
    }
    // a well-formed name of no table, and the longest name, are looked up
    for table in ["nosuchtable", &"a".repeat(63)] {
        let r = c.send("GET", &entity_path(table, "p", "r"), &[], None).await;
        assert_error(&r, 404, "TableNotFound", Some(TABLE_NOT_FOUND));
    }
    // Create Table keeps its answer
    let r = c.create_table("aa").await;
    assert_error(&r, 400, "InvalidResourceName", Some(INVALID_NAME));
}

/// A write request: method, path, headers, body.
type Write<'a> = (&'a str, String, &'a [(&'a str, &'a str)], Option<&'a str>);

#[tokio::test]
async fn writes_to_the_secondary_endpoint_are_insufficient_account_permissions() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("geo").await.status, 201);
    assert_eq!(c.insert("geo", json!({"PartitionKey": "p", "RowKey": "r", "v": 1})).await.status, 201);
    let mut sec = server.client();
    sec.endpoint = format!("http://127.0.0.1:{}/{ACCOUNT}-secondary", server.port);

    let entity = json!({"PartitionKey": "p", "RowKey": "r", "v": 2}).to_string();
    let row = entity_path("geo", "p", "r");
    let (batch_ct, batch) = one_insert_batch(&sec.endpoint, "geo", "application/json", &entity);
    let props =
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties></StorageServiceProperties>";
    let acl = "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers></SignedIdentifiers>";
    let json_ct = [("Content-Type", "application/json")];
    let xml_ct = [("Content-Type", "application/xml")];
    let matching = [("Content-Type", "application/json"), ("If-Match", "*")];
    let writes: Vec<Write<'_>> = vec![
        ("POST", "/Tables".into(), &json_ct, Some(r#"{"TableName":"newgeo"}"#)),
        ("DELETE", "/Tables('geo')".into(), &[], None),
        ("POST", "/geo".into(), &json_ct, Some(&entity)),
        ("PUT", row.clone(), &matching, Some(&entity)),
        ("PUT", row.clone(), &json_ct, Some(&entity)),
        ("MERGE", row.clone(), &matching, Some(&entity)),
        ("PATCH", row.clone(), &json_ct, Some(&entity)),
        ("DELETE", row.clone(), &matching[1..], None),
        ("POST", "/$batch".into(), &[], Some(&batch)),
        ("PUT", "/geo?comp=acl".into(), &xml_ct, Some(acl)),
        ("PUT", "/?restype=service&comp=properties".into(), &xml_ct, Some(props)),
    ];
    for (method, path, headers, body) in writes {
        let batch_headers = [("Content-Type", batch_ct.as_str())];
        let headers = if path == "/$batch" { &batch_headers[..] } else { headers };
        let r = sec.send(method, &path, headers, body).await;
        assert_eq!(r.status, 403, "{method} {path}: {}", r.body);
        assert_error(&r, 403, "InsufficientAccountPermissions", Some("Write operations are not allowed."));
    }
    // nothing was written
    assert_eq!(c.get("geo", "p", "r").await.json()["v"], 1);
    let r = c.send("GET", "/Tables", &[], None).await;
    assert_eq!(r.json()["value"].as_array().map(Vec::len), Some(1), "{}", r.body);

    // reads are served: a missing entity is 404 ResourceNotFound, a query 200
    let r = sec.get("geo", "p", "missing").await;
    assert_error(&r, 404, "ResourceNotFound", Some("The specified resource does not exist."));
    let r = sec.send("GET", "/geo()", &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["value"].as_array().map(Vec::len), Some(1));
}

/// A table SAS for `table` with permissions `sp` on the key range (spk, srk)–(epk, erk),
/// as a query string (sv 2019-02-02, signed as documented).
fn range_sas(table: &str, sp: &str, [spk, srk, epk, erk]: [&str; 4]) -> String {
    let time =
        |m: i64| (chrono::Utc::now() + chrono::Duration::minutes(m)).format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let (st, se, sv) = (time(-5), time(60), "2019-02-02");
    let sts = format!("{sp}\n{st}\n{se}\n/table/{ACCOUNT}/{table}\n\n\n\n{sv}\n{spk}\n{srk}\n{epk}\n{erk}");
    let enc =
        |s: &str| percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string();
    format!(
        "sv={sv}&tn={table}&sp={sp}&st={}&se={}&spk={spk}&srk={srk}&epk={epk}&erk={erk}&sig={}",
        enc(&st),
        enc(&se),
        enc(&sign(KEY, &sts))
    )
}

/// Sends an unsigned request carrying `sas` to the account's `path`.
async fn with_sas(c: &Client, sas: &str, method: &str, path: &str, body: Option<&str>) -> Resp {
    let sep = if path.contains('?') { '&' } else { '?' };
    let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = c
        .http
        .request(m, format!("{}{path}{sep}{sas}", c.endpoint))
        .header("Accept", "application/json;odata=minimalmetadata")
        .header("x-ms-version", "2019-02-02");
    if let Some(body) = body {
        req = req.header("Content-Type", "application/json").body(body.to_owned());
    }
    if method == "DELETE" {
        req = req.header("If-Match", "*");
    }
    Resp::read(req.send().await.unwrap()).await
}

#[tokio::test]
async fn a_point_read_outside_a_sas_key_range_is_not_found() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("ranged").await.status, 201);
    for rk in ["01", "02"] {
        let r = c.insert("ranged", json!({"PartitionKey": "somPartition", "RowKey": rk, "secret": rk})).await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let sas = range_sas("ranged", "raud", ["somPartition", "01", "somPartition", "01"]);

    let r = with_sas(&c, &sas, "GET", &entity_path("ranged", "somPartition", "01"), None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["secret"], "01");
    // the entity exists, but the range does not reach it: as if it did not exist
    for (pk, rk) in [("somPartition", "02"), ("somPartition", "00"), ("other", "01")] {
        let r = with_sas(&c, &sas, "GET", &entity_path("ranged", pk, rk), None).await;
        assert_error(&r, 404, "ResourceNotFound", Some("The specified resource does not exist."));
        assert!(!r.body.contains("secret"), "{}", r.body);
    }
    assert_eq!(c.get("ranged", "somPartition", "02").await.status, 200);

    // a query sees only the range
    let r = with_sas(&c, &sas, "GET", "/ranged()", None).await;
    let v = r.json();
    let rows: Vec<&str> =
        v["value"].as_array().unwrap().iter().map(|e| e["RowKey"].as_str().unwrap()).collect();
    assert_eq!(rows, ["01"], "{}", r.body);

    // writes outside the range stay 403 AuthorizationFailure
    let outside = json!({"PartitionKey": "somPartition", "RowKey": "03"}).to_string();
    let r = with_sas(&c, &sas, "POST", "/ranged", Some(&outside)).await;
    assert_error(&r, 403, "AuthorizationFailure", None);
    let r = with_sas(&c, &sas, "DELETE", &entity_path("ranged", "somPartition", "02"), None).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(c.get("ranged", "somPartition", "02").await.status, 200);
}
