"""Entity group transactions (begin_batch/commit_batch) through the legacy client.

The client sends a multipart/mixed body with LF line ends, one change set, Atom
entries in its parts; it reads the first part of the response's change set and raises
AzureBatchOperationError with the code of a failed operation.
"""

import pytest
from azure.storage.models import AzureBatchOperationError

from legacy_util import entity_props, unique_table_name


def _rows(svc, table):
    return {r.RowKey: {k: v for k, v in entity_props(r).items() if k not in ("PartitionKey", "RowKey", "Timestamp")}
            for r in svc.query_entities(table)}


def test_every_operation_in_one_change_set(svc, table):
    svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "upd", "A": 1, "Gone": "x"})
    merged = svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "mrg", "A": 1, "Kept": "y"})
    svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "del", "A": 1})
    svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "ups", "A": 1, "Gone": "z"})

    svc.begin_batch()
    svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "new", "A": 10, "S": "inserted"})
    svc.update_entity(table, "p", "upd", {"A": 2})
    svc.merge_entity(table, "p", "mrg", {"A": 3}, if_match=merged.etag)
    svc.delete_entity(table, "p", "del")
    svc.insert_or_replace_entity(table, "p", "ups", {"A": 4})
    svc.insert_or_merge_entity(table, "p", "upm", {"A": 5})
    svc.commit_batch()

    assert _rows(svc, table) == {
        "new": {"A": 10, "S": "inserted"},
        "upd": {"A": 2},
        "mrg": {"A": 3, "Kept": "y"},
        "ups": {"A": 4},
        "upm": {"A": 5},
    }


def test_100_inserts_in_one_batch(svc, table):
    svc.begin_batch()
    for i in range(100):
        svc.insert_entity(table, {"PartitionKey": "p", "RowKey": f"{i:03d}", "N": i, "S": "\u00e9" * 10})
    svc.commit_batch()
    rows = svc.query_entities(table)
    assert [r.N for r in rows] == list(range(100))
    assert all(r.S == "\u00e9" * 10 for r in rows)


@pytest.mark.parametrize(
    "failing, status, code",
    [("conflict", 409, "EntityAlreadyExists"), ("stale", 412, "UpdateConditionNotSatisfied"),
     ("missing", 404, "ResourceNotFound")],
)
def test_failed_operation_rolls_back_the_change_set(svc, table, failing, status, code):
    old = svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "existing", "V": 1})
    svc.merge_entity(table, "p", "existing", {"V": 2})

    svc.begin_batch()
    svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "a", "V": 1})
    if failing == "conflict":
        svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "existing", "V": 3})
    elif failing == "stale":
        svc.update_entity(table, "p", "existing", {"V": 3}, if_match=old.etag)
    else:
        svc.merge_entity(table, "p", "missing", {"V": 3})
    svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "b", "V": 1})
    with pytest.raises(AzureBatchOperationError) as ei:
        svc.commit_batch()
    assert (ei.value.status_code, ei.value.code) == (status, code), str(ei.value)
    assert _rows(svc, table) == {"existing": {"V": 2}}


def test_batch_on_missing_table(svc):
    name = unique_table_name()
    svc.begin_batch()
    svc.insert_entity(name, {"PartitionKey": "p", "RowKey": "r"})
    with pytest.raises(AzureBatchOperationError) as ei:
        svc.commit_batch()
    assert (ei.value.status_code, ei.value.code) == (404, "TableNotFound"), str(ei.value)
    assert name not in [t.name for t in svc.query_tables()]
