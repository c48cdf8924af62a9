//! Tests of the whole `filter` module: parser cases, evaluation truth tables per Edm
//! type, planner cases and property tests.

mod eval;
mod parse;
mod plan;
mod prop;

use crate::filter::{parse, Expr};

/// Parses or panics with the error (tests only).
fn p(s: &str) -> Expr {
    match parse(s) {
        Ok(e) => e,
        Err(e) => panic!("{s:?}: {e}"),
    }
}
