//! Table operations: QueryTables, CreateTable, DeleteTable, GetTable.

use super::{ServiceError, TableService};
use crate::partition::PartitionError;
use aztable_model::names::validate_table_name;
use aztable_wire::filter::{eval_table_name, Expr};
use std::sync::Arc;

impl TableService {
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
        self.admit(account, "", None, 1)?;
        let from = next_table_name.map(str::to_ascii_lowercase);
        let (parts, owned) = (Arc::clone(&self.parts), account.to_owned());
        let page: (Vec<String>, Option<String>) = super::off_the_workers(move || {
            let keep = |name: &str| filter.as_ref().is_none_or(|f| eval_table_name(f, name));
            let (tables, next) = parts.list_tables(&owned, from.as_deref(), top, keep)?;
            Ok((tables.into_iter().map(|t| t.name).collect(), next))
        })
        .await?;
        if let Some(t) = &self.throttle {
            let more = u32::try_from(page.0.len().saturating_sub(1)).unwrap_or(u32::MAX);
            t.charge(account, "", [], more);
        }
        Ok(page)
    }

    /// Create Table: returns the name as created.
    pub fn create_table(&self, account: &str, name: &str) -> Result<String, ServiceError> {
        validate_table_name(name)?;
        self.admit(account, name, None, 1)?;
        Ok(self.parts.create_table(account, name)?.name)
    }

    /// Delete Table: removes the table and all its entities.
    pub fn delete_table(&self, account: &str, name: &str) -> Result<(), ServiceError> {
        self.admit(account, name, None, 1)?;
        match self.parts.delete_table(account, name) {
            Err(PartitionError::TableNotFound) => Err(ServiceError::ResourceNotFound),
            other => Ok(other?),
        }
    }

    /// Get Table (`GET /Tables('name')`): the table's name as created.
    pub fn get_table(&self, account: &str, name: &str) -> Result<String, ServiceError> {
        self.admit(account, name, None, 1)?;
        match self.parts.lookup_table(account, name)? {
            Some(t) => Ok(t.name),
            None => Err(ServiceError::ResourceNotFound),
        }
    }
}
