//! Evaluating the service's CORS rules (set through service properties) against requests.
//!
//! Rules are tried in the order they were set. Origins match exactly and case-sensitively,
//! `*` matches every origin, and one `*` inside an allowed origin (`http://*.contoso.com`)
//! matches any non-empty text in its place. Methods and headers match case-insensitively; an
//! allowed header ending in `*` matches by prefix.
//!
//! * Preflight (`OPTIONS`, [`match_preflight`]): the first rule whose origins and methods
//!   match is selected, and the request headers must then all be allowed by that rule —
//!   no later rule is tried. No match (or no rules) → 403 `CorsPreflightFailure`; a missing
//!   `Origin` or `Access-Control-Request-Method` → 400 (the caller checks).
//! * Actual requests ([`actual_request_headers`]): the first rule matching origin and method
//!   sets `Access-Control-Allow-Origin` (`*` for a rule allowing all origins, else the
//!   origin, then also `Access-Control-Allow-Credentials: true`) and
//!   `Access-Control-Expose-Headers`. For GET/HEAD, `Vary: Origin` is added when the rule
//!   names the origin, or when rules exist but none matches.

use super::service_properties::CorsRule;

/// How a rule's `AllowedOrigins` matches an origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OriginMatch {
    /// Named (exactly, or through a `*` inside a pattern).
    Named,
    /// Only through `*`.
    Any,
}

fn origin_match(rule: &CorsRule, origin: Option<&str>) -> Option<OriginMatch> {
    let named = origin.is_some_and(|origin| {
        rule.allowed_origins.iter().any(|allowed| match allowed.split_once('*') {
            _ if allowed == origin => true,
            Some((prefix, suffix)) if !prefix.is_empty() || !suffix.is_empty() => {
                !suffix.contains('*')
                    && origin.len() > prefix.len() + suffix.len()
                    && origin.starts_with(prefix)
                    && origin.ends_with(suffix)
            }
            _ => false,
        })
    });
    if named {
        Some(OriginMatch::Named)
    } else if rule.allowed_origins.iter().any(|a| a == "*") {
        Some(OriginMatch::Any)
    } else {
        None
    }
}

fn method_allowed(rule: &CorsRule, method: &str) -> bool {
    rule.allowed_methods.iter().any(|m| m.eq_ignore_ascii_case(method))
}

/// Whether `name` is in `list` (literal entries exactly, `prefix*` entries by prefix).
fn header_listed(list: &[String], name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    list.iter().any(|entry| {
        let entry = entry.to_ascii_lowercase();
        match entry.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => entry == name,
        }
    })
}

fn split_list(s: &str) -> impl Iterator<Item = &str> {
    s.split(',').map(str::trim).filter(|h| !h.is_empty())
}

/// The rule that accepts a preflight request, if any. `request_headers` is the
/// `Access-Control-Request-Headers` value.
pub fn match_preflight<'a>(
    rules: &'a [CorsRule],
    origin: &str,
    method: &str,
    request_headers: Option<&str>,
) -> Option<&'a CorsRule> {
    let rule = rules.iter().find(|r| origin_match(r, Some(origin)).is_some() && method_allowed(r, method))?;
    split_list(request_headers.unwrap_or_default())
        .all(|h| header_listed(&rule.allowed_headers, h))
        .then_some(rule)
}

/// The headers of a successful (200) preflight answer for the rule [`match_preflight`] chose.
pub fn preflight_headers(
    rule: &CorsRule,
    origin: &str,
    method: &str,
    request_headers: Option<&str>,
) -> Vec<(&'static str, String)> {
    let mut out = vec![
        ("Access-Control-Allow-Origin", origin.to_owned()),
        ("Access-Control-Allow-Methods", method.to_owned()),
    ];
    if let Some(h) = request_headers.filter(|h| !h.trim().is_empty()) {
        out.push(("Access-Control-Allow-Headers", h.to_owned()));
    }
    out.push(("Access-Control-Max-Age", rule.max_age_in_seconds.to_string()));
    out.push(("Access-Control-Allow-Credentials", "true".to_owned()));
    out
}

/// The CORS headers to add to the answer of an actual (non-OPTIONS) request.
/// `response_headers` are the names of the headers the answer carries (for
/// `Access-Control-Expose-Headers`: those matching the rule's exposed headers, then the
/// rule's literal exposed headers not among them).
pub fn actual_request_headers(
    rules: &[CorsRule],
    origin: Option<&str>,
    method: &str,
    response_headers: &[&str],
) -> Vec<(&'static str, String)> {
    if rules.is_empty() {
        return Vec::new();
    }
    let cacheable = method.eq_ignore_ascii_case("GET") || method.eq_ignore_ascii_case("HEAD");
    let vary = || ("Vary", "Origin".to_owned());
    let found = rules.iter().find_map(|r| {
        let m = origin_match(r, origin)?;
        method_allowed(r, method).then_some((r, m))
    });
    let Some((rule, how)) = found else { return if cacheable { vec![vary()] } else { Vec::new() } };
    let mut exposed: Vec<String> = response_headers
        .iter()
        .filter(|h| header_listed(&rule.exposed_headers, h))
        .map(|h| (*h).to_owned())
        .collect();
    for literal in rule.exposed_headers.iter().filter(|e| !e.ends_with('*')) {
        if !exposed.iter().any(|h| h.eq_ignore_ascii_case(literal)) {
            exposed.push(literal.clone());
        }
    }
    let mut out = Vec::new();
    match (how, origin) {
        (OriginMatch::Named, Some(origin)) => {
            out.push(("Access-Control-Allow-Origin", origin.to_owned()));
            out.push(("Access-Control-Allow-Credentials", "true".to_owned()));
            if cacheable {
                out.push(vary());
            }
        }
        _ => out.push(("Access-Control-Allow-Origin", "*".to_owned())),
    }
    out.push(("Access-Control-Expose-Headers", exposed.join(",")));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(origins: &str, methods: &str, allowed: &str, exposed: &str) -> CorsRule {
        let v = |s: &str| split_list(s).map(str::to_owned).collect();
        CorsRule {
            allowed_origins: v(origins),
            allowed_methods: v(methods),
            allowed_headers: v(allowed),
            exposed_headers: v(exposed),
            max_age_in_seconds: 5,
        }
    }

    /// The documented evaluation example (CORS support page): three rules, three requests.
    fn documented_rules() -> Vec<CorsRule> {
        let h = "x-ms-blob-content-type, x-ms-blob-content-disposition";
        vec![
            rule("http://www.contoso.com", "PUT,HEAD", h, "x-ms-*"),
            rule("*", "PUT,GET", h, "x-ms-*"),
            rule("http://www.contoso.com", "GET", "x-ms-client-request-id", "x-ms-*"),
        ]
    }

    #[test]
    fn documented_preflight_example() {
        let rules = documented_rules();
        let c = "http://www.contoso.com";
        assert_eq!(match_preflight(&rules, c, "PUT", Some("x-ms-blob-content-type")), Some(&rules[0]));
        assert_eq!(match_preflight(&rules, c, "GET", Some("x-ms-blob-content-type")), Some(&rules[1]));
        // The second rule is selected by origin and method; its headers then refuse.
        assert_eq!(match_preflight(&rules, c, "GET", Some("x-ms-client-request-id")), None);
    }

    #[test]
    fn preflight_matching_details() {
        let rules =
            vec![rule("http://*.contoso.com,https://a.example", "get,MERGE", "x-ms-meta-*,Content-Type", "")];
        let ok = |o: &str, m: &str, h: Option<&str>| match_preflight(&rules, o, m, h).is_some();
        assert!(ok("http://www.contoso.com", "GET", None));
        assert!(ok("http://a.b.contoso.com", "merge", Some("X-MS-META-abc, content-type")));
        assert!(ok("https://a.example", "GET", Some(" ,")));
        assert!(!ok("http://.contoso.com", "GET", None));
        assert!(!ok("https://www.contoso.com", "GET", None));
        assert!(!ok("https://A.example", "GET", None));
        assert!(!ok("https://a.example", "PUT", None));
        assert!(!ok("https://a.example", "GET", Some("x-ms-date")));
        assert!(match_preflight(&[], "https://a.example", "GET", None).is_none());
        let headers = preflight_headers(&rules[0], "https://a.example", "GET", Some("content-type"));
        let want = [
            ("Access-Control-Allow-Origin", "https://a.example"),
            ("Access-Control-Allow-Methods", "GET"),
            ("Access-Control-Allow-Headers", "content-type"),
            ("Access-Control-Max-Age", "5"),
            ("Access-Control-Allow-Credentials", "true"),
        ];
        assert_eq!(headers, want.map(|(k, v)| (k, v.to_owned())));
    }

    #[test]
    fn actual_requests_follow_the_vary_table() {
        let exact = vec![rule("http://a.com", "GET,PUT", "", "x-ms-meta-*,x-ms-request-id,x-custom")];
        let any = vec![rule("*", "GET", "", "x-ms-*")];
        let resp = ["x-ms-request-id", "x-ms-meta-a", "Date", "x-ms-version"];
        let get =
            |rules: &[CorsRule], origin: Option<&str>| actual_request_headers(rules, origin, "GET", &resp);
        let names = |h: &[(&'static str, String)]| h.iter().map(|(k, _)| *k).collect::<Vec<_>>();
        // No rules: nothing, with or without Origin.
        assert!(get(&[], Some("http://a.com")).is_empty());
        assert!(get(&[], None).is_empty());
        // Exact origin: the origin, credentials, Vary and the exposed headers.
        let h = get(&exact, Some("http://a.com"));
        assert_eq!(
            names(&h),
            [
                "Access-Control-Allow-Origin",
                "Access-Control-Allow-Credentials",
                "Vary",
                "Access-Control-Expose-Headers"
            ]
        );
        assert_eq!(h[0].1, "http://a.com");
        assert_eq!(h[3].1, "x-ms-request-id,x-ms-meta-a,x-custom");
        // No rule matches (other origin, or no Origin at all): only Vary, and only for GET/HEAD.
        assert_eq!(get(&exact, Some("http://b.com")), vec![("Vary", "Origin".to_owned())]);
        assert_eq!(get(&exact, None), vec![("Vary", "Origin".to_owned())]);
        assert!(actual_request_headers(&exact, Some("http://b.com"), "PUT", &resp).is_empty());
        // Exact origin on PUT: no Vary.
        let put = actual_request_headers(&exact, Some("http://a.com"), "PUT", &resp);
        assert!(!names(&put).contains(&"Vary"));
        // A rule allowing all origins: `*`, no Vary, no credentials.
        let h = get(&any, Some("http://z.com"));
        assert_eq!(names(&h), ["Access-Control-Allow-Origin", "Access-Control-Expose-Headers"]);
        assert_eq!(h[0].1, "*");
        assert_eq!(h[1].1, "x-ms-request-id,x-ms-meta-a,x-ms-version");
        assert_eq!(get(&any, None)[0].1, "*");
        // Method not allowed by any rule: treated as no match.
        assert_eq!(
            actual_request_headers(&any, Some("http://z.com"), "HEAD", &resp),
            vec![("Vary", "Origin".to_owned())]
        );
    }
}
