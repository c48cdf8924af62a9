#!/usr/bin/env bash
# Makes tests/fixtures/azurite-real/__azurite_db_table__.json: the table database a pinned
# real Azurite writes when the JS SDK stores known entities with every Edm type in it
# (tests/sdk/js/azurite_fixture_writer.mjs). tests/it/transfer_oracles.rs imports it and
# checks every value against literals.
#
# Usage: scripts/azurite-fixture.sh [out-dir]   (default tests/fixtures/azurite-real)
#
# Environment:
#   AZURITE_CACHE  where the pinned Azurite is installed with npm, outside the clone
#                  (default ~/.cache/aztable/azurite-$AZURITE_VERSION)
#   AZURITE_PORT   the port it listens on while the entities are written (default 10877)
# Needs node and npm, and tests/sdk/js/node_modules (npm ci there).
set -euo pipefail

AZURITE_VERSION=3.37.0
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$REPO_ROOT/tests/fixtures/azurite-real}"
CACHE="${AZURITE_CACHE:-$HOME/.cache/aztable/azurite-$AZURITE_VERSION}"
PORT="${AZURITE_PORT:-10877}"

if [[ ! -x "$CACHE/node_modules/.bin/azurite-table" ]]; then
  mkdir -p "$CACHE"
  npm install --prefix "$CACHE" --no-audit --no-fund "azurite@$AZURITE_VERSION"
fi
installed=$(node -p "require('$CACHE/node_modules/azurite/package.json').version")
[[ "$installed" == "$AZURITE_VERSION" ]] || { echo "azurite $installed in $CACHE, not $AZURITE_VERSION" >&2; exit 2; }
[[ -d "$REPO_ROOT/tests/sdk/js/node_modules/@azure/data-tables" ]] || (cd "$REPO_ROOT/tests/sdk/js" && npm ci)

work=$(mktemp -d)
pid=""
cleanup() {
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
"$CACHE/node_modules/.bin/azurite-table" --tableHost 127.0.0.1 --tablePort "$PORT" \
  --location "$work" --skipApiVersionCheck --disableProductStyleUrl >"$work/azurite.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  grep -qs "successfully listening" "$work/azurite.log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/azurite.log" >&2; exit 1; }
  sleep 0.1
done
node "$REPO_ROOT/tests/sdk/js/azurite_fixture_writer.mjs" "http://127.0.0.1:$PORT/devstoreaccount1"
# Azurite saves its LokiJS database every 5 s (autosaveInterval), not on SIGTERM: wait
# for a save after the writes, then stop it
sleep 7
kill -TERM "$pid"
wait "$pid" || true
pid=""
mkdir -p "$OUT"
cp "$work/__azurite_db_table__.json" "$OUT/"
echo "azurite $AZURITE_VERSION wrote $OUT/__azurite_db_table__.json"
