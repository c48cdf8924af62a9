//! [`RequestCtx`]: what every handler knows about the request it serves (account,
//! request id, served version, URLs for OData annotations, the SAS grant), with the
//! request id and the `x-ms-version` check that fill it.

use aztable_engine::service::Caller;
use aztable_model::error::{ApiError, ErrorCode};
use aztable_wire::auth::SasGrant;
use http::HeaderMap;

/// The newest service version this server speaks; the version served when a request
/// sends none.
pub const LATEST_VERSION: &str = "2026-06-06";
/// The oldest service version the Table service has.
const OLDEST_VERSION: &str = "2009-04-14";

/// Per-request context built by `dispatch`.
#[derive(Debug, Clone)]
pub struct RequestCtx {
    pub request_id: RequestId,
    /// The `x-ms-version` the request is served under (echoed on the response).
    pub version: String,
    pub client_request_id: Option<String>,
    /// The account addressed (without any `-secondary` suffix).
    pub account: String,
    /// True when the URL addressed the read-only `-secondary` endpoint.
    pub secondary: bool,
    /// `http://host[:port][/account]`: what entity and table URLs in responses start with.
    pub base_url: String,
    /// What the request's shared access signature allows, when it was authorized by one
    /// (its key range goes to the service with [`RequestCtx::caller`]).
    pub sas: Option<SasGrant>,
    /// Errors are written as the service's XML error rather than OData JSON (Atom was
    /// negotiated or refused: see [`aztable_wire::odata::errors_in_xml`]).
    pub xml_errors: bool,
}

impl RequestCtx {
    /// Who the service serves: the account, and the rows a table SAS limits it to.
    pub fn caller(&self) -> Caller<'_> {
        let rows = self.sas.as_ref().map(|g| &g.key_range).filter(|r| !r.is_unbounded());
        Caller { account: &self.account, rows }
    }

    /// Whether the version served allows Atom (before 2015-12-11).
    pub fn atom_allowed(&self) -> bool {
        aztable_wire::odata::atom_allowed(&self.version)
    }
}

/// An `x-ms-request-id`: a version-4 UUID in its 36-character hyphenated form, kept
/// inline (no allocation per request).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestId([u8; uuid::fmt::Hyphenated::LENGTH]);

impl RequestId {
    pub fn as_str(&self) -> &str {
        // lower-case hex digits and hyphens, always UTF-8
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl std::ops::Deref for RequestId {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

/// A fresh `x-ms-request-id`: a random version-4 UUID. uuid's `fast-rng` draws it from
/// a thread-local generator seeded from the OS, so there is no syscall per request.
pub fn new_request_id() -> RequestId {
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    uuid::Uuid::new_v4().hyphenated().encode_lower(&mut text);
    RequestId(text)
}

/// Checks `x-ms-version` the way Azurite does: a well-formed version between the
/// oldest service version and [`LATEST_VERSION`] is accepted (the check is skipped
/// with `--skipApiVersionCheck`); no header means [`LATEST_VERSION`].
pub fn check_version(headers: &HeaderMap, skip_check: bool) -> Result<String, ApiError> {
    let Some(v) = headers.get("x-ms-version") else {
        return Ok(LATEST_VERSION.to_owned());
    };
    let v = v.to_str().map_err(|_| ApiError::new(ErrorCode::InvalidHeaderValue))?;
    if skip_check {
        return Ok(v.to_owned());
    }
    let well_formed = v.len() == 10
        && v.bytes().enumerate().all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() });
    if !well_formed || v < OLDEST_VERSION {
        return Err(ApiError::with_message(
            ErrorCode::InvalidHeaderValue,
            format!("The value for one of the HTTP headers is not in the correct format. x-ms-version: {v}"),
        ));
    }
    if v > LATEST_VERSION {
        return Err(ApiError::with_message(
            ErrorCode::InvalidHeaderValue,
            format!(
                "The API version {v} is not supported by aztable (newest supported: {LATEST_VERSION}). \
                 Upgrade aztable, or start it with --skipApiVersionCheck to accept any version."
            ),
        ));
    }
    Ok(v.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_version(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("x-ms-version", v.parse().unwrap());
        h
    }

    #[test]
    fn version_check() {
        assert_eq!(check_version(&HeaderMap::new(), false).unwrap(), LATEST_VERSION);
        assert_eq!(check_version(&with_version("2019-02-02"), false).unwrap(), "2019-02-02");
        let e = check_version(&with_version("2099-01-01"), false).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidHeaderValue);
        assert!(check_version(&with_version("garbage"), false).is_err());
        assert!(check_version(&with_version("2001-01-01"), false).is_err());
        assert_eq!(check_version(&with_version("2099-01-01"), true).unwrap(), "2099-01-01");
    }

    #[test]
    fn request_ids_are_distinct_v4_uuids() {
        let ids: std::collections::HashSet<String> =
            (0..10_000).map(|_| new_request_id().to_string()).collect();
        assert_eq!(ids.len(), 10_000);
        for id in ids.iter().take(100) {
            let u = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(u.get_version_num(), 4);
            assert_eq!(id.len(), 36);
        }
    }
}
