"""Fixtures for the JSON-era legacy Python client, azure-cosmosdb-table 1.0.6.

The server under test is given by AZTABLE_CONNECTION_STRING (scripts/sdk-tests.sh starts
a server and exports it). The client is loaded from ./.deps (see requirements.txt), and
checked to be the pinned version from there.
"""

import os
import sys
import uuid
from pathlib import Path

import pytest

DEPS = Path(__file__).resolve().parent / ".deps"
sys.path.insert(0, str(DEPS))

import azure.cosmosdb.table  # noqa: E402
from azure.cosmosdb.table.tableservice import TableService  # noqa: E402

assert Path(azure.cosmosdb.table.__file__).resolve().is_relative_to(DEPS), azure.cosmosdb.table.__file__


@pytest.fixture(scope="session")
def svc() -> TableService:
    cs = os.environ.get("AZTABLE_CONNECTION_STRING")
    if not cs:
        pytest.fail("AZTABLE_CONNECTION_STRING is not set; run via scripts/sdk-tests.sh", pytrace=False)
    return TableService(connection_string=cs)


@pytest.fixture
def table(svc):
    name = "legacyjson" + uuid.uuid4().hex[:12]
    assert svc.create_table(name, fail_on_exist=True) is True
    try:
        yield name
    finally:
        svc.delete_table(name, fail_not_exist=False)
