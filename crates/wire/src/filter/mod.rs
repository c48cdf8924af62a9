//! The `$filter` query language of Query Entities and Query Tables: parsing
//! ([`parse`]), evaluation ([`eval()`], [`eval_table_name`]) and scan planning
//! ([`plan()`]); [`Compiled`] evaluates one filter over many rows, row by row or, on
//! rows held as columns, a column at a time ([`columnar`]). Pure: no I/O, no async, no storage.
//!
//! ```text
//! text ──lexer──► tokens ──parser──► Expr ──eval──► bool (per entity)
//!                                      └──plan──► KeyRange (what to scan)
//! ```
//!
//! Follows the real service, not Azurite: lowercase keywords only, typed literals
//! compared only with properties of the same Edm type (Int64 numerically), constants
//! allowed on either side; not the documented limit of 15 comparisons, which the
//! service does not enforce, but [`MAX_COMPARISONS`] (500) and [`MAX_DEPTH`]. See [`eval`](mod@eval) for the
//! evaluation rules and [`lexer`] for the literal forms. Errors become 400
//! `InvalidInput` through `From<FilterError> for ApiError`.

pub mod ast;
pub mod columnar;
pub mod compiled;
pub mod error;
pub mod eval;
pub mod lexer;
pub mod parser;
pub mod plan;

#[cfg(test)]
mod tests;

pub use ast::{CmpOp, Expr};
pub use columnar::{Leaf, Shape};
pub use compiled::{Compiled, Requirement};
pub use error::FilterError;
pub use eval::{eval, eval_row, eval_table_name};
pub use parser::{parse, MAX_COMPARISONS, MAX_DEPTH};
pub use plan::plan;
