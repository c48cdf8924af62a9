//! `RocksStore`: the durable [`Store`] on RocksDB. This is the only file in the crate
//! that names `rocksdb`.
//!
//! Writes go through the WAL; by default without an fsync per write (the WAL in the OS
//! page cache survives a killed process, not a power loss), with `--fsync` synced
//! before they are acknowledged. Scans are lazy forward iterators bounded by
//! `iterate_upper_bound`. Opening treats a damaged WAL as `recovery.rs` describes: an
//! incomplete last write is dropped, damage before the end refuses to open unless
//! `OpenOptions::recover_tolerate` says to recover up to it.

use super::recovery::{self, OpenOptions};
use super::{KvPair, Store, StoreError, Visit, WriteBatch, WriteOp};
use rocksdb::{
    BlockBasedOptions, Cache, DBCompressionType, DBRecoveryMode, Direction, ErrorKind, IteratorMode, Options,
    ReadOptions, WriteOptions, DB,
};
use std::path::Path;

/// Block cache shared by every table of the database (the partition layer's entity
/// cache takes 16 MiB more; with at most two 32 MiB memtables, 120 MiB of caches and
/// buffers in all).
const BLOCK_CACHE_BYTES: usize = 40 << 20;
/// Size of one memtable.
const WRITE_BUFFER_BYTES: usize = 32 << 20;
/// Level-0 files that start a compaction into the base level (RocksDB's default is 4).
const LEVEL0_COMPACTION_TRIGGER: i32 = 8;
/// Share of a memtable's size given to its bloom filter.
const MEMTABLE_BLOOM_RATIO: f64 = 0.02;
/// Size of an uncompressed data block.
const BLOCK_BYTES: usize = 16 << 10;

/// An ordered, durable key/value store backed by RocksDB.
pub struct RocksStore {
    db: DB,
    /// Every write's options: synced with `--fsync`.
    write_opts: WriteOptions,
}

impl std::fmt::Debug for RocksStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksStore").field("path", &self.db.path()).finish()
    }
}

fn engine(e: rocksdb::Error) -> StoreError {
    StoreError::Engine(e.to_string())
}

impl RocksStore {
    /// Opens (creating if missing) the database in directory `path`, with the default
    /// [`OpenOptions`] (no fsync per write; a WAL damaged before its end is refused).
    pub fn open(path: &Path) -> Result<RocksStore, StoreError> {
        RocksStore::open_with(path, OpenOptions::default())
    }

    /// Opens (creating if missing) the database in directory `path`. A WAL with an
    /// incomplete last record (a torn tail) opens; one damaged before its end is
    /// [`StoreError::Damaged`], unless `how.recover_tolerate`: then the logs are copied
    /// aside, the database recovers up to the last write before the damage, and what
    /// was dropped is logged. The engine's warnings of the open go to the server's log.
    pub fn open_with(path: &Path, how: OpenOptions) -> Result<RocksStore, StoreError> {
        let mut write_opts = WriteOptions::default();
        write_opts.set_sync(how.sync_writes);
        let strict = options(DBRecoveryMode::TolerateCorruptedTailRecords);
        let err = match DB::open(&strict, path) {
            Ok(db) => {
                recovery::log_engine_warnings(path);
                return Ok(RocksStore { db, write_opts });
            }
            Err(e) if e.kind() == ErrorKind::Corruption => e,
            Err(e) => return Err(engine(e)),
        };
        if !how.recover_tolerate {
            return Err(StoreError::Damaged(recovery::refusal(path, err.as_ref())));
        }
        let logs = recovery::keep_damaged_logs(path)
            .map_err(|e| StoreError::Engine(format!("cannot copy the damaged write-ahead log aside: {e}")))?;
        let db = DB::open(&options(DBRecoveryMode::PointInTime), path).map_err(engine)?;
        recovery::log_engine_warnings(path);
        recovery::log_dropped(path, &logs, db.latest_sequence_number());
        Ok(RocksStore { db, write_opts })
    }

    /// Opens an existing database read-only (`aztable export` of a stopped server's
    /// directory): nothing is written, and a missing directory is an error. Every
    /// write through [`Store::write`] fails.
    pub fn open_read_only(path: &Path) -> Result<RocksStore, StoreError> {
        let opts = Options::default();
        let db = DB::open_for_read_only(&opts, path, false).map_err(engine)?;
        Ok(RocksStore { db, write_opts: WriteOptions::default() })
    }
}

/// The database options, with how the WAL is recovered.
fn options(recovery: DBRecoveryMode) -> Options {
    let cache = Cache::new_lru_cache(BLOCK_CACHE_BYTES);
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(&cache);
    table.set_bloom_filter(10.0, false);
    // 16 KiB data blocks (RocksDB's default is 4 KiB): entities are about 1 KiB, so a
    // 4 KiB block held three or four and every scan paid the per-block cost (cache
    // lookup, iterator setup, checksum) every few rows. Measured on 100,000 1 KiB
    // entities: filtered scans 2x faster, point and range reads 5-10% faster; 32 and
    // 64 KiB blocks scan faster still but slow point reads.
    table.set_block_size(BLOCK_BYTES);
    // Index and filter blocks stay in table-reader memory (about 1% of the data)
    // instead of competing with data blocks in the cache: with them in a small cache,
    // random reads over a large table evicted them and every miss re-read a large
    // index block.
    table.set_cache_index_and_filter_blocks(false);

    let mut opts = Options::default();
    opts.create_if_missing(true);
    // No compression in levels 0 and 1, which are rewritten soon after they are
    // written (a batch-insert profile spent 6 % of the server in LZ4 compressing
    // flushes); LZ4 below, where data settles.
    use DBCompressionType::{Lz4, None as Plain};
    opts.set_compression_per_level(&[Plain, Plain, Lz4, Lz4, Lz4, Lz4, Lz4]);
    opts.set_bottommost_compression_type(Lz4);
    opts.set_max_background_jobs(2);
    // Two 32 MiB memtables at most (RocksDB's default is 64 MiB each): with the block
    // cache, what a write-heavy load holds stays well under 200 MB (a 1,000,000-entity
    // load peaked at 222 MB with 64 MiB memtables).
    opts.set_write_buffer_size(WRITE_BUFFER_BYTES);
    opts.set_keep_log_file_num(4);
    // Compact level 0 into the base level after 8 flushed files instead of 4. Writers
    // spread over many partitions put every key range into each flushed file, so each
    // level-0 compaction rewrites the whole base level: waiting for twice the files
    // halves those rewrites. Measured with 16 connections of 100-entity batches for
    // 10 s on fresh data directories: compaction output 1.0-1.9 GB -> 0.9-1.4 GB,
    // server CPU per batch -4 to -13 %. Reads check up to 7 more bloom filters.
    opts.set_level_zero_file_num_compaction_trigger(LEVEL0_COMPACTION_TRIGGER);
    // A bloom filter over each memtable's whole keys (2 % of its size: 640 KiB): every
    // insert first checks that its key is absent, and the skip-list search of a
    // memtable that does not hold the key was about 2 % of an insert's CPU; the filter
    // answers most of those searches.
    opts.set_memtable_prefix_bloom_ratio(MEMTABLE_BLOOM_RATIO);
    opts.set_memtable_whole_key_filtering(true);
    opts.set_block_based_table_factory(&table);
    opts.set_wal_recovery_mode(recovery);
    opts
}

impl Store for RocksStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.db.get(key).map_err(engine)
    }

    fn write(&self, batch: WriteBatch) -> Result<(), StoreError> {
        let mut wb = rocksdb::WriteBatch::default();
        for op in batch.ops {
            match op {
                WriteOp::Put(k, v) => wb.put(k, v),
                WriteOp::Delete(k) => wb.delete(k),
                // An empty or inverted range deletes nothing (RocksDB would reject it).
                WriteOp::DeleteRange(start, end) => {
                    if start < end {
                        wb.delete_range(start, end);
                    }
                }
            }
        }
        self.db.write_opt(wb, &self.write_opts).map_err(engine)
    }

    fn scan<'a>(
        &'a self,
        start: &[u8],
        end: &[u8],
    ) -> Box<dyn Iterator<Item = Result<KvPair, StoreError>> + 'a> {
        if start >= end {
            return Box::new(std::iter::empty());
        }
        let mut ro = ReadOptions::default();
        ro.set_iterate_upper_bound(end.to_vec());
        let iter = self.db.iterator_opt(IteratorMode::From(start, Direction::Forward), ro);
        Box::new(iter.map(|r| r.map(|(k, v)| (k.into_vec(), v.into_vec())).map_err(engine)))
    }

    fn scan_with(&self, start: &[u8], end: &[u8], visit: &mut Visit<'_>) -> Result<(), StoreError> {
        if start >= end {
            return Ok(());
        }
        let mut ro = ReadOptions::default();
        ro.set_iterate_upper_bound(end.to_vec());
        let mut it = self.db.raw_iterator_opt(ro);
        it.seek(start);
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            if !visit(k, v)? {
                return Ok(());
            }
            it.next();
        }
        it.status().map_err(engine)
    }

    fn reclaim_deleted_range(&self, start: &[u8], end: &[u8]) -> Result<(), StoreError> {
        // RocksDB drops the files below level 0 whose keys all lie in [start, end] (the
        // end inclusive: no stored key equals a range end, which is a bare prefix) and
        // leaves level 0 and partly covered files to compaction. The range's tombstone
        // is still in the memtable, so no file dropped here holds it.
        if start < end {
            self.db.delete_file_in_range(start, end).map_err(engine)?;
        }
        Ok(())
    }

    fn flush(&self) -> Result<(), StoreError> {
        self.db.flush_wal(true).map_err(engine)?;
        self.db.flush().map_err(engine)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
