//! [`RequestCtx`]: what every handler knows about the request it serves (account,
//! request id, served version, URLs for OData annotations, the SAS grant), with the
//! `x-ms-version` check that fills it (the request id is `request_id`'s).

use aztable_engine::service::Caller;
use aztable_model::error::{ApiError, ErrorCode};
use aztable_wire::auth::SasGrant;
use http::HeaderValue;

pub use super::request_id::{new_request_id, RequestId};

/// The newest service version this server speaks; the version served when a request
/// sends none.
pub const LATEST_VERSION: &str = "2026-06-06";
/// [`LATEST_VERSION`] as a header value, checked when compiled.
pub const LATEST_VERSION_VALUE: HeaderValue = HeaderValue::from_static(LATEST_VERSION);
/// The oldest service version the Table service has.
const OLDEST_VERSION: &str = "2009-04-14";

/// Per-request context built by `dispatch`.
#[derive(Debug, Clone)]
pub struct RequestCtx {
    pub request_id: RequestId,
    /// The `x-ms-version` the request is served under (echoed on the response), as the
    /// header value it is echoed as: the request's own when served as sent, so the
    /// echo copies nothing. Always text ([`RequestCtx::version`]).
    pub version: HeaderValue,
    /// The `x-ms-client-request-id` to echo (the request's value, shared).
    pub client_request_id: Option<HeaderValue>,
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
    /// The REST operation, once routed (`"Unknown"` before): for the access log.
    pub operation: &'static str,
    /// The response format the request's `Accept` and `$format` negotiated to during the
    /// head checks, and whether Atom was allowed then: the handlers' negotiation of the
    /// same request takes it instead of negotiating again (`None`: none succeeded).
    pub negotiated: Option<(bool, aztable_wire::odata::Format)>,
}

impl RequestCtx {
    /// Who the service serves: the account, and the rows a table SAS limits it to.
    pub fn caller(&self) -> Caller<'_> {
        let rows = self.sas.as_ref().map(|g| &g.key_range).filter(|r| !r.is_unbounded());
        Caller { account: &self.account, rows }
    }

    /// The version served, as text.
    pub fn version(&self) -> &str {
        // only text is ever stored (`check_version` refuses other values)
        self.version.to_str().unwrap_or(LATEST_VERSION)
    }

    /// Whether the version served allows Atom (before 2015-12-11).
    pub fn atom_allowed(&self) -> bool {
        aztable_wire::odata::atom_allowed(self.version())
    }
}

/// How `x-ms-version` is checked (`--skipApiVersionCheck`, `--strictApiVersion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VersionCheck {
    /// A well-formed version from the oldest on is served; one newer than
    /// [`LATEST_VERSION`] is served as [`LATEST_VERSION`] (a client whose SDK moved to a
    /// version released after this server never breaks).
    #[default]
    Lenient,
    /// `--strictApiVersion`: a version newer than [`LATEST_VERSION`] is refused, as
    /// Azurite refuses the versions it does not list.
    Strict,
    /// `--skipApiVersionCheck`: any value is served and echoed as sent.
    Skip,
}

/// Checks `x-ms-version`: a well-formed version (`YYYY-MM-DD`) from the oldest service
/// version on is served; a newer one than [`LATEST_VERSION`] is served as
/// [`LATEST_VERSION`] (logged once per version), or refused under
/// [`VersionCheck::Strict`]; [`VersionCheck::Skip`] serves anything. No header means
/// [`LATEST_VERSION`]. `sent` is the request's (first) `x-ms-version`; the version served
/// is returned as the header value echoing it.
pub fn check_version(sent: Option<&HeaderValue>, check: VersionCheck) -> Result<HeaderValue, ApiError> {
    let Some(sent) = sent else {
        return Ok(LATEST_VERSION_VALUE);
    };
    let v = sent.to_str().map_err(|_| ApiError::new(ErrorCode::InvalidHeaderValue))?;
    if check == VersionCheck::Skip {
        return Ok(sent.clone());
    }
    let well_formed = v.len() == 10
        && v.bytes().enumerate().all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() });
    if !well_formed || v < OLDEST_VERSION {
        return Err(ApiError::with_message(
            ErrorCode::InvalidHeaderValue,
            format!("The value for one of the HTTP headers is not in the correct format. x-ms-version: {v}"),
        ));
    }
    if v <= LATEST_VERSION {
        return Ok(sent.clone());
    }
    if check == VersionCheck::Strict {
        return Err(ApiError::with_message(
            ErrorCode::InvalidHeaderValue,
            format!(
                "The API version {v} is not supported by aztable (newest supported: {LATEST_VERSION}; \
                 --strictApiVersion refuses newer versions). Upgrade aztable, or start it without \
                 --strictApiVersion to serve newer versions as {LATEST_VERSION}."
            ),
        ));
    }
    if NEWER_SEEN.first_time(v) {
        tracing::warn!(
            "x-ms-version {v} is newer than the newest version aztable knows; served as {LATEST_VERSION} \
             (--strictApiVersion refuses it instead)"
        );
    }
    Ok(LATEST_VERSION_VALUE)
}

/// The newer versions already logged, process-wide.
static NEWER_SEEN: SeenVersions = SeenVersions::new();

/// Distinct values remembered so that each is logged once, at most [`SeenVersions::CAP`]
/// of them: a client sending ever new versions cannot grow memory (past the cap nothing
/// more is logged).
struct SeenVersions(std::sync::Mutex<Vec<String>>);

impl SeenVersions {
    const CAP: usize = 16;

    const fn new() -> Self {
        SeenVersions(std::sync::Mutex::new(Vec::new()))
    }

    /// True the first time `v` is seen, while fewer than [`Self::CAP`] values were.
    fn first_time(&self, v: &str) -> bool {
        let mut seen = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.len() >= Self::CAP || seen.iter().any(|s| s == v) {
            return false;
        }
        seen.push(v.to_owned());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_version(v: &str) -> HeaderValue {
        HeaderValue::from_str(v).unwrap()
    }

    #[test]
    fn version_check() {
        use VersionCheck::{Lenient, Skip, Strict};
        for check in [Lenient, Strict] {
            assert_eq!(check_version(None, check).unwrap(), LATEST_VERSION);
            assert_eq!(check_version(Some(&with_version("2019-02-02")), check).unwrap(), "2019-02-02");
            assert_eq!(check_version(Some(&with_version(LATEST_VERSION)), check).unwrap(), LATEST_VERSION);
            for bad in ["garbage", "2001-01-01", "2009-04-13", "2099-1-01", "2099-01-01 ", "2099/01/01"] {
                let e = check_version(Some(&with_version(bad)), check).unwrap_err();
                assert_eq!(e.code, ErrorCode::InvalidHeaderValue, "{bad}");
            }
        }
        assert_eq!(check_version(Some(&with_version("2099-01-01")), Lenient).unwrap(), LATEST_VERSION);
        let e = check_version(Some(&with_version("2099-01-01")), Strict).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidHeaderValue);
        assert!(e.message.contains("--strictApiVersion"), "{}", e.message);
        assert_eq!(check_version(Some(&with_version("2099-01-01")), Skip).unwrap(), "2099-01-01");
        assert_eq!(check_version(Some(&with_version("garbage")), Skip).unwrap(), "garbage");
    }

    #[test]
    fn newer_versions_are_remembered_once_and_boundedly() {
        let seen = SeenVersions::new();
        assert!(seen.first_time("2027-01-01"));
        assert!(!seen.first_time("2027-01-01"));
        for i in 1..SeenVersions::CAP {
            assert!(seen.first_time(&format!("2028-01-{i:02}")), "{i}");
        }
        assert!(!seen.first_time("2029-01-01"), "past the cap nothing is added");
        assert_eq!(seen.0.lock().unwrap().len(), SeenVersions::CAP);
    }
}
