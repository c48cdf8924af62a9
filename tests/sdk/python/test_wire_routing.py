"""How the server reads a request's URL, seen through the SDK: a table's URL given as the
account URL gets the service's answers (and with them the SDK's "check your account URL"
hint); an invalid table name gets the service's name errors (which the SDK turns into a
ValueError); the -secondary endpoint refuses writes with InsufficientAccountPermissions;
a point read outside a table SAS's key range is ResourceNotFound."""

from datetime import datetime, timedelta, timezone

import pytest
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.data.tables import (
    TableClient,
    TableSasPermissions,
    TableServiceClient,
    generate_table_sas,
)

from sdk_util import error_code, unique_table_name

HINT = "Please check your account URL."


@pytest.fixture
def cred(account_name, account_key):
    return AzureNamedKeyCredential(account_name, account_key)


def test_a_table_url_as_the_account_url_gets_the_account_url_hint(service, endpoint, cred):
    name = unique_table_name("pyurl")
    wrong = TableServiceClient(f"{endpoint}/{name}", credential=cred)
    # the table the path names does not exist
    with pytest.raises(ResourceNotFoundError) as info:
        wrong.create_table(name)
    assert error_code(info.value) == "TableNotFound"
    assert HINT in str(info.value)
    service.create_table(name)
    try:
        # it exists: the body is read as an entity of it, without keys
        with pytest.raises(HttpResponseError) as info:
            wrong.create_table(name)
        assert info.value.status_code == 400
        assert error_code(info.value) == "PropertiesNeedValue"
        assert HINT in str(info.value)
        with pytest.raises(HttpResponseError) as info:
            wrong.delete_table(name)
        assert info.value.status_code == 400
        assert error_code(info.value) == "InvalidInput"
        assert HINT in str(info.value)
        for call in (wrong.get_service_properties, lambda: wrong.set_service_properties(cors=[])):
            with pytest.raises(HttpResponseError) as info:
                call()
            assert info.value.status_code == 400
            assert error_code(info.value) == "InvalidQueryParameterValue"
            assert HINT in str(info.value)
        with pytest.raises(HttpResponseError) as info:
            list(wrong.list_tables())
        assert info.value.status_code == 501
        assert error_code(info.value) == "NotImplemented"
        table = TableClient(f"{endpoint}/{name}", name, credential=cred)
        with pytest.raises(HttpResponseError) as info:
            table.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "r"})])
        assert info.value.status_code == 415
        # nothing was written, nothing deleted
        assert list(service.get_table_client(name).list_entities()) == []
        assert name in [t.name for t in service.list_tables()]
    finally:
        service.delete_table(name)
        wrong.close()


@pytest.mark.parametrize("name", ["1table", "aa", "a" * 64, "my_table"])
def test_an_invalid_table_name_is_refused_before_the_lookup(endpoint, cred, name):
    # the SDK raises ValueError only once the service answered with its name errors
    table = TableClient(endpoint, name, credential=cred)
    entity = {"PartitionKey": "p", "RowKey": "r"}
    calls = [
        lambda: table.create_entity(entity),
        lambda: table.upsert_entity(entity),
        lambda: table.delete_entity("p", "r"),
        table.get_table_access_policy,
        lambda: table.submit_transaction([("create", entity)]),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="Storage table names must be alphanumeric"):
            call()
    table.close()


def test_writes_to_the_secondary_endpoint_are_insufficient_account_permissions(service, table, endpoint, cred):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
    secondary = TableServiceClient(f"{endpoint}-secondary", credential=cred)
    sec_table = secondary.get_table_client(table.table_name)
    entity = {"PartitionKey": "p", "RowKey": "r", "v": 2}
    writes = [
        lambda: secondary.create_table(unique_table_name("pysec")),
        lambda: secondary.delete_table(table.table_name),
        lambda: secondary.set_service_properties(cors=[]),
        lambda: sec_table.create_entity({"PartitionKey": "p", "RowKey": "new"}),
        lambda: sec_table.upsert_entity(entity),
        lambda: sec_table.update_entity(entity),
        lambda: sec_table.delete_entity("p", "r"),
        lambda: sec_table.set_table_access_policy({}),
        lambda: sec_table.submit_transaction([("upsert", entity)]),
    ]
    for write in writes:
        with pytest.raises(HttpResponseError) as info:
            write()
        assert info.value.status_code == 403
        assert error_code(info.value) == "InsufficientAccountPermissions"
        assert "Write operations are not allowed." in str(info.value)
    assert table.get_entity("p", "r")["v"] == 1
    # reads are served there
    with pytest.raises(ResourceNotFoundError) as info:
        sec_table.get_entity("p", "missing")
    assert error_code(info.value) == "ResourceNotFound"
    assert [e["v"] for e in sec_table.list_entities()] == [1]
    secondary.close()


def test_a_point_read_outside_a_sas_key_range_is_resource_not_found(table, endpoint, cred):
    for rk in ("01", "02"):
        table.create_entity({"PartitionKey": "somPartition", "RowKey": rk})
    now = datetime.now(timezone.utc)
    token = generate_table_sas(
        cred,
        table.table_name,
        permission=TableSasPermissions(read=True, add=True),
        start=now - timedelta(minutes=5),
        expiry=now + timedelta(hours=1),
        start_pk="somPartition",
        start_rk="01",
        end_pk="somPartition",
        end_rk="01",
    )
    ranged = TableClient(endpoint, table.table_name, credential=AzureSasCredential(token))
    assert ranged.get_entity("somPartition", "01")["RowKey"] == "01"
    with pytest.raises(ResourceNotFoundError) as info:
        ranged.get_entity("somPartition", "02")
    assert error_code(info.value) == "ResourceNotFound"
    assert table.get_entity("somPartition", "02")["RowKey"] == "02"
    assert [e["RowKey"] for e in ranged.list_entities()] == ["01"]
    # a write outside the range stays 403
    with pytest.raises(HttpResponseError) as info:
        ranged.create_entity({"PartitionKey": "somPartition", "RowKey": "03"})
    assert info.value.status_code == 403
    assert error_code(info.value) == "AuthorizationFailure"
    ranged.close()
