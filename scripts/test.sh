#!/usr/bin/env bash
# Runs every test: cargo test (unit tests, black-box tests against the real server on
# RocksDB), then the Python and JavaScript SDK conformance suites against a freshly
# started server. This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/aztable/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

echo "== cargo test (target dir: $CARGO_TARGET_DIR)"
cargo test --locked

echo "== SDK conformance suites (installs the pinned SDKs if missing)"
cargo build --locked --bin aztable
scripts/sdk-tests.sh "$CARGO_TARGET_DIR/debug/aztable"
