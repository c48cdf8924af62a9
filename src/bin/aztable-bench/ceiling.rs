//! `--ceiling-server PORT`: a minimal axum/hyper server on 127.0.0.1 answering every
//! request with the same ~1 KB JSON entity, so a `point-read` against it measures the
//! ceiling of this machine's HTTP stack + load tool. Stops by itself after `serve_for`.

use crate::entity::{entity_json, Rng};
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::Router;
use bytes::Bytes;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

/// Serves on `127.0.0.1:port` until `serve_for` has passed or Ctrl-C.
pub async fn serve(port: u16, serve_for: Duration) -> Result<(), String> {
    let body = Bytes::from(entity_json("p0000000", "r000000000", 0, "hay", &mut Rng::new(1)));
    let app = Router::new().fallback(move || {
        let body = body.clone();
        async move {
            ([(CONTENT_TYPE, "application/json;odata=nometadata;streaming=true;charset=utf-8")], body)
                .into_response()
        }
    });
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("bind {addr}: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    eprintln!("ceiling server on http://{local}/devstoreaccount1 for {}s", serve_for.as_secs());
    let stop = async move {
        tokio::select! {
            _ = tokio::time::sleep(serve_for) => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    };
    axum::serve(listener, app).with_graceful_shutdown(stop).await.map_err(|e| format!("serve: {e}"))
}
