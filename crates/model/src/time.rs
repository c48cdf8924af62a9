//! Time as the Table service keeps it: 100 ns ticks since 0001-01-01T00:00:00Z
//! (the .NET `DateTime.Ticks` scale), valid for Edm.DateTime from 1601-01-01 to
//! 9999-12-31, and a clock whose readings strictly increase.

use chrono::{DateTime, Datelike, NaiveDate, Utc};
use std::sync::atomic::{AtomicI64, Ordering};

/// Ticks between 0001-01-01 and 1970-01-01.
const UNIX_EPOCH_TICKS: i64 = 621_355_968_000_000_000;
/// 1601-01-01T00:00:00Z, the smallest Edm.DateTime the service accepts.
pub const MIN_EDM_DATETIME: Ticks = Ticks(504_911_232_000_000_000);
/// 9999-12-31T23:59:59.9999999Z.
pub const MAX_EDM_DATETIME: Ticks = Ticks(3_155_378_975_999_999_999);

/// 100 ns ticks since 0001-01-01T00:00:00Z (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticks(pub i64);

impl Ticks {
    /// Converts from a chrono UTC time.
    pub fn from_datetime(dt: DateTime<Utc>) -> Ticks {
        let secs = dt.timestamp();
        let sub = i64::from(dt.timestamp_subsec_nanos() / 100);
        Ticks(UNIX_EPOCH_TICKS + secs * 10_000_000 + sub)
    }

    /// Parses an ISO 8601 UTC date-time as clients send it for Edm.DateTime and in
    /// `datetime'…'` literals: `YYYY-MM-DDThh:mm[:ss[.f+]]` followed by `Z` or an
    /// offset (`+hh:mm`), or no zone (taken as UTC). Fractions finer than 100 ns
    /// (the Java SDK sends nanoseconds) are rounded to the tick, half to even, as
    /// .NET's `XmlConvert` (the service's parser) does; the carry runs into the
    /// seconds and beyond. Returns `None` when malformed or outside
    /// 1601-01-01 … 9999-12-31 (after rounding).
    pub fn parse(s: &str) -> Option<Ticks> {
        let b = s.as_bytes();
        let num = |r: std::ops::Range<usize>| -> Option<u32> {
            let part = s.get(r)?;
            if part.bytes().all(|c| c.is_ascii_digit()) {
                part.parse().ok()
            } else {
                None
            }
        };
        if b.len() < 16 || b[4] != b'-' || b[7] != b'-' || (b[10] != b'T' && b[10] != b't') || b[13] != b':' {
            return None;
        }
        let (y, mo, d, h, mi) = (num(0..4)?, num(5..7)?, num(8..10)?, num(11..13)?, num(14..16)?);
        let mut i = 16;
        let mut sec = 0;
        let mut frac_ticks: i64 = 0;
        if b.get(i) == Some(&b':') {
            sec = num(i + 1..i + 3)?;
            i += 3;
            if b.get(i) == Some(&b'.') {
                i += 1;
                let start = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                frac_ticks = fraction_ticks(&b[start..i])?;
            }
        }
        let offset_secs: i64 = match &s[i..] {
            "" | "Z" | "z" => 0,
            rest => {
                let rb = rest.as_bytes();
                if rb.len() != 6 || rb[3] != b':' || !(rb[0] == b'+' || rb[0] == b'-') {
                    return None;
                }
                let oh: i64 = rest.get(1..3)?.parse().ok()?;
                let om: i64 = rest.get(4..6)?.parse().ok()?;
                if oh > 23 || om > 59 {
                    return None;
                }
                let sign = if rb[0] == b'-' { -1 } else { 1 };
                sign * (oh * 3600 + om * 60)
            }
        };
        if h > 23 || mi > 59 || sec > 59 {
            return None;
        }
        let date = NaiveDate::from_ymd_opt(y as i32, mo, d)?;
        let days = i64::from(date.num_days_from_ce() - 1);
        let secs = days * 86_400 + i64::from(h) * 3600 + i64::from(mi) * 60 + i64::from(sec) - offset_secs;
        let t = Ticks(secs.checked_mul(10_000_000)?.checked_add(frac_ticks)?);
        (MIN_EDM_DATETIME..=MAX_EDM_DATETIME).contains(&t).then_some(t)
    }

    fn parts(self) -> (NaiveDate, u32, u32, u32, i64) {
        let secs = self.0.div_euclid(10_000_000);
        let frac = self.0.rem_euclid(10_000_000);
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400);
        let date = NaiveDate::from_num_days_from_ce_opt((days + 1) as i32).unwrap_or(NaiveDate::MIN); // ok: ticks are range-checked on every way in
        (date, (sod / 3600) as u32, ((sod / 60) % 60) as u32, (sod % 60) as u32, frac)
    }

    /// Formats with exactly seven fractional digits: `2013-08-22T00:20:16.3134645Z`
    /// (used for Timestamp and ETags).
    pub fn to_rfc3339_7(self) -> String {
        let mut out = String::with_capacity(28);
        self.push_rfc3339(&mut out, true);
        out
    }

    /// Formats with trailing zero fractional digits trimmed (none at all for whole
    /// seconds): `2020-01-01T00:00:00Z`, `2020-01-01T00:00:00.5Z` (used for Edm.DateTime
    /// property values, so what a client sent comes back as it was sent).
    pub fn to_rfc3339_trimmed(self) -> String {
        let mut out = String::with_capacity(28);
        self.push_rfc3339(&mut out, false);
        out
    }

    /// Appends `YYYY-MM-DDThh:mm:ss[.fffffff]Z`, with all seven fractional digits
    /// (`full`) or trailing zeros trimmed. Hand-rolled: it runs for every entity
    /// rendered, and `format!` costs several times as much.
    fn push_rfc3339(self, out: &mut String, full: bool) {
        let (buf, len) = self.rfc3339_bytes(full);
        out.extend(buf[..len].iter().map(|&b| char::from(b)));
    }

    /// [`Ticks::to_rfc3339_trimmed`], appended to a byte buffer (the JSON renderer's).
    pub fn write_rfc3339_trimmed(self, out: &mut Vec<u8>) {
        let (buf, len) = self.rfc3339_bytes(false);
        out.extend_from_slice(&buf[..len]);
    }

    /// [`Ticks::to_rfc3339_7`], appended to a byte buffer (the JSON renderer's).
    pub fn write_rfc3339_7(self, out: &mut Vec<u8>) {
        let (buf, len) = self.rfc3339_bytes(true);
        out.extend_from_slice(&buf[..len]);
    }

    /// The ASCII bytes of [`Ticks::push_rfc3339`] and their length.
    fn rfc3339_bytes(self, full: bool) -> ([u8; 28], usize) {
        let (d, h, m, s, f) = self.parts();
        let mut buf = [0u8; 28];
        put_digits(&mut buf[0..4], d.year() as u32);
        buf[4] = b'-';
        put_digits(&mut buf[5..7], d.month());
        buf[7] = b'-';
        put_digits(&mut buf[8..10], d.day());
        buf[10] = b'T';
        put_digits(&mut buf[11..13], h);
        buf[13] = b':';
        put_digits(&mut buf[14..16], m);
        buf[16] = b':';
        put_digits(&mut buf[17..19], s);
        let mut len = 19;
        if full || f != 0 {
            buf[19] = b'.';
            put_digits(&mut buf[20..27], f as u32);
            len = 27;
            if !full {
                while buf[len - 1] == b'0' {
                    len -= 1;
                }
            }
        }
        buf[len] = b'Z';
        (buf, len + 1)
    }

    /// Returns the weak ETag derived from this timestamp, colons percent-encoded as
    /// the real service sends it: `W/"datetime'2020-10-09T17%3A00%3A02.4923650Z'"`.
    pub fn etag(self) -> String {
        let mut out = String::with_capacity(48);
        out.push_str("W/\"datetime'");
        let (buf, len) = self.rfc3339_bytes(true);
        let text = std::str::from_utf8(buf.get(..len).unwrap_or_default()).unwrap_or_default();
        // the two colons, at their fixed places, percent-encoded; the rest copied whole
        let pieces = [text.get(..13), text.get(14..16), text.get(17..)];
        for (i, piece) in pieces.into_iter().enumerate() {
            if i > 0 {
                out.push_str("%3A");
            }
            out.push_str(piece.unwrap_or_default());
        }
        out.push_str("'\"");
        out
    }

    /// Returns this time as an HTTP date (RFC 1123), e.g. for `Date` headers:
    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    pub fn to_http_date(self) -> String {
        const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
        const MONTHS: [&str; 12] =
            ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
        let (d, h, m, s, _) = self.parts();
        let mut buf = [0u8; 4];
        let mut two = |v: u32| {
            put_digits(&mut buf[..2], v);
            [char::from(buf[0]), char::from(buf[1])]
        };
        let mut out = String::with_capacity(29);
        out.push_str(DAYS[d.weekday().num_days_from_monday() as usize]);
        out.push_str(", ");
        out.extend(two(d.day()));
        out.push(' ');
        out.push_str(MONTHS[d.month0() as usize]);
        out.push(' ');
        let mut year = [0u8; 4];
        put_digits(&mut year, d.year() as u32);
        out.extend(year.iter().map(|&b| char::from(b)));
        out.push(' ');
        out.extend(two(h));
        out.push(':');
        out.extend(two(m));
        out.push(':');
        out.extend(two(s));
        out.push_str(" GMT");
        out
    }
}

/// The 100 ns ticks of the fractional digits after a `.`: the first seven are the
/// ticks, the rest round them half to even (XsdDateTime's rule: an 8th digit above 5,
/// or 5 followed by any non-zero digit, rounds up; exactly 5 rounds to the even tick).
/// The result can be 10,000,000 (a whole second carried). `None` for no digits.
fn fraction_ticks(digits: &[u8]) -> Option<i64> {
    if digits.is_empty() {
        return None;
    }
    let mut ticks: i64 = 0;
    for k in 0..7 {
        ticks = ticks * 10 + digits.get(k).map_or(0, |d| i64::from(d - b'0'));
    }
    let round_up = match digits.get(7).map(|d| d - b'0') {
        None => false,
        Some(d) if d > 5 => true,
        Some(5) => digits[8..].iter().any(|&d| d != b'0') || ticks % 2 == 1,
        Some(_) => false,
    };
    Some(ticks + i64::from(round_up))
}

/// Writes `v` as decimal digits filling `out` (zero-padded on the left, higher digits
/// beyond the width dropped).
fn put_digits(out: &mut [u8], mut v: u32) {
    for b in out.iter_mut().rev() {
        *b = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

/// A clock whose readings strictly increase across the whole process, so that every
/// write gets a Timestamp (and so an ETag) different from every earlier one.
#[derive(Debug, Default)]
pub struct MonotonicClock {
    last: AtomicI64,
}

impl MonotonicClock {
    pub fn new() -> Self {
        Self::default()
    }

    /// Returns the current time, or one tick past the previous reading if the wall
    /// clock has not moved (or went backwards).
    pub fn now(&self) -> Ticks {
        let wall = wall_now().0;
        let mut prev = self.last.load(Ordering::Relaxed);
        loop {
            let next = wall.max(prev + 1);
            match self.last.compare_exchange_weak(prev, next, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return Ticks(next),
                Err(p) => prev = p,
            }
        }
    }
}

/// Seconds the server's clock is set off from the host's (`--clockSkew`): 0 unless set.
static CLOCK_SKEW_SECS: AtomicI64 = AtomicI64::new(0);

/// Sets the server's clock `secs` seconds off the host's (signed), process-wide:
/// Timestamps, `Date` headers and the SharedKey date check all read [`server_now`]. Set
/// once at start (`--clockSkew`), to show clients a service whose clock differs from
/// theirs.
pub fn set_clock_skew(secs: i64) {
    CLOCK_SKEW_SECS.store(secs, Ordering::Relaxed);
}

/// The offset [`set_clock_skew`] set, in seconds.
pub fn clock_skew() -> i64 {
    CLOCK_SKEW_SECS.load(Ordering::Relaxed)
}

/// The server's clock: the host's, moved by [`clock_skew`].
pub fn server_now() -> DateTime<Utc> {
    let now = Utc::now();
    chrono::TimeDelta::try_seconds(clock_skew()).and_then(|d| now.checked_add_signed(d)).unwrap_or(now)
}

/// Returns the server's wall-clock time in ticks (not monotonic; for `Date` headers).
pub fn wall_now() -> Ticks {
    Ticks::from_datetime(server_now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_format_round_trip() {
        let t = Ticks::parse("2013-08-22T00:20:16.3134645Z").unwrap();
        assert_eq!(t.to_rfc3339_7(), "2013-08-22T00:20:16.3134645Z");
        assert_eq!(t.to_rfc3339_trimmed(), "2013-08-22T00:20:16.3134645Z");
        let t = Ticks::parse("2020-01-01T00:00:00Z").unwrap();
        assert_eq!(t.to_rfc3339_trimmed(), "2020-01-01T00:00:00Z");
        assert_eq!(t.to_rfc3339_7(), "2020-01-01T00:00:00.0000000Z");
        let t = Ticks::parse("2020-01-01T00:00:00.5Z").unwrap();
        assert_eq!(t.to_rfc3339_trimmed(), "2020-01-01T00:00:00.5Z");
    }

    #[test]
    fn unix_epoch_matches_chrono() {
        let t = Ticks::parse("1970-01-01T00:00:00Z").unwrap();
        assert_eq!(t.0, UNIX_EPOCH_TICKS);
        let now = Utc::now();
        let t = Ticks::from_datetime(now);
        let s = t.to_rfc3339_7();
        assert_eq!(Ticks::parse(&s), Some(t));
    }

    #[test]
    fn offsets_and_range() {
        assert_eq!(Ticks::parse("2020-01-01T02:00:00+02:00"), Ticks::parse("2020-01-01T00:00:00Z"));
        assert!(Ticks::parse("1601-01-01T00:00:00Z").is_some());
        assert!(Ticks::parse("1600-12-31T23:59:59Z").is_none());
        assert!(Ticks::parse("9999-12-31T23:59:59.9999999Z").is_some());
        assert!(Ticks::parse("2020-13-01T00:00:00Z").is_none());
        assert!(Ticks::parse("2020-01-01T00:00:00.Z").is_none());
        assert!(Ticks::parse("2020-01-01T00:00:00.1234567xZ").is_none());
        assert!(Ticks::parse("2020-01-01T00:00:00.123456789").is_some());
        assert!(Ticks::parse("9999-12-31T23:59:59.99999994Z").is_some());
        assert!(Ticks::parse("9999-12-31T23:59:59.99999995Z").is_none());
        assert!(Ticks::parse("not a date").is_none());
        assert_eq!(Ticks::parse("2020-01-01T00:00Z"), Ticks::parse("2020-01-01T00:00:00Z"));
    }

    /// Digits past the seventh round to the nearest tick, half to even, carrying
    /// into the seconds, minutes, hours and days.
    #[test]
    fn sub_tick_fractions_round_half_to_even() {
        let p = |s: &str| Ticks::parse(s).map(Ticks::to_rfc3339_trimmed);
        let cases = [
            ("2023-04-11T21:16:49.114906917Z", "2023-04-11T21:16:49.1149069Z"),
            ("2023-04-11T21:16:40.331047814Z", "2023-04-11T21:16:40.3310478Z"),
            ("2024-02-13T00:31:58.740808700Z", "2024-02-13T00:31:58.7408087Z"),
            ("2020-01-01T00:00:00.12345674Z", "2020-01-01T00:00:00.1234567Z"),
            ("2020-01-01T00:00:00.12345676Z", "2020-01-01T00:00:00.1234568Z"),
            ("2020-01-01T00:00:00.12345675Z", "2020-01-01T00:00:00.1234568Z"),
            ("2020-01-01T00:00:00.12345685Z", "2020-01-01T00:00:00.1234568Z"),
            ("2020-01-01T00:00:00.123456850000Z", "2020-01-01T00:00:00.1234568Z"),
            ("2020-01-01T00:00:00.123456850001Z", "2020-01-01T00:00:00.1234569Z"),
            ("2020-01-01T00:00:59.99999999Z", "2020-01-01T00:01:00Z"),
            ("2020-12-31T23:59:59.99999995Z", "2021-01-01T00:00:00Z"),
            ("2020-12-31T23:59:59.99999995+01:00", "2020-12-31T23:00:00Z"),
            ("2020-01-01T00:00:00.00000000Z", "2020-01-01T00:00:00Z"),
        ];
        for (input, want) in cases {
            assert_eq!(p(input).as_deref(), Some(want), "{input}");
        }
    }

    /// The hand-rolled formatters agree with chrono's across the whole Edm range.
    #[test]
    fn formatters_match_chrono() {
        let mut t = MIN_EDM_DATETIME.0;
        let step = (MAX_EDM_DATETIME.0 - MIN_EDM_DATETIME.0) / 5003;
        while t <= MAX_EDM_DATETIME.0 {
            let ticks = Ticks(t);
            let secs = t.div_euclid(10_000_000) - UNIX_EPOCH_TICKS / 10_000_000;
            let frac = t.rem_euclid(10_000_000);
            let dt = DateTime::from_timestamp(secs, (frac * 100) as u32).unwrap();
            assert_eq!(ticks.to_http_date(), dt.format("%a, %d %b %Y %H:%M:%S GMT").to_string());
            assert_eq!(ticks.to_rfc3339_7(), format!("{}.{frac:07}Z", dt.format("%Y-%m-%dT%H:%M:%S")));
            let trimmed = ticks.to_rfc3339_trimmed();
            assert_eq!(Ticks::parse(&trimmed), Some(ticks), "{trimmed}");
            assert!(!trimmed.contains(".") || !trimmed.ends_with("0Z"), "{trimmed}");
            t += step + (t % 7_919);
        }
    }

    #[test]
    fn etag_format() {
        let t = Ticks::parse("2020-10-09T17:00:02.492365Z").unwrap();
        assert_eq!(t.etag(), "W/\"datetime'2020-10-09T17%3A00%3A02.4923650Z'\"");
    }

    proptest::proptest! {
        /// The ETag is the full RFC 3339 form with each colon percent-encoded, over the
        /// whole range of EDM dates.
        #[test]
        fn etags_encode_the_colons_of_the_full_form(t in 0..=MAX_EDM_DATETIME.0) {
            let t = Ticks(t);
            let expected = format!("W/\"datetime'{}'\"", t.to_rfc3339_7().replace(':', "%3A"));
            proptest::prop_assert_eq!(t.etag(), expected);
        }
    }

    #[test]
    fn clock_strictly_increases() {
        let c = MonotonicClock::new();
        let mut prev = c.now();
        for _ in 0..10_000 {
            let n = c.now();
            assert!(n > prev);
            prev = n;
        }
    }
}
