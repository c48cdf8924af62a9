//! The partition advisor's admin pages, routed by [`super::dispatch`] before any
//! account is resolved (account names are 3–24 lowercase letters and digits, so no
//! account can be called `_aztable`):
//!
//! - `GET /_aztable/insight`: the report as an HTML page, or as JSON with
//!   `Accept: application/json` (or `?format=json`);
//! - `GET /_aztable/metrics`: Prometheus text format (the advisor's, and the store's
//!   damage: `health.rs`);
//! - `GET /_aztable/insight/findings`: the gate's pending findings as JSON, 200 when
//!   there is none of the gating kinds (`--insightFailOn`, else every kind), 409 when
//!   there are some; `?all=true` for every one since the start, `?kinds=` to choose;
//!   `DELETE` of it clears them and starts the advisor's counts over (204);
//! - `POST /_aztable/insight/report`: writes the `--insightReport` file now;
//! - `DELETE /_aztable/data[?account=NAME]`: deletes every table of every account (or of
//!   one), the clean slate between tests; served with the advisor off too.
//!
//! Open when the server listens on loopback only; otherwise the request must carry an
//! account key, as `?key=<base64 key>` (percent-encoded) or an `x-aztable-key` header.
//! `--insight off`: 404.

use super::message::Response;
use super::request::header;
use super::response::build;
use super::AppState;
use base64::Engine;
use http::request::Parts;
use http::StatusCode;

/// Whether `path` is an admin path.
pub(super) fn is_admin_path(path: &str) -> bool {
    path == "/_aztable" || path.starts_with("/_aztable/")
}

fn text(status: StatusCode, body: &str) -> Response {
    build(status, &[("content-type", "text/plain; charset=utf-8".into())], body.as_bytes().to_vec())
}

/// The rule every admin page follows: on with the advisor (else 404 with `off`), `GET`
/// or `HEAD` only, open on loopback and otherwise only with an account key.
fn admit<'a>(
    state: &'a AppState,
    parts: &Parts,
    off: &'static str,
) -> Result<&'a aztable_insight::Advisor, (StatusCode, &'static str)> {
    let Some(advisor) = state.service.insight() else {
        return Err((StatusCode::NOT_FOUND, off));
    };
    let allowed: &[http::Method] = match parts.uri.path() {
        FINDINGS_PATH => &[http::Method::GET, http::Method::HEAD, http::Method::DELETE],
        REPORT_PATH => &[http::Method::POST],
        _ => &[http::Method::GET, http::Method::HEAD],
    };
    if !allowed.contains(&parts.method) {
        let why = match parts.uri.path() {
            FINDINGS_PATH => "Only GET and DELETE are served here.\n",
            REPORT_PATH => "Only POST is served here.\n",
            _ => "Only GET is served here.\n",
        };
        return Err((StatusCode::METHOD_NOT_ALLOWED, why));
    }
    check_key(state, parts, advisor.options().open)?;
    Ok(advisor)
}

/// The key rule of the admin endpoints: open on loopback, else an account key.
fn check_key(state: &AppState, parts: &Parts, open: bool) -> Result<(), (StatusCode, &'static str)> {
    if !open && !carries_account_key(state, parts) {
        return Err((
            StatusCode::FORBIDDEN,
            "The server listens beyond loopback: pass an account key as ?key=<base64 key, \
             percent-encoded> or in an x-aztable-key header.\n",
        ));
    }
    Ok(())
}

const FINDINGS_PATH: &str = "/_aztable/insight/findings";
const REPORT_PATH: &str = "/_aztable/insight/report";
/// The admin reset's path.
const DATA_PATH: &str = "/_aztable/data";

/// Whether `path` is the admin reset's.
pub(super) fn is_data_path(path: &str) -> bool {
    path == DATA_PATH || path == "/_aztable/data/"
}

fn json(status: StatusCode, value: &serde_json::Value) -> Response {
    let body = serde_json::to_vec_pretty(value).unwrap_or_default();
    build(status, &[("content-type", "application/json".into()), ("cache-control", "no-store".into())], body)
}

/// `GET`/`DELETE /_aztable/insight/findings`.
fn findings(state: &AppState, advisor: &aztable_insight::Advisor, parts: &Parts) -> Response {
    use aztable_insight::gate::GateKind;
    if parts.method == http::Method::DELETE {
        advisor.acknowledge();
        return build(StatusCode::NO_CONTENT, &[], Vec::new());
    }
    let mut all = false;
    let mut kinds = state.options.insight_fail_on.clone();
    for (k, v) in form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes()) {
        match k.as_ref() {
            "all" => all = matches!(v.as_ref(), "true" | "1"),
            "kinds" => match GateKind::parse_list(&v) {
                Ok(list) => kinds = list,
                Err(e) => return text(StatusCode::BAD_REQUEST, &format!("kinds: {e}\n")),
            },
            _ => {}
        }
    }
    if kinds.is_empty() {
        kinds = GateKind::ALL.to_vec();
    }
    let found = advisor.gate_findings(&kinds, all);
    // 409 Conflict: the traffic so far conflicts with the partitioning rules asked for
    let status = if found.is_empty() { StatusCode::OK } else { StatusCode::CONFLICT };
    let kinds: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
    json(status, &serde_json::json!({ "gating_kinds": kinds, "all": all, "findings": found }))
}

/// `POST /_aztable/insight/report`.
fn write_report(state: &AppState, advisor: &aztable_insight::Advisor) -> Response {
    let Some(path) = &state.options.insight_report else {
        return text(StatusCode::NOT_FOUND, "No report file: start the server with --insightReport FILE.\n");
    };
    match crate::harness::write_report(advisor, path) {
        Ok(()) => json(StatusCode::OK, &serde_json::json!({ "written": path.display().to_string() })),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e}\n")),
    }
}

/// `DELETE /_aztable/data[?account=NAME]`: every table of every account, or of one.
pub(super) fn reset_data(state: &AppState, parts: &Parts) -> Response {
    if parts.method != http::Method::DELETE {
        return text(StatusCode::METHOD_NOT_ALLOWED, "Only DELETE is served here.\n");
    }
    let open = state.options.admin_open || state.service.insight().is_some_and(|a| a.options().open);
    if let Err((status, why)) = check_key(state, parts, open) {
        return text(status, why);
    }
    let wanted = form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes())
        .find(|(k, _)| k == "account")
        .map(|(_, v)| v.into_owned());
    let accounts = match wanted {
        Some(name) if state.accounts.get(&name).is_some() => vec![name],
        Some(name) => return text(StatusCode::NOT_FOUND, &format!("No account '{name}' on this server.\n")),
        None => state.accounts.names(),
    };
    let mut deleted = 0;
    for account in &accounts {
        match state.service.tables().delete_all_tables(account) {
            Ok(n) => deleted += n,
            Err(e) => return text(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e}\n")),
        }
    }
    tracing::info!(tables = deleted, accounts = ?accounts, "admin reset: tables deleted");
    json(StatusCode::OK, &serde_json::json!({ "accounts": accounts, "tables_deleted": deleted }))
}

/// Answers an admin request.
pub(super) fn serve(state: &AppState, parts: &Parts) -> Response {
    let advisor = match admit(state, parts, "The partition advisor is off (--insight off).\n") {
        Ok(advisor) => advisor,
        Err((status, why)) => return text(status, why),
    };
    let query = parts.uri.query().unwrap_or("");
    let no_store = ("cache-control", "no-store".to_owned());
    match parts.uri.path() {
        "/_aztable/insight" | "/_aztable/insight/" => {
            let report = advisor.report();
            let json = header(&parts.headers, "accept").is_some_and(|a| a.contains("application/json"))
                || form_urlencoded::parse(query.as_bytes()).any(|(k, v)| k == "format" && v == "json");
            if json {
                let body = serde_json::to_vec_pretty(&report).unwrap_or_default();
                build(StatusCode::OK, &[("content-type", "application/json".into()), no_store], body)
            } else {
                let headers = [
                    ("content-type", "text/html; charset=utf-8".to_owned()),
                    no_store,
                    // self-contained: nothing is fetched, nothing runs
                    ("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'".to_owned()),
                ];
                build(StatusCode::OK, &headers, aztable_insight::html::render(&report).into_bytes())
            }
        }
        FINDINGS_PATH => findings(state, advisor, parts),
        REPORT_PATH => write_report(state, advisor),
        "/_aztable/metrics" => {
            let mut body = aztable_insight::prom::render(&advisor.report());
            body.push_str(&super::health::metrics(&state.service.damage()));
            build(
                StatusCode::OK,
                &[("content-type", "text/plain; version=0.0.4; charset=utf-8".into()), no_store],
                body.into_bytes(),
            )
        }
        _ => text(
            StatusCode::NOT_FOUND,
            "Admin pages: /_aztable/insight, /_aztable/insight/findings, /_aztable/metrics.\n",
        ),
    }
}

/// Whether the request carries the key of one of the server's accounts.
fn carries_account_key(state: &AppState, parts: &Parts) -> bool {
    let from_query = form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes())
        .find(|(k, _)| k == "key")
        // form decoding turns a base64 '+' left unencoded into a space
        .map(|(_, v)| v.replace(' ', "+"));
    let given = from_query.or_else(|| header(&parts.headers, "x-aztable-key").map(str::to_owned));
    let Some(key) = given.and_then(|k| base64::engine::general_purpose::STANDARD.decode(k.trim()).ok())
    else {
        return false;
    };
    state
        .accounts
        .names()
        .iter()
        .filter_map(|n| state.accounts.get(n))
        .any(|account| account.keys.iter().any(|k| constant_time_eq(k, &key)))
}

/// Compares without stopping at the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether `path` is the data browser's (`/_aztable/browse`, `/_aztable/browse/...`).
pub(super) fn is_browse_path(path: &str) -> bool {
    path == "/_aztable/browse" || path.starts_with("/_aztable/browse/")
}

/// The read-only data browser: `GET /_aztable/browse` (the tables of each account) and
/// `GET /_aztable/browse/<account>/<table>?filter=…&next=…` (50 entities a page). The
/// advisor's access rule applies, and it is off with the advisor (`--insight off`).
pub(super) async fn serve_browse(state: &AppState, parts: &Parts) -> Response {
    use aztable_insight::browse;
    if let Err((status, why)) = admit(state, parts, "The admin pages are off (--insight off).\n") {
        return text(status, why);
    }
    let params: Vec<(String, String)> =
        form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes()).into_owned().collect();
    let param = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    // form decoding turns a base64 '+' left unencoded into a space
    let key = param("key").map(|k| k.replace(' ', "+"));
    let html = |status: StatusCode, body: String| {
        let headers = [
            ("content-type", "text/html; charset=utf-8".to_owned()),
            ("cache-control", "no-store".to_owned()),
            (
                "content-security-policy",
                "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'".to_owned(),
            ),
        ];
        build(status, &headers, body.into_bytes())
    };
    let rest = parts.uri.path().trim_start_matches("/_aztable/browse").trim_matches('/');
    if rest.is_empty() {
        let mut accounts = Vec::new();
        for name in state.accounts.names() {
            let tables = match state.service.tables().query_tables(&name, None, 1000, None).await {
                Ok((tables, _)) => tables,
                Err(e) => return text(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e}\n")),
            };
            accounts.push((name, tables));
        }
        return html(StatusCode::OK, browse::tables_page(&accounts, key.as_deref()));
    }
    let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
    let Some((account, table)) = rest.split_once('/').map(|(a, t)| (decode(a), decode(t))) else {
        return text(StatusCode::NOT_FOUND, "Browse /_aztable/browse/<account>/<table>.\n");
    };
    if state.accounts.get(&account).is_none() {
        return text(StatusCode::NOT_FOUND, "No such account.\n");
    }
    let filter_text = param("filter").unwrap_or_default();
    let (filter, error) = match filter_text.trim() {
        "" => (None, None),
        f => match aztable_wire::filter::parse(f) {
            Ok(expr) => (Some(expr), None),
            Err(e) => (None, Some(e.to_string())),
        },
    };
    let start = param("next").as_deref().and_then(browse::parse_next);
    let mut page_entities = Vec::new();
    let mut next = None;
    if error.is_none() {
        let q = aztable_engine::service::QueryEntities { start, top: browse::PAGE_SIZE, filter };
        match state.service.entities().query_entities(account.as_str(), &table, &q).await {
            Ok(page) => {
                page_entities = page.entities;
                next = page.next;
            }
            Err(aztable_engine::service::ServiceError::TableNotFound) => {
                return text(StatusCode::NOT_FOUND, "No such table.\n")
            }
            Err(e) => return text(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e}\n")),
        }
    }
    let status = if error.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
    let body = browse::entities_page(&browse::EntityPage {
        account: &account,
        table: &table,
        filter: &filter_text,
        entities: &page_entities,
        next: next.as_ref().map(|(p, r)| (p.as_str(), r.as_str())),
        error: error.as_deref(),
        key: key.as_deref(),
    });
    html(status, body)
}
