//! Entities per second of one partition: a ring of per-second counts over the last
//! [`WINDOW_SECS`] seconds, and the peak second since tracking began.

/// Seconds the ring remembers (five minutes).
pub const WINDOW_SECS: u32 = 300;

/// A slot no second has used yet.
const UNUSED: u32 = u32::MAX;

/// Per-second counts; seconds are counted from the advisor's start.
#[derive(Debug, Clone)]
pub struct Rates {
    /// (second, count) at `second % WINDOW_SECS`.
    ring: Box<[(u32, u32)]>,
    /// The busiest second so far and its count.
    peak: (u32, u32),
    /// Seconds before this one are forgotten ([`Rates::reset`]).
    since: u32,
}

impl Default for Rates {
    fn default() -> Self {
        Rates { ring: vec![(UNUSED, 0); WINDOW_SECS as usize].into_boxed_slice(), peak: (0, 0), since: 0 }
    }
}

impl Rates {
    /// Counts `n` entities in second `sec`.
    pub fn add(&mut self, sec: u32, n: u32) {
        let Some(slot) = self.ring.get_mut((sec % WINDOW_SECS) as usize) else { return };
        if slot.0 != sec {
            *slot = (sec, 0);
        }
        slot.1 = slot.1.saturating_add(n);
        if slot.1 > self.peak.1 {
            self.peak = (sec, slot.1);
        }
    }

    /// Entities in second `sec` (0 if it is out of the window or before a reset).
    pub fn at(&self, sec: u32) -> u32 {
        match self.ring.get((sec % WINDOW_SECS) as usize) {
            Some(&(s, n)) if s == sec && sec >= self.since => n,
            _ => 0,
        }
    }

    /// Forgets every count, from second `now` on, in O(1): slots of earlier seconds are
    /// ignored (and overwritten when their second comes round), only `now`'s is cleared.
    pub fn reset(&mut self, now: u32) {
        self.since = now;
        self.peak = (now, 0);
        if let Some(slot) = self.ring.get_mut((now % WINDOW_SECS) as usize) {
            *slot = (UNUSED, 0);
        }
    }

    /// The busiest second (its number and count).
    pub fn peak(&self) -> (u32, u32) {
        self.peak
    }

    /// The last `WINDOW_SECS` seconds up to and including `now`, oldest first (seconds
    /// before the start count 0).
    pub fn window(&self, now: u32) -> Vec<u32> {
        (0..WINDOW_SECS)
            .map(|back| now.checked_sub(WINDOW_SECS - 1 - back).map_or(0, |s| self.at(s)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_second_forget_old_seconds_and_keep_the_peak() {
        let mut r = Rates::default();
        r.add(3, 5);
        r.add(3, 2);
        r.add(4, 1);
        assert_eq!((r.at(3), r.at(4), r.at(5), r.peak()), (7, 1, 0, (3, 7)));
        let w = r.window(4);
        assert_eq!(w.len(), WINDOW_SECS as usize);
        assert_eq!(&w[w.len() - 2..], &[7, 1]);
        // the same slot, one window later: the old second is gone, the peak is not
        r.add(3 + WINDOW_SECS, 1);
        assert_eq!((r.at(3), r.at(3 + WINDOW_SECS), r.peak()), (0, 1, (3, 7)));
        assert_eq!(r.window(3 + 2 * WINDOW_SECS).iter().sum::<u32>(), 0);
        // a reset forgets the past and the current second, and keeps counting
        r.add(3 + WINDOW_SECS + 1, 4);
        r.reset(3 + WINDOW_SECS + 1);
        assert_eq!((r.at(3 + WINDOW_SECS), r.at(3 + WINDOW_SECS + 1), r.peak().1), (0, 0, 0));
        r.add(3 + WINDOW_SECS + 1, 2);
        assert_eq!((r.at(3 + WINDOW_SECS + 1), r.peak()), (2, (3 + WINDOW_SECS + 1, 2)));
        assert_eq!(r.window(3 + WINDOW_SECS + 1).iter().sum::<u32>(), 2);
    }
}

/// [`Rates`] without a lock, for counts every request of a table adds to: each slot
/// packs (second, count) into one atomic word, updated by compare-and-swap.
#[derive(Debug)]
pub struct AtomicRates {
    ring: Box<[std::sync::atomic::AtomicU64]>,
    /// count << 32 | second of the busiest second, raised with `fetch_max`.
    peak: std::sync::atomic::AtomicU64,
}

impl Default for AtomicRates {
    fn default() -> Self {
        let unused = u64::from(UNUSED);
        AtomicRates {
            ring: (0..WINDOW_SECS).map(|_| std::sync::atomic::AtomicU64::new(unused)).collect(),
            peak: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

impl AtomicRates {
    /// Counts `n` entities in second `sec`.
    pub fn add(&self, sec: u32, n: u32) {
        use std::sync::atomic::Ordering::Relaxed;
        let Some(slot) = self.ring.get((sec % WINDOW_SECS) as usize) else { return };
        let mut cur = slot.load(Relaxed);
        let count = loop {
            let (s, c) = ((cur & 0xffff_ffff) as u32, (cur >> 32) as u32);
            let count = if s == sec { c.saturating_add(n) } else { n };
            match slot.compare_exchange_weak(cur, (u64::from(count) << 32) | u64::from(sec), Relaxed, Relaxed)
            {
                Ok(_) => break count,
                Err(now) => cur = now,
            }
        };
        self.peak.fetch_max((u64::from(count) << 32) | u64::from(sec), Relaxed);
    }

    /// A copy to read from.
    pub fn snapshot(&self) -> Rates {
        use std::sync::atomic::Ordering::Relaxed;
        let ring = self
            .ring
            .iter()
            .map(|s| {
                let v = s.load(Relaxed);
                ((v & 0xffff_ffff) as u32, (v >> 32) as u32)
            })
            .collect();
        let p = self.peak.load(Relaxed);
        Rates { ring, peak: ((p & 0xffff_ffff) as u32, (p >> 32) as u32), since: 0 }
    }
}

#[cfg(test)]
mod atomic_tests {
    use super::*;

    #[test]
    fn atomic_rates_count_like_rates_across_threads() {
        let r = AtomicRates::default();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for i in 0..1000u32 {
                        r.add(10 + i % 3, 1);
                    }
                });
            }
        });
        r.add(12 + WINDOW_SECS, 5);
        let snap = r.snapshot();
        assert_eq!((snap.at(10), snap.at(11), snap.at(12), snap.at(12 + WINDOW_SECS)), (1336, 1332, 0, 5));
        assert_eq!(snap.peak(), (10, 1336));
    }
}
