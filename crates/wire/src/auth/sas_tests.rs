//! Tests of SAS verification and authorization. Tokens come from two independent sources:
//! vectors computed with Python's `hmac` following azure-data-tables'
//! `_shared_access_signature.py` / `_table_shared_access_signature.py` (query built the
//! same way: fields in the SDK's insertion order, values `urllib.parse.quote`d), and a
//! builder here that joins the fields with `\n` as @azure/data-tables'
//! `accountSasSignatureValues.ts` / `tableSasSignatureValues.ts` do.

use super::*;
use crate::auth::sign::signature;
use crate::auth::{Accounts, DEV_ACCOUNT};
use std::cell::RefCell;
use std::net::Ipv4Addr;

pub(super) type E = Endpoint;

pub(super) fn dev() -> Account {
    Accounts::with_dev_account().get(DEV_ACCOUNT).cloned().expect("dev account")
}

pub(super) fn at(s: &str) -> Ticks {
    parse_time(s).expect("time")
}

/// 2024-01-01T12:00Z, from 127.0.0.1, over HTTPS.
pub(super) fn ctx(account: &Account) -> SasContext<'_> {
    SasContext {
        account,
        now: at("2024-01-01T12:00:00Z"),
        client_ip: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        is_https: true,
    }
}

pub(super) fn no_policies(_: &str, _: &str) -> Option<AccessPolicy> {
    None
}

pub(super) fn code(r: Result<SasGrant, ApiError>) -> Result<SasGrant, &'static str> {
    r.map_err(|e| e.code.as_str())
}

pub(super) fn check_with(
    c: &SasContext<'_>,
    query: &str,
    endpoint: &Endpoint,
    if_match: bool,
) -> Result<SasGrant, &'static str> {
    let token = parse_sas(query).expect("has sig").expect("parses");
    code(authorize_sas(&token, c, endpoint, if_match, &no_policies))
}

pub(super) fn check(query: &str, endpoint: &Endpoint) -> Result<SasGrant, &'static str> {
    check_with(&ctx(&dev()), query, endpoint, false)
}

fn value<'a>(fields: &[(&str, &'a str)], name: &str) -> &'a str {
    fields.iter().find(|(n, _)| *n == name).map_or("", |(_, v)| v)
}

pub(super) fn encode(fields: &[(&str, &str)], sig: &str) -> String {
    let enc =
        |v: &str| percent_encoding::utf8_percent_encode(v, percent_encoding::NON_ALPHANUMERIC).to_string();
    let mut parts: Vec<String> =
        fields.iter().filter(|(_, v)| !v.is_empty()).map(|(n, v)| format!("{n}={}", enc(v))).collect();
    parts.push(format!("sig={}", enc(sig)));
    parts.join("&")
}

/// An account SAS as the JS SDK builds it (plus the `ses` line for sv ≥ 2020-12-06).
pub(super) fn account_token(key: &[u8], fields: &[(&str, &str)]) -> String {
    let v = |n| value(fields, n);
    let mut parts =
        vec![DEV_ACCOUNT, v("sp"), v("ss"), v("srt"), v("st"), v("se"), v("sip"), v("spr"), v("sv")];
    if v("sv") >= "2020-12-06" {
        parts.push(v("ses"));
    }
    parts.push("");
    encode(fields, &signature(key, &parts.join("\n")))
}

/// A table SAS as the JS SDK builds it.
pub(super) fn table_token(key: &[u8], fields: &[(&str, &str)]) -> String {
    let v = |n| value(fields, n);
    let resource = format!("/table/{DEV_ACCOUNT}/{}", v("tn").to_lowercase());
    let parts = [
        v("sp"),
        v("st"),
        v("se"),
        &resource,
        v("si"),
        v("sip"),
        v("spr"),
        v("sv"),
        v("spk"),
        v("srk"),
        v("epk"),
        v("erk"),
    ];
    encode(fields, &signature(key, &parts.join("\n")))
}

pub(super) fn acct(sp: &str, srt: &str) -> String {
    let fields =
        [("sv", "2019-02-02"), ("ss", "bqt"), ("srt", srt), ("sp", sp), ("se", "2024-01-02T00:00:00Z")];
    account_token(&dev().keys[0], &fields)
}

pub(super) fn tbl(sp: &str, extra: &[(&'static str, &'static str)]) -> String {
    let mut fields =
        vec![("sv", "2019-02-02"), ("tn", "MyTable"), ("sp", sp), ("se", "2024-01-02T00:00:00Z")];
    fields.extend_from_slice(extra);
    table_token(&dev().keys[0], &fields)
}

pub(super) fn t(name: &str) -> String {
    name.to_owned()
}

pub(super) fn entity(kind: fn(String, String, String) -> Endpoint) -> Endpoint {
    kind(t("mytable"), t("p5"), t("r"))
}

pub(super) fn get_op(table: String, pk: String, rk: String) -> Endpoint {
    E::GetEntity { table, pk, rk }
}
pub(super) fn update_op(table: String, pk: String, rk: String) -> Endpoint {
    E::UpdateEntity { table, pk, rk }
}
pub(super) fn merge_op(table: String, pk: String, rk: String) -> Endpoint {
    E::MergeEntity { table, pk, rk }
}
pub(super) fn delete_op(table: String, pk: String, rk: String) -> Endpoint {
    E::DeleteEntity { table, pk, rk }
}

// ---- signatures ----

#[test]
fn python_sdk_account_sas_vector() {
    let q = "st=2024-01-01T00%3A00%3A00Z&se=2024-01-02T00%3A00%3A00Z&sp=rwdlacu&spr=https&sv=2019-02-02\
             &ss=t&srt=sco&sig=EWDXAD9M9zIkD/n0t0CuHk4dfeo5imMKJ9zRGlMnM/U%3D";
    let grant = check(q, &E::QueryTables).expect("valid");
    assert_eq!(grant.scope, SasScope::Account { resource_types: t("sco") });
    assert_eq!((grant.permissions.as_str(), grant.version.as_str()), ("rwdlacu", "2019-02-02"));
    assert!(grant.key_range.contains("any", "thing"));
    // Any field changed → the signature no longer matches, and the detail shows what was signed.
    let e = parse_sas(&q.replace("sp=rwdlacu", "sp=rwdlacup")).expect("sig").expect("parses");
    let err = authorize_sas(&e, &ctx(&dev()), &E::QueryTables, false, &no_policies).expect_err("tampered");
    assert_eq!(err.code.as_str(), "AuthenticationFailed");
    let detail = err.auth_detail.unwrap_or_default();
    assert!(detail.starts_with(
        "Signature did not match. String to sign used was devstoreaccount1\nrwdlacup\nt\nsco\n"
    ));
}

#[test]
fn python_sdk_table_sas_vector() {
    let q = "se=2024-01-02T00%3A00%3A00Z&sp=raud&sip=127.0.0.1-127.0.0.10&sv=2019-02-02&tn=MyTable\
             &spk=p1&srk=r1&epk=p9&sig=V2oqsxV6G8msSCzttQb/u15Dlri0mOiZ2vAKqtxvyM0%3D";
    let grant = check(q, &E::QueryEntities { table: t("mytable") }).expect("valid");
    assert_eq!(grant.scope, SasScope::Table { table: t("MyTable") });
    assert!(
        grant.key_range.contains("p1", "r1")
            && grant.key_range.contains("p9", "zzz")
            && !grant.key_range.contains("p1", "r0")
    );
    assert_eq!(
        check(&q.replace("epk=p9", "epk=p8"), &E::QueryEntities { table: t("mytable") }),
        Err("AuthenticationFailed")
    );
}

#[test]
fn version_specific_forms() {
    let account = dev();
    let c = ctx(&account);
    let query = E::QueryTables;
    // sv ≥ 2020-12-06: the encryption-scope line is part of the account string to sign.
    let q = "sv=2020-12-06&ss=bt&srt=s&sp=rl&se=2024-01-02T00%3A00%3A00Z&sig=PpRtr6mIBLM0w8djBOye8DPW7xu90hjQn/65kqr/uZ4%3D";
    assert!(check_with(&c, q, &query, false).is_ok());
    let old_form =
        signature(&dev().keys[0], "devstoreaccount1\nrl\nbt\ns\n\n2024-01-02T00:00:00Z\n\n\n2020-12-06\n");
    let q2 = encode(
        &[("sv", "2020-12-06"), ("ss", "bt"), ("srt", "s"), ("sp", "rl"), ("se", "2024-01-02T00:00:00Z")],
        &old_form,
    );
    assert_eq!(check_with(&c, &q2, &query, false), Err("AuthenticationFailed"));
    // Account SAS needs sv ≥ 2015-04-05.
    let q3 = account_token(
        &dev().keys[0],
        &[("sv", "2015-02-21"), ("ss", "t"), ("srt", "s"), ("sp", "l"), ("se", "2024-01-02")],
    );
    assert_eq!(check_with(&c, &q3, &query, false), Err("AuthenticationFailed"));
    // Legacy table SAS: no sip/spr; no /table prefix before 2015-02-21; both forms on 2015-02-21.
    let qe = E::QueryEntities { table: t("MYTABLE") };
    for (sv, sig) in [
        ("2013-08-15", "soQzW9124ETOiww%2B1ZxZwHP0IFZqT95BLWkv07l3QNw%3D"),
        ("2015-02-21", "L/QPnHGXl5Cx0%2BrjRQFHQ3DH8eMXHPPOUoJl0Jvmtbs%3D"),
        ("2015-02-21", "cPi/dd2BO3r3nrfmJ5nsI04772kIpx8WgPBXAs7H/HI%3D"),
    ] {
        let q = format!("sv={sv}&tn=mytable&sp=r&se=2024-01-02&sig={sig}");
        assert!(check_with(&c, &q, &qe, false).is_ok(), "{sv} {sig}");
    }
    let q =
        "sv=2014-02-14&tn=mytable&sp=r&se=2024-01-02&sig=soQzW9124ETOiww%2B1ZxZwHP0IFZqT95BLWkv07l3QNw%3D";
    assert_eq!(check_with(&c, q, &qe, false), Err("AuthenticationFailed"), "sv is signed");
    let too_old =
        table_token(&dev().keys[0], &[("sv", "2011-08-18"), ("tn", "t"), ("sp", "r"), ("se", "2024-01-02")]);
    assert_eq!(check_with(&c, &too_old, &qe, false), Err("AuthenticationFailed"));
    let bad_sv = acct("r", "s").replace("sv=2019%2D02%2D02", "sv=latest");
    assert_eq!(check_with(&c, &bad_sv, &query, false), Err("AuthenticationFailed"));
}

#[test]
fn either_key_signs() {
    let mut account = dev();
    account.keys.push(b"second key".to_vec().into());
    let fields = [("sv", "2019-02-02"), ("ss", "t"), ("srt", "s"), ("sp", "l"), ("se", "2024-01-02")];
    for key in &account.keys {
        let q = account_token(key, &fields);
        assert!(check_with(&ctx(&account), &q, &E::QueryTables, false).is_ok());
    }
    let q = account_token(b"some other key", &fields);
    assert_eq!(check_with(&ctx(&account), &q, &E::QueryTables, false), Err("AuthenticationFailed"));
    // A signature that is not base64 at all is a mismatch too.
    let q = encode(&fields, "x").replace("sig=x", "sig=%%%");
    assert_eq!(
        check_with(&ctx(&account), &q, &E::QueryTables, false).map(|_| ()),
        Err("AuthenticationFailed")
    );
}

#[test]
fn parse_sas_rules() {
    assert_eq!(parse_sas("restype=service&comp=properties"), None);
    assert_eq!(parse_sas(""), None);
    let token = parse_sas("sv=2019-02-02&sig=a+b%2Bc d&tn=T%C3%A9&x=1&sp=").expect("sig").expect("ok");
    assert_eq!((token.sig.as_str(), token.tn.as_deref(), token.sp), ("a+b+c+d", Some("Té"), None));
    let failed = |q: &str| parse_sas(q).expect("sig").map(|_| ()).map_err(|e| e.code.as_str());
    assert_eq!(failed("sig=abc"), Err("AuthenticationFailed"));
    assert_eq!(failed("sv=2019-02-02&sig=a&sp=r&sp=w"), Err("AuthenticationFailed"));
    assert_eq!(failed("sv=2019-02-02&sig=a&tn=%FF"), Err("AuthenticationFailed"));
    // A token without `ss`/`srt` is a table SAS, which needs `tn`.
    assert_eq!(
        check("sv=2019-02-02&sp=r&se=2024-01-02&sig=abc", &E::QueryTables),
        Err("AuthenticationFailed")
    );
}

// ---- validity window, source IP, protocol, service ----

#[test]
fn validity_window() {
    let fields = |st: &'static str, se: &'static str| {
        account_token(
            &dev().keys[0],
            &[("sv", "2019-02-02"), ("ss", "t"), ("srt", "s"), ("sp", "l"), ("st", st), ("se", se)],
        )
    };
    let run = |q: &str| {
        let token = parse_sas(q).expect("sig").expect("ok");
        authorize_sas(&token, &ctx(&dev()), &E::QueryTables, false, &no_policies)
            .map_err(|e| (e.code.as_str(), e.auth_detail))
    };
    for (st, se) in [
        ("", "2024-01-02"),
        ("2024-01-01", "2024-01-01T12:00Z"),
        ("2024-01-01T11:00:00.0000000Z", "2024-01-01T13:00:00+01:00"),
    ] {
        assert!(run(&fields(st, se)).is_ok(), "{st} {se}");
    }
    let (c, detail) = run(&fields("", "2024-01-01T11:59:59.999Z")).expect_err("expired");
    assert_eq!(c, "AuthenticationFailed");
    assert_eq!(
        detail.as_deref(),
        Some("Signature not valid in the specified time frame: Start [] - Expiry [Mon, 01 Jan 2024 11:59:59 GMT] - Current [Mon, 01 Jan 2024 12:00:00 GMT]")
    );
    let (_, detail) = run(&fields("2024-01-01T12:00:01Z", "2024-01-03")).expect_err("not yet");
    assert!(detail.unwrap_or_default().contains("Start [Mon, 01 Jan 2024 12:00:01 GMT]"));
    let (_, detail) = run(&fields("2024-01-02", "2024-01-02")).expect_err("expiry not after start");
    assert!(detail
        .unwrap_or_default()
        .starts_with("Signed expiry time [Tue, 02 Jan 2024 00:00:00 GMT] has to be after"));
    for (st, se) in [("", "tomorrow"), ("yesterday", "2024-01-02"), ("", "2024-1-2")] {
        let (c, detail) = run(&fields(st, se)).expect_err("malformed");
        assert_eq!(
            (c, detail.as_deref()),
            ("AuthenticationFailed", Some("Signature fields not well formed."))
        );
    }
    // se and sp are required (for a table SAS without policy, too).
    let q = table_token(&dev().keys[0], &[("sv", "2019-02-02"), ("tn", "t"), ("sp", "r")]);
    assert_eq!(check(&q, &E::QueryEntities { table: t("t") }), Err("AuthenticationFailed"));
    let q = table_token(&dev().keys[0], &[("sv", "2019-02-02"), ("tn", "t"), ("se", "2024-01-02")]);
    assert_eq!(check(&q, &E::QueryEntities { table: t("t") }), Err("AuthenticationFailed"));
}

#[test]
fn source_ip() {
    let account = dev();
    let with_ip = |ip: Option<IpAddr>| SasContext { client_ip: ip, ..ctx(&account) };
    let v4 = |a, b, c, d| Some(IpAddr::V4(Ipv4Addr::new(a, b, c, d)));
    let mapped = Some(IpAddr::V6(Ipv4Addr::new(168, 1, 5, 65).to_ipv6_mapped()));
    let q = |sip: &'static str| tbl("r", &[("sip", sip)]);
    let qe = E::QueryEntities { table: t("mytable") };
    let cases: [(&str, Option<IpAddr>, Result<(), &str>); 10] = [
        ("168.1.5.65", v4(168, 1, 5, 65), Ok(())),
        ("168.1.5.65", mapped, Ok(())),
        ("168.1.5.65", v4(168, 1, 5, 66), Err("AuthorizationSourceIPMismatch")),
        ("168.1.5.60-168.1.5.70", v4(168, 1, 5, 60), Ok(())),
        ("168.1.5.60-168.1.5.70", v4(168, 1, 5, 70), Ok(())),
        ("168.1.5.60-168.1.5.70", v4(168, 1, 5, 71), Err("AuthorizationSourceIPMismatch")),
        ("168.1.5.60-168.1.5.70", None, Err("AuthorizationSourceIPMismatch")),
        ("::1", Some(IpAddr::V6(std::net::Ipv6Addr::LOCALHOST)), Ok(())),
        ("::1", v4(127, 0, 0, 1), Err("AuthorizationSourceIPMismatch")),
        ("168.1.5", v4(168, 1, 5, 0), Err("AuthenticationFailed")),
    ];
    for (sip, ip, want) in cases {
        assert_eq!(check_with(&with_ip(ip), &q(sip), &qe, false).map(|_| ()), want, "{sip} {ip:?}");
    }
    let e = parse_sas(&q("10.0.0.1")).expect("sig").expect("ok");
    let err = authorize_sas(&e, &ctx(&account), &qe, false, &no_policies).expect_err("mismatch");
    assert_eq!(
        err.message,
        "This request is not authorized to perform this operation using this source IP 127.0.0.1."
    );
}

#[test]
fn protocol_and_service() {
    let account = dev();
    let http = SasContext { is_https: false, ..ctx(&account) };
    let qe = E::QueryEntities { table: t("mytable") };
    let q = |spr: &'static str| tbl("r", &[("spr", spr)]);
    assert!(check_with(&http, &q("https,http"), &qe, false).is_ok());
    assert_eq!(check_with(&http, &q("https"), &qe, false).map(|_| ()), Err("AuthorizationProtocolMismatch"));
    assert!(check_with(&ctx(&account), &q("https"), &qe, false).is_ok());
    assert_eq!(check_with(&http, &q("http"), &qe, false).map(|_| ()), Err("AuthenticationFailed"));
    // `ss` must include the table service.
    let fields =
        [("sv", "2019-02-02"), ("ss", "bfq"), ("srt", "sco"), ("sp", "rwdlacu"), ("se", "2024-01-02")];
    let q = account_token(&account.keys[0], &fields);
    assert_eq!(check(&q, &E::QueryTables).map(|_| ()), Err("AuthorizationServiceMismatch"));
}

// ---- stored access policies ----

#[test]
fn stored_policy_resolution() {
    let policy = AccessPolicy { start: None, expiry: Some(at("2024-01-02")), permission: Some(t("r")) };
    let calls = RefCell::new(Vec::new());
    let lookup = |table: &str, si: &str| {
        calls.borrow_mut().push((table.to_owned(), si.to_owned()));
        (si == "policy1").then(|| policy.clone())
    };
    let token = |fields: &[(&'static str, &'static str)]| {
        let mut all = vec![("sv", "2019-02-02"), ("tn", "MyTable")];
        all.extend_from_slice(fields);
        parse_sas(&table_token(&dev().keys[0], &all)).expect("sig").expect("ok")
    };
    let run = |fields: &[(&'static str, &'static str)], endpoint: &Endpoint| {
        authorize_sas(&token(fields), &ctx(&dev()), endpoint, false, &lookup)
            .map_err(|e| (e.code.as_str(), e.status()))
    };
    let qe = E::QueryEntities { table: t("mytable") };
    // The policy supplies expiry and permission.
    let grant = run(&[("si", "policy1")], &qe).expect("policy applies");
    assert_eq!(grant.permissions, "r");
    assert_eq!(calls.borrow().as_slice(), [(t("MyTable"), t("policy1"))]);
    assert_eq!(
        run(&[("si", "policy1")], &E::InsertEntity { table: t("mytable") }).map(|_| ()),
        Err(("AuthorizationPermissionMismatch", 403))
    );
    // The token may add a field the policy lacks.
    assert!(run(&[("si", "policy1"), ("st", "2024-01-01")], &qe).is_ok());
    // A field in both → 400.
    for field in [("se", "2024-01-02"), ("sp", "r")] {
        assert_eq!(
            run(&[("si", "policy1"), field], &qe).map(|_| ()),
            Err(("InvalidQueryParameterValue", 400)),
            "{field:?}"
        );
    }
    // Deleted (or never created) policy → 403 AuthorizationFailure, after the signature check.
    assert_eq!(
        run(&[("si", "gone"), ("sp", "r"), ("se", "2024-01-02")], &qe).map(|_| ()),
        Err(("AuthorizationFailure", 403))
    );
    let mut forged = token(&[("si", "gone")]);
    forged.sig = t("AAAA");
    let err = authorize_sas(&forged, &ctx(&dev()), &qe, false, &lookup).expect_err("forged");
    assert_eq!(err.code.as_str(), "AuthenticationFailed");
    // Start and expiry from the policy are enforced.
    let late = AccessPolicy { start: Some(at("2024-01-01T13:00Z")), expiry: None, permission: None };
    let late_lookup = |_: &str, _: &str| Some(late.clone());
    let t2 = token(&[("si", "x"), ("sp", "r"), ("se", "2024-01-02")]);
    let err = authorize_sas(&t2, &ctx(&dev()), &qe, false, &late_lookup).expect_err("not started");
    assert_eq!(err.code.as_str(), "AuthenticationFailed");
    // Account SAS ignores si entirely (stored policies do not apply to it).
    let q = account_token(
        &dev().keys[0],
        &[("sv", "2019-02-02"), ("ss", "t"), ("srt", "s"), ("sp", "l"), ("se", "2024-01-02"), ("si", "x")],
    );
    let account_token = parse_sas(&q).expect("sig").expect("ok");
    assert!(authorize_sas(&account_token, &ctx(&dev()), &E::QueryTables, false, &late_lookup).is_ok());
}
