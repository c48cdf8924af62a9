//! Black-box: the binary started the way Testcontainers' Azurite modules start Azurite
//! (the command `azurite --blobHost 0.0.0.0 --queueHost 0.0.0.0 --tableHost 0.0.0.0`,
//! or the entrypoint `azurite`), waited for the way they wait (three listening ports,
//! three log lines); the Blob and Queue ports' error; `healthcheck`; `-v`; the notices
//! of ignored flags; the `--debug` file.

use crate::common::*;
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_aztable");

/// The port of the line "Azurite <service> service is successfully listening at
/// http://<ip>:<port>", word for word as Azurite prints it.
fn listening_port(server: &TestServer, service: &str) -> u16 {
    let prefix = format!("Azurite {service} service is successfully listening at http://");
    let lines = server.log_lines(&prefix);
    assert_eq!(lines.len(), 1, "one {service} line: {lines:?}");
    assert!(lines[0].starts_with(&prefix), "the line as Azurite prints it, unprefixed: {:?}", lines[0]);
    lines[0].rsplit(':').next().and_then(|p| p.parse().ok()).expect("port")
}

/// The log lines containing `needle`, once there is one (the log is read by a thread,
/// so a line printed before an answer may arrive after it); none after 10 s.
fn logged(server: &TestServer, needle: &str) -> Vec<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let lines = server.log_lines(needle);
        if !lines.is_empty() || std::time::Instant::now() > deadline {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn listens(port: u16) -> bool {
    TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(2)).is_ok()
}

/// A directory holding a link named `azurite` to the server binary: what .NET's and
/// Node's modules run as the entrypoint.
fn azurite_link() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let link = dir.path().join("azurite");
    std::os::unix::fs::symlink(BIN, &link).expect("symlink");
    (dir, link)
}

fn healthcheck(port: u16) -> (i32, String) {
    let out = Command::new(BIN).args(["healthcheck", "--port", &port.to_string()]).output().expect("run");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[tokio::test]
async fn the_java_command_line_on_the_default_ports() {
    // Testcontainers Java: `azurite --blobHost 0.0.0.0 --queueHost 0.0.0.0 --tableHost
    // 0.0.0.0` as the container's command, after the image's entrypoint `aztable`. Azurite's
    // own ports, so only when they are free on this machine.
    let busy: Vec<u16> = [10000, 10001, 10002].into_iter().filter(|&p| listens(p)).collect();
    if !busy.is_empty() {
        eprintln!("the_java_command_line_on_the_default_ports: ports {busy:?} in use here; skipped");
        return;
    }
    let server = TestServer::start_raw(&[
        "azurite",
        "--blobHost",
        "0.0.0.0",
        "--queueHost",
        "0.0.0.0",
        "--tableHost",
        "0.0.0.0",
        "--inMemoryPersistence",
    ]);
    assert_eq!(server.port, 10002);
    for (service, port) in [("Blob", 10000), ("Queue", 10001), ("Table", 10002)] {
        assert_eq!(listening_port(&server, service), port);
        assert!(listens(port), "{service} port {port} listens");
    }
    let line = &server.log_lines("Azurite Blob service")[0];
    assert_eq!(line, "Azurite Blob service is successfully listening at http://0.0.0.0:10000");
    // a table request goes through
    assert_eq!(server.client().create_table(&unique_table("java")).await.status, 201);
}

#[tokio::test]
async fn the_entrypoint_azurite_opens_three_ports_and_prints_azurite_lines() {
    // .NET and Node: the entrypoint `azurite` with their flags (ports moved to free ones
    // here, so tests run side by side)
    let (_dir, link) = azurite_link();
    let server = TestServer::start_program(
        &link,
        &[
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            "0",
            "--queueHost",
            "127.0.0.1",
            "--queuePort",
            "0",
            "--tableHost",
            "127.0.0.1",
            "--tablePort",
            "0",
            "--inMemoryPersistence",
            "--skipApiVersionCheck",
            "--loose",
        ],
    );
    let blob = listening_port(&server, "Blob");
    let queue = listening_port(&server, "Queue");
    assert_eq!(listening_port(&server, "Table"), server.port);
    for port in [blob, queue, server.port] {
        assert!(listens(port), "port {port} listens");
    }
    // in Azurite's order: Blob, Queue, Table
    let log = server.log.lock().unwrap().clone();
    let at = |s: &str| log.iter().position(|l| l.starts_with(&format!("Azurite {s} service"))).unwrap();
    assert!(at("Blob") < at("Queue") && at("Queue") < at("Table"), "{log:?}");
    // the version and the connection string of the development account
    assert_eq!(server.log_lines("aztable 0.1.0").len(), 1);
    let expected = format!("TableEndpoint=http://127.0.0.1:{}/devstoreaccount1;", server.port);
    assert_eq!(server.log_lines(&expected).len(), 1, "{log:?}");

    // the Blob and Queue ports answer every request with the Table-only error
    let http = reqwest::Client::new();
    for (service, port) in [("Blob", blob), ("Queue", queue)] {
        let resp = http
            .put(format!("http://127.0.0.1:{port}/devstoreaccount1/container?restype=container"))
            .header("x-ms-version", "2021-08-06")
            .send()
            .await
            .expect("send");
        assert_eq!(resp.status(), 501);
        assert_eq!(resp.headers()["x-ms-error-code"], "NotImplemented");
        assert_eq!(resp.headers()["content-type"], "application/xml");
        let body = resp.text().await.expect("body");
        assert!(body.contains("<Error><Code>NotImplemented</Code><Message>"), "{body}");
        assert!(body.contains(&format!("serves the Table service only: the {service} service")), "{body}");
    }
    // ... and log it in the access log, with the client's address
    let lines = logged(&server, "Blob port: PUT /devstoreaccount1/container");
    assert_eq!(lines.len(), 1, "{log:?}");
    assert!(lines[0].contains("client=127.0.0.1:") && lines[0].contains("status=501"), "{lines:?}");
}

#[tokio::test]
async fn healthcheck_exits_0_against_a_live_server_and_1_against_a_dead_port() {
    let server = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    let (code, out) = healthcheck(server.port);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("healthy:"), "{out}");
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let (code, out) = healthcheck(dead);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("unhealthy:"), "{out}");
}

#[test]
fn dash_v_prints_the_version() {
    for args in [&["-v"][..], &["--version"], &["azurite", "-v"], &["azurite-table", "--version"]] {
        let out = Command::new(BIN).args(args).output().expect("run");
        assert!(out.status.success(), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("aztable {}\n", env!("CARGO_PKG_VERSION")));
    }
}

#[test]
fn ignored_flags_give_one_notice_each() {
    let server = TestServer::start_raw(&[
        "azurite-table",
        "--tablePort",
        "0",
        "--inMemoryPersistence",
        "--disableTelemetry",
        "--extentMemoryLimit",
        "50",
        "--blobKeepAliveTimeout",
        "5",
        "--queueKeepAliveTimeout",
        "5",
    ]);
    for flag in
        ["--disableTelemetry", "--extentMemoryLimit", "--blobKeepAliveTimeout", "--queueKeepAliveTimeout"]
    {
        let lines = server.log_lines(&format!("notice: {flag} ignored"));
        assert_eq!(lines.len(), 1, "{flag}: {lines:?}");
    }
    assert_eq!(server.log_lines("notice:").len(), 4);
    // `azurite-table` opens the table port only
    assert!(server.log_lines("Azurite Blob service").is_empty());
    assert_eq!(server.log_lines("Azurite Table service is successfully listening").len(), 1);
}

#[tokio::test]
async fn the_debug_file_has_headers_without_secrets_and_the_string_to_sign() {
    let dir = tempfile::tempdir().expect("tempdir");
    let debug = dir.path().join("logs/debug.log");
    let debug_arg = debug.to_string_lossy().into_owned();
    let server = TestServer::start_with(&["--inMemoryPersistence", "--debug", &debug_arg], &[]);
    let table = unique_table("dbg");
    assert_eq!(server.client().create_table(&table).await.status, 201);
    // a wrong key: 403, and the string to sign the server computed goes to the file
    let mut wrong = server.client();
    wrong.key = "d3Jvbmcga2V5".into();
    let resp = wrong.create_table(&unique_table("dbg")).await;
    resp.assert_refused(403, ErrorCode::AuthenticationFailed);
    // a SAS signature in the query
    let sas =
        reqwest::get(format!("{}/Tables?sv=2019-02-02&sig=c2VjcmV0", server.endpoint())).await.expect("send");
    Resp::read(sas).await.assert_refused(403, ErrorCode::AuthenticationFailed);
    let text = std::fs::read_to_string(&debug).expect("debug file");
    assert!(text.contains("authorization: SharedKey devstoreaccount1:REDACTED"), "{text}");
    assert!(text.contains("x-ms-date: "), "{text}");
    assert!(text.contains("Server used following string to sign: 'POST"), "{text}");
    assert!(text.contains("handler_us="), "timings: {text}");
    assert!(text.contains("sig=REDACTED") && !text.contains("c2VjcmV0"), "{text}");
    // the access line: query (secret hidden), client, error code
    let access = logged(&server, "GET /devstoreaccount1/Tables?sv=2019-02-02&sig=REDACTED");
    assert_eq!(access.len(), 1, "{:?}", server.log.lock().unwrap());
    assert!(
        access[0].contains("client=127.0.0.1:") && access[0].contains("error_code=\"AuthenticationFailed\"")
    );
    // no colour codes when the output is not a terminal
    assert!(server.log.lock().unwrap().iter().all(|l| !l.contains('\u{1b}')));
}

#[tokio::test]
async fn plain_http_on_the_https_port_is_answered_and_logged() {
    let fixture = |name: &str| format!("{}/tests/fixtures/tls/{name}", env!("CARGO_MANIFEST_DIR"));
    let (cert, key) = (fixture("cert.pem"), fixture("key.pem"));
    let server = TestServer::start_with(&["--inMemoryPersistence", "--cert", &cert, "--key", &key], &[]);
    let resp = reqwest::get(format!("http://127.0.0.1:{}/devstoreaccount1/Tables", server.port))
        .await
        .expect("send");
    assert_eq!(resp.status(), 400);
    assert!(resp.text().await.expect("body").contains("use https://"));
    // the log says so, once
    assert_eq!(logged(&server, "plain HTTP on the HTTPS port").len(), 1);
    // and the healthcheck counts the answer as alive
    assert_eq!(healthcheck(server.port).0, 0);
}

/// A reader of stdout that went away (`aztable | head -3`, a wait strategy that stopped
/// reading) leaves the server serving: its Azurite lines are dropped, not a panic.
#[test]
fn a_closed_stdout_does_not_stop_the_server() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let mut child = Command::new(BIN)
        .args(["--inMemoryPersistence", "--silent", "--tablePort", &port.to_string()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !listens(port) {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut err = String::new();
            let _ = std::io::Read::read_to_string(child.stderr.as_mut().expect("stderr"), &mut err);
            panic!("the server exited ({status}) with its stdout closed: {err}");
        }
        assert!(std::time::Instant::now() < deadline, "the server never listened");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (code, out) = healthcheck(port);
    assert_eq!(code, 0, "{out}");
    assert!(child.try_wait().expect("wait").is_none(), "the server exited after it listened");
    let _ = child.kill();
    let _ = child.wait();
}

/// Azurite's single-service commands `azurite-blob` and `azurite-queue` (testcontainers-go
/// starts them when only Blob or only Queue is enabled): refused with exit 1 and a
/// message that says how to ask for the Table service, under either name form, whatever
/// the flags; nothing listens.
#[test]
fn azurite_blob_and_azurite_queue_say_the_table_service_is_served_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (command, service) in [("azurite-blob", "Blob"), ("azurite-queue", "Queue")] {
        let link = dir.path().join(command);
        std::os::unix::fs::symlink(BIN, &link).expect("symlink");
        let flags = ["--blobHost", "0.0.0.0", "--queuePort", "10001", "--notAzuriteFlag", "-v"];
        let as_link = Command::new(&link).args(flags).output().expect("run");
        let as_subcommand = Command::new(BIN).arg(command).args(flags).output().expect("run");
        for out in [as_link, as_subcommand] {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{command}: {stderr}");
            assert!(out.stdout.is_empty(), "{command}: nothing on stdout");
            assert!(stderr.contains(&format!("`{command}`")), "{stderr}");
            assert!(stderr.contains(&format!("Azurite's {service} service alone")), "{stderr}");
            assert!(stderr.contains("serves the Table service only"), "{stderr}");
            assert!(stderr.contains("azurite.WithEnabledServices(azurite.TableService)"), "{stderr}");
            assert!(!stderr.contains("successfully listening"), "{stderr}");
        }
    }
}
