//! Table service properties (`<StorageServiceProperties>`: Logging, HourMetrics,
//! MinuteMetrics, Cors) and service stats (`<StorageServiceStats>`).
//!
//! Set Table Service Properties (2013-08-15+) may send any subset of the four roots;
//! omitted roots keep their settings ([`ServicePropertiesUpdate::merge_into`]). Every child
//! of a root that is sent is required, except the two the documentation makes conditional:
//! `IncludeAPIs` (only when metrics are enabled) and `RetentionPolicy/Days` (only when the
//! policy is enabled; it must then be 1–365 and is dropped when the policy is disabled).
//! CORS: at most 5 `CorsRule`s, each with all five children; `AllowedOrigins` and
//! `AllowedMethods` non-empty; methods among DELETE GET HEAD MERGE POST OPTIONS PUT PATCH;
//! at most 64 origins, and per header list at most 64 literal and 2 prefixed (`x-ms-meta-*`)
//! headers; each origin or header ≤ 256 characters; all rule values together ≤ 2 KiB. An
//! empty `<Cors/>` removes every rule. Unknown elements are ignored. Violations are 400
//! `InvalidXmlDocument`. Matching rules against requests lives in [`super::cors`].

use super::{bad_value, invalid_xml, parse_bool, parse_document, push_leaf, Element, XML_DECL};
use aztable_model::error::ApiError;
use aztable_model::Ticks;

/// Most CORS rules per service.
pub const MAX_CORS_RULES: usize = 5;
const MAX_CORS_ITEM_CHARS: usize = 256;
const MAX_CORS_ITEMS: usize = 64;
const MAX_PREFIXED_HEADERS: usize = 2;
const MAX_CORS_BYTES: usize = 2048;
/// The verbs a CORS rule may allow.
pub const CORS_METHODS: [&str; 8] = ["DELETE", "GET", "HEAD", "MERGE", "POST", "OPTIONS", "PUT", "PATCH"];

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RetentionPolicy {
    pub enabled: bool,
    /// 1–365; present exactly when `enabled`.
    pub days: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logging {
    pub version: String,
    pub delete: bool,
    pub read: bool,
    pub write: bool,
    pub retention_policy: RetentionPolicy,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metrics {
    pub version: String,
    pub enabled: bool,
    pub include_apis: Option<bool>,
    pub retention_policy: RetentionPolicy,
}

/// One CORS rule; list values are the comma-separated items, trimmed, empty items dropped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CorsRule {
    pub allowed_origins: Vec<String>,
    /// Upper-cased.
    pub allowed_methods: Vec<String>,
    pub allowed_headers: Vec<String>,
    pub exposed_headers: Vec<String>,
    pub max_age_in_seconds: u32,
}

/// The whole settings document. The default is what Azurite answers before any Set:
/// logging 1.0 with delete/read/write on and no retention, both metrics off, no CORS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageServiceProperties {
    pub logging: Logging,
    pub hour_metrics: Metrics,
    pub minute_metrics: Metrics,
    pub cors: Vec<CorsRule>,
}

impl Default for StorageServiceProperties {
    fn default() -> Self {
        let metrics = Metrics {
            version: "1.0".into(),
            enabled: false,
            include_apis: None,
            retention_policy: RetentionPolicy::default(),
        };
        StorageServiceProperties {
            logging: Logging {
                version: "1.0".into(),
                delete: true,
                read: true,
                write: true,
                retention_policy: RetentionPolicy::default(),
            },
            hour_metrics: metrics.clone(),
            minute_metrics: metrics,
            cors: Vec::new(),
        }
    }
}

/// A parsed Set Table Service Properties body: the roots that were sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServicePropertiesUpdate {
    pub logging: Option<Logging>,
    pub hour_metrics: Option<Metrics>,
    pub minute_metrics: Option<Metrics>,
    /// `Some(vec![])` for an empty `<Cors/>` (delete all rules).
    pub cors: Option<Vec<CorsRule>>,
}

impl ServicePropertiesUpdate {
    /// Replaces the roots that were sent; the others keep their settings.
    pub fn merge_into(self, existing: &mut StorageServiceProperties) {
        if let Some(v) = self.logging {
            existing.logging = v;
        }
        if let Some(v) = self.hour_metrics {
            existing.hour_metrics = v;
        }
        if let Some(v) = self.minute_metrics {
            existing.minute_metrics = v;
        }
        if let Some(v) = self.cors {
            existing.cors = v;
        }
    }
}

/// Parses a Set Table Service Properties body (an empty body is a 400).
pub fn parse(body: &[u8]) -> Result<ServicePropertiesUpdate, ApiError> {
    let root = parse_document(body)?.ok_or_else(|| invalid_xml("The request body is empty."))?;
    if root.name != "StorageServiceProperties" {
        return Err(invalid_xml(format!(
            "Unexpected root element '{}'; expected 'StorageServiceProperties'.",
            root.name
        )));
    }
    Ok(ServicePropertiesUpdate {
        logging: root.child("Logging").map(parse_logging).transpose()?,
        hour_metrics: root.child("HourMetrics").map(parse_metrics).transpose()?,
        minute_metrics: root.child("MinuteMetrics").map(parse_metrics).transpose()?,
        cors: root.child("Cors").map(parse_cors).transpose()?,
    })
}

impl StorageServiceProperties {
    /// Reads back a document written by [`write`](Self::write) (or any complete one); roots
    /// missing from it take their defaults.
    pub fn load(body: &[u8]) -> Result<Self, ApiError> {
        let mut props = StorageServiceProperties::default();
        parse(body)?.merge_into(&mut props);
        Ok(props)
    }

    /// The Get Table Service Properties body (element order as the service writes it).
    pub fn write(&self) -> Vec<u8> {
        let mut out = String::from(XML_DECL);
        out.push_str("<StorageServiceProperties><Logging>");
        let l = &self.logging;
        push_leaf(&mut out, "Version", &l.version);
        push_leaf(&mut out, "Delete", bool_text(l.delete));
        push_leaf(&mut out, "Read", bool_text(l.read));
        push_leaf(&mut out, "Write", bool_text(l.write));
        write_retention(&mut out, &l.retention_policy);
        out.push_str("</Logging>");
        write_metrics(&mut out, "HourMetrics", &self.hour_metrics);
        write_metrics(&mut out, "MinuteMetrics", &self.minute_metrics);
        if self.cors.is_empty() {
            out.push_str("<Cors />");
        } else {
            out.push_str("<Cors>");
            for rule in &self.cors {
                out.push_str("<CorsRule>");
                push_leaf(&mut out, "AllowedOrigins", &rule.allowed_origins.join(","));
                push_leaf(&mut out, "AllowedMethods", &rule.allowed_methods.join(","));
                push_leaf(&mut out, "MaxAgeInSeconds", &rule.max_age_in_seconds.to_string());
                push_leaf(&mut out, "ExposedHeaders", &rule.exposed_headers.join(","));
                push_leaf(&mut out, "AllowedHeaders", &rule.allowed_headers.join(","));
                out.push_str("</CorsRule>");
            }
            out.push_str("</Cors>");
        }
        out.push_str("</StorageServiceProperties>");
        out.into_bytes()
    }
}

/// Geo-replication status of the secondary location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeoReplicationStatus {
    Live,
    Bootstrap,
    Unavailable,
}

/// The Get Table Service Stats body; `last_sync_time` is written as an RFC 1123 date, or
/// left empty when unknown.
pub fn write_stats(status: GeoReplicationStatus, last_sync_time: Option<Ticks>) -> Vec<u8> {
    let status = match status {
        GeoReplicationStatus::Live => "live",
        GeoReplicationStatus::Bootstrap => "bootstrap",
        GeoReplicationStatus::Unavailable => "unavailable",
    };
    let mut out = String::from(XML_DECL);
    out.push_str("<StorageServiceStats><GeoReplication>");
    push_leaf(&mut out, "Status", status);
    push_leaf(&mut out, "LastSyncTime", &last_sync_time.map(Ticks::to_http_date).unwrap_or_default());
    out.push_str("</GeoReplication></StorageServiceStats>");
    out.into_bytes()
}

// ---- parsing helpers ----

fn bool_text(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

fn parse_logging(e: &Element) -> Result<Logging, ApiError> {
    Ok(Logging {
        version: parse_version(e)?,
        delete: parse_bool(e.required("Delete")?)?,
        read: parse_bool(e.required("Read")?)?,
        write: parse_bool(e.required("Write")?)?,
        retention_policy: parse_retention(e.required("RetentionPolicy")?)?,
    })
}

fn parse_metrics(e: &Element) -> Result<Metrics, ApiError> {
    let enabled = parse_bool(e.required("Enabled")?)?;
    let include_apis = match e.child("IncludeAPIs") {
        Some(i) => Some(parse_bool(i)?),
        None if enabled => return Err(e.missing("IncludeAPIs")),
        None => None,
    };
    Ok(Metrics {
        version: parse_version(e)?,
        enabled,
        include_apis,
        retention_policy: parse_retention(e.required("RetentionPolicy")?)?,
    })
}

fn parse_version(e: &Element) -> Result<String, ApiError> {
    let v = e.required("Version")?.text.trim();
    if v.is_empty() {
        return Err(bad_value("Version", v));
    }
    Ok(v.to_owned())
}

fn parse_retention(e: &Element) -> Result<RetentionPolicy, ApiError> {
    let enabled = parse_bool(e.required("Enabled")?)?;
    if !enabled {
        return Ok(RetentionPolicy { enabled, days: None });
    }
    let days = e.required("Days")?.text.trim();
    match days.parse::<u32>() {
        Ok(d) if (1..=365).contains(&d) => Ok(RetentionPolicy { enabled, days: Some(d) }),
        _ => Err(bad_value("Days", days)),
    }
}

fn write_retention(out: &mut String, r: &RetentionPolicy) {
    out.push_str("<RetentionPolicy>");
    push_leaf(out, "Enabled", bool_text(r.enabled));
    if let (true, Some(days)) = (r.enabled, r.days) {
        push_leaf(out, "Days", &days.to_string());
    }
    out.push_str("</RetentionPolicy>");
}

fn write_metrics(out: &mut String, name: &str, m: &Metrics) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    push_leaf(out, "Version", &m.version);
    push_leaf(out, "Enabled", bool_text(m.enabled));
    if let Some(i) = m.include_apis {
        push_leaf(out, "IncludeAPIs", bool_text(i));
    }
    write_retention(out, &m.retention_policy);
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

fn parse_cors(e: &Element) -> Result<Vec<CorsRule>, ApiError> {
    let rules: Vec<&Element> = e.children_named("CorsRule").collect();
    if rules.len() > MAX_CORS_RULES {
        return Err(invalid_xml(format!(
            "At most {MAX_CORS_RULES} CORS rules may be set; {} were given.",
            rules.len()
        )));
    }
    let mut total = 0;
    let mut out = Vec::with_capacity(rules.len());
    for rule in rules {
        let mut field = |name: &str| -> Result<&Element, ApiError> {
            let child = rule.required(name)?;
            total += child.text.trim().len();
            Ok(child)
        };
        let origins = list(field("AllowedOrigins")?, usize::MAX, usize::MAX)?;
        let methods = list(field("AllowedMethods")?, usize::MAX, usize::MAX)?;
        let allowed_headers = list(field("AllowedHeaders")?, MAX_CORS_ITEMS, MAX_PREFIXED_HEADERS)?;
        let exposed_headers = list(field("ExposedHeaders")?, MAX_CORS_ITEMS, MAX_PREFIXED_HEADERS)?;
        let max_age = field("MaxAgeInSeconds")?.text.trim();
        let max_age_in_seconds = max_age
            .parse::<u32>()
            .ok()
            .filter(|v| i32::try_from(*v).is_ok())
            .ok_or_else(|| bad_value("MaxAgeInSeconds", max_age))?;
        if origins.is_empty() || origins.len() > MAX_CORS_ITEMS {
            return Err(bad_value("AllowedOrigins", &origins.join(",")));
        }
        let mut allowed_methods = Vec::with_capacity(methods.len());
        for m in methods {
            let upper = m.to_ascii_uppercase();
            if !CORS_METHODS.contains(&upper.as_str()) {
                return Err(bad_value("AllowedMethods", &m));
            }
            allowed_methods.push(upper);
        }
        if allowed_methods.is_empty() {
            return Err(bad_value("AllowedMethods", ""));
        }
        out.push(CorsRule {
            allowed_origins: origins,
            allowed_methods,
            allowed_headers,
            exposed_headers,
            max_age_in_seconds,
        });
    }
    if total > MAX_CORS_BYTES {
        return Err(invalid_xml(format!("The CORS rules exceed {MAX_CORS_BYTES} bytes of settings.")));
    }
    Ok(out)
}

/// Splits a comma-separated CORS list; at most `max_literal` items without and
/// `max_prefixed` items with a trailing `*`, each ≤ 256 characters.
fn list(e: &Element, max_literal: usize, max_prefixed: usize) -> Result<Vec<String>, ApiError> {
    let items: Vec<String> =
        e.text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect();
    let prefixed = items.iter().filter(|i| i.ends_with('*') && i.len() > 1).count();
    let too_long = items.iter().any(|i| i.chars().count() > MAX_CORS_ITEM_CHARS);
    if too_long || prefixed > max_prefixed || items.len() - prefixed > max_literal {
        return Err(bad_value(&e.name, e.text.trim()));
    }
    Ok(items)
}

#[cfg(test)]
#[path = "service_properties_tests.rs"]
mod tests;
