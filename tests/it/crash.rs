//! Black-box crash safety: writers run concurrently (single inserts, upserts, merges,
//! and change sets that each write a group of rows with a shared marker), the server
//! is SIGKILLed at a random moment, restarted on the same directory, and everything
//! the clients saw acknowledged is checked: every acknowledged write is there (or was
//! overwritten by the one write in flight at the kill), and no change set is partial.
//! Every other round runs with `--fsync`.
//!
//! A few rounds by default (about 10 s); a longer run:
//! `AZTABLE_CRASH_ROUNDS=200 AZTABLE_CRASH_SEED=7 cargo test --test it crash -- --nocapture`.

use crate::common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TABLE: &str = "crash";
const SINGLE_WRITERS: usize = 4;
const BATCH_WRITERS: usize = 2;
/// Rows per change set.
const BATCH_ROWS: usize = 10;
/// Rows each single writer cycles its upserts and merges over.
const HOT_ROWS: u64 = 20;

/// What a writer knows of one property of one row: the last value acknowledged, and
/// the value of a write that was sent but not answered (it may or may not be stored).
#[derive(Debug, Default, Clone)]
struct Cell {
    acked: Option<i64>,
    in_flight: Option<i64>,
}

/// Acknowledged state of one single writer's partition: (RowKey, property) → cell.
type Cells = BTreeMap<(String, String), Cell>;

/// A change set: its partition and whether it was acknowledged (`None`: in flight).
#[derive(Debug, Clone)]
struct BatchRecord {
    pk: String,
    acked: Option<bool>,
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// One single writer: inserts, upserts (insert-or-replace) and merges (insert-or-merge)
/// in its own partition, one at a time, until the server goes away.
async fn single_writer(
    c: Client,
    pk: String,
    round: u64,
    cells: Arc<Mutex<Cells>>,
    acked_ops: Arc<Mutex<u64>>,
) {
    let mut n: i64 = 0;
    loop {
        n += 1;
        let (method, path, rk, prop, body) = match n % 3 {
            0 => {
                let rk = format!("i{round}-{n}");
                (
                    "POST",
                    format!("/{TABLE}"),
                    rk.clone(),
                    "V".to_owned(),
                    json!({"PartitionKey": pk, "RowKey": rk, "V": n}),
                )
            }
            1 => {
                let rk = format!("u{}", n as u64 % HOT_ROWS);
                ("PUT", entity_path(TABLE, &pk, &rk), rk, "V".to_owned(), json!({"V": n}))
            }
            _ => {
                let rk = format!("m{}", n as u64 % HOT_ROWS);
                let prop = format!("P{}", n % 5);
                ("MERGE", entity_path(TABLE, &pk, &rk), rk, prop.clone(), json!({ prop: n }))
            }
        };
        let key = (rk, prop);
        cells.lock().unwrap().entry(key.clone()).or_default().in_flight = Some(n);
        let body = body.to_string();
        match c.try_send(method, &path, &[("Prefer", "return-no-content")], Some(&body)).await {
            Ok(r) if r.status == 201 || r.status == 204 => {
                let mut cells = cells.lock().unwrap();
                let cell = cells.get_mut(&key).unwrap();
                // an upsert replaces the whole row; its one property is V
                cell.acked = Some(n);
                cell.in_flight = None;
                *acked_ops.lock().unwrap() += 1;
            }
            Ok(r) => panic!("{method} {path}: unexpected {} {}", r.status, r.body),
            Err(_) => return, // the server was killed: this write stays in flight
        }
    }
}

/// One batch writer: change sets of `BATCH_ROWS` inserts into a new partition each,
/// every row carrying the change set's marker.
async fn batch_writer(
    c: Client,
    w: usize,
    round: u64,
    batches: Arc<Mutex<Vec<BatchRecord>>>,
    acked_ops: Arc<Mutex<u64>>,
) {
    for n in 0.. {
        let pk = format!("b{w}-{round}-{n}");
        let marker = format!("{pk}-marker");
        let (b, cs) = ("batch_crash", "changeset_crash");
        let mut body = format!("--{b}\r\nContent-Type: multipart/mixed; boundary={cs}\r\n\r\n");
        for r in 0..BATCH_ROWS {
            let entity = json!({"PartitionKey": pk, "RowKey": format!("{r:02}"), "Marker": marker});
            body.push_str(&format!(
                "--{cs}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
                 POST {}/{TABLE} HTTP/1.1\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\n\r\n\
                 {entity}\r\n",
                c.endpoint
            ));
        }
        body.push_str(&format!("--{cs}--\r\n--{b}--\r\n"));
        let index = {
            let mut all = batches.lock().unwrap();
            all.push(BatchRecord { pk: pk.clone(), acked: None });
            all.len() - 1
        };
        let ct = format!("multipart/mixed; boundary={b}");
        match c.try_send("POST", "/$batch", &[("Content-Type", &ct)], Some(&body)).await {
            Ok(r) if r.status == 202 && !r.body.contains("HTTP/1.1 4") && !r.body.contains("HTTP/1.1 5") => {
                batches.lock().unwrap()[index].acked = Some(true);
                *acked_ops.lock().unwrap() += 1;
            }
            Ok(r) => panic!("$batch: unexpected {} {}", r.status, r.body),
            Err(_) => return,
        }
    }
}

/// Every entity of the table, by (PartitionKey, RowKey).
async fn read_all(c: &Client) -> BTreeMap<(String, String), Value> {
    let mut out = BTreeMap::new();
    let mut next = String::new();
    loop {
        let r = c.send("GET", &format!("/{TABLE}()?$top=1000{next}"), &[], None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        for e in r.json()["value"].as_array().unwrap() {
            let pk = e["PartitionKey"].as_str().unwrap().to_owned();
            let rk = e["RowKey"].as_str().unwrap().to_owned();
            out.insert((pk, rk), e.clone());
        }
        match (r.header("x-ms-continuation-NextPartitionKey"), r.header("x-ms-continuation-NextRowKey")) {
            (Some(pk), Some(rk)) => next = format!("&NextPartitionKey={pk}&NextRowKey={rk}"),
            _ => return out,
        }
    }
}

/// Checks the restarted server against what the clients saw acknowledged; then takes
/// what is stored as acknowledged (it is durable now) and clears what was in flight.
fn verify(
    stored: &BTreeMap<(String, String), Value>,
    writers: &mut [(String, Cells)],
    batches: &mut Vec<BatchRecord>,
) -> (u64, u64) {
    let mut checked = 0;
    for (pk, cells) in writers.iter_mut() {
        for ((rk, prop), cell) in cells.iter_mut() {
            let got = stored.get(&(pk.clone(), rk.clone())).and_then(|e| e[prop.as_str()].as_i64());
            let ok = got == cell.acked || (got.is_some() && got == cell.in_flight);
            assert!(
                ok,
                "{pk}/{rk}.{prop}: stored {got:?}, acknowledged {:?}, in flight {:?}",
                cell.acked, cell.in_flight
            );
            if got.is_some() {
                cell.acked = got;
            }
            cell.in_flight = None;
            checked += 1;
        }
    }
    // change sets: all rows or none, and all of every acknowledged one
    let mut rows_of: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for ((pk, _), e) in stored {
        if pk.starts_with('b') {
            rows_of.entry(pk.as_str()).or_default().push(e);
        }
    }
    for (pk, rows) in &rows_of {
        assert_eq!(rows.len(), BATCH_ROWS, "change set {pk} is partial: {} of {BATCH_ROWS} rows", rows.len());
        assert!(rows.iter().all(|e| e["Marker"] == format!("{pk}-marker")), "{pk}: a row of another write");
    }
    let mut acked_batches = 0;
    batches.retain_mut(|b| {
        let present = rows_of.contains_key(b.pk.as_str());
        if b.acked == Some(true) {
            assert!(present, "acknowledged change set {} is missing", b.pk);
            acked_batches += 1;
        }
        present
    });
    for b in batches.iter_mut() {
        b.acked = Some(true);
    }
    (checked, acked_batches)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acknowledged_writes_and_whole_change_sets_survive_sigkill_at_random_moments() {
    let rounds = env_u64("AZTABLE_CRASH_ROUNDS", 5);
    let seed =
        env_u64("AZTABLE_CRASH_SEED", chrono::Utc::now().timestamp_nanos_opt().unwrap_or(1) as u64) | 1;
    println!("crash test: {rounds} rounds, AZTABLE_CRASH_SEED={seed}");
    let mut rng = Rng(seed);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let mut writers: Vec<(String, Cells)> =
        (0..SINGLE_WRITERS).map(|w| (format!("w{w}"), Cells::new())).collect();
    let mut batches: Vec<BatchRecord> = Vec::new();
    let (mut acked_total, mut kills) = (0u64, 0u64);
    let started = Instant::now();
    for round in 0..rounds {
        let flags: &[&str] = if round % 2 == 1 { &["--fsync"] } else { &[] };
        let mut server = TestServer::start_on(&dir, flags);
        let c = server.client();
        if round == 0 {
            assert_eq!(c.create_table(TABLE).await.status, 201);
        } else {
            let stored = read_all(&c).await;
            let (cells, acked_batches) = verify(&stored, &mut writers, &mut batches);
            println!(
                "round {round}: {} entities, {cells} cells and {acked_batches} change sets check out",
                stored.len()
            );
        }
        let acked_ops = Arc::new(Mutex::new(0u64));
        let shared_batches = Arc::new(Mutex::new(std::mem::take(&mut batches)));
        let mut tasks = Vec::new();
        let mut cells_of = Vec::new();
        for (pk, cells) in &mut writers {
            let shared = Arc::new(Mutex::new(std::mem::take(cells)));
            cells_of.push(Arc::clone(&shared));
            tasks.push(tokio::spawn(single_writer(
                c.clone(),
                pk.clone(),
                round,
                shared,
                Arc::clone(&acked_ops),
            )));
        }
        for w in 0..BATCH_WRITERS {
            tasks.push(tokio::spawn(batch_writer(
                c.clone(),
                w,
                round,
                Arc::clone(&shared_batches),
                Arc::clone(&acked_ops),
            )));
        }
        tokio::time::sleep(Duration::from_millis(300 + rng.below(1200))).await;
        server.kill();
        kills += 1;
        for t in tasks {
            t.await.unwrap();
        }
        for ((_, cells), shared) in writers.iter_mut().zip(cells_of) {
            *cells = std::mem::take(&mut *shared.lock().unwrap());
        }
        batches = std::mem::take(&mut *shared_batches.lock().unwrap());
        acked_total += *acked_ops.lock().unwrap();
    }
    let server = TestServer::start_on(&dir, &[]);
    let stored = read_all(&server.client()).await;
    let (cells, acked_batches) = verify(&stored, &mut writers, &mut batches);
    println!(
        "crash test: {kills} kills in {:.1} s; {acked_total} acknowledged writes (single writes and \
         change sets); at the end {} entities, {cells} cells and {acked_batches} change sets check out",
        started.elapsed().as_secs_f64(),
        stored.len()
    );
    assert!(acked_batches > 0 && cells > 0, "the writers got nothing acknowledged");
}
