//! The SharedKey date check ([`check_date_skew`]): a signed request's date (`x-ms-date`,
//! else `Date`, as signed) must be within [`MAX_DATE_SKEW_MINUTES`] of the server's clock
//! (the host's, moved by `--clockSkew`). The date last parsed on a thread is remembered
//! (a client's requests in one second carry the same string), and the distance is worked
//! out in integers from the host clock: what chrono's `server_now().signed_duration_since`
//! gives, exactly, for a half of the instructions. chrono itself is asked where the two
//! could differ: a leap second (`23:59:60`), a clock before 1970 or tens of thousands of
//! years off.

use super::request::{text, Head};
use aztable_model::error::{ApiError, ErrorCode};
use chrono::{DateTime, FixedOffset, Utc};
use std::time::{SystemTime, UNIX_EPOCH};

/// How far a SharedKey request's date may be from the server's clock.
const MAX_DATE_SKEW_MINUTES: i64 = 15;
const MAX_SKEW_NANOS: i128 = MAX_DATE_SKEW_MINUTES as i128 * 60 * NANOS;
const NANOS: i128 = 1_000_000_000;

/// Refuses a signed request whose date (`x-ms-date`, else `Date`, as signed) is more than
/// [`MAX_DATE_SKEW_MINUTES`] from the server's clock either way, or is not an RFC 1123
/// date: 403 `AuthenticationFailed`, as the service answers a replayed or badly clocked
/// request.
pub(super) fn check_date_skew(head: &Head<'_>) -> Result<(), ApiError> {
    let refuse = |detail: String| {
        let mut e = ApiError::new(ErrorCode::AuthenticationFailed);
        e.auth_detail = Some(detail);
        e
    };
    let date =
        [head.signed.x_ms_date, head.signed.date].into_iter().find_map(|v| text(v).filter(|v| !v.is_empty()));
    // No date at all was refused by the signature check already.
    let Some(date) = date else { return Ok(()) };
    let Some(sent) = parse_request_date(date) else {
        return Err(refuse(format!("The date header in the request is incorrect: '{date}'.")));
    };
    let skew = skew_nanos(&sent, server_clock(), aztable_model::time::server_now);
    if skew > MAX_SKEW_NANOS {
        return Err(refuse(format!("Request date header too old: '{date}'")));
    }
    if -skew > MAX_SKEW_NANOS {
        return Err(refuse(format!("Request date header too far in the future: '{date}'")));
    }
    Ok(())
}

/// A request date, parsed: the value, and its instant as whole seconds since the epoch
/// and the nanoseconds past them (1,000,000,000 or more within a leap second).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sent {
    at: DateTime<FixedOffset>,
    secs: i64,
    nanos: u32,
}

thread_local! {
    /// The date header last parsed on this thread, and its value: a client's requests
    /// in one second carry the same string, and parsing it was 1 % of a point read.
    static LAST_DATE: std::cell::RefCell<Option<(String, Sent)>> = const { std::cell::RefCell::new(None) };
}

/// Parses an RFC 1123 request date (`x-ms-date` or `Date`); `None` when malformed.
fn parse_request_date(date: &str) -> Option<Sent> {
    LAST_DATE.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((_, parsed)) = last.as_ref().filter(|(text, _)| text == date) {
            return Some(*parsed);
        }
        let at = DateTime::parse_from_rfc2822(date).ok()?;
        let parsed = Sent { at, secs: at.timestamp(), nanos: at.timestamp_subsec_nanos() };
        *last = Some((date.to_owned(), parsed));
        Some(parsed)
    })
}

/// Host clocks and clock skews below this many seconds (about 126,000 years) add up to
/// an instant chrono can hold (±262,143 years), so the integer sum is what chrono's is.
const EXACT_RANGE: u64 = 4_000_000_000_000;

/// The server's clock as seconds since the epoch and nanoseconds past them, as
/// `server_now` has it (the host's clock plus the skew); `None` where chrono's answer
/// could differ (a host clock before the epoch or far outside [`EXACT_RANGE`]).
fn server_clock() -> Option<(i64, u32)> {
    let host = SystemTime::now().duration_since(UNIX_EPOCH).ok()?;
    let skew = aztable_model::time::clock_skew();
    if host.as_secs() >= EXACT_RANGE || skew.unsigned_abs() >= EXACT_RANGE {
        return None;
    }
    // both under 4e12: neither the conversion nor the sum can overflow
    Some((host.as_secs() as i64 + skew, host.subsec_nanos()))
}

/// How long before the server's clock the request was sent, in nanoseconds (negative:
/// sent from the future): from `clock` ([`server_clock`]) in integers, which is exact for
/// instants outside leap seconds (`server_now` is never in one); otherwise chrono's
/// `now().signed_duration_since(sent)`.
fn skew_nanos(sent: &Sent, clock: Option<(i64, u32)>, now: impl FnOnce() -> DateTime<Utc>) -> i128 {
    match clock {
        Some((secs, nanos)) if i128::from(sent.nanos) < NANOS => {
            (i128::from(secs) - i128::from(sent.secs)) * NANOS + i128::from(nanos) - i128::from(sent.nanos)
        }
        _ => {
            let d = now().signed_duration_since(sent.at);
            i128::from(d.num_seconds()) * NANOS + i128::from(d.subsec_nanos())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_dates_parse_alike_whether_remembered_or_not() {
        let dates = [
            "Sun, 22 Nov 2026 05:01:19 GMT",
            "Sun, 22 Nov 2026 05:01:20 GMT",
            "not a date",
            "Sun, 22 Nov 2026 05:01:19 GMT",
            "Mon, 01 Jan 2024 00:00:00 GMT",
            "Mon, 01 Jan 2024 00:00:00 GMT",
            "",
        ];
        for date in dates.iter().chain(dates.iter().rev()) {
            let parsed = parse_request_date(date);
            assert_eq!(parsed.map(|s| s.at), DateTime::parse_from_rfc2822(date).ok(), "{date:?}");
            if let Some(s) = parsed {
                assert_eq!((s.secs, s.nanos), (s.at.timestamp(), s.at.timestamp_subsec_nanos()));
            }
        }
    }

    #[test]
    fn the_server_clock_is_server_now() {
        // read between two chrono readings, the integer clock lies between them
        let before = aztable_model::time::server_now();
        let (secs, nanos) = server_clock().expect("a clock after 1970");
        let after = aztable_model::time::server_now();
        let read = DateTime::from_timestamp(secs, nanos).expect("in range");
        assert!(before <= read && read <= after, "{before} {read} {after}");
    }

    proptest::proptest! {
        /// The integer distance is chrono's, for any server clock and any date a client
        /// sends: whole seconds, leap seconds, other offsets, far past and future.
        #[test]
        fn skew_is_chronos(
            now_secs in -2_000_000_000i64..40_000_000_000,
            now_nanos in 0u32..1_000_000_000,
            day in 1u32..29,
            month in proptest::sample::select(vec!["Jan", "Feb", "Jun", "Dec"]),
            year in proptest::sample::select(vec![1900, 1969, 1970, 2016, 2026, 2027, 3000]),
            hour in 0u32..24,
            minute in proptest::sample::select(vec![0u32, 1, 15, 59]),
            second in proptest::sample::select(vec![0u32, 1, 30, 59, 60]),
            zone in proptest::sample::select(vec!["GMT", "+0000", "-0130", "+1400"]),
        ) {
            let date = format!("Mon, {day:02} {month} {year} {hour:02}:{minute:02}:{second:02} {zone}");
            let Ok(at) = DateTime::parse_from_rfc2822(&date) else { return Ok(()) };
            let sent = Sent { at, secs: at.timestamp(), nanos: at.timestamp_subsec_nanos() };
            let now = DateTime::from_timestamp(now_secs, now_nanos).expect("in range");
            let d = now.signed_duration_since(at);
            let chronos = i128::from(d.num_seconds()) * NANOS + i128::from(d.subsec_nanos());
            proptest::prop_assert_eq!(skew_nanos(&sent, Some((now_secs, now_nanos)), || now), chronos, "{}", date);
            proptest::prop_assert_eq!(skew_nanos(&sent, None, || now), chronos, "{}", date);
        }
    }
}
