"""Fixtures for the aztable Python SDK conformance suite.

The server under test is given by AZTABLE_CONNECTION_STRING (scripts/sdk-tests.sh
starts a server and exports it). AZTABLE_ENDPOINT is derived from it if unset.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from azure.data.tables import TableServiceClient  # noqa: E402

from sdk_util import parse_connection_string, unique_table_name  # noqa: E402

# a user's own suite, run by test_gate_example.py against a server of its own
collect_ignore = ["gate_example"]


@pytest.fixture(scope="session")
def connection_string() -> str:
    cs = os.environ.get("AZTABLE_CONNECTION_STRING")
    if not cs:
        pytest.fail(
            "AZTABLE_CONNECTION_STRING is not set; run via scripts/sdk-tests.sh "
            "or export it to point at a running server",
            pytrace=False,
        )
    return cs


@pytest.fixture(scope="session")
def conn_parts(connection_string):
    return parse_connection_string(connection_string)


@pytest.fixture(scope="session")
def account_name(conn_parts) -> str:
    return conn_parts["AccountName"]


@pytest.fixture(scope="session")
def account_key(conn_parts) -> str:
    return conn_parts["AccountKey"]


@pytest.fixture(scope="session")
def endpoint(conn_parts) -> str:
    ep = os.environ.get("AZTABLE_ENDPOINT") or conn_parts.get("TableEndpoint")
    assert ep, "no table endpoint: set AZTABLE_ENDPOINT or TableEndpoint= in the connection string"
    return ep.rstrip("/")


@pytest.fixture(scope="session")
def service(connection_string) -> TableServiceClient:
    client = TableServiceClient.from_connection_string(connection_string)
    yield client
    client.close()


@pytest.fixture
def table_name() -> str:
    return unique_table_name()


@pytest.fixture
def table(service, table_name):
    """A freshly created, uniquely named table; deleted after the test."""
    client = service.create_table(table_name)
    try:
        yield client
    finally:
        service.delete_table(table_name)
        client.close()
