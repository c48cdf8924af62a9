//! Planner cases: the hull ([`plan`]), the union of ranges ([`plan_ranges`]) and the
//! RowKey interval of every partition ([`plan_row_keys`]).

use super::p;
use crate::filter::plan::{plan_ranges, plan_row_keys, RowKeys, MAX_RANGES};
use crate::filter::{plan, CmpOp, Expr};
use aztable_model::EdmValue;
use aztable_model::{KeyBound, KeyRange};

fn b(pk: &str, rk: Option<&str>, inclusive: bool) -> Option<KeyBound> {
    Some(KeyBound { pk: pk.into(), rk: rk.map(String::from), inclusive })
}

fn range(filter: &str) -> KeyRange {
    plan(&p(filter))
}

#[test]
fn partition_equality_is_the_whole_partition() {
    let r = range("PartitionKey eq 'a'");
    assert_eq!(r, KeyRange { lower: b("a", None, true), upper: b("a", None, true) });
    assert_eq!(r.single_partition(), Some("a"));
    assert!(r.contains("a", ""));
    assert!(r.contains("a", "zzz"));
    assert!(!r.contains("b", ""));
    assert!(!r.contains("", "a"));
    assert!(!r.contains("a\u{0}", ""));
    assert!(!r.is_empty());
    // Constant on the left.
    assert_eq!(range("'a' eq PartitionKey"), r);
}

#[test]
fn row_range_inside_a_partition() {
    let r = range("PartitionKey eq 'a' and RowKey ge 'm' and RowKey lt 'n'");
    assert_eq!(r, KeyRange { lower: b("a", Some("m"), true), upper: b("a", Some("n"), false) });
    assert!(r.contains("a", "m"));
    assert!(r.contains("a", "mzzz"));
    assert!(!r.contains("a", "n"));
    assert!(!r.contains("a", "l"));
    assert!(!r.contains("b", "m"));
    assert_eq!(r.single_partition(), Some("a"));
    // Order of the conjuncts and constants on the left do not matter.
    assert_eq!(range("'n' gt RowKey and 'm' le RowKey and 'a' eq PartitionKey"), r);
    let point = range("PartitionKey eq 'a' and RowKey eq 'r'");
    assert_eq!(point, KeyRange { lower: b("a", Some("r"), true), upper: b("a", Some("r"), true) });
    assert!(point.contains("a", "r") && !point.contains("a", "r0") && !point.contains("a", "q"));
}

#[test]
fn prefix_ranges_over_partitions() {
    let r = range("PartitionKey ge 'a' and PartitionKey lt 'b'");
    assert_eq!(r, KeyRange { lower: b("a", None, true), upper: b("b", None, false) });
    assert!(r.contains("a", "") && r.contains("azz", "x"));
    assert!(!r.contains("b", "") && !r.contains("B", ""));
    assert_eq!(r.single_partition(), None);
    let r = range("PartitionKey gt 'a' and PartitionKey le 'c'");
    assert_eq!(r, KeyRange { lower: b("a", None, false), upper: b("c", None, true) });
    assert!(
        !r.contains("a", "zzz") && r.contains("a0", "") && r.contains("c", "zzz") && !r.contains("c0", "")
    );
}

#[test]
fn row_bounds_alone_do_not_narrow() {
    assert!(range("RowKey ge 'm' and RowKey lt 'n'").is_unbounded());
    assert!(range("RowKey eq 'x'").is_unbounded());
    // ...but they tighten the partition bounds when there are some.
    let r = range("PartitionKey ge 'a' and RowKey ge 'm'");
    assert_eq!(r, KeyRange { lower: b("a", Some("m"), true), upper: None });
}

#[test]
fn or_takes_the_hull() {
    let r = range("PartitionKey eq 'a' or PartitionKey eq 'c'");
    assert_eq!(r, KeyRange { lower: b("a", None, true), upper: b("c", None, true) });
    assert!(r.contains("b", "x"));
    assert!(range("PartitionKey eq 'a' or Age gt 5").is_unbounded());
    let r = range("(PartitionKey eq 'a' and RowKey eq '1') or (PartitionKey eq 'a' and RowKey eq '3')");
    assert_eq!(r, KeyRange { lower: b("a", Some("1"), true), upper: b("a", Some("3"), true) });
}

#[test]
fn not_and_others_are_unbounded() {
    for f in [
        "not (PartitionKey eq 'a')",
        "PartitionKey ne 'a'",
        "Age gt 5",
        "IsActive",
        "true",
        "PartitionKey ne 5",
    ] {
        assert!(range(f).is_unbounded(), "{f}");
    }
    // Other conditions do not widen a key restriction.
    let r = range("PartitionKey eq 'a' and (Age gt 5 or not IsActive)");
    assert_eq!(r.single_partition(), Some("a"));
}

#[test]
fn contradictions_are_empty() {
    for f in [
        "PartitionKey eq 'a' and PartitionKey eq 'b'",
        "PartitionKey lt 'a' and PartitionKey gt 'a'",
        "PartitionKey eq 'a' and RowKey gt 'm' and RowKey lt 'm'",
        "RowKey eq 'x' and RowKey eq 'y'",
        "RowKey lt ''",
        "PartitionKey lt ''",
        "PartitionKey eq 5",
        "RowKey gt 1L",
        "false",
        "false and PartitionKey eq 'a'",
    ] {
        let r = range(f);
        assert!(r.is_empty(), "{f}: {r:?}");
        assert!(!r.contains("a", "m") && !r.contains("", ""), "{f}");
    }
    assert_eq!(range("false or PartitionKey eq 'a'"), range("PartitionKey eq 'a'"));
    assert!(!range("PartitionKey ge 'a' and PartitionKey le 'a'").is_empty());
}

#[test]
fn keyrange_basics() {
    let all = KeyRange::unbounded();
    assert!(all.contains("", "") && all.contains("\u{10000}", "x") && !all.is_empty());
    let none = KeyRange::empty();
    assert!(none.is_empty() && !none.contains("", "") && !none.contains("z", "z"));
    // An upper bound before the first row of a partition excludes it entirely.
    let r = KeyRange { lower: None, upper: b("b", None, false) };
    assert!(r.contains("a", "zzz") && !r.contains("b", ""));
    // Lower bound `after ('a', '')`.
    let r = KeyRange { lower: b("a", Some(""), false), upper: None };
    assert!(!r.contains("a", "") && r.contains("a", "\u{1}"));
    // UTF-16 order: U+10000 sorts below U+E000.
    let r = KeyRange { lower: None, upper: b("\u{E000}", None, false) };
    assert!(r.contains("\u{10000}", ""));
}

// ---- plan_ranges: the union of disjoint, sorted ranges ----

fn ranges(filter: &str) -> Vec<KeyRange> {
    plan_ranges(&p(filter))
}

fn r(lower: Option<KeyBound>, upper: Option<KeyBound>) -> KeyRange {
    KeyRange { lower, upper }
}

#[test]
fn seed_prefix_pattern_is_one_row_range() {
    let got = ranges("PartitionKey eq 'x' and RowKey ge 'Sh' and RowKey lt 'Si'");
    assert_eq!(got, vec![r(b("x", Some("Sh"), true), b("x", Some("Si"), false))]);
    assert!(got[0].contains("x", "Sh") && got[0].contains("x", "Shz") && !got[0].contains("x", "Si"));
}

#[test]
fn point_query_is_a_single_row() {
    let got = ranges("PartitionKey eq 'p' and RowKey eq 'r'");
    assert_eq!(got, vec![r(b("p", Some("r"), true), b("p", Some("r"), true))]);
    assert_eq!(got[0].single_partition(), Some("p"));
}

#[test]
fn partition_ranges_are_one_range() {
    let got = ranges("PartitionKey ge 'p10' and PartitionKey lt 'p20'");
    assert_eq!(got, vec![r(b("p10", None, true), b("p20", None, false))]);
    assert_eq!(ranges("PartitionKey eq 'a'"), vec![r(b("a", None, true), b("a", None, true))]);
    assert_eq!(ranges("PartitionKey gt 'a'"), vec![r(b("a", None, false), None)]);
    assert_eq!(ranges("PartitionKey le 'a'"), vec![r(None, b("a", None, true))]);
}

#[test]
fn or_of_partitions_is_a_union() {
    let a = r(b("a", None, true), b("a", None, true));
    let z = r(b("z", None, true), b("z", None, true));
    assert_eq!(ranges("PartitionKey eq 'a' or PartitionKey eq 'z'"), vec![a.clone(), z.clone()]);
    // Sorted whatever the order in the filter, duplicates merged.
    assert_eq!(
        ranges("PartitionKey eq 'z' or PartitionKey eq 'a' or PartitionKey eq 'z'"),
        vec![a.clone(), z.clone()]
    );
    // The hull is still available through `plan`.
    assert_eq!(range("PartitionKey eq 'a' or PartitionKey eq 'z'"), r(a.lower, z.upper));
}

#[test]
fn or_of_rows_is_a_union_of_single_rows() {
    let got = ranges("(PartitionKey eq 'a' and RowKey eq '3') or (PartitionKey eq 'a' and RowKey eq '1')");
    assert_eq!(
        got,
        vec![
            r(b("a", Some("1"), true), b("a", Some("1"), true)),
            r(b("a", Some("3"), true), b("a", Some("3"), true)),
        ]
    );
    // `and` distributes over `or`.
    let got = ranges("(PartitionKey eq 'b' or PartitionKey eq 'a') and RowKey eq 'x'");
    assert_eq!(
        got,
        vec![
            r(b("a", Some("x"), true), b("a", Some("x"), true)),
            r(b("b", Some("x"), true), b("b", Some("x"), true)),
        ]
    );
}

#[test]
fn overlapping_and_touching_ranges_merge() {
    assert_eq!(
        ranges(
            "(PartitionKey ge 'a' and PartitionKey le 'm') or (PartitionKey ge 'k' and PartitionKey lt 'z')"
        ),
        vec![r(b("a", None, true), b("z", None, false))]
    );
    // `le 'm'` ends where `gt 'm'` starts (after partition m): one range, everything.
    assert_eq!(ranges("PartitionKey le 'm' or PartitionKey gt 'm'"), vec![KeyRange::unbounded()]);
    assert_eq!(ranges("PartitionKey lt 'm' or PartitionKey ge 'm'"), vec![KeyRange::unbounded()]);
    // Rows of one partition that touch: [1, 3) and [3, 5].
    assert_eq!(
        ranges(
            "PartitionKey eq 'a' and (RowKey ge '1' and RowKey lt '3' or RowKey ge '3' and RowKey le '5')"
        ),
        vec![r(b("a", Some("1"), true), b("a", Some("5"), true))]
    );
    // A gap remains a gap: (1, 3) and (3, 5) leave out row 3.
    assert_eq!(
        ranges(
            "PartitionKey eq 'a' and (RowKey gt '1' and RowKey lt '3' or RowKey gt '3' and RowKey lt '5')"
        )
        .len(),
        2
    );
}

#[test]
fn not_and_ne_split_around_the_key() {
    let below_above = vec![r(None, b("a", None, false)), r(b("a", None, false), None)];
    assert_eq!(ranges("PartitionKey ne 'a'"), below_above);
    assert_eq!(ranges("not (PartitionKey eq 'a')"), below_above);
    assert_eq!(ranges("not (PartitionKey lt 'a')"), vec![r(b("a", None, true), None)]);
    assert_eq!(
        ranges("not (PartitionKey lt 'a' or PartitionKey gt 'c')"),
        vec![r(b("a", None, true), b("c", None, true))]
    );
    assert_eq!(ranges("not (not (PartitionKey eq 'a'))"), ranges("PartitionKey eq 'a'"));
    // `ne ''` cannot be below '': one range.
    assert_eq!(ranges("PartitionKey ne ''"), vec![r(b("", None, false), None)]);
    // Non-string constants: `eq` is never true, so its negation always is; `ne` the reverse.
    assert_eq!(ranges("not (PartitionKey eq 5)"), vec![KeyRange::unbounded()]);
    assert!(ranges("not (RowKey ne 5)").is_empty());
    assert!(ranges("not true").is_empty());
    assert_eq!(ranges("not false"), vec![KeyRange::unbounded()]);
    // Other properties narrow nothing in either polarity.
    assert_eq!(ranges("PartitionKey eq 'a' and not (Age gt 5)"), ranges("PartitionKey eq 'a'"));
}

#[test]
fn nothing_narrowing_is_a_full_scan_with_residual() {
    for f in [
        "Age gt 5",
        "IsActive",
        "not IsActive",
        "RowKey eq 'x'",
        "RowKey ge 'm' and RowKey lt 'n'",
        "PartitionKey eq 'a' or Age gt 5",
        "(PartitionKey eq 'a' and RowKey eq 'x') or RowKey eq 'y'",
        "Timestamp ge datetime'2020-01-01T00:00:00Z'",
    ] {
        assert_eq!(ranges(f), vec![KeyRange::unbounded()], "{f}");
    }
}

#[test]
fn contradictions_have_no_range() {
    for f in [
        "PartitionKey eq 'a' and PartitionKey eq 'b'",
        "(PartitionKey eq 'a' or PartitionKey eq 'b') and PartitionKey eq 'c'",
        "PartitionKey eq 5 or RowKey lt ''",
        "false",
        "not (PartitionKey ge '')",
    ] {
        assert_eq!(ranges(f), vec![], "{f}");
        assert!(range(f).is_empty(), "{f}");
    }
}

#[test]
fn ranges_sort_in_utf16_order() {
    let got = ranges("PartitionKey eq '\u{E000}' or PartitionKey eq '\u{10000}'");
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].single_partition(), Some("\u{10000}"));
    assert_eq!(got[1].single_partition(), Some("\u{E000}"));
}

fn or_of_partitions(n: usize) -> Expr {
    let eq = |i: usize| Expr::compare("PartitionKey", CmpOp::Eq, EdmValue::String(format!("p{i:03}")));
    (1..n).fold(eq(0), |e, i| e.or(eq(i)))
}

#[test]
fn too_many_ranges_collapse_into_the_hull() {
    let got = plan_ranges(&or_of_partitions(MAX_RANGES));
    assert_eq!(got.len(), MAX_RANGES);
    let hull = vec![r(b("p000", None, true), b(&format!("p{MAX_RANGES:03}"), None, true))];
    assert_eq!(plan_ranges(&or_of_partitions(MAX_RANGES + 1)), hull);
    // Far more terms than are kept while summarising: the terms collapse into their
    // hull whenever there are too many, so the result stays small and covers them all.
    let got = plan_ranges(&or_of_partitions(200));
    assert!(got.len() <= MAX_RANGES, "{got:?}");
    assert!((0..200).all(|i| got.iter().filter(|r| r.contains(&format!("p{i:03}"), "")).count() == 1));
    assert!(!got.iter().any(|r| r.contains("p200", "") || r.contains("o", "")));
}

#[test]
fn ends_before_a_resume_point() {
    let got = ranges("PartitionKey eq 'a' or (PartitionKey eq 'c' and RowKey lt 'm')");
    assert!(!got[0].ends_before("a", "zzz"));
    assert!(got[0].ends_before("a\u{0}", ""));
    assert!(got[0].ends_before("b", ""));
    assert!(!got[1].ends_before("b", ""));
    assert!(!got[1].ends_before("c", "l"));
    assert!(got[1].ends_before("c", "m"));
    assert!(!KeyRange::unbounded().ends_before("\u{10FFFF}", "\u{10FFFF}"));
}

/// Orleans' grain directory filter: one partition, 100 `(RowKey eq … and ActivationId
/// eq …)` pairs (201 comparisons), plans to 100 point ranges, not a scan between them.
#[test]
fn orleans_sized_filters_plan_to_point_ranges() {
    let pairs: Vec<String> =
        (0..100).map(|i| format!("(RowKey eq 'g{:03}' and ActivationId eq 'a{i}')", 199 - 2 * i)).collect();
    let got = ranges(&format!("PartitionKey eq 'c' and ({})", pairs.join(" or ")));
    assert_eq!(got.len(), 100);
    for (i, range) in got.iter().enumerate() {
        let rk = format!("g{:03}", 2 * i + 1);
        assert!(range.contains("c", &rk) && !range.contains("c", &format!("g{:03}", 2 * i)), "{range:?}");
    }
}

// ---- plan_row_keys: the RowKey intervals of every partition ----

#[test]
fn row_keys_are_the_union_of_every_terms_interval() {
    let rows = |filter: &str| plan_row_keys(&p(filter));
    let bound = |s: &str, inclusive: bool| Some((s.to_owned(), inclusive));
    let point = |s: &str| RowKeys { lower: bound(s, true), upper: bound(s, true) };
    assert_eq!(rows("RowKey eq 'x'"), Some(vec![point("x")]));
    assert_eq!(
        rows("RowKey gt 'a' and RowKey lt 'c' and Count eq 1"),
        Some(vec![RowKeys { lower: bound("a", false), upper: bound("c", false) }])
    );
    // disjoint intervals stay apart, in order, whichever partitions their terms hold
    assert_eq!(
        rows("RowKey eq 'c' or (PartitionKey eq 'p' and RowKey eq 'a')"),
        Some(vec![point("a"), point("c")])
    );
    assert_eq!(
        rows("RowKey lt 'a' or RowKey gt 'z'"),
        Some(vec![
            RowKeys { lower: None, upper: bound("a", false) },
            RowKeys { lower: bound("z", false), upper: None }
        ])
    );
    // overlapping or touching ones are one
    assert_eq!(
        rows("(RowKey ge 'a' and RowKey le 'm') or (RowKey gt 'm' and RowKey lt 'q') or RowKey eq 'b'"),
        Some(vec![RowKeys { lower: bound("a", true), upper: bound("q", false) }])
    );
    assert_eq!(rows("not (RowKey lt 'm')"), Some(vec![RowKeys { lower: bound("m", true), upper: None }]));
    // a term that bounds no RowKey, no RowKey condition, nothing matching
    assert_eq!(rows("RowKey eq 'a' or Count eq 1"), None);
    assert_eq!(rows("PartitionKey eq 'a'"), None);
    assert_eq!(rows("RowKey lt 'a' and RowKey gt 'b'"), None);
    assert_eq!(rows("RowKey le 'a' or RowKey ge 'a'"), None);
    // `ne` is two intervals
    assert_eq!(
        rows("RowKey ne 'a'"),
        Some(vec![
            RowKeys { lower: None, upper: bound("a", false) },
            RowKeys { lower: bound("a", false), upper: None }
        ])
    );
    // many: the union of more than 256 terms collapses (the first ones into their hull),
    // and still holds every key
    let many: Vec<String> = (0..300).map(|i| format!("RowKey eq 'k{i:03}'")).collect();
    let planned = rows(&many.join(" or ")).expect("bounded");
    assert!(planned.len() <= MAX_RANGES && planned.len() < 300, "{} intervals", planned.len());
    assert_eq!(planned.first().map(|i| &i.lower), Some(&bound("k000", true)));
    assert_eq!(planned.last(), Some(&point("k299")));
}
