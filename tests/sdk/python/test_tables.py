"""Table operations through azure.data.tables (spec 1.2, 1.9, 1.10)."""

import uuid

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.data.tables import TableClient

from sdk_util import ResponseRecorder, assert_refused, error_code, unique_table_name


def _names(items):
    return [t.name for t in items]


def _table_exists(service, name):
    return _names(service.query_tables(f"TableName eq '{name}'")) == [name]


def test_create_table_preserves_case(service):
    name = "MiXeDCase" + uuid.uuid4().hex[:12]
    client = service.create_table(name)
    try:
        assert isinstance(client, TableClient)
        assert client.table_name == name
        assert _names(service.query_tables(f"TableName eq '{name}'")) == [name]
        listed = [n for n in _names(service.list_tables()) if n.lower() == name.lower()]
        assert listed == [name], "table name case must be preserved by list_tables"
    finally:
        service.delete_table(name)


def test_create_table_returns_201_or_204_as_prefer_asks(service):
    name = unique_table_name()
    rec = ResponseRecorder()
    service.create_table(name, raw_response_hook=rec)
    try:
        assert rec.last["status"] == rec.expected_create_status(), rec.last
    finally:
        service.delete_table(name)


def test_create_duplicate_table_conflicts(service, table_name, table):
    with pytest.raises(ResourceExistsError) as exc:
        service.create_table(table_name)
    assert exc.value.status_code == 409
    assert error_code(exc.value) == "TableAlreadyExists"


@pytest.mark.parametrize("transform", [str.upper, str.lower, str.swapcase])
def test_create_duplicate_table_differing_only_in_case_conflicts(service, transform):
    name = "CaseDup" + uuid.uuid4().hex[:12]
    service.create_table(name)
    try:
        other = transform(name)
        assert other != name
        with pytest.raises(ResourceExistsError) as exc:
            service.create_table(other)
        assert exc.value.status_code == 409
        assert error_code(exc.value) == "TableAlreadyExists"
        # The original keeps its case, and there is still exactly one such table.
        matching = [n for n in _names(service.list_tables()) if n.lower() == name.lower()]
        assert matching == [name]
    finally:
        service.delete_table(name)


def test_query_tables_paging_with_continuation(service):
    prefix = "pg" + uuid.uuid4().hex[:10]
    names = sorted(f"{prefix}{i:02d}" for i in range(7))
    for n in names:
        service.create_table(n)
    try:
        flt = f"TableName ge '{prefix}' and TableName lt '{prefix}z'"
        pager = service.query_tables(flt, results_per_page=3).by_page()
        pages = []
        tokens = []
        for page in pager:
            pages.append(_names(page))
            tokens.append(pager.continuation_token)
        assert len(pages) >= 3, f"expected >= 3 pages of <= 3 tables, got {pages}"
        assert all(len(p) <= 3 for p in pages), pages
        assert tokens[0] is not None, "first page must carry a NextTableName continuation"
        flat = [n for p in pages for n in p]
        assert len(flat) == len(set(flat)), f"duplicate tables across pages: {flat}"
        assert sorted(flat) == names

        # Resuming from a continuation token yields exactly the remainder.
        first = service.query_tables(flt, results_per_page=3).by_page()
        first_page = _names(next(first))
        token = first.continuation_token
        assert token is not None
        rest = [
            n
            for p in service.query_tables(flt, results_per_page=3).by_page(continuation_token=token)
            for n in _names(p)
        ]
        assert sorted(first_page + rest) == names
        assert not set(first_page) & set(rest)
    finally:
        for n in names:
            service.delete_table(n)


def test_list_tables_paging(service):
    prefix = "lt" + uuid.uuid4().hex[:10]
    names = {f"{prefix}{i}" for i in range(5)}
    for n in names:
        service.create_table(n)
    try:
        pager = service.list_tables(results_per_page=2).by_page()
        seen = []
        page_count = 0
        for page in pager:
            page_names = _names(page)
            assert len(page_names) <= 2
            seen.extend(page_names)
            page_count += 1
        assert page_count >= 3
        assert len(seen) == len(set(seen)), "a table was listed twice across pages"
        assert names <= set(seen)
    finally:
        for n in names:
            service.delete_table(n)


def test_query_tables_filter(service):
    prefix = "qf" + uuid.uuid4().hex[:10]
    names = [f"{prefix}a", f"{prefix}b", f"{prefix}c"]
    for n in names:
        service.create_table(n)
    try:
        got = _names(service.query_tables("TableName eq @n", parameters={"n": names[1]}))
        assert got == [names[1]]
        got = sorted(_names(service.query_tables(f"TableName gt '{names[0]}' and TableName le '{names[2]}'")))
        assert got == names[1:]
    finally:
        for n in names:
            service.delete_table(n)


def test_delete_table_removes_it_and_its_entities(service):
    name = unique_table_name()
    client = service.create_table(name)
    client.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
    assert len(list(client.list_entities())) == 1

    rec = ResponseRecorder()
    service.delete_table(name, raw_response_hook=rec)
    assert rec.last["status"] == 204
    assert not _table_exists(service, name)

    with pytest.raises(ResourceNotFoundError) as exc:
        client.get_entity("p", "r")
    assert_refused(exc.value, 404, "TableNotFound")

    client = service.create_table(name)
    try:
        assert list(client.list_entities()) == []
        with pytest.raises(ResourceNotFoundError) as exc:
            client.get_entity("p", "r")
        assert_refused(exc.value, 404, "ResourceNotFound")
    finally:
        service.delete_table(name)


def test_delete_table_via_table_client(service):
    name = unique_table_name()
    client = service.create_table(name)
    client.delete_table()
    assert not _table_exists(service, name)


def test_delete_missing_table_returns_404_resource_not_found(service):
    # The SDK swallows a 404 on delete_table; the server's answer is asserted from the raw response.
    name = unique_table_name()
    rec = ResponseRecorder()
    service.delete_table(name, raw_response_hook=rec)
    assert rec.last["status"] == 404
    assert rec.last["code"] == "ResourceNotFound"

    # The generated (non-swallowing) operation surfaces the error itself.
    client = service.get_table_client(name)
    with pytest.raises(HttpResponseError) as exc:
        client._client.table.delete(table=name)
    assert_refused(exc.value, 404, "ResourceNotFound")


@pytest.mark.parametrize(
    "bad_name",
    [
        "ab",  # too short
        "a" * 64,  # too long
        "1abc",  # starts with a digit
        "ab-cd",  # has '-'
        "ab_cd",  # has '_'
    ],
)
def test_invalid_table_name_rejected_with_400(service, bad_name):
    rec = ResponseRecorder()
    # Against the real service the SDK turns InvalidResourceName / OutOfRangeInput into a
    # client-side ValueError (after the 400); against others it surfaces the HttpResponseError.
    with pytest.raises((HttpResponseError, ValueError)):
        service.create_table(bad_name, raw_response_hook=rec)
    assert rec.responses, "request never reached the server"
    # docs/compatibility.md: Create Table answers every invalid name with InvalidResourceName
    assert (rec.last["status"], rec.last["code"]) == (400, "InvalidResourceName")
    assert bad_name.lower() not in [n.lower() for n in _names(service.list_tables())]


def test_create_table_if_not_exists(service):
    name = unique_table_name()
    try:
        rec = ResponseRecorder()
        client = service.create_table_if_not_exists(name, raw_response_hook=rec)
        assert client.table_name == name
        assert rec.last["status"] == rec.expected_create_status(), rec.last
        client.create_entity({"PartitionKey": "p", "RowKey": "r"})

        rec2 = ResponseRecorder()
        again = service.create_table_if_not_exists(name, raw_response_hook=rec2)
        assert again.table_name == name
        assert rec2.last["status"] == 409
        assert rec2.last["code"] == "TableAlreadyExists"
        # The existing table (and its data) is untouched.
        assert [e["RowKey"] for e in again.list_entities()] == ["r"]

        # TableClient.create_table on an existing table also reports TableAlreadyExists.
        with pytest.raises(ResourceExistsError) as exc:
            service.get_table_client(name).create_table()
        assert error_code(exc.value) == "TableAlreadyExists"
    finally:
        service.delete_table(name)


def test_entity_operations_on_missing_table(service):
    client = service.get_table_client(unique_table_name())
    with pytest.raises(ResourceNotFoundError) as exc:
        client.create_entity({"PartitionKey": "p", "RowKey": "r"})
    assert exc.value.status_code == 404
    assert error_code(exc.value) == "TableNotFound"

    with pytest.raises(ResourceNotFoundError) as exc:
        list(client.list_entities())
    assert exc.value.status_code == 404
    assert error_code(exc.value) == "TableNotFound"
