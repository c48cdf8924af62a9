#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with coverage instrumentation (stable Rust, no
# cargo-fuzz, no sanitizer: the crate has no unsafe code) and runs each for a while.
#
# Usage: scripts/fuzz.sh [seconds-per-target] [target...]
#   seconds-per-target  default 10 (the test command's smoke run)
#   target              default: every target in fuzz/Cargo.toml
#
# Each target starts from a corpus in $FUZZ_CORPUS_DIR/<target> (default
# ~/.cache/aztable/fuzz-corpus), seeded from the repository's fixtures where they fit,
# and keeps what it finds there for the next run. A crash (a panic or a failed
# round-trip assertion) stops the script with the target's exit status; the input is
# saved in fuzz/artifacts/<target>/ and replays with
#   $FUZZ_TARGET_DIR/x86_64-unknown-linux-gnu/release/<target> <file>
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_TARGET="${1:-10}"
shift || true
FUZZ_TARGET_DIR="${FUZZ_TARGET_DIR:-${CARGO_TARGET_DIR:-$HOME/.cache/aztable/target}-fuzz}"
FUZZ_CORPUS_DIR="${FUZZ_CORPUS_DIR:-$HOME/.cache/aztable/fuzz-corpus}"
TRIPLE="$(rustc -vV | sed -n 's/^host: //p')"

if [[ $# -gt 0 ]]; then
  targets=("$@")
else
  mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^aztable-fuzz$')
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

for t in "${targets[@]}"; do
  corpus="$FUZZ_CORPUS_DIR/$t"
  mkdir -p "$corpus" "fuzz/artifacts/$t"
  [[ -n "$(ls -A "$corpus")" ]] || seed "$t" "$corpus"
  echo "== fuzz $t for ${SECONDS_PER_TARGET}s"
  "$FUZZ_TARGET_DIR/$TRIPLE/release/$t" -max_total_time="$SECONDS_PER_TARGET" -max_len=16384 \
    -artifact_prefix="fuzz/artifacts/$t/" -print_final_stats=1 "$corpus" 2>&1 \
    | grep -E '^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+== ERROR|thread .* panicked|SUMMARY|Done )' || true
  status=${PIPESTATUS[0]}
  if [[ $status -ne 0 ]]; then
    echo "fuzz target $t failed (exit $status): see fuzz/artifacts/$t/" >&2
    exit "$status"
  fi
done
