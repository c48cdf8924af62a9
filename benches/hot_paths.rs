//! Criterion benches of the per-request hot paths: storage key encoding, entity JSON
//! decode/encode (ASCII and Japanese text), a cached point read's decode and render,
//! `$filter` parse + evaluation, `$batch` parsing of a 100-operation change set, SharedKey
//! signature verification, the partition advisor, filtered scans' passes over 20,000
//! entities (one a value summary narrows, one reading every row), and a point lookup of a
//! head and heap straight from RocksDB in a table far larger than its caches. Run with
//! `cargo bench --bench hot_paths`.

use aztable_model::entity::Entity;
use aztable_model::time::Ticks;
use aztable_wire::auth::sign::{decode_key, shared_key_authorization, SignParts};
use aztable_wire::auth::{authenticate, Accounts, AuthRequest, DEV_ACCOUNT, DEV_KEY};
use aztable_wire::odata::{entity_response, parse_entity, Metadata, Urls};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use http::{HeaderMap, HeaderValue};
use std::hint::black_box;

/// A ~1 KB entity body like the load tool's.
fn entity_body(pk: &str, rk: &str) -> Vec<u8> {
    let data: String = (0..850u32).map(|i| char::from(b'a' + (i * 7 % 26) as u8)).collect();
    entity_body_with(pk, rk, &data)
}

/// [`entity_body`] with its long string in Japanese (283 three-byte characters): text that
/// is not ASCII takes UTF-8 validation's slow path.
fn entity_body_non_ascii(pk: &str, rk: &str) -> Vec<u8> {
    let data: String =
        (0..283u32).map(|i| ['日', '本', '語', 'の', '文', '章', 'テ', 'ス'][(i % 8) as usize]).collect();
    entity_body_with(pk, rk, &data)
}

fn entity_body_with(pk: &str, rk: &str, data: &str) -> Vec<u8> {
    format!(
        "{{\"PartitionKey\":\"{pk}\",\"RowKey\":\"{rk}\",\"Data\":\"{data}\",\"Count\":42,\
         \"Big@odata.type\":\"Edm.Int64\",\"Big\":\"1234567890123\",\"Ratio\":0.5,\"Flag\":true,\
         \"When@odata.type\":\"Edm.DateTime\",\"When\":\"2024-01-02T12:34:56.1234567Z\",\
         \"Id@odata.type\":\"Edm.Guid\",\"Id\":\"00000000-0000-4000-8000-00000000002a\",\"Tag\":\"hay3\"}}"
    )
    .into_bytes()
}

fn entity() -> Entity {
    let parsed = parse_entity(&entity_body("p0000042", "r000042000")).expect("valid entity");
    Entity {
        partition_key: "p0000042".into(),
        row_key: "r000042000".into(),
        timestamp: Ticks(638_400_000_000_000_000),
        properties: parsed.properties,
    }
}

fn keys(c: &mut Criterion) {
    c.bench_function("keys/entity_key", |b| {
        b.iter(|| {
            aztable_store::keys::entity_key(black_box(42), black_box("p0000042"), black_box("r000042000"))
        })
    });
}

/// A cached point read's own work: the stored bytes decoded into an owned entity and
/// rendered (the path before views), against rendered from a view of the bytes.
fn point_read(c: &mut Criterion) {
    use aztable_store::codec::{decode_entity, decode_entity_view, encode_entity};
    let e = entity();
    let enc = encode_entity(&e);
    let (head, heap) = (enc.head.as_slice(), enc.heap.as_deref());
    let urls = Urls { base: "http://127.0.0.1:10002/devstoreaccount1", account: DEV_ACCOUNT };
    let mut g = c.benchmark_group("point_read");
    g.bench_function("decode_owned_and_render_minimalmetadata", |b| {
        b.iter(|| {
            let e = decode_entity("p0000042".into(), "r000042000".into(), black_box(head), heap)
                .expect("decodes");
            entity_response(&e, "mytable", Metadata::Minimal, None, &urls)
        })
    });
    g.bench_function("decode_view_and_render_minimalmetadata", |b| {
        b.iter(|| {
            let v = decode_entity_view("p0000042", "r000042000", black_box(head), heap).expect("decodes");
            entity_response(&v, "mytable", Metadata::Minimal, None, &urls)
        })
    });
    let parsed = parse_entity(&entity_body_non_ascii("p0000042", "r000042000")).expect("valid entity");
    let e = Entity { properties: parsed.properties, ..e };
    let enc = encode_entity(&e);
    let (head, heap) = (enc.head.as_slice(), enc.heap.as_deref());
    g.bench_function("decode_owned_non_ascii", |b| {
        b.iter(|| {
            decode_entity("p0000042".into(), "r000042000".into(), black_box(head), heap).expect("decodes")
        })
    });
    g.finish();
}

fn odata(c: &mut Criterion) {
    let body = entity_body("p0000042", "r000042000");
    let mut g = c.benchmark_group("odata");
    g.throughput(Throughput::Bytes(body.len() as u64));
    g.bench_function("parse_entity_1k", |b| b.iter(|| parse_entity(black_box(&body)).expect("parses")));
    let non_ascii = entity_body_non_ascii("p0000042", "r000042000");
    g.bench_function("parse_entity_1k_non_ascii", |b| {
        b.iter(|| parse_entity(black_box(&non_ascii)).expect("parses"))
    });
    let e = entity();
    let urls = Urls { base: "http://127.0.0.1:10002/devstoreaccount1", account: DEV_ACCOUNT };
    for (name, md) in [
        ("nometadata", Metadata::None),
        ("minimalmetadata", Metadata::Minimal),
        ("fullmetadata", Metadata::Full),
    ] {
        g.bench_function(format!("entity_response_1k_{name}"), |b| {
            b.iter(|| entity_response(black_box(&e), "mytable", md, None, &urls))
        });
    }
    g.finish();
}

fn filter(c: &mut Criterion) {
    let text = "PartitionKey eq 'p0000042' and RowKey ge 'r000042000' and RowKey lt 'r000042010' \
                and (Count gt 10 or Tag eq 'needle') and Flag eq true";
    let e = entity();
    let expr = aztable_wire::filter::parse(text).expect("parses");
    let mut g = c.benchmark_group("filter");
    g.bench_function("parse", |b| b.iter(|| aztable_wire::filter::parse(black_box(text)).expect("parses")));
    g.bench_function("eval", |b| b.iter(|| aztable_wire::filter::eval(black_box(&expr), black_box(&e))));
    let scan = aztable_wire::filter::parse("Tag eq 'needle'").expect("parses");
    g.bench_function("eval_non_key_miss", |b| {
        b.iter(|| aztable_wire::filter::eval(black_box(&scan), black_box(&e)))
    });
    g.finish();
}

/// A `$batch` body with one change set of 100 inserts into partition `p`.
fn batch_body() -> (String, Vec<u8>) {
    let mut body = String::from("--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n");
    for i in 0..100 {
        let entity = String::from_utf8(entity_body("p", &format!("r{i:09}"))).expect("utf-8");
        body.push_str(&format!(
            "--changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
             POST http://127.0.0.1:10002/devstoreaccount1/mytable HTTP/1.1\r\n\
             Content-Type: application/json\r\nAccept: application/json;odata=nometadata\r\n\
             Prefer: return-no-content\r\nDataServiceVersion: 3.0;\r\n\r\n{entity}\r\n"
        ));
    }
    body.push_str("--changeset_c--\r\n\r\n--batch_b--\r\n");
    ("multipart/mixed; boundary=batch_b".into(), body.into_bytes())
}

fn batch(c: &mut Criterion) {
    let (ct, body) = batch_body();
    let limits = aztable_wire::batch::Limits::default();
    let mut g = c.benchmark_group("batch");
    g.throughput(Throughput::Elements(100));
    g.bench_function("parse_100_ops", |b| {
        b.iter(|| {
            let parsed =
                aztable_wire::batch::parse(black_box(&ct), black_box(&body), &limits).expect("parses");
            assert_eq!(parsed.ops.len(), 100);
            parsed
        })
    });
    g.bench_function("parse_100_ops_and_entities", |b| {
        b.iter(|| {
            let parsed =
                aztable_wire::batch::parse(black_box(&ct), black_box(&body), &limits).expect("parses");
            parsed
                .ops
                .iter()
                .map(|op| parse_entity(op.body).map(|e| e.properties.len()).unwrap_or(0))
                .sum::<usize>()
        })
    });
    g.finish();
}

fn auth(c: &mut Criterion) {
    let accounts = Accounts::with_dev_account();
    let account = accounts.get(DEV_ACCOUNT).expect("dev account");
    let key = decode_key(DEV_KEY).expect("dev key");
    let date = "Sun, 11 Oct 2009 21:49:13 GMT";
    let path = "/devstoreaccount1/mytable(PartitionKey='p0000042',RowKey='r000042000')";
    let parts =
        SignParts { method: "GET", raw_path: path, query: None, content_md5: "", content_type: "", date };
    let mut headers = HeaderMap::new();
    headers.insert("x-ms-date", HeaderValue::from_static(date));
    let authorization = shared_key_authorization(DEV_ACCOUNT, &key, &parts);
    headers.insert(http::header::AUTHORIZATION, HeaderValue::from_str(&authorization).expect("header"));
    let req = AuthRequest { method: "GET", raw_path: path, query: None, headers: &headers };
    let mut g = c.benchmark_group("auth");
    g.bench_function("authenticate_shared_key", |b| {
        b.iter(|| authenticate(black_box(&req), account, Some("/devstoreaccount1")).expect("verifies"))
    });
    g.bench_function("sign_shared_key", |b| {
        b.iter(|| shared_key_authorization(DEV_ACCOUNT, &key, black_box(&parts)))
    });
    g.finish();
}

/// The partition advisor's cost per operation: a point read of a tracked partition, and
/// an insert into a new partition of a table whose partition slots are full (each one
/// evicts the least busy entry).
fn insight(c: &mut Criterion) {
    use aztable_insight::{Advisor, InsightOptions};
    let mut g = c.benchmark_group("insight");
    let a = Advisor::new(InsightOptions::default());
    for i in 0..1000 {
        a.wrote("devstoreaccount1", "people", &format!("p{i:04}"), [("r", true)]);
    }
    g.bench_function("point_read", |b| {
        b.iter(|| a.point_read(black_box("devstoreaccount1"), black_box("people"), black_box("p0500")))
    });
    let mut n = 0u64;
    g.bench_function("insert_new_partition", |b| {
        b.iter(|| {
            n += 1;
            let pk = format!("{n:016}");
            a.wrote(black_box("devstoreaccount1"), black_box("events"), &pk, [("0", true)]);
        })
    });
    g.finish();
}

/// Entities in the store bench: about 1.15 GB of heads and heaps, 29 times the block
/// cache, so nearly every lookup reads its blocks from the OS page cache.
#[cfg(feature = "rocksdb")]
const STORE_ENTITIES: u32 = 1_000_000;

/// A uniformly random entity's head and heap read straight from `RocksStore` (the part
/// of a point read that misses the entity cache which the store does): 1,000,000 entities
/// written in batches of 100 in random key order, as the load tool's preload does, and
/// flushed; the lookups begin once the flushes' compactions have had 20 s and every
/// entity has been read once; then again after a full compaction (the bottom level,
/// LZ4-compressed, holds everything).
#[cfg(feature = "rocksdb")]
fn store(c: &mut Criterion) {
    use aztable_store::keys::{entity_key, heap_key};
    use aztable_store::rocks::RocksStore;
    use aztable_store::{Store, WriteBatch};
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = RocksStore::open(dir.path()).expect("opens");
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut letters = |n: usize| -> Vec<u8> { (0..n).map(|_| b'a' + (next() % 26) as u8).collect() };
    let keys: Vec<(Vec<u8>, Vec<u8>)> = (0..STORE_ENTITIES)
        .map(|i| {
            let head = entity_key(7, &format!("p{:05}", i / 1000), &format!("r{i:09}"));
            let heap = heap_key(&head);
            (head, heap)
        })
        .collect();
    let mut order: Vec<usize> = (0..keys.len()).collect();
    let mut shuffle = 0x2545_f491_4f6c_dd1du64;
    for i in (1..order.len()).rev() {
        shuffle = shuffle.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        order.swap(i, (shuffle >> 33) as usize % (i + 1));
    }
    for chunk in order.chunks(100) {
        let mut batch = WriteBatch::new();
        for &i in chunk {
            batch.put(keys[i].0.clone(), letters(150));
            batch.put(keys[i].1.clone(), letters(1000));
        }
        store.write(batch).expect("writes");
    }
    store.flush().expect("flushes");
    std::thread::sleep(std::time::Duration::from_secs(20));
    let mut g = c.benchmark_group("store");
    let mut pick = 0x1234_5678_9abc_def1u64;
    let mut lookups = |g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
                       name: &str| {
        // Some VMs drop page cache left idle for seconds: read everything once, so the
        // lookups measure copies out of the page cache, not the disk.
        for (head, heap) in &keys {
            store.get(head).expect("reads");
            store.get(heap).expect("reads");
        }
        g.bench_function(name, |b| {
            b.iter(|| {
                pick ^= pick << 13;
                pick ^= pick >> 7;
                pick ^= pick << 17;
                let (head, heap) = &keys[(pick % u64::from(STORE_ENTITIES)) as usize];
                let found = store.get(black_box(head)).expect("reads").is_some();
                found && store.get(black_box(heap)).expect("reads").is_some()
            })
        });
    };
    lookups(&mut g, "get_head_and_heap_uniform_1m");
    store.compact().expect("compacts");
    lookups(&mut g, "get_head_and_heap_uniform_1m_compacted");
    g.finish();
}

#[cfg(not(feature = "rocksdb"))]
fn store(_: &mut Criterion) {}

/// Entities of the filtered-scan bench, as in the load tool's `filtered-scan`.
#[cfg(feature = "rocksdb")]
const SCAN_ENTITIES: u32 = 20_000;

/// Query Entities' pass over 20,000 entities with `$filter=Tag eq 'needle'` (two match),
/// following continuations (pages of 10,000 examined): the engine's whole scan path,
/// without HTTP. Once with the heads in the memtable (as right after a load), once
/// flushed to files.
#[cfg(feature = "rocksdb")]
fn scan(c: &mut Criterion) {
    use aztable_engine::service::{QueryEntities, TableService};
    use aztable_model::NewEntity;
    use aztable_store::rocks::RocksStore;
    use std::sync::Arc;
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let service = TableService::new(Arc::new(RocksStore::open(dir.path()).expect("opens")));
    service.tables().create_table(DEV_ACCOUNT, "scan").expect("creates");
    rt.block_on(async {
        for i in 0..SCAN_ENTITIES {
            let (pk, rk) = (format!("p{:07}", i / 1000), format!("r{i:09}"));
            let tag = if i % 10_000 == 0 { "needle".to_string() } else { format!("hay{}", i % 7) };
            let body = String::from_utf8(entity_body(&pk, &rk)).expect("utf-8").replace("hay3", &tag);
            let properties = parse_entity(body.as_bytes()).expect("parses").properties;
            let new = NewEntity { partition_key: pk, row_key: rk, properties };
            service.entities().insert_entity(DEV_ACCOUNT, "scan", new).await.expect("inserts");
        }
    });
    // `Tag eq 'needle'` (value summaries skip most runs), and filters no span or Bloom
    // filter narrows that match nothing: on a number and on a String, evaluated on the
    // summary's columns (the load tool's `filtered-walk`, `-string`), and on the RowKey
    // and a number, which neither the plan nor a column narrows, so every row is read
    // (`filtered-walk-rows`)
    let needle = aztable_wire::filter::parse("Tag eq 'needle'").expect("parses");
    let nothing = aztable_wire::filter::parse("not (Count ge 0 and Count le 1000000)").expect("parses");
    let nothing_string = aztable_wire::filter::parse("not (Tag ne 'nothing')").expect("parses");
    let nothing_rows = aztable_wire::filter::parse("RowKey ge 'r' and not (Count ge 0)").expect("parses");
    let pass_with = |filter: &aztable_wire::filter::Expr| {
        rt.block_on(async {
            let (mut found, mut start) = (0, None);
            loop {
                let q = QueryEntities { start, top: 1000, filter: Some(filter.clone()) };
                let page = service.entities().query_entities(DEV_ACCOUNT, "scan", &q).await.expect("queries");
                found += page.entities.len();
                match page.next {
                    Some(next) => start = Some(next),
                    None => break found,
                }
            }
        })
    };
    let (pass, walk) = (|| pass_with(&needle), || pass_with(&nothing));
    let (walk_string, walk_rows) = (|| pass_with(&nothing_string), || pass_with(&nothing_rows));
    assert_eq!((pass(), walk(), walk_string(), walk_rows()), (2, 0, 0, 0));
    let mut g = c.benchmark_group("scan");
    g.throughput(Throughput::Elements(u64::from(SCAN_ENTITIES)));
    g.bench_function("filtered_20k_memtable", |b| b.iter(pass));
    g.bench_function("walk_20k_memtable", |b| b.iter(walk));
    g.bench_function("walk_string_20k_memtable", |b| b.iter(walk_string));
    g.bench_function("walk_rows_20k_memtable", |b| b.iter(walk_rows));
    service.flush().expect("flushes");
    assert_eq!((pass(), walk(), walk_string(), walk_rows()), (2, 0, 0, 0));
    g.bench_function("filtered_20k_files", |b| b.iter(pass));
    g.bench_function("walk_20k_files", |b| b.iter(walk));
    g.bench_function("walk_string_20k_files", |b| b.iter(walk_string));
    g.bench_function("walk_rows_20k_files", |b| b.iter(walk_rows));
    g.finish();
}

#[cfg(not(feature = "rocksdb"))]
fn scan(_: &mut Criterion) {}

criterion_group!(benches, keys, point_read, odata, filter, batch, auth, insight, scan, store);
criterion_main!(benches);
