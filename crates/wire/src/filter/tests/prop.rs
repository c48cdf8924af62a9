//! Property tests: Display round-trips, the planner never drops a match (its ranges are
//! sorted and disjoint, its RowKey interval holds every match's), a compiled filter evaluates as the tree does, and the parser
//! never panics.

use crate::filter::plan::{plan_ranges, plan_row_keys, MAX_RANGES};
use crate::filter::{eval, parse, plan, CmpOp, Compiled, Expr, MAX_DEPTH};
use aztable_model::{EdmRef, EdmValue, Entity, Row, Ticks};
use proptest::prelude::*;

const KEYWORDS: [&str; 12] =
    ["and", "or", "not", "eq", "ne", "gt", "ge", "lt", "le", "true", "false", "null"];

fn property_name() -> impl Strategy<Value = String> {
    "[A-Za-z_][A-Za-z0-9_]{0,8}".prop_filter("keyword", |s| !KEYWORDS.contains(&s.as_str()))
}

fn literal() -> impl Strategy<Value = EdmValue> {
    let finite = prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL | prop::num::f64::ZERO;
    let ticks = Ticks::parse("1601-01-01T00:00:00Z").unwrap().0
        ..=Ticks::parse("9999-12-31T23:59:59.9999999Z").unwrap().0;
    prop_oneof![
        any::<String>().prop_map(EdmValue::String),
        "[a'' ]{0,4}".prop_map(EdmValue::String),
        any::<i32>().prop_map(EdmValue::Int32),
        any::<i64>().prop_map(EdmValue::Int64),
        finite.prop_map(EdmValue::Double),
        any::<bool>().prop_map(EdmValue::Boolean),
        ticks.prop_map(|t| EdmValue::DateTime(Ticks(t))),
        any::<[u8; 16]>().prop_map(EdmValue::Guid),
        prop::collection::vec(any::<u8>(), 0..6).prop_map(EdmValue::Binary),
    ]
}

fn op() -> impl Strategy<Value = CmpOp> {
    prop::sample::select(CmpOp::ALL.to_vec())
}

/// Random trees of at most 8 leaves (the parser allows 15).
fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        3 => (property_name(), op(), literal()).prop_map(|(p, o, v)| Expr::compare(p, o, v)),
        1 => property_name().prop_map(Expr::Property),
        1 => any::<bool>().prop_map(Expr::Bool),
    ];
    leaf.prop_recursive(3, 8, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(Expr::not),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.and(b)),
            (inner.clone(), inner).prop_map(|(a, b)| a.or(b)),
        ]
    })
}

/// Keys from a tiny alphabet (so they collide) that includes the UTF-16/UTF-8 order
/// difference.
fn key() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(vec!['a', 'b', 'c', '\u{E000}', '\u{10000}']), 0..3)
        .prop_map(|cs| cs.into_iter().collect())
}

/// Filters over PartitionKey / RowKey only.
fn key_filter() -> impl Strategy<Value = Expr> {
    let leaf = (prop::sample::select(vec!["PartitionKey", "RowKey"]), op(), key())
        .prop_map(|(p, o, k)| Expr::compare(p, o, EdmValue::String(k)));
    leaf.prop_recursive(4, 12, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(Expr::not),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.and(b)),
            (inner.clone(), inner).prop_map(|(a, b)| a.or(b)),
        ]
    })
}

fn filter_fragments() -> impl Strategy<Value = String> {
    let frags = vec![
        "(",
        ")",
        "not ",
        "and ",
        "or ",
        "A ",
        "PartitionKey ",
        "eq ",
        "lt ",
        "'x' ",
        "'",
        "''",
        "1",
        "-",
        "L",
        ".",
        "e",
        "5 ",
        "datetime'",
        "guid'",
        "X'",
        "0A'",
        "true ",
        "null ",
        " ",
        "AND ",
        "é",
    ];
    prop::collection::vec(prop::sample::select(frags), 0..24).prop_map(|v| v.concat())
}

/// A row that answers custom properties only by position in `names`, as a scan's
/// projection does: asked by name, it answers nothing.
struct Positional<'a> {
    entity: &'a Entity,
    names: &'a [String],
}

impl Row for Positional<'_> {
    fn partition_key(&self) -> &str {
        &self.entity.partition_key
    }
    fn row_key(&self) -> &str {
        &self.entity.row_key
    }
    fn timestamp(&self) -> Ticks {
        self.entity.timestamp
    }
    fn property(&self, _: &str) -> Option<EdmRef<'_>> {
        None
    }
    fn property_at(&self, index: usize, name: &str) -> Option<EdmRef<'_>> {
        assert_eq!(self.names[index], name, "asked for the wrong position");
        self.entity.get(name).map(EdmValue::borrowed)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn compiled_evaluates_as_the_tree(
        e in expr(),
        values in prop::collection::vec(prop::option::of(literal()), 8),
        keys in (key(), key()),
        ts in any::<i64>(),
    ) {
        // the filter's own properties, some missing, with values of any type
        let names = e.property_names();
        let properties = names.iter().zip(values).filter_map(|(n, v)| Some((n.clone(), v?))).collect();
        let entity = Entity { partition_key: keys.0, row_key: keys.1, timestamp: Ticks(ts), properties };
        let compiled = Compiled::new(&e);
        prop_assert_eq!(compiled.names(), names.as_slice());
        prop_assert_eq!(compiled.reads_keys(), e.reads_keys());
        let want = eval(&e, &entity);
        prop_assert_eq!(compiled.eval(&entity), want, "{} on {:?}", e, entity);
        let positional = Positional { entity: &entity, names: compiled.names() };
        prop_assert_eq!(compiled.eval(&positional), want, "{} by position on {:?}", e, entity);
    }

    #[test]
    fn display_round_trips(e in expr()) {
        let text = e.to_string();
        let back = parse(&text);
        prop_assert_eq!(back.as_ref(), Ok(&e), "text: {}", text);
    }

    #[test]
    fn plan_never_drops_a_match(
        filter in key_filter(),
        rows in prop::collection::vec((key(), key()), 1..12),
    ) {
        let range = plan(&filter);
        for (pk, rk) in &rows {
            let e = Entity { partition_key: pk.clone(), row_key: rk.clone(), timestamp: Ticks(0), properties: vec![] };
            if eval(&filter, &e) {
                prop_assert!(range.contains(pk, rk), "{} matches ({:?}, {:?}) but plan is {:?}", filter, pk, rk, range);
                prop_assert!(!range.is_empty(), "{} matches ({:?}, {:?}) but plan is empty", filter, pk, rk);
            }
        }
    }

    /// Every match's RowKey lies in one of the planned RowKey intervals, which are sorted
    /// and disjoint, compared as the store orders keys (UTF-16 code units).
    #[test]
    fn planned_row_keys_drop_no_match(
        filter in key_filter(),
        rows in prop::collection::vec((key(), key()), 1..12),
    ) {
        let Some(intervals) = plan_row_keys(&filter) else { return Ok(()) };
        let utf16 = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
        let above = |rk: &str, lower: &Option<(String, bool)>| lower.as_ref().is_none_or(|(l, inclusive)| {
            let o = utf16(rk).cmp(&utf16(l));
            o.is_gt() || (*inclusive && o.is_eq())
        });
        let below = |rk: &str, upper: &Option<(String, bool)>| upper.as_ref().is_none_or(|(u, inclusive)| {
            let o = utf16(rk).cmp(&utf16(u));
            o.is_lt() || (*inclusive && o.is_eq())
        });
        prop_assert!(intervals.len() <= MAX_RANGES);
        for pair in intervals.windows(2) {
            // each ends before the next begins, with a key between them
            let (end, start) = (pair[0].upper.as_ref(), pair[1].lower.as_ref());
            let (Some((u, _)), Some((l, _))) = (end, start) else {
                prop_assert!(false, "{} plans unbounded inner ends: {:?}", filter, intervals);
                continue;
            };
            prop_assert!(utf16(u) <= utf16(l), "{} plans {:?}", filter, intervals);
            prop_assert!(!below(l, &pair[0].upper) && !above(u, &pair[1].lower), "{} plans {:?}", filter, intervals);
        }
        for (pk, rk) in &rows {
            let e = Entity { partition_key: pk.clone(), row_key: rk.clone(), timestamp: Ticks(0), properties: vec![] };
            if eval(&filter, &e) {
                let within = intervals.iter().any(|i| above(rk, &i.lower) && below(rk, &i.upper));
                prop_assert!(within, "{} matches ({:?}, {:?}) outside {:?}", filter, pk, rk, intervals);
            }
        }
    }

    #[test]
    fn plan_ranges_are_sorted_disjoint_and_drop_no_match(
        filter in key_filter(),
        rows in prop::collection::vec((key(), key()), 1..16),
    ) {
        let ranges = plan_ranges(&filter);
        prop_assert!(ranges.len() <= MAX_RANGES);
        prop_assert!(ranges.iter().all(|r| !r.is_empty()), "{}: {:?}", filter, ranges);
        let hull = plan(&filter);
        let utf16 = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
        let mut rows = rows;
        rows.sort_by_key(|(pk, rk)| (utf16(pk), utf16(rk)));
        let mut last_index = 0;
        for (pk, rk) in &rows {
            let e = Entity { partition_key: pk.clone(), row_key: rk.clone(), timestamp: Ticks(0), properties: vec![] };
            let holding: Vec<usize> = (0..ranges.len()).filter(|&i| ranges[i].contains(pk, rk)).collect();
            // Disjoint: a row lies in at most one range.
            prop_assert!(holding.len() <= 1, "{} ({:?}, {:?}) in {:?} of {:?}", filter, pk, rk, holding, ranges);
            if let Some(&i) = holding.first() {
                // Sorted: rows in key order meet the ranges in order.
                prop_assert!(i >= last_index, "{}: ranges out of order {:?}", filter, ranges);
                last_index = i;
                prop_assert!(hull.contains(pk, rk));
                // A resume point at this row skips exactly the ranges before it.
                for (j, r) in ranges.iter().enumerate() {
                    prop_assert_eq!(r.ends_before(pk, rk), j < i, "{} {:?}", filter, r);
                }
            }
            if eval(&filter, &e) {
                prop_assert!(holding.len() == 1, "{} matches ({:?}, {:?}) but ranges are {:?}", filter, pk, rk, ranges);
            }
        }
    }

    /// Thousands of opening parentheses and `not`s, in any mix, with or without their
    /// closing parentheses: a 400 past [`MAX_DEPTH`], never a stack overflow.
    #[test]
    fn deep_nesting_is_refused_not_overflowed(
        opens in prop::collection::vec(prop::bool::ANY, MAX_DEPTH + 1..10_000),
        closed in prop::bool::ANY,
    ) {
        let parens = opens.iter().filter(|&&p| p).count();
        let text = format!(
            "{}A eq 1{}",
            opens.iter().map(|&p| if p { "(" } else { "not " }).collect::<String>(),
            if closed { ")".repeat(parens) } else { String::new() },
        );
        let e = parse(&text).expect_err("too deep");
        prop_assert!(e.message.contains("nested"), "{}", e.message);
    }

    #[test]
    fn parse_never_panics_on_arbitrary_text(s in any::<String>()) {
        let _ = parse(&s);
    }

    #[test]
    fn parse_never_panics_on_filter_like_text(s in filter_fragments()) {
        if let Ok(e) = parse(&s) {
            // Whatever parses also round-trips.
            prop_assert_eq!(parse(&e.to_string()), Ok(e));
        }
    }
}
