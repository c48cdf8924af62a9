//! The `$batch` handler: wire parses the body and reads the change set
//! ([`batch::read_change_set`]: each operation with the front end of a request of its
//! own, authorized under the request's SAS), the service runs it in one call, and the
//! answer is the 202 of the parts `batch` builds and writes.

use super::super::ctx::RequestCtx;
use super::super::message::Response;
use super::super::request::{header, Req};
use super::super::response::build;
use super::super::AppState;
use aztable_engine::service::{BatchOutcome, ServiceError};
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::time::wall_now;
use aztable_wire::batch::{
    self, BatchCaller, BatchError, BatchKind, BatchOp, BatchRequest, ErrorPlacement, ErrorStamp, Limits,
    OpReply, OpResult,
};
use aztable_wire::endpoint::Endpoint;
use aztable_wire::odata::{self, Urls};
use http::StatusCode;

/// Stamps error parts with the request id and the current time, in XML when `xml`.
fn with_stamp<R>(ctx: &RequestCtx, xml: bool, f: impl FnOnce(&ErrorStamp<'_>) -> R) -> R {
    let time = aztable_model::time::wall_now().to_rfc3339_7();
    f(&ErrorStamp { request_id: &ctx.request_id, time: &time, xml })
}

/// Whether a query's error part is XML ([`odata::errors_in_xml`] on its headers).
fn op_xml_errors(ctx: &RequestCtx, op: &BatchOp<'_>) -> bool {
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
        BatchKind::ChangeSet => change_set(state, ctx, parsed).await,
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
fn query_batch(state: &AppState, ctx: &RequestCtx, op: &BatchOp<'_>) -> Result<Response, ApiError> {
    let result = match run_query(state, ctx, op) {
        Ok(r) => r,
        // over a throttling target: the whole request is refused, not the operation
        Err(e) if e.code == ErrorCode::ServerBusy => return Err(e),
        Err(e) => with_stamp(ctx, op_xml_errors(ctx, op), |s| batch::op_error_part(s, 0, &e)),
    };
    let (ct, body) = batch::write_query(&result);
    Ok(accepted(ct, body))
}

fn run_query(state: &AppState, ctx: &RequestCtx, op: &BatchOp<'_>) -> Result<OpResult, ApiError> {
    let Endpoint::GetEntity { table, pk, rk } = &op.endpoint else {
        return Err(ApiError::with_message(
            ErrorCode::InvalidInput,
            "Only a point query (GET of one entity) may be sent in a batch.",
        ));
    };
    batch::check_url_table(&op.endpoint)?;
    if let Some(grant) = &ctx.sas {
        grant.authorize(&op.endpoint, false)?;
    }
    let format = odata::negotiate(op.header("accept"), None, ctx.atom_allowed())?;
    let e = state.service.entities().get_entity(ctx.caller(), table, pk, rk)?;
    Ok(batch::entity_part(&e, table, format, &urls(ctx), wall_now()))
}

fn urls(ctx: &RequestCtx) -> Urls<'_> {
    Urls { base: &ctx.base_url, account: &ctx.account }
}

/// Runs a change set: wire reads it, the service runs it, the parts answer 202 (with
/// the failing operation's part if one failed), or the whole request is refused when it
/// is over a throttling target.
async fn change_set(
    state: &AppState,
    ctx: &RequestCtx,
    parsed: BatchRequest<'_>,
) -> Result<Response, ApiError> {
    let fail = |op: &OpReply, err: &ApiError| {
        let part = with_stamp(ctx, op.xml_errors, |s| batch::changeset_error_part(s, op, err));
        let (ct, body) = batch::write_failure(op.content_id.as_deref(), &part);
        accepted(ct, body)
    };
    let caller =
        BatchCaller { account: &ctx.account, sas: ctx.sas.as_ref(), atom_allowed: ctx.atom_allowed() };
    let change_set = match batch::read_change_set(parsed, &caller) {
        Ok(c) => c,
        Err(f) => return Ok(fail(&f.reply, &f.error)),
    };
    let table = change_set.table.as_str();
    let (replies, writes): (Vec<OpReply>, Vec<_>) =
        change_set.ops.into_iter().map(|op| (op.reply, op.write)).unzip();
    let outcomes = match state.service.entities().execute_batch(ctx.caller(), table, writes).await {
        Ok(o) => o,
        Err(f) if matches!(f.error, ServiceError::Throttled(_)) => return Err(f.error.into()),
        Err(f) => return Ok(fail(&replies[f.index], &ApiError::from(f.error))),
    };
    let now = wall_now();
    let results: Vec<(Option<String>, OpResult)> = replies
        .into_iter()
        .zip(outcomes)
        .map(|(op, outcome)| {
            let written = match &outcome {
                BatchOutcome::Written(e) => Some(e),
                BatchOutcome::Deleted => None,
            };
            let part = batch::written_part(&op, table, written, &urls(ctx), now);
            (op.content_id, part)
        })
        .collect();
    let (ct, body) = batch::write_success(&results);
    Ok(accepted(ct, body))
}
