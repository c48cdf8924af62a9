"""What real clients send that a strict reading of the REST reference would refuse: an
empty filter, an entity body over 4 MiB. (A lower-case `w/` ETag prefix is tested with the
JS SDK and raw HTTP: this SDK quotes any ETag that does not start with `W/`.)"""

import pytest
import os

from azure.core.credentials import AzureNamedKeyCredential
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableServiceClient

from sdk_util import error_code, free_port, start_server, temp_dir


def test_an_empty_filter_lists_every_entity_and_table(service, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "a", "v": 1})
    table.create_entity({"PartitionKey": "p", "RowKey": "b", "v": 2})
    assert sorted(e["RowKey"] for e in table.query_entities("")) == ["a", "b"]
    assert table.table_name in [t.name for t in service.query_tables("")]


def test_an_entity_body_over_4_mib_is_413_and_one_under_it_over_1_mib_is_400(table):
    # 140 strings of 30,000 characters: just over 4 MiB of JSON (4.0-4.06 MiB)
    huge = {"PartitionKey": "p", "RowKey": "huge", **{f"s{i}": "y" * 30_000 for i in range(140)}}
    with pytest.raises(HttpResponseError) as info:
        table.create_entity(huge)
    assert info.value.status_code == 413
    assert error_code(info.value) == "RequestBodyTooLarge"
    # 60 of them: about 1.8 MB of JSON, 3.6 MB as the service counts (UTF-16)
    large = {"PartitionKey": "p", "RowKey": "large", **{f"s{i}": "y" * 30_000 for i in range(60)}}
    with pytest.raises(HttpResponseError) as info:
        table.create_entity(large)
    assert info.value.status_code == 400
    assert error_code(info.value) == "EntityTooLarge"
    assert list(table.list_entities()) == []


FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tls")


@pytest.mark.skipif(not os.environ.get("AZTABLE_BINARY"), reason="needs AZTABLE_BINARY to start an HTTPS server")
def test_https_with_a_pfx_certificate(account_name, account_key):
    with temp_dir("aztable-pfx-") as root:
        port = free_port()
        pfx = ["--cert", os.path.join(FIXTURES, "cert.pfx"), "--pwd", "aztable"]
        proc = start_server(os.environ["AZTABLE_BINARY"], port, root, os.path.join(root, "server.log"), pfx)
        try:
            client = TableServiceClient(
                f"https://127.0.0.1:{port}/{account_name}",
                credential=AzureNamedKeyCredential(account_name, account_key),
                connection_verify=os.path.join(FIXTURES, "cert.pem"),
            )
            table = client.create_table("pfxtls")
            table.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
            assert table.get_entity("p", "r")["v"] == 1
            client.close()
        finally:
            proc.kill()
            proc.wait(timeout=30)
