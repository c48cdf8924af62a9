//! The ~1 KB test entity, the key layout of preloaded tables, `$batch` bodies and a tiny
//! deterministic RNG (no `rand` dependency).

use std::io::Write as _;

/// Operations per preload / batch-insert change set (the service maximum).
pub(crate) const BATCH_SIZE: usize = 100;

/// Length of the `Data` string property (the rest of the entity adds ~200 bytes).
const DATA_LEN: usize = 850;

/// Preloaded entity `i` with `Tag eq 'needle'` once every this many entities.
pub(crate) const NEEDLE_EVERY: u64 = 10_000;

/// xorshift64* — plenty for picking keys and filling strings.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// Where preloaded entity `i` lives: `partition_size` consecutive entities per partition.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    pub entities: u64,
    pub partition_size: u64,
}

impl Layout {
    pub(crate) fn partition_key(&self, i: u64) -> String {
        format!("p{:07}", i / self.partition_size)
    }

    pub(crate) fn row_key(i: u64) -> String {
        format!("r{i:09}")
    }

    /// The entity index ranges of the preload batches: at most [`BATCH_SIZE`] consecutive
    /// entities, never across a partition boundary.
    pub(crate) fn batch_ranges(&self) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut start = 0;
        while start < self.entities {
            let partition_end = (start / self.partition_size + 1) * self.partition_size;
            let end = (start + BATCH_SIZE as u64).min(partition_end).min(self.entities);
            out.push((start, end));
            start = end;
        }
        out
    }
}

/// The JSON body of one ~1 KB entity: a long string plus a few typed properties.
pub(crate) fn entity_json(pk: &str, rk: &str, n: u64, tag: &str, rng: &mut Rng) -> Vec<u8> {
    let mut s = Vec::with_capacity(DATA_LEN + 320);
    push_entity_json(&mut s, pk, rk, n, tag, rng);
    s
}

/// Appends [`entity_json`]'s body to `s`. Hand-rolled rather than `write!`: the tool
/// shares the cores with the server it measures, and formatting was a tenth of its CPU
/// in batch-insert.
pub(crate) fn push_entity_json(s: &mut Vec<u8>, pk: &str, rk: &str, n: u64, tag: &str, rng: &mut Rng) {
    let put = |s: &mut Vec<u8>, parts: &[&[u8]]| parts.iter().for_each(|p| s.extend_from_slice(p));
    put(s, &[b"{\"PartitionKey\":\"", pk.as_bytes(), b"\",\"RowKey\":\"", rk.as_bytes(), b"\",\"Data\":\""]);
    push_letters(s, DATA_LEN, rng);
    s.extend_from_slice(b"\",\"Count\":");
    push_decimal(s, n % 1_000_000, 1);
    s.extend_from_slice(b",\"Big@odata.type\":\"Edm.Int64\",\"Big\":\"");
    push_decimal(s, n.wrapping_mul(1_000_003) % 9_000_000_000_000_000, 1);
    s.extend_from_slice(b"\",\"Ratio\":");
    push_decimal(s, n % 1000, 1);
    s.extend_from_slice(if n % 2 == 0 { b".5,\"Flag\":true," } else { b".5,\"Flag\":false," });
    s.extend_from_slice(b"\"When@odata.type\":\"Edm.DateTime\",\"When\":\"2024-01-");
    push_decimal(s, n % 28 + 1, 2);
    s.extend_from_slice(b"T12:34:56.1234567Z\",\"Id@odata.type\":\"Edm.Guid\",\"Id\":\"");
    push_hex(s, (n >> 16) & 0xFFFF_FFFF, 8);
    s.extend_from_slice(b"-0000-4000-8000-");
    push_hex(s, n & 0xFFFF_FFFF_FFFF, 12);
    put(s, &[b"\",\"Tag\":\"", tag.as_bytes(), b"\"}"]);
}

/// Appends `len` random lowercase letters, eight per RNG draw: each byte of the draw is
/// scaled onto 0..26 (every letter gets 9 or 10 of the 256 byte values), eight bytes at
/// once in 16-bit lanes (`255 * 26` fits a lane, so no lane carries into the next).
fn push_letters(s: &mut Vec<u8>, len: usize, rng: &mut Rng) {
    const LANES: u64 = 0x00FF_00FF_00FF_00FF;
    let scale = |x: u64| (((x & LANES) * 26) >> 8) & LANES;
    let start = s.len();
    s.resize(start + len, 0);
    for chunk in s[start..].chunks_mut(8) {
        let x = rng.next_u64();
        let letters = (scale(x) | (scale(x >> 8) << 8)) + 0x6161_6161_6161_6161; // + b'a'
        chunk.copy_from_slice(&letters.to_le_bytes()[..chunk.len()]);
    }
}

/// Appends `v` in decimal, zero-padded to at least `width` digits.
fn push_decimal(s: &mut Vec<u8>, mut v: u64, width: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    while v > 0 || digits.len() - i < width {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    s.extend_from_slice(&digits[i..]);
}

/// Appends the low `width` hex digits of `v`, lowercase.
fn push_hex(s: &mut Vec<u8>, v: u64, width: usize) {
    s.extend((0..width).rev().map(|i| b"0123456789abcdef"[(v >> (4 * i)) as usize & 15]));
}

/// The tag of preloaded entity `i`: `needle` for one in [`NEEDLE_EVERY`], else `hay…`.
pub(crate) fn preload_tag(i: u64) -> String {
    if i % NEEDLE_EVERY == 0 {
        "needle".into()
    } else {
        format!("hay{}", i % 7)
    }
}

/// A `$batch` body with one change set of inserts (`entities` are JSON bodies already
/// carrying their keys); returns `(content_type, body)`.
pub(crate) fn batch_body(base_url: &str, table: &str, id: u64, entities: &[Vec<u8>]) -> (String, Vec<u8>) {
    let mut body = BatchBody::new(base_url, table, id, entities.iter().map(Vec::len).sum());
    entities.iter().for_each(|e| body.push(e));
    body.finish()
}

/// A `$batch` body of one change set of inserts, built one entity at a time.
pub(crate) struct BatchBody {
    id: u64,
    body: Vec<u8>,
    /// Every sub-request's head up to its Content-Length value, formatted once.
    head: Vec<u8>,
}

impl BatchBody {
    /// `bytes`: about how many bytes of entity JSON will be pushed.
    pub(crate) fn new(base_url: &str, table: &str, id: u64, bytes: usize) -> BatchBody {
        let mut body = Vec::with_capacity(bytes + 400 * bytes.div_ceil(1000) + 256);
        let _ = write!(
            body,
            "--batch_{id:016x}\r\nContent-Type: multipart/mixed; boundary=changeset_{id:016x}\r\n\r\n"
        );
        let mut head = Vec::with_capacity(320);
        let _ = write!(
            head,
            "--changeset_{id:016x}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
             POST {base_url}/{table} HTTP/1.1\r\nContent-Type: application/json\r\n\
             Accept: application/json;odata=nometadata\r\nPrefer: return-no-content\r\n\
             DataServiceVersion: 3.0;\r\nContent-Length: "
        );
        BatchBody { id, body, head }
    }

    /// Appends one insert of the JSON `entity`.
    pub(crate) fn push(&mut self, entity: &[u8]) {
        self.body.extend_from_slice(&self.head);
        push_decimal(&mut self.body, entity.len() as u64, 1);
        self.body.extend_from_slice(b"\r\n\r\n");
        self.body.extend_from_slice(entity);
        self.body.extend_from_slice(b"\r\n");
    }

    /// `(content_type, body)`.
    pub(crate) fn finish(mut self) -> (String, Vec<u8>) {
        let id = self.id;
        let _ = write!(self.body, "--changeset_{id:016x}--\r\n\r\n--batch_{id:016x}--\r\n");
        (format!("multipart/mixed; boundary=batch_{id:016x}"), self.body)
    }
}

/// Checks a `$batch` response to a change set of `ops` operations: every sub-response
/// status line (`HTTP/1.1 NNN` at the start of a line) must be 2xx, and there must be
/// one per operation, so that an answer of another shape (an entity, an empty body)
/// counts as an error rather than as `ops` entities written.
pub(crate) fn batch_outcome(body: &[u8], ops: u64) -> Result<(), String> {
    let mut ok = 0u64;
    for i in memchr::memmem::find_iter(body, b"HTTP/1.1 ") {
        if i > 0 && body[i - 1] != b'\n' {
            continue;
        }
        match body.get(i + 9) {
            Some(b'2') => ok += 1,
            _ => {
                let line = &body[i..];
                let line = &line[..memchr::memchr(b'\r', line).unwrap_or(line.len()).min(80)];
                return Err(format!("sub-request failed: {}", String::from_utf8_lossy(line)));
            }
        }
    }
    if ok != ops {
        return Err(format!("{ok} sub-responses for {ops} operations"));
    }
    Ok(())
}

/// Number of entities in a nometadata query response (counts `"RowKey":` occurrences; the
/// bench entities never contain that text in a value).
pub(crate) fn count_entities(body: &[u8]) -> u64 {
    memchr::memmem::find_iter(body, b"\"RowKey\":").count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entity_is_about_one_kilobyte_and_valid_json() {
        let mut rng = Rng::new(7);
        let body = entity_json("p0000001", "r000000042", 42, "hay", &mut rng);
        assert!((1000..1300).contains(&body.len()), "{}", body.len());
        let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(v["RowKey"], "r000000042");
        let parsed = aztable_wire::odata::parse_entity(&body).expect("the server accepts it");
        assert_eq!(parsed.properties.len(), 8);
        let data = v["Data"].as_str().expect("Data");
        assert_eq!(data.len(), DATA_LEN);
        assert!(data.bytes().all(|b| b.is_ascii_lowercase()));
        let other = entity_json("p0000001", "r000000042", 42, "hay", &mut rng);
        assert_ne!(body, other, "each entity gets fresh random data");
    }

    #[test]
    fn entity_fields_are_formatted_as_by_write() {
        for n in [0u64, 1, 9, 10, 27, 999_999, 1_000_000, 123_456_789_012, u64::MAX] {
            let body = entity_json("p", "r", n, "t", &mut Rng::new(n));
            let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
            assert_eq!(v["Count"], n % 1_000_000);
            assert_eq!(v["Big"], (n.wrapping_mul(1_000_003) % 9_000_000_000_000_000).to_string());
            assert_eq!(v["Ratio"], (n % 1000) as f64 + 0.5);
            assert_eq!(v["Flag"], n % 2 == 0);
            assert_eq!(v["When"], format!("2024-01-{:02}T12:34:56.1234567Z", n % 28 + 1));
            assert_eq!(
                v["Id"],
                format!("{:08x}-0000-4000-8000-{:012x}", (n >> 16) as u32, n & 0xFFFF_FFFF_FFFF)
            );
        }
    }

    #[test]
    fn letters_cover_the_alphabet_evenly() {
        let mut rng = Rng::new(3);
        let mut s = Vec::new();
        push_letters(&mut s, 26_003, &mut rng);
        assert_eq!(s.len(), 26_003);
        let mut counts = [0usize; 26];
        for b in &s {
            assert!(b.is_ascii_lowercase(), "{b}");
            counts[usize::from(b - b'a')] += 1;
        }
        // 9 or 10 of 256 byte values per letter: between 0.035 and 0.039 of the letters
        assert!(counts.iter().all(|&c| (800..1100).contains(&c)), "{counts:?}");
    }

    #[test]
    fn batch_ranges_stay_in_partitions() {
        let layout = Layout { entities: 1050, partition_size: 1000 };
        let ranges = layout.batch_ranges();
        assert_eq!(ranges.len(), 11);
        assert_eq!(ranges[9], (900, 1000));
        assert_eq!(ranges[10], (1000, 1050));
        for (s, e) in ranges {
            assert_eq!(layout.partition_key(s), layout.partition_key(e - 1));
        }
    }

    #[test]
    fn batch_bodies_parse() {
        let mut rng = Rng::new(1);
        let entities: Vec<Vec<u8>> =
            (0..100).map(|i| entity_json("p", &Layout::row_key(i), i, "hay", &mut rng)).collect();
        let (ct, body) = batch_body("http://127.0.0.1:1/devstoreaccount1", "t", 9, &entities);
        let parsed =
            aztable_wire::batch::parse(&ct, &body, &aztable_wire::batch::Limits::default()).expect("parses");
        assert_eq!(parsed.kind, aztable_wire::batch::BatchKind::ChangeSet);
        assert_eq!(parsed.ops.len(), 100);
        assert_eq!(
            batch_outcome(b"--x\r\nHTTP/1.1 409 Conflict\r\n", 2),
            Err("sub-request failed: HTTP/1.1 409 Conflict".into())
        );
        assert_eq!(batch_outcome(b"HTTP/1.1 204 No Content\r\nHTTP/1.1 201 Created", 2), Ok(()));
        assert_eq!(
            batch_outcome(b"x\nHTTP/1.1 204 No Content\r\n", 2),
            Err("1 sub-responses for 2 operations".into())
        );
        assert_eq!(
            batch_outcome(b"{\"Data\":\"no HTTP/1.1 500 here\"}", 0),
            Ok(()),
            "status lines start a line"
        );
        assert_eq!(count_entities(br#"{"value":[{"RowKey":"a"},{"RowKey":"b"}]}"#), 2);
    }
}
