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
//!   the rows), and an `and` whose sides would make more than `MAX_PAIRS` pairs first
//!   collapses its larger side, so the work stays linear in the filter's size. A filter
//!   of a few hundred key equalities (Orleans' grain directory sends one `PartitionKey
//!   eq … and (RowKey eq … or …)` of about 200 comparisons) still plans to point ranges.
//! - At the end, each term's `rows` tightens the bounds of its `range` in the partition
//!   each bound lies in: rows of `PartitionKey ge 'a' and RowKey ge 'm'` start at
//!   `('a', 'm')`. So `PartitionKey eq 'a' and RowKey ge 'm' and RowKey lt 'n'` scans
//!   inside partition `a` from `m` to before `n`, while RowKey conditions alone leave
//!   the scan unbounded. Then the ranges are sorted, overlapping or touching ones are
//!   merged, and more than [`MAX_RANGES`] collapse into their hull.
//!
//! Strings are ordered by UTF-16 code units, like the store.

use super::ast::{CmpOp, Expr};
use aztable_model::key_range::{KeyBound, KeyRange};
use aztable_model::EdmValue;
use std::cmp::Ordering;

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
pub const MAX_RANGES: usize = 256;

/// Most terms a sub-expression's union keeps; more collapse into their hull.
const MAX_TERMS: usize = 256;

/// Most pairs an `and` intersects; beyond, its larger side collapses into its hull.
const MAX_PAIRS: usize = 4096;

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
    union(summarise(expr, false).into_iter().map(Term::into_range).collect())
}

/// The union of `ranges`: sorted, disjoint, none touching the next (at most
/// [`MAX_RANGES`]; more collapse into their hull).
fn union(ranges: Vec<KeyRange>) -> Vec<KeyRange> {
    let mut ranges: Vec<KeyRange> = ranges.into_iter().filter(|r| !r.is_empty()).collect();
    ranges.sort_by(|a, b| match (&a.lower, &b.lower) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => a.cmp_as_lower(b),
    });
    let mut out: Vec<KeyRange> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if reaches(last, &r) => {
                let further = match (&last.upper, &r.upper) {
                    (None, _) => false,
                    (Some(_), None) => true,
                    (Some(a), Some(b)) => b.cmp_as_upper(a).is_gt(),
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
        (Some(u), Some(l)) => l.cmp_lower_to_upper(u).is_le(),
    }
}

/// A RowKey interval: its bounds, each with whether it is included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowKeys {
    pub lower: Option<(String, bool)>,
    pub upper: Option<(String, bool)>,
}

/// The RowKey intervals every match of `expr` lies in, in every partition: the union
/// of its terms' RowKey intervals, sorted and disjoint (at most [`MAX_RANGES`], else
/// their hull). `None` when they bound no RowKey, or nothing matches. `RowKey eq 'x' or
/// RowKey eq 'y'` with no PartitionKey condition plans to the whole table; this lets a
/// scan seek past each partition's other rows.
pub fn plan_row_keys(expr: &Expr) -> Option<Vec<RowKeys>> {
    let terms = summarise(expr, false).into_iter().filter(|t| !t.is_empty());
    let intervals: Vec<RowKeys> = union(terms.map(|t| t.rows.within("")).collect())
        .into_iter()
        .map(|r| {
            let rows = Rows::from_range(r);
            RowKeys { lower: rows.lower, upper: rows.upper }
        })
        .collect();
    match intervals.as_slice() {
        [] | [RowKeys { lower: None, upper: None }] => None,
        _ => Some(intervals),
    }
}

/// Computes the single key range a scan for `expr` must cover: the hull of
/// [`plan_ranges`] ([`KeyRange::empty`] when there is none).
pub fn plan(expr: &Expr) -> KeyRange {
    plan_ranges(expr).into_iter().fold(KeyRange::empty(), KeyRange::hull)
}

/// The union of terms holding every match of `expr` (of `not expr` when `negated`).
/// An empty list means nothing matches.
///
/// Recursive, over trees as deep as the parser allows (a chain of 500 comparisons):
/// the work of each node is in functions kept out of line, so that each level's frame
/// stays small in an optimised build too.
fn summarise(expr: &Expr, negated: bool) -> Vec<Term> {
    match expr {
        Expr::Compare { property, op, value } => compare_terms(property, *op, value, negated),
        Expr::Bool(b) => match *b != negated {
            true => vec![Term::all()],
            false => Vec::new(),
        },
        Expr::Property(_) => vec![Term::all()],
        Expr::Not(inner) => summarise(inner, !negated),
        Expr::And(a, b) | Expr::Or(a, b) => {
            let (a, b) = (summarise(a, negated), summarise(b, negated));
            // `not (a and b)` is `not a or not b`, and the other way round.
            combine(a, b, matches!(expr, Expr::And(..)) != negated)
        }
    }
}

/// The terms of `property op value` (of its negation when `negated`).
#[inline(never)]
fn compare_terms(property: &str, op: CmpOp, value: &EdmValue, negated: bool) -> Vec<Term> {
    let all = || vec![Term::all()];
    match property {
        "PartitionKey" | "RowKey" => {
            let EdmValue::String(s) = value else {
                // Never true for a string key, except `ne`.
                return if (op == CmpOp::Ne) != negated { all() } else { Vec::new() };
            };
            let op = if negated { negate(op) } else { op };
            let ops: &[CmpOp] = if op == CmpOp::Ne { &[CmpOp::Lt, CmpOp::Gt] } else { &[op] };
            ops.iter().map(|&op| key_term(property == "PartitionKey", op, s)).collect()
        }
        _ => all(),
    }
}

/// The intersection (`both`) or the union of two unions of terms.
#[inline(never)]
fn combine(mut a: Vec<Term>, mut b: Vec<Term>, both: bool) -> Vec<Term> {
    if !both {
        a.append(&mut b);
        return collapse(a);
    }
    while a.len() * b.len() > MAX_PAIRS {
        let larger = if a.len() >= b.len() { &mut a } else { &mut b };
        *larger = hull_of(std::mem::take(larger));
    }
    let pairs = a.iter().flat_map(|x| b.iter().map(|y| x.intersect(y)));
    collapse(pairs.filter(|t| !t.is_empty()).collect())
}

/// Keeps a union small: more than [`MAX_TERMS`] terms become their hull.
fn collapse(mut terms: Vec<Term>) -> Vec<Term> {
    terms.retain(|t| !t.is_empty());
    if terms.len() <= MAX_TERMS {
        return terms;
    }
    hull_of(terms)
}

/// One term holding all of `terms` (none for none).
fn hull_of(terms: Vec<Term>) -> Vec<Term> {
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
