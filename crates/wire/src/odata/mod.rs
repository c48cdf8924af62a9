//! OData payloads of the Table service: content negotiation ([`negotiate`]) between
//! JSON at its three metadata levels and Atom ([`Format`]), request bodies by their
//! declared type ([`body_format`], [`read_entity`], [`read_table_name`]) and response
//! bodies in the negotiated format ([`Format::entity`], [`Format::entity_feed`],
//! [`Format::table`], [`Format::table_feed`], [`error_body`]). The JSON details live
//! in [`json`], Atom's in [`atom`]. Pure: no I/O, no async.

pub mod atom;
pub mod json;
mod prefer;
mod render;
mod rules;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod render_tests;
#[cfg(test)]
mod tests;

pub use json::{
    entity_feed, entity_object, entity_path, entity_response, entity_url, error_body, parse_entity,
    parse_entity_with, parse_table_name, table_feed, table_response, KeyAnnotations, ParsedEntity, Urls,
};

pub use prefer::Prefer;

use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::{Entity, EntityFields, Ticks};

/// The first service version that refuses Atom (415 `AtomFormatNotSupported`).
const FIRST_VERSION_WITHOUT_ATOM: &str = "2015-12-11";

/// Whether requests served under `version` may use Atom (versions before 2015-12-11).
pub fn atom_allowed(version: &str) -> bool {
    version < FIRST_VERSION_WITHOUT_ATOM
}

/// The wire format of a response (or of a request body).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json(Metadata),
    Atom,
}

impl Format {
    /// `Content-Type` of a single entity or table.
    pub fn entry_content_type(self) -> &'static str {
        match self {
            Format::Json(md) => md.content_type(),
            Format::Atom => atom::ENTRY_CONTENT_TYPE,
        }
    }

    /// `Content-Type` of a query's answer.
    pub fn feed_content_type(self) -> &'static str {
        match self {
            Format::Json(md) => md.content_type(),
            Format::Atom => atom::FEED_CONTENT_TYPE,
        }
    }

    /// One entity, owned or borrowed from its stored bytes (`now` is Atom's `updated`;
    /// JSON renders a borrowed entity in place, Atom from an owned copy).
    pub fn entity<E: EntityFields>(
        self,
        e: &E,
        table: &str,
        select: Option<&[String]>,
        urls: &Urls<'_>,
        now: Ticks,
    ) -> Vec<u8> {
        match self {
            Format::Json(md) => entity_response(e, table, md, select, urls),
            Format::Atom => atom::entity_response(&e.owned(), table, select, urls, now),
        }
    }

    /// A page of a query's entities.
    pub fn entity_feed(
        self,
        entities: &[Entity],
        table: &str,
        select: Option<&[String]>,
        urls: &Urls<'_>,
        now: Ticks,
    ) -> Vec<u8> {
        match self {
            Format::Json(md) => entity_feed(entities, table, md, select, urls),
            Format::Atom => atom::entity_feed(entities, table, select, urls, now),
        }
    }

    /// One table.
    pub fn table(self, name: &str, urls: &Urls<'_>, now: Ticks) -> Vec<u8> {
        match self {
            Format::Json(md) => table_response(name, md, urls),
            Format::Atom => atom::table_response(name, urls, now),
        }
    }

    /// A page of Query Tables.
    pub fn table_feed(self, names: &[String], urls: &Urls<'_>, now: Ticks) -> Vec<u8> {
        match self {
            Format::Json(md) => table_feed(names, md, urls),
            Format::Atom => atom::table_feed(names, urls, now),
        }
    }
}

/// The essence of a media type (`type/subtype`, parameters dropped, trimmed).
fn essence(media_type: &str) -> &str {
    media_type.split(';').next().unwrap_or("").trim()
}

fn is_atom_type(essence: &str) -> bool {
    essence.eq_ignore_ascii_case("application/atom+xml") || essence.eq_ignore_ascii_case("application/xml")
}

/// Decides how a request body is read, from its declared `Content-Type`:
/// `application/json` (any parameters) → JSON; `application/atom+xml` or
/// `application/xml` → Atom where the version allows it, else 415
/// `AtomFormatNotSupported`; anything else (`text/plain`, `application/octet-stream`)
/// → 415 `MediaTypeNotSupported`, so a body is never read as something it does not
/// claim to be. A body declared as nothing is Atom when Atom is allowed and the body
/// starts with `<`, else JSON.
pub fn body_format(content_type: Option<&str>, body: &[u8], atom_allowed: bool) -> Result<Format, ApiError> {
    let json = Format::Json(Metadata::Minimal);
    let ct = content_type.unwrap_or("");
    let essence = essence(ct);
    if essence.is_empty() {
        let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
        let first = body.iter().find(|b| !b.is_ascii_whitespace());
        return Ok(if atom_allowed && first == Some(&b'<') { Format::Atom } else { json });
    }
    if essence.eq_ignore_ascii_case("application/json") {
        Ok(json)
    } else if is_atom_type(essence) {
        if atom_allowed {
            Ok(Format::Atom)
        } else {
            Err(ApiError::new(ErrorCode::AtomFormatNotSupported))
        }
    } else {
        let allowed =
            if atom_allowed { "application/json or application/atom+xml" } else { "application/json" };
        Err(ApiError::with_message(
            ErrorCode::MediaTypeNotSupported,
            format!("The content type '{ct}' is not supported: send the body as {allowed}."),
        ))
    }
}

/// Reads an entity body in the format [`body_format`] chose, the keys' type annotations
/// treated as `keys` says (refused on Insert, ignored where the URL names the keys).
pub fn read_entity(format: Format, body: &[u8], keys: KeyAnnotations) -> Result<ParsedEntity, ApiError> {
    match format {
        Format::Json(_) => parse_entity_with(body, keys),
        Format::Atom => atom::parse_entity_with(body, keys),
    }
}

/// Reads a Create Table body in the format [`body_format`] chose.
pub fn read_table_name(format: Format, body: &[u8]) -> Result<String, ApiError> {
    match format {
        Format::Json(_) => parse_table_name(body),
        Format::Atom => atom::parse_table_name(body),
    }
}

/// Whether an error for an OData request is written as the service's XML error rather
/// than as OData JSON: when the response format negotiates to Atom, or when Atom was
/// asked for and refused (the service's 415 itself is XML).
pub fn errors_in_xml(accept: Option<&str>, format_param: Option<&str>, atom_allowed: bool) -> bool {
    errors_in_xml_for(&negotiate(accept, format_param, atom_allowed))
}

/// [`errors_in_xml`] of a negotiation already made ([`negotiate`]'s answer).
pub fn errors_in_xml_for(negotiated: &Result<Format, ApiError>) -> bool {
    match negotiated {
        Ok(Format::Atom) => true,
        Ok(Format::Json(_)) => false,
        Err(e) => e.code == ErrorCode::AtomFormatNotSupported,
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
    /// `application/atom+xml` or `application/xml`.
    Atom,
    /// `*/*` or `application/*`: the version's default format.
    Any,
    Unsupported,
}

/// Classifies one media range (`type/subtype;param=value;...`), ignoring `q`, `charset`
/// and `streaming`.
fn classify(range: &str) -> Kind {
    let mut parts = range.split(';');
    let mime = parts.next().unwrap_or("").trim();
    let mime_is = |m: &str| mime.eq_ignore_ascii_case(m);
    if mime_is("*/*") || mime_is("application/*") {
        return Kind::Any;
    }
    if is_atom_type(mime) {
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

/// The format a range stands for, if this version serves it.
fn served(kind: Kind, atom_allowed: bool) -> Option<Format> {
    match kind {
        Kind::Json(md) => Some(Format::Json(md)),
        Kind::Atom if atom_allowed => Some(Format::Atom),
        Kind::Any if atom_allowed => Some(Format::Atom),
        Kind::Any => Some(Format::Json(Metadata::Minimal)),
        Kind::Atom | Kind::Unsupported => None,
    }
}

fn refuse(atom_offered: bool) -> ApiError {
    match atom_offered {
        true => ApiError::new(ErrorCode::AtomFormatNotSupported),
        false => ApiError::new(ErrorCode::MediaTypeNotSupported),
    }
}

/// Picks the response format from `$format` (wins) or `Accept`.
///
/// JSON: `application/json;odata=nometadata|minimalmetadata|fullmetadata` (the OData
/// v4 spelling `odata.metadata=none|minimal|full` too), plain `application/json`, or
/// `$format=json` (→ Minimal), under every version.
///
/// Atom (`application/atom+xml`, `application/xml`, `$format=atom|xml`) is served when
/// `atom_allowed` (versions before 2015-12-11), and is then also the default: no or an
/// empty `Accept`, `*/*` and `application/*` mean Atom, as the service's docs say.
/// From 2015-12-11 on the default is JSON minimal metadata, and Atom alone is refused.
///
/// `Accept` may be a list with q-values: ranges are tried by descending q (ties in the
/// order sent, `q=0` skipped) and the first served one wins.
///
/// Refused with 415: when nothing served is offered and Atom was →
/// `AtomFormatNotSupported` "Atom format is not supported." (observed from the service,
/// azure-sdk-for-net#24126); anything else (`text/html`, `odata=verbose`, …) →
/// `MediaTypeNotSupported` (a code the SDKs know; the service's exact answer is
/// unrecorded).
pub fn negotiate(
    accept: Option<&str>,
    format_param: Option<&str>,
    atom_allowed: bool,
) -> Result<Format, ApiError> {
    if let Some(f) = format_param.map(crate::endpoint::trim).filter(|f| !f.is_empty()) {
        let kind = match f.to_ascii_lowercase().as_str() {
            "json" => Kind::Json(Metadata::Minimal),
            "atom" | "xml" => Kind::Atom,
            _ => classify(f),
        };
        return served(kind, atom_allowed).ok_or_else(|| refuse(kind == Kind::Atom));
    }
    let Some(accept) = accept.map(crate::endpoint::trim).filter(|a| !a.is_empty()) else {
        return Ok(served(Kind::Any, atom_allowed).unwrap_or(Format::Json(Metadata::Minimal)));
    };
    // what the SDKs send, exactly: its answer without splitting it (two negotiations
    // per request were 5 % of a point read's instructions)
    match accept.as_bytes() {
        b"application/json;odata=minimalmetadata" => return Ok(Format::Json(Metadata::Minimal)),
        b"application/json;odata=nometadata" => return Ok(Format::Json(Metadata::None)),
        b"application/json;odata=fullmetadata" => return Ok(Format::Json(Metadata::Full)),
        _ => {}
    }
    if !accept.contains(',') {
        // one media range (what the SDKs send): the answer of `negotiate_ranges`,
        // without its lists
        let kind = if quality(accept) > 0 { classify(accept) } else { Kind::Unsupported };
        return served(kind, atom_allowed).ok_or_else(|| refuse(kind == Kind::Atom));
    }
    negotiate_ranges(accept, atom_allowed)
}

/// [`negotiate`] for a non-empty `Accept` of any number of media ranges: the served
/// range of the highest quality (ties in the order sent), else the refusal of what was
/// offered.
fn negotiate_ranges(accept: &str, atom_allowed: bool) -> Result<Format, ApiError> {
    let offered: Vec<&str> = accept.split(',').filter(|r| !r.trim().is_empty()).collect();
    if offered.is_empty() {
        return Ok(served(Kind::Any, atom_allowed).unwrap_or(Format::Json(Metadata::Minimal)));
    }
    let mut ranges: Vec<(u16, Kind)> =
        offered.iter().map(|r| (quality(r), classify(r))).filter(|(q, _)| *q > 0).collect();
    ranges.sort_by_key(|r| std::cmp::Reverse(r.0)); // stable: ties keep the order sent
    if let Some(format) = ranges.iter().find_map(|(_, k)| served(*k, atom_allowed)) {
        return Ok(format);
    }
    Err(refuse(ranges.iter().any(|(_, k)| *k == Kind::Atom)))
}
