//! Per-worker counters ([`Recorder`]), the merged result of one scenario run ([`Report`])
//! and its one-line text / JSON forms, and the server's CPU time and memory from `/proc`.

use crate::table::round;
use serde_json::json;
use std::time::Duration;

/// What one worker saw.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    /// Request latencies in microseconds.
    pub latencies_us: Vec<u32>,
    pub requests: u64,
    /// Non-2xx responses, failed batch sub-requests and transport errors.
    pub errors: u64,
    /// Entities written, read, returned or examined (per scenario).
    pub entities: u64,
    /// The first error, for diagnosis.
    pub first_error: Option<String>,
}

impl Recorder {
    pub(crate) fn request(&mut self, latency: Duration) {
        self.requests += 1;
        self.latencies_us.push(latency.as_micros().min(u128::from(u32::MAX)) as u32);
    }

    pub(crate) fn error(&mut self, what: impl FnOnce() -> String) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(what());
        }
    }

    pub(crate) fn merge(&mut self, other: Recorder) {
        self.latencies_us.extend(other.latencies_us);
        self.requests += other.requests;
        self.errors += other.errors;
        self.entities += other.entities;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }
}

/// The result of one scenario against one endpoint.
#[derive(Debug, Clone, Default)]
pub(crate) struct Report {
    pub scenario: String,
    /// The endpoint's label (its host:port unless given).
    pub label: String,
    pub endpoint: String,
    pub table: String,
    pub connections: usize,
    pub preload: u64,
    /// Preload rate in entities/s (0 when nothing was preloaded).
    pub preload_entities_per_s: f64,
    pub elapsed_s: f64,
    pub requests: u64,
    pub errors: u64,
    pub entities: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Server RSS after the run, when `--pid` was given.
    pub rss_kb: Option<u64>,
    /// CPU time (user + system) the server process spent during the measured run, per
    /// request, in microseconds, when `--pid` was given.
    pub server_cpu_us: Option<f64>,
    /// The server's CPU time during the measured run in all, in microseconds.
    pub server_cpu_total_us: Option<u64>,
    /// The same for this load tool (all its threads).
    pub client_cpu_us: Option<f64>,
    /// With `--settle`: how long the tool waited for the servers to go idle before the
    /// measured run, and whether they did within the limit.
    pub settled: Option<(f64, bool)>,
    pub first_error: Option<String>,
    /// `read-under-scans`: what the scanners did beside the point reads this report
    /// counts.
    pub scans: Option<ScanSide>,
}

/// The scanners of `read-under-scans`: pages of a filter that matches nothing, and the
/// entities the server examined for them.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScanSide {
    pub scanners: usize,
    /// From the start to the end of the last scanner's last page.
    pub elapsed_s: f64,
    pub pages: u64,
    pub examined: u64,
    /// Complete passes over the table, all scanners together.
    pub passes: u64,
    pub page_p50_ms: f64,
    pub page_p99_ms: f64,
    pub page_max_ms: f64,
    /// Server CPU time over the scanners' span, in cores (with `--pid`).
    pub server_cores: Option<f64>,
}

impl ScanSide {
    /// Fills the counters and page latency percentiles from the scanners' recorder
    /// (its requests are pages, its entities the entities examined).
    pub(crate) fn finish(&mut self, mut rec: Recorder, elapsed: Duration) {
        self.elapsed_s = elapsed.as_secs_f64();
        self.pages = rec.requests;
        self.examined = rec.entities;
        (self.page_p50_ms, self.page_p99_ms, self.page_max_ms) = percentiles(&mut rec.latencies_us);
    }

    pub(crate) fn pages_per_s(&self) -> f64 {
        per_second(self.pages, self.elapsed_s)
    }

    pub(crate) fn examined_per_s(&self) -> f64 {
        per_second(self.examined, self.elapsed_s)
    }

    fn text(&self) -> String {
        let cores = self.server_cores.map(|c| format!(" server_cores={c:.2}")).unwrap_or_default();
        format!(
            " | scanners={} pages={} pages/s={:.1} examined/s={:.0} passes={} page_p50={:.2}ms \
             page_p99={:.2}ms page_max={:.2}ms{cores}",
            self.scanners,
            self.pages,
            self.pages_per_s(),
            self.examined_per_s(),
            self.passes,
            self.page_p50_ms,
            self.page_p99_ms,
            self.page_max_ms,
        )
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "scanners": self.scanners,
            "elapsed_s": round(self.elapsed_s),
            "pages": self.pages,
            "examined": self.examined,
            "passes": self.passes,
            "pages_per_s": round(self.pages_per_s()),
            "examined_per_s": round(self.examined_per_s()),
            "page_p50_ms": round(self.page_p50_ms),
            "page_p99_ms": round(self.page_p99_ms),
            "page_max_ms": round(self.page_max_ms),
            "server_cores": self.server_cores.map(round),
        })
    }
}

/// p50, p99 and max of latencies in microseconds, in milliseconds (sorts them).
fn percentiles(latencies_us: &mut [u32]) -> (f64, f64, f64) {
    latencies_us.sort_unstable();
    let pick = |q: f64| -> f64 {
        if latencies_us.is_empty() {
            return 0.0;
        }
        let idx = ((latencies_us.len() as f64 * q).ceil() as usize).clamp(1, latencies_us.len());
        f64::from(latencies_us[idx - 1]) / 1000.0
    };
    (pick(0.50), pick(0.99), pick(1.0))
}

impl Report {
    pub(crate) fn new(scenario: &str, endpoint: &str, table: &str, connections: usize) -> Report {
        Report {
            scenario: scenario.into(),
            label: endpoint.into(),
            endpoint: endpoint.into(),
            table: table.into(),
            connections,
            ..Report::default()
        }
    }

    /// Fills the counters and latency percentiles from the merged recorder.
    pub(crate) fn finish(&mut self, mut rec: Recorder, elapsed: Duration) {
        self.elapsed_s = elapsed.as_secs_f64();
        self.requests = rec.requests;
        self.errors = rec.errors;
        self.entities = rec.entities;
        self.first_error = rec.first_error.take();
        (self.p50_ms, self.p99_ms, self.max_ms) = percentiles(&mut rec.latencies_us);
    }

    pub(crate) fn requests_per_s(&self) -> f64 {
        per_second(self.requests, self.elapsed_s)
    }

    pub(crate) fn entities_per_s(&self) -> f64 {
        per_second(self.entities, self.elapsed_s)
    }

    pub(crate) fn text(&self) -> String {
        let rss = self.rss_kb.map(|kb| format!(" rss={:.1}MB", kb as f64 / 1024.0)).unwrap_or_default();
        let cpu =
            |name: &str, us: Option<f64>| us.map(|us| format!(" {name}={us:.1}us/req")).unwrap_or_default();
        let mut cpu = cpu("server_cpu", self.server_cpu_us) + &cpu("client_cpu", self.client_cpu_us);
        if let Some((waited, idle)) = self.settled {
            cpu += &format!(" settled={waited:.1}s{}", if idle { "" } else { "(still busy)" });
        }
        let preload = match (self.preload, self.preload_entities_per_s) {
            (0, _) => String::new(),
            (n, rate) if rate > 0.0 => format!(" preload={n} ({rate:.0} entities/s)"),
            (n, _) => format!(" preload={n} (existing table)"),
        };
        let scans = self.scans.as_ref().map(ScanSide::text).unwrap_or_default();
        format!(
            "{:<22} {:<16} conns={} time={:.2}s requests={} req/s={:.1} entities/s={:.1} \
             p50={:.2}ms p99={:.2}ms max={:.2}ms errors={}{preload}{rss}{cpu}{scans}",
            self.scenario,
            self.label,
            self.connections,
            self.elapsed_s,
            self.requests,
            self.requests_per_s(),
            self.entities_per_s(),
            self.p50_ms,
            self.p99_ms,
            self.max_ms,
            self.errors,
        )
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        json!({
            "kind": "run",
            "scenario": self.scenario,
            "label": self.label,
            "endpoint": self.endpoint,
            "table": self.table,
            "connections": self.connections,
            "preload": self.preload,
            "preload_entities_per_s": round(self.preload_entities_per_s),
            "elapsed_s": round(self.elapsed_s),
            "requests": self.requests,
            "errors": self.errors,
            "entities": self.entities,
            "requests_per_s": round(self.requests_per_s()),
            "entities_per_s": round(self.entities_per_s()),
            "p50_ms": round(self.p50_ms),
            "p99_ms": round(self.p99_ms),
            "max_ms": round(self.max_ms),
            "rss_kb": self.rss_kb,
            "server_cpu_us_per_request": self.server_cpu_us.map(round),
            "client_cpu_us_per_request": self.client_cpu_us.map(round),
            "settle_wait_s": self.settled.map(|(w, _)| round(w)),
            "settled_idle": self.settled.map(|(_, idle)| idle),
            "first_error": self.first_error,
            "scans": self.scans.as_ref().map(ScanSide::json),
        })
    }
}

fn per_second(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

/// Resident set size of process `pid` in KiB (Linux `/proc`), if readable.
pub(crate) fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU time (user + system, all threads) process `pid` has used, in microseconds
/// (Linux `/proc/PID/stat`, counted in USER_HZ = 100 ticks per second), if readable.
pub(crate) fn cpu_us(pid: u32) -> Option<u64> {
    cpu_us_in(&format!("/proc/{pid}/stat"))
}

/// [`cpu_us`] from a `stat` file (`/proc/PID/stat`, or a thread's).
pub(crate) fn cpu_us_in(path: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(path).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11); // state is field 3; utime is 14
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) * 10_000)
}

/// How long a process may keep working and still count as idle: one 10 ms tick of
/// CPU in a [`SETTLE_WINDOW`] (2 % of a core).
const IDLE_CPU_US: u64 = 10_000;
const SETTLE_WINDOW: std::time::Duration = std::time::Duration::from_millis(500);

/// Waits until each of `pids` spends at most [`IDLE_CPU_US`] of CPU in one
/// [`SETTLE_WINDOW`] (their flushes and compactions, or garbage collection, after the
/// previous scenario are done), for at most `max` in all. Returns the time waited and
/// whether they all went idle; `None` when a CPU time cannot be read.
pub(crate) async fn settle(pids: &[u32], max: std::time::Duration) -> Option<(f64, bool)> {
    let start = std::time::Instant::now();
    let cpu = |pids: &[u32]| pids.iter().map(|&p| cpu_us(p)).collect::<Option<Vec<u64>>>();
    let mut before = cpu(pids)?;
    loop {
        tokio::time::sleep(SETTLE_WINDOW).await;
        let now = cpu(pids)?;
        if now.iter().zip(&before).all(|(n, b)| n.saturating_sub(*b) <= IDLE_CPU_US) {
            return Some((start.elapsed().as_secs_f64(), true));
        }
        if start.elapsed() >= max {
            return Some((start.elapsed().as_secs_f64(), false));
        }
        before = now;
    }
}

/// CPU microseconds per request between two readings of [`cpu_us`].
pub(crate) fn cpu_per_request(before: Option<u64>, after: Option<u64>, requests: u64) -> Option<f64> {
    match (before, after) {
        (Some(b), Some(a)) if requests > 0 && a >= b => Some((a - b) as f64 / requests as f64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_rates() {
        let mut rec = Recorder::default();
        for ms in 1..=100u64 {
            rec.request(Duration::from_millis(ms));
        }
        rec.entities = 200;
        rec.error(|| "boom".into());
        let mut r = Report::new("point-read", "http://x", "t", 4);
        r.finish(rec, Duration::from_secs(2));
        assert_eq!(r.p50_ms, 50.0);
        assert_eq!(r.p99_ms, 99.0);
        assert_eq!(r.max_ms, 100.0);
        assert_eq!(r.requests_per_s(), 50.0);
        assert_eq!(r.entities_per_s(), 100.0);
        assert_eq!(r.errors, 1);
        assert_eq!(r.json()["first_error"], "boom");
        assert!(r.text().contains("req/s=50.0"));
    }

    #[test]
    fn scan_side() {
        let mut rec = Recorder::default();
        for ms in [4u64, 2, 8, 6] {
            rec.request(Duration::from_millis(ms));
        }
        rec.entities = 40_000;
        let mut scans = ScanSide { scanners: 2, passes: 1, ..ScanSide::default() };
        scans.finish(rec, Duration::from_secs(2));
        assert_eq!((scans.pages, scans.examined), (4, 40_000));
        assert_eq!((scans.page_p50_ms, scans.page_p99_ms, scans.page_max_ms), (4.0, 8.0, 8.0));
        assert_eq!((scans.pages_per_s(), scans.examined_per_s()), (2.0, 20_000.0));
        let mut r = Report::new("read-under-scans", "http://x", "t", 4);
        assert!(!r.text().contains("scanners=") && r.json()["scans"].is_null());
        r.scans = Some(scans);
        assert!(
            r.text().contains(" | scanners=2 pages=4 pages/s=2.0 examined/s=20000 passes=1"),
            "{}",
            r.text()
        );
        assert_eq!(r.json()["scans"]["examined_per_s"], 20_000.0);
    }

    #[test]
    fn cpu_time_of_this_thread() {
        // Spin until the counter shows 30 ms of CPU (wall time alone says nothing on a
        // loaded machine). This thread's own counter (`/proc/thread-self/stat`, the same
        // format as a process's), since the other tests run in parallel in this process:
        // counted in the right unit, the thread needs about 30 ms of wall time (less one
        // 10 ms tick of sampling slack); a counter 1000x too large would get there at
        // once, one 1000x too small never.
        let own = || cpu_us_in("/proc/thread-self/stat").expect("own /proc/thread-self/stat");
        let before = own();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        let mut after = before;
        while after < before + 30_000 && t.elapsed() < Duration::from_secs(20) {
            for _ in 0..100_000 {
                x = x.wrapping_add(std::hint::black_box(1));
            }
            after = own();
        }
        let elapsed = t.elapsed();
        assert!(x > 0 && after >= before + 30_000, "counted {} us in {elapsed:?}", after - before);
        assert!(elapsed >= Duration::from_millis(20), "30 ms of CPU counted in {elapsed:?}");
        assert!(cpu_us(std::process::id()).is_some_and(|us| us >= after - before), "the whole process");
        assert_eq!(cpu_per_request(Some(1_000), Some(3_000), 4), Some(500.0));
        assert_eq!(cpu_per_request(Some(1_000), None, 4), None);
        assert_eq!(cpu_per_request(Some(1_000), Some(3_000), 0), None);
    }

    #[tokio::test]
    async fn settle_waits_for_a_busy_process_only() {
        let mut idle = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
        let mut busy =
            std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().expect("sh");
        let idle_wait = settle(&[idle.id()], Duration::from_secs(5)).await;
        let busy_wait = settle(&[idle.id(), busy.id()], Duration::from_millis(1200)).await;
        for child in [&mut idle, &mut busy] {
            let _ = child.kill();
            let _ = child.wait();
        }
        let (waited, went_idle) = idle_wait.expect("readable");
        // the idle process is seen idle (the 5 s limit not reached), the busy one never is
        assert!(went_idle, "idle process: {waited}s, idle {went_idle}");
        let (waited, went_idle) = busy_wait.expect("readable");
        assert!(!went_idle && waited >= 1.2, "busy process: {waited}s, idle {went_idle}");
        assert_eq!(settle(&[u32::MAX], Duration::from_secs(1)).await, None);
    }
}
