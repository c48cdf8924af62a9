//! Byte tests eight bytes at a time in a `u64` (the classic has-zero-byte and
//! has-less-than tricks), shared by the scanners of JSON strings, entity bodies and
//! change-set headers: a byte loop, or memchr's set-up on short text, cost more.
//!
//! Each `*_bits` function sets the high bit of the bytes it finds; a byte after a hit
//! may be marked too, but never one before the first: [`first`] of the result is exact,
//! and so is "is there any".

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The bytes of `w` equal to `b`.
pub(crate) fn eq_bits(w: u64, b: u8) -> u64 {
    let v = w ^ (ONES * u64::from(b));
    v.wrapping_sub(ONES) & !v & HIGHS
}

/// The bytes of `w` below `n` (`n` at most 0x80).
pub(crate) fn below_bits(w: u64, n: u8) -> u64 {
    w.wrapping_sub(ONES * u64::from(n)) & !w & HIGHS
}

/// The eight bytes at the start of `word` (a chunk of exactly eight).
pub(crate) fn word(word: &[u8]) -> u64 {
    u64::from_le_bytes(word.try_into().unwrap_or_default())
}

/// The index (0 to 7, in memory order) of the lowest byte marked in `bits`, which is
/// not zero: the first byte found. Exact, since a mark can only be wrong above a true
/// one (the borrow that makes it starts at a byte that was found).
pub(crate) fn first(bits: u64) -> usize {
    (bits.trailing_zeros() / 8) as usize
}

/// Whether any byte of `bytes` is found by `bits` (eight at a time, with no early exit,
/// which the compiler vectorizes) or, in the last few, by `byte`.
pub(crate) fn any(bytes: &[u8], bits: impl Fn(u64) -> u64, byte: impl Fn(u8) -> bool) -> bool {
    let mut words = bytes.chunks_exact(8);
    let mut seen = 0u64;
    for w in &mut words {
        seen |= bits(word(w));
    }
    seen != 0 || words.remainder().iter().any(|&b| byte(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a byte loop, for every byte value at every position of a word.
    #[test]
    fn the_word_tests_find_what_a_byte_loop_finds() {
        for at in 0..8 {
            for b in 0..=255u8 {
                let mut bytes = [b'a'; 8];
                bytes[at] = b;
                let w = word(&bytes);
                assert_eq!(eq_bits(w, b'"') != 0, b == b'"', "{b:#x} at {at}");
                assert_eq!(below_bits(w, 0x20) != 0, b < 0x20, "{b:#x} at {at}");
                let found = any(&bytes, |w| eq_bits(w, b'\n'), |x| x == b'\n');
                assert_eq!(found, b == b'\n', "{b:#x} at {at}");
            }
        }
    }

    proptest::proptest! {
        /// The first marked byte is the first byte a byte loop finds, whatever follows
        /// it (bytes after a hit are where false marks live).
        #[test]
        fn the_first_mark_is_the_first_hit(bytes in proptest::array::uniform8(proptest::prelude::any::<u8>())) {
            let w = word(&bytes);
            let marks = eq_bits(w, b'"') | eq_bits(w, b'\\') | below_bits(w, 0x20);
            let hit = bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
            proptest::prop_assert_eq!((marks != 0).then(|| first(marks)), hit);
        }
    }
}
