//! Black-box: the AtomPub wire format (`application/atom+xml`), accepted for `x-ms-version`
//! earlier than 2015-12-11. Covers format negotiation, the shapes of entries, feeds and
//! XML errors, Atom request bodies, round trips between Atom and JSON, and change sets whose
//! operations carry Atom bodies. Responses are read with quick-xml into a small
//! namespace-resolved tree and compared by element namespace, name, attributes and text.
//! The documentation samples used here live in `tests/fixtures/atom/` (see its README).

use crate::common::*;
use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const ATOM: &str = "http://www.w3.org/2005/Atom";
const D: &str = "http://schemas.microsoft.com/ado/2007/08/dataservices";
const M: &str = "http://schemas.microsoft.com/ado/2007/08/dataservices/metadata";
const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";
const SCHEME: &str = "http://schemas.microsoft.com/ado/2007/08/dataservices/scheme";
/// A version that still speaks Atom, and the first that does not.
const OLD: &str = "2013-08-15";
const NEW: &str = "2015-12-11";
const CT_ENTRY: &str = "application/atom+xml;type=entry;charset=utf-8";
const CT_FEED: &str = "application/atom+xml;type=feed;charset=utf-8";
/// The Content-Type of an error under Atom (as in the documentation's batch error sample).
const CT_ERROR: &str = "application/xml";
const ACCEPT_ATOM: &str = "application/atom+xml,application/xml";
const MINIMAL: &str = "application/json;odata=minimalmetadata";
const FULL: &str = "application/json;odata=fullmetadata";
const DECL: &str = r#"<?xml version="1.0" encoding="utf-8" standalone="yes"?>"#;

const DOCS_INSERT_REQUEST: &str = include_str!("../fixtures/atom/insert-entity-request.xml");
const DOCS_INSERT_RESPONSE: &str = include_str!("../fixtures/atom/insert-entity-response.xml");
const DOCS_CREATE_TABLE_REQUEST: &str = include_str!("../fixtures/atom/create-table-request.xml");
const DOCS_CREATE_TABLE_RESPONSE: &str = include_str!("../fixtures/atom/create-table-response.xml");
const DOCS_QUERY_TABLES_RESPONSE: &str = include_str!("../fixtures/atom/query-tables-response.xml");
const DOCS_UPDATE_REQUEST: &str = include_str!("../fixtures/atom/update-entity-request.xml");
const DOCS_ERROR: &str = include_str!("../fixtures/atom/error-response.xml");
const SEED_MOVIE: &str = include_str!("../fixtures/atom/seed-movie-insert-request.xml");

// ---------------------------------------------------------------------------------------
// A namespace-resolved XML tree
// ---------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
struct Attr {
    ns: String,
    name: String,
    value: String,
}

#[derive(Clone, Debug, PartialEq)]
struct El {
    /// Namespace URI ("" when none).
    ns: String,
    /// The name as written (with its prefix, if any).
    qname: String,
    /// Local name.
    name: String,
    /// Attributes other than namespace declarations.
    attrs: Vec<Attr>,
    children: Vec<El>,
    /// The element's own character data (text, CDATA and references), concatenated.
    text: String,
}

fn utf8(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("UTF-8")
}

fn ns_string(r: ResolveResult<'_>) -> String {
    match r {
        ResolveResult::Bound(n) => utf8(n.as_ref()),
        ResolveResult::Unbound => String::new(),
        ResolveResult::Unknown(p) if p == b"xml" => XML_NS.to_owned(),
        ResolveResult::Unknown(p) => panic!("undeclared namespace prefix {:?}", utf8(&p)),
    }
}

fn start_el(r: &NsReader<&[u8]>, ns: String, e: &BytesStart<'_>) -> El {
    let qname = utf8(e.name().as_ref());
    let name = utf8(e.local_name().as_ref());
    let mut attrs = Vec::new();
    for a in e.attributes() {
        let a = a.unwrap_or_else(|err| panic!("bad attribute on <{qname}>: {err}"));
        let key = a.key.as_ref();
        if key == b"xmlns" || key.starts_with(b"xmlns:") {
            continue;
        }
        let (res, local) = r.resolve_attribute(a.key);
        let ans = ns_string(res);
        let value =
            a.unescape_value().unwrap_or_else(|err| panic!("bad attribute value: {err}")).into_owned();
        attrs.push(Attr { ns: ans, name: utf8(local.as_ref()), value });
    }
    El { ns, qname, name, attrs, children: Vec::new(), text: String::new() }
}

/// Parses a whole document; panics (with the document) when it is not well-formed.
fn parse_xml(s: &str) -> El {
    let mut r = NsReader::from_str(s);
    r.config_mut().expand_empty_elements = true;
    let mut stack: Vec<El> = Vec::new();
    let mut root: Option<El> = None;
    loop {
        let (res, ev) = r.read_resolved_event().unwrap_or_else(|e| panic!("not well-formed XML ({e}): {s}"));
        let ns = ns_string(res);
        match ev {
            Event::Start(e) => {
                let el = start_el(&r, ns, &e);
                stack.push(el);
            }
            Event::End(_) => {
                let el = stack.pop().expect("end without start");
                match stack.last_mut() {
                    Some(parent) => parent.children.push(el),
                    None => {
                        assert!(root.is_none(), "more than one root element: {s}");
                        root = Some(el);
                    }
                }
            }
            Event::Text(t) => {
                // As an XML processor reads it: line ends normalized to LF.
                let t = t.xml10_content().expect("text");
                match stack.last_mut() {
                    Some(top) => top.text.push_str(&t),
                    None => assert!(t.trim().is_empty(), "text outside the root element: {s}"),
                }
            }
            Event::CData(t) => {
                stack.last_mut().expect("CDATA outside root").text.push_str(&t.xml10_content().unwrap())
            }
            Event::GeneralRef(g) => {
                let resolved = if g.is_char_ref() {
                    g.resolve_char_ref().expect("char ref").expect("char ref").to_string()
                } else {
                    let name = g.decode().expect("entity name");
                    quick_xml::escape::resolve_predefined_entity(&name)
                        .unwrap_or_else(|| panic!("unknown entity &{name};"))
                        .to_owned()
                };
                stack.last_mut().expect("reference outside root").text.push_str(&resolved);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert!(stack.is_empty(), "unclosed elements: {s}");
    root.unwrap_or_else(|| panic!("no root element: {s:?}"))
}

impl El {
    fn is(&self, ns: &str, name: &str) -> bool {
        self.ns == ns && self.name == name
    }
    fn attr(&self, ns: &str, name: &str) -> Option<&str> {
        self.attrs.iter().find(|a| a.ns == ns && a.name == name).map(|a| a.value.as_str())
    }
    fn kids(&self, ns: &str, name: &str) -> Vec<&El> {
        self.children.iter().filter(|c| c.is(ns, name)).collect()
    }
    /// The only child `{ns}name`.
    fn one(&self, ns: &str, name: &str) -> &El {
        let k = self.kids(ns, name);
        assert_eq!(k.len(), 1, "<{}> must have exactly one {{{ns}}}{name}: {self:#?}", self.qname);
        k[0]
    }
    /// `content/m:properties` of an entry, checking `content type="application/xml"`.
    fn properties(&self) -> &El {
        let content = self.one(ATOM, "content");
        assert_eq!(content.attr("", "type"), Some("application/xml"), "content type");
        content.one(M, "properties")
    }
    /// The properties of an entry, in document order.
    fn props(&self) -> Vec<Prop> {
        self.properties()
            .children
            .iter()
            .map(|p| {
                assert_eq!(p.ns, D, "property {} must be in the d namespace", p.qname);
                assert!(p.children.is_empty(), "property {} has child elements", p.name);
                for a in &p.attrs {
                    let known = (a.ns == M && (a.name == "type" || a.name == "null"))
                        || (a.ns == XML_NS && a.name == "space");
                    assert!(known, "unexpected attribute {a:?} on property {}", p.name);
                }
                Prop {
                    name: p.name.clone(),
                    edm: p.attr(M, "type").map(str::to_owned),
                    null: p.attr(M, "null") == Some("true"),
                    text: p.text.clone(),
                }
            })
            .collect()
    }
    /// Text of the only child `{ATOM}name`.
    fn atom_text(&self, name: &str) -> &str {
        &self.one(ATOM, name).text
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Prop {
    name: String,
    edm: Option<String>,
    null: bool,
    text: String,
}

fn prop<'a>(props: &'a [Prop], name: &str) -> &'a Prop {
    props.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("no property {name} in {props:#?}"))
}

/// Asserts a property's `m:type` (None: no attribute, i.e. a string) and text.
fn assert_prop(props: &[Prop], name: &str, edm: Option<&str>, text: &str) {
    let p = prop(props, name);
    assert_eq!(p.edm.as_deref(), edm, "m:type of {name}");
    assert!(!p.null, "{name} must not be null");
    assert_eq!(p.text, text, "value of {name}");
}

/// `yyyy-MM-ddTHH:mm:ss.fffffffZ`.
fn assert_7_digit_time(s: &str) {
    let b = s.as_bytes();
    let ok = s.len() == 28
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && b[27] == b'Z'
        && s.chars().enumerate().all(|(i, c)| [4, 7, 10, 13, 16, 19, 27].contains(&i) || c.is_ascii_digit());
    assert!(ok, "DateTime must be written with 7 fractional digits and Z: {s:?}");
}

/// An Atom `updated` value: an ISO 8601 UTC time.
fn assert_updated(s: &str) {
    assert!(
        s.len() >= 20 && s.ends_with('Z') && s.as_bytes()[10] == b'T',
        "updated must be a UTC time: {s:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Requests with full control of the headers
// ---------------------------------------------------------------------------------------

/// A signed request; no header is added except `x-ms-date` and `Authorization` (and what
/// reqwest itself adds: `Accept: */*` when none is given — see `send_raw` for none at all).
struct Req {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Option<String>,
}

impl Req {
    fn new(method: &str, path: &str) -> Req {
        Req { method: method.into(), path: path.into(), headers: Vec::new(), body: None }
    }
    fn h(mut self, k: &str, v: &str) -> Req {
        self.headers.push((k.into(), v.into()));
        self
    }
    /// `x-ms-version` with the data service versions a client of that version sends.
    fn v(self, version: &str) -> Req {
        let (dsv, max) = if version < NEW { ("1.0;NetFx", "2.0;NetFx") } else { ("3.0;NetFx", "3.0;NetFx") };
        self.h("x-ms-version", version).h("DataServiceVersion", dsv).h("MaxDataServiceVersion", max)
    }
    fn accept(self, a: &str) -> Req {
        self.h("Accept", a)
    }
    fn body(mut self, content_type: &str, body: &str) -> Req {
        self.headers.push(("Content-Type".into(), content_type.into()));
        self.body = Some(body.into());
        self
    }
    fn atom(self, body: &str) -> Req {
        self.body("application/atom+xml", body)
    }
    fn content_type(&self) -> String {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }
    fn authorization(&self, c: &Client, date: &str) -> String {
        let url = reqwest::Url::parse(&format!("{}{}", c.endpoint, self.path)).unwrap();
        let resource = format!("/{}{}", c.account, url.path());
        let sts = format!("{}\n\n{}\n{date}\n{resource}", self.method, self.content_type());
        format!("SharedKey {}:{}", c.account, sign(&c.key, &sts))
    }
    async fn send(self, c: &Client) -> Resp {
        let url = reqwest::Url::parse(&format!("{}{}", c.endpoint, self.path)).unwrap();
        let date = now_rfc1123();
        let auth = self.authorization(c, &date);
        let m = reqwest::Method::from_bytes(self.method.as_bytes()).unwrap();
        let mut req = c.http.request(m, url).header("x-ms-date", &date).header("Authorization", auth);
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        if let Some(b) = self.body {
            req = req.body(b);
        }
        Resp::read(req.send().await.expect("request failed")).await
    }
    /// Sends over a plain TCP connection, so that no header at all is added (reqwest
    /// always sends an `Accept`).
    async fn send_raw(self, c: &Client) -> Resp {
        let url = reqwest::Url::parse(&format!("{}{}", c.endpoint, self.path)).unwrap();
        let port = url.port().unwrap();
        let date = now_rfc1123();
        let auth = self.authorization(c, &date);
        let target = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        let body = self.body.clone().unwrap_or_default();
        let mut head = format!(
            "{} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-ms-date: {date}\r\nAuthorization: {auth}\r\n",
            self.method
        );
        for (k, v) in &self.headers {
            head += &format!("{k}: {v}\r\n");
        }
        head += &format!("Content-Length: {}\r\nConnection: close\r\n\r\n", body.len());
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.write_all(head.as_bytes()).await.unwrap();
        s.write_all(body.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).await.unwrap();
        let raw = String::from_utf8(raw).expect("UTF-8 response");
        let (head, rest) = raw.split_once("\r\n\r\n").expect("response head");
        let mut lines = head.split("\r\n");
        let status: u16 = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
        let mut headers = reqwest::header::HeaderMap::new();
        for l in lines {
            let (k, v) = l.split_once(':').unwrap();
            headers.append(
                reqwest::header::HeaderName::from_bytes(k.trim().as_bytes()).unwrap(),
                reqwest::header::HeaderValue::from_str(v.trim()).unwrap(),
            );
        }
        let chunked =
            headers.get("transfer-encoding").is_some_and(|v| v.to_str().unwrap().contains("chunked"));
        let body = if chunked { dechunk(rest) } else { rest.to_owned() };
        Resp { status, headers, body }
    }
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = s.split_once("\r\n").expect("chunk size line");
        let n = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16).expect("chunk size");
        if n == 0 {
            return out;
        }
        out.push_str(&rest[..n]);
        s = &rest[n + 2..];
    }
}

// ---------------------------------------------------------------------------------------
// Bodies and helpers
// ---------------------------------------------------------------------------------------

/// An Atom entry as the .NET client writes it. Each property is (name, m:type or "" for
/// none, value or None for `m:null="true"`).
fn entry_xml(props: &[(&str, &str, Option<&str>)]) -> String {
    let mut s = format!(
        "{DECL}\n<entry xmlns:d=\"{D}\" xmlns:m=\"{M}\" xmlns=\"{ATOM}\">\
         <title /><updated>2013-09-18T23:46:19.3857256Z</updated><author><name /></author><id />\
         <content type=\"application/xml\"><m:properties>"
    );
    for (name, edm, value) in props {
        let ty = if edm.is_empty() { String::new() } else { format!(" m:type=\"{edm}\"") };
        match value {
            // A carriage return as a character reference: XML readers turn a literal one
            // into a line feed.
            Some(v) => {
                s += &format!(
                    "<d:{name}{ty}>{}</d:{name}>",
                    quick_xml::escape::escape(*v).replace('\r', "&#13;")
                )
            }
            None => s += &format!("<d:{name}{ty} m:null=\"true\" />"),
        }
    }
    s += "</m:properties></content></entry>";
    s
}

fn table_entry_xml(name: &str) -> String {
    format!(
        "{DECL}\n<entry xmlns:d=\"{D}\" xmlns:m=\"{M}\" xmlns=\"{ATOM}\"><title /><updated>2013-09-18T23:46:19Z</updated>\
         <author><name /></author><id /><content type=\"application/xml\"><m:properties>\
         <d:TableName>{name}</d:TableName></m:properties></content></entry>"
    )
}

async fn setup(table: &str) -> (TestServer, Client) {
    let server = TestServer::start();
    let c = server.client();
    let r = c.create_table(table).await;
    assert_eq!(r.status, 201, "{}", r.body);
    (server, c)
}

/// `http://127.0.0.1:<port>/devstoreaccount1`
fn base(c: &Client) -> String {
    c.endpoint.clone()
}

/// All entities of `table`, read as JSON (fullmetadata, so every type is annotated).
async fn all_json(c: &Client, table: &str) -> Vec<Value> {
    let r = c.send("GET", &format!("/{table}()"), &[("Accept", FULL)], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["value"].as_array().unwrap().clone()
}

async fn get_json_full(c: &Client, table: &str, pk: &str, rk: &str) -> Value {
    let r = c.send("GET", &entity_path(table, pk, rk), &[("Accept", FULL)], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()
}

async fn get_atom(c: &Client, table: &str, pk: &str, rk: &str) -> (Resp, El) {
    let r = Req::new("GET", &entity_path(table, pk, rk)).v(OLD).accept(ACCEPT_ATOM).send(c).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type").as_deref(), Some(CT_ENTRY), "{}", r.body);
    let e = parse_xml(&r.body);
    (r, e)
}

async fn table_names(c: &Client) -> Vec<String> {
    let r = c.send("GET", "/Tables", &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.table_names()
}

/// Checks an Atom-era error: status, `application/xml`, `x-ms-error-code`, the body's
/// declaration, root and children. Returns the message text.
fn assert_xml_error(r: &Resp, status: u16, code: &str) -> String {
    assert_eq!(r.status, status, "status; body: {}", r.body);
    assert_eq!(r.header("content-type").as_deref(), Some(CT_ERROR), "error Content-Type; body: {}", r.body);
    assert_eq!(r.header("x-ms-error-code").as_deref(), Some(code), "x-ms-error-code; body: {}", r.body);
    xml_error_message(&r.body, code)
}

fn xml_error_message(body: &str, code: &str) -> String {
    assert!(body.starts_with(DECL), "XML error must start with {DECL}: {body:?}");
    let e = parse_xml(body);
    assert!(e.is(M, "error"), "root must be {{{M}}}error: {body}");
    assert_eq!(e.qname, "error", "the metadata namespace is the default namespace of an error");
    assert_eq!(e.children.len(), 2, "error has code and message: {body}");
    assert!(e.children[0].is(M, "code") && e.children[1].is(M, "message"), "{body}");
    assert_eq!(e.children[0].text, code, "error code: {body}");
    let msg = &e.children[1];
    assert_eq!(msg.attr(XML_NS, "lang"), Some("en-US"), "message xml:lang: {body}");
    let text = msg.text.clone();
    let (_, rest) =
        text.split_once("\nRequestId:").unwrap_or_else(|| panic!("message lacks RequestId: {text:?}"));
    let (id, time) = rest.split_once("\nTime:").unwrap_or_else(|| panic!("message lacks Time: {text:?}"));
    assert!(!id.is_empty(), "{text:?}");
    assert_7_digit_time(time);
    text
}

/// Asserts the parts of an entity entry that follow from its address and ETag.
fn assert_entity_entry(e: &El, r: &Resp, base: &str, table: &str, key: &str) {
    assert!(e.is(ATOM, "entry"), "root must be an Atom entry: {e:#?}");
    assert_eq!(e.qname, "entry", "Atom is the default namespace");
    assert_eq!(e.attr(XML_NS, "base"), Some(format!("{base}/").as_str()), "xml:base");
    let etag = r.header("etag").expect("ETag header");
    assert_eq!(e.attr(M, "etag"), Some(etag.as_str()), "m:etag equals the ETag header");
    assert_eq!(e.atom_text("id"), format!("{base}/{table}{key}"), "id");
    assert_eq!(e.atom_text("title"), "", "title is empty");
    assert!(e.one(ATOM, "title").children.is_empty());
    assert_updated(e.atom_text("updated"));
    let author = e.one(ATOM, "author");
    assert_eq!(author.children.len(), 1);
    assert_eq!(author.atom_text("name"), "");
    let link = e.one(ATOM, "link");
    assert_eq!(link.attr("", "rel"), Some("edit"));
    assert_eq!(link.attr("", "title"), Some(table));
    assert_eq!(link.attr("", "href"), Some(format!("{table}{key}").as_str()));
    let cat = e.one(ATOM, "category");
    assert_eq!(cat.attr("", "term"), Some(format!("{ACCOUNT}.{table}").as_str()));
    assert_eq!(cat.attr("", "scheme"), Some(SCHEME));
    let props = e.props();
    assert!(props.len() >= 3, "{props:#?}");
    assert_eq!(props[0].name, "PartitionKey");
    assert_eq!(props[0].edm, None, "PartitionKey is a string");
    assert_eq!(props[1].name, "RowKey");
    assert_eq!(props[1].edm, None, "RowKey is a string");
    assert_eq!(props[2].name, "Timestamp");
    assert_eq!(props[2].edm.as_deref(), Some("Edm.DateTime"));
    assert_7_digit_time(&props[2].text);
}

fn assert_table_entry(e: &El, base: &str, name: &str) {
    assert!(e.is(ATOM, "entry"), "{e:#?}");
    assert_eq!(e.atom_text("id"), format!("{base}/Tables('{name}')"));
    assert_eq!(e.atom_text("title"), "");
    assert_updated(e.atom_text("updated"));
    assert_eq!(e.one(ATOM, "author").atom_text("name"), "");
    let link = e.one(ATOM, "link");
    assert_eq!(link.attr("", "rel"), Some("edit"));
    assert_eq!(link.attr("", "title"), Some("Tables"));
    assert_eq!(link.attr("", "href"), Some(format!("Tables('{name}')").as_str()));
    let cat = e.one(ATOM, "category");
    assert_eq!(cat.attr("", "term"), Some(format!("{ACCOUNT}.Tables").as_str()));
    assert_eq!(cat.attr("", "scheme"), Some(SCHEME));
    assert_eq!(e.attr(M, "etag"), None, "table entries carry no m:etag");
    let props = e.props();
    assert_eq!(props, vec![Prop { name: "TableName".into(), edm: None, null: false, text: name.into() }]);
}

/// Checks a feed's own elements; returns its entries.
fn assert_feed<'a>(f: &'a El, base: &str, title: &str) -> Vec<&'a El> {
    assert!(f.is(ATOM, "feed"), "root must be an Atom feed: {f:#?}");
    assert_eq!(f.qname, "feed", "Atom is the default namespace");
    assert_eq!(f.attr(XML_NS, "base"), Some(format!("{base}/").as_str()), "xml:base");
    assert_eq!(f.atom_text("id"), format!("{base}/{title}"));
    let t = f.one(ATOM, "title");
    assert_eq!(t.attr("", "type"), Some("text"));
    assert_eq!(t.text, title);
    assert_updated(f.atom_text("updated"));
    let link = f.one(ATOM, "link");
    assert_eq!(link.attr("", "rel"), Some("self"));
    assert_eq!(link.attr("", "title"), Some(title));
    assert_eq!(link.attr("", "href"), Some(title));
    f.kids(ATOM, "entry")
}

/// A tree for comparison with a documentation sample: the sample's host and account
/// replaced by ours, times and ETags blanked (they are checked on their own), whitespace
/// between elements dropped, `title` attributes dropped (the samples disagree on
/// `type="text"`), attributes and children sorted.
fn comparable(e: &El, base: &str) -> El {
    let host = "https://myaccount.table.core.windows.net/";
    let ours = format!("{base}/");
    let mut e = e.clone();
    for a in &mut e.attrs {
        a.value = a.value.replace(host, &ours);
        if a.ns == M && a.name == "etag" {
            a.value.clear();
        }
        if a.name == "term" {
            a.value = a.value.replace("myaccount.", &format!("{ACCOUNT}."));
        }
    }
    if e.is(ATOM, "title") {
        e.attrs.clear();
    }
    if e.is(ATOM, "updated") || e.is(D, "Timestamp") {
        e.text.clear();
    }
    if !e.children.is_empty() {
        assert!(e.text.trim().is_empty(), "mixed content in {}", e.qname);
        e.text.clear();
    }
    e.text = e.text.replace(host, &ours);
    e.attrs.sort_by(|x, y| (&x.ns, &x.name).cmp(&(&y.ns, &y.name)));
    e.children = e.children.iter().map(|c| comparable(c, base)).collect();
    e.children.sort_by(|x, y| (&x.ns, &x.name).cmp(&(&y.ns, &y.name)));
    e
}

/// A JSON entity without its metadata, keys and Timestamp.
fn json_props(v: &Value) -> serde_json::Map<String, Value> {
    let mut m = v.as_object().unwrap().clone();
    m.retain(|k, _| {
        !k.starts_with("odata.")
            && !["PartitionKey", "RowKey", "Timestamp", "Timestamp@odata.type"].contains(&k.as_str())
    });
    m
}

fn atom_custom_props(e: &El) -> Vec<Prop> {
    let mut p: Vec<Prop> = e
        .props()
        .into_iter()
        .filter(|p| !["PartitionKey", "RowKey", "Timestamp"].contains(&p.name.as_str()))
        .collect();
    p.sort_by(|a, b| a.name.cmp(&b.name));
    p
}

// ---------------------------------------------------------------------------------------
// Negotiation
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn old_versions_answer_atom_for_atom_xml_or_no_accept_and_json_for_json() {
    let (_s, c) = setup("nego").await;
    assert_eq!(c.insert("nego", json!({"PartitionKey": "p", "RowKey": "r", "A": 1})).await.status, 201);
    let path = entity_path("nego", "p", "r");
    for accept in ["application/atom+xml", ACCEPT_ATOM, "application/xml"] {
        for version in [OLD, "2009-09-19", "2015-04-05"] {
            let r = Req::new("GET", &path).v(version).accept(accept).send(&c).await;
            assert_eq!(r.status, 200, "{version} {accept}: {}", r.body);
            assert_eq!(r.header("content-type").as_deref(), Some(CT_ENTRY), "{version} {accept}");
            assert_entity_entry(&parse_xml(&r.body), &r, &base(&c), "nego", "(PartitionKey='p',RowKey='r')");
        }
    }
    // No Accept header at all: Atom.
    let r = Req::new("GET", &path).v(OLD).send_raw(&c).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type").as_deref(), Some(CT_ENTRY), "no Accept under {OLD}: {}", r.body);
    assert_entity_entry(&parse_xml(&r.body), &r, &base(&c), "nego", "(PartitionKey='p',RowKey='r')");
    // No Accept on a feed, too.
    let r = Req::new("GET", "/nego()").v(OLD).send_raw(&c).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type").as_deref(), Some(CT_FEED));
    // $format=atom
    let r = Req::new("GET", &format!("{path}?$format=atom")).v(OLD).send_raw(&c).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type").as_deref(), Some(CT_ENTRY), "$format=atom: {}", r.body);
    // $format overrides Accept (data service version 3.0).
    let r = Req::new("GET", &format!("{path}?$format=atom"))
        .h("x-ms-version", OLD)
        .h("DataServiceVersion", "3.0;NetFx")
        .h("MaxDataServiceVersion", "3.0;NetFx")
        .accept(MINIMAL)
        .send(&c)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.header("content-type").as_deref(),
        Some(CT_ENTRY),
        "$format=atom over a JSON Accept: {}",
        r.body
    );
    let r = Req::new("GET", "/Tables?$format=atom").v(OLD).send_raw(&c).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type").as_deref(), Some(CT_FEED), "$format=atom: {}", r.body);
    // JSON still answers JSON under an old version.
    let r = Req::new("GET", &path).v(OLD).accept(MINIMAL).send(&c).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let ct = r.header("content-type").unwrap();
    assert!(ct.starts_with(MINIMAL), "JSON under {OLD}: {ct}");
    assert_eq!(r.json()["A"], 1);
    let r = Req::new("GET", "/Tables").v(OLD).accept(MINIMAL).send(&c).await;
    assert!(r.header("content-type").unwrap().starts_with(MINIMAL));
    assert_eq!(r.json()["value"][0]["TableName"], "nego");
}

#[tokio::test]
async fn new_versions_refuse_atom_with_415_atom_format_not_supported() {
    let (_s, c) = setup("newver").await;
    assert_eq!(c.insert("newver", json!({"PartitionKey": "p", "RowKey": "r"})).await.status, 201);
    for version in [NEW, "2019-02-02"] {
        for accept in ["application/atom+xml", ACCEPT_ATOM] {
            for path in [entity_path("newver", "p", "r"), "/newver()".into(), "/Tables".into()] {
                let r = Req::new("GET", &path).v(version).accept(accept).send(&c).await;
                let msg = assert_xml_error(&r, 415, "AtomFormatNotSupported");
                assert!(msg.starts_with("Atom format is not supported.\nRequestId:"), "{msg:?}");
            }
        }
        // An insert asking for Atom is refused and writes nothing.
        let body = entry_xml(&[("PartitionKey", "", Some("p")), ("RowKey", "", Some("new"))]);
        let r =
            Req::new("POST", "/newver").v(version).accept("application/atom+xml").atom(&body).send(&c).await;
        assert_xml_error(&r, 415, "AtomFormatNotSupported");
        // An Atom body under a new version is refused whatever the Accept, and nothing is
        // written either.
        let r = Req::new("POST", "/newver").v(version).accept(MINIMAL).atom(&body).send(&c).await;
        r.assert_refused(415, ErrorCode::AtomFormatNotSupported);
        let r = Req::new("POST", "/Tables")
            .v(version)
            .accept(MINIMAL)
            .atom(&table_entry_xml("sneaky"))
            .send(&c)
            .await;
        r.assert_refused(415, ErrorCode::AtomFormatNotSupported);
    }
    assert_eq!(all_json(&c, "newver").await.len(), 1, "nothing written");
    assert_eq!(table_names(&c).await, vec!["newver".to_owned()]);
}

#[tokio::test]
async fn unsupported_body_media_type_is_415_in_the_negotiated_format() {
    let (_s, c) = setup("media").await;
    let r = Req::new("POST", "/media")
        .v(OLD)
        .accept("application/atom+xml")
        .body("text/plain", "PartitionKey=p")
        .send(&c)
        .await;
    assert_xml_error(&r, 415, "MediaTypeNotSupported");
    let r = Req::new("POST", "/Tables").v(OLD).accept(ACCEPT_ATOM).body("text/plain", "t2").send(&c).await;
    assert_xml_error(&r, 415, "MediaTypeNotSupported");
    // With JSON negotiated, the same error is JSON.
    let r =
        Req::new("POST", "/media").v(OLD).accept(MINIMAL).body("text/plain", "PartitionKey=p").send(&c).await;
    assert_eq!(r.status, 415, "{}", r.body);
    assert_eq!(r.error_code(), "MediaTypeNotSupported");
    assert!(
        r.header("content-type").unwrap().starts_with("application/json"),
        "{:?}",
        r.header("content-type")
    );
    assert!(all_json(&c, "media").await.is_empty());
    assert_eq!(table_names(&c).await, vec!["media".to_owned()]);
}

// ---------------------------------------------------------------------------------------
// Entries and feeds
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn an_entity_entry_has_the_documented_shape_and_lexical_forms() {
    let (_s, c) = setup("shape").await;
    let r = c
        .insert(
            "shape",
            json!({
                "PartitionKey": "pk", "RowKey": "rk",
                "S": "text",
                "I32": -7,
                "I64": "1234567890123", "I64@odata.type": "Edm.Int64",
                "Dbl": 1.25,
                "T": true, "F": false,
                "When": "2008-09-18T23:46:19.4277424Z", "When@odata.type": "Edm.DateTime",
                "Day": "2008-07-10T00:00:00Z", "Day@odata.type": "Edm.DateTime",
                "Id": "C9DA6455-213D-42C9-9A79-3E9149A57833", "Id@odata.type": "Edm.Guid",
                "Bin": "AQIDBA==", "Bin@odata.type": "Edm.Binary",
                "Nan": "NaN", "Nan@odata.type": "Edm.Double",
                "Inf": "Infinity", "Inf@odata.type": "Edm.Double",
                "NegInf": "-Infinity", "NegInf@odata.type": "Edm.Double"
            }),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let (r, e) = get_atom(&c, "shape", "pk", "rk").await;
    assert!(r.body.starts_with("<?xml version=\"1.0\" encoding=\"utf-8\""), "XML declaration: {:?}", r.body);
    assert_entity_entry(&e, &r, &base(&c), "shape", "(PartitionKey='pk',RowKey='rk')");
    let props = e.props();
    assert_prop(&props, "PartitionKey", None, "pk");
    assert_prop(&props, "RowKey", None, "rk");
    assert_prop(&props, "S", None, "text");
    assert_prop(&props, "I32", Some("Edm.Int32"), "-7");
    assert_prop(&props, "I64", Some("Edm.Int64"), "1234567890123");
    assert_prop(&props, "Dbl", Some("Edm.Double"), "1.25");
    assert_prop(&props, "T", Some("Edm.Boolean"), "true");
    assert_prop(&props, "F", Some("Edm.Boolean"), "false");
    assert_prop(&props, "When", Some("Edm.DateTime"), "2008-09-18T23:46:19.4277424Z");
    assert_prop(&props, "Day", Some("Edm.DateTime"), "2008-07-10T00:00:00Z");
    assert_prop(&props, "Id", Some("Edm.Guid"), "c9da6455-213d-42c9-9a79-3e9149a57833");
    assert_prop(&props, "Bin", Some("Edm.Binary"), "AQIDBA==");
    assert_prop(&props, "Nan", Some("Edm.Double"), "NaN");
    assert_prop(&props, "Inf", Some("Edm.Double"), "INF");
    assert_prop(&props, "NegInf", Some("Edm.Double"), "-INF");
    assert_eq!(props.len(), 3 + 13, "no other properties: {props:#?}");
    // The entry's Timestamp is the JSON Timestamp, and the ETag is the JSON odata.etag.
    let j = get_json_full(&c, "shape", "pk", "rk").await;
    assert_eq!(prop(&props, "Timestamp").text, j["Timestamp"].as_str().unwrap());
    assert_eq!(e.attr(M, "etag").unwrap(), j["odata.etag"].as_str().unwrap());
}

#[tokio::test]
async fn query_entities_feed_with_filter_top_select_and_continuation() {
    let (_s, c) = setup("feed").await;
    for i in 0..5 {
        let r = c
            .insert(
                "feed",
                json!({"PartitionKey": "p", "RowKey": format!("r{i}"), "N": i, "S": format!("s{i}")}),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    let b = base(&c);
    // All of them.
    let r = Req::new("GET", "/feed()").v(OLD).accept(ACCEPT_ATOM).send(&c).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type").as_deref(), Some(CT_FEED));
    let f = parse_xml(&r.body);
    let entries = assert_feed(&f, &b, "feed");
    assert_eq!(entries.len(), 5);
    let json = all_json(&c, "feed").await;
    for (i, e) in entries.iter().enumerate() {
        let key = format!("(PartitionKey='p',RowKey='r{i}')");
        assert_eq!(e.atom_text("id"), format!("{b}/feed{key}"));
        assert_eq!(e.attr(M, "etag"), json[i]["odata.etag"].as_str(), "each entry's m:etag");
        assert_eq!(e.one(ATOM, "link").attr("", "href"), Some(format!("feed{key}").as_str()));
        assert_eq!(e.one(ATOM, "category").attr("", "term"), Some("devstoreaccount1.feed"));
        let props = e.props();
        assert_eq!(
            props.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            ["PartitionKey", "RowKey", "Timestamp", "N", "S"]
        );
        assert_prop(&props, "N", Some("Edm.Int32"), &i.to_string());
        assert_prop(&props, "S", None, &format!("s{i}"));
    }
    // $filter
    let r = Req::new("GET", "/feed()?$filter=N%20ge%203").v(OLD).accept(ACCEPT_ATOM).send(&c).await;
    let f = parse_xml(&r.body);
    let rows: Vec<String> =
        assert_feed(&f, &b, "feed").iter().map(|e| prop(&e.props(), "RowKey").text.clone()).collect();
    assert_eq!(rows, ["r3", "r4"]);
    // $top and continuation: the same headers as JSON; following them gives the rest.
    let r = Req::new("GET", "/feed()?$top=2").v(OLD).accept(ACCEPT_ATOM).send(&c).await;
    let rj = Req::new("GET", "/feed()?$top=2").v(OLD).accept(MINIMAL).send(&c).await;
    assert_eq!(assert_feed(&parse_xml(&r.body), &b, "feed").len(), 2);
    let npk = r.header("x-ms-continuation-nextpartitionkey").expect("NextPartitionKey");
    let nrk = r.header("x-ms-continuation-nextrowkey").expect("NextRowKey");
    assert_eq!(Some(&npk), rj.header("x-ms-continuation-nextpartitionkey").as_ref());
    assert_eq!(Some(&nrk), rj.header("x-ms-continuation-nextrowkey").as_ref());
    let next = format!("/feed()?$top=2&NextPartitionKey={npk}&NextRowKey={nrk}");
    let r = Req::new("GET", &next).v(OLD).accept(ACCEPT_ATOM).send(&c).await;
    let f = parse_xml(&r.body);
    let rows: Vec<String> =
        assert_feed(&f, &b, "feed").iter().map(|e| prop(&e.props(), "RowKey").text.clone()).collect();
    assert_eq!(rows, ["r2", "r3"]);
    // $select: selected properties only; one the entities lack is an m:null element.
    let r = Req::new("GET", "/feed()?$select=N,Missing&$filter=RowKey%20eq%20'r1'")
        .v(OLD)
        .accept(ACCEPT_ATOM)
        .send(&c)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let f = parse_xml(&r.body);
    let entries = assert_feed(&f, &b, "feed");
    assert_eq!(entries.len(), 1);
    let props = entries[0].props();
    assert_prop(&props, "N", Some("Edm.Int32"), "1");
    let missing = prop(&props, "Missing");
    assert!(missing.null && missing.text.is_empty(), "{missing:?}");
    assert!(props.iter().all(|p| p.name != "S"), "unselected S must be absent: {props:#?}");
    // An empty result is still a feed.
    let r = Req::new("GET", "/feed()?$filter=N%20gt%20100").v(OLD).accept(ACCEPT_ATOM).send(&c).await;
    assert_eq!(r.status, 200);
    assert!(assert_feed(&parse_xml(&r.body), &b, "feed").is_empty());
}

#[tokio::test]
async fn query_tables_feed_and_its_continuation() {
    let (_s, c) = setup("alpha").await;
    for t in ["beta", "gamma"] {
        assert_eq!(c.create_table(t).await.status, 201);
    }
    let b = base(&c);
    let r = Req::new("GET", "/Tables").v(OLD).accept(ACCEPT_ATOM).send(&c).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type").as_deref(), Some(CT_FEED));
    let f = parse_xml(&r.body);
    let entries = assert_feed(&f, &b, "Tables");
    assert_eq!(entries.len(), 3);
    for (e, name) in entries.iter().zip(["alpha", "beta", "gamma"]) {
        assert_table_entry(e, &b, name);
    }
    let r = Req::new("GET", "/Tables?$top=1").v(OLD).accept(ACCEPT_ATOM).send(&c).await;
    let rj = Req::new("GET", "/Tables?$top=1").v(OLD).accept(MINIMAL).send(&c).await;
    assert_eq!(assert_feed(&parse_xml(&r.body), &b, "Tables").len(), 1);
    let next = r.header("x-ms-continuation-nexttablename").expect("NextTableName");
    assert_eq!(Some(next.clone()), rj.header("x-ms-continuation-nexttablename"));
    let r = Req::new("GET", &format!("/Tables?$top=5&NextTableName={next}"))
        .v(OLD)
        .accept(ACCEPT_ATOM)
        .send(&c)
        .await;
    let f = parse_xml(&r.body);
    let names: Vec<String> =
        assert_feed(&f, &b, "Tables").iter().map(|e| prop(&e.props(), "TableName").text.clone()).collect();
    assert_eq!(names, ["beta", "gamma"]);
    let r =
        Req::new("GET", "/Tables?$filter=TableName%20eq%20'beta'").v(OLD).accept(ACCEPT_ATOM).send(&c).await;
    let f = parse_xml(&r.body);
    let entries = assert_feed(&f, &b, "Tables");
    assert_eq!(entries.len(), 1);
    assert_table_entry(entries[0], &b, "beta");
}

// ---------------------------------------------------------------------------------------
// Atom request bodies
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn create_table_with_an_atom_body() {
    let server = TestServer::start();
    let c = server.client();
    let b = base(&c);
    let r = Req::new("POST", "/Tables")
        .v(OLD)
        .accept(ACCEPT_ATOM)
        .atom(&table_entry_xml("atomtable"))
        .send(&c)
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.header("content-type").as_deref(), Some(CT_ENTRY));
    let e = parse_xml(&r.body);
    assert_eq!(e.qname, "entry");
    assert_eq!(e.attr(XML_NS, "base"), Some(format!("{b}/").as_str()));
    assert_table_entry(&e, &b, "atomtable");
    // The documentation's request body, as given.
    let r =
        Req::new("POST", "/Tables").v(OLD).accept(ACCEPT_ATOM).atom(DOCS_CREATE_TABLE_REQUEST).send(&c).await;
    assert_eq!(r.status, 201, "docs sample: {}", r.body);
    assert_table_entry(&parse_xml(&r.body), &b, "mytable");
    // Prefer: return-no-content
    let r = Req::new("POST", "/Tables")
        .v(OLD)
        .accept(ACCEPT_ATOM)
        .h("Prefer", "return-no-content")
        .atom(&table_entry_xml("quiet"))
        .send(&c)
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(r.body, "");
    assert_eq!(r.header("preference-applied").as_deref(), Some("return-no-content"));
    // A second create of the same name: 409 as XML.
    let r =
        Req::new("POST", "/Tables").v(OLD).accept(ACCEPT_ATOM).atom(&table_entry_xml("quiet")).send(&c).await;
    assert_xml_error(&r, 409, "TableAlreadyExists");
    // Malformed bodies create nothing.
    for bad in ["<entry", "not xml at all", &table_entry_xml("x").replace("</m:properties>", "")] {
        let r = Req::new("POST", "/Tables").v(OLD).accept(ACCEPT_ATOM).atom(bad).send(&c).await;
        assert_xml_error(&r, 400, "InvalidInput");
    }
    let mut names = table_names(&c).await;
    names.sort();
    assert_eq!(names, ["atomtable", "mytable", "quiet"]);
}

#[tokio::test]
async fn insert_with_an_atom_body_answers_an_entry_with_etag_and_location() {
    let (_s, c) = setup("ins").await;
    let b = base(&c);
    let body = entry_xml(&[
        ("PartitionKey", "", Some("pk")),
        ("RowKey", "", Some("rk")),
        ("Name", "", Some("x")),
        ("Age", "Edm.Int32", Some("23")),
        ("Orders", "Edm.Int64", Some("255")),
        ("Due", "Edm.Double", Some("200.23")),
        ("Active", "Edm.Boolean", Some("true")),
        ("Since", "Edm.DateTime", Some("2008-07-10T00:00:00")),
        ("Code", "Edm.Guid", Some("c9da6455-213d-42c9-9a79-3e9149a57833")),
        ("Data", "Edm.Binary", Some("AQID")),
        ("Nothing", "Edm.Binary", None),
    ]);
    let r = Req::new("POST", "/ins").v(OLD).accept(ACCEPT_ATOM).atom(&body).send(&c).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.header("content-type").as_deref(), Some(CT_ENTRY));
    let key = "(PartitionKey='pk',RowKey='rk')";
    assert_eq!(r.header("location"), Some(format!("{b}/ins{key}")));
    let e = parse_xml(&r.body);
    assert_entity_entry(&e, &r, &b, "ins", key);
    let props = e.props();
    assert_prop(&props, "Name", None, "x");
    assert_prop(&props, "Age", Some("Edm.Int32"), "23");
    assert_prop(&props, "Orders", Some("Edm.Int64"), "255");
    assert_prop(&props, "Due", Some("Edm.Double"), "200.23");
    assert_prop(&props, "Active", Some("Edm.Boolean"), "true");
    assert_prop(&props, "Since", Some("Edm.DateTime"), "2008-07-10T00:00:00Z");
    assert_prop(&props, "Code", Some("Edm.Guid"), "c9da6455-213d-42c9-9a79-3e9149a57833");
    assert_prop(&props, "Data", Some("Edm.Binary"), "AQID");
    assert!(props.iter().all(|p| p.name != "Nothing"), "m:null properties are not stored");
    assert_eq!(props.len(), 3 + 8);
    // The GET answers the same entry.
    let (g, ge) = get_atom(&c, "ins", "pk", "rk").await;
    assert_eq!(g.header("etag"), r.header("etag"));
    assert_eq!(ge.props(), props);
    // Prefer: return-no-content → 204 with the ETag, no body.
    let body = entry_xml(&[("PartitionKey", "", Some("pk")), ("RowKey", "", Some("quiet"))]);
    let r = Req::new("POST", "/ins")
        .v(OLD)
        .accept(ACCEPT_ATOM)
        .h("Prefer", "return-no-content")
        .atom(&body)
        .send(&c)
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(r.body, "");
    assert!(r.header("etag").is_some());
    assert_eq!(r.header("preference-applied").as_deref(), Some("return-no-content"));
    // A duplicate is 409 as XML.
    let r = Req::new("POST", "/ins").v(OLD).accept(ACCEPT_ATOM).atom(&body).send(&c).await;
    assert_xml_error(&r, 409, "EntityAlreadyExists");
    // Into a missing table: the same status and code as JSON.
    let r = Req::new("POST", "/nosuch").v(OLD).accept(ACCEPT_ATOM).atom(&body).send(&c).await;
    let rj = c.insert("nosuch", json!({"PartitionKey": "pk", "RowKey": "quiet"})).await;
    assert_xml_error(&r, rj.status, &rj.error_code());
}

/// The documentation's Insert Entity request, sent as given; the answer is compared with
/// the documentation's sample response, except for what must differ: the host, ETag,
/// times, the category term (the sample's `myaccount.Tables` is wrong for an entity), and
/// `CustomerSince`, sent without a zone and answered in UTC (`…T00:00:00Z`).
#[tokio::test]
async fn docs_insert_entity_sample_answers_the_docs_response_shape() {
    let (_s, c) = setup("mytable").await;
    let b = base(&c);
    let r = Req::new("POST", "/mytable").v(OLD).accept(ACCEPT_ATOM).atom(DOCS_INSERT_REQUEST).send(&c).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.header("content-type").as_deref(), Some(CT_ENTRY));
    let got = parse_xml(&r.body);
    assert_entity_entry(&got, &r, &b, "mytable", "(PartitionKey='mypartitionkey',RowKey='myrowkey1')");

    // The sample's m:etag attribute has unescaped quotes; write it as XML requires.
    let sample = DOCS_INSERT_RESPONSE
        .replace(r#"m:etag="W/"0x5B168C7B6E589D2"""#, r#"m:etag="W/&quot;0x5B168C7B6E589D2&quot;""#);
    let mut want = parse_xml(&sample);
    for child in &mut want.children {
        match child.name.as_str() {
            "category" => {
                for a in child.attrs.iter_mut().filter(|a| a.name == "term") {
                    a.value = "myaccount.mytable".into();
                }
            }
            "content" => {
                for p in child.children[0].children.iter_mut().filter(|p| p.name == "CustomerSince") {
                    p.text = "2008-07-10T00:00:00Z".into();
                }
            }
            _ => {}
        }
    }
    assert_eq!(
        comparable(&got, &b),
        comparable(&want, &b),
        "the answer differs from the documentation's sample"
    );
}

#[tokio::test]
async fn docs_create_table_and_query_tables_samples_match_the_answers() {
    let server = TestServer::start();
    let c = server.client();
    let b = base(&c);
    let r =
        Req::new("POST", "/Tables").v(OLD).accept(ACCEPT_ATOM).atom(DOCS_CREATE_TABLE_REQUEST).send(&c).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.header("content-type").as_deref(), Some(CT_ENTRY));
    let got = parse_xml(&r.body);
    assert_updated(got.atom_text("updated"));
    assert_eq!(comparable(&got, &b), comparable(&parse_xml(DOCS_CREATE_TABLE_RESPONSE), &b), "Create Table");
    let r = Req::new("GET", "/Tables").v(OLD).accept(ACCEPT_ATOM).send(&c).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type").as_deref(), Some(CT_FEED));
    let got = parse_xml(&r.body);
    assert_feed(&got, &b, "Tables");
    assert_eq!(comparable(&got, &b), comparable(&parse_xml(DOCS_QUERY_TABLES_RESPONSE), &b), "Query Tables");
}

#[tokio::test]
async fn the_seed_documents_movie_body_is_accepted() {
    let (_s, c) = setup("Movies").await;
    let r = Req::new("POST", "/Movies").v(OLD).accept(ACCEPT_ATOM).atom(SEED_MOVIE).send(&c).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.header("content-type").as_deref(), Some(CT_ENTRY));
    let e = parse_xml(&r.body);
    assert_entity_entry(&e, &r, &base(&c), "Movies", "(PartitionKey='Action',RowKey='Cop%20Out')");
    let v = get_json_full(&c, "Movies", "Action", "Cop Out").await;
    let mut p = json_props(&v);
    assert_eq!(p.remove("Favorite"), Some(json!(false)));
    assert_eq!(p.remove("Language"), Some(json!("English")));
    assert_eq!(p.remove("Rating"), Some(json!(4.5)));
    p.remove("Rating@odata.type");
    assert_eq!(p.remove("ReleaseYear"), Some(json!(2010)));
    p.remove("Revenue@odata.type");
    let revenue = p.remove("Revenue").unwrap();
    assert!(revenue.is_f64() && revenue.as_f64() == Some(0.0), "Revenue stays a Double: {revenue}");
    assert!(p.is_empty(), "no other properties: {p:?}");
    let ts = v["Timestamp"].as_str().unwrap();
    assert!(!ts.starts_with("0001"), "the body's Timestamp is ignored: {ts}");
}

#[tokio::test]
async fn atom_typing_rules_missing_type_null_and_timestamp() {
    let (_s, c) = setup("typing").await;
    let body = entry_xml(&[
        ("PartitionKey", "", Some("p")),
        ("RowKey", "", Some("r")),
        ("Digits", "", Some("123")),
        ("Flag", "", Some("true")),
        ("Explicit", "Edm.String", Some("s")),
        ("Gone", "", None),
        ("GoneInt", "Edm.Int32", None),
        ("Timestamp", "Edm.DateTime", Some("2001-01-01T00:00:00Z")),
    ]);
    let r = Req::new("POST", "/typing").v(OLD).accept(ACCEPT_ATOM).atom(&body).send(&c).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let v = get_json_full(&c, "typing", "p", "r").await;
    let mut p = json_props(&v);
    assert_eq!(p.remove("Digits"), Some(json!("123")), "no m:type is Edm.String");
    assert_eq!(p.remove("Flag"), Some(json!("true")), "no m:type is Edm.String");
    assert_eq!(p.remove("Explicit"), Some(json!("s")));
    assert!(p.is_empty(), "m:null properties are absent: {p:?}");
    assert!(!v["Timestamp"].as_str().unwrap().starts_with("2001"), "the body's Timestamp is ignored");
    let (_, e) = get_atom(&c, "typing", "p", "r").await;
    assert_prop(&e.props(), "Digits", None, "123");
    assert!(e.props().iter().all(|p| !p.null), "nothing stored as null");
}

#[tokio::test]
async fn update_merge_and_upserts_with_atom_bodies() {
    let (_s, c) = setup("upd").await;
    let r = c.insert("upd", json!({"PartitionKey": "p", "RowKey": "r", "A": 1, "B": "x"})).await;
    let etag1 = r.header("etag").unwrap();
    let path = entity_path("upd", "p", "r");
    let put = |if_match: Option<&str>, method: &str, body: String, path: &str| {
        let mut q = Req::new(method, path).v(OLD).accept(ACCEPT_ATOM);
        if let Some(m) = if_match {
            q = q.h("If-Match", m);
        }
        q.atom(&body)
    };
    // Update (PUT) replaces.
    let body = entry_xml(&[
        ("PartitionKey", "", Some("p")),
        ("RowKey", "", Some("r")),
        ("A", "Edm.Int32", Some("2")),
    ]);
    let r = put(Some(&etag1), "PUT", body, &path).send(&c).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(r.body, "");
    let etag2 = r.header("etag").expect("ETag");
    assert_ne!(etag1, etag2);
    let v = get_json_full(&c, "upd", "p", "r").await;
    assert_eq!(v["A"], 2);
    assert!(v.get("B").is_none(), "PUT replaces");
    assert_eq!(v["odata.etag"], etag2.as_str());
    // A stale ETag: 412 as XML, nothing changes.
    let body = entry_xml(&[("A", "Edm.Int32", Some("3"))]);
    let r = put(Some(&etag1), "PUT", body.clone(), &path).send(&c).await;
    assert_xml_error(&r, 412, "UpdateConditionNotSatisfied");
    let r = put(Some(&etag1), "MERGE", body, &path).send(&c).await;
    assert_xml_error(&r, 412, "UpdateConditionNotSatisfied");
    assert_eq!(get_json_full(&c, "upd", "p", "r").await["A"], 2);
    // Merge keeps what is not sent.
    let body = entry_xml(&[("C", "Edm.Boolean", Some("false")), ("D", "", None)]);
    let r = put(Some("*"), "MERGE", body, &path).send(&c).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert!(r.header("etag").is_some());
    let v = get_json_full(&c, "upd", "p", "r").await;
    assert_eq!((v["A"].clone(), v["C"].clone()), (json!(2), json!(false)));
    assert!(v.get("D").is_none());
    // POST with X-HTTP-Method: MERGE
    let body = entry_xml(&[("E", "Edm.Int64", Some("5"))]);
    let r = put(Some("*"), "POST", body, &path).h("X-HTTP-Method", "MERGE").send(&c).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(get_json_full(&c, "upd", "p", "r").await["E"], "5");
    // If-Match on a missing entity: 404 as XML.
    let missing = entity_path("upd", "p", "missing");
    let body = entry_xml(&[("A", "Edm.Int32", Some("1"))]);
    let r = put(Some("*"), "PUT", body.clone(), &missing).send(&c).await;
    assert_xml_error(&r, 404, "ResourceNotFound");
    let r = put(Some("*"), "MERGE", body, &missing).send(&c).await;
    assert_xml_error(&r, 404, "ResourceNotFound");
    // Insert Or Replace / Insert Or Merge (no If-Match).
    let body = entry_xml(&[("U", "Edm.Int32", Some("1"))]);
    let r = put(None, "PUT", body, &missing).send(&c).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert!(r.header("etag").is_some());
    let body = entry_xml(&[("V", "Edm.Double", Some("2.5"))]);
    let r = put(None, "MERGE", body, &missing).send(&c).await;
    assert_eq!(r.status, 204, "{}", r.body);
    let v = get_json_full(&c, "upd", "p", "missing").await;
    assert_eq!((v["U"].clone(), v["V"].clone()), (json!(1), json!(2.5)));
    let body = entry_xml(&[("W", "", Some("w"))]);
    let r = put(None, "PUT", body, &missing).send(&c).await;
    assert_eq!(r.status, 204);
    let v = get_json_full(&c, "upd", "p", "missing").await;
    assert!(v.get("U").is_none() && v["W"] == "w", "Insert Or Replace replaces: {v}");

    // The documentation's Update Entity body, as given, to the entity its keys name.
    assert_eq!(
        c.insert("upd", json!({"PartitionKey": "mypartitionkey", "RowKey": "myrowkey", "Old": 1}))
            .await
            .status,
        201
    );
    let r = put(
        Some("*"),
        "PUT",
        DOCS_UPDATE_REQUEST.to_owned(),
        &entity_path("upd", "mypartitionkey", "myrowkey"),
    )
    .send(&c)
    .await;
    assert_eq!(r.status, 204, "docs Update Entity sample: {}", r.body);
    let v = get_json_full(&c, "upd", "mypartitionkey", "myrowkey").await;
    let mut p = json_props(&v);
    assert_eq!(p.remove("Address"), Some(json!("Santa Clara")));
    assert_eq!(p.remove("Age"), Some(json!(23)));
    assert_eq!(p.remove("AmountDue"), Some(json!(200.23)));
    p.remove("AmountDue@odata.type");
    assert_eq!(p.remove("CustomerCode"), Some(json!("c9da6455-213d-42c9-9a79-3e9149a57833")));
    assert_eq!(p.remove("CustomerCode@odata.type"), Some(json!("Edm.Guid")));
    assert_eq!(p.remove("CustomerSince"), Some(json!("2008-07-10T00:00:00Z")));
    assert_eq!(p.remove("CustomerSince@odata.type"), Some(json!("Edm.DateTime")));
    assert_eq!(p.remove("IsActive"), Some(json!(false)));
    assert_eq!(p.remove("NumOfOrders"), Some(json!("255")));
    assert_eq!(p.remove("NumOfOrders@odata.type"), Some(json!("Edm.Int64")));
    assert!(p.is_empty(), "Old is replaced away: {p:?}");
}

#[tokio::test]
async fn invalid_atom_bodies_are_400_and_write_nothing() {
    let (_s, c) = setup("bad").await;
    let keys = [("PartitionKey", "", Some("p")), ("RowKey", "", Some("r"))];
    let with = |extra: (&'static str, &'static str, Option<&'static str>)| {
        let mut v = keys.to_vec();
        v.push(extra);
        entry_xml(&v)
    };
    let invalid_values = [
        ("A", "Edm.Int32", Some("x")),
        ("A", "Edm.Int32", Some("2147483648")),
        ("A", "Edm.Int32", Some("1.5")),
        ("A", "Edm.Int64", Some("9223372036854775808")),
        ("A", "Edm.Int64", Some("abc")),
        ("A", "Edm.Double", Some("abc")),
        ("A", "Edm.Boolean", Some("maybe")),
        ("A", "Edm.Guid", Some("not-a-guid")),
        ("A", "Edm.DateTime", Some("yesterday")),
        ("A", "Edm.Binary", Some("***")),
        ("A", "Edm.Foo", Some("1")),
    ];
    let mut bodies: Vec<(String, &str)> = invalid_values.iter().map(|v| (with(*v), "InvalidInput")).collect();
    bodies.push(("<entry xmlns=\"http://www.w3.org/2005/Atom\"><content".into(), "InvalidInput"));
    bodies.push((with(("A", "", Some("1"))).replace("</d:A>", "</d:B>"), "InvalidInput"));
    bodies.push(("{\"PartitionKey\":\"p\",\"RowKey\":\"r\"}".into(), "InvalidInput"));
    bodies.push((
        entry_xml(&[
            ("PartitionKey", "", Some("p")),
            ("RowKey", "", Some("r")),
            ("A", "", Some("1")),
            ("A", "", Some("2")),
        ]),
        "DuplicatePropertiesSpecified",
    ));
    bodies.push((entry_xml(&[("PartitionKey", "", Some("p")), ("A", "", Some("1"))]), "PropertiesNeedValue"));
    bodies.push((entry_xml(&[("RowKey", "", Some("r")), ("A", "", Some("1"))]), "PropertiesNeedValue"));
    for (body, code) in &bodies {
        let r = Req::new("POST", "/bad").v(OLD).accept(ACCEPT_ATOM).atom(body).send(&c).await;
        assert_eq!(r.header("x-ms-error-code").as_deref(), Some(*code), "body {body}: {}", r.body);
        assert_xml_error(&r, 400, code);
        if *code != "PropertiesNeedValue" {
            // Through Insert Or Replace (whose keys come from the URI) too.
            let r = Req::new("PUT", &entity_path("bad", "p", "r"))
                .v(OLD)
                .accept(ACCEPT_ATOM)
                .atom(body)
                .send(&c)
                .await;
            assert_xml_error(&r, 400, code);
        }
    }
    assert!(all_json(&c, "bad").await.is_empty(), "nothing written");
    // Against an existing entity: rejected updates and merges leave it as it was.
    assert_eq!(c.insert("bad", json!({"PartitionKey": "p", "RowKey": "r", "Keep": 1})).await.status, 201);
    let before = get_json_full(&c, "bad", "p", "r").await;
    for (body, code) in bodies.iter().filter(|(_, code)| *code == "InvalidInput") {
        for method in ["PUT", "MERGE"] {
            let r = Req::new(method, &entity_path("bad", "p", "r"))
                .v(OLD)
                .accept(ACCEPT_ATOM)
                .h("If-Match", "*")
                .atom(body)
                .send(&c)
                .await;
            assert_xml_error(&r, 400, code);
        }
    }
    assert_eq!(get_json_full(&c, "bad", "p", "r").await, before, "the entity is unchanged");
}

// ---------------------------------------------------------------------------------------
// Cross-format round trips
// ---------------------------------------------------------------------------------------

/// Edge values as JSON (with `@odata.type` where JSON needs it).
fn edge_json(rk: &str) -> Value {
    json!({
        "PartitionKey": "p", "RowKey": rk,
        "I32Min": -2147483648i64, "I32Max": 2147483647,
        "I64Min": "-9223372036854775808", "I64Min@odata.type": "Edm.Int64",
        "I64Max": "9223372036854775807", "I64Max@odata.type": "Edm.Int64",
        "DtMin": "1601-01-01T00:00:00Z", "DtMin@odata.type": "Edm.DateTime",
        "DtMax": "9999-12-31T23:59:59.9999999Z", "DtMax@odata.type": "Edm.DateTime",
        "DtFrac": "2008-09-18T23:46:19.4277424Z", "DtFrac@odata.type": "Edm.DateTime",
        "DtHalf": "2020-01-01T00:00:00.5000000Z", "DtHalf@odata.type": "Edm.DateTime",
        "Empty": "",
        "Nan": "NaN", "Nan@odata.type": "Edm.Double",
        "Inf": "Infinity", "Inf@odata.type": "Edm.Double",
        "NegInf": "-Infinity", "NegInf@odata.type": "Edm.Double",
        "Dbl": 1.5,
        "Whole": 2.0,
        "Big": 1.7976931348623157e308,
        "Small": -4.9e-324,
        "BinEmpty": "", "BinEmpty@odata.type": "Edm.Binary",
        "Bin": "AAEC/f7/", "Bin@odata.type": "Edm.Binary",
        "Guid": "c9da6455-213d-42c9-9a79-3e9149a57833", "Guid@odata.type": "Edm.Guid",
        "T": true, "F": false,
        "Markup": "a<b&c]]>d\"e'f",
        "Spaces": "  lead and trail  ",
        "OnlySpaces": "   ",
        "Unicode": "héllo ☃ 𝄞",
        "Lines": "one\ntwo\tthree",
        "Returns": "a\r\nb\rc"
    })
}

/// The same values as an Atom entry.
fn edge_atom(rk: &str) -> String {
    entry_xml(&[
        ("PartitionKey", "", Some("p")),
        ("RowKey", "", Some(rk)),
        ("I32Min", "Edm.Int32", Some("-2147483648")),
        ("I32Max", "Edm.Int32", Some("2147483647")),
        ("I64Min", "Edm.Int64", Some("-9223372036854775808")),
        ("I64Max", "Edm.Int64", Some("9223372036854775807")),
        ("DtMin", "Edm.DateTime", Some("1601-01-01T00:00:00Z")),
        ("DtMax", "Edm.DateTime", Some("9999-12-31T23:59:59.9999999Z")),
        ("DtFrac", "Edm.DateTime", Some("2008-09-18T23:46:19.4277424Z")),
        ("DtHalf", "Edm.DateTime", Some("2020-01-01T00:00:00.5Z")),
        ("Empty", "", Some("")),
        ("Nan", "Edm.Double", Some("NaN")),
        ("Inf", "Edm.Double", Some("INF")),
        ("NegInf", "Edm.Double", Some("-INF")),
        ("Dbl", "Edm.Double", Some("1.5")),
        ("Whole", "Edm.Double", Some("2")),
        ("Big", "Edm.Double", Some("1.7976931348623157E+308")),
        ("Small", "Edm.Double", Some("-4.9E-324")),
        ("BinEmpty", "Edm.Binary", Some("")),
        ("Bin", "Edm.Binary", Some("AAEC/f7/")),
        ("Guid", "Edm.Guid", Some("c9da6455-213d-42c9-9a79-3e9149a57833")),
        ("T", "Edm.Boolean", Some("true")),
        ("F", "Edm.Boolean", Some("false")),
        ("Markup", "", Some("a<b&c]]>d\"e'f")),
        ("Spaces", "", Some("  lead and trail  ")),
        ("OnlySpaces", "", Some("   ")),
        ("Unicode", "", Some("héllo ☃ 𝄞")),
        ("Lines", "", Some("one\ntwo\tthree")),
        ("Returns", "", Some("a\r\nb\rc")),
    ])
}

/// What the Atom rendering of the edge entity must say (Doubles other than the special
/// values are checked numerically).
fn assert_edge_atom(props: &[Prop]) {
    assert_prop(props, "I32Min", Some("Edm.Int32"), "-2147483648");
    assert_prop(props, "I32Max", Some("Edm.Int32"), "2147483647");
    assert_prop(props, "I64Min", Some("Edm.Int64"), "-9223372036854775808");
    assert_prop(props, "I64Max", Some("Edm.Int64"), "9223372036854775807");
    assert_prop(props, "DtMin", Some("Edm.DateTime"), "1601-01-01T00:00:00Z");
    assert_prop(props, "DtHalf", Some("Edm.DateTime"), "2020-01-01T00:00:00.5Z");
    assert_prop(props, "DtMax", Some("Edm.DateTime"), "9999-12-31T23:59:59.9999999Z");
    assert_prop(props, "DtFrac", Some("Edm.DateTime"), "2008-09-18T23:46:19.4277424Z");
    assert_prop(props, "Empty", None, "");
    assert_prop(props, "Nan", Some("Edm.Double"), "NaN");
    assert_prop(props, "Inf", Some("Edm.Double"), "INF");
    assert_prop(props, "NegInf", Some("Edm.Double"), "-INF");
    for (name, want) in [("Dbl", 1.5), ("Whole", 2.0), ("Big", 1.7976931348623157e308), ("Small", -4.9e-324)]
    {
        let p = prop(props, name);
        assert_eq!(p.edm.as_deref(), Some("Edm.Double"), "{name}");
        assert_eq!(p.text.parse::<f64>().ok(), Some(want), "{name}: {:?}", p.text);
    }
    assert_prop(props, "BinEmpty", Some("Edm.Binary"), "");
    assert_prop(props, "Bin", Some("Edm.Binary"), "AAEC/f7/");
    assert_prop(props, "Guid", Some("Edm.Guid"), "c9da6455-213d-42c9-9a79-3e9149a57833");
    assert_prop(props, "T", Some("Edm.Boolean"), "true");
    assert_prop(props, "F", Some("Edm.Boolean"), "false");
    assert_prop(props, "Markup", None, "a<b&c]]>d\"e'f");
    assert_prop(props, "Spaces", None, "  lead and trail  ");
    assert_prop(props, "OnlySpaces", None, "   ");
    assert_prop(props, "Unicode", None, "héllo ☃ 𝄞");
    assert_prop(props, "Lines", None, "one\ntwo\tthree");
    assert_prop(props, "Returns", None, "a\r\nb\rc");
    assert_eq!(props.len(), 3 + 27, "{props:#?}");
}

#[tokio::test]
async fn every_type_round_trips_between_atom_and_json() {
    let (_s, c) = setup("cross").await;
    // JSON in, Atom out.
    let r = c.insert("cross", edge_json("json")).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let (_, from_json) = get_atom(&c, "cross", "p", "json").await;
    assert_edge_atom(&from_json.props());
    // Atom in (answered as Atom), JSON out.
    let r = Req::new("POST", "/cross").v(OLD).accept(ACCEPT_ATOM).atom(&edge_atom("atom")).send(&c).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_edge_atom(&parse_xml(&r.body).props());
    let j_from_json = get_json_full(&c, "cross", "p", "json").await;
    let j_from_atom = get_json_full(&c, "cross", "p", "atom").await;
    assert_eq!(
        json_props(&j_from_atom),
        json_props(&j_from_json),
        "Atom-inserted entity reads back as JSON like its JSON twin"
    );
    // Spot checks of the JSON side.
    let p = json_props(&j_from_atom);
    assert_eq!(p["I64Min"], "-9223372036854775808");
    assert_eq!(p["I64Min@odata.type"], "Edm.Int64");
    assert_eq!(p["DtMin"], "1601-01-01T00:00:00Z");
    assert_eq!(p["Inf"], "Infinity");
    assert_eq!(p["NegInf"], "-Infinity");
    assert_eq!(p["Nan"], "NaN");
    assert_eq!(p["BinEmpty"], "");
    assert_eq!(p["BinEmpty@odata.type"], "Edm.Binary");
    assert_eq!(p["Markup"], "a<b&c]]>d\"e'f");
    assert_eq!(p["Spaces"], "  lead and trail  ");
    assert_eq!(p["Unicode"], "héllo ☃ 𝄞");
    assert!(p["Whole"].is_f64(), "a Double stays a Double: {}", p["Whole"]);
    // And both read back identically as Atom.
    let (_, from_atom) = get_atom(&c, "cross", "p", "atom").await;
    assert_eq!(atom_custom_props(&from_atom), atom_custom_props(&from_json));
    // The same through Insert Or Replace and a feed.
    let r = Req::new("PUT", &entity_path("cross", "p", "upsert"))
        .v(OLD)
        .accept(ACCEPT_ATOM)
        .atom(&edge_atom("upsert"))
        .send(&c)
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
    let r = Req::new("GET", "/cross()").v(OLD).accept(ACCEPT_ATOM).send(&c).await;
    let f = parse_xml(&r.body);
    let entries = assert_feed(&f, &base(&c), "cross");
    assert_eq!(entries.len(), 3);
    for e in entries {
        assert_edge_atom(&e.props());
    }
}

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn errors_under_atom_are_xml_with_the_json_status_and_code() {
    let (_s, c) = setup("errs").await;
    let cases: Vec<(&str, String)> = vec![
        ("GET", entity_path("errs", "no", "pe")),
        ("GET", entity_path("nosuchtable", "a", "b")),
        ("GET", "/nosuchtable()".into()),
        ("DELETE", entity_path("errs", "no", "pe")),
        ("DELETE", "/Tables('nosuchtable')".into()),
        ("GET", "/errs()?$filter=PartitionKey%20eq".into()),
    ];
    for (method, path) in &cases {
        let mut atom = Req::new(method, path).v(OLD).accept(ACCEPT_ATOM);
        let mut js = Req::new(method, path).v(OLD).accept(MINIMAL);
        if *method == "DELETE" {
            atom = atom.h("If-Match", "*");
            js = js.h("If-Match", "*");
        }
        let ra = atom.send(&c).await;
        let rj = js.send(&c).await;
        assert!(rj.status >= 400, "{method} {path}: {}", rj.body);
        let code = rj.error_code();
        assert!(!code.is_empty(), "{}", rj.body);
        let msg = assert_xml_error(&ra, rj.status, &code);
        let json_msg = rj.json()["odata.error"]["message"]["value"].as_str().unwrap().to_owned();
        assert_eq!(
            msg.split("\nRequestId:").next(),
            json_msg.split("\nRequestId:").next(),
            "same message text"
        );
    }
    // The common case spelled out, checked against the documentation's sample.
    let r = Req::new("GET", &entity_path("errs", "no", "pe"))
        .v(OLD)
        .accept("application/atom+xml")
        .send(&c)
        .await;
    let msg = assert_xml_error(&r, 404, "ResourceNotFound");
    assert!(msg.starts_with("The specified resource does not exist.\nRequestId:"), "{msg:?}");
    let docs = parse_xml(DOCS_ERROR);
    let got = parse_xml(&r.body);
    assert_eq!((docs.ns.as_str(), docs.name.as_str()), (got.ns.as_str(), got.name.as_str()));
    let shape = |e: &El| {
        e.children.iter().map(|c| (c.ns.clone(), c.name.clone(), c.attrs.clone())).collect::<Vec<_>>()
    };
    assert_eq!(shape(&got), shape(&docs), "same children and attributes as the documentation's error");
}

// ---------------------------------------------------------------------------------------
// Change sets with Atom operations
// ---------------------------------------------------------------------------------------

struct Op {
    method: &'static str,
    url: String,
    headers: Vec<(&'static str, String)>,
    body: Option<String>,
}

fn op(method: &'static str, url: String) -> Op {
    Op { method, url, headers: Vec::new(), body: None }
}

impl Op {
    fn h(mut self, k: &'static str, v: &str) -> Op {
        self.headers.push((k, v.into()));
        self
    }
    fn atom(self, body: String) -> Op {
        let mut o = self.h("Content-Type", "application/atom+xml;type=entry");
        o.body = Some(body);
        o
    }
    fn json(self, v: Value) -> Op {
        let mut o = self.h("Content-Type", "application/json");
        o.body = Some(v.to_string());
        o
    }
}

fn changeset(ops: &[Op]) -> (String, String) {
    let b = format!("batch_{}", uuid::Uuid::new_v4());
    let cs = format!("changeset_{}", uuid::Uuid::new_v4());
    let mut s = format!("--{b}\r\nContent-Type: multipart/mixed; boundary={cs}\r\n\r\n");
    for (i, o) in ops.iter().enumerate() {
        s +=
            &format!("--{cs}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n");
        s += &format!("{} {} HTTP/1.1\r\nContent-ID: {}\r\n", o.method, o.url, i + 1);
        for (k, v) in &o.headers {
            s += &format!("{k}: {v}\r\n");
        }
        if let Some(body) = &o.body {
            s += &format!("Content-Length: {}\r\n\r\n{body}\r\n", body.len());
        } else {
            s += "\r\n";
        }
    }
    s += &format!("--{cs}--\r\n--{b}--\r\n");
    (format!("multipart/mixed; boundary={b}"), s)
}

#[derive(Debug)]
struct Part {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Part {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

fn split_multipart<'a>(body: &'a str, content_type: &str) -> Vec<&'a str> {
    let boundary =
        content_type.split("boundary=").nth(1).unwrap_or_else(|| panic!("no boundary: {content_type}"));
    let boundary = boundary.split(';').next().unwrap().trim().trim_matches('"');
    let delim = format!("--{boundary}");
    let mut parts = Vec::new();
    let mut closed = false;
    for seg in body.split(delim.as_str()).skip(1) {
        if seg.starts_with("--") {
            closed = true;
            break;
        }
        let seg = seg.strip_prefix("\r\n").expect("CRLF after a delimiter");
        parts.push(seg.strip_suffix("\r\n").unwrap_or(seg));
    }
    assert!(closed, "no close delimiter {delim}--: {body}");
    parts
}

fn head_and_body(s: &str) -> (Vec<(String, String)>, &str) {
    let (head, body) = s.split_once("\r\n\r\n").unwrap_or((s.trim_end_matches("\r\n"), ""));
    let headers = head
        .split("\r\n")
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap_or_else(|| panic!("bad header line {l:?}"));
            (k.trim().to_owned(), v.trim().to_owned())
        })
        .collect();
    (headers, body)
}

/// The parts of a change set response (asserting the 202 envelope).
fn changeset_parts(r: &Resp) -> Vec<Part> {
    assert_eq!(r.status, 202, "batch status: {}", r.body);
    let top = split_multipart(&r.body, &r.header("content-type").expect("Content-Type"));
    assert_eq!(top.len(), 1, "{}", r.body);
    let (mime, rest) = head_and_body(top[0]);
    let ct = &mime.iter().find(|(k, _)| k.eq_ignore_ascii_case("content-type")).expect("part Content-Type").1;
    assert!(ct.starts_with("multipart/mixed"), "a change set response: {}", r.body);
    split_multipart(rest, ct)
        .into_iter()
        .map(|p| {
            let (_, http) = p.split_once("\r\n\r\n").expect("MIME headers");
            let (status_line, rest) = http.split_once("\r\n").expect("status line");
            let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
            let (headers, body) = head_and_body(rest);
            Part { status, headers, body: body.to_owned() }
        })
        .collect()
}

async fn post_batch(c: &Client, ops: &[Op]) -> Resp {
    let (ct, body) = changeset(ops);
    Req::new("POST", "/$batch").v(OLD).accept(ACCEPT_ATOM).body(&ct, &body).send(c).await
}

#[tokio::test]
async fn a_change_set_of_atom_inserts_answers_atom_entries() {
    let (s, c) = setup("bat").await;
    let url = format!("{}/bat", s.endpoint());
    let ops = [
        op("POST", url.clone()).atom(entry_xml(&[
            ("PartitionKey", "", Some("p")),
            ("RowKey", "", Some("1")),
            ("Rating", "Edm.Int32", Some("9")),
            ("Text", "", Some(".NET...")),
        ])),
        op("POST", url.clone())
            .h("Prefer", "return-no-content")
            .atom(entry_xml(&[("PartitionKey", "", Some("p")), ("RowKey", "", Some("2"))])),
        op("POST", url.clone()).h("Accept", "application/atom+xml").atom(entry_xml(&[
            ("PartitionKey", "", Some("p")),
            ("RowKey", "", Some("3")),
            ("When", "Edm.DateTime", Some("2013-08-30T20:44:09Z")),
        ])),
    ];
    let r = post_batch(&c, &ops).await;
    let parts = changeset_parts(&r);
    assert_eq!(parts.len(), 3, "{}", r.body);
    let b = base(&c);
    for (i, rk) in [(0, "1"), (2, "3")] {
        let p = &parts[i];
        assert_eq!(p.status, 201, "part {i}: {}", r.body);
        assert_eq!(p.header("Content-Type"), Some(CT_ENTRY), "part {i}");
        let e = parse_xml(&p.body);
        let key = format!("(PartitionKey='p',RowKey='{rk}')");
        assert_eq!(e.attr(M, "etag"), p.header("ETag"), "m:etag equals the part's ETag");
        assert_eq!(e.atom_text("id"), format!("{b}/bat{key}"));
        assert_eq!(p.header("Location"), Some(format!("{b}/bat{key}").as_str()));
        assert_eq!(prop(&e.props(), "RowKey").text, rk);
    }
    assert_prop(&parse_xml(&parts[0].body).props(), "Rating", Some("Edm.Int32"), "9");
    assert_prop(&parse_xml(&parts[2].body).props(), "When", Some("Edm.DateTime"), "2013-08-30T20:44:09Z");
    assert_eq!(parts[1].status, 204, "{}", r.body);
    assert_eq!(parts[1].body, "");
    assert!(parts[1].header("ETag").is_some());
    let rows: Vec<String> =
        all_json(&c, "bat").await.iter().map(|v| v["RowKey"].as_str().unwrap().to_owned()).collect();
    assert_eq!(rows, ["1", "2", "3"]);
}

#[tokio::test]
async fn a_failing_atom_operation_answers_an_xml_error_and_rolls_back() {
    let (s, c) = setup("batfail").await;
    assert_eq!(c.insert("batfail", json!({"PartitionKey": "p", "RowKey": "taken"})).await.status, 201);
    let url = format!("{}/batfail", s.endpoint());
    let good = |rk: &str| {
        op("POST", url.clone()).atom(entry_xml(&[("PartitionKey", "", Some("p")), ("RowKey", "", Some(rk))]))
    };
    let cases: Vec<(Vec<Op>, usize, u16, &str)> = vec![
        (
            vec![
                good("a"),
                op("POST", url.clone()).atom(entry_xml(&[
                    ("PartitionKey", "", Some("p")),
                    ("RowKey", "", Some("b")),
                    ("N", "Edm.Int32", Some("x")),
                ])),
            ],
            1,
            400,
            "InvalidInput",
        ),
        (vec![good("a"), good("b"), good("taken")], 2, 409, "EntityAlreadyExists"),
        (
            vec![
                good("a"),
                op("MERGE", format!("{url}(PartitionKey='p',RowKey='missing')"))
                    .h("If-Match", "*")
                    .atom(entry_xml(&[("X", "", Some("1"))])),
            ],
            1,
            404,
            "ResourceNotFound",
        ),
    ];
    for (ops, index, status, code) in cases {
        let r = post_batch(&c, &ops).await;
        let parts = changeset_parts(&r);
        assert_eq!(parts.len(), 1, "a failed change set has one part: {}", r.body);
        let p = &parts[0];
        assert_eq!(p.status, status, "{}", r.body);
        assert_eq!(p.header("Content-Type"), Some(CT_ERROR), "{}", r.body);
        let msg = xml_error_message(&p.body, code);
        assert!(msg.starts_with(&format!("{index}:")), "message starts with the index {index}: {msg:?}");
        let rows: Vec<String> =
            all_json(&c, "batfail").await.iter().map(|v| v["RowKey"].as_str().unwrap().to_owned()).collect();
        assert_eq!(rows, ["taken"], "nothing of the change set is written");
    }
}

#[tokio::test]
async fn a_change_set_mixing_json_and_atom_answers_each_in_its_own_format() {
    let (s, c) = setup("mixed").await;
    let url = format!("{}/mixed", s.endpoint());
    let ops = [
        op("POST", url.clone())
            .h("Accept", MINIMAL)
            .json(json!({"PartitionKey": "p", "RowKey": "j", "N": 1})),
        op("POST", url.clone()).atom(entry_xml(&[
            ("PartitionKey", "", Some("p")),
            ("RowKey", "", Some("a")),
            ("N", "Edm.Int32", Some("2")),
        ])),
        // A JSON body without an Accept, under an old version: answered in Atom.
        op("POST", url.clone()).json(json!({"PartitionKey": "p", "RowKey": "k", "N": 3})),
        // An Atom body asking for JSON.
        op("POST", url.clone()).h("Accept", FULL).atom(entry_xml(&[
            ("PartitionKey", "", Some("p")),
            ("RowKey", "", Some("b")),
            ("N", "Edm.Int32", Some("4")),
        ])),
    ];
    let r = post_batch(&c, &ops).await;
    let parts = changeset_parts(&r);
    assert_eq!(parts.len(), 4, "{}", r.body);
    assert!(parts.iter().all(|p| p.status == 201), "{}", r.body);
    let ct0 = parts[0].header("Content-Type").unwrap();
    assert!(ct0.starts_with(MINIMAL), "{ct0}");
    let v: Value = serde_json::from_str(&parts[0].body).unwrap();
    assert_eq!((v["RowKey"].clone(), v["N"].clone()), (json!("j"), json!(1)));
    for (i, rk, n) in [(1, "a", "2"), (2, "k", "3")] {
        assert_eq!(parts[i].header("Content-Type"), Some(CT_ENTRY), "part {i}: {}", r.body);
        let props = parse_xml(&parts[i].body).props();
        assert_prop(&props, "RowKey", None, rk);
        assert_prop(&props, "N", Some("Edm.Int32"), n);
    }
    let ct3 = parts[3].header("Content-Type").unwrap();
    assert!(ct3.starts_with(FULL), "{ct3}");
    let v: Value = serde_json::from_str(&parts[3].body).unwrap();
    assert_eq!((v["RowKey"].clone(), v["N"].clone()), (json!("b"), json!(4)));
    assert_eq!(all_json(&c, "mixed").await.len(), 4);

    // A failure in the same shape: the failing JSON operation answers JSON.
    let ops = [
        op("POST", url.clone())
            .atom(entry_xml(&[("PartitionKey", "", Some("p")), ("RowKey", "", Some("c"))])),
        op("POST", url.clone()).h("Accept", MINIMAL).json(json!({"PartitionKey": "p", "RowKey": "j"})),
    ];
    let r = post_batch(&c, &ops).await;
    let parts = changeset_parts(&r);
    assert_eq!(parts.len(), 1, "{}", r.body);
    assert_eq!(parts[0].status, 409);
    assert!(parts[0].header("Content-Type").unwrap().starts_with("application/json"), "{}", r.body);
    let v: Value = serde_json::from_str(&parts[0].body).unwrap();
    assert_eq!(v["odata.error"]["code"], "EntityAlreadyExists");
    assert!(v["odata.error"]["message"]["value"].as_str().unwrap().starts_with("1:"));
    assert_eq!(all_json(&c, "mixed").await.len(), 4, "nothing more written");
}
