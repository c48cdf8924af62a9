//! Black-box crash safety: writers run concurrently (single inserts, upserts and
//! merges, and change sets mixing insert, replace, merge, both upserts and delete over
//! a partition of their own), the server is SIGKILLed at a random moment, restarted on
//! the same directory, and everything the clients saw acknowledged is checked: every
//! acknowledged write is there (or was overwritten by the one write in flight at the
//! kill), and each change set is whole or absent. Every write carries a value longer
//! than the inline limit (64 bytes, `store::codec::entity`), so an entity's head and
//! heap (two column families) are written together, and each long value encodes the
//! write it belongs to: a head and a heap of different writes would show. Every other
//! round runs with `--fsync`.
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
/// Rows of a batch writer's partition its change sets pick from.
const BATCH_POOL: u64 = 16;
/// Most operations in a change set.
const BATCH_OPS: u64 = 8;
/// Rows each single writer cycles its upserts and merges over.
const HOT_ROWS: u64 = 20;

/// The long value written beside `n`: above the inline limit, its length varying, and
/// naming `n`, so that it shows which write it came from.
fn long_value(n: i64) -> String {
    format!("{n:012}:{}", "L".repeat(64 + (n.unsigned_abs() % 300) as usize))
}

/// What a writer knows of one property of one row: the last value acknowledged, and
/// the value of a write that was sent but not answered (it may or may not be stored).
#[derive(Debug, Default, Clone)]
struct Cell {
    acked: Option<i64>,
    in_flight: Option<i64>,
}

/// Acknowledged state of one single writer's partition: (RowKey, property) → cell.
type Cells = BTreeMap<(String, String), Cell>;

/// A batch writer's partition as acknowledged: RowKey → its properties (system ones
/// left out).
type Rows = BTreeMap<String, BTreeMap<String, Value>>;

/// What a batch writer knows of its partition: the state after its last acknowledged
/// change set, and the state the change set in flight at the kill would leave.
#[derive(Debug, Default, Clone)]
struct Partition {
    acked: Rows,
    in_flight: Option<Rows>,
}

/// The operations of a change set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Op {
    Insert,
    Replace,
    Merge,
    UpsertReplace,
    UpsertMerge,
    Delete,
    /// Not an operation: counts the change sets acknowledged.
    Sets,
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
                    json!({"PartitionKey": pk, "RowKey": rk, "V": n, "LV": long_value(n)}),
                )
            }
            1 => {
                let rk = format!("u{}", n as u64 % HOT_ROWS);
                (
                    "PUT",
                    entity_path(TABLE, &pk, &rk),
                    rk,
                    "V".to_owned(),
                    json!({"V": n, "LV": long_value(n)}),
                )
            }
            _ => {
                let rk = format!("m{}", n as u64 % HOT_ROWS);
                let prop = format!("P{}", n % 5);
                let body = json!({ prop.clone(): n, format!("L{prop}"): long_value(n) });
                ("MERGE", entity_path(TABLE, &pk, &rk), rk, prop, body)
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

/// The change set `cs` of a batch writer over `rows`: a few distinct rows, each with an
/// operation its state allows (insert only where absent; replace, merge and delete
/// only where present; both upserts anywhere). Returns the operations and the rows
/// they leave.
fn plan_change_set(rng: &mut Rng, cs: i64, rows: &Rows) -> (Vec<(String, Op, Option<Value>)>, Rows) {
    let mut after = rows.clone();
    let mut ops = Vec::new();
    let count = 1 + rng.below(BATCH_OPS);
    let first = rng.below(BATCH_POOL);
    for i in 0..count {
        let rk = format!("r{:02}", (first + i * 5) % BATCH_POOL);
        if ops.iter().any(|(k, _, _)| *k == rk) {
            continue;
        }
        let op = match (after.contains_key(&rk), rng.below(3)) {
            (false, 0) => Op::Insert,
            (false, 1) => Op::UpsertReplace,
            (false, _) => Op::UpsertMerge,
            (true, _) => [Op::Replace, Op::Merge, Op::Delete, Op::UpsertReplace, Op::UpsertMerge]
                [rng.below(5) as usize],
        };
        let mut props = BTreeMap::new();
        props.insert("Marker".to_owned(), json!(cs));
        props.insert("L".to_owned(), json!(long_value(cs)));
        let body = match op {
            Op::Delete | Op::Sets => {
                after.remove(&rk);
                None
            }
            Op::Insert | Op::Replace | Op::UpsertReplace => {
                props.insert("R".to_owned(), json!(cs));
                after.insert(rk.clone(), props.clone());
                Some(Value::Object(props.into_iter().collect()))
            }
            Op::Merge | Op::UpsertMerge => {
                props.insert(format!("G{}", cs % 3), json!(cs));
                after.entry(rk.clone()).or_default().extend(props.clone());
                Some(Value::Object(props.into_iter().collect()))
            }
        };
        ops.push((rk, op, body));
    }
    (ops, after)
}

/// One batch writer: change sets over its own partition, planned from the partition
/// as acknowledged, until the server goes away.
async fn batch_writer(
    c: Client,
    pk: String,
    round: u64,
    seed: u64,
    part: Arc<Mutex<Partition>>,
    acked: Arc<Mutex<BTreeMap<Op, u64>>>,
) {
    let mut rng = Rng(seed | 1);
    for n in 0i64.. {
        let cs = (round as i64) * 1_000_000 + n;
        let (ops, after) = plan_change_set(&mut rng, cs, &part.lock().unwrap().acked);
        let (b, set) = ("batch_crash", "changeset_crash");
        let mut body = format!("--{b}\r\nContent-Type: multipart/mixed; boundary={set}\r\n\r\n");
        for (rk, op, props) in &ops {
            let url = format!("{}{}", c.endpoint, entity_path(TABLE, &pk, rk));
            let (line, if_match) = match op {
                Op::Insert => (format!("POST {}/{TABLE}", c.endpoint), false),
                Op::Replace => (format!("PUT {url}"), true),
                Op::UpsertReplace => (format!("PUT {url}"), false),
                Op::Merge => (format!("MERGE {url}"), true),
                Op::UpsertMerge => (format!("MERGE {url}"), false),
                Op::Delete | Op::Sets => (format!("DELETE {url}"), true),
            };
            let mut props = props.clone();
            if let (Op::Insert, Some(Value::Object(p))) = (op, props.as_mut()) {
                p.insert("PartitionKey".into(), json!(pk));
                p.insert("RowKey".into(), json!(rk));
            }
            body.push_str(&format!(
                "--{set}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
                 {line} HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\nPrefer: return-no-content\r\n"
            ));
            if if_match {
                body.push_str("If-Match: *\r\n");
            }
            match props {
                Some(p) => body.push_str(&format!("Content-Type: application/json\r\n\r\n{p}\r\n")),
                None => body.push_str("\r\n"),
            }
        }
        body.push_str(&format!("--{set}--\r\n--{b}--\r\n"));
        part.lock().unwrap().in_flight = Some(after.clone());
        let ct = format!("multipart/mixed; boundary={b}");
        match c.try_send("POST", "/$batch", &[("Content-Type", &ct)], Some(&body)).await {
            Ok(r) if r.status == 202 && !r.body.contains("HTTP/1.1 4") && !r.body.contains("HTTP/1.1 5") => {
                let mut part = part.lock().unwrap();
                part.acked = after;
                part.in_flight = None;
                let mut acked = acked.lock().unwrap();
                for (_, op, _) in &ops {
                    *acked.entry(*op).or_default() += 1;
                }
                // the change sets, under a key no operation has
                *acked.entry(Op::Sets).or_default() += 1;
            }
            Ok(r) => panic!("$batch {ops:?}: unexpected {} {}", r.status, r.body),
            Err(_) => return, // the server was killed: this change set stays in flight
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
/// Returns the cells and the change-set partitions checked.
fn verify(
    stored: &BTreeMap<(String, String), Value>,
    writers: &mut [(String, Cells)],
    partitions: &mut [(String, Partition)],
) -> (u64, u64) {
    let mut checked = 0;
    for (pk, cells) in writers.iter_mut() {
        for ((rk, prop), cell) in cells.iter_mut() {
            let entity = stored.get(&(pk.clone(), rk.clone()));
            let got = entity.and_then(|e| e[prop.as_str()].as_i64());
            let ok = got == cell.acked || (got.is_some() && got == cell.in_flight);
            assert!(
                ok,
                "{pk}/{rk}.{prop}: stored {got:?}, acknowledged {:?}, in flight {:?}",
                cell.acked, cell.in_flight
            );
            // the long value (in the heap) is of the same write as the number (in the head)
            if let (Some(e), Some(n)) = (entity, got) {
                let long = e[format!("L{prop}").as_str()].as_str();
                assert_eq!(
                    long,
                    Some(long_value(n).as_str()),
                    "{pk}/{rk}: L{prop} is of another write than {prop}={n}"
                );
            }
            if got.is_some() {
                cell.acked = got;
            }
            cell.in_flight = None;
            checked += 1;
        }
    }
    // change sets: each partition is as after the last acknowledged one, or as after
    // the one in flight, whole
    let mut partitions_checked = 0;
    for (pk, part) in partitions.iter_mut() {
        let rows: Rows = stored
            .iter()
            .filter(|((p, _), _)| p == pk)
            .map(|((_, rk), e)| {
                let props = e
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(k, _)| {
                        !matches!(k.as_str(), "PartitionKey" | "RowKey" | "Timestamp")
                            && !k.starts_with("odata.")
                            && !k.contains("@odata")
                    })
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                (rk.clone(), props)
            })
            .collect();
        let as_acked = rows == part.acked;
        let as_in_flight = part.in_flight.as_ref() == Some(&rows);
        assert!(
            as_acked || as_in_flight,
            "partition {pk} matches no whole change set:\n stored {rows:?}\n acknowledged {:?}\n in flight {:?}",
            part.acked,
            part.in_flight
        );
        part.acked = rows;
        part.in_flight = None;
        partitions_checked += 1;
    }
    (checked, partitions_checked)
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
    let mut partitions: Vec<(String, Partition)> =
        (0..BATCH_WRITERS).map(|w| (format!("b{w}"), Partition::default())).collect();
    let (mut acked_total, mut kills) = (0u64, 0u64);
    let set_ops = Arc::new(Mutex::new(BTreeMap::new()));
    let started = Instant::now();
    for round in 0..rounds {
        let flags: &[&str] = if round % 2 == 1 { &["--fsync"] } else { &[] };
        let mut server = TestServer::start_on(&dir, flags);
        let c = server.client();
        if round == 0 {
            assert_eq!(c.create_table(TABLE).await.status, 201);
        } else {
            let stored = read_all(&c).await;
            let (cells, parts) = verify(&stored, &mut writers, &mut partitions);
            println!(
                "round {round}: {} entities, {cells} cells and {parts} change-set partitions check out",
                stored.len()
            );
        }
        let acked_ops = Arc::new(Mutex::new(0u64));
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
        let mut parts_of = Vec::new();
        for (pk, part) in &mut partitions {
            let shared = Arc::new(Mutex::new(std::mem::take(part)));
            parts_of.push(Arc::clone(&shared));
            tasks.push(tokio::spawn(batch_writer(
                c.clone(),
                pk.clone(),
                round,
                rng.next(),
                shared,
                Arc::clone(&set_ops),
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
        for ((_, part), shared) in partitions.iter_mut().zip(parts_of) {
            *part = std::mem::take(&mut *shared.lock().unwrap());
        }
        acked_total += *acked_ops.lock().unwrap();
    }
    let server = TestServer::start_on(&dir, &[]);
    let stored = read_all(&server.client()).await;
    let (cells, parts) = verify(&stored, &mut writers, &mut partitions);
    let set_ops = std::mem::take(&mut *set_ops.lock().unwrap());
    println!(
        "crash test: {kills} kills in {:.1} s; {acked_total} acknowledged single writes; change sets \
         and their operations acknowledged: {set_ops:?}; at the end {} entities, {cells} cells and \
         {parts} change-set partitions check out",
        started.elapsed().as_secs_f64(),
        stored.len()
    );
    assert!(acked_total > 0 && cells > 0, "the single writers got nothing acknowledged");
    // every kind of operation was in an acknowledged change set
    assert_eq!(set_ops.len(), 7, "{set_ops:?}");
}
