//! Black-box: `$batch` answers as the Go SDK (`aztables`) recorded the real service, over
//! raw HTTP with the request shape that SDK sends (absolute sub-request URLs with
//! `$format`, empty `DataServiceVersion` and `x-ms-version` sub-request headers,
//! `Prefer: return-no-content` on inserts): a failed insert's part still says
//! `Preference-Applied`, and `InvalidDuplicateRow` carries the service's message.

use crate::common::*;

/// A change set of inserts of `rows` into `table`, as `aztables` writes it; `prefer`
/// adds its `Prefer: return-no-content`. Returns (Content-Type, body).
fn go_sdk_inserts(endpoint: &str, table: &str, rows: &[&str], prefer: bool) -> (String, String) {
    let (b, cs) =
        ("batch_5a1c0e0e-0000-4000-8000-000000000001", "changeset_5a1c0e0e-0000-4000-8000-000000000002");
    let mut body = format!("--{b}\r\nContent-Type: multipart/mixed; boundary={cs}\r\n\r\n");
    for rk in rows {
        let entity =
            format!(r#"{{"Bool":true,"PartitionKey":"partition","RowKey":"{rk}","String":"someString"}}"#);
        let prefer = if prefer { "Prefer: return-no-content\r\n" } else { "" };
        body.push_str(&format!(
            "--{cs}\r\nContent-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n\
             POST {endpoint}/{table}?%24format=application%2Fjson%3Bodata%3Dminimalmetadata HTTP/1.1\r\n\
             Accept: application/json;odata=minimalmetadata\r\nContent-Length: {}\r\n\
             Content-Type: application/json\r\nDataServiceVersion: \r\n{prefer}x-ms-version: \r\n\r\n{entity}\r\n",
            entity.len()
        ));
    }
    body.push_str(&format!("--{cs}--\r\n\r\n--{b}--\r\n"));
    (format!("multipart/mixed; boundary={b}"), body)
}

/// The one operation part of a failed change set: its status line, its headers (name,
/// value) and its body.
fn failed_part(r: &Resp) -> (String, Vec<(String, String)>, String) {
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(r.header("x-ms-error-code"), None, "{}", r.body);
    let at = r.body.find("HTTP/1.1 ").unwrap_or_else(|| panic!("no operation part: {}", r.body));
    let (head, rest) = r.body[at..].split_once("\r\n\r\n").expect("part head");
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or_default().to_owned();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let body = rest.split("\r\n--").next().unwrap_or_default().to_owned();
    assert_eq!(r.body.matches("HTTP/1.1 ").count(), 1, "one part expected: {}", r.body);
    (status, headers, body)
}

fn names(headers: &[(String, String)]) -> Vec<&str> {
    headers.iter().map(|(n, _)| n.as_str()).collect()
}

fn message(body: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    v["odata.error"]["message"]["value"].as_str().unwrap_or_default().to_owned()
}

/// `TestBatchError_storage`: rows 1, 2, 3 where 3 exists → the part of operation 2 is
/// `409 Conflict` with `Preference-Applied: return-no-content`; nothing was written.
#[tokio::test]
async fn a_failed_insert_with_prefer_says_preference_applied() {
    let server = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    let c = server.client();
    assert_eq!(c.create_table("goBatchError").await.status, 201);
    let seeded = serde_json::json!({"PartitionKey": "partition", "RowKey": "3"});
    assert_eq!(c.insert("goBatchError", seeded).await.status, 201);
    let (ct, body) = go_sdk_inserts(&server.endpoint(), "goBatchError", &["1", "2", "3"], true);
    let r = c.send("POST", "/$batch", &[("Content-Type", &ct)], Some(&body)).await;
    let (status, headers, part_body) = failed_part(&r);
    assert_eq!(status, "HTTP/1.1 409 Conflict");
    assert_eq!(
        names(&headers),
        [
            "X-Content-Type-Options",
            "Cache-Control",
            "Preference-Applied",
            "DataServiceVersion",
            "Content-Type"
        ],
        "{}",
        r.body
    );
    assert_eq!(headers[2].1, "return-no-content");
    assert!(
        message(&part_body).starts_with("2:The specified entity already exists.\nRequestId:"),
        "{part_body}"
    );
    let r = c.send("GET", "/goBatchError()", &[], None).await;
    assert_eq!(r.json()["value"].as_array().map(Vec::len), Some(1), "{}", r.body);
}

/// `TestBatchErrorHandleResponse_storage`: rows 1, 2, 3, 1 → operation 3 is
/// `400 InvalidDuplicateRow` with the service's message and `Preference-Applied`.
/// Without `Prefer` the part has no `Preference-Applied`.
#[tokio::test]
async fn invalid_duplicate_row_as_the_service_answers_it() {
    let server = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    let c = server.client();
    assert_eq!(c.create_table("goBatchDup").await.status, 201);
    for prefer in [true, false] {
        let (ct, body) = go_sdk_inserts(&server.endpoint(), "goBatchDup", &["1", "2", "3", "1"], prefer);
        let r = c.send("POST", "/$batch", &[("Content-Type", &ct)], Some(&body)).await;
        let (status, headers, part_body) = failed_part(&r);
        assert_eq!(status, "HTTP/1.1 400 Bad Request");
        assert_eq!(names(&headers).contains(&"Preference-Applied"), prefer, "{}", r.body);
        let v: serde_json::Value = serde_json::from_str(&part_body).unwrap();
        assert_eq!(v["odata.error"]["code"], "InvalidDuplicateRow");
        let expected = "3:The batch request contains multiple changes with same row key. \
                        An entity can appear only once in a batch request.\nRequestId:";
        assert!(message(&part_body).starts_with(expected), "{part_body}");
    }
    let r = c.send("GET", "/goBatchDup()", &[], None).await;
    assert_eq!(r.json()["value"].as_array().map(Vec::len), Some(0), "{}", r.body);
}
