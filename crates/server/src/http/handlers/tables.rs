//! Table handlers: QueryTables, CreateTable, GetTable, DeleteTable, and the answers to
//! account-level requests addressed under a table ([`UnderTable`]).

use super::super::ctx::RequestCtx;
use super::super::error_response::render;
use super::super::message::Response;
use super::super::request::{header, Req};
use super::super::response::{build, created, no_content, DATASERVICEID};
use super::super::AppState;
use super::{body_format, negotiate};
use aztable_engine::service::ServiceError;
use aztable_model::continuation;
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::time::wall_now;
use aztable_wire::endpoint::UnderTable;
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
    let (names, next) =
        state.service.tables().query_tables(&ctx.account, from.as_deref(), top, filter).await?;
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
    let name = match state.service.tables().create_table(&ctx.account, &name) {
        Ok(name) => name,
        Err(e) => return already_exists(e.into(), prefer, ctx),
    };
    let location = format!("{}/Tables('{}')", ctx.base_url, name);
    let headers =
        [(http::header::LOCATION, location.clone().into()), (DATASERVICEID.clone(), location.into())];
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
    let name = state.service.tables().get_table(&ctx.account, table)?;
    let headers = [("content-type", format.entry_content_type().to_owned())];
    Ok(build(StatusCode::OK, &headers, format.table(&name, &urls(ctx), wall_now())))
}

pub(super) fn delete_table(state: &AppState, ctx: &RequestCtx, table: &str) -> Result<Response, ApiError> {
    state.service.tables().delete_table(&ctx.account, table)?;
    Ok(no_content(&[]))
}

/// An account-level request addressed under `table` (a client given a table's URL as
/// its account URL): the errors the service answers, as recorded
/// (`docs/compatibility.md`). Those that read the path's first segment as a table look it
/// up first: 404 `TableNotFound` when it does not exist.
pub(super) fn under_table(
    state: &AppState,
    ctx: &RequestCtx,
    table: &str,
    resource: UnderTable,
) -> Result<Response, ApiError> {
    let found = || match state.service.tables().get_table(&ctx.account, table) {
        Ok(_) => Ok(()),
        Err(ServiceError::ResourceNotFound) => Err(ApiError::new(ErrorCode::TableNotFound)),
        Err(e) => Err(ApiError::from(e)),
    };
    Err(match resource {
        UnderTable::CreateTable => {
            // the body, `{"TableName":…}`, read as an entity without keys
            found()?;
            ApiError::with_message(
                ErrorCode::PropertiesNeedValue,
                "The values are not specified for all properties in the entity.",
            )
        }
        UnderTable::DeleteTable => {
            found()?;
            ApiError::with_message(
                ErrorCode::InvalidInput,
                format!(
                    "The number of keys specified in the URI does not match number of key properties for the resource '{}.{table}'.",
                    ctx.account
                ),
            )
        }
        UnderTable::QueryTables => ApiError::new(ErrorCode::NotImplemented),
        UnderTable::Batch => ApiError::with_message(
            ErrorCode::MediaTypeNotSupported,
            "None of the provided media types are supported",
        ),
        UnderTable::ServiceProperties => ApiError::new(ErrorCode::InvalidQueryParameterValue),
    })
}
