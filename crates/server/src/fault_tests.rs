//! Flag validation, the determinism of the fault sequence per seed, its rate, and the
//! operation and table filters.

use super::*;

fn spec(rate: f64, after: f64, seed: u64, ops: &[&str], tables: &[&str]) -> FaultSpec {
    let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    FaultSpec::from_flags(Some(rate), Some(after), seed, &owned(ops), &owned(tables))
        .expect("valid")
        .expect("on")
}

fn sequence(f: &Faults, op: &str, n: usize) -> Vec<Fault> {
    (0..n).map(|_| f.decide(op, Some("t"))).collect()
}

#[test]
fn flags_are_validated() {
    let s = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(FaultSpec::from_flags(None, None, 7, &[], &[]), Ok(None));
    for bad in [-0.1, 1.5, f64::NAN] {
        let e = FaultSpec::from_flags(Some(bad), None, 0, &[], &[]).expect_err("out of range");
        assert!(e.contains("--faultRate"), "{e}");
        let e = FaultSpec::from_flags(None, Some(bad), 0, &[], &[]).expect_err("out of range");
        assert!(e.contains("--faultAfterWriteRate"), "{e}");
    }
    let e = FaultSpec::from_flags(Some(0.5), None, 0, &s(&["InsertEntity", "Insert"]), &[]).expect_err("op");
    assert!(e.contains("'Insert'") && e.contains("QueryEntities"), "{e}");
    // admin operations are not fault targets
    for admin in ["SetTableAcl", "GetTableServiceProperties", "PreflightTableRequest"] {
        assert!(FaultSpec::from_flags(Some(0.5), None, 0, &s(&[admin]), &[]).is_err(), "{admin}");
    }
    assert!(FaultSpec::from_flags(None, None, 0, &s(&["InsertEntity"]), &[]).is_err());
    assert!(FaultSpec::from_flags(None, None, 0, &[], &s(&["t"])).is_err());
    let ok = FaultSpec::from_flags(None, Some(1.0), 3, &s(&[" InsertEntity", ""]), &s(&["People"]))
        .expect("valid")
        .expect("on");
    assert_eq!((ok.rate, ok.after_write_rate, ok.seed), (0.0, 1.0, 3));
    assert_eq!((ok.ops, ok.tables), (s(&["InsertEntity"]), s(&["people"])));
}

#[test]
fn the_same_seed_gives_the_same_sequence() {
    let a = sequence(&Faults::new(spec(0.3, 0.0, 7, &[], &[])), "InsertEntity", 500);
    let b = sequence(&Faults::new(spec(0.3, 0.0, 7, &[], &[])), "InsertEntity", 500);
    let c = sequence(&Faults::new(spec(0.3, 0.0, 8, &[], &[])), "InsertEntity", 500);
    assert_eq!(a, b);
    assert_ne!(a, c, "another seed, another sequence");
    // the rate holds, roughly
    let busy = a.iter().filter(|f| **f == Fault::Busy).count();
    assert!((100..200).contains(&busy), "{busy} of 500 at 0.3");
}

#[test]
fn rates_zero_and_one_are_never_and_always() {
    assert!(sequence(&Faults::new(spec(0.0, 0.0, 1, &[], &[])), "GetEntity", 1000)
        .iter()
        .all(|f| *f == Fault::None));
    assert!(sequence(&Faults::new(spec(1.0, 0.0, 1, &[], &[])), "GetEntity", 1000)
        .iter()
        .all(|f| *f == Fault::Busy));
    // after-write faults hit writes only; a read counts but is served
    let f = Faults::new(spec(0.0, 1.0, 1, &[], &[]));
    assert!(sequence(&f, "InsertEntity", 100).iter().all(|x| *x == Fault::AfterWrite));
    assert!(sequence(&f, "Batch", 10).iter().all(|x| *x == Fault::AfterWrite));
    assert!(sequence(&f, "QueryEntities", 100).iter().all(|x| *x == Fault::None));
}

#[test]
fn busy_and_after_write_draws_are_independent() {
    let f = Faults::new(spec(0.5, 0.5, 42, &[], &[]));
    let seq = sequence(&f, "MergeEntity", 1000);
    let count = |k| seq.iter().filter(|f| **f == k).count();
    // about half busy; of the rest about half after-write
    assert!((400..600).contains(&count(Fault::Busy)));
    assert!((170..330).contains(&count(Fault::AfterWrite)));
}

#[test]
fn filters_narrow_operations_and_tables() {
    let f = Faults::new(spec(1.0, 0.0, 0, &["InsertEntity", "Batch"], &["Orders"]));
    assert_eq!(f.decide("InsertEntity", Some("orders")), Fault::Busy);
    assert_eq!(f.decide("InsertEntity", Some("ORDERS")), Fault::Busy);
    assert_eq!(f.decide("InsertEntity", Some("people")), Fault::None);
    assert_eq!(f.decide("QueryEntities", Some("orders")), Fault::None);
    assert_eq!(f.decide("Batch", Some("orders")), Fault::Busy);
    assert_eq!(f.decide("Batch", None), Fault::None, "a batch whose table is unknown");
    assert!(f.filters_tables());
    // without a table filter, requests naming no table are hit too; admin ones never
    let f = Faults::new(spec(1.0, 1.0, 0, &[], &[]));
    assert!(!f.filters_tables());
    assert_eq!(f.decide("QueryTables", None), Fault::Busy);
    for admin in ["PreflightTableRequest", "SetTableAcl", "GetTableServiceStats", "Unknown"] {
        assert_eq!(f.decide(admin, Some("t")), Fault::None, "{admin}");
    }
}

#[test]
fn requests_outside_the_filters_do_not_shift_the_sequence() {
    let plain = sequence(&Faults::new(spec(0.4, 0.0, 9, &["InsertEntity"], &[])), "InsertEntity", 200);
    let f = Faults::new(spec(0.4, 0.0, 9, &["InsertEntity"], &[]));
    let mixed: Vec<Fault> = (0..200)
        .map(|_| {
            assert_eq!(f.decide("GetEntity", Some("t")), Fault::None);
            f.decide("InsertEntity", Some("t"))
        })
        .collect();
    assert_eq!(plain, mixed);
}
