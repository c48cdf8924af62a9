//! Continuation tokens: opaque strings in the real service's shape
//! (`1!<len>!<base64>`, e.g. `1!8!U21pdGg-`), carrying a key the next page starts at.

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
    fn round_trips() {
        for k in ["", "Smith", "a b/c", "ключ", "x".repeat(1024).as_str()] {
            assert_eq!(decode(&encode(k)).as_deref(), Some(k));
        }
        assert_eq!(decode("garbage"), None);
        assert_eq!(decode("1!3!abcd"), None);
    }
}
