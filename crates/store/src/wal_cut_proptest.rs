//! Property test of recovery from a write-ahead log cut short: a sequence of single
//! writes and change sets of several operations (entities with and without heaps,
//! deletes) is written to a RocksDB store and left only in the log (the memtable is
//! never flushed), the log is cut at a random offset (often inside a change set's
//! record, which spans log blocks when its heaps are large), and the directory is
//! opened again the normal way. The oracle: the store is exactly the model after the
//! writes whose records end before the cut (every change set whole or absent, nothing
//! acknowledged before the cut lost), and each head decodes with a heap of its own
//! write, no heap without its head. A refusal to open that names the log is accepted
//! too; wrong rows never are.
//!
//! Seeded (the same cases every run); `AZTABLE_WALCUT_SEED=<n>` explores others.

use super::codec::{decode_entity, encode_entity, heap_needed};
use super::rocks::RocksStore;
use super::{keys, Store, StoreError, WriteBatch};
use aztable_model::{EdmValue, Entity, Ticks};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const TABLE: u64 = 1;
const PK: &str = "p";
/// Rows the writes pick from.
const ROWS: u8 = 12;

/// One operation of a write: put row `rk` (with a long value of this many bytes, kept
/// in the heap, or none) or delete it.
#[derive(Debug, Clone)]
enum Op {
    Put { rk: u8, long: Option<usize> },
    Delete { rk: u8 },
}

impl Op {
    fn rk(&self) -> u8 {
        match self {
            Op::Put { rk, .. } | Op::Delete { rk } => *rk,
        }
    }
}

fn op() -> impl Strategy<Value = Op> {
    let long = prop_oneof![1 => Just(None), 3 => (65usize..6000).prop_map(Some)];
    prop_oneof![
        4 => (0..ROWS, long).prop_map(|(rk, long)| Op::Put { rk, long }),
        1 => (0..ROWS).prop_map(|rk| Op::Delete { rk }),
    ]
}

/// A write: one operation, or a change set of up to eight on distinct rows.
fn write() -> impl Strategy<Value = Vec<Op>> {
    prop_oneof![
        op().prop_map(|o| vec![o]),
        prop::collection::vec(op(), 2..=8).prop_map(|ops| {
            let mut seen = Vec::new();
            ops.into_iter()
                .filter(|o| {
                    !seen.contains(&o.rk()) && {
                        seen.push(o.rk());
                        true
                    }
                })
                .collect()
        }),
    ]
}

fn row_key(rk: u8) -> String {
    format!("r{rk:02}")
}

/// The long value write `w` puts in row `rk`: its length as drawn, its bytes naming
/// the write and the row.
fn long_value(w: usize, rk: u8, len: usize) -> String {
    let tag = format!("w{w:04}r{rk:02}:");
    tag.chars().chain(std::iter::repeat('L')).take(len.max(tag.len())).collect()
}

/// The entity write `w` puts in row `rk`.
fn entity(w: usize, rk: u8, long: Option<usize>) -> Entity {
    let mut properties = vec![("W".to_owned(), EdmValue::Int32(w as i32))];
    if let Some(len) = long {
        properties.push(("L".to_owned(), EdmValue::String(long_value(w, rk, len))));
    }
    Entity { partition_key: PK.into(), row_key: row_key(rk), timestamp: Ticks(1 + w as i64), properties }
}

/// The store batch of write `w`: each put's head, and its heap or the removal of an
/// earlier one; each delete's head and heap.
fn batch(w: usize, ops: &[Op]) -> WriteBatch {
    let mut b = WriteBatch::new();
    for op in ops {
        let head_key = keys::entity_key(TABLE, PK, &row_key(op.rk()));
        let heap_key = keys::heap_key(&head_key);
        match op {
            Op::Put { rk, long } => {
                let encoded = encode_entity(&entity(w, *rk, *long));
                b.put(head_key, encoded.head);
                match encoded.heap {
                    Some(heap) => b.put(heap_key, heap),
                    None => b.delete(heap_key),
                }
            }
            Op::Delete { .. } => {
                b.delete(head_key);
                b.delete(heap_key);
            }
        }
    }
    b
}

/// The rows after each prefix of the writes: `states[k]` after the first `k`.
fn states(writes: &[Vec<Op>]) -> Vec<BTreeMap<String, Entity>> {
    let mut state = BTreeMap::new();
    let mut out = vec![state.clone()];
    for (w, ops) in writes.iter().enumerate() {
        for op in ops {
            match op {
                Op::Put { rk, long } => {
                    state.insert(row_key(*rk), entity(w, *rk, *long));
                }
                Op::Delete { rk } => {
                    state.remove(&row_key(*rk));
                }
            }
        }
        out.push(state.clone());
    }
    out
}

/// The newest write-ahead log of `dir`.
fn newest_log(dir: &Path) -> PathBuf {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs.pop().expect("a write-ahead log")
}

/// Every row of the table as stored: each head decoded with its heap (a heap of
/// another write fails); a heap left without a head that needs it fails.
fn stored_rows(store: &RocksStore) -> Result<BTreeMap<String, Entity>, String> {
    let (start, end) = keys::table_entities_range(TABLE);
    let mut heads = BTreeMap::new();
    let mut heaps = 0;
    for pair in store.scan(&start, &end) {
        let (k, _) = pair.map_err(|e| format!("scan: {e}"))?;
        match keys::is_heap_key(&k) {
            true => heaps += 1,
            false => {
                heads.insert(k, ());
            }
        }
    }
    let mut rows = BTreeMap::new();
    let mut needed = 0;
    for rk in 0..ROWS {
        let key = keys::entity_key(TABLE, PK, &row_key(rk));
        let Some(head) = store.get(&key).map_err(|e| e.to_string())? else { continue };
        let heap = store.get(&keys::heap_key(&key)).map_err(|e| e.to_string())?;
        if heap_needed(&head).map_err(|e| e.to_string())?.is_some() {
            needed += 1;
        }
        let e = decode_entity(PK.into(), row_key(rk), &head, heap.as_deref())
            .map_err(|e| format!("{}: head and heap of different writes ({e})", row_key(rk)))?;
        rows.insert(row_key(rk), e);
    }
    if heads.len() != rows.len() || heaps != needed {
        return Err(format!(
            "{} heads and {heaps} heaps stored for {} rows needing {needed} heaps",
            heads.len(),
            rows.len()
        ));
    }
    Ok(rows)
}

/// The log's block size (RocksDB's `log_format.h`): a longer record is split in
/// fragments at block ends.
const LOG_BLOCK: u64 = 32 * 1024;

/// What one case found: whether the cut directory opened, and whether the cut fell
/// inside a change set whose record spans log blocks.
fn run_case(writes: &[Vec<Op>], cut_at: f64) -> Result<(bool, bool), TestCaseError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = RocksStore::open(dir.path()).expect("open");
    // where each write's record ends in the log (the engine appends each write to the
    // file before it returns)
    let log = newest_log(dir.path());
    let mut ends = Vec::new();
    for (w, ops) in writes.iter().enumerate() {
        store.write(batch(w, ops)).expect("write");
        ends.push(std::fs::metadata(&log).expect("log").len());
    }
    drop(store); // no flush: everything is only in the log
                 // A crash comes before the next recovery point (`checkpoint.rs`) covers the last
                 // writes, while a close records one: the recovery point a close wrote goes, so the
                 // cut is judged by the log alone (cuts behind a recovery point are refused, as
                 // tests/it/damaged.rs shows).
    std::fs::remove_file(dir.path().join(crate::checkpoint::FILE_NAME)).expect("remove the recovery point");
    prop_assert!(newest_log(dir.path()) == log, "the writes stayed in one log");
    let bytes = std::fs::read(&log).expect("read log");
    prop_assert_eq!(bytes.len() as u64, *ends.last().unwrap_or(&0));
    let cut = ((bytes.len() as f64) * cut_at) as usize;
    std::fs::write(&log, &bytes[..cut]).expect("cut log");
    let whole = ends.iter().filter(|&&end| end <= cut as u64).count();
    let expected = &states(writes)[whole];
    // the cut falls inside a change set whose record the log split over blocks
    let start = if whole == 0 { 0 } else { ends[whole - 1] };
    let split = writes.get(whole).is_some_and(|ops| ops.len() > 1)
        && ends.get(whole).is_some_and(|&end| start / LOG_BLOCK != (end - 1) / LOG_BLOCK)
        && cut as u64 > start;

    match RocksStore::open(dir.path()) {
        Ok(store) => {
            let rows = stored_rows(&store).map_err(TestCaseError::fail)?;
            prop_assert!(
                &rows == expected,
                "cut at {} of {} bytes: expected the {} writes before it\n stored {:?}\n model {:?}",
                cut,
                bytes.len(),
                whole,
                rows.values().map(|e| (&e.row_key, e.timestamp.0 - 1)).collect::<Vec<_>>(),
                expected.values().map(|e| (&e.row_key, e.timestamp.0 - 1)).collect::<Vec<_>>()
            );
            Ok((true, split))
        }
        Err(StoreError::Damaged(text)) => {
            let name = log.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            prop_assert!(
                text.contains(&name) || text.contains("write-ahead log"),
                "a refusal names the log: {}",
                text
            );
            Ok((false, split))
        }
        Err(e) => Err(TestCaseError::fail(format!("reopen after a cut at {cut}: {e}"))),
    }
}

#[test]
fn a_log_cut_anywhere_reopens_as_the_writes_before_the_cut_with_change_sets_whole() {
    let seed =
        std::env::var("AZTABLE_WALCUT_SEED").ok().and_then(|s| s.parse::<u64>().ok()).unwrap_or(0x5eed_0c07);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config { cases: 24, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
    let (opened, refused, split) =
        (std::cell::Cell::new(0), std::cell::Cell::new(0), std::cell::Cell::new(0));
    let strategy = (prop::collection::vec(write(), 4..40), 0.0f64..=1.0);
    let result = runner.run(&strategy, |(writes, cut_at)| {
        let (open, in_split) = run_case(&writes, cut_at)?;
        match open {
            true => opened.set(opened.get() + 1),
            false => refused.set(refused.get() + 1),
        }
        split.set(split.get() + u32::from(in_split));
        Ok(())
    });
    if let Err(e) = result {
        panic!("AZTABLE_WALCUT_SEED={seed}: {e}");
    }
    assert!(opened.get() > 0, "no cut log opened ({} refused)", refused.get());
    assert!(split.get() > 0, "no cut fell inside a change set split over log blocks");
}
