//! Table ACLs: the `<SignedIdentifiers>` body of Get/Set Table ACL.
//!
//! ```xml
//! <?xml version="1.0" encoding="utf-8"?>
//! <SignedIdentifiers>
//!   <SignedIdentifier>
//!     <Id>unique-64-character-value</Id>
//!     <AccessPolicy><Start>…</Start><Expiry>…</Expiry><Permission>raud</Permission></AccessPolicy>
//!   </SignedIdentifier>
//! </SignedIdentifiers>
//! ```
//!
//! Rules (Set Table ACL): at most 5 identifiers; `Id` 1–64 characters; `AccessPolicy` and
//! each of its children optional (the SDKs omit unset fields; an empty element counts as
//! absent); `Start`/`Expiry` in the ISO 8601 forms of [`aztable_model::policy::parse_time`];
//! `Permission` only letters from `raud`. An empty body clears the ACL. Every violation is
//! 400 `InvalidXmlDocument` (Azurite uses that code for the count and permission checks).
//! Times are written back with seven fractional digits, as the service does; Get Table ACL
//! writes only the fields that were set, and no `<AccessPolicy>` at all for an identifier
//! with none (the real service's answer, recorded by the Python SDK's
//! `test_set_table_acl_with_empty_signed_identifier`).

use super::{bad_value, invalid_xml, parse_document, push_leaf, Element, XML_DECL};
use aztable_model::error::ApiError;
use aztable_model::policy::parse_time;
use aztable_model::AccessPolicy;
use aztable_model::Ticks;

/// Most stored access policies per table.
pub const MAX_POLICIES: usize = 5;
/// Longest `Id`, in characters.
pub const MAX_ID_CHARS: usize = 64;

/// One stored access policy of a table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SignedIdentifier {
    pub id: String,
    pub start: Option<Ticks>,
    pub expiry: Option<Ticks>,
    /// Letters from `raud`, as sent.
    pub permission: Option<String>,
}

impl SignedIdentifier {
    /// The policy as a SAS resolves it.
    pub fn policy(&self) -> AccessPolicy {
        AccessPolicy { start: self.start, expiry: self.expiry, permission: self.permission.clone() }
    }
}

/// Finds the policy `si` in a table's ACL (the lookup a SAS needs; `Id`s match exactly).
pub fn find_policy(acl: &[SignedIdentifier], si: &str) -> Option<AccessPolicy> {
    acl.iter().find(|s| s.id == si).map(SignedIdentifier::policy)
}

/// Parses a Set Table ACL body.
pub fn parse_acl(body: &[u8]) -> Result<Vec<SignedIdentifier>, ApiError> {
    let Some(root) = parse_document(body)? else { return Ok(Vec::new()) };
    if root.name != "SignedIdentifiers" {
        return Err(invalid_xml(format!(
            "Unexpected root element '{}'; expected 'SignedIdentifiers'.",
            root.name
        )));
    }
    let items: Vec<&Element> = root.children_named("SignedIdentifier").collect();
    if items.len() > MAX_POLICIES {
        return Err(invalid_xml(format!(
            "At most {MAX_POLICIES} signed identifiers may be set on a table; {} were given.",
            items.len()
        )));
    }
    items.into_iter().map(parse_identifier).collect()
}

fn parse_identifier(item: &Element) -> Result<SignedIdentifier, ApiError> {
    let id = item.required("Id")?.text.clone();
    if id.is_empty() || id.chars().count() > MAX_ID_CHARS {
        return Err(bad_value("Id", &id));
    }
    let mut out = SignedIdentifier { id, ..SignedIdentifier::default() };
    let Some(policy) = item.child("AccessPolicy") else { return Ok(out) };
    let value = |name: &str| policy.child(name).map(|e| e.text.trim()).filter(|t| !t.is_empty());
    let time = |name: &str| value(name).map(|t| parse_time(t).ok_or_else(|| bad_value(name, t))).transpose();
    out.start = time("Start")?;
    out.expiry = time("Expiry")?;
    if let Some(p) = value("Permission") {
        if !p.chars().all(|c| "raud".contains(c)) {
            return Err(bad_value("Permission", p));
        }
        out.permission = Some(p.to_owned());
    }
    Ok(out)
}

/// Writes a Get Table ACL body.
pub fn write_acl(acl: &[SignedIdentifier]) -> Vec<u8> {
    let mut out = String::from(XML_DECL);
    if acl.is_empty() {
        out.push_str("<SignedIdentifiers />");
        return out.into_bytes();
    }
    out.push_str("<SignedIdentifiers>");
    for s in acl {
        out.push_str("<SignedIdentifier>");
        push_leaf(&mut out, "Id", &s.id);
        if s.start.is_none() && s.expiry.is_none() && s.permission.is_none() {
            // The service writes no `<AccessPolicy>` for a policy with no field set, however
            // it was sent (absent, `<AccessPolicy />`, or only empty children).
            out.push_str("</SignedIdentifier>");
            continue;
        }
        out.push_str("<AccessPolicy>");
        if let Some(t) = s.start {
            push_leaf(&mut out, "Start", &t.to_rfc3339_7());
        }
        if let Some(t) = s.expiry {
            push_leaf(&mut out, "Expiry", &t.to_rfc3339_7());
        }
        if let Some(p) = &s.permission {
            push_leaf(&mut out, "Permission", p);
        }
        out.push_str("</AccessPolicy></SignedIdentifier>");
    }
    out.push_str("</SignedIdentifiers>");
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Option<Ticks> {
        parse_time(s)
    }

    fn err(body: &str) -> String {
        let e = parse_acl(body.as_bytes()).expect_err(body);
        assert_eq!(e.code.as_str(), "InvalidXmlDocument", "{body}");
        assert_eq!(e.status(), 400);
        e.message.into_owned()
    }

    fn ident(id: &str, policy: &str) -> String {
        format!("<SignedIdentifier><Id>{id}</Id>{policy}</SignedIdentifier>")
    }

    fn doc(items: &[String]) -> String {
        format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers>{}</SignedIdentifiers>",
            items.concat()
        )
    }

    /// What azure-data-tables (Python, msrest/ElementTree) sends for
    /// `set_table_access_policy({"id1": AccessPolicy(start=…, expiry=…, permission="r"), "id2": None})`.
    #[test]
    fn python_sdk_body() {
        let body = "<?xml version='1.0' encoding='utf-8'?>\n<SignedIdentifiers><SignedIdentifier><Id>id1</Id>\
                    <AccessPolicy><Start>2021-01-01T00:00:00.000Z</Start><Expiry>2021-01-02T00:00:00.000Z</Expiry>\
                    <Permission>r</Permission></AccessPolicy></SignedIdentifier>\
                    <SignedIdentifier><Id>id2</Id></SignedIdentifier></SignedIdentifiers>";
        let acl = parse_acl(body.as_bytes()).expect("valid");
        assert_eq!(
            acl,
            vec![
                SignedIdentifier {
                    id: "id1".into(),
                    start: t("2021-01-01T00:00:00Z"),
                    expiry: t("2021-01-02"),
                    permission: Some("r".into()),
                },
                SignedIdentifier { id: "id2".into(), ..SignedIdentifier::default() },
            ]
        );
        assert_eq!(find_policy(&acl, "id1").and_then(|p| p.permission), Some("r".into()));
        assert_eq!(find_policy(&acl, "ID1"), None);
    }

    /// The documented sample request (Set Table ACL), pretty-printed with 7-digit fractions.
    #[test]
    fn documented_sample_and_round_trip() {
        let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<SignedIdentifiers>\n  <SignedIdentifier>\n    \
                    <Id>MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI=</Id>\n    <AccessPolicy>\n      \
                    <Start>2013-11-26T08:49:37.0000000Z</Start>\n      <Expiry>2013-11-27T08:49:37.0000000Z</Expiry>\n      \
                    <Permission>raud</Permission>\n    </AccessPolicy>\n  </SignedIdentifier>\n</SignedIdentifiers>";
        let acl = parse_acl(body.as_bytes()).expect("valid");
        let written = String::from_utf8(write_acl(&acl)).expect("utf8");
        assert_eq!(
            written,
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers><SignedIdentifier>\
             <Id>MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI=</Id><AccessPolicy>\
             <Start>2013-11-26T08:49:37.0000000Z</Start><Expiry>2013-11-27T08:49:37.0000000Z</Expiry>\
             <Permission>raud</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>"
        );
        assert_eq!(parse_acl(written.as_bytes()).expect("round trip"), acl);
    }

    #[test]
    fn date_forms_and_empty_fields() {
        let forms =
            ["2013-11-26", "2013-11-26T08:49Z", "2013-11-26T08:49:37Z", "2013-11-26T08:49:37.123456Z"];
        for f in forms {
            let body = doc(&[ident("a", &format!("<AccessPolicy><Start>{f}</Start></AccessPolicy>"))]);
            assert_eq!(parse_acl(body.as_bytes()).expect(f)[0].start, t(f), "{f}");
        }
        let body = doc(&[ident("a", "<AccessPolicy><Start/><Expiry></Expiry><Permission /></AccessPolicy>")]);
        assert_eq!(
            parse_acl(body.as_bytes()).expect("empty fields"),
            vec![SignedIdentifier { id: "a".into(), ..SignedIdentifier::default() }]
        );
    }

    /// The Python SDK's recording of the real service: `null` (no `<AccessPolicy>`), `empty`
    /// (`<AccessPolicy />`), `partial` (a permission only) and `full`.
    #[test]
    fn empty_and_partial_policies_are_written_as_the_service_does() {
        let body = doc(&[
            ident("null", ""),
            ident("empty", "<AccessPolicy />"),
            ident("blank", "<AccessPolicy><Start/><Permission></Permission></AccessPolicy>"),
            ident("partial", "<AccessPolicy><Permission>r</Permission></AccessPolicy>"),
            ident(
                "full",
                "<AccessPolicy><Start>2021-06-08T02:10:09Z</Start><Expiry>2021-06-08T02:10:09Z</Expiry>\
                 <Permission>r</Permission></AccessPolicy>",
            ),
        ]);
        let acl = parse_acl(body.as_bytes()).expect("valid");
        let written = String::from_utf8(write_acl(&acl)).expect("utf8");
        assert_eq!(
            written,
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers>\
             <SignedIdentifier><Id>null</Id></SignedIdentifier>\
             <SignedIdentifier><Id>empty</Id></SignedIdentifier>\
             <SignedIdentifier><Id>blank</Id></SignedIdentifier>\
             <SignedIdentifier><Id>partial</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier>\
             <SignedIdentifier><Id>full</Id><AccessPolicy><Start>2021-06-08T02:10:09.0000000Z</Start>\
             <Expiry>2021-06-08T02:10:09.0000000Z</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier>\
             </SignedIdentifiers>"
        );
        assert_eq!(parse_acl(written.as_bytes()).expect("round trip"), acl);
        let expiry_only =
            doc(&[ident("e", "<AccessPolicy><Expiry>2021-06-08T02:10:09Z</Expiry></AccessPolicy>")]);
        let written = write_acl(&parse_acl(expiry_only.as_bytes()).expect("valid"));
        assert!(String::from_utf8(written).expect("utf8").contains(
            "<SignedIdentifier><Id>e</Id><AccessPolicy><Expiry>2021-06-08T02:10:09.0000000Z</Expiry>\
             </AccessPolicy></SignedIdentifier>"
        ));
    }

    #[test]
    fn empty_bodies_clear() {
        assert_eq!(parse_acl(b""), Ok(vec![]));
        assert_eq!(parse_acl(b"<SignedIdentifiers/>"), Ok(vec![]));
        assert_eq!(
            write_acl(&[]),
            b"<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers />".to_vec()
        );
        assert_eq!(parse_acl(&write_acl(&[])), Ok(vec![]));
    }

    #[test]
    fn five_policies_and_64_char_ids_are_the_limits() {
        let five: Vec<String> = (0..5).map(|i| ident(&format!("id{i}"), "")).collect();
        assert_eq!(parse_acl(doc(&five).as_bytes()).expect("five").len(), 5);
        let six: Vec<String> = (0..6).map(|i| ident(&format!("id{i}"), "")).collect();
        assert!(err(&doc(&six)).contains("At most 5"));
        let id64 = "é".repeat(64);
        assert_eq!(parse_acl(doc(&[ident(&id64, "")]).as_bytes()).expect("64 chars")[0].id, id64);
        err(&doc(&[ident(&"x".repeat(65), "")]));
    }

    #[test]
    fn validation_errors() {
        err(&doc(&[ident("", "")]));
        err(&doc(&["<SignedIdentifier><AccessPolicy/></SignedIdentifier>".to_owned()]));
        for p in ["w", "rl", "R", "r d"] {
            let body =
                doc(&[ident("a", &format!("<AccessPolicy><Permission>{p}</Permission></AccessPolicy>"))]);
            assert!(err(&body).contains("Permission"), "{p}");
        }
        for d in ["2013-13-01", "yesterday", "2013-11-26T25:00Z", "2013-11-26T08:49:37.12345678Z"] {
            let body = doc(&[ident("a", &format!("<AccessPolicy><Expiry>{d}</Expiry></AccessPolicy>"))]);
            assert!(err(&body).contains("Expiry"), "{d}");
        }
        err("<Identifiers/>");
        err("<SignedIdentifiers><SignedIdentifier>");
    }
}
