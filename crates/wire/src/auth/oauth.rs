//! OAuth bearer tokens, as Azurite's `--oauth basic` checks them (pure: the caller supplies
//! the clock and the account).
//!
//! The token must be a JWT (`header.payload.signature`, base64url JSON header and payload)
//! whose payload has numeric `iat`, `nbf` and `exp` with `nbf ≤ now ≤ exp`, an `iss` from
//! Microsoft Entra ID (prefix `https://sts.windows.net/`, `https://sts.microsoftonline.de/`,
//! `https://sts.chinacloudapi.cn/`, `https://sts.windows-ppe.net`, or the v2.0 issuer
//! `https://login.microsoftonline.com/`) and an `aud` for Table storage
//! (`https://storage.azure.com[/]`, the storage application id
//! `e406a681-f3d4-42a8-90b6-c2b029497af1`, or `https://{account}.table.core.<cloud>[/]`
//! for this account). **The signature is not verified**, and no role (RBAC) is checked: a
//! well-formed, current token for storage grants everything, as in Azurite. Failures are
//! 403 `AuthenticationFailed` with Azurite's detail text.

use aztable_model::error::{ApiError, ErrorCode};
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine as _;
use serde_json::Value;

const ISSUER_PREFIXES: [&str; 5] = [
    "https://sts.windows.net/",
    "https://sts.microsoftonline.de/",
    "https://sts.chinacloudapi.cn/",
    "https://sts.windows-ppe.net",
    "https://login.microsoftonline.com/",
];

const STORAGE_AUDIENCES: [&str; 3] =
    ["https://storage.azure.com", "https://storage.azure.com/", "e406a681-f3d4-42a8-90b6-c2b029497af1"];

const TABLE_HOST_SUFFIXES: [&str; 4] = [
    ".table.core.windows.net",
    ".table.core.chinacloudapi.cn",
    ".table.core.usgovcloudapi.net",
    ".table.core.cloudapi.de",
];

fn failed(detail: &str) -> ApiError {
    let mut e = ApiError::new(ErrorCode::AuthenticationFailed);
    e.auth_detail = Some(detail.to_owned());
    e
}

fn unsupported() -> ApiError {
    failed("Authentication scheme Bearer is not supported.")
}

/// The JSON object in one base64url segment of a JWT.
fn segment(s: &str) -> Option<serde_json::Map<String, Value>> {
    let bytes = URL_SAFE_NO_PAD.decode(s).or_else(|_| URL_SAFE.decode(s)).ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// Whether `aud` names Table storage for `account`.
fn audience_matches(aud: &str, account: &str) -> bool {
    if STORAGE_AUDIENCES.contains(&aud) {
        return true;
    }
    let Some(host) = aud.strip_prefix("https://") else { return false };
    let host = host.strip_suffix('/').unwrap_or(host);
    TABLE_HOST_SUFFIXES.iter().any(|suffix| host.strip_suffix(suffix) == Some(account))
}

/// Checks a bearer token (the text after `Bearer `) for `account` at `now` (seconds since
/// the Unix epoch).
pub fn verify_bearer(token: &str, account: &str, now: i64) -> Result<(), ApiError> {
    let parts: Vec<&str> = token.trim().split('.').collect();
    let [header, payload, _signature] = parts.as_slice() else { return Err(unsupported()) };
    segment(header).ok_or_else(unsupported)?;
    let claims = segment(payload).ok_or_else(unsupported)?;
    let time = |name: &str| claims.get(name).and_then(Value::as_f64);
    let (Some(nbf), Some(exp), Some(_iat)) = (time("nbf"), time("exp"), time("iat")) else {
        return Err(unsupported());
    };
    let now = now as f64;
    if now < nbf {
        return Err(failed("Lifetime validation failed."));
    }
    if now > exp {
        return Err(failed("Lifetime validation failed. The token is expired."));
    }
    let iss = claims.get("iss").and_then(Value::as_str).filter(|s| !s.is_empty()).ok_or_else(unsupported)?;
    if !ISSUER_PREFIXES.iter().any(|p| iss.starts_with(p)) {
        return Err(failed("Invalid token issuer."));
    }
    let aud = claims.get("aud").and_then(Value::as_str).filter(|s| !s.is_empty()).ok_or_else(unsupported)?;
    if !audience_matches(aud, account) {
        return Err(failed("Invalid token audience."));
    }
    Ok(())
}

/// Builds an unsigned JWT with these claims (for tests and tools; the signature segment
/// is a placeholder, since it is never verified).
pub fn unsigned_token(claims: &Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"typ":"JWT","alg":"RS256"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    format!("{header}.{payload}.c2lnbmF0dXJl")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: i64 = 1_700_000_000;

    fn token(aud: &str, iss: &str, nbf: i64, exp: i64) -> String {
        unsigned_token(&json!({"aud": aud, "iss": iss, "iat": nbf, "nbf": nbf, "exp": exp}))
    }

    fn detail(r: Result<(), ApiError>) -> String {
        let e = r.unwrap_err();
        assert_eq!(e.code, ErrorCode::AuthenticationFailed);
        e.auth_detail.unwrap_or_default()
    }

    #[test]
    fn accepts_storage_tokens() {
        let iss = "https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/";
        for aud in [
            "https://storage.azure.com",
            "https://storage.azure.com/",
            "e406a681-f3d4-42a8-90b6-c2b029497af1",
            "https://devstoreaccount1.table.core.windows.net",
            "https://devstoreaccount1.table.core.chinacloudapi.cn/",
        ] {
            assert_eq!(
                verify_bearer(&token(aud, iss, NOW - 60, NOW + 60), "devstoreaccount1", NOW),
                Ok(()),
                "{aud}"
            );
        }
        let v2 = token("https://storage.azure.com", "https://login.microsoftonline.com/t/v2.0", NOW, NOW);
        assert_eq!(verify_bearer(&v2, "a", NOW), Ok(()));
    }

    #[test]
    fn refuses_what_azurite_refuses() {
        let iss = "https://sts.windows.net/t/";
        let aud = "https://storage.azure.com";
        assert!(detail(verify_bearer(&token(aud, iss, NOW + 10, NOW + 60), "a", NOW)).starts_with("Lifetime"));
        assert!(detail(verify_bearer(&token(aud, iss, NOW - 60, NOW - 1), "a", NOW)).contains("expired"));
        assert_eq!(
            detail(verify_bearer(&token(aud, "https://evil.example/", NOW, NOW), "a", NOW)),
            "Invalid token issuer."
        );
        for aud in [
            "https://other.table.core.windows.net",
            "https://vault.azure.net",
            "https://a.blob.core.windows.net",
        ] {
            assert_eq!(
                detail(verify_bearer(&token(aud, iss, NOW, NOW), "a", NOW)),
                "Invalid token audience.",
                "{aud}"
            );
        }
        let no_exp = unsigned_token(&json!({"aud": aud, "iss": iss, "iat": NOW, "nbf": NOW}));
        for bad in ["", "abc", "a.b", "a.b.c.d", "e30.e30.x", &no_exp, "!!.e30.x"] {
            assert!(detail(verify_bearer(bad, "a", NOW)).contains("not supported"), "{bad}");
        }
        let array_payload = format!("e30.{}.x", URL_SAFE_NO_PAD.encode("[1]"));
        assert!(verify_bearer(&array_payload, "a", NOW).is_err());
    }
}
