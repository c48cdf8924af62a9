//! A data directory of a stopped server, opened in this process: read-only for an
//! export, writable for an import (which keeps each entity's Timestamp).

use aztable_engine::service::{QueryEntities, ServiceError, TableService};
use aztable_model::Entity;
#[cfg(feature = "rocksdb")]
use aztable_store::{keys, Store};
use std::path::Path;
#[cfg(feature = "rocksdb")]
use std::sync::Arc;

/// Entities a restore transaction holds at most.
const RESTORE_CHUNK: usize = 1000;

pub(crate) struct Local {
    service: TableService,
    account: String,
}

fn describe(e: &ServiceError) -> String {
    match e {
        ServiceError::Invalid(api) => api.message.to_string(),
        other => other.to_string(),
    }
}

impl Local {
    /// Opens `dir` read-only. A directory an earlier build wrote and no server has
    /// upgraded yet is refused (its entities could not be read whole without writing).
    #[cfg(feature = "rocksdb")]
    pub(crate) fn open_read(dir: &Path, account: &str) -> Result<Local, String> {
        if !dir.join("CURRENT").is_file() {
            return Err(format!("{} is not an aztable data directory", dir.display()));
        }
        let store = aztable_store::rocks::RocksStore::open_read_only(dir)
            .map_err(|e| format!("cannot open the data directory {} read-only: {e}", dir.display()))?;
        let (start, end) = keys::legacy_heaps_range();
        if store.scan(&start, &end).next().is_some() {
            return Err(format!(
                "{} was written by an earlier aztable build: start the server on it once to upgrade it",
                dir.display()
            ));
        }
        Ok(Local { service: TableService::new(Arc::new(store)), account: account.to_owned() })
    }

    /// Opens (creating if missing) `dir` for writing; the server must not be running on it.
    #[cfg(feature = "rocksdb")]
    pub(crate) fn open_write(dir: &Path, account: &str) -> Result<Local, String> {
        let store = aztable_store::rocks::RocksStore::open(dir).map_err(|e| {
            format!("cannot open the data directory {} (is a server running on it?): {e}", dir.display())
        })?;
        let service = TableService::open(Arc::new(store)).map_err(|e| describe(&e))?;
        Ok(Local { service, account: account.to_owned() })
    }

    #[cfg(not(feature = "rocksdb"))]
    pub(crate) fn open_read(_: &Path, _: &str) -> Result<Local, String> {
        Err("built without the rocksdb feature: use --url".into())
    }

    #[cfg(not(feature = "rocksdb"))]
    pub(crate) fn open_write(_: &Path, _: &str) -> Result<Local, String> {
        Err("built without the rocksdb feature: use --url".into())
    }

    /// Every table of the account, in name order, as created.
    pub(crate) async fn tables(&self) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let (names, more) = self
                .service
                .tables()
                .query_tables(&self.account, next.as_deref(), 1000, None)
                .await
                .map_err(|e| describe(&e))?;
            out.extend(names);
            match more {
                Some(n) => next = Some(n),
                None => return Ok(out),
            }
        }
    }

    /// The table's name as created, or an error naming it when it does not exist.
    pub(crate) fn table(&self, name: &str) -> Result<String, String> {
        self.service.tables().get_table(&self.account, name).map_err(|_| format!("no table '{name}'"))
    }

    /// One page of a table's entities from `next`, and where the next page starts.
    pub(crate) async fn page(
        &self,
        table: &str,
        next: Option<(String, String)>,
    ) -> Result<(Vec<Entity>, Option<(String, String)>), String> {
        let q = QueryEntities { start: next, top: 1000, filter: None };
        let page = self
            .service
            .entities()
            .query_entities(&self.account, table, &q)
            .await
            .map_err(|e| describe(&e))?;
        Ok((page.entities, page.next))
    }

    /// Creates the table unless it exists.
    pub(crate) fn create_table(&self, name: &str) -> Result<(), String> {
        match self.service.tables().create_table(&self.account, name) {
            Ok(_) | Err(ServiceError::TableAlreadyExists) => Ok(()),
            Err(e) => Err(format!("cannot create table '{name}': {}", describe(&e))),
        }
    }

    /// Writes the entities (replacing any of the same keys), one transaction per run
    /// of a partition's entities.
    pub(crate) fn write(&self, table: &str, entities: &[Entity]) -> Result<(), String> {
        write_entities(&self.service, &self.account, table, entities)
    }

    /// Flushes the store (the end of an import).
    pub(crate) fn flush(&self) -> Result<(), String> {
        self.service.flush().map_err(|e| describe(&e))
    }
}

/// Writes `entities` into `table` of `account` (replacing any of the same keys, keeping
/// their Timestamps), one transaction per run of a partition's entities.
pub(crate) fn write_entities(
    service: &TableService,
    account: &str,
    table: &str,
    entities: &[Entity],
) -> Result<(), String> {
    for run in entities.chunk_by(|a, b| a.partition_key == b.partition_key) {
        for chunk in run.chunks(RESTORE_CHUNK) {
            let Some(pk) = chunk.first().map(|e| &e.partition_key) else { continue };
            service
                .entities()
                .restore_entities(account, table, pk, chunk)
                .map_err(|e| format!("table {table}, partition '{pk}': {}", describe(&e)))?;
        }
    }
    Ok(())
}
