//! The recovery point: a small file of aztable's own in the data directory
//! ([`FILE_NAME`]) that says how far the data had come at the last checkpoint, so that
//! a start whose recovery would end before it is refused instead of rolling the data
//! back in silence.
//!
//! The store writes one after it opens, about once a second while writes come in,
//! and when it closes, always after syncing the write-ahead log: what it records
//! survives a power loss. It holds the last sequence number, the MANIFEST that CURRENT
//! named and its size, and the newest write-ahead log and its size. It is written
//! atomically (a temporary file, fsynced, renamed over the old one, and the directory
//! fsynced). `precheck.rs` compares the directory with it before the engine reads
//! anything.

use std::io::Write;
use std::path::Path;

/// The recovery point's file name in the data directory.
pub const FILE_NAME: &str = "AZTABLE-RECOVERY-POINT";
const TEMP_NAME: &str = "AZTABLE-RECOVERY-POINT.tmp";
const FIRST_LINE: &str = "aztable recovery point 1";

/// A file's name and size.
pub type NamedSize = (String, u64);

/// What the last checkpoint recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryPoint {
    /// The last sequence number written (every write up to it was synced).
    pub sequence: u64,
    /// The MANIFEST that CURRENT named, and its size.
    pub manifest: Option<NamedSize>,
    /// The newest write-ahead log, and its size (synced).
    pub log: Option<NamedSize>,
}

impl RecoveryPoint {
    fn to_text(&self) -> String {
        let mut text = format!("{FIRST_LINE}\nsequence {}\n", self.sequence);
        if let Some((name, size)) = &self.manifest {
            text.push_str(&format!("manifest {name} {size}\n"));
        }
        if let Some((name, size)) = &self.log {
            text.push_str(&format!("log {name} {size}\n"));
        }
        text
    }

    fn parse(text: &str) -> Option<RecoveryPoint> {
        let mut lines = text.lines();
        if lines.next()? != FIRST_LINE {
            return None;
        }
        let mut out = RecoveryPoint::default();
        let mut sequence = None;
        for line in lines {
            let words: Vec<&str> = line.split(' ').collect();
            match words.as_slice() {
                ["sequence", n] => sequence = Some(n.parse().ok()?),
                ["manifest", name, size] => out.manifest = Some(((*name).to_owned(), size.parse().ok()?)),
                ["log", name, size] => out.log = Some(((*name).to_owned(), size.parse().ok()?)),
                _ => return None,
            }
        }
        out.sequence = sequence?;
        Some(out)
    }
}

/// What reading the recovery point found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// No recovery point (a new directory, or one written by an older build).
    None,
    /// The file exists but cannot be read as one.
    Unreadable(String),
    Point(RecoveryPoint),
}

/// Reads the recovery point of `dir`.
pub fn read(dir: &Path) -> Recorded {
    match std::fs::read_to_string(dir.join(FILE_NAME)) {
        Ok(text) => match RecoveryPoint::parse(&text) {
            Some(p) => Recorded::Point(p),
            None => Recorded::Unreadable(format!("{FILE_NAME} is not a recovery point")),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Recorded::None,
        Err(e) => Recorded::Unreadable(format!("cannot read {FILE_NAME}: {e}")),
    }
}

/// The MANIFEST CURRENT names and its size, and the newest log and its size, as they
/// are now (the parts of a recovery point that are read from the directory).
pub fn files_now(dir: &Path) -> std::io::Result<(Option<NamedSize>, Option<NamedSize>)> {
    let manifest = match std::fs::read_to_string(dir.join("CURRENT")) {
        Ok(text) => {
            let name = text.trim_end_matches('\n').to_owned();
            let size = std::fs::metadata(dir.join(&name))?.len();
            Some((name, size))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let log = super::wal::log_files(dir)?.pop().and_then(|(path, size)| {
        let name = path.file_name()?.to_string_lossy().into_owned();
        Some((name, size))
    });
    Ok((manifest, log))
}

/// Writes `point` as the recovery point of `dir`, atomically and durably.
pub fn write(dir: &Path, point: &RecoveryPoint) -> std::io::Result<()> {
    let temp = dir.join(TEMP_NAME);
    {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(point.to_text().as_bytes())?;
        file.sync_all()?;
    }
    std::fs::rename(&temp, dir.join(FILE_NAME))?;
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recovery_point_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()), Recorded::None);
        let point = RecoveryPoint {
            sequence: 1234,
            manifest: Some(("MANIFEST-000005".into(), 297)),
            log: Some(("000008.log".into(), 65_536)),
        };
        write(dir.path(), &point).unwrap();
        assert_eq!(read(dir.path()), Recorded::Point(point));
        assert!(!dir.path().join(TEMP_NAME).exists());
        std::fs::write(dir.path().join(FILE_NAME), "sequence 12\n").unwrap();
        assert!(matches!(read(dir.path()), Recorded::Unreadable(_)));
    }
}
