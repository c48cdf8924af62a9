//! The HTTP server: the only place hyper appears.
//!
//! - [`http`]: accept loop, TLS, dispatch of a request through its stages, the
//!   handlers that translate between the wire and the engine, response rendering.
//! - [`config`]: command line and environment → [`config::Config`].
//! - [`cli`]: the name the binary was started under (`azurite`, `azurite-table`), the
//!   `healthcheck` command, Azurite's environment variables.
//! - [`run_as`]: `AZTABLE_RUN_AS`, giving up root after reading root-only files.
//! - [`fault`]: opt-in fault injection for testing retries (deterministic per seed).
//! - [`harness`]: the partition advisor as a test gate, and the seeded start.
//! - [`surprise`]: production's surprises on demand (short pages, delete delay, skew).

pub mod cli;
pub mod config;
pub mod fault;
pub mod harness;
pub mod http;
pub mod run_as;
pub mod surprise;
