//! Serving: accept connections on a bound listener (plain HTTP, or HTTPS with a
//! [`TlsConfig`]) and serve each with hyper's HTTP/1.1 connection, until `shutdown`
//! resolves; then stop accepting and let in-flight requests finish.
//!
//! Each connection runs with a timer: a client has `keep_alive` to send a request's
//! head, and an idle keep-alive connection is closed after the same time (hyper arms its
//! header-read timer whenever the connection waits for the next request), as
//! `--tableKeepAliveTimeout` and the `Keep-Alive: timeout=<s>` response header say.

use super::tls::TlsListener;
use super::{router, AppState};
use axum::extract::ConnectInfo;
use axum::serve::Listener;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// A loaded certificate and key (see [`super::load_tls_config`]).
pub type TlsConfig = Arc<tokio_rustls::rustls::ServerConfig>;

/// How long in-flight requests may take to finish once shutdown begins.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Serves the Table API on `listener` (over TLS when `tls` is given) until `shutdown`
/// completes; in-flight requests are allowed to finish (for up to [`SHUTDOWN_GRACE`])
/// before this returns. Idle connections close after `keep_alive`.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    tls: Option<TlsConfig>,
    keep_alive: Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    match tls {
        None => accept_loop(listener, state, keep_alive, shutdown).await,
        Some(config) => accept_loop(TlsListener::new(listener, config)?, state, keep_alive, shutdown).await,
    }
}

async fn accept_loop<L>(
    mut listener: L,
    state: Arc<AppState>,
    keep_alive: Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    L: Listener<Addr = SocketAddr>,
    L::Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let app = router(state);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).keep_alive(true).header_read_timeout(keep_alive);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (io, peer) = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        // The client address reaches `dispatch` as axum's ConnectInfo (SAS `sip` checks).
        let service = TowerToHyperService::new(app.clone().layer(axum::Extension(ConnectInfo(peer))));
        let conn = http.serve_connection(TokioIo::new(io), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await.is_err() {
        tracing::warn!("connections still open after the shutdown grace period; closing them");
    }
    Ok(())
}
