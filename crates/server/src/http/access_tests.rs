//! Tests with no socket of access control: Get/Set Table ACL, service properties and stats
//! (XML bodies, statuses, error shape), CORS, SAS and SharedKey date skew through
//! `dispatch`, over the in-memory store.

use super::message::Body;
use super::tests::{app, call, send, sign, signed, signed_at, App};

/// Sends a request; returns status, headers and the body as text.
async fn call_text(app: &App, req: http::Request<Body>) -> (u16, http::HeaderMap, String) {
    let resp = send(app, req).await;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = resp.into_body().collect_bytes().await.unwrap();
    (status, headers, String::from_utf8(bytes.to_vec()).unwrap())
}

const XML: (&str, &str) = ("content-type", "application/xml");

#[tokio::test]
async fn table_acl_get_set_as_xml() {
    let app = app();
    assert_eq!(call(&app, signed("POST", "/Tables", &[], r#"{"TableName":"aclt"}"#)).await.0, 201);
    let (s, h, body) = call_text(&app, signed("GET", "/aclt?comp=acl", &[], "")).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(h["content-type"], "application/xml");
    assert!(body.ends_with("<SignedIdentifiers />"), "{body}");

    let acl = "<SignedIdentifiers><SignedIdentifier><Id>p1</Id><AccessPolicy>\
               <Expiry>2030-01-01T00:00:00Z</Expiry><Permission>ra</Permission>\
               </AccessPolicy></SignedIdentifier></SignedIdentifiers>";
    let (s, _, body) = call_text(&app, signed("PUT", "/ACLT?comp=acl", &[XML], acl)).await;
    assert_eq!(s, 204, "{body}");
    assert!(body.is_empty());
    let (_, _, body) = call_text(&app, signed("GET", "/aclt?comp=acl", &[], "")).await;
    assert!(body.contains("<Id>p1</Id>"), "{body}");
    assert!(body.contains("<Expiry>2030-01-01T00:00:00.0000000Z</Expiry>"), "{body}");

    // Errors keep the OData JSON body and the x-ms-error-code header.
    let (s, h, body) = call(&app, signed("PUT", "/aclt?comp=acl", &[XML], "<Nope/>")).await;
    assert_eq!(s, 400);
    assert_eq!(body["odata.error"]["code"], "InvalidXmlDocument");
    assert_eq!(h["x-ms-error-code"], "InvalidXmlDocument");
    let (s, _, body) = call(&app, signed("GET", "/missing?comp=acl", &[], "")).await;
    assert_eq!((s, body["odata.error"]["code"].as_str()), (404, Some("ResourceNotFound")));
    let (s, _, body) = call(&app, signed("PUT", "/missing?comp=acl", &[XML], acl)).await;
    assert_eq!((s, body["odata.error"]["code"].as_str()), (404, Some("ResourceNotFound")));

    // Deleting the table deletes its ACL.
    assert_eq!(call(&app, signed("DELETE", "/Tables('aclt')", &[], "")).await.0, 204);
    assert_eq!(call(&app, signed("POST", "/Tables", &[], r#"{"TableName":"aclt"}"#)).await.0, 201);
    let (_, _, body) = call_text(&app, signed("GET", "/aclt?comp=acl", &[], "")).await;
    assert!(body.ends_with("<SignedIdentifiers />"), "{body}");
}

#[tokio::test]
async fn service_properties_set_merges_and_stats_need_the_secondary() {
    let app = app();
    let path = "/?restype=service&comp=properties";
    let (s, h, body) = call_text(&app, signed("GET", path, &[], "")).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(h["content-type"], "application/xml");
    assert!(body.contains("<Cors />"), "{body}");
    let cors = "<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>http://a.com</AllowedOrigins>\
                <AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>9</MaxAgeInSeconds>\
                <ExposedHeaders /><AllowedHeaders /></CorsRule></Cors></StorageServiceProperties>";
    let (s, _, body) = call_text(&app, signed("PUT", path, &[XML], cors)).await;
    assert_eq!(s, 202, "{body}");
    assert!(body.is_empty());
    let (_, _, body) = call_text(&app, signed("GET", path, &[], "")).await;
    assert!(body.contains("<AllowedOrigins>http://a.com</AllowedOrigins>"), "{body}");
    assert!(body.contains("<Logging><Version>1.0</Version>"), "{body}");
    let (s, _, body) = call(&app, signed("PUT", path, &[XML], "")).await;
    assert_eq!((s, body["odata.error"]["code"].as_str()), (400, Some("InvalidXmlDocument")));

    let stats = "/?restype=service&comp=stats";
    // the secondary, as the service answers it; the primary, where the JS SDK sends it; and
    // the secondary with the account named twice, where the Python SDK sends it
    for (prefix, path) in [
        ("/devstoreaccount1-secondary", stats.to_owned()),
        ("/devstoreaccount1", stats.to_owned()),
        ("/devstoreaccount1-secondary", format!("/devstoreaccount1{stats}")),
        ("/devstoreaccount1-secondary", format!("/devstoreaccount1/{stats}")),
    ] {
        let (s, h, body) = call_text(&app, signed_at(prefix, "GET", &path, &[], "")).await;
        assert_eq!(s, 200, "{prefix}{path}: {body}");
        assert_eq!(h["content-type"], "application/xml");
        assert!(body.contains("<Status>live</Status><LastSyncTime>"), "{body}");
        assert!(body.contains(" GMT</LastSyncTime>"), "{body}");
    }
    // The secondary is read-only: no Set there.
    let req = signed_at("/devstoreaccount1-secondary", "PUT", path, &[XML], cors);
    assert_eq!(call(&app, req).await.0, 403);
}

fn preflight(
    path: &str,
    origin: Option<&str>,
    method: Option<&str>,
    headers: Option<&str>,
) -> http::Request<Body> {
    let mut b = http::Request::builder().method("OPTIONS").uri(format!("/devstoreaccount1{path}"));
    for (name, value) in [
        ("origin", origin),
        ("access-control-request-method", method),
        ("access-control-request-headers", headers),
    ] {
        if let Some(v) = value {
            b = b.header(name, v);
        }
    }
    b.body(Body::empty()).unwrap()
}

async fn set_cors(app: &App, rules: &str) {
    let body = format!("<StorageServiceProperties><Cors>{rules}</Cors></StorageServiceProperties>");
    let req = signed("PUT", "/?restype=service&comp=properties", &[XML], &body);
    assert_eq!(call_text(app, req).await.0, 202);
}

const RULE: &str = "<CorsRule><AllowedOrigins>http://a.com</AllowedOrigins>\
    <AllowedMethods>GET,MERGE</AllowedMethods><MaxAgeInSeconds>60</MaxAgeInSeconds>\
    <ExposedHeaders>x-ms-*</ExposedHeaders><AllowedHeaders>x-ms-meta-*,content-type</AllowedHeaders></CorsRule>";

#[tokio::test]
async fn cors_preflight_uses_the_account_rules() {
    let app = app();
    let (s, _, body) = call(&app, preflight("/t()", Some("http://a.com"), Some("GET"), None)).await;
    assert_eq!((s, body["odata.error"]["code"].as_str()), (403, Some("CorsPreflightFailure")));
    set_cors(&app, RULE).await;

    let req =
        preflight("/nosuch()", Some("http://a.com"), Some("MERGE"), Some("X-Ms-Meta-Color, Content-Type"));
    let (s, h, body) = call_text(&app, req).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(h["access-control-allow-origin"], "http://a.com");
    assert_eq!(h["access-control-allow-methods"], "MERGE");
    assert_eq!(h["access-control-allow-headers"], "X-Ms-Meta-Color, Content-Type");
    assert_eq!(h["access-control-max-age"], "60");
    assert_eq!(h["access-control-allow-credentials"], "true");
    assert!(h.contains_key("x-ms-request-id"));

    for req in [
        preflight("/t()", Some("http://b.com"), Some("GET"), None),
        preflight("/t()", Some("http://a.com"), Some("PUT"), None),
        preflight("/t()", Some("http://a.com"), Some("GET"), Some("x-other")),
    ] {
        let (s, h, _) = call_text(&app, req).await;
        assert_eq!(s, 403);
        assert!(!h.contains_key("access-control-allow-origin"));
    }
    for req in
        [preflight("/t()", None, Some("GET"), None), preflight("/t()", Some("http://a.com"), None, None)]
    {
        assert_eq!(call_text(&app, req).await.0, 400);
    }
    // Rules are per account: an unknown account has none.
    let req = http::Request::builder()
        .method("OPTIONS")
        .uri("/otheraccount/Tables")
        .header("origin", "http://a.com")
        .header("access-control-request-method", "GET")
        .body(Body::empty())
        .unwrap();
    assert_eq!(call_text(&app, req).await.0, 403);
}

#[tokio::test]
async fn cors_headers_on_actual_requests_success_and_error() {
    let app = app();
    let origin = ("origin", "http://a.com");
    // CORS off: nothing added.
    let (_, h, _) = call_text(&app, signed("GET", "/Tables", &[origin], "")).await;
    assert!(!h.contains_key("access-control-allow-origin"));
    set_cors(&app, RULE).await;

    let (s, h, _) = call_text(&app, signed("GET", "/Tables", &[origin], "")).await;
    assert_eq!(s, 200);
    assert_eq!(h["access-control-allow-origin"], "http://a.com");
    assert_eq!(h["access-control-allow-credentials"], "true");
    assert_eq!(h["vary"], "Origin");
    let exposed = h["access-control-expose-headers"].to_str().unwrap();
    assert!(exposed.contains("x-ms-request-id") && exposed.contains("x-ms-version"), "{exposed}");
    // An error answer gets them too.
    let (s, h, _) = call_text(&app, signed("GET", "/nosuch()", &[origin], "")).await;
    assert_eq!(s, 404);
    assert_eq!(h["access-control-allow-origin"], "http://a.com");
    assert!(h["access-control-expose-headers"].to_str().unwrap().contains("x-ms-error-code"));
    // Unauthenticated, too (the browser must be able to read the 401/403).
    let req =
        http::Request::get("/devstoreaccount1/Tables").header("origin", "http://a.com").body(Body::empty());
    let (s, h, _) = call_text(&app, req.unwrap()).await;
    assert_eq!(s, 401);
    assert_eq!(h["access-control-allow-origin"], "http://a.com");
    // Another origin on GET: only Vary; a method the rule lacks: nothing.
    let (_, h, _) = call_text(&app, signed("GET", "/Tables", &[("origin", "http://b.com")], "")).await;
    assert!(!h.contains_key("access-control-allow-origin"));
    assert_eq!(h["vary"], "Origin");
    let (s, h, _) = call_text(&app, signed("POST", "/Tables", &[origin], r#"{"TableName":"corsnew"}"#)).await;
    assert_eq!(s, 201);
    assert!(!h.contains_key("access-control-allow-origin") && !h.contains_key("vary"));
    // No Origin: nothing.
    let (_, h, _) = call_text(&app, signed("GET", "/Tables", &[], "")).await;
    assert!(!h.contains_key("access-control-allow-origin") && !h.contains_key("vary"));
}

/// A table SAS query string (sv 2019-02-02) on `tn` for `sp`, valid for an hour, with an
/// optional key range (spk, srk, epk, erk).
fn table_sas(tn: &str, sp: &str, range: [&str; 4]) -> String {
    table_sas_with(tn, sp, range, ["", ""])
}

/// [`table_sas`] with `[sip, spr]` (empty = absent).
fn table_sas_with(tn: &str, sp: &str, range: [&str; 4], [sip, spr]: [&str; 2]) -> String {
    let se = (chrono::Utc::now() + chrono::Duration::hours(1)).format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let [spk, srk, epk, erk] = range;
    let sts = format!(
        "{sp}\n\n{se}\n/table/devstoreaccount1/{}\n\n{sip}\n{spr}\n2019-02-02\n{spk}\n{srk}\n{epk}\n{erk}",
        tn.to_lowercase()
    );
    let sig = sign(&sts);
    let enc =
        |s: &str| percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string();
    let mut q = format!("sv=2019-02-02&tn={tn}&sp={sp}&se={}&sig={}", enc(&se), enc(&sig));
    for (name, v) in [("spk", spk), ("srk", srk), ("epk", epk), ("erk", erk), ("sip", sip), ("spr", spr)] {
        if !v.is_empty() {
            q += &format!("&{name}={}", enc(v));
        }
    }
    q
}

fn unsigned(method: &str, path_and_query: &str, headers: &[(&str, &str)], body: &str) -> http::Request<Body> {
    let mut b = http::Request::builder().method(method).uri(format!("/devstoreaccount1{path_and_query}"));
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Body::from(body.to_owned())).unwrap()
}

async fn sas_table(app: &App) {
    assert_eq!(call(app, signed("POST", "/Tables", &[], r#"{"TableName":"sast"}"#)).await.0, 201);
    for (pk, rk) in [("a", "1"), ("b", "1"), ("c", "1")] {
        let body = format!(r#"{{"PartitionKey":"{pk}","RowKey":"{rk}"}}"#);
        assert_eq!(call(app, signed("POST", "/sast", &[], &body)).await.0, 201);
    }
}

#[tokio::test]
async fn sas_version_tunnelling_and_client_address() {
    let app = app();
    sas_table(&app).await;
    let tok = table_sas("sast", "raud", ["b", "", "b", ""]);
    // Without x-ms-version the request is served under the token's sv.
    let (s, h, body) = call(&app, unsigned("GET", &format!("/sast()?{tok}"), &[], "")).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(h["x-ms-version"], "2019-02-02");
    assert_eq!(body["value"].as_array().unwrap().len(), 1, "{body}");
    let (_, h, _) =
        call(&app, unsigned("GET", &format!("/sast()?{tok}"), &[("x-ms-version", "2021-12-02")], "")).await;
    assert_eq!(h["x-ms-version"], "2021-12-02");
    // X-HTTP-Method tunnelling is authorized as the tunnelled operation.
    let del = [("x-http-method", "DELETE"), ("if-match", "*")];
    let (s, _, body) =
        call(&app, unsigned("POST", &format!("/sast(PartitionKey='a',RowKey='1')?{tok}"), &del, "")).await;
    assert_eq!((s, body["odata.error"]["code"].as_str()), (403, Some("AuthorizationFailure")));
    let read_only = table_sas("sast", "r", ["", "", "", ""]);
    let (s, _, body) =
        call(&app, unsigned("POST", &format!("/sast(PartitionKey='b',RowKey='1')?{read_only}"), &del, ""))
            .await;
    assert_eq!((s, body["odata.error"]["code"].as_str()), (403, Some("AuthorizationPermissionMismatch")));
    // No connection info (as here) means an unknown client address: any sip refuses.
    let sip = table_sas_with("sast", "r", ["", "", "", ""], ["127.0.0.1", ""]);
    let (s, _, body) = call(&app, unsigned("GET", &format!("/sast()?{sip}"), &[], "")).await;
    assert_eq!((s, body["odata.error"]["code"].as_str()), (403, Some("AuthorizationSourceIPMismatch")));
    // spr=https: refused over http, accepted when the server speaks TLS.
    let https_only = table_sas_with("sast", "r", ["", "", "", ""], ["", "https"]);
    let (s, _, body) = call(&app, unsigned("GET", &format!("/sast()?{https_only}"), &[], "")).await;
    assert_eq!((s, body["odata.error"]["code"].as_str()), (403, Some("AuthorizationProtocolMismatch")));
    let tls = super::tests::app_with(super::HttpOptions { https: true, ..Default::default() });
    sas_table(&tls).await;
    let (s, _, body) = call(&tls, unsigned("GET", &format!("/sast()?{https_only}"), &[], "")).await;
    assert_eq!(s, 200, "{body}");
    assert!(body["odata.metadata"].as_str().unwrap().starts_with("https://"), "{body}");
}

fn batch_body(parts: &[(&str, &str, &str)]) -> (String, String) {
    let mut s = String::from("--b\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n");
    for (method, url, body) in parts {
        s += &format!(
            "--cs\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
             {method} http://127.0.0.1:10002/devstoreaccount1/{url} HTTP/1.1\r\nIf-Match: *\r\n\
             Content-Type: application/json\r\n\r\n{body}\r\n"
        );
    }
    s += "--cs--\r\n--b--\r\n";
    ("multipart/mixed; boundary=b".into(), s)
}

#[tokio::test]
async fn sas_batch_refusals_name_the_operation_and_write_nothing() {
    let app = app();
    sas_table(&app).await;
    let tok = table_sas("sast", "raud", ["b", "", "b", ""]);
    let send = |(ct, body): (String, String)| {
        let app = app.clone();
        let tok = tok.clone();
        async move {
            call_text(&app, unsigned("POST", &format!("/$batch?{tok}"), &[("content-type", &ct)], &body))
                .await
        }
    };
    // The second operation inserts outside the range: its part is the failure, nothing is written.
    let ins = |rk: &str, pk: &str| format!(r#"{{"PartitionKey":"{pk}","RowKey":"{rk}"}}"#);
    let (s, _, body) =
        send(batch_body(&[("POST", "sast", &ins("2", "b")), ("POST", "sast", &ins("2", "c"))])).await;
    assert_eq!(s, 202, "{body}");
    assert!(body.contains("HTTP/1.1 403") && body.contains("\"1:"), "{body}");
    // Keys in the URL: a merge outside the range.
    let parts =
        [("POST", "sast", ins("3", "b")), ("MERGE", "sast(PartitionKey='a',RowKey='1')", "{}".into())];
    let parts: Vec<_> = parts.iter().map(|(m, u, b)| (*m, *u, b.as_str())).collect();
    let (_, _, body) = send(batch_body(&parts)).await;
    assert!(body.contains("HTTP/1.1 403") && body.contains("\"1:"), "{body}");
    let (_, _, body) = call_text(&app, signed("GET", "/sast()", &[], "")).await;
    assert!(!body.contains(r#""RowKey":"2""#) && !body.contains(r#""RowKey":"3""#), "{body}");
    // In range: written.
    let (s, _, body) = send(batch_body(&[("POST", "sast", &ins("2", "b"))])).await;
    assert!(s == 202 && body.contains("HTTP/1.1 201"), "{body}");
}

/// `GET /Tables` signed (SharedKeyLite) over `date`, sent in `header`.
fn list_tables_dated(header: &str, date: &str) -> http::Request<Body> {
    let sig = sign(&format!("{date}\n/devstoreaccount1/devstoreaccount1/Tables"));
    let auth = format!("SharedKeyLite devstoreaccount1:{sig}");
    unsigned("GET", "/Tables", &[(header, date), ("authorization", &auth)], "")
}

fn minutes_from_now(m: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::minutes(m)).format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

#[tokio::test]
async fn shared_key_requests_must_be_dated_within_15_minutes_unless_loose() {
    let app = app();
    for header in ["x-ms-date", "date"] {
        for m in [-14, 0, 14] {
            let (s, _, body) = call(&app, list_tables_dated(header, &minutes_from_now(m))).await;
            assert_eq!(s, 200, "{header} {m} min: {body}");
        }
        for (m, detail) in [(-16, "Request date header too old"), (16, "in the future")] {
            let (s, _, body) = call(&app, list_tables_dated(header, &minutes_from_now(m))).await;
            assert_eq!((s, body["odata.error"]["code"].as_str()), (403, Some("AuthenticationFailed")));
            let msg = body["odata.error"]["message"]["value"].as_str().unwrap();
            assert!(msg.contains(detail), "{msg}");
        }
    }
    let (s, _, _) = call(&app, list_tables_dated("x-ms-date", "yesterday")).await;
    assert_eq!(s, 403);

    let loose = super::tests::app_with(super::HttpOptions { loose: true, ..Default::default() });
    for date in [minutes_from_now(-60 * 24), minutes_from_now(60), "Sun, 11 Oct 2009 21:49:13 GMT".into()] {
        assert_eq!(call(&loose, list_tables_dated("x-ms-date", &date)).await.0, 200, "--loose, {date}");
    }
}
