//! Unit tests for the odata module: content negotiation, entity parsing and typing,
//! and every validation error with its code.

use super::*;
use aztable_model::error::ErrorCode;
use aztable_model::{EdmValue, Ticks};

fn guid() -> [u8; 16] {
    aztable_model::edm::parse_guid("c9da6455-213d-42c9-9a79-3e9149a57833").unwrap()
}

fn code(r: Result<ParsedEntity, ApiError>) -> ErrorCode {
    r.expect_err("expected an error").code
}

fn parse(s: &str) -> Result<ParsedEntity, ApiError> {
    parse_entity(s.as_bytes())
}

fn one(s: &str) -> EdmValue {
    let p = parse(s).unwrap();
    assert_eq!(p.properties.len(), 1, "{s}");
    p.properties.into_iter().next().unwrap().1
}

// ---- negotiation ----

const NEW: bool = false; // a version from 2015-12-11 on: JSON only
const OLD: bool = true; // a version before 2015-12-11: Atom too

fn json(md: Metadata) -> Result<Format, ApiError> {
    Ok(Format::Json(md))
}

#[test]
fn negotiation_levels() {
    let n = |a: Option<&str>, f: Option<&str>| negotiate(a, f, NEW);
    assert_eq!(n(None, None), json(Metadata::Minimal));
    assert_eq!(n(Some(""), None), json(Metadata::Minimal));
    assert_eq!(n(Some("application/json;odata=nometadata"), None), json(Metadata::None));
    assert_eq!(n(Some("application/json;odata=minimalmetadata"), None), json(Metadata::Minimal));
    assert_eq!(n(Some("application/json;odata=fullmetadata"), None), json(Metadata::Full));
    assert_eq!(n(Some("application/json"), None), json(Metadata::Minimal));
    assert_eq!(n(Some("*/*"), None), json(Metadata::Minimal));
    assert_eq!(n(Some("application/*"), None), json(Metadata::Minimal));
    assert_eq!(n(Some("Application/JSON; ODATA=FullMetadata"), None), json(Metadata::Full));
    assert_eq!(
        n(Some("application/json;odata=fullmetadata;streaming=true;charset=utf-8"), None),
        json(Metadata::Full)
    );
    assert_eq!(n(Some("application/json;odata.metadata=none"), None), json(Metadata::None));
}

#[test]
fn negotiation_lists_and_q_values() {
    let n = |a: &str| negotiate(Some(a), None, NEW);
    assert_eq!(n("application/atom+xml, application/json;odata=nometadata"), json(Metadata::None));
    assert_eq!(n("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"), json(Metadata::Minimal));
    assert_eq!(
        n("application/json;odata=nometadata;q=0.5, application/json;odata=fullmetadata"),
        json(Metadata::Full)
    );
    assert_eq!(
        n("application/json;odata=nometadata, application/json;odata=fullmetadata"),
        json(Metadata::None)
    );
    assert_eq!(n("application/json;odata=fullmetadata;q=0, */*"), json(Metadata::Minimal));
}

#[test]
fn negotiation_refusals() {
    let err = |a: Option<&str>, f: Option<&str>| negotiate(a, f, NEW).unwrap_err();
    for atom in ["application/atom+xml", "application/xml", "application/atom+xml, text/plain"] {
        let e = err(Some(atom), None);
        assert_eq!(e.code, ErrorCode::AtomFormatNotSupported, "{atom}");
        assert_eq!(e.status(), 415);
    }
    let e = err(Some("application/json;q=0, application/atom+xml"), None);
    assert_eq!(e.code, ErrorCode::AtomFormatNotSupported);
    for other in ["text/html", "application/json;odata=verbose", "image/png, text/plain"] {
        let e = err(Some(other), None);
        assert_eq!(e.code, ErrorCode::MediaTypeNotSupported, "{other}");
        assert_eq!(e.status(), 415);
    }
    // the same refusals under an old version, where Atom is served instead
    for other in ["text/html", "application/json;odata=verbose", "image/png, text/plain"] {
        assert_eq!(negotiate(Some(other), None, OLD).unwrap_err().code, ErrorCode::MediaTypeNotSupported);
    }
}

#[test]
fn negotiation_format_param_wins() {
    let atom = Some("application/atom+xml");
    assert_eq!(negotiate(atom, Some("application/json;odata=fullmetadata"), NEW), json(Metadata::Full));
    assert_eq!(negotiate(atom, Some("json"), NEW), json(Metadata::Minimal));
    assert_eq!(
        negotiate(Some("application/json;odata=fullmetadata"), Some("application/json"), NEW),
        json(Metadata::Minimal)
    );
    assert_eq!(negotiate(atom, Some(""), NEW), Err(ApiError::new(ErrorCode::AtomFormatNotSupported)));
    assert_eq!(negotiate(None, Some("atom"), NEW).unwrap_err().code, ErrorCode::AtomFormatNotSupported);
    assert_eq!(negotiate(None, Some("xml"), NEW).unwrap_err().code, ErrorCode::AtomFormatNotSupported);
    assert_eq!(negotiate(None, Some("csv"), NEW).unwrap_err().code, ErrorCode::MediaTypeNotSupported);
    assert_eq!(negotiate(None, Some("atom"), OLD), Ok(Format::Atom));
    assert_eq!(negotiate(Some("application/json"), Some("xml"), OLD), Ok(Format::Atom));
    assert_eq!(negotiate(atom, Some("json"), OLD), json(Metadata::Minimal));
}

#[test]
fn atom_is_served_and_the_default_before_2015_12_11() {
    let n = |a: Option<&str>| negotiate(a, None, OLD);
    for atom in [
        None,
        Some(""),
        Some("application/atom+xml"),
        Some("application/xml"),
        Some("application/atom+xml,application/xml"),
        Some("*/*"),
        Some("application/*"),
        Some("application/atom+xml;q=0.9, application/json;q=0.5"),
        Some("text/html, application/atom+xml"),
    ] {
        assert_eq!(n(atom), Ok(Format::Atom), "{atom:?}");
    }
    assert_eq!(n(Some("application/json;odata=nometadata")), json(Metadata::None));
    assert_eq!(n(Some("application/json;q=0.9, application/atom+xml;q=0.5")), json(Metadata::Minimal));
    assert_eq!(n(Some("application/json, application/atom+xml")), json(Metadata::Minimal));
    assert!(atom_allowed("2015-04-05") && atom_allowed("2009-09-19") && atom_allowed("2013-08-15"));
    assert!(!atom_allowed("2015-12-11") && !atom_allowed("2019-02-02") && !atom_allowed("2026-06-06"));
}

#[test]
fn request_bodies_are_read_as_declared() {
    let atom_body = b"<entry/>";
    let fmt = |ct: Option<&str>, body: &[u8], old: bool| body_format(ct, body, old);
    assert_eq!(fmt(Some("application/json"), atom_body, OLD), json(Metadata::Minimal));
    assert_eq!(fmt(Some("application/atom+xml;type=entry"), b"{}", OLD), Ok(Format::Atom));
    assert_eq!(fmt(Some("Application/XML"), b"", OLD), Ok(Format::Atom));
    assert_eq!(
        fmt(Some("application/atom+xml"), atom_body, NEW).unwrap_err().code,
        ErrorCode::AtomFormatNotSupported
    );
    for other in ["text/plain", "application/octet-stream"] {
        for old in [OLD, NEW] {
            assert_eq!(fmt(Some(other), b"{}", old).unwrap_err().code, ErrorCode::MediaTypeNotSupported);
        }
    }
    // nothing declared: Atom only where Atom is served and the body looks like XML
    assert_eq!(fmt(None, b"\xEF\xBB\xBF  <entry/>", OLD), Ok(Format::Atom));
    assert_eq!(fmt(None, b"{}", OLD), json(Metadata::Minimal));
    assert_eq!(fmt(Some(" ; x=y"), atom_body, NEW), json(Metadata::Minimal));
}

#[test]
fn errors_are_xml_where_atom_was_negotiated_or_refused() {
    let xml = |a: Option<&str>, f: Option<&str>, old: bool| errors_in_xml(a, f, old);
    assert!(xml(Some("application/atom+xml"), None, NEW));
    assert!(xml(Some("application/atom+xml"), None, OLD));
    assert!(xml(None, None, OLD));
    assert!(!xml(None, None, NEW));
    assert!(!xml(Some("application/json"), None, OLD));
    assert!(!xml(Some("text/html"), None, NEW));
    assert!(!xml(Some("text/html"), None, OLD));
    assert!(xml(None, Some("atom"), NEW));
    assert!(!xml(Some("application/atom+xml"), Some("json"), OLD));
}

#[test]
fn content_types() {
    assert_eq!(
        Metadata::None.content_type(),
        "application/json;odata=nometadata;streaming=true;charset=utf-8"
    );
    assert_eq!(
        Metadata::Minimal.content_type(),
        "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
    );
    assert_eq!(
        Metadata::Full.content_type(),
        "application/json;odata=fullmetadata;streaming=true;charset=utf-8"
    );
}

// ---- parsing: typing ----

#[test]
fn parses_the_sdk_request_body() {
    // As sent by azure-data-tables (Python) in the service's own test recordings.
    let body = r#"{"PartitionKey": "pk1", "PartitionKey@odata.type": "Edm.String", "RowKey": "rk1",
        "RowKey@odata.type": "Edm.String", "age": 39, "sex": "male", "sex@odata.type": "Edm.String",
        "married": true, "ratio": 3.1, "ratio@odata.type": "Edm.Double", "evenratio": 3.0,
        "evenratio@odata.type": "Edm.Double", "double": 5, "double@odata.type": "Edm.Double",
        "large": 933311100, "Birthday": "1973-10-04T00:00:00.000000Z", "Birthday@odata.type": "Edm.DateTime",
        "binary": "YmluYXJ5", "binary@odata.type": "Edm.Binary",
        "clsid": "c9da6455-213d-42c9-9a79-3e9149a57833", "clsid@odata.type": "Edm.Guid",
        "n64@odata.type": "Edm.Int64", "n64": "255"}"#;
    let p = parse(body).unwrap();
    assert_eq!(p.partition_key.as_deref(), Some("pk1"));
    assert_eq!(p.row_key.as_deref(), Some("rk1"));
    let expected = vec![
        ("age", EdmValue::Int32(39)),
        ("sex", EdmValue::String("male".into())),
        ("married", EdmValue::Boolean(true)),
        ("ratio", EdmValue::Double(3.1)),
        ("evenratio", EdmValue::Double(3.0)),
        ("double", EdmValue::Double(5.0)),
        ("large", EdmValue::Int32(933_311_100)),
        ("Birthday", EdmValue::DateTime(Ticks::parse("1973-10-04T00:00:00Z").unwrap())),
        ("binary", EdmValue::Binary(b"binary".to_vec())),
        ("clsid", EdmValue::Guid(guid())),
        ("n64", EdmValue::Int64(255)),
    ];
    let expected: Vec<(String, EdmValue)> = expected.into_iter().map(|(n, v)| (n.to_owned(), v)).collect();
    assert_eq!(p.properties, expected);
}

#[test]
fn inference_without_annotation() {
    assert_eq!(one(r#"{"a":"s"}"#), EdmValue::String("s".into()));
    assert_eq!(one(r#"{"a":false}"#), EdmValue::Boolean(false));
    assert_eq!(one(r#"{"a":2147483647}"#), EdmValue::Int32(i32::MAX));
    assert_eq!(one(r#"{"a":-2147483648}"#), EdmValue::Int32(i32::MIN));
    assert_eq!(one(r#"{"a":2147483648}"#), EdmValue::Double(2_147_483_648.0));
    assert_eq!(one(r#"{"a":-5000000000}"#), EdmValue::Double(-5e9));
    assert_eq!(one(r#"{"a":100000000000000000000000}"#), EdmValue::Double(1e23));
    assert_eq!(one(r#"{"a":1.0}"#), EdmValue::Double(1.0));
    assert_eq!(one(r#"{"a":1e2}"#), EdmValue::Double(100.0));
    assert_eq!(one(r#"{"a":-0.5}"#), EdmValue::Double(-0.5));
    assert_eq!(one(r#"{"a":"2020-01-01T00:00:00Z"}"#), EdmValue::String("2020-01-01T00:00:00Z".into()));
}

#[test]
fn annotated_values() {
    assert_eq!(one(r#"{"a@odata.type":"Edm.Int64","a":"-9223372036854775808"}"#), EdmValue::Int64(i64::MIN));
    assert_eq!(one(r#"{"a":"9223372036854775807","a@odata.type":"Edm.Int64"}"#), EdmValue::Int64(i64::MAX));
    assert_eq!(one(r#"{"a":7,"a@odata.type":"Edm.Int32"}"#), EdmValue::Int32(7));
    assert_eq!(one(r#"{"a":"7","a@odata.type":"Edm.Int32"}"#), EdmValue::Int32(7));
    assert_eq!(one(r#"{"a":"1.5","a@odata.type":"Edm.Double"}"#), EdmValue::Double(1.5));
    assert_eq!(one(r#"{"a":"-1e-3","a@odata.type":"Edm.Double"}"#), EdmValue::Double(-0.001));
    assert_eq!(one(r#"{"a":"Infinity","a@odata.type":"Edm.Double"}"#), EdmValue::Double(f64::INFINITY));
    assert_eq!(one(r#"{"a":"-Infinity","a@odata.type":"Edm.Double"}"#), EdmValue::Double(f64::NEG_INFINITY));
    assert!(matches!(one(r#"{"a":"NaN","a@odata.type":"Edm.Double"}"#), EdmValue::Double(d) if d.is_nan()));
    assert_eq!(one(r#"{"a":true,"a@odata.type":"Edm.Boolean"}"#), EdmValue::Boolean(true));
    assert_eq!(one(r#"{"a":"false","a@odata.type":"Edm.Boolean"}"#), EdmValue::Boolean(false));
    assert_eq!(one(r#"{"a":"12","a@odata.type":"Edm.String"}"#), EdmValue::String("12".into()));
    assert_eq!(
        one(r#"{"a":"1601-01-01T00:00:00Z","a@odata.type":"Edm.DateTime"}"#),
        EdmValue::DateTime(aztable_model::time::MIN_EDM_DATETIME)
    );
    assert_eq!(
        one(r#"{"a":"9999-12-31T23:59:59.9999999Z","a@odata.type":"Edm.DateTime"}"#),
        EdmValue::DateTime(aztable_model::time::MAX_EDM_DATETIME)
    );
    assert_eq!(
        one(r#"{"a":"C9DA6455-213D-42C9-9A79-3E9149A57833","a@odata.type":"Edm.Guid"}"#),
        EdmValue::Guid(guid())
    );
    assert_eq!(one(r#"{"a":"","a@odata.type":"Edm.Binary"}"#), EdmValue::Binary(vec![]));
    assert_eq!(one(r#"{"a":"AQID","a@odata.type":"Edm.Binary"}"#), EdmValue::Binary(vec![1, 2, 3]));
    assert_eq!(one(r#"{"a":"AQI=","a@odata.type":"Edm.Binary"}"#), EdmValue::Binary(vec![1, 2]));
    assert_eq!(one(r#"{"a":"AQI","a@odata.type":"Edm.Binary"}"#), EdmValue::Binary(vec![1, 2]));
}

#[test]
fn drops_nulls_timestamp_and_control_information() {
    let body = r#"{"odata.metadata":"x","odata.etag":"W/\"x\"","odata.type":"a.b","Timestamp":"2020-01-01T00:00:00Z",
        "Timestamp@odata.type":"Edm.Whatever","PartitionKey":"p","RowKey":"","gone":null,
        "gone2@odata.type":"Edm.Int64","gone2":null,"kept":1}"#;
    let p = parse(body).unwrap();
    assert_eq!(p.partition_key.as_deref(), Some("p"));
    assert_eq!(p.row_key.as_deref(), Some(""));
    assert_eq!(p.properties, vec![("kept".to_owned(), EdmValue::Int32(1))]);
    let p = parse(r#"{"PartitionKey":null}"#).unwrap();
    assert_eq!(p.partition_key, None);
    assert_eq!(p.row_key, None);
    // Keys are returned as sent; their characters are the service layer's business.
    let p = parse(r#"{"PartitionKey":"a/b#c","RowKey":"\u0001"}"#).unwrap();
    assert_eq!((p.partition_key.unwrap(), p.row_key.unwrap()), ("a/b#c".to_owned(), "\u{1}".to_owned()));
    assert!(parse("\u{feff}{}").is_ok());
}

#[test]
fn table_name_body() {
    assert_eq!(parse_table_name(br#"{"TableName":"mytable"}"#).unwrap(), "mytable");
    assert_eq!(parse_table_name(br#"{"odata.type":"x","TableName":"t1"}"#).unwrap(), "t1");
    assert_eq!(parse_table_name(br#"{"TableName":5}"#).unwrap_err().code, ErrorCode::InvalidInput);
    assert_eq!(parse_table_name(b"[]").unwrap_err().code, ErrorCode::InvalidInput);
    assert_eq!(parse_table_name(b"{").unwrap_err().code, ErrorCode::InvalidInput);
    assert_eq!(parse_table_name(b"{}").unwrap_err().code, ErrorCode::PropertiesNeedValue);
    assert_eq!(
        parse_table_name(br#"{"TableName":"a","TableName":"b"}"#).unwrap_err().code,
        ErrorCode::DuplicatePropertiesSpecified
    );
}

// ---- parsing: validation errors ----

#[test]
fn malformed_bodies_are_invalid_input() {
    for body in
        ["", "   ", "{", "[]", "null", "5", r#""x""#, "{} {}", r#"{"a":1,}"#, r#"{"a":[1]}"#, r#"{"a":{}}"#]
    {
        assert_eq!(code(parse(body)), ErrorCode::InvalidInput, "{body:?}");
    }
    assert_eq!(code(parse_entity(&[0xff, 0xfe])), ErrorCode::InvalidInput);
    assert_eq!(code(parse(r#"{"a":1e400}"#)), ErrorCode::InvalidInput);
}

#[test]
fn wrong_typed_values_are_invalid_input() {
    let cases = [
        r#"{"PartitionKey":5}"#,
        r#"{"RowKey":true}"#,
        r#"{"PartitionKey":"p","PartitionKey@odata.type":"Edm.Int32"}"#,
        r#"{"a":5,"a@odata.type":"Edm.Int64"}"#,
        r#"{"a":"abc","a@odata.type":"Edm.Int64"}"#,
        r#"{"a":"9223372036854775808","a@odata.type":"Edm.Int64"}"#,
        r#"{"a":" 5","a@odata.type":"Edm.Int64"}"#,
        r#"{"a":2147483648,"a@odata.type":"Edm.Int32"}"#,
        r#"{"a":1.5,"a@odata.type":"Edm.Int32"}"#,
        r#"{"a":"x","a@odata.type":"Edm.Int32"}"#,
        r#"{"a":"abc","a@odata.type":"Edm.Double"}"#,
        r#"{"a":"inf","a@odata.type":"Edm.Double"}"#,
        r#"{"a":"nan","a@odata.type":"Edm.Double"}"#,
        r#"{"a":"1e999","a@odata.type":"Edm.Double"}"#,
        r#"{"a":"1e","a@odata.type":"Edm.Double"}"#,
        r#"{"a":true,"a@odata.type":"Edm.Double"}"#,
        r#"{"a":1,"a@odata.type":"Edm.Boolean"}"#,
        r#"{"a":1,"a@odata.type":"Edm.String"}"#,
        r#"{"a":"1600-12-31T23:59:59Z","a@odata.type":"Edm.DateTime"}"#,
        r#"{"a":"yesterday","a@odata.type":"Edm.DateTime"}"#,
        r#"{"a":"xyz","a@odata.type":"Edm.Guid"}"#,
        r#"{"a":"!!!!","a@odata.type":"Edm.Binary"}"#,
        r#"{"a":5,"a@odata.type":"Edm.Binary"}"#,
        r#"{"a":"x","a@odata.type":"Edm.Decimal"}"#,
        r#"{"a":"x","a@odata.type":5}"#,
        r#"{"a@odata.type":"Edm.Int64"}"#,
        r#"{"b":1,"a@odata.type":"Edm.Int64"}"#,
        r#"{"a":[],"a@odata.type":"Edm.String"}"#,
    ];
    for body in cases {
        let err = parse(body).expect_err(body);
        assert_eq!(err.code, ErrorCode::InvalidInput, "{body}");
        assert_eq!(err.status(), 400);
    }
}

#[test]
fn duplicates() {
    for body in [
        r#"{"a":1,"a":2}"#,
        r#"{"a":1,"b":2,"a":null}"#,
        r#"{"a":"1","a@odata.type":"Edm.Int64","a@odata.type":"Edm.Int64"}"#,
        r#"{"PartitionKey":"a","PartitionKey":"b"}"#,
    ] {
        assert_eq!(code(parse(body)), ErrorCode::DuplicatePropertiesSpecified, "{body}");
    }
}

#[test]
fn property_names() {
    assert_eq!(code(parse(r#"{"a-b":1}"#)), ErrorCode::PropertyNameInvalid);
    assert_eq!(code(parse(r#"{"1a":1}"#)), ErrorCode::PropertyNameInvalid);
    assert_eq!(code(parse(r#"{"":1}"#)), ErrorCode::PropertyNameInvalid);
    assert_eq!(code(parse(r#"{"a@odata.etag":1}"#)), ErrorCode::PropertyNameInvalid);
    let long = format!(r#"{{"{}":1}}"#, "a".repeat(256));
    assert_eq!(code(parse(&long)), ErrorCode::PropertyNameTooLong);
    let ok = format!(r#"{{"{}":1}}"#, "a".repeat(255));
    assert!(parse(&ok).is_ok());
}

fn object_with(n: usize, value: &str) -> String {
    let members: Vec<String> = (0..n).map(|i| format!(r#""p{i}":{value}"#)).collect();
    format!(r#"{{"PartitionKey":"p","RowKey":"r",{}}}"#, members.join(","))
}

#[test]
fn too_many_properties() {
    assert_eq!(parse(&object_with(252, "1")).unwrap().properties.len(), 252);
    assert_eq!(code(parse(&object_with(253, "1"))), ErrorCode::TooManyProperties);
    // Null members are not stored, so they do not count.
    let with_null = object_with(252, "1").replacen('{', r#"{"z":null,"#, 1);
    assert!(parse(&with_null).is_ok());
}

#[test]
fn value_size_limits() {
    let s = |n: usize, unit: &str| format!(r#"{{"a":"{}"}}"#, unit.repeat(n));
    assert!(parse(&s(32 * 1024, "x")).is_ok());
    assert_eq!(code(parse(&s(32 * 1024 + 1, "x"))), ErrorCode::PropertyValueTooLarge);
    assert!(parse(&s(32 * 1024, "é")).is_ok());
    assert!(parse(&s(16 * 1024, "😀")).is_ok()); // two UTF-16 units each
    assert_eq!(code(parse(&s(16 * 1024 + 1, "😀"))), ErrorCode::PropertyValueTooLarge);
    use base64::Engine as _;
    let b = |n: usize| {
        let enc = base64::engine::general_purpose::STANDARD.encode(vec![7u8; n]);
        format!(r#"{{"a":"{enc}","a@odata.type":"Edm.Binary"}}"#)
    };
    assert!(parse(&b(64 * 1024)).is_ok());
    assert_eq!(code(parse(&b(64 * 1024 + 1))), ErrorCode::PropertyValueTooLarge);
}

#[test]
fn entity_size_limit() {
    let big = format!(r#""{}""#, "x".repeat(30_000)); // 60,000 bytes as UTF-16
    assert!(parse(&object_with(17, &big)).is_ok()); // ~1.02 MB decimal, < 1 MiB
    assert_eq!(code(parse(&object_with(18, &big))), ErrorCode::EntityTooLarge);
    let props = vec![("ab".to_owned(), EdmValue::Int32(1))];
    assert_eq!(aztable_model::entity::data_size("p", "rk", &props), 2 + 4 + 8 + 4 + 4);
}

#[test]
fn body_types() {
    use aztable_model::error::ErrorCode;
    // under a version that refuses Atom
    let code = |ct: Option<&str>| crate::odata::body_format(ct, b"{}", false).map(|_| ()).map_err(|e| e.code);
    for ok in [
        None,
        Some(""),
        Some("application/json"),
        Some("Application/JSON; charset=utf-8"),
        Some("application/json;odata=nometadata"),
    ] {
        assert_eq!(code(ok), Ok(()), "{ok:?}");
    }
    assert_eq!(code(Some("application/atom+xml")), Err(ErrorCode::AtomFormatNotSupported));
    assert_eq!(code(Some("application/xml;charset=utf-8")), Err(ErrorCode::AtomFormatNotSupported));
    for refused in ["text/plain", "application/octet-stream", "application/jsonx", "text/json"] {
        assert_eq!(code(Some(refused)), Err(ErrorCode::MediaTypeNotSupported), "{refused}");
    }
}

#[test]
fn the_sdks_accept_headers_negotiate_as_any_other_spelling() {
    for accept in [
        "application/json;odata=minimalmetadata",
        "application/json;odata=nometadata",
        "application/json;odata=fullmetadata",
    ] {
        for atom_allowed in [true, false] {
            let fast = super::negotiate(Some(accept), None, atom_allowed).expect("served");
            // the general path: the same range among others that are refused
            let general = super::negotiate(Some(&format!("{accept}, text/html;q=0")), None, atom_allowed);
            assert_eq!(Some(fast), general.ok(), "{accept}");
        }
    }
}
