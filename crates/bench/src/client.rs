//! One keep-alive HTTP/1.1 connection to a loopback Table endpoint (a small hand-written
//! HTTP/1.1 client), and SharedKey-signed Table requests over it. The endpoint must be a loopback address given on the command
//! line ([`Target::parse`] refuses anything else).

use aztable_wire::auth::sign::{shared_key_authorization, SignParts};
use bytes::Bytes;
use http::Method;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use std::cell::RefCell;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::io::Interest;
use tokio::net::TcpStream;

/// Query-string characters left literal (RFC 3986 unreserved).
const QUERY_ENCODE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Percent-encodes one query parameter value.
pub(crate) fn encode_query_value(value: &str) -> String {
    utf8_percent_encode(value, QUERY_ENCODE).to_string()
}

/// A parsed endpoint: `http://127.0.0.1:10002/devstoreaccount1` (path-style account).
#[derive(Debug)]
pub(crate) struct Target {
    /// The endpoint as given.
    pub endpoint: String,
    pub addr: SocketAddr,
    /// `Host` header value, e.g. `127.0.0.1:10002`.
    pub host: String,
    pub account: String,
    pub key: Vec<u8>,
    /// `/devstoreaccount1`.
    pub base_path: String,
    /// `http://127.0.0.1:10002/devstoreaccount1` (used in batch sub-request URLs).
    pub base_url: String,
}

impl Target {
    /// Parses `http://HOST:PORT[/ACCOUNT]`. HOST must be a loopback IP literal
    /// (`127.x.y.z`, `[::1]`) or `localhost`; the account is the first path segment, else
    /// `account`.
    pub(crate) fn parse(endpoint: &str, account: &str, key: &[u8]) -> Result<Target, String> {
        let rest = endpoint
            .strip_prefix("http://")
            .ok_or_else(|| format!("{endpoint}: only http:// endpoints are supported"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, p) = v6.split_once("]:").ok_or_else(|| format!("{endpoint}: a port is required"))?;
            (h, p)
        } else {
            authority.rsplit_once(':').ok_or_else(|| format!("{endpoint}: a port is required"))?
        };
        let port: u16 = port.parse().map_err(|_| format!("{endpoint}: bad port '{port}'"))?;
        let ip: IpAddr = if host.eq_ignore_ascii_case("localhost") {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        } else {
            host.parse().map_err(|_| format!("{endpoint}: the host must be a loopback IP or localhost"))?
        };
        if !ip.is_loopback() {
            return Err(format!("{endpoint}: refusing a non-loopback address ({ip})"));
        }
        let account = match path.trim_start_matches('/').split('/').next() {
            Some(seg) if !seg.is_empty() => seg.to_string(),
            _ => account.to_string(),
        };
        let addr = SocketAddr::new(ip, port);
        let base_path = format!("/{account}");
        Ok(Target {
            endpoint: endpoint.to_string(),
            addr,
            host: authority.to_string(),
            base_url: format!("http://{authority}{base_path}"),
            base_path,
            account,
            key: key.to_vec(),
        })
    }
}

/// A request before signing.
pub(crate) struct Req {
    pub method: Method,
    /// Raw (already percent-encoded) path, e.g. `/devstoreaccount1/t(PartitionKey='a',RowKey='b')`.
    pub path: String,
    /// Raw query without `?`.
    pub query: Option<String>,
    pub content_type: Option<String>,
    pub body: Bytes,
    /// Extra headers such as `Prefer`.
    pub headers: Vec<(&'static str, String)>,
}

impl Req {
    pub(crate) fn new(method: Method, path: String) -> Req {
        Req { method, path, query: None, content_type: None, body: Bytes::new(), headers: Vec::new() }
    }

    pub(crate) fn json(self, body: Vec<u8>) -> Req {
        self.with_body("application/json".into(), body)
    }

    /// Sets the body and its `Content-Type` (which the signature covers).
    pub(crate) fn with_body(mut self, content_type: String, body: Vec<u8>) -> Req {
        self.content_type = Some(content_type);
        self.body = Bytes::from(body);
        self
    }

    pub(crate) fn query(mut self, query: String) -> Req {
        self.query = Some(query);
        self
    }

    pub(crate) fn header(mut self, name: &'static str, value: impl Into<String>) -> Req {
        self.headers.push((name, value.into()));
        self
    }
}

/// A response with its body read in full.
pub(crate) struct Resp {
    pub status: u16,
    /// Header names lower-cased, values as sent.
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
}

impl Resp {
    pub(crate) fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// A response header as text, if present (`name` in lower case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// The RFC 1123 date for `x-ms-date`, formatted once per second per thread.
fn http_date() -> String {
    thread_local! {
        static CACHED: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
    }
    // `httpdate` panics before 1970 and past year 9999: clamp the clock into that range.
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()).min(253_402_300_799);
    CACHED.with(|c| {
        let mut c = c.borrow_mut();
        if c.0 != secs {
            *c = (secs, httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs)));
        }
        c.1.clone()
    })
}

/// One keep-alive HTTP/1.1 connection; reconnects once if the connection was closed.
///
/// HTTP/1.1 is written and read by hand (one request in flight, bodies framed by
/// `Content-Length` or chunked) into buffers kept across requests: on two shared cores
/// every microsecond the load tool spends is taken from the server it measures, and a
/// general-purpose client (hyper, `HeaderMap`s, per-request allocations) cost about as
/// much CPU per point read as the server under test.
pub(crate) struct Conn {
    target: Arc<Target>,
    stream: Option<TcpStream>,
    out: Vec<u8>,
    /// Received bytes not yet consumed.
    inb: Vec<u8>,
}

impl Conn {
    /// Connects, retrying for up to `patience` while the connect is refused or reset (a
    /// server whose listen backlog is full, or one still starting).
    pub(crate) async fn connect_patiently(target: Arc<Target>, patience: Duration) -> Result<Conn, String> {
        use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
        let start = std::time::Instant::now();
        let stream = loop {
            match open_stream(target.addr).await {
                Err(e)
                    if matches!(e.kind(), ConnectionRefused | ConnectionReset | ConnectionAborted)
                        && start.elapsed() < patience =>
                {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(e) => return Err(format!("connect {}: {e}", target.addr)),
                Ok(stream) => break stream,
            }
        };
        Ok(Conn {
            target,
            stream: Some(stream),
            out: Vec::with_capacity(2048),
            inb: Vec::with_capacity(8192),
        })
    }

    async fn reconnect(&mut self) -> Result<(), String> {
        self.stream = None;
        self.inb.clear();
        let stream =
            open_stream(self.target.addr).await.map_err(|e| format!("connect {}: {e}", self.target.addr))?;
        self.stream = Some(stream);
        Ok(())
    }

    /// Signs and sends `req`, returning the full response; retries once on a fresh
    /// connection if the old one failed (e.g. the server closed it while idle).
    pub(crate) async fn send(&mut self, req: &Req) -> Result<Resp, String> {
        match self.try_send(req).await {
            Ok(resp) => Ok(resp),
            Err(first) => {
                self.reconnect().await.map_err(|e| format!("{first}; then {e}"))?;
                self.try_send(req).await
            }
        }
    }

    async fn try_send(&mut self, req: &Req) -> Result<Resp, String> {
        self.write_request(req);
        let stream = self.stream.as_mut().ok_or("not connected")?;
        write_all(stream, &self.out, &req.body).await.map_err(|e| format!("send: {e}"))?;
        let resp = read_response(stream, &mut self.inb, req.method == Method::HEAD).await;
        match resp {
            Ok((resp, keep_alive)) => {
                if !keep_alive {
                    self.stream = None;
                } else if self.inb.is_empty() {
                    forget_readable(stream);
                }
                Ok(resp)
            }
            Err(e) => {
                self.stream = None;
                Err(e)
            }
        }
    }

    /// Writes the signed request's head into `self.out` (the body is sent from `req`).
    fn write_request(&mut self, req: &Req) {
        let t = &self.target;
        let date = http_date();
        let content_type = req.content_type.as_deref().unwrap_or("");
        let parts = SignParts {
            method: req.method.as_str(),
            raw_path: &req.path,
            query: req.query.as_deref(),
            content_md5: "",
            content_type,
            date: &date,
        };
        let authorization = shared_key_authorization(&t.account, &t.key, &parts);
        let out = &mut self.out;
        out.clear();
        let mut put = |pieces: &[&str]| pieces.iter().for_each(|p| out.extend_from_slice(p.as_bytes()));
        put(&[req.method.as_str(), " ", &req.path]);
        if let Some(q) = &req.query {
            put(&["?", q]);
        }
        put(&[" HTTP/1.1\r\nhost: ", &t.host, "\r\nx-ms-date: ", &date, "\r\n"]);
        put(&["x-ms-version: 2019-02-02\r\naccept: application/json;odata=nometadata\r\n"]);
        put(&["dataserviceversion: 3.0;NetFx\r\nmaxdataserviceversion: 3.0;NetFx\r\n"]);
        put(&["authorization: ", &authorization, "\r\n"]);
        if !content_type.is_empty() {
            put(&["content-type: ", content_type, "\r\n"]);
        }
        for (name, value) in &req.headers {
            put(&[name, ": ", value, "\r\n"]);
        }
        if !req.body.is_empty() || matches!(req.method, Method::POST | Method::PUT | Method::PATCH) {
            put(&["content-length: ", &req.body.len().to_string(), "\r\n"]);
        }
        put(&["\r\n"]);
    }
}

/// A TCP connection to `addr` with Nagle's algorithm off.
async fn open_stream(addr: SocketAddr) -> std::io::Result<TcpStream> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// Writes all of `head` then `body` (one vectored write when the socket takes them, no
/// copy of the body), trying the socket before waiting for it to be writable.
async fn write_all(stream: &TcpStream, mut head: &[u8], mut body: &[u8]) -> std::io::Result<()> {
    while !head.is_empty() || !body.is_empty() {
        let bufs = [std::io::IoSlice::new(head), std::io::IoSlice::new(body)];
        match stream.try_write_vectored(&bufs) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(mut n) => {
                let from_head = n.min(head.len());
                head = &head[from_head..];
                n -= from_head;
                body = &body[n..];
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => stream.writable().await?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Appends what the socket has to `inb` (waiting for at least one byte); 0 = closed.
async fn read_some(stream: &TcpStream, inb: &mut Vec<u8>) -> std::io::Result<usize> {
    loop {
        // into `inb`'s spare capacity: no zeroed scratch buffer, no copy
        inb.reserve(16 * 1024);
        stream.readable().await?;
        match stream.try_read_buf(inb) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
}

/// Drops the runtime's note that `stream` is readable once a whole response has been
/// read and nothing follows it, so the next response is awaited from the reactor
/// instead of first trying a `recv` that finds nothing (half the reads of a point-read
/// run did). No syscall; the runtime keeps the note if the socket became readable again
/// meanwhile (a close, say), so no wake-up is lost.
fn forget_readable(stream: &TcpStream) {
    // ok to ignore: the closure's WouldBlock is the point, not an error
    let _ = stream.try_io(Interest::READABLE, || Err::<(), _>(std::io::ErrorKind::WouldBlock.into()));
}

/// Reads more bytes into `inb`; an orderly close is an error (a response was due).
async fn fill(stream: &TcpStream, inb: &mut Vec<u8>) -> Result<(), String> {
    match read_some(stream, inb).await {
        Ok(0) => Err("connection closed by the server".into()),
        Ok(_) => Ok(()),
        Err(e) => Err(format!("receive: {e}")),
    }
}

/// Reads one response from `stream`, consuming it from `inb`; returns it and whether
/// the connection stays open.
async fn read_response(
    stream: &TcpStream,
    inb: &mut Vec<u8>,
    head_only: bool,
) -> Result<(Resp, bool), String> {
    let head_len = loop {
        if let Some(i) = memchr::memmem::find(inb, b"\r\n\r\n") {
            break i + 4;
        }
        if inb.len() > 1 << 20 {
            return Err("response head over 1 MiB".into());
        }
        fill(stream, inb).await?;
    };
    let head = parse_head(&inb[..head_len])?;
    let no_body = head_only || head.status == 204 || head.status == 304 || (100..200).contains(&head.status);
    let body = if no_body {
        inb.drain(..head_len);
        Bytes::new()
    } else if head.chunked {
        inb.drain(..head_len);
        read_chunked(stream, inb).await?
    } else if let Some(len) = head.content_length {
        while inb.len() < head_len + len {
            fill(stream, inb).await?;
        }
        let body = Bytes::copy_from_slice(&inb[head_len..head_len + len]);
        inb.drain(..head_len + len);
        body
    } else {
        // No framing: the body runs to the end of the connection.
        while read_some(stream, inb).await.map_err(|e| format!("receive: {e}"))? > 0 {}
        let body = Bytes::copy_from_slice(&inb[head_len..]);
        inb.clear();
        return Ok((Resp { status: head.status, headers: head.headers, body }, false));
    };
    Ok((Resp { status: head.status, headers: head.headers, body }, head.keep_alive))
}

/// Decodes a chunked body from the front of `inb` (reading more as needed).
async fn read_chunked(stream: &TcpStream, inb: &mut Vec<u8>) -> Result<Bytes, String> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(i) = memchr::memmem::find(inb, b"\r\n") {
                break i;
            }
            fill(stream, inb).await?;
        };
        let line = std::str::from_utf8(&inb[..line_end]).map_err(|_| "bad chunk size line")?;
        let size_hex = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_hex, 16).map_err(|_| format!("bad chunk size '{size_hex}'"))?;
        if size == 0 {
            // Trailers (none expected) end with an empty line.
            loop {
                if let Some(i) = memchr::memmem::find(&inb[line_end..], b"\r\n\r\n") {
                    inb.drain(..line_end + i + 4);
                    return Ok(Bytes::from(body));
                }
                fill(stream, inb).await?;
            }
        }
        let chunk_start = line_end + 2;
        while inb.len() < chunk_start + size + 2 {
            fill(stream, inb).await?;
        }
        body.extend_from_slice(&inb[chunk_start..chunk_start + size]);
        inb.drain(..chunk_start + size + 2);
    }
}

/// A parsed response head.
struct Head {
    status: u16,
    headers: Vec<(String, String)>,
    content_length: Option<usize>,
    chunked: bool,
    keep_alive: bool,
}

/// Parses `HTTP/1.x CODE REASON` and the header lines (the head ends with CRLF CRLF).
fn parse_head(head: &[u8]) -> Result<Head, String> {
    let text = std::str::from_utf8(head).map_err(|_| "response head is not UTF-8")?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut words = status_line.splitn(3, ' ');
    let version = words.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") {
        return Err(format!("not an HTTP/1.x response: '{status_line}'"));
    }
    let status: u16 = words
        .next()
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("bad status line '{status_line}'"))?;
    let mut parsed = Head {
        status,
        headers: Vec::new(),
        content_length: None,
        chunked: false,
        keep_alive: version != "HTTP/1.0",
    };
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':').ok_or_else(|| format!("bad header line '{line}'"))?;
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        match name.as_str() {
            "content-length" => {
                parsed.content_length =
                    Some(value.parse().map_err(|_| format!("bad content-length '{value}'"))?)
            }
            "transfer-encoding" => parsed.chunked = value.to_ascii_lowercase().contains("chunked"),
            "connection" if value.eq_ignore_ascii_case("close") => parsed.keep_alive = false,
            "connection" if value.eq_ignore_ascii_case("keep-alive") => parsed.keep_alive = true,
            _ => {}
        }
        parsed.headers.push((name, value.to_string()));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_only() {
        let t = Target::parse("http://127.0.0.1:10002/devstoreaccount1", "x", b"k").expect("ok");
        assert_eq!(t.account, "devstoreaccount1");
        assert_eq!(t.base_url, "http://127.0.0.1:10002/devstoreaccount1");
        let t = Target::parse("http://localhost:10002", "acc", b"k").expect("ok");
        assert_eq!(t.account, "acc");
        assert_eq!(t.addr.port(), 10002);
        assert!(Target::parse("http://[::1]:1/a", "x", b"k").is_ok());
        assert!(Target::parse("http://10.0.0.1:10002/a", "x", b"k").is_err());
        assert!(Target::parse("http://example.com:80/a", "x", b"k").is_err());
        assert!(Target::parse("https://127.0.0.1:443/a", "x", b"k").is_err());
        assert!(Target::parse("http://127.0.0.1/a", "x", b"k").is_err());
    }

    #[test]
    fn query_values_are_encoded() {
        assert_eq!(encode_query_value("PartitionKey eq 'a'"), "PartitionKey%20eq%20%27a%27");
    }

    /// The hand-written HTTP/1.1 reader against canned responses from a loopback
    /// socket: Content-Length, chunked bodies split across writes, no-body statuses, and
    /// a server that closes the connection after answering (the next request reconnects).
    #[tokio::test]
    async fn reads_framed_responses_over_keep_alive() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        tokio::spawn(async move {
            let answers: [&[&[u8]]; 4] = [
                &[b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Ms-Continuation-NextPartitionKey: p1\r\n\r\nhel", b"lo"],
                &[b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc", b"\r\n4;x=y\r\ndefg\r\n0\r\n\r\n"],
                &[b"HTTP/1.1 204 No Content\r\nETag: W/\"x\"\r\n\r\n"],
                &[b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno"],
            ];
            let mut next = 0;
            while next < answers.len() + 1 {
                let (mut sock, _) = listener.accept().await.expect("accept");
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    // one request per read is enough for these small requests
                    let n = sock.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    let answer = answers
                        .get(next)
                        .copied()
                        .unwrap_or(&[b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"]);
                    for piece in answer {
                        sock.write_all(piece).await.expect("write");
                        sock.flush().await.expect("flush");
                        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    }
                    next += 1;
                    if next == answers.len() {
                        break; // "Connection: close"
                    }
                }
            }
        });
        let target =
            Arc::new(Target::parse(&format!("http://127.0.0.1:{port}/acc"), "acc", b"key").expect("target"));
        let mut conn = Conn::connect_patiently(target, Duration::ZERO).await.expect("connect");
        let get = Req::new(Method::GET, "/acc/t()".into());
        let r = conn.send(&get).await.expect("first");
        assert_eq!((r.status, &r.body[..]), (200, &b"hello"[..]));
        assert_eq!(r.header("x-ms-continuation-nextpartitionkey"), Some("p1"));
        let r =
            conn.send(&Req::new(Method::POST, "/acc/t".into()).json(b"{}".to_vec())).await.expect("second");
        assert_eq!((r.status, &r.body[..]), (201, &b"abcdefg"[..]));
        let r = conn.send(&get).await.expect("third");
        assert_eq!((r.status, r.body.len(), r.header("etag")), (204, 0, Some("W/\"x\"")));
        let r = conn.send(&get).await.expect("fourth");
        assert_eq!((r.status, &r.body[..]), (404, &b"no"[..]));
        assert!(conn.stream.is_none(), "Connection: close drops the connection");
        let r = conn.send(&get).await.expect("after a reconnect");
        assert_eq!((r.status, r.body.len()), (200, 0));
    }

    #[test]
    fn bad_heads_are_errors() {
        assert!(parse_head(b"SSH-2.0\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 abc OK\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\nno-colon\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n").is_err());
        let h = parse_head(b"HTTP/1.0 200 OK\r\n\r\n").expect("1.0");
        assert!(!h.keep_alive);
    }
}
