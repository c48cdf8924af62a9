//! RFC 2046 `multipart/mixed` framing as the Table SDKs write it: Content-Type
//! parameters (boundary possibly quoted), delimiter lines (`--boundary`, close
//! `--boundary--`) with CRLF or bare LF line ends, and header blocks.
//!
//! Leniencies, each seen in a real client: a preamble before the first delimiter (the
//! JS SDK writes a blank line), a body that ends with `--boundary` plus a line end
//! instead of the close delimiter (older JS SDK), and a part whose header block runs to
//! the end of the part without a blank line (older Node SDK, for bodiless requests).

use std::borrow::Cow;

use memchr::{memchr, memchr_iter, memmem};

/// A header list borrowed from its block: names as sent (looked up without regard to
/// ASCII case), trimmed values (owned only when folded lines were joined), in order.
pub(crate) type Headers<'a> = Vec<(&'a str, Cow<'a, str>)>;

/// Longest boundary accepted (RFC 2046 allows 70; some slack for odd clients).
const MAX_BOUNDARY: usize = 200;

/// Why the framing of a multipart body is unusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FramingError {
    /// No delimiter line at all.
    NoDelimiter,
    /// Content after the last delimiter and no close delimiter.
    Unterminated,
}

impl FramingError {
    pub(crate) fn detail(self) -> &'static str {
        match self {
            FramingError::NoDelimiter => "no boundary delimiter line was found",
            FramingError::Unterminated => "the closing boundary delimiter is missing",
        }
    }
}

/// A parsed Content-Type: lowercase essence (`type/subtype`) and parameters
/// (lowercase names, unquoted values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MediaType {
    pub essence: String,
    pub params: Vec<(String, String)>,
}

impl MediaType {
    /// Parses a Content-Type value; `None` if there is no `type/subtype`.
    pub(crate) fn parse(value: &str) -> Option<MediaType> {
        let (essence, mut rest) = match value.find(';') {
            Some(i) => (&value[..i], &value[i + 1..]),
            None => (value, ""),
        };
        let essence = essence.trim().to_ascii_lowercase();
        let (ty, sub) = essence.split_once('/')?;
        if ty.is_empty() || sub.is_empty() || essence.contains(char::is_whitespace) {
            return None;
        }
        let mut params = Vec::new();
        loop {
            rest = rest.trim_start_matches(|c: char| c == ';' || c.is_whitespace());
            if rest.is_empty() {
                break;
            }
            let name_end = rest.find(['=', ';']).unwrap_or(rest.len());
            let name = rest[..name_end].trim().to_ascii_lowercase();
            rest = &rest[name_end..];
            let Some(after_eq) = rest.strip_prefix('=') else {
                continue;
            };
            let after_eq = after_eq.trim_start();
            let (value, after) = match after_eq.strip_prefix('"') {
                Some(quoted) => take_quoted(quoted)?,
                None => {
                    let end = after_eq.find(';').unwrap_or(after_eq.len());
                    (after_eq[..end].trim().to_owned(), &after_eq[end..])
                }
            };
            rest = after;
            if !name.is_empty() {
                params.push((name, value));
            }
        }
        Some(MediaType { essence, params })
    }

    /// The value of a parameter (name in lowercase).
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The boundary of a `multipart/mixed` type, if it is one and the boundary is usable.
    pub(crate) fn mixed_boundary(&self) -> Option<&str> {
        if self.essence != "multipart/mixed" {
            return None;
        }
        let b = self.param("boundary")?;
        let usable = !b.is_empty() && b.len() <= MAX_BOUNDARY && !b.chars().any(|c| c.is_control());
        usable.then_some(b)
    }

    /// Whether a Content-Type value parses to the given essence (lowercase
    /// `type/subtype`): the answer of [`MediaType::parse`], without allocating when the
    /// value is the bare media type.
    pub(crate) fn has_essence(value: &str, essence: &str) -> bool {
        if trim(value).eq_ignore_ascii_case(essence) {
            return true;
        }
        MediaType::parse(value).is_some_and(|m| m.essence == essence)
    }
}

/// Reads a quoted string (after its opening quote) with backslash escapes; returns the
/// value and what follows the closing quote.
fn take_quoted(s: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &s[i + 1..])),
            '\\' => out.push(chars.next()?.1),
            _ => out.push(c),
        }
    }
    None
}

/// Splits a multipart body into its parts (the bytes between delimiter lines, without
/// the line break that precedes each delimiter). Preamble and epilogue are dropped.
///
/// Finds `--boundary` with a substring search and keeps the hits that start a line, so
/// operation bodies are skipped at memory speed rather than read line by line (a memchr
/// per line start cost twice as much: a change set has some twenty lines per operation).
pub(crate) fn split_parts<'a>(body: &'a [u8], boundary: &str) -> Result<Vec<&'a [u8]>, FramingError> {
    let mut delim = Vec::with_capacity(boundary.len() + 2);
    delim.extend_from_slice(b"--");
    delim.extend_from_slice(boundary.as_bytes());
    let finder = memmem::Finder::new(&delim);
    let mut parts = Vec::new();
    // Start of the current part's content, once a delimiter was seen.
    let mut open: Option<usize> = None;
    let mut from = 0;
    while let Some(found) = finder.find(&body[from..]) {
        let line = from + found;
        from = line + 1;
        if line > 0 && body[line - 1] != b'\n' {
            continue;
        }
        let after = &body[line + delim.len()..];
        let is_close = after.starts_with(b"--");
        let line_tail = &after[..memchr(b'\n', after).unwrap_or(after.len())];
        let is_delim = is_close || line_tail.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'));
        if !is_delim {
            continue;
        }
        if let Some(start) = open {
            parts.push(&body[start..content_end(body, start, line)]);
        }
        if is_close {
            return Ok(parts);
        }
        open = Some(memchr(b'\n', &body[line..]).map_or(body.len(), |i| line + i + 1));
    }
    match open {
        None => Err(FramingError::NoDelimiter),
        // `--boundary` then only blank space: a close delimiter without its dashes.
        Some(start) if body[start..].iter().all(u8::is_ascii_whitespace) => Ok(parts),
        Some(_) => Err(FramingError::Unterminated),
    }
}

/// End of a part's content whose delimiter line starts at `line`: drops the CRLF or LF
/// that belongs to the delimiter.
fn content_end(body: &[u8], start: usize, line: usize) -> usize {
    let mut end = line;
    if end > start && body[end - 1] == b'\n' {
        end -= 1;
        if end > start && body[end - 1] == b'\r' {
            end -= 1;
        }
    }
    end
}

/// Splits content at its first empty line into (header block, body). Without an empty
/// line the whole content is the header block and the body is empty.
pub(crate) fn split_head(content: &[u8]) -> (&[u8], &[u8]) {
    if let Some(body) = strip_line_end(content) {
        return (&[], body);
    }
    for nl in memchr_iter(b'\n', content) {
        if let Some(body) = strip_line_end(&content[nl + 1..]) {
            let head = &content[..nl];
            return (head.strip_suffix(b"\r").unwrap_or(head), body);
        }
    }
    (content, &[])
}

/// If `s` starts with a line end (CRLF or LF), returns what follows it.
pub(crate) fn strip_line_end(s: &[u8]) -> Option<&[u8]> {
    s.strip_prefix(b"\r\n").or_else(|| s.strip_prefix(b"\n"))
}

/// Reads a header block (lines `Name: value`, folded continuation lines allowed) and
/// hands each header to `f` in order: the name trimmed but in its original case, the
/// value trimmed (borrowed from the block unless folded lines had to be joined).
/// `Err` names what is wrong; `f` may have seen the headers before the bad line.
pub(crate) fn for_each_header<'a>(
    block: &'a [u8],
    mut f: impl FnMut(&'a str, Cow<'a, str>),
) -> Result<(), &'static str> {
    let text = std::str::from_utf8(block).map_err(|_| "a header block is not valid UTF-8")?;
    // The header being read: its value may still grow by continuation lines.
    let mut current: Option<(&str, Cow<'a, str>)> = None;
    let mut start = 0;
    while start <= text.len() {
        // Lines end at `\n`, an ASCII byte, so the slicing stays on char boundaries.
        let end = memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i);
        let raw = &text[start..end];
        start = end + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.is_empty() {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            let (_, value) = current.as_mut().ok_or("a header block starts with a continuation line")?;
            let value = value.to_mut();
            if !value.is_empty() {
                value.push(' ');
            }
            value.push_str(trim(line));
            continue;
        }
        let colon = memchr(b':', line.as_bytes()).ok_or("a header line has no colon")?;
        let name = trim(&line[..colon]);
        if name.is_empty() || !is_header_name(name) {
            return Err("a header name is empty or contains white space");
        }
        if let Some((name, value)) = current.replace((name, Cow::Borrowed(trim(&line[colon + 1..])))) {
            f(name, value);
        }
    }
    if let Some((name, value)) = current {
        f(name, value);
    }
    Ok(())
}

/// Whether a header name has no white space or control character.
fn is_header_name(name: &str) -> bool {
    // Printable ASCII (0x21..=0x7E) only: the usual case, checked without branches.
    if name.bytes().fold(true, |ok, b| ok & (b > b' ') & (b < 0x7f)) {
        return true;
    }
    !name.contains(|c: char| c.is_whitespace() || c.is_control())
}

/// `s.trim()`, faster when what remains after the ASCII white space starts and ends
/// with printable ASCII (every other white space character is outside ASCII).
pub(crate) fn trim(s: &str) -> &str {
    let t = s.trim_ascii();
    match (t.as_bytes().first(), t.as_bytes().last()) {
        (Some(&a), Some(&b)) if (0x21..0x7f).contains(&a) && (0x21..0x7f).contains(&b) => t,
        _ => t.trim(),
    }
}

/// Parses a header block (see [`for_each_header`]) into a list that borrows from it.
pub(crate) fn parse_headers(block: &[u8]) -> Result<Headers<'_>, &'static str> {
    let mut headers: Headers<'_> = if block.is_empty() { Vec::new() } else { Vec::with_capacity(8) };
    for_each_header(block, |name, value| headers.push((name, value)))?;
    Ok(headers)
}

/// The first value of a header; `name` in lowercase, matched against the names as sent
/// ignoring ASCII case (what comparing the lowercased names to it answers).
pub(crate) fn header<'h>(headers: &'h [(&str, Cow<'_, str>)], name: &str) -> Option<&'h str> {
    header_value(headers, name).map(|v| &**v)
}

/// [`header`]'s value as held, borrowed from the block or owned.
pub(crate) fn header_value<'h, 'a>(
    headers: &'h [(&'a str, Cow<'a, str>)],
    name: &str,
) -> Option<&'h Cow<'a, str>> {
    debug_assert!(!name.bytes().any(|b| b.is_ascii_uppercase()), "{name}");
    headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_type_parameters() {
        let m = MediaType::parse("Multipart/Mixed; boundary=batch_1").unwrap();
        assert_eq!(m.mixed_boundary(), Some("batch_1"));
        let m = MediaType::parse("multipart/mixed;charset=\"utf-8\";boundary=\"a;b \\\"c\\\"\"").unwrap();
        assert_eq!(m.param("charset"), Some("utf-8"));
        assert_eq!(m.mixed_boundary(), Some("a;b \"c\""));
        assert_eq!(MediaType::parse("multipart/mixed").unwrap().mixed_boundary(), None);
        assert_eq!(MediaType::parse("multipart/mixed; boundary=").unwrap().mixed_boundary(), None);
        assert_eq!(MediaType::parse("application/json; boundary=x").unwrap().mixed_boundary(), None);
        assert_eq!(MediaType::parse("multipart/mixed; boundary=\"open"), None);
        assert_eq!(MediaType::parse("nonsense"), None);
        assert_eq!(MediaType::parse(""), None);
    }

    #[test]
    fn split_crlf_lf_and_lenient_endings() {
        let b = b"pre\r\n--b\r\nA\r\n--b\r\nB\n--b--\r\nepilogue";
        assert_eq!(split_parts(b, "b").unwrap(), vec![&b"A"[..], &b"B"[..]]);
        let b = b"--b\nA\n\n--b  \t\nB\n--b--";
        assert_eq!(split_parts(b, "b").unwrap(), vec![&b"A\n"[..], &b"B"[..]]);
        // Close delimiter without its dashes (older JS SDK).
        assert_eq!(split_parts(b"--b\r\nA\r\n--b\r\n", "b").unwrap(), vec![&b"A"[..]]);
        assert_eq!(split_parts(b"--b\r\nA", "b"), Err(FramingError::Unterminated));
        assert_eq!(split_parts(b"A\r\n", "b"), Err(FramingError::NoDelimiter));
        // Not delimiters: longer boundary, mid-line, different boundary.
        let b = b"--b\r\nx --b\r\n--bc\r\n--b-\r\n--b--";
        assert_eq!(split_parts(b, "b").unwrap(), vec![&b"x --b\r\n--bc\r\n--b-"[..]]);
        assert_eq!(split_parts(b"--b--", "b").unwrap(), Vec::<&[u8]>::new());
    }

    #[test]
    fn head_and_headers() {
        assert_eq!(split_head(b"A: 1\r\n\r\nbody"), (&b"A: 1"[..], &b"body"[..]));
        assert_eq!(split_head(b"A: 1\n\n\nbody"), (&b"A: 1"[..], &b"\nbody"[..]));
        assert_eq!(split_head(b"\r\nbody"), (&b""[..], &b"body"[..]));
        assert_eq!(split_head(b"A: 1\r\nB: 2"), (&b"A: 1\r\nB: 2"[..], &b""[..]));
        let h = parse_headers(b"Content-Type: a/b\r\nX-Long: one\r\n two\r\nEmpty:").unwrap();
        assert_eq!(
            h,
            vec![
                ("Content-Type", Cow::Borrowed("a/b")),
                ("X-Long", Cow::Owned("one two".to_owned())),
                ("Empty", Cow::Borrowed("")),
            ]
        );
        assert_eq!(header(&h, "x-long"), Some("one two"));
        assert_eq!(header(&h, "content-type"), Some("a/b"));
        assert!(parse_headers(b"no colon").is_err());
        assert!(parse_headers(b" leading: fold").is_err());
        assert!(parse_headers(b"bad name: x").is_err());
        assert!(parse_headers(b"\xff: x").is_err());
    }

    #[test]
    fn trim_is_str_trim() {
        for s in
            ["", " ", " \t\r\n", "a", " a b ", "\u{b}x\u{c}", "\u{a0}x\u{3000}", " é ", "x\u{85}", "\u{2028}"]
        {
            assert_eq!(trim(s), s.trim(), "{s:?}");
        }
    }

    #[test]
    fn header_names_values_and_folding() {
        // Control characters and any Unicode white space are refused in names; other
        // non-ASCII characters are kept.
        for bad in [&b"a\x7fb: x"[..], b"a\x0bb: x", "a\u{a0}b: x".as_bytes(), "a\u{2003}b: x".as_bytes()] {
            assert!(parse_headers(bad).is_err(), "{bad:?}");
        }
        let h = parse_headers("Ünï\u{2003}: x".as_bytes()).unwrap();
        assert_eq!(h, vec![("Ünï", Cow::Borrowed("x"))]);
        // Values are trimmed of Unicode white space; folding joins with one space, and a
        // blank continuation line still adds it.
        let h = parse_headers("A:\u{3000}x\u{a0}\r\nB:\r\n\tone\r\n  \r\nC: y\r\n   z".as_bytes()).unwrap();
        let h: Vec<_> = h.iter().map(|(n, v)| (*n, &**v)).collect();
        assert_eq!(h, [("A", "x"), ("B", "one "), ("C", "y z")]);
        let mut seen = Vec::new();
        for_each_header(b"X-A: 1\r\nx-a: 2", |n, v| seen.push((n, v.into_owned()))).unwrap();
        assert_eq!(seen, [("X-A", "1".to_owned()), ("x-a", "2".to_owned())]);
        // Errors: the UTF-8 check covers the whole block before any line is read.
        assert_eq!(parse_headers(b"no colon\r\nA: \xff"), Err("a header block is not valid UTF-8"));
        assert_eq!(parse_headers(b"A: 1\r\nno colon"), Err("a header line has no colon"));
    }

    #[test]
    fn essence_checks_agree_with_parse() {
        for v in [
            "application/http",
            " Application/HTTP\t",
            "application/http; msgtype=request",
            "application/http;x=\"open",
            "application/https",
            "application /http",
            "",
        ] {
            let parsed = MediaType::parse(v).is_some_and(|m| m.essence == "application/http");
            assert_eq!(MediaType::has_essence(v, "application/http"), parsed, "{v:?}");
        }
    }

    #[test]
    fn delimiters_only_at_line_starts() {
        // Hits of `--b` inside lines (and one right after another) are skipped.
        let b = b"x--b\r\n--b\r\nA--b--\r\n--bb\r\n--b\r\nB\r\n--b--b";
        assert_eq!(split_parts(b, "b").unwrap(), vec![&b"A--b--\r\n--bb"[..], &b"B"[..]]);
        assert_eq!(split_parts(b"--b\r\n--b\r\n--b--", "b").unwrap(), vec![&b""[..], &b""[..]]);
        assert_eq!(split_parts(b"--b", "b").unwrap(), Vec::<&[u8]>::new());
        assert_eq!(split_parts(b"--b \t\r\nA\r\n--b\r\n \r\n", "b").unwrap(), vec![&b"A"[..]]);
        assert_eq!(split_head(b"A: 1\r\nB: 2\n\r"), (&b"A: 1\r\nB: 2\n\r"[..], &b""[..]));
    }

    /// The parts as a byte-by-byte reading of RFC 2046 finds them: a delimiter is
    /// `--boundary` at a line start, followed by `--` (the close) or only blank space to
    /// the line's end; a part runs from after its delimiter's line to the line break
    /// before the next delimiter.
    fn split_model<'a>(body: &'a [u8], boundary: &str) -> Result<Vec<&'a [u8]>, FramingError> {
        let delim = format!("--{boundary}").into_bytes();
        let (mut parts, mut open) = (Vec::new(), None);
        for line in (0..=body.len()).filter(|&i| i == 0 || body[i - 1] == b'\n') {
            let Some(after) = body[line..].strip_prefix(&delim[..]) else { continue };
            let tail = after.split(|&b| b == b'\n').next().unwrap_or_default();
            let close = after.starts_with(b"--");
            if !close && !tail.iter().all(|b| b" \t\r".contains(b)) {
                continue;
            }
            if let Some(start) = open {
                let mut end = line;
                if end > start && body[end - 1] == b'\n' {
                    end -= 1;
                    if end > start && body[end - 1] == b'\r' {
                        end -= 1;
                    }
                }
                parts.push(&body[start..end]);
            }
            if close {
                return Ok(parts);
            }
            let next_line = line + delim.len() + tail.len() + 1;
            open = Some(next_line.min(body.len()));
        }
        match open {
            None => Err(FramingError::NoDelimiter),
            Some(start) if body[start..].iter().all(u8::is_ascii_whitespace) => Ok(parts),
            Some(_) => Err(FramingError::Unterminated),
        }
    }

    proptest::proptest! {
        /// Bodies of delimiter-like lines, dashes, blanks and line breaks split as the
        /// model splits them.
        #[test]
        fn parts_split_as_the_model_splits_them(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec!["--b", "--bb", "--", "-", "b", "x", " ", "\t", "\r", "\n", "\r\n", "{}"]),
                0..40,
            ),
            boundary in proptest::sample::select(vec!["b", "bb"]),
        ) {
            let body = pieces.concat();
            proptest::prop_assert_eq!(split_parts(body.as_bytes(), boundary), split_model(body.as_bytes(), boundary));
        }
    }
}
