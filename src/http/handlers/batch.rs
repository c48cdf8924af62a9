//! The `$batch` handler: parse the multipart body, turn each operation into a
//! [`BatchAction`], run the change set atomically, and write the 202 multipart answer
//! (one part per operation, or the single failing part).

use super::super::ctx::{header, RequestCtx};
use super::super::dispatch::Req;
use super::super::response::build;
use super::super::AppState;
use super::entities::parse_condition;
use crate::auth::SasGrant;
use crate::batch::{self, BatchError, BatchKind, BatchOp, ErrorPlacement, Limits, OpResult};
use crate::endpoint::Endpoint;
use crate::error::{ApiError, ErrorCode};
use crate::odata::{self, Metadata, Urls};
use crate::service::{BatchAction, BatchOutcome, NewEntity};
use axum::response::Response;
use http::StatusCode;

/// Headers every operation part carries.
fn part_headers() -> Vec<(String, String)> {
    vec![
        ("X-Content-Type-Options".into(), "nosniff".into()),
        ("Cache-Control".into(), "no-cache".into()),
        ("DataServiceVersion".into(), "3.0;".into()),
    ]
}

/// The part for a failed operation: the OData error with `"<index>:"` before the message.
fn error_part(ctx: &RequestCtx, index: usize, err: &ApiError) -> OpResult {
    let time = crate::model::time::wall_now().to_rfc3339_7();
    let msg = batch::prefixed_message(index, &err.message);
    let mut headers = part_headers();
    headers.push(("Content-Type".into(), Metadata::Minimal.content_type().into()));
    OpResult {
        status: err.status(),
        headers,
        body: odata::error_body(err.code.as_str(), &msg, &ctx.request_id, &time),
    }
}

fn accepted(content_type: String, body: Vec<u8>) -> Response {
    build(StatusCode::ACCEPTED, &[("content-type", content_type)], body)
}

pub async fn batch(state: &AppState, ctx: &RequestCtx, req: &Req) -> Result<Response, ApiError> {
    let content_type = header(&req.headers, "content-type").unwrap_or("");
    let parsed = match batch::parse(content_type, &req.body, &Limits::default()) {
        Ok(p) => p,
        Err(e) => return batch_error(ctx, e),
    };
    match parsed.kind {
        BatchKind::Query => query_batch(state, ctx, &parsed.ops[0]),
        BatchKind::ChangeSet => Ok(change_set(state, ctx, &parsed.ops).await),
    }
}

/// Renders a parse failure where the service puts it.
fn batch_error(ctx: &RequestCtx, e: BatchError) -> Result<Response, ApiError> {
    let err = ApiError::with_message(e.code(), e.message());
    let part = |err: &ApiError| {
        let mut headers = part_headers();
        headers.push(("Content-Type".into(), Metadata::Minimal.content_type().into()));
        let time = crate::model::time::wall_now().to_rfc3339_7();
        OpResult {
            status: e.status(),
            headers,
            body: odata::error_body(err.code.as_str(), &err.message, &ctx.request_id, &time),
        }
    };
    match e.placement() {
        ErrorPlacement::Response => Err(ApiError::from(e)),
        ErrorPlacement::ChangeSetPart => {
            let (ct, body) = batch::write_failure(e.content_id(), &part(&err));
            Ok(accepted(ct, body))
        }
        ErrorPlacement::BatchPart => {
            let (ct, body) = batch::write_query(&part(&err));
            Ok(accepted(ct, body))
        }
    }
}

/// A query batch: the single point query, answered in one `application/http` part.
fn query_batch(state: &AppState, ctx: &RequestCtx, op: &BatchOp) -> Result<Response, ApiError> {
    let result = match run_query(state, ctx, op) {
        Ok(r) => r,
        Err(e) => error_part(ctx, 0, &e),
    };
    let (ct, body) = batch::write_query(&result);
    Ok(accepted(ct, body))
}

fn run_query(state: &AppState, ctx: &RequestCtx, op: &BatchOp) -> Result<OpResult, ApiError> {
    let endpoint = op.endpoint()?;
    let Endpoint::GetEntity { table, pk, rk } = &endpoint else {
        return Err(ApiError::with_message(
            ErrorCode::InvalidInput,
            "Only a point query (GET of one entity) may be sent in a batch.",
        ));
    };
    if let Some(grant) = &ctx.sas {
        grant.authorize(&endpoint, false)?;
    }
    let md = odata::negotiate(op.header("accept"), None)?;
    let e = state.service.get_entity(&ctx.account, table, pk, rk)?;
    let mut headers = part_headers();
    headers.push(("Content-Type".into(), md.content_type().into()));
    headers.push(("ETag".into(), e.etag()));
    let urls = Urls { base: &ctx.base_url, account: &ctx.account };
    Ok(OpResult { status: 200, headers, body: odata::entity_response(&e, table, md, None, &urls) })
}

/// Converts one change-set operation into an action on `table`.
fn to_action(op: &BatchOp) -> Result<(String, BatchAction), ApiError> {
    let cond =
        |required| parse_condition(op.header("if-match"), op.header("if-none-match").is_some(), required);
    let body_entity = |pk: String, rk: String| -> Result<NewEntity, ApiError> {
        let parsed = odata::parse_entity(&op.body)?;
        Ok(NewEntity { partition_key: pk, row_key: rk, properties: parsed.properties })
    };
    Ok(match op.endpoint()? {
        Endpoint::InsertEntity { table } => {
            let parsed = odata::parse_entity(&op.body)?;
            let (Some(pk), Some(rk)) = (parsed.partition_key, parsed.row_key) else {
                return Err(ApiError::with_message(
                    ErrorCode::PropertiesNeedValue,
                    "The PartitionKey and RowKey properties are required to insert an entity.",
                ));
            };
            let new = NewEntity { partition_key: pk, row_key: rk, properties: parsed.properties };
            (table, BatchAction::Insert(new))
        }
        Endpoint::UpdateEntity { table, pk, rk } => {
            let c = cond(false)?;
            (table, BatchAction::Update(body_entity(pk, rk)?, c))
        }
        Endpoint::MergeEntity { table, pk, rk } => {
            let c = cond(false)?;
            (table, BatchAction::Merge(body_entity(pk, rk)?, c))
        }
        Endpoint::DeleteEntity { table, pk, rk } => {
            (table, BatchAction::Delete { partition_key: pk, row_key: rk, cond: cond(true)? })
        }
        other => {
            return Err(ApiError::with_message(
                ErrorCode::InvalidInput,
                format!("{} is not allowed in a change set.", other.name()),
            ))
        }
    })
}

/// Authorizes one change-set operation under the request's SAS: its permission, table
/// and (for keys in the URL) key range; for an insert, the body's keys against the range.
/// A refusal fails the change set at this operation, before anything is written.
fn authorize_op(grant: &SasGrant, op: &BatchOp, action: &BatchAction) -> Result<(), ApiError> {
    grant.authorize(&op.endpoint()?, op.header("if-match").is_some())?;
    if let BatchAction::Insert(new) = action {
        grant.check_keys(&new.partition_key, &new.row_key)?;
    }
    Ok(())
}

/// Runs a change set; always answers 202 (with the failing part if one failed).
async fn change_set(state: &AppState, ctx: &RequestCtx, ops: &[BatchOp]) -> Response {
    let fail = |index: usize, err: &ApiError| {
        let (ct, body) = batch::write_failure(ops[index].content_id.as_deref(), &error_part(ctx, index, err));
        accepted(ct, body)
    };
    let mut table = String::new();
    let mut actions = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        if let Some(account) = op.account() {
            if account != ctx.account && account.strip_suffix("-secondary") != Some(ctx.account.as_str()) {
                let msg = format!("The operation addresses account '{account}', not '{}'.", ctx.account);
                return fail(i, &ApiError::with_message(ErrorCode::InvalidInput, msg));
            }
        }
        let checked = to_action(op).and_then(|(t, action)| match &ctx.sas {
            Some(grant) => authorize_op(grant, op, &action).map(|()| (t, action)),
            None => Ok((t, action)),
        });
        match checked {
            Ok((t, action)) => {
                table = t;
                actions.push(action);
            }
            Err(e) => return fail(i, &e),
        }
    }
    let outcomes = match state.service.execute_batch(&ctx.account, &table, actions).await {
        Ok(o) => o,
        Err(f) => return fail(f.index, &ApiError::from(f.error)),
    };
    let results: Vec<(Option<String>, OpResult)> = ops
        .iter()
        .zip(outcomes)
        .map(|(op, outcome)| (op.content_id.clone(), success_part(ctx, op, &table, outcome)))
        .collect();
    let (ct, body) = batch::write_success(&results);
    accepted(ct, body)
}

/// The part for a successful operation: 201/204 with ETag (and Location for inserts).
fn success_part(ctx: &RequestCtx, op: &BatchOp, table: &str, outcome: BatchOutcome) -> OpResult {
    let mut headers = part_headers();
    let BatchOutcome::Written(e) = outcome else {
        return OpResult { status: 204, headers, body: Vec::new() };
    };
    if op.method != "POST" {
        headers.push(("ETag".into(), e.etag()));
        return OpResult { status: 204, headers, body: Vec::new() };
    }
    let location = format!("{}/{}", ctx.base_url, odata::entity_path(table, &e.partition_key, &e.row_key));
    headers.push(("Location".into(), location.clone()));
    headers.push(("DataServiceId".into(), location));
    headers.push(("ETag".into(), e.etag()));
    let prefer = op.header("prefer").unwrap_or("");
    if prefer.contains("return-no-content") {
        headers.push(("Preference-Applied".into(), "return-no-content".into()));
        return OpResult { status: 204, headers, body: Vec::new() };
    }
    if prefer.contains("return-content") {
        headers.push(("Preference-Applied".into(), "return-content".into()));
    }
    let md = odata::negotiate(op.header("accept"), None).unwrap_or(Metadata::Minimal);
    headers.push(("Content-Type".into(), md.content_type().into()));
    let urls = Urls { base: &ctx.base_url, account: &ctx.account };
    OpResult { status: 201, headers, body: odata::entity_response(&e, table, md, None, &urls) }
}
