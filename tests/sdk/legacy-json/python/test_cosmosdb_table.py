"""azure-cosmosdb-table 1.0.6 (JSON, x-ms-version 2017-04-17): the operations its users
rely on, against aztable. Azurite answers this client's batches with 500."""

import uuid
from datetime import datetime, timezone

import pytest
from azure.common import AzureConflictHttpError, AzureHttpError, AzureMissingResourceHttpError
from azure.cosmosdb.table.common.retry import no_retry
from azure.cosmosdb.table.models import AzureBatchOperationError, EdmType, Entity, EntityProperty
from azure.cosmosdb.table.tablebatch import TableBatch

GUID = uuid.UUID("c9da6455-213d-42c9-9a79-3e9149a57833")
# this client sends dates to the second
WHEN = datetime(2020, 2, 29, 12, 34, 56, tzinfo=timezone.utc)


def typed(pk: str, rk: str) -> Entity:
    e = Entity()
    e.PartitionKey, e.RowKey = pk, rk
    e.S = "<script>\u00e9\U0001F600"
    e.I32 = EntityProperty(EdmType.INT32, -2147483648)
    e.Plain = 7  # this client sends every int as Edm.Int64
    e.I64 = EntityProperty(EdmType.INT64, 9223372036854775807)
    e.D = 1.5
    e.DWhole = EntityProperty(EdmType.DOUBLE, 5.0)
    e.B = True
    e.Dt = WHEN
    e.G = EntityProperty(EdmType.GUID, GUID)
    e.Bin = EntityProperty(EdmType.BINARY, b"\x00\x01\xff")
    return e


def test_every_type_round_trips(svc, table):
    svc.insert_entity(table, typed("p", "1"))
    got = svc.get_entity(table, "p", "1")
    assert got.S == "<script>\u00e9\U0001F600"
    value = lambda v: v.value if isinstance(v, EntityProperty) else v  # noqa: E731
    assert value(got.I32) == -2147483648
    assert value(got.I64) == 9223372036854775807
    assert value(got.Plain) == 7
    assert got.D == 1.5
    assert got.DWhole == 5.0 and isinstance(got.DWhole, float)
    assert got.B is True
    assert got.Dt == WHEN
    assert got.G.type == EdmType.GUID and str(value(got.G)) == str(GUID)
    assert value(got.Bin) == b"\x00\x01\xff"
    # typed filters: Int64 needs the L suffix (an Int32 literal never matches an Int64
    # property, as on the service), GUIDs and dates their literals
    flt = "I64 eq 9223372036854775807L and Plain eq 7L and G eq guid'%s' and Dt eq datetime'2020-02-29T12:34:56Z'"
    assert [e.RowKey for e in svc.query_entities(table, filter=flt % GUID)] == ["1"]
    assert list(svc.query_entities(table, filter="Plain eq 7")) == []
    assert got.etag.startswith('W/"datetime')


def test_query_with_filter_and_continuation(svc, table):
    with svc.batch(table) as b:
        for i in range(30):
            b.insert_entity({"PartitionKey": "p", "RowKey": f"{i:03}", "N": i})
    # the client sends ints as Edm.Int64: its filters need Int64 literals
    found = svc.query_entities(table, filter="N ge 10L and N lt 25L", num_results=4)
    page = list(found)
    assert [e.N for e in page] == [10, 11, 12, 13]
    assert found.next_marker, "a continuation after the first page"
    rest = svc.query_entities(table, filter="N ge 10L and N lt 25L", marker=found.next_marker)
    assert [e.N for e in rest] == list(range(14, 25))
    # the generator follows continuations by itself
    assert len(list(svc.query_entities(table, filter="PartitionKey eq 'p'", select="N"))) == 30


def test_update_merge_delete_with_etags(svc, table):
    etag = svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "r", "A": 1, "B": "x"})
    etag2 = svc.update_entity(table, {"PartitionKey": "p", "RowKey": "r", "A": 2}, if_match=etag)
    assert etag2 != etag
    with pytest.raises(AzureHttpError) as err:
        svc.update_entity(table, {"PartitionKey": "p", "RowKey": "r", "A": 3}, if_match=etag)
    assert err.value.status_code == 412
    etag3 = svc.merge_entity(table, {"PartitionKey": "p", "RowKey": "r", "C": True}, if_match=etag2)
    got = svc.get_entity(table, "p", "r")
    assert (got.A, got.C, hasattr(got, "B")) == (2, True, False), "replace dropped B, merge kept A"
    with pytest.raises(AzureHttpError) as err:
        svc.delete_entity(table, "p", "r", if_match=etag2)
    assert err.value.status_code == 412
    svc.delete_entity(table, "p", "r", if_match=etag3)
    with pytest.raises(AzureMissingResourceHttpError):
        svc.get_entity(table, "p", "r")
    svc.insert_or_replace_entity(table, {"PartitionKey": "p", "RowKey": "u", "A": 1})
    svc.insert_or_merge_entity(table, {"PartitionKey": "p", "RowKey": "u", "B": 2})
    got = svc.get_entity(table, "p", "u")
    assert (got.A, got.B) == (1, 2)


def test_batch_commits_and_fails_as_a_whole(svc, table):
    batch = TableBatch()
    batch.insert_entity({"PartitionKey": "b", "RowKey": "1", "V": 1})
    batch.insert_or_replace_entity({"PartitionKey": "b", "RowKey": "2", "V": 2})
    batch.insert_or_merge_entity({"PartitionKey": "b", "RowKey": "3", "V": 3})
    etags = svc.commit_batch(table, batch)
    assert len(etags) == 3
    batch = TableBatch()
    batch.update_entity({"PartitionKey": "b", "RowKey": "1", "V": 10})
    batch.merge_entity({"PartitionKey": "b", "RowKey": "2", "W": 20})
    batch.delete_entity("b", "3")
    svc.commit_batch(table, batch)
    assert [e.RowKey for e in svc.query_entities(table)] == ["1", "2"]
    # a failing operation fails the whole change set. The client retries a failed
    # change set (its retry policy treats an error read from a 202 as a body that
    # failed to download: 50 s of back-off), so this one call goes without retries.
    batch = TableBatch()
    batch.insert_entity({"PartitionKey": "b", "RowKey": "4"})
    batch.insert_entity({"PartitionKey": "b", "RowKey": "1"})  # exists
    retry, svc.retry = svc.retry, no_retry
    try:
        with pytest.raises(AzureBatchOperationError) as err:
            svc.commit_batch(table, batch)
    finally:
        svc.retry = retry
    assert err.value.status_code == 409
    assert str(err.value).startswith("1:"), "the failed operation's index"
    assert [e.RowKey for e in svc.query_entities(table)] == ["1", "2"]


def test_errors(svc, table):
    svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "r"})
    with pytest.raises(AzureConflictHttpError):
        svc.insert_entity(table, {"PartitionKey": "p", "RowKey": "r"})
    with pytest.raises(AzureMissingResourceHttpError):
        svc.get_entity(table, "p", "nope")
    with pytest.raises(AzureMissingResourceHttpError):
        svc.get_entity("nosuchtable" + uuid.uuid4().hex[:8], "p", "r")
    assert svc.create_table(table) is False, "an existing table is not created twice"
    with pytest.raises(AzureConflictHttpError):
        svc.create_table(table, fail_on_exist=True)
    assert svc.exists(table)
    assert table in [t.name for t in svc.list_tables()]
