//! Opening a run's connections before its clock starts: gradually, at most
//! [`CONNECT_AT_ONCE`] connects in flight, so that 1,000 connections do not overflow the
//! server's listen backlog at once (a dropped SYN costs a 1 s retransmit), with refused
//! connects retried briefly; and the check that the open-file limit allows them.

use crate::client::{Conn, Target};
use std::sync::Arc;
use std::time::Duration;

/// Connects in flight at once.
const CONNECT_AT_ONCE: usize = 32;

/// How long a refused or reset connect is retried.
const CONNECT_PATIENCE: Duration = Duration::from_secs(2);

/// Descriptors the tool needs beside its connections (runtime, stdio, `/proc` reads, a
/// control connection, preload connections still closing).
const SPARE_DESCRIPTORS: u64 = 64;

/// Opens `n` connections to `target`.
pub(crate) async fn open(target: &Arc<Target>, n: usize) -> Result<Vec<Conn>, String> {
    let mut conns = Vec::with_capacity(n);
    while conns.len() < n {
        let mut wave = tokio::task::JoinSet::new();
        for _ in 0..(n - conns.len()).min(CONNECT_AT_ONCE) {
            wave.spawn(Conn::connect_patiently(target.clone(), CONNECT_PATIENCE));
        }
        while let Some(done) = wave.join_next().await {
            conns.push(done.map_err(|e| format!("connect task: {e}"))??);
        }
    }
    Ok(conns)
}

/// One connection, with the same patience as [`open`].
pub(crate) async fn one(target: &Arc<Target>) -> Result<Conn, String> {
    Conn::connect_patiently(target.clone(), CONNECT_PATIENCE).await
}

/// Fails with a clear message if the soft open-file limit (`ulimit -n`, read from
/// `/proc/self/limits`) is too low for `connections` connections at once. The tool does
/// not raise the limit itself: `setrlimit` has no safe wrapper in std, and the project
/// has no `unsafe` code. Passes when the limit cannot be read (not Linux).
pub(crate) fn check_open_files(connections: usize) -> Result<(), String> {
    let Ok(text) = std::fs::read_to_string("/proc/self/limits") else { return Ok(()) };
    let Some((Some(soft), hard)) = open_file_limits(&text) else { return Ok(()) };
    let needed = connections as u64 + SPARE_DESCRIPTORS;
    if soft >= needed {
        return Ok(());
    }
    let raise = match hard {
        Some(hard) if hard >= needed => format!("e.g. `ulimit -n {hard}` (the hard limit)"),
        Some(hard) => format!("above the hard limit {hard}, which needs root"),
        None => format!("e.g. `ulimit -n {needed}`"),
    };
    Err(format!(
        "{connections} connections need about {needed} open files, but the open-file limit is \
         {soft}: raise it in the shell that starts the tool, {raise}"
    ))
}

/// The soft and hard "Max open files" of a `/proc/PID/limits` text (`None`: unlimited).
fn open_file_limits(text: &str) -> Option<(Option<u64>, Option<u64>)> {
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    let mut fields = line["Max open files".len()..].split_whitespace();
    let mut limit = || match fields.next()? {
        "unlimited" => Some(None),
        n => n.parse().ok().map(Some),
    };
    Some((limit()?, limit()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_file_limits_from_proc() {
        let text = "Limit                     Soft Limit           Hard Limit           Units     \n\
                    Max cpu time              unlimited            unlimited            seconds   \n\
                    Max open files            1024                 524288               files     \n";
        assert_eq!(open_file_limits(text), Some((Some(1024), Some(524_288))));
        let text = "Max open files            unlimited            unlimited            files\n";
        assert_eq!(open_file_limits(text), Some((None, None)));
        assert_eq!(open_file_limits("Max processes 10 10 processes\n"), None);
        // this process: whatever its limit, a handful of connections fits and 10^9 do not
        assert_eq!(check_open_files(4), Ok(()));
        let err = check_open_files(1_000_000_000).expect_err("too many");
        assert!(err.contains("ulimit -n") || err.contains("hard limit"), "{err}");
    }

    #[tokio::test]
    async fn opens_many_connections_gradually() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let accept = tokio::spawn(async move {
            let mut held = Vec::new();
            while held.len() < 100 {
                held.push(listener.accept().await.expect("accept"));
            }
            held.len()
        });
        let target =
            Arc::new(Target::parse(&format!("http://127.0.0.1:{port}/a"), "a", b"k").expect("target"));
        let conns = open(&target, 100).await.expect("100 connections");
        assert_eq!((conns.len(), accept.await.expect("accepted")), (100, 100));
        // nothing listens on a port just released: refused, retried, then an error
        drop(conns);
        let free = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr");
        let t = std::time::Instant::now();
        let target = Arc::new(Target::parse(&format!("http://{free}/a"), "a", b"k").expect("target"));
        assert!(one(&target).await.is_err());
        assert!(t.elapsed() >= CONNECT_PATIENCE, "retried for {:?}", t.elapsed());
    }
}
