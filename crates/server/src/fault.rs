//! Fault injection for testing clients' retry logic (`--faultRate`,
//! `--faultAfterWriteRate`, `--faultSeed`, `--faultOps`, `--faultTables`): a fraction of
//! the data operations is answered 503 `ServerBusy` before anything is read or written,
//! or, for writes, answered 500 `OperationTimedOut` after the write was applied.
//!
//! The choice is deterministic: the n-th request that the filters admit (counted from
//! 0 at startup) fails or not by a hash of (seed, n), so the same seed and the same
//! order of requests give the same faults. Pure: the front end asks [`Faults::decide`]
//! and renders what it answers.

use std::sync::atomic::{AtomicU64, Ordering};

/// The operations faults can hit (REST names, as `Endpoint::name` spells them): the
/// table and entity operations and batches; never the preflight, ACL, service
/// properties or stats requests.
pub const DATA_OPERATIONS: [&str; 11] = [
    "QueryTables",
    "CreateTable",
    "GetTable",
    "DeleteTable",
    "QueryEntities",
    "GetEntity",
    "InsertEntity",
    "UpdateEntity",
    "MergeEntity",
    "DeleteEntity",
    "Batch",
];

/// Those of [`DATA_OPERATIONS`] that write: the ones `--faultAfterWriteRate` hits.
pub const WRITE_OPERATIONS: [&str; 7] =
    ["CreateTable", "DeleteTable", "InsertEntity", "UpdateEntity", "MergeEntity", "DeleteEntity", "Batch"];

/// The fault flags, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultSpec {
    /// Fraction of requests refused with 503 before touching data.
    pub rate: f64,
    /// Fraction of writes applied and then answered 500.
    pub after_write_rate: f64,
    pub seed: u64,
    /// Operations faults may hit (empty: every data operation).
    pub ops: Vec<String>,
    /// Tables faults may hit, any case (empty: every table; then requests that name no
    /// table, like Query Tables, are hit too).
    pub tables: Vec<String>,
}

impl FaultSpec {
    /// Validates the flags: `None` when no rate is given (faults off). Fractions must
    /// lie in 0..=1, operation names must be data operations; `--faultOps` or
    /// `--faultTables` without a rate is an error (it would do nothing).
    pub fn from_flags(
        rate: Option<f64>,
        after_write_rate: Option<f64>,
        seed: u64,
        ops: &[String],
        tables: &[String],
    ) -> Result<Option<FaultSpec>, String> {
        let fraction = |flag: &str, v: Option<f64>| match v {
            Some(f) if !(0.0..=1.0).contains(&f) => {
                Err(format!("{flag}: {f} is not a fraction between 0 and 1"))
            }
            other => Ok(other),
        };
        let rate = fraction("--faultRate", rate)?;
        let after_write_rate = fraction("--faultAfterWriteRate", after_write_rate)?;
        let ops: Vec<String> = ops.iter().map(|o| o.trim().to_owned()).filter(|o| !o.is_empty()).collect();
        let tables: Vec<String> =
            tables.iter().map(|t| t.trim().to_ascii_lowercase()).filter(|t| !t.is_empty()).collect();
        for op in &ops {
            if !DATA_OPERATIONS.contains(&op.as_str()) {
                return Err(format!(
                    "--faultOps: '{op}' is not an operation faults can hit; use any of {}",
                    DATA_OPERATIONS.join(",")
                ));
            }
        }
        if rate.is_none() && after_write_rate.is_none() {
            if !ops.is_empty() || !tables.is_empty() {
                return Err("--faultOps and --faultTables narrow --faultRate or --faultAfterWriteRate: \
                            give one of them"
                    .into());
            }
            return Ok(None);
        }
        Ok(Some(FaultSpec {
            rate: rate.unwrap_or(0.0),
            after_write_rate: after_write_rate.unwrap_or(0.0),
            seed,
            ops,
            tables,
        }))
    }
}

/// What to do with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Serve it.
    None,
    /// Answer 503 `ServerBusy` before touching data.
    Busy,
    /// Serve it, then answer 500 `OperationTimedOut` if it succeeded.
    AfterWrite,
}

/// The running fault injector: the spec and the count of requests it has judged.
#[derive(Debug)]
pub struct Faults {
    spec: FaultSpec,
    judged: AtomicU64,
}

impl Faults {
    pub fn new(spec: FaultSpec) -> Self {
        Faults { spec, judged: AtomicU64::new(0) }
    }

    /// Whether the filters admit operation `op` on `table` (`None`: the request names
    /// no table). Operations other than [`DATA_OPERATIONS`] are never admitted.
    pub fn applies(&self, op: &str, table: Option<&str>) -> bool {
        if !DATA_OPERATIONS.contains(&op) {
            return false;
        }
        if !self.spec.ops.is_empty() && !self.spec.ops.iter().any(|o| o == op) {
            return false;
        }
        match table {
            _ if self.spec.tables.is_empty() => true,
            Some(t) => self.spec.tables.iter().any(|f| f.eq_ignore_ascii_case(t)),
            None => false,
        }
    }

    /// Whether the filters need the request's table (a batch names it only in its body).
    pub fn filters_tables(&self) -> bool {
        !self.spec.tables.is_empty()
    }

    /// Judges one request: requests the filters admit are numbered in arrival order,
    /// and the n-th fails by a hash of (seed, n).
    pub fn decide(&self, op: &str, table: Option<&str>) -> Fault {
        if !self.applies(op, table) {
            return Fault::None;
        }
        let n = self.judged.fetch_add(1, Ordering::Relaxed);
        if unit(self.spec.seed, n, 0) < self.spec.rate {
            return Fault::Busy;
        }
        if WRITE_OPERATIONS.contains(&op) && unit(self.spec.seed, n, 1) < self.spec.after_write_rate {
            return Fault::AfterWrite;
        }
        Fault::None
    }
}

/// SplitMix64's finalizer: a bijective mix of 64 bits.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A number in [0, 1) fixed by (seed, n, stream), uniform over n.
pub(crate) fn unit(seed: u64, n: u64, stream: u64) -> f64 {
    let bits = mix(mix(seed ^ mix(stream)) ^ n) >> 11;
    bits as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
#[path = "fault_tests.rs"]
mod tests;
