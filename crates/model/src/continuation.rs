//! Continuation tokens: opaque strings in the real service's shape
//! (`1!<len>!<base64>`), carrying a key the next page starts at: `Smith` is
//! `1!7!U21pdGg` (URL-safe base64 without padding; the service pads with `-`, as in
//! `1!8!U21pdGg-`, which clients never read: the token is opaque to them).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

/// Encodes a key (table name, PartitionKey or RowKey) as a continuation token.
pub fn encode(key: &str) -> String {
    let b64 = URL_SAFE_NO_PAD.encode(key.as_bytes());
    format!("1!{}!{}", b64.len(), b64)
}

/// Decodes a token made by [`encode`]; `None` for anything else.
pub fn decode(token: &str) -> Option<String> {
    let rest = token.strip_prefix("1!")?;
    let (len, b64) = rest.split_once('!')?;
    if len.parse::<usize>().ok()? != b64.len() {
        return None;
    }
    String::from_utf8(URL_SAFE_NO_PAD.decode(b64).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_values() {
        assert_eq!(encode("Smith"), "1!7!U21pdGg");
        assert_eq!(encode("pk"), "1!3!cGs");
        assert_eq!(encode(""), "1!0!");
        assert_eq!(decode("1!7!U21pdGg").as_deref(), Some("Smith"));
    }

    #[test]
    fn round_trips() {
        for k in ["", "Smith", "a b/c", "ключ", "x".repeat(1024).as_str()] {
            assert_eq!(decode(&encode(k)).as_deref(), Some(k));
        }
        assert_eq!(decode("garbage"), None);
        assert_eq!(decode("1!3!abcd"), None);
    }
}
