//! `RocksStore`: the durable [`Store`] on RocksDB. This is the only file in the crate
//! that names `rocksdb`.
//!
//! Entity heaps ([`keys::is_heap_key`]) live in a column family of their own,
//! [`HEAPS_CF`], with smaller blocks than everything else (see [`HEAP_BLOCK_BYTES`]);
//! the rest of the crate sees one ordered key space: a write batch spans both column
//! families atomically (one WAL), and a scan whose range holds keys of both merges
//! them. A directory created before the split keeps one column family and is read and
//! written as before.
//!
//! Writes go through the WAL; by default without an fsync per write (the WAL in the OS
//! page cache survives a killed process, not a power loss), with `--fsync` synced
//! before they are acknowledged: each by [`Store::write`], or several by one
//! [`Store::sync_log`] after [`Store::write_unsynced`]. Scans are lazy forward
//! iterators bounded by `iterate_upper_bound`. Opening first checks the directory
//! without the engine (`precheck.rs`), then treats a damaged WAL as `recovery.rs`
//! describes: an incomplete last write is dropped, damage before the end refuses to
//! open unless `OpenOptions::recover_tolerate` says to recover up to it. While open, a
//! thread records a recovery point (`checkpoint.rs`) about once a second when writes
//! came in, and one more when the store closes. Damage the engine finds while serving
//! (a block failing its checksum) is [`StoreError::DataCorrupted`] and refuses later
//! writes (`damage.rs`); [`Store::verify_checksums`] reads every block to find it
//! before serving.

use super::checkpoint::{self, RecoveryPoint};
use super::damage::{DamageLatch, DamageReport, VerifyReport};
use super::recovery::{self, OpenOptions};
use super::{keys, precheck, KvPair, Store, StoreError, Visit, WriteBatch, WriteOp};
use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamily, ColumnFamilyDescriptor, DBCompressionType, DBRawIterator,
    DBRecoveryMode, ErrorKind, Options, ReadOptions, WriteBufferManager, WriteOptions, DB,
    DEFAULT_COLUMN_FAMILY_NAME,
};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Block cache shared by every table of the database (the partition layer's entity
/// cache takes 16 MiB more; with at most 64 MiB of memtables, 120 MiB of caches and
/// buffers in all).
const BLOCK_CACHE_BYTES: usize = 40 << 20;
/// Size of one memtable.
const WRITE_BUFFER_BYTES: usize = 32 << 20;
/// What the memtables of both column families may hold together.
const MEMTABLE_BUDGET_BYTES: usize = 2 * WRITE_BUFFER_BYTES;
/// Level-0 files that start a compaction into the base level (RocksDB's default is 4).
const LEVEL0_COMPACTION_TRIGGER: i32 = 8;
/// Share of a memtable's size given to its bloom filter.
const MEMTABLE_BLOOM_RATIO: f64 = 0.02;
/// Size of an uncompressed data block (heads, and everything else but heaps).
const BLOCK_BYTES: usize = 16 << 10;
/// Size of an uncompressed data block of heaps.
const HEAP_BLOCK_BYTES: usize = 4 << 10;
/// Most bytes RocksDB buffers before it writes them to a file (its default is 1 MiB).
const WRITE_CHUNK_BYTES: u64 = 64 << 10;
/// Index entries per restart point of an index block (RocksDB's default is 1).
const INDEX_RESTART_INTERVAL: i32 = 16;
/// The column family of entity heaps.
const HEAPS_CF: &str = "heaps";
/// How often the recovery point is recorded while writes come in.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

/// An ordered, durable key/value store backed by RocksDB.
pub struct RocksStore {
    db: Arc<DB>,
    /// Every write's options: synced with `--fsync`.
    write_opts: WriteOptions,
    /// The options of [`Store::write_unsynced`]: never synced.
    unsynced_opts: WriteOptions,
    /// `--fsync`: every [`Store::write`] is synced.
    syncs: bool,
    /// Damage found while serving.
    damage: DamageLatch,
    /// The thread that records recovery points (none when read-only).
    checkpoints: Option<Checkpoints>,
}

/// The recovery-point thread, stopped when its sender is dropped.
struct Checkpoints {
    dir: PathBuf,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Records the recovery point of `db` in `dir`: the sequence and the files' sizes are
/// read before the log is synced, so the sync covers all they name.
fn record_point(db: &DB, dir: &Path) -> Result<u64, String> {
    let sequence = db.latest_sequence_number();
    let (manifest, log) = checkpoint::files_now(dir).map_err(|e| e.to_string())?;
    db.flush_wal(true).map_err(|e| e.to_string())?;
    checkpoint::write(dir, &RecoveryPoint { sequence, manifest, log }).map_err(|e| e.to_string())?;
    Ok(sequence)
}

impl Checkpoints {
    fn start(db: &Arc<DB>, dir: &Path) -> Checkpoints {
        let (stop, stopped) = mpsc::channel::<()>();
        let (db, at) = (Arc::clone(db), dir.to_path_buf());
        let thread = std::thread::Builder::new().name("aztable-checkpoint".into()).spawn(move || {
            let mut recorded = db.latest_sequence_number();
            let mut failing = false;
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(CHECKPOINT_EVERY) {
                if db.latest_sequence_number() == recorded {
                    continue;
                }
                match record_point(&db, &at) {
                    Ok(seq) => (recorded, failing) = (seq, false),
                    Err(e) if !failing => {
                        failing = true;
                        tracing::warn!("cannot record the recovery point in {}: {e}", at.display());
                    }
                    Err(_) => {}
                }
            }
        });
        let thread = match thread {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::warn!("cannot start the recovery-point thread: {e}");
                None
            }
        };
        Checkpoints { dir: dir.to_path_buf(), stop: Some(stop), thread }
    }
}

impl Drop for RocksStore {
    fn drop(&mut self) {
        let Some(mut c) = self.checkpoints.take() else { return };
        drop(c.stop.take());
        if let Some(t) = c.thread.take() {
            let _ = t.join();
        }
        if let Err(e) = record_point(&self.db, &c.dir) {
            tracing::warn!("cannot record the recovery point in {} at close: {e}", c.dir.display());
        }
    }
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
    fn with(db: DB, syncs: bool) -> RocksStore {
        let mut write_opts = WriteOptions::default();
        write_opts.set_sync(syncs);
        RocksStore {
            db: Arc::new(db),
            write_opts,
            unsynced_opts: WriteOptions::default(),
            syncs,
            damage: DamageLatch::default(),
            checkpoints: None,
        }
    }

    /// The store's error for an engine failure while serving: damage on disk is
    /// recorded and named (`damage.rs`), anything else is an engine failure.
    fn failed(&self, e: rocksdb::Error) -> StoreError {
        match e.kind() {
            ErrorKind::Corruption => self.damage.note(e.as_ref()),
            _ => engine(e),
        }
    }

    /// [`RocksStore::with`] for a store opened to write: records a recovery point now
    /// and keeps recording them.
    fn writable(db: DB, syncs: bool, dir: &Path) -> Result<RocksStore, StoreError> {
        let mut store = RocksStore::with(db, syncs);
        record_point(&store.db, dir).map_err(|e| {
            StoreError::Engine(format!("cannot record the recovery point in {}: {e}", dir.display()))
        })?;
        store.checkpoints = Some(Checkpoints::start(&store.db, dir));
        Ok(store)
    }

    /// The engine's write batch for `batch`: each key in its column family.
    fn engine_batch(&self, batch: WriteBatch) -> rocksdb::WriteBatch {
        let mut wb = rocksdb::WriteBatch::default();
        for op in batch.ops {
            match op {
                WriteOp::Put(k, v) => match self.family_of(&k) {
                    Some(cf) => wb.put_cf(cf, k, v),
                    None => wb.put(k, v),
                },
                WriteOp::Delete(k) => match self.family_of(&k) {
                    Some(cf) => wb.delete_cf(cf, k),
                    None => wb.delete(k),
                },
                // An empty or inverted range deletes nothing (RocksDB would reject it);
                // a range tombstone goes only where the range can have keys, since
                // every read of a column family checks its tombstones.
                WriteOp::DeleteRange(start, end) => {
                    let (rest, heaps) = self.families_of(&start, &end);
                    if let Some(cf) = heaps {
                        wb.delete_range_cf(cf, &start, &end);
                    }
                    if rest && start < end {
                        wb.delete_range(start, end);
                    }
                }
            }
        }
        wb
    }

    /// Opens (creating if missing) the database in directory `path`, with the default
    /// [`OpenOptions`] (no fsync per write; a WAL damaged before its end is refused).
    pub fn open(path: &Path) -> Result<RocksStore, StoreError> {
        RocksStore::open_with(path, OpenOptions::default())
    }

    /// Opens the database in directory `path`, creating it only when the directory
    /// holds none. The directory is checked first (`precheck.rs`): a damaged CURRENT or
    /// MANIFEST is [`StoreError::Damaged`] naming it. A WAL with an incomplete last
    /// record (a torn tail) opens; one damaged before its end, or a directory behind
    /// its recovery point, is [`StoreError::Damaged`], unless `how.recover_tolerate`:
    /// then the logs are copied aside, the damaged one is cut to its intact records
    /// (later ones emptied), the database recovers up to the last write before the
    /// damage, and what was dropped is logged. What recovery found is logged, with
    /// the engine's warnings.
    pub fn open_with(path: &Path, how: OpenOptions) -> Result<RocksStore, StoreError> {
        let found = precheck::run(path, how.recover_tolerate)?;
        found.notes.iter().for_each(|n| tracing::warn!("{n}"));
        let mut kept = None;
        if let Some(damage) = &found.damage {
            if !how.recover_tolerate {
                return Err(StoreError::Damaged(recovery::log_refusal(path, &found, damage)));
            }
            let logs = recovery::keep_damaged_logs(path).map_err(|e| {
                StoreError::Engine(format!("cannot copy the damaged write-ahead log aside: {e}"))
            })?;
            recovery::cut_logs(&found, damage)
                .map_err(|e| StoreError::Engine(format!("cannot cut the damaged write-ahead log: {e}")))?;
            kept = Some(logs);
        }
        if let Some(behind) = &found.behind {
            if !how.recover_tolerate {
                return Err(StoreError::Damaged(recovery::behind_refusal(path, behind)));
            }
            tracing::warn!("{}: {behind}; starting with what recovery finds", recovery::TOLERATE_FLAG);
        }
        let memory = Memory::new();
        let db = match open_db(path, DBRecoveryMode::TolerateCorruptedTailRecords, &memory, found.new) {
            Ok(db) => db,
            Err(e) if e.kind() == ErrorKind::Corruption && how.recover_tolerate => {
                let logs = match kept.take() {
                    Some(logs) => logs,
                    None => recovery::keep_damaged_logs(path).map_err(|e| {
                        StoreError::Engine(format!("cannot copy the damaged write-ahead log aside: {e}"))
                    })?,
                };
                let db = open_db(path, DBRecoveryMode::PointInTime, &memory, false).map_err(engine)?;
                kept = Some(logs);
                db
            }
            Err(e) if e.kind() == ErrorKind::Corruption => {
                return Err(StoreError::Damaged(recovery::refusal(path, e.as_ref())))
            }
            Err(e) => return Err(engine(e)),
        };
        recovery::log_engine_warnings(path);
        let recovered = db.latest_sequence_number();
        if let Some(point) = found.point.as_ref().filter(|p| p.sequence > recovered) {
            let text = format!(
                "recovery ended at sequence {recovered}, before sequence {} recorded at the last checkpoint \
                 (newest write-ahead log then: {})",
                point.sequence,
                point.log.as_ref().map_or("none", |l| l.0.as_str())
            );
            if !how.recover_tolerate {
                return Err(StoreError::Damaged(recovery::behind_refusal(path, &text)));
            }
            tracing::warn!("{}: {text}", recovery::TOLERATE_FLAG);
        }
        recovery::log_recovered(path, &found, recovered);
        if let Some(logs) = &kept {
            recovery::log_dropped(path, logs, recovered);
        }
        RocksStore::writable(db, how.sync_writes, path)
    }

    /// Opens an existing database read-only (`aztable export` of a stopped server's
    /// directory): nothing is written, and a missing directory is an error. Every
    /// write through [`Store::write`] fails.
    pub fn open_read_only(path: &Path) -> Result<RocksStore, StoreError> {
        let opts = Options::default();
        let families = DB::list_cf(&opts, path).map_err(engine)?;
        let db = DB::open_cf_for_read_only(&opts, path, families, false).map_err(engine)?;
        Ok(RocksStore::with(db, false))
    }

    /// Flushes the memtables and compacts every column family down to its last level,
    /// waiting for it: the settled state a long-lived table reaches (benchmarks and
    /// tests of read paths use it).
    pub fn compact(&self) -> Result<(), StoreError> {
        self.flush()?;
        if let Some(cf) = self.heaps() {
            self.db.compact_range_cf(cf, None::<&[u8]>, None::<&[u8]>);
        }
        self.db.compact_range(None::<&[u8]>, None::<&[u8]>);
        Ok(())
    }
}

/// What the column families share: the block cache, and the memtables' budget.
struct Memory {
    cache: Cache,
    memtables: WriteBufferManager,
}

impl Memory {
    fn new() -> Memory {
        Memory {
            cache: Cache::new_lru_cache(BLOCK_CACHE_BYTES),
            memtables: WriteBufferManager::new_write_buffer_manager(MEMTABLE_BUDGET_BYTES, false),
        }
    }
}

/// Opens the database in `path`, creating it with both column families when `new`
/// (never over an existing one: without `new`, a missing database is an error); an
/// existing one opens with the column families it has (one, if created before heaps
/// had their own).
fn open_db(path: &Path, recovery: DBRecoveryMode, memory: &Memory, new: bool) -> Result<DB, rocksdb::Error> {
    let mut opts = options(recovery, memory);
    opts.create_if_missing(new);
    let split = match new {
        false => DB::list_cf(&opts, path)?.iter().any(|f| f == HEAPS_CF),
        true => true,
    };
    if !split {
        return DB::open(&opts, path);
    }
    opts.create_missing_column_families(true);
    let families = [
        ColumnFamilyDescriptor::new(DEFAULT_COLUMN_FAMILY_NAME, options(recovery, memory)),
        ColumnFamilyDescriptor::new(HEAPS_CF, heaps_options(recovery, memory)),
    ];
    DB::open_cf_descriptors(&opts, path, families)
}

/// The block-based table options every column family shares: `cache`, bloom filters,
/// index and filter blocks outside the cache, `block_bytes` data blocks.
fn table_options(cache: &Cache, block_bytes: usize) -> BlockBasedOptions {
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(cache);
    table.set_bloom_filter(10.0, false);
    // 16 KiB data blocks (RocksDB's default is 4 KiB): entities are about 1 KiB, so a
    // 4 KiB block held three or four and every scan paid the per-block cost (cache
    // lookup, iterator setup, checksum) every few rows. Measured on 100,000 1 KiB
    // entities: filtered scans 2x faster, point and range reads 5-10% faster; 32 and
    // 64 KiB blocks scan faster still but slow point reads.
    table.set_block_size(block_bytes);
    // Index and filter blocks stay in table-reader memory (about 1% of the data)
    // instead of competing with data blocks in the cache: with them in a small cache,
    // random reads over a large table evicted them and every miss re-read a large
    // index block.
    table.set_cache_index_and_filter_blocks(false);
    // A restart point every 16 index entries instead of every one: the index is
    // delta-encoded between restart points, so it takes a sixth of the memory (1M
    // entities: 8.4 -> 1.4 MiB of heap index), and a point read's binary search
    // touches fewer cache lines before it walks at most 16 entries in one or two.
    table.set_index_block_restart_interval(INDEX_RESTART_INTERVAL);
    table
}

/// The database options (and those of the default column family, which holds
/// everything but heaps), with how the WAL is recovered.
fn options(recovery: DBRecoveryMode, memory: &Memory) -> Options {
    let table = table_options(&memory.cache, BLOCK_BYTES);
    let mut opts = Options::default();
    // No compression in levels 0 and 1, which are rewritten soon after they are
    // written (a batch-insert profile spent 6 % of the server in LZ4 compressing
    // flushes); LZ4 below, where data settles.
    use DBCompressionType::{Lz4, None as Plain};
    opts.set_compression_per_level(&[Plain, Plain, Lz4, Lz4, Lz4, Lz4, Lz4]);
    opts.set_bottommost_compression_type(Lz4);
    opts.set_max_background_jobs(2);
    // 32 MiB memtables (RocksDB's default is 64 MiB), 64 MiB of them at most in both
    // column families together: with the block cache, what a write-heavy load holds
    // stays well under 200 MB (a 1,000,000-entity load peaked at 222 MB with 64 MiB
    // memtables).
    opts.set_write_buffer_size(WRITE_BUFFER_BYTES);
    opts.set_write_buffer_manager(&memory.memtables);
    // The log is kept until every column family has flushed what it holds of it; heads
    // fill their memtable about seven times slower than heaps, so without this bound a
    // crash could leave some 250 MB of log to replay on the next start. With it, heads
    // are flushed (small files) once the log reaches two memtables.
    opts.set_max_total_wal_size(MEMTABLE_BUDGET_BYTES as u64);
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
    // Flushes and compactions write their files in 64 KiB `write(2)` calls instead of
    // 1 MiB ones. A large write makes the kernel allocate large page-cache folios;
    // on a VM with free page reporting they come from the large free blocks handed
    // back to the host, and each is faulted in again as it is copied into (as
    // measured on this project's test VM, docs/performance.md): 1 MiB writes to a
    // new file cost 1.5 µs of system time per KB and 64 KiB writes 0.19 µs (0.16 µs
    // for both where the memory is backed). Batches 9-15 % less CPU per entity; the
    // cost is a `write(2)` per 64 KiB instead of per 1 MiB.
    opts.set_writable_file_max_buffer_size(WRITE_CHUNK_BYTES);
    opts.set_wal_recovery_mode(recovery);
    opts
}

/// The options of [`HEAPS_CF`]: as [`options`], but with 4 KiB blocks and no bloom
/// filters at the bottom level.
fn heaps_options(recovery: DBRecoveryMode, memory: &Memory) -> Options {
    let mut opts = options(recovery, memory);
    // 4 KiB heap blocks (heads keep 16 KiB). A point read that misses the caches copies
    // its block out of the OS page cache and checksums it; a heap is about 1 KiB, so a
    // 16 KiB block made it copy 15 KiB it did not need, which was the largest part of a
    // uniformly random read over 1,000,000 entities. Scans of heads (filters) never
    // touch these blocks; scans that return heaps read them in order.
    opts.set_block_based_table_factory(&table_options(&memory.cache, HEAP_BLOCK_BYTES));
    // A heap is only looked up after its head said it exists, so a bloom filter of the
    // bottom level (which holds most heaps) would only ever answer "maybe": none there
    // (1.2 MiB of memory per 1M heaps, and a probe per read). Upper levels keep theirs.
    opts.set_optimize_filters_for_hits(true);
    opts
}

/// The read options of [`Store::verify_checksums`]: every block's checksum checked,
/// nothing kept in the block cache (a full read would evict the working set), rows of
/// deleted tables read too (a range deletion would let the scan skip their blocks),
/// and large readaheads (the files are read in order).
fn verify_options() -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_verify_checksums(true);
    ro.fill_cache(false);
    // deprecated as a speed-up, still honoured (RocksDB 10.4): without it the scan
    // reseeks past the rows a range deletion covers, and their blocks go unread
    #[allow(deprecated)]
    ro.set_ignore_range_deletions(true);
    ro.set_readahead_size(2 << 20);
    ro
}

/// A forward scan of a range: one column family, or both merged by key.
enum Scan<'a> {
    One(DBRawIterator<'a>),
    Both { rest: DBRawIterator<'a>, heaps: DBRawIterator<'a> },
}

impl Scan<'_> {
    /// The current key and value (the smaller key of the two column families), and
    /// whether they are a heap's; `None` at the end of the range or on an error.
    fn current(&self) -> Option<(&[u8], &[u8], bool)> {
        let (rest_it, heaps_it) = match self {
            Scan::One(it) => return it.item().map(|(k, v)| (k, v, false)),
            Scan::Both { rest, heaps } => (rest, heaps),
        };
        match (rest_it.item(), heaps_it.item()) {
            // one side stopped on an error, not at its end: stop, or the other side's
            // keys would be served as if the failed side had none
            (None, Some(_)) if rest_it.status().is_err() => None,
            (Some(_), None) if heaps_it.status().is_err() => None,
            (Some(r), Some(h)) if h.0 < r.0 => Some((h.0, h.1, true)),
            (Some(r), _) => Some((r.0, r.1, false)),
            (None, Some(h)) => Some((h.0, h.1, true)),
            (None, None) => None,
        }
    }

    /// Steps past the pair [`Scan::current`] returned (`heap` as it said).
    fn advance(&mut self, heap: bool) {
        match self {
            Scan::One(it) => it.next(),
            Scan::Both { heaps, .. } if heap => heaps.next(),
            Scan::Both { rest, .. } => rest.next(),
        }
    }

    /// Why [`Scan::current`] returned `None` early, if it did.
    fn status(&self) -> Result<(), rocksdb::Error> {
        match self {
            Scan::One(it) => it.status(),
            Scan::Both { rest, heaps } => rest.status().and(heaps.status()),
        }
    }
}

impl RocksStore {
    /// The heaps' column family, if the directory has one.
    fn heaps(&self) -> Option<&ColumnFamily> {
        self.db.cf_handle(HEAPS_CF)
    }

    /// The column family `key` lives in: `None` for the default one.
    fn family_of(&self, key: &[u8]) -> Option<&ColumnFamily> {
        // the key's shape first: most keys are not heaps, and the family is found by name
        if keys::is_heap_key(key) {
            self.heaps()
        } else {
            None
        }
    }

    /// Which column families `[start, end)` can have keys in: (the default one, heaps).
    fn families_of(&self, start: &[u8], end: &[u8]) -> (bool, Option<&ColumnFamily>) {
        match self.heaps() {
            Some(cf) => {
                let (rest, heaps) = keys::range_holds(start, end);
                (rest, heaps.then_some(cf))
            }
            None => (true, None),
        }
    }

    /// Positions a scan of `[start, end)` (not empty) at `start`.
    fn seek(&self, start: &[u8], end: &[u8]) -> Scan<'_> {
        let bounded = || {
            let mut ro = ReadOptions::default();
            ro.set_iterate_upper_bound(end.to_vec());
            ro
        };
        let mut scan = match self.families_of(start, end) {
            (true, Some(cf)) => Scan::Both {
                rest: self.db.raw_iterator_opt(bounded()),
                heaps: self.db.raw_iterator_cf_opt(cf, bounded()),
            },
            (false, Some(cf)) => Scan::One(self.db.raw_iterator_cf_opt(cf, bounded())),
            (_, None) => Scan::One(self.db.raw_iterator_opt(bounded())),
        };
        match &mut scan {
            Scan::One(it) => it.seek(start),
            Scan::Both { rest, heaps } => {
                rest.seek(start);
                heaps.seek(start);
            }
        }
        scan
    }
}

/// Turns off RocksDB's per-thread perf counters (on by default, read by nothing here):
/// each row a scan steps over counted into them through a thread-local wrapper, 2 % of
/// a filtered scan's instructions.
fn no_perf_counters() {
    rocksdb::perf::set_perf_stats(rocksdb::perf::PerfStatsLevel::Disable);
}

impl Store for RocksStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        no_perf_counters();
        match self.family_of(key) {
            Some(cf) => self.db.get_cf(cf, key).map_err(|e| self.failed(e)),
            None => self.db.get(key).map_err(|e| self.failed(e)),
        }
    }

    fn write(&self, batch: WriteBatch) -> Result<(), StoreError> {
        self.damage.check_writable()?;
        self.db.write_opt(self.engine_batch(batch), &self.write_opts).map_err(|e| self.failed(e))
    }

    fn syncs_writes(&self) -> bool {
        self.syncs
    }

    fn write_unsynced(&self, batch: WriteBatch) -> Result<(), StoreError> {
        self.damage.check_writable()?;
        self.db.write_opt(self.engine_batch(batch), &self.unsynced_opts).map_err(|e| self.failed(e))
    }

    fn sync_log(&self) -> Result<(), StoreError> {
        // the log is written by every write (no manual WAL flush): this is `SyncWAL`
        self.db.flush_wal(true).map_err(engine)
    }

    fn scan<'a>(
        &'a self,
        start: &[u8],
        end: &[u8],
    ) -> Box<dyn Iterator<Item = Result<KvPair, StoreError>> + 'a> {
        if start >= end {
            return Box::new(std::iter::empty());
        }
        let mut scan = self.seek(start, end);
        let mut done = false;
        Box::new(std::iter::from_fn(move || {
            if done {
                return None;
            }
            let Some((k, v, heap)) = scan.current() else {
                done = true;
                return scan.status().err().map(|e| Err(self.failed(e)));
            };
            let pair = (k.to_vec(), v.to_vec());
            scan.advance(heap);
            Some(Ok(pair))
        }))
    }

    fn scan_with(&self, start: &[u8], end: &[u8], visit: &mut Visit<'_>) -> Result<(), StoreError> {
        if start >= end {
            return Ok(());
        }
        no_perf_counters();
        let mut scan = match self.seek(start, end) {
            // the common case (one table's heads, or its heaps) in a loop of its own: a
            // filtered scan spends some 150 ns per row, and the merged loop cost it 3-4 %
            Scan::One(mut it) => {
                while let Some((k, v)) = it.item() {
                    if !visit(k, v)? {
                        return Ok(());
                    }
                    it.next();
                }
                return it.status().map_err(|e| self.failed(e));
            }
            both => both,
        };
        while let Some((k, v, heap)) = scan.current() {
            if !visit(k, v)? {
                return Ok(());
            }
            scan.advance(heap);
        }
        scan.status().map_err(|e| self.failed(e))
    }

    fn reclaim_deleted_range(&self, start: &[u8], end: &[u8]) -> Result<(), StoreError> {
        // RocksDB drops the files below level 0 whose keys all lie in [start, end] (the
        // end inclusive: no stored key equals a range end, which is a bare prefix) and
        // leaves level 0 and partly covered files to compaction. The range's tombstone
        // is still in the memtable, so no file dropped here holds it.
        let (rest, heaps) = self.families_of(start, end);
        if let Some(cf) = heaps {
            self.db.delete_file_in_range_cf(cf, start, end).map_err(engine)?;
        }
        if rest && start < end {
            self.db.delete_file_in_range(start, end).map_err(engine)?;
        }
        Ok(())
    }

    fn damage(&self) -> DamageReport {
        self.damage.report()
    }

    fn verify_checksums(&self) -> Result<VerifyReport, StoreError> {
        let mut report = VerifyReport::default();
        for file in self.db.live_files().map_err(engine)? {
            report.files += 1;
            report.file_bytes += file.size as u64;
        }
        let families = std::iter::once(None).chain(self.heaps().map(Some));
        for cf in families {
            let mut it = match cf {
                Some(cf) => self.db.raw_iterator_cf_opt(cf, verify_options()),
                None => self.db.raw_iterator_opt(verify_options()),
            };
            it.seek_to_first();
            while let Some((k, v)) = it.item() {
                report.entries += 1;
                report.entry_bytes += (k.len() + v.len()) as u64;
                it.next();
            }
            it.status().map_err(|e| self.failed(e))?;
        }
        Ok(report)
    }

    fn flush(&self) -> Result<(), StoreError> {
        self.db.flush_wal(true).map_err(engine)?;
        if let Some(cf) = self.heaps() {
            self.db.flush_cf(cf).map_err(engine)?;
        }
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
            table[..30].iter().all(|k| !keys::is_heap_key(k))
                && table[30..].iter().all(|k| keys::is_heap_key(k))
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
        assert_eq!(
            DB::list_cf(&Options::default(), dir.path()).expect("list"),
            vec![DEFAULT_COLUMN_FAMILY_NAME]
        );
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
}
