//! AtomPub, the Table service's original wire format (`application/atom+xml`), served
//! for `x-ms-version` before 2015-12-11: request bodies ([`parse_entity`],
//! [`parse_table_name`]) and response bodies ([`entity_response`], [`entity_feed`],
//! [`table_response`], [`table_feed`], [`error_body`]). The parsers give the same typed
//! entities as the JSON ones, under the same rules, so the layers below never see the
//! format. Pure: no I/O, no async.

mod parse;
mod render;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub use parse::{parse_entity, parse_entity_with, parse_table_name};
pub use render::{entity_feed, entity_response, error_body, table_feed, table_response};

/// The Atom namespace (the documents' default namespace).
pub const ATOM_NS: &str = "http://www.w3.org/2005/Atom";
/// The data services namespace of property elements (prefix `d`).
pub const D_NS: &str = "http://schemas.microsoft.com/ado/2007/08/dataservices";
/// The data services metadata namespace (prefix `m`: `m:properties`, `m:type`,
/// `m:null`, `m:etag`; also the default namespace of the XML error).
pub const M_NS: &str = "http://schemas.microsoft.com/ado/2007/08/dataservices/metadata";
/// The `scheme` of every `category`.
pub const SCHEME: &str = "http://schemas.microsoft.com/ado/2007/08/dataservices/scheme";

/// `Content-Type` of a single entry.
pub const ENTRY_CONTENT_TYPE: &str = "application/atom+xml;type=entry;charset=utf-8";
/// `Content-Type` of a feed.
pub const FEED_CONTENT_TYPE: &str = "application/atom+xml;type=feed;charset=utf-8";
/// `Content-Type` of the XML error.
pub const ERROR_CONTENT_TYPE: &str = "application/xml";
