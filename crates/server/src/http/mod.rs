//! FRONT END: the only module that uses hyper. `server` hands every request from hyper
//! straight to `dispatch::dispatch` (the tests without a socket call it too), which
//! resolves the account, checks the version,
//! authenticates, routes to an [`aztable_wire::endpoint::Endpoint`] and calls one handler; handlers
//! only translate between HTTP and `service` calls.

mod body;
mod catch_panic;
pub mod ctx;
mod dispatch;
mod error_response;
mod fault;
mod handlers;
mod health;
pub mod healthcheck;
mod insight;
pub mod limits;
mod message;
mod other_service;
pub mod query;
mod redact;
mod request;
mod request_date;
mod request_id;
mod response;
mod server;
mod tls;

pub use other_service::serve_other_service;
pub use server::{serve, ConnLimits, TlsConfig};
pub use tls::load_config as load_tls_config;

use aztable_engine::service::TableService;
use aztable_wire::auth::Accounts;
use std::sync::Arc;

/// Front-end switches from the command line.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// `--skipApiVersionCheck`, `--strictApiVersion`: how `x-ms-version` is checked.
    pub version_check: ctx::VersionCheck,
    pub disable_product_style_url: bool,
    pub loose: bool,
    /// Served over TLS (`--cert`/`--key`): URLs in responses say `https`, and a SAS with
    /// `spr=https` is accepted.
    pub https: bool,
    /// `--oauth basic`: accept `Authorization: Bearer` tokens (see `auth::oauth`).
    pub oauth: bool,
    /// `Keep-Alive: timeout=<--tableKeepAliveTimeout>`, sent on every response that keeps
    /// its connection (none: not announced).
    pub keep_alive: Option<http::HeaderValue>,
    /// `--faultRate` and friends: the fault injector (none: no faults, one check).
    pub faults: Option<Arc<crate::fault::Faults>>,
    /// Body read deadlines, the request time cap and the in-flight body budget.
    pub limits: limits::RequestLimits,
    /// The admin endpoints (`/_aztable/...`) answer without a key: the server listens on
    /// loopback only.
    pub admin_open: bool,
    /// `--insightReport`: where `POST /_aztable/insight/report` writes the report.
    pub insight_report: Option<std::path::PathBuf>,
    /// `--insightFailOn`: the kinds `GET /_aztable/insight/findings` answers 409 for
    /// (empty: every kind).
    pub insight_fail_on: Vec<aztable_insight::gate::GateKind>,
    /// `--shortPages`: the cutter of Query Entities pages (none: pages end as usual).
    pub short_pages: Option<Arc<crate::surprise::ShortPages>>,
}

/// Everything a request handler can reach.
#[derive(Debug)]
pub struct AppState {
    pub service: TableService,
    pub accounts: Accounts,
    pub options: HttpOptions,
}

#[cfg(test)]
mod access_tests;
#[cfg(test)]
mod tests;
