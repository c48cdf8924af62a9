//! Serving: accept connections on a bound listener until `shutdown` resolves, then let
//! in-flight requests finish.

use super::{router, AppState};
use std::future::Future;
use std::sync::Arc;

/// Serves the Table API on `listener` until `shutdown` completes; in-flight requests
/// are allowed to finish before this returns.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // Connection info gives `dispatch` the client address (SAS `sip` checks).
    let app = router(state).into_make_service_with_connect_info::<std::net::SocketAddr>();
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await
}
