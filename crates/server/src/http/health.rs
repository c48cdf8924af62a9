//! The server's side of health: what the request `aztable healthcheck` sends (`GET /`,
//! no query) is answered 500 `DataCorrupted` once the store has found damaged data
//! while serving, naming the file (the probe counts any 5xx but 501 as unhealthy);
//! otherwise it goes on to be answered as before (400 `InvalidUri`, without touching
//! the store). And the store's damage as Prometheus metrics, appended to
//! `/_aztable/metrics`.

use super::AppState;
use aztable_model::error::{ApiError, ErrorCode};
use aztable_store::damage::DamageReport;
use http::request::Parts;
use std::fmt::Write;

/// Whether `parts` is the health probe's request: `GET /` without a query (no table
/// operation is addressed so).
pub(super) fn is_probe(parts: &Parts) -> bool {
    parts.method == http::Method::GET && parts.uri.path() == "/" && parts.uri.query().is_none()
}

/// The probe's answer when the store is known to be damaged.
pub(super) fn damaged(state: &AppState) -> Option<ApiError> {
    let first = state.service.damage().first?;
    Some(ApiError::with_message(ErrorCode::DataCorrupted, first))
}

/// The store's damage in Prometheus text: a gauge (1 once damage was found, until
/// restart) and a counter of the operations that met it or were refused for it.
pub(super) fn metrics(report: &DamageReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP aztable_store_damaged 1 once the store found damaged data while serving (writes are \
         refused until restart).\n# TYPE aztable_store_damaged gauge\naztable_store_damaged {}",
        u8::from(report.damaged())
    );
    let _ = writeln!(
        out,
        "# HELP aztable_store_corruption_errors_total Operations answered DataCorrupted: reads that \
         met damaged data, and writes refused for it.\n# TYPE aztable_store_corruption_errors_total \
         counter\naztable_store_corruption_errors_total {}",
        report.errors
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_say_whether_the_store_is_damaged() {
        let clean = metrics(&DamageReport::default());
        assert!(clean.contains("\naztable_store_damaged 0\n"), "{clean}");
        assert!(clean.contains("\naztable_store_corruption_errors_total 0\n"), "{clean}");
        let damaged = metrics(&DamageReport { first: Some("x".into()), errors: 3 });
        assert!(damaged.contains("\naztable_store_damaged 1\n"), "{damaged}");
        assert!(damaged.contains("\naztable_store_corruption_errors_total 3\n"), "{damaged}");
    }
}
