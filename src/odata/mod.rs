//! OData JSON payloads of the Table service: content negotiation ([`negotiate`]),
//! request bodies ([`parse_entity`], [`parse_table_name`]) and response bodies at the
//! three metadata levels ([`entity_response`], [`entity_feed`], [`table_response`],
//! [`table_feed`], [`error_body`]). Pure: no I/O, no async.

pub mod json;
mod prefer;
mod render;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod render_tests;
#[cfg(test)]
mod tests;

pub use json::{
    entity_feed, entity_path, entity_response, error_body, parse_entity, parse_table_name, table_feed,
    table_response, ParsedEntity, Urls,
};

pub use prefer::Prefer;

use crate::error::{ApiError, ErrorCode};

/// Checks a request body's declared `Content-Type` before it is read as JSON: a JSON
/// media type (`application/json`, any parameters) or none at all is read; Atom or XML is
/// 415 `AtomFormatNotSupported`; anything else (`text/plain`, `application/octet-stream`)
/// is 415 `MediaTypeNotSupported`, so a body is never read as something it does not
/// claim to be.
pub fn check_body_type(content_type: Option<&str>) -> Result<(), ApiError> {
    let Some(ct) = content_type else { return Ok(()) };
    let essence = ct.split(';').next().unwrap_or("").trim();
    let is = |m: &str| essence.eq_ignore_ascii_case(m);
    if essence.is_empty() || is("application/json") {
        Ok(())
    } else if is("application/atom+xml") || is("application/xml") {
        Err(ApiError::new(ErrorCode::AtomFormatNotSupported))
    } else {
        Err(ApiError::with_message(
            ErrorCode::MediaTypeNotSupported,
            format!("The content type '{ct}' is not supported: send the body as application/json."),
        ))
    }
}

/// The JSON metadata level of a response (`odata=nometadata|minimalmetadata|fullmetadata`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metadata {
    None,
    Minimal,
    Full,
}

impl Metadata {
    /// Returns the response `Content-Type` for this level, e.g.
    /// `application/json;odata=minimalmetadata;streaming=true;charset=utf-8`.
    pub fn content_type(self) -> &'static str {
        match self {
            Metadata::None => "application/json;odata=nometadata;streaming=true;charset=utf-8",
            Metadata::Minimal => "application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
            Metadata::Full => "application/json;odata=fullmetadata;streaming=true;charset=utf-8",
        }
    }
}

/// How one media range of `Accept` (or the `$format` value) is understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Json(Metadata),
    /// `application/atom+xml` or `application/xml`: Atom, refused since 2015-12-11.
    Atom,
    Unsupported,
}

/// Classifies one media range (`type/subtype;param=value;...`), ignoring `q`, `charset`
/// and `streaming`.
fn classify(range: &str) -> Kind {
    let mut parts = range.split(';');
    let mime = parts.next().unwrap_or("").trim();
    let mime_is = |m: &str| mime.eq_ignore_ascii_case(m);
    if mime_is("*/*") || mime_is("application/*") {
        return Kind::Json(Metadata::Minimal);
    }
    if mime_is("application/atom+xml") || mime_is("application/xml") {
        return Kind::Atom;
    }
    if !mime_is("application/json") {
        return Kind::Unsupported;
    }
    let mut level = Metadata::Minimal;
    for p in parts {
        let Some((k, v)) = p.split_once('=') else { continue };
        let (k, v) = (k.trim(), v.trim().trim_matches('"'));
        // `odata=nometadata` (JSON light) or `odata.metadata=none` (OData 4 style)
        let (light, v4) = (k.eq_ignore_ascii_case("odata"), k.eq_ignore_ascii_case("odata.metadata"));
        if !(light || v4) {
            continue;
        }
        let names = |light_name: &str, v4_name: &str| {
            v.eq_ignore_ascii_case(if light { light_name } else { v4_name })
        };
        level = if names("nometadata", "none") {
            Metadata::None
        } else if names("minimalmetadata", "minimal") {
            Metadata::Minimal
        } else if names("fullmetadata", "full") {
            Metadata::Full
        } else {
            return Kind::Unsupported; // e.g. odata=verbose
        };
    }
    Kind::Json(level)
}

/// The `q` of a media range in thousandths (1000 when absent or malformed).
fn quality(range: &str) -> u16 {
    for p in range.split(';').skip(1) {
        if let Some((k, v)) = p.split_once('=') {
            if k.trim().eq_ignore_ascii_case("q") {
                return v.trim().parse::<f32>().map_or(1000, |q| (q.clamp(0.0, 1.0) * 1000.0).round() as u16);
            }
        }
    }
    1000
}

fn refuse(kind: Kind) -> ApiError {
    match kind {
        Kind::Atom => ApiError::new(ErrorCode::AtomFormatNotSupported),
        _ => ApiError::new(ErrorCode::MediaTypeNotSupported),
    }
}

/// Picks the response format from `$format` (wins) or `Accept`.
///
/// Accepted: `application/json;odata=nometadata|minimalmetadata|fullmetadata` (the OData
/// v4 spelling `odata.metadata=none|minimal|full` too), plain `application/json`,
/// `application/*`, `*/*`, a missing or empty `Accept` (all → Minimal). `$format` may also
/// be `json` (→ Minimal). `Accept` may be a list with q-values: ranges are tried by
/// descending q (ties in the order sent, `q=0` skipped) and the first supported one wins.
///
/// Refused with 415: when nothing acceptable is offered and Atom was
/// (`application/atom+xml`, `application/xml`, `$format=atom|xml`) →
/// `AtomFormatNotSupported` "Atom format is not supported." (observed from the service,
/// azure-sdk-for-net#24126); anything else (`text/html`, `odata=verbose`, …) →
/// `MediaTypeNotSupported` (a code the SDKs know; the service's exact answer is
/// unrecorded). The docs' "no Accept → Atom" default is not followed: JSON is the only
/// format since 2015-12-11 and every SDK sends `Accept`.
pub fn negotiate(accept: Option<&str>, format_param: Option<&str>) -> Result<Metadata, ApiError> {
    if let Some(f) = format_param.map(str::trim).filter(|f| !f.is_empty()) {
        let kind = match f.to_ascii_lowercase().as_str() {
            "json" => Kind::Json(Metadata::Minimal),
            "atom" | "xml" => Kind::Atom,
            _ => classify(f),
        };
        return match kind {
            Kind::Json(md) => Ok(md),
            other => Err(refuse(other)),
        };
    }
    let Some(accept) = accept.map(str::trim).filter(|a| !a.is_empty()) else {
        return Ok(Metadata::Minimal);
    };
    if !accept.contains(',') {
        // one media range (what the SDKs send): the answer of `negotiate_ranges`,
        // without its lists
        return match (quality(accept) > 0).then(|| classify(accept)) {
            Some(Kind::Json(md)) => Ok(md),
            Some(Kind::Atom) => Err(refuse(Kind::Atom)),
            _ => Err(refuse(Kind::Unsupported)),
        };
    }
    negotiate_ranges(accept)
}

/// [`negotiate`] for a non-empty `Accept` of any number of media ranges: the JSON range
/// of the highest quality (ties in the order sent), else the refusal of what was offered.
fn negotiate_ranges(accept: &str) -> Result<Metadata, ApiError> {
    let offered: Vec<&str> = accept.split(',').filter(|r| !r.trim().is_empty()).collect();
    if offered.is_empty() {
        return Ok(Metadata::Minimal);
    }
    let mut ranges: Vec<(u16, Kind)> =
        offered.iter().map(|r| (quality(r), classify(r))).filter(|(q, _)| *q > 0).collect();
    ranges.sort_by_key(|r| std::cmp::Reverse(r.0)); // stable: ties keep the order sent
    if let Some(md) = ranges.iter().find_map(|(_, k)| match k {
        Kind::Json(md) => Some(*md),
        _ => None,
    }) {
        return Ok(md);
    }
    let atom_offered = ranges.iter().any(|(_, k)| *k == Kind::Atom);
    Err(refuse(if atom_offered { Kind::Atom } else { Kind::Unsupported }))
}
