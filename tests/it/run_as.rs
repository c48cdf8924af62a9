//! Black-box: `AZTABLE_RUN_AS`. Started as root, the server reads a TLS key only root
//! may read (a root-owned file of mode 0600, as Testcontainers for Java copies it into
//! the container), gives up root for the user named, and only then opens the data
//! directory and serves. Started as another user, the variable changes nothing.

use crate::common::*;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_aztable");
/// `nobody` on Debian: a user that owns nothing here.
const NOBODY: u32 = 65534;

fn fixture(name: &str) -> std::path::PathBuf {
    format!("{}/tests/fixtures/tls/{name}", env!("CARGO_MANIFEST_DIR")).into()
}

/// The `Uid:`, `Gid:` and `Groups:` lines of a process's status.
fn ids(pid: u32) -> (String, String, String) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let line = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    (line("Uid:"), line("Gid:"), line("Groups:"))
}

fn running_as_root() -> bool {
    ids(std::process::id()).0.split(' ').nth(1) == Some("0")
}

/// The certificate and key copied into a directory as files of mode 0600 (owned by
/// whoever runs the tests: root, in a container's case).
fn private_copies(dir: &std::path::Path) -> (String, String) {
    let mut paths = Vec::new();
    for name in ["cert.pem", "key.pem"] {
        let to = dir.join(name);
        std::fs::copy(fixture(name), &to).expect("copy");
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        paths.push(to.to_string_lossy().into_owned());
    }
    (paths[0].clone(), paths[1].clone())
}

fn https_client(port: u16) -> Client {
    let ca = reqwest::Certificate::from_pem(&std::fs::read(fixture("cert.pem")).expect("cert")).expect("pem");
    Client {
        http: reqwest::Client::builder().add_root_certificate(ca).build().expect("client"),
        endpoint: format!("https://127.0.0.1:{port}/{ACCOUNT}"),
        account: ACCOUNT.into(),
        key: KEY.into(),
    }
}

#[tokio::test]
async fn a_root_only_key_is_read_and_then_root_is_given_up() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (cert, key) = private_copies(tmp.path());
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).expect("mkdir");
    let me = ids(std::process::id());
    let root = running_as_root();
    if root {
        // the data directory belongs to the user the server becomes, as /data in the image
        std::os::unix::fs::chown(&data, Some(NOBODY), Some(NOBODY)).expect("chown");
    }
    let run_as = format!("{NOBODY}:{NOBODY}");
    let location = data.to_string_lossy().into_owned();
    let server = TestServer::start_with(
        &["--location", &location, "--cert", &cert, "--key", &key],
        &[("AZTABLE_RUN_AS", &run_as)],
    );
    let c = https_client(server.port);
    let table = unique_table("runas");
    let r = c.create_table(&table).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let (uid, gid, groups) = ids(server.pid());
    if root {
        assert_eq!(uid, "65534 65534 65534 65534", "real, effective, saved and file-system user ids");
        assert_eq!(gid, "65534 65534 65534 65534");
        assert_eq!(groups, "65534", "no supplementary group of root's is kept");
        assert_eq!(
            server.log_lines("running as uid 65534 gid 65534 (AZTABLE_RUN_AS; started as root)").len(),
            1
        );
        // what the server wrote belongs to the user it became
        let owners: Vec<u32> = std::fs::read_dir(&data)
            .expect("read data")
            .map(|e| std::os::unix::fs::MetadataExt::uid(&e.expect("entry").metadata().expect("meta")))
            .collect();
        assert!(!owners.is_empty() && owners.iter().all(|&o| o == NOBODY), "{owners:?}");
    } else {
        // not root: nothing to give up, the server runs as the tests do
        assert_eq!((uid, gid), (me.0, me.1));
        assert_eq!(server.log_lines("not started as root: AZTABLE_RUN_AS unused").len(), 1);
    }
}

#[test]
fn root_is_given_up_before_the_data_directory_is_opened() {
    if !running_as_root() {
        // the order can only be seen from root; as another user there is no drop
        return;
    }
    // a directory only root may enter: the server, no longer root, cannot open it
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).expect("mkdir");
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let out = Command::new(BIN)
        .args(["--tableHost", "127.0.0.1", "--tablePort", "0", "--location"])
        .arg(&data)
        .env("AZTABLE_RUN_AS", NOBODY.to_string())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot open the data directory") && stderr.contains("ermission denied"),
        "{stderr}"
    );
}

#[test]
fn bad_values_are_refused_at_start() {
    for (value, says) in [("aztable", "must be a number"), ("0", "leave it empty to stay root")] {
        let out = Command::new(BIN)
            .args(["--tableHost", "127.0.0.1", "--tablePort", "0", "--inMemoryPersistence"])
            .env("AZTABLE_RUN_AS", value)
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{value}: {stderr}");
        assert!(stderr.contains(says), "{value}: {stderr}");
    }
}
