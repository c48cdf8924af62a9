//! Serving: accept connections on a bound listener (plain HTTP, or HTTPS with a
//! [`TlsConfig`]) until `shutdown` resolves, then let in-flight requests finish.

use super::tls::TlsListener;
use super::{router, AppState};
use axum::serve::ListenerExt;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

/// A loaded certificate and key (see [`super::load_tls_config`]).
pub type TlsConfig = Arc<tokio_rustls::rustls::ServerConfig>;

/// Serves the Table API on `listener` (over TLS when `tls` is given) until `shutdown`
/// completes; in-flight requests are allowed to finish before this returns.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    tls: Option<TlsConfig>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // Connection info gives `dispatch` the client address (SAS `sip` checks).
    let app = router(state).into_make_service_with_connect_info::<SocketAddr>();
    match tls {
        None => axum::serve(listener, app).with_graceful_shutdown(shutdown).await,
        Some(config) => {
            // `tap_io` is what lets connection info flow through a custom listener.
            let listener = TlsListener::new(listener, config)?.tap_io(|_| {});
            axum::serve(listener, app).with_graceful_shutdown(shutdown).await
        }
    }
}
