//! Routing as a pure function: (effective method, path after the account, query) →
//! [`Endpoint`], one variant per Azure Table REST operation. OData keys inside the path
//! (`t(PartitionKey='a',RowKey='b')`, `Tables('t')`) are decoded here; `render` holds
//! the inverse, an endpoint back to its request.

use aztable_model::error::{ApiError, ErrorCode};

mod render;
pub use render::RoutedRequest;

/// The verbs `X-HTTP-Method` may name.
const TUNNELLED: [&str; 4] = ["MERGE", "PUT", "DELETE", "PATCH"];

/// Applies `X-HTTP-Method` tunnelling to a request's verb (top-level and inside a
/// batch alike): only on POST, once, with MERGE, PUT, DELETE or PATCH. `values` are the
/// header's values in order (`None` for one that is not text). The answer is `verb`
/// itself or one of `TUNNELLED`, so it lives as long as `verb`, not as the values.
pub fn tunnelled_method<'a, 'v>(
    verb: &'a str,
    mut values: impl Iterator<Item = Option<&'v str>>,
) -> Result<&'a str, ApiError> {
    let Some(first) = values.next() else {
        return Ok(verb);
    };
    if values.next().is_some() || first.is_some_and(|v| v.contains(',')) {
        return Err(ApiError::new(ErrorCode::XMethodIncorrectCount));
    }
    if verb != "POST" {
        return Err(ApiError::new(ErrorCode::XMethodNotUsingPost));
    }
    let named = first.map(str::trim);
    TUNNELLED
        .into_iter()
        .find(|&t| Some(t) == named)
        .ok_or_else(|| ApiError::new(ErrorCode::XMethodIncorrectValue))
}

/// The account an account name in a URL addresses, and whether it names the read-only
/// secondary endpoint (`<account>-secondary`).
pub fn primary_account(url_name: &str) -> (&str, bool) {
    match url_name.strip_suffix("-secondary") {
        Some(primary) => (primary, true),
        None => (url_name, false),
    }
}

/// An account-level resource a path names after a table's name: what a client sends when
/// it was given a table's URL as its account URL. The service reads the first segment as
/// the table and answers each of these with its own error (`docs/compatibility.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnderTable {
    /// `POST /{table}/Tables`.
    CreateTable,
    /// `GET /{table}/Tables`.
    QueryTables,
    /// `DELETE /{table}/Tables('…')`.
    DeleteTable,
    /// `POST /{table}/$batch`.
    Batch,
    /// `GET|PUT /{table}/?restype=service&comp=properties|stats`.
    ServiceProperties,
}

/// The operation a request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    QueryTables,
    CreateTable,
    GetTable {
        table: String,
    },
    DeleteTable {
        table: String,
    },
    QueryEntities {
        table: String,
    },
    InsertEntity {
        table: String,
    },
    /// Point query `GET /t(PartitionKey='..',RowKey='..')`.
    GetEntity {
        table: String,
        pk: String,
        rk: String,
    },
    /// `PUT`: Update Entity with If-Match, Insert Or Replace without.
    UpdateEntity {
        table: String,
        pk: String,
        rk: String,
    },
    /// `MERGE`/`PATCH`: Merge Entity with If-Match, Insert Or Merge without.
    MergeEntity {
        table: String,
        pk: String,
        rk: String,
    },
    DeleteEntity {
        table: String,
        pk: String,
        rk: String,
    },
    Batch,
    GetTableAcl {
        table: String,
    },
    SetTableAcl {
        table: String,
    },
    GetServiceProperties,
    SetServiceProperties,
    GetServiceStats,
    Preflight,
    /// An account-level resource addressed under a table ([`UnderTable`]).
    UnderTable {
        table: String,
        resource: UnderTable,
    },
}

impl Endpoint {
    /// Whether the operation speaks OData (JSON or Atom payloads, errors in the
    /// negotiated format); the ACL, service-properties, stats and preflight operations
    /// are plain XML or bodiless APIs.
    pub fn is_odata(&self) -> bool {
        !matches!(
            self,
            Endpoint::GetTableAcl { .. }
                | Endpoint::SetTableAcl { .. }
                | Endpoint::GetServiceProperties
                | Endpoint::SetServiceProperties
                | Endpoint::GetServiceStats
                | Endpoint::Preflight
        )
    }

    /// The table an entity, ACL or under-table request names in its URL: the name the
    /// service checks ([`aztable_model::names::validate_url_table_name`]) before it looks
    /// the table up. The table operations (`Tables('…')`) name none here.
    pub fn url_table(&self) -> Option<&str> {
        use Endpoint::*;
        match self {
            QueryEntities { table }
            | InsertEntity { table }
            | GetEntity { table, .. }
            | UpdateEntity { table, .. }
            | MergeEntity { table, .. }
            | DeleteEntity { table, .. }
            | GetTableAcl { table }
            | SetTableAcl { table }
            | UnderTable { table, .. } => Some(table),
            QueryTables
            | CreateTable
            | GetTable { .. }
            | DeleteTable { .. }
            | Batch
            | GetServiceProperties
            | SetServiceProperties
            | GetServiceStats
            | Preflight => None,
        }
    }

    /// Returns the operation's REST name, for logs.
    pub fn name(&self) -> &'static str {
        match self {
            Endpoint::QueryTables => "QueryTables",
            Endpoint::CreateTable => "CreateTable",
            Endpoint::GetTable { .. } => "GetTable",
            Endpoint::DeleteTable { .. } => "DeleteTable",
            Endpoint::QueryEntities { .. } => "QueryEntities",
            Endpoint::InsertEntity { .. } => "InsertEntity",
            Endpoint::GetEntity { .. } => "GetEntity",
            Endpoint::UpdateEntity { .. } => "UpdateEntity",
            Endpoint::MergeEntity { .. } => "MergeEntity",
            Endpoint::DeleteEntity { .. } => "DeleteEntity",
            Endpoint::Batch => "Batch",
            Endpoint::GetTableAcl { .. } => "GetTableAcl",
            Endpoint::SetTableAcl { .. } => "SetTableAcl",
            Endpoint::GetServiceProperties => "GetTableServiceProperties",
            Endpoint::SetServiceProperties => "SetTableServiceProperties",
            Endpoint::GetServiceStats => "GetTableServiceStats",
            Endpoint::Preflight => "PreflightTableRequest",
            Endpoint::UnderTable { .. } => "UnderTable",
        }
    }

    /// Routes a request. `method` is the effective verb (after `X-HTTP-Method`),
    /// `raw_path` the percent-encoded path after the account prefix, `comp`/`restype`
    /// the query parameters of those names.
    pub fn route(
        method: &str,
        raw_path: &str,
        comp: Option<&str>,
        restype: Option<&str>,
    ) -> Result<Endpoint, ApiError> {
        if method == "OPTIONS" {
            return Ok(Endpoint::Preflight);
        }
        let path = decode_path(raw_path).ok_or_else(|| ApiError::new(ErrorCode::InvalidUri))?;
        let path = path.trim_start_matches('/');
        // one slash after the resource (`/Tables/`, `/mytable/`, `/$batch/`) names it too
        let path = path.strip_suffix('/').unwrap_or(path);
        let not_allowed = || Err(ApiError::new(ErrorCode::MethodNotAllowed));
        if path.is_empty() {
            return match (restype, comp, method) {
                (Some("service"), Some("properties"), "GET") => Ok(Endpoint::GetServiceProperties),
                (Some("service"), Some("properties"), "PUT") => Ok(Endpoint::SetServiceProperties),
                (Some("service"), Some("stats"), "GET") => Ok(Endpoint::GetServiceStats),
                (Some("service"), Some("properties" | "stats"), _) => not_allowed(),
                _ => Err(ApiError::new(ErrorCode::InvalidUri)),
            };
        }
        if path == "$batch" {
            return if method == "POST" { Ok(Endpoint::Batch) } else { not_allowed() };
        }
        if let Some((table, resource)) = split_at_byte(path, b'/') {
            return route_under_table(method, table, resource);
        }
        let (name, args) = match find_byte(path, b'(') {
            Some(i) if path.ends_with(')') => (&path[..i], Some(&path[i + 1..path.len() - 1])),
            Some(_) => return Err(ApiError::new(ErrorCode::InvalidUri)),
            None => (path, None),
        };
        if name.is_empty() {
            return Err(ApiError::new(ErrorCode::InvalidUri));
        }
        if name.eq_ignore_ascii_case("Tables") {
            return match (args.filter(|a| !a.is_empty()), method) {
                (None, "GET") => Ok(Endpoint::QueryTables),
                (None, "POST") => Ok(Endpoint::CreateTable),
                (None, _) => not_allowed(),
                (Some(a), m) => {
                    let table =
                        parse_string_literal(a).ok_or_else(|| ApiError::new(ErrorCode::InvalidUri))?;
                    match m {
                        "GET" => Ok(Endpoint::GetTable { table }),
                        "DELETE" => Ok(Endpoint::DeleteTable { table }),
                        _ => not_allowed(),
                    }
                }
            };
        }
        let table = name.to_owned();
        if let (Some("service"), Some("properties" | "stats"), None) = (restype, comp, args) {
            // the account's URL with a table name in it
            return Ok(Endpoint::UnderTable { table, resource: UnderTable::ServiceProperties });
        }
        if comp == Some("acl") && args.is_none() {
            return match method {
                "GET" | "HEAD" => Ok(Endpoint::GetTableAcl { table }),
                "PUT" => Ok(Endpoint::SetTableAcl { table }),
                _ => not_allowed(),
            };
        }
        match args.filter(|a| !a.is_empty()) {
            None => match method {
                "GET" => Ok(Endpoint::QueryEntities { table }),
                "POST" => Ok(Endpoint::InsertEntity { table }),
                _ => not_allowed(),
            },
            Some(a) => {
                let (pk, rk) = parse_entity_keys(a).ok_or_else(|| {
                    ApiError::with_message(
                        ErrorCode::InvalidInput,
                        "The entity keys in the URI are not of the form (PartitionKey='...',RowKey='...').",
                    )
                })?;
                match method {
                    "GET" => Ok(Endpoint::GetEntity { table, pk, rk }),
                    "PUT" => Ok(Endpoint::UpdateEntity { table, pk, rk }),
                    "MERGE" | "PATCH" => Ok(Endpoint::MergeEntity { table, pk, rk }),
                    "DELETE" => Ok(Endpoint::DeleteEntity { table, pk, rk }),
                    _ => not_allowed(),
                }
            }
        }
    }
}

/// The path percent-decoded; `None` when the decoded bytes are not UTF-8. A path
/// without `%` (what clients send for plain keys) is itself, unscanned by the decoder.
fn decode_path(raw_path: &str) -> Option<std::borrow::Cow<'_, str>> {
    if find_byte(raw_path, b'%').is_none() {
        return Some(std::borrow::Cow::Borrowed(raw_path));
    }
    percent_encoding::percent_decode_str(raw_path).decode_utf8().ok()
}

/// Where `byte` (ASCII) first is in `s`: `str::find` with that character, without its
/// searcher's setup (the texts here are short).
fn find_byte(s: &str, byte: u8) -> Option<usize> {
    debug_assert!(byte.is_ascii());
    memchr::memchr(byte, s.as_bytes())
}

/// `s` split around its first `byte` (ASCII, so both sides are text): `split_once` with
/// that character (routing here, the `Authorization` header in `auth`).
pub(crate) fn split_at_byte(s: &str, byte: u8) -> Option<(&str, &str)> {
    let at = find_byte(s, byte)?;
    Some((&s[..at], &s[at + 1..]))
}

/// `str::trim`, answered at once for text that starts and ends with a visible ASCII
/// character (what clients send): `trim` decodes and tests characters at both ends,
/// and nothing there is whitespace.
pub(crate) fn trim(s: &str) -> &str {
    let visible = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_graphic());
    if visible(s.as_bytes().first()) && visible(s.as_bytes().last()) {
        s
    } else {
        s.trim()
    }
}

/// `str::trim_start`, answered at once for text that starts with a visible ASCII
/// character or is empty (a key list as clients write it has no spaces to skip).
pub(crate) fn trim_start(s: &str) -> &str {
    match s.as_bytes().first() {
        None => s,
        Some(b) if b.is_ascii_graphic() => s,
        Some(_) => s.trim_start(),
    }
}

/// Routes `/{table}/{resource}` (the path decoded, the account removed): the account-level
/// resources the service reads under a table ([`UnderTable`]); any other nested path is
/// 400 `InvalidUri`.
fn route_under_table(method: &str, table: &str, resource: &str) -> Result<Endpoint, ApiError> {
    let invalid = || Err(ApiError::new(ErrorCode::InvalidUri));
    if table.is_empty() || table.contains('(') || table.eq_ignore_ascii_case("Tables") {
        return invalid();
    }
    let tables = |r: &str| r.eq_ignore_ascii_case("Tables") || r.eq_ignore_ascii_case("Tables()");
    let keyed_tables = resource.len() > 7
        && resource.get(..7).is_some_and(|p| p.eq_ignore_ascii_case("Tables("))
        && resource.ends_with(')');
    let resource = match method {
        "POST" if tables(resource) => UnderTable::CreateTable,
        "GET" if tables(resource) => UnderTable::QueryTables,
        "DELETE" if keyed_tables => UnderTable::DeleteTable,
        "POST" if resource == "$batch" => UnderTable::Batch,
        _ => return invalid(),
    };
    Ok(Endpoint::UnderTable { table: table.to_owned(), resource })
}

/// Parses an OData string literal `'...'` with `''` standing for one quote; the whole
/// input must be the literal.
pub fn parse_string_literal(s: &str) -> Option<String> {
    let (value, rest) = take_string_literal(s)?;
    rest.is_empty().then_some(value)
}

/// Reads an OData string literal at the start of `s`; returns it and what follows.
/// The text between quotes is copied a run at a time (a key without `''` in one copy).
fn take_string_literal(s: &str) -> Option<(String, &str)> {
    let mut rest = s.strip_prefix('\'')?;
    let (run, after) = split_at_byte(rest, b'\'')?;
    if !after.starts_with('\'') {
        // no `''` (the usual key): one allocation of the right size, nothing grown
        return Some((run.to_owned(), after));
    }
    let mut out = String::with_capacity(run.len() + 1);
    loop {
        let (run, after) = split_at_byte(rest, b'\'')?;
        out.push_str(run);
        match after.strip_prefix('\'') {
            // `''`: one quote, and the literal goes on
            Some(more) => {
                out.push('\'');
                rest = more;
            }
            None => return Some((out, after)),
        }
    }
}

/// Parses `PartitionKey='..',RowKey='..'` (either order, optional spaces).
fn parse_entity_keys(s: &str) -> Option<(String, String)> {
    parse_entity_keys_with(s, |s| split_at_byte(s, b'='), take_string_literal, trim)
}

/// [`parse_entity_keys`] with the pieces it is made of given (the tests give it `str`'s
/// own searchers and the reference literal reader).
fn parse_entity_keys_with<'s>(
    s: &'s str,
    split_at_equals: impl Fn(&'s str) -> Option<(&'s str, &'s str)>,
    take_literal: impl Fn(&'s str) -> Option<(String, &'s str)>,
    trim: impl Fn(&'s str) -> &'s str,
) -> Option<(String, String)> {
    let mut pk = None;
    let mut rk = None;
    let mut rest = trim_start(s);
    loop {
        let (name, after) = split_at_equals(rest)?;
        let (value, after) = take_literal(trim_start(after))?;
        let slot = match trim(name) {
            "PartitionKey" => &mut pk,
            "RowKey" => &mut rk,
            _ => return None,
        };
        if slot.replace(value).is_some() {
            return None;
        }
        let after = trim_start(after);
        if after.is_empty() {
            break;
        }
        rest = trim_start(after.strip_prefix(',')?);
    }
    Some((pk?, rk?))
}

#[cfg(test)]
mod tests {
    use super::Endpoint::{self, *};
    use super::{primary_account, tunnelled_method, TUNNELLED};
    use aztable_model::error::ErrorCode;

    #[test]
    fn x_http_method() {
        let tunnel = |verb: &'static str, v: &[&'static str]| {
            tunnelled_method(verb, v.iter().map(|v| Some(*v))).map_err(|e| e.code)
        };
        assert_eq!(tunnel("POST", &["MERGE"]), Ok("MERGE"));
        assert_eq!(tunnel("POST", &[" PATCH "]), Ok("PATCH"));
        assert_eq!(tunnel("POST", &[]), Ok("POST"));
        assert_eq!(tunnel("PUT", &["MERGE"]), Err(ErrorCode::XMethodNotUsingPost));
        assert_eq!(tunnel("POST", &["GET"]), Err(ErrorCode::XMethodIncorrectValue));
        assert_eq!(tunnel("POST", &["PUT", "PUT"]), Err(ErrorCode::XMethodIncorrectCount));
        assert_eq!(tunnel("POST", &["PUT, MERGE"]), Err(ErrorCode::XMethodIncorrectCount));
        // a value that is not text is no method
        let binary = tunnelled_method("POST", [None].into_iter()).map_err(|e| e.code);
        assert_eq!(binary, Err(ErrorCode::XMethodIncorrectValue));
    }

    #[test]
    fn secondary_account_names() {
        assert_eq!(primary_account("devstoreaccount1-secondary"), ("devstoreaccount1", true));
        assert_eq!(primary_account("devstoreaccount1"), ("devstoreaccount1", false));
    }

    fn route(m: &str, p: &str) -> Result<Endpoint, String> {
        Endpoint::route(m, p, None, None).map_err(|e| e.code.as_str().to_owned())
    }
    fn s(x: &str) -> String {
        x.to_owned()
    }

    #[test]
    fn table_routes() {
        assert_eq!(route("GET", "/Tables"), Ok(QueryTables));
        assert_eq!(route("GET", "/Tables()"), Ok(QueryTables));
        assert_eq!(route("POST", "/Tables"), Ok(CreateTable));
        assert_eq!(route("DELETE", "/Tables('mytable')"), Ok(DeleteTable { table: s("mytable") }));
        assert_eq!(route("DELETE", "/Tables(%27mytable%27)"), Ok(DeleteTable { table: s("mytable") }));
        assert_eq!(route("GET", "/Tables('t1')"), Ok(GetTable { table: s("t1") }));
        assert_eq!(route("PUT", "/Tables"), Err(s("MethodNotAllowed")));
    }

    #[test]
    fn entity_routes() {
        assert_eq!(route("GET", "/mytable"), Ok(QueryEntities { table: s("mytable") }));
        assert_eq!(route("GET", "/mytable()"), Ok(QueryEntities { table: s("mytable") }));
        assert_eq!(route("POST", "/mytable"), Ok(InsertEntity { table: s("mytable") }));
        let k = |t: &str, p: &str, r: &str| (s(t), s(p), s(r));
        let (table, pk, rk) = k("t", "a", "b");
        assert_eq!(route("GET", "/t(PartitionKey='a',RowKey='b')"), Ok(GetEntity { table, pk, rk }));
        let (table, pk, rk) = k("t", "it's", "");
        assert_eq!(
            route("PUT", "/t(PartitionKey=%27it%27%27s%27,RowKey=%27%27)"),
            Ok(UpdateEntity { table, pk, rk })
        );
        let (table, pk, rk) = k("t", "a,RowKey='x'", "b c");
        assert_eq!(
            route("MERGE", "/t(PartitionKey='a,RowKey=''x''',RowKey='b%20c')"),
            Ok(MergeEntity { table, pk, rk })
        );
        let (table, pk, rk) = k("t", "p", "r");
        assert_eq!(route("PATCH", "/t(RowKey='r',PartitionKey='p')"), Ok(MergeEntity { table, pk, rk }));
        let (table, pk, rk) = k("t", "p", "r");
        assert_eq!(route("DELETE", "/t(PartitionKey='p',RowKey='r')"), Ok(DeleteEntity { table, pk, rk }));
        assert_eq!(route("GET", "/t(PartitionKey='p')"), Err(s("InvalidInput")));
        assert_eq!(route("GET", "/t(PartitionKey='p',RowKey='r'"), Err(s("InvalidUri")));
        assert_eq!(route("GET", "/t(PartitionKey='p,RowKey='r')"), Err(s("InvalidInput")));
        assert_eq!(route("PUT", "/t"), Err(s("MethodNotAllowed")));
    }

    #[test]
    fn other_routes() {
        assert_eq!(route("POST", "/$batch"), Ok(Batch));
        assert_eq!(route("POST", "/%24batch"), Ok(Batch));
        assert_eq!(route("GET", "/$batch"), Err(s("MethodNotAllowed")));
        assert_eq!(route("OPTIONS", "/anything"), Ok(Preflight));
        assert_eq!(route("GET", "/a/b"), Err(s("InvalidUri")));
        assert_eq!(route("GET", "/Tables/Tables"), Err(s("InvalidUri")));
        assert_eq!(route("PUT", "/t/Tables"), Err(s("InvalidUri")));
        assert_eq!(route("GET", "/t/$batch"), Err(s("InvalidUri")));
        assert_eq!(route("GET", "/"), Err(s("InvalidUri")));
        let r = Endpoint::route("GET", "/", Some("properties"), Some("service"));
        assert_eq!(r, Ok(GetServiceProperties));
        let r = Endpoint::route("GET", "/t", Some("acl"), None);
        assert_eq!(r, Ok(GetTableAcl { table: s("t") }));
    }

    #[test]
    fn account_resources_under_a_table() {
        use super::UnderTable as U;
        let under = |table: &str, resource| Ok(Endpoint::UnderTable { table: s(table), resource });
        assert_eq!(route("POST", "/mytable/Tables"), under("mytable", U::CreateTable));
        assert_eq!(route("POST", "/mytable/Tables/"), under("mytable", U::CreateTable));
        assert_eq!(route("GET", "/mytable/Tables"), under("mytable", U::QueryTables));
        assert_eq!(route("DELETE", "/mytable/Tables('mytable')"), under("mytable", U::DeleteTable));
        assert_eq!(route("DELETE", "/mytable/Tables(%27x%27)"), under("mytable", U::DeleteTable));
        assert_eq!(route("POST", "/mytable/$batch"), under("mytable", U::Batch));
        assert_eq!(route("POST", "/mytable/%24batch"), under("mytable", U::Batch));
        for method in ["GET", "PUT"] {
            let r = Endpoint::route(method, "/mytable/", Some("properties"), Some("service"));
            assert_eq!(r.map_err(|e| e.code.as_str().to_owned()), under("mytable", U::ServiceProperties));
        }
        // the account's own service resources keep their routes
        let r = Endpoint::route("PUT", "/", Some("properties"), Some("service"));
        assert_eq!(r, Ok(SetServiceProperties));
        assert_eq!(under("t", U::Batch).map(|e| e.url_table().map(str::to_owned)), Ok(Some(s("t"))));
        // a resource whose seventh byte falls inside a character (found by the fuzz target)
        let code = |m, p| Endpoint::route(m, p, None, None).map_err(|e| e.code.as_str().to_owned());
        assert_eq!(code("DELETE", "/t/Tables\u{e9}(x)"), Err(s("InvalidUri")));
        assert_eq!(code("DELETE", "/t/P(\u{167f}\u{c}='\u{f}0"), Err(s("InvalidUri")));
    }

    /// The char-by-char literal reader the run-at-a-time one replaced: the reference.
    fn take_string_literal_by_chars(s: &str) -> Option<(String, &str)> {
        let body = s.strip_prefix('\'')?;
        let mut out = String::new();
        let mut chars = body.char_indices();
        while let Some((i, c)) = chars.next() {
            if c == '\'' {
                if body[i + 1..].starts_with('\'') {
                    out.push('\'');
                    chars.next();
                } else {
                    return Some((out, &body[i + 1..]));
                }
            } else {
                out.push(c);
            }
        }
        None
    }

    /// The key parser with `str`'s own searchers and the reference literal reader.
    fn parse_entity_keys_by_chars(s: &str) -> Option<(String, String)> {
        super::parse_entity_keys_with(s, |s| s.split_once('='), take_string_literal_by_chars, str::trim)
    }

    /// Texts made mostly of the pieces that matter: quotes (single and doubled), `%`
    /// escapes (valid, invalid, not UTF-8), the key names, separators and non-ASCII.
    fn key_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            Just("'".to_owned()),
            Just("''".to_owned()),
            Just("PartitionKey=".to_owned()),
            Just("RowKey=".to_owned()),
            Just(",".to_owned()),
            Just(" ".to_owned()),
            Just("=".to_owned()),
            Just("%27".to_owned()),
            Just("%C3%A9".to_owned()),
            Just("%FF".to_owned()),
            Just("%".to_owned()),
            Just("/".to_owned()),
            Just("(".to_owned()),
            Just(")".to_owned()),
            "[a-z0-9é\u{1F600}\u{3000}]{0,4}",
        ];
        proptest::collection::vec(piece, 0..12).prop_map(|v| v.concat())
    }

    proptest::proptest! {
        #[test]
        fn literals_read_as_by_chars(s in key_text()) {
            let quoted = format!("'{s}");
            proptest::prop_assert_eq!(
                super::take_string_literal(&quoted),
                take_string_literal_by_chars(&quoted)
            );
            proptest::prop_assert_eq!(super::take_string_literal(&s), take_string_literal_by_chars(&s));
        }

        #[test]
        fn entity_keys_parse_as_by_chars(s in key_text()) {
            proptest::prop_assert_eq!(super::parse_entity_keys(&s), parse_entity_keys_by_chars(&s));
        }

        #[test]
        fn entity_keys_round_trip(pk in "[a-z'é\u{1F600} %]{0,8}", rk in "[a-z'é ]{0,8}") {
            let text = format!(
                "PartitionKey='{}',RowKey='{}'",
                pk.replace('\'', "''"),
                rk.replace('\'', "''")
            );
            proptest::prop_assert_eq!(super::parse_entity_keys(&text), Some((pk, rk)));
        }

        /// A path without `%` skips the decoder; any path decodes as the decoder does.
        #[test]
        fn paths_decode_as_percent_decoding(s in key_text()) {
            let path = format!("/t({s})");
            let expected = percent_encoding::percent_decode_str(&path).decode_utf8().ok();
            proptest::prop_assert_eq!(super::decode_path(&path), expected);
        }
    }

    proptest::proptest! {
        /// The byte split is `split_once` with the same character, on any text
        /// (multi-byte characters included).
        #[test]
        fn split_at_byte_is_split_once(s in "[a-z :=/é\u{1F600} ]{0,12}") {
            for byte in [b' ', b':', b'=', b'/'] {
                proptest::prop_assert_eq!(super::split_at_byte(&s, byte), s.split_once(char::from(byte)));
            }
        }

        /// The shortcut trims as `str::trim` does, whitespace of every kind included.
        #[test]
        fn trim_is_strs(s in "[a-z:=\t\n\u{b}\u{c}\r \u{85}\u{a0}\u{2003}\u{3000}é~!\u{7f}]{0,8}") {
            proptest::prop_assert_eq!(super::trim(&s), s.trim());
            proptest::prop_assert_eq!(super::trim_start(&s), s.trim_start());
        }
    }

    /// What a tunnel answers is one of [`TUNNELLED`] (the verb the line sent otherwise).
    #[test]
    fn tunnels_name_only_their_verbs() {
        for verb in ["POST", "PUT", "GET"] {
            for value in ["MERGE", " PATCH ", "PUT", "DELETE", "GET", "POST", "merge", "MERGE,PUT", ""] {
                let tunnel = [Some(value)].into_iter();
                if let Ok(m) = tunnelled_method(verb, tunnel) {
                    assert!(TUNNELLED.contains(&m), "{verb} {value:?} -> {m}");
                }
            }
            assert_eq!(tunnelled_method(verb, std::iter::empty()).ok(), Some(verb));
        }
    }
}
