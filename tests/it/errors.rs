//! Black-box: one test per error path we claim (status, code in body and header).

use crate::common::*;
use serde_json::json;

#[tokio::test]
async fn authentication_errors() {
    let server = TestServer::start();
    let http = reqwest::Client::new();

    // no Authorization header
    let r = http
        .get(format!("{}/Tables", server.endpoint()))
        .header("x-ms-date", now_rfc1123())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    assert_eq!(r.headers()["x-ms-error-code"], "NoAuthenticationInformation");

    // wrong key
    let mut c = server.client();
    c.key = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==".into();
    let r = c.send("GET", "/Tables", &[], None).await;
    r.assert_refused(403, ErrorCode::AuthenticationFailed);
    assert!(r.json()["odata.error"]["message"]["value"].as_str().unwrap().contains("RequestId:"));

    // malformed Authorization
    let r = http
        .get(format!("{}/Tables", server.endpoint()))
        .header("x-ms-date", now_rfc1123())
        .header("Authorization", "Bearer xyz")
        .send()
        .await
        .unwrap();
    // an unknown scheme (Bearer without --oauth) is malformed authentication information
    Resp::read(r).await.assert_refused(401, ErrorCode::InvalidAuthenticationInfo);
}

#[tokio::test]
async fn shared_key_lite_and_host_style_urls() {
    let server = TestServer::start();
    let http = reqwest::Client::new();
    let date = now_rfc1123();
    // SharedKeyLite, path-style: the account appears twice in the canonical resource
    let sts = format!("{date}\n/{ACCOUNT}/{ACCOUNT}/Tables");
    let r = http
        .get(format!("{}/Tables", server.endpoint()))
        .header("x-ms-date", &date)
        .header("Accept", "application/json;odata=nometadata")
        .header("Authorization", format!("SharedKeyLite {ACCOUNT}:{}", sign(KEY, &sts)))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);

    // host-style: devstoreaccount1.table.localhost
    let sts = format!("GET\n\n\n{date}\n/{ACCOUNT}/Tables");
    let r = http
        .get(format!("http://127.0.0.1:{}/Tables", server.port))
        .header("Host", format!("{ACCOUNT}.table.localhost:{}", server.port))
        .header("x-ms-date", &date)
        .header("Authorization", format!("SharedKey {ACCOUNT}:{}", sign(KEY, &sts)))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200, "{}", r.text().await.unwrap());
}

#[tokio::test]
async fn version_and_routing_errors() {
    let server = TestServer::start();
    let c = server.client();
    // a well-formed newer version is served (tests/it/wire_misc.rs); a malformed one is not
    let r = c.send("GET", "/Tables", &[("x-ms-version", "2099-1-01")], None).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), "InvalidHeaderValue");
    assert_eq!(r.header("x-ms-error-code").as_deref(), Some("InvalidHeaderValue"));

    let r = c.send("GET", "/a/b/c", &[], None).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), "InvalidUri");

    let r = c.send("PUT", "/Tables", &[], Some("{}")).await;
    assert_eq!(r.status, 405);
    assert_eq!(r.error_code(), "MethodNotAllowed");

    let path = entity_path("t", "a", "b");
    let r = c.send("PUT", &path, &[("X-HTTP-Method", "MERGE")], Some("{}")).await;
    assert_eq!(r.error_code(), "XMethodNotUsingPost");
    let r = c.send("POST", &path, &[("X-HTTP-Method", "GET")], Some("{}")).await;
    assert_eq!(r.error_code(), "XMethodIncorrectValue");
    let r = c.send("POST", &path, &[("X-HTTP-Method", "MERGE, PUT")], Some("{}")).await;
    assert_eq!(r.error_code(), "XMethodIncorrectCount");
}

#[tokio::test]
async fn entity_validation_errors() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("val").await.status, 201);
    let cases = [
        (json!({"PartitionKey": "a", "RowKey": "1", "bad-name": 1}), "PropertyNameInvalid"),
        (
            json!({"PartitionKey": "a", "RowKey": "2", "S": "x".repeat(32 * 1024 + 1)}),
            "PropertyValueTooLarge",
        ),
        (
            json!({"PartitionKey": "a", "RowKey": "3", "I": 5_000_000_000i64, "I@odata.type": "Edm.Int32"}),
            "InvalidInput",
        ),
        (
            json!({"PartitionKey": "a", "RowKey": "4", "D": "1500-01-01T00:00:00Z", "D@odata.type": "Edm.DateTime"}),
            "InvalidInput",
        ),
        (
            json!({"PartitionKey": "a", "RowKey": "5", "G": "not-a-guid", "G@odata.type": "Edm.Guid"}),
            "InvalidInput",
        ),
        (json!({"PartitionKey": "a", "RowKey": "x".repeat(1025)}), "OutOfRangeInput"),
        (json!({"PartitionKey": "a\u{1}", "RowKey": "6"}), "InvalidInput"),
        (json!({"RowKey": "7"}), "PropertiesNeedValue"),
    ];
    for (entity, code) in cases {
        let r = c.insert("val", entity.clone()).await;
        assert_eq!(r.status, 400, "{entity}: {}", r.body);
        assert_eq!(r.error_code(), code, "{entity}");
    }
    let mut many = serde_json::Map::new();
    many.insert("PartitionKey".into(), json!("a"));
    many.insert("RowKey".into(), json!("8"));
    for i in 0..253 {
        many.insert(format!("p{i}"), json!(i));
    }
    let r = c.insert("val", serde_json::Value::Object(many)).await;
    assert_eq!(r.error_code(), "TooManyProperties");
    // duplicate property names
    let r = c.send("POST", "/val", &[], Some(r#"{"PartitionKey":"a","RowKey":"9","X":1,"X":2}"#)).await;
    assert_eq!(r.error_code(), "DuplicatePropertiesSpecified");
    // entity over 1 MiB (20 strings of 30K chars ≈ 1.2 MB in UTF-16)
    let mut big = serde_json::Map::new();
    big.insert("PartitionKey".into(), json!("a"));
    big.insert("RowKey".into(), json!("10"));
    for i in 0..20 {
        big.insert(format!("s{i}"), json!("y".repeat(30_000)));
    }
    let r = c.insert("val", serde_json::Value::Object(big)).await;
    assert_eq!(r.error_code(), "EntityTooLarge");
    // nothing above was written
    let v = c.send("GET", "/val()", &[], None).await.json();
    assert_eq!(v["value"].as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn secondary_endpoint_is_read_only() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("geo").await.status, 201);
    assert_eq!(c.insert("geo", json!({"PartitionKey": "p", "RowKey": "r", "V": 1})).await.status, 201);
    let mut sec = server.client();
    sec.endpoint = format!("http://127.0.0.1:{}/{ACCOUNT}-secondary", server.port);
    let r = sec.get("geo", "p", "r").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["V"], 1);
    let r = sec.insert("geo", json!({"PartitionKey": "p", "RowKey": "s"})).await;
    assert_eq!(r.status, 403);
    assert_eq!(r.error_code(), "InsufficientAccountPermissions");
    c.get("geo", "p", "s").await.assert_refused(404, ErrorCode::ResourceNotFound);
}

#[tokio::test]
async fn malformed_continuation_tokens_are_400() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("tok").await.status, 201);
    for q in [
        "/tok()?NextPartitionKey=garbage",
        "/tok()?NextPartitionKey=1!8!abc&NextRowKey=x",
        "/Tables?NextTableName=nope",
    ] {
        let r = c.send("GET", q, &[], None).await;
        assert_eq!(r.status, 400, "{q}: {}", r.body);
        assert_eq!(r.error_code(), "InvalidInput", "{q}");
    }
}

/// An entity body over 4 MiB is 413 `RequestBodyTooLarge`, as a batch's is, whether it
/// is an insert, a replace or a merge; a body under 4 MiB whose entity passes 1 MiB stays
/// 400 `EntityTooLarge`. Nothing is written either way.
#[tokio::test]
async fn entity_bodies_over_4_mib_are_413_and_large_entities_under_it_are_400() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("bodySize").await.status, 201);
    // a body of exactly `len` bytes: string properties of at most 30,000 characters
    // (each under the 64 KiB value limit), the last one padded to the length
    let body = |len: usize| {
        let mut b = String::from(r#"{"PartitionKey":"p","RowKey":"r""#);
        for i in 0.. {
            let head = format!(r#","s{i}":""#);
            let room = len - b.len() - head.len() - 2; // the closing quote and brace
            b += &head;
            b += &"y".repeat(room.min(30_000));
            b += "\"";
            if room <= 30_000 {
                break;
            }
        }
        b += "}";
        assert_eq!(b.len(), len);
        b
    };
    let mib = 1024 * 1024;
    for (method, path) in [("POST", "/bodySize"), ("PUT", "/bodySize(PartitionKey='p',RowKey='r')")] {
        for len in [4 * mib + 1, 4 * mib + 40 * 1024] {
            let r = c.send(method, path, &[], Some(&body(len))).await;
            assert_eq!(
                (r.status, r.error_code().as_str()),
                (413, "RequestBodyTooLarge"),
                "{method} of {len} bytes"
            );
        }
        for len in [4 * mib, 2 * mib] {
            let r = c.send(method, path, &[], Some(&body(len))).await;
            assert_eq!(
                (r.status, r.error_code().as_str()),
                (400, "EntityTooLarge"),
                "{method} of {len} bytes"
            );
        }
    }
    let r = c.send("MERGE", "/bodySize(PartitionKey='p',RowKey='r')", &[], Some(&body(4 * mib + 1))).await;
    assert_eq!((r.status, r.error_code().as_str()), (413, "RequestBodyTooLarge"), "MERGE");
    // nothing was written
    c.get("bodySize", "p", "r").await.assert_refused(404, ErrorCode::ResourceNotFound);
}

/// A body declared as something other than JSON is 415 `MediaTypeNotSupported` and is
/// not read: inserts, updates, merges, table creation and batch operations alike.
#[tokio::test]
async fn bodies_declared_as_another_media_type_are_415_and_not_read() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("mediaType").await.status, 201);
    let entity = r#"{"PartitionKey":"p","RowKey":"r","v":1}"#;
    let url = "/mediaType(PartitionKey='p',RowKey='r')";
    for ct in ["text/plain", "application/octet-stream"] {
        for (method, path, body) in [
            ("POST", "/mediaType", entity),
            ("PUT", url, entity),
            ("MERGE", url, entity),
            ("POST", "/Tables", r#"{"TableName":"mediaType2"}"#),
        ] {
            let r = c.send(method, path, &[("Content-Type", ct)], Some(body)).await;
            assert_eq!(
                (r.status, r.error_code().as_str()),
                (415, "MediaTypeNotSupported"),
                "{method} {path} as {ct}"
            );
        }
    }
    let (ct, batch) = one_insert_batch(&server.endpoint(), "mediaType", "text/plain", entity);
    let r = c.send("POST", "/$batch", &[("Content-Type", &ct)], Some(&batch)).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert!(r.body.contains("HTTP/1.1 415") && r.body.contains("\"MediaTypeNotSupported\""), "{}", r.body);
    assert!(r.body.contains("\"0:The content type"), "{}", r.body);
    // a refused body is not stored
    c.get("mediaType", "p", "r").await.assert_refused(404, ErrorCode::ResourceNotFound);
    assert_eq!(c.send("GET", "/Tables('mediaType2')", &[], None).await.status, 404);
}
