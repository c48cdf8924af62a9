//! `RocksStore`: the durable [`Store`] on RocksDB. This is the only file in the crate
//! that names `rocksdb`.
//!
//! Entity heaps ([`keys::is_heap_key`]) live in a column family of their own,
//! `HEAPS_CF`, with smaller blocks than everything else (see `options::HEAP_BLOCK_BYTES`);
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
    ColumnFamily, DBRawIterator, DBRecoveryMode, ErrorKind, Options, ReadOptions, WriteOptions, DB,
};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::Duration;

mod options;
use options::{open_db, verify_options, Memory};

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
        // sized up front: RocksDB grows its batch by reallocating and copying it, which
        // was 2 % of a change set's instructions
        let bytes: usize = (batch.ops.iter())
            .map(|op| match op {
                WriteOp::Put(k, v) => k.len() + v.len(),
                WriteOp::Delete(k) => k.len(),
                WriteOp::DeleteRange(start, end) => 2 * (start.len() + end.len()),
            })
            .sum();
        let mut wb = rocksdb::WriteBatch::with_capacity_bytes(12 + bytes + 16 * batch.ops.len());
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
mod tests;
