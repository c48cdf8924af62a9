//! Planner cases.

use super::p;
use crate::filter::{plan, KeyBound, KeyRange};

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
