//! Handlers: one function per operation; each parses the request, makes one service
//! call and renders the result. No storage access and no business rules here.

mod access;
mod batch;
mod entities;
mod preflight;
mod tables;

use super::ctx::RequestCtx;
use super::request::{header, Req};
use super::AppState;
use crate::endpoint::Endpoint;
use crate::error::{ApiError, ErrorCode};
use crate::odata::{self, Metadata};
use crate::service::NewEntity;
use axum::response::Response;

/// Calls the handler of `endpoint`.
pub async fn handle(
    state: &AppState,
    ctx: &RequestCtx,
    endpoint: Endpoint,
    req: &Req,
) -> Result<Response, ApiError> {
    use Endpoint::*;
    match endpoint {
        QueryTables => tables::query_tables(state, ctx, req).await,
        CreateTable => tables::create_table(state, ctx, req),
        GetTable { table } => tables::get_table(state, ctx, req, &table),
        DeleteTable { table } => tables::delete_table(state, ctx, &table),
        QueryEntities { table } => entities::query_entities(state, ctx, req, &table).await,
        GetEntity { table, pk, rk } => entities::get_entity(state, ctx, req, &table, &pk, &rk),
        InsertEntity { table } => entities::insert_entity(state, ctx, req, &table).await,
        UpdateEntity { table, pk, rk } => {
            entities::write_entity(state, ctx, req, &table, (pk, rk), entities::WriteMode::Replace).await
        }
        MergeEntity { table, pk, rk } => {
            entities::write_entity(state, ctx, req, &table, (pk, rk), entities::WriteMode::Merge).await
        }
        DeleteEntity { table, pk, rk } => entities::delete_entity(state, ctx, req, &table, &pk, &rk).await,
        Preflight => preflight::preflight(state, ctx, req),
        Batch => batch::batch(state, ctx, req).await,
        GetTableAcl { table } => access::get_table_acl(state, ctx, &table),
        SetTableAcl { table } => access::set_table_acl(state, ctx, req, &table),
        GetServiceProperties => access::get_service_properties(state, ctx),
        SetServiceProperties => access::set_service_properties(state, ctx, req),
        GetServiceStats => access::get_service_stats(state),
    }
}

/// The response format the client asked for (`$format` wins over `Accept`).
fn negotiate(req: &Req) -> Result<Metadata, ApiError> {
    odata::negotiate(header(&req.headers, "accept"), req.query.format.as_deref())
}

/// Refuses a JSON request body declared as anything but JSON ([`odata::check_body_type`]).
fn check_request_content_type(req: &Req) -> Result<(), ApiError> {
    odata::check_body_type(header(&req.headers, "content-type"))
}

/// The entity of an insert: the body's entity, which must carry both keys.
fn entity_to_insert(body: &[u8]) -> Result<NewEntity, ApiError> {
    let parsed = odata::parse_entity(body)?;
    let (Some(pk), Some(rk)) = (parsed.partition_key, parsed.row_key) else {
        return Err(ApiError::with_message(
            ErrorCode::PropertiesNeedValue,
            "The PartitionKey and RowKey properties are required to insert an entity.",
        ));
    };
    Ok(NewEntity { partition_key: pk, row_key: rk, properties: parsed.properties })
}

/// The entity of an update or merge: the body's properties at the URL's keys (keys in
/// the body are ignored: the URL's win).
fn entity_at(body: &[u8], pk: String, rk: String) -> Result<NewEntity, ApiError> {
    let parsed = odata::parse_entity(body)?;
    Ok(NewEntity { partition_key: pk, row_key: rk, properties: parsed.properties })
}
