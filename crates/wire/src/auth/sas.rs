//! Shared access signatures for the Table service (pure: the caller supplies the clock,
//! the client address and the stored access policies).
//!
//! * **Account SAS** (`ss`/`srt` present): `StringToSign = account\nsp\nss\nsrt\nst\nse\nsip\nspr\nsv\n`,
//!   plus `ses\n` for `sv` ≥ 2020-12-06; `sv` must be ≥ 2015-04-05.
//! * **Table (service) SAS** (otherwise; `tn` required): for `sv` ≥ 2015-04-05
//!   `sp\nst\nse\n/table/{account}/{lowercase tn}\nsi\nsip\nspr\nsv\nspk\nsrk\nepk\nerk`; for
//!   2012-02-12 ≤ `sv` < 2015-04-05 the same without `sip`/`spr`, and without the `/table`
//!   prefix before 2015-02-21 (both resource forms are accepted for 2015-02-21 itself).
//!
//! Every field is percent-decoded (`+` stays `+`, as `decodeURIComponent` does) and signed
//! as sent; absent fields are empty strings. The signature is checked against each key of
//! the account in constant time. Checks then run in the service's order: signature
//! (403 `AuthenticationFailed`), stored policy (`si`: missing → 403 `AuthorizationFailure`,
//! a field both in the token and in the policy → 400), validity window
//! (`AuthenticationFailed`), `sip` (`AuthorizationSourceIPMismatch`), `spr`
//! (`AuthorizationProtocolMismatch`), `ss` (`AuthorizationServiceMismatch`), then per
//! operation ([`SasGrant::authorize`]): table name and operation kind (`AuthorizationFailure`),
//! `srt` (`AuthorizationResourceTypeMismatch`) and `sp` (`AuthorizationPermissionMismatch`).

use super::Account;
use crate::endpoint::{Endpoint, UnderTable};
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::policy::parse_time;
use aztable_model::{AccessPolicy, KeyBound, KeyRange, Ticks};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use std::net::IpAddr;

/// The SAS query parameters, percent-decoded; `None` = absent (an empty value counts as
/// absent, as the SDKs never send one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SasToken {
    pub sv: String,
    pub sig: String,
    pub ss: Option<String>,
    pub srt: Option<String>,
    pub sp: Option<String>,
    pub st: Option<String>,
    pub se: Option<String>,
    pub sip: Option<String>,
    pub spr: Option<String>,
    pub ses: Option<String>,
    pub tn: Option<String>,
    pub spk: Option<String>,
    pub srk: Option<String>,
    pub epk: Option<String>,
    pub erk: Option<String>,
    pub si: Option<String>,
}

/// The request facts a SAS is checked against.
#[derive(Debug, Clone, Copy)]
pub struct SasContext<'a> {
    /// The account the URL addresses (its name is signed, without `-secondary`).
    pub account: &'a Account,
    pub now: Ticks,
    /// The client's address; `None` (unknown) fails any `sip` restriction.
    pub client_ip: Option<IpAddr>,
    pub is_https: bool,
}

/// Looks up the stored access policy `(table named by tn, si)`. Table names are
/// case-insensitive: resolve `tn` the way the catalog does.
pub type PolicyLookup<'a> = &'a dyn Fn(&str, &str) -> Option<AccessPolicy>;

/// What a verified SAS may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SasScope {
    /// Account SAS (whose `ss` was checked to contain `t`): the signed resource types (`srt`).
    Account { resource_types: String },
    /// Table SAS for this table (`tn` as sent).
    Table { table: String },
}

/// A verified SAS: the effective permissions (after the stored policy) and, for a table
/// SAS, the entity key range it is limited to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SasGrant {
    pub scope: SasScope,
    pub permissions: String,
    /// `sv`: also the service version for the request when no `x-ms-version` is sent.
    pub version: String,
    /// Rows the SAS may read or write (unbounded for an account SAS): `spk` → PK ≥ spk;
    /// with `srk` → PK > spk ∨ (PK = spk ∧ RK ≥ srk); `epk` → PK ≤ epk; with `erk` →
    /// PK < epk ∨ (PK = epk ∧ RK ≤ erk). Keys compare as UTF-16, like the store.
    pub key_range: KeyRange,
}

const ALL_PARAMS: [&str; 16] =
    ["sv", "sig", "ss", "srt", "sp", "st", "se", "sip", "spr", "ses", "tn", "spk", "srk", "epk", "erk", "si"];

/// Parses the SAS parameters of a raw query string (without `?`). `None` when there is no
/// `sig` (not a SAS request); `Err` (403 `AuthenticationFailed`) for a missing `sv`, a value
/// that is not percent-encoded UTF-8, or a parameter given twice.
pub fn parse_sas(query: &str) -> Option<Result<SasToken, ApiError>> {
    // a query naming `sig` holds those letters; most requests' (SharedKey) do not, and
    // are answered without decoding the query
    if !query.as_bytes().windows(3).any(|w| w == b"sig") {
        return None;
    }
    let mut values: [Option<String>; 16] = Default::default();
    let mut has_sig = false;
    let mut error = None;
    for pair in query.split('&') {
        let (name, raw) = pair.split_once('=').unwrap_or((pair, ""));
        let Some(i) = ALL_PARAMS.iter().position(|p| *p == name) else { continue };
        has_sig |= name == "sig";
        let decoded = percent_encoding::percent_decode_str(raw).decode_utf8();
        match decoded {
            Ok(v) if values[i].is_none() => values[i] = Some(v.into_owned()),
            Ok(_) => error = error.or(Some(format!("The SAS parameter '{name}' is given more than once."))),
            Err(_) => error = error.or(Some(format!("The SAS parameter '{name}' is not valid UTF-8."))),
        }
    }
    if !has_sig {
        return None;
    }
    if let Some(detail) = error {
        return Some(Err(auth_failed(detail)));
    }
    let [sv, sig, ss, srt, sp, st, se, sip, spr, ses, tn, spk, srk, epk, erk, si] =
        values.map(|v| v.filter(|s| !s.is_empty()));
    let Some(sv) = sv else { return Some(Err(auth_failed("sv is mandatory. Cannot be empty"))) };
    // A `+` turned into a space by a form-encoding client.
    let sig = sig.unwrap_or_default().replace(' ', "+");
    Some(Ok(SasToken { sv, sig, ss, srt, sp, st, se, sip, spr, ses, tn, spk, srk, epk, erk, si }))
}

/// Verifies the token for a request ([`verify_sas`]) and authorizes `endpoint` with it
/// ([`SasGrant::authorize`]). `if_match`: the request has `If-Match` (Update/Merge Entity
/// rather than the upserts, which need both `a` and `u`).
pub fn authorize_sas(
    token: &SasToken,
    ctx: &SasContext<'_>,
    endpoint: &Endpoint,
    if_match: bool,
    policies: PolicyLookup<'_>,
) -> Result<SasGrant, ApiError> {
    let grant = verify_sas(token, ctx, policies)?;
    grant.authorize(endpoint, if_match)?;
    Ok(grant)
}

/// Everything that does not depend on the operation: signature, stored policy, validity
/// window, source IP, protocol and signed services.
pub fn verify_sas(
    token: &SasToken,
    ctx: &SasContext<'_>,
    policies: PolicyLookup<'_>,
) -> Result<SasGrant, ApiError> {
    if !is_version(&token.sv) {
        return Err(malformed());
    }
    let account_sas = token.ss.is_some() || token.srt.is_some();
    let candidates = if account_sas {
        account_strings(token, &ctx.account.name)?
    } else {
        table_strings(token, &ctx.account.name)?
    };
    let provided = STANDARD.decode(token.sig.as_bytes()).unwrap_or_default();
    let signed =
        ctx.account.keys.iter().any(|key| candidates.iter().any(|sts| key.signature_matches(sts, &provided)));
    if !signed {
        let mut e = ApiError::new(ErrorCode::AuthenticationFailed);
        let primary = candidates.first().map(String::as_str).unwrap_or_default();
        e.auth_detail = Some(format!("Signature did not match. String to sign used was {primary}"));
        return Err(e);
    }

    let time = |v: &Option<String>| v.as_deref().map(|s| parse_time(s).ok_or_else(malformed)).transpose();
    let (mut st, mut se, mut sp) = (time(&token.st)?, time(&token.se)?, token.sp.clone());
    if let (false, Some(si)) = (account_sas, &token.si) {
        let table = token.tn.as_deref().unwrap_or_default();
        let policy = policies(table, si).ok_or_else(|| ApiError::new(ErrorCode::AuthorizationFailure))?;
        let twice = |field: &str| {
            ApiError::with_message(
                ErrorCode::InvalidQueryParameterValue,
                format!("The SAS field '{field}' is specified both in the signature and in the stored access policy '{si}'."),
            )
        };
        st = merge(st, policy.start, || twice("st"))?;
        se = merge(se, policy.expiry, || twice("se"))?;
        sp = merge(sp, policy.permission, || twice("sp"))?;
    }
    let (Some(se), Some(permissions)) = (se, sp) else { return Err(malformed()) };
    check_window(st, se, ctx.now)?;
    if let Some(sip) = &token.sip {
        check_ip(sip, ctx.client_ip)?;
    }
    match token.spr.as_deref() {
        None | Some("https,http" | "http,https") => {}
        Some("https") if ctx.is_https => {}
        Some("https") => return Err(ApiError::new(ErrorCode::AuthorizationProtocolMismatch)),
        Some(_) => return Err(malformed()),
    }

    let (scope, key_range) = if account_sas {
        if !token.ss.as_deref().unwrap_or_default().contains('t') {
            return Err(ApiError::new(ErrorCode::AuthorizationServiceMismatch));
        }
        (SasScope::Account { resource_types: token.srt.clone().unwrap_or_default() }, KeyRange::unbounded())
    } else {
        if !permissions.chars().all(|c| "raud".contains(c)) {
            return Err(malformed());
        }
        let table = token.tn.clone().unwrap_or_default();
        (SasScope::Table { table }, key_range(token)?)
    };
    Ok(SasGrant { scope, permissions, version: token.sv.clone(), key_range })
}

impl SasGrant {
    /// Authorizes one operation: its table and permissions. The key range
    /// ([`SasGrant::key_range`]) is not checked here but by the service, on the keys each
    /// operation ends up with. `Batch` itself only needs object access: authorize each
    /// of its operations with [`authorize_batch`](Self::authorize_batch).
    pub fn authorize(&self, endpoint: &Endpoint, if_match: bool) -> Result<(), ApiError> {
        use Endpoint as E;
        let upsert = if if_match { "u" } else { "au" };
        // (resource type, permission letters: all required / any one of them)
        let (resource, all, any): (char, &str, &str) = match endpoint {
            E::GetServiceProperties | E::GetServiceStats => ('s', "r", ""),
            E::SetServiceProperties => ('s', "w", ""),
            E::QueryTables | E::GetTable { .. } => ('s', "l", ""),
            E::CreateTable => ('c', "", "cw"),
            E::DeleteTable { .. } => ('c', "d", ""),
            E::QueryEntities { .. } | E::GetEntity { .. } => ('o', "r", ""),
            E::InsertEntity { .. } => ('o', "a", ""),
            E::UpdateEntity { .. } | E::MergeEntity { .. } => ('o', upsert, ""),
            E::DeleteEntity { .. } => ('o', "d", ""),
            E::Batch => ('o', "", ""),
            E::GetTableAcl { .. } | E::SetTableAcl { .. } => {
                return Err(ApiError::new(ErrorCode::AuthorizationFailure))
            }
            E::Preflight => return Ok(()),
            // the service reads these as requests to the table the path names first
            E::UnderTable { resource, .. } => match resource {
                UnderTable::CreateTable => ('o', "a", ""),
                UnderTable::QueryTables => ('o', "r", ""),
                UnderTable::DeleteTable => ('o', "d", ""),
                UnderTable::Batch | UnderTable::ServiceProperties => ('o', "", ""),
            },
        };
        match &self.scope {
            SasScope::Account { resource_types } if !resource_types.contains(resource) => {
                return Err(ApiError::new(ErrorCode::AuthorizationResourceTypeMismatch));
            }
            SasScope::Account { .. } => {}
            SasScope::Table { table } => {
                let url_table = match endpoint {
                    E::QueryEntities { table }
                    | E::InsertEntity { table }
                    | E::GetEntity { table, .. }
                    | E::UpdateEntity { table, .. }
                    | E::MergeEntity { table, .. }
                    | E::DeleteEntity { table, .. }
                    | E::UnderTable { table, .. } => Some(table),
                    E::Batch => None,
                    _ => return Err(ApiError::new(ErrorCode::AuthorizationFailure)),
                };
                if url_table.is_some_and(|t| !t.eq_ignore_ascii_case(table)) {
                    return Err(ApiError::new(ErrorCode::AuthorizationFailure));
                }
            }
        }
        let has = |c: char| self.permissions.contains(c);
        if !all.chars().all(has) || !(any.is_empty() || any.chars().any(has)) {
            return Err(ApiError::new(ErrorCode::AuthorizationPermissionMismatch));
        }
        Ok(())
    }

    /// Authorizes every operation of a batch: `(endpoint, has If-Match)` per operation.
    pub fn authorize_batch<'a>(
        &self,
        ops: impl IntoIterator<Item = (&'a Endpoint, bool)>,
    ) -> Result<(), ApiError> {
        ops.into_iter().try_for_each(|(endpoint, if_match)| self.authorize(endpoint, if_match))
    }
}

/// 403 `AuthenticationFailed` with a detail.
fn auth_failed(detail: impl Into<String>) -> ApiError {
    let mut e = ApiError::new(ErrorCode::AuthenticationFailed);
    e.auth_detail = Some(detail.into());
    e
}

fn malformed() -> ApiError {
    auth_failed("Signature fields not well formed.")
}

/// A field of the token or of the stored policy, 400 when in both.
fn merge<T>(
    token: Option<T>,
    policy: Option<T>,
    twice: impl Fn() -> ApiError,
) -> Result<Option<T>, ApiError> {
    match (token, policy) {
        (Some(_), Some(_)) => Err(twice()),
        (token, policy) => Ok(token.or(policy)),
    }
}

/// `YYYY-MM-DD` (the form `sv` takes; compared as text).
fn is_version(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

fn opt(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or_default()
}

fn account_strings(t: &SasToken, account: &str) -> Result<Vec<String>, ApiError> {
    if t.sv.as_str() < "2015-04-05" {
        return Err(malformed());
    }
    let (sp, ss, srt, st, se, sip, spr) =
        (opt(&t.sp), opt(&t.ss), opt(&t.srt), opt(&t.st), opt(&t.se), opt(&t.sip), opt(&t.spr));
    let mut sts = format!("{account}\n{sp}\n{ss}\n{srt}\n{st}\n{se}\n{sip}\n{spr}\n{}\n", t.sv);
    if t.sv.as_str() >= "2020-12-06" {
        sts.push_str(opt(&t.ses));
        sts.push('\n');
    }
    Ok(vec![sts])
}

fn table_strings(t: &SasToken, account: &str) -> Result<Vec<String>, ApiError> {
    let sv = t.sv.as_str();
    let Some(tn) = &t.tn else { return Err(auth_failed("tn is mandatory. Cannot be empty")) };
    if sv < "2012-02-12" {
        return Err(malformed());
    }
    let table = tn.to_lowercase();
    let (sp, st, se, si) = (opt(&t.sp), opt(&t.st), opt(&t.se), opt(&t.si));
    let keys = format!("{}\n{}\n{}\n{}", opt(&t.spk), opt(&t.srk), opt(&t.epk), opt(&t.erk));
    if sv >= "2015-04-05" {
        let (sip, spr) = (opt(&t.sip), opt(&t.spr));
        return Ok(vec![format!(
            "{sp}\n{st}\n{se}\n/table/{account}/{table}\n{si}\n{sip}\n{spr}\n{sv}\n{keys}"
        )]);
    }
    let resource = |prefix: &str| format!("{sp}\n{st}\n{se}\n{prefix}/{account}/{table}\n{si}\n{sv}\n{keys}");
    Ok(match sv {
        "2015-02-21" => vec![resource("/table"), resource("")],
        _ if sv > "2015-02-21" => vec![resource("/table")],
        _ => vec![resource("")],
    })
}

fn check_window(st: Option<Ticks>, se: Ticks, now: Ticks) -> Result<(), ApiError> {
    let start = st.map(Ticks::to_http_date).unwrap_or_default();
    if st.is_some_and(|st| se <= st) {
        return Err(auth_failed(format!(
            "Signed expiry time [{}] has to be after signed start time [{start}]",
            se.to_http_date()
        )));
    }
    if st.is_some_and(|st| now < st) || now > se {
        return Err(auth_failed(format!(
            "Signature not valid in the specified time frame: Start [{start}] - Expiry [{}] - Current [{}]",
            se.to_http_date(),
            now.to_http_date()
        )));
    }
    Ok(())
}

/// IPv4-mapped IPv6 addresses compare as IPv4.
fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// `sip` is one address or an inclusive range `low-high` of the same family.
fn check_ip(sip: &str, client: Option<IpAddr>) -> Result<(), ApiError> {
    let parse = |s: &str| s.trim().parse::<IpAddr>().map(canonical_ip).map_err(|_| malformed());
    let (low, high) = match sip.split_once('-') {
        Some((a, b)) => (parse(a)?, parse(b)?),
        None => (parse(sip)?, parse(sip)?),
    };
    let inside = client.map(canonical_ip).is_some_and(|ip| match (ip, low, high) {
        (IpAddr::V4(ip), IpAddr::V4(l), IpAddr::V4(h)) => l <= ip && ip <= h,
        (IpAddr::V6(ip), IpAddr::V6(l), IpAddr::V6(h)) => l <= ip && ip <= h,
        _ => false,
    });
    if inside {
        return Ok(());
    }
    let shown = client.map(|ip| canonical_ip(ip).to_string()).unwrap_or_default();
    Err(ApiError::with_message(
        ErrorCode::AuthorizationSourceIPMismatch,
        format!("This request is not authorized to perform this operation using this source IP {shown}."),
    ))
}

/// The key range of a table SAS; `srk` needs `spk` and `erk` needs `epk`.
fn key_range(t: &SasToken) -> Result<KeyRange, ApiError> {
    let bound = |pk: &Option<String>, rk: &Option<String>| match (pk, rk) {
        (Some(pk), rk) => Ok(Some(KeyBound { pk: pk.clone(), rk: rk.clone(), inclusive: true })),
        (None, Some(_)) => Err(malformed()),
        (None, None) => Ok(None),
    };
    Ok(KeyRange { lower: bound(&t.spk, &t.srk)?, upper: bound(&t.epk, &t.erk)? })
}

#[cfg(test)]
#[path = "sas_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "sas_authz_tests.rs"]
mod authz_tests;
