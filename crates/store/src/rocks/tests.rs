//! Tests of the RocksDB store: what the conformance suite does not reach (column
//! families, flushes, the files each layout writes).

use super::*;
use rocksdb::DEFAULT_COLUMN_FAMILY_NAME;

fn put_all(s: &RocksStore, prefix: &str) {
    let mut b = WriteBatch::new();
    for i in 0..50 {
        b.put(format!("{prefix}{i:03}").into_bytes(), vec![b'v'; 1000]);
    }
    s.write(b).expect("write");
    s.flush().expect("flush");
}

fn files_with(s: &RocksStore, prefix: &[u8]) -> usize {
    let files = s.db.live_files().expect("live files");
    files.iter().filter(|f| f.start_key.as_deref().is_some_and(|k| k.starts_with(prefix))).count()
}

#[test]
fn the_log_reader_finds_every_batch_the_engine_wrote() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = RocksStore::open(dir.path()).expect("open");
    for i in 0..300u32 {
        let mut b = WriteBatch::new();
        b.put(format!("a{i:04}").into_bytes(), vec![b'v'; 50 + (i as usize * 37) % 900]);
        b.delete(format!("b{i:04}").into_bytes());
        s.write(b).expect("write");
    }
    let last = s.db.latest_sequence_number();
    drop(s);
    let mut batches = Vec::new();
    for (path, _) in super::super::wal::log_files(dir.path()).expect("logs") {
        let scan = super::super::wal::scan(&std::fs::read(path).expect("read"));
        assert_eq!(scan.damaged_bytes, 0);
        batches.extend(scan.batches);
    }
    assert_eq!(batches.len(), 300);
    assert!(batches.iter().all(|b| b.count == 2));
    assert!(batches.windows(2).all(|w| w[1].seq == w[0].seq + 2));
    assert_eq!(batches.last().map(|b| b.seq + 1), Some(last));
}

#[test]
fn unsynced_writes_of_a_syncing_store_are_readable_and_sync_on_demand() {
    let dir = tempfile::tempdir().expect("tempdir");
    let put = |k: &str| {
        let mut b = WriteBatch::new();
        b.put(k.as_bytes().to_vec(), vec![b'v'; 100]);
        b
    };
    {
        let s = RocksStore::open(dir.path()).expect("open");
        assert!(!s.syncs_writes());
    }
    let s = RocksStore::open_with(dir.path(), OpenOptions { sync_writes: true, recover_tolerate: false })
        .expect("open");
    assert!(s.syncs_writes());
    s.write_unsynced(put("a")).expect("write");
    assert!(s.get(b"a").expect("get").is_some(), "readable before the sync");
    s.sync_log().expect("sync");
    s.write(put("b")).expect("write");
    drop(s);
    let s = RocksStore::open(dir.path()).expect("reopen");
    assert!(s.get(b"a").expect("get").is_some() && s.get(b"b").expect("get").is_some());
}

/// The heads and heaps of `rows` rows of table `table`, written and flushed.
fn put_table(s: &RocksStore, table: u64, rows: usize) {
    let mut b = WriteBatch::new();
    for i in 0..rows {
        let head = keys::entity_key(table, "p", &format!("r{i:03}"));
        b.put(keys::heap_key(&head), vec![b'h'; 900]);
        b.put(head, vec![b'v'; 60]);
    }
    s.write(b).expect("write");
    s.flush().expect("flush");
}

fn all(s: &RocksStore, (start, end): (Vec<u8>, Vec<u8>)) -> Vec<Vec<u8>> {
    let pairs: Vec<_> = s.scan(&start, &end).map(|r| r.expect("scan").0).collect();
    let mut visited = Vec::new();
    s.scan_with(&start, &end, &mut |k, _| {
        visited.push(k.to_vec());
        Ok(true)
    })
    .expect("scan_with");
    assert_eq!(pairs, visited);
    pairs
}

#[test]
fn compact_moves_every_file_of_both_column_families_to_the_last_level_with_every_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = RocksStore::open(dir.path()).expect("open");
    for table in 1..=4 {
        put_table(&s, table, 30);
        s.flush().expect("flush");
    }
    s.compact().expect("compact");
    let files = s.db.live_files().expect("live files");
    assert!(files.iter().all(|f| f.level == 6), "{files:?}");
    assert_eq!(files.iter().filter(|f| f.column_family_name == HEAPS_CF).count(), 4, "{files:?}");
    assert_eq!(files.len(), 8, "{files:?}");
    for table in 1..=4 {
        assert_eq!(all(&s, keys::table_entities_range(table)).len(), 60);
    }
}

#[test]
fn heaps_live_in_their_own_column_family_and_read_back_as_one_key_space() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = RocksStore::open(dir.path()).expect("open");
    put_table(&s, 1, 30);
    put_table(&s, 2, 30);
    let head = keys::entity_key(1, "p", "r007");
    let heap = keys::heap_key(&head);
    let cf = s.heaps().expect("a new directory has the heaps column family");
    assert_eq!(s.db.get_cf(cf, &heap).expect("get_cf"), Some(vec![b'h'; 900]));
    assert_eq!(s.db.get(&heap).expect("get"), None, "no heap in the default column family");
    assert_eq!(s.db.get_cf(cf, &head).expect("get_cf"), None, "no head among the heaps");
    assert_eq!(s.get(&heap).expect("get"), Some(vec![b'h'; 900]));
    assert_eq!(s.get(&head).expect("get"), Some(vec![b'v'; 60]));

    // one table's range: its 30 heads, then its 30 heaps, in key order
    let table = all(&s, keys::table_entities_range(1));
    assert_eq!(table.len(), 60);
    assert!(table.windows(2).all(|w| w[0] < w[1]));
    assert!(
        table[..30].iter().all(|k| !keys::is_heap_key(k)) && table[30..].iter().all(|k| keys::is_heap_key(k))
    );
    assert_eq!(all(&s, keys::table_heads_range(1)), table[..30]);
    assert_eq!(all(&s, keys::table_heaps_range(1)), table[30..]);
    // across both tables and everything else
    assert_eq!(all(&s, (vec![], vec![0xFF])).len(), 120);
    // a scan that stops early stops
    let mut seen = 0;
    s.scan_with(&[], &[0xFF], &mut |_, _| {
        seen += 1;
        Ok(seen < 45)
    })
    .expect("scan_with");
    assert_eq!(seen, 45);

    // deleting a table deletes its heads and heaps, and drops the files of both
    // (below level 0, where each table's files are its own)
    for t in [1, 2] {
        let (start, end) = keys::table_entities_range(t);
        s.db.compact_range(Some(&start), Some(&end));
        s.db.compact_range_cf(cf, Some(&start), Some(&end));
    }
    let files = |s: &RocksStore, family: &str| {
        let live = s.db.live_files().expect("live files");
        let of = |t: u64| {
            let prefix = &keys::table_entities_range(t).0;
            live.iter()
                .filter(|f| f.column_family_name == family)
                .filter(|f| f.start_key.as_deref().is_some_and(|k| k.starts_with(prefix)))
                .count()
        };
        (of(1), of(2))
    };
    assert_eq!((files(&s, DEFAULT_COLUMN_FAMILY_NAME), files(&s, HEAPS_CF)), ((1, 1), (1, 1)));
    let (start, end) = keys::table_entities_range(1);
    let mut b = WriteBatch::new();
    b.delete_range(start.clone(), end.clone());
    s.write(b).expect("delete range");
    s.reclaim_deleted_range(&start, &end).expect("reclaim");
    assert_eq!((files(&s, DEFAULT_COLUMN_FAMILY_NAME), files(&s, HEAPS_CF)), ((0, 1), (0, 1)));
    assert_eq!(all(&s, keys::table_entities_range(1)), Vec::<Vec<u8>>::new());
    assert_eq!(all(&s, keys::table_entities_range(2)).len(), 60);
    drop(s);

    let s = RocksStore::open(dir.path()).expect("reopen");
    assert!(s.heaps().is_some());
    assert_eq!(all(&s, keys::table_entities_range(2)).len(), 60);
    assert_eq!(
        s.get(&keys::heap_key(&keys::entity_key(2, "p", "r029"))).expect("get"),
        Some(vec![b'h'; 900])
    );
    drop(s);
    let s = RocksStore::open_read_only(dir.path()).expect("read-only");
    assert_eq!(all(&s, keys::table_entities_range(2)).len(), 60);
    assert_eq!(
        s.get(&keys::heap_key(&keys::entity_key(2, "p", "r000"))).expect("get"),
        Some(vec![b'h'; 900])
    );
}

#[test]
fn a_directory_created_with_one_column_family_keeps_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        // as a build before the split created it
        let mut opts = Options::default();
        opts.create_if_missing(true);
        let db = DB::open(&opts, dir.path()).expect("open");
        let head = keys::entity_key(1, "p", "r");
        db.put(keys::heap_key(&head), b"heap").expect("put");
        db.put(head, b"head").expect("put");
    }
    let s = RocksStore::open(dir.path()).expect("open");
    assert!(s.heaps().is_none());
    put_table(&s, 2, 10);
    let head = keys::entity_key(1, "p", "r");
    assert_eq!(s.get(&keys::heap_key(&head)).expect("get"), Some(b"heap".to_vec()));
    assert_eq!(
        s.db.get(keys::heap_key(&keys::entity_key(2, "p", "r003"))).expect("get"),
        Some(vec![b'h'; 900])
    );
    assert_eq!(all(&s, keys::table_entities_range(1)), vec![head.clone(), keys::heap_key(&head)]);
    assert_eq!(all(&s, keys::table_entities_range(2)).len(), 20);
    drop(s);
    assert_eq!(DB::list_cf(&Options::default(), dir.path()).expect("list"), vec![DEFAULT_COLUMN_FAMILY_NAME]);
    let s = RocksStore::open_read_only(dir.path()).expect("read-only");
    assert_eq!(s.get(&keys::heap_key(&head)).expect("get"), Some(b"heap".to_vec()));
}

#[test]
fn reclaiming_a_deleted_range_drops_its_files_and_nothing_else() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = RocksStore::open(dir.path()).expect("open");
    for prefix in ["a", "b", "c"] {
        put_all(&s, prefix);
        // below level 0, one file per prefix (level-0 files are never dropped)
        let (start, end) = (prefix.to_owned(), format!("{prefix}\u{7f}"));
        s.db.compact_range(Some(start.as_bytes()), Some(end.as_bytes()));
    }
    assert_eq!((files_with(&s, b"a"), files_with(&s, b"b"), files_with(&s, b"c")), (1, 1, 1));

    let mut b = WriteBatch::new();
    b.delete_range(b"b".to_vec(), b"c".to_vec());
    s.write(b).expect("delete range");
    s.reclaim_deleted_range(b"b", b"c").expect("reclaim");
    assert_eq!((files_with(&s, b"a"), files_with(&s, b"b"), files_with(&s, b"c")), (1, 0, 1));

    let count = |s: &RocksStore, start: &[u8], end: &[u8]| s.scan(start, end).count();
    assert_eq!(count(&s, b"a", b"b"), 50);
    assert_eq!(count(&s, b"b", b"c"), 0);
    assert_eq!(count(&s, b"c", b"d"), 50);
    drop(s);
    let s = RocksStore::open(dir.path()).expect("reopen");
    assert_eq!((count(&s, b"a", b"b"), count(&s, b"b", b"c"), count(&s, b"c", b"d")), (50, 0, 50));
    // an empty or inverted range is no error
    s.reclaim_deleted_range(b"x", b"x").expect("empty");
    s.reclaim_deleted_range(b"y", b"x").expect("inverted");
}
