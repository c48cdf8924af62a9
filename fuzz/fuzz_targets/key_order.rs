//! Encoded entity keys sort exactly like (PartitionKey, RowKey) in UTF-16 order, and
//! decode back.
#![no_main]
use aztable_store::keys;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (String, String, String, String)| {
    let (a1, b1, a2, b2) = input;
    let k1 = keys::entity_key(7, &a1, &b1);
    let k2 = keys::entity_key(7, &a2, &b2);
    let u = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
    assert_eq!(k1.cmp(&k2), (u(&a1), u(&b1)).cmp(&(u(&a2), u(&b2))));
    assert_eq!(keys::decode_entity_key(&k1), Some((7, a1, b1)));
});
