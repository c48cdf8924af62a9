//! Entity decoding never panics; what decodes re-encodes and decodes to the same
//! values (doubles bit for bit), at minimal and full metadata.
#![no_main]
use aztable_model::edm::identical as same;
use aztable_model::{Entity, Ticks};
use aztable_wire::odata::{self, Metadata, Urls};
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
    for md in [Metadata::Minimal, Metadata::Full] {
        let body = odata::entity_response(&e, "t", md, None, &urls);
        let again = odata::parse_entity(&body).expect("our own output must parse");
        assert_eq!(
            (again.partition_key.as_deref(), again.row_key.as_deref()),
            (Some(&*e.partition_key), Some(&*e.row_key))
        );
        assert!(same(&again.properties, &e.properties), "round trip changed a value");
    }
});
