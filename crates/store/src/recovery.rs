//! What happens when the data directory is opened: how a damaged write-ahead log is
//! treated (`OpenOptions`), the engine's own warnings brought into the server's log,
//! and, when a damaged log is recovered anyway, a copy of it kept aside and a count of
//! the acknowledged writes recovery dropped (`store::wal`); the refusals' texts and
//! the line every start logs about what recovery found.
//!
//! The store (`rocks/`) accepts an incomplete last write (a torn tail: the process
//! or machine stopped in the middle of an append; that write was never acknowledged)
//! and refuses damage before the end, where acknowledged writes follow the damage,
//! found by `precheck.rs` before the engine reads the log. `--recoverTolerate` opens
//! such a directory at the last write before the damage instead: it keeps a copy of
//! the logs, cuts the damaged one after its last intact record and empties the later
//! ones, so the engine reads only intact records, and says what it dropped.

use super::precheck::{LogDamage, Prechecked};
use super::wal;
use std::path::{Path, PathBuf};

/// How the store opens a data directory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// Sync the write-ahead log to the disk before a write is acknowledged
    /// (`--fsync`): writes then survive a power loss, not only a killed process.
    pub sync_writes: bool,
    /// Start even when the write-ahead log is damaged before its end, keeping what
    /// precedes the damage and dropping the rest (`--recoverTolerate`).
    pub recover_tolerate: bool,
}

/// The flag that opens a directory with a damaged log anyway.
pub const TOLERATE_FLAG: &str = "--recoverTolerate";

/// The engine's info log in the data directory; each open starts a new one (the
/// previous one is renamed `LOG.old.<time>`), so it holds only this open's lines.
fn engine_log(dir: &Path) -> PathBuf {
    dir.join("LOG")
}

/// The warning and error lines of the engine's log of this open (`[WARN]`, `[ERROR]`,
/// `[FATAL]`), without their time and thread prefix.
pub fn engine_warnings(dir: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(engine_log(dir)) else { return Vec::new() };
    text.lines()
        .filter_map(|line| {
            ["[WARN]", "[ERROR]", "[FATAL]"]
                .iter()
                .find_map(|tag| line.find(tag).map(|i| line[i..].to_owned()))
        })
        .collect()
}

/// Logs the engine's warnings of this open through the server's log.
pub fn log_engine_warnings(dir: &Path) {
    for line in engine_warnings(dir) {
        tracing::warn!(target: "aztable::rocksdb", "storage engine: {line}");
    }
}

/// Whether the engine's lines say it found damage in a write-ahead log.
fn log_damage_lines(lines: &[String]) -> Vec<&String> {
    lines.iter().filter(|l| l.contains(".log: dropping")).collect()
}

/// The error when the engine refused to open `dir` because of damage (`engine_error`
/// is its message): what is wrong, and what a user can do.
pub fn refusal(dir: &Path, engine_error: &str) -> String {
    let lines = engine_warnings(dir);
    let damage = log_damage_lines(&lines);
    if damage.is_empty() {
        return format!(
            "the data directory {} is damaged ({engine_error}){}; \
             restore it from a copy, or start with an empty --location",
            dir.display(),
            unnamed_table_files(dir, engine_error),
        );
    }
    let detail: Vec<&str> = damage.iter().map(|l| l.as_str()).collect();
    format!(
        "the write-ahead log in {} is damaged before its end ({engine_error}; {}): writes that \
         were acknowledged after the damage cannot be read back, so the server does not start. \
         To start anyway with the data up to the last write before the damage, dropping \
         everything after it, run once with {TOLERATE_FLAG} (it keeps a copy of the damaged log \
         in the data directory and logs how many writes it dropped); or restore the directory \
         from a copy",
        dir.display(),
        detail.join("; ")
    )
}

/// When the engine's error names no file but the MANIFEST, which was read record by
/// record before the open and found intact, the damage is in a table file the engine
/// did not name (a damaged properties block is reported as "properties unsorted ... The
/// file MANIFEST-000005 may be corrupted"): the text that lists the table files.
fn unnamed_table_files(dir: &Path, engine_error: &str) -> String {
    let Ok(entries) = std::fs::read_dir(dir) else { return String::new() };
    let mut ssts: Vec<(String, u64)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let size = e.metadata().ok()?.len();
            super::wal::numbered(&name, "sst").then_some((name, size))
        })
        .collect();
    if !engine_error.contains("MANIFEST")
        || ssts.is_empty()
        || ssts.iter().any(|(name, _)| engine_error.contains(name.as_str()))
    {
        return String::new();
    }
    ssts.sort();
    let list: Vec<String> = ssts.iter().map(|(name, size)| format!("{name} ({size} bytes)")).collect();
    format!(
        ". The MANIFEST's records were read before the open and are intact, so the damage is \
         probably in one of the table files, which the storage engine did not name: {}",
        list.join(", ")
    )
}

/// The refusal to open `dir` whose log `damage.log` is damaged before its end.
pub fn log_refusal(dir: &Path, found: &Prechecked, damage: &LogDamage) -> String {
    let log = &found.logs[damage.log];
    let later: u64 = found.logs[damage.log + 1..].iter().map(|l| l.size).sum();
    format!(
        "the write-ahead log {} in {} is damaged before its end, at byte {} of {} ({}): the {} bytes \
         after it{} may hold acknowledged writes that cannot be read back, so the server does not \
         start. To start anyway with the data up to the last intact write before the damage (byte {}), \
         dropping everything after it, run once with {TOLERATE_FLAG} (it keeps a copy of the logs in the \
         data directory and logs how many writes it dropped); or restore the directory from a copy",
        log.name(),
        dir.display(),
        damage.offset,
        log.size,
        damage.what,
        log.size - damage.offset,
        if later > 0 { format!(" and the {later} bytes of newer logs") } else { String::new() },
        log.check.intact_end,
    )
}

/// The refusal to open `dir`, whose recovery would end before its recovery point.
pub fn behind_refusal(dir: &Path, behind: &str) -> String {
    format!(
        "the data directory {} lost writes it held at its last checkpoint: {behind}. The server does not \
         start, so as not to serve older data in silence. To start anyway with what is left, run once \
         with {TOLERATE_FLAG}; or restore the directory from a copy",
        dir.display()
    )
}

/// Cuts the damaged log of `found` after its last intact record and empties the logs
/// after it (their copies are kept), so that the engine reads only intact records.
pub fn cut_logs(found: &Prechecked, damage: &LogDamage) -> std::io::Result<()> {
    for (i, log) in found.logs.iter().enumerate().skip(damage.log) {
        let keep = if i == damage.log { log.check.intact_end } else { 0 };
        let file = std::fs::OpenOptions::new().write(true).open(&log.path)?;
        file.set_len(keep)?;
        file.sync_all()?;
    }
    Ok(())
}

/// Logs what the recovery of `dir` found: the sequence it reached, the logs it read,
/// the incomplete last write it dropped, and the recovery point it was checked against.
pub fn log_recovered(dir: &Path, found: &Prechecked, recovered_seq: u64) {
    if found.new {
        tracing::info!("created a new database in {}", dir.display());
        return;
    }
    let bytes: u64 = found.logs.iter().map(|l| l.size).sum();
    let torn: Vec<String> = found
        .logs
        .iter()
        .filter_map(|l| {
            let after = l.size - l.check.intact_end;
            match l.check.tail {
                wal::Tail::Clean => None,
                wal::Tail::Torn => Some(format!("{after} bytes of an incomplete last write in {}", l.name())),
                wal::Tail::Damaged { .. } => {
                    Some(format!("{after} bytes from the damage on in {} ({TOLERATE_FLAG})", l.name()))
                }
            }
        })
        .collect();
    let point = match &found.point {
        Some(p) => format!("the last checkpoint recorded sequence {}", p.sequence),
        None => "no recovery point was recorded".to_owned(),
    };
    let torn = if torn.is_empty() {
        "no incomplete write".to_owned()
    } else {
        format!("dropped {}", torn.join(", "))
    };
    tracing::info!(
        recovered_to_seq = recovered_seq,
        "recovered {} to sequence {recovered_seq}: write-ahead logs read: {} ({bytes} bytes), {torn}; {point}",
        dir.display(),
        found.logs.len(),
    );
}

/// The write-ahead logs of a damaged directory, read before recovery drops their tail.
#[derive(Debug, Default)]
pub struct DamagedLogs {
    /// Where the copy of the logs was kept.
    pub copy: Option<PathBuf>,
    /// Every intact write batch of every log.
    pub batches: Vec<wal::Batch>,
    /// Bytes of the logs that could not be read.
    pub damaged_bytes: u64,
}

/// Copies the `*.log` files of `dir` into `dir/damaged-log-<unix seconds>/` and lists
/// their write batches.
pub fn keep_damaged_logs(dir: &Path) -> std::io::Result<DamagedLogs> {
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let copy = dir.join(format!("damaged-log-{now}"));
    std::fs::create_dir_all(&copy)?;
    let mut out = DamagedLogs { copy: Some(copy.clone()), ..DamagedLogs::default() };
    for (path, _) in wal::log_files(dir)? {
        let bytes = std::fs::read(&path)?;
        if let Some(name) = path.file_name() {
            std::fs::write(copy.join(name), &bytes)?;
        }
        let scan = wal::scan(&bytes);
        out.batches.extend(scan.batches);
        out.damaged_bytes += scan.damaged_bytes;
    }
    Ok(out)
}

/// What recovery dropped: the intact batches after `recovered_seq`, the last sequence
/// number the engine recovered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropped {
    /// Write batches (each an acknowledged write: one request or one change set).
    pub writes: u64,
    /// Their operations (puts and deletes of keys).
    pub operations: u64,
    /// Sequence numbers of the first and last dropped operation.
    pub seqs: Option<(u64, u64)>,
}

/// Counts the batches of `logs` that lie after `recovered_seq`.
pub fn dropped(logs: &DamagedLogs, recovered_seq: u64) -> Dropped {
    let after: Vec<_> = logs.batches.iter().filter(|b| b.seq > recovered_seq).collect();
    let first = after.iter().map(|b| b.seq).min();
    let last = after.iter().map(|b| b.seq + u64::from(b.count.max(1)) - 1).max();
    Dropped {
        writes: after.len() as u64,
        operations: after.iter().map(|b| u64::from(b.count)).sum(),
        seqs: first.zip(last),
    }
}

/// Logs what a tolerant recovery of `dir` dropped.
pub fn log_dropped(dir: &Path, logs: &DamagedLogs, recovered_seq: u64) {
    let d = dropped(logs, recovered_seq);
    let copy = logs.copy.as_ref().map(|c| c.display().to_string()).unwrap_or_default();
    tracing::warn!(
        dropped_writes = d.writes,
        dropped_operations = d.operations,
        dropped_seqs = ?d.seqs,
        unreadable_log_bytes = logs.damaged_bytes,
        recovered_to_seq = recovered_seq,
        kept_copy = %copy,
        "{TOLERATE_FLAG}: the write-ahead log in {} was damaged; recovered up to the last write \
         before the damage and dropped {} later acknowledged writes that were still readable \
         ({} key operations), plus whatever the {} unreadable bytes held",
        dir.display(),
        d.writes,
        d.operations,
        logs.damaged_bytes,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_batches_after_the_recovered_sequence() {
        let logs = DamagedLogs {
            copy: None,
            batches: (0..10).map(|i| wal::Batch { seq: 1 + 3 * i, count: 3 }).collect(),
            damaged_bytes: 4096,
        };
        assert_eq!(dropped(&logs, 30), Dropped { writes: 0, operations: 0, seqs: None });
        assert_eq!(dropped(&logs, 21), Dropped { writes: 3, operations: 9, seqs: Some((22, 30)) });
    }

    #[test]
    fn the_refusal_names_the_flag_when_the_log_is_damaged() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("LOG"),
            "2025/01/01-00:00:00.000000 7f00 [WARN] [db/db_impl/db_impl_open.cc:1117] \
             /d/000004.log: dropping 4096 bytes; Corruption: checksum mismatch\n\
             2025/01/01-00:00:00.000000 7f00 Recovering log #4\n",
        )
        .unwrap();
        let text = refusal(dir.path(), "Corruption: checksum mismatch");
        assert!(text.contains(TOLERATE_FLAG) && text.contains("000004.log: dropping 4096 bytes"), "{text}");
        assert_eq!(engine_warnings(dir.path()).len(), 1);
        std::fs::write(dir.path().join("LOG"), "").unwrap();
        assert!(!refusal(dir.path(), "Corruption: bad block").contains(TOLERATE_FLAG));
        // blamed on the MANIFEST (read and found intact before): the table files are listed
        std::fs::write(dir.path().join("000010.sst"), "x").unwrap();
        let blamed = "Corruption: properties unsorted  The file /d/MANIFEST-000005 may be corrupted.";
        assert!(refusal(dir.path(), blamed)
            .contains("table files, which the storage engine did not name: 000010.sst"));
        assert!(!refusal(dir.path(), "Corruption: bad block").contains("000010.sst"));
        assert!(
            !refusal(dir.path(), "Corruption: bad block in 000010.sst; MANIFEST").contains("did not name")
        );
    }
}
