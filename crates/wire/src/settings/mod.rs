//! The settings kept beside the data, as the service's XML bodies carry them (pure: no
//! I/O): a table's stored access policies ([`acl`]), an account's service properties with
//! their CORS rules, and service stats ([`service_properties`]), and matching CORS rules
//! against requests ([`cors`]).
//!
//! Parsing goes through a small element tree ([`Element`]) built with quick-xml: bodies are
//! tiny (a few KiB), and validating a tree is clearer than validating a stream. Namespace
//! prefixes are dropped, DTDs are refused, only the predefined and character entity
//! references are resolved, and nesting and element counts are bounded. Every failure is a
//! 400 `InvalidXmlDocument` (see [`invalid_xml`]).

pub mod acl;
pub mod cors;
pub mod service_properties;

use aztable_model::error::{ApiError, ErrorCode};
use quick_xml::events::Event;
use quick_xml::Reader;

/// Deepest element nesting accepted (the deepest valid document nests 4 levels).
const MAX_DEPTH: usize = 16;
/// Most elements accepted in one document (a full service properties body has ~60).
const MAX_ELEMENTS: usize = 4096;

/// The XML declaration every body the service writes starts with.
pub const XML_DECL: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?>";

/// One element: its local name, its text (all text children concatenated, entities
/// resolved, untrimmed) and its child elements in document order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Element {
    pub name: String,
    pub text: String,
    pub children: Vec<Element>,
}

impl Element {
    /// The first child with this local name.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// Every child with this local name, in document order.
    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The first child with this name, or 400 naming the missing node under `self`.
    pub fn required(&self, name: &str) -> Result<&Element, ApiError> {
        self.child(name).ok_or_else(|| self.missing(name))
    }

    /// The 400 for a required child `name` that is missing under `self`.
    pub fn missing(&self, name: &str) -> ApiError {
        invalid_xml(format!("The required XML node '{}/{name}' is missing.", self.name))
    }
}

/// The 400 every malformed or invalid XML body gets. The service documents
/// `InvalidXmlDocument`, `InvalidXmlNodeValue` and `MissingRequiredXmlNode`; only the first
/// is in the error registry today, so all three cases use it with a specific message.
pub fn invalid_xml(message: impl Into<String>) -> ApiError {
    ApiError::with_message(ErrorCode::InvalidXmlDocument, message.into())
}

/// Parses a document into its root element; `Ok(None)` for an empty (or all-whitespace)
/// body. A UTF-8 byte order mark is skipped.
pub fn parse_document(body: &[u8]) -> Result<Option<Element>, ApiError> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let text = std::str::from_utf8(body).map_err(|_| invalid_xml("The XML body is not valid UTF-8."))?;
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let syntax = |e: quick_xml::Error| invalid_xml(format!("XML specified is not syntactically valid: {e}"));
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let mut count = 0usize;
    loop {
        let event = reader.read_event().map_err(syntax)?;
        let opened = match &event {
            Event::Start(start) | Event::Empty(start) => Some(start),
            _ => None,
        };
        if let Some(start) = opened {
            count += 1;
            if root.is_some() || count > MAX_ELEMENTS || stack.len() >= MAX_DEPTH {
                return Err(invalid_xml("The XML document has too many or too deeply nested elements."));
            }
            let name = String::from_utf8_lossy(start.local_name().into_inner()).into_owned();
            let element = Element { name, ..Element::default() };
            if matches!(event, Event::Empty(_)) {
                close(element, &mut stack, &mut root);
            } else {
                stack.push(element);
            }
            continue;
        }
        match event {
            Event::End(_) => match stack.pop() {
                Some(element) => close(element, &mut stack, &mut root),
                None => return Err(invalid_xml("Unexpected closing tag.")),
            },
            Event::Text(t) => {
                let s = t.xml10_content().map_err(|e| syntax(e.into()))?;
                push_text(&mut stack, &s)?;
            }
            Event::CData(c) => {
                let s = c.xml10_content().map_err(|e| syntax(e.into()))?;
                push_text(&mut stack, &s)?;
            }
            Event::GeneralRef(r) => {
                let resolved = match r.resolve_char_ref().map_err(syntax)? {
                    Some(ch) => ch.to_string(),
                    None => {
                        let name = r.decode().map_err(|e| syntax(e.into()))?;
                        quick_xml::escape::resolve_predefined_entity(&name)
                            .ok_or_else(|| invalid_xml(format!("Unknown entity reference '&{name};'.")))?
                            .to_owned()
                    }
                };
                push_text(&mut stack, &resolved)?;
            }
            Event::DocType(_) => return Err(invalid_xml("DTDs are not allowed.")),
            Event::Eof => break,
            _ => {}
        }
    }
    if !stack.is_empty() {
        return Err(invalid_xml("The XML document ends inside an element."));
    }
    root.map(Some).ok_or_else(|| invalid_xml("The XML document has no root element."))
}

/// Attaches a finished element to its parent, or makes it the root.
fn close(element: Element, stack: &mut [Element], root: &mut Option<Element>) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(element),
        None => *root = Some(element),
    }
}

/// Adds text to the open element; non-whitespace text outside the root is an error.
fn push_text(stack: &mut [Element], s: &str) -> Result<(), ApiError> {
    match stack.last_mut() {
        Some(open) => open.text.push_str(s),
        None if s.trim().is_empty() => {}
        None => return Err(invalid_xml("Text outside the root element.")),
    }
    Ok(())
}

/// Appends `<name>escaped text</name>`.
pub(crate) fn push_leaf(out: &mut String, name: &str, text: &str) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    out.push_str(&quick_xml::escape::escape(text));
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

/// Parses `true`/`false` (any case, surrounding whitespace ignored).
pub(crate) fn parse_bool(element: &Element) -> Result<bool, ApiError> {
    match element.text.trim() {
        t if t.eq_ignore_ascii_case("true") => Ok(true),
        t if t.eq_ignore_ascii_case("false") => Ok(false),
        t => Err(bad_value(&element.name, t)),
    }
}

/// The 400 for a node whose value is out of range or of the wrong form.
pub(crate) fn bad_value(name: &str, value: &str) -> ApiError {
    invalid_xml(format!("The value '{value}' of the XML node '{name}' is not valid."))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Option<Element>, String> {
        parse_document(s.as_bytes()).map_err(|e| e.message.into_owned())
    }

    #[test]
    fn tree_text_entities_cdata_and_prefixes() {
        let doc = "\u{FEFF}<?xml version='1.0' encoding='utf8'?>\n<!-- c --><a:Root xmlns:a=\"x\">\n  \
                   <B>x &amp; y &#65;&#x42;</B><C/><B><![CDATA[<raw>]]></B>\n</a:Root>";
        let root = parse(doc).expect("valid").expect("root");
        assert_eq!(root.name, "Root");
        let bs: Vec<&str> = root.children_named("B").map(|b| b.text.as_str()).collect();
        assert_eq!(bs, ["x & y AB", "<raw>"]);
        assert_eq!(root.child("C").map(|c| c.text.as_str()), Some(""));
        assert!(root.required("D").is_err());
    }

    #[test]
    fn empty_and_malformed() {
        assert_eq!(parse(""), Ok(None));
        assert_eq!(parse(" \r\n"), Ok(None));
        for bad in [
            "<a>",
            "<a></b>",
            "</a>",
            "<a/><b/>",
            "text",
            "<a>&foo;</a>",
            "<!DOCTYPE a [<!ENTITY e \"x\">]><a>&e;</a>",
            "<a><b></a>",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should fail");
        }
        let deep = "<a>".repeat(MAX_DEPTH + 1) + &"</a>".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep).is_err());
        assert!(parse_document(b"<a>\xFF</a>").is_err());
    }

    #[test]
    fn bools_and_leaves() {
        let e = |t: &str| Element { name: "Enabled".into(), text: t.into(), children: vec![] };
        assert_eq!(parse_bool(&e(" TRUE ")), Ok(true));
        assert_eq!(parse_bool(&e("false")), Ok(false));
        assert!(parse_bool(&e("1")).is_err());
        let mut out = String::new();
        push_leaf(&mut out, "Id", "a<b&\"c\"");
        assert_eq!(out, "<Id>a&lt;b&amp;&quot;c&quot;</Id>");
    }
}
