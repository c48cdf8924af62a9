//! The JSON-lines format of `aztable export` and `aztable import` (pure).
//!
//! One JSON object a line. `{"TableName":"people"}` starts a table; each following line
//! is one of its entities as [`aztable_wire::odata::entity_object`] writes it: `PartitionKey`,
//! `RowKey`, `Timestamp` and the custom properties, with `@odata.type` annotations
//! wherever JSON alone would lose the type (Int64, DateTime, Guid, Binary, NaN and
//! ±Infinity doubles). Lines are read back with the server's own entity parser
//! ([`aztable_wire::odata::parse_entity`]), so an exported value imports as exactly the typed
//! value it was, and a line the service would refuse is refused with its reason.
//!
//! ```text
//! {"TableName":"people"}
//! {"PartitionKey":"p","RowKey":"1","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-05-01T10:00:00.1234567Z","Age":42,"Id@odata.type":"Edm.Int64","Id":"9007199254740993"}
//! ```

use aztable_model::{Entity, Ticks};
use serde::Deserialize;

/// One line of an export.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// `{"TableName":"..."}`: the entities that follow belong to this table.
    Table(String),
    /// An entity; its Timestamp is `None` when the line has none.
    Entity(Entity, Option<Ticks>),
}

/// The members read besides the entity parser's: the table name of a table line, and
/// the Timestamp (which the entity parser ignores, as the service ignores a sent one).
#[derive(Deserialize)]
struct Head {
    #[serde(rename = "TableName")]
    table_name: Option<String>,
    #[serde(rename = "PartitionKey")]
    partition_key: Option<serde::de::IgnoredAny>,
    #[serde(rename = "Timestamp")]
    timestamp: Option<String>,
}

/// The line that starts table `name`.
pub fn table_line(name: &str) -> Vec<u8> {
    // a Value with string keys always serializes
    serde_json::to_vec(&serde_json::json!({ "TableName": name })).unwrap_or_default()
}

/// An entity's line (without the newline).
pub fn entity_line(e: &Entity) -> Vec<u8> {
    aztable_wire::odata::entity_object(e)
}

/// Reads one line. An entity without a Timestamp gets `None` (the importer stamps it).
pub fn parse_line(line: &[u8]) -> Result<Line, String> {
    let head: Head = serde_json::from_slice(line).map_err(|e| format!("not a JSON object: {e}"))?;
    if let (Some(name), None) = (&head.table_name, &head.partition_key) {
        return Ok(Line::Table(name.clone()));
    }
    let (entity, timestamp) = parse_entity_object(line, head.timestamp.as_deref())?;
    Ok(Line::Entity(entity, timestamp))
}

/// Reads an entity object (a line, or an entity of a query's answer) with the server's
/// entity parser; `timestamp` is its `Timestamp` member, if any.
pub fn parse_entity_object(
    object: &[u8],
    timestamp: Option<&str>,
) -> Result<(Entity, Option<Ticks>), String> {
    let parsed = aztable_wire::odata::parse_entity(object).map_err(|e| e.message.into_owned())?;
    let (Some(partition_key), Some(row_key)) = (parsed.partition_key, parsed.row_key) else {
        return Err("an entity needs both PartitionKey and RowKey".into());
    };
    let timestamp = match timestamp {
        None => None,
        Some(t) => Some(Ticks::parse(t).ok_or_else(|| format!("Timestamp '{t}' is not a date-time"))?),
    };
    let entity = Entity {
        partition_key,
        row_key,
        timestamp: timestamp.unwrap_or(Ticks(0)),
        properties: parsed.properties,
    };
    Ok((entity, timestamp))
}

#[cfg(test)]
mod tests {
    use super::*;
    use aztable_model::EdmValue;

    fn every_type() -> Entity {
        let guid = aztable_model::edm::parse_guid("c9da6455-213d-42c9-9a79-3e9149a57833").expect("guid");
        Entity {
            partition_key: "p'\"<&>\u{e9}\u{1F600}".into(),
            row_key: "".into(),
            timestamp: Ticks::parse("2024-05-01T10:00:00.1234567Z").expect("ts"),
            properties: vec![
                ("S".into(), EdmValue::String("line\nbreak \"quoted\" \\ \u{0} \u{1F600} <script>".into())),
                ("Empty".into(), EdmValue::String(String::new())),
                ("I32Min".into(), EdmValue::Int32(i32::MIN)),
                ("I32Max".into(), EdmValue::Int32(i32::MAX)),
                ("I64Min".into(), EdmValue::Int64(i64::MIN)),
                ("I64Max".into(), EdmValue::Int64(i64::MAX)),
                ("I64Big".into(), EdmValue::Int64(9_007_199_254_740_993)),
                ("DZero".into(), EdmValue::Double(0.0)),
                ("DWhole".into(), EdmValue::Double(5.0)),
                ("DMax".into(), EdmValue::Double(f64::MAX)),
                ("DMinPos".into(), EdmValue::Double(f64::MIN_POSITIVE)),
                ("DSubnormal".into(), EdmValue::Double(5e-324)),
                ("DNeg".into(), EdmValue::Double(-1.5e-300)),
                ("DPi".into(), EdmValue::Double(std::f64::consts::PI)),
                ("DNaN".into(), EdmValue::Double(f64::NAN)),
                ("DInf".into(), EdmValue::Double(f64::INFINITY)),
                ("DNegInf".into(), EdmValue::Double(f64::NEG_INFINITY)),
                ("BTrue".into(), EdmValue::Boolean(true)),
                ("BFalse".into(), EdmValue::Boolean(false)),
                ("DtMin".into(), EdmValue::DateTime(Ticks::parse("1601-01-01T00:00:00Z").expect("min"))),
                (
                    "DtMax".into(),
                    EdmValue::DateTime(Ticks::parse("9999-12-31T23:59:59.9999999Z").expect("max")),
                ),
                (
                    "DtTick".into(),
                    EdmValue::DateTime(Ticks::parse("2000-02-29T12:34:56.0000001Z").expect("t")),
                ),
                ("G".into(), EdmValue::Guid(guid)),
                ("GZero".into(), EdmValue::Guid([0; 16])),
                ("Bin".into(), EdmValue::Binary(vec![0, 1, 2, 250, 255])),
                ("BinEmpty".into(), EdmValue::Binary(Vec::new())),
            ],
        }
    }

    /// Compares as stored: NaN equals NaN, -0.0 is not 0.0.
    fn same(a: &Entity, b: &Entity) -> bool {
        let bits = |v: &EdmValue| match v {
            EdmValue::Double(d) => Some(d.to_bits()),
            _ => None,
        };
        a.partition_key == b.partition_key
            && a.row_key == b.row_key
            && a.timestamp == b.timestamp
            && a.properties.len() == b.properties.len()
            && a.properties.iter().zip(&b.properties).all(|((na, va), (nb, vb))| {
                na == nb && if bits(va).is_some() { bits(va) == bits(vb) } else { va == vb }
            })
    }

    #[test]
    fn every_edm_type_round_trips_exactly() {
        let e = every_type();
        let line = entity_line(&e);
        let Line::Entity(back, ts) = parse_line(&line).expect("parse") else { panic!("an entity line") };
        assert_eq!(ts, Some(e.timestamp));
        assert!(same(&e, &back), "{e:?}\n{back:?}");
        // and the text is stable: exporting the import gives the same line
        assert_eq!(entity_line(&back), line);
    }

    #[test]
    fn annotations_are_written_where_json_loses_the_type() {
        let text = String::from_utf8(entity_line(&every_type())).expect("utf-8");
        for (name, ty) in [
            ("I64Min", "Edm.Int64"),
            ("DNaN", "Edm.Double"),
            ("DtMin", "Edm.DateTime"),
            ("G", "Edm.Guid"),
            ("Bin", "Edm.Binary"),
            ("Timestamp", "Edm.DateTime"),
        ] {
            assert!(text.contains(&format!("\"{name}@odata.type\":\"{ty}\"")), "{name} in {text}");
        }
        assert!(text.contains("\"DWhole\":5.0"), "{text}");
        assert!(!text.contains("odata.etag") && !text.contains("odata.id"), "{text}");
    }

    #[test]
    fn negative_zero_keeps_its_sign() {
        let mut e = every_type();
        e.properties = vec![("Z".into(), EdmValue::Double(-0.0))];
        let Line::Entity(back, _) = parse_line(&entity_line(&e)).expect("parse") else { panic!() };
        assert!(same(&e, &back), "{back:?}");
    }

    #[test]
    fn table_lines_and_malformed_lines() {
        assert_eq!(parse_line(&table_line("people")).expect("table"), Line::Table("people".into()));
        assert!(parse_line(b"[1,2]").is_err());
        assert!(parse_line(b"{\"PartitionKey\":\"p\"}").unwrap_err().contains("RowKey"));
        let bad = br#"{"PartitionKey":"p","RowKey":"r","X@odata.type":"Edm.Int64","X":12}"#;
        assert!(parse_line(bad).is_err());
        let bad_ts = br#"{"PartitionKey":"p","RowKey":"r","Timestamp":"yesterday"}"#;
        assert!(parse_line(bad_ts).unwrap_err().contains("Timestamp"));
        let no_ts = br#"{"PartitionKey":"p","RowKey":"r","A":1}"#;
        assert!(matches!(parse_line(no_ts), Ok(Line::Entity(_, None))));
    }
}
