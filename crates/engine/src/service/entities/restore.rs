//! Restore: writes entities as an export recorded them, Timestamps (and so ETags)
//! kept, for `aztable import` into a data directory. Each entity is checked as an
//! insert would be (keys, property count, size) and replaces any stored entity of the
//! same keys; one call writes one partition's entities as one transaction.

use super::{check_entity_limits, check_keys, Entities};
use crate::service::ServiceError;
use aztable_model::Entity;

impl Entities {
    /// Writes `entities`, all of partition `pk`, into `table` of `account` as one atomic
    /// transaction, keeping their Timestamps. Nothing is written when one fails a check.
    pub fn restore_entities(
        &self,
        account: &str,
        table: &str,
        pk: &str,
        entities: &[Entity],
    ) -> Result<(), ServiceError> {
        for e in entities {
            if e.partition_key != pk {
                return Err(aztable_model::error::ApiError::with_message(
                    aztable_model::error::ErrorCode::InvalidInput,
                    "A restore transaction holds one partition's entities.",
                )
                .into());
            }
            check_keys(&e.partition_key, &e.row_key)?;
            check_entity_limits(e)?;
        }
        self.parts.writes().transact(account, table, pk, |txn| {
            txn.learn_absent(pk, entities.iter().map(|e| e.row_key.as_str()))?;
            for e in entities {
                txn.put(e);
            }
            Ok::<(), ServiceError>(())
        })
    }
}
