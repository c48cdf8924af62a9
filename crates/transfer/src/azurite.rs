//! Azurite's table data, for migrating to aztable and back (pure).
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
//!
//! [`write_db`] is the reverse, for moving data back to Azurite: a database in the
//! layout Azurite writes itself (`LokiTableMetadataStore`), with its encodings (Guids
//! as base64 of their text, whole Doubles as JSON integers, `Timestamp` equal to
//! `lastModifiedTime` with seven fractional digits, the `W/"datetime'...'"` eTag).
//! Collections are written without LokiJS binary indices: LokiJS does not rebuild
//! a loaded index, so Azurite scans those tables instead of trusting an index that
//! could order strings differently from its own comparator; its queries give the same
//! answers either way.

use super::format::parse_entity_object;
use aztable_model::{Entity, Ticks};
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

/// A table to write into an Azurite database: its name and entities.
#[derive(Debug)]
pub struct TableOut<'a> {
    pub name: &'a str,
    pub entities: &'a [Entity],
}

/// The text of an Azurite table database holding `tables` of `account`. `filename` is
/// recorded as LokiJS records it (the file's path); `created` stamps each document's
/// LokiJS `meta` (milliseconds since the epoch).
pub fn write_db(account: &str, tables: &[TableOut<'_>], filename: &str, created: i64) -> Vec<u8> {
    let meta = serde_json::json!({"revision": 0, "created": created, "version": 0});
    let registry: Vec<Value> = tables
        .iter()
        .enumerate()
        .map(|(i, t)| serde_json::json!({"account": account, "table": t.name, "meta": meta, "$loki": i + 1}))
        .collect();
    let mut collections = vec![collection(TABLES_COLLECTION, registry)];
    for t in tables {
        let docs = t
            .entities
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let mut doc = document(e);
                doc.insert("meta".into(), meta.clone());
                doc.insert("$loki".into(), (i + 1).into());
                Value::Object(doc)
            })
            .collect();
        // Azurite names the collection after the table as created (and looks it up
        // lowercased first, then as is)
        collections.push(collection(&format!("{account}${}", t.name), docs));
    }
    let db = serde_json::json!({
        "filename": filename,
        "collections": collections,
        "databaseVersion": 1.5,
        "engineVersion": 1.5,
        "autosave": true,
        "autosaveInterval": 5000,
        "autosaveHandle": null,
        "throttledSaves": true,
        "options": {"persistenceMethod": "fs", "autosave": true, "autosaveInterval": 5000},
        "persistenceMethod": "fs",
        "persistenceAdapter": null,
        "verbose": false,
        "events": {"init": [null], "loaded": [], "flushChanges": [], "close": [], "changes": [], "warning": []},
        "ENV": "NODEJS"
    });
    // a Value with string keys always serializes
    serde_json::to_vec(&db).unwrap_or_default()
}

/// A LokiJS collection as LokiJS serializes one (no binary indices: see the module).
fn collection(name: &str, data: Vec<Value>) -> Value {
    let ids: Vec<Value> = data.iter().filter_map(|d| d.get("$loki").cloned()).collect();
    serde_json::json!({
        "name": name,
        "data": data,
        "idIndex": ids,
        "binaryIndices": {},
        "constraints": null,
        "uniqueNames": [],
        "transforms": {},
        "objType": name,
        "dirty": false,
        "cachedIndex": null,
        "cachedBinaryIndex": null,
        "cachedData": null,
        "adaptiveBinaryIndices": true,
        "transactional": false,
        "cloneObjects": false,
        "cloneMethod": "parse-stringify",
        "asyncListeners": false,
        "disableMeta": false,
        "disableChangesApi": true,
        "disableDeltaChangesApi": true,
        "autoupdate": false,
        "serializableIndices": true,
        "disableFreeze": true,
        "ttl": null,
        "maxId": ids.len(),
        "DynamicViews": [],
        "events": {"insert": [], "update": [], "pre-insert": [], "pre-update": [], "close": [],
                   "flushbuffer": [], "error": [], "delete": [null], "warning": [null]},
        "changes": [],
        "dirtyIds": []
    })
}

/// An entity → its document, as Azurite stores an inserted entity.
fn document(e: &Entity) -> Map<String, Value> {
    let mut props = Map::new();
    props.insert("PartitionKey".into(), e.partition_key.clone().into());
    props.insert("RowKey".into(), e.row_key.clone().into());
    for (name, value) in &e.properties {
        let (v, annotation) = stored_value(value);
        props.insert(name.clone(), v);
        if let Some(t) = annotation {
            props.insert(format!("{name}{ODATA_TYPE}"), t.into());
        }
    }
    let modified = e.timestamp.to_rfc3339_7();
    props.insert("Timestamp".into(), modified.clone().into());
    props.insert(format!("Timestamp{ODATA_TYPE}"), "Edm.DateTime".into());
    let mut doc = Map::new();
    doc.insert("PartitionKey".into(), e.partition_key.clone().into());
    doc.insert("RowKey".into(), e.row_key.clone().into());
    doc.insert("properties".into(), Value::Object(props));
    doc.insert("lastModifiedTime".into(), modified.into());
    doc.insert("eTag".into(), e.timestamp.etag().into());
    doc
}

/// A value as Azurite keeps it, and its `@odata.type` annotation where it has one.
fn stored_value(v: &aztable_model::EdmValue) -> (Value, Option<&'static str>) {
    use aztable_model::EdmValue as V;
    /// The largest magnitude below which every whole f64 is an exact JavaScript integer.
    const SAFE: f64 = 9_007_199_254_740_992.0;
    match v {
        V::String(s) => (s.clone().into(), None),
        V::Int32(i) => ((*i).into(), None),
        V::Boolean(b) => ((*b).into(), None),
        V::Int64(i) => (i.to_string().into(), Some("Edm.Int64")),
        V::Double(d) => {
            let value = if d.is_nan() {
                "NaN".into()
            } else if d.is_infinite() {
                (if *d > 0.0 { "Infinity" } else { "-Infinity" }).into()
            } else if d.fract() == 0.0 && d.abs() < SAFE && !(*d == 0.0 && d.is_sign_negative()) {
                // what JSON.stringify writes for a whole number (exact below 2^53)
                (*d as i64).into()
            } else {
                serde_json::Number::from_f64(*d).map_or(Value::Null, Value::Number)
            };
            (value, Some("Edm.Double"))
        }
        V::DateTime(t) => (t.to_rfc3339_7().into(), Some("Edm.DateTime")),
        V::Guid(g) => (STANDARD.encode(aztable_model::edm::format_guid(g)).into(), Some("Edm.Guid")),
        V::Binary(b) => (STANDARD.encode(b).into(), Some("Edm.Binary")),
    }
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
    if aztable_model::edm::parse_guid(stored).is_some() {
        return stored.to_owned();
    }
    match STANDARD.decode(stored).ok().and_then(|b| String::from_utf8(b).ok()) {
        Some(text) if aztable_model::edm::parse_guid(&text).is_some() => text,
        _ => stored.to_owned(), // left for the parser to refuse with its message
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aztable_model::EdmValue;

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
    fn written_databases_read_back_exactly() {
        let guid = aztable_model::edm::parse_guid("c9da6455-213d-42c9-9a79-3e9149a57833").expect("guid");
        let ticks = |s: &str| Ticks::parse(s).expect("time");
        let e = Entity {
            partition_key: "p'\"<&>\u{e9}\u{1F600}".into(),
            row_key: "".into(),
            timestamp: ticks("2024-05-01T10:00:00.1234567Z"),
            properties: vec![
                ("S".into(), EdmValue::String("line\nbreak \"q\" \\ \u{0} \u{1F600} <script>".into())),
                ("Empty".into(), EdmValue::String(String::new())),
                ("I32Min".into(), EdmValue::Int32(i32::MIN)),
                ("I32Max".into(), EdmValue::Int32(i32::MAX)),
                ("I64Min".into(), EdmValue::Int64(i64::MIN)),
                ("I64Max".into(), EdmValue::Int64(i64::MAX)),
                ("DZero".into(), EdmValue::Double(0.0)),
                ("DNegZero".into(), EdmValue::Double(-0.0)),
                ("DWhole".into(), EdmValue::Double(-5.0)),
                ("DBigWhole".into(), EdmValue::Double(1e300)),
                ("D2p53".into(), EdmValue::Double(9_007_199_254_740_992.0)),
                ("DMax".into(), EdmValue::Double(f64::MAX)),
                ("DSubnormal".into(), EdmValue::Double(5e-324)),
                ("DPi".into(), EdmValue::Double(std::f64::consts::PI)),
                ("DNaN".into(), EdmValue::Double(f64::NAN)),
                ("DInf".into(), EdmValue::Double(f64::INFINITY)),
                ("DNegInf".into(), EdmValue::Double(f64::NEG_INFINITY)),
                ("BTrue".into(), EdmValue::Boolean(true)),
                ("BFalse".into(), EdmValue::Boolean(false)),
                ("DtMin".into(), EdmValue::DateTime(ticks("1601-01-01T00:00:00Z"))),
                ("DtMax".into(), EdmValue::DateTime(ticks("9999-12-31T23:59:59.9999999Z"))),
                ("G".into(), EdmValue::Guid(guid)),
                ("GZero".into(), EdmValue::Guid([0; 16])),
                ("Bin".into(), EdmValue::Binary(vec![0, 1, 2, 250, 255])),
                ("BinEmpty".into(), EdmValue::Binary(Vec::new())),
            ],
        };
        let mut other = e.clone();
        other.partition_key = "a".into();
        other.properties.truncate(1);
        let entities = [other, e];
        let tables =
            [TableOut { name: "MixedCase", entities: &entities }, TableOut { name: "empty", entities: &[] }];
        let text = write_db("acct", &tables, "/x/__azurite_db_table__.json", 1_700_000_000_000);
        let back = read_db(&text, Some("acct")).expect("read back");
        assert_eq!(back.len(), 2);
        assert_eq!((back[0].name.as_str(), back[1].name.as_str()), ("MixedCase", "empty"));
        assert!(back[1].entities.is_empty());
        assert_eq!(back[0].entities.len(), 2);
        for (a, b) in entities.iter().zip(&back[0].entities) {
            assert_eq!(
                (&a.partition_key, &a.row_key, a.timestamp),
                (&b.partition_key, &b.row_key, b.timestamp)
            );
            assert!(aztable_model::edm::identical(&a.properties, &b.properties), "{a:?}\n{b:?}");
        }
        assert!(read_db(&text, Some("other")).expect("read").is_empty());

        // Azurite's own encodings, as the reader expects them
        let db: Value = serde_json::from_slice(&text).expect("json");
        let doc = &db["collections"][1]["data"][1];
        assert_eq!(db["collections"][1]["name"], "acct$MixedCase");
        assert_eq!(doc["eTag"], "W/\"datetime'2024-05-01T10%3A00%3A00.1234567Z'\"");
        assert_eq!(doc["lastModifiedTime"], "2024-05-01T10:00:00.1234567Z");
        let p = &doc["properties"];
        assert_eq!(p["Timestamp"], doc["lastModifiedTime"]);
        assert_eq!(p["G"], STANDARD.encode("c9da6455-213d-42c9-9a79-3e9149a57833"));
        assert_eq!(p["DWhole"].to_string(), "-5");
        assert_eq!(p["DWhole@odata.type"], "Edm.Double");
        assert_eq!(p["DNaN"], "NaN");
        assert_eq!(p["I64Min"], "-9223372036854775808");
        assert_eq!(p.get("I32Min@odata.type"), None);
        assert_eq!(doc["$loki"], 2);
        assert_eq!(db["collections"][1]["idIndex"], serde_json::json!([1, 2]));
    }

    #[test]
    fn not_a_database() {
        assert!(read_db(b"{}", None).is_err());
        assert!(read_db(b"{\"collections\":[]}", None).unwrap_err().contains("$TABLES_COLLECTION$"));
    }
}
