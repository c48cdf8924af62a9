"""Fixtures for the legacy AtomPub client suite.

The server under test is given by AZTABLE_CONNECTION_STRING (scripts/sdk-tests.sh starts
a server and exports it); AZTABLE_ENDPOINT, when set, is the table endpoint.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import legacy_util  # noqa: E402

legacy_util.use_legacy_deps()


@pytest.fixture(scope="session")
def conn_parts():
    cs = os.environ.get("AZTABLE_CONNECTION_STRING")
    if not cs:
        pytest.fail(
            "AZTABLE_CONNECTION_STRING is not set; run via scripts/sdk-tests.sh "
            "or export it to point at a running server",
            pytrace=False,
        )
    parts = legacy_util.parse_connection_string(cs)
    parts["_raw"] = cs
    return parts


@pytest.fixture(scope="session")
def endpoint(conn_parts) -> str:
    ep = os.environ.get("AZTABLE_ENDPOINT") or conn_parts.get("TableEndpoint")
    assert ep, "no table endpoint: set AZTABLE_ENDPOINT or TableEndpoint= in the connection string"
    return ep.rstrip("/")


@pytest.fixture(scope="session")
def svc(conn_parts, endpoint):
    """The legacy (AtomPub, x-ms-version 2014-02-14) TableService."""
    return legacy_util.legacy_service(endpoint, conn_parts["AccountName"], conn_parts["AccountKey"])


@pytest.fixture(scope="session")
def modern(conn_parts):
    """The modern JSON SDK (azure-data-tables) against the same server."""
    from azure.data.tables import TableServiceClient

    client = TableServiceClient.from_connection_string(conn_parts["_raw"])
    yield client
    client.close()


@pytest.fixture
def table_name() -> str:
    return legacy_util.unique_table_name()


@pytest.fixture
def table(svc, table_name):
    """A table created through the legacy client; deleted afterwards."""
    assert svc.create_table(table_name, fail_on_exist=True) is True
    try:
        yield table_name
    finally:
        svc.delete_table(table_name, fail_not_exist=False)
