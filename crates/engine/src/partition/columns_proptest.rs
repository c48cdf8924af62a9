//! Columns against a simple model: whatever rows a block's columns are built from
//! (every kind of value, Strings repeated and distinct, Timestamps near and far apart),
//! a filter evaluated on them sees exactly the rows' first value of each name and their
//! Timestamps, or is refused for a name some row holds a value no column keeps.

use super::columns::ColumnsBuilder;
use aztable_model::{EdmRef, Row, Ticks};
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
            Given::Guid(_) | Given::Unknown => false,
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn columns_read_back_what_their_rows_held(
        rows in prop::collection::vec(row(), 1..200),
        kept in prop_oneof![1 => Just(0u8), 4 => Just(1u8)],
    ) {
        // the names scans asked for: all three, or none (then only Timestamps)
        let wanted: Vec<&str> = if kept == 1 { NAMES.to_vec() } else { Vec::new() };
        let mut b = ColumnsBuilder::new(Arc::from(wanted.iter().map(|n| n.as_bytes().into()).collect::<Vec<_>>()));
        for (stamp, props) in &rows {
            b.begin_row();
            for (name, value) in props {
                b.field(NAMES[*name].as_bytes(), value.as_ref().as_ref());
            }
            b.end_row(Ticks(*stamp));
        }
        let columns = b.seal(Vec::new(), Vec::new());
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
