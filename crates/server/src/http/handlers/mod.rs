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
use aztable_engine::service::{BatchAction, Condition, NewEntity};
use aztable_model::error::{ApiError, ErrorCode};
use aztable_wire::batch::BatchOp;
use aztable_wire::endpoint::Endpoint;
use aztable_wire::odata::{self, Format, KeyAnnotations, Metadata};

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

/// The response format the client asked for (`$format` wins over `Accept`).
fn negotiate(req: &Req, ctx: &RequestCtx) -> Result<Format, ApiError> {
    odata::negotiate(header(&req.headers, "accept"), req.query.format.as_deref(), ctx.atom_allowed())
}

/// How the request body is read ([`odata::body_format`]).
fn body_format(req: &Req, ctx: &RequestCtx) -> Result<Format, ApiError> {
    odata::body_format(header(&req.headers, "content-type"), &req.body, ctx.atom_allowed())
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

/// The entity of an insert: the body's entity, which must carry both keys.
fn entity_to_insert(format: Format, body: &[u8]) -> Result<NewEntity, ApiError> {
    let parsed = odata::read_entity(format, body, KeyAnnotations::Refused)?;
    let (Some(pk), Some(rk)) = (parsed.partition_key, parsed.row_key) else {
        return Err(ApiError::with_message(
            ErrorCode::PropertiesNeedValue,
            "The PartitionKey and RowKey properties are required to insert an entity.",
        ));
    };
    Ok(NewEntity { partition_key: pk, row_key: rk, properties: parsed.properties })
}

/// The entity of an update or merge: the body's properties at the URL's keys (keys in
/// the body are ignored, their type annotations too: the URL's win).
fn entity_at(format: Format, body: &[u8], pk: String, rk: String) -> Result<NewEntity, ApiError> {
    let parsed = odata::read_entity(format, body, KeyAnnotations::Ignored)?;
    Ok(NewEntity { partition_key: pk, row_key: rk, properties: parsed.properties })
}

/// The head an entity write reads: a request's own, or a batch operation's.
pub(super) trait Head {
    /// The first value of a header (UTF-8 only).
    fn header(&self, name: &str) -> Option<&str>;
    /// Whether the header is present at all.
    fn has(&self, name: &str) -> bool;
}

impl Head for Req {
    fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
    fn has(&self, name: &str) -> bool {
        self.headers.contains_key(name)
    }
}

impl Head for BatchOp {
    fn header(&self, name: &str) -> Option<&str> {
        BatchOp::header(self, name)
    }
    fn has(&self, name: &str) -> bool {
        BatchOp::header(self, name).is_some()
    }
}

/// An entity write as the engine takes it: the action (entity, keys, condition) and the
/// format its body was read in.
pub(super) struct EntityWrite {
    pub(super) action: BatchAction,
    pub(super) body_format: Format,
}

/// Reads an entity write from its endpoint, head (`Content-Type`, `If-Match`,
/// `If-None-Match`) and body: the one front end of Insert, Update, Merge and Delete
/// Entity, for a request of its own and for each operation of a change set alike.
/// Anything else is 400 `InvalidInput` (a change set's operations are entity writes).
pub(super) fn entity_write(
    ctx: &RequestCtx,
    endpoint: &Endpoint,
    head: &impl Head,
    body: &[u8],
) -> Result<EntityWrite, ApiError> {
    let cond = |required| parse_condition(head.header("if-match"), head.has("if-none-match"), required);
    let body_format = match endpoint {
        Endpoint::DeleteEntity { .. } => Format::Json(Metadata::Minimal),
        _ => odata::body_format(head.header("content-type"), body, ctx.atom_allowed())?,
    };
    let at = |pk: &str, rk: &str| entity_at(body_format, body, pk.to_owned(), rk.to_owned());
    let action = match endpoint {
        Endpoint::InsertEntity { .. } => BatchAction::Insert(entity_to_insert(body_format, body)?),
        Endpoint::UpdateEntity { pk, rk, .. } => {
            let c = cond(false)?;
            BatchAction::Update(at(pk, rk)?, c)
        }
        Endpoint::MergeEntity { pk, rk, .. } => {
            let c = cond(false)?;
            BatchAction::Merge(at(pk, rk)?, c)
        }
        Endpoint::DeleteEntity { pk, rk, .. } => {
            BatchAction::Delete { partition_key: pk.clone(), row_key: rk.clone(), cond: cond(true)? }
        }
        other => {
            return Err(ApiError::with_message(
                ErrorCode::InvalidInput,
                format!("{} is not allowed in a change set.", other.name()),
            ))
        }
    };
    Ok(EntityWrite { action, body_format })
}

/// Turns an `If-Match` value into a [`Condition`]; `required` for deletes.
fn parse_condition(
    if_match: Option<&str>,
    has_if_none_match: bool,
    required: bool,
) -> Result<Condition, ApiError> {
    if has_if_none_match {
        return Err(ApiError::with_message(
            ErrorCode::InvalidInput,
            "If-None-Match is not supported for this operation.",
        ));
    }
    match if_match.map(str::trim) {
        None if required => Err(ApiError::with_message(
            ErrorCode::MissingRequiredHeader,
            "An HTTP header that's mandatory for this request is not specified. Header: If-Match",
        )),
        None => Ok(Condition::Upsert),
        Some("*") => Ok(Condition::Exists),
        // a weak ETag, its `W/` in either case (the service's ETags are all weak)
        Some(tag)
            if tag.get(..3).is_some_and(|w| w.eq_ignore_ascii_case("W/\""))
                && tag.ends_with('"')
                && tag.len() > 4 =>
        {
            Ok(Condition::Etag(format!("W/{}", &tag[2..])))
        }
        Some(tag) => Err(ApiError::with_message(
            ErrorCode::InvalidInput,
            format!("The etag value '{tag}' specified in one of the request headers is not valid."),
        )),
    }
}
