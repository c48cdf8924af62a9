#!/usr/bin/env bash
# Builds the container image and starts it the way each Testcontainers Azurite module
# starts Azurite, waits the way each waits, and runs a Python azure-data-tables smoke
# test through the published port:
#   java    command `azurite --blobHost 0.0.0.0 --queueHost 0.0.0.0 --tableHost 0.0.0.0`
#           (after the image's entrypoint); waits until 10000, 10001 and 10002 listen,
#           inside the container (/proc/net/tcp, as its internal check) and from the host
#   dotnet  entrypoint `azurite`, the same flags; waits for the three log lines
#   node    entrypoint `azurite`, every host and port given, --inMemoryPersistence
#           --skipApiVersionCheck; waits for the three log lines
#   python  the image's defaults with AZURITE_ACCOUNTS set; waits until 10000 accepts
# then: the Blob port's answer, `aztable healthcheck` and the engine's health status,
# user flags that keep the container defaults (`--inMemoryPersistence` alone), a
# restart that keeps /data (a named volume), HTTPS with a certificate and key copied in
# as root-owned files of mode 0600 (as Testcontainers Java's withSsl copies them: read
# as root, then served as uid 10001), `--user 10001`, `azurite-blob` and
# `azurite-queue` refused with their message, and the time from `run` to the first
# answer.
#
# Not part of scripts/test.sh: the image build compiles RocksDB (20-40 minutes cold on
# 2 cores). Needs docker (with a daemon) or podman (scripts: ../shared/tools/
# container-bases.sh makes the base images locally where no registry is reachable),
# and python3 with azure-data-tables (tests/sdk/python/requirements.txt).
#   IMAGE=name        image tag (default aztable:container-test)
#   SKIP_BUILD=1      use the image as it is
#   ENGINE=podman     choose the engine
#   MODULES=1         also run the real Testcontainers Azurite modules for Python
#                     (testcontainers 4.15.0), Node (@testcontainers/azurite 11.7.1),
#                     Java (testcontainers-azure 2.0.5) and Go (testcontainers-go
#                     modules/azure v0.44.0): tests/container/modules.{py,mjs},
#                     tests/container/java, tests/container/go, with the image in place
#                     of Azurite's; installed into ~/.cache/aztable (a venv, an npm
#                     prefix, a Maven repository) and Go's module cache; needs a JDK 17,
#                     Maven and Go for those two
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${IMAGE:-aztable:container-test}
KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
if [ -z "${ENGINE:-}" ]; then
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then ENGINE=docker
  elif command -v podman >/dev/null; then ENGINE=podman
  else echo "container-test: neither a docker daemon nor podman found" >&2; exit 1; fi
fi
echo "== engine: $ENGINE ($($ENGINE --version))"
# podman without systemd (as in many CI machines and VMs) complains on every start that
# it cannot schedule the periodic healthcheck; `podman healthcheck run` still works
quiet() { "$@" 2> >(grep -v 'systemd connection' >&2); }
python3 -c 'import azure.data.tables' || { echo "container-test: pip install -r tests/sdk/python/requirements.txt" >&2; exit 1; }

started=()
volume="aztable-ct-$$"
service_pid=
cleanup() {
  for c in "${started[@]}"; do $ENGINE rm -f -v "$c" >/dev/null 2>&1 || true; done
  $ENGINE volume rm -f "$volume" >/dev/null 2>&1 || true
  [ -z "$service_pid" ] || kill "$service_pid" 2>/dev/null || true
}
trap cleanup EXIT

t0=$SECONDS
step() { echo "== $1 ($((SECONDS - t0)) s since start)"; }
fail() { echo "FAILED: $*" >&2; [ -n "${cid:-}" ] && $ENGINE logs "$cid" 2>&1 | tail -30 >&2; exit 1; }

if [ "${SKIP_BUILD:-}" != 1 ]; then
  step "build $IMAGE"
  b=$SECONDS
  # --format docker: keeps HEALTHCHECK (podman's default OCI format drops it)
  if [ "$ENGINE" = podman ]; then $ENGINE build --format docker -t "$IMAGE" .; else $ENGINE build -t "$IMAGE" .; fi
  echo "== build took $((SECONDS - b)) s"
fi
echo "== image size: $($ENGINE image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.1f MB\n", $1/1e6}')"

# run NAME ARGS...: starts a container publishing the three ports on free host ports
run() {
  local name=$1
  shift
  cid=$(quiet $ENGINE run -d -p 127.0.0.1::10000 -p 127.0.0.1::10001 -p 127.0.0.1::10002 "$@")
  started+=("$cid")
  echo "-- $name: container ${cid:0:12}: $ENGINE run $*"
}
# host port published for container port $1
port() { $ENGINE port "$cid" "$1/tcp" | head -1 | sed 's/.*://'; }
# until CMD succeeds, for at most $1 seconds
wait_until() {
  local limit=$1 w=$SECONDS
  shift
  until "$@" >/dev/null 2>&1; do
    [ $((SECONDS - w)) -lt "$limit" ] || return 1
    sleep 0.2
  done
  echo "   ready after $((SECONDS - w)) s"
}
host_port_open() { python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1)" "$1"; }
# Testcontainers Java's internal check, word for word (InternalCommandPortListeningCheck):
# a shell loop in the container until every port shows in /proc/net/tcp* (or nc or
# bash's /dev/tcp connects); Java bounds it by its startup timeout, here 60 s
java_internal_check() {
  local cmd="while true; do ( true" p
  for p in "$@"; do
    cmd+=" &&  ($(printf "grep -i ':0*%x' /proc/net/tcp*" "$p") || nc -vz -w 1 localhost $p || /bin/bash -c '</dev/tcp/localhost/$p')"
  done
  cmd+=" ) && exit 0 || sleep 0.1; done"
  timeout 60 $ENGINE exec "$cid" /bin/sh -c "$cmd"
}
# and its external check: each mapped port accepts from the host
all_ports_listen() {
  java_internal_check 10000 10001 10002 || return 1
  for p in 10000 10001 10002; do host_port_open "$(port $p)" || return 1; done
}
all_lines_logged() {
  local log
  log=$($ENGINE logs "$cid" 2>&1)
  for s in Blob Queue Table; do grep -q "$s service is successfully listening" <<<"$log" || return 1; done
}
# smoke MODE: MODE=full creates, writes, reads, queries and deletes; write/read: across a restart
# (SCHEME=https: over TLS, trusting REQUESTS_CA_BUNDLE)
smoke() {
  local scheme=${SCHEME:-http}
  python3 - "$1" "DefaultEndpointsProtocol=$scheme;AccountName=devstoreaccount1;AccountKey=$KEY;TableEndpoint=$scheme://127.0.0.1:$(port 10002)/devstoreaccount1;" <<'EOF'
import sys, time
from azure.data.tables import TableServiceClient, UpdateMode
mode, conn = sys.argv[1], sys.argv[2]
t = time.monotonic()
svc = TableServiceClient.from_connection_string(conn)
table = svc.create_table_if_not_exists("smoke")
if mode in ("full", "write"):
    table.upsert_entity({"PartitionKey": "p", "RowKey": "1", "Name": "Ada", "Age": 36})
if mode in ("full", "read"):
    e = table.get_entity("p", "1")
    assert e["Name"] == "Ada" and e["Age"] == 36, e
if mode == "full":
    table.upsert_entity({"PartitionKey": "p", "RowKey": "2", "Name": "Grace"}, mode=UpdateMode.MERGE)
    names = sorted(x["Name"] for x in table.query_entities("PartitionKey eq 'p'"))
    assert names == ["Ada", "Grace"], names
    table.delete_entity("p", "2")
    assert [t.name for t in svc.list_tables()] == ["smoke"]
    svc.delete_table("smoke")
print(f"   SDK smoke ({mode}, {conn.split(';')[0].split('=')[1]}) ok in {time.monotonic() - t:.2f} s")
EOF
}

step "java: command line, ports"
run java "$IMAGE" azurite --blobHost 0.0.0.0 --queueHost 0.0.0.0 --tableHost 0.0.0.0
wait_until 60 all_ports_listen || fail "java: the three ports did not listen"
smoke full
quiet $ENGINE rm -f -v "$cid" >/dev/null

step "dotnet: entrypoint azurite, log lines"
run dotnet --entrypoint azurite "$IMAGE" --blobHost 0.0.0.0 --queueHost 0.0.0.0 --tableHost 0.0.0.0
wait_until 60 all_lines_logged || fail "dotnet: the three log lines did not appear"
$ENGINE logs "$cid" 2>&1 | grep 'successfully listening' | sed 's/^/   log: /'
smoke full
quiet $ENGINE rm -f -v "$cid" >/dev/null

step "node: entrypoint azurite, every port, in memory, log lines"
run node --entrypoint azurite "$IMAGE" --blobHost 0.0.0.0 --blobPort 10000 --queueHost 0.0.0.0 --queuePort 10001 \
  --tableHost 0.0.0.0 --tablePort 10002 --inMemoryPersistence --skipApiVersionCheck
wait_until 60 all_lines_logged || fail "node: the three log lines did not appear"
smoke full
quiet $ENGINE rm -f -v "$cid" >/dev/null

step "python: image defaults, AZURITE_ACCOUNTS, port 10000"
run python -e "AZURITE_ACCOUNTS=devstoreaccount1:$KEY" "$IMAGE"
wait_until 60 host_port_open "$(port 10000)" || fail "python: port 10000 did not accept"
# (the table port is bound before the Blob port, so it listens by now)
smoke full

step "the Blob port's answer"
answer=$(python3 - "$(port 10000)" <<'EOF'
import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/devstoreaccount1/container?restype=container")
except urllib.error.HTTPError as e:
    print(e.code, e.headers["x-ms-error-code"], e.read().decode()[:160])
EOF
)
echo "   $answer"
[[ $answer == "501 NotImplemented "* ]] || fail "the Blob port answered: $answer"

step "healthcheck"
$ENGINE exec "$cid" aztable healthcheck | sed 's/^/   /' || fail "healthcheck in the container"
if ! $ENGINE exec "$cid" aztable healthcheck --port 9 >/dev/null; then echo "   (a dead port: exit 1, as it should)"; else fail "healthcheck of a dead port"; fi
if [ "$ENGINE" = podman ]; then
  $ENGINE healthcheck run "$cid" && echo "   podman healthcheck run: healthy" || fail "podman healthcheck run"
else
  wait_until 40 sh -c "[ \"\$($ENGINE inspect --format '{{.State.Health.Status}}' $cid)\" = healthy ]" || fail "docker health status"
  echo "   docker health status: healthy"
fi
quiet $ENGINE rm -f -v "$cid" >/dev/null

step "user flags keep the container defaults: --inMemoryPersistence alone"
run flags "$IMAGE" --inMemoryPersistence
wait_until 60 all_lines_logged || fail "flags: no log lines"
smoke full
$ENGINE logs "$cid" 2>&1 | grep -q 'Permission denied' && fail "flags: permission denied"
quiet $ENGINE rm -f -v "$cid" >/dev/null

step "restart keeps /data (named volume)"
$ENGINE volume create "$volume" >/dev/null
run restart -v "$volume:/data" "$IMAGE"
wait_until 60 all_ports_listen || fail "restart: ports"
smoke write
r=$SECONDS
quiet $ENGINE restart "$cid" >/dev/null
wait_until 60 all_ports_listen || fail "restart: ports after the restart"
echo "   restarted in $((SECONDS - r)) s"
smoke read
$ENGINE logs "$cid" 2>&1 | grep -c 'Azurite Table service is successfully listening' | sed 's/^/   table lines in the log (two starts): /'
quiet $ENGINE rm -f -v "$cid" >/dev/null

step "HTTPS with a root-owned key of mode 0600 (Testcontainers Java's withSsl)"
tls=$(mktemp -d)
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
  -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -keyout "$tls/key.pem" -out "$tls/cert.pem" 2>/dev/null
chmod 600 "$tls/key.pem" "$tls/cert.pem"
cid=$(quiet $ENGINE create -p 127.0.0.1::10000 -p 127.0.0.1::10001 -p 127.0.0.1::10002 "$IMAGE" \
  azurite --blobHost 0.0.0.0 --queueHost 0.0.0.0 --tableHost 0.0.0.0 --cert /cert.pem --key /key.pem)
started+=("$cid")
$ENGINE cp "$tls/cert.pem" "$cid:/cert.pem"
$ENGINE cp "$tls/key.pem" "$cid:/key.pem"
quiet $ENGINE start "$cid" >/dev/null
wait_until 60 all_ports_listen || fail "tls: ports"
echo "   in the container: $($ENGINE exec "$cid" ls -ln /key.pem | awk '{print $1, "uid", $3, "gid", $4, $NF}')"
[[ $($ENGINE exec "$cid" ls -ln /key.pem) =~ ^-rw-------\ +1\ 0\ +0\  ]] || fail "tls: the key is not root's with mode 0600"
REQUESTS_CA_BUNDLE="$tls/cert.pem" SCHEME=https smoke full
ids=$($ENGINE exec "$cid" grep -E '^(Uid|Gid|Groups):' /proc/1/status | tr -s '\t ' ' ' | sed 's/ *$//' | paste -sd';')
echo "   the server process: $ids"
[[ $ids == "Uid: 10001 10001 10001 10001;Gid: 10001 10001 10001 10001;Groups: 10001" ]] || fail "tls: ids $ids"
$ENGINE logs "$cid" 2>&1 | grep 'running as uid' | sed 's/^.*INFO /   log: /'
quiet $ENGINE rm -f -v "$cid" >/dev/null
rm -rf "$tls"

step "--user 10001 (runAsNonRoot): runs as that user from the start"
run user --user 10001 "$IMAGE" --inMemoryPersistence
wait_until 60 all_lines_logged || fail "user: no log lines"
smoke full
# (the log read whole first: grep -q stops reading early, which pipefail counts as a failure)
log=$($ENGINE logs "$cid" 2>&1)
grep -q 'running as uid 10001 (not started as root' <<<"$log" || fail "user: the log does not say so"
quiet $ENGINE rm -f -v "$cid" >/dev/null

step "azurite-blob and azurite-queue: refused, saying how to ask for the Table service"
for command in azurite-blob azurite-queue; do
  set +e
  out=$(quiet $ENGINE run --rm --entrypoint "$command" "$IMAGE" --blobHost 0.0.0.0 --queueHost 0.0.0.0 2>&1)
  code=$?
  set -e
  echo "   $command: exit $code: ${out:0:150}..."
  [ "$code" = 1 ] || fail "$command: exit $code"
  [[ $out == *"serves the Table service only"*"WithEnabledServices(azurite.TableService)"* ]] || fail "$command: $out"
done

step "time to ready: from \`$ENGINE run\` to the first answer"
python3 - "$ENGINE" "$IMAGE" <<'EOF'
import statistics, subprocess, sys, time, urllib.request, urllib.error
engine, image = sys.argv[1], sys.argv[2]
times = []
for _ in range(5):
    t = time.monotonic()
    cid = subprocess.run([engine, "run", "-d", "-p", "127.0.0.1::10002", image],
                         capture_output=True, text=True, check=True).stdout.strip()
    try:
        port = subprocess.run([engine, "port", cid, "10002/tcp"], capture_output=True, text=True,
                              check=True).stdout.split(":")[-1].strip()
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/devstoreaccount1/Tables", timeout=1)
            except urllib.error.HTTPError:
                break  # 403 without a signature: an answer
            except OSError:
                if time.monotonic() - t > 60:
                    sys.exit("no answer within 60 s")
                time.sleep(0.01)
        times.append(time.monotonic() - t)
    finally:
        subprocess.run([engine, "rm", "-f", "-v", cid], capture_output=True)
print("   run to first answer: " + ", ".join(f"{x:.2f}" for x in times)
      + f" s; median {statistics.median(times):.2f} s")
EOF

if [ "${MODULES:-}" = 1 ]; then
  step "Testcontainers modules (Python, Node, Java, Go)"
  cache="$HOME/.cache/aztable"
  mkdir -p "$cache"
  [ -x "$cache/container-venv/bin/python" ] || python3 -m venv "$cache/container-venv"
  "$cache/container-venv/bin/pip" install -q testcontainers==4.15.0 azure-data-tables==12.7.0
  npm install --silent --prefix "$cache/container-node" @testcontainers/azurite@11.7.1 testcontainers@11.7.1 \
    @azure/data-tables@13.3.2 >/dev/null
  cp tests/container/modules.mjs "$cache/container-node/"
  if [ "$ENGINE" = podman ]; then
    # podman's Docker-compatible API, for the modules' Docker clients
    sock="$cache/podman-$$.sock"
    podman system service --time=0 "unix://$sock" >/dev/null 2>&1 &
    service_pid=$!
    wait_until 20 test -S "$sock" || fail "podman system service"
    export DOCKER_HOST="unix://$sock"
  fi
  # Ryuk, the modules' reaper, is an image of its own from a registry; the containers
  # are stopped by the modules here. docker_host: the port mapped on the engine's host
  # (the Python module's default asks the inspect answer for what podman 4 leaves out).
  export TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1 \
    TESTCONTAINERS_CONNECTION_MODE=docker_host
  image="$IMAGE"
  [ "$ENGINE" = podman ] && [[ $image != */* ]] && image="localhost/$image"
  "$cache/container-venv/bin/python" tests/container/modules.py "$image" || fail "the Python module"
  node "$cache/container-node/modules.mjs" "$image" || fail "the Node module"
  # Java: the AzuriteContainer of testcontainers-azure 2.0.5, HTTP and withSsl
  (cd tests/container/java && mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$cache/m2" compile exec:java -Dexec.args="$image") \
    || fail "the Java module"
  # Go: modules/azure/azurite v0.44.0 with aztables v1.4.1
  (cd tests/container/go && go run . "$image") || fail "the Go module"
fi

step "all passed"
