//! Tests of what a verified SAS may do: the permissions each operation needs (account and
//! table SAS), batches, and the key-range semantics. Helpers are in `sas_tests.rs`.

use super::tests::*;
use super::*;

// ---- permissions per operation ----

#[test]
fn account_sas_permissions_per_operation() {
    let ok = Ok(());
    let (perm, rt, fail) = (
        Err("AuthorizationPermissionMismatch"),
        Err("AuthorizationResourceTypeMismatch"),
        Err("AuthorizationFailure"),
    );
    let qe = E::QueryEntities { table: t("mytable") };
    let ins = E::InsertEntity { table: t("mytable") };
    // (operation, If-Match, srt, sp, expected)
    type Case = (Endpoint, bool, &'static str, &'static str, Result<(), &'static str>);
    let cases: Vec<Case> = vec![
        (E::GetServiceProperties, false, "s", "r", ok),
        (E::GetServiceProperties, false, "s", "wl", perm),
        (E::GetServiceProperties, false, "co", "r", rt),
        (E::SetServiceProperties, false, "s", "w", ok),
        (E::SetServiceProperties, false, "s", "r", perm),
        (E::GetServiceStats, false, "s", "r", ok),
        (E::QueryTables, false, "s", "l", ok),
        (E::QueryTables, false, "s", "r", perm),
        (E::QueryTables, false, "c", "l", rt),
        (E::GetTable { table: t("x") }, false, "s", "l", ok),
        (E::CreateTable, false, "c", "c", ok),
        (E::CreateTable, false, "c", "w", ok),
        (E::CreateTable, false, "c", "a", perm),
        (E::CreateTable, false, "so", "cw", rt),
        (E::DeleteTable { table: t("x") }, false, "c", "d", ok),
        (E::DeleteTable { table: t("x") }, false, "c", "w", perm),
        (qe.clone(), false, "o", "r", ok),
        (qe.clone(), false, "sc", "r", rt),
        (qe, false, "o", "l", perm),
        (entity(get_op), false, "o", "r", ok),
        (ins.clone(), false, "o", "a", ok),
        (ins, false, "o", "wu", perm),
        (entity(update_op), true, "o", "u", ok),
        (entity(update_op), true, "o", "aw", perm),
        (entity(update_op), false, "o", "au", ok),
        (entity(update_op), false, "o", "u", perm),
        (entity(update_op), false, "o", "a", perm),
        (entity(merge_op), true, "o", "u", ok),
        (entity(merge_op), false, "o", "ua", ok),
        (entity(merge_op), false, "o", "uw", perm),
        (entity(delete_op), false, "o", "d", ok),
        (entity(delete_op), false, "o", "w", perm),
        (E::Batch, false, "o", "r", ok),
        (E::Batch, false, "sc", "rwdlacu", rt),
        (E::GetTableAcl { table: t("x") }, false, "sco", "rwdlacup", fail),
        (E::SetTableAcl { table: t("x") }, false, "sco", "rwdlacup", fail),
        (E::Preflight, false, "s", "r", ok),
    ];
    for (endpoint, if_match, srt, sp, want) in cases {
        let got = check_with(&ctx(&dev()), &acct(sp, srt), &endpoint, if_match).map(|_| ());
        assert_eq!(got, want, "{} if_match={if_match} srt={srt} sp={sp}", endpoint.name());
    }
}

#[test]
fn table_sas_permissions_per_operation() {
    let ok = Ok(());
    let (perm, fail) = (Err("AuthorizationPermissionMismatch"), Err("AuthorizationFailure"));
    let cases: Vec<(Endpoint, bool, &str, Result<(), &str>)> = vec![
        (E::QueryEntities { table: t("mytable") }, false, "r", ok),
        (E::QueryEntities { table: t("MYTABLE") }, false, "r", ok),
        (E::QueryEntities { table: t("mytable") }, false, "aud", perm),
        (E::QueryEntities { table: t("other") }, false, "raud", fail),
        (entity(get_op), false, "r", ok),
        (E::InsertEntity { table: t("mytable") }, false, "a", ok),
        (E::InsertEntity { table: t("mytable") }, false, "ud", perm),
        (entity(update_op), true, "u", ok),
        (entity(update_op), false, "au", ok),
        (entity(update_op), false, "u", perm),
        (entity(merge_op), true, "u", ok),
        (entity(merge_op), false, "a", perm),
        (entity(delete_op), false, "d", ok),
        (entity(delete_op), false, "rau", perm),
        (E::Batch, false, "r", ok),
    ];
    for (endpoint, if_match, sp, want) in cases {
        let got = check_with(&ctx(&dev()), &tbl(sp, &[]), &endpoint, if_match).map(|_| ());
        assert_eq!(got, want, "{} if_match={if_match} sp={sp}", endpoint.name());
    }
    // No table, ACL or service operation is possible with a table SAS.
    for endpoint in [
        E::QueryTables,
        E::GetTable { table: t("mytable") },
        E::CreateTable,
        E::DeleteTable { table: t("mytable") },
        E::GetTableAcl { table: t("mytable") },
        E::SetTableAcl { table: t("mytable") },
        E::GetServiceProperties,
        E::SetServiceProperties,
        E::GetServiceStats,
    ] {
        assert_eq!(check(&tbl("raud", &[]), &endpoint).map(|_| ()), fail, "{}", endpoint.name());
    }
    // Letters outside raud are refused.
    assert_eq!(check(&tbl("rw", &[]), &entity(get_op)).map(|_| ()), Err("AuthenticationFailed"));
}

#[test]
fn batch_operations_are_each_authorized() {
    let grant = check(&tbl("ra", &[("spk", "p"), ("epk", "p")]), &E::Batch).expect("batch itself");
    let ins = E::InsertEntity { table: t("mytable") };
    let merge_in = E::MergeEntity { table: t("mytable"), pk: t("p"), rk: t("1") };
    let merge_out = E::MergeEntity { table: t("mytable"), pk: t("q"), rk: t("1") };
    assert_eq!(grant.authorize_batch([(&ins, false), (&ins, false)]), Ok(()));
    let code = |r: Result<(), ApiError>| r.map_err(|e| e.code.as_str());
    assert_eq!(
        code(grant.authorize_batch([(&ins, false), (&merge_in, true)])),
        Err("AuthorizationPermissionMismatch")
    );
    let grant = check(&tbl("rau", &[("spk", "p"), ("epk", "p")]), &E::Batch).expect("batch itself");
    assert_eq!(grant.authorize_batch([(&ins, false), (&merge_in, false)]), Ok(()));
    // permissions only: the key range is checked by the service on each operation's keys
    assert_eq!(grant.authorize_batch([(&merge_in, false), (&merge_out, false)]), Ok(()));
    assert!(!grant.key_range.contains("q", "1") && grant.key_range.contains("p", "1"));
}

// ---- key ranges ----

#[test]
fn key_range_truth_table() {
    let grant = |spk: Option<&str>, srk: Option<&str>, epk: Option<&str>, erk: Option<&str>| {
        let o = |v: Option<&str>| v.map(str::to_owned);
        let token = SasToken { spk: o(spk), srk: o(srk), epk: o(epk), erk: o(erk), ..SasToken::default() };
        let key_range = key_range(&token).expect("valid");
        SasGrant {
            scope: SasScope::Table { table: t("t") },
            permissions: t("r"),
            version: t("2019-02-02"),
            key_range,
        }
    };
    type Row = (
        Option<&'static str>,
        Option<&'static str>,
        Option<&'static str>,
        Option<&'static str>,
        &'static [(&'static str, &'static str, bool)],
    );
    let rows: [Row; 7] = [
        (None, None, None, None, &[("", "", true), ("z", "z", true)]),
        (Some("b"), None, None, None, &[("a", "z", false), ("b", "", true), ("c", "a", true)]),
        (
            Some("b"),
            Some("m"),
            None,
            None,
            &[("a", "z", false), ("b", "l", false), ("b", "m", true), ("b", "n", true), ("c", "", true)],
        ),
        (
            None,
            None,
            Some("b"),
            None,
            &[("a", "z", true), ("b", "zzz", true), ("c", "", false), ("ba", "", false)],
        ),
        (
            None,
            None,
            Some("b"),
            Some("m"),
            &[("a", "z", true), ("b", "m", true), ("b", "n", false), ("c", "a", false)],
        ),
        (
            Some("b"),
            Some("m"),
            Some("d"),
            Some("f"),
            &[
                ("b", "l", false),
                ("b", "m", true),
                ("c", "", true),
                ("c", "zz", true),
                ("d", "f", true),
                ("d", "g", false),
                ("e", "", false),
            ],
        ),
        (
            Some("p"),
            Some("r"),
            Some("p"),
            Some("r"),
            &[("p", "r", true), ("p", "q", false), ("p", "s", false), ("o", "r", false), ("q", "r", false)],
        ),
    ];
    for (spk, srk, epk, erk, points) in rows {
        let g = grant(spk, srk, epk, erk);
        for (pk, rk, want) in points {
            assert_eq!(
                g.key_range.contains(pk, rk),
                *want,
                "spk={spk:?} srk={srk:?} epk={epk:?} erk={erk:?} at ({pk}, {rk})"
            );
        }
    }
    // Keys compare as UTF-16 (U+10000 sorts before U+E000), as the store orders them.
    assert!(!grant(Some("\u{E000}"), None, None, None).key_range.contains("\u{10000}", ""));
    // srk needs spk, erk needs epk.
    let malformed = |token: SasToken| key_range(&token).map_err(|e| e.code.as_str());
    assert_eq!(malformed(SasToken { srk: Some(t("a")), ..SasToken::default() }), Err("AuthenticationFailed"));
    assert_eq!(malformed(SasToken { erk: Some(t("a")), ..SasToken::default() }), Err("AuthenticationFailed"));
}

#[test]
fn point_operations_carry_the_range_to_the_service() {
    let q = tbl("raud", &[("spk", "p1"), ("epk", "p3")]);
    for kind in [get_op, update_op, merge_op, delete_op] {
        let outside = kind(t("mytable"), t("p4"), t("x"));
        // authorized here; refused by the service, which holds the grant's key range
        let grant = check_with(&ctx(&dev()), &q, &outside, true).expect("permissions");
        assert!(grant.key_range.contains("p2", "x") && !grant.key_range.contains("p4", "x"));
    }
}
