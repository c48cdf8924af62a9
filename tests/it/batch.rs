//! Black-box: entity group transactions (`POST /$batch`) over raw HTTP against the real
//! server (spec 1.4, 5). Request bodies are built by hand in the exact shapes the Python
//! (`azure-data-tables` 12.x) and JS (`@azure/data-tables` 13.x) SDKs send; responses are
//! taken apart with an independent, strict (CRLF) multipart reader.

use crate::common::*;
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------
// Request building
// ---------------------------------------------------------------------------------------

/// One operation of a change set (or the GET of a query batch).
#[derive(Clone, Debug)]
struct Op {
    method: String,
    /// As written on the request line (absolute or relative).
    url: String,
    /// Request headers of the operation (inside the `application/http` part).
    headers: Vec<(String, String)>,
    body: Option<String>,
    /// `Content-ID` in the MIME part headers (where the Python SDK puts it).
    mime_content_id: Option<String>,
}

impl Op {
    fn new(method: &str, url: impl Into<String>) -> Op {
        Op { method: method.into(), url: url.into(), headers: Vec::new(), body: None, mime_content_id: None }
    }
    fn header(mut self, k: &str, v: &str) -> Op {
        self.headers.push((k.into(), v.into()));
        self
    }
    fn json(mut self, v: Value) -> Op {
        self.headers.push(("Content-Type".into(), "application/json".into()));
        self.body = Some(v.to_string());
        self
    }
    fn cid(mut self, id: &str) -> Op {
        self.mime_content_id = Some(id.into());
        self
    }
}

/// URL prefixes for the operations' request lines.
struct Urls {
    /// `http://127.0.0.1:<port>/devstoreaccount1`
    absolute: String,
}

impl Urls {
    fn of(s: &TestServer) -> Urls {
        Urls { absolute: s.endpoint() }
    }
    /// `http://127.0.0.1:<port>/devstoreaccount1/<path>` (`path` starts with `/`).
    fn abs(&self, path: &str) -> String {
        format!("{}{}", self.absolute, path)
    }
}

/// Relative, path-style: `/devstoreaccount1/<path>`.
fn rel(path: &str) -> String {
    format!("/{ACCOUNT}{path}")
}

fn insert(url: String, entity: Value) -> Op {
    Op::new("POST", url)
        .header("Accept", "application/json;odata=minimalmetadata")
        .header("DataServiceVersion", "3.0")
        .json(entity)
}

fn replace(url: String, if_match: Option<&str>, props: Value) -> Op {
    let mut op = Op::new("PUT", url).header("Accept", "application/json").header("DataServiceVersion", "3.0");
    if let Some(m) = if_match {
        op = op.header("If-Match", m);
    }
    op.json(props)
}

fn merge(url: String, if_match: Option<&str>, props: Value) -> Op {
    let mut op =
        Op::new("PATCH", url).header("Accept", "application/json").header("DataServiceVersion", "3.0");
    if let Some(m) = if_match {
        op = op.header("If-Match", m);
    }
    op.json(props)
}

fn delete(url: String, if_match: &str) -> Op {
    Op::new("DELETE", url)
        .header("Accept", "application/json;odata=minimalmetadata")
        .header("DataServiceVersion", "3.0")
        .header("If-Match", if_match)
}

/// The operation part as the Python SDK writes it (MIME headers, request line, headers,
/// blank line, body), without the line end before the next delimiter.
fn op_part_python(op: &Op, eol: &str) -> String {
    let mut s = String::new();
    s += &format!("Content-Type: application/http{eol}Content-Transfer-Encoding: binary{eol}");
    if let Some(id) = &op.mime_content_id {
        s += &format!("Content-ID: {id}{eol}");
    }
    s += eol;
    s += &format!("{} {} HTTP/1.1{eol}", op.method, op.url);
    for (k, v) in &op.headers {
        s += &format!("{k}: {v}{eol}");
    }
    if let Some(b) = &op.body {
        s += &format!("Content-Length: {}{eol}", b.len());
    }
    s += eol;
    if let Some(b) = &op.body {
        s += b;
    }
    s
}

/// A change set body in the Python SDK's layout: (request Content-Type, body).
fn python_batch(ops: &[Op], eol: &str) -> (String, String) {
    let b = format!("batch_{}", uuid::Uuid::new_v4());
    let cs = format!("changeset_{}", uuid::Uuid::new_v4());
    let mut s = format!("--{b}{eol}Content-Type: multipart/mixed; boundary={cs}{eol}{eol}");
    for op in ops {
        s += &format!("--{cs}{eol}");
        s += &op_part_python(op, eol);
        s += eol;
    }
    s += &format!("--{cs}--{eol}{eol}--{b}--{eol}");
    (format!("multipart/mixed; boundary={b}"), s)
}

/// A change set body in the JS SDK's layout: lowercase MIME headers, a blank line after
/// the change set's Content-Type, no Content-ID, an extra CRLF before each body, no
/// blank line between the two close delimiters.
fn js_batch(ops: &[Op]) -> (String, String) {
    let b = format!("batch_{}", uuid::Uuid::new_v4());
    let cs = format!("changeset_{}", uuid::Uuid::new_v4());
    let mut s = format!("--{b}\r\ncontent-type: multipart/mixed; boundary={cs}\r\n\r\n\r\n");
    for op in ops {
        s +=
            &format!("--{cs}\r\ncontent-type: application/http\r\ncontent-transfer-encoding: binary\r\n\r\n");
        s += &format!("{} {} HTTP/1.1\r\n", op.method, op.url);
        for (k, v) in &op.headers {
            s += &format!("{k}: {v}\r\n");
        }
        s += "\r\n\r\n";
        if let Some(body) = &op.body {
            s += body;
        }
        s += "\r\n";
    }
    s += &format!("--{cs}--\r\n--{b}--\r\n");
    (format!("multipart/mixed; boundary={b}"), s)
}

/// A query batch: one top-level `application/http` GET part, no change set.
fn query_batch(url: &str) -> (String, String) {
    let b = format!("batch_{}", uuid::Uuid::new_v4());
    let s = format!(
        "--{b}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
         GET {url} HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\n\
         DataServiceVersion: 3.0;\r\n\r\n\r\n--{b}--\r\n"
    );
    (format!("multipart/mixed; boundary={b}"), s)
}

async fn post_batch(c: &Client, (content_type, body): (String, String)) -> Resp {
    c.send(
        "POST",
        "/$batch",
        &[
            ("Content-Type", content_type.as_str()),
            ("Accept", "application/json"),
            ("DataServiceVersion", "3.0"),
            ("MaxDataServiceVersion", "3.0;NetFx"),
        ],
        Some(&body),
    )
    .await
}

// ---------------------------------------------------------------------------------------
// Response parsing (strict: CRLF line ends, as the service writes them)
// ---------------------------------------------------------------------------------------

#[derive(Debug)]
struct Part {
    status: u16,
    status_line: String,
    /// Response headers of the part (after the status line), names lowercased, plus
    /// the part's MIME headers under the prefix `mime:`.
    headers: Vec<(String, String)>,
    body: String,
}

impl Part {
    fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }
    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("part body is not JSON ({e}): {:?}", self.body))
    }
    fn error_code(&self) -> String {
        self.json()["odata.error"]["code"].as_str().unwrap_or_default().to_owned()
    }
    fn error_message(&self) -> String {
        self.json()["odata.error"]["message"]["value"].as_str().unwrap_or_default().to_owned()
    }
}

#[derive(Debug)]
struct BatchResp {
    /// Whether the parts sat in a change set response (else: top-level, query style).
    in_changeset: bool,
    parts: Vec<Part>,
}

fn boundary_param(content_type: &str) -> String {
    let (_, b) =
        content_type.split_once("boundary=").unwrap_or_else(|| panic!("no boundary in {content_type:?}"));
    b.split(';').next().unwrap().trim().trim_matches('"').to_owned()
}

/// Splits `body` at delimiter lines of `boundary`; asserts CRLF framing and a close
/// delimiter. Returns the parts' contents.
fn split_strict(body: &str, boundary: &str) -> Vec<String> {
    let delim = format!("\r\n--{boundary}");
    assert!(
        body.starts_with(&format!("--{boundary}\r\n")),
        "multipart body must start with the delimiter --{boundary}: {body:?}"
    );
    let framed = format!("\r\n{body}");
    let mut parts = Vec::new();
    let mut closed = false;
    for seg in framed.split(delim.as_str()).skip(1) {
        if seg.starts_with("--") {
            closed = true;
            break;
        }
        let content =
            seg.strip_prefix("\r\n").unwrap_or_else(|| panic!("delimiter not followed by CRLF: {seg:?}"));
        parts.push(content.to_owned());
    }
    assert!(closed, "no close delimiter --{boundary}-- in {body:?}");
    parts
}

fn split_head(s: &str) -> (&str, &str) {
    s.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no blank line (CRLF CRLF) in {s:?}"))
}

fn parse_headers(block: &str) -> Vec<(String, String)> {
    block
        .split("\r\n")
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap_or_else(|| panic!("bad header line {l:?}"));
            (n.trim().to_ascii_lowercase(), v.trim().to_owned())
        })
        .collect()
}

fn find<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// Parses one `application/http` part (MIME headers, status line, headers, body).
fn parse_http_part(content: &str) -> Part {
    let (mime, rest) = split_head(content);
    let mime = parse_headers(mime);
    assert_eq!(find(&mime, "content-type"), Some("application/http"), "part MIME headers: {mime:?}");
    assert_eq!(find(&mime, "content-transfer-encoding"), Some("binary"));
    let (head, body) = split_head(rest);
    let (status_line, header_block) = head.split_once("\r\n").unwrap_or((head, ""));
    let mut it = status_line.splitn(3, ' ');
    assert_eq!(it.next(), Some("HTTP/1.1"), "status line {status_line:?}");
    let status: u16 =
        it.next().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("status line {status_line:?}"));
    let mut headers = parse_headers(header_block);
    headers.extend(mime.into_iter().map(|(n, v)| (format!("mime:{n}"), v)));
    Part { status, status_line: status_line.to_owned(), headers, body: body.to_owned() }
}

/// Checks the 202 envelope and returns the parts.
fn parse_batch(r: &Resp) -> BatchResp {
    assert_eq!(r.status, 202, "batch status; body: {}", r.body);
    let ct = r.header("content-type").expect("batch response Content-Type");
    assert!(ct.starts_with("multipart/mixed; boundary=batchresponse_"), "batch response Content-Type: {ct}");
    let top = split_strict(&r.body, &boundary_param(&ct));
    assert_eq!(top.len(), 1, "one top-level part expected: {}", r.body);
    let (mime, rest) = split_head(&top[0]);
    let mime = parse_headers(mime);
    let part_ct = find(&mime, "content-type").expect("top-level part Content-Type");
    if part_ct.starts_with("multipart/mixed") {
        assert!(
            part_ct.starts_with("multipart/mixed; boundary=changesetresponse_"),
            "change set response Content-Type: {part_ct}"
        );
        let parts = split_strict(rest, &boundary_param(part_ct)).iter().map(|p| parse_http_part(p)).collect();
        BatchResp { in_changeset: true, parts }
    } else {
        BatchResp { in_changeset: false, parts: vec![parse_http_part(&top[0])] }
    }
}

/// Asserts a failed change set: a 202 without `x-ms-error-code` (the code travels in the
/// failing part's body only), a single part with `status`, `code`, a message prefixed
/// `"<index>:"`, and returns the part.
fn assert_failed(r: &Resp, index: usize, status: u16, code: &str) -> Part {
    let b = parse_batch(r);
    assert_eq!(r.header("x-ms-error-code"), None, "a 202 batch answer names no error code");
    assert!(b.in_changeset, "a failed change set answers inside a change set response: {}", r.body);
    assert_eq!(b.parts.len(), 1, "a failed change set has exactly one part: {}", r.body);
    let p = b.parts.into_iter().next().unwrap();
    assert_eq!(p.status, status, "failing part status: {}", r.body);
    assert_eq!(p.error_code(), code, "failing part code: {}", r.body);
    let msg = p.error_message();
    assert!(msg.starts_with(&format!("{index}:")), "message must start with \"{index}:\": {msg:?}");
    p
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

async fn setup(table: &str) -> (TestServer, Client) {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table(table).await.status, 201);
    (server, c)
}

async fn seed(c: &Client, table: &str, pk: &str, rk: &str, props: Value) -> String {
    let mut e = props;
    e["PartitionKey"] = json!(pk);
    e["RowKey"] = json!(rk);
    let r = c.insert(table, e).await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.header("etag").unwrap()
}

/// All entities of a table as (PK, RK) pairs.
async fn keys(c: &Client, table: &str) -> Vec<(String, String)> {
    let r = c.send("GET", &format!("/{table}()"), &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["PartitionKey"].as_str().unwrap().to_owned(), e["RowKey"].as_str().unwrap().to_owned()))
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// User properties of an entity body (no keys, Timestamp, odata.*).
fn user_props(v: &Value) -> Value {
    let mut m = v.as_object().unwrap().clone();
    m.retain(|k, _| {
        !matches!(k.as_str(), "PartitionKey" | "RowKey" | "Timestamp") && !k.starts_with("odata.")
    });
    Value::Object(m)
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

/// The Python SDK's shape: absolute URLs, `Content-ID` in the MIME headers, no Prefer
/// (so the insert answers 201 with the entity).
#[tokio::test]
async fn python_shaped_change_set_with_absolute_urls() {
    let (s, c) = setup("pyshape").await;
    let u = Urls::of(&s);
    let etag_b = seed(&c, "pyshape", "p", "b", json!({"Old": 1, "Keep": "x"})).await;
    seed(&c, "pyshape", "p", "c", json!({"Old": 1, "Keep": "x"})).await;
    seed(&c, "pyshape", "p", "d", json!({"Gone": true})).await;
    seed(&c, "pyshape", "p", "e", json!({"Old": 1, "Keep": "x"})).await;

    let ops = vec![
        insert(
            u.abs("/pyshape"),
            json!({"PartitionKey": "p", "RowKey": "a", "V": 1, "Big": "12", "Big@odata.type": "Edm.Int64"}),
        )
        .cid("0"),
        replace(u.abs(&entity_path("pyshape", "p", "b")), Some(&etag_b), json!({"New": "b"})).cid("1"),
        merge(u.abs(&entity_path("pyshape", "p", "c")), Some("*"), json!({"Old": 2, "Added": 3.5})).cid("2"),
        delete(u.abs(&entity_path("pyshape", "p", "d")), "*").cid("3"),
        // upsert (merge): an existing row and a new one
        merge(u.abs(&entity_path("pyshape", "p", "e")), None, json!({"Old": 9})).cid("4"),
        merge(u.abs(&entity_path("pyshape", "p", "f")), None, json!({"F": "new"})).cid("5"),
        // upsert (replace): a new row
        replace(u.abs(&entity_path("pyshape", "p", "g")), None, json!({"G": "new"})).cid("6"),
    ];
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    let b = parse_batch(&r);
    assert!(b.in_changeset);
    let statuses: Vec<u16> = b.parts.iter().map(|p| p.status).collect();
    assert_eq!(statuses, vec![201, 204, 204, 204, 204, 204, 204], "{}", r.body);
    for (i, p) in b.parts.iter().enumerate() {
        assert_eq!(
            p.header("content-id"),
            Some(i.to_string().as_str()),
            "part {i} must echo its Content-ID: {:?}",
            p.headers
        );
        // Every write part carries the entity's new ETag; the delete (index 3) has none to give.
        if i != 3 {
            let etag = p.header("etag").unwrap_or_else(|| panic!("part {i} has no ETag: {:?}", p.headers));
            assert!(etag.starts_with("W/\"datetime'"), "part {i} ETag {etag}");
        }
    }
    assert_eq!(b.parts[0].status_line, "HTTP/1.1 201 Created");
    assert_eq!(b.parts[1].status_line, "HTTP/1.1 204 No Content");

    // The 201 part carries the entity as JSON, with its etag and location.
    let created = &b.parts[0];
    assert!(
        created.header("content-type").unwrap_or("").starts_with("application/json"),
        "{:?}",
        created.headers
    );
    let v = created.json();
    assert_eq!(v["PartitionKey"], "p");
    assert_eq!(v["RowKey"], "a");
    assert_eq!(v["V"], 1);
    assert_eq!(v["Big"], "12");
    assert_eq!(v["odata.etag"], created.header("etag").unwrap());
    let loc = created.header("location").expect("Location on the 201 part");
    assert!(loc.ends_with("/pyshape(PartitionKey='p',RowKey='a')"), "{loc}");

    // The data afterwards is exactly as expected, and the parts' etags are current.
    let get = |rk: &'static str| {
        let c = c.clone();
        async move { c.get("pyshape", "p", rk).await }
    };
    let a = get("a").await;
    assert_eq!(a.status, 200);
    assert_eq!(a.header("etag").unwrap(), created.header("etag").unwrap());
    assert_eq!(user_props(&a.json()), json!({"V": 1, "Big": "12", "Big@odata.type": "Edm.Int64"}));
    let rb = get("b").await;
    assert_eq!(rb.header("etag").unwrap(), b.parts[1].header("etag").unwrap());
    assert_ne!(rb.header("etag").unwrap(), etag_b);
    assert_eq!(user_props(&rb.json()), json!({"New": "b"}), "replace drops Old and Keep");
    let rc = get("c").await;
    assert_eq!(rc.header("etag").unwrap(), b.parts[2].header("etag").unwrap());
    assert_eq!(user_props(&rc.json()), json!({"Old": 2, "Keep": "x", "Added": 3.5}));
    // deleted
    get("d").await.assert_refused(404, ErrorCode::ResourceNotFound);
    assert_eq!(user_props(&get("e").await.json()), json!({"Old": 9, "Keep": "x"}));
    assert_eq!(user_props(&get("f").await.json()), json!({"F": "new"}));
    let rg = get("g").await;
    assert_eq!(rg.header("etag").unwrap(), b.parts[6].header("etag").unwrap());
    assert_eq!(user_props(&rg.json()), json!({"G": "new"}));
    assert_eq!(
        keys(&c, "pyshape").await,
        pairs(&[("p", "a"), ("p", "b"), ("p", "c"), ("p", "e"), ("p", "f"), ("p", "g")])
    );
}

/// The JS SDK's shape: lowercase MIME headers, extra blank lines, `Prefer:
/// return-no-content` on the insert, no Content-ID; here with relative URLs.
#[tokio::test]
async fn js_shaped_change_set_with_relative_urls_and_prefer() {
    let (_s, c) = setup("jsshape").await;
    let etag_y = seed(&c, "jsshape", "k", "y", json!({"N": 1, "S": "s"})).await;
    seed(&c, "jsshape", "k", "z", json!({"N": 1})).await;
    let ops = vec![
        insert(rel("/jsshape"), json!({"PartitionKey": "k", "RowKey": "x", "N": 7}))
            .header("Prefer", "return-no-content"),
        // the MERGE verb
        Op::new("MERGE", rel(&entity_path("jsshape", "k", "y")))
            .header("If-Match", &etag_y)
            .json(json!({"N": 2})),
        // X-HTTP-Method tunnelling inside the batch
        Op::new("POST", rel(&entity_path("jsshape", "k", "z")))
            .header("X-HTTP-Method", "DELETE")
            .header("If-Match", "*"),
    ];
    let r = post_batch(&c, js_batch(&ops)).await;
    let b = parse_batch(&r);
    let statuses: Vec<u16> = b.parts.iter().map(|p| p.status).collect();
    assert_eq!(statuses, vec![204, 204, 204], "{}", r.body);
    let ins = &b.parts[0];
    assert!(ins.body.is_empty(), "return-no-content: no body, got {:?}", ins.body);
    assert_eq!(ins.header("preference-applied"), Some("return-no-content"));
    let etag_x = ins.header("etag").expect("ETag on the 204 insert part");
    assert!(ins.header("location").unwrap_or("").ends_with("/jsshape(PartitionKey='k',RowKey='x')"));
    assert!(b.parts[1].header("etag").is_some(), "{:?}", b.parts[1].headers);

    let x = c.get("jsshape", "k", "x").await;
    assert_eq!(x.header("etag").unwrap(), etag_x);
    assert_eq!(user_props(&x.json()), json!({"N": 7}));
    assert_eq!(user_props(&c.get("jsshape", "k", "y").await.json()), json!({"N": 2, "S": "s"}));
    c.get("jsshape", "k", "z").await.assert_refused(404, ErrorCode::ResourceNotFound);

    // Relative URLs without the account segment, with and without the leading slash.
    let ops = vec![
        insert("/jsshape".into(), json!({"PartitionKey": "k", "RowKey": "w1"})),
        insert("jsshape".into(), json!({"PartitionKey": "k", "RowKey": "w2"})),
        merge(entity_path("jsshape", "k", "x"), Some("*"), json!({"M": 1})),
    ];
    let r = post_batch(&c, js_batch(&ops)).await;
    let statuses: Vec<u16> = parse_batch(&r).parts.iter().map(|p| p.status).collect();
    assert_eq!(statuses, vec![201, 201, 204], "{}", r.body);
    assert_eq!(keys(&c, "jsshape").await, pairs(&[("k", "w1"), ("k", "w2"), ("k", "x"), ("k", "y")]));
    assert_eq!(user_props(&c.get("jsshape", "k", "x").await.json()), json!({"N": 7, "M": 1}));
}

/// Without Prefer, an insert answers 201 with the JSON entity; with
/// `Prefer: return-content` it says so.
#[tokio::test]
async fn insert_part_returns_content_unless_told_otherwise() {
    let (s, c) = setup("content").await;
    let u = Urls::of(&s);
    let ops = vec![
        insert(u.abs("/content"), json!({"PartitionKey": "p", "RowKey": "1", "S": "one"})),
        insert(rel("/content"), json!({"PartitionKey": "p", "RowKey": "2", "S": "two"}))
            .header("Prefer", "return-content"),
        insert(rel("/content"), json!({"PartitionKey": "p", "RowKey": "3", "S": "three"}))
            .header("Prefer", "return-no-content"),
    ];
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    let b = parse_batch(&r);
    let statuses: Vec<u16> = b.parts.iter().map(|p| p.status).collect();
    assert_eq!(statuses, vec![201, 201, 204], "{}", r.body);
    for (i, s) in [(0, "one"), (1, "two")] {
        let v = b.parts[i].json();
        assert_eq!(v["S"], s);
        assert_eq!(v["RowKey"], (i + 1).to_string());
        assert!(v["Timestamp"].is_string(), "{v}");
    }
    assert_eq!(b.parts[1].header("preference-applied"), Some("return-content"));
    assert_eq!(keys(&c, "content").await, pairs(&[("p", "1"), ("p", "2"), ("p", "3")]));
}

/// Op 2 inserts an existing entity: 409 EntityAlreadyExists at index 2; the earlier
/// insert and replace are rolled back.
#[tokio::test]
async fn failure_at_index_2_conflict_rolls_back_everything() {
    let (s, c) = setup("atom409").await;
    let u = Urls::of(&s);
    let etag = seed(&c, "atom409", "p", "old", json!({"V": "orig"})).await;
    seed(&c, "atom409", "p", "dup", json!({"V": "orig"})).await;
    let ops = vec![
        insert(u.abs("/atom409"), json!({"PartitionKey": "p", "RowKey": "new", "V": 1})).cid("0"),
        replace(u.abs(&entity_path("atom409", "p", "old")), Some(&etag), json!({"V": "changed"})).cid("1"),
        insert(u.abs("/atom409"), json!({"PartitionKey": "p", "RowKey": "dup", "V": 2})).cid("2"),
        insert(u.abs("/atom409"), json!({"PartitionKey": "p", "RowKey": "after", "V": 3})).cid("3"),
    ];
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    let p = assert_failed(&r, 2, 409, "EntityAlreadyExists");
    assert_eq!(p.status_line, "HTTP/1.1 409 Conflict");
    assert_eq!(p.header("content-id"), Some("2"), "failing part echoes its Content-ID");
    assert_eq!(keys(&c, "atom409").await, pairs(&[("p", "dup"), ("p", "old")]));
    let old = c.get("atom409", "p", "old").await;
    assert_eq!(old.header("etag").unwrap(), etag, "earlier replace not applied");
    assert_eq!(old.json()["V"], "orig");
    assert_eq!(c.get("atom409", "p", "dup").await.json()["V"], "orig");
}

/// Op 2 updates with a stale etag: 412 UpdateConditionNotSatisfied; nothing applied.
#[tokio::test]
async fn failure_at_index_2_stale_etag_rolls_back_everything() {
    let (_s, c) = setup("atom412").await;
    let stale = seed(&c, "atom412", "p", "t", json!({"V": 1})).await;
    let r =
        c.send("MERGE", &entity_path("atom412", "p", "t"), &[("If-Match", "*")], Some(r#"{"V":2}"#)).await;
    assert_eq!(r.status, 204);
    let current = r.header("etag").unwrap();
    seed(&c, "atom412", "p", "m", json!({"M": "orig"})).await;
    let ops = vec![
        insert(rel("/atom412"), json!({"PartitionKey": "p", "RowKey": "new"})),
        merge(rel(&entity_path("atom412", "p", "m")), Some("*"), json!({"M": "merged", "X": 1})),
        replace(rel(&entity_path("atom412", "p", "t")), Some(&stale), json!({"V": 3})),
    ];
    let r = post_batch(&c, js_batch(&ops)).await;
    let p = assert_failed(&r, 2, 412, "UpdateConditionNotSatisfied");
    assert_eq!(p.status_line, "HTTP/1.1 412 Precondition Failed");
    assert_eq!(keys(&c, "atom412").await, pairs(&[("p", "m"), ("p", "t")]));
    assert_eq!(user_props(&c.get("atom412", "p", "m").await.json()), json!({"M": "orig"}));
    let t = c.get("atom412", "p", "t").await;
    assert_eq!(t.header("etag").unwrap(), current);
    assert_eq!(t.json()["V"], 2);
}

/// Op 2 deletes a missing entity: 404 ResourceNotFound; nothing applied.
#[tokio::test]
async fn failure_at_index_2_missing_delete_rolls_back_everything() {
    let (s, c) = setup("atom404").await;
    let u = Urls::of(&s);
    seed(&c, "atom404", "p", "d", json!({"V": 1})).await;
    let ops = vec![
        insert(u.abs("/atom404"), json!({"PartitionKey": "p", "RowKey": "new"})).cid("10"),
        delete(u.abs(&entity_path("atom404", "p", "d")), "*").cid("11"),
        delete(u.abs(&entity_path("atom404", "p", "missing")), "*").cid("12"),
    ];
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    let p = assert_failed(&r, 2, 404, "ResourceNotFound");
    assert_eq!(p.header("content-id"), Some("12"));
    assert_eq!(keys(&c, "atom404").await, pairs(&[("p", "d")]));
}

/// An operation whose body is not valid JSON fails at its index; nothing runs.
#[tokio::test]
async fn unparsable_operation_body_fails_at_its_index() {
    let (_s, c) = setup("badjson").await;
    let mut bad = insert(rel("/badjson"), json!({}));
    bad.body = Some("{not json".into());
    let ops = vec![insert(rel("/badjson"), json!({"PartitionKey": "p", "RowKey": "1"})), bad];
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    let b = parse_batch(&r);
    assert_eq!(b.parts.len(), 1, "{}", r.body);
    assert_eq!((b.parts[0].status, b.parts[0].error_code().as_str()), (400, "InvalidInput"), "{}", r.body);
    assert!(b.parts[0].error_message().starts_with("1:"), "{}", r.body);
    assert!(keys(&c, "badjson").await.is_empty());
}

#[tokio::test]
async fn different_partition_keys_are_refused_and_nothing_is_written() {
    let (_s, c) = setup("twopk").await;
    let ops = vec![
        insert(rel("/twopk"), json!({"PartitionKey": "a", "RowKey": "1"})),
        insert(rel("/twopk"), json!({"PartitionKey": "b", "RowKey": "1"})),
    ];
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    let p = assert_failed(&r, 1, 400, "CommandsInBatchActOnDifferentPartitions");
    assert!(
        p.error_message().starts_with("1:All commands in a batch must operate on same entity group."),
        "{}",
        p.error_message()
    );
    // Also when the second op addresses its entity by URL (delete).
    let ops = vec![
        insert(rel("/twopk"), json!({"PartitionKey": "a", "RowKey": "1"})),
        insert(rel("/twopk"), json!({"PartitionKey": "a", "RowKey": "2"})),
        delete(rel(&entity_path("twopk", "b", "1")), "*"),
    ];
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    assert_failed(&r, 2, 400, "CommandsInBatchActOnDifferentPartitions");
    assert!(keys(&c, "twopk").await.is_empty());
}

#[tokio::test]
async fn same_row_twice_is_invalid_duplicate_row() {
    let (_s, c) = setup("duprow").await;
    seed(&c, "duprow", "p", "r", json!({"V": 1})).await;
    let ops = vec![
        insert(rel("/duprow"), json!({"PartitionKey": "p", "RowKey": "other"})),
        merge(rel(&entity_path("duprow", "p", "r")), Some("*"), json!({"V": 2})),
        delete(rel(&entity_path("duprow", "p", "r")), "*"),
    ];
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    let p = assert_failed(&r, 2, 400, "InvalidDuplicateRow");
    // the service's message names no key (the Go SDK's recordings, tests/it/wire_batch.rs)
    let msg = p.error_message();
    assert!(msg.starts_with("2:The batch request contains multiple changes with same row key."), "{msg}");
    assert_eq!(keys(&c, "duprow").await, pairs(&[("p", "r")]));
    assert_eq!(c.get("duprow", "p", "r").await.json()["V"], 1);
}

#[tokio::test]
async fn one_hundred_operations_succeed_and_one_hundred_one_are_refused() {
    let (s, c) = setup("hundred").await;
    let u = Urls::of(&s);
    let ops = |n: usize, pk: &str| -> Vec<Op> {
        (0..n)
            .map(|i| {
                insert(u.abs("/hundred"), json!({"PartitionKey": pk, "RowKey": format!("{i:03}"), "I": i}))
                    .cid(&i.to_string())
            })
            .collect()
    };
    let r = post_batch(&c, python_batch(&ops(100, "ok"), "\r\n")).await;
    let b = parse_batch(&r);
    assert_eq!(b.parts.len(), 100);
    assert!(b.parts.iter().all(|p| p.status == 201 && p.header("etag").is_some()));
    for (i, p) in b.parts.iter().enumerate() {
        assert_eq!(p.json()["I"], i, "parts are in request order");
    }
    assert_eq!(keys(&c, "hundred").await.len(), 100);

    let r = post_batch(&c, python_batch(&ops(101, "no"), "\r\n")).await;
    let p = assert_failed(&r, 0, 400, "InvalidInput");
    assert!(
        p.error_message()
            .starts_with("0:The batch request operation exceeds the maximum 100 changes per change set."),
        "{}",
        p.error_message()
    );
    let all = keys(&c, "hundred").await;
    assert_eq!(all.len(), 100);
    assert!(all.iter().all(|(pk, _)| pk == "ok"));
}

#[tokio::test]
async fn body_over_4_mib_is_413_request_body_too_large() {
    let (_s, c) = setup("big").await;
    // 70 inserts of ~61 KB each: ~4.3 MB, under the server's read cap but over 4 MiB.
    let filler = "x".repeat(30_000);
    let ops: Vec<Op> = (0..70)
        .map(|i| {
            insert(
                rel("/big"),
                json!({"PartitionKey": "p", "RowKey": format!("{i}"), "A": filler, "B": filler}),
            )
        })
        .collect();
    let (ct, body) = python_batch(&ops, "\r\n");
    assert!(body.len() > 4 * 1024 * 1024 && body.len() < 4 * 1024 * 1024 + 60 * 1024, "{}", body.len());
    let r = post_batch(&c, (ct, body)).await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert_eq!(r.error_code(), "RequestBodyTooLarge");
    assert!(keys(&c, "big").await.is_empty());

    // Just under the limit, the same kind of batch runs.
    let ops: Vec<Op> = ops.into_iter().take(60).collect();
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    assert_eq!(parse_batch(&r).parts.len(), 60);
    assert_eq!(keys(&c, "big").await.len(), 60);
}

/// A batch far over 4 MiB (the Python SDK's own `test_batch_request_too_large` sends
/// ~13 MB and expects the 413 as `RequestTooLargeError`): the client must receive the
/// 413, not a reset connection.
#[tokio::test]
async fn body_far_over_4_mib_still_answers_413() {
    let (_s, c) = setup("huge").await;
    let filler = "x".repeat(30_000);
    let more: Vec<Op> = (0..100)
        .map(|i| {
            insert(
                rel("/huge"),
                json!({"PartitionKey": "p", "RowKey": format!("{i}"), "A": filler, "B": filler}),
            )
        })
        .collect();
    let (ct, body) = python_batch(&more, "\r\n");
    assert!(body.len() > 6_000_000);
    let r = post_batch(&c, (ct, body)).await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert_eq!(r.error_code(), "RequestBodyTooLarge");
    assert!(keys(&c, "huge").await.is_empty());
}

#[tokio::test]
async fn malformed_bodies_are_400_invalid_input() {
    let (_s, c) = setup("malformed").await;
    let good =
        python_batch(&[insert(rel("/malformed"), json!({"PartitionKey": "p", "RowKey": "r"}))], "\r\n");
    let cases: Vec<(&str, (String, String))> = vec![
        // no delimiter line at all
        ("garbage", (good.0.clone(), "this is not multipart".into())),
        // the boundary announced is not the one used
        ("wrong boundary", ("multipart/mixed; boundary=batch_other".into(), good.1.clone())),
        // cut off: no close delimiter
        ("truncated", (good.0.clone(), good.1[..good.1.find("{\"PartitionKey").unwrap() + 5].to_owned())),
    ];
    for (name, batch) in cases {
        let r = post_batch(&c, batch).await;
        assert_eq!(r.status, 400, "{name}: {}", r.body);
        assert_eq!(r.error_code(), "InvalidInput", "{name}: {}", r.body);
    }
    // Content-Type without a boundary.
    let r = post_batch(&c, ("multipart/mixed".into(), good.1.clone())).await;
    r.assert_refused_with(
        400,
        ErrorCode::InvalidInput,
        "The batch request must have Content-Type multipart/mixed with a boundary parameter.",
    );
    assert!(keys(&c, "malformed").await.is_empty());
    // The untouched body works.
    assert_eq!(parse_batch(&post_batch(&c, good).await).parts[0].status, 201);
}

#[tokio::test]
async fn query_batch_returns_the_entity_in_a_200_part() {
    let (s, c) = setup("qbatch").await;
    let u = Urls::of(&s);
    let etag = seed(&c, "qbatch", "p", "r", json!({"S": "hello", "I": 5})).await;
    let r = post_batch(&c, query_batch(&u.abs(&entity_path("qbatch", "p", "r")))).await;
    let b = parse_batch(&r);
    assert!(!b.in_changeset, "a query batch has no change set: {}", r.body);
    let p = &b.parts[0];
    assert_eq!(p.status_line, "HTTP/1.1 200 OK");
    assert_eq!(p.header("etag"), Some(etag.as_str()));
    assert!(p.header("content-type").unwrap_or("").starts_with("application/json"));
    let v = p.json();
    assert_eq!(v["PartitionKey"], "p");
    assert_eq!(v["RowKey"], "r");
    assert_eq!(user_props(&v), json!({"S": "hello", "I": 5}));
    assert_eq!(v["odata.etag"], etag);

    // relative URL, missing entity: a 404 part.
    let r = post_batch(&c, query_batch(&rel(&entity_path("qbatch", "p", "nope")))).await;
    let b = parse_batch(&r);
    assert_eq!(b.parts[0].status, 404, "{}", r.body);
    assert_eq!(b.parts[0].error_code(), "ResourceNotFound");
    assert!(b.parts[0].error_message().starts_with("0:"), "{}", r.body);

    // missing table: a 404 TableNotFound part.
    let r = post_batch(&c, query_batch(&rel(&entity_path("nosuchtable", "p", "r")))).await;
    let b = parse_batch(&r);
    assert!(!b.in_changeset);
    assert_eq!(b.parts[0].status, 404, "{}", r.body);
    assert_eq!(b.parts[0].error_code(), "TableNotFound");
}

#[tokio::test]
async fn batch_on_missing_table_is_table_not_found() {
    let (s, c) = setup("present").await;
    let u = Urls::of(&s);
    let ops = vec![
        insert(u.abs("/absent"), json!({"PartitionKey": "p", "RowKey": "1"})).cid("0"),
        insert(u.abs("/absent"), json!({"PartitionKey": "p", "RowKey": "2"})).cid("1"),
    ];
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    let p = assert_failed(&r, 0, 404, "TableNotFound");
    assert_eq!(p.status_line, "HTTP/1.1 404 Not Found");
    let r = c.send("GET", "/Tables", &[], None).await;
    let names: Vec<String> = r.table_names();
    assert_eq!(names, vec!["present".to_owned()], "no table was created");
}

#[tokio::test]
async fn lf_only_line_endings_work() {
    let (s, c) = setup("lfonly").await;
    let u = Urls::of(&s);
    let etag = seed(&c, "lfonly", "p", "u", json!({"V": 1})).await;
    seed(&c, "lfonly", "p", "d", json!({})).await;
    let ops = vec![
        insert(u.abs("/lfonly"), json!({"PartitionKey": "p", "RowKey": "i", "V": "ins"})).cid("0"),
        replace(u.abs(&entity_path("lfonly", "p", "u")), Some(&etag), json!({"V": 2})).cid("1"),
        delete(u.abs(&entity_path("lfonly", "p", "d")), "*").cid("2"),
    ];
    let (ct, body) = python_batch(&ops, "\n");
    assert!(!body.contains('\r'));
    let r = post_batch(&c, (ct, body)).await;
    let b = parse_batch(&r);
    let statuses: Vec<u16> = b.parts.iter().map(|p| p.status).collect();
    assert_eq!(statuses, vec![201, 204, 204], "{}", r.body);
    assert_eq!(b.parts[0].json()["V"], "ins");
    assert_eq!(keys(&c, "lfonly").await, pairs(&[("p", "i"), ("p", "u")]));
    assert_eq!(c.get("lfonly", "p", "i").await.json()["V"], "ins");
    assert_eq!(c.get("lfonly", "p", "u").await.json()["V"], 2);
}

/// What the Python SDK sends for `submit_transaction([])`: a change set with one empty
/// part. The service answers 202 with a single 400 `InvalidInput` part.
#[tokio::test]
async fn empty_change_set_answers_a_400_part() {
    let (_s, c) = setup("empty").await;
    let b = format!("batch_{}", uuid::Uuid::new_v4());
    let cs = format!("changeset_{}", uuid::Uuid::new_v4());
    let body = format!(
        "--{b}\r\nContent-Type: multipart/mixed; boundary={cs}\r\n\r\n--{cs}\r\n\r\n--{cs}--\r\n\r\n--{b}--\r\n"
    );
    let r = post_batch(&c, (format!("multipart/mixed; boundary={b}"), body)).await;
    let resp = parse_batch(&r);
    assert_eq!(resp.parts.len(), 1, "{}", r.body);
    assert_eq!(resp.parts[0].status, 400, "{}", r.body);
    assert_eq!(resp.parts[0].error_code(), "InvalidInput");
    // A change set with no part at all.
    let body =
        format!("--{b}\r\nContent-Type: multipart/mixed; boundary={cs}\r\n\r\n--{cs}--\r\n\r\n--{b}--\r\n");
    let r = post_batch(&c, (format!("multipart/mixed; boundary={b}"), body)).await;
    let resp = parse_batch(&r);
    assert_eq!(resp.parts[0].status, 400, "{}", r.body);
    assert_eq!(resp.parts[0].error_code(), "InvalidInput");
    assert!(keys(&c, "empty").await.is_empty());
}

#[tokio::test]
async fn batch_effects_survive_sigkill_and_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let mut server = TestServer::start_on(&dir, &[]);
    let c = server.client();
    assert_eq!(c.create_table("durable").await.status, 201);
    seed(&c, "durable", "p", "upd", json!({"V": 1, "K": "keep"})).await;
    seed(&c, "durable", "p", "del", json!({})).await;
    let mut ops: Vec<Op> = (0..50)
        .map(|i| insert(rel("/durable"), json!({"PartitionKey": "p", "RowKey": format!("n{i:02}"), "I": i})))
        .collect();
    ops.push(merge(rel(&entity_path("durable", "p", "upd")), Some("*"), json!({"V": 2})));
    ops.push(delete(rel(&entity_path("durable", "p", "del")), "*"));
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    let b = parse_batch(&r);
    assert_eq!(b.parts.len(), 52);
    assert!(b.parts.iter().all(|p| p.status / 100 == 2), "{}", r.body);
    server.kill(); // SIGKILL right after the 202

    let server = TestServer::start_on(&dir, &[]);
    let c = server.client();
    let all = keys(&c, "durable").await;
    assert_eq!(all.len(), 51, "{all:?}");
    assert!(!all.contains(&("p".to_owned(), "del".to_owned())));
    assert_eq!(c.get("durable", "p", "n49").await.json()["I"], 49);
    assert_eq!(user_props(&c.get("durable", "p", "upd").await.json()), json!({"V": 2, "K": "keep"}));
}

/// Readers never see a change set half applied (snapshot isolation): while change sets
/// of 100 merges (all rows get the same `V`) and of 100 inserts/100 deletes run, every
/// query of the partition sees all rows with one `V` and either all or none of the
/// inserted rows.
#[tokio::test]
async fn readers_never_see_a_partial_change_set() {
    let (_s, c) = setup("iso").await;
    let base: Vec<Op> = (0..100)
        .map(|i| insert(rel("/iso"), json!({"PartitionKey": "p", "RowKey": format!("a{i:02}"), "V": 0})))
        .collect();
    assert_eq!(parse_batch(&post_batch(&c, python_batch(&base, "\r\n")).await).parts.len(), 100);

    let writer = {
        let c = c.clone();
        tokio::spawn(async move {
            for k in 1..=15 {
                let merges: Vec<Op> = (0..100)
                    .map(|i| {
                        merge(rel(&entity_path("iso", "p", &format!("a{i:02}"))), Some("*"), json!({"V": k}))
                    })
                    .collect();
                let r = post_batch(&c, python_batch(&merges, "\r\n")).await;
                assert!(parse_batch(&r).parts.iter().all(|p| p.status == 204), "{}", r.body);
                let inserts: Vec<Op> = (0..100)
                    .map(|i| insert(rel("/iso"), json!({"PartitionKey": "p", "RowKey": format!("b{i:02}")})))
                    .collect();
                let r = post_batch(&c, python_batch(&inserts, "\r\n")).await;
                assert!(parse_batch(&r).parts.iter().all(|p| p.status == 201), "{}", r.body);
                let deletes: Vec<Op> = (0..100)
                    .map(|i| delete(rel(&entity_path("iso", "p", &format!("b{i:02}"))), "*"))
                    .collect();
                let r = post_batch(&c, python_batch(&deletes, "\r\n")).await;
                assert!(parse_batch(&r).parts.iter().all(|p| p.status == 204), "{}", r.body);
            }
        })
    };
    let mut reads = 0;
    while !writer.is_finished() {
        let r = c.send("GET", "/iso()", &[], None).await;
        assert_eq!(r.status, 200);
        let v = r.json();
        let rows = v["value"].as_array().unwrap();
        let a: Vec<&Value> = rows.iter().filter(|e| e["RowKey"].as_str().unwrap().starts_with('a')).collect();
        let b = rows.len() - a.len();
        assert_eq!(a.len(), 100);
        assert!(b == 0 || b == 100, "saw {b} of the 100 rows of one change set");
        let vs: std::collections::BTreeSet<String> = a.iter().map(|e| e["V"].to_string()).collect();
        assert_eq!(vs.len(), 1, "saw a change set of merges half applied: V in {vs:?}");
        reads += 1;
    }
    writer.await.unwrap();
    assert!(reads > 0);
    assert_eq!(c.get("iso", "p", "a42").await.json()["V"], 15);
}

/// A batch whose request fails authentication is refused as a whole (not a 202) and
/// nothing runs.
#[tokio::test]
async fn unauthenticated_batch_is_refused_as_a_whole() {
    let (_s, c) = setup("authz").await;
    let mut bad = c.clone();
    bad.key = "A".repeat(86) + "==";
    let ops = vec![insert(rel("/authz"), json!({"PartitionKey": "p", "RowKey": "r"}))];
    let r = post_batch(&bad, python_batch(&ops, "\r\n")).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(r.error_code(), "AuthenticationFailed");
    assert!(keys(&c, "authz").await.is_empty());
}

#[tokio::test]
async fn mixed_url_forms_work_and_another_account_is_refused() {
    let (_s, c) = setup("mixed").await;
    // path-style and host-style (no account segment) request lines in one change set
    let ops = vec![
        insert(rel("/mixed"), json!({"PartitionKey": "a", "RowKey": "1"})),
        insert("/mixed".to_owned(), json!({"PartitionKey": "a", "RowKey": "2"})),
    ];
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(keys(&c, "mixed").await, pairs(&[("a", "1"), ("a", "2")]));
    // an operation addressed to another account fails at its index; nothing is written
    let ops = vec![
        insert(rel("/mixed"), json!({"PartitionKey": "a", "RowKey": "3"})),
        insert("/otheracct/mixed".to_owned(), json!({"PartitionKey": "a", "RowKey": "4"})),
    ];
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    assert_failed(&r, 1, 400, "InvalidInput");
    assert_eq!(keys(&c, "mixed").await.len(), 2);
}

/// Point reads (served from the entity cache once read) see every change a batch makes,
/// and nothing of a batch that failed; a change set of ten operations also takes the
/// absent-row walk (inserts between and beside stored rows), and Delete Table then a
/// re-create leaves nothing to read.
#[tokio::test]
async fn point_reads_follow_batches_and_table_recreation() {
    let (s, c) = setup("cached").await;
    let u = Urls::of(&s);
    for rk in ["r0", "r1", "r2", "r3", "r5"] {
        seed(&c, "cached", "p", rk, json!({"A": 1, "Long": "x".repeat(300)})).await;
    }
    for rk in ["r0", "r1", "r2", "r3", "r5"] {
        assert_eq!(c.get("cached", "p", rk).await.json()["A"], 1); // now cached
    }
    let at = |rk: &str| u.abs(&entity_path("cached", "p", rk));
    let mut ops = vec![
        merge(at("r0"), Some("*"), json!({"A": 2})).cid("1"),
        replace(at("r1"), Some("*"), json!({"Z": 1})).cid("2"),
        delete(at("r2"), "*").cid("3"),
    ];
    for (i, rk) in ["r4", "r6", "r7", "r8", "r9", "q", "s"].iter().enumerate() {
        ops.push(
            insert(u.abs("/cached"), json!({"PartitionKey": "p", "RowKey": rk, "N": i}))
                .cid(&format!("{}", i + 4)),
        );
    }
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert!(parse_batch(&r).parts.iter().all(|p| p.status < 300), "{}", r.body);
    let r0 = c.get("cached", "p", "r0").await.json();
    assert_eq!((r0["A"].clone(), r0["Long"].as_str().map(str::len)), (json!(2), Some(300)));
    let r1 = c.get("cached", "p", "r1").await.json();
    assert!(r1.get("A").is_none() && r1.get("Long").is_none() && r1["Z"] == 1, "{r1}");
    c.get("cached", "p", "r2").await.assert_refused(404, ErrorCode::ResourceNotFound);
    assert_eq!(c.get("cached", "p", "r6").await.json()["N"], 1);

    // a failed change set changes nothing a point read sees
    let ops = vec![
        merge(at("r3"), Some("*"), json!({"A": 9})).cid("1"),
        insert(u.abs("/cached"), json!({"PartitionKey": "p", "RowKey": "r5"})).cid("2"),
    ];
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    assert_failed(&r, 1, 409, "EntityAlreadyExists");
    assert_eq!(c.get("cached", "p", "r3").await.json()["A"], 1);

    assert_eq!(c.send("DELETE", "/Tables('cached')", &[], None).await.status, 204);
    assert_eq!(c.create_table("cached").await.status, 201);
    for rk in ["r0", "r3", "r6"] {
        c.get("cached", "p", rk).await.assert_refused(404, ErrorCode::ResourceNotFound);
    }
}

/// In a change set, as for single requests, a PUT or MERGE writes the entity its URL
/// names: keys in the body do not move the write.
#[tokio::test]
async fn url_keys_win_over_body_keys_in_a_change_set() {
    let (s, c) = setup("urlKeysB").await;
    let u = Urls::of(&s);
    seed(&c, "urlKeysB", "p", "m", json!({"V": "orig"})).await;
    let elsewhere = |v: i32| json!({"PartitionKey": "q", "RowKey": "elsewhere", "V": v});
    let ops = vec![
        replace(u.abs(&entity_path("urlKeysB", "p", "r")), None, elsewhere(1)).cid("0"),
        merge(u.abs(&entity_path("urlKeysB", "p", "m")), Some("*"), elsewhere(2)).cid("1"),
    ];
    let r = post_batch(&c, python_batch(&ops, "\r\n")).await;
    let b = parse_batch(&r);
    assert_eq!(b.parts.iter().map(|p| p.status).collect::<Vec<_>>(), [204, 204], "{}", r.body);
    assert_eq!(keys(&c, "urlKeysB").await, pairs(&[("p", "m"), ("p", "r")]));
    assert_eq!(c.get("urlKeysB", "p", "r").await.json()["V"], 1);
    assert_eq!(c.get("urlKeysB", "p", "m").await.json()["V"], 2);
}

/// A change-set write with an `If-Match` that is not a weak ETag, or with
/// `If-None-Match`, fails at its index with 400 `InvalidInput`; nothing is written.
#[tokio::test]
async fn strong_if_match_or_if_none_match_fail_the_change_set_at_their_index() {
    let (s, c) = setup("condB").await;
    let u = Urls::of(&s);
    seed(&c, "condB", "p", "a", json!({"V": "orig"})).await;
    let url = u.abs(&entity_path("condB", "p", "a"));
    let first = || insert(u.abs("/condB"), json!({"PartitionKey": "p", "RowKey": "new"})).cid("0");
    for second in [
        replace(url.clone(), Some("\"not-weak\""), json!({"V": 1})),
        merge(url.clone(), Some("\"not-weak\""), json!({"V": 1})),
        replace(url.clone(), None, json!({"V": 1})).header("If-None-Match", "*"),
        delete(url.clone(), "\"not-weak\""),
    ] {
        let r = post_batch(&c, python_batch(&[first(), second.cid("1")], "\r\n")).await;
        assert_failed(&r, 1, 400, "InvalidInput");
        assert_eq!(keys(&c, "condB").await, pairs(&[("p", "a")]), "a failed change set wrote");
        assert_eq!(c.get("condB", "p", "a").await.json()["V"], "orig");
    }
}
