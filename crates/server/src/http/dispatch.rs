//! [`dispatch`]: the single entry point of every request. Builds the
//! [`RequestCtx`], resolves path-style or host-style accounts, applies `X-HTTP-Method`
//! tunnelling, checks `x-ms-version`, authenticates (SharedKey with a 15-minute date
//! window unless `--loose`, a shared access signature, or with `--oauth` a bearer
//! token), routes and renders errors, adds CORS headers; logs one line per request.

use super::body::{charge_parsed_form, read_body, settle_refused, DRAIN_LIMIT};
use super::catch_panic::caught;
use super::ctx::{self, RequestCtx};
use super::message::Body;
use super::message::Response;
use super::query::QueryParams;
use super::request::{text, Head, Kept, Req, X_HTTP_METHOD};
use super::{error_response, handlers, limits, response, AppState};
use aztable_model::error::{ApiError, ErrorCode};
use aztable_wire::auth::{self, AuthRequest};
use aztable_wire::endpoint::{Endpoint, UnderTable};
use http::request::Parts;
use http_body::Body as _;
use std::net::SocketAddr;
use tokio::time::Instant;

/// `Keep-Alive` (not among `http::header`'s names).
static KEEP_ALIVE: http::HeaderName = http::HeaderName::from_static("keep-alive");

/// `x-ms-error-code`, as the access log reads it.
static X_MS_ERROR_CODE: http::HeaderName = http::HeaderName::from_static("x-ms-error-code");

/// Where the account came from.
struct AccountRef<'a> {
    /// As written in the URL (may end in `-secondary`).
    url_name: &'a str,
    /// For path-style URLs: the path prefix naming the account (`/devstoreaccount1`).
    path_prefix: Option<&'a str>,
}

/// Serves one request; `client` is the peer's address when known (SAS `sip`, the log).
pub(super) async fn dispatch(
    state: &AppState,
    client: Option<SocketAddr>,
    req: http::Request<Body>,
) -> Response {
    let started = Instant::now();
    let (parts, body) = req.into_parts();
    if super::insight::is_browse_path(parts.uri.path()) {
        // the read-only data browser (async: it reads tables)
        return super::insight::serve_browse(state, &parts).await;
    }
    if super::insight::is_data_path(parts.uri.path()) {
        // the admin reset: every table of every account, or of one
        return super::insight::reset_data(state, &parts);
    }
    if super::insight::is_admin_path(parts.uri.path()) {
        // the partition advisor's pages: no account, no version
        return super::insight::serve(state, &parts);
    }
    let mut ctx = RequestCtx {
        request_id: ctx::new_request_id(),
        version: ctx::LATEST_VERSION_VALUE,
        // (`handle` sets it first thing)
        client_request_id: None,
        account: String::new(),
        secondary: false,
        base_url: String::new(),
        sas: None,
        xml_errors: false,
        operation: "Unknown",
        negotiated: None,
    };
    // What the access log and CORS need after `handle` consumes the request head:
    // cheaper than cloning every header (the URI shares its bytes).
    let method = parts.method.clone();
    let uri = parts.uri.clone();
    let (path, query) = (uri.path(), uri.query());
    // `--debug FILE`: the request in detail, secrets hidden
    tracing::debug!(
        target: "aztable::debug",
        request_id = %ctx.request_id,
        client = client.map(tracing::field::display),
        "{method} {path}{} headers:{}",
        shown_query(query),
        super::redact::headers(&parts.headers),
    );
    let mut kept = Kept::default();
    let result = match caught(handle(state, &mut ctx, &mut kept, client, parts, body, started)).await {
        Ok(result) => result,
        Err(panic) => {
            tracing::error!(request_id = %ctx.request_id, panic = %panic, "request handler panicked");
            let mut e = ApiError::new(ErrorCode::InternalError);
            e.close_connection = true;
            Err(e)
        }
    };
    // only an error answer says `Connection: close` (`error_response::render`)
    let closing = matches!(&result, Err(e) if e.close_connection);
    let mut resp = match result {
        Ok(r) => r,
        Err(e) => {
            if let Some(detail) = &e.auth_detail {
                // the string to sign the server computed, for comparing with the client's
                tracing::debug!(
                    target: "aztable::debug",
                    request_id = %ctx.request_id,
                    "{} {}: {detail}",
                    e.status(),
                    e.code.as_str()
                );
            }
            error_response::render(&e, &ctx)
        }
    };
    response::finish(&mut resp, &ctx);
    // the idle timeout the connection has (see `server`), unless it is closing anyway:
    // the answer says `Connection: close`, or hyper will say it for a client that asked
    if let Some(keep_alive) = &state.options.keep_alive {
        if kept.client_keeps && !closing {
            resp.headers_mut().insert(KEEP_ALIVE.clone(), keep_alive.clone());
        }
    }
    if let Some(origin) = &kept.origin {
        add_cors_headers(state, &ctx, origin, &method, &mut resp);
    }
    tracing::info!(
        target: "aztable::access",
        client = client.map(tracing::field::display),
        method = %method,
        operation = ctx.operation,
        status = resp.status().as_u16(),
        error_code = resp.headers().get(&X_MS_ERROR_CODE).and_then(|v| v.to_str().ok()),
        latency_us = started.elapsed().as_micros() as u64,
        request_id = %ctx.request_id,
        "{method} {path}{}",
        shown_query(query),
    );
    resp
}

/// Whether the client lets the connection stay open after this request (hyper answers
/// `Connection: close` otherwise): HTTP/1.1 unless it sent `Connection: close`,
/// HTTP/1.0 only with `Connection: keep-alive` (`has_connection`: whether the request has
/// a `Connection` header at all).
fn client_keeps_connection(parts: &Parts, has_connection: bool) -> bool {
    let says =
        |token: &str| {
            has_connection
                && parts.headers.get_all(http::header::CONNECTION).iter().any(|v| {
                    v.to_str().is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
                })
        };
    match parts.version {
        http::Version::HTTP_10 | http::Version::HTTP_09 => says("keep-alive") && !says("close"),
        _ => !says("close"),
    }
}

/// The query string as logged (`?` and the query with secrets hidden, or nothing).
fn shown_query(query: Option<&str>) -> String {
    match query {
        Some(q) if !q.is_empty() => format!("?{}", super::redact::query(q)),
        _ => String::new(),
    }
}

/// Checks and answers the request. What the answer needs of the request's head whatever
/// happens next (the client request id to echo in `ctx`, and `kept`) is taken first,
/// in the same pass over the headers as the head checks' ([`Head`]).
async fn handle(
    state: &AppState,
    ctx: &mut RequestCtx,
    kept: &mut Kept,
    client: Option<SocketAddr>,
    parts: Parts,
    body: Body,
    started: Instant,
) -> Result<Response, ApiError> {
    let checked = {
        // (in a block of its own: the head's borrows are not kept across the awaits)
        let head = Head::read(&parts.headers);
        ctx.client_request_id = head.echoed_client_request_id();
        kept.origin = text(head.origin).map(str::to_owned);
        kept.client_keeps = client_keeps_connection(&parts, head.connection);
        #[cfg(test)]
        if parts.headers.contains_key("x-aztable-test-panic") {
            panic!("x-aztable-test-panic");
        }
        if super::health::is_probe(&parts) {
            if let Some(damaged) = super::health::damaged(state) {
                return Err(damaged);
            }
        }
        check_head(state, ctx, client, &parts, &head)
    };
    let limits = &state.options.limits;
    // Everything that can refuse the request is decided on its head, before the body is
    // buffered (SharedKey, SharedKeyLite, SAS and bearer tokens sign no body): an
    // unauthenticated client cannot make the server hold its body. A refused request's
    // small body is drained to keep the connection; a larger one's is not awaited, and
    // the answer closes the connection (`body::settle_refused`).
    let (endpoint, query) = match checked {
        Ok(checked) => checked,
        Err(mut e) => {
            settle_refused(body, &mut e, limits, started).await;
            return Err(e);
        }
    };
    if body.size_hint().lower() > DRAIN_LIMIT as u64 {
        // not worth reading: answer at once and close the connection
        let mut e = ApiError::new(ErrorCode::RequestBodyTooLarge);
        e.close_connection = true;
        return Err(e);
    }
    // the budget holds the body and, until the handler has answered, its parsed form
    let (body, mut held) = if body.is_end_stream() {
        // no body (a GET's): what `read_body` gives for it at once, whatever the
        // deadlines (its timer polls the body first), without setting up its pacing
        (bytes::Bytes::new(), limits.body_budget.share())
    } else {
        read_body(body, limits, started).await?
    };
    charge_parsed_form(&mut held, &body)?;
    let req = Req { headers: parts.headers, query, body };
    let armed = super::fault::before(state.options.faults.as_deref(), &endpoint, &req)?;
    let deadline = started + limits.request_timeout;
    let handler_started = Instant::now();
    let resp = match handlers::handle(state, ctx, endpoint, &req) {
        handlers::Handled::Now(resp) => resp,
        handlers::Handled::Waits(handler) => within(deadline, handler).await,
    };
    tracing::debug!(
        target: "aztable::debug",
        request_id = %ctx.request_id,
        operation = ctx.operation,
        handler_us = handler_started.elapsed().as_micros() as u64,
        "handled"
    );
    if armed {
        super::fault::after(resp.as_ref())?;
    }
    resp
}

/// The answer of a handler that waits, or, past `deadline`, the service's answer to a
/// request over its server-side time (500 `OperationTimedOut`). Most such handlers still
/// answer on their first poll (a write to a partition nobody else writes): that poll is
/// made before the timer is set up (500 instructions), which only a handler that really
/// waits needs. `timeout_at` too polls the handler before its timer, so the answers are
/// the same. (A handler that never waits answers at once, whatever the deadline.)
async fn within(
    deadline: Instant,
    handler: impl std::future::Future<Output = Result<Response, ApiError>>,
) -> Result<Response, ApiError> {
    let mut handler = std::pin::pin!(handler);
    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(handler.as_mut().poll(cx))).await;
    if let std::task::Poll::Ready(resp) = first {
        return resp;
    }
    match tokio::time::timeout_at(deadline, handler).await {
        Ok(resp) => resp,
        Err(_) => Err(ApiError::new(ErrorCode::OperationTimedOut)),
    }
}

/// The checks made on the request head, in stages, each taking what the one before
/// produced: the head's limits and version ([`check_head_and_version`]), the account and the
/// operation ([`route`]), the caller ([`authenticate`]). Each stage records in `ctx`
/// what an error answer needs (version, error format, account, operation). The headers
/// they read were read first, in one pass (`head`).
fn check_head(
    state: &AppState,
    ctx: &mut RequestCtx,
    client: Option<SocketAddr>,
    parts: &Parts,
    head: &Head<'_>,
) -> Result<(Endpoint, QueryParams), ApiError> {
    let query = check_head_and_version(state, ctx, parts, head)?;
    let routed = route(state, ctx, parts, head, &query)?;
    if routed.endpoint != Endpoint::Preflight {
        authenticate(state, ctx, client, parts, head, &query, &routed)?;
    }
    Ok((routed.endpoint, query))
}

/// The head's size and percent-escapes, the query options, `x-ms-version` and the
/// error format it implies.
fn check_head_and_version(
    state: &AppState,
    ctx: &mut RequestCtx,
    parts: &Parts,
    head: &Head<'_>,
) -> Result<QueryParams, ApiError> {
    limits::check_head(&parts.uri, parts.headers.len(), head.bytes)?;
    let query = QueryParams::parse(parts.uri.query());
    ctx.version = ctx::check_version(head.x_ms_version, state.options.version_check).inspect_err(|_| {
        // an unusable version is answered as the newest version would be
        ctx.xml_errors = xml_errors(ctx, head, &query, false);
    })?;
    ctx.xml_errors = xml_errors(ctx, head, &query, ctx.atom_allowed());
    Ok(query)
}

/// A request routed: the REST operation, the method after `X-HTTP-Method`, and where
/// the account sits in the URL.
struct Routed<'a> {
    endpoint: Endpoint,
    method: &'a str,
    account_ref: AccountRef<'a>,
}

/// The account (path- or host-style, `-secondary`), the response URLs' base, and the
/// operation (`X-HTTP-Method` applied).
fn route<'a>(
    state: &AppState,
    ctx: &mut RequestCtx,
    parts: &'a Parts,
    head: &Head<'a>,
    query: &QueryParams,
) -> Result<Routed<'a>, ApiError> {
    let raw_path = parts.uri.path();
    let host = text(head.host);
    let account_ref = resolve_account(state, host, raw_path)?;
    let host = host.unwrap_or("127.0.0.1");
    let (account, secondary) = aztable_wire::endpoint::primary_account(account_ref.url_name);
    ctx.account = account.to_owned();
    ctx.secondary = secondary;
    let scheme = if state.options.https { "https://" } else { "http://" };
    let prefix = account_ref.path_prefix.unwrap_or_default();
    let mut base_url = String::with_capacity(scheme.len() + host.len() + prefix.len());
    for part in [scheme, host, prefix] {
        base_url.push_str(part);
    }
    ctx.base_url = base_url;
    let rest = match account_ref.path_prefix {
        Some(prefix) => &raw_path[prefix.len()..],
        None => raw_path,
    };

    let method = if head.x_http_method {
        let tunnel = parts.headers.get_all(&X_HTTP_METHOD).iter().map(|v| v.to_str().ok());
        aztable_wire::endpoint::tunnelled_method(parts.method.as_str(), tunnel)?
    } else {
        // (what `tunnelled_method` answers for no values)
        parts.method.as_str()
    };
    // The Python SDK sends service-level requests to the secondary as
    // `/<account>-secondary/<account>/?restype=service…`, naming the account twice; no
    // table operation carries `restype=service`, so the second name is the account's.
    let rest = match query.restype.as_deref() {
        Some("service") if rest.trim_matches('/') == ctx.account => "/",
        _ => rest,
    };
    let endpoint = Endpoint::route(method, rest, query.comp.as_deref(), query.restype.as_deref())?;
    ctx.operation = endpoint.name();
    if !endpoint.is_odata() {
        // the XML APIs keep the OData JSON error (docs/compatibility.md)
        ctx.xml_errors = false;
    }
    if let Endpoint::UnderTable { resource: UnderTable::ServiceProperties, .. } = endpoint {
        // the service answers these in its XML error whatever was asked for
        ctx.xml_errors = true;
    }
    Ok(Routed { endpoint, method, account_ref })
}

/// Who is asking and whether they may: the account's key (SharedKey with its date
/// window), a shared access signature or a bearer token; then the secondary's refusal
/// of writes and the URL's table name, both after the caller is known.
fn authenticate(
    state: &AppState,
    ctx: &mut RequestCtx,
    client: Option<SocketAddr>,
    parts: &Parts,
    head: &Head<'_>,
    query: &QueryParams,
    routed: &Routed<'_>,
) -> Result<(), ApiError> {
    let account = state.accounts.get(&ctx.account).ok_or_else(|| {
        let mut e = ApiError::new(ErrorCode::AuthenticationFailed);
        e.auth_detail = Some(format!("The account '{}' does not exist on this server.", ctx.account));
        e
    })?;
    let bearer = if state.options.oauth { bearer_token(head) } else { None };
    match (auth::parse_sas(parts.uri.query().unwrap_or_default()), bearer) {
        (Some(token), _) => {
            let grant = authorize_sas(state, ctx, client, parts, account, &token?, &routed.endpoint)?;
            if head.x_ms_version.is_none() {
                // served under the token's version when the request names none; a token's
                // `sv` is a version (`YYYY-MM-DD`), so always a valid header value
                let served = grant.version.as_str().min(ctx::LATEST_VERSION);
                ctx.version = http::HeaderValue::from_str(served).unwrap_or(ctx::LATEST_VERSION_VALUE);
            }
            ctx.sas = Some(grant);
            ctx.xml_errors = xml_errors(ctx, head, query, ctx.atom_allowed());
        }
        (None, Some(token)) => authorize_bearer(ctx, token, &routed.endpoint)?,
        (None, None) => {
            let auth_req = AuthRequest {
                method: parts.method.as_str(),
                raw_path: parts.uri.path(),
                query: parts.uri.query(),
                headers: &parts.headers,
            };
            auth::authenticate_signed(&auth_req, &head.signed, account, routed.account_ref.path_prefix)?;
            if !state.options.loose {
                super::request_date::check_date_skew(head)?;
            }
        }
    }
    if ctx.secondary && routed.method != "GET" {
        return Err(ApiError::new(ErrorCode::InsufficientAccountPermissions));
    }
    // the table a URL names is checked before it is looked up
    if let Some(table) = routed.endpoint.url_table() {
        aztable_model::names::validate_url_table_name(table)?;
    }
    Ok(())
}

/// Whether errors for this request are written in XML ([`aztable_wire::odata::errors_in_xml`]).
/// The format is negotiated once: what it negotiated to is kept in `ctx` for the handler.
fn xml_errors(ctx: &mut RequestCtx, head: &Head<'_>, query: &QueryParams, atom_allowed: bool) -> bool {
    let negotiated = aztable_wire::odata::negotiate(text(head.accept), query.format.as_deref(), atom_allowed);
    ctx.negotiated = negotiated.as_ref().ok().map(|format| (atom_allowed, *format));
    aztable_wire::odata::errors_in_xml_for(&negotiated)
}

/// The token of an `Authorization: Bearer <token>` header.
fn bearer_token<'h>(head: &Head<'h>) -> Option<&'h str> {
    text(head.signed.authorization)?.strip_prefix("Bearer ")
}

/// `--oauth basic`: a structurally valid, current Entra ID token for storage grants every
/// operation (no signature or role check, as in Azurite) except the table ACLs, which the
/// service refuses to Entra ID callers with 404 `ResourceNotFound`.
fn authorize_bearer(ctx: &RequestCtx, token: &str, endpoint: &Endpoint) -> Result<(), ApiError> {
    if matches!(endpoint, Endpoint::GetTableAcl { .. } | Endpoint::SetTableAcl { .. }) {
        return Err(ApiError::with_message(
            ErrorCode::ResourceNotFound,
            "The specified resource does not exist. (Table ACLs are not available with OAuth.)",
        ));
    }
    auth::oauth::verify_bearer(token, &ctx.account, aztable_model::time::server_now().timestamp())
}

/// Verifies the request's shared access signature and authorizes the operation with it
/// (the stored access policies of a table SAS with `si` come from the table's ACL);
/// returns the grant, which the caller keeps in `ctx` for the handlers that enforce its
/// key range (and whose `sv` serves a request without `x-ms-version`).
fn authorize_sas(
    state: &AppState,
    ctx: &mut RequestCtx,
    client: Option<SocketAddr>,
    parts: &Parts,
    account: &auth::Account,
    token: &auth::SasToken,
    endpoint: &Endpoint,
) -> Result<auth::SasGrant, ApiError> {
    let client_ip = client.map(|c| c.ip());
    let now = aztable_model::time::wall_now();
    let sas_ctx = auth::SasContext { account, now, client_ip, is_https: state.options.https };
    let access = state.service.access();
    let policies = |table: &str, si: &str| match access.stored_policy(&ctx.account, table, si) {
        Ok(policy) => policy,
        Err(e) => {
            tracing::error!(error = %e, "reading stored access policies");
            None
        }
    };
    let if_match = parts.headers.contains_key(http::header::IF_MATCH);
    let grant = auth::authorize_sas(token, &sas_ctx, endpoint, if_match, &policies)?;
    Ok(grant)
}

/// CORS on an actual (non-`OPTIONS`) request with an `Origin` header: adds the headers of
/// the account's first matching rule (to success and error answers alike). The account's
/// rules are read only for such requests, so requests without `Origin` pay nothing.
fn add_cors_headers(
    state: &AppState,
    ctx: &RequestCtx,
    origin: &str,
    method: &http::Method,
    resp: &mut Response,
) {
    if *method == http::Method::OPTIONS || state.accounts.get(&ctx.account).is_none() {
        return;
    }
    let Ok(props) = state.service.access().get_service_properties(&ctx.account) else { return };
    if props.cors.is_empty() {
        return;
    }
    let names: Vec<&str> = resp.headers().keys().map(http::HeaderName::as_str).collect();
    let cors = aztable_wire::settings::cors::actual_request_headers(
        &props.cors,
        Some(origin),
        method.as_str(),
        &names,
    );
    response::append_headers(resp, &cors);
}

/// Finds the account: host-style (`<account>[-secondary].<anything>` when the first
/// host label names a known account and product-style URLs are on) or path-style (the
/// first path segment).
fn resolve_account<'a>(
    state: &AppState,
    host: Option<&'a str>,
    raw_path: &'a str,
) -> Result<AccountRef<'a>, ApiError> {
    // (split at ASCII bytes by byte scans: cheaper than `str`'s searchers on such
    // short text)
    if !state.options.disable_product_style_url {
        let host = host.unwrap_or("");
        let hostname = host.rsplit_once(':').map_or(host, |(h, _)| h);
        if let Some(dot) = hostname.bytes().position(|b| b == b'.') {
            let label = &hostname[..dot];
            let (name, _) = aztable_wire::endpoint::primary_account(label);
            // the cheaper test first (both must hold)
            if state.accounts.get(name).is_some() && hostname.parse::<std::net::IpAddr>().is_err() {
                return Ok(AccountRef { url_name: label, path_prefix: None });
            }
        }
    }
    let after_slashes = raw_path.trim_start_matches('/');
    let segment =
        &after_slashes[..after_slashes.bytes().position(|b| b == b'/').unwrap_or(after_slashes.len())];
    if segment.is_empty() {
        return Err(ApiError::with_message(
            ErrorCode::InvalidUri,
            "The request URI does not name an account (path-style: /<account>/...).",
        ));
    }
    let leading = raw_path.len() - after_slashes.len();
    Ok(AccountRef { url_name: segment, path_prefix: Some(&raw_path[..leading + segment.len()]) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered() -> Result<Response, ApiError> {
        Ok(response::respond(http::StatusCode::OK, [], Vec::new()))
    }

    #[tokio::test(start_paused = true)]
    async fn a_handler_is_answered_whether_it_waits_or_not_and_cut_off_past_its_deadline() {
        let far = Instant::now() + std::time::Duration::from_secs(60);
        // answers on its first poll
        assert_eq!(within(far, async { answered() }).await.unwrap().status(), 200);
        // waits first (the timer is set up), then answers
        let waits = async {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            answered()
        };
        assert_eq!(within(far, waits).await.unwrap().status(), 200);
        // never answers: cut off at the deadline
        let never = std::future::pending::<Result<Response, ApiError>>();
        let e = within(far, never).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::OperationTimedOut);
        // an answer on the first poll is taken even past the deadline, as `timeout_at`
        // takes it
        let past = Instant::now() - std::time::Duration::from_secs(1);
        assert_eq!(within(past, async { answered() }).await.unwrap().status(), 200);
    }
}
