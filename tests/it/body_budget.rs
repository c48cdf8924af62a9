//! Black-box: `--maxInflightBodyBytes` bounds the server's memory under concurrent large
//! change sets, the parsed operations included: the peak resident size (VmHWM) grows by
//! no more than the budget and a stated margin, however many clients send at once.

use crate::common::*;
use serde_json::json;

/// The budget the server runs with: small, to keep the test cheap.
const BUDGET: usize = 24 * 1024 * 1024;
/// What the peak may exceed the budget by: allocator slack, the per-connection read
/// buffers, the answers being written. (A server that charges bodies as bytes only grows
/// by twice the budget here: the parsed change sets come on top.)
const MARGIN: usize = 12 * 1024 * 1024;
/// Clients sending at once, each one change set of [`OPS`] inserts of about 21 KB.
const CLIENTS: usize = 48;
const OPS: usize = 100;

/// A process's VmHWM or VmRSS in bytes.
fn vm(pid: u32, field: &str) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let line = status.lines().find(|l| l.starts_with(field)).expect("the field");
    let kib: usize = line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a number");
    kib * 1024
}

/// A change set of [`OPS`] inserts into partition `pk` of `big`, the last of a row that
/// exists: the service parses all of it, then refuses it whole (nothing is stored, so the
/// store's memory stays out of the measure).
fn change_set(endpoint: &str, pk: &str) -> (String, String) {
    let (b, cs) = ("batch_big", "changeset_big");
    let mut body = format!("--{b}\r\nContent-Type: multipart/mixed; boundary={cs}\r\n\r\n");
    for i in 0..OPS {
        let rk = if i + 1 == OPS { "dup".to_owned() } else { format!("{i:03}") };
        let entity = json!({"PartitionKey": pk, "RowKey": rk, "S": "x".repeat(21_000)});
        body.push_str(&format!(
            "--{cs}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
             POST {endpoint}/big HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{entity}\r\n"
        ));
    }
    body.push_str(&format!("--{cs}--\r\n--{b}--\r\n"));
    (format!("multipart/mixed; boundary={b}"), body)
}

#[tokio::test]
async fn concurrent_large_change_sets_stay_within_the_body_budget() {
    let budget = BUDGET.to_string();
    // mimalloc told to give freed memory back at once and to commit arenas as used, so
    // the resident size follows what is live rather than what the allocator keeps
    let server = TestServer::start_with(
        &["--inMemoryPersistence", "--maxInflightBodyBytes", &budget],
        &[("MIMALLOC_PURGE_DELAY", "0"), ("MIMALLOC_ARENA_EAGER_COMMIT", "0")],
    );
    let c = server.client();
    assert_eq!(c.create_table("big").await.status, 201);
    for i in 0..CLIENTS {
        let r = c.insert("big", json!({"PartitionKey": format!("p{i}"), "RowKey": "dup"})).await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let bodies: Vec<(String, String)> =
        (0..CLIENTS).map(|i| change_set(&server.endpoint(), &format!("p{i}"))).collect();
    assert!(bodies[0].1.len() > 2_000_000, "{} bytes", bodies[0].1.len());
    // one change set alone first: what handling one costs at all (threads' allocator
    // arenas, buffers kept for reuse) is in the baseline, not in the growth
    for (content_type, body) in &bodies[..2] {
        let headers = [("Content-Type", content_type.as_str()), ("Accept", "application/json")];
        let r = c.send("POST", "/$batch", &headers, Some(body)).await;
        assert!(r.status == 202 && r.body.contains("EntityAlreadyExists"), "{}", r.body);
    }
    let baseline = vm(server.pid(), "VmHWM:");

    let mut tasks = Vec::new();
    for (content_type, body) in bodies {
        // a client of its own each: one connection per change set, all at once
        let c = Client { http: reqwest::Client::new(), ..c.clone() };
        tasks.push(tokio::spawn(async move {
            let headers = [("Content-Type", content_type.as_str()), ("Accept", "application/json")];
            c.send("POST", "/$batch", &headers, Some(&body)).await
        }));
    }
    let (mut refused_whole, mut busy) = (0, 0);
    for t in tasks {
        let r = t.await.expect("a client");
        match r.status {
            202 => {
                assert!(r.body.contains("EntityAlreadyExists"), "{}", r.body);
                refused_whole += 1;
            }
            _ => {
                r.assert_refused_with(
                    503,
                    ErrorCode::ServerBusy,
                    "The server is holding too many request bodies (--maxInflightBodyBytes). Please retry your request.",
                );
                busy += 1;
            }
        }
    }
    let peak = vm(server.pid(), "VmHWM:");
    assert!(refused_whole > 0, "no change set was parsed: the test proved nothing");
    assert!(busy > 0, "no change set met a full budget: the test proved nothing");
    assert!(
        peak.saturating_sub(baseline) <= BUDGET + MARGIN,
        "peak resident size grew by {} MiB under a {} MiB budget (+{} MiB margin)",
        (peak - baseline) >> 20,
        BUDGET >> 20,
        MARGIN >> 20
    );
    // nothing was stored
    let r = c.send("GET", "/big()", &[], None).await;
    assert_eq!(r.json()["value"].as_array().map(Vec::len), Some(CLIENTS));
}
