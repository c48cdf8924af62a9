//! How RocksDB is configured for this store: the memory it may use (block cache,
//! memtables), block sizes and filters of each column family, compression, and the read
//! options of a full verification. The reasons for each setting are beside it; the
//! measurements are in docs/performance.md.

use super::HEAPS_CF;
use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompressionType, DBRecoveryMode, Options,
    ReadOptions, WriteBufferManager, DB, DEFAULT_COLUMN_FAMILY_NAME,
};
use std::path::Path;

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

/// What the column families share: the block cache, and the memtables' budget.
pub(super) struct Memory {
    cache: Cache,
    memtables: WriteBufferManager,
}

impl Memory {
    pub(super) fn new() -> Memory {
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
pub(super) fn open_db(
    path: &Path,
    recovery: DBRecoveryMode,
    memory: &Memory,
    new: bool,
) -> Result<DB, rocksdb::Error> {
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
pub(super) fn verify_options() -> ReadOptions {
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
