//! The ~1 KB test entity, the key layout of preloaded tables, `$batch` bodies and a tiny
//! deterministic RNG (no `rand` dependency).

use std::io::Write as _;

/// Operations per preload / batch-insert change set (the service maximum).
pub const BATCH_SIZE: usize = 100;

/// Length of the `Data` string property (the rest of the entity adds ~200 bytes).
const DATA_LEN: usize = 850;

/// Preloaded entity `i` with `Tag eq 'needle'` once every this many entities.
pub const NEEDLE_EVERY: u64 = 10_000;

/// xorshift64* — plenty for picking keys and filling strings.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// Where preloaded entity `i` lives: `partition_size` consecutive entities per partition.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub entities: u64,
    pub partition_size: u64,
}

impl Layout {
    pub fn partition_key(&self, i: u64) -> String {
        format!("p{:07}", i / self.partition_size)
    }

    pub fn row_key(i: u64) -> String {
        format!("r{i:09}")
    }

    /// The entity index ranges of the preload batches: at most [`BATCH_SIZE`] consecutive
    /// entities, never across a partition boundary.
    pub fn batch_ranges(&self) -> Vec<(u64, u64)> {
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
pub fn entity_json(pk: &str, rk: &str, n: u64, tag: &str, rng: &mut Rng) -> Vec<u8> {
    let mut s = Vec::with_capacity(DATA_LEN + 320);
    let _ = write!(s, "{{\"PartitionKey\":\"{pk}\",\"RowKey\":\"{rk}\",\"Data\":\"");
    // Random lowercase letters written in place, eight per RNG draw: each byte of the draw
    // is scaled onto 0..26 (every letter gets 9 or 10 of the 256 byte values). The tool
    // shares the cores with the server it measures: a division per letter made this loop
    // 45 % of the tool's CPU in batch-insert.
    let start = s.len();
    s.resize(start + DATA_LEN, 0);
    for chunk in s[start..].chunks_mut(8) {
        let bytes = rng.next_u64().to_le_bytes();
        for (b, r) in chunk.iter_mut().zip(bytes) {
            *b = b'a' + ((u32::from(r) * 26) >> 8) as u8;
        }
    }
    let _ = write!(
        s,
        "\",\"Count\":{},\"Big@odata.type\":\"Edm.Int64\",\"Big\":\"{}\",\"Ratio\":{}.5,\"Flag\":{},\
         \"When@odata.type\":\"Edm.DateTime\",\"When\":\"2024-01-{:02}T12:34:56.1234567Z\",\
         \"Id@odata.type\":\"Edm.Guid\",\"Id\":\"{:08x}-0000-4000-8000-{:012x}\",\"Tag\":\"{tag}\"}}",
        n % 1_000_000,
        n.wrapping_mul(1_000_003) % 9_000_000_000_000_000,
        n % 1000,
        n % 2 == 0,
        n % 28 + 1,
        (n >> 16) as u32,
        n & 0xFFFF_FFFF_FFFF,
    );
    s
}

/// The tag of preloaded entity `i`: `needle` for one in [`NEEDLE_EVERY`], else `hay…`.
pub fn preload_tag(i: u64) -> String {
    if i % NEEDLE_EVERY == 0 {
        "needle".into()
    } else {
        format!("hay{}", i % 7)
    }
}

/// A `$batch` body with one change set of inserts (`entities` are JSON bodies already
/// carrying their keys); returns `(content_type, body)`.
pub fn batch_body(base_url: &str, table: &str, id: u64, entities: &[Vec<u8>]) -> (String, Vec<u8>) {
    let mut body = Vec::with_capacity(entities.iter().map(|e| e.len() + 400).sum::<usize>() + 256);
    let _ = write!(
        body,
        "--batch_{id:016x}\r\nContent-Type: multipart/mixed; boundary=changeset_{id:016x}\r\n\r\n"
    );
    // Every sub-request has the same head up to its Content-Length: format it once.
    let mut head = Vec::with_capacity(320);
    let _ = write!(
        head,
        "--changeset_{id:016x}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
         POST {base_url}/{table} HTTP/1.1\r\nContent-Type: application/json\r\n\
         Accept: application/json;odata=nometadata\r\nPrefer: return-no-content\r\n\
         DataServiceVersion: 3.0;\r\nContent-Length: "
    );
    for entity in entities {
        body.extend_from_slice(&head);
        let _ = write!(body, "{}\r\n\r\n", entity.len());
        body.extend_from_slice(entity);
        body.extend_from_slice(b"\r\n");
    }
    let _ = write!(body, "--changeset_{id:016x}--\r\n\r\n--batch_{id:016x}--\r\n");
    (format!("multipart/mixed; boundary=batch_{id:016x}"), body)
}

/// True if a `$batch` response reports a failed sub-request (`HTTP/1.1 4xx/5xx`).
pub fn batch_failed(body: &[u8]) -> bool {
    memchr::memmem::find_iter(body, b"HTTP/1.1 ").any(|i| matches!(body.get(i + 9), Some(b'4' | b'5')))
}

/// Number of entities in a nometadata query response (counts `"RowKey":` occurrences; the
/// bench entities never contain that text in a value).
pub fn count_entities(body: &[u8]) -> u64 {
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
        let parsed = aztable::odata::parse_entity(&body).expect("the server accepts it");
        assert_eq!(parsed.properties.len(), 8);
        let data = v["Data"].as_str().expect("Data");
        assert_eq!(data.len(), DATA_LEN);
        assert!(data.bytes().all(|b| b.is_ascii_lowercase()));
        let other = entity_json("p0000001", "r000000042", 42, "hay", &mut rng);
        assert_ne!(body, other, "each entity gets fresh random data");
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
        let parsed = aztable::batch::parse(&ct, &body, &aztable::batch::Limits::default()).expect("parses");
        assert_eq!(parsed.kind, aztable::batch::BatchKind::ChangeSet);
        assert_eq!(parsed.ops.len(), 100);
        assert!(batch_failed(b"--x\r\nHTTP/1.1 409 Conflict\r\n"));
        assert!(!batch_failed(b"HTTP/1.1 204 No Content\r\nHTTP/1.1 201 Created"));
        assert_eq!(count_entities(br#"{"value":[{"RowKey":"a"},{"RowKey":"b"}]}"#), 2);
    }
}
