//! `aztable healthcheck`: the client side of a container's HEALTHCHECK (the image has no
//! curl). Connects, sends one minimal request (`GET /`, which the server answers 400
//! `InvalidUri` without touching the store, or 501 on a Blob or Queue port; 500
//! `DataCorrupted` once the store found damaged data, see `health.rs`) and reads the
//! answer: its status line decides, and an unhealthy answer's error code and body are
//! shown. Blocking, with a deadline; no runtime needed.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// What a healthy server answered: the status line, or that it answered in TLS (an HTTPS
/// port whose server does not answer plain HTTP).
pub fn probe(addr: SocketAddr, timeout: Duration) -> Result<String, String> {
    let deadline = Instant::now() + timeout;
    let mut stream =
        TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let left = || deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    stream.set_write_timeout(Some(left())).map_err(|e| e.to_string())?;
    let request = format!(
        "GET / HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: aztable-healthcheck\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).map_err(|e| format!("{addr}: cannot send: {e}"))?;
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    // the whole answer (the request said `Connection: close`), for an error's body
    while got.len() < 16 * 1024 {
        stream.set_read_timeout(Some(left())).map_err(|e| e.to_string())?;
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            // what arrived before the deadline is enough to judge
            Err(_) if got.windows(2).any(|w| w == b"\r\n") => break,
            Err(e) => return Err(format!("{addr}: no answer: {e}")),
        }
    }
    judge(&got).map_err(|e| format!("{addr}: {e}"))
}

/// Healthy: an HTTP status line with a status under 500, or a TLS record.
fn judge(answer: &[u8]) -> Result<String, String> {
    // a TLS alert or handshake record: a server that speaks only HTTPS here
    if matches!(answer.first(), Some(0x15 | 0x16)) && answer.get(1) == Some(&3) {
        return Ok("answered in TLS".to_owned());
    }
    let line = answer.split(|&b| b == b'\r').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line).into_owned();
    if line.is_empty() {
        return Err("the connection closed without an answer".to_owned());
    }
    let status = line
        .strip_prefix("HTTP/1.")
        .and_then(|rest| rest.get(2..5))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| format!("not an HTTP answer: {line:?}"))?;
    if status >= 500 && status != 501 {
        let text = String::from_utf8_lossy(answer);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let code = head
            .lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("x-ms-error-code"))
            .map(|(_, v)| format!(" {}", v.trim()))
            .unwrap_or_default();
        let body: String = body.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(800).collect();
        return Err(format!("answered {line}{code}: {body}"));
    }
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judges_the_first_line() {
        assert_eq!(judge(b"HTTP/1.1 400 Bad Request\r\nx: y").unwrap(), "HTTP/1.1 400 Bad Request");
        // a Blob or Queue port: alive, answering that it does not serve that service
        assert!(judge(b"HTTP/1.1 501 Not Implemented\r\n").is_ok());
        assert!(judge(b"HTTP/1.1 503 Service Unavailable\r\n").is_err());
        let damaged = judge(
            b"HTTP/1.1 500 Internal Server Error\r\nx-ms-error-code: DataCorrupted\r\n\r\n{\"m\": \"the file 000012.sst\"}",
        )
        .unwrap_err();
        assert!(damaged.contains("DataCorrupted") && damaged.contains("000012.sst"), "{damaged}");
        assert!(judge(b"").is_err());
        assert!(judge(b"SSH-2.0-OpenSSH\r\n").is_err());
        assert!(judge(&[0x15, 3, 3, 0, 2, 2, 50]).is_ok());
    }

    #[test]
    fn a_closed_port_fails() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        assert!(probe(addr, Duration::from_secs(1)).is_err());
    }
}
