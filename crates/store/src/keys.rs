//! Key layout: order-preserving ("memcomparable") byte keys for metadata, tables and
//! entities.
//!
//! Every key starts with a one-byte kind prefix:
//!
//! ```text
//! 0x00 <name>                                   metadata (NEXT_TABLE_ID_KEY, FORMAT_VERSION_KEY)
//! 0x01 enc(account) enc(lowercase(table))       table record
//! 0x02 table_id(u64 big-endian) enc(pk) enc(rk)      entity (its head)
//! 0x02 table_id(u64 big-endian) 0xFF enc(pk) enc(rk) entity heap: the long values of the entity
//! 0x03 enc(account) enc(lowercase(table))       table ACL (the Get Table ACL XML body)
//! 0x04 enc(account)                             service properties (the Get Table Service Properties XML body)
//! 0x05 table_id(u64 big-endian) enc(pk) enc(rk) legacy entity heap (the earlier layout;
//!                                               moved by `partition::move_legacy_heaps`)
//! ```
//!
//! An entity is stored under its key with everything a filter reads (see
//! `codec::entity`); the bytes of its long strings and binaries, if any, live under its
//! heap key: the same key with `0xFF` after the table id, which no `enc` begins with. A
//! table's heads are so one dense range to scan ([`table_heads_range`]), followed by its
//! heaps ([`table_heaps_range`]), and all of a table is one range: a write to one table
//! makes store files that span that table only, not every table's keys between its
//! heads and its heaps (which every query of every other table then had to look into
//! until they were compacted).
//!
//! `enc(s)` is the UTF-8 bytes of `s` with `0x00` escaped as `0x00 0xFF`, the lead
//! bytes `0xEE`/`0xEF` remapped to `0xF5`/`0xF6`, and a `0x00 0x01` terminator. The
//! encoding is prefix-free, so the byte order of whole keys equals the order of their
//! string tuples, and strings compare in UTF-16 code-unit order (the real service's
//! order): UTF-8 byte order differs from UTF-16 order only where U+E000..=U+FFFF (lead
//! bytes EE/EF) meets U+10000.. (lead bytes F0..=F4), and the remap moves the former
//! above the latter. `0xF5`/`0xF6` never occur in valid UTF-8, so decoding is exact.

/// The single metadata key holding the next table id to hand out.
pub const NEXT_TABLE_ID_KEY: &[u8] = b"\x00next_table_id";

/// The metadata key holding the storage format version of the directory (a u64, see
/// `partition::migrate`); absent in directories written before it existed.
pub const FORMAT_VERSION_KEY: &[u8] = b"\x00format_version";

const TABLE_PREFIX: u8 = 0x01;
const ENTITY_PREFIX: u8 = 0x02;
const ACL_PREFIX: u8 = 0x03;
const SERVICE_PROPERTIES_PREFIX: u8 = 0x04;
const LEGACY_HEAP_PREFIX: u8 = 0x05;
/// Follows the table id in a heap key; every `enc` begins with a lower byte.
const HEAP_MARK: u8 = 0xFF;
/// Kind byte plus table id: the part of an entity key before the partition key.
const TABLE_ID_END: usize = 9;

const ESC: u8 = 0x00;
const ESC_NUL: u8 = 0xFF;
const ESC_END: u8 = 0x01;

/// Appends the order-preserving encoding of `s` (terminator included) to `out`.
pub fn encode_key_string(out: &mut Vec<u8>, s: &str) {
    // most keys hold none of the bytes the encoding changes: copied whole
    match changes_in_encoding(s.as_bytes()) {
        false => {
            out.reserve(s.len() + 2);
            out.extend_from_slice(s.as_bytes());
            out.extend_from_slice(&[ESC, ESC_END]);
        }
        true => encode_key_bytes(out, s.len(), s.bytes()),
    }
}

/// Whether `bytes` holds a byte [`encode_key_string`] changes (0x00, 0xEE, 0xEF), eight
/// at a time (keys are short: memchr's set-up cost more than the search).
fn changes_in_encoding(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // the classic has-zero-byte test: exact for "any"
    let any_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS != 0;
    // 0xEE and 0xEF are the bytes whose value with the lowest bit cleared is 0xEE
    let special = |w: u64| any_zero(w) || any_zero((w & !ONES) ^ 0xEEEE_EEEE_EEEE_EEEE);
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        if special(u64::from_le_bytes(word.try_into().unwrap_or_default())) {
            return true;
        }
    }
    words.remainder().iter().any(|b| matches!(b, 0x00 | 0xEE | 0xEF))
}

/// [`encode_key_string`] of the string whose `len` bytes `bytes` yields.
fn encode_key_bytes(out: &mut Vec<u8>, len: usize, bytes: impl Iterator<Item = u8>) {
    out.reserve(len + 2);
    for b in bytes {
        match b {
            0x00 => out.extend_from_slice(&[ESC, ESC_NUL]),
            0xEE => out.push(0xF5),
            0xEF => out.push(0xF6),
            _ => out.push(b),
        }
    }
    out.extend_from_slice(&[ESC, ESC_END]);
}

/// Decodes one string written by [`encode_key_string`] from the start of `input`;
/// returns the string and the number of bytes consumed (terminator included), or
/// `None` when the bytes are not a valid encoding.
pub fn decode_key_string(input: &[u8]) -> Option<(String, usize)> {
    let mut s = String::new();
    let n = decode_key_string_into(input, &mut s)?;
    Some((s, n))
}

/// Returns the key of a table record: `0x01 enc(account) enc(lowercase(table_name))`.
/// Table names are ASCII (validated upstream), so lowercasing is ASCII lowercasing.
pub fn table_key(account: &str, table_name: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(account.len() + table_name.len() + 8);
    push_table_key(&mut out, account, table_name);
    out
}

/// Appends [`table_key`] to `out` (no allocation once `out` has room).
pub fn push_table_key(out: &mut Vec<u8>, account: &str, table_name: &str) {
    out.push(TABLE_PREFIX);
    encode_key_string(out, account);
    // the name in lower case, without lower-casing it into a new string first (the
    // bytes the encoding changes are no letters: lower-casing after encoding is the same)
    let start = out.len();
    encode_key_string(out, table_name);
    out[start..].make_ascii_lowercase();
}

fn account_tables_prefix(account: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(account.len() + 24);
    out.push(TABLE_PREFIX);
    encode_key_string(&mut out, account);
    out
}

/// Returns `[start, end)` covering every [`table_key`] of `account`.
pub fn tables_range(account: &str) -> (Vec<u8>, Vec<u8>) {
    let start = account_tables_prefix(account);
    let end = prefix_end(&start);
    (start, end)
}

/// Decodes a [`table_key`] into (account, lowercase table name).
pub fn decode_table_key(key: &[u8]) -> Option<(String, String)> {
    let rest = key.strip_prefix(&[TABLE_PREFIX])?;
    let (account, n) = decode_key_string(rest)?;
    let rest = rest.get(n..)?;
    let (table, m) = decode_key_string(rest)?;
    (m == rest.len()).then_some((account, table))
}

fn table_entities_prefix(table_id: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.push(ENTITY_PREFIX);
    out.extend_from_slice(&table_id.to_be_bytes());
    out
}

/// Returns the key of an entity: `0x02 table_id(BE) enc(pk) enc(rk)`.
pub fn entity_key(table_id: u64, pk: &str, rk: &str) -> Vec<u8> {
    let mut out = table_entities_prefix(table_id);
    encode_key_string(&mut out, pk);
    encode_key_string(&mut out, rk);
    out
}

/// Returns `[start, end)` covering everything stored of the table's entities: their
/// heads, then their heaps.
pub fn table_entities_range(table_id: u64) -> (Vec<u8>, Vec<u8>) {
    let start = table_entities_prefix(table_id);
    let end = prefix_end(&start);
    (start, end)
}

/// Returns `[start, end)` covering every entity head ([`entity_key`]) of the table, and
/// no heap.
pub fn table_heads_range(table_id: u64) -> (Vec<u8>, Vec<u8>) {
    let start = table_entities_prefix(table_id);
    let mut end = start.clone();
    end.push(HEAP_MARK);
    (start, end)
}

/// Whether `key` is an [`entity_key`] (not a heap, catalog or other key).
pub fn is_entity_key(key: &[u8]) -> bool {
    key.first() == Some(&ENTITY_PREFIX) && key.get(TABLE_ID_END) != Some(&HEAP_MARK)
}

/// Returns the heap key belonging to an [`entity_key`]: `0xFF` inserted after the
/// table id. Also maps a bound of a range of one table's heads (the table id and a
/// prefix of `enc(pk) enc(rk)`, or [`table_heads_range`]'s end) to the bound of their
/// heaps, keeping order.
pub fn heap_key(entity_key: &[u8]) -> Vec<u8> {
    let (table, rest) = entity_key.split_at(entity_key.len().min(TABLE_ID_END));
    let mut k = Vec::with_capacity(entity_key.len() + 1);
    k.extend_from_slice(table);
    k.push(HEAP_MARK);
    k.extend_from_slice(rest);
    k
}

/// Whether `key` is an entity heap key ([`heap_key`]), or a bound [`heap_key`] made of
/// a bound of heads.
pub fn is_heap_key(key: &[u8]) -> bool {
    key.first() == Some(&ENTITY_PREFIX) && key.get(TABLE_ID_END) == Some(&HEAP_MARK)
}

/// Which keys `[start, end)` can hold: (keys that are not heaps, heaps). Exact for the
/// ranges the crate uses (one table's heads, its heaps, all of it, a partition, a key
/// kind), and for any other range never `false` where such a key could lie in it. The
/// store keeps heaps apart from everything else (`store/rocks/`) and reads or deletes
/// a range only where it can have keys.
pub fn range_holds(start: &[u8], end: &[u8]) -> (bool, bool) {
    // every scan and range delete asks, so nothing here allocates
    const FIRST_HEAP: [u8; TABLE_ID_END + 1] = [ENTITY_PREFIX, 0, 0, 0, 0, 0, 0, 0, 0, HEAP_MARK];
    if start >= end {
        return (false, false);
    }
    let past_entities = start > [ENTITY_PREFIX].as_slice() && start.first() != Some(&ENTITY_PREFIX);
    if past_entities || end <= FIRST_HEAP.as_slice() {
        // past every entity key, or before the first heap
        return (true, false);
    }
    let Some(table) = start.get(..TABLE_ID_END).filter(|_| start.first() == Some(&ENTITY_PREFIX)) else {
        return (true, true);
    };
    let mut bound = [0u8; TABLE_ID_END + 1];
    if is_heap_key(start) {
        // among one table's heaps: what follows them is the next table's heads, from
        // the table prefix's end on
        let mut len = TABLE_ID_END;
        bound[..len].copy_from_slice(table);
        while len > 0 && bound[len - 1] == 0xFF {
            len -= 1;
        }
        let next = match len {
            0 => return (true, true),
            _ => {
                bound[len - 1] += 1;
                &bound[..len]
            }
        };
        (end > next, true)
    } else {
        // among one table's heads: its heaps follow them
        bound[..TABLE_ID_END].copy_from_slice(table);
        bound[TABLE_ID_END] = HEAP_MARK;
        (true, end > bound.as_slice())
    }
}

/// Returns `[start, end)` covering every entity heap of the table.
pub fn table_heaps_range(table_id: u64) -> (Vec<u8>, Vec<u8>) {
    let (_, end) = table_entities_range(table_id);
    (table_heads_range(table_id).1, end)
}

/// Returns `[start, end)` covering every legacy (0x05) heap key, of all tables.
pub fn legacy_heaps_range() -> (Vec<u8>, Vec<u8>) {
    (vec![LEGACY_HEAP_PREFIX], vec![LEGACY_HEAP_PREFIX + 1])
}

/// The [`heap_key`] that replaces a legacy heap key (`0x05 table_id enc(pk) enc(rk)`);
/// `None` for any other key.
pub fn heap_key_of_legacy(key: &[u8]) -> Option<Vec<u8>> {
    let rest = key.strip_prefix(&[LEGACY_HEAP_PREFIX]).filter(|r| r.len() >= TABLE_ID_END - 1)?;
    let mut entity = Vec::with_capacity(key.len());
    entity.push(ENTITY_PREFIX);
    entity.extend_from_slice(rest);
    Some(heap_key(&entity))
}

/// Returns `[start, end)` covering every entity of one partition of the table.
pub fn partition_range(table_id: u64, pk: &str) -> (Vec<u8>, Vec<u8>) {
    let mut start = table_entities_prefix(table_id);
    encode_key_string(&mut start, pk);
    let end = prefix_end(&start);
    (start, end)
}

/// Splits an [`entity_key`] after its partition key: (kind, table id and `enc(pk)`;
/// `enc(rk)`), both as stored, so a scan compares a row's RowKey with an encoded bound
/// and finds where its partition ends ([`prefix_end`] of the first) without decoding.
/// `None` for another key.
pub fn split_entity_key(key: &[u8]) -> Option<(&[u8], &[u8])> {
    if !is_entity_key(key) {
        return None;
    }
    let mut at = TABLE_ID_END;
    loop {
        at += key.get(at..)?.iter().position(|&b| b == ESC)?;
        match *key.get(at + 1)? {
            ESC_END => return Some(key.split_at(at + 2)),
            ESC_NUL => at += 2,
            _ => return None,
        }
    }
}

/// The PartitionKey and RowKey of an [`entity_key`] as stored (`enc(pk)`, `enc(rk)`,
/// terminators included), for [`key_text`]: a scan decodes only the keys its filter
/// reads. `None` for another key.
pub fn entity_key_parts(key: &[u8]) -> Option<(&[u8], &[u8])> {
    let (partition, rk) = split_entity_key(key)?;
    Some((encoded_partition_key(partition), rk))
}

/// `enc(pk)` of the first part [`split_entity_key`] gives.
pub fn encoded_partition_key(partition: &[u8]) -> &[u8] {
    partition.get(TABLE_ID_END..).unwrap_or_default()
}

/// The UTF-8 bytes of the string one `enc(s)` (terminator included) holds, where the
/// encoding changed none of them (no escaped NUL, no remapped lead byte: most keys),
/// without checking them; `None` otherwise (read it with [`key_text`]).
pub fn key_bytes(enc: &[u8]) -> Option<&[u8]> {
    let text = enc.strip_suffix(&[ESC, ESC_END])?;
    // (0x00 is only in escapes, 0xF5 / 0xF6 only remapped: neither is in UTF-8); ASCII
    // without NUL eight bytes at a time
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let plain_ascii = |w: u64| (w | w.wrapping_sub(ONES)) & HIGHS == 0;
    let unchanged = |bytes: &[u8]| !bytes.iter().any(|&b| b == ESC || b >= 0xF5);
    let mut words = text.chunks_exact(8);
    match words.all(|w| plain_ascii(u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))) {
        true => unchanged(words.remainder()),
        false => unchanged(text),
    }
    .then_some(text)
}

/// The string one `enc(s)` (terminator included) holds: borrowed where the encoding
/// changed nothing (no NUL, no remapped lead byte: most keys), else decoded. `None`
/// when `enc` is not exactly one valid encoding.
pub fn key_text(enc: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    let text = enc.strip_suffix(&[ESC, ESC_END])?;
    // (0xF5 / 0xF6 are not UTF-8: such a text goes the slow way too)
    if !changes_in_encoding(text) {
        match std::str::from_utf8(text) {
            Ok(s) => return Some(s.into()),
            Err(_) if !text.iter().any(|b| matches!(b, 0xF5 | 0xF6)) => return None,
            Err(_) => {}
        }
    }
    let mut s = String::new();
    (decode_key_string_slowly(enc, &mut s)? == enc.len()).then_some(s.into())
}

/// Decodes an [`entity_key`] into (table id, partition key, row key).
pub fn decode_entity_key(key: &[u8]) -> Option<(u64, String, String)> {
    let rest = key.strip_prefix(&[ENTITY_PREFIX])?;
    let id_bytes: [u8; 8] = rest.get(..8)?.try_into().ok()?;
    let rest = rest.get(8..)?;
    let (pk, n) = decode_key_string(rest)?;
    let rest = rest.get(n..)?;
    let (rk, m) = decode_key_string(rest)?;
    (m == rest.len()).then_some((u64::from_be_bytes(id_bytes), pk, rk))
}

/// [`decode_key_string`] into a reused buffer; returns the bytes consumed.
fn decode_key_string_into(input: &[u8], out: &mut String) -> Option<usize> {
    // most keys hold no escape and no remapped byte: up to the terminator, copied whole
    if let Some(end) = input.iter().position(|&b| b == ESC) {
        let text = &input[..end];
        if input.get(end + 1) == Some(&ESC_END)
            && !text.iter().any(|b| matches!(b, 0xEE | 0xEF | 0xF5 | 0xF6))
        {
            out.clear();
            out.push_str(std::str::from_utf8(text).ok()?);
            return Some(end + 2);
        }
    }
    decode_key_string_slowly(input, out)
}

/// [`decode_key_string_into`] byte by byte, for every encoding.
fn decode_key_string_slowly(input: &[u8], out: &mut String) -> Option<usize> {
    let mut raw = std::mem::take(out).into_bytes();
    raw.clear();
    let mut i = 0;
    loop {
        let b = *input.get(i)?;
        i += 1;
        match b {
            ESC => {
                let next = *input.get(i)?;
                i += 1;
                match next {
                    ESC_NUL => raw.push(0x00),
                    ESC_END => break,
                    _ => return None,
                }
            }
            0xF5 => raw.push(0xEE),
            0xF6 => raw.push(0xEF),
            // Raw EE/EF never appear in an encoding (they were remapped).
            0xEE | 0xEF => return None,
            _ => raw.push(b),
        }
    }
    *out = String::from_utf8(raw).ok()?;
    Some(i)
}

/// Returns the key of a table's stored access policies:
/// `0x03 enc(account) enc(lowercase(table_name))`.
pub fn table_acl_key(account: &str, table_name: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(account.len() + table_name.len() + 8);
    out.push(ACL_PREFIX);
    encode_key_string(&mut out, account);
    encode_key_string(&mut out, &table_name.to_ascii_lowercase());
    out
}

/// Returns the key of an account's Table service properties: `0x04 enc(account)`.
pub fn service_properties_key(account: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(account.len() + 4);
    out.push(SERVICE_PROPERTIES_PREFIX);
    encode_key_string(&mut out, account);
    out
}

/// Returns the smallest key greater than every key starting with `prefix`: the prefix
/// with trailing `0xFF` bytes dropped and its last byte incremented. A prefix made only
/// of `0xFF` bytes (or empty) has no such key; the result is then empty. Every prefix
/// this module builds starts with 0x00..=0x04, so that never happens here.
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return end;
        }
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Ordering;

    fn utf16(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    /// Up to 16 bytes, mostly the ones a key encoding holds or must refuse.
    fn encoding_like_bytes() -> impl Strategy<Value = Vec<u8>> {
        let byte = prop_oneof![
            4 => Just(b'a'), 2 => Just(0u8), 2 => Just(1u8), 1 => Just(0xFFu8), 1 => Just(0xEEu8),
            1 => Just(0xF5u8), 1 => Just(0xF6u8), 1 => Just(0x80u8), 1 => Just(0xC3u8), 1 => any::<u8>(),
        ];
        prop::collection::vec(byte, 0..16)
    }

    proptest! {
        /// The whole-copy fast path of [`decode_key_string_into`] reads every input, valid
        /// or not, as decoding byte by byte does.
        #[test]
        fn fast_key_decoding_is_the_byte_by_byte_decoding(
            input in encoding_like_bytes(),
            text in "[a\\x00\u{e000}\u{ffff}é]{0,6}",
        ) {
            let mut encoded = Vec::new();
            encode_key_string(&mut encoded, &text);
            for bytes in [&input[..], &encoded[..]] {
                let (mut fast, mut slow) = (String::from("old"), String::from("old"));
                let got = decode_key_string_into(bytes, &mut fast);
                let want = decode_key_string_slowly(bytes, &mut slow);
                prop_assert_eq!(got, want);
                if want.is_some() {
                    prop_assert_eq!(&fast, &slow);
                }
            }
        }

        /// [`key_text`] reads exactly one whole encoding, as decoding byte by byte does,
        /// and [`entity_key_parts`] splits an entity key into the two it holds.
        #[test]
        fn key_text_is_the_decoding_of_one_whole_encoding(
            input in encoding_like_bytes(),
            pk in "[a\\x00\u{e000}\u{ffff}\u{10000}é]{0,6}",
            rk in "[a\\x00\u{e000}\u{ffff}\u{10000}é]{0,6}",
        ) {
            let mut encoded = Vec::new();
            encode_key_string(&mut encoded, &rk);
            for bytes in [&input[..], &encoded[..]] {
                let mut slow = String::new();
                let want = decode_key_string_slowly(bytes, &mut slow).filter(|&n| n == bytes.len());
                prop_assert_eq!(key_text(bytes).map(|t| t.into_owned()), want.map(|_| slow.clone()));
            }
            let key = entity_key(7, &pk, &rk);
            let (p, r) = entity_key_parts(&key).expect("an entity key");
            prop_assert_eq!(key_text(p).map(|t| t.into_owned()), Some(pk.clone()));
            prop_assert_eq!(key_text(r).map(|t| t.into_owned()), Some(rk.clone()));
            // the bytes as stored are the key's wherever they are given
            for (enc, s) in [(p, &pk), (r, &rk)] {
                if let Some(bytes) = key_bytes(enc) {
                    prop_assert_eq!(bytes, s.as_bytes());
                }
                let plain = !s.bytes().any(|b| matches!(b, 0x00 | 0xEE | 0xEF));
                prop_assert_eq!(key_bytes(enc).is_some(), plain);
            }
        }

        /// The whole-copy fast paths of [`encode_key_string`] and [`push_table_key`]
        /// write exactly what encoding byte by byte does.
        #[test]
        fn fast_key_encoding_is_the_byte_by_byte_encoding(
            s in "[a-zA-Z0-9 \\x00\u{7f}\u{e000}\u{efff}\u{ffff}\u{10000}é]{0,40}",
            account in "[a-z\\x00\u{e000}]{0,4}",
        ) {
            let mut fast = vec![7];
            encode_key_string(&mut fast, &s);
            let mut slow = vec![7];
            encode_key_bytes(&mut slow, s.len(), s.bytes());
            prop_assert_eq!(fast, slow);
            let mut fast = Vec::new();
            push_table_key(&mut fast, &account, &s);
            let mut slow = vec![TABLE_PREFIX];
            encode_key_bytes(&mut slow, account.len(), account.bytes());
            encode_key_bytes(&mut slow, s.len(), s.bytes().map(|b| b.to_ascii_lowercase()));
            prop_assert_eq!(fast, slow);
        }
    }

    /// Strings drawn from a small alphabet that exercises every interesting boundary:
    /// NUL, ASCII, 2- and 3-byte chars, U+E000..=U+FFFF and astral chars.
    fn tricky_char() -> impl Strategy<Value = char> {
        prop_oneof![
            Just('\0'),
            Just('a'),
            Just('b'),
            Just('\u{7F}'),
            Just('\u{FF}'),
            Just('\u{D7FF}'),
            Just('\u{E000}'),
            Just('\u{FFFD}'),
            Just('\u{FFFF}'),
            Just('\u{10000}'),
            Just('\u{1F600}'),
            Just('\u{10FFFF}'),
            any::<char>(),
        ]
    }

    fn key_str() -> impl Strategy<Value = String> {
        prop::collection::vec(tricky_char(), 0..6).prop_map(|v| v.into_iter().collect())
    }

    #[test]
    fn string_round_trip_and_consumed() {
        for s in ["", "a", "\0", "a\0b", "\u{E000}\u{10000}\u{FFFF}", "ÿî"] {
            let mut buf = Vec::new();
            encode_key_string(&mut buf, s);
            buf.extend_from_slice(b"tail");
            let (d, n) = decode_key_string(&buf).unwrap();
            assert_eq!(d, s);
            assert_eq!(&buf[n..], b"tail");
        }
    }

    #[test]
    fn decode_rejects_garbage() {
        assert_eq!(decode_key_string(b""), None);
        assert_eq!(decode_key_string(b"abc"), None);
        assert_eq!(decode_key_string(b"a\x00"), None);
        assert_eq!(decode_key_string(b"a\x00\x02"), None);
        assert_eq!(decode_key_string(b"\xEE\x80\x80\x00\x01"), None);
        assert_eq!(decode_key_string(b"\xC3\x00\x01"), None);
        assert_eq!(decode_entity_key(&[0x02, 1, 2]), None);
        assert_eq!(decode_table_key(&[0x02]), None);
        let mut k = entity_key(1, "a", "b");
        k.push(0);
        assert_eq!(decode_entity_key(&k), None);
    }

    #[test]
    fn utf16_order_examples() {
        // U+FFFF < U+10000 in code points, but > in UTF-16 code units.
        assert!(entity_key(1, "\u{10000}", "") < entity_key(1, "\u{FFFF}", ""));
        assert!(entity_key(1, "\u{D7FF}", "") < entity_key(1, "\u{10000}", ""));
        assert!(entity_key(1, "a", "bc") < entity_key(1, "ab", "c"));
        assert!(entity_key(1, "", "z") < entity_key(1, "\0", ""));
        assert!(entity_key(1, "zz", "") < entity_key(2, "", ""));
    }

    /// Keys and range bounds of every shape the crate writes, and some it never does.
    fn some_key() -> impl Strategy<Value = Vec<u8>> {
        let table = prop_oneof![Just(0u64), Just(1), Just(2), Just(u64::MAX - 1), Just(u64::MAX)];
        prop_oneof![
            (table.clone(), "[a-c]{0,2}", "[a-c]{0,2}").prop_map(|(t, p, r)| entity_key(t, &p, &r)),
            (table.clone(), "[a-c]{0,2}", "[a-c]{0,2}")
                .prop_map(|(t, p, r)| heap_key(&entity_key(t, &p, &r))),
            (table.clone(), "[a-c]{0,2}").prop_map(|(t, p)| partition_range(t, &p).0),
            (table.clone(), "[a-c]{0,2}").prop_map(|(t, p)| partition_range(t, &p).1),
            (table.clone(), "[a-c]{0,2}").prop_map(|(t, p)| heap_key(&partition_range(t, &p).1)),
            table.clone().prop_map(|t| table_heads_range(t).1),
            table.prop_map(|t| table_entities_range(t).1),
            prop::collection::vec(any::<u8>(), 0..12),
            prop::collection::vec(
                prop_oneof![Just(0u8), Just(1), Just(2), Just(3), Just(0xFE), Just(0xFF)],
                0..12
            ),
        ]
    }

    proptest! {
        #[test]
        fn range_holds_never_misses_a_key(
            start in some_key(), end in some_key(), ks in prop::collection::vec(some_key(), 0..24),
        ) {
            let (others, heaps) = range_holds(&start, &end);
            for k in ks.iter().filter(|k| start.as_slice() <= k.as_slice() && k.as_slice() < end.as_slice()) {
                if is_heap_key(k) {
                    prop_assert!(heaps, "heap {k:?} in [{start:?}, {end:?})");
                } else {
                    prop_assert!(others, "key {k:?} in [{start:?}, {end:?})");
                }
            }
        }
    }

    #[test]
    fn range_holds_is_exact_for_the_ranges_the_crate_scans() {
        for t in [0, 7, u64::MAX] {
            let (s, e) = table_heads_range(t);
            assert_eq!(range_holds(&s, &e), (true, false));
            let (s, e) = table_heaps_range(t);
            assert_eq!(range_holds(&s, &e), (false, true));
            let (s, e) = table_entities_range(t);
            assert_eq!(range_holds(&s, &e), (true, true));
            let (s, e) = partition_range(t, "p");
            assert_eq!(range_holds(&s, &e), (true, false));
            assert_eq!(range_holds(&heap_key(&s), &heap_key(&e)), (false, true));
            let row = entity_key(t, "p", "r");
            assert!(is_heap_key(&heap_key(&row)) && !is_heap_key(&row) && is_entity_key(&row));
        }
        let (s, e) = tables_range("devstoreaccount1");
        assert_eq!(range_holds(&s, &e), (true, false));
        let (s, e) = legacy_heaps_range();
        assert_eq!(range_holds(&s, &e), (true, false));
        assert_eq!(range_holds(b"b", b"a"), (false, false));
        assert_eq!(range_holds(b"", b"\xFF"), (true, true));
    }

    #[test]
    fn entity_keys_split_after_their_partition_key() {
        for (pk, rk) in
            [("p", "r"), ("", ""), ("a\u{0}b", "\u{0}"), ("\u{EE}\u{0}", "x\u{0}\u{0}"), ("\u{0}", "")]
        {
            // (a table id holding the escape byte, which is not an escape there)
            let key = entity_key(0x0100, pk, rk);
            let (partition, row) = split_entity_key(&key).expect("splits");
            assert_eq!(partition, partition_range(0x0100, pk).0.as_slice(), "{pk:?}");
            let mut enc = Vec::new();
            encode_key_string(&mut enc, rk);
            assert_eq!(row, enc.as_slice(), "{rk:?}");
            // every key of the partition lies before the prefix end; the next partition's after
            let end = prefix_end(partition);
            assert!(key < end && end <= entity_key(0x0100, &format!("{pk}\u{0}"), ""), "{pk:?}");
        }
        assert_eq!(split_entity_key(&heap_key(&entity_key(1, "p", "r"))), None);
        assert_eq!(split_entity_key(&table_entities_prefix(1)), None);
        let mut bad = table_entities_prefix(1);
        bad.extend_from_slice(&[b'p', ESC, 0x07]);
        assert_eq!(split_entity_key(&bad), None);
    }

    #[test]
    fn prefix_end_cases() {
        assert_eq!(prefix_end(&[1, 2]), vec![1, 3]);
        assert_eq!(prefix_end(&[1, 0xFF, 0xFF]), vec![2]);
        assert_eq!(prefix_end(&[0xFF]), Vec::<u8>::new());
        let (s, e) = table_entities_range(u64::MAX);
        assert!(s < e);
        assert!(entity_key(u64::MAX, "\u{10FFFF}", "\u{FFFF}") < e);
        let (hs, he) = table_heaps_range(u64::MAX);
        let k = heap_key(&entity_key(u64::MAX, "\u{10FFFF}", "\u{FFFF}"));
        assert!(hs <= k && k < he && he == e);
        // a table's heaps follow its heads, inside its range, before the next table
        let (h1, h1e) = table_heaps_range(1);
        let k1 = heap_key(&entity_key(1, "p", "r"));
        assert!(h1 <= k1 && k1 < h1e && h1e <= table_entities_range(2).0);
        assert_eq!(table_heads_range(1).1, h1);
        assert!(entity_key(1, "\u{10FFFF}", "\u{10FFFF}") < h1);
    }

    #[test]
    fn legacy_heap_keys_map_to_heap_keys() {
        let k = entity_key(7, "p\0", "r");
        let mut legacy = k.clone();
        legacy[0] = 0x05;
        let (ls, le) = legacy_heaps_range();
        assert!(ls <= legacy && legacy < le);
        assert_eq!(heap_key_of_legacy(&legacy), Some(heap_key(&k)));
        assert_eq!(heap_key_of_legacy(&k), None);
        assert_eq!(heap_key_of_legacy(&[0x05, 1, 2]), None);
        // no other kind of key is a legacy heap key
        for other in [table_key("a", "t"), table_acl_key("a", "t"), service_properties_key("a")] {
            assert!(!(ls <= other && other < le));
        }
    }

    #[test]
    fn next_table_id_key_is_metadata() {
        assert_eq!(NEXT_TABLE_ID_KEY[0], 0x00);
        assert!(NEXT_TABLE_ID_KEY < table_key("", "").as_slice());
    }

    #[test]
    fn acl_and_properties_keys_are_their_own_kinds() {
        assert_eq!(table_acl_key("acc", "MyTable"), table_acl_key("acc", "mytable"));
        assert_ne!(table_acl_key("acc", "t"), table_acl_key("acc2", "t"));
        assert_ne!(table_acl_key("ab", "c"), table_acl_key("a", "bc"));
        assert_ne!(service_properties_key("a"), service_properties_key("b"));
        // No ACL or properties key falls inside a table, entity or catalog range.
        for k in [table_acl_key("acc", "t"), service_properties_key("acc")] {
            let (s, e) = tables_range("acc");
            assert!(!(s <= k && k < e));
            let (s, e) = table_entities_range(u64::MAX);
            assert!(!(s <= k && k < e));
            assert!(decode_table_key(&k).is_none() && decode_entity_key(&k).is_none());
        }
        assert!(table_acl_key("\u{10FFFF}", "t") < service_properties_key(""));
    }

    proptest! {
        /// The table key, built in place, is the account prefix followed by the name
        /// lower-cased and then encoded, as it always was written.
        #[test]
        fn table_key_is_prefix_and_lowercased_name(
            account in key_str(),
            name in prop::collection::vec(prop_oneof![tricky_char(), Just('A'), Just('Z'), Just('\u{C9}')], 0..8)
                .prop_map(|v| v.into_iter().collect::<String>()),
        ) {
            let mut expected = account_tables_prefix(&account);
            encode_key_string(&mut expected, &name.to_ascii_lowercase());
            prop_assert_eq!(table_key(&account, &name), expected.clone());
            let mut reused = vec![1, 2, 3];
            reused.clear();
            push_table_key(&mut reused, &account, &name);
            prop_assert_eq!(reused, expected);
        }

        #[test]
        fn entity_key_order_matches_utf16(
            t1 in 0u64..3, a1 in key_str(), b1 in key_str(),
            t2 in 0u64..3, a2 in key_str(), b2 in key_str(),
        ) {
            let k1 = entity_key(t1, &a1, &b1);
            let k2 = entity_key(t2, &a2, &b2);
            let want = (t1, utf16(&a1), utf16(&b1)).cmp(&(t2, utf16(&a2), utf16(&b2)));
            prop_assert_eq!(k1.cmp(&k2), want);
            prop_assert_eq!(decode_entity_key(&k1), Some((t1, a1.clone(), b1.clone())));
            // a scan's key by key decoding agrees; a cut key is none
            let text = |k: &[u8]| {
                let (pk, rk) = entity_key_parts(k)?;
                Some((key_text(pk)?.into_owned(), key_text(rk)?.into_owned()))
            };
            prop_assert_eq!(text(&k1), Some((a1, b1)));
            let mut cut = k1;
            cut.pop();
            prop_assert_eq!(text(&cut), None);
            prop_assert_eq!(text(&k2[..1]), None);
        }

        #[test]
        fn string_order_matches_utf16(a in key_str(), b in key_str()) {
            let (mut ea, mut eb) = (Vec::new(), Vec::new());
            encode_key_string(&mut ea, &a);
            encode_key_string(&mut eb, &b);
            prop_assert_eq!(ea.cmp(&eb), utf16(&a).cmp(&utf16(&b)));
            prop_assert_eq!(decode_key_string(&ea), Some((a.clone(), ea.len())));
        }

        #[test]
        fn arbitrary_strings_round_trip(s in any::<String>()) {
            let mut e = Vec::new();
            encode_key_string(&mut e, &s);
            prop_assert_eq!(decode_key_string(&e), Some((s.clone(), e.len())));
        }

        #[test]
        fn partition_range_bounds(
            t in 0u64..3, pk in key_str(), rk in key_str(),
            t2 in 0u64..3, pk2 in key_str(), rk2 in key_str(),
        ) {
            let (s, e) = partition_range(t, &pk);
            let k = entity_key(t, &pk, &rk);
            prop_assert!(s <= k && k < e);
            let k2 = entity_key(t2, &pk2, &rk2);
            let inside = s <= k2 && k2 < e;
            prop_assert_eq!(inside, t2 == t && pk2 == pk);
            let (ts, te) = table_entities_range(t);
            prop_assert!(ts <= k && k < te);
            prop_assert_eq!(ts <= k2 && k2 < te, t2 == t);
            prop_assert!(table_key("a", "b") < ts || table_key("a", "b") >= te);
        }

        #[test]
        fn heap_keys_keep_order_and_stay_in_their_table(
            t1 in 0u64..3, a1 in key_str(), b1 in key_str(),
            t2 in 0u64..3, a2 in key_str(), b2 in key_str(),
        ) {
            let (k1, k2) = (entity_key(t1, &a1, &b1), entity_key(t2, &a2, &b2));
            let (h1, h2) = (heap_key(&k1), heap_key(&k2));
            prop_assert_eq!(h1.cmp(&h2), k1.cmp(&k2));
            prop_assert!(is_entity_key(&k1) && !is_entity_key(&h1));
            prop_assert!(decode_entity_key(&h1).is_none());
            let (hs, he) = table_heads_range(t1);
            let (ps, pe) = table_heaps_range(t1);
            prop_assert!(hs <= k1 && k1 < he && !(ps <= k1 && k1 < pe));
            prop_assert!(ps <= h1 && h1 < pe && !(hs <= h1 && h1 < he));
            // every head of a table comes before every heap of it
            prop_assert_eq!(k2 < h1, t2 <= t1);
            // a partition's range maps onto the heaps of exactly its entities
            let (s, e) = partition_range(t1, &a1);
            let inside = heap_key(&s) <= h2 && h2 < heap_key(&e);
            prop_assert_eq!(inside, t2 == t1 && a2 == a1);
            // and so does the whole heads range: a scan's heap cursor over the table
            prop_assert_eq!(heap_key(&hs), ps);
            prop_assert!(h1 < heap_key(&he) && heap_key(&he) <= pe);
        }

        #[test]
        fn table_key_order_and_range(
            acc1 in key_str(), n1 in "[A-Za-z0-9]{0,6}",
            acc2 in key_str(), n2 in "[A-Za-z0-9]{0,6}",
        ) {
            let k1 = table_key(&acc1, &n1);
            let k2 = table_key(&acc2, &n2);
            let (l1, l2) = (n1.to_ascii_lowercase(), n2.to_ascii_lowercase());
            let want = (utf16(&acc1), utf16(&l1)).cmp(&(utf16(&acc2), utf16(&l2)));
            prop_assert_eq!(k1.cmp(&k2), want);
            prop_assert_eq!(decode_table_key(&k1), Some((acc1.clone(), l1)));
            let (s, e) = tables_range(&acc1);
            prop_assert!(s <= k1 && k1 < e);
            prop_assert_eq!(s <= k2 && k2 < e, acc1 == acc2);
            prop_assert_eq!(k1.cmp(&k2) == Ordering::Equal, want == Ordering::Equal);
            let ek = entity_key(0, &acc1, &n1);
            prop_assert!(!(s <= ek && ek < e));
        }
    }
}
