//! Parsing tests: bodies exactly as the Python and JS SDKs (and the older Node SDK)
//! send them, reconstructed from their sources and recordings, plus every error path.

use super::*;
use aztable_model::error::{ApiError, ErrorCode};
use std::borrow::Cow;

const CT: &str = "multipart/mixed; boundary=batch_1";

fn p<'a>(ct: &str, body: &'a str) -> Result<BatchRequest<'a>, BatchError> {
    parse(ct, body.as_bytes(), &Limits::default())
}

fn h<'a>(pairs: &[(&'a str, &'a str)]) -> Vec<(&'a str, Cow<'a, str>)> {
    pairs.iter().map(|&(n, v)| (n, Cow::Borrowed(v))).collect()
}

/// A change set batch with the given operation texts (request line onwards).
fn changeset(ops: &[String]) -> String {
    let mut s = String::from("--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_1\r\n\r\n");
    for op in ops {
        s.push_str(
            "--changeset_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n",
        );
        s.push_str(op);
        s.push_str("\r\n");
    }
    s.push_str("--changeset_1--\r\n--batch_1--\r\n");
    s
}

fn insert(table: &str, rk: usize) -> String {
    format!("POST /devstoreaccount1/{table} HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{{\"PartitionKey\":\"p\",\"RowKey\":\"{rk}\"}}")
}

/// Python azure-data-tables 12.x (azure-core `set_multipart_mixed`), as recorded
/// against the service: MIME-level Content-ID from 0, absolute URLs, PATCH for merge.
fn python_body(eol: &str) -> String {
    let j1 =
        r#"{"PartitionKey": "003", "PartitionKey@odata.type": "Edm.String", "RowKey": "r-0", "test": true}"#;
    let j2 = r#"{"PartitionKey": "003", "RowKey": "r-2", "test3": 10}"#;
    let host = "https://acct.table.core.windows.net";
    let cs = "changeset_37fbf358-7ae2-4071-9553-aadc7722ab15";
    let date = "Tue, 21 Sep 2021 00:50:52 GMT";
    let text = format!(
        "--batch_edebfcea-ccfe-41f2-b1e3-296a2e29ecf3\nContent-Type: multipart/mixed; boundary={cs}\n\n\
--{cs}\nContent-Type: application/http\nContent-Transfer-Encoding: binary\nContent-ID: 0\n\n\
POST {host}/uttable913d2aeb HTTP/1.1\nx-ms-version: 2019-02-02\nDataServiceVersion: 3.0\nPrefer: return-no-content\n\
Content-Type: application/json;odata=nometadata\nAccept: application/json;odata=minimalmetadata\nContent-Length: {l1}\n\
x-ms-date: {date}\nDate: {date}\n\n{j1}\n\
--{cs}\nContent-Type: application/http\nContent-Transfer-Encoding: binary\nContent-ID: 1\n\n\
DELETE {host}/uttable913d2aeb(PartitionKey='003',RowKey='r-1') HTTP/1.1\nx-ms-version: 2019-02-02\n\
DataServiceVersion: 3.0\nIf-Match: *\nAccept: application/json;odata=minimalmetadata\nx-ms-date: {date}\nDate: {date}\n\n\n\
--{cs}\nContent-Type: application/http\nContent-Transfer-Encoding: binary\nContent-ID: 2\n\n\
PATCH {host}/uttable913d2aeb(PartitionKey='003',RowKey='r-2') HTTP/1.1\nx-ms-version: 2019-02-02\n\
DataServiceVersion: 3.0\nIf-Match: *\nContent-Type: application/json\nAccept: application/json\nContent-Length: {l2}\n\
x-ms-date: {date}\nDate: {date}\n\n{j2}\n--{cs}--\n\n--batch_edebfcea-ccfe-41f2-b1e3-296a2e29ecf3--\n",
        l1 = j1.len(),
        l2 = j2.len(),
    );
    text.replace('\n', eol)
}

#[test]
fn python_sdk_body() {
    for eol in ["\r\n", "\n"] {
        let ct = "multipart/mixed; boundary=batch_edebfcea-ccfe-41f2-b1e3-296a2e29ecf3";
        let body = python_body(eol);
        let req = p(ct, &body).unwrap();
        assert_eq!(req.kind, BatchKind::ChangeSet);
        let methods: Vec<_> = req.ops.iter().map(|o| o.method).collect();
        assert_eq!(methods, ["POST", "DELETE", "PATCH"]);
        let ids: Vec<_> = req.ops.iter().map(|o| o.content_id.as_deref()).collect();
        assert_eq!(ids, [Some("0"), Some("1"), Some("2")]);
        let (post, del, patch) = (&req.ops[0], &req.ops[1], &req.ops[2]);
        assert_eq!(post.url_path, "/uttable913d2aeb");
        assert_eq!(post.account(), None);
        assert_eq!(post.header("prefer"), Some("return-no-content"));
        assert_eq!(post.headers.len(), 8);
        assert_eq!(post.headers[0], ("x-ms-version", Cow::Borrowed("2019-02-02")));
        assert!(post.body.starts_with(b"{\"PartitionKey\": \"003\"") && post.body.ends_with(b"true}"));
        assert_eq!(del.url_path, "/uttable913d2aeb(PartitionKey='003',RowKey='r-1')");
        assert_eq!(del.header("if-match"), Some("*"));
        assert_eq!(del.body, b"");
        assert_eq!(patch.body, br#"{"PartitionKey": "003", "RowKey": "r-2", "test3": 10}"#);
        assert_eq!(patch.index, 2);
        assert!(matches!(patch.endpoint, crate::endpoint::Endpoint::MergeEntity { .. }));
    }
}

/// @azure/data-tables (TableTransaction + transactionHelpers/TablePolicies): lowercase
/// headers, a blank line before the first change set delimiter, an extra CRLF before
/// each body. Older releases end with `--batch_x` instead of `--batch_x--`.
#[test]
fn js_sdk_body() {
    let host = "https://fakeaccount.table.core.windows.net";
    let head =
        "--changeset_fakeId\r\ncontent-type: application/http\r\ncontent-transfer-encoding: binary\r\n\r\n";
    let json = "{\"PartitionKey\":\"multiBatch1\",\"RowKey\":\"r1\",\"value\":\"1\"}";
    let common = "accept: application/json;odata=minimalmetadata\r\ndataserviceversion: 3.0";
    let body = format!(
        "--batch_fakeId\r\ncontent-type: multipart/mixed; boundary=changeset_fakeId\r\n\r\n\r\n\
{head}POST {host}/batchTableTestnode HTTP/1.1\r\ncontent-type: application/json;odata=nometadata\r\n{common}\r\n\
prefer: return-no-content\r\n\r\n\r\n{json}\r\n\
{head}DELETE {host}/batchTableTestnode(PartitionKey='multiBatch1',RowKey='r2') HTTP/1.1\r\n{common}\r\nif-match: *\r\n\r\n\r\n\
--changeset_fakeId--\r\n"
    );
    for ending in ["--batch_fakeId--\r\n", "--batch_fakeId\r\n"] {
        let body = format!("{body}{ending}");
        let req = p("multipart/mixed; boundary=batch_fakeId", &body).unwrap();
        assert_eq!(req.ops.len(), 2);
        let (post, del) = (&req.ops[0], &req.ops[1]);
        assert_eq!(post.body, format!("\r\n{json}").as_bytes());
        assert_eq!(post.content_id, None);
        assert_eq!(
            post.headers,
            h(&[
                ("content-type", "application/json;odata=nometadata"),
                ("accept", "application/json;odata=minimalmetadata"),
                ("dataserviceversion", "3.0"),
                ("prefer", "return-no-content"),
            ])
        );
        assert_eq!((del.method, del.body), ("DELETE", &b""[..]));
        assert_eq!(del.url_path, "/batchTableTestnode(PartitionKey='multiBatch1',RowKey='r2')");
    }
}

/// The older Node SDK: Content-ID inside the request headers, header blocks that end at
/// the delimiter without a blank line, and a lone GET as a query batch (recorded).
#[test]
fn node_sdk_inner_content_id_and_query_batch() {
    let b = "batch_0000000-0000-0000-0000-000000000000";
    let cs = "changeset_0000000-0000-0000-0000-000000000000";
    let url = "https://dummy.table.core.windows.net/testtable(PartitionKey=%27tests%27,RowKey=%27insert1%27)";
    let etag = "W/\"datetime'2014-01-31T10%3A14%3A18.918655Z'\"";
    let body = format!(
        "--{b}\r\nContent-Type: multipart/mixed; boundary={cs}\r\n\r\n--{cs}\r\nContent-Type: application/http\r\n\
Content-Transfer-Encoding: binary\r\n\r\nPUT {url} HTTP/1.1\r\ncontent-id: 0\r\ncontent-type: application/json\r\n\
if-match: *\r\n\r\n{{\"value\":11}}\r\n--{cs}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
DELETE {url} HTTP/1.1\r\ncontent-id: 1\r\nif-match: {etag}\r\n--{cs}--\r\n--{b}--"
    );
    let req = p(&format!("multipart/mixed; boundary={b}"), &body).unwrap();
    assert_eq!(req.ops[0].content_id.as_deref(), Some("0"));
    assert_eq!(req.ops[1].content_id.as_deref(), Some("1"));
    assert_eq!(req.ops[1].header("if-match"), Some(etag));
    assert_eq!(req.ops[1].body, b"");
    assert_eq!(req.ops[0].url_path, "/testtable(PartitionKey=%27tests%27,RowKey=%27insert1%27)");

    let query = format!(
        "--{b}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nGET {url} HTTP/1.1\r\n\
content-id: 0\r\naccept: application/json;odata=minimalmetadata\r\n\r\n--{b}--"
    );
    let req = p(&format!("multipart/mixed; boundary={b}"), &query).unwrap();
    assert_eq!(req.kind, BatchKind::Query);
    assert_eq!(req.ops.len(), 1);
    assert_eq!((req.ops[0].method, req.ops[0].content_id.as_deref()), ("GET", Some("0")));
    assert_eq!(req.ops[0].headers.len(), 2);
}

#[test]
fn quoted_boundaries_urls_and_tunnelling() {
    let body = "--batch_q\r\nContent-Type: multipart/mixed; boundary=\"changeset_q\"\r\n\r\n\
--changeset_q\r\nContent-Type: application/http\r\nContent-ID: 7\r\n\r\n\
POST http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='a',RowKey='b')?timeout=5 HTTP/1.1\r\n\
X-HTTP-Method: MERGE\r\nIf-Match: W/\"x\"\r\nContent-ID: 9\r\n\r\n{}\r\n\
--changeset_q\r\nContent-Type: application/http\r\n\r\nDELETE devstoreaccount1/t(PartitionKey='a',RowKey='c') HTTP/1.1\r\n\r\n\r\n\
--changeset_q--\r\n--batch_q--\r\n";
    let req = p("multipart/mixed; charset=utf-8; boundary=\"batch_q\"", body).unwrap();
    let merge = &req.ops[0];
    assert_eq!(merge.method, "MERGE");
    assert_eq!(merge.content_id.as_deref(), Some("9"), "request header wins over MIME header");
    assert_eq!(merge.url_path, "/devstoreaccount1/t(PartitionKey='a',RowKey='b')");
    assert_eq!(merge.account(), Some("devstoreaccount1"));
    assert_eq!(merge.resource_path(), "/t(PartitionKey='a',RowKey='b')");
    assert_eq!(merge.query, Some("timeout=5"));
    assert_eq!(merge.header("x-http-method"), Some("MERGE"));
    assert_eq!(merge.header("if-match"), Some("W/\"x\""));
    // A relative URL without a leading slash.
    assert_eq!(req.ops[1].url_path, "/devstoreaccount1/t(PartitionKey='a',RowKey='c')");
    assert_eq!(req.ops[1].account(), Some("devstoreaccount1"));
}

#[test]
fn boundary_like_text_in_bodies() {
    let tricky = "--\r\n--changeset_1x\r\n x --changeset_1\r\n--changeset_1-\r\n--batch_1 \"--\"\r\n--";
    let op = format!("POST /devstoreaccount1/t HTTP/1.1\r\n\r\n{tricky}");
    let body = changeset(&[op.clone(), op]);
    let req = p(CT, &body).unwrap();
    assert_eq!(req.ops.len(), 2);
    assert_eq!(req.ops[1].body, tricky.as_bytes());
    // Binary bodies pass through untouched.
    let mut body = changeset(&[insert("t", 0)]).into_bytes();
    let at = body.windows(2).position(|w| w == b"{\"").unwrap();
    body.splice(at..at, [0u8, 0xff, b'\r', 0xfe]);
    let req = parse(CT, &body, &Limits::default()).unwrap();
    assert!(req.ops[0].body.starts_with(&[0, 0xff, b'\r', 0xfe]));
}

#[test]
fn limits() {
    let ops = |n: usize| (0..n).map(|i| insert("t", i)).collect::<Vec<_>>();
    assert_eq!(p(CT, &changeset(&ops(100))).unwrap().ops.len(), 100);
    let e = p(CT, &changeset(&ops(101))).unwrap_err();
    assert_eq!(e, BatchError::TooManyOperations { max: 100 });
    assert_eq!(e.placement(), ErrorPlacement::ChangeSetPart);
    let api = ApiError::from(e);
    assert_eq!((api.code, api.status()), (ErrorCode::InvalidInput, 400));
    assert_eq!(api.message, "0:The batch request operation exceeds the maximum 100 changes per change set.");

    let body = changeset(&ops(3));
    let small = Limits { max_ops: 2, max_body: body.len() };
    assert_eq!(parse(CT, body.as_bytes(), &small), Err(BatchError::TooManyOperations { max: 2 }));
    let tiny = Limits { max_ops: 100, max_body: body.len() - 1 };
    let e = parse(CT, body.as_bytes(), &tiny).unwrap_err();
    assert_eq!(
        (e.clone(), e.status(), e.placement()),
        (BatchError::BodyTooLarge, 413, ErrorPlacement::Response)
    );
    assert_eq!(ApiError::from(e).code, ErrorCode::RequestBodyTooLarge);
}

#[test]
fn envelope_errors() {
    let one = changeset(&[insert("t", 0)]);
    for ct in ["application/json", "multipart/mixed", "multipart/mixed; boundary=", ""] {
        assert_eq!(p(ct, &one), Err(BatchError::ContentType), "{ct}");
    }
    assert_eq!(
        p("multipart/mixed; boundary=other", &one),
        Err(BatchError::Malformed { detail: "no boundary delimiter line was found" })
    );
    let cut = &one[..one.len() - 30];
    assert!(matches!(p(CT, cut), Err(BatchError::Malformed { .. })));
    assert_eq!(p(CT, "--batch_1--\r\n"), Err(BatchError::Empty));
    let empty_cs = "--batch_1\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n--cs--\r\n--batch_1--";
    let e = p(CT, empty_cs).unwrap_err();
    assert_eq!(
        (e.placement(), e.message()),
        (ErrorPlacement::BatchPart, "An error occurred while processing this request.".to_owned())
    );
    let no_cs_boundary = "--batch_1\r\nContent-Type: multipart/mixed\r\n\r\n--cs--\r\n--batch_1--";
    assert!(matches!(p(CT, no_cs_boundary), Err(BatchError::Malformed { .. })));
    let text_part = "--batch_1\r\nContent-Type: text/plain\r\n\r\nhi\r\n--batch_1--";
    assert!(matches!(p(CT, text_part), Err(BatchError::Malformed { .. })));

    // Two change sets; a change set plus a query; two queries.
    let cs_part = one.trim_end_matches("--batch_1--\r\n").to_owned();
    let e = p(CT, &format!("{cs_part}--batch_1\r\n{}", &one["--batch_1\r\n".len()..])).unwrap_err();
    assert_eq!((e.clone(), e.placement()), (BatchError::MultipleChangeSets, ErrorPlacement::BatchPart));
    let get = "--batch_1\r\nContent-Type: application/http\r\n\r\nGET /t(PartitionKey='a',RowKey='b') HTTP/1.1\r\n\r\n";
    assert_eq!(p(CT, &format!("{cs_part}{get}--batch_1--")), Err(BatchError::QueryNotAlone));
    assert_eq!(p(CT, &format!("{get}\r\n{get}--batch_1--")), Err(BatchError::QueryNotAlone));
}

#[test]
fn operation_errors() {
    let err = |ops: &[String]| p(CT, &changeset(ops)).unwrap_err();
    let get = "GET /devstoreaccount1/t(PartitionKey='p',RowKey='1') HTTP/1.1\r\nContent-ID: 5\r\n".to_owned();
    let e = err(&[insert("t", 0), get]);
    assert_eq!(
        (e.failed_index(), e.content_id(), e.placement()),
        (Some(1), Some("5"), ErrorPlacement::ChangeSetPart)
    );
    assert_eq!(e.code(), ErrorCode::InvalidInput);
    assert!(e.message().starts_with("1:A query operation is not permitted in a change set"));

    let e = err(&[insert("t", 0), insert("T", 1), insert("u", 2)]);
    assert_eq!((e.failed_index(), e.code()), (Some(2), ErrorCode::CommandsInBatchActOnDifferentPartitions));
    assert_eq!(e.message(), "2:All commands in a batch must operate on same entity group.");
    // the parser compares tables only; path-style and host-style request lines may be
    // mixed, and the HTTP layer checks each operation's account against the request's
    let other_account = insert("t", 1).replace("devstoreaccount1", "other");
    assert!(p(CT, &changeset(&[insert("t", 0), other_account])).is_ok());
    let host_style = insert("t", 1).replace("/devstoreaccount1/t", "/t");
    assert!(p(CT, &changeset(&[insert("t", 0), host_style])).is_ok());

    let cases: &[(&str, ErrorCode)] = &[
        (
            "PUT /devstoreaccount1/t(PartitionKey='p',RowKey='1') HTTP/1.1\r\nX-HTTP-Method: MERGE",
            ErrorCode::XMethodNotUsingPost,
        ),
        (
            "POST /devstoreaccount1/t(PartitionKey='p',RowKey='1') HTTP/1.1\r\nX-HTTP-Method: GET",
            ErrorCode::XMethodIncorrectValue,
        ),
        (
            "POST /devstoreaccount1/t HTTP/1.1\r\nX-HTTP-Method: PUT\r\nX-HTTP-Method: PUT",
            ErrorCode::XMethodIncorrectCount,
        ),
        ("PUT /devstoreaccount1/t HTTP/1.1", ErrorCode::MethodNotAllowed),
        ("HEAD /devstoreaccount1/t HTTP/1.1", ErrorCode::MethodNotAllowed),
        ("POST /a/b/c HTTP/1.1", ErrorCode::InvalidUri),
        ("DELETE /devstoreaccount1/t(PartitionKey='p') HTTP/1.1", ErrorCode::InvalidInput),
        ("POST /devstoreaccount1/Tables HTTP/1.1", ErrorCode::InvalidInput),
        ("PUT /devstoreaccount1/t?comp=acl HTTP/1.1", ErrorCode::InvalidInput),
        ("POST", ErrorCode::InvalidInput),
        ("POST /t HTTP/1.1\r\nbad header line", ErrorCode::InvalidInput),
        ("\u{1}POST /t HTTP/1.1", ErrorCode::InvalidInput),
    ];
    for (op, code) in cases {
        let e = err(&[insert("t", 0), (*op).to_owned()]);
        assert_eq!((e.failed_index(), e.code()), (Some(1), *code), "{op}");
        assert!(e.message().starts_with("1:"), "{op}");
        let api = ApiError::from(e);
        assert_eq!((api.code, api.message.starts_with("1:")), (*code, true));
    }
    let nested = "--batch_1\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n--cs\r\n\
Content-Type: multipart/mixed; boundary=x\r\n\r\n--x--\r\n--cs--\r\n--batch_1--";
    assert_eq!(p(CT, nested).unwrap_err().failed_index(), Some(0));

    // Outside a change set: a write alone, or a table operation.
    let lone =
        |line: &str| format!("--batch_1\r\nContent-Type: application/http\r\n\r\n{line}\r\n\r\n--batch_1--");
    let e = p(CT, &lone("DELETE /t(PartitionKey='a',RowKey='b') HTTP/1.1")).unwrap_err();
    assert_eq!((e.failed_index(), e.placement()), (Some(0), ErrorPlacement::BatchPart));
    let e = p(CT, &lone("GET /Tables HTTP/1.1")).unwrap_err();
    assert_eq!(e.message(), "0:The operation QueryTables is not supported in a batch.");
    let body = lone("GET /devstoreaccount1/t()?$filter=x HTTP/1.1");
    let req = p(CT, &body).unwrap();
    assert_eq!((req.kind, req.ops[0].query), (BatchKind::Query, Some("$filter=x")));
}

#[test]
fn error_display_and_conversion() {
    let e = BatchError::op(
        3,
        Some("4"),
        true,
        ErrorCode::EntityAlreadyExists,
        "The specified entity already exists.",
    );
    assert_eq!(e.to_string(), "EntityAlreadyExists: 3:The specified entity already exists.");
    assert_eq!((e.status(), e.content_id()), (409, Some("4")));
    assert_eq!(prefixed_message(0, "x"), "0:x");
    let e = BatchError::ContentType;
    assert_eq!((e.failed_index(), e.placement(), e.status()), (None, ErrorPlacement::Response, 400));
}

/// Content-ID: a request header wins even when empty (no ID then); otherwise the first
/// part header. Part headers may be folded and the part's Content-Type is matched as a
/// media type.
#[test]
fn content_ids_and_part_headers() {
    let part = |mime: &str, request_headers: &str| {
        format!(
            "--batch_1\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n--cs\r\n{mime}\r\n\r\n\
POST /devstoreaccount1/t HTTP/1.1\r\n{request_headers}\r\n\r\n{{}}\r\n--cs--\r\n--batch_1--"
        )
    };
    let cid = |mime: &str, request_headers: &str| {
        p(CT, &part(mime, request_headers)).map(|r| r.ops[0].content_id.as_deref().map(str::to_owned))
    };
    assert_eq!(cid("Content-ID: 5\r\ncontent-id: 6", "A: b"), Ok(Some("5".to_owned())));
    assert_eq!(cid("Content-ID:\r\nContent-ID: 6", "A: b"), Ok(None));
    assert_eq!(cid("Content-ID: 5", "Content-ID:"), Ok(None));
    assert_eq!(cid("Content-ID:\r\n 7", "A: b"), Ok(Some("7".to_owned())));
    assert_eq!(cid("Content-ID: 5", "content-id: 8\r\nContent-ID: 9"), Ok(Some("8".to_owned())));
    assert_eq!(cid("CONTENT-TYPE:  Application/HTTP ; msgtype=request", "A: b"), Ok(None));
    assert_eq!(cid("Content-Type: application/http\r\nContent-Type: text/plain", "A: b"), Ok(None));
    let refused = "0:The batch operation's part must have Content-Type application/http.";
    for mime in [
        "Content-Type: application/http; x=\"open",
        "Content-Type: text/plain\r\nContent-Type: application/http",
    ] {
        assert_eq!(p(CT, &part(mime, "A: b")).unwrap_err().message(), refused, "{mime}");
    }
    let e = p(CT, &part("Content-ID: 5\r\nbad", "A: b")).unwrap_err();
    assert_eq!(
        (e.message(), e.content_id()),
        ("0:The batch operation has malformed part headers.".to_owned(), None)
    );
    let e = p(CT, &part("Content-ID: 5", "Content-ID: 4\r\n\u{e9}bad")).unwrap_err();
    assert_eq!(
        (e.message(), e.content_id()),
        ("0:The batch operation has malformed headers.".to_owned(), None)
    );
    let e = p(CT, &part("Content-ID: 5", "Content-ID: 4\r\nX-HTTP-Method: GET")).unwrap_err();
    assert_eq!((e.code(), e.content_id()), (ErrorCode::XMethodIncorrectValue, Some("4")));
}

#[test]
fn request_line_urls() {
    let line = |l: &str| {
        let body = format!(
            "--batch_1\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n--cs\r\nContent-Type: application/http\r\n\r\n\
{l}\r\n\r\n{{}}\r\n--cs--\r\n--batch_1--"
        );
        p(CT, &body).map(|r| {
            let op = &r.ops[0];
            (op.method.to_owned(), op.url_path.clone().into_owned(), op.query.map(str::to_owned))
        })
    };
    let ok = |m: &str, path: &str, q: Option<&str>| Ok((m.to_owned(), path.to_owned(), q.map(str::to_owned)));
    assert_eq!(
        line("POST HtTpS://h:1/acct/t?timeout=3#x HTTP/1.1"),
        ok("POST", "/acct/t", Some("timeout=3"))
    );
    // Unicode white space is trimmed from the line but does not separate its parts.
    assert_eq!(line("\u{a0}POST\thttp://h/t HTTP/1.1\u{3000}"), ok("POST", "/t", None));
    assert_eq!(line("POST http://h/t\u{3000}HTTP/1.1"), ok("POST", "/t\u{3000}HTTP/1.1", None));
    assert_eq!(line("POST http://\u{e9}/t HTTP/1.1"), ok("POST", "/t", None));
    assert_eq!(line("POST HTTPS://\u{e9}\u{e9}/t?a HTTP/1.1"), ok("POST", "/t", Some("a")));
    // Not a scheme: read as a relative path.
    for l in ["POST httpx://h/t HTTP/1.1", "POST h\u{e9}ttp://h/t HTTP/1.1"] {
        assert_eq!(line(l).unwrap_err().code(), ErrorCode::InvalidUri, "{l}");
    }
}

/// The error part of a failed insert sent with `Prefer` says `Preference-Applied`, where
/// the service puts it (the Go SDK's recordings, `TestBatchError_storage`); an insert
/// without `Prefer` and an update with it do not.
#[test]
fn changeset_error_part_of_an_insert_with_prefer() {
    let prefer = |op: &str| format!("{op}\r\nPrefer: return-no-content");
    let with = insert("t", 1).replacen("HTTP/1.1\r\n", "HTTP/1.1\r\nPrefer: return-no-content\r\n", 1);
    let update = format!(
        "PUT /devstoreaccount1/t(PartitionKey='p',RowKey='2') HTTP/1.1\r\n{}\r\n\r\n{{}}",
        prefer("Content-Type: application/json")
    );
    let body = changeset(&[with, insert("t", 3), update]);
    let req = p(CT, &body).unwrap();
    let stamp = ErrorStamp { request_id: "id", time: "2024-02-26T20:27:45.3717695Z", xml: false };
    let err = ApiError::new(ErrorCode::EntityAlreadyExists);
    let names = |i: usize| -> Vec<&str> {
        changeset_error_part(&stamp, &OpReply::of(&req.ops[i], false), &err)
            .headers
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    };
    assert_eq!(
        names(0),
        [
            "X-Content-Type-Options",
            "Cache-Control",
            "Preference-Applied",
            "DataServiceVersion",
            "Content-Type"
        ]
    );
    let part = changeset_error_part(&stamp, &OpReply::of(&req.ops[0], false), &err);
    assert_eq!(part.headers[2].1, "return-no-content");
    assert_eq!(part.status, 409);
    assert!(String::from_utf8(part.body).unwrap().contains("\"0:The specified entity already exists."));
    for i in [1, 2] {
        assert!(!names(i).contains(&"Preference-Applied"), "op {i}: {:?}", names(i));
    }
}
