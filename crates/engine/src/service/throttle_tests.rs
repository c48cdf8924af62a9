//! Bucket arithmetic on a virtual clock: capacity, continuous refill, the 100-entity
//! floor, batch costs, query debt, which target refuses, and the memory bound.

use super::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A clock the test moves by hand.
#[derive(Clone, Default)]
struct VirtualTime(Arc<AtomicU64>);

impl VirtualTime {
    fn advance_ms(&self, ms: u64) {
        self.0.fetch_add(ms * 1_000_000, Ordering::SeqCst);
    }
}

impl TimeSource for VirtualTime {
    fn nanos(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

fn throttle(partition: u32, account: u32) -> (Throttle, VirtualTime) {
    let time = VirtualTime::default();
    (Throttle::with_time(Rates { partition, account }, Box::new(time.clone())), time)
}

/// How many requests of `cost` pass in a row right now.
fn passes(t: &Throttle, pk: &str, cost: u32) -> usize {
    (0..100_000).take_while(|_| t.admit("acct", "t", Some(pk), cost).is_ok()).count()
}

#[test]
fn an_idle_partition_holds_one_second_of_its_rate() {
    let (t, _) = throttle(2_000, 1_000_000);
    assert_eq!(passes(&t, "p", 1), 2_000);
    assert_eq!(t.admit("acct", "t", Some("p"), 1), Err(Refusal::Partition));
    // another partition of the same table, and the same key in another table, are apart
    assert_eq!(passes(&t, "q", 1), 2_000);
    assert!(t.admit("acct", "other", Some("p"), 1).is_ok());
}

#[test]
fn capacity_is_never_below_one_batch() {
    let (t, time) = throttle(50, 1_000_000);
    // a 100-operation batch passes an idle partition even at 50 per second
    assert!(t.admit("acct", "t", Some("p"), 100).is_ok());
    assert_eq!(t.admit("acct", "t", Some("p"), 1), Err(Refusal::Partition));
    // and it takes two seconds at 50/s before the next one fits
    time.advance_ms(1_000);
    assert_eq!(t.admit("acct", "t", Some("p"), 100), Err(Refusal::Partition));
    time.advance_ms(1_000);
    assert!(t.admit("acct", "t", Some("p"), 100).is_ok());
    // the bucket holds 100, not 50: 100 single writes pass an idle partition
    assert_eq!(passes(&t, "q", 1), 100);
    time.advance_ms(2_000);
    assert_eq!(passes(&t, "q", 1), 100, "refills to 100 in two seconds");
}

#[test]
fn tokens_refill_continuously_up_to_capacity() {
    let (t, time) = throttle(1_000, 1_000_000);
    assert_eq!(passes(&t, "p", 1), 1_000);
    time.advance_ms(10); // 10 ms at 1,000/s: 10 tokens
    assert_eq!(passes(&t, "p", 1), 10);
    time.advance_ms(3); // fractions accumulate: 3 now
    assert_eq!(passes(&t, "p", 1), 3);
    time.advance_ms(60_000); // a long idle time still fills only one second
    assert_eq!(passes(&t, "p", 1), 1_000);
}

#[test]
fn a_batch_costs_its_operations_and_is_refused_whole() {
    let (t, _) = throttle(2_000, 1_000_000);
    assert_eq!(passes(&t, "p", 100), 20);
    // 0 tokens left: a batch of 1 is refused, and a refused request takes nothing
    let (t, time) = throttle(200, 1_000_000);
    assert!(t.admit("acct", "t", Some("p"), 150).is_ok());
    assert_eq!(t.admit("acct", "t", Some("p"), 100), Err(Refusal::Partition));
    assert_eq!(passes(&t, "p", 50), 1, "the refused batch left its 50 tokens");
    time.advance_ms(500);
    assert_eq!(passes(&t, "p", 100), 1);
    // cost 0 counts as 1
    let (t, _) = throttle(100, 1_000_000);
    assert_eq!(passes(&t, "p", 0), 100);
}

#[test]
fn the_account_target_spans_partitions_and_names_itself() {
    let (t, time) = throttle(2_000, 3_000);
    assert_eq!(passes(&t, "a", 1), 2_000);
    assert_eq!(passes(&t, "b", 1), 1_000);
    assert_eq!(t.admit("acct", "t", Some("c"), 1), Err(Refusal::Account));
    // requests without a partition (table operations) count against the account only
    assert_eq!(t.admit("acct", "t", None, 1), Err(Refusal::Account));
    assert!(t.admit("other", "t", Some("c"), 1).is_ok(), "accounts are apart");
    // the partition is checked first: a full partition says so even when the account is too
    assert_eq!(t.admit("acct", "t", Some("a"), 1), Err(Refusal::Partition));
    time.advance_ms(100);
    assert_eq!(passes(&t, "c", 1), 300);
    let e = ApiError::from(Refusal::Account);
    assert_eq!((e.status(), e.code), (503, ErrorCode::ServerBusy));
    assert_eq!(e.message, "Operations per second is over the account limit.");
    let e = ApiError::from(Refusal::Partition);
    assert_eq!(e.message, "The server is currently unable to receive requests. Please retry your request.");
}

#[test]
fn refused_partition_leaves_the_account_untouched() {
    let (t, _) = throttle(100, 150);
    assert_eq!(passes(&t, "a", 1), 100);
    // 200 refusals of partition a took nothing from the account: 50 still pass elsewhere
    for _ in 0..200 {
        assert_eq!(t.admit("acct", "t", Some("a"), 1), Err(Refusal::Partition));
    }
    assert_eq!(passes(&t, "b", 1), 50);
}

#[test]
fn entities_served_are_charged_after_the_fact_into_debt() {
    let (t, time) = throttle(100, 1_000_000);
    assert!(t.admit("acct", "t", Some("p"), 1).is_ok());
    // the query returned 1,000 entities of p: 999 more, debt capped at one capacity
    t.charge("acct", "t", [("p", 999)], 999);
    assert_eq!(t.admit("acct", "t", Some("p"), 1), Err(Refusal::Partition));
    time.advance_ms(1_000); // -100 + 100 = 0
    assert_eq!(t.admit("acct", "t", Some("p"), 1), Err(Refusal::Partition));
    time.advance_ms(10);
    assert_eq!(passes(&t, "p", 1), 1);
    // the account is charged what it is told, whatever the partitions got
    let (t, _) = throttle(1_000_000, 500);
    t.charge("acct", "t", [("a", 200), ("b", 200)], 499);
    assert_eq!(passes(&t, "c", 1), 1);
    t.charge("acct", "t", [("a", 0)], 0);
    assert_eq!(t.tracked_partitions(), 3, "a zero charge creates no bucket");
}

#[test]
fn idle_partitions_are_forgotten_and_the_map_stays_bounded() {
    let (t, time) = throttle(1_000, u32::MAX);
    for i in 0..MAX_PARTITIONS {
        assert!(t.admit("acct", "t", Some(&i.to_string()), 1).is_ok());
    }
    assert_eq!(t.tracked_partitions(), MAX_PARTITIONS);
    // one second later every bucket has refilled: a new partition sweeps them all
    time.advance_ms(1_000);
    assert!(t.admit("acct", "t", Some("new"), 1).is_ok());
    assert_eq!(t.tracked_partitions(), 1);

    // all busy (drained, no time passes): the least recently used half goes
    for i in 0..MAX_PARTITIONS - 1 {
        assert!(t.admit("acct", "t", Some(&format!("busy{i}")), 1).is_ok());
    }
    assert_eq!(t.tracked_partitions(), MAX_PARTITIONS);
    for i in 0..3 * MAX_PARTITIONS {
        let _ = t.admit("acct", "t", Some(&format!("more{i}")), 1);
        assert!(t.tracked_partitions() <= MAX_PARTITIONS);
    }
}

#[test]
fn table_names_are_case_insensitive() {
    let (t, _) = throttle(100, 1_000_000);
    assert!(t.admit("acct", "People", Some("p"), 100).is_ok());
    assert_eq!(t.admit("acct", "people", Some("p"), 1), Err(Refusal::Partition));
    assert!(t.admit("acct", "people", Some("P"), 1).is_ok(), "keys are case-sensitive");
}
