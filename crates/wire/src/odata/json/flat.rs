//! The members of a flat JSON object read in one pass without serde_json: the shape of
//! nearly every entity body (names and values of scalars, no escapes). Anything else — a
//! nested value, an escape sequence, a control character, invalid UTF-8, malformed JSON —
//! gives `None`, and the body is read by serde_json ([`super::parse_object`]), which gives
//! the same members or the error. Numbers other than plain integers are handed to
//! serde_json token by token, so every number means exactly what it means there.
//!
//! serde_json's tokenizer and visitors were a third of an inserted entity's own work (a
//! change set of 100 inserts spent 11,000 instructions per entity in them); this pass
//! costs about a byte's worth of instructions per byte.

use super::{Json, Member};
use std::borrow::Cow;
use std::cell::Cell;

/// The members of `body` (after any BOM) when it is a flat object this pass reads; see
/// the module documentation.
pub(super) fn flat_members(body: &[u8]) -> Option<Vec<Member<'_>>> {
    // UTF-8 checked once for the whole body (a body that is not UTF-8 is no JSON
    // serde_json accepts either); strings are then cut from it at their quotes, which
    // are character boundaries (SIMD validation: a third less time to parse a 1 KB body
    // of Japanese text, ASCII unchanged)
    let text = simdutf8::basic::from_utf8(body).ok()?;
    let mut r = Reader { body, text, at: 0 };
    r.skip_ws();
    r.eat(b'{')?;
    let mut out = Vec::with_capacity(16);
    r.skip_ws();
    if r.peek() == Some(b'}') {
        r.at += 1;
    } else {
        loop {
            r.skip_ws();
            let name = r.string()?;
            r.skip_ws();
            r.eat(b':')?;
            r.skip_ws();
            let value = r.value()?;
            out.push(Member { name: Cow::Borrowed(name), value, annotation: Cell::new(None) });
            r.skip_ws();
            match r.next()? {
                b',' => continue,
                b'}' => break,
                _ => return None,
            }
        }
    }
    r.skip_ws();
    (r.at == body.len()).then_some(out)
}

struct Reader<'a> {
    body: &'a [u8],
    /// `body` as text.
    text: &'a str,
    at: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.body.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.next()? == b).then_some(())
    }

    /// JSON's whitespace: space, tab, line feed, carriage return.
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// A string without escapes or control characters, borrowed.
    fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let rest = self.body.get(self.at..)?;
        let len = plain_run(rest);
        if rest.get(len) != Some(&b'"') {
            return None;
        }
        let s = self.text.get(self.at..self.at + len)?;
        self.at += len + 1;
        Some(s)
    }

    fn literal(&mut self, word: &[u8], value: Json<'a>) -> Option<Json<'a>> {
        let end = self.at + word.len();
        (self.body.get(self.at..end)? == word).then(|| {
            self.at = end;
            value
        })
    }

    fn value(&mut self) -> Option<Json<'a>> {
        match self.peek()? {
            b'"' => self.string().map(|s| Json::String(Cow::Borrowed(s))),
            b't' => self.literal(b"true", Json::Bool(true)),
            b'f' => self.literal(b"false", Json::Bool(false)),
            b'n' => self.literal(b"null", Json::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// A plain non-negative integer of at most 19 digits (no leading zero) is read here,
    /// as serde_json reads it (a `u64`); any other number token goes to serde_json.
    fn number(&mut self) -> Option<Json<'a>> {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')) {
            self.at += 1;
        }
        let token = &self.body[start..self.at];
        let plain = token.len() <= 19
            && token.iter().all(u8::is_ascii_digit)
            && (token.len() == 1 || token[0] != b'0');
        if plain {
            let n = token.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
            return Some(Json::Number(n.into()));
        }
        match serde_json::from_slice::<Json<'_>>(token).ok()? {
            Json::Number(n) => Some(Json::Number(n)),
            Json::Null => Some(Json::Null),
            _ => None,
        }
    }
}

/// Bytes of a string read eight at a time before the rest of a long one goes to memchr.
const WORD_SCAN_BYTES: usize = 32;

/// The length of the leading run of `bytes` holding no `"`, `\` or control character
/// (below 0x20). Names and short values end within a few words, found eight bytes at a
/// time (a byte loop cost ~7 instructions a byte, and an entity has some twenty such
/// strings); a longer string's end is found by memchr, then checked for control
/// characters in one pass the compiler vectorizes.
fn plain_run(bytes: &[u8]) -> usize {
    use crate::swar::{below_bits, eq_bits, first, word};
    let stop = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
    let head = bytes.len().min(WORD_SCAN_BYTES);
    let mut at = 0;
    while at + 8 <= head {
        let w = word(&bytes[at..at + 8]);
        let marks = eq_bits(w, b'"') | eq_bits(w, b'\\') | below_bits(w, 0x20);
        if marks != 0 {
            return at + first(marks);
        }
        at += 8;
    }
    if at < WORD_SCAN_BYTES {
        // a short body's last few bytes
        return at + bytes[at..].iter().position(|&b| stop(b)).unwrap_or(bytes.len() - at);
    }
    let end = at + memchr::memchr2(b'"', b'\\', &bytes[at..]).unwrap_or(bytes.len() - at);
    let between = &bytes[at..end];
    match has_control(between) {
        false => end,
        true => at + between.iter().position(|&b| b < 0x20).unwrap_or(0),
    }
}

/// Whether `bytes` holds a byte below 0x20.
fn has_control(bytes: &[u8]) -> bool {
    crate::swar::any(bytes, |w| crate::swar::below_bits(w, 0x20), |b| b < 0x20)
}

#[cfg(test)]
mod tests {
    use super::super::{parse_object_by_serde, Member};
    use super::flat_members;
    use proptest::prelude::*;

    fn shown(members: &[Member<'_>]) -> Vec<String> {
        members.iter().map(|m| format!("{:?}={:?}", m.name, m.value)).collect()
    }

    /// Whitespace as JSON allows it, and (rarely) bytes it does not.
    fn ws() -> impl Strategy<Value = String> {
        prop_oneof![4 => Just(String::new()), 2 => "[ \t\r\n]{1,3}", 1 => Just("\u{b}".to_owned())]
    }

    /// String contents: plain text, unicode, escapes, control characters, quotes.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => "[a-zA-Z0-9 _@.]{0,20}",
            1 => "[a-z]{0,3}(\\\\[\"\\\\/bfnrt]|\\\\u00[0-9a-f]{2}|\\\\ud83d\\\\ude00|\\\\x|\t|\u{1}|\u{7f})[a-z]{0,3}",
            1 => "[é☃𝄞\u{e000}\u{ffff}a]{1,9}",
            1 => ".{0,12}",
        ]
    }

    fn number() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<u64>().prop_map(|n| n.to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|n| n.to_string()),
            "-?(0|[1-9][0-9]{0,25})(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,4})?",
            "[-+.eE0-9]{1,6}",
            "-?0[0-9]{1,3}",
        ]
    }

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => text().prop_map(|t| format!("\"{t}\"")),
            3 => number(),
            1 => prop_oneof![Just("true"), Just("false"), Just("null"), Just("tru"), Just("nul")].prop_map(str::to_owned),
            1 => prop_oneof![Just("[1,\"a\"]"), Just("{\"x\":{}}"), Just("[")].prop_map(str::to_owned),
        ]
    }

    fn body() -> impl Strategy<Value = Vec<u8>> {
        let member = (ws(), text(), ws(), ws(), value(), ws())
            .prop_map(|(a, n, b, c, v, d)| format!("{a}\"{n}\"{b}:{c}{v}{d}"));
        (ws(), prop::collection::vec(member, 0..6), ws(), 0..40usize, any::<u8>(), 0..3u8).prop_map(
            |(lead, members, trail, at, byte, damage)| {
                let mut b = format!("{lead}{{{}}}{trail}", members.join(",")).into_bytes();
                // now and then a damaged body: a byte changed, or the end cut off
                match damage {
                    1 if !b.is_empty() => {
                        let i = at % b.len();
                        b[i] = byte;
                    }
                    2 => b.truncate(at.min(b.len())),
                    _ => {}
                }
                b
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// Whatever the one-pass reader accepts, serde_json reads as the very same members.
        #[test]
        fn the_flat_reader_agrees_with_serde_json(body in body()) {
            if let Some(flat) = flat_members(&body) {
                let serde = parse_object_by_serde(&body);
                prop_assert!(serde.is_ok(), "{:?} read flat, refused by serde_json", String::from_utf8_lossy(&body));
                prop_assert_eq!(shown(&flat), shown(&serde.unwrap_or_default()));
            }
        }

        /// And it does read the bodies it is for: flat, no escapes, plain numbers.
        #[test]
        fn the_flat_reader_reads_plain_entities(
            members in prop::collection::vec(("[A-Za-z][A-Za-z0-9_]{0,10}", prop_oneof![
                "[a-zA-Z0-9 é☃]{0,30}".prop_map(|t| format!("\"{t}\"")),
                any::<i64>().prop_map(|n| n.to_string()),
                any::<f64>().prop_map(|n| format!("{n:?}")),
                Just("true".to_owned()),
            ]), 0..8),
        ) {
            let body = format!("{{{}}}", members.iter().map(|(n, v)| format!("\"{n}\": {v}")).collect::<Vec<_>>().join(", "));
            let flat = flat_members(body.as_bytes());
            prop_assert!(flat.is_some(), "{body}");
            let serde = parse_object_by_serde(body.as_bytes()).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
            prop_assert_eq!(shown(&flat.unwrap_or_default()), shown(&serde));
        }
    }

    #[test]
    fn what_the_flat_reader_leaves_to_serde_json() {
        for body in [
            &br#"{"a":"x\"y"}"#[..],
            br#"{"a":[1]}"#,
            br#"{"a":{"b":1}}"#,
            b"{\"a\":\"\x01\"}",
            br#"{"a":-0}"#,
            br#"{"a":1.5}"#,
            b"{\"a\":\"\xff\"}",
            br#"{"a":1}x"#,
            br#"{"a":1,}"#,
            br#"["a"]"#,
            br#"{"a":01}"#,
            br#"{"a":-01}"#,
            br#"{"a":1e}"#,
            br#"{"a":-}"#,
            br#"{"a":+1}"#,
            br#"{"a":.5}"#,
            br#"{"a":1.}"#,
        ] {
            let flat = flat_members(body);
            let numeric = body == br#"{"a":-0}"# || body == br#"{"a":1.5}"#;
            // numbers other than plain integers are read, through serde_json's own parser
            assert_eq!(flat.is_some(), numeric, "{}", String::from_utf8_lossy(body));
        }
    }
}
