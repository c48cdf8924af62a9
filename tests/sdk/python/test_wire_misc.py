"""Answers the real service gives that this SDK's own tests recorded: an access policy
with nothing set reads back as None, filtered paging ends without a last empty request
(tables and entities), a Create Table conflict says which preference applied, and a
request with an x-ms-version newer than the server knows is served."""

import uuid

import pytest
from azure.core.exceptions import ResourceExistsError
from azure.data.tables import TableAccessPolicy, TableClient, TableServiceClient

from sdk_util import error_code


class _Requests:
    """A raw_response_hook that keeps every response the client received."""

    def __init__(self):
        self.responses = []

    def __call__(self, pipeline_response):
        self.responses.append(pipeline_response.http_response)


def test_an_identifier_without_a_policy_reads_back_as_none(table):
    # test_set_table_acl_with_empty_signed_identifier, as recorded against the service
    table.set_table_access_policy({"empty": None, "partial": TableAccessPolicy(permission="r")})
    got = table.get_table_access_policy()
    assert set(got) == {"empty", "partial"}
    assert got["empty"] is None
    partial = got["partial"]
    assert (partial.permission, partial.start, partial.expiry) == ("r", None, None)


def test_a_filtered_table_listing_makes_no_last_empty_request(connection_string):
    # the Go SDK's TestQueryTable_storage, over tables of a prefix of this test's own
    prefix = "pg" + uuid.uuid4().hex[:10]
    hook = _Requests()
    service = TableServiceClient.from_connection_string(connection_string, raw_response_hook=hook)
    names = [f"{prefix}a{i}" for i in range(4)] + [f"{prefix}b4"]
    try:
        for name in names:
            service.create_table(name)
        hook.responses.clear()
        query = f"TableName ge '{prefix}a' and TableName lt '{prefix}b'"
        pages = [[t.name for t in page] for page in service.query_tables(query, results_per_page=2).by_page()]
        assert pages == [names[0:2], names[2:4]]
        assert len(hook.responses) == 2, "the second page is the last: no request for an empty third"
        assert "x-ms-continuation-NextTableName" not in hook.responses[-1].headers
    finally:
        for name in names:
            service.delete_table(name)
        service.close()


def test_an_entity_query_makes_no_last_empty_request(connection_string, table_name, service):
    # test_query_entities_each_page, as recorded against the service
    service.create_table(table_name)
    hook = _Requests()
    client = TableClient.from_connection_string(connection_string, table_name, raw_response_hook=hook)
    try:
        for rk in ["10", "101", "1012", "10123", "101234", "1012345"]:
            client.create_entity({"PartitionKey": "pk", "RowKey": rk})
        for pk in ["pk6", "pk67", "pk678", "pk6789"]:
            client.create_entity({"PartitionKey": pk, "RowKey": "r"})
        hook.responses.clear()
        pager = client.query_entities("PartitionKey eq 'pk'", results_per_page=2).by_page()
        pages = [[e["RowKey"] for e in page] for page in pager]
        assert pages == [["10", "101"], ["1012", "10123"], ["101234", "1012345"]]
        assert len(hook.responses) == 3
    finally:
        client.close()
        service.delete_table(table_name)


def test_a_create_table_conflict_says_which_preference_applied(connection_string, table_name, service):
    # the Java SDK's recording createTableDuplicateNameImpl (this SDK sends no Prefer of its own)
    hook = _Requests()
    client = TableServiceClient.from_connection_string(connection_string, raw_response_hook=hook)
    prefer = {"Prefer": "return-no-content"}
    try:
        client.create_table(table_name, headers=prefer)
        assert hook.responses[-1].status_code == 204
        assert hook.responses[-1].headers.get("Preference-Applied") == "return-no-content"
        with pytest.raises(ResourceExistsError) as info:
            client.create_table(table_name, headers=prefer)
        assert error_code(info.value) == "TableAlreadyExists"
        assert hook.responses[-1].status_code == 409
        assert hook.responses[-1].headers.get("Preference-Applied") == "return-no-content"
        # without Prefer, none applied
        with pytest.raises(ResourceExistsError):
            client.create_table(table_name)
        assert hook.responses[-1].status_code == 409
        assert "Preference-Applied" not in hook.responses[-1].headers
    finally:
        client.delete_table(table_name)
        client.close()


def test_a_newer_api_version_is_served(connection_string, table_name):
    # the SDK only lets api_version name versions it knows: the header is set on the wire
    # as a newer SDK's would be
    hook = _Requests()

    def newer(request):
        request.http_request.headers["x-ms-version"] = "2027-01-01"

    client = TableServiceClient.from_connection_string(
        connection_string, raw_request_hook=newer, raw_response_hook=hook
    )
    try:
        table = client.create_table(table_name)
        table.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
        assert table.get_entity("p", "r")["v"] == 1
        assert table_name in [t.name for t in client.list_tables()]
        assert hook.responses[-1].status_code == 200
        assert hook.responses[-1].headers.get("x-ms-version") == "2026-06-06"
    finally:
        client.delete_table(table_name)
        client.close()
