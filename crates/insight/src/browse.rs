//! The read-only data browser's pages (pure: HTML from what the HTTP layer read):
//! the tables of each account, and one page of a table's entities with a `$filter`
//! box, each value shown with its Edm type. Self-contained (no script, no fetch) and
//! every text escaped with [`super::html::esc`].

use super::html::esc;
use aztable_model::{EdmValue, Entity};
use base64::Engine as _;

/// Entities on one page.
pub const PAGE_SIZE: usize = 50;

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}\
th{background:#f3f3f3}.t{color:#777;font-size:12px}.err{color:#a00}input[type=text]{width:40em}\
code{white-space:pre-wrap;word-break:break-all}";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head>\
         <body>{body}<p class=\"t\">aztable · read-only · <a href=\"{}\">partition advisor</a></p></body></html>",
        esc(title),
        "/_aztable/insight"
    )
}

/// `?key=…` to carry on links when the page was opened with one (beyond loopback the
/// browser's links need it), else nothing.
fn key_param(key: Option<&str>, first: bool) -> String {
    match key {
        Some(k) => format!("{}key={}", if first { '?' } else { '&' }, enc(k)),
        None => String::new(),
    }
}

fn enc(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// The table list: `(account, its table names)`.
pub fn tables_page(accounts: &[(String, Vec<String>)], key: Option<&str>) -> String {
    let mut body = String::from("<h1>Tables</h1>");
    for (account, tables) in accounts {
        body.push_str(&format!("<h2>{}</h2>", esc(account)));
        if tables.is_empty() {
            body.push_str("<p class=\"t\">no tables</p>");
            continue;
        }
        body.push_str("<ul>");
        for t in tables {
            body.push_str(&format!(
                "<li><a href=\"/_aztable/browse/{}/{}{}\">{}</a></li>",
                esc(&enc(account)),
                esc(&enc(t)),
                esc(&key_param(key, true)),
                esc(t)
            ));
        }
        body.push_str("</ul>");
    }
    page("aztable · tables", &body)
}

/// What an entity page shows.
#[derive(Debug)]
pub struct EntityPage<'a> {
    pub account: &'a str,
    pub table: &'a str,
    /// The `$filter` typed in the box, if any.
    pub filter: &'a str,
    pub entities: &'a [Entity],
    /// Where the next page starts (PartitionKey, RowKey).
    pub next: Option<(&'a str, &'a str)>,
    /// A refused filter's message.
    pub error: Option<&'a str>,
    pub key: Option<&'a str>,
}

/// The `next` parameter of a page link: the keys joined by a newline (a character no
/// key may hold).
pub fn next_param(pk: &str, rk: &str) -> String {
    format!("{pk}\n{rk}")
}

/// Splits a `next` parameter back into its keys.
pub fn parse_next(s: &str) -> Option<(String, String)> {
    s.split_once('\n').map(|(p, r)| (p.to_owned(), r.to_owned()))
}

fn value_text(v: &EdmValue) -> String {
    match v {
        EdmValue::String(s) => s.clone(),
        EdmValue::Int32(i) => i.to_string(),
        EdmValue::Int64(i) => i.to_string(),
        EdmValue::Double(d) => format!("{d:?}"),
        EdmValue::Boolean(b) => b.to_string(),
        EdmValue::DateTime(t) => t.to_rfc3339_trimmed(),
        EdmValue::Guid(g) => aztable_model::edm::format_guid(g),
        EdmValue::Binary(b) => base64::engine::general_purpose::STANDARD.encode(b),
    }
}

/// One page of a table's entities.
pub fn entities_page(p: &EntityPage<'_>) -> String {
    let here = format!("/_aztable/browse/{}/{}", enc(p.account), enc(p.table));
    let mut body = format!(
        "<p><a href=\"/_aztable/browse{}\">tables</a> / {}</p><h1>{}</h1>\
         <form method=\"get\" action=\"{}\"><input type=\"text\" name=\"filter\" value=\"{}\" \
         placeholder=\"$filter, e.g. PartitionKey eq 'p1' and Age gt 30\"> <button>Filter</button>{}</form>",
        esc(&key_param(p.key, true)),
        esc(p.account),
        esc(p.table),
        esc(&here),
        esc(p.filter),
        p.key.map_or(String::new(), |k| format!("<input type=\"hidden\" name=\"key\" value=\"{}\">", esc(k))),
    );
    if let Some(e) = p.error {
        body.push_str(&format!("<p class=\"err\">{}</p>", esc(e)));
    }
    body.push_str(&format!("<p class=\"t\">{} entities on this page</p>", p.entities.len()));
    body.push_str(
        "<table><tr><th>PartitionKey</th><th>RowKey</th><th>Timestamp</th><th>Properties</th></tr>",
    );
    for e in p.entities {
        body.push_str(&format!(
            "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>",
            esc(&e.partition_key),
            esc(&e.row_key),
            esc(&e.timestamp.to_rfc3339_7())
        ));
        for (name, v) in &e.properties {
            body.push_str(&format!(
                "<div><b>{}</b> <span class=\"t\">{}</span> <code>{}</code></div>",
                esc(name),
                esc(v.edm_type().as_str()),
                esc(&value_text(v))
            ));
        }
        body.push_str("</td></tr>");
    }
    body.push_str("</table>");
    if let Some((pk, rk)) = p.next {
        let mut href = format!("{here}?next={}", enc(&next_param(pk, rk)));
        if !p.filter.is_empty() {
            href.push_str(&format!("&filter={}", enc(p.filter)));
        }
        href.push_str(&key_param(p.key, false));
        body.push_str(&format!("<p><a rel=\"next\" href=\"{}\">next page</a></p>", esc(&href)));
    }
    page(&format!("aztable · {}", p.table), &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aztable_model::Ticks;

    #[test]
    fn hostile_text_is_escaped_everywhere() {
        let hostile = "<script>alert('x')</script>\"&";
        let e = Entity {
            partition_key: hostile.into(),
            row_key: hostile.into(),
            timestamp: Ticks(0),
            properties: vec![(hostile.into(), EdmValue::String(hostile.into()))],
        };
        let html = entities_page(&EntityPage {
            account: hostile,
            table: hostile,
            filter: hostile,
            entities: std::slice::from_ref(&e),
            next: Some((hostile, hostile)),
            error: Some(hostile),
            key: Some(hostile),
        });
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;"));
        let list = tables_page(&[(hostile.into(), vec![hostile.into()])], Some(hostile));
        assert!(!list.contains("<script"), "{list}");
        assert_eq!(parse_next(&next_param("a b", "c")), Some(("a b".into(), "c".into())));
    }
}
