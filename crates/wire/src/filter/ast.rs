//! The parsed `$filter`: plain data, no positions, no evaluation logic.
//!
//! Parentheses are not nodes: they only shape the tree. [`Expr`]'s `Display` prints
//! valid `$filter` text with the fewest parentheses the precedence rules need (plus
//! parentheses around the operand of `not` unless it is a bare property or `true` /
//! `false`), so that `parse(&expr.to_string()) == Ok(expr)` for every tree the parser
//! can produce.

use aztable_model::edm::format_guid;
use aztable_model::EdmValue;
use std::fmt::{self, Display, Formatter, Write};

/// A comparison operator. Only these six exist in the Table service's `$filter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

impl CmpOp {
    /// All operators, in the order the docs list them.
    pub const ALL: [CmpOp; 6] = [CmpOp::Eq, CmpOp::Ne, CmpOp::Gt, CmpOp::Ge, CmpOp::Lt, CmpOp::Le];

    /// Returns the keyword (`eq`, `ne`, `gt`, `ge`, `lt`, `le`).
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
        }
    }

    /// Parses a keyword; exact, lowercase only.
    pub fn parse(s: &str) -> Option<CmpOp> {
        CmpOp::ALL.into_iter().find(|op| op.as_str() == s)
    }

    /// The operator with its operands swapped: `'a' lt P` is `P gt 'a'`.
    pub fn flip(self) -> CmpOp {
        match self {
            CmpOp::Eq => CmpOp::Eq,
            CmpOp::Ne => CmpOp::Ne,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
        }
    }
}

impl Display for CmpOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A parsed `$filter` expression.
///
/// Comparisons are normalised with the property on the left: `'a' lt PartitionKey`
/// parses as `Compare { property: "PartitionKey", op: Gt, value: String("a") }`.
/// `And` / `Or` are binary and built left-associatively (`a and b and c` is
/// `And(And(a, b), c)`).
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// `property op literal`; the literal carries its Edm type (`5` Int32, `5L` Int64,
    /// `5.0` Double, `'5'` String, ...).
    Compare {
        property: String,
        op: CmpOp,
        value: EdmValue,
    },
    /// A bare property used as a boolean (`IsActive`): true when it is `Edm.Boolean` true.
    Property(String),
    /// The literal `true` or `false` used as a whole condition.
    Bool(bool),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
}

impl Expr {
    /// `property op value`.
    pub fn compare(property: impl Into<String>, op: CmpOp, value: EdmValue) -> Expr {
        Expr::Compare { property: property.into(), op, value }
    }

    /// `not self`.
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Expr {
        Expr::Not(Box::new(self))
    }

    /// `self and other`.
    pub fn and(self, other: Expr) -> Expr {
        Expr::And(Box::new(self), Box::new(other))
    }

    /// `self or other`.
    pub fn or(self, other: Expr) -> Expr {
        Expr::Or(Box::new(self), Box::new(other))
    }

    /// The custom properties the filter reads (system properties excluded), each once:
    /// what a scan must decode to evaluate it.
    pub fn property_names(&self) -> Vec<String> {
        fn walk(e: &Expr, out: &mut Vec<String>) {
            match e {
                Expr::Compare { property, .. } | Expr::Property(property) => {
                    let system = matches!(property.as_str(), "PartitionKey" | "RowKey" | "Timestamp");
                    if !system && !out.contains(property) {
                        out.push(property.clone());
                    }
                }
                Expr::Bool(_) => {}
                Expr::Not(inner) => walk(inner, out),
                Expr::And(a, b) | Expr::Or(a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out
    }

    /// Whether the expression reads `PartitionKey` or `RowKey`.
    pub fn reads_keys(&self) -> bool {
        match self {
            Expr::Compare { property, .. } | Expr::Property(property) => {
                matches!(property.as_str(), "PartitionKey" | "RowKey")
            }
            Expr::Bool(_) => false,
            Expr::Not(inner) => inner.reads_keys(),
            Expr::And(a, b) | Expr::Or(a, b) => a.reads_keys() || b.reads_keys(),
        }
    }

    /// Binding strength when printed: `or` 1, `and` 2, everything else 3.
    fn precedence(&self) -> u8 {
        match self {
            Expr::Or(..) => 1,
            Expr::And(..) => 2,
            _ => 3,
        }
    }

    /// Writes `self`, parenthesised when it binds more loosely than `min`.
    fn fmt_at(&self, f: &mut Formatter<'_>, min: u8) -> fmt::Result {
        if self.precedence() < min {
            f.write_char('(')?;
            self.fmt_bare(f)?;
            f.write_char(')')
        } else {
            self.fmt_bare(f)
        }
    }

    fn fmt_bare(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Compare { property, op, value } => {
                write!(f, "{property} {op} ")?;
                write_literal(f, value)
            }
            Expr::Property(name) => f.write_str(name),
            Expr::Bool(b) => write!(f, "{b}"),
            Expr::Not(inner) => {
                f.write_str("not ")?;
                // `not not x` needs no parentheses; adding them would make a deeply
                // negated filter print deeper than the parser's depth limit
                match **inner {
                    Expr::Property(_) | Expr::Bool(_) | Expr::Not(_) => inner.fmt_bare(f),
                    _ => {
                        f.write_char('(')?;
                        inner.fmt_bare(f)?;
                        f.write_char(')')
                    }
                }
            }
            // Left-associative: the left operand may be of the same level, the right not.
            Expr::And(a, b) => {
                a.fmt_at(f, 2)?;
                f.write_str(" and ")?;
                b.fmt_at(f, 3)
            }
            Expr::Or(a, b) => {
                a.fmt_at(f, 1)?;
                f.write_str(" or ")?;
                b.fmt_at(f, 2)
            }
        }
    }
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.fmt_bare(f)
    }
}

/// Writes a typed literal in `$filter` syntax: `'it''s'`, `5`, `5L`, `5.0`, `true`,
/// `datetime'2008-07-10T00:00:00.0000000Z'`, `guid'…'`, `X'0a0b'`.
///
/// Doubles use Rust's shortest round-trip form, which always has a `.` or an exponent
/// (`1.0`, `1e20`). NaN and the infinities have no literal form; they print as `NaN`,
/// `inf` and `-inf`, which do not parse back.
pub fn write_literal(f: &mut impl Write, value: &EdmValue) -> fmt::Result {
    match value {
        EdmValue::String(s) => {
            f.write_char('\'')?;
            for c in s.chars() {
                if c == '\'' {
                    f.write_str("''")?;
                } else {
                    f.write_char(c)?;
                }
            }
            f.write_char('\'')
        }
        EdmValue::Int32(i) => write!(f, "{i}"),
        EdmValue::Int64(i) => write!(f, "{i}L"),
        EdmValue::Double(d) => write!(f, "{d:?}"),
        EdmValue::Boolean(b) => write!(f, "{b}"),
        EdmValue::DateTime(t) => write!(f, "datetime'{}'", t.to_rfc3339_7()),
        EdmValue::Guid(g) => write!(f, "guid'{}'", format_guid(g)),
        EdmValue::Binary(bytes) => {
            f.write_str("X'")?;
            for b in bytes {
                write!(f, "{b:02x}")?;
            }
            f.write_char('\'')
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aztable_model::Ticks;

    fn lit(v: EdmValue) -> String {
        let mut s = String::new();
        write_literal(&mut s, &v).unwrap();
        s
    }

    #[test]
    fn literals_print_in_filter_syntax() {
        assert_eq!(lit(EdmValue::String("o'clock".into())), "'o''clock'");
        assert_eq!(lit(EdmValue::String(String::new())), "''");
        assert_eq!(lit(EdmValue::Int32(-5)), "-5");
        assert_eq!(lit(EdmValue::Int64(12)), "12L");
        assert_eq!(lit(EdmValue::Double(1.0)), "1.0");
        assert_eq!(lit(EdmValue::Double(1e20)), "1e20");
        assert_eq!(lit(EdmValue::Boolean(false)), "false");
        let t = Ticks::parse("2008-07-10T00:00:00Z").unwrap();
        assert_eq!(lit(EdmValue::DateTime(t)), "datetime'2008-07-10T00:00:00.0000000Z'");
        assert_eq!(lit(EdmValue::Binary(vec![0x0a, 0xff])), "X'0aff'");
        assert_eq!(lit(EdmValue::Guid([0xab; 16])), "guid'abababab-abab-abab-abab-abababababab'");
    }

    #[test]
    fn display_uses_minimal_parentheses() {
        let a = Expr::compare("A", CmpOp::Eq, EdmValue::Int32(1));
        let b = Expr::Property("B".into());
        let c = Expr::Bool(true);
        assert_eq!(a.clone().and(b.clone()).or(c.clone()).to_string(), "A eq 1 and B or true");
        assert_eq!(a.clone().and(b.clone().or(c.clone())).to_string(), "A eq 1 and (B or true)");
        assert_eq!(a.clone().or(b.clone().or(c.clone())).to_string(), "A eq 1 or (B or true)");
        assert_eq!(a.clone().not().to_string(), "not (A eq 1)");
        assert_eq!(b.clone().not().to_string(), "not B");
        assert_eq!(b.not().not().to_string(), "not not B");
        assert_eq!(a.and(c).not().to_string(), "not (A eq 1 and true)");
    }

    #[test]
    fn flip_swaps_direction() {
        assert_eq!(CmpOp::Lt.flip(), CmpOp::Gt);
        assert_eq!(CmpOp::Ge.flip(), CmpOp::Le);
        assert_eq!(CmpOp::Eq.flip(), CmpOp::Eq);
        assert_eq!(CmpOp::parse("ge"), Some(CmpOp::Ge));
        assert_eq!(CmpOp::parse("GE"), None);
    }
}
