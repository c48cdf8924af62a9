"""Authentication (spec 1.7): SharedKey with right and wrong keys, named-key credential,
UseDevelopmentStorage=true."""

import base64

import pytest
import requests
from azure.core.credentials import AzureNamedKeyCredential
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError
from azure.data.tables import TableClient, TableServiceClient

from sdk_util import assert_refused, connection_string_for, env_flag, error_code, unique_table_name

WRONG_KEY = base64.b64encode(b"this is definitely not the account key!!" * 2).decode()


@pytest.fixture
def wrong_key_service(endpoint, account_name):
    client = TableServiceClient.from_connection_string(connection_string_for(endpoint, account_name, WRONG_KEY))
    yield client
    client.close()


def _assert_auth_failed(exc_info):
    exc = exc_info.value
    assert isinstance(exc, HttpResponseError)
    assert exc.status_code == 403, exc
    assert error_code(exc) == "AuthenticationFailed", exc


def test_wrong_key_list_tables(wrong_key_service):
    with pytest.raises(HttpResponseError) as exc:
        list(wrong_key_service.list_tables())
    _assert_auth_failed(exc)
    assert isinstance(exc.value, ClientAuthenticationError)


def test_wrong_key_create_table_does_not_create(wrong_key_service, service):
    name = unique_table_name()
    with pytest.raises(HttpResponseError) as exc:
        wrong_key_service.create_table(name)
    _assert_auth_failed(exc)
    assert list(service.query_tables(f"TableName eq '{name}'")) == []


def test_wrong_key_entity_operations(wrong_key_service, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
    bad = wrong_key_service.get_table_client(table.table_name)
    with pytest.raises(HttpResponseError) as exc:
        bad.get_entity("p", "r")
    _assert_auth_failed(exc)
    with pytest.raises(HttpResponseError) as exc:
        list(bad.list_entities())
    _assert_auth_failed(exc)
    with pytest.raises(HttpResponseError) as exc:
        bad.upsert_entity({"PartitionKey": "p", "RowKey": "r", "v": 2})
    _assert_auth_failed(exc)
    with pytest.raises(HttpResponseError) as exc:
        bad.delete_entity("p", "r")
    _assert_auth_failed(exc)
    assert table.get_entity("p", "r")["v"] == 1


def test_wrong_account_name_rejected(endpoint, account_key):
    # Same key, different account name in the signature.
    client = TableServiceClient(endpoint, credential=AzureNamedKeyCredential("someotheraccount", account_key))
    with pytest.raises(HttpResponseError) as exc:
        list(client.list_tables())
    assert_refused(exc.value, 403, "AuthenticationFailed")


def test_anonymous_request_rejected(endpoint, table):
    # The SDK always signs; an unsigned request is made with plain HTTP.
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "secret": "s3cr3t"})
    headers = {"Accept": "application/json;odata=nometadata", "x-ms-version": "2019-02-02"}
    for url in (f"{endpoint}/Tables", f"{endpoint}/{table.table_name}()",
                f"{endpoint}/{table.table_name}(PartitionKey='p',RowKey='r')"):
        resp = requests.get(url, headers=headers, timeout=30)
        assert_refused(resp, 401, "NoAuthenticationInformation")
        assert "s3cr3t" not in resp.text


def test_named_key_credential_service_client(endpoint, account_name, account_key):
    cred = AzureNamedKeyCredential(account_name, account_key)
    client = TableServiceClient(endpoint=endpoint, credential=cred)
    name = unique_table_name()
    tc = client.create_table(name)
    try:
        assert name in [t.name for t in client.query_tables(f"TableName eq '{name}'")]
        tc.create_entity({"PartitionKey": "p", "RowKey": "r", "v": "named"})
        assert tc.get_entity("p", "r")["v"] == "named"
        assert [e["RowKey"] for e in tc.query_entities("v eq 'named'")] == ["r"]
    finally:
        client.delete_table(name)
        client.close()


def test_named_key_credential_table_client(endpoint, account_name, account_key, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 7})
    tc = TableClient(endpoint=endpoint, table_name=table.table_name,
                     credential=AzureNamedKeyCredential(account_name, account_key))
    assert tc.get_entity("p", "r")["v"] == 7
    tc.update_entity({"PartitionKey": "p", "RowKey": "r", "v": 8})
    assert table.get_entity("p", "r")["v"] == 8
    tc.close()


@pytest.mark.skipif(
    not env_flag("AZTABLE_DEFAULT_PORT_TEST"),
    reason="set AZTABLE_DEFAULT_PORT_TEST=1 with a server on 127.0.0.1:10002 to test UseDevelopmentStorage=true",
)
def test_use_development_storage_connection_string():
    client = TableServiceClient.from_connection_string("UseDevelopmentStorage=true")
    name = unique_table_name("dev")
    tc = client.create_table(name)
    try:
        tc.create_entity({"PartitionKey": "p", "RowKey": "r", "v": "dev"})
        assert tc.get_entity("p", "r")["v"] == "dev"
        assert name in [t.name for t in client.list_tables()]
    finally:
        client.delete_table(name)
        client.close()
