"""The SDK's default retry policy against a throttled server (--partitionRate) and one
that injects faults (--faultRate): every write gets through, and the server's access
log shows the 503s it was retried past. Needs AZTABLE_BINARY (starts its own servers)."""

import os
import re
import signal
import time
from contextlib import contextmanager

import pytest
from azure.data.tables import TableServiceClient

from sdk_util import connection_string_for, free_port, start_server, temp_dir, unique_table_name

BINARY = os.environ.get("AZTABLE_BINARY")

pytestmark = pytest.mark.skipif(not BINARY, reason="AZTABLE_BINARY not set: the retry tests start their own servers")


@contextmanager
def server(*extra_args):
    """A dedicated in-memory server with `extra_args`; yields (service client, log path)."""
    with temp_dir("aztable-retry-") as root:
        log = os.path.join(root, "server.log")
        port = free_port()
        proc = start_server(BINARY, port, root, log, ["--inMemoryPersistence", *extra_args], silent=False)
        svc = TableServiceClient.from_connection_string(
            connection_string_for(f"http://127.0.0.1:{port}/devstoreaccount1")
        )
        try:
            yield svc, log
        finally:
            svc.close()
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)


def busy_answers(log_path: str) -> int:
    """503s the server answered, from its access log."""
    with open(log_path, encoding="utf-8", errors="replace") as f:
        text = re.sub(r"\x1b\[[0-9;]*m", "", f.read())  # the log may be coloured
    return len(re.findall(r"\bstatus=503\b", text))


def test_default_retries_get_every_write_past_the_partition_rate():
    with server("--partitionRate", "50") as (svc, log):
        name = unique_table_name("throttle")
        table = svc.create_table(name)
        started = time.monotonic()
        for i in range(200):
            table.create_entity({"PartitionKey": "p", "RowKey": f"{i:04d}", "n": i})
        elapsed = time.monotonic() - started
        rows = list(table.list_entities())
        assert sorted(r["RowKey"] for r in rows) == [f"{i:04d}" for i in range(200)]
        refused = busy_answers(log)
        # 200 writes at 50/s past a 100-entity bucket: the SDK must have been refused and
        # retried, and the retries pace it near the rate
        assert refused > 0, "no 503 was answered: the test proved nothing"
        assert elapsed >= 1.5, f"200 writes in {elapsed:.2f}s cannot respect 50/s"


def test_default_retries_get_every_write_past_injected_faults():
    with server("--faultRate", "0.3", "--faultSeed", "7") as (svc, log):
        name = unique_table_name("faults")
        table = svc.create_table(name)
        for i in range(8):
            table.upsert_entity({"PartitionKey": "p", "RowKey": f"{i:04d}", "n": i})
        for i in range(8, 12):
            table.create_entity({"PartitionKey": "p", "RowKey": f"{i:04d}", "n": i})
        rows = list(table.list_entities())
        assert sorted(r["n"] for r in rows) == list(range(12))
        assert table.get_entity("p", "0007")["n"] == 7
        assert busy_answers(log) >= 3, "about 30% of some 15 requests should have failed"
