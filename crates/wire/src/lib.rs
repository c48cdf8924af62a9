//! The wire formats of the Table service as pure functions: no I/O, no async, no
//! storage. Each parser takes bytes or text and returns typed values or an
//! [`aztable_model::error::ApiError`], so each can be fuzzed on its own.
//!
//! - [`endpoint`]: routing of (verb, path) to the REST operation.
//! - [`auth`]: SharedKey / SharedKeyLite signatures, accounts, shared access
//!   signatures, OAuth bearer tokens.
//! - [`odata`]: JSON and AtomPub payload formats, content negotiation, `Prefer`.
//! - [`entity_write`]: an entity write's endpoint, head and body → the model's
//!   `EntityWrite` (single requests and change-set operations alike).
//! - [`batch`]: `$batch` multipart parsing, the change set, the parts of its answer,
//!   response writing.
//! - [`filter`]: the `$filter` language: parse, evaluate, plan key ranges.
//! - [`settings`]: table ACLs, service properties and CORS rules as their XML bodies.

pub mod auth;
pub mod batch;
pub mod endpoint;
pub mod entity_write;
pub mod filter;
pub mod odata;
pub mod settings;
mod swar;
