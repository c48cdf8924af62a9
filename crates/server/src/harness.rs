//! What a test suite gets from the server besides the Table service: the partition
//! advisor as a gate (`--insightReport`, `--insightFailOn`, `--insightExemptTables`),
//! and a seeded start (`--seed`). The admin endpoints that go with them are in
//! `http::insight`; the flags are read in `config`.

use crate::config::Args;
use aztable_insight::gate::{GateFinding, GateKind};
use aztable_insight::Advisor;
use std::path::{Path, PathBuf};

/// The exit status of a server whose `--insightFailOn` findings occurred.
pub const GATE_EXIT_CODE: u8 = 3;

/// `--insightReport`, `--insightFailOn`, `--insightExemptTables`, validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GateConfig {
    pub report: Option<PathBuf>,
    /// The kinds that fail the exit status (empty: none).
    pub fail_on: Vec<GateKind>,
    pub exempt_tables: Vec<String>,
}

impl GateConfig {
    /// Reads the flags; they need the advisor (`--insight on`).
    pub(crate) fn from_args(args: &Args) -> Result<GateConfig, String> {
        let fail_on = match &args.insight_fail_on {
            Some(list) => GateKind::parse_list(list).map_err(|e| format!("--insightFailOn: {e}"))?,
            None => Vec::new(),
        };
        let exempt_tables: Vec<String> = args
            .insight_exempt_tables
            .iter()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .collect();
        let gate = GateConfig { report: args.insight_report.clone(), fail_on, exempt_tables };
        if args.insight != "on" && gate != GateConfig::default() {
            return Err("--insightReport, --insightFailOn and --insightExemptTables need the partition \
                        advisor: drop --insight off"
                .into());
        }
        Ok(gate)
    }
}

/// `--seed`: where the data comes from and into which account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedSpec {
    pub path: PathBuf,
    pub account: String,
    /// `--seedOverwrite`: seed a store that holds tables too.
    pub overwrite: bool,
}

impl SeedSpec {
    pub(crate) fn from_args(args: &Args) -> Option<SeedSpec> {
        let path = args.seed.clone()?;
        Some(SeedSpec { path, account: args.seed_account.clone(), overwrite: args.seed_overwrite })
    }
}

/// Writes the advisor's report with every gate finding to `path`, through a temporary
/// file renamed over it, so that a reader never sees half a report.
pub fn write_report(advisor: &Advisor, path: &Path) -> Result<(), String> {
    let body = serde_json::to_vec_pretty(&advisor.report_file())
        .map_err(|e| format!("cannot render the insight report: {e}"))?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let fail = |e: std::io::Error| format!("cannot write the insight report {}: {e}", path.display());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    std::fs::write(&tmp, body).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)
}

/// The findings of `fail_on` since the start: what decides the exit status.
pub fn failing_findings(advisor: &Advisor, fail_on: &[GateKind]) -> Vec<GateFinding> {
    if fail_on.is_empty() {
        return Vec::new();
    }
    advisor.gate_findings(fail_on, true)
}

/// The lines printed on stderr when the gate fails.
pub fn failure_lines(findings: &[GateFinding], fail_on: &[GateKind]) -> Vec<String> {
    let kinds: Vec<&str> = fail_on.iter().map(|k| k.as_str()).collect();
    let mut out = vec![format!(
        "aztable: insight gate failed: {} finding(s) of --insightFailOn {}:",
        findings.len(),
        kinds.join(",")
    )];
    out.extend(findings.iter().map(|f| format!("aztable:   {}", f.line())));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use aztable_insight::InsightOptions;

    #[test]
    fn the_report_file_is_written_whole_and_failures_are_named() {
        let advisor = Advisor::new(InsightOptions::default());
        advisor.gate_scan("acct", "people", "Name eq 'x'");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/report.json");
        write_report(&advisor, &path).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(v["gate_findings"][0]["subject"], "Name eq 'x'");
        assert!(!dir.path().join("sub/report.json.tmp").exists());
        assert!(failing_findings(&advisor, &[]).is_empty(), "no --insightFailOn: never fails");
        assert!(failing_findings(&advisor, &[GateKind::HotPartition]).is_empty());
        let f = failing_findings(&advisor, &[GateKind::FullScan]);
        let lines = failure_lines(&f, &[GateKind::FullScan]);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[1].contains("fullScan: table acct/people: $filter=\"Name eq 'x'\", 1 page(s)"),
            "{lines:?}"
        );
    }
}
