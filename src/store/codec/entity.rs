//! Entity values: an entity's Timestamp and custom properties (its keys live in the
//! store key).
//!
//! ```text
//! v2 (written): 0x02 timestamp:i64 count dir_len directory heap
//!   directory : { name_len name tag inline }*   count entries, dir_len bytes
//!   inline    : the value, as in v1, for fixed-width types and for Strings and Binaries
//!               of up to 64 bytes; longer ones have tag 9 (String) or 10 (Binary)
//!               and only their length here
//!   heap      : the bytes of the long Strings and Binaries, in property order
//! v1 (read)   : 0x01 timestamp:i64 count { name_len name tag value }*
//! ```
//!
//! Version 2 keeps every name and every small value in one short run at the start, with
//! long strings and binaries after it: a filter scan reads the few properties it names without
//! touching the cache lines of an 850-byte string it skips (profiling v1 showed a
//! filtered scan stalled on exactly that load). Version 1 values written by earlier
//! releases are still read.

use super::{put_bytes, put_value, put_varint, Reader, StoreError, TAG_BINARY, TAG_STRING, VERSION};
use crate::model::edm::{EdmRef, EdmValue};
use crate::model::entity::Entity;
use crate::model::time::Ticks;

const ENTITY_V2: u8 = 2;
/// v2 directory tags of a String or Binary whose bytes are in the heap.
const TAG_STRING_OUT: u8 = 9;
const TAG_BINARY_OUT: u8 = 10;
/// Longer Strings and Binaries go to the heap.
const MAX_INLINE: usize = 64;

/// Encodes an entity's timestamp and custom properties (not its keys).
pub fn encode_entity_value(e: &Entity) -> Vec<u8> {
    let mut dir = Vec::with_capacity(e.properties.len() * 16);
    let mut heap_len = 0;
    for (name, value) in &e.properties {
        put_bytes(&mut dir, name.as_bytes());
        match value {
            EdmValue::String(s) if s.len() > MAX_INLINE => {
                dir.push(TAG_STRING_OUT);
                put_varint(&mut dir, s.len() as u64);
                heap_len += s.len();
            }
            EdmValue::Binary(b) if b.len() > MAX_INLINE => {
                dir.push(TAG_BINARY_OUT);
                put_varint(&mut dir, b.len() as u64);
                heap_len += b.len();
            }
            inline => put_value(&mut dir, inline),
        }
    }
    let mut out = Vec::with_capacity(1 + 8 + 10 + 10 + dir.len() + heap_len);
    out.push(ENTITY_V2);
    out.extend_from_slice(&e.timestamp.0.to_be_bytes());
    put_varint(&mut out, e.properties.len() as u64);
    put_varint(&mut out, dir.len() as u64);
    out.extend_from_slice(&dir);
    for (_, value) in &e.properties {
        match value {
            EdmValue::String(s) if s.len() > MAX_INLINE => out.extend_from_slice(s.as_bytes()),
            EdmValue::Binary(b) if b.len() > MAX_INLINE => out.extend_from_slice(b),
            _ => {}
        }
    }
    out
}

/// A decoder positioned on the properties of an entity value of either version.
struct Props<'a> {
    timestamp: Ticks,
    count: u64,
    /// v2: the directory; v1: everything after the count.
    dir: Reader<'a>,
    /// v2: the heap of String and Binary bytes; `None` for v1.
    heap: Option<Reader<'a>>,
}

impl<'a> Props<'a> {
    fn open(bytes: &'a [u8]) -> Result<Self, StoreError> {
        let (version, body) = match bytes.split_first() {
            Some((&v, body)) if v == VERSION || v == ENTITY_V2 => (v, body),
            Some((v, _)) => return Err(StoreError::Corrupt(format!("entity: unknown version {v}"))),
            None => return Err(StoreError::Corrupt("entity: empty record".into())),
        };
        let mut r = Reader { buf: body, what: "entity" };
        let timestamp = Ticks(i64::from_be_bytes(r.array()?));
        let count = r.varint()?;
        if version == VERSION {
            return Ok(Props { timestamp, count, dir: r, heap: None });
        }
        let dir_len = usize::try_from(r.varint()?).map_err(|_| r.corrupt("length too large"))?;
        let dir = Reader { buf: r.take(dir_len)?, what: "entity" };
        Ok(Props { timestamp, count, dir, heap: Some(r) })
    }

    /// The next property's name and tag.
    #[inline]
    fn next_header(&mut self) -> Result<(&'a [u8], u8), StoreError> {
        let name = self.dir.bytes()?;
        Ok((name, self.dir.u8()?))
    }

    /// The bytes of a heap value (tag 9 or 10) whose tag was just read.
    #[inline]
    fn heap_payload(&mut self) -> Result<&'a [u8], StoreError> {
        let len = usize::try_from(self.dir.varint()?).map_err(|_| self.dir.corrupt("length too large"))?;
        match &mut self.heap {
            Some(heap) => heap.take(len),
            None => Err(self.dir.corrupt("heap value in a version 1 entity")),
        }
    }

    /// The value whose tag was just read.
    #[inline]
    fn value_ref(&mut self, tag: u8) -> Result<EdmRef<'a>, StoreError> {
        let bytes = match tag {
            TAG_STRING | TAG_BINARY => self.dir.bytes()?,
            TAG_STRING_OUT | TAG_BINARY_OUT => self.heap_payload()?,
            fixed => return self.dir.fixed_value_ref(fixed),
        };
        if tag == TAG_STRING || tag == TAG_STRING_OUT {
            Ok(EdmRef::String(std::str::from_utf8(bytes).map_err(|_| self.dir.corrupt("invalid UTF-8"))?))
        } else {
            Ok(EdmRef::Binary(bytes))
        }
    }

    /// Moves past the value whose tag was just read.
    #[inline]
    fn skip(&mut self, tag: u8) -> Result<(), StoreError> {
        match tag {
            TAG_STRING | TAG_BINARY => self.dir.bytes().map(drop),
            TAG_STRING_OUT | TAG_BINARY_OUT => self.heap_payload().map(drop),
            fixed => self.dir.skip_fixed(fixed),
        }
    }

    fn finish(&self) -> Result<(), StoreError> {
        self.dir.finish()?;
        self.heap.as_ref().map_or(Ok(()), Reader::finish)
    }
}

/// Decodes an entity value written by [`encode_entity_value`] (or by a release that
/// wrote version 1), with the keys taken from the store key.
pub fn decode_entity_value(
    partition_key: String,
    row_key: String,
    bytes: &[u8],
) -> Result<Entity, StoreError> {
    let mut p = Props::open(bytes)?;
    // Every property takes at least 3 bytes, which bounds the allocation.
    let cap = usize::try_from(p.count).unwrap_or(usize::MAX).min(p.dir.remaining() / 3);
    let mut properties = Vec::with_capacity(cap);
    for _ in 0..p.count {
        let (name, tag) = p.next_header()?;
        let name = std::str::from_utf8(name).map_err(|_| p.dir.corrupt("invalid UTF-8"))?.to_owned();
        let value = match p.value_ref(tag)? {
            EdmRef::String(s) => EdmValue::String(s.to_owned()),
            EdmRef::Binary(b) => EdmValue::Binary(b.to_vec()),
            EdmRef::Int32(v) => EdmValue::Int32(v),
            EdmRef::Int64(v) => EdmValue::Int64(v),
            EdmRef::Double(v) => EdmValue::Double(v),
            EdmRef::Boolean(v) => EdmValue::Boolean(v),
            EdmRef::DateTime(v) => EdmValue::DateTime(v),
            EdmRef::Guid(g) => EdmValue::Guid(*g),
        };
        properties.push((name, value));
    }
    p.finish()?;
    Ok(Entity { partition_key, row_key, timestamp: p.timestamp, properties })
}

/// Decodes only the timestamp and the properties named in `wanted`, borrowing them
/// from `bytes` into `slots` (slot `i` gets `wanted[i]`, `None` when the entity lacks
/// it) and skipping the others without allocating: what a scan needs to evaluate a
/// filter before paying for the whole entity. `slots` must be at least as long as
/// `wanted`.
pub fn decode_projection<'a>(
    bytes: &'a [u8],
    wanted: &[String],
    slots: &mut [Option<EdmRef<'a>>],
) -> Result<Ticks, StoreError> {
    let mut p = Props::open(bytes)?;
    for slot in slots.iter_mut() {
        *slot = None;
    }
    for _ in 0..p.count {
        let (name, tag) = p.next_header()?;
        match wanted.iter().position(|w| w.as_bytes() == name) {
            Some(i) => {
                let v = p.value_ref(tag)?;
                // (names are unique in a stored entity; were one repeated, the first wins,
                // as in `Entity::get`)
                if let Some(slot @ None) = slots.get_mut(i) {
                    *slot = Some(v);
                }
            }
            None => p.skip(tag)?,
        }
    }
    p.finish()?;
    Ok(p.timestamp)
}

/// Encodes in version 1, as releases before version 2 did (for tests of reading it).
#[cfg(test)]
pub(super) fn encode_entity_value_v1(e: &Entity) -> Vec<u8> {
    let mut out = vec![VERSION];
    out.extend_from_slice(&e.timestamp.0.to_be_bytes());
    put_varint(&mut out, e.properties.len() as u64);
    for (name, value) in &e.properties {
        put_bytes(&mut out, name.as_bytes());
        put_value(&mut out, value);
    }
    out
}
