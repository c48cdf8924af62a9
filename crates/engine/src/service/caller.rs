//! [`Caller`]: whose request an entity operation serves: the account, and the rows the
//! request may touch (a table SAS's key range). The service is the one place that key
//! range is enforced, because only it knows every operation's final keys: the URL's keys
//! of an update, merge or delete (keys in its body are ignored), the body's keys of an
//! insert, each operation of a batch, and the ranges a query scans.

use super::ServiceError;
use aztable_model::error::{ApiError, ErrorCode};
use aztable_model::KeyRange;

/// The account a request addresses and the rows it may touch (`None`: all of them).
#[derive(Debug, Clone, Copy)]
pub struct Caller<'a> {
    pub account: &'a str,
    pub rows: Option<&'a KeyRange>,
}

impl<'a> From<&'a str> for Caller<'a> {
    /// A caller who may touch every row of the account.
    fn from(account: &'a str) -> Self {
        Caller { account, rows: None }
    }
}

impl<'a> From<&'a String> for Caller<'a> {
    fn from(account: &'a String) -> Self {
        Caller { account, rows: None }
    }
}

impl Caller<'_> {
    /// 403 `AuthorizationFailure` unless the row (pk, rk) is one the caller may touch.
    pub fn check_row(&self, pk: &str, rk: &str) -> Result<(), ServiceError> {
        match self.rows {
            Some(rows) if !rows.contains(pk, rk) => Err(ApiError::with_message(
                ErrorCode::AuthorizationFailure,
                "This request is not authorized to perform this operation: the entity is outside the SAS key range.",
            )
            .into()),
            _ => Ok(()),
        }
    }

    /// For a point read: 404 `ResourceNotFound` unless the row (pk, rk) is one the caller
    /// may touch. The service answers a read outside a SAS's key range as if the entity
    /// did not exist, whether it does or not (a write there is 403).
    pub fn check_readable(&self, pk: &str, rk: &str) -> Result<(), ServiceError> {
        match self.rows {
            Some(rows) if !rows.contains(pk, rk) => Err(ServiceError::ResourceNotFound),
            _ => Ok(()),
        }
    }

    /// The caller, once the row (pk, rk) is one it may touch and its keys are valid: the
    /// checks every single-entity write makes first.
    pub(super) fn admits(self, pk: &str, rk: &str) -> Result<Self, ServiceError> {
        self.check_row(pk, rk)?;
        super::entities::check_keys(pk, rk)?;
        Ok(self)
    }

    /// `ranges` narrowed to the rows the caller may touch (ranges left empty dropped).
    pub fn narrow(&self, ranges: Vec<KeyRange>) -> Vec<KeyRange> {
        match self.rows {
            None => ranges,
            Some(rows) => {
                ranges.into_iter().map(|r| r.intersect(rows.clone())).filter(|r| !r.is_empty()).collect()
            }
        }
    }
}
