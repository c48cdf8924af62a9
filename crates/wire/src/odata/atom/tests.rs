//! Unit tests for Atom: the documentation's sample bodies, every Edm type and its
//! lexical forms, every refusal with its code, and the shapes of the responses.

use super::*;
use crate::odata::Urls;
use aztable_model::error::ErrorCode;
use aztable_model::{EdmValue, Entity, Ticks};
use quick_xml::events::Event;
use quick_xml::NsReader;

const URLS: Urls<'static> = Urls { base: "https://myaccount.table.core.windows.net", account: "myaccount" };

fn entry(properties: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="utf-8" standalone="yes"?>
<entry xmlns:d="{D_NS}" xmlns:m="{M_NS}" xmlns="{ATOM_NS}">
  <title /><author><name /></author><updated>2008-09-18T23:46:19.3857256Z</updated><id />
  <content type="application/xml"><m:properties>{properties}</m:properties></content>
</entry>"#
    )
}

fn props(properties: &str) -> Vec<(String, EdmValue)> {
    parse_entity(entry(properties).as_bytes()).expect("parses").properties
}

fn one(property: &str) -> EdmValue {
    let p = props(property);
    assert_eq!(p.len(), 1, "{property}");
    p.into_iter().next().map(|(_, v)| v).expect("one property")
}

fn code(body: &str) -> ErrorCode {
    parse_entity(body.as_bytes()).expect_err("refused").code
}

#[test]
fn the_documented_insert_body() {
    // The Insert Entity request body of the REST documentation.
    let body = format!(
        r#"<?xml version="1.0" encoding="utf-8" standalone="yes"?>
<entry xmlns:d="{D_NS}" xmlns:m="{M_NS}" xmlns="{ATOM_NS}">
  <title />
  <updated>2008-09-18T23:46:19.3857256Z</updated>
  <author>
    <name />
  </author>
  <id />
  <content type="application/xml">
    <m:properties>
      <d:Address>Mountain View</d:Address>
      <d:Age m:type="Edm.Int32">23</d:Age>
      <d:AmountDue m:type="Edm.Double">200.23</d:AmountDue>
      <d:CustomerCode m:type="Edm.Guid">c9da6455-213d-42c9-9a79-3e9149a57833</d:CustomerCode>
      <d:CustomerSince m:type="Edm.DateTime">2008-07-10T00:00:00</d:CustomerSince>
      <d:IsActive m:type="Edm.Boolean">true</d:IsActive>
      <d:NumOfOrders m:type="Edm.Int64">255</d:NumOfOrders>
      <d:PartitionKey>mypartitionkey</d:PartitionKey>
      <d:RowKey>myrowkey1</d:RowKey>
      <d:Timestamp m:type="Edm.DateTime">0001-01-01T00:00:00</d:Timestamp>
    </m:properties>
  </content>
</entry>"#
    );
    let p = parse_entity(body.as_bytes()).expect("parses");
    assert_eq!(p.partition_key.as_deref(), Some("mypartitionkey"));
    assert_eq!(p.row_key.as_deref(), Some("myrowkey1"));
    let guid = aztable_model::edm::parse_guid("c9da6455-213d-42c9-9a79-3e9149a57833").expect("guid");
    assert_eq!(
        p.properties,
        vec![
            ("Address".into(), EdmValue::String("Mountain View".into())),
            ("Age".into(), EdmValue::Int32(23)),
            ("AmountDue".into(), EdmValue::Double(200.23)),
            ("CustomerCode".into(), EdmValue::Guid(guid)),
            ("CustomerSince".into(), EdmValue::DateTime(Ticks::parse("2008-07-10T00:00:00Z").expect("date"))),
            ("IsActive".into(), EdmValue::Boolean(true)),
            ("NumOfOrders".into(), EdmValue::Int64(255)),
        ]
    );
}

#[test]
fn namespaces_spelled_with_https_are_read_too() {
    // As printed in a widely read article on the service: every namespace with https.
    let body = r#"<?xml version="1.0" encoding="utf-8" standalone="yes"?>
<entry xmlns:d="https://schemas.microsoft.com/ado/2007/08/dataservices" xmlns:m="https://schemas.microsoft.com/ado/2007/08/dataservices/metadata" xmlns="https://www.w3.org/2005/Atom">
  <title /><author><name /></author><updated>2010-10-16T15:48:53.0011614Z</updated><id />
  <content type="application/xml">
    <m:properties>
      <d:Favorite m:type="Edm.Boolean">false</d:Favorite>
      <d:Language>English</d:Language>
      <d:PartitionKey>Action</d:PartitionKey>
      <d:Rating m:type="Edm.Double">4.5</d:Rating>
      <d:RowKey>Cop Out</d:RowKey>
      <d:Timestamp m:type="Edm.DateTime">0001-01-01T00:00:00</d:Timestamp>
    </m:properties>
  </content>
</entry>"#;
    let p = parse_entity(body.as_bytes()).expect("parses");
    assert_eq!((p.partition_key.as_deref(), p.row_key.as_deref()), (Some("Action"), Some("Cop Out")));
    assert_eq!(p.properties.len(), 3);
    assert_eq!(p.properties[2], ("Rating".into(), EdmValue::Double(4.5)));
    // other namespaces are not the service's
    let wrong = body.replace("https://schemas.microsoft.com/ado/2007/08/dataservices/metadata", "urn:x");
    assert_eq!(code(&wrong), ErrorCode::InvalidInput);
}

#[test]
fn every_edm_type_and_its_lexical_forms() {
    assert_eq!(one("<d:A>text</d:A>"), EdmValue::String("text".into()));
    assert_eq!(one(r#"<d:A m:type="Edm.String">  padded  </d:A>"#), EdmValue::String("  padded  ".into()));
    assert_eq!(one("<d:A></d:A>"), EdmValue::String(String::new()));
    assert_eq!(one("<d:A/>"), EdmValue::String(String::new()));
    assert_eq!(one(r#"<d:A m:type="Edm.Int32"> -2147483648 </d:A>"#), EdmValue::Int32(i32::MIN));
    assert_eq!(one(r#"<d:A m:type="Edm.Int64">9223372036854775807</d:A>"#), EdmValue::Int64(i64::MAX));
    assert_eq!(one(r#"<d:A m:type="Edm.Int64">-9223372036854775808</d:A>"#), EdmValue::Int64(i64::MIN));
    for (text, want) in
        [("4.5", 4.5), ("0", 0.0), ("1E+300", 1e300), ("-2e-5", -2e-5), ("INF", f64::INFINITY)]
    {
        assert_eq!(
            one(&format!(r#"<d:A m:type="Edm.Double">{text}</d:A>"#)),
            EdmValue::Double(want),
            "{text}"
        );
    }
    for (text, want) in
        [("-INF", f64::NEG_INFINITY), ("Infinity", f64::INFINITY), ("-Infinity", f64::NEG_INFINITY)]
    {
        assert_eq!(
            one(&format!(r#"<d:A m:type="Edm.Double">{text}</d:A>"#)),
            EdmValue::Double(want),
            "{text}"
        );
    }
    assert!(matches!(one(r#"<d:A m:type="Edm.Double">NaN</d:A>"#), EdmValue::Double(d) if d.is_nan()));
    for (text, want) in [("true", true), ("false", false), ("1", true), ("0", false)] {
        assert_eq!(one(&format!(r#"<d:A m:type="Edm.Boolean">{text}</d:A>"#)), EdmValue::Boolean(want));
    }
    let date = |s: &str| EdmValue::DateTime(Ticks::parse(s).expect("date"));
    assert_eq!(one(r#"<d:A m:type="Edm.DateTime">1601-01-01T00:00:00Z</d:A>"#), date("1601-01-01T00:00:00Z"));
    assert_eq!(
        one(r#"<d:A m:type="Edm.DateTime">9999-12-31T23:59:59.9999999Z</d:A>"#),
        date("9999-12-31T23:59:59.9999999Z")
    );
    assert_eq!(
        one(r#"<d:A m:type="Edm.DateTime">2009-03-18T11:48:34.9840639-07:00</d:A>"#),
        date("2009-03-18T18:48:34.9840639Z")
    );
    assert_eq!(
        one(r#"<d:A m:type="Edm.Binary">AQID
      BA==</d:A>"#),
        EdmValue::Binary(vec![1, 2, 3, 4])
    );
    assert_eq!(one(r#"<d:A m:type="Edm.Binary"></d:A>"#), EdmValue::Binary(Vec::new()));
    assert!(matches!(
        one(r#"<d:A m:type="Edm.Guid">C9DA6455-213D-42C9-9A79-3E9149A57833</d:A>"#),
        EdmValue::Guid(_)
    ));
}

#[test]
fn text_is_taken_as_written() {
    assert_eq!(
        one("<d:A>a &lt;b&gt; &amp; &quot;c&apos; &#x41;&#66;</d:A>"),
        EdmValue::String("a <b> & \"c' AB".into())
    );
    assert_eq!(one("<d:A><![CDATA[<x> & ]]]]><![CDATA[>]]></d:A>"), EdmValue::String("<x> & ]]>".into()));
    // XML normalizes literal line ends; a carriage return survives as a reference
    assert_eq!(one("<d:A>a\r\nb\rc&#xD;</d:A>"), EdmValue::String("a\nb\nc\r".into()));
    assert_eq!(one("<d:A>x<!-- note -->y</d:A>"), EdmValue::String("xy".into()));
    assert_eq!(one("<d:A>é😀</d:A>"), EdmValue::String("é😀".into()));
}

#[test]
fn nulls_and_system_properties() {
    let p = parse_entity(
        entry(
            r#"<d:PartitionKey>p</d:PartitionKey><d:RowKey m:null="true" /><d:Gone m:null="true" />
            <d:Also m:type="Edm.Int32" m:null="true"></d:Also><d:Timestamp m:type="Edm.DateTime">junk</d:Timestamp>
            <d:Kept m:null="false">v</d:Kept>"#,
        )
        .as_bytes(),
    )
    .expect("parses");
    assert_eq!((p.partition_key.as_deref(), p.row_key), (Some("p"), None));
    assert_eq!(p.properties, vec![("Kept".into(), EdmValue::String("v".into()))]);
    // a key must be a string
    assert_eq!(
        code(&entry(r#"<d:PartitionKey m:type="Edm.Int32">1</d:PartitionKey>"#)),
        ErrorCode::InvalidInput
    );
    // an entry without properties is an entity without any
    let empty = format!(r#"<entry xmlns="{ATOM_NS}"><content type="application/xml" /></entry>"#);
    assert_eq!(parse_entity(empty.as_bytes()).expect("parses").properties, vec![]);
    assert!(parse_entity(format!(r#"<entry xmlns="{ATOM_NS}"/>"#).as_bytes()).is_ok());
}

#[test]
fn refusals_and_their_codes() {
    let invalid = [
        entry(r#"<d:A m:type="Edm.Int32">x</d:A>"#),
        entry(r#"<d:A m:type="Edm.Int32">2147483648</d:A>"#),
        entry(r#"<d:A m:type="Edm.Int64">1.5</d:A>"#),
        entry(r#"<d:A m:type="Edm.Double">1,5</d:A>"#),
        entry(r#"<d:A m:type="Edm.Boolean">yes</d:A>"#),
        entry(r#"<d:A m:type="Edm.DateTime">1600-12-31T23:59:59Z</d:A>"#),
        entry(r#"<d:A m:type="Edm.Guid">not-a-guid</d:A>"#),
        entry(r#"<d:A m:type="Edm.Binary">!!!</d:A>"#),
        entry(r#"<d:A m:type="Edm.Decimal">1</d:A>"#),
        entry(r#"<d:A><d:B>nested</d:B></d:A>"#),
        entry(r#"<x:A xmlns:x="urn:other">1</x:A>"#),
        entry("stray text"),
        entry("<d:A>&bogus;</d:A>"),
        entry("<d:A>unclosed"),
        format!(r#"<feed xmlns="{ATOM_NS}"/>"#),
        "<entry/>".to_owned(),
        format!(r#"<entry xmlns="{ATOM_NS}"/><entry xmlns="{ATOM_NS}"/>"#),
        format!(r#"<!DOCTYPE entry [<!ENTITY e "x">]><entry xmlns="{ATOM_NS}"/>"#),
        entry("").replace("</m:properties></content>", "</m:properties></content><content/>"),
        "{\"PartitionKey\":\"p\"}".to_owned(),
        String::new(),
        "<".to_owned(),
        entry("<d:A>a\u{1}b</d:A>"),
        entry("<d:A>a\u{0}b</d:A>"),
        entry("<d:A>&#x0;</d:A>"),
    ];
    for body in &invalid {
        assert_eq!(code(body), ErrorCode::InvalidInput, "{body}");
    }
    assert_eq!(
        parse_entity(b"<entry xmlns=\"http://www.w3.org/2005/Atom\">\xff</entry>").unwrap_err().code,
        ErrorCode::InvalidInput
    );
    assert_eq!(code(&entry("<d:A>1</d:A><d:A>2</d:A>")), ErrorCode::DuplicatePropertiesSpecified);
    assert_eq!(code(&entry("<d:odata.x>1</d:odata.x>")), ErrorCode::PropertyNameInvalid);
    assert_eq!(
        code(&entry(&format!("<d:{n}>1</d:{n}>", n = "a".repeat(256)))),
        ErrorCode::PropertyNameTooLong
    );
    let many: String = (0..253).map(|i| format!("<d:p{i}>x</d:p{i}>")).collect();
    assert_eq!(code(&entry(&many)), ErrorCode::TooManyProperties);
    assert_eq!(
        code(&entry(&format!("<d:A>{}</d:A>", "x".repeat(32 * 1024 + 1)))),
        ErrorCode::PropertyValueTooLarge
    );
    let big: String = (0..20).map(|i| format!("<d:p{i}>{}</d:p{i}>", "x".repeat(30_000))).collect();
    assert_eq!(code(&entry(&big)), ErrorCode::EntityTooLarge);
}

#[test]
fn table_names() {
    let body = entry("<d:TableName>mytable</d:TableName>");
    assert_eq!(parse_table_name(body.as_bytes()), Ok("mytable".to_owned()));
    assert_eq!(parse_table_name(entry("").as_bytes()).unwrap_err().code, ErrorCode::PropertiesNeedValue);
    let twice = entry("<d:TableName>a</d:TableName><d:TableName>b</d:TableName>");
    assert_eq!(parse_table_name(twice.as_bytes()).unwrap_err().code, ErrorCode::DuplicatePropertiesSpecified);
    assert_eq!(parse_table_name(b"junk").unwrap_err().code, ErrorCode::InvalidInput);
}

/// An element as read back: name with its namespace URI, attributes, text, children.
#[derive(Debug, PartialEq)]
struct Node {
    ns: String,
    name: String,
    attrs: Vec<(String, String)>,
    text: String,
    children: Vec<Node>,
}

impl Node {
    fn child(&self, name: &str) -> &Node {
        self.children.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no {name} in {}", self.name))
    }

    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Reads a whole document into [`Node`]s (attribute names keep their prefixes).
fn tree(body: &[u8]) -> Node {
    let mut reader = NsReader::from_reader(body);
    reader.config_mut().expand_empty_elements = true;
    let mut stack: Vec<Node> = Vec::new();
    let mut buf = Vec::new();
    loop {
        let (ns, ev) = reader.read_resolved_event_into(&mut buf).expect("well-formed");
        let ns = match ns {
            quick_xml::name::ResolveResult::Bound(n) => String::from_utf8_lossy(n.as_ref()).into_owned(),
            _ => String::new(),
        };
        match ev {
            Event::Start(e) => {
                let attrs = e
                    .attributes()
                    .map(|a| a.expect("attribute"))
                    .map(|a| {
                        let v = a.unescape_value().expect("value").into_owned();
                        (String::from_utf8_lossy(a.key.as_ref()).into_owned(), v)
                    })
                    .collect();
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                stack.push(Node { ns, name, attrs, text: String::new(), children: vec![] });
            }
            Event::Text(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&t.xml10_content().expect("text"));
                }
            }
            Event::GeneralRef(r) => {
                if let Some(top) = stack.last_mut() {
                    match r.resolve_char_ref().expect("reference") {
                        Some(c) => top.text.push(c),
                        None => {
                            let name = r.decode().expect("name");
                            top.text.push_str(
                                quick_xml::escape::resolve_predefined_entity(&name).expect("predefined"),
                            );
                        }
                    }
                }
            }
            Event::End(_) => {
                let done = stack.pop().expect("open element");
                match stack.last_mut() {
                    Some(parent) => parent.children.push(done),
                    None => return done,
                }
            }
            Event::Eof => panic!("document ended early"),
            _ => {}
        }
        buf.clear();
    }
}

fn sample_entity() -> Entity {
    Entity {
        partition_key: "my'partition".into(),
        row_key: "row <1>".into(),
        timestamp: Ticks::parse("2008-09-18T23:46:19.4277424Z").expect("date"),
        properties: vec![
            ("Address".into(), EdmValue::String("Mountain View".into())),
            ("Padded".into(), EdmValue::String(" x ".into())),
            ("Age".into(), EdmValue::Int32(23)),
            ("Big".into(), EdmValue::Int64(i64::MIN)),
            ("AmountDue".into(), EdmValue::Double(200.23)),
            ("Whole".into(), EdmValue::Double(5.0)),
            ("Inf".into(), EdmValue::Double(f64::NEG_INFINITY)),
            ("IsActive".into(), EdmValue::Boolean(true)),
            ("Since".into(), EdmValue::DateTime(Ticks::parse("2008-07-10T00:00:00Z").expect("date"))),
            (
                "Code".into(),
                EdmValue::Guid(
                    aztable_model::edm::parse_guid("c9da6455-213d-42c9-9a79-3e9149a57833").expect("guid"),
                ),
            ),
            ("Bytes".into(), EdmValue::Binary(vec![1, 2, 3])),
        ],
    }
}

#[test]
fn an_entity_entry_has_the_services_shape() {
    let e = sample_entity();
    let now = Ticks::parse("2008-09-18T23:46:19.3857256Z").expect("date");
    let body = entity_response(&e, "mytable", None, &URLS, now);
    assert!(body.starts_with(br#"<?xml version="1.0" encoding="utf-8" standalone="yes"?><entry"#));
    let root = tree(&body);
    assert_eq!((root.ns.as_str(), root.name.as_str()), (ATOM_NS, "entry"));
    assert_eq!(root.attr("xml:base"), Some("https://myaccount.table.core.windows.net/"));
    assert_eq!(root.attr("m:etag"), Some(e.etag().as_str()));
    assert_eq!(root.attr("xmlns:d"), Some(D_NS));
    assert_eq!(root.attr("xmlns:m"), Some(M_NS));
    let path = "mytable(PartitionKey='my%27%27partition',RowKey='row%20%3C1%3E')";
    assert_eq!(root.child("id").text, format!("https://myaccount.table.core.windows.net/{path}"));
    assert_eq!(root.child("title").text, "");
    assert_eq!(root.child("updated").text, "2008-09-18T23:46:19.3857256Z");
    assert_eq!(root.child("author").child("name").text, "");
    let link = root.child("link");
    assert_eq!(
        (link.attr("rel"), link.attr("title"), link.attr("href")),
        (Some("edit"), Some("mytable"), Some(path))
    );
    let category = root.child("category");
    assert_eq!(category.attr("term"), Some("myaccount.mytable"));
    assert_eq!(category.attr("scheme"), Some(SCHEME));
    let content = root.child("content");
    assert_eq!(content.attr("type"), Some("application/xml"));
    let props = content.child("properties");
    assert_eq!(props.ns, M_NS);
    let got: Vec<(&str, Option<&str>, &str)> =
        props.children.iter().map(|p| (p.name.as_str(), p.attr("m:type"), p.text.as_str())).collect();
    assert_eq!(
        got,
        vec![
            ("PartitionKey", None, "my'partition"),
            ("RowKey", None, "row <1>"),
            ("Timestamp", Some("Edm.DateTime"), "2008-09-18T23:46:19.4277424Z"),
            ("Address", None, "Mountain View"),
            ("Padded", None, " x "),
            ("Age", Some("Edm.Int32"), "23"),
            ("Big", Some("Edm.Int64"), "-9223372036854775808"),
            ("AmountDue", Some("Edm.Double"), "200.23"),
            ("Whole", Some("Edm.Double"), "5.0"),
            ("Inf", Some("Edm.Double"), "-INF"),
            ("IsActive", Some("Edm.Boolean"), "true"),
            ("Since", Some("Edm.DateTime"), "2008-07-10T00:00:00Z"),
            ("Code", Some("Edm.Guid"), "c9da6455-213d-42c9-9a79-3e9149a57833"),
            ("Bytes", Some("Edm.Binary"), "AQID"),
        ]
    );
    assert!(props.children.iter().all(|p| p.ns == D_NS));
    assert_eq!(props.child("Padded").attr("xml:space"), Some("preserve"));
}

#[test]
fn projections_write_missing_properties_as_null() {
    let e = sample_entity();
    let select = vec!["Age".to_owned(), "Missing".to_owned(), "RowKey".to_owned(), "bad name!".to_owned()];
    let root = tree(&entity_response(&e, "mytable", Some(&select), &URLS, Ticks(0)));
    let props = root.child("content").child("properties");
    let names: Vec<&str> = props.children.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["RowKey", "Age", "Missing"]);
    assert_eq!(props.child("Missing").attr("m:null"), Some("true"));
}

#[test]
fn feeds_have_the_services_shape() {
    let e = sample_entity();
    let now = Ticks::parse("2008-10-01T15:26:13Z").expect("date");
    let root = tree(&entity_feed(&[e.clone(), e.clone()], "Customers", None, &URLS, now));
    assert_eq!((root.ns.as_str(), root.name.as_str()), (ATOM_NS, "feed"));
    assert_eq!(root.attr("xml:base"), Some("https://myaccount.table.core.windows.net/"));
    assert_eq!(root.child("id").text, "https://myaccount.table.core.windows.net/Customers");
    assert_eq!(root.child("title").text, "Customers");
    assert_eq!(root.child("title").attr("type"), Some("text"));
    let link = root.child("link");
    assert_eq!(
        (link.attr("rel"), link.attr("title"), link.attr("href")),
        (Some("self"), Some("Customers"), Some("Customers"))
    );
    let entries: Vec<&Node> = root.children.iter().filter(|c| c.name == "entry").collect();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].attr("m:etag"), Some(e.etag().as_str()));
    assert_eq!(entries[0].attr("xml:base"), None, "declared once, on the feed");

    let empty = tree(&entity_feed(&[], "Customers", None, &URLS, now));
    assert!(empty.children.iter().all(|c| c.name != "entry"));

    let tables = tree(&table_feed(&["mytable".into(), "other".into()], &URLS, now));
    assert_eq!(tables.child("title").text, "Tables");
    assert_eq!(tables.child("id").text, "https://myaccount.table.core.windows.net/Tables");
    let t = tables.child("entry");
    assert_eq!(t.child("id").text, "https://myaccount.table.core.windows.net/Tables('mytable')");
    assert_eq!(t.child("link").attr("href"), Some("Tables('mytable')"));
    assert_eq!(t.child("link").attr("title"), Some("Tables"));
    assert_eq!(t.child("category").attr("term"), Some("myaccount.Tables"));
    assert_eq!(t.child("content").child("properties").child("TableName").text, "mytable");
    assert_eq!(t.attr("m:etag"), None);
}

#[test]
fn the_error_body_is_the_services_bytes() {
    let body = error_body(
        "ResourceNotFound",
        "The specified resource does not exist.",
        "rid",
        "2026-11-23T00:00:00.0000000Z",
    );
    assert_eq!(
        String::from_utf8(body).expect("utf-8"),
        "<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"yes\"?>\
         <error xmlns=\"http://schemas.microsoft.com/ado/2007/08/dataservices/metadata\">\
         <code>ResourceNotFound</code>\
         <message xml:lang=\"en-US\">The specified resource does not exist.\nRequestId:rid\nTime:2026-11-23T00:00:00.0000000Z</message>\
         </error>"
    );
    let escaped = tree(&error_body("C", "a < b & \"c\"\r", "r", "t"));
    assert_eq!(escaped.child("message").text, "a < b & \"c\"\r\nRequestId:r\nTime:t");
}

#[test]
fn characters_xml_cannot_carry_literally_are_references() {
    let e = Entity {
        partition_key: "p".into(),
        row_key: "r".into(),
        timestamp: Ticks(0),
        properties: vec![("A".into(), EdmValue::String("a\u{1}b\rc\td\ne]]>".into()))],
    };
    let body = entity_response(&e, "t", None, &URLS, Ticks(0));
    let text = String::from_utf8(body.clone()).expect("utf-8");
    assert!(text.contains("<d:A>a&#x1;b&#xD;c\td\ne]]&gt;</d:A>"), "{text}");
    assert_eq!(parse_entity(&body).expect("reads back").properties, e.properties);
}
