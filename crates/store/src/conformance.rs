//! One conformance suite for every [`Store`] engine: each check is a function over
//! `&dyn Store`, run for `MemStore` and (with the `rocksdb` feature) for `RocksStore`
//! on a temporary directory and on a copy of a real directory of the one-family layout
//! (`tests/fixtures/datadir/5351c74`, written by the build before heaps had a column
//! family of their own), plus a model-based proptest against a `BTreeMap` on each.

use super::mem::MemStore;
use super::{KvPair, Store, WriteBatch};
use proptest::prelude::*;
use std::collections::BTreeMap;

fn put(s: &dyn Store, k: &[u8], v: &[u8]) {
    let mut b = WriteBatch::new();
    b.put(k.to_vec(), v.to_vec());
    s.write(b).unwrap();
}

/// Scans with both [`Store::scan`] and [`Store::scan_with`], which must agree (and
/// `scan_with` must stop when told to).
fn scan_all(s: &dyn Store, start: &[u8], end: &[u8]) -> Vec<KvPair> {
    let pairs = s.scan(start, end).collect::<Result<Vec<_>, _>>().unwrap();
    let mut visited = Vec::new();
    s.scan_with(start, end, &mut |k, v| {
        visited.push((k.to_vec(), v.to_vec()));
        Ok(true)
    })
    .unwrap();
    assert_eq!(visited, pairs, "scan_with disagrees with scan");
    let mut calls = 0;
    s.scan_with(start, end, &mut |_, _| {
        calls += 1;
        Ok(calls < 2)
    })
    .unwrap();
    assert_eq!(calls, pairs.len().min(2));
    pairs
}

fn keys(pairs: &[KvPair]) -> Vec<Vec<u8>> {
    pairs.iter().map(|(k, _)| k.clone()).collect()
}

fn put_get_delete(s: &dyn Store) {
    assert_eq!(s.get(b"a").unwrap(), None);
    put(s, b"a", b"1");
    put(s, b"", b"empty key");
    put(s, b"b", b"");
    assert_eq!(s.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(s.get(b"").unwrap(), Some(b"empty key".to_vec()));
    assert_eq!(s.get(b"b").unwrap(), Some(Vec::new()));
    put(s, b"a", b"2");
    assert_eq!(s.get(b"a").unwrap(), Some(b"2".to_vec()));
    let mut b = WriteBatch::new();
    b.delete(b"a".to_vec());
    b.delete(b"never there".to_vec());
    s.write(b).unwrap();
    assert_eq!(s.get(b"a").unwrap(), None);
    s.write(WriteBatch::new()).unwrap();
    s.flush().unwrap();
    assert_eq!(s.get(b"b").unwrap(), Some(Vec::new()));
}

fn batch_applies_in_order(s: &dyn Store) {
    put(s, b"k1", b"old");
    put(s, b"r2", b"x");
    let mut b = WriteBatch::new();
    b.put(b"k1".to_vec(), b"new".to_vec());
    b.put(b"k2".to_vec(), b"v".to_vec());
    b.delete(b"k2".to_vec());
    b.put(b"r1".to_vec(), b"x".to_vec());
    b.delete_range(b"r".to_vec(), b"s".to_vec());
    b.put(b"r3".to_vec(), b"after".to_vec());
    s.write(b).unwrap();
    assert_eq!(s.get(b"k1").unwrap(), Some(b"new".to_vec()));
    assert_eq!(s.get(b"k2").unwrap(), None);
    assert_eq!(keys(&scan_all(s, b"r", b"s")), vec![b"r3".to_vec()]);
}

/// A writer replaces ten keys at once, batch after batch; concurrent scans must see
/// either none or all ten, all carrying the same value.
fn batch_is_atomic(s: &dyn Store) {
    let keys: Vec<Vec<u8>> = (0u8..10).map(|i| vec![b'k', i]).collect();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for n in 0u32..300 {
                let mut b = WriteBatch::new();
                for k in &keys {
                    b.put(k.clone(), n.to_be_bytes().to_vec());
                }
                s.write(b).unwrap();
            }
        });
        for _ in 0..300 {
            // each scan sees its own snapshot, so the two kinds are checked separately
            let seen = s.scan(b"k", b"l").collect::<Result<Vec<_>, _>>().unwrap();
            let mut visited = Vec::new();
            s.scan_with(b"k", b"l", &mut |k, v| {
                visited.push((k.to_vec(), v.to_vec()));
                Ok(true)
            })
            .unwrap();
            for seen in [seen, visited] {
                assert!(seen.is_empty() || seen.len() == 10, "partial batch: {}", seen.len());
                assert!(seen.windows(2).all(|w| w[0].1 == w[1].1), "mixed batches");
            }
        }
    });
}

fn scan_order_and_bounds(s: &dyn Store) {
    let all: Vec<Vec<u8>> =
        vec![vec![], vec![0], vec![0, 0], vec![0, 1], vec![1], vec![1, 0xFF], vec![0xFF], vec![0xFF, 0xFF]];
    for k in all.iter().rev() {
        put(s, k, k);
    }
    let got = scan_all(s, &[], &[0xFF, 0xFF, 0xFF]);
    assert_eq!(keys(&got), all);
    assert!(got.iter().all(|(k, v)| k == v));
    // Start inclusive, end exclusive.
    assert_eq!(keys(&scan_all(s, &[0], &[1])), vec![vec![0], vec![0, 0], vec![0, 1]]);
    assert_eq!(keys(&scan_all(s, &[0, 0], &[0, 1])), vec![vec![0, 0]]);
    assert_eq!(keys(&scan_all(s, &[0, 0, 0], &[1, 0xFF])), vec![vec![0, 1], vec![1]]);
    // Empty and inverted ranges.
    assert!(scan_all(s, &[1], &[1]).is_empty());
    assert!(scan_all(s, &[1], &[0]).is_empty());
    assert!(scan_all(s, &[2], &[3]).is_empty());
}

fn delete_range_is_exact(s: &dyn Store) {
    for i in 0u8..=20 {
        put(s, &[i], &[i]);
        put(s, &[i, 0], &[i]);
    }
    let mut b = WriteBatch::new();
    b.delete_range(vec![5, 0], vec![10]);
    b.delete_range(vec![15], vec![15]);
    b.delete_range(vec![18], vec![17]);
    s.write(b).unwrap();
    let got = keys(&scan_all(s, &[], &[0xFF]));
    let mut want = Vec::new();
    for i in 0u8..=20 {
        for k in [vec![i], vec![i, 0]] {
            if !(k >= vec![5, 0] && k < vec![10]) {
                want.push(k);
            }
        }
    }
    assert_eq!(got, want);
    assert_eq!(s.get(&[5]).unwrap(), Some(vec![5]));
    assert_eq!(s.get(&[10]).unwrap(), Some(vec![10]));
    assert_eq!(s.get(&[9, 0]).unwrap(), None);
}

/// Writes (including deletes and a range delete) between steps of an open scan must
/// not deadlock or break it: it stays ascending and in bounds, and still yields every
/// key that existed before and was left untouched.
fn scan_while_writing(s: &dyn Store) {
    for i in 0u16..600 {
        put(s, &i.to_be_bytes(), b"v");
    }
    let (start, end) = (10u16.to_be_bytes(), 590u16.to_be_bytes());
    let mut it = s.scan(&start, &end);
    let mut seen = Vec::new();
    for (step, item) in it.by_ref().enumerate() {
        seen.push(item.unwrap().0);
        if step % 50 == 0 {
            let n = step as u16;
            let mut b = WriteBatch::new();
            b.put(vec![0, 0, 7], b"new".to_vec());
            b.delete((600 - n).to_be_bytes().to_vec());
            b.put((n + 300).to_be_bytes().to_vec(), b"changed".to_vec());
            s.write(b).unwrap();
        }
        if step == 200 {
            break;
        }
    }
    let mut b = WriteBatch::new();
    b.delete_range(400u16.to_be_bytes().to_vec(), 410u16.to_be_bytes().to_vec());
    s.write(b).unwrap();
    seen.extend(it.map(|r| r.unwrap().0));
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "not strictly ascending");
    assert!(seen.iter().all(|k| k.as_slice() >= &start[..] && k.as_slice() < &end[..]));
    // Touched keys: 400..410 (range delete), 450, 500, 550 (deletes; 300, 350 and 450
    // were re-put). The engines may or may not show a change ahead of the cursor.
    for i in (10u16..590).filter(|i| !(400..410).contains(i) && ![450, 500, 550].contains(i)) {
        assert!(seen.contains(&i.to_be_bytes().to_vec()), "missing untouched key {i}");
    }
}

macro_rules! for_each_engine {
    ($($check:ident),* $(,)?) => {
        mod mem_engine {
            $(#[test]
            fn $check() {
                super::$check(&super::MemStore::new());
            })*
        }

        #[cfg(feature = "rocksdb")]
        mod rocks_engine {
            $(#[test]
            fn $check() {
                let dir = tempfile::tempdir().unwrap();
                let store = super::super::rocks::RocksStore::open(dir.path()).unwrap();
                super::$check(&store);
            })*
        }

        #[cfg(feature = "rocksdb")]
        mod rocks_one_family_engine {
            $(#[test]
            fn $check() {
                let dir = tempfile::tempdir().unwrap();
                let store = super::one_family_store(dir.path());
                super::$check(&store);
                drop(store);
                super::assert_one_family(dir.path());
            })*
        }
    };
}

/// The real-bytes directory of the one-family layout.
#[cfg(feature = "rocksdb")]
const ONE_FAMILY_FIXTURE: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/datadir/5351c74/data");

/// Past every key the checks and the server write.
#[cfg(feature = "rocksdb")]
const END_OF_KEYS: [u8; 16] = [0xFF; 16];

/// Asserts that the RocksDB directory `dir` has one column family (its options file
/// names no `heaps` family).
#[cfg(feature = "rocksdb")]
fn assert_one_family(dir: &std::path::Path) {
    let mut options = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("OPTIONS-")) {
            options += &std::fs::read_to_string(path).unwrap();
        }
    }
    assert!(options.contains("[CFOptions \"default\"]"), "no options file in {dir:?}");
    assert!(!options.contains("[CFOptions \"heaps\"]"), "{dir:?} gained a heaps column family");
}

/// Opens a copy of the one-family fixture in `dir`, checks it holds what the earlier build
/// wrote (its tables and entities, heaps in the tables' key ranges), and empties it
/// through the store, so a check starts from no keys on the one-family code path.
#[cfg(feature = "rocksdb")]
fn one_family_store(dir: &std::path::Path) -> super::rocks::RocksStore {
    assert_one_family(std::path::Path::new(ONE_FAMILY_FIXTURE));
    for entry in std::fs::read_dir(ONE_FAMILY_FIXTURE).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    let store = super::rocks::RocksStore::open(dir).unwrap();
    let all = scan_all(&store, &[], &END_OF_KEYS);
    let kind = |k: u8| all.iter().filter(|(key, _)| key.first() == Some(&k)).count();
    assert_eq!(kind(0x01), 2, "the fixture's two table records");
    let heaps = all.iter().filter(|(key, _)| key.first() == Some(&0x02) && key.get(9) == Some(&0xFF)).count();
    assert_eq!((kind(0x02) - heaps, heaps), ONE_FAMILY_ENTITIES, "the fixture's entity heads and heaps");
    assert_eq!(kind(0x05), 0, "no heap of the layout before it");
    let mut b = WriteBatch::new();
    b.delete_range(Vec::new(), END_OF_KEYS.to_vec());
    store.write(b).unwrap();
    assert!(scan_all(&store, &[], &END_OF_KEYS).is_empty());
    store
}

/// How many entity heads and heaps the fixture holds: the 45 entities of `upgrade` and
/// the one of `Second` (`expected.json`), 44 of them with values long enough for a heap.
#[cfg(feature = "rocksdb")]
const ONE_FAMILY_ENTITIES: (usize, usize) = (46, 44);

for_each_engine!(
    put_get_delete,
    batch_applies_in_order,
    batch_is_atomic,
    scan_order_and_bounds,
    delete_range_is_exact,
    scan_while_writing,
);

#[cfg(feature = "rocksdb")]
#[test]
fn rocks_survives_reopen() {
    use super::rocks::RocksStore;
    let dir = tempfile::tempdir().unwrap();
    {
        let s = RocksStore::open(dir.path()).unwrap();
        put(&s, b"flushed", b"1");
        s.flush().unwrap();
        put(&s, b"wal only", b"2");
        put(&s, b"gone", b"3");
        let mut b = WriteBatch::new();
        b.delete(b"gone".to_vec());
        b.put(b"r1".to_vec(), b"x".to_vec());
        b.put(b"r2".to_vec(), b"x".to_vec());
        s.write(b).unwrap();
        let mut b = WriteBatch::new();
        b.delete_range(b"r".to_vec(), b"r2".to_vec());
        s.write(b).unwrap();
    }
    let s = RocksStore::open(dir.path()).unwrap();
    assert_eq!(s.get(b"flushed").unwrap(), Some(b"1".to_vec()));
    assert_eq!(s.get(b"wal only").unwrap(), Some(b"2".to_vec()));
    assert_eq!(s.get(b"gone").unwrap(), None);
    assert_eq!(
        keys(&scan_all(&s, b"", b"\xFF")),
        vec![b"flushed".to_vec(), b"r2".to_vec(), b"wal only".to_vec()]
    );
    drop(s);
    let file = dir.path().join("not a dir");
    std::fs::write(&file, b"x").unwrap();
    assert!(RocksStore::open(&file).is_err());
}

#[derive(Debug, Clone)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    DeleteRange(Vec<u8>, Vec<u8>),
    Batch(Vec<(Vec<u8>, Option<Vec<u8>>)>),
    Scan(Vec<u8>, Vec<u8>),
}

/// Short keys over a tiny alphabet, so ops collide and ranges hit real keys; and keys
/// shaped like entity heads and heaps (kind 0x02, table id 0 or 1, the heap mark 0xFF
/// or not), which `RocksStore` keeps in two column families.
fn small_key() -> impl Strategy<Value = Vec<u8>> {
    let tiny = prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, 0xFF]), 0..4);
    let rest = prop::collection::vec(prop::sample::select(vec![0u8, 1, 0xFF]), 0..3);
    let entity = (0u64..2, any::<bool>(), rest).prop_map(|(table, heap, rest)| {
        let mut k = vec![2u8];
        k.extend_from_slice(&table.to_be_bytes());
        if heap {
            k.push(0xFF);
        }
        k.extend(rest);
        k
    });
    prop_oneof![tiny, entity]
}

fn op() -> impl Strategy<Value = Op> {
    let val = prop::collection::vec(any::<u8>(), 0..4);
    prop_oneof![
        4 => (small_key(), val.clone()).prop_map(|(k, v)| Op::Put(k, v)),
        2 => small_key().prop_map(Op::Delete),
        1 => (small_key(), small_key()).prop_map(|(a, b)| Op::DeleteRange(a, b)),
        1 => prop::collection::vec((small_key(), prop::option::of(val)), 0..5).prop_map(Op::Batch),
        3 => (small_key(), small_key()).prop_map(|(a, b)| Op::Scan(a, b)),
    ]
}

fn run_model(s: &dyn Store, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for op in ops {
        let mut b = WriteBatch::new();
        match op {
            Op::Put(k, v) => {
                b.put(k.clone(), v.clone());
                model.insert(k.clone(), v.clone());
            }
            Op::Delete(k) => {
                b.delete(k.clone());
                model.remove(k);
            }
            Op::DeleteRange(a, e) => {
                b.delete_range(a.clone(), e.clone());
                model.retain(|k, _| !(k >= a && k < e));
            }
            Op::Batch(items) => {
                for (k, v) in items {
                    match v {
                        Some(v) => {
                            b.put(k.clone(), v.clone());
                            model.insert(k.clone(), v.clone());
                        }
                        None => {
                            b.delete(k.clone());
                            model.remove(k);
                        }
                    }
                }
            }
            Op::Scan(a, e) => {
                let want: Vec<KvPair> = model
                    .iter()
                    .filter(|(k, _)| *k >= a && *k < e)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                prop_assert_eq!(scan_all(s, a, e), want);
            }
        }
        if !b.is_empty() {
            s.write(b).unwrap();
        }
    }
    let everything: Vec<KvPair> = model.into_iter().collect();
    prop_assert_eq!(scan_all(s, &[], &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF]), everything);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn mem_matches_model(ops in prop::collection::vec(op(), 0..40)) {
        run_model(&MemStore::new(), &ops)?;
    }

    #[cfg(feature = "rocksdb")]
    #[test]
    fn rocks_matches_model(ops in prop::collection::vec(op(), 0..40)) {
        let dir = tempfile::tempdir().unwrap();
        let store = super::rocks::RocksStore::open(dir.path()).unwrap();
        run_model(&store, &ops)?;
    }

    #[cfg(feature = "rocksdb")]
    #[test]
    fn rocks_one_family_matches_model(ops in prop::collection::vec(op(), 0..40)) {
        let dir = tempfile::tempdir().unwrap();
        let store = one_family_store(dir.path());
        run_model(&store, &ops)?;
        drop(store);
        assert_one_family(dir.path());
    }
}
