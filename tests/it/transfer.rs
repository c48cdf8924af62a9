//! `aztable export` / `aztable import`: JSON lines to and from a running server and a
//! stopped server's data directory, and the migration of Azurite's table database.

use crate::common::{TestServer, ACCOUNT};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};

fn aztable(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_aztable"))
        .args(args)
        .env_remove("AZURITE_ACCOUNTS")
        .output()
        .expect("run aztable");
    out
}

fn ok(args: &[&str]) -> Output {
    let out = aztable(args);
    assert!(
        out.status.success(),
        "aztable {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

fn lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("read export");
    text.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

/// Every Edm type, edge values included.
fn typed_entity(pk: &str, rk: &str) -> Value {
    json!({
        "PartitionKey": pk, "RowKey": rk,
        "S": "<script>alert(\"x\")</script> \u{e9}\u{1F600} \n",
        "Empty": "",
        "I32": -2147483648i64,
        "I64Max@odata.type": "Edm.Int64", "I64Max": "9223372036854775807",
        "I64Min@odata.type": "Edm.Int64", "I64Min": "-9223372036854775808",
        "D": 1.7976931348623157e308,
        "DTiny": 5e-324,
        "DWhole@odata.type": "Edm.Double", "DWhole": 5.0,
        "DNaN@odata.type": "Edm.Double", "DNaN": "NaN",
        "DInf@odata.type": "Edm.Double", "DInf": "Infinity",
        "DNegInf@odata.type": "Edm.Double", "DNegInf": "-Infinity",
        "B": false,
        "DtMin@odata.type": "Edm.DateTime", "DtMin": "1601-01-01T00:00:00Z",
        "DtMax@odata.type": "Edm.DateTime", "DtMax": "9999-12-31T23:59:59.9999999Z",
        "G@odata.type": "Edm.Guid", "G": "c9da6455-213d-42c9-9a79-3e9149a57833",
        "Bin@odata.type": "Edm.Binary", "Bin": "AAEC/w==",
    })
}

/// Fills a server: a table of typed entities and a table of 2,500 entities over five
/// partitions (more than two pages), loaded with `aztable import --url`.
async fn fill(server: &TestServer, tmp: &Path) {
    let client = server.client();
    assert_eq!(client.create_table("Typed").await.status, 201);
    for (pk, rk) in [("p", "1"), ("p", "2"), ("q'uote", "r ow;\u{e9}")] {
        let r = client.insert("Typed", typed_entity(pk, rk)).await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let mut bulk = String::from("{\"TableName\":\"bulk\"}\n");
    for i in 0..2500 {
        bulk.push_str(&format!(
            "{{\"PartitionKey\":\"part{}\",\"RowKey\":\"{i:05}\",\"N\":{i},\"L@odata.type\":\"Edm.Int64\",\"L\":\"{}\"}}\n",
            i % 5,
            i64::from(i) << 40
        ));
    }
    let file = tmp.join("bulk.jsonl");
    std::fs::write(&file, bulk).expect("write bulk");
    let out = ok(&["import", "--url", &server.endpoint(), "-i", file.to_str().expect("path")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("imported 1 table, 2500 entities"), "{err}");
}

#[tokio::test]
async fn export_import_round_trip_through_data_directories() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let mut server = TestServer::start_on(&dir, &[]);
    fill(&server, tmp.path()).await;
    assert!(server.terminate(), "clean stop");

    let (a, b, dir2) = (tmp.path().join("a.jsonl"), tmp.path().join("b.jsonl"), tmp.path().join("data2"));
    let s = |p: &Path| p.to_str().expect("path").to_owned();
    let out = ok(&["export", "--location", &s(&dir), "-o", &s(&a)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("exported 2 tables, 2503 entities in"), "{err}");
    ok(&["import", "--location", &s(&dir2), "-i", &s(&a)]);
    ok(&["export", "--location", &s(&dir2), "-o", &s(&b)]);
    let (first, second) = (std::fs::read(&a).expect("a"), std::fs::read(&b).expect("b"));
    assert_eq!(first, second, "export → import → export gives the same bytes, Timestamps included");

    // the typing is in the lines
    let all = lines(&a);
    assert_eq!(all[0], json!({"TableName": "bulk"}));
    let typed = all.iter().find(|l| l["RowKey"] == "r ow;\u{e9}").expect("the quoted key");
    assert_eq!(typed["PartitionKey"], "q'uote");
    assert_eq!(typed["I64Min@odata.type"], "Edm.Int64");
    assert_eq!(typed["I64Min"], "-9223372036854775808");
    assert_eq!(typed["DNaN"], "NaN");
    assert_eq!(typed["DWhole"].to_string(), "5.0");
    assert_eq!(typed["DtMax"], "9999-12-31T23:59:59.9999999Z");
    assert_eq!(typed["G@odata.type"], "Edm.Guid");
    assert_eq!(typed["Bin"], "AAEC/w==");
    assert_eq!(typed["Timestamp@odata.type"], "Edm.DateTime");

    // one table only, to stdout; the imported directory serves what was exported
    let out = ok(&["export", "--location", &s(&dir2), "--table", "TYPED"]);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(text.starts_with("{\"TableName\":\"Typed\"}\n"), "{text}");
    let server2 = TestServer::start_on(&dir2, &[]);
    let r = server2.client().get("Typed", "q'uote", "r ow;\u{e9}").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["I64Max"], "9223372036854775807");
    let original = typed["Timestamp"].as_str().expect("timestamp");
    assert_eq!(r.json()["Timestamp"], original, "the Timestamp (and ETag) survive a directory import");
}

#[tokio::test]
async fn export_and_import_between_running_servers() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let from = TestServer::start();
    fill(&from, tmp.path()).await;
    let to = TestServer::start();
    let (a, b) = (tmp.path().join("a.jsonl"), tmp.path().join("b.jsonl"));
    let s = |p: &Path| p.to_str().expect("path").to_owned();
    ok(&["export", "--url", &from.endpoint(), "-o", &s(&a)]);
    let out = ok(&["import", "--url", &to.endpoint(), "-i", &s(&a)]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("imported 2 tables, 2503 entities"));
    ok(&["export", "--url", &to.endpoint(), "-o", &s(&b)]);
    // the server stamps its own Timestamps; everything else is equal
    let strip = |mut v: Vec<Value>| {
        for l in &mut v {
            if let Some(o) = l.as_object_mut() {
                o.remove("Timestamp");
            }
        }
        v
    };
    let (first, second) = (strip(lines(&a)), strip(lines(&b)));
    assert_eq!(first.len(), 2 + 2503);
    assert_eq!(first, second);

    // a wrong key is refused, and named
    let out = aztable(&["export", "--url", &from.endpoint(), "--key", "d3Jvbmc="]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("403"), "{}", String::from_utf8_lossy(&out.stderr));
    // a table that does not exist
    let out = aztable(&["export", "--url", &from.endpoint(), "--table", "nosuch"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no table 'nosuch'"));
}

#[tokio::test]
async fn azurite_database_imports_with_its_types() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/azurite");
    let out = ok(&["import", "--azurite", fixture, "--location", dir.to_str().expect("path")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("imported 2 tables, 2 entities"), "only devstoreaccount1's tables: {err}");
    let a = tmp.path().join("a.jsonl");
    ok(&["export", "--location", dir.to_str().expect("path"), "-o", a.to_str().expect("path")]);
    let all = lines(&a);
    assert_eq!(all[0], json!({"TableName": "emptyone"}));
    assert_eq!(all[1], json!({"TableName": "Migrated"}));
    assert_eq!(all.len(), 4);
    let (p0, p1) = (&all[2], &all[3]);
    assert_eq!((p0["PartitionKey"].as_str(), p1["PartitionKey"].as_str()), (Some("p0"), Some("p1")));
    assert_eq!(p0["OldGuid"], "c9da6455-213d-42c9-9a79-3e9149a57833");
    assert_eq!(p0["Empty"], "");
    assert_eq!(p1["Timestamp"], "2023-11-14T22:13:20.1234567Z", "lastModifiedTime kept");
    assert_eq!(p1["Name"], "<script>alert('x')</script>");
    assert_eq!(p1["Count"], 42);
    assert_eq!(p1["Big@odata.type"], "Edm.Int64");
    assert_eq!(p1["Big"], "9223372036854775807");
    assert_eq!(p1["Ratio"].to_string(), "0.5");
    assert_eq!(p1["Whole"].to_string(), "5.0", "a whole Double stays a Double");
    assert_eq!(p1["Missing@odata.type"], "Edm.Double");
    assert_eq!(p1["Missing"], "NaN");
    assert_eq!(p1["When"], "2020-02-29T12:00:00Z");
    assert_eq!(p1["Id@odata.type"], "Edm.Guid");
    assert_eq!(p1["Id"], "c9da6455-213d-42c9-9a79-3e9149a57833", "base64-stored GUID decoded");
    assert_eq!(p1["Blob"], "AAEC/w==");
    assert_eq!(p1["Flag"], true);

    // into a running server too, under another name
    let server = TestServer::start();
    let file = format!("{fixture}/__azurite_db_table__.json");
    let out = aztable(&["import", "--azurite", &file, "--url", &server.endpoint(), "--table", "x"]);
    assert!(!out.status.success(), "two tables cannot go into one");
    let out = ok(&["import", "--azurite", &file, "--url", &server.endpoint()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("imported 2 tables, 2 entities"));
    let r = server.client().get("Migrated", "p1", "r1").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["Id"], "c9da6455-213d-42c9-9a79-3e9149a57833");
    // another account needs its key
    let out =
        aztable(&["import", "--azurite", &file, "--url", &server.endpoint(), "--account", "otheraccount"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no key for account 'otheraccount'"));
}

#[tokio::test]
async fn export_to_azurite_reads_back_as_the_same_entities() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let mut server = TestServer::start_on(&dir, &[]);
    fill(&server, tmp.path()).await;
    assert!(server.terminate(), "clean stop");

    let s = |p: &Path| p.to_str().expect("path").to_owned();
    let (az, dir2) = (tmp.path().join("azurite"), tmp.path().join("data2"));
    let (a, b) = (tmp.path().join("a.jsonl"), tmp.path().join("b.jsonl"));
    let out = ok(&["export", "--location", &s(&dir), "--azurite", &s(&az)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("exported 2 tables, 2503 entities in"), "{err}");
    assert!(az.join("__azurite_db_table__.json").is_file());
    // Azurite's database, read back by the importer, holds the same typed entities
    // and Timestamps: the JSON lines of both directories are the same bytes
    ok(&["import", "--azurite", &s(&az), "--location", &s(&dir2)]);
    ok(&["export", "--location", &s(&dir), "-o", &s(&a)]);
    ok(&["export", "--location", &s(&dir2), "-o", &s(&b)]);
    assert_eq!(std::fs::read(&a).expect("a"), std::fs::read(&b).expect("b"));

    // an existing database is not overwritten; a file name and one table work
    let out = aztable(&["export", "--location", &s(&dir), "--azurite", &s(&az)]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("exists"), "{out:?}");
    let one = tmp.path().join("one").join("__azurite_db_table__.json");
    ok(&["export", "--location", &s(&dir), "--table", "Typed", "--azurite", &s(&one)]);
    let out = ok(&["import", "--azurite", &s(&one), "--location", &s(&tmp.path().join("data3"))]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("imported 1 table, 3 entities"));
    let out = aztable(&["export", "--location", &s(&dir), "--azurite", &s(&az), "-o", &s(&a)]);
    assert!(!out.status.success(), "--azurite and --out are one or the other");
}

#[tokio::test]
async fn import_refuses_bad_lines_with_their_number() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let file = tmp.path().join("bad.jsonl");
    let d = dir.to_str().expect("path");
    let f = file.to_str().expect("path");
    std::fs::write(&file, "{\"TableName\":\"tone\"}\n{\"PartitionKey\":\"p\",\"RowKey\":\"r\",\"X@odata.type\":\"Edm.Int64\",\"X\":1}\n").expect("write");
    let out = aztable(&["import", "--location", d, "-i", f]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 2"), "{err}");
    // entities without a table line need --table
    std::fs::write(&file, "{\"PartitionKey\":\"p\",\"RowKey\":\"r\",\"A\":1}\n").expect("write");
    let out = aztable(&["import", "--location", d, "-i", f]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--table"));
    ok(&["import", "--location", d, "-i", f, "--table", "given"]);
    let out = ok(&["export", "--location", d, "--table", "given"]);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(text.contains("\"A\":1"), "{text}");
    // export of a directory that is not one
    let out = aztable(&["export", "--location", tmp.path().join("nothing").to_str().expect("path")]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an aztable data directory"));
    let _ = ACCOUNT;
}
