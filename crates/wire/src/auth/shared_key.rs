//! SharedKey and SharedKeyLite verification for the Table service.
//!
//! * `SharedKey`: `VERB\nContent-MD5\nContent-Type\nDate\nCanonicalizedResource`.
//! * `SharedKeyLite`: `Date\nCanonicalizedResource`.
//!
//! Date is `x-ms-date` when present, else `Date` (the documented rule; Azurite has it the
//! other way round). CanonicalizedResource is `/{account}{path}` plus `?comp={value}` when
//! the query has a `comp` parameter; no other parameter takes part. The signature is
//! `Base64(HMAC-SHA256(key, UTF-8(StringToSign)))`.
//!
//! What the SDKs put in `{path}`: the Python `azure-data-tables` policy signs
//! `urlparse(url).path` (the path exactly as it will be sent, still percent-encoded; the
//! aiohttp transport first normalises it through `yarl`, which is also what goes on the
//! wire) and appends the raw, undecoded `comp` value. The JS `@azure/data-tables` policy
//! signs WHATWG `new URL(url).pathname` (again the on-the-wire form) and appends
//! `searchParams.get("comp")`, which is form-decoded and omitted when empty. Both sign with
//! the credential's account name, so with path-style URLs the account appears twice
//! (`/devstoreaccount1/devstoreaccount1/Tables`).
//!
//! Like Azurite we are lenient about which canonical resource was signed; see
//! [`authenticate`] for the exact list.

use super::sign::push_string_to_sign_head;
use super::{Account, AuthError};
use crate::endpoint::{split_at_byte, trim};
use http::{HeaderMap, HeaderName, HeaderValue};
use percent_encoding::{percent_decode_str, percent_encode, AsciiSet, CONTROLS, NON_ALPHANUMERIC};
use std::borrow::Cow;

/// The parts of an HTTP request that take part in SharedKey authentication.
#[derive(Debug)]
pub struct AuthRequest<'a> {
    /// The method, e.g. `"GET"`, `"MERGE"`.
    pub method: &'a str,
    /// The request path exactly as on the wire, still percent-encoded, e.g.
    /// `"/devstoreaccount1/mytable(PartitionKey='a',RowKey='b')"`.
    pub raw_path: &'a str,
    /// The raw query string without `?`.
    pub query: Option<&'a str>,
    pub headers: &'a HeaderMap,
}

/// The two Table service Authorization schemes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    SharedKey,
    SharedKeyLite,
}

/// Verifies the request's `Authorization: SharedKey…`/`SharedKeyLite…` header against the
/// keys of `account` (the account the URL addresses).
///
/// `path_style_prefix` is `Some("/devstoreaccount1")` (or `Some("/devstoreaccount1-secondary")`)
/// when the account is the first path segment of the URL, `None` for host-style URLs.
///
/// The signature is accepted if, for any key of the account, it matches the string to sign
/// built from any of these canonical resources (duplicates are tried once):
/// * account part: the account named in the header (`{name}` or `{name}-secondary`) and the
///   URL account's name;
/// * path part: the raw path (the documented rule, and what every SDK signs); with a
///   path-style URL also the path with `path_style_prefix` removed (host-style signing
///   against a path-style URL); the raw path with a leading `/{name}-secondary` segment
///   turned into `/{name}` (Azurite's `authenticationPath`); and each of these re-encoded the
///   way common HTTP stacks normalise paths (only RFC 3986 unreserved characters literal;
///   `pchar` characters literal as `yarl`/`requests` do; the WHATWG path percent-encode set;
///   fully percent-decoded), `%2F` always staying encoded;
/// * comp part: the raw `comp` value and its form-decoded value; an empty `comp` both as
///   `?comp=` and as absent.
pub fn authenticate(
    req: &AuthRequest<'_>,
    account: &Account,
    path_style_prefix: Option<&str>,
) -> Result<(), AuthError> {
    authenticate_signed(req, &SignedHeaders::of(req.headers), account, path_style_prefix)
}

/// [`authenticate`] with the request's [`SignedHeaders`] already read (by a caller that
/// passes over the headers anyway); `signed` must be those of `req.headers`.
pub fn authenticate_signed(
    req: &AuthRequest<'_>,
    signed: &SignedHeaders<'_>,
    account: &Account,
    path_style_prefix: Option<&str>,
) -> Result<(), AuthError> {
    let authorization = signed.authorization.ok_or(AuthError::MissingAuthorization)?;
    let authorization = header_text(authorization);
    let (scheme, header_account, signature) = parse_authorization(&authorization)?;

    let named_secondary = header_account.strip_suffix("-secondary") == Some(account.name.as_str());
    if header_account != account.name && !named_secondary {
        return Err(AuthError::AccountMismatch {
            header: header_account.to_string(),
            url: account.name.clone(),
        });
    }

    let date = date_header(signed).ok_or(AuthError::MissingDate)?;
    let content_md5 = header_value(signed.content_md5);
    let content_type = header_value(signed.content_type);

    // The string the documented rule gives (reported back on failure), built in one
    // allocation: the head, then `/{account}{path}` and the raw `?comp=`.
    let canonical_path = if req.raw_path.is_empty() { "/" } else { req.raw_path };
    let comp = raw_comp(req.query);
    let mut primary = String::with_capacity(
        req.method.len()
            + content_md5.len()
            + content_type.len()
            + date.len()
            + account.name.len()
            + canonical_path.len()
            + comp.map_or(0, |c| c.len() + 6)
            + 8,
    );
    push_string_to_sign_head(
        &mut primary,
        scheme == Scheme::SharedKeyLite,
        req.method,
        &content_md5,
        &content_type,
        &date,
    );
    let head_len = primary.len();
    primary.push('/');
    primary.push_str(&account.name);
    primary.push_str(canonical_path);
    if let Some(raw) = comp {
        primary.push_str("?comp=");
        primary.push_str(raw);
    }

    // A signature is 32 bytes; a longer one cannot match and is refused as a mismatch.
    let mut decoded = [0u8; 64];
    let provided = super::signature::decode(signature.as_bytes(), &mut decoded);
    if let Some(provided) = provided {
        // Fast path: what the SDKs sign is the documented string; the lenient variants
        // below are built only when it does not match.
        if account.keys.iter().any(|key| key.signature_matches(&primary, provided)) {
            return Ok(());
        }
        let prefix = &primary[..head_len];
        let comps = comp_variants(req.query);
        let mut names: Vec<&str> = vec![account.name.as_str()];
        push_unique(&mut names, header_account);
        let paths = path_variants(req.raw_path, &account.name, path_style_prefix);
        let mut candidates: Vec<String> = vec![primary.clone()];
        for name in &names {
            for path in &paths {
                for comp in &comps {
                    let sts = format!("{prefix}/{name}{path}{comp}");
                    if !candidates.contains(&sts) {
                        candidates.push(sts);
                    }
                }
            }
        }
        for key in &account.keys {
            for sts in &candidates {
                if key.signature_matches(sts, provided) {
                    return Ok(());
                }
            }
        }
    }

    Err(AuthError::SignatureMismatch { provided: signature.to_string(), string_to_sign: primary })
}

/// Splits `SharedKey account:signature` / `SharedKeyLite account:signature`.
fn parse_authorization(value: &str) -> Result<(Scheme, &str, &str), AuthError> {
    let malformed = || AuthError::MalformedAuthorization(value.to_string());
    let (scheme, credentials) = split_at_byte(trim(value), b' ').ok_or_else(malformed)?;
    let scheme = if scheme.eq_ignore_ascii_case("SharedKey") {
        Scheme::SharedKey
    } else if scheme.eq_ignore_ascii_case("SharedKeyLite") {
        Scheme::SharedKeyLite
    } else {
        return Err(malformed());
    };
    let (name, signature) = split_at_byte(trim(credentials), b':').ok_or_else(malformed)?;
    let (name, signature) = (trim(name), trim(signature));
    if name.is_empty() || signature.is_empty() || has_whitespace(signature) {
        return Err(malformed());
    }
    Ok((scheme, name, signature))
}

/// Whether `s` holds a whitespace character (`char::is_whitespace`). Checked by bytes
/// first: every whitespace character is one of ASCII's (`\t` to `\r`, space) or is
/// encoded in bytes from 0x80, and base64 text has neither.
fn has_whitespace(s: &str) -> bool {
    s.bytes().any(|b| matches!(b, b'\t'..=b'\r' | b' ' | 0x80..)) && s.contains(char::is_whitespace)
}

/// A header value as text (lossy for non-UTF-8 bytes, which then simply fail to verify).
fn header_text(value: &http::HeaderValue) -> Cow<'_, str> {
    // UTF-8 (what clients send) is borrowed as is, as `from_utf8_lossy` would, after
    // the plain check (which goes a word at a time over ASCII); only other bytes need
    // the lossy conversion's chunking
    match std::str::from_utf8(value.as_bytes()) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(value.as_bytes()),
    }
}

// The names read here, built when compiled (a `&str` name is parsed on every lookup).
static CONTENT_MD5: HeaderName = HeaderName::from_static("content-md5");
static X_MS_DATE: HeaderName = HeaderName::from_static("x-ms-date");

/// The headers SharedKey reads (the `Authorization` header and those it signs), each
/// the header's first value, as `HeaderMap::get` gives it: read by lookups
/// ([`SignedHeaders::of`]), or noted during a pass over the headers a caller makes anyway
/// ([`SignedHeaders::note`]), which costs less than the five lookups.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SignedHeaders<'h> {
    pub authorization: Option<&'h HeaderValue>,
    pub x_ms_date: Option<&'h HeaderValue>,
    pub date: Option<&'h HeaderValue>,
    pub content_md5: Option<&'h HeaderValue>,
    pub content_type: Option<&'h HeaderValue>,
}

impl<'h> SignedHeaders<'h> {
    /// The headers of `headers`, looked up one by one.
    pub fn of(headers: &'h HeaderMap) -> SignedHeaders<'h> {
        SignedHeaders {
            authorization: headers.get(http::header::AUTHORIZATION),
            x_ms_date: headers.get(&X_MS_DATE),
            date: headers.get(http::header::DATE),
            content_md5: headers.get(&CONTENT_MD5),
            content_type: headers.get(http::header::CONTENT_TYPE),
        }
    }

    /// Notes one header of a pass over a request's headers in their order (as
    /// `HeaderMap`'s iterator gives them): `value` is kept when `name` is one of these
    /// headers and no value of it was kept yet. Returns whether `name` is one of them.
    pub fn note(&mut self, name: &HeaderName, value: &'h HeaderValue) -> bool {
        let slot = match name.as_str() {
            "authorization" => &mut self.authorization,
            "x-ms-date" => &mut self.x_ms_date,
            "date" => &mut self.date,
            "content-md5" => &mut self.content_md5,
            "content-type" => &mut self.content_type,
            _ => return false,
        };
        slot.get_or_insert(value);
        true
    }
}

/// A header's value as text, or `""`.
fn header_value(value: Option<&HeaderValue>) -> Cow<'_, str> {
    value.map(header_text).unwrap_or_default()
}

/// `x-ms-date` if present and non-empty, else `Date` if non-empty.
fn date_header<'h>(signed: &SignedHeaders<'h>) -> Option<Cow<'h, str>> {
    [signed.x_ms_date, signed.date].into_iter().map(header_value).find(|value| !value.is_empty())
}

fn push_unique<T: PartialEq>(list: &mut Vec<T>, item: T) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// The path parts of the canonical resources we accept; the raw path first.
fn path_variants(raw_path: &str, account: &str, path_style_prefix: Option<&str>) -> Vec<String> {
    let raw = if raw_path.is_empty() { "/" } else { raw_path };
    let mut bases: Vec<String> = vec![raw.to_string()];
    if let Some(prefix) = path_style_prefix.filter(|p| !p.is_empty()) {
        if let Some(rest) = strip_segment_prefix(raw, prefix) {
            push_unique(&mut bases, if rest.is_empty() { "/".to_string() } else { rest.to_string() });
        }
    }
    let secondary = format!("/{account}-secondary");
    if let Some(rest) = strip_segment_prefix(raw, &secondary) {
        push_unique(&mut bases, format!("/{account}{rest}"));
    }

    let mut out = bases.clone();
    for base in &bases {
        for encoding in PATH_ENCODINGS {
            if let Some(normalised) = renormalise(base, encoding) {
                push_unique(&mut out, normalised);
            }
        }
    }
    out
}

/// `path` without `prefix` when `prefix` is a whole leading segment sequence of it.
fn strip_segment_prefix<'p>(path: &'p str, prefix: &str) -> Option<&'p str> {
    let rest = path.strip_prefix(prefix)?;
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

/// How a path variant is spelled: the bytes it percent-encodes (`/` stays literal, and an
/// encoded `%2F` stays encoded, in every one).
#[derive(Debug, Clone, Copy)]
enum PathEncoding {
    /// Every byte in the set is `%XX` (upper-case), every other one literal.
    Encode(&'static AsciiSet),
    /// Fully percent-decoded (but for `%2F`); a literal `%` is written `%25`.
    Decoded,
}

/// Only RFC 3986 unreserved characters literal.
const UNRESERVED: &AsciiSet =
    &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~').remove(b'/');
/// RFC 3986 `pchar` literal (unreserved, sub-delims, `:` and `@`): what `yarl` and
/// `requests` leave literal in a path.
const PCHAR: &AsciiSet = &UNRESERVED
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b':')
    .remove(b'@');
/// The WHATWG URL standard's path percent-encode set.
const WHATWG_PATH: &AsciiSet =
    &CONTROLS.add(b' ').add(b'"').add(b'#').add(b'<').add(b'>').add(b'?').add(b'`').add(b'{').add(b'}');

/// The spellings of a path that common HTTP stacks send and sign.
const PATH_ENCODINGS: [PathEncoding; 4] = [
    PathEncoding::Encode(UNRESERVED),
    PathEncoding::Encode(PCHAR),
    PathEncoding::Encode(WHATWG_PATH),
    PathEncoding::Decoded,
];

/// Re-spells `path` in `encoding`: each segment between encoded slashes is
/// percent-decoded, then encoded again. `None` if a decoded path is not UTF-8.
fn renormalise(path: &str, encoding: PathEncoding) -> Option<String> {
    let mut out = String::with_capacity(path.len() + 8);
    for (i, piece) in split_encoded_slashes(path).enumerate() {
        if i > 0 {
            out.push_str("%2F");
        }
        let bytes: std::borrow::Cow<'_, [u8]> = percent_decode_str(piece).into();
        match encoding {
            PathEncoding::Encode(set) => out.extend(percent_encode(&bytes, set)),
            PathEncoding::Decoded => out.push_str(&std::str::from_utf8(&bytes).ok()?.replace('%', "%25")),
        }
    }
    Some(out)
}

/// The pieces of `path` between its encoded slashes (`%2F` or `%2f`).
fn split_encoded_slashes(path: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(path);
    std::iter::from_fn(move || {
        let current = rest?;
        let at =
            current.as_bytes().windows(3).position(|w| w[0] == b'%' && w[1] == b'2' && (w[2] | 0x20) == b'f');
        match at {
            Some(i) => {
                rest = Some(&current[i + 3..]);
                Some(&current[..i])
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

/// The `?comp=…` suffixes to try; the raw-value form first. `[""]` when there is no `comp`.
fn comp_variants(query: Option<&str>) -> Vec<String> {
    let Some(raw) = raw_comp(query) else {
        return vec![String::new()];
    };
    let mut out = vec![format!("?comp={raw}")];
    let plus_as_space = raw.replace('+', " ");
    if let Ok(decoded) = percent_encoding::percent_decode_str(&plus_as_space).decode_utf8() {
        push_unique(&mut out, format!("?comp={decoded}"));
    }
    if raw.is_empty() {
        // The JS SDK leaves an empty comp out altogether.
        push_unique(&mut out, String::new());
    }
    out
}

/// The raw value of the query's `comp` parameter: the first one spelled `comp`, else the
/// first in any letter case (`None`: no such parameter).
fn raw_comp(query: Option<&str>) -> Option<&str> {
    let query = query?;
    let params = || query.split('&').map(|p| p.split_once('=').unwrap_or((p, "")));
    params()
        .find(|(name, _)| *name == "comp")
        .or_else(|| params().find(|(name, _)| name.eq_ignore_ascii_case("comp")))
        .map(|(_, value)| value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::{Accounts, DEV_ACCOUNT, DEV_KEY};
    use aztable_model::error::{ApiError, ErrorCode};
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine as _;
    use hmac::{Hmac, Mac};
    use http::HeaderValue;
    use sha2::Sha256;

    const DATE: &str = "Sun, 11 Oct 2009 21:49:13 GMT";
    const OTHER_DATE: &str = "Mon, 12 Oct 2009 08:00:00 GMT";
    const KEY2: &str = "a2V5MmtleTJrZXkya2V5MmtleTJrZXkya2V5MmtleTI=";

    /// Independent signer: Base64(HMAC-SHA256(key, sts)).
    fn sign(key_b64: &str, sts: &str) -> String {
        let key = STANDARD.decode(key_b64).expect("test key");
        let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("hmac");
        mac.update(sts.as_bytes());
        STANDARD.encode(mac.finalize().into_bytes())
    }

    fn dev() -> Account {
        Accounts::with_dev_account().get(DEV_ACCOUNT).expect("dev").clone()
    }

    fn dev_with_key2() -> Account {
        let mut accounts = Accounts::with_dev_account();
        accounts.add_from_env(&format!("{DEV_ACCOUNT}:{DEV_KEY}:{KEY2}")).expect("env");
        accounts.get(DEV_ACCOUNT).expect("dev").clone()
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            let name = http::header::HeaderName::from_bytes(name.as_bytes()).expect("name");
            map.append(name, HeaderValue::from_str(value).expect("value"));
        }
        map
    }

    fn with_auth(mut map: HeaderMap, auth: &str) -> HeaderMap {
        map.insert(http::header::AUTHORIZATION, HeaderValue::from_str(auth).expect("auth"));
        map
    }

    fn run(
        method: &str,
        path: &str,
        query: Option<&str>,
        map: &HeaderMap,
        account: &Account,
        prefix: Option<&str>,
    ) -> Result<(), AuthError> {
        let req = AuthRequest { method, raw_path: path, query, headers: map };
        authenticate(&req, account, prefix)
    }

    const PATH_STYLE: Option<&str> = Some("/devstoreaccount1");

    // https://learn.microsoft.com/en-us/rest/api/storageservices/authorize-with-shared-key
    // ("Shared Key Lite and Table service format for 2009-09-19 and later"): the string to
    // sign for a Query Tables request on testaccount1 is
    // "Sun, 11 Oct 2009 19:52:39 GMT\n/testaccount1/Tables".
    #[test]
    fn example_shared_key_lite_doc_string_to_sign() {
        let key = "dGVzdGtleQ==";
        let mut accounts = Accounts::with_dev_account();
        accounts.add_from_env(&format!("testaccount1:{key}")).expect("env");
        let account = accounts.get("testaccount1").expect("account");
        let sts = "Sun, 11 Oct 2009 19:52:39 GMT\n/testaccount1/Tables";
        let map = with_auth(
            headers(&[("x-ms-date", "Sun, 11 Oct 2009 19:52:39 GMT")]),
            &format!("SharedKeyLite testaccount1:{}", sign(key, sts)),
        );
        run("GET", "/Tables", None, &map, account, None).expect("doc example verifies");

        // A wrong signature reports exactly that string to sign.
        let bad = with_auth(
            headers(&[("x-ms-date", "Sun, 11 Oct 2009 19:52:39 GMT")]),
            "SharedKeyLite testaccount1:AAAA",
        );
        match run("GET", "/Tables", None, &bad, account, None) {
            Err(AuthError::SignatureMismatch { string_to_sign, provided }) => {
                assert_eq!(string_to_sign, sts);
                assert_eq!(provided, "AAAA");
            }
            other => panic!("{other:?}"),
        }
    }

    // Same page, "Shared Key format for the Table service": the Table SharedKey string to sign
    // is VERB, Content-MD5, Content-Type, Date and the canonicalized resource, no
    // canonicalized headers; the documented example resource for an entity is
    // "/myaccount/mytable(PartitionKey='key',RowKey='key')" style, the comp example "?comp=metadata".
    #[test]
    fn example_shared_key_table_format() {
        let sts = format!("POST\n\napplication/json\n{DATE}\n/devstoreaccount1/Tables");
        let map = with_auth(
            headers(&[
                ("content-type", "application/json"),
                ("x-ms-date", DATE),
                ("x-ms-version", "2019-02-02"),
            ]),
            &format!("SharedKey devstoreaccount1:{}", sign(DEV_KEY, &sts)),
        );
        run("POST", "/Tables", None, &map, &dev(), None).expect("host-style SharedKey");
        let failed = run("POST", "/Tables", None, &headers(&[("x-ms-date", DATE)]), &dev(), None);
        assert_eq!(failed, Err(AuthError::MissingAuthorization));
    }

    #[test]
    fn path_style_shared_key_account_twice() {
        let sts = format!("GET\n\n\n{DATE}\n/devstoreaccount1/devstoreaccount1/Tables");
        let map = with_auth(
            headers(&[("x-ms-date", DATE)]),
            &format!("SharedKey devstoreaccount1:{}", sign(DEV_KEY, &sts)),
        );
        run("GET", "/devstoreaccount1/Tables", None, &map, &dev(), PATH_STYLE).expect("path-style");
    }

    #[test]
    fn path_style_signed_without_account_in_path() {
        let sts = format!("{DATE}\n/devstoreaccount1/Tables");
        let map = with_auth(
            headers(&[("x-ms-date", DATE)]),
            &format!("SharedKeyLite devstoreaccount1:{}", sign(DEV_KEY, &sts)),
        );
        run("GET", "/devstoreaccount1/Tables", None, &map, &dev(), PATH_STYLE).expect("prefix stripped");
        // ...but not for host-style, where nothing is to be stripped.
        assert!(run("GET", "/devstoreaccount1/Tables", None, &map, &dev(), None).is_err());
    }

    #[test]
    fn shared_key_lite_path_style_entity() {
        let path = "/devstoreaccount1/mytable(PartitionKey='a',RowKey='b%20c')";
        let sts = format!("{DATE}\n/devstoreaccount1{path}");
        let map = with_auth(
            headers(&[("x-ms-date", DATE)]),
            &format!("SharedKeyLite devstoreaccount1:{}", sign(DEV_KEY, &sts)),
        );
        run("GET", path, Some("$select=a"), &map, &dev(), PATH_STYLE).expect("lite");
    }

    #[test]
    fn x_ms_date_wins_over_date() {
        let good = format!("GET\n\n\n{DATE}\n/devstoreaccount1/Tables");
        let wrong = format!("GET\n\n\n{OTHER_DATE}\n/devstoreaccount1/Tables");
        let base = headers(&[("x-ms-date", DATE), ("date", OTHER_DATE)]);
        let ok = with_auth(base.clone(), &format!("SharedKey devstoreaccount1:{}", sign(DEV_KEY, &good)));
        run("GET", "/Tables", None, &ok, &dev(), None).expect("x-ms-date used");
        let bad = with_auth(base, &format!("SharedKey devstoreaccount1:{}", sign(DEV_KEY, &wrong)));
        assert!(matches!(
            run("GET", "/Tables", None, &bad, &dev(), None),
            Err(AuthError::SignatureMismatch { .. })
        ));

        // Without x-ms-date, Date is used.
        let only_date = with_auth(
            headers(&[("date", OTHER_DATE)]),
            &format!("SharedKey devstoreaccount1:{}", sign(DEV_KEY, &wrong)),
        );
        run("GET", "/Tables", None, &only_date, &dev(), None).expect("Date used");
    }

    #[test]
    fn missing_date_is_authentication_failed() {
        let map = with_auth(HeaderMap::new(), "SharedKey devstoreaccount1:AAAA");
        let err = run("GET", "/Tables", None, &map, &dev(), None).expect_err("no date");
        assert_eq!(err, AuthError::MissingDate);
        assert_eq!(ApiError::from(err).code, ErrorCode::AuthenticationFailed);
    }

    #[test]
    fn comp_included_other_params_ignored() {
        let sts = format!("GET\n\n\n{DATE}\n/devstoreaccount1/devstoreaccount1/mytable?comp=acl");
        let map = with_auth(
            headers(&[("x-ms-date", DATE)]),
            &format!("SharedKey devstoreaccount1:{}", sign(DEV_KEY, &sts)),
        );
        run("GET", "/devstoreaccount1/mytable", Some("timeout=30&comp=acl&x=y"), &map, &dev(), PATH_STYLE)
            .expect("comp");
        // Without comp in the query the same signature fails.
        assert!(
            run("GET", "/devstoreaccount1/mytable", Some("timeout=30"), &map, &dev(), PATH_STYLE).is_err()
        );
        // Signing other parameters is wrong.
        let sts_all =
            format!("GET\n\n\n{DATE}\n/devstoreaccount1/devstoreaccount1/mytable?comp=acl&timeout=30");
        let map = with_auth(
            headers(&[("x-ms-date", DATE)]),
            &format!("SharedKey devstoreaccount1:{}", sign(DEV_KEY, &sts_all)),
        );
        assert!(run(
            "GET",
            "/devstoreaccount1/mytable",
            Some("comp=acl&timeout=30"),
            &map,
            &dev(),
            PATH_STYLE
        )
        .is_err());
    }

    #[test]
    fn service_properties_path_style() {
        // GET /devstoreaccount1/?restype=service&comp=properties
        let sts = format!("{DATE}\n/devstoreaccount1/devstoreaccount1/?comp=properties");
        let map = with_auth(
            headers(&[("x-ms-date", DATE)]),
            &format!("SharedKeyLite devstoreaccount1:{}", sign(DEV_KEY, &sts)),
        );
        run("GET", "/devstoreaccount1/", Some("restype=service&comp=properties"), &map, &dev(), PATH_STYLE)
            .expect("props");
    }

    #[test]
    fn key2_accepted_and_wrong_key_rejected() {
        let sts = format!("GET\n\n\n{DATE}\n/devstoreaccount1/Tables");
        let map = with_auth(
            headers(&[("x-ms-date", DATE)]),
            &format!("SharedKey devstoreaccount1:{}", sign(KEY2, &sts)),
        );
        run("GET", "/Tables", None, &map, &dev_with_key2(), None).expect("key2");
        // The plain dev account has only key1: the key2 signature is rejected.
        let err = run("GET", "/Tables", None, &map, &dev(), None).expect_err("wrong key");
        assert_eq!(ApiError::from(err).code, ErrorCode::AuthenticationFailed);
    }

    #[test]
    fn tampered_method_or_path_rejected() {
        let sts = format!(
            "GET\n\n\n{DATE}\n/devstoreaccount1/devstoreaccount1/mytable(PartitionKey='a',RowKey='b')"
        );
        let map = with_auth(
            headers(&[("x-ms-date", DATE)]),
            &format!("SharedKey devstoreaccount1:{}", sign(DEV_KEY, &sts)),
        );
        let path = "/devstoreaccount1/mytable(PartitionKey='a',RowKey='b')";
        run("GET", path, None, &map, &dev(), PATH_STYLE).expect("untampered");
        assert!(run("DELETE", path, None, &map, &dev(), PATH_STYLE).is_err());
        assert!(run(
            "GET",
            "/devstoreaccount1/mytable(PartitionKey='a',RowKey='c')",
            None,
            &map,
            &dev(),
            PATH_STYLE
        )
        .is_err());
        assert!(run(
            "GET",
            "/devstoreaccount1/other(PartitionKey='a',RowKey='b')",
            None,
            &map,
            &dev(),
            PATH_STYLE
        )
        .is_err());
        // A slash smuggled in as %2F does not match a signature over a real slash.
        let sts = format!("GET\n\n\n{DATE}\n/devstoreaccount1/devstoreaccount1/a/b");
        let map = with_auth(
            headers(&[("x-ms-date", DATE)]),
            &format!("SharedKey devstoreaccount1:{}", sign(DEV_KEY, &sts)),
        );
        run("GET", "/devstoreaccount1/a/b", None, &map, &dev(), PATH_STYLE).expect("real slash");
        assert!(run("GET", "/devstoreaccount1/a%2Fb", None, &map, &dev(), PATH_STYLE).is_err());
    }

    #[test]
    fn tampered_content_type_rejected_for_shared_key_only() {
        let sts = format!("POST\n\napplication/json\n{DATE}\n/devstoreaccount1/Tables");
        let map = with_auth(
            headers(&[("x-ms-date", DATE), ("content-type", "application/xml")]),
            &format!("SharedKey devstoreaccount1:{}", sign(DEV_KEY, &sts)),
        );
        assert!(run("POST", "/Tables", None, &map, &dev(), None).is_err());
        let lite = format!("{DATE}\n/devstoreaccount1/Tables");
        let map = with_auth(
            headers(&[("x-ms-date", DATE), ("content-type", "application/xml")]),
            &format!("SharedKeyLite devstoreaccount1:{}", sign(DEV_KEY, &lite)),
        );
        run("POST", "/Tables", None, &map, &dev(), None).expect("lite ignores content-type");
    }

    #[test]
    fn encoding_variants_accepted() {
        // Signed with every reserved character encoded (strict encoder), sent literally.
        let sent = "/devstoreaccount1/mytable(PartitionKey='a',RowKey='b')";
        let strict = renormalise(sent, PathEncoding::Encode(UNRESERVED)).expect("utf8");
        assert_eq!(strict, "/devstoreaccount1/mytable%28PartitionKey%3D%27a%27%2CRowKey%3D%27b%27%29");
        let sts = format!("{DATE}\n/devstoreaccount1{strict}");
        let strict_map = with_auth(
            headers(&[("x-ms-date", DATE)]),
            &format!("SharedKeyLite devstoreaccount1:{}", sign(DEV_KEY, &sts)),
        );
        run("GET", sent, None, &strict_map, &dev(), PATH_STYLE).expect("strict variant");
        // Signed literally (pchar form), sent encoded.
        let sts = format!("{DATE}\n/devstoreaccount1/devstoreaccount1/mytable(PartitionKey='a',RowKey='b')");
        let lit_map = with_auth(
            headers(&[("x-ms-date", DATE)]),
            &format!("SharedKeyLite devstoreaccount1:{}", sign(DEV_KEY, &sts)),
        );
        run(
            "GET",
            "/devstoreaccount1/mytable%28PartitionKey=%27a%27,RowKey=%27b%27%29",
            None,
            &lit_map,
            &dev(),
            PATH_STYLE,
        )
        .expect("pchar variant");
        // Signed fully decoded (space literal), sent with %20.
        let sts = format!("{DATE}\n/devstoreaccount1/devstoreaccount1/t(PartitionKey='a b',RowKey='ü')");
        let map = with_auth(
            headers(&[("x-ms-date", DATE)]),
            &format!("SharedKeyLite devstoreaccount1:{}", sign(DEV_KEY, &sts)),
        );
        run(
            "GET",
            "/devstoreaccount1/t(PartitionKey='a%20b',RowKey='%C3%BC')",
            None,
            &map,
            &dev(),
            PATH_STYLE,
        )
        .expect("decoded");
    }

    #[test]
    fn secondary_variants() {
        let prefix = Some("/devstoreaccount1-secondary");
        let path = "/devstoreaccount1-secondary/Tables";
        // What an SDK signs for a -secondary endpoint: the real account name + the URL path.
        for resource in [
            "/devstoreaccount1/devstoreaccount1-secondary/Tables",
            "/devstoreaccount1/devstoreaccount1/Tables",
            "/devstoreaccount1/Tables",
        ] {
            let sts = format!("{DATE}\n{resource}");
            let map = with_auth(
                headers(&[("x-ms-date", DATE)]),
                &format!("SharedKeyLite devstoreaccount1:{}", sign(DEV_KEY, &sts)),
            );
            run("GET", path, None, &map, &dev(), prefix).unwrap_or_else(|e| panic!("{resource}: {e:?}"));
        }
        // The header may name the -secondary account as well.
        let sts = format!("{DATE}\n/devstoreaccount1-secondary/devstoreaccount1-secondary/Tables");
        let map = with_auth(
            headers(&[("x-ms-date", DATE)]),
            &format!("SharedKeyLite devstoreaccount1-secondary:{}", sign(DEV_KEY, &sts)),
        );
        run("GET", path, None, &map, &dev(), prefix).expect("secondary in header");
    }

    #[test]
    fn missing_header_wrong_scheme_wrong_account() {
        let err =
            run("GET", "/Tables", None, &headers(&[("x-ms-date", DATE)]), &dev(), None).expect_err("none");
        assert_eq!(ApiError::from(err).code, ErrorCode::NoAuthenticationInformation);

        for auth in [
            "Bearer abc",
            "SharedKey",
            "SharedKey devstoreaccount1",
            "SharedKey :abc",
            "SharedKey devstoreaccount1:",
            "Basic Zm9vOmJhcg==",
        ] {
            let map = with_auth(headers(&[("x-ms-date", DATE)]), auth);
            let err = run("GET", "/Tables", None, &map, &dev(), None).expect_err(auth);
            assert!(matches!(err, AuthError::MalformedAuthorization(_)), "{auth}: {err:?}");
            assert_eq!(ApiError::from(err).code, ErrorCode::InvalidAuthenticationInfo, "{auth}");
        }

        let sts = format!("GET\n\n\n{DATE}\n/otheraccount/Tables");
        let map = with_auth(
            headers(&[("x-ms-date", DATE)]),
            &format!("SharedKey otheraccount:{}", sign(DEV_KEY, &sts)),
        );
        let err = run("GET", "/Tables", None, &map, &dev(), None).expect_err("mismatch");
        assert!(matches!(err, AuthError::AccountMismatch { .. }));
        assert_eq!(ApiError::from(err).code, ErrorCode::AuthenticationFailed);
    }

    #[test]
    fn garbage_signature_is_mismatch_with_detail() {
        let map = with_auth(headers(&[("x-ms-date", DATE)]), "SharedKey devstoreaccount1:not*base64");
        let err = run("GET", "/devstoreaccount1/Tables", Some("comp=x"), &map, &dev(), PATH_STYLE)
            .expect_err("bad sig");
        let api = ApiError::from(err);
        assert_eq!(api.code, ErrorCode::AuthenticationFailed);
        let detail = api.auth_detail.expect("detail");
        assert!(detail.contains("'not*base64'"), "{detail}");
        assert!(
            detail.contains(&format!("GET\n\n\n{DATE}\n/devstoreaccount1/devstoreaccount1/Tables?comp=x")),
            "{detail}"
        );
    }

    #[test]
    fn comp_variants_cover_sdk_forms() {
        assert_eq!(comp_variants(None), vec![String::new()]);
        assert_eq!(comp_variants(Some("a=b")), vec![String::new()]);
        assert_eq!(comp_variants(Some("comp=acl")), vec!["?comp=acl".to_string()]);
        assert_eq!(
            comp_variants(Some("comp=a%20b")),
            vec!["?comp=a%20b".to_string(), "?comp=a b".to_string()]
        );
        assert_eq!(comp_variants(Some("comp")), vec!["?comp=".to_string(), String::new()]);
    }

    #[test]
    fn renormalise_keeps_encoded_slash_and_handles_stray_percent() {
        let (pchar, whatwg, decoded) =
            (PathEncoding::Encode(PCHAR), PathEncoding::Encode(WHATWG_PATH), PathEncoding::Decoded);
        assert_eq!(renormalise("/a%2fb", decoded).as_deref(), Some("/a%2Fb"));
        assert_eq!(renormalise("/a%zz%", pchar).as_deref(), Some("/a%25zz%25"));
        assert_eq!(renormalise("/%ff", decoded), None);
        assert_eq!(renormalise("/a b", whatwg).as_deref(), Some("/a%20b"));
    }

    type Keep = fn(u8) -> bool;

    /// The re-spelling rule written byte by byte: decode `%XX`, keep a decoded `/`
    /// encoded, write literal exactly the bytes `keep` accepts (and a raw `/`).
    fn reference(path: &str, keep: Keep) -> Option<String> {
        let (bytes, mut out, mut i) = (path.as_bytes(), Vec::new(), 0);
        while i < bytes.len() {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
            let (byte, encoded) = match (bytes[i], hex) {
                (b'%', Some(b)) if bytes[i + 1].is_ascii_hexdigit() && bytes[i + 2].is_ascii_hexdigit() => {
                    i += 3;
                    (b, true)
                }
                (b, _) => {
                    i += 1;
                    (b, false)
                }
            };
            if if byte == b'/' { !encoded } else { keep(byte) } {
                out.push(byte);
            } else {
                out.extend_from_slice(format!("%{byte:02X}").as_bytes());
            }
        }
        String::from_utf8(out).ok()
    }

    proptest::proptest! {
        #[test]
        fn renormalise_matches_the_bytewise_rule(path in "[/a%2fF5 é(')~+!\"#{}\x7f]{0,16}") {
            let unreserved = |b: u8| b.is_ascii_alphanumeric() || b"-._~".contains(&b);
            let pchar = |b: u8| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b);
            let whatwg = |b: u8| (0x21..=0x7e).contains(&b) && !b"\"#<>?`{}".contains(&b);
            let decoded = |b: u8| b != b'%';
            let cases: [(PathEncoding, Keep); 4] = [
                (PathEncoding::Encode(UNRESERVED), unreserved),
                (PathEncoding::Encode(PCHAR), pchar),
                (PathEncoding::Encode(WHATWG_PATH), whatwg),
                (PathEncoding::Decoded, decoded),
            ];
            for (encoding, keep) in cases {
                proptest::prop_assert_eq!(renormalise(&path, encoding), reference(&path, keep), "{:?}", encoding);
            }
        }
    }

    #[test]
    fn non_ascii_header_values_are_read_lossily() {
        let value = HeaderValue::from_bytes(b"SharedKey \xffname:sig").expect("obs-text value");
        assert_eq!(header_text(&value), "SharedKey \u{FFFD}name:sig");
        let value = HeaderValue::from_static("SharedKey name:sig");
        assert!(matches!(header_text(&value), Cow::Borrowed("SharedKey name:sig")));
    }

    proptest::proptest! {
        /// Noting every header in the map's order keeps what the lookups find: the first
        /// value of each name, whatever else the request carries.
        #[test]
        fn noted_headers_are_the_looked_up_ones(
            pairs in proptest::collection::vec(
                (
                    proptest::sample::select(vec![
                        "authorization", "Authorization", "x-ms-date", "X-MS-Date", "date", "content-md5",
                        "content-type", "accept", "host", "x-ms-version", "content-length",
                    ]),
                    "[ -~]{0,6}",
                ),
                0..12,
            )
        ) {
            let map = headers(&pairs.iter().map(|(n, v)| (*n, v.as_str())).collect::<Vec<_>>());
            let mut noted = SignedHeaders::default();
            for (name, value) in &map {
                noted.note(name, value);
            }
            proptest::prop_assert_eq!(noted, SignedHeaders::of(&map));
        }
    }

    proptest::proptest! {
        /// The byte check answers as `char::is_whitespace` does, on any text.
        #[test]
        fn whitespace_is_found_as_by_chars(s in "[a-zA-Z0-9+/=\t\n\u{b}\u{c}\r \u{85}\u{a0}\u{2003}\u{3000}é]{0,10}") {
            proptest::prop_assert_eq!(has_whitespace(&s), s.contains(char::is_whitespace));
        }
    }
}
