"""The partition advisor as a CI gate, seen from a user's pytest suite (gate_example/):
against a server started with --insightFailOn fullScan, the suite fails when the code
under test scans the whole table and passes when its query names the partition; the
server's exit status says the same. Needs AZTABLE_BINARY (starts its own server)."""

import os
import signal
import subprocess
import sys

import pytest

from sdk_util import connection_string_for, free_port, start_server, temp_dir

BINARY = os.environ.get("AZTABLE_BINARY")
EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gate_example")

pytestmark = pytest.mark.skipif(not BINARY, reason="AZTABLE_BINARY not set: the gate example starts its own server")


def run_suite(endpoint: str, query: str) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        AZTABLE_ENDPOINT=endpoint,
        AZTABLE_CONNECTION_STRING=connection_string_for(endpoint),
        ORDERS_QUERY=query,
    )
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "."],
        cwd=EXAMPLE,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_gate_fails_a_full_scan_and_passes_a_partition_query():
    with temp_dir("aztable-gate-") as root:
        port = free_port()
        log = os.path.join(root, "server.log")
        proc = start_server(BINARY, port, root, log, ["--inMemoryPersistence", "--insightFailOn", "fullScan"])
        endpoint = f"http://127.0.0.1:{port}/devstoreaccount1"
        try:
            scan = run_suite(endpoint, "scan")
            assert scan.returncode == 1, scan.stdout + scan.stderr
            assert "partition advisor: fullScan orders \"Customer eq 'alice'\"" in scan.stdout, scan.stdout
            partition = run_suite(endpoint, "partition")
            assert partition.returncode == 0, partition.stdout + partition.stderr
            assert "1 passed" in partition.stdout
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=30)
        # the exit status counts the scan of the first run, acknowledged or not
        assert code == 3, open(log, encoding="utf-8", errors="replace").read()[-2000:]
        with open(log, encoding="utf-8", errors="replace") as f:
            assert "fullScan: table devstoreaccount1/orders" in f.read()
