"""Data survives a SIGKILL of the server (RocksDB --location). Needs AZTABLE_BINARY."""

import os
import signal
import uuid
from datetime import datetime, timezone

import pytest
from azure.core.exceptions import ResourceNotFoundError
from azure.data.tables import EdmType, EntityProperty, TableServiceClient, UpdateMode

from sdk_util import assert_refused, connection_string_for, free_port, start_server, temp_dir, unique_table_name

BINARY = os.environ.get("AZTABLE_BINARY")

pytestmark = pytest.mark.skipif(
    not BINARY, reason="AZTABLE_BINARY not set: persistence test needs to start its own server"
)


def _kill(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def test_data_survives_sigkill_and_restart():
    assert os.access(BINARY, os.X_OK), f"AZTABLE_BINARY={BINARY} is not executable"
    with temp_dir("aztable-persist-") as root:
        location = os.path.join(root, "data")
        os.makedirs(location)
        log = os.path.join(root, "server.log")
        port = free_port()
        endpoint = f"http://127.0.0.1:{port}/devstoreaccount1"
        cs = connection_string_for(endpoint)

        name = unique_table_name("persist")
        gone_name = unique_table_name("gone")
        guid = uuid.uuid4()
        when = datetime(2020, 5, 17, 8, 9, 10, 654321, tzinfo=timezone.utc)

        proc = start_server(BINARY, port, location, log)
        try:
            svc = TableServiceClient.from_connection_string(cs)
            tc = svc.create_table(name)
            svc.create_table(gone_name)
            svc.delete_table(gone_name)
            for i in range(50):
                tc.create_entity({"PartitionKey": f"p{i % 2}", "RowKey": f"r{i:03d}", "n": i})
            tc.create_entity(
                {
                    "PartitionKey": "typed",
                    "RowKey": "it's",
                    "s": "héllo 😀",
                    "i64": EntityProperty(2**40, EdmType.INT64),
                    "d": 1.25,
                    "dt": when,
                    "g": guid,
                    "b": b"\x00\xff",
                    "t": True,
                }
            )
            tc.update_entity({"PartitionKey": "p0", "RowKey": "r000", "n": -1}, mode=UpdateMode.MERGE)
            tc.delete_entity("p1", "r001")
            etag_before = tc.get_entity("typed", "it's").metadata["etag"]
            svc.close()
        finally:
            _kill(proc)

        port2 = free_port()
        cs2 = connection_string_for(f"http://127.0.0.1:{port2}/devstoreaccount1")
        proc = start_server(BINARY, port2, location, log)
        try:
            svc = TableServiceClient.from_connection_string(cs2)
            tables = [t.name for t in svc.list_tables()]
            assert name in tables
            assert gone_name not in tables
            tc = svc.get_table_client(name)
            rows = list(tc.list_entities())
            assert len(rows) == 50  # 50 inserted + 1 typed - 1 deleted
            assert tc.get_entity("p0", "r000")["n"] == -1
            with pytest.raises(ResourceNotFoundError) as exc:
                tc.get_entity("p1", "r001")
            assert_refused(exc.value, 404, "ResourceNotFound")
            typed = tc.get_entity("typed", "it's")
            assert typed["s"] == "héllo 😀"
            assert typed["i64"].value == 2**40 and typed["i64"].edm_type == EdmType.INT64
            assert typed["d"] == 1.25
            assert typed["dt"] == when
            assert typed["g"] == guid
            assert typed["b"] == b"\x00\xff"
            assert typed["t"] is True
            assert typed.metadata["etag"] == etag_before
            # Still writable after restart, and the etag moves on.
            tc.update_entity({"PartitionKey": "typed", "RowKey": "it's", "s": "x"}, mode=UpdateMode.MERGE)
            assert tc.get_entity("typed", "it's").metadata["etag"] != etag_before
            svc.close()
        finally:
            _kill(proc)
