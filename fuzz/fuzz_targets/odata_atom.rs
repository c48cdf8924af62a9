//! Atom entry decoding never panics; what decodes re-encodes, as Atom and as JSON, and
//! decodes to the same values (doubles bit for bit).
#![no_main]
use aztable_model::edm::identical as same;
use aztable_model::{Entity, Ticks};
use aztable_wire::odata::{self, atom, Metadata, Urls};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = atom::parse_table_name(data);
    let Ok(parsed) = atom::parse_entity(data) else { return };
    let e = Entity {
        partition_key: parsed.partition_key.unwrap_or_default(),
        row_key: parsed.row_key.unwrap_or_default(),
        timestamp: Ticks(638_000_000_000_000_000),
        properties: parsed.properties,
    };
    let urls = Urls { base: "http://127.0.0.1:10002/devstoreaccount1", account: "devstoreaccount1" };
    let body = atom::entity_response(&e, "t", None, &urls, e.timestamp);
    let again = atom::parse_entity(&body).expect("our own Atom must parse");
    assert_eq!(
        (again.partition_key.as_deref(), again.row_key.as_deref()),
        (Some(&*e.partition_key), Some(&*e.row_key))
    );
    assert!(same(&again.properties, &e.properties), "Atom round trip changed a value");
    let json = odata::entity_response(&e, "t", Metadata::Full, None, &urls);
    let from_json = odata::parse_entity(&json).expect("our own JSON must parse");
    assert!(same(&from_json.properties, &e.properties), "JSON round trip changed a value");
});
