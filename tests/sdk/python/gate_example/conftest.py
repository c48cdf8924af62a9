"""The gate recipe for pytest (docs/ci-gate.md): after each test, ask the server for the
partition advisor's findings; a full table scan (or another --insightFailOn kind) fails
the test that caused it, and is then cleared so the next test starts clean. Also a clean
slate of data before each test."""

import json
import os
import urllib.error
import urllib.request

import pytest
from azure.data.tables import TableServiceClient

ENDPOINT = os.environ["AZTABLE_ENDPOINT"].rstrip("/")
SERVER = ENDPOINT.rsplit("/", 1)[0]  # http://127.0.0.1:10002


def admin(method: str, path: str):
    """An admin request (open on a loopback server); (status, body)."""
    req = urllib.request.Request(SERVER + path, method=method)
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@pytest.fixture(autouse=True)
def insight_gate():
    admin("DELETE", "/_aztable/data")  # a clean slate
    yield
    status, body = admin("GET", "/_aztable/insight/findings")
    if status == 409:
        admin("DELETE", "/_aztable/insight/findings")  # the next test starts clean
        found = json.loads(body)["findings"]
        pytest.fail("partition advisor: " + "; ".join(f"{f['kind']} {f['table']} {f['subject']!r}" for f in found))
    assert status == 200, body


@pytest.fixture
def orders_table():
    service = TableServiceClient.from_connection_string(os.environ["AZTABLE_CONNECTION_STRING"])
    table = service.create_table("orders")
    yield table
    service.close()
