//! Not a fuzz target of the code: the planted crash that `scripts/fuzz.sh --self-test`
//! feeds it, so that the test command proves its fuzz gate fails on a crash. Left out
//! of the ordinary runs (the script's default target list skips it).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data == b"aztable fuzz gate: the planted crash" {
        panic!("the planted crash of the fuzz gate's self-test");
    }
});
