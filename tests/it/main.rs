//! Black-box tests against the real `aztable` binary, as one test binary: each
//! integration-test file would otherwise link the whole crate (and RocksDB) on its own,
//! and compile its own copy of the shared harness in `common`.

mod common;

mod access;
mod atom;
mod batch;
mod body_budget;
mod browse;
mod ci_gate;
mod cli;
mod connections;
mod crash;
mod damaged;
mod damaged_serving;
mod entities;
mod error_codes;
mod errors;
mod hostile;
mod insight;
mod oauth;
mod persistence;
mod recovery;
mod run_as;
mod scan_summaries;
mod surprises;
mod tables;
mod throttle;
mod transfer;
mod transfer_oracles;
mod upgrade;
mod wire_batch;
mod wire_misc;
mod wire_routing;
mod wire_values;
