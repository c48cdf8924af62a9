//! Black-box: `aztable export` and `aztable import` checked against oracles that share no
//! code with them: a reader of the JSON-lines format written here (types from the
//! `@odata.type` annotations and JSON's own kinds, by the format's description, not the
//! importer's code), the table database a pinned real Azurite wrote
//! (`tests/fixtures/azurite-real`, made by `scripts/azurite-fixture.sh`), and an export
//! taken while writers run.

use crate::common::TestServer;
use base64::Engine as _;
use chrono::{DateTime, TimeZone, Utc};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A property value as the reader types it. A Double is kept as its bits, so NaN equals
/// NaN and -0.0 differs from 0.0.
#[derive(Debug, Clone, PartialEq)]
enum Typed {
    Str(String),
    Int32(i32),
    Int64(i64),
    Double(u64),
    Bool(bool),
    DateTime(DateTime<Utc>),
    Guid(String),
    Binary(Vec<u8>),
}

fn dbl(x: f64) -> Typed {
    Typed::Double(x.to_bits())
}

fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32, nanos: u32) -> Typed {
    let t = Utc.with_ymd_and_hms(y, mo, d, h, mi, s).single().expect("a valid time");
    Typed::DateTime(t + chrono::Duration::nanoseconds(i64::from(nanos)))
}

/// One entity as read: its properties (keys and Timestamp included) by name.
type Props = BTreeMap<String, Typed>;

/// Reads one JSON value with its annotation, as the format describes: an annotation
/// names the type; without one a string is a String, a boolean a Boolean, an integer an
/// Int32 and a number with a fraction or exponent a Double.
fn typed(name: &str, annotation: Option<&str>, v: &Value) -> Typed {
    let text = || v.as_str().unwrap_or_else(|| panic!("{name}: {annotation:?} wants a string, not {v}"));
    match annotation {
        Some("Edm.String") => Typed::Str(text().to_owned()),
        Some("Edm.Int64") => Typed::Int64(text().parse().unwrap_or_else(|e| panic!("{name}: {e}"))),
        Some("Edm.Int32") => Typed::Int32(v.as_i64().and_then(|i| i32::try_from(i).ok()).expect("an Int32")),
        Some("Edm.Boolean") => Typed::Bool(v.as_bool().expect("a Boolean")),
        Some("Edm.Double") => match v {
            Value::String(s) => dbl(match s.as_str() {
                "NaN" => f64::NAN,
                "Infinity" => f64::INFINITY,
                "-Infinity" => f64::NEG_INFINITY,
                other => panic!("{name}: a Double as a string is NaN or ±Infinity, not {other:?}"),
            }),
            _ => dbl(v.as_f64().expect("a number")),
        },
        Some("Edm.DateTime") => {
            let t = DateTime::parse_from_rfc3339(text()).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(text().ends_with('Z'), "{name}: a DateTime is written in UTC: {}", text());
            Typed::DateTime(t.with_timezone(&Utc))
        }
        Some("Edm.Guid") => {
            let g = text();
            let shape = g.len() == 36
                && g.char_indices().all(|(i, c)| {
                    if [8, 13, 18, 23].contains(&i) {
                        c == '-'
                    } else {
                        c.is_ascii_hexdigit()
                    }
                });
            assert!(shape, "{name}: not a GUID: {g:?}");
            Typed::Guid(g.to_ascii_lowercase())
        }
        Some("Edm.Binary") => {
            Typed::Binary(base64::engine::general_purpose::STANDARD.decode(text()).expect("base64"))
        }
        Some(other) => panic!("{name}: unknown annotation {other}"),
        None => match v {
            Value::String(s) => Typed::Str(s.clone()),
            Value::Bool(b) => Typed::Bool(*b),
            Value::Number(n) if n.is_i64() || n.is_u64() => Typed::Int32(
                n.as_i64()
                    .and_then(|i| i32::try_from(i).ok())
                    .unwrap_or_else(|| panic!("{name}: an integer beyond Int32 without Edm.Int64: {n}")),
            ),
            Value::Number(n) => dbl(n.as_f64().expect("a number")),
            other => panic!("{name}: no Edm type is written as {other}"),
        },
    }
}

/// Reads an export: its tables in order, each with its entities in order.
fn read_export(text: &str) -> Vec<(String, Vec<Props>)> {
    let mut tables: Vec<(String, Vec<Props>)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let obj: Map<String, Value> = serde_json::from_str(line).unwrap_or_else(|e| panic!("line {n}: {e}"));
        if !obj.contains_key("PartitionKey") {
            let name = obj.get("TableName").and_then(Value::as_str).expect("a table line");
            assert_eq!(obj.len(), 1, "line {n}: a table line holds its name only");
            tables.push((name.to_owned(), Vec::new()));
            continue;
        }
        let mut props = Props::new();
        for (k, v) in &obj {
            if let Some(of) = k.strip_suffix("@odata.type") {
                assert!(obj.contains_key(of), "line {n}: an annotation of no property: {k}");
                continue;
            }
            let annotation = obj.get(&format!("{k}@odata.type")).map(|a| a.as_str().expect("a type name"));
            props.insert(k.clone(), typed(k, annotation, v));
        }
        for key in ["PartitionKey", "RowKey"] {
            assert!(matches!(props.get(key), Some(Typed::Str(_))), "line {n}: {key} is a String");
        }
        assert!(matches!(props.get("Timestamp"), Some(Typed::DateTime(_))), "line {n}: a typed Timestamp");
        tables.last_mut().expect("an entity line after a table line").1.push(props);
    }
    tables
}

fn aztable(args: &[&str]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_aztable"))
        .args(args)
        .env_remove("AZURITE_ACCOUNTS")
        .output()
        .expect("run aztable");
    assert!(
        out.status.success(),
        "aztable {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

fn s(p: &Path) -> String {
    p.to_str().expect("a UTF-8 path").to_owned()
}

/// Every Edm type, edge values included, as the service is sent them.
fn sent() -> Value {
    json!({
        "PartitionKey": "q'uote", "RowKey": "r ow;\u{e9}",
        "S": "<b>\"x\"</b> \u{e9}\u{1F600} \n", "Empty": "",
        "I32Min": -2147483648i64, "I32Max": 2147483647,
        "I64Max@odata.type": "Edm.Int64", "I64Max": "9223372036854775807",
        "I64Min@odata.type": "Edm.Int64", "I64Min": "-9223372036854775808",
        "DMax": 1.7976931348623157e308, "DTiny": 5e-324, "DNeg": -0.5,
        "DWhole@odata.type": "Edm.Double", "DWhole": 5.0,
        "DNaN@odata.type": "Edm.Double", "DNaN": "NaN",
        "DInf@odata.type": "Edm.Double", "DInf": "Infinity",
        "DNegInf@odata.type": "Edm.Double", "DNegInf": "-Infinity",
        "T": true, "F": false,
        "DtMin@odata.type": "Edm.DateTime", "DtMin": "1601-01-01T00:00:00Z",
        "DtMax@odata.type": "Edm.DateTime", "DtMax": "9999-12-31T23:59:59.9999999Z",
        "DtFrac@odata.type": "Edm.DateTime", "DtFrac": "2024-02-29T12:34:56.1234567Z",
        "G@odata.type": "Edm.Guid", "G": "C9DA6455-213D-42C9-9A79-3E9149A57833",
        "Bin@odata.type": "Edm.Binary", "Bin": "AAEC/w==",
        "Long": "y".repeat(5000),
    })
}

/// What [`sent`] must read back as: literals, not a parse of the same JSON.
fn expected() -> Props {
    let mut p = Props::new();
    let mut put = |k: &str, v: Typed| p.insert(k.to_owned(), v);
    put("PartitionKey", Typed::Str("q'uote".into()));
    put("RowKey", Typed::Str("r ow;\u{e9}".into()));
    put("S", Typed::Str("<b>\"x\"</b> \u{e9}\u{1F600} \n".into()));
    put("Empty", Typed::Str(String::new()));
    put("I32Min", Typed::Int32(i32::MIN));
    put("I32Max", Typed::Int32(i32::MAX));
    put("I64Max", Typed::Int64(i64::MAX));
    put("I64Min", Typed::Int64(i64::MIN));
    put("DMax", dbl(f64::MAX));
    put("DTiny", dbl(5e-324));
    put("DNeg", dbl(-0.5));
    put("DWhole", dbl(5.0));
    put("DNaN", dbl(f64::NAN));
    put("DInf", dbl(f64::INFINITY));
    put("DNegInf", dbl(f64::NEG_INFINITY));
    put("T", Typed::Bool(true));
    put("F", Typed::Bool(false));
    put("DtMin", at(1601, 1, 1, 0, 0, 0, 0));
    put("DtMax", at(9999, 12, 31, 23, 59, 59, 999_999_900));
    put("DtFrac", at(2024, 2, 29, 12, 34, 56, 123_456_700));
    put("G", Typed::Guid("c9da6455-213d-42c9-9a79-3e9149a57833".into()));
    put("Bin", Typed::Binary(vec![0, 1, 2, 255]));
    put("Long", Typed::Str("y".repeat(5000)));
    p
}

/// Compares `got` with `want` property by property (Timestamp aside).
#[track_caller]
fn assert_props(got: &Props, want: &Props, what: &str) {
    let names = |p: &Props| p.keys().filter(|k| *k != "Timestamp").cloned().collect::<BTreeSet<_>>();
    assert_eq!(names(got), names(want), "{what}: property names");
    for (k, v) in want {
        assert_eq!(got.get(k), Some(v), "{what}: {k}");
    }
}

#[tokio::test]
async fn an_export_reads_back_value_by_value_with_a_reader_of_its_own() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let server = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    let c = server.client();
    assert_eq!(c.create_table("Typed").await.status, 201);
    assert_eq!(c.create_table("Counts").await.status, 201);
    let before = Utc::now() - chrono::Duration::seconds(1);
    let r = c.insert("Typed", sent()).await;
    assert_eq!(r.status, 201, "{}", r.body);
    for i in 0..300i64 {
        let e = json!({"PartitionKey": format!("p{}", i % 3), "RowKey": format!("{i:04}"), "N": i,
                       "L@odata.type": "Edm.Int64", "L": (i << 40).to_string()});
        assert_eq!(c.insert("Counts", e).await.status, 201);
    }
    let after = Utc::now() + chrono::Duration::seconds(1);
    let file = tmp.path().join("export.jsonl");
    aztable(&["export", "--url", &server.endpoint(), "-o", &s(&file)]);
    let tables = read_export(&std::fs::read_to_string(&file).expect("the export"));

    let names: Vec<&str> = tables.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Counts", "Typed"]);
    let typed = &tables[1].1;
    assert_eq!(typed.len(), 1);
    assert_props(&typed[0], &expected(), "the typed entity");
    let Some(Typed::DateTime(stamp)) = typed[0].get("Timestamp") else {
        unreachable!("checked by the reader")
    };
    assert!(before <= *stamp && *stamp <= after, "the Timestamp is when it was written: {stamp}");

    // (PartitionKey, RowKey) order, every value as written
    let counts = &tables[0].1;
    let mut want: Vec<(String, String, i64)> =
        (0..300i64).map(|i| (format!("p{}", i % 3), format!("{i:04}"), i)).collect();
    want.sort();
    assert_eq!(counts.len(), want.len());
    for (got, (pk, rk, i)) in counts.iter().zip(&want) {
        let mut p = Props::new();
        p.insert("PartitionKey".into(), Typed::Str(pk.clone()));
        p.insert("RowKey".into(), Typed::Str(rk.clone()));
        p.insert("N".into(), Typed::Int32(i32::try_from(*i).expect("small")));
        p.insert("L".into(), Typed::Int64(i << 40));
        assert_props(got, &p, &format!("{pk}/{rk}"));
    }
}

/// The entities `scripts/azurite-fixture.sh` writes through the JS SDK into a real
/// Azurite (`tests/sdk/js/azurite_fixture_writer.mjs`), as literals.
fn azurite_expected() -> Vec<Props> {
    let entity = |rk: &str, extra: Vec<(&str, Typed)>| {
        let mut p = Props::new();
        p.insert("PartitionKey".into(), Typed::Str("edm".into()));
        p.insert("RowKey".into(), Typed::Str(rk.into()));
        for (k, v) in extra {
            p.insert(k.into(), v);
        }
        p
    };
    vec![
        entity(
            "1",
            vec![
                ("S", Typed::Str("<b>\"x\"</b> \u{e9}\u{1F600}".into())),
                ("Empty", Typed::Str(String::new())),
                ("I32", Typed::Int32(-2_147_483_648)),
                ("I64", Typed::Int64(9_223_372_036_854_775_807)),
                ("I64Neg", Typed::Int64(-9_223_372_036_854_775_808)),
                ("D", dbl(0.5)),
                ("DWhole", dbl(5.0)),
                ("DNaN", dbl(f64::NAN)),
                ("DInf", dbl(f64::INFINITY)),
                ("B", Typed::Bool(true)),
                ("Dt", at(2020, 2, 29, 12, 0, 0, 0)),
                ("G", Typed::Guid("c9da6455-213d-42c9-9a79-3e9149a57833".into())),
                ("Bin", Typed::Binary(vec![0, 1, 2, 255])),
            ],
        ),
        entity("2", vec![("Long", Typed::Str("z".repeat(30_000))), ("F", Typed::Bool(false))]),
    ]
}

#[tokio::test]
async fn a_database_written_by_real_azurite_imports_value_by_value() {
    let fixture =
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/azurite-real/__azurite_db_table__.json");
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    aztable(&["import", "--azurite", fixture, "--location", &s(&dir)]);
    let file = tmp.path().join("export.jsonl");
    aztable(&["export", "--location", &s(&dir), "-o", &s(&file)]);
    let tables = read_export(&std::fs::read_to_string(&file).expect("the export"));
    let names: Vec<&str> = tables.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["AzuriteEdm", "emptyazurite"]);
    assert!(tables[1].1.is_empty());
    let got = &tables[0].1;
    let want = azurite_expected();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_props(g, w, "an entity Azurite stored");
    }
    // the Timestamps are Azurite's lastModifiedTime, to the tick
    let stamps = [at(2026, 11, 27, 7, 25, 10, 324_135_800), at(2026, 11, 27, 7, 25, 10, 329_140_500)];
    for (g, stamp) in got.iter().zip(stamps) {
        assert_eq!(g.get("Timestamp"), Some(&stamp), "lastModifiedTime kept");
    }
}

#[tokio::test]
async fn an_export_taken_while_writers_run_holds_every_earlier_row_whole() {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table("live").await.status, 201);
    // a row is whole when its three copies of the version agree (V, W, and the long value
    // kept apart from the entity's head)
    let row = |pk: &str, rk: &str, v: i64| json!({"PartitionKey": pk, "RowKey": rk, "V": v, "W": v, "Long": format!("{v};").repeat(300)});
    let mut bulk = String::from("{\"TableName\":\"live\"}\n");
    for i in 0..4000 {
        bulk.push_str(&format!("{}\n", row("hot", &format!("{i:05}"), 0)));
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let seed = tmp.path().join("seed.jsonl");
    std::fs::write(&seed, bulk).expect("seed");
    aztable(&["import", "--url", &server.endpoint(), "-i", &s(&seed)]);

    let acked: Arc<Mutex<Vec<(String, String)>>> = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for t in 0..4i64 {
        let (c, acked, stop) = (c.clone(), Arc::clone(&acked), Arc::clone(&stop));
        writers.push(tokio::spawn(async move {
            let mut k = 1i64;
            while !stop.load(Ordering::Relaxed) {
                // replace a seeded row with a new version, and insert a new row
                let rk = format!("{:05}", (k * 7919 + t * 1000) % 4000);
                let v = k * 10 + t;
                let body = row("hot", &rk, v);
                let path = crate::common::entity_path("live", "hot", &rk);
                let r = c.send("PUT", &path, &[], Some(&body.to_string())).await;
                assert_eq!(r.status, 204, "{}", r.body);
                let new_rk = format!("{t}-{k:06}");
                let r = c.insert("live", row("new", &new_rk, v)).await;
                assert_eq!(r.status, 201, "{}", r.body);
                acked.lock().expect("acked").push(("new".to_owned(), new_rk));
                k += 1;
            }
        }));
    }
    // let the writers get going, then export while they run
    while acked.lock().expect("acked").len() < 20 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let before: Vec<(String, String)> = acked.lock().expect("acked").clone();
    let file = tmp.path().join("export.jsonl");
    let (endpoint, out) = (server.endpoint(), s(&file));
    tokio::task::spawn_blocking(move || {
        aztable(&["export", "--url", &endpoint, "--table", "live", "-o", &out])
    })
    .await
    .expect("export");
    let during = acked.lock().expect("acked").len() - before.len();
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.expect("a writer");
    }
    assert!(during > 0, "no write was acknowledged while the export ran: the test proved nothing");

    let tables = read_export(&std::fs::read_to_string(&file).expect("the export"));
    assert_eq!(tables.len(), 1);
    let mut seen = BTreeSet::new();
    for p in &tables[0].1 {
        let (Some(Typed::Str(pk)), Some(Typed::Str(rk))) = (p.get("PartitionKey"), p.get("RowKey")) else {
            unreachable!("checked by the reader")
        };
        let Some(Typed::Int32(v)) = p.get("V") else { panic!("{pk}/{rk}: no V: {p:?}") };
        assert_eq!(p.get("W"), Some(&Typed::Int32(*v)), "{pk}/{rk}: a torn row");
        assert_eq!(p.get("Long"), Some(&Typed::Str(format!("{v};").repeat(300))), "{pk}/{rk}: a torn row");
        assert!(seen.insert((pk.clone(), rk.clone())), "{pk}/{rk} twice");
    }
    for i in 0..4000 {
        assert!(seen.contains(&("hot".to_owned(), format!("{i:05}"))), "seeded row {i:05} missing");
    }
    for key in &before {
        assert!(seen.contains(key), "{key:?} was acknowledged before the export began, and is missing");
    }
}
