//! The engine: one function per REST operation ([`service`]) over the partition
//! server ([`partition`]: writers' turns, transactions, reads, scans), on any
//! [`aztable_store::Store`]. No HTTP: requests arrive as typed values from the
//! server crate.

pub mod partition;
pub mod service;
