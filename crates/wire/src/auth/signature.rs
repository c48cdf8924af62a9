//! [`decode`]: a SharedKey signature's base64, decoded. The form every client sends (32
//! bytes: 43 digits and one `=`) is read here by table, four digits at a time; anything
//! else goes to the base64 crate, whose answers these are (a property test holds them to
//! it). The crate's general decoder cost 540 instructions a request on this short text.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

/// A character that is no base64 digit.
const INVALID: u8 = 0xff;

/// The value of each byte as a base64 digit (the standard alphabet), or [`INVALID`].
static VALUES: [u8; 256] = {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut values = [INVALID; 256];
    let mut i = 0;
    while i < alphabet.len() {
        values[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    values
};

/// The bytes `text` encodes, as the standard padded base64 decoder reads them (`None`
/// when it refuses the text or it encodes nothing); `out` holds them.
pub(super) fn decode<'o>(text: &[u8], out: &'o mut [u8; 64]) -> Option<&'o [u8]> {
    if decode_32(text, out) {
        return Some(&out[..32]);
    }
    match STANDARD.decode_slice(text, out) {
        Ok(n) if n > 0 => Some(&out[..n]),
        _ => None,
    }
}

/// Decodes a 44-character text of 43 digits and `=` into `out[..32]`, when the digits
/// are all valid and the last one carries no stray low bits (the canonical form the
/// crate accepts); `false` otherwise, leaving the text to the crate.
fn decode_32(text: &[u8], out: &mut [u8; 64]) -> bool {
    let Some((digits, b"=")) = text.split_last_chunk::<1>() else { return false };
    if digits.len() != 43 {
        return false;
    }
    let value = |i: usize| u32::from(VALUES[usize::from(digits[i])]);
    // any invalid digit sets bit 7 of `seen` (a digit's value is under 64)
    let mut seen = 0u32;
    for group in 0..10 {
        let at = group * 4;
        let (a, b, c, d) = (value(at), value(at + 1), value(at + 2), value(at + 3));
        seen |= a | b | c | d;
        let n = (a << 18) | (b << 12) | (c << 6) | d;
        out[group * 3..group * 3 + 3].copy_from_slice(&n.to_be_bytes()[1..]);
    }
    // the last three digits carry 16 bits and two that must be zero
    let (a, b, c) = (value(40), value(41), value(42));
    seen |= a | b | c;
    let n = (a << 10) | (b << 4) | (c >> 2);
    out[30..32].copy_from_slice(&n.to_be_bytes()[2..]);
    seen & 0x80 == 0 && c & 0b11 == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What the crate reads from `text`.
    fn by_crate(text: &[u8]) -> Option<Vec<u8>> {
        let mut out = [0u8; 64];
        match STANDARD.decode_slice(text, &mut out) {
            Ok(n) if n > 0 => Some(out[..n].to_vec()),
            _ => None,
        }
    }

    fn decoded(text: &[u8]) -> Option<Vec<u8>> {
        let mut out = [0u8; 64];
        decode(text, &mut out).map(<[u8]>::to_vec)
    }

    proptest! {
        /// Every 32-byte signature's base64 is read back, by the table.
        #[test]
        fn signatures_read_back(bytes in proptest::array::uniform32(any::<u8>())) {
            let text = STANDARD.encode(bytes);
            let mut out = [0u8; 64];
            prop_assert!(decode_32(text.as_bytes(), &mut out));
            prop_assert_eq!(&out[..32], &bytes[..]);
            prop_assert_eq!(decoded(text.as_bytes()), Some(bytes.to_vec()));
        }

        /// Near-signatures (a digit changed to any byte, `=` moved or doubled, stray low
        /// bits, other lengths) are read as the crate reads them.
        #[test]
        fn anything_reads_as_the_crate_reads_it(
            bytes in proptest::array::uniform32(any::<u8>()),
            at in 0usize..46,
            byte in prop_oneof![any::<u8>(), Just(b'='), Just(b'A'), Just(b'B'), Just(b'+'), Just(b'/')],
            cut in 0usize..3,
        ) {
            let mut text = STANDARD.encode(bytes).into_bytes();
            match cut {
                0 => {
                    if let Some(slot) = text.get_mut(at) {
                        *slot = byte;
                    }
                }
                1 => text.insert(at.min(text.len()), byte),
                _ => {
                    text.truncate(at);
                }
            }
            prop_assert_eq!(decoded(&text), by_crate(&text));
        }
    }

    #[test]
    fn stray_low_bits_and_bad_digits_are_left_to_the_crate() {
        let good = STANDARD.encode([7u8; 32]);
        let mut out = [0u8; 64];
        assert!(decode_32(good.as_bytes(), &mut out));
        // the last digit before `=` with a low bit set: not canonical, refused
        let mut stray = good.clone().into_bytes();
        stray[42] = b'B';
        assert!(!decode_32(&stray, &mut out));
        assert_eq!(decoded(&stray), by_crate(&stray));
        let mut bad = good.into_bytes();
        bad[5] = b'*';
        assert!(!decode_32(&bad, &mut out));
        assert_eq!(decoded(&bad), None);
    }
}
