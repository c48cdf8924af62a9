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
/// with `Z`, an offset or no zone (UTC).
pub fn parse_time(s: &str) -> Option<Ticks> {
    match s.len() {
        10 => Ticks::parse(&format!("{s}T00:00Z")),
        _ => Ticks::parse(s),
    }
}
