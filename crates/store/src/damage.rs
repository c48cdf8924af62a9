//! Damage found while serving: what a store does when the engine reports that data it
//! read back is corrupt on disk (a block that fails its checksum, a truncated file).
//!
//! Such a read can never succeed, so it is not an ordinary engine failure (which the
//! client is told to retry): the store answers [`StoreError::DataCorrupted`] with a
//! sentence naming the damaged file and saying to restore the data directory from a
//! backup; the engine's full text, with the file's path, goes to the server's log once.
//! From then on the store counts as damaged: every write is refused with the same
//! error until the process restarts (writing more into a directory that must be
//! restored only adds to what would be lost), and [`DamageLatch::report`] says so for
//! the health answer and the metrics.

use super::StoreError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// What a store found damaged while serving: for health answers and metrics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DamageReport {
    /// The first damage met, as the client was told it (names the file); `None`
    /// while nothing was found damaged.
    pub first: Option<String>,
    /// Operations that met damage since the process started.
    pub errors: u64,
}

impl DamageReport {
    /// Whether the store is known to be damaged.
    pub fn damaged(&self) -> bool {
        self.first.is_some()
    }
}

/// What [`crate::Store::verify_checksums`] read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Table files (SSTs) read, over every column family.
    pub files: u64,
    /// Their bytes on disk.
    pub file_bytes: u64,
    /// Stored entries read (keys and values, every version, tombstones too).
    pub entries: u64,
    /// Bytes of those keys and values.
    pub entry_bytes: u64,
}

/// Remembers the first damage a store met and counts every operation that met it.
#[derive(Debug, Default)]
pub struct DamageLatch {
    first: OnceLock<String>,
    errors: AtomicU64,
}

impl DamageLatch {
    /// Records that an operation met damage the engine described as `engine_text`,
    /// and returns the error to answer it with.
    pub fn note(&self, engine_text: &str) -> StoreError {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let message = corrupted_message(engine_text);
        let mut first = false;
        self.first.get_or_init(|| {
            first = true;
            message.clone()
        });
        if first {
            tracing::error!(
                engine_error = engine_text,
                "the data directory is damaged: {engine_text}; reads of the damaged data and every \
                 write are refused until the server restarts; restore the data directory from a backup"
            );
        }
        StoreError::DataCorrupted(message)
    }

    /// `Ok` while no damage was found; afterwards the error a write is refused with.
    pub fn check_writable(&self) -> Result<(), StoreError> {
        match self.first.get() {
            None => Ok(()),
            Some(first) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                Err(StoreError::DataCorrupted(format!(
                    "Writes are refused until the server restarts, because the data directory is \
                     damaged: {first}"
                )))
            }
        }
    }

    /// What was found so far.
    pub fn report(&self) -> DamageReport {
        DamageReport { first: self.first.get().cloned(), errors: self.errors.load(Ordering::Relaxed) }
    }
}

/// The file an engine error names (`.../000012.sst`), by its name in the data
/// directory; `None` when the text names none.
pub fn damaged_file(engine_text: &str) -> Option<&str> {
    const KINDS: [&str; 4] = [".sst", ".log", ".blob", "MANIFEST-"];
    engine_text
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '\'' | '"' | '(' | ')'))
        .filter(|word| KINDS.iter().any(|k| word.contains(k)))
        .map(|word| word.rsplit(['/', '\\']).next().unwrap_or(word))
        .find(|name| !name.is_empty())
}

/// The client's sentence for damage the engine described as `engine_text`: the file by
/// its name (never the server's path), what was found, and what to do.
pub fn corrupted_message(engine_text: &str) -> String {
    let what = if engine_text.contains("checksum") { "failed its checksum" } else { "is corrupt" };
    let file = match damaged_file(engine_text) {
        Some(name) => format!("the file {name} in the data directory {what}"),
        None => format!("a file of the data directory {what} (the server's log names it)"),
    };
    format!(
        "The data directory is damaged: {file} when it was read. Retrying will not help: restore \
         the data directory from a backup."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROCKS: &str = "Corruption: block checksum mismatch: stored(context removed) = 1234, computed = \
                         5678, type = 4  in /var/data/000012.sst offset 8192 size 4021";

    #[test]
    fn names_the_file_without_its_directory() {
        assert_eq!(damaged_file(ROCKS), Some("000012.sst"));
        assert_eq!(
            damaged_file("Corruption: truncated block read from /d/000009.sst offset 0"),
            Some("000009.sst")
        );
        assert_eq!(damaged_file("Corruption: bad entry in block"), None);
        let m = corrupted_message(ROCKS);
        assert!(m.contains("000012.sst") && m.contains("failed its checksum"), "{m}");
        assert!(m.contains("restore the data directory from a backup"), "{m}");
        assert!(!m.contains("/var/data") && !m.to_lowercase().contains("please retry"), "{m}");
    }

    #[test]
    fn the_first_damage_refuses_writes_and_is_reported() {
        let latch = DamageLatch::default();
        assert!(latch.check_writable().is_ok());
        assert_eq!(latch.report(), DamageReport::default());
        assert!(matches!(latch.note(ROCKS), StoreError::DataCorrupted(m) if m.contains("000012.sst")));
        latch.note("Corruption: block checksum mismatch in /d/000013.sst");
        let refused = latch.check_writable();
        assert!(
            matches!(&refused, Err(StoreError::DataCorrupted(m)) if m.contains("000012.sst")),
            "{refused:?}"
        );
        let report = latch.report();
        assert!(report.damaged() && report.first.as_deref().is_some_and(|f| f.contains("000012.sst")));
        assert_eq!(report.errors, 3);
    }
}
