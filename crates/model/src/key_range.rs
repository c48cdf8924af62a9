//! Positions and ranges in a table's key order, shared by the `$filter` planner, SAS key
//! ranges, the service's query loop and the partition layer's scans: one [`KeyRange`]
//! type for all of them.
//!
//! Keys order by UTF-16 code units ([`utf16_cmp`]), as the service orders them and as
//! the store's key encoding does: (PartitionKey, RowKey) tuples compare PartitionKey
//! first.

use std::cmp::Ordering;

/// Orders two strings by UTF-16 code units, as the service (and the store) orders keys.
/// This differs from `str`'s byte order only where a character above U+FFFF meets one
/// in U+E000..=U+FFFF.
pub fn utf16_cmp(a: &str, b: &str) -> Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    match x.iter().zip(y).position(|(p, q)| p != q) {
        // One is a prefix of the other (at a character boundary: both are UTF-8).
        None => x.len().cmp(&y.len()),
        // The first difference is between two ASCII characters.
        Some(i) if x[i] < 0x80 && y[i] < 0x80 => x[i].cmp(&y[i]),
        Some(_) => a.encode_utf16().cmp(b.encode_utf16()),
    }
}

/// [`utf16_cmp`] of two keys' UTF-8 bytes, which need not be checked: where the first
/// difference is not between two ASCII characters, both are read as UTF-8, and bytes
/// that are not UTF-8 order as bytes.
pub fn utf16_cmp_bytes(x: &[u8], y: &[u8]) -> Ordering {
    match x.iter().zip(y).position(|(p, q)| p != q) {
        None => x.len().cmp(&y.len()),
        Some(i) if x[i] < 0x80 && y[i] < 0x80 => x[i].cmp(&y[i]),
        Some(_) => match (std::str::from_utf8(x), std::str::from_utf8(y)) {
            (Ok(a), Ok(b)) => utf16_cmp(a, b),
            _ => x.cmp(y),
        },
    }
}

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

impl KeyBound {
    /// Orders two lower bounds: `Less` when `self` lets the range start earlier.
    pub fn cmp_as_lower(&self, other: &KeyBound) -> Ordering {
        self.lower_cut().order(&other.lower_cut())
    }

    /// Orders two upper bounds: `Less` when `self` ends the range earlier.
    pub fn cmp_as_upper(&self, other: &KeyBound) -> Ordering {
        self.upper_cut().order(&other.upper_cut())
    }

    /// Orders `self` as a lower bound against `upper` as an upper bound: `Less` when rows
    /// lie between them, `Equal` when the two ranges they end and start touch.
    pub fn cmp_lower_to_upper(&self, upper: &KeyBound) -> Ordering {
        self.lower_cut().order(&upper.upper_cut())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_order_differs_from_utf8_above_bmp() {
        let supplementary = "\u{10000}";
        let private_use = "\u{E000}";
        assert_eq!(utf16_cmp(supplementary, private_use), Ordering::Less);
        assert_eq!(supplementary.cmp(private_use), Ordering::Greater);
        assert_eq!(utf16_cmp("a", "ab"), Ordering::Less);
        assert_eq!(utf16_cmp("B", "a"), Ordering::Less);
        assert_eq!(utf16_cmp("", ""), Ordering::Equal);
    }

    proptest::proptest! {
        #[test]
        fn utf16_cmp_matches_code_unit_order(a in "[a-c\u{e000}\u{10000}\u{7f}\u{80}é]{0,6}", b in "[a-c\u{e000}\u{10000}\u{7f}\u{80}é]{0,6}") {
            proptest::prop_assert_eq!(utf16_cmp(&a, &b), a.encode_utf16().cmp(b.encode_utf16()));
            proptest::prop_assert_eq!(utf16_cmp_bytes(a.as_bytes(), b.as_bytes()), utf16_cmp(&a, &b));
        }
    }
}
