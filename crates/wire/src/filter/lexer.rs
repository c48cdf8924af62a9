//! Splits `$filter` text into tokens: parentheses, identifiers, lowercase keywords and
//! typed literals.
//!
//! Literal forms (everything is case-sensitive):
//!
//! | form | type |
//! |---|---|
//! | `'text'`, `''` inside for a quote | `Edm.String` |
//! | `5`, `-5` (must fit in 32 bits) | `Edm.Int32` |
//! | `5L`, `-5L` (uppercase `L` only) | `Edm.Int64` |
//! | `1.5`, `1.0`, `-2.5`, `1e10`, `1E+10`, `2.5e-3` | `Edm.Double` |
//! | `true`, `false` | `Edm.Boolean` |
//! | `datetime'2008-07-10T00:00:00Z'` | `Edm.DateTime` |
//! | `guid'a455c695-df98-5678-aaaa-81d3367e5a34'` | `Edm.Guid` |
//! | `X'0A0B'`, `binary'0A0B'` (even number of hex digits) | `Edm.Binary` |
//!
//! Not supported, as on the service: `null`, `NaN`/`INF`, other suffixes (`d`, `m`,
//! `f`, lowercase `l`), `"double quoted"` strings.

use super::error::FilterError;
use aztable_model::edm::parse_guid;
use aztable_model::{EdmValue, Ticks};

/// A lowercase keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keyword {
    And,
    Or,
    Not,
    Cmp(super::ast::CmpOp),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokenKind {
    LParen,
    RParen,
    Ident(String),
    Keyword(Keyword),
    Literal(EdmValue),
    End,
}

/// A token and the byte offset where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub kind: TokenKind,
    pub start: usize,
}

/// Every keyword, for "keywords are lowercase" diagnostics.
const KEYWORDS: [&str; 12] =
    ["and", "or", "not", "eq", "ne", "gt", "ge", "lt", "le", "true", "false", "null"];

/// Returns the keyword `word` spells in the wrong case (`AND` → `and`), if any.
pub(crate) fn miscased_keyword(word: &str) -> Option<&'static str> {
    KEYWORDS.into_iter().find(|k| *k != word && k.eq_ignore_ascii_case(word))
}

/// Splits `input` into tokens, ending with [`TokenKind::End`].
pub(crate) fn tokenize(input: &str) -> Result<Vec<Token>, FilterError> {
    let mut lx = Lexer { input, pos: 0 };
    let mut out = Vec::new();
    loop {
        let tok = lx.next_token()?;
        let end = tok.kind == TokenKind::End;
        out.push(tok);
        if end {
            return Ok(out);
        }
    }
}

struct Lexer<'a> {
    input: &'a str,
    /// Byte offset of the next unread character.
    pos: usize,
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_continue(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

impl<'a> Lexer<'a> {
    fn rest(&self) -> &'a str {
        self.input.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn peek2(&self) -> Option<char> {
        self.rest().chars().nth(1)
    }

    fn err(&self, byte: usize, message: impl Into<String>) -> FilterError {
        FilterError::at_byte(self.input, byte, message)
    }

    /// Advances while `pred` holds; returns the consumed text.
    fn take_while(&mut self, pred: impl Fn(char) -> bool) -> &'a str {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if !pred(c) {
                break;
            }
            self.pos += c.len_utf8();
        }
        self.input.get(start..self.pos).unwrap_or("")
    }

    fn next_token(&mut self) -> Result<Token, FilterError> {
        self.take_while(|c| c.is_ascii_whitespace());
        let start = self.pos;
        let Some(c) = self.peek() else {
            return Ok(Token { kind: TokenKind::End, start });
        };
        let kind = match c {
            '(' => {
                self.pos += 1;
                TokenKind::LParen
            }
            ')' => {
                self.pos += 1;
                TokenKind::RParen
            }
            '\'' => TokenKind::Literal(EdmValue::String(self.quoted()?)),
            '-' if self.peek2().is_some_and(|d| d.is_ascii_digit()) => self.number()?,
            '0'..='9' => self.number()?,
            c if is_ident_start(c) => self.word()?,
            '"' => return Err(self.err(start, "Strings must be enclosed in single quotes")),
            c => return Err(self.err(start, format!("Unexpected character '{c}'"))),
        };
        Ok(Token { kind, start })
    }

    /// Reads `'…'` starting at the opening quote; `''` stands for one quote.
    fn quoted(&mut self) -> Result<String, FilterError> {
        let open = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let chunk = self.take_while(|c| c != '\'');
            out.push_str(chunk);
            if self.peek().is_none() {
                return Err(self.err(open, "Unterminated string literal"));
            }
            self.pos += 1; // the quote
            if self.peek() == Some('\'') {
                self.pos += 1;
                out.push('\'');
            } else {
                return Ok(out);
            }
        }
    }

    /// Reads an identifier, keyword, `true`/`false` or typed literal (`datetime'…'`).
    fn word(&mut self) -> Result<TokenKind, FilterError> {
        let start = self.pos;
        let word = self.take_while(is_ident_continue);
        if self.peek() == Some('\'') && matches!(word, "datetime" | "guid" | "binary" | "X") {
            let body = self.quoted()?;
            return typed_literal(word, &body).map(TokenKind::Literal).map_err(|m| self.err(start, m));
        }
        if self.peek() == Some('\'')
            && ["datetime", "guid", "binary", "X"].iter().any(|k| k.eq_ignore_ascii_case(word))
        {
            let msg = format!("Unknown literal type '{word}'; write datetime'…', guid'…', binary'…' or X'…'");
            return Err(self.err(start, msg));
        }
        Ok(match word {
            "and" => TokenKind::Keyword(Keyword::And),
            "or" => TokenKind::Keyword(Keyword::Or),
            "not" => TokenKind::Keyword(Keyword::Not),
            "true" => TokenKind::Literal(EdmValue::Boolean(true)),
            "false" => TokenKind::Literal(EdmValue::Boolean(false)),
            "null" => return Err(self.err(start, "The null literal is not supported")),
            w => match super::ast::CmpOp::parse(w) {
                Some(op) => TokenKind::Keyword(Keyword::Cmp(op)),
                None => TokenKind::Ident(w.to_string()),
            },
        })
    }

    /// Reads `-?digits(.digits)?([eE][+-]?digits)?L?`.
    fn number(&mut self) -> Result<TokenKind, FilterError> {
        let start = self.pos;
        if self.peek() == Some('-') {
            self.pos += 1;
        }
        self.take_while(|c| c.is_ascii_digit());
        let mut is_double = false;
        if self.peek() == Some('.') && self.peek2().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
            self.take_while(|c| c.is_ascii_digit());
            is_double = true;
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            let after = self.rest().get(1..).unwrap_or("");
            let digits_at = usize::from(after.starts_with(['+', '-']));
            if after.get(digits_at..).is_some_and(|s| s.starts_with(|c: char| c.is_ascii_digit())) {
                self.pos += 1 + digits_at;
                self.take_while(|c| c.is_ascii_digit());
                is_double = true;
            }
        }
        let text = self.input.get(start..self.pos).unwrap_or("");
        let is_long = self.peek() == Some('L');
        if is_long {
            self.pos += 1;
        }
        if self.peek().is_some_and(|c| is_ident_continue(c) || c == '.') {
            let junk = self.take_while(|c| is_ident_continue(c) || c == '.');
            return Err(self.err(start, format!("Invalid numeric literal '{text}{junk}'")));
        }
        if is_long {
            if is_double {
                return Err(self.err(start, format!("Invalid numeric literal '{text}L'")));
            }
            return text
                .parse::<i64>()
                .map(|v| TokenKind::Literal(EdmValue::Int64(v)))
                .map_err(|_| self.err(start, format!("Unrecognized 'Edm.Int64' literal '{text}L'")));
        }
        if is_double {
            return match text.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(TokenKind::Literal(EdmValue::Double(v))),
                _ => Err(self.err(start, format!("Unrecognized 'Edm.Double' literal '{text}'"))),
            };
        }
        text.parse::<i32>().map(|v| TokenKind::Literal(EdmValue::Int32(v))).map_err(|_| {
            self.err(
                start,
                format!("Unrecognized 'Edm.Int32' literal '{text}' (write {text}L for an Edm.Int64)"),
            )
        })
    }
}

/// Converts the body of `prefix'body'` into a value.
fn typed_literal(prefix: &str, body: &str) -> Result<EdmValue, String> {
    match prefix {
        "datetime" => Ticks::parse(body)
            .map(EdmValue::DateTime)
            .ok_or_else(|| format!("Unrecognized 'Edm.DateTime' literal 'datetime'{body}''")),
        "guid" => parse_guid(body)
            .map(EdmValue::Guid)
            .ok_or_else(|| format!("Unrecognized 'Edm.Guid' literal 'guid'{body}''")),
        _ => decode_hex(body)
            .map(EdmValue::Binary)
            .ok_or_else(|| format!("Unrecognized 'Edm.Binary' literal '{prefix}'{body}''")),
    }
}

/// Decodes an even number of hex digits (either case).
fn decode_hex(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if b.len() % 2 != 0 {
        return None;
    }
    let nibble = |c: u8| (c as char).to_digit(16);
    b.chunks_exact(2).map(|p| Some((nibble(p[0])? * 16 + nibble(p[1])?) as u8)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::ast::CmpOp;

    fn kinds(s: &str) -> Vec<TokenKind> {
        tokenize(s).unwrap().into_iter().map(|t| t.kind).collect()
    }

    fn one(s: &str) -> EdmValue {
        match kinds(s).as_slice() {
            [TokenKind::Literal(v), TokenKind::End] => v.clone(),
            other => panic!("{s}: {other:?}"),
        }
    }

    fn err(s: &str) -> FilterError {
        tokenize(s).unwrap_err()
    }

    #[test]
    fn literals() {
        assert_eq!(one("'o''clock'"), EdmValue::String("o'clock".into()));
        assert_eq!(one("''"), EdmValue::String(String::new()));
        assert_eq!(one("''''"), EdmValue::String("'".into()));
        assert_eq!(one("42"), EdmValue::Int32(42));
        assert_eq!(one("-5"), EdmValue::Int32(-5));
        assert_eq!(one("-2147483648"), EdmValue::Int32(i32::MIN));
        assert_eq!(one("007"), EdmValue::Int32(7));
        assert_eq!(one("12L"), EdmValue::Int64(12));
        assert_eq!(one("-9223372036854775808L"), EdmValue::Int64(i64::MIN));
        assert_eq!(one("1.0"), EdmValue::Double(1.0));
        assert_eq!(one("-2.5"), EdmValue::Double(-2.5));
        assert_eq!(one("1e10"), EdmValue::Double(1e10));
        assert_eq!(one("1E+10"), EdmValue::Double(1e10));
        assert_eq!(one("2.5e-3"), EdmValue::Double(2.5e-3));
        assert_eq!(one("true"), EdmValue::Boolean(true));
        assert_eq!(one("X'0A0b'"), EdmValue::Binary(vec![10, 11]));
        assert_eq!(one("binary''"), EdmValue::Binary(vec![]));
        let g = one("guid'A455C695-DF98-5678-AAAA-81D3367E5A34'");
        assert_eq!(g, EdmValue::Guid(parse_guid("a455c695-df98-5678-aaaa-81d3367e5a34").unwrap()));
        let t = one("datetime'2008-07-10T00:00:00Z'");
        assert_eq!(t, EdmValue::DateTime(Ticks::parse("2008-07-10T00:00:00Z").unwrap()));
    }

    #[test]
    fn keywords_and_identifiers() {
        assert_eq!(
            kinds("(Age ge 5)and not X"),
            vec![
                TokenKind::LParen,
                TokenKind::Ident("Age".into()),
                TokenKind::Keyword(Keyword::Cmp(CmpOp::Ge)),
                TokenKind::Literal(EdmValue::Int32(5)),
                TokenKind::RParen,
                TokenKind::Keyword(Keyword::And),
                TokenKind::Keyword(Keyword::Not),
                TokenKind::Ident("X".into()),
                TokenKind::End,
            ]
        );
        assert_eq!(kinds("AND")[0], TokenKind::Ident("AND".into()));
        assert_eq!(kinds("Größe_2")[0], TokenKind::Ident("Größe_2".into()));
        assert!(tokenize("Datetime'2020-01-01T00:00:00Z'").is_err());
        assert_eq!(kinds("Datetime eq 1")[0], TokenKind::Ident("Datetime".into()));
        assert_eq!(miscased_keyword("AND"), Some("and"));
        assert_eq!(miscased_keyword("and"), None);
        assert_eq!(miscased_keyword("Name"), None);
    }

    #[test]
    fn errors_carry_positions() {
        assert_eq!(err("A eq 'abc").position, 5);
        assert_eq!(err("A eq 3000000000").position, 5);
        assert!(err("A eq 3000000000").message.contains("Edm.Int32"));
        assert_eq!(err("A eq 99999999999999999999L").position, 5);
        assert_eq!(err("A eq 1.5L").position, 5);
        assert_eq!(err("A eq 5l").position, 5);
        assert_eq!(err("A eq 12abc").position, 5);
        assert_eq!(err("A eq 1.").position, 5);
        assert_eq!(err("A eq 1e400").position, 5);
        assert_eq!(err("A eq null").position, 5);
        assert_eq!(err("A eq \"x\"").position, 5);
        assert_eq!(err("A eq guid'nope'").position, 5);
        assert_eq!(err("A eq X'0A0'").position, 5);
        assert_eq!(err("A eq X'GG'").position, 5);
        assert_eq!(err("A eq datetime'2008-07-10'").position, 5);
        assert_eq!(err("A eq datetime'1600-01-01T00:00:00Z'").position, 5);
        assert_eq!(err("A eq - 5").position, 5);
        assert_eq!(err("é eq $").position, 5);
    }
}
