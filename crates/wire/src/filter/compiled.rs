//! A `$filter` prepared for evaluating many rows ([`Compiled`]): every custom property
//! is resolved once to its position in [`Compiled::names`], so a row that holds the
//! properties it was projected for by position (a scan's projection of stored bytes)
//! is read without comparing names. Evaluates exactly as [`super::eval_row`].

use super::ast::{CmpOp, Expr};
use super::columnar::Test;
use super::eval::{compare_edm, Accept, Value};
use aztable_model::{EdmValue, Row};

/// A `$filter` with its property names resolved.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub(super) root: Node,
    names: Vec<String>,
    reads_keys: bool,
}

/// What every matching row satisfies ([`Compiled::requirement`]): the conditions a
/// table's value summary records, joined as in the filter.
#[derive(Debug, Clone, PartialEq)]
pub enum Requirement<'a> {
    /// The custom property `name` holds the String `value`.
    Equals { name: &'a str, value: &'a str },
    /// The property `name` (`None`: Timestamp) holds a value of `value`'s type that
    /// compares with it as `op` asks.
    Compares { name: Option<&'a str>, op: CmpOp, value: &'a EdmValue },
    /// Every one of these holds.
    All(Vec<Requirement<'a>>),
    /// At least one of these holds.
    Any(Vec<Requirement<'a>>),
}

impl<'a> Requirement<'a> {
    /// The longest (the first of them) `P eq 'value'` every match holds: this one, or
    /// one of an `All`'s parts (the filter's top-level `and`s), as (name, value).
    pub fn required_equals(&self) -> Option<(&'a str, &'a str)> {
        let equals = |r: &Requirement<'a>| match r {
            Requirement::Equals { name, value } => Some((*name, *value)),
            _ => None,
        };
        match self {
            Requirement::All(parts) => {
                parts.iter().filter_map(equals).fold(None, |best, (name, value)| match best {
                    Some((_, b)) if b.len() >= value.len() => best,
                    _ => Some((name, value)),
                })
            }
            one => equals(one),
        }
    }
}

/// What every match of `node` satisfies (see [`Requirement`]). A chain of `and`s or of
/// `or`s (a tree as deep as its 500 comparisons) is walked with a list rather than by
/// recursion, so recursion only follows a change of operator, which takes parentheses
/// (at most [`super::MAX_DEPTH`]); nested parts of the chain's own kind are flattened.
fn requirement<'n>(node: &'n Node, names: &'n [String]) -> Option<Requirement<'n>> {
    let any = match node {
        Node::And(..) => false,
        Node::Or(..) => true,
        leaf => return leaf_requirement(leaf, names),
    };
    let mut parts = Vec::new();
    let mut pending = vec![node];
    while let Some(n) = pending.pop() {
        match (n, any) {
            (Node::And(a, b), false) | (Node::Or(a, b), true) => pending.extend([b.as_ref(), a.as_ref()]),
            (operand, _) => match (requirement(operand, names), any) {
                (Some(Requirement::Any(inner)), true) | (Some(Requirement::All(inner)), false) => {
                    parts.extend(inner)
                }
                (Some(part), _) => parts.push(part),
                // an `or` of a part that says nothing says nothing; in an `and` it drops out
                (None, true) => return None,
                (None, false) => {}
            },
        }
    }
    match (parts.len(), any) {
        (0, _) => None,
        (1, false) => parts.pop(),
        (_, false) => Some(Requirement::All(parts)),
        (_, true) => Some(Requirement::Any(parts)),
    }
}

/// What a comparison says every match satisfies, if a value summary records it.
fn leaf_requirement<'n>(node: &'n Node, names: &'n [String]) -> Option<Requirement<'n>> {
    let dated = |v: &EdmValue| matches!(v, EdmValue::DateTime(_));
    match node {
        Node::StrEq { at: Operand::Custom(i), negated: false, value } => {
            Some(Requirement::Equals { name: names.get(*i)?, value })
        }
        Node::Compare { at, op, value, .. }
            if *op != CmpOp::Ne
                && matches!(
                    value,
                    EdmValue::Int32(_) | EdmValue::Int64(_) | EdmValue::Double(_) | EdmValue::DateTime(_)
                ) =>
        {
            let name = match at {
                Operand::Custom(i) => Some(names.get(*i)?.as_str()),
                Operand::Timestamp if dated(value) => None,
                _ => return None,
            };
            Some(Requirement::Compares { name, op: *op, value })
        }
        _ => None,
    }
}

/// What a comparison or bare property reads.
#[derive(Debug, Clone, Copy)]
pub(super) enum Operand {
    PartitionKey,
    RowKey,
    Timestamp,
    /// The custom property `names[i]`.
    Custom(usize),
}

#[derive(Debug, Clone)]
pub(super) enum Node {
    Compare {
        at: Operand,
        op: CmpOp,
        /// The outcomes `op` accepts.
        accept: Accept,
        value: EdmValue,
    },
    /// `eq` (`ne` when `negated`) with a string: equal strings are equal bytes, so no
    /// UTF-16 ordering is needed.
    StrEq {
        at: Operand,
        negated: bool,
        value: String,
    },
    Property(Operand),
    Bool(bool),
    Not(Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
}

impl Compiled {
    pub fn new(expr: &Expr) -> Compiled {
        let names = expr.property_names();
        let root = node(expr, &names);
        Compiled { root, names, reads_keys: expr.reads_keys() }
    }

    /// The custom properties the filter reads, each once ([`Expr::property_names`]):
    /// [`Row::property_at`] is asked for them by their position here.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether the filter reads `PartitionKey` or `RowKey`.
    pub fn reads_keys(&self) -> bool {
        self.reads_keys
    }

    /// A string no row matches the filter without: the longest `P eq 'value'` among the
    /// filter's top-level `and`s, `P` a custom property.
    pub fn required_string(&self) -> Option<&str> {
        self.required_property().map(|(_, value)| value)
    }

    /// [`Compiled::required_string`] with the property `P` that must hold it: (name,
    /// value).
    pub fn required_property(&self) -> Option<(&str, &str)> {
        self.requirement()?.required_equals()
    }

    /// What every row the filter matches satisfies, as far as a table's value summary
    /// can tell: its `P eq 'string'`s (`P` a custom property) and its `P op literal`s
    /// (`op` one of `eq`, `lt`, `le`, `gt`, `ge`; a number or date literal; `P` a custom
    /// property or Timestamp), joined as the filter joins them with `and` and `or`. A
    /// part that says nothing of the sort (`ne`, `not`, the keys, a bare property, a
    /// string ordered with `lt`) drops out of an `and` and makes an `or` say nothing;
    /// `None` when nothing is left. Each comparison is true only for a row holding `P`
    /// with the literal's own type, ordered as the operator asks.
    pub fn requirement(&self) -> Option<Requirement<'_>> {
        requirement(&self.root, &self.names)
    }

    /// Whether `row` matches.
    pub fn eval(&self, row: &dyn Row) -> bool {
        eval_node(&self.root, row, &self.names)
    }
}

fn node(expr: &Expr, names: &[String]) -> Node {
    let operand = |property: &str| match property {
        "PartitionKey" => Operand::PartitionKey,
        "RowKey" => Operand::RowKey,
        "Timestamp" => Operand::Timestamp,
        // (property_names lists every custom property the expression reads)
        _ => Operand::Custom(names.iter().position(|n| n == property).unwrap_or(usize::MAX)),
    };
    match expr {
        Expr::Compare { property, op: op @ (CmpOp::Eq | CmpOp::Ne), value: EdmValue::String(s) } => {
            Node::StrEq { at: operand(property), negated: *op == CmpOp::Ne, value: s.clone() }
        }
        Expr::Compare { property, op, value } => {
            Node::Compare { at: operand(property), op: *op, accept: Accept::of(*op), value: value.clone() }
        }
        Expr::Property(name) => Node::Property(operand(name)),
        Expr::Bool(b) => Node::Bool(*b),
        Expr::Not(inner) => Node::Not(Box::new(node(inner, names))),
        Expr::And(a, b) => Node::And(Box::new(node(a, names)), Box::new(node(b, names))),
        Expr::Or(a, b) => Node::Or(Box::new(node(a, names)), Box::new(node(b, names))),
    }
}

#[inline]
fn read<'r>(at: Operand, row: &'r dyn Row, names: &[String]) -> Option<Value<'r>> {
    match at {
        Operand::PartitionKey => Some(Value::Key(row.partition_key_bytes())),
        Operand::RowKey => Some(Value::Key(row.row_key_bytes())),
        Operand::Timestamp => Some(Value::Ticks(row.timestamp())),
        Operand::Custom(i) => row.property_at(i, names.get(i).map_or("", String::as_str)).map(Value::Edm),
    }
}

fn eval_node(node: &Node, row: &dyn Row, names: &[String]) -> bool {
    match node {
        // a custom property (most comparisons) without the system properties' wrapper
        Node::Compare { at: Operand::Custom(i), accept, value, .. } => {
            match row.property_at(*i, names.get(*i).map_or("", String::as_str)) {
                None => false,
                Some(p) => accept.takes(compare_edm(p, value)),
            }
        }
        Node::Compare { at, accept, value, .. } => {
            Test::Compare { accept: *accept, value }.takes(read(*at, row, names))
        }
        Node::StrEq { at, negated, value } => {
            Test::StrEq { negated: *negated, value }.takes(read(*at, row, names))
        }
        Node::Property(at) => Test::Property.takes(read(*at, row, names)),
        Node::Bool(b) => *b,
        Node::Not(inner) => !eval_node(inner, row, names),
        Node::And(a, b) => eval_node(a, row, names) && eval_node(b, row, names),
        Node::Or(a, b) => eval_node(a, row, names) || eval_node(b, row, names),
    }
}

#[cfg(test)]
mod tests {
    use super::Compiled;
    use crate::filter::parse;

    #[test]
    fn required_strings_come_from_top_level_ands_only() {
        let required =
            |f: &str| Compiled::new(&parse(f).expect("parses")).required_string().map(str::to_owned);
        assert_eq!(required("Tag eq 'needle'").as_deref(), Some("needle"));
        assert_eq!(required("A eq 'x' and (B gt 1 and Tag eq 'longer')").as_deref(), Some("longer"));
        let property = |f: &str| {
            let c = Compiled::new(&parse(f).expect("parses"));
            c.required_property().map(|(n, v)| (n.to_owned(), v.to_owned()))
        };
        assert_eq!(
            property("A eq 'x' and (B gt 1 and Tag eq 'longer')"),
            Some(("Tag".into(), "longer".into()))
        );
        assert_eq!(property("B gt 1 and A eq 'x'"), Some(("A".into(), "x".into())));
        for none in [
            "Tag ne 'needle'",
            "Tag eq 'needle' or B eq 'x'",
            "not (Tag eq 'needle')",
            "PartitionKey eq 'p'",
            "Tag eq 5",
            "Tag gt 'needle'",
        ] {
            assert_eq!(required(none), None, "{none}");
        }
    }

    /// The requirement's shape, written out: `P=v` for an Equals, `P op v` for a
    /// Compares (`ts` for Timestamp), `all(..)` and `any(..)`.
    fn shape(f: &str) -> Option<String> {
        use super::Requirement;
        fn show(r: &Requirement<'_>) -> String {
            let list = |rs: &[Requirement<'_>]| rs.iter().map(show).collect::<Vec<_>>().join(", ");
            match r {
                Requirement::Equals { name, value } => format!("{name}={value}"),
                Requirement::Compares { name, op, value } => {
                    format!("{} {op:?} {value:?}", name.unwrap_or("ts"))
                }
                Requirement::All(rs) => format!("all({})", list(rs)),
                Requirement::Any(rs) => format!("any({})", list(rs)),
            }
        }
        Compiled::new(&parse(f).expect("parses")).requirement().as_ref().map(show)
    }

    #[test]
    fn requirements_follow_the_filters_ands_and_ors() {
        assert_eq!(shape("Tag eq 'needle'").as_deref(), Some("Tag=needle"));
        assert_eq!(shape("A lt 5").as_deref(), Some("A Lt Int32(5)"));
        assert_eq!(
            shape("A lt 5 and (B ge 2.5 and Timestamp gt datetime'2024-01-01T00:00:00Z') and C eq 'x'")
                .as_deref(),
            Some("all(A Lt Int32(5), B Ge Double(2.5), ts Gt DateTime(Ticks(638396640000000000)), C=x)")
        );
        assert_eq!(shape("A lt 0 or A gt 100").as_deref(), Some("any(A Lt Int32(0), A Gt Int32(100))"));
        assert_eq!(
            shape("(A lt 0 or A gt 100 or T eq 'x') and B eq 'y'").as_deref(),
            Some("all(any(A Lt Int32(0), A Gt Int32(100), T=x), B=y)")
        );
        // a part that says nothing drops out of an `and`
        assert_eq!(shape("A ne 5 and B eq 'y'").as_deref(), Some("B=y"));
        assert_eq!(shape("(A lt 0 or C ne 1) and B eq 'y'").as_deref(), Some("B=y"));
        assert_eq!(shape("PartitionKey eq 'p' and A ge 2L").as_deref(), Some("A Ge Int64(2)"));
        // ... and makes an `or` say nothing
        for none in [
            "A ne 5",
            "A lt 5 or B ne 1",
            "not (A lt 5)",
            "not (A lt 5 or A gt 9)",
            "A eq true",
            "A lt 'x'",
            "Tag ne 'needle'",
            "PartitionKey gt 'a'",
            "Timestamp gt 5",
            "IsActive",
            "true",
            "A eq guid'00000000-0000-0000-0000-000000000000'",
            "Tag eq 'needle' or PartitionKey eq 'p'",
        ] {
            assert_eq!(shape(none), None, "{none}");
        }
    }
}
