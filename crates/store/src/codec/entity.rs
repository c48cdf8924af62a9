//! Entity values: an entity's Timestamp and custom properties (its keys live in the
//! store key), stored as a *head* under the entity key and, when the entity has long
//! strings or binaries, a *heap* under the heap key (`keys::heap_key`).
//!
//! ```text
//! v3 head (written): 0x03 timestamp:i64 count heap_len directory
//!   directory : { name_len name tag inline }*   count entries, to the end
//!   inline    : the value, as in v1, for fixed-width types and for Strings and Binaries
//!               of up to 64 bytes; longer ones have tag 9 (String) or 10 (Binary)
//!               and only their length here
//! v3 heap           : timestamp:i64 { bytes of each long value, in property order }
//!                     (absent when heap_len is 0)
//! v2 (read)         : 0x02 timestamp:i64 count dir_len directory heap-bytes, in one value
//! v1 (read)         : 0x01 timestamp:i64 count { name_len name tag value }*
//! ```
//!
//! A filter scan reads only heads: every name and every small value in one short run,
//! densely packed in the store's blocks, without the cache misses of stepping over
//! 850-byte strings (profiling one-value layouts showed scans stalled on exactly
//! that). The heap repeats the head's timestamp: every write has a distinct one, so a
//! head and a heap read at different moments are recognized as torn
//! ([`StoreError::Torn`]) and the reader retries under the partition lock. Values of
//! versions 1 and 2 written by earlier builds are still read.

use super::{put_bytes, put_value, put_varint, Reader, StoreError, TAG_BINARY, TAG_STRING, VERSION};
use aztable_model::edm::{EdmRef, EdmValue};
use aztable_model::entity::{Entity, EntityView};
use aztable_model::time::Ticks;

const ENTITY_V2: u8 = 2;
const ENTITY_V3: u8 = 3;
/// Directory tags of a String or Binary whose bytes are in the heap.
const TAG_STRING_OUT: u8 = 9;
const TAG_BINARY_OUT: u8 = 10;
/// Longer Strings and Binaries go to the heap.
const MAX_INLINE: usize = 64;

/// An entity encoded for the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedEntity {
    /// Stored under the entity key.
    pub head: Vec<u8>,
    /// Stored under the heap key; `None` when the entity has no long values (and then
    /// nothing may be stored there).
    pub heap: Option<Vec<u8>>,
}

/// Whether a String property holding `value` is always kept in its entity's head (a
/// longer one goes to the heap).
pub fn string_in_head(value: &str) -> bool {
    value.len() <= MAX_INLINE
}

fn is_long(v: &EdmValue) -> bool {
    match v {
        EdmValue::String(s) => s.len() > MAX_INLINE,
        EdmValue::Binary(b) => b.len() > MAX_INLINE,
        _ => false,
    }
}

/// The directory of an entity and the total length of its heap bytes.
fn directory(e: &Entity) -> (Vec<u8>, usize) {
    let mut dir = Vec::with_capacity(e.properties.len() * 16);
    let mut heap_len = 0;
    for (name, value) in &e.properties {
        put_bytes(&mut dir, name.as_bytes());
        match value {
            EdmValue::String(s) if is_long(value) => {
                dir.push(TAG_STRING_OUT);
                put_varint(&mut dir, s.len() as u64);
                heap_len += s.len();
            }
            EdmValue::Binary(b) if is_long(value) => {
                dir.push(TAG_BINARY_OUT);
                put_varint(&mut dir, b.len() as u64);
                heap_len += b.len();
            }
            inline => put_value(&mut dir, inline),
        }
    }
    (dir, heap_len)
}

fn push_heap_bytes(out: &mut Vec<u8>, e: &Entity) {
    for (_, value) in &e.properties {
        match value {
            EdmValue::String(s) if is_long(value) => out.extend_from_slice(s.as_bytes()),
            EdmValue::Binary(b) if is_long(value) => out.extend_from_slice(b),
            _ => {}
        }
    }
}

/// Encodes an entity's timestamp and custom properties (not its keys) as a head and,
/// if it has long values, a heap.
pub fn encode_entity(e: &Entity) -> EncodedEntity {
    let (dir, heap_len) = directory(e);
    let mut head = Vec::with_capacity(1 + 8 + 10 + 10 + dir.len());
    head.push(ENTITY_V3);
    head.extend_from_slice(&e.timestamp.0.to_be_bytes());
    put_varint(&mut head, e.properties.len() as u64);
    put_varint(&mut head, heap_len as u64);
    head.extend_from_slice(&dir);
    let heap = (heap_len > 0).then(|| {
        let mut heap = Vec::with_capacity(8 + heap_len);
        heap.extend_from_slice(&e.timestamp.0.to_be_bytes());
        push_heap_bytes(&mut heap, e);
        heap
    });
    EncodedEntity { head, heap }
}

/// Encodes in version 2 (one value), as an earlier build did (for tests of reading it).
#[cfg(test)]
pub(super) fn encode_entity_value_v2(e: &Entity) -> Vec<u8> {
    let (dir, heap_len) = directory(e);
    let mut out = Vec::with_capacity(1 + 8 + 10 + 10 + dir.len() + heap_len);
    out.push(ENTITY_V2);
    out.extend_from_slice(&e.timestamp.0.to_be_bytes());
    put_varint(&mut out, e.properties.len() as u64);
    put_varint(&mut out, dir.len() as u64);
    out.extend_from_slice(&dir);
    push_heap_bytes(&mut out, e);
    out
}

/// Where the bytes of long values come from.
enum Heap<'a> {
    /// Version 1 has no long values out of line.
    None,
    Bytes(Reader<'a>),
    /// A v3 head read without its heap.
    Missing,
}

/// A decoder positioned on the properties of an entity value of any version.
struct Props<'a> {
    timestamp: Ticks,
    count: u64,
    /// v2, v3: the directory; v1: everything after the count.
    dir: Reader<'a>,
    heap: Heap<'a>,
}

impl<'a> Props<'a> {
    fn open(head: &'a [u8], heap: Option<&'a [u8]>) -> Result<Self, StoreError> {
        let (version, body) = match head.split_first() {
            Some((&v, body)) if v == VERSION || v == ENTITY_V2 || v == ENTITY_V3 => (v, body),
            Some((v, _)) => return Err(StoreError::Corrupt(format!("entity: unknown version {v}"))),
            None => return Err(StoreError::Corrupt("entity: empty record".into())),
        };
        let mut r = Reader { buf: body, what: &"entity" };
        let timestamp = Ticks(i64::from_be_bytes(r.array()?));
        let count = r.varint()?;
        match version {
            VERSION => Ok(Props { timestamp, count, dir: r, heap: Heap::None }),
            ENTITY_V2 => {
                let dir_len = usize::try_from(r.varint()?).map_err(|_| r.corrupt("length too large"))?;
                let dir = Reader { buf: r.take(dir_len)?, what: &"entity" };
                Ok(Props { timestamp, count, dir, heap: Heap::Bytes(r) })
            }
            _ => {
                let heap_len = usize::try_from(r.varint()?).map_err(|_| r.corrupt("length too large"))?;
                let heap = match heap {
                    None if heap_len == 0 => Heap::Bytes(Reader { buf: &[], what: &"entity heap" }),
                    // a heap beside a head without one belongs to another write
                    Some(_) if heap_len == 0 => return Err(StoreError::Torn),
                    None => Heap::Missing,
                    Some(h) => match h.split_first_chunk::<8>() {
                        Some((ts, rest)) if i64::from_be_bytes(*ts) == timestamp.0 => {
                            if rest.len() != heap_len {
                                return Err(r.corrupt("heap length differs from the head's"));
                            }
                            Heap::Bytes(Reader { buf: rest, what: &"entity heap" })
                        }
                        _ => return Err(StoreError::Torn),
                    },
                };
                Ok(Props { timestamp, count, dir: r, heap })
            }
        }
    }

    /// The next property's name and tag.
    #[inline]
    fn next_header(&mut self) -> Result<(&'a [u8], u8), StoreError> {
        let name = self.dir.bytes()?;
        Ok((name, self.dir.u8()?))
    }

    /// The bytes of a heap value (tag 9 or 10) whose tag was just read; `None` when
    /// the heap was not read.
    #[inline]
    fn heap_payload(&mut self) -> Result<Option<&'a [u8]>, StoreError> {
        let len = usize::try_from(self.dir.varint()?).map_err(|_| self.dir.corrupt("length too large"))?;
        match &mut self.heap {
            Heap::Bytes(heap) => heap.take(len).map(Some),
            Heap::Missing => Ok(None),
            Heap::None => Err(self.dir.corrupt("heap value in a version 1 entity")),
        }
    }

    /// The value whose tag was just read; `None` when it is in a heap not read.
    #[inline]
    fn value_ref(&mut self, tag: u8) -> Result<Option<EdmRef<'a>>, StoreError> {
        let bytes = match tag {
            TAG_STRING | TAG_BINARY => self.dir.bytes()?,
            TAG_STRING_OUT | TAG_BINARY_OUT => match self.heap_payload()? {
                Some(b) => b,
                None => return Ok(None),
            },
            fixed => return self.dir.fixed_value_ref(fixed).map(Some),
        };
        if tag == TAG_STRING || tag == TAG_STRING_OUT {
            // (SIMD validation: a long value is most of a decoded entity's bytes)
            let s = simdutf8::basic::from_utf8(bytes).map_err(|_| self.dir.corrupt("invalid UTF-8"))?;
            Ok(Some(EdmRef::String(s)))
        } else {
            Ok(Some(EdmRef::Binary(bytes)))
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
        match &self.heap {
            Heap::Bytes(heap) => heap.finish(),
            Heap::None | Heap::Missing => Ok(()),
        }
    }
}

/// Calls `visit` with the name and value of every property a head holds whole: Strings
/// of at most 64 bytes (every version keeps those in the head, so no heap is needed)
/// and every fixed-width value; longer Strings and Binaries are skipped. Returns the
/// entity's Timestamp. What a scan's value summary records.
pub fn head_values<'a>(
    head: &'a [u8],
    mut visit: impl FnMut(&'a [u8], EdmRef<'a>),
) -> Result<Ticks, StoreError> {
    head_fields(head, |name, value| {
        if let Some(value) = value {
            visit(name, value);
        }
    })
}

/// Calls `visit` with the name of every property a head names, in stored order, and its
/// value where the head holds it whole (as [`head_values`]; `None` for a longer String
/// or a Binary). Returns the entity's Timestamp. What a summary's columns record.
pub fn head_fields<'a>(
    head: &'a [u8],
    mut visit: impl FnMut(&'a [u8], Option<EdmRef<'a>>),
) -> Result<Ticks, StoreError> {
    let mut p = Props::open(head, None)?;
    for _ in 0..p.count {
        let (name, tag) = p.next_header()?;
        let value = match tag {
            TAG_STRING | TAG_STRING_OUT | TAG_BINARY | TAG_BINARY_OUT => match p.value_ref(tag) {
                Ok(Some(v @ EdmRef::String(s))) if s.len() <= MAX_INLINE => Some(v),
                Ok(_) => None,
                Err(e) => return Err(e),
            },
            fixed => Some(p.dir.fixed_value_ref(fixed)?),
        };
        visit(name, value);
    }
    p.finish()?;
    Ok(p.timestamp)
}

/// The timestamp a head's heap must carry, when the head has a heap (a v3 head with
/// long values); `None` when the head is the whole entity.
pub fn heap_needed(head: &[u8]) -> Result<Option<Ticks>, StoreError> {
    let p = Props::open(head, None)?;
    Ok(matches!(p.heap, Heap::Missing).then_some(p.timestamp))
}

/// The Timestamp of a head, which every version keeps right after its version byte,
/// read without the rest; `None` for a head of no known version or too short for it.
#[inline]
pub fn head_timestamp(head: &[u8]) -> Option<Ticks> {
    match head.split_first()? {
        (&(VERSION | ENTITY_V2 | ENTITY_V3), rest) => {
            Some(Ticks(i64::from_be_bytes(*rest.first_chunk::<8>()?)))
        }
        _ => None,
    }
}

/// Decodes an entity from its head and, when [`heap_needed`] says it has one, its
/// heap, with the keys taken from the store key. A heap of another write than the
/// head's is [`StoreError::Torn`].
pub fn decode_entity(
    partition_key: String,
    row_key: String,
    head: &[u8],
    heap: Option<&[u8]>,
) -> Result<Entity, StoreError> {
    let mut p = Props::open(head, heap)?;
    // Every property takes at least 3 bytes, which bounds the allocation.
    let cap = usize::try_from(p.count).unwrap_or(usize::MAX).min(p.dir.remaining() / 3);
    let mut properties = Vec::with_capacity(cap);
    for _ in 0..p.count {
        let (name, tag) = p.next_header()?;
        let name = std::str::from_utf8(name).map_err(|_| p.dir.corrupt("invalid UTF-8"))?.to_owned();
        let value = match p.value_ref(tag)? {
            None => return Err(p.dir.corrupt("heap missing")),
            Some(EdmRef::String(s)) => EdmValue::String(s.to_owned()),
            Some(EdmRef::Binary(b)) => EdmValue::Binary(b.to_vec()),
            Some(EdmRef::Int32(v)) => EdmValue::Int32(v),
            Some(EdmRef::Int64(v)) => EdmValue::Int64(v),
            Some(EdmRef::Double(v)) => EdmValue::Double(v),
            Some(EdmRef::Boolean(v)) => EdmValue::Boolean(v),
            Some(EdmRef::DateTime(v)) => EdmValue::DateTime(v),
            Some(EdmRef::Guid(g)) => EdmValue::Guid(*g),
        };
        properties.push((name, value));
    }
    p.finish()?;
    Ok(Entity { partition_key, row_key, timestamp: p.timestamp, properties })
}

/// [`decode_entity`], borrowing every key, name and value from the bytes given.
pub fn decode_entity_view<'a>(
    partition_key: &'a str,
    row_key: &'a str,
    head: &'a [u8],
    heap: Option<&'a [u8]>,
) -> Result<EntityView<'a>, StoreError> {
    let mut p = Props::open(head, heap)?;
    // Every property takes at least 3 bytes, which bounds the allocation.
    let cap = usize::try_from(p.count).unwrap_or(usize::MAX).min(p.dir.remaining() / 3);
    let mut properties = Vec::with_capacity(cap);
    for _ in 0..p.count {
        let (name, tag) = p.next_header()?;
        let name = std::str::from_utf8(name).map_err(|_| p.dir.corrupt("invalid UTF-8"))?;
        let Some(value) = p.value_ref(tag)? else {
            return Err(p.dir.corrupt("heap missing"));
        };
        properties.push((name, value));
    }
    p.finish()?;
    Ok(EntityView { partition_key, row_key, timestamp: p.timestamp, properties })
}

/// Decodes only the timestamp and the properties named in `wanted`, borrowing them
/// from the head (and the heap, if given) into `slots` (slot `i` gets `wanted[i]`,
/// `None` when the entity lacks it) and skipping the others without allocating: what
/// a scan needs to evaluate a filter before paying for the whole entity. `slots` must
/// be at least as long as `wanted`. Returns the timestamp, or `None` when a wanted
/// value is in the heap and no heap was given.
///
/// A well-formed v3 head whose wanted values are all in it is read only up to the last
/// of them: the rest is not checked, so a head damaged after them is projected rather
/// than refused (a scan decodes a row it keeps in full, which refuses it then).
pub fn decode_projection<'a>(
    head: &'a [u8],
    heap: Option<&'a [u8]>,
    wanted: &[String],
    slots: &mut [Option<EdmRef<'a>>],
) -> Result<Option<Ticks>, StoreError> {
    match project_v3_head(head, wanted, slots) {
        Some(ts) => Ok(Some(ts)),
        None => decode_projection_general(head, heap, wanted, slots),
    }
}

/// [`decode_projection`] for every version and case, with the errors.
pub(super) fn decode_projection_general<'a>(
    head: &'a [u8],
    heap: Option<&'a [u8]>,
    wanted: &[String],
    slots: &mut [Option<EdmRef<'a>>],
) -> Result<Option<Ticks>, StoreError> {
    let mut p = Props::open(head, heap)?;
    for slot in slots.iter_mut() {
        *slot = None;
    }
    for _ in 0..p.count {
        let (name, tag) = p.next_header()?;
        // (names are unique in a stored entity; were one repeated, the first wins, as in
        // `Entity::get`, and the others are passed over)
        let slot = wanted.iter().position(|w| same_name(w.as_bytes(), name)).and_then(|i| slots.get_mut(i));
        match slot {
            Some(slot @ None) => {
                let Some(v) = p.value_ref(tag)? else {
                    return Ok(None);
                };
                *slot = Some(v);
            }
            _ => p.skip(tag)?,
        }
    }
    p.finish()?;
    Ok(Some(p.timestamp))
}

/// The hot case of [`decode_projection`], one tight pass over a v3 head whose wanted
/// values are all in the head, stopping once every wanted name has its value. `None`
/// sends anything else (other versions, a wanted heap value, any malformed byte before
/// that point) to the general decoder, which gives the same answer or the error; where
/// the general decoder accepts the head, this path gives its answer or `None`.
#[inline]
pub(super) fn project_v3_head<'a>(
    head: &'a [u8],
    wanted: &[String],
    slots: &mut [Option<EdmRef<'a>>],
) -> Option<Ticks> {
    /// The varint at `*at`, moving past it; one- and two-byte values (every count and
    /// length below 16 KiB) inline.
    #[inline(always)]
    fn var(head: &[u8], at: &mut usize) -> Option<usize> {
        let x = usize::from(*head.get(*at)?);
        if x < 0x80 {
            *at += 1;
            return Some(x);
        }
        let y = usize::from(*head.get(*at + 1)?);
        if y < 0x80 {
            *at += 2;
            return Some((x & 0x7F) | (y << 7));
        }
        var_long(head, at)
    }
    #[cold]
    fn var_long(head: &[u8], at: &mut usize) -> Option<usize> {
        let mut v = 0usize;
        for shift in [0, 7, 14, 21, 28] {
            let x = *head.get(*at)?;
            *at += 1;
            v |= usize::from(x & 0x7F) << shift;
            if x < 0x80 {
                return Some(v);
            }
        }
        None
    }
    if head.first() != Some(&ENTITY_V3) {
        return None;
    }
    let timestamp = head_timestamp(head)?;
    let mut at = 9;
    let count = var(head, &mut at)?;
    let heap_len = var(head, &mut at)?;
    slots.fill(None);
    // a bit for the length and first byte of each wanted name, so most names are passed
    // over unread (an empty name, which no property has, would set them all)
    let marks = wanted.iter().fold(0u64, |m, w| match w.as_bytes().first() {
        Some(&first) => m | name_mark(w.len(), first),
        None => u64::MAX,
    });
    let mut want = Wanted { names: wanted, slots };
    // wanted names not met yet: none left, the rest of the head is not read
    let mut missing = wanted.len();
    // whether a heap value is not empty (then there must be a heap)
    let mut out_bytes = false;
    for _ in 0..count {
        let name_len = var(head, &mut at)?;
        let name_at = at;
        at = at.checked_add(name_len)?;
        let tag = *head.get(at)?;
        at += 1;
        let len = match tag {
            TAG_STRING | TAG_BINARY => var(head, &mut at)?,
            TAG_STRING_OUT | TAG_BINARY_OUT => {
                out_bytes |= var(head, &mut at)? != 0;
                if marks & name_mark(name_len, *head.get(name_at)?) != 0
                    && want.position(head.get(name_at..name_at + name_len)?).is_some()
                {
                    return None;
                }
                continue;
            }
            _ => match FIXED_WIDTH.get(usize::from(tag)) {
                Some(&w) if w > 0 => usize::from(w),
                _ => return None,
            },
        };
        let value_at = at;
        at = at.checked_add(len)?;
        if marks & name_mark(name_len, *head.get(name_at)?) != 0
            && want.take(head.get(name_at..name_at + name_len)?, tag, head.get(value_at..at)?)?
        {
            missing -= 1;
            if missing == 0 {
                return Some(timestamp);
            }
        }
    }
    // (with no heap at all, the general decoder rejects any heap value that is not empty)
    (at == head.len() && (heap_len > 0 || !out_bytes)).then_some(timestamp)
}

/// A name's bit in [`project_v3_head`]'s marks, from its length and first byte (names
/// of one length are common: `Count` and `Ratio`).
#[inline(always)]
fn name_mark(len: usize, first: u8) -> u64 {
    1 << (len.wrapping_add(usize::from(first).wrapping_mul(5)) % 64)
}

/// The width of each fixed-width tag's value (0: not a fixed-width tag).
const FIXED_WIDTH: [u8; 9] = {
    let mut w = [0u8; 9];
    w[super::TAG_INT32 as usize] = 4;
    w[super::TAG_INT64 as usize] = 8;
    w[super::TAG_DOUBLE as usize] = 8;
    w[super::TAG_DATETIME as usize] = 8;
    w[super::TAG_BOOLEAN as usize] = 1;
    w[super::TAG_GUID as usize] = 16;
    w
};

/// The names [`project_v3_head`] wants and the slots it fills: one reference in its
/// loop, and a wanted value is taken out of line, so the loop over the directory stays
/// small.
struct Wanted<'w, 's, 'a> {
    names: &'w [String],
    slots: &'s mut [Option<EdmRef<'a>>],
}

impl<'a> Wanted<'_, '_, 'a> {
    #[inline]
    fn position(&self, name: &[u8]) -> Option<usize> {
        self.names.iter().position(|w| same_name(w.as_bytes(), name))
    }

    /// Keeps `value` (with its `tag`) when `name` is wanted and its slot still empty
    /// (`true`: a slot was filled); `None` for a value its tag does not allow.
    #[inline(never)]
    fn take(&mut self, name: &[u8], tag: u8, value: &'a [u8]) -> Option<bool> {
        let Some(i) = self.position(name) else { return Some(false) };
        let v = match tag {
            TAG_STRING => EdmRef::String(simdutf8::basic::from_utf8(value).ok()?),
            TAG_BINARY => EdmRef::Binary(value),
            super::TAG_INT32 => EdmRef::Int32(i32::from_be_bytes(value.try_into().ok()?)),
            super::TAG_INT64 => EdmRef::Int64(i64::from_be_bytes(value.try_into().ok()?)),
            super::TAG_DOUBLE => EdmRef::Double(f64::from_bits(u64::from_be_bytes(value.try_into().ok()?))),
            super::TAG_DATETIME => EdmRef::DateTime(Ticks(i64::from_be_bytes(value.try_into().ok()?))),
            super::TAG_BOOLEAN => match value {
                [0] => EdmRef::Boolean(false),
                [1] => EdmRef::Boolean(true),
                _ => return None,
            },
            _ => EdmRef::Guid(value.try_into().ok()?),
        };
        Some(match self.slots.get_mut(i) {
            Some(slot @ None) => {
                *slot = Some(v);
                true
            }
            _ => false,
        })
    }
}

/// A string some property must equal (a filter's `P eq 'value'`), searched for in heads:
/// a head in which its bytes occur nowhere cannot belong to a matching entity, since
/// every version keeps a value this short in the head. Lets a scan reject most rows
/// without walking their heads.
#[derive(Debug, Clone)]
pub struct HeadNeedle {
    finder: memchr::memmem::Finder<'static>,
}

impl HeadNeedle {
    /// `None` for a value too long to be sure to be in the head.
    pub fn new(value: &str) -> Option<HeadNeedle> {
        string_in_head(value)
            .then(|| HeadNeedle { finder: memchr::memmem::Finder::new(value.as_bytes()).into_owned() })
    }

    /// Whether `head` could belong to an entity with a property equal to the value.
    pub fn may_hold(&self, head: &[u8]) -> bool {
        self.finder.find(head).is_some()
    }
}

/// Byte equality inlined for short names (a `memcmp` call per stored property was 8 %
/// of a filtered scan).
#[inline(always)]
fn same_name(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
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
