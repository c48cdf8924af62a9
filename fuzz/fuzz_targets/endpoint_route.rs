//! Routing never panics, and whatever it accepts renders back to a request that routes to
//! the same endpoint (and renders the same way again): route → render → route.
#![no_main]
use aztable_wire::endpoint::Endpoint;
use libfuzzer_sys::fuzz_target;

const METHODS: [&str; 8] = ["GET", "POST", "PUT", "MERGE", "PATCH", "DELETE", "OPTIONS", "HEAD"];
const COMPS: [Option<&str>; 4] = [None, Some("acl"), Some("properties"), Some("stats")];
const RESTYPES: [Option<&str>; 2] = [None, Some("service")];

fuzz_target!(|input: (u8, u8, String)| {
    let (m, q, path) = input;
    let method = METHODS[usize::from(m) % METHODS.len()];
    let comp = COMPS[usize::from(q) % COMPS.len()];
    let restype = RESTYPES[usize::from(q / 4) % RESTYPES.len()];
    let Ok(endpoint) = Endpoint::route(method, &path, comp, restype) else { return };
    let request = endpoint.to_request();
    let again = Endpoint::route(request.method, &request.path, request.comp, request.restype);
    assert_eq!(
        again.as_ref().map_err(|e| e.code),
        Ok(&endpoint),
        "{method} {path:?} rendered as {request:?}"
    );
    assert_eq!(endpoint.to_request(), request, "rendering is a function of the endpoint");
});
