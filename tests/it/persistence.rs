//! Black-box: acknowledged writes survive a killed process and a clean restart;
//! `--inMemoryPersistence` keeps nothing on disk.

use crate::common::*;
use serde_json::json;

#[tokio::test]
async fn acknowledged_writes_survive_sigkill_and_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let mut server = TestServer::start_on(&dir, &[]);
    let c = server.client();
    assert_eq!(c.create_table("durable").await.status, 201);
    for i in 0..200 {
        let r = c.insert("durable", json!({"PartitionKey": "p", "RowKey": format!("{i:03}"), "I": i})).await;
        assert_eq!(r.status, 201);
    }
    let path = entity_path("durable", "p", "007");
    assert_eq!(c.send("MERGE", &path, &[("If-Match", "*")], Some(r#"{"M":"merged"}"#)).await.status, 204);
    assert_eq!(
        c.send("DELETE", &entity_path("durable", "p", "008"), &[("If-Match", "*")], None).await.status,
        204
    );
    server.kill(); // SIGKILL: no flush, no clean close

    let mut server = TestServer::start_on(&dir, &[]);
    let c = server.client();
    let v = c.send("GET", "/durable()", &[], None).await.json();
    let rows = v["value"].as_array().unwrap();
    assert_eq!(rows.len(), 199);
    let e7 = c.get("durable", "p", "007").await.json();
    assert_eq!(e7["M"], "merged");
    assert_eq!(e7["I"], 7);
    c.get("durable", "p", "008").await.assert_refused(404, ErrorCode::ResourceNotFound);

    // clean shutdown on SIGTERM, then read back again
    assert!(server.terminate(), "SIGTERM should stop the server cleanly");
    let server = TestServer::start_on(&dir, &[]);
    let c = server.client();
    assert_eq!(c.get("durable", "p", "199").await.json()["I"], 199);
}

#[tokio::test]
async fn in_memory_persistence_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("never");
    let dir_s = dir.to_str().unwrap().to_owned();
    let mut server = TestServer::start_with(&["--inMemoryPersistence", "--location", &dir_s], &[]);
    let c = server.client();
    assert_eq!(c.create_table("mem").await.status, 201);
    assert_eq!(c.insert("mem", json!({"PartitionKey": "a", "RowKey": "b"})).await.status, 201);
    assert_eq!(c.get("mem", "a", "b").await.status, 200);
    assert!(server.terminate());
    assert!(!dir.exists(), "--inMemoryPersistence must not create the data directory");
    let server = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    server.client().send("GET", "/mem()", &[], None).await.assert_refused(404, ErrorCode::TableNotFound);
}

#[tokio::test]
async fn extra_accounts_from_azurite_accounts() {
    // key "a2V5MQ==" is base64("key1")
    let server =
        TestServer::start_with(&["--inMemoryPersistence"], &[("AZURITE_ACCOUNTS", "acct2:a2V5MQ==")]);
    let mut c = server.client();
    c.account = "acct2".into();
    c.key = "a2V5MQ==".into();
    c.endpoint = format!("http://127.0.0.1:{}/acct2", server.port);
    assert_eq!(c.create_table("other").await.status, 201);
    // AZURITE_ACCOUNTS replaces the default account, as in Azurite: devstoreaccount1 is unknown
    let dev = server.client();
    let r = dev.send("GET", "/other()", &[], None).await;
    r.assert_refused(403, ErrorCode::AuthenticationFailed);
    assert!(r.body.contains("The account 'devstoreaccount1' does not exist on this server."), "{}", r.body);
}

#[tokio::test]
async fn debug_log_file_and_silent_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("debug.log");
    let log_s = log.to_str().unwrap().to_owned();
    let server = TestServer::start_with(&["--inMemoryPersistence", "--silent", "--debug", &log_s], &[]);
    let c = server.client();
    assert_eq!(c.create_table("logged").await.status, 201);
    drop(server);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("CreateTable"), "the debug log names each request's operation: {text}");
}
