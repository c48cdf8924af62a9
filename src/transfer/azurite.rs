//! Azurite's table data, for migrating to aztable (pure).
//!
//! Azurite's table service keeps everything in one LokiJS database file,
//! `__azurite_db_table__.json` in its `--location`: a JSON object whose `collections`
//! array holds
//!
//! - `$TABLES_COLLECTION$`: one document per table, `{"account": ..., "table": ...}`;
//! - one collection per table, named `{account}${table}` (newer versions lowercase the
//!   table name there, older ones kept its case), whose documents are entities:
//!   `{"PartitionKey", "RowKey", "properties": {...}, "lastModifiedTime", "eTag", ...}`.
//!
//! An entity's `properties` hold the keys, `Timestamp`, and every custom property with
//! the `name@odata.type` annotations Azurite adds to all but String, Int32 and Boolean
//! values. Two of its encodings differ from the wire's: a Guid is kept as the base64 of
//! the GUID's text (older versions kept the text itself), and a Double may be a JSON
//! integer. Each entity is rewritten as a wire-format entity object and read with the
//! server's own parser, so the import applies the same types and limits as an insert.

use super::format::parse_entity_object;
use crate::model::{Entity, Ticks};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{Map, Value};

/// The file name of Azurite's table database in its location.
pub const DB_FILE: &str = "__azurite_db_table__.json";

const TABLES_COLLECTION: &str = "$TABLES_COLLECTION$";
const ODATA_TYPE: &str = "@odata.type";

/// One table of an Azurite database and its entities, sorted by keys.
#[derive(Debug)]
pub struct AzuriteTable {
    pub account: String,
    pub name: String,
    pub entities: Vec<Entity>,
}

/// Reads the tables of `account` (every account when `None`) from the text of an
/// Azurite table database.
pub fn read_db(text: &[u8], account: Option<&str>) -> Result<Vec<AzuriteTable>, String> {
    let db: Value = serde_json::from_slice(text).map_err(|e| format!("not a LokiJS database: {e}"))?;
    let collections = db
        .get("collections")
        .and_then(Value::as_array)
        .ok_or("not a LokiJS database: no \"collections\" array")?;
    let by_name =
        |name: &str| collections.iter().find(|c| c.get("name").and_then(Value::as_str) == Some(name));
    let docs = |c: &Value| c.get("data").and_then(Value::as_array).cloned().unwrap_or_default();
    let registry = by_name(TABLES_COLLECTION)
        .ok_or("not Azurite's table database: no $TABLES_COLLECTION$ collection")?;
    let mut out = Vec::new();
    for doc in docs(registry) {
        let (Some(acct), Some(table)) =
            (doc.get("account").and_then(Value::as_str), doc.get("table").and_then(Value::as_str))
        else {
            continue;
        };
        if account.is_some_and(|a| a != acct) {
            continue;
        }
        let collection = by_name(&format!("{acct}${}", table.to_lowercase()))
            .or_else(|| by_name(&format!("{acct}${table}")));
        let mut entities = Vec::new();
        for (i, e) in collection.map(docs).unwrap_or_default().iter().enumerate() {
            let entity = entity(e).map_err(|why| format!("table {table}, entity {}: {why}", i + 1))?;
            entities.push(entity);
        }
        entities.sort_by(|a, b| (&a.partition_key, &a.row_key).cmp(&(&b.partition_key, &b.row_key)));
        out.push(AzuriteTable { account: acct.to_owned(), name: table.to_owned(), entities });
    }
    Ok(out)
}

/// One entity document → an entity (Timestamp from `lastModifiedTime`).
fn entity(doc: &Value) -> Result<Entity, String> {
    let empty = Map::new();
    let props = doc.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let key = |name: &str| {
        doc.get(name)
            .or_else(|| props.get(name))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("no {name}"))
    };
    let mut wire = Map::new();
    wire.insert("PartitionKey".into(), key("PartitionKey")?.into());
    wire.insert("RowKey".into(), key("RowKey")?.into());
    for (name, value) in props {
        if matches!(name.as_str(), "PartitionKey" | "RowKey" | "Timestamp") || name.ends_with(ODATA_TYPE) {
            continue;
        }
        let annotation = props.get(&format!("{name}{ODATA_TYPE}")).and_then(Value::as_str);
        let value = match (annotation, value) {
            (Some("Edm.Guid"), Value::String(s)) => Value::String(guid_text(s)),
            // Azurite keeps a whole Double as a JSON integer: the wire parser would
            // read that as Int32 without the annotation, which is written below
            (_, v) => v.clone(),
        };
        if let Some(t) = annotation {
            wire.insert(format!("{name}{ODATA_TYPE}"), t.into());
        }
        wire.insert(name.clone(), value);
    }
    let object = serde_json::to_vec(&Value::Object(wire)).map_err(|e| e.to_string())?;
    let timestamp = doc.get("lastModifiedTime").or_else(|| props.get("Timestamp")).and_then(Value::as_str);
    let (mut e, ts) = parse_entity_object(&object, timestamp)?;
    e.timestamp = ts.unwrap_or(Ticks(0));
    Ok(e)
}

/// A GUID as Azurite stored it: the base64 of its text, or (older versions) the text.
fn guid_text(stored: &str) -> String {
    if crate::model::edm::parse_guid(stored).is_some() {
        return stored.to_owned();
    }
    match STANDARD.decode(stored).ok().and_then(|b| String::from_utf8(b).ok()) {
        Some(text) if crate::model::edm::parse_guid(&text).is_some() => text,
        _ => stored.to_owned(), // left for the parser to refuse with its message
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EdmValue;

    #[test]
    fn guids_in_both_encodings() {
        let text = "c9da6455-213d-42c9-9a79-3e9149a57833";
        assert_eq!(guid_text(&STANDARD.encode(text)), text);
        assert_eq!(guid_text(text), text);
        assert_eq!(guid_text("not a guid"), "not a guid");
    }

    #[test]
    fn an_entity_document() {
        let doc = serde_json::json!({
            "PartitionKey": "p", "RowKey": "r",
            "properties": {
                "PartitionKey": "p", "RowKey": "r",
                "Timestamp": "2023-01-02T03:04:05.1230000Z", "Timestamp@odata.type": "Edm.DateTime",
                "Whole": 5, "Whole@odata.type": "Edm.Double",
                "Count": 7,
                "Big": "9007199254740993", "Big@odata.type": "Edm.Int64",
                "Id": STANDARD.encode("c9da6455-213d-42c9-9a79-3e9149a57833"), "Id@odata.type": "Edm.Guid",
                "Gone": null
            },
            "lastModifiedTime": "2023-01-02T03:04:05.1230000Z",
            "eTag": "W/\"datetime'2023-01-02T03%3A04%3A05.1230000Z'\"",
            "meta": {"revision": 0}, "$loki": 1
        });
        let e = entity(&doc).expect("entity");
        assert_eq!(e.timestamp, Ticks::parse("2023-01-02T03:04:05.123Z").expect("ts"));
        assert_eq!(e.get("Whole"), Some(&EdmValue::Double(5.0)));
        assert_eq!(e.get("Count"), Some(&EdmValue::Int32(7)));
        assert_eq!(e.get("Big"), Some(&EdmValue::Int64(9_007_199_254_740_993)));
        assert!(matches!(e.get("Id"), Some(EdmValue::Guid(_))));
        assert_eq!(e.get("Gone"), None);
        assert_eq!(e.properties.len(), 4);
    }

    #[test]
    fn not_a_database() {
        assert!(read_db(b"{}", None).is_err());
        assert!(read_db(b"{\"collections\":[]}", None).unwrap_err().contains("$TABLES_COLLECTION$"));
    }
}
