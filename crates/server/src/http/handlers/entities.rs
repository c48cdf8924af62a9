//! Entity handlers: QueryEntities, GetEntity (point query), InsertEntity,
//! UpdateEntity / InsertOrReplaceEntity, MergeEntity / InsertOrMergeEntity,
//! DeleteEntity.

use super::super::ctx::RequestCtx;
use super::super::request::{header, Req};
use super::super::response::{build, created, no_content, respond};
use super::super::AppState;
use super::{body_format, data_service_version, entity_at, entity_to_insert, negotiate};
use axum::response::Response;
use aztable_engine::service::{Condition, QueryEntities};
use aztable_model::continuation;
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::time::wall_now;
use aztable_wire::odata::{self, Format, Prefer, Urls};
use http::StatusCode;

fn urls(ctx: &RequestCtx) -> Urls<'_> {
    Urls { base: &ctx.base_url, account: &ctx.account }
}

/// Reads `If-Match` (and refuses `If-None-Match` on writes).
fn condition(req: &Req, required: bool) -> Result<Condition, ApiError> {
    parse_condition(header(&req.headers, "if-match"), req.headers.contains_key("if-none-match"), required)
}

/// Turns an `If-Match` value into a [`Condition`]; `required` for deletes. Also used
/// for the operations of a batch.
pub(super) fn parse_condition(
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
    let page = state.service.query_entities(ctx.caller(), table, q).await?;
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
    let (etag, body) = state.service.get_entity_with(ctx.caller(), table, pk, rk, |e| {
        (e.timestamp.etag(), format.entity(e, table, select.as_deref(), &urls(ctx), wall_now()))
    })?;
    let headers = [
        ("etag", etag.into()),
        ("dataserviceversion", data_service_version(format, select.is_some())),
        ("content-type", format.entry_content_type().into()),
    ];
    Ok(respond(StatusCode::OK, headers, body))
}

pub(super) async fn insert_entity(
    state: &AppState,
    ctx: &RequestCtx,
    req: &Req,
    table: &str,
) -> Result<Response, ApiError> {
    let body = body_format(req, ctx)?;
    let pref = Prefer::parse(header(&req.headers, "prefer"));
    let format = negotiate(req, ctx)?;
    let new = entity_to_insert(body, &req.body)?;
    let e = state.service.insert_entity(ctx.caller(), table, new).await?;
    let location = odata::entity_url(&ctx.base_url, table, &e.partition_key, &e.row_key);
    let headers = [
        ("etag", e.etag().into()),
        ("dataserviceversion", data_service_version(format, false)),
        ("location", location.clone().into()),
        ("dataserviceid", location.into()),
    ];
    Ok(created(pref, headers, format.entry_content_type(), || {
        format.entity(&e, table, None, &urls(ctx), wall_now())
    }))
}

/// `PUT` (Update / Insert Or Replace) or `MERGE`/`PATCH` (Merge / Insert Or Merge).
pub(super) async fn write_entity(
    state: &AppState,
    ctx: &RequestCtx,
    req: &Req,
    table: &str,
    (pk, rk): (String, String),
    mode: WriteMode,
) -> Result<Response, ApiError> {
    let cond = condition(req, false)?;
    let body = body_format(req, ctx)?;
    let new = entity_at(body, &req.body, pk, rk)?;
    let e = match mode {
        WriteMode::Replace => state.service.update_entity(ctx.caller(), table, new, &cond).await?,
        WriteMode::Merge => state.service.merge_entity(ctx.caller(), table, new, &cond).await?,
    };
    let headers = [("etag", e.etag().into()), ("dataserviceversion", data_service_version(body, false))];
    Ok(respond(StatusCode::NO_CONTENT, headers, Vec::new()))
}

/// Whether a write replaces the entity or merges into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WriteMode {
    Replace,
    Merge,
}

pub(super) async fn delete_entity(
    state: &AppState,
    ctx: &RequestCtx,
    req: &Req,
    table: &str,
    pk: &str,
    rk: &str,
) -> Result<Response, ApiError> {
    let cond = condition(req, true)?;
    state.service.delete_entity(ctx.caller(), table, pk, rk, &cond).await?;
    Ok(no_content(&[]))
}
