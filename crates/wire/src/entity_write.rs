//! The one front end of entity writes: [`read_entity_write`] reads Insert, Update,
//! Merge and Delete Entity (Insert Or Replace and Insert Or Merge included) from the
//! operation's endpoint, head (`Content-Type`, `If-Match`, `If-None-Match`, `Prefer`)
//! and body into the model's [`EntityWrite`], for a request of its own and for each
//! operation of a change set ([`crate::batch::read_change_set`]) alike.

use crate::endpoint::Endpoint;
use crate::odata::{self, Format, KeyAnnotations, Metadata, Prefer};
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::{Condition, EntityWrite, NewEntity};

/// The head an entity write is read from: a request's own, or a batch operation's.
pub trait Head {
    /// The first value of a header (name in lowercase; UTF-8 values only).
    fn header(&self, name: &str) -> Option<&str>;
    /// Whether the header is present at all.
    fn has(&self, name: &str) -> bool;
}

/// An entity write as its request sent it: what the engine runs, and what the answer
/// needs of the request.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteRequest {
    pub write: EntityWrite,
    /// The format the body was read in (a delete has none: JSON).
    pub body_format: Format,
    /// An insert's `Prefer` (`None` for the other writes, which do not honour it).
    pub prefer: Option<Prefer>,
}

/// Reads an entity write; anything but an entity write is 400 `InvalidInput` (a change
/// set's operations are entity writes). `atom_allowed`: the version served allows Atom.
pub fn read_entity_write(
    endpoint: &Endpoint,
    head: &impl Head,
    body: &[u8],
    atom_allowed: bool,
) -> Result<WriteRequest, ApiError> {
    let cond = |required| parse_condition(head.header("if-match"), head.has("if-none-match"), required);
    let body_format = match endpoint {
        Endpoint::DeleteEntity { .. } => Format::Json(Metadata::Minimal),
        _ => odata::body_format(head.header("content-type"), body, atom_allowed)?,
    };
    let at = |pk: &str, rk: &str| entity_at(body_format, body, pk.to_owned(), rk.to_owned());
    let write = match endpoint {
        Endpoint::InsertEntity { .. } => EntityWrite::InsertEntity(entity_to_insert(body_format, body)?),
        Endpoint::UpdateEntity { pk, rk, .. } => {
            let c = cond(false)?;
            EntityWrite::UpdateEntity(at(pk, rk)?, c)
        }
        Endpoint::MergeEntity { pk, rk, .. } => {
            let c = cond(false)?;
            EntityWrite::MergeEntity(at(pk, rk)?, c)
        }
        Endpoint::DeleteEntity { pk, rk, .. } => {
            EntityWrite::DeleteEntity { partition_key: pk.clone(), row_key: rk.clone(), cond: cond(true)? }
        }
        other => {
            return Err(ApiError::with_message(
                ErrorCode::InvalidInput,
                format!("{} is not allowed in a change set.", other.name()),
            ))
        }
    };
    Ok(WriteRequest { write, body_format, prefer: insert_prefer(endpoint, head) })
}

/// The `Prefer` an insert sent; `None` for any other operation.
pub fn insert_prefer(endpoint: &Endpoint, head: &impl Head) -> Option<Prefer> {
    match endpoint {
        Endpoint::InsertEntity { .. } => Prefer::parse(head.header("prefer")),
        _ => None,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A head of (name, value) pairs, names in lowercase.
    struct Pairs(Vec<(&'static str, &'static str)>);

    impl Head for Pairs {
        fn header(&self, name: &str) -> Option<&str> {
            self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
        }
        fn has(&self, name: &str) -> bool {
            self.header(name).is_some()
        }
    }

    const JSON: (&str, &str) = ("content-type", "application/json");

    fn read(
        endpoint: &Endpoint,
        head: &[(&'static str, &'static str)],
        body: &str,
    ) -> Result<WriteRequest, ApiError> {
        read_entity_write(endpoint, &Pairs(head.to_vec()), body.as_bytes(), false)
    }

    fn at(table: &str) -> (Endpoint, Endpoint, Endpoint, Endpoint) {
        let (t, pk, rk) = (table.to_owned(), "p".to_owned(), "r".to_owned());
        (
            Endpoint::InsertEntity { table: t.clone() },
            Endpoint::UpdateEntity { table: t.clone(), pk: pk.clone(), rk: rk.clone() },
            Endpoint::MergeEntity { table: t.clone(), pk: pk.clone(), rk: rk.clone() },
            Endpoint::DeleteEntity { table: t, pk, rk },
        )
    }

    #[test]
    fn each_write_with_its_keys_condition_and_prefer() {
        let (insert, update, merge, delete) = at("t");
        let prefer = ("prefer", "return-no-content");
        let ins = read(&insert, &[JSON, prefer], r#"{"PartitionKey":"a","RowKey":"b","n":1}"#).unwrap();
        assert_eq!(ins.write.keys(), ("a", "b"));
        assert!(matches!(&ins.write, EntityWrite::InsertEntity(e) if e.properties.len() == 1));
        assert_eq!(
            (ins.prefer, ins.body_format),
            (Some(Prefer::ReturnNoContent), Format::Json(Metadata::Minimal))
        );
        // the URL's keys win over the body's; no If-Match is an upsert; Prefer is an insert's only
        let up = read(&update, &[JSON, prefer], r#"{"PartitionKey":"x","RowKey":"y"}"#).unwrap();
        assert_eq!(
            up.write,
            EntityWrite::UpdateEntity(
                NewEntity { partition_key: "p".into(), row_key: "r".into(), properties: vec![] },
                Condition::Upsert
            )
        );
        assert_eq!(up.prefer, None);
        let m = read(&merge, &[JSON, ("if-match", "w/\"1\"")], "{}").unwrap();
        assert!(matches!(m.write, EntityWrite::MergeEntity(_, Condition::Etag(ref t)) if t == "W/\"1\""));
        let d = read(&delete, &[("if-match", " * ")], "").unwrap();
        assert_eq!(
            d.write,
            EntityWrite::DeleteEntity {
                partition_key: "p".into(),
                row_key: "r".into(),
                cond: Condition::Exists
            }
        );
    }

    #[test]
    fn refusals_name_the_service_codes() {
        let (insert, update, _, delete) = at("t");
        let code = |r: Result<WriteRequest, ApiError>| r.map(|_| ()).unwrap_err().code;
        assert_eq!(code(read(&delete, &[], "")), ErrorCode::MissingRequiredHeader);
        assert_eq!(code(read(&update, &[JSON, ("if-match", "abc")], "{}")), ErrorCode::InvalidInput);
        assert_eq!(code(read(&update, &[JSON, ("if-none-match", "*")], "{}")), ErrorCode::InvalidInput);
        assert_eq!(code(read(&insert, &[JSON], r#"{"PartitionKey":"a"}"#)), ErrorCode::PropertiesNeedValue);
        let query = Endpoint::QueryEntities { table: "t".into() };
        let e = read(&query, &[], "").unwrap_err();
        assert_eq!(
            (e.code, &*e.message),
            (ErrorCode::InvalidInput, "QueryEntities is not allowed in a change set.")
        );
    }
}
