//! Narrows a query's scan to a few (PartitionKey, RowKey) ranges. The ranges hold
//! every match, not only matches: [`crate::filter::eval()`] still runs on every
//! scanned entity.
//!
//! [`plan_ranges`] is the main entry: a sorted list of disjoint ranges (at most
//! [`MAX_RANGES`]), so `PartitionKey eq 'a' or PartitionKey eq 'z'` scans two
//! partitions, not everything between. [`plan`] is their hull, one range.
//!
//! Each sub-expression is summarised as a union of *terms* `range ∩ rows`, where
//! `range` is a tuple range and `rows` a RowKey interval that holds in every partition:
//!
//! - `PartitionKey op 's'` narrows `range`; `RowKey op 's'` narrows `rows`; `ne` is the
//!   union of `lt` and `gt`. The same comparisons with a non-string constant can never
//!   be true, so they give nothing (except `ne`, which is always true for them).
//! - `not` is pushed down to the comparisons (De Morgan; `not (PartitionKey lt 'a')`
//!   is `PartitionKey ge 'a'`, as keys are always present strings). Other properties
//!   and bare properties give "everything", in either polarity; `true` / `false`
//!   give everything / nothing.
//! - `or` concatenates the terms, `and` intersects them pairwise. A union of more than
//!   `MAX_TERMS` terms collapses into their hull (the hull of the ranges ∩ the hull of
//!   the rows), so the work stays bounded whatever the filter.
//! - At the end, each term's `rows` tightens the bounds of its `range` in the partition
//!   each bound lies in: rows of `PartitionKey ge 'a' and RowKey ge 'm'` start at
//!   `('a', 'm')`. So `PartitionKey eq 'a' and RowKey ge 'm' and RowKey lt 'n'` scans
//!   inside partition `a` from `m` to before `n`, while RowKey conditions alone leave
//!   the scan unbounded. Then the ranges are sorted, overlapping or touching ones are
//!   merged, and more than [`MAX_RANGES`] collapse into their hull.
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

    /// Whether every row of the range sorts before the row (pk, rk), so that a scan
    /// resuming at (pk, rk) can skip the range.
    pub fn ends_before(&self, pk: &str, rk: &str) -> bool {
        self.upper.as_ref().is_some_and(|b| b.upper_cut().row_vs(pk, rk).is_gt())
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

/// Most ranges [`plan_ranges`] returns; more collapse into their hull.
pub const MAX_RANGES: usize = 32;

/// Most terms a sub-expression's union keeps; more collapse into their hull.
const MAX_TERMS: usize = 64;

/// Rows in `range ∩ rows`: one term of a sub-expression's union.
#[derive(Debug, Clone)]
struct Term {
    range: KeyRange,
    rows: Rows,
}

impl Term {
    fn all() -> Term {
        Term { range: KeyRange::unbounded(), rows: Rows::default() }
    }

    fn is_empty(&self) -> bool {
        self.range.is_empty() || self.rows.is_empty()
    }

    fn intersect(&self, other: &Term) -> Term {
        Term {
            range: self.range.clone().intersect(other.range.clone()),
            rows: self.rows.clone().intersect(other.rows.clone()),
        }
    }

    /// A term holding both (the hull of the ranges ∩ the hull of the rows).
    fn hull(self, other: Term) -> Term {
        Term { range: self.range.hull(other.range), rows: self.rows.hull(other.rows) }
    }

    /// The tuple range of the term: `rows` tightens the bounds of `range` in the
    /// partitions they lie in.
    fn into_range(self) -> KeyRange {
        if self.is_empty() {
            return KeyRange::empty();
        }
        let (mut range, rows) = (self.range, self.rows);
        if let Some(l) = &range.lower {
            range = range.clone().intersect(KeyRange { lower: rows.within(&l.pk).lower, upper: None });
        }
        if let Some(u) = &range.upper {
            range = range.clone().intersect(KeyRange { lower: None, upper: rows.within(&u.pk).upper });
        }
        if range.is_empty() {
            return KeyRange::empty();
        }
        range
    }
}

/// Computes the key ranges a scan for `expr` must cover: sorted, disjoint, none of
/// them provably empty, at most [`MAX_RANGES`]. No range at all means no entity can
/// match; `[KeyRange::unbounded()]` means the whole table.
pub fn plan_ranges(expr: &Expr) -> Vec<KeyRange> {
    let mut ranges: Vec<KeyRange> =
        summarise(expr, false).into_iter().map(Term::into_range).filter(|r| !r.is_empty()).collect();
    ranges.sort_by(|a, b| match (&a.lower, &b.lower) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => a.lower_cut().order(&b.lower_cut()),
    });
    let mut out: Vec<KeyRange> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if reaches(last, &r) => {
                let further = match (&last.upper, &r.upper) {
                    (None, _) => false,
                    (Some(_), None) => true,
                    (Some(a), Some(b)) => b.upper_cut().order(&a.upper_cut()).is_gt(),
                };
                if further {
                    last.upper = r.upper;
                }
            }
            _ => out.push(r),
        }
    }
    if out.len() > MAX_RANGES {
        return vec![out.into_iter().fold(KeyRange::empty(), KeyRange::hull)];
    }
    out
}

/// Whether `next` (which starts no earlier than `last`) overlaps or touches `last`, so
/// that their union is one range.
fn reaches(last: &KeyRange, next: &KeyRange) -> bool {
    match (&last.upper, &next.lower) {
        (None, _) | (_, None) => true,
        (Some(u), Some(l)) => l.lower_cut().order(&u.upper_cut()).is_le(),
    }
}

/// Computes the single key range a scan for `expr` must cover: the hull of
/// [`plan_ranges`] ([`KeyRange::empty`] when there is none).
pub fn plan(expr: &Expr) -> KeyRange {
    plan_ranges(expr).into_iter().fold(KeyRange::empty(), KeyRange::hull)
}

/// The union of terms holding every match of `expr` (of `not expr` when `negated`).
/// An empty list means nothing matches.
fn summarise(expr: &Expr, negated: bool) -> Vec<Term> {
    let all = || vec![Term::all()];
    match expr {
        Expr::Compare { property, op, value } => match property.as_str() {
            "PartitionKey" | "RowKey" => {
                let EdmValue::String(s) = value else {
                    // Never true for a string key, except `ne`.
                    return if (*op == CmpOp::Ne) != negated { all() } else { Vec::new() };
                };
                let op = if negated { negate(*op) } else { *op };
                let ops: &[CmpOp] = if op == CmpOp::Ne { &[CmpOp::Lt, CmpOp::Gt] } else { &[op] };
                ops.iter().map(|&op| key_term(property == "PartitionKey", op, s)).collect()
            }
            _ => all(),
        },
        Expr::Bool(b) => {
            if *b != negated {
                all()
            } else {
                Vec::new()
            }
        }
        Expr::Property(_) => all(),
        Expr::Not(inner) => summarise(inner, !negated),
        Expr::And(a, b) | Expr::Or(a, b) => {
            let (a, b) = (summarise(a, negated), summarise(b, negated));
            // `not (a and b)` is `not a or not b`, and the other way round.
            if matches!(expr, Expr::And(..)) != negated {
                let pairs = a.iter().flat_map(|x| b.iter().map(|y| x.intersect(y)));
                collapse(pairs.filter(|t| !t.is_empty()).collect())
            } else {
                collapse(a.into_iter().chain(b).collect())
            }
        }
    }
}

/// Keeps a union small: more than [`MAX_TERMS`] terms become their hull.
fn collapse(mut terms: Vec<Term>) -> Vec<Term> {
    terms.retain(|t| !t.is_empty());
    if terms.len() <= MAX_TERMS {
        return terms;
    }
    let mut it = terms.into_iter();
    it.next().map(|first| it.fold(first, Term::hull)).into_iter().collect()
}

/// The term of `PartitionKey op s` (`partition`) or `RowKey op s`; `op` is not `ne`.
fn key_term(partition: bool, op: CmpOp, s: &str) -> Term {
    let rows = key_interval(op, s);
    if !partition {
        return Term { range: KeyRange::unbounded(), rows };
    }
    let bound = |b: Option<(String, bool)>| b.map(|(pk, inclusive)| KeyBound { pk, rk: None, inclusive });
    Term { range: KeyRange { lower: bound(rows.lower), upper: bound(rows.upper) }, rows: Rows::default() }
}

/// The operator of `not (P op s)` for a property that is always present with the
/// literal's type (a key compared with a string).
fn negate(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Eq => CmpOp::Ne,
        CmpOp::Ne => CmpOp::Eq,
        CmpOp::Gt => CmpOp::Le,
        CmpOp::Ge => CmpOp::Lt,
        CmpOp::Lt => CmpOp::Ge,
        CmpOp::Le => CmpOp::Gt,
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
