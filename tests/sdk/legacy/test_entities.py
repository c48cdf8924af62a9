"""Entities through the legacy AtomPub client: insert, get, update, merge, upserts, delete,
ETag conditions and the error codes the client surfaces."""

from datetime import datetime

import pytest
from azure.common import AzureConflictHttpError, AzureHttpError, AzureMissingResourceHttpError

from legacy_util import entity_props, error_details, unique_table_name


def _without_system(props):
    return {k: v for k, v in props.items() if k not in ("PartitionKey", "RowKey", "Timestamp")}


def test_insert_returns_the_stored_entity_and_get_reads_it(svc, table):
    inserted = svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "r", "Name": "Ada", "Age": 36})
    assert inserted.PartitionKey == "p"
    assert inserted.RowKey == "r"
    assert inserted.Name == "Ada"
    assert inserted.Age == 36
    assert isinstance(inserted.Timestamp, datetime)
    assert inserted.etag.startswith('W/"')

    got = svc.get_entity(table, "p", "r")
    assert got.etag == inserted.etag
    assert entity_props(got) == entity_props(inserted)
    assert _without_system(entity_props(got)) == {"Name": "Ada", "Age": 36}


def test_insert_existing_is_409_entity_already_exists(svc, table):
    svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "r", "V": 1})
    with pytest.raises(AzureConflictHttpError) as ei:
        svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "r", "V": 2})
    status, code, text = error_details(ei.value)
    assert (status, code) == (409, "EntityAlreadyExists"), text
    assert svc.get_entity(table, "p", "r").V == 1


def test_insert_into_missing_table_is_404_table_not_found(svc):
    with pytest.raises(AzureMissingResourceHttpError) as ei:
        svc.insert_entity(unique_table_name(), {"PartitionKey": "p", "RowKey": "r"})
    status, code, text = error_details(ei.value)
    assert (status, code) == (404, "TableNotFound"), text


def test_query_missing_table_is_404_table_not_found(svc):
    with pytest.raises(AzureMissingResourceHttpError) as ei:
        svc.query_entities(unique_table_name())
    status, code, text = error_details(ei.value)
    assert (status, code) == (404, "TableNotFound"), text


def test_get_missing_entity_is_404_resource_not_found(svc, table):
    with pytest.raises(AzureMissingResourceHttpError) as ei:
        svc.get_entity(table, "p", "nope")
    status, code, text = error_details(ei.value)
    assert (status, code) == (404, "ResourceNotFound"), text


@pytest.mark.parametrize("op", ["update_entity", "merge_entity", "delete_entity"])
def test_write_missing_entity_is_404_resource_not_found(svc, table, op):
    args = (table, "p", "nope") + (() if op == "delete_entity" else ({"V": 1},))
    with pytest.raises(AzureMissingResourceHttpError) as ei:
        getattr(svc, op)(*args)
    status, code, text = error_details(ei.value)
    assert (status, code) == (404, "ResourceNotFound"), text
    assert list(svc.query_entities(table)) == []


def test_get_with_select(svc, table):
    svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "r", "A": "a", "B": 2, "C": True})
    got = svc.get_entity(table, "p", "r", select="A,C")
    props = entity_props(got)
    assert props.get("A") == "a"
    assert props.get("C") is True
    assert "B" not in props
    assert got.etag.startswith('W/"')


def test_update_replaces_and_checks_etag(svc, table):
    first = svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "r", "A": 1, "B": "gone"})
    res = svc.update_entity(table, "p", "r", {"A": 2}, if_match=first.etag)
    new_etag = res["etag"]
    assert new_etag != first.etag

    got = svc.get_entity(table, "p", "r")
    assert got.etag == new_etag
    assert _without_system(entity_props(got)) == {"A": 2}

    with pytest.raises(AzureHttpError) as ei:
        svc.update_entity(table, "p", "r", {"A": 3}, if_match=first.etag)
    status, code, text = error_details(ei.value)
    assert (status, code) == (412, "UpdateConditionNotSatisfied"), text
    assert svc.get_entity(table, "p", "r").A == 2

    # If-Match: * (the client's default) replaces whatever is there
    svc.update_entity(table, "p", "r", {"A": 4})
    assert svc.get_entity(table, "p", "r").A == 4


def test_merge_keeps_other_properties_and_checks_etag(svc, table):
    first = svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "r", "A": 1, "B": "kept"})
    res = svc.merge_entity(table, "p", "r", {"A": 2, "C": 3.5}, if_match=first.etag)
    assert res["etag"] != first.etag
    got = svc.get_entity(table, "p", "r")
    assert got.etag == res["etag"]
    assert _without_system(entity_props(got)) == {"A": 2, "B": "kept", "C": 3.5}

    with pytest.raises(AzureHttpError) as ei:
        svc.merge_entity(table, "p", "r", {"A": 9}, if_match=first.etag)
    status, code, text = error_details(ei.value)
    assert (status, code) == (412, "UpdateConditionNotSatisfied"), text
    assert svc.get_entity(table, "p", "r").A == 2


def test_delete_checks_etag(svc, table):
    first = svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "r", "A": 1})
    second = svc.merge_entity(table, "p", "r", {"A": 2})
    with pytest.raises(AzureHttpError) as ei:
        svc.delete_entity(table, "p", "r", if_match=first.etag)
    status, code, text = error_details(ei.value)
    assert (status, code) == (412, "UpdateConditionNotSatisfied"), text

    svc.delete_entity(table, "p", "r", if_match=second["etag"])
    with pytest.raises(AzureMissingResourceHttpError):
        svc.get_entity(table, "p", "r")


def test_insert_or_replace(svc, table):
    res = svc.insert_or_replace_entity(table, "p", "r", {"A": 1, "B": "x"})
    got = svc.get_entity(table, "p", "r")
    assert got.etag == res["etag"]
    assert _without_system(entity_props(got)) == {"A": 1, "B": "x"}

    res2 = svc.insert_or_replace_entity(table, "p", "r", {"C": True})
    assert res2["etag"] != res["etag"]
    assert _without_system(entity_props(svc.get_entity(table, "p", "r"))) == {"C": True}


def test_insert_or_merge(svc, table):
    res = svc.insert_or_merge_entity(table, "p", "r", {"A": 1, "B": "x"})
    assert svc.get_entity(table, "p", "r").etag == res["etag"]

    svc.insert_or_merge_entity(table, "p", "r", {"A": 2, "C": True})
    assert _without_system(entity_props(svc.get_entity(table, "p", "r"))) == {"A": 2, "B": "x", "C": True}


def test_keys_with_spaces_ampersand_and_unicode(svc, table):
    pk, rk = "part & key", "row key \u00e9\u65e5 (1) + 50%"
    svc.insert_entity(table, {"PartitionKey": pk, "RowKey": rk, "V": 1})
    got = svc.get_entity(table, pk, rk)
    assert (got.PartitionKey, got.RowKey, got.V) == (pk, rk, 1)
    svc.merge_entity(table, pk, rk, {"W": 2})
    svc.update_entity(table, pk, rk, {"V": 3})
    assert _without_system(entity_props(svc.get_entity(table, pk, rk))) == {"V": 3}
    svc.delete_entity(table, pk, rk)
    assert list(svc.query_entities(table)) == []


def test_empty_keys(svc, table):
    svc.insert_entity(table, {"PartitionKey": "", "RowKey": "", "V": 1})
    got = svc.get_entity(table, "", "")
    assert (got.PartitionKey, got.RowKey, got.V) == ("", "", 1)
