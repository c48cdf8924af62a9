"""Entity group transactions through TableClient.submit_transaction (spec 1.4, 5)."""

import pytest
from azure.core import MatchConditions
from azure.data.tables import (
    RequestTooLargeError,
    TableTransactionError,
    UpdateMode,
)

from sdk_util import error_code


def _props(entity):
    """User properties of an entity, without keys."""
    return {k: v for k, v in entity.items() if k not in ("PartitionKey", "RowKey")}


def _rows(table):
    """All entities as {(PK, RK): user properties}."""
    return {(e["PartitionKey"], e["RowKey"]): _props(e) for e in table.list_entities()}


class _StatusRecorder:
    """raw_response_hook recording only status codes (the batch response is streamed)."""

    def __init__(self):
        self.statuses = []

    def __call__(self, pipeline_response):
        self.statuses.append(pipeline_response.http_response.status_code)


def test_every_operation_kind_in_one_transaction(table):
    stale_free = table.create_entity({"PartitionKey": "p", "RowKey": "rep", "old": 1, "keep": "x"})
    table.create_entity({"PartitionKey": "p", "RowKey": "mrg", "old": 1, "keep": "x"})
    table.create_entity({"PartitionKey": "p", "RowKey": "ups-m", "old": 1, "keep": "x"})
    table.create_entity({"PartitionKey": "p", "RowKey": "ups-r", "old": 1, "keep": "x"})
    table.create_entity({"PartitionKey": "p", "RowKey": "del"})

    ops = [
        ("create", {"PartitionKey": "p", "RowKey": "new", "n": 1}),
        (
            "update",
            {"PartitionKey": "p", "RowKey": "rep", "n": 2},
            {
                "mode": UpdateMode.REPLACE,
                "etag": stale_free["etag"],
                "match_condition": MatchConditions.IfNotModified,
            },
        ),
        ("update", {"PartitionKey": "p", "RowKey": "mrg", "n": 3}, {"mode": UpdateMode.MERGE}),
        ("upsert", {"PartitionKey": "p", "RowKey": "ups-m", "n": 4}, {"mode": UpdateMode.MERGE}),
        ("upsert", {"PartitionKey": "p", "RowKey": "ups-r", "n": 5}, {"mode": UpdateMode.REPLACE}),
        ("upsert", {"PartitionKey": "p", "RowKey": "ups-new", "n": 6}, {"mode": UpdateMode.MERGE}),
        ("delete", {"PartitionKey": "p", "RowKey": "del"}),
    ]
    rec = _StatusRecorder()
    result = table.submit_transaction(ops, raw_response_hook=rec)
    assert rec.statuses == [202]
    assert len(result) == len(ops)
    # Every write reports the etag the entity now has; the delete reports none.
    for i, rk in enumerate(["new", "rep", "mrg", "ups-m", "ups-r", "ups-new"]):
        assert result[i].get("etag"), f"op {i} has no etag: {result[i]}"
        assert table.get_entity("p", rk).metadata["etag"] == result[i]["etag"], rk
    assert result[1]["etag"] != stale_free["etag"]
    assert "etag" not in result[6]

    assert _rows(table) == {
        ("p", "new"): {"n": 1},
        ("p", "rep"): {"n": 2},
        ("p", "mrg"): {"old": 1, "keep": "x", "n": 3},
        ("p", "ups-m"): {"old": 1, "keep": "x", "n": 4},
        ("p", "ups-r"): {"n": 5},
        ("p", "ups-new"): {"n": 6},
    }


def _seed_for_failure(table):
    """Seed rows for the failure tests; returns the etag of ("p", "upd")."""
    meta = table.create_entity({"PartitionKey": "p", "RowKey": "upd", "v": "orig"})
    table.create_entity({"PartitionKey": "p", "RowKey": "exists", "v": "orig"})
    return meta["etag"]


def _assert_untouched(table, etag):
    assert _rows(table) == {("p", "upd"): {"v": "orig"}, ("p", "exists"): {"v": "orig"}}
    assert table.get_entity("p", "upd").metadata["etag"] == etag


def _failing_ops(kind, stale_etag):
    head = [
        ("create", {"PartitionKey": "p", "RowKey": "fresh", "v": "new"}),
        ("update", {"PartitionKey": "p", "RowKey": "upd", "v": "changed"}, {"mode": UpdateMode.MERGE}),
    ]
    tail = [("create", {"PartitionKey": "p", "RowKey": "never", "v": "new"})]
    third = {
        "conflict": ("create", {"PartitionKey": "p", "RowKey": "exists", "v": "dup"}),
        "stale": (
            "update",
            {"PartitionKey": "p", "RowKey": "exists", "v": "x"},
            {"mode": UpdateMode.REPLACE, "etag": stale_etag, "match_condition": MatchConditions.IfNotModified},
        ),
        "missing": ("delete", {"PartitionKey": "p", "RowKey": "missing"}),
    }[kind]
    return head + [third] + tail


@pytest.mark.parametrize(
    "kind,status,code",
    [
        ("conflict", 409, "EntityAlreadyExists"),
        ("stale", 412, "UpdateConditionNotSatisfied"),
        ("missing", 404, "ResourceNotFound"),
    ],
)
def test_failure_of_third_operation_rolls_back_everything(table, kind, status, code):
    etag = _seed_for_failure(table)
    # An etag "exists" had once: make it stale by writing the row after taking it.
    stale = table.get_entity("p", "exists").metadata["etag"]
    table.update_entity({"PartitionKey": "p", "RowKey": "exists", "v": "orig"}, mode=UpdateMode.REPLACE)
    with pytest.raises(TableTransactionError) as exc:
        table.submit_transaction(_failing_ops(kind, stale))
    err = exc.value
    assert err.index == 2, f"index {err.index}: {err.message}"
    assert err.status_code == status
    assert err.error_code == code
    assert err.message.startswith("2:"), err.message
    _assert_untouched(table, etag)


def test_different_partition_keys_refused_by_sdk(table):
    # The Python SDK refuses this client-side (the server's 400
    # CommandsInBatchActOnDifferentPartitions is checked over raw HTTP in tests/it/batch.rs).
    with pytest.raises(ValueError):
        table.submit_transaction(
            [
                ("create", {"PartitionKey": "a", "RowKey": "1"}),
                ("create", {"PartitionKey": "b", "RowKey": "1"}),
            ]
        )
    assert _rows(table) == {}


def test_same_row_twice_is_invalid_duplicate_row(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "v": 1})
    with pytest.raises(TableTransactionError) as exc:
        table.submit_transaction(
            [
                ("create", {"PartitionKey": "p", "RowKey": "other"}),
                ("upsert", {"PartitionKey": "p", "RowKey": "r", "v": 2}),
                ("delete", {"PartitionKey": "p", "RowKey": "r"}),
            ]
        )
    assert exc.value.status_code == 400
    assert exc.value.error_code == "InvalidDuplicateRow"
    assert exc.value.index == 2
    assert _rows(table) == {("p", "r"): {"v": 1}}


def test_one_hundred_operations_succeed_and_101_are_refused(table):
    ops = [("create", {"PartitionKey": "ok", "RowKey": f"{i:03d}", "i": i}) for i in range(100)]
    result = table.submit_transaction(ops)
    assert len(result) == 100 and all(r.get("etag") for r in result)
    rows = _rows(table)
    assert len(rows) == 100 and rows[("ok", "042")] == {"i": 42}

    ops = [("create", {"PartitionKey": "no", "RowKey": f"{i:03d}"}) for i in range(101)]
    with pytest.raises(TableTransactionError) as exc:
        table.submit_transaction(ops)
    assert exc.value.status_code == 400
    assert exc.value.error_code == "InvalidInput"
    assert exc.value.index == 0
    assert len(_rows(table)) == 100


def test_empty_transaction_returns_empty_list(table):
    # The SDK still sends the request (a change set with one empty part); the service
    # answers 202 with a 400 part, which submit_transaction turns into [].
    rec = _StatusRecorder()
    assert table.submit_transaction([], raw_response_hook=rec) == []
    assert rec.statuses == [202]
    assert _rows(table) == {}


def test_transaction_over_4_mib_is_request_too_large(table):
    # Mirrors azure-sdk-for-python's own test_batch_request_too_large (~13 MB).
    blob = bytes(range(256)) * 256  # 64 KiB
    ops = [
        ("create", {"PartitionKey": "pk", "RowKey": str(i), "Foo": blob, "Bar": blob, "Baz": blob})
        for i in range(50)
    ]
    with pytest.raises(RequestTooLargeError) as exc:
        table.submit_transaction(ops)
    assert exc.value.status_code == 413
    assert error_code(exc.value) == "RequestBodyTooLarge"
    assert _rows(table) == {}


def test_transaction_on_missing_table(service, table_name):
    client = service.get_table_client(table_name)
    with pytest.raises(TableTransactionError) as exc:
        client.submit_transaction([("create", {"PartitionKey": "p", "RowKey": "r"})])
    assert exc.value.status_code == 404
    assert exc.value.error_code == "TableNotFound"
    assert exc.value.index == 0
    assert table_name not in [t.name for t in service.list_tables()]
