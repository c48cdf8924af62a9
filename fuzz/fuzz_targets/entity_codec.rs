//! Entity value decoding (heads, heaps, projections) never panics on arbitrary bytes;
//! whatever decodes re-encodes and decodes to the same entity, and a projection of any
//! of its properties agrees with the full decoding.
#![no_main]
use aztable_model::EdmValue;
use aztable_store::codec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (Vec<u8>, Option<Vec<u8>>, Vec<String>)| {
    let (head, heap, names) = input;
    let names: Vec<String> = names.into_iter().take(16).collect();
    let mut slots = vec![None; names.len()];
    let _ = codec::heap_needed(&head);
    let _ = codec::decode_projection(&head, None, &names, &mut slots);
    let _ = codec::decode_projection(&head, heap.as_deref(), &names, &mut slots);
    let Ok(e) = codec::decode_entity("p".into(), "r".into(), &head, heap.as_deref()) else {
        return;
    };
    let enc = codec::encode_entity(&e);
    let again = codec::decode_entity("p".into(), "r".into(), &enc.head, enc.heap.as_deref())
        .expect("a re-encoded entity decodes");
    // (compared through Debug, where NaN equals NaN)
    assert_eq!(format!("{again:?}"), format!("{e:?}"));
    let mut wanted: Vec<String> = Vec::new();
    for (n, _) in &e.properties {
        if !wanted.contains(n) && wanted.len() < 16 {
            wanted.push(n.clone());
        }
    }
    let mut slots = vec![None; wanted.len()];
    let ts = codec::decode_projection(&enc.head, enc.heap.as_deref(), &wanted, &mut slots)
        .expect("a re-encoded entity projects");
    assert_eq!(ts, Some(e.timestamp));
    for (name, slot) in wanted.iter().zip(&slots) {
        assert_eq!(format!("{slot:?}"), format!("{:?}", e.get(name).map(EdmValue::borrowed)));
    }
});
