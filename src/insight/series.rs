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
}

impl Default for Rates {
    fn default() -> Self {
        Rates { ring: vec![(UNUSED, 0); WINDOW_SECS as usize].into_boxed_slice(), peak: (0, 0) }
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

    /// Entities in second `sec` (0 if it is out of the window).
    pub fn at(&self, sec: u32) -> u32 {
        match self.ring.get((sec % WINDOW_SECS) as usize) {
            Some(&(s, n)) if s == sec => n,
            _ => 0,
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
    }
}
