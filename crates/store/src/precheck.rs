//! What the store checks in a data directory before the engine reads any of it, so
//! that a start ends in bounded time with a message that names the damaged file:
//!
//! - a directory without database files is new (the only case where one is created);
//!   one with a MANIFEST, SST files, a non-empty log or a recovery point but no CURRENT
//!   is refused;
//! - CURRENT must hold `MANIFEST-<number>` and a newline, naming a MANIFEST that exists;
//! - that MANIFEST and every write-ahead log are read strictly (`wal::check`): damage
//!   before the end is found here, by file and offset, and the engine never reads it
//!   (its log reader can spin forever on some damaged logs);
//! - the recovery point (`checkpoint.rs`) must still be reachable: the MANIFEST it
//!   names no shorter, the newest log it names present, no shorter, and holding the
//!   sequence it recorded.

use super::checkpoint::{self, Recorded, RecoveryPoint};
use super::recovery::TOLERATE_FLAG;
use super::wal::{self, Tail};
use super::StoreError;
use std::path::{Path, PathBuf};

/// One write-ahead log as the strict reading found it.
#[derive(Debug, Clone)]
pub struct LogFound {
    pub path: PathBuf,
    pub size: u64,
    pub check: wal::Check,
}

impl LogFound {
    pub fn name(&self) -> String {
        file_name(&self.path)
    }
}

/// Damage before the end of a write-ahead log: which log (an index into
/// [`Prechecked::logs`]), where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogDamage {
    pub log: usize,
    pub offset: u64,
    pub what: &'static str,
}

/// What the checks found in a directory they let the engine open.
#[derive(Debug)]
pub struct Prechecked {
    /// No database yet: the engine may create one.
    pub new: bool,
    /// Every write-ahead log, in log order.
    pub logs: Vec<LogFound>,
    /// The first log damaged before its end (refused unless `--recoverTolerate`).
    pub damage: Option<LogDamage>,
    /// The last checkpoint's recovery point, when there is one.
    pub point: Option<RecoveryPoint>,
    /// What does not match the recovery point (refused unless `--recoverTolerate`).
    pub behind: Option<String>,
    /// Notes for the start's log line (a MANIFEST's cut last record, an unreadable
    /// recovery point).
    pub notes: Vec<String>,
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

fn damaged(text: String) -> StoreError {
    StoreError::Damaged(text)
}

/// `MANIFEST-000005` -> 5.
fn manifest_number(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("MANIFEST-")?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.parse().ok())?
}

/// `000008.log` -> 8.
fn log_number(name: &str) -> Option<u64> {
    name.strip_suffix(".log")?.parse().ok()
}

/// Checks `dir` (see the module's header). `Err` is the refusal to open it.
pub fn run(dir: &Path, tolerate: bool) -> Result<Prechecked, StoreError> {
    let mut out = Prechecked {
        new: false,
        logs: Vec::new(),
        damage: None,
        point: None,
        behind: None,
        notes: Vec::new(),
    };
    let names: Vec<String> = match std::fs::read_dir(dir) {
        Ok(entries) => {
            entries.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            out.new = true;
            return Ok(out);
        }
        Err(e) => return Err(StoreError::Engine(format!("cannot list {}: {e}", dir.display()))),
    };
    let io = |what: &str, e: std::io::Error| {
        StoreError::Engine(format!("cannot read {what} in {}: {e}", dir.display()))
    };
    let mut manifests: Vec<&String> = names.iter().filter(|n| manifest_number(n).is_some()).collect();
    manifests.sort_by_key(|n| manifest_number(n));
    let ssts = names.iter().filter(|n| wal::numbered(n, "sst") || wal::numbered(n, "blob")).count();
    out.logs = wal::log_files(dir)
        .map_err(|e| io("the write-ahead logs", e))?
        .into_iter()
        .map(|(path, size)| LogFound {
            path,
            size,
            check: wal::Check { intact_end: 0, last_seq: None, tail: Tail::Clean },
        })
        .collect();
    let logged = out.logs.iter().any(|l| l.size > 0);

    // CURRENT
    let current = match std::fs::read(dir.join("CURRENT")) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // a recovery point is written only after an open, when CURRENT existed
            let recorded = names.iter().any(|n| n == checkpoint::FILE_NAME);
            if manifests.is_empty() && ssts == 0 && !logged && !recorded {
                out.new = true;
                return Ok(out);
            }
            return Err(damaged(format!(
                "CURRENT is missing from {}, which holds a database ({}, SST files: {ssts}, write-ahead \
                 logs: {}): the server does not create a new database over it. CURRENT holds the name of the \
                 newest MANIFEST and a newline{}; restore it, or the directory from a copy",
                dir.display(),
                listing(&manifests),
                out.logs.len(),
                manifests.last().map(|m| format!(" (here probably `{m}`)")).unwrap_or_default(),
            )));
        }
        Err(e) => return Err(io("CURRENT", e)),
    };
    let named = std::str::from_utf8(&current)
        .ok()
        .and_then(|t| t.strip_suffix('\n'))
        .filter(|n| manifest_number(n).is_some())
        .map(str::to_owned);
    let Some(manifest) = named else {
        return Err(damaged(format!(
            "CURRENT in {} is damaged: it must hold the name of a MANIFEST and a newline, but holds {:?} \
             ({} bytes; the directory holds {}); restore CURRENT, or the directory from a copy",
            dir.display(),
            String::from_utf8_lossy(&current[..current.len().min(64)]),
            current.len(),
            listing(&manifests),
        )));
    };
    if !names.contains(&manifest) {
        return Err(damaged(format!(
            "CURRENT in {} names {manifest}, which does not exist (the directory holds {}): CURRENT is \
             damaged, or that MANIFEST was deleted; restore it, or the directory from a copy",
            dir.display(),
            listing(&manifests),
        )));
    }

    // the MANIFEST CURRENT names
    let manifest_bytes = std::fs::read(dir.join(&manifest)).map_err(|e| io(&manifest, e))?;
    let check = wal::check(&manifest_bytes, false);
    match check.tail {
        _ if manifest_bytes.is_empty() => {
            return Err(damaged(format!(
            "{manifest} in {} (the MANIFEST that CURRENT names) is empty; restore the directory from a copy",
            dir.display()
        )))
        }
        Tail::Damaged { offset, what } => {
            return Err(damaged(format!(
                "{manifest} in {} (the MANIFEST that CURRENT names, the list of the database's files) is \
                 damaged at byte {offset} of {} ({what}); restore the directory from a copy",
                dir.display(),
                manifest_bytes.len()
            )))
        }
        Tail::Torn if !tolerate => {
            return Err(damaged(format!(
                "{manifest} in {} (the MANIFEST that CURRENT names) ends inside a record at byte {} of {}: \
                 its last change to the list of the database's files is cut. Run once with {TOLERATE_FLAG} \
                 to open it without that change, or restore the directory from a copy",
                dir.display(),
                check.intact_end,
                manifest_bytes.len()
            )))
        }
        Tail::Torn => out.notes.push(format!(
            "{TOLERATE_FLAG}: {manifest} ends inside a record at byte {}: its cut last record is ignored",
            check.intact_end
        )),
        Tail::Clean => {}
    }

    // the write-ahead logs
    let last_with_records = out.logs.iter().rposition(|l| l.size > 0);
    for i in 0..out.logs.len() {
        let bytes = std::fs::read(&out.logs[i].path).map_err(|e| io(&out.logs[i].name(), e))?;
        let check = wal::check(&bytes, true);
        let damage = match check.tail {
            Tail::Damaged { offset, what } => Some(LogDamage { log: i, offset, what }),
            // a cut last write is only possible in the last log that holds records
            Tail::Torn if last_with_records.is_some_and(|last| i < last) => Some(LogDamage {
                log: i,
                offset: check.intact_end,
                what: "a cut record followed by newer logs",
            }),
            _ => None,
        };
        out.logs[i].check = check;
        if out.damage.is_none() {
            out.damage = damage;
        }
    }

    // the recovery point
    match checkpoint::read(dir) {
        Recorded::None => {}
        Recorded::Unreadable(e) => out.notes.push(format!("{e}: the recovery point is not checked")),
        Recorded::Point(point) => {
            out.behind = behind(&point, &manifest, manifest_bytes.len() as u64, &out.logs);
            out.point = Some(point);
        }
    }
    Ok(out)
}

fn listing(manifests: &[&String]) -> String {
    match manifests {
        [] => "no MANIFEST".to_owned(),
        m => m.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
    }
}

/// What in the directory lies behind the recovery point `point`, if anything.
fn behind(point: &RecoveryPoint, manifest: &str, manifest_size: u64, logs: &[LogFound]) -> Option<String> {
    let seq = point.sequence;
    if let Some((recorded, size)) = &point.manifest {
        if manifest_number(manifest) < manifest_number(recorded) {
            return Some(format!(
                "CURRENT names {manifest}, older than {recorded}, which it named at the last checkpoint \
                 (sequence {seq}): CURRENT is damaged or stale"
            ));
        }
        if manifest == recorded && manifest_size < *size {
            return Some(format!(
                "{manifest} is {manifest_size} bytes, shorter than the {size} bytes it held at the last \
                 checkpoint (sequence {seq}): it was cut"
            ));
        }
    }
    let (recorded, size) = point.log.as_ref()?;
    match logs.iter().find(|l| &l.name() == recorded) {
        Some(log) if log.size < *size => Some(format!(
            "{recorded} is {} bytes, shorter than the {size} bytes it held at the last checkpoint (sequence \
             {seq}): acknowledged writes were cut from it",
            log.size
        )),
        Some(log) if *size > 0 && log.check.last_seq.unwrap_or(0) < seq => Some(format!(
            "{recorded} holds writes up to sequence {}, but up to sequence {seq} at the last checkpoint: \
             acknowledged writes in it were lost (overwritten or zeroed)",
            log.check.last_seq.unwrap_or(0)
        )),
        Some(_) => None,
        None if logs.iter().any(|l| log_number(&l.name()) > log_number(recorded)) => None,
        None => Some(format!(
            "{recorded}, the newest write-ahead log at the last checkpoint (sequence {seq}, {size} bytes), is \
             missing, and no newer log replaced it"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse() {
        assert_eq!(manifest_number("MANIFEST-000005"), Some(5));
        assert_eq!(manifest_number("MANIFEST-"), None);
        assert_eq!(manifest_number("MANIFEST-00a"), None);
        assert_eq!(log_number("000008.log"), Some(8));
    }

    #[test]
    fn files_not_named_by_the_engine_leave_a_directory_new() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["server.log", "notes.sst", "x.blob", ".log"] {
            std::fs::write(dir.path().join(name), "not the engine's").unwrap();
        }
        let found = run(dir.path(), false).unwrap();
        assert!(found.new && found.logs.is_empty());
        assert!(wal::numbered("000008.log", "log") && !wal::numbered("server.log", "log"));
    }

    #[test]
    fn a_directory_without_database_files_is_new_and_one_without_current_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(run(&dir.path().join("absent"), false).unwrap().new);
        assert!(run(dir.path(), false).unwrap().new);
        std::fs::write(dir.path().join("LOG"), "x").unwrap();
        std::fs::write(dir.path().join("000003.log"), "").unwrap();
        assert!(run(dir.path(), false).unwrap().new, "an info log and an empty log are no database");
        std::fs::write(dir.path().join("000009.sst"), "x").unwrap();
        std::fs::write(dir.path().join("MANIFEST-000005"), "x").unwrap();
        let e = run(dir.path(), true).unwrap_err().to_string();
        assert!(e.starts_with("CURRENT is missing") && e.contains("MANIFEST-000005"), "{e}");
        // everything deleted but the recovery point: still no new database over it
        let bare = tempfile::tempdir().unwrap();
        std::fs::write(bare.path().join(checkpoint::FILE_NAME), "x").unwrap();
        let e = run(bare.path(), false).unwrap_err().to_string();
        assert!(e.starts_with("CURRENT is missing"), "{e}");
    }

    #[test]
    fn current_is_named_when_it_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("MANIFEST-000005"), "").unwrap();
        for (bytes, needle) in [
            (&b"MANIFEST-200023\n"[..], "names MANIFEST-200023, which does not exist"),
            (b"MANIFEST-0000", "CURRENT in"),
            (b"\0\0\0\0", "is damaged"),
        ] {
            std::fs::write(dir.path().join("CURRENT"), bytes).unwrap();
            let e = run(dir.path(), false).unwrap_err().to_string();
            assert!(e.contains("CURRENT") && e.contains(needle), "{e}");
        }
        std::fs::write(dir.path().join("CURRENT"), "MANIFEST-000005\n").unwrap();
        let e = run(dir.path(), false).unwrap_err().to_string();
        assert!(e.starts_with("MANIFEST-000005") && e.contains("empty"), "{e}");
    }
}
