//! Serving: accept connections on a bound listener (plain HTTP, or HTTPS with a
//! [`TlsConfig`]) and serve each with hyper's HTTP/1.1 connection, until `shutdown`
//! resolves; then stop accepting and let in-flight requests finish.
//!
//! Each connection runs with a timer: a client has `keep_alive` to send a request's
//! head, and an idle keep-alive connection is closed after the same time (hyper arms its
//! header-read timer whenever the connection waits for the next request), as
//! `--tableKeepAliveTimeout` and the `Keep-Alive: timeout=<s>` response header say.
//!
//! At most `--maxConnections` connections are served at once, counted from their accept
//! (a TLS handshake in progress holds a place): one accepted over that is closed at once,
//! unread (logged at most once a second). hyper's head limits sit above the service's
//! ([`super::limits`]), so `dispatch` answers an over-long URI or head.
//!
//! On shutdown, connections are asked to finish their in-flight request and close; after
//! `--shutdownTimeout` those still open (a client stalled mid-request) are cut, so
//! [`serve`] returns within that time plus a moment, and the store can be closed.

use super::limits::HYPER_MAX_BUF;
use super::{dispatch, tls, AppState};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
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
///
/// A connection takes its `--maxConnections` place when it is accepted, so a TLS
/// handshake in progress holds one too: clients that connect and stall in the handshake
/// are bounded like those that stall before their first request.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    tls: Option<TlsConfig>,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let tls = tls.map(tokio_rustls::TlsAcceptor::from);
    let max_connections = within_descriptor_limit(limits.max_connections);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .keep_alive(true)
        .header_read_timeout(limits.keep_alive)
        .max_buf_size(HYPER_MAX_BUF);
    let graceful = GracefulShutdown::new();
    // Set when shutdown begins: a handshake still in progress then ends the connection
    // (it has no request to finish, like an idle connection).
    let (stopping, stopping_seen) = tokio::sync::watch::channel(false);
    let open = Arc::new(AtomicUsize::new(0));
    let mut refusals = Refusals::default();
    let mut accept_failures = OncePerSecond::default();
    let mut conns = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                accept_failed(&e, &mut accept_failures).await;
                continue;
            }
        };
        while conns.try_join_next().is_some() {}
        if open.load(Ordering::Acquire) >= max_connections {
            drop(tcp);
            refusals.note(max_connections);
            continue;
        }
        let slot = Slot::take(&open);
        let conn = Conn { http: http.clone(), state: Arc::clone(&state), peer, watcher: graceful.watcher() };
        match &tls {
            None => conns.spawn(async move {
                let _slot = slot;
                conn.serve(tcp).await;
            }),
            Some(acceptor) => {
                let acceptor = acceptor.clone();
                let mut stopping = stopping_seen.clone();
                conns.spawn(async move {
                    let _slot = slot;
                    let shaken = tokio::select! {
                        shaken = tls::handshake(&acceptor, tcp, peer) => shaken,
                        _ = stopping.wait_for(|stopping| *stopping) => None,
                    };
                    if let Some(stream) = shaken {
                        conn.serve(stream).await;
                    }
                })
            }
        };
    }
    drop(listener);
    stopping.send_replace(true);
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

/// What serving one accepted connection needs.
struct Conn {
    http: hyper::server::conn::http1::Builder,
    state: Arc<AppState>,
    peer: SocketAddr,
    /// Shutdown's hold on the connection, taken when it is accepted (a handshake in
    /// progress gives it up when shutdown begins).
    watcher: Watcher,
}

impl Conn {
    /// Serves HTTP/1.1 on `io` until the client or shutdown ends the connection.
    async fn serve<I>(self, io: I)
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let Conn { http, state, peer, watcher } = self;
        // Straight to `dispatch`, with the client address (SAS `sip` checks, the access
        // log): no router or layers in between, which cost a point read five allocations
        // and a clone of the layered service.
        let service = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
            let state = Arc::clone(&state);
            async move {
                let req = req.map(super::message::Body::incoming);
                Ok::<_, std::convert::Infallible>(dispatch::dispatch(&state, Some(peer), req).await)
            }
        });
        let conn = http.serve_connection(TokioIo::new(io), service);
        if let Err(e) = watcher.watch(conn).await {
            tracing::debug!(%peer, error = %e, "connection ended with an error");
        }
    }
}

/// After a failed `accept`: a connection that failed before it was accepted is nothing
/// to wait for; anything else (out of descriptors, out of memory) is logged (at most
/// once a second) and the next accept waits a moment, instead of spinning on the same
/// failure.
async fn accept_failed(e: &std::io::Error, log: &mut OncePerSecond) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(e.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        return;
    }
    if log.due() {
        tracing::warn!(error = %e, "accept failed");
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
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

/// A log line repeated at most once a second: [`OncePerSecond::due`] says when to write it.
#[derive(Default)]
struct OncePerSecond(Option<Instant>);

impl OncePerSecond {
    /// Whether a second has passed since the last time this said yes (true the first time).
    fn due(&mut self) -> bool {
        let due = self.0.is_none_or(|at| at.elapsed() >= Duration::from_secs(1));
        if due {
            self.0 = Some(Instant::now());
        }
        due
    }
}

/// Connections refused over the cap, logged at most once a second.
#[derive(Default)]
struct Refusals {
    log: OncePerSecond,
    unlogged: u64,
}

impl Refusals {
    fn note(&mut self, max: usize) {
        self.unlogged += 1;
        if self.log.due() {
            tracing::warn!(refused = self.unlogged, max, "connection refused: --maxConnections reached");
            self.unlogged = 0;
        }
    }
}
