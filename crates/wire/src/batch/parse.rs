//! [`parse`]: a `$batch` body → [`BatchRequest`]. Checks the envelope (one change set,
//! or one lone query), the limits, and each operation's request line, verb
//! (`X-HTTP-Method` included) and route (through [`Endpoint::route`]); it does not read
//! operation bodies, so key, duplicate-row and partition checks that need the entity
//! are left to the caller. Operations borrow from the body: their headers, path, query
//! and body are slices of it (a header value is owned only when folded lines were joined).

use std::borrow::Cow;

use memchr::memchr;

use super::error::BatchError;
use super::multipart::{self, header, split_head, split_parts, strip_line_end, trim, Headers, MediaType};
use crate::endpoint::Endpoint;
use aztable_model::error::{ApiError, ErrorCode};

/// A parsed `$batch` request, borrowing from its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchRequest<'a> {
    pub kind: BatchKind,
    pub ops: Vec<BatchOp<'a>>,
}

impl BatchRequest<'_> {
    /// The table the batch addresses: its first operation's (the parser refuses a change
    /// set whose operations name another table), as that operation's URL spells it.
    pub fn table(&self) -> Option<&str> {
        self.ops.first().and_then(|op| op.endpoint.url_table())
    }
}

/// What the batch holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchKind {
    /// One change set of inserts, updates, merges and deletes, run atomically in order.
    ChangeSet,
    /// A single GET, alone in the batch (no change set); `ops` has exactly one entry.
    Query,
}

/// One operation of a batch, borrowing from the request body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchOp<'a> {
    /// 0-based position in the change set.
    pub index: usize,
    /// `Content-ID` from the operation's request headers, else from its MIME part
    /// headers (the service echoes the former).
    pub content_id: Option<Cow<'a, str>>,
    /// Effective verb after `X-HTTP-Method`: POST, PUT, MERGE, PATCH, DELETE or GET.
    pub method: &'a str,
    /// The request line's path, still percent-encoded, e.g.
    /// `/devstoreaccount1/mytable(PartitionKey='a',RowKey='b')` or `/mytable` (owned
    /// only when the `/` it lacked was added).
    pub url_path: Cow<'a, str>,
    /// The request line's query string (without `?`), if not empty.
    pub query: Option<&'a str>,
    /// The operation's request headers, names as sent (see [`BatchOp::header`]), in order.
    pub headers: Vec<(&'a str, Cow<'a, str>)>,
    /// The operation's body, byte for byte (may start with a line end: the JS SDK
    /// writes an extra CRLF before the JSON).
    pub body: &'a [u8],
    /// The REST operation the verb and URL route to (the same routing as top-level
    /// requests).
    pub endpoint: Endpoint,
}

impl BatchOp<'_> {
    /// The first value of a request header: `name` in lowercase, the names as sent
    /// compared to it ignoring ASCII case.
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    /// The account segment of a path-style URL (`/acct/table`); `None` for a
    /// host-style path (`/table`). Percent-encoded as written.
    pub fn account(&self) -> Option<&str> {
        split_account(&self.url_path).0
    }

    /// The path after the account, e.g. `/mytable(PartitionKey='a',RowKey='b')`.
    pub fn resource_path(&self) -> &str {
        split_account(&self.url_path).1
    }
}

/// Limits a batch must respect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most operations in a change set (the service: 100).
    pub max_ops: usize,
    /// Largest body in bytes (the service: 4 MiB).
    pub max_body: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_ops: 100, max_body: 4 * 1024 * 1024 }
    }
}

/// Parses a `$batch` body given the request's Content-Type header value.
pub fn parse<'a>(
    content_type: &str,
    body: &'a [u8],
    limits: &Limits,
) -> Result<BatchRequest<'a>, BatchError> {
    if body.len() > limits.max_body {
        return Err(BatchError::BodyTooLarge);
    }
    let media = MediaType::parse(content_type).ok_or(BatchError::ContentType)?;
    let boundary = media.mixed_boundary().ok_or(BatchError::ContentType)?;
    let malformed = |detail| BatchError::Malformed { detail };
    let parts = split_parts(body, boundary).map_err(|e| malformed(e.detail()))?;
    if parts.is_empty() {
        return Err(BatchError::Empty);
    }
    let mut changesets = Vec::new();
    let mut requests = Vec::new();
    for part in parts {
        let (head, content) = split_head(part);
        let headers = multipart::parse_headers(head).map_err(malformed)?;
        match header(&headers, "content-type").map(MediaType::parse) {
            Some(Some(m)) if m.essence == "multipart/mixed" => changesets.push((m, content)),
            Some(Some(m)) if m.essence == "application/http" => requests.push(part),
            None => requests.push(part),
            Some(_) => return Err(malformed("a batch part is neither a change set nor application/http")),
        }
    }
    match (changesets.as_slice(), requests.as_slice()) {
        ([(media, content)], []) => parse_changeset(media, content, limits),
        ([], [part]) => parse_query(part),
        ([_, _, ..], _) => Err(BatchError::MultipleChangeSets),
        _ => Err(BatchError::QueryNotAlone),
    }
}

/// Parses the change set part's content into its operations.
fn parse_changeset<'a>(
    media: &MediaType,
    content: &'a [u8],
    limits: &Limits,
) -> Result<BatchRequest<'a>, BatchError> {
    let boundary = media
        .mixed_boundary()
        .ok_or(BatchError::Malformed { detail: "the change set has no boundary parameter" })?;
    let parts = split_parts(content, boundary).map_err(|e| BatchError::Malformed { detail: e.detail() })?;
    if parts.is_empty() {
        return Err(BatchError::Empty);
    }
    if parts.len() > limits.max_ops {
        return Err(BatchError::TooManyOperations { max: limits.max_ops });
    }
    let mut ops = Vec::with_capacity(parts.len());
    let mut first_table: Option<String> = None;
    for (index, part) in parts.into_iter().enumerate() {
        let op = parse_op(index, part, true)?;
        let cid = op.content_id.as_deref();
        let table = match &op.endpoint {
            Endpoint::InsertEntity { table }
            | Endpoint::UpdateEntity { table, .. }
            | Endpoint::MergeEntity { table, .. }
            | Endpoint::DeleteEntity { table, .. } => table,
            Endpoint::GetEntity { .. } | Endpoint::QueryEntities { .. } => {
                return Err(BatchError::op(
                    index,
                    cid,
                    true,
                    ErrorCode::InvalidInput,
                    "A query operation is not permitted in a change set; it must be the only operation in its batch.",
                ));
            }
            other => return Err(not_in_batch(index, cid, true, other)),
        };
        match &first_table {
            None => first_table = Some(table.clone()),
            // path-style (`/acct/t`) and host-style (`/t`) request lines may be mixed;
            // the HTTP layer checks the account of each operation
            Some(t) if t.eq_ignore_ascii_case(table) => {}
            Some(_) => {
                return Err(BatchError::op(
                    index,
                    cid,
                    true,
                    ErrorCode::CommandsInBatchActOnDifferentPartitions,
                    ErrorCode::CommandsInBatchActOnDifferentPartitions.default_message(),
                ));
            }
        }
        ops.push(op);
    }
    Ok(BatchRequest { kind: BatchKind::ChangeSet, ops })
}

/// Parses a lone top-level `application/http` part, which must be a GET.
fn parse_query(part: &[u8]) -> Result<BatchRequest<'_>, BatchError> {
    let op = parse_op(0, part, false)?;
    let refused = match &op.endpoint {
        Endpoint::GetEntity { .. } | Endpoint::QueryEntities { .. } => None,
        Endpoint::InsertEntity { .. }
        | Endpoint::UpdateEntity { .. }
        | Endpoint::MergeEntity { .. }
        | Endpoint::DeleteEntity { .. } => Some(BatchError::op(
            0,
            op.content_id.as_deref(),
            false,
            ErrorCode::InvalidInput,
            "Insert, update and delete operations must be inside a change set.",
        )),
        other => Some(not_in_batch(0, op.content_id.as_deref(), false, other)),
    };
    match refused {
        None => Ok(BatchRequest { kind: BatchKind::Query, ops: vec![op] }),
        Some(e) => Err(e),
    }
}

/// The error for an operation that is not an entity operation (table, ACL, service).
fn not_in_batch(index: usize, cid: Option<&str>, in_changeset: bool, e: &Endpoint) -> BatchError {
    let message = format!("The operation {} is not supported in a batch.", e.name());
    BatchError::op(index, cid, in_changeset, ErrorCode::InvalidInput, message)
}

/// Parses one `application/http` part: MIME headers, request line, headers, body.
fn parse_op(index: usize, part: &[u8], in_changeset: bool) -> Result<BatchOp<'_>, BatchError> {
    let fail = |cid: Option<&str>, code, message: &'static str| {
        BatchError::op(index, cid, in_changeset, code, message)
    };
    let (mime_head, mut request) = split_head(part);
    // Only the first Content-Type and Content-ID of the part headers matter.
    let (mut mime_type, mut mime_id) = (None, None);
    multipart::for_each_header(mime_head, |name, value| {
        if name.eq_ignore_ascii_case("content-type") {
            mime_type.get_or_insert(value);
        } else if name.eq_ignore_ascii_case("content-id") {
            mime_id.get_or_insert(value);
        }
    })
    .map_err(|_| fail(None, ErrorCode::InvalidInput, "The batch operation has malformed part headers."))?;
    if let Some(ct) = mime_type {
        if !MediaType::has_essence(&ct, "application/http") {
            let msg = "The batch operation's part must have Content-Type application/http.";
            return Err(fail(None, ErrorCode::InvalidInput, msg));
        }
    }
    while let Some(rest) = strip_line_end(request) {
        request = rest;
    }
    let (head, body) = split_head(request);
    let line_end = memchr(b'\n', head).unwrap_or(head.len());
    let (line, header_block) = head.split_at(line_end);
    let headers: Headers<'_> = multipart::parse_headers(header_block)
        .map_err(|_| fail(None, ErrorCode::InvalidInput, "The batch operation has malformed headers."))?;
    let content_id = match multipart::header_value(&headers, "content-id") {
        Some(id) => (!id.is_empty()).then(|| id.clone()),
        None => mime_id.filter(|id| !id.is_empty()),
    };
    let cid = content_id.as_deref();
    let bad_line = || fail(cid, ErrorCode::InvalidInput, "The batch operation's request line is not valid.");
    let line = std::str::from_utf8(line).map_err(|_| bad_line())?;
    let (verb, url) = parse_request_line(line).ok_or_else(bad_line)?;
    let (url_path, query) = split_url(url);
    let tunnel =
        headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case("x-http-method")).map(|(_, v)| Some(&**v));
    let method = crate::endpoint::tunnelled_method(verb, tunnel)
        .map_err(|e| BatchError::from_api(index, cid, in_changeset, e))?;
    let endpoint =
        route(method, &url_path, query).map_err(|e| BatchError::from_api(index, cid, in_changeset, e))?;
    Ok(BatchOp { index, content_id, method, url_path, query, headers, body, endpoint })
}

/// Splits `METHOD URL HTTP/1.1` into method and URL. The version is optional and the
/// URL may contain spaces (everything between the method and the version).
fn parse_request_line(line: &str) -> Option<(&str, &str)> {
    let line = trim(line);
    let (method, rest) = line.split_once([' ', '\t'])?;
    let mut url = trim(rest);
    if let Some((before, version)) = url.rsplit_once([' ', '\t']) {
        if version.starts_with("HTTP/") {
            url = before.trim_end();
        }
    }
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if method.is_empty() || !method.chars().all(token) || url.is_empty() {
        return None;
    }
    Some((method, url))
}

/// Splits an absolute (`http://host:port/path?q`) or relative URL into its path (with
/// a leading `/`) and non-empty query. A fragment is dropped.
fn split_url(url: &str) -> (Cow<'_, str>, Option<&str>) {
    let url = url.split_once('#').map_or(url, |(u, _)| u);
    let has_scheme =
        |s: &str| url.as_bytes().get(..s.len()).is_some_and(|p| p.eq_ignore_ascii_case(s.as_bytes()));
    let rest =
        if let Some(scheme_len) = ["http://", "https://"].into_iter().find(|s| has_scheme(s)).map(str::len) {
            let after = &url[scheme_len..];
            let auth_end = after.find(['/', '?']).unwrap_or(after.len());
            &after[auth_end..]
        } else {
            url
        };
    let (path, query) = match rest.split_once('?') {
        Some((p, q)) => (p, (!q.is_empty()).then_some(q)),
        None => (rest, None),
    };
    let path = if path.starts_with('/') { Cow::Borrowed(path) } else { Cow::Owned(format!("/{path}")) };
    (path, query)
}

/// Splits `/acct/rest` into (`Some("acct")`, `/rest`) and `/rest` into (`None`, `/rest`).
fn split_account(path: &str) -> (Option<&str>, &str) {
    let trimmed = path.trim_start_matches('/');
    match trimmed.find('/') {
        Some(i) => (Some(&trimmed[..i]), &trimmed[i..]),
        None => (None, path),
    }
}

/// Routes an operation's verb, path (account prefix removed) and query.
fn route(method: &str, url_path: &str, query: Option<&str>) -> Result<Endpoint, ApiError> {
    let (mut comp, mut restype) = (None, None);
    for (k, v) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        match k.as_ref() {
            "comp" if comp.is_none() => comp = Some(v.into_owned()),
            "restype" if restype.is_none() => restype = Some(v.into_owned()),
            _ => {}
        }
    }
    let resource = split_account(url_path).1;
    Endpoint::route(method, resource, comp.as_deref(), restype.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines() {
        assert_eq!(parse_request_line("GET /t HTTP/1.1"), Some(("GET", "/t")));
        assert_eq!(
            parse_request_line("DELETE /t(PartitionKey='a b') HTTP/1.1\r"),
            Some(("DELETE", "/t(PartitionKey='a b')"))
        );
        assert_eq!(parse_request_line("PUT /t"), Some(("PUT", "/t")));
        assert_eq!(parse_request_line("PUT"), None);
        assert_eq!(parse_request_line("P(T /t HTTP/1.1"), None);
        assert_eq!(parse_request_line("PUT  HTTP/1.1"), Some(("PUT", "HTTP/1.1")));
    }

    #[test]
    fn urls() {
        let s = |u: &'static str| split_url(u);
        let o = |p: &'static str, q: Option<&'static str>| (Cow::Borrowed(p), q);
        assert_eq!(s("http://127.0.0.1:10002/devstoreaccount1/t()"), o("/devstoreaccount1/t()", None));
        assert_eq!(s("HTTPS://a.table.core.windows.net/t?$select=x#f"), o("/t", Some("$select=x")));
        assert_eq!(s("https://host?x=1"), o("/", Some("x=1")));
        assert_eq!(s("https://host"), o("/", None));
        assert_eq!(s("/t?"), o("/t", None));
        assert_eq!(s("t(PartitionKey='a',RowKey='b')"), o("/t(PartitionKey='a',RowKey='b')", None));
        assert_eq!(s("ht"), o("/ht", None));
        assert_eq!(split_account("/acct/t(x)"), (Some("acct"), "/t(x)"));
        assert_eq!(split_account("/t(x)"), (None, "/t(x)"));
    }
}
