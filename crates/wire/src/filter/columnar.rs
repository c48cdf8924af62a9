//! A [`Compiled`] filter evaluated on a block of rows held as columns, a column at a
//! time ([`Compiled::eval_columns`]): each comparison (a [`Leaf`]) marks the rows it
//! accepts in a bit mask, a bit a row, and the masks are joined with `and`, `or` and
//! `not` as the filter joins its parts. Row by row, a filter walks its tree and asks a
//! `dyn Row` for each value; a column at a time, the tree is walked once per block and
//! each comparison is a loop over one column's values.
//!
//! The answers are exactly [`Compiled::eval`]'s: [`Leaf::takes`] and
//! [`Leaf::takes_timestamp`] are the row-by-row rules for one value, and a
//! [`Shape::Ordered`] says the same of a column whose values all share the literal's
//! type (the columns' own tests check both against [`Compiled::eval`]).

use super::compiled::{Node, Operand};
use super::eval::{compare, Accept, Outcome, Value};
use super::Compiled;
use aztable_model::{EdmRef, EdmValue, Ticks};
use std::cmp::Ordering;

/// One comparison (or bare property) of a filter, as a block of columns evaluates it.
#[derive(Debug, Clone, Copy)]
pub struct Leaf<'a> {
    /// The custom property `names[i]`, or (`None`) the Timestamp.
    at: Option<usize>,
    test: Test<'a>,
}

/// What a comparison or bare property tests of the value it reads.
#[derive(Debug, Clone, Copy)]
pub(super) enum Test<'a> {
    Compare { accept: Accept, value: &'a EdmValue },
    StrEq { negated: bool, value: &'a str },
    Property,
}

impl Test<'_> {
    /// Whether a row whose operand reads `value` (`None`: it lacks it) is accepted: the
    /// one rule of [`Compiled::eval`] and of [`Leaf`] alike.
    pub(super) fn takes(self, value: Option<Value<'_>>) -> bool {
        let Some(v) = value else { return false };
        match self {
            Test::Compare { accept, value } => accept.takes(compare(v, value)),
            Test::StrEq { negated, value } => match v {
                Value::Str(s) | Value::Edm(EdmRef::String(s)) => {
                    (s.as_bytes() == value.as_bytes()) != negated
                }
                Value::Key(k) => (k == value.as_bytes()) != negated,
                // another type: a mismatch, which only `ne` accepts
                _ => negated,
            },
            Test::Property => matches!(v, Value::Edm(EdmRef::Boolean(true))),
        }
    }
}

/// What a [`Leaf`] accepts of a value of the literal's own type, for columns whose
/// rows all hold that type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape<'a> {
    /// A value ordered against `literal` (same type, no NaN) is accepted when it is
    /// less, equal or greater as these say.
    Ordered { literal: &'a EdmValue, less: bool, equal: bool, greater: bool },
    /// A String equal to `value` is accepted (not accepted when `negated`).
    StrEq { value: &'a str, negated: bool },
    /// A bare property: a Boolean true is accepted.
    Property,
}

impl<'a> Leaf<'a> {
    /// Which property it reads: the custom property `names[i]` ([`Compiled::names`]),
    /// or (`None`) the Timestamp.
    pub fn property(&self) -> Option<usize> {
        self.at
    }

    /// What it accepts of values of the literal's own type.
    pub fn shape(&self) -> Shape<'a> {
        match self.test {
            Test::Compare { accept, value } => Shape::Ordered {
                literal: value,
                less: accept.takes(Outcome::Ordered(Ordering::Less)),
                equal: accept.takes(Outcome::Ordered(Ordering::Equal)),
                greater: accept.takes(Outcome::Ordered(Ordering::Greater)),
            },
            Test::StrEq { negated, value } => Shape::StrEq { value, negated },
            Test::Property => Shape::Property,
        }
    }

    /// Whether a row whose custom property holds `value` (`None`: it lacks it) is
    /// accepted.
    pub fn takes(&self, value: Option<EdmRef<'_>>) -> bool {
        self.test.takes(value.map(Value::Edm))
    }

    /// Whether a row with Timestamp `t` is accepted (a leaf reading the Timestamp).
    pub fn takes_timestamp(&self, t: Ticks) -> bool {
        self.test.takes(Some(Value::Ticks(t)))
    }
}

impl Compiled {
    /// The filter on a block of `rows` rows held as columns: `leaf` sets in its mask (a
    /// `u64` per 64 rows, given zeroed) bit `r % 64` of word `r / 64` for each row `r`
    /// the leaf accepts, and the masks are joined as the filter joins its parts. Bit `r`
    /// of the answer is [`Compiled::eval`] of row `r`; bits past `rows` are clear.
    /// `None` for a filter that reads the keys, which columns do not hold.
    pub fn eval_columns(&self, rows: usize, leaf: &mut dyn FnMut(&Leaf<'_>, &mut [u64])) -> Option<Vec<u64>> {
        if self.reads_keys() {
            return None;
        }
        let block = Block { words: rows.div_ceil(64), tail: tail_bits(rows) };
        Some(block.eval(&self.root, leaf))
    }
}

/// The bits of the last word that are rows.
fn tail_bits(rows: usize) -> u64 {
    match rows % 64 {
        0 => u64::MAX,
        n => (1 << n) - 1,
    }
}

struct Block {
    words: usize,
    tail: u64,
}

impl Block {
    fn eval(&self, node: &Node, leaf: &mut dyn FnMut(&Leaf<'_>, &mut [u64])) -> Vec<u64> {
        let mut mask = vec![0u64; self.words];
        let mut ask = |at: Operand, test: Test<'_>, mask: &mut [u64]| {
            let at = match at {
                Operand::Custom(i) => Some(i),
                Operand::Timestamp => None,
                // (a filter reading the keys is not evaluated on columns)
                Operand::PartitionKey | Operand::RowKey => return,
            };
            leaf(&Leaf { at, test }, mask);
        };
        match node {
            Node::Compare { at, accept, value, .. } => {
                ask(*at, Test::Compare { accept: *accept, value }, &mut mask);
            }
            Node::StrEq { at, negated, value } => {
                ask(*at, Test::StrEq { negated: *negated, value }, &mut mask)
            }
            Node::Property(at) => ask(*at, Test::Property, &mut mask),
            Node::Bool(true) => mask.fill(u64::MAX),
            Node::Bool(false) => {}
            Node::Not(inner) => {
                mask = self.eval(inner, leaf);
                mask.iter_mut().for_each(|w| *w = !*w);
            }
            Node::And(a, b) => {
                mask = self.eval(a, leaf);
                if mask.iter().any(|&w| w != 0) {
                    let b = self.eval(b, leaf);
                    mask.iter_mut().zip(&b).for_each(|(w, b)| *w &= b);
                }
            }
            Node::Or(a, b) => {
                mask = self.eval(a, leaf);
                if !self.full(&mask) {
                    let b = self.eval(b, leaf);
                    mask.iter_mut().zip(&b).for_each(|(w, b)| *w |= b);
                }
            }
        }
        if let Some(last) = mask.last_mut() {
            *last &= self.tail;
        }
        mask
    }

    /// Whether every row's bit is set.
    fn full(&self, mask: &[u64]) -> bool {
        match mask.split_last() {
            Some((&last, rest)) => last == self.tail && rest.iter().all(|&w| w == u64::MAX),
            None => true,
        }
    }
}
