//! Value encoding: the compact binary form of table records, entities (timestamp and
//! custom properties; the keys live in the store key, see `entity`) and counters.
//!
//! Layout (lengths and counts are LEB128 varints, fixed-width numbers big-endian):
//!
//! ```text
//! table  : 0x01 id:u64 name_len name
//! value  : String=1 len bytes | Int32=2 i32 | Int64=3 i64 | Double=4 f64 bits
//!          | Boolean=5 u8 | DateTime=6 i64 | Guid=7 [16] | Binary=8 len bytes
//! ```
//!
//! Decoding never panics: truncated, trailing or otherwise malformed bytes give
//! [`StoreError::Corrupt`].

mod entity;

pub use entity::{
    decode_entity, decode_entity_view, decode_projection, encode_entity, head_fields, head_timestamp,
    head_values, heap_needed, string_in_head, EncodedEntity, HeadNeedle,
};

use super::StoreError;
use aztable_model::edm::{EdmRef, EdmValue};
use aztable_model::time::Ticks;

const VERSION: u8 = 1;

const TAG_STRING: u8 = 1;
const TAG_INT32: u8 = 2;
const TAG_INT64: u8 = 3;
const TAG_DOUBLE: u8 = 4;
const TAG_BOOLEAN: u8 = 5;
const TAG_DATETIME: u8 = 6;
const TAG_GUID: u8 = 7;
const TAG_BINARY: u8 = 8;

/// A table's stored record: its id (the entity key prefix) and case-preserved name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRecord {
    pub id: u64,
    pub name: String,
}

/// Encodes a table record.
pub fn encode_table(rec: &TableRecord) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + 8 + 1 + rec.name.len());
    out.push(VERSION);
    out.extend_from_slice(&rec.id.to_be_bytes());
    put_bytes(&mut out, rec.name.as_bytes());
    out
}

/// Decodes a table record written by [`encode_table`].
pub fn decode_table(bytes: &[u8]) -> Result<TableRecord, StoreError> {
    let mut r = Reader::new(bytes, &"table")?;
    let id = u64::from_be_bytes(r.array()?);
    let name = r.string()?;
    r.finish()?;
    Ok(TableRecord { id, name })
}

/// Encodes a counter (e.g. the value under `NEXT_TABLE_ID_KEY`): 8 bytes big-endian.
pub fn encode_u64(v: u64) -> Vec<u8> {
    v.to_be_bytes().to_vec()
}

/// Decodes a counter written by [`encode_u64`].
pub fn decode_u64(b: &[u8]) -> Result<u64, StoreError> {
    let arr: [u8; 8] = b
        .try_into()
        .map_err(|_| StoreError::Corrupt(format!("counter: expected 8 bytes, got {}", b.len())))?;
    Ok(u64::from_be_bytes(arr))
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn put_value(out: &mut Vec<u8>, v: &EdmValue) {
    match v {
        EdmValue::String(s) => {
            out.push(TAG_STRING);
            put_bytes(out, s.as_bytes());
        }
        EdmValue::Int32(i) => {
            out.push(TAG_INT32);
            out.extend_from_slice(&i.to_be_bytes());
        }
        EdmValue::Int64(i) => {
            out.push(TAG_INT64);
            out.extend_from_slice(&i.to_be_bytes());
        }
        EdmValue::Double(d) => {
            out.push(TAG_DOUBLE);
            out.extend_from_slice(&d.to_bits().to_be_bytes());
        }
        EdmValue::Boolean(b) => {
            out.push(TAG_BOOLEAN);
            out.push(u8::from(*b));
        }
        EdmValue::DateTime(t) => {
            out.push(TAG_DATETIME);
            out.extend_from_slice(&t.0.to_be_bytes());
        }
        EdmValue::Guid(g) => {
            out.push(TAG_GUID);
            out.extend_from_slice(g);
        }
        EdmValue::Binary(b) => {
            out.push(TAG_BINARY);
            put_bytes(out, b);
        }
    }
}

/// What a [`Reader`] reads, for error messages: a thin pointer, so that the reader
/// stays three words (hot decoding loops keep it in registers).
type What = &'static &'static str;

/// A bounds-checked cursor over encoded bytes.
struct Reader<'a> {
    buf: &'a [u8],
    what: What,
}

impl<'a> Reader<'a> {
    /// Checks the version byte and positions after it.
    fn new(buf: &'a [u8], what: What) -> Result<Self, StoreError> {
        match buf.split_first() {
            Some((&VERSION, rest)) => Ok(Reader { buf: rest, what }),
            Some((v, _)) => Err(StoreError::Corrupt(format!("{what}: unknown version {v}"))),
            None => Err(StoreError::Corrupt(format!("{what}: empty record"))),
        }
    }

    #[cold]
    fn corrupt(&self, msg: &str) -> StoreError {
        StoreError::Corrupt(format!("{}: {msg}", self.what))
    }

    fn remaining(&self) -> usize {
        self.buf.len()
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8], StoreError> {
        if n > self.buf.len() {
            return Err(self.corrupt("truncated"));
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], StoreError> {
        let s = self.take(N)?;
        s.try_into().map_err(|_| self.corrupt("truncated"))
    }

    #[inline]
    fn u8(&mut self) -> Result<u8, StoreError> {
        match self.buf.split_first() {
            Some((&b, rest)) => {
                self.buf = rest;
                Ok(b)
            }
            None => Err(self.corrupt("truncated")),
        }
    }

    /// A varint; one-byte values (almost every length and count) take the fast path.
    #[inline]
    fn varint(&mut self) -> Result<u64, StoreError> {
        match self.buf.split_first() {
            Some((&b, rest)) if b < 0x80 => {
                self.buf = rest;
                Ok(u64::from(b))
            }
            _ => self.varint_slow(),
        }
    }

    fn varint_slow(&mut self) -> Result<u64, StoreError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            let bits = u64::from(b & 0x7F);
            if shift == 63 && bits > 1 {
                return Err(self.corrupt("varint overflow"));
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.corrupt("varint too long"))
    }

    #[inline]
    fn bytes(&mut self) -> Result<&'a [u8], StoreError> {
        let len = self.varint()?;
        let len = usize::try_from(len).map_err(|_| self.corrupt("length too large"))?;
        self.take(len)
    }

    fn string(&mut self) -> Result<String, StoreError> {
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|_| self.corrupt("invalid UTF-8"))
    }

    /// A fixed-width value (not String or Binary) whose tag was just read.
    #[inline]
    fn fixed_value_ref(&mut self, tag: u8) -> Result<EdmRef<'a>, StoreError> {
        Ok(match tag {
            TAG_INT32 => EdmRef::Int32(i32::from_be_bytes(self.array()?)),
            TAG_INT64 => EdmRef::Int64(i64::from_be_bytes(self.array()?)),
            TAG_DOUBLE => EdmRef::Double(f64::from_bits(u64::from_be_bytes(self.array()?))),
            TAG_BOOLEAN => match self.u8()? {
                0 => EdmRef::Boolean(false),
                1 => EdmRef::Boolean(true),
                _ => return Err(self.corrupt("bad boolean")),
            },
            TAG_DATETIME => EdmRef::DateTime(Ticks(i64::from_be_bytes(self.array()?))),
            TAG_GUID => {
                let g: &'a [u8; 16] = self.take(16)?.try_into().map_err(|_| self.corrupt("truncated"))?;
                EdmRef::Guid(g)
            }
            t => return Err(self.corrupt(&format!("unknown type tag {t}"))),
        })
    }

    /// Moves past a fixed-width value whose tag was just read.
    #[inline]
    fn skip_fixed(&mut self, tag: u8) -> Result<(), StoreError> {
        let n = match tag {
            TAG_INT32 => 4,
            TAG_INT64 | TAG_DOUBLE | TAG_DATETIME => 8,
            TAG_BOOLEAN => 1,
            TAG_GUID => 16,
            t => return Err(self.corrupt(&format!("unknown type tag {t}"))),
        };
        self.take(n).map(drop)
    }

    fn finish(&self) -> Result<(), StoreError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(self.corrupt("trailing bytes"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aztable_model::entity::Entity;
    use proptest::prelude::*;

    /// The longest value a head keeps inline.
    const MAX_INLINE_FOR_TESTS: usize = 64;

    #[test]
    fn projection_keeps_only_wanted_properties() {
        let e = Entity {
            partition_key: "p".into(),
            row_key: "r".into(),
            timestamp: Ticks(42),
            properties: vec![
                ("a".into(), EdmValue::String("x".repeat(1000))),
                ("b".into(), EdmValue::Int64(7)),
                ("c".into(), EdmValue::Binary(vec![1, 2, 3])),
                ("d".into(), EdmValue::Guid([9; 16])),
                ("e".into(), EdmValue::Boolean(true)),
            ],
        };
        let EncodedEntity { head, heap } = encode_entity(&e);
        let heap = heap.expect("a 1000-byte string goes to the heap");
        assert!(head.len() < 100, "the head holds no long value: {} bytes", head.len());
        assert_eq!(heap_needed(&head).unwrap(), Some(Ticks(42)));
        let wanted = ["b".to_owned(), "e".to_owned(), "zz".to_owned(), "d".to_owned(), "a".to_owned()];
        let mut slots = [Some(EdmRef::Int32(1)); 6];
        // "a" is in the heap: without it the projection cannot finish...
        assert_eq!(decode_projection(&head, None, &wanted, &mut slots).unwrap(), None);
        // ...but it can when "a" is not wanted
        assert_eq!(decode_projection(&head, None, &wanted[..4], &mut slots).unwrap(), Some(Ticks(42)));
        let ts = decode_projection(&head, Some(&heap), &wanted, &mut slots).unwrap();
        assert_eq!(ts, Some(Ticks(42)));
        let x1000 = "x".repeat(1000);
        assert_eq!(
            slots,
            [
                Some(EdmRef::Int64(7)),
                Some(EdmRef::Boolean(true)),
                None,
                Some(EdmRef::Guid(&[9; 16])),
                Some(EdmRef::String(&x1000)),
                None
            ]
        );
        decode_projection(&head, None, &[], &mut []).unwrap();
        // every value of every type borrows back equal to its owned decoding
        let all = all_types();
        let enc = encode_entity(&all);
        let names: Vec<String> = all.properties.iter().map(|(n, _)| n.clone()).collect();
        let mut slots = vec![None; names.len()];
        decode_projection(&enc.head, enc.heap.as_deref(), &names, &mut slots).unwrap();
        for ((_, v), slot) in all.properties.iter().zip(&slots) {
            // (compared through Debug, where NaN equals NaN)
            assert_eq!(format!("{:?}", Some(v.borrowed())), format!("{slot:?}"));
        }
        assert!(decode_projection(&head[..head.len() - 1], Some(&heap), &wanted, &mut [None; 5]).is_err());
        assert!(decode_projection(&head, Some(&heap[..heap.len() - 1]), &wanted, &mut [None; 5]).is_err());
        // a heap of another write (another timestamp) is torn, not corrupt
        let newer = encode_entity(&Entity { timestamp: Ticks(43), ..e.clone() });
        let torn = decode_projection(&head, newer.heap.as_deref(), &wanted, &mut [None; 5]);
        assert!(matches!(torn, Err(StoreError::Torn)), "{torn:?}");
        let torn = decode_entity("p".into(), "r".into(), &head, newer.heap.as_deref());
        assert!(matches!(torn, Err(StoreError::Torn)), "{torn:?}");
        assert!(decode_entity("p".into(), "r".into(), &head, None).is_err());
        // a short string is always in the head, a long one may not be
        let needle = |v: &str| HeadNeedle::new(v).expect("short");
        assert!(needle("e").may_hold(&head) && !needle("needle").may_hold(&head));
        assert!(HeadNeedle::new(&"z".repeat(MAX_INLINE_FOR_TESTS + 1)).is_none());
        // no long value, no heap
        let small = Entity { properties: e.properties[1..].to_vec(), ..e };
        let enc = encode_entity(&small);
        assert_eq!(enc.heap, None);
        assert_eq!(heap_needed(&enc.head).unwrap(), None);
    }

    /// Compares entities treating doubles bitwise (so NaN equals NaN).
    fn same(a: &Entity, b: &Entity) -> bool {
        a.partition_key == b.partition_key
            && a.row_key == b.row_key
            && a.timestamp == b.timestamp
            && a.properties.len() == b.properties.len()
            && a.properties.iter().zip(&b.properties).all(|((na, va), (nb, vb))| {
                na == nb
                    && match (va, vb) {
                        (EdmValue::Double(x), EdmValue::Double(y)) => x.to_bits() == y.to_bits(),
                        _ => va == vb,
                    }
            })
    }

    fn round_trip(e: &Entity) -> Entity {
        let enc = encode_entity(e);
        assert_eq!(enc.heap.is_some(), heap_needed(&enc.head).unwrap().is_some());
        decode_entity(e.partition_key.clone(), e.row_key.clone(), &enc.head, enc.heap.as_deref()).unwrap()
    }

    fn all_types() -> Entity {
        Entity {
            partition_key: "pk".into(),
            row_key: "rk".into(),
            timestamp: Ticks(637_379_000_024_923_650),
            properties: vec![
                ("s".into(), EdmValue::String("héllo \u{1F600}".into())),
                ("empty".into(), EdmValue::String(String::new())),
                ("i32".into(), EdmValue::Int32(i32::MIN)),
                ("i64".into(), EdmValue::Int64(i64::MAX)),
                ("d".into(), EdmValue::Double(-0.0)),
                ("nan".into(), EdmValue::Double(f64::NAN)),
                ("inf".into(), EdmValue::Double(f64::INFINITY)),
                ("ninf".into(), EdmValue::Double(f64::NEG_INFINITY)),
                ("t".into(), EdmValue::Boolean(true)),
                ("f".into(), EdmValue::Boolean(false)),
                ("dt".into(), EdmValue::DateTime(Ticks(504_911_232_000_000_000))),
                ("g".into(), EdmValue::Guid([0xAB; 16])),
                ("bin".into(), EdmValue::Binary(vec![0, 1, 255])),
                ("ebin".into(), EdmValue::Binary(Vec::new())),
            ],
        }
    }

    #[test]
    fn every_type_round_trips() {
        let e = all_types();
        assert!(same(&round_trip(&e), &e));
    }

    #[test]
    fn many_properties_and_empty() {
        let mut e = all_types();
        e.properties = (0..252).map(|i| (format!("p{i}"), EdmValue::Int64(i))).collect();
        assert!(same(&round_trip(&e), &e));
        e.properties.clear();
        assert_eq!(round_trip(&e), e);
    }

    #[test]
    fn table_and_u64_round_trip() {
        let rec = TableRecord { id: u64::MAX, name: "MyTable".into() };
        assert_eq!(decode_table(&encode_table(&rec)).unwrap(), rec);
        for v in [0, 1, 300, u64::MAX] {
            assert_eq!(decode_u64(&encode_u64(v)).unwrap(), v);
        }
        assert!(decode_u64(&[1, 2, 3]).is_err());
        assert!(decode_table(&[]).is_err());
        assert!(decode_table(&[2, 0, 0, 0, 0, 0, 0, 0, 1, 0]).is_err());
    }

    #[test]
    fn truncated_and_trailing_are_errors() {
        let mut e = all_types();
        e.properties.push(("long".into(), EdmValue::String("y".repeat(100))));
        e.properties.push(("longbin".into(), EdmValue::Binary(vec![7; 100])));
        let EncodedEntity { head, heap } = encode_entity(&e);
        let heap = heap.expect("long values");
        let decode = |head: &[u8], heap: &[u8]| {
            decode_entity(String::new(), String::new(), head, (!heap.is_empty()).then_some(heap))
        };
        decode(&head, &heap).unwrap();
        for n in 0..head.len() {
            assert!(decode(&head[..n], &heap).is_err());
        }
        for n in 0..heap.len() {
            assert!(decode(&head, &heap[..n]).is_err());
        }
        let mut long = head.clone();
        long.push(0);
        assert!(decode(&long, &heap).is_err());
        let mut long = heap;
        long.push(0);
        assert!(decode(&head, &long).is_err());
        let t = encode_table(&TableRecord { id: 7, name: "abc".into() });
        for n in 0..t.len() {
            assert!(decode_table(&t[..n]).is_err());
        }
        // A huge property count must not allocate or panic.
        let mut huge = vec![VERSION, 0, 0, 0, 0, 0, 0, 0, 0];
        put_varint(&mut huge, u64::MAX);
        assert!(decode_entity(String::new(), String::new(), &huge, None).is_err());
        let overflow =
            [VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F];
        assert!(decode_entity(String::new(), String::new(), &overflow, None).is_err());
    }

    #[test]
    fn varint_round_trip() {
        for v in [0, 1, 127, 128, 16_383, 16_384, u64::MAX / 3, u64::MAX] {
            let mut b = vec![VERSION];
            put_varint(&mut b, v);
            let mut r = Reader::new(&b, &"t").unwrap();
            assert_eq!(r.varint().unwrap(), v);
            r.finish().unwrap();
        }
    }

    fn edm_value() -> impl Strategy<Value = EdmValue> {
        prop_oneof![
            ".{0,8}".prop_map(EdmValue::String),
            // around the 64-byte limit of inline values, and well beyond it
            "[a-z]{60,70}".prop_map(EdmValue::String),
            ".{0,300}".prop_map(EdmValue::String),
            prop::collection::vec(any::<u8>(), 60..200).prop_map(EdmValue::Binary),
            any::<i32>().prop_map(EdmValue::Int32),
            any::<i64>().prop_map(EdmValue::Int64),
            any::<u64>().prop_map(|b| EdmValue::Double(f64::from_bits(b))),
            any::<bool>().prop_map(EdmValue::Boolean),
            any::<i64>().prop_map(|t| EdmValue::DateTime(Ticks(t))),
            any::<[u8; 16]>().prop_map(EdmValue::Guid),
            prop::collection::vec(any::<u8>(), 0..16).prop_map(EdmValue::Binary),
        ]
    }

    proptest! {
        #[test]
        fn entity_round_trip(
            ts in any::<i64>(),
            props in prop::collection::vec((".{0,6}", edm_value()), 0..12),
        ) {
            let e = Entity {
                partition_key: "p".into(),
                row_key: "r".into(),
                timestamp: Ticks(ts),
                properties: props,
            };
            prop_assert!(same(&round_trip(&e), &e));
            // the borrowed view shows the same entity, from every version's bytes
            let enc = encode_entity(&e);
            let view = decode_entity_view("p", "r", &enc.head, enc.heap.as_deref()).unwrap();
            prop_assert!(same(&view.to_entity(), &e));
            let v1 = entity::encode_entity_value_v1(&e);
            prop_assert!(same(&decode_entity_view("p", "r", &v1, None).unwrap().to_entity(), &e));
            // values written by releases before version 2 still read back the same
            let v1 = entity::encode_entity_value_v1(&e);
            prop_assert!(same(&decode_entity("p".into(), "r".into(), &v1, None).unwrap(), &e));
            let v2 = entity::encode_entity_value_v2(&e);
            prop_assert!(same(&decode_entity("p".into(), "r".into(), &v2, None).unwrap(), &e));
            // and a projection of any property agrees with the full decoding, in both
            let mut names: Vec<String> = Vec::new();
            for (n, _) in &e.properties {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
            let v3 = encode_entity(&e);
            // the fast path for heads agrees with the general decoder on every subset
            for k in 0..=names.len() {
                let (mut fast, mut general) = (vec![None; k], vec![None; k]);
                let f = entity::project_v3_head(&v3.head, &names[..k], &mut fast);
                let g = entity::decode_projection_general(&v3.head, None, &names[..k], &mut general).unwrap();
                if let Some(ts) = f {
                    prop_assert_eq!(Some(ts), g);
                    prop_assert_eq!(format!("{fast:?}"), format!("{general:?}"));
                }
            }
            for (head, heap) in [(&v3.head, v3.heap.as_deref()), (&v1, None), (&v2, None)] {
                // every version's Timestamp, read alone
                prop_assert_eq!(head_timestamp(head), Some(e.timestamp));
                let mut slots = vec![None; names.len()];
                let ts = decode_projection(head, heap, &names, &mut slots).unwrap();
                prop_assert_eq!(ts, Some(e.timestamp));
                for (name, slot) in names.iter().zip(&slots) {
                    // (Debug, where NaN equals NaN; the first of a repeated name wins)
                    prop_assert_eq!(format!("{slot:?}"), format!("{:?}", e.get(name).map(EdmValue::borrowed)));
                }
            }
        }

        #[test]
        fn garbage_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_entity(String::new(), String::new(), &bytes, None);
            // the view accepts exactly what the owned decoding accepts
            for heap in [None, Some(&bytes[..])] {
                let owned = decode_entity(String::new(), String::new(), &bytes, heap);
                let view = decode_entity_view("", "", &bytes, heap).map(|v| v.to_entity());
                prop_assert_eq!(format!("{owned:?}"), format!("{view:?}"));
            }
            let _ = decode_table(&bytes);
            let _ = decode_u64(&bytes);
            for version in [VERSION, 2, 3] {
                let mut v = vec![version];
                v.extend_from_slice(&bytes);
                let _ = decode_entity(String::new(), String::new(), &v, None);
                let _ = decode_entity(String::new(), String::new(), &v, Some(&bytes));
                for heap in [None, Some(&bytes[..])] {
                    let owned = decode_entity(String::new(), String::new(), &v, heap);
                    let view = decode_entity_view("", "", &v, heap).map(|view| view.to_entity());
                    prop_assert_eq!(format!("{owned:?}"), format!("{view:?}"));
                }
                let _ = heap_needed(&v);
                // the Timestamp read alone is the one a full decoding finds
                if let (Some(ts), Ok(e)) = (head_timestamp(&v), decode_entity(String::new(), String::new(), &v, None)) {
                    prop_assert_eq!(ts, e.timestamp);
                }
                let _ = decode_projection(&v, None, &["a".to_owned(), String::new()], &mut [None; 2]);
                let _ = decode_projection(&v, Some(&bytes), &["a".to_owned()], &mut [None; 1]);
                // whatever the fast path accepts, the general decoder accepts alike, unless
                // the fast path stopped at the last wanted value (before the damage)
                let names = ["a".to_owned(), String::new(), "b".to_owned()];
                for k in 0..=names.len() {
                    let (mut fast, mut general) = ([None; 3], [None; 3]);
                    let Some(ts) = entity::project_v3_head(&v, &names[..k], &mut fast) else { continue };
                    match entity::decode_projection_general(&v, None, &names[..k], &mut general) {
                        Ok(Some(g)) => {
                            prop_assert_eq!(g, ts);
                            prop_assert_eq!(format!("{fast:?}"), format!("{general:?}"));
                        }
                        _ => {
                            prop_assert!(k > 0 && fast[..k].iter().all(Option::is_some), "{fast:?}");
                            prop_assert_eq!(head_timestamp(&v), Some(ts));
                        }
                    }
                }
                let _ = decode_table(&v);
            }
        }
    }
}
