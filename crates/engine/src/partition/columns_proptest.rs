//! Columns against a simple model: whatever rows a block's columns are built from
//! (every kind of value, Strings repeated and distinct, Timestamps near and far apart),
//! a filter evaluated on them sees exactly the rows' first value of each name and their
//! Timestamps, or is refused for a name some row holds a value no column keeps.

use super::columns::{Columns, ColumnsBuilder};
use aztable_model::{EdmRef, Row, Ticks};
use aztable_wire::filter::{parse, Compiled};
use proptest::prelude::*;
use std::sync::Arc;

const NAMES: [&str; 3] = ["A", "B", "C"];

/// A property value as a row's head gives it to the builder.
#[derive(Debug, Clone)]
enum Given {
    Int32(i32),
    Int64(i64),
    Double(f64),
    Boolean(bool),
    DateTime(i64),
    String(String),
    Guid([u8; 16]),
    /// A value the head does not hold whole.
    Unknown,
}

impl Given {
    fn as_ref(&self) -> Option<EdmRef<'_>> {
        Some(match self {
            Given::Int32(n) => EdmRef::Int32(*n),
            Given::Int64(n) => EdmRef::Int64(*n),
            Given::Double(d) => EdmRef::Double(*d),
            Given::Boolean(b) => EdmRef::Boolean(*b),
            Given::DateTime(t) => EdmRef::DateTime(Ticks(*t)),
            Given::String(s) => EdmRef::String(s),
            Given::Guid(g) => EdmRef::Guid(g),
            Given::Unknown => return None,
        })
    }

    /// Whether a column keeps it.
    fn kept(&self) -> bool {
        match self {
            Given::String(s) => s.len() <= 64,
            Given::Unknown => false,
            _ => true,
        }
    }
}

fn given() -> impl Strategy<Value = Given> {
    prop_oneof![
        3 => any::<i32>().prop_map(Given::Int32),
        2 => prop_oneof![any::<i64>(), -5i64..5, (u32::MAX as i64 - 2)..(u32::MAX as i64 + 2)].prop_map(Given::Int64),
        1 => any::<u64>().prop_map(|b| Given::Double(f64::from_bits(b))),
        1 => any::<bool>().prop_map(Given::Boolean),
        1 => any::<i64>().prop_map(Given::DateTime),
        // a few values repeated often, many distinct ones, and some too long to keep
        3 => prop_oneof![3 => "[ab]{0,2}", 2 => "[a-z0-9]{0,64}", 1 => "x{60,70}"].prop_map(Given::String),
        1 => any::<[u8; 16]>().prop_map(Given::Guid),
        1 => Just(Given::Unknown),
    ]
}

/// A row: its Timestamp and its properties, a name possibly given twice.
fn row() -> impl Strategy<Value = (i64, Vec<(usize, Given)>)> {
    let stamp = prop_oneof![3 => 1_000_000i64..1_000_100, 1 => any::<i64>()];
    (stamp, prop::collection::vec((0..NAMES.len(), given()), 0..4))
}

/// The columns of `wanted` names of a block of `rows`.
fn built(wanted: &[&str], rows: &[(i64, Vec<(usize, Given)>)]) -> Columns {
    let mut b =
        ColumnsBuilder::new(Arc::from(wanted.iter().map(|n| n.as_bytes().into()).collect::<Vec<_>>()));
    for (stamp, props) in rows {
        b.begin_row();
        for (name, value) in props {
            b.field(NAMES[*name].as_bytes(), value.as_ref().as_ref());
        }
        b.end_row(Ticks(*stamp));
    }
    b.seal(Vec::new(), Vec::new())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn columns_read_back_what_their_rows_held(
        rows in prop::collection::vec(row(), 1..200),
        kept in prop_oneof![1 => Just(0u8), 4 => Just(1u8)],
    ) {
        // the names scans asked for: all three, or none (then only Timestamps)
        let wanted: Vec<&str> = if kept == 1 { NAMES.to_vec() } else { Vec::new() };
        let columns = built(&wanted, &rows);
        prop_assert_eq!(columns.rows(), rows.len());
        for name in NAMES {
            let i = NAMES.iter().position(|n| *n == name).unwrap_or_default();
            // each row's first value of the name
            let firsts: Vec<Option<&Given>> =
                rows.iter().map(|(_, props)| props.iter().find(|(n, _)| *n == i).map(|(_, v)| v)).collect();
            let evaluable = wanted.contains(&name) && firsts.iter().flatten().all(|v| v.kept());
            let mut seen = Vec::new();
            let names = [name.to_owned()];
            let none = columns.none_kept(&names, &mut |r: &dyn Row| {
                seen.push((r.timestamp().0, format!("{:?}", r.property_at(0, name))));
                false
            });
            if !wanted.contains(&name) {
                // a name no scan asked for has no column, and reads as absent (scans use
                // columns only for names they asked for: `Summary::covers`)
                prop_assert!(none);
                prop_assert!(seen.iter().all(|(_, v)| v == "None"));
                continue;
            }
            prop_assert_eq!(none, evaluable, "{}", name);
            if evaluable {
                let expect: Vec<(i64, String)> = rows
                    .iter()
                    .zip(&firsts)
                    .map(|((stamp, _), v)| (*stamp, format!("{:?}", v.and_then(Given::as_ref))))
                    .collect();
                prop_assert_eq!(seen, expect);
            } else {
                prop_assert!(seen.is_empty());
            }
        }
    }
}

/// 2024-01-01T00:00:00Z in ticks: the Timestamps of most rows are a few ticks after.
const JAN_2024: i64 = 638_396_640_000_000_000;

/// One name's values across a block: of one kind (what columns compare in a loop of
/// their own) or of any.
fn values() -> impl Strategy<Value = BoxedStrategy<Given>> {
    prop_oneof![
        2 => Just(given().boxed()),
        1 => Just(any::<i32>().prop_map(Given::Int32).boxed()),
        // small and non-negative (kept 32 bits wide), and any
        1 => Just(prop_oneof![0i64..6, (1i64 << 32) - 3..1 << 32].prop_map(Given::Int64).boxed()),
        1 => Just(prop_oneof![-5i64..5, any::<i64>()].prop_map(Given::Int64).boxed()),
        1 => Just(prop_oneof![any::<i64>(), (0i64..120).prop_map(|t| JAN_2024 + t)].prop_map(Given::DateTime).boxed()),
        1 => Just(any::<bool>().prop_map(Given::Boolean).boxed()),
        1 => Just("[ab]{0,2}".prop_map(Given::String).boxed()),
        1 => Just(near_guid().prop_map(Given::Guid).boxed()),
    ]
}

/// A Guid whose first and last bytes are 0, 1 or 2 and the rest 0: near the literals.
fn near_guid() -> impl Strategy<Value = [u8; 16]> {
    (0u8..3, 0u8..3).prop_map(|(first, last)| {
        let mut g = [0; 16];
        (g[0], g[15]) = (first, last);
        g
    })
}

/// Rows whose names each hold values of their own strategy, in every row or in most;
/// Timestamps a few ticks apart, or some far from the rest.
fn block() -> impl Strategy<Value = Vec<(i64, Vec<(usize, Given)>)>> {
    let name = || {
        (values(), any::<bool>()).prop_map(|(v, everywhere)| match everywhere {
            true => v.prop_map(Some).boxed(),
            false => prop::option::weighted(0.8, v).boxed(),
        })
    };
    (name(), name(), name(), any::<bool>()).prop_flat_map(|(a, b, c, far)| {
        let near = (0i64..120).prop_map(|t| JAN_2024 + t);
        let stamp = match far {
            true => prop_oneof![3 => near, 1 => any::<i64>()].boxed(),
            false => near.boxed(),
        };
        let props = (a, b, c).prop_map(|(a, b, c)| {
            [a, b, c].into_iter().enumerate().filter_map(|(i, v)| v.map(|v| (i, v))).collect::<Vec<_>>()
        });
        prop::collection::vec((stamp, props), 1..150)
    })
}

/// A literal of any type, near the values the rows hold.
fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        (-6i32..6).prop_map(|n| n.to_string()),
        any::<i32>().prop_map(|n| n.to_string()),
        prop_oneof![-6i64..6, (1i64 << 32) - 4..(1 << 32) + 1, any::<i64>()].prop_map(|n| format!("{n}L")),
        prop_oneof![Just("0.0".to_owned()), Just("-1.5".to_owned()), Just("1e300".to_owned())],
        any::<bool>().prop_map(|b| b.to_string()),
        // 2024-01-01T00:00:00Z and up to 130 ticks after, or a second or two
        (0i64..2, 0i64..130).prop_map(|(s, t)| format!("datetime'2024-01-01T00:00:{s:02}.{t:07}Z'")),
        "[ab]{0,2}".prop_map(|s| format!("'{s}'")),
        near_guid().prop_map(|g| format!("guid'{:02x}000000-0000-0000-0000-0000000000{:02x}'", g[0], g[15])),
    ]
}

/// A filter on A, B, C and the Timestamp: comparisons, bare properties and constants
/// joined with `and`, `or` and `not`.
fn filter() -> impl Strategy<Value = String> {
    let op = prop_oneof![Just("eq"), Just("ne"), Just("gt"), Just("ge"), Just("lt"), Just("le")];
    let name = prop_oneof![Just("A"), Just("B"), Just("C"), Just("Timestamp")];
    let leaf = prop_oneof![
        6 => (name.clone(), op, literal()).prop_map(|(n, o, l)| format!("{n} {o} {l}")),
        1 => name.prop_map(str::to_owned),
        1 => any::<bool>().prop_map(|b| b.to_string()),
    ];
    leaf.prop_recursive(4, 12, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|f| format!("not ({f})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) and ({b})")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("({a}) or ({b})")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]
    /// A filter evaluated a column at a time keeps exactly the rows it keeps evaluated
    /// row by row, and is refused exactly where row by row is.
    #[test]
    fn a_column_at_a_time_keeps_the_rows_row_by_row_keeps(rows in block(), text in filter()) {
        let columns = built(&NAMES, &rows);
        let compiled = Compiled::new(&parse(&text).expect("the filter parses"));
        let names = compiled.names().to_vec();
        let mut row_by_row = Vec::new();
        let refused = !columns.none_kept(&names, &mut |r: &dyn Row| {
            row_by_row.push(compiled.eval(r));
            false
        });
        match columns.kept_by(&names, &compiled) {
            None => prop_assert!(refused && row_by_row.is_empty(), "{}", text),
            Some(mask) => {
                prop_assert!(!refused, "{}", text);
                prop_assert_eq!(mask.len(), rows.len().div_ceil(64));
                let bits: Vec<bool> = (0..mask.len() * 64).map(|r| mask[r / 64] >> (r % 64) & 1 == 1).collect();
                prop_assert_eq!(&bits[..rows.len()], &row_by_row[..], "{}", text);
                prop_assert!(bits[rows.len()..].iter().all(|b| !b), "bits past the rows: {}", text);
                prop_assert_eq!(columns.none_kept_by(&names, &compiled), !row_by_row.contains(&true));
            }
        }
    }
}
