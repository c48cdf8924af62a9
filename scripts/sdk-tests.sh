#!/usr/bin/env bash
# Runs the Azure SDK conformance suites (Python azure-data-tables, JS @azure/data-tables,
# the legacy AtomPub Python client azure-storage 0.20.3, the JSON-era legacy clients
# Python azure-cosmosdb-table 1.0.6 and Node azure-storage 2.10.7, Java
# com.azure:azure-data-tables through Maven, and Go aztables (tests/sdk/go) with
# `go test`) against aztable.
#
# Usage:
#   scripts/sdk-tests.sh <path-to-aztable-binary>   start a fresh server (temp RocksDB dir) and test it
#   AZTABLE_CONNECTION_STRING=... scripts/sdk-tests.sh
#                                                   test an already-running server
#
# Environment:
#   AZTABLE_CONNECTION_STRING  used when no binary is given
#   AZTABLE_ENDPOINT           optional; derived from TableEndpoint= otherwise
#   AZTABLE_DEFAULT_PORT_TEST=1  also test UseDevelopmentStorage=true (needs a server on 10002;
#                              set by this script when it starts the server there)
#   SDK_TESTS_SKIP_INSTALL=1   do not pip/npm install the pinned dependencies (Maven
#                              resolves the Java suite's into ~/.m2 on its first run)
#   SDK_TESTS_SUITES           "python js legacy legacy-json java go" (default), or a subset
#   SDK_TESTS_STARTUP_TIMEOUT  seconds to wait for the server port (default 30)
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY_DIR="$REPO_ROOT/tests/sdk/python"
JS_DIR="$REPO_ROOT/tests/sdk/js"
JAVA_DIR="$REPO_ROOT/tests/sdk/java"
LEGACY_DIR="$REPO_ROOT/tests/sdk/legacy"
LEGACY_JSON_DIR="$REPO_ROOT/tests/sdk/legacy-json"
GO_DIR="$REPO_ROOT/tests/sdk/go"
ACCOUNT="devstoreaccount1"
KEY="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
STARTUP_TIMEOUT="${SDK_TESTS_STARTUP_TIMEOUT:-30}"
SUITES="${SDK_TESTS_SUITES:-python js legacy legacy-json java go}"
# The suites' Python packages go into a virtual environment of their own (stock Debian
# refuses a global pip install): $SDK_TESTS_VENV, default ~/.cache/aztable/sdk-venv.
# A PYTHON given in the environment is used as it is instead.
PYTHON_GIVEN="${PYTHON:-}"
PYTHON="${PYTHON:-python3}"
VENV="${SDK_TESTS_VENV:-$HOME/.cache/aztable/sdk-venv}"

log() { printf '[sdk-tests] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 2; }

usage() {
  sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

BINARY="${1:-}"
if [[ "$BINARY" == "-h" || "$BINARY" == "--help" || $# -gt 1 ]]; then
  usage
fi

SERVER_PID=""
WORK_DIR=""
cleanup() {
  local rc=$?
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [[ -n "$WORK_DIR" && -d "$WORK_DIR" ]]; then
    rm -rf "$WORK_DIR"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# --- dependencies --------------------------------------------------------------------------
use_venv() {
  [[ -n "$PYTHON_GIVEN" ]] && return
  if [[ ! -x "$VENV/bin/python" ]]; then
    [[ "${SDK_TESTS_SKIP_INSTALL:-0}" == "1" ]] && return
    log "creating the Python virtual environment $VENV"
    "$PYTHON" -m venv "$VENV" >&2 || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
  fi
  PYTHON="$VENV/bin/python"
}

install_deps() {
  use_venv
  if [[ " $SUITES " == *" java "* ]]; then
    # checked even with SDK_TESTS_SKIP_INSTALL=1; the dependencies themselves are
    # resolved by the test run (into ~/.m2, outside the clone)
    command -v mvn >/dev/null \
      || die "mvn is not installed: the java suite needs Maven 3.6+ and a JDK 17+ (Debian: apt-get install maven openjdk-17-jdk-headless)"
    command -v java >/dev/null || die "java is not installed: the java suite needs a JDK 17+"
  fi
  if [[ " $SUITES " == *" go "* ]]; then
    # Go >= 1.23 (tests/sdk/go/go.mod; Debian 12's golang-go is 1.19, too old)
    command -v go >/dev/null || die "go is not installed: the go suite needs Go >= 1.23 on PATH, or leave go out of SDK_TESTS_SUITES"
    local gov minor
    gov="$(go env GOVERSION 2>/dev/null || true)" && minor="${gov#go1.}" && minor="${minor%%[!0-9]*}"
    [[ -n "$minor" && "$minor" -ge 23 ]] || die "the go suite needs Go >= 1.23, found '${gov:-unknown}' ($(command -v go))"
    # The pinned modules (tests/sdk/go/go.sum) into the default module cache, outside the clone.
    if [[ "${SDK_TESTS_SKIP_INSTALL:-0}" != "1" ]]; then
      (cd "$GO_DIR" && go mod download) || die "go mod download in tests/sdk/go failed"
    fi
  fi
  if [[ "${SDK_TESTS_SKIP_INSTALL:-0}" == "1" ]]; then
    return
  fi
  if [[ " $SUITES " == *" python "* || " $SUITES " == *" legacy "* || " $SUITES " == *" legacy-json "* ]]; then
    # the legacy suites run under the same pytest (and take requests, dateutil and
    # cryptography from what azure-data-tables brings)
    if ! "$PYTHON" -m pip install --disable-pip-version-check --root-user-action=ignore -q -r "$PY_DIR/requirements.txt" >&2; then
      die "pip install -r tests/sdk/python/requirements.txt failed"
    fi
  fi
  if [[ " $SUITES " == *" legacy "* ]]; then
    # Kept apart in tests/sdk/legacy/.deps: its azure.storage must not meet the modern
    # azure namespace in site-packages (README.md there says why --no-deps).
    local deps="$LEGACY_DIR/.deps"
    if ! cmp -s "$LEGACY_DIR/requirements.txt" "$deps/.requirements.txt"; then
      rm -rf "$deps"
      if ! "$PYTHON" -m pip install --disable-pip-version-check --root-user-action=ignore -q \
          --no-deps --target "$deps" -r "$LEGACY_DIR/requirements.txt" >&2; then
        die "pip install --target tests/sdk/legacy/.deps -r tests/sdk/legacy/requirements.txt failed"
      fi
      cp "$LEGACY_DIR/requirements.txt" "$deps/.requirements.txt"
    fi
  fi
  if [[ " $SUITES " == *" legacy-json "* ]]; then
    # azure-cosmosdb-table apart in .deps, for the same namespace reason (see its
    # requirements.txt); azure-storage 2.10.7 in its own node_modules
    local jdeps="$LEGACY_JSON_DIR/python/.deps"
    if ! cmp -s "$LEGACY_JSON_DIR/python/requirements.txt" "$jdeps/.requirements.txt"; then
      rm -rf "$jdeps"
      if ! "$PYTHON" -m pip install --disable-pip-version-check --root-user-action=ignore -q \
          --no-deps --target "$jdeps" -r "$LEGACY_JSON_DIR/python/requirements.txt" >&2; then
        die "pip install --target tests/sdk/legacy-json/python/.deps failed"
      fi
      cp "$LEGACY_JSON_DIR/python/requirements.txt" "$jdeps/.requirements.txt"
    fi
    command -v node >/dev/null || die "node is not installed"
    local jjs="$LEGACY_JSON_DIR/js"
    if [[ ! -d "$jjs/node_modules/azure-storage" || "$jjs/package-lock.json" -nt "$jjs/node_modules/.package-lock.json" ]]; then
      (cd "$jjs" && npm ci --no-audit --no-fund --loglevel=error >&2) || die "npm ci in tests/sdk/legacy-json/js failed"
    fi
  fi
  if [[ " $SUITES " == *" js "* ]]; then
    command -v node >/dev/null || die "node is not installed"
    if [[ ! -d "$JS_DIR/node_modules/@azure/data-tables" \
          || "$JS_DIR/package-lock.json" -nt "$JS_DIR/node_modules/.package-lock.json" ]]; then
      (cd "$JS_DIR" && npm ci --no-audit --no-fund --loglevel=error >&2) || die "npm ci in tests/sdk/js failed"
    fi
  fi
}

# --- server --------------------------------------------------------------------------------
if [[ -n "$BINARY" ]]; then
  [[ -x "$BINARY" ]] || die "aztable binary '$BINARY' not found or not executable"
  BINARY="$(cd "$(dirname "$BINARY")" && pwd)/$(basename "$BINARY")"
  install_deps
  WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/aztable-sdk-tests.XXXXXX")"
  mkdir -p "$WORK_DIR/data"
  # On the default port when it is free, so the UseDevelopmentStorage=true tests run too.
  if port_open 10002; then
    PORT="$(free_port)"
    log "127.0.0.1:10002 is taken: the UseDevelopmentStorage=true tests will be skipped (they need the server there)"
  else
    PORT=10002
    export AZTABLE_DEFAULT_PORT_TEST=1
  fi
  log "starting $BINARY on 127.0.0.1:$PORT (location $WORK_DIR/data)"
  # Not --silent: the access log is read after the suites (below), so that an SDK's
  # retry cannot hide a server fault.
  "$BINARY" --tableHost 127.0.0.1 --tablePort "$PORT" --location "$WORK_DIR/data" \
    >"$WORK_DIR/server.log" 2>&1 </dev/null &
  SERVER_PID=$!
  deadline=$((SECONDS + STARTUP_TIMEOUT))
  until port_open "$PORT"; do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      wait "$SERVER_PID" 2>/dev/null && status=0 || status=$?
      SERVER_PID=""
      log "server log:"; tail -n 50 "$WORK_DIR/server.log" >&2 || true
      die "aztable exited during startup (status $status)"
    fi
    if ((SECONDS >= deadline)); then
      log "server log:"; tail -n 50 "$WORK_DIR/server.log" >&2 || true
      die "aztable did not accept connections on 127.0.0.1:$PORT within ${STARTUP_TIMEOUT}s"
    fi
    sleep 0.2
  done
  log "server is up (pid $SERVER_PID)"
  # AZTABLE_FSYNC=1 (the test command's second pass) must reach the server as --fsync.
  if [[ "${AZTABLE_FSYNC:-}" == 1 ]]; then
    grep -q -- '--fsync: every write is synced' "$WORK_DIR/server.log" \
      || { tail -n 20 "$WORK_DIR/server.log" >&2; die "AZTABLE_FSYNC=1, but the server did not start with --fsync"; }
    log "the server runs with --fsync (its startup line says so)"
  fi
  export AZTABLE_ENDPOINT="http://127.0.0.1:$PORT/$ACCOUNT"
  export AZTABLE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=$ACCOUNT;AccountKey=$KEY;TableEndpoint=$AZTABLE_ENDPOINT;"
  export AZTABLE_BINARY="$BINARY"
elif [[ -n "${AZTABLE_CONNECTION_STRING:-}" ]]; then
  install_deps
  if [[ -z "${AZTABLE_ENDPOINT:-}" ]]; then
    AZTABLE_ENDPOINT="$(printf '%s' "$AZTABLE_CONNECTION_STRING" | tr ';' '\n' | sed -n 's/^[[:space:]]*TableEndpoint=//p' | head -n1)"
    [[ -n "$AZTABLE_ENDPOINT" ]] || die "AZTABLE_CONNECTION_STRING has no TableEndpoint= and AZTABLE_ENDPOINT is unset"
    export AZTABLE_ENDPOINT
  fi
  export AZTABLE_CONNECTION_STRING
  log "using the running server at $AZTABLE_ENDPOINT"
else
  usage
fi

# --- suites --------------------------------------------------------------------------------
py_rc=0
js_rc=0
legacy_rc=0
legacy_json_rc=0
java_rc=0
go_rc=0
ran=()
if [[ " $SUITES " == *" python "* ]]; then
  log "running Python suite (pytest)"
  (cd "$PY_DIR" && "$PYTHON" -m pytest -q -rs -p no:cacheprovider) || py_rc=$?
  ran+=("python=$py_rc")
fi
if [[ " $SUITES " == *" js "* ]]; then
  log "running JS suite (node --test)"
  (cd "$JS_DIR" && node --test) || js_rc=$?
  ran+=("js=$js_rc")
fi
if [[ " $SUITES " == *" legacy "* ]]; then
  log "running legacy AtomPub suite (pytest, azure-storage 0.20.3)"
  (cd "$LEGACY_DIR" && "$PYTHON" -m pytest -q -rs -p no:cacheprovider) || legacy_rc=$?
  ran+=("legacy=$legacy_rc")
fi
if [[ " $SUITES " == *" legacy-json "* ]]; then
  log "running legacy JSON suites (pytest: azure-cosmosdb-table 1.0.6; node --test: azure-storage 2.10.7)"
  (cd "$LEGACY_JSON_DIR/python" && "$PYTHON" -m pytest -q -rs -p no:cacheprovider) || legacy_json_rc=$?
  (cd "$LEGACY_JSON_DIR/js" && node --test) || legacy_json_rc=$?
  ran+=("legacy-json=$legacy_json_rc")
fi
if [[ " $SUITES " == *" go "* ]]; then
  log "running Go suite (go test, aztables)"
  (cd "$GO_DIR" && go test -count=1 ./...) || go_rc=$?
  ran+=("go=$go_rc")
fi

if [[ " $SUITES " == *" java "* ]]; then
  log "running Java suite (mvn test: azure-data-tables through Maven and JUnit 5)"
  # -q: only failures are printed (surefire's report with trimmed stack traces); the counts
  # come from the surefire XML reports, which a fresh target/surefire-reports holds alone.
  # (tests/sdk/java/.mvn/jvm.config keeps Debian's Maven from printing stray colour resets.)
  rm -rf "$JAVA_DIR/target/surefire-reports"
  (cd "$JAVA_DIR" && mvn -q -B test) || java_rc=$?
  java_summary="$(cat "$JAVA_DIR"/target/surefire-reports/TEST-*.xml 2>/dev/null \
    | sed -n 's/^<testsuite .* tests="\([0-9]*\)" errors="\([0-9]*\)" skipped="\([0-9]*\)" failures="\([0-9]*\)".*/\1 \2 \3 \4/p' \
    | awk '{t+=$1; e+=$2; s+=$3; f+=$4} END {printf "%d passed, %d failed, %d skipped", t-e-s-f, e+f, s}')"
  log "java: ${java_summary:-no surefire report}"
  ran+=("java=$java_rc")
fi

if [[ -n "$SERVER_PID" ]] && ! kill -0 "$SERVER_PID" 2>/dev/null; then
  log "WARNING: the server died during the run; last log lines:"
  tail -n 50 "$WORK_DIR/server.log" >&2 || true
fi

# The SDKs retry 408, 500, 502, 503 and 504 by default, so a suite can pass over a
# transient server fault. The suites provoke none of these on this server (the retry
# and fault-injection tests start servers of their own): any such answer in the access
# log fails the run.
faults_rc=0
if [[ -n "$BINARY" ]]; then
  faults="$(grep -E 'status=(408|500|502|503|504)( |$)' "$WORK_DIR/server.log" || true)"
  if [[ -n "$faults" ]]; then
    log "the server answered with a status the SDKs retry; their retries may have hidden it:"
    printf '%s\n' "$faults" | head -n 20 >&2
    faults_rc=1
  else
    log "access log: $(grep -c 'status=' "$WORK_DIR/server.log" || true) requests, none answered 408/500/502/503/504"
  fi
  ran+=("server-faults=$faults_rc")
fi

log "results: ${ran[*]}"
if ((py_rc != 0 || js_rc != 0 || legacy_rc != 0 || legacy_json_rc != 0 || java_rc != 0 || go_rc != 0 || faults_rc != 0)); then
  exit 1
fi
exit 0
