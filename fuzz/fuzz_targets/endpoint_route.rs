//! Routing never panics on arbitrary paths and verbs.
#![no_main]
use aztable_wire::endpoint::Endpoint;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (u8, String)| {
    let (m, path) = input;
    let method = ["GET", "POST", "PUT", "MERGE", "PATCH", "DELETE", "OPTIONS"][usize::from(m) % 7];
    let _ = Endpoint::route(method, &path, None, None);
});
