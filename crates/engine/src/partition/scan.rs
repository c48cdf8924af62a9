//! [`Scans`]: scans of a table in (PartitionKey, RowKey) order. [`Scans::scan_entities`] walks
//! the entity heads of one [`KeyRange`], shows the caller's `keep` predicate a
//! projection that borrows just what it reads, decodes only the rows it keeps (with
//! their heaps) and stops at the page's limits with a continuation.
//!
//! Memory is bounded by the page, never by the table. Heads and heaps are read without a
//! lock and follow the torn-row rule of [`super::read`]: a kept row whose heap belongs
//! to another write is re-read under the partition lock, and the filter sees it again.
//!
//! A filter requiring `P eq 'value'`, or comparing a number or date, seeks past runs of
//! rows that the table's value summary (`skip.rs`) rules out; a filter that reads
//! neither key is also evaluated on the summary's columns (`columns.rs`), and seeks past
//! runs where it keeps no row. The first scan that could use a summary the table lacks
//! starts its build. A filter bounding the RowKey in every partition (`RowKey eq 'x'`
//! without a PartitionKey) seeks past each partition's rows outside the bounds once it
//! has stepped over a few ([`RowKeyBounds`]).

use super::catalog::Catalog;
use super::read::{decode_head, reread_torn};
use super::skip::Summaries;
use super::stripes::Stripes;
use super::PartitionError;
use aztable_model::{EdmRef, Entity, KeyBound, KeyRange, Row, Ticks};
use aztable_store::{codec, keys, KvPair, Store, StoreError};
use aztable_wire::filter::plan::RowKeys;
use aztable_wire::filter::{Compiled, Requirement};
use std::borrow::Cow;
use std::cell::{Cell, OnceCell};
use std::sync::Arc;

/// How long one page of a scan may run before it is cut with a continuation (the
/// service's 5 seconds of execution per page).
pub const SCAN_TIME_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);

/// One scan request: which rows, from where, and how much a page may hold and examine.
#[derive(Debug, Clone, Copy)]
pub struct Scan<'a> {
    pub account: &'a str,
    pub table: &'a str,
    /// The rows to walk.
    pub range: &'a KeyRange,
    /// Where the page starts (inclusive), when resuming from a continuation.
    pub resume: Option<(&'a str, &'a str)>,
    /// Rows a page keeps at most.
    pub limit: usize,
    /// Rows a page examines at most (besides [`SCAN_TIME_BUDGET`]).
    pub max_examined: usize,
    /// When set, `keep` reads only what this names: rows are decoded in full only once
    /// kept.
    pub needs: Option<&'a Needs>,
}

/// What a scan's `keep` predicate reads of a row, besides its Timestamp.
#[derive(Debug, Clone, Default)]
pub struct Needs {
    /// Custom properties by name.
    pub properties: Vec<String>,
    /// Whether it reads PartitionKey or RowKey.
    pub keys: bool,
    /// A string some property must equal for `keep` to be true (`P eq 'value'` in a
    /// top-level `and`): rows whose head cannot hold it are rejected unread, and `keep`
    /// is not asked about them.
    pub required: Option<codec::HeadNeedle>,
    /// What every kept row holds, for a table's value summary: runs of rows that cannot
    /// hold it are not read at all.
    pub probe: Option<super::skip::Probe>,
    /// The filter `keep` evaluates ([`Needs::evaluated_by`]), if known: blocks of a
    /// value summary's columns are then evaluated a column at a time instead of row by
    /// row through `keep`.
    pub filter: Option<Arc<Compiled>>,
    /// The RowKey intervals every kept row's lies in, in every partition
    /// ([`Needs::within_row_keys`]).
    pub row_keys: Option<RowKeyBounds>,
}

impl Needs {
    /// What a filter reading `properties` (and the keys, when `keys`) needs, with
    /// `requirement` what every matching row satisfies
    /// ([`aztable_wire::filter::Compiled::requirement`]): its required `P eq 'value'` is
    /// searched for in heads, and the whole of it probes the table's value summary.
    pub fn new(properties: Vec<String>, keys: bool, requirement: Option<&Requirement<'_>>) -> Needs {
        // (a value too long to be in a head is neither searched for nor summarized)
        let needle = requirement
            .and_then(Requirement::required_equals)
            .and_then(|(_, value)| codec::HeadNeedle::new(value));
        let probe = super::skip::Probe::new(requirement);
        Needs { properties, keys, required: needle, probe, filter: None, row_keys: None }
    }

    /// These needs, with `keep` known to be `filter`'s [`Compiled::eval`] (whose
    /// [`Compiled::names`] are the properties).
    pub fn evaluated_by(self, filter: Arc<Compiled>) -> Needs {
        Needs { filter: Some(filter), ..self }
    }

    /// These needs, with `keep` known to be false for a row whose RowKey lies outside
    /// every one of `row_keys`, sorted and disjoint
    /// ([`aztable_wire::filter::plan::plan_row_keys`]).
    pub fn within_row_keys(self, row_keys: &[RowKeys]) -> Needs {
        let encode = |b: &Option<(String, bool)>| {
            b.as_ref().map(|(rk, inclusive)| {
                let mut enc = Vec::new();
                keys::encode_key_string(&mut enc, rk);
                (enc, *inclusive)
            })
        };
        let intervals = row_keys.iter().map(|i| (encode(&i.lower), encode(&i.upper))).collect();
        Needs { row_keys: Some(RowKeyBounds { intervals }), ..self }
    }
}

/// RowKey intervals that hold in every partition, sorted and disjoint, their bounds
/// encoded as the store orders keys (`enc(rk)`, terminator included), each with whether
/// it is included.
#[derive(Debug, Clone)]
pub struct RowKeyBounds {
    intervals: Vec<(Bound, Bound)>,
}

/// One end of a [`RowKeyBounds`] interval: `None` for none.
type Bound = Option<(Vec<u8>, bool)>;

impl RowKeyBounds {
    /// `None` when the row stored under a key split into `partition` and `rk`
    /// ([`keys::split_entity_key`]) has its RowKey within an interval; else the key a
    /// scan goes on from: where the next interval begins in the row's partition, or
    /// (past them all) where the partition ends.
    fn past(&self, partition: &[u8], rk: &[u8]) -> Option<Vec<u8>> {
        // the first interval that does not end below the row
        let beyond = |upper: &Bound| {
            upper
                .as_ref()
                .is_some_and(|(u, inclusive)| rk > u.as_slice() || (!inclusive && rk == u.as_slice()))
        };
        let at = self.intervals.partition_point(|(_, upper)| beyond(upper));
        let Some((lower, _)) = self.intervals.get(at) else {
            return Some(keys::prefix_end(partition));
        };
        match lower {
            Some((lower, inclusive)) if rk < lower.as_slice() || (!inclusive && rk == lower.as_slice()) => {
                let mut from = [partition, lower].concat();
                if !inclusive {
                    // (the least key after the bound's own row)
                    from.push(0);
                }
                Some(from)
            }
            _ => None,
        }
    }
}

/// Rows of one partition outside a scan's [`RowKeyBounds`] it reads (examines, as any
/// row) before it seeks past the rest: a seek costs a few rows' reading, and partitions
/// of a row or two are stepped through.
pub(crate) const STEPS_BEFORE_SEEK: usize = 4;

/// One page of a scan.
#[derive(Debug, Default)]
pub struct ScanPage {
    pub entities: Vec<Entity>,
    /// Where the next page starts (PartitionKey, RowKey), if there is more.
    pub next: Option<(String, String)>,
    /// Rows the page examined.
    pub examined: usize,
    /// Rows (as counted when the summary was built) of the runs the page skipped
    /// because the table's value summary ruled them out.
    pub skipped: u64,
    /// Rows of `examined` whose filter was evaluated on the summary's columns, so they
    /// were not read.
    pub from_columns: usize,
}

/// Properties a projection can hold; a filter names at most 15 (one per comparison).
pub(super) const MAX_PROJECTED: usize = 16;

/// See the module documentation.
pub struct Scans {
    store: Arc<dyn Store>,
    /// Resolves table names to ids.
    catalog: Arc<Catalog>,
    /// Taken by the torn-row rule's second read, and all of them by a summary build's
    /// write barrier.
    pub(super) stripes: Arc<Stripes>,
    /// Tables' value summaries: walked by scans, built when a scan wants one.
    pub(super) summaries: Arc<Summaries>,
}

impl Drop for Scans {
    fn drop(&mut self) {
        // a summary being built lets go of the store
        self.summaries.close();
    }
}

impl std::fmt::Debug for Scans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scans").finish_non_exhaustive()
    }
}

impl Scans {
    pub(super) fn new(
        store: Arc<dyn Store>,
        catalog: Arc<Catalog>,
        stripes: Arc<Stripes>,
        summaries: Arc<Summaries>,
    ) -> Self {
        Scans { store, catalog, stripes, summaries }
    }

    /// Scans a table over `scan.range`, keeping at most `scan.limit` entities for which
    /// `keep` is true. Stops early once `scan.max_examined` entities were read or
    /// [`SCAN_TIME_BUDGET`] has passed (possibly with no entity kept: an empty page with a
    /// continuation is legal), returning a continuation so the client can resume.
    pub fn scan_entities<K: FnMut(&dyn Row) -> bool>(
        &self,
        scan: &Scan<'_>,
        mut keep: K,
    ) -> Result<ScanPage, PartitionError> {
        let info =
            self.catalog.lookup_table(scan.account, scan.table)?.ok_or(PartitionError::TableNotFound)?;
        let (table_start, heads_end) = keys::table_heads_range(info.id);
        let mut from = scan.range.lower.as_ref().map_or(table_start, |b| lower_key(info.id, b));
        if let Some((pk, rk)) = scan.resume {
            from = from.max(keys::entity_key(info.id, pk, rk));
        }
        // (the table's heaps follow its heads: no bound may reach into them)
        let to =
            scan.range.upper.as_ref().map_or(heads_end.clone(), |b| upper_key(info.id, b)).min(heads_end);
        let needs = scan.needs.filter(|n| n.properties.len() <= MAX_PROJECTED);
        // Without a filter, or with one that reads only the keys (whose ranges the planner
        // already cut to, as in a range query), nearly every row is kept: its heap comes
        // from a second iterator in step with the heads rather than one point read each
        // (a range query of 10 rows spent 15 % of the server in those reads). With a
        // filter on properties, kept rows are usually sparse, and the cursor would read
        // every heap it steps over.
        let dense = needs.is_none_or(|n| n.properties.is_empty());
        let mut rows = Rows {
            store: self.store.as_ref(),
            stripes: &self.stripes,
            table_id: info.id,
            heaps: dense.then(|| HeapCursor::new(self.store.as_ref(), &to)),
        };
        // the runs of rows to read: all of them, unless a summary rules some out
        let probe = needs.and_then(|n| n.probe.as_ref());
        // (a filter of the keys is cut to ranges by the planner; columns do not hold keys)
        let names = needs.filter(|n| !n.keys).map(|n| n.properties.as_slice());
        let walk = (probe.is_some() || names.is_some())
            .then(|| {
                let walk = self.summaries.walk(info.id, &from, &to, probe, names);
                if walk.is_none() && self.summaries.begin(info.id, names.unwrap_or_default()) {
                    self.summaries.spawn_build(
                        Arc::downgrade(&self.store),
                        Arc::clone(&self.stripes),
                        info.id,
                    );
                }
                walk
            })
            .flatten();
        let (ranges, skipped, columns) = match walk {
            Some(walk) => (walk.ranges, walk.skipped_rows, walk.columns),
            None => (vec![(from, to)], 0, Vec::new()),
        };
        let started = std::time::Instant::now();
        let mut page = ScanPage { skipped, ..ScanPage::default() };
        // (counted here and by the columns below)
        let examined = Cell::new(0usize);
        let stopped = Cell::new(false);
        // (`split`: the key split after its partition, where the scan did so already)
        let mut visit = |keep: &mut K, k: &[u8], split: Option<(&[u8], &[u8])>, v: &[u8]| {
            let n = examined.get();
            let over_budget =
                n >= scan.max_examined || (n % 256 == 255 && started.elapsed() >= SCAN_TIME_BUDGET);
            if page.entities.len() == scan.limit || over_budget {
                let (_, pk, rk) = decode_key(k)?;
                page.next = Some((pk, rk));
                stopped.set(true);
                return Ok(false);
            }
            examined.set(n + 1);
            let kept = match needs {
                // (slots for the names: most filters name one or two properties)
                Some(needs) if needs.properties.len() <= 2 => {
                    rows.keep_projected::<2>(k, split, v, needs, keep)?
                }
                Some(needs) => rows.keep_projected::<MAX_PROJECTED>(k, split, v, needs, keep)?,
                None => rows.keep_whole(k, v, keep)?,
            };
            if let Some(entity) = kept {
                page.entities.push(entity);
            }
            Ok(true)
        };
        // Blocks whose columns rule every row out are passed over, their rows examined
        // (within the page's budget, so the page is cut at a row read from the store,
        // which its continuation names). The rows between them are read as the page goes,
        // so a page that fills early evaluates few blocks ahead, and a filter that keeps
        // rows in block after block stops asking.
        // Rows outside the filter's RowKey bounds: after STEPS_BEFORE_SEEK of one partition
        // in a row, the rest up to the bounds (or the partition's end) are passed over.
        let row_keys = needs.and_then(|n| n.row_keys.as_ref());
        let (mut outside, mut outside_in) = (0usize, Vec::new());
        let mut read = |keep: &mut K, from: &[u8], until: &[u8]| -> Result<(), StoreError> {
            let mut from = from.to_vec();
            loop {
                let mut seek = None;
                self.store.scan_with(&from, until, &mut |k, v| {
                    let split = row_keys.and_then(|_| keys::split_entity_key(k));
                    let past = row_keys.zip(split).and_then(|(b, (partition, rk))| b.past(partition, rk));
                    if let Some(target) = past {
                        let partition = split.map_or(k, |(p, _)| p);
                        if outside_in.as_slice() != partition {
                            (outside, outside_in) = (0, partition.to_vec());
                        }
                        outside += 1;
                        // (a target is always past the row: the check keeps the scan going on)
                        if outside > STEPS_BEFORE_SEEK && target.as_slice() > k {
                            seek = Some(target);
                            return Ok(false);
                        }
                    } else {
                        outside = 0;
                    }
                    visit(keep, k, split, v)
                })?;
                match seek {
                    Some(target) if target.as_slice() < until => from = target,
                    _ => return Ok(()),
                }
            }
        };
        let mut columns = columns.into_iter().peekable();
        let (mut asking, mut kept_in_a_row) = (true, 0);
        let within_budget = |rows: usize| examined.get() + rows <= scan.max_examined;
        'ranges: for (start, end) in &ranges {
            let mut pos = start.clone();
            while let Some(block) = columns.next_if(|c| c.start < *end) {
                let Some(names) = names.filter(|_| asking) else { continue };
                if block.end <= pos {
                    continue;
                }
                if !within_budget(block.rows()) {
                    asking = false;
                    continue;
                }
                let none = match needs.and_then(|n| n.filter.as_deref()) {
                    Some(filter) => block.none_kept_by(names, filter),
                    None => block.none_kept(names, &mut keep),
                };
                if !none {
                    kept_in_a_row += 1;
                    asking = kept_in_a_row < DENSE_BLOCKS;
                    continue;
                }
                kept_in_a_row = 0;
                let skip_from = block.start.as_slice().max(pos.as_slice());
                if pos.as_slice() < skip_from {
                    read(&mut keep, &pos, skip_from)?;
                    if stopped.get() {
                        break 'ranges;
                    }
                    pos = skip_from.to_vec();
                    if !within_budget(block.rows()) {
                        // the rows read meanwhile spent the budget: read on from here
                        asking = false;
                        continue;
                    }
                }
                examined.set(examined.get() + block.rows());
                page.from_columns += block.rows();
                pos = block.end.as_slice().min(end.as_slice()).to_vec();
            }
            if pos < *end {
                read(&mut keep, &pos, end)?;
                if stopped.get() {
                    break;
                }
            }
        }
        page.examined = examined.get();
        Ok(page)
    }
}

/// Blocks in a row where a filter evaluated on columns kept a row, after which a page
/// reads the rest without asking the columns (the filter keeps most rows).
const DENSE_BLOCKS: usize = 4;

/// The state of one scan as it meets rows.
struct Rows<'a> {
    store: &'a dyn Store,
    stripes: &'a Stripes,
    table_id: u64,
    /// Reads heaps in step with the heads, for dense scans.
    heaps: Option<HeapCursor<'a>>,
}

impl Rows<'_> {
    /// A row for a filter that reads only `needs`: the filter sees a projection of the
    /// head (and of the heap, when it reads a long value); only a kept row is decoded.
    /// `N` is at least the number of names.
    fn keep_projected<const N: usize>(
        &mut self,
        k: &[u8],
        split: Option<(&[u8], &[u8])>,
        head: &[u8],
        needs: &Needs,
        keep: &mut impl FnMut(&dyn Row) -> bool,
    ) -> Result<Option<Entity>, StoreError> {
        if needs.required.as_ref().is_some_and(|r| !r.may_hold(head)) {
            return Ok(None);
        }
        // (the keys as stored: each decoded when the filter first reads it)
        let parts = match (needs.keys, split) {
            (false, _) => None,
            (true, Some((partition, rk))) => Some((keys::encoded_partition_key(partition), rk)),
            (true, None) => Some(keys::entity_key_parts(k).ok_or_else(undecodable_key)?),
        };
        let undecodable = Cell::new(false);
        let mut heap = None;
        let mut all_slots = [None; N];
        let Some(slots) = all_slots.get_mut(..needs.properties.len()) else {
            return self.keep_whole(k, head, keep);
        };
        let mut projected = match needs.properties.is_empty().then(|| codec::head_timestamp(head)).flatten() {
            // a filter of the keys (and Timestamp) alone reads nothing else of the head
            Some(timestamp) => Ok(Some(timestamp)),
            None => codec::decode_projection(head, None, &needs.properties, slots),
        };
        if let Ok(None) = projected {
            // the filter reads a long value, which lives in the heap
            heap = self.store.get(&keys::heap_key(k))?;
            projected = match &heap {
                Some(h) => codec::decode_projection(head, Some(h), &needs.properties, slots),
                None => Err(StoreError::Torn),
            };
        }
        // Some(verdict) of the filter on the head; None: it changed under the scan
        let verdict = match projected {
            Ok(Some(timestamp)) => {
                let row = Projection {
                    partition_key: LazyKey::new(parts.map(|(pk, _)| pk), &undecodable),
                    row_key: LazyKey::new(parts.map(|(_, rk)| rk), &undecodable),
                    timestamp,
                    names: &needs.properties,
                    slots,
                };
                Some(keep(&row))
            }
            Err(StoreError::Torn) | Ok(None) => None,
            Err(e) => return Err(e),
        };
        if undecodable.get() {
            return Err(undecodable_key());
        }
        if verdict == Some(false) {
            return Ok(None);
        }
        // a kept row's keys from the parts the filter read (not split again)
        let owned_keys = verdict
            .and(parts)
            .and_then(|(pk, rk)| Some((keys::key_text(pk)?.into_owned(), keys::key_text(rk)?.into_owned())));
        let in_hand = match (&heap, &mut self.heaps) {
            (Some(heap), _) => Some(heap.as_slice()),
            (None, Some(cursor)) => cursor.find(&keys::heap_key(k))?,
            (None, None) => None,
        };
        Ok(match complete_row(self.store, self.stripes, self.table_id, k, head, in_hand, owned_keys)? {
            // re-read: the filter must see what is returned
            Some((e, stale)) if stale || verdict.is_none() => keep(&e).then_some(e),
            Some((e, _)) => Some(e),
            None => None,
        })
    }

    /// A row for a scan without a filter projection: decoded whole, then shown to `keep`.
    fn keep_whole(
        &mut self,
        k: &[u8],
        head: &[u8],
        keep: &mut impl FnMut(&dyn Row) -> bool,
    ) -> Result<Option<Entity>, StoreError> {
        let in_hand = match self.heaps.as_mut() {
            Some(cursor) => cursor.find(&keys::heap_key(k))?,
            None => None,
        };
        Ok(match complete_row(self.store, self.stripes, self.table_id, k, head, in_hand, None)? {
            Some((e, _)) => keep(&e).then_some(e),
            None => None,
        })
    }
}

/// Decodes the entity of a scanned head, with `heap_in_hand` when the scan holds its
/// heap already, else reading the heap if it has one, and with `keys` when the scan
/// decoded the row's keys already (else from `key`). A torn row is re-read under the
/// partition lock (`true`: the head the scan saw is stale, so a filter must see the
/// entity again); `None` when it no longer exists.
fn complete_row(
    store: &dyn Store,
    stripes: &Stripes,
    table_id: u64,
    key: &[u8],
    head: &[u8],
    heap_in_hand: Option<&[u8]>,
    keys: Option<(String, String)>,
) -> Result<Option<(Entity, bool)>, StoreError> {
    let (pk, rk) = match keys {
        Some(keys) => keys,
        None => decode_key(key).map(|(_, pk, rk)| (pk, rk))?,
    };
    // (the keys go into the entity; the rare second attempts decode them again)
    let decoded = match heap_in_hand {
        Some(heap) => match codec::decode_entity(pk, rk, head, Some(heap)) {
            Ok(e) => return Ok(Some((e, false))),
            // one of another write in hand: read it now
            Err(_) => decode_key(key).and_then(|(_, pk, rk)| decode_head(store, key, pk, rk, head)),
        },
        None => decode_head(store, key, pk, rk, head),
    };
    match decoded {
        Ok((e, _)) => Ok(Some((e, false))),
        Err(StoreError::Torn) => {
            let (_, pk, rk) = decode_key(key)?;
            Ok(reread_torn(store, stripes, table_id, key, &pk, &rk)?.map(|e| (e, true)))
        }
        Err(e) => Err(e),
    }
}

/// The store key a scan starts at for a range's lower bound.
fn lower_key(table_id: u64, b: &KeyBound) -> Vec<u8> {
    match (&b.rk, b.inclusive) {
        (Some(rk), true) => keys::entity_key(table_id, &b.pk, rk),
        (Some(rk), false) => after_row(table_id, &b.pk, rk),
        (None, true) => keys::partition_range(table_id, &b.pk).0,
        (None, false) => keys::partition_range(table_id, &b.pk).1,
    }
}

/// The store key a scan ends before for a range's upper bound.
fn upper_key(table_id: u64, b: &KeyBound) -> Vec<u8> {
    match (&b.rk, b.inclusive) {
        (Some(rk), true) => after_row(table_id, &b.pk, rk),
        (Some(rk), false) => keys::entity_key(table_id, &b.pk, rk),
        (None, true) => keys::partition_range(table_id, &b.pk).1,
        (None, false) => keys::partition_range(table_id, &b.pk).0,
    }
}

/// The smallest key greater than the row's own.
fn after_row(table_id: u64, pk: &str, rk: &str) -> Vec<u8> {
    let mut k = keys::entity_key(table_id, pk, rk);
    k.push(0);
    k
}

/// Reads the heaps of a scan's rows with a forward iterator over the heap range of the
/// scanned head range: in step with the heads where the scan keeps row after row, and
/// started again at the wanted key where it keeps a row far from the last one (a
/// key-only filter the planner could not narrow, such as `RowKey eq 'x'`), so it never
/// reads more than [`HEAP_CURSOR_STEPS`] heaps it does not need per row it keeps.
pub(super) struct HeapCursor<'a> {
    store: &'a dyn Store,
    to: Vec<u8>,
    iter: Option<Box<dyn Iterator<Item = Result<KvPair, StoreError>> + 'a>>,
    current: Option<KvPair>,
}

/// Heaps a [`HeapCursor`] steps over before it seeks instead.
const HEAP_CURSOR_STEPS: usize = 8;

impl<'a> HeapCursor<'a> {
    /// For heads below `to`.
    pub(super) fn new(store: &'a dyn Store, to: &[u8]) -> Self {
        HeapCursor { store, to: keys::heap_key(to), iter: None, current: None }
    }

    /// The heap stored under `heap_key`, if there is one; keys must be asked for in
    /// ascending order.
    pub(super) fn find(&mut self, heap_key: &[u8]) -> Result<Option<&[u8]>, StoreError> {
        let mut steps = 0;
        while self.current.as_ref().is_none_or(|(k, _)| k.as_slice() < heap_key) {
            let iter = match &mut self.iter {
                Some(iter) if steps < HEAP_CURSOR_STEPS => iter,
                // first use, or still short of the key: start at it
                _ => {
                    steps = 0;
                    self.iter.insert(self.store.scan(heap_key, &self.to))
                }
            };
            steps += 1;
            match iter.next() {
                Some(pair) => self.current = Some(pair?),
                None => {
                    self.current = None;
                    return Ok(None);
                }
            }
        }
        Ok(self.current.as_ref().filter(|(k, _)| k.as_slice() == heap_key).map(|(_, v)| v.as_slice()))
    }
}

fn undecodable_key() -> StoreError {
    StoreError::Corrupt("undecodable entity key".into())
}

fn decode_key(k: &[u8]) -> Result<(u64, String, String), StoreError> {
    keys::decode_entity_key(k).ok_or_else(undecodable_key)
}

/// A scanned row as a filter sees it: the keys (when the filter reads them), the
/// Timestamp and the named properties, all borrowed.
struct Projection<'a> {
    partition_key: LazyKey<'a>,
    row_key: LazyKey<'a>,
    timestamp: Ticks,
    names: &'a [String],
    slots: &'a [Option<EdmRef<'a>>],
}

impl Row for Projection<'_> {
    fn partition_key(&self) -> &str {
        self.partition_key.get()
    }
    fn row_key(&self) -> &str {
        self.row_key.get()
    }
    fn partition_key_bytes(&self) -> &[u8] {
        self.partition_key.bytes()
    }
    fn row_key_bytes(&self) -> &[u8] {
        self.row_key.bytes()
    }
    fn timestamp(&self) -> Ticks {
        self.timestamp
    }
    fn property(&self, name: &str) -> Option<EdmRef<'_>> {
        let i = self.names.iter().position(|n| n == name)?;
        self.slots.get(i).copied().flatten()
    }
    fn property_at(&self, index: usize, _name: &str) -> Option<EdmRef<'_>> {
        self.slots.get(index).copied().flatten()
    }
}

/// One key of a scanned row as stored (`enc(key)`): compared as its stored bytes
/// ([`Row::row_key_bytes`]) where the store escaped nothing, else decoded the first
/// time the filter reads it. Bytes that are no key's read as "" and set `undecodable`,
/// which fails the scan; a key the scan did not read (its filter reads none) is "".
struct LazyKey<'a> {
    encoded: Option<&'a [u8]>,
    text: OnceCell<Cow<'a, str>>,
    undecodable: &'a Cell<bool>,
}

impl<'a> LazyKey<'a> {
    fn new(encoded: Option<&'a [u8]>, undecodable: &'a Cell<bool>) -> Self {
        LazyKey { encoded, text: OnceCell::new(), undecodable }
    }

    fn bytes(&self) -> &[u8] {
        match self.encoded.and_then(keys::key_bytes) {
            Some(bytes) => bytes,
            None => self.get().as_bytes(),
        }
    }

    fn get(&self) -> &str {
        self.text.get_or_init(|| {
            let Some(encoded) = self.encoded else { return Cow::Borrowed("") };
            keys::key_text(encoded).unwrap_or_else(|| {
                self.undecodable.set(true);
                Cow::Borrowed("")
            })
        })
    }
}
