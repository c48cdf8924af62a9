//! Unit tests for the odata module's response bodies: golden JSON at each metadata
//! level, `$select`, key escaping, and render → parse round trips.

use super::*;
use aztable_model::{EdmValue, Entity, Ticks};

const BASE: &str = "http://127.0.0.1:10002/devstoreaccount1";
const ETAG_JSON: &str = r#""W/\"datetime'2021-09-20T22%3A00%3A47.5097433Z'\"""#;

fn urls() -> Urls<'static> {
    Urls { base: BASE, account: "devstoreaccount1" }
}

fn guid() -> [u8; 16] {
    aztable_model::edm::parse_guid("c9da6455-213d-42c9-9a79-3e9149a57833").unwrap()
}

fn entity(properties: Vec<(&str, EdmValue)>) -> Entity {
    Entity {
        partition_key: "pk".into(),
        row_key: "rk".into(),
        timestamp: Ticks::parse("2021-09-20T22:00:47.5097433Z").unwrap(),
        properties: properties.into_iter().map(|(n, v)| (n.to_owned(), v)).collect(),
    }
}

fn all_types() -> Entity {
    entity(vec![
        ("age", EdmValue::Int32(39)),
        ("big", EdmValue::Int64(1_234_567_890_123)),
        ("ratio", EdmValue::Double(3.0)),
        ("when", EdmValue::DateTime(Ticks::parse("1973-10-04T00:00:00Z").unwrap())),
        ("id", EdmValue::Guid(guid())),
        ("bin", EdmValue::Binary(b"binary".to_vec())),
        ("ok", EdmValue::Boolean(true)),
        ("s", EdmValue::String("x".into())),
    ])
}

fn text(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap()
}

#[test]
fn golden_entity_minimal() {
    let got = text(entity_response(&all_types(), "t", Metadata::Minimal, None, &urls()));
    let want = format!(
        r#"{{"odata.metadata":"{BASE}/$metadata#t/@Element","odata.etag":{ETAG_JSON},"PartitionKey":"pk","RowKey":"rk","Timestamp":"2021-09-20T22:00:47.5097433Z","age":39,"big@odata.type":"Edm.Int64","big":"1234567890123","ratio":3.0,"when@odata.type":"Edm.DateTime","when":"1973-10-04T00:00:00Z","id@odata.type":"Edm.Guid","id":"c9da6455-213d-42c9-9a79-3e9149a57833","bin@odata.type":"Edm.Binary","bin":"YmluYXJ5","ok":true,"s":"x"}}"#
    );
    assert_eq!(got, want);
}

#[test]
fn golden_entity_full() {
    let got = text(entity_response(&all_types(), "t", Metadata::Full, None, &urls()));
    let want = format!(
        r#"{{"odata.metadata":"{BASE}/$metadata#t/@Element","odata.type":"devstoreaccount1.t","odata.id":"{BASE}/t(PartitionKey='pk',RowKey='rk')","odata.etag":{ETAG_JSON},"odata.editLink":"t(PartitionKey='pk',RowKey='rk')","PartitionKey":"pk","RowKey":"rk","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2021-09-20T22:00:47.5097433Z","age":39,"big@odata.type":"Edm.Int64","big":"1234567890123","ratio":3.0,"when@odata.type":"Edm.DateTime","when":"1973-10-04T00:00:00Z","id@odata.type":"Edm.Guid","id":"c9da6455-213d-42c9-9a79-3e9149a57833","bin@odata.type":"Edm.Binary","bin":"YmluYXJ5","ok":true,"s":"x"}}"#
    );
    assert_eq!(got, want);
}

#[test]
fn golden_entity_none() {
    let got = text(entity_response(&all_types(), "t", Metadata::None, None, &urls()));
    let want = r#"{"PartitionKey":"pk","RowKey":"rk","Timestamp":"2021-09-20T22:00:47.5097433Z","age":39,"big":"1234567890123","ratio":3.0,"when":"1973-10-04T00:00:00Z","id":"c9da6455-213d-42c9-9a79-3e9149a57833","bin":"YmluYXJ5","ok":true,"s":"x"}"#;
    assert_eq!(got, want);
}

#[test]
fn golden_feeds() {
    let e = entity(vec![("n", EdmValue::Int32(1))]);
    let two = [e.clone(), e];
    let got = text(entity_feed(&two, "t", Metadata::Minimal, None, &urls()));
    let item = format!(
        r#"{{"odata.etag":{ETAG_JSON},"PartitionKey":"pk","RowKey":"rk","Timestamp":"2021-09-20T22:00:47.5097433Z","n":1}}"#
    );
    assert_eq!(got, format!(r#"{{"odata.metadata":"{BASE}/$metadata#t","value":[{item},{item}]}}"#));
    let got = text(entity_feed(&[], "t", Metadata::None, None, &urls()));
    assert_eq!(got, r#"{"value":[]}"#);
    let got = text(entity_feed(&two[..1], "t", Metadata::Full, None, &urls()));
    assert!(got.starts_with(&format!(
        r#"{{"odata.metadata":"{BASE}/$metadata#t","value":[{{"odata.type":"devstoreaccount1.t","odata.id""#
    )));
}

#[test]
fn doubles_render_with_a_decimal_point_and_specials_as_strings() {
    let e = entity(vec![
        ("a", EdmValue::Double(5.0)),
        ("b", EdmValue::Double(0.1)),
        ("c", EdmValue::Double(-0.0)),
        ("d", EdmValue::Double(1e300)),
        ("e", EdmValue::Double(f64::NAN)),
        ("f", EdmValue::Double(f64::INFINITY)),
        ("g", EdmValue::Double(f64::NEG_INFINITY)),
        ("h", EdmValue::Double(6_824_053_932_181.0)),
    ]);
    let got = text(entity_response(&e, "t", Metadata::Minimal, Some(&["a".into(), "b".into()]), &urls()));
    assert!(got.contains("&$select=a,b"), "{got}");
    let got = text(entity_response(&e, "t", Metadata::None, None, &urls()));
    assert!(
        got.ends_with(r#""a":5.0,"b":0.1,"c":-0.0,"d":1e+300,"e":"NaN","f":"Infinity","g":"-Infinity","h":6824053932181.0}"#),
        "{got}"
    );
    let got = text(entity_response(&e, "t", Metadata::Minimal, None, &urls()));
    assert!(got.contains(r#""d":1e+300,"e@odata.type":"Edm.Double","e":"NaN","f@odata.type":"Edm.Double","f":"Infinity","g@odata.type":"Edm.Double","g":"-Infinity","h":6824053932181.0"#), "{got}");
}

#[test]
fn select_projection() {
    let e = entity(vec![
        ("age", EdmValue::Int32(39)),
        ("big", EdmValue::Int64(5)),
        ("sex", EdmValue::String("m".into())),
    ]);
    let sel: Vec<String> = vec!["sex".into(), " age".into(), "missing".into(), "age".into()];
    let got = text(entity_feed(std::slice::from_ref(&e), "t", Metadata::Minimal, Some(&sel), &urls()));
    let want = format!(
        r#"{{"odata.metadata":"{BASE}/$metadata#t&$select=sex,age,missing","value":[{{"odata.etag":{ETAG_JSON},"sex":"m","age":39,"missing":null}}]}}"#
    );
    assert_eq!(got, want);
    let sel: Vec<String> = vec!["big".into(), "RowKey".into(), "Timestamp".into()];
    let got = text(entity_response(&e, "t", Metadata::Full, Some(&sel), &urls()));
    assert!(
        got.starts_with(&format!(
            r#"{{"odata.metadata":"{BASE}/$metadata#t/@Element&$select=big,RowKey,Timestamp","odata.type""#
        )),
        "{got}"
    );
    assert!(got.ends_with(r#""odata.editLink":"t(PartitionKey='pk',RowKey='rk')","RowKey":"rk","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2021-09-20T22:00:47.5097433Z","big@odata.type":"Edm.Int64","big":"5"}"#), "{got}");
    let got = text(entity_response(&e, "t", Metadata::None, Some(&["PartitionKey".into()]), &urls()));
    assert_eq!(got, r#"{"PartitionKey":"pk"}"#);
    let star = text(entity_response(&e, "t", Metadata::None, Some(&["*".into()]), &urls()));
    assert_eq!(star, text(entity_response(&e, "t", Metadata::None, None, &urls())));
    let empty = text(entity_response(&e, "t", Metadata::None, Some(&[]), &urls()));
    assert_eq!(empty, star);
    let odd = text(entity_response(
        &e,
        "t",
        Metadata::Minimal,
        Some(&["odata.etag".into(), "a-b".into()]),
        &urls(),
    ));
    assert!(odd.contains(ETAG_JSON) && !odd.contains("a-b\":"), "{odd}");
}

#[test]
fn key_escaping_in_links() {
    assert_eq!(entity_path("t", "o'clock", "a b/c%"), "t(PartitionKey='o%27%27clock',RowKey='a%20b%2Fc%25')");
    assert_eq!(entity_path("t", "", "é-._~"), "t(PartitionKey='',RowKey='%C3%A9-._~')");
    assert_eq!(
        entity_url("http://h:1/acct", "t", "o'clock", "a b"),
        "http://h:1/acct/t(PartitionKey='o%27%27clock',RowKey='a%20b')"
    );
    let mut e = entity(vec![]);
    e.partition_key = "it's".into();
    let got = text(entity_response(
        &e,
        "t",
        Metadata::Full,
        None,
        &Urls { base: "http://h/acct/", account: "acct" },
    ));
    assert!(got.contains(r#""odata.id":"http://h/acct/t(PartitionKey='it%27%27s',RowKey='rk')""#), "{got}");
    assert!(got.contains(r#""odata.editLink":"t(PartitionKey='it%27%27s',RowKey='rk')""#), "{got}");
    assert!(got.contains(r#""PartitionKey":"it's""#));
}

#[test]
fn golden_tables() {
    let u = urls();
    assert_eq!(
        text(table_response("mytable", Metadata::Minimal, &u)),
        format!(r#"{{"odata.metadata":"{BASE}/$metadata#Tables/@Element","TableName":"mytable"}}"#)
    );
    assert_eq!(
        text(table_response("mytable", Metadata::Full, &u)),
        format!(
            r#"{{"odata.metadata":"{BASE}/$metadata#Tables/@Element","odata.type":"devstoreaccount1.Tables","odata.id":"{BASE}/Tables('mytable')","odata.editLink":"Tables('mytable')","TableName":"mytable"}}"#
        )
    );
    assert_eq!(text(table_response("mytable", Metadata::None, &u)), r#"{"TableName":"mytable"}"#);
    let names = vec!["a1b".to_owned(), "c2d".to_owned()];
    assert_eq!(
        text(table_feed(&names, Metadata::Minimal, &u)),
        format!(
            r#"{{"odata.metadata":"{BASE}/$metadata#Tables","value":[{{"TableName":"a1b"}},{{"TableName":"c2d"}}]}}"#
        )
    );
    assert_eq!(
        text(table_feed(&names[..1], Metadata::Full, &u)),
        format!(
            r#"{{"odata.metadata":"{BASE}/$metadata#Tables","value":[{{"odata.type":"devstoreaccount1.Tables","odata.id":"{BASE}/Tables('a1b')","odata.editLink":"Tables('a1b')","TableName":"a1b"}}]}}"#
        )
    );
    assert_eq!(text(table_feed(&[], Metadata::None, &u)), r#"{"value":[]}"#);
}

#[test]
fn golden_error() {
    let got = text(error_body(
        "EntityAlreadyExists",
        "The specified entity already exists.",
        "5625a0b2-dba1-485c-996d-99184424adc7",
        "2014-01-22T12:35:16.8015235Z",
    ));
    assert_eq!(
        got,
        r#"{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"The specified entity already exists.\nRequestId:5625a0b2-dba1-485c-996d-99184424adc7\nTime:2014-01-22T12:35:16.8015235Z"}}}"#
    );
    let got = text(error_body("X", "say \"hi\"", "id", "t"));
    assert_eq!(
        got,
        r#"{"odata.error":{"code":"X","message":{"lang":"en-US","value":"say \"hi\"\nRequestId:id\nTime:t"}}}"#
    );
}

#[test]
fn round_trip_every_type() {
    let e = entity(vec![
        ("i32min", EdmValue::Int32(i32::MIN)),
        ("i32max", EdmValue::Int32(i32::MAX)),
        ("i64min", EdmValue::Int64(i64::MIN)),
        ("i64max", EdmValue::Int64(i64::MAX)),
        ("dbl", EdmValue::Double(0.1)),
        ("dblint", EdmValue::Double(-3.0)),
        ("dblbig", EdmValue::Double(f64::MAX)),
        ("dbltiny", EdmValue::Double(f64::MIN_POSITIVE / 3.0)),
        ("inf", EdmValue::Double(f64::INFINITY)),
        ("ninf", EdmValue::Double(f64::NEG_INFINITY)),
        ("yes", EdmValue::Boolean(true)),
        ("dtmin", EdmValue::DateTime(aztable_model::time::MIN_EDM_DATETIME)),
        ("dtmax", EdmValue::DateTime(aztable_model::time::MAX_EDM_DATETIME)),
        ("g", EdmValue::Guid(guid())),
        ("empty", EdmValue::Binary(vec![])),
        ("bytes", EdmValue::Binary((0..=255).collect())),
        ("str", EdmValue::String("ü\"\\\n😀".into())),
        ("blank", EdmValue::String(String::new())),
    ]);
    for md in [Metadata::Minimal, Metadata::Full] {
        let p = parse_entity(&entity_response(&e, "t", md, None, &urls())).unwrap();
        assert_eq!(p.partition_key.as_deref(), Some("pk"));
        assert_eq!(p.row_key.as_deref(), Some("rk"));
        assert_eq!(p.properties, e.properties, "{md:?}");
    }
    let nan = entity(vec![("nan", EdmValue::Double(f64::NAN))]);
    let p = parse_entity(&entity_response(&nan, "t", Metadata::Minimal, None, &urls())).unwrap();
    assert!(matches!(p.properties[0].1, EdmValue::Double(d) if d.is_nan()));
    // nometadata keeps the inferable types.
    let plain = entity(vec![
        ("a", EdmValue::Int32(-1)),
        ("b", EdmValue::Double(2.0)),
        ("c", EdmValue::Boolean(false)),
        ("d", EdmValue::String("s".into())),
    ]);
    let p = parse_entity(&entity_response(&plain, "t", Metadata::None, None, &urls())).unwrap();
    assert_eq!(p.properties, plain.properties);
}

/// A rendering kept under [`Format::entity_tag`] may be handed to any request with the
/// same tag: equal tags must mean equal bodies, over every metadata level, URL, account
/// and spelling of the table's name.
#[test]
fn equal_entity_tags_mean_equal_bodies() {
    use super::Format;
    let formats =
        [Format::Json(Metadata::None), Format::Json(Metadata::Minimal), Format::Json(Metadata::Full)];
    let bases =
        ["http://127.0.0.1:10002/devstoreaccount1", "http://127.0.0.1:10002/devstoreaccount1/", "http://h/a"];
    let accounts = ["devstoreaccount1", "other"];
    let tables = ["t", "T", "tt"];
    let mut seen: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for format in formats {
        for base in bases {
            for account in accounts {
                for table in tables {
                    let urls = Urls { base, account };
                    let tag = format.entity_tag(table, &urls).expect("JSON has a tag");
                    let body = format.entity(
                        &all_types(),
                        table,
                        None,
                        &urls,
                        Ticks::parse("2026-01-01T00:00:00Z").unwrap(),
                    );
                    for (t, b) in &seen {
                        assert!(t != &tag || b == &body, "{format:?} {base} {account} {table}");
                    }
                    seen.push((tag, body));
                }
            }
        }
    }
    assert_eq!(Format::Atom.entity_tag("t", &urls()), None);
}
