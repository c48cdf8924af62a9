//! Evaluates a parsed `$filter` against one entity (or one table name).
//!
//! Semantics, chosen to match the real service rather than Azurite:
//!
//! - **Strict typing.** A comparison only compares a property with a literal of the
//!   *same* Edm type. There is no numeric promotion: `Score gt 5` (an Int32 literal)
//!   does not match an `Edm.Double` `Score` of 7.5, and `Count lt 13` does not match an
//!   `Edm.Int64` `Count`; write `5.0` and `13L`. Evidence: the docs ("The constant value
//!   must be of the same data type as the property in order for the filter to return
//!   valid results"); Azure/azure-storage-net#122, where `Score gt 5` against a Double
//!   returned nothing on the service and Microsoft confirmed and fixed the SDK to emit
//!   `5.0`; and every SDK types its literals (`L` for Int64, `.0` for integral
//!   Doubles). A quoted GUID never matches an `Edm.Guid` (Azurite#1504), a string never
//!   matches a number (Int64 is compared numerically, so `lt 13L` never matches 120,
//!   unlike Azurite#2385).
//! - **Type mismatch.** `eq`, `gt`, `ge`, `lt`, `le` are false; `ne` is true (the value
//!   is present and is not equal to the constant). On the service `Foo ne ''` returns
//!   every entity that has a non-string `Foo` (Azurite#2342, maintainer's trace).
//!   The service's cross-type *ordering* (it sorted Double/DateTime below `''` in that
//!   issue) is not reproduced: ordering across types is simply false.
//! - **Missing property.** Every comparison is false, `ne` included (Azurite#2342: on
//!   Azure `foo gt ''` and `foo ne ''` skip entities without `foo`).
//! - **Boolean logic is two-valued.** `not` negates the result of its operand, so
//!   `not (Missing eq 1)` matches an entity without `Missing`. (No source settles
//!   this; it is what the WCF Data Services / LINQ evaluation the service grew from
//!   does, and what a client negating a condition most likely expects.)
//! - **Orders.** Strings: ordinal by UTF-16 code units, case-sensitive. Int32, Int64,
//!   Double: numeric (NaN compares false except `ne`). DateTime: by ticks. Guid: by the
//!   lowercase hyphenated text, which is the order of its 16 bytes. Binary: bytewise.
//!   Boolean: `false < true`.
//! - **A bare property** (`IsActive`) is true only for an `Edm.Boolean` true.
//! - **System properties.** `PartitionKey` and `RowKey` are `Edm.String`, `Timestamp`
//!   is `Edm.DateTime`. For Query Tables only `TableName` (`Edm.String`) exists.

use super::ast::{CmpOp, Expr};
use aztable_model::key_range::{utf16_cmp, utf16_cmp_bytes};
use aztable_model::{EdmRef, EdmValue, Entity, Row, Ticks};
use std::cmp::Ordering;

/// Evaluates `expr` against an entity. `PartitionKey`, `RowKey` and `Timestamp` are
/// addressable like custom properties.
pub fn eval(expr: &Expr, entity: &Entity) -> bool {
    eval_row(expr, entity)
}

/// Evaluates `expr` against any [`Row`].
pub fn eval_row(expr: &Expr, row: &dyn Row) -> bool {
    eval_with(expr, &|name| match name {
        "PartitionKey" => Some(Value::Str(row.partition_key())),
        "RowKey" => Some(Value::Str(row.row_key())),
        "Timestamp" => Some(Value::Ticks(row.timestamp())),
        _ => row.property(name).map(Value::Edm),
    })
}

/// Evaluates a Query Tables `$filter`, where the only property is `TableName`.
pub fn eval_table_name(expr: &Expr, table_name: &str) -> bool {
    eval_with(expr, &|name| (name == "TableName").then_some(Value::Str(table_name)))
}

/// A property value as the evaluator sees it, borrowed where possible.
#[derive(Debug, Clone, Copy)]
pub(super) enum Value<'a> {
    Str(&'a str),
    /// A key's UTF-8 bytes, unchecked ([`Row::partition_key_bytes`]).
    Key(&'a [u8]),
    Ticks(Ticks),
    Edm(EdmRef<'a>),
}

fn eval_with<'a>(expr: &Expr, lookup: &dyn Fn(&str) -> Option<Value<'a>>) -> bool {
    match expr {
        Expr::Compare { property, op, value } => match lookup(property) {
            None => false,
            Some(v) => apply(*op, compare(v, value)),
        },
        Expr::Property(name) => matches!(lookup(name), Some(Value::Edm(EdmRef::Boolean(true)))),
        Expr::Bool(b) => *b,
        Expr::Not(inner) => !eval_with(inner, lookup),
        Expr::And(a, b) => eval_with(a, lookup) && eval_with(b, lookup),
        Expr::Or(a, b) => eval_with(a, lookup) || eval_with(b, lookup),
    }
}

/// The result of comparing a present property with a literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Different Edm types.
    Mismatch,
    /// Same type but no order (a NaN is involved).
    Unordered,
    Ordered(Ordering),
}

pub(super) fn apply(op: CmpOp, outcome: Outcome) -> bool {
    match outcome {
        Outcome::Mismatch | Outcome::Unordered => op == CmpOp::Ne,
        Outcome::Ordered(o) => match op {
            CmpOp::Eq => o.is_eq(),
            CmpOp::Ne => o.is_ne(),
            CmpOp::Gt => o.is_gt(),
            CmpOp::Ge => o.is_ge(),
            CmpOp::Lt => o.is_lt(),
            CmpOp::Le => o.is_le(),
        },
    }
}

/// The outcomes an operator accepts, one bit each, so that a filter compiled for many
/// rows tests a comparison's outcome with a mask ([`super::Compiled`]); the same
/// answers as [`apply`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Accept(u8);

impl Accept {
    const LESS: u8 = 1;
    const EQUAL: u8 = 2;
    const GREATER: u8 = 4;
    /// A type mismatch or an unordered pair (a NaN).
    const OTHER: u8 = 8;

    pub(super) fn of(op: CmpOp) -> Accept {
        Accept(match op {
            CmpOp::Eq => Self::EQUAL,
            CmpOp::Ne => Self::LESS | Self::GREATER | Self::OTHER,
            CmpOp::Gt => Self::GREATER,
            CmpOp::Ge => Self::GREATER | Self::EQUAL,
            CmpOp::Lt => Self::LESS,
            CmpOp::Le => Self::LESS | Self::EQUAL,
        })
    }

    #[inline]
    pub(super) fn takes(self, outcome: Outcome) -> bool {
        let bit = match outcome {
            Outcome::Ordered(Ordering::Less) => Self::LESS,
            Outcome::Ordered(Ordering::Equal) => Self::EQUAL,
            Outcome::Ordered(Ordering::Greater) => Self::GREATER,
            Outcome::Mismatch | Outcome::Unordered => Self::OTHER,
        };
        self.0 & bit != 0
    }
}

/// Compares a property value (left) with a literal (right).
pub(super) fn compare(prop: Value<'_>, lit: &EdmValue) -> Outcome {
    match (prop, lit) {
        (Value::Str(a), EdmValue::String(b)) => Outcome::Ordered(utf16_cmp(a, b)),
        (Value::Key(a), EdmValue::String(b)) => Outcome::Ordered(utf16_cmp_bytes(a, b.as_bytes())),
        (Value::Ticks(a), EdmValue::DateTime(b)) => Outcome::Ordered(a.cmp(b)),
        (Value::Str(_) | Value::Key(_) | Value::Ticks(_), _) => Outcome::Mismatch,
        (Value::Edm(p), _) => compare_edm(p, lit),
    }
}

/// [`compare`] for a custom property's value.
#[inline]
pub(super) fn compare_edm(prop: EdmRef<'_>, lit: &EdmValue) -> Outcome {
    use EdmRef as R;
    use EdmValue as V;
    let ord = |o: Ordering| Outcome::Ordered(o);
    match (prop, lit) {
        (R::Int32(a), V::Int32(b)) => ord(a.cmp(b)),
        (R::Int64(a), V::Int64(b)) => ord(a.cmp(b)),
        (R::Double(a), V::Double(b)) => a.partial_cmp(b).map_or(Outcome::Unordered, ord),
        (R::DateTime(a), V::DateTime(b)) => ord(a.cmp(b)),
        (R::String(a), V::String(b)) => ord(utf16_cmp(a, b)),
        (R::Boolean(a), V::Boolean(b)) => ord(a.cmp(b)),
        // Bytes in RFC 4122 order sort exactly like the lowercase hyphenated text.
        (R::Guid(a), V::Guid(b)) => ord(a.cmp(b)),
        (R::Binary(a), V::Binary(b)) => ord(a.cmp(b.as_slice())),
        _ => Outcome::Mismatch,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aztable_model::edm::{format_guid, parse_guid};

    #[test]
    fn guid_byte_order_is_text_order() {
        let a = parse_guid("0000000a-0000-0000-0000-000000000000").unwrap();
        let b = parse_guid("00000009-ffff-0000-0000-000000000000").unwrap();
        assert_eq!(a.cmp(&b), format_guid(&a).cmp(&format_guid(&b)));
        assert_eq!(a.cmp(&b), Ordering::Greater);
    }

    #[test]
    fn masks_accept_what_the_operators_accept() {
        let outcomes = [
            Outcome::Mismatch,
            Outcome::Unordered,
            Outcome::Ordered(Ordering::Less),
            Outcome::Ordered(Ordering::Equal),
            Outcome::Ordered(Ordering::Greater),
        ];
        for op in CmpOp::ALL {
            for o in outcomes {
                assert_eq!(Accept::of(op).takes(o), apply(op, o), "{op:?} {o:?}");
            }
        }
    }

    #[test]
    fn outcomes() {
        assert!(apply(CmpOp::Ne, Outcome::Mismatch));
        assert!(!apply(CmpOp::Eq, Outcome::Mismatch));
        assert!(!apply(CmpOp::Le, Outcome::Unordered));
        assert!(apply(CmpOp::Ne, Outcome::Unordered));
        assert!(apply(CmpOp::Ge, Outcome::Ordered(Ordering::Equal)));
        assert!(!apply(CmpOp::Gt, Outcome::Ordered(Ordering::Equal)));
    }
}
