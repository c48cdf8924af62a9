//! Recursive-descent parser for `$filter`, with a nesting limit so hostile input
//! cannot exhaust the stack.
//!
//! Grammar (lowercase keywords only):
//!
//! ```text
//! filter     := or END
//! or         := and ("or" and)*
//! and        := unary ("and" unary)*
//! unary      := "not" unary | comparison
//! comparison := operand (cmp-op operand)?
//! operand    := "(" or ")" | property | literal
//! ```
//!
//! So `not` binds tighter than `and`, which binds tighter than `or`; `not A eq 1`
//! negates the whole comparison. A comparison needs a property on one side and a
//! literal on the other (either order; a literal on the left flips the operator). A
//! lone operand must be a property (a boolean test) or `true` / `false`.

use super::ast::Expr;
use super::error::FilterError;
use super::lexer::{miscased_keyword, tokenize, Keyword, Token, TokenKind};
use aztable_model::EdmValue;

/// Most comparisons (counting bare boolean properties and `true`/`false`) per filter.
/// The service documents "no more than 15 discrete comparisons" but serves far more:
/// Orleans' grain directory sends up to 201 in one filter to the real service. This
/// bound is about two and a half times that; it keeps the trees (`and` / `or` chains
/// are as deep as they are long, and evaluating, planning, printing and dropping them
/// recurses) well inside a worker thread's stack: the largest fit a quarter of its
/// 2 MiB in an unoptimised build (a test checks it). A 32 KiB request URI could hold a
/// few thousand.
pub const MAX_COMPARISONS: usize = 500;

/// Deepest nesting of parentheses and `not`s together.
pub const MAX_DEPTH: usize = 64;

/// Parses `$filter` text (already URL-decoded) into an [`Expr`].
pub fn parse(input: &str) -> Result<Expr, FilterError> {
    let tokens = tokenize(input)?;
    let mut p = Parser { input, tokens, next: 0, depth: 0, comparisons: 0 };
    if p.peek().kind == TokenKind::End {
        return Err(p.err_at(0, "The filter is empty"));
    }
    let expr = p.parse_or()?;
    let tok = p.peek();
    match &tok.kind {
        TokenKind::End => Ok(expr),
        TokenKind::RParen => Err(p.err_at(tok.start, "Unbalanced ')'")),
        _ => Err(p.unexpected(tok, "'and', 'or' or the end of the filter")),
    }
}

struct Parser<'a> {
    input: &'a str,
    tokens: Vec<Token>,
    next: usize,
    depth: usize,
    comparisons: usize,
}

/// One side of a (possible) comparison.
enum Operand {
    Group(Expr),
    Property(String),
    Literal(EdmValue),
}

fn type_name(v: &EdmValue) -> &'static str {
    v.edm_type().as_str()
}

impl Parser<'_> {
    /// The current token; the list always ends with `End`, which is never consumed.
    fn peek(&self) -> Token {
        let end = Token { kind: TokenKind::End, start: self.input.len() };
        self.tokens.get(self.next).cloned().unwrap_or(end)
    }

    fn bump(&mut self) -> Token {
        let tok = self.peek();
        if tok.kind != TokenKind::End {
            self.next += 1;
        }
        tok
    }

    fn err_at(&self, byte: usize, message: impl Into<String>) -> FilterError {
        FilterError::at_byte(self.input, byte, message)
    }

    /// "Expected X, found Y", with a hint for keywords written in the wrong case.
    fn unexpected(&self, tok: Token, expected: &str) -> FilterError {
        let found = match &tok.kind {
            TokenKind::End => "the end of the filter".to_string(),
            TokenKind::LParen => "'('".to_string(),
            TokenKind::RParen => "')'".to_string(),
            TokenKind::Ident(w) => {
                if let Some(k) = miscased_keyword(w) {
                    let msg = format!("Keywords must be lowercase: found '{w}', expected '{k}'");
                    return self.err_at(tok.start, msg);
                }
                format!("'{w}'")
            }
            TokenKind::Keyword(k) => format!("'{}'", keyword_str(*k)),
            TokenKind::Literal(v) => format!("a {} literal", type_name(v)),
        };
        self.err_at(tok.start, format!("Expected {expected}, found {found}"))
    }

    fn enter(&mut self, at: usize) -> Result<(), FilterError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err_at(at, format!("The filter is nested more than {MAX_DEPTH} levels deep")));
        }
        Ok(())
    }

    fn count_comparison(&mut self, at: usize) -> Result<(), FilterError> {
        self.comparisons += 1;
        if self.comparisons > MAX_COMPARISONS {
            let msg =
                format!("No more than {MAX_COMPARISONS} discrete comparisons are permitted in a filter");
            return Err(self.err_at(at, msg));
        }
        Ok(())
    }

    fn parse_or(&mut self) -> Result<Expr, FilterError> {
        let mut left = self.parse_and()?;
        while self.peek().kind == TokenKind::Keyword(Keyword::Or) {
            self.bump();
            let right = self.parse_and()?;
            left = left.or(right);
        }
        Ok(left)
    }

    fn parse_and(&mut self) -> Result<Expr, FilterError> {
        let mut left = self.parse_unary()?;
        while self.peek().kind == TokenKind::Keyword(Keyword::And) {
            self.bump();
            let right = self.parse_unary()?;
            left = left.and(right);
        }
        Ok(left)
    }

    fn parse_unary(&mut self) -> Result<Expr, FilterError> {
        let tok = self.peek();
        if tok.kind != TokenKind::Keyword(Keyword::Not) {
            return self.parse_comparison();
        }
        self.bump();
        self.enter(tok.start)?;
        let inner = self.parse_unary()?;
        self.depth -= 1;
        Ok(inner.not())
    }

    fn parse_comparison(&mut self) -> Result<Expr, FilterError> {
        let left_start = self.peek().start;
        let left = self.parse_operand()?;
        let op_tok = self.peek();
        let TokenKind::Keyword(Keyword::Cmp(op)) = op_tok.kind else {
            return self.lone_operand(left, left_start);
        };
        if matches!(left, Operand::Group(_)) {
            return Err(self.err_at(op_tok.start, "A parenthesised expression cannot be compared"));
        }
        self.bump();
        let right_start = self.peek().start;
        let right = self.parse_operand()?;
        let (property, op, value) = match (left, right) {
            (Operand::Property(p), Operand::Literal(v)) => (p, op, v),
            (Operand::Literal(v), Operand::Property(p)) => (p, op.flip(), v),
            (Operand::Property(_), Operand::Property(p)) => {
                let msg = match miscased_keyword(&p) {
                    Some(k) => format!("Keywords must be lowercase: found '{p}', expected '{k}'"),
                    None => "Comparing two properties is not supported; one side must be a constant".into(),
                };
                return Err(self.err_at(right_start, msg));
            }
            (Operand::Literal(_), Operand::Literal(_)) => {
                return Err(self.err_at(right_start, "One side of a comparison must be a property name"));
            }
            (_, Operand::Group(_)) | (Operand::Group(_), _) => {
                return Err(self.err_at(right_start, "A parenthesised expression cannot be compared"));
            }
        };
        self.count_comparison(left_start)?;
        Ok(Expr::Compare { property, op, value })
    }

    /// An operand with no comparison operator after it.
    fn lone_operand(&mut self, operand: Operand, start: usize) -> Result<Expr, FilterError> {
        match operand {
            Operand::Group(e) => Ok(e),
            Operand::Property(name) => {
                // `NOT A`: a lone "property" named like a keyword, followed by more input.
                let follows = self.peek().kind;
                let ends = matches!(
                    follows,
                    TokenKind::End | TokenKind::RParen | TokenKind::Keyword(Keyword::And | Keyword::Or)
                );
                if let (Some(k), false) = (miscased_keyword(&name), ends) {
                    let msg = format!("Keywords must be lowercase: found '{name}', expected '{k}'");
                    return Err(self.err_at(start, msg));
                }
                self.count_comparison(start)?;
                Ok(Expr::Property(name))
            }
            Operand::Literal(EdmValue::Boolean(b)) => {
                self.count_comparison(start)?;
                Ok(Expr::Bool(b))
            }
            Operand::Literal(v) => {
                let what = type_name(&v);
                Err(self.err_at(
                    start,
                    format!("A {what} literal is not a condition; compare it with a property"),
                ))
            }
        }
    }

    fn parse_operand(&mut self) -> Result<Operand, FilterError> {
        let tok = self.bump();
        match tok.kind {
            TokenKind::LParen => {
                self.enter(tok.start)?;
                let inner = self.parse_or()?;
                let close = self.peek();
                if close.kind != TokenKind::RParen {
                    return Err(self.unexpected(close, "')'"));
                }
                self.bump();
                self.depth -= 1;
                Ok(Operand::Group(inner))
            }
            TokenKind::Ident(name) => Ok(Operand::Property(name)),
            TokenKind::Literal(v) => Ok(Operand::Literal(v)),
            _ => Err(self.unexpected(tok, "a property name, a constant or '('")),
        }
    }
}

fn keyword_str(k: Keyword) -> &'static str {
    match k {
        Keyword::And => "and",
        Keyword::Or => "or",
        Keyword::Not => "not",
        Keyword::Cmp(op) => op.as_str(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::ast::CmpOp;

    #[test]
    fn keyword_case_is_enforced() {
        let e = parse("A eq 1 AND B eq 2").unwrap_err();
        assert_eq!(e.position, 7);
        assert!(e.message.contains("lowercase"), "{e}");
        let e = parse("A Eq 1").unwrap_err();
        assert_eq!(e.position, 2);
        assert!(e.message.contains("lowercase"), "{e}");
        let e = parse("NOT A").unwrap_err();
        assert_eq!(e.position, 0);
        let e = parse("A eq True").unwrap_err();
        assert_eq!(e.position, 5);
        assert!(e.message.contains("lowercase"), "{e}");
    }

    #[test]
    fn properties_named_like_miscased_booleans_still_work() {
        // `True` is a legal property name; only as a lone filter is it suspicious.
        assert_eq!(parse("True eq 1").unwrap(), Expr::compare("True", CmpOp::Eq, EdmValue::Int32(1)));
    }
}
