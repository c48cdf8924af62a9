//! [`RequestId`] and [`new_request_id`]: the `x-ms-request-id` of every answer, a
//! version-4-shaped UUID that no other request of the process has, made without a
//! random draw or a formatter per request.
//!
//! Each id is a number of the process's sequence (handed to a thread in blocks, so a
//! request touches no shared counter) scrambled under a key drawn once per process: the
//! low half is a bijection of the number (so distinct numbers give distinct ids), the
//! high half a mix of it, so ids look as random as the service's. The hex text is
//! written eight bytes at a time.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

/// An `x-ms-request-id`: a version-4 UUID in its 36-character hyphenated form, kept
/// inline (no allocation per request).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestId([u8; 36]);

impl RequestId {
    /// The id's ASCII text as bytes (no UTF-8 check, unlike [`RequestId::as_str`]).
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn as_str(&self) -> &str {
        // lower-case hex digits and hyphens, always UTF-8
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl std::ops::Deref for RequestId {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Numbers a thread takes from the process's sequence at a time.
const BLOCK: u64 = 1 << 12;
/// The next block's first number.
static NEXT_BLOCK: AtomicU64 = AtomicU64::new(0);
/// The process's key, drawn from the OS-seeded generator on first use.
static KEY: OnceLock<(u64, u64)> = OnceLock::new();
/// Bits of the low half the number maps to (the top two are the UUID's variant).
const LOW: u64 = (1 << 62) - 1;

/// A thread's share of the sequence: `next..end`, and the process key.
#[derive(Clone, Copy)]
struct Share {
    next: u64,
    end: u64,
    key: (u64, u64),
}

thread_local! {
    static SHARE: Cell<Share> = const { Cell::new(Share { next: 0, end: 0, key: (0, 0) }) };
}

/// A fresh `x-ms-request-id`.
pub fn new_request_id() -> RequestId {
    let n = SHARE.with(|share| {
        let mut s = share.get();
        if s.next == s.end {
            let first = NEXT_BLOCK.fetch_add(BLOCK, Relaxed);
            let key = *KEY.get_or_init(|| uuid::Uuid::new_v4().as_u64_pair());
            s = Share { next: first, end: first + BLOCK, key };
        }
        let n = s.next;
        s.next += 1;
        share.set(s);
        (n, s.key)
    });
    format_id(scramble(n.0, n.1))
}

/// The UUID's halves for sequence number `n` under `key`, version and variant set. The
/// low half's 62 free bits are a bijection of `n` modulo 2^62 (an exclusive or with the
/// key, then xor-shifts and a multiplication by an odd number, each one-to-one on 62-bit
/// values).
fn scramble(n: u64, key: (u64, u64)) -> (u64, u64) {
    let mut lo = (n ^ key.1) & LOW;
    lo = (lo ^ (lo >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9) & LOW;
    lo ^= lo >> 29;
    let mut hi = n ^ key.0;
    hi = (hi ^ (hi >> 30)).wrapping_mul(0x94d0_49bb_1331_11eb);
    hi ^= hi >> 31;
    // version 4 in the high half's 13th nibble; variant `10` atop the low half
    ((hi & !0xf000) | 0x4000, lo | (1 << 63))
}

/// The hyphenated lower-case text of the UUID with these halves (`8-4-4-4-12` digits).
fn format_id((hi, lo): (u64, u64)) -> RequestId {
    let (h, l) = (hex(hi), hex(lo));
    let mut text = [b'-'; 36];
    text[..8].copy_from_slice(&h[..8]);
    text[9..13].copy_from_slice(&h[8..12]);
    text[14..18].copy_from_slice(&h[12..]);
    text[19..23].copy_from_slice(&l[..4]);
    text[24..].copy_from_slice(&l[4..]);
    RequestId(text)
}

/// The 16 lower-case hex digits of `x`, most significant first: each nibble spread into
/// a byte of its own, then turned into its digit in every byte at once.
fn hex(x: u64) -> [u8; 16] {
    const BYTES: u128 = u128::MAX / 0xff; // 0x0101…01
    let mut v = u128::from(x);
    v = (v | (v << 32)) & 0x0000_0000_ffff_ffff_0000_0000_ffff_ffff;
    v = (v | (v << 16)) & 0x0000_ffff_0000_ffff_0000_ffff_0000_ffff;
    v = (v | (v << 8)) & 0x00ff_00ff_00ff_00ff_00ff_00ff_00ff_00ff;
    v = (v | (v << 4)) & (BYTES * 0x0f);
    // a byte over 9 gains 16 when 6 is added: those get `'a' - '0' - 10` more
    let letters = ((v + BYTES * 6) >> 4) & BYTES;
    (v + BYTES * u128::from(b'0') + letters * u128::from(b'a' - b'0' - 10)).to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_distinct_v4_uuids() {
        let ids: std::collections::HashSet<String> =
            (0..10_000).map(|_| new_request_id().to_string()).collect();
        assert_eq!(ids.len(), 10_000);
        for id in &ids {
            let u = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(u.get_version_num(), 4, "{id}");
            assert_eq!(u.get_variant(), uuid::Variant::RFC4122, "{id}");
            assert_eq!(id.len(), 36);
            assert_eq!(u.hyphenated().to_string(), *id, "lower-case, hyphenated");
        }
    }

    /// Threads take their numbers from one sequence: no id repeats across them, over
    /// several blocks each.
    #[test]
    fn threads_never_repeat_an_id() {
        let per_thread = 3 * BLOCK as usize + 7;
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(move || (0..per_thread).map(|_| new_request_id()).collect::<Vec<_>>())
            })
            .collect();
        let mut all = std::collections::HashSet::new();
        for t in threads {
            for id in t.join().unwrap() {
                assert!(all.insert(id), "{id} repeated");
            }
        }
        assert_eq!(all.len(), 4 * per_thread);
    }

    proptest::proptest! {
        /// The text is uuid's own hyphenated form of the same halves.
        #[test]
        fn text_is_the_uuid_of_the_halves(hi in proptest::prelude::any::<u64>(), lo in proptest::prelude::any::<u64>()) {
            let expected = uuid::Uuid::from_u64_pair(hi, lo).hyphenated().to_string();
            let id = format_id((hi, lo));
            proptest::prop_assert_eq!(id.as_str(), expected.as_str());
        }

        /// Distinct numbers give distinct low halves (the bijection), under any key.
        #[test]
        fn distinct_numbers_give_distinct_ids(
            a in 0..LOW, b in 0..LOW, key in proptest::prelude::any::<(u64, u64)>()
        ) {
            proptest::prop_assume!(a != b);
            proptest::prop_assert_ne!(scramble(a, key).1, scramble(b, key).1);
        }
    }

    /// Over a whole window of consecutive numbers no low half repeats (the bijection
    /// checked exhaustively where it would first show: small distances).
    #[test]
    fn consecutive_numbers_never_collide() {
        let key = (0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210);
        let lows: std::collections::HashSet<u64> = (0..200_000u64).map(|n| scramble(n, key).1).collect();
        assert_eq!(lows.len(), 200_000);
    }
}
