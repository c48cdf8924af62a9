//! SharedKey / SharedKeyLite signatures: the strings to sign and the HMAC, both for
//! signing (the `aztable-bench` load tool and the benches) and for checking
//! ([`super::authenticate`], [`super::verify_sas`] use [`AccountKey::signature_matches`]
//! and [`string_to_sign_head`]). Pure (no I/O, no clock: the caller supplies the date string).
//!
//! * `SharedKey`: `VERB\nContent-MD5\nContent-Type\nDate\nCanonicalizedResource`.
//! * `SharedKeyLite`: `Date\nCanonicalizedResource`.
//!
//! CanonicalizedResource is `/{account}{raw_path}` plus `?comp={value}` when the query has a
//! `comp` parameter. With path-style URLs (`/devstoreaccount1/table`) the account appears
//! twice, exactly as the Azure SDKs sign. The signature is
//! `Base64(HMAC-SHA256(key, UTF-8(StringToSign)))`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ring::hmac;

/// What a signature covers.
#[derive(Debug, Clone, Copy)]
pub struct SignParts<'a> {
    /// The method, e.g. `"GET"`.
    pub method: &'a str,
    /// The request path exactly as sent (still percent-encoded), e.g.
    /// `"/devstoreaccount1/mytable(PartitionKey='a',RowKey='b')"`.
    pub raw_path: &'a str,
    /// The raw query string without `?`, if any.
    pub query: Option<&'a str>,
    /// The `Content-MD5` header value, or `""`.
    pub content_md5: &'a str,
    /// The `Content-Type` header value, or `""`.
    pub content_type: &'a str,
    /// The `x-ms-date` header value (RFC 1123), e.g. `"Sun, 11 Oct 2009 21:49:13 GMT"`.
    pub date: &'a str,
}

/// `/{account}{raw_path}` plus `?comp={raw value}` when the query names `comp`.
pub fn canonical_resource(account: &str, raw_path: &str, query: Option<&str>) -> String {
    let path = if raw_path.is_empty() { "/" } else { raw_path };
    let mut out = format!("/{account}{path}");
    let comp = query.and_then(|q| {
        q.split('&').map(|p| p.split_once('=').unwrap_or((p, ""))).find(|(name, _)| *name == "comp")
    });
    if let Some((_, value)) = comp {
        out.push_str("?comp=");
        out.push_str(value);
    }
    out
}

/// What a string to sign holds before the canonicalized resource:
/// `VERB\nContent-MD5\nContent-Type\nDate\n` for SharedKey, `Date\n` for SharedKeyLite.
pub fn string_to_sign_head(
    lite: bool,
    method: &str,
    content_md5: &str,
    content_type: &str,
    date: &str,
) -> String {
    let mut head = String::new();
    push_string_to_sign_head(&mut head, lite, method, content_md5, content_type, date);
    head
}

/// Appends [`string_to_sign_head`] to `out`.
pub fn push_string_to_sign_head(
    out: &mut String,
    lite: bool,
    method: &str,
    content_md5: &str,
    content_type: &str,
    date: &str,
) {
    if !lite {
        for part in [method, content_md5, content_type] {
            out.push_str(part);
            out.push('\n');
        }
    }
    out.push_str(date);
    out.push('\n');
}

/// The SharedKey string to sign.
pub fn shared_key_string_to_sign(account: &str, parts: &SignParts<'_>) -> String {
    string_to_sign(false, account, parts)
}

/// The SharedKeyLite string to sign.
pub fn shared_key_lite_string_to_sign(account: &str, parts: &SignParts<'_>) -> String {
    string_to_sign(true, account, parts)
}

fn string_to_sign(lite: bool, account: &str, p: &SignParts<'_>) -> String {
    let head = string_to_sign_head(lite, p.method, p.content_md5, p.content_type, p.date);
    head + &canonical_resource(account, p.raw_path, p.query)
}

/// Constant-time check of `HMAC-SHA256(key, sts)` against a decoded signature.
pub fn signature_matches(key: &[u8], sts: &str, provided: &[u8]) -> bool {
    AccountKey::new(key.to_vec()).signature_matches(sts, provided)
}

/// A decoded account key with its HMAC state keyed once: a check starts from the
/// state after the key's inner and outer blocks instead of hashing them again (two of
/// the five SHA-256 blocks of a point read's check).
///
/// HMAC-SHA256 is ring's: its SHA-256 uses the CPU's SHA or vector instructions where
/// it has them; without SHA instructions (as under callgrind) a point read's check runs
/// 8,500 instructions against the `sha2` crate's 13,900.
#[derive(Clone)]
pub struct AccountKey {
    bytes: Vec<u8>,
    keyed: hmac::Key,
}

impl AccountKey {
    pub fn new(bytes: Vec<u8>) -> AccountKey {
        let keyed = hmac::Key::new(hmac::HMAC_SHA256, &bytes);
        AccountKey { bytes, keyed }
    }

    /// The key's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Constant-time check of `HMAC-SHA256(key, sts)` against a decoded signature.
    pub fn signature_matches(&self, sts: &str, provided: &[u8]) -> bool {
        hmac::verify(&self.keyed, sts.as_bytes(), provided).is_ok()
    }
}

impl From<Vec<u8>> for AccountKey {
    fn from(bytes: Vec<u8>) -> AccountKey {
        AccountKey::new(bytes)
    }
}

impl std::ops::Deref for AccountKey {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

impl PartialEq<Vec<u8>> for AccountKey {
    fn eq(&self, other: &Vec<u8>) -> bool {
        self.bytes == *other
    }
}

impl std::fmt::Debug for AccountKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AccountKey({} bytes)", self.bytes.len())
    }
}

/// `Base64(HMAC-SHA256(key, string_to_sign))`; `key` is the decoded account key.
pub fn signature(key: &[u8], string_to_sign: &str) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, key);
    STANDARD.encode(hmac::sign(&key, string_to_sign.as_bytes()).as_ref())
}

/// The `Authorization` header value `SharedKey {account}:{signature}`.
pub fn shared_key_authorization(account: &str, key: &[u8], parts: &SignParts<'_>) -> String {
    format!("SharedKey {account}:{}", signature(key, &shared_key_string_to_sign(account, parts)))
}

/// The `Authorization` header value `SharedKeyLite {account}:{signature}`.
pub fn shared_key_lite_authorization(account: &str, key: &[u8], parts: &SignParts<'_>) -> String {
    format!("SharedKeyLite {account}:{}", signature(key, &shared_key_lite_string_to_sign(account, parts)))
}

/// Decodes a base64 account key (e.g. [`super::DEV_KEY`]).
pub fn decode_key(key_base64: &str) -> Result<Vec<u8>, String> {
    STANDARD.decode(key_base64.trim()).map_err(|e| format!("the account key is not base64: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::{authenticate, Accounts, AuthError, AuthRequest, DEV_ACCOUNT, DEV_KEY};
    use http::{HeaderMap, HeaderValue};

    const DATE: &str = "Sun, 11 Oct 2009 21:49:13 GMT";

    fn parts<'a>(method: &'a str, raw_path: &'a str, query: Option<&'a str>) -> SignParts<'a> {
        SignParts { method, raw_path, query, content_md5: "", content_type: "application/json", date: DATE }
    }

    fn verify(p: &SignParts<'_>, authorization: &str) -> Result<(), AuthError> {
        let mut headers = HeaderMap::new();
        headers.insert("x-ms-date", HeaderValue::from_static(DATE));
        headers.insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(http::header::AUTHORIZATION, HeaderValue::from_str(authorization).expect("header"));
        let accounts = Accounts::with_dev_account();
        let account = accounts.get(DEV_ACCOUNT).expect("dev account");
        let req = AuthRequest { method: p.method, raw_path: p.raw_path, query: p.query, headers: &headers };
        authenticate(&req, account, Some("/devstoreaccount1"))
    }

    #[test]
    fn canonical_resource_forms() {
        assert_eq!(canonical_resource("acc", "/acc/Tables", None), "/acc/acc/Tables");
        assert_eq!(canonical_resource("acc", "", None), "/acc/");
        assert_eq!(
            canonical_resource("acc", "/acc/t()", Some("$filter=x&comp=list")),
            "/acc/acc/t()?comp=list"
        );
        assert_eq!(canonical_resource("acc", "/acc/t", Some("compx=1")), "/acc/acc/t");
    }

    #[test]
    fn strings_to_sign() {
        let p = parts("POST", "/devstoreaccount1/Tables", None);
        assert_eq!(
            shared_key_string_to_sign(DEV_ACCOUNT, &p),
            format!("POST\n\napplication/json\n{DATE}\n/devstoreaccount1/devstoreaccount1/Tables")
        );
        assert_eq!(
            shared_key_lite_string_to_sign(DEV_ACCOUNT, &p),
            format!("{DATE}\n/devstoreaccount1/devstoreaccount1/Tables")
        );
    }

    #[test]
    fn signatures_verify_with_the_server_side() {
        let key = decode_key(DEV_KEY).expect("dev key");
        for (method, path, query) in [
            ("POST", "/devstoreaccount1/Tables", None),
            ("GET", "/devstoreaccount1/mytable(PartitionKey='a',RowKey='b')", None),
            ("GET", "/devstoreaccount1/mytable()", Some("$filter=PartitionKey%20eq%20%27a%27")),
            ("POST", "/devstoreaccount1/$batch", None),
        ] {
            let p = parts(method, path, query);
            verify(&p, &shared_key_authorization(DEV_ACCOUNT, &key, &p)).expect("SharedKey verifies");
            verify(&p, &shared_key_lite_authorization(DEV_ACCOUNT, &key, &p))
                .expect("SharedKeyLite verifies");
        }
    }

    #[test]
    fn wrong_key_or_method_fails() {
        let p = parts("GET", "/devstoreaccount1/Tables", None);
        let auth = shared_key_authorization(DEV_ACCOUNT, b"not the key", &p);
        assert!(matches!(verify(&p, &auth), Err(AuthError::SignatureMismatch { .. })));
        let key = decode_key(DEV_KEY).expect("dev key");
        let signed_as_post = shared_key_authorization(DEV_ACCOUNT, &key, &parts("POST", p.raw_path, None));
        assert!(verify(&p, &signed_as_post).is_err());
    }

    #[test]
    fn known_vector() {
        // HMAC-SHA256 of "abc" under the key "key" (a fixed value
        // computed independently: `printf abc | openssl dgst -sha256 -hmac key -binary | base64`).
        assert_eq!(signature(b"key", "abc"), "nBluMtwBdfhvSxy4konWYZ3mvuaZ5MN45oMJ7Zehpqs=");
        assert!(decode_key("not base64!").is_err());
    }
}
