//! [`EntityCache`]: the stored bytes (head and heap) of recently read entities, so a
//! point read of a hot entity costs no store lookup at all: RocksDB's block cache still
//! costs a memtable search, a bloom probe per level and a block search per key, twice
//! (head and heap). An entry read through [`super::Reads::get_entity_rendered`] holds
//! the rendered answer ([`Rendition`]) instead of the row: the next read in the same
//! form costs neither a decode nor a render, and the entry costs about what the row did.
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

use super::rendition::Rendition;
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
    value: Cached,
    referenced: bool,
}

/// What an entry holds: the row as stored, or a rendering of it.
enum Cached {
    Row(CachedRow),
    Rendered(Rendition),
}

/// What [`EntityCache::get_rendered`] found.
pub(super) enum Lookup {
    /// A rendering under the tag asked for.
    Rendered(Rendition),
    /// The row (to render, then [`EntityCache::rendered`]).
    Row(CachedRow),
    /// Nothing usable: read the store.
    Miss,
}

fn cost(key: &[u8], value: &Cached) -> usize {
    match value {
        Cached::Row(row) => row_cost(key, &row.0, row.1.as_deref()),
        Cached::Rendered(r) => 2 * key.len() + r.size() + ENTRY_OVERHEAD,
    }
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

    /// The cached row of `key`, if any (an entry holding a rendering is no row: read
    /// the store, and [`EntityCache::insert`] puts the row back).
    pub(super) fn get(&self, key: &[u8]) -> Option<CachedRow> {
        let mut shard = self.shard(key);
        let slot = shard.map.get_mut(key)?;
        slot.referenced = true;
        match &slot.value {
            Cached::Row(row) => Some(row.clone()),
            Cached::Rendered(_) => None,
        }
    }

    /// The cached rendering of `key` under `tag`, else its cached row, if any.
    pub(super) fn get_rendered(&self, key: &[u8], tag: &[u8]) -> Lookup {
        let mut shard = self.shard(key);
        let Some(slot) = shard.map.get_mut(key) else {
            return Lookup::Miss;
        };
        slot.referenced = true;
        match &slot.value {
            Cached::Rendered(r) if r.tag() == tag => Lookup::Rendered(r.clone()),
            Cached::Rendered(_) => Lookup::Miss,
            Cached::Row(row) => Lookup::Row(row.clone()),
        }
    }

    /// Keeps `rendition`, rendered from the cached row whose head is `head` (as
    /// [`EntityCache::get_rendered`] handed it out), in that row's place, if the entry
    /// still holds that very row: a write since has replaced or dropped it, and then the
    /// rendering is of a row no longer stored.
    pub(super) fn rendered(&self, key: &[u8], head: &Arc<[u8]>, rendition: Rendition) {
        let mut shard = self.shard(key);
        let Some(slot) = shard.map.get_mut(key) else { return };
        if !matches!(&slot.value, Cached::Row(row) if Arc::ptr_eq(&row.0, head)) {
            return;
        }
        let new = Cached::Rendered(rendition);
        if cost(key, &new) > self.shard_budget {
            return;
        }
        let old = std::mem::replace(&mut slot.value, new);
        let added = cost(key, &slot.value);
        shard.bytes = shard.bytes - cost(key, &old) + added;
        shard.evict(self.shard_budget);
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
        if row_cost(key, head, heap) <= self.shard_budget {
            self.insert_value(key, Cached::Row((head.into(), heap.map(Into::into))), generation);
        }
    }

    /// [`EntityCache::insert`] of a rendering of the row read, in the row's place.
    pub(super) fn insert_rendered(&self, key: &[u8], rendition: Rendition, generation: u64) {
        self.insert_value(key, Cached::Rendered(rendition), generation);
    }

    fn insert_value(&self, key: &[u8], value: Cached, generation: u64) {
        let size = cost(key, &value);
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
        let slot = Slot { value, referenced: false };
        match shard.map.insert(key.into(), slot) {
            Some(old) => shard.bytes -= cost(key, &old.value),
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
        shard.bytes -= cost(key, &old.value);
        match row.map(Cached::Row).filter(|value| cost(key, value) <= self.shard_budget) {
            Some(value) => {
                shard.bytes += cost(key, &value);
                shard.map.insert(key.into(), Slot { value, referenced: old.referenced });
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
                self.bytes -= cost(&key, &old.value);
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

    /// A write in the model tests: change the store (the key's version), then
    /// invalidate, or (with the partition lock, as transactions do) hand the cache the
    /// new row.
    fn write(c: &EntityCache, version: &mut [u32; 3], key: u8, pick: usize) {
        version[key as usize] += 1;
        match pick {
            0 | 1 => c.written(&[key], None),
            _ => c.written(&[key], Some(row(&version[key as usize].to_be_bytes(), None))),
        }
    }

    fn rendition(tag: &[u8], version: u32) -> Rendition {
        Rendition::new(tag, format!("v{version}"), version.to_be_bytes().to_vec())
    }

    #[test]
    fn a_rendering_takes_its_rows_place_until_a_write() {
        let c = EntityCache::new(1 << 20);
        insert(&c, b"k", row(b"head", None), c.generation(b"k"));
        let Lookup::Row((head, _)) = c.get_rendered(b"k", b"tag") else { panic!("the row") };
        c.rendered(b"k", &head, rendition(b"tag", 1));
        assert!(matches!(c.get_rendered(b"k", b"tag"), Lookup::Rendered(r) if r.etag() == "v1"));
        // another form, or a reader of rows, finds nothing to use
        assert!(matches!(c.get_rendered(b"k", b"other"), Lookup::Miss));
        assert!(c.get(b"k").is_none());
        // a write hands over its row: the rendering is gone
        c.written(b"k", Some(row(b"newer", None)));
        let Lookup::Row((newer, _)) = c.get_rendered(b"k", b"tag") else { panic!("the new row") };
        assert_eq!(&newer[..], b"newer");
        // a rendering of the row a write replaced is not kept
        c.rendered(b"k", &head, rendition(b"tag", 1));
        assert!(matches!(c.get_rendered(b"k", b"tag"), Lookup::Row(_)));
        // the budget counts renderings
        c.rendered(b"k", &newer, Rendition::new(b"tag", String::new(), vec![0; 1000]));
        assert!(c.bytes() >= 1000);
        c.written(b"k", None);
        assert_eq!(c.bytes(), 0);
    }

    proptest::proptest! {
        /// [`a_hit_is_never_older_than_the_last_write`] with renderings: reads through
        /// [`EntityCache::get_rendered`] render a row they found and keep the rendering
        /// later, reads that missed keep a rendering of what they read; a rendering handed
        /// out is always of the key's current version, under the tag asked for.
        #[test]
        fn a_rendering_is_never_older_than_the_last_write(
            ops in proptest::collection::vec((0u8..6, 0u8..3, 0usize..4), 1..300),
        ) {
            let c = EntityCache::new(4 * 1024);
            let tags: [&[u8]; 2] = [b"a", b"b"];
            let mut version = [0u32; 3];
            let mut reads: Vec<(u8, u64, u32)> = Vec::new();
            // reads that found a row and will keep their rendering: (key, head, tag)
            type Render<'t> = (u8, Arc<[u8]>, &'t [u8]);
            let mut renders: Vec<Render<'_>> = Vec::new();
            for (op, key, pick) in ops {
                let k = [key];
                let current = version[key as usize];
                match op {
                    0 => write(&c, &mut version, key, pick),
                    1 => reads.push((key, c.generation(&k), current)),
                    2 if !reads.is_empty() => {
                        let (key, g, v) = reads.remove(pick % reads.len());
                        match pick % 2 {
                            0 => insert(&c, &[key], row(&v.to_be_bytes(), None), g),
                            _ => c.insert_rendered(&[key], rendition(tags[pick / 2 % 2], v), g),
                        }
                    }
                    3 => {
                        if let Some((head, _)) = c.get(&k) {
                            proptest::prop_assert_eq!(&head[..], &current.to_be_bytes()[..]);
                        }
                    }
                    4 => match c.get_rendered(&k, tags[pick % 2]) {
                        Lookup::Rendered(r) => {
                            proptest::prop_assert_eq!(r.body(), &current.to_be_bytes()[..]);
                            proptest::prop_assert_eq!(r.tag(), tags[pick % 2]);
                        }
                        Lookup::Row((head, _)) => {
                            proptest::prop_assert_eq!(&head[..], &current.to_be_bytes()[..]);
                            renders.push((key, head, tags[pick % 2]));
                        }
                        Lookup::Miss => {}
                    },
                    5 if !renders.is_empty() => {
                        let (key, head, tag) = renders.remove(pick % renders.len());
                        let v = u32::from_be_bytes(head[..4].try_into().expect("4 bytes"));
                        c.rendered(&[key], &head, rendition(tag, v));
                    }
                    _ => {}
                }
                proptest::prop_assert!(c.bytes() <= 4 * 1024);
            }
        }

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
                    0 => write(&c, &mut version, key, pick),
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
