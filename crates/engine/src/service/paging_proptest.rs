//! Property test of paging under concurrent writes: every page of Query Entities is a
//! new snapshot, so writes land between pages. Random inserts, upserts and deletes —
//! of random keys, of the continuation's own row, and of keys just before and just
//! after it — are interleaved with page fetches of random `$top` and examination
//! budgets, on the in-memory store and on RocksDB. The oracle, from a model of the
//! table's history: rows present throughout the paging appear exactly once, with their
//! values; rows never present during the paging never appear; every row appears at
//! most once and in key order; each continuation moves strictly forward.

use super::*;
use aztable_model::{Condition, EdmValue, Entity, NewEntity};
use aztable_store::mem::MemStore;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

const ACCT: &str = "acct";
const TABLE: &str = "tbl";

type Key = (String, String);

/// Keys from a tiny alphabet (UTF-8 and UTF-16 orders differ on U+E000 vs U+10000).
fn key_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(vec!['a', 'b', '\u{E000}', '\u{10000}']), 0..3)
        .prop_map(|cs| cs.into_iter().collect())
}

fn utf16(k: &Key) -> (Vec<u16>, Vec<u16>) {
    (k.0.encode_utf16().collect(), k.1.encode_utf16().collect())
}

/// Where a write lands.
#[derive(Debug, Clone)]
enum Target {
    Key(String, String),
    /// The row the next page starts at (the continuation's keys).
    Continuation,
    /// A key sorting right after the continuation's (its RowKey with a character added).
    JustAfter,
    /// A key sorting before the continuation's (its RowKey with the last character
    /// dropped, or the partition's empty RowKey).
    JustBefore,
}

#[derive(Debug, Clone)]
enum Step {
    Page { top: usize, budget: usize },
    Upsert(Target, i32),
    Delete(Target),
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        3 => (key_text(), key_text()).prop_map(|(p, r)| Target::Key(p, r)),
        2 => Just(Target::Continuation),
        1 => Just(Target::JustAfter),
        1 => Just(Target::JustBefore),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (1usize..5, prop::sample::select(vec![1usize, 2, 10_000]))
            .prop_map(|(top, budget)| Step::Page { top, budget }),
        2 => (target(), 0i32..100).prop_map(|(t, v)| Step::Upsert(t, v)),
        1 => target().prop_map(Step::Delete),
    ]
}

/// The keys a target names, given where the next page starts (`None` before the first
/// page or after the last: then the continuation targets name no key).
fn resolve(t: &Target, next: Option<&Key>) -> Option<Key> {
    match (t, next) {
        (Target::Key(p, r), _) => Some((p.clone(), r.clone())),
        (_, None) => None,
        (Target::Continuation, Some(k)) => Some(k.clone()),
        (Target::JustAfter, Some((p, r))) => Some((p.clone(), format!("{r}a"))),
        (Target::JustBefore, Some((p, r))) => {
            let mut r = r.clone();
            r.pop();
            Some((p.clone(), r))
        }
    }
}

fn run(s: &TableService, initial: Vec<(Key, i32)>, steps: Vec<Step>) -> Result<(), TestCaseError> {
    let upsert = |k: &Key, v: i32| {
        let new = NewEntity {
            partition_key: k.0.clone(),
            row_key: k.1.clone(),
            properties: vec![("V".to_owned(), EdmValue::Int32(v))],
        };
        s.entities().update_entity(ACCT, TABLE, new, &Condition::Upsert).wait().map(|_| ())
    };
    let mut table: BTreeMap<Key, i32> = BTreeMap::new();
    for (k, v) in initial {
        upsert(&k, v).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        table.insert(k, v);
    }
    // what paging may see: keys present at some moment (with every value they had),
    // and the keys touched by a write while paging
    let at_start = table.clone();
    let mut ever: BTreeMap<Key, BTreeSet<i32>> =
        table.iter().map(|(k, v)| (k.clone(), [*v].into())).collect();
    let mut touched: BTreeSet<Key> = BTreeSet::new();
    let mut seen: Vec<Entity> = Vec::new();
    let mut next: Option<Key> = None;
    let mut done = false;
    for step in steps.into_iter().chain(std::iter::repeat_n(Step::Page { top: 5, budget: 10_000 }, 200)) {
        if done {
            break;
        }
        match step {
            Step::Page { top, budget } => {
                let q = QueryEntities { start: next.clone(), top, filter: None };
                let page = s
                    .entities()
                    .query_entities_within(Caller { account: ACCT, rows: None }, TABLE, &q, budget)
                    .map_err(|e| TestCaseError::fail(format!("query failed: {e:?}")))?;
                prop_assert!(page.entities.len() <= top);
                seen.extend(page.entities);
                match page.next {
                    Some(n) => {
                        if let Some(prev) = &next {
                            prop_assert!(
                                utf16(&n) > utf16(prev),
                                "continuation {n:?} does not move past {prev:?}"
                            );
                        }
                        next = Some(n);
                    }
                    None => done = true,
                }
            }
            Step::Upsert(t, v) => {
                if let Some(k) = resolve(&t, next.as_ref()) {
                    upsert(&k, v).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
                    table.insert(k.clone(), v);
                    ever.entry(k.clone()).or_default().insert(v);
                    touched.insert(k);
                }
            }
            Step::Delete(t) => {
                if let Some(k) = resolve(&t, next.as_ref()) {
                    match s.entities().delete_entity(ACCT, TABLE, &k.0, &k.1, &Condition::Exists).wait() {
                        Ok(()) => {
                            prop_assert!(table.remove(&k).is_some(), "deleted {k:?}, absent in the model")
                        }
                        Err(ServiceError::ResourceNotFound) => {
                            prop_assert!(!table.contains_key(&k), "{k:?} not found, present in the model")
                        }
                        Err(e) => return Err(TestCaseError::fail(format!("{e:?}"))),
                    }
                    touched.insert(k);
                }
            }
        }
    }
    prop_assert!(done, "paging did not end");
    let keys: Vec<Key> = seen.iter().map(|e| (e.partition_key.clone(), e.row_key.clone())).collect();
    // once each, in key order
    for pair in keys.windows(2) {
        prop_assert!(utf16(&pair[0]) < utf16(&pair[1]), "{:?} then {:?}", pair[0], pair[1]);
    }
    let value = |e: &Entity| match e.properties.first() {
        Some((_, EdmValue::Int32(v))) => *v,
        _ => -1,
    };
    for e in &seen {
        let k = (e.partition_key.clone(), e.row_key.clone());
        // never present during the paging: never returned; else with a value it had
        let values = ever.get(&k);
        prop_assert!(
            values.is_some_and(|vs| vs.contains(&value(e))),
            "{k:?} = {} was never stored",
            value(e)
        );
    }
    // present throughout (there at the start, never written since): returned, as stored
    let returned: BTreeSet<&Key> = keys.iter().collect();
    for (k, v) in &at_start {
        if !touched.contains(k) {
            prop_assert!(returned.contains(k), "{k:?}, present throughout, was not returned");
            let e = seen.iter().find(|e| e.partition_key == k.0 && e.row_key == k.1);
            prop_assert_eq!(e.map(value), Some(*v));
        }
    }
    Ok(())
}

fn initial() -> impl Strategy<Value = Vec<(Key, i32)>> {
    prop::collection::vec(((key_text(), key_text()), 0i32..100), 0..30)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn paging_under_writes_on_memory(initial in initial(), steps in prop::collection::vec(step(), 0..60)) {
        let s = TableService::new(Arc::new(MemStore::new()));
        s.tables().create_table(ACCT, TABLE).expect("create table");
        run(&s, initial, steps)?;
    }
}

#[cfg(feature = "rocksdb")]
proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn paging_under_writes_on_rocksdb(initial in initial(), steps in prop::collection::vec(step(), 0..60)) {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = aztable_store::rocks::RocksStore::open(dir.path()).expect("open");
        let s = TableService::new(Arc::new(store));
        s.tables().create_table(ACCT, TABLE).expect("create table");
        run(&s, initial, steps)?;
    }
}
