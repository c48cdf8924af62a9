//! `--seed FILE|DIR`: the server's store filled at start from files `aztable export`
//! wrote (a directory: each of its files, in name order), before the port is announced,
//! so every test container starts from the same data. Reads the files with the
//! importer's line parser and writes through the service, as `aztable import
//! --location` does.

use crate::format::{self, Line};
use crate::local::write_entities;
use crate::IMPORT_CHUNK;
use aztable_engine::service::{ServiceError, TableService};
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// What a seed wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Seeded {
    pub files: usize,
    pub tables: usize,
    pub entities: u64,
}

/// The files of `path`: itself, or a directory's regular files not starting with a dot,
/// in name order.
fn seed_files(path: &Path) -> Result<Vec<PathBuf>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("--seed {}: {e}", path.display()))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let entries = std::fs::read_dir(path).map_err(|e| format!("--seed {}: {e}", path.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("--seed {}: {e}", path.display()))?;
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if !hidden && entry.file_type().is_ok_and(|t| t.is_file()) {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}

/// Imports the export file(s) at `path` into `account`. A table that exists already
/// (from an earlier file, or a store seeded over with `--seedOverwrite`) is written
/// into; entities replace any of the same keys.
pub fn seed(service: &TableService, account: &str, path: &Path) -> Result<Seeded, String> {
    let mut done = Seeded::default();
    for file in seed_files(path)? {
        let tables = seed_file(service, account, &file, &mut done.entities)?;
        done.files += 1;
        done.tables += tables;
    }
    Ok(done)
}

/// One file; returns how many tables it held.
fn seed_file(
    service: &TableService,
    account: &str,
    file: &Path,
    entities: &mut u64,
) -> Result<usize, String> {
    let open = std::fs::File::open(file).map_err(|e| format!("--seed {}: {e}", file.display()))?;
    let input = std::io::BufReader::with_capacity(1 << 16, open);
    let now = aztable_model::time::wall_now();
    let mut current: Option<String> = None;
    let mut tables = 0;
    let mut pending = Vec::with_capacity(IMPORT_CHUNK);
    let flush = |table: &Option<String>, pending: &mut Vec<_>, entities: &mut u64| -> Result<(), String> {
        if let Some(t) = table {
            write_entities(service, account, t, pending)
                .map_err(|e| format!("--seed {}: {e}", file.display()))?;
            *entities += pending.len() as u64;
        }
        pending.clear();
        Ok(())
    };
    for (n, line) in input.split(b'\n').enumerate() {
        let at = |why: String| format!("--seed {} line {}: {why}", file.display(), n + 1);
        let line = line.map_err(|e| at(e.to_string()))?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match format::parse_line(&line).map_err(at)? {
            Line::Table(name) => {
                flush(&current, &mut pending, entities)?;
                match service.tables().create_table(account, &name) {
                    Ok(_) | Err(ServiceError::TableAlreadyExists) => {}
                    Err(e) => return Err(at(format!("cannot create table '{name}': {e}"))),
                }
                tables += 1;
                current = Some(name);
            }
            Line::Entity(mut e, timestamp) => {
                if current.is_none() {
                    return Err(at("an entity before any {\"TableName\":...} line".into()));
                }
                e.timestamp = timestamp.unwrap_or(now);
                pending.push(e);
                if pending.len() >= IMPORT_CHUNK {
                    flush(&current, &mut pending, entities)?;
                }
            }
        }
    }
    flush(&current, &mut pending, entities)?;
    Ok(tables)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn service() -> TableService {
        TableService::new(Arc::new(aztable_store::mem::MemStore::new()))
    }

    #[test]
    fn a_directory_seeds_each_file_in_name_order_and_keeps_timestamps() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.jsonl"),
            concat!(
                "{\"TableName\":\"people\"}\n",
                "{\"PartitionKey\":\"p\",\"RowKey\":\"1\",\"Timestamp\":\"2024-05-01T10:00:00Z\",\"Age\":42}\n",
                "\n{\"PartitionKey\":\"p\",\"RowKey\":\"2\"}\n",
            ),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("b.jsonl"),
            "{\"TableName\":\"people\"}\n{\"PartitionKey\":\"p\",\"RowKey\":\"2\",\"Age\":7}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join(".hidden"), "not json").unwrap();
        let s = service();
        let done = seed(&s, "acct", dir.path()).unwrap();
        assert_eq!(done, Seeded { files: 2, tables: 2, entities: 3 });
        let e = s.entities().get_entity("acct", "people", "p", "1").unwrap();
        assert_eq!(e.timestamp.to_rfc3339_trimmed(), "2024-05-01T10:00:00Z");
        let e = s.entities().get_entity("acct", "people", "p", "2").unwrap();
        assert_eq!(e.properties.len(), 1, "the later file's entity replaced the earlier one");
    }

    #[test]
    fn bad_lines_and_missing_files_name_where() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.jsonl");
        std::fs::write(&file, "{\"PartitionKey\":\"p\",\"RowKey\":\"1\"}\n").unwrap();
        let e = seed(&service(), "acct", &file).unwrap_err();
        assert!(e.contains("x.jsonl line 1") && e.contains("TableName"), "{e}");
        std::fs::write(&file, "{\"TableName\":\"tab\"}\nnot json\n").unwrap();
        assert!(seed(&service(), "acct", &file).unwrap_err().contains("line 2"));
        assert!(seed(&service(), "acct", &dir.path().join("missing")).unwrap_err().contains("missing"));
    }
}
