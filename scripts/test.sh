#!/usr/bin/env bash
# Runs every check and test: formatting, the crate graph (scripts/crate-graph.py: the
# rules on outside crates that the compiler cannot see, and the graph drawn in
# docs/ARCHITECTURE.md), the GitHub workflows (scripts/actionlint.sh), clippy, a check of the fuzz crate, then cargo test over the
# workspace (unit tests, black-box tests against the real server on RocksDB), the filter's tests again optimised, then the Python and JavaScript
# SDK conformance suites against a freshly started server, then the partition advisor's
# page in headless Chromium (tests/browser). This is the README's test
# command; .ci/run calls it. Each phase prints its wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/aztable/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# Each phase's wall time, one "NAME<TAB>SECONDS<TAB>ok|FAILED" line each, outside the
# clone (the README's figures for a run come from it).
REPORT="${AZTABLE_TEST_REPORT:-$CARGO_TARGET_DIR/test-phases.tsv}"
mkdir -p "$(dirname "$REPORT")"
: >"$REPORT"
run_start=$SECONDS

# phase NAME COMMAND...: runs COMMAND, then prints how long it took and adds it to the
# report; stops the script if it failed. COMMAND runs in a condition, where `set -e`
# does not apply, so the functions below chain their steps with &&.
phase() {
  local name=$1 start=$SECONDS
  shift
  echo "== $name"
  if "$@"; then
    echo "== phase: $name ($((SECONDS - start)) s)"
    printf '%s\t%s\tok\n' "$name" "$((SECONDS - start))" >>"$REPORT"
  else
    echo "== phase: $name FAILED ($((SECONDS - start)) s)"
    printf '%s\t%s\tFAILED\n' "$name" "$((SECONDS - start))" >>"$REPORT"
    exit 1
  fi
}

echo "== target dir: $CARGO_TARGET_DIR"
fmt_check() {
  cargo fmt --all --check && cargo fmt --check --manifest-path fuzz/Cargo.toml
}
phase "fmt" fmt_check
phase "crate graph" python3 scripts/crate-graph.py
phase "actionlint" scripts/actionlint.sh
clippy_check() {
  # also without RocksDB (`--no-default-features`): the code behind
  # `cfg(not(feature = "rocksdb"))` in the server binary and the transfer crate
  cargo clippy --locked --workspace --all-targets -- -D warnings \
    && cargo clippy --locked --workspace --no-default-features -- -D warnings
}
phase "clippy" clippy_check
# The fuzz crate is its own workspace with its own lock file; it builds the pure
# crates and the store without RocksDB, so checking it is quick and catches a lock
# file left behind.
phase "fuzz check" cargo check --locked --manifest-path fuzz/Cargo.toml
phase "cargo test" cargo test --locked --workspace
# The crates' documentation builds without warnings: no link to an item that is gone
# or that the page cannot show (a private one).
phase "rustdoc" env RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --locked --workspace
# The filter's recursive passes again in an optimised build, whose inlining makes
# frames larger: the largest trees must still fit a quarter of a worker's stack.
phase "filter, optimised" cargo test --release --locked -p aztable-wire --lib filter::

sdk_suites() {
  cargo build --locked --bin aztable && scripts/sdk-tests.sh "$CARGO_TARGET_DIR/debug/aztable"
}
# The SDK conformance suites install their pinned SDKs if missing.
phase "sdk suites" sdk_suites
# Again against a server started with --fsync (AZTABLE_FSYNC), whose entity writes
# are acknowledged by the log-sync thread rather than by the write itself.
phase "sdk suites, --fsync" env AZTABLE_FSYNC=1 scripts/sdk-tests.sh "$CARGO_TARGET_DIR/debug/aztable"

# The advisor's page (/_aztable/insight) rendered by headless Chromium; skipped only
# when no Chromium is installed (.ci/run installs it).
phase "browser" python3 tests/browser/insight_page.py "$CARGO_TARGET_DIR/debug/aztable"

# Every fuzz target for 10 seconds, instrumented for coverage (scripts/fuzz.sh; the
# build goes to "$CARGO_TARGET_DIR-fuzz" and the corpus grows in ~/.cache/aztable).
# First the gate itself: a planted crashing input must fail a fuzz run.
phase "fuzz gate self-test" scripts/fuzz.sh --self-test
phase "fuzz smoke" scripts/fuzz.sh 10
printf 'total\t%s\tok\n' "$((SECONDS - run_start))" >>"$REPORT"
echo "== all phases passed in $((SECONDS - run_start)) s (report: $REPORT)"
