//! Black-box: every code of the error registry (`crates/model/src/error/codes.rs`) is answered by the
//! real server with its status, the code in the body (`odata.error.code` in JSON, `<code>`
//! in an Atom-era XML error) and the same code in `x-ms-error-code`.
//!
//! [`COVERAGE`] names, for each code, a test that checks all three; the tests of other
//! modules are only named here, the rest are below. A failed change set is the one answer
//! whose code is not in a header: the batch itself is a 202, and the code is in the failing
//! part's status and body. [`WITHOUT_A_TEST`] holds the codes no black-box test produces
//! yet. [`the_coverage_table_names_every_registry_code_and_real_tests`] keeps both lists in
//! step with the registry and with the test sources.

use crate::common::*;
use serde_json::{json, Map, Value};

const COVERAGE: &[(&str, &str)] = &[
    ("AtomFormatNotSupported", "atom::new_versions_refuse_atom_with_415_atom_format_not_supported"),
    ("AuthenticationFailed", "access::table_sas_signature_and_validity_window"),
    ("AuthorizationFailure", "access::table_sas_permissions_and_scope"),
    ("AuthorizationPermissionMismatch", "access::table_sas_permissions_and_scope"),
    ("AuthorizationProtocolMismatch", "access::sas_source_ip_and_protocol"),
    ("AuthorizationResourceTypeMismatch", "access::account_sas_services_resource_types_permissions"),
    ("AuthorizationServiceMismatch", "access::account_sas_services_resource_types_permissions"),
    ("AuthorizationSourceIPMismatch", "access::sas_source_ip_and_protocol"),
    (
        "CommandsInBatchActOnDifferentPartitions",
        "batch::different_partition_keys_are_refused_and_nothing_is_written",
    ),
    ("CorsPreflightFailure", "access::cors_preflight_and_actual_requests"),
    (
        "DataCorrupted",
        "damaged_serving::a_damaged_block_is_named_on_every_read_and_refuses_writes_and_verify_on_start",
    ),
    ("DuplicatePropertiesSpecified", "atom::invalid_atom_bodies_are_400_and_write_nothing"),
    ("EntityAlreadyExists", "atom::insert_with_an_atom_body_answers_an_entry_with_etag_and_location"),
    ("EntityTooLarge", "error_codes::entity_codes"),
    (
        "InsufficientAccountPermissions",
        "wire_routing::writes_to_the_secondary_endpoint_are_insufficient_account_permissions",
    ),
    ("InternalError", "error_codes::a_corrupt_stored_record_is_internal_error"),
    ("InvalidAuthenticationInfo", "error_codes::missing_and_malformed_authorization"),
    ("InvalidDuplicateRow", "batch::same_row_twice_is_invalid_duplicate_row"),
    ("InvalidHeaderValue", "errors::version_and_routing_errors"),
    ("InvalidInput", "atom::invalid_atom_bodies_are_400_and_write_nothing"),
    ("InvalidQueryParameterValue", "access::sas_with_stored_policy_revocation_and_conflicts"),
    ("InvalidResourceName", "error_codes::request_codes"),
    ("InvalidUri", "error_codes::request_codes"),
    ("InvalidXmlDocument", "access::service_properties_defaults_round_trip_and_limits"),
    ("MediaTypeNotSupported", "atom::unsupported_body_media_type_is_415_in_the_negotiated_format"),
    ("MethodNotAllowed", "error_codes::request_codes"),
    ("MissingRequiredHeader", "error_codes::request_codes"),
    ("NoAuthenticationInformation", "error_codes::missing_and_malformed_authorization"),
    ("NotImplemented", "wire_routing::a_table_url_used_as_the_account_url_is_read_with_the_table_first"),
    ("OperationTimedOut", "throttle::an_after_write_fault_leaves_the_write_applied"),
    ("OutOfRangeInput", "error_codes::entity_codes"),
    ("PropertiesNeedValue", "atom::invalid_atom_bodies_are_400_and_write_nothing"),
    ("PropertyNameInvalid", "error_codes::entity_codes"),
    ("PropertyNameTooLong", "error_codes::entity_codes"),
    ("PropertyValueTooLarge", "error_codes::entity_codes"),
    ("RequestBodyTooLarge", "error_codes::entity_codes"),
    ("RequestHeaderFieldsTooLarge", "hostile::over_long_uris_and_heads_get_odata_errors"),
    ("RequestTimeout", "hostile::a_body_shorter_than_its_content_length_is_cut_off"),
    ("RequestUriTooLong", "hostile::over_long_uris_and_heads_get_odata_errors"),
    ("ResourceNotFound", "atom::errors_under_atom_are_xml_with_the_json_status_and_code"),
    ("ServerBusy", "throttle::a_burst_above_the_partition_rate_is_refused_and_writes_nothing"),
    ("TableAlreadyExists", "atom::create_table_with_an_atom_body"),
    ("TableBeingDeleted", "surprises::create_table_during_the_delete_delay_is_table_being_deleted"),
    ("TableNotFound", "error_codes::request_codes"),
    ("TooManyProperties", "error_codes::entity_codes"),
    ("UpdateConditionNotSatisfied", "atom::update_merge_and_upserts_with_atom_bodies"),
    ("XMethodIncorrectCount", "error_codes::request_codes"),
    ("XMethodIncorrectValue", "error_codes::request_codes"),
    ("XMethodNotUsingPost", "error_codes::request_codes"),
];

const WITHOUT_A_TEST: &[&str] = &[];

/// The sources of the test modules [`COVERAGE`] names.
const MODULES: &[(&str, &str)] = &[
    ("access", include_str!("access.rs")),
    ("atom", include_str!("atom.rs")),
    ("batch", include_str!("batch.rs")),
    ("damaged_serving", include_str!("damaged_serving.rs")),
    ("error_codes", include_str!("error_codes.rs")),
    ("errors", include_str!("errors.rs")),
    ("hostile", include_str!("hostile.rs")),
    ("surprises", include_str!("surprises.rs")),
    ("throttle", include_str!("throttle.rs")),
    ("wire_routing", include_str!("wire_routing.rs")),
];

const ATOM_VERSION: &str = "2013-08-15";
const ATOM_ACCEPT: &str = "application/atom+xml";
const METADATA_NS: &str = "http://schemas.microsoft.com/ado/2007/08/dataservices/metadata";

/// Asserts an error answer: `status`, `code` in `x-ms-error-code`, and `code` in the body
/// (JSON `odata.error.code`, or the `<code>` of an XML `<error>` in the metadata
/// namespace, as the Content-Type says).
#[track_caller]
fn assert_error_code(r: &Resp, status: u16, code: &str) {
    assert_eq!(r.status, status, "{code}: status; body: {}", r.body);
    assert_eq!(
        r.header("x-ms-error-code").as_deref(),
        Some(code),
        "{code}: x-ms-error-code; body: {}",
        r.body
    );
    let ct = r.header("content-type").unwrap_or_default();
    let in_body = if ct.starts_with("application/json") {
        r.error_code()
    } else if ct == "application/xml" {
        xml_error_code(&r.body)
    } else {
        panic!("{code}: an error body is JSON or XML, not {ct:?}: {}", r.body)
    };
    assert_eq!(in_body, code, "{code}: the body's code; body: {}", r.body);
}

/// The text of `<code>` in an XML error whose root is `<error>` in the metadata namespace.
fn xml_error_code(body: &str) -> String {
    let root = format!(r#"<error xmlns="{METADATA_NS}"><code>"#);
    let Some(start) = body.find(&root) else {
        panic!("not an XML error in the metadata namespace: {body}");
    };
    let rest = &body[start + root.len()..];
    rest[..rest.find("</code>").expect("</code>")].to_owned()
}

/// One request and the error it must answer.
struct Case {
    code: &'static str,
    status: u16,
    method: &'static str,
    path: String,
    headers: Vec<(&'static str, &'static str)>,
    body: Option<String>,
}

fn case(code: &'static str, status: u16, method: &'static str, path: &str) -> Case {
    Case { code, status, method, path: path.to_owned(), headers: Vec::new(), body: None }
}

impl Case {
    fn h(mut self, name: &'static str, value: &'static str) -> Case {
        self.headers.push((name, value));
        self
    }

    fn body(mut self, body: impl Into<String>) -> Case {
        self.body = Some(body.into());
        self
    }

    /// Asks for Atom under a version that has it: the error comes back as XML.
    fn atom(self) -> Case {
        self.h("x-ms-version", ATOM_VERSION).h("Accept", ATOM_ACCEPT)
    }

    async fn check(&self, c: &Client) {
        let r = c.send(self.method, &self.path, &self.headers, self.body.as_deref()).await;
        let what = format!("{} {} {:?}", self.method, self.path, self.headers);
        assert_eq!(r.status, self.status, "{what} answers {}: {}", self.code, r.body);
        assert_error_code(&r, self.status, self.code);
    }
}

/// An entity of `p`/`rk` with the properties `props` added.
fn entity(rk: &str, props: impl IntoIterator<Item = (String, Value)>) -> String {
    let mut e = Map::new();
    e.insert("PartitionKey".into(), json!("p"));
    e.insert("RowKey".into(), json!(rk));
    e.extend(props);
    Value::Object(e).to_string()
}

/// `n` string properties of `len` characters each.
fn strings(n: usize, len: usize) -> Vec<(String, Value)> {
    (0..n).map(|i| (format!("s{i}"), json!("y".repeat(len)))).collect()
}

/// The text of `async fn name()` in `source`, up to its closing brace at the start of a line.
fn test_fn<'s>(source: &'s str, name: &str) -> Option<&'s str> {
    let start = source.find(&format!("async fn {name}()"))?;
    let len = source[start..].find("\n}\n")?;
    Some(&source[start..start + len])
}

#[test]
fn the_coverage_table_names_every_registry_code_and_real_tests() {
    let registry = include_str!("../../crates/model/src/error/codes.rs");
    let as_str = &registry[registry.find("pub fn as_str").unwrap()..registry.find("pub fn status").unwrap()];
    let mut codes: Vec<&str> = as_str.split("=> \"").skip(1).map(|s| &s[..s.find('"').unwrap()]).collect();
    codes.sort_unstable();
    let mut listed: Vec<&str> =
        COVERAGE.iter().map(|(code, _)| *code).chain(WITHOUT_A_TEST.iter().copied()).collect();
    listed.sort_unstable();
    assert_eq!(listed, codes, "COVERAGE and WITHOUT_A_TEST list each registry code once");
    for (code, test) in COVERAGE {
        let (module, name) = test.split_once("::").unwrap();
        let source = MODULES.iter().find(|(m, _)| *m == module).map(|(_, s)| *s);
        let source = source.unwrap_or_else(|| panic!("{code}: no module {module}"));
        let body = test_fn(source, name).unwrap_or_else(|| panic!("{code}: no test {test}"));
        assert!(body.contains(&format!("\"{code}\"")), "{code}: {test} never names it");
    }
}

#[tokio::test]
async fn request_codes() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("codes").await.status, 201);
    assert_eq!(c.insert("codes", json!({"PartitionKey": "p", "RowKey": "r"})).await.status, 201);
    let row = entity_path("codes", "p", "r");
    let cases = [
        case("TableNotFound", 404, "POST", "/nosuchtable").body(entity("r", [])),
        case("TableNotFound", 404, "GET", "/nosuchtable()").atom(),
        case("InvalidResourceName", 400, "POST", "/Tables").body(r#"{"TableName":"a-b"}"#),
        case("InvalidUri", 400, "GET", "/a/b/c"),
        case("InvalidUri", 400, "GET", "/a/b/c").atom(),
        case("MethodNotAllowed", 405, "PUT", "/Tables").body("{}"),
        case("MethodNotAllowed", 405, "PUT", "/Tables").atom(),
        case("MissingRequiredHeader", 400, "DELETE", &row),
        case("XMethodNotUsingPost", 400, "PUT", &row).h("X-HTTP-Method", "MERGE").body("{}"),
        case("XMethodIncorrectValue", 400, "POST", &row).h("X-HTTP-Method", "GET").body("{}"),
        case("XMethodIncorrectCount", 400, "POST", &row).h("X-HTTP-Method", "MERGE, PUT").body("{}"),
    ];
    for case in &cases {
        case.check(&c).await;
    }
}

#[tokio::test]
async fn entity_codes() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("codes").await.status, 201);
    let long_key = entity(&"k".repeat(1025), []);
    let bad_name = entity("1", [("bad-name".to_owned(), json!(1))]);
    let long_name = entity("2", [("n".repeat(256), json!(1))]);
    let long_value = entity("3", strings(1, 32 * 1024 + 1));
    let many = entity("4", (0..253).map(|i| (format!("p{i}"), json!(i))));
    let large = entity("5", strings(40, 30_000));
    let over_4_mib = entity("6", strings(150, 30_000));
    let cases = [
        case("OutOfRangeInput", 400, "POST", "/codes").body(long_key),
        case("PropertyNameInvalid", 400, "POST", "/codes").body(bad_name),
        case("PropertyNameTooLong", 400, "POST", "/codes").body(long_name),
        case("PropertyValueTooLarge", 400, "POST", "/codes").body(long_value),
        case("TooManyProperties", 400, "POST", "/codes").body(many),
        case("EntityTooLarge", 400, "POST", "/codes").body(large),
        case("RequestBodyTooLarge", 413, "POST", "/codes").body(over_4_mib),
    ];
    for case in &cases {
        case.check(&c).await;
    }
    let v = c.send("GET", "/codes()", &[], None).await.json();
    assert_eq!(v["value"], json!([]), "nothing was written");
}

#[tokio::test]
async fn missing_and_malformed_authorization() {
    let server = TestServer::start();
    let http = reqwest::Client::new();
    let url = format!("{}/Tables", server.endpoint());
    for (authorization, status, code) in [
        (None, 401, "NoAuthenticationInformation"),
        (Some("SharedKey devstoreaccount1"), 401, "InvalidAuthenticationInfo"),
        (Some("SharedKey"), 401, "InvalidAuthenticationInfo"),
    ] {
        let mut req = http
            .get(&url)
            .header("x-ms-date", now_rfc1123())
            .header("x-ms-version", "2019-02-02")
            .header("Accept", "application/json;odata=minimalmetadata");
        if let Some(a) = authorization {
            req = req.header("Authorization", a);
        }
        let r = Resp::read(req.send().await.unwrap()).await;
        assert_error_code(&r, status, code);
    }
}

/// A stored record the server cannot read back is its own fault: 500 `InternalError`,
/// without the engine's text. The record is planted while the server is stopped.
#[cfg(feature = "rocksdb")]
#[tokio::test]
async fn a_corrupt_stored_record_is_internal_error() {
    use aztable_store::{keys, rocks::RocksStore, Store, WriteBatch};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let mut server = TestServer::start_on(&dir, &[]);
    assert_eq!(server.client().create_table("corrupt").await.status, 201);
    assert!(server.terminate(), "clean stop");
    {
        let store = RocksStore::open(&dir).unwrap();
        let mut batch = WriteBatch::new();
        batch.put(keys::table_acl_key(ACCOUNT, "corrupt"), b"<SignedIdentifiers><Sig".to_vec());
        store.write(batch).unwrap();
    }
    let server = TestServer::start_on(&dir, &[]);
    let c = server.client();
    let r = c.send("GET", "/corrupt?comp=acl", &[], None).await;
    assert_error_code(&r, 500, "InternalError");
    assert!(!r.body.contains("SignedIdentifiers"), "the stored bytes stay in the log: {}", r.body);
    assert_eq!(c.send("GET", "/Tables('corrupt')", &[], None).await.status, 200, "the rest still works");
}
