//! Property tests for Atom: any entity survives entity → Atom → parse; an Atom body
//! read and then answered as JSON (and back) keeps every value; tables and errors
//! round-trip; the parser never panics on arbitrary or XML-like input.

use super::*;
use crate::odata::{self, Metadata, ParsedEntity, Urls};
use aztable_model::edm::identical as same;
use aztable_model::time::{MAX_EDM_DATETIME, MIN_EDM_DATETIME};
use aztable_model::{EdmValue, Entity, Ticks};
use proptest::prelude::*;

/// Strings as entities carry them: any character but NUL (which XML cannot carry),
/// with the ones XML treats specially over-represented.
fn text(max: usize) -> impl Strategy<Value = String> {
    let special = prop_oneof![
        Just("<".to_owned()),
        Just("&".to_owned()),
        Just("]]>".to_owned()),
        Just("\r\n".to_owned()),
        Just("\r".to_owned()),
        Just(" ".to_owned()),
        Just("\t".to_owned()),
        Just("\"'".to_owned()),
        Just("\u{1}".to_owned()),
        Just("é😀".to_owned()),
        "[\u{1}-\u{10FFFF}]{1,4}",
    ];
    proptest::collection::vec(special, 0..max).prop_map(|parts| parts.concat())
}

fn edm_value() -> impl Strategy<Value = EdmValue> {
    prop_oneof![
        text(8).prop_map(EdmValue::String),
        any::<i32>().prop_map(EdmValue::Int32),
        prop_oneof![Just(i64::MIN), Just(i64::MAX), any::<i64>()].prop_map(EdmValue::Int64),
        any::<f64>().prop_map(EdmValue::Double),
        prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::MAX),
            Just(f64::MIN_POSITIVE),
            Just(5e-324)
        ]
        .prop_map(EdmValue::Double),
        any::<bool>().prop_map(EdmValue::Boolean),
        prop_oneof![
            Just(MIN_EDM_DATETIME.0),
            Just(MAX_EDM_DATETIME.0),
            MIN_EDM_DATETIME.0..=MAX_EDM_DATETIME.0
        ]
        .prop_map(|t| EdmValue::DateTime(Ticks(t))),
        any::<[u8; 16]>().prop_map(EdmValue::Guid),
        proptest::collection::vec(any::<u8>(), 0..64).prop_map(EdmValue::Binary),
    ]
}

fn entity() -> impl Strategy<Value = Entity> {
    let props = proptest::collection::vec(("[A-Za-z_][A-Za-z0-9_]{0,12}", edm_value()), 0..12);
    (text(6), text(6), MIN_EDM_DATETIME.0..=MAX_EDM_DATETIME.0, props).prop_map(|(pk, rk, ts, props)| {
        let mut e = Entity { partition_key: pk, row_key: rk, timestamp: Ticks(ts), properties: Vec::new() };
        for (name, v) in props {
            if !matches!(name.as_str(), "PartitionKey" | "RowKey" | "Timestamp") && e.get(&name).is_none() {
                e.properties.push((name, v));
            }
        }
        e
    })
}

const URLS: Urls<'static> =
    Urls { base: "http://127.0.0.1:10002/devstoreaccount1", account: "devstoreaccount1" };

fn fail(body: &[u8]) -> impl FnOnce(aztable_model::error::ApiError) -> TestCaseError + '_ {
    move |err| TestCaseError::fail(format!("{err}: {}", String::from_utf8_lossy(body)))
}

fn as_entity(p: ParsedEntity, timestamp: Ticks) -> Entity {
    Entity {
        partition_key: p.partition_key.unwrap_or_default(),
        row_key: p.row_key.unwrap_or_default(),
        timestamp,
        properties: p.properties,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn an_entity_survives_atom_and_back(e in entity()) {
        let body = entity_response(&e, "tbl", None, &URLS, e.timestamp);
        let p = parse_entity(&body).map_err(fail(&body))?;
        prop_assert_eq!(p.partition_key.as_deref(), Some(e.partition_key.as_str()));
        prop_assert_eq!(p.row_key.as_deref(), Some(e.row_key.as_str()));
        prop_assert!(same(&p.properties, &e.properties), "{:?} != {:?}", p.properties, e.properties);

        // the same entity inside a feed
        let feed = entity_feed(std::slice::from_ref(&e), "tbl", None, &URLS, e.timestamp);
        let text = String::from_utf8(feed).map_err(|x| TestCaseError::fail(x.to_string()))?;
        let start = text.find("<entry").ok_or_else(|| TestCaseError::fail("no entry"))?;
        let end = text.rfind("</feed>").ok_or_else(|| TestCaseError::fail("no feed end"))?;
        // the feed's one entry, given the declarations the feed made for it
        let inner = &text[start..end];
        let wrapped = inner.replacen("<entry", &format!(r#"<entry xmlns="{ATOM_NS}" xmlns:d="{D_NS}" xmlns:m="{M_NS}""#), 1);
        let p = parse_entity(wrapped.as_bytes()).map_err(fail(wrapped.as_bytes()))?;
        prop_assert!(same(&p.properties, &e.properties));
    }

    #[test]
    fn atom_in_json_out_and_back_keeps_every_value(e in entity()) {
        let atom = entity_response(&e, "tbl", None, &URLS, e.timestamp);
        let from_atom = as_entity(parse_entity(&atom).map_err(fail(&atom))?, e.timestamp);
        for md in [Metadata::Minimal, Metadata::Full] {
            let json = odata::entity_response(&from_atom, "tbl", md, None, &URLS);
            let from_json = odata::parse_entity(&json).map_err(fail(&json))?;
            prop_assert!(same(&from_json.properties, &e.properties), "{:?}", String::from_utf8_lossy(&json));
            // and JSON in, Atom out
            let again = entity_response(&as_entity(from_json, e.timestamp), "tbl", None, &URLS, e.timestamp);
            prop_assert_eq!(&again, &atom);
        }
    }

    #[test]
    fn table_names_and_errors_round_trip(name in "[A-Za-z][A-Za-z0-9]{2,62}", message in text(10)) {
        let body = table_response(&name, &URLS, Ticks(0));
        prop_assert_eq!(parse_table_name(&body).map_err(fail(&body))?, name);
        let err = error_body("SomeCode", &message, "rid", "t");
        let text = String::from_utf8(err).map_err(|x| TestCaseError::fail(x.to_string()))?;
        prop_assert!(text.contains("<code>SomeCode</code>"));
    }

    #[test]
    fn parse_never_panics_on_bytes(body in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse_entity(&body);
        let _ = parse_table_name(&body);
    }

    #[test]
    fn parse_never_panics_on_xml_like_text(
        parts in proptest::collection::vec(
            prop_oneof![
                Just(format!(r#"<entry xmlns="{ATOM_NS}" xmlns:d="{D_NS}" xmlns:m="{M_NS}">"#)),
                Just("</entry>".to_owned()),
                Just(r#"<content type="application/xml">"#.to_owned()),
                Just("</content>".to_owned()),
                Just("<m:properties>".to_owned()),
                Just("</m:properties>".to_owned()),
                Just("<m:properties/>".to_owned()),
                Just(r#"<d:A m:type="Edm.Int64">"#.to_owned()),
                Just(r#"<d:A m:null="true"/>"#.to_owned()),
                Just("</d:A>".to_owned()),
                Just("<d:PartitionKey>".to_owned()),
                Just("</d:PartitionKey>".to_owned()),
                Just("<![CDATA[x]]>".to_owned()),
                Just("&amp;&#x41;&bogus;".to_owned()),
                Just("<!DOCTYPE x>".to_owned()),
                "[ -~]{0,10}",
            ],
            0..16,
        ),
    ) {
        let body = parts.concat();
        let _ = parse_entity(body.as_bytes());
        let _ = parse_table_name(body.as_bytes());
    }
}
