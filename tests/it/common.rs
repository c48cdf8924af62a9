//! Black-box test harness: starts the real `aztable` binary on port 0 with a temporary
//! RocksDB directory, and signs requests with SharedKey the way the SDKs do (an
//! independent implementation, so it checks the wire crate's `auth` rather than reusing it).
#![allow(dead_code)]

pub(crate) use aztable_model::error::ErrorCode;
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) const ACCOUNT: &str = "devstoreaccount1";
pub(crate) const KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// A running server process.
pub(crate) struct TestServer {
    child: Option<Child>,
    pub port: u16,
    pub data_dir: Option<std::path::PathBuf>,
    _tmp: Option<tempfile::TempDir>,
    /// The lines the server printed on stdout (its log), as they come.
    pub log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl TestServer {
    /// Starts a server on a fresh temporary RocksDB directory.
    pub(crate) fn start() -> TestServer {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("data");
        let mut s = TestServer::start_on(&dir, &[]);
        s._tmp = Some(tmp);
        s
    }

    /// Starts a server on `dir` with extra flags.
    pub(crate) fn start_on(dir: &std::path::Path, extra: &[&str]) -> TestServer {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_aztable"));
        cmd.args(["--tableHost", "127.0.0.1", "--tablePort", "0", "--location"])
            .arg(dir)
            .args(extra)
            .env("AZTABLE_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        TestServer::spawn(cmd, Some(dir.to_path_buf()))
    }

    /// Starts a server with arbitrary flags (e.g. `--inMemoryPersistence`).
    pub(crate) fn start_with(args: &[&str], envs: &[(&str, &str)]) -> TestServer {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_aztable"));
        cmd.args(["--tableHost", "127.0.0.1", "--tablePort", "0"])
            .args(args)
            .env("AZTABLE_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        TestServer::spawn(cmd, None)
    }

    /// Starts a server with exactly these flags (none added: give `--tablePort 0`).
    pub(crate) fn start_raw(args: &[&str]) -> TestServer {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_aztable"));
        cmd.args(args).env("AZTABLE_LOG", "info").stdout(Stdio::piped()).stderr(Stdio::inherit());
        TestServer::spawn(cmd, None)
    }

    /// Starts `program` (the server binary under another name, e.g. a link named
    /// `azurite`) with exactly these flags.
    pub(crate) fn start_program(program: &std::path::Path, args: &[&str]) -> TestServer {
        let mut cmd = Command::new(program);
        cmd.args(args).env("AZTABLE_LOG", "info").stdout(Stdio::piped()).stderr(Stdio::inherit());
        TestServer::spawn(cmd, None)
    }

    /// The log lines printed so far that contain `needle`.
    pub(crate) fn log_lines(&self, needle: &str) -> Vec<String> {
        let log = self.log.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        log.iter().filter(|l| l.contains(needle)).cloned().collect()
    }

    /// [`TestServer::log_lines`] once at least `n` lines match, or after 10 s: the log
    /// is read by a thread of its own, which may lag behind the responses.
    pub(crate) fn log_lines_at_least(&self, needle: &str, n: usize) -> Vec<String> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let lines = self.log_lines(needle);
            if lines.len() >= n || std::time::Instant::now() > deadline {
                return lines;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    fn spawn(mut cmd: Command, data_dir: Option<std::path::PathBuf>) -> TestServer {
        let mut child = cmd.spawn().expect("spawn aztable");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = std::sync::Arc::clone(&log);
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(mut kept) = kept.lock() {
                    kept.push(line.clone());
                }
                if !sent {
                    // "listening on http://…" or "https://…"
                    if let Some(i) = line.find("listening on http") {
                        let addr = &line[i..];
                        let port = addr.rsplit(':').next().and_then(|p| p.trim().parse::<u16>().ok());
                        if let Some(p) = port {
                            let _ = tx.send(p);
                            sent = true;
                        }
                    }
                }
            }
        });
        let port = rx.recv_timeout(Duration::from_secs(60)).expect("server did not report its port");
        TestServer { child: Some(child), port, data_dir, _tmp: None, log }
    }

    pub(crate) fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}/{}", self.port, ACCOUNT)
    }

    pub(crate) fn client(&self) -> Client {
        Client {
            http: reqwest::Client::new(),
            endpoint: self.endpoint(),
            account: ACCOUNT.into(),
            key: KEY.into(),
        }
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Sends SIGKILL (no clean shutdown).
    pub(crate) fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Sends SIGTERM and waits for a clean exit; returns whether it exited successfully.
    pub(crate) fn terminate(&mut self) -> bool {
        let Some(mut c) = self.child.take() else {
            return false;
        };
        let _ = Command::new("kill").args(["-TERM", &c.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(status)) = c.try_wait() {
                return status.success();
            }
            if Instant::now() > deadline {
                let _ = c.kill();
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A client that signs requests with SharedKey.
#[derive(Clone)]
pub(crate) struct Client {
    pub http: reqwest::Client,
    pub endpoint: String,
    pub account: String,
    pub key: String,
}

/// A response, read fully.
#[derive(Debug)]
pub(crate) struct Resp {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl Resp {
    /// Reads a whole response.
    pub(crate) async fn read(resp: reqwest::Response) -> Resp {
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp.text().await.unwrap();
        Resp { status, headers, body }
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
    /// The `TableName`s of a Query Tables answer, in order.
    pub(crate) fn table_names(&self) -> Vec<String> {
        let json = self.json();
        let tables = json["value"].as_array().unwrap_or_else(|| panic!("no table list: {}", self.body));
        tables.iter().map(|t| t["TableName"].as_str().expect("a TableName").to_owned()).collect()
    }

    pub(crate) fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).map(|v| v.to_str().unwrap().to_owned())
    }
    /// The `odata.error.code` of an error body.
    pub(crate) fn error_code(&self) -> String {
        self.json()["odata.error"]["code"].as_str().unwrap_or_default().to_owned()
    }

    /// The first line of the error message (`odata.error.message.value` in JSON, the
    /// `<message>` of an XML error): the service appends `RequestId:` and `Time:` lines.
    pub(crate) fn error_message(&self) -> String {
        let text = if self.body.trim_start().starts_with('<') {
            let start = self.body.find("<message").and_then(|i| self.body[i..].find('>').map(|j| i + j + 1));
            let end = self.body.find("</message>");
            match (start, end) {
                (Some(s), Some(e)) if s <= e => self.body[s..e].to_owned(),
                _ => panic!("an XML error without <message>: {}", self.body),
            }
        } else {
            self.json()["odata.error"]["message"]["value"].as_str().unwrap_or_default().to_owned()
        };
        text.lines().next().unwrap_or_default().to_owned()
    }

    /// Asserts one refusal: `status`, `code` both in `x-ms-error-code` and in the body, and
    /// the registry's documented message for `code` as the message's first line.
    #[track_caller]
    pub(crate) fn assert_refused(&self, status: u16, code: ErrorCode) {
        self.assert_refused_with(status, code, code.default_message());
    }

    /// [`Resp::assert_refused`] for a refusal whose message is specific to the case.
    #[track_caller]
    pub(crate) fn assert_refused_with(&self, status: u16, code: ErrorCode, message: &str) {
        let code = code.as_str();
        assert_eq!(self.status, status, "{code}: status; body: {}", self.body);
        assert_eq!(
            self.header("x-ms-error-code").as_deref(),
            Some(code),
            "x-ms-error-code; body: {}",
            self.body
        );
        let in_body = if self.body.trim_start().starts_with('<') {
            let rest = self.body.split("<code>").nth(1).unwrap_or_default();
            rest.split("</code>").next().unwrap_or_default().to_owned()
        } else {
            self.error_code()
        };
        assert_eq!(in_body, code, "the body's code: {}", self.body);
        assert_eq!(self.error_message(), message, "{code}: message; body: {}", self.body);
    }
}

pub(crate) fn now_rfc1123() -> String {
    chrono::Utc::now().format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// SharedKey string-to-sign for the Table service.
pub(crate) fn sign(key_b64: &str, string_to_sign: &str) -> String {
    let key = B64.decode(key_b64).unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(string_to_sign.as_bytes());
    B64.encode(mac.finalize().into_bytes())
}

impl Client {
    /// Sends a signed request. `path` is relative to the account endpoint and already
    /// percent-encoded (e.g. `/Tables` or `/t(PartitionKey='a',RowKey='b')`).
    pub(crate) async fn send(
        &self,
        method: &str,
        path_and_query: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Resp {
        self.try_send(method, path_and_query, headers, body).await.expect("request failed")
    }

    /// [`Client::send`], returning a failed exchange (refused connection, connection
    /// closed before the answer) as an error instead of panicking.
    pub(crate) async fn try_send(
        &self,
        method: &str,
        path_and_query: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Result<Resp, reqwest::Error> {
        let url = format!("{}{}", self.endpoint, path_and_query);
        let parsed = reqwest::Url::parse(&url).unwrap();
        let date = now_rfc1123();
        let content_type = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.to_string())
            .unwrap_or_else(|| if body.is_some() { "application/json".into() } else { String::new() });
        let mut resource = format!("/{}{}", self.account, parsed.path());
        if let Some(comp) = parsed.query_pairs().find(|(k, _)| k == "comp") {
            resource.push_str(&format!("?comp={}", comp.1));
        }
        let sts = format!("{method}\n\n{content_type}\n{date}\n{resource}");
        let auth = format!("SharedKey {}:{}", self.account, sign(&self.key, &sts));
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut req = self.http.request(m, parsed).header("x-ms-date", &date).header("Authorization", auth);
        if !content_type.is_empty() {
            req = req.header("Content-Type", &content_type);
        }
        let defaults = [
            ("Accept", "application/json;odata=minimalmetadata"),
            ("x-ms-version", "2019-02-02"),
            ("DataServiceVersion", "3.0;NetFx"),
        ];
        for (k, v) in defaults {
            if !headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(k)) {
                req = req.header(k, v);
            }
        }
        for (k, v) in headers {
            if !k.eq_ignore_ascii_case("content-type") {
                req = req.header(*k, *v);
            }
        }
        if let Some(b) = body {
            req = req.body(b.to_owned());
        }
        let resp = req.send().await?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp.text().await?;
        Ok(Resp { status, headers, body })
    }

    pub(crate) async fn create_table(&self, name: &str) -> Resp {
        self.send("POST", "/Tables", &[], Some(&format!(r#"{{"TableName":"{name}"}}"#))).await
    }

    pub(crate) async fn insert(&self, table: &str, entity: serde_json::Value) -> Resp {
        self.send("POST", &format!("/{table}"), &[], Some(&entity.to_string())).await
    }

    pub(crate) async fn get(&self, table: &str, pk: &str, rk: &str) -> Resp {
        self.send("GET", &entity_path(table, pk, rk), &[], None).await
    }
}

/// `/table(PartitionKey='..',RowKey='..')` with quotes doubled and percent-encoded.
pub(crate) fn entity_path(table: &str, pk: &str, rk: &str) -> String {
    let enc = |s: &str| {
        percent_encoding::utf8_percent_encode(&s.replace('\'', "''"), percent_encoding::NON_ALPHANUMERIC)
            .to_string()
    };
    format!("/{table}(PartitionKey='{}',RowKey='{}')", enc(pk), enc(rk))
}

pub(crate) fn unique_table(prefix: &str) -> String {
    format!("{prefix}{}", uuid::Uuid::new_v4().simple()).chars().take(40).collect()
}

/// A change set of one insert into `table` at `endpoint` (`http://…/<account>`), its body
/// declared as `content_type`: the (Content-Type, body) of the `$batch` request.
pub(crate) fn one_insert_batch(
    endpoint: &str,
    table: &str,
    content_type: &str,
    entity: &str,
) -> (String, String) {
    let (b, cs) = ("batch_one", "changeset_one");
    let body = format!(
        "--{b}\r\nContent-Type: multipart/mixed; boundary={cs}\r\n\r\n--{cs}\r\n\
         Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
         POST {endpoint}/{table} HTTP/1.1\r\nContent-Type: {content_type}\r\n\r\n\
         {entity}\r\n--{cs}--\r\n--{b}--\r\n"
    );
    (format!("multipart/mixed; boundary={b}"), body)
}

/// Starts the server binary on a free loopback port with `args`, logging at info, its
/// stdout and stderr piped to the test.
pub(crate) fn spawn_piped<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_aztable"))
        .args(["--tableHost", "127.0.0.1", "--tablePort", "0"])
        .args(args)
        .env("AZTABLE_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn aztable")
}

/// Runs the server binary with `args` until it exits by itself (at most 20 s); returns
/// whether it succeeded, and its stdout and stderr.
pub(crate) fn run_to_exit(args: &[&std::ffi::OsStr]) -> (bool, String, String) {
    let mut child = spawn_piped(args);
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}
