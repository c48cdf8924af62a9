//! `$batch` parsing never panics on arbitrary bytes with an arbitrary Content-Type, and
//! honours its limits: a body over `max_body` or a change set of more than `max_ops`
//! operations never parses. Reading a parsed change set ([`read_change_set`]) never
//! panics either: it reads every operation, or names one of them as the failure.
#![no_main]
use aztable_wire::batch::{parse, read_change_set, BatchCaller, BatchKind, Limits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (u8, u16, &str, &[u8])| {
    let (max_ops, max_body, content_type, body) = input;
    // Small limits, so the fuzzer can cross them; 0 included.
    let limits = Limits { max_ops: usize::from(max_ops % 8), max_body: usize::from(max_body) };
    // Also the common shape, so that the fuzzer need not guess the boundary syntax.
    for ct in [content_type, "multipart/mixed; boundary=batch_1"] {
        let Ok(req) = parse(ct, body, &limits) else { continue };
        assert!(body.len() <= limits.max_body, "a body of {} bytes over {:?} parsed", body.len(), limits);
        assert!(!req.ops.is_empty(), "an empty batch parsed");
        match req.kind {
            BatchKind::ChangeSet => {
                assert!(req.ops.len() <= limits.max_ops, "{} ops over {:?}", req.ops.len(), limits)
            }
            BatchKind::Query => assert_eq!(req.ops.len(), 1),
        }
        for (i, op) in req.ops.iter().enumerate() {
            assert_eq!(op.index, i);
        }
        if req.kind == BatchKind::ChangeSet {
            let count = req.ops.len();
            for atom_allowed in [false, true] {
                let caller = BatchCaller { account: "devstoreaccount1", sas: None, atom_allowed };
                match read_change_set(req.clone(), &caller) {
                    Ok(cs) => {
                        assert_eq!(cs.ops.len(), count);
                        assert!(cs.ops.iter().enumerate().all(|(i, op)| op.reply.index == i));
                    }
                    Err(f) => assert!(f.reply.index < count, "failure at {} of {count}", f.reply.index),
                }
            }
        }
    }
});
