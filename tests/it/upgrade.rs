//! Black-box: data directories written by earlier builds (`tests/fixtures/datadir/`) open
//! in the current build and read back exactly as the earlier build served them, on the
//! first start (which upgrades the layout) and on the next.

use crate::common::*;
use std::path::Path;

const FULL: (&str, &str) = ("Accept", "application/json;odata=fullmetadata");

/// Copies a fixture directory (flat: RocksDB keeps no subdirectories here).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// What the server answers now, in the shape `write_fixture.py` recorded.
async fn observed(server: &TestServer) -> serde_json::Value {
    let c = server.client();
    let rows = |v: serde_json::Value| v["value"].clone();
    let upgrade = rows(c.send("GET", "/upgrade()", &[FULL], None).await.json());
    let second = rows(c.send("GET", "/Second()", &[FULL], None).await.json());
    let tables = c.send("GET", "/Tables", &[], None).await.json();
    let mut names: Vec<String> = tables["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["TableName"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    let xml = ("Accept", "application/xml");
    let acl = c.send("GET", "/upgrade?comp=acl", &[xml], None).await.body;
    let properties = c.send("GET", "/?restype=service&comp=properties", &[xml], None).await.body;
    serde_json::json!({"upgrade": upgrade, "Second": second, "Tables": names, "acl": acl, "properties": properties})
}

fn expected(fixture: &str, endpoint: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(Path::new(fixture).join("expected.json")).unwrap();
    serde_json::from_str(&text.replace("{base}", endpoint)).unwrap()
}

#[tokio::test]
async fn a_directory_written_before_heaps_moved_reads_back_as_it_was_served() {
    reads_back_as_it_was_served(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/datadir/fdb6dd5")).await;
}

/// The one-family layout: heaps in each table's key range, all in RocksDB's default
/// column family (every directory created before heaps had a column family of their own).
#[tokio::test]
async fn a_directory_written_before_heaps_had_their_own_column_family_reads_back_as_it_was_served() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/datadir/5351c74");
    let options = |dir: &Path| -> String {
        let mut text = String::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("OPTIONS-")) {
                text += &std::fs::read_to_string(path).unwrap();
            }
        }
        text
    };
    let before = options(&Path::new(fixture).join("data"));
    assert!(before.contains("[CFOptions \"default\"]"), "the fixture's options name its one family");
    assert!(!before.contains("[CFOptions \"heaps\"]"), "the fixture is of the one-family layout");
    reads_back_as_it_was_served(fixture).await;
}

/// Starts the current build on a copy of `fixture`'s directory and checks it answers what
/// the earlier build recorded, takes a write, and answers the same after a restart.
async fn reads_back_as_it_was_served(fixture: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    copy_dir(&Path::new(fixture).join("data"), &dir);

    let mut server = TestServer::start_on(&dir, &[]);
    let want = expected(fixture, &server.endpoint());
    assert_eq!(want["upgrade"].as_array().map(Vec::len), Some(45), "the fixture's own record");
    let got = observed(&server).await;
    for part in ["upgrade", "Second", "Tables", "acl", "properties"] {
        assert_eq!(got[part], want[part], "{part} differs from what the earlier build served");
    }
    // the upgraded directory takes writes and opens again, unchanged
    let c = server.client();
    let r = c
        .insert(
            "upgrade",
            serde_json::json!({"PartitionKey": "alpha", "RowKey": "new", "Long": "y".repeat(100)}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(server.terminate(), "a clean stop");
    let server = TestServer::start_on(&dir, &[]);
    let got = observed(&server).await;
    let want = expected(fixture, &server.endpoint());
    let mut upgrade = got["upgrade"].as_array().unwrap().clone();
    let added = upgrade.iter().position(|e| e["RowKey"] == "new").expect("the new entity");
    assert_eq!(upgrade.remove(added)["Long"], "y".repeat(100));
    assert_eq!(serde_json::Value::Array(upgrade), want["upgrade"]);
    assert_eq!(got["Second"], want["Second"]);
}
