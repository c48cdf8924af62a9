//! One keep-alive HTTP/1.1 connection to a loopback Table endpoint, and SharedKey-signed
//! Table requests over it. The endpoint must be a loopback address given on the command
//! line ([`Target::parse`] refuses anything else).

use aztable::auth::sign::{shared_key_authorization, SignParts};
use bytes::Bytes;
use http::{HeaderMap, Method, Request};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use tokio::net::TcpStream;

/// Query-string characters left literal (RFC 3986 unreserved).
const QUERY_ENCODE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Percent-encodes one query parameter value.
pub fn encode_query_value(value: &str) -> String {
    utf8_percent_encode(value, QUERY_ENCODE).to_string()
}

/// A parsed endpoint: `http://127.0.0.1:10002/devstoreaccount1` (path-style account).
#[derive(Debug)]
pub struct Target {
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
    pub fn parse(endpoint: &str, account: &str, key: &[u8]) -> Result<Target, String> {
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
pub struct Req {
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
    pub fn new(method: Method, path: String) -> Req {
        Req { method, path, query: None, content_type: None, body: Bytes::new(), headers: Vec::new() }
    }

    pub fn json(self, body: Vec<u8>) -> Req {
        self.with_body("application/json".into(), body)
    }

    /// Sets the body and its `Content-Type` (which the signature covers).
    pub fn with_body(mut self, content_type: String, body: Vec<u8>) -> Req {
        self.content_type = Some(content_type);
        self.body = Bytes::from(body);
        self
    }

    pub fn query(mut self, query: String) -> Req {
        self.query = Some(query);
        self
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Req {
        self.headers.push((name, value.into()));
        self
    }
}

/// A response with its body read in full.
pub struct Resp {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Resp {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// A response header as text, if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// The RFC 1123 date for `x-ms-date`.
fn http_date() -> String {
    chrono::Utc::now().format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// One keep-alive HTTP/1.1 connection; reconnects once if the connection was closed.
pub struct Conn {
    target: Arc<Target>,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl Conn {
    pub async fn connect(target: Arc<Target>) -> Result<Conn, String> {
        let mut conn = Conn { target, sender: None };
        conn.reconnect().await?;
        Ok(conn)
    }

    async fn reconnect(&mut self) -> Result<(), String> {
        self.sender = None;
        let stream = TcpStream::connect(self.target.addr)
            .await
            .map_err(|e| format!("connect {}: {e}", self.target.addr))?;
        stream.set_nodelay(true).map_err(|e| format!("set_nodelay: {e}"))?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(async move {
            // The connection ends when the sender is dropped or the peer closes it.
            let _ = connection.await;
        });
        self.sender = Some(sender);
        Ok(())
    }

    /// Signs and sends `req`, returning the full response; retries once on a fresh
    /// connection if the old one was closed before the request went out.
    pub async fn send(&mut self, req: &Req) -> Result<Resp, String> {
        match self.try_send(req).await {
            Ok(resp) => Ok(resp),
            Err(first) => {
                self.reconnect().await.map_err(|e| format!("{first}; then {e}"))?;
                self.try_send(req).await
            }
        }
    }

    async fn try_send(&mut self, req: &Req) -> Result<Resp, String> {
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
        let uri = match &req.query {
            Some(q) => format!("{}?{q}", req.path),
            None => req.path.clone(),
        };
        let mut builder = Request::builder()
            .method(req.method.clone())
            .uri(uri)
            .header("host", &t.host)
            .header("x-ms-date", date)
            .header("x-ms-version", "2019-02-02")
            .header("accept", "application/json;odata=nometadata")
            .header("dataserviceversion", "3.0;NetFx")
            .header("maxdataserviceversion", "3.0;NetFx")
            .header("authorization", authorization);
        if !content_type.is_empty() {
            builder = builder.header("content-type", content_type);
        }
        for (name, value) in &req.headers {
            builder = builder.header(*name, value);
        }
        let request = builder.body(Full::new(req.body.clone())).map_err(|e| format!("request: {e}"))?;
        let sender = self.sender.as_mut().ok_or("not connected")?;
        sender.ready().await.map_err(|e| format!("connection: {e}"))?;
        let response = sender.send_request(request).await.map_err(|e| format!("send: {e}"))?;
        let (head, body) = response.into_parts();
        let body = body.collect().await.map_err(|e| format!("body: {e}"))?.to_bytes();
        Ok(Resp { status: head.status.as_u16(), headers: head.headers, body })
    }
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
}
