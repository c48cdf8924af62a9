//! Entity group transactions (`POST /$batch`): parsing the `multipart/mixed` request
//! body into operations ([`parse`]), reading a change set's operations into typed
//! writes ([`read_change_set`]), building each operation's part of the answer
//! ([`written_part`], [`entity_part`], [`op_error_part`], [`changeset_error_part`],
//! [`parse_error_part`]) and writing the `multipart/mixed` 202 response
//! ([`write_success`], [`write_failure`], [`write_query`]). Pure: no I/O, no async.
//!
//! How the HTTP layer uses it:
//!
//! 1. `parse(content_type, body, &Limits::default())`.
//! 2. On `Err(e)`, look at [`BatchError::placement`]:
//!    [`ErrorPlacement::Response`] → a plain error response (`ApiError::from(e)`);
//!    [`ErrorPlacement::ChangeSetPart`] → 202 with `write_failure(e.content_id(), ..)`;
//!    [`ErrorPlacement::BatchPart`] → 202 with `write_query(..)`. In both 202 cases the
//!    part carries the OData error body with `e.code()` and `e.message()` (already
//!    prefixed `"<index>:"` when it belongs to one operation) and status `e.status()`.
//! 3. For a change set, `read_change_set(request, &caller)`: each operation's account,
//!    table name, write (`entity_write::read_entity_write`) and SAS permission, in order;
//!    on `Err(f)` answer 202 with `write_failure(f.reply.content_id, changeset_error_part(..))`.
//!    Else run the writes atomically (the engine checks one PartitionKey: 400
//!    `CommandsInBatchActOnDifferentPartitions`; each row once: 400 `InvalidDuplicateRow`),
//!    then answer 202 with `write_success` (one `written_part` per op, in order) or, if
//!    op `i` fails, with `write_failure` of op `i`'s error part, whose message is
//!    [`prefixed_message`]`(i, ..)`.
//! 4. For a query batch, run the single GET and answer 202 with `write_query`.
//!
//! Choices (evidence in the tests): a body over the limit is refused before parsing
//! (413, like the service's front end); more than one change set is refused as a whole
//! (the service runs the first and rejects the rest); an empty batch or change set is
//! a 400 `InvalidInput` part "An error occurred while processing this request." (the
//! service's answer recorded in azure-core's tests); the operation count is checked
//! before the operations are parsed.

mod change_set;
mod error;
mod multipart;
mod parse;
mod respond;
mod write;

#[cfg(test)]
mod change_set_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod write_tests;

pub use change_set::{
    check_url_table, read_change_set, BatchCaller, ChangeOp, ChangeSet, OpFailure, OpReply,
};
pub use error::{prefixed_message, BatchError, ErrorPlacement};
pub use parse::{parse, BatchKind, BatchOp, BatchRequest, Limits};
pub use respond::{
    changeset_error_part, entity_part, op_error_part, parse_error_part, written_part, ErrorStamp,
};
pub use write::{reason_phrase, write_failure, write_query, write_success, OpResult, PartHeader};
