//! Value summaries: for scans whose filter requires `P eq 'value'` (a String of at most
//! 64 bytes) or `P op literal` (a number or date compared with `eq`, `lt`, `le`, `gt`,
//! `ge`; Timestamp too), an in-memory record of what runs of a table's rows can hold, so
//! a scan seeks past the runs that cannot instead of reading every row.
//!
//! A table's summary cuts its head key range into *blocks* of about [`BLOCK_ROWS`]
//! rows: block `i` covers `[start_i, start_i+1)`, the first starting at the table's
//! first possible key and the last running to its end, so every key, stored or yet to
//! be written, falls in exactly one block. Each block keeps a Bloom filter of the
//! (name, value) pairs of its rows' short Strings, and for each (name, type) of their
//! numbers and dates the smallest and largest value (a *span*; Timestamp's too). Both
//! are supersets: writes add their pairs and widen spans before they land in the store,
//! deletes and replaced values leave theirs behind, so a block whose filter lacks the
//! pair, or without a span of the compared property and type that can satisfy the
//! comparison, holds no matching row (a comparison is true only for a row holding the
//! property with the literal's own type; NaN satisfies none).
//!
//! Summaries are built off the request path, in a thread, by one pass over a table's
//! heads, the first time a scan could use one. Writes that race the pass are kept as
//! *pending* pairs and added when it ends; writes that started before the summary
//! existed are waited for (the builder takes and releases every partition stripe
//! before it reads), so none is missed. A summary whose blocks have taken in many more
//! pairs than they were sized for (an append-heavy table puts every new row in its last
//! block) is dropped and rebuilt by the next scan that wants it. Memory is bounded:
//! all summaries together stay under [`SUMMARY_BUDGET`] bytes; a table that would not
//! fit is scanned row by row, as it is before its summary exists.
//!
//! A block also keeps *columns* (`columns.rs`) of the property names scans that
//! evaluate a filter reading no key asked for when the summary was built: exact values
//! a scan evaluates such a filter on. A scan wanting a name the summary keeps no column
//! of, or finding that writes dropped most blocks' columns, drops the summary to build
//! it again with its names added, once the summary is old enough that building again
//! costs little. Columns have half of [`SUMMARY_BUDGET`] again to themselves; a
//! summary whose columns would not fit it keeps none.

use super::columns::{Columns, ColumnsBuilder};
use super::stripes::Stripes;
use aztable_model::{EdmRef, EdmValue};
use aztable_store::{codec, keys, Store, StoreError, WriteBatch, WriteOp};
use aztable_wire::filter::{CmpOp, Requirement};
use foldhash::HashMap;
use std::cmp::Ordering as Order;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

/// Rows per block: a block whose filter holds the pair is read whole, so smaller blocks
/// read fewer rows around each match, at a seek and about 60 bytes per block.
pub(super) const BLOCK_ROWS: u32 = 128;

/// What every summary together may hold.
pub(super) const SUMMARY_BUDGET: usize = 32 << 20;

/// Bits per pair a block's filter is sized for (with 4 probes: about 1 % false hits).
const BITS_PER_PAIR: usize = 12;

/// Pending pairs a build keeps for writes racing it before it gives up.
const MAX_PENDING: usize = 200_000;

/// Spans a block keeps; a block whose rows have more (name, type)s of numbers and
/// dates can no longer rule out a comparison.
const MAX_SPANS: usize = 24;

/// How long a table whose build failed waits before a scan may start another.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// How long a table whose summary did not fit the budget waits before another try.
const RETRY_OVER_BUDGET: Duration = Duration::from_secs(60);

/// Rows a build reads per store pass (it holds the store only that long).
const BUILD_CHUNK: usize = 4096;

const PAIR_HASH: foldhash::fast::FixedState = foldhash::fast::FixedState::with_seed(0x243f_6a88_85a3_08d3);

/// The hash a summary records for a property `name` holding the String `value`.
pub(super) fn pair_hash(name: &[u8], value: &[u8]) -> u64 {
    let mut h = PAIR_HASH.build_hasher();
    h.write_usize(name.len());
    h.write(name);
    h.write(value);
    h.finish()
}

/// The name a span of a property is kept under; Timestamp's is the empty name, which
/// no custom property has.
fn name_hash(name: &[u8]) -> u64 {
    pair_hash(b"", name)
}

/// A number or date as compared by a filter: only values of one variant compare.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scalar {
    Int32(i32),
    Int64(i64),
    Double(f64),
    DateTime(i64),
}

impl Scalar {
    /// A stored value a span records (a NaN satisfies no comparison: none).
    fn stored(v: &EdmRef<'_>) -> Option<Scalar> {
        match *v {
            EdmRef::Int32(n) => Some(Scalar::Int32(n)),
            EdmRef::Int64(n) => Some(Scalar::Int64(n)),
            EdmRef::Double(d) if !d.is_nan() => Some(Scalar::Double(d)),
            EdmRef::DateTime(t) => Some(Scalar::DateTime(t.0)),
            _ => None,
        }
    }

    fn literal(v: &EdmValue) -> Option<Scalar> {
        match *v {
            EdmValue::Int32(n) => Some(Scalar::Int32(n)),
            EdmValue::Int64(n) => Some(Scalar::Int64(n)),
            EdmValue::Double(d) => Some(Scalar::Double(d)),
            EdmValue::DateTime(t) => Some(Scalar::DateTime(t.0)),
            _ => None,
        }
    }

    fn same_type(self, other: Scalar) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }

    /// The order of two values of one type (`None` across types, or with a NaN).
    fn order(self, other: Scalar) -> Option<Order> {
        match (self, other) {
            (Scalar::Int32(a), Scalar::Int32(b)) => Some(a.cmp(&b)),
            (Scalar::Int64(a), Scalar::Int64(b)) | (Scalar::DateTime(a), Scalar::DateTime(b)) => {
                Some(a.cmp(&b))
            }
            (Scalar::Double(a), Scalar::Double(b)) => a.partial_cmp(&b),
            _ => None,
        }
    }
}

/// The smallest and largest value of one (name, type) in a block.
#[derive(Debug, Clone, Copy)]
struct Span {
    name: u64,
    lo: Scalar,
    hi: Scalar,
}

/// One comparison every kept row satisfies.
#[derive(Debug, Clone)]
struct Bound {
    name: u64,
    op: CmpOp,
    value: Scalar,
}

/// What every row a scan keeps holds: a summary rules out blocks by it.
#[derive(Debug, Clone)]
pub struct Probe(Test);

/// A condition a block's records can rule out, or a join of such conditions.
#[derive(Debug, Clone)]
enum Test {
    /// The (name, value) pair of a `P eq 'short string'`.
    Pair(u64),
    Bound(Bound),
    All(Vec<Test>),
    Any(Vec<Test>),
}

impl Probe {
    /// From what every row a filter matches satisfies ([`Requirement`]); `None` when
    /// nothing of it can rule a block out.
    pub fn new(requirement: Option<&Requirement<'_>>) -> Option<Probe> {
        requirement.and_then(test).map(Probe)
    }
}

/// A requirement's test: a part no summary records (a String that may be kept in the
/// heap, a literal without a summarized type) can hold anywhere, so it drops out of an
/// `All` and leaves an `Any` nothing to rule out.
fn test(requirement: &Requirement<'_>) -> Option<Test> {
    match requirement {
        Requirement::Equals { name, value } => {
            codec::string_in_head(value).then(|| Test::Pair(pair_hash(name.as_bytes(), value.as_bytes())))
        }
        Requirement::Compares { name, op, value } => {
            let value = Scalar::literal(value).filter(|_| *op != CmpOp::Ne)?;
            Some(Test::Bound(Bound { name: name_hash(name.unwrap_or("").as_bytes()), op: *op, value }))
        }
        Requirement::All(parts) => {
            let tests: Vec<Test> = parts.iter().filter_map(test).collect();
            (!tests.is_empty()).then_some(Test::All(tests))
        }
        Requirement::Any(parts) => parts.iter().map(test).collect::<Option<Vec<_>>>().map(Test::Any),
    }
}

/// What one row adds to its block: the hashes of its pairs and its numbers and dates.
#[derive(Debug, Default)]
struct Facts {
    pairs: Vec<u64>,
    scalars: Vec<(u64, Scalar)>,
}

impl Facts {
    fn of_head(head: &[u8]) -> Result<Facts, StoreError> {
        Facts::of_head_into(head, None)
    }

    /// A row's facts, its values also given to `columns` when the build keeps them.
    fn of_head_into(head: &[u8], mut columns: Option<&mut ColumnsBuilder>) -> Result<Facts, StoreError> {
        let mut facts = Facts::default();
        if let Some(c) = columns.as_deref_mut() {
            c.begin_row();
        }
        let timestamp = codec::head_fields(head, |name, value| {
            if let Some(c) = columns.as_deref_mut() {
                c.field(name, value.as_ref());
            }
            match value {
                Some(EdmRef::String(s)) => facts.pairs.push(pair_hash(name, s.as_bytes())),
                Some(other) => {
                    if let Some(scalar) = Scalar::stored(&other) {
                        facts.scalars.push((name_hash(name), scalar));
                    }
                }
                None => {}
            }
        })?;
        if let Some(c) = columns {
            c.end_row(timestamp);
        }
        facts.scalars.push((name_hash(b""), Scalar::DateTime(timestamp.0)));
        Ok(facts)
    }
}

/// A block's spans.
#[derive(Debug, Default)]
struct Spans {
    spans: Vec<Span>,
    /// More (name, type)s than [`MAX_SPANS`] met: no comparison is ruled out.
    untracked: bool,
}

impl Spans {
    fn widen(&mut self, name: u64, v: Scalar) {
        if let Some(span) = self.spans.iter_mut().find(|s| s.name == name && s.lo.same_type(v)) {
            if v.order(span.lo) == Some(Order::Less) {
                span.lo = v;
            }
            if v.order(span.hi) == Some(Order::Greater) {
                span.hi = v;
            }
        } else if self.spans.len() < MAX_SPANS {
            self.spans.push(Span { name, lo: v, hi: v });
        } else {
            self.untracked = true;
        }
    }

    /// Whether some row of the block can satisfy `bound`.
    fn may_satisfy(&self, bound: &Bound) -> bool {
        if self.untracked {
            return true;
        }
        let Some(span) = self.spans.iter().find(|s| s.name == bound.name && s.lo.same_type(bound.value))
        else {
            // no row holds the property with the literal's type
            return false;
        };
        let (lo, hi) = (span.lo.order(bound.value), span.hi.order(bound.value));
        match bound.op {
            CmpOp::Eq => {
                matches!(lo, Some(Order::Less | Order::Equal))
                    && matches!(hi, Some(Order::Greater | Order::Equal))
            }
            CmpOp::Lt => lo == Some(Order::Less),
            CmpOp::Le => matches!(lo, Some(Order::Less | Order::Equal)),
            CmpOp::Gt => hi == Some(Order::Greater),
            CmpOp::Ge => matches!(hi, Some(Order::Greater | Order::Equal)),
            CmpOp::Ne => true,
        }
    }
}

/// A Bloom filter of pair hashes, 4 probes by double hashing.
#[derive(Debug, Clone)]
struct Bloom {
    words: Box<[u64]>,
    /// Bits set.
    ones: usize,
}

impl Bloom {
    fn sized_for(pairs: usize) -> Bloom {
        let bits = (pairs.max(1) * BITS_PER_PAIR).next_power_of_two().max(64);
        Bloom { words: vec![0; bits / 64].into_boxed_slice(), ones: 0 }
    }

    fn bits(&self) -> usize {
        self.words.len() * 64
    }

    fn probes(&self, hash: u64) -> [usize; 4] {
        let mask = self.bits() - 1;
        let (a, b) = (hash, hash.rotate_left(32) | 1);
        [0u64, 1, 2, 3].map(|i| (a.wrapping_add(i.wrapping_mul(b)) as usize) & mask)
    }

    fn add(&mut self, hash: u64) {
        for bit in self.probes(hash) {
            if let Some(w) = self.words.get_mut(bit / 64) {
                self.ones += usize::from(*w & (1 << (bit % 64)) == 0);
                *w |= 1 << (bit % 64);
            }
        }
    }

    fn may_hold(&self, hash: u64) -> bool {
        self.probes(hash)
            .iter()
            .all(|&bit| self.words.get(bit / 64).is_some_and(|w| w & (1 << (bit % 64)) != 0))
    }
}

/// One run of a table's rows.
#[derive(Debug)]
struct Block {
    /// The block's first key (inclusive); it ends where the next block starts.
    start: Vec<u8>,
    /// Rows it held when built.
    rows: u32,
    bloom: Bloom,
    spans: Spans,
    /// Its rows' exact values, until a write reaches the block (`columns.rs`).
    columns: Option<Arc<Columns>>,
}

impl Block {
    fn bytes(&self) -> usize {
        std::mem::size_of::<Block>()
            + self.start.capacity()
            + self.bloom.words.len() * 8
            + self.spans.spans.capacity() * std::mem::size_of::<Span>()
    }

    fn column_bytes(&self) -> usize {
        self.columns.as_ref().map_or(0, |c| c.bytes())
    }

    /// Whether some row of the block can satisfy `probe`.
    fn may_hold(&self, probe: &Probe) -> bool {
        self.may_pass(&probe.0)
    }

    fn may_pass(&self, test: &Test) -> bool {
        match test {
            Test::Pair(pair) => self.bloom.may_hold(*pair),
            Test::Bound(bound) => self.spans.may_satisfy(bound),
            Test::All(tests) => tests.iter().all(|t| self.may_pass(t)),
            Test::Any(tests) => tests.iter().any(|t| self.may_pass(t)),
        }
    }

    /// Whether the filter has taken in so many new pairs beyond its size that it
    /// hardly rejects anything any more: half its bits set (sized as it is, a filter
    /// starts at about a quarter) lets one pair in sixteen through.
    fn saturated(&self) -> bool {
        self.bloom.ones * 2 > self.bloom.bits()
    }
}

/// A table's blocks, in key order.
#[derive(Debug)]
struct Summary {
    blocks: Vec<Block>,
    /// The table's head range end: where the last block ends.
    end: Vec<u8>,
    /// What it holds besides columns, and what its columns held when built.
    bytes: usize,
    column_bytes: usize,
    /// The property names its columns keep (what scans asked for).
    wanted: Vec<String>,
    /// Blocks built with columns, and those whose columns writes have dropped since.
    with_columns: usize,
    dropped: usize,
    /// When its build ended, and how long it took.
    built: Instant,
    took: Duration,
}

impl Summary {
    /// The block covering `key`.
    fn block_of(&mut self, key: &[u8]) -> Option<&mut Block> {
        let i = self.blocks.partition_point(|b| b.start.as_slice() <= key);
        self.blocks.get_mut(i.checked_sub(1)?)
    }

    /// Adds a row's `facts` to the block covering `key`, whose columns no longer hold
    /// every row; false once that block's filter is saturated.
    fn add(&mut self, key: &[u8], facts: &Facts) -> bool {
        match self.block_of(key) {
            Some(block) => {
                facts.pairs.iter().for_each(|&h| block.bloom.add(h));
                facts.scalars.iter().for_each(|&(name, v)| block.spans.widen(name, v));
                let dropped = block.columns.take().is_some();
                let keep = !block.saturated();
                self.dropped += usize::from(dropped);
                keep
            }
            None => true,
        }
    }

    /// Drops every column (the summary keeps its filters and spans).
    fn strip_columns(&mut self) {
        self.blocks.iter_mut().for_each(|b| b.columns = None);
        self.column_bytes = 0;
        self.with_columns = 0;
        self.dropped = 0;
    }

    /// Whether building it again costs little: ten times the build's length after it
    /// (at least [`RETRY_AFTER`]).
    fn old_enough(&self) -> bool {
        self.built.elapsed() >= (self.took * 10).max(RETRY_AFTER)
    }

    /// Whether a scan wanting columns of `names` should build it again: writes dropped
    /// the columns of most blocks, or it keeps no column of a name, and it is
    /// [`Summary::old_enough`].
    fn rebuild_for(&self, names: &[String]) -> bool {
        let worn = self.dropped * 2 > self.with_columns;
        (worn || !self.covers(names)) && self.old_enough()
    }

    fn covers(&self, names: &[String]) -> bool {
        names.iter().all(|n| self.wanted.contains(n))
    }
}

#[derive(Debug)]
enum Entry {
    /// A pass over the table is under way; writes meanwhile leave their facts here.
    Building {
        pending: Vec<(Vec<u8>, Facts)>,
        /// The names whose columns it keeps.
        wanted: Vec<String>,
    },
    Ready(Summary),
    /// No summary, and no new build before `until` (the last failed, or a scan dropped
    /// the summary to build it again for these names).
    Failed {
        until: Instant,
        wanted: Vec<String>,
    },
}

impl Entry {
    /// The names whose columns the table's summary keeps, or will.
    fn wanted(&self) -> &[String] {
        match self {
            Entry::Building { wanted, .. } | Entry::Failed { wanted, .. } => wanted,
            Entry::Ready(summary) => &summary.wanted,
        }
    }
}

/// Names a summary keeps columns of at most: the newest scan's first.
const MAX_WANTED: usize = 16;

/// `names`, then those of `old` not among them, up to [`MAX_WANTED`].
fn union(names: &[String], old: &[String]) -> Vec<String> {
    let mut wanted: Vec<String> = Vec::with_capacity(MAX_WANTED);
    for n in names.iter().chain(old) {
        if wanted.len() < MAX_WANTED && !wanted.contains(n) {
            wanted.push(n.clone());
        }
    }
    wanted
}

/// Key ranges a scan must walk, and the rows it may skip.
#[derive(Debug, Default)]
pub(super) struct Walk {
    /// Disjoint, ascending `[start, end)` ranges within the scan's range.
    pub(super) ranges: Vec<(Vec<u8>, Vec<u8>)>,
    /// Rows (as counted when their blocks were built) in the blocks skipped.
    pub(super) skipped_rows: u64,
    /// The columns of the blocks within `ranges` that have them, in key order, when the
    /// scan asked for them.
    pub(super) columns: Vec<Arc<Columns>>,
}

/// Why a build ended without a summary.
#[derive(Debug)]
enum BuildError {
    Store(StoreError),
    /// The summary would not fit the budget (the build stops as soon as it knows).
    OverBudget,
    /// The partition server is closing, or the thread could not start.
    Stopped,
}

/// The summaries of every table of a store.
#[derive(Debug)]
pub(super) struct Summaries {
    /// What every summary together may hold besides columns ([`SUMMARY_BUDGET`]), and
    /// what their columns may hold besides (half as much): columns never crowd out
    /// another table's filters and spans.
    budget: usize,
    column_budget: usize,
    tables: Mutex<HashMap<u64, Entry>>,
    /// Entries in `tables`: writes skip the lock while there are none.
    entries: AtomicUsize,
    /// Bytes of the ready summaries, and of their columns as built.
    bytes: AtomicUsize,
    column_bytes: AtomicUsize,
    /// A build is running (one at a time).
    building: AtomicBool,
    /// Cleared when the partition server closes: a running build stops.
    closed: AtomicBool,
}

impl Summaries {
    pub(super) fn with_budget(budget: usize) -> Summaries {
        Summaries {
            budget,
            column_budget: budget / 2,
            tables: Mutex::default(),
            entries: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
            column_bytes: AtomicUsize::new(0),
            building: AtomicBool::new(false),
            closed: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Entry>> {
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set(&self, tables: &mut HashMap<u64, Entry>, table_id: u64, entry: Option<Entry>) {
        let old = match entry {
            Some(e) => tables.insert(table_id, e),
            None => tables.remove(&table_id),
        };
        if let Some(Entry::Ready(s)) = &old {
            self.bytes.fetch_sub(s.bytes, Ordering::Relaxed);
            self.column_bytes.fetch_sub(s.column_bytes, Ordering::Relaxed);
        }
        self.entries.store(tables.len(), Ordering::SeqCst);
    }

    /// Records the pairs of the heads `batch` writes into `table_id`, before the batch
    /// reaches the store. The caller holds the partition's stripe.
    pub(super) fn written(&self, table_id: u64, batch: &WriteBatch) {
        if self.entries.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut tables = self.lock();
        let Some(entry) = tables.get_mut(&table_id) else { return };
        if matches!(entry, Entry::Failed { .. }) {
            return;
        }
        let mut keep = true;
        for op in &batch.ops {
            let WriteOp::Put(key, head) = op else { continue };
            if !keys::is_entity_key(key) {
                continue;
            }
            let Ok(facts) = Facts::of_head(head) else {
                // (the engine encoded it: cannot happen) no summary is better than a wrong one
                keep = false;
                break;
            };
            match entry {
                Entry::Ready(summary) => keep &= summary.add(key, &facts),
                Entry::Building { pending, .. } => {
                    pending.push((key.clone(), facts));
                    keep &= pending.len() <= MAX_PENDING;
                }
                Entry::Failed { .. } => {}
            }
        }
        if !keep {
            let wanted = entry.wanted().to_vec();
            let failed = Entry::Failed { until: Instant::now() + RETRY_AFTER, wanted };
            self.set(&mut tables, table_id, Some(failed));
        }
    }

    /// Forgets a table (it was deleted).
    pub(super) fn forget(&self, table_id: u64) {
        let mut tables = self.lock();
        self.set(&mut tables, table_id, None);
    }

    /// The ranges within `[from, to)` of table `table_id` a scan keeping only rows that
    /// satisfy `probe` (when it has one) must walk, with the blocks' columns when the
    /// scan can evaluate its filter, which reads `names`, on them; `None` without a ready
    /// summary, or when the scan finds it should be built again
    /// ([`Summary::rebuild_for`]: it is then dropped, so the scan starts that build).
    pub(super) fn walk(
        &self,
        table_id: u64,
        from: &[u8],
        to: &[u8],
        probe: Option<&Probe>,
        names: Option<&[String]>,
    ) -> Option<Walk> {
        if self.entries.load(Ordering::SeqCst) == 0 {
            return None;
        }
        let mut tables = self.lock();
        let Some(Entry::Ready(summary)) = tables.get(&table_id) else { return None };
        if let Some(names) = names.filter(|n| summary.rebuild_for(n)) {
            let wanted = union(names, &summary.wanted);
            self.set(&mut tables, table_id, Some(Entry::Failed { until: Instant::now(), wanted }));
            return None;
        }
        let columns = names.is_some_and(|n| summary.covers(n)) && summary.dropped < summary.with_columns;
        let mut walk = Walk::default();
        if probe.is_none() && !columns {
            walk.ranges.push((from.to_vec(), to.to_vec()));
            return Some(walk);
        }
        let first = summary.blocks.partition_point(|b| b.start.as_slice() <= from).saturating_sub(1);
        let mut open: Option<Vec<u8>> = None;
        for (i, block) in summary.blocks.iter().enumerate().skip(first) {
            let end = summary.blocks.get(i + 1).map_or(summary.end.as_slice(), |b| b.start.as_slice());
            if block.start.as_slice() >= to {
                break;
            }
            if probe.is_none_or(|p| block.may_hold(p)) {
                open.get_or_insert_with(|| block.start.as_slice().max(from).to_vec());
                if let Some(c) = block.columns.as_ref().filter(|_| columns && end > from) {
                    walk.columns.push(Arc::clone(c));
                }
            } else {
                walk.skipped_rows += u64::from(block.rows);
                if let Some(start) = open.take() {
                    walk.ranges.push((start, block.start.clone()));
                }
            }
            if end >= to {
                break;
            }
        }
        if let Some(start) = open {
            walk.ranges.push((start, to.to_vec()));
        }
        Some(walk)
    }

    /// Starts building the summary of table `table_id` unless it has an entry or
    /// another build runs: true when the caller must now [`Summaries::spawn_build`] (or
    /// [`Summaries::build`]).
    pub(super) fn begin(&self, table_id: u64, names: &[String]) -> bool {
        if self.bytes.load(Ordering::Relaxed) >= self.budget {
            return false;
        }
        let mut tables = self.lock();
        let wanted = match tables.get(&table_id) {
            Some(Entry::Failed { until, wanted }) if *until <= Instant::now() => union(names, wanted),
            Some(_) => return false,
            None => union(names, &[]),
        };
        if self.building.swap(true, Ordering::SeqCst) {
            return false;
        }
        self.set(&mut tables, table_id, Some(Entry::Building { pending: Vec::new(), wanted }));
        true
    }

    /// The write barrier of a build: takes and releases every stripe, so a write that
    /// began before the build's entry existed (and so did not record its pairs) has
    /// reached the store before the build reads it.
    fn wait_for_writers(stripes: &[Mutex<()>]) {
        for stripe in stripes {
            drop(stripe.lock().unwrap_or_else(|p| p.into_inner()));
        }
    }

    /// Builds the summary begun by [`Summaries::begin`] in a thread of its own (the
    /// scan that asked for it does not wait, not even for the write barrier).
    pub(super) fn spawn_build(
        self: &Arc<Self>,
        store: Weak<dyn Store>,
        stripes: Arc<Stripes>,
        table_id: u64,
    ) {
        let me = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("scan-summary".into())
            .spawn(move || me.build(&store, stripes.all(), table_id));
        if spawned.is_err() {
            self.finish(table_id, Err(BuildError::Stopped));
        }
    }

    /// Builds the summary begun by [`Summaries::begin`] here: the write barrier over
    /// `stripes`, then one pass over the table.
    pub(super) fn build(&self, store: &Weak<dyn Store>, stripes: &[Mutex<()>], table_id: u64) {
        let started = Instant::now();
        let wanted = match self.lock().get(&table_id) {
            Some(Entry::Building { wanted, .. }) => wanted.clone(),
            _ => Vec::new(),
        };
        Summaries::wait_for_writers(stripes);
        let built = self.read_blocks(store, table_id, wanted).map(|mut s| {
            s.took = started.elapsed();
            s
        });
        self.finish(table_id, built);
    }

    /// Stops running builds (the partition server closes).
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    /// One pass over the table's heads, in chunks that each hold the store briefly,
    /// keeping columns of the `wanted` names; once the columns sealed so far would not
    /// fit their budget it drops them and goes on without, and it stops once the rest
    /// would not fit its own.
    fn read_blocks(
        &self,
        store: &Weak<dyn Store>,
        table_id: u64,
        wanted: Vec<String>,
    ) -> Result<Summary, BuildError> {
        let (table_start, end) = keys::table_heads_range(table_id);
        let mut blocks: Vec<Block> = Vec::new();
        let (mut bytes, mut column_bytes) = (end.capacity(), 0);
        let names: Arc<[Box<[u8]>]> = wanted.iter().map(|n| n.as_bytes().into()).collect();
        let mut current = Pending::new(table_start.clone(), Some(Arc::clone(&names)));
        let mut from = table_start;
        loop {
            if self.closed.load(Ordering::SeqCst) {
                return Err(BuildError::Stopped);
            }
            let Some(store) = store.upgrade() else {
                return Err(BuildError::Stopped);
            };
            let mut read = 0;
            let mut last: Option<Vec<u8>> = None;
            let mut over = false;
            store
                .scan_with(&from, &end, &mut |key, head| {
                    if current.rows == BLOCK_ROWS {
                        let columns = current.columns.as_ref().map(|_| Arc::clone(&names));
                        let next = Pending::new(key.to_vec(), columns);
                        let block = std::mem::replace(&mut current, next).seal(key);
                        bytes += block.bytes();
                        column_bytes += block.column_bytes();
                        blocks.push(block);
                        if self.column_bytes.load(Ordering::Relaxed) + column_bytes > self.column_budget {
                            current.columns = None;
                            blocks.iter_mut().for_each(|b| b.columns = None);
                            column_bytes = 0;
                        }
                        if self.bytes.load(Ordering::Relaxed) + bytes > self.budget {
                            over = true;
                            return Ok(false);
                        }
                    }
                    let facts = Facts::of_head_into(head, current.columns.as_mut())?;
                    current.hashes.extend(facts.pairs);
                    facts.scalars.into_iter().for_each(|(name, v)| current.spans.widen(name, v));
                    current.rows += 1;
                    read += 1;
                    if read == BUILD_CHUNK {
                        last = Some(key.to_vec());
                        return Ok(false);
                    }
                    Ok(true)
                })
                .map_err(BuildError::Store)?;
            if over {
                return Err(BuildError::OverBudget);
            }
            match last {
                Some(mut key) => {
                    key.push(0); // the smallest key after it
                    from = key;
                }
                None => break,
            }
        }
        let block = current.seal(&end);
        bytes += block.bytes();
        column_bytes += block.column_bytes();
        blocks.push(block);
        let with_columns = blocks.iter().filter(|b| b.columns.is_some()).count();
        Ok(Summary {
            blocks,
            end,
            bytes,
            column_bytes,
            wanted,
            with_columns,
            dropped: 0,
            built: Instant::now(),
            took: Duration::ZERO,
        })
    }

    /// Installs a built summary with the pairs written meanwhile, or records the
    /// failure.
    fn finish(&self, table_id: u64, built: Result<Summary, BuildError>) {
        let mut tables = self.lock();
        let (pending, wanted) = match tables.get_mut(&table_id) {
            Some(Entry::Building { pending, wanted }) => (std::mem::take(pending), std::mem::take(wanted)),
            // the table was deleted meanwhile, or its build failed
            _ => {
                self.building.store(false, Ordering::SeqCst);
                return;
            }
        };
        let failed = |wait: Duration| Entry::Failed { until: Instant::now() + wait, wanted: wanted.clone() };
        let entry = match built {
            Ok(mut summary) => {
                let mut keep = true;
                for (key, facts) in &pending {
                    keep &= summary.add(key, facts);
                }
                if self.column_bytes.load(Ordering::Relaxed) + summary.column_bytes > self.column_budget {
                    summary.strip_columns();
                }
                summary.built = Instant::now();
                if self.bytes.load(Ordering::Relaxed) + summary.bytes > self.budget {
                    failed(RETRY_OVER_BUDGET)
                } else if keep {
                    self.bytes.fetch_add(summary.bytes, Ordering::Relaxed);
                    self.column_bytes.fetch_add(summary.column_bytes, Ordering::Relaxed);
                    Entry::Ready(summary)
                } else {
                    failed(RETRY_AFTER)
                }
            }
            Err(BuildError::OverBudget) => failed(RETRY_OVER_BUDGET),
            Err(BuildError::Store(e)) => {
                if !self.closed.load(Ordering::SeqCst) {
                    tracing::warn!(table_id, error = %e, "could not summarize a table for scans");
                }
                failed(RETRY_AFTER)
            }
            Err(BuildError::Stopped) => failed(RETRY_AFTER),
        };
        self.set(&mut tables, table_id, Some(entry));
        self.building.store(false, Ordering::SeqCst);
    }

    /// Whether table `table_id` has a ready summary.
    #[cfg(test)]
    pub(super) fn is_ready(&self, table_id: u64) -> bool {
        matches!(self.lock().get(&table_id), Some(Entry::Ready(_)))
    }
}

/// A block being built: its start and the pairs of its rows so far, and its columns
/// while the build keeps them.
struct Pending {
    start: Vec<u8>,
    rows: u32,
    hashes: Vec<u64>,
    spans: Spans,
    columns: Option<ColumnsBuilder>,
}

impl Pending {
    /// With columns of `wanted` names, if any.
    fn new(start: Vec<u8>, wanted: Option<Arc<[Box<[u8]>]>>) -> Pending {
        let columns = wanted.map(ColumnsBuilder::new);
        Pending { start, rows: 0, hashes: Vec::new(), spans: Spans::default(), columns }
    }

    /// The block, which ends at `end`.
    fn seal(mut self, end: &[u8]) -> Block {
        self.hashes.sort_unstable();
        self.hashes.dedup();
        let mut bloom = Bloom::sized_for(self.hashes.len());
        self.hashes.iter().for_each(|&h| bloom.add(h));
        let columns = self.columns.map(|c| Arc::new(c.seal(self.start.clone(), end.to_vec())));
        Block { start: self.start, rows: self.rows, bloom, spans: self.spans, columns }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bloom_filter_holds_everything_added() {
        let hashes: Vec<u64> = (0..1000u32).map(|i| pair_hash(b"Tag", i.to_string().as_bytes())).collect();
        let mut bloom = Bloom::sized_for(hashes.len());
        hashes.iter().for_each(|&h| bloom.add(h));
        assert!(hashes.iter().all(|&h| bloom.may_hold(h)));
        let others =
            (1000..11_000u32).filter(|i| bloom.may_hold(pair_hash(b"Tag", i.to_string().as_bytes())));
        // sized for about 1 % false hits
        assert!(others.count() < 300);
    }

    #[test]
    fn pairs_differ_by_name_and_value() {
        assert_ne!(pair_hash(b"A", b"x"), pair_hash(b"B", b"x"));
        assert_ne!(pair_hash(b"A", b"x"), pair_hash(b"A", b"y"));
        assert_ne!(pair_hash(b"AB", b"C"), pair_hash(b"A", b"BC"));
    }
}
