//! Tests of service properties parsing, validation, merging and writing, and of the stats
//! body. SDK bodies are reconstructed from the SDKs' serializers: azure-data-tables (Python:
//! msrest models written by ElementTree, unset optional fields omitted, empty strings as
//! self-closing elements) and @azure/data-tables (JS: core-xml, `standalone="yes"`).

use super::*;

fn err(body: &str) -> String {
    let e = parse(body.as_bytes()).expect_err(body);
    assert_eq!((e.code.as_str(), e.status()), ("InvalidXmlDocument", 400), "{body}");
    e.message.into_owned()
}

fn props(inner: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties>{inner}</StorageServiceProperties>")
}

fn cors_rule(origins: &str, methods: &str, allowed: &str, exposed: &str) -> String {
    format!(
        "<CorsRule><AllowedOrigins>{origins}</AllowedOrigins><AllowedMethods>{methods}</AllowedMethods>\
         <AllowedHeaders>{allowed}</AllowedHeaders><ExposedHeaders>{exposed}</ExposedHeaders>\
         <MaxAgeInSeconds>0</MaxAgeInSeconds></CorsRule>"
    )
}

fn cors(rules: &[String]) -> String {
    props(&format!("<Cors>{}</Cors>", rules.concat()))
}

const DEFAULT_XML: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties><Logging>\
    <Version>1.0</Version><Delete>true</Delete><Read>true</Read><Write>true</Write>\
    <RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging><HourMetrics><Version>1.0</Version>\
    <Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>\
    <MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled>\
    </RetentionPolicy></MinuteMetrics><Cors /></StorageServiceProperties>";

#[test]
fn defaults_are_azurites() {
    let written = StorageServiceProperties::default().write();
    assert_eq!(String::from_utf8(written.clone()).expect("utf8"), DEFAULT_XML);
    assert_eq!(StorageServiceProperties::load(&written), Ok(StorageServiceProperties::default()));
}

#[test]
fn python_sdk_full_body() {
    let body = "<?xml version='1.0' encoding='utf-8'?>\n<StorageServiceProperties><Logging><Version>1.0</Version>\
        <Delete>true</Delete><Read>true</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled>\
        <Days>5</Days></RetentionPolicy></Logging><HourMetrics><Version>1.0</Version><Enabled>true</Enabled>\
        <IncludeAPIs>true</IncludeAPIs><RetentionPolicy><Enabled>true</Enabled><Days>5</Days></RetentionPolicy>\
        </HourMetrics><MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy>\
        <Enabled>false</Enabled></RetentionPolicy></MinuteMetrics><Cors><CorsRule>\
        <AllowedOrigins>www.xyz.com</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders />\
        <ExposedHeaders /><MaxAgeInSeconds>0</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>";
    let update = parse(body.as_bytes()).expect("valid");
    let five = RetentionPolicy { enabled: true, days: Some(5) };
    assert_eq!(
        update.logging,
        Some(Logging {
            version: "1.0".into(),
            delete: true,
            read: true,
            write: true,
            retention_policy: five.clone()
        })
    );
    let hour =
        Metrics { version: "1.0".into(), enabled: true, include_apis: Some(true), retention_policy: five };
    assert_eq!(update.hour_metrics, Some(hour));
    assert_eq!(update.minute_metrics, Some(StorageServiceProperties::default().minute_metrics));
    let rule = CorsRule {
        allowed_origins: vec!["www.xyz.com".into()],
        allowed_methods: vec!["GET".into()],
        ..CorsRule::default()
    };
    assert_eq!(update.cors, Some(vec![rule]));
    let mut all = StorageServiceProperties::default();
    update.merge_into(&mut all);
    assert_eq!(StorageServiceProperties::load(&all.write()), Ok(all));
}

#[test]
fn js_sdk_partial_body_keeps_other_roots() {
    let body = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?><StorageServiceProperties><Cors>\
        <CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET,PUT</AllowedMethods>\
        <AllowedHeaders></AllowedHeaders><ExposedHeaders></ExposedHeaders><MaxAgeInSeconds>3600</MaxAgeInSeconds>\
        </CorsRule></Cors></StorageServiceProperties>";
    let update = parse(body.as_bytes()).expect("valid");
    assert_eq!(
        (update.logging.is_none(), update.hour_metrics.is_none(), update.minute_metrics.is_none()),
        (true, true, true)
    );
    let mut all = StorageServiceProperties::default();
    all.logging.read = false;
    update.merge_into(&mut all);
    assert!(!all.logging.read, "Logging was not sent, so it is kept");
    assert_eq!(all.cors.len(), 1);
    assert_eq!(all.cors[0].max_age_in_seconds, 3600);
    // An empty <Cors/> then removes every rule and leaves the rest alone.
    parse(props("<Cors/>").as_bytes()).expect("empty cors").merge_into(&mut all);
    assert!(all.cors.is_empty());
    assert!(!all.logging.read);
}

/// The documented Set Table Service Properties sample (pretty-printed, a leading space in
/// an origin list); written back in the documented element order.
#[test]
fn documented_sample_round_trips() {
    let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<StorageServiceProperties>\n  <Logging>\n    \
        <Version>1.0</Version>\n    <Delete>true</Delete>\n    <Read>false</Read>\n    <Write>true</Write>\n    \
        <RetentionPolicy>\n      <Enabled>true</Enabled>\n      <Days>7</Days>\n    </RetentionPolicy>\n  </Logging>\n  \
        <HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs>\
        <RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></HourMetrics>\n  \
        <Cors>\n    <CorsRule>\n      <AllowedOrigins> http://www.fabrikam.com,http://www.contoso.com</AllowedOrigins>\n      \
        <AllowedMethods>GET,PUT</AllowedMethods>\n      <MaxAgeInSeconds>500</MaxAgeInSeconds>\n      \
        <ExposedHeaders>x-ms-meta-data*,x-ms-meta-customheader</ExposedHeaders>\n      \
        <AllowedHeaders>x-ms-meta-target*,x-ms-meta-customheader</AllowedHeaders>\n    </CorsRule>\n  </Cors>\n\
        </StorageServiceProperties>";
    let loaded = StorageServiceProperties::load(body.as_bytes()).expect("valid");
    assert_eq!(loaded.cors[0].allowed_origins, ["http://www.fabrikam.com", "http://www.contoso.com"]);
    let written = String::from_utf8(loaded.write()).expect("utf8");
    assert!(written.contains(
        "<HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs>\
         <RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></HourMetrics>"
    ));
    assert!(written.contains(
        "<Cors><CorsRule><AllowedOrigins>http://www.fabrikam.com,http://www.contoso.com</AllowedOrigins>\
         <AllowedMethods>GET,PUT</AllowedMethods><MaxAgeInSeconds>500</MaxAgeInSeconds>\
         <ExposedHeaders>x-ms-meta-data*,x-ms-meta-customheader</ExposedHeaders>\
         <AllowedHeaders>x-ms-meta-target*,x-ms-meta-customheader</AllowedHeaders></CorsRule></Cors>"
    ));
    assert_eq!(StorageServiceProperties::load(written.as_bytes()), Ok(loaded));
}

#[test]
fn every_required_child_of_a_sent_root() {
    let logging = [
        "<Version>1.0</Version>",
        "<Delete>true</Delete>",
        "<Read>true</Read>",
        "<Write>true</Write>",
        "<RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>",
    ];
    let metrics = [
        "<Version>1.0</Version>",
        "<Enabled>false</Enabled>",
        "<RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>",
    ];
    for (root, children) in
        [("Logging", &logging[..]), ("HourMetrics", &metrics[..]), ("MinuteMetrics", &metrics[..])]
    {
        assert!(
            parse(props(&format!("<{root}>{}</{root}>", children.concat())).as_bytes()).is_ok(),
            "{root}"
        );
        for skip in 0..children.len() {
            let mut kept = children.to_vec();
            kept.remove(skip);
            let msg = err(&props(&format!("<{root}>{}</{root}>", kept.concat())));
            assert!(msg.contains("is missing"), "{root} without #{skip}: {msg}");
        }
    }
    // RetentionPolicy/Enabled itself is required.
    err(&props(
        "<Logging><Version>1.0</Version><Delete>true</Delete><Read>true</Read><Write>true</Write>\
                <RetentionPolicy/></Logging>",
    ));
    // IncludeAPIs is required only when metrics are enabled.
    let enabled = "<Version>1.0</Version><Enabled>true</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>";
    assert!(err(&props(&format!("<HourMetrics>{enabled}</HourMetrics>"))).contains("IncludeAPIs"));
    let with = format!("<MinuteMetrics>{enabled}<IncludeAPIs>false</IncludeAPIs></MinuteMetrics>");
    assert_eq!(
        parse(props(&with).as_bytes()).expect("ok").minute_metrics.and_then(|m| m.include_apis),
        Some(false)
    );
    // Values of the wrong form.
    err(&props(
        "<Logging><Version> </Version><Delete>true</Delete><Read>true</Read><Write>true</Write>\
                <RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>",
    ));
    err(&props(
        "<Logging><Version>1.0</Version><Delete>yes</Delete><Read>true</Read><Write>true</Write>\
                <RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>",
    ));
}

#[test]
fn retention_days_1_to_365_when_enabled() {
    let body = |policy: &str| {
        props(&format!("<HourMetrics><Version>1.0</Version><Enabled>false</Enabled>{policy}</HourMetrics>"))
    };
    let days = |policy: &str| {
        parse(body(policy).as_bytes()).map(|u| u.hour_metrics.map(|m| m.retention_policy.days))
    };
    for ok in [1, 365] {
        let p = format!("<RetentionPolicy><Enabled>true</Enabled><Days>{ok}</Days></RetentionPolicy>");
        assert_eq!(days(&p), Ok(Some(Some(ok))));
    }
    for bad in ["0", "366", "-1", "abc", ""] {
        err(&body(&format!("<RetentionPolicy><Enabled>true</Enabled><Days>{bad}</Days></RetentionPolicy>")));
    }
    assert!(err(&body("<RetentionPolicy><Enabled>true</Enabled></RetentionPolicy>")).contains("Days"));
    // Disabled: Days is optional, not checked, and dropped.
    assert_eq!(
        days("<RetentionPolicy><Enabled>false</Enabled><Days>0</Days></RetentionPolicy>"),
        Ok(Some(None))
    );
}

#[test]
fn cors_rule_limits() {
    let ok = cors_rule("http://a.com", "GET", "", "");
    assert_eq!(parse(cors(&vec![ok.clone(); 5]).as_bytes()).expect("5 rules").cors.map(|c| c.len()), Some(5));
    assert!(err(&cors(&vec![ok; 6])).contains("At most 5"));
    // Every one of the five children is required.
    for name in ["AllowedOrigins", "AllowedMethods", "AllowedHeaders", "ExposedHeaders", "MaxAgeInSeconds"] {
        let full = cors_rule("http://a.com", "GET", "", "");
        let start = full.find(&format!("<{name}>")).expect("present");
        let end = full.find(&format!("</{name}>")).expect("present") + name.len() + 3;
        let without = format!("{}{}", &full[..start], &full[end..]);
        assert!(err(&cors(&[without])).contains(name), "{name}");
    }
    // Origins and methods non-empty; methods from the allowed set (any case, stored upper-case).
    err(&cors(&[cors_rule(" , ", "GET", "", "")]));
    err(&cors(&[cors_rule("*", "", "", "")]));
    assert!(err(&cors(&[cors_rule("*", "GET,TRACE", "", "")])).contains("TRACE"));
    let methods = "delete,get,head,merge,post,options,put,patch";
    let rules = parse(cors(&[cors_rule("*", methods, "", "")]).as_bytes()).expect("all methods").cors;
    assert_eq!(rules.map(|r| r[0].allowed_methods.clone()), Some(CORS_METHODS.map(String::from).to_vec()));
    // MaxAgeInSeconds: a non-negative 32-bit integer.
    for bad in ["-1", "x", "2147483648"] {
        let rule =
            cors_rule("*", "GET", "", "").replace("<MaxAgeInSeconds>0<", &format!("<MaxAgeInSeconds>{bad}<"));
        err(&cors(&[rule]));
    }
}

#[test]
fn cors_list_limits() {
    let list = |n: usize, f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>().join(",");
    // 64 origins (short ones, to stay under 2 KiB) pass, 65 fail.
    let origin = |i: usize| format!("o{i}");
    assert!(parse(cors(&[cors_rule(&list(64, &origin), "GET", "", "")]).as_bytes()).is_ok());
    err(&cors(&[cors_rule(&list(65, &origin), "GET", "", "")]));
    err(&cors(&[cors_rule(&list(65, &|i| format!("o{i}*")), "GET", "", "")]));
    // 64 literal + 2 prefixed headers pass; a 65th literal or a 3rd prefixed fails.
    let header = |i: usize| format!("h{i}");
    let headers = format!("{},a*,b*", list(64, &header));
    assert!(parse(cors(&[cors_rule("*", "GET", &headers, &headers)]).as_bytes()).is_ok());
    err(&cors(&[cors_rule("*", "GET", &format!("{headers},h64"), "")]));
    err(&cors(&[cors_rule("*", "GET", "", &format!("{headers},c*"))]));
    // Each item at most 256 characters.
    let long = "x".repeat(256);
    assert!(parse(cors(&[cors_rule(&long, "GET", &long, "")]).as_bytes()).is_ok());
    let too_long = "x".repeat(257);
    for rule in [cors_rule(&too_long, "GET", "", ""), cors_rule("*", "GET", "", &too_long)] {
        err(&cors(&[rule]));
    }
    // All rule values together at most 2 KiB (excluding tags).
    let wide = |n: usize| cors_rule(&vec!["v".repeat(256); n].join(","), "GET", "", "");
    assert!(parse(cors(&[wide(5), wide(2)]).as_bytes()).is_ok());
    assert!(err(&cors(&[wide(5), wide(5)])).contains("2048"));
}

#[test]
fn document_level_errors() {
    err("");
    err("<StorageServiceStats/>");
    err("<StorageServiceProperties><Logging>");
    // Unknown and legacy elements are ignored.
    let update = parse(
        props("<Metrics><Version>1.0</Version></Metrics><DefaultServiceVersion>x</DefaultServiceVersion>")
            .as_bytes(),
    );
    assert_eq!(update, Ok(ServicePropertiesUpdate::default()));
}

#[test]
fn stats_body() {
    let t = Ticks::parse("2013-10-23T22:08:54Z");
    let body = String::from_utf8(write_stats(GeoReplicationStatus::Live, t)).expect("utf8");
    assert_eq!(
        body,
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceStats><GeoReplication><Status>live</Status>\
         <LastSyncTime>Wed, 23 Oct 2013 22:08:54 GMT</LastSyncTime></GeoReplication></StorageServiceStats>"
    );
    let body = String::from_utf8(write_stats(GeoReplicationStatus::Bootstrap, None)).expect("utf8");
    assert!(body.contains("<Status>bootstrap</Status><LastSyncTime></LastSyncTime>"));
    let body = String::from_utf8(write_stats(GeoReplicationStatus::Unavailable, None)).expect("utf8");
    assert!(body.contains("<Status>unavailable</Status>"));
}
