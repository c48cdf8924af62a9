//! What the service tells the partition advisor ([`aztable_insight`]): each point read,
//! each page of Query Entities (classified by the planner, with what it examined) and
//! each write, after it succeeded. Nothing is done when the advisor is off.

use super::{EntityPage, TableService};
use aztable_insight::Advisor;
use aztable_wire::filter::Expr;
use std::sync::Arc;

impl TableService {
    /// The service, reporting to `advisor`.
    pub fn with_insight(mut self, advisor: Arc<Advisor>) -> Self {
        self.insight = Some(advisor);
        self
    }

    /// The partition advisor, unless it is off.
    pub fn insight(&self) -> Option<&Advisor> {
        self.insight.as_deref()
    }

    pub(super) fn insight_on(&self) -> bool {
        self.insight.is_some()
    }

    pub(super) fn note_point_read(&self, account: &str, table: &str, pk: &str) {
        if let Some(a) = &self.insight {
            a.point_read(account, table, pk);
        }
    }

    /// A page of Query Entities; logs a full table scan over `--warnFullScan`.
    pub(super) fn note_query(&self, account: &str, table: &str, filter: Option<&Expr>, page: &EntityPage) {
        let Some(a) = &self.insight else { return };
        let kind = aztable_insight::classify(filter);
        let examined = page.examined as u64;
        if a.queried(account, table, kind, filter, examined, &page.entities) {
            let filter = filter.map(ToString::to_string).unwrap_or_default();
            tracing::warn!(
                account,
                table,
                examined,
                returned = page.entities.len(),
                "full table scan of {table} examined {examined} entities to return {}: $filter={filter:?}",
                page.entities.len()
            );
        }
    }

    pub(super) fn note_write<'a>(
        &self,
        account: &str,
        table: &str,
        pk: &str,
        rows: impl IntoIterator<Item = (&'a str, bool)>,
    ) {
        if let Some(a) = &self.insight {
            a.wrote(account, table, pk, rows);
        }
    }
}
