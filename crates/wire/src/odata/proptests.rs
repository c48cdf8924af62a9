//! Property tests for the odata module: entity bodies survive a render → parse round
//! trip at minimal and full metadata, and the parser never panics on arbitrary input.

use super::*;
use aztable_model::edm::identical as same;
use aztable_model::time::{MAX_EDM_DATETIME, MIN_EDM_DATETIME};
use aztable_model::{EdmValue, Entity, Ticks};
use proptest::prelude::*;

fn edm_value() -> impl Strategy<Value = EdmValue> {
    prop_oneof![
        ".{0,40}".prop_map(EdmValue::String),
        any::<i32>().prop_map(EdmValue::Int32),
        any::<i64>().prop_map(EdmValue::Int64),
        any::<f64>().prop_map(EdmValue::Double),
        prop_oneof![Just(0.0), Just(-0.0), Just(1.0), Just(1e16), Just(f64::NAN), Just(f64::INFINITY)]
            .prop_map(EdmValue::Double),
        (-1.0e7f64..1.0e7).prop_map(|d| EdmValue::Double(d.trunc())),
        any::<bool>().prop_map(EdmValue::Boolean),
        (MIN_EDM_DATETIME.0..=MAX_EDM_DATETIME.0).prop_map(|t| EdmValue::DateTime(Ticks(t))),
        any::<[u8; 16]>().prop_map(EdmValue::Guid),
        proptest::collection::vec(any::<u8>(), 0..64).prop_map(EdmValue::Binary),
    ]
}

fn entity() -> impl Strategy<Value = Entity> {
    let props = proptest::collection::vec(("[A-Za-z_][A-Za-z0-9_]{0,12}", edm_value()), 0..12);
    (".{0,20}", ".{0,20}", MIN_EDM_DATETIME.0..=MAX_EDM_DATETIME.0, props).prop_map(|(pk, rk, ts, props)| {
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn render_then_parse_gives_back_the_properties(e in entity()) {
        for md in [Metadata::Minimal, Metadata::Full] {
            let body = entity_response(&e, "tbl", md, None, &URLS);
            let p = parse_entity(&body).map_err(|err| TestCaseError::fail(format!("{err}: {}", String::from_utf8_lossy(&body))))?;
            prop_assert_eq!(p.partition_key.as_deref(), Some(e.partition_key.as_str()));
            prop_assert_eq!(p.row_key.as_deref(), Some(e.row_key.as_str()));
            prop_assert!(same(&p.properties, &e.properties), "{:?} != {:?}", p.properties, e.properties);
        }
    }

    #[test]
    fn feed_items_parse_back(e in entity()) {
        let feed = entity_feed(std::slice::from_ref(&e), "tbl", Metadata::Full, None, &URLS);
        let v: serde_json::Value = serde_json::from_slice(&feed).map_err(|x| TestCaseError::fail(x.to_string()))?;
        let item = serde_json::to_vec(&v["value"][0]).map_err(|x| TestCaseError::fail(x.to_string()))?;
        let p = parse_entity(&item).map_err(|err| TestCaseError::fail(err.to_string()))?;
        prop_assert!(same(&p.properties, &e.properties));
    }

    #[test]
    fn parse_never_panics_on_bytes(body in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse_entity(&body);
        let _ = parse_table_name(&body);
    }

    #[test]
    fn parse_never_panics_on_json_like_text(body in r#"[{}\[\]",:0-9.eE+\-a-zA-Z@ \\]{0,120}"#) {
        reparses_the_same(body.as_bytes())?;
    }

    #[test]
    fn parse_never_panics_on_objects(
        members in proptest::collection::vec(
            (
                prop_oneof![
                    Just("a".to_owned()), Just("a@odata.type".to_owned()), Just("PartitionKey".to_owned()),
                    Just("RowKey@odata.type".to_owned()), Just("Timestamp".to_owned()), Just("odata.etag".to_owned()),
                    ".{0,8}",
                ],
                prop_oneof![
                    Just("\"Edm.Int64\"".to_owned()), Just("\"Edm.Double\"".to_owned()), Just("\"Edm.Binary\"".to_owned()),
                    Just("\"Edm.DateTime\"".to_owned()), Just("\"Edm.Guid\"".to_owned()), Just("null".to_owned()),
                    Just("\"NaN\"".to_owned()), Just("[1]".to_owned()), Just("{\"x\":1}".to_owned()),
                    any::<i64>().prop_map(|i| i.to_string()), any::<f64>().prop_map(|f| format!("{f:?}")),
                    "\"[ -~]{0,12}\"",
                ],
            ),
            0..8,
        ),
        headers in ".{0,60}",
    ) {
        let body: Vec<String> = members
            .iter()
            .map(|(k, v)| format!("{}:{v}", serde_json::Value::String(k.clone())))
            .collect();
        reparses_the_same(format!("{{{}}}", body.join(",")).as_bytes())?;
        for old in [false, true] {
            let _ = negotiate(Some(&headers), None, old);
            let _ = negotiate(None, Some(&headers), old);
        }
    }
}

/// Whatever `body` parses to renders back (at full metadata, where every type is
/// annotated) to a body that parses to the same keys and properties; a body that does
/// not parse is only required not to panic.
fn reparses_the_same(body: &[u8]) -> Result<(), TestCaseError> {
    let Ok(p) = parse_entity(body) else { return Ok(()) };
    let e = Entity {
        partition_key: p.partition_key.unwrap_or_default(),
        row_key: p.row_key.unwrap_or_default(),
        timestamp: Ticks(MIN_EDM_DATETIME.0),
        properties: p.properties,
    };
    let rendered = entity_response(&e, "tbl", Metadata::Full, None, &URLS);
    let again = parse_entity(&rendered)
        .map_err(|err| TestCaseError::fail(format!("{err}: {}", String::from_utf8_lossy(&rendered))))?;
    prop_assert_eq!(again.partition_key.unwrap_or_default(), e.partition_key);
    prop_assert_eq!(again.row_key.unwrap_or_default(), e.row_key);
    prop_assert!(same(&again.properties, &e.properties), "{:?} != {:?}", again.properties, e.properties);
    Ok(())
}

/// Strings dense in what JSON must escape, around runs long enough for the eight-byte
/// scan (and ASCII just beside the escaped ranges: 0x1F/0x20, 0x21/0x22/0x23, 0x5B-0x5D,
/// 0x7F and multi-byte characters).
fn escapable() -> impl Strategy<Value = String> {
    let piece = prop_oneof!["[\"\\\\\u{0}-\u{1F} !#\\[\\]\u{7F}é😀]{0,3}", "[a-z]{0,24}", any::<String>(),];
    proptest::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn strings_are_escaped_exactly_as_serde_json_does(s in escapable()) {
        let mut out = b"prefix".to_vec();
        super::render::write_json_str(&mut out, &s);
        let expected = serde_json::to_vec(&s).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&out[..6], b"prefix");
        prop_assert_eq!(String::from_utf8_lossy(&out[6..]), String::from_utf8_lossy(&expected));
    }
}

#[test]
fn every_byte_value_is_escaped_as_serde_json_does() {
    for c in (0u32..0x80).filter_map(char::from_u32) {
        for at in 0..17 {
            let s: String = "x".repeat(at) + &c.to_string() + &"y".repeat(9);
            let mut out = Vec::new();
            super::render::write_json_str(&mut out, &s);
            assert_eq!(out, serde_json::to_vec(&s).unwrap(), "{c:?} at {at}");
        }
    }
}

/// One media range as clients write them, with every case and spacing variation the
/// classifier must see through, and some it must refuse.
fn media_range() -> impl Strategy<Value = String> {
    let mime = prop_oneof![
        Just("application/json"),
        Just("APPLICATION/Json"),
        Just("application/atom+xml"),
        Just("Application/XML"),
        Just("*/*"),
        Just("application/*"),
        Just("text/plain"),
        Just(""),
    ];
    let param = prop_oneof![
        Just("odata=nometadata"),
        Just("ODATA=MinimalMetadata"),
        Just("odata=fullmetadata"),
        Just("odata=verbose"),
        Just("odata.metadata=none"),
        Just("odata.metadata=\"full\""),
        Just("Odata.Metadata=minimal"),
        Just("odata.metadata=nometadata"),
        Just("odata=none"),
        Just("streaming=true"),
        Just("charset=utf-8"),
        Just("q=0"),
        Just("q=0.5"),
        Just("q=junk"),
        Just("odata"),
        Just(" odata = nometadata "),
    ];
    (mime, proptest::collection::vec(param, 0..4), "[ ]{0,2}").prop_map(|(m, ps, pad)| {
        let mut r = format!("{pad}{m}");
        for p in ps {
            r.push(';');
            r.push_str(p);
        }
        r
    })
}

/// The classifier as first written (lowercased copies of every part), the model for the
/// allocation-free one.
fn classify_model(range: &str) -> Kind {
    let mut parts = range.split(';');
    let mime = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    match mime.as_str() {
        "*/*" | "application/*" => Kind::Any,
        "application/atom+xml" | "application/xml" => Kind::Atom,
        "application/json" => {
            let mut level = Metadata::Minimal;
            for p in parts {
                let Some((k, v)) = p.split_once('=') else { continue };
                let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().trim_matches('"').to_ascii_lowercase());
                level = match (k.as_str(), v.as_str()) {
                    ("odata", "nometadata") | ("odata.metadata", "none") => Metadata::None,
                    ("odata", "minimalmetadata") | ("odata.metadata", "minimal") => Metadata::Minimal,
                    ("odata", "fullmetadata") | ("odata.metadata", "full") => Metadata::Full,
                    ("odata" | "odata.metadata", _) => return Kind::Unsupported,
                    _ => level,
                };
            }
            Kind::Json(level)
        }
        _ => Kind::Unsupported,
    }
}

proptest! {
    /// `classify` agrees with its model, and the one-range shortcut of `negotiate` with
    /// the general path over a list.
    #[test]
    fn negotiation_shortcuts_agree_with_the_general_path(r in media_range(), junk in "[ -~]{0,24}") {
        prop_assert_eq!(classify(&r), classify_model(&r));
        prop_assert_eq!(classify(&junk), classify_model(&junk));
        if !r.trim().is_empty() {
            for old in [false, true] {
                prop_assert_eq!(negotiate(Some(&r), None, old), negotiate_ranges(r.trim(), old));
            }
        }
    }
}
