//! Production's surprises on demand, off by default: `--tableDeleteDelay` (Create Table
//! answers 409 `TableBeingDeleted` for a while after Delete Table; the engine keeps the
//! names), `--shortPages` (Query Entities pages that end early with a continuation, cut
//! here) and `--clockSkew` (the server's clock moved off the host's; `model::time`
//! applies it).
//!
//! A short page is cut after the handler's page is read: at the first partition boundary
//! in the page when there is one (the service ends pages there too), otherwise after a
//! random number of rows; the continuation is the first row left out, so every row still
//! comes exactly once. The choice of the n-th query is a hash of (seed, n), as faults'.

use crate::config::Args;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The surprise flags, validated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Surprises {
    pub table_delete_delay: Option<Duration>,
    /// `--shortPages` and `--shortPagesSeed`.
    pub short_pages: Option<(f64, u64)>,
    /// `--clockSkew`, seconds.
    pub clock_skew: i64,
}

impl Surprises {
    pub(crate) fn from_args(args: &Args) -> Result<Surprises, String> {
        let short_pages = match args.short_pages {
            Some(rate) if !(0.0..=1.0).contains(&rate) => {
                return Err(format!("--shortPages: {rate} is not a fraction between 0 and 1"))
            }
            Some(rate) => Some((rate, args.short_pages_seed)),
            None => None,
        };
        Ok(Surprises {
            table_delete_delay: args.table_delete_delay.map(Duration::from_secs),
            short_pages,
            clock_skew: args.clock_skew,
        })
    }
}

/// The running `--shortPages` cutter.
#[derive(Debug)]
pub struct ShortPages {
    rate: f64,
    seed: u64,
    judged: AtomicU64,
}

impl ShortPages {
    pub fn new(rate: f64, seed: u64) -> Self {
        ShortPages { rate, seed, judged: AtomicU64::new(0) }
    }

    /// Where to cut a page whose rows carry these PartitionKeys (in order): `Some(n)`
    /// keeps the first `n` rows (1 ≤ n < len) and continues at row n. A page of fewer
    /// than two rows is never cut.
    pub fn cut<'a>(&self, partition_keys: impl ExactSizeIterator<Item = &'a str>) -> Option<usize> {
        let len = partition_keys.len();
        if len < 2 {
            return None;
        }
        let n = self.judged.fetch_add(1, Ordering::Relaxed);
        if crate::fault::unit(self.seed, n, 0) >= self.rate {
            return None;
        }
        let mut previous: Option<&str> = None;
        for (i, pk) in partition_keys.enumerate() {
            if previous.is_some_and(|p| p != pk) {
                return Some(i);
            }
            previous = Some(pk);
        }
        // one partition: a random length in 1..len
        let pick = crate::fault::unit(self.seed, n, 1) * (len - 1) as f64;
        Some(1 + (pick as usize).min(len - 2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_cut_at_partition_boundaries_or_within_one_partition() {
        let always = ShortPages::new(1.0, 7);
        assert_eq!(always.cut(["a", "a", "b", "b"].into_iter()), Some(2));
        assert_eq!(always.cut(["a"].into_iter()), None, "one row is never cut");
        for _ in 0..100 {
            let at = always.cut(["p"; 5].into_iter()).unwrap();
            assert!((1..5).contains(&at), "{at}");
        }
        let never = ShortPages::new(0.0, 7);
        assert_eq!(never.cut(["a", "b"].into_iter()), None);
    }

    #[test]
    fn the_same_seed_cuts_the_same_pages() {
        let run = |seed| {
            let s = ShortPages::new(0.5, seed);
            (0..64).map(|_| s.cut(["p"; 10].into_iter())).collect::<Vec<_>>()
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
        let cut = run(3).iter().filter(|c| c.is_some()).count();
        assert!((16..=48).contains(&cut), "about half of 64: {cut}");
    }
}
