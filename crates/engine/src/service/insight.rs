//! [`Notes`]: what the entity operations tell the partition advisor
//! ([`aztable_insight`]): each point read, each page of Query Entities (classified by
//! the planner, with what it examined) and each write, after it succeeded. Nothing is
//! done when the advisor is off.

use super::EntityPage;
use aztable_insight::Advisor;
use aztable_wire::filter::Expr;
use std::sync::Arc;

/// The advisor the entity operations report to (`None`: `--insight off`).
#[derive(Debug, Clone, Default)]
pub(super) struct Notes {
    advisor: Option<Arc<Advisor>>,
}

impl Notes {
    /// Notes reported to `advisor`.
    pub(super) fn to(advisor: Arc<Advisor>) -> Self {
        Notes { advisor: Some(advisor) }
    }

    pub(super) fn advisor(&self) -> Option<&Advisor> {
        self.advisor.as_deref()
    }

    pub(super) fn on(&self) -> bool {
        self.advisor.is_some()
    }

    pub(super) fn point_read(&self, account: &str, table: &str, pk: &str) {
        if let Some(a) = &self.advisor {
            a.point_read(account, table, pk);
        }
    }

    /// A page of Query Entities; logs a full table scan over `--warnFullScan`.
    pub(super) fn query(&self, account: &str, table: &str, filter: Option<&Expr>, page: &EntityPage) {
        let Some(a) = &self.advisor else { return };
        let examined = page.examined as u64;
        if a.queried(account, table, page.kind, filter, examined, &page.entities) {
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

    pub(super) fn write<'a>(
        &self,
        account: &str,
        table: &str,
        pk: &str,
        rows: impl IntoIterator<Item = (&'a str, bool)>,
    ) {
        if let Some(a) = &self.advisor {
            a.wrote(account, table, pk, rows);
        }
    }
}
