//! Where long store work runs: scans that may examine 10,000 rows or run for 5 s go to
//! a pool of threads of their own, at a lower CPU priority (nice [`SCAN_NICE`]), so the
//! async workers that answer every other request keep their cores. With the scans on
//! threads of equal priority, four clients paging through a large table took the two
//! cores of a small machine in turns with the workers, and point reads waited for the
//! scheduler (p99 above 5 ms); at a lower priority the scheduler runs a worker as soon
//! as it has a request, and the scans use whatever the workers leave, all of it when
//! they are idle.
//!
//! A thread's priority can be lowered by anyone but raised back only with privileges,
//! so the pool's threads are lowered once, when they start, and only ever run scans.

use std::sync::OnceLock;

/// The nice value of the scan threads (0 is the default; 19 the lowest priority).
pub(super) const SCAN_NICE: i32 = 10;

/// The pool: a runtime used only for its blocking threads.
fn pool() -> Option<&'static tokio::runtime::Runtime> {
    static POOL: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    POOL.get_or_init(|| {
        // one scan thread a core: more scans than cores wait for a thread instead of
        // taking turns on the cores with each other
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
        let built = tokio::runtime::Builder::new_current_thread()
            .max_blocking_threads(threads)
            .thread_name("aztable-scan")
            .on_thread_start(lower_priority)
            .build();
        match built {
            Ok(rt) => Some(rt),
            Err(e) => {
                tracing::warn!(error = %e, "cannot start the scan threads; scans share the request threads' priority");
                None
            }
        }
    })
    .as_ref()
}

/// The scan threads' priority on thread-priority's portable 0-99 scale, which it maps
/// onto nice values from 19 down to -20: 22 is nice [`SCAN_NICE`].
const SCAN_PRIORITY: u8 = 22;

/// Lowers the calling thread's CPU priority to [`SCAN_NICE`] (logged once if refused);
/// never raises it: a process already started at that nice value or lower in priority
/// (`nice -n 15 aztable`) keeps its scans there.
fn lower_priority() {
    use thread_priority::{ThreadPriority, ThreadPriorityValue};
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if current_nice().is_some_and(|nice| nice >= SCAN_NICE) {
        return;
    }
    let lowered = ThreadPriorityValue::try_from(SCAN_PRIORITY).and_then(|p| {
        thread_priority::unix::set_current_thread_priority(ThreadPriority::Crossplatform(p))
            .map_err(|e| e.to_string())
    });
    if let Err(e) = lowered {
        if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
            tracing::warn!(nice = SCAN_NICE, error = %e, "cannot lower the scan threads' priority; scans compete with requests");
        }
    }
}

/// The calling thread's nice value (field 19 of `/proc/thread-self/stat`); `None` where
/// there is no such file.
fn current_nice() -> Option<i32> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // the command name (field 2) may hold spaces: count from the closing parenthesis
    let after = stat.get(stat.rfind(')')? + 2..)?;
    after.split(' ').nth(16)?.parse().ok()
}

/// Runs `f` on a scan thread and waits for it (on the runtime's own blocking pool when
/// the scan threads could not start).
pub(super) async fn run<R: Send + 'static>(
    f: impl FnOnce() -> R + Send + 'static,
) -> Result<R, tokio::task::JoinError> {
    match pool() {
        Some(scan_threads) => scan_threads.spawn_blocking(f).await,
        None => tokio::task::spawn_blocking(f).await,
    }
}

#[cfg(test)]
mod tests {
    use super::current_nice;

    fn own_nice() -> i32 {
        current_nice().expect("a Linux /proc")
    }

    /// Holds under any starting priority: the test command may itself run under `nice`.
    #[tokio::test]
    async fn scans_run_at_a_lower_priority_than_requests_and_never_a_higher_one() {
        let before = own_nice();
        let scan = super::run(own_nice).await.expect("runs");
        assert_eq!(scan, super::SCAN_NICE.max(before), "started at nice {before}");
        assert!(scan >= before, "a scan thread is never favoured over the thread that started it");
        assert_eq!(own_nice(), before, "the request thread keeps its priority");
        let name = super::run(|| std::thread::current().name().map(str::to_owned)).await;
        assert_eq!(name.expect("runs").as_deref(), Some("aztable-scan"));
    }
}
