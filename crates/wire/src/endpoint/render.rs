//! The inverse of [`Endpoint::route`]: an [`Endpoint`] rendered back to the request that
//! names it (verb, percent-encoded path after the account, `comp` and `restype`), so
//! that routing the rendered request gives the same endpoint. The fuzz target
//! `endpoint_route` checks that for every path the router accepts.

use super::{Endpoint, UnderTable};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// A request as the router reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutedRequest {
    pub method: &'static str,
    /// Percent-encoded, starting with `/`, without the account segment.
    pub path: String,
    pub comp: Option<&'static str>,
    pub restype: Option<&'static str>,
}

/// Everything but letters, digits and the path's own separator is encoded: the router
/// decodes the whole path once before it reads it.
const PATH: &AsciiSet = &NON_ALPHANUMERIC.remove(b'/');

/// An OData string literal: quoted, a quote inside doubled.
fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

impl Endpoint {
    /// The request that routes to this endpoint.
    pub fn to_request(&self) -> RoutedRequest {
        use Endpoint::*;
        let keyed = |table: &str, pk: &str, rk: &str| {
            format!("/{table}(PartitionKey={},RowKey={})", literal(pk), literal(rk))
        };
        let (method, path, comp, restype) = match self {
            QueryTables => ("GET", "/Tables".to_owned(), None, None),
            CreateTable => ("POST", "/Tables".to_owned(), None, None),
            GetTable { table } => ("GET", format!("/Tables({})", literal(table)), None, None),
            DeleteTable { table } => ("DELETE", format!("/Tables({})", literal(table)), None, None),
            // `t()`: a name such as `$batch` reads as the table only before parentheses
            QueryEntities { table } => ("GET", format!("/{table}()"), None, None),
            InsertEntity { table } => ("POST", format!("/{table}()"), None, None),
            GetEntity { table, pk, rk } => ("GET", keyed(table, pk, rk), None, None),
            UpdateEntity { table, pk, rk } => ("PUT", keyed(table, pk, rk), None, None),
            MergeEntity { table, pk, rk } => ("MERGE", keyed(table, pk, rk), None, None),
            DeleteEntity { table, pk, rk } => ("DELETE", keyed(table, pk, rk), None, None),
            Batch => ("POST", "/$batch".to_owned(), None, None),
            GetTableAcl { table } => ("GET", format!("/{table}"), Some("acl"), None),
            SetTableAcl { table } => ("PUT", format!("/{table}"), Some("acl"), None),
            GetServiceProperties => ("GET", "/".to_owned(), Some("properties"), Some("service")),
            SetServiceProperties => ("PUT", "/".to_owned(), Some("properties"), Some("service")),
            GetServiceStats => ("GET", "/".to_owned(), Some("stats"), Some("service")),
            Preflight => ("OPTIONS", "/Tables".to_owned(), None, None),
            UnderTable { table, resource } => match resource {
                self::UnderTable::CreateTable => ("POST", format!("/{table}/Tables"), None, None),
                self::UnderTable::QueryTables => ("GET", format!("/{table}/Tables"), None, None),
                self::UnderTable::DeleteTable => ("DELETE", format!("/{table}/Tables('t')"), None, None),
                self::UnderTable::Batch => ("POST", format!("/{table}/$batch"), None, None),
                self::UnderTable::ServiceProperties => {
                    ("GET", format!("/{table}"), Some("properties"), Some("service"))
                }
            },
        };
        RoutedRequest { method, path: utf8_percent_encode(&path, PATH).to_string(), comp, restype }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Endpoint, UnderTable};

    /// Renders `e`, routes the rendering, and expects `e` back.
    #[track_caller]
    fn round_trip(e: Endpoint) {
        let r = e.to_request();
        let again = Endpoint::route(r.method, &r.path, r.comp, r.restype).map_err(|e| e.code);
        assert_eq!(again, Ok(e), "{r:?}");
    }

    #[test]
    fn every_operation_routes_back_to_itself() {
        let t = || "mytable".to_owned();
        let pk = || "p".to_owned();
        let rk = || "r".to_owned();
        for e in [
            Endpoint::QueryTables,
            Endpoint::CreateTable,
            Endpoint::GetTable { table: t() },
            Endpoint::DeleteTable { table: t() },
            Endpoint::QueryEntities { table: t() },
            Endpoint::InsertEntity { table: t() },
            Endpoint::GetEntity { table: t(), pk: pk(), rk: rk() },
            Endpoint::UpdateEntity { table: t(), pk: pk(), rk: rk() },
            Endpoint::MergeEntity { table: t(), pk: pk(), rk: rk() },
            Endpoint::DeleteEntity { table: t(), pk: pk(), rk: rk() },
            Endpoint::Batch,
            Endpoint::GetTableAcl { table: t() },
            Endpoint::SetTableAcl { table: t() },
            Endpoint::GetServiceProperties,
            Endpoint::SetServiceProperties,
            Endpoint::GetServiceStats,
            Endpoint::Preflight,
            Endpoint::UnderTable { table: t(), resource: UnderTable::CreateTable },
            Endpoint::UnderTable { table: t(), resource: UnderTable::QueryTables },
            Endpoint::UnderTable { table: t(), resource: UnderTable::DeleteTable },
            Endpoint::UnderTable { table: t(), resource: UnderTable::Batch },
            Endpoint::UnderTable { table: t(), resource: UnderTable::ServiceProperties },
        ] {
            round_trip(e);
        }
    }

    #[test]
    fn keys_and_names_with_quotes_separators_and_escapes_round_trip() {
        for (pk, rk) in [
            ("it's", "''"),
            ("a,RowKey='b'", "x=y)"),
            ("100%", "%2F"),
            ("sp ace", "é😀"),
            ("", ""),
            ("(", ")"),
        ] {
            round_trip(Endpoint::GetEntity { table: "t".into(), pk: pk.into(), rk: rk.into() });
            round_trip(Endpoint::DeleteEntity { table: "t".into(), pk: pk.into(), rk: rk.into() });
        }
        for table in ["it's", "100%", "a b", "x)", "$batch"] {
            round_trip(Endpoint::GetTable { table: table.into() });
            round_trip(Endpoint::QueryEntities { table: table.into() });
            round_trip(Endpoint::InsertEntity { table: table.into() });
        }
    }

    #[test]
    fn the_rendering_is_percent_encoded() {
        let e = Endpoint::GetEntity { table: "t".into(), pk: "a b".into(), rk: "100%".into() };
        assert_eq!(e.to_request().path, "/t%28PartitionKey%3D%27a%20b%27%2CRowKey%3D%27100%25%27%29");
        assert_eq!(Endpoint::Batch.to_request().path, "/%24batch");
    }
}
