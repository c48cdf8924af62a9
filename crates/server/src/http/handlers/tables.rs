//! Table handlers: QueryTables, CreateTable, GetTable, DeleteTable.

use super::super::ctx::RequestCtx;
use super::super::error_response::render;
use super::super::request::{header, Req};
use super::super::response::{build, created, no_content};
use super::super::AppState;
use super::{body_format, negotiate};
use axum::response::Response;
use aztable_model::continuation;
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::time::wall_now;
use aztable_wire::odata::{self, Prefer, Urls};
use http::StatusCode;

fn urls(ctx: &RequestCtx) -> Urls<'_> {
    Urls { base: &ctx.base_url, account: &ctx.account }
}

pub(super) async fn query_tables(
    state: &AppState,
    ctx: &RequestCtx,
    req: &Req,
) -> Result<Response, ApiError> {
    let format = negotiate(req, ctx)?;
    let filter = req.query.parsed_filter()?;
    let top = req.query.page_size()?;
    let from = req.query.next_table_name.as_deref().map(super::entities::decode_token).transpose()?;
    let (names, next) = state.service.query_tables(&ctx.account, from.as_deref(), top, filter).await?;
    let mut headers = vec![("content-type", format.feed_content_type().to_owned())];
    if let Some(next) = next {
        headers.push(("x-ms-continuation-nexttablename", continuation::encode(&next)));
    }
    Ok(build(StatusCode::OK, &headers, format.table_feed(&names, &urls(ctx), wall_now())))
}

pub(super) fn create_table(state: &AppState, ctx: &RequestCtx, req: &Req) -> Result<Response, ApiError> {
    let body = body_format(req, ctx)?;
    let format = negotiate(req, ctx)?;
    let name = odata::read_table_name(body, &req.body)?;
    let prefer = Prefer::parse(header(&req.headers, "prefer"));
    let name = match state.service.create_table(&ctx.account, &name) {
        Ok(name) => name,
        Err(e) => return already_exists(e.into(), prefer, ctx),
    };
    let location = format!("{}/Tables('{}')", ctx.base_url, name);
    let headers = [("location", location.clone().into()), ("dataserviceid", location.into())];
    Ok(created(prefer, headers, format.entry_content_type(), || format.table(&name, &urls(ctx), wall_now())))
}

/// A refused Create Table. The service's 409 `TableAlreadyExists` still says
/// `Preference-Applied` when `Prefer` was sent (the Java SDK's recording of the real
/// service, `AzureTableImplTest.createTableDuplicateNameImpl`); other errors do not.
fn already_exists(e: ApiError, prefer: Option<Prefer>, ctx: &RequestCtx) -> Result<Response, ApiError> {
    let Some(prefer) = prefer.filter(|_| e.code == ErrorCode::TableAlreadyExists) else { return Err(e) };
    let mut resp = render(&e, ctx);
    resp.headers_mut().insert("preference-applied", http::HeaderValue::from_static(prefer.applied()));
    Ok(resp)
}

pub(super) fn get_table(
    state: &AppState,
    ctx: &RequestCtx,
    req: &Req,
    table: &str,
) -> Result<Response, ApiError> {
    let format = negotiate(req, ctx)?;
    let name = state.service.get_table(&ctx.account, table)?;
    let headers = [("content-type", format.entry_content_type().to_owned())];
    Ok(build(StatusCode::OK, &headers, format.table(&name, &urls(ctx), wall_now())))
}

pub(super) fn delete_table(state: &AppState, ctx: &RequestCtx, table: &str) -> Result<Response, ApiError> {
    state.service.delete_table(&ctx.account, table)?;
    Ok(no_content(&[]))
}
