//! The `$batch` handler: parse the multipart body, read each operation with the same
//! front end as a request of its own ([`entity_write`], authorized under the request's
//! SAS), run the change set through the service in one call, and answer 202 with the
//! parts `batch` builds and writes.

use super::super::ctx::RequestCtx;
use super::super::message::Response;
use super::super::request::{header, Req};
use super::super::response::build;
use super::super::AppState;
use super::entity_write;
use aztable_engine::service::{BatchOutcome, ServiceError};
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::time::wall_now;
use aztable_wire::batch::{
    self, BatchError, BatchKind, BatchOp, BatchRequest, ErrorPlacement, ErrorStamp, Limits, OpResult,
};
use aztable_wire::endpoint::Endpoint;
use aztable_wire::odata::{self, Format, Metadata, Urls};
use http::StatusCode;

/// Stamps error parts with the request id and the current time, in XML when `xml`.
fn with_stamp<R>(ctx: &RequestCtx, xml: bool, f: impl FnOnce(&ErrorStamp<'_>) -> R) -> R {
    let time = aztable_model::time::wall_now().to_rfc3339_7();
    f(&ErrorStamp { request_id: &ctx.request_id, time: &time, xml })
}

/// The format an operation is answered in: its own `Accept` (none: the version's
/// default), JSON minimal metadata when that names nothing served.
fn op_format(ctx: &RequestCtx, op: &BatchOp) -> Format {
    odata::negotiate(op.header("accept"), None, ctx.atom_allowed()).unwrap_or(Format::Json(Metadata::Minimal))
}

/// Whether an operation's error part is XML ([`odata::errors_in_xml`] on its headers).
fn op_xml_errors(ctx: &RequestCtx, op: &BatchOp) -> bool {
    odata::errors_in_xml(op.header("accept"), None, ctx.atom_allowed())
}

fn accepted(content_type: String, body: Vec<u8>) -> Response {
    build(StatusCode::ACCEPTED, &[("content-type", content_type)], body)
}

pub(super) async fn batch(state: &AppState, ctx: &RequestCtx, req: &Req) -> Result<Response, ApiError> {
    let content_type = header(&req.headers, "content-type").unwrap_or("");
    let parsed = match batch::parse(content_type, &req.body, &Limits::default()) {
        Ok(p) => p,
        Err(e) => return batch_error(ctx, e),
    };
    match parsed.kind {
        BatchKind::Query => query_batch(state, ctx, &parsed.ops[0]),
        BatchKind::ChangeSet => change_set(state, ctx, &parsed).await,
    }
}

/// Renders a parse failure where the service puts it.
fn batch_error(ctx: &RequestCtx, e: BatchError) -> Result<Response, ApiError> {
    let (ct, body) = match e.placement() {
        ErrorPlacement::Response => return Err(ApiError::from(e)),
        ErrorPlacement::ChangeSetPart => batch::write_failure(
            e.content_id(),
            &with_stamp(ctx, ctx.xml_errors, |s| batch::parse_error_part(s, &e)),
        ),
        ErrorPlacement::BatchPart => {
            batch::write_query(&with_stamp(ctx, ctx.xml_errors, |s| batch::parse_error_part(s, &e)))
        }
    };
    Ok(accepted(ct, body))
}

/// A query batch: the single point query, answered in one `application/http` part.
fn query_batch(state: &AppState, ctx: &RequestCtx, op: &BatchOp) -> Result<Response, ApiError> {
    let result = match run_query(state, ctx, op) {
        Ok(r) => r,
        // over a throttling target: the whole request is refused, not the operation
        Err(e) if e.code == ErrorCode::ServerBusy => return Err(e),
        Err(e) => with_stamp(ctx, op_xml_errors(ctx, op), |s| batch::op_error_part(s, 0, &e)),
    };
    let (ct, body) = batch::write_query(&result);
    Ok(accepted(ct, body))
}

fn run_query(state: &AppState, ctx: &RequestCtx, op: &BatchOp) -> Result<OpResult, ApiError> {
    let Endpoint::GetEntity { table, pk, rk } = &op.endpoint else {
        return Err(ApiError::with_message(
            ErrorCode::InvalidInput,
            "Only a point query (GET of one entity) may be sent in a batch.",
        ));
    };
    checked_table(op)?;
    if let Some(grant) = &ctx.sas {
        grant.authorize(&op.endpoint, false)?;
    }
    let format = odata::negotiate(op.header("accept"), None, ctx.atom_allowed())?;
    let e = state.service.get_entity(ctx.caller(), table, pk, rk)?;
    Ok(batch::entity_part(&e, table, format, &urls(ctx), wall_now()))
}

/// The name of the table an operation's URL names, checked before the table is looked
/// up, as the service checks it on a request of its own.
fn checked_table(op: &BatchOp) -> Result<(), ApiError> {
    match op.endpoint.url_table() {
        Some(table) => Ok(aztable_model::names::validate_url_table_name(table)?),
        None => Ok(()),
    }
}

fn urls(ctx: &RequestCtx) -> Urls<'_> {
    Urls { base: &ctx.base_url, account: &ctx.account }
}

/// Runs a change set; answers 202 (with the failing part if one failed), or refuses
/// the whole request when it is over a throttling target.
async fn change_set(state: &AppState, ctx: &RequestCtx, parsed: &BatchRequest) -> Result<Response, ApiError> {
    let (ops, table) = (&parsed.ops, parsed.table().unwrap_or_default());
    let fail = |index: usize, err: &ApiError| {
        let xml = op_xml_errors(ctx, &ops[index]);
        let part = with_stamp(ctx, xml, |s| batch::changeset_error_part(s, index, &ops[index], err));
        let (ct, body) = batch::write_failure(ops[index].content_id.as_deref(), &part);
        accepted(ct, body)
    };
    let mut actions = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        if let Some(account) = op.account() {
            if aztable_wire::endpoint::primary_account(account).0 != ctx.account {
                let msg = format!("The operation addresses account '{account}', not '{}'.", ctx.account);
                return Ok(fail(i, &ApiError::with_message(ErrorCode::InvalidInput, msg)));
            }
        }
        // what dispatch checks of a request of its own: the table's name, then the SAS's
        // permission and table; its key range is the service's to check, on the keys
        // each operation ends up with
        let checked = checked_table(op)
            .and_then(|()| entity_write(ctx, &op.endpoint, op, &op.body))
            .and_then(|write| match &ctx.sas {
                Some(grant) => grant.authorize(&op.endpoint, op.header("if-match").is_some()).map(|()| write),
                None => Ok(write),
            });
        match checked {
            Ok(write) => actions.push(write.action),
            Err(e) => return Ok(fail(i, &e)),
        }
    }
    let outcomes = match state.service.execute_batch(ctx.caller(), table, actions).await {
        Ok(o) => o,
        Err(f) if matches!(f.error, ServiceError::Throttled(_)) => return Err(f.error.into()),
        Err(f) => return Ok(fail(f.index, &ApiError::from(f.error))),
    };
    let now = wall_now();
    let results: Vec<(Option<String>, OpResult)> = ops
        .iter()
        .zip(outcomes)
        .map(|(op, outcome)| {
            let written = match &outcome {
                BatchOutcome::Written(e) => Some(e),
                BatchOutcome::Deleted => None,
            };
            let format = op_format(ctx, op);
            (op.content_id.clone(), batch::written_part(op, table, written, &urls(ctx), format, now))
        })
        .collect();
    let (ct, body) = batch::write_success(&results);
    Ok(accepted(ct, body))
}
