//! Black-box: values the real service accepts although a strict reading of its
//! documentation would not, as its recordings show them: Edm.Boolean strings in any
//! case, key type annotations in update and upsert bodies, DateTimes with more than
//! seven fractional digits (rounded to 100 ns), and `$filter`s of far more than 15
//! comparisons.

use crate::common::*;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::json;

async fn setup(table: &str) -> (TestServer, Client) {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table(table).await.status, 201);
    (server, c)
}

/// Asserts a JSON error: status, `x-ms-error-code` and body code agree.
fn assert_error(r: &Resp, status: u16, code: &str) {
    assert_eq!(r.status, status, "{}", r.body);
    assert_eq!(r.header("x-ms-error-code").as_deref(), Some(code), "{}", r.body);
    assert_eq!(r.error_code(), code, "{}", r.body);
}

/// The service's message, without the `RequestId`/`Time` lines it appends.
fn message(r: &Resp) -> String {
    let v = r.json()["odata.error"]["message"]["value"].as_str().unwrap_or_default().to_owned();
    v.split('\n').next().unwrap_or_default().to_owned()
}

// ---- Edm.Boolean strings ----

/// The Python SDK's encoder test, as recorded against the real service: `"False"` typed
/// Edm.Boolean is stored as `false` (201), beside `"12345"` as Int32 and `"3.14"` as
/// Double; a null typed value is dropped.
#[tokio::test]
async fn boolean_strings_are_read_in_any_case() {
    let (_s, c) = setup("bools").await;
    let entity = json!({
        "PartitionKey": "PK2", "RowKey": "RK2",
        "Data1@odata.type": "Edm.Int32", "Data1": "12345",
        "Data2@odata.type": "Edm.Boolean", "Data2": "False",
        "Data3@odata.type": "Edm.String", "Data3": null,
        "Data4@odata.type": "Edm.Boolean", "Data4": "True",
        "Data5@odata.type": "Edm.Boolean", "Data5": "TRUE",
        "Data6@odata.type": "Edm.Boolean", "Data6": "false",
        "Data7@odata.type": "Edm.Double", "Data7": "3.14",
        "Data8@odata.type": "Edm.Boolean", "Data8": "true",
    });
    let r = c.insert("bools", entity).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let v = r.json();
    assert_eq!(v["Data2"], false);
    let r = c.get("bools", "PK2", "RK2").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.json();
    assert_eq!(v["Data1"], 12345);
    assert_eq!(v["Data2"], false);
    assert!(v.get("Data2@odata.type").is_none(), "booleans carry no annotation: {}", r.body);
    assert!(v.get("Data3").is_none(), "{}", r.body);
    assert_eq!(v["Data4"], true);
    assert_eq!(v["Data5"], true);
    assert_eq!(v["Data6"], false);
    assert_eq!(v["Data7"].to_string(), "3.14");
    assert_eq!(v["Data8"], true);

    for bad in ["yes", "1", "0", "", " true", "Truee"] {
        let e = json!({"PartitionKey": "p", "RowKey": bad, "B": bad, "B@odata.type": "Edm.Boolean"});
        let r = c.insert("bools", e).await;
        assert_error(&r, 400, "InvalidInput");
    }
}

// ---- key annotations in update and upsert bodies ----

/// The Python SDK's `test_encoder_*_complex_keys` recordings: keys annotated Edm.DateTime,
/// Edm.Guid or Edm.Binary are refused by Insert, and ignored (204, keys from the URL,
/// stored and read back as plain strings) by Update, Merge and the upserts, with or
/// without `If-Match`.
#[tokio::test]
async fn key_annotations_are_refused_on_insert_and_ignored_on_update() {
    let (_s, c) = setup("keys").await;
    let (pk, rk) = ("2022-04-01T09:30:45.000000Z", "4738dc7e-bb2e-4b38-9a3e-a3b6eb0f5f7c");
    let body = |n: i32| {
        json!({
            "PartitionKey@odata.type": "Edm.DateTime", "PartitionKey": pk,
            "RowKey@odata.type": "Edm.Guid", "RowKey": rk,
            "Data": n,
        })
        .to_string()
    };
    for insert in [
        body(0),
        json!({"PartitionKey@odata.type": "Edm.Binary", "PartitionKey": "YmluYXJ5ZGF0YQ==", "RowKey": "r"})
            .to_string(),
    ] {
        let r = c.send("POST", "/keys", &[], Some(&insert)).await;
        assert_error(&r, 400, "InvalidInput");
        assert_eq!(message(&r), "One of the request inputs is not valid.");
    }

    let path = entity_path("keys", pk, rk);
    // Upserts (no If-Match) create the entity, then update it.
    let mut n = 1;
    for method in ["PUT", "PATCH", "MERGE"] {
        let r = c.send(method, &path, &[], Some(&body(n))).await;
        assert_eq!(r.status, 204, "{method}: {}", r.body);
        n += 1;
    }
    // Update and Merge (If-Match).
    for method in ["PUT", "PATCH", "MERGE"] {
        let r = c.send(method, &path, &[("If-Match", "*")], Some(&body(n))).await;
        assert_eq!(r.status, 204, "{method} If-Match: {}", r.body);
        n += 1;
    }
    let r = c.get("keys", pk, rk).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.json();
    assert_eq!(v["PartitionKey"], pk);
    assert_eq!(v["RowKey"], rk);
    assert!(v.get("PartitionKey@odata.type").is_none() && v.get("RowKey@odata.type").is_none(), "{}", r.body);
    assert_eq!(v["Data"], n - 1);

    // The URL's keys win, whatever the annotated body says.
    let other = json!({"PartitionKey@odata.type": "Edm.Binary", "PartitionKey": "YmluYXJ5ZGF0YQ==",
                       "RowKey@odata.type": "Edm.Int64", "RowKey": "1234"});
    let r = c.send("PUT", &entity_path("keys", "YmluYXJ5ZGF0YQ==", "x"), &[], Some(&other.to_string())).await;
    assert_eq!(r.status, 204, "{}", r.body);
    let r = c.get("keys", "YmluYXJ5ZGF0YQ==", "x").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["RowKey"], "x");

    // Other properties' annotations are still checked.
    let bad = json!({"RowKey@odata.type": "Edm.Guid", "RowKey": rk, "N": "x", "N@odata.type": "Edm.Int32"});
    let r = c.send("PUT", &path, &[], Some(&bad.to_string())).await;
    assert_error(&r, 400, "InvalidInput");
}

/// One batch operation: method, URL path after the account, an extra header, JSON body.
type Op<'a> = (&'a str, String, Option<(&'a str, &'a str)>, String);

/// One change set of `ops`: the (Content-Type, body) of a `$batch` request.
fn batch(endpoint: &str, ops: &[Op<'_>]) -> (String, String) {
    let (b, cs) = ("batch_values", "changeset_values");
    let mut s = format!("--{b}\r\nContent-Type: multipart/mixed; boundary={cs}\r\n\r\n");
    for (method, path, header, body) in ops {
        s += &format!(
            "--{cs}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
             {method} {endpoint}{path} HTTP/1.1\r\nContent-Type: application/json\r\n\
             Accept: application/json;odata=minimalmetadata\r\n"
        );
        if let Some((k, v)) = header {
            s += &format!("{k}: {v}\r\n");
        }
        s += &format!("\r\n{body}\r\n");
    }
    s += &format!("--{cs}--\r\n--{b}--\r\n");
    (format!("multipart/mixed; boundary={b}"), s)
}

async fn post_batch(c: &Client, (content_type, body): (String, String)) -> Resp {
    let headers = [("Content-Type", content_type.as_str()), ("Accept", "application/json")];
    c.send("POST", "/$batch", &headers, Some(&body)).await
}

/// The same inside a batch: update and merge operations ignore the keys' annotations,
/// an insert operation is refused with the part's index.
#[tokio::test]
async fn key_annotations_in_batch_operations() {
    let (_s, c) = setup("bkeys").await;
    let body = |rk: &str| {
        json!({"PartitionKey@odata.type": "Edm.DateTime", "PartitionKey": "p",
               "RowKey@odata.type": "Edm.Guid", "RowKey": rk, "V": 1})
        .to_string()
    };
    assert_eq!(c.insert("bkeys", json!({"PartitionKey": "p", "RowKey": "b"})).await.status, 201);
    let ops = [
        ("PUT", entity_path("bkeys", "p", "a"), None, body("a")),
        ("MERGE", entity_path("bkeys", "p", "b"), Some(("If-Match", "*")), body("b")),
        ("PATCH", entity_path("bkeys", "p", "c"), None, body("c")),
    ];
    let r = post_batch(&c, batch(&c.endpoint, &ops)).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(r.body.matches("HTTP/1.1 204").count(), 3, "{}", r.body);
    for rk in ["a", "b", "c"] {
        let r = c.get("bkeys", "p", rk).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.json()["V"], 1);
    }

    let ops = [
        ("PUT", entity_path("bkeys", "p", "d"), None, body("d")),
        ("POST", "/bkeys".to_owned(), None, body("e")),
    ];
    let r = post_batch(&c, batch(&c.endpoint, &ops)).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert!(r.body.contains("HTTP/1.1 400"), "{}", r.body);
    assert!(r.body.contains(r#""code":"InvalidInput""#), "{}", r.body);
    assert!(
        r.body.contains("1:One of the request inputs is not valid."),
        "the failing part's index: {}",
        r.body
    );
    // the change set is all or nothing
    c.get("bkeys", "p", "d").await.assert_refused(404, ErrorCode::ResourceNotFound);
}

// ---- DateTimes finer than 100 ns ----

/// The Java SDK's `createEntityWithAllSupportedDataTypes` recording: nanoseconds are
/// accepted and read back at 100 ns; digits past the seventh round half to even,
/// carrying into the seconds and beyond.
#[tokio::test]
async fn datetimes_finer_than_a_tick_are_rounded() {
    let (_s, c) = setup("times").await;
    let cases = [
        ("java", "2023-04-11T21:16:49.114906917Z", "2023-04-11T21:16:49.1149069Z"),
        ("java2", "2023-04-11T21:16:40.331047814Z", "2023-04-11T21:16:40.3310478Z"),
        ("up", "2020-01-01T00:00:00.12345676Z", "2020-01-01T00:00:00.1234568Z"),
        ("tie-odd", "2020-01-01T00:00:00.12345675Z", "2020-01-01T00:00:00.1234568Z"),
        ("tie-even", "2020-01-01T00:00:00.12345685Z", "2020-01-01T00:00:00.1234568Z"),
        ("over-tie", "2020-01-01T00:00:00.123456850001Z", "2020-01-01T00:00:00.1234569Z"),
        ("carry", "2020-12-31T23:59:59.99999999Z", "2021-01-01T00:00:00Z"),
        ("offset", "2020-01-01T01:00:00.000000049+01:00", "2020-01-01T00:00:00Z"),
    ];
    for (rk, sent, stored) in cases {
        let e = json!({"PartitionKey": "p", "RowKey": rk, "When": sent, "When@odata.type": "Edm.DateTime"});
        let r = c.insert("times", e).await;
        assert_eq!(r.status, 201, "{sent}: {}", r.body);
        assert_eq!(r.json()["When"], stored, "{sent}");
        let r = c.get("times", "p", rk).await;
        assert_eq!(r.json()["When"], stored, "{sent}");
    }
    for bad in [
        "2020-01-01T00:00:00.Z",
        "2020-01-01T00:00:00.1234567890xZ",
        "2020-01-01T00:00:60.123456789Z",
        "9999-12-31T23:59:59.99999995Z",
    ] {
        let e = json!({"PartitionKey": "p", "RowKey": "bad", "When": bad, "When@odata.type": "Edm.DateTime"});
        let r = c.insert("times", e).await;
        assert_error(&r, 400, "InvalidInput");
    }

    // `datetime'…'` literals are read by the same rule.
    let query = |filter: &str| {
        let q = utf8_percent_encode(filter, NON_ALPHANUMERIC).to_string();
        format!("/times()?$filter={q}&$select=RowKey")
    };
    let rows = |r: &Resp| -> Vec<String> {
        assert_eq!(r.status, 200, "{}", r.body);
        r.json()["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["RowKey"].as_str().unwrap().to_owned())
            .collect()
    };
    let r = c.send("GET", &query("When eq datetime'2023-04-11T21:16:49.114906917Z'"), &[], None).await;
    assert_eq!(rows(&r), ["java"]);
    let r = c.send("GET", &query("When eq datetime'2023-04-11T21:16:49.11490685Z'"), &[], None).await;
    assert!(rows(&r).is_empty(), "…0685 rounds to the even …068: {}", r.body);
    let r = c.send("GET", &query("When eq datetime'2020-12-31T23:59:59.999999999Z'"), &[], None).await;
    assert_eq!(rows(&r), ["carry"]);
    let r = c.send("GET", &query("When eq datetime'2020-01-01T00:00:00.Z'"), &[], None).await;
    assert_error(&r, 400, "InvalidInput");
}

/// The same in an AtomPub body (`m:type="Edm.DateTime"`, x-ms-version before 2015-12-11).
#[tokio::test]
async fn atom_datetimes_finer_than_a_tick_are_rounded() {
    let (_s, c) = setup("atomtimes").await;
    let entry = |when: &str| {
        format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"yes\"?>\
             <entry xmlns:d=\"http://schemas.microsoft.com/ado/2007/08/dataservices\" \
             xmlns:m=\"http://schemas.microsoft.com/ado/2007/08/dataservices/metadata\" \
             xmlns=\"http://www.w3.org/2005/Atom\"><title /><author><name /></author><id />\
             <content type=\"application/xml\"><m:properties><d:PartitionKey>p</d:PartitionKey>\
             <d:RowKey>r</d:RowKey><d:When m:type=\"Edm.DateTime\">{when}</d:When>\
             </m:properties></content></entry>"
        )
    };
    let headers = [
        ("Content-Type", "application/atom+xml"),
        ("Accept", "application/json;odata=minimalmetadata"),
        ("x-ms-version", "2013-08-15"),
        ("Prefer", "return-no-content"),
    ];
    let r = c.send("POST", "/atomtimes", &headers, Some(&entry("2023-04-11T21:16:49.114906917Z"))).await;
    assert_eq!(r.status, 204, "{}", r.body);
    let r = c.get("atomtimes", "p", "r").await;
    assert_eq!(r.json()["When"], "2023-04-11T21:16:49.1149069Z", "{}", r.body);
    let r = c.send("POST", "/atomtimes", &headers, Some(&entry("2023-04-11T21:16:49.Z"))).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.header("x-ms-error-code").as_deref(), Some("InvalidInput"), "{}", r.body);
}

// ---- long filters ----

/// What a filter needs escaped in a query string (parentheses and quotes kept, so that
/// long filters stay short).
const FILTER_CHARS: &AsciiSet =
    &NON_ALPHANUMERIC.remove(b'(').remove(b')').remove(b'\'').remove(b'_').remove(b'-').remove(b'.');

fn filter_query(table: &str, filter: &str) -> String {
    format!("/{table}()?$filter={}", utf8_percent_encode(filter, FILTER_CHARS))
}

/// Orleans' grain directory filter, as it reaches the real service: one partition and
/// 100 `(RowKey eq … and ActivationId eq …)` alternatives, 201 comparisons; and 200
/// plain `RowKey eq` alternatives. Both answer exactly the matching entities.
#[tokio::test]
async fn filters_of_hundreds_of_comparisons_are_served() {
    let (_s, c) = setup("orleans").await;
    for chunk in 0..3 {
        let ops: Vec<_> = (0..100)
            .map(|i| {
                let n = chunk * 100 + i;
                let e = json!({"PartitionKey": "c", "RowKey": format!("g{n:03}"), "ActivationId": format!("a{n}")});
                ("POST", "/orleans".to_owned(), None, e.to_string())
            })
            .collect();
        let r = post_batch(&c, batch(&c.endpoint, &ops)).await;
        assert_eq!(r.status, 202, "{}", r.body);
        assert_eq!(r.body.matches("HTTP/1.1 201").count(), 100, "{}", r.body);
    }
    let rows = |r: &Resp| -> Vec<String> {
        assert_eq!(r.status, 200, "{}", r.body);
        r.json()["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["RowKey"].as_str().unwrap().to_owned())
            .collect()
    };

    // Odd rows 1, 3, …, 199 with their activation ids, but every fourth id wrong.
    let pairs: Vec<String> = (0..100)
        .map(|i| {
            let n = 2 * i + 1;
            let id = if i % 4 == 0 { format!("x{n}") } else { format!("a{n}") };
            format!("(RowKey eq 'g{n:03}' and ActivationId eq '{id}')")
        })
        .collect();
    let filter = format!("PartitionKey eq 'c' and ({})", pairs.join(" or "));
    let r = c.send("GET", &filter_query("orleans", &filter), &[], None).await;
    let want: Vec<String> = (0..100).filter(|i| i % 4 != 0).map(|i| format!("g{:03}", 2 * i + 1)).collect();
    assert_eq!(rows(&r), want);
    assert!(r.header("x-ms-continuation-NextPartitionKey").is_none());

    // 200 RowKey equalities, half of them past the last row.
    let terms: Vec<String> = (0..200).map(|i| format!("RowKey eq 'g{:03}'", 2 * i + 100)).collect();
    let r = c.send("GET", &filter_query("orleans", &terms.join(" or ")), &[], None).await;
    let want: Vec<String> = (0..100).map(|i| format!("g{:03}", 2 * i + 100)).collect();
    assert_eq!(rows(&r), want);

    // Just past the documented 15.
    let terms: Vec<String> = (0..16).map(|i| format!("RowKey eq 'g{i:03}'")).collect();
    let r = c.send("GET", &filter_query("orleans", &terms.join(" or ")), &[], None).await;
    assert_eq!(rows(&r).len(), 16);
}

/// Past the documented bounds (500 comparisons, 64 levels of nesting) a filter is a
/// 400 `InvalidInput`, however deep it goes: never a stack overflow, and the server
/// keeps serving.
#[tokio::test]
async fn filters_past_the_limits_are_refused() {
    let (_s, c) = setup("limits").await;
    assert_eq!(c.insert("limits", json!({"PartitionKey": "p", "RowKey": "r", "A": 1})).await.status, 201);
    let ok = vec!["A eq 1"; 500].join(" or ");
    let r = c.send("GET", &filter_query("limits", &ok), &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["value"].as_array().map(Vec::len), Some(1));
    // the longest chains of each kind a value summary reads, at the deepest nesting
    let depth = 31;
    let nested = |body: String| format!("{}{body}{}", "not (not (".repeat(depth / 2), "))".repeat(depth / 2));
    for (filter, rows) in [
        (vec!["B eq 'x'"; 500].join(" and "), 0),
        (nested(vec!["A ge 1"; 500].join(" and ")), 1),
        (nested(vec!["(A lt 0 or B eq 'x')"; 250].join(" and ")), 0),
    ] {
        let r = c.send("GET", &filter_query("limits", &filter), &[], None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.json()["value"].as_array().map(Vec::len), Some(rows), "{filter:.60}");
    }

    let over = vec!["A eq 1"; 501].join(" or ");
    let r = c.send("GET", &filter_query("limits", &over), &[], None).await;
    assert_error(&r, 400, "InvalidInput");
    assert!(
        message(&r).starts_with("The query condition specified in the request is invalid."),
        "{}",
        r.body
    );
    assert!(message(&r).contains("No more than 500 discrete comparisons"), "{}", r.body);

    for deep in [
        format!("{}A eq 1{}", "(".repeat(10_000), ")".repeat(10_000)),
        format!("{}A eq 1", "not ".repeat(3_000)),
        format!("{}A eq 1", "not (".repeat(2_000)),
    ] {
        let r = c.send("GET", &filter_query("limits", &deep), &[], None).await;
        assert_error(&r, 400, "InvalidInput");
        assert!(message(&r).contains("nested more than 64 levels deep"), "{}", r.body);
    }
    let r = c.send("GET", &filter_query("limits", "A eq 1"), &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
}
