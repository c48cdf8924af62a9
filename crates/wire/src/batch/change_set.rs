//! [`read_change_set`]: a parsed change set → [`ChangeSet`], each operation read by the
//! front end single requests use ([`read_entity_write`]) and checked as
//! a request of its own is (its account, its table's name, the SAS's permission and
//! table), so the engine gets typed writes and the answer gets, per operation, what
//! its part needs ([`OpReply`]). Checks run operation by operation, in order; the first
//! that fails is the change set's answer.

use super::{BatchOp, BatchRequest};
use crate::auth::SasGrant;
use crate::endpoint::{primary_account, Endpoint};
use crate::entity_write::{insert_prefer, read_entity_write, Head, WriteRequest};
use crate::odata::{self, Format, Metadata, Prefer};
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::EntityWrite;

/// A change set, read: the table its operations address and the operations, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeSet {
    /// The table as the first operation's URL spells it (the parser refuses others).
    pub table: String,
    pub ops: Vec<ChangeOp>,
}

/// One operation of a change set: the write the engine runs and what its part needs.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeOp {
    pub write: EntityWrite,
    /// The format the body was read in.
    pub body_format: Format,
    pub reply: OpReply,
}

/// What an operation's part of the answer needs from its request; known before its
/// body is read, so a failing operation is answered with it too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpReply {
    /// 0-based position in the change set (the `"<index>:"` of an error message).
    pub index: usize,
    /// The `Content-ID` the part echoes.
    pub content_id: Option<String>,
    /// Insert Entity: answered 201 with the entity (or 204 under `Prefer`), and with
    /// `Preference-Applied` even when it fails.
    pub insert: bool,
    /// An insert's `Prefer`.
    pub prefer: Option<Prefer>,
    /// The format the part is answered in: its own `Accept` (none: the version's
    /// default), JSON minimal metadata when that names nothing served.
    pub format: Format,
    /// Whether its error part is the XML error ([`odata::errors_in_xml`] on its `Accept`).
    pub xml_errors: bool,
}

impl OpReply {
    /// What `op`'s part needs; `atom_allowed`: the version served allows Atom.
    pub fn of(op: &BatchOp<'_>, atom_allowed: bool) -> OpReply {
        let accept = op.header("accept");
        OpReply {
            index: op.index,
            content_id: op.content_id.as_deref().map(str::to_owned),
            insert: matches!(op.endpoint, Endpoint::InsertEntity { .. }),
            prefer: insert_prefer(&op.endpoint, op),
            format: odata::negotiate(accept, None, atom_allowed).unwrap_or(Format::Json(Metadata::Minimal)),
            xml_errors: odata::errors_in_xml(accept, None, atom_allowed),
        }
    }
}

/// Who sent the change set: what its operations are checked against.
#[derive(Debug, Clone, Copy)]
pub struct BatchCaller<'a> {
    /// The account the `$batch` request addresses (without `-secondary`).
    pub account: &'a str,
    /// The request's shared access signature, when it was authorized by one.
    pub sas: Option<&'a SasGrant>,
    /// The version served allows Atom.
    pub atom_allowed: bool,
}

/// The first operation of a change set that could not be read or was refused.
#[derive(Debug, Clone, PartialEq)]
pub struct OpFailure {
    pub reply: OpReply,
    pub error: ApiError,
}

/// Reads every operation of a change set, in order: its account (an operation may name
/// only the request's), its URL's table name, its write ([`read_entity_write`]), then
/// the SAS's permission and table. The SAS's key range is the engine's to check, on the
/// keys each write ends up with.
pub fn read_change_set(request: BatchRequest<'_>, caller: &BatchCaller<'_>) -> Result<ChangeSet, OpFailure> {
    let table = request.table().unwrap_or_default().to_owned();
    let mut ops = Vec::with_capacity(request.ops.len());
    for op in &request.ops {
        let reply = OpReply::of(op, caller.atom_allowed);
        match read_op(op, caller) {
            Ok(read) => ops.push(ChangeOp { write: read.write, body_format: read.body_format, reply }),
            Err(error) => return Err(OpFailure { reply, error }),
        }
    }
    Ok(ChangeSet { table, ops })
}

fn read_op(op: &BatchOp<'_>, caller: &BatchCaller<'_>) -> Result<WriteRequest, ApiError> {
    if let Some(account) = op.account() {
        if primary_account(account).0 != caller.account {
            let msg = format!("The operation addresses account '{account}', not '{}'.", caller.account);
            return Err(ApiError::with_message(ErrorCode::InvalidInput, msg));
        }
    }
    check_url_table(&op.endpoint)?;
    let read = read_entity_write(&op.endpoint, op, op.body, caller.atom_allowed)?;
    if let Some(grant) = caller.sas {
        grant.authorize(&op.endpoint, op.header("if-match").is_some())?;
    }
    Ok(read)
}

/// The name of the table an operation's URL names, checked before the table is looked
/// up, as a request of its own is checked.
pub fn check_url_table(endpoint: &Endpoint) -> Result<(), ApiError> {
    match endpoint.url_table() {
        Some(table) => Ok(aztable_model::names::validate_url_table_name(table)?),
        None => Ok(()),
    }
}

impl Head for BatchOp<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        BatchOp::header(self, name)
    }
    fn has(&self, name: &str) -> bool {
        BatchOp::header(self, name).is_some()
    }
}
