//! [`ServiceError`]: the domain outcomes of an operation.

use crate::partition::PartitionError;
use aztable_model::error::{ApiError, ErrorCode};
use aztable_store::StoreError;

/// Why an operation did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The table does not exist.
    #[error("table not found")]
    TableNotFound,
    /// A table of that name (any case) exists already.
    #[error("table already exists")]
    TableAlreadyExists,
    /// Create Table of a name deleted less than `--tableDeleteDelay` ago.
    #[error("table being deleted")]
    TableBeingDeleted,
    /// Delete Table on a missing table (the service answers 404 ResourceNotFound).
    #[error("resource not found")]
    ResourceNotFound,
    /// Insert of an entity that exists already.
    #[error("entity already exists")]
    EntityAlreadyExists,
    /// The If-Match ETag does not match.
    #[error("update condition not satisfied")]
    ConditionNotSatisfied,
    /// A request input broke a rule of the service; carries the wire error.
    #[error("invalid request: {0}")]
    Invalid(ApiError),
    /// Over a scalability target (`--throttle`): refused before anything was done.
    #[error("throttled: over the {0:?} target")]
    Throttled(super::throttle::Refusal),
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<PartitionError> for ServiceError {
    fn from(e: PartitionError) -> Self {
        match e {
            PartitionError::TableNotFound => ServiceError::TableNotFound,
            PartitionError::TableAlreadyExists => ServiceError::TableAlreadyExists,
            PartitionError::Store(s) => ServiceError::Store(s),
        }
    }
}

impl From<super::throttle::Refusal> for ServiceError {
    fn from(r: super::throttle::Refusal) -> Self {
        ServiceError::Throttled(r)
    }
}

impl From<ApiError> for ServiceError {
    fn from(e: ApiError) -> Self {
        ServiceError::Invalid(e)
    }
}

impl From<aztable_model::names::NameError> for ServiceError {
    fn from(e: aztable_model::names::NameError) -> Self {
        ServiceError::Invalid(e.into())
    }
}

impl From<ServiceError> for ApiError {
    /// The wire error of each outcome; damage found on disk is 500 `DataCorrupted`
    /// naming the file, any other storage failure is logged and answered 500
    /// `InternalError` without the engine's text.
    fn from(e: ServiceError) -> Self {
        use ServiceError as S;
        match e {
            S::TableNotFound => ApiError::new(ErrorCode::TableNotFound),
            S::TableAlreadyExists => ApiError::new(ErrorCode::TableAlreadyExists),
            S::TableBeingDeleted => ApiError::new(ErrorCode::TableBeingDeleted),
            S::ResourceNotFound => ApiError::new(ErrorCode::ResourceNotFound),
            S::EntityAlreadyExists => ApiError::new(ErrorCode::EntityAlreadyExists),
            S::ConditionNotSatisfied => ApiError::new(ErrorCode::UpdateConditionNotSatisfied),
            S::Invalid(api) => api,
            S::Throttled(refusal) => refusal.into(),
            // damage on disk: named, and not to be retried (the store logged it)
            S::Store(StoreError::DataCorrupted(message)) => {
                ApiError::with_message(ErrorCode::DataCorrupted, message)
            }
            S::Store(source) => {
                // The engine's error goes to the log, never to the client.
                tracing::error!(error = %source, "storage failure");
                ApiError::new(ErrorCode::InternalError)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damage_on_disk_is_named_and_other_storage_failures_are_internal_errors() {
        let damaged = ApiError::from(ServiceError::Store(StoreError::DataCorrupted(
            "The data directory is damaged: the file 000012.sst …".into(),
        )));
        assert_eq!((damaged.code, damaged.status()), (ErrorCode::DataCorrupted, 500));
        assert!(damaged.message.contains("000012.sst"), "{}", damaged.message);
        let other = ApiError::from(ServiceError::Store(StoreError::Engine("IO error: /d/000012.sst".into())));
        assert_eq!(other.code, ErrorCode::InternalError);
        assert!(!other.message.contains("000012.sst"), "the engine's text stays in the log");
    }
}
