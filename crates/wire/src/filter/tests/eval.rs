//! Evaluation truth tables per Edm type, including the Azurite bugs we must not copy.

use super::p;
use crate::filter::{eval, eval_table_name, Compiled};
use aztable_model::edm::parse_guid;
use aztable_model::{EdmValue, Entity, Ticks};

const GUID: &str = "a455c695-df98-5678-aaaa-81d3367e5a34";

fn entity(props: Vec<(&str, EdmValue)>) -> Entity {
    Entity {
        partition_key: "pk".into(),
        row_key: "rk".into(),
        timestamp: Ticks::parse("2020-01-01T00:00:00Z").unwrap(),
        properties: props.into_iter().map(|(n, v)| (n.to_string(), v)).collect(),
    }
}

/// Asserts the truth value of each filter against `e`.
fn table(e: &Entity, cases: &[(&str, bool)]) {
    for (filter, want) in cases {
        assert_eq!(eval(&p(filter), e), *want, "{filter} on {:?}", e.properties);
        assert_eq!(Compiled::new(&p(filter)).eval(e), *want, "compiled {filter} on {:?}", e.properties);
    }
}

#[test]
fn int64_is_numeric_not_string() {
    // Azurite#2385: `lt 13L` matched 120-129 because 12L was compared as a string.
    for (v, want) in [(12, true), (120, false), (129, false), (13, false), (1, false), (-5, false)] {
        let e = entity(vec![("PlayIndex", EdmValue::Int64(v))]);
        assert_eq!(eval(&p("PlayIndex ge 12L and PlayIndex lt 13L"), &e), want, "{v}");
    }
    let e = entity(vec![("N", EdmValue::Int64(1 << 40))]);
    table(&e, &[("N eq 1099511627776L", true), ("N gt 9L", true), ("N lt -1L", false), ("N ne 0L", true)]);
}

#[test]
fn no_numeric_promotion_across_types() {
    let i32e = entity(vec![("N", EdmValue::Int32(5))]);
    table(
        &i32e,
        &[("N eq 5", true), ("N ge 5", true), ("N lt 6", true), ("N eq 5L", false), ("N eq 5.0", false)],
    );
    table(&i32e, &[("N ne 5L", true), ("N gt 1.0", false), ("N eq '5'", false)]);
    let i64e = entity(vec![("N", EdmValue::Int64(5))]);
    table(&i64e, &[("N eq 5L", true), ("N eq 5", false), ("N lt 13", false), ("N eq 5.0", false)]);
    // azure-storage-net#122: `Score gt 5` finds nothing for a Double; `5.0` does.
    let de = entity(vec![("Score", EdmValue::Double(7.5))]);
    table(
        &de,
        &[("Score gt 5", false), ("Score gt 5.0", true), ("Score le 7.5", true), ("Score eq 7.5", true)],
    );
}

#[test]
fn doubles_and_nan() {
    let e = entity(vec![("D", EdmValue::Double(f64::NAN))]);
    table(
        &e,
        &[
            ("D eq 1.0", false),
            ("D gt 1.0", false),
            ("D lt 1.0", false),
            ("D le 1.0", false),
            ("D ne 1.0", true),
        ],
    );
    let e = entity(vec![("D", EdmValue::Double(-0.0))]);
    table(&e, &[("D eq 0.0", true), ("D ge 0.0", true), ("D gt -1e-300", true)]);
}

#[test]
fn strings_are_ordinal_utf16_and_case_sensitive() {
    let e = entity(vec![("S", EdmValue::String("Moe".into()))]);
    table(
        &e,
        &[
            ("S eq 'Moe'", true),
            ("S eq 'moe'", false),
            ("S lt 'moe'", true),
            ("S ge 'M' and S lt 'N'", true),
            ("S gt 'Moe'", false),
            ("S gt 'Mo'", true),
            ("S eq 5", false),
            ("S ne 5", true),
        ],
    );
    // U+10000 sorts below U+E000 in UTF-16 (surrogates), above it in UTF-8.
    let e = entity(vec![("S", EdmValue::String("\u{10000}".into()))]);
    table(&e, &[("S lt '\u{E000}'", true), ("S gt '\u{E000}'", false)]);
    let e = entity(vec![("S", EdmValue::String("o'clock".into()))]);
    table(&e, &[("S eq 'o''clock'", true)]);
}

#[test]
fn empty_string_comparisons() {
    // Azurite#2342: `gt ''` / `ne ''` must skip entities lacking the property.
    let empty = entity(vec![("Foo", EdmValue::String(String::new()))]);
    table(&empty, &[("Foo eq ''", true), ("Foo gt ''", false), ("Foo ge ''", true), ("Foo lt ''", false)]);
    let some = entity(vec![("Foo", EdmValue::String("x".into()))]);
    table(&some, &[("Foo gt ''", true), ("Foo ne ''", true), ("Foo lt ''", false)]);
    let missing = entity(vec![]);
    table(
        &missing,
        &[("Foo gt ''", false), ("Foo ne ''", false), ("Foo eq ''", false), ("Foo lt ''", false)],
    );
    let double = entity(vec![("Foo", EdmValue::Double(1.0))]);
    table(&double, &[("Foo gt ''", false), ("Foo lt ''", false), ("Foo eq ''", false), ("Foo ne ''", true)]);
}

#[test]
fn missing_property_and_not() {
    let e = entity(vec![]);
    table(
        &e,
        &[
            ("Missing eq 1", false),
            ("Missing ne 1", false),
            ("Missing lt 1", false),
            ("not (Missing eq 1)", true),
            ("not (Missing ne 1)", true),
            ("Missing", false),
            ("not Missing", true),
        ],
    );
}

#[test]
fn guids() {
    let g = parse_guid(GUID).unwrap();
    let e = entity(vec![("G", EdmValue::Guid(g)), ("S", EdmValue::String(GUID.into()))]);
    table(
        &e,
        &[
            (&format!("G eq guid'{GUID}'"), true),
            (&format!("G eq guid'{}'", GUID.to_uppercase()), true),
            (&format!("G ne guid'{GUID}'"), false),
            // Azure#1504: a quoted GUID is a string; it matches neither way round.
            (&format!("G eq '{GUID}'"), false),
            (&format!("S eq guid'{GUID}'"), false),
            (&format!("S eq '{GUID}'"), true),
            ("G gt guid'a455c695-df98-5678-aaaa-81d3367e5a33'", true),
            ("G lt guid'b0000000-0000-0000-0000-000000000000'", true),
            ("G ge guid'a455c695-df98-5678-aaaa-81d3367e5a35'", false),
        ],
    );
}

#[test]
fn datetimes_and_timestamp() {
    let t = Ticks::parse("2008-07-10T00:00:00Z").unwrap();
    let e = entity(vec![("When", EdmValue::DateTime(t))]);
    table(
        &e,
        &[
            ("When eq datetime'2008-07-10T00:00:00Z'", true),
            ("When eq datetime'2008-07-10T02:00:00+02:00'", true),
            ("When lt datetime'2008-07-10T00:00:00.0000001Z'", true),
            ("When gt datetime'2008-07-09T23:59:59.9999999Z'", true),
            ("When eq '2008-07-10T00:00:00Z'", false),
            ("Timestamp eq datetime'2020-01-01T00:00:00Z'", true),
            ("Timestamp ge datetime'2021-01-01T00:00:00Z'", false),
            ("Timestamp eq '2020-01-01T00:00:00Z'", false),
        ],
    );
}

#[test]
fn binaries() {
    let e = entity(vec![("Bin", EdmValue::Binary(vec![0x0a, 0x0b]))]);
    table(
        &e,
        &[
            ("Bin eq X'0A0B'", true),
            ("Bin eq binary'0a0b'", true),
            ("Bin gt X'0A'", true),
            ("Bin lt X'0A0C'", true),
            ("Bin lt X'FF'", true),
            ("Bin eq X''", false),
            ("Bin eq '0A0B'", false),
        ],
    );
}

#[test]
fn booleans() {
    let t = entity(vec![("IsActive", EdmValue::Boolean(true))]);
    table(
        &t,
        &[
            ("IsActive", true),
            ("not IsActive", false),
            ("IsActive eq true", true),
            ("IsActive ne false", true),
            ("IsActive gt false", true),
            ("IsActive lt true", false),
            ("IsActive eq 'true'", false),
            ("IsActive eq 1", false),
        ],
    );
    let f = entity(vec![("IsActive", EdmValue::Boolean(false)), ("S", EdmValue::String("true".into()))]);
    table(&f, &[("IsActive", false), ("not IsActive", true), ("S", false), ("true", true), ("false", false)]);
}

#[test]
fn system_properties() {
    let e = entity(vec![("PartitionKey", EdmValue::String("shadow".into()))]);
    table(
        &e,
        &[
            ("PartitionKey eq 'pk'", true),
            ("'pk' eq PartitionKey", true),
            ("RowKey eq 'rk' and PartitionKey eq 'pk'", true),
            ("'rk' lt RowKey", false),
            ("'rk' le RowKey", true),
            ("partitionkey eq 'pk'", false),
            ("PartitionKey eq 1", false),
        ],
    );
}

#[test]
fn logic() {
    let e = entity(vec![("A", EdmValue::Int32(1)), ("B", EdmValue::Int32(2))]);
    table(
        &e,
        &[
            ("A eq 1 and B eq 2", true),
            ("A eq 1 and B eq 3", false),
            ("A eq 0 or B eq 2", true),
            ("A eq 0 or B eq 2 and A eq 0", false),
            ("(A eq 0 or B eq 2) and A eq 1", true),
            ("not (A eq 1 and B eq 3)", true),
            ("not A eq 1", false),
        ],
    );
}

#[test]
fn table_names() {
    let f = p("TableName ge 'A' and TableName lt 'B'");
    assert!(eval_table_name(&f, "Apples"));
    assert!(!eval_table_name(&f, "apples"));
    assert!(!eval_table_name(&f, "Bananas"));
    assert!(eval_table_name(&p("TableName eq 'Tab'"), "Tab"));
    assert!(!eval_table_name(&p("Name eq 'Tab'"), "Tab"));
    assert!(!eval_table_name(&p("PartitionKey eq 'Tab'"), "Tab"));
    assert!(eval_table_name(&p("not (Other eq 1)"), "Tab"));
}
