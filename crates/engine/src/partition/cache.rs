//! [`EntityCache`]: the stored bytes (head and heap) of recently read entities, so a
//! point read of a hot entity costs no store lookup at all: RocksDB's block cache still
//! costs a memtable search, a bloom probe per level and a block search per key, twice
//! (head and heap).
//!
//! Bounded in bytes, split into shards under their own mutex, evicting by CLOCK (an
//! entry read since the hand last passed gets a second chance). A full shard admits a
//! row only on its key's second miss in a while (a doorkeeper of fingerprints): reads
//! spread over far more entities than fit would otherwise evict an entry and allocate
//! a new one on every read, for entries hardly ever read again.
//!
//! Consistency, without holding any partition lock on the read path:
//! - a writer changes the store first, then reports each written key with
//!   [`EntityCache::written`] (bumping its shard's generation, and replacing a cached
//!   entry by the new row, or dropping it), with the partition lock held and before the
//!   write is acknowledged;
//! - a reader that misses takes the shard's [`EntityCache::generation`] *before*
//!   reading the store, and [`EntityCache::insert`] keeps what it read only if the
//!   generation is unchanged.
//!
//! So a value read before a write can only enter the cache before that write's report
//! (which then replaces or removes it), never after: once a write is acknowledged, no
//! read sees the value it replaced.

use foldhash::fast::RandomState;
use foldhash::HashMap;
use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, MutexGuard};

const SHARDS: usize = 16;
/// Fingerprint slots of a shard's doorkeeper (16 KiB; allocated when the shard first
/// fills). A key turned away is admitted when it misses again before another turned-away
/// key takes its slot: within some 4,000 misses of its shard.
const DOORKEEPER_SLOTS: usize = 4096;
/// What an entry costs beyond its key and values (map slot, queue slot, `Arc` headers).
const ENTRY_OVERHEAD: usize = 96;

/// A cached entity: its head and, when it has one, its heap.
pub(super) type CachedRow = (Arc<[u8]>, Option<Arc<[u8]>>);

/// See the module documentation.
pub(super) struct EntityCache {
    shards: Box<[Mutex<Shard>]>,
    hasher: RandomState,
    shard_budget: usize,
}

#[derive(Default)]
struct Shard {
    map: HashMap<Box<[u8]>, Slot>,
    /// The CLOCK queue; may hold keys no longer in `map` (invalidated), which are
    /// dropped when they reach the front, or all at once when they pile up.
    queue: VecDeque<Box<[u8]>>,
    bytes: usize,
    generation: u64,
    /// Fingerprints of keys turned away while the shard was full (0: none).
    doorkeeper: Vec<u32>,
}

struct Slot {
    row: CachedRow,
    referenced: bool,
}

fn cost(key: &[u8], row: &CachedRow) -> usize {
    row_cost(key, &row.0, row.1.as_deref())
}

fn row_cost(key: &[u8], head: &[u8], heap: Option<&[u8]>) -> usize {
    2 * key.len() + head.len() + heap.map_or(0, <[u8]>::len) + ENTRY_OVERHEAD
}

impl EntityCache {
    /// A cache holding at most about `budget` bytes.
    pub(super) fn new(budget: usize) -> Self {
        EntityCache {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            hasher: RandomState::default(),
            shard_budget: budget / SHARDS,
        }
    }

    fn shard(&self, key: &[u8]) -> MutexGuard<'_, Shard> {
        self.shard_of(self.hasher.hash_one(key))
    }

    /// The shard of a key whose hash is `hash` (its low bits pick the shard).
    fn shard_of(&self, hash: u64) -> MutexGuard<'_, Shard> {
        // A panic while holding a shard leaves it consistent enough to go on.
        self.shards[(hash as usize) % SHARDS].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The cached row of `key`, if any.
    pub(super) fn get(&self, key: &[u8]) -> Option<CachedRow> {
        let mut shard = self.shard(key);
        let slot = shard.map.get_mut(key)?;
        slot.referenced = true;
        Some(slot.row.clone())
    }

    /// The generation to pass to [`EntityCache::insert`]: take it before reading the
    /// store.
    pub(super) fn generation(&self, key: &[u8]) -> u64 {
        self.shard(key).generation
    }

    /// Keeps the row `head`, `heap`, read from the store for `key` after
    /// [`EntityCache::generation`] returned `generation`, unless a write has invalidated
    /// the shard since, or the shard is full and has not turned `key` away before.
    pub(super) fn insert(&self, key: &[u8], head: &[u8], heap: Option<&[u8]>, generation: u64) {
        let size = row_cost(key, head, heap);
        if size > self.shard_budget {
            return;
        }
        let hash = self.hasher.hash_one(key);
        let mut shard = self.shard_of(hash);
        if shard.generation != generation {
            return;
        }
        if shard.bytes + size > self.shard_budget && !shard.map.contains_key(key) && !shard.admits(hash) {
            return;
        }
        let slot = Slot { row: (head.into(), heap.map(Into::into)), referenced: false };
        match shard.map.insert(key.into(), slot) {
            Some(old) => shard.bytes -= cost(key, &old.row),
            None => shard.queue.push_back(key.into()),
        }
        shard.bytes += size;
        shard.evict(self.shard_budget);
    }

    /// Whether `key` is cached now (it may be evicted or filled right after).
    pub(super) fn contains(&self, key: &[u8]) -> bool {
        self.shard(key).map.contains_key(key)
    }

    /// Call after writing `key`, with the partition lock still held and before
    /// acknowledging: makes reads of the store that began before this call unable to
    /// insert what they read, and replaces a cached entry of `key` by `row`, what the
    /// store now holds (no later write to `key` can have landed, the lock being held), so
    /// reads that follow writes of hot entities keep hitting. `None` (a delete, a failed
    /// write, or a row not at hand) drops the entry.
    pub(super) fn written(&self, key: &[u8], row: Option<CachedRow>) {
        let mut shard = self.shard(key);
        shard.generation += 1;
        let Some(old) = shard.map.remove(key) else {
            return shard.compact_queue();
        };
        shard.bytes -= cost(key, &old.row);
        match row.filter(|row| cost(key, row) <= self.shard_budget) {
            Some(row) => {
                shard.bytes += cost(key, &row);
                shard.map.insert(key.into(), Slot { row, referenced: old.referenced });
                shard.evict(self.shard_budget);
            }
            None => shard.compact_queue(),
        }
    }

    /// Forgets everything (after a write that is not per key, such as a table delete).
    pub(super) fn clear(&self) {
        for shard in self.shards.iter() {
            let mut shard = shard.lock().unwrap_or_else(|p| p.into_inner());
            shard.generation += 1;
            shard.map.clear();
            shard.queue.clear();
            shard.bytes = 0;
        }
    }

    /// Bytes held, by the same measure as the budget.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> usize {
        self.shards.iter().map(|s| s.lock().map(|s| s.bytes).unwrap_or(0)).sum()
    }

    /// Queue slots held (live and stale), for tests of the bound.
    #[cfg(test)]
    pub(super) fn queued(&self) -> usize {
        self.shards.iter().map(|s| s.lock().map(|s| s.queue.len()).unwrap_or(0)).sum()
    }
}

impl Shard {
    /// The doorkeeper: whether a key with `hash` missed before, since its slot was last
    /// taken; if not, remembers it. The slot comes from the hash's high bits (the low
    /// ones picked the shard), the fingerprint from its low half (never 0).
    fn admits(&mut self, hash: u64) -> bool {
        if self.doorkeeper.is_empty() {
            self.doorkeeper = vec![0; DOORKEEPER_SLOTS];
        }
        let slot = ((hash >> 32) as usize) % DOORKEEPER_SLOTS;
        let fingerprint = (hash as u32) | 1;
        let seen = self.doorkeeper[slot] == fingerprint;
        self.doorkeeper[slot] = if seen { 0 } else { fingerprint };
        seen
    }

    /// CLOCK: drops entries from the front of the queue until under `budget`; an entry
    /// read since it was last passed goes to the back once, unread.
    fn evict(&mut self, budget: usize) {
        while self.bytes > budget {
            let Some(key) = self.queue.pop_front() else { break };
            let Some(slot) = self.map.get_mut(&key) else { continue };
            if slot.referenced {
                slot.referenced = false;
                self.queue.push_back(key);
            } else if let Some(old) = self.map.remove(&key) {
                self.bytes -= cost(&key, &old.row);
            }
        }
    }

    /// Rebuilds the queue from the live keys when stale ones (of invalidated entries)
    /// outnumber them, so a stream of reads and writes of a few keys cannot grow it.
    fn compact_queue(&mut self) {
        if self.queue.len() > 2 * self.map.len() + 64 {
            let map = &self.map;
            let mut seen = foldhash::HashSet::with_capacity_and_hasher(map.len(), RandomState::default());
            self.queue.retain(|k| map.contains_key(k) && seen.insert(k.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(head: &[u8], heap: Option<&[u8]>) -> CachedRow {
        (head.into(), heap.map(Into::into))
    }

    /// [`EntityCache::insert`] of a [`CachedRow`].
    fn insert(c: &EntityCache, key: &[u8], row: CachedRow, generation: u64) {
        c.insert(key, &row.0, row.1.as_deref(), generation);
    }

    #[test]
    fn keeps_what_was_read_unless_a_write_came_between() {
        let c = EntityCache::new(1 << 20);
        let g = c.generation(b"k");
        insert(&c, b"k", row(b"head", Some(b"heap")), g);
        let (head, heap) = c.get(b"k").expect("cached");
        assert_eq!((&head[..], heap.as_deref()), (&b"head"[..], Some(&b"heap"[..])));

        // a read that began before a write cannot store what it read
        let g = c.generation(b"k");
        c.written(b"k", None);
        assert!(c.get(b"k").is_none());
        insert(&c, b"k", row(b"stale", None), g);
        assert!(c.get(b"k").is_none());
        // one that began after it can
        let g = c.generation(b"k");
        insert(&c, b"k", row(b"fresh", None), g);
        assert_eq!(&c.get(b"k").expect("cached").0[..], b"fresh");

        // a write that hands over its row replaces a cached entry, and only a cached one
        c.written(b"k", Some(row(b"newer", Some(b"h"))));
        assert_eq!(&c.get(b"k").expect("replaced").0[..], b"newer");
        c.written(b"other", Some(row(b"x", None)));
        assert!(c.get(b"other").is_none());
        c.written(b"k", None);
        assert!(c.get(b"k").is_none());
        let g = c.generation(b"k");
        c.written(b"k", Some(row(b"late", None)));
        insert(&c, b"k", row(b"stale", None), g);
        assert!(c.get(b"k").is_none());

        let g = c.generation(b"k");
        c.clear();
        insert(&c, b"k", row(b"stale", None), g);
        assert!(c.get(b"k").is_none());
        assert_eq!(c.bytes(), 0);
    }

    #[test]
    fn stays_within_its_budget_and_keeps_what_is_read() {
        let budget = 64 * 1024;
        let c = EntityCache::new(budget);
        let value = vec![7u8; 300];
        let hot: Vec<Vec<u8>> = (0..8u32).map(|i| format!("hot{i}").into_bytes()).collect();
        for i in 0..5_000u32 {
            let key = format!("key{i}").into_bytes();
            insert(&c, &key, row(&value, None), c.generation(&key));
            for k in &hot {
                match c.get(k) {
                    Some(_) => {}
                    None => insert(&c, k, row(&value, None), c.generation(k)),
                }
            }
            assert!(c.bytes() <= budget, "{} bytes over a budget of {budget}", c.bytes());
        }
        // entries read between insertions survive a stream of entries read once
        assert!(hot.iter().all(|k| c.get(k).is_some()));
        assert!(c.bytes() > budget / 2);
        // larger than a shard: never cached
        let big = vec![0u8; budget];
        insert(&c, b"big", row(&big, None), c.generation(b"big"));
        assert!(c.get(b"big").is_none());
    }

    #[test]
    fn a_full_cache_admits_a_key_on_its_second_miss_only() {
        let budget = 64 * 1024;
        let c = EntityCache::new(budget);
        let value = vec![7u8; 300];
        let key = |i: u32| format!("key{i}").into_bytes();
        // each key read once: the cache fills, then turns the rest away, evicting nothing
        for i in 0..5_000 {
            insert(&c, &key(i), row(&value, None), c.generation(&key(i)));
        }
        let kept = (0..5_000).filter(|&i| c.contains(&key(i))).count();
        assert!(kept > 100 && c.bytes() <= budget, "{kept} kept, {} bytes", c.bytes());
        assert!(c.contains(&key(0)) && c.contains(&key(1)), "the first keys were evicted");
        assert!((4_000..5_000).all(|i| !c.contains(&key(i))), "keys read once were admitted");
        // read again soon after being turned away: admitted (the cache makes room)
        for i in 4_990..5_000 {
            insert(&c, &key(i), row(&value, None), c.generation(&key(i)));
            assert!(c.contains(&key(i)), "key{i} turned away twice");
        }
        assert!(c.bytes() <= budget);
        // a cached key is replaced without asking the doorkeeper
        let k = (0..4_000).map(key).find(|k| c.contains(k)).expect("a key still cached");
        insert(&c, &k, row(b"new", None), c.generation(&k));
        assert_eq!(&c.get(&k).expect("cached").0[..], b"new");
    }

    #[test]
    fn invalidations_do_not_grow_the_queue() {
        let c = EntityCache::new(1 << 20);
        for _ in 0..10_000 {
            for k in [&b"a"[..], b"b", b"c"] {
                insert(&c, k, row(b"v", None), c.generation(k));
                c.written(k, None);
            }
        }
        assert!(c.queued() <= SHARDS * 70, "{} queued", c.queued());
        assert_eq!(c.bytes(), 0);
    }

    proptest::proptest! {
        /// Against a model of what was last written: a hit is always the value read after
        /// the key's latest invalidation, whatever the interleaving of reads (taking the
        /// generation, reading, inserting) and writes (invalidating).
        #[test]
        fn a_hit_is_never_older_than_the_last_write(
            ops in proptest::collection::vec((0u8..4, 0u8..3, 0usize..4), 1..300),
        ) {
            let c = EntityCache::new(4 * 1024);
            // the store: current version per key; pending reads: (key, generation, version read)
            let mut version = [0u32; 3];
            let mut pending: Vec<(u8, u64, u32)> = Vec::new();
            for (op, key, pick) in ops {
                let k = [key];
                match op {
                    // a write: change the store, then invalidate, or (with the partition
                    // lock, as transactions do) hand the cache the new row
                    0 => {
                        version[key as usize] += 1;
                        match pick {
                            0 | 1 => c.written(&k, None),
                            _ => c.written(&k, Some(row(&version[key as usize].to_be_bytes(), None))),
                        }
                    }
                    // a read begins: generation, then the store
                    1 => pending.push((key, c.generation(&k), version[key as usize])),
                    // a pending read ends by inserting what it read
                    2 if !pending.is_empty() => {
                        let (key, g, v) = pending.remove(pick % pending.len());
                        insert(&c, &[key], row(&v.to_be_bytes(), None), g);
                    }
                    _ => {
                        if let Some((head, _)) = c.get(&k) {
                            proptest::prop_assert_eq!(&head[..], &version[key as usize].to_be_bytes()[..]);
                        }
                    }
                }
            }
        }
    }
}
