//! Black-box: hostile and broken clients against the real server, over raw TCP. What a
//! client can make the server hold (memory, connections) and for how long (a head or a
//! body sent slowly or never finished, shutdown with stalled clients), and the answers
//! to heads the service refuses (over-long URI or headers, bad percent-escapes). Each
//! test configures short limits, so each runs in a few seconds. docs/security.md lists
//! the limits these check.

use crate::common::*;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A server in memory with `flags`.
fn server(flags: &[&str]) -> TestServer {
    TestServer::start_with(&[&["--inMemoryPersistence", "--silent"], flags].concat(), &[])
}

/// The head of a SharedKey-signed request (path-style, `path` after the account),
/// declaring a body of `content_length` bytes; `sign_right` false signs with a wrong key.
fn signed_head(port: u16, method: &str, path: &str, content_length: usize, sign_right: bool) -> String {
    let date = now_rfc1123();
    let content_type = "application/json";
    let sts = format!("{method}\n\n{content_type}\n{date}\n/{ACCOUNT}/{ACCOUNT}{path}");
    let key = if sign_right { KEY } else { "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" };
    let sig = sign(key, &sts);
    format!(
        "{method} /{ACCOUNT}{path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-ms-date: {date}\r\n\
         x-ms-version: 2019-02-02\r\nAccept: application/json;odata=nometadata\r\n\
         Content-Type: {content_type}\r\nContent-Length: {content_length}\r\n\
         Authorization: SharedKey {ACCOUNT}:{sig}\r\n\r\n"
    )
}

/// A response read off a raw connection.
#[derive(Debug)]
struct Raw {
    status: u16,
    head: String,
    body: String,
}

impl Raw {
    /// A header's value (names compared case-insensitively).
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }

    /// Asserts an OData JSON error: status, `x-ms-error-code` and `odata.error.code`.
    #[track_caller]
    fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{self:?}");
        assert_eq!(self.header("x-ms-error-code").as_deref(), Some(code), "{self:?}");
        assert!(self.header("content-type").unwrap_or_default().starts_with("application/json"), "{self:?}");
        let json: serde_json::Value = serde_json::from_str(&self.body).expect("a JSON error body");
        assert_eq!(json["odata.error"]["code"], code, "{self:?}");
    }
}

/// Reads one response (head and Content-Length body), waiting at most `within`.
async fn read_response(s: &mut TcpStream, within: Duration) -> Raw {
    let deadline = tokio::time::Instant::now() + within;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = tokio::time::timeout_at(deadline, s.read(&mut chunk))
            .await
            .expect("a response in time")
            .expect("read");
        assert!(n > 0, "the connection closed before a whole response: {:?}", String::from_utf8_lossy(&buf));
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).into_owned();
        let Some(end) = text.find("\r\n\r\n") else { continue };
        let head = text[..end].to_owned();
        let len = head
            .lines()
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned()))
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(0);
        if buf.len() >= end + 4 + len {
            let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).expect("a status line");
            let body = String::from_utf8_lossy(&buf[end + 4..end + 4 + len]).into_owned();
            return Raw { status, head, body };
        }
    }
}

/// Waits until the server closes the connection (EOF or reset), at most `within`;
/// returns how long that took.
async fn closed_within(s: &mut TcpStream, within: Duration) -> Duration {
    let started = Instant::now();
    let mut sink = [0u8; 4096];
    loop {
        match tokio::time::timeout(within.saturating_sub(started.elapsed()), s.read(&mut sink)).await {
            Err(_) => panic!("the connection was still open after {within:?}"),
            Ok(Ok(0) | Err(_)) => return started.elapsed(),
            Ok(Ok(_)) => {} // a response before the close
        }
    }
}

/// Whether the server has not closed `s` (nothing to read yet, no end of stream).
fn still_open(s: &TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(s.try_read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// The server's resident memory, from /proc/<pid>/status.
fn vm_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a number")
}

const MIB4: usize = 4 * 1024 * 1024;

#[tokio::test]
async fn unauthenticated_bodies_are_refused_on_their_head_and_cost_no_memory() {
    let server = server(&["--bodyReadTimeout", "20"]);
    let port = server.port;
    let pid = server.pid();
    // warm up: the runtime's threads and first allocations
    let warm = server.client().send("GET", "/Tables", &[], None).await;
    assert_eq!(warm.status, 200);
    let before = vm_rss_kib(pid);

    // 200 clients with a wrong key, each declaring 4 MiB and sending 2 KB in two frames
    let clients = (0..200).map(|_| async move {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let head = signed_head(port, "POST", "/Tables", MIB4, false);
        s.write_all(format!("{head}{}", "x".repeat(1024)).as_bytes()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let _ = s.write_all(&[b'y'; 1024]).await;
        // the 403 comes without the rest of the body being awaited (it never comes)
        let r = read_response(&mut s, Duration::from_secs(30)).await;
        r.assert_error(403, "AuthenticationFailed");
        assert_eq!(r.header("connection").as_deref(), Some("close"), "{r:?}");
        closed_within(&mut s, Duration::from_secs(5)).await;
        s
    });
    let refused = futures_join_all(clients).await;

    // 200 signed clients declaring 4 MiB and sending 2 KB, then stalling: the server holds
    // what arrived, not what was declared
    let mut stalled = Vec::new();
    for _ in 0..200 {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let head = signed_head(port, "POST", "/Tables", MIB4, true);
        s.write_all(format!("{head}{}", "x".repeat(1024)).as_bytes()).await.unwrap();
        stalled.push(s);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    for s in &mut stalled {
        s.write_all(&[b'y'; 1024]).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = vm_rss_kib(pid);
    let grown_mib = after.saturating_sub(before) / 1024;
    // 400 × 4 MiB declared = 1.6 GiB; what arrived is 800 KB plus per-connection buffers
    assert!(grown_mib < 64, "RSS grew by {grown_mib} MiB ({before} KiB -> {after} KiB)");
    drop((refused, stalled));
}

/// `futures::future::join_all` without the dependency: spawns each and awaits them all.
async fn futures_join_all<F>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.expect("client task"));
    }
    out
}

#[tokio::test]
async fn a_refused_small_body_is_drained_and_the_connection_kept() {
    let server = server(&[]);
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
    let body = r#"{"TableName":"kept"}"#;
    for _ in 0..2 {
        let head = signed_head(server.port, "POST", "/Tables", body.len(), false);
        s.write_all(format!("{head}{body}").as_bytes()).await.unwrap();
        let r = read_response(&mut s, Duration::from_secs(30)).await;
        r.assert_error(403, "AuthenticationFailed");
        assert_eq!(r.header("connection"), None, "{r:?}");
    }
}

#[tokio::test]
async fn a_body_shorter_than_its_content_length_is_cut_off() {
    let server = server(&["--bodyReadTimeout", "1", "--minBodyRate", "1000"]);
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
    let started = Instant::now();
    let head = signed_head(server.port, "POST", "/Tables", 100, true);
    s.write_all(format!("{head}{{\"TableName\":").as_bytes()).await.unwrap();
    let r = read_response(&mut s, Duration::from_secs(30)).await;
    let waited = started.elapsed();
    r.assert_error(408, "RequestTimeout");
    assert_eq!(r.header("connection").as_deref(), Some("close"), "{r:?}");
    // 1 s of grace and the 13 ms its 13 bytes earned (how much later it came is the
    // machine's business; the 408's code says which limit cut it)
    assert!(waited >= Duration::from_millis(900), "{waited:?}");
    closed_within(&mut s, Duration::from_secs(2)).await;
}

#[tokio::test]
async fn a_body_trickled_past_the_request_timeout_is_cut_off() {
    // fast enough for --minBodyRate, but the whole request takes longer than allowed
    let server = server(&["--bodyReadTimeout", "1", "--minBodyRate", "10", "--requestTimeout", "2"]);
    let s = TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
    let (mut rd, mut wr) = s.into_split();
    let started = Instant::now();
    let head = signed_head(server.port, "POST", "/Tables", 10_000, true);
    wr.write_all(head.as_bytes()).await.unwrap();
    let writer = tokio::spawn(async move {
        // 500 bytes a second: 20 s for the whole body
        while started.elapsed() < Duration::from_secs(60) {
            if wr.write_all(&[b' '; 50]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&buf).contains("\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(30), rd.read(&mut chunk))
            .await
            .expect("an answer in time")
            .expect("read");
        assert!(n > 0, "closed without an answer");
        buf.extend_from_slice(&chunk[..n]);
    }
    let waited = started.elapsed();
    let text = String::from_utf8_lossy(&buf).to_ascii_lowercase();
    assert!(text.starts_with("http/1.1 408"), "{text}");
    assert!(text.contains("x-ms-error-code: requesttimeout"), "RequestTimeout: {text}");
    // not before the 2 s --requestTimeout (less the head's few ms), and long before the
    // body could have been complete
    assert!(waited >= Duration::from_millis(1800), "{waited:?}");
    writer.abort();
}

#[tokio::test]
async fn a_head_sent_one_byte_a_second_is_cut_off() {
    let server = server(&["--tableKeepAliveTimeout", "2"]);
    let s = TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
    let (mut rd, mut wr) = s.into_split();
    let started = Instant::now();
    let writer = tokio::spawn(async move {
        for b in format!("GET /{ACCOUNT}/Tables HTTP/1.1\r\nHost: 127.0.0.1\r\nx-ms-version: 2019-02-02\r\n")
            .bytes()
        {
            if wr.write_all(&[b]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    let mut byte = [0u8; 1];
    // the whole head takes over a minute to send: a hang guard well before that
    let n = tokio::time::timeout(Duration::from_secs(30), rd.read(&mut byte)).await.expect("cut off");
    assert!(matches!(n, Ok(0) | Err(_)), "{n:?}");
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(1500), "{waited:?}");
    writer.abort();
}

#[tokio::test]
async fn sigterm_with_stalled_clients_exits_0_within_the_shutdown_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    // the head, body and request timeouts are far off: only --shutdownTimeout ends them
    let flags = [
        "--silent",
        "--shutdownTimeout",
        "2",
        "--tableKeepAliveTimeout",
        "120",
        "--bodyReadTimeout",
        "120",
        "--requestTimeout",
        "600",
    ];
    let mut server = TestServer::start_on(&dir, &flags);
    let port = server.port;
    let c = server.client();
    assert_eq!(c.create_table("kept").await.status, 201);
    let mut stalled = Vec::new();
    for i in 0..30 {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        match i % 3 {
            // half a head
            0 => {
                s.write_all(format!("POST /{ACCOUNT}/Tables HTTP/1.1\r\nHost: 12").as_bytes()).await.unwrap()
            }
            // a whole head and half its body
            1 => {
                let head = signed_head(port, "POST", "/Tables", 100, true);
                s.write_all(format!("{head}{{\"TableName\":").as_bytes()).await.unwrap();
            }
            // nothing at all
            _ => {}
        }
        stalled.push(s);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    assert!(server.terminate(), "exit status 0");
    // the 2 s grace, then the stalled connections are cut (their own timeouts are minutes
    // away) and the store is closed
    assert!(started.elapsed() >= Duration::from_secs(2), "the grace was not given");
    for s in &mut stalled {
        closed_within(s, Duration::from_secs(30)).await;
    }
    drop(stalled);
    // the store was flushed and closed: it opens again with its data
    let server = TestServer::start_on(&dir, &["--silent"]);
    let r = server.client().send("GET", "/Tables('kept')", &[], None).await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test]
async fn sigterm_without_clients_exits_at_once() {
    // a grace far longer than terminate()'s 30 s wait: exiting at all shows it was not used
    let mut server = server(&["--shutdownTimeout", "600"]);
    assert!(server.terminate());
}

#[tokio::test]
async fn connections_over_max_connections_are_refused_and_a_real_client_gets_in_once_idle_ones_time_out() {
    let server = server(&["--maxConnections", "20", "--tableKeepAliveTimeout", "2"]);
    let port = server.port;
    let mut silent = Vec::new();
    for _ in 0..20 {
        silent.push(TcpStream::connect(("127.0.0.1", port)).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    // the 21st is closed as soon as it is accepted, unread
    let mut over = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let _ = over.write_all(format!("GET /{ACCOUNT}/Tables HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes()).await;
    closed_within(&mut over, Duration::from_secs(30)).await;
    // ... before any silent one was cut (its 2 s head-read timeout): they are all open still
    for s in &silent {
        assert!(still_open(s), "a silent connection was closed before the 21st was refused");
    }
    // the silent ones hold their places only until the head-read timeout cuts them
    let c = server.client();
    let served = loop {
        let attempt = tokio::time::timeout(
            Duration::from_secs(1),
            c.http.get(format!("{}/Tables", c.endpoint)).header("x-ms-version", "2019-02-02").send(),
        )
        .await;
        if let Ok(Ok(r)) = attempt {
            break Resp::read(r).await;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no place freed up");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // unauthenticated: the service's answer to a request without Authorization
    served.assert_refused(401, ErrorCode::NoAuthenticationInformation);
    // the places came back because the silent ones were cut
    for s in &mut silent {
        closed_within(s, Duration::from_secs(30)).await;
    }
}

/// Stalled TLS handshakes hold `--maxConnections` places like stalled plain requests:
/// connections that never send a ClientHello cannot pile up uncounted (each holds a
/// descriptor), and their places come back as they close.
#[tokio::test]
async fn tls_handshakes_in_progress_count_against_max_connections() {
    let tls = |name: &str| format!("{}/tests/fixtures/tls/{name}", env!("CARGO_MANIFEST_DIR"));
    let (cert, key) = (tls("cert.pem"), tls("key.pem"));
    let server = server(&["--maxConnections", "5", "--cert", &cert, "--key", &key]);
    let port = server.port;
    let mut stalled = Vec::new();
    for _ in 0..5 {
        stalled.push(TcpStream::connect(("127.0.0.1", port)).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // the sixth is closed as soon as it is accepted, before any handshake
    let mut over = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    closed_within(&mut over, Duration::from_secs(30)).await;
    for s in &stalled {
        assert!(still_open(s), "a stalled handshake was closed before the sixth was refused");
    }
    // the stalled ones let go: their places come back, and an HTTPS client is served
    drop(stalled);
    let ca = reqwest::Certificate::from_pem(&std::fs::read(tls("cert.pem")).unwrap()).unwrap();
    let https = reqwest::Client::builder().add_root_certificate(ca).build().unwrap();
    let started = Instant::now();
    let answer = loop {
        let sent = https
            .get(format!("https://127.0.0.1:{port}/{ACCOUNT}/Tables"))
            .header("x-ms-version", "2019-02-02")
            .send()
            .await;
        if let Ok(r) = sent {
            break Resp::read(r).await;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no place came back: {sent:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // unauthenticated: the service's answer to a request without Authorization
    answer.assert_refused(401, ErrorCode::NoAuthenticationInformation);
}

/// Shutdown does not wait for handshakes in progress: like an idle connection, a client
/// stalled before its first request has nothing to finish.
#[tokio::test]
async fn sigterm_with_stalled_tls_handshakes_exits_at_once() {
    let tls = |name: &str| format!("{}/tests/fixtures/tls/{name}", env!("CARGO_MANIFEST_DIR"));
    let (cert, key) = (tls("cert.pem"), tls("key.pem"));
    // a grace far longer than terminate()'s 30 s wait: exiting at all shows it was not used
    let mut server = server(&["--cert", &cert, "--key", &key, "--shutdownTimeout", "600"]);
    let mut stalled = Vec::new();
    for i in 0..6 {
        let mut s = TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
        if i % 2 == 0 {
            // the first bytes of a ClientHello record, and no more
            s.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00]).await.unwrap();
        }
        stalled.push(s);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(server.terminate(), "exit status 0");
    drop(stalled);
}

#[tokio::test]
async fn over_long_uris_and_heads_get_odata_errors() {
    let server = server(&[]);
    let port = server.port;
    let exchange = |request: String| async move {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.write_all(request.as_bytes()).await.unwrap();
        read_response(&mut s, Duration::from_secs(30)).await
    };
    // a URI over the 32 KiB the server takes (hyper's own limit is higher)
    let long_query = "a".repeat(40 * 1024);
    let r = exchange(format!("GET /{ACCOUNT}/Tables?$filter={long_query} HTTP/1.1\r\nHost: x\r\n\r\n")).await;
    r.assert_error(414, "RequestUriTooLong");
    // one header over the 32 KiB of headers the server takes
    let big = "b".repeat(40 * 1024);
    let r = exchange(format!("GET /{ACCOUNT}/Tables HTTP/1.1\r\nHost: x\r\nx-ms-big: {big}\r\n\r\n")).await;
    r.assert_error(431, "RequestHeaderFieldsTooLarge");
    // more than the 80 headers the server takes
    let many: String = (0..90).map(|i| format!("x-ms-h{i}: v\r\n")).collect();
    let r = exchange(format!("GET /{ACCOUNT}/Tables HTTP/1.1\r\nHost: x\r\n{many}\r\n")).await;
    r.assert_error(431, "RequestHeaderFieldsTooLarge");
    // more than hyper's 100: its bare 431, still no hang and no panic
    let too_many: String = (0..120).map(|i| format!("x-ms-h{i}: v\r\n")).collect();
    let r = exchange(format!("GET /{ACCOUNT}/Tables HTTP/1.1\r\nHost: x\r\n{too_many}\r\n")).await;
    assert_eq!(r.status, 431, "{r:?}");
    // 80 headers in all: an ordinary answer
    let most: String = (0..79).map(|i| format!("x-ms-h{i}: v\r\n")).collect();
    let r = exchange(format!("GET /{ACCOUNT}/Tables HTTP/1.1\r\nHost: x\r\n{most}\r\n")).await;
    r.assert_error(401, "NoAuthenticationInformation");
    // just under the limits: an ordinary answer
    let r =
        exchange(format!("GET /{ACCOUNT}/Tables?x={} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(30 * 1024)))
            .await;
    r.assert_error(401, "NoAuthenticationInformation");
}

#[tokio::test]
async fn a_malformed_percent_escape_in_the_path_is_invalid_uri() {
    let server = server(&[]);
    for path in ["/Tables%G1", "/Tables('t%4')", "/t(PartitionKey='a%',RowKey='b')"] {
        let mut s = TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
        let head = signed_head(server.port, "GET", path, 0, true);
        s.write_all(head.as_bytes()).await.unwrap();
        let r = read_response(&mut s, Duration::from_secs(30)).await;
        r.assert_error(400, "InvalidUri");
    }
    // a well-formed escape is decoded as before
    let r = server.client().send("GET", "/Tables('%6Eope')", &[], None).await;
    assert_eq!(r.status, 404, "{}", r.body);
}

#[tokio::test]
async fn bodies_over_the_in_flight_cap_get_503_server_busy() {
    let server = server(&["--maxInflightBodyBytes", "1000000", "--requestTimeout", "3"]);
    let port = server.port;
    // one client holds 800 KB of a 900 KB body and stalls
    let mut holder = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    holder.write_all(signed_head(port, "POST", "/Tables", 900_000, true).as_bytes()).await.unwrap();
    holder.write_all(&vec![b' '; 800_000]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    // a 300 KB table creation does not fit beside it
    let body = format!("{{\"TableName\":\"busy\"{}}}", " ".repeat(300_000));
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let head = signed_head(port, "POST", "/Tables", body.len(), true);
    s.write_all(head.as_bytes()).await.unwrap();
    let _ = s.write_all(body.as_bytes()).await;
    let r = read_response(&mut s, Duration::from_secs(30)).await;
    r.assert_error(503, "ServerBusy");
    assert_eq!(r.header("connection").as_deref(), Some("close"), "{r:?}");
    // once the holder is cut off (--requestTimeout), the same request fits
    closed_within(&mut holder, Duration::from_secs(30)).await;
    let r = server.client().send("POST", "/Tables", &[], Some(&body)).await;
    assert_eq!(r.status, 201, "{}", r.body);
}
