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

/// Calls the handler of `endpoint`.
pub(super) async fn handle(
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
        write @ (InsertEntity { .. } | UpdateEntity { .. } | MergeEntity { .. } | DeleteEntity { .. }) => {
            entities::write_entity(state, ctx, req, &write).await
        }
        Preflight => preflight::preflight(state, ctx, req),
        Batch => batch::batch(state, ctx, req).await,
        GetTableAcl { table } => access::get_table_acl(state, ctx, &table),
        SetTableAcl { table } => access::set_table_acl(state, ctx, req, &table),
        GetServiceProperties => access::get_service_properties(state, ctx),
        SetServiceProperties => access::set_service_properties(state, ctx, req),
        GetServiceStats => access::get_service_stats(state),
        UnderTable { table, resource } => tables::under_table(state, ctx, &table, resource),
    }
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
