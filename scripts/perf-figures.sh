#!/bin/bash
# The figures of docs/performance.md's "Current figures", in one run on a quiet machine:
# server CPU per operation of aztable beside the do-nothing ceiling server and Azurite
# (one invocation), filtered scans over 20,000 and 100,000 entities beside Azurite and
# over 1,000,000 alone, a connection sweep, point reads under scans, instructions per
# operation from callgrind (scripts/callgrind.sh, when valgrind is installed), and, with
# BEFORE set, every scenario against an earlier build. About 45 minutes.
#
#   cargo build --release --locked -p aztable -p aztable-bench
#   npm install --prefix /tmp/azurite azurite@3.37.0
#   apt-get install vmtouch      # optional: 1M reads also with the files locked in memory
#   BEFORE=/path/to/older/aztable scripts/perf-figures.sh      # tables in $OUT/*.txt
set -u
BIN=${BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/aztable/target}/release}
AZURITE=${AZURITE:-/tmp/azurite/node_modules/.bin/azurite-table}
OUT=${OUT:-$(mktemp -d)}
DATA=${DATA:-$(mktemp -d)}
BEFORE=${BEFORE:-}
mkdir -p "$OUT"
echo "binaries: $BIN; results: $OUT; data: $DATA"
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT

"$BIN/aztable" --tablePort 10302 --location "$DATA/now" --silent >/dev/null 2>&1 & AZP=$!; pids+=($AZP)
"$BIN/aztable-bench" --ceiling-server 10402 --serve-for 60m >/dev/null 2>&1 & CEP=$!; pids+=($CEP)
"$AZURITE" --tableHost 127.0.0.1 --tablePort 10102 --inMemoryPersistence --silent >/dev/null 2>&1 &
pids+=($!)
sleep 6
NP=$(ss -ltnp | grep ':10102 ' | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
pids+=($NP)
echo "idle RSS (kB): aztable $(ps -o rss= -p $AZP) ceiling $(ps -o rss= -p $CEP) azurite $(ps -o rss= -p $NP)" | tee "$OUT/memory.txt"

B="$BIN/aztable-bench --connections 16 --duration 8s --settle 20s --markdown"
A=aztable=http://127.0.0.1:10302/devstoreaccount1
C=ceiling=http://127.0.0.1:10402/devstoreaccount1
Z=azurite=http://127.0.0.1:10102/devstoreaccount1
$B --repeat 2 --endpoint $A --compare $C --compare $Z --pid $AZP --compare-pid $CEP --compare-pid $NP \
  --scenario point-read,insert-many-partitions,insert-one-partition,batch-insert,range-query,mixed \
  > "$OUT/three-way.txt" 2>&1
$B --repeat 2 --endpoint $A --compare $Z --pid $AZP --compare-pid $NP \
  --scenario filtered-scan,filtered-walk,filtered-walk-string,filtered-walk-rows,filtered-row-key,page-all --preload 20000 > "$OUT/scans.txt" 2>&1
$B --repeat 2 --endpoint $A --compare $Z --pid $AZP --compare-pid $NP \
  --scenario filtered-scan,filtered-walk,filtered-walk-string,filtered-walk-rows,filtered-row-key --preload 100000 > "$OUT/scans-100k.txt" 2>&1
kill "$NP"
# (--connections repeated would add to the list, so not $B here)
$BIN/aztable-bench --duration 8s --settle 20s --markdown --repeat 2 --endpoint $A --compare $C --pid $AZP \
  --compare-pid $CEP --scenario point-read --connections 16,256,1000 > "$OUT/sweep.txt" 2>&1
for scanners in 4 0; do
  $BIN/aztable-bench --duration 10s --settle 20s --repeat 3 --endpoint $A --pid $AZP --scenario read-under-scans \
    --table scan200k --keep-tables --scanners $scanners > "$OUT/under-scans-$scanners.txt" 2>&1
done
echo "RSS after the runs (kB): aztable $(ps -o rss= -p $AZP)" | tee -a "$OUT/memory.txt"
kill "$CEP"
# 1,000,000 entities: uniformly random point reads against the same reads on a hot set
$BIN/aztable-bench --endpoint $A --pid $AZP --scenario point-read --table big1m --preload 1000000 \
  --duration 2s > "$OUT/one-million-load.txt" 2>&1
echo "RSS after loading 1,000,000 (kB): aztable $(ps -o rss= -p $AZP)" | tee -a "$OUT/memory.txt"
sleep 20
# Some VMs (this project's benchmark machine among them) reclaim idle page cache within a
# minute, which turns part of a uniform run into disk reads: with vmtouch installed, the
# rounds run once as the machine leaves the files and once with them locked in memory
# (vmtouch's own mapping: not the server's RSS).
one_million_rounds() {
  for round in 1 2 3; do
    for hot in "" "--hot-keys 10000"; do
      $BIN/aztable-bench --endpoint $A --pid $AZP --scenario point-read --table big1m --preload 1000000 \
        --duration 8s --settle 20s $hot >> "$OUT/$1" 2>&1
    done
  done
}
one_million_rounds one-million.txt
if command -v vmtouch >/dev/null; then
  vmtouch -l "$DATA/now" >/dev/null 2>&1 & VT=$!; pids+=($VT)
  sleep 20
  one_million_rounds one-million-locked.txt
  kill "$VT"
fi
echo "RSS after the 1,000,000-entity reads (kB): aztable $(ps -o rss= -p $AZP)" | tee -a "$OUT/memory.txt"
# filtered scans over the same 1,000,000 entities, aztable alone (Azurite keeps every
# entity in its heap); after the memory figures, which are of loads and reads
$B --repeat 2 --endpoint $A --pid $AZP --scenario filtered-scan,filtered-walk,filtered-walk-string,filtered-walk-rows,filtered-row-key --table big1m --preload 1000000 \
  > "$OUT/scans-1m.txt" 2>&1
kill "$AZP"

if [ -n "$BEFORE" ]; then
  "$BIN/aztable" --tablePort 10302 --location "$DATA/now2" --silent >/dev/null 2>&1 & NEW=$!; pids+=($NEW)
  "$BEFORE" --tablePort 10303 --location "$DATA/before" --silent >/dev/null 2>&1 & OLD=$!; pids+=($OLD)
  sleep 2
  N=now=http://127.0.0.1:10302/devstoreaccount1 O=before=http://127.0.0.1:10303/devstoreaccount1
  $B --repeat 2 --endpoint $N --compare $O --pid $NEW --compare-pid $OLD --scenario all > "$OUT/regression.txt" 2>&1
  $B --repeat 2 --endpoint $N --compare $O --pid $NEW --compare-pid $OLD --scenario filtered-scan,page-all \
    --preload 100000 > "$OUT/regression-100k.txt" 2>&1
fi
# instructions per operation (callgrind): aztable and the ceiling, on ports of their own
if command -v valgrind >/dev/null; then
  BIN="$BIN" OUT="$OUT/callgrind" "$(dirname "$0")/callgrind.sh" all > "$OUT/instructions.txt" 2>&1
fi
echo "done: $OUT"
