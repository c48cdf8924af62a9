//! Narrows a query's scan to a (PartitionKey, RowKey) range. The range is a superset
//! of the matches: [`crate::filter::eval()`] still runs on every scanned entity.
//!
//! Each sub-expression is summarised as `range ∩ rows`, where `range` is a tuple range
//! and `rows` a RowKey interval that holds in every partition:
//!
//! - `PartitionKey op 's'` narrows `range`; `RowKey op 's'` narrows `rows`. The same
//!   comparisons with a non-string constant can never be true, so they give the empty
//!   set (except `ne`, which is true for them).
//! - `and` intersects both parts; `or` takes the hull of each (a superset of the
//!   union); `not`, other properties and bare properties give "everything", `false`
//!   gives nothing.
//! - At the end, `rows` tightens the bounds of `range` in the partition each bound
//!   lies in: rows of `PartitionKey ge 'a' and RowKey ge 'm'` start at `('a', 'm')`.
//!   So `PartitionKey eq 'a' and RowKey ge 'm' and RowKey lt 'n'` scans inside
//!   partition `a` from `m` to before `n`, while RowKey conditions alone leave the
//!   scan unbounded.
//!
//! Strings are ordered by UTF-16 code units, like the store.

use super::ast::{CmpOp, Expr};
use super::eval::utf16_cmp;
use crate::model::EdmValue;
use std::cmp::Ordering;

/// One end of a [`KeyRange`]. `rk: None` stands for a whole partition: as a lower bound
/// `{pk, None, inclusive: true}` starts at the first row of `pk` and `{pk, None, false}`
/// after its last row; as an upper bound `{pk, None, true}` ends with the last row of
/// `pk` and `{pk, None, false}` before its first row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyBound {
    pub pk: String,
    pub rk: Option<String>,
    pub inclusive: bool,
}

/// A range of (PartitionKey, RowKey) tuples; `None` means unbounded on that side.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyRange {
    pub lower: Option<KeyBound>,
    pub upper: Option<KeyBound>,
}

/// Where a bound cuts the ordered sequence of rows; rows lie strictly between cuts.
#[derive(Debug, Clone, Copy)]
enum Place<'a> {
    /// Before every row of the partition.
    Start,
    /// Just before / just after the row with this RowKey.
    Before(&'a str),
    After(&'a str),
    /// After every row of the partition.
    End,
}

#[derive(Debug, Clone, Copy)]
struct Cut<'a> {
    pk: &'a str,
    place: Place<'a>,
}

impl Place<'_> {
    /// Orders cuts inside one partition.
    fn order(self, other: Place<'_>) -> Ordering {
        fn rank(p: Place<'_>) -> u8 {
            match p {
                Place::Start => 0,
                Place::Before(_) | Place::After(_) => 1,
                Place::End => 2,
            }
        }
        match (self, other) {
            (Place::Before(a) | Place::After(a), Place::Before(b) | Place::After(b)) => {
                let side = |p: Place<'_>| u8::from(matches!(p, Place::After(_)));
                utf16_cmp(a, b).then(side(self).cmp(&side(other)))
            }
            _ => rank(self).cmp(&rank(other)),
        }
    }
}

impl Cut<'_> {
    fn order(&self, other: &Cut<'_>) -> Ordering {
        utf16_cmp(self.pk, other.pk).then_with(|| self.place.order(other.place))
    }

    /// Where the row (pk, rk) lies relative to this cut: `Greater` = after it.
    fn row_vs(&self, pk: &str, rk: &str) -> Ordering {
        utf16_cmp(pk, self.pk).then_with(|| match self.place {
            Place::Start => Ordering::Greater,
            Place::End => Ordering::Less,
            Place::Before(r) => {
                if utf16_cmp(rk, r).is_ge() {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            Place::After(r) => {
                if utf16_cmp(rk, r).is_gt() {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
        })
    }
}

impl KeyBound {
    fn place(&self, as_lower: bool) -> Place<'_> {
        match (&self.rk, self.inclusive == as_lower) {
            // "Before the row ''" is the start of the partition: '' is the smallest key.
            (Some(r), true) if r.is_empty() => Place::Start,
            (Some(r), true) => Place::Before(r),
            (Some(r), false) => Place::After(r),
            (None, true) => Place::Start,
            (None, false) => Place::End,
        }
    }

    fn lower_cut(&self) -> Cut<'_> {
        Cut { pk: &self.pk, place: self.place(true) }
    }

    fn upper_cut(&self) -> Cut<'_> {
        Cut { pk: &self.pk, place: self.place(false) }
    }
}

impl KeyRange {
    /// Every row.
    pub fn unbounded() -> KeyRange {
        KeyRange::default()
    }

    /// No row at all.
    pub fn empty() -> KeyRange {
        let bound = |inclusive| Some(KeyBound { pk: String::new(), rk: None, inclusive });
        KeyRange { lower: bound(true), upper: bound(false) }
    }

    /// Whether the row (pk, rk) lies inside the range.
    pub fn contains(&self, pk: &str, rk: &str) -> bool {
        self.lower.as_ref().is_none_or(|b| b.lower_cut().row_vs(pk, rk).is_gt())
            && self.upper.as_ref().is_none_or(|b| b.upper_cut().row_vs(pk, rk).is_lt())
    }

    /// Whether the range provably holds no row (its lower end is not below its upper).
    pub fn is_empty(&self) -> bool {
        // The first possible row is ('', ''), so an unbounded lower end acts like
        // "before the start of partition ''".
        let first = Cut { pk: "", place: Place::Start };
        match (&self.lower, &self.upper) {
            (Some(l), Some(u)) => l.lower_cut().order(&u.upper_cut()).is_ge(),
            (None, Some(u)) => first.order(&u.upper_cut()).is_ge(),
            _ => false,
        }
    }

    /// Whether both ends are open.
    pub fn is_unbounded(&self) -> bool {
        self.lower.is_none() && self.upper.is_none()
    }

    /// The partition every row of the range belongs to, if there is a single one.
    pub fn single_partition(&self) -> Option<&str> {
        let (l, u) = (self.lower.as_ref()?, self.upper.as_ref()?);
        let inside = l.pk == u.pk
            && !matches!(l.lower_cut().place, Place::End)
            && !matches!(u.upper_cut().place, Place::Start);
        inside.then_some(l.pk.as_str())
    }

    /// The intersection of two ranges.
    pub fn intersect(self, other: KeyRange) -> KeyRange {
        let lower = pick(self.lower, other.lower, |a, b| a.lower_cut().order(&b.lower_cut()).is_ge());
        let upper = pick(self.upper, other.upper, |a, b| a.upper_cut().order(&b.upper_cut()).is_le());
        KeyRange { lower, upper }
    }

    /// The smallest range holding both ranges (their hull).
    pub fn hull(self, other: KeyRange) -> KeyRange {
        if self.is_empty() {
            return other;
        }
        if other.is_empty() {
            return self;
        }
        let lower = match (self.lower, other.lower) {
            (Some(a), Some(b)) => Some(if a.lower_cut().order(&b.lower_cut()).is_le() { a } else { b }),
            _ => None,
        };
        let upper = match (self.upper, other.upper) {
            (Some(a), Some(b)) => Some(if a.upper_cut().order(&b.upper_cut()).is_ge() { a } else { b }),
            _ => None,
        };
        KeyRange { lower, upper }
    }
}

/// For an intersection: the tighter of two optional bounds (`keep_a(a, b)` says `a` is).
fn pick(
    a: Option<KeyBound>,
    b: Option<KeyBound>,
    keep_a: impl Fn(&KeyBound, &KeyBound) -> bool,
) -> Option<KeyBound> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if keep_a(&a, &b) { a } else { b }),
        (a, None) => a,
        (None, b) => b,
    }
}

/// A RowKey interval that applies in every partition.
#[derive(Debug, Clone, Default)]
struct Rows {
    lower: Option<(String, bool)>,
    upper: Option<(String, bool)>,
}

impl Rows {
    /// The same interval as a tuple range inside partition `pk`.
    fn within(&self, pk: &str) -> KeyRange {
        let bound = |b: &Option<(String, bool)>| {
            b.as_ref().map(|(rk, inclusive)| KeyBound {
                pk: pk.to_string(),
                rk: Some(rk.clone()),
                inclusive: *inclusive,
            })
        };
        KeyRange { lower: bound(&self.lower), upper: bound(&self.upper) }
    }

    fn is_empty(&self) -> bool {
        self.within("").is_empty()
    }

    fn intersect(self, other: Rows) -> Rows {
        let r = self.within("").intersect(other.within(""));
        Rows::from_range(r)
    }

    fn hull(self, other: Rows) -> Rows {
        Rows::from_range(self.within("").hull(other.within("")))
    }

    fn from_range(r: KeyRange) -> Rows {
        let back = |b: Option<KeyBound>| b.and_then(|b| b.rk.map(|rk| (rk, b.inclusive)));
        Rows { lower: back(r.lower), upper: back(r.upper) }
    }
}

/// The summary of a sub-expression: its matches lie in `range ∩ rows`.
struct Summary {
    range: KeyRange,
    rows: Rows,
}

impl Summary {
    fn all() -> Summary {
        Summary { range: KeyRange::unbounded(), rows: Rows::default() }
    }

    fn none() -> Summary {
        Summary { range: KeyRange::empty(), rows: Rows::default() }
    }
}

/// Computes the key range a scan for `expr` must cover.
pub fn plan(expr: &Expr) -> KeyRange {
    let s = summarise(expr);
    if s.range.is_empty() || s.rows.is_empty() {
        return KeyRange::empty();
    }
    let mut range = s.range;
    if let Some(l) = &range.lower {
        range = range.clone().intersect(KeyRange { lower: s.rows.within(&l.pk).lower, upper: None });
    }
    if let Some(u) = &range.upper {
        range = range.clone().intersect(KeyRange { lower: None, upper: s.rows.within(&u.pk).upper });
    }
    if range.is_empty() {
        return KeyRange::empty();
    }
    range
}

fn summarise(expr: &Expr) -> Summary {
    match expr {
        Expr::Compare { property, op, value } => match property.as_str() {
            "PartitionKey" | "RowKey" => {
                let EdmValue::String(s) = value else {
                    // Never true for a string key, except `ne`.
                    return if *op == CmpOp::Ne { Summary::all() } else { Summary::none() };
                };
                let rows = key_interval(*op, s);
                if property == "RowKey" {
                    return Summary { range: KeyRange::unbounded(), rows };
                }
                let bound =
                    |b: Option<(String, bool)>| b.map(|(pk, inclusive)| KeyBound { pk, rk: None, inclusive });
                Summary {
                    range: KeyRange { lower: bound(rows.lower), upper: bound(rows.upper) },
                    rows: Rows::default(),
                }
            }
            _ => Summary::all(),
        },
        Expr::Bool(false) => Summary::none(),
        Expr::Bool(true) | Expr::Property(_) | Expr::Not(_) => Summary::all(),
        Expr::And(a, b) => {
            let (a, b) = (summarise(a), summarise(b));
            Summary { range: a.range.intersect(b.range), rows: a.rows.intersect(b.rows) }
        }
        Expr::Or(a, b) => {
            let (a, b) = (summarise(a), summarise(b));
            if a.range.is_empty() || a.rows.is_empty() {
                return b;
            }
            if b.range.is_empty() || b.rows.is_empty() {
                return a;
            }
            Summary { range: a.range.hull(b.range), rows: a.rows.hull(b.rows) }
        }
    }
}

/// The interval of key values `op s` accepts (`ne` accepts everything it can express).
fn key_interval(op: CmpOp, s: &str) -> Rows {
    let b = |inclusive| Some((s.to_string(), inclusive));
    match op {
        CmpOp::Eq => Rows { lower: b(true), upper: b(true) },
        CmpOp::Ne => Rows::default(),
        CmpOp::Gt => Rows { lower: b(false), upper: None },
        CmpOp::Ge => Rows { lower: b(true), upper: None },
        CmpOp::Lt => Rows { lower: None, upper: b(false) },
        CmpOp::Le => Rows { lower: None, upper: b(true) },
    }
}
