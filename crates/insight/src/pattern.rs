//! Append-only and prepend-only key patterns: whether successive inserts carry keys
//! that keep increasing (timestamps, sequence numbers) or keep decreasing (reverse
//! ticks). Pure: the caller feeds each key with the one before it.

use serde::Serialize;
use std::cmp::Ordering;

/// Steps a trend needs before it is named.
pub const MIN_STEPS: u64 = 32;

/// Share of steps (in percent) that must go one way for the trend to be named.
pub const MIN_SHARE_PERCENT: u64 = 95;

/// Which way successive keys went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Trend {
    /// Steps to a greater key.
    pub up: u64,
    /// Steps to a smaller key.
    pub down: u64,
    /// The current run of steps the same way (positive: up, negative: down).
    run: i64,
    /// The longest runs up and down.
    pub longest_up: u64,
    pub longest_down: u64,
}

/// A named key pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// Keys keep increasing: every insert lands at the end of the key range.
    AppendOnly,
    /// Keys keep decreasing: every insert lands at the start of the key range.
    PrependOnly,
}

impl Pattern {
    pub fn as_str(self) -> &'static str {
        match self {
            Pattern::AppendOnly => "append-only",
            Pattern::PrependOnly => "prepend-only",
        }
    }
}

impl Trend {
    /// Notes one insert of `next` after `prev` (equal keys say nothing).
    pub fn step(&mut self, prev: &str, next: &str) {
        match next.cmp(prev) {
            Ordering::Greater => {
                self.up += 1;
                self.run = if self.run > 0 { self.run + 1 } else { 1 };
                self.longest_up = self.longest_up.max(self.run.unsigned_abs());
            }
            Ordering::Less => {
                self.down += 1;
                self.run = if self.run < 0 { self.run - 1 } else { -1 };
                self.longest_down = self.longest_down.max(self.run.unsigned_abs());
            }
            Ordering::Equal => {}
        }
    }

    /// Both trends' steps together (e.g. the RowKeys of every partition of a table).
    pub fn add(&mut self, other: &Trend) {
        self.up += other.up;
        self.down += other.down;
        self.longest_up = self.longest_up.max(other.longest_up);
        self.longest_down = self.longest_down.max(other.longest_down);
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.up + self.down
    }

    /// The pattern, once there are [`MIN_STEPS`] steps and at least
    /// [`MIN_SHARE_PERCENT`] of them went the same way.
    pub fn pattern(&self) -> Option<Pattern> {
        let steps = self.steps();
        if steps < MIN_STEPS {
            return None;
        }
        if self.up * 100 >= steps * MIN_SHARE_PERCENT {
            Some(Pattern::AppendOnly)
        } else if self.down * 100 >= steps * MIN_SHARE_PERCENT {
            Some(Pattern::PrependOnly)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trend_of(keys: &[String]) -> Trend {
        let mut t = Trend::default();
        for w in keys.windows(2) {
            t.step(&w[0], &w[1]);
        }
        t
    }

    /// A small deterministic generator (xorshift), so the test needs no crate.
    fn randoms(n: usize, mut x: u64) -> Vec<u64> {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .collect()
    }

    #[test]
    fn increasing_timestamps_are_append_only() {
        let keys: Vec<String> =
            (0..200u64).map(|i| format!("2024-05-01T12:{:02}:{:02}", i / 60, i % 60)).collect();
        let t = trend_of(&keys);
        assert_eq!(t.pattern(), Some(Pattern::AppendOnly));
        assert_eq!((t.up, t.down, t.longest_up), (199, 0, 199));
    }

    #[test]
    fn reverse_ticks_are_prepend_only() {
        const MAX_TICKS: u64 = 3_155_378_975_999_999_999;
        let keys: Vec<String> = (0..100u64)
            .map(|i| format!("{:019}", MAX_TICKS - 638_500_000_000_000_000 - i * 10_000_000))
            .collect();
        assert_eq!(trend_of(&keys).pattern(), Some(Pattern::PrependOnly));
    }

    #[test]
    fn random_keys_are_no_pattern() {
        for seed in [1, 7, 42, 1234567] {
            let keys: Vec<String> = randoms(1000, seed).into_iter().map(|x| format!("{x:016x}")).collect();
            let t = trend_of(&keys);
            assert_eq!(t.pattern(), None, "seed {seed}: {t:?}");
        }
        // hashed prefixes over increasing timestamps: the advice's remedy is no pattern either
        let keys: Vec<String> =
            (0..1000u64).map(|i| format!("{:02}_{i:010}", randoms(1, i + 1)[0] % 16)).collect();
        assert_eq!(trend_of(&keys).pattern(), None);
    }

    #[test]
    fn few_steps_or_a_mostly_increasing_mix_say_nothing() {
        let keys: Vec<String> = (0..10).map(|i| format!("{i:03}")).collect();
        assert_eq!(trend_of(&keys).pattern(), None, "too few steps");
        // one step in ten goes back: 90 % is not enough
        let mut t = Trend::default();
        for i in 0..100 {
            if i % 10 == 0 {
                t.step("b", "a");
            } else {
                t.step("a", "b");
            }
        }
        assert_eq!(t.pattern(), None);
        let (mut a, b) =
            (Trend::default(), trend_of(&(0..40).map(|i| format!("{i:03}")).collect::<Vec<_>>()));
        a.add(&b);
        a.add(&b);
        assert_eq!((a.up, a.pattern()), (78, Some(Pattern::AppendOnly)));
    }
}
