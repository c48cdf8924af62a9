//! Parser cases: every literal type, precedence, parentheses, constants on the left and
//! errors with positions.

use super::p;
use crate::filter::{parse, CmpOp, Expr, MAX_COMPARISONS, MAX_DEPTH};
use aztable_model::edm::parse_guid;
use aztable_model::{EdmValue, Ticks};

fn cmp(prop: &str, op: CmpOp, v: EdmValue) -> Expr {
    Expr::compare(prop, op, v)
}

fn prop(name: &str) -> Expr {
    Expr::Property(name.into())
}

/// The error position and message for a filter that must fail.
fn fails(s: &str) -> (usize, String) {
    match parse(s) {
        Ok(e) => panic!("{s:?} parsed as {e:?}"),
        Err(e) => (e.position, e.message),
    }
}

#[test]
fn every_literal_type() {
    let cases = [
        ("S eq 'o''clock'", EdmValue::String("o'clock".into())),
        ("S eq ''", EdmValue::String(String::new())),
        ("I eq 30", EdmValue::Int32(30)),
        ("I eq -5", EdmValue::Int32(-5)),
        ("L eq 12L", EdmValue::Int64(12)),
        ("L eq 1574726400000L", EdmValue::Int64(1_574_726_400_000)),
        ("D eq 100.25", EdmValue::Double(100.25)),
        ("D eq 1.0", EdmValue::Double(1.0)),
        ("D eq 1e10", EdmValue::Double(1e10)),
        ("D eq 1e+20", EdmValue::Double(1e20)),
        ("D eq -2.5", EdmValue::Double(-2.5)),
        ("B eq true", EdmValue::Boolean(true)),
        ("B eq false", EdmValue::Boolean(false)),
        (
            "T eq datetime'2008-07-10T00:00:00Z'",
            EdmValue::DateTime(Ticks::parse("2008-07-10T00:00:00Z").unwrap()),
        ),
        (
            "G eq guid'a455c695-df98-5678-aaaa-81d3367e5a34'",
            EdmValue::Guid(parse_guid("a455c695-df98-5678-aaaa-81d3367e5a34").unwrap()),
        ),
        ("X eq X'0A0B'", EdmValue::Binary(vec![0x0a, 0x0b])),
        ("X eq binary'0a0b'", EdmValue::Binary(vec![0x0a, 0x0b])),
    ];
    for (text, value) in cases {
        let name = text.split(' ').next().unwrap();
        assert_eq!(p(text), cmp(name, CmpOp::Eq, value), "{text}");
    }
}

#[test]
fn every_operator() {
    for op in CmpOp::ALL {
        assert_eq!(p(&format!("Age {op} 30")), cmp("Age", op, EdmValue::Int32(30)));
    }
}

#[test]
fn precedence_not_and_or() {
    let (a, b, c) = (|| prop("A"), || prop("B"), || prop("C"));
    assert_eq!(p("A or B and C"), a().or(b().and(c())));
    assert_eq!(p("A and B or C"), a().and(b()).or(c()));
    assert_eq!(p("not A and B"), a().not().and(b()));
    assert_eq!(p("not A or not B"), a().not().or(b().not()));
    assert_eq!(p("A and B and C"), a().and(b()).and(c()));
    assert_eq!(p("A or B or C"), a().or(b()).or(c()));
    assert_eq!(p("not not A"), a().not().not());
    // `not` applies to the whole comparison.
    assert_eq!(p("not X eq 1"), cmp("X", CmpOp::Eq, EdmValue::Int32(1)).not());
}

#[test]
fn parentheses_shape_the_tree() {
    let (a, b, c) = (|| prop("A"), || prop("B"), || prop("C"));
    assert_eq!(p("(A or B) and C"), a().or(b()).and(c()));
    assert_eq!(p("A and (B or C)"), a().and(b().or(c())));
    assert_eq!(p("not (A or B)"), a().or(b()).not());
    assert_eq!(p("((((A))))"), a());
    assert_eq!(p("(A)and(B)"), a().and(b()));
    assert_eq!(
        p("((PartitionKey eq 'p') and (RowKey ge 'r')) and (IsGCed eq false)"),
        cmp("PartitionKey", CmpOp::Eq, EdmValue::String("p".into()))
            .and(cmp("RowKey", CmpOp::Ge, EdmValue::String("r".into())))
            .and(cmp("IsGCed", CmpOp::Eq, EdmValue::Boolean(false)))
    );
}

#[test]
fn whitespace_is_flexible() {
    assert_eq!(p("  A   eq\t1 "), cmp("A", CmpOp::Eq, EdmValue::Int32(1)));
}

#[test]
fn constant_on_the_left_flips_the_operator() {
    let s = |v: &str| EdmValue::String(v.into());
    assert_eq!(p("'x' eq PartitionKey"), cmp("PartitionKey", CmpOp::Eq, s("x")));
    assert_eq!(p("'x' lt RowKey"), cmp("RowKey", CmpOp::Gt, s("x")));
    assert_eq!(p("'x' le RowKey"), cmp("RowKey", CmpOp::Ge, s("x")));
    assert_eq!(p("5 gt Age"), cmp("Age", CmpOp::Lt, EdmValue::Int32(5)));
    assert_eq!(p("5 ge Age"), cmp("Age", CmpOp::Le, EdmValue::Int32(5)));
    assert_eq!(p("5 ne Age"), cmp("Age", CmpOp::Ne, EdmValue::Int32(5)));
}

#[test]
fn bare_properties_and_boolean_literals() {
    assert_eq!(p("IsActive"), prop("IsActive"));
    assert_eq!(p("not IsActive"), prop("IsActive").not());
    assert_eq!(p("true"), Expr::Bool(true));
    assert_eq!(p("false or A"), Expr::Bool(false).or(prop("A")));
    // Typed-literal prefixes and `TRUE` are ordinary names when no quote follows.
    assert_eq!(p("X eq 1"), cmp("X", CmpOp::Eq, EdmValue::Int32(1)));
    assert_eq!(p("guid"), prop("guid"));
    assert_eq!(p("TRUE"), prop("TRUE"));
}

#[test]
fn errors_have_positions() {
    let cases: &[(&str, usize, &str)] = &[
        ("", 0, "empty"),
        ("   ", 0, "empty"),
        ("A eq 1 AND B eq 2", 7, "lowercase"),
        ("A Eq 1", 2, "lowercase"),
        ("NOT A", 0, "lowercase"),
        ("A eq 1 Or B", 7, "lowercase"),
        ("A eq True", 5, "lowercase"),
        ("Name eq 'abc", 8, "Unterminated"),
        ("A eq B", 5, "two properties"),
        ("1 eq 1", 5, "property"),
        ("'a' eq 'a'", 7, "property"),
        ("A eq null", 5, "null"),
        ("A eq 1 B", 7, "Expected"),
        ("A eq 1)", 6, "Unbalanced"),
        ("(A eq 1", 7, "')'"),
        ("A eq", 4, "Expected"),
        ("A eq 1 and", 10, "Expected"),
        ("eq 1", 0, "Expected"),
        ("A eq 1 eq 2", 7, "Expected"),
        ("'abc'", 0, "not a condition"),
        ("5", 0, "not a condition"),
        ("(A) eq 1", 4, "parenthesised"),
        ("A eq (B eq 1)", 5, "parenthesised"),
        ("A eq (1)", 6, "not a condition"),
        ("A eq 2147483648", 5, "Edm.Int32"),
        ("A eq 5l", 5, "numeric"),
        ("A eq datetime'yesterday'", 5, "Edm.DateTime"),
        ("A eq Guid'a455c695-df98-5678-aaaa-81d3367e5a34'", 5, "literal type"),
        ("A eq x'0A'", 5, "literal type"),
        ("Name'x' eq 1", 4, "Expected"),
        ("A eq 1 && B eq 2", 7, "Unexpected character"),
        ("A eq 1 and B eq 2 or", 20, "Expected"),
    ];
    for (text, pos, needle) in cases {
        let (got_pos, msg) = fails(text);
        assert_eq!(got_pos, *pos, "{text:?}: {msg}");
        assert!(msg.contains(needle), "{text:?}: {msg:?} lacks {needle:?}");
    }
}

/// Far more than the documented 15 comparisons parse (Orleans sends ~200 to the real
/// service); past [`MAX_COMPARISONS`] the filter is refused where the excess starts.
#[test]
fn long_filters_up_to_the_limit() {
    let orleans = (0..200).map(|i| format!("RowKey eq 'grain{i}'")).collect::<Vec<_>>().join(" or ");
    p(&format!("PartitionKey eq 'c' and ({orleans})"));
    let at_limit = vec!["A eq 1"; MAX_COMPARISONS].join(" and ");
    p(&at_limit);
    let over = vec!["A eq 1"; MAX_COMPARISONS + 1].join(" or ");
    let (pos, msg) = fails(&over);
    assert_eq!(pos, MAX_COMPARISONS * "A eq 1 or ".len());
    assert!(msg.contains(&MAX_COMPARISONS.to_string()), "{msg}");
    // Bare properties and boolean literals count too, so trees stay bounded.
    let (_, msg) = fails(&vec!["true"; MAX_COMPARISONS + 1].join(" and "));
    assert!(msg.contains(&MAX_COMPARISONS.to_string()), "{msg}");
}

/// The largest trees the parser builds (the longest chains, at the deepest nesting)
/// go through every recursive pass (evaluate, plan, compile and evaluate compiled, the
/// requirement of value summaries, print, compare, clone, drop) on a
/// thread with a quarter of a worker thread's 2 MiB stack, in an unoptimised build and
/// in an optimised one (scripts/test.sh runs the filter's tests in both).
#[test]
fn the_largest_trees_fit_a_small_stack() {
    let chain = |op: &str| vec!["PartitionKey eq 'p' and RowKey ne 'r'"; MAX_COMPARISONS / 2].join(op);
    let nested = |body: String| {
        let d = MAX_DEPTH - 1;
        format!("{}({body}){}", "not (".repeat(d / 2), ")".repeat(d / 2))
    };
    let texts = [
        chain(" or "),
        chain(" and "),
        nested(chain(" or ")),
        vec!["not A"; MAX_COMPARISONS].join(" or "),
        nested(vec!["(A or B)"; MAX_COMPARISONS / 2].join(" and ")),
    ];
    for text in texts {
        let run = move || {
            let e = parse(&text).expect("parses");
            let row = aztable_model::Entity {
                partition_key: "p".into(),
                row_key: "q".into(),
                timestamp: aztable_model::Ticks(0),
                properties: vec![("A".into(), EdmValue::Boolean(false))],
            };
            let _ = crate::filter::eval(&e, &row);
            let _ = crate::filter::plan::plan_ranges(&e);
            let compiled = crate::filter::Compiled::new(&e);
            let _ = (compiled.eval(&row), compiled.requirement().map(|r| format!("{r:?}")));
            let printed = e.to_string();
            assert_eq!(parse(&printed).as_ref(), Ok(&e));
            let copy = e.clone();
            assert_eq!(copy, e);
            let _ = (e.property_names(), e.reads_keys(), format!("{e:?}"));
        };
        let done = std::thread::Builder::new().stack_size(512 * 1024).spawn(run).expect("thread");
        assert!(done.join().is_ok());
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let depth = 10_000;
    let text = format!("{}A eq 1{}", "(".repeat(depth), ")".repeat(depth));
    let (pos, msg) = fails(&text);
    assert_eq!(pos, MAX_DEPTH);
    assert!(msg.contains("nested"), "{msg}");
    let (_, msg) = fails(&"not ".repeat(depth));
    assert!(msg.contains("nested"), "{msg}");
    let (_, msg) = fails(&"(".repeat(depth));
    assert!(msg.contains("nested"), "{msg}");
    // Just inside the limit works.
    let text = format!("{}A eq 1{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
    assert!(parse(&text).is_ok());
}

#[test]
fn sdk_generated_filters_parse() {
    // Azure.Data.Tables CreateQueryFilter (Azurite#2396).
    p("((((PartitionKey eq 'tables_querytests_1') and (RowKey ge 'rowkey_0')) and (RowKey le 'rowkey_1')) \
       and (IsGCed eq false)) and (LongPrimitive gt 60L)");
    // Azurite#2385.
    p("PartitionKey ne 'Current' and PlayIndex ge 12L and PlayIndex lt 13L");
    // Python azure-data-tables parameter substitution.
    p("Birthday gt datetime'2020-01-01T00:00:00.000000Z' and Ratio le 1e+20 and Id eq guid'00000000-0000-0000-0000-000000000000'");
    // JS Date.toISOString().
    p("Timestamp ge datetime'2024-05-08T10:00:00.000Z'");
}

#[test]
fn display_round_trips_examples() {
    for text in [
        "A eq 1 and (B or not C)",
        "not (PartitionKey eq 'a''b' or RowKey lt '')",
        "X eq X'00ff' and G ne guid'a455c695-df98-5678-aaaa-81d3367e5a34'",
        "T le datetime'2008-07-10T00:00:00.1234567Z' or D gt -1.5e-7",
        "true",
    ] {
        let e = p(text);
        assert_eq!(p(&e.to_string()), e, "{text} -> {e}");
    }
    assert_eq!(p("(A eq 1) and ((B eq 2))").to_string(), "A eq 1 and B eq 2");
    assert_eq!(p("'a' lt PartitionKey").to_string(), "PartitionKey gt 'a'");
}

#[test]
fn deeply_negated_filters_print_back_within_the_depth_limit() {
    for n in [1, 32, 33, 63] {
        let text = format!("{}A eq 1", "not ".repeat(n));
        let expr = parse(&text).unwrap_or_else(|e| panic!("{n}: {e}"));
        let printed = expr.to_string();
        assert_eq!(parse(&printed), Ok(expr), "{n} nots: {printed}");
    }
}
