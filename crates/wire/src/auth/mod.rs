//! Request authentication: the storage accounts the emulator knows ([`Accounts`]) and
//! SharedKey / SharedKeyLite signature verification ([`authenticate`]). Pure code: no
//! I/O, no async; the HTTP layer extracts the pieces of the request and calls in here.

mod accounts;
pub mod oauth;
pub mod sas;
mod shared_key;
pub mod sign;
mod signature;

pub use accounts::{Account, Accounts, DEV_ACCOUNT, DEV_KEY};
pub use sas::{authorize_sas, parse_sas, verify_sas, SasContext, SasGrant, SasToken};
pub use shared_key::{authenticate, authenticate_signed, AuthRequest, SignedHeaders};
pub use sign::AccountKey;

use aztable_model::error::{ApiError, ErrorCode};

/// Why a request failed SharedKey / SharedKeyLite authentication.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// The request has no `Authorization` header.
    #[error("no Authorization header")]
    MissingAuthorization,
    /// The `Authorization` header is not `SharedKey{,Lite} account:signature`.
    #[error("malformed Authorization header: {0}")]
    MalformedAuthorization(String),
    /// The account named in the `Authorization` header is not the URL's account.
    #[error("account '{header}' in the Authorization header does not match '{url}'")]
    AccountMismatch { header: String, url: String },
    /// Neither `x-ms-date` nor `Date` is present.
    #[error("no x-ms-date or Date header")]
    MissingDate,
    /// No key of the account produces the signature the client sent.
    #[error("signature mismatch")]
    SignatureMismatch {
        /// The signature from the request, as sent (base64).
        provided: String,
        /// The (primary) string to sign the server computed.
        string_to_sign: String,
    },
}

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> Self {
        let (code, detail) = match &e {
            AuthError::MissingAuthorization => (ErrorCode::NoAuthenticationInformation, None),
            AuthError::MalformedAuthorization(header) => (
                ErrorCode::InvalidAuthenticationInfo,
                Some(format!("Authentication scheme or format is not valid: '{header}'.")),
            ),
            AuthError::AccountMismatch { header, url } => (
                ErrorCode::AuthenticationFailed,
                Some(format!(
                    "The account '{header}' in the Authorization header does not match \
                     the account '{url}' of the request URL."
                )),
            ),
            AuthError::MissingDate => (
                ErrorCode::AuthenticationFailed,
                Some(
                    "Request date header not specified. Either x-ms-date or Date header \
                     must be specified."
                        .to_string(),
                ),
            ),
            AuthError::SignatureMismatch { provided, string_to_sign } => (
                ErrorCode::AuthenticationFailed,
                Some(format!(
                    "The MAC signature found in the HTTP request '{provided}' is not the same \
                     as any computed signature. Server used following string to sign: \
                     '{string_to_sign}'."
                )),
            ),
        };
        let mut api = ApiError::new(code);
        api.auth_detail = detail;
        api
    }
}
