#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with coverage instrumentation (stable Rust, no
# cargo-fuzz, no sanitizer: the crate has no unsafe code) and runs each for a while.
#
# Usage: scripts/fuzz.sh [seconds-per-target] [target...]
#   seconds-per-target  default 10 (the test command's smoke run)
#   target              default: every target in fuzz/Cargo.toml but gate_self_test
#        scripts/fuzz.sh --self-test
#   proves the gate: runs gate_self_test on a corpus holding its planted crashing
#   input and succeeds only if this script then fails, naming the artifact.
#
# Each target starts from a corpus in $FUZZ_CORPUS_DIR/<target> (default
# ~/.cache/aztable/fuzz-corpus), seeded from the repository's fixtures where they fit,
# and keeps what it finds there for the next run. A crash (a panic or a failed
# round-trip assertion) stops the script with the target's exit status, printing the
# end of the fuzzer's output, the input saved in fuzz/artifacts/<target>/ and the
# command that replays it.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == --self-test ]]; then
  corpus=$(mktemp -d)
  artifacts="fuzz/artifacts/gate_self_test"
  trap 'rm -rf "$corpus" "$artifacts"' EXIT
  printf '%s' 'aztable fuzz gate: the planted crash' >"$corpus/planted"
  set +e
  out=$(FUZZ_CORPUS_DIR_ONE="$corpus" "$0" 5 gate_self_test 2>&1)
  status=$?
  set -e
  if [[ $status -ne 0 ]] && grep -q 'replay with:' <<<"$out" && grep -q 'the planted crash' <<<"$out"; then
    echo "fuzz gate self-test: a crash fails the run (exit $status) and names its input"
    exit 0
  fi
  printf '%s\n' "$out" >&2
  echo "fuzz gate self-test FAILED: the planted crash did not fail the run (exit $status)" >&2
  exit 1
fi

SECONDS_PER_TARGET="${1:-10}"
shift || true
FUZZ_TARGET_DIR="${FUZZ_TARGET_DIR:-${CARGO_TARGET_DIR:-$HOME/.cache/aztable/target}-fuzz}"
FUZZ_CORPUS_DIR="${FUZZ_CORPUS_DIR:-$HOME/.cache/aztable/fuzz-corpus}"
TRIPLE="$(rustc -vV | sed -n 's/^host: //p')"

if [[ $# -gt 0 ]]; then
  targets=("$@")
else
  mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -vE '^(aztable-fuzz|gate_self_test)$')
fi

# What cargo-fuzz passes to rustc for libFuzzer's coverage feedback (its
# `--sanitizer none` build), applied to the target triple only so build scripts stay
# uninstrumented.
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
bins=()
for t in "${targets[@]}"; do bins+=(--bin "$t"); done
CARGO_TARGET_DIR="$FUZZ_TARGET_DIR" cargo build --locked --release --quiet \
  --manifest-path fuzz/Cargo.toml --target "$TRIPLE" "${bins[@]}"

seed() {
  local target="$1" dir="$2"
  case "$target" in
    odata_atom) cp tests/fixtures/atom/*.xml tests/fixtures/atom/client-requests/*.body "$dir"/ 2>/dev/null || true ;;
    batch_parse) cp tests/fixtures/atom/batch-*.txt tests/fixtures/atom/client-requests/12-batch.body "$dir"/ 2>/dev/null || true ;;
  esac
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "${targets[@]}"; do
  # FUZZ_CORPUS_DIR_ONE: one corpus directory as it is (the self-test's)
  corpus="${FUZZ_CORPUS_DIR_ONE:-$FUZZ_CORPUS_DIR/$t}"
  mkdir -p "$corpus" "fuzz/artifacts/$t"
  [[ -n "$(ls -A "$corpus")" ]] || seed "$t" "$corpus"
  echo "== fuzz $t for ${SECONDS_PER_TARGET}s"
  bin="$FUZZ_TARGET_DIR/$TRIPLE/release/$t"
  status=0
  "$bin" -max_total_time="$SECONDS_PER_TARGET" -max_len=16384 \
    -artifact_prefix="fuzz/artifacts/$t/" -print_final_stats=1 "$corpus" >"$log" 2>&1 || status=$?
  grep -E '^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb|Done )' "$log" || true
  if [[ $status -ne 0 ]]; then
    tail -n 25 "$log" >&2
    echo "fuzz target $t failed (exit $status)" >&2
    for a in $(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log"); do
      echo "  input: $a; replay with: $bin $a" >&2
    done
    exit "$status"
  fi
done
