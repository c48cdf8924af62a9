//! Unit tests of the operations over the in-memory store.

use super::*;
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::{Condition, EdmValue, EntityWrite, NewEntity};
use aztable_store::mem::MemStore;

fn svc() -> TableService {
    let s = TableService::new(Arc::new(MemStore::new()));
    s.tables().create_table("acct", "Tbl").unwrap();
    s
}

fn new(pk: &str, rk: &str, props: Vec<(&str, EdmValue)>) -> NewEntity {
    NewEntity {
        partition_key: pk.into(),
        row_key: rk.into(),
        properties: props.into_iter().map(|(n, v)| (n.to_owned(), v)).collect(),
    }
}

fn code(e: ServiceError) -> ErrorCode {
    ApiError::from(e).code
}

#[test]
fn table_errors() {
    let s = svc();
    assert_eq!(code(s.tables().create_table("acct", "tbl").unwrap_err()), ErrorCode::TableAlreadyExists);
    assert_eq!(code(s.tables().create_table("acct", "a-b").unwrap_err()), ErrorCode::InvalidResourceName);
    assert_eq!(code(s.tables().delete_table("acct", "nope").unwrap_err()), ErrorCode::ResourceNotFound);
    assert_eq!(s.tables().get_table("acct", "TBL").unwrap(), "Tbl");
}

#[test]
fn a_deleted_name_is_being_deleted_for_the_delay_and_other_names_are_not() {
    let s = svc().with_table_delete_delay(Some(std::time::Duration::from_secs(3600)));
    s.tables().delete_table("acct", "tbl").unwrap();
    assert_eq!(code(s.tables().create_table("acct", "TBL").unwrap_err()), ErrorCode::TableBeingDeleted);
    assert_eq!(s.tables().create_table("other", "tbl").unwrap(), "tbl", "per account");
    assert_eq!(s.tables().create_table("acct", "fresh").unwrap(), "fresh");
    let s = svc().with_table_delete_delay(Some(std::time::Duration::ZERO));
    s.tables().delete_table("acct", "tbl").unwrap();
    assert_eq!(s.tables().create_table("acct", "tbl").unwrap(), "tbl", "a zero delay is no delay");
}

#[test]
fn delete_all_tables_empties_one_account_and_leaves_the_others() {
    let s = svc().with_table_delete_delay(Some(std::time::Duration::from_secs(3600)));
    for i in 0..1_205 {
        s.tables().create_table("acct", &format!("tab{i}")).unwrap();
    }
    s.entities().insert_entity("acct", "tab7", new("p", "r", vec![])).wait().unwrap();
    s.tables().create_table("other", "kept").unwrap();
    assert!(!s.tables().has_no_tables("acct").unwrap());
    assert_eq!(s.tables().delete_all_tables("acct").unwrap(), 1_206);
    assert!(s.tables().has_no_tables("acct").unwrap());
    assert_eq!(s.tables().get_table("other", "kept").unwrap(), "kept");
    assert_eq!(s.tables().create_table("acct", "tab7").unwrap(), "tab7", "no delay after a reset");
    assert_eq!(
        s.entities()
            .query_entities("acct", "tab7", &QueryEntities { top: 10, ..Default::default() })
            .wait()
            .unwrap()
            .entities
            .len(),
        0
    );
}

#[test]
fn insert_conflicts_and_missing_table() {
    let s = svc();
    s.entities().insert_entity("acct", "tbl", new("p", "r", vec![])).wait().unwrap();
    let e = s.entities().insert_entity("acct", "tbl", new("p", "r", vec![])).wait().unwrap_err();
    assert_eq!(code(e), ErrorCode::EntityAlreadyExists);
    let e = s.entities().insert_entity("acct", "none", new("p", "r", vec![])).wait().unwrap_err();
    assert_eq!(code(e), ErrorCode::TableNotFound);
    let e = s.entities().insert_entity("acct", "tbl", new("p/", "r", vec![])).wait().unwrap_err();
    assert_eq!(code(e), ErrorCode::InvalidInput);
}

#[test]
fn etag_conditions() {
    let s = svc();
    let e1 = s
        .entities()
        .insert_entity("acct", "tbl", new("p", "r", vec![("a", EdmValue::Int32(1))]))
        .wait()
        .unwrap();
    let tag1 = Condition::Etag(e1.etag());
    let e2 = s
        .entities()
        .merge_entity("acct", "tbl", new("p", "r", vec![("b", EdmValue::Boolean(true))]), &tag1)
        .wait()
        .unwrap();
    assert!(e2.timestamp > e1.timestamp);
    assert_eq!(e2.get("a"), Some(&EdmValue::Int32(1)));
    // stale
    let e = s.entities().update_entity("acct", "tbl", new("p", "r", vec![]), &tag1).wait().unwrap_err();
    assert_eq!(code(e), ErrorCode::UpdateConditionNotSatisfied);
    let e = s.entities().delete_entity("acct", "tbl", "p", "r", &tag1).wait().unwrap_err();
    assert_eq!(code(e), ErrorCode::UpdateConditionNotSatisfied);
    // replace drops properties
    let e3 =
        s.entities().update_entity("acct", "tbl", new("p", "r", vec![]), &Condition::Exists).wait().unwrap();
    assert!(e3.properties.is_empty());
    // missing entity with a condition → ResourceNotFound; without → upsert
    let e = s
        .entities()
        .merge_entity("acct", "tbl", new("p", "x", vec![]), &Condition::Exists)
        .wait()
        .unwrap_err();
    assert_eq!(code(e), ErrorCode::ResourceNotFound);
    s.entities()
        .merge_entity("acct", "tbl", new("p", "x", vec![("m", EdmValue::Int64(5))]), &Condition::Upsert)
        .wait()
        .unwrap();
    assert_eq!(s.entities().get_entity("acct", "tbl", "p", "x").unwrap().get("m"), Some(&EdmValue::Int64(5)));
    s.entities()
        .delete_entity(
            "acct",
            "tbl",
            "p",
            "x",
            &Condition::Etag(s.entities().get_entity("acct", "tbl", "p", "x").unwrap().etag()),
        )
        .wait()
        .unwrap();
    assert_eq!(
        code(s.entities().get_entity("acct", "tbl", "p", "x").unwrap_err()),
        ErrorCode::ResourceNotFound
    );
}

#[test]
fn merged_entity_limits_apply() {
    let s = svc();
    let props: Vec<(String, EdmValue)> = (0..200).map(|i| (format!("a{i}"), EdmValue::Int32(i))).collect();
    s.entities()
        .insert_entity(
            "acct",
            "tbl",
            NewEntity { partition_key: "p".into(), row_key: "r".into(), properties: props },
        )
        .wait()
        .unwrap();
    let more: Vec<(String, EdmValue)> = (0..60).map(|i| (format!("b{i}"), EdmValue::Int32(i))).collect();
    let e = s
        .entities()
        .merge_entity(
            "acct",
            "tbl",
            NewEntity { partition_key: "p".into(), row_key: "r".into(), properties: more },
            &Condition::Exists,
        )
        .wait()
        .unwrap_err();
    assert_eq!(code(e), ErrorCode::TooManyProperties);
    assert_eq!(s.entities().get_entity("acct", "tbl", "p", "r").unwrap().properties.len(), 200);
}

/// A table SAS's key range, enforced on the keys each operation ends up with: refused
/// operations write nothing, a point read outside it finds nothing, a query sees only the range, and a batch fails at the first
/// operation outside it.
#[test]
fn the_callers_rows_bound_every_entity_operation() {
    use aztable_model::{KeyBound, KeyRange};
    let s = svc();
    s.entities().insert_entity("acct", "tbl", new("p", "b", vec![("v", EdmValue::Int32(1))])).wait().unwrap();
    // rows of partition p from "m" on
    let rows = KeyRange {
        lower: Some(KeyBound { pk: "p".into(), rk: Some("m".into()), inclusive: true }),
        upper: None,
    };
    let caller = Caller { account: "acct", rows: Some(&rows) };
    let refused = |e: ServiceError| assert_eq!(code(e), ErrorCode::AuthorizationFailure);

    refused(s.entities().insert_entity(caller, "tbl", new("p", "a", vec![])).wait().unwrap_err());
    // a point read outside the range: as if the entity did not exist (it does: "b")
    assert_eq!(
        code(s.entities().get_entity(caller, "tbl", "p", "b").unwrap_err()),
        ErrorCode::ResourceNotFound
    );
    let v2 = || new("p", "a", vec![("v", EdmValue::Int32(2))]);
    refused(s.entities().update_entity(caller, "tbl", v2(), &Condition::Upsert).wait().unwrap_err());
    refused(s.entities().merge_entity(caller, "tbl", v2(), &Condition::Upsert).wait().unwrap_err());
    refused(s.entities().delete_entity(caller, "tbl", "p", "a", &Condition::Exists).wait().unwrap_err());
    assert_eq!(
        code(s.entities().get_entity("acct", "tbl", "p", "a").unwrap_err()),
        ErrorCode::ResourceNotFound
    );

    s.entities().insert_entity(caller, "tbl", new("p", "x", vec![])).wait().unwrap();
    let page = s
        .entities()
        .query_entities(caller, "tbl", &QueryEntities { top: 1000, ..Default::default() })
        .wait()
        .unwrap();
    let keys: Vec<&str> = page.entities.iter().map(|e| e.row_key.as_str()).collect();
    assert_eq!(keys, ["x"], "rows outside the range are never returned");

    let batch = vec![
        EntityWrite::InsertEntity(new("p", "y", vec![])),
        EntityWrite::DeleteEntity { partition_key: "p".into(), row_key: "a".into(), cond: Condition::Exists },
    ];
    let failure = s.entities().execute_batch(caller, "tbl", batch).wait().unwrap_err();
    assert_eq!((failure.index, code(failure.error)), (1, ErrorCode::AuthorizationFailure));
    assert_eq!(
        code(s.entities().get_entity("acct", "tbl", "p", "y").unwrap_err()),
        ErrorCode::ResourceNotFound
    );
}

/// A page that scans past the rows examined in place continues on the blocking pool and
/// comes out as one page: the same entities and continuation as a page scanned at once.
#[test]
fn a_page_split_between_the_worker_and_the_pool_is_one_page() {
    let s = svc();
    let batch = |from: usize| {
        (from..from + 100).map(|i| {
            EntityWrite::InsertEntity(new("p", &format!("r{i:05}"), vec![("n", EdmValue::Int32(i as i32))]))
        })
    };
    for from in (0..1500).step_by(100) {
        s.entities().execute_batch("acct", "tbl", batch(from).collect()).wait().unwrap();
    }
    let filter = |f: &str| Some(aztable_wire::filter::parse(f).unwrap());
    for (top, f) in
        [(1000, "n ge 0"), (1000, "n lt 600"), (7, "n ge 400"), (1000, "n eq 1499"), (5, "n eq 3")]
    {
        let q = QueryEntities { top, filter: filter(f), start: None };
        let at_once = s.entities().query_entities_within("acct".into(), "tbl", &q, 10_000).unwrap();
        let split = s.entities().query_entities("acct", "tbl", &q).wait().unwrap();
        assert_eq!(split.entities, at_once.entities, "{f} top {top}");
        assert_eq!(split.next, at_once.next, "{f} top {top}");
    }
}

/// A page cut short (`--shortPages`) is counted by the advisor as it is returned: every
/// row once across the pages, returned and examined, not again on the page that returns
/// it next; the continuation is the first row cut.
#[test]
fn a_cut_page_counts_its_rows_once() {
    let advisor = Arc::new(aztable_insight::Advisor::new(aztable_insight::InsightOptions::default()));
    let s = svc().with_insight(Arc::clone(&advisor));
    let rows = ["a", "b", "c"]
        .iter()
        .flat_map(|pk| (0..4).map(move |i| EntityWrite::InsertEntity(new(pk, &format!("{i}"), vec![]))));
    for row in rows {
        s.entities().execute_batch("acct", "tbl", vec![row]).wait().unwrap();
    }
    // cut at the first partition boundary, as the server's cutter does
    let at_boundary = |page: &[aztable_model::Entity]| {
        page.windows(2).position(|w| w[0].partition_key != w[1].partition_key).map(|i| i + 1)
    };
    let (mut start, mut pages) = (None, Vec::new());
    loop {
        let q = QueryEntities { top: 1000, filter: None, start };
        let page = s.entities().query_entities_cut("acct", "tbl", &q, &at_boundary).wait().unwrap();
        pages.push(
            page.entities.iter().map(|e| format!("{}{}", e.partition_key, e.row_key)).collect::<Vec<_>>(),
        );
        match page.next {
            Some(next) => start = Some(next),
            None => break,
        }
    }
    assert_eq!(pages.len(), 3, "{pages:?}");
    assert_eq!(pages.concat().len(), 12, "{pages:?}");
    let report = advisor.report();
    let table =
        report.tables.iter().find(|t| t.table.eq_ignore_ascii_case("tbl")).expect("the table's stats");
    assert_eq!((table.queries.full_scan, table.returned.full_scan, table.examined.full_scan), (3, 12, 12));
}

/// A RowKey looked for in every partition (no PartitionKey): each partition's rows
/// outside the RowKey's bounds are passed over after a few, so the query examines a few
/// rows a partition, and finds what a scan of every row finds, a page at a time too.
#[test]
fn a_row_key_in_every_partition_examines_a_few_rows_a_partition() {
    const STEPS: usize = crate::partition::STEPS_BEFORE_SEEK;
    let s = svc();
    for pk in ["a", "b", "c", "d"] {
        let rows: Vec<EntityWrite> =
            (0..100).map(|i| EntityWrite::InsertEntity(new(pk, &format!("r{i:03}"), vec![]))).collect();
        s.entities().execute_batch("acct", "tbl", rows).wait().unwrap();
    }
    let query = |f: &str, top: usize| {
        let (mut start, mut found, mut examined) = (None, Vec::new(), 0);
        loop {
            let filter = Some(aztable_wire::filter::parse(f).unwrap());
            let q = QueryEntities { top, filter, start };
            let page = s.entities().query_entities("acct", "tbl", &q).wait().unwrap();
            examined += page.examined;
            found.extend(page.entities.iter().map(|e| format!("{}{}", e.partition_key, e.row_key)));
            match page.next {
                Some(next) => start = Some(next),
                None => return (found, examined),
            }
        }
    };
    // the same rows by a filter that bounds no RowKey, every row read
    let (all, examined_all) = query("RowKey eq 'r050' or (RowKey ge 'r098' and RowKey ne 'r099') or Timestamp lt datetime'1999-01-01T00:00:00Z'", 1000);
    assert_eq!(examined_all, 400);
    assert_eq!(all, ["ar050", "ar098", "br050", "br098", "cr050", "cr098", "dr050", "dr098"]);
    for top in [1, 3, 1000] {
        let (found, examined) = query("RowKey eq 'r050' or (RowKey ge 'r098' and RowKey ne 'r099')", top);
        assert_eq!(found, all, "top {top}");
        // (in each partition: STEPS rows before r050, r050, STEPS after it, then r098 and
        // r099 of the intervals from r098 on)
        assert!(examined <= 4 * (2 * STEPS + 3), "top {top}: {examined} examined");
    }
    let (found, examined) = query("RowKey eq 'r050'", 1000);
    assert_eq!(found, ["ar050", "br050", "cr050", "dr050"]);
    // (in each partition: STEPS rows before the bound, its row, STEPS rows after it)
    assert!(examined <= 4 * (2 * STEPS + 1), "{examined} examined");
}
