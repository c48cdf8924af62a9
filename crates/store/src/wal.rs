//! Reads the engine's write-ahead log files (`*.log` in the data directory) just far
//! enough to list the write batches they hold: each batch's first sequence number and
//! its count of operations. Used when a damaged log is recovered with
//! `--recoverTolerate`, to say how many acknowledged writes recovery dropped: those
//! whose sequence numbers lie after the last one recovered.
//!
//! The format (RocksDB's `db/log_format.h`): 32 KiB blocks of physical records, each a
//! header (masked CRC32C of type and payload: 4 bytes LE, payload length: 2 bytes LE,
//! type: 1 byte; the recyclable types add a 4-byte log number) and the payload. A
//! logical record is one FULL record or FIRST, MIDDLE..., LAST; a write batch starts
//! with its sequence number (8 bytes LE) and count (4 bytes LE). A record that fails
//! its checksum is skipped (with the fragments around it), so the batches after a
//! damaged region are still found.
//!
//! [`check`] reads the same format strictly, before the engine reads a log at start:
//! every checksum, every length and the order of the fragments. It finds where the
//! intact records end and whether what follows is a torn tail (the file ends inside
//! the last record, or only zeros follow: a write cut by a stopped process or
//! machine, never acknowledged) or damage (anything else: bytes a writer never wrote).

use std::path::{Path, PathBuf};

const BLOCK: usize = 32 * 1024;
const HEADER: usize = 7;
const RECYCLABLE_HEADER: usize = 11;
const MASK_DELTA: u32 = 0xa282_ead8;

/// One write batch found in a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    /// Sequence number of its first operation.
    pub seq: u64,
    /// Operations in it (its last sequence number is `seq + count - 1`).
    pub count: u32,
}

/// What one log file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogScan {
    /// Intact write batches, in file order.
    pub batches: Vec<Batch>,
    /// Bytes in records that failed their checksum or length check.
    pub damaged_bytes: u64,
}

/// Whether `name` is the engine's name for a file of this extension: a number, a dot
/// and `ext` (`000008.log`, `000009.sst`). Other files (a user's `server.log`) are not
/// the engine's.
pub fn numbered(name: &str, ext: &str) -> bool {
    name.strip_suffix(ext)
        .and_then(|stem| stem.strip_suffix('.'))
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// The write-ahead logs (`<number>.log`) of `dir` with their sizes, by name (log numbers
/// are zero-padded, so name order is log order).
pub fn log_files(dir: &Path) -> std::io::Result<Vec<(PathBuf, u64)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let engine_log = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| numbered(n, "log"));
        if engine_log && entry.file_type()?.is_file() {
            out.push((path, entry.metadata()?.len()));
        }
    }
    out.sort();
    Ok(out)
}

/// Lists the write batches of one log file's bytes.
pub fn scan(bytes: &[u8]) -> LogScan {
    let mut out = LogScan::default();
    let mut record: Option<Vec<u8>> = None;
    let mut pos = 0;
    while pos < bytes.len() {
        let block_left = BLOCK - pos % BLOCK;
        if block_left < HEADER {
            pos += block_left; // trailer padding
            continue;
        }
        let Some(head) = bytes.get(pos..pos + HEADER) else { break };
        let kind = head[6];
        let len = usize::from(u16::from_le_bytes([head[4], head[5]]));
        let header = if (5..=8).contains(&kind) { RECYCLABLE_HEADER } else { HEADER };
        if kind == 0 && len == 0 {
            pos += block_left; // preallocated zeros: the rest of the block is empty
            continue;
        }
        let end = pos + header + len;
        let intact = header + len <= block_left
            && bytes.get(pos..end).is_some_and(|r| {
                let stored = u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
                let mut crc = crc32c(0, &r[6..7]);
                crc = crc32c(crc, &r[header..]);
                unmask(stored) == crc
            });
        if !intact {
            // skip the rest of the block: the next header is at the next block
            let skip = block_left.min(bytes.len() - pos);
            out.damaged_bytes += skip as u64;
            record = None;
            pos += skip;
            continue;
        }
        let payload = &bytes[pos + header..end];
        pos = end;
        match kind {
            1 | 5 => {
                push_batch(&mut out, payload);
                record = None;
            }
            2 | 6 => record = Some(payload.to_vec()),
            3 | 7 => {
                if let Some(r) = record.as_mut() {
                    r.extend_from_slice(payload);
                }
            }
            4 | 8 => {
                if let Some(mut r) = record.take() {
                    r.extend_from_slice(payload);
                    push_batch(&mut out, &r);
                }
            }
            _ => {} // metadata records (compression type, predecessor log, ...)
        }
    }
    out
}

/// What [`check`] found after the intact records of a log-format file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tail {
    /// Every byte belongs to an intact record.
    Clean,
    /// The file ends inside a record, or only zeros follow: a cut last write.
    Torn,
    /// Bytes no writer wrote: the first bad record's offset and what is wrong with it.
    Damaged { offset: u64, what: &'static str },
}

/// The strict reading of one log-format file (a write-ahead log or a MANIFEST).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// The end of the last intact logical record: what a reader can trust.
    pub intact_end: u64,
    /// The last sequence number of the intact write batches (write-ahead logs only).
    pub last_seq: Option<u64>,
    /// What follows `intact_end`.
    pub tail: Tail,
}

/// Reads a log-format file strictly (see the module's header). `batches`: the records
/// are write batches, whose sequence numbers are collected.
pub fn check(bytes: &[u8], batches: bool) -> Check {
    let len = bytes.len();
    let mut out = Check { intact_end: 0, last_seq: None, tail: Tail::Clean };
    let mut record: Option<Vec<u8>> = None;
    let mut pos = 0;
    let damaged = |offset: usize, what| Tail::Damaged { offset: offset as u64, what };
    while pos < len {
        let block_left = BLOCK - pos % BLOCK;
        if block_left < HEADER {
            // a writer pads a block's last bytes with zeros
            let end = (pos + block_left).min(len);
            if bytes[pos..end].iter().any(|&b| b != 0) {
                out.tail = damaged(pos, "non-zero bytes in a block's padding");
                return out;
            }
            pos = end;
            continue;
        }
        if bytes[pos..].iter().all(|&b| b == 0) {
            out.tail = Tail::Torn; // never written: zeros to the end
            return out;
        }
        if len - pos < HEADER {
            out.tail = Tail::Torn; // a cut header
            return out;
        }
        let head = &bytes[pos..pos + HEADER];
        let kind = head[6];
        let payload_len = usize::from(u16::from_le_bytes([head[4], head[5]]));
        let header = match kind {
            1..=4 | 9 | 10 | 130 => HEADER,
            5..=8 | 11 | 131 => RECYCLABLE_HEADER,
            0 => {
                out.tail = damaged(pos, "zeroed bytes before the end of the file");
                return out;
            }
            _ => {
                out.tail = damaged(pos, "a record of unknown type");
                return out;
            }
        };
        if header + payload_len > block_left {
            out.tail = damaged(pos, "a record longer than its block");
            return out;
        }
        let end = pos + header + payload_len;
        if end > len {
            out.tail = Tail::Torn; // the file ends inside this record
            return out;
        }
        let r = &bytes[pos..end];
        let stored = u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
        if unmask(stored) != crc32c(crc32c(0, &r[6..7]), &r[header..]) {
            out.tail = damaged(pos, "a checksum mismatch");
            return out;
        }
        let payload = &bytes[pos + header..end];
        match (kind, record.is_some()) {
            (1 | 5, false) => {
                note_record(&mut out, payload, batches);
                out.intact_end = end as u64;
            }
            (2 | 6, false) => record = Some(payload.to_vec()),
            (3 | 7, true) => record.iter_mut().for_each(|r| r.extend_from_slice(payload)),
            (4 | 8, true) => {
                let mut whole = record.take().unwrap_or_default();
                whole.extend_from_slice(payload);
                note_record(&mut out, &whole, batches);
                out.intact_end = end as u64;
            }
            (1 | 2 | 5 | 6, true) => {
                out.tail = damaged(pos, "a record starting inside another one");
                return out;
            }
            (3 | 4 | 7 | 8, false) => {
                out.tail = damaged(pos, "the continuation of a record that never started");
                return out;
            }
            // metadata records (compression type, timestamp sizes, predecessor log)
            _ if record.is_none() => out.intact_end = end as u64,
            _ => {
                out.tail = damaged(pos, "a record starting inside another one");
                return out;
            }
        }
        pos = end;
    }
    if record.is_some() {
        out.tail = Tail::Torn; // the file ends between a record's fragments
    }
    out
}

fn note_record(out: &mut Check, payload: &[u8], batches: bool) {
    if !batches {
        return;
    }
    let mut scan = LogScan::default();
    push_batch(&mut scan, payload);
    if let Some(b) = scan.batches.first() {
        let last = b.seq + u64::from(b.count.max(1)) - 1;
        out.last_seq = Some(out.last_seq.map_or(last, |s| s.max(last)));
    }
}

fn push_batch(out: &mut LogScan, payload: &[u8]) {
    if let (Some(seq), Some(count)) = (payload.get(0..8), payload.get(8..12)) {
        let seq = u64::from_le_bytes(seq.try_into().unwrap_or_default());
        let count = u32::from_le_bytes(count.try_into().unwrap_or_default());
        out.batches.push(Batch { seq, count });
    }
}

fn unmask(masked: u32) -> u32 {
    let rot = masked.wrapping_sub(MASK_DELTA);
    rot.rotate_left(15)
}

/// CRC-32C (Castagnoli) a byte at a time from a table: every start reads every log.
fn crc32c(crc: u32, data: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in data {
        c = CRC_TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut bit = 0;
        while bit < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0x82f6_3b78 } else { c >> 1 };
            bit += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(crc: u32) -> u32 {
        crc.rotate_right(15).wrapping_add(MASK_DELTA)
    }

    /// A log of batches laid out as the engine writes them: records split at block
    /// ends into FIRST, MIDDLE and LAST fragments, short block tails zero-padded.
    fn log_of(batches: &[(u64, u32, usize)]) -> Vec<u8> {
        let mut out = Vec::new();
        for &(seq, count, pad) in batches {
            let mut payload = seq.to_le_bytes().to_vec();
            payload.extend_from_slice(&count.to_le_bytes());
            payload.resize(12 + pad, b'x');
            let mut rest = &payload[..];
            let mut first = true;
            loop {
                let left = BLOCK - out.len() % BLOCK;
                if left < HEADER {
                    out.resize(out.len() + left, 0);
                    continue;
                }
                let n = rest.len().min(left - HEADER);
                let last = n == rest.len();
                let kind = match (first, last) {
                    (true, true) => 1,
                    (true, false) => 2,
                    (false, false) => 3,
                    (false, true) => 4,
                };
                let crc = crc32c(crc32c(0, &[kind]), &rest[..n]);
                out.extend_from_slice(&mask(crc).to_le_bytes());
                out.extend_from_slice(&u16::try_from(n).unwrap().to_le_bytes());
                out.push(kind);
                out.extend_from_slice(&rest[..n]);
                rest = &rest[n..];
                first = false;
                if last {
                    break;
                }
            }
        }
        out
    }

    #[test]
    fn check_tells_a_torn_tail_from_damage() {
        let batches: Vec<_> = (0..90).map(|i| (1 + 2 * i, 2, 1000)).collect();
        let log = log_of(&batches);
        let whole = check(&log, true);
        assert_eq!(whole, Check { intact_end: log.len() as u64, last_seq: Some(180), tail: Tail::Clean });
        // cut anywhere inside the last record: torn, the rest intact
        let last_start = log_of(&batches[..89]).len();
        for cut in [last_start + 3, last_start + 7, log.len() - 1] {
            let c = check(&log[..cut], true);
            assert_eq!(
                (c.intact_end, c.last_seq, c.tail),
                (last_start as u64, Some(178), Tail::Torn),
                "{cut}"
            );
        }
        // zeros to the end: torn
        let mut zeroed = log.clone();
        zeroed[last_start..].iter_mut().for_each(|b| *b = 0);
        assert_eq!(check(&zeroed, true).tail, Tail::Torn);
        // zeros, then records: damage
        let mut hole = log.clone();
        hole[20_000..21_000].iter_mut().for_each(|b| *b = 0);
        assert!(matches!(check(&hole, true).tail, Tail::Damaged { .. }));
        // a flipped bit in the first record: damage at offset 0
        let mut flipped = log.clone();
        flipped[100] ^= 4;
        let c = check(&flipped, true);
        assert_eq!((c.intact_end, c.last_seq), (0, None));
        assert_eq!(c.tail, Tail::Damaged { offset: 0, what: "a checksum mismatch" });
        // a flipped bit in the middle: the records before it are intact
        let mut mid = log;
        mid[50_000] ^= 1;
        let c = check(&mid, true);
        assert!(matches!(c.tail, Tail::Damaged { offset, .. } if offset > 40_000 && offset <= 50_000));
        assert!(c.intact_end <= 50_000 && c.last_seq.is_some());
    }

    #[test]
    fn crc32c_known_value() {
        assert_eq!(crc32c(0, b"123456789"), 0xe306_9283);
    }

    #[test]
    fn finds_batches_and_skips_a_damaged_block() {
        // 3 blocks' worth of 1 KiB batches
        let batches: Vec<_> = (0..90).map(|i| (1 + 2 * i, 2, 1000)).collect();
        let mut log = log_of(&batches);
        assert_eq!(scan(&log).batches.len(), 90);
        assert_eq!(scan(&log).damaged_bytes, 0);
        // garbage in the middle of the first block: the rest of that block is lost, the
        // later blocks' whole records are found again
        for b in &mut log[10_000..14_096] {
            *b = 0x5a;
        }
        let s = scan(&log);
        assert!(s.damaged_bytes > 0);
        assert!(s.batches.len() < 90 && s.batches.len() > 40, "{}", s.batches.len());
        assert_eq!(s.batches.last().map(|b| b.seq), Some(1 + 2 * 89));
    }
}
