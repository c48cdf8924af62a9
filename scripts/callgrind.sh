#!/bin/bash
# Instructions per operation, counted by callgrind: deterministic (the same binaries and
# inputs give the same count whatever else the machine runs), so usable on a busy
# machine where CPU times are not. For each scenario, aztable (and the ceiling server,
# for the scenarios it answers) runs under `valgrind --tool=callgrind
# --instr-atstart=no`; the table is created and loaded with instrumentation off,
# WARMUP operations run, instrumentation goes on, the load tool runs N operations,
# the counts are dumped and the servers stopped. Printed: user-space instructions of
# all the server's threads per operation (per entity for batch-insert, per examined
# entity for filtered-scan) and the ratio aztable/ceiling.
#
#   cargo build --release -p aztable --bin aztable -p aztable-bench
#   scripts/callgrind.sh point-read filtered-scan            # or: all
#   N=500 CONNECTIONS=4 scripts/callgrind.sh insert
#   callgrind_annotate $OUT/aztable.filtered-scan.out | head -60   # where they go
#
# Scenarios: point-read, insert (insert-many-partitions), batch-insert, filtered-scan
# (20,000 entities, `Tag eq 'needle'`), filtered-walk (`not (Count ge 0 and Count le 1000000)`:
# evaluated on the summary's columns), filtered-walk-string (`not (Tag ne 'nothing')`: on
# columns too), filtered-walk-rows (`RowKey ge 'r' and not (Count ge 0)`: every row read),
# filtered-row-key (`RowKey eq 'nothing'`: each partition's rows passed over),
# range-query (10 rows), page-all (every entity returned, per entity). N (operations; a
# filtered-scan operation is a full pass), PRELOAD, CONNECTIONS (1), WARMUP, BIN, OUT,
# VG_EXTRA (more valgrind options: `--dump-instr=yes` counts each instruction, for
# `callgrind_annotate --auto=yes` or objdump beside the counts).
set -u
BIN=${BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/aztable/target}/release}
OUT=${OUT:-$(mktemp -d)}
CONNECTIONS=${CONNECTIONS:-1}
PORT=${PORT:-10502}
mkdir -p "$OUT"
[ $# -eq 0 ] && set -- all
[ "$*" = all ] && set -- point-read insert batch-insert range-query filtered-scan filtered-walk filtered-walk-string filtered-walk-rows filtered-row-key page-all
pids=()
cleanup() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT

# defaults per scenario: operations measured, preload, divisor (requests or entities)
settings() {
  case $1 in
    point-read) echo "${N:-2000} ${PRELOAD:-10000} requests point-read" ;;
    insert) echo "${N:-2000} ${PRELOAD:-0} requests insert-many-partitions" ;;
    batch-insert) echo "${N:-40} ${PRELOAD:-0} entities batch-insert" ;;
    range-query) echo "${N:-1000} ${PRELOAD:-10000} requests range-query" ;;
    filtered-scan) echo "${N:-3} ${PRELOAD:-20000} entities filtered-scan" ;;
    filtered-walk) echo "${N:-3} ${PRELOAD:-20000} entities filtered-walk" ;;
    filtered-walk-string) echo "${N:-3} ${PRELOAD:-20000} entities filtered-walk-string" ;;
    filtered-walk-rows) echo "${N:-3} ${PRELOAD:-20000} entities filtered-walk-rows" ;;
    filtered-row-key) echo "${N:-3} ${PRELOAD:-20000} entities filtered-row-key" ;;
    page-all) echo "${N:-3} ${PRELOAD:-20000} entities page-all" ;;
    *) echo "unknown scenario '$1' (point-read, insert, batch-insert, range-query, filtered-scan, filtered-walk, filtered-walk-string, filtered-walk-rows, filtered-row-key, page-all, all)" >&2
       return 1 ;;
  esac
}

wait_port() {
  for _ in $(seq 600); do
    (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on port $1" >&2
  return 1
}

# measure LABEL SCENARIO: starts the server LABEL under callgrind, loads, measures;
# prints "instructions operations"
measure() {
  local label=$1 name=$2 n preload per scenario pid data out bench dump
  read -r n preload per scenario < <(settings "$name") || return 1
  out="$OUT/$label.$name.out"
  rm -f "$out"*
  data=$(mktemp -d)
  # (VG_EXTRA split into words on purpose: several options)
  # shellcheck disable=SC2206
  local vg=(valgrind --tool=callgrind --instr-atstart=no "--callgrind-out-file=$out" ${VG_EXTRA:-})
  case $label in
    aztable) "${vg[@]}" "$BIN/aztable" --tablePort "$PORT" --location "$data" --silent \
               >"$OUT/$label.$name.log" 2>&1 & ;;
    ceiling) "${vg[@]}" "$BIN/aztable-bench" --ceiling-server "$PORT" --serve-for 60m \
               >"$OUT/$label.$name.log" 2>&1 & ;;
  esac
  pid=$!
  pids+=("$pid")
  stop() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$data"; }
  wait_port "$PORT" || { stop; return 1; }
  bench=("$BIN/aztable-bench" --endpoint "http://127.0.0.1:$PORT/devstoreaccount1" --scenario "$scenario"
    --table "cg${name//-/}" --duration 1h --connections "$CONNECTIONS" --json)
  [ "$preload" -gt 0 ] && bench+=(--preload "$preload")
  # create, load and warm up, uncounted (errors are judged in the measured run); reads
  # warm up with three reads per preloaded entity, so nearly every key has been read, as
  # in the load tool's runs after their first second
  local warmup=$(( n < 100 ? 1 : 100 ))
  case $scenario in point-read | range-query) warmup=$(( preload * 3 )) ;; esac
  "${bench[@]}" --requests "${WARMUP:-$warmup}" >"$OUT/$label.$name.warmup.json" 2>&1
  grep -q '"kind":"run"' "$OUT/$label.$name.warmup.json" ||
    { echo "$label $name: warm-up failed: $(tail -3 "$OUT/$label.$name.warmup.json")" >&2; stop; return 1; }
  callgrind_control -i on "$pid" >/dev/null 2>&1
  "${bench[@]}" --requests "$n" >"$OUT/$label.$name.json" 2>&1
  callgrind_control --dump="$name" "$pid" >/dev/null 2>&1
  callgrind_control -i off "$pid" >/dev/null 2>&1
  stop
  local run
  run=$(grep '"kind":"run"' "$OUT/$label.$name.json" | head -1)
  # (the ceiling answers every query with one row, which range-query counts as an error)
  if [ -z "$run" ] || { [ "$(jq .errors <<<"$run")" != 0 ] &&
    ! { [ "$label" = ceiling ] && jq -r .first_error <<<"$run" | grep -q '^range query returned'; }; }; then
    echo "$label $name: the load tool failed: $(tail -3 "$OUT/$label.$name.json")" >&2
    return 1
  fi
  # the dump holds only the measured window (instrumentation was off before it)
  dump=$(grep -l "^desc: Trigger: dump $name\$" "$out".* 2>/dev/null | head -1)
  [ -n "$dump" ] || { echo "$label $name: no callgrind dump" >&2; return 1; }
  mv "$dump" "$out"
  echo "$(awk '/^(summary|totals):/ {print $2; exit}' "$out") $(jq ".$per" <<<"$run")"
}

printf '%-20s %16s %14s %16s %9s\n' scenario "aztable instr/op" operations "ceiling instr/op" ratio
for name in "$@"; do
  settings "$name" >/dev/null || exit 2
  read -r ai ao < <(measure aztable "$name") || { echo "$name: aztable failed" >&2; continue; }
  a=$(( ai / ao ))
  c=- r=-
  case $name in
    point-read | insert | batch-insert | range-query)
      if read -r ci co < <(measure ceiling "$name"); then
        c=$(( ci / co ))
        r=$(awk -v a="$a" -v c="$c" 'BEGIN { printf "%.2fx", a / c }')
      fi ;;
  esac
  printf '%-20s %16s %14s %16s %9s\n' "$name" "$a" "$ao" "$c" "$r"
done
echo "callgrind outputs, logs and the load tool's JSON: $OUT"
