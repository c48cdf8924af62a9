//! Black-box: access control over raw HTTP against the real server (spec 1.1, 1.2, 1.7,
//! 1.10): shared access signatures (account and table, signed here by an independent
//! implementation of the documented string-to-sign), table key ranges (also inside a
//! batch), stored access policies (Get/Set Table ACL), service properties and stats, CORS
//! (preflight and actual requests), SharedKey date skew, and `AZURITE_ACCOUNTS` isolation.

use crate::common::*;
use serde_json::{json, Value};

/// The message of a write outside a table SAS's key range.
const OUTSIDE_THE_RANGE: &str =
    "This request is not authorized to perform this operation: the entity is outside the SAS key range.";
/// The message of a CORS preflight without `Access-Control-Request-Method`.
const NO_REQUEST_METHOD: &str =
    "A CORS preflight request must carry an Access-Control-Request-Method header.";

const SV: &str = "2019-02-02";

// ---------------------------------------------------------------------------------------
// SAS tokens, signed as the documentation says
// ---------------------------------------------------------------------------------------

/// `YYYY-MM-DDThh:mm:ssZ`, `minutes` from now (as the SDKs write SAS times).
fn sas_time(minutes: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::minutes(minutes)).format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// The fields of a table (service) SAS; `None`/empty = absent.
#[derive(Clone, Default)]
struct TableSas {
    tn: String,
    sp: Option<String>,
    st: Option<String>,
    se: Option<String>,
    si: Option<String>,
    sip: Option<String>,
    spr: Option<String>,
    spk: Option<String>,
    srk: Option<String>,
    epk: Option<String>,
    erk: Option<String>,
}

impl TableSas {
    /// `sp` on `tn`, valid from 5 minutes ago for an hour.
    fn new(tn: &str, sp: &str) -> TableSas {
        TableSas {
            tn: tn.into(),
            sp: Some(sp.into()),
            st: Some(sas_time(-5)),
            se: Some(sas_time(60)),
            ..Default::default()
        }
    }

    fn range(mut self, spk: &str, srk: &str, epk: &str, erk: &str) -> TableSas {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        (self.spk, self.srk, self.epk, self.erk) = (some(spk), some(srk), some(epk), some(erk));
        self
    }

    /// The query string (without `?`), signed with `key` for `account`:
    /// `sp\nst\nse\n/table/{account}/{lowercase tn}\nsi\nsip\nspr\nsv\nspk\nsrk\nepk\nerk`.
    fn token_for(&self, account: &str, key: &str) -> String {
        let o = |v: &Option<String>| v.clone().unwrap_or_default();
        let sts = [
            o(&self.sp),
            o(&self.st),
            o(&self.se),
            format!("/table/{account}/{}", self.tn.to_lowercase()),
            o(&self.si),
            o(&self.sip),
            o(&self.spr),
            SV.to_owned(),
            o(&self.spk),
            o(&self.srk),
            o(&self.epk),
            o(&self.erk),
        ]
        .join("\n");
        let sig = sign(key, &sts);
        let mut q = vec![format!("sv={SV}"), format!("tn={}", enc(&self.tn))];
        for (name, v) in [
            ("sp", &self.sp),
            ("st", &self.st),
            ("se", &self.se),
            ("si", &self.si),
            ("sip", &self.sip),
            ("spr", &self.spr),
            ("spk", &self.spk),
            ("srk", &self.srk),
            ("epk", &self.epk),
            ("erk", &self.erk),
        ] {
            if let Some(v) = v {
                q.push(format!("{name}={}", enc(v)));
            }
        }
        q.push(format!("sig={}", enc(&sig)));
        q.join("&")
    }

    fn token(&self) -> String {
        self.token_for(ACCOUNT, KEY)
    }
}

/// The fields of an account SAS.
#[derive(Clone)]
struct AccountSas {
    ss: String,
    srt: String,
    sp: String,
    st: Option<String>,
    se: String,
    sip: Option<String>,
    spr: Option<String>,
}

impl AccountSas {
    fn new(srt: &str, sp: &str) -> AccountSas {
        AccountSas {
            ss: "t".into(),
            srt: srt.into(),
            sp: sp.into(),
            st: Some(sas_time(-5)),
            se: sas_time(60),
            sip: None,
            spr: None,
        }
    }

    /// `account\nsp\nss\nsrt\nst\nse\nsip\nspr\nsv\n` (sv < 2020-12-06: no encryption scope).
    fn token(&self) -> String {
        let o = |v: &Option<String>| v.clone().unwrap_or_default();
        let sts = format!(
            "{ACCOUNT}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{SV}\n",
            self.sp,
            self.ss,
            self.srt,
            o(&self.st),
            self.se,
            o(&self.sip),
            o(&self.spr)
        );
        let sig = sign(KEY, &sts);
        let mut q = vec![
            format!("sv={SV}"),
            format!("ss={}", enc(&self.ss)),
            format!("srt={}", enc(&self.srt)),
            format!("sp={}", enc(&self.sp)),
            format!("se={}", enc(&self.se)),
        ];
        for (name, v) in [("st", &self.st), ("sip", &self.sip), ("spr", &self.spr)] {
            if let Some(v) = v {
                q.push(format!("{name}={}", enc(v)));
            }
        }
        q.push(format!("sig={}", enc(&sig)));
        q.join("&")
    }
}

// ---------------------------------------------------------------------------------------
// Unsigned requests (SAS, anonymous preflight) and response helpers
// ---------------------------------------------------------------------------------------

/// Sends an unsigned request to `http://127.0.0.1:{port}{path_and_query}` with the usual
/// Table headers (unless overridden) plus `headers`.
async fn raw(
    port: u16,
    method: &str,
    path_and_query: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Resp {
    let url = format!("http://127.0.0.1:{port}{path_and_query}");
    let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = reqwest::Client::new().request(m, url);
    let defaults = [
        ("Accept", "application/json;odata=minimalmetadata"),
        ("x-ms-version", SV),
        ("DataServiceVersion", "3.0"),
        ("x-ms-date", &now_rfc1123()),
    ];
    for (k, v) in defaults {
        if !headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(k)) {
            req = req.header(k, v);
        }
    }
    // An empty value only suppresses the default of that name.
    for (k, v) in headers.iter().filter(|(_, v)| !v.is_empty()) {
        req = req.header(*k, *v);
    }
    if let Some(b) = body {
        if !headers.iter().any(|(h, _)| h.eq_ignore_ascii_case("content-type")) {
            req = req.header("Content-Type", "application/json");
        }
        req = req.body(b.to_owned());
    }
    Resp::read(req.send().await.expect("request failed")).await
}

/// An unsigned request on the dev account with a SAS query appended to `path`
/// (`path` may already carry a query).
async fn sas(
    port: u16,
    token: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Resp {
    let sep = if path.contains('?') { '&' } else { '?' };
    raw(port, method, &format!("/{ACCOUNT}{path}{sep}{token}"), headers, body).await
}

/// The error code in a response's body: the OData JSON body's, or an XML
/// `<Code>`/`<code>` element's.
fn code_of(r: &Resp) -> String {
    if let Ok(v) = serde_json::from_str::<Value>(&r.body) {
        if let Some(c) = v["odata.error"]["code"].as_str() {
            return c.to_owned();
        }
    }
    for tag in ["Code", "code", "m:code"] {
        if let Some(c) = texts(&r.body, tag).into_iter().next() {
            return c;
        }
    }
    String::new()
}

/// The status, the body's code and `x-ms-error-code` are all those of `code`.
#[track_caller]
fn assert_error(r: &Resp, status: u16, code: &str, what: &str) {
    assert_eq!(r.status, status, "{what}: {}", r.body);
    assert_eq!(code_of(r), code, "{what}: {}", r.body);
    assert_eq!(r.header("x-ms-error-code").as_deref(), Some(code), "{what}: x-ms-error-code");
}

/// Every text of `<tag>…</tag>` in `xml` (no nesting of the same tag; attributes allowed).
fn texts(xml: &str, tag: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(i) = rest.find(&format!("<{tag}")) {
        let after = &rest[i + tag.len() + 1..];
        let Some(gt) = after.find('>') else { break };
        let (open, body) = (&after[..gt], &after[gt + 1..]);
        if !(open.is_empty() || open.starts_with(' ') || open.starts_with('/')) {
            rest = after; // a longer tag name with this prefix
            continue;
        }
        if open.ends_with('/') {
            out.push(String::new());
            rest = body;
            continue;
        }
        let close = format!("</{tag}>");
        let Some(end) = body.find(&close) else { break };
        out.push(body[..end].to_owned());
        rest = &body[end + close.len()..];
    }
    out
}

/// The text of the first `<tag>`; panics if absent.
#[track_caller]
fn text(xml: &str, tag: &str) -> String {
    texts(xml, tag).into_iter().next().unwrap_or_else(|| panic!("no <{tag}> in {xml}"))
}

/// `(PartitionKey, RowKey)` of every entity of a query response.
fn keys_of(r: &Resp) -> Vec<(String, String)> {
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["value"]
        .as_array()
        .unwrap_or_else(|| panic!("no value array: {}", r.body))
        .iter()
        .map(|e| (e["PartitionKey"].as_str().unwrap().to_owned(), e["RowKey"].as_str().unwrap().to_owned()))
        .collect()
}

/// All entities of `table` through SharedKey, in (PK, RK) order.
async fn all_keys(c: &Client, table: &str) -> Vec<(String, String)> {
    keys_of(&c.send("GET", &format!("/{table}()"), &[], None).await)
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// A table of 16 entities `p0..p3` × `r0..r3` (property `n` = 10·p + r).
async fn grid(c: &Client, table: &str) {
    assert_eq!(c.create_table(table).await.status, 201);
    for p in 0..4 {
        for r in 0..4 {
            let e = json!({"PartitionKey": format!("p{p}"), "RowKey": format!("r{r}"), "n": 10 * p + r});
            assert_eq!(c.insert(table, e).await.status, 201);
        }
    }
}

fn entity_url(table: &str, pk: &str, rk: &str) -> String {
    entity_path(table, pk, rk)
}

// ---------------------------------------------------------------------------------------
// Table SAS
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn table_sas_signature_and_validity_window() {
    let server = TestServer::start();
    let c = server.client();
    let port = server.port;
    assert_eq!(c.create_table("sasWin").await.status, 201);
    assert_eq!(c.insert("sasWin", json!({"PartitionKey": "p", "RowKey": "r", "v": 1})).await.status, 201);
    let get = entity_url("sasWin", "p", "r");

    let good = TableSas::new("sasWin", "r");
    let r = sas(port, &good.token(), "GET", &get, &[], None).await;
    assert_eq!(r.status, 200, "valid table SAS: {}", r.body);
    assert_eq!(r.json()["v"], 1);
    // The table name is signed in lower case whatever its case in `tn`.
    let lower = TableSas { tn: "saswin".into(), ..good.clone() };
    assert_eq!(sas(port, &lower.token(), "GET", &get, &[], None).await.status, 200);

    // A tampered signature: one character of the base64 changed.
    let token = good.token();
    let (head, sig) = token.split_once("sig=").unwrap();
    let sig = percent_encoding::percent_decode_str(sig).decode_utf8().unwrap().to_string();
    let first = if sig.starts_with('A') { 'B' } else { 'A' };
    let tampered = format!("{head}sig={}", enc(&format!("{first}{}", &sig[1..])));
    let r = sas(port, &tampered, "GET", &get, &[], None).await;
    assert_error(&r, 403, "AuthenticationFailed", "tampered signature");
    // A changed field under the same signature.
    let widened = token.replace("sp=r", "sp=raud");
    assert_ne!(widened, token);
    let r = sas(port, &widened, "DELETE", &get, &[("If-Match", "*")], None).await;
    assert_error(&r, 403, "AuthenticationFailed", "permissions changed after signing");
    // Signed with another key.
    let other_key = "b3RoZXIga2V5IG90aGVyIGtleSBvdGhlciBrZXkgb3RoZXIga2V5IG90aGVyIGtleQ==";
    let r = sas(port, &good.token_for(ACCOUNT, other_key), "GET", &get, &[], None).await;
    assert_error(&r, 403, "AuthenticationFailed", "wrong key");

    // Expired, and not yet valid.
    let expired = TableSas { st: Some(sas_time(-120)), se: Some(sas_time(-60)), ..good.clone() };
    let r = sas(port, &expired.token(), "GET", &get, &[], None).await;
    assert_error(&r, 403, "AuthenticationFailed", "expired");
    let future = TableSas { st: Some(sas_time(60)), se: Some(sas_time(120)), ..good.clone() };
    let r = sas(port, &future.token(), "GET", &get, &[], None).await;
    assert_error(&r, 403, "AuthenticationFailed", "not yet valid");
    // No start: valid until expiry.
    let no_start = TableSas { st: None, ..good.clone() };
    assert_eq!(sas(port, &no_start.token(), "GET", &get, &[], None).await.status, 200);

    // Nothing was deleted by the refused DELETE.
    assert_eq!(c.get("sasWin", "p", "r").await.status, 200);
}

#[tokio::test]
async fn table_sas_permissions_and_scope() {
    let server = TestServer::start();
    let c = server.client();
    let port = server.port;
    for t in ["sasPerm", "sasOther"] {
        assert_eq!(c.create_table(t).await.status, 201);
        assert_eq!(c.insert(t, json!({"PartitionKey": "p", "RowKey": "r", "v": 1})).await.status, 201);
    }
    let at = |rk: &str| entity_url("sasPerm", "p", rk);
    let tok = |sp: &str| TableSas::new("sasPerm", sp).token();
    let body = |v: i64| json!({"v": v}).to_string();

    // r: reads only.
    assert_eq!(sas(port, &tok("r"), "GET", "/sasPerm()", &[], None).await.status, 200);
    let ins = json!({"PartitionKey": "p", "RowKey": "new", "v": 1}).to_string();
    let r = sas(port, &tok("r"), "POST", "/sasPerm", &[], Some(&ins)).await;
    assert_error(&r, 403, "AuthorizationPermissionMismatch", "insert with sp=r");
    let r = sas(port, &tok("r"), "DELETE", &at("r"), &[("If-Match", "*")], None).await;
    assert_error(&r, 403, "AuthorizationPermissionMismatch", "delete with sp=r");
    // a: no reads.
    let r = sas(port, &tok("a"), "GET", &at("r"), &[], None).await;
    assert_error(&r, 403, "AuthorizationPermissionMismatch", "read with sp=a");
    assert_eq!(sas(port, &tok("a"), "POST", "/sasPerm", &[], Some(&ins)).await.status, 201);

    // Update (If-Match) needs u; the upserts (no If-Match) need a and u.
    let r = sas(port, &tok("u"), "PUT", &at("r"), &[("If-Match", "*")], Some(&body(2))).await;
    assert_eq!(r.status, 204, "update with sp=u: {}", r.body);
    let r = sas(port, &tok("u"), "MERGE", &at("r"), &[("If-Match", "*")], Some(&body(3))).await;
    assert_eq!(r.status, 204, "merge with sp=u: {}", r.body);
    for sp in ["u", "a", "r", "rd"] {
        for method in ["PUT", "MERGE"] {
            let r = sas(port, &tok(sp), method, &at("up"), &[], Some(&body(9))).await;
            assert_error(
                &r,
                403,
                "AuthorizationPermissionMismatch",
                &format!("upsert {method} with sp={sp}"),
            );
        }
    }
    // a refused upsert writes nothing
    c.get("sasPerm", "p", "up").await.assert_refused(404, ErrorCode::ResourceNotFound);
    let r = sas(port, &tok("au"), "PUT", &at("up"), &[], Some(&body(4))).await;
    assert_eq!(r.status, 204, "insert-or-replace with sp=au: {}", r.body);
    let r = sas(port, &tok("au"), "MERGE", &at("up"), &[], Some(&body(5))).await;
    assert_eq!(r.status, 204, "insert-or-merge with sp=au: {}", r.body);
    assert_eq!(c.get("sasPerm", "p", "up").await.json()["v"], 5);
    let r = sas(port, &tok("d"), "DELETE", &at("up"), &[("If-Match", "*")], None).await;
    assert_eq!(r.status, 204, "delete with sp=d: {}", r.body);

    // Another table, and table-level operations: AuthorizationFailure.
    let all = tok("raud");
    let r = sas(port, &all, "GET", &entity_url("sasOther", "p", "r"), &[], None).await;
    assert_error(&r, 403, "AuthorizationFailure", "read of another table");
    let r = sas(port, &all, "GET", "/sasOther()", &[], None).await;
    assert_error(&r, 403, "AuthorizationFailure", "query of another table");
    let r = sas(port, &all, "POST", "/sasOther", &[], Some(&ins)).await;
    assert_error(&r, 403, "AuthorizationFailure", "insert into another table");
    let r = sas(port, &all, "GET", "/Tables", &[], None).await;
    assert_error(&r, 403, "AuthorizationFailure", "list tables");
    let r = sas(port, &all, "POST", "/Tables", &[], Some(r#"{"TableName":"sasNew"}"#)).await;
    assert_error(&r, 403, "AuthorizationFailure", "create table");
    let r = sas(port, &all, "DELETE", "/Tables('sasPerm')", &[], None).await;
    assert_error(&r, 403, "AuthorizationFailure", "delete table");
    let r = sas(port, &all, "GET", "/sasPerm?comp=acl", &[], None).await;
    assert_error(&r, 403, "AuthorizationFailure", "get table ACL");
    let r = sas(port, &all, "GET", "/?restype=service&comp=properties", &[], None).await;
    assert_error(&r, 403, "AuthorizationFailure", "get service properties");

    // Nothing happened to the tables.
    let names: Vec<String> = c.send("GET", "/Tables", &[], None).await.table_names();
    assert_eq!(names, ["sasOther", "sasPerm"]);
    assert_eq!(all_keys(&c, "sasOther").await, pairs(&[("p", "r")]));
}

/// `spk=p1, srk=r2, epk=p2, erk=r1`: (PK > p1 ∨ (PK = p1 ∧ RK ≥ r2)) ∧ (PK < p2 ∨ (PK = p2 ∧ RK ≤ r1)).
fn in_range(pk: &str, rk: &str) -> bool {
    (pk > "p1" || (pk == "p1" && rk >= "r2")) && (pk < "p2" || (pk == "p2" && rk <= "r1"))
}

#[tokio::test]
async fn table_sas_key_range_limits_queries_and_writes() {
    let server = TestServer::start();
    let c = server.client();
    let port = server.port;
    grid(&c, "sasRange").await;
    let before = all_keys(&c, "sasRange").await;
    assert_eq!(before.len(), 16);
    let expected: Vec<_> = before.iter().filter(|(p, r)| in_range(p, r)).cloned().collect();
    assert_eq!(expected, pairs(&[("p1", "r2"), ("p1", "r3"), ("p2", "r0"), ("p2", "r1")]));
    let tok = TableSas::new("sasRange", "raud").range("p1", "r2", "p2", "r1").token();

    // Queries see only the range.
    let r = sas(port, &tok, "GET", "/sasRange()", &[], None).await;
    assert_eq!(keys_of(&r), expected);
    let filter = enc("PartitionKey ge 'p0' and n lt 21");
    let r = sas(port, &tok, "GET", &format!("/sasRange()?$filter={filter}"), &[], None).await;
    assert_eq!(keys_of(&r), pairs(&[("p1", "r2"), ("p1", "r3"), ("p2", "r0")]));
    // Paging through the range one entity at a time, with the same token.
    let mut seen = Vec::new();
    let mut next: Option<(String, String)> = None;
    for _ in 0..10 {
        let mut path = "/sasRange()?$top=1".to_owned();
        if let Some((np, nr)) = &next {
            path += &format!("&NextPartitionKey={}&NextRowKey={}", enc(np), enc(nr));
        }
        let r = sas(port, &tok, "GET", &path, &[], None).await;
        seen.extend(keys_of(&r));
        let np = r.header("x-ms-continuation-NextPartitionKey");
        let nr = r.header("x-ms-continuation-NextRowKey");
        match (np, nr) {
            (Some(p), Some(rk)) => next = Some((p, rk)),
            _ => break,
        }
    }
    assert_eq!(seen, expected, "paged query under the SAS key range");

    // Point reads.
    assert_eq!(sas(port, &tok, "GET", &entity_url("sasRange", "p1", "r2"), &[], None).await.status, 200);
    assert_eq!(sas(port, &tok, "GET", &entity_url("sasRange", "p2", "r1"), &[], None).await.status, 200);
    for (pk, rk) in [("p1", "r1"), ("p2", "r2"), ("p0", "r3"), ("p3", "r0")] {
        // as if the entity did not exist, as the service answers it
        let r = sas(port, &tok, "GET", &entity_url("sasRange", pk, rk), &[], None).await;
        assert_eq!(r.status, 404, "point read of ({pk},{rk}) outside the range: {}", r.body);
        assert_eq!(r.error_code(), "ResourceNotFound");
        assert!(!r.body.contains("\"n\""), "an out-of-range read leaked the entity: {}", r.body);
    }

    // Writes outside the range: refused, nothing written.
    let body = json!({"n": 999}).to_string();
    let ins = json!({"PartitionKey": "p1", "RowKey": "r1x", "n": 999}).to_string();
    let r = sas(port, &tok, "POST", "/sasRange", &[], Some(&ins)).await;
    r.assert_refused_with(403, ErrorCode::AuthorizationFailure, OUTSIDE_THE_RANGE);
    let ins3 = json!({"PartitionKey": "p3", "RowKey": "a", "n": 999}).to_string();
    sas(port, &tok, "POST", "/sasRange", &[], Some(&ins3)).await.assert_refused_with(
        403,
        ErrorCode::AuthorizationFailure,
        OUTSIDE_THE_RANGE,
    );
    let out = entity_url("sasRange", "p2", "r3");
    for (method, headers) in [
        ("PUT", vec![("If-Match", "*")]),
        ("MERGE", vec![("If-Match", "*")]),
        ("PUT", vec![]),
        ("MERGE", vec![]),
    ] {
        let r = sas(port, &tok, method, &out, &headers, Some(&body)).await;
        r.assert_refused_with(403, ErrorCode::AuthorizationFailure, OUTSIDE_THE_RANGE);
    }
    let r = sas(port, &tok, "PUT", &entity_url("sasRange", "p0", "new"), &[], Some(&body)).await;
    r.assert_refused_with(403, ErrorCode::AuthorizationFailure, OUTSIDE_THE_RANGE);
    let r = sas(port, &tok, "DELETE", &out, &[("If-Match", "*")], None).await;
    r.assert_refused_with(403, ErrorCode::AuthorizationFailure, OUTSIDE_THE_RANGE);
    assert_eq!(all_keys(&c, "sasRange").await, before, "a refused write changed the table");
    assert_eq!(c.get("sasRange", "p2", "r3").await.json()["n"], 23);

    // Writes inside the range work.
    let ins = json!({"PartitionKey": "p1", "RowKey": "r5", "n": 15}).to_string();
    assert_eq!(sas(port, &tok, "POST", "/sasRange", &[], Some(&ins)).await.status, 201);
    let at = entity_url("sasRange", "p2", "r0");
    assert_eq!(sas(port, &tok, "MERGE", &at, &[("If-Match", "*")], Some(&body)).await.status, 204);
    assert_eq!(c.get("sasRange", "p2", "r0").await.json()["n"], 999);
    assert_eq!(sas(port, &tok, "DELETE", &at, &[("If-Match", "*")], None).await.status, 204);
    c.get("sasRange", "p2", "r0").await.assert_refused(404, ErrorCode::ResourceNotFound);

    // Only a lower bound (spk + srk): everything from (p2, r2) on.
    let lower = TableSas::new("sasRange", "r").range("p2", "r2", "", "").token();
    let r = sas(port, &lower, "GET", "/sasRange()", &[], None).await;
    let want: Vec<_> = all_keys(&c, "sasRange")
        .await
        .into_iter()
        .filter(|(p, r)| p.as_str() > "p2" || (p == "p2" && r.as_str() >= "r2"))
        .collect();
    assert_eq!(want.len(), 6);
    assert_eq!(keys_of(&r), want);
}

// ---------------------------------------------------------------------------------------
// Batch under a table SAS
// ---------------------------------------------------------------------------------------

/// A change set of inserts into `table` (absolute URLs), as the SDKs frame it.
fn insert_batch(port: u16, table: &str, entities: &[Value]) -> (String, String) {
    let b = format!("batch_{}", uuid::Uuid::new_v4());
    let cs = format!("changeset_{}", uuid::Uuid::new_v4());
    let mut s = format!("--{b}\r\nContent-Type: multipart/mixed; boundary={cs}\r\n\r\n");
    for (i, e) in entities.iter().enumerate() {
        let body = e.to_string();
        s += &format!(
            "--{cs}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
             POST http://127.0.0.1:{port}/{ACCOUNT}/{table} HTTP/1.1\r\n\
             Content-ID: {i}\r\nAccept: application/json;odata=minimalmetadata\r\n\
             DataServiceVersion: 3.0\r\nContent-Type: application/json\r\n\
             Prefer: return-no-content\r\nContent-Length: {}\r\n\r\n{body}\r\n",
            body.len()
        );
    }
    s += &format!("--{cs}--\r\n\r\n--{b}--\r\n");
    (format!("multipart/mixed; boundary={b}"), s)
}

async fn sas_batch(port: u16, token: &str, (ct, body): (String, String)) -> Resp {
    let headers = [
        ("Content-Type", ct.as_str()),
        ("Accept", "application/json"),
        ("MaxDataServiceVersion", "3.0;NetFx"),
    ];
    sas(port, token, "POST", "/$batch", &headers, Some(&body)).await
}

/// Asserts the service's answer to a change set refused at operation `index`: 202 with one
/// response part, that part a 403 whose OData error names `code` and whose message
/// starts with `<index>:`.
#[track_caller]
fn assert_batch_refused_at(r: &Resp, index: usize, code: &str, what: &str) {
    assert_eq!(r.status, 202, "{what}: {}", r.body);
    let statuses: Vec<&str> =
        r.body.lines().filter(|l| l.starts_with("HTTP/1.1 ")).map(|l| &l[9..12]).collect();
    assert_eq!(statuses, ["403"], "{what}: {}", r.body);
    let error = r.body.lines().find(|l| l.starts_with('{')).expect("an error body in the part");
    let error: Value = serde_json::from_str(error).expect("JSON error body");
    assert_eq!(error["odata.error"]["code"], code, "{what}: {}", r.body);
    let message = error["odata.error"]["message"]["value"].as_str().unwrap_or_default();
    assert!(message.starts_with(&format!("{index}:")), "{what}: {message}");
}

#[tokio::test]
async fn table_sas_batch_with_one_out_of_range_operation_is_refused() {
    let server = TestServer::start();
    let c = server.client();
    let port = server.port;
    grid(&c, "sasBatch").await;
    let before = all_keys(&c, "sasBatch").await;
    let tok = TableSas::new("sasBatch", "raud").range("p1", "r2", "p2", "r1").token();
    let e = |pk: &str, rk: &str| json!({"PartitionKey": pk, "RowKey": rk, "n": 0});

    // In range: (p1, r8) and (p1, r9). Out of range: (p1, r0) (PK = spk, RK < srk).
    let r = sas_batch(port, &tok, insert_batch(port, "sasBatch", &[e("p1", "r8"), e("p1", "r0")])).await;
    assert_batch_refused_at(&r, 1, "AuthorizationFailure", "batch with an out-of-range second insert");
    let r = sas_batch(port, &tok, insert_batch(port, "sasBatch", &[e("p1", "r0"), e("p1", "r8")])).await;
    assert_batch_refused_at(&r, 0, "AuthorizationFailure", "batch with an out-of-range first insert");
    assert_eq!(all_keys(&c, "sasBatch").await, before, "a refused batch wrote");

    // A batch under a SAS without `a`: refused as a whole too.
    let read_only = TableSas::new("sasBatch", "r").token();
    let r = sas_batch(port, &read_only, insert_batch(port, "sasBatch", &[e("p1", "r8")])).await;
    assert_batch_refused_at(&r, 0, "AuthorizationPermissionMismatch", "batch insert with sp=r");
    assert_eq!(all_keys(&c, "sasBatch").await, before, "a refused batch wrote");

    // All in range: accepted.
    let r = sas_batch(port, &tok, insert_batch(port, "sasBatch", &[e("p1", "r8"), e("p1", "r9")])).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert!(r.body.contains("HTTP/1.1 204"), "{}", r.body);
    assert!(!r.body.contains("HTTP/1.1 4"), "{}", r.body);
    assert_eq!(c.get("sasBatch", "p1", "r8").await.status, 200);
    assert_eq!(c.get("sasBatch", "p1", "r9").await.status, 200);
}

// ---------------------------------------------------------------------------------------
// Account SAS
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn account_sas_services_resource_types_permissions() {
    let server = TestServer::start();
    let c = server.client();
    let port = server.port;
    assert_eq!(c.create_table("acctSas").await.status, 201);
    assert_eq!(c.insert("acctSas", json!({"PartitionKey": "p", "RowKey": "r", "v": 1})).await.status, 201);
    let get = entity_url("acctSas", "p", "r");
    let tok = |srt: &str, sp: &str| AccountSas::new(srt, sp).token();

    // Service level: list tables needs s + l; properties s + r.
    assert_eq!(sas(port, &tok("s", "l"), "GET", "/Tables", &[], None).await.status, 200);
    let r = sas(port, &tok("co", "rwdlacu"), "GET", "/Tables", &[], None).await;
    assert_error(&r, 403, "AuthorizationResourceTypeMismatch", "list tables with srt=co");
    let r = sas(port, &tok("s", "r"), "GET", "/Tables", &[], None).await;
    assert_error(&r, 403, "AuthorizationPermissionMismatch", "list tables with sp=r");
    let r = sas(port, &tok("s", "r"), "GET", "/?restype=service&comp=properties", &[], None).await;
    assert_eq!(r.status, 200, "get service properties with srt=s sp=r: {}", r.body);
    let r = sas(port, &tok("o", "r"), "GET", "/?restype=service&comp=properties", &[], None).await;
    assert_error(&r, 403, "AuthorizationResourceTypeMismatch", "get service properties with srt=o");

    // Container level: create (c or w) and delete (d).
    let r = sas(port, &tok("c", "c"), "POST", "/Tables", &[], Some(r#"{"TableName":"acctNew"}"#)).await;
    assert_eq!(r.status, 201, "create table with srt=c sp=c: {}", r.body);
    let r = sas(port, &tok("so", "rwdlacu"), "POST", "/Tables", &[], Some(r#"{"TableName":"acctNo"}"#)).await;
    assert_error(&r, 403, "AuthorizationResourceTypeMismatch", "create table with srt=so");
    let r = sas(port, &tok("c", "rl"), "POST", "/Tables", &[], Some(r#"{"TableName":"acctNo"}"#)).await;
    assert_error(&r, 403, "AuthorizationPermissionMismatch", "create table with sp=rl");
    let r = sas(port, &tok("c", "c"), "DELETE", "/Tables('acctNew')", &[], None).await;
    assert_error(&r, 403, "AuthorizationPermissionMismatch", "delete table with sp=c");
    let r = sas(port, &tok("c", "d"), "DELETE", "/Tables('acctNew')", &[], None).await;
    assert_eq!(r.status, 204, "delete table with srt=c sp=d: {}", r.body);

    // Object level.
    assert_eq!(sas(port, &tok("o", "r"), "GET", &get, &[], None).await.status, 200);
    let r = sas(port, &tok("sc", "rwdlacu"), "GET", &get, &[], None).await;
    assert_error(&r, 403, "AuthorizationResourceTypeMismatch", "read entity with srt=sc");
    let ins = json!({"PartitionKey": "p", "RowKey": "n", "v": 2}).to_string();
    let r = sas(port, &tok("o", "r"), "POST", "/acctSas", &[], Some(&ins)).await;
    assert_error(&r, 403, "AuthorizationPermissionMismatch", "insert with sp=r");
    let up = json!({"v": 3}).to_string();
    for sp in ["a", "u"] {
        let r = sas(port, &tok("o", sp), "PUT", &entity_url("acctSas", "p", "up"), &[], Some(&up)).await;
        assert_error(&r, 403, "AuthorizationPermissionMismatch", &format!("upsert with sp={sp}"));
    }
    let r = sas(port, &tok("o", "au"), "PUT", &entity_url("acctSas", "p", "up"), &[], Some(&up)).await;
    assert_eq!(r.status, 204, "upsert with sp=au: {}", r.body);

    // ss without t.
    let blob_only = AccountSas { ss: "bqf".into(), ..AccountSas::new("sco", "rwdlacu") };
    let r = sas(port, &blob_only.token(), "GET", &get, &[], None).await;
    assert_error(&r, 403, "AuthorizationServiceMismatch", "ss=bqf");
    let r = sas(port, &blob_only.token(), "GET", "/Tables", &[], None).await;
    assert_error(&r, 403, "AuthorizationServiceMismatch", "ss=bqf on list tables");

    // Validity window and signature.
    let expired = AccountSas { st: None, se: sas_time(-1), ..AccountSas::new("sco", "r") };
    assert_error(
        &sas(port, &expired.token(), "GET", &get, &[], None).await,
        403,
        "AuthenticationFailed",
        "expired",
    );
    let early = AccountSas { st: Some(sas_time(30)), ..AccountSas::new("sco", "r") };
    assert_error(
        &sas(port, &early.token(), "GET", &get, &[], None).await,
        403,
        "AuthenticationFailed",
        "early",
    );
    let forged = tok("o", "r").replace("sp=r", "sp=rwdlacu");
    let r = sas(port, &forged, "DELETE", &get, &[("If-Match", "*")], None).await;
    assert_error(&r, 403, "AuthenticationFailed", "permissions changed after signing");
    assert_eq!(c.get("acctSas", "p", "r").await.status, 200);
}

#[tokio::test]
async fn sas_source_ip_and_protocol() {
    let server = TestServer::start();
    let c = server.client();
    let port = server.port;
    assert_eq!(c.create_table("sasIp").await.status, 201);
    let q = "/sasIp()";

    let with_ip = |sip: &str| TableSas { sip: Some(sip.into()), ..TableSas::new("sasIp", "r") }.token();
    for sip in ["10.0.0.1-10.0.0.255", "10.1.2.3", "127.0.0.2-127.0.0.9"] {
        let r = sas(port, &with_ip(sip), "GET", q, &[], None).await;
        assert_error(&r, 403, "AuthorizationSourceIPMismatch", &format!("table SAS sip={sip}"));
    }
    for sip in ["127.0.0.1", "127.0.0.0-127.0.0.255"] {
        assert_eq!(sas(port, &with_ip(sip), "GET", q, &[], None).await.status, 200, "sip={sip}");
    }
    let acct = |sip: &str| AccountSas { sip: Some(sip.into()), ..AccountSas::new("o", "r") }.token();
    let r = sas(port, &acct("192.168.0.1-192.168.0.20"), "GET", q, &[], None).await;
    assert_error(&r, 403, "AuthorizationSourceIPMismatch", "account SAS sip outside");
    assert_eq!(sas(port, &acct("127.0.0.1"), "GET", q, &[], None).await.status, 200);

    let with_spr = |spr: &str| TableSas { spr: Some(spr.into()), ..TableSas::new("sasIp", "r") }.token();
    let r = sas(port, &with_spr("https"), "GET", q, &[], None).await;
    assert_error(&r, 403, "AuthorizationProtocolMismatch", "table SAS spr=https over http");
    assert_eq!(sas(port, &with_spr("https,http"), "GET", q, &[], None).await.status, 200);
    let acct_spr = AccountSas { spr: Some("https".into()), ..AccountSas::new("o", "r") }.token();
    let r = sas(port, &acct_spr, "GET", q, &[], None).await;
    assert_error(&r, 403, "AuthorizationProtocolMismatch", "account SAS spr=https over http");
}

// ---------------------------------------------------------------------------------------
// Stored access policies (Get/Set Table ACL)
// ---------------------------------------------------------------------------------------

/// One signed identifier: (Id, Start, Expiry, Permission).
type Policy<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Option<&'a str>);

fn acl_xml(ids: &[Policy<'_>]) -> String {
    let mut s = String::from(r#"<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers>"#);
    for (id, start, expiry, perm) in ids {
        s += &format!("<SignedIdentifier><Id>{id}</Id><AccessPolicy>");
        if let Some(v) = start {
            s += &format!("<Start>{v}</Start>");
        }
        if let Some(v) = expiry {
            s += &format!("<Expiry>{v}</Expiry>");
        }
        if let Some(v) = perm {
            s += &format!("<Permission>{v}</Permission>");
        }
        s += "</AccessPolicy></SignedIdentifier>";
    }
    s + "</SignedIdentifiers>"
}

async fn set_acl(c: &Client, table: &str, xml: &str) -> Resp {
    c.send("PUT", &format!("/{table}?comp=acl"), &[("Content-Type", "application/xml")], Some(xml)).await
}

#[tokio::test]
async fn table_acl_round_trip_and_limits() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("aclT").await.status, 201);

    let r = c.send("GET", "/aclT?comp=acl", &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(texts(&r.body, "SignedIdentifier").is_empty(), "a new table has no policies: {}", r.body);

    let xml = acl_xml(&[
        ("read-only", Some("2030-01-01T00:00:00Z"), Some("2030-01-02T03:04:05Z"), Some("r")),
        ("all", None, Some("2031-06-07T08:09:10.1234567Z"), Some("raud")),
    ]);
    let r = set_acl(&c, "aclT", &xml).await;
    assert_eq!(r.status, 204, "{}", r.body);
    let r = c.send("GET", "/aclT?comp=acl", &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.header("content-type").unwrap_or_default().starts_with("application/xml"),
        "{:?}",
        r.header("content-type")
    );
    assert_eq!(texts(&r.body, "Id"), ["read-only", "all"]);
    assert_eq!(texts(&r.body, "Permission"), ["r", "raud"]);
    let starts = texts(&r.body, "Start");
    assert_eq!(starts.len(), 1, "one policy has a start: {}", r.body);
    assert!(starts[0].starts_with("2030-01-01T00:00:00"), "{}", starts[0]);
    let expiries = texts(&r.body, "Expiry");
    assert!(expiries[0].starts_with("2030-01-02T03:04:05"), "{expiries:?}");
    assert!(expiries[1].starts_with("2031-06-07T08:09:10.123"), "{expiries:?}");

    // Six policies: 400, and the ACL stays as it was.
    let ids: Vec<String> = (0..6).map(|i| format!("id{i}")).collect();
    let six: Vec<Policy<'_>> =
        ids.iter().map(|id| (id.as_str(), None, Some("2030-01-01T00:00:00Z"), Some("r"))).collect();
    let r = set_acl(&c, "aclT", &acl_xml(&six)).await;
    assert_error(&r, 400, "InvalidXmlDocument", "six signed identifiers");
    assert_eq!(set_acl(&c, "aclT", &acl_xml(&six[..5])).await.status, 204, "five signed identifiers");
    assert_eq!(texts(&c.send("GET", "/aclT?comp=acl", &[], None).await.body, "Id").len(), 5);
    // An Id over 64 characters, and a permission outside raud.
    let long = "x".repeat(65);
    let r = set_acl(&c, "aclT", &acl_xml(&[(long.as_str(), None, None, Some("r"))])).await;
    let message = format!("The value '{long}' of the XML node 'Id' is not valid.");
    r.assert_refused_with(400, ErrorCode::InvalidXmlDocument, &message);
    let r = set_acl(&c, "aclT", &acl_xml(&[("w", None, None, Some("rw"))])).await;
    r.assert_refused_with(
        400,
        ErrorCode::InvalidXmlDocument,
        "The value 'rw' of the XML node 'Permission' is not valid.",
    );
    assert_eq!(texts(&c.send("GET", "/aclT?comp=acl", &[], None).await.body, "Id").len(), 5);

    // An empty set clears the ACL.
    assert_eq!(set_acl(&c, "aclT", &acl_xml(&[])).await.status, 204);
    let r = c.send("GET", "/aclT?comp=acl", &[], None).await;
    assert!(texts(&r.body, "Id").is_empty(), "{}", r.body);

    // ACL of a missing table.
    let r = c.send("GET", "/aclMissing?comp=acl", &[], None).await;
    r.assert_refused(404, ErrorCode::ResourceNotFound);
}

#[tokio::test]
async fn sas_with_stored_policy_revocation_and_conflicts() {
    let server = TestServer::start();
    let c = server.client();
    let port = server.port;
    assert_eq!(c.create_table("polT").await.status, 201);
    assert_eq!(c.insert("polT", json!({"PartitionKey": "p", "RowKey": "r", "v": 1})).await.status, 201);
    let get = entity_url("polT", "p", "r");
    let expiry = sas_time(60);
    let policy =
        acl_xml(&[("reader", None, Some(&expiry), Some("r")), ("perm-only", None, None, Some("ra"))]);
    assert_eq!(set_acl(&c, "polT", &policy).await.status, 204);

    // Only `si` in the token: the policy supplies permission and expiry.
    let only_si = TableSas { tn: "polT".into(), si: Some("reader".into()), ..Default::default() };
    let r = sas(port, &only_si.token(), "GET", &get, &[], None).await;
    assert_eq!(r.status, 200, "SAS with si=reader: {}", r.body);
    let ins = json!({"PartitionKey": "p", "RowKey": "n", "v": 2}).to_string();
    let r = sas(port, &only_si.token(), "POST", "/polT", &[], Some(&ins)).await;
    assert_error(&r, 403, "AuthorizationPermissionMismatch", "insert under policy permission r");
    // The policy holds the permission, the token the expiry.
    let split = TableSas { se: Some(sas_time(60)), si: Some("perm-only".into()), ..only_si.clone() };
    assert_eq!(sas(port, &split.token(), "POST", "/polT", &[], Some(&ins)).await.status, 201);

    // A field in both the token and the policy: 400.
    let both_se = TableSas { se: Some(sas_time(30)), ..only_si.clone() };
    let r = sas(port, &both_se.token(), "GET", &get, &[], None).await;
    assert_error(&r, 400, "InvalidQueryParameterValue", "se in token and policy");
    let both_sp = TableSas { sp: Some("ra".into()), se: Some(sas_time(60)), ..split.clone() };
    let r = sas(port, &both_sp.token(), "GET", &get, &[], None).await;
    assert_error(&r, 400, "InvalidQueryParameterValue", "sp in token and policy");

    // A policy id that does not exist.
    let unknown = TableSas { si: Some("nobody".into()), ..only_si.clone() };
    sas(port, &unknown.token(), "GET", &get, &[], None)
        .await
        .assert_refused(403, ErrorCode::AuthorizationFailure);

    // Deleting the policy revokes the SAS; re-creating it restores it.
    assert_eq!(set_acl(&c, "polT", &acl_xml(&[])).await.status, 204);
    let r = sas(port, &only_si.token(), "GET", &get, &[], None).await;
    r.assert_refused(403, ErrorCode::AuthorizationFailure);
    assert_eq!(set_acl(&c, "polT", &policy).await.status, 204);
    assert_eq!(sas(port, &only_si.token(), "GET", &get, &[], None).await.status, 200);
    // Changing the policy changes what the same token may do.
    let expired = acl_xml(&[("reader", None, Some(&sas_time(-1)), Some("r"))]);
    assert_eq!(set_acl(&c, "polT", &expired).await.status, 204);
    let r = sas(port, &only_si.token(), "GET", &get, &[], None).await;
    assert_error(&r, 403, "AuthenticationFailed", "policy expired");

    // Get/Set ACL itself is owner-only: an account SAS cannot.
    let acct = AccountSas::new("sco", "rwdlacu").token();
    let r = sas(port, &acct, "GET", "/polT?comp=acl", &[], None).await;
    r.assert_refused(403, ErrorCode::AuthorizationFailure);
    let r = sas(port, &acct, "PUT", "/polT?comp=acl", &[("Content-Type", "application/xml")], Some(&policy))
        .await;
    r.assert_refused(403, ErrorCode::AuthorizationFailure);
}

// ---------------------------------------------------------------------------------------
// Service properties and stats
// ---------------------------------------------------------------------------------------

const PROPS_PATH: &str = "/?restype=service&comp=properties";

async fn get_props(c: &Client) -> String {
    let r = c.send("GET", PROPS_PATH, &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.header("content-type").unwrap_or_default().starts_with("application/xml"),
        "{:?}",
        r.header("content-type")
    );
    r.body
}

async fn set_props(c: &Client, xml: &str) -> Resp {
    c.send("PUT", PROPS_PATH, &[("Content-Type", "application/xml")], Some(xml)).await
}

fn cors_rule(origins: &str, methods: &str, allowed: &str, exposed: &str, max_age: u32) -> String {
    format!(
        "<CorsRule><AllowedOrigins>{origins}</AllowedOrigins><AllowedMethods>{methods}</AllowedMethods>\
         <AllowedHeaders>{allowed}</AllowedHeaders><ExposedHeaders>{exposed}</ExposedHeaders>\
         <MaxAgeInSeconds>{max_age}</MaxAgeInSeconds></CorsRule>"
    )
}

fn props_xml(inner: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>{inner}</StorageServiceProperties>"#
    )
}

const LOGGING: &str =
    "<Logging><Version>1.0</Version><Delete>false</Delete><Read>true</Read><Write>false</Write>\
    <RetentionPolicy><Enabled>true</Enabled><Days>5</Days></RetentionPolicy></Logging>";
const HOUR: &str =
    "<HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>true</IncludeAPIs>\
    <RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></HourMetrics>";
const MINUTE: &str = "<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled>\
    <RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>";

#[tokio::test]
async fn service_properties_defaults_round_trip_and_limits() {
    let server = TestServer::start();
    let c = server.client();

    // Defaults (never set): logging 1.0, metrics off, no CORS rules.
    let d = get_props(&c).await;
    assert!(d.contains("<StorageServiceProperties"), "{d}");
    let logging = text(&d, "Logging");
    assert_eq!(text(&logging, "Version"), "1.0");
    assert_eq!(text(&text(&logging, "RetentionPolicy"), "Enabled"), "false");
    for m in ["HourMetrics", "MinuteMetrics"] {
        let m = text(&d, m);
        assert_eq!(text(&m, "Version"), "1.0");
        assert_eq!(text(&m, "Enabled"), "false");
    }
    assert!(texts(&d, "CorsRule").is_empty(), "no CORS rules by default: {d}");

    // Set all four roots: 202, empty body; Get returns them.
    let rule = cors_rule(
        "http://example.com,http://contoso.com",
        "GET,PUT",
        "x-ms-meta-*,content-type",
        "x-ms-request-id",
        300,
    );
    let r = set_props(&c, &props_xml(&format!("{LOGGING}{HOUR}{MINUTE}<Cors>{rule}</Cors>"))).await;
    assert_eq!(r.status, 202, "{}", r.body);
    assert!(r.body.is_empty(), "Set Table Service Properties answers an empty body: {}", r.body);
    let p = get_props(&c).await;
    let logging = text(&p, "Logging");
    assert_eq!(
        (text(&logging, "Delete"), text(&logging, "Read"), text(&logging, "Write")),
        ("false".into(), "true".into(), "false".into())
    );
    assert_eq!(text(&text(&logging, "RetentionPolicy"), "Days"), "5");
    let hour = text(&p, "HourMetrics");
    assert_eq!((text(&hour, "Enabled"), text(&hour, "IncludeAPIs")), ("true".into(), "true".into()));
    assert_eq!(text(&text(&hour, "RetentionPolicy"), "Days"), "7");
    assert_eq!(text(&text(&p, "MinuteMetrics"), "Enabled"), "false");
    let rules = texts(&p, "CorsRule");
    assert_eq!(rules.len(), 1, "{p}");
    let origins: Vec<String> =
        text(&rules[0], "AllowedOrigins").split(',').map(|s| s.trim().to_owned()).collect();
    assert_eq!(origins, ["http://example.com", "http://contoso.com"]);
    let methods: Vec<String> =
        text(&rules[0], "AllowedMethods").split(',').map(|s| s.trim().to_owned()).collect();
    assert_eq!(methods, ["GET", "PUT"]);
    assert_eq!(text(&rules[0], "MaxAgeInSeconds"), "300");
    assert_eq!(text(&rules[0], "ExposedHeaders"), "x-ms-request-id");

    // A subset (only Cors) keeps the other roots.
    let r = set_props(&c, &props_xml(&format!("<Cors>{}</Cors>", cors_rule("*", "GET", "*", "*", 60)))).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let q = get_props(&c).await;
    assert_eq!(text(&q, "Logging"), logging, "Logging changed by a Cors-only update");
    assert_eq!(text(&q, "HourMetrics"), hour, "HourMetrics changed by a Cors-only update");
    assert_eq!(texts(&q, "CorsRule").len(), 1);
    assert_eq!(text(&q, "AllowedOrigins"), "*");

    // Six CORS rules: 400, nothing changes.
    let six: String = (0..6).map(|i| cors_rule(&format!("http://o{i}.com"), "GET", "", "", 1)).collect();
    let r = set_props(&c, &props_xml(&format!("<Cors>{six}</Cors>"))).await;
    assert_error(&r, 400, "InvalidXmlDocument", "six CORS rules");
    let five: String = (0..5).map(|i| cors_rule(&format!("http://o{i}.com"), "GET", "", "", 1)).collect();
    // Other invalid bodies: a missing child of a sent root, retention days outside 1..=365,
    // an unknown method, a CORS rule without MaxAgeInSeconds.
    let bad = [
        (
            "<Logging><Version>1.0</Version><Delete>false</Delete><Write>false</Write>\
             <RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>"
                .to_owned(),
            "The required XML node 'Logging/Read' is missing.",
        ),
        (
            LOGGING.replace("<Days>5</Days>", "<Days>0</Days>"),
            "The value '0' of the XML node 'Days' is not valid.",
        ),
        (
            LOGGING.replace("<Days>5</Days>", "<Days>366</Days>"),
            "The value '366' of the XML node 'Days' is not valid.",
        ),
        (
            format!("<Cors>{}</Cors>", cors_rule("http://a.com", "GET,FETCH", "", "", 1)),
            "The value 'FETCH' of the XML node 'AllowedMethods' is not valid.",
        ),
        (
            "<Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods>\
             <AllowedHeaders></AllowedHeaders><ExposedHeaders></ExposedHeaders></CorsRule></Cors>"
                .to_owned(),
            "The required XML node 'CorsRule/MaxAgeInSeconds' is missing.",
        ),
    ];
    for (b, message) in &bad {
        let r = set_props(&c, &props_xml(b)).await;
        r.assert_refused_with(400, ErrorCode::InvalidXmlDocument, message);
    }
    assert_eq!(get_props(&c).await, q, "a refused Set changed the properties");
    assert_eq!(set_props(&c, &props_xml(&format!("<Cors>{five}</Cors>"))).await.status, 202, "five rules");
    assert_eq!(texts(&get_props(&c).await, "CorsRule").len(), 5);

    // An empty <Cors/> removes every rule, and keeps the rest.
    assert_eq!(set_props(&c, &props_xml("<Cors/>")).await.status, 202);
    let e = get_props(&c).await;
    assert!(texts(&e, "CorsRule").is_empty(), "{e}");
    assert_eq!(text(&e, "Logging"), logging);
}

#[tokio::test]
async fn service_stats_on_the_secondary_endpoint() {
    let server = TestServer::start();
    let mut sec = server.client();
    sec.endpoint = format!("http://127.0.0.1:{}/{ACCOUNT}-secondary", server.port);
    let r = sec.send("GET", "/?restype=service&comp=stats", &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("<StorageServiceStats"), "{}", r.body);
    let geo = text(&r.body, "GeoReplication");
    assert_eq!(text(&geo, "Status"), "live");
    let last = text(&geo, "LastSyncTime");
    let last = chrono::DateTime::parse_from_rfc2822(&last).expect("LastSyncTime is RFC 1123");
    assert!((chrono::Utc::now() - last.to_utc()).num_seconds().abs() < 60, "LastSyncTime is now: {last}");
    // where the Python SDK sends it: the secondary with the account named twice
    let r = sec.send("GET", &format!("/{ACCOUNT}/?restype=service&comp=stats"), &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(text(&text(&r.body, "GeoReplication"), "Status"), "live");
    // and where the JS SDK sends it against an emulator endpoint: the primary
    let r = server.client().send("GET", "/?restype=service&comp=stats", &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
}

// ---------------------------------------------------------------------------------------
// CORS
// ---------------------------------------------------------------------------------------

async fn preflight(port: u16, path: &str, headers: &[(&str, &str)]) -> Resp {
    let url = format!("http://127.0.0.1:{port}/{ACCOUNT}{path}");
    let mut req = reqwest::Client::new().request(reqwest::Method::OPTIONS, url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    Resp::read(req.send().await.expect("request failed")).await
}

fn list(v: Option<String>) -> Vec<String> {
    v.unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect()
}

#[tokio::test]
async fn cors_preflight_and_actual_requests() {
    let server = TestServer::start();
    let c = server.client();
    let port = server.port;
    assert_eq!(c.create_table("corsT").await.status, 201);
    let from = |origin: &'static str, method: &'static str| {
        vec![("Origin", origin), ("Access-Control-Request-Method", method)]
    };

    // No rules: every preflight is refused; missing headers are a 400 first.
    for path in ["/Tables", "/corsT()", "/?restype=service&comp=properties"] {
        let r = preflight(port, path, &from("http://example.com", "GET")).await;
        assert_error(&r, 403, "CorsPreflightFailure", &format!("preflight {path} without rules"));
        assert!(r.header("access-control-allow-origin").is_none());
    }
    let r = preflight(port, "/Tables", &[("Origin", "http://example.com")]).await;
    r.assert_refused_with(400, ErrorCode::InvalidInput, NO_REQUEST_METHOD);
    // Actual requests carry no CORS headers while CORS is off.
    let r = c.send("GET", "/Tables", &[("Origin", "http://example.com")], None).await;
    assert_eq!(r.status, 200);
    assert!(r.header("access-control-allow-origin").is_none(), "{:?}", r.headers);

    let rule =
        cors_rule("http://example.com", "GET", "x-ms-*,content-type", "x-ms-request-id,x-ms-version", 3600);
    assert_eq!(set_props(&c, &props_xml(&format!("<Cors>{rule}</Cors>"))).await.status, 202);

    // Matching preflight: 200 with the CORS headers; anonymous (no Authorization needed,
    // and a bogus one is ignored).
    for extra in [vec![], vec![("Authorization", "SharedKey devstoreaccount1:bm90IGEgc2lnbmF0dXJl")]] {
        let mut h = from("http://example.com", "GET");
        h.extend(extra.iter().cloned());
        h.push(("Access-Control-Request-Headers", "x-ms-version,Content-Type"));
        let r = preflight(port, "/corsT()", &h).await;
        assert_eq!(r.status, 200, "matching preflight ({extra:?}): {}", r.body);
        assert_eq!(r.header("access-control-allow-origin").as_deref(), Some("http://example.com"));
        assert!(
            list(r.header("access-control-allow-methods")).contains(&"get".to_owned()),
            "{:?}",
            r.headers
        );
        assert_eq!(r.header("access-control-max-age").as_deref(), Some("3600"));
        let allowed = list(r.header("access-control-allow-headers"));
        assert!(allowed.contains(&"x-ms-version".to_owned()), "Allow-Headers {allowed:?}");
        assert!(allowed.contains(&"content-type".to_owned()), "Allow-Headers {allowed:?}");
        assert_eq!(r.header("access-control-allow-credentials").as_deref(), Some("true"));
    }
    // Also on a table that does not exist (nothing is looked up).
    assert_eq!(preflight(port, "/noSuchTable()", &from("http://example.com", "GET")).await.status, 200);
    // The method is matched case-insensitively, the origin exactly.
    assert_eq!(preflight(port, "/Tables", &from("http://example.com", "get")).await.status, 200);

    // No match: another origin, another method, a header not allowed.
    for (h, what) in [
        (from("http://other.com", "GET"), "other origin"),
        (from("https://example.com", "GET"), "other scheme"),
        (from("http://example.com", "PUT"), "method not allowed"),
    ] {
        let r = preflight(port, "/corsT()", &h).await;
        assert_error(&r, 403, "CorsPreflightFailure", what);
        assert!(r.header("access-control-allow-origin").is_none(), "{what}");
    }
    let mut h = from("http://example.com", "GET");
    h.push(("Access-Control-Request-Headers", "x-custom-header"));
    assert_error(&preflight(port, "/corsT()", &h).await, 403, "CorsPreflightFailure", "header not allowed");
    // Missing Access-Control-Request-Method or Origin: 400.
    let r = preflight(port, "/corsT()", &[("Origin", "http://example.com")]).await;
    r.assert_refused_with(400, ErrorCode::InvalidInput, NO_REQUEST_METHOD);
    let r = preflight(port, "/corsT()", &[("Access-Control-Request-Method", "GET")]).await;
    r.assert_refused_with(
        400,
        ErrorCode::InvalidInput,
        "A CORS preflight request must carry an Origin header.",
    );

    // Actual requests from the allowed origin get Allow-Origin and Expose-Headers.
    let r = c.send("GET", "/Tables", &[("Origin", "http://example.com")], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("access-control-allow-origin").as_deref(), Some("http://example.com"));
    let exposed = list(r.header("access-control-expose-headers"));
    assert!(exposed.contains(&"x-ms-request-id".to_owned()), "Expose-Headers {exposed:?}");
    assert!(list(r.header("vary")).contains(&"origin".to_owned()), "Vary {:?}", r.header("vary"));
    // Another origin, or a method the rule does not allow: no Allow-Origin.
    let r = c.send("GET", "/Tables", &[("Origin", "http://other.com")], None).await;
    assert_eq!(r.status, 200);
    assert!(r.header("access-control-allow-origin").is_none(), "{:?}", r.headers);
    let r = c
        .send("POST", "/Tables", &[("Origin", "http://example.com")], Some(r#"{"TableName":"corsNew"}"#))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(
        r.header("access-control-allow-origin").is_none(),
        "POST not allowed by the rule: {:?}",
        r.headers
    );
    // No Origin: no CORS headers.
    let r = c.send("GET", "/Tables", &[], None).await;
    assert!(r.header("access-control-allow-origin").is_none());
    assert!(r.header("access-control-expose-headers").is_none());

    // A wildcard rule after the first: any origin; Allow-Origin is `*`.
    let star = cors_rule("*", "GET,POST", "*", "*", 10);
    assert_eq!(set_props(&c, &props_xml(&format!("<Cors>{rule}{star}</Cors>"))).await.status, 202);
    let r = preflight(port, "/Tables", &from("http://anywhere.example", "POST")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("access-control-max-age").as_deref(), Some("10"));
    let r = c.send("GET", "/Tables", &[("Origin", "http://anywhere.example")], None).await;
    assert_eq!(r.header("access-control-allow-origin").as_deref(), Some("*"));
    // The first matching rule wins for example.com.
    let r = preflight(port, "/Tables", &from("http://example.com", "GET")).await;
    assert_eq!(r.header("access-control-max-age").as_deref(), Some("3600"));
}

// ---------------------------------------------------------------------------------------
// SharedKey date skew
// ---------------------------------------------------------------------------------------

fn rfc1123_minutes_ago(minutes: i64) -> String {
    (chrono::Utc::now() - chrono::Duration::minutes(minutes)).format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// `GET /Tables` signed with SharedKey for `date`, sent in `x-ms-date` (or `Date`).
async fn list_tables_dated(port: u16, date: &str, header: &str) -> Resp {
    let sts = format!("GET\n\n\n{date}\n/{ACCOUNT}/{ACCOUNT}/Tables");
    let auth = format!("SharedKey {ACCOUNT}:{}", sign(KEY, &sts));
    raw(
        port,
        "GET",
        &format!("/{ACCOUNT}/Tables"),
        &[("Authorization", &auth), ("x-ms-date", ""), (header, date)],
        None,
    )
    .await
}

#[tokio::test]
async fn shared_key_date_skew() {
    let server = TestServer::start();
    let port = server.port;
    for header in ["x-ms-date", "Date"] {
        let r = list_tables_dated(port, &rfc1123_minutes_ago(1), header).await;
        assert_eq!(r.status, 200, "{header} 1 minute old: {}", r.body);
        let r = list_tables_dated(port, &rfc1123_minutes_ago(5), header).await;
        assert_eq!(r.status, 200, "{header} 5 minutes old: {}", r.body);
        let r = list_tables_dated(port, &rfc1123_minutes_ago(20), header).await;
        assert_error(&r, 403, "AuthenticationFailed", &format!("{header} 20 minutes old"));
        let r = list_tables_dated(port, &rfc1123_minutes_ago(24 * 60), header).await;
        assert_error(&r, 403, "AuthenticationFailed", &format!("{header} a day old"));
    }

    let loose = TestServer::start_with(&["--inMemoryPersistence", "--loose"], &[]);
    let r = list_tables_dated(loose.port, &rfc1123_minutes_ago(20), "x-ms-date").await;
    assert_eq!(r.status, 200, "--loose accepts a 20-minute-old x-ms-date: {}", r.body);
    // --loose relaxes the clock only, not the signature.
    let sts = format!("GET\n\n\n{}\n/{ACCOUNT}/{ACCOUNT}/Tables", rfc1123_minutes_ago(20));
    let auth = format!("SharedKey {ACCOUNT}:{}", sign(KEY, &sts));
    let r = raw(loose.port, "GET", &format!("/{ACCOUNT}/Tables"), &[("Authorization", &auth)], None).await;
    assert_error(&r, 403, "AuthenticationFailed", "--loose: signature over another date");
}

// ---------------------------------------------------------------------------------------
// AZURITE_ACCOUNTS isolation
// ---------------------------------------------------------------------------------------

const A1_KEY1: &str = "YTFrZXkxYTFrZXkxYTFrZXkxYTFrZXkxYTFrZXkxYTFrZXkxYTFrZXkxYTFrZXkx";
const A1_KEY2: &str = "YTFrZXkyYTFrZXkyYTFrZXkyYTFrZXkyYTFrZXkyYTFrZXkyYTFrZXkyYTFrZXky";
const A2_KEY: &str = "YTJrZXkxYTJrZXkxYTJrZXkxYTJrZXkxYTJrZXkxYTJrZXkxYTJrZXkxYTJrZXkx";

fn account_client(port: u16, account: &str, key: &str) -> Client {
    Client {
        http: reqwest::Client::new(),
        endpoint: format!("http://127.0.0.1:{port}/{account}"),
        account: account.into(),
        key: key.into(),
    }
}

async fn table_names(c: &Client) -> Vec<String> {
    let r = c.send("GET", "/Tables", &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.table_names()
}

#[tokio::test]
async fn accounts_are_isolated() {
    let accounts = format!("a1:{A1_KEY1}:{A1_KEY2};a2:{A2_KEY}");
    let server = TestServer::start_with(&["--inMemoryPersistence"], &[("AZURITE_ACCOUNTS", &accounts)]);
    let port = server.port;
    let a1 = account_client(port, "a1", A1_KEY1);
    let a1k2 = account_client(port, "a1", A1_KEY2);
    let a2 = account_client(port, "a2", A2_KEY);

    assert_eq!(a1.create_table("onlyA1").await.status, 201);
    assert_eq!(a1k2.create_table("shared").await.status, 201, "a1's second key");
    assert_eq!(a2.create_table("onlyA2").await.status, 201);
    assert_eq!(a2.create_table("shared").await.status, 201, "the same name in another account");
    assert_eq!(
        a1.insert("shared", json!({"PartitionKey": "p", "RowKey": "r", "who": "a1"})).await.status,
        201
    );
    assert_eq!(
        a2.insert("shared", json!({"PartitionKey": "p", "RowKey": "r", "who": "a2"})).await.status,
        201
    );

    assert_eq!(table_names(&a1).await, ["onlyA1", "shared"]);
    assert_eq!(table_names(&a1k2).await, ["onlyA1", "shared"]);
    assert_eq!(table_names(&a2).await, ["onlyA2", "shared"]);
    assert_eq!(a1.get("shared", "p", "r").await.json()["who"], "a1");
    assert_eq!(a2.get("shared", "p", "r").await.json()["who"], "a2");
    let r = a1.send("GET", "/onlyA2()", &[], None).await;
    r.assert_refused(404, ErrorCode::TableNotFound);
    a1.insert("onlyA2", json!({"PartitionKey": "x", "RowKey": "y"}))
        .await
        .assert_refused(404, ErrorCode::TableNotFound);

    // One account's key does not open another.
    let wrong = account_client(port, "a2", A1_KEY1);
    let r = wrong.send("GET", "/Tables", &[], None).await;
    assert_error(&r, 403, "AuthenticationFailed", "a2 with a1's key");
    // A SAS signed with a1's key, presented on a2's URL.
    let token = TableSas::new("shared", "r").token_for("a1", A1_KEY1);
    let r = raw(port, "GET", &format!("/a2/shared()?{token}"), &[], None).await;
    assert_error(&r, 403, "AuthenticationFailed", "a1's SAS on a2");
    let r = raw(port, "GET", &format!("/a1/shared()?{token}"), &[], None).await;
    assert_eq!(keys_of(&r), pairs(&[("p", "r")]), "a1's SAS on a1");
    // Deleting in one account leaves the other's table.
    assert_eq!(a1.send("DELETE", "/Tables('shared')", &[], None).await.status, 204);
    assert_eq!(table_names(&a2).await, ["onlyA2", "shared"]);
    assert_eq!(a2.get("shared", "p", "r").await.status, 200);
}

// ---------------------------------------------------------------------------------------
// A refused request must not break keep-alive
// ---------------------------------------------------------------------------------------

/// A raw HTTP/1.1 connection, to control when the request body is sent.
struct Conn {
    s: tokio::net::TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    async fn open(port: u16) -> Conn {
        Conn { s: tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap(), buf: Vec::new() }
    }

    async fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        use tokio::io::AsyncWriteExt;
        self.s.write_all(bytes).await
    }

    /// Reads one response (head, body) within `wait`; `None` if none came or the peer
    /// closed the connection first.
    async fn response(&mut self, wait: std::time::Duration) -> Option<(String, String)> {
        use tokio::io::AsyncReadExt;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.buf[..end]).to_string();
                let len = head
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length").then(|| v.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if self.buf.len() >= end + 4 + len {
                    let body = String::from_utf8_lossy(&self.buf[end + 4..end + 4 + len]).to_string();
                    self.buf.drain(..end + 4 + len);
                    return Some((head, body));
                }
            }
            let mut chunk = [0u8; 8192];
            match tokio::time::timeout_at(deadline, self.s.read(&mut chunk)).await {
                Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return None,
                Ok(Ok(n)) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }
}

/// Sends the head of a request, then (after the server had time to answer early) its
/// body, then a second request on the same connection. A refusal may be sent before the
/// body is read, but then the server must either still read (drain) the body and keep
/// the connection, or say `Connection: close`; closing silently makes keep-alive clients
/// (the SDKs) fail their next request with "connection reset / remote end closed".
async fn refusal_then_reuse(port: u16, what: &str, head: String, body: &str, second: String) {
    let mut conn = Conn::open(port).await;
    conn.send(head.as_bytes()).await.unwrap();
    let early = conn.response(std::time::Duration::from_millis(300)).await;
    let sent_body = conn.send(body.as_bytes()).await.is_ok();
    let first = match early {
        Some(r) => r,
        None => {
            assert!(sent_body, "{what}: the connection closed before any answer");
            conn.response(std::time::Duration::from_secs(5))
                .await
                .unwrap_or_else(|| panic!("{what}: no answer"))
        }
    };
    let status_line = first.0.lines().next().unwrap_or_default().to_owned();
    assert!(status_line.contains(" 403 "), "{what}: expected a 403, got {status_line}: {}", first.1);
    let closes = first.0.lines().any(|l| {
        l.split_once(':').is_some_and(|(k, v)| {
            k.eq_ignore_ascii_case("connection") && v.trim().eq_ignore_ascii_case("close")
        })
    });
    if closes {
        return; // the client knows not to reuse the connection
    }
    let reused = conn.send(second.as_bytes()).await.is_ok();
    let answer = if reused { conn.response(std::time::Duration::from_secs(5)).await } else { None };
    let ok = answer.as_ref().is_some_and(|(h, _)| h.starts_with("HTTP/1.1 200"));
    assert!(
        ok,
        "{what}: after answering {status_line} early (without Connection: close) the server must keep the \
         connection usable; the next request got {answer:?}"
    );
}

#[tokio::test]
async fn refused_writes_keep_the_connection_usable() {
    let server = TestServer::start();
    let c = server.client();
    let port = server.port;
    grid(&c, "keepT").await;
    let read = TableSas::new("keepT", "r").token();
    let ranged = TableSas::new("keepT", "raud").range("p1", "r2", "p2", "r1").token();
    let second = format!(
        "GET /{ACCOUNT}/keepT()?{read} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-ms-version: {SV}\r\n\
         Accept: application/json;odata=nometadata\r\n\r\n"
    );
    let body = json!({"PartitionKey": "p3", "RowKey": "new", "n": 1}).to_string();
    let head = |method: &str, path: &str, extra: &str| {
        format!(
            "{method} /{ACCOUNT}{path} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-ms-version: {SV}\r\n\
             Accept: application/json;odata=nometadata\r\nContent-Type: application/json\r\n\
             DataServiceVersion: 3.0\r\n{extra}Content-Length: {}\r\n\r\n",
            body.len()
        )
    };
    let insert_ro = head("POST", &format!("/keepT?{read}"), "");
    refusal_then_reuse(port, "insert under sp=r", insert_ro, &body, second.clone()).await;
    let update_out =
        head("PUT", &format!("{}?{ranged}", entity_path("keepT", "p0", "r3")), "If-Match: *\r\n");
    refusal_then_reuse(port, "update outside the key range", update_out, &body, second.clone()).await;
    let forged = read.replace("sp=r", "sp=raud");
    let insert_forged = head("POST", &format!("/keepT?{forged}"), "");
    refusal_then_reuse(port, "insert with a forged SAS", insert_forged, &body, second.clone()).await;
    let date = now_rfc1123();
    let auth = format!(
        "SharedKey {ACCOUNT}:{}",
        sign(KEY, &format!("POST\n\napplication/json\n{date}\n/{ACCOUNT}/{ACCOUNT}/other"))
    );
    let insert_bad_key = head("POST", "/keepT", &format!("x-ms-date: {date}\r\nAuthorization: {auth}\r\n"));
    refusal_then_reuse(port, "insert with a wrong SharedKey signature", insert_bad_key, &body, second).await;
    assert_eq!(all_keys(&c, "keepT").await.len(), 16, "a refused write wrote");
}

/// A change set of one PUT (Insert Or Replace) per `(url keys, body)`.
fn upsert_batch(port: u16, table: &str, ops: &[((&str, &str), Value)]) -> (String, String) {
    let b = format!("batch_{}", uuid::Uuid::new_v4());
    let cs = format!("changeset_{}", uuid::Uuid::new_v4());
    let mut s = format!("--{b}\r\nContent-Type: multipart/mixed; boundary={cs}\r\n\r\n");
    for (i, ((pk, rk), body)) in ops.iter().enumerate() {
        let body = body.to_string();
        s += &format!(
            "--{cs}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
             PUT http://127.0.0.1:{port}/{ACCOUNT}{} HTTP/1.1\r\n\
             Content-ID: {i}\r\nAccept: application/json;odata=minimalmetadata\r\n\
             DataServiceVersion: 3.0\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}\r\n",
            entity_url(table, pk, rk),
            body.len()
        );
    }
    s += &format!("--{cs}--\r\n\r\n--{b}--\r\n");
    (format!("multipart/mixed; boundary={b}"), s)
}

/// Under a table SAS's key range the URL's keys decide, as they decide what is written:
/// a PUT or MERGE (single or in a batch) to keys inside the range whose body names keys
/// outside it writes the URL's entity and nothing at the body's keys; the same body sent
/// to a URL outside the range is refused and writes nothing.
#[tokio::test]
async fn table_sas_key_range_applies_to_the_url_keys_not_the_body_keys() {
    let server = TestServer::start();
    let c = server.client();
    let port = server.port;
    grid(&c, "sasUrlKeys").await;
    let tok = TableSas::new("sasUrlKeys", "raud").range("p1", "", "p1", "").token();
    let outside = json!({"PartitionKey": "p3", "RowKey": "zz", "n": 99});
    let body = outside.to_string();
    let url_in = entity_url("sasUrlKeys", "p1", "new");

    let r = sas(port, &tok, "PUT", &url_in, &[], Some(&body)).await;
    assert_eq!(r.status, 204, "PUT inside the range with outside body keys: {}", r.body);
    let r = sas(port, &tok, "MERGE", &url_in, &[("If-Match", "*")], Some(&body)).await;
    assert_eq!(r.status, 204, "MERGE inside the range with outside body keys: {}", r.body);
    assert_eq!(c.get("sasUrlKeys", "p1", "new").await.json()["n"], 99);
    // the body's keys do not move the write
    c.get("sasUrlKeys", "p3", "zz").await.assert_refused(404, ErrorCode::ResourceNotFound);

    let before = all_keys(&c, "sasUrlKeys").await;
    let url_out = entity_url("sasUrlKeys", "p2", "r0");
    let inside = json!({"PartitionKey": "p1", "RowKey": "r0", "n": 7}).to_string();
    let r = sas(port, &tok, "PUT", &url_out, &[], Some(&inside)).await;
    assert_error(&r, 403, "AuthorizationFailure", "PUT outside the range with inside body keys");
    let r = sas(port, &tok, "MERGE", &url_out, &[("If-Match", "*")], Some(&inside)).await;
    assert_error(&r, 403, "AuthorizationFailure", "MERGE outside the range with inside body keys");
    assert_eq!(all_keys(&c, "sasUrlKeys").await, before, "a refused write wrote");
    assert_eq!(c.get("sasUrlKeys", "p1", "r0").await.json()["n"], 10);

    let ops = [(("p1", "b1"), outside.clone()), (("p1", "b2"), outside.clone())];
    let r = sas_batch(port, &tok, upsert_batch(port, "sasUrlKeys", &ops)).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let statuses: Vec<&str> =
        r.body.lines().filter(|l| l.starts_with("HTTP/1.1 ")).map(|l| &l[9..12]).collect();
    assert_eq!(statuses, ["204", "204"], "{}", r.body);
    assert_eq!(c.get("sasUrlKeys", "p1", "b2").await.json()["n"], 99);
    // a batch's body keys do not move the write
    c.get("sasUrlKeys", "p3", "zz").await.assert_refused(404, ErrorCode::ResourceNotFound);

    let ops = [(("p1", "b3"), inside.parse().unwrap()), (("p2", "b4"), inside.parse().unwrap())];
    let r = sas_batch(port, &tok, upsert_batch(port, "sasUrlKeys", &ops)).await;
    assert_batch_refused_at(&r, 1, "AuthorizationFailure", "batch PUT to a URL outside the range");
    // a refused batch writes nothing
    c.get("sasUrlKeys", "p1", "b3").await.assert_refused(404, ErrorCode::ResourceNotFound);
}
