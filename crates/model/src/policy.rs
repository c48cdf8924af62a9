//! [`AccessPolicy`]: a stored access policy (one `SignedIdentifier` of a table's ACL),
//! shared by the ACL body parser, the service that stores it and the SAS checks that
//! apply it; and [`parse_time`], the time format of both SAS fields and policies.

use super::Ticks;

/// A stored access policy (one `SignedIdentifier` of a table's ACL), as the SAS sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessPolicy {
    pub start: Option<Ticks>,
    pub expiry: Option<Ticks>,
    pub permission: Option<String>,
}

/// Parses a SAS or stored-policy time: `YYYY-MM-DD`, or `YYYY-MM-DDThh:mm[:ss[.f{1,7}]]`
/// with `Z`, an offset or no zone (UTC). Unlike an Edm.DateTime value, more than
/// seven fractional digits are refused here (nothing shows that the service rounds
/// them in a SAS or an ACL).
pub fn parse_time(s: &str) -> Option<Ticks> {
    if let Some((_, frac)) = s.split_once('.') {
        if frac.bytes().take_while(u8::is_ascii_digit).count() > 7 {
            return None;
        }
    }
    match s.len() {
        10 => Ticks::parse(&format!("{s}T00:00Z")),
        _ => Ticks::parse(s),
    }
}
