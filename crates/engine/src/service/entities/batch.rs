//! Entity group transactions: validate every operation first (the caller's rows, keys,
//! one PartitionKey, each row once), then run them in order inside one partition
//! transaction, so the batch commits atomically or not at all.

use super::{apply_delete, Entities};
use crate::partition::PartitionError;
use crate::service::{Caller, ServiceError};
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::{Entity, EntityWrite};
use foldhash::HashSet;

/// What one action did.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchOutcome {
    /// The entity as written (insert, update, merge).
    Written(Entity),
    Deleted,
}

/// The first failing action of a batch; nothing of the batch was written.
#[derive(Debug)]
pub struct BatchFailure {
    /// 0-based index of the failing action.
    pub index: usize,
    pub error: ServiceError,
}

impl From<PartitionError> for BatchFailure {
    fn from(e: PartitionError) -> Self {
        BatchFailure { index: 0, error: e.into() }
    }
}

impl Entities {
    /// Runs a change set atomically against one table.
    pub async fn execute_batch<'a>(
        &self,
        caller: impl Into<Caller<'a>>,
        table: &str,
        actions: Vec<EntityWrite>,
    ) -> Result<Vec<BatchOutcome>, BatchFailure> {
        let caller = caller.into();
        let fail = |index: usize, error: ServiceError| BatchFailure { index, error };
        let Some(first) = actions.first() else {
            return Ok(Vec::new());
        };
        let pk = first.keys().0.to_owned();
        let mut seen = HashSet::default();
        for (i, action) in actions.iter().enumerate() {
            let (apk, ark) = action.keys();
            caller.admits(apk, ark).map_err(|e| fail(i, e))?;
            if apk != pk {
                return Err(fail(
                    i,
                    ApiError::new(ErrorCode::CommandsInBatchActOnDifferentPartitions).into(),
                ));
            }
            if !seen.insert(ark.to_owned()) {
                return Err(fail(i, ApiError::new(ErrorCode::InvalidDuplicateRow).into()));
            }
        }
        // a batch of N operations costs N, refused whole (top-level 503) when short
        self.gate.admit(caller.account, table, Some(&pk), actions.len()).map_err(|e| fail(0, e))?;
        // the advisor's view of the change set: each RowKey, and whether it inserts
        let noted: Option<Vec<(String, bool)>> = self
            .notes
            .on()
            .then(|| actions.iter().map(|a| (a.keys().1.to_owned(), a.may_insert())).collect());
        let out = self
            .parts
            .writes()
            .transact_in_turn(caller.account, table, &pk, |txn| {
                // Inserts into a new partition then need no lookup per row.
                txn.learn_absent(&pk, actions.iter().map(|a| a.keys().1)).map_err(|e| fail(0, e.into()))?;
                let mut out = Vec::with_capacity(actions.len());
                for (i, action) in actions.into_iter().enumerate() {
                    let r = match action {
                        EntityWrite::InsertEntity(e) => self.apply_insert(txn, e).map(BatchOutcome::Written),
                        EntityWrite::UpdateEntity(e, c) => {
                            self.apply_update(txn, e, &c).map(BatchOutcome::Written)
                        }
                        EntityWrite::MergeEntity(e, c) => {
                            self.apply_merge(txn, e, &c).map(BatchOutcome::Written)
                        }
                        EntityWrite::DeleteEntity { partition_key, row_key, cond } => {
                            apply_delete(txn, &partition_key, &row_key, &cond).map(|()| BatchOutcome::Deleted)
                        }
                    };
                    out.push(r.map_err(|e| fail(i, e))?);
                }
                Ok::<_, BatchFailure>(out)
            })
            .await?;
        if let Some(rows) = &noted {
            self.notes.write(caller.account, table, &pk, rows.iter().map(|(rk, ins)| (rk.as_str(), *ins)));
        }
        Ok(out)
    }
}
