//! Serving: accept connections on a bound listener (plain HTTP, or HTTPS with a
//! [`TlsConfig`]) and serve each with hyper's HTTP/1.1 connection, until `shutdown`
//! resolves; then stop accepting and let in-flight requests finish.
//!
//! Each connection runs with a timer: a client has `keep_alive` to send a request's
//! head, and an idle keep-alive connection is closed after the same time (hyper arms its
//! header-read timer whenever the connection waits for the next request), as
//! `--tableKeepAliveTimeout` and the `Keep-Alive: timeout=<s>` response header say.
//!
//! At most `--maxConnections` connections are served at once: one accepted over that is
//! closed at once, unread (logged at most once a second). hyper's head limits sit above
//! the service's ([`super::limits`]), so `dispatch` answers an over-long URI or head.
//!
//! On shutdown, connections are asked to finish their in-flight request and close; after
//! `--shutdownTimeout` those still open (a client stalled mid-request) are cut, so
//! [`serve`] returns within that time plus a moment, and the store can be closed.

use super::limits::{HYPER_MAX_BUF, HYPER_MAX_HEADERS};
use super::tls::TlsListener;
use super::{dispatch, AppState};
use axum::serve::Listener;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};

/// A loaded certificate and key (see [`super::load_tls_config`]).
pub type TlsConfig = Arc<tokio_rustls::rustls::ServerConfig>;

/// The connection limits of [`serve`].
#[derive(Debug, Clone)]
pub struct ConnLimits {
    /// `--tableKeepAliveTimeout`: idle time of a keep-alive connection, and the time a
    /// client has to send a request head.
    pub keep_alive: Duration,
    /// `--maxConnections`: connections served at once.
    pub max_connections: usize,
    /// `--shutdownTimeout`: how long in-flight requests may take to finish once
    /// shutdown begins.
    pub shutdown_grace: Duration,
}

/// Serves the Table API on `listener` (over TLS when `tls` is given) until `shutdown`
/// completes; in-flight requests are allowed to finish (for up to
/// [`ConnLimits::shutdown_grace`]), then the connections left are cut and this returns.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    tls: Option<TlsConfig>,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    match tls {
        None => accept_loop(listener, state, limits, shutdown).await,
        Some(config) => accept_loop(TlsListener::new(listener, config)?, state, limits, shutdown).await,
    }
}

async fn accept_loop<L>(
    mut listener: L,
    state: Arc<AppState>,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    L: Listener<Addr = SocketAddr>,
    L::Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let max_connections = within_descriptor_limit(limits.max_connections);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .keep_alive(true)
        .header_read_timeout(limits.keep_alive)
        .max_buf_size(HYPER_MAX_BUF)
        .max_headers(HYPER_MAX_HEADERS);
    let graceful = GracefulShutdown::new();
    let open = Arc::new(AtomicUsize::new(0));
    let mut refusals = Refusals::default();
    let mut conns = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (io, peer) = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        while conns.try_join_next().is_some() {}
        if open.load(Ordering::Acquire) >= max_connections {
            drop(io);
            refusals.note(max_connections);
            continue;
        }
        let slot = Slot::take(&open);
        // Straight to `dispatch`, with the client address (SAS `sip` checks, the access
        // log): no router or layers in between, which cost a point read five allocations
        // and a clone of the layered service.
        let state = Arc::clone(&state);
        let service = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
            let state = Arc::clone(&state);
            async move {
                let req = req.map(axum::body::Body::new);
                Ok::<_, std::convert::Infallible>(dispatch::dispatch(&state, Some(peer), req).await)
            }
        });
        let conn = http.serve_connection(TokioIo::new(io), service);
        let conn = graceful.watch(conn);
        conns.spawn(async move {
            let _slot = slot;
            if let Err(e) = conn.await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(limits.shutdown_grace, graceful.shutdown()).await.is_err() {
        tracing::warn!(
            open = open.load(Ordering::Acquire),
            "connections still open after the shutdown grace period; closing them"
        );
    }
    // Cuts what is left and waits for the tasks to drop their share of the state.
    conns.abort_all();
    while conns.join_next().await.is_some() {}
    Ok(())
}

/// Descriptors kept for the store, logs and the listener when `--maxConnections` is
/// checked against the process's limit.
const RESERVED_DESCRIPTORS: usize = 128;

/// `requested`, lowered (and logged) when the open-file limit (`ulimit -n`, read from
/// `/proc/self/limits`) would run out first: a descriptor the store cannot get is worse
/// than a refused connection.
fn within_descriptor_limit(requested: usize) -> usize {
    let soft = std::fs::read_to_string("/proc/self/limits").ok().and_then(|text| {
        let line = text.lines().find(|l| l.starts_with("Max open files"))?;
        line["Max open files".len()..].split_whitespace().next()?.parse::<usize>().ok()
    });
    match soft {
        Some(soft) if soft < requested.saturating_add(RESERVED_DESCRIPTORS) => {
            let lowered = soft.saturating_sub(RESERVED_DESCRIPTORS).max(1);
            tracing::warn!(
                requested,
                lowered,
                open_file_limit = soft,
                "--maxConnections lowered to fit the open-file limit (raise it with ulimit -n)"
            );
            lowered
        }
        _ => requested,
    }
}

/// One of the `--maxConnections` places, given back when the connection ends.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(open: &Arc<AtomicUsize>) -> Slot {
        open.fetch_add(1, Ordering::AcqRel);
        Slot(Arc::clone(open))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Connections refused over the cap, logged at most once a second.
#[derive(Default)]
struct Refusals {
    last_log: Option<Instant>,
    unlogged: u64,
}

impl Refusals {
    fn note(&mut self, max: usize) {
        self.unlogged += 1;
        if self.last_log.is_none_or(|at| at.elapsed() >= Duration::from_secs(1)) {
            tracing::warn!(refused = self.unlogged, max, "connection refused: --maxConnections reached");
            self.last_log = Some(Instant::now());
            self.unlogged = 0;
        }
    }
}
