//! Black-box: connection handling over raw TCP: the keep-alive idle timeout
//! (`--tableKeepAliveTimeout`, announced in `Keep-Alive: timeout=<s>`) and the time a
//! client has to send a request's head.

use crate::common::*;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One unauthenticated request (answered with an error, on a connection kept open).
fn request(port: u16) -> String {
    format!("GET /{ACCOUNT}/Tables HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-ms-version: 2019-02-02\r\n\r\n")
}

/// Reads one response head and its body (by Content-Length).
async fn read_response(s: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut chunk))
            .await
            .expect("a response")
            .unwrap();
        assert!(n > 0, "the connection closed before the response");
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let len = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                return text;
            }
        }
    }
}

/// Waits until the server closes the connection; how long that took.
async fn closed_after(s: &mut TcpStream) -> Duration {
    let started = Instant::now();
    let mut byte = [0u8; 1];
    // a hang guard, not a bound on the timeout under test
    let n = tokio::time::timeout(Duration::from_secs(30), s.read(&mut byte)).await.expect("closed at all");
    assert!(matches!(n, Ok(0) | Err(_)), "expected the connection to close, read {n:?}");
    started.elapsed()
}

#[tokio::test]
async fn idle_connections_close_after_the_keep_alive_timeout_and_say_so() {
    let server = TestServer::start_with(&["--inMemoryPersistence", "--tableKeepAliveTimeout", "1"], &[]);
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
    s.write_all(request(server.port).as_bytes()).await.unwrap();
    let head = read_response(&mut s).await;
    assert!(head.to_ascii_lowercase().contains("\r\nkeep-alive: timeout=1\r\n"), "{head}");
    // within the timeout the connection serves the next request
    tokio::time::sleep(Duration::from_millis(300)).await;
    s.write_all(request(server.port).as_bytes()).await.unwrap();
    read_response(&mut s).await;
    // then, left idle, it is closed after about a second
    let waited = closed_after(&mut s).await;
    assert!(waited >= Duration::from_millis(700), "{waited:?}");

    // the default is 5 seconds
    let default = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    let mut s = TcpStream::connect(("127.0.0.1", default.port)).await.unwrap();
    s.write_all(request(default.port).as_bytes()).await.unwrap();
    assert!(read_response(&mut s).await.to_ascii_lowercase().contains("\r\nkeep-alive: timeout=5\r\n"));
}

#[tokio::test]
async fn a_client_that_stops_sending_its_request_head_is_cut_off() {
    let server = TestServer::start_with(&["--inMemoryPersistence", "--tableKeepAliveTimeout", "1"], &[]);
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
    s.write_all(b"GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: 127").await.unwrap();
    // cut off (`closed_after` fails if it stays open), and not before the timeout
    let waited = closed_after(&mut s).await;
    assert!(waited >= Duration::from_millis(700), "{waited:?}");
}
