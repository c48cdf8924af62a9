"""Tables through the legacy AtomPub client: create, list, get, delete, and their errors."""

import pytest
from azure.common import AzureConflictHttpError, AzureHttpError, AzureMissingResourceHttpError

from legacy_util import error_details, unique_table_name


def test_create_list_delete(svc, table_name):
    assert svc.create_table(table_name, fail_on_exist=True) is True
    try:
        names = [t.name for t in svc.query_tables()]
        assert table_name in names

        one = svc.query_tables(table_name)
        assert [t.name for t in one] == [table_name]
    finally:
        assert svc.delete_table(table_name, fail_not_exist=True) is True
    assert table_name not in [t.name for t in svc.query_tables()]


def test_create_existing_table_is_409_table_already_exists(svc, table):
    with pytest.raises(AzureConflictHttpError) as ei:
        svc.create_table(table, fail_on_exist=True)
    status, code, text = error_details(ei.value)
    assert (status, code) == (409, "TableAlreadyExists"), text
    # the client's fail_on_exist=False turns exactly that 409 into False
    assert svc.create_table(table) is False


def test_create_differs_only_in_case_is_409(svc, table):
    with pytest.raises(AzureConflictHttpError) as ei:
        svc.create_table(table.upper(), fail_on_exist=True)
    status, code, text = error_details(ei.value)
    assert (status, code) == (409, "TableAlreadyExists"), text


def test_delete_missing_table_is_404_resource_not_found(svc):
    name = unique_table_name()
    with pytest.raises(AzureMissingResourceHttpError) as ei:
        svc.delete_table(name, fail_not_exist=True)
    status, code, text = error_details(ei.value)
    assert (status, code) == (404, "ResourceNotFound"), text
    assert svc.delete_table(name) is False


def test_get_missing_table_is_404_resource_not_found(svc):
    with pytest.raises(AzureMissingResourceHttpError) as ei:
        svc.query_tables(unique_table_name())
    status, code, text = error_details(ei.value)
    assert (status, code) == (404, "ResourceNotFound"), text


def test_invalid_table_name_is_400(svc):
    with pytest.raises(AzureHttpError) as ei:
        svc.create_table("1startswithdigit", fail_on_exist=True)
    status, code, text = error_details(ei.value)
    assert (status, code) == (400, "InvalidResourceName"), text


def test_query_tables_pages_with_top_and_next_table_name(svc):
    prefix = unique_table_name("atompg")[:14]
    names = [f"{prefix}{i:02d}" for i in range(5)]
    for n in names:
        svc.create_table(n, fail_on_exist=True)
    try:
        seen = []
        next_name = None
        pages = 0
        while True:
            page = svc.query_tables(top=2, next_table_name=next_name)
            assert len(page) <= 2
            seen += [t.name for t in page]
            pages += 1
            cont = getattr(page, "x_ms_continuation", None)
            if not cont:
                break
            next_name = cont["NextTableName"]
            assert pages < 1000, "paging does not end"
        assert [n for n in seen if n.startswith(prefix)] == names
        assert len(seen) == len(set(seen)), "a table was listed twice"
        assert pages >= 3
    finally:
        for n in names:
            svc.delete_table(n)
