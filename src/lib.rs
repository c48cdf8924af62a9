//! aztable: an Azure Table Storage compatible server.
//!
//! Layers (arrows are the imports that exist; nothing points back up), see
//! `docs/ARCHITECTURE.md`:
//!
//! ```text
//! http ──► service, auth, batch, endpoint, odata, filter, settings, insight, model, error
//!                                                   (the only place axum appears)
//! service ──► partition, filter, settings, insight, model, error   (store: its trait, its error)
//! partition ──► store, model
//! store ──► model                                   (the only place rocksdb appears)
//! auth ──► endpoint;  batch ──► endpoint, odata     (pure: no I/O, no async)
//! auth, batch, endpoint, filter, odata, settings ──► model, error
//! insight ──► filter, model                        (pure: counters, no I/O, no async)
//! error ──► model
//! ```
//!
//! - [`config`]: command line and environment → [`config::Config`].
//! - [`cli`]: the name the binary was started under (`azurite`, `azurite-table`), the
//!   `healthcheck` command, Azurite's environment variables.
//! - [`model`]: entities, Edm values, names, time, continuation tokens, key ranges and
//!   the row a filter reads, stored access policies.
//! - [`error`]: the wire error registry and [`error::ApiError`].
//! - [`fault`]: opt-in fault injection for testing retries (deterministic per seed).
//! - [`auth`]: SharedKey / SharedKeyLite signatures, accounts, shared access signatures,
//!   OAuth bearer tokens.
//! - [`odata`]: JSON payload formats, content negotiation, `Prefer`.
//! - [`endpoint`]: pure routing of (verb, path) to the REST operation.
//! - [`batch`]: `$batch` multipart parsing, the parts of its answer, response writing.
//! - [`filter`]: the `$filter` language: parse, evaluate, plan key ranges (pure).
//! - [`settings`]: table ACLs, service properties and CORS rules as their XML bodies.
//! - [`http`]: axum front end: dispatch, handlers that translate, response rendering.
//! - [`insight`]: the partition advisor: what queries and writes do to each table's
//!   key space, as a report (JSON, an HTML page, Prometheus metrics).
//! - [`service`]: one function per REST operation; the SAS key range of a caller.
//! - [`partition`]: the partition server: writers' turns, transactions, reads, scans.
//! - [`store`]: ordered key/value storage (RocksDB or memory).
//! - [`transfer`]: `aztable export` / `aztable import` (JSON lines, Azurite's database).

pub mod auth;
pub mod batch;
pub mod cli;
pub mod config;
pub mod endpoint;
pub mod error;
pub mod fault;
pub mod filter;
pub mod http;
pub mod insight;
pub mod model;
pub mod odata;
pub mod partition;
pub mod service;
pub mod settings;
pub mod store;
pub mod transfer;
