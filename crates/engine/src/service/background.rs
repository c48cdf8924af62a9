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

/// Lowers the calling thread's CPU priority to [`SCAN_NICE`] (logged once if refused).
fn lower_priority() {
    use thread_priority::{ThreadPriority, ThreadPriorityValue};
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
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
    /// The nice value of the calling thread (field 19 of `/proc/thread-self/stat`).
    fn own_nice() -> i32 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").expect("a Linux /proc");
        // the command name (field 2) may hold spaces: count from the closing parenthesis
        let after = &stat[stat.rfind(')').expect("(comm)") + 2..];
        after.split(' ').nth(16).expect("nice field").parse().expect("a number")
    }

    #[tokio::test]
    async fn scans_run_at_the_lower_priority_and_requests_do_not() {
        let scan = super::run(own_nice).await.expect("runs");
        assert_eq!(scan, super::SCAN_NICE);
        assert_eq!(own_nice(), 0, "the request thread keeps its priority");
        let name = super::run(|| std::thread::current().name().map(str::to_owned)).await;
        assert_eq!(name.expect("runs").as_deref(), Some("aztable-scan"));
    }
}
