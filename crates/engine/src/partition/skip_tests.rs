//! Tests of value summaries: scans that skip runs of rows return exactly what a scan
//! reading every row returns, whatever writes, deletes and builds came before, and
//! whatever writes race a build.

use super::skip::BLOCK_ROWS;
use super::*;
use aztable_model::{EdmRef, EdmValue, Entity, KeyRange, Ticks};
use aztable_store::mem::MemStore;
use aztable_wire::filter::Requirement;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Mutex;

const TAGS: [&str; 4] = ["needle", "hay", "straw", "needle2"];

fn entity(pk: &str, rk: &str, tag: &str, other: &str) -> Entity {
    Entity {
        partition_key: pk.into(),
        row_key: rk.into(),
        timestamp: Ticks(1),
        properties: vec![
            ("Other".into(), EdmValue::String(other.into())),
            ("Tag".into(), EdmValue::String(tag.into())),
            ("Long".into(), EdmValue::String("x".repeat(100))),
        ],
    }
}

fn put(p: &Partitions, e: &Entity) {
    p.writes()
        .transact("a", "tbl", &e.partition_key.clone(), |txn| {
            txn.put(e);
            Ok::<_, PartitionError>(())
        })
        .unwrap();
}

fn delete(p: &Partitions, pk: &str, rk: &str) {
    p.writes()
        .transact("a", "tbl", pk, |txn| {
            txn.delete(pk, rk);
            Ok::<_, PartitionError>(())
        })
        .unwrap();
}

/// The properties of the rows below whose columns a summary keeps.
const COLUMNS: [&str; 9] = ["Count", "Ratio", "Flag", "Late", "When", "Tag", "Id", "Other", "Long"];

/// Builds the table's summary here, as a scan's thread would (after a build a scan
/// started in a thread, if one runs), with columns of [`COLUMNS`].
fn summarize(p: &Partitions) {
    let id = p.catalog().lookup_table("a", "tbl").unwrap().unwrap().id;
    let names = COLUMNS.map(String::from);
    for _ in 0..60_000 {
        if p.scans.summaries.begin(id, &names) {
            p.scans.summaries.build(&Arc::downgrade(&p.store), p.scans.stripes.all(), id);
            return;
        }
        if p.scans.summaries.is_ready(id) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    panic!("a build never ended");
}

fn is_ready(p: &Partitions) -> bool {
    let id = p.catalog().lookup_table("a", "tbl").unwrap().unwrap().id;
    p.scans.summaries.is_ready(id)
}

/// Every (PartitionKey, RowKey) a scan with `needs` keeps, following continuations,
/// with the rows the pages skipped or evaluated on columns (not read); pages hold at most `limit` and examine at most
/// `budget`.
fn scan_all(
    p: &Partitions,
    needs: &Needs,
    limit: usize,
    budget: usize,
    keep: impl Fn(&dyn aztable_model::Row) -> bool,
) -> (Vec<(String, String)>, u64) {
    let all = KeyRange::unbounded();
    let mut found = Vec::new();
    let mut skipped = 0;
    let mut resume: Option<(String, String)> = None;
    for _ in 0..100_000 {
        let scan = Scan {
            account: "a",
            table: "tbl",
            range: &all,
            resume: resume.as_ref().map(|(p, r)| (p.as_str(), r.as_str())),
            limit,
            max_examined: budget,
            needs: Some(needs),
        };
        let page = p.scans().scan_entities(&scan, &keep).unwrap();
        assert!(page.entities.len() <= limit);
        assert!(page.examined <= budget);
        skipped += page.skipped + page.from_columns as u64;
        found.extend(page.entities.into_iter().map(|e| (e.partition_key, e.row_key)));
        match page.next {
            Some(next) => resume = Some(next),
            None => return (found, skipped),
        }
    }
    panic!("the scan did not end");
}

/// Every (PartitionKey, RowKey) whose Tag is `tag`, with the rows the pages skipped.
fn query(p: &Partitions, tag: &str, limit: usize, budget: usize) -> (Vec<(String, String)>, u64) {
    let requirement = Requirement::Equals { name: "Tag", value: tag };
    let needs = Needs::new(vec!["Tag".into()], false, Some(&requirement));
    assert!(needs.probe.is_some());
    scan_all(
        p,
        &needs,
        limit,
        budget,
        |row| matches!(row.property("Tag"), Some(EdmRef::String(s)) if s == tag),
    )
}

/// Every (PartitionKey, RowKey) matching `filter`, scanned as Query Entities does (the
/// filter's needs and probe, columns evaluated a column at a time); the same scanned
/// with columns evaluated row by row through `keep` must find the same.
fn query_filter(p: &Partitions, filter: &str, limit: usize, budget: usize) -> Vec<(String, String)> {
    let compiled = aztable_wire::filter::Compiled::new(&aztable_wire::filter::parse(filter).expect("parses"));
    let needs = Needs::new(compiled.names().to_vec(), compiled.reads_keys(), compiled.requirement().as_ref());
    let row_by_row = scan_all(p, &needs, limit, budget, |row| compiled.eval(row)).0;
    let needs = needs.evaluated_by(std::sync::Arc::new(compiled.clone()));
    let found = scan_all(p, &needs, limit, budget, |row| compiled.eval(row)).0;
    assert_eq!(found, row_by_row, "{filter}");
    // and with the RowKey bounds of every partition, seeking past the rows outside them
    if let Some(row_keys) =
        aztable_wire::filter::plan::plan_row_keys(&aztable_wire::filter::parse(filter).expect("parses"))
    {
        let needs = needs.within_row_keys(&row_keys);
        let within = scan_all(p, &needs, limit, budget, |row| compiled.eval(row)).0;
        assert_eq!(within, row_by_row, "{filter}, within {row_keys:?}");
    }
    found
}

/// A row with the properties the filters below compare, each sometimes missing or of
/// another type than the filters' literals.
fn typed(pk: &str, rk: &str, v: &Values) -> Entity {
    let mut properties = vec![("Tag".to_owned(), EdmValue::String(TAGS[v.tag].into()))];
    match v.count {
        Some(Ok(n)) => properties.push(("Count".into(), EdmValue::Int32(n))),
        Some(Err(n)) => properties.push(("Count".into(), EdmValue::Int64(i64::from(n)))),
        None => {}
    }
    if let Some(r) = v.ratio {
        properties
            .push(("Ratio".into(), EdmValue::Double(if r == 7 { f64::NAN } else { f64::from(r) / 2.0 })));
    }
    if v.when {
        properties.push(("When".into(), EdmValue::String("2024-01-01T00:00:00Z".into())));
    }
    if let Some(flag) = v.flag {
        properties.push(("Flag".into(), EdmValue::Boolean(flag)));
    }
    if v.late {
        properties.push(("Late".into(), EdmValue::Int32(1)));
    }
    // (only p0 mixes a String and absences in: the other partitions' blocks hold a Guid
    // in every row, which columns compare in a loop of their own)
    match v.id.filter(|&n| n < 4 || pk == "p0").or(Some(0)) {
        Some(4) => properties.push(("Id".into(), EdmValue::String("x".into()))),
        Some(n) => {
            let mut g = [0; 16];
            (g[0], g[15]) = (n / 2, n % 2);
            properties.push(("Id".into(), EdmValue::Guid(g)));
        }
        None => {}
    }
    Entity {
        partition_key: pk.into(),
        row_key: rk.into(),
        timestamp: Ticks(BASE_TICKS + v.ticks),
        properties,
    }
}

/// 2024-01-01T00:00:00Z in ticks.
const BASE_TICKS: i64 = 638_396_640_000_000_000;

#[derive(Debug, Clone)]
struct Values {
    tag: usize,
    /// Int32 (Ok) or Int64 (Err), or missing
    count: Option<Result<i32, i32>>,
    /// halves; 7 stands for NaN
    ratio: Option<i32>,
    /// a String named like a date property
    when: bool,
    flag: Option<bool>,
    /// a property no preloaded row has: a block's columns must learn of it
    late: bool,
    /// a Guid whose first byte is half this and last byte the rest (4: a String
    /// instead), or missing
    id: Option<u8>,
    ticks: i64,
}

fn values() -> impl Strategy<Value = Values> {
    (
        tag(),
        prop_oneof![8 => (0..50i32).prop_map(|n| Some(Ok(n))), 1 => (-5..60i32).prop_map(|n| Some(Err(n))), 1 => Just(None)],
        prop_oneof![3 => (0..20i32).prop_map(Some), 1 => Just(None)],
        prop::bool::weighted(0.05),
        prop_oneof![Just(None), Just(Some(false)), Just(Some(true))],
        prop_oneof![8 => (0..4u8).prop_map(Some), 1 => Just(Some(4)), 1 => Just(None)],
        0..1000i64,
    )
        .prop_map(|(tag, count, ratio, when, flag, id, ticks)| Values {
            tag,
            count,
            ratio,
            when,
            flag,
            late: false,
            id,
            ticks,
        })
}

const FILTERS: [&str; 40] = [
    "Tag eq 'needle'",
    "Count lt 0 or Count gt 45",
    "Tag eq 'needle' or Count eq 25",
    "Tag eq 'needle' or Ratio gt 9.0",
    "(Count lt 3 or Count gt 55L) and Tag eq 'straw'",
    "Count lt 2 or Tag ne 'needle'",
    "not (Count lt 3 or Count gt 10)",
    "Ratio lt 0.5 or Timestamp lt datetime'2024-01-01T00:00:00.0000050Z' or When eq 'x'",
    "(Tag eq 'needle' and Count lt 10) or (Tag eq 'straw' and Count ge 40)",
    "Tag eq 'straw' and Count lt 3",
    "Count lt 0",
    "Count ge 49",
    "Count eq 25",
    "Count gt 55L",
    "Count le -3L",
    "Ratio gt 9.0",
    "Ratio lt 0.5",
    "Ratio eq 3.5",
    "Timestamp lt datetime'2024-01-01T00:00:00.0000500Z'",
    "Timestamp ge datetime'2024-01-01T00:00:00.0000990Z' and Count lt 10",
    "When ge datetime'2024-01-01T00:00:00Z'",
    "Count ne 3 and Count lt 2",
    "RowKey ge 'r0400' and Timestamp lt datetime'2024-01-01T00:00:00.0000500Z'",
    "Flag eq true and Count ne 3 and Count lt 2",
    "not (Flag eq false) and not (Count le 45)",
    "Flag ne true or Count gt 48 or Timestamp lt datetime'2024-01-01T00:00:00.0000020Z'",
    "not (Count ge 0 and Count le 48) and Ratio ne 2.0",
    "Late eq 1 and Count ne 7",
    "not (Late ne 1) or Count eq 25",
    "Id eq guid'00000000-0000-0000-0000-000000000001' and Count lt 3",
    "not (Id ne guid'01000000-0000-0000-0000-000000000000') or Tag eq 'needle'",
    "Id gt guid'00000000-0000-0000-0000-000000000001' and Count gt 45",
    "RowKey eq 'r0400'",
    "RowKey gt 'r0100' and RowKey lt 'r0112' and Count lt 25",
    "(RowKey ge 'r0890' and Count ge 10) or (RowKey le 'r0893' and RowKey gt 'r0880')",
    "RowKey ge 'r0000' and RowKey le 'r0003' or PartitionKey eq 'p1' and RowKey eq 'r0500'",
    "not (RowKey lt 'r0450') and not (RowKey ge 'r0460') and Tag ne 'needle'",
    "RowKey eq 'r0007' or RowKey eq 'r0400' or RowKey eq 'r0999'",
    "RowKey lt 'r0003' or RowKey gt 'r0996' or (RowKey ge 'r0500' and RowKey lt 'r0502')",
    "RowKey ne 'r0400' and Count lt 2",
];

#[derive(Debug, Clone)]
enum Op {
    Put { pk: u8, rk: u16, values: Values },
    Delete { pk: u8, rk: u16 },
    Build,
    Query { filter: usize, limit: usize, budget: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..3u8, 0..900u16, values(), prop::bool::ANY)
            .prop_map(|(pk, rk, values, late)| Op::Put { pk, rk, values: Values { late, ..values } }),
        2 => (0..3u8, 0..900u16).prop_map(|(pk, rk)| Op::Delete { pk, rk }),
        1 => Just(Op::Build),
        2 => (0..FILTERS.len(), 1..50usize, 1..400usize).prop_map(|(filter, limit, budget)| Op::Query { filter, limit, budget }),
    ]
}

/// Mostly `hay`: runs without the other tags are common, so summaries skip.
fn tag() -> impl Strategy<Value = usize> {
    prop_oneof![30 => Just(1usize), 1 => 0..4usize]
}

fn keys(pk: u8, rk: u16) -> (String, String) {
    (format!("p{pk}"), format!("r{rk:04}"))
}

fn matching(model: &BTreeMap<(String, String), Entity>, filter: &str) -> Vec<(String, String)> {
    let compiled = aztable_wire::filter::Compiled::new(&aztable_wire::filter::parse(filter).expect("parses"));
    model.iter().filter(|(_, e)| compiled.eval(*e)).map(|(k, _)| k.clone()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Scans with summaries built at any point, and written after, find what the model
    /// holds: no run holding a match is ever skipped, for strings, numbers of each type,
    /// NaN, missing properties, properties of another type, and Timestamp.
    #[test]
    fn scans_with_summaries_equal_the_model(
        preload in prop::collection::vec((0..3u8, 0..900u16, values()), 200..700),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let p = Partitions::new(Arc::new(MemStore::new()));
        p.catalog().create_table("a", "tbl").unwrap();
        let mut model = BTreeMap::new();
        for (pk, rk, values) in preload {
            let (pk, rk) = keys(pk, rk);
            let e = typed(&pk, &rk, &values);
            put(&p, &e);
            model.insert((pk, rk), e);
        }
        summarize(&p);
        prop_assert!(is_ready(&p));
        for op in ops {
            match op {
                Op::Put { pk, rk, values } => {
                    let (pk, rk) = keys(pk, rk);
                    let e = typed(&pk, &rk, &values);
                    put(&p, &e);
                    model.insert((pk, rk), e);
                }
                Op::Delete { pk, rk } => {
                    let (pk, rk) = keys(pk, rk);
                    delete(&p, &pk, &rk);
                    model.remove(&(pk, rk));
                }
                Op::Build => {
                    // a fresh summary of the table as it is now
                    let id = p.catalog().lookup_table("a", "tbl").unwrap().unwrap().id;
                    p.scans.summaries.forget(id);
                    summarize(&p);
                }
                Op::Query { filter, limit, budget } => {
                    let found = query_filter(&p, FILTERS[filter], limit, budget);
                    prop_assert_eq!(found, matching(&model, FILTERS[filter]), "{}", FILTERS[filter]);
                }
            }
        }
        for filter in FILTERS {
            prop_assert_eq!(query_filter(&p, filter, 1000, 10_000), matching(&model, filter), "{}", filter);
        }
    }
}

#[test]
fn comparisons_skip_runs_whose_spans_rule_them_out() {
    let p = Partitions::new(Arc::new(MemStore::new()));
    p.catalog().create_table("a", "tbl").unwrap();
    let rows = 10 * BLOCK_ROWS as i32;
    for i in 0..rows {
        let mut e = entity("p", &format!("r{i:05}"), "hay", "x");
        e.properties.push(("Count".into(), EdmValue::Int32(i)));
        e.timestamp = Ticks(BASE_TICKS + i64::from(i));
        put(&p, &e);
    }
    summarize(&p);
    let skipped = |filter: &str| {
        let compiled = aztable_wire::filter::Compiled::new(&aztable_wire::filter::parse(filter).unwrap());
        let needs = Needs::new(compiled.names().to_vec(), false, compiled.requirement().as_ref());
        let all = KeyRange::unbounded();
        let scan = Scan {
            account: "a",
            table: "tbl",
            range: &all,
            resume: None,
            limit: 100_000,
            max_examined: 100_000,
            needs: Some(&needs),
        };
        let page = p.scans().scan_entities(&scan, |row| compiled.eval(row)).unwrap();
        (page.entities.len(), page.skipped + page.from_columns as u64)
    };
    let block = u64::from(BLOCK_ROWS);
    // the last block alone holds Count >= 9 * BLOCK_ROWS
    assert_eq!(skipped(&format!("Count ge {}", 9 * BLOCK_ROWS)), (BLOCK_ROWS as usize, 9 * block));
    assert_eq!(skipped("Count lt 0"), (0, 10 * block));
    // the literal's type differs from every stored Count: nothing can match
    assert_eq!(skipped("Count lt 5L"), (0, 10 * block));
    assert_eq!(skipped("Timestamp lt datetime'2024-01-01T00:00:00.0000010Z'"), (10, 9 * block));
    // ne rules nothing out
    assert_eq!(skipped("Count ne 5"), (rows as usize - 1, 0));
    // an `or` rules out the runs where neither side can hold
    assert_eq!(skipped("Count lt 0 or Count gt 1000000"), (0, 10 * block));
    assert_eq!(
        skipped(&format!("Count lt 3 or Count ge {}", 9 * BLOCK_ROWS)),
        (BLOCK_ROWS as usize + 3, 8 * block)
    );
    // ... and none where one side rules nothing out
    assert_eq!(skipped("Count lt 2 or Count ne 5"), (rows as usize - 1, 0));
    // a filter no span rules out is evaluated on the blocks' columns: every block whose
    // rows it all rejects is passed over
    assert_eq!(skipped("not (Count ge 0)"), (0, 10 * block));
    assert_eq!(skipped(&format!("Count ne {} and Count ne 5", BLOCK_ROWS + 1)), (rows as usize - 2, 0));
    assert_eq!(skipped("Count ne 5 and Count lt 200"), (199, 8 * block));
    // ... Strings too, but not one longer than 64 bytes
    assert_eq!(skipped("not (Count ge 0) or Tag ne 'hay'"), (0, 10 * block));
    assert_eq!(skipped("not (Count ge 0) and Long ne 'x'"), (0, 0));
}

#[test]
fn writes_drop_the_columns_of_their_blocks_only() {
    let p = Partitions::new(Arc::new(MemStore::new()));
    p.catalog().create_table("a", "tbl").unwrap();
    let rows = 6 * BLOCK_ROWS;
    let row = |i: u32, count: i32| {
        let mut e = entity("p", &format!("r{i:05}"), "hay", "x");
        e.properties.push(("Count".into(), EdmValue::Int32(count)));
        e.properties.push(("Flag".into(), EdmValue::Boolean(i % 2 == 0)));
        e
    };
    for i in 0..rows {
        put(&p, &row(i, 1));
    }
    summarize(&p);
    let walk = |filter: &str| {
        let compiled = aztable_wire::filter::Compiled::new(&aztable_wire::filter::parse(filter).unwrap());
        let needs = Needs::new(compiled.names().to_vec(), false, compiled.requirement().as_ref());
        let (found, skipped) = scan_all(&p, &needs, 1000, 100_000, |row| compiled.eval(row));
        (found.into_iter().map(|(_, rk)| rk).collect::<Vec<_>>(), skipped)
    };
    let block = u64::from(BLOCK_ROWS);
    assert_eq!(walk("not (Count eq 1)"), (vec![], 6 * block));
    assert_eq!(walk("Flag eq true and Count ne 1"), (vec![], 6 * block));
    // a row of the second block changes: that block is read, the others still skipped
    put(&p, &row(BLOCK_ROWS + 3, 7));
    let changed = format!("r{:05}", BLOCK_ROWS + 3);
    assert_eq!(walk("not (Count eq 1)"), (vec![changed.clone()], 5 * block));
    assert_eq!(walk("Flag ne true and Count ne 1"), (vec![changed], 5 * block));
    // a delete leaves the columns: the rows left are among those they hold
    delete(&p, "p", &format!("r{:05}", 3 * BLOCK_ROWS));
    assert_eq!(walk("not (Count eq 1) and not (Count eq 7)").1, 5 * block);
    // a row put again in the fourth block: it is read
    put(&p, &row(3 * BLOCK_ROWS, 1));
    assert_eq!(walk("not (Count eq 1) and not (Count eq 7)").1, 4 * block);
    // a row of the sixth block gains a String: that block is read, and the blocks
    // without the name rule the filter out
    let mut e = row(5 * BLOCK_ROWS, 1);
    e.properties.push(("When".into(), EdmValue::String("yes".into())));
    put(&p, &e);
    assert_eq!(walk("When ne 'no' and Count eq 1"), (vec![format!("r{:05}", 5 * BLOCK_ROWS)], 3 * block));
    assert_eq!(walk("not (Count eq 1)").1, 3 * block);
}

#[test]
fn runs_without_the_pair_are_skipped_and_counted() {
    let p = Partitions::new(Arc::new(MemStore::new()));
    p.catalog().create_table("a", "tbl").unwrap();
    let rows = 20 * BLOCK_ROWS as usize;
    for i in 0..rows {
        // the needle in one row; its name and value elsewhere under other names only
        let tag = if i == 1000 { "needle" } else { "hay" };
        put(&p, &entity("p", &format!("r{i:05}"), tag, "needle"));
    }
    let (found, skipped) = query(&p, "needle", 1000, 100_000);
    assert_eq!(found, [("p".to_owned(), "r01000".to_owned())]);
    assert_eq!(skipped, 0, "no summary yet");
    summarize(&p);
    let (found, skipped) = query(&p, "needle", 1000, 100_000);
    assert_eq!(found, [("p".to_owned(), "r01000".to_owned())]);
    // every block but the one holding the needle (`Other` holds the value everywhere)
    assert_eq!(skipped, u64::from(19 * BLOCK_ROWS));
    // a needle written into a skipped run after the build is found
    put(&p, &entity("p", "r00005", "needle", "hay"));
    let (found, skipped) = query(&p, "needle", 1000, 100_000);
    assert_eq!(found.len(), 2);
    assert_eq!(skipped, u64::from(18 * BLOCK_ROWS));
    // and a pair nothing holds skips everything
    let (found, skipped) = query(&p, "straw", 1000, 100_000);
    assert!(found.is_empty());
    assert_eq!(skipped, rows as u64);
}

#[test]
fn a_deleted_table_forgets_its_summary_and_a_new_one_starts_empty() {
    let p = Partitions::new(Arc::new(MemStore::new()));
    p.catalog().create_table("a", "tbl").unwrap();
    for i in 0..300 {
        put(&p, &entity("p", &format!("r{i:05}"), "needle", "x"));
    }
    summarize(&p);
    assert!(is_ready(&p));
    p.catalog().delete_table("a", "tbl").unwrap();
    p.catalog().create_table("a", "tbl").unwrap();
    assert!(!is_ready(&p));
    put(&p, &entity("p", "r1", "needle", "x"));
    assert_eq!(query(&p, "needle", 1000, 100_000).0.len(), 1);
}

#[test]
fn a_block_filled_far_beyond_its_size_drops_the_summary() {
    let p = Partitions::new(Arc::new(MemStore::new()));
    p.catalog().create_table("a", "tbl").unwrap();
    for i in 0..300 {
        put(&p, &entity("p", &format!("r{i:05}"), "hay", "x"));
    }
    summarize(&p);
    assert!(is_ready(&p));
    // an append-only table: every new row lands in the last block
    for i in 0..2000 {
        put(&p, &entity("q", &format!("r{i:05}"), &format!("t{i}"), "x"));
    }
    assert!(!is_ready(&p));
    assert_eq!(query(&p, "t1999", 1000, 100_000).0, [("q".to_owned(), "r01999".to_owned())]);
}

/// Writers race builds: every row written before the build ended (acknowledged or
/// not when it began) is found by scans that use the summary.
#[test]
fn writes_racing_a_build_are_not_missed() {
    for round in 0..20 {
        let p = Arc::new(Partitions::new(Arc::new(MemStore::new())));
        p.catalog().create_table("a", "tbl").unwrap();
        for i in 0..1500 {
            put(&p, &entity("p", &format!("r{i:05}"), "hay", "x"));
        }
        let writers: Vec<_> = (0..2)
            .map(|w| {
                let p = Arc::clone(&p);
                std::thread::spawn(move || {
                    for i in 0..150 {
                        let rk = format!("r{:05}", (i * 97 + w * 13 + round) % 1500);
                        put(&p, &entity(&format!("w{w}"), &rk, "needle", "x"));
                        put(&p, &entity("p", &rk, "needle", "x"));
                    }
                })
            })
            .collect();
        summarize(&p);
        for w in writers {
            w.join().unwrap();
        }
        assert!(is_ready(&p), "round {round}");
        let (found, skipped) = query(&p, "needle", 1000, 100_000);
        let all = query(&p, "needle", 1000, 100_000).0;
        assert_eq!(found, all);
        // the model: a full read without the summary
        let id = p.catalog().lookup_table("a", "tbl").unwrap().unwrap().id;
        p.scans.summaries.forget(id);
        let (unskipped, none) = query(&p, "needle", 1000, 100_000);
        assert_eq!(none, 0);
        assert_eq!(found, unskipped, "round {round}: skipped {skipped}");
    }
}

/// A store whose next write, once armed, says it has begun and then waits for a permit.
#[derive(Default)]
struct Gated {
    inner: MemStore,
    armed: Mutex<Option<(std::sync::mpsc::Sender<()>, std::sync::mpsc::Receiver<()>)>>,
}

impl aztable_store::Store for Gated {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, aztable_store::StoreError> {
        self.inner.get(key)
    }
    fn write(&self, batch: aztable_store::WriteBatch) -> Result<(), aztable_store::StoreError> {
        let armed = self.armed.lock().unwrap().take();
        if let Some((begun, permit)) = armed {
            begun.send(()).unwrap();
            permit.recv().unwrap();
        }
        self.inner.write(batch)
    }
    fn scan<'a>(
        &'a self,
        start: &[u8],
        end: &[u8],
    ) -> Box<dyn Iterator<Item = Result<aztable_store::KvPair, aztable_store::StoreError>> + 'a> {
        self.inner.scan(start, end)
    }
    fn flush(&self) -> Result<(), aztable_store::StoreError> {
        Ok(())
    }
}

/// A write whose transaction began before the build's summary existed, and reaches the
/// store only while the build would read: the build waits for it (without that wait,
/// the row is in no block's filter and scans skip it).
#[test]
fn a_build_waits_for_writes_that_began_before_it() {
    let store = Arc::new(Gated::default());
    let p = Arc::new(Partitions::new(store.clone()));
    p.catalog().create_table("a", "tbl").unwrap();
    for i in 0..1000 {
        put(&p, &entity("p", &format!("r{i:05}"), "hay", "x"));
    }
    let (begun_tx, begun) = std::sync::mpsc::channel();
    let (permit, permit_rx) = std::sync::mpsc::channel();
    *store.armed.lock().unwrap() = Some((begun_tx, permit_rx));
    let writer = {
        let p = Arc::clone(&p);
        std::thread::spawn(move || put(&p, &entity("p", "r00500", "needle", "x")))
    };
    // the writer holds its stripe and is inside the store's write, unrecorded
    begun.recv().unwrap();
    let id = p.catalog().lookup_table("a", "tbl").unwrap().unwrap().id;
    assert!(p.scans.summaries.begin(id, &[]));
    let builder = {
        let p = Arc::clone(&p);
        std::thread::spawn(move || {
            p.scans.summaries.build(&Arc::downgrade(&p.store), p.scans.stripes.all(), id);
        })
    };
    // give a builder that does not wait the time to read without the row
    std::thread::sleep(std::time::Duration::from_millis(200));
    permit.send(()).unwrap();
    writer.join().unwrap();
    builder.join().unwrap();
    assert!(is_ready(&p));
    assert_eq!(query(&p, "needle", 1000, 100_000).0, [("p".to_owned(), "r00500".to_owned())]);
}

/// A summary that would not fit the budget is not kept, and scans read every row, as
/// before a summary exists.
#[test]
fn a_summary_over_the_budget_is_not_kept() {
    let p = Partitions::with_summary_budget(Arc::new(MemStore::new()), 4096);
    p.catalog().create_table("a", "tbl").unwrap();
    for i in 0..2000 {
        put(&p, &entity("p", &format!("r{i:05}"), &format!("tag{i}"), "x"));
    }
    summarize(&p);
    assert!(!is_ready(&p));
    let (found, skipped) = query(&p, "tag1500", 1000, 100_000);
    assert_eq!(found, [("p".to_owned(), "r01500".to_owned())]);
    assert_eq!(skipped, 0);
    // a table that fits the same budget is summarized
    let small = Partitions::with_summary_budget(Arc::new(MemStore::new()), 4096);
    small.catalog().create_table("a", "tbl").unwrap();
    for i in 0..100 {
        put(&small, &entity("p", &format!("r{i:05}"), "hay", "x"));
    }
    summarize(&small);
    assert!(is_ready(&small));
}

#[test]
fn columns_over_their_budget_are_dropped_and_the_summary_kept() {
    // 4 KiB for filters and spans, 2 KiB for columns: 640 rows' columns take ~6 KiB
    let p = Partitions::with_summary_budget(Arc::new(MemStore::new()), 4096);
    p.catalog().create_table("a", "tbl").unwrap();
    for i in 0..5 * BLOCK_ROWS {
        let mut e = entity("p", &format!("r{i:05}"), if i == 300 { "needle" } else { "hay" }, "x");
        e.properties.push(("Count".into(), EdmValue::Int32(1)));
        put(&p, &e);
    }
    summarize(&p);
    assert!(is_ready(&p));
    // the Bloom filters still rule runs out; the columns are gone
    let (found, skipped) = query(&p, "needle", 1000, 100_000);
    assert_eq!((found.len(), skipped), (1, 4 * u64::from(BLOCK_ROWS)));
    let compiled =
        aztable_wire::filter::Compiled::new(&aztable_wire::filter::parse("not (Count eq 1)").unwrap());
    let needs = Needs::new(compiled.names().to_vec(), false, compiled.requirement().as_ref());
    assert_eq!(scan_all(&p, &needs, 1000, 100_000, |row| compiled.eval(row)), (vec![], 0));
}

#[test]
fn a_summary_without_the_columns_a_scan_wants_or_mostly_dropped_is_built_again() {
    let p = Partitions::new(Arc::new(MemStore::new()));
    p.catalog().create_table("a", "tbl").unwrap();
    let row = |i: u32| {
        let mut e = entity("p", &format!("r{i:05}"), "hay", "x");
        e.properties.push(("Count".into(), EdmValue::Int32(1)));
        e
    };
    for i in 0..6 * BLOCK_ROWS {
        put(&p, &row(i));
    }
    // a summary with no columns, as a scan of no property would have asked for
    let id = p.catalog().lookup_table("a", "tbl").unwrap().unwrap().id;
    assert!(p.scans.summaries.begin(id, &[]));
    p.scans.summaries.build(&Arc::downgrade(&p.store), p.scans.stripes.all(), id);
    let compiled =
        aztable_wire::filter::Compiled::new(&aztable_wire::filter::parse("not (Count eq 1)").unwrap());
    let needs = Needs::new(compiled.names().to_vec(), false, compiled.requirement().as_ref());
    let unread = || scan_all(&p, &needs, 1000, 100_000, |row| compiled.eval(row)).1;
    let later = || {
        std::thread::sleep(std::time::Duration::from_millis(5100));
        // this scan drops the summary and starts a build; without one it reads every row
        assert_eq!(unread(), 0);
        for _ in 0..5000 {
            if is_ready(&p) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    };
    let block = u64::from(BLOCK_ROWS);
    // no column of Count, and too young to build again
    assert_eq!(unread(), 0);
    later();
    assert_eq!(unread(), 6 * block);
    for b in [0, 2, 3, 5] {
        put(&p, &row(b * BLOCK_ROWS + 1));
    }
    // most blocks lost their columns, but the summary is too young to build again
    assert_eq!(unread(), 2 * block);
    later();
    assert_eq!(unread(), 6 * block);
}
