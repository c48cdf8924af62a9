//! Columns: the exact numbers, Booleans, dates, Guids, short Strings and Timestamps of
//! a summary block's rows (`skip.rs`), so a filter that reads only those is evaluated on
//! them and a block where it keeps no row is not read from the store at all (a `not`,
//! an `ne` or an `or` of comparisons, which no span or Bloom filter rules out).
//!
//! A block's columns are built with its summary, from the same pass, and hold for each
//! row in key order its Timestamp and, per property name scans asked for, its value or
//! its absence. A name some row holds with a value no column keeps (a String longer
//! than 64 bytes, a Binary) is *opaque*: a filter reading it is not evaluated
//! here. A put into a block drops its columns before it reaches the store, so columns a
//! scan finds hold every row of the block as it was when the scan looked, and perhaps
//! rows deleted since: a filter that keeps none of those keeps none of the rows left.
//! They are immutable and shared (`Arc`): a scan takes them under the summaries' lock
//! and evaluates them after letting it go.
//!
//! A filter is evaluated on a block a column at a time
//! ([`aztable_wire::filter::Compiled::eval_columns`]): each comparison marks the rows
//! it accepts in a bit mask, in a loop over its column's values when they all share the
//! literal's kind, and the masks are joined as the filter joins its parts. Row by row
//! ([`Columns::none_kept`], for a scan that knows only a `keep` closure) the same
//! filter cost some 200 instructions a row through `dyn Row`.
//!
//! Sealed, a column takes four bytes a row when its rows' values fit 32 bits (Int32s,
//! Booleans, Strings as a place in the column's text, where each distinct String of the
//! block is kept once) and one kind is shared by every row, as is usual; Timestamps are
//! kept as distances from the block's earliest, in four bytes when they fit. So a
//! filter on one Int32 has columns of about 10 bytes a row, the block's own included.
//! A Guid takes its 16 bytes and four for its place.

use super::scan::MAX_PROJECTED;
use aztable_model::{EdmRef, EdmValue, Row, Ticks};
use aztable_wire::filter::{Compiled, Leaf, Shape};
use std::sync::Arc;

/// A value's kind in a column; `ABSENT` where the row lacks the property.
const ABSENT: u8 = 0;
const INT32: u8 = 1;
const INT64: u8 = 2;
const DOUBLE: u8 = 3;
const BOOLEAN: u8 = 4;
const DATETIME: u8 = 5;
/// A String: its value is where it starts in the column's text and its length.
const STRING: u8 = 6;
/// A Guid: its value is its place in the column's Guids.
const GUID: u8 = 7;

/// Strings a column keeps: those every head holds whole.
const MAX_STRING: usize = 64;

/// One property's values, a row each.
#[derive(Debug)]
struct Column {
    name: Box<[u8]>,
    tags: Tags,
    /// As [`ColumnBuilder::push`] gives them, 32 bits wide where every row's fits
    /// ([`narrow`]).
    values: Bits,
    /// The Strings, each distinct one of the first [`DISTINCT_STRINGS`] once.
    text: Box<str>,
    /// The Guids, a row's each in row order: where every row holds one, row `r`'s is
    /// `guids[r]`.
    guids: Box<[[u8; 16]]>,
}

/// A column's kinds: one for every row (the usual case), or a row's each.
#[derive(Debug)]
enum Tags {
    Same(u8),
    Each(Box<[u8]>),
}

/// A row each, 32 bits wide when every row's value fits.
#[derive(Debug)]
enum Bits {
    Narrow(Box<[u32]>),
    Wide(Box<[u64]>),
}

impl Bits {
    /// From wide values, narrowed by `narrow` when every one narrows.
    fn seal(wide: Vec<u64>, narrow: impl Fn(usize, u64) -> Option<u32>) -> Bits {
        match wide.iter().enumerate().map(|(row, &b)| narrow(row, b)).collect::<Option<Box<[u32]>>>() {
            Some(narrow) => Bits::Narrow(narrow),
            None => Bits::Wide(wide.into_boxed_slice()),
        }
    }

    /// Row `row`'s value, widened.
    fn get(&self, row: usize) -> Option<u64> {
        match self {
            Bits::Narrow(v) => v.get(row).map(|&n| u64::from(n)),
            Bits::Wide(v) => v.get(row).copied(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Bits::Narrow(v) => v.len(),
            Bits::Wide(v) => v.len(),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Bits::Narrow(v) => v.len() * 4,
            Bits::Wide(v) => v.len() * 8,
        }
    }
}

/// A String's place in its column's text: where it starts and its length, as a wide
/// value (`start << 32 | len`) and as a narrow one (`start << 8 | len`).
fn string_bits(start: usize, len: usize) -> u64 {
    (start as u64) << 32 | len as u64
}

/// [`string_bits`] undone: where the String starts and its length.
fn string_place(bits: u64) -> (usize, usize) {
    ((bits >> 32) as usize, (bits & 0xFFFF_FFFF) as usize)
}

/// A value of kind `tag` in 32 bits, if it fits.
fn narrow(tag: u8, bits: u64) -> Option<u32> {
    match tag {
        STRING => {
            let (start, len) = string_place(bits);
            (start < 1 << 24 && len < 1 << 8).then_some((start << 8 | len) as u32)
        }
        _ => u32::try_from(bits).ok(),
    }
}

impl Column {
    fn at(&self, row: usize) -> Option<EdmRef<'_>> {
        // (one match of both, then one of the kind: a filter reads a value or two a row)
        let (tag, bits, narrow) = match (&self.tags, &self.values) {
            (Tags::Same(tag), Bits::Narrow(v)) => (*tag, u64::from(*v.get(row)?), true),
            (Tags::Same(tag), Bits::Wide(v)) => (*tag, *v.get(row)?, false),
            (Tags::Each(tags), Bits::Narrow(v)) => (*tags.get(row)?, u64::from(*v.get(row)?), true),
            (Tags::Each(tags), Bits::Wide(v)) => (*tags.get(row)?, *v.get(row)?, false),
        };
        Some(match tag {
            INT32 => EdmRef::Int32(bits as u32 as i32),
            INT64 => EdmRef::Int64(bits as i64),
            DOUBLE => EdmRef::Double(f64::from_bits(bits)),
            BOOLEAN => EdmRef::Boolean(bits != 0),
            DATETIME => EdmRef::DateTime(Ticks(bits as i64)),
            STRING => {
                let (start, len) = match narrow {
                    true => ((bits >> 8) as usize, (bits & 0xFF) as usize),
                    false => string_place(bits),
                };
                EdmRef::String(self.text.get(start..start + len)?)
            }
            GUID => EdmRef::Guid(self.guids.get(bits as usize)?),
            _ => return None,
        })
    }

    /// Marks the rows `leaf` accepts ([`Columns::none_kept_by`]). A column whose rows
    /// all hold one kind, compared with a literal of that kind (or, for Strings, with
    /// `eq` or `ne`), is compared in a loop of its own; any other, row by row with
    /// [`Leaf::takes`].
    fn mark(&self, leaf: &Leaf<'_>, rows: usize, mask: &mut [u64]) {
        if let (Tags::Same(tag), Shape::Ordered { literal, less, equal, greater }) =
            (&self.tags, leaf.shape())
        {
            let takes = (less, equal, greater);
            match (*tag, literal, &self.values) {
                (ABSENT, _, _) => return,
                (INT32, EdmValue::Int32(b), Bits::Narrow(v)) => {
                    return mark_ordered(mask, v, |a| a as i32, *b, takes);
                }
                (INT64, EdmValue::Int64(b), Bits::Narrow(v)) => {
                    return mark_ordered(mask, v, i64::from, *b, takes);
                }
                (INT64, EdmValue::Int64(b), Bits::Wide(v)) => {
                    return mark_ordered(mask, v, |a| a as i64, *b, takes);
                }
                (DATETIME, EdmValue::DateTime(b), Bits::Wide(v)) => {
                    return mark_ordered(mask, v, |a| a as i64, b.0, takes);
                }
                (BOOLEAN, EdmValue::Boolean(b), Bits::Narrow(v)) => {
                    return mark_ordered(mask, v, |a| a != 0, *b, takes);
                }
                // (in RFC 4122 byte order a Guid's bytes sort as its text: `eval::compare`)
                (GUID, EdmValue::Guid(b), _) => {
                    return mark_ordered(
                        mask,
                        &self.guids,
                        u128::from_be_bytes,
                        u128::from_be_bytes(*b),
                        takes,
                    );
                }
                _ => {}
            }
        }
        if let (Tags::Same(STRING), Bits::Narrow(v), Shape::StrEq { value, negated }) =
            (&self.tags, &self.values, leaf.shape())
        {
            let (text, want) = (self.text.as_bytes(), Some(value.as_bytes()));
            let equal = |b: u32| text.get((b >> 8) as usize..(b >> 8) as usize + (b & 0xFF) as usize) == want;
            return mark_each(mask, v, |b| equal(b) != negated);
        }
        mark_rows(mask, rows, |row| leaf.takes(self.at(row)));
    }

    fn bytes(&self) -> usize {
        let tags = match &self.tags {
            Tags::Same(_) => 0,
            Tags::Each(tags) => tags.len(),
        };
        std::mem::size_of::<Column>()
            + self.name.len()
            + tags
            + self.values.bytes()
            + self.text.len()
            + self.guids.len() * 16
    }
}

/// Distinct Strings a column's text keeps once each (a block's rows often share a few
/// values); later ones are appended whatever they repeat.
const DISTINCT_STRINGS: usize = 16;

/// A column as its rows are read.
#[derive(Debug)]
struct ColumnBuilder {
    name: Vec<u8>,
    tags: Vec<u8>,
    values: Vec<u64>,
    text: String,
    /// The values of the distinct Strings in `text` (at most [`DISTINCT_STRINGS`]).
    distinct: Vec<u64>,
    guids: Vec<[u8; 16]>,
}

impl ColumnBuilder {
    /// Keeps `v` for the row being read; false for a value no column keeps.
    fn push(&mut self, v: &EdmRef<'_>) -> bool {
        let (tag, bits) = match *v {
            EdmRef::Int32(n) => (INT32, u64::from(n as u32)),
            EdmRef::Int64(n) => (INT64, n as u64),
            EdmRef::Double(d) => (DOUBLE, d.to_bits()),
            EdmRef::Boolean(b) => (BOOLEAN, u64::from(b)),
            EdmRef::DateTime(t) => (DATETIME, t.0 as u64),
            EdmRef::String(s) if s.len() <= MAX_STRING => (STRING, self.string(s)),
            EdmRef::Guid(g) => {
                self.guids.push(*g);
                (GUID, self.guids.len() as u64 - 1)
            }
            EdmRef::String(_) | EdmRef::Binary(_) => return false,
        };
        self.tags.push(tag);
        self.values.push(bits);
        true
    }

    /// `s`'s place in the text: where an equal String already is, or appended.
    fn string(&mut self, s: &str) -> u64 {
        let text = &self.text;
        let same = |&&bits: &&u64| {
            let (start, len) = string_place(bits);
            text.get(start..start + len) == Some(s)
        };
        if let Some(&bits) = self.distinct.iter().find(same) {
            return bits;
        }
        let bits = string_bits(self.text.len(), s.len());
        self.text.push_str(s);
        if self.distinct.len() < DISTINCT_STRINGS {
            self.distinct.push(bits);
        }
        bits
    }

    fn seal(self) -> Column {
        let tags = match self.tags.split_first() {
            Some((&first, rest)) if rest.iter().all(|&t| t == first) => Tags::Same(first),
            None => Tags::Same(ABSENT),
            Some(_) => Tags::Each(self.tags.into_boxed_slice()),
        };
        let values = match &tags {
            Tags::Same(tag) => Bits::seal(self.values, |_, bits| narrow(*tag, bits)),
            Tags::Each(each) => Bits::seal(self.values, |row, bits| narrow(*each.get(row)?, bits)),
        };
        Column {
            name: self.name.into_boxed_slice(),
            tags,
            values,
            text: self.text.into_boxed_str(),
            guids: self.guids.into_boxed_slice(),
        }
    }
}

/// Each row's Timestamp, as its distance from the block's earliest.
#[derive(Debug)]
struct Stamps {
    base: i64,
    after: Bits,
}

impl Stamps {
    fn seal(stamps: Vec<i64>) -> Stamps {
        let base = stamps.iter().copied().min().unwrap_or_default();
        let after = stamps.into_iter().map(|t| t.wrapping_sub(base) as u64).collect();
        Stamps { base, after: Bits::seal(after, |_, d| u32::try_from(d).ok()) }
    }

    fn at(&self, row: usize) -> Option<i64> {
        Some(self.base.wrapping_add(self.after.get(row)? as i64))
    }

    /// Marks the rows whose Timestamp `leaf` accepts ([`Columns::none_kept_by`]).
    fn mark(&self, leaf: &Leaf<'_>, rows: usize, mask: &mut [u64]) {
        if let Shape::Ordered { literal: EdmValue::DateTime(b), less, equal, greater } = leaf.shape() {
            let (base, takes) = (self.base, (less, equal, greater));
            return match &self.after {
                Bits::Narrow(v) => mark_ordered(mask, v, |d| base.wrapping_add(i64::from(d)), b.0, takes),
                Bits::Wide(v) => mark_ordered(mask, v, |d| base.wrapping_add(d as i64), b.0, takes),
            };
        }
        mark_rows(mask, rows, |row| leaf.takes_timestamp(Ticks(self.at(row).unwrap_or_default())));
    }
}

/// The columns of one block `[start, end)` of a table's heads.
#[derive(Debug)]
pub(super) struct Columns {
    pub(super) start: Vec<u8>,
    pub(super) end: Vec<u8>,
    timestamps: Stamps,
    props: Box<[Column]>,
    opaque: Box<[Box<[u8]>]>,
}

impl Columns {
    /// Rows of the block.
    pub(super) fn rows(&self) -> usize {
        self.timestamps.after.len()
    }

    pub(super) fn bytes(&self) -> usize {
        std::mem::size_of::<Columns>()
            + self.start.capacity()
            + self.end.capacity()
            + self.timestamps.after.bytes()
            + self.props.iter().map(Column::bytes).sum::<usize>()
            + self.opaque.iter().map(|n| n.len() + 16).sum::<usize>()
    }

    /// Whether `keep`, a filter reading the custom properties `names` (at most
    /// [`MAX_PROJECTED`]), the Timestamp and not the keys, is false for every row; false
    /// also when a name is opaque here.
    pub(super) fn none_kept(&self, names: &[String], keep: &mut impl FnMut(&dyn Row) -> bool) -> bool {
        let mut all_slots: [Option<&Column>; MAX_PROJECTED] = [None; MAX_PROJECTED];
        let Some(slots) = self.slots(names, &mut all_slots) else { return false };
        (0..self.rows()).all(|row| !keep(&ColumnRow { columns: self, names, slots, row }))
    }

    /// [`Columns::none_kept`] with `keep` the filter `filter` (whose
    /// [`Compiled::names`] are `names`), evaluated a column at a time
    /// ([`Compiled::eval_columns`]): the same answer, without a `dyn Row` and a walk of
    /// the filter's tree for every row.
    pub(super) fn none_kept_by(&self, names: &[String], filter: &Compiled) -> bool {
        self.kept_by(names, filter).is_some_and(|kept| kept.iter().all(|&w| w == 0))
    }

    /// The rows `filter` keeps, a bit each ([`Compiled::eval_columns`]); `None` when it
    /// cannot be evaluated here (a name is opaque, or it reads the keys).
    pub(super) fn kept_by(&self, names: &[String], filter: &Compiled) -> Option<Vec<u64>> {
        let mut all_slots: [Option<&Column>; MAX_PROJECTED] = [None; MAX_PROJECTED];
        let slots = self.slots(names, &mut all_slots)?;
        let rows = self.rows();
        let mut leaf = |leaf: &Leaf<'_>, mask: &mut [u64]| match leaf.property() {
            None => self.timestamps.mark(leaf, rows, mask),
            Some(i) => {
                // (no column: no row of the block holds the name)
                if let Some(column) = slots.get(i).copied().flatten() {
                    column.mark(leaf, rows, mask);
                }
            }
        };
        filter.eval_columns(rows, &mut leaf)
    }

    /// The column of each of `names` (`None` where no row holds the name), in `all`;
    /// `None` when one is opaque here, or there are more than [`MAX_PROJECTED`].
    fn slots<'s>(
        &'s self,
        names: &[String],
        all: &'s mut [Option<&'s Column>; MAX_PROJECTED],
    ) -> Option<&'s [Option<&'s Column>]> {
        let slots = all.get_mut(..names.len())?;
        for (slot, name) in slots.iter_mut().zip(names) {
            let name = name.as_bytes();
            if self.opaque.iter().any(|o| **o == *name) {
                return None;
            }
            *slot = self.props.iter().find(|c| *c.name == *name);
        }
        Some(slots)
    }
}

/// Sets bit `r % 64` of `mask[r / 64]` for each `values[r]` that `test` accepts, a
/// word of 64 answers at a time (set bit by bit into the mask, the loop cost some 30
/// instructions a row).
fn mark_each<T: Copy>(mask: &mut [u64], values: &[T], test: impl Fn(T) -> bool) {
    for (word, chunk) in mask.iter_mut().zip(values.chunks(64)) {
        let mut bits = 0;
        for (i, &v) in chunk.iter().enumerate() {
            bits |= u64::from(test(v)) << i;
        }
        *word |= bits;
    }
}

/// [`mark_each`] over row numbers `0..rows`.
fn mark_rows(mask: &mut [u64], rows: usize, test: impl Fn(usize) -> bool) {
    for (w, word) in mask.iter_mut().enumerate() {
        let mut bits = 0;
        for row in w * 64..rows.min(w * 64 + 64) {
            bits |= u64::from(test(row)) << (row % 64);
        }
        *word |= bits;
    }
}

/// [`mark_each`] of `values`, each made a `T` by `key` and ordered against `b`; taken
/// when less, equal or greater as `takes` says. The loop is chosen by what is taken,
/// so each value is compared once.
fn mark_ordered<V: Copy, T: Ord + Copy>(
    mask: &mut [u64],
    values: &[V],
    key: impl Fn(V) -> T,
    b: T,
    takes: (bool, bool, bool),
) {
    match takes {
        (true, false, false) => mark_each(mask, values, |v| key(v) < b),
        (true, true, false) => mark_each(mask, values, |v| key(v) <= b),
        (false, false, true) => mark_each(mask, values, |v| key(v) > b),
        (false, true, true) => mark_each(mask, values, |v| key(v) >= b),
        (false, true, false) => mark_each(mask, values, |v| key(v) == b),
        (true, false, true) => mark_each(mask, values, |v| key(v) != b),
        (true, true, true) => mark_each(mask, values, |_| true),
        (false, false, false) => {}
    }
}

/// Row `row` of a block's columns, as a filter sees it. It has no keys: filters that
/// read them are not evaluated on columns.
struct ColumnRow<'a> {
    columns: &'a Columns,
    names: &'a [String],
    slots: &'a [Option<&'a Column>],
    row: usize,
}

impl Row for ColumnRow<'_> {
    fn partition_key(&self) -> &str {
        ""
    }
    fn row_key(&self) -> &str {
        ""
    }
    fn timestamp(&self) -> Ticks {
        Ticks(self.columns.timestamps.at(self.row).unwrap_or_default())
    }
    fn property(&self, name: &str) -> Option<EdmRef<'_>> {
        let i = self.names.iter().position(|n| n == name)?;
        self.property_at(i, name)
    }
    fn property_at(&self, index: usize, _name: &str) -> Option<EdmRef<'_>> {
        self.slots.get(index).copied().flatten()?.at(self.row)
    }
}

/// A block's columns as its rows are read.
#[derive(Debug)]
pub(super) struct ColumnsBuilder {
    /// The names to keep columns of (what scans asked for); others are passed over.
    wanted: Arc<[Box<[u8]>]>,
    timestamps: Vec<i64>,
    /// Each as long as `timestamps` once a row ends.
    props: Vec<ColumnBuilder>,
    opaque: Vec<Vec<u8>>,
}

impl ColumnsBuilder {
    pub(super) fn new(wanted: Arc<[Box<[u8]>]>) -> ColumnsBuilder {
        ColumnsBuilder { wanted, timestamps: Vec::new(), props: Vec::new(), opaque: Vec::new() }
    }

    /// One property of the row being read (after [`ColumnsBuilder::begin_row`]); `None`
    /// for a value the head does not hold whole. A name repeated in a row keeps its
    /// first value (as a projection does).
    pub(super) fn field(&mut self, name: &[u8], value: Option<&EdmRef<'_>>) {
        if !self.wanted.iter().any(|w| **w == *name) {
            return;
        }
        let row = self.timestamps.len().saturating_sub(1);
        let i = match self.props.iter().position(|c| c.name == name) {
            Some(i) => i,
            None => {
                let (tags, values) = (vec![ABSENT; row], vec![0; row]);
                let (text, distinct, guids) = (String::new(), Vec::new(), Vec::new());
                self.props.push(ColumnBuilder { name: name.to_vec(), tags, values, text, distinct, guids });
                self.props.len() - 1
            }
        };
        let kept = match (self.props.get_mut(i), value) {
            (Some(c), _) if c.tags.len() > row => true,
            (Some(c), Some(v)) => c.push(v),
            _ => false,
        };
        if !kept && !self.opaque.iter().any(|o| o == name) {
            self.opaque.push(name.to_vec());
        }
    }

    /// Starts a row (its Timestamp comes at its end).
    pub(super) fn begin_row(&mut self) {
        self.timestamps.push(0);
    }

    /// Ends the row begun last: its Timestamp, and absence for the names it lacks.
    pub(super) fn end_row(&mut self, timestamp: Ticks) {
        let rows = self.timestamps.len();
        if let Some(t) = self.timestamps.last_mut() {
            *t = timestamp.0;
        }
        for c in &mut self.props {
            c.tags.resize(rows, ABSENT);
            c.values.resize(rows, 0);
        }
    }

    /// The block `[start, end)`'s columns (opaque names keep no column).
    pub(super) fn seal(self, start: Vec<u8>, end: Vec<u8>) -> Columns {
        let opaque = self.opaque;
        let props =
            self.props.into_iter().filter(|c| !opaque.contains(&c.name)).map(ColumnBuilder::seal).collect();
        Columns {
            start,
            end,
            timestamps: Stamps::seal(self.timestamps),
            props,
            opaque: opaque.into_iter().map(Vec::into_boxed_slice).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aztable_model::EdmValue;

    fn built(rows: &[&[(&str, Option<EdmRef<'_>>)]]) -> Columns {
        let wanted = ["N", "B", "D", "L", "G", "S", "Missing", "Other"].map(|n| n.as_bytes().into());
        let mut b = ColumnsBuilder::new(Arc::new(wanted));
        for (i, row) in rows.iter().enumerate() {
            b.begin_row();
            for (name, value) in *row {
                b.field(name.as_bytes(), value.as_ref());
            }
            b.end_row(Ticks(i as i64 + 10));
        }
        b.seal(b"a".to_vec(), b"b".to_vec())
    }

    fn values(c: &Columns, name: &str) -> Vec<Option<EdmValue>> {
        let names = [name.to_owned()];
        let mut seen = Vec::new();
        let none = c.none_kept(&names, &mut |row: &dyn Row| {
            seen.push(row.property_at(0, name).map(EdmRef::to_owned_value));
            false
        });
        assert!(none);
        seen
    }

    #[test]
    fn rows_keep_their_values_types_and_absences() {
        let c = built(&[
            &[("N", Some(EdmRef::Int32(-1))), ("D", Some(EdmRef::Double(f64::NAN)))],
            &[("B", Some(EdmRef::Boolean(true))), ("N", Some(EdmRef::Int64(-7)))],
            &[("N", Some(EdmRef::DateTime(Ticks(5)))), ("N", Some(EdmRef::Int32(9)))],
            &[("N", Some(EdmRef::String("déjà"))), ("S", Some(EdmRef::String("")))],
            &[("S", Some(EdmRef::String("x"))), ("N", Some(EdmRef::String("vu")))],
            &[("G", Some(EdmRef::Guid(&[9; 16]))), ("N", Some(EdmRef::Guid(&[3; 16])))],
        ]);
        assert_eq!(c.rows(), 6);
        assert_eq!(
            values(&c, "N"),
            vec![
                Some(EdmValue::Int32(-1)),
                Some(EdmValue::Int64(-7)),
                Some(EdmValue::DateTime(Ticks(5))),
                Some(EdmValue::String("déjà".into())),
                Some(EdmValue::String("vu".into())),
                Some(EdmValue::Guid([3; 16]))
            ]
        );
        assert_eq!(values(&c, "G"), vec![None, None, None, None, None, Some(EdmValue::Guid([9; 16]))]);
        let strings = [
            None,
            None,
            None,
            Some(EdmValue::String(String::new())),
            Some(EdmValue::String("x".into())),
            None,
        ];
        assert_eq!(values(&c, "S"), strings);
        assert_eq!(values(&c, "B"), vec![None, Some(EdmValue::Boolean(true)), None, None, None, None]);
        assert!(matches!(values(&c, "D")[0], Some(EdmValue::Double(d)) if d.is_nan()));
        assert_eq!(values(&c, "Missing"), vec![None; 6]);
        let mut stamps = Vec::new();
        c.none_kept(&[], &mut |row: &dyn Row| {
            stamps.push(row.timestamp().0);
            false
        });
        assert_eq!(stamps, [10, 11, 12, 13, 14, 15]);
    }

    #[test]
    fn columns_of_one_kind_of_small_values_take_four_bytes_a_row() {
        let rows: Vec<[(&str, Option<EdmRef<'_>>); 3]> = (0..100)
            .map(|n| {
                let s = ["hay", "needle", "hay", "straw"][n % 4];
                [
                    ("N", Some(EdmRef::Int32(-(n as i32)))),
                    ("S", Some(EdmRef::String(s))),
                    ("L", Some(EdmRef::Int64(n as i64 - 50))),
                ]
            })
            .collect();
        let rows: Vec<&[(&str, Option<EdmRef<'_>>)]> = rows.iter().map(|r| r.as_slice()).collect();
        let c = built(&rows);
        let column = |name: &str| c.props.iter().find(|p| *p.name == *name.as_bytes()).expect(name);
        for name in ["N", "S"] {
            assert!(matches!(column(name).tags, Tags::Same(_)), "{name}");
            assert!(matches!(&column(name).values, Bits::Narrow(v) if v.len() == 100), "{name}");
        }
        // each distinct String once
        assert_eq!(&*column("S").text, "hayneedlestraw");
        // negative Int64s do not fit 32 bits
        assert!(matches!(column("L").values, Bits::Wide(_)));
        assert!(matches!(c.timestamps.after, Bits::Narrow(_)));
        let expect = |f: fn(usize) -> EdmValue| (0..100).map(|n| Some(f(n))).collect::<Vec<_>>();
        assert_eq!(values(&c, "N"), expect(|n| EdmValue::Int32(-(n as i32))));
        assert_eq!(
            values(&c, "S"),
            expect(|n| EdmValue::String(["hay", "needle", "hay", "straw"][n % 4].into()))
        );
        assert_eq!(values(&c, "L"), expect(|n| EdmValue::Int64(n as i64 - 50)));
    }

    #[test]
    fn timestamps_far_apart_and_strings_far_in_are_kept_whole() {
        let stamps = [i64::MAX, 0, i64::MIN, 1 << 40, -1];
        let mut b = ColumnsBuilder::new(Arc::new(["S".as_bytes().into()]));
        let long: Vec<String> = (0..300).map(|n| format!("{n:0>60}")).collect();
        for (i, &t) in stamps.iter().enumerate() {
            b.begin_row();
            b.field(b"S", Some(&EdmRef::String(&long[i])));
            b.end_row(Ticks(t));
        }
        let c = b.seal(Vec::new(), Vec::new());
        assert!(matches!(c.timestamps.after, Bits::Wide(_)));
        let mut seen = Vec::new();
        c.none_kept(&["S".to_owned()], &mut |row: &dyn Row| {
            seen.push((row.timestamp().0, row.property_at(0, "S").map(EdmRef::to_owned_value)));
            false
        });
        let expect: Vec<_> =
            stamps.iter().zip(&long).map(|(&t, s)| (t, Some(EdmValue::String(s.clone())))).collect();
        assert_eq!(seen, expect);
        // a text past 2^24 bytes no longer narrows
        let mut b = ColumnsBuilder::new(Arc::new(["S".as_bytes().into()]));
        let rows = (1 << 24) / 50;
        for i in 0..rows {
            b.begin_row();
            b.field(b"S", Some(&EdmRef::String(&long[i % 300])));
            b.end_row(Ticks(0));
        }
        let c = b.seal(Vec::new(), Vec::new());
        assert!(matches!(c.props[0].values, Bits::Wide(_)));
        let last = c.props[0].at(rows - 1).map(EdmRef::to_owned_value);
        assert_eq!(last, Some(EdmValue::String(long[(rows - 1) % 300].clone())));
    }

    #[test]
    fn a_name_held_once_with_a_value_no_column_keeps_is_not_evaluated() {
        let long = "x".repeat(MAX_STRING + 1);
        let c = built(&[
            &[("N", Some(EdmRef::Int32(1))), ("B", Some(EdmRef::Binary(&[7; 16])))],
            &[("N", Some(EdmRef::String(&long))), ("L", None)],
        ]);
        for name in ["N", "L", "B"] {
            assert!(!c.none_kept(&[name.to_owned()], &mut |_: &dyn Row| false), "{name}");
        }
        assert!(c.none_kept(&["Other".to_owned()], &mut |_: &dyn Row| false));
    }

    /// A block of `n` rows whose `N` is the row's number.
    fn int32s(n: i32) -> Columns {
        let rows: Vec<[(&str, Option<EdmRef<'_>>); 1]> =
            (0..n).map(|n| [("N", Some(EdmRef::Int32(n)))]).collect();
        built(&rows.iter().map(|r| r.as_slice()).collect::<Vec<_>>())
    }

    #[test]
    fn a_block_is_ruled_out_only_when_no_row_is_kept() {
        let c = int32s(10);
        let names = ["N".to_owned()];
        let kept_above = |limit: i32| move |row: &dyn Row| matches!(row.property_at(0, "N"), Some(EdmRef::Int32(n)) if n > limit);
        assert!(c.none_kept(&names, &mut kept_above(9)));
        assert!(!c.none_kept(&names, &mut kept_above(8)));
    }

    /// The longest filters the parser takes (500 comparisons chained by `and` or by
    /// `or`, a tree as deep) are evaluated a column at a time as row by row.
    #[test]
    fn the_longest_chains_are_evaluated_a_column_at_a_time() {
        let c = int32s(200);
        for (join, first) in [(" and ", "N ge 150"), (" or ", "N eq 199")] {
            let text = std::iter::once(first.to_owned())
                .chain((1..aztable_wire::filter::MAX_COMPARISONS).map(|i| format!("N ne {}", 1000 + i)))
                .collect::<Vec<_>>()
                .join(join);
            let filter = Compiled::new(&aztable_wire::filter::parse(&text).expect("parses"));
            let mask = c.kept_by(filter.names(), &filter).expect("evaluated on columns");
            let kept: Vec<usize> = (0..200).filter(|&r| mask[r / 64] >> (r % 64) & 1 == 1).collect();
            let expected: Vec<usize> = match join {
                " and " => (150..200).collect(),
                _ => (0..200).collect(),
            };
            assert_eq!(kept, expected, "{join}");
        }
    }
}
