//! Entity decoding never panics; what decodes re-encodes and decodes to the same
//! properties.
#![no_main]
use aztable::model::{Entity, Ticks};
use aztable::odata::{self, Metadata, Urls};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(parsed) = odata::parse_entity(data) else { return };
    let e = Entity {
        partition_key: parsed.partition_key.unwrap_or_default(),
        row_key: parsed.row_key.unwrap_or_default(),
        timestamp: Ticks(638_000_000_000_000_000),
        properties: parsed.properties,
    };
    let urls = Urls { base: "http://127.0.0.1:10002/devstoreaccount1", account: "devstoreaccount1" };
    let body = odata::entity_response(&e, "t", Metadata::Minimal, None, &urls);
    let again = odata::parse_entity(&body).expect("our own output must parse");
    assert_eq!(again.properties.len(), e.properties.len());
});
