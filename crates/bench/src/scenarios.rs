//! The scenarios: table setup, batch preload, N workers (one keep-alive connection each)
//! running one kind of request until the deadline or the request budget, then clean-up.

use crate::client::{encode_query_value, Conn, Req, Target};
use crate::conns;
use crate::entity::{
    batch_body, batch_outcome, count_entities, entity_json, preload_tag, push_entity_json, BatchBody, Layout,
    Rng, BATCH_SIZE, NEEDLE_EVERY,
};
use crate::stats::{cpu_per_request, cpu_us, rss_kb, settle, Recorder, Report, ScanSide};
use crate::summary::CpuPer;
use http::Method;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// The load patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scenario {
    InsertManyPartitions,
    InsertOnePartition,
    PointRead,
    BatchInsert,
    RangeQuery,
    FilteredScan,
    Mixed,
    PageAll,
    /// A full pass with a filter that nothing matches and no value summary narrows
    /// ([`NOTHING_FILTER`]): a comparison of numbers, which aztable evaluates on its
    /// summary's columns once it has them (not part of `all`).
    FilteredWalk,
    /// The same over a short String ([`STRING_NOTHING_FILTER`]; not part of `all`).
    FilteredWalkString,
    /// The same over RowKeys outside a span ([`ROWS_NOTHING_FILTER`]), which neither the
    /// plan nor a column narrows: the server reads every row (not part of `all`).
    FilteredWalkRows,
    /// The same looking for a RowKey in every partition ([`ROW_KEY_FILTER`]): aztable
    /// seeks past each partition's other rows (not part of `all`).
    FilteredRowKey,
    /// Random point reads while `--scanners` other clients page through the whole table
    /// with a filter that matches nothing (not part of `all`: its preload is large).
    ReadUnderScans,
}

impl Scenario {
    pub(crate) const ALL: [Scenario; 8] = [
        Scenario::InsertManyPartitions,
        Scenario::InsertOnePartition,
        Scenario::PointRead,
        Scenario::BatchInsert,
        Scenario::RangeQuery,
        Scenario::FilteredScan,
        Scenario::Mixed,
        Scenario::PageAll,
    ];

    /// Scenarios that `all` leaves out; named explicitly only.
    const EXTRA: [Scenario; 5] = [
        Scenario::FilteredWalk,
        Scenario::FilteredWalkString,
        Scenario::FilteredWalkRows,
        Scenario::FilteredRowKey,
        Scenario::ReadUnderScans,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Scenario::InsertManyPartitions => "insert-many-partitions",
            Scenario::InsertOnePartition => "insert-one-partition",
            Scenario::PointRead => "point-read",
            Scenario::BatchInsert => "batch-insert",
            Scenario::RangeQuery => "range-query",
            Scenario::FilteredScan => "filtered-scan",
            Scenario::Mixed => "mixed",
            Scenario::PageAll => "page-all",
            Scenario::FilteredWalk => "filtered-walk",
            Scenario::FilteredWalkString => "filtered-walk-string",
            Scenario::FilteredWalkRows => "filtered-walk-rows",
            Scenario::FilteredRowKey => "filtered-row-key",
            Scenario::ReadUnderScans => "read-under-scans",
        }
    }

    /// Parses a comma-separated list; `all` is every scenario.
    pub(crate) fn parse_list(list: &str) -> Result<Vec<Scenario>, String> {
        let mut out = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name == "all" {
                out.extend(Scenario::ALL);
                continue;
            }
            let mut known = Scenario::ALL.into_iter().chain(Scenario::EXTRA);
            let s = known.find(|s| s.name() == name).ok_or_else(|| {
                let names: Vec<&str> =
                    Scenario::ALL.iter().chain(&Scenario::EXTRA).map(|s| s.name()).collect();
                format!("unknown scenario '{name}' (one of: all, {})", names.join(", "))
            })?;
            out.push(s);
        }
        if out.is_empty() {
            return Err("no scenario given".into());
        }
        Ok(out)
    }

    /// Whether the scenario reads preloaded entities.
    pub(crate) fn reads_preloaded(self) -> bool {
        matches!(
            self,
            Scenario::PointRead
                | Scenario::RangeQuery
                | Scenario::FilteredScan
                | Scenario::FilteredWalk
                | Scenario::FilteredWalkString
                | Scenario::FilteredWalkRows
                | Scenario::FilteredRowKey
                | Scenario::Mixed
                | Scenario::PageAll
                | Scenario::ReadUnderScans
        )
    }

    /// What the summaries count server CPU per: the entity for batches and scans (one
    /// request moves many), the request for the rest.
    pub(crate) fn cpu_per(self) -> CpuPer {
        match self {
            Scenario::BatchInsert
            | Scenario::FilteredScan
            | Scenario::FilteredWalk
            | Scenario::FilteredWalkString
            | Scenario::FilteredWalkRows
            | Scenario::FilteredRowKey
            | Scenario::PageAll => CpuPer::Entity,
            _ => CpuPer::Request,
        }
    }

    /// `--preload` when not given: a table large enough that a pass of the scanners takes
    /// many pages for `read-under-scans`, [`DEFAULT_PRELOAD`] for the other readers, none
    /// for the writers.
    pub(crate) fn default_preload(self) -> u64 {
        match self {
            Scenario::ReadUnderScans => DEFAULT_SCAN_PRELOAD,
            s if s.reads_preloaded() => DEFAULT_PRELOAD,
            _ => 0,
        }
    }
}

/// Settings shared by every scenario of an invocation.
#[derive(Debug, Clone)]
pub(crate) struct Params {
    pub connections: usize,
    /// `read-under-scans`: clients paging through the table beside the `connections`
    /// point readers.
    pub scanners: usize,
    pub duration: Duration,
    pub max_requests: Option<u64>,
    /// Explicit `--preload`; `None`: [`Scenario::default_preload`].
    pub preload: Option<u64>,
    pub partition_size: u64,
    pub range_size: u64,
    pub read_percent: u64,
    /// Point reads and mixed pick among this many consecutive preloaded entities.
    pub hot_keys: Option<u64>,
    /// Use (and keep) this table; an existing one is not preloaded again.
    pub table: Option<String>,
    pub keep_tables: bool,
    pub pid: Option<u32>,
    /// Wait up to this long for these processes (both servers of a comparison) to go
    /// idle before measuring.
    pub settle: Option<(Duration, Vec<u32>)>,
    pub seed: u64,
}

/// At most this many connections load a table (fewer when `--connections` is lower):
/// enough to keep a server busy, and few enough that the measured run's connections
/// do not meet them still closing at the server's connection limit.
const PRELOAD_CONNECTIONS: usize = 32;

/// Default preload of scenarios that read.
pub(crate) const DEFAULT_PRELOAD: u64 = 10_000;

/// Default preload of `read-under-scans`: 20 pages of 10,000 examined entities per pass.
pub(crate) const DEFAULT_SCAN_PRELOAD: u64 = 200_000;

/// A filter no preloaded entity matches (`Count` is below 1,000,000 and never negative)
/// and no value summary narrows (a `not`: a row without `Count` would match, so nothing
/// is required of every match): the server has to examine every row, and a page comes
/// back empty, cut by its budget.
const NOTHING_FILTER: &str = "not (Count ge 0 and Count le 1000000)";

/// A filter no preloaded entity matches (every `Tag` is `needle` or `hay…`) and no value
/// summary's span or Bloom filter narrows (a `not`), on a short String.
const STRING_NOTHING_FILTER: &str = "not (Tag ne 'nothing')";

/// The same with the RowKey (every preloaded one starts with `r`): no summary column
/// holds the keys, and the RowKeys it takes hold every row, so every row is read from
/// the store, its RowKey and `Count` evaluated.
const ROWS_NOTHING_FILTER: &str = "RowKey ge 'r' and not (Count ge 0)";

/// A RowKey no preloaded entity has, looked for in every partition (no PartitionKey):
/// the planner bounds the RowKey in each partition, not the partitions.
const ROW_KEY_FILTER: &str = "RowKey eq 'nothing'";

struct Ctx {
    target: Arc<Target>,
    scenario: Scenario,
    table: String,
    layout: Layout,
    range_size: u64,
    read_percent: u64,
    hot_keys: Option<u64>,
    run_id: u64,
    deadline: Instant,
    max_requests: Option<u64>,
    started: AtomicU64,
    /// Set once the point readers of `read-under-scans` are done: the scanners stop.
    readers_done: AtomicBool,
}

impl Ctx {
    /// A preloaded entity for a point read or upsert: any of them, or one of the
    /// `--hot-keys` consecutive ones in the middle of the table.
    fn pick(&self, rng: &mut Rng) -> u64 {
        match self.hot_keys {
            Some(hot) if hot > 0 && hot < self.layout.entities => {
                (self.layout.entities - hot) / 2 + rng.below(hot)
            }
            _ => rng.below(self.layout.entities),
        }
    }

    /// Whether another operation may start.
    fn take(&self) -> bool {
        if Instant::now() >= self.deadline {
            return false;
        }
        match self.max_requests {
            Some(max) => self.started.fetch_add(1, Ordering::Relaxed) < max,
            None => true,
        }
    }

    /// Whether a `read-under-scans` scanner may request another page.
    fn scanning(&self) -> bool {
        Instant::now() < self.deadline && !self.readers_done.load(Ordering::Relaxed)
    }

    fn entity_path(&self, pk: &str, rk: &str) -> String {
        format!("{}/{}(PartitionKey='{pk}',RowKey='{rk}')", self.target.base_path, self.table)
    }
}

/// Runs `scenario` against `target` and returns its report.
pub(crate) async fn run(target: Arc<Target>, scenario: Scenario, params: &Params) -> Result<Report, String> {
    let run_id = Rng::new(params.seed ^ now_nanos()).next_u64();
    let table = params
        .table
        .clone()
        .unwrap_or_else(|| format!("bench{}{:08x}", scenario.name().replace('-', ""), run_id as u32));
    let preload = params.preload.unwrap_or(scenario.default_preload());
    if scenario.reads_preloaded() && preload == 0 {
        return Err(format!("{}: needs --preload > 0", scenario.name()));
    }
    if scenario == Scenario::RangeQuery && params.range_size > params.partition_size.min(preload) {
        return Err("range-query: --range-size must not exceed the partition size and the preload".into());
    }
    let layout = Layout { entities: preload, partition_size: params.partition_size };
    let mut report = Report::new(scenario.name(), &target.endpoint, &table, params.connections);
    report.preload = preload;

    // The control connection is closed during the measured run, which may use every
    // connection the server allows.
    let created = create_table(&mut conns::one(&target).await?, &target, &table).await?;
    if !created && params.table.is_none() {
        return Err(format!("table {table} already exists"));
    }
    if created && preload > 0 {
        let workers = params.connections.min(PRELOAD_CONNECTIONS);
        let took = preload_table(&target, &table, layout, workers).await?;
        report.preload_entities_per_s = preload as f64 / took.as_secs_f64().max(1e-9);
    }

    if let Some((max, pids)) = &params.settle {
        report.settled = settle(pids, *max).await;
    }

    // Every connection is open before the clock starts.
    let scanners = if scenario == Scenario::ReadUnderScans { params.scanners } else { 0 };
    let mut worker_conns = conns::open(&target, params.connections).await?;
    let scanner_conns = conns::open(&target, scanners).await?;
    let ctx = Arc::new(Ctx {
        target: target.clone(),
        scenario,
        table: table.clone(),
        layout,
        range_size: params.range_size,
        read_percent: params.read_percent,
        hot_keys: params.hot_keys,
        run_id,
        deadline: Instant::now() + params.duration,
        max_requests: params.max_requests,
        started: AtomicU64::new(0),
        readers_done: AtomicBool::new(false),
    });
    let (server_cpu0, client_cpu0) = (params.pid.and_then(cpu_us), cpu_us(std::process::id()));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for (worker, conn) in worker_conns.drain(..).enumerate() {
        let ctx = ctx.clone();
        let seed = params.seed.wrapping_add(worker as u64 * 7919) ^ run_id;
        tasks.push(tokio::spawn(async move { work(ctx, conn, worker as u64, seed).await }));
    }
    let mut scanners = Vec::new();
    for conn in scanner_conns {
        let ctx = ctx.clone();
        scanners.push(tokio::spawn(async move { scanner(ctx, conn).await }));
    }
    let mut rec = Recorder::default();
    for task in tasks {
        rec.merge(task.await.map_err(|e| format!("worker: {e}"))??);
    }
    let elapsed = start.elapsed();
    ctx.readers_done.store(true, Ordering::Relaxed);
    let mut scans = ScanSide { scanners: params.scanners, ..ScanSide::default() };
    let mut scan_rec = Recorder::default();
    for task in scanners {
        let (r, passes) = task.await.map_err(|e| format!("scanner: {e}"))??;
        scan_rec.merge(r);
        scans.passes += passes;
    }
    // The scanners stop after the page in flight at the deadline; their own span.
    let scan_elapsed = start.elapsed();
    let (server_cpu1, client_cpu1) = (params.pid.and_then(cpu_us), cpu_us(std::process::id()));
    let requests = rec.requests + scan_rec.requests;
    report.finish(rec, elapsed);
    if scenario == Scenario::ReadUnderScans {
        report.errors += scan_rec.errors;
        if report.first_error.is_none() {
            report.first_error = scan_rec.first_error.take();
        }
        scans.finish(scan_rec, scan_elapsed);
        scans.server_cores = match (server_cpu0, server_cpu1) {
            (Some(a), Some(b)) if b >= a => Some((b - a) as f64 / 1e6 / scan_elapsed.as_secs_f64().max(1e-9)),
            _ => None,
        };
        report.scans = Some(scans);
    }
    report.rss_kb = params.pid.and_then(rss_kb);
    // Per request of any kind (point reads and scan pages alike).
    report.server_cpu_us = cpu_per_request(server_cpu0, server_cpu1, requests);
    report.server_cpu_total_us = server_cpu0.zip(server_cpu1).and_then(|(a, b)| b.checked_sub(a));
    report.client_cpu_us = cpu_per_request(client_cpu0, client_cpu1, requests);

    if params.table.is_none() && !params.keep_tables {
        let req = Req::new(Method::DELETE, format!("{}/Tables('{table}')", target.base_path));
        let resp = conns::one(&target).await?.send(&req).await?;
        if !resp.ok() {
            eprintln!("warning: deleting table {table} answered {}", resp.status);
        }
    }
    Ok(report)
}

fn now_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// Creates the table; `Ok(false)` if it already exists.
async fn create_table(conn: &mut Conn, target: &Target, table: &str) -> Result<bool, String> {
    let body = serde_json::json!({ "TableName": table }).to_string().into_bytes();
    let req = Req::new(Method::POST, format!("{}/Tables", target.base_path))
        .json(body)
        .header("prefer", "return-no-content");
    let resp = conn.send(&req).await?;
    match resp.status {
        200..=299 => Ok(true),
        409 => Ok(false),
        s => Err(format!("create table {table}: HTTP {s}: {}", String::from_utf8_lossy(&resp.body))),
    }
}

/// Fills the table with `layout.entities` entities through 100-entity batches over
/// `connections` connections (closed at the end); returns the time taken.
async fn preload_table(
    target: &Arc<Target>,
    table: &str,
    layout: Layout,
    connections: usize,
) -> Result<Duration, String> {
    let ranges = Arc::new(layout.batch_ranges());
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for worker in 0..connections {
        let (target, ranges, next, table) = (target.clone(), ranges.clone(), next.clone(), table.to_string());
        tasks.push(tokio::spawn(async move {
            let mut conn = conns::one(&target).await?;
            let mut rng = Rng::new(worker as u64 + 1);
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(s, e)) = ranges.get(k) else { return Ok::<(), String>(()) };
                let entities: Vec<Vec<u8>> = (s..e)
                    .map(|i| {
                        entity_json(
                            &layout.partition_key(i),
                            &Layout::row_key(i),
                            i,
                            &preload_tag(i),
                            &mut rng,
                        )
                    })
                    .collect();
                let (ct, body) = batch_body(&target.base_url, &table, k as u64, &entities);
                let req = Req::new(Method::POST, format!("{}/$batch", target.base_path))
                    .with_body(ct, body)
                    .header("x-ms-client-request-id", format!("preload-{k}"));
                let resp = conn.send(&req).await?;
                let outcome = if resp.ok() { batch_outcome(&resp.body, e - s) } else { Err(String::new()) };
                if let Err(why) = outcome {
                    let text = String::from_utf8_lossy(&resp.body);
                    return Err(format!("preload batch {k}: HTTP {} {why}: {:.300}", resp.status, text));
                }
            }
        }));
    }
    for task in tasks {
        task.await.map_err(|e| format!("preload worker: {e}"))??;
    }
    Ok(start.elapsed())
}

/// One worker: its own connection, operations until the context says stop.
async fn work(ctx: Arc<Ctx>, mut conn: Conn, worker: u64, seed: u64) -> Result<Recorder, String> {
    let mut rng = Rng::new(seed);
    let mut rec = Recorder::default();
    let mut seq = 0u64;
    while ctx.take() {
        seq += 1;
        match ctx.scenario {
            Scenario::InsertManyPartitions | Scenario::InsertOnePartition => {
                let (pk, rk) = if ctx.scenario == Scenario::InsertManyPartitions {
                    (format!("i{:08x}w{worker:03}n{seq:09}", ctx.run_id as u32), "r".to_string())
                } else {
                    (format!("one{:08x}", ctx.run_id as u32), format!("w{worker:03}n{seq:09}"))
                };
                let body = entity_json(&pk, &rk, seq, "hay", &mut rng);
                let req = Req::new(Method::POST, format!("{}/{}", ctx.target.base_path, ctx.table))
                    .json(body)
                    .header("prefer", "return-no-content");
                send(&mut conn, &req, &mut rec, 1).await;
            }
            Scenario::PointRead | Scenario::ReadUnderScans => {
                let i = ctx.pick(&mut rng);
                let req =
                    Req::new(Method::GET, ctx.entity_path(&ctx.layout.partition_key(i), &Layout::row_key(i)));
                send(&mut conn, &req, &mut rec, 1).await;
            }
            Scenario::Mixed => {
                let i = ctx.pick(&mut rng);
                let path = ctx.entity_path(&ctx.layout.partition_key(i), &Layout::row_key(i));
                let req = if rng.below(100) < ctx.read_percent {
                    Req::new(Method::GET, path)
                } else {
                    let (pk, rk) = (ctx.layout.partition_key(i), Layout::row_key(i));
                    Req::new(Method::PUT, path).json(entity_json(
                        &pk,
                        &rk,
                        i + seq,
                        &preload_tag(i),
                        &mut rng,
                    ))
                };
                send(&mut conn, &req, &mut rec, 1).await;
            }
            Scenario::BatchInsert => {
                let pk = format!("b{:08x}w{worker:03}n{seq:07}", ctx.run_id as u32);
                let mut body = BatchBody::new(&ctx.target.base_url, &ctx.table, seq, BATCH_SIZE * 1100);
                let mut entity = Vec::with_capacity(1200);
                for i in 0..BATCH_SIZE as u64 {
                    entity.clear();
                    push_entity_json(&mut entity, &pk, &Layout::row_key(i), seq * 1000 + i, "hay", &mut rng);
                    body.push(&entity);
                }
                let (ct, body) = body.finish();
                let req =
                    Req::new(Method::POST, format!("{}/$batch", ctx.target.base_path)).with_body(ct, body);
                let t = Instant::now();
                match conn.send(&req).await {
                    Ok(resp) => {
                        rec.request(t.elapsed());
                        let outcome = if resp.ok() {
                            batch_outcome(&resp.body, BATCH_SIZE as u64)
                        } else {
                            Err(String::new())
                        };
                        match outcome {
                            Ok(()) => rec.entities += BATCH_SIZE as u64,
                            Err(why) => rec.error(|| {
                                let text = String::from_utf8_lossy(&resp.body);
                                format!("HTTP {} {why}: {text:.300}", resp.status)
                            }),
                        }
                    }
                    Err(e) => rec.error(|| e),
                }
            }
            Scenario::RangeQuery => {
                let full_partitions = (ctx.layout.entities / ctx.layout.partition_size).max(1);
                let part = rng.below(full_partitions);
                let span = ctx.layout.partition_size.min(ctx.layout.entities);
                let first = part * ctx.layout.partition_size + rng.below(span - ctx.range_size + 1);
                let filter = format!(
                    "PartitionKey eq '{}' and RowKey ge '{}' and RowKey lt '{}'",
                    ctx.layout.partition_key(first),
                    Layout::row_key(first),
                    Layout::row_key(first + ctx.range_size)
                );
                let req = Req::new(Method::GET, format!("{}/{}()", ctx.target.base_path, ctx.table))
                    .query(format!("$filter={}", encode_query_value(&filter)));
                let t = Instant::now();
                match conn.send(&req).await {
                    Ok(resp) if resp.ok() => {
                        rec.request(t.elapsed());
                        let n = count_entities(&resp.body);
                        rec.entities += n;
                        if n != ctx.range_size && resp.header("x-ms-continuation-nextpartitionkey").is_none()
                        {
                            rec.error(|| format!("range query returned {n} of {} entities", ctx.range_size));
                        }
                    }
                    Ok(resp) => {
                        rec.request(t.elapsed());
                        rec.error(|| {
                            format!("HTTP {}: {:.300}", resp.status, String::from_utf8_lossy(&resp.body))
                        });
                    }
                    Err(e) => rec.error(|| e),
                }
            }
            Scenario::FilteredScan
            | Scenario::FilteredWalk
            | Scenario::FilteredWalkString
            | Scenario::FilteredWalkRows
            | Scenario::FilteredRowKey
            | Scenario::PageAll => scan(&ctx, &mut conn, &mut rec).await,
        }
    }
    Ok(rec)
}

/// Sends a request whose success is any 2xx, crediting `entities`.
async fn send(conn: &mut Conn, req: &Req, rec: &mut Recorder, entities: u64) {
    let t = Instant::now();
    match conn.send(req).await {
        Ok(resp) => {
            rec.request(t.elapsed());
            if resp.ok() {
                rec.entities += entities;
            } else {
                rec.error(|| format!("HTTP {}: {:.300}", resp.status, String::from_utf8_lossy(&resp.body)));
            }
        }
        Err(e) => rec.error(|| e),
    }
}

/// One full pass over the table following continuations: `filtered-scan` (`Tag eq
/// 'needle'`) and the walks ([`NOTHING_FILTER`], [`STRING_NOTHING_FILTER`],
/// [`ROWS_NOTHING_FILTER`], [`ROW_KEY_FILTER`]) credit the table size as examined, `page-all` what came back.
async fn scan(ctx: &Ctx, conn: &mut Conn, rec: &mut Recorder) {
    let filtered = ctx.scenario != Scenario::PageAll;
    let base = match ctx.scenario {
        Scenario::FilteredScan => format!("$filter={}", encode_query_value("Tag eq 'needle'")),
        Scenario::FilteredWalk => format!("$filter={}", encode_query_value(NOTHING_FILTER)),
        Scenario::FilteredWalkString => format!("$filter={}", encode_query_value(STRING_NOTHING_FILTER)),
        Scenario::FilteredWalkRows => format!("$filter={}", encode_query_value(ROWS_NOTHING_FILTER)),
        Scenario::FilteredRowKey => format!("$filter={}", encode_query_value(ROW_KEY_FILTER)),
        _ => "$top=1000".to_string(),
    };
    let mut query = base.clone();
    let mut found = 0u64;
    // Bounded: at most one page per entity (plus slack) even if the server never ends.
    for _ in 0..ctx.layout.entities + 10 {
        let req = Req::new(Method::GET, format!("{}/{}()", ctx.target.base_path, ctx.table)).query(query);
        let t = Instant::now();
        let resp = match conn.send(&req).await {
            Ok(resp) => resp,
            Err(e) => return rec.error(|| e),
        };
        rec.request(t.elapsed());
        if !resp.ok() {
            return rec
                .error(|| format!("HTTP {}: {:.300}", resp.status, String::from_utf8_lossy(&resp.body)));
        }
        found += count_entities(&resp.body);
        let next_pk = resp.header("x-ms-continuation-nextpartitionkey");
        let next_rk = resp.header("x-ms-continuation-nextrowkey");
        match (next_pk, next_rk) {
            (Some(pk), rk) => query = next_page_query(&base, pk, rk),
            (None, _) => {
                if filtered {
                    let expected = match ctx.scenario {
                        Scenario::FilteredScan => ctx.layout.entities.div_ceil(NEEDLE_EVERY),
                        _ => 0,
                    };
                    if found != expected {
                        return rec.error(|| format!("filtered scan found {found} of {expected} needles"));
                    }
                    rec.entities += ctx.layout.entities;
                } else {
                    rec.entities += found;
                }
                return;
            }
        }
    }
    rec.error(|| "scan did not end".into());
}

/// One `read-under-scans` scanner: passes over the whole table with
/// [`ROWS_NOTHING_FILTER`] (every row read from the store), following continuations
/// to the end and then starting over, until the deadline or the point readers are done
/// (the page in flight then completes). Every page should be empty; each page is a
/// request, and the entities examined are credited by where the continuation points
/// (preloaded row keys carry the entity's index), the rest of the table when a pass
/// ends. Returns the recorder and the number of complete passes; stops at the first
/// error.
async fn scanner(ctx: Arc<Ctx>, mut conn: Conn) -> Result<(Recorder, u64), String> {
    let mut rec = Recorder::default();
    let base = format!("$filter={}", encode_query_value(ROWS_NOTHING_FILTER));
    let path = format!("{}/{}()", ctx.target.base_path, ctx.table);
    let mut query = base.clone();
    // Entities of the current pass credited so far.
    let mut pos = 0u64;
    let mut passes = 0u64;
    while ctx.scanning() {
        let req = Req::new(Method::GET, path.clone()).query(query);
        let t = Instant::now();
        let resp = match conn.send(&req).await {
            Ok(resp) => resp,
            Err(e) => {
                rec.error(|| e);
                break;
            }
        };
        rec.request(t.elapsed());
        if !resp.ok() {
            rec.error(|| format!("HTTP {}: {:.300}", resp.status, String::from_utf8_lossy(&resp.body)));
            break;
        }
        let found = count_entities(&resp.body);
        if found > 0 {
            rec.error(|| format!("'{ROWS_NOTHING_FILTER}' matched {found} entities"));
            break;
        }
        let next_pk = resp.header("x-ms-continuation-nextpartitionkey");
        let next_rk = resp.header("x-ms-continuation-nextrowkey");
        match (next_pk, next_rk) {
            (Some(pk), rk) => {
                query = next_page_query(&base, pk, rk);
                if let Some(rk) = rk {
                    if let Some(at) =
                        continuation_index(rk).filter(|&at| at >= pos && at <= ctx.layout.entities)
                    {
                        rec.entities += at - pos;
                        pos = at;
                    }
                }
            }
            (None, _) => {
                rec.entities += ctx.layout.entities.saturating_sub(pos);
                pos = 0;
                passes += 1;
                query = base.clone();
            }
        }
    }
    Ok((rec, passes))
}

/// The index of the preloaded entity a continuation row key points at: tokens in the
/// service's `1!<len>!<base64url>` shape around a [`Layout::row_key`] (`r000123456`);
/// `None` for anything else (another server's opaque tokens).
fn continuation_index(token: &str) -> Option<u64> {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine as _;
    let (_, b64) = token.strip_prefix("1!")?.split_once('!')?;
    let key = URL_SAFE_NO_PAD.decode(b64).ok()?;
    let digits = key.strip_prefix(b"r")?;
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// The query of the page a continuation names: `base` and its NextPartitionKey (and
/// NextRowKey).
fn next_page_query(base: &str, pk: &str, rk: Option<&str>) -> String {
    let mut query = format!("{base}&NextPartitionKey={}", encode_query_value(pk));
    if let Some(rk) = rk {
        query.push_str(&format!("&NextRowKey={}", encode_query_value(rk)));
    }
    query
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_indexes() {
        // "r000123456" as the server encodes a continuation key
        assert_eq!(continuation_index("1!14!cjAwMDEyMzQ1Ng"), Some(123_456));
        assert_eq!(continuation_index("1!4!cDAw"), None, "a partition key, not a row key");
        assert_eq!(continuation_index("r000123456"), None);
        assert_eq!(continuation_index("1!x"), None);
    }

    #[test]
    fn default_preloads() {
        assert_eq!(Scenario::ReadUnderScans.default_preload(), DEFAULT_SCAN_PRELOAD);
        assert_eq!(Scenario::PointRead.default_preload(), DEFAULT_PRELOAD);
        assert_eq!(Scenario::BatchInsert.default_preload(), 0);
        assert!(!Scenario::ALL.contains(&Scenario::ReadUnderScans), "not part of `all`");
    }
}
