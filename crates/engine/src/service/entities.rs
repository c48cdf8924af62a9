//! [`Entities`], the entity operations: QueryEntities (with the point query),
//! InsertEntity, UpdateEntity, MergeEntity, DeleteEntity, InsertOrReplaceEntity and
//! InsertOrMergeEntity here; change sets in [`batch`], the restore of exported entities
//! in [`restore`]. Single writes and change sets share the `apply_*` steps.

mod batch;
mod restore;

pub use batch::{BatchFailure, BatchOutcome};

use super::insight::Notes;
use super::throttle::Gate;
use super::{Caller, ServiceError};
use crate::partition::{Needs, Partitions, Rendition, Scan, Txn, SCAN_TIME_BUDGET};
use aztable_insight::QueryKind;
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::names::{validate_key, MAX_CUSTOM_PROPERTIES, MAX_ENTITY_BYTES};
use aztable_model::time::MonotonicClock;
use aztable_model::{Condition, Entity, EntityView, KeyRange, NewEntity, Row};
use aztable_wire::filter::{self, Expr};
use std::sync::Arc;

/// Parameters of Query Entities.
#[derive(Debug, Clone, Default)]
pub struct QueryEntities {
    /// Continuation: (NextPartitionKey, NextRowKey) the page starts at.
    pub start: Option<(String, String)>,
    /// Page size (1..=1000).
    pub top: usize,
    /// `$filter`, already parsed.
    pub filter: Option<Expr>,
}

/// A page of Query Entities.
#[derive(Debug, Default)]
pub struct EntityPage {
    pub entities: Vec<Entity>,
    pub next: Option<(String, String)>,
    /// Entities the page examined (read and shown to the filter).
    pub examined: usize,
    /// What the filter's key ranges make of the query (the caller's SAS range aside):
    /// planned once, for the scan, the advisor and the gate.
    pub kind: QueryKind,
}

/// Entities examined per page before the page is cut with a continuation (bounds the
/// work of one request the way the service's 5-second budget does).
const MAX_EXAMINED_PER_PAGE: usize = 10_000;

/// Entities a page examines in place, on the async worker, before the rest of the page
/// moves to the blocking pool (a few hundred microseconds at most).
const EXAMINED_IN_PLACE: usize = 256;

pub(super) fn check_keys(pk: &str, rk: &str) -> Result<(), ServiceError> {
    validate_key(pk)?;
    validate_key(rk)?;
    Ok(())
}

/// Checks the limits that apply to the entity as it will be stored (after a merge).
pub(super) fn check_entity_limits(e: &Entity) -> Result<(), ServiceError> {
    if e.properties.len() > MAX_CUSTOM_PROPERTIES {
        return Err(ApiError::new(ErrorCode::TooManyProperties).into());
    }
    if aztable_model::entity::data_size_over(&e.partition_key, &e.row_key, &e.properties, MAX_ENTITY_BYTES) {
        return Err(ApiError::new(ErrorCode::EntityTooLarge).into());
    }
    Ok(())
}

fn etag_matches(entity: &Entity, wanted: &str) -> bool {
    let actual = entity.etag();
    actual == wanted || actual.replace("%3A", ":") == wanted.replace("%3A", ":").replace("%3a", ":")
}

/// Checks `cond` against the current entity for an update, merge or delete.
fn check_condition(current: Option<&Entity>, cond: &Condition) -> Result<(), ServiceError> {
    match (current, cond) {
        (_, Condition::Upsert) => Ok(()),
        (None, _) => Err(ServiceError::ResourceNotFound),
        (Some(_), Condition::Exists) => Ok(()),
        (Some(e), Condition::Etag(tag)) if etag_matches(e, tag) => Ok(()),
        (Some(_), Condition::Etag(_)) => Err(ServiceError::ConditionNotSatisfied),
    }
}

/// The entity operations over the partitions.
#[derive(Debug)]
pub struct Entities {
    /// Shared with the scans that run on the blocking pool ([`super::off_the_workers`]).
    parts: Arc<Partitions>,
    /// Every Timestamp a write stamps.
    clock: MonotonicClock,
    /// `--throttle`: each operation costs the entities it writes or returns.
    pub(super) gate: Gate,
    /// The partition advisor, told of each operation after it succeeded.
    pub(super) notes: Notes,
}

impl Entities {
    pub(super) fn new(parts: Arc<Partitions>) -> Self {
        Entities { parts, clock: MonotonicClock::new(), gate: Gate::default(), notes: Notes::default() }
    }

    /// Point query: `GET /table(PartitionKey='..',RowKey='..')`, owned
    /// ([`Entities::get_entity_with`]).
    pub fn get_entity<'a>(
        &self,
        caller: impl Into<Caller<'a>>,
        table: &str,
        pk: &str,
        rk: &str,
    ) -> Result<Entity, ServiceError> {
        self.get_entity_with(caller, table, pk, rk, |view| view.to_entity())
    }

    /// Point query with the entity handed to `f` as a view of its stored bytes
    /// ([`Reads::get_entity_with`](crate::partition::Reads::get_entity_with)): the caller's key range (a row outside it is not
    /// found), throttling, the advisor's count.
    pub fn get_entity_with<'a, R>(
        &self,
        caller: impl Into<Caller<'a>>,
        table: &str,
        pk: &str,
        rk: &str,
        f: impl FnOnce(&EntityView<'_>) -> R,
    ) -> Result<R, ServiceError> {
        let caller = caller.into();
        caller.check_readable(pk, rk)?;
        self.gate.admit(caller.account, table, Some(pk), 1)?;
        let found = self.parts.reads().get_entity_with(caller.account, table, pk, rk, f)?;
        self.notes.point_read(caller.account, table, pk);
        found.ok_or(ServiceError::ResourceNotFound)
    }

    /// Point query answered with a rendering ([`Reads::get_entity_rendered`](crate::partition::Reads::get_entity_rendered)):
    /// as [`Entities::get_entity_with`], with `render`'s answer kept in the entity cache
    /// under `tag` for the next read in the same form.
    pub fn get_entity_rendered<'a>(
        &self,
        caller: impl Into<Caller<'a>>,
        table: &str,
        pk: &str,
        rk: &str,
        tag: &[u8],
        render: impl FnOnce(&EntityView<'_>) -> (String, Vec<u8>),
    ) -> Result<Rendition, ServiceError> {
        let caller = caller.into();
        caller.check_readable(pk, rk)?;
        self.gate.admit(caller.account, table, Some(pk), 1)?;
        let found = self.parts.reads().get_entity_rendered(caller.account, table, pk, rk, tag, render)?;
        self.notes.point_read(caller.account, table, pk);
        found.ok_or(ServiceError::ResourceNotFound)
    }

    /// Query Entities: a page of the entities matching the filter, in key order. The
    /// filter's key ranges, narrowed to the caller's rows, bound the scan; the filter
    /// itself is applied to every entity scanned.
    ///
    /// The first `EXAMINED_IN_PLACE` rows are scanned in place: a range query is
    /// done by then, and handing it to another thread would cost more than the scan
    /// (range queries: +50 % server CPU). A page that needs more continues from where
    /// that part stopped on the blocking pool, so a long scan never holds an async
    /// worker for more than those rows.
    pub async fn query_entities<'a>(
        &self,
        caller: impl Into<Caller<'a>>,
        table: &str,
        q: &QueryEntities,
    ) -> Result<EntityPage, ServiceError> {
        self.query_entities_cut(caller, table, q, &|_| None).await
    }

    /// [`Self::query_entities`], the page then cut where `cut` says (`Some(n)` keeps its
    /// first `n` entities, 1 ≤ n < len, and continues at the next: `--shortPages`)
    /// before the advisor and the throttle count it, so the rows the next page returns
    /// again are counted once. The cut rows were examined too, and are not counted as
    /// examined on this page (the next examines them).
    pub async fn query_entities_cut<'a>(
        &self,
        caller: impl Into<Caller<'a>>,
        table: &str,
        q: &QueryEntities,
        cut: &(dyn Fn(&[Entity]) -> Option<usize> + Sync),
    ) -> Result<EntityPage, ServiceError> {
        let caller = caller.into();
        // the entities a query returns are known only after the read: it pays 1 up
        // front (to its partition when the filter names only one) and the rest after
        let pinned = match (self.gate.is_on(), &q.filter) {
            (true, Some(f)) => filter::plan::plan(f).single_partition().map(str::to_owned),
            _ => None,
        };
        self.gate.admit(caller.account, table, pinned.as_deref(), 1)?;
        let mut page = self.query_entities_unthrottled(caller, table, q).await?;
        if let Some(at) = cut(&page.entities).filter(|&n| n > 0 && n < page.entities.len()) {
            let rest = page.entities.split_off(at);
            page.examined = page.examined.saturating_sub(rest.len());
            page.next = rest.into_iter().next().map(|e| (e.partition_key, e.row_key));
        }
        self.notes.query(caller.account, table, q.filter.as_ref(), &page);
        if let Some(t) = self.gate.throttle() {
            charge_served(t, caller.account, table, pinned.as_deref(), &page.entities);
        }
        Ok(page)
    }

    async fn query_entities_unthrottled(
        &self,
        caller: Caller<'_>,
        table: &str,
        q: &QueryEntities,
    ) -> Result<EntityPage, ServiceError> {
        let mut page = query_page(&self.parts, caller, table, q, EXAMINED_IN_PLACE)?;
        if page.entities.len() >= q.top {
            return Ok(page);
        }
        let Some(next) = page.next.take() else {
            return Ok(page);
        };
        // stopped by the in-place budget (or the clock): the rest of the page, from there
        let rest =
            QueryEntities { start: Some(next), top: q.top - page.entities.len(), filter: q.filter.clone() };
        let (parts, table_name) = (Arc::clone(&self.parts), table.to_owned());
        let (account, rows) = (caller.account.to_owned(), caller.rows.cloned());
        let rest = super::off_the_workers(move || {
            let caller = Caller { account: &account, rows: rows.as_ref() };
            query_page(&parts, caller, &table_name, &rest, MAX_EXAMINED_PER_PAGE - EXAMINED_IN_PLACE)
        })
        .await?;
        page.entities.extend(rest.entities);
        page.next = rest.next;
        page.examined += rest.examined;
        Ok(page)
    }

    /// [`Self::query_entities`] in place, with the number of entities a page may examine.
    #[cfg(test)]
    pub(super) fn query_entities_within(
        &self,
        caller: Caller<'_>,
        table: &str,
        q: &QueryEntities,
        max_examined: usize,
    ) -> Result<EntityPage, ServiceError> {
        query_page(&self.parts, caller, table, q, max_examined)
    }
}

/// Charges a query's entities after the read, beyond the 1 it paid up front (to the
/// account, and to `pinned` when the filter named one partition): each partition the
/// count of its entities in the page, the account their total.
fn charge_served(
    t: &super::throttle::Throttle,
    account: &str,
    table: &str,
    pinned: Option<&str>,
    entities: &[Entity],
) {
    // the page is in key order: each partition's entities are one run
    let mut runs: Vec<(&str, u32)> = Vec::new();
    for e in entities {
        match runs.last_mut() {
            Some((pk, n)) if *pk == e.partition_key => *n = n.saturating_add(1),
            _ => runs.push((&e.partition_key, 1)),
        }
    }
    for (pk, n) in &mut runs {
        if Some(*pk) == pinned {
            *n -= 1;
        }
    }
    let total = u32::try_from(entities.len()).unwrap_or(u32::MAX);
    t.charge(account, table, runs, total.saturating_sub(1));
}

/// One page of Query Entities, examining at most `max_examined` entities.
///
/// The planner's ranges are disjoint and sorted, so they are scanned one after the
/// other, all from the resume point: ranges wholly before it are skipped, and a page
/// runs on into the next range until it is full or the budget is spent. The
/// continuation is always the next row a scan met but did not examine; when a page
/// fills up (or runs out of budget) exactly at the end of a range, the following ranges
/// are probed with nothing left to keep, which yields their first row, or no
/// continuation when none is left.
fn query_page(
    parts: &Partitions,
    caller: Caller<'_>,
    table: &str,
    q: &QueryEntities,
    max_examined: usize,
) -> Result<EntityPage, ServiceError> {
    let account = caller.account;
    let planned = match &q.filter {
        Some(f) => filter::plan::plan_ranges(f),
        None => vec![KeyRange::unbounded()],
    };
    let kind = aztable_insight::classify::classify_ranges(&planned);
    // a RowKey bound that holds in every partition is of use where a range spans several
    // (within one, the planner has cut the range to it already)
    let across = planned.iter().any(|r| r.single_partition().is_none());
    let ranges = caller.narrow(planned);
    let start = q.start.as_ref().map(|(p, r)| (p.as_str(), r.as_str()));
    // the filter reads only these properties: rows it rejects are never fully decoded
    let compiled = q.filter.as_ref().map(|f| Arc::new(filter::Compiled::new(f)));
    let needs = compiled.as_ref().map(|f| {
        let needs = Needs::new(f.names().to_vec(), f.reads_keys(), f.requirement().as_ref());
        let needs = needs.evaluated_by(Arc::clone(f));
        // (a RowKey bound in every partition: each partition's other rows are passed over)
        match q.filter.as_ref().filter(|_| across).and_then(filter::plan::plan_row_keys) {
            Some(row_keys) => needs.within_row_keys(&row_keys),
            None => needs,
        }
    });
    let started = std::time::Instant::now();
    let mut page = EntityPage { kind, ..EntityPage::default() };
    let mut examined = 0usize;
    // rows a value summary let the scan skip: examined for the advisor, not the budget
    let mut skipped = 0u64;
    let mut scanned = false;
    for range in &ranges {
        if start.is_some_and(|(pk, rk)| range.ends_before(pk, rk)) {
            continue;
        }
        let limit = q.top.saturating_sub(page.entities.len());
        let budget =
            if started.elapsed() >= SCAN_TIME_BUDGET { 0 } else { max_examined.saturating_sub(examined) };
        let scan =
            Scan { account, table, range, resume: start, limit, max_examined: budget, needs: needs.as_ref() };
        let keep = |row: &dyn Row| compiled.as_ref().is_none_or(|f| f.eval(row));
        let part = parts.scans().scan_entities(&scan, keep)?;
        scanned = true;
        examined += part.examined;
        skipped += part.skipped;
        page.entities.extend(part.entities);
        if part.next.is_some() {
            page.next = part.next;
            break;
        }
    }
    if !scanned {
        parts.catalog().lookup_table(account, table)?.ok_or(ServiceError::TableNotFound)?;
    }
    page.examined = examined.saturating_add(usize::try_from(skipped).unwrap_or(usize::MAX));
    Ok(page)
}

impl Entities {
    /// Insert Entity: fails with `EntityAlreadyExists` if the keys are taken.
    pub async fn insert_entity<'a>(
        &self,
        caller: impl Into<Caller<'a>>,
        table: &str,
        new: NewEntity,
    ) -> Result<Entity, ServiceError> {
        self.write_one(caller, table, new, true, |txn, new| self.apply_insert(txn, new)).await
    }

    /// Update Entity (replace) or, with [`Condition::Upsert`], Insert Or Replace Entity.
    pub async fn update_entity<'a>(
        &self,
        caller: impl Into<Caller<'a>>,
        table: &str,
        new: NewEntity,
        cond: &Condition,
    ) -> Result<Entity, ServiceError> {
        let upsert = *cond == Condition::Upsert;
        self.write_one(caller, table, new, upsert, |txn, new| self.apply_update(txn, new, cond)).await
    }

    /// Merge Entity or, with [`Condition::Upsert`], Insert Or Merge Entity: sent
    /// properties replace or extend the stored ones; nothing is removed.
    pub async fn merge_entity<'a>(
        &self,
        caller: impl Into<Caller<'a>>,
        table: &str,
        new: NewEntity,
        cond: &Condition,
    ) -> Result<Entity, ServiceError> {
        let upsert = *cond == Condition::Upsert;
        self.write_one(caller, table, new, upsert, |txn, new| self.apply_merge(txn, new, cond)).await
    }

    /// One entity write of a single request: the caller's key range, the throttle, `apply`
    /// in the partition's turn, then the advisor's note (`may_create`: whether the write
    /// can have created the row).
    async fn write_one<'a>(
        &self,
        caller: impl Into<Caller<'a>>,
        table: &str,
        new: NewEntity,
        may_create: bool,
        apply: impl FnOnce(&mut Txn<'_>, NewEntity) -> Result<Entity, ServiceError>,
    ) -> Result<Entity, ServiceError> {
        let Caller { account, .. } = caller.into().admits(&new.partition_key, &new.row_key)?;
        let pk = new.partition_key.clone();
        self.gate.admit(account, table, Some(&pk), 1)?;
        let e = self.parts.writes().transact_in_turn(account, table, &pk, |txn| apply(txn, new)).await?;
        self.notes.write(account, table, &e.partition_key, [(e.row_key.as_str(), may_create)]);
        Ok(e)
    }

    /// Delete Entity; `cond` must be [`Condition::Exists`] or [`Condition::Etag`].
    pub async fn delete_entity<'a>(
        &self,
        caller: impl Into<Caller<'a>>,
        table: &str,
        pk: &str,
        rk: &str,
        cond: &Condition,
    ) -> Result<(), ServiceError> {
        let Caller { account, .. } = caller.into().admits(pk, rk)?;
        self.gate.admit(account, table, Some(pk), 1)?;
        self.parts
            .writes()
            .transact_in_turn(account, table, pk, |txn| apply_delete(txn, pk, rk, cond))
            .await?;
        self.notes.write(account, table, pk, [(rk, false)]);
        Ok(())
    }

    /// Insert inside a partition transaction.
    pub(super) fn apply_insert(&self, txn: &mut Txn<'_>, new: NewEntity) -> Result<Entity, ServiceError> {
        if txn.get(&new.partition_key, &new.row_key)?.is_some() {
            return Err(ServiceError::EntityAlreadyExists);
        }
        self.put_whole(txn, new)
    }

    /// Writes `new` as the whole entity with a fresh Timestamp (insert and replace).
    fn put_whole(&self, txn: &mut Txn<'_>, new: NewEntity) -> Result<Entity, ServiceError> {
        let e = Entity {
            partition_key: new.partition_key,
            row_key: new.row_key,
            timestamp: self.clock.now(),
            properties: new.properties,
        };
        check_entity_limits(&e)?;
        txn.put(&e);
        Ok(e)
    }

    /// Replace (or insert-or-replace) inside a partition transaction.
    pub(super) fn apply_update(
        &self,
        txn: &mut Txn<'_>,
        new: NewEntity,
        cond: &Condition,
    ) -> Result<Entity, ServiceError> {
        let current = txn.get(&new.partition_key, &new.row_key)?;
        check_condition(current.as_ref(), cond)?;
        self.put_whole(txn, new)
    }

    /// Merge (or insert-or-merge) inside a partition transaction.
    pub(super) fn apply_merge(
        &self,
        txn: &mut Txn<'_>,
        new: NewEntity,
        cond: &Condition,
    ) -> Result<Entity, ServiceError> {
        let current = txn.get(&new.partition_key, &new.row_key)?;
        check_condition(current.as_ref(), cond)?;
        let mut e = current.unwrap_or_else(|| Entity {
            partition_key: new.partition_key,
            row_key: new.row_key,
            timestamp: self.clock.now(),
            properties: Vec::new(),
        });
        for (name, value) in new.properties {
            e.set(name, value);
        }
        e.timestamp = self.clock.now();
        check_entity_limits(&e)?;
        txn.put(&e);
        Ok(e)
    }
}

/// Delete inside a partition transaction.
pub(super) fn apply_delete(
    txn: &mut Txn<'_>,
    pk: &str,
    rk: &str,
    cond: &Condition,
) -> Result<(), ServiceError> {
    let current = txn.get(pk, rk)?;
    if current.is_none() {
        return Err(ServiceError::ResourceNotFound);
    }
    check_condition(current.as_ref(), cond)?;
    txn.delete(pk, rk);
    Ok(())
}
