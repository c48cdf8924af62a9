//! Handlers: one function per operation; each parses the request, makes one service
//! call and renders the result. No storage access and no business rules here.

mod access;
mod batch;
mod entities;
mod preflight;
mod tables;

use super::ctx::RequestCtx;
use super::message::Response;
use super::request::{header, Req};
use super::AppState;
use aztable_model::error::ApiError;
use aztable_wire::endpoint::Endpoint;
use aztable_wire::entity_write::Head;
use aztable_wire::odata::{self, Format};
use std::future::Future;
use std::pin::Pin;

/// What a handler gives: its answer at once (the handlers that never wait, a point read
/// among them), or the future of one that waits on the service (queries, writes,
/// batches), boxed. The request's future then holds a pointer instead of the largest
/// handler's state: a point read's future was over 4 KB, copied as a whole at every
/// step that moved it.
pub(super) enum Handled<'a> {
    Now(Result<Response, ApiError>),
    Waits(Pin<Box<dyn Future<Output = Result<Response, ApiError>> + Send + 'a>>),
}

/// Calls the handler of `endpoint`.
pub(super) fn handle<'a>(
    state: &'a AppState,
    ctx: &'a RequestCtx,
    endpoint: Endpoint,
    req: &'a Req,
) -> Handled<'a> {
    use Endpoint::*;
    let now = match endpoint {
        QueryTables => return Handled::Waits(Box::pin(tables::query_tables(state, ctx, req))),
        CreateTable => tables::create_table(state, ctx, req),
        GetTable { table } => tables::get_table(state, ctx, req, &table),
        DeleteTable { table } => tables::delete_table(state, ctx, &table),
        QueryEntities { table } => {
            return Handled::Waits(Box::pin(async move {
                entities::query_entities(state, ctx, req, &table).await
            }))
        }
        GetEntity { table, pk, rk } => entities::get_entity(state, ctx, req, &table, &pk, &rk),
        write @ (InsertEntity { .. } | UpdateEntity { .. } | MergeEntity { .. } | DeleteEntity { .. }) => {
            return Handled::Waits(Box::pin(
                async move { entities::write_entity(state, ctx, req, &write).await },
            ))
        }
        Preflight => preflight::preflight(state, ctx, req),
        Batch => return Handled::Waits(Box::pin(batch::batch(state, ctx, req))),
        GetTableAcl { table } => access::get_table_acl(state, ctx, &table),
        SetTableAcl { table } => access::set_table_acl(state, ctx, req, &table),
        GetServiceProperties => access::get_service_properties(state, ctx),
        SetServiceProperties => access::set_service_properties(state, ctx, req),
        GetServiceStats => access::get_service_stats(state),
        UnderTable { table, resource } => tables::under_table(state, ctx, &table, resource),
    };
    Handled::Now(now)
}

/// The response format the client asked for (`$format` wins over `Accept`): as the head
/// checks negotiated it for this request when they did under the same Atom permission.
fn negotiate(req: &Req, ctx: &RequestCtx) -> Result<Format, ApiError> {
    let atom_allowed = ctx.atom_allowed();
    if let Some((under, format)) = ctx.negotiated {
        if under == atom_allowed {
            return Ok(format);
        }
    }
    odata::negotiate(header(&req.headers, http::header::ACCEPT), req.query.format.as_deref(), atom_allowed)
}

/// How the request body is read ([`odata::body_format`]).
fn body_format(req: &Req, ctx: &RequestCtx) -> Result<Format, ApiError> {
    odata::body_format(header(&req.headers, http::header::CONTENT_TYPE), &req.body, ctx.atom_allowed())
}

/// `DataServiceVersion` of a response: 3.0 for JSON; for Atom what the service's
/// Atom-era clients understand (1.0, and 2.0 for a `$select` projection).
fn data_service_version(format: Format, projected: bool) -> super::response::Text {
    match (format, projected) {
        (Format::Json(_), _) => "3.0;".into(),
        (Format::Atom, false) => "1.0;".into(),
        (Format::Atom, true) => "2.0;".into(),
    }
}

/// A request's own head, as the entity-write front end reads it.
impl Head for Req {
    fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
    fn has(&self, name: &str) -> bool {
        self.headers.contains_key(name)
    }
}
