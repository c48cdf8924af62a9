//! Entity handlers: QueryEntities, GetEntity (point query), InsertEntity,
//! UpdateEntity / InsertOrReplaceEntity, MergeEntity / InsertOrMergeEntity,
//! DeleteEntity.

use super::super::ctx::RequestCtx;
use super::super::message::Response;
use super::super::request::{header, Req};
use super::super::response::{build, created, no_content, respond, DATASERVICEID, DATASERVICEVERSION};
use super::super::AppState;
use super::{data_service_version, negotiate};
use aztable_engine::service::QueryEntities;
use aztable_insight::QueryKind;
use aztable_model::continuation;
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::time::wall_now;
use aztable_model::{Entity, EntityWrite};
use aztable_wire::endpoint::Endpoint;
use aztable_wire::entity_write::{read_entity_write, WriteRequest};
use aztable_wire::odata::{self, Format, Urls};
use bytes::Bytes;
use http::StatusCode;

/// The request header that marks a full table scan as expected: with `1`, the scan
/// does not count for the partition advisor's gate (`--insightFailOn`).
pub(crate) const EXPECT_SCAN_HEADER: &str = "x-aztable-expect-scan";

fn urls(ctx: &RequestCtx) -> Urls<'_> {
    Urls { base: &ctx.base_url, account: &ctx.account }
}

/// Decodes a continuation token; a token this server did not issue is a 400.
pub(super) fn decode_token(token: &str) -> Result<String, ApiError> {
    continuation::decode(token).ok_or_else(|| {
        ApiError::with_message(
            ErrorCode::InvalidInput,
            format!("The continuation token '{token}' is not valid: pass back the value of the x-ms-continuation header unchanged."),
        )
    })
}

pub(super) async fn query_entities(
    state: &AppState,
    ctx: &RequestCtx,
    req: &Req,
    table: &str,
) -> Result<Response, ApiError> {
    let format = negotiate(req, ctx)?;
    let filter = req.query.parsed_filter()?;
    let top = req.query.page_size()?;
    let start = match &req.query.next_partition_key {
        Some(pk) => {
            let rk = req.query.next_row_key.as_deref().map(decode_token).transpose()?;
            Some((decode_token(pk)?, rk.unwrap_or_default()))
        }
        None => None,
    };
    let q = QueryEntities { start, top, filter };
    // (`--shortPages` cuts the page before the advisor and the throttle count it)
    let cutter = state.options.short_pages.as_deref();
    let cut = |entities: &[Entity]| cutter?.cut(entities.iter().map(|e| e.partition_key.as_str()));
    let page = state.service.entities().query_entities_cut(ctx.caller(), table, &q, &cut).await?;
    // a full table scan counts for the gate unless the client marked it as expected
    if let Some(advisor) = state.service.insight().filter(|_| page.kind == QueryKind::FullScan) {
        if header(&req.headers, EXPECT_SCAN_HEADER).is_none_or(|v| v.trim() != "1") {
            advisor.gate_scan(
                &ctx.account,
                table,
                &q.filter.as_ref().map(ToString::to_string).unwrap_or_default(),
            );
        }
    }
    let select = req.query.select_list();
    let mut headers = vec![("content-type", format.feed_content_type().to_owned())];
    if format == Format::Atom {
        headers.push(("dataserviceversion", data_service_version(format, select.is_some()).into_owned()));
    }
    if let Some((pk, rk)) = &page.next {
        headers.push(("x-ms-continuation-nextpartitionkey", continuation::encode(pk)));
        headers.push(("x-ms-continuation-nextrowkey", continuation::encode(rk)));
    }
    let body = format.entity_feed(&page.entities, table, select.as_deref(), &urls(ctx), wall_now());
    Ok(build(StatusCode::OK, &headers, body))
}

pub(super) fn get_entity(
    state: &AppState,
    ctx: &RequestCtx,
    req: &Req,
    table: &str,
    pk: &str,
    rk: &str,
) -> Result<Response, ApiError> {
    let format = negotiate(req, ctx)?;
    let select = req.query.select_list();
    // the whole entity in JSON: answered from a rendering kept in the entity cache when
    // one was made in the same form (no decode, no render, the body sent as it is)
    if let (None, Some(tag)) = (&select, format.entity_tag(table, &urls(ctx))) {
        let r = state.service.entities().get_entity_rendered(ctx.caller(), table, pk, rk, &tag, |e| {
            (e.timestamp.etag(), format.entity(e, table, None, &urls(ctx), wall_now()))
        })?;
        let headers = [
            (http::header::ETAG, r.etag().to_owned().into()),
            (DATASERVICEVERSION.clone(), data_service_version(format, false)),
            (http::header::CONTENT_TYPE, format.entry_content_type().into()),
        ];
        return Ok(respond(StatusCode::OK, headers, Bytes::from_owner(r)));
    }
    let (etag, body) = state.service.entities().get_entity_with(ctx.caller(), table, pk, rk, |e| {
        (e.timestamp.etag(), format.entity(e, table, select.as_deref(), &urls(ctx), wall_now()))
    })?;
    let headers = [
        (http::header::ETAG, etag.into()),
        (DATASERVICEVERSION.clone(), data_service_version(format, select.is_some())),
        (http::header::CONTENT_TYPE, format.entry_content_type().into()),
    ];
    Ok(respond(StatusCode::OK, headers, body))
}

/// Insert Entity, Update / Insert Or Replace (`PUT`), Merge / Insert Or Merge
/// (`MERGE`, `PATCH`) and Delete Entity: read by wire's [`read_entity_write`], as a
/// change set's operations are, then one engine call.
pub(super) async fn write_entity(
    state: &AppState,
    ctx: &RequestCtx,
    req: &Req,
    endpoint: &Endpoint,
) -> Result<Response, ApiError> {
    let table = endpoint.url_table().unwrap_or_default();
    let WriteRequest { write, body_format, prefer } =
        read_entity_write(endpoint, req, &req.body, ctx.atom_allowed())?;
    let e = match write {
        EntityWrite::InsertEntity(new) => {
            let format = negotiate(req, ctx)?;
            let e = state.service.entities().insert_entity(ctx.caller(), table, new).await?;
            let location = odata::entity_url(&ctx.base_url, table, &e.partition_key, &e.row_key);
            let headers = [
                (http::header::ETAG, e.etag().into()),
                (DATASERVICEVERSION.clone(), data_service_version(format, false)),
                (http::header::LOCATION, location.clone().into()),
                (DATASERVICEID.clone(), location.into()),
            ];
            return Ok(created(prefer, headers, format.entry_content_type(), || {
                format.entity(&e, table, None, &urls(ctx), wall_now())
            }));
        }
        EntityWrite::DeleteEntity { partition_key, row_key, cond } => {
            state
                .service
                .entities()
                .delete_entity(ctx.caller(), table, &partition_key, &row_key, &cond)
                .await?;
            return Ok(no_content(&[]));
        }
        EntityWrite::UpdateEntity(new, cond) => {
            state.service.entities().update_entity(ctx.caller(), table, new, &cond).await?
        }
        EntityWrite::MergeEntity(new, cond) => {
            state.service.entities().merge_entity(ctx.caller(), table, new, &cond).await?
        }
    };
    let headers = [
        (http::header::ETAG, e.etag().into()),
        (DATASERVICEVERSION.clone(), data_service_version(body_format, false)),
    ];
    Ok(respond(StatusCode::NO_CONTENT, headers, Vec::new()))
}
