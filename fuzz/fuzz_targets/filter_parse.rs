//! `$filter` parsing never panics on arbitrary text, and whatever parses prints back to
//! text that parses to the same tree.
#![no_main]
use aztable_wire::filter::parse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Ok(expr) = parse(text) else { return };
    let printed = expr.to_string();
    assert_eq!(parse(&printed), Ok(expr), "{text:?} printed as {printed:?}");
});
