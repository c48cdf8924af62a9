//! Property test of Query Entities: for random entities and random `$filter`s, paging
//! through [`Entities::query_entities`] with small random page sizes, following
//! every continuation, returns exactly what a brute-force scan with a naive reference
//! evaluator ([`model_eval`], written apart from `filter::eval`) returns, in
//! (PartitionKey, RowKey) UTF-16 order,
//! each entity once. Also with a tiny per-page examination budget, so pages cut by the
//! budget (often empty, with a continuation) are exercised, and under a random key range
//! (a table SAS's key range, the caller's rows), which must hide every row outside it; plus a few fixed cases
//! of scans over a union of key ranges. Most cases run on the in-memory store; a share
//! runs on RocksDB, whose iterators and key encoding the production path uses.

use super::*;
use aztable_model::{Condition, EdmValue, Entity, NewEntity, Ticks};
use aztable_model::{KeyBound, KeyRange};
use aztable_store::mem::MemStore;
use aztable_wire::filter::{self, CmpOp, Expr};
use proptest::prelude::*;
use std::collections::BTreeMap;

const ACCT: &str = "acct";
const TABLE: &str = "tbl";

fn svc() -> TableService {
    let s = TableService::new(Arc::new(MemStore::new()));
    s.tables().create_table(ACCT, TABLE).expect("create table");
    s
}

/// The reference evaluator: the documented `$filter` semantics (see `filter::eval`'s
/// header) written as plainly as possible, over owned values: a property is found by
/// a linear search, strings compare as vectors of UTF-16 code units, GUIDs as their
/// hyphenated text, and any type mismatch (or NaN) is "unordered", which only `ne`
/// accepts. A missing property makes every comparison false.
fn model_eval(expr: &Expr, e: &Entity) -> bool {
    use std::cmp::Ordering::*;
    match expr {
        Expr::Compare { property, op, value } => {
            let found = match property.as_str() {
                "PartitionKey" => Some(EdmValue::String(e.partition_key.clone())),
                "RowKey" => Some(EdmValue::String(e.row_key.clone())),
                "Timestamp" => Some(EdmValue::DateTime(e.timestamp)),
                name => e.properties.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()),
            };
            let Some(v) = found else { return false };
            match (op, model_cmp(&v, value)) {
                (CmpOp::Ne, None) => true,
                (_, None) => false,
                (CmpOp::Eq, Some(o)) => o == Equal,
                (CmpOp::Ne, Some(o)) => o != Equal,
                (CmpOp::Gt, Some(o)) => o == Greater,
                (CmpOp::Ge, Some(o)) => o != Less,
                (CmpOp::Lt, Some(o)) => o == Less,
                (CmpOp::Le, Some(o)) => o != Greater,
            }
        }
        Expr::Property(name) => e.properties.iter().any(|(n, v)| n == name && *v == EdmValue::Boolean(true)),
        Expr::Bool(b) => *b,
        Expr::Not(inner) => !model_eval(inner, e),
        Expr::And(a, b) => model_eval(a, e) && model_eval(b, e),
        Expr::Or(a, b) => model_eval(a, e) || model_eval(b, e),
    }
}

/// How a stored value orders against a literal of the same type; `None` across types.
fn model_cmp(a: &EdmValue, b: &EdmValue) -> Option<std::cmp::Ordering> {
    let utf16 = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
    match (a, b) {
        (EdmValue::String(x), EdmValue::String(y)) => Some(utf16(x).cmp(&utf16(y))),
        (EdmValue::Int32(x), EdmValue::Int32(y)) => Some(x.cmp(y)),
        (EdmValue::Int64(x), EdmValue::Int64(y)) => Some(x.cmp(y)),
        (EdmValue::Double(x), EdmValue::Double(y)) => x.partial_cmp(y),
        (EdmValue::Boolean(x), EdmValue::Boolean(y)) => Some(x.cmp(y)),
        (EdmValue::DateTime(x), EdmValue::DateTime(y)) => Some(x.0.cmp(&y.0)),
        (EdmValue::Guid(x), EdmValue::Guid(y)) => {
            Some(aztable_model::edm::format_guid(x).cmp(&aztable_model::edm::format_guid(y)))
        }
        (EdmValue::Binary(x), EdmValue::Binary(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// Keys from a tiny alphabet, empty string included, so that they collide and sort
/// differently in UTF-8 and UTF-16 (U+E000 vs U+10000).
fn key() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(vec!['a', 'b', '\u{E000}', '\u{10000}']), 0..3)
        .prop_map(|cs| cs.into_iter().collect())
}

/// Values from small domains of every Edm type, so that equalities happen.
fn value() -> impl Strategy<Value = EdmValue> {
    prop_oneof![
        (-2i32..3).prop_map(EdmValue::Int32),
        (-2i64..3).prop_map(EdmValue::Int64),
        prop::sample::select(vec![-1.5, 0.0, 1.0, 2.5]).prop_map(EdmValue::Double),
        key().prop_map(EdmValue::String),
        any::<bool>().prop_map(EdmValue::Boolean),
        (0i64..3).prop_map(|t| EdmValue::DateTime(Ticks(t * 10_000_000))),
        prop::sample::select(vec![0u8, 1]).prop_map(|b| EdmValue::Guid([b; 16])),
        prop::collection::vec(0u8..2, 0..2).prop_map(EdmValue::Binary),
        // long enough to be stored in the entity's heap, not its head
        key().prop_map(|k| EdmValue::String(format!("{k}{}", "~".repeat(70)))),
        (0u8..2).prop_map(|b| EdmValue::Binary(vec![b; 80])),
    ]
}

const PROPS: [&str; 3] = ["A", "B", "C"];

fn entity() -> impl Strategy<Value = NewEntity> {
    (key(), key(), prop::collection::btree_map(prop::sample::select(PROPS.to_vec()), value(), 0..3)).prop_map(
        |(pk, rk, props)| NewEntity {
            partition_key: pk,
            row_key: rk,
            properties: props.into_iter().map(|(n, v)| (n.to_owned(), v)).collect(),
        },
    )
}

fn op() -> impl Strategy<Value = CmpOp> {
    prop::sample::select(CmpOp::ALL.to_vec())
}

/// Random filters over the keys (mostly with string literals, sometimes not) and the
/// custom properties (one of them never set), with `and`, `or` and `not`.
fn filter_expr() -> impl Strategy<Value = Expr> {
    let key_name = prop::sample::select(vec!["PartitionKey", "RowKey"]);
    let prop_name = prop::sample::select(vec!["A", "B", "C", "Missing"]);
    let leaf = prop_oneof![
        6 => (key_name.clone(), op(), key()).prop_map(|(p, o, k)| Expr::compare(p, o, EdmValue::String(k))),
        1 => (key_name, op(), value()).prop_map(|(p, o, v)| Expr::compare(p, o, v)),
        3 => (prop_name.clone(), op(), value()).prop_map(|(p, o, v)| Expr::compare(p, o, v)),
        1 => prop_name.prop_map(|p| Expr::Property(p.to_owned())),
        1 => any::<bool>().prop_map(Expr::Bool),
    ];
    leaf.prop_recursive(4, 12, 2, |inner| {
        prop_oneof![
            1 => inner.clone().prop_map(Expr::not),
            2 => (inner.clone(), inner.clone()).prop_map(|(a, b)| a.and(b)),
            2 => (inner.clone(), inner).prop_map(|(a, b)| a.or(b)),
        ]
    })
}

/// Key ranges as a table SAS makes them (any mix of `spk`/`srk`/`epk`/`erk`), plus
/// exclusive and whole-partition bounds.
fn key_range() -> impl Strategy<Value = KeyRange> {
    let bound = || {
        (key(), prop::option::of(key()), any::<bool>()).prop_map(|(pk, rk, inclusive)| KeyBound {
            pk,
            rk,
            inclusive,
        })
    };
    (prop::option::of(bound()), prop::option::of(bound()))
        .prop_map(|(lower, upper)| KeyRange { lower, upper })
}

fn utf16_key(e: &Entity) -> (Vec<u16>, Vec<u16>) {
    (e.partition_key.encode_utf16().collect(), e.row_key.encode_utf16().collect())
}

/// Inserts the entities (a later one with the same keys replaces an earlier one) and
/// returns what the table holds, in UTF-16 key order.
fn load(s: &TableService, entities: Vec<NewEntity>) -> Vec<Entity> {
    let mut all = BTreeMap::new();
    for new in entities {
        let e = s.entities().update_entity(ACCT, TABLE, new, &Condition::Upsert).wait().expect("upsert");
        all.insert(utf16_key(&e), e);
    }
    all.into_values().collect()
}

/// Whether the entity lies in the key range, by a model of it: tuples of UTF-16 vectors;
/// a bound without a RowKey stands for its whole partition (KeyBound's documentation).
fn in_range(w: &KeyRange, e: &Entity) -> bool {
    let utf16 = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
    let me = (utf16(&e.partition_key), utf16(&e.row_key));
    let lower_ok = w.lower.as_ref().is_none_or(|b| match (&b.rk, b.inclusive) {
        (Some(rk), true) => me >= (utf16(&b.pk), utf16(rk)),
        (Some(rk), false) => me > (utf16(&b.pk), utf16(rk)),
        (None, true) => me.0 >= utf16(&b.pk),
        (None, false) => me.0 > utf16(&b.pk),
    });
    let upper_ok = w.upper.as_ref().is_none_or(|b| match (&b.rk, b.inclusive) {
        (Some(rk), true) => me <= (utf16(&b.pk), utf16(rk)),
        (Some(rk), false) => me < (utf16(&b.pk), utf16(rk)),
        (None, true) => me.0 <= utf16(&b.pk),
        (None, false) => me.0 < utf16(&b.pk),
    });
    lower_ok && upper_ok
}

/// Pages through a query with the page sizes `tops` (cycled) and the budget, checking
/// each page's shape, and that a page has a continuation only while `remains` says
/// that something the query may still return lies at or after it (no last request for
/// an empty page); returns the concatenated pages and the number of pages.
fn page_through(
    s: &TableService,
    filter: Option<&Expr>,
    within: Option<&KeyRange>,
    tops: &[usize],
    budget: usize,
    remains: &dyn Fn(&(String, String)) -> bool,
) -> Result<(Vec<Entity>, usize), TestCaseError> {
    let mut out: Vec<Entity> = Vec::new();
    let mut start: Option<(String, String)> = None;
    for pages in 1..=10_000 {
        let top = tops[pages % tops.len()];
        let q = QueryEntities { start: start.clone(), top, filter: filter.cloned() };
        let page = s
            .entities()
            .query_entities_within(Caller { account: ACCT, rows: within }, TABLE, &q, budget)
            .map_err(|e| TestCaseError::fail(format!("query failed: {e:?}")))?;
        prop_assert!(page.entities.len() <= top, "page of {} for top {}", page.entities.len(), top);
        if page.next.is_some() && page.entities.is_empty() {
            prop_assert!(budget < 10_000, "an empty page with a continuation but no budget cut");
        }
        out.extend(page.entities);
        let Some(next) = page.next else { return Ok((out, pages)) };
        prop_assert!(remains(&next), "a continuation {next:?} past every row in range");
        // Progress: the continuation moves strictly forward.
        let u = |(p, r): &(String, String)| {
            (p.encode_utf16().collect::<Vec<u16>>(), r.encode_utf16().collect::<Vec<u16>>())
        };
        if let Some(prev) = &start {
            prop_assert!(u(&next) > u(prev), "continuation {next:?} does not move past {prev:?}");
        }
        start = Some(next);
    }
    Err(TestCaseError::fail("more than 10,000 pages"))
}

fn check_query(
    entities: Vec<NewEntity>,
    filter: Expr,
    within: Option<KeyRange>,
    tops: Vec<usize>,
    budget: usize,
) -> Result<(), TestCaseError> {
    check_query_on(&svc(), entities, filter, within, tops, budget)
}

fn check_query_on(
    s: &TableService,
    entities: Vec<NewEntity>,
    filter: Expr,
    within: Option<KeyRange>,
    tops: Vec<usize>,
    budget: usize,
) -> Result<(), TestCaseError> {
    let all = load(s, entities);
    let visible = |e: &Entity| within.as_ref().is_none_or(|w| in_range(w, e));
    let expected: Vec<&Entity> = all.iter().filter(|e| visible(e) && model_eval(&filter, e)).collect();
    // What a continuation may point before: a visible row at or after it in one of the
    // key ranges the filter plans (the planner's ranges hold every match; rows past
    // all of them are never worth another request).
    let planned = filter::plan::plan_ranges(&filter);
    let remains = |from: &(String, String)| {
        let from = (from.0.encode_utf16().collect::<Vec<u16>>(), from.1.encode_utf16().collect::<Vec<u16>>());
        all.iter().any(|e| utf16_key(e) >= from && visible(e) && planned.iter().any(|r| in_range(r, e)))
    };
    let (got, _) = page_through(s, Some(&filter), within.as_ref(), &tops, budget, &remains)?;
    let keys =
        |v: &[&Entity]| v.iter().map(|e| (e.partition_key.clone(), e.row_key.clone())).collect::<Vec<_>>();
    let got_refs: Vec<&Entity> = got.iter().collect();
    prop_assert_eq!(keys(&got_refs), keys(&expected), "filter: {}", filter);
    prop_assert!(got_refs == expected, "filter {}: same keys, different entities", filter);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn paged_query_equals_brute_force(
        entities in prop::collection::vec(entity(), 0..40),
        filter in filter_expr(),
        tops in prop::collection::vec(1usize..7, 1..5),
    ) {
        check_query(entities, filter, None, tops, MAX_EXAMINED_FOR_TESTS)?;
    }

    #[test]
    fn paged_query_within_a_key_range_equals_brute_force(
        entities in prop::collection::vec(entity(), 0..40),
        filter in filter_expr(),
        within in key_range(),
        tops in prop::collection::vec(1usize..7, 1..5),
        budget in prop::sample::select(vec![1usize, 3, MAX_EXAMINED_FOR_TESTS]),
    ) {
        check_query(entities, filter, Some(within), tops, budget)?;
    }

    #[test]
    fn paged_query_with_a_tiny_budget_equals_brute_force(
        entities in prop::collection::vec(entity(), 0..40),
        filter in filter_expr(),
        tops in prop::collection::vec(1usize..7, 1..5),
        budget in 1usize..4,
    ) {
        check_query(entities, filter, None, tops, budget)?;
    }

    #[test]
    fn unfiltered_paging_returns_every_entity_once(
        entities in prop::collection::vec(entity(), 0..40),
        tops in prop::collection::vec(1usize..7, 1..5),
        budget in prop::sample::select(vec![1usize, 2, MAX_EXAMINED_FOR_TESTS]),
    ) {
        let s = svc();
        let all = load(&s, entities);
        let remains = |from: &(String, String)| {
            let from = (from.0.encode_utf16().collect::<Vec<u16>>(), from.1.encode_utf16().collect::<Vec<u16>>());
            all.iter().any(|e| utf16_key(e) >= from)
        };
        let (got, _) = page_through(&s, None, None, &tops, budget, &remains)?;
        prop_assert!(got == all);
    }
}

#[cfg(feature = "rocksdb")]
proptest! {
    // each case opens a RocksDB in a fresh directory: fewer cases than on memory
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn paged_query_on_rocksdb_equals_brute_force(
        entities in prop::collection::vec(entity(), 0..40),
        filter in filter_expr(),
        within in prop::option::of(key_range()),
        tops in prop::collection::vec(1usize..7, 1..5),
        budget in prop::sample::select(vec![1usize, 3, MAX_EXAMINED_FOR_TESTS]),
    ) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let store = aztable_store::rocks::RocksStore::open(dir.path()).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let s = TableService::new(Arc::new(store));
        s.tables().create_table(ACCT, TABLE).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        check_query_on(&s, entities, filter, within, tops, budget)?;
    }

    /// On a copy of a real directory of the one-family layout (heaps in the default
    /// column family; `tests/fixtures/datadir/5351c74`), beside the tables it holds.
    #[test]
    fn paged_query_on_a_one_family_directory_equals_brute_force(
        entities in prop::collection::vec(entity(), 0..40),
        filter in filter_expr(),
        within in prop::option::of(key_range()),
        tops in prop::collection::vec(1usize..7, 1..5),
        budget in prop::sample::select(vec![1usize, 3, MAX_EXAMINED_FOR_TESTS]),
    ) {
        let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/datadir/5351c74/data");
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        for entry in std::fs::read_dir(fixture).map_err(|e| TestCaseError::fail(e.to_string()))? {
            let entry = entry.map_err(|e| TestCaseError::fail(e.to_string()))?;
            std::fs::copy(entry.path(), dir.path().join(entry.file_name())).map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        let store = aztable_store::rocks::RocksStore::open(dir.path()).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let s = TableService::new(Arc::new(store));
        s.tables().create_table(ACCT, TABLE).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        check_query_on(&s, entities, filter, within, tops, budget)?;
    }
}

/// The production budget, for the cases that do not cut pages by it.
const MAX_EXAMINED_FOR_TESTS: usize = 10_000;

fn new(pk: &str, rk: &str) -> NewEntity {
    NewEntity { partition_key: pk.into(), row_key: rk.into(), properties: Vec::new() }
}

fn query(
    s: &TableService,
    filter: &str,
    start: Option<(&str, &str)>,
    top: usize,
    budget: usize,
) -> EntityPage {
    let filter = filter::parse(filter).expect("filter parses");
    let start = start.map(|(p, r)| (p.to_owned(), r.to_owned()));
    let q = QueryEntities { start, top, filter: Some(filter) };
    s.entities().query_entities_within(ACCT.into(), TABLE, &q, budget).expect("query")
}

fn keys(page: &EntityPage) -> Vec<(&str, &str)> {
    page.entities.iter().map(|e| (e.partition_key.as_str(), e.row_key.as_str())).collect()
}

fn next(page: &EntityPage) -> Option<(&str, &str)> {
    page.next.as_ref().map(|(p, r)| (p.as_str(), r.as_str()))
}

/// Partitions `a` (2 rows), `m` (50 rows) and `z` (2 rows).
fn three_partitions() -> TableService {
    let s = svc();
    for (pk, n) in [("a", 2), ("m", 50), ("z", 2)] {
        for i in 0..n {
            s.entities().insert_entity(ACCT, TABLE, new(pk, &format!("{i:02}"))).wait().expect("insert");
        }
    }
    s
}

#[test]
fn or_of_partitions_skips_what_lies_between() {
    let s = three_partitions();
    // A budget of 4 examined entities is enough: partition m is never read.
    let page = query(&s, "PartitionKey eq 'a' or PartitionKey eq 'z'", None, 1000, 4);
    assert_eq!(keys(&page), [("a", "00"), ("a", "01"), ("z", "00"), ("z", "01")]);
    assert_eq!(page.next, None);
}

#[test]
fn a_page_full_at_a_range_end_continues_at_the_next_range() {
    let s = three_partitions();
    let f = "PartitionKey eq 'z' or PartitionKey eq 'a'";
    let page = query(&s, f, None, 2, 10_000);
    assert_eq!(keys(&page), [("a", "00"), ("a", "01")]);
    assert_eq!(next(&page), Some(("z", "00")));
    let page = query(&s, f, Some(("z", "00")), 2, 10_000);
    assert_eq!(keys(&page), [("z", "00"), ("z", "01")]);
    assert_eq!(page.next, None);
    // Nothing after the last range: no continuation.
    let page = query(&s, "PartitionKey eq 'a' or PartitionKey eq 'b'", None, 2, 10_000);
    assert_eq!(keys(&page), [("a", "00"), ("a", "01")]);
    assert_eq!(page.next, None);
}

/// The Python SDK's recording of the real service (`test_query_entities_each_page`):
/// 6 rows in `pk`, 4 in partitions after it, `PartitionKey eq 'pk'` 2 at a time; the
/// third page is full and has no continuation.
#[test]
fn a_full_page_at_the_end_of_the_only_range_has_no_continuation() {
    let s = svc();
    let rows = ["10", "101", "1012", "10123", "101234", "1012345"];
    for rk in rows {
        s.entities().insert_entity(ACCT, TABLE, new("pk", rk)).wait().expect("insert");
    }
    for pk in ["pk6", "pk67", "pk678", "pk6789"] {
        s.entities().insert_entity(ACCT, TABLE, new(pk, "r")).wait().expect("insert");
    }
    let f = "PartitionKey eq 'pk'";
    let page = query(&s, f, None, 2, 10_000);
    assert_eq!((keys(&page), next(&page)), (vec![("pk", "10"), ("pk", "101")], Some(("pk", "1012"))));
    let page = query(&s, f, next(&page), 2, 10_000);
    assert_eq!((keys(&page), next(&page)), (vec![("pk", "1012"), ("pk", "10123")], Some(("pk", "101234"))));
    let page = query(&s, f, next(&page), 2, 10_000);
    assert_eq!((keys(&page), next(&page)), (vec![("pk", "101234"), ("pk", "1012345")], None));
    // a budget spent at the last row of the range: nothing left there either
    let page = query(&s, f, Some(("pk", "101234")), 1000, 2);
    assert_eq!((keys(&page).len(), next(&page)), (2, None));
}

#[test]
fn a_spent_budget_cuts_at_the_next_row_examined() {
    let s = three_partitions();
    let f = "PartitionKey eq 'a' or PartitionKey eq 'z'";
    // The budget runs out exactly at the end of partition a.
    let page = query(&s, f, None, 1000, 2);
    assert_eq!(keys(&page), [("a", "00"), ("a", "01")]);
    assert_eq!(next(&page), Some(("z", "00")));
    // A filter that rejects what it examines: empty pages with continuations.
    let f = "(PartitionKey eq 'a' or PartitionKey eq 'z') and RowKey eq '01'";
    let page = query(&s, "PartitionKey eq 'a' and Missing eq 1 or PartitionKey eq 'z'", None, 1000, 1);
    assert_eq!(keys(&page), []);
    assert_eq!(next(&page), Some(("a", "01")));
    let page = query(&s, "PartitionKey eq 'a' and Missing eq 1 or PartitionKey eq 'z'", next(&page), 1000, 1);
    assert_eq!(keys(&page), []);
    assert_eq!(next(&page), Some(("z", "00")));
    let page = query(&s, f, None, 1000, 1);
    assert_eq!(keys(&page), [("a", "01")]);
    assert_eq!(next(&page), Some(("z", "01")));
    let page = query(&s, f, Some(("z", "01")), 1000, 1);
    assert_eq!(keys(&page), [("z", "01")]);
    assert_eq!(page.next, None);
}

#[test]
fn a_resume_point_skips_earlier_ranges() {
    let s = three_partitions();
    let f = "PartitionKey eq 'a' or PartitionKey eq 'm' and RowKey ge '48' or PartitionKey eq 'z'";
    let page = query(&s, f, Some(("m", "49")), 1000, 10_000);
    assert_eq!(keys(&page), [("m", "49"), ("z", "00"), ("z", "01")]);
    // A resume point between ranges starts at the next range.
    let page = query(&s, f, Some(("b", "")), 1000, 10_000);
    assert_eq!(keys(&page), [("m", "48"), ("m", "49"), ("z", "00"), ("z", "01")]);
    // Past every range: an empty last page.
    let page = query(&s, f, Some(("zz", "")), 1000, 10_000);
    assert_eq!((page.entities.len(), page.next), (0, None));
    // ...which still needs the table to exist.
    let start = Some(("zz".into(), String::new()));
    let q = QueryEntities { start, top: 10, filter: filter::parse(f).ok() };
    assert!(matches!(s.entities().query_entities(ACCT, "nope", &q).wait(), Err(ServiceError::TableNotFound)));
}
