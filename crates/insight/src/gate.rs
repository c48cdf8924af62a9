//! The advisor as a test gate: a ledger of the findings a test suite may refuse (full
//! table scans, hot partitions, append-only keys), each named by its table and its
//! filter, partition or key, with a count.
//!
//! Full scans are counted as their pages are served ([`Gate::scan`]); hot partitions and
//! append-only keys are read from the advisor's counts when the ledger is looked at
//! ([`Gate::absorb`]). Each entry keeps two counts: `total`, since the server started
//! (what the exit status at shutdown is decided on), and `pending`, since the last
//! [`Gate::acknowledge`] (what `GET /_aztable/insight/findings` answers, so a test
//! framework can check after each test and start the next one clean). Tables named by
//! `--insightExemptTables` never enter the ledger; a request with the
//! `x-aztable-expect-scan` marker is not counted either.
//!
//! Bounded: [`MAX_ENTRIES`] entries; findings beyond are counted per kind and reported
//! as one entry of table `*`.

use serde::Serialize;
use std::collections::BTreeMap;

/// Entries the ledger holds.
pub const MAX_ENTRIES: usize = 1000;

/// A kind of finding a test suite can refuse (`--insightFailOn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum GateKind {
    /// A page of Query Entities whose filter does not narrow the PartitionKey.
    #[serde(rename = "fullScan")]
    FullScan,
    /// A partition over the 2,000 entities/s target.
    #[serde(rename = "hotPartition")]
    HotPartition,
    /// Inserts whose PartitionKey (or RowKey within a partition) only ever increases.
    #[serde(rename = "appendOnly")]
    AppendOnly,
}

impl GateKind {
    pub const ALL: [GateKind; 3] = [GateKind::FullScan, GateKind::HotPartition, GateKind::AppendOnly];

    /// The name on the command line and in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            GateKind::FullScan => "fullScan",
            GateKind::HotPartition => "hotPartition",
            GateKind::AppendOnly => "appendOnly",
        }
    }

    /// Parses a comma list of kinds (`fullScan,hotPartition`); empty items are skipped.
    pub fn parse_list(text: &str) -> Result<Vec<GateKind>, String> {
        let mut out = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let kind = GateKind::ALL.into_iter().find(|k| k.as_str().eq_ignore_ascii_case(item)).ok_or_else(
                || format!("'{item}' is not a finding kind; use any of fullScan,hotPartition,appendOnly"),
            )?;
            if !out.contains(&kind) {
                out.push(kind);
            }
        }
        Ok(out)
    }
}

/// One finding of the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GateFinding {
    pub kind: GateKind,
    pub account: String,
    pub table: String,
    /// `fullScan`: the `$filter` (empty: none); `hotPartition`: the PartitionKey;
    /// `appendOnly`: `PartitionKey` or `RowKey`.
    pub subject: String,
    /// Since the server started. `fullScan`: pages served; `hotPartition`: the peak
    /// entities per second; `appendOnly`: inserts whose key followed the pattern.
    pub count: u64,
    /// The same count since the findings were last cleared (0: cleared since).
    pub pending: u64,
}

impl GateFinding {
    /// One line for a log or stderr: kind, table, subject and count.
    pub fn line(&self) -> String {
        let what = match self.kind {
            GateKind::FullScan => format!("$filter={:?}, {} page(s)", self.subject, self.count),
            GateKind::HotPartition => {
                format!("partition {:?}, peak {} entities/s", self.subject, self.count)
            }
            GateKind::AppendOnly => {
                format!("{} append-only, {} insert(s) in order", self.subject, self.count)
            }
        };
        format!("{}: table {}/{}: {what}", self.kind.as_str(), self.account, self.table)
    }
}

/// What `--insightReport` writes: the advisor's report (as `GET /_aztable/insight`
/// serves it as JSON) and every finding of the ledger since the start.
#[derive(Debug, Clone, Serialize)]
pub struct ReportFile {
    #[serde(flatten)]
    pub report: super::Report,
    pub gate_findings: Vec<GateFinding>,
}

#[derive(Debug, Clone, Default)]
struct Entry {
    /// The table's name as first seen.
    table: String,
    total: u64,
    pending: u64,
}

/// (kind, account, lowercase table, subject).
type Key = (GateKind, String, String, String);

/// The ledger (behind the advisor's mutex).
#[derive(Debug, Default)]
pub struct Gate {
    /// Lowercase names of `--insightExemptTables`.
    exempt: Vec<String>,
    entries: BTreeMap<Key, Entry>,
    /// Findings beyond [`MAX_ENTRIES`], per kind (total, pending).
    overflow: BTreeMap<GateKind, (u64, u64)>,
}

impl Gate {
    pub fn new(exempt_tables: &[String]) -> Gate {
        Gate {
            exempt: exempt_tables.iter().map(|t| t.trim().to_ascii_lowercase()).collect(),
            ..Gate::default()
        }
    }

    /// Whether `table` is exempt (`--insightExemptTables`).
    pub fn exempt(&self, table: &str) -> bool {
        self.exempt.iter().any(|t| t.eq_ignore_ascii_case(table))
    }

    /// The entry of `key`, made when there is room; `None` when the ledger is full.
    fn entry(&mut self, kind: GateKind, account: &str, table: &str, subject: &str) -> Option<&mut Entry> {
        let key = (kind, account.to_owned(), table.to_ascii_lowercase(), subject.to_owned());
        if !self.entries.contains_key(&key) && self.entries.len() >= MAX_ENTRIES {
            return None;
        }
        Some(self.entries.entry(key).or_insert_with(|| Entry { table: table.to_owned(), ..Entry::default() }))
    }

    /// A page of a full table scan (unless its table is exempt).
    pub fn scan(&mut self, account: &str, table: &str, filter: &str) {
        if self.exempt(table) {
            return;
        }
        match self.entry(GateKind::FullScan, account, table, filter) {
            Some(e) => {
                e.total += 1;
                e.pending += 1;
            }
            None => {
                let o = self.overflow.entry(GateKind::FullScan).or_default();
                o.0 += 1;
                o.1 += 1;
            }
        }
    }

    /// A finding the advisor's counts show now, with its current count. The advisor's
    /// counts start over when the findings are acknowledged, so the largest count seen
    /// since then is the pending one.
    pub fn absorb(&mut self, kind: GateKind, account: &str, table: &str, subject: &str, count: u64) {
        if self.exempt(table) || count == 0 {
            return;
        }
        match self.entry(kind, account, table, subject) {
            Some(e) => {
                e.total = e.total.max(count);
                e.pending = e.pending.max(count);
            }
            None => {
                let o = self.overflow.entry(kind).or_default();
                o.0 = o.0.max(1);
                o.1 = o.1.max(1);
            }
        }
    }

    /// Clears what is pending (the totals stay for the exit status).
    pub fn acknowledge(&mut self) {
        self.entries.values_mut().for_each(|e| e.pending = 0);
        self.overflow.values_mut().for_each(|o| o.1 = 0);
    }

    /// The findings of `kinds` (all kinds when empty): only the pending ones, or every
    /// one since the start when `all`.
    pub fn findings(&self, kinds: &[GateKind], all: bool) -> Vec<GateFinding> {
        let wanted = |k: GateKind| kinds.is_empty() || kinds.contains(&k);
        let mut out: Vec<GateFinding> = self
            .entries
            .iter()
            .filter(|((kind, ..), e)| wanted(*kind) && (all || e.pending > 0) && e.total > 0)
            .map(|((kind, account, _, subject), e)| GateFinding {
                kind: *kind,
                account: account.clone(),
                table: e.table.clone(),
                subject: subject.clone(),
                count: e.total,
                pending: e.pending,
            })
            .collect();
        for (kind, (total, pending)) in &self.overflow {
            if wanted(*kind) && (all || *pending > 0) && *total > 0 {
                out.push(GateFinding {
                    kind: *kind,
                    account: "*".into(),
                    table: "*".into(),
                    subject: format!("findings beyond the {MAX_ENTRIES} tracked"),
                    count: *total,
                    pending: *pending,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_and_refuse_unknown_names() {
        assert_eq!(
            GateKind::parse_list("fullScan, appendonly,,fullScan").unwrap(),
            [GateKind::FullScan, GateKind::AppendOnly]
        );
        assert!(GateKind::parse_list("fullScan,slow").unwrap_err().contains("'slow'"));
    }

    #[test]
    fn scans_are_counted_until_acknowledged_and_totals_stay() {
        let mut g = Gate::new(&["Audit".to_owned()]);
        g.scan("acct", "People", "Name eq 'x'");
        g.scan("acct", "people", "Name eq 'x'");
        g.scan("acct", "audit", "");
        let f = g.findings(&[], false);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].table.as_str(), f[0].count, f[0].pending), ("People", 2, 2));
        assert!(f[0].line().contains("fullScan: table acct/People"), "{}", f[0].line());
        g.acknowledge();
        assert!(g.findings(&[], false).is_empty());
        assert_eq!(g.findings(&[GateKind::FullScan], true)[0].count, 2);
        assert!(g.findings(&[GateKind::HotPartition], true).is_empty());
    }

    #[test]
    fn absorbed_findings_keep_their_largest_count_and_restart_when_acknowledged() {
        let mut g = Gate::new(&[]);
        g.absorb(GateKind::HotPartition, "a", "t", "p", 2500);
        g.absorb(GateKind::HotPartition, "a", "t", "p", 2400);
        assert_eq!(g.findings(&[], false)[0].pending, 2500);
        // the advisor's counts start over with the acknowledgement
        g.acknowledge();
        assert!(g.findings(&[], false).is_empty());
        g.absorb(GateKind::HotPartition, "a", "t", "p", 2100);
        let f = g.findings(&[], false);
        assert_eq!((f[0].count, f[0].pending), (2500, 2100));
        g.absorb(GateKind::AppendOnly, "a", "t", "PartitionKey", 0);
        assert_eq!(g.findings(&[], true).len(), 1, "a zero count is no finding");
    }

    #[test]
    fn the_ledger_is_bounded() {
        let mut g = Gate::new(&[]);
        for i in 0..MAX_ENTRIES + 5 {
            g.scan("a", &format!("t{i}"), "");
        }
        let f = g.findings(&[], false);
        assert_eq!(f.len(), MAX_ENTRIES + 1);
        assert_eq!(f.last().map(|f| (f.table.as_str(), f.count)), Some(("*", 5)));
    }
}
