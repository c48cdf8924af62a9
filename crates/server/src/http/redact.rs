//! What the logs may show of a request: the query string and the headers with their
//! secrets replaced (a SAS's `sig`, the advisor's `key`, the signature or token of
//! `Authorization`, `x-aztable-key`), so a debug log can be shared.

const HIDDEN: &str = "REDACTED";

/// The query string with the values of `sig` and `key` replaced.
pub(super) fn query(raw: &str) -> String {
    raw.split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if name.eq_ignore_ascii_case("sig") || name.eq_ignore_ascii_case("key") => {
                format!("{name}={HIDDEN}")
            }
            _ => pair.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// One header's value as logged: `Authorization` keeps its scheme and account
/// (`SharedKey devstoreaccount1:REDACTED`, `Bearer REDACTED`).
pub(super) fn header_value(name: &str, value: &str) -> String {
    if name.eq_ignore_ascii_case("authorization") {
        return match value.split_once(' ') {
            Some((scheme, credential)) => match credential.split_once(':') {
                Some((account, _)) => format!("{scheme} {account}:{HIDDEN}"),
                None => format!("{scheme} {HIDDEN}"),
            },
            None => HIDDEN.to_owned(),
        };
    }
    if name.eq_ignore_ascii_case("x-aztable-key") || name.eq_ignore_ascii_case("cookie") {
        return HIDDEN.to_owned();
    }
    value.to_owned()
}

/// All headers, one `name: value` per line (values redacted as [`header_value`] says).
pub(super) fn headers(map: &http::HeaderMap) -> String {
    let mut out = String::new();
    for (name, value) in map {
        let value = String::from_utf8_lossy(value.as_bytes());
        out.push_str("\n  ");
        out.push_str(name.as_str());
        out.push_str(": ");
        out.push_str(&header_value(name.as_str(), &value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_hidden() {
        assert_eq!(
            query("sv=2019-02-02&sig=abc%2Bdef&se=2030&tn=t"),
            "sv=2019-02-02&sig=REDACTED&se=2030&tn=t"
        );
        assert_eq!(query("key=secret&format=json"), "key=REDACTED&format=json");
        assert_eq!(query("$filter=RowKey%20eq%20'sig'"), "$filter=RowKey%20eq%20'sig'");
        assert_eq!(
            header_value("Authorization", "SharedKey devstoreaccount1:c2lnbmF0dXJl"),
            "SharedKey devstoreaccount1:REDACTED"
        );
        assert_eq!(header_value("authorization", "Bearer eyJ0eXAi.x.y"), "Bearer REDACTED");
        assert_eq!(header_value("authorization", "garbage"), "REDACTED");
        assert_eq!(header_value("x-aztable-key", "k"), "REDACTED");
        assert_eq!(header_value("x-ms-date", "Mon"), "Mon");
        let mut map = http::HeaderMap::new();
        map.insert("authorization", http::HeaderValue::from_static("SharedKeyLite a:b"));
        map.insert("x-ms-version", http::HeaderValue::from_static("2019-02-02"));
        let text = headers(&map);
        assert!(text.contains("authorization: SharedKeyLite a:REDACTED"), "{text}");
        assert!(text.contains("x-ms-version: 2019-02-02"), "{text}");
        assert!(!text.contains(":b"), "{text}");
    }
}
