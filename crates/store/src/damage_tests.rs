//! `RocksStore` over a table file with a damaged data block: every read that meets the
//! block (point read, either kind of scan, a scan over both column families) is
//! [`StoreError::DataCorrupted`] naming the file, writes are refused from then on, the
//! damage is reported, and [`Store::verify_checksums`] finds it without a request.

use super::damage::DamageReport;
use super::rocks::RocksStore;
use super::{keys, Store, StoreError, WriteBatch};
use std::path::{Path, PathBuf};

const ROWS: usize = 400;

fn head(i: usize) -> Vec<u8> {
    keys::entity_key(1, "p", &format!("r{i:04}"))
}

/// `ROWS` heads of 300 bytes (some eight 16 KiB blocks) and their heaps, flushed.
fn store_with_table(dir: &Path) {
    let s = RocksStore::open(dir).expect("open");
    let mut b = WriteBatch::new();
    for i in 0..ROWS {
        b.put(keys::heap_key(&head(i)), vec![b'h'; 200]);
        b.put(head(i), vec![b'v'; 300]);
    }
    s.write(b).expect("write");
    s.flush().expect("flush");
}

/// The largest table file (the heads').
fn largest_table_file(dir: &Path) -> PathBuf {
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .map(|p| (std::fs::metadata(&p).expect("meta").len(), p))
        .collect();
    files.sort();
    files.pop().expect("a table file").1
}

fn flip_middle(file: &Path) {
    let mut bytes = std::fs::read(file).expect("read");
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 16] {
        *b ^= 0x5a;
    }
    std::fs::write(file, bytes).expect("write");
}

fn names(e: &StoreError, file: &str) -> bool {
    matches!(e, StoreError::DataCorrupted(m) if m.contains(file) && m.contains("restore the data directory"))
}

#[test]
fn a_damaged_block_is_named_on_every_read_refuses_writes_and_is_found_by_verification() {
    let dir = tempfile::tempdir().expect("tempdir");
    store_with_table(dir.path());
    {
        let s = RocksStore::open(dir.path()).expect("open");
        let report = s.verify_checksums().expect("an intact store verifies");
        assert_eq!(report.entries, 2 * ROWS as u64);
        assert!(report.files >= 2 && report.file_bytes > 100_000, "{report:?}");
    }
    let file = largest_table_file(dir.path());
    let name = file.file_name().expect("name").to_string_lossy().into_owned();
    flip_middle(&file);

    let s = RocksStore::open(dir.path()).expect("the damage is not read at open");
    assert_eq!(s.damage(), DamageReport::default());
    let (start, end) = keys::table_entities_range(1);
    // a scan over heads and heaps stops at the damage with its error
    let scanned: Vec<_> = s.scan(&start, &end).collect();
    let err = scanned.last().expect("some pairs").as_ref().expect_err("the scan ends in the damage");
    assert!(names(err, &name), "{err:?}");
    // up to the damage: heads only, none of the heaps that sort after every head (the
    // failed heads must not pass for their end while the heaps go on)
    let served: Vec<_> =
        scanned[..scanned.len() - 1].iter().map(|r| r.as_ref().expect("ok before")).collect();
    assert!(!served.is_empty() && served.len() < ROWS, "{}", served.len());
    assert!(served.iter().all(|(k, _)| !keys::is_heap_key(k)), "heaps served past the damaged heads");
    // the heads alone, borrowed
    let err = s.scan_with(&start, &keys::table_heads_range(1).1, &mut |_, _| Ok(true)).expect_err("damaged");
    assert!(names(&err, &name), "{err:?}");
    // a point read of a row in the damaged block
    let damaged_row = (0..ROWS).find(|&i| s.get(&head(i)).is_err()).expect("a row in the damaged block");
    assert!(names(&s.get(&head(damaged_row)).expect_err("damaged"), &name));
    assert!(s.get(&head(0)).expect("rows elsewhere read").is_some());
    // writes are refused
    let mut b = WriteBatch::new();
    b.put(head(ROWS + 1), vec![1]);
    let refused = s.write(b.clone()).expect_err("refused");
    assert!(names(&refused, &name), "{refused:?}");
    assert!(s.write_unsynced(b).is_err());
    let report = s.damage();
    assert!(report.damaged() && report.first.as_deref().is_some_and(|f| f.contains(&name)));
    assert!(report.errors >= 5, "{report:?}");
    drop(s);

    // verification finds it before anything is served
    let s = RocksStore::open(dir.path()).expect("open");
    let err = s.verify_checksums().expect_err("damaged");
    assert!(names(&err, &name), "{err:?}");
}
