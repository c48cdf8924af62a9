//! [`Tables`], the table operations: QueryTables, CreateTable, DeleteTable, GetTable;
//! the delay after Delete Table (`--tableDeleteDelay`) and the reset of an account's
//! tables (the admin `DELETE /_aztable/data`).

use super::throttle::Gate;
use super::ServiceError;
use crate::partition::{PartitionError, Partitions};
use aztable_model::names::validate_table_name;
use aztable_wire::filter::{eval_table_name, Expr};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// `--tableDeleteDelay`: the service removes a deleted table in the background ("at
/// least 40 seconds"), and until then Create Table of its name answers 409
/// `TableBeingDeleted`. Kept here: (account, lowercase name) → when it was deleted.
#[derive(Debug)]
struct DeleteDelay {
    period: Duration,
    deleted: Mutex<HashMap<(String, String), Instant>>,
}

impl DeleteDelay {
    /// Whether the name is still being deleted; forgets names whose delay is over.
    fn being_deleted(&self, account: &str, name: &str) -> bool {
        let mut deleted = self.deleted.lock().unwrap_or_else(PoisonError::into_inner);
        deleted.retain(|_, at| at.elapsed() < self.period);
        deleted.contains_key(&(account.to_owned(), name.to_ascii_lowercase()))
    }

    fn note(&self, account: &str, name: &str) {
        let mut deleted = self.deleted.lock().unwrap_or_else(PoisonError::into_inner);
        deleted.insert((account.to_owned(), name.to_ascii_lowercase()), Instant::now());
    }

    fn forget_account(&self, account: &str) {
        let mut deleted = self.deleted.lock().unwrap_or_else(PoisonError::into_inner);
        deleted.retain(|(a, _), _| a != account);
    }
}

/// The table operations over the catalog.
#[derive(Debug)]
pub struct Tables {
    parts: Arc<Partitions>,
    /// `--throttle`: each operation costs 1, Query Tables also the names it returns.
    pub(super) gate: Gate,
    /// `--tableDeleteDelay`: names deleted lately, refused by Create Table for a while
    /// (boxed: small where the service holds it by value).
    delete_delay: Option<Box<DeleteDelay>>,
}

impl Tables {
    pub(super) fn new(parts: Arc<Partitions>) -> Self {
        Tables { parts, gate: Gate::default(), delete_delay: None }
    }

    /// Sets `--tableDeleteDelay`: Create Table of a name deleted less than `period` ago
    /// answers `TableBeingDeleted` (`None` or zero: never).
    pub(super) fn set_delete_delay(&mut self, period: Option<Duration>) {
        self.delete_delay = period
            .filter(|p| !p.is_zero())
            .map(|period| Box::new(DeleteDelay { period, deleted: Mutex::default() }));
    }

    /// Query Tables: a page of the table names matching `filter`, in name order, and
    /// the (lowercase) name the next page starts at. The catalog scan runs on the
    /// blocking pool.
    pub async fn query_tables(
        &self,
        account: &str,
        next_table_name: Option<&str>,
        top: usize,
        filter: Option<Expr>,
    ) -> Result<(Vec<String>, Option<String>), ServiceError> {
        // like a query: 1 up front, the rest of the tables returned after the read
        self.gate.admit(account, "", None, 1)?;
        let from = next_table_name.map(str::to_ascii_lowercase);
        let (parts, owned) = (Arc::clone(&self.parts), account.to_owned());
        let page: (Vec<String>, Option<String>) = super::off_the_workers(move || {
            let keep = |name: &str| filter.as_ref().is_none_or(|f| eval_table_name(f, name));
            let (tables, next) = parts.catalog().list_tables(&owned, from.as_deref(), top, keep)?;
            Ok((tables.into_iter().map(|t| t.name).collect(), next))
        })
        .await?;
        if let Some(t) = self.gate.throttle() {
            let more = u32::try_from(page.0.len().saturating_sub(1)).unwrap_or(u32::MAX);
            t.charge(account, "", [], more);
        }
        Ok(page)
    }

    /// Create Table: returns the name as created.
    pub fn create_table(&self, account: &str, name: &str) -> Result<String, ServiceError> {
        validate_table_name(name)?;
        self.gate.admit(account, name, None, 1)?;
        if self.delete_delay.as_ref().is_some_and(|d| d.being_deleted(account, name)) {
            return Err(ServiceError::TableBeingDeleted);
        }
        Ok(self.parts.catalog().create_table(account, name)?.name)
    }

    /// Delete Table: removes the table and all its entities.
    pub fn delete_table(&self, account: &str, name: &str) -> Result<(), ServiceError> {
        self.gate.admit(account, name, None, 1)?;
        match self.parts.catalog().delete_table(account, name) {
            Err(PartitionError::TableNotFound) => Err(ServiceError::ResourceNotFound),
            other => {
                other?;
                if let Some(d) = &self.delete_delay {
                    d.note(account, name);
                }
                Ok(())
            }
        }
    }

    /// Deletes every table of `account` (each with Delete Table's one range delete, so
    /// the cost follows the number of tables, not of entities); returns how many. Not
    /// throttled and followed by no `--tableDeleteDelay`: this is a test harness's clean
    /// slate, not a client's request.
    pub fn delete_all_tables(&self, account: &str) -> Result<usize, ServiceError> {
        let mut deleted = 0;
        loop {
            let (tables, _) = self.parts.catalog().list_tables(account, None, 1000, |_| true)?;
            if tables.is_empty() {
                break;
            }
            for t in &tables {
                match self.parts.catalog().delete_table(account, &t.name) {
                    // deleted meanwhile by a request
                    Ok(()) | Err(PartitionError::TableNotFound) => deleted += 1,
                    Err(e) => return Err(e.into()),
                }
            }
        }
        if let Some(d) = &self.delete_delay {
            d.forget_account(account);
        }
        Ok(deleted)
    }

    /// Whether `account` holds no table.
    pub fn has_no_tables(&self, account: &str) -> Result<bool, ServiceError> {
        Ok(self.parts.catalog().list_tables(account, None, 1, |_| true)?.0.is_empty())
    }

    /// Get Table (`GET /Tables('name')`): the table's name as created.
    pub fn get_table(&self, account: &str, name: &str) -> Result<String, ServiceError> {
        self.gate.admit(account, name, None, 1)?;
        match self.parts.catalog().lookup_table(account, name)? {
            Some(t) => Ok(t.name),
            None => Err(ServiceError::ResourceNotFound),
        }
    }
}
