//! aztable: an Azure Table Storage compatible server.
//!
//! Layers (arrows are allowed imports), see `docs/ARCHITECTURE.md`:
//!
//! ```text
//! http ──► auth, odata, service, error, model      (the only place axum appears)
//! service ──► partition, model, error
//! partition ──► store, model
//! store ──► model                                   (the only place rocksdb appears)
//! auth, odata, filter, batch, endpoint ──► model, error   (pure: no I/O, no async)
//! ```
//!
//! - [`config`]: command line and environment → [`config::Config`].
//! - [`model`]: entities, Edm values, names, time, continuation tokens.
//! - [`error`]: the wire error registry and [`error::ApiError`].
//! - [`auth`]: SharedKey / SharedKeyLite verification, accounts.
//! - [`odata`]: JSON payload formats and content negotiation.
//! - [`endpoint`]: pure routing of (verb, path) to the REST operation.
//! - [`batch`]: `$batch` multipart parsing and response writing (pure).
//! - [`filter`]: the `$filter` language: parse, evaluate, plan key ranges (pure).
//! - [`http`]: axum front end: routing, handlers, response rendering.
//! - [`service`]: one function per REST operation.
//! - [`partition`]: the partition server: serialized writes per partition.
//! - [`store`]: ordered key/value storage (RocksDB or memory).

pub mod auth;
pub mod batch;
pub mod config;
pub mod endpoint;
pub mod error;
pub mod filter;
pub mod http;
pub mod model;
pub mod odata;
pub mod partition;
pub mod service;
pub mod store;
pub mod xml;
