//! Unit tests of the partition server over the in-memory store.

use super::scan::HeapCursor;
use super::*;
use aztable_model::{EdmValue, Entity, KeyBound, KeyRange, Ticks};
use aztable_store::mem::MemStore;
use aztable_store::{keys, WriteBatch, WriteOp};
use std::sync::Mutex;

/// A scan of table `tbl` of account `a`.
fn scan<'a>(
    range: &'a KeyRange,
    resume: Option<(&'a str, &'a str)>,
    limit: usize,
    max_examined: usize,
    needs: Option<&'a Needs>,
) -> Scan<'a> {
    Scan { account: "a", table: "tbl", range, resume, limit, max_examined, needs }
}

fn parts() -> Partitions {
    Partitions::new(Arc::new(MemStore::new()))
}

fn entity(pk: &str, rk: &str, n: i32) -> Entity {
    Entity {
        partition_key: pk.into(),
        row_key: rk.into(),
        timestamp: Ticks(1),
        properties: vec![("n".into(), EdmValue::Int32(n))],
    }
}

#[test]
fn tables_are_case_insensitive_and_case_preserving() {
    let p = parts();
    let t = p.catalog().create_table("acct", "MyTable").unwrap();
    assert_eq!(t.name, "MyTable");
    assert!(matches!(p.catalog().create_table("acct", "mytable"), Err(PartitionError::TableAlreadyExists)));
    assert_eq!(p.catalog().lookup_table("acct", "MYTABLE").unwrap().unwrap().name, "MyTable");
    assert!(p.catalog().lookup_table("other", "MyTable").unwrap().is_none());
    // a name that is a prefix of another does not collide
    p.catalog().create_table("acct", "MyTab").unwrap();
    assert_eq!(p.catalog().lookup_table("acct", "mytab").unwrap().unwrap().name, "MyTab");
}

#[test]
fn list_tables_pages() {
    let p = parts();
    for n in ["ccc", "AAA", "bbb", "ddd"] {
        p.catalog().create_table("acct", n).unwrap();
    }
    p.catalog().create_table("zzz", "eee").unwrap();
    let (page, next) = p.catalog().list_tables("acct", None, 2, |_| true).unwrap();
    let names: Vec<_> = page.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["AAA", "bbb"]);
    let (page, next) = p.catalog().list_tables("acct", next.as_deref(), 2, |_| true).unwrap();
    let names: Vec<_> = page.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["ccc", "ddd"]);
    assert_eq!(next, None);
}

#[test]
fn a_full_page_has_a_continuation_only_if_another_table_matches() {
    let p = parts();
    for n in ["zzza0", "zzza1", "ZZZA2", "zzza3", "zzzb4", "zzzb5"] {
        p.catalog().create_table("acct", n).unwrap();
    }
    let in_range = |name: &str| name.to_ascii_lowercase().starts_with("zzza");
    let (page, next) = p.catalog().list_tables("acct", None, 2, in_range).unwrap();
    let names: Vec<_> = page.iter().map(|t| t.name.as_str()).collect();
    assert_eq!((names, next.as_deref()), (vec!["zzza0", "zzza1"], Some("zzza2")));
    // full, and only non-matching tables follow: no continuation
    let (page, next) = p.catalog().list_tables("acct", next.as_deref(), 2, in_range).unwrap();
    let names: Vec<_> = page.iter().map(|t| t.name.as_str()).collect();
    assert_eq!((names, next), (vec!["ZZZA2", "zzza3"], None));
    // a match after non-matching ones: the continuation is the first table after the page
    let (page, next) = p.catalog().list_tables("acct", None, 1, |n| n != "zzza1" && n != "ZZZA2").unwrap();
    assert_eq!((page[0].name.as_str(), next.as_deref()), ("zzza0", Some("zzza1")));
    // full at the end of the catalog
    let (page, next) = p.catalog().list_tables("acct", Some("zzzb5"), 1, |_| true).unwrap();
    assert_eq!((page.len(), next), (1, None));
}

#[test]
fn a_table_listing_cut_by_its_budget_keeps_its_continuation() {
    let p = parts();
    let n = super::catalog::MAX_TABLES_EXAMINED + 2;
    let names: Vec<String> = (0..n).map(|i| format!("t{i:06}")).collect();
    for name in &names {
        p.catalog().create_table("acct", name).unwrap();
    }
    let last = names.last().cloned().unwrap_or_default();
    // a page full at once, then a look ahead for a match that runs out of budget
    let (page, next) =
        p.catalog().list_tables("acct", None, 1, |name| name == "t000000" || name == last).unwrap();
    assert_eq!(page.len(), 1);
    assert_eq!(next.as_deref(), Some("t000001"));
    // a page that never fills, cut by the budget
    let (page, next) = p.catalog().list_tables("acct", None, 5, |name| name == last).unwrap();
    assert!(page.is_empty());
    let cut = format!("t{:06}", super::catalog::MAX_TABLES_EXAMINED);
    assert_eq!(next, Some(cut));
}

#[test]
fn delete_table_drops_entities_and_recreate_is_empty() {
    let p = parts();
    p.catalog().create_table("a", "tbl").unwrap();
    p.writes()
        .transact::<_, PartitionError>("a", "tbl", "p", |t| {
            t.put(&entity("p", "r", 1));
            Ok(())
        })
        .unwrap();
    assert!(p.reads().get_entity("a", "tbl", "p", "r").unwrap().is_some());
    p.catalog().delete_table("a", "tbl").unwrap();
    assert!(matches!(p.reads().get_entity("a", "tbl", "p", "r"), Err(PartitionError::TableNotFound)));
    p.catalog().create_table("a", "TBL").unwrap();
    assert!(p.reads().get_entity("a", "tbl", "p", "r").unwrap().is_none());
    assert_eq!(p.catalog().lookup_table("a", "tbl").unwrap().unwrap().name, "TBL");
    let page = p.scans().scan_entities(&scan(&KeyRange::unbounded(), None, 10, 100, None), |_| true).unwrap();
    assert!(page.entities.is_empty());
}

/// The catalog cache never outlives a Delete Table, whatever lookups run beside it.
#[test]
fn catalog_cache_follows_concurrent_deletes_and_recreates() {
    let p = Arc::new(parts());
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (p, stop) = (p.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = p.catalog().lookup_table("a", "t");
                }
            })
        })
        .collect();
    let mut last_id = 0;
    for round in 0..300 {
        let info = p.catalog().create_table("a", "t").unwrap();
        assert!(info.id > last_id);
        last_id = info.id;
        assert_eq!(p.catalog().lookup_table("a", "T").unwrap().map(|t| t.id), Some(info.id), "round {round}");
        p.catalog().delete_table("a", "t").unwrap();
        assert_eq!(p.catalog().lookup_table("a", "t").unwrap(), None, "round {round}");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        r.join().unwrap();
    }
}

#[test]
fn failed_transaction_writes_nothing() {
    let p = parts();
    p.catalog().create_table("a", "tbl").unwrap();
    let r: Result<(), PartitionError> = p.writes().transact("a", "tbl", "p", |t| {
        t.put(&entity("p", "r", 1));
        Err(PartitionError::TableNotFound)
    });
    assert!(r.is_err());
    assert!(p.reads().get_entity("a", "tbl", "p", "r").unwrap().is_none());
}

#[test]
fn txn_reads_its_own_writes() {
    let p = parts();
    p.catalog().create_table("a", "tbl").unwrap();
    p.writes()
        .transact::<_, PartitionError>("a", "tbl", "p", |t| {
            t.put(&entity("p", "r", 1));
            assert_eq!(t.get("p", "r")?.unwrap().get("n"), Some(&EdmValue::Int32(1)));
            t.delete("p", "r");
            assert!(t.get("p", "r")?.is_none());
            t.put(&entity("p", "r", 2));
            Ok(())
        })
        .unwrap();
    let e = p.reads().get_entity("a", "tbl", "p", "r").unwrap().unwrap();
    assert_eq!(e.get("n"), Some(&EdmValue::Int32(2)));
}

#[test]
fn txn_reads_its_own_writes_with_heaps_whole() {
    // Staged writes are kept encoded: reading one back decodes head and heap.
    let p = parts();
    p.catalog().create_table("a", "tbl").unwrap();
    p.writes()
        .transact::<_, PartitionError>("a", "tbl", "p", |t| {
            for n in [2, 3, 4] {
                let e = versioned(n);
                t.put(&e);
                assert_eq!(t.get("p", "r")?, Some(e));
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(p.reads().get_entity("a", "tbl", "p", "r").unwrap(), Some(versioned(4)));
}

#[test]
fn a_transaction_writes_heads_first_then_heaps() {
    let store = MemStore::new();
    let mut t = Txn::new(&store, 7);
    for rk in ["b", "a", "c"] {
        let mut e = versioned(2);
        e.row_key = rk.into();
        t.put(&e);
    }
    t.delete("p", "d");
    let ops: Vec<(bool, &[u8])> = Vec::new();
    let batch = t.into_batch();
    let ops = batch.ops.iter().fold(ops, |mut ops, op| {
        match op {
            WriteOp::Put(k, _) => ops.push((keys::is_entity_key(k), k)),
            WriteOp::Delete(k) => ops.push((keys::is_entity_key(k), k)),
            WriteOp::DeleteRange(..) => panic!("no range deletes here"),
        }
        ops
    });
    let heads: Vec<&[u8]> = ops.iter().take_while(|(head, _)| *head).map(|(_, k)| *k).collect();
    let heaps: Vec<&[u8]> = ops.iter().skip(heads.len()).map(|(_, k)| *k).collect();
    let expected: Vec<Vec<u8>> = ["b", "a", "c", "d"].iter().map(|rk| keys::entity_key(7, "p", rk)).collect();
    assert_eq!(
        heads,
        expected.iter().map(Vec::as_slice).collect::<Vec<_>>(),
        "heads first, in staging order"
    );
    let heap_keys: Vec<Vec<u8>> = expected.iter().map(|k| keys::heap_key(k)).collect();
    assert_eq!(heaps, heap_keys.iter().map(Vec::as_slice).collect::<Vec<_>>(), "then heaps, none a head");
}

#[test]
fn scan_pages_in_key_order_with_continuation() {
    let p = parts();
    p.catalog().create_table("a", "tbl").unwrap();
    for pk in ["b", "a", ""] {
        for rk in ["2", "1"] {
            p.writes()
                .transact::<_, PartitionError>("a", "tbl", pk, |t| {
                    t.put(&entity(pk, rk, 0));
                    Ok(())
                })
                .unwrap();
        }
    }
    let mut seen = Vec::new();
    let mut start: Option<(String, String)> = None;
    loop {
        let page = p
            .scans()
            .scan_entities(
                &scan(
                    &KeyRange::unbounded(),
                    start.as_ref().map(|(a, b)| (a.as_str(), b.as_str())),
                    4,
                    100,
                    None,
                ),
                |_| true,
            )
            .unwrap();
        seen.extend(page.entities.into_iter().map(|e| (e.partition_key, e.row_key)));
        match page.next {
            Some(n) => start = Some(n),
            None => break,
        }
    }
    let want: Vec<(String, String)> = [("", "1"), ("", "2"), ("a", "1"), ("a", "2"), ("b", "1"), ("b", "2")]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(seen, want);
}

#[test]
fn concurrent_read_modify_write_in_one_partition_is_serialized() {
    let p = Arc::new(parts());
    p.catalog().create_table("a", "tbl").unwrap();
    p.writes()
        .transact::<_, PartitionError>("a", "tbl", "p", |t| {
            t.put(&entity("p", "r", 0));
            Ok(())
        })
        .unwrap();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let p = Arc::clone(&p);
            std::thread::spawn(move || {
                for _ in 0..250 {
                    p.writes()
                        .transact::<_, PartitionError>("a", "tbl", "p", |t| {
                            let mut e = t.get("p", "r")?.unwrap();
                            let Some(EdmValue::Int32(n)) = e.get("n").cloned() else { panic!() };
                            e.set("n".into(), EdmValue::Int32(n + 1));
                            t.put(&e);
                            Ok(())
                        })
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let e = p.reads().get_entity("a", "tbl", "p", "r").unwrap().unwrap();
    assert_eq!(e.get("n"), Some(&EdmValue::Int32(1000)));
}

#[test]
fn ranged_scans_respect_positions() {
    let p = parts();
    p.catalog().create_table("a", "tbl").unwrap();
    for pk in ["a", "b", "c"] {
        for rk in ["1", "2", "3"] {
            p.writes()
                .transact::<_, PartitionError>("a", "tbl", pk, |t| {
                    t.put(&entity(pk, rk, 0));
                    Ok(())
                })
                .unwrap();
        }
    }
    let scan = |lower: Option<KeyBound>, upper: Option<KeyBound>, resume: Option<(&str, &str)>| {
        let range = KeyRange { lower, upper };
        p.scans()
            .scan_entities(&scan(&range, resume, 100, 1000, None), |_| true)
            .unwrap()
            .entities
            .into_iter()
            .map(|e| format!("{}{}", e.partition_key, e.row_key))
            .collect::<Vec<_>>()
    };
    let b = |pk: &str, rk: Option<&str>, inclusive| {
        Some(KeyBound { pk: pk.into(), rk: rk.map(Into::into), inclusive })
    };
    // a whole partition: from its first row, through its last
    let (ps, pe) = (|pk| b(pk, None, true), |pk| b(pk, None, true));
    assert_eq!(scan(ps("b"), pe("b"), None), ["b1", "b2", "b3"]);
    assert_eq!(scan(b("b", Some("2"), true), b("c", Some("1"), true), None), ["b2", "b3", "c1"]);
    assert_eq!(scan(b("b", Some("2"), false), b("c", Some("1"), false), None), ["b3"]);
    // after partition a's last row, before partition c's first
    assert_eq!(scan(b("a", None, false), b("c", None, false), None), ["b1", "b2", "b3"]);
    assert_eq!(scan(ps("b"), pe("b"), Some(("b", "3"))), ["b3"]);
    assert_eq!(scan(ps("b"), pe("b"), Some(("a", "9"))), ["b1", "b2", "b3"]);
    assert!(scan(ps("c"), pe("a"), None).is_empty());
    assert!(scan(ps("b"), pe("b"), Some(("c", "1"))).is_empty());
}

/// An entity whose `big` (a heap value when present) and `n` always agree.
fn versioned(n: u32) -> Entity {
    let mut properties = vec![("n".into(), EdmValue::Int32(n as i32))];
    if n % 2 == 0 {
        properties.push(("big".into(), EdmValue::String(format!("{n:08}").repeat(20))));
    }
    Entity { partition_key: "p".into(), row_key: "r".into(), timestamp: Ticks(i64::from(n) + 1), properties }
}

fn assert_consistent(e: &Entity) {
    let Some(EdmValue::Int32(n)) = e.get("n") else { panic!("no n: {e:?}") };
    assert_eq!(e, &versioned(*n as u32), "a read mixed two writes");
}

/// Reads without the partition lock (point reads, scans with a filter reading the
/// heap value or not, with a filter on the keys only, and without a filter) never return
/// a head of one write with the heap of another, while a writer keeps replacing the
/// entity, with and without a heap.
#[test]
fn reads_never_mix_heads_and_heaps_of_different_writes() {
    let p = Arc::new(parts());
    p.catalog().create_table("a", "tbl").unwrap();
    let write = |n: u32| {
        p.writes()
            .transact::<_, PartitionError>("a", "tbl", "p", |t| {
                t.get("p", "r")?;
                t.put(&versioned(n));
                Ok(())
            })
            .unwrap()
    };
    write(0);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reading = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let readers: Vec<_> = (0..5)
        .map(|kind| {
            let (p, stop, reading) = (p.clone(), stop.clone(), reading.clone());
            std::thread::spawn(move || {
                let mut reads = 0u32;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let found = match kind {
                        0 => p.reads().get_entity("a", "tbl", "p", "r").unwrap().into_iter().collect(),
                        // no filter: heaps come from the cursor in step with the heads
                        3 => {
                            p.scans()
                                .scan_entities(&scan(&KeyRange::unbounded(), None, 10, 100, None), |_| true)
                                .unwrap()
                                .entities
                        }
                        // a filter on the keys only: heaps from the cursor too
                        4 => {
                            let needs = Needs::new(Vec::new(), true, None);
                            let all = KeyRange::unbounded();
                            p.scans()
                                .scan_entities(&scan(&all, None, 10, 100, Some(&needs)), |row| {
                                    row.row_key() == "r"
                                })
                                .unwrap()
                                .entities
                        }
                        n => {
                            let props = if n == 1 { vec!["big".to_owned()] } else { vec!["n".to_owned()] };
                            let needs = Needs::new(props, true, None);
                            let all = KeyRange::unbounded();
                            p.scans()
                                .scan_entities(&scan(&all, None, 10, 100, Some(&needs)), |row| {
                                    row.row_key() == "r"
                                        && (n != 1
                                            || row.property("big").is_some()
                                            || row.property("n").is_none())
                                })
                                .unwrap()
                                .entities
                        }
                    };
                    for e in &found {
                        assert_consistent(e);
                    }
                    if reads == 0 {
                        reading.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    wait_until_under_way(&reading, 5);
    for n in 1..3000 {
        write(n);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    // the last write was odd: no heap left behind
    let e = p.reads().get_entity("a", "tbl", "p", "r").unwrap().unwrap();
    assert_eq!(e, versioned(2999));
    let (start, end) = keys::table_heaps_range(p.catalog().lookup_table("a", "tbl").unwrap().unwrap().id);
    assert_eq!(p.store().scan(&start, &end).count(), 0);
    // and a delete removes the heap with the head
    write(3000);
    assert_eq!(p.store().scan(&start, &end).count(), 1);
    p.writes()
        .transact::<_, PartitionError>("a", "tbl", "p", |t| {
            t.delete("p", "r");
            Ok(())
        })
        .unwrap();
    assert_eq!(p.store().scan(&start, &end).count(), 0);
    // Delete Table drops heaps with heads
    write(3002);
    assert_eq!(p.store().scan(&start, &end).count(), 1);
    p.catalog().delete_table("a", "tbl").unwrap();
    assert_eq!(p.store().scan(&start, &end).count(), 0);
}

/// A store that counts point reads, to see which reads `Txn::learn_absent` saved.
struct CountingStore {
    inner: MemStore,
    gets: std::sync::atomic::AtomicUsize,
}

impl Store for CountingStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.gets.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.get(key)
    }
    fn write(&self, batch: aztable_store::WriteBatch) -> Result<(), StoreError> {
        self.inner.write(batch)
    }
    fn scan<'a>(
        &'a self,
        start: &[u8],
        end: &[u8],
    ) -> Box<dyn Iterator<Item = Result<aztable_store::KvPair, StoreError>> + 'a> {
        self.inner.scan(start, end)
    }
    fn flush(&self) -> Result<(), StoreError> {
        self.inner.flush()
    }
}

proptest::proptest! {
    /// Whatever the walk of `learn_absent` concludes, every read in the transaction
    /// answers as the store does (a key it calls absent is never stored, including keys
    /// of neighbouring partitions that sort between the wanted ones); and when few stored
    /// rows lie between the wanted keys, every absent key is read without a lookup.
    #[test]
    fn learn_absent_agrees_with_the_store(
        stored in proptest::collection::btree_set("[ab]{0,4}", 0..40),
        neighbours in proptest::collection::btree_set("[ab]{0,3}", 0..8),
        wanted in proptest::collection::vec("[ab]{0,4}", 0..24),
    ) {
        let store = Arc::new(CountingStore { inner: MemStore::new(), gets: Default::default() });
        let p = Partitions::new(store.clone());
        p.catalog().create_table("a", "tbl").unwrap();
        p.catalog().create_table("a", "tbm").unwrap();
        for (table, pk, rks) in [("tbl", "p", &stored), ("tbl", "o", &neighbours), ("tbl", "p\u{0}", &neighbours),
            ("tbl", "pa", &neighbours), ("tbm", "p", &neighbours)]
        {
            p.writes().transact::<_, PartitionError>("a", table, pk, |t| {
                rks.iter().for_each(|rk| t.put(&entity(pk, rk, 1)));
                Ok(())
            })
            .unwrap();
        }
        let distinct: std::collections::BTreeSet<&String> = wanted.iter().collect();
        let between = match (distinct.first(), distinct.last()) {
            (Some(lo), Some(hi)) => stored.iter().filter(|rk| (*lo..=*hi).contains(rk)).count(),
            _ => 0,
        };
        let before = store.gets.load(std::sync::atomic::Ordering::Relaxed);
        let found = p
            .writes()
            .transact::<_, PartitionError>("a", "tbl", "p", |t| {
                t.learn_absent("p", wanted.iter().map(String::as_str))?;
                Ok(wanted.iter().map(|rk| t.get("p", rk).map(|e| e.is_some())).collect::<Result<Vec<_>, _>>()?)
            })
            .unwrap();
        let gets = store.gets.load(std::sync::atomic::Ordering::Relaxed) - before;
        let expected: Vec<bool> = wanted.iter().map(|rk| stored.contains(rk)).collect();
        proptest::prop_assert_eq!(found, expected);
        let present_lookups = wanted.iter().filter(|rk| stored.contains(*rk)).count();
        if distinct.len() >= 8 && between < 2 * distinct.len() + 8 {
            // only the stored keys are looked up (heads; the test entities have no heap)
            proptest::prop_assert_eq!(gets, present_lookups);
        } else {
            proptest::prop_assert!(gets <= wanted.len());
        }
    }
}

/// Waits until `n` reader threads have each counted their first read in `reading`, so
/// that the writes start with every reader under way (a fast run could otherwise finish
/// them before a reader read anything).
fn wait_until_under_way(reading: &std::sync::atomic::AtomicUsize, n: usize) {
    while reading.load(std::sync::atomic::Ordering::Relaxed) < n {
        std::thread::yield_now();
    }
}

/// Point reads go through the entity cache without any lock, yet never return an
/// entity older than the last acknowledged write: readers note the acknowledged version
/// before each read and check what they get is at least that, while writers replace
/// and delete a few hot entities (with and without a heap) and readers keep filling
/// the cache with what they read.
#[test]
fn point_reads_never_go_back_past_an_acknowledged_write() {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    const ROWS: usize = 3;
    let p = Arc::new(parts());
    p.catalog().create_table("a", "tbl").unwrap();
    // acknowledged version per row; versions 4k+1 are deletes
    let acked: Arc<Vec<AtomicU32>> = Arc::new((0..ROWS).map(|_| AtomicU32::new(0)).collect());
    // the latest delete begun per row (set before it is written)
    let deleting: Arc<Vec<AtomicU32>> = Arc::new((0..ROWS).map(|_| AtomicU32::new(0)).collect());
    let row = |i: usize, n: u32| {
        let mut e = versioned(n);
        e.row_key = format!("r{i}");
        e
    };
    for i in 0..ROWS {
        p.writes()
            .transact::<_, PartitionError>("a", "tbl", "p", |t| {
                t.put(&row(i, 0));
                Ok(())
            })
            .unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let reading = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let readers: Vec<_> = (0..3)
        .map(|r| {
            let (p, stop, acked, deleting) = (p.clone(), stop.clone(), acked.clone(), deleting.clone());
            let reading = reading.clone();
            std::thread::spawn(move || {
                let mut reads = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    let i = (reads as usize + r) % ROWS;
                    let before = acked[i].load(Ordering::SeqCst);
                    let got = p.reads().get_entity("a", "tbl", "p", &format!("r{i}")).unwrap();
                    match got {
                        Some(e) => {
                            let Some(EdmValue::Int32(n)) = e.get("n") else { panic!("no n: {e:?}") };
                            let n = *n as u32;
                            assert!(n % 4 != 1, "read a deleted version");
                            assert!(
                                n >= before,
                                "row {i}: read version {n} after version {before} was acknowledged"
                            );
                            assert_eq!(e, row(i, n), "a read mixed two writes");
                        }
                        // only a delete begun at or after the acknowledged version explains it
                        None => assert!(
                            deleting[i].load(Ordering::SeqCst) >= before
                                && deleting[i].load(Ordering::SeqCst) > 0,
                            "row {i} missing though version {before} was acknowledged and no delete followed"
                        ),
                    }
                    if reads == 0 {
                        reading.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    wait_until_under_way(&reading, 3);
    for n in 1..20_000u32 {
        let i = n as usize % ROWS;
        p.writes()
            .transact::<_, PartitionError>("a", "tbl", "p", |t| {
                if n % 4 == 1 {
                    deleting[i].store(n, Ordering::SeqCst);
                    t.delete("p", &format!("r{i}"));
                } else {
                    t.put(&row(i, n));
                }
                Ok(())
            })
            .unwrap();
        acked[i].store(n, Ordering::SeqCst);
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
}

/// A writer whose partition is busy waits as a parked task: on a one-thread runtime the
/// other tasks (here a point read) still run, and the writer goes on once the turn is
/// free. With the turn a blocking lock, the read would never run.
#[test]
fn a_writer_waiting_for_its_turn_does_not_hold_the_thread() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let p = Arc::new(parts());
    p.catalog().create_table("a", "tbl").unwrap();
    p.writes()
        .transact::<_, PartitionError>("a", "tbl", "p", |t| {
            t.put(&entity("p", "old", 1));
            Ok(())
        })
        .unwrap();
    rt.block_on(async {
        // another writer of the same partition (the table name in another case) is busy
        let busy = p.writes.turns.of("a", "TBL", "p").lock.lock().await;
        let writer = tokio::spawn({
            let p = p.clone();
            async move {
                p.writes()
                    .transact_in_turn::<_, PartitionError>("a", "tbl", "p", |t| {
                        t.put(&entity("p", "new", 2));
                        Ok(())
                    })
                    .await
            }
        });
        tokio::task::yield_now().await;
        assert!(!writer.is_finished(), "the writer waits for its turn");
        let reader = tokio::spawn({
            let p = p.clone();
            async move { p.reads().get_entity("a", "tbl", "p", "old").map(|e| e.is_some()) }
        });
        assert!(reader.await.unwrap().unwrap(), "a read runs while the writer waits");
        assert!(p.reads().get_entity("a", "tbl", "p", "new").unwrap().is_none());
        drop(busy);
        writer.await.unwrap().unwrap();
    });
    assert!(p.reads().get_entity("a", "tbl", "p", "new").unwrap().is_some());
}

/// A writer that leaves another waiting for the partition lets it commit before it
/// returns, and a waiting writer that is dropped no longer counts as waiting.
#[test]
fn a_writer_hands_its_turn_to_the_next_before_returning() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let p = Arc::new(parts());
    p.catalog().create_table("a", "tbl").unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    rt.block_on(async {
        let busy = p.writes.turns.of("a", "tbl", "p").lock.lock().await;
        let writer = |name: &'static str| {
            let (p, log) = (p.clone(), log.clone());
            tokio::spawn(async move {
                p.writes()
                    .transact_in_turn::<_, PartitionError>("a", "tbl", "p", |t| {
                        t.put(&entity("p", name, 1));
                        log.lock().unwrap().push(format!("{name} commits"));
                        Ok(())
                    })
                    .await
                    .unwrap();
                log.lock().unwrap().push(format!("{name} returns"));
            })
        };
        let (first, second) = (writer("first"), writer("second"));
        let dropped = writer("dropped");
        tokio::task::yield_now().await;
        assert!(p.writes.turns.of("a", "tbl", "p").contended());
        dropped.abort();
        assert!(dropped.await.unwrap_err().is_cancelled());
        drop(busy);
        first.await.unwrap();
        second.await.unwrap();
        assert!(!p.writes.turns.of("a", "tbl", "p").contended(), "no writer is left counted");
    });
    let log = log.lock().unwrap().clone();
    assert_eq!(log, ["first commits", "second commits", "second returns", "first returns"]);
    assert!(p.reads().get_entity("a", "tbl", "p", "dropped").unwrap().is_none());
}

/// Read-modify-write increments through turns from many tasks on two threads lose
/// nothing.
#[test]
fn writers_in_turn_lose_no_update() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    let p = Arc::new(parts());
    p.catalog().create_table("a", "tbl").unwrap();
    rt.block_on(async {
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let p = p.clone();
                tokio::spawn(async move {
                    for _ in 0..50 {
                        p.writes()
                            .transact_in_turn::<_, PartitionError>("a", "tbl", "p", |t| {
                                let n = match t.get("p", "c")? {
                                    Some(e) => match e.properties[0].1 {
                                        EdmValue::Int32(n) => n,
                                        _ => unreachable!(),
                                    },
                                    None => 0,
                                };
                                t.put(&entity("p", "c", n + 1));
                                Ok(())
                            })
                            .await
                            .unwrap();
                        tokio::task::yield_now().await;
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    let e = p.reads().get_entity("a", "tbl", "p", "c").unwrap().unwrap();
    assert_eq!(e.properties[0].1, EdmValue::Int32(400));
}

/// A store written by a build that kept heaps under their own key kind: entities with
/// and without long values over two tables, their heaps moved to legacy keys by hand.
fn store_with_legacy_heaps(store: Arc<dyn Store>, entities: u32) -> Vec<Entity> {
    let p = Partitions::new(store.clone());
    let mut written = Vec::new();
    for table in ["one", "two"] {
        let id = p.catalog().create_table("a", table).unwrap().id;
        for n in 0..entities {
            let mut e = versioned(n);
            e.row_key = format!("r{n:05}");
            p.writes()
                .transact::<_, PartitionError>("a", table, "p", |t| {
                    t.put(&e);
                    Ok(())
                })
                .unwrap();
            let key = keys::entity_key(id, "p", &e.row_key);
            if let Some(heap) = store.get(&keys::heap_key(&key)).unwrap() {
                let mut legacy = key.clone();
                legacy[0] = 0x05;
                let mut batch = WriteBatch::new();
                batch.delete(keys::heap_key(&key));
                batch.put(legacy, heap);
                store.write(batch).unwrap();
            }
            written.push(e);
        }
    }
    written
}

fn legacy_heaps_move_into_their_tables(store: Arc<dyn Store>) {
    // more heaps than one move batch holds
    let written = store_with_legacy_heaps(store.clone(), 2100);
    let (start, end) = keys::legacy_heaps_range();
    assert_eq!(store.scan(&start, &end).count(), 2 * 1050);
    assert_eq!(move_legacy_heaps(store.as_ref()).unwrap(), 2 * 1050);
    assert_eq!(store.scan(&start, &end).count(), 0, "no legacy heap is left");
    assert_eq!(move_legacy_heaps(store.as_ref()).unwrap(), 0, "a second run has nothing to do");
    let p = Partitions::new(store.clone());
    for table in ["one", "two"] {
        let id = p.catalog().lookup_table("a", table).unwrap().unwrap().id;
        let (hs, he) = keys::table_heaps_range(id);
        assert_eq!(store.scan(&hs, &he).count(), 1050);
        for e in written.iter().step_by(97) {
            assert_eq!(p.reads().get_entity("a", table, "p", &e.row_key).unwrap().as_ref(), Some(e));
        }
        let all = KeyRange::unbounded();
        let whole = Scan { table, ..scan(&all, None, 5000, 5000, None) };
        let page = p.scans().scan_entities(&whole, |_| true).unwrap();
        assert_eq!(page.entities, written[..2100], "a scan reads every heap in step with its head");
    }
    // deleting a table now removes its heaps with its heads
    p.catalog().delete_table("a", "one").unwrap();
    let id = p.catalog().lookup_table("a", "two").unwrap().unwrap().id;
    let (all_start, _) = keys::table_entities_range(0);
    let (_, two_end) = keys::table_entities_range(id);
    assert_eq!(store.scan(&all_start, &two_end).count(), 2 * 2100 - 1050);
}

#[test]
fn legacy_heaps_move_into_their_tables_in_memory() {
    legacy_heaps_move_into_their_tables(Arc::new(MemStore::new()));
}

#[cfg(feature = "rocksdb")]
#[test]
fn legacy_heaps_move_into_their_tables_on_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    legacy_heaps_move_into_their_tables(Arc::new(
        aztable_store::rocks::RocksStore::open(dir.path()).unwrap(),
    ));
}

/// A move cut short (here: its legacy range not yet deleted, as after a crash between
/// the copies and the delete) is finished by the next run, and reads are right.
#[test]
fn an_interrupted_heap_move_is_finished_by_the_next() {
    let store: Arc<dyn Store> = Arc::new(MemStore::new());
    let written = store_with_legacy_heaps(store.clone(), 10);
    let (start, end) = keys::legacy_heaps_range();
    // copy the first three heaps, as a cut-short run would have
    for (k, v) in store.scan(&start, &end).take(3).map(Result::unwrap).collect::<Vec<_>>() {
        let mut batch = WriteBatch::new();
        batch.put(keys::heap_key_of_legacy(&k).unwrap(), v);
        store.write(batch).unwrap();
    }
    assert_eq!(move_legacy_heaps(store.as_ref()).unwrap(), 10);
    let p = Partitions::new(store);
    for e in &written[..10] {
        assert_eq!(p.reads().get_entity("a", "one", "p", &e.row_key).unwrap().as_ref(), Some(e));
    }
}

proptest::proptest! {
    /// The heap cursor of a scan finds for each key it is asked (in ascending order, with
    /// gaps short and long) what a point read of that key finds, whichever keys have heaps.
    #[test]
    fn the_heap_cursor_finds_what_point_reads_find(
        stored in proptest::collection::vec(proptest::bool::ANY, 0..60),
        asked in proptest::collection::vec(proptest::bool::weighted(0.3), 0..60),
    ) {
        let store = MemStore::new();
        let key = |i: usize| keys::entity_key(1, "p", &format!("r{i:03}"));
        let mut batch = WriteBatch::new();
        for (i, _) in stored.iter().enumerate().filter(|(_, s)| **s) {
            batch.put(key(i), vec![0]);
            batch.put(keys::heap_key(&key(i)), vec![i as u8]);
        }
        // a heap of the next table, which no cursor of table 1 may return
        batch.put(keys::heap_key(&keys::entity_key(2, "p", "r000")), vec![0xEE]);
        store.write(batch).unwrap();
        let (_, to) = keys::table_heads_range(1);
        let mut cursor = HeapCursor::new(&store, &to);
        for (i, _) in asked.iter().enumerate().filter(|(_, a)| **a) {
            let heap = keys::heap_key(&key(i));
            let found = cursor.find(&heap).unwrap().map(<[u8]>::to_vec);
            proptest::prop_assert_eq!(found, store.get(&heap).unwrap(), "row {}", i);
        }
    }
}

/// With a store that syncs its writes, a write through [`Writes::transact_in_turn`]
/// returns only once a log sync covers it, whichever writer ran that sync.
#[test]
fn synced_writes_in_turn_return_only_once_synced() {
    use super::commit::tests::Unsynced;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    let store = Arc::new(Unsynced::default());
    let p = Arc::new(Partitions::new(store.clone()));
    p.catalog().create_table("a", "tbl").unwrap();
    let table_id = p.catalog().table_id("a", "tbl").unwrap().unwrap();
    let before = store.syncs.load(std::sync::atomic::Ordering::SeqCst);
    rt.block_on(async {
        let writers: Vec<_> = (0..64)
            .map(|i| {
                let (p, store) = (p.clone(), store.clone());
                tokio::spawn(async move {
                    let (pk, rk) = (format!("p{}", i % 4), format!("r{i}"));
                    p.writes()
                        .transact_in_turn::<_, PartitionError>("a", "tbl", &pk, |t| {
                            t.put(&entity(&pk, &rk, i));
                            Ok(())
                        })
                        .await
                        .unwrap();
                    // acknowledged: it must be synced (in the inner store), not only written
                    let key = keys::entity_key(table_id, &pk, &rk);
                    assert!(store.inner.get(&key).unwrap().is_some(), "{rk} returned before its sync");
                })
            })
            .collect();
        for w in writers {
            w.await.unwrap();
        }
    });
    assert!(store.pending.lock().unwrap().is_empty());
    let syncs = store.syncs.load(std::sync::atomic::Ordering::SeqCst) - before;
    assert!((1..=64).contains(&syncs), "{syncs} syncs for 64 writes");
}

/// A failed sync fails the request, as a failed write does.
#[test]
fn a_failed_sync_fails_the_write() {
    use super::commit::tests::Unsynced;
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let store = Arc::new(Unsynced::default());
    let p = Partitions::new(store.clone());
    p.catalog().create_table("a", "tbl").unwrap();
    store.fail_next.store(true, std::sync::atomic::Ordering::SeqCst);
    let write = |rk: &'static str| {
        p.writes().transact_in_turn::<_, PartitionError>("a", "tbl", "p", move |t| {
            t.put(&entity("p", rk, 1));
            Ok(())
        })
    };
    assert!(matches!(rt.block_on(write("r1")), Err(PartitionError::Store(_))));
    // the next write's sync covers both
    rt.block_on(write("r2")).unwrap();
    assert!(store.pending.lock().unwrap().is_empty());
}

proptest::proptest! {
    /// Paging through the table catalog with random page sizes and a random name
    /// predicate returns exactly the matching tables in lowercase-name order, each once,
    /// and a page has a continuation only while a matching table remains at or after it.
    #[test]
    fn table_paging_ends_with_the_last_match(
        names in proptest::collection::btree_set("[aAbB0]{3,5}", 0..30),
        wanted in "[ab]{1,3}",
        tops in proptest::collection::vec(1usize..5, 1..4),
    ) {
        let p = parts();
        let mut created: Vec<String> = Vec::new();
        for n in &names {
            // names equal but for their case are one table
            if p.catalog().create_table("acct", n).is_ok() {
                created.push(n.clone());
            }
        }
        created.sort_by_key(|n| n.to_ascii_lowercase());
        let keep = |n: &str| n.to_ascii_lowercase().starts_with(&wanted);
        let expected: Vec<&String> = created.iter().filter(|n| keep(n)).collect();
        let mut got: Vec<String> = Vec::new();
        let mut from: Option<String> = None;
        for page in 0.. {
            proptest::prop_assert!(page <= created.len(), "no progress");
            let top = tops[page % tops.len()];
            let (tables, next) = p.catalog().list_tables("acct", from.as_deref(), top, keep).unwrap();
            proptest::prop_assert!(tables.len() <= top);
            got.extend(tables.into_iter().map(|t| t.name));
            let Some(next) = next else { break };
            let remains = created.iter().any(|n| n.to_ascii_lowercase() >= next && keep(n));
            proptest::prop_assert!(remains, "a continuation {} with no match after it", next);
            from = Some(next);
        }
        proptest::prop_assert_eq!(got.iter().collect::<Vec<_>>(), expected);
    }
}
